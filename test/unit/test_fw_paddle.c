/*
 * The paddle framework (src/frameworks/fw_paddle.c): what `python -m
 * paddle.distributed.launch` reads on each rank. Its master starts the job's
 * store only where the master host is 127.0.0.1 or the pod's own IP
 * (launch/controllers/master.py), so rank 0 gets 127.0.0.1:P and every other
 * rank rank 0's host; a container's own MASTER_ADDR names a host distenv does
 * not know, which every rank, rank 0 too, is given as it is.
 */
#include <stdlib.h>
#include <string.h>

#include "framework.h"
#include "testutil.h"
#include "testworld.h"

static void test_env(void)
{
	static const struct {
		long rank;
		const char *own_addr; /* a container's own MASTER_ADDR, or NULL */
		long own_port;        /* its own MASTER_PORT, or 0 */
		const char *master;
	} rows[] = {
	    {0, NULL, 0, "127.0.0.1:6170"},
	    {1, NULL, 0, "pd-0.pd.ml.svc.cluster.local:6170"},
	    {2, NULL, 0, "pd-0.pd.ml.svc.cluster.local:6170"},
	    {0, NULL, 7000, "127.0.0.1:7000"},
	    {2, NULL, 7000, "pd-0.pd.ml.svc.cluster.local:7000"},
	    {0, "10.0.0.9", 0, "10.0.0.9:6170"},
	    {1, "10.0.0.9", 0, "10.0.0.9:6170"},
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct topology t;
		struct env_list env;
		char rank[24];

		test_world(&t, &kind_statefulset, "pd", rows[i].rank, 3, 6170,
		           framework_named("paddle", 6)->bit);
		if (env_build_master(&t, rows[i].own_addr, rows[i].own_port, &env) != 0) {
			CHECK(0, "row %zu: env_build", i);
			continue;
		}
		snprintf(rank, sizeof(rank), "%ld", rows[i].rank);
		CHECK(env.n == 4, "row %zu: %zu variables, want 4", i, env.n);
		CHECK_STR(test_env_value(&env, "PADDLE_MASTER"), rows[i].master, "PADDLE_MASTER");
		CHECK_STR(test_env_value(&env, "PADDLE_NNODES"), "3", "PADDLE_NNODES");
		CHECK_STR(test_env_value(&env, "PADDLE_RANK"), rank, "PADDLE_RANK");
		CHECK_STR(test_env_value(&env, "PADDLE_JOB_ID"), "ml-pd", "PADDLE_JOB_ID");
		env_list_free(&env);
	}
}

int main(void)
{
	test_env();
	TEST_MAIN_END("fw_paddle");
}
