/*
 * A world for the framework tests: rank r of world w of a workload `name` in
 * namespace ml, under its own headless Service of the same name (hosts
 * NAME-R.NAME.ml.svc.cluster.local), with one framework; and the value of a
 * variable of a built env list.
 */
#ifndef DISTENV_TESTWORLD_H
#define DISTENV_TESTWORLD_H

#include <stdio.h>
#include <string.h>

#include "env.h"
#include "kinds.h"
#include "topology.h"

static inline void test_world(struct topology *t, const struct kind *kind, const char *name, long r,
                              long w, long port, unsigned framework)
{
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->group = -1;
	snprintf(t->ns, sizeof(t->ns), "ml");
	snprintf(t->workload, sizeof(t->workload), "%s", name);
	snprintf(t->service, sizeof(t->service), "%s", name);
	snprintf(t->domain, sizeof(t->domain), ".%s.ml.svc.cluster.local", name);
	snprintf(t->rdzv_id, sizeof(t->rdzv_id), "ml-%s", name);
	snprintf(t->nproc, sizeof(t->nproc), "1");
	t->port = port;
	t->rank = r;
	t->world_size = w;
	t->max_restarts = -1;
	t->frameworks = framework;
}

/* The value of name in l, or NULL. */
static inline const char *test_env_value(const struct env_list *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->vars[i].name, name) == 0)
			return l->vars[i].value;
	return NULL;
}

#endif
