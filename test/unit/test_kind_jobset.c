/*
 * The JobSet kind (src/kinds/kind_jobset.c) through pod_plan_build: the rank
 * over the replicated Jobs, the coordinator, TensorFlow's roles, the world
 * without look-ups and the labels that contradict the owner; the 16 replicated
 * Jobs it reads (the look-up's answer, render's pods) and /validate's check of
 * spec.coordinator, each at its edge.
 */
#include "testpods.h"
#include "kinds.h"
#include "validate.h"

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

/* The coordinator is the JobSet's very first pod (position 0): it stays rank 0. */
static const struct lookup_answer JS_COORD_A00 = {
    0, JSSPEC("a", 0, 0, RJOB("a", 2, 2), RJOB("b", 1, 3)), NULL};

/*
 * 16 replicated Jobs, distenv's limit, read from a cache that does not list the pod's
 * (q), though its coordinator names q; the fresh read lists q first. A name the
 * answer does not list is read again, whatever lies past its list.
 */
#define RJOBS_15                                                                                   \
	RJOB("r1", 1, 1), RJOB("r2", 1, 1), RJOB("r3", 1, 1), RJOB("r4", 1, 1), RJOB("r5", 1, 1),  \
	    RJOB("r6", 1, 1), RJOB("r7", 1, 1), RJOB("r8", 1, 1), RJOB("r9", 1, 1),                \
	    RJOB("r10", 1, 1), RJOB("r11", 1, 1), RJOB("r12", 1, 1), RJOB("r13", 1, 1),            \
	    RJOB("r14", 1, 1), RJOB("r15", 1, 1)
static const struct workload_spec JS16_Q_FRESH = JSSPEC("q", 0, 0, RJOB("q", 1, 1), RJOBS_15);
static const struct lookup_answer JS16_NO_Q_CACHED = {
    0, JSSPEC("q", 0, 0, RJOB("r0", 1, 1), RJOBS_15), &JS16_Q_FRESH};

static const struct plan_case plan_cases[] = {
    {"jobset: the coordinator is the first pod: rank 0", JS_POD("a", "0", "0", "2", "3", ""), "ml",
     &JS_COORD_A00, "MASTER_ADDR=" JS_ "\nRANK=0\nWORLD_SIZE=7\n", NULL},
    {"jobset: the coordinator is the first pod: the second is rank 1",
     JS_POD("a", "0", "1", "2", "3", ""), "ml", &JS_COORD_A00,
     "MASTER_ADDR=" JS_ "\nRANK=1\nWORLD_SIZE=7\n", NULL},
    {"jobset: the last pod of a Job of 2 is rank 1", JS_POD("a", "0", "1", "2", "3", ""), "ml",
     &JS_A2x2_B1x3, "RANK=1\nWORLD_SIZE=7\n", NULL},
    {"jobset: pod 2 of a Job of 2 pods is no pod of the JobSet",
     JS_POD("a", "0", "2", "2", "3", ""), "ml", &JS_A2x2_B1x3, NULL,
     "distenv: pod 2 of Job 0 of replicated Job a is not part of JobSet ml/js as it is now "
     "(re-created or resized?): retry"},
    {"jobset: Job 2 of a replicated Job of 2 Jobs is no Job of the JobSet",
     JS_POD("a", "2", "0", "2", "3", ""), "ml", &JS_A2x2_B1x3, NULL,
     "distenv: pod 0 of Job 2 of replicated Job a is not part of JobSet ml/js as it is now "
     "(re-created or resized?): retry"},
    {"jobset: 16 replicated Jobs cached without the pod's: read again, it is the coordinator",
     JS_POD("q", "0", "0", "1", "16", ""), "ml", &JS16_NO_Q_CACHED,
     "MASTER_ADDR=js-q-0-0.js.ml.svc.cluster.local\nRANK=0\nWORLD_SIZE=16\n", NULL},
    {"jobset without look-ups: a coordinator label naming the first pod: it is rank 0",
     JS_POD("a", "0", "0", "2", "2",
            ",'distenv.dev/world-size':'4','jobset.sigs.k8s.io/coordinator':'js-a-0-0.js'"),
     "ml", NULL, "MASTER_ADDR=" JS_ "\nRANK=0\nWORLD_SIZE=4\n", NULL},
    {"jobset without look-ups: a coordinator label naming the first pod: the last is rank 3",
     JS_POD("a", "1", "1", "2", "2",
            ",'distenv.dev/world-size':'4','jobset.sigs.k8s.io/coordinator':'js-a-0-0.js'"),
     "ml", NULL, "MASTER_ADDR=" JS_ "\nRANK=3\nWORLD_SIZE=4\n", NULL},
    /* one replicated Job of one Job (replicas 1, global 1): its labels say the whole */
    {"jobset without look-ups: one replicated Job of 1 Job, the last pod is rank 3",
     JS_POD("a", "0", "3", "1", "1", ",'distenv.dev/world-size':'4'"), "ml", NULL,
     "MASTER_ADDR=" JS_ "\nRANK=3\nWORLD_SIZE=4\n", NULL},
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

/* A JobSet js of n replicated Jobs r0, r1, ..., each 1 Job of 1 Indexed pod. */
static char *jobset_of(int n)
{
	struct strbuf sb;
	int k;

	strbuf_init(&sb);
	strbuf_puts(&sb, "{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\","
	                 "\"metadata\":{\"name\":\"js\",\"namespace\":\"ml\",\"uid\":\"u-js\"},"
	                 "\"spec\":{\"replicatedJobs\":[");
	for (k = 0; k < n; k++)
		strbuf_printf(&sb,
		              "%s{\"name\":\"r%d\",\"replicas\":1,\"template\":{\"spec\":{"
		              "\"completions\":1,\"parallelism\":1,\"completionMode\":\"Indexed\","
		              "\"template\":{\"metadata\":{\"labels\":{\"distenv.dev/inject\":"
		              "\"true\"}},\"spec\":{\"containers\":[{\"name\":\"t\",\"image\":"
		              "\"x\"}]}}}}}",
		              k ? "," : "", k);
	strbuf_puts(&sb, "]}}");
	return strbuf_take(&sb);
}

/* What render's pods carry: each pod's global-replicas and job-global-index labels. */
struct seen {
	int n;
	char global[20][16], gidx[20][16];
};

static int seen_emit(struct pod_sink *s, cJSON *pod, const struct workload_spec *ws,
                     const char *which)
{
	struct seen *sn = s->ctx;
	const cJSON *labels = json_get(json_get(pod, "metadata"), "labels");
	const char *g = json_map_str(labels, "jobset.sigs.k8s.io/global-replicas");
	const char *x = json_map_str(labels, "jobset.sigs.k8s.io/job-global-index");

	(void)ws;
	(void)which;
	if (sn->n < 20) {
		snprintf(sn->global[sn->n], sizeof(sn->global[0]), "%s", g ? g : "(none)");
		snprintf(sn->gidx[sn->n], sizeof(sn->gidx[0]), "%s", x ? x : "(none)");
	}
	sn->n++;
	cJSON_Delete(pod);
	return 0;
}

/*
 * distenv reads a JobSet of up to 16 replicated Jobs (WORKLOAD_MAX_RJOBS): the
 * look-up's answer and render's pods, 16 read whole, 17 refused with the count.
 */
static void test_rjobs_limit(void)
{
	static const struct {
		int n;
		const char *want_err; /* NULL: read */
	} rows[] = {
	    {15, NULL},
	    {16, NULL},
	    {17, "JobSet has 17 replicated Jobs, more than distenv's limit of 16"},
	};
	size_t i;

	for (i = 0; i < N_OF(rows); i++) {
		char *txt = jobset_of(rows[i].n), err[256] = "", last[16];
		cJSON *doc = cJSON_Parse(txt);
		struct workload_spec ws;
		struct seen sn;
		struct pod_sink sink = {seen_emit, &sn, 0, err, sizeof(err)};
		int rc, k;

		snprintf(last, sizeof(last), "%d", rows[i].n - 1);
		workload_spec_init(&ws);
		rc = kind_jobset.api.parse(txt, strlen(txt), &ws, err, sizeof(err));
		if (rows[i].want_err == NULL) {
			CHECK(rc == 0 && ws.n_rjobs == rows[i].n &&
			          strcmp(ws.rjobs[rows[i].n - 1].name + 1, last) == 0,
			      "%d replicated Jobs: parse %d, %d read, the last %s, err '%s'",
			      rows[i].n, rc, ws.n_rjobs,
			      ws.n_rjobs > 0 ? ws.rjobs[ws.n_rjobs - 1].name : "-", err);
		} else {
			CHECK(rc == -1 && strcmp(err, rows[i].want_err) == 0,
			      "%d replicated Jobs: parse %d, err '%s', want '%s'", rows[i].n, rc,
			      err, rows[i].want_err);
		}
		memset(&sn, 0, sizeof(sn));
		err[0] = '\0';
		rc = kind_jobset.make_pods(doc, "js", "ml", &sink);
		if (rows[i].want_err == NULL) {
			char want[16];
			snprintf(want, sizeof(want), "%d", rows[i].n);
			CHECK(rc == 0 && sn.n == rows[i].n,
			      "%d replicated Jobs: render %d, %d pods", rows[i].n, rc, sn.n);
			for (k = 0; k < sn.n && k < 20; k++)
				CHECK(strcmp(sn.global[k], want) == 0,
				      "%d replicated Jobs: pod %d global-replicas %s, want %s",
				      rows[i].n, k, sn.global[k], want);
			CHECK(sn.n > 0 && sn.n <= 20 && strcmp(sn.gidx[sn.n - 1], last) == 0,
			      "%d replicated Jobs: the last pod's job-global-index %s, want %s",
			      rows[i].n, sn.n > 0 && sn.n <= 20 ? sn.gidx[sn.n - 1] : "?", last);
		} else {
			CHECK(rc == -1 && sn.n == 0 && strcmp(err, rows[i].want_err) == 0,
			      "%d replicated Jobs: render %d, %d pods, err '%s'", rows[i].n, rc,
			      sn.n, err);
		}
		cJSON_Delete(doc);
		free(txt);
	}
}

/* JobSet js as applied: replicated Jobs a (2 Jobs x 2 pods) and b (1 x 3), its coordinator. */
#define JS_RJOB_TMPL(n, reps, pods)                                                                \
	"{'name':'" n "','replicas':" reps ",'template':{'spec':{'completions':" pods              \
	",'parallelism':" pods ",'completionMode':'Indexed','template':{'metadata':{'labels':{"    \
	"'distenv.dev/inject':'true'}},'spec':{'containers':[{'name':'t','image':'x'}]}}}}}"
#define JS_APPLIED(rjob, j, i)                                                                     \
	"{'apiVersion':'jobset.x-k8s.io/v1alpha2','kind':'JobSet','metadata':{'name':'js',"        \
	"'namespace':'ml'},'spec':{'coordinator':{'replicatedJob':'" rjob "','jobIndex':" j        \
	",'podIndex':" i                                                                           \
	"},'replicatedJobs':[" JS_RJOB_TMPL("a", "2", "2") "," JS_RJOB_TMPL("b", "1", "3") "]}}"
#define NOT_A_POD(rjob, j, i)                                                                      \
	"distenv: the coordinator of JobSet js (replicated Job " rjob ", Job " j ", pod " i        \
	") is "                                                                                    \
	"not one of its pods, so no pod could be rank 0: name a replicated Job, jobIndex and "     \
	"podIndex that exist"

/*
 * /validate on spec.coordinator: its Job and pod each checked at their edge, the
 * last Job and the last pod of a replicated Job named, and one past each refused.
 */
static void test_coordinator_validate(void)
{
	static const struct {
		const char *name, *obj;
		const char *want; /* the whole denial; NULL: no problem */
	} rows[] = {
	    {"the first pod", JS_APPLIED("a", "0", "0"), NULL},
	    {"the last pod of a's last Job", JS_APPLIED("a", "1", "1"), NULL},
	    {"Job 2 of a's 2 Jobs", JS_APPLIED("a", "2", "0"), NOT_A_POD("a", "2", "0")},
	    {"pod 2 of a Job of 2 pods", JS_APPLIED("a", "0", "2"), NOT_A_POD("a", "0", "2")},
	    {"the last pod of b", JS_APPLIED("b", "0", "2"), NULL},
	    {"pod 3 of b's 3 pods", JS_APPLIED("b", "0", "3"), NOT_A_POD("b", "0", "3")},
	    {"Job 1 of b's 1 Job", JS_APPLIED("b", "1", "0"), NOT_A_POD("b", "1", "0")},
	};
	struct config cfg;
	size_t i;

	config_defaults(&cfg);
	for (i = 0; i < N_OF(rows); i++) {
		char *txt = dq(rows[i].obj);
		cJSON *obj = cJSON_Parse(txt);
		struct validation *v = calloc(1, sizeof(*v));

		CHECK(obj != NULL && v != NULL, "%s: test JobSet JSON does not parse",
		      rows[i].name);
		validate_workload(obj, "JobSet", "ml", &cfg, NULL, NULL, v);
		if (rows[i].want == NULL)
			CHECK(v->opted_in && v->n_problems == 0, "%s: %d problem(s): %s",
			      rows[i].name, v->n_problems, v->denial);
		else
			CHECK(v->n_problems == 1 && strcmp(v->denial, rows[i].want) == 0 &&
			          v->reason == DENY_WORKLOAD,
			      "%s: %d problem(s), reason %s\n  got  '%s'\n  want '%s'",
			      rows[i].name, v->n_problems, verdict_reason_name(v->reason),
			      v->denial, rows[i].want);
		free(v);
		cJSON_Delete(obj);
		free(txt);
	}
}

int main(void)
{
	plan_cases_run(plan_cases, N_OF(plan_cases), deny_reasons, N_OF(deny_reasons));
	test_rjobs_limit();
	test_coordinator_validate();
	TEST_MAIN_END("kind_jobset");
}
