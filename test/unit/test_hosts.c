/*
 * The host names of the ranks (src/core/hosts.c): /mutate denies a pod when any
 * rank's host name would not be a DNS label, naming the host and why; and
 * kind_host_name, the writer of a host name, against snprintf; which ranks have a
 * name at all (0 to world - 1).
 */
#include "kind.h"
#include "testpods.h"

static const struct denial_case denial_cases[] = {
    {"a pod of a Job whose name has a dot: the host it would have is named, and why not",
     "{'metadata':{'generateName':'train.v2-1-','labels':{" LABEL "},'annotations':{'batch."
     "kubernetes.io/job-completion-index':'1','distenv.dev/world-size':'2'},'ownerReferences':"
     "[{'apiVersion':'batch/v1','kind':'Job','name':'train.v2','uid':'u-t','controller':true}]"
     "},'spec':{'hostname':'train.v2-1','subdomain':'train'," CTR "}}",
     NULL, DENY_LIMIT,
     "distenv: Job ml/train.v2: the hostname of rank 1, train.v2-1, has a dot, which a pod's "
     "hostname (one DNS label) cannot: name the workload without dots"},
};

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

	/* a world of one: rank 0's own host is checked too (names of 61 and 62 characters) */
	memset(name, 'b', sizeof(name));
	name[61] = '\0';
	if (plan_sts(name, "ml", 0, 1, "", &plan, err, sizeof(err)) == PLAN_OK)
		pod_plan_free(&plan);
	else
		CHECK(0, "world 1, a host of 63 characters: denied: %s", err);
	name[61] = 'b';
	name[62] = '\0';
	{
		char want[300];

		snprintf(
		    want, sizeof(want),
		    "distenv: StatefulSet ml/%s: the hostname of rank 0, %s-0, is 64 characters, "
		    "above a DNS label's 63: shorten the names",
		    name, name);
		CHECK(plan_sts(name, "ml", 0, 1, "", &plan, err, sizeof(err)) == PLAN_DENY &&
		          strcmp(err, want) == 0,
		      "world 1, a host of 64 characters: '%s'", err);
	}
}

/*
 * Why a host is not a DNS label, at the edges of its words: a host of exactly 63
 * characters with a dot is denied for the dot (63 is a label's length), one of
 * 64 for its length (StatefulSets of 1,000 ranks through /mutate, the last host
 * <name>-999); a host of 100 characters is printed whole, one of 101 cut at 100
 * with "..." (topology_bad_host_why of a StatefulSet's rank 999, as /validate
 * asks it of a manifest: a StatefulSet's name may have 253 characters).
 */
static void test_host_why_edges(void)
{
	static const struct {
		size_t len;      /* the StatefulSet name's length; the host is 4 more */
		int dot;         /* a dot at its 10th character */
		const char *why; /* with %s: the host (cut at 100) */
	} cases[] = {
	    {59, 1,
	     "%s, has a dot, which a pod's hostname (one DNS label) cannot: name the "
	     "workload without dots"},
	    {60, 1, "%s, is 64 characters, above a DNS label's 63: shorten the names"},
	    {96, 0, "%s, is 100 characters, above a DNS label's 63: shorten the names"},
	    {97, 0, "%.100s..., is 101 characters, above a DNS label's 63: shorten the names"},
	};
	size_t i;

	for (i = 0; i < N_OF(cases); i++) {
		char name[128], host[140], why[400], want[600], err[1024];
		struct pod_plan plan;
		struct topology t;

		memset(name, 'a', cases[i].len);
		name[cases[i].len] = '\0';
		if (cases[i].dot)
			name[9] = '.';
		snprintf(host, sizeof(host), "%s-999", name);
		snprintf(why, sizeof(why), cases[i].why, host);
		if (cases[i].len < 64) {
			snprintf(want, sizeof(want),
			         "distenv: StatefulSet ml/%s: the hostname of rank 999, %s", name,
			         why);
			CHECK(plan_sts(name, "ml", 1, 1000, "", &plan, err, sizeof(err)) ==
			              PLAN_DENY &&
			          strcmp(err, want) == 0,
			      "a last host of %zu characters%s: '%s', want '%s'", cases[i].len + 4,
			      cases[i].dot ? " with a dot" : "", err, want);
		}
		memset(&t, 0, sizeof(t));
		t.kind = &kind_statefulset;
		snprintf(t.workload, sizeof(t.workload), "%s", name);
		t.world_size = 1000;
		t.group = -1;
		CHECK(topology_bad_host(&t) == 999, "%zu characters: the bad host's rank %ld",
		      cases[i].len + 4, topology_bad_host(&t));
		topology_bad_host_why(&t, 999, err, sizeof(err));
		CHECK(strcmp(err, why) == 0, "a host of %zu characters: '%s', want '%s'",
		      cases[i].len + 4, err, why);
	}
}

/*
 * kind_host_name against snprintf of the same name: the name and its length when
 * it fits with its NUL, -1 otherwise, at every buffer size across the edge and
 * well past it, the longest numbers included.
 */
static void test_host_name(void)
{
	static const struct {
		const char *a, *b;
		long n1, n2;
	} cases[] = {{"train", NULL, 7, -1},
	             {"job", "workers", 0, 12},
	             {"lws", NULL, 3, 1},
	             {"x", "", 1234567, -1},
	             {"a-very-long-workload-name", "rjob", 99, 0},
	             {"neg", "b", -9223372036854775807L - 1, 9223372036854775807L}};
	size_t i, len;
	int bad = 0;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char want[128], out[128];
		int wn;

		if (cases[i].b != NULL && cases[i].n2 >= 0)
			wn = snprintf(want, sizeof(want), "%s-%s-%ld-%ld", cases[i].a, cases[i].b,
			              cases[i].n1, cases[i].n2);
		else if (cases[i].b != NULL)
			wn = snprintf(want, sizeof(want), "%s-%s-%ld", cases[i].a, cases[i].b,
			              cases[i].n1);
		else if (cases[i].n2 >= 0)
			wn = snprintf(want, sizeof(want), "%s-%ld-%ld", cases[i].a, cases[i].n1,
			              cases[i].n2);
		else
			wn = snprintf(want, sizeof(want), "%s-%ld", cases[i].a, cases[i].n1);
		for (len = 1; len <= (size_t)wn + 64 && len <= sizeof(out); len++) {
			int got = kind_host_name(out, len, cases[i].a, cases[i].b, cases[i].n1,
			                         cases[i].n2);

			if ((size_t)wn < len ? got != wn || strcmp(out, want) != 0 : got != -1) {
				if (bad++ == 0)
					CHECK(0, "%s in %zu bytes: %d, want %d", want, len, got,
					      (size_t)wn < len ? wn : -1);
			}
		}
	}
	CHECK(bad == 0, "%d host names unlike snprintf's", bad);
}

/*
 * The ranks that have a host name: 0 to world - 1 (and rank 0 of a world of 0:
 * a workload scaled to 0 still names its rank 0), none at the world's size or
 * below 0; topology_host_run's runs end at the same edge.
 */
static void test_hostname_range(void)
{
	static const struct {
		long world, rank;
		const char *want; /* NULL: no name */
		long run;         /* topology_host_run's count from that rank */
	} rows[] = {{3, 0, "ddp-0", 3}, {3, 2, "ddp-2", 1}, {3, 3, NULL, 0},
	            {3, -1, NULL, 0},   {0, 0, "ddp-0", 0}, {0, 1, NULL, 0}};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct topology t;
		char out[64] = "", pre[64];
		size_t plen = 0;
		long first = -1, run;
		int n;

		memset(&t, 0, sizeof(t));
		t.kind = &kind_statefulset;
		snprintf(t.workload, sizeof(t.workload), "ddp");
		t.world_size = rows[i].world;
		t.group = -1;
		n = topology_hostname(&t, rows[i].rank, out, sizeof(out));
		if (rows[i].want == NULL)
			CHECK(n == -1, "world %ld, rank %ld: %d '%s', want no name", rows[i].world,
			      rows[i].rank, n, out);
		else
			CHECK(n == (int)strlen(rows[i].want) && strcmp(out, rows[i].want) == 0,
			      "world %ld, rank %ld: %d '%s', want '%s'", rows[i].world,
			      rows[i].rank, n, out, rows[i].want);
		run = topology_host_run(&t, rows[i].rank, pre, sizeof(pre), &plen, &first);
		CHECK(run == rows[i].run &&
		          (run == 0 || (strcmp(pre, "ddp-") == 0 && first == rows[i].rank)),
		      "world %ld, rank %ld: a run of %ld from %ld ('%s'), want %ld", rows[i].world,
		      rows[i].rank, run, first, run ? pre : "", rows[i].run);
	}
}

int main(void)
{
	test_hostname_range();
	denial_cases_run(denial_cases, N_OF(denial_cases));
	test_host_label();
	test_host_why_edges();
	test_host_name();
	TEST_MAIN_END("hosts");
}
