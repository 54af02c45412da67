/*
 * The Indexed Job kind (src/kinds/kind_job.c) through pod_plan_build: the rank
 * from the completion index (each edge of its range), parallelism and Kueue's
 * partial admission, a Job that is not Indexed.
 */
#include "testpods.h"
#include "kind.h"
#include "kinds.h"

/* The reason of a denial (the metrics label), by plan case name; the others only need one. */
static const struct plan_reason deny_reasons[] = {
    {"job parallelism below completions", DENY_WORKLOAD},
    {"job not indexed per API", DENY_WORKLOAD},
    {"job pod without completion index", DENY_IDENTITY},
};

/*
 * A cached answer is used unless it would deny the pod; then it is read again:
 * cached completions 2 (read again: 4), or parallelism 0 (read again: 5 of 5).
 */
static const struct workload_spec JOB4_NOW = WSPEC(-1, -1, 4, 4, 1, "u-train");
static const struct workload_spec JOB5_NOW = WSPEC(-1, -1, 5, 5, 1, "u-train");
static const struct lookup_answer JOB2_CACHED = {0, WSPEC(-1, -1, 2, 2, 1, "u-train"), &JOB4_NOW};
static const struct lookup_answer JOB_PAR0_CACHED = {0, WSPEC(-1, -1, 4, 0, 1, "u-train"),
                                                     &JOB5_NOW};

static const struct plan_case plan_cases[] = {
    /* a cached Job: its completions at the index's edge, its parallelism at 0 */
    {"job cached completions 2, index 1: the cache answers",
     JOB_POD("1", "", ",'subdomain':'train'"), "default", &JOB2_CACHED, "RANK=1\nWORLD_SIZE=2\n",
     NULL},
    {"job cached completions 2, index 2: read again, 4", JOB_POD("2", "", ",'subdomain':'train'"),
     "default", &JOB2_CACHED, "RANK=2\nWORLD_SIZE=4\n", NULL},
    {"job cached parallelism 0: read again, 5", JOB_POD("1", "", ",'subdomain':'train'"), "default",
     &JOB_PAR0_CACHED, "RANK=1\nWORLD_SIZE=5\n", NULL},
    {"job pod without a name, ns from request", JOB_POD("1", "", ",'subdomain':'train'"), "default",
     &JOB3, "MASTER_ADDR=" J_ "\nRANK=1\nWORLD_SIZE=3\n", NULL},
    {"job parallelism below completions", JOB_POD("0", "", ",'subdomain':'train'"), "default",
     &JOB3_PAR2, NULL, "parallelism 2 below completions 3"},
    {"job Kueue admitted with fewer pods than ranks", JOB_POD("0", "", ",'subdomain':'train'"),
     "default", &JOB4_KUEUE_PAR2, NULL,
     "runs 2 of its 4 ranks at once, as Kueue admitted it (kueue.x-k8s.io/job-min-parallelism), "
     "so they can never form one world: give the Job "
     "kueue.x-k8s.io/job-completions-equal-parallelism: \"true\""},
    {"job not indexed per API", JOB_POD("0", "", ",'subdomain':'train'"), "default",
     &JOB_NONINDEXED, NULL, "not an Indexed Job"},
    {"job pod without completion index",
     "{'metadata':{'generateName':'train-','labels':{" LABEL "}," JOB_OWNER "},'spec':{"
     "'subdomain':'train'," CTR "}}",
     "default", &JOB3, NULL, "of an Indexed Job (set spec.completionMode: Indexed)"},
    /* the completion index is a whole number from 0 to INT_MAX: each edge and past it */
    {"job completion index 0, the lowest", JOB_POD("0", "", ",'subdomain':'train'"), "default",
     &JOB3, "RANK=0\nWORLD_SIZE=3\n", NULL},
    {"job completion index -1, below 0", JOB_POD("-1", "", ",'subdomain':'train'"), "default",
     &JOB3, NULL,
     "annotation batch.kubernetes.io/job-completion-index: \"-1\" is not a completion index"},
    {"job completion index INT_MAX", JOB_POD("2147483647", "", ",'subdomain':'train'"), "default",
     &JOB3, NULL, "rank 2147483647 of Job default/train is not below the world size 3"},
    {"job completion index INT_MAX + 1", JOB_POD("2147483648", "", ",'subdomain':'train'"),
     "default", &JOB3, NULL,
     "annotation batch.kubernetes.io/job-completion-index: \"2147483648\" is not a completion "
     "index"},
    {"job completion index not a number", JOB_POD("1x", "", ",'subdomain':'train'"), "default",
     &JOB3, NULL,
     "annotation batch.kubernetes.io/job-completion-index: \"1x\" is not a completion index"},
};

/*
 * What doctor reads of a pod's place (kind_job.doctor->pod_place, kind.h): the
 * rank from what the controller writes on the pod only when distenv's own
 * annotation did not say one (rank -1 in); a rank it said, 0 included, is kept.
 */
static void test_doctor_place(void)
{
	static const struct {
		const char *name, *pod;
		long start, rank_in, want_rank, want_group;
	} rows[] = {
	    {"completion index 0: rank 0", JOB_POD("0", "", ""), 0, -1, 0, 0},
	    {"completion index 2: rank 2", JOB_POD("2", "", ""), 0, -1, 2, 0},
	    {"distenv said rank 0 of index 2: kept", JOB_POD("2", "", ""), 0, 0, 0, 0},
	    {"distenv said rank 1 of index 2: kept", JOB_POD("2", "", ""), 0, 1, 1, 0},
	};
	size_t i;

	for (i = 0; i < N_OF(rows); i++) {
		char *txt = dq(rows[i].pod);
		cJSON *pod = cJSON_Parse(txt);
		const cJSON *meta = json_get(pod, "metadata");
		long rank = rows[i].rank_in, group = 0;

		CHECK(pod != NULL, "%s: test pod JSON does not parse", rows[i].name);
		kind_job.doctor->pod_place(json_get(meta, "labels"), json_get(meta, "annotations"),
		                           rows[i].start, &rank, &group);
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
	TEST_MAIN_END("kind_job");
}
