/*
 * The JSON Patch (src/core/patch.c) through pod_plan_build: its exact shapes,
 * reinvocation at the env limit, and the ops of containers that share the
 * plan's list beside one with its own MASTER_ADDR.
 */
#include "testpods.h"

/* The exact patch for representative shapes. */
static const struct {
	const char *name;
	const char *pod;
	const char *want; /* exact JSON Patch, single-quoted */
} patch_cases[] = {
    {"no env, no annotations: whole array and annotations object",
     "{'metadata':{'name':'ddp-1','namespace':'ml','labels':{" LABEL "}," STS_OWNER "},"
     "'spec':{'subdomain':'ddp','containers':[{'name':'c'}]}}",
     "[{'op':'add','path':'/spec/containers/0/env','value':[{'name':'MASTER_ADDR','value':'" A_
     "'},{'name':'MASTER_PORT','value':'29500'},{'name':'RANK','value':'1'},{'name':'WORLD_SIZE',"
     "'value':'2'},{'name':'NODE_RANK','value':'1'},{'name':'NNODES','value':'2'},"
     "{'name':'PET_MASTER_ADDR','value':'" A_ "'},{'name':'PET_MASTER_PORT','value':"
     "'29500'},{'name':'PET_NNODES','value':'2'},{'name':'PET_NODE_RANK','value':'1'},{'name':"
     "'PET_NPROC_PER_NODE','value':'1'}]},{'op':'add','path':'/metadata/annotations','value':{"
     "'distenv.dev/injected':'rank=1,world-size=2,master=" A_ ":29500'}}]"},
    {"user env kept (its RANK, the pod's own), injected inserted before it, not duplicated",
     "{'metadata':{'name':'ddp-0','namespace':'ml','labels':{" LABEL
     "},'annotations':{'x':'y'}," STS_OWNER
     "},'spec':{'subdomain':'ddp','containers':[{'name':'c','env':[{'name':'RANK',"
     "'value':'0'},{'name':'A','value':'$(MASTER_ADDR)'}]}]}}",
     "[{'op':'add','path':'/spec/containers/0/env/0','value':{'name':'MASTER_ADDR','value':'" A_
     "'}},{'op':'add','path':'/spec/containers/0/env/1','value':{'name':'MASTER_PORT','value':"
     "'29500'}},{'op':'add','path':'/spec/containers/0/env/2','value':{'name':'WORLD_SIZE',"
     "'value':'2'}},{'op':'add','path':'/spec/containers/0/env/3','value':{'name':'NODE_RANK',"
     "'value':'0'}},{'op':'add','path':'/spec/containers/0/env/4','value':{'name':'NNODES',"
     "'value':'2'}},{'op':'add','path':'/spec/containers/0/env/5','value':{'name':"
     "'PET_MASTER_ADDR','value':'" A_ "'}},{'op':'add','path':'/spec/containers/0/env/6','value':"
     "{'name':'PET_MASTER_PORT','value':'29500'}},{'op':'add','path':'/spec/containers/0/env/7',"
     "'value':{'name':'PET_NNODES','value':'2'}},{'op':'add','path':'/spec/containers/0/env/8',"
     "'value':{'name':'PET_NODE_RANK','value':'0'}},{'op':'add','path':"
     "'/spec/containers/0/env/9','value':{'name':'PET_NPROC_PER_NODE','value':'1'}},{'op':'add',"
     "'path':'/metadata/annotations/distenv.dev~1injected','value':'rank=0,world-size=2,master=" A_
     ":29500'}]"},
    {"already injected: nothing to add (reinvocation)",
     "{'metadata':{'name':'ddp-0','namespace':'ml','labels':{" LABEL "},'annotations':{"
     "'distenv.dev/injected':'x'}," STS_OWNER "},'spec':{'subdomain':'ddp','containers':[{'name':"
     "'c','env':[{'name':'MASTER_ADDR','value':'a'},{'name':'MASTER_PORT','value':'1'},{'name':"
     "'RANK','value':'0'},{'name':'WORLD_SIZE','value':'2'},{'name':'NODE_RANK','value':'0'},"
     "{'name':'NNODES','value':'2'},{'name':'PET_MASTER_ADDR','value':'a'},"
     "{'name':'PET_MASTER_PORT','value':'1'},{'name':'PET_NNODES','value':'2'},"
     "{'name':'PET_NODE_RANK','value':'0'},{'name':'PET_NPROC_PER_NODE','value':'1'}]}]}}",
     "[]"},
    {"containers annotation with an init container, job service sets subdomain",
     "{'metadata':{'generateName':'train-0-','labels':{" LABEL "},'annotations':{"
     "'batch.kubernetes.io/job-completion-index':'0','distenv.dev/service':'train',"
     "'distenv.dev/containers':'setup, main','distenv.dev/frameworks':'jax'}," JOB_OWNER "},"
     "'spec':{'initContainers':[{'name':'setup'}],'containers':[{'name':'side'},{'name':'main'}]}}",
     "[{'op':'add','path':'/spec/initContainers/0/env','value':[{'name':'JAX_COORDINATOR_ADDRESS',"
     "'value':'" J_ ":29500'},{'name':'JAX_NUM_PROCESSES','value':'2'},{'name':'JAX_PROCESS_ID',"
     "'value':'0'}]},{'op':'add','path':'/spec/containers/1/env','value':[{'name':"
     "'JAX_COORDINATOR_ADDRESS','value':'" J_ ":29500'},{'name':'JAX_NUM_PROCESSES','value':'2'},"
     "{'name':'JAX_PROCESS_ID','value':'0'}]},{'op':'add','path':'/spec/subdomain','value':"
     "'train'},{'op':'add','path':'/metadata/annotations/distenv.dev~1injected','value':"
     "'rank=0,world-size=2,master=" J_ ":29500'}]"},
};

static void test_patches(void)
{
	struct config cfg;
	struct lookup_answer two = {0, WSPEC(2, 0, 2, 2, 1, ""), NULL};
	struct workload_lookup lk = {table_get, &two, NULL, NULL, NULL};
	size_t i;

	config_defaults(&cfg);
	cfg.default_frameworks = FW_PYTORCH;
	for (i = 0; i < sizeof(patch_cases) / sizeof(patch_cases[0]); i++) {
		char *txt = dq(patch_cases[i].pod), *want = dq(patch_cases[i].want), *got = NULL;
		cJSON *pod = cJSON_Parse(txt);
		struct pod_plan plan;
		char err[512] = "";

		CHECK(pod != NULL, "%s: test pod JSON does not parse", patch_cases[i].name);
		if (pod_plan_build(pod, "default", 0, &cfg, &lk, &plan, err, sizeof(err)) ==
		    PLAN_OK) {
			got = strdup(plan.patch.buf);
			CHECK_STR(got, want, patch_cases[i].name);
			pod_plan_free(&plan);
		} else {
			CHECK(0, "%s: plan failed: %s", patch_cases[i].name, err);
		}
		free(got);
		cJSON_Delete(pod);
		free(txt);
		free(want);
	}
}

/* Applies the add-ops of plan's patch to the env of container 0 (the only shape env_pod makes). */
static void apply_env_ops(cJSON *pod, const cJSON *patch)
{
	cJSON *env = cJSON_GetObjectItem(
	    cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "spec"), "containers"),
	                       0),
	    "env");
	cJSON *anns = cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "metadata"), "annotations");
	cJSON *merged = cJSON_CreateArray(), *e;
	const cJSON *op;
	int pos = 0;

	/* The ops insert at 0, 1, 2, ... in order: the result is they, then the old entries. */
	cJSON_ArrayForEach(op, patch)
	{
		const char *path = json_str(op, "path");
		const char *slash = strrchr(path, '/');
		if (strncmp(path, "/spec/containers/0/env/", 23) == 0) {
			CHECK(atoi(slash + 1) == pos++, "env op %s out of order", path);
			cJSON_AddItemToArray(merged,
			                     cJSON_Duplicate(cJSON_GetObjectItem(op, "value"), 1));
		} else if (strcmp(path, "/metadata/annotations/distenv.dev~1injected") == 0)
			cJSON_AddItemToObject(anns, "distenv.dev/injected",
			                      cJSON_Duplicate(cJSON_GetObjectItem(op, "value"), 1));
	}
	cJSON_ArrayForEach(e, env) cJSON_AddItemToArray(merged, cJSON_Duplicate(e, 1));
	cJSON_ReplaceItemInObject(
	    cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "spec"), "containers"),
	                       0),
	    "env", merged);
}

/* Reinvocation at the env limit: 4,090 entries patched to 4,100 are then allowed unchanged. */
static void test_reinvocation_at_limit(void)
{
	struct config cfg;
	struct pod_plan plan;
	char err[512], *txt = env_pod(4090, NULL);
	cJSON *pod = cJSON_Parse(txt);
	int n;

	config_defaults(&cfg);
	CHECK(pod_plan_build(pod, "ml", 0, &cfg, NULL, &plan, err, sizeof(err)) == PLAN_OK,
	      "4090 entries: %s", err);
	{
		cJSON *patch = cJSON_Parse(plan.patch.buf);
		apply_env_ops(pod, patch);
		cJSON_Delete(patch);
	}
	pod_plan_free(&plan);
	n = cJSON_GetArraySize(cJSON_GetObjectItem(
	    cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "spec"), "containers"),
	                       0),
	    "env"));
	CHECK(n > cfg.max_env_per_container, "patched to %d entries, above the limit", n);
	CHECK(pod_plan_build(pod, "ml", 0, &cfg, NULL, &plan, err, sizeof(err)) == PLAN_OK &&
	          plan.patch_ops == 0 && strcmp(plan.patch.buf, "[]") == 0,
	      "reinvocation at %d entries: allowed unchanged (%s)", n, err);
	pod_plan_free(&plan);
	cJSON_Delete(pod);
	free(txt);

	/*
	 * A container over the limit that still needs variables is denied, and one
	 * at the limit is not: with names that start like some of distenv's (the
	 * list is walked) and with names that start like none of them (its length
	 * is the one counted when the targets were found).
	 */
	for (int f = 0; f < 2; f++) {
		const char *fmt = f == 0 ? "E%d" : "zz_%d";

		txt = env_pod_named(4097, fmt, NULL);
		pod = cJSON_Parse(txt);
		CHECK(pod_plan_build(pod, "ml", 0, &cfg, NULL, &plan, err, sizeof(err)) ==
		              PLAN_DENY &&
		          strstr(err, "has 4097 env entries, more than the limit of 4096"),
		      "4097 entries (%s) needing more: '%s'", fmt, err);
		cJSON_Delete(pod);
		free(txt);
		txt = env_pod_named(4096, fmt, NULL);
		pod = cJSON_Parse(txt);
		CHECK(pod_plan_build(pod, "ml", 0, &cfg, NULL, &plan, err, sizeof(err)) ==
		              PLAN_OK &&
		          plan.patch_ops > 0,
		      "4096 entries (%s): '%s'", fmt, err);
		pod_plan_free(&plan);
		cJSON_Delete(pod);
		free(txt);
	}
}

/*
 * Containers that share the plan's list and one with its own MASTER_ADDR: each
 * container's ops carry its own list (the patch escapes a shared list once).
 */
static void test_own_master_among_shared(void)
{
	static const char *const orders[] = {"a,b,c", "c,a,b", "a,c,b"};
	struct config cfg;
	size_t k;

	config_defaults(&cfg);
	for (k = 0; k < sizeof(orders) / sizeof(orders[0]); k++) {
		struct strbuf sb;
		const char *o = orders[k];
		cJSON *pod, *ops, *op;
		struct pod_plan plan;
		char err[512] = "";
		int seen[3] = {0, 0, 0}, i;

		strbuf_init(&sb);
		strbuf_puts(&sb,
		            "{\"metadata\":{\"name\":\"ddp-1\",\"namespace\":\"ml\","
		            "\"labels\":{\"distenv.dev/inject\":\"true\"},\"annotations\":{"
		            "\"distenv.dev/world-size\":\"2\",\"distenv.dev/containers\":"
		            "\"a,b,c\"},\"ownerReferences\":[{\"kind\":\"StatefulSet\","
		            "\"apiVersion\":\"apps/v1\",\"name\":\"ddp\",\"controller\":true}]},"
		            "\"spec\":{\"subdomain\":\"ddp\",\"containers\":[");
		for (i = 0; i < 3; i++)
			strbuf_printf(&sb, "%s{\"name\":\"%c\",\"env\":[%s]}", i ? "," : "",
			              o[2 * i],
			              o[2 * i] == 'c'
			                  ? "{\"name\":\"MASTER_ADDR\",\"value\":\"head.example\"}"
			                  : "{\"name\":\"E\",\"value\":\"v\"}");
		strbuf_puts(&sb, "]}}");
		pod = cJSON_Parse(sb.buf);
		CHECK(pod_plan_build(pod, "ml", 0, &cfg, NULL, &plan, err, sizeof(err)) == PLAN_OK,
		      "%s: %s", o, err);
		ops = cJSON_Parse(plan.patch.buf);
		cJSON_ArrayForEach(op, ops)
		{
			const char *path = cJSON_GetStringValue(cJSON_GetObjectItem(op, "path"));
			const cJSON *v = cJSON_GetObjectItem(op, "value");
			const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(v, "name"));
			const char *val = cJSON_GetStringValue(cJSON_GetObjectItem(v, "value"));
			int at;

			if (path == NULL || n == NULL || val == NULL ||
			    strcmp(n, "PET_MASTER_ADDR") != 0 ||
			    sscanf(path, "/spec/containers/%d/", &at) != 1 || at < 0 || at > 2)
				continue;
			seen[at]++;
			CHECK(strcmp(val, o[2 * at] == 'c' ? "head.example"
			                                   : "ddp-0.ddp.ml.svc.cluster.local") == 0,
			      "%s: container %c got PET_MASTER_ADDR=%s", o, o[2 * at], val);
		}
		CHECK(seen[0] == 1 && seen[1] == 1 && seen[2] == 1,
		      "%s: PET_MASTER_ADDR ops per container %d %d %d", o, seen[0], seen[1],
		      seen[2]);
		cJSON_Delete(ops);
		pod_plan_free(&plan);
		cJSON_Delete(pod);
		strbuf_free(&sb);
	}
}

/*
 * distenv.dev/wait-for-master's init container goes first: into an empty
 * initContainers list (as into none) the list is added whole, and before the
 * first of a list of one, each by its exact op; none when the pod has it.
 */
static void test_wait_init_op(void)
{
	static const struct {
		const char *what, *inits; /* the pod's initContainers, "" none */
		const char *path;         /* the op's path, NULL: no op */
		int whole;                /* 1: its value is the list, 0: the container */
	} cases[] = {
	    {"no initContainers", "", "/spec/initContainers", 1},
	    {"an empty list", ",'initContainers':[]", "/spec/initContainers", 1},
	    {"a list of one", ",'initContainers':[{'name':'setup','image':'s'}]",
	     "/spec/initContainers/0", 0},
	    {"it is there", ",'initContainers':[{'name':'distenv-wait-for-master','image':'w'}]",
	     NULL, 0},
	};
	struct config cfg;
	size_t i;

	config_defaults(&cfg);
	for (i = 0; i < N_OF(cases); i++) {
		char buf[1024], err[512] = "", *txt;
		const char *path = NULL;
		const cJSON *op, *v = NULL;
		struct pod_plan plan;
		cJSON *pod, *ops;
		int n = 0;

		snprintf(buf, sizeof(buf),
		         "{'metadata':{'name':'ddp-1','namespace':'ml','labels':{" LABEL
		         ",'apps.kubernetes.io/pod-index':'1'},'annotations':{'distenv.dev/"
		         "world-size':'2','distenv.dev/wait-for-master':'5m'}," STS_OWNER
		         "},'spec':{'hostname':'ddp-1','subdomain':'ddp'%s,'containers':[{'name':"
		         "'trainer','image':'x'}]}}",
		         cases[i].inits);
		txt = dq(buf);
		pod = cJSON_Parse(txt);
		free(txt);
		if (pod_plan_build(pod, "ml", 0, &cfg, NULL, &plan, err, sizeof(err)) != PLAN_OK) {
			CHECK(0, "%s: %s", cases[i].what, err);
			cJSON_Delete(pod);
			continue;
		}
		ops = cJSON_Parse(plan.patch.buf);
		cJSON_ArrayForEach(op, ops)
		{
			const char *p = json_str(op, "path");

			if (p != NULL && strncmp(p, "/spec/initContainers", 20) == 0 &&
			    strstr(p, "/env") == NULL) {
				path = p;
				v = cJSON_GetObjectItem(op, "value");
				n++;
			}
		}
		if (cases[i].path == NULL) {
			CHECK(n == 0, "%s: %d init container ops, first at %s", cases[i].what, n,
			      path ? path : "");
		} else {
			const cJSON *c = cases[i].whole ? cJSON_GetArrayItem(v, 0) : v;

			CHECK(n == 1 && strcmp(path, cases[i].path) == 0 &&
			          cJSON_IsArray(v) == cases[i].whole &&
			          (!cases[i].whole || cJSON_GetArraySize(v) == 1) &&
			          strcmp(json_str(c, "name") ? json_str(c, "name") : "",
			                 "distenv-wait-for-master") == 0,
			      "%s: %d init container ops, at %s, want one at %s", cases[i].what, n,
			      path ? path : "(none)", cases[i].path);
		}
		cJSON_Delete(ops);
		pod_plan_free(&plan);
		cJSON_Delete(pod);
	}
}

int main(void)
{
	test_patches();
	test_reinvocation_at_limit();
	test_own_master_among_shared();
	test_wait_init_op();
	TEST_MAIN_END("patch");
}
