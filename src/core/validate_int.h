/*
 * What validate.c hands the rooms of its checks (validate_env.c: the env a
 * pod template sets itself; validate_net.c: the Service and NetworkPolicies
 * around the workload). Private to src/core/validate*.c.
 */
#ifndef DISTENV_VALIDATE_INT_H
#define DISTENV_VALIDATE_INT_H

#include "config.h"
#include "kind.h"
#include "validate.h"

/*
 * The variables a target container of w's templates sets itself that every
 * pod of the template would run with, against the world's (world ranks): a
 * MASTER_ADDR or MASTER_PORT the pods would be denied for, a literal value
 * that is wrong for them, a value from the completion or pod index that is
 * not the rank. Each a problem or warning of v, after the template's name.
 */
void validate_own_env(struct view *w, const struct config *cfg, long world, struct validation *v);

/*
 * The headless Service of w (from services, the manifest's, else the API's
 * through lookup) and the NetworkPolicies of its namespace: a warning of v for
 * each way a rank's name would not resolve or its rendezvous port be dropped.
 */
void validate_cluster(const struct view *w, const struct config *cfg,
                      const struct workload_lookup *lookup, const cJSON *services,
                      struct validation *v);

#endif
