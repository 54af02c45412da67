/*
 * JSON Patch construction. Works on the object exactly as received: every op
 * is an "add" whose parent exists in that object, or a "replace" of a
 * container's own env entry that the merge rules change in place (its index
 * as received), so the patch applies with any RFC 6902 implementation (the
 * API server uses evanphx/json-patch).
 */
#include "patch.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotation.h"
#include "ownenv.h"
#include "util.h"
#include "json.h"

/* Escapes a JSON Pointer token ("~" -> "~0", "/" -> "~1") into out. Returns 0 or -1 if too long. */
static int patch_pointer_escape(const char *token, char *out, size_t outlen)
{
	size_t o = 0;

	for (; *token; token++) {
		const char *rep = NULL;
		char one[2] = {*token, '\0'};

		if (*token == '~')
			rep = "~0";
		else if (*token == '/')
			rep = "~1";
		else
			rep = one;
		if (o + strlen(rep) >= outlen)
			return -1;
		memcpy(out + o, rep, strlen(rep));
		o += strlen(rep);
	}
	if (o >= outlen)
		return -1;
	out[o] = '\0';
	return 0;
}

/*
 * The patch is written as text, op by op, into the caller's buffer: the
 * bytes cJSON_PrintUnformatted would print for the same array, without
 * building the array first (building and printing a tree was a third of the
 * 64 KB pod's admission, docs/benchmarks.md). A buffer out of memory sets
 * its oom; patch_build checks it once, at the end.
 */
struct writer {
	struct strbuf *sb;
	int n; /* ops written */
};

static void put_str(struct strbuf *sb, const char *s)
{
	json_put_string_bytes(sb, s, JSON_ALL, 1);
}

/* Opens {"op":name,"path":path,"value": for the caller's value; op_end closes it. */
static void op_start(struct writer *w, const char *name, const char *path)
{
	if (w->n++ > 0)
		strbuf_putc(w->sb, ',');
	strbuf_lit(w->sb, "{\"op\":\"");
	strbuf_put(w->sb, name, strlen(name));
	strbuf_lit(w->sb, "\",\"path\":");
	put_str(w->sb, path);
	strbuf_lit(w->sb, ",\"value\":");
}

static void op_end(struct writer *w)
{
	strbuf_putc(w->sb, '}');
}

/* An op whose value is the string value. */
static void op_string(struct writer *w, const char *name, const char *path, const char *value)
{
	op_start(w, name, path);
	put_str(w->sb, value);
	op_end(w);
}

/* {"name":...,"value":...} */
static void env_entry(struct strbuf *sb, const struct env_var *v)
{
	strbuf_lit(sb, "{\"name\":");
	put_str(sb, v->name);
	strbuf_lit(sb, ",\"value\":");
	put_str(sb, v->value);
	strbuf_putc(sb, '}');
}

/* FNV-1a of a variable name. */
static unsigned name_hash(const char *s)
{
	unsigned h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/*
 * Marks defined[k] for each variable k of env that the container's own list
 * cenv names, and returns how many are marked, with the list's length in
 * *entries: one pass over cenv with a hash table of env's names, since a
 * container may carry thousands of entries and asking for each variable in
 * turn was cenv x env string compares (a third of the admission of a 64 KB
 * pod). When tg's read of the list (topology_target) shows that no entry
 * starts like any variable, the list is not walked at all.
 */
static size_t mark_defined(const cJSON *cenv, const struct topology_target *tg,
                           const struct env_list *env, unsigned char *defined, long *entries)
{
	enum { SLOTS = 256 };
	unsigned short slot[SLOTS];      /* variable index + 1; 0 is empty */
	uint64_t pair[4] = {0, 0, 0, 0}; /* the variables' first two bytes, by topology_env_pair */
	const cJSON *e;
	size_t k, marked = 0;

	memset(defined, 0, env->n);
	memset(slot, 0, sizeof(slot));
	for (k = 0; k < env->n; k++) {
		unsigned p = topology_env_pair(env->vars[k].name);
		pair[p / 64] |= 1ULL << (p % 64);
	}
	if (tg != NULL && tg->env_read &&
	    !((pair[0] & tg->env_pairs[0]) | (pair[1] & tg->env_pairs[1]) |
	      (pair[2] & tg->env_pairs[2]) | (pair[3] & tg->env_pairs[3]))) {
		*entries = tg->env_entries;
		return 0;
	}
	for (k = 0; k < env->n && env->n <= SLOTS / 2; k++) {
		unsigned s = name_hash(env->vars[k].name) % SLOTS;
		while (slot[s] != 0)
			s = (s + 1) % SLOTS;
		slot[s] = (unsigned short)(k + 1);
	}
	*entries = 0;
	cJSON_ArrayForEach(e, cenv)
	{
		const char *n = json_name(e);
		unsigned p;

		++*entries;
		if (n == NULL)
			continue;
		/*
		 * A name none of the variables starts like is not hashed: hashing
		 * every byte of every name (a multiply each) was a twentieth of a
		 * 64 KB pod's CPU (perf).
		 */
		p = topology_env_pair(n);
		if (!(pair[p / 64] >> (p % 64) & 1))
			continue;
		if (env->n > SLOTS / 2) {
			/* More variables than the table holds: compare with each (never here). */
			for (k = 0; k < env->n; k++)
				if (!defined[k] && strcmp(n, env->vars[k].name) == 0) {
					defined[k] = 1;
					marked++;
				}
			continue;
		}
		for (unsigned s = name_hash(n) % SLOTS; slot[s] != 0; s = (s + 1) % SLOTS) {
			k = slot[s] - 1u;
			if (strcmp(n, env->vars[k].name) == 0) {
				marked += !defined[k];
				defined[k] = 1;
				break;
			}
		}
	}
	return marked;
}

/*
 * "<base><mid><n><tail>" into path[96] (n < 0: no number), without printf:
 * one per env op, hundreds for a large pod. base is at most 63 bytes.
 */
static size_t env_path(char path[96], const char *base, const char *mid, long n, const char *tail)
{
	size_t o = 0, l;

	l = strlen(base);
	memcpy(path, base, l);
	o = l;
	l = strlen(mid);
	memcpy(path + o, mid, l);
	o += l;
	if (n >= 0)
		o += fmt_long(path + o, n);
	l = strlen(tail);
	memcpy(path + o, tail, l + 1);
	return o + l;
}

/*
 * Opens an "add" op at an env path of env_path's (len bytes): such a path is
 * "/spec/", a container array's name and numbers, with nothing to escape.
 */
static void op_start_add_env(struct writer *w, const char *path, size_t len)
{
	if (w->n++ > 0)
		strbuf_putc(w->sb, ',');
	strbuf_lit(w->sb, "{\"op\":\"add\",\"path\":\"");
	strbuf_put(w->sb, path, len);
	strbuf_lit(w->sb, "\",\"value\":");
}

/*
 * The env entries of one list as JSON text, each once, when several
 * containers get the list: escaping it again for each of them was a fifth of
 * a 12-container pod's patch. Entry k is text[off[k], off[k + 1]); with no
 * text (off NULL) it is written from the list.
 */
struct entries {
	const struct env_list *env; /* the list (NULL: none yet) */
	struct strbuf text;
	size_t *off;
};

static int entries_of(struct entries *en, const struct env_list *env, int shared)
{
	size_t k;

	if (en->env == env && (en->off != NULL || !shared))
		return 0;
	strbuf_free(&en->text);
	strbuf_init(&en->text);
	free(en->off);
	en->off = NULL;
	en->env = env;
	if (!shared)
		return 0;
	en->env = NULL;
	if ((en->off = malloc((env->n + 1) * sizeof(*en->off))) == NULL)
		return -1;
	for (k = 0; k < env->n; k++) {
		en->off[k] = en->text.len;
		env_entry(&en->text, &env->vars[k]);
	}
	en->off[env->n] = en->text.len;
	if (en->text.oom)
		return -1;
	en->env = env;
	return 0;
}

static void put_entry(struct strbuf *sb, const struct entries *en, size_t k)
{
	if (en->off == NULL)
		env_entry(sb, &en->env->vars[k]);
	else
		strbuf_put(sb, en->text.buf + en->off[k], en->off[k + 1] - en->off[k]);
}

static enum patch_status container_ops(struct writer *w, const cJSON *ctr,
                                       const struct topology_target *tg, const char *base,
                                       const struct entries *en, long max_env, char *err,
                                       size_t errlen)
{
	const struct env_list *env = en->env;
	const cJSON *cenv = json_get(ctr, "env");
	char path[96];
	size_t i, pl;
	long entries = 0;
	int have = cJSON_IsArray(cenv), pos = 0, opened = 0;
	unsigned char defined_small[64], *defined = defined_small;
	enum patch_status rc = PATCH_NOMEM;

	/*
	 * A merged value replaces the container's own entry in place (first, while
	 * the indices are the object's own): the entry the kubelet uses, the last
	 * of its name (ownenv_entry), which plan merged; equal values need nothing.
	 */
	for (i = 0; have && i < env->n; i++) {
		const cJSON *e;
		const char *v;
		int j;
		if (!env->vars[i].merge || (e = ownenv_entry(ctr, env->vars[i].name, &j)) == NULL)
			continue;
		v = json_str(e, "value");
		if (v != NULL && strcmp(v, env->vars[i].value) != 0) {
			env_path(path, base, "/env/", j, "/value");
			op_string(w, "replace", path, env->vars[i].value);
		}
	}
	/*
	 * Idempotence first: a container that already defines every variable is
	 * left as it is, however many entries it has (reinvocation after a
	 * mutation that took it to the limit).
	 */
	if (env->n > sizeof(defined_small) && (defined = malloc(env->n)) == NULL)
		return PATCH_NOMEM;
	if (!have)
		memset(defined, 0, env->n);
	else if (mark_defined(cenv, tg, env, defined, &entries) == env->n) {
		rc = PATCH_OK;
		goto out;
	}
	if (have && entries > max_env) {
		snprintf(err, errlen,
		         "distenv: container %.63s has %ld env entries, more than the "
		         "limit of %ld",
		         json_str(ctr, "name") ? json_str(ctr, "name") : "?", entries, max_env);
		rc = PATCH_DENY;
		goto out;
	}
	for (i = 0; i < env->n; i++) {
		if (defined[i])
			continue;
		if (!have) {
			/* No env key (the API server omits empty lists): add the whole array. */
			if (!opened) {
				pl = env_path(path, base, "/env", -1, "");
				op_start_add_env(w, path, pl);
				strbuf_putc(w->sb, '[');
			} else {
				strbuf_putc(w->sb, ',');
			}
			opened = 1;
			put_entry(w->sb, en, i);
			continue;
		}
		/* Insert before the user's entries, in order, so $(VAR) references resolve. */
		pl = env_path(path, base, "/env/", pos++, "");
		op_start_add_env(w, path, pl);
		put_entry(w->sb, en, i);
		op_end(w);
	}
	if (opened) {
		strbuf_putc(w->sb, ']');
		op_end(w);
	}
	rc = PATCH_OK;
out:
	if (defined != defined_small)
		free(defined);
	return rc;
}

/* The env ops of every target container, in target order. */
static enum patch_status env_ops(struct writer *w, const cJSON *spec, const struct topology *t,
                                 const struct env_list *const *envs, long max_env, char *err,
                                 size_t errlen)
{
	char base[96], mid[24];
	struct entries en = {NULL, {0}, NULL};
	enum patch_status rc = PATCH_OK;
	int i, shared;

	strbuf_init(&en.text);
	for (i = 0; i < t->n_targets && rc == PATCH_OK; i++) {
		const struct topology_target *tg = &t->targets[i];

		strcat(strcpy(mid, topology_target_array(tg)), "/");
		env_path(base, "/spec/", mid, tg->index, "");
		/* the text of a list only when another target has it too */
		shared = (i > 0 && envs[i - 1] == envs[i]) ||
		         (i + 1 < t->n_targets && envs[i + 1] == envs[i]);
		rc = entries_of(&en, envs[i], shared) != 0
		         ? PATCH_NOMEM
		         : container_ops(w, topology_target_container(spec, tg), tg, base, &en,
		                         max_env, err, errlen);
	}
	strbuf_free(&en.text);
	free(en.off);
	return rc;
}

/*
 * The empty directory that keeps the service-account token out of the first
 * init container, unless the pod has it.
 */
static void wait_volume_op(struct writer *w, const cJSON *spec)
{
	const cJSON *vols = json_get(spec, "volumes"), *c;
	int have_vol = 0;

	cJSON_ArrayForEach(c, vols)
	{
		const char *n = json_str(c, "name");
		have_vol |= n != NULL && strcmp(n, WAIT_VOLUME) == 0;
	}
	if (have_vol)
		return;
	/*
	 * No sizeLimit: the one mount of it is read-only, so it stays empty, and the
	 * kubelet counts an empty directory's own block (4 KiB on ext4) as its usage:
	 * a limit below that (1Ki was one) has the pod evicted within a minute of
	 * starting, for ever, as the node tier's elastic scenario showed.
	 */
	if (cJSON_IsArray(vols)) {
		op_start(w, "add", "/spec/volumes/-");
		strbuf_lit(w->sb, "{\"name\":\"" WAIT_VOLUME "\",\"emptyDir\":{}}");
	} else {
		op_start(w, "add", "/spec/volumes");
		strbuf_lit(w->sb, "[{\"name\":\"" WAIT_VOLUME "\",\"emptyDir\":{}}]");
	}
	op_end(w);
}

/* first_init at the front of the init containers, unless one of that name is there. */
static void first_init_op(struct writer *w, const cJSON *spec, const cJSON *first_init)
{
	const cJSON *inits = json_get(spec, "initContainers"), *c;
	const char *want = json_str(first_init, "name");
	int present = 0;

	cJSON_ArrayForEach(c, inits)
	{
		const char *n = json_str(c, "name");
		present |= n != NULL && want != NULL && strcmp(n, want) == 0;
	}
	if (present)
		return;
	if (cJSON_IsArray(inits) && cJSON_GetArraySize(inits) > 0) {
		op_start(w, "add", "/spec/initContainers/0");
		json_print(w->sb, first_init);
	} else {
		op_start(w, "add", "/spec/initContainers");
		strbuf_putc(w->sb, '[');
		json_print(w->sb, first_init);
		strbuf_putc(w->sb, ']');
	}
	op_end(w);
}

/*
 * The injected-marker annotation and the warnings' (when there are any),
 * unless the pod carries the marker.
 */
static enum patch_status marker_op(struct writer *w, const cJSON *meta, const char *marker,
                                   const char *warnings, char *err, size_t errlen)
{
	const cJSON *anns = json_get(meta, "annotations");
	int warn = warnings != NULL && warnings[0] != '\0';
	char path[96];

	if (!cJSON_IsObject(meta)) {
		/* A pod always has metadata; refuse to invent it rather than guess. */
		snprintf(err, errlen, "distenv: the pod has no metadata");
		return PATCH_DENY;
	}
	if (!cJSON_IsObject(anns)) {
		op_start(w, "add", "/metadata/annotations");
		strbuf_putc(w->sb, '{');
		put_str(w->sb, ANN_INJECTED);
		strbuf_putc(w->sb, ':');
		put_str(w->sb, marker);
		if (warn) {
			strbuf_putc(w->sb, ',');
			put_str(w->sb, ANN_WARNINGS);
			strbuf_putc(w->sb, ':');
			put_str(w->sb, warnings);
		}
		strbuf_putc(w->sb, '}');
		op_end(w);
	} else if (!cJSON_HasObjectItem(anns, ANN_INJECTED)) {
		char tok[64];
		if (patch_pointer_escape(ANN_INJECTED, tok, sizeof(tok)) != 0)
			return PATCH_NOMEM;
		fmt_printf(path, sizeof(path), "/metadata/annotations/%s", tok);
		op_string(w, "add", path, marker);
		if (warn) {
			if (patch_pointer_escape(ANN_WARNINGS, tok, sizeof(tok)) != 0)
				return PATCH_NOMEM;
			fmt_printf(path, sizeof(path), "/metadata/annotations/%s", tok);
			/* "add" replaces a value the pod template carried over */
			op_string(w, "add", path, warnings);
		}
	}
	return PATCH_OK;
}

enum patch_status patch_build(const cJSON *pod, const struct topology *t,
                              const struct env_list *const *envs, const cJSON *first_init,
                              const char *marker, const char *warnings, long max_env,
                              struct strbuf *out, int *n_ops, char *err, size_t errlen)
{
	const cJSON *spec = json_get(pod, "spec");
	const cJSON *meta = json_get(pod, "metadata");
	struct writer w = {out, 0};
	enum patch_status rc;

	*n_ops = 0;
	strbuf_putc(out, '[');
	rc = env_ops(&w, spec, t, envs, max_env, err, errlen);
	if (rc != PATCH_OK)
		return rc;
	if (t->set_subdomain)
		op_string(&w, "add", "/spec/subdomain", t->service);
	/*
	 * The first init container goes in after every env op: inserting it shifts
	 * the indices of the init containers those ops name.
	 */
	if (first_init != NULL) {
		wait_volume_op(&w, spec);
		first_init_op(&w, spec, first_init);
	}
	if ((rc = marker_op(&w, meta, marker, warnings, err, errlen)) != PATCH_OK)
		return rc;
	strbuf_putc(out, ']');
	if (out->oom)
		return PATCH_NOMEM;
	*n_ops = w.n;
	return PATCH_OK;
}
