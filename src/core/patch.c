/*
 * JSON Patch construction. Works on the object exactly as received: every op
 * is an "add" whose parent exists in that object, or a "replace" of a
 * container's own env entry that the merge rules change in place (its index
 * as received), so the patch applies with any RFC 6902 implementation (the
 * API server uses evanphx/json-patch).
 */
#include "patch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotation.h"
#include "util.h"
#include "json.h"

int patch_pointer_escape(const char *token, char *out, size_t outlen)
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

/* Appends {"op":name,"path":path,"value":value}; takes ownership of value. */
static int op(cJSON *patch, const char *name, const char *path, cJSON *value)
{
	cJSON *o = cJSON_CreateObject();

	if (o == NULL || value == NULL) {
		cJSON_Delete(o);
		cJSON_Delete(value);
		return -1;
	}
	/* cJSON_AddItemToArray/Object take ownership of the added item. */
	cJSON_AddItemToArray(patch, o);
	if (cJSON_AddStringToObject(o, "op", name) == NULL ||
	    cJSON_AddStringToObject(o, "path", path) == NULL) {
		cJSON_Delete(value);
		return -1;
	}
	cJSON_AddItemToObject(o, "value", value);
	return 0;
}

/* Appends {"op":"add","path":path,"value":value}; takes ownership of value. */
static int add_op(cJSON *patch, const char *path, cJSON *value)
{
	return op(patch, "add", path, value);
}

static cJSON *env_entry(const struct env_var *v)
{
	cJSON *e = cJSON_CreateObject();

	if (e == NULL)
		return NULL;
	if (cJSON_AddStringToObject(e, "name", v->name) == NULL ||
	    cJSON_AddStringToObject(e, "value", v->value) == NULL) {
		cJSON_Delete(e);
		return NULL;
	}
	return e;
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
 * cenv names, and returns how many are marked: one pass over cenv with a
 * hash table of env's names, since a container may carry thousands of
 * entries and asking for each variable in turn was cenv x env string
 * compares (a third of the admission of a 64 KB pod).
 */
static size_t mark_defined(const cJSON *cenv, const struct env_list *env, unsigned char *defined)
{
	enum { SLOTS = 256 };
	unsigned short slot[SLOTS]; /* variable index + 1; 0 is empty */
	const cJSON *e;
	size_t k, marked = 0;

	memset(defined, 0, env->n);
	memset(slot, 0, sizeof(slot));
	for (k = 0; k < env->n && env->n <= SLOTS / 2; k++) {
		unsigned s = name_hash(env->vars[k].name) % SLOTS;
		while (slot[s] != 0)
			s = (s + 1) % SLOTS;
		slot[s] = (unsigned short)(k + 1);
	}
	cJSON_ArrayForEach(e, cenv)
	{
		const char *n = json_str(e, "name");
		if (n == NULL)
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
static void env_path(char path[96], const char *base, const char *mid, long n, const char *tail)
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
}

static enum patch_status container_ops(cJSON *patch, const cJSON *ctr, const char *base,
                                       const struct env_list *env, long max_env, char *err,
                                       size_t errlen)
{
	const cJSON *cenv = cJSON_GetObjectItemCaseSensitive(ctr, "env");
	char path[96];
	size_t i;
	int have = cJSON_IsArray(cenv), pos = 0;
	cJSON *arr = NULL;
	unsigned char defined_small[64], *defined = defined_small;
	enum patch_status rc = PATCH_NOMEM;

	/*
	 * A merged value replaces the container's own entry in place (first, while
	 * the indices are the object's own); equal values need nothing.
	 */
	for (i = 0; have && i < env->n; i++) {
		const cJSON *e;
		int j = 0;
		if (!env->vars[i].merge)
			continue;
		cJSON_ArrayForEach(e, cenv)
		{
			const char *n = json_str(e, "name"), *v = json_str(e, "value");
			if (n != NULL && strcmp(n, env->vars[i].name) == 0) {
				if (v != NULL && strcmp(v, env->vars[i].value) != 0) {
					env_path(path, base, "/env/", j, "/value");
					if (op(patch, "replace", path,
					       cJSON_CreateString(env->vars[i].value)) != 0)
						return PATCH_NOMEM;
				}
				break;
			}
			j++;
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
	else if (mark_defined(cenv, env, defined) == env->n) {
		rc = PATCH_OK;
		goto out;
	}
	if (have && cJSON_GetArraySize(cenv) > max_env) {
		snprintf(err, errlen,
		         "distenv: container %.63s has %d env entries, more than the "
		         "limit of %ld",
		         json_str(ctr, "name") ? json_str(ctr, "name") : "?",
		         cJSON_GetArraySize(cenv), max_env);
		rc = PATCH_DENY;
		goto out;
	}
	/* No env key (the API server omits empty lists): add the whole array. */
	if (!have && (arr = cJSON_CreateArray()) == NULL)
		goto out;
	for (i = 0; i < env->n; i++) {
		cJSON *e;

		if (defined[i])
			continue;
		if ((e = env_entry(&env->vars[i])) == NULL)
			goto out;
		if (arr != NULL) {
			cJSON_AddItemToArray(arr, e); /* arr owns e */
			continue;
		}
		/* Insert before the user's entries, in order, so $(VAR) references resolve. */
		env_path(path, base, "/env/", pos++, "");
		if (add_op(patch, path, e) != 0)
			goto out;
	}
	if (arr != NULL) {
		env_path(path, base, "/env", -1, "");
		rc = add_op(patch, path, arr) != 0 ? PATCH_NOMEM : PATCH_OK;
		arr = NULL; /* add_op took it, or freed it */
		goto out;
	}
	rc = PATCH_OK;
out:
	cJSON_Delete(arr);
	if (defined != defined_small)
		free(defined);
	return rc;
}

/* The env ops of every target container, in target order. */
static enum patch_status env_ops(cJSON *patch, const cJSON *spec, const struct topology *t,
                                 const struct env_list *const *envs, long max_env, char *err,
                                 size_t errlen)
{
	char base[64];
	int i;

	for (i = 0; i < t->n_targets; i++) {
		const struct topology_target *tg = &t->targets[i];
		enum patch_status rc;

		snprintf(base, sizeof(base), "/spec/%s/%d", topology_target_array(tg), tg->index);
		rc = container_ops(patch, topology_target_container(spec, tg), base, envs[i],
		                   max_env, err, errlen);
		if (rc != PATCH_OK)
			return rc;
	}
	return PATCH_OK;
}

/*
 * The empty directory that keeps the service-account token out of the first
 * init container, unless the pod has it. Returns 0, or -1 out of memory.
 */
static int wait_volume_op(cJSON *patch, const cJSON *spec)
{
	const cJSON *vols = cJSON_GetObjectItemCaseSensitive(spec, "volumes"), *c;
	cJSON *vol, *arr;
	int have_vol = 0;

	cJSON_ArrayForEach(c, vols)
	{
		const char *n = json_str(c, "name");
		have_vol |= n != NULL && strcmp(n, WAIT_VOLUME) == 0;
	}
	if (have_vol)
		return 0;
	vol = cJSON_CreateObject();
	if (vol == NULL)
		return -1;
	cJSON_AddStringToObject(vol, "name", WAIT_VOLUME);
	/*
	 * No sizeLimit: the one mount of it is read-only, so it stays empty, and the
	 * kubelet counts an empty directory's own block (4 KiB on ext4) as its usage:
	 * a limit below that (1Ki was one) has the pod evicted within a minute of
	 * starting, for ever, as the node tier's elastic scenario showed.
	 */
	if (cJSON_AddObjectToObject(vol, "emptyDir") == NULL) {
		cJSON_Delete(vol);
		return -1;
	}
	if (cJSON_IsArray(vols))
		return add_op(patch, "/spec/volumes/-", vol);
	arr = cJSON_CreateArray();
	if (arr == NULL) {
		cJSON_Delete(vol);
		return -1;
	}
	cJSON_AddItemToArray(arr, vol); /* arr owns vol */
	return add_op(patch, "/spec/volumes", arr);
}

/*
 * first_init at the front of the init containers, unless one of that name is
 * there. Returns 0, or -1 out of memory.
 */
static int first_init_op(cJSON *patch, const cJSON *spec, const cJSON *first_init)
{
	const cJSON *inits = cJSON_GetObjectItemCaseSensitive(spec, "initContainers"), *c;
	const char *want = json_str(first_init, "name");
	int present = 0;
	cJSON *arr;

	cJSON_ArrayForEach(c, inits)
	{
		const char *n = json_str(c, "name");
		present |= n != NULL && want != NULL && strcmp(n, want) == 0;
	}
	if (present)
		return 0;
	if (cJSON_IsArray(inits) && cJSON_GetArraySize(inits) > 0)
		return add_op(patch, "/spec/initContainers/0", cJSON_Duplicate(first_init, 1));
	arr = cJSON_CreateArray();
	if (arr == NULL)
		return -1;
	cJSON_AddItemToArray(arr, cJSON_Duplicate(first_init, 1)); /* arr owns it */
	if (cJSON_GetArraySize(arr) != 1) {
		cJSON_Delete(arr); /* the copy failed: arr is empty and still ours */
		return -1;
	}
	return add_op(patch, "/spec/initContainers", arr);
}

/* The injected-marker annotation, unless the pod carries it. */
static enum patch_status marker_op(cJSON *patch, const cJSON *meta, const char *marker, char *err,
                                   size_t errlen)
{
	const cJSON *anns = cJSON_GetObjectItemCaseSensitive(meta, "annotations");
	char path[96];

	if (!cJSON_IsObject(meta)) {
		/* A pod always has metadata; refuse to invent it rather than guess. */
		snprintf(err, errlen, "distenv: the pod has no metadata");
		return PATCH_DENY;
	}
	if (!cJSON_IsObject(anns)) {
		cJSON *obj = cJSON_CreateObject();
		if (obj == NULL || cJSON_AddStringToObject(obj, ANN_INJECTED, marker) == NULL) {
			cJSON_Delete(obj);
			return PATCH_NOMEM;
		}
		if (add_op(patch, "/metadata/annotations", obj) != 0)
			return PATCH_NOMEM;
	} else if (!cJSON_HasObjectItem(anns, ANN_INJECTED)) {
		char tok[64];
		if (patch_pointer_escape(ANN_INJECTED, tok, sizeof(tok)) != 0)
			return PATCH_NOMEM;
		snprintf(path, sizeof(path), "/metadata/annotations/%s", tok);
		if (add_op(patch, path, cJSON_CreateString(marker)) != 0)
			return PATCH_NOMEM;
	}
	return PATCH_OK;
}

enum patch_status patch_build(const cJSON *pod, const struct topology *t,
                              const struct env_list *const *envs, const cJSON *first_init,
                              const char *marker, long max_env, cJSON **out, char *err,
                              size_t errlen)
{
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
	enum patch_status rc = PATCH_NOMEM;
	cJSON *patch;

	*out = NULL;
	patch = cJSON_CreateArray();
	if (patch == NULL)
		return PATCH_NOMEM;

	rc = env_ops(patch, spec, t, envs, max_env, err, errlen);
	if (rc != PATCH_OK)
		goto out;
	rc = PATCH_NOMEM;
	if (t->set_subdomain && add_op(patch, "/spec/subdomain", cJSON_CreateString(t->service)))
		goto out;
	/*
	 * The first init container goes in after every env op: inserting it shifts
	 * the indices of the init containers those ops name.
	 */
	if (first_init != NULL && wait_volume_op(patch, spec) != 0)
		goto out;
	if (first_init != NULL && first_init_op(patch, spec, first_init) != 0)
		goto out;
	rc = marker_op(patch, meta, marker, err, errlen);
out:
	if (rc == PATCH_OK)
		*out = patch;
	else
		cJSON_Delete(patch);
	return rc;
}
