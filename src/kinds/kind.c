/*
 * The one table of workload kinds, which the program hands the core
 * (core/registry.h), and what the kind rooms share: the pods render makes
 * (kind_pod_*), a pod's ordinal in its name (kind_name_ordinal), and what
 * every row says together for the chart (its opt-in CEL, its rules). Static
 * data; only the pods allocate.
 */
#include "kinds.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "util.h"

const struct kind *const kind_table[] = {&kind_jobset, &kind_leaderworkerset, &kind_statefulset,
                                         &kind_job};
const size_t kind_count = sizeof(kind_table) / sizeof(kind_table[0]);

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

	for (i = 0; kind_at(i) != NULL; i++)
		for (t = kind_at(i)->templates; t != NULL && t->path != NULL; t++) {
			int seen = 0;
			/* a path two kinds share (StatefulSet's and Job's spec.template) once */
			for (j = 0; j < i && !seen; j++)
				for (u = kind_at(j)->templates; u != NULL && u->path != NULL; u++)
					seen |= strcmp(u->path, t->path) == 0;
			for (u = kind_at(i)->templates; u != t && !seen; u++)
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

/* ---- the shared piece: what the kinds built on StatefulSets and Jobs reuse ---- */

/* The pod the StatefulSet controller makes for ordinal ord (stateful_set_utils.go). */
cJSON *kind_statefulset_pod(const cJSON *tmpl, const char *sts, const char *ns, const char *service,
                            long ord)
{
	char name[320], idx[24];
	struct pod_shape sh = {
	    name, NULL, "apps/v1", "StatefulSet", sts, name, service ? service : ""};
	cJSON *pod;

	snprintf(name, sizeof(name), "%s-%ld", sts, ord);
	snprintf(idx, sizeof(idx), "%ld", ord);
	pod = kind_pod_new(tmpl, ns, &sh);
	if (pod != NULL && (kind_pod_mark(pod, LABEL_POD_INDEX, idx, 1, 0) ||
	                    kind_pod_mark(pod, "statefulset.kubernetes.io/pod-name", name, 1, 0))) {
		cJSON_Delete(pod);
		return NULL;
	}
	return pod;
}

/* The pod the Job controller makes for completion index i (indexed_job_utils.go). */
cJSON *kind_job_pod(const cJSON *tmpl, const char *job, const char *ns, long i)
{
	char host[320], gen[330], idx[24];
	struct pod_shape sh = {NULL, gen, "batch/v1", "Job", job, host, NULL};
	cJSON *pod;

	snprintf(host, sizeof(host), "%s-%ld", job, i);
	snprintf(gen, sizeof(gen), "%s-", host);
	snprintf(idx, sizeof(idx), "%ld", i);
	pod = kind_pod_new(tmpl, ns, &sh);
	if (pod != NULL && kind_pod_mark(pod, ANN_JOB_INDEX, idx, 1, 1)) {
		cJSON_Delete(pod);
		return NULL;
	}
	return pod;
}

enum topology_status resolve_completion_index(struct resolve *rs, const char *what, long *idx)
{
	const char *v = resolve_mark(rs, ANN_JOB_INDEX);

	if (v == NULL)
		return resolve_deny(
		    rs, DENY_NONE,
		    "pod of %s %s/%s has no completion index: distenv supports only pods of a "
		    "StatefulSet or of an Indexed Job (set spec.completionMode: Indexed)",
		    what, rs->ns, rs->owner_name);
	if (parse_long(v, 0, INT_MAX, idx) != 0)
		return resolve_deny(rs, DENY_NONE,
		                    "annotation %s: \"%.32s\" is not a completion index",
		                    ANN_JOB_INDEX, v);
	return TOPOLOGY_OK;
}

int kind_name_ordinal(const char *name, const char *prefix, long *ord)
{
	size_t pl = strlen(prefix);

	if (name == NULL || strncmp(name, prefix, pl) != 0 || name[pl] != '-')
		return -1;
	return parse_long(name + pl + 1, 0, INT_MAX, ord);
}

long kind_map_long(const cJSON *map, const char *key)
{
	const char *s = json_map_str(map, key);
	long v;

	return s != NULL && parse_long(s, 0, 1L << 30, &v) == 0 ? v : -1;
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

	/* in list order: the built-in kinds first */
	for (i = 0; kind_listed((size_t)i) != NULL; i++) {
		const struct kind *k = kind_listed((size_t)i);
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

	for (i = 0; kind_listed((size_t)i) != NULL; i++) {
		const struct kind *k = kind_listed((size_t)i);
		if (k == NULL || k->api.resource == NULL)
			continue;
		strbuf_printf(out,
		              "- apiGroups: [\"%s\"]\n"
		              "  resources: [\"%s\"]\n"
		              "  verbs: [\"get\"]\n",
		              k->api.group, k->api.resource);
	}
}
