/*
 * A workload's pod templates, for every kind: the walk over a kind's template
 * paths (/validate, render and the chart's matchConditions read templates
 * through it) and the opt-in label. Pure; allocates nothing.
 */
#include "kind.h"

#include <stdio.h>
#include <string.h>

#include "json.h"

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
