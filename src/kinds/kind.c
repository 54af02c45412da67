/*
 * The one table of workload kinds: every driver (topology, workload, validate)
 * reaches a kind through it, and the walk over a kind's pod templates that
 * /validate, render and the chart's matchConditions share. Static data; the
 * walk allocates nothing.
 */
#include "kind.h"

#include <stdio.h>
#include <string.h>

#include "json.h"

/* Each kind's row, defined in its room (kind_<name>.c): only this table names them. */
extern const struct kind kind_statefulset, kind_job, kind_jobset, kind_leaderworkerset;

const struct kind *const kind_table[] = {&kind_jobset, &kind_leaderworkerset, &kind_statefulset,
                                         &kind_job};
const size_t kind_count = sizeof(kind_table) / sizeof(kind_table[0]);

const struct kind *kind_of(enum workload_kind k)
{
	size_t i;

	for (i = 0; i < kind_count; i++)
		if (kind_table[i]->kind == k)
			return kind_table[i];
	return NULL;
}

const struct kind *kind_named(const char *group, const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < kind_count; i++)
		if ((group == NULL || strcmp(kind_table[i]->api.group, group) == 0) &&
		    strcmp(kind_table[i]->api.kind, name) == 0)
			return kind_table[i];
	return NULL;
}

const struct kind *kind_of_resource(const char *group, const char *resource)
{
	size_t i;

	for (i = 0; group != NULL && resource != NULL && i < kind_count; i++)
		if (kind_table[i]->api.resource != NULL &&
		    strcmp(kind_table[i]->api.group, group) == 0 &&
		    strcmp(kind_table[i]->api.resource, resource) == 0)
			return kind_table[i];
	return NULL;
}

int kind_template_opts_in(const cJSON *tmpl)
{
	const char *v = json_str(json_get(json_get(tmpl, "metadata"), "labels"), LABEL_INJECT);

	return v != NULL && strcmp(v, "true") == 0;
}

/* Walks path (the rest of a kind_template's) from node, naming each template what. */
static void walk(const cJSON *node, const char *path, const char *what, const char *label,
                 void (*fn)(void *ctx, const cJSON *tmpl, const char *what), void *ctx)
{
	const char *dot = strchr(path, '.'), *star = strstr(path, "[*]");
	char key[64];
	size_t n;
	const cJSON *it;

	if (!cJSON_IsObject(node))
		return;
	n = star != NULL && (dot == NULL || star < dot) ? (size_t)(star - path)
	    : dot != NULL                               ? (size_t)(dot - path)
	                                                : strlen(path);
	if (n == 0 || n >= sizeof(key))
		return;
	memcpy(key, path, n);
	key[n] = '\0';
	node = json_get(node, key);
	if (star != NULL && star == path + n) {
		const char *rest = path + n + 3;
		if (*rest == '.')
			rest++;
		if (!cJSON_IsArray(node))
			return;
		cJSON_ArrayForEach(it, node)
		{
			char named[96];
			const char *iname = json_str(it, "name");
			snprintf(named, sizeof(named), "%s %s", label ? label : "item",
			         iname ? iname : "(unnamed)");
			if (*rest == '\0')
				fn(ctx, it, named);
			else
				walk(it, rest, named, label, fn, ctx);
		}
		return;
	}
	if (dot == NULL)
		fn(ctx, node, what);
	else
		walk(node, dot + 1, what, label, fn, ctx);
}

/* The template itself must be an object: walk stops at anything else. */
struct each_ctx {
	void (*fn)(void *ctx, const cJSON *tmpl, const char *what);
	void *ctx;
};

static void each_object(void *ctx, const cJSON *tmpl, const char *what)
{
	const struct each_ctx *e = ctx;

	if (cJSON_IsObject(tmpl))
		e->fn(e->ctx, tmpl, what);
}

void kind_each_template(const struct kind *k, const cJSON *obj,
                        void (*fn)(void *ctx, const cJSON *tmpl, const char *what), void *ctx)
{
	const struct kind_template *t;
	struct each_ctx e = {fn, ctx};

	for (t = k->templates; t != NULL && t->path != NULL; t++)
		walk(obj, t->path, t->what ? t->what : "", t->what, each_object, &e);
}

/*
 * "has(v.a) && has(v.a.b) && ..." for every prefix of the members in path up
 * to its end or its first "[*]"; writes the expression of the members (v.a.b)
 * into expr. Returns the rest of the path after "[*]", or NULL at its end.
 */
static const char *cel_has(struct strbuf *out, const char *var, const char *path, char *expr,
                           size_t exprlen)
{
	const char *p = path;

	snprintf(expr, exprlen, "%s", var);
	while (*p != '\0') {
		size_t n = strcspn(p, ".[");
		size_t used = strlen(expr);
		snprintf(expr + used, exprlen - used, ".%.*s", (int)n, p);
		strbuf_printf(out, "has(%s) && ", expr);
		p += n;
		if (strncmp(p, "[*]", 3) == 0)
			return p[3] == '.' ? p + 4 : p + 3;
		if (*p == '.')
			p++;
	}
	return NULL;
}

/* The CEL of one path from var (nested lists take the variables t1, t2, ...). */
static void cel_path(struct strbuf *out, const char *var, const char *path, int depth)
{
	char expr[256], item[16];
	const char *rest = cel_has(out, var, path, expr, sizeof(expr));

	if (rest != NULL) {
		snprintf(item, sizeof(item), "t%d", depth + 1);
		strbuf_printf(out, "%s.exists(%s, ", expr, item);
		cel_path(out, item, rest, depth + 1);
		strbuf_puts(out, ")");
		return;
	}
	strbuf_printf(
	    out,
	    "has(%s.metadata) && has(%s.metadata.labels) && '%s' in %s.metadata.labels && "
	    "%s.metadata.labels['%s'] == 'true'",
	    expr, expr, LABEL_INJECT, expr, expr, LABEL_INJECT);
}

void kind_opt_in_cel(struct strbuf *out)
{
	size_t i, j;
	const struct kind_template *t, *u;
	int first = 1;

	for (i = 0; i < kind_count; i++)
		for (t = kind_table[i]->templates; t != NULL && t->path != NULL; t++) {
			int seen = 0;
			/* a path two kinds share (StatefulSet's and Job's spec.template) once */
			for (j = 0; j < i && !seen; j++)
				for (u = kind_table[j]->templates; u != NULL && u->path != NULL;
				     u++)
					seen |= strcmp(u->path, t->path) == 0;
			for (u = kind_table[i]->templates; u != t && !seen; u++)
				seen |= strcmp(u->path, t->path) == 0;
			if (seen)
				continue;
			strbuf_puts(out, first ? "(" : " ||\n(");
			cel_path(out, "object", t->path, 0);
			strbuf_puts(out, ")");
			first = 0;
		}
	strbuf_puts(out, "\n");
}

/* ---- the pods render makes ---- */

/* Returns obj[key], creating an empty object there when absent. NULL on failure. */
static cJSON *obj_child(cJSON *obj, const char *key)
{
	cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (cJSON_IsObject(it))
		return it;
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	return cJSON_AddObjectToObject(obj, key);
}

int kind_pod_set(cJSON *obj, const char *key, const char *val)
{
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	return cJSON_AddStringToObject(obj, key, val) == NULL ? -1 : 0;
}

cJSON *kind_pod_new(const cJSON *tmpl, const char *ns, const struct pod_shape *sh)
{
	cJSON *pod = cJSON_CreateObject(), *meta, *spec, *refs, *ref;

	if (pod == NULL)
		return NULL;
	meta = cJSON_Duplicate(json_get(tmpl, "metadata"), 1);
	spec = cJSON_Duplicate(json_get(tmpl, "spec"), 1);
	if (meta == NULL)
		meta = cJSON_CreateObject();
	if (spec == NULL)
		spec = cJSON_CreateObject();
	cJSON_AddStringToObject(pod, "apiVersion", "v1");
	cJSON_AddStringToObject(pod, "kind", "Pod");
	cJSON_AddItemToObject(pod, "metadata", meta); /* pod owns meta */
	cJSON_AddItemToObject(pod, "spec", spec);     /* pod owns spec */
	if (meta == NULL || spec == NULL || obj_child(meta, "labels") == NULL ||
	    obj_child(meta, "annotations") == NULL || kind_pod_set(meta, "namespace", ns) != 0 ||
	    (sh->name && kind_pod_set(meta, "name", sh->name)) ||
	    (sh->generate && kind_pod_set(meta, "generateName", sh->generate)) ||
	    (sh->hostname && kind_pod_set(spec, "hostname", sh->hostname)))
		goto fail;
	if (sh->subdomain != NULL) {
		cJSON_DeleteItemFromObjectCaseSensitive(spec, "subdomain");
		if (sh->subdomain[0] && kind_pod_set(spec, "subdomain", sh->subdomain))
			goto fail;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "ownerReferences");
	refs = cJSON_AddArrayToObject(meta, "ownerReferences");
	ref = cJSON_CreateObject();
	if (refs == NULL || ref == NULL) {
		cJSON_Delete(ref);
		goto fail;
	}
	cJSON_AddItemToArray(refs, ref); /* refs owns ref */
	if (!cJSON_AddStringToObject(ref, "apiVersion", sh->owner_apiv) ||
	    !cJSON_AddStringToObject(ref, "kind", sh->owner_kind) ||
	    !cJSON_AddStringToObject(ref, "name", sh->owner_name) ||
	    !cJSON_AddTrueToObject(ref, "controller"))
		goto fail;
	return pod;
fail:
	cJSON_Delete(pod);
	return NULL;
}

int kind_pod_mark(cJSON *pod, const char *key, const char *val, int label, int ann)
{
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(pod, "metadata");

	if (label && kind_pod_set(cJSON_GetObjectItemCaseSensitive(meta, "labels"), key, val) != 0)
		return -1;
	if (ann &&
	    kind_pod_set(cJSON_GetObjectItemCaseSensitive(meta, "annotations"), key, val) != 0)
		return -1;
	return 0;
}

/* ---- what every kind's row says together ---- */

void kind_supported(char *out, size_t outlen)
{
	size_t used = 0;
	int k, n = 0, last = 0;

	for (k = 0; k < WORKLOAD_KIND_COUNT; k++)
		if (kind_of((enum workload_kind)k) != NULL)
			last = k;
	snprintf(out, outlen, "distenv supports only pods of ");
	for (k = 0; k < WORKLOAD_KIND_COUNT; k++) {
		const struct kind *row = kind_of((enum workload_kind)k);
		if (row == NULL)
			continue;
		used = strlen(out);
		snprintf(out + used, outlen - used, "%s%s",
		         n == 0      ? ""
		         : k == last ? " or of "
		                     : ", of ",
		         row->supported);
		n++;
	}
}

int kind_controller_label(const char *key)
{
	size_t i;
	const struct kind_label *l;
	const char *const *p;

	for (i = 0; i < kind_count; i++) {
		for (l = kind_table[i]->pod_labels; l != NULL && l->key != NULL; l++)
			if (strcmp(key, l->key) == 0)
				return 1;
		for (p = kind_table[i]->label_prefixes; p != NULL && *p != NULL; p++)
			if (strncmp(key, *p, strlen(*p)) == 0)
				return 1;
	}
	return 0;
}

/* ---- the chart's rules ---- */

/* "v1" of "apps/v1". */
static const char *api_version_of(const struct kind *k)
{
	const char *slash = strchr(k->api.api_version, '/');

	return slash != NULL ? slash + 1 : k->api.api_version;
}

void kind_chart_validate_rules(struct strbuf *out)
{
	int i, crd_said = 0;

	/* the order of enum workload_kind: the built-in kinds first */
	for (i = 0; i < WORKLOAD_KIND_COUNT; i++) {
		const struct kind *k = kind_of((enum workload_kind)i);
		if (k == NULL)
			continue;
		if (k->crd && !crd_said++)
			strbuf_puts(out,
			            "# Only where those CRDs are installed; otherwise these rules "
			            "match nothing.\n");
		strbuf_printf(out,
		              "- apiGroups: [\"%s\"]\n"
		              "  apiVersions: [\"%s\"]\n"
		              "  resources: [\"%s\"]\n"
		              "  operations: [\"CREATE\", \"UPDATE\"]\n"
		              "  scope: Namespaced\n",
		              k->api.group, k->crd ? "*" : api_version_of(k), k->plural);
	}
}

void kind_chart_rbac_rules(struct strbuf *out)
{
	int i;

	for (i = 0; i < WORKLOAD_KIND_COUNT; i++) {
		const struct kind *k = kind_of((enum workload_kind)i);
		if (k == NULL || k->api.resource == NULL)
			continue;
		strbuf_printf(out,
		              "- apiGroups: [\"%s\"]\n"
		              "  resources: [\"%s\"]\n"
		              "  verbs: [\"get\"]\n",
		              k->api.group, k->api.resource);
	}
}
