/*
 * The jax framework (src/frameworks/fw_jax.c): what jax.distributed.initialize()
 * reads from each rank's environment (the coordinator at rank 0's pod and the
 * port, the process count and this process's id), the coordinator following a
 * container's own MASTER_ADDR and MASTER_PORT.
 */
#include <stdlib.h>
#include <string.h>

#include "framework.h"
#include "testutil.h"
#include "testworld.h"

static void test_env(void)
{
	static const struct {
		long rank, world;
		const char *own_addr; /* a container's own MASTER_ADDR, or NULL */
		long own_port;        /* its own MASTER_PORT, or 0 */
		const char *coordinator;
	} rows[] = {
	    {0, 1, NULL, 0, "jx-0.jx.ml.svc.cluster.local:1234"},
	    {0, 5, NULL, 0, "jx-0.jx.ml.svc.cluster.local:1234"},
	    {4, 5, NULL, 0, "jx-0.jx.ml.svc.cluster.local:1234"},
	    {2, 5, "10.0.0.9", 0, "10.0.0.9:1234"},
	    {2, 5, NULL, 7777, "jx-0.jx.ml.svc.cluster.local:7777"},
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct topology t;
		struct env_list env;
		char n[24], id[24];

		test_world(&t, &kind_job, "jx", rows[i].rank, rows[i].world, 1234,
		           framework_named("jax", 3)->bit);
		if (env_build_master(&t, rows[i].own_addr, rows[i].own_port, &env) != 0) {
			CHECK(0, "row %zu: env_build", i);
			continue;
		}
		snprintf(n, sizeof(n), "%ld", rows[i].world);
		snprintf(id, sizeof(id), "%ld", rows[i].rank);
		CHECK(env.n == 3, "row %zu: %zu variables, want 3", i, env.n);
		if (env.n == 3) {
			CHECK_STR(env.vars[0].name, "JAX_COORDINATOR_ADDRESS", "first");
			CHECK_STR(env.vars[0].value, rows[i].coordinator, "coordinator");
			CHECK_STR(env.vars[1].name, "JAX_NUM_PROCESSES", "second");
			CHECK_STR(env.vars[1].value, n, "process count");
			CHECK_STR(env.vars[2].name, "JAX_PROCESS_ID", "third");
			CHECK_STR(env.vars[2].value, id, "process id");
		}
		env_list_free(&env);
	}
}

int main(void)
{
	test_env();
	TEST_MAIN_END("fw_jax");
}
