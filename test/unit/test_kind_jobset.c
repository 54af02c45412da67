/*
 * The JobSet kind (src/kinds/kind_jobset.c) through pod_plan_build: the rank
 * over the replicated Jobs, the coordinator, TensorFlow's roles, the world
 * without look-ups and the labels that contradict the owner.
 */
#include "testpods.h"

/* The reason of a denial (the metrics label), by plan case name; the others only need one. */
static const struct plan_reason deny_reasons[] = {
    {"jobset: a world-size annotation that disagrees", DENY_WORLD},
    {"jobset without look-ups: no world size", DENY_WORLD},
    {"jobset: a replicated Job that is not Indexed", DENY_WORKLOAD},
    {"jobset labels that contradict the owner", DENY_IDENTITY},
};

/* The world's limit (65536 pods) reached by Jobs, by pods of one Job, and passed by one pod. */
static const struct lookup_answer JS_A65536x1 = {0, JSSPEC("", -1, -1, RJOB("a", 65536, 1)), NULL};
static const struct lookup_answer JS_A1x65536 = {0, JSSPEC("", -1, -1, RJOB("a", 1, 65536)), NULL};
static const struct lookup_answer JS_A1x65536_B1x1 = {
    0, JSSPEC("", -1, -1, RJOB("a", 1, 65536), RJOB("b", 1, 1)), NULL};

static const struct plan_case plan_cases[] = {
    {"jobset: 65536 Jobs of 1 pod, the limit: the last is rank 65535",
     JS_POD("a", "65535", "0", "65536", "65536", ""), "ml", &JS_A65536x1,
     "RANK=65535\nWORLD_SIZE=65536\n", NULL},
    {"jobset: 1 Job of 65536 pods, the limit: the last is rank 65535",
     JS_POD("a", "0", "65535", "1", "1", ""), "ml", &JS_A1x65536, "RANK=65535\nWORLD_SIZE=65536\n",
     NULL},
    {"jobset: 65537 pods, one past the limit", JS_POD("a", "0", "0", "1", "2", ""), "ml",
     &JS_A1x65536_B1x1, NULL,
     "distenv: JobSet ml/js has more pods than the world size limit of 65536"},
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
};

int main(void)
{
	plan_cases_run(plan_cases, N_OF(plan_cases), deny_reasons, N_OF(deny_reasons));
	TEST_MAIN_END("kind_jobset");
}
