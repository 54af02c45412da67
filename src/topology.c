/*
 * Topology resolution: the pod's owner, rank, world size, Service, port,
 * frameworks and target containers, from the pod object, the annotations and
 * the optional workload look-up. Denials are written to err for the user.
 */
#include "topology.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define DENY(...)                                                                                  \
	do {                                                                                       \
		snprintf(err, errlen, "distenv: " __VA_ARGS__);                                    \
		rc = TOPOLOGY_DENY;                                                                \
		goto out;                                                                          \
	} while (0)

const char *json_str(const cJSON *obj, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(it) ? it->valuestring : NULL;
}

/* Looks up a string-valued map entry (labels, annotations); NULL when absent or not a string. */
static const char *map_get(const cJSON *map, const char *key)
{
	return cJSON_IsObject(map) ? json_str(map, key) : NULL;
}

/* Reads an annotation as an integer in [min, max]: 0 absent, 1 set, -1 bad (err filled). */
static int ann_long(const cJSON *anns, const char *key, long min, long max, const char *what,
                    long *out, char *err, size_t errlen)
{
	const char *v = map_get(anns, key);

	if (v == NULL)
		return 0;
	if (parse_long(v, min, max, out) != 0) {
		snprintf(err, errlen,
		         "distenv: annotation %s: \"%.64s\" is not %s between %ld and %ld", key, v,
		         what, min, max);
		return -1;
	}
	return 1;
}

static const cJSON *controller_owner(const cJSON *meta)
{
	const cJSON *refs = cJSON_GetObjectItemCaseSensitive(meta, "ownerReferences");
	const cJSON *ref;

	cJSON_ArrayForEach(ref, refs)
	{
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "controller")))
			return ref;
	}
	return NULL;
}

/* Parses "MIN:MAX". Returns 0 or -1. */
static int parse_elastic(const char *v, long max, long *lo, long *hi)
{
	char buf[48];
	char *colon;

	if (strlen(v) >= sizeof(buf))
		return -1;
	strcpy(buf, v);
	colon = strchr(buf, ':');
	if (colon == NULL)
		return -1;
	*colon = '\0';
	if (parse_long(buf, 1, max, lo) != 0 || parse_long(colon + 1, 1, max, hi) != 0)
		return -1;
	return 0;
}

/* The trailing "-N" of "<prefix>-N". Returns 0 or -1. */
static int name_ordinal(const char *name, const char *prefix, long *ord)
{
	size_t pl = strlen(prefix);

	if (name == NULL || strncmp(name, prefix, pl) != 0 || name[pl] != '-')
		return -1;
	return parse_long(name + pl + 1, 0, INT_MAX, ord);
}

/* Finds a container by name in an array; returns its index or -1. */
static int find_container(const cJSON *arr, const char *name, size_t n)
{
	const cJSON *c;
	int i = 0;

	cJSON_ArrayForEach(c, arr)
	{
		const char *cn = json_str(c, "name");
		if (cn != NULL && strlen(cn) == n && strncmp(cn, name, n) == 0)
			return i;
		i++;
	}
	return -1;
}

static int has_target(const struct topology *t, int init, int index)
{
	int i;

	for (i = 0; i < t->n_targets; i++)
		if (t->targets[i].init == init && t->targets[i].index == index)
			return 1;
	return 0;
}

/* Reads a resource quantity that is a whole number ("8" or 8); -1 otherwise. */
static long whole_quantity(const cJSON *q)
{
	long v;

	if (cJSON_IsString(q) && parse_long(q->valuestring, 0, 1 << 20, &v) == 0)
		return v;
	if (cJSON_IsNumber(q) && q->valuedouble >= 0 && q->valuedouble <= (1 << 20) &&
	    q->valuedouble == (double)(long)q->valuedouble)
		return (long)q->valuedouble;
	return -1;
}

const char *topology_target_array(const struct topology_target *tg)
{
	return tg->init ? "initContainers" : "containers";
}

const cJSON *topology_target_container(const cJSON *pod_spec, const struct topology_target *tg)
{
	return cJSON_GetArrayItem(
	    cJSON_GetObjectItemCaseSensitive(pod_spec, topology_target_array(tg)), tg->index);
}

static long max_gpu_limit(const struct topology *t, const cJSON *pod_spec, const struct config *cfg)
{
	long best = 0;
	int i, g;

	for (i = 0; i < t->n_targets; i++) {
		const cJSON *c = topology_target_container(pod_spec, &t->targets[i]);
		const cJSON *res = cJSON_GetObjectItemCaseSensitive(c, "resources");
		const cJSON *lim = cJSON_GetObjectItemCaseSensitive(res, "limits");

		for (g = 0; g < cfg->n_gpu_resources; g++) {
			long v = whole_quantity(
			    cJSON_GetObjectItemCaseSensitive(lim, cfg->gpu_resources[g]));
			if (v > best)
				best = v;
		}
	}
	return best;
}

static enum topology_status resolve_targets(const cJSON *pod_spec, const cJSON *anns,
                                            const struct config *cfg, struct topology *t, char *err,
                                            size_t errlen)
{
	const cJSON *ctrs = cJSON_GetObjectItemCaseSensitive(pod_spec, "containers");
	const cJSON *inits = cJSON_GetObjectItemCaseSensitive(pod_spec, "initContainers");
	int nc = cJSON_IsArray(ctrs) ? cJSON_GetArraySize(ctrs) : 0;
	int ni = cJSON_IsArray(inits) ? cJSON_GetArraySize(inits) : 0;
	const char *list = map_get(anns, ANN_CONTAINERS);
	enum topology_status rc = TOPOLOGY_OK;

	if (nc == 0)
		DENY("the pod has no containers");
	if ((long)nc + ni > cfg->max_containers)
		DENY("the pod has %d containers, more than the limit of %ld", nc + ni,
		     cfg->max_containers);
	t->targets = calloc((size_t)(nc + ni), sizeof(*t->targets));
	if (t->targets == NULL)
		return TOPOLOGY_NOMEM;

	if (list == NULL) {
		for (t->n_targets = 0; t->n_targets < nc; t->n_targets++)
			t->targets[t->n_targets].index = t->n_targets;
		return TOPOLOGY_OK;
	}
	for (const char *p = list;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		const char *q = p;
		int idx, init = 0;

		while (n > 0 && (*q == ' ' || *q == '\t'))
			q++, n--;
		while (n > 0 && (q[n - 1] == ' ' || q[n - 1] == '\t'))
			n--;
		if (n == 0)
			DENY("annotation %s: \"%.128s\" has an empty container name",
			     ANN_CONTAINERS, list);
		idx = find_container(ctrs, q, n);
		if (idx < 0) {
			idx = find_container(inits, q, n);
			init = 1;
		}
		if (idx < 0)
			DENY("annotation %s: the pod has no container or init container named "
			     "\"%.*s\"",
			     ANN_CONTAINERS, (int)(n > 63 ? 63 : n), q);
		if (!has_target(t, init, idx)) {
			t->targets[t->n_targets].init = init;
			t->targets[t->n_targets].index = idx;
			t->n_targets++;
		}
		if (comma == NULL)
			break;
		p = comma + 1;
	}
out:
	return rc;
}

/* 1 when the look-up answered for another object of the same name (deleted and re-created). */
static int spec_is_foreign(const struct workload_spec *ws, const struct workload_ref *ref)
{
	return ws->uid[0] != '\0' && ref->uid != NULL && ref->uid[0] != '\0' &&
	       strcmp(ws->uid, ref->uid) != 0;
}

/* 1 when the answer ws would deny the pod at ordinal ord (so a cached one is read again). */
static int spec_would_deny(enum workload_kind kind, const struct workload_spec *ws, long ann_world,
                           long ord)
{
	long start = 0, world = ann_world;

	if (kind == WORKLOAD_JOB) {
		if (!ws->indexed || (ws->completions > 0 && ws->parallelism >= 0 &&
		                     ws->parallelism < ws->completions))
			return 1;
		if (world <= 0)
			world = ws->completions;
	} else {
		if (ws->ordinals_start > 0)
			start = ws->ordinals_start;
		if (world <= 0)
			world = ws->replicas;
	}
	return world < 0 || ord - start < 0 || ord - start >= world;
}

enum topology_status topology_resolve(const cJSON *pod, const char *req_ns,
                                      const struct config *cfg,
                                      const struct workload_lookup *lookup, struct topology *t,
                                      char *err, size_t errlen)
{
	enum topology_status rc = TOPOLOGY_DENY;
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
	const cJSON *anns = cJSON_GetObjectItemCaseSensitive(meta, "annotations");
	const cJSON *labels = cJSON_GetObjectItemCaseSensitive(meta, "labels");
	const cJSON *owner;
	const char *ns, *kind, *owner_name, *pod_name, *v, *subdomain;
	const char *kname;
	long ann_world = -1, ord = -1;
	struct workload_spec ws = {-1, -1, -1, -1, 0, "", 0};
	int r;

	memset(t, 0, sizeof(*t));
	t->rank = -1;
	t->max_restarts = -1;
	err[0] = '\0';

	if (!cJSON_IsObject(spec))
		DENY("the object has no pod spec");
	ns = json_str(meta, "namespace");
	if (ns == NULL || ns[0] == '\0')
		ns = req_ns;
	if (!dns_label_valid(ns))
		DENY("the request has no valid namespace");
	strcpy(t->ns, ns);
	pod_name = json_str(meta, "name");
	if (pod_name == NULL || pod_name[0] == '\0')
		pod_name = json_str(meta, "generateName"); /* Job and ReplicaSet pods at CREATE */

	owner = controller_owner(meta);
	kind = json_str(owner, "kind");
	owner_name = json_str(owner, "name");
	if (kind != NULL && strcmp(kind, "StatefulSet") == 0)
		t->kind = WORKLOAD_STATEFULSET;
	else if (kind != NULL && strcmp(kind, "Job") == 0)
		t->kind = WORKLOAD_JOB;
	if (t->kind == WORKLOAD_NONE)
		DENY("pod %.64s is controlled by %.64s%s%.128s; distenv supports only pods of a "
		     "StatefulSet or of an Indexed Job (completionMode: Indexed): remove the "
		     "distenv.dev/inject label from other workloads",
		     pod_name && *pod_name ? pod_name : "(unnamed)", kind ? kind : "nothing",
		     owner_name ? " " : "", owner_name ? owner_name : "");
	kname = workload_kind_name(t->kind);
	if (owner_name == NULL || !dns_subdomain_valid(owner_name))
		DENY("the pod's %s owner reference has no valid name", kname);
	strcpy(t->workload, owner_name);

	/* Annotations first: a bad value is the user's to fix, whatever the API says. */
	if (ann_long(anns, ANN_WORLD_SIZE, 1, cfg->max_world_size, "a world size", &ann_world, err,
	             errlen) < 0)
		goto out;
	t->port = cfg->default_port;
	if (ann_long(anns, ANN_PORT, 1, 65535, "a port number", &t->port, err, errlen) < 0)
		goto out;
	t->frameworks = cfg->default_frameworks;
	if ((v = map_get(anns, ANN_FRAMEWORKS)) != NULL) {
		if (config_parse_frameworks(v, &t->frameworks) != 0)
			DENY(
			    "annotation %s: \"%.128s\" is not a comma list of pytorch, tensorflow, "
			    "jax",
			    ANN_FRAMEWORKS, v);
		t->frameworks_asked = t->frameworks;
	}
	if ((v = map_get(anns, ANN_ELASTIC)) != NULL) {
		if (parse_elastic(v, cfg->max_world_size, &t->elastic_min, &t->elastic_max) != 0)
			DENY("annotation %s: \"%.64s\" is not MIN:MAX with whole numbers between 1 "
			     "and %ld",
			     ANN_ELASTIC, v, cfg->max_world_size);
		if (t->elastic_min > t->elastic_max)
			DENY("annotation %s: \"%.64s\" has MIN greater than MAX", ANN_ELASTIC, v);
	}
	if (ann_long(anns, ANN_MAX_RESTARTS, 0, 1000000, "a restart count", &t->max_restarts, err,
	             errlen) < 0)
		goto out;
	if ((v = map_get(anns, ANN_SERVICE)) != NULL && !dns_label_valid(v))
		DENY("annotation %s: \"%.64s\" is not a valid Service name", ANN_SERVICE, v);

	/* The pod's index within its workload. */
	if (t->kind == WORKLOAD_STATEFULSET) {
		v = map_get(labels, LABEL_POD_INDEX);
		if (v != NULL) {
			if (parse_long(v, 0, INT_MAX, &ord) != 0)
				DENY("label %s: \"%.32s\" is not an ordinal", LABEL_POD_INDEX, v);
		} else if (name_ordinal(pod_name, owner_name, &ord) != 0) {
			DENY("cannot tell the ordinal of pod %.64s of StatefulSet %s/%s: no %s "
			     "label "
			     "and the name does not end in -N",
			     pod_name ? pod_name : "(unnamed)", ns, owner_name, LABEL_POD_INDEX);
		}
	} else {
		v = map_get(anns, ANN_JOB_INDEX);
		if (v == NULL)
			v = map_get(labels, ANN_JOB_INDEX);
		if (v == NULL)
			DENY("pod of Job %s/%s has no completion index: distenv supports only "
			     "pods of a StatefulSet or of an Indexed Job (set "
			     "spec.completionMode: Indexed)",
			     ns, owner_name);
		if (parse_long(v, 0, INT_MAX, &ord) != 0)
			DENY("annotation %s: \"%.32s\" is not a completion index", ANN_JOB_INDEX,
			     v);
	}

	if (lookup != NULL && lookup->get != NULL) {
		struct workload_ref ref = {t->kind, ns, owner_name, json_str(owner, "uid")};
		char lerr[256];
		int fresh, failed = 0;

		lerr[0] = '\0';
		/*
		 * A cached answer that would deny the pod, or that belongs to another
		 * object of the same name, is read again before it is believed.
		 */
		for (fresh = 0; fresh < 2; fresh++) {
			if (lookup->get(lookup->ctx, &ref, fresh, &ws, lerr, sizeof(lerr)) != 0) {
				failed = 1;
				break;
			}
			if (!ws.cached || (!spec_is_foreign(&ws, &ref) &&
			                   !spec_would_deny(t->kind, &ws, ann_world, ord)))
				break;
		}
		if (failed)
			DENY("cannot read %s %s/%s from the Kubernetes API (%s), so %s; retry, "
			     "or check the webhook's access to the API",
			     kname, ns, owner_name, lerr[0] ? lerr : "look-up failed",
			     ann_world <= 0 ? "the world size is not known"
			     : t->kind == WORKLOAD_STATEFULSET
			         ? "the start ordinal is not known"
			         : "its completion mode and parallelism cannot be checked");
		if (spec_is_foreign(&ws, &ref))
			DENY("%s %s/%s in the API has uid %.63s, not the uid %.63s the pod names "
			     "as its "
			     "owner: the workload was deleted (and perhaps created again); the "
			     "controller of the new one creates new pods",
			     kname, ns, owner_name, ws.uid, ref.uid);
		if (t->kind == WORKLOAD_JOB) {
			if (!ws.indexed)
				DENY("Job %s/%s is not an Indexed Job: distenv supports only pods "
				     "of a StatefulSet or of an Indexed Job (set "
				     "spec.completionMode: Indexed)",
				     ns, owner_name);
			if (ws.completions > 0 && ws.parallelism >= 0 &&
			    ws.parallelism < ws.completions)
				DENY("Job %s/%s has parallelism %ld below completions %ld, so not "
				     "all "
				     "ranks can run at once: set parallelism equal to completions",
				     ns, owner_name, ws.parallelism, ws.completions);
		} else if (ws.ordinals_start > 0) {
			t->start = ws.ordinals_start;
		}
	}

	if (ann_world > 0)
		t->world_size = ann_world;
	else if (t->kind == WORKLOAD_STATEFULSET && ws.replicas >= 0)
		t->world_size = ws.replicas;
	else if (t->kind == WORKLOAD_JOB && ws.completions >= 0)
		t->world_size = ws.completions;
	else
		DENY("the world size of %s %s/%s is not known: set the annotation %s%s", kname, ns,
		     owner_name, ANN_WORLD_SIZE,
		     lookup ? "" : " (look-ups of the workload are turned off)");
	if (t->world_size > cfg->max_world_size)
		DENY("%s %s/%s has a world size of %ld, above the limit of %ld", kname, ns,
		     owner_name, t->world_size, cfg->max_world_size);

	if (t->elastic_min > t->world_size)
		DENY("annotation %s: MIN %ld is above the world size %ld of %s %s/%s, so torchrun "
		     "would wait for nodes that never exist: lower MIN or scale the workload",
		     ANN_ELASTIC, t->elastic_min, t->world_size, kname, ns, owner_name);
	t->rank = ord - t->start;
	if (t->rank < 0)
		DENY("pod ordinal %ld is below the start ordinal %ld of StatefulSet %s/%s", ord,
		     t->start, ns, owner_name);
	if (t->rank >= t->world_size)
		DENY("rank %ld of %s %s/%s is not below the world size %ld: scale the workload "
		     "and %s together",
		     t->rank, kname, ns, owner_name, t->world_size, ANN_WORLD_SIZE);

	subdomain = json_str(spec, "subdomain");
	if (subdomain != NULL && subdomain[0] != '\0') {
		if (!dns_label_valid(subdomain))
			DENY("spec.subdomain \"%.64s\" is not a valid Service name", subdomain);
		strcpy(t->service, subdomain);
	} else if ((v = map_get(anns, ANN_SERVICE)) != NULL) {
		strcpy(t->service, v);
		t->set_subdomain = 1;
	} else if (t->kind == WORKLOAD_STATEFULSET) {
		/* The StatefulSet controller sets spec.subdomain to spec.serviceName. */
		DENY(
		    "pod of StatefulSet %s/%s has no spec.subdomain because the StatefulSet has no "
		    "spec.serviceName: set spec.serviceName to a headless Service that selects its "
		    "pods",
		    ns, owner_name);
	} else {
		DENY("pod of %s %s/%s has no spec.subdomain: point spec.subdomain (the Job's pod "
		     "template) at a headless Service, or set the annotation %s",
		     kname, ns, owner_name, ANN_SERVICE);
	}
	if (bounded_printf(t->domain, sizeof(t->domain), ".%s.%s.svc.%s", t->service, ns,
	                   cfg->cluster_domain) != 0)
		DENY("the Service address of %s %s/%s is too long", kname, ns, owner_name);
	{
		char host[320];
		if (topology_hostname(t, t->world_size - 1, host, sizeof(host)) != 0 ||
		    !dns_label_valid(host))
			DENY("%s name %s with ordinal %ld is not a valid DNS hostname", kname,
			     owner_name, t->start + t->world_size - 1);
	}

	r = resolve_targets(spec, anns, cfg, t, err, errlen);
	if (r != TOPOLOGY_OK) {
		rc = r;
		goto out;
	}

	if ((v = map_get(anns, ANN_NPROC)) != NULL) {
		long n;
		if (strcmp(v, "auto") == 0 || strcmp(v, "gpu") == 0 || strcmp(v, "cpu") == 0)
			strcpy(t->nproc, v);
		else if (parse_long(v, 1, 4096, &n) == 0)
			snprintf(t->nproc, sizeof(t->nproc), "%ld", n);
		else
			DENY(
			    "annotation %s: \"%.32s\" is not a whole number between 1 and 4096 (or "
			    "auto, gpu, cpu)",
			    ANN_NPROC, v);
	} else {
		long g = max_gpu_limit(t, spec, cfg);
		snprintf(t->nproc, sizeof(t->nproc), "%ld", g > 0 ? g : 1);
	}
	rc = TOPOLOGY_OK;
out:
	if (rc != TOPOLOGY_OK) {
		free(t->targets);
		t->targets = NULL;
		t->n_targets = 0;
	}
	return rc;
}

void topology_free(struct topology *t)
{
	if (t == NULL)
		return;
	free(t->targets);
	t->targets = NULL;
	t->n_targets = 0;
}

int topology_hostname(const struct topology *t, long r, char *out, size_t outlen)
{
	return bounded_printf(out, outlen, "%s-%ld", t->workload, t->start + r);
}
