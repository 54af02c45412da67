/*
 * A container's own MASTER_ADDR/MASTER_PORT, at apply time and at pod
 * creation: plan_template_own_master (what /validate and render deny a pod
 * template for) says exactly what pod_plan_build denies every pod of the
 * template for, row by row over valueFrom, $(reference), the derived
 * variables, frameworks and elasticity.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "plan.h"
#include "testutil.h"

/* A StatefulSet pod (rank r of 4, look-ups off) with the template's env and annotations. */
static cJSON *sts_pod(const char *env, const char *anns, int r)
{
	char buf[2048];

	snprintf(buf, sizeof(buf),
	         "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"ddp-%d\","
	         "\"namespace\":\"ml\",\"labels\":{\"distenv.dev/inject\":\"true\","
	         "\"apps.kubernetes.io/pod-index\":\"%d\"},\"annotations\":{"
	         "\"distenv.dev/world-size\":\"4\"%s%s},\"ownerReferences\":[{\"apiVersion\":"
	         "\"apps/v1\",\"kind\":\"StatefulSet\",\"name\":\"ddp\",\"controller\":true}]},"
	         "\"spec\":{\"hostname\":\"ddp-%d\",\"subdomain\":\"ddp\",\"containers\":["
	         "{\"name\":\"trainer\",\"image\":\"t\",\"env\":[%s]},"
	         "{\"name\":\"sidecar\",\"image\":\"s\"}]}}",
	         r, r, anns[0] ? "," : "", anns, r, env);
	return cJSON_Parse(buf);
}

#define ADDR_FROM                                                                                  \
	"{\"name\":\"MASTER_ADDR\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"status.podIP\"}}}"
#define PORT_FROM                                                                                  \
	"{\"name\":\"MASTER_PORT\",\"valueFrom\":{\"configMapKeyRef\":{\"name\":\"r\",\"key\":"    \
	"\"p\"}}}"
#define LIT(n, v) "{\"name\":\"" n "\",\"value\":\"" v "\"}"

static void test_apply_is_creation(void)
{
	static const struct {
		const char *what, *env, *anns;
		int denied; /* what every pod of the template gets */
	} rows[] = {
	    {"no MASTER_ADDR of its own", LIT("A", "1"), "", 0},
	    {"MASTER_ADDR from valueFrom", ADDR_FROM, "", 1},
	    {"MASTER_PORT from valueFrom", PORT_FROM, "", 1},
	    {"MASTER_ADDR from a $(reference)", LIT("MASTER_ADDR", "$(POD_IP)"), "", 1},
	    {"valueFrom with PET_MASTER_ADDR set too", ADDR_FROM "," LIT("PET_MASTER_ADDR", "x"),
	     "", 0},
	    {"valueFrom, PET_MASTER_ADDR set, elastic: PET_RDZV_ENDPOINT missing",
	     ADDR_FROM "," LIT("PET_MASTER_ADDR", "x"), "\"distenv.dev/elastic\":\"2:4\"", 1},
	    {"valueFrom, elastic, every derived variable set",
	     ADDR_FROM "," LIT("PET_MASTER_ADDR", "x") "," LIT("PET_RDZV_ENDPOINT", "x:1"),
	     "\"distenv.dev/elastic\":\"2:4\"", 0},
	    {"valueFrom, jax: JAX_COORDINATOR_ADDRESS missing", ADDR_FROM,
	     "\"distenv.dev/frameworks\":\"jax\"", 1},
	    {"valueFrom, jax with JAX_COORDINATOR_ADDRESS",
	     ADDR_FROM "," LIT("JAX_COORDINATOR_ADDRESS", "x:1"),
	     "\"distenv.dev/frameworks\":\"jax\"", 0},
	    {"valueFrom, tensorflow alone derives nothing", ADDR_FROM,
	     "\"distenv.dev/frameworks\":\"tensorflow\"", 0},
	    {"MASTER_PORT from valueFrom, paddle: PADDLE_MASTER missing", PORT_FROM,
	     "\"distenv.dev/frameworks\":\"paddle\"", 1},
	    {"a literal MASTER_PORT that is no port", LIT("MASTER_PORT", "http"), "", 1},
	    {"a literal MASTER_ADDR", LIT("MASTER_ADDR", "10.0.0.1"), "", 0},
	    {"valueFrom in a container not injected into", ADDR_FROM,
	     "\"distenv.dev/containers\":\"sidecar\"", 0},
	    /* a name listed twice: the kubelet uses the last entry (ownenv_entry) */
	    {"a literal MASTER_ADDR, then one from valueFrom",
	     LIT("MASTER_ADDR", "10.0.0.1") "," ADDR_FROM, "", 1},
	    {"MASTER_ADDR from valueFrom, then a literal",
	     ADDR_FROM "," LIT("MASTER_ADDR", "10.0.0.1"), "", 0},
	    {"a MASTER_PORT, then one that is no port",
	     LIT("MASTER_PORT", "29400") "," LIT("A", "1") "," LIT("MASTER_PORT", "http"), "", 1},
	    {"a MASTER_PORT that is no port, then one that is",
	     LIT("MASTER_PORT", "http") "," LIT("MASTER_PORT", "29400"), "", 0},
	    {"valueFrom, jax, JAX_COORDINATOR_ADDRESS twice",
	     ADDR_FROM
	     "," LIT("JAX_COORDINATOR_ADDRESS", "x:1") "," LIT("JAX_COORDINATOR_ADDRESS", "y:1"),
	     "\"distenv.dev/frameworks\":\"jax\"", 0},
	};
	struct config cfg;
	size_t i;
	int r;

	config_defaults(&cfg);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char applied[512] = "", created[512] = "";
		cJSON *pod = sts_pod(rows[i].env, rows[i].anns, 0);
		const cJSON *spec = cJSON_GetObjectItem(pod, "spec");
		const cJSON *anns =
		    cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "metadata"), "annotations");
		int got;

		CHECK(pod != NULL, "%s: pod", rows[i].what);
		got = plan_template_own_master(spec, anns, &cfg, applied, sizeof(applied));
		CHECK(got == rows[i].denied, "%s: apply time %d (%s)", rows[i].what, got, applied);
		cJSON_Delete(pod);
		/* every rank's pod is denied, with the text /validate gives, or none is */
		for (r = 0; r < 4; r++) {
			struct pod_plan plan;
			enum plan_status ps;
			pod = sts_pod(rows[i].env, rows[i].anns, r);
			ps = pod_plan_build(pod, "ml", 0, &cfg, NULL, &plan, created,
			                    sizeof(created));
			CHECK((ps == PLAN_DENY) == rows[i].denied, "%s: rank %d: %d (%s)",
			      rows[i].what, r, ps, ps == PLAN_DENY ? created : "");
			if (ps == PLAN_DENY && got)
				CHECK(strcmp(created, applied) == 0, "%s: rank %d: '%s' vs '%s'",
				      rows[i].what, r, created, applied);
			if (ps == PLAN_OK)
				pod_plan_free(&plan);
			cJSON_Delete(pod);
		}
	}
}

/*
 * A pod Istio's injector already shaped (istio-init's istio-iptables arguments,
 * istio-proxy), reinvoked: a warning naming the annotation that excludes the
 * port, only for the directions the sidecar takes.
 */
static void test_istio_warning(void)
{
	static const struct {
		const char *excl_in, *excl_out, *want; /* want NULL: no mesh warning */
	} rows[] = {
	    {"15090,15021,15020", NULL, "exclude{Inbound,Outbound}Ports"},
	    {"15090,15021,15020,29500", NULL, "excludeOutboundPorts"},
	    {"15090,15021,15020", "29500", "excludeInboundPorts"},
	    {"15090,15021,15020,29500", "29500", NULL},
	};
	struct config cfg;
	char buf[3072], err[512];
	size_t i;
	int k;

	config_defaults(&cfg);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pod_plan plan;
		enum plan_status ps;
		cJSON *pod;
		int found = 0;

		snprintf(
		    buf, sizeof(buf),
		    "{\"metadata\":{\"name\":\"ddp-1\",\"namespace\":\"ml\",\"labels\":{"
		    "\"distenv.dev/inject\":\"true\",\"apps.kubernetes.io/pod-index\":\"1\","
		    "\"security.istio.io/tlsMode\":\"istio\"},\"annotations\":{"
		    "\"distenv.dev/world-size\":\"2\",\"sidecar.istio.io/status\":"
		    "\"{\\\"initContainers\\\":[\\\"istio-init\\\"],\\\"containers\\\":"
		    "[\\\"istio-proxy\\\"]}\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\","
		    "\"kind\":\"StatefulSet\",\"name\":\"ddp\",\"controller\":true}]},"
		    "\"spec\":{\"hostname\":\"ddp-1\",\"subdomain\":\"ddp\",\"initContainers\":"
		    "[{\"name\":\"istio-init\",\"image\":\"proxyv2\",\"args\":[\"istio-iptables\","
		    "\"-p\",\"15001\",\"-z\",\"15006\",\"-u\",\"1337\",\"-m\",\"REDIRECT\","
		    "\"-i\",\"*\",\"-x\",\"\",\"-b\",\"*\",\"-d\",\"%s\"%s%s%s]}],"
		    "\"containers\":[{\"name\":\"trainer\",\"image\":\"t\"},"
		    "{\"name\":\"istio-proxy\",\"image\":\"proxyv2\",\"args\":[\"proxy\","
		    "\"sidecar\"]}]}}",
		    rows[i].excl_in, rows[i].excl_out ? ",\"-o\",\"" : "",
		    rows[i].excl_out ? rows[i].excl_out : "", rows[i].excl_out ? "\"" : "");
		pod = cJSON_Parse(buf);
		CHECK(pod != NULL, "row %zu: pod JSON", i);
		ps = pod_plan_build(pod, "ml", 0, &cfg, NULL, &plan, err, sizeof(err));
		CHECK(ps == PLAN_OK, "row %zu: %d (%s)", i, ps, err);
		if (ps == PLAN_OK) {
			for (k = 0; k < plan.n_warnings; k++) {
				if (strstr(plan.warnings[k], "Istio") == NULL)
					continue;
				found = 1;
				CHECK(rows[i].want != NULL &&
				          strstr(plan.warnings[k], rows[i].want) &&
				          strstr(plan.warnings[k], "port 29500") &&
				          strlen(plan.warnings[k]) < 120,
				      "row %zu: '%s'", i, plan.warnings[k]);
			}
			pod_plan_free(&plan);
		}
		CHECK(found == (rows[i].want != NULL), "row %zu: warned %d", i, found);
		cJSON_Delete(pod);
	}
}

/* Applies plan's JSON Patch to container 0's env as the API server would (add, replace). */
static void apply_env_patch(cJSON *pod, const char *patch_text)
{
	cJSON *patch = cJSON_Parse(patch_text), *ctr, *op;
	const char *pre = "/spec/containers/0/env";
	size_t n = strlen(pre);

	ctr = cJSON_GetArrayItem(
	    cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "spec"), "containers"), 0);
	CHECK(patch != NULL, "patch JSON: %s", patch_text);
	cJSON_ArrayForEach(op, patch)
	{
		const char *o = cJSON_GetStringValue(cJSON_GetObjectItem(op, "op"));
		const char *path = cJSON_GetStringValue(cJSON_GetObjectItem(op, "path"));
		cJSON *value = cJSON_Duplicate(cJSON_GetObjectItem(op, "value"), 1);
		cJSON *env = cJSON_GetObjectItem(ctr, "env");
		char *end;
		long at;

		if (strncmp(path, pre, n) != 0) {
			cJSON_Delete(value); /* annotations: not this test's */
			continue;
		}
		if (path[n] == '\0') {
			CHECK(strcmp(o, "add") == 0 && env == NULL, "%s %s", o, path);
			cJSON_AddItemToObject(ctr, "env", value);
			continue;
		}
		at = strtol(path + n + 1, &end, 10);
		if (strcmp(end, "/value") == 0) {
			CHECK(strcmp(o, "replace") == 0 && at < cJSON_GetArraySize(env), "%s %s", o,
			      path);
			cJSON_ReplaceItemInObject(cJSON_GetArrayItem(env, (int)at), "value", value);
		} else {
			CHECK(strcmp(o, "add") == 0 && *end == '\0' &&
			          at <= cJSON_GetArraySize(env),
			      "%s %s", o, path);
			cJSON_InsertItemInArray(env, (int)at, value);
		}
	}
	cJSON_Delete(patch);
}

/*
 * The value container 0's process gets for name, as the kubelet builds it: a
 * map filled in list order, so the last entry of a name wins (kubelet_pods.go
 * makeEnvironmentVariables). NULL when absent or not a literal.
 */
static const char *kubelet_value(const cJSON *pod, const char *name)
{
	const cJSON *ctr = cJSON_GetArrayItem(
	    cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "spec"), "containers"), 0);
	const cJSON *e;
	const char *v = NULL;

	cJSON_ArrayForEach(
	    e, cJSON_GetObjectItem(
	           ctr, "env")) if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(e, "name")),
	                                   name) == 0) v =
	    cJSON_GetStringValue(cJSON_GetObjectItem(e, "value"));
	return v;
}

/*
 * PET_RDZV_CONF of an elastic pod: distenv adds is_host to the container's own
 * literal, in the entry its process sees (the last of that name); an earlier
 * entry, which the kubelet drops, is neither read nor changed.
 */
static void test_rdzv_conf_listed_twice(void)
{
	static const struct {
		const char *what, *env;
		const char *want0,
		    *want1;        /* what rank 0's and rank 1's process get ("%d": is_host) */
		const char *first; /* entry 0 of the user's list after the patch */
	} rows[] = {
	    {"once", LIT("PET_RDZV_CONF", "timeout=900"), "timeout=900,is_host=1",
	     "timeout=900,is_host=0", "timeout=900,is_host=%d"},
	    {"twice, another name between",
	     LIT("PET_RDZV_CONF", "timeout=900") "," LIT("A", "1") "," LIT("PET_RDZV_CONF",
	                                                                   "timeout=60"),
	     "timeout=60,is_host=1", "timeout=60,is_host=0", "timeout=900"},
	    {"an is_host hidden by a later entry",
	     LIT("PET_RDZV_CONF", "is_host=1") "," LIT("PET_RDZV_CONF", "timeout=60"),
	     "timeout=60,is_host=1", "timeout=60,is_host=0", "is_host=1"},
	    {"the last says is_host: it wins",
	     LIT("PET_RDZV_CONF", "timeout=60") "," LIT("PET_RDZV_CONF", "is_host=0"), "is_host=0",
	     "is_host=0", "timeout=60"},
	    {"empty, then a value", LIT("PET_RDZV_CONF", "") "," LIT("PET_RDZV_CONF", "a=b"),
	     "a=b,is_host=1", "a=b,is_host=0", ""},
	    {"a value, then empty", LIT("PET_RDZV_CONF", "a=b") "," LIT("PET_RDZV_CONF", ""),
	     "is_host=1", "is_host=0", "a=b"},
	};
	struct config cfg;
	size_t i;
	int r;

	config_defaults(&cfg);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		for (r = 0; r < 2; r++) {
			struct pod_plan plan;
			char err[512] = "", first[64];
			cJSON *pod = sts_pod(rows[i].env, "\"distenv.dev/elastic\":\"2:4\"", r);
			const char *got, *want = r == 0 ? rows[i].want0 : rows[i].want1;
			const cJSON *e0;

			CHECK(pod != NULL, "%s: pod", rows[i].what);
			if (pod_plan_build(pod, "ml", 0, &cfg, NULL, &plan, err, sizeof(err)) !=
			    PLAN_OK) {
				CHECK(0, "%s: rank %d: %s", rows[i].what, r, err);
				cJSON_Delete(pod);
				continue;
			}
			apply_env_patch(pod, plan.patch.buf);
			got = kubelet_value(pod, "PET_RDZV_CONF");
			CHECK(got != NULL && strcmp(got, want) == 0,
			      "%s: rank %d gets '%s', want '%s'", rows[i].what, r,
			      got ? got : "(none)", want);
			/* the user's first entry of the name (distenv adds none: it is defined) */
			snprintf(first, sizeof(first), rows[i].first, r == 0);
			e0 = NULL;
			{
				const cJSON *e;
				cJSON_ArrayForEach(
				    e, cJSON_GetObjectItem(
				           cJSON_GetArrayItem(
				               cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "spec"),
				                                   "containers"),
				               0),
				           "env")) if (e0 == NULL &&
				                       strcmp(cJSON_GetStringValue(
				                                  cJSON_GetObjectItem(e, "name")),
				                              "PET_RDZV_CONF") == 0) e0 = e;
			}
			CHECK(e0 != NULL &&
			          strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(e0, "value")),
			                 first) == 0,
			      "%s: rank %d: first entry '%s', want '%s'", rows[i].what, r,
			      e0 ? cJSON_GetStringValue(cJSON_GetObjectItem(e0, "value"))
			         : "(none)",
			      first);
			pod_plan_free(&plan);
			cJSON_Delete(pod);
		}
}

/*
 * A pod's own value of a per-rank variable, listed twice: judged by the entry
 * its process sees (the last), warned when that one is wrong, silent when
 * only a hidden one is.
 */
static void test_own_value_listed_twice(void)
{
	static const struct {
		const char *env;
		int warned; /* rank 1 is warned that its RANK is another pod's */
	} rows[] = {
	    {LIT("RANK", "1"), 0},
	    {LIT("RANK", "0"), 1},
	    {LIT("RANK", "0") "," LIT("RANK", "1"), 0},
	    {LIT("RANK", "1") "," LIT("A", "x") "," LIT("RANK", "0"), 1},
	};
	struct config cfg;
	size_t i;
	int k;

	config_defaults(&cfg);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pod_plan plan;
		char err[512] = "";
		cJSON *pod = sts_pod(rows[i].env, "", 1);
		int warned = 0;

		CHECK(pod_plan_build(pod, "ml", 0, &cfg, NULL, &plan, err, sizeof(err)) == PLAN_OK,
		      "row %zu: %s", i, err);
		for (k = 0; k < plan.n_warnings; k++)
			warned |= strstr(plan.warnings[k], "RANK=0") != NULL;
		CHECK(warned == rows[i].warned, "row %zu (%s): warned %d", i, rows[i].env, warned);
		for (k = 0; k < plan.n_own; k++)
			if (strcmp(plan.own[k].name, "RANK") == 0)
				CHECK(strcmp(plan.own[k].value, rows[i].warned ? "0" : "1") == 0,
				      "row %zu: own RANK '%s'", i, plan.own[k].value);
		pod_plan_free(&plan);
		cJSON_Delete(pod);
	}
}

int main(void)
{
	test_apply_is_creation();
	test_rdzv_conf_listed_twice();
	test_own_value_listed_twice();
	test_istio_warning();
	TEST_MAIN_END("plan");
}
