/*
 * AdmissionReview v1 in, AdmissionReview v1 out. Validates the envelope,
 * decides whether the request is ours, plans the mutation and encodes the
 * answer. The result owns its body. admission_handle parses and builds in a
 * per-thread arena (arena.h): every cJSON tree of one admission lives and
 * dies with the call; the answer and what look-ups parse are allocated
 * outside it.
 */
#include "admission.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotation.h"
#include "arena.h"
#include "json.h"
#include "kind.h"
#include "validate.h"
#include "strbuf.h"
#include "base64.h"
#include "util.h"

#define UID_MAX 127

static int set_body(struct admission_result *res, char *json)
{
	if (json == NULL)
		return -1;
	res->body = json;
	res->body_len = strlen(json);
	return 0;
}

/*
 * Appends s as a JSON string literal with the shared escaper, bytes that are
 * not valid UTF-8 kept as they are: the uid must be echoed exactly.
 */
static void json_string(struct strbuf *sb, const char *s)
{
	json_put_string_bytes(sb, s, JSON_ALL, 1);
}

/* 400 with {"error": msg}. */
static int bad_request(struct admission_result *res, const char *msg)
{
	struct strbuf sb;

	res->http_status = 400;
	res->outcome = ADMISSION_BAD_REQUEST;
	snprintf(res->message, sizeof(res->message), "%s", msg);
	strbuf_init(&sb);
	strbuf_puts(&sb, "{\"error\":");
	json_string(&sb, msg);
	strbuf_puts(&sb, "}");
	return set_body(res, strbuf_take(&sb));
}

/*
 * 200 with the AdmissionReview response. patch (the JSON Patch text; NULL when
 * there is nothing to change) is base64-encoded; message non-NULL means a
 * denial. The envelope is written directly: only uid and message need
 * escaping, and the base64 patch (the bulk of a large answer) is copied once
 * instead of re-scanned by a JSON printer.
 */
static int review_response(struct admission_result *res, const struct strbuf *patch,
                           const char *message)
{
	struct strbuf sb;
	int rc = -1, i;

	res->http_status = 200;
	strbuf_init(&sb);
	strbuf_puts(&sb, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
	                 "\"response\":{\"uid\":");
	json_string(&sb, res->uid);
	if (message != NULL) {
		strbuf_puts(&sb,
		            ",\"allowed\":false,\"status\":{\"code\":403,\"reason\":\"Forbidden\","
		            "\"message\":");
		json_string(&sb, message);
		strbuf_puts(&sb, "}");
	} else {
		strbuf_puts(&sb, ",\"allowed\":true");
		for (i = 0; i < res->n_warnings; i++) {
			strbuf_puts(&sb, i == 0 ? ",\"warnings\":[" : ",");
			json_string(&sb, res->warnings[i]);
		}
		if (res->n_warnings > 0)
			strbuf_puts(&sb, "]");
		if (patch != NULL) {
			if (patch->oom)
				goto out;
			strbuf_puts(&sb, ",\"patchType\":\"JSONPatch\",\"patch\":\"");
			base64_append(&sb, patch->buf, patch->len); /* base64: nothing to escape */
			strbuf_puts(&sb, "\"");
		}
	}
	strbuf_puts(&sb, "}}");
	rc = set_body(res, strbuf_take(&sb));
out:
	strbuf_free(&sb);
	return rc;
}

/* Returns rc; when it is not 0 the answer could not be made: its body goes, a bare 500. */
static int answer_or_500(struct admission_result *res, int rc)
{
	if (rc != 0) {
		admission_result_free(res);
		res->http_status = 500;
	}
	return rc;
}

/*
 * Deletes a parsed tree, unless it lives in the arena: arena_end forgets it
 * whole, and walking ~1,200 nodes to free each was 5 % of the 4 KB pod's
 * instructions.
 */
static void tree_free(cJSON *t)
{
	if (!arena_active())
		cJSON_Delete(t);
}

static int str_eq(const char *a, const char *b)
{
	return a != NULL && strcmp(a, b) == 0;
}

/*
 * Parses the AdmissionReview envelope. Returns the tree (caller deletes) with
 * *req_out set and res->uid/ns filled; NULL when it answered 400 (rc in *rc).
 */
static cJSON *envelope(const char *body, size_t len, struct admission_result *res,
                       const cJSON **req_out, int *rc)
{
	cJSON *root;
	const cJSON *req;
	const char *uid, *ns;

	memset(res, 0, sizeof(*res));
	res->rank = -1;
	root = json_parse(body, len);
	if (root == NULL) {
		*rc = bad_request(res, "request body is not valid JSON");
		return NULL;
	}
	if (!str_eq(json_str(root, "apiVersion"), "admission.k8s.io/v1") ||
	    !str_eq(json_str(root, "kind"), "AdmissionReview")) {
		*rc = bad_request(res, "request body is not an AdmissionReview of apiVersion "
		                       "admission.k8s.io/v1");
		tree_free(root);
		return NULL;
	}
	req = json_get(root, "request");
	uid = json_str(req, "uid");
	if (!cJSON_IsObject(req) || uid == NULL || uid[0] == '\0') {
		*rc = bad_request(res, "AdmissionReview has no request.uid");
		tree_free(root);
		return NULL;
	}
	if (strlen(uid) > UID_MAX) {
		char msg[96];
		snprintf(msg, sizeof(msg),
		         "AdmissionReview request.uid is %zu characters long, more than %d",
		         strlen(uid), UID_MAX);
		*rc = bad_request(res, msg);
		tree_free(root);
		return NULL;
	}
	strcpy(res->uid, uid);
	ns = json_str(req, "namespace");
	fmt_printf(res->ns, sizeof(res->ns), "%s", ns ? ns : "");
	*req_out = req;
	return root;
}

/*
 * The answer's warnings: the n texts (each "distenv: ...", stride bytes apart)
 * and the more that were counted but not kept. All of them when they fit;
 * else the first ADMISSION_MAX_WARNINGS - 1 and a last one that says how many
 * more there are. They are joined into res->message for the log line.
 */
static void answer_warnings(struct admission_result *res, const char *texts, size_t stride, int n,
                            int more)
{
	int total = n + more, keep = n, i;

	if (total > ADMISSION_MAX_WARNINGS)
		keep = ADMISSION_MAX_WARNINGS - 1;
	for (i = 0; i < keep; i++)
		snprintf(res->warnings[i], sizeof(res->warnings[i]), "%s",
		         texts + (size_t)i * stride);
	if (keep < total)
		snprintf(res->warnings[keep], sizeof(res->warnings[keep]),
		         "distenv: %d more warning%s not shown%s", total - keep,
		         total - keep == 1 ? "" : "s",
		         more == 0 ? " (render prints them all)" : "");
	res->n_warnings = keep < total ? keep + 1 : keep;
	for (i = 0; i < res->n_warnings; i++) {
		size_t used = strlen(res->message);
		snprintf(res->message + used, sizeof(res->message) - used, "%s%s", i ? "; " : "",
		         res->warnings[i]);
	}
}

/*
 * A copy of the workload obj with spec.replicas set to the replicas of the
 * Scale object scale, or NULL (no replicas there, or out of memory).
 */
static cJSON *with_replicas(const cJSON *obj, const cJSON *scale)
{
	const cJSON *r = json_get(json_get(scale, "spec"), "replicas");
	cJSON *copy, *spec;

	if (!cJSON_IsNumber(r) || (copy = cJSON_Duplicate(obj, 1)) == NULL)
		return NULL;
	spec = cJSON_GetObjectItemCaseSensitive(copy, "spec");
	if (!cJSON_IsObject(spec) || !cJSON_ReplaceItemInObjectCaseSensitive(
	                                 spec, "replicas", cJSON_CreateNumber(r->valuedouble))) {
		cJSON_Delete(copy);
		return NULL;
	}
	return copy;
}

/*
 * A scale (an UPDATE of KIND/scale, `kubectl scale`): the Scale object has only
 * the replicas, so the workload is read (a look-up, never cached) and compared
 * as it was and as it will be. What comes back is only ever a warning: the
 * chart registers the scale with failurePolicy Ignore.
 */
static void validate_scale(const cJSON *req, const struct config *cfg,
                           const struct workload_lookup *lookup, struct admission_result *res,
                           struct validation *v)
{
	const cJSON *resource = json_get(req, "resource");
	const char *group = json_str(resource, "group"), *plural = json_str(resource, "resource");
	const char *name = json_str(req, "name");
	const struct kind *k = kind_of_resource(group, plural);
	cJSON *obj = NULL, *old = NULL, *now = NULL;
	char err[512];
	int was;

	memset(v, 0, sizeof(*v));
	if (k == NULL || name == NULL || lookup == NULL || lookup->get_object == NULL)
		return; /* not a kind of distenv's, or no look-ups: not checked (docs/reference.md)
		         */
	fmt_printf(res->workload, sizeof(res->workload), "%s/%s", k->api.kind, name);
	was = arena_pause();
	if (lookup->get_object(lookup->ctx, k, res->ns, name, &obj, err, sizeof(err)) < 0)
		view_warn(v, "the world change of this scale is not checked: %.200s", err);
	arena_resume(was);
	if (obj == NULL)
		return;
	old = with_replicas(obj, json_get(req, "oldObject"));
	now = with_replicas(obj, json_get(req, "object"));
	if (old != NULL && now != NULL)
		validate_update(old, now, k->api.kind, res->ns, cfg, v);
	cJSON_Delete(old);
	cJSON_Delete(now);
	was = arena_pause();
	cJSON_Delete(obj);
	arena_resume(was);
}

int admission_validate(const char *body, size_t len, const struct config *cfg,
                       const struct workload_lookup *lookup, struct admission_result *res)
{
	const cJSON *req = NULL, *kind, *obj;
	const char *op, *k, *name;
	struct validation *v = NULL;
	cJSON *root;
	int rc = -1;

	root = envelope(body, len, res, &req, &rc);
	if (root == NULL)
		return rc;
	kind = json_get(req, "kind");
	obj = json_get(req, "object");
	op = json_str(req, "operation");
	k = json_str(kind, "kind");
	if (str_eq(op, "UPDATE") && str_eq(json_str(req, "subResource"), "scale")) {
		if ((v = malloc(sizeof(*v))) == NULL)
			goto out;
		validate_scale(req, cfg, lookup, res, v);
		answer_warnings(res, v->warnings[0], sizeof(v->warnings[0]), v->n_warnings,
		                v->n_more);
		res->outcome = v->n_warnings > 0 ? ADMISSION_UNCHANGED : ADMISSION_SKIPPED;
		rc = review_response(res, NULL, NULL);
		goto out;
	}
	if (!validate_kind_known(json_str(kind, "group"), k) || !cJSON_IsObject(obj) ||
	    !(str_eq(op, "CREATE") || str_eq(op, "UPDATE"))) {
		res->outcome = ADMISSION_SKIPPED;
		rc = review_response(res, NULL, NULL);
		goto out;
	}
	if ((v = malloc(sizeof(*v))) == NULL)
		goto out;
	validate_workload(obj, k, res->ns, cfg, lookup, NULL, v);
	if (str_eq(op, "UPDATE"))
		validate_update(json_get(req, "oldObject"), obj, k, res->ns, cfg, v);
	name = json_str(json_get(obj, "metadata"), "name");
	fmt_printf(res->workload, sizeof(res->workload), "%s/%s", k, name ? name : "");
	answer_warnings(res, v->warnings[0], sizeof(v->warnings[0]), v->n_warnings, v->n_more);
	if (!v->opted_in) {
		res->outcome = ADMISSION_SKIPPED;
		rc = review_response(res, NULL, NULL);
	} else if (v->n_problems > 0) {
		res->outcome = ADMISSION_DENIED;
		res->reason = v->reason;
		snprintf(res->message, sizeof(res->message), "%.500s", v->denial);
		rc = review_response(res, NULL, v->denial);
	} else {
		res->outcome = ADMISSION_UNCHANGED;
		rc = review_response(res, NULL, NULL);
	}
out:
	free(v);
	tree_free(root);
	return answer_or_500(res, rc);
}

/* A look-up as the core calls it, with the arena paused: the cache may keep what it parses. */
static int paused_get(void *ctx, const struct workload_ref *ref, int fresh,
                      struct workload_spec *out, char *err, size_t errlen)
{
	const struct workload_lookup *lk = ctx;
	int was = arena_pause(), rc = lk->get(lk->ctx, ref, fresh, out, err, errlen);

	arena_resume(was);
	return rc;
}

static int paused_get_service(void *ctx, const char *ns, const char *name, struct service_info *out,
                              char *err, size_t errlen)
{
	const struct workload_lookup *lk = ctx;
	int was = arena_pause(), rc = lk->get_service(lk->ctx, ns, name, out, err, errlen);

	arena_resume(was);
	return rc;
}

static int handle(const char *body, size_t len, const struct config *cfg,
                  const struct workload_lookup *lookup, struct admission_result *res);

int admission_handle(const char *body, size_t len, const struct config *cfg,
                     const struct workload_lookup *lookup, struct admission_result *res)
{
	struct workload_lookup paused;
	int rc;

	if (lookup != NULL) {
		paused.get = lookup->get != NULL ? paused_get : NULL;
		paused.get_service = lookup->get_service != NULL ? paused_get_service : NULL;
		paused.list_netpols = NULL; /* the pod webhook lists no policies */
		paused.ctx = (void *)lookup;
		lookup = &paused;
	}
	arena_begin();
	rc = handle(body, len, cfg, lookup, res);
	arena_end(); /* nothing of the arena's is left: the answer was printed outside it */
	return rc;
}

static int handle(const char *body, size_t len, const struct config *cfg,
                  const struct workload_lookup *lookup, struct admission_result *res)
{
	cJSON *root = NULL;
	const cJSON *req = NULL, *kind, *obj, *labels;
	const char *ns, *sub;
	struct pod_plan plan;
	enum plan_status ps;
	char err[1024]; /* every problem of the pod, joined */
	int rc = -1;

	root = envelope(body, len, res, &req, &rc);
	if (root == NULL)
		return rc;
	ns = json_str(req, "namespace");

	kind = json_get(req, "kind");
	sub = json_str(req, "subResource");
	obj = json_get(req, "object");
	labels = json_get(json_get(obj, "metadata"), "labels");
	if (!str_eq(json_str(kind, "kind"), "Pod") || !str_eq(json_str(kind, "group"), "") ||
	    !str_eq(json_str(req, "operation"), "CREATE") || (sub != NULL && sub[0] != '\0') ||
	    !cJSON_IsObject(obj) ||
	    !str_eq(cJSON_IsObject(labels) ? json_str(labels, LABEL_INJECT) : NULL, "true")) {
		res->outcome = ADMISSION_SKIPPED;
		rc = review_response(res, NULL, NULL);
		goto out;
	}

	err[0] = '\0';
	ps = pod_plan_build(obj, ns ? ns : "", len, cfg, lookup, &plan, err, sizeof(err));
	if (ps == PLAN_NOMEM)
		goto out;
	if (ps == PLAN_DENY) {
		res->outcome = ADMISSION_DENIED;
		res->reason = plan.topo.reason != DENY_NONE ? plan.topo.reason : DENY_OTHER;
		/* What was known before the denial, for the log line. */
		if (plan.topo.workload[0] != '\0')
			fmt_printf(res->workload, sizeof(res->workload), "%s/%s",
			           kind_name(plan.topo.kind), plan.topo.workload);
		res->rank = plan.topo.rank;
		snprintf(res->message, sizeof(res->message), "%s", err);
		rc = review_response(res, NULL, err);
		goto out;
	}
	fmt_printf(res->ns, sizeof(res->ns), "%s", plan.topo.ns);
	fmt_printf(res->workload, sizeof(res->workload), "%s/%s", kind_name(plan.topo.kind),
	           plan.topo.workload);
	res->rank = plan.topo.rank;
	answer_warnings(res, plan.warnings[0], sizeof(plan.warnings[0]), plan.n_warnings,
	                plan.n_more);
	res->outcome = plan.patch_ops > 0 ? ADMISSION_PATCHED : ADMISSION_UNCHANGED;
	rc = review_response(res, plan.patch_ops > 0 ? &plan.patch : NULL, NULL);
	pod_plan_free(&plan);
out:
	tree_free(root);
	return answer_or_500(res, rc);
}

void admission_result_free(struct admission_result *res)
{
	if (res == NULL)
		return;
	free(res->body);
	res->body = NULL;
	res->body_len = 0;
}
