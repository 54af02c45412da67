/*
 * A workload's look-up answer and its API path (src/core/workload.c): each
 * kind's JSON read into a workload_spec, and the path of a workload's object.
 */
#include <string.h>

#include "testutil.h"
#include "workload.h"

static const char *S(const char *s)
{
	return s;
}

#define STS (&kind_statefulset)
#define JOB (&kind_job)

static const struct {
	const char *name;
	const struct kind *kind;
	const char *json;
	int rc;
	struct workload_spec want;
	const char *err_has;
} parse_cases[] = {
    {"sts full", STS,
     "{\"kind\":\"StatefulSet\",\"spec\":{\"replicas\":3,\"ordinals\":{\"start\":5}}}", 0,
     WSPEC(3, 5, -1, -1, 0, ""), NULL},
    {"sts defaults", STS, "{\"kind\":\"StatefulSet\",\"spec\":{}}", 0, WSPEC(1, 0, -1, -1, 0, ""),
     NULL},
    {"sts no spec", STS, "{\"kind\":\"StatefulSet\"}", 0, WSPEC(1, 0, -1, -1, 0, ""), NULL},
    {"sts no kind", STS, "{\"spec\":{\"replicas\":2}}", 0, WSPEC(2, 0, -1, -1, 0, ""), NULL},
    {"sts scaled to zero", STS, "{\"spec\":{\"replicas\":0}}", 0, WSPEC(0, 0, -1, -1, 0, ""), NULL},
    {"sts null replicas", STS, "{\"spec\":{\"replicas\":null,\"ordinals\":null}}", 0,
     WSPEC(1, 0, -1, -1, 0, ""), NULL},
    {"sts ordinals without start", STS, "{\"spec\":{\"ordinals\":{}}}", 0,
     WSPEC(1, 0, -1, -1, 0, ""), NULL},
    {"sts whitespace around", STS, "  \n{\"spec\":{\"replicas\":7}}\n ", 0,
     WSPEC(7, 0, -1, -1, 0, ""), NULL},
    {"sts replicas string", STS, "{\"spec\":{\"replicas\":\"3\"}}", -1, WSPEC(0, 0, 0, 0, 0, ""),
     "StatefulSet .spec.replicas is not a whole number"},
    {"sts replicas negative", STS, "{\"spec\":{\"replicas\":-1}}", -1, WSPEC(0, 0, 0, 0, 0, ""),
     ".spec.replicas is not a whole number"},
    {"sts replicas fraction", STS, "{\"spec\":{\"replicas\":1.5}}", -1, WSPEC(0, 0, 0, 0, 0, ""),
     ".spec.replicas"},
    {"sts replicas huge", STS, "{\"spec\":{\"replicas\":1e12}}", -1, WSPEC(0, 0, 0, 0, 0, ""),
     ".spec.replicas"},
    {"sts start string", STS, "{\"spec\":{\"ordinals\":{\"start\":\"1\"}}}", -1,
     WSPEC(0, 0, 0, 0, 0, ""), ".spec.ordinals.start is not a whole number"},
    {"sts ordinals a list", STS, "{\"spec\":{\"ordinals\":[1]}}", -1, WSPEC(0, 0, 0, 0, 0, ""),
     ".spec.ordinals is not an object"},
    {"sts spec a list", STS, "{\"spec\":[]}", -1, WSPEC(0, 0, 0, 0, 0, ""),
     ".spec is not an object"},
    {"sts got a job", STS, "{\"kind\":\"Job\",\"spec\":{}}", -1, WSPEC(0, 0, 0, 0, 0, ""),
     "expected a StatefulSet, got kind Job"},
    {"sts kind a number", STS, "{\"kind\":5}", -1, WSPEC(0, 0, 0, 0, 0, ""),
     "got kind (not a string)"},
    {"not json", STS, "<html>", -1, WSPEC(0, 0, 0, 0, 0, ""), "is not JSON"},
    {"empty", STS, "", -1, WSPEC(0, 0, 0, 0, 0, ""), "is not JSON"},
    {"json array", STS, "[1]", -1, WSPEC(0, 0, 0, 0, 0, ""), "not a JSON object"},
    {"trailing bytes", STS, "{\"spec\":{}} x", -1, WSPEC(0, 0, 0, 0, 0, ""),
     "bytes after the JSON"},
    {"two objects", JOB, "{}{}", -1, WSPEC(0, 0, 0, 0, 0, ""), "bytes after the JSON"},
    {"job indexed", JOB,
     "{\"kind\":\"Job\",\"spec\":{\"completions\":8,\"parallelism\":8,\"completionMode\":"
     "\"Indexed\"}}",
     0, WSPEC(-1, -1, 8, 8, 1, ""), NULL},
    {"job defaults", JOB, "{\"kind\":\"Job\",\"spec\":{}}", 0, WSPEC(-1, -1, -1, 1, 0, ""), NULL},
    {"job non-indexed", JOB, "{\"spec\":{\"completions\":4,\"completionMode\":\"NonIndexed\"}}", 0,
     WSPEC(-1, -1, 4, 1, 0, ""), NULL},
    {"job parallelism below completions", JOB, "{\"spec\":{\"completions\":4,\"parallelism\":2}}",
     0, WSPEC(-1, -1, 4, 2, 0, ""), NULL},
    {"job suspended parallelism 0", JOB, "{\"spec\":{\"parallelism\":0}}", 0,
     WSPEC(-1, -1, -1, 0, 0, ""), NULL},
    {"job mode a number", JOB, "{\"spec\":{\"completionMode\":1}}", -1, WSPEC(0, 0, 0, 0, 0, ""),
     "Job .spec.completionMode is not a string"},
    {"job completions bool", JOB, "{\"spec\":{\"completions\":true}}", -1, WSPEC(0, 0, 0, 0, 0, ""),
     "Job .spec.completions is not a whole number"},
    {"job parallelism negative", JOB, "{\"spec\":{\"parallelism\":-2}}", -1,
     WSPEC(0, 0, 0, 0, 0, ""), "Job .spec.parallelism"},
    {"job got a sts", JOB, "{\"kind\":\"StatefulSet\"}", -1, WSPEC(0, 0, 0, 0, 0, ""),
     "expected a Job, got kind StatefulSet"},
    {"no kind", NULL, "{}", -1, WSPEC(0, 0, 0, 0, 0, ""), "no workload kind"},
};

static void test_parse(void)
{
	size_t i;

	for (i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		struct workload_spec got = WSPEC(42, 42, 42, 42, 42, "");
		char err[256] = "";
		int rc = workload_parse(parse_cases[i].kind, parse_cases[i].json,
		                        strlen(parse_cases[i].json), &got, err, sizeof(err));
		CHECK(rc == parse_cases[i].rc, "%s: rc %d (%s)", parse_cases[i].name, rc, err);
		if (rc == 0 && parse_cases[i].rc == 0) {
			const struct workload_spec *w = &parse_cases[i].want;
			CHECK(got.replicas == w->replicas &&
			          got.ordinals_start == w->ordinals_start &&
			          got.completions == w->completions &&
			          got.parallelism == w->parallelism && got.indexed == w->indexed,
			      "%s: got {%ld,%ld,%ld,%ld,%d}", parse_cases[i].name, got.replicas,
			      got.ordinals_start, got.completions, got.parallelism, got.indexed);
		} else if (parse_cases[i].rc != 0) {
			CHECK(strstr(err, parse_cases[i].err_has) != NULL, "%s: '%s' lacks '%s'",
			      parse_cases[i].name, err, parse_cases[i].err_has);
			CHECK(got.replicas == 42, "%s: out written on failure",
			      parse_cases[i].name);
		}
	}
	/* a JobSet's names: 63 characters fit, 64 are refused with the path and the limit */
	{
		static const struct {
			const char *what, *fmt;
			int valid; /* 1: valid at 63 characters; 0: it names no replicated Job */
		} names[] = {
		    {"JobSet .spec.network.subdomain",
		     "{\"spec\":{\"network\":{\"subdomain\":\"%s\"},\"replicatedJobs\":[{"
		     "\"name\":\"w\",\"replicas\":1,\"template\":{\"spec\":{\"completions\":1,"
		     "\"parallelism\":1,\"completionMode\":\"Indexed\"}}}]}}",
		     1},
		    {"JobSet .spec.coordinator.replicatedJob",
		     "{\"spec\":{\"coordinator\":{\"replicatedJob\":\"%s\"},\"replicatedJobs\":[{"
		     "\"name\":\"w\",\"replicas\":1,\"template\":{\"spec\":{\"completions\":1,"
		     "\"parallelism\":1,\"completionMode\":\"Indexed\"}}}]}}",
		     0},
		};
		char name[65], json[512], err[256], want[128];
		size_t k, len;

		for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
			for (len = 62; len <= 64; len++) {
				struct workload_spec got;
				int rc;

				memset(name, 'a', len);
				name[len] = '\0';
				snprintf(json, sizeof(json), names[k].fmt, name);
				err[0] = '\0';
				rc = workload_parse(&kind_jobset, json, strlen(json), &got, err,
				                    sizeof(err));
				snprintf(want, sizeof(want),
				         "%s is not a string of at most 63 characters",
				         names[k].what);
				if (len <= 63)
					CHECK(names[k].valid ? rc == 0
					                     : strstr(err, names[k].what) == NULL,
					      "%s of %zu characters: %s", names[k].what, len, err);
				else
					CHECK(rc != 0 && strcmp(err, want) == 0,
					      "%s of %zu characters: rc %d '%s', want '%s'",
					      names[k].what, len, rc, err, want);
			}
	}
	/* the length is honoured: the bytes after it are not read */
	{
		struct workload_spec got;
		char err[256];
		const char *j = "{\"spec\":{\"replicas\":9}}GARBAGE";
		CHECK(workload_parse(STS, j, 23, &got, err, sizeof(err)) == 0 && got.replicas == 9,
		      "length-bounded parse: %s", err);
	}
}

/*
 * The edges of a look-up answer: a count of 2147483647 is read and 2147483648
 * refused; a metadata.uid of 63 characters is kept and one of 64 (more than
 * uid holds) read as none; a Service's selector of 16 labels is kept and one of
 * 17 is not (-1), nor one whose key or value has 128 characters (127 fit).
 */
static void test_answer_edges(void)
{
	struct workload_spec got;
	struct service_info si;
	char json[6000], err[256], s[130];
	size_t k;

	CHECK(workload_parse(STS, "{\"spec\":{\"replicas\":2147483647}}", 32, &got, err,
	                     sizeof(err)) == 0 &&
	          got.replicas == 2147483647L,
	      "replicas 2147483647: %ld (%s)", got.replicas, err);
	got.replicas = 42;
	CHECK(workload_parse(STS, "{\"spec\":{\"replicas\":2147483648}}", 32, &got, err,
	                     sizeof(err)) == -1 &&
	          strcmp(err, "StatefulSet .spec.replicas is not a whole number from 0 to "
	                      "2147483647") == 0 &&
	          got.replicas == 42,
	      "replicas 2147483648: '%s'", err);
	for (k = 63; k <= 64; k++) {
		memset(s, 'u', k);
		s[k] = '\0';
		snprintf(json, sizeof(json), "{\"metadata\":{\"uid\":\"%s\"},\"spec\":{}}", s);
		workload_spec_init(&got);
		CHECK(workload_parse(STS, json, strlen(json), &got, err, sizeof(err)) == 0 &&
		          strcmp(got.uid, k == 63 ? s : "") == 0 && got.cached == 0,
		      "a uid of %zu characters: '%s'", k, got.uid);
	}
	for (k = 16; k <= 17; k++) {
		size_t i, o;

		o = (size_t)snprintf(json, sizeof(json),
		                     "{\"spec\":{\"clusterIP\":\"None\",\"selector\":{");
		for (i = 0; i < k; i++)
			o += (size_t)snprintf(json + o, sizeof(json) - o, "%s\"k%zu\":\"v\"",
			                      i ? "," : "", i);
		snprintf(json + o, sizeof(json) - o, "}}}");
		CHECK(workload_parse_service(json, strlen(json), &si, err, sizeof(err)) == 0 &&
		          si.n_selector == (k == 16 ? 16 : -1),
		      "a selector of %zu labels: %d", k, si.n_selector);
	}
	for (k = 127; k <= 128; k++) {
		int v;

		memset(s, 'a', k);
		s[k] = '\0';
		for (v = 0; v < 2; v++) {
			snprintf(json, sizeof(json), "{\"spec\":{\"selector\":{\"%s\":\"%s\"}}}",
			         v ? "app" : s, v ? s : "x");
			CHECK(workload_parse_service(json, strlen(json), &si, err, sizeof(err)) ==
			              0 &&
			          si.n_selector == (k == 127 ? 1 : -1) &&
			          (k != 127 || strcmp(si.selector[0][v], s) == 0),
			      "a selector %s of %zu characters: %d", v ? "value" : "key", k,
			      si.n_selector);
		}
	}
}

/* ---- kube_workload_path ---- */

static const struct {
	const char *name;
	const struct kind *kind;
	const char *ns, *wl, *want, *err_has;
} path_cases[] = {
    {"sts", STS, "team-a", "ddp", "/apis/apps/v1/namespaces/team-a/statefulsets/ddp", NULL},
    {"job", JOB, "default", "train", "/apis/batch/v1/namespaces/default/jobs/train", NULL},
    {"dotted name", STS, "ns", "a.b-c", "/apis/apps/v1/namespaces/ns/statefulsets/a.b-c", NULL},
    {"digits", JOB, "0", "9", "/apis/batch/v1/namespaces/0/jobs/9", NULL},
    {"traversal", STS, "ns", "../secrets", NULL, "'../secrets' is not a valid StatefulSet name"},
    {"slash", JOB, "ns", "a/b", NULL, "'a/b' is not a valid Job name"},
    {"query", JOB, "ns", "a?watch=1", NULL, "not a valid Job name"},
    {"upper case", STS, "ns", "DDP", NULL, "not a valid StatefulSet name"},
    {"empty name", STS, "ns", "", NULL, "'' is not a valid StatefulSet name"},
    {"null name", STS, "ns", NULL, NULL, "not a valid"},
    {"dotted namespace", STS, "a.b", "x", NULL, "namespace 'a.b' is not a valid namespace name"},
    {"namespace too long", STS, "a123456789012345678901234567890123456789012345678901234567890123",
     "x", NULL, "is not a valid namespace name"},
    {"namespace with space", JOB, "a b", "x", NULL, "namespace 'a b'"},
    {"null namespace", JOB, NULL, "x", NULL, "namespace ''"},
    {"no kind", NULL, "ns", "x", NULL, "no workload kind"},
};

static void test_path(void)
{
	char out[600], err[256];
	size_t i;

	for (i = 0; i < sizeof(path_cases) / sizeof(path_cases[0]); i++) {
		int rc;
		err[0] = '\0';
		rc = workload_api_path(path_cases[i].kind, path_cases[i].ns, path_cases[i].wl, out,
		                       sizeof(out), err, sizeof(err));
		if (path_cases[i].want) {
			CHECK(rc == 0, "%s: %s", path_cases[i].name, err);
			if (rc == 0)
				CHECK_STR(S(out), path_cases[i].want, path_cases[i].name);
		} else {
			CHECK(rc != 0, "%s: accepted as %s", path_cases[i].name, out);
			CHECK(strstr(err, path_cases[i].err_has) != NULL, "%s: '%s' lacks '%s'",
			      path_cases[i].name, err, path_cases[i].err_has);
		}
	}
	/* a 253-byte name fits, 254 does not */
	{
		char name[300];
		memset(name, 'a', sizeof(name));
		for (i = 63; i < 253; i += 64)
			name[i] = '.';
		name[253] = '\0';
		CHECK(workload_api_path(STS, "ns", name, out, sizeof(out), err, sizeof(err)) == 0,
		      "253 bytes: %s", err);
		name[253] = 'a';
		name[254] = '\0';
		CHECK(workload_api_path(STS, "ns", name, out, sizeof(out), err, sizeof(err)) != 0,
		      "254 bytes accepted");
	}
}

int main(void)
{
	test_parse();
	test_answer_edges();
	test_path();
	TEST_MAIN_END("workload");
}
