/*
 * The kind table as one: every row carries what the drivers, render and the
 * chart read from it (so a new kind cannot leave one out), the messages made
 * from the rows, and the labels the kinds' controllers own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "kind.h"
#include "kind_jobset.h"
#include "strbuf.h"
#include "testutil.h"

/* Every row has what render, the denials and the NetworkPolicy check read from it. */
static void test_rows(void)
{
	/* the order messages and the chart's rules list them in */
	static const struct kind *const listed[] = {&kind_statefulset, &kind_job, &kind_jobset,
	                                            &kind_leaderworkerset};
	size_t i;

	CHECK(kind_count == sizeof(listed) / sizeof(listed[0]), "%zu kinds", kind_count);
	for (i = 0; i < sizeof(listed) / sizeof(listed[0]); i++)
		CHECK(kind_listed(i) == listed[i], "kind_listed(%zu): %s, want %s", i,
		      kind_name(kind_listed(i)), kind_name(listed[i]));
	CHECK(kind_listed(kind_count) == NULL, "kind_listed past the last");
	for (i = 0; i < kind_count; i++) {
		const struct kind *k = kind_table[i];
		CHECK(kind_named(k->api.group, k->api.kind) == k, "kind_named(%s)", k->api.kind);
		/*
		 * the same name in another API group is another kind (OpenKruise's
		 * apps.kruise.io StatefulSet): groups sorting below, above and as
		 * an extension of its own
		 */
		{
			char ext[128];
			snprintf(ext, sizeof(ext), "%s.kruise.io", k->api.group);
			CHECK(kind_named("", k->api.kind) == NULL &&
			          kind_named("a.example.com", k->api.kind) == NULL &&
			          kind_named("zz.example.com", k->api.kind) == NULL &&
			          kind_named(ext, k->api.kind) == NULL,
			      "%s: found in another group", k->api.kind);
		}
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

/* One rule per kind for /validate (any version of a custom resource), get on each kind read. */
static void test_chart_rules(void)
{
	struct strbuf v, r, cel;
	size_t i;
	char want[256];
	const char *p;
	int n;

	strbuf_init(&v);
	strbuf_init(&r);
	strbuf_init(&cel);
	kind_chart_validate_rules(&v);
	kind_chart_rbac_rules(&r);
	kind_opt_in_cel(&cel);
	CHECK(!v.oom && !r.oom && !cel.oom && v.buf && r.buf && cel.buf, "generated");
	for (i = 0; i < kind_count && v.buf && r.buf && cel.buf; i++) {
		const struct kind *k = kind_table[i];
		const struct kind_template *t;
		snprintf(want, sizeof(want), "- apiGroups: [\"%s\"]\n  apiVersions: [\"%s\"]\n",
		         k->api.group, k->crd ? "*" : strchr(k->api.api_version, '/') + 1);
		CHECK(strstr(v.buf, want) != NULL, "%s: rule %s", k->api.kind, want);
		snprintf(want, sizeof(want), "  resources: [\"%s\"]\n", k->plural);
		CHECK(strstr(v.buf, want) != NULL, "%s: rule %s", k->api.kind, want);
		snprintf(want, sizeof(want),
		         "- apiGroups: [\"%s\"]\n  resources: [\"%s\"]\n  verbs: [\"get\"]\n",
		         k->api.group, k->api.resource ? k->api.resource : "");
		CHECK((strstr(r.buf, want) != NULL) == (k->api.resource != NULL), "%s: rbac %s",
		      k->api.kind, want);
		/* every template path's last member holds the opt-in label */
		for (t = k->templates; t->path != NULL; t++) {
			const char *last = strrchr(t->path, '.');
			snprintf(want, sizeof(want), "%s.metadata.labels['%s'] == 'true'",
			         last ? last + 1 : t->path, LABEL_INJECT);
			CHECK(strstr(cel.buf, want) != NULL, "%s: CEL lacks %s", k->api.kind, want);
		}
	}
	/* one rule each, and the CRD comment once */
	for (n = 0, p = v.buf; p && (p = strstr(p, "- apiGroups:")) != NULL; p++)
		n++;
	CHECK(n == (int)kind_count, "%d validate rules", n);
	for (n = 0, p = v.buf; p && (p = strstr(p, "# Only where")) != NULL; p++)
		n++;
	CHECK(n == 1, "%d CRD comments", n);
	strbuf_free(&v);
	strbuf_free(&r);
	strbuf_free(&cel);
}

/*
 * Host lists written from runs (host_run) against a name from hostname for
 * each rank: every kind, worlds across its runs' edges, JobSets with a
 * coordinator at position 0 and elsewhere, long names near the limit.
 */
static void test_host_runs(void)
{
	static const char *const names[] = {"train", "a-workload-name-of-sixty-three-bytes-"
	                                             "xxxxxxxxxxxxxxxxxxxxxxxxxx"};
	const struct kind *kinds[] = {&kind_statefulset, &kind_job, &kind_jobset,
	                              &kind_leaderworkerset};
	/* numbers that gain a digit within a run: 9 to 10, 99 to 100, 999 to 1000 */
	static const long worlds[] = {1,  2,  3,  4,  5,  6,  7,   8,   9,   10,  11,   12,   19,
	                              26, 33, 40, 97, 98, 99, 100, 101, 998, 999, 1000, 1001, 1003};
	int bad = 0;

	for (size_t kk = 0; kk < sizeof(kinds) / sizeof(kinds[0]); kk++)
		for (size_t nn = 0; nn < 2; nn++)
			for (size_t wi = 0; wi < sizeof(worlds) / sizeof(worlds[0]); wi++)
				for (long c = 0, w = worlds[wi];
				     c < (kinds[kk] == &kind_jobset ? 3 : 1); c++) {
					struct topology t;
					struct jobset_state *js = jobset_state(&t);
					struct strbuf got, want;
					char host[320];
					long p;

					memset(&t, 0, sizeof(t));
					t.kind = kinds[kk];
					snprintf(t.workload, sizeof(t.workload), "%s", names[nn]);
					snprintf(t.domain, sizeof(t.domain),
					         ".svc.ml.svc.cluster.local");
					t.port = 2222;
					t.world_size = w;
					t.group = kinds[kk] == &kind_leaderworkerset ? 7 : -1;
					t.start = kinds[kk] == &kind_statefulset ? 3 : 0;
					if (kinds[kk] == &kind_jobset) {
						/* three replicated Jobs: 1 Job of 1 pod, 2 of 3, 1
						 * of the rest */
						long sizes[3][2] = {
						    {1, 1}, {2, 3}, {1, w > 7 ? w - 7 : 1}};
						long first = 0;
						for (int j = 0; j < 3; j++) {
							snprintf(js->rjobs[j].name,
							         sizeof(js->rjobs[j].name), "r%d",
							         j);
							js->rjobs[j].jobs = sizes[j][0];
							js->rjobs[j].pods = sizes[j][1];
							js->rjobs[j].first = first;
							first += sizes[j][0] * sizes[j][1];
						}
						js->n_rjobs = 3;
						t.world_size = first;
						js->coordinator = c;
					}
					strbuf_init(&got);
					strbuf_init(&want);
					for (long n = 0; n < t.world_size; n++) {
						/* rank order: the coordinator first, then the
						 * others by position */
						p = n == 0 ? js->coordinator
						           : n - 1 + (n - 1 >= js->coordinator);
						if (topology_hostname(&t, topology_rank_at(&t, p),
						                      host, sizeof(host)) < 0) {
							bad++;
							break;
						}
						strbuf_printf(&want, "%s\"%s%s:%ld\"", n ? "," : "",
						              host, t.domain, t.port);
					}
					/* ranks run 0 .. world_size - 1: the last has a host,
					 * one past it and -1 have none, nor a run */
					{
						size_t pl = 0;
						long first = 0;
						if (topology_hostname(&t, t.world_size - 1, host,
						                      sizeof(host)) < 0 ||
						    topology_hostname(&t, t.world_size, host,
						                      sizeof(host)) != -1 ||
						    topology_hostname(&t, -1, host, sizeof(host)) !=
						        -1 ||
						    topology_host_run(&t, t.world_size, host,
						                      sizeof(host), &pl,
						                      &first) != 0 ||
						    topology_host_run(&t, -1, host, sizeof(host),
						                      &pl, &first) != 0)
							bad++;
					}
					if (env_host_list(&t, 0, t.world_size, &got) != 0 ||
					    got.buf == NULL || want.buf == NULL ||
					    strcmp(got.buf, want.buf) != 0) {
						if (bad++ == 0)
							CHECK(0,
							      "kind %s, %s, world %ld, coordinator "
							      "%ld: %s, want %s",
							      kind_name(t.kind), names[nn],
							      t.world_size, js->coordinator,
							      got.buf ? got.buf : "(none)",
							      want.buf ? want.buf : "(none)");
					}
					strbuf_free(&got);
					strbuf_free(&want);
					/* TF_CONFIG's role lists: each replicated Job's positions
					 * alone */
					for (int j = 0; j < js->n_rjobs; j++) {
						long from = js->rjobs[j].first,
						     to = from +
						          js->rjobs[j].jobs * js->rjobs[j].pods;
						int has_c =
						    js->coordinator >= from && js->coordinator < to;

						strbuf_init(&got);
						strbuf_init(&want);
						for (long n = 0; n < to - from; n++) {
							p = !has_c   ? from + n
							    : n == 0 ? js->coordinator
							             : from + n - 1 +
							                   (from + n - 1 >=
							                    js->coordinator);
							if (topology_hostname(
							        &t, topology_rank_at(&t, p), host,
							        sizeof(host)) >= 0)
								strbuf_printf(&want,
								              "%s\"%s%s:%ld\"",
								              n ? "," : "", host,
								              t.domain, t.port);
						}
						if (env_host_list(&t, from, to, &got) != 0 ||
						    got.buf == NULL || want.buf == NULL ||
						    strcmp(got.buf, want.buf) != 0)
							bad++;
						strbuf_free(&got);
						strbuf_free(&want);
					}
				}
	CHECK(bad == 0, "%d host lists unlike their names one by one", bad);
}

/*
 * doctor's name for a rank that has no pod, as its controller names that pod:
 * a StatefulSet's <name>-<start+r>, a Job's <name>-<index>- and a random tail,
 * a LeaderWorkerSet's leader <name>-<group> and worker <name>-<group>-<r>; a
 * kind whose pod names cannot be told (a JobSet's carry their Job's hash) has
 * none, and doctor says "rank N".
 */
static void test_doctor_rank_names(void)
{
	static const struct {
		const struct kind *kind;
		long start, g, r;
		const char *want; /* NULL: the kind names none */
	} rows[] = {
	    {&kind_statefulset, 0, 0, 1, "w-1"},     {&kind_statefulset, 3, 0, 2, "w-5"},
	    {&kind_job, 0, 0, 0, "w-0-\u2026"},      {&kind_job, 0, 0, 12, "w-12-\u2026"},
	    {&kind_leaderworkerset, 0, 2, 0, "w-2"}, {&kind_leaderworkerset, 0, 2, 3, "w-2-3"},
	    {&kind_jobset, 0, 0, 4, NULL},
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct kind_doctor *d = rows[i].kind->doctor;
		char out[64] = "";

		CHECK(d != NULL, "%s: a doctor row", rows[i].kind->api.kind);
		if (d == NULL)
			continue;
		CHECK((d->rank_name != NULL) == (rows[i].want != NULL), "%s: names ranks: %d",
		      rows[i].kind->api.kind, d->rank_name != NULL);
		if (d->rank_name == NULL || rows[i].want == NULL)
			continue;
		d->rank_name("w", rows[i].start, rows[i].g, rows[i].r, out, sizeof(out));
		CHECK(strcmp(out, rows[i].want) == 0, "%s: '%s', want '%s'", rows[i].kind->api.kind,
		      out, rows[i].want);
	}
}

int main(void)
{
	test_doctor_rank_names();
	test_host_runs();
	test_rows();
	test_supported();
	test_controller_labels();
	test_chart_rules();
	TEST_MAIN_END("kind");
}
