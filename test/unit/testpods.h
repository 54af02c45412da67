/*
 * Pods as their controllers build them, look-up answers, and the table-driven
 * runs of pod_plan_build that the core's unit tests share: each test file
 * (test_topology.c, test_kind_*.c, test_annotation.c, ...) holds the rows of
 * the rule its source file decides, and runs them through plan_cases_run and
 * denial_cases_run. Look-ups are answered from the row through the core's
 * callback interface.
 */
#ifndef DISTENV_TESTPODS_H
#define DISTENV_TESTPODS_H

#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "json.h"
#include "plan.h"
#include "strbuf.h"
#include "testutil.h"

/* The number of elements of array a. */
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Test JSON is written with single quotes; this turns them into double quotes. */
static inline char *dq(const char *s)
{
	char *p = strdup(s), *q;

	for (q = p; *q; q++)
		if (*q == '\'')
			*q = '"';
	return p;
}

#define STS_OWNER                                                                                  \
	"'ownerReferences':[{'apiVersion':'apps/"                                                  \
	"v1','kind':'StatefulSet','name':'ddp','uid':'u-ddp','controller':true}]"
#define JOB_OWNER                                                                                  \
	"'ownerReferences':[{'apiVersion':'batch/"                                                 \
	"v1','kind':'Job','name':'train','uid':'u-train','controller':true}]"
#define LABEL "'distenv.dev/inject':'true'"
#define CTR   "'containers':[{'name':'trainer','image':'x'}]"

/* A StatefulSet pod ddp-N in ns "ml" with extra annotations and spec. */
#define STS_POD(ord, anns, spec_extra)                                                             \
	"{'metadata':{'name':'ddp-" ord "','namespace':'ml','labels':{" LABEL                      \
	",'apps.kubernetes.io/pod-index':'" ord "'},'annotations':{" anns "}," STS_OWNER "},"      \
	"'spec':{'hostname':'ddp-" ord "','subdomain':'ddp'," CTR spec_extra "}}"

/* An Indexed Job pod (no name, no namespace) with completion index idx. */
#define JOB_POD(idx, anns, spec_extra)                                                             \
	"{'metadata':{'generateName':'train-" idx "-','labels':{" LABEL "},"                       \
	"'annotations':{'batch.kubernetes.io/job-completion-index':'" idx "'" anns "}," JOB_OWNER  \
	"},'spec':{'hostname':'train-" idx "'" spec_extra "," CTR "}}"

/*
 * A look-up answer. With fresh set, spec plays a cache's answer (cached = 1)
 * and fresh what a read that bypasses the cache returns.
 */
struct lookup_answer {
	int fail;
	struct workload_spec spec;
	const struct workload_spec *fresh;
};

static inline int table_get(void *ctx, const struct workload_ref *ref, int fresh,
                            struct workload_spec *out, char *err, size_t errlen)
{
	const struct lookup_answer *a = ctx;

	(void)ref;
	(void)fresh;
	if (a->fail) {
		snprintf(err, errlen, "connection refused");
		return -1;
	}
	*out = fresh && a->fresh ? *a->fresh : a->spec;
	out->cached = !fresh && a->fresh != NULL;
	return 0;
}

static const struct lookup_answer STS4 = {0, WSPEC(4, -1, -1, -1, 0, ""), NULL};
static const struct lookup_answer STS3_START1 = {0, WSPEC(3, 1, -1, -1, 0, ""), NULL};
static const struct lookup_answer JOB3 = {0, WSPEC(-1, -1, 3, 3, 1, ""), NULL};
static const struct lookup_answer JOB3_PAR2 = {0, WSPEC(-1, -1, 3, 2, 1, ""), NULL};
/* Kueue's partial admission: job-min-parallelism on the Job, parallelism lowered to 2 */
static const struct lookup_answer JOB4_KUEUE_PAR2 = {0,
                                                     {.replicas = -1,
                                                      .ordinals_start = -1,
                                                      .completions = 4,
                                                      .parallelism = 2,
                                                      .indexed = 1,
                                                      .partial_admission = 1,
                                                      .coordinator_job = -1,
                                                      .coordinator_pod = -1},
                                                     NULL};
static const struct lookup_answer JOB_NONINDEXED = {0, WSPEC(-1, -1, 3, 3, 0, ""), NULL};
static const struct lookup_answer FAILS = {1, WSPEC(-1, -1, -1, -1, 0, ""), NULL};

static const struct workload_spec STS4_FRESH = WSPEC(4, -1, -1, -1, 0, "u-ddp");
static const struct workload_spec STS2_OLD_UID = WSPEC(2, -1, -1, -1, 0, "u-old");
/* cached: 2 replicas (scaled up since), or the same name's deleted object */
static const struct lookup_answer STS2_CACHED = {0, WSPEC(2, -1, -1, -1, 0, "u-ddp"), &STS4_FRESH};
static const struct lookup_answer STS_OTHER_UID_CACHED = {0, WSPEC(2, -1, -1, -1, 0, "u-old"),
                                                          &STS4_FRESH};
static const struct lookup_answer STS_OTHER_UID = {0, WSPEC(2, -1, -1, -1, 0, "u-old"),
                                                   &STS2_OLD_UID};
static const struct workload_spec STS2_FRESH = WSPEC(2, -1, -1, -1, 0, "u-ddp");
static const struct lookup_answer STS2_STILL = {0, WSPEC(2, -1, -1, -1, 0, "u-ddp"), &STS2_FRESH};
static const struct workload_spec JOB4_FRESH = WSPEC(-1, -1, 4, 4, 1, "u-train");
static const struct lookup_answer JOB2_RECREATED = {0, WSPEC(-1, -1, 2, 2, 1, "u-old"),
                                                    &JOB4_FRESH};

#define A_ "ddp-0.ddp.ml.svc.cluster.local"
#define J_ "train-0.train.default.svc.cluster.local"

/*
 * JobSet js in ml as the JobSet controller builds its pods (jobset_controller.go,
 * labelAndAnnotateObject; placement.GenJobName): Job <js>-<rjob>-<j>, labels
 * and annotations jobset.sigs.k8s.io/..., the Job controller's completion index,
 * hostname <js>-<rjob>-<j>-<i> and the JobSet's subdomain.
 */
#define JS_POD(rjob, j, i, reps, global, extra)                                                    \
	"{'metadata':{'generateName':'js-" rjob "-" j "-" i "-','namespace':'ml','labels':{" LABEL \
	",'jobset.sigs.k8s.io/jobset-name':'js','jobset.sigs.k8s.io/replicatedjob-name':'" rjob    \
	"','jobset.sigs.k8s.io/job-index':'" j "','jobset.sigs.k8s.io/jobset-uid':'u-js',"         \
	"'jobset.sigs.k8s.io/replicatedjob-replicas':'" reps "','jobset.sigs.k8s.io/global-"       \
	"replicas':'" global "','batch.kubernetes.io/job-completion-index':'" i "'},"              \
	"'annotations':{'batch.kubernetes.io/job-completion-index':'" i "'" extra "},"             \
	"'ownerReferences':[{'apiVersion':'batch/v1','kind':'Job','name':'js-" rjob "-" j "',"     \
	"'uid':'u-job','controller':true}]},'spec':{'hostname':'js-" rjob "-" j "-" i "',"         \
	"'subdomain':'js'," CTR "}}"

/* The JobSet's answer: replicated Jobs a (2 Jobs x 2 pods) and b (1 x 3). */
#define RJOB(n, reps, pods)                                                                        \
	{                                                                                          \
		.name = n, .replicas = reps, .completions = pods, .parallelism = pods,             \
		.indexed = 1                                                                       \
	}
/* A JobSet js's answer: its replicated Jobs, then the coordinator (name, Job, pod). */
#define JSSPEC(coord, job, pod, ...)                                                               \
	{                                                                                          \
		.replicas = -1, .ordinals_start = -1, .completions = -1, .parallelism = -1,        \
		.uid = "u-js",                                                                     \
		.n_rjobs =                                                                         \
		    sizeof((struct workload_rjob[]){__VA_ARGS__}) / sizeof(struct workload_rjob),  \
		.rjobs = {__VA_ARGS__}, .coordinator = coord, .coordinator_job = job,              \
		.coordinator_pod = pod                                                             \
	}
static const struct lookup_answer JS_A2x2_B1x3 = {
    0, JSSPEC("", -1, -1, RJOB("a", 2, 2), RJOB("b", 1, 3)), NULL};
static const struct lookup_answer JS_COORD_B01 = {
    0, JSSPEC("b", 0, 1, RJOB("a", 2, 2), RJOB("b", 1, 3)), NULL};
static const struct lookup_answer JS_TF = {
    0, JSSPEC("", -1, -1, RJOB("chief", 1, 1), RJOB("worker", 1, 2), RJOB("ps", 1, 1)), NULL};
static const struct lookup_answer JS_TF_COORD_W01 = {
    0, JSSPEC("worker", 0, 1, RJOB("chief", 1, 1), RJOB("worker", 1, 2), RJOB("ps", 1, 1)), NULL};
/* chief, worker (2 pods), ps and evaluator: TensorFlow's parameter-server layout. */
static const struct lookup_answer JS_TF_EVAL = {0,
                                                JSSPEC("", -1, -1, RJOB("chief", 1, 1),
                                                       RJOB("worker", 1, 2), RJOB("ps", 1, 1),
                                                       RJOB("evaluator", 1, 1)),
                                                NULL};
static const struct lookup_answer JS_NOT_INDEXED = {
    0, JSSPEC("", -1, -1, {.name = "a", .replicas = 2, .completions = 2, .parallelism = 2}), NULL};
#define JS_ "js-a-0-0.js.ml.svc.cluster.local"

/*
 * LeaderWorkerSet lws in ml as its controllers build pods (pod_controller.go,
 * leaderworkerset_controller.go): the leader of group g is pod lws-<g> of
 * StatefulSet lws (template label worker-index 0); worker i is pod lws-<g>-<i>
 * of StatefulSet lws-<g> (ordinals from 1, annotation leader-name); the size
 * annotation on both. The labels LWS's own webhook adds are left out: distenv
 * may run first.
 */
#define LWS_LEADER(g, anns)                                                                        \
	"{'metadata':{'name':'lws-" g "','namespace':'ml','labels':{" LABEL                        \
	",'leaderworkerset.sigs.k8s.io/name':'lws','leaderworkerset.sigs.k8s.io/"                  \
	"worker-index':'0',"                                                                       \
	"'apps.kubernetes.io/pod-index':'" g                                                       \
	"'},'annotations':{'leaderworkerset.sigs.k8s.io/size':"                                    \
	"'4'" anns "},'ownerReferences':[{'apiVersion':'apps/v1','kind':'StatefulSet','name':"     \
	"'lws','uid':'u-lws','controller':true}]},'spec':{'hostname':'lws-" g "','subdomain':"     \
	"'lws'," CTR "}}"
#define LWS_WORKER(g, i)                                                                           \
	"{'metadata':{'name':'lws-" g "-" i "','namespace':'ml','labels':{" LABEL                  \
	",'leaderworkerset.sigs.k8s.io/name':'lws','leaderworkerset.sigs.k8s.io/group-index':'" g  \
	"','apps.kubernetes.io/pod-index':'" i "'},'annotations':{'leaderworkerset.sigs.k8s.io/"   \
	"size':'4','leaderworkerset.sigs.k8s.io/leader-name':'lws-" g "'},'ownerReferences':[{"    \
	"'apiVersion':'apps/v1','kind':'StatefulSet','name':'lws-" g "','uid':'u-w','controller':" \
	"true}]},'spec':{'hostname':'lws-" g "-" i "','subdomain':'lws'," CTR "}}"

/*
 * A plan case: the pod in req_ns, its look-up answer, and the env it gets
 * ("NAME=VALUE\n..." subset, in order) or the words of its denial.
 */
struct plan_case {
	const char *name;
	const char *pod;
	const char *req_ns;
	const struct lookup_answer *lookup; /* NULL: look-ups off */
	const char *want_env;  /* "NAME=VALUE\n..." subset, in order; NULL when denied */
	const char *want_deny; /* substring of the denial */
};

/* The reason of a denial (the metrics label), by plan case name; the others only need one. */
struct plan_reason {
	const char *name;
	enum deny_reason want;
};

/*
 * A denial names every problem distenv can know, the annotations first, and
 * nothing that is only a bad value's echo: compared whole.
 */
struct denial_case {
	const char *name, *pod;
	const struct lookup_answer *lookup; /* NULL: look-ups off */
	enum deny_reason reason;
	const char *want;
};

/* Checks that want ("N=V\n" lines) appear in env in this relative order. */
static inline int env_has_in_order(const struct env_list *env, const char *want, char *why,
                                   size_t n)
{
	size_t pos = 0;
	const char *line = want;

	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		int found = 0;

		for (; pos < env->n; pos++) {
			char buf[8192];
			snprintf(buf, sizeof(buf), "%s=%s", env->vars[pos].name,
			         env->vars[pos].value);
			if (strlen(buf) == len && strncmp(buf, line, len) == 0) {
				found = 1;
				pos++;
				break;
			}
		}
		if (!found) {
			snprintf(why, n, "missing or out of order: %.*s", (int)len, line);
			return 0;
		}
		line += len + (nl ? 1 : 0);
	}
	return 1;
}

static inline enum deny_reason want_reason(const struct plan_reason *deny_reasons, size_t nr,
                                           const char *name)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (strcmp(deny_reasons[i].name, name) == 0)
			return deny_reasons[i].want;
	return DENY_NONE;
}

/* Plans each case, checking its env or its denial and, in deny_reasons, its reason. */
static inline void plan_cases_run(const struct plan_case *plan_cases, size_t n,
                                  const struct plan_reason *deny_reasons, size_t nr)
{
	struct config cfg;
	size_t i;

	config_defaults(&cfg);
	for (i = 0; i < nr; i++) {
		size_t k;
		for (k = 0; k < n && strcmp(plan_cases[k].name, deny_reasons[i].name) != 0; k++)
			;
		CHECK(k < n && plan_cases[k].want_deny, "deny_reasons names a denied plan case: %s",
		      deny_reasons[i].name);
	}
	for (i = 0; i < n; i++) {
		char *txt = dq(plan_cases[i].pod), err[512] = "", why[256] = "";
		cJSON *pod = cJSON_Parse(txt);
		struct workload_lookup lk = {table_get, (void *)plan_cases[i].lookup, NULL, NULL,
		                             NULL};
		struct pod_plan plan;
		enum plan_status st;

		CHECK(pod != NULL, "%s: test pod JSON does not parse", plan_cases[i].name);
		st = pod_plan_build(pod, plan_cases[i].req_ns, 0, &cfg,
		                    plan_cases[i].lookup ? &lk : NULL, &plan, err, sizeof(err));
		if (plan_cases[i].want_deny) {
			CHECK(st == PLAN_DENY && strstr(err, plan_cases[i].want_deny) != NULL &&
			          strncmp(err, "distenv: ", 9) == 0,
			      "%s: status %d, err '%s', want denial containing '%s'",
			      plan_cases[i].name, st, err, plan_cases[i].want_deny);
			CHECK(plan.topo.reason > DENY_NONE && plan.topo.reason < DENY_REASON_COUNT,
			      "%s: a denial has a reason", plan_cases[i].name);
			CHECK(
			    want_reason(deny_reasons, nr, plan_cases[i].name) == DENY_NONE ||
			        plan.topo.reason ==
			            want_reason(deny_reasons, nr, plan_cases[i].name),
			    "%s: reason %s, want %s", plan_cases[i].name,
			    verdict_reason_name(plan.topo.reason),
			    verdict_reason_name(want_reason(deny_reasons, nr, plan_cases[i].name)));
		} else {
			CHECK(st == PLAN_OK, "%s: status %d err '%s'", plan_cases[i].name, st, err);
			if (st == PLAN_OK) {
				CHECK(env_has_in_order(&plan.env, plan_cases[i].want_env, why,
				                       sizeof(why)),
				      "%s: %s", plan_cases[i].name, why);
			}
		}
		if (st == PLAN_OK)
			pod_plan_free(&plan);
		cJSON_Delete(pod);
		free(txt);
	}
}

/* Plans each case in ml, comparing its denial whole and checking its reason. */
static inline void denial_cases_run(const struct denial_case *denial_cases, size_t n)
{
	struct config cfg;
	size_t i;

	config_defaults(&cfg);
	for (i = 0; i < n; i++) {
		char *txt = dq(denial_cases[i].pod), err[1024] = "";
		cJSON *pod = cJSON_Parse(txt);
		struct workload_lookup lk = {table_get, (void *)denial_cases[i].lookup, NULL, NULL,
		                             NULL};
		struct pod_plan plan;
		enum plan_status st;

		st = pod_plan_build(pod, "ml", 0, &cfg, denial_cases[i].lookup ? &lk : NULL, &plan,
		                    err, sizeof(err));
		CHECK(st == PLAN_DENY && strcmp(err, denial_cases[i].want) == 0,
		      "%s: status %d\n  got  '%s'\n  want '%s'", denial_cases[i].name, st, err,
		      denial_cases[i].want);
		CHECK(st != PLAN_DENY || plan.topo.reason == denial_cases[i].reason,
		      "%s: reason %s, want %s", denial_cases[i].name,
		      verdict_reason_name(plan.topo.reason),
		      verdict_reason_name(denial_cases[i].reason));
		if (st == PLAN_OK)
			pod_plan_free(&plan);
		cJSON_Delete(pod);
		free(txt);
	}
}

/* The plan of an opted-in StatefulSet pod NAME-ORD in ns NS of world W with extra annotations. */
static inline enum plan_status plan_sts_sized(const char *name, const char *ns, long ord, long w,
                                              const char *anns, size_t pod_bytes,
                                              struct pod_plan *plan, char *err, size_t errlen);

static inline enum plan_status plan_sts(const char *name, const char *ns, long ord, long w,
                                        const char *anns, struct pod_plan *plan, char *err,
                                        size_t errlen)
{
	return plan_sts_sized(name, ns, ord, w, anns, 0, plan, err, errlen);
}

/* plan_sts for a pod of pod_bytes (0: its JSON's own length). */
static inline enum plan_status plan_sts_sized(const char *name, const char *ns, long ord, long w,
                                              const char *anns, size_t pod_bytes,
                                              struct pod_plan *plan, char *err, size_t errlen)
{
	char buf[2048];
	cJSON *pod;
	enum plan_status st;
	struct config cfg;

	config_defaults(&cfg);
	snprintf(
	    buf, sizeof(buf),
	    "{\"metadata\":{\"name\":\"%s-%ld\",\"namespace\":\"%s\",\"labels\":{\"distenv.dev/"
	    "inject\":\"true\"},\"annotations\":{\"distenv.dev/world-size\":\"%ld\"%s},"
	    "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\","
	    "\"name\":\"%s\",\"controller\":true}]},\"spec\":{\"hostname\":\"%s-%ld\","
	    "\"subdomain\":\"%s\",\"containers\":[{\"name\":\"train\",\"image\":\"x\"}]}}",
	    name, ord, ns, w, anns, name, name, ord, name);
	pod = cJSON_Parse(buf);
	st = pod_plan_build(pod, ns, pod_bytes ? pod_bytes : strlen(buf), &cfg, NULL, plan, err,
	                    errlen);
	cJSON_Delete(pod);
	return st;
}

static inline const char *plan_var(const struct pod_plan *plan, const char *name)
{
	size_t i;

	for (i = 0; i < plan->env.n; i++)
		if (strcmp(plan->env.vars[i].name, name) == 0)
			return plan->env.vars[i].value;
	return NULL;
}

/* A StatefulSet pod of world w with n containers, planned under cfg. */
static inline enum plan_status plan_limited(const struct config *cfg, int n, long w, char *err,
                                            size_t errlen)
{
	struct strbuf sb;
	struct pod_plan plan;
	enum plan_status st;
	cJSON *pod;
	int i;

	strbuf_init(&sb);
	strbuf_printf(&sb,
	              "{\"metadata\":{\"name\":\"ddp-1\",\"namespace\":\"ml\",\"labels\":{"
	              "\"distenv.dev/inject\":\"true\"},\"annotations\":{\"distenv.dev/"
	              "world-size\":\"%ld\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\","
	              "\"kind\":\"StatefulSet\",\"name\":\"ddp\",\"controller\":true}]},"
	              "\"spec\":{\"hostname\":\"ddp-1\",\"subdomain\":\"ddp\",\"containers\":[",
	              w);
	for (i = 0; i < n; i++)
		strbuf_printf(&sb, "%s{\"name\":\"c%d\",\"image\":\"x\"}", i ? "," : "", i);
	strbuf_puts(&sb, "]}}");
	pod = cJSON_Parse(sb.buf);
	st = pod_plan_build(pod, "ml", sb.len, cfg, NULL, &plan, err, errlen);
	if (st == PLAN_OK)
		pod_plan_free(&plan);
	cJSON_Delete(pod);
	strbuf_free(&sb);
	return st;
}

/* A container env of n entries "E0".."En-1", plus extra (single-quoted JSON entries). */
static inline char *env_pod_named(int n, const char *name_fmt, const char *extra)
{
	struct strbuf sb;
	int i;

	strbuf_init(&sb);
	strbuf_puts(&sb, "{\"metadata\":{\"name\":\"ddp-1\",\"namespace\":\"ml\","
	                 "\"labels\":{\"distenv.dev/inject\":\"true\"},\"annotations\":{"
	                 "\"distenv.dev/world-size\":\"2\"},\"ownerReferences\":[{\"kind\":"
	                 "\"StatefulSet\",\"apiVersion\":\"apps/v1\",\"name\":\"ddp\","
	                 "\"controller\":true}]},\"spec\":{\"subdomain\":\"ddp\",\"containers\":["
	                 "{\"name\":\"t\",\"env\":[");
	for (i = 0; i < n; i++) {
		strbuf_puts(&sb, i ? ",{\"name\":\"" : "{\"name\":\"");
		strbuf_printf(&sb, name_fmt, i);
		strbuf_puts(&sb, "\",\"value\":\"v\"}");
	}
	if (extra != NULL) {
		char *q = dq(extra);
		strbuf_printf(&sb, "%s%s", n ? "," : "", q);
		free(q);
	}
	strbuf_puts(&sb, "]}]}}");
	return strbuf_take(&sb);
}

/* The pod of env_pod_named with entries E0, E1, ... */
static inline char *env_pod(int n, const char *extra)
{
	return env_pod_named(n, "E%d", extra);
}

#endif
