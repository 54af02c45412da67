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
#include "util.h"
#include "yamljson.h"

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

static long num_field(const cJSON *obj, const char *key, long dflt)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (cJSON_IsNumber(it) && it->valuedouble >= 0 && it->valuedouble <= 1e9)
		return (long)it->valuedouble;
	return dflt;
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

/*
 * Makes the pod the controller would create for ordinal/index i: a copy of the
 * template with name or generateName, labels, annotations, owner and hostname.
 */
static cJSON *make_pod(const cJSON *tmpl, enum workload_kind kind, const char *name, const char *ns,
                       const char *service, long i)
{
	cJSON *pod = cJSON_CreateObject(), *meta, *spec, *labels, *anns, *refs, *ref;
	char buf[320], idx[24];

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
	if (meta == NULL || spec == NULL)
		goto fail;
	snprintf(buf, sizeof(buf), "%s-%ld", name, i);
	snprintf(idx, sizeof(idx), "%ld", i);
	labels = obj_child(meta, "labels");
	anns = obj_child(meta, "annotations");
	if (labels == NULL || anns == NULL || set_str(meta, "namespace", ns) != 0)
		goto fail;
	if (kind == WORKLOAD_STATEFULSET) {
		if (set_str(meta, "name", buf) || set_str(labels, LABEL_POD_INDEX, idx) ||
		    set_str(labels, "statefulset.kubernetes.io/pod-name", buf) ||
		    set_str(spec, "hostname", buf))
			goto fail;
		/* The controller sets spec.subdomain to serviceName, empty or not. */
		cJSON_DeleteItemFromObjectCaseSensitive(spec, "subdomain");
		if (service && service[0] && set_str(spec, "subdomain", service))
			goto fail;
	} else {
		char gen[330];
		snprintf(gen, sizeof(gen), "%s-", buf);
		if (set_str(meta, "generateName", gen) || set_str(anns, ANN_JOB_INDEX, idx) ||
		    set_str(labels, ANN_JOB_INDEX, idx) || set_str(spec, "hostname", buf))
			goto fail;
	}
	refs = cJSON_AddArrayToObject(meta, "ownerReferences");
	ref = cJSON_CreateObject();
	if (refs == NULL || ref == NULL) {
		cJSON_Delete(ref);
		goto fail;
	}
	cJSON_AddItemToArray(refs, ref); /* refs owns ref */
	if (!cJSON_AddStringToObject(ref, "apiVersion",
	                             kind == WORKLOAD_STATEFULSET ? "apps/v1" : "batch/v1") ||
	    !cJSON_AddStringToObject(ref, "kind", workload_kind_name(kind)) ||
	    !cJSON_AddStringToObject(ref, "name", name) ||
	    !cJSON_AddTrueToObject(ref, "controller"))
		goto fail;
	return pod;
fail:
	cJSON_Delete(pod);
	return NULL;
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
		strbuf_printf(out, "--- rank %ld/%ld: %s %s/%s, pod %s, containers",
		              plan->topo.rank, plan->topo.world_size,
		              workload_kind_name(plan->topo.kind), plan->topo.ns,
		              plan->topo.workload,
		              host    ? host
		              : pname ? pname
		                      : "?");
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

static void warn_add(char *warn, size_t warnlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void warn_add(char *warn, size_t warnlen, const char *fmt, ...)
{
	size_t used;
	va_list ap;

	if (warn == NULL)
		return;
	used = strlen(warn);
	if (used >= warnlen)
		return;
	va_start(ap, fmt);
	vsnprintf(warn + used, warnlen - used, fmt, ap);
	va_end(ap);
}

static int render_pod(const cJSON *pod, const char *ns, const struct config *cfg,
                      const struct workload_lookup *lk, const struct render_opts *o,
                      struct strbuf *out, cJSON *jarr, char *warn, size_t warnlen, char *err,
                      size_t errlen)
{
	struct pod_plan plan;
	enum plan_status ps;
	int rc, w;

	ps = pod_plan_build(pod, ns, 0, cfg, lk, &plan, err, errlen);
	if (ps == PLAN_NOMEM)
		snprintf(err, errlen, "out of memory");
	if (ps != PLAN_OK)
		return -1;
	for (w = 0; w < plan.n_warnings; w++)
		warn_add(warn, warnlen, "warning: rank %ld: %s\n", plan.topo.rank,
		         plan.warnings[w]);
	rc = emit_rank(out, jarr, o, pod, &plan);
	pod_plan_free(&plan);
	if (rc != 0)
		snprintf(err, errlen, "out of memory");
	return rc;
}

static void warn_label(const cJSON *meta, const char *what, const char *name, char *warn,
                       size_t warnlen)
{
	const cJSON *labels = cJSON_GetObjectItemCaseSensitive(meta, "labels");
	const char *v = cJSON_IsObject(labels) ? json_str(labels, LABEL_INJECT) : NULL;
	size_t used;

	if (warn == NULL || (v != NULL && strcmp(v, "true") == 0))
		return;
	used = strlen(warn);
	if (used < warnlen)
		snprintf(
		    warn + used, warnlen - used,
		    "warning: %s %s: the pod template has no label %s: \"true\", so the webhook "
		    "would leave its pods alone\n",
		    what, name, LABEL_INJECT);
}

static int render_doc(const cJSON *doc, const struct config *cfg, const struct render_opts *o,
                      struct strbuf *out, cJSON *jarr, char *warn, size_t warnlen, char *err,
                      size_t errlen)
{
	const char *kind = json_str(doc, "kind");
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(doc, "metadata");
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(doc, "spec");
	const cJSON *tmpl = cJSON_GetObjectItemCaseSensitive(spec, "template");
	const char *name = json_str(meta, "name");
	const char *ns = json_str(meta, "namespace");
	struct manifest_lookup ml;
	struct workload_lookup lk = {manifest_get, &ml};
	enum workload_kind wk;
	const char *service = NULL;
	long n, start = 0, i;

	workload_spec_init(&ml.spec);
	if (ns == NULL || ns[0] == '\0')
		ns = o->namespace ? o->namespace : "default";
	if (kind != NULL && strcmp(kind, "Pod") == 0) {
		warn_label(meta, "Pod", name ? name : "(unnamed)", warn, warnlen);
		return render_pod(doc, ns, cfg, NULL, o, out, jarr, warn, warnlen, err, errlen);
	}
	if (kind != NULL && strcmp(kind, "StatefulSet") == 0)
		wk = WORKLOAD_STATEFULSET;
	else if (kind != NULL && strcmp(kind, "Job") == 0)
		wk = WORKLOAD_JOB;
	else
		return 1; /* not a workload: Services and the like are skipped */
	if (name == NULL || !dns_subdomain_valid(name)) {
		snprintf(err, errlen, "%s without a valid metadata.name", kind);
		return -1;
	}
	if (!cJSON_IsObject(tmpl)) {
		snprintf(err, errlen, "%s %s has no spec.template", kind, name);
		return -1;
	}
	warn_label(cJSON_GetObjectItemCaseSensitive(tmpl, "metadata"), kind, name, warn, warnlen);
	if (wk == WORKLOAD_STATEFULSET) {
		ml.spec.replicas = num_field(spec, "replicas", 1);
		start = num_field(cJSON_GetObjectItemCaseSensitive(spec, "ordinals"), "start", 0);
		ml.spec.ordinals_start = start;
		service = json_str(spec, "serviceName");
		if (o->world_size > 0)
			ml.spec.replicas = o->world_size;
		n = ml.spec.replicas;
	} else {
		const char *mode = json_str(spec, "completionMode");
		ml.spec.completions = num_field(spec, "completions", -1);
		ml.spec.parallelism = num_field(spec, "parallelism", 1);
		ml.spec.indexed = mode != NULL && strcmp(mode, "Indexed") == 0;
		if (o->world_size > 0)
			ml.spec.completions = ml.spec.parallelism = o->world_size;
		n = ml.spec.completions > 0 ? ml.spec.completions : 1;
	}
	if (n > cfg->max_world_size) {
		snprintf(err, errlen, "%s %s: %ld ranks is above the limit of %ld", kind, name, n,
		         cfg->max_world_size);
		return -1;
	}
	for (i = 0; i < n; i++) {
		cJSON *pod = make_pod(tmpl, wk, name, ns, service, start + i);
		int rc;
		if (pod == NULL) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		rc = render_pod(pod, ns, cfg, &lk, o, out, jarr, warn, warnlen, err, errlen);
		cJSON_Delete(pod);
		if (rc != 0) {
			/* What /mutate would deny for this rank is render's error, naming the rank.
			 */
			char why[512];
			snprintf(why, sizeof(why), "%s", err);
			snprintf(err, errlen, "%s %s/%s, pod %ld: %s", kind, ns, name, start + i,
			         why);
			return -1;
		}
	}
	return 0;
}

char *render_manifest(const char *text, size_t len, const struct config *cfg,
                      const struct render_opts *opts, char *warn, size_t warnlen, char *err,
                      size_t errlen)
{
	cJSON *docs, *doc, *jarr = NULL;
	struct strbuf out;
	char *res = NULL;
	int rendered = 0;

	if (warn != NULL && warnlen > 0)
		warn[0] = '\0';
	strbuf_init(&out);
	docs = yamljson_parse(text, len, err, errlen);
	if (docs == NULL)
		return NULL;
	if (opts->format == RENDER_JSON && (jarr = cJSON_CreateArray()) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	cJSON_ArrayForEach(doc, docs)
	{
		int rc = render_doc(doc, cfg, opts, &out, jarr, warn, warnlen, err, errlen);
		if (rc < 0)
			goto out;
		if (rc == 0)
			rendered++;
	}
	if (rendered == 0) {
		snprintf(err, errlen, "no StatefulSet, Job or Pod in the manifest");
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
	cJSON_Delete(docs);
	return res;
}
