/*
 * The admission core through admission_handle and pod_plan_build, table by
 * table: topology and env (every row of docs/environment.md's tables), the
 * JSON Patch shapes, the AdmissionReview envelope and the bad-input answers.
 * Look-ups are answered from the table through the core's callback interface.
 */
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "json.h"
#include "patch.h"
#include "testutil.h"
#include "util.h"
#include "strbuf.h"
#include "base64.h"
#include "dns.h"

/* Test JSON is written with single quotes; this turns them into double quotes. */
static char *dq(const char *s)
{
	char *p = strdup(s), *q;

	for (q = p; *q; q++)
		if (*q == '\'')
			*q = '"';
	return p;
}

#define STS_OWNER                                                                                  \
	"'ownerReferences':[{'apiVersion':'apps/"                                                  \
	"v1','kind':'StatefulSet','name':'ddp','uid':'u-ddp','controller':true}]"
#define JOB_OWNER                                                                                  \
	"'ownerReferences':[{'apiVersion':'batch/"                                                 \
	"v1','kind':'Job','name':'train','uid':'u-train','controller':true}]"
#define LABEL "'distenv.dev/inject':'true'"
#define CTR   "'containers':[{'name':'trainer','image':'x'}]"

/* A StatefulSet pod ddp-N in ns "ml" with extra annotations and spec. */
#define STS_POD(ord, anns, spec_extra)                                                             \
	"{'metadata':{'name':'ddp-" ord "','namespace':'ml','labels':{" LABEL                      \
	",'apps.kubernetes.io/pod-index':'" ord "'},'annotations':{" anns "}," STS_OWNER "},"      \
	"'spec':{'hostname':'ddp-" ord "','subdomain':'ddp'," CTR spec_extra "}}"

/* An Indexed Job pod (no name, no namespace) with completion index idx. */
#define JOB_POD(idx, anns, spec_extra)                                                             \
	"{'metadata':{'generateName':'train-" idx "-','labels':{" LABEL "},"                       \
	"'annotations':{'batch.kubernetes.io/job-completion-index':'" idx "'" anns "}," JOB_OWNER  \
	"},'spec':{'hostname':'train-" idx "'" spec_extra "," CTR "}}"

/*
 * A look-up answer. With fresh set, spec plays a cache's answer (cached = 1)
 * and fresh what a read that bypasses the cache returns.
 */
struct lookup_answer {
	int fail;
	struct workload_spec spec;
	const struct workload_spec *fresh;
};

static int table_get(void *ctx, const struct workload_ref *ref, int fresh,
                     struct workload_spec *out, char *err, size_t errlen)
{
	const struct lookup_answer *a = ctx;

	(void)ref;
	(void)fresh;
	if (a->fail) {
		snprintf(err, errlen, "connection refused");
		return -1;
	}
	*out = fresh && a->fresh ? *a->fresh : a->spec;
	out->cached = !fresh && a->fresh != NULL;
	return 0;
}

static const struct lookup_answer STS4 = {0, WSPEC(4, -1, -1, -1, 0, ""), NULL};
static const struct lookup_answer STS3_START1 = {0, WSPEC(3, 1, -1, -1, 0, ""), NULL};
static const struct lookup_answer JOB3 = {0, WSPEC(-1, -1, 3, 3, 1, ""), NULL};
static const struct lookup_answer JOB3_PAR2 = {0, WSPEC(-1, -1, 3, 2, 1, ""), NULL};
/* Kueue's partial admission: job-min-parallelism on the Job, parallelism lowered to 2 */
static const struct lookup_answer JOB4_KUEUE_PAR2 = {0,
                                                     {.replicas = -1,
                                                      .ordinals_start = -1,
                                                      .completions = 4,
                                                      .parallelism = 2,
                                                      .indexed = 1,
                                                      .partial_admission = 1,
                                                      .coordinator_job = -1,
                                                      .coordinator_pod = -1},
                                                     NULL};
static const struct lookup_answer JOB_NONINDEXED = {0, WSPEC(-1, -1, 3, 3, 0, ""), NULL};
static const struct lookup_answer FAILS = {1, WSPEC(-1, -1, -1, -1, 0, ""), NULL};

static const struct workload_spec STS4_FRESH = WSPEC(4, -1, -1, -1, 0, "u-ddp");
static const struct workload_spec STS2_OLD_UID = WSPEC(2, -1, -1, -1, 0, "u-old");
/* cached: 2 replicas (scaled up since), or the same name's deleted object */
static const struct lookup_answer STS2_CACHED = {0, WSPEC(2, -1, -1, -1, 0, "u-ddp"), &STS4_FRESH};
static const struct lookup_answer STS_OTHER_UID_CACHED = {0, WSPEC(2, -1, -1, -1, 0, "u-old"),
                                                          &STS4_FRESH};
static const struct lookup_answer STS_OTHER_UID = {0, WSPEC(2, -1, -1, -1, 0, "u-old"),
                                                   &STS2_OLD_UID};
static const struct workload_spec STS2_FRESH = WSPEC(2, -1, -1, -1, 0, "u-ddp");
static const struct lookup_answer STS2_STILL = {0, WSPEC(2, -1, -1, -1, 0, "u-ddp"), &STS2_FRESH};
static const struct workload_spec JOB4_FRESH = WSPEC(-1, -1, 4, 4, 1, "u-train");
static const struct lookup_answer JOB2_RECREATED = {0, WSPEC(-1, -1, 2, 2, 1, "u-old"),
                                                    &JOB4_FRESH};

#define A_ "ddp-0.ddp.ml.svc.cluster.local"
#define J_ "train-0.train.default.svc.cluster.local"

/*
 * JobSet js in ml as the JobSet controller builds its pods (jobset_controller.go,
 * labelAndAnnotateObject; placement.GenJobName): Job <js>-<rjob>-<j>, labels
 * and annotations jobset.sigs.k8s.io/..., the Job controller's completion index,
 * hostname <js>-<rjob>-<j>-<i> and the JobSet's subdomain.
 */
#define JS_POD(rjob, j, i, reps, global, extra)                                                    \
	"{'metadata':{'generateName':'js-" rjob "-" j "-" i "-','namespace':'ml','labels':{" LABEL \
	",'jobset.sigs.k8s.io/jobset-name':'js','jobset.sigs.k8s.io/replicatedjob-name':'" rjob    \
	"','jobset.sigs.k8s.io/job-index':'" j "','jobset.sigs.k8s.io/jobset-uid':'u-js',"         \
	"'jobset.sigs.k8s.io/replicatedjob-replicas':'" reps "','jobset.sigs.k8s.io/global-"       \
	"replicas':'" global "','batch.kubernetes.io/job-completion-index':'" i "'},"              \
	"'annotations':{'batch.kubernetes.io/job-completion-index':'" i "'" extra "},"             \
	"'ownerReferences':[{'apiVersion':'batch/v1','kind':'Job','name':'js-" rjob "-" j "',"     \
	"'uid':'u-job','controller':true}]},'spec':{'hostname':'js-" rjob "-" j "-" i "',"         \
	"'subdomain':'js'," CTR "}}"

/* The JobSet's answer: replicated Jobs a (2 Jobs x 2 pods) and b (1 x 3). */
#define RJOB(n, reps, pods)                                                                        \
	{                                                                                          \
		.name = n, .replicas = reps, .completions = pods, .parallelism = pods,             \
		.indexed = 1                                                                       \
	}
/* A JobSet js's answer: its replicated Jobs, then the coordinator (name, Job, pod). */
#define JSSPEC(coord, job, pod, ...)                                                               \
	{                                                                                          \
		.replicas = -1, .ordinals_start = -1, .completions = -1, .parallelism = -1,        \
		.uid = "u-js",                                                                     \
		.n_rjobs =                                                                         \
		    sizeof((struct workload_rjob[]){__VA_ARGS__}) / sizeof(struct workload_rjob),  \
		.rjobs = {__VA_ARGS__}, .coordinator = coord, .coordinator_job = job,              \
		.coordinator_pod = pod                                                             \
	}
static const struct lookup_answer JS_A2x2_B1x3 = {
    0, JSSPEC("", -1, -1, RJOB("a", 2, 2), RJOB("b", 1, 3)), NULL};
static const struct lookup_answer JS_COORD_B01 = {
    0, JSSPEC("b", 0, 1, RJOB("a", 2, 2), RJOB("b", 1, 3)), NULL};
static const struct lookup_answer JS_TF = {
    0, JSSPEC("", -1, -1, RJOB("chief", 1, 1), RJOB("worker", 1, 2), RJOB("ps", 1, 1)), NULL};
static const struct lookup_answer JS_TF_COORD_W01 = {
    0, JSSPEC("worker", 0, 1, RJOB("chief", 1, 1), RJOB("worker", 1, 2), RJOB("ps", 1, 1)), NULL};
/* chief, worker (2 pods), ps and evaluator: TensorFlow's parameter-server layout. */
static const struct lookup_answer JS_TF_EVAL = {0,
                                                JSSPEC("", -1, -1, RJOB("chief", 1, 1),
                                                       RJOB("worker", 1, 2), RJOB("ps", 1, 1),
                                                       RJOB("evaluator", 1, 1)),
                                                NULL};
static const struct lookup_answer JS_NOT_INDEXED = {
    0, JSSPEC("", -1, -1, {.name = "a", .replicas = 2, .completions = 2, .parallelism = 2}), NULL};
#define JS_ "js-a-0-0.js.ml.svc.cluster.local"

/*
 * LeaderWorkerSet lws in ml as its controllers build pods (pod_controller.go,
 * leaderworkerset_controller.go): the leader of group g is pod lws-<g> of
 * StatefulSet lws (template label worker-index 0); worker i is pod lws-<g>-<i>
 * of StatefulSet lws-<g> (ordinals from 1, annotation leader-name); the size
 * annotation on both. The labels LWS's own webhook adds are left out: distenv
 * may run first.
 */
#define LWS_LEADER(g, anns)                                                                        \
	"{'metadata':{'name':'lws-" g "','namespace':'ml','labels':{" LABEL                        \
	",'leaderworkerset.sigs.k8s.io/name':'lws','leaderworkerset.sigs.k8s.io/"                  \
	"worker-index':'0',"                                                                       \
	"'apps.kubernetes.io/pod-index':'" g                                                       \
	"'},'annotations':{'leaderworkerset.sigs.k8s.io/size':"                                    \
	"'4'" anns "},'ownerReferences':[{'apiVersion':'apps/v1','kind':'StatefulSet','name':"     \
	"'lws','uid':'u-lws','controller':true}]},'spec':{'hostname':'lws-" g "','subdomain':"     \
	"'lws'," CTR "}}"
#define LWS_WORKER(g, i)                                                                           \
	"{'metadata':{'name':'lws-" g "-" i "','namespace':'ml','labels':{" LABEL                  \
	",'leaderworkerset.sigs.k8s.io/name':'lws','leaderworkerset.sigs.k8s.io/group-index':'" g  \
	"','apps.kubernetes.io/pod-index':'" i "'},'annotations':{'leaderworkerset.sigs.k8s.io/"   \
	"size':'4','leaderworkerset.sigs.k8s.io/leader-name':'lws-" g "'},'ownerReferences':[{"    \
	"'apiVersion':'apps/v1','kind':'StatefulSet','name':'lws-" g "','uid':'u-w','controller':" \
	"true}]},'spec':{'hostname':'lws-" g "-" i "','subdomain':'lws'," CTR "}}"

static const struct {
	const char *name;
	const char *pod;
	const char *req_ns;
	const struct lookup_answer *lookup; /* NULL: look-ups off */
	const char *want_env;  /* "NAME=VALUE\n..." subset, in order; NULL when denied */
	const char *want_deny; /* substring of the denial */
} plan_cases[] = {
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
    {"a Job pod with only a generateName and no hostname: no name to compare",
     "{'metadata':{'generateName':'train-1-','labels':{" LABEL "},'annotations':{'batch."
     "kubernetes.io/job-completion-index':'1','distenv.dev/world-size':'4'}," JOB_OWNER "},"
     "'spec':{'subdomain':'train'," CTR "}}",
     "ml", NULL, "MASTER_ADDR=train-0.train.ml.svc.cluster.local\nRANK=1\nWORLD_SIZE=4\n", NULL},
    {"cached world too small: read again, the new size wins", STS_POD("3", "", ""), "ml",
     &STS2_CACHED, "RANK=3\nWORLD_SIZE=4\n", NULL},
    {"cached answer of a deleted namesake: read again", STS_POD("1", "", ""), "ml",
     &STS_OTHER_UID_CACHED, "RANK=1\nWORLD_SIZE=4\n", NULL},
    {"the API has only the namesake: denied", STS_POD("1", "", ""), "ml", &STS_OTHER_UID, NULL,
     "not the uid u-ddp the pod names as its owner"},
    {"fresh read agrees the rank is too high", STS_POD("3", "", ""), "ml", &STS2_STILL, NULL,
     "rank 3 of StatefulSet ml/ddp is not below the world size 2"},
    {"re-created Job: pod 0 never gets the old completions",
     JOB_POD("0", "", ",'subdomain':'train'"), "default", &JOB2_RECREATED, "RANK=0\nWORLD_SIZE=4\n",
     NULL},
    {"re-created Job: pod 3 is not denied", JOB_POD("3", "", ",'subdomain':'train'"), "default",
     &JOB2_RECREATED, "RANK=3\nWORLD_SIZE=4\n", NULL},
    {"jobset: first pod", JS_POD("a", "0", "0", "2", "3", ""), "ml", &JS_A2x2_B1x3,
     "MASTER_ADDR=" JS_ "\nMASTER_PORT=29500\nRANK=0\nWORLD_SIZE=7\n", NULL},
    {"jobset: job 1 pod 1 of a is rank 3 of 7", JS_POD("a", "1", "1", "2", "3", ""), "ml",
     &JS_A2x2_B1x3,
     "MASTER_ADDR=" JS_ "\nRANK=3\nWORLD_SIZE=7\nTF_CONFIG={\"cluster\":{\"worker\":["
     "\"js-a-0-0.js.ml.svc.cluster.local:29500\",\"js-a-0-1.js.ml.svc.cluster.local:29500\","
     "\"js-a-1-0.js.ml.svc.cluster.local:29500\",\"js-a-1-1.js.ml.svc.cluster.local:29500\","
     "\"js-b-0-0.js.ml.svc.cluster.local:29500\",\"js-b-0-1.js.ml.svc.cluster.local:29500\","
     "\"js-b-0-2.js.ml.svc.cluster.local:29500\"]},\"task\":{\"type\":\"worker\",\"index\":3}}"
     "\n",
     NULL},
    {"jobset: the last pod of b is rank 6", JS_POD("b", "0", "2", "1", "3", ""), "ml",
     &JS_A2x2_B1x3, "MASTER_ADDR=" JS_ "\nRANK=6\nWORLD_SIZE=7\n", NULL},
    {"jobset: elastic rendezvous id is the JobSet's",
     JS_POD("b", "0", "2", "1", "3", ",'distenv.dev/elastic':'7:7'"), "ml", &JS_A2x2_B1x3,
     "PET_RDZV_ENDPOINT=" JS_ ":29500\nPET_RDZV_ID=ml-js\n", NULL},
    {"jobset: the coordinator's pod is rank 0 and MASTER_ADDR", JS_POD("b", "0", "1", "1", "3", ""),
     "ml", &JS_COORD_B01,
     "MASTER_ADDR=js-b-0-1.js.ml.svc.cluster.local\nRANK=0\nWORLD_SIZE=7\nPET_NODE_RANK=0\n", NULL},
    {"jobset: the pods before the coordinator move one rank up",
     JS_POD("a", "1", "0", "2", "3", ""), "ml", &JS_COORD_B01,
     "MASTER_ADDR=js-b-0-1.js.ml.svc.cluster.local\nRANK=3\nWORLD_SIZE=7\nTF_CONFIG={\"cluster\":"
     "{\"worker\":[\"js-b-0-1.js.ml.svc.cluster.local:29500\",\"js-a-0-0.js.ml.svc.cluster.local:"
     "29500\",\"js-a-0-1.js.ml.svc.cluster.local:29500\",\"js-a-1-0.js.ml.svc.cluster.local:29500\""
     ",\"js-a-1-1.js.ml.svc.cluster.local:29500\",\"js-b-0-0.js.ml.svc.cluster.local:29500\",\"js-"
     "b-0-2.js.ml.svc.cluster.local:29500\"]},\"task\":{\"type\":\"worker\",\"index\":3}}\n",
     NULL},
    {"jobset: the first pod is rank 1 when another is the coordinator",
     JS_POD("a", "0", "0", "2", "3", ""), "ml", &JS_COORD_B01, "RANK=1\n", NULL},
    {"jobset: the pod just before the coordinator", JS_POD("b", "0", "0", "1", "3", ""), "ml",
     &JS_COORD_B01, "RANK=5\n", NULL},
    {"jobset: the pods after the coordinator keep their rank", JS_POD("b", "0", "2", "1", "3", ""),
     "ml", &JS_COORD_B01, "RANK=6\n", NULL},
    {"jobset: TensorFlow roles with a coordinator: its role lists it first",
     JS_POD("worker", "0", "0", "1", "3", ""), "ml", &JS_TF_COORD_W01,
     "MASTER_ADDR=js-worker-0-1.js.ml.svc.cluster.local\nRANK=2\nWORLD_SIZE=4\nTF_CONFIG={"
     "\"cluster\":{\"chief\":[\"js-chief-0-0.js.ml.svc.cluster.local:29500\"],\"worker\":[\"js-"
     "worker-0-1.js.ml.svc.cluster.local:29500\",\"js-worker-0-0.js.ml.svc.cluster.local:29500\"],"
     "\"ps\":[\"js-ps-0-0.js.ml.svc.cluster.local:29500\"]},\"task\":{\"type\":\"worker\","
     "\"index\":1}}\n",
     NULL},
    {"jobset: TensorFlow roles: the coordinator is its role's task 0",
     JS_POD("worker", "0", "1", "1", "3", ""), "ml", &JS_TF_COORD_W01, "RANK=0\nWORLD_SIZE=4\n",
     NULL},
    {"jobset: TensorFlow roles", JS_POD("worker", "0", "1", "1", "3", ""), "ml", &JS_TF,
     "RANK=2\nWORLD_SIZE=4\nTF_CONFIG={\"cluster\":{\"chief\":[\"js-chief-0-0.js.ml.svc.cluster."
     "local:29500\"],\"worker\":[\"js-worker-0-0.js.ml.svc.cluster.local:29500\",\"js-worker-0-1."
     "js.ml.svc.cluster.local:29500\"],\"ps\":[\"js-ps-0-0.js.ml.svc.cluster.local:29500\"]},"
     "\"task\":{\"type\":\"worker\",\"index\":1}}\n",
     NULL},
    {"jobset: the chief's task", JS_POD("chief", "0", "0", "1", "3", ""), "ml", &JS_TF, "RANK=0\n",
     NULL},
    {"jobset: TensorFlow roles with an evaluator: a worker's cluster leaves it out",
     JS_POD("worker", "0", "1", "1", "4", ""), "ml", &JS_TF_EVAL,
     "RANK=2\nWORLD_SIZE=5\nTF_CONFIG={\"cluster\":{\"chief\":[\"js-chief-0-0.js.ml.svc.cluster."
     "local:29500\"],\"worker\":[\"js-worker-0-0.js.ml.svc.cluster.local:29500\",\"js-worker-0-1."
     "js.ml.svc.cluster.local:29500\"],\"ps\":[\"js-ps-0-0.js.ml.svc.cluster.local:29500\"]},"
     "\"task\":{\"type\":\"worker\",\"index\":1}}\n",
     NULL},
    {"jobset: TensorFlow roles: the evaluator's cluster is the evaluators",
     JS_POD("evaluator", "0", "0", "1", "4", ""), "ml", &JS_TF_EVAL,
     "RANK=4\nWORLD_SIZE=5\nTF_CONFIG={\"cluster\":{\"evaluator\":[\"js-evaluator-0-0.js.ml.svc."
     "cluster.local:29500\"]},\"task\":{\"type\":\"evaluator\",\"index\":0}}\n",
     NULL},
    {"jobset: a world-size annotation that disagrees",
     JS_POD("a", "0", "0", "2", "3", ",'distenv.dev/world-size':'4'"), "ml", &JS_A2x2_B1x3, NULL,
     "annotation distenv.dev/world-size is 4, but JobSet ml/js has 7 pods"},
    {"jobset: a replicated Job that is not Indexed", JS_POD("a", "0", "0", "2", "2", ""), "ml",
     &JS_NOT_INDEXED, NULL, "replicated Job a of JobSet ml/js is not Indexed"},
    {"jobset without look-ups: one replicated Job and the world annotated",
     JS_POD("a", "1", "1", "2", "2", ",'distenv.dev/world-size':'4'"), "ml", NULL,
     "MASTER_ADDR=" JS_ "\nRANK=3\nWORLD_SIZE=4\n", NULL},
    {"jobset without look-ups: a coordinator label",
     JS_POD("a", "1", "1", "2", "2",
            ",'distenv.dev/world-size':'4','jobset.sigs.k8s.io/coordinator':'js-a-1-0.js'"),
     "ml", NULL, "MASTER_ADDR=js-a-1-0.js.ml.svc.cluster.local\nRANK=3\n", NULL},
    {"jobset without look-ups: the labelled coordinator is rank 0",
     JS_POD("a", "1", "0", "2", "2",
            ",'distenv.dev/world-size':'4','jobset.sigs.k8s.io/coordinator':'js-a-1-0.js'"),
     "ml", NULL, "MASTER_ADDR=js-a-1-0.js.ml.svc.cluster.local\nRANK=0\n", NULL},
    {"jobset without look-ups: the first pod moves up to rank 1",
     JS_POD("a", "0", "0", "2", "2",
            ",'distenv.dev/world-size':'4','jobset.sigs.k8s.io/coordinator':'js-a-1-0.js'"),
     "ml", NULL, "MASTER_ADDR=js-a-1-0.js.ml.svc.cluster.local\nRANK=1\n", NULL},
    {"jobset without look-ups: a coordinator label naming no pod",
     JS_POD("a", "0", "0", "2", "2",
            ",'distenv.dev/world-size':'4','jobset.sigs.k8s.io/coordinator':'js-a-2-0.js'"),
     "ml", NULL, NULL, "does not name a pod of JobSet ml/js"},
    {"jobset without look-ups: several replicated Jobs",
     JS_POD("a", "1", "1", "2", "3", ",'distenv.dev/world-size':'7'"), "ml", NULL, NULL,
     "turn look-ups on"},
    {"jobset without look-ups: no world size", JS_POD("a", "1", "1", "2", "2", ""), "ml", NULL,
     NULL, "the world size of JobSet ml/js is not known"},
    {"jobset labels that contradict the owner",
     "{'metadata':{'generateName':'x-','namespace':'ml','labels':{" LABEL
     ",'jobset.sigs.k8s.io/jobset-name':'js','jobset.sigs.k8s.io/replicatedjob-name':'a',"
     "'jobset.sigs.k8s.io/job-index':'0'},'annotations':{'batch.kubernetes.io/job-completion-"
     "index':'0'},'ownerReferences':[{'apiVersion':'batch/v1','kind':'Job','name':'other',"
     "'controller':true}]},'spec':{'subdomain':'js'," CTR "}}",
     "ml", &JS_A2x2_B1x3, NULL, "carries JobSet labels for Job js-a-0"},
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
    {"sts start ordinal 1: ordinal 1 is rank 0", STS_POD("1", "", ""), "ml", &STS3_START1,
     "MASTER_ADDR=ddp-1.ddp.ml.svc.cluster.local\nRANK=0\nWORLD_SIZE=3\n", NULL},
    {"sts start ordinal 1: ordinal 3 is rank 2", STS_POD("3", "", ""), "ml", &STS3_START1,
     "RANK=2\nWORLD_SIZE=3\n", NULL},
    {"sts ordinal below start", STS_POD("0", "", ""), "ml", &STS3_START1, NULL,
     "below the start ordinal 1"},
    {"annotation wins over the API", STS_POD("1", "'distenv.dev/world-size':'8'", ""), "ml", &STS4,
     "RANK=1\nWORLD_SIZE=8\nPET_NNODES=8\n", NULL},
    {"namespace from request only",
     "{'metadata':{'name':'ddp-0','labels':{" LABEL "},'annotations':{'distenv.dev/world-size':"
     "'2'}," STS_OWNER "},'spec':{'subdomain':'ddp'," CTR "}}",
     "team-a", NULL, "MASTER_ADDR=ddp-0.ddp.team-a.svc.cluster.local\n", NULL},
    {"job pod without a name, ns from request", JOB_POD("1", "", ",'subdomain':'train'"), "default",
     &JOB3, "MASTER_ADDR=" J_ "\nRANK=1\nWORLD_SIZE=3\n", NULL},
    {"job with distenv.dev/service", JOB_POD("2", ",'distenv.dev/service':'train'", ""), "default",
     &JOB3, "MASTER_ADDR=" J_ "\nRANK=2\n", NULL},
    {"job without subdomain or service", JOB_POD("0", "", ""), "default", &JOB3, NULL,
     "point spec.subdomain"},
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
    {"job rank >= world size", JOB_POD("3", "", ",'subdomain':'train'"), "default", &JOB3, NULL,
     "rank 3 of Job default/train is not below the world size 3"},
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
    {"sts rank >= annotated world size", STS_POD("5", "'distenv.dev/world-size':'4'", ""), "ml",
     NULL, NULL, "rank 5"},
    {"world size unknown without look-ups", STS_POD("0", "", ""), "ml", NULL, NULL,
     "world size of StatefulSet ml/ddp is not known"},
    {"look-up fails", STS_POD("0", "", ""), "ml", &FAILS, NULL,
     "cannot read StatefulSet ml/ddp from the Kubernetes API (connection refused)"},
    {"deployment pod refused",
     "{'metadata':{'name':'web-abc','namespace':'ml','labels':{" LABEL "},'ownerReferences':[{"
     "'kind':'ReplicaSet','name':'web-5d4','controller':true}]},'spec':{" CTR "}}",
     "ml", NULL, NULL,
     "controlled by ReplicaSet web-5d4 (no apiVersion); distenv supports only pods of a "
     "StatefulSet (apps/v1), of an Indexed Job (batch/v1, completionMode: Indexed), of a JobSet "
     "(jobset.x-k8s.io) or of a LeaderWorkerSet"},
    {"a StatefulSet of another API group is not apps/v1's",
     "{'metadata':{'name':'ddp-0','namespace':'ml','labels':{" LABEL "},'annotations':{"
     "'distenv.dev/world-size':'2'},'ownerReferences':[{'apiVersion':'apps.kruise.io/v1beta1',"
     "'kind':'StatefulSet','name':'ddp','uid':'u-k','controller':true}]},'spec':{'subdomain':"
     "'ddp'," CTR "}}",
     "ml", &STS4, NULL,
     "controlled by StatefulSet ddp (apps.kruise.io/v1beta1); distenv supports only pods of a "
     "StatefulSet (apps/v1)"},
    {"a Job of another API group",
     "{'metadata':{'generateName':'t-0-','namespace':'ml','labels':{" LABEL "},'annotations':{"
     "'batch.kubernetes.io/job-completion-index':'0'},'ownerReferences':[{'apiVersion':"
     "'example.com/v1','kind':'Job','name':'t','controller':true}]},'spec':{'subdomain':'t'," CTR
     "}}",
     "ml", &JOB3, NULL, "controlled by Job t (example.com/v1)"},
    {"bare pod refused", "{'metadata':{'name':'p','labels':{" LABEL "}},'spec':{" CTR "}}", "ml",
     NULL, NULL, "controlled by nothing"},
    {"port annotation", STS_POD("0", "'distenv.dev/world-size':'2','distenv.dev/port':'23456'", ""),
     "ml", NULL, "MASTER_PORT=23456\n", NULL},
    {"bad port", STS_POD("0", "'distenv.dev/port':'0'", ""), "ml", &STS4, NULL,
     "annotation distenv.dev/port: \"0\""},
    {"bad port text", STS_POD("0", "'distenv.dev/port':'80a'", ""), "ml", &STS4, NULL,
     "annotation distenv.dev/port: \"80a\""},
    {"bad world size", STS_POD("0", "'distenv.dev/world-size':'-1'", ""), "ml", &STS4, NULL,
     "annotation distenv.dev/world-size: \"-1\""},
    {"world size with spaces", STS_POD("0", "'distenv.dev/world-size':' 4'", ""), "ml", &STS4, NULL,
     "annotation distenv.dev/world-size"},
    {"nproc from GPU limits",
     STS_POD("0", "'distenv.dev/world-size':'2'",
             ",'initContainers':[{'name':'i','resources':{'limits':{'nvidia.com/gpu':'16'}}}]"),
     "ml", NULL, "PET_NPROC_PER_NODE=1\n", NULL},
    {"nproc annotation",
     STS_POD("0", "'distenv.dev/world-size':'2','distenv.dev/nproc-per-node':'8'", ""), "ml", NULL,
     "PET_NPROC_PER_NODE=8\n", NULL},
    {"bad nproc", STS_POD("0", "'distenv.dev/nproc-per-node':'eight'", ""), "ml", &STS4, NULL,
     "annotation distenv.dev/nproc-per-node: \"eight\""},
    {"frameworks jax only",
     STS_POD("1", "'distenv.dev/world-size':'2','distenv.dev/frameworks':'jax'", ""), "ml", NULL,
     "JAX_COORDINATOR_ADDRESS=" A_ ":29500\nJAX_NUM_PROCESSES=2\nJAX_PROCESS_ID=1\n", NULL},
    {"bad frameworks", STS_POD("0", "'distenv.dev/frameworks':'pytorch,mxnet'", ""), "ml", &STS4,
     NULL, "annotation distenv.dev/frameworks: \"pytorch,mxnet\""},
    {"elastic",
     STS_POD("1",
             "'distenv.dev/elastic':'2:4','distenv.dev/max-restarts':'3',"
             "'distenv.dev/frameworks':'pytorch'",
             ""),
     "ml", &STS4,
     "MASTER_ADDR=" A_ "\nMASTER_PORT=29500\nRANK=1\nWORLD_SIZE=4\nPET_MASTER_ADDR=" A_
     "\nPET_MASTER_PORT=29500\nPET_NNODES=2:4\nPET_NODE_RANK=1\nPET_NPROC_PER_NODE=1\n"
     "PET_RDZV_BACKEND=c10d\nPET_RDZV_ENDPOINT=" A_ ":29500\nPET_RDZV_ID=ml-ddp\n"
     "PET_MAX_RESTARTS=3\n",
     NULL},
    {"elastic MIN above the world size", STS_POD("0", "'distenv.dev/elastic':'5:8'", ""), "ml",
     &STS4, NULL, "MIN 5 is above the world size 4 of StatefulSet ml/ddp"},
    {"elastic MAX above the world size is allowed", STS_POD("0", "'distenv.dev/elastic':'2:8'", ""),
     "ml", &STS4, "PET_NNODES=2:8\n", NULL},
    {"sts pod without subdomain speaks of serviceName",
     "{'metadata':{'name':'ddp-0','namespace':'ml','labels':{" LABEL "},'annotations':{"
     "'distenv.dev/world-size':'2'}," STS_OWNER "},'spec':{'hostname':'ddp-0'," CTR "}}",
     "ml", NULL, NULL, "the StatefulSet has no spec.serviceName: set spec.serviceName"},
    {"elastic MIN > MAX", STS_POD("0", "'distenv.dev/elastic':'4:2'", ""), "ml", &STS4, NULL,
     "annotation distenv.dev/elastic: \"4:2\" has MIN greater than MAX"},
    {"elastic not a range", STS_POD("0", "'distenv.dev/elastic':'4'", ""), "ml", &STS4, NULL,
     "annotation distenv.dev/elastic: \"4\" is not MIN:MAX"},
    {"bad max-restarts", STS_POD("0", "'distenv.dev/max-restarts':'x'", ""), "ml", &STS4, NULL,
     "annotation distenv.dev/max-restarts: \"x\""},
    {"containers names an unknown one", STS_POD("0", "'distenv.dev/containers':'nope'", ""), "ml",
     &STS4, NULL, "no container or init container named \"nope\""},
    {"bad service annotation", JOB_POD("0", ",'distenv.dev/service':'Bad_Name'", ""), "default",
     &JOB3, NULL, "annotation distenv.dev/service: \"Bad_Name\""},
    {"nproc is the largest GPU limit of the targets",
     "{'metadata':{'name':'ddp-0','namespace':'ml','labels':{" LABEL "}," STS_OWNER "},"
     "'spec':{'subdomain':'ddp','containers':[{'name':'a','resources':{'limits':{"
     "'nvidia.com/gpu':'4'}}},{'name':'b','resources':{'limits':{'amd.com/gpu':8}}}]}}",
     "ml", &STS4, "PET_NPROC_PER_NODE=8\n", NULL},
    {"invalid subdomain",
     "{'metadata':{'name':'ddp-0','namespace':'ml','labels':{" LABEL "}," STS_OWNER "},"
     "'spec':{'subdomain':'Bad_x'," CTR "}}",
     "ml", &STS4, NULL, "spec.subdomain \"Bad_x\" is not a valid Service name"},
};

/* Checks that want ("N=V\n" lines) appear in env in this relative order. */
static int env_has_in_order(const struct env_list *env, const char *want, char *why, size_t n)
{
	size_t pos = 0;
	const char *line = want;

	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		int found = 0;

		for (; pos < env->n; pos++) {
			char buf[8192];
			snprintf(buf, sizeof(buf), "%s=%s", env->vars[pos].name,
			         env->vars[pos].value);
			if (strlen(buf) == len && strncmp(buf, line, len) == 0) {
				found = 1;
				pos++;
				break;
			}
		}
		if (!found) {
			snprintf(why, n, "missing or out of order: %.*s", (int)len, line);
			return 0;
		}
		line += len + (nl ? 1 : 0);
	}
	return 1;
}

/* The reason of a denial (the metrics label), by plan case name; the others only need one. */
static const struct {
	const char *name;
	enum deny_reason want;
} deny_reasons[] = {
    {"the API has only the namesake: denied", DENY_LOOKUP},
    {"look-up fails", DENY_LOOKUP},
    {"fresh read agrees the rank is too high", DENY_WORLD},
    {"jobset: a world-size annotation that disagrees", DENY_WORLD},
    {"jobset without look-ups: no world size", DENY_WORLD},
    {"world size unknown without look-ups", DENY_WORLD},
    {"elastic MIN above the world size", DENY_WORLD},
    {"jobset: a replicated Job that is not Indexed", DENY_WORKLOAD},
    {"job parallelism below completions", DENY_WORKLOAD},
    {"job not indexed per API", DENY_WORKLOAD},
    {"jobset labels that contradict the owner", DENY_IDENTITY},
    {"sts ordinal below start", DENY_IDENTITY},
    {"job pod without completion index", DENY_IDENTITY},
    {"job without subdomain or service", DENY_SERVICE},
    {"sts pod without subdomain speaks of serviceName", DENY_SERVICE},
    {"invalid subdomain", DENY_SERVICE},
    {"deployment pod refused", DENY_OWNER},
    {"a StatefulSet of another API group is not apps/v1's", DENY_OWNER},
    {"bare pod refused", DENY_OWNER},
    {"bad port", DENY_ANNOTATION},
    {"bad nproc", DENY_ANNOTATION},
    {"elastic MIN > MAX", DENY_ANNOTATION},
    {"containers names an unknown one", DENY_ANNOTATION},
};

static enum deny_reason want_reason(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(deny_reasons) / sizeof(deny_reasons[0]); i++)
		if (strcmp(deny_reasons[i].name, name) == 0)
			return deny_reasons[i].want;
	return DENY_NONE;
}

static void test_plans(void)
{
	struct config cfg;
	size_t i;

	config_defaults(&cfg);
	for (i = 0; i < sizeof(deny_reasons) / sizeof(deny_reasons[0]); i++) {
		size_t k;
		for (k = 0; k < sizeof(plan_cases) / sizeof(plan_cases[0]) &&
		            strcmp(plan_cases[k].name, deny_reasons[i].name) != 0;
		     k++)
			;
		CHECK(k < sizeof(plan_cases) / sizeof(plan_cases[0]) && plan_cases[k].want_deny,
		      "deny_reasons names a denied plan case: %s", deny_reasons[i].name);
	}
	for (i = 0; i < sizeof(plan_cases) / sizeof(plan_cases[0]); i++) {
		char *txt = dq(plan_cases[i].pod), err[512] = "", why[256] = "";
		cJSON *pod = cJSON_Parse(txt);
		struct workload_lookup lk = {table_get, (void *)plan_cases[i].lookup, NULL, NULL,
		                             NULL};
		struct pod_plan plan;
		enum plan_status st;

		CHECK(pod != NULL, "%s: test pod JSON does not parse", plan_cases[i].name);
		st = pod_plan_build(pod, plan_cases[i].req_ns, 0, &cfg,
		                    plan_cases[i].lookup ? &lk : NULL, &plan, err, sizeof(err));
		if (plan_cases[i].want_deny) {
			CHECK(st == PLAN_DENY && strstr(err, plan_cases[i].want_deny) != NULL &&
			          strncmp(err, "distenv: ", 9) == 0,
			      "%s: status %d, err '%s', want denial containing '%s'",
			      plan_cases[i].name, st, err, plan_cases[i].want_deny);
			CHECK(plan.topo.reason > DENY_NONE && plan.topo.reason < DENY_REASON_COUNT,
			      "%s: a denial has a reason", plan_cases[i].name);
			CHECK(want_reason(plan_cases[i].name) == DENY_NONE ||
			          plan.topo.reason == want_reason(plan_cases[i].name),
			      "%s: reason %s, want %s", plan_cases[i].name,
			      verdict_reason_name(plan.topo.reason),
			      verdict_reason_name(want_reason(plan_cases[i].name)));
		} else {
			CHECK(st == PLAN_OK, "%s: status %d err '%s'", plan_cases[i].name, st, err);
			if (st == PLAN_OK) {
				CHECK(env_has_in_order(&plan.env, plan_cases[i].want_env, why,
				                       sizeof(why)),
				      "%s: %s", plan_cases[i].name, why);
			}
		}
		if (st == PLAN_OK)
			pod_plan_free(&plan);
		cJSON_Delete(pod);
		free(txt);
	}
}

/* The exact patch for representative shapes. */
static const struct {
	const char *name;
	const char *pod;
	const char *want; /* exact JSON Patch, single-quoted */
} patch_cases[] = {
    {"no env, no annotations: whole array and annotations object",
     "{'metadata':{'name':'ddp-1','namespace':'ml','labels':{" LABEL "}," STS_OWNER "},"
     "'spec':{'subdomain':'ddp','containers':[{'name':'c'}]}}",
     "[{'op':'add','path':'/spec/containers/0/env','value':[{'name':'MASTER_ADDR','value':'" A_
     "'},{'name':'MASTER_PORT','value':'29500'},{'name':'RANK','value':'1'},{'name':'WORLD_SIZE',"
     "'value':'2'},{'name':'NODE_RANK','value':'1'},{'name':'NNODES','value':'2'},"
     "{'name':'PET_MASTER_ADDR','value':'" A_ "'},{'name':'PET_MASTER_PORT','value':"
     "'29500'},{'name':'PET_NNODES','value':'2'},{'name':'PET_NODE_RANK','value':'1'},{'name':"
     "'PET_NPROC_PER_NODE','value':'1'}]},{'op':'add','path':'/metadata/annotations','value':{"
     "'distenv.dev/injected':'rank=1,world-size=2,master=" A_ ":29500'}}]"},
    {"user env kept (its RANK, the pod's own), injected inserted before it, not duplicated",
     "{'metadata':{'name':'ddp-0','namespace':'ml','labels':{" LABEL
     "},'annotations':{'x':'y'}," STS_OWNER
     "},'spec':{'subdomain':'ddp','containers':[{'name':'c','env':[{'name':'RANK',"
     "'value':'0'},{'name':'A','value':'$(MASTER_ADDR)'}]}]}}",
     "[{'op':'add','path':'/spec/containers/0/env/0','value':{'name':'MASTER_ADDR','value':'" A_
     "'}},{'op':'add','path':'/spec/containers/0/env/1','value':{'name':'MASTER_PORT','value':"
     "'29500'}},{'op':'add','path':'/spec/containers/0/env/2','value':{'name':'WORLD_SIZE',"
     "'value':'2'}},{'op':'add','path':'/spec/containers/0/env/3','value':{'name':'NODE_RANK',"
     "'value':'0'}},{'op':'add','path':'/spec/containers/0/env/4','value':{'name':'NNODES',"
     "'value':'2'}},{'op':'add','path':'/spec/containers/0/env/5','value':{'name':"
     "'PET_MASTER_ADDR','value':'" A_ "'}},{'op':'add','path':'/spec/containers/0/env/6','value':"
     "{'name':'PET_MASTER_PORT','value':'29500'}},{'op':'add','path':'/spec/containers/0/env/7',"
     "'value':{'name':'PET_NNODES','value':'2'}},{'op':'add','path':'/spec/containers/0/env/8',"
     "'value':{'name':'PET_NODE_RANK','value':'0'}},{'op':'add','path':"
     "'/spec/containers/0/env/9','value':{'name':'PET_NPROC_PER_NODE','value':'1'}},{'op':'add',"
     "'path':'/metadata/annotations/distenv.dev~1injected','value':'rank=0,world-size=2,master=" A_
     ":29500'}]"},
    {"already injected: nothing to add (reinvocation)",
     "{'metadata':{'name':'ddp-0','namespace':'ml','labels':{" LABEL "},'annotations':{"
     "'distenv.dev/injected':'x'}," STS_OWNER "},'spec':{'subdomain':'ddp','containers':[{'name':"
     "'c','env':[{'name':'MASTER_ADDR','value':'a'},{'name':'MASTER_PORT','value':'1'},{'name':"
     "'RANK','value':'0'},{'name':'WORLD_SIZE','value':'2'},{'name':'NODE_RANK','value':'0'},"
     "{'name':'NNODES','value':'2'},{'name':'PET_MASTER_ADDR','value':'a'},"
     "{'name':'PET_MASTER_PORT','value':'1'},{'name':'PET_NNODES','value':'2'},"
     "{'name':'PET_NODE_RANK','value':'0'},{'name':'PET_NPROC_PER_NODE','value':'1'}]}]}}",
     "[]"},
    {"containers annotation with an init container, job service sets subdomain",
     "{'metadata':{'generateName':'train-0-','labels':{" LABEL "},'annotations':{"
     "'batch.kubernetes.io/job-completion-index':'0','distenv.dev/service':'train',"
     "'distenv.dev/containers':'setup, main','distenv.dev/frameworks':'jax'}," JOB_OWNER "},"
     "'spec':{'initContainers':[{'name':'setup'}],'containers':[{'name':'side'},{'name':'main'}]}}",
     "[{'op':'add','path':'/spec/initContainers/0/env','value':[{'name':'JAX_COORDINATOR_ADDRESS',"
     "'value':'" J_ ":29500'},{'name':'JAX_NUM_PROCESSES','value':'2'},{'name':'JAX_PROCESS_ID',"
     "'value':'0'}]},{'op':'add','path':'/spec/containers/1/env','value':[{'name':"
     "'JAX_COORDINATOR_ADDRESS','value':'" J_ ":29500'},{'name':'JAX_NUM_PROCESSES','value':'2'},"
     "{'name':'JAX_PROCESS_ID','value':'0'}]},{'op':'add','path':'/spec/subdomain','value':"
     "'train'},{'op':'add','path':'/metadata/annotations/distenv.dev~1injected','value':"
     "'rank=0,world-size=2,master=" J_ ":29500'}]"},
};

/*
 * A denial names every problem distenv can know, the annotations first, and
 * nothing that is only a bad value's echo: compared whole.
 */
static const struct {
	const char *name, *pod;
	const struct lookup_answer *lookup; /* NULL: look-ups off */
	enum deny_reason reason;
	const char *want;
} denial_cases[] = {
    {"a bad nproc and no world size: both", STS_POD("1", "'distenv.dev/nproc-per-node':'0'", ""),
     NULL, DENY_ANNOTATION,
     "distenv: annotation distenv.dev/nproc-per-node: \"0\" is not a whole number between 1 and "
     "4096 (or auto, gpu, cpu); the world size of StatefulSet ml/ddp is not known: set the "
     "annotation distenv.dev/world-size (look-ups of the workload are turned off)"},
    {"two bad values, in the pod's order",
     STS_POD("1", "'distenv.dev/port':'0','distenv.dev/frameworks':'pytorch,mxnet'", ""), &STS4,
     DENY_ANNOTATION,
     "distenv: annotation distenv.dev/port: \"0\" is not a port number between 1 and 65535; "
     "annotation distenv.dev/frameworks: \"pytorch,mxnet\" is not a comma list of pytorch, "
     "tensorflow, jax, xgboost, paddle, tpu"},
    {"a bad world size is not echoed as an unknown world",
     STS_POD("1", "'distenv.dev/world-size':'x'", ""), NULL, DENY_ANNOTATION,
     "distenv: annotation distenv.dev/world-size: \"x\" is not a world size between 1 and "
     "65536"},
    {"a bad value and an API that cannot be reached",
     STS_POD("1", "'distenv.dev/elastic':'4:2'", ""), &FAILS, DENY_ANNOTATION,
     "distenv: annotation distenv.dev/elastic: \"4:2\" has MIN greater than MAX; cannot read "
     "StatefulSet ml/ddp from the Kubernetes API (connection refused), so the world size is not "
     "known; retry, or check the webhook's access to the API"},
    {"a missing container and a rank past the world",
     STS_POD("5", "'distenv.dev/containers':'nope'", ""), &STS4, DENY_ANNOTATION,
     "distenv: annotation distenv.dev/containers: the pod has no container or init container "
     "named \"nope\"; rank 5 of StatefulSet ml/ddp is not below the world size 4: scale the "
     "workload and distenv.dev/world-size together"},
    {"a bad Service name is not echoed as a missing subdomain",
     JOB_POD("0", ",'distenv.dev/service':'Bad_Name','distenv.dev/world-size':'2'", ""), NULL,
     DENY_ANNOTATION,
     "distenv: annotation distenv.dev/service: \"Bad_Name\" is not a valid Service name"},
    {"a pod of a Job whose name has a dot: the host it would have is named, and why not",
     "{'metadata':{'generateName':'train.v2-1-','labels':{" LABEL "},'annotations':{'batch."
     "kubernetes.io/job-completion-index':'1','distenv.dev/world-size':'2'},'ownerReferences':"
     "[{'apiVersion':'batch/v1','kind':'Job','name':'train.v2','uid':'u-t','controller':true}]"
     "},'spec':{'hostname':'train.v2-1','subdomain':'train'," CTR "}}",
     NULL, DENY_LIMIT,
     "distenv: Job ml/train.v2: the hostname of rank 1, train.v2-1, has a dot, which a pod's "
     "hostname (one DNS label) cannot: name the workload without dots"},
    {"a Job pod whose spec.hostname another webhook rewrote",
     "{'metadata':{'generateName':'train-1-','labels':{" LABEL "},'annotations':{'batch."
     "kubernetes.io/job-completion-index':'1','distenv.dev/world-size':'4'}," JOB_OWNER "},"
     "'spec':{'hostname':'custom','subdomain':'train'," CTR "}}",
     NULL, DENY_IDENTITY,
     "distenv: the pod's own name custom (spec.hostname) is not train-1, the host distenv "
     "derives for rank 1 of Job ml/train, so the addresses it derives for the other ranks "
     "cannot be trusted: leave the pod's name as the Job's controllers set it (another "
     "webhook or controller renamed it)"},
    {"a StatefulSet pod named by its name, whose index label says another ordinal",
     "{'metadata':{'name':'ddp-3','namespace':'ml','labels':{" LABEL ",'apps.kubernetes.io/"
     "pod-index':'2'},'annotations':{'distenv.dev/world-size':'4'}," STS_OWNER "},'spec':{"
     "'subdomain':'ddp'," CTR "}}",
     NULL, DENY_IDENTITY,
     "distenv: the pod's own name ddp-3 (metadata.name) is not ddp-2, the host distenv "
     "derives for rank 2 of StatefulSet ml/ddp, so the addresses it derives for the other "
     "ranks cannot be trusted: leave the pod's name as the StatefulSet's controllers set "
     "it (another webhook or controller renamed it)"},
    {"a JobSet pod renamed: its hostname is not <js>-<rjob>-<j>-<i>",
     "{'metadata':{'generateName':'js-a-0-1-','namespace':'ml','labels':{" LABEL
     ",'jobset.sigs.k8s.io/jobset-name':'js','jobset.sigs.k8s.io/replicatedjob-name':'a',"
     "'jobset.sigs.k8s.io/job-index':'0','jobset.sigs.k8s.io/jobset-uid':'u-js',"
     "'jobset.sigs.k8s.io/replicatedjob-replicas':'2','jobset.sigs.k8s.io/global-replicas':'2',"
     "'batch.kubernetes.io/job-completion-index':'1'},'annotations':{'batch.kubernetes.io/"
     "job-completion-index':'1','distenv.dev/world-size':'4'},'ownerReferences':[{'apiVersion':"
     "'batch/v1','kind':'Job','name':'js-a-0','uid':'u-job','controller':true}]},'spec':{"
     "'hostname':'js-a-0-1-x','subdomain':'js'," CTR "}}",
     NULL, DENY_IDENTITY,
     "distenv: the pod's own name js-a-0-1-x (spec.hostname) is not js-a-0-1, the host "
     "distenv derives for rank 1 of JobSet ml/js, so the addresses it derives for the "
     "other ranks cannot be trusted: leave the pod's name as the JobSet's controllers set "
     "it (another webhook or controller renamed it)"},
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
    {"no problem with the annotations: the step's own reason",
     STS_POD("1", "'distenv.dev/port':'80'", ""), NULL, DENY_WORLD,
     "distenv: the world size of StatefulSet ml/ddp is not known: set the annotation "
     "distenv.dev/world-size (look-ups of the workload are turned off)"},
};

static void test_denials(void)
{
	struct config cfg;
	size_t i;

	config_defaults(&cfg);
	for (i = 0; i < sizeof(denial_cases) / sizeof(denial_cases[0]); i++) {
		char *txt = dq(denial_cases[i].pod), err[1024] = "";
		cJSON *pod = cJSON_Parse(txt);
		struct workload_lookup lk = {table_get, (void *)denial_cases[i].lookup, NULL, NULL,
		                             NULL};
		struct pod_plan plan;
		enum plan_status st;

		st = pod_plan_build(pod, "ml", 0, &cfg, denial_cases[i].lookup ? &lk : NULL, &plan,
		                    err, sizeof(err));
		CHECK(st == PLAN_DENY && strcmp(err, denial_cases[i].want) == 0,
		      "%s: status %d\n  got  '%s'\n  want '%s'", denial_cases[i].name, st, err,
		      denial_cases[i].want);
		CHECK(st != PLAN_DENY || plan.topo.reason == denial_cases[i].reason,
		      "%s: reason %s, want %s", denial_cases[i].name,
		      verdict_reason_name(plan.topo.reason),
		      verdict_reason_name(denial_cases[i].reason));
		if (st == PLAN_OK)
			pod_plan_free(&plan);
		cJSON_Delete(pod);
		free(txt);
	}
}

static void test_patches(void)
{
	struct config cfg;
	struct lookup_answer two = {0, WSPEC(2, 0, 2, 2, 1, ""), NULL};
	struct workload_lookup lk = {table_get, &two, NULL, NULL, NULL};
	size_t i;

	config_defaults(&cfg);
	cfg.default_frameworks = FW_PYTORCH;
	for (i = 0; i < sizeof(patch_cases) / sizeof(patch_cases[0]); i++) {
		char *txt = dq(patch_cases[i].pod), *want = dq(patch_cases[i].want), *got = NULL;
		cJSON *pod = cJSON_Parse(txt);
		struct pod_plan plan;
		char err[512] = "";

		CHECK(pod != NULL, "%s: test pod JSON does not parse", patch_cases[i].name);
		if (pod_plan_build(pod, "default", 0, &cfg, &lk, &plan, err, sizeof(err)) ==
		    PLAN_OK) {
			got = strdup(plan.patch.buf);
			CHECK_STR(got, want, patch_cases[i].name);
			pod_plan_free(&plan);
		} else {
			CHECK(0, "%s: plan failed: %s", patch_cases[i].name, err);
		}
		free(got);
		cJSON_Delete(pod);
		free(txt);
		free(want);
	}
}

#define REVIEW(req)                                                                                \
	"{'apiVersion':'admission.k8s.io/v1','kind':'AdmissionReview','request':" req "}"
#define PODKIND "'kind':{'group':'','version':'v1','kind':'Pod'}"

static const struct {
	const char *name;
	const char *body; /* single-quoted JSON, or raw when it starts with '!' */
	int status;
	enum admission_outcome outcome;
	const char *want_in_body;
} review_cases[] = {
    {"not JSON", "!{nope", 400, ADMISSION_BAD_REQUEST, "not valid JSON"},
    {"empty body", "!", 400, ADMISSION_BAD_REQUEST, "not valid JSON"},
    {"JSON but not a review", "{'a':1}", 400, ADMISSION_BAD_REQUEST, "not an AdmissionReview"},
    {"v1beta1 review",
     "{'apiVersion':'admission.k8s.io/v1beta1','kind':'AdmissionReview',"
     "'request':{'uid':'u'}}",
     400, ADMISSION_BAD_REQUEST, "admission.k8s.io/v1"},
    {"no uid", REVIEW("{" PODKIND ",'operation':'CREATE'}"), 400, ADMISSION_BAD_REQUEST,
     "request.uid"},
    {"empty uid", REVIEW("{'uid':''}"), 400, ADMISSION_BAD_REQUEST, "request.uid"},
    {"uid of 128 characters",
     REVIEW("{'uid':'"
            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
            "'}"),
     400, ADMISSION_BAD_REQUEST, "request.uid is 128 characters long, more than 127"},
    {"non-Pod object",
     REVIEW("{'uid':'u1','kind':{'group':'apps','version':'v1','kind':"
            "'StatefulSet'},'operation':'CREATE','object':{'metadata':{}}}"),
     200, ADMISSION_SKIPPED, "{\"uid\":\"u1\",\"allowed\":true}"},
    {"UPDATE",
     REVIEW("{'uid':'u2'," PODKIND ",'operation':'UPDATE','object':" STS_POD("0", "", "") "}"), 200,
     ADMISSION_SKIPPED, "\"allowed\":true}"},
    {"unlabelled pod",
     REVIEW("{'uid':'u3'," PODKIND ",'operation':'CREATE','object':{'metadata':"
            "{'name':'x'},'spec':{" CTR "}}}"),
     200, ADMISSION_SKIPPED, "\"allowed\":true}"},
    {"label not true",
     REVIEW("{'uid':'u4'," PODKIND ",'operation':'CREATE','object':{'metadata':"
            "{'labels':{'distenv.dev/inject':'false'}},'spec':{" CTR "}}}"),
     200, ADMISSION_SKIPPED, "\"allowed\":true}"},
    {"denied",
     REVIEW("{'uid':'u5'," PODKIND
            ",'operation':'CREATE','namespace':'ml','object':" STS_POD("0", "", "") "}"),
     200, ADMISSION_DENIED,
     "\"allowed\":false,\"status\":{\"code\":403,\"reason\":\"Forbidden\",\"message\":\"distenv: "},
    {"uid and message are escaped",
     "!{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
     "\"uid\":\"q\\\"b\\\\s\\u0001\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
     "\"operation\":\"CREATE\",\"namespace\":\"ml\",\"object\":{\"metadata\":{\"name\":\"p\\\"q\","
     "\"labels\":{\"distenv.dev/"
     "inject\":\"true\"}},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}}}",
     200, ADMISSION_DENIED, "{\"uid\":\"q\\\"b\\\\s\\u0001\",\"allowed\":false"},
    {"patched",
     REVIEW("{'uid':'u6'," PODKIND ",'operation':'CREATE','namespace':'ml','object':" STS_POD(
         "0", "'distenv.dev/world-size':'1'", "") "}"),
     200, ADMISSION_PATCHED, "\"allowed\":true,\"patchType\":\"JSONPatch\",\"patch\":\"W3"},
};

static void test_reviews(void)
{
	struct config cfg;
	size_t i;

	config_defaults(&cfg);
	for (i = 0; i < sizeof(review_cases) / sizeof(review_cases[0]); i++) {
		const char *b = review_cases[i].body;
		char *txt = b[0] == '!' ? strdup(b + 1) : dq(b);
		struct admission_result res;
		int rc = admission_handle(txt, strlen(txt), &cfg, NULL, &res);

		CHECK(rc == 0, "%s: rc %d", review_cases[i].name, rc);
		CHECK(res.http_status == review_cases[i].status, "%s: status %d want %d",
		      review_cases[i].name, res.http_status, review_cases[i].status);
		CHECK(res.outcome == review_cases[i].outcome, "%s: outcome %s want %s",
		      review_cases[i].name, verdict_outcome_name(res.outcome),
		      verdict_outcome_name(review_cases[i].outcome));
		CHECK(res.body != NULL && strstr(res.body, review_cases[i].want_in_body) != NULL,
		      "%s: body %s lacks %s", review_cases[i].name, res.body ? res.body : "(null)",
		      review_cases[i].want_in_body);
		if (res.http_status == 200) {
			static const char env[] =
			    "{\"apiVersion\":\"admission.k8s.io/v1\","
			    "\"kind\":\"AdmissionReview\",\"response\":{\"uid\":";
			CHECK(res.body && strncmp(res.body, env, sizeof(env) - 1) == 0,
			      "%s: envelope %s", review_cases[i].name, res.body);
		}
		admission_result_free(&res);
		free(txt);
	}
}

/* Truncating a valid review at every length must never crash and always answer. */
static void test_truncations(void)
{
	struct config cfg;
	char *txt = dq(REVIEW("{'uid':'u6'," PODKIND ",'operation':'CREATE','namespace':'ml',"
	                      "'object':" STS_POD("0", "'distenv.dev/world-size':'1'", "") "}"));
	size_t n, len = strlen(txt);
	int bad = 0;

	config_defaults(&cfg);
	for (n = 0; n < len; n++) {
		struct admission_result res;
		if (admission_handle(txt, n, &cfg, NULL, &res) != 0 || res.http_status != 400)
			bad++;
		admission_result_free(&res);
	}
	CHECK(bad == 0, "%d truncated bodies were not answered 400", bad);
	free(txt);
}

/* The plan of an opted-in StatefulSet pod NAME-ORD in ns NS of world W with extra annotations. */
static enum plan_status plan_sts_sized(const char *name, const char *ns, long ord, long w,
                                       const char *anns, size_t pod_bytes, struct pod_plan *plan,
                                       char *err, size_t errlen);

static enum plan_status plan_sts(const char *name, const char *ns, long ord, long w,
                                 const char *anns, struct pod_plan *plan, char *err, size_t errlen)
{
	return plan_sts_sized(name, ns, ord, w, anns, 0, plan, err, errlen);
}

/* plan_sts for a pod of pod_bytes (0: its JSON's own length). */
static enum plan_status plan_sts_sized(const char *name, const char *ns, long ord, long w,
                                       const char *anns, size_t pod_bytes, struct pod_plan *plan,
                                       char *err, size_t errlen)
{
	char buf[2048];
	cJSON *pod;
	enum plan_status st;
	struct config cfg;

	config_defaults(&cfg);
	snprintf(
	    buf, sizeof(buf),
	    "{\"metadata\":{\"name\":\"%s-%ld\",\"namespace\":\"%s\",\"labels\":{\"distenv.dev/"
	    "inject\":\"true\"},\"annotations\":{\"distenv.dev/world-size\":\"%ld\"%s},"
	    "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\","
	    "\"name\":\"%s\",\"controller\":true}]},\"spec\":{\"hostname\":\"%s-%ld\","
	    "\"subdomain\":\"%s\",\"containers\":[{\"name\":\"train\",\"image\":\"x\"}]}}",
	    name, ord, ns, w, anns, name, name, ord, name);
	pod = cJSON_Parse(buf);
	st = pod_plan_build(pod, ns, pod_bytes ? pod_bytes : strlen(buf), &cfg, NULL, plan, err,
	                    errlen);
	cJSON_Delete(pod);
	return st;
}

static const char *plan_var(const struct pod_plan *plan, const char *name)
{
	size_t i;

	for (i = 0; i < plan->env.n; i++)
		if (strcmp(plan->env.vars[i].name, name) == 0)
			return plan->env.vars[i].value;
	return NULL;
}

/* 1 when every injected "NAME=value" fits what execve() accepts. */
static int plan_exec_safe(const struct pod_plan *plan)
{
	size_t i;

	for (i = 0; i < plan->env.n; i++)
		if (strlen(plan->env.vars[i].name) + 1 + strlen(plan->env.vars[i].value) + 1 >
		    ENV_STRING_MAX)
			return 0;
	return 1;
}

/* TF_CONFIG: well formed up to the exec limit, left out past it by default, denied when asked. */
static void test_large_world(void)
{
	struct pod_plan plan;
	char err[512];
	const char *tfv, *marker;
	cJSON *tf;
	long lo = 1, hi = 65536;

	/* 1,024 ranks: TF_CONFIG with every host, exec-safe */
	if (plan_sts("ddp", "ml", 1023, 1024, "", &plan, err, sizeof(err)) == PLAN_OK) {
		tfv = plan_var(&plan, "TF_CONFIG");
		tf = tfv ? cJSON_Parse(tfv) : NULL;
		CHECK(tf != NULL, "TF_CONFIG of 1024 ranks does not parse");
		CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(tf, "cluster"),
		                                             "worker")) == 1024,
		      "TF_CONFIG worker count");
		CHECK(tf &&
		          cJSON_GetObjectItem(cJSON_GetObjectItem(tf, "task"), "index")->valueint ==
		              1023,
		      "TF_CONFIG index");
		CHECK(plan.n_warnings == 0 && plan.omitted[0] == '\0',
		      "1024 ranks: nothing omitted");
		cJSON_Delete(tf);
		pod_plan_free(&plan);
	} else {
		CHECK(0, "1024 ranks: %s", err);
	}

	/* the case: llama-pretrain in research, 2,048 ranks, default frameworks */
	if (plan_sts("llama-pretrain", "research", 5, 2048, "", &plan, err, sizeof(err)) ==
	    PLAN_OK) {
		CHECK(plan_var(&plan, "TF_CONFIG") == NULL, "2048 ranks: TF_CONFIG left out");
		CHECK(plan_var(&plan, "MASTER_ADDR") != NULL &&
		          strcmp(plan_var(&plan, "WORLD_SIZE"), "2048") == 0,
		      "2048 ranks: pytorch variables stay");
		CHECK(plan_exec_safe(&plan), "2048 ranks: every variable exec-safe");
		CHECK(plan.n_warnings == 1 && strstr(plan.warnings[0], "TF_CONFIG left out") &&
		          strstr(plan.warnings[0], "2048 ranks") &&
		          strlen(plan.warnings[0]) < PLAN_WARNING_LEN,
		      "2048 ranks: warning '%s'", plan.n_warnings ? plan.warnings[0] : "");
		CHECK(strcmp(plan.omitted, "TF_CONFIG") == 0, "2048 ranks: omitted");
		marker = NULL;
		{
			const cJSON *op;
			cJSON *patch = cJSON_Parse(plan.patch.buf);
			cJSON_ArrayForEach(op, patch)
			{
				if (strcmp(json_str(op, "path"),
				           "/metadata/annotations/distenv.dev~1injected") == 0)
					marker = json_str(op, "value");
			}
			CHECK(marker != NULL && strstr(marker, ",omitted=TF_CONFIG") != NULL,
			      "2048 ranks: marker '%s'", marker ? marker : "");
			cJSON_Delete(patch);
		}
		pod_plan_free(&plan);
	} else {
		CHECK(0, "2048 ranks: %s", err);
	}

	/* asked for tensorflow by annotation: denied, naming the limit and the world */
	CHECK(plan_sts("llama-pretrain", "research", 5, 2048,
	               ",\"distenv.dev/frameworks\":\"pytorch,tensorflow\"", &plan, err,
	               sizeof(err)) == PLAN_DENY &&
	          strstr(err, "131072") && strstr(err, "2048") && strstr(err, "TF_CONFIG") &&
	          strstr(err, "distenv.dev/frameworks"),
	      "asked tensorflow: '%s'", err);

	/* the largest world whose TF_CONFIG fits, for ddp in ml (docs/environment.md's figure) */
	while (lo < hi) {
		long mid = (lo + hi + 1) / 2;
		if (plan_sts("ddp", "ml", 0, mid, "", &plan, err, sizeof(err)) != PLAN_OK)
			break;
		if (plan_var(&plan, "TF_CONFIG") != NULL)
			lo = mid;
		else
			hi = mid - 1;
		pod_plan_free(&plan);
	}
	printf("core: the largest TF_CONFIG world for StatefulSet ddp in ml is %ld ranks\n", lo);
	/* docs/environment.md's figure, exactly: a change of TF_CONFIG's size must change it */
	CHECK(lo == 3145, "ddp/ml TF_CONFIG limit %ld, docs/environment.md says 3,145", lo);
	if (plan_sts("ddp", "ml", 0, lo, "", &plan, err, sizeof(err)) == PLAN_OK) {
		CHECK(strlen(plan_var(&plan, "TF_CONFIG")) + strlen("TF_CONFIG=") + 1 <=
		          ENV_STRING_MAX,
		      "at the limit TF_CONFIG fits");
		pod_plan_free(&plan);
	}
	/* and one rank more: left out */
	if (plan_sts("ddp", "ml", 0, lo + 1, "", &plan, err, sizeof(err)) == PLAN_OK) {
		CHECK(plan_var(&plan, "TF_CONFIG") == NULL, "ddp/ml: TF_CONFIG kept at %ld ranks",
		      lo + 1);
		pod_plan_free(&plan);
	}
	/* docs/environment.md's second figure: llama-pretrain in research */
	for (lo = 1, hi = 65536; lo < hi;) {
		long mid = (lo + hi + 1) / 2;
		if (plan_sts("llama-pretrain", "research", 0, mid, "", &plan, err, sizeof(err)) !=
		    PLAN_OK)
			break;
		if (plan_var(&plan, "TF_CONFIG") != NULL)
			lo = mid;
		else
			hi = mid - 1;
		pod_plan_free(&plan);
	}
	printf(
	    "core: the largest TF_CONFIG world for StatefulSet llama-pretrain in research is %ld "
	    "ranks\n",
	    lo);
	CHECK(lo == 1887,
	      "llama-pretrain/research TF_CONFIG limit %ld, docs/environment.md says 1,887", lo);

	/* 65,536 ranks (docs/environment.md's maximum): pytorch and jax only, exec-safe, storable
	 */
	if (plan_sts("ddp", "ml", 65535, 65536, "", &plan, err, sizeof(err)) == PLAN_OK) {
		CHECK(plan_exec_safe(&plan) && plan_var(&plan, "TF_CONFIG") == NULL,
		      "65536 ranks: exec-safe");
		pod_plan_free(&plan);
	} else {
		CHECK(0, "65536 ranks: %s", err);
	}
}

/* What the plan counts the patch to add: each "NAME=value" with its NUL, plus 64 per entry. */
static size_t plan_patch_estimate(const struct pod_plan *plan)
{
	size_t i, n = 0;
	int k;

	for (k = 0; k < plan->topo.n_targets; k++) {
		const struct env_list *l = pod_plan_target_env(plan, k);
		for (i = 0; i < l->n; i++)
			n += strlen(l->vars[i].name) + 1 + strlen(l->vars[i].value) + 1 + 64;
	}
	return n;
}

/*
 * The pod with its patch stays within POD_BYTES_MAX (1.125 MiB), exactly, both
 * branches: at the limit TF_CONFIG stays; one byte past it a default TF_CONFIG
 * is left out with a warning, and a pod that asked for TensorFlow (or one still
 * over without it) is denied naming the limit and what to do.
 */
static void test_pod_budget(void)
{
	static const char asked[] = ",\"distenv.dev/frameworks\":\"pytorch,tensorflow\"";
	struct pod_plan plan;
	char err[512];
	size_t patch, at;

	CHECK(POD_BYTES_MAX == 1152 * 1024, "POD_BYTES_MAX %d, docs/environment.md says 1.125 MiB",
	      POD_BYTES_MAX);
	if (plan_sts("ddp", "ml", 3, 1024, "", &plan, err, sizeof(err)) != PLAN_OK) {
		CHECK(0, "1024 ranks: %s", err);
		return;
	}
	CHECK(plan_var(&plan, "TF_CONFIG") != NULL, "1024 ranks: TF_CONFIG kept");
	patch = plan_patch_estimate(&plan);
	pod_plan_free(&plan);
	at = POD_BYTES_MAX - patch; /* the largest pod that keeps every variable */

	/* at the limit: every variable, no warning */
	if (plan_sts_sized("ddp", "ml", 3, 1024, "", at, &plan, err, sizeof(err)) == PLAN_OK) {
		CHECK(plan_var(&plan, "TF_CONFIG") != NULL && plan.n_warnings == 0 &&
		          plan.omitted[0] == '\0',
		      "a pod of %zu bytes plus a %zu-byte patch: TF_CONFIG left out (%s)", at,
		      patch, plan.n_warnings ? plan.warnings[0] : "no warning");
		pod_plan_free(&plan);
	} else {
		CHECK(0, "a pod of %zu bytes at the limit: %s", at, err);
	}
	/* one byte past it, TensorFlow only a default: TF_CONFIG left out, warned, the rest kept */
	if (plan_sts_sized("ddp", "ml", 3, 1024, "", at + 1, &plan, err, sizeof(err)) == PLAN_OK) {
		CHECK(plan_var(&plan, "TF_CONFIG") == NULL &&
		          strcmp(plan_var(&plan, "WORLD_SIZE"), "1024") == 0 &&
		          strcmp(plan.omitted, "TF_CONFIG") == 0 && plan.n_warnings == 1 &&
		          strstr(plan.warnings[0], "TF_CONFIG left out") &&
		          strstr(plan.warnings[0], "1179648") &&
		          strlen(plan.warnings[0]) < PLAN_WARNING_LEN,
		      "one byte past the limit: TF_CONFIG %s, warning '%s'",
		      plan_var(&plan, "TF_CONFIG") ? "kept" : "left out",
		      plan.n_warnings ? plan.warnings[0] : "");
		pod_plan_free(&plan);
	} else {
		CHECK(0, "one byte past the limit, TensorFlow a default: %s", err);
	}
	/* asked for TensorFlow: allowed at the limit, denied one byte past it */
	if (plan_sts_sized("ddp", "ml", 3, 1024, asked, at, &plan, err, sizeof(err)) == PLAN_OK) {
		CHECK(plan_var(&plan, "TF_CONFIG") != NULL, "asked, at the limit: TF_CONFIG");
		pod_plan_free(&plan);
	} else {
		CHECK(0, "asked for TensorFlow, at the limit: %s", err);
	}
	CHECK(plan_sts_sized("ddp", "ml", 3, 1024, asked, at + 1, &plan, err, sizeof(err)) ==
	              PLAN_DENY &&
	          strncmp(err, "distenv: ", 9) == 0 && strstr(err, "1179648") &&
	          strstr(err, "drop tensorflow") && strstr(err, "distenv.dev/containers"),
	      "asked for TensorFlow, one byte past the limit: '%s'", err);
	/* still over without TF_CONFIG: denied */
	CHECK(plan_sts_sized("ddp", "ml", 3, 1024, "", POD_BYTES_MAX, &plan, err, sizeof(err)) ==
	              PLAN_DENY &&
	          strstr(err, "1179648") && strstr(err, "distenv.dev/containers"),
	      "a pod of the limit's own size: '%s'", err);
}

/*
 * /mutate denies a pod when any rank's host name would pass 63 characters (a
 * DNS label): StatefulSet names of 59 and 60 characters with 1,000 ranks, the
 * last host <name>-999 is 63 and 64 characters long; the pod itself (rank 1)
 * is fine in both.
 */
static void test_host_label(void)
{
	struct pod_plan plan;
	char name[64], err[512];

	memset(name, 'a', sizeof(name));
	name[59] = '\0';
	if (plan_sts(name, "ml", 1, 1000, "", &plan, err, sizeof(err)) == PLAN_OK)
		pod_plan_free(&plan);
	else
		CHECK(0, "a last host of 63 characters: denied: %s", err);
	name[59] = 'a';
	name[60] = '\0';
	CHECK(plan_sts(name, "ml", 1, 1000, "", &plan, err, sizeof(err)) == PLAN_DENY &&
	          strncmp(err, "distenv: ", 9) == 0 && strstr(err, "rank 999") &&
	          strstr(err, "is 64 characters, above a DNS label's 63: shorten the names"),
	      "a last host of 64 characters: '%s'", err);
	CHECK(plan.topo.reason == DENY_LIMIT, "a last host of 64 characters: reason %d",
	      (int)plan.topo.reason);
}

/* A StatefulSet pod of world w with n containers, planned under cfg. */
static enum plan_status plan_limited(const struct config *cfg, int n, long w, char *err,
                                     size_t errlen)
{
	struct strbuf sb;
	struct pod_plan plan;
	enum plan_status st;
	cJSON *pod;
	int i;

	strbuf_init(&sb);
	strbuf_printf(&sb,
	              "{\"metadata\":{\"name\":\"ddp-1\",\"namespace\":\"ml\",\"labels\":{"
	              "\"distenv.dev/inject\":\"true\"},\"annotations\":{\"distenv.dev/"
	              "world-size\":\"%ld\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\","
	              "\"kind\":\"StatefulSet\",\"name\":\"ddp\",\"controller\":true}]},"
	              "\"spec\":{\"hostname\":\"ddp-1\",\"subdomain\":\"ddp\",\"containers\":[",
	              w);
	for (i = 0; i < n; i++)
		strbuf_printf(&sb, "%s{\"name\":\"c%d\",\"image\":\"x\"}", i ? "," : "", i);
	strbuf_puts(&sb, "]}}");
	pod = cJSON_Parse(sb.buf);
	st = pod_plan_build(pod, "ml", sb.len, cfg, NULL, &plan, err, errlen);
	if (st == PLAN_OK)
		pod_plan_free(&plan);
	cJSON_Delete(pod);
	strbuf_free(&sb);
	return st;
}

/* limits.maxContainers and limits.maxWorldSize, each at and one past its value. */
static void test_config_limits(void)
{
	struct config cfg;
	char err[512];

	config_defaults(&cfg);
	cfg.max_containers = 3;
	cfg.max_world_size = 8;
	CHECK(plan_limited(&cfg, 3, 8, err, sizeof(err)) == PLAN_OK,
	      "3 containers, world 8, at both limits: %s", err);
	CHECK(plan_limited(&cfg, 4, 8, err, sizeof(err)) == PLAN_DENY &&
	          strstr(err, "4 containers, more than the limit of 3"),
	      "4 containers, limit 3: '%s'", err);
	CHECK(plan_limited(&cfg, 1, 9, err, sizeof(err)) == PLAN_DENY &&
	          strstr(err, "\"9\" is not a world size between 1 and 8"),
	      "world 9, limit 8: '%s'", err);
}

/* A container env of n entries "E0".."En-1", plus extra (single-quoted JSON entries). */
static char *env_pod_named(int n, const char *name_fmt, const char *extra)
{
	struct strbuf sb;
	int i;

	strbuf_init(&sb);
	strbuf_puts(&sb, "{\"metadata\":{\"name\":\"ddp-1\",\"namespace\":\"ml\","
	                 "\"labels\":{\"distenv.dev/inject\":\"true\"},\"annotations\":{"
	                 "\"distenv.dev/world-size\":\"2\"},\"ownerReferences\":[{\"kind\":"
	                 "\"StatefulSet\",\"apiVersion\":\"apps/v1\",\"name\":\"ddp\","
	                 "\"controller\":true}]},\"spec\":{\"subdomain\":\"ddp\",\"containers\":["
	                 "{\"name\":\"t\",\"env\":[");
	for (i = 0; i < n; i++) {
		strbuf_puts(&sb, i ? ",{\"name\":\"" : "{\"name\":\"");
		strbuf_printf(&sb, name_fmt, i);
		strbuf_puts(&sb, "\",\"value\":\"v\"}");
	}
	if (extra != NULL) {
		char *q = dq(extra);
		strbuf_printf(&sb, "%s%s", n ? "," : "", q);
		free(q);
	}
	strbuf_puts(&sb, "]}]}}");
	return strbuf_take(&sb);
}

/* The pod of env_pod_named with entries E0, E1, ... */
static char *env_pod(int n, const char *extra)
{
	return env_pod_named(n, "E%d", extra);
}

/* Applies the add-ops of plan's patch to the env of container 0 (the only shape env_pod makes). */
static void apply_env_ops(cJSON *pod, const cJSON *patch)
{
	cJSON *env = cJSON_GetObjectItem(
	    cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "spec"), "containers"),
	                       0),
	    "env");
	cJSON *anns = cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "metadata"), "annotations");
	cJSON *merged = cJSON_CreateArray(), *e;
	const cJSON *op;
	int pos = 0;

	/* The ops insert at 0, 1, 2, ... in order: the result is they, then the old entries. */
	cJSON_ArrayForEach(op, patch)
	{
		const char *path = json_str(op, "path");
		const char *slash = strrchr(path, '/');
		if (strncmp(path, "/spec/containers/0/env/", 23) == 0) {
			CHECK(atoi(slash + 1) == pos++, "env op %s out of order", path);
			cJSON_AddItemToArray(merged,
			                     cJSON_Duplicate(cJSON_GetObjectItem(op, "value"), 1));
		} else if (strcmp(path, "/metadata/annotations/distenv.dev~1injected") == 0)
			cJSON_AddItemToObject(anns, "distenv.dev/injected",
			                      cJSON_Duplicate(cJSON_GetObjectItem(op, "value"), 1));
	}
	cJSON_ArrayForEach(e, env) cJSON_AddItemToArray(merged, cJSON_Duplicate(e, 1));
	cJSON_ReplaceItemInObject(
	    cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "spec"), "containers"),
	                       0),
	    "env", merged);
}

/* Reinvocation at the env limit: 4,090 entries patched to 4,100 are then allowed unchanged. */
static void test_reinvocation_at_limit(void)
{
	struct config cfg;
	struct pod_plan plan;
	char err[512], *txt = env_pod(4090, NULL);
	cJSON *pod = cJSON_Parse(txt);
	int n;

	config_defaults(&cfg);
	CHECK(pod_plan_build(pod, "ml", 0, &cfg, NULL, &plan, err, sizeof(err)) == PLAN_OK,
	      "4090 entries: %s", err);
	{
		cJSON *patch = cJSON_Parse(plan.patch.buf);
		apply_env_ops(pod, patch);
		cJSON_Delete(patch);
	}
	pod_plan_free(&plan);
	n = cJSON_GetArraySize(cJSON_GetObjectItem(
	    cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "spec"), "containers"),
	                       0),
	    "env"));
	CHECK(n > cfg.max_env_per_container, "patched to %d entries, above the limit", n);
	CHECK(pod_plan_build(pod, "ml", 0, &cfg, NULL, &plan, err, sizeof(err)) == PLAN_OK &&
	          plan.patch_ops == 0 && strcmp(plan.patch.buf, "[]") == 0,
	      "reinvocation at %d entries: allowed unchanged (%s)", n, err);
	pod_plan_free(&plan);
	cJSON_Delete(pod);
	free(txt);

	/*
	 * A container over the limit that still needs variables is denied, and one
	 * at the limit is not: with names that start like some of distenv's (the
	 * list is walked) and with names that start like none of them (its length
	 * is the one counted when the targets were found).
	 */
	for (int f = 0; f < 2; f++) {
		const char *fmt = f == 0 ? "E%d" : "zz_%d";

		txt = env_pod_named(4097, fmt, NULL);
		pod = cJSON_Parse(txt);
		CHECK(pod_plan_build(pod, "ml", 0, &cfg, NULL, &plan, err, sizeof(err)) ==
		              PLAN_DENY &&
		          strstr(err, "has 4097 env entries, more than the limit of 4096"),
		      "4097 entries (%s) needing more: '%s'", fmt, err);
		cJSON_Delete(pod);
		free(txt);
		txt = env_pod_named(4096, fmt, NULL);
		pod = cJSON_Parse(txt);
		CHECK(pod_plan_build(pod, "ml", 0, &cfg, NULL, &plan, err, sizeof(err)) ==
		              PLAN_OK &&
		          plan.patch_ops > 0,
		      "4096 entries (%s): '%s'", fmt, err);
		pod_plan_free(&plan);
		cJSON_Delete(pod);
		free(txt);
	}
}

/* A container's own MASTER_ADDR / MASTER_PORT: every address variable follows it. */
static void test_own_master(void)
{
	static const struct {
		const char *name;
		const char *extra; /* the container's own entries */
		const char *frameworks;
		const char *want; /* "NAME=VALUE\n" subset of the container's env; NULL: denied */
		const char *deny;
	} cases[] = {
	    {"literal MASTER_ADDR", "{'name':'MASTER_ADDR','value':'head.example'}", "pytorch,jax",
	     "PET_MASTER_ADDR=head.example\nPET_MASTER_PORT=29500\n"
	     "JAX_COORDINATOR_ADDRESS=head.example:29500\n",
	     NULL},
	    {"literal MASTER_PORT", "{'name':'MASTER_PORT','value':'1234'}", "pytorch,jax",
	     "MASTER_ADDR=ddp-0.ddp.ml.svc.cluster.local\nPET_MASTER_PORT=1234\n"
	     "JAX_COORDINATOR_ADDRESS=ddp-0.ddp.ml.svc.cluster.local:1234\n",
	     NULL},
	    {"MASTER_ADDR from a fieldRef",
	     "{'name':'MASTER_ADDR','valueFrom':{'fieldRef':{'fieldPath':'status.podIP'}}}",
	     "pytorch", NULL, "sets MASTER_ADDR from valueFrom"},
	    {"MASTER_PORT as a reference", "{'name':'MASTER_PORT','value':'$(P)'}", "pytorch", NULL,
	     "sets MASTER_PORT from valueFrom or a $(reference)"},
	    {"MASTER_PORT not a port", "{'name':'MASTER_PORT','value':'http'}", "pytorch", NULL,
	     "not a port number"},
	    /* the denial names what the pod's own frameworks derive, and nothing else */
	    {"MASTER_ADDR from a fieldRef, pytorch: names PET_MASTER_ADDR alone",
	     "{'name':'MASTER_ADDR','valueFrom':{'fieldRef':{'fieldPath':'status.podIP'}}}",
	     "pytorch", NULL,
	     "admission, so PET_MASTER_ADDR would disagree with it: give it a literal value, set "
	     "that too, or remove it"},
	    {"MASTER_ADDR from a fieldRef, jax: names JAX_COORDINATOR_ADDRESS alone",
	     "{'name':'MASTER_ADDR','valueFrom':{'fieldRef':{'fieldPath':'status.podIP'}}}", "jax",
	     NULL, "admission, so JAX_COORDINATOR_ADDRESS would disagree with it:"},
	    {"MASTER_PORT as a reference, three frameworks: each one's variable named",
	     "{'name':'MASTER_PORT','value':'$(P)'}", "pytorch,jax,xgboost", NULL,
	     "so PET_MASTER_PORT, JAX_COORDINATOR_ADDRESS and DMLC_TRACKER_PORT would disagree "
	     "with "
	     "it: give it a literal value, set those too,"},
	    {"fieldRef with every derived variable set too",
	     "{'name':'MASTER_ADDR','valueFrom':{'fieldRef':{'fieldPath':'status.podIP'}}},"
	     "{'name':'PET_MASTER_ADDR','value':'x'}",
	     "pytorch", "RANK=1\n", NULL},
	};
	struct config cfg;
	size_t i;

	config_defaults(&cfg);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *txt = env_pod(0, cases[i].extra), err[512] = "", why[256] = "";
		cJSON *pod = cJSON_Parse(txt);
		struct pod_plan plan;
		enum plan_status st;

		cJSON_AddStringToObject(
		    cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "metadata"), "annotations"),
		    "distenv.dev/frameworks", cases[i].frameworks);
		st = pod_plan_build(pod, "ml", 0, &cfg, NULL, &plan, err, sizeof(err));
		if (cases[i].want == NULL) {
			CHECK(st == PLAN_DENY && strstr(err, cases[i].deny), "%s: '%s'",
			      cases[i].name, err);
		} else {
			CHECK(st == PLAN_OK, "%s: %s", cases[i].name, err);
			if (st == PLAN_OK) {
				CHECK(env_has_in_order(pod_plan_target_env(&plan, 0), cases[i].want,
				                       why, sizeof(why)),
				      "%s: %s", cases[i].name, why);
				pod_plan_free(&plan);
			}
		}
		cJSON_Delete(pod);
		free(txt);
	}
}

/*
 * Containers that share the plan's list and one with its own MASTER_ADDR: each
 * container's ops carry its own list (the patch escapes a shared list once).
 */
static void test_own_master_among_shared(void)
{
	static const char *const orders[] = {"a,b,c", "c,a,b", "a,c,b"};
	struct config cfg;
	size_t k;

	config_defaults(&cfg);
	for (k = 0; k < sizeof(orders) / sizeof(orders[0]); k++) {
		struct strbuf sb;
		const char *o = orders[k];
		cJSON *pod, *ops, *op;
		struct pod_plan plan;
		char err[512] = "";
		int seen[3] = {0, 0, 0}, i;

		strbuf_init(&sb);
		strbuf_puts(&sb,
		            "{\"metadata\":{\"name\":\"ddp-1\",\"namespace\":\"ml\","
		            "\"labels\":{\"distenv.dev/inject\":\"true\"},\"annotations\":{"
		            "\"distenv.dev/world-size\":\"2\",\"distenv.dev/containers\":"
		            "\"a,b,c\"},\"ownerReferences\":[{\"kind\":\"StatefulSet\","
		            "\"apiVersion\":\"apps/v1\",\"name\":\"ddp\",\"controller\":true}]},"
		            "\"spec\":{\"subdomain\":\"ddp\",\"containers\":[");
		for (i = 0; i < 3; i++)
			strbuf_printf(&sb, "%s{\"name\":\"%c\",\"env\":[%s]}", i ? "," : "",
			              o[2 * i],
			              o[2 * i] == 'c'
			                  ? "{\"name\":\"MASTER_ADDR\",\"value\":\"head.example\"}"
			                  : "{\"name\":\"E\",\"value\":\"v\"}");
		strbuf_puts(&sb, "]}}");
		pod = cJSON_Parse(sb.buf);
		CHECK(pod_plan_build(pod, "ml", 0, &cfg, NULL, &plan, err, sizeof(err)) == PLAN_OK,
		      "%s: %s", o, err);
		ops = cJSON_Parse(plan.patch.buf);
		cJSON_ArrayForEach(op, ops)
		{
			const char *path = cJSON_GetStringValue(cJSON_GetObjectItem(op, "path"));
			const cJSON *v = cJSON_GetObjectItem(op, "value");
			const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(v, "name"));
			const char *val = cJSON_GetStringValue(cJSON_GetObjectItem(v, "value"));
			int at;

			if (path == NULL || n == NULL || val == NULL ||
			    strcmp(n, "PET_MASTER_ADDR") != 0 ||
			    sscanf(path, "/spec/containers/%d/", &at) != 1 || at < 0 || at > 2)
				continue;
			seen[at]++;
			CHECK(strcmp(val, o[2 * at] == 'c' ? "head.example"
			                                   : "ddp-0.ddp.ml.svc.cluster.local") == 0,
			      "%s: container %c got PET_MASTER_ADDR=%s", o, o[2 * at], val);
		}
		CHECK(seen[0] == 1 && seen[1] == 1 && seen[2] == 1,
		      "%s: PET_MASTER_ADDR ops per container %d %d %d", o, seen[0], seen[1],
		      seen[2]);
		cJSON_Delete(ops);
		pod_plan_free(&plan);
		cJSON_Delete(pod);
		strbuf_free(&sb);
	}
}

/* Every reason has its own name; a value past the table, at its end or far past it, is "other". */
static void test_reason_names(void)
{
	static const long past[] = {DENY_REASON_COUNT, DENY_REASON_COUNT + 1,
	                            DENY_REASON_COUNT + 100, -1};
	int r, q;
	size_t i;

	for (r = 0; r < DENY_REASON_COUNT; r++) {
		const char *n = verdict_reason_name((enum deny_reason)r);
		CHECK(n != NULL && n[0] != '\0', "reason %d has a name", r);
		for (q = 0; n != NULL && q < r; q++)
			CHECK(strcmp(n, verdict_reason_name((enum deny_reason)q)) != 0,
			      "reasons %d and %d are both %s", q, r, n);
	}
	CHECK(strcmp(verdict_reason_name(DENY_NONE), "none") == 0, "DENY_NONE is none");
	for (i = 0; i < sizeof(past) / sizeof(past[0]); i++) {
		const char *n = verdict_reason_name((enum deny_reason)past[i]);
		CHECK(n != NULL && strcmp(n, "other") == 0, "reason %ld: %s, want other", past[i],
		      n ? n : "(null)");
	}
}

int main(void)
{
	test_reason_names();
	test_plans();
	test_denials();
	test_patches();
	test_reviews();
	test_truncations();
	test_large_world();
	test_pod_budget();
	test_host_label();
	test_config_limits();
	test_reinvocation_at_limit();
	test_own_master();
	test_own_master_among_shared();
	TEST_MAIN_END("admission");
}
