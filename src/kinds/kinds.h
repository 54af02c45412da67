/*
 * The kinds wing's own header: the table the program hands the core
 * (core/registry.h), and the shared piece the kind rooms build on
 * (kinds/kind.c, and the Job's and StatefulSet's pods and completion index,
 * which the JobSet and LeaderWorkerSet rooms reuse). A kind room includes
 * this; nothing below the kinds wing does.
 */
#ifndef DISTENV_KINDS_H
#define DISTENV_KINDS_H

#include "kind.h"

/* The completion index the Job controller writes as a label and an annotation. */
#define ANN_JOB_INDEX "batch.kubernetes.io/job-completion-index"

/*
 * Every kind, in the order a pod is matched against them: the first whose owner
 * (kind and API group) and mark match wins, so the kinds built on StatefulSets
 * and Jobs come before the plain ones.
 */
extern const struct kind *const kind_table[];
extern const size_t kind_count;

/*
 * Each row, defined in its room (kind_<name>.c): the table holds them, a room
 * names its own, and a test names the ones it builds inputs for. A room never
 * names another's (scripts/include-graph.py --symbols checks it).
 */
extern const struct kind kind_statefulset, kind_job, kind_jobset, kind_leaderworkerset;

/* ---- kind.c: the pods render makes, shared by every room ---- */

/* Who a controller says a pod is: its name, owner, hostname and subdomain. */
struct pod_shape {
	const char *name;     /* metadata.name, or NULL */
	const char *generate; /* metadata.generateName, or NULL */
	const char *owner_apiv, *owner_kind, *owner_name;
	const char *hostname;  /* NULL: the template's */
	const char *subdomain; /* NULL: the template's; "": none */
};

/* A copy of the pod template tmpl shaped as sh says, in namespace ns. NULL on failure. */
cJSON *kind_pod_new(const cJSON *tmpl, const char *ns, const struct pod_shape *sh);

/* obj[key] = val (a string), replacing what was there. Returns 0 or -1. */
int kind_pod_set(cJSON *obj, const char *key, const char *val);

/* Sets key = val among the pod's labels and/or annotations. Returns 0 or -1. */
int kind_pod_mark(cJSON *pod, const char *key, const char *val, int label, int ann);

/* ---- kind.c: the shared piece the kinds built on StatefulSets and Jobs reuse ---- */

/*
 * The pod the StatefulSet controller makes for ordinal ord of StatefulSet sts
 * (service: its spec.serviceName, NULL: none), and the one the Job controller
 * makes for completion index i of Job job: the kinds built on them use them
 * too. NULL when memory ran out.
 */
cJSON *kind_statefulset_pod(const cJSON *tmpl, const char *sts, const char *ns, const char *service,
                            long ord);
cJSON *kind_job_pod(const cJSON *tmpl, const char *job, const char *ns, long i);

/*
 * The completion index the Job controller writes on every Indexed Job pod
 * (kind_job.c; a JobSet's pods carry it too): deny when absent or bad.
 */
enum topology_status resolve_completion_index(struct resolve *rs, const char *what, long *idx);

/*
 * The trailing "-N" of "<prefix>-N" (a StatefulSet pod's ordinal, a
 * LeaderWorkerSet group's index). Returns 0 or -1.
 */
int kind_name_ordinal(const char *name, const char *prefix, long *ord);

/*
 * The value of key in map (a pod's labels or annotations) as a whole number
 * in [0, 2^30]; -1 when absent or not such a number.
 */
long kind_map_long(const cJSON *map, const char *key);

/* ---- kind.c: what every row says together (the chart) ---- */

/*
 * Appends to out the CEL expression that is true when any pod template of any
 * kind opts in, one alternative a line (the chart's matchConditions, so that
 * the API server sends /validate exactly the workloads distenv checks).
 */
void kind_opt_in_cel(struct strbuf *out);

/*
 * Appends to out the chart's rules made from the kind table, as YAML list
 * items at column 0: the ValidatingWebhookConfiguration's rules (every kind,
 * CREATE and UPDATE) and the ClusterRole's (get on every kind distenv reads).
 * charts/distenv/files/ holds them; `make chart` fails when they differ.
 */
void kind_chart_validate_rules(struct strbuf *out);
void kind_chart_rbac_rules(struct strbuf *out);

#endif
