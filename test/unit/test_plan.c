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
#include "testpods.h"
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
/*
 * Puts item at index at of arr (at most its size), as RFC 6902's add does.
 * Not cJSON_InsertItemInArray: Debian's libcjson 1.7.15-1+deb12u4 refuses any
 * place but the head or the end there (and leaves the item to the caller).
 */
static void insert_at(cJSON *arr, int at, cJSON *item)
{
	cJSON *tail = cJSON_CreateArray();

	while (tail != NULL && cJSON_GetArraySize(arr) > at)
		cJSON_AddItemToArray(tail, cJSON_DetachItemFromArray(arr, at));
	cJSON_AddItemToArray(arr, item);
	while (tail != NULL && cJSON_GetArraySize(tail) > 0)
		cJSON_AddItemToArray(arr, cJSON_DetachItemFromArray(tail, 0));
	cJSON_Delete(tail);
}

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
			insert_at(env, (int)at, value);
		}
	}
	cJSON_Delete(patch);
}

/*
 * The distenv.dev/injected marker plan's patch writes (pointing into *patch,
 * the parsed patch the caller frees), or NULL.
 */
static const char *plan_marker(const struct pod_plan *plan, cJSON **patch)
{
	const cJSON *op;

	*patch = cJSON_Parse(plan->patch.buf);
	cJSON_ArrayForEach(op, *patch)
	{
		if (strcmp(json_str(op, "path"), "/metadata/annotations/distenv.dev~1injected") ==
		    0)
			return json_str(op, "value");
	}
	return NULL;
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
 * An elastic pod whose container sets PET_RDZV_CONF by a reference (valueFrom,
 * or a value with $(...)): distenv cannot merge is_host into what is read at
 * run time, so torchrun would guess the store's host; the pod is admitted with
 * its own value (distenv adds no entry), warned on every rank, and the marker
 * records own=PET_RDZV_CONF. A reference whose text says is_host, a literal
 * (merged), or a reference hidden by a later literal entry: no warning.
 */
static void test_rdzv_conf_reference(void)
{
	static const struct {
		const char *what, *env;
		int warned, own; /* own: the marker records own=PET_RDZV_CONF */
	} rows[] = {
	    {"$(reference)", LIT("B", "timeout=9") "," LIT("PET_RDZV_CONF", "$(B)"), 1, 1},
	    {"valueFrom",
	     "{\"name\":\"PET_RDZV_CONF\",\"valueFrom\":{\"configMapKeyRef\":{\"name\":"
	     "\"c\",\"key\":\"k\"}}}",
	     1, 1},
	    {"a literal, then a reference: the reference is what runs",
	     LIT("PET_RDZV_CONF", "a=b") "," LIT("PET_RDZV_CONF", "$(PET_RDZV_CONF),c=d"), 1, 1},
	    {"a reference that says is_host", LIT("PET_RDZV_CONF", "$(B),is_host=1"), 0, 1},
	    {"a reference hidden by a later literal",
	     LIT("PET_RDZV_CONF", "$(B)") "," LIT("PET_RDZV_CONF", "a=b"), 0, 0},
	    {"a literal", LIT("PET_RDZV_CONF", "a=b"), 0, 0},
	};
	struct config cfg;
	size_t i;
	int r, k;

	config_defaults(&cfg);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		for (r = 0; r < 2; r++) {
			struct pod_plan plan;
			char err[512] = "";
			cJSON *pod = sts_pod(rows[i].env, "\"distenv.dev/elastic\":\"2:4\"", r);
			const char *
			    marker = NULL,
			   *want =
			       "distenv: container trainer: PET_RDZV_CONF from a reference gets no "
			       "is_host, so torchrun guesses its host: use a literal";
			cJSON *patch;
			int warned = 0;

			CHECK(pod != NULL, "%s: pod", rows[i].what);
			if (pod_plan_build(pod, "ml", 0, &cfg, NULL, &plan, err, sizeof(err)) !=
			    PLAN_OK) {
				CHECK(0, "%s: rank %d: %s", rows[i].what, r, err);
				cJSON_Delete(pod);
				continue;
			}
			for (k = 0; k < plan.n_warnings; k++)
				warned += strcmp(plan.warnings[k], want) == 0;
			CHECK(warned == rows[i].warned, "%s: rank %d: warned %d times, want %d",
			      rows[i].what, r, warned, rows[i].warned);
			marker = plan_marker(&plan, &patch);
			CHECK(marker != NULL &&
			          (strstr(marker, "own=PET_RDZV_CONF") != NULL) == rows[i].own,
			      "%s: rank %d: marker '%s'", rows[i].what, r, marker ? marker : "");
			/* the container's own entry wins: distenv adds none of that name */
			apply_env_patch(pod, plan.patch.buf);
			if (rows[i].warned)
				CHECK(kubelet_value(pod, "PET_RDZV_CONF") == NULL ||
				          strstr(kubelet_value(pod, "PET_RDZV_CONF"), "is_host") ==
				              NULL,
				      "%s: rank %d: is_host added", rows[i].what, r);
			cJSON_Delete(patch);
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

/*
 * A pod keeps PLAN_MAX_WARNINGS (8) distinct warnings and counts the ones past
 * them: 7 and 8 own values that are not the pod's are 7 and 8 warnings kept, 9
 * are 8 kept and 1 counted, and the annotation says "1 more"; a warning given
 * twice (the same container, the same RANK) is kept once.
 */
static void test_warnings_cap(void)
{
	static const char *const own[] = {
	    LIT("RANK", "7"),          LIT("WORLD_SIZE", "9"),      LIT("NODE_RANK", "7"),
	    LIT("NNODES", "9"),        LIT("PET_MASTER_ADDR", "x"), LIT("PET_NNODES", "9"),
	    LIT("PET_NODE_RANK", "7"), LIT("MASTER_ADDR", "y"),     LIT("PET_NPROC_PER_NODE", "3"),
	};
	static const struct {
		int n_env, kept, more;
	} rows[] = {{7, 7, 0}, {8, 8, 0}, {9, 8, 1}};
	struct config cfg;
	size_t i;

	config_defaults(&cfg);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pod_plan plan;
		char env[1024] = "", err[512] = "";
		cJSON *pod;
		int k;

		for (k = 0; k < rows[i].n_env; k++)
			snprintf(env + strlen(env), sizeof(env) - strlen(env), "%s%s", k ? "," : "",
			         own[k]);
		pod = sts_pod(env, "", 1);
		CHECK(pod_plan_build(pod, "ml", 0, &cfg, NULL, &plan, err, sizeof(err)) == PLAN_OK,
		      "%d own values: %s", rows[i].n_env, err);
		CHECK(plan.n_warnings == rows[i].kept && plan.n_more == rows[i].more,
		      "%d own values: %d kept, %d more (want %d, %d)", rows[i].n_env,
		      plan.n_warnings, plan.n_more, rows[i].kept, rows[i].more);
		CHECK((strstr(plan.patch.buf, "distenv: 1 more warnings not shown") != NULL) ==
		          (rows[i].more == 1),
		      "%d own values: patch %s", rows[i].n_env, plan.patch.buf);
		pod_plan_free(&plan);
		cJSON_Delete(pod);
	}
}

/*
 * The marker's ",own=" list (own_marker): a value of at most 40 characters is
 * written NAME=value, a longer one NAME alone; an entry that would leave the
 * list 320 bytes with its NUL or more is left out, and every one after it. Rank
 * 1 sets MASTER_ADDR "h" and eight more of distenv's variables, each to
 * another value: RANK's is 40 or 41 characters, PET_NNODES's 29 (the list is
 * 319 bytes with it), 30 (320: left out) or 31.
 */
static void test_own_marker(void)
{
	static const char *const names[] = {
	    "MASTER_ADDR",     "RANK",       "WORLD_SIZE",    "NODE_RANK",          "NNODES",
	    "PET_MASTER_ADDR", "PET_NNODES", "PET_NODE_RANK", "PET_NPROC_PER_NODE",
	};
	static const struct {
		int rank_len, nnodes_len;
		const char *tail; /* the list after MASTER_ADDR=h: # RANK's value, @ PET_NNODES's, $
		                     40 7s */
	} rows[] = {
	    {40, 29, "+RANK=#+WORLD_SIZE=$+NODE_RANK=$+NNODES=$+PET_MASTER_ADDR=$+PET_NNODES=@"},
	    {40, 30, "+RANK=#+WORLD_SIZE=$+NODE_RANK=$+NNODES=$+PET_MASTER_ADDR=$"},
	    {40, 31, "+RANK=#+WORLD_SIZE=$+NODE_RANK=$+NNODES=$+PET_MASTER_ADDR=$"},
	    {41, 29, "+RANK+WORLD_SIZE=$+NODE_RANK=$+NNODES=$+PET_MASTER_ADDR=$+PET_NNODES=@"},
	};
	struct config cfg;
	size_t i, k;

	config_defaults(&cfg);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char env[2048] = "",
		     want[1024] = "rank=1,world-size=4,master=h:29500,own=MASTER_ADDR=h",
		     got[1024] = "", err[512] = "";
		struct pod_plan plan;
		const char *m, *e, *c;
		cJSON *pod;

		for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
			int len = k == 0   ? 1
			          : k == 1 ? rows[i].rank_len
			          : k == 6 ? rows[i].nnodes_len
			                   : 40;
			snprintf(env + strlen(env), sizeof(env) - strlen(env),
			         "%s{\"name\":\"%s\",\"value\":\"%.*s\"}", k ? "," : "", names[k],
			         len,
			         k == 0 ? "h" : "777777777777777777777777777777777777777777777");
		}
		for (c = rows[i].tail; *c; c++) {
			int len = *c == '#'   ? rows[i].rank_len
			          : *c == '@' ? rows[i].nnodes_len
			                      : 40;

			if (*c == '#' || *c == '@' || *c == '$')
				snprintf(want + strlen(want), sizeof(want) - strlen(want), "%.*s",
				         len, "777777777777777777777777777777777777777777777");
			else
				snprintf(want + strlen(want), sizeof(want) - strlen(want), "%c",
				         *c);
		}
		pod = sts_pod(env, "", 1);
		CHECK(pod_plan_build(pod, "ml", 0, &cfg, NULL, &plan, err, sizeof(err)) == PLAN_OK,
		      "row %zu: %s", i, err);
		m = plan.patch.buf != NULL ? strstr(plan.patch.buf, "rank=1,") : NULL;
		e = m != NULL ? strchr(m, '"') : NULL;
		if (e != NULL)
			snprintf(got, sizeof(got), "%.*s", (int)(e - m), m);
		CHECK(strcmp(got, want) == 0,
		      "RANK of %d, PET_NNODES of %d: marker\n  %s\nwant\n  %s", rows[i].rank_len,
		      rows[i].nnodes_len, got, want);
		pod_plan_free(&plan);
		cJSON_Delete(pod);
	}
}

/* 1 when every injected "NAME=value" fits what execve() accepts. */
static int plan_exec_safe(const struct pod_plan *plan)
{
	size_t i;

	for (i = 0; i < plan->env.n; i++)
		if (strlen(plan->env.vars[i].name) + 1 + strlen(plan->env.vars[i].value) + 1 >
		    ENV_STRING_MAX)
			return 0;
	return 1;
}

/* The largest world (up to 65,536) in which StatefulSet name in ns keeps TF_CONFIG. */
static long tf_config_limit(const char *name, const char *ns)
{
	struct pod_plan plan;
	char err[512];
	long lo = 1, hi = 65536;

	while (lo < hi) {
		long mid = (lo + hi + 1) / 2;
		if (plan_sts(name, ns, 0, mid, "", &plan, err, sizeof(err)) != PLAN_OK)
			break;
		if (plan_var(&plan, "TF_CONFIG") != NULL)
			lo = mid;
		else
			hi = mid - 1;
		pod_plan_free(&plan);
	}
	return lo;
}

/*
 * ENV_STRING_MAX at its edge: StatefulSet ddddd in ml of 2,872 ranks has a
 * TF_CONFIG of exactly 131072 bytes as "NAME=value" with its NUL at ranks 0 to
 * 9 (kept, no warning), and of 131073 from rank 10 (its task index has one
 * more digit: left out, warned with the byte count).
 */
static void test_tf_config_edge(void)
{
	static const struct {
		long rank;
		size_t size; /* strlen("TF_CONFIG=value") + 1 */
		int kept;
	} rows[] = {{0, 131072, 1}, {9, 131072, 1}, {10, 131073, 0}};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pod_plan plan;
		char err[512] = "", want[PLAN_WARNING_LEN];
		const char *tf;

		if (plan_sts("ddddd", "ml", rows[i].rank, 2872, "", &plan, err, sizeof(err)) !=
		    PLAN_OK) {
			CHECK(0, "rank %ld of 2872: %s", rows[i].rank, err);
			continue;
		}
		tf = plan_var(&plan, "TF_CONFIG");
		if (rows[i].kept) {
			CHECK(tf != NULL && strlen("TF_CONFIG=") + strlen(tf) + 1 == rows[i].size &&
			          plan.n_warnings == 0 && plan.omitted[0] == '\0',
			      "rank %ld: TF_CONFIG of %zu bytes kept (%zu, %d warnings)",
			      rows[i].rank, rows[i].size,
			      tf ? strlen("TF_CONFIG=") + strlen(tf) + 1 : 0, plan.n_warnings);
		} else {
			snprintf(
			    want, sizeof(want),
			    "distenv: TF_CONFIG left out: %zu bytes for 2872 ranks, over Linux's "
			    "131072 per variable",
			    rows[i].size);
			CHECK(tf == NULL && plan.n_warnings == 1 &&
			          strcmp(plan.warnings[0], want) == 0 &&
			          strcmp(plan.omitted, "TF_CONFIG") == 0,
			      "rank %ld: '%s' (want '%s')", rows[i].rank,
			      plan.n_warnings ? plan.warnings[0] : "", want);
		}
		pod_plan_free(&plan);
	}
}

/* 1 when l has name. */
static int test_env_has(const struct env_list *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->vars[i].name, name) == 0)
			return 1;
	return 0;
}

/* The value of name in l, or "" when absent. */
static const char *test_list_value(const struct env_list *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->vars[i].name, name) == 0)
			return l->vars[i].value;
	return "";
}

/*
 * A TF_CONFIG left out is left out of a target's own list too: rank 10 of
 * ddddd (2,872 ranks), whose container sets MASTER_ADDR, gets its address in
 * every address variable and no TF_CONFIG.
 */
static void test_tf_config_left_out_own_master(void)
{
	char buf[2048], err[512] = "";
	const struct env_list *l;
	struct pod_plan plan;
	struct config cfg;
	cJSON *pod;

	config_defaults(&cfg);
	snprintf(buf, sizeof(buf),
	         "{\"metadata\":{\"name\":\"ddddd-10\",\"namespace\":\"ml\",\"labels\":{"
	         "\"distenv.dev/inject\":\"true\"},\"annotations\":{\"distenv.dev/world-size\":"
	         "\"2872\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
	         "\"StatefulSet\",\"name\":\"ddddd\",\"controller\":true}]},\"spec\":{"
	         "\"hostname\":\"ddddd-10\",\"subdomain\":\"ddddd\",\"containers\":[{\"name\":"
	         "\"train\",\"image\":\"x\",\"env\":[" LIT("MASTER_ADDR", "head.example") "]}]}}");
	pod = cJSON_Parse(buf);
	if (pod_plan_build(pod, "ml", strlen(buf), &cfg, NULL, &plan, err, sizeof(err)) !=
	    PLAN_OK) {
		CHECK(0, "rank 10 of 2872 with its own MASTER_ADDR: %s", err);
		cJSON_Delete(pod);
		return;
	}
	l = pod_plan_target_env(&plan, 0);
	CHECK(plan.own_env != NULL && l == &plan.own_env[0], "the target has its own list");
	CHECK(test_env_has(l, "TF_CONFIG") == 0 && strcmp(plan.omitted, "TF_CONFIG") == 0,
	      "TF_CONFIG left out of the target's own list (omitted '%s')", plan.omitted);
	CHECK(strcmp(test_list_value(l, "PET_MASTER_ADDR"), "head.example") == 0,
	      "PET_MASTER_ADDR '%s'", test_list_value(l, "PET_MASTER_ADDR"));
	pod_plan_free(&plan);
	cJSON_Delete(pod);
}

/* TF_CONFIG: well formed up to the exec limit, left out past it by default, denied when asked. */
static void test_large_world(void)
{
	struct pod_plan plan;
	char err[512];
	const char *tfv, *marker;
	cJSON *tf;
	long lo;

	/* 1,024 ranks: TF_CONFIG with every host, exec-safe */
	if (plan_sts("ddp", "ml", 1023, 1024, "", &plan, err, sizeof(err)) == PLAN_OK) {
		tfv = plan_var(&plan, "TF_CONFIG");
		tf = tfv ? cJSON_Parse(tfv) : NULL;
		CHECK(tf != NULL, "TF_CONFIG of 1024 ranks does not parse");
		CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(tf, "cluster"),
		                                             "worker")) == 1024,
		      "TF_CONFIG worker count");
		CHECK(tf &&
		          cJSON_GetObjectItem(cJSON_GetObjectItem(tf, "task"), "index")->valueint ==
		              1023,
		      "TF_CONFIG index");
		CHECK(plan.n_warnings == 0 && plan.omitted[0] == '\0',
		      "1024 ranks: nothing omitted");
		cJSON_Delete(tf);
		pod_plan_free(&plan);
	} else {
		CHECK(0, "1024 ranks: %s", err);
	}

	/* the issue's case: llama-pretrain in research, 2,048 ranks, default frameworks */
	if (plan_sts("llama-pretrain", "research", 5, 2048, "", &plan, err, sizeof(err)) ==
	    PLAN_OK) {
		CHECK(plan_var(&plan, "TF_CONFIG") == NULL, "2048 ranks: TF_CONFIG left out");
		CHECK(plan_var(&plan, "MASTER_ADDR") != NULL &&
		          strcmp(plan_var(&plan, "WORLD_SIZE"), "2048") == 0,
		      "2048 ranks: pytorch variables stay");
		CHECK(plan_exec_safe(&plan), "2048 ranks: every variable exec-safe");
		CHECK(plan.n_warnings == 1 && strstr(plan.warnings[0], "TF_CONFIG left out") &&
		          strstr(plan.warnings[0], "2048 ranks") &&
		          strlen(plan.warnings[0]) < PLAN_WARNING_LEN,
		      "2048 ranks: warning '%s'", plan.n_warnings ? plan.warnings[0] : "");
		CHECK(strcmp(plan.omitted, "TF_CONFIG") == 0, "2048 ranks: omitted");
		{
			cJSON *patch;

			marker = plan_marker(&plan, &patch);
			CHECK(marker != NULL && strstr(marker, ",omitted=TF_CONFIG") != NULL,
			      "2048 ranks: marker '%s'", marker ? marker : "");
			cJSON_Delete(patch);
		}
		pod_plan_free(&plan);
	} else {
		CHECK(0, "2048 ranks: %s", err);
	}

	/* asked for tensorflow by annotation: denied, naming the limit and the world */
	CHECK(plan_sts("llama-pretrain", "research", 5, 2048,
	               ",\"distenv.dev/frameworks\":\"pytorch,tensorflow\"", &plan, err,
	               sizeof(err)) == PLAN_DENY &&
	          strstr(err, "131072") && strstr(err, "2048") && strstr(err, "TF_CONFIG") &&
	          strstr(err, "distenv.dev/frameworks"),
	      "asked tensorflow: '%s'", err);

	/* the largest world whose TF_CONFIG fits, for ddp in ml (docs/environment.md's figure) */
	lo = tf_config_limit("ddp", "ml");
	printf("core: the largest TF_CONFIG world for StatefulSet ddp in ml is %ld ranks\n", lo);
	/* docs/environment.md's figure, exactly: a change of TF_CONFIG's size must change it */
	CHECK(lo == 3145, "ddp/ml TF_CONFIG limit %ld, docs/environment.md says 3,145", lo);
	if (plan_sts("ddp", "ml", 0, lo, "", &plan, err, sizeof(err)) == PLAN_OK) {
		CHECK(strlen(plan_var(&plan, "TF_CONFIG")) + strlen("TF_CONFIG=") + 1 <=
		          ENV_STRING_MAX,
		      "at the limit TF_CONFIG fits");
		pod_plan_free(&plan);
	}
	/* and one rank more: left out */
	if (plan_sts("ddp", "ml", 0, lo + 1, "", &plan, err, sizeof(err)) == PLAN_OK) {
		CHECK(plan_var(&plan, "TF_CONFIG") == NULL, "ddp/ml: TF_CONFIG kept at %ld ranks",
		      lo + 1);
		pod_plan_free(&plan);
	}
	/* docs/environment.md's second figure: llama-pretrain in research */
	lo = tf_config_limit("llama-pretrain", "research");
	printf(
	    "core: the largest TF_CONFIG world for StatefulSet llama-pretrain in research is %ld "
	    "ranks\n",
	    lo);
	CHECK(lo == 1887,
	      "llama-pretrain/research TF_CONFIG limit %ld, docs/environment.md says 1,887", lo);

	/* 65,536 ranks (docs/environment.md's maximum): pytorch and jax only, exec-safe, storable
	 */
	if (plan_sts("ddp", "ml", 65535, 65536, "", &plan, err, sizeof(err)) == PLAN_OK) {
		CHECK(plan_exec_safe(&plan) && plan_var(&plan, "TF_CONFIG") == NULL,
		      "65536 ranks: exec-safe");
		pod_plan_free(&plan);
	} else {
		CHECK(0, "65536 ranks: %s", err);
	}
}

/* What the plan counts the patch to add: each "NAME=value" with its NUL, plus 64 per entry. */
static size_t plan_patch_estimate(const struct pod_plan *plan)
{
	size_t i, n = 0;
	int k;

	for (k = 0; k < plan->topo.n_targets; k++) {
		const struct env_list *l = pod_plan_target_env(plan, k);
		for (i = 0; i < l->n; i++)
			n += strlen(l->vars[i].name) + 1 + strlen(l->vars[i].value) + 1 + 64;
	}
	return n;
}

/*
 * The pod with its patch stays within POD_BYTES_MAX (1.125 MiB), exactly, both
 * branches: at the limit TF_CONFIG stays; one byte past it a default TF_CONFIG
 * is left out with a warning, and a pod that asked for TensorFlow (or one still
 * over without it) is denied naming the limit and what to do.
 */
static void test_pod_budget(void)
{
	static const char asked[] = ",\"distenv.dev/frameworks\":\"pytorch,tensorflow\"";
	struct pod_plan plan;
	char err[512];
	size_t patch, at;

	CHECK(POD_BYTES_MAX == 1152 * 1024, "POD_BYTES_MAX %d, docs/environment.md says 1.125 MiB",
	      POD_BYTES_MAX);
	if (plan_sts("ddp", "ml", 3, 1024, "", &plan, err, sizeof(err)) != PLAN_OK) {
		CHECK(0, "1024 ranks: %s", err);
		return;
	}
	CHECK(plan_var(&plan, "TF_CONFIG") != NULL, "1024 ranks: TF_CONFIG kept");
	patch = plan_patch_estimate(&plan);
	pod_plan_free(&plan);
	at = POD_BYTES_MAX - patch; /* the largest pod that keeps every variable */

	/* at the limit: every variable, no warning */
	if (plan_sts_sized("ddp", "ml", 3, 1024, "", at, &plan, err, sizeof(err)) == PLAN_OK) {
		CHECK(plan_var(&plan, "TF_CONFIG") != NULL && plan.n_warnings == 0 &&
		          plan.omitted[0] == '\0',
		      "a pod of %zu bytes plus a %zu-byte patch: TF_CONFIG left out (%s)", at,
		      patch, plan.n_warnings ? plan.warnings[0] : "no warning");
		pod_plan_free(&plan);
	} else {
		CHECK(0, "a pod of %zu bytes at the limit: %s", at, err);
	}
	/* one byte past it, TensorFlow only a default: TF_CONFIG left out, warned, the rest kept */
	if (plan_sts_sized("ddp", "ml", 3, 1024, "", at + 1, &plan, err, sizeof(err)) == PLAN_OK) {
		CHECK(plan_var(&plan, "TF_CONFIG") == NULL &&
		          strcmp(plan_var(&plan, "WORLD_SIZE"), "1024") == 0 &&
		          strcmp(plan.omitted, "TF_CONFIG") == 0 && plan.n_warnings == 1 &&
		          strstr(plan.warnings[0], "TF_CONFIG left out") &&
		          strstr(plan.warnings[0], "1179648") &&
		          strlen(plan.warnings[0]) < PLAN_WARNING_LEN,
		      "one byte past the limit: TF_CONFIG %s, warning '%s'",
		      plan_var(&plan, "TF_CONFIG") ? "kept" : "left out",
		      plan.n_warnings ? plan.warnings[0] : "");
		pod_plan_free(&plan);
	} else {
		CHECK(0, "one byte past the limit, TensorFlow a default: %s", err);
	}
	/* asked for TensorFlow: allowed at the limit, denied one byte past it */
	if (plan_sts_sized("ddp", "ml", 3, 1024, asked, at, &plan, err, sizeof(err)) == PLAN_OK) {
		CHECK(plan_var(&plan, "TF_CONFIG") != NULL, "asked, at the limit: TF_CONFIG");
		pod_plan_free(&plan);
	} else {
		CHECK(0, "asked for TensorFlow, at the limit: %s", err);
	}
	CHECK(plan_sts_sized("ddp", "ml", 3, 1024, asked, at + 1, &plan, err, sizeof(err)) ==
	              PLAN_DENY &&
	          strncmp(err, "distenv: ", 9) == 0 && strstr(err, "1179648") &&
	          strstr(err, "drop tensorflow") && strstr(err, "distenv.dev/containers"),
	      "asked for TensorFlow, one byte past the limit: '%s'", err);
	/* still over without TF_CONFIG: denied */
	CHECK(plan_sts_sized("ddp", "ml", 3, 1024, "", POD_BYTES_MAX, &plan, err, sizeof(err)) ==
	              PLAN_DENY &&
	          strstr(err, "1179648") && strstr(err, "distenv.dev/containers"),
	      "a pod of the limit's own size: '%s'", err);
}

/* A container's own MASTER_ADDR / MASTER_PORT: every address variable follows it. */
static void test_own_master(void)
{
	static const struct {
		const char *name;
		const char *extra; /* the container's own entries */
		const char *frameworks;
		const char *want; /* "NAME=VALUE\n" subset of the container's env; NULL: denied */
		const char *deny;
	} cases[] = {
	    {"literal MASTER_ADDR", "{'name':'MASTER_ADDR','value':'head.example'}", "pytorch,jax",
	     "PET_MASTER_ADDR=head.example\nPET_MASTER_PORT=29500\n"
	     "JAX_COORDINATOR_ADDRESS=head.example:29500\n",
	     NULL},
	    {"literal MASTER_PORT", "{'name':'MASTER_PORT','value':'1234'}", "pytorch,jax",
	     "MASTER_ADDR=ddp-0.ddp.ml.svc.cluster.local\nPET_MASTER_PORT=1234\n"
	     "JAX_COORDINATOR_ADDRESS=ddp-0.ddp.ml.svc.cluster.local:1234\n",
	     NULL},
	    {"MASTER_ADDR from a fieldRef",
	     "{'name':'MASTER_ADDR','valueFrom':{'fieldRef':{'fieldPath':'status.podIP'}}}",
	     "pytorch", NULL, "sets MASTER_ADDR from valueFrom"},
	    {"MASTER_PORT as a reference", "{'name':'MASTER_PORT','value':'$(P)'}", "pytorch", NULL,
	     "sets MASTER_PORT from valueFrom or a $(reference)"},
	    {"MASTER_PORT not a port", "{'name':'MASTER_PORT','value':'http'}", "pytorch", NULL,
	     "not a port number"},
	    /* the denial names what the pod's own frameworks derive, and nothing else */
	    {"MASTER_ADDR from a fieldRef, pytorch: names PET_MASTER_ADDR alone",
	     "{'name':'MASTER_ADDR','valueFrom':{'fieldRef':{'fieldPath':'status.podIP'}}}",
	     "pytorch", NULL,
	     "admission, so PET_MASTER_ADDR would disagree with it: give it a literal value, set "
	     "that too, or remove it"},
	    {"MASTER_ADDR from a fieldRef, jax: names JAX_COORDINATOR_ADDRESS alone",
	     "{'name':'MASTER_ADDR','valueFrom':{'fieldRef':{'fieldPath':'status.podIP'}}}", "jax",
	     NULL, "admission, so JAX_COORDINATOR_ADDRESS would disagree with it:"},
	    {"MASTER_PORT as a reference, three frameworks: each one's variable named",
	     "{'name':'MASTER_PORT','value':'$(P)'}", "pytorch,jax,xgboost", NULL,
	     "so PET_MASTER_PORT, JAX_COORDINATOR_ADDRESS and DMLC_TRACKER_PORT would disagree "
	     "with "
	     "it: give it a literal value, set those too,"},
	    {"fieldRef with every derived variable set too",
	     "{'name':'MASTER_ADDR','valueFrom':{'fieldRef':{'fieldPath':'status.podIP'}}},"
	     "{'name':'PET_MASTER_ADDR','value':'x'}",
	     "pytorch", "RANK=1\n", NULL},
	};
	struct config cfg;
	size_t i;

	config_defaults(&cfg);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *txt = env_pod(0, cases[i].extra), err[512] = "", why[256] = "";
		cJSON *pod = cJSON_Parse(txt);
		struct pod_plan plan;
		enum plan_status st;

		cJSON_AddStringToObject(
		    cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "metadata"), "annotations"),
		    "distenv.dev/frameworks", cases[i].frameworks);
		st = pod_plan_build(pod, "ml", 0, &cfg, NULL, &plan, err, sizeof(err));
		if (cases[i].want == NULL) {
			CHECK(st == PLAN_DENY && strstr(err, cases[i].deny), "%s: '%s'",
			      cases[i].name, err);
		} else {
			CHECK(st == PLAN_OK, "%s: %s", cases[i].name, err);
			if (st == PLAN_OK) {
				CHECK(env_has_in_order(pod_plan_target_env(&plan, 0), cases[i].want,
				                       why, sizeof(why)),
				      "%s: %s", cases[i].name, why);
				pod_plan_free(&plan);
			}
		}
		cJSON_Delete(pod);
		free(txt);
	}
}

/*
 * A literal MASTER_ADDR is at most 253 characters (a DNS name's most): 252 and
 * 253 are every address variable's value, 254 is denied with the words.
 */
static void test_own_master_length(void)
{
	static const struct {
		size_t len;
		int denied;
	} rows[] = {{252, 0}, {253, 0}, {254, 1}};
	struct config cfg;
	size_t i;

	config_defaults(&cfg);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char addr[300], extra[400], want[400], err[512] = "", why[256] = "";
		struct pod_plan plan;
		enum plan_status st;
		char *txt;
		cJSON *pod;

		memset(addr, 'a', rows[i].len);
		addr[rows[i].len] = '\0';
		snprintf(extra, sizeof(extra), "{'name':'MASTER_ADDR','value':'%s'}", addr);
		txt = env_pod(0, extra);
		pod = cJSON_Parse(txt);
		cJSON_AddStringToObject(
		    cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "metadata"), "annotations"),
		    "distenv.dev/frameworks", "pytorch");
		st = pod_plan_build(pod, "ml", 0, &cfg, NULL, &plan, err, sizeof(err));
		if (rows[i].denied) {
			CHECK(st == PLAN_DENY &&
			          strcmp(err, "distenv: container t sets MASTER_ADDR to an empty "
			                      "or over-long value") == 0,
			      "MASTER_ADDR of %zu: %d '%s'", rows[i].len, st, err);
		} else {
			CHECK(st == PLAN_OK, "MASTER_ADDR of %zu: %s", rows[i].len, err);
			snprintf(want, sizeof(want), "PET_MASTER_ADDR=%s\n", addr);
			if (st == PLAN_OK) {
				CHECK(env_has_in_order(pod_plan_target_env(&plan, 0), want, why,
				                       sizeof(why)),
				      "MASTER_ADDR of %zu: %s", rows[i].len, why);
				pod_plan_free(&plan);
			}
		}
		cJSON_Delete(pod);
		free(txt);
	}
}

int main(void)
{
	test_apply_is_creation();
	test_rdzv_conf_listed_twice();
	test_rdzv_conf_reference();
	test_own_value_listed_twice();
	test_warnings_cap();
	test_own_marker();
	test_istio_warning();
	test_large_world();
	test_tf_config_edge();
	test_tf_config_left_out_own_master();
	test_pod_budget();
	test_own_master();
	test_own_master_length();
	TEST_MAIN_END("plan");
}
