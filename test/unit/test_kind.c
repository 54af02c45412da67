/*
 * The kind table as one: every row carries what the drivers, render and the
 * chart read from it (so a new kind cannot leave one out), the messages made
 * from the rows, and the labels the kinds' controllers own.
 */
#include <stdlib.h>
#include <string.h>

#include "kind.h"
#include "testutil.h"

/* Every row has what render, the denials and the NetworkPolicy check read from it. */
static void test_rows(void)
{
	size_t i;

	CHECK(kind_count == WORKLOAD_KIND_COUNT - 1, "%zu kinds", kind_count);
	for (i = 0; i < kind_count; i++) {
		const struct kind *k = kind_table[i];
		CHECK(kind_of(k->kind) == k, "kind_of(%s)", k->api.kind);
		CHECK(kind_named(k->api.group, k->api.kind) == k, "kind_named(%s)", k->api.kind);
		CHECK(k->make_pods != NULL, "%s: no make_pods", k->api.kind);
		CHECK(k->supported != NULL && strstr(k->supported, k->api.kind) != NULL,
		      "%s: supported phrase '%s'", k->api.kind, k->supported ? k->supported : "");
		CHECK(k->templates != NULL && k->templates[0].path != NULL, "%s: no templates",
		      k->api.kind);
		CHECK(k->label_prefixes != NULL && k->label_prefixes[0] != NULL,
		      "%s: no label prefixes", k->api.kind);
	}
}

/* The denial of a pod of another controller lists every kind, as it always has. */
static void test_supported(void)
{
	char buf[512], small[40];
	const char *got = buf;

	kind_supported(buf, sizeof(buf));
	CHECK_STR(got,
	          "distenv supports only pods of a StatefulSet (apps/v1), of an Indexed Job "
	          "(batch/v1, completionMode: Indexed), of a JobSet (jobset.x-k8s.io) or of a "
	          "LeaderWorkerSet (leaderworkerset.x-k8s.io)",
	          "kind_supported");
	/* a short buffer holds the start, terminated */
	kind_supported(small, sizeof(small));
	CHECK(strlen(small) == sizeof(small) - 1 && strncmp(small, buf, sizeof(small) - 1) == 0,
	      "short buffer: '%s'", small);
}

static void test_controller_labels(void)
{
	static const struct {
		const char *key;
		int want;
	} cases[] = {
	    {"job-name", 1},
	    {"controller-uid", 1},
	    {"controller-revision-hash", 1},
	    {"batch.kubernetes.io/job-completion-index", 1},
	    {"batch.kubernetes.io/anything", 1},
	    {"statefulset.kubernetes.io/pod-name", 1},
	    {"apps.kubernetes.io/pod-index", 1},
	    {"jobset.sigs.k8s.io/jobset-name", 1},
	    {"leaderworkerset.sigs.k8s.io/name", 1},
	    {"app", 0},
	    {"role", 0},
	    {"jobset.sigs.k8s.io", 0}, /* the prefix needs its slash */
	    {"distenv.dev/inject", 0},
	    {"job-name-x", 0},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(kind_controller_label(cases[i].key) == cases[i].want, "%s: got %d",
		      cases[i].key, !cases[i].want);
}

int main(void)
{
	test_rows();
	test_supported();
	test_controller_labels();
	TEST_MAIN_END("kind");
}
