/*
 * The target containers' room (targets.c), as the resolution's steps
 * (topology.c) and the template forms (warnings, /validate) use it. Nothing
 * here allocates but targets_resolve's array, which the topology owns.
 */
#ifndef DISTENV_TARGETS_H
#define DISTENV_TARGETS_H

#include <cjson/cJSON.h>

#include "config.h"
#include "topology.h"

/*
 * The containers to inject into (annotation distenv.dev/containers, or all),
 * each one's env read, into t->targets (malloc'd; the caller frees with
 * topology_free, also on a denial). TOPOLOGY_DENY with "distenv: ..." in err
 * and t->reason; TOPOLOGY_NOMEM.
 */
enum topology_status targets_resolve(const cJSON *pod_spec, const cJSON *anns,
                                     const struct config *cfg, struct topology *t, char *err,
                                     size_t errlen);

/*
 * Writes PET_NPROC_PER_NODE into t->nproc and the GPUs into t->gpus; returns
 * the processes the pod says it runs, 0 when not known (targets.c says how).
 */
long targets_nproc(struct topology *t, const cJSON *pod_spec, const cJSON *anns,
                   const struct config *cfg);

/* The frameworks whose resource (framework.h) a target container of t requests. */
unsigned targets_resource_frameworks(const struct topology *t, const cJSON *pod_spec);

/*
 * The frameworks of a pod whose targets are t, the one rule: those fws (the
 * value of distenv.dev/frameworks, NULL: absent) names, else the configured
 * defaults plus the frameworks whose resource a target asks for, into *m.
 * Returns 1 when fws named them, 0 when defaulted, -1 when fws cannot be read
 * (*m then defaulted; the annotation is denied on its own).
 */
int targets_frameworks_of(const struct topology *t, const cJSON *pod_spec, const char *fws,
                          const struct config *cfg, unsigned *m);

#endif
