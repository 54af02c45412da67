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
