/*
 * The admission core's envelope (src/core/admission.c) through admission_handle:
 * the AdmissionReview in and out and the bad-input answers, and a review cut at
 * every length. The rules of a pod's plan are tested in the file named after
 * their source: test_topology.c, test_kind_*.c, test_patch.c, test_env.c, ...
 */
#include "testpods.h"

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
    {"already injected: allowed unchanged, no patch",
     REVIEW("{'uid':'u7'," PODKIND ",'operation':'CREATE','namespace':'ml','object':{'metadata':{"
            "'name':'ddp-0','namespace':'ml','labels':{" LABEL "},'annotations':{"
            "'distenv.dev/injected':'x','distenv.dev/world-size':'2',"
            "'distenv.dev/frameworks':'pytorch'}," STS_OWNER
            "},'spec':{'subdomain':'ddp','containers':"
            "[{'name':'c','env':[{'name':'MASTER_ADDR','value':'ddp-0.ddp.ml.svc.cluster.local'},"
            "{'name':'MASTER_PORT','value':'29500'},{'name':'RANK','value':'0'},{'name':'WORLD_"
            "SIZE','value':'2'},"
            "{'name':'NODE_RANK','value':'0'},{'name':'NNODES','value':'2'},{'name':"
            "'PET_MASTER_ADDR','value':'ddp-0.ddp.ml.svc.cluster.local'},{'name':"
            "'PET_MASTER_PORT','value':'29500'},{'name':"
            "'PET_NNODES','value':'2'},{'name':'PET_NODE_RANK','value':'0'},{'name':"
            "'PET_NPROC_PER_NODE','value':'1'}]}]}}}"),
     200, ADMISSION_UNCHANGED, "{\"uid\":\"u7\",\"allowed\":true}}"},
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

/*
 * A JobSet at /validate with n warnings: each replicated Job's container sets
 * LOCAL_RANK on a pod of 8 GPUs, and but for the last when n is odd each asks
 * for XGBoost too (a second warning, its DMLC_NUM_WORKER): the answer keeps every
 * warning up to ADMISSION_MAX_WARNINGS (24), and past it the first 23 and one
 * that counts the rest. Tried at 1, 23, 24 and 25: the exact warnings, their
 * count and the log line joining them.
 */
static char *warned_jobset(int n)
{
	static const char head[] =
	    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
	    "\"uid\":\"w\",\"kind\":{\"group\":\"jobset.x-k8s.io\",\"version\":\"v1alpha2\","
	    "\"kind\":\"JobSet\"},\"resource\":{\"group\":\"jobset.x-k8s.io\",\"version\":"
	    "\"v1alpha2\",\"resource\":\"jobsets\"},\"name\":\"js\",\"namespace\":\"ml\","
	    "\"operation\":\"CREATE\",\"object\":{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\","
	    "\"kind\":\"JobSet\",\"metadata\":{\"name\":\"js\",\"namespace\":\"ml\"},\"spec\":{"
	    "\"replicatedJobs\":[";
	static const char rjob[] =
	    "%s{\"name\":\"w%02d\",\"replicas\":1,\"template\":{\"spec\":{\"completions\":2,"
	    "\"parallelism\":2,\"completionMode\":\"Indexed\",\"template\":{\"metadata\":{"
	    "\"labels\":{\"distenv.dev/inject\":\"true\"},\"annotations\":{"
	    "\"distenv.dev/frameworks\":\"%s\"}},\"spec\":{\"restartPolicy\":\"Never\","
	    "\"containers\":[{\"name\":\"trainer\",\"image\":\"train:1.0\",\"env\":[{\"name\":"
	    "\"LOCAL_RANK\",\"value\":\"0\"}],\"resources\":{\"limits\":{\"nvidia.com/"
	    "gpu\":8}}}]}}}}}";
	size_t cap = sizeof(head) + (size_t)n * sizeof(rjob) + 16, used;
	char *txt = malloc(cap);
	int i;

	if (txt == NULL)
		return NULL;
	used = (size_t)snprintf(txt, cap, "%s", head);
	for (i = 0; 2 * i < n; i++)
		used += (size_t)snprintf(txt + used, cap - used, rjob, i ? "," : "", i,
		                         2 * i + 1 < n ? "pytorch,xgboost" : "pytorch");
	snprintf(txt + used, cap - used, "]}}}}");
	return txt;
}

static void test_warning_cap(void)
{
	static const int counts[] = {1, 23, 24, 25};
	struct config cfg;
	size_t c;

	config_defaults(&cfg);
	for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		int n = counts[c], kept = n <= ADMISSION_MAX_WARNINGS ? n : ADMISSION_MAX_WARNINGS,
		    i, found = 0;
		char *txt = warned_jobset(n), want[PLAN_WARNING_LEN], log[4096];
		/* what follows res in memory, to see that the answer is written within it */
		struct {
			struct admission_result res;
			unsigned char after[2 * PLAN_WARNING_LEN];
		} *box = malloc(sizeof(*box));
		const char *p;
		size_t used = 0, k, clobbered = 0;

		if (txt == NULL || box == NULL) {
			CHECK(0, "out of memory");
			free(txt);
			free(box);
			return;
		}
		memset(box->after, 0xa5, sizeof(box->after));
		CHECK(admission_validate(txt, strlen(txt), &cfg, NULL, &box->res) == 0, "%d: rc",
		      n);
		CHECK(box->res.http_status == 200 && box->res.outcome == ADMISSION_UNCHANGED,
		      "%d warnings: status %d, outcome %s", n, box->res.http_status,
		      verdict_outcome_name(box->res.outcome));
		CHECK(box->res.n_warnings == kept, "%d warnings: %d in the answer, want %d", n,
		      box->res.n_warnings, kept);
		log[0] = '\0';
		for (i = 0; i < box->res.n_warnings && i < ADMISSION_MAX_WARNINGS; i++) {
			if (n > ADMISSION_MAX_WARNINGS && i == ADMISSION_MAX_WARNINGS - 1)
				snprintf(want, sizeof(want),
				         "distenv: %d more warning%s not shown (render prints them "
				         "all)",
				         n - i, n - i == 1 ? "" : "s");
			else
				snprintf(
				    want, sizeof(want),
				    i % 2
				        ? "distenv: replicated Job w%02d: DMLC_NUM_WORKER counts "
				          "1 XGBoost worker a pod, not its 8 processes"
				        : "distenv: replicated Job w%02d: container trainer sets "
				          "LOCAL_RANK: launchers start 1 process, not 8; remove it",
				    i / 2);
			CHECK_STR(box->res.warnings[i], want, "a warning");
			used += (size_t)snprintf(log + used, sizeof(log) - used, "%s%s",
			                         i ? "; " : "", want);
		}
		CHECK(strncmp(box->res.message, log, sizeof(box->res.message) - 1) == 0,
		      "%d warnings: log line '%s', want '%.1023s'", n, box->res.message, log);
		for (p = box->res.body; p != NULL && (p = strstr(p, "\"distenv: ")) != NULL; p++)
			found++;
		CHECK(found == kept, "%d warnings: %d in the body, want %d", n, found, kept);
		for (k = 0; k < sizeof(box->after); k++)
			clobbered += box->after[k] != 0xa5;
		CHECK(clobbered == 0, "%d warnings: %zu bytes past the answer written", n,
		      clobbered);
		admission_result_free(&box->res);
		free(box);
		free(txt);
	}
}

/* Whether the API has the StatefulSet ml/ddp (4 replicas, opted in): 0 answers "none". */
static int scale_sts_present;

static int scale_get_object(void *ctx, const struct kind *kind, const char *ns, const char *name,
                            cJSON **out, char *err, size_t errlen)
{
	char *txt;

	(void)ctx;
	(void)err;
	(void)errlen;
	*out = NULL;
	if (!scale_sts_present || strcmp(kind->api.kind, "StatefulSet") != 0 ||
	    strcmp(ns, "ml") != 0 || strcmp(name, "ddp") != 0)
		return 0;
	txt =
	    dq("{'apiVersion':'apps/v1','kind':'StatefulSet','metadata':{'name':'ddp','namespace':"
	       "'ml','uid':'u-ddp'},'spec':{'replicas':4,'serviceName':'ddp','selector':{"
	       "'matchLabels':{'app':'ddp'}},'template':{'metadata':{'labels':{'app':'ddp',"
	       "'distenv.dev/inject':'true'}},'spec':{'containers':[{'name':'t','image':'x'}]}}}}");
	*out = cJSON_Parse(txt);
	free(txt);
	return *out != NULL ? 1 : -1;
}

/*
 * `kubectl scale` (an UPDATE of statefulsets/scale) at /validate: a world that
 * grows is warned (the answer is "unchanged" with its warnings), one that
 * stops or a StatefulSet that is not there is let through quietly ("skipped").
 */
static void test_scale(void)
{
	static const struct {
		const char *name;
		int present, old, now;
		enum admission_outcome outcome;
		int n_warnings;
	} cases[] = {
	    {"4 -> 8", 1, 4, 8, ADMISSION_UNCHANGED, 2},
	    {"4 -> 0", 1, 4, 0, ADMISSION_SKIPPED, 0},
	    {"4 -> 8, no such StatefulSet", 0, 4, 8, ADMISSION_SKIPPED, 0},
	};
	struct workload_lookup lookup;
	struct config cfg;
	size_t i;

	config_defaults(&cfg);
	memset(&lookup, 0, sizeof(lookup));
	lookup.get_object = scale_get_object;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct admission_result res;
		char body[1024];

		scale_sts_present = cases[i].present;
		snprintf(
		    body, sizeof(body),
		    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
		    "\"request\":{\"uid\":\"s\",\"kind\":{\"group\":\"autoscaling\",\"version\":"
		    "\"v1\",\"kind\":\"Scale\"},\"resource\":{\"group\":\"apps\",\"version\":"
		    "\"v1\","
		    "\"resource\":\"statefulsets\"},\"subResource\":\"scale\",\"name\":\"ddp\","
		    "\"namespace\":\"ml\",\"operation\":\"UPDATE\",\"object\":{\"spec\":{"
		    "\"replicas\":%d}},\"oldObject\":{\"spec\":{\"replicas\":%d}}}}",
		    cases[i].now, cases[i].old);
		CHECK(admission_validate(body, strlen(body), &cfg, &lookup, &res) == 0, "%s: rc",
		      cases[i].name);
		CHECK(res.http_status == 200 && res.outcome == cases[i].outcome &&
		          res.n_warnings == cases[i].n_warnings,
		      "%s: status %d, outcome %s, %d warnings (first '%s')", cases[i].name,
		      res.http_status, verdict_outcome_name(res.outcome), res.n_warnings,
		      res.n_warnings ? res.warnings[0] : "");
		if (cases[i].n_warnings == 2)
			CHECK_STR(
			    res.warnings[0],
			    "distenv: StatefulSet ddp: world 4 -> 8 ranks, but the running pods "
			    "keep WORLD_SIZE=4",
			    "the scale's warning");
		admission_result_free(&res);
	}
}

/* A request.uid of 127 characters, the longest kept, is answered with it. */
static void test_uid_at_cap(void)
{
	static const char uid[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	                          "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde";
	struct config cfg;
	struct admission_result res;
	char body[512], want[256];

	config_defaults(&cfg);
	snprintf(body, sizeof(body),
	         "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":"
	         "{\"uid\":\"%s\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
	         "\"operation\":\"UPDATE\",\"object\":{}}}",
	         uid);
	snprintf(want, sizeof(want), "\"response\":{\"uid\":\"%s\",\"allowed\":true}", uid);
	CHECK(sizeof(uid) - 1 == 127, "the uid is %zu characters", sizeof(uid) - 1);
	CHECK(admission_handle(body, strlen(body), &cfg, NULL, &res) == 0, "uid of 127: rc");
	CHECK(res.http_status == 200 && res.outcome == ADMISSION_SKIPPED &&
	          strcmp(res.uid, uid) == 0 && res.body != NULL && strstr(res.body, want) != NULL,
	      "uid of 127: status %d, body %s", res.http_status, res.body ? res.body : "(null)");
	admission_result_free(&res);
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

int main(void)
{
	test_reviews();
	test_truncations();
	test_warning_cap();
	test_uid_at_cap();
	test_scale();
	TEST_MAIN_END("admission");
}
