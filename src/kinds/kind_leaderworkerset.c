/*
 * The LeaderWorkerSet (leaderworkerset.x-k8s.io): one world per group, the
 * leader rank 0 and worker i rank i, hosts <lws>-<g> and <lws>-<g>-<i>, all
 * read from what its controllers write on the pods (nothing is looked up).
 * Everything distenv knows of the kind. Pure.
 */
#include "kinds.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "json.h"

/* What the LeaderWorkerSet controllers write on their pods. */
#define LWS_NAME         "leaderworkerset.sigs.k8s.io/name"
#define LWS_GROUP_INDEX  "leaderworkerset.sigs.k8s.io/group-index"
#define LWS_WORKER_INDEX "leaderworkerset.sigs.k8s.io/worker-index"
#define LWS_SIZE         "leaderworkerset.sigs.k8s.io/size"
#define LWS_LEADER_NAME  "leaderworkerset.sigs.k8s.io/leader-name"
#define LWS_SUBDOMAIN    "leaderworkerset.sigs.k8s.io/subdomainPolicy"
/* pkg/utils/accelerators/tpu.go, LeaderRequestsTPUsAnnotationKey */
#define LWS_LEADER_TPUS "leaderworkerset.sigs.k8s.io/leader-requests-tpus"
/*
 * api/leaderworkerset/v1/leaderworkerset_types.go, SubGroupSizeAnnotationKey:
 * every leader and worker of a LeaderWorkerSet with
 * leaderWorkerTemplate.subGroupPolicy.subGroupSize
 * (leaderworkerset_controller.go and pod_controller.go, podAnnotations)
 */
#define LWS_SUBGROUP_SIZE "leaderworkerset.sigs.k8s.io/subgroup-size"

/* The subgroup size the controllers annotate every pod with into out; 0: none. */
static int subgroup_size(const cJSON *lwt, char *out, size_t len)
{
	const cJSON *n = json_get(json_get(lwt, "subGroupPolicy"), "subGroupSize");

	out[0] = '\0';
	if (!cJSON_IsNumber(n))
		return 0;
	snprintf(out, len, "%.0f", n->valuedouble);
	return 1;
}

/* Why a LeaderWorkerSet keyed by hashes cannot be read, and what to do. */
#define LWS_HASH_HINT                                                                              \
	"a LeaderWorkerSet with groupIdentity: Hash, whose groups have no index and whose "        \
	"leaders "                                                                                 \
	"a Deployment names; distenv reads groupIdentity: Ordinal (<lws>-<group>[-<worker>])"

static enum topology_status place_lws(struct resolve *rs)
{
	struct topology *t = rs->t;
	const char *size = json_map_str(rs->anns, LWS_SIZE), *policy, *gi, *leader;
	int worker = json_map_str(rs->anns, LWS_LEADER_NAME) != NULL, have;
	long g = -1, w = -1, world;
	char want_owner[320];
	enum topology_status rc;

	if (size == NULL || parse_long(size, 1, rs->cfg->max_world_size, &world) != 0)
		return resolve_deny(
		    rs, DENY_NONE,
		    "pod of LeaderWorkerSet %s/%s has no valid annotation %s (a group size "
		    "between 1 and %ld)",
		    rs->ns, t->workload, LWS_SIZE, rs->cfg->max_world_size);
	/*
	 * The group index: the LWS webhook's label, else the leader's ordinal or its
	 * set's name. A group keyed by a hash (groupIdentity: Hash) has no index, and
	 * its pods no names distenv can derive.
	 */
	gi = resolve_mark(rs, LWS_GROUP_INDEX);
	if (gi != NULL && gi[strspn(gi, "0123456789")] != '\0')
		return resolve_deny(
		    rs, DENY_NONE,
		    "pod %.64s of LeaderWorkerSet %s/%s has group %.64s, not a group index: "
		    "%s",
		    resolve_pod_name(rs), rs->ns, t->workload, gi, LWS_HASH_HINT);
	if ((rc = resolve_mark_long(rs, LWS_GROUP_INDEX, &g, &have)) != TOPOLOGY_OK)
		return rc;
	if (!have && !worker)
		kind_name_ordinal(rs->pod_name, t->workload, &g);
	if (!have && worker)
		kind_name_ordinal(rs->owner_name, t->workload, &g);
	if (g < 0)
		return resolve_deny(rs, DENY_NONE,
		                    "cannot tell the group of pod %.64s of LeaderWorkerSet %s/%s",
		                    resolve_pod_name(rs), rs->ns, t->workload);
	/* The worker index: 0 for the leader; a worker's ordinal in its group's StatefulSet. */
	if (worker) {
		const char *v = json_map_str(rs->labels, LABEL_POD_INDEX);
		if (v == NULL || parse_long(v, 1, INT_MAX, &w) != 0) {
			if ((rc = resolve_mark_long(rs, LWS_WORKER_INDEX, &w, &have)) !=
			    TOPOLOGY_OK)
				return rc;
			if (!have)
				kind_name_ordinal(rs->pod_name, rs->owner_name, &w);
		}
		if (w < 1)
			return resolve_deny(
			    rs, DENY_NONE,
			    "cannot tell the worker index of pod %.64s of LeaderWorkerSet %s/%s",
			    resolve_pod_name(rs), rs->ns, t->workload);
		snprintf(want_owner, sizeof(want_owner), "%s-%ld", t->workload, g);
	} else {
		w = 0;
		snprintf(want_owner, sizeof(want_owner), "%s", t->workload);
	}
	if (strcmp(want_owner, rs->owner_name) != 0)
		return resolve_deny(
		    rs, DENY_NONE,
		    "pod of StatefulSet %s/%s carries LeaderWorkerSet labels for StatefulSet "
		    "%.64s: distenv does not trust labels its owner contradicts",
		    rs->ns, rs->owner_name, want_owner);
	/*
	 * A worker says where its leader is (the controller's leader-name
	 * annotation): rank 0's host. It must be the leader distenv derives, the
	 * name every worker of the group is given.
	 */
	leader = json_map_str(rs->anns, LWS_LEADER_NAME);
	if (worker && (leader == NULL || strcmp(leader, want_owner) != 0))
		return resolve_deny(
		    rs, DENY_NONE,
		    "worker pod %.64s of LeaderWorkerSet %s/%s says its leader is %.64s "
		    "(annotation %s), not %s, the leader of group %ld as distenv names it: "
		    "every worker would meet at a leader that does not exist",
		    resolve_pod_name(rs), rs->ns, t->workload, leader ? leader : "(none)",
		    LWS_LEADER_NAME, want_owner, g);
	if ((rc = resolve_fixed_world(rs, world, "one group")) != TOPOLOGY_OK)
		return rc;
	t->group = g;
	t->rank = w;
	t->world_size = world;
	/* UniquePerReplica: each group's Service is named after its leader. */
	policy = json_map_str(rs->anns, LWS_SUBDOMAIN);
	if (policy != NULL && strcmp(policy, "UniquePerReplica") == 0 &&
	    bounded_printf(t->service, sizeof(t->service), "%s-%ld", t->workload, g) != 0)
		return resolve_deny(
		    rs, DENY_LIMIT,
		    "the Service name of group %ld of LeaderWorkerSet %s/%s is too long", g, rs->ns,
		    t->workload);
	if (bounded_printf(t->rdzv_id, sizeof(t->rdzv_id), "%s-%s-%ld", t->ns, t->workload, g) != 0)
		return resolve_deny(rs, DENY_LIMIT,
		                    "the rendezvous id of LeaderWorkerSet %s/%s is too long",
		                    rs->ns, t->workload);
	return TOPOLOGY_OK;
}

static int host_lws(const struct topology *t, long r, char *out, size_t outlen)
{
	return kind_host_name(out, outlen, t->workload, NULL, t->group, r == 0 ? -1 : r);
}

/* The workers: "<lws>-<group>-" and r on. The leader's name has no number of its own. */
static long run_lws(const struct topology *t, long r, char *out, size_t outlen, size_t *plen,
                    long *first)
{
	if (r == 0)
		return 0;
	return kind_host_run(out, outlen, t->workload, NULL, t->group, r, t->world_size - r, plen,
	                     first);
}

static int requests_tpus(const cJSON *tmpl);

static void view_lws(const cJSON *spec, const struct config *cfg, struct view *w,
                     struct validation *v)
{
	const cJSON *lwt = json_get(spec, "leaderWorkerTemplate");
	long groups = json_long(spec, "replicas", INT_MAX, 1);
	char sub[32], size[32];

	/* the leader is rank 0; without a leaderTemplate it is made from the workerTemplate */
	w->rank0 = cJSON_IsObject(json_get(lwt, "leaderTemplate"))
	               ? json_get(lwt, "leaderTemplate")
	               : json_get(lwt, "workerTemplate");
	w->count = json_long(lwt, "size", INT_MAX, 1);
	w->t.kind = &kind_leaderworkerset;
	w->t.group = groups > 0 ? groups - 1 : 0; /* the longest names are the last group's */
	w->service = NULL;                        /* the LeaderWorkerSet controller makes it */
	snprintf(w->t.service, sizeof(w->t.service), "%s", w->name);
	/*
	 * What the controllers annotate the pods with, which a framework may refuse:
	 * every pod's group size and subgroup size, and the workers'
	 * leader-requests-tpus when the leader requests TPUs (AddTPUAnnotations; the
	 * leader, rank 0, is judged with it too: no rule of the leader reads it).
	 */
	snprintf(size, sizeof(size), "%ld", w->count);
	if ((w->pod_anns = cJSON_CreateObject()) == NULL ||
	    cJSON_AddStringToObject(w->pod_anns, LWS_SIZE, size) == NULL ||
	    (subgroup_size(lwt, sub, sizeof(sub)) &&
	     cJSON_AddStringToObject(w->pod_anns, LWS_SUBGROUP_SIZE, sub) == NULL) ||
	    (requests_tpus(w->rank0) &&
	     cJSON_AddStringToObject(w->pod_anns, LWS_LEADER_TPUS, "true") == NULL))
		view_problem(v, "out of memory");
	(void)cfg;
}

/* -- the pods render makes -- */

/* A quantity other than zero ("0", "0m" and the like are zero). */
static int nonzero(const cJSON *q)
{
	const char *v = cJSON_GetStringValue(q);

	if (cJSON_IsNumber(q))
		return q->valuedouble != 0;
	if (v == NULL)
		return 0;
	while (*v == '0' || *v == '.' || *v == '+')
		v++;
	return *v != '\0' && *v != 'm' && *v != 'k' && *v != 'M' && *v != 'G' && *v != 'K';
}

/*
 * Whether a pod template's containers or init containers request
 * google.com/tpu (LWS pkg/utils/accelerators/tpu.go, PodRequestsTPUs: a
 * limit, else a request, that is not zero).
 */
static int requests_tpus(const cJSON *tmpl)
{
	static const char *const arrays[] = {"containers", "initContainers"};
	const cJSON *c;
	int a;

	for (a = 0; a < 2; a++)
		cJSON_ArrayForEach(c, json_get(json_get(tmpl, "spec"), arrays[a]))
		{
			const cJSON *res = json_get(c, "resources");
			const cJSON *lim = json_get(json_get(res, "limits"), "google.com/tpu");
			if (lim != NULL
			        ? nonzero(lim)
			        : nonzero(json_get(json_get(res, "requests"), "google.com/tpu")))
				return 1;
		}
	return 0;
}

/*
 * A LeaderWorkerSet: per group g the leader pod <lws>-<g> of StatefulSet <lws>
 * and workers <lws>-<g>-<i> of StatefulSet <lws>-<g> (ordinals from 1), as
 * leaderworkerset_controller.go and pod_controller.go build them.
 */
static int make_pods_lws(const cJSON *doc, const char *name, const char *ns, struct pod_sink *s)
{
	const cJSON *spec = json_get(doc, "spec");
	const cJSON *lwt = json_get(spec, "leaderWorkerTemplate");
	const cJSON *wt = json_get(lwt, "workerTemplate");
	const cJSON *lt = json_get(lwt, "leaderTemplate");
	const char *policy = json_str(json_get(spec, "networkConfig"), "subdomainPolicy");
	int unique = policy != NULL && strcmp(policy, "UniquePerReplica") == 0, leader_tpus;
	/* counts are int32 in the API: one past 10^9 is too many pods to render, not 1 */
	long groups = json_long(spec, "replicas", INT_MAX, 1),
	     size = json_long(lwt, "size", INT_MAX, 1), g, i;
	char sz[32], leader[320], gs[32], which[352], sub[32];
	int subgroups = subgroup_size(lwt, sub, sizeof(sub));

	if (!cJSON_IsObject(wt)) {
		snprintf(s->err, s->errlen,
		         "LeaderWorkerSet %s has no leaderWorkerTemplate.workerTemplate", name);
		return -1;
	}
	if (!cJSON_IsObject(lt))
		lt = wt;
	/* the controller's AddTPUAnnotations: workers learn that their leader is a TPU host */
	leader_tpus = requests_tpus(lt);
	snprintf(sz, sizeof(sz), "%ld", size);
	for (g = 0; g < groups; g++) {
		cJSON *pod = kind_statefulset_pod(lt, name, ns, name, g);
		snprintf(leader, sizeof(leader), "%s-%ld", name, g);
		snprintf(gs, sizeof(gs), "%ld", g);
		if (pod != NULL &&
		    (kind_pod_mark(pod, LWS_NAME, name, 1, 0) ||
		     kind_pod_mark(pod, LWS_WORKER_INDEX, "0", 1, 0) ||
		     kind_pod_mark(pod, LWS_SIZE, sz, 0, 1) ||
		     (unique && kind_pod_mark(pod, LWS_SUBDOMAIN, "UniquePerReplica", 0, 1)) ||
		     (subgroups && kind_pod_mark(pod, LWS_SUBGROUP_SIZE, sub, 0, 1)))) {
			cJSON_Delete(pod);
			pod = NULL;
		}
		if (s->emit(s, pod, NULL, leader) != 0)
			return -1;
		for (i = 1; i < size; i++) {
			pod = kind_statefulset_pod(wt, leader, ns, unique ? leader : name, i);
			if (pod != NULL &&
			    (kind_pod_mark(pod, LWS_NAME, name, 1, 0) ||
			     kind_pod_mark(pod, LWS_GROUP_INDEX, gs, 1, 0) ||
			     kind_pod_mark(pod, LWS_SIZE, sz, 0, 1) ||
			     kind_pod_mark(pod, LWS_LEADER_NAME, leader, 0, 1) ||
			     (leader_tpus && kind_pod_mark(pod, LWS_LEADER_TPUS, "true", 0, 1)) ||
			     (subgroups && kind_pod_mark(pod, LWS_SUBGROUP_SIZE, sub, 0, 1)))) {
				cJSON_Delete(pod);
				pod = NULL;
			}
			snprintf(which, sizeof(which), "%s-%ld", leader, i);
			if (s->emit(s, pod, NULL, which) != 0)
				return -1;
		}
	}
	return 0;
}

/* Never fetched: its pods say all distenv needs. */
/* -- what doctor reads (struct kind_doctor) -- */

/* Its worker template, a group's size, and its replicas: the groups. */
static void doctor_want_lws(const cJSON *spec, struct kind_doctor_want *out)
{
	out->tmpl = json_get(json_get(spec, "leaderWorkerTemplate"), "workerTemplate");
	out->world = json_long(json_get(spec, "leaderWorkerTemplate"), "size", 1L << 20, 1);
	out->groups = json_long(spec, "replicas", 1L << 20, 1);
}

/* The group and worker index the LeaderWorkerSet controller labels its pods with. */
static void doctor_place_lws(const cJSON *labels, const cJSON *anns, long start, long *rank,
                             long *group)
{
	(void)anns;
	(void)start;
	*group = kind_map_long(labels, LWS_GROUP_INDEX);
	if (*rank < 0)
		*rank = kind_map_long(labels, LWS_WORKER_INDEX);
}

static void doctor_name_lws(const char *name, long start, long g, long r, char *out, size_t len)
{
	(void)start;
	snprintf(out, len, r == 0 ? "%s-%ld" : "%s-%ld-%ld", name, g, r);
}

static const char *doctor_service_lws(const cJSON *spec, const char *name)
{
	(void)spec;
	return name;
}

static const struct kind_doctor doctor_lws = {
    .words = (const char *const[]){"lws", "leaderworkerset", "leaderworkersets",
                                   "leaderworkerset.leaderworkerset.x-k8s.io",
                                   "leaderworkersets.leaderworkerset.x-k8s.io", NULL},
    .example = "lws/vllm",
    .want = doctor_want_lws,
    .pod_place = doctor_place_lws,
    .rank_name = doctor_name_lws,
    .service = doctor_service_lws,
    .worlds_per_group = 1,
};

const struct kind kind_leaderworkerset = {
    .doctor = &doctor_lws,
    .own_env_prefix = "TPU_",
    .api = {"LeaderWorkerSet", "leaderworkerset.x-k8s.io", "leaderworkerset.x-k8s.io/v1", NULL,
            NULL},
    .owner_kind = "StatefulSet",
    .owner_group = "apps",
    .mark = LWS_NAME,
    .name_from = LWS_NAME,
    .fixed_world = 1,
    .count_noun = "pods of a group",
    /* its rolling update replaces each group, leader and workers, at the new size */
    .restart = NULL,
    .no_subdomain_hint = " because its StatefulSet has no spec.serviceName: set "
                         "spec.serviceName to a headless Service that selects its pods",
    .foreign_owner_hint = ": " LWS_HASH_HINT,
    .place = place_lws,
    /* Without a leaderTemplate the leader is made from the workerTemplate. */
    .templates =
        (const struct kind_template[]){
            {"spec.leaderWorkerTemplate.leaderTemplate", "leader template", 1},
            {"spec.leaderWorkerTemplate.workerTemplate", "worker template", -1},
            {NULL, NULL, 0}},
    .hostname = host_lws,
    .host_run = run_lws,
    .view = view_lws,
    .make_pods = make_pods_lws,
    .plural = "leaderworkersets",
    .crd = 1,
    .supported = "a LeaderWorkerSet (leaderworkerset.x-k8s.io)",
    .label_prefixes = (const char *const[]){"leaderworkerset.sigs.k8s.io/", NULL},
};
