/*
 * render: turn workload manifests into the pods their controllers would make
 * (as the StatefulSet and Job controllers name and label them) and run each
 * through pod_plan_build, answering look-ups from the manifest itself.
 */
#include "render.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "admission.h"
#include "kind.h"
#include "validate.h"
#include "util.h"
#include "strbuf.h"
#include "dns.h"
#include "yamljson.h"
#include "json.h"

struct manifest_lookup {
	struct workload_spec spec;
};

static int manifest_get(void *ctx, const struct workload_ref *ref, int fresh,
                        struct workload_spec *out, char *err, size_t errlen)
{
	(void)ref;
	(void)fresh;
	(void)err;
	(void)errlen;
	*out = ((struct manifest_lookup *)ctx)->spec;
	return 0;
}

/* Returns obj[key], creating an empty object there when absent. NULL on failure. */
static cJSON *obj_child(cJSON *obj, const char *key)
{
	cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (cJSON_IsObject(it))
		return it;
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	return cJSON_AddObjectToObject(obj, key);
}

static int set_str(cJSON *obj, const char *key, const char *val)
{
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	return cJSON_AddStringToObject(obj, key, val) == NULL ? -1 : 0;
}

/* Who a controller says a pod is: its name, owner, hostname and subdomain. */
struct pod_shape {
	const char *name;     /* metadata.name, or NULL */
	const char *generate; /* metadata.generateName, or NULL */
	const char *owner_apiv, *owner_kind, *owner_name;
	const char *hostname;  /* NULL: the template's */
	const char *subdomain; /* NULL: the template's; "": none */
};

/* A copy of the pod template tmpl shaped as sh says, in namespace ns. NULL on failure. */
static cJSON *pod_new(const cJSON *tmpl, const char *ns, const struct pod_shape *sh)
{
	cJSON *pod = cJSON_CreateObject(), *meta, *spec, *refs, *ref;

	if (pod == NULL)
		return NULL;
	meta = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(tmpl, "metadata"), 1);
	spec = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(tmpl, "spec"), 1);
	if (meta == NULL)
		meta = cJSON_CreateObject();
	if (spec == NULL)
		spec = cJSON_CreateObject();
	cJSON_AddStringToObject(pod, "apiVersion", "v1");
	cJSON_AddStringToObject(pod, "kind", "Pod");
	cJSON_AddItemToObject(pod, "metadata", meta); /* pod owns meta */
	cJSON_AddItemToObject(pod, "spec", spec);     /* pod owns spec */
	if (meta == NULL || spec == NULL || obj_child(meta, "labels") == NULL ||
	    obj_child(meta, "annotations") == NULL || set_str(meta, "namespace", ns) != 0 ||
	    (sh->name && set_str(meta, "name", sh->name)) ||
	    (sh->generate && set_str(meta, "generateName", sh->generate)) ||
	    (sh->hostname && set_str(spec, "hostname", sh->hostname)))
		goto fail;
	if (sh->subdomain != NULL) {
		cJSON_DeleteItemFromObjectCaseSensitive(spec, "subdomain");
		if (sh->subdomain[0] && set_str(spec, "subdomain", sh->subdomain))
			goto fail;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "ownerReferences");
	refs = cJSON_AddArrayToObject(meta, "ownerReferences");
	ref = cJSON_CreateObject();
	if (refs == NULL || ref == NULL) {
		cJSON_Delete(ref);
		goto fail;
	}
	cJSON_AddItemToArray(refs, ref); /* refs owns ref */
	if (!cJSON_AddStringToObject(ref, "apiVersion", sh->owner_apiv) ||
	    !cJSON_AddStringToObject(ref, "kind", sh->owner_kind) ||
	    !cJSON_AddStringToObject(ref, "name", sh->owner_name) ||
	    !cJSON_AddTrueToObject(ref, "controller"))
		goto fail;
	return pod;
fail:
	cJSON_Delete(pod);
	return NULL;
}

/* Sets key = val among the pod's labels and/or annotations. Returns 0 or -1. */
static int pod_mark(cJSON *pod, const char *key, const char *val, int label, int ann)
{
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(pod, "metadata");

	if (label && set_str(cJSON_GetObjectItemCaseSensitive(meta, "labels"), key, val) != 0)
		return -1;
	if (ann && set_str(cJSON_GetObjectItemCaseSensitive(meta, "annotations"), key, val) != 0)
		return -1;
	return 0;
}

/* The pod the StatefulSet controller makes for ordinal ord (stateful_set_utils.go). */
static cJSON *sts_pod(const cJSON *tmpl, const char *sts, const char *ns, const char *service,
                      long ord)
{
	char name[320], idx[24];
	struct pod_shape sh = {
	    name, NULL, "apps/v1", "StatefulSet", sts, name, service ? service : ""};
	cJSON *pod;

	snprintf(name, sizeof(name), "%s-%ld", sts, ord);
	snprintf(idx, sizeof(idx), "%ld", ord);
	pod = pod_new(tmpl, ns, &sh);
	if (pod != NULL && (pod_mark(pod, LABEL_POD_INDEX, idx, 1, 0) ||
	                    pod_mark(pod, "statefulset.kubernetes.io/pod-name", name, 1, 0))) {
		cJSON_Delete(pod);
		return NULL;
	}
	return pod;
}

/* The pod the Job controller makes for completion index i (indexed_job_utils.go). */
static cJSON *job_pod(const cJSON *tmpl, const char *job, const char *ns, long i)
{
	char host[320], gen[330], idx[24];
	struct pod_shape sh = {NULL, gen, "batch/v1", "Job", job, host, NULL};
	cJSON *pod;

	snprintf(host, sizeof(host), "%s-%ld", job, i);
	snprintf(gen, sizeof(gen), "%s-", host);
	snprintf(idx, sizeof(idx), "%ld", i);
	pod = pod_new(tmpl, ns, &sh);
	if (pod != NULL && pod_mark(pod, ANN_JOB_INDEX, idx, 1, 1)) {
		cJSON_Delete(pod);
		return NULL;
	}
	return pod;
}

/* Appends one rank's plan to out (text or a JSON array item). */
static int emit_rank(struct strbuf *out, cJSON *jarr, const struct render_opts *o, const cJSON *pod,
                     const struct pod_plan *plan)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
	const char *pname = json_str(meta, "name");
	const char *host = json_str(spec, "hostname");
	size_t i;
	int k;

	if (pname == NULL)
		pname = json_str(meta, "generateName");
	if (o->format == RENDER_TEXT) {
		strbuf_printf(out, "--- rank %ld/%ld: %s %s/%s, ", plan->topo.rank,
		              plan->topo.world_size, workload_kind_name(plan->topo.kind),
		              plan->topo.ns, plan->topo.workload);
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
		/* A container with its own MASTER_ADDR/MASTER_PORT: what differs for it. */
		for (k = 0; k < plan->topo.n_targets; k++) {
			const struct env_list *own = pod_plan_target_env(plan, k);
			const cJSON *c = topology_target_container(spec, &plan->topo.targets[k]);
			if (own == &plan->env)
				continue;
			for (i = 0; i < own->n && i < plan->env.n; i++)
				if (strcmp(own->vars[i].value, plan->env.vars[i].value) != 0)
					strbuf_printf(out, "  (container %s) %s=%s\n",
					              json_str(c, "name"), own->vars[i].name,
					              own->vars[i].value);
		}
		return out->oom ? -1 : 0;
	} else {
		cJSON *r = cJSON_CreateObject(), *env, *ctrs;
		if (r == NULL)
			return -1;
		cJSON_AddItemToArray(jarr, r); /* jarr owns r */
		if (!cJSON_AddStringToObject(r, "kind", workload_kind_name(plan->topo.kind)) ||
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
		    !(env = cJSON_AddArrayToObject(r, "env")))
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
		return 0;
	}
}

/* One warning of the pods of a workload, with the ranks that got it. */
struct rank_warning {
	char text[PLAN_WARNING_LEN];
	long lo, hi, n; /* lowest and highest rank, how many ranks */
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
	long pods;       /* rendered so far, bounded by cfg->max_world_size */
	const char *doc; /* "StatefulSet ddp", for warnings */
	int opted;       /* a pod template of the workload opts in: only its pods are rendered */
	/* the pods' warnings, each once with its ranks (printed by warn_flush) */
	struct rank_warning *rw;
	size_t n_rw, cap_rw;
};

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
		snprintf(more, sizeof(more), "distenv: %d more warnings not kept", plan.n_more);
		rc = warn_rank(c, plan.topo.rank, more);
	}
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
	strbuf_printf(
	    c->warn,
	    "warning: %s: %s%s no label %s: \"true\", so the webhook would leave its pods "
	    "alone\n",
	    c->doc, what[0] ? what : "the pod template", what[0] ? ": has" : " has", LABEL_INJECT);
}

/* 1 when a pod template opts in (kind_each_template's fn). */
static void any_opted(void *ctx, const cJSON *tmpl, const char *what)
{
	(void)what;
	*(int *)ctx |= kind_template_opts_in(tmpl);
}

/*
 * Plans pod (taking ownership of it) and prints its rank. What /mutate would
 * deny is the error, naming the workload and the pod.
 */
static int emit(struct rctx *c, cJSON *pod, const char *ns, const struct workload_lookup *lk,
                const char *kind, const char *name, const char *which)
{
	char why[512];
	int rc;

	if (pod == NULL) {
		snprintf(c->err, c->errlen, "out of memory");
		return -1;
	}
	if (++c->pods > c->cfg->max_world_size) {
		snprintf(c->err, c->errlen, "%s %s: more than %ld pods to render", kind, name,
		         c->cfg->max_world_size);
		cJSON_Delete(pod);
		return -1;
	}
	/* a pod whose template does not opt in, beside one that does: the webhook leaves it */
	if (c->opted && !kind_template_opts_in(pod)) {
		cJSON_Delete(pod);
		return 0;
	}
	rc = render_pod(c, pod, ns, lk);
	cJSON_Delete(pod);
	if (rc != 0) {
		snprintf(why, sizeof(why), "%s", c->err);
		snprintf(c->err, c->errlen, "%s %s/%s, pod %s: %s", kind, ns, name, which, why);
	}
	return rc;
}

static int render_statefulset(struct rctx *c, const cJSON *spec, const char *name, const char *ns)
{
	const cJSON *tmpl = cJSON_GetObjectItemCaseSensitive(spec, "template");
	struct manifest_lookup ml;
	struct workload_lookup lk = {.get = manifest_get, .ctx = &ml}; /* offline: nothing listed */
	long i, start;
	char which[32];

	workload_spec_init(&ml.spec);
	ml.spec.replicas =
	    c->o->world_size > 0 ? c->o->world_size : json_long(spec, "replicas", 1000000000, 1);
	start =
	    json_long(cJSON_GetObjectItemCaseSensitive(spec, "ordinals"), "start", 1000000000, 0);
	ml.spec.ordinals_start = start;
	for (i = 0; i < ml.spec.replicas; i++) {
		snprintf(which, sizeof(which), "%ld", start + i);
		if (emit(c, sts_pod(tmpl, name, ns, json_str(spec, "serviceName"), start + i), ns,
		         &lk, "StatefulSet", name, which) != 0)
			return -1;
	}
	return 0;
}

static int render_job(struct rctx *c, const cJSON *spec, const char *name, const char *ns)
{
	const cJSON *tmpl = cJSON_GetObjectItemCaseSensitive(spec, "template");
	const char *mode = json_str(spec, "completionMode");
	struct manifest_lookup ml;
	struct workload_lookup lk = {.get = manifest_get, .ctx = &ml}; /* offline: nothing listed */
	long i, n;
	char which[32];

	workload_spec_init(&ml.spec);
	ml.spec.completions = json_long(spec, "completions", 1000000000, -1);
	ml.spec.parallelism = json_long(spec, "parallelism", 1000000000, 1);
	ml.spec.indexed = mode != NULL && strcmp(mode, "Indexed") == 0;
	if (c->o->world_size > 0)
		ml.spec.completions = ml.spec.parallelism = c->o->world_size;
	n = ml.spec.completions > 0 ? ml.spec.completions : 1;
	for (i = 0; i < n; i++) {
		snprintf(which, sizeof(which), "%ld", i);
		if (emit(c, job_pod(tmpl, name, ns, i), ns, &lk, "Job", name, which) != 0)
			return -1;
	}
	return 0;
}

/*
 * A JobSet: Job <js>-<rjob>-<j> per replica of each replicated Job, labelled and
 * annotated as jobset_controller.go's labelAndAnnotateObject does, each pod made
 * by the Job controller; the look-up answers with the JobSet itself.
 */
static int render_jobset(struct rctx *c, const cJSON *doc, const char *name, const char *ns)
{
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(doc, "spec");
	const cJSON *net = cJSON_GetObjectItemCaseSensitive(spec, "network");
	const cJSON *dns = cJSON_GetObjectItemCaseSensitive(net, "enableDNSHostnames");
	const char *subdomain = json_str(net, "subdomain");
	struct manifest_lookup ml;
	struct workload_lookup lk = {.get = manifest_get, .ctx = &ml}; /* offline: nothing listed */
	char *txt = cJSON_PrintUnformatted(doc), job[320], which[352], buf[32], global[32];
	char coord[640];
	const cJSON *rj;
	long total_jobs = 0, j, i, gidx = 0;
	int k = 0;

	workload_spec_init(&ml.spec);
	if (txt == NULL ||
	    workload_parse(WORKLOAD_JOBSET, txt, strlen(txt), &ml.spec, c->err, c->errlen) != 0) {
		if (txt == NULL)
			snprintf(c->err, c->errlen, "out of memory");
		free(txt);
		return -1;
	}
	free(txt);
	for (k = 0; k < ml.spec.n_rjobs; k++)
		total_jobs += ml.spec.rjobs[k].replicas;
	snprintf(global, sizeof(global), "%ld", total_jobs);
	if (subdomain == NULL || subdomain[0] == '\0')
		subdomain = name; /* GetSubdomain: the network subdomain, else the JobSet's name */
	k = 0;
	cJSON_ArrayForEach(rj, cJSON_GetObjectItemCaseSensitive(spec, "replicatedJobs"))
	{
		const struct workload_rjob *w = &ml.spec.rjobs[k++];
		const cJSON *jt = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(
		        cJSON_GetObjectItemCaseSensitive(rj, "template"), "spec"),
		    "template");
		long pods = w->completions > 0 ? w->completions : 1;

		for (j = 0; j < w->replicas; j++, gidx++) {
			snprintf(job, sizeof(job), "%s-%s-%ld", name, w->name, j);
			for (i = 0; i < pods; i++) {
				cJSON *pod = job_pod(jt, job, ns, i);
				static const char *const keys[] = {
				    JOBSET_NAME, JOBSET_RJOB, JOBSET_RJOB_REPS, JOBSET_GLOBAL_REPS,
				    JOBSET_JOB_INDEX};
				char reps[32], jidx[32];
				const char *vals[5];
				size_t m;

				snprintf(reps, sizeof(reps), "%ld", w->replicas);
				snprintf(jidx, sizeof(jidx), "%ld", j);
				vals[0] = name, vals[1] = w->name, vals[2] = reps, vals[3] = global,
				vals[4] = jidx;
				for (m = 0; pod != NULL && m < 5; m++)
					if (pod_mark(pod, keys[m], vals[m], 1, 1) != 0) {
						cJSON_Delete(pod);
						pod = NULL;
					}
				snprintf(buf, sizeof(buf), "%ld", gidx);
				if (pod != NULL &&
				    pod_mark(pod, "jobset.sigs.k8s.io/job-global-index", buf, 1,
				             1) != 0) {
					cJSON_Delete(pod);
					pod = NULL;
				}
				/* CoordinatorEndpoint: "<js>-<rjob>-<j>-<i>.<subdomain>" */
				if (pod != NULL && ml.spec.coordinator[0] != '\0' &&
				    (bounded_printf(coord, sizeof(coord), "%s-%s-%ld-%ld.%s", name,
				                    ml.spec.coordinator, ml.spec.coordinator_job,
				                    ml.spec.coordinator_pod, subdomain) != 0 ||
				     pod_mark(pod, JOBSET_COORDINATOR, coord, 1, 1) != 0)) {
					cJSON_Delete(pod);
					pod = NULL;
				}
				/* enableDNSHostnames defaults to true (the JobSet webhook) */
				if (pod != NULL && !cJSON_IsFalse(dns) &&
				    set_str(cJSON_GetObjectItemCaseSensitive(pod, "spec"),
				            "subdomain", subdomain) != 0) {
					cJSON_Delete(pod);
					pod = NULL;
				}
				snprintf(which, sizeof(which), "%s-%ld", job, i);
				if (emit(c, pod, ns, &lk, "JobSet", name, which) != 0)
					return -1;
			}
		}
	}
	return 0;
}

/*
 * A LeaderWorkerSet: per group g the leader pod <lws>-<g> of StatefulSet <lws>
 * and workers <lws>-<g>-<i> of StatefulSet <lws>-<g> (ordinals from 1), as
 * leaderworkerset_controller.go and pod_controller.go build them.
 */
static int render_lws(struct rctx *c, const cJSON *doc, const char *name, const char *ns)
{
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(doc, "spec");
	const cJSON *lwt = cJSON_GetObjectItemCaseSensitive(spec, "leaderWorkerTemplate");
	const cJSON *wt = cJSON_GetObjectItemCaseSensitive(lwt, "workerTemplate");
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(lwt, "leaderTemplate");
	const char *policy =
	    json_str(cJSON_GetObjectItemCaseSensitive(spec, "networkConfig"), "subdomainPolicy");
	int unique = policy != NULL && strcmp(policy, "UniquePerReplica") == 0;
	long groups = json_long(spec, "replicas", 1000000000, 1),
	     size = json_long(lwt, "size", 1000000000, 1), g, i;
	char sz[32], leader[320], gs[32], which[352];

	if (!cJSON_IsObject(wt)) {
		snprintf(c->err, c->errlen,
		         "LeaderWorkerSet %s has no leaderWorkerTemplate.workerTemplate", name);
		return -1;
	}
	if (!cJSON_IsObject(lt))
		lt = wt;
	snprintf(sz, sizeof(sz), "%ld", size);
	for (g = 0; g < groups; g++) {
		cJSON *pod = sts_pod(lt, name, ns, name, g);
		snprintf(leader, sizeof(leader), "%s-%ld", name, g);
		snprintf(gs, sizeof(gs), "%ld", g);
		if (pod != NULL &&
		    (pod_mark(pod, LWS_NAME, name, 1, 0) ||
		     pod_mark(pod, LWS_WORKER_INDEX, "0", 1, 0) ||
		     pod_mark(pod, LWS_SIZE, sz, 0, 1) ||
		     (unique && pod_mark(pod, LWS_SUBDOMAIN, "UniquePerReplica", 0, 1)))) {
			cJSON_Delete(pod);
			pod = NULL;
		}
		if (emit(c, pod, ns, NULL, "LeaderWorkerSet", name, leader) != 0)
			return -1;
		for (i = 1; i < size; i++) {
			pod = sts_pod(wt, leader, ns, unique ? leader : name, i);
			if (pod != NULL && (pod_mark(pod, LWS_NAME, name, 1, 0) ||
			                    pod_mark(pod, LWS_GROUP_INDEX, gs, 1, 0) ||
			                    pod_mark(pod, LWS_SIZE, sz, 0, 1) ||
			                    pod_mark(pod, LWS_LEADER_NAME, leader, 0, 1))) {
				cJSON_Delete(pod);
				pod = NULL;
			}
			snprintf(which, sizeof(which), "%s-%ld", leader, i);
			if (emit(c, pod, ns, NULL, "LeaderWorkerSet", name, which) != 0)
				return -1;
		}
	}
	return 0;
}

/*
 * How each controller makes its pods from a manifest: one row per kind render
 * reads, keyed by the kind table's kinds (the pod makers call the plan, so they
 * live here, a layer above the kind files).
 */
static const struct controller {
	enum workload_kind kind;
	int templated; /* 1: the manifest has spec.template (checked before rendering) */
	int (*render)(struct rctx *c, const cJSON *doc_or_spec, const char *name, const char *ns);
} controllers[] = {
    {WORKLOAD_STATEFULSET, 1, render_statefulset},
    {WORKLOAD_JOB, 1, render_job},
    {WORKLOAD_JOBSET, 0, render_jobset},
    {WORKLOAD_LWS, 0, render_lws},
};

static int render_doc(const cJSON *doc, const cJSON *services, const struct config *cfg,
                      const struct render_opts *o, struct strbuf *out, cJSON *jarr,
                      struct strbuf *warn, char *err, size_t errlen)
{
	const char *kind = json_str(doc, "kind");
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(doc, "metadata");
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(doc, "spec");
	const char *name = json_str(meta, "name");
	const char *ns = json_str(meta, "namespace");
	struct rctx c = {cfg, o, out, jarr, warn, err, errlen, 0, NULL, 0, NULL, 0, 0};
	char what[320];
	struct validation *v;
	size_t i;
	int rc, w;

	if (ns == NULL || ns[0] == '\0')
		ns = o->namespace ? o->namespace : "default";
	snprintf(what, sizeof(what), "%s %s", kind ? kind : "?", name ? name : "(unnamed)");
	c.doc = what;
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
	for (i = 0; i < sizeof(controllers) / sizeof(controllers[0]); i++) {
		const struct controller *k = &controllers[i];
		if (kind == NULL || workload_kind_named(NULL, kind) != k->kind)
			continue;
		if (name == NULL || !dns_subdomain_valid(name)) {
			snprintf(err, errlen, "%s without a valid metadata.name", kind);
			return -1;
		}
		if (k->templated &&
		    !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(spec, "template"))) {
			snprintf(err, errlen, "%s %s has no spec.template", kind, name);
			return -1;
		}
		/* every pod template of the kind (kind.h), as /validate and the chart see them */
		kind_each_template(kind_of(k->kind), doc, any_opted, &c.opted);
		kind_each_template(kind_of(k->kind), doc, warn_label, &c);
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
		for (w = 0; warn != NULL && w < v->n_warnings; w++)
			strbuf_printf(warn, "warning: %s: %s\n", what, v->warnings[w]);
		if (warn != NULL && v->n_more > 0)
			strbuf_printf(warn, "warning: %s: distenv: %d more warnings not kept\n",
			              what, v->n_more);
		if (v->n_problems > 0) {
			snprintf(err, errlen, "%s %s/%s: %s", kind, ns, name, v->denial);
			free(v);
			return -1;
		}
		free(v);
		rc = k->render(&c, k->templated ? spec : doc, name, ns);
		warn_flush(&c);
		return rc;
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

char *render_manifest(const char *text, size_t len, const struct config *cfg,
                      const struct render_opts *opts, struct strbuf *warn, char *err, size_t errlen)
{
	cJSON *docs, *doc, *jarr = NULL, *services = NULL;
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
	services = collect_services(docs);
	cJSON_ArrayForEach(doc, docs)
	{
		const char *kind = json_str(doc, "kind");
		int list = kind != NULL && strcmp(kind, "List") == 0;
		const cJSON *items = cJSON_GetObjectItemCaseSensitive(doc, "items"), *it;

		if (!list) {
			int rc =
			    render_doc(doc, services, cfg, opts, &out, jarr, warn, err, errlen);
			if (rc < 0)
				goto out;
			rendered += rc == 0;
			continue;
		}
		/* kubectl's List: its items, in order (one level; a List does not nest) */
		cJSON_ArrayForEach(it, items)
		{
			int rc = render_doc(it, services, cfg, opts, &out, jarr, warn, err, errlen);
			if (rc < 0)
				goto out;
			rendered += rc == 0;
		}
	}
	if (rendered == 0) {
		snprintf(err, errlen,
		         "no StatefulSet, Job, JobSet, LeaderWorkerSet or Pod in the manifest");
		goto out;
	}
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
	strbuf_free(&out);
	cJSON_Delete(jarr);
	cJSON_Delete(services);
	cJSON_Delete(docs);
	return res;
}
