/*
 * render: turn workload manifests into the pods their controllers would make
 * (each kind's make_pods names and labels them as its controllers do, kind.h)
 * and run each through pod_plan_build, answering look-ups from the manifest
 * itself.
 */
#include "render.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "admission.h"
#include "kind.h"
#include "ownenv.h"
#include "validate.h"
#include "util.h"
#include "strbuf.h"
#include "dns.h"
#include "yamljson.h"
#include "json.h"

/* The look-up render answers from the manifest: what the kind's make_pods says. */
static int manifest_get(void *ctx, const struct workload_ref *ref, int fresh,
                        struct workload_spec *out, char *err, size_t errlen)
{
	(void)ref;
	(void)fresh;
	(void)err;
	(void)errlen;
	*out = *(const struct workload_spec *)ctx;
	return 0;
}

/* Target k's own entry of name in plan, or NULL: distenv's value is what it gets. */
static const struct plan_own *own_of(const struct pod_plan *plan, int k, const char *name)
{
	int i;

	for (i = 0; i < plan->n_own; i++)
		if (plan->own[i].target == k && strcmp(plan->own[i].name, name) == 0)
			return &plan->own[i];
	return NULL;
}

/* "its own" with where it came from and how it stands against distenv's. */
static void own_note(const struct plan_own *o, char *out, size_t outlen)
{
	if (o->value == NULL)
		snprintf(out, outlen, "its own, set by a reference read at run time");
	else if (o->how[0] != '\0') /* " (from PATH)" -> "its own, from PATH" */
		snprintf(out, outlen, "its own, %.*s", (int)strlen(o->how) - 3, o->how + 2);
	else
		snprintf(out, outlen, "its own");
	if (o->differs)
		snprintf(out + strlen(out), outlen - strlen(out), ", not distenv's");
}

/* The init container distenv adds, in one line: its command (the program's base name) and env. */
static void wait_line(struct strbuf *out, const cJSON *wait)
{
	const cJSON *cmd = json_get(wait, "command"), *it;

	strbuf_printf(out, "  (init container %s, added by distenv)", json_str(wait, "name"));
	cJSON_ArrayForEach(it, cmd)
	{
		const char *a = cJSON_GetStringValue(it);
		const char *slash = a != NULL && it == cmd->child ? strrchr(a, '/') : NULL;
		strbuf_printf(out, " %s", slash != NULL ? slash + 1 : a != NULL ? a : "");
	}
	strbuf_puts(out, ":");
	cJSON_ArrayForEach(it, json_get(wait, "env"))
	{
		strbuf_printf(out, " %s=%s", json_str(it, "name"), json_str(it, "value"));
	}
	strbuf_puts(out, "\n");
}

/*
 * Appends one rank's plan to out (text or a JSON array item): distenv's
 * variables for the pod, then what differs in each target container (its own
 * values, marked; the address variables that follow its own MASTER_ADDR), then
 * the init container distenv adds.
 */
static int emit_rank(struct strbuf *out, cJSON *jarr, const struct render_opts *o, const cJSON *pod,
                     const struct pod_plan *plan)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
	const char *pname = json_str(meta, "name");
	const char *host = json_str(spec, "hostname");
	char note[300];
	size_t i;
	int k;

	if (pname == NULL)
		pname = json_str(meta, "generateName");
	if (o->format == RENDER_TEXT) {
		strbuf_printf(out, "--- rank %ld/%ld: %s %s/%s, ", plan->topo.rank,
		              plan->topo.world_size, kind_name(plan->topo.kind), plan->topo.ns,
		              plan->topo.workload);
		/* A LeaderWorkerSet's world is one group: say which. */
		if (plan->topo.group >= 0)
			strbuf_printf(out, "group %ld, ", plan->topo.group);
		strbuf_printf(out, "pod %s, containers", host ? host : pname ? pname : "?");
		for (k = 0; k < plan->topo.n_targets; k++) {
			const cJSON *c = topology_target_container(spec, &plan->topo.targets[k]);
			strbuf_printf(out, "%s%s%s", k ? "," : " ", json_str(c, "name"),
			              plan->topo.targets[k].init ? "(init)" : "");
		}
		strbuf_puts(out, "\n");
		for (i = 0; i < plan->env.n; i++)
			strbuf_printf(out, "%s=%s\n", plan->env.vars[i].name,
			              plan->env.vars[i].value);
		/* What a container runs with that differs from the lines above. */
		for (k = 0; k < plan->topo.n_targets; k++) {
			const struct env_list *l = pod_plan_target_env(plan, k);
			const cJSON *c = topology_target_container(spec, &plan->topo.targets[k]);
			for (i = 0; i < l->n; i++) {
				const struct plan_own *ow = own_of(plan, k, l->vars[i].name);
				const char *v =
				    ow != NULL && ow->value != NULL ? ow->value : l->vars[i].value;
				if (ow == NULL && (l == &plan->env || i >= plan->env.n ||
				                   strcmp(v, plan->env.vars[i].value) == 0))
					continue;
				if (ow != NULL)
					own_note(ow, note, sizeof(note));
				/* a reference read at run time: shown as written, not as "" */
				if (ow != NULL && ow->value == NULL) {
					int at;
					v = json_str(ownenv_entry(c, l->vars[i].name, &at),
					             "value");
					if (v == NULL)
						v = "(valueFrom)";
				}
				strbuf_printf(out, "  (container %s) %s=%s%s%s%s\n",
				              json_str(c, "name"), l->vars[i].name, v,
				              ow != NULL ? " (" : "", ow != NULL ? note : "",
				              ow != NULL ? ")" : "");
			}
		}
		if (plan->wait != NULL)
			wait_line(out, plan->wait);
		return out->oom ? -1 : 0;
	} else {
		cJSON *r = cJSON_CreateObject(), *env, *ctrs, *eff;
		if (r == NULL)
			return -1;
		cJSON_AddItemToArray(jarr, r); /* jarr owns r */
		if (!cJSON_AddStringToObject(r, "kind", kind_name(plan->topo.kind)) ||
		    !cJSON_AddStringToObject(r, "namespace", plan->topo.ns) ||
		    !cJSON_AddStringToObject(r, "workload", plan->topo.workload) ||
		    !cJSON_AddStringToObject(r, "pod",
		                             host    ? host
		                             : pname ? pname
		                                     : "") ||
		    !cJSON_AddNumberToObject(r, "rank", (double)plan->topo.rank) ||
		    !cJSON_AddNumberToObject(r, "worldSize", (double)plan->topo.world_size) ||
		    (plan->topo.group >= 0 &&
		     !cJSON_AddNumberToObject(r, "group", (double)plan->topo.group)) ||
		    !(ctrs = cJSON_AddArrayToObject(r, "containers")) ||
		    !(env = cJSON_AddArrayToObject(r, "env")) ||
		    !(eff = cJSON_AddArrayToObject(r, "effective")))
			return -1;
		for (k = 0; k < plan->topo.n_targets; k++) {
			const cJSON *c = topology_target_container(spec, &plan->topo.targets[k]);
			cJSON_AddItemToArray(ctrs, cJSON_CreateString(json_str(c, "name")));
		}
		for (i = 0; i < plan->env.n; i++) {
			cJSON *e = cJSON_CreateObject();
			if (e == NULL)
				return -1;
			cJSON_AddItemToArray(env, e); /* env owns e */
			if (!cJSON_AddStringToObject(e, "name", plan->env.vars[i].name) ||
			    !cJSON_AddStringToObject(e, "value", plan->env.vars[i].value))
				return -1;
		}
		/* each target container's env as its process gets it, its own values marked */
		for (k = 0; k < plan->topo.n_targets; k++) {
			const struct env_list *l = pod_plan_target_env(plan, k);
			const cJSON *c = topology_target_container(spec, &plan->topo.targets[k]);
			cJSON *ce = cJSON_CreateObject(), *cenv;
			if (ce == NULL)
				return -1;
			cJSON_AddItemToArray(eff, ce); /* eff owns ce */
			if (!cJSON_AddStringToObject(ce, "container", json_str(c, "name")) ||
			    !cJSON_AddBoolToObject(ce, "init", plan->topo.targets[k].init) ||
			    !(cenv = cJSON_AddArrayToObject(ce, "env")))
				return -1;
			for (i = 0; i < l->n; i++) {
				const struct plan_own *ow = own_of(plan, k, l->vars[i].name);
				cJSON *e = cJSON_CreateObject();
				if (e == NULL)
					return -1;
				cJSON_AddItemToArray(cenv, e); /* cenv owns e */
				if (!cJSON_AddStringToObject(e, "name", l->vars[i].name) ||
				    (ow == NULL &&
				     !cJSON_AddStringToObject(e, "value", l->vars[i].value)) ||
				    (ow != NULL && ow->value != NULL &&
				     !cJSON_AddStringToObject(e, "value", ow->value)) ||
				    !cJSON_AddStringToObject(e, "source",
				                             ow == NULL ? "distenv" : "own"))
					return -1;
				if (ow != NULL && ow->how[0] != '\0') {
					/* " (from metadata...)" -> "metadata..." */
					snprintf(note, sizeof(note), "%s", ow->how + 7);
					note[strlen(note) - 1] = '\0';
					if (!cJSON_AddStringToObject(e, "from", note))
						return -1;
				}
				if (ow != NULL && ow->value == NULL &&
				    !cJSON_AddStringToObject(e, "from",
				                             "a reference read at run time"))
					return -1;
				if (ow != NULL && ow->differs &&
				    !cJSON_AddStringToObject(e, "distenv", l->vars[i].value))
					return -1;
			}
		}
		if (plan->wait != NULL) {
			cJSON *inits = cJSON_AddArrayToObject(r, "initContainers"),
			      *w = cJSON_Duplicate(plan->wait, 1);
			if (inits == NULL || w == NULL) {
				cJSON_Delete(w);
				return -1;
			}
			cJSON_AddItemToArray(inits, w); /* inits owns w */
		}
		return 0;
	}
}

/* One warning of the pods of a workload, with the ranks that got it. */
struct rank_warning {
	char text[PLAN_WARNING_LEN];
	long lo, hi, n; /* lowest and highest rank, how many ranks */
};

/*
 * The worlds rendered so far, one a workload, with the Service their pods are
 * named under: two opted-in workloads behind one Service are told apart (each a
 * world of its own). Only render sees them together: the server reads one
 * workload at a time and may not list.
 */
struct world_seen {
	char kind[32], name[254], ns[64], service[64];
	long ranks;
};
struct worlds {
	struct world_seen *w;
	size_t n, cap;
};

/* What rendering one document shares. */
struct rctx {
	const struct config *cfg;
	const struct render_opts *o;
	struct strbuf *out;
	cJSON *jarr;
	struct strbuf *warn; /* NULL: warnings are not wanted */
	char *err;
	size_t errlen;
	long pods;                    /* rendered so far, bounded by cfg->max_world_size */
	const char *doc;              /* "StatefulSet ddp", for warnings */
	const char *kind, *name, *ns; /* the workload being rendered */
	int opted; /* a pod template of the workload opts in: only its pods are rendered */
	/* the pods' warnings, each once with its ranks (printed by warn_flush) */
	struct rank_warning *rw;
	size_t n_rw, cap_rw;
	const struct validation *said; /* what /validate said of the workload, or NULL */
	const cJSON *obj;              /* the document: the workload (or the Pod) */
	struct worlds *worlds;         /* every document's worlds */
};

/* Notes the world of plan's workload (once a workload). Returns 0, or -1 when memory ran out. */
static int world_note(struct worlds *ws, const struct pod_plan *plan)
{
	const struct topology *t = &plan->topo;
	struct world_seen *w;
	size_t i;

	if (ws == NULL || t->service[0] == '\0')
		return 0;
	for (i = 0; i < ws->n; i++)
		if (strcmp(ws->w[i].kind, kind_name(t->kind)) == 0 &&
		    strcmp(ws->w[i].name, t->workload) == 0 && strcmp(ws->w[i].ns, t->ns) == 0)
			return 0;
	if (ws->n == ws->cap) {
		size_t cap = ws->cap ? ws->cap * 2 : 8;
		struct world_seen *p = realloc(ws->w, cap * sizeof(*p));
		if (p == NULL)
			return -1;
		ws->w = p;
		ws->cap = cap;
	}
	w = &ws->w[ws->n++];
	snprintf(w->kind, sizeof(w->kind), "%s", kind_name(t->kind));
	snprintf(w->name, sizeof(w->name), "%s", t->workload);
	snprintf(w->ns, sizeof(w->ns), "%s", t->ns);
	snprintf(w->service, sizeof(w->service), "%s", t->service);
	w->ranks = t->world_size;
	return 0;
}

/*
 * Warns once a Service of the workloads behind it, when two or more opted-in
 * workloads share it (a Kubeflow PyTorchJob turned into a master and a worker
 * StatefulSet): each is a world of its own with its own rank 0.
 */
static void worlds_warn(const struct worlds *ws, struct strbuf *warn)
{
	size_t i, j, k, n;
	long total;

	for (i = 0; warn != NULL && i < ws->n; i++) {
		const struct world_seen *a = &ws->w[i];
		for (j = 0; j < i; j++) /* said with an earlier one */
			if (strcmp(ws->w[j].service, a->service) == 0 &&
			    strcmp(ws->w[j].ns, a->ns) == 0)
				break;
		if (j < i)
			continue;
		for (n = 0, total = 0, k = i; k < ws->n; k++)
			if (strcmp(ws->w[k].service, a->service) == 0 &&
			    strcmp(ws->w[k].ns, a->ns) == 0)
				n++, total += ws->w[k].ranks;
		if (n < 2)
			continue;
		strbuf_puts(warn, "warning: ");
		for (j = 0, k = i; k < ws->n; k++) {
			if (strcmp(ws->w[k].service, a->service) != 0 ||
			    strcmp(ws->w[k].ns, a->ns) != 0)
				continue;
			strbuf_printf(warn, "%s%s %s (%ld rank%s)",
			              j == 0       ? ""
			              : j + 1 == n ? " and "
			                           : ", ",
			              ws->w[k].kind, ws->w[k].name, ws->w[k].ranks,
			              ws->w[k].ranks == 1 ? "" : "s");
			j++;
		}
		strbuf_printf(warn,
		              " are opted in behind one Service, %s in namespace %s, yet each is a "
		              "world of its own with its own rank 0, so they never train together: "
		              "make them one workload of %ld pods, or one JobSet with a replicated "
		              "Job for each\n",
		              a->service, a->ns, total);
	}
}

/*
 * 1 when a and b are the same words with other numbers (a pod's "TF_CONFIG left
 * out: 228960 bytes" and the workload's "228963 bytes": each rank's own size
 * differs with its index's digits).
 */
static int same_but_numbers(const char *a, const char *b)
{
	while (*a != '\0' && *b != '\0') {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			while (isdigit((unsigned char)*a))
				a++;
			while (isdigit((unsigned char)*b))
				b++;
		} else if (*a++ != *b++) {
			return 0;
		}
	}
	return *a == *b;
}

/*
 * 1 when /validate said w already (the same text, or after a template's name:
 * "distenv: replicated Job x: <w>"), or the same words with the workload's
 * numbers: each warning is printed once.
 */
static int said_before(const struct rctx *c, const char *w)
{
	const char *tail = verdict_unprefixed(w);
	size_t n = strlen(tail);
	int i;

	for (i = 0; c->said != NULL && i < c->said->n_warnings; i++) {
		const char *s = c->said->warnings[i];
		size_t m = strlen(s);
		if (strcmp(s, w) == 0 || same_but_numbers(verdict_unprefixed(s), tail) ||
		    (m > n + 2 && strcmp(s + m - n, tail) == 0 &&
		     strncmp(s + m - n - 2, ": ", 2) == 0))
			return 1;
	}
	return 0;
}

/* Notes that rank got the warning text. Returns 0, or -1 when memory ran out. */
static int warn_rank(struct rctx *c, long rank, const char *text)
{
	struct rank_warning *w;
	size_t i;

	for (i = 0; i < c->n_rw; i++) {
		w = &c->rw[i];
		if (strcmp(w->text, text) != 0)
			continue;
		w->lo = rank < w->lo ? rank : w->lo;
		w->hi = rank > w->hi ? rank : w->hi;
		w->n++;
		return 0;
	}
	if (c->n_rw == c->cap_rw) {
		size_t cap = c->cap_rw ? c->cap_rw * 2 : 8;
		struct rank_warning *p = realloc(c->rw, cap * sizeof(*p));
		if (p == NULL)
			return -1;
		c->rw = p;
		c->cap_rw = cap;
	}
	w = &c->rw[c->n_rw++];
	snprintf(w->text, sizeof(w->text), "%s", text);
	w->lo = w->hi = rank;
	w->n = 1;
	return 0;
}

/* Prints the pods' warnings, each once with the ranks that got it, and forgets them. */
static void warn_flush(struct rctx *c)
{
	size_t i;

	for (i = 0; c->warn != NULL && i < c->n_rw; i++) {
		const struct rank_warning *w = &c->rw[i];
		if (said_before(c, w->text))
			continue;
		if (w->n == 1)
			strbuf_printf(c->warn, "warning: rank %ld: %s\n", w->lo, w->text);
		else if (w->n == w->hi - w->lo + 1)
			strbuf_printf(c->warn, "warning: ranks %ld-%ld: %s\n", w->lo, w->hi,
			              w->text);
		else
			strbuf_printf(c->warn, "warning: %ld ranks from %ld to %ld: %s\n", w->n,
			              w->lo, w->hi, w->text);
	}
	free(c->rw);
	c->rw = NULL;
	c->n_rw = c->cap_rw = 0;
}

static int render_pod(struct rctx *c, const cJSON *pod, const char *ns,
                      const struct workload_lookup *lk)
{
	struct pod_plan plan;
	enum plan_status ps;
	int rc = 0, w;

	ps = pod_plan_build(pod, ns, 0, c->cfg, lk, &plan, c->err, c->errlen);
	if (ps == PLAN_NOMEM)
		snprintf(c->err, c->errlen, "out of memory");
	if (ps != PLAN_OK)
		return -1;
	for (w = 0; w < plan.n_warnings && rc == 0; w++)
		rc = warn_rank(c, plan.topo.rank, plan.warnings[w]);
	if (rc == 0 && plan.n_more > 0) {
		char more[64];
		snprintf(more, sizeof(more), "distenv: %d more warnings not shown", plan.n_more);
		rc = warn_rank(c, plan.topo.rank, more);
	}
	if (rc == 0)
		rc = world_note(c->worlds, &plan);
	if (rc == 0)
		rc = emit_rank(c->out, c->jarr, c->o, pod, &plan);
	pod_plan_free(&plan);
	if (rc != 0)
		snprintf(c->err, c->errlen, "out of memory");
	return rc;
}

/* A pod template without the opt-in label: said (what names it when there are several). */
static void warn_label(void *ctx, const cJSON *tmpl, const char *what)
{
	struct rctx *c = ctx;

	const cJSON *label = json_get(json_get(json_get(tmpl, "metadata"), "labels"), LABEL_INJECT);
	char hint[160] = "";

	/* beside one that opts in, /validate names it (its pods are counted, not injected) */
	if (c->warn == NULL || kind_template_opts_in(tmpl) || (c->opted && what[0] != '\0'))
		return;
	if (cJSON_IsBool(label)) {
		/* YAML's unquoted true: kubectl and the API server refuse a label that is no string
		 */
		strbuf_printf(c->warn,
		              "warning: %s: %s%s label %s: %s is unquoted: YAML reads a boolean, "
		              "which the API server refuses as a label; write %s: \"true\"\n",
		              c->doc, what[0] ? what : "the pod template", what[0] ? ": its" : "'s",
		              LABEL_INJECT, cJSON_IsTrue(label) ? "true" : "false", LABEL_INJECT);
		return;
	}
	/* where it was written instead, when it was: the usual slips */
	if (cJSON_IsString(label))
		snprintf(hint, sizeof(hint), " (its value is \"%.40s\": only \"true\" opts in)",
		         label->valuestring);
	else if (json_get(json_get(json_get(tmpl, "metadata"), "annotations"), LABEL_INJECT))
		snprintf(hint, sizeof(hint), " (it is an annotation here: move it under labels)");
	else if (c->obj != NULL && c->obj != tmpl &&
	         json_get(json_get(json_get(c->obj, "metadata"), "labels"), LABEL_INJECT))
		snprintf(hint, sizeof(hint),
		         " (the %s's own metadata has it: pods get the pod template's labels)",
		         c->kind != NULL ? c->kind : "workload");
	strbuf_printf(
	    c->warn,
	    "warning: %s: %s%s no label %s: \"true\"%s, so the webhook would leave its pods "
	    "alone\n",
	    c->doc, what[0] ? what : "the pod template", what[0] ? ": has" : " has", LABEL_INJECT,
	    hint);
}

/* 1 when a pod template opts in (kind_each_template's fn). */
static void any_opted(void *ctx, const cJSON *tmpl, const char *what)
{
	(void)what;
	*(int *)ctx |= kind_template_opts_in(tmpl);
}

/*
 * Plans pod (taking ownership of it) and prints its rank (a pod_sink's emit).
 * What /mutate would deny is the error, naming the workload and the pod.
 */
static int emit(struct pod_sink *s, cJSON *pod, const struct workload_spec *ws, const char *which)
{
	struct rctx *c = s->ctx;
	struct workload_lookup lk = {.get = manifest_get, .ctx = (void *)ws}; /* nothing listed */
	char why[512];
	int rc;

	if (pod == NULL) {
		snprintf(c->err, c->errlen, "out of memory");
		return -1;
	}
	if (++c->pods > c->cfg->max_world_size) {
		snprintf(c->err, c->errlen, "%s %s: more than %ld pods to render", c->kind, c->name,
		         c->cfg->max_world_size);
		cJSON_Delete(pod);
		return -1;
	}
	/* a pod whose template does not opt in, beside one that does: the webhook leaves it */
	if (c->opted && !kind_template_opts_in(pod)) {
		cJSON_Delete(pod);
		return 0;
	}
	/* a config that turns look-ups off renders as /mutate answers with it: no look-up */
	rc = render_pod(c, pod, c->ns, ws != NULL && c->cfg->lookups ? &lk : NULL);
	cJSON_Delete(pod);
	if (rc != 0) {
		snprintf(why, sizeof(why), "%s", c->err);
		snprintf(c->err, c->errlen, "%s %s/%s, pod %s: %s", c->kind, c->ns, c->name, which,
		         why);
	}
	return rc;
}

static int render_doc(const cJSON *doc, const cJSON *services, struct worlds *worlds,
                      const struct config *cfg, const struct render_opts *o, struct strbuf *out,
                      cJSON *jarr, struct strbuf *warn, char *err, size_t errlen)
{
	const char *kind = json_str(doc, "kind");
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(doc, "metadata");
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(doc, "spec");
	const char *name = json_str(meta, "name");
	const char *ns = json_str(meta, "namespace");
	struct rctx c = {cfg,  o,    out, jarr, warn, err, errlen, 0,   NULL,  NULL,
	                 NULL, NULL, 0,   NULL, 0,    0,   NULL,   doc, worlds};
	struct pod_sink sink = {emit, &c, o->world_size, err, errlen};
	char what[320];
	struct validation *v;
	size_t i;
	int rc, w;

	if (ns == NULL || ns[0] == '\0')
		ns = o->namespace ? o->namespace : "default";
	snprintf(what, sizeof(what), "%s %s", kind ? kind : "?", name ? name : "(unnamed)");
	c.doc = what;
	c.kind = kind;
	if (kind != NULL && strcmp(kind, "Pod") == 0) {
		warn_label(&c, doc, "");
		if (!kind_template_opts_in(doc)) {
			warn_flush(&c);
			return 0;
		}
		rc = render_pod(&c, doc, ns, NULL);
		warn_flush(&c);
		return rc;
	}
	for (i = 0; kind_at(i) != NULL; i++) {
		const struct kind *k = kind_at(i);
		if (kind == NULL || k->make_pods == NULL || kind_named(NULL, kind) != k)
			continue;
		if (name == NULL || !dns_subdomain_valid(name)) {
			snprintf(err, errlen, "%s without a valid metadata.name", kind);
			return -1;
		}
		if (k->needs_spec_template &&
		    !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(spec, "template"))) {
			snprintf(err, errlen, "%s %s has no spec.template", kind, name);
			return -1;
		}
		/* every pod template of the kind (kind.h), as /validate and the chart see them */
		kind_each_template(k, doc, any_opted, &c.opted);
		kind_each_template(k, doc, warn_label, &c);
		/* nothing opts in: the webhook leaves every pod alone, so nothing is printed */
		if (!c.opted) {
			warn_flush(&c);
			return 0;
		}
		/* What /validate would say at apply time: its denial is an error, its warnings
		 * are printed (the Service checks against the manifest's own Services) */
		if ((v = malloc(sizeof(*v))) == NULL) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		validate_workload(doc, kind, ns, cfg, NULL, services, v);
		for (w = 0; warn != NULL && w < v->n_warnings; w++) {
			const char *t = v->warnings[w], *u = verdict_unprefixed(t);
			size_t n = strlen(what);

			/* a warning that names the workload itself is printed once, not twice */
			if (u != t && strncmp(u, what, n) == 0 && (u[n] == ':' || u[n] == ' '))
				strbuf_printf(warn, "warning: %s\n", t);
			else
				strbuf_printf(warn, "warning: %s: %s\n", what, t);
		}
		if (warn != NULL && v->n_more > 0)
			strbuf_printf(warn, "warning: %s: distenv: %d more warnings not shown\n",
			              what, v->n_more);
		if (v->n_problems > 0) {
			snprintf(err, errlen, "%s %s/%s: %s", kind, ns, name, v->denial);
			free(v);
			return -1;
		}
		c.kind = kind;
		c.name = name;
		c.ns = ns;
		c.said = v;
		rc = k->make_pods(doc, name, ns, &sink);
		warn_flush(&c);
		free(v);
		return rc;
	}
	/* another kind whose pod template opts in (a Deployment's): /mutate denies its pods */
	if (kind != NULL && kind_template_opts_in(json_get(spec, "template"))) {
		char supported[512];
		kind_supported(supported, sizeof(supported));
		snprintf(
		    err, errlen,
		    "%s %s: its pod template opts in, but its pods would be denied: %s; remove "
		    "the %s label from it",
		    kind, name ? name : "(unnamed)", supported, LABEL_INJECT);
		return -1;
	}
	return 1; /* not a workload: Services and the like are skipped */
}

/*
 * The Services of the manifest (documents and List items), as references
 * (the caller deletes the array, not the Services); NULL when there are none:
 * then the Service checks are skipped, as render cannot see the cluster.
 */
static cJSON *collect_services(const cJSON *docs)
{
	cJSON *arr = NULL;
	const cJSON *doc, *it;

	cJSON_ArrayForEach(doc, docs)
	{
		const char *kind = json_str(doc, "kind");
		const cJSON *one[1] = {doc};
		const cJSON *items = kind && strcmp(kind, "List") == 0
		                         ? cJSON_GetObjectItemCaseSensitive(doc, "items")
		                         : NULL;
		int n = items ? cJSON_GetArraySize(items) : 1, i;

		for (i = 0; i < n; i++) {
			it = items ? cJSON_GetArrayItem(items, i) : one[0];
			kind = json_str(it, "kind");
			if (kind == NULL || strcmp(kind, "Service") != 0)
				continue;
			if (arr == NULL && (arr = cJSON_CreateArray()) == NULL)
				return NULL;
			cJSON_AddItemReferenceToArray(arr, (cJSON *)it);
		}
	}
	return arr;
}

/*
 * What each kind's defaulting webhook does to its documents (kind.h,
 * defaults), in place: render judges the objects the API server stores.
 * Returns 0, or -1 when memory ran out.
 */
static int apply_defaults(cJSON *docs)
{
	cJSON *doc, *it;

	cJSON_ArrayForEach(doc, docs)
	{
		const char *kind = json_str(doc, "kind");
		cJSON *items = kind != NULL && strcmp(kind, "List") == 0
		                   ? cJSON_GetObjectItemCaseSensitive(doc, "items")
		                   : NULL;
		cJSON *one = items != NULL ? items->child : doc;

		for (it = one; it != NULL; it = items != NULL ? it->next : NULL) {
			const struct kind *k = kind_named(NULL, json_str(it, "kind"));
			if (k != NULL && k->defaults != NULL && k->defaults(it) != 0)
				return -1;
		}
	}
	return 0;
}

/* "no StatefulSet, Job, ... or Pod in the manifest": every kind render makes pods of. */
static void no_workload(char *err, size_t errlen)
{
	int k, n = 0;
	size_t used;

	snprintf(err, errlen, "no ");
	for (k = 0; kind_listed((size_t)k) != NULL; k++) {
		const struct kind *row = kind_listed((size_t)k);
		if (row == NULL || row->make_pods == NULL)
			continue;
		used = strlen(err);
		snprintf(err + used, errlen - used, "%s%s", n++ ? ", " : "", row->api.kind);
	}
	used = strlen(err);
	snprintf(err + used, errlen - used, " or Pod in the manifest");
}

char *render_manifest(const char *text, size_t len, const struct config *cfg,
                      const struct render_opts *opts, struct strbuf *warn, char *err, size_t errlen)
{
	cJSON *docs, *doc, *jarr = NULL, *services = NULL;
	struct worlds worlds = {NULL, 0, 0};
	struct strbuf out;
	char *res = NULL;
	int rendered = 0;

	strbuf_init(&out);
	docs = yamljson_parse(text, len, err, errlen);
	if (docs == NULL)
		return NULL;
	if (opts->format == RENDER_JSON && (jarr = cJSON_CreateArray()) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (apply_defaults(docs) != 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	services = collect_services(docs);
	cJSON_ArrayForEach(doc, docs)
	{
		const char *kind = json_str(doc, "kind");
		int list = kind != NULL && strcmp(kind, "List") == 0;
		const cJSON *items = cJSON_GetObjectItemCaseSensitive(doc, "items"), *it;

		if (!list) {
			int rc = render_doc(doc, services, &worlds, cfg, opts, &out, jarr, warn,
			                    err, errlen);
			if (rc < 0)
				goto out;
			rendered += rc == 0;
			continue;
		}
		/* kubectl's List: its items, in order (one level; a List does not nest) */
		cJSON_ArrayForEach(it, items)
		{
			int rc = render_doc(it, services, &worlds, cfg, opts, &out, jarr, warn, err,
			                    errlen);
			if (rc < 0)
				goto out;
			rendered += rc == 0;
		}
	}
	if (rendered == 0) {
		no_workload(err, errlen);
		goto out;
	}
	worlds_warn(&worlds, warn);
	if (jarr != NULL) {
		char *j = cJSON_Print(jarr);
		if (j != NULL) {
			strbuf_puts(&out, j);
			strbuf_puts(&out, "\n");
			free(j);
		} else {
			out.oom = 1;
		}
	}
	res = strbuf_take(&out);
	if (res == NULL)
		snprintf(err, errlen, "out of memory");
out:
	free(worlds.w);
	strbuf_free(&out);
	cJSON_Delete(jarr);
	cJSON_Delete(services);
	cJSON_Delete(docs);
	return res;
}
