/*
 * The xgboost framework (src/frameworks/fw_xgboost.c): the DMLC_* variables of
 * every rank, as XGBoost's Rabit tracker reads them, and its one-worker-a-pod
 * warning at the edge of one process.
 */
#include <stdlib.h>
#include <string.h>

#include "framework.h"
#include "testutil.h"
#include "testworld.h"

static const struct framework *xgboost(void)
{
	return framework_named("xgboost", 7);
}

/* Rank r of StatefulSet ml/xgb, world w, running `processes` processes a pod. */
static void world(struct topology *t, long r, long w, long processes)
{
	test_world(t, &kind_statefulset, "xgb", r, w, 9091, xgboost()->bit);
	t->processes = processes;
}

/* Every rank of a world of 3: the tracker on rank 0's pod, one task id a pod, 3 workers. */
static void test_env(void)
{
	static const char *const names[] = {"DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID",
	                                    "DMLC_NUM_WORKER"};
	struct topology t;
	struct env_list env;
	long r;
	size_t k;

	for (r = 0; r < 3; r++) {
		char task[24];
		const char *want[4] = {"xgb-0.xgb.ml.svc.cluster.local", "9091", task, "3"};

		snprintf(task, sizeof(task), "%ld", r);
		world(&t, r, 3, 1);
		if (env_build(&t, &env) != 0) {
			CHECK(0, "rank %ld: env_build", r);
			continue;
		}
		CHECK(env.n == 4, "rank %ld: %zu variables, want 4", r, env.n);
		for (k = 0; k < 4 && k < env.n; k++) {
			CHECK_STR(env.vars[k].name, names[k], "name");
			CHECK_STR(env.vars[k].value, want[k], names[k]);
		}
		env_list_free(&env);
	}
}

/* DMLC_NUM_WORKER counts pods: a pod of 2 or more processes is warned, one of 1 (or not known) not.
 */
static void test_warning(void)
{
	static const struct {
		long processes;
		const char *want; /* NULL: no warning */
	} rows[] = {
	    {0, NULL},
	    {1, NULL},
	    {2, "distenv: DMLC_NUM_WORKER counts 1 XGBoost worker a pod, not its 2 processes"},
	    {8, "distenv: DMLC_NUM_WORKER counts 1 XGBoost worker a pod, not its 8 processes"},
	};
	struct topology t;
	size_t i;

	CHECK(xgboost() != NULL && xgboost()->warn != NULL, "xgboost has a warning");
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char out[160] = "";
		int got;

		world(&t, 1, 4, rows[i].processes);
		got = xgboost()->warn(&t, out, sizeof(out));
		CHECK(got == (rows[i].want != NULL), "%ld processes: warned %d ('%s')",
		      rows[i].processes, got, out);
		if (rows[i].want != NULL)
			CHECK(strcmp(out, rows[i].want) == 0 && strlen(out) < 120,
			      "%ld processes: '%s'", rows[i].processes, out);
	}
}

int main(void)
{
	test_env();
	test_warning();
	TEST_MAIN_END("fw_xgboost");
}
