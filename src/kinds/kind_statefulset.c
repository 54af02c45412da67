/*
 * The StatefulSet: rank = ordinal - .spec.ordinals.start (read from the API),
 * host <sts>-<start+r>, the Service its serviceName. Everything distenv knows
 * of the kind; pure apart from the look-up the resolution passes in.
 */
#include "kinds.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "json.h"

/* -- placing a pod -- */

static int sts_would_deny(const struct resolve *rs, const struct workload_spec *ws)
{
	long start = ws->ordinals_start > 0 ? ws->ordinals_start : 0;
	long world = rs->ann_world > 0 ? rs->ann_world : ws->replicas;

	return world < 0 || rs->t->rank - start < 0 || rs->t->rank - start >= world;
}

static enum topology_status place_statefulset(struct resolve *rs)
{
	struct topology *t = rs->t;
	struct workload_spec ws;
	const char *v = json_map_str(rs->labels, LABEL_POD_INDEX);
	long ord = -1;
	enum topology_status rc;

	if (v != NULL) {
		if (parse_long(v, 0, INT_MAX, &ord) != 0)
			return resolve_deny(rs, DENY_NONE, "label %s: \"%.32s\" is not an ordinal",
			                    LABEL_POD_INDEX, v);
	} else if (kind_name_ordinal(rs->pod_name, rs->owner_name, &ord) != 0) {
		return resolve_deny(
		    rs, DENY_NONE,
		    "cannot tell the ordinal of pod %.64s of StatefulSet %s/%s: no %s label and "
		    "the name does not end in -N",
		    resolve_pod_name(rs), rs->ns, rs->owner_name, LABEL_POD_INDEX);
	}
	workload_spec_init(&ws);
	t->rank = ord; /* the ordinal until the start is known */
	if (rs->lookup != NULL) {
		struct workload_ref ref = {&kind_statefulset, rs->ns, rs->owner_name,
		                           json_str(rs->owner, "uid")};
		rc = resolve_fetch(rs, &ref, sts_would_deny, &ws,
		                   rs->ann_world <= 0 ? "the world size is not known"
		                                      : "the start ordinal is not known");
		if (rc != TOPOLOGY_OK)
			return rc;
		if (ws.ordinals_start > 0)
			t->start = ws.ordinals_start;
	}
	if ((rc = resolve_set_world(rs, ws.replicas)) != TOPOLOGY_OK)
		return rc;
	t->rank = ord - t->start;
	if (t->rank < 0)
		return resolve_deny(
		    rs, DENY_NONE,
		    "pod ordinal %ld is below the start ordinal %ld of StatefulSet %s/%s", ord,
		    t->start, rs->ns, rs->owner_name);
	return TOPOLOGY_OK;
}

static int host_statefulset(const struct topology *t, long r, char *out, size_t outlen)
{
	return kind_host_name(out, outlen, t->workload, NULL, t->start + r, -1);
}

/* "<sts>-" and start + r on: every rank to the world's end. */
static long run_statefulset(const struct topology *t, long r, char *out, size_t outlen,
                            size_t *plen, long *first)
{
	return kind_host_run(out, outlen, t->workload, NULL, -1, t->start + r, t->world_size - r,
	                     plen, first);
}

static int parse_statefulset(const char *json, size_t len, struct workload_spec *out, char *err,
                             size_t errlen)
{
	struct workload_spec s;
	const cJSON *spec, *ord;
	cJSON *j;
	int rc = -1;

	workload_spec_init(&s);
	if ((j = workload_parse_object(json, len, "StatefulSet", &s, &spec, err, errlen)) == NULL)
		return -1;
	s.replicas = 1;       /* the API default */
	s.ordinals_start = 0; /* no .spec.ordinals: start at 0 */
	if (workload_get_count(spec, "replicas", "StatefulSet .spec.replicas", &s.replicas, err,
	                       errlen) < 0 ||
	    workload_get_object(spec, "ordinals", "StatefulSet .spec.ordinals", &ord, err, errlen) <
	        0 ||
	    workload_get_count(ord, "start", "StatefulSet .spec.ordinals.start", &s.ordinals_start,
	                       err, errlen) < 0)
		goto out;
	*out = s;
	rc = 0;
out:
	cJSON_Delete(j);
	return rc;
}

/*
 * 1 when a pod template's metadata carries the mark of a kind built on
 * StatefulSets (a LeaderWorkerSet's, on its worker StatefulSets).
 */
static int built_on(const cJSON *meta)
{
	const struct kind *self = &kind_statefulset;
	size_t i;

	for (i = 0; kind_at(i) != NULL; i++) {
		const struct kind *k = kind_at(i);
		if (k != self && k->mark != NULL && strcmp(k->owner_kind, self->owner_kind) == 0 &&
		    (json_str(json_get(meta, "labels"), k->mark) != NULL ||
		     json_str(json_get(meta, "annotations"), k->mark) != NULL))
			return 1;
	}
	return 0;
}

/*
 * A StatefulSet whose ordinals start above 0 needs the look-ups: its pods do not
 * carry the start, and without it rank 0 would be <sts>-0, a pod that never
 * exists. A LeaderWorkerSet's worker StatefulSets (ordinals from 1) are not
 * concerned: their pods' ranks come from the LeaderWorkerSet's own labels.
 */
static void check_start(const struct view *w, const struct config *cfg, struct validation *v)
{
	const cJSON *meta = json_get(w->tmpl[0], "metadata");

	if (w->t.kind == NULL || w->t.kind != &kind_statefulset || w->t.start <= 0 ||
	    cfg->lookups || built_on(meta))
		return;
	view_problem(
	    v,
	    "StatefulSet %s starts its ordinals at %ld (spec.ordinals.start), which its pods "
	    "do not carry, and look-ups are off, so rank 0 would be %.63s-0, a pod that never "
	    "exists: turn look-ups on (lookups.enabled, no --no-lookups), or start at 0",
	    w->name, w->t.start, w->name);
}

static void view_statefulset(const cJSON *spec, const struct config *cfg, struct view *w,
                             struct validation *v)
{
	const char *policy = json_str(spec, "podManagementPolicy");

	w->rank0 = json_get(spec, "template");
	w->count = json_long(spec, "replicas", INT_MAX, 1);
	w->t.kind = &kind_statefulset;
	w->t.start = json_long(json_get(spec, "ordinals"), "start", INT_MAX, 0);
	w->service = json_str(spec, "serviceName");
	if (w->n_tmpl == 0)
		return;
	/* kubernetes#64023: the controller-revision-hash label of its pods passes 63 characters */
	if (strlen(w->name) > 52)
		view_problem(
		    v,
		    "StatefulSet name %s is %zu characters; above 52 its pods cannot be created: "
		    "shorten it",
		    w->name, strlen(w->name));
	if (w->service == NULL || w->service[0] == '\0')
		view_problem(
		    v,
		    "StatefulSet %s has no spec.serviceName, so its pods have no DNS names: set it "
		    "to a headless Service that selects them",
		    w->name);
	if (policy == NULL || strcmp(policy, "Parallel") != 0)
		view_warn(
		    v, "podManagementPolicy OrderedReady: pod N+1 waits for pod N to be Ready; use "
		       "Parallel");
	check_start(w, cfg, v);
	/* stateful_set_utils.go updateIdentity reads a pod's ordinal back from its name
	 * with a 32-bit parse: past 2147483647 it is -1, and the pod is named <sts>--1 */
	if (w->t.start + w->count - 1 > INT32_MAX)
		view_problem(v,
		             "StatefulSet %s's ordinals run from %ld to %ld (spec.ordinals.start "
		             "+ spec.replicas - 1), past %ld, the largest the StatefulSet "
		             "controller reads back from a pod's name: it names the pod of "
		             "ordinal %ld %.63s--1 and the world never forms: lower "
		             "spec.ordinals.start to at most %ld",
		             w->name, w->t.start, w->t.start + w->count - 1, (long)INT32_MAX,
		             (long)INT32_MAX + 1, w->name, (long)INT32_MAX - w->count + 1);
}

/* -- the pods render makes (kind_statefulset_pod: kinds/kind.c) -- */

static int make_pods_statefulset(const cJSON *obj, const char *name, const char *ns,
                                 struct pod_sink *s)
{
	const cJSON *spec = json_get(obj, "spec");
	const cJSON *tmpl = json_get(spec, "template");
	struct workload_spec ws;
	long i, start;
	char which[32];

	workload_spec_init(&ws);
	/* counts are int32 in the API: one past 10^9 is too many pods to render, not 1 */
	ws.replicas = s->world_size > 0 ? s->world_size : json_long(spec, "replicas", INT_MAX, 1);
	/* the start is an int32 too: ordinal 2147483647 is a pod's, not 0's (view_statefulset
	 * refuses the ordinals that pass it) */
	start = json_long(json_get(spec, "ordinals"), "start", INT32_MAX, 0);
	ws.ordinals_start = start;
	for (i = 0; i < ws.replicas; i++) {
		snprintf(which, sizeof(which), "%ld", start + i);
		if (s->emit(s,
		            kind_statefulset_pod(tmpl, name, ns, json_str(spec, "serviceName"),
		                                 start + i),
		            &ws, which) != 0)
			return -1;
	}
	return 0;
}

/* -- what doctor reads (struct kind_doctor) -- */

/* Its template, replicas and first ordinal. */
static void doctor_want_sts(const cJSON *spec, struct kind_doctor_want *out)
{
	out->tmpl = json_get(spec, "template");
	out->world = json_long(spec, "replicas", 1L << 20, 1);
	out->start = json_long(json_get(spec, "ordinals"), "start", 1L << 30, 0);
}

/* The pod's ordinal from the StatefulSet controller's pod-index label, less the start. */
static void doctor_place_sts(const cJSON *labels, const cJSON *anns, long start, long *rank,
                             long *group)
{
	long ord = kind_map_long(labels, LABEL_POD_INDEX);

	(void)anns;
	(void)group;
	if (*rank < 0 && json_map_str(labels, LABEL_POD_INDEX) != NULL && ord >= start)
		*rank = ord - start;
}

static void doctor_name_sts(const char *name, long start, long g, long r, char *out, size_t len)
{
	(void)g;
	snprintf(out, len, "%s-%ld", name, start + r);
}

static const char *doctor_service_sts(const cJSON *spec, const char *name)
{
	(void)name;
	return json_str(spec, "serviceName");
}

static const struct kind_doctor doctor_sts = {
    .words = (const char *const[]){"sts", "statefulset", "statefulsets", "statefulset.apps",
                                   "statefulsets.apps", NULL},
    .example = "sts/ddp",
    .want = doctor_want_sts,
    .pod_place = doctor_place_sts,
    .rank_name = doctor_name_sts,
    .service = doctor_service_sts,
};

const struct kind kind_statefulset = {
    .doctor = &doctor_sts,
    .api = {"StatefulSet", "apps", "apps/v1", "statefulsets", parse_statefulset},
    .owner_kind = "StatefulSet",
    .owner_group = "apps",
    .count_noun = "replicas",
    .restart = "kubectl rollout restart statefulset/%s",
    .no_subdomain_hint = " because the StatefulSet has no spec.serviceName: set "
                         "spec.serviceName to a headless Service that selects its pods",
    .place = place_statefulset,
    /* the StatefulSet controller's (stateful_set_utils.go, newVersionedStatefulSetPod) */
    .pod_labels =
        (const struct kind_label[]){{"controller-revision-hash", KIND_LABEL_UNKNOWN},
                                    {"statefulset.kubernetes.io/pod-name", KIND_LABEL_PER_POD},
                                    {"apps.kubernetes.io/pod-index", KIND_LABEL_PER_POD},
                                    {NULL, KIND_LABEL_UNKNOWN}},
    .index_label = "apps.kubernetes.io/pod-index",
    .templates = (const struct kind_template[]){{"spec.template", NULL, 0}, {NULL, NULL, 0}},
    .hostname = host_statefulset,
    .host_run = run_statefulset,
    .view = view_statefulset,
    .make_pods = make_pods_statefulset,
    .needs_spec_template = 1,
    .plural = "statefulsets",
    .supported = "a StatefulSet (apps/v1)",
    .label_prefixes =
        (const char *const[]){"statefulset.kubernetes.io/", "apps.kubernetes.io/", NULL},
};
