/*
 * The JobSet room's state in a topology (struct topology's kind_state, which
 * the core never reads): the replicated Jobs in spec order and the position
 * of the coordinator's pod. kind_jobset.c writes and reads it; a test that
 * builds a JobSet's topology by hand fills it through jobset_state. No other
 * room includes this.
 */
#ifndef DISTENV_KIND_JOBSET_H
#define DISTENV_KIND_JOBSET_H

#include "topology.h"
#include "workload.h"

/* A replicated Job as the topology sees it: its positions are [first, first + jobs * pods). */
struct jobset_rjob {
	char name[64];
	long jobs; /* replicas */
	long pods; /* completions of each Job */
	long first;
};

struct jobset_state {
	/*
	 * The position (spec order) of the coordinator's pod, which is rank 0
	 * while the pods before it move one rank up; 0 without one.
	 */
	long coordinator;
	int n_rjobs;
	struct jobset_rjob rjobs[WORKLOAD_MAX_RJOBS];
};

_Static_assert(sizeof(struct jobset_state) <= TOPOLOGY_KIND_STATE,
               "a JobSet's state fits in struct topology's kind_state");

/* t's JobSet state (t of any kind: the bytes are the JobSet's only when t->kind is). */
static inline struct jobset_state *jobset_state(struct topology *t)
{
	return (struct jobset_state *)(void *)t->kind_state.bytes;
}

static inline const struct jobset_state *jobset_cstate(const struct topology *t)
{
	return (const struct jobset_state *)(const void *)t->kind_state.bytes;
}

#endif
