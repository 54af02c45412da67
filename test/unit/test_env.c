/*
 * The variables each framework adds (src/core/env.c) through pod_plan_build:
 * the port, the frameworks annotation, the elastic rendezvous.
 */
#include "testpods.h"

static const struct plan_case plan_cases[] = {
    {"port annotation", STS_POD("0", "'distenv.dev/world-size':'2','distenv.dev/port':'23456'", ""),
     "ml", NULL, "MASTER_PORT=23456\n", NULL},
    {"frameworks jax only",
     STS_POD("1", "'distenv.dev/world-size':'2','distenv.dev/frameworks':'jax'", ""), "ml", NULL,
     "JAX_COORDINATOR_ADDRESS=" A_ ":29500\nJAX_NUM_PROCESSES=2\nJAX_PROCESS_ID=1\n", NULL},
    {"elastic",
     STS_POD("1",
             "'distenv.dev/elastic':'2:4','distenv.dev/max-restarts':'3',"
             "'distenv.dev/frameworks':'pytorch'",
             ""),
     "ml", &STS4,
     "MASTER_ADDR=" A_ "\nMASTER_PORT=29500\nRANK=1\nWORLD_SIZE=4\nPET_MASTER_ADDR=" A_
     "\nPET_MASTER_PORT=29500\nPET_NNODES=2:4\nPET_NODE_RANK=1\nPET_NPROC_PER_NODE=1\n"
     "PET_RDZV_BACKEND=c10d\nPET_RDZV_ENDPOINT=" A_ ":29500\nPET_RDZV_ID=ml-ddp\n"
     "PET_MAX_RESTARTS=3\n",
     NULL},
};

int main(void)
{
	plan_cases_run(plan_cases, N_OF(plan_cases), NULL, 0);
	TEST_MAIN_END("env");
}
