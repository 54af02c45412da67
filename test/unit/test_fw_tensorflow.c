/*
 * The tensorflow framework (src/frameworks/fw_tensorflow.c): what /validate
 * sizes TF_CONFIG at (widest: the ranks whose TF_CONFIG is the longest, so
 * that a world of N ranks is sized without building every rank's) against
 * every rank's own TF_CONFIG, with and without TensorFlow's role names; and
 * the worlds it refuses (refuse: parts named after some roles, not all).
 */
#include <stdlib.h>
#include <string.h>

#include "framework.h"
#include "kind_jobset.h"
#include "testutil.h"
#include "testworld.h"

/* A JobSet js in ml of the replicated Jobs names[i] (jobs[i] Jobs of pods[i] pods). */
static void jobset(struct topology *t, int n, const char *const *names, const long *jobs,
                   const long *pods)
{
	struct jobset_state *js;
	long first = 0;
	int i;

	test_world(t, &kind_jobset, "js", 0, 0, 29500, framework_named("tensorflow", 10)->bit);
	js = jobset_state(t);
	js->n_rjobs = n;
	for (i = 0; i < n; i++) {
		snprintf(js->rjobs[i].name, sizeof(js->rjobs[i].name), "%s", names[i]);
		js->rjobs[i].jobs = jobs[i];
		js->rjobs[i].pods = pods[i];
		js->rjobs[i].first = first;
		first += jobs[i] * pods[i];
	}
	t->world_size = first;
}

/* The length of rank r's TF_CONFIG; -1 when it cannot be built. */
static long tf_config_len(struct topology *t, long r)
{
	struct env_list env;
	const char *v;
	long n;

	t->rank = r;
	if (env_build(t, &env) != 0)
		return -1;
	v = test_env_value(&env, "TF_CONFIG");
	n = v != NULL ? (long)strlen(v) : -1;
	env_list_free(&env);
	return n;
}

static void test_widest(void)
{
	static const struct {
		const char *what;
		int n;
		const char *names[4];
		long jobs[4], pods[4];
	} rows[] = {
	    {"roles: chief, workers, ps, evaluator",
	     4,
	     {"chief", "worker", "ps", "evaluator"},
	     {1, 1, 1, 1},
	     {1, 12, 2, 1}},
	    {"roles: a wide evaluator pool", 2, {"worker", "evaluator"}, {1, 1}, {2, 11}},
	    {"roles: workers in several Jobs", 2, {"chief", "worker"}, {1, 3}, {1, 4}},
	    {"no roles: one list of workers", 2, {"trainer", "launcher"}, {2, 1}, {5, 1}},
	};
	const struct framework *fw = framework_named("tensorflow", 10);
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct topology t;
		long ranks[8], r, longest = -1, sized = -1, len;
		int k, got;

		jobset(&t, rows[i].n, rows[i].names, rows[i].jobs, rows[i].pods);
		for (r = 0; r < t.world_size; r++)
			if ((len = tf_config_len(&t, r)) > longest)
				longest = len;
		got = fw->widest(&t, ranks, 8);
		CHECK(got >= 1 && got <= 8, "%s: %d ranks", rows[i].what, got);
		for (k = 0; k < got && k < 8; k++) {
			CHECK(ranks[k] >= 0 && ranks[k] < t.world_size, "%s: rank %ld of %ld",
			      rows[i].what, ranks[k], t.world_size);
			if ((len = tf_config_len(&t, ranks[k])) > sized)
				sized = len;
		}
		CHECK(longest > 0 && sized == longest,
		      "%s: sized at %ld bytes, the longest TF_CONFIG has %ld", rows[i].what, sized,
		      longest);
		CHECK(fw->widest(&t, ranks, 0) == 0, "%s: no room, no ranks", rows[i].what);
	}
}

/*
 * Parts named after some roles and not others: refused when a part is chief or
 * ps, or when the pod asks for tensorflow; every part a role, or none, or only
 * an evaluator beside others under the defaults: served.
 */
static void test_refuse(void)
{
	static const struct {
		const char *what;
		int n;
		const char *names[3];
		int asked;
		const char *want; /* NULL: served */
	} rows[] = {
	    {"chief, workers, ps: defaults",
	     3,
	     {"chief", "workers", "ps"},
	     0,
	     "replicated Job chief is named after a TensorFlow role and workers is not, so "
	     "TF_CONFIG would make every pod a worker, chief included: name every replicated Job "
	     "chief, worker, ps or evaluator, or list the frameworks without tensorflow in "
	     "distenv.dev/frameworks"},
	    {"workers, ps: asked", 2, {"workers", "ps"}, 1, "replicated Job ps is named after"},
	    {"trainer, ps: the second part a role", 2, {"trainer", "ps"}, 0, "and trainer is not"},
	    {"trainer, evaluator: asked", 2, {"trainer", "evaluator"}, 1, "evaluator included"},
	    {"trainer, evaluator: defaults (a PyTorch job's evaluator)",
	     2,
	     {"trainer", "evaluator"},
	     0,
	     NULL},
	    {"chief, worker, ps: every part a role", 3, {"chief", "worker", "ps"}, 1, NULL},
	    {"worker, launcher: only worker named", 2, {"worker", "launcher"}, 1, NULL},
	    {"trainer, launcher: no roles", 2, {"trainer", "launcher"}, 1, NULL},
	};
	static const long one[3] = {1, 1, 1}, two[3] = {2, 2, 2};
	const struct framework *fw = framework_named("tensorflow", 10);
	size_t i;

	CHECK(fw->refuse != NULL, "tensorflow has no refuse");
	for (i = 0; fw->refuse != NULL && i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct topology t;
		char msg[512] = "";
		int got;

		jobset(&t, rows[i].n, rows[i].names, one, two);
		t.frameworks_asked = rows[i].asked ? t.frameworks : 0;
		got = fw->refuse(&t, NULL, msg, sizeof(msg));
		if (rows[i].want == NULL)
			CHECK(got == 0, "%s: refused: %s", rows[i].what, msg);
		else
			CHECK(got == 1 && strstr(msg, rows[i].want) != NULL,
			      "%s: got %d '%s', want '%s'", rows[i].what, got, msg, rows[i].want);
	}
}

/* The "task" of rank r's TF_CONFIG ("{\"type\":...,\"index\":N}"), into out. */
static void tf_task(struct topology *t, long r, char *out, size_t len)
{
	struct env_list env;
	const char *v, *task;

	out[0] = '\0';
	t->rank = r;
	if (env_build(t, &env) != 0)
		return;
	v = test_env_value(&env, "TF_CONFIG");
	task = v != NULL ? strstr(v, "\"task\":") : NULL;
	if (task != NULL)
		snprintf(out, len, "%s", task + strlen("\"task\":"));
	env_list_free(&env);
}

/*
 * A role's index counts its pods in rank order, the coordinator (rank 0) first
 * when it is one of them: JobSet js of replicated Jobs worker (2 pods) and
 * chief (1), the coordinator the worker part's last pod (position 1, inside
 * it), or the chief (position 2, just past the workers: their indexes stay
 * their positions).
 */
static void test_role_index(void)
{
	static const char *const names[] = {"worker", "chief"};
	static const long jobs[] = {1, 1}, pods[] = {2, 1};
	static const struct {
		long coordinator;
		const char *task[3]; /* ranks 0, 1, 2 */
	} rows[] = {
	    {1,
	     {"{\"type\":\"worker\",\"index\":0}}", "{\"type\":\"worker\",\"index\":1}}",
	      "{\"type\":\"chief\",\"index\":0}}"}},
	    {2,
	     {"{\"type\":\"chief\",\"index\":0}}", "{\"type\":\"worker\",\"index\":0}}",
	      "{\"type\":\"worker\",\"index\":1}}"}},
	};
	size_t i;
	long r;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct topology t;

		jobset(&t, 2, names, jobs, pods);
		jobset_state(&t)->coordinator = rows[i].coordinator;
		for (r = 0; r < 3; r++) {
			char task[128];

			tf_task(&t, r, task, sizeof(task));
			CHECK(strcmp(task, rows[i].task[r]) == 0,
			      "coordinator at position %ld, rank %ld: task %s (want %s)",
			      rows[i].coordinator, r, task, rows[i].task[r]);
		}
	}
}

int main(void)
{
	test_widest();
	test_refuse();
	test_role_index();
	TEST_MAIN_END("fw_tensorflow");
}
