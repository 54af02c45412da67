/*
 * The one table of workload kinds: every driver (topology, workload, validate)
 * reaches a kind through it. Static data.
 */
#include "kind.h"

#include <string.h>

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
