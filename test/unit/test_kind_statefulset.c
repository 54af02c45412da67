/*
 * The StatefulSet kind (src/kinds/kind_statefulset.c) through pod_plan_build:
 * the rank from the pod-index label or the name, the start ordinal.
 */
#include "testpods.h"
#include "kind.h"
#include "kinds.h"

/* The reason of a denial (the metrics label), by plan case name; the others only need one. */
static const struct plan_reason deny_reasons[] = {
    {"sts ordinal below start", DENY_IDENTITY},
};

static const struct plan_case plan_cases[] = {
    /* a cached StatefulSet of 2 (4 now): read again only when it would deny the pod */
    {"sts cached replicas 2, ordinal 0: the cache answers", STS_POD("0", "", ""), "ml",
     &STS2_CACHED, "RANK=0\nWORLD_SIZE=2\n", NULL},
    {"sts cached replicas 2, ordinal 1: the cache answers", STS_POD("1", "", ""), "ml",
     &STS2_CACHED, "RANK=1\nWORLD_SIZE=2\n", NULL},
    {"sts cached replicas 2, ordinal 2: read again, 4", STS_POD("2", "", ""), "ml", &STS2_CACHED,
     "RANK=2\nWORLD_SIZE=4\n", NULL},
    {"sts rank from pod-index label, world from API", STS_POD("2", "", ""), "ml", &STS4,
     "MASTER_ADDR=" A_ "\nMASTER_PORT=29500\nRANK=2\nWORLD_SIZE=4\nPET_MASTER_ADDR=" A_
     "\nPET_MASTER_PORT=29500\nPET_NNODES=4\nPET_NODE_RANK=2\nPET_NPROC_PER_NODE=1\n"
     "TF_CONFIG={\"cluster\":{\"worker\":[\"ddp-0.ddp.ml.svc.cluster.local:29500\","
     "\"ddp-1.ddp.ml.svc.cluster.local:29500\",\"ddp-2.ddp.ml.svc.cluster.local:29500\","
     "\"ddp-3.ddp.ml.svc.cluster.local:29500\"]},\"task\":{\"type\":\"worker\",\"index\":2}}\n",
     NULL},
    {"sts multi-digit ordinal from the name, dashed name",
     "{'metadata':{'name':'my-big-job-12','namespace':'ml','labels':{" LABEL "},"
     "'annotations':{'distenv.dev/world-size':'16'},'ownerReferences':[{'kind':'StatefulSet',"
     "'apiVersion':'apps/v1','name':'my-big-job','controller':true}]},'spec':{'subdomain':"
     "'svc-a'," CTR "}}",
     "ml", NULL, "MASTER_ADDR=my-big-job-0.svc-a.ml.svc.cluster.local\nRANK=12\nWORLD_SIZE=16\n",
     NULL},
    {"sts start ordinal 1: ordinal 1 is rank 0", STS_POD("1", "", ""), "ml", &STS3_START1,
     "MASTER_ADDR=ddp-1.ddp.ml.svc.cluster.local\nRANK=0\nWORLD_SIZE=3\n", NULL},
    {"sts start ordinal 1: ordinal 3 is rank 2", STS_POD("3", "", ""), "ml", &STS3_START1,
     "RANK=2\nWORLD_SIZE=3\n", NULL},
    {"sts ordinal below start", STS_POD("0", "", ""), "ml", &STS3_START1, NULL,
     "below the start ordinal 1"},
};

/*
 * What doctor reads of a pod's place (kind_statefulset.doctor->pod_place, kind.h): the
 * rank from what the controller writes on the pod only when distenv's own
 * annotation did not say one (rank -1 in); a rank it said, 0 included, is kept.
 */
static void test_doctor_place(void)
{
	static const struct {
		const char *name, *pod;
		long start, rank_in, want_rank, want_group;
	} rows[] = {
	    {"start 2, ordinal 2: rank 0", STS_POD("2", "", ""), 2, -1, 0, 0},
	    {"start 2, ordinal 3: rank 1", STS_POD("3", "", ""), 2, -1, 1, 0},
	    {"start 2, ordinal 1: below the start, no rank", STS_POD("1", "", ""), 2, -1, -1, 0},
	    {"start 0, ordinal 0: rank 0", STS_POD("0", "", ""), 0, -1, 0, 0},
	    /* told rank 0 when the start was 3 (lowered to 0 since): distenv's word stands */
	    {"distenv said rank 0 of ordinal 3: kept", STS_POD("3", "", ""), 0, 0, 0, 0},
	    {"distenv said rank 1 of ordinal 3: kept", STS_POD("3", "", ""), 0, 1, 1, 0},
	};
	size_t i;

	for (i = 0; i < N_OF(rows); i++) {
		char *txt = dq(rows[i].pod);
		cJSON *pod = cJSON_Parse(txt);
		const cJSON *meta = json_get(pod, "metadata");
		long rank = rows[i].rank_in, group = 0;

		CHECK(pod != NULL, "%s: test pod JSON does not parse", rows[i].name);
		kind_statefulset.doctor->pod_place(json_get(meta, "labels"),
		                                   json_get(meta, "annotations"), rows[i].start,
		                                   &rank, &group);
		CHECK(rank == rows[i].want_rank && group == rows[i].want_group,
		      "%s: rank %ld group %ld, want rank %ld group %ld", rows[i].name, rank, group,
		      rows[i].want_rank, rows[i].want_group);
		cJSON_Delete(pod);
		free(txt);
	}
}

int main(void)
{
	plan_cases_run(plan_cases, N_OF(plan_cases), deny_reasons, N_OF(deny_reasons));
	test_doctor_place();
	TEST_MAIN_END("kind_statefulset");
}
