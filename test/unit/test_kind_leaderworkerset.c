/*
 * The LeaderWorkerSet kind (src/kinds/kind_leaderworkerset.c) through
 * pod_plan_build: a group's leader and workers, the Service per group, the
 * leader-name check and groupIdentity: Hash refused.
 */
#include "testpods.h"
#include "kind.h"
#include "kinds.h"

static const struct plan_case plan_cases[] = {
    {"lws: group 1's leader is rank 0", LWS_LEADER("1", ""), "ml", &STS4,
     "MASTER_ADDR=lws-1.lws.ml.svc.cluster.local\nRANK=0\nWORLD_SIZE=4\n", NULL},
    {"lws: worker 2 of group 1", LWS_WORKER("1", "2"), "ml", &STS4,
     "MASTER_ADDR=lws-1.lws.ml.svc.cluster.local\nRANK=2\nWORLD_SIZE=4\nTF_CONFIG={\"cluster\":"
     "{\"worker\":[\"lws-1.lws.ml.svc.cluster.local:29500\",\"lws-1-1.lws.ml.svc.cluster.local:"
     "29500\",\"lws-1-2.lws.ml.svc.cluster.local:29500\",\"lws-1-3.lws.ml.svc.cluster.local:"
     "29500\"]},\"task\":{\"type\":\"worker\",\"index\":2}}\n",
     NULL},
    /* the LWS webhook's group-index label comes before the leader's name */
    {"lws: a leader with the group-index label and no name",
     "{'metadata':{'generateName':'lws-','namespace':'ml','labels':{" LABEL
     ",'leaderworkerset.sigs.k8s.io/name':'lws','leaderworkerset.sigs.k8s.io/worker-index':'0',"
     "'leaderworkerset.sigs.k8s.io/group-index':'2'},'annotations':{'leaderworkerset.sigs.k8s.io/"
     "size':'4'},'ownerReferences':[{'apiVersion':'apps/v1','kind':'StatefulSet','name':'lws',"
     "'uid':'u-lws','controller':true}]},'spec':{'hostname':'lws-2','subdomain':'lws'," CTR "}}",
     "ml", NULL, "MASTER_ADDR=lws-2.lws.ml.svc.cluster.local\nRANK=0\nWORLD_SIZE=4\n", NULL},
    {"lws: a leader whose group-index label and name disagree: the label, so refused",
     "{'metadata':{'name':'lws-5','namespace':'ml','labels':{" LABEL
     ",'leaderworkerset.sigs.k8s.io/name':'lws','leaderworkerset.sigs.k8s.io/worker-index':'0',"
     "'leaderworkerset.sigs.k8s.io/group-index':'2'},'annotations':{'leaderworkerset.sigs.k8s.io/"
     "size':'4'},'ownerReferences':[{'apiVersion':'apps/v1','kind':'StatefulSet','name':'lws',"
     "'uid':'u-lws','controller':true}]},'spec':{'hostname':'lws-5','subdomain':'lws'," CTR "}}",
     "ml", NULL, NULL,
     "the pod's own name lws-5 (spec.hostname) is not lws-2, the host distenv derives for rank 0 "
     "of LeaderWorkerSet ml/lws"},
    {"lws: group 0's worker 3, no look-ups", LWS_WORKER("0", "3"), "ml", NULL,
     "MASTER_ADDR=lws-0.lws.ml.svc.cluster.local\nRANK=3\nWORLD_SIZE=4\n", NULL},
    {"lws: UniquePerReplica names the group's Service after its leader",
     LWS_LEADER("1", ",'leaderworkerset.sigs.k8s.io/subdomainPolicy':'UniquePerReplica'"), "ml",
     NULL, "MASTER_ADDR=lws-1.lws-1.ml.svc.cluster.local\nRANK=0\n", NULL},
    {"lws: elastic rendezvous id per group", LWS_LEADER("1", ",'distenv.dev/elastic':'4:4'"), "ml",
     NULL, "PET_RDZV_ENDPOINT=lws-1.lws.ml.svc.cluster.local:29500\nPET_RDZV_ID=ml-lws-1\n", NULL},
};

static const struct denial_case denial_cases[] = {
    {"a LeaderWorkerSet worker whose leader-name is not its group's leader",
     "{'metadata':{'name':'lws-1-2','namespace':'ml','labels':{" LABEL
     ",'leaderworkerset.sigs.k8s.io/name':'lws','leaderworkerset.sigs.k8s.io/group-index':'1',"
     "'apps.kubernetes.io/pod-index':'2'},'annotations':{'leaderworkerset.sigs.k8s.io/size':'4',"
     "'leaderworkerset.sigs.k8s.io/leader-name':'lws-7f3a9c'},'ownerReferences':[{'apiVersion':"
     "'apps/v1','kind':'StatefulSet','name':'lws-1','uid':'u-w','controller':true}]},'spec':{"
     "'hostname':'lws-1-2','subdomain':'lws'," CTR "}}",
     NULL, DENY_IDENTITY,
     "distenv: worker pod lws-1-2 of LeaderWorkerSet ml/lws says its leader is lws-7f3a9c "
     "(annotation leaderworkerset.sigs.k8s.io/leader-name), not lws-1, the leader of "
     "group 1 as distenv names it: every worker would meet at a leader that does not exist"},
    {"a LeaderWorkerSet worker of a group keyed by a hash (groupIdentity: Hash)",
     "{'metadata':{'name':'lws-7f3a9c-1','namespace':'ml','labels':{" LABEL
     ",'leaderworkerset.sigs.k8s.io/name':'lws','leaderworkerset.sigs.k8s.io/group-index':"
     "'9f2ac71b0e6d4c2a8b7e5f1d3c9a0b4e6f8d2c1a','apps.kubernetes.io/pod-index':'1'},"
     "'annotations':{'leaderworkerset.sigs.k8s.io/size':'4','leaderworkerset.sigs.k8s.io/"
     "leader-name':'lws-7f3a9c'},'ownerReferences':[{'apiVersion':'apps/v1','kind':"
     "'StatefulSet','name':'lws-7f3a9c','uid':'u-w','controller':true}]},'spec':{'hostname':"
     "'lws-7f3a9c-1','subdomain':'lws'," CTR "}}",
     NULL, DENY_IDENTITY,
     "distenv: pod lws-7f3a9c-1 of LeaderWorkerSet ml/lws has group "
     "9f2ac71b0e6d4c2a8b7e5f1d3c9a0b4e6f8d2c1a, not a group index: a LeaderWorkerSet with "
     "groupIdentity: Hash, whose groups have no index and whose leaders a Deployment "
     "names; distenv reads groupIdentity: Ordinal (<lws>-<group>[-<worker>])"},
    {"a LeaderWorkerSet leader a ReplicaSet controls (groupIdentity: Hash)",
     "{'metadata':{'name':'lws-7f3a9c','namespace':'ml','labels':{" LABEL
     ",'leaderworkerset.sigs.k8s.io/name':'lws','leaderworkerset.sigs.k8s.io/worker-index':'0',"
     "'leaderworkerset.sigs.k8s.io/group-index':'9f2ac71b0e6d4c2a8b7e5f1d3c9a0b4e6f8d2c1a'},"
     "'annotations':{'leaderworkerset.sigs.k8s.io/size':'4'},'ownerReferences':[{'apiVersion':"
     "'apps/v1','kind':'ReplicaSet','name':'lws-5d8f7b','uid':'u-rs','controller':true}]},"
     "'spec':{'hostname':'lws-7f3a9c','subdomain':'lws'," CTR "}}",
     NULL, DENY_OWNER,
     "distenv: pod lws-7f3a9c carries the marks of LeaderWorkerSet ml/lws but is "
     "controlled by ReplicaSet lws-5d8f7b: a LeaderWorkerSet with groupIdentity: Hash, "
     "whose groups have no index and whose leaders a Deployment names; distenv reads "
     "groupIdentity: Ordinal (<lws>-<group>[-<worker>])"},
};

/*
 * A leader and a worker as the API stores them, read by doctor: the controllers'
 * pods (testpods.h) with the labels LWS's pod webhook adds, group-index on the
 * leader and worker-index (its ordinal) on a worker.
 */
#define LWS_STORED_LEADER(g)                                                                       \
	"{'metadata':{'name':'lws-" g "','namespace':'ml','labels':{" LABEL                        \
	",'leaderworkerset.sigs.k8s.io/name':'lws','leaderworkerset.sigs.k8s.io/"                  \
	"worker-index':'0','leaderworkerset.sigs.k8s.io/group-index':'" g "',"                     \
	"'apps.kubernetes.io/pod-index':'" g                                                       \
	"'},'annotations':{'leaderworkerset.sigs.k8s.io/size':'4'},'ownerReferences':[{"           \
	"'apiVersion':'apps/v1','kind':'StatefulSet','name':'lws','uid':'u-lws','controller':"     \
	"true}]},'spec':{'hostname':'lws-" g "','subdomain':'lws'," CTR "}}"
#define LWS_STORED_WORKER(g, i)                                                                    \
	"{'metadata':{'name':'lws-" g "-" i "','namespace':'ml','labels':{" LABEL                  \
	",'leaderworkerset.sigs.k8s.io/name':'lws','leaderworkerset.sigs.k8s.io/group-index':'" g  \
	"','leaderworkerset.sigs.k8s.io/worker-index':'" i "','apps.kubernetes.io/pod-index':'" i  \
	"'},'annotations':{'leaderworkerset.sigs.k8s.io/size':'4','leaderworkerset.sigs.k8s.io/"   \
	"leader-name':'lws-" g "'},'ownerReferences':[{'apiVersion':'apps/v1','kind':"             \
	"'StatefulSet','name':'lws-" g "','uid':'u-w','controller':true}]},'spec':{'hostname':"    \
	"'lws-" g "-" i "','subdomain':'lws'," CTR "}}"

/*
 * What doctor reads of a pod's place (kind_leaderworkerset.doctor->pod_place, kind.h): the
 * rank from what the controller writes on the pod only when distenv's own
 * annotation did not say one (rank -1 in); a rank it said, 0 included, is kept.
 */
static void test_doctor_place(void)
{
	static const struct {
		const char *name, *pod;
		long start, rank_in, want_rank, want_group;
	} rows[] = {
	    {"group 1's leader: rank 0 of group 1", LWS_STORED_LEADER("1"), 0, -1, 0, 1},
	    {"worker 2 of group 1: rank 2 of group 1", LWS_STORED_WORKER("1", "2"), 0, -1, 2, 1},
	    {"worker 3 of group 0: rank 3 of group 0", LWS_STORED_WORKER("0", "3"), 0, -1, 3, 0},
	    {"distenv said rank 0 of worker 2: kept", LWS_STORED_WORKER("1", "2"), 0, 0, 0, 1},
	    {"distenv said rank 1 of worker 2: kept", LWS_STORED_WORKER("1", "2"), 0, 1, 1, 1},
	};
	size_t i;

	for (i = 0; i < N_OF(rows); i++) {
		char *txt = dq(rows[i].pod);
		cJSON *pod = cJSON_Parse(txt);
		const cJSON *meta = json_get(pod, "metadata");
		long rank = rows[i].rank_in, group = 0;

		CHECK(pod != NULL, "%s: test pod JSON does not parse", rows[i].name);
		kind_leaderworkerset.doctor->pod_place(json_get(meta, "labels"),
		                                       json_get(meta, "annotations"), rows[i].start,
		                                       &rank, &group);
		CHECK(rank == rows[i].want_rank && group == rows[i].want_group,
		      "%s: rank %ld group %ld, want rank %ld group %ld", rows[i].name, rank, group,
		      rows[i].want_rank, rows[i].want_group);
		cJSON_Delete(pod);
		free(txt);
	}
}

/* What make_pods_lws emits: each pod's subgroup-size annotation, and how many. */
struct subgroups_seen {
	int pods, marked;
	char first[32];
};

static int subgroups_emit(struct pod_sink *s, cJSON *pod, const struct workload_spec *ws,
                          const char *which)
{
	struct subgroups_seen *sn = s->ctx;
	const char *v = json_str(json_get(json_get(pod, "metadata"), "annotations"),
	                         "leaderworkerset.sigs.k8s.io/subgroup-size");

	(void)ws;
	(void)which;
	sn->pods++;
	if (v != NULL) {
		if (sn->marked++ == 0)
			snprintf(sn->first, sizeof(sn->first), "%s", v);
		else if (strcmp(v, sn->first) != 0)
			sn->first[0] = '\0'; /* two values: none of them */
	}
	cJSON_Delete(pod);
	return 0;
}

/*
 * The pods render makes of a LeaderWorkerSet with subGroupPolicy.subGroupSize
 * carry the subgroup size on the leader and every worker, as the controllers
 * write it (leaderworkerset_controller.go, pod_controller.go: podAnnotations),
 * and none without it: tpu refuses such pods, so render says what the pods get.
 */
static void test_subgroup_pods(void)
{
	static const struct {
		const char *what, *lwt;
		int marked;
	} rows[] = {
	    {"subGroupSize 2", "'subGroupPolicy':{'subGroupSize':2},", 6},
	    {"no subGroupPolicy", "", 0},
	    {"a subGroupPolicy without a size", "'subGroupPolicy':{},", 0},
	};
	size_t i;

	for (i = 0; i < N_OF(rows); i++) {
		char buf[1024], err[256] = "", *txt;
		struct subgroups_seen sn = {0, 0, ""};
		struct pod_sink sink = {subgroups_emit, &sn, 0, err, sizeof(err)};
		cJSON *doc;

		snprintf(buf, sizeof(buf),
		         "{'apiVersion':'leaderworkerset.x-k8s.io/v1','kind':'LeaderWorkerSet',"
		         "'metadata':{'name':'lws','namespace':'ml'},'spec':{'replicas':2,"
		         "'leaderWorkerTemplate':{%s'size':3,'workerTemplate':{'metadata':{"
		         "'labels':{'distenv.dev/inject':'true'}},'spec':{'containers':[{'name':"
		         "'t'}]}}}}}",
		         rows[i].lwt);
		txt = dq(buf);
		doc = cJSON_Parse(txt);
		free(txt);
		CHECK(doc != NULL, "%s: JSON", rows[i].what);
		CHECK(kind_leaderworkerset.make_pods(doc, "lws", "ml", &sink) == 0, "%s: %s",
		      rows[i].what, err);
		CHECK(sn.pods == 6 && sn.marked == rows[i].marked &&
		          (rows[i].marked == 0 || strcmp(sn.first, "2") == 0),
		      "%s: %d pods, %d with subgroup-size '%s'", rows[i].what, sn.pods, sn.marked,
		      sn.first);
		cJSON_Delete(doc);
	}
}

int main(void)
{
	plan_cases_run(plan_cases, N_OF(plan_cases), NULL, 0);
	denial_cases_run(denial_cases, N_OF(denial_cases));
	test_doctor_place();
	test_subgroup_pods();
	TEST_MAIN_END("kind_leaderworkerset");
}
