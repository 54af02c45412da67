/*
 * The annotation table: each check's accepted and refused values with their
 * messages, the duration grammar, every problem of a pod reported at once, and
 * docs/environment.md's annotation table kept equal to the table the core reads;
 * and through pod_plan_build, each bad value denied naming it, and
 * limits.maxWorldSize.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "annotation.h"
#include "testpods.h"
#include "testutil.h"

static void test_checks(void)
{
	static const struct {
		const char *name, *value;
		int ok;
		long out;            /* for counts and durations when ok */
		const char *message; /* substring of the refusal */
	} cases[] = {
	    {"distenv.dev/world-size", "4", 1, 4, NULL},
	    {"distenv.dev/world-size", "0", 0, 0, "\"0\" is not a world size between 1 and 65536"},
	    {"distenv.dev/world-size", "65537", 0, 0, "between 1 and 65536"},
	    {"distenv.dev/world-size", "4x", 0, 0, "is not a world size"},
	    {"distenv.dev/port", "65535", 1, 65535, NULL},
	    {"distenv.dev/port", "65536", 0, 0, "is not a port number between 1 and 65535"},
	    {"distenv.dev/max-restarts", "0", 1, 0, NULL},
	    {"distenv.dev/nproc-per-node", "gpu", 1, 0, NULL},
	    {"distenv.dev/nproc-per-node", "4097", 0, 0, "(or auto, gpu, cpu)"},
	    {"distenv.dev/frameworks", "jax, pytorch", 1, 0, NULL},
	    {"distenv.dev/frameworks", "mxnet", 0, 0, "is not a comma list of pytorch, tensorflow"},
	    {"distenv.dev/elastic", "2:4", 1, 0, NULL},
	    {"distenv.dev/elastic", "4:2", 0, 0, "has MIN greater than MAX"},
	    {"distenv.dev/elastic", "4", 0, 0, "is not MIN:MAX"},
	    {"distenv.dev/containers", "a, b", 1, 0, NULL},
	    {"distenv.dev/containers", "a,,b", 0, 0, "has an empty container name"},
	    {"distenv.dev/service", "svc-1", 1, 0, NULL},
	    {"distenv.dev/service", "Svc", 0, 0, "is not a valid Service name"},
	    {"distenv.dev/wait-for-master", "10m", 1, 600, NULL},
	    {"distenv.dev/wait-for-master", "1h30m", 1, 5400, NULL},
	    {"distenv.dev/wait-for-master", "30s", 1, 30, NULL},
	    {"distenv.dev/wait-for-master", "0s", 0, 0, "is not a duration"},
	    {"distenv.dev/wait-for-master", "10", 0, 0, "is not a duration"},
	    {"distenv.dev/wait-for-master", "25h", 0, 0, "at most 24h"},
	    {"distenv.dev/wait-for-master", "-5m", 0, 0, "is not a duration"},
	    /* an elastic range of 47 characters is read, one of 48 is not */
	    {"distenv.dev/elastic", "000000000000000000000000000000000000000000002:4", 1, 0, NULL},
	    {"distenv.dev/elastic", "0000000000000000000000000000000000000000000002:4", 0, 0,
	     "is not MIN:MAX"},
	    {"distenv.dev/elastic", "4:4", 1, 0, NULL},
	    /* the duration grammar at its edges: the digits 0 and 9, 32 characters, 24h, three
	       parts */
	    {"distenv.dev/wait-for-master", "9m", 1, 540, NULL},
	    {"distenv.dev/wait-for-master", "05m", 1, 300, NULL},
	    {"distenv.dev/wait-for-master", "90s", 1, 90, NULL},
	    {"distenv.dev/wait-for-master", "1s", 1, 1, NULL},
	    {"distenv.dev/wait-for-master", "00000000000000000000000000030s", 1, 30, NULL},
	    {"distenv.dev/wait-for-master", "0000000000000000000000000000030s", 1, 30, NULL},
	    {"distenv.dev/wait-for-master", "00000000000000000000000000000030s", 0, 0,
	     "is not a duration"},
	    {"distenv.dev/wait-for-master", "24h", 1, 86400, NULL},
	    {"distenv.dev/wait-for-master", "86400s", 1, 86400, NULL},
	    {"distenv.dev/wait-for-master", "86401s", 0, 0, "at most 24h"},
	    {"distenv.dev/wait-for-master", "23h59m59s", 1, 86399, NULL},
	    {"distenv.dev/wait-for-master", "23h59m60s", 1, 86400, NULL},
	    {"distenv.dev/wait-for-master", "23h59m61s", 0, 0, "at most 24h"},
	    {"distenv.dev/wait-for-master", "1h1m1s", 1, 3661, NULL},
	    {"distenv.dev/wait-for-master", "1h1m1s1s", 0, 0, "is not a duration"},
	};
	struct config cfg;
	size_t i;

	config_defaults(&cfg);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct annotation_def *d = annotation_find(cases[i].name);
		char err[512] = "";
		long out = -7;
		int rc;

		CHECK(d != NULL, "%s is in the table", cases[i].name);
		if (d == NULL)
			continue;
		rc = annotation_check(d, cases[i].value, &cfg, &out, err, sizeof(err));
		if (cases[i].ok) {
			CHECK(rc == 0, "%s=%s: %s", cases[i].name, cases[i].value, err);
			if (d->type == ANNOT_COUNT || d->type == ANNOT_DURATION)
				CHECK(out == cases[i].out, "%s=%s: %ld", cases[i].name,
				      cases[i].value, out);
		} else {
			CHECK(rc != 0 && strncmp(err, "distenv: annotation ", 20) == 0 &&
			          strstr(err, cases[i].name) && strstr(err, cases[i].message),
			      "%s=%s: '%s'", cases[i].name, cases[i].value, err);
		}
	}
	CHECK(annotation_find("distenv.dev/wolrd-size") == NULL, "a misspelling is unknown");
}

/* Every problem of a pod in one answer; unknown keys apart. */
static void test_check_all(void)
{
	cJSON *anns = cJSON_Parse("{\"distenv.dev/port\":\"0\",\"distenv.dev/wolrd-size\":\"3\","
	                          "\"distenv.dev/elastic\":\"4:2\",\"other/x\":\"y\","
	                          "\"distenv.dev/frameworks\":\"jax\",\"distenv.dev/typo\":\"1\"}");
	struct config cfg;
	char err[1024], unknown[256];
	int n_unknown, bad;

	config_defaults(&cfg);
	bad = annotation_check_all(anns, &cfg, err, sizeof(err), unknown, sizeof(unknown),
	                           &n_unknown);
	CHECK(bad == 2, "two bad values, got %d: %s", bad, err);
	CHECK(strstr(err, "distenv.dev/port") && strstr(err, "distenv.dev/elastic") &&
	          strstr(err, "; ") && !strstr(err, "distenv: "),
	      "both named once joined: '%s'", err);
	CHECK(n_unknown == 2 &&
	          strcmp(unknown,
	                 "distenv.dev/wolrd-size (did you mean world-size?)\ndistenv.dev/typo") ==
	              0,
	      "unknown keys: '%s'", unknown);
	cJSON_Delete(anns);
	/* read only on labelled pods and templates: the label is there, the annotation idle */
	anns = cJSON_Parse("{\"distenv.dev/inject\":\"true\"}");
	annotation_check_all(anns, &cfg, err, sizeof(err), unknown, sizeof(unknown), &n_unknown);
	CHECK(n_unknown == 1 && strcmp(unknown, "distenv.dev/inject (only the label opts in)") == 0,
	      "the opt-in as an annotation: '%s'", unknown);
	cJSON_Delete(anns);
}

/*
 * The unknown keys' list keeps a key whole or leaves it out: "distenv.dev/typo"
 * (16 characters) goes into 17 bytes, not into 16, and is counted either way.
 */
static void test_unknown_list_edge(void)
{
	cJSON *anns = cJSON_Parse("{\"distenv.dev/typo\":\"1\"}");
	struct config cfg;
	char err[256], unknown[32];
	int n_unknown;

	config_defaults(&cfg);
	memset(unknown, 'x', sizeof(unknown));
	annotation_check_all(anns, &cfg, err, sizeof(err), unknown, 17, &n_unknown);
	CHECK(n_unknown == 1 && strcmp(unknown, "distenv.dev/typo") == 0, "17 bytes: %d '%s'",
	      n_unknown, unknown);
	memset(unknown, 'x', sizeof(unknown));
	annotation_check_all(anns, &cfg, err, sizeof(err), unknown, 16, &n_unknown);
	CHECK(n_unknown == 1 && strcmp(unknown, "") == 0, "16 bytes: %d '%s'", n_unknown, unknown);
	cJSON_Delete(anns);
}

/* A misspelling within two edits of a known key is named; anything further is not guessed. */
static const struct {
	const char *name, *want; /* want NULL: no suggestion */
} nearest_cases[] = {
    {"distenv.dev/wolrd-size", "distenv.dev/world-size"},          /* two letters swapped */
    {"distenv.dev/worldsize", "distenv.dev/world-size"},           /* one left out */
    {"distenv.dev/ports", "distenv.dev/port"},                     /* one added */
    {"distenv.dev/framework", "distenv.dev/frameworks"},           /* the singular */
    {"distenv.dev/elastc", "distenv.dev/elastic"},                 /* one left out */
    {"distenv.dev/max-restart", "distenv.dev/max-restarts"},       /* the singular */
    {"distenv.dev/wait-for-mastr", "distenv.dev/wait-for-master"}, /* one left out */
    {"distenv.dev/nprocs", NULL},                                  /* another word */
    {"distenv.dev/typo", NULL},                                    /* nothing near */
    {"distenv.dev/world", NULL},                                   /* five edits away */
};

static void test_nearest(void)
{
	size_t i;

	for (i = 0; i < sizeof(nearest_cases) / sizeof(nearest_cases[0]); i++) {
		const char *got = annotation_nearest(nearest_cases[i].name);
		CHECK((got == NULL && nearest_cases[i].want == NULL) ||
		          (got != NULL && nearest_cases[i].want != NULL &&
		           strcmp(got, nearest_cases[i].want) == 0),
		      "%s: nearest %s, want %s", nearest_cases[i].name, got ? got : "(none)",
		      nearest_cases[i].want ? nearest_cases[i].want : "(none)");
	}
}

/* docs/environment.md's table has a row per annotation, with the table's meaning and default. */
static void test_readme(void)
{
	FILE *f = fopen("docs/environment.md", "r");
	char line[2048];
	size_t i, rows = 0;
	int seen[64] = {0};

	CHECK(f != NULL, "docs/environment.md (run from the repository root)");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f)) {
		char want[1024];
		const struct annotation_def *d = NULL;
		if (strncmp(line, "| `distenv.dev/", 15) != 0)
			continue;
		for (i = 0; i < annotation_ndefs; i++) {
			size_t n = strlen(annotation_defs[i].name);
			if (strncmp(line + 3, annotation_defs[i].name, n) == 0 &&
			    line[3 + n] == '`')
				d = &annotation_defs[i], seen[i] = 1;
		}
		CHECK(d != NULL,
		      "docs/environment.md row of an annotation distenv does not have: %s", line);
		if (d == NULL)
			continue;
		snprintf(want, sizeof(want), "| `%s` | %s | %s |\n", d->name, d->meaning, d->dflt);
		CHECK(strcmp(line, want) == 0,
		      "docs/environment.md row differs from the table:\n  got  %s  want %s", line,
		      want);
		rows++;
	}
	fclose(f);
	for (i = 0; i < annotation_ndefs; i++)
		CHECK(seen[i], "docs/environment.md has no row for %s", annotation_defs[i].name);
	CHECK(rows == annotation_ndefs, "docs/environment.md rows %zu", rows);
}

/* The reason of a denial (the metrics label), by plan case name; the others only need one. */
static const struct plan_reason deny_reasons[] = {
    {"bad port", DENY_ANNOTATION},
    {"bad nproc", DENY_ANNOTATION},
    {"elastic MIN > MAX", DENY_ANNOTATION},
};

static const struct plan_case plan_cases[] = {
    {"bad port", STS_POD("0", "'distenv.dev/port':'0'", ""), "ml", &STS4, NULL,
     "annotation distenv.dev/port: \"0\""},
    {"bad port text", STS_POD("0", "'distenv.dev/port':'80a'", ""), "ml", &STS4, NULL,
     "annotation distenv.dev/port: \"80a\""},
    {"bad world size", STS_POD("0", "'distenv.dev/world-size':'-1'", ""), "ml", &STS4, NULL,
     "annotation distenv.dev/world-size: \"-1\""},
    {"world size with spaces", STS_POD("0", "'distenv.dev/world-size':' 4'", ""), "ml", &STS4, NULL,
     "annotation distenv.dev/world-size"},
    {"bad nproc", STS_POD("0", "'distenv.dev/nproc-per-node':'eight'", ""), "ml", &STS4, NULL,
     "annotation distenv.dev/nproc-per-node: \"eight\""},
    {"bad frameworks", STS_POD("0", "'distenv.dev/frameworks':'pytorch,mxnet'", ""), "ml", &STS4,
     NULL, "annotation distenv.dev/frameworks: \"pytorch,mxnet\""},
    {"elastic MIN > MAX", STS_POD("0", "'distenv.dev/elastic':'4:2'", ""), "ml", &STS4, NULL,
     "annotation distenv.dev/elastic: \"4:2\" has MIN greater than MAX"},
    {"elastic not a range", STS_POD("0", "'distenv.dev/elastic':'4'", ""), "ml", &STS4, NULL,
     "annotation distenv.dev/elastic: \"4\" is not MIN:MAX"},
    {"bad max-restarts", STS_POD("0", "'distenv.dev/max-restarts':'x'", ""), "ml", &STS4, NULL,
     "annotation distenv.dev/max-restarts: \"x\""},
    {"bad service annotation", JOB_POD("0", ",'distenv.dev/service':'Bad_Name'", ""), "default",
     &JOB3, NULL, "annotation distenv.dev/service: \"Bad_Name\""},
};

static const struct denial_case denial_cases[] = {
    {"two bad values, in the pod's order",
     STS_POD("1", "'distenv.dev/port':'0','distenv.dev/frameworks':'pytorch,mxnet'", ""), &STS4,
     DENY_ANNOTATION,
     "distenv: annotation distenv.dev/port: \"0\" is not a port number between 1 and 65535; "
     "annotation distenv.dev/frameworks: \"pytorch,mxnet\" is not a comma list of pytorch, "
     "tensorflow, jax, xgboost, paddle, tpu"},
};

/* limits.maxWorldSize, one past its value (limits.maxContainers: test_targets.c). */
static void test_max_world_size(void)
{
	struct config cfg;
	char err[512];

	config_defaults(&cfg);
	cfg.max_world_size = 8;
	CHECK(plan_limited(&cfg, 1, 9, err, sizeof(err)) == PLAN_DENY &&
	          strstr(err, "\"9\" is not a world size between 1 and 8"),
	      "world 9, limit 8: '%s'", err);
}

int main(void)
{
	test_checks();
	test_check_all();
	test_readme();
	test_nearest();
	test_unknown_list_edge();
	plan_cases_run(plan_cases, N_OF(plan_cases), deny_reasons, N_OF(deny_reasons));
	denial_cases_run(denial_cases, N_OF(denial_cases));
	test_max_world_size();
	TEST_MAIN_END("annotation");
}
