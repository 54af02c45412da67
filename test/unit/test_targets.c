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

/* Rank 0 of StatefulSet ddp (world 2) whose one container has the resource limits lim. */
#define GPU_POD(lim)                                                                               \
	"{'metadata':{'name':'ddp-0','namespace':'ml','labels':{" LABEL "},'annotations':{"        \
	"'distenv.dev/world-size':'2'}," STS_OWNER "},'spec':{'subdomain':'ddp','containers':[{"   \
	"'name':'t','resources':{'limits':{" lim "}}}]}}"

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
    /* a GPU count is read up to 2^20 (1048576), as a number or a string, and not past it */
    {"nproc from a GPU limit of 1048576", GPU_POD("'nvidia.com/gpu':1048576"), "ml", NULL,
     "PET_NPROC_PER_NODE=1048576\n", NULL},
    {"nproc from a GPU limit of '1048576'", GPU_POD("'nvidia.com/gpu':'1048576'"), "ml", NULL,
     "PET_NPROC_PER_NODE=1048576\n", NULL},
    {"a GPU limit of 1048577 is not a count: one process", GPU_POD("'nvidia.com/gpu':1048577"),
     "ml", NULL, "PET_NPROC_PER_NODE=1\n", NULL},
    {"a GPU limit of 1: one process", GPU_POD("'amd.com/gpu':1"), "ml", NULL,
     "PET_NPROC_PER_NODE=1\n", NULL},
    {"a GPU limit of 0: one process", GPU_POD("'nvidia.com/gpu':0"), "ml", NULL,
     "PET_NPROC_PER_NODE=1\n", NULL},
    {"containers names a blank one: refused as the annotation's value",
     STS_POD("0", "'distenv.dev/containers':'trainer, '", ""), "ml", &STS4, NULL,
     "annotation distenv.dev/containers: \"trainer, \" has an empty container name"},
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

/*
 * An accelerator gpuResources does not list: a pod without GPUs and without
 * nproc-per-node runs one process, warned with the resource and the fix, at
 * the limit's edge (1 device: nothing to say; 2: warned); a listed GPU
 * resource, a framework's (google.com/tpu), a name without '/', or the
 * annotation: no warning. The largest of two is named, the first of a tie; a
 * name longer than the 63 bytes kept is warned all the same (the warning shows
 * 40). Only the target containers are read: a container the containers
 * annotation leaves out is not.
 */
static void test_other_accelerator(void)
{
	static const struct {
		const char *what, *anns, *limits, *want; /* want: the warning, NULL none */
		const char *nproc;
		const char *first; /* a container before the trainer, or "" */
	} rows[] = {
	    {"8 Gaudi", "", "'habana.ai/gaudi':'8'",
	     "distenv: 8 habana.ai/gaudi a pod, not in gpuResources: PET_NPROC_PER_NODE=1; set "
	     "distenv.dev/nproc-per-node",
	     "1", NULL},
	    {"2 (the edge)", "", "'habana.ai/gaudi':2",
	     "distenv: 2 habana.ai/gaudi a pod, not in gpuResources: PET_NPROC_PER_NODE=1; set "
	     "distenv.dev/nproc-per-node",
	     "1", NULL},
	    {"1: one process is right", "", "'habana.ai/gaudi':'1'", NULL, "1", NULL},
	    {"the largest of two named", "",
	     "'example.com/fpga':'3','habana.ai/gaudi':'4','gpu.intel.com/i915':'2'",
	     "distenv: 4 habana.ai/gaudi a pod, not in gpuResources: PET_NPROC_PER_NODE=1; set "
	     "distenv.dev/nproc-per-node",
	     "1", NULL},
	    {"annotated", ",'distenv.dev/nproc-per-node':'8'", "'habana.ai/gaudi':'8'", NULL, "8",
	     NULL},
	    {"annotated 1", ",'distenv.dev/nproc-per-node':'1'", "'habana.ai/gaudi':'8'", NULL, "1",
	     NULL},
	    {"a listed GPU beside it", "", "'habana.ai/gaudi':'8','nvidia.com/gpu':'2'", NULL, "2",
	     NULL},
	    {"TPU (its framework's)", "", "'google.com/tpu':'4'", NULL, "1", NULL},
	    {"no '/'", "", "'hugepages-2Mi':'4','memory':'8'", NULL, "1", NULL},
	    {"a tie: the first named", "", "'example.com/fpga':'4','habana.ai/gaudi':'4'",
	     "distenv: 4 example.com/fpga a pod, not in gpuResources: PET_NPROC_PER_NODE=1; set "
	     "distenv.dev/nproc-per-node",
	     "1", NULL},
	    {"a tie after a smaller one: the first of the two", "",
	     "'example.com/fpga':'2','habana.ai/gaudi':'3','gpu.intel.com/i915':'3'",
	     "distenv: 3 habana.ai/gaudi a pod, not in gpuResources: PET_NPROC_PER_NODE=1; set "
	     "distenv.dev/nproc-per-node",
	     "1", NULL},
	    /* 63 bytes, the most accel holds, then 64 and 88: each warned, the name cut so
	     * that the warning (with its advice) is 119 characters, under the 120 of one */
	    {"a name of 63 bytes", "",
	     "'accelerators.example-corporation.com/ai-processor-generation-23':'8'",
	     "distenv: 8 accelerators.example-cor... a pod, not in gpuResources: "
	     "PET_NPROC_PER_NODE=1; set distenv.dev/nproc-per-node",
	     "1", NULL},
	    {"a name of 64 bytes", "",
	     "'accelerators.example-corporation.com/ai-processor-generation-234':'8'",
	     "distenv: 8 accelerators.example-cor... a pod, not in gpuResources: "
	     "PET_NPROC_PER_NODE=1; set distenv.dev/nproc-per-node",
	     "1", NULL},
	    {"a name of 88 bytes", "",
	     "'accelerators.example-corporation.com/ai-processor-generation-2-with-a-longer-"
	     "model-name':'8'",
	     "distenv: 8 accelerators.example-cor... a pod, not in gpuResources: "
	     "PET_NPROC_PER_NODE=1; set distenv.dev/nproc-per-node",
	     "1", NULL},
	    {"a name of 27 bytes: whole at 119 characters", "", "'example-corporation.com/aix':'8'",
	     "distenv: 8 example-corporation.com/aix a pod, not in gpuResources: "
	     "PET_NPROC_PER_NODE=1; set distenv.dev/nproc-per-node",
	     "1", NULL},
	    {"a name of 28 bytes: cut", "", "'example-corporation.com/aixy':'8'",
	     "distenv: 8 example-corporation.com/... a pod, not in gpuResources: "
	     "PET_NPROC_PER_NODE=1; set distenv.dev/nproc-per-node",
	     "1", NULL},
	    {"a count of 7 digits: the name cut shorter", "",
	     "'accelerators.example-corporation.com/ai-processor-generation-23':'1048576'",
	     "distenv: 1048576 accelerators.examp... a pod, not in gpuResources: "
	     "PET_NPROC_PER_NODE=1; set distenv.dev/nproc-per-node",
	     "1", NULL},
	    {"a container the annotation leaves out", ",'distenv.dev/containers':'trainer'",
	     "'cpu':'4'", NULL, "1",
	     "{'name':'sidecar','image':'y','resources':{'limits':{'habana.ai/gaudi':'8'}}},"},
	    {"the container the annotation names", ",'distenv.dev/containers':'trainer'",
	     "'habana.ai/gaudi':'8'",
	     "distenv: 8 habana.ai/gaudi a pod, not in gpuResources: PET_NPROC_PER_NODE=1; set "
	     "distenv.dev/nproc-per-node",
	     "1",
	     "{'name':'sidecar','image':'y','resources':{'limits':{'example.com/fpga':'4'}}},"},
	};
	struct config cfg;
	size_t i;

	config_defaults(&cfg);
	for (i = 0; i < N_OF(rows); i++) {
		char buf[1024], err[512] = "", *txt;
		struct pod_plan plan;
		cJSON *pod;
		int k, warned = 0;

		snprintf(
		    buf, sizeof(buf),
		    "{'metadata':{'name':'ddp-0','namespace':'ml','labels':{" LABEL
		    ",'apps.kubernetes.io/pod-index':'0'},'annotations':{'distenv.dev/"
		    "world-size':'2'%s}," STS_OWNER "},'spec':{'hostname':'ddp-0','subdomain':"
		    "'ddp','containers':[%s{'name':'trainer','image':'x','resources':{'limits':{"
		    "%s}}}]}}",
		    rows[i].anns, rows[i].first ? rows[i].first : "", rows[i].limits);
		txt = dq(buf);
		pod = cJSON_Parse(txt);
		free(txt);
		CHECK(pod != NULL, "%s: JSON", rows[i].what);
		if (pod_plan_build(pod, "ml", 0, &cfg, NULL, &plan, err, sizeof(err)) != PLAN_OK) {
			CHECK(0, "%s: %s", rows[i].what, err);
			cJSON_Delete(pod);
			continue;
		}
		for (k = 0; k < plan.n_warnings && rows[i].want != NULL; k++)
			warned += strcmp(plan.warnings[k], rows[i].want) == 0;
		CHECK(warned == (rows[i].want != NULL) && plan.n_warnings == (rows[i].want != NULL),
		      "%s: %d warnings, first '%s'", rows[i].what, plan.n_warnings,
		      plan.n_warnings ? plan.warnings[0] : "");
		CHECK(strcmp(plan.topo.nproc, rows[i].nproc) == 0, "%s: PET_NPROC_PER_NODE %s",
		      rows[i].what, plan.topo.nproc);
		pod_plan_free(&plan);
		cJSON_Delete(pod);
	}
	/* listed in gpuResources by the config: counted, not warned */
	snprintf(cfg.gpu_resources[cfg.n_gpu_resources++], sizeof(cfg.gpu_resources[0]),
	         "habana.ai/gaudi");
	{
		char *txt =
		    dq("{'metadata':{'name':'ddp-0','namespace':'ml','labels':{" LABEL
		       ",'apps.kubernetes.io/pod-index':'0'},'annotations':{'distenv.dev/"
		       "world-size':'2'}," STS_OWNER "},'spec':{'hostname':'ddp-0','subdomain':"
		       "'ddp','containers':[{'name':'trainer','image':'x','resources':{"
		       "'limits':{'habana.ai/gaudi':'8'}}}]}}");
		cJSON *pod = cJSON_Parse(txt);
		struct pod_plan plan;
		char err[512] = "";

		free(txt);
		if (pod_plan_build(pod, "ml", 0, &cfg, NULL, &plan, err, sizeof(err)) == PLAN_OK) {
			CHECK(plan.n_warnings == 0 && strcmp(plan.topo.nproc, "8") == 0,
			      "listed: nproc %s, %d warnings", plan.topo.nproc, plan.n_warnings);
			pod_plan_free(&plan);
		} else {
			CHECK(0, "listed: %s", err);
		}
		cJSON_Delete(pod);
	}
}

/*
 * The processes per node come from the target containers' GPU limits alone,
 * and only of the resources gpuResources names: a config that names
 * nvidia.com/gpu alone reads no amd.com/gpu (the name kept past the list's end
 * is not listed: its 8 are warned as an accelerator gpuResources does not list),
 * and a containers annotation that names the second container reads no GPU of
 * the first.
 */
static void test_gpu_sources(void)
{
	static const char *const pods[] = {
	    GPU_POD("'amd.com/gpu':8"),
	    "{'metadata':{'name':'ddp-0','namespace':'ml','labels':{" LABEL "},'annotations':{"
	    "'distenv.dev/world-size':'2','distenv.dev/containers':'b'}," STS_OWNER "},'spec':{"
	    "'subdomain':'ddp','containers':[{'name':'a','resources':{'limits':{'nvidia.com/gpu':"
	    "8}}},{'name':'b','resources':{'limits':{'nvidia.com/gpu':2}}}]}}",
	};
	static const char *const want[] = {"1", "2"};
	/* amd.com/gpu left out of gpuResources is an accelerator like any other: warned */
	static const char *const warning[] = {
	    "distenv: 8 amd.com/gpu a pod, not in gpuResources: PET_NPROC_PER_NODE=1; set "
	    "distenv.dev/nproc-per-node",
	    NULL};
	static const char yaml[] = "gpuResources: [nvidia.com/gpu]\n";
	struct config cfg;
	char err[512];
	size_t i;

	config_defaults(&cfg);
	CHECK(config_parse(yaml, sizeof(yaml) - 1, &cfg, err, sizeof(err)) == 0 &&
	          cfg.n_gpu_resources == 1,
	      "gpuResources: %s", err);
	for (i = 0; i < N_OF(pods); i++) {
		char *txt = dq(pods[i]);
		cJSON *pod = cJSON_Parse(txt);
		struct pod_plan plan;
		const char *got;

		CHECK(pod_plan_build(pod, "ml", strlen(txt), &cfg, NULL, &plan, err, sizeof(err)) ==
		          PLAN_OK,
		      "pod %zu: %s", i, err);
		got = plan_var(&plan, "PET_NPROC_PER_NODE");
		CHECK(got != NULL && strcmp(got, want[i]) == 0,
		      "pod %zu: PET_NPROC_PER_NODE=%s, want %s", i, got ? got : "(none)", want[i]);
		CHECK(plan.n_warnings == (warning[i] != NULL) &&
		          (warning[i] == NULL || strcmp(plan.warnings[0], warning[i]) == 0),
		      "pod %zu: %d warnings, first '%s'", i, plan.n_warnings,
		      plan.n_warnings ? plan.warnings[0] : "");
		pod_plan_free(&plan);
		cJSON_Delete(pod);
		free(txt);
	}
}

/* A framework's resource (google.com/tpu for TPU) asks for it at a count of 1, not of 0. */
static void test_resource_count(void)
{
	static const struct {
		const char *res;
		int tpu;
	} cases[] = {
	    {"'limits':{'google.com/tpu':1}", 1},
	    {"'limits':{'google.com/tpu':0}", 0},
	    {"'requests':{'google.com/tpu':'1'}", 1},
	    {"'requests':{'google.com/tpu':'0'}", 0},
	};
	const struct framework *tpu = framework_named("tpu", 3);
	struct config cfg;
	size_t i;

	config_defaults(&cfg);
	CHECK(tpu != NULL, "the tpu framework");
	if (tpu == NULL)
		return;
	for (i = 0; i < N_OF(cases); i++) {
		char buf[256], *txt;
		cJSON *spec;
		unsigned m;

		snprintf(buf, sizeof(buf), "{'containers':[{'name':'t','resources':{%s}}]}",
		         cases[i].res);
		txt = dq(buf);
		spec = cJSON_Parse(txt);
		m = topology_template_frameworks(spec, NULL, &cfg);
		CHECK(!!(m & tpu->bit) == cases[i].tpu && (m & ~tpu->bit) == cfg.default_frameworks,
		      "%s: frameworks %#x", cases[i].res, m);
		cJSON_Delete(spec);
		free(txt);
	}
}

int main(void)
{
	plan_cases_run(plan_cases, N_OF(plan_cases), deny_reasons, N_OF(deny_reasons));
	test_max_containers();
	test_other_accelerator();
	test_gpu_sources();
	test_resource_count();
	TEST_MAIN_END("targets");
}
