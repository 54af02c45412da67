/*
 * The target containers (src/core/targets.c) through pod_plan_build: the
 * containers annotation, the processes per node from the GPU limits, and
 * limits.maxContainers.
 */
#include "testpods.h"

/* The reason of a denial (the metrics label), by plan case name; the others only need one. */
static const struct plan_reason deny_reasons[] = {
    {"containers names an unknown one", DENY_ANNOTATION},
};

static const struct plan_case plan_cases[] = {
    {"nproc from GPU limits",
     STS_POD("0", "'distenv.dev/world-size':'2'",
             ",'initContainers':[{'name':'i','resources':{'limits':{'nvidia.com/gpu':'16'}}}]"),
     "ml", NULL, "PET_NPROC_PER_NODE=1\n", NULL},
    {"nproc annotation",
     STS_POD("0", "'distenv.dev/world-size':'2','distenv.dev/nproc-per-node':'8'", ""), "ml", NULL,
     "PET_NPROC_PER_NODE=8\n", NULL},
    {"containers names an unknown one", STS_POD("0", "'distenv.dev/containers':'nope'", ""), "ml",
     &STS4, NULL, "no container or init container named \"nope\""},
    {"nproc is the largest GPU limit of the targets",
     "{'metadata':{'name':'ddp-0','namespace':'ml','labels':{" LABEL "}," STS_OWNER "},"
     "'spec':{'subdomain':'ddp','containers':[{'name':'a','resources':{'limits':{"
     "'nvidia.com/gpu':'4'}}},{'name':'b','resources':{'limits':{'amd.com/gpu':8}}}]}}",
     "ml", &STS4, "PET_NPROC_PER_NODE=8\n", NULL},
};

/* limits.maxContainers, at and one past its value (limits.maxWorldSize: test_annotation.c). */
static void test_max_containers(void)
{
	struct config cfg;
	char err[512];

	config_defaults(&cfg);
	cfg.max_containers = 3;
	cfg.max_world_size = 8;
	CHECK(plan_limited(&cfg, 3, 8, err, sizeof(err)) == PLAN_OK,
	      "3 containers, world 8, at both limits: %s", err);
	CHECK(plan_limited(&cfg, 4, 8, err, sizeof(err)) == PLAN_DENY &&
	          strstr(err, "4 containers, more than the limit of 3"),
	      "4 containers, limit 3: '%s'", err);
}

int main(void)
{
	plan_cases_run(plan_cases, N_OF(plan_cases), deny_reasons, N_OF(deny_reasons));
	test_max_containers();
	TEST_MAIN_END("targets");
}
