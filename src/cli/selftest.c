/*
 * selftest: libcurl requests to a running webhook and checks of its answers.
 * Each request's body and answer live in this file's locals and are freed
 * before the next check.
 */
#include "selftest.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <string.h>

#include "util.h"
#include "verdict.h"
#include "strbuf.h"
#include "json.h"

#define ANSWER_MAX (1024 * 1024) /* an answer larger than this is not a webhook's */

/* A pod of the given owner with the given labels; the review's uid is uid. */
#define REVIEW(uid, path_kind, obj)                                                                \
	"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"       \
	"\"uid\":\"" uid "\",\"kind\":" path_kind ",\"operation\":\"CREATE\","                     \
	"\"namespace\":\"distenv-selftest\",\"object\":" obj "}}"
#define POD_KIND "{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"}"
#define JOB_KIND "{\"group\":\"batch\",\"version\":\"v1\",\"kind\":\"Job\"}"

static const struct {
	const char *what;
	const char *path;
	const char *uid;
	const char *body;
	int allowed;          /* the answer's response.allowed */
	const char *contains; /* the denial's message contains this; NULL when allowed */
} checks[] = {
    {"a pod without the opt-in label is allowed, without a patch", "/mutate", "selftest-plain",
     REVIEW("selftest-plain", POD_KIND,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"plain\"},"
            "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}"),
     1, NULL},
    {"an opted-in pod of a ReplicaSet is denied, naming what is supported", "/mutate",
     "selftest-replicaset",
     REVIEW("selftest-replicaset", POD_KIND,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"rs-x\",\"labels\":"
            "{\"distenv.dev/inject\":\"true\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\","
            "\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"uid\":\"u\",\"controller\":true}]},"
            "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}"),
     0, "supports only pods of a StatefulSet"},
    {"/validate denies an opted-in Job that is not Indexed", "/validate", "selftest-job",
     REVIEW("selftest-job", JOB_KIND,
            "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\"},"
            "\"spec\":{\"completions\":2,\"parallelism\":2,\"template\":{\"metadata\":{"
            "\"labels\":{\"distenv.dev/inject\":\"true\"}},\"spec\":{\"subdomain\":\"j\","
            "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}}}"),
     0, "Indexed"},
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct strbuf *b = userdata;

	strbuf_append(b, ptr, size * nmemb);
	return b->too_big || b->oom ? 0 : size * nmemb; /* 0 ends the transfer */
}

/* One request; the answer in b (caller frees). Returns the HTTP status, or -1 (err says why). */
static long request(CURL *c, const struct selftest_opts *o, const char *path, const char *body,
                    struct strbuf *b, char *err, size_t errlen)
{
	char url[1024], curl_err[CURL_ERROR_SIZE] = "", conn[300];
	struct curl_slist *hdrs = NULL, *connect_to = NULL;
	long status = -1;
	CURLcode rc;

	if (bounded_printf(url, sizeof(url), "%s%s", o->url, path) != 0) {
		errf(err, errlen, "the URL is too long");
		return -1;
	}
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(c, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
	if (o->ca_file != NULL)
		curl_easy_setopt(c, CURLOPT_CAINFO, o->ca_file);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, o->timeout_ms);
	if (o->connect_to != NULL) {
		/* "::ADDR:": any host and port of the URL, to ADDR on the same port. */
		if (bounded_printf(conn, sizeof(conn), "::%s:", o->connect_to) != 0 ||
		    (connect_to = curl_slist_append(NULL, conn)) == NULL) {
			errf(err, errlen, "the connect-to address is too long");
			return -1;
		}
		curl_easy_setopt(c, CURLOPT_CONNECT_TO, connect_to);
	}
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
	if (body != NULL) {
		hdrs = curl_slist_append(NULL, "Content-Type: application/json");
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK)
		errf(err, errlen, "%s %s: %s", body ? "POST" : "GET", url,
		     curl_err[0] ? curl_err : curl_easy_strerror(rc));
	else
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(hdrs);
	curl_slist_free_all(connect_to);
	return status;
}

/* Checks one AdmissionReview answer; 0 when right, else -1 with why. */
static int check_review(const char *text, size_t len, const char *uid, int allowed,
                        const char *contains, char *why, size_t whylen)
{
	cJSON *root = cJSON_ParseWithLength(text, len);
	const cJSON *resp = cJSON_GetObjectItemCaseSensitive(root, "response");
	const cJSON *ok = cJSON_GetObjectItemCaseSensitive(resp, "allowed");
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(resp, "status");
	const char *msg = json_str(st, "message"), *got_uid = json_str(resp, "uid");
	int rc = -1;

	if (root == NULL)
		errf(why, whylen, "the answer is not JSON");
	else if (got_uid == NULL || strcmp(got_uid, uid) != 0)
		errf(why, whylen, "response.uid is \"%.64s\", not \"%s\"", got_uid ? got_uid : "",
		     uid);
	else if (!cJSON_IsBool(ok) || cJSON_IsTrue(ok) != allowed)
		errf(why, whylen, "allowed is %s, want %s",
		     cJSON_IsBool(ok) ? (cJSON_IsTrue(ok) ? "true" : "false") : "missing",
		     allowed ? "true" : "false");
	else if (allowed && cJSON_GetObjectItemCaseSensitive(resp, "patch") != NULL)
		errf(why, whylen, "a patch for a pod that did not opt in");
	else if (!allowed &&
	         (msg == NULL || verdict_unprefixed(msg) == msg || strstr(msg, contains) == NULL))
		errf(why, whylen, "denial \"%.160s\" does not say \"%s\"", msg ? msg : "",
		     contains);
	else
		rc = 0;
	cJSON_Delete(root);
	return rc;
}

int selftest_run(const struct selftest_opts *o, FILE *out, char *err, size_t errlen)
{
	struct strbuf b;
	char why[512];
	CURL *c;
	long status;
	size_t i;
	int failed = 0;

	if (o->url == NULL || strncmp(o->url, "https://", 8) != 0 || o->url[8] == '\0') {
		errf(err, errlen, "the URL must start with https:// and name a host");
		return -1;
	}
	if (strchr(o->url + 8, '/') != NULL) {
		errf(err, errlen,
		     "the URL names no path (the checks add /healthz, /mutate, /validate)");
		return -1;
	}
	if ((c = curl_easy_init()) == NULL) {
		errf(err, errlen, "out of memory");
		return -1;
	}
	strbuf_init_max(&b, ANSWER_MAX);
	status = request(c, o, "/healthz", NULL, &b, why, sizeof(why));
	if (status == 200 && b.len >= 2 && memcmp(b.buf, "ok", 2) == 0) {
		fprintf(out, "selftest: ok   GET /healthz answers 200 over verified TLS\n");
	} else {
		if (status >= 0)
			errf(why, sizeof(why), "HTTP %ld", status);
		fprintf(out, "selftest: FAIL GET /healthz: %s\n", why);
		failed++;
	}
	for (i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		strbuf_reset(&b);
		status = request(c, o, checks[i].path, checks[i].body, &b, why, sizeof(why));
		if (status == 200 &&
		    check_review(b.buf ? b.buf : "", b.len, checks[i].uid, checks[i].allowed,
		                 checks[i].contains, why, sizeof(why)) == 0) {
			fprintf(out, "selftest: ok   POST %s: %s\n", checks[i].path,
			        checks[i].what);
			continue;
		}
		if (status >= 0 && status != 200)
			errf(why, sizeof(why), "HTTP %ld", status);
		fprintf(out, "selftest: FAIL POST %s: %s: %s\n", checks[i].path, checks[i].what,
		        why);
		failed++;
	}
	strbuf_free(&b);
	curl_easy_cleanup(c);
	return failed;
}
