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

int main(void)
{
	test_reviews();
	test_truncations();
	TEST_MAIN_END("admission");
}
