/*
 * The plan for one opted-in pod, shared by /mutate and render: its topology,
 * the environment of every target container, the warnings the user should
 * see and the JSON Patch. Pure apart from the look-up callback. The plan owns
 * everything in it; pod_plan_free releases it.
 */
#ifndef DISTENV_PLAN_H
#define DISTENV_PLAN_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "config.h"
#include "env.h"
#include "topology.h"
#include "workload.h"

/* Linux refuses execve() when one "NAME=value" string, with its NUL, passes 32 pages. */
#define ENV_STRING_MAX 131072
/*
 * The pod with its patch must stay storable: etcd's default request limit is
 * 1.5 MiB; a quarter of it is left for managedFields, status and later webhooks.
 */
#define POD_BYTES_MAX (1536 * 1024 - 384 * 1024)

/* The init container distenv.dev/wait-for-master adds. */
#define WAIT_CONTAINER "distenv-wait-for-master"

/* Warnings one pod keeps (a pod has a few at most); one past them is counted in n_more. */
#define PLAN_MAX_WARNINGS 8
#define PLAN_WARNING_LEN  120 /* the API server's guidance for admission warnings */

/* A target container's own entry of a variable distenv gives the pod: it wins. */
struct plan_own {
	int target;    /* index into topo.targets */
	char name[64]; /* the variable */
	char *value;   /* what the process sees (malloc'd); NULL: set by a reference */
	char how[220]; /* "" or " (from metadata.labels['...'])" */
	int differs;   /* 1: not distenv's value for the pod */
};

struct pod_plan {
	struct topology topo;
	struct plan_own *own; /* every target's own entries of distenv's variables */
	int n_own;
	cJSON *wait;              /* the init container distenv adds, or NULL */
	struct env_list env;      /* every variable of the rank, before the user's overrides */
	struct env_list *own_env; /* per target: non-empty when the container sets MASTER_* */
	struct strbuf patch;      /* the JSON Patch array as text, "[]" when nothing to add */
	int patch_ops;            /* its operations */
	char omitted[64]; /* growing variables left out ("TF_CONFIG", "A+B"), "" when none */
	char warnings[PLAN_MAX_WARNINGS][PLAN_WARNING_LEN]; /* each once, in order */
	int n_warnings;
	int n_more; /* distinct warnings past PLAN_MAX_WARNINGS: counted, not kept */
};

enum plan_status { PLAN_OK = 0, PLAN_DENY = 1, PLAN_NOMEM = -1 };

/*
 * Plans the mutation of pod (an opted-in Pod object) in namespace ns. pod_bytes
 * is the size of the pod as the API server sent it (0 when not known); with the
 * patch it must stay under POD_BYTES_MAX. On PLAN_OK the caller frees plan with
 * pod_plan_free; otherwise err says why (PLAN_DENY: a user-facing message
 * starting "distenv: ") and plan holds nothing to free; on PLAN_DENY
 * plan->topo.reason says why, and its kind, ns, workload and rank what was
 * known (see topology_resolve).
 */
enum plan_status pod_plan_build(const cJSON *pod, const char *ns, size_t pod_bytes,
                                const struct config *cfg, const struct workload_lookup *lookup,
                                struct pod_plan *plan, char *err, size_t errlen)
    __attribute__((warn_unused_result));

/* The environment of target i: its own when it has one, else the rank's. */
const struct env_list *pod_plan_target_env(const struct pod_plan *plan, int i);

/*
 * The same rule at apply time, for a pod template (its spec and annotations):
 * what every pod of the template would be denied for. Which variables a pod
 * gets depends on its frameworks and elasticity alone, so the template
 * decides. Returns 1 with the pod's denial in err, or 0.
 */
int plan_template_own_master(const cJSON *pod_spec, const cJSON *anns, const struct config *cfg,
                             char *err, size_t errlen);

void pod_plan_free(struct pod_plan *plan);

#endif
