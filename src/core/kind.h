/*
 * A workload kind is a file: src/kinds/kind_statefulset.c, kind_job.c,
 * kind_jobset.c and kind_leaderworkerset.c each hold one struct kind (how the
 * API names and serves it, how its pods are recognised and placed, its host
 * names, its view for /validate, the pods render makes of a manifest, its
 * labels) and everything else about that kind; kinds/kind.c holds the one
 * table, which the program hands the core (registry.h), and the piece the
 * rooms share (kinds/kinds.h). This header is the core's side of the
 * interface, grouped by the core file that implements it: the core reaches a
 * kind only through the registered table and names none. Nothing here
 * allocates.
 */
#ifndef DISTENV_KIND_H
#define DISTENV_KIND_H

#include <stddef.h>
#include <stdio.h>
#include <cjson/cJSON.h>

#include "annotation.h"
#include "registry.h"
#include "config.h"
#include "strbuf.h"
#include "topology.h"
#include "validate.h"
#include "workload.h"

/* The pod index the StatefulSet controller labels its pods with (LeaderWorkerSet's too). */
#define LABEL_POD_INDEX "apps.kubernetes.io/pod-index"

/* ---- topology.c: placing a pod (the resolution's shared state and steps) ---- */

/* What the steps share: the pod's parts, the inputs, and the topology being filled. */
struct resolve {
	const cJSON *meta, *spec, *anns, *labels, *owner;
	const char *ns, *pod_name, *owner_name;
	const struct config *cfg;
	const struct workload_lookup *lookup;
	long ann_world;  /* distenv.dev/world-size, -1 when absent */
	int bad_world;   /* distenv.dev/world-size has a bad value (reported; read as absent) */
	int bad_service; /* distenv.dev/service has a bad value */
	struct topology *t;
	char *err;
	size_t errlen;
};

/*
 * A denial, for `return resolve_deny(rs, why, ...)`: writes "distenv: " and
 * the message into rs->err, and why into the topology's reason (DENY_NONE
 * leaves it to the step, see step() in topology_resolve). Returns TOPOLOGY_DENY.
 */
enum topology_status resolve_deny(const struct resolve *rs, enum deny_reason why, const char *fmt,
                                  ...) __attribute__((format(printf, 3, 4)));

/* The pod's name (its generateName before it has one) for a message; "(unnamed)" when none. */
const char *resolve_pod_name(const struct resolve *rs);

/* A value the controller writes as a label, an annotation or both: the label first. */
const char *resolve_mark(const struct resolve *rs, const char *key);

/* Reads resolve_mark(key) as a whole number in [0, INT_MAX]: 0 absent, 1 set, deny when bad. */
enum topology_status resolve_mark_long(const struct resolve *rs, const char *key, long *out,
                                       int *present);

/*
 * Fetches the workload through the look-up. A cached answer that would deny
 * the pod (would_deny, may be NULL), or that belongs to another object of the
 * same name, is read again before it is believed.
 */
enum topology_status resolve_fetch(struct resolve *rs, const struct workload_ref *ref,
                                   int (*would_deny)(const struct resolve *,
                                                     const struct workload_spec *),
                                   struct workload_spec *ws, const char *why);

/* The world: the annotation when set, else what the workload says (< 0: not known). */
enum topology_status resolve_set_world(struct resolve *rs, long from_api);

/* distenv.dev/world-size, when set, equals the world the workload fixes (what: its pods). */
enum topology_status resolve_fixed_world(struct resolve *rs, long world, const char *what);

/* ---- hosts.c: what every kind's host names are made with ---- */

/*
 * "<a>[-<b>]-<n1>[-<n2>]" into out (b NULL, n2 < 0: left out), without printf
 * or a call per part (a TF_CONFIG of W hosts makes W of them). Returns its
 * length, or -1 when it does not fit.
 */
int kind_host_name(char *out, size_t outlen, const char *a, const char *b, long n1, long n2);

/*
 * A kind's host_run answer for count names "<prefix><number>", the number
 * counting up from number: the prefix "<a>[-<b>]-" (n1 < 0) or
 * "<a>[-<b>]-<n1>-" into out, its length in *plen and number in *first.
 * Returns count, or 0 when the prefix does not fit or count is not positive.
 */
long kind_host_run(char *out, size_t outlen, const char *a, const char *b, long n1, long number,
                   long count, size_t *plen, long *first);

/* ---- workload.c: reading the API server's answers ---- */

/*
 * Parses json as one object of kind want: the whole input, nothing after it.
 * Returns the tree (caller deletes) with *spec pointing at its .spec (or NULL),
 * and the metadata.uid copied into out; NULL with err.
 */
cJSON *workload_parse_object(const char *json, size_t len, const char *want,
                             struct workload_spec *out, const cJSON **spec, char *err,
                             size_t errlen);

/* A whole number in [0, 2^31-1] at obj.key; absent or null leaves *out. Returns 0 or -1. */
int workload_get_count(const cJSON *obj, const char *key, const char *path, long *out, char *err,
                       size_t errlen);

/* An optional object member: NULL when absent or null, err when of another type. */
int workload_get_object(const cJSON *obj, const char *key, const char *path, const cJSON **out,
                        char *err, size_t errlen);

/* An optional string member copied into out (outlen bytes); err when not a string or too long. */
int workload_get_string(const cJSON *obj, const char *key, const char *path, char *out,
                        size_t outlen, char *err, size_t errlen);

/* completions, parallelism and completionMode of a Job spec (path names it in errors). */
int workload_read_job_spec(const cJSON *spec, const char *path, long *completions,
                           long *parallelism, int *indexed, char *err, size_t errlen);

/* ---- validate.c: the view /validate checks every kind through ---- */

/* One workload as the checks see it. */
struct view {
	const char *kind, *name, *ns;
	const cJSON *tmpl[WORKLOAD_MAX_RJOBS + 1]; /* the opted-in pod templates */
	/* how a warning names each ("replicated Job w", "leader template"); "": the only one */
	char tmpl_what[WORKLOAD_MAX_RJOBS + 1][96];
	int n_tmpl;
	const cJSON *pods[WORKLOAD_MAX_RJOBS + 1]; /* every pod template, opted in or not */
	int n_pods;
	const cJSON *rank0;  /* rank 0's pod template; NULL: not known */
	long count;          /* replicas / completions / all pods / group size */
	const char *service; /* the Service to check; NULL when the controller makes it */
	struct topology t;   /* ranks and hosts (no targets) */
	/*
	 * What the kind's controllers annotate every pod with that a framework's
	 * refuse reads (a LeaderWorkerSet's subgroup size); NULL: nothing. The
	 * view owns it; validate_workload frees it.
	 */
	cJSON *pod_anns;
};

/*
 * A problem (what can never work): joined into v's denial. The first problem
 * names the denial's reason: DENY_WORKLOAD, or view_problem_as's.
 */
void view_problem(struct validation *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void view_problem_as(struct validation *v, enum deny_reason reason, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * A warning, "distenv: ..." cut to VALIDATE_WARNING_LEN - 1 characters; one
 * already given is not given again.
 */
void view_warn(struct validation *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * A warning about pod template i of w, named first ("distenv: replicated Job
 * w: ...") when the workload has several; a long name is shortened so that
 * the text fits.
 */
void view_warn_template(struct validation *v, const struct view *w, int i, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The checks of an Indexed Job's spec (a Job's, or a JobSet's replicated Job's). */
void view_job(const cJSON *spec, const cJSON *tmpl, struct validation *v, const char *what);

/* ---- the pods render makes (cli/render.c): where each kind sends them ---- */

/*
 * Where a kind's make_pods sends each pod it makes from a manifest: render
 * plans it and prints its rank.
 */
struct pod_sink {
	/*
	 * Takes pod (and deletes it; NULL: memory ran out). ws is what a look-up
	 * of the workload answers (NULL: no look-up); which names the pod in an
	 * error. Returns 0, or -1 with s->err: stop.
	 */
	int (*emit)(struct pod_sink *s, cJSON *pod, const struct workload_spec *ws,
	            const char *which);
	void *ctx;       /* the emitter's own */
	long world_size; /* > 0: as if replicas/completions were this */
	char *err;
	size_t errlen;
};

/* ---- the kinds (kind.c: the table; kind_<name>.c: each kind) ---- */

/*
 * Where a kind's pod templates are: a path from the workload object, its
 * members joined by "." and "[*]" after a list whose every item holds one
 * ("spec.replicatedJobs[*].template.spec.template"). The one definition of
 * which templates opt in: /validate and render read the templates through
 * it, and the chart's matchConditions are made from it (kind_opt_in_cel).
 */
struct kind_template {
	const char *path;
	/*
	 * How a warning names the template: "leader template"; after a "[*]" the
	 * item's name follows ("replicated Job" + " w"); NULL: the workload's only one.
	 */
	const char *what;
	/*
	 * The ranks its pods take in one world: 1 (a leader's), -1 (every rank
	 * but one: the workers beside a leader); 0: the whole world, or the part
	 * of an item of a list (topology_part: a replicated Job's).
	 */
	long ranks;
};

/*
 * A label the kind's controllers put on every pod besides the template's own,
 * and what its value is: the workload's name, or one distenv cannot know at
 * apply time (a uid, a hash), or one that differs from pod to pod (an index).
 */
enum kind_label_value { KIND_LABEL_NAME, KIND_LABEL_UNKNOWN, KIND_LABEL_PER_POD };

struct kind_label {
	const char *key; /* NULL ends a list */
	enum kind_label_value value;
};

/*
 * What `doctor` (core/doctor*.c) reads differently for a kind, on the objects
 * a person would read: the workload as the API server returns it, its pods.
 */
/* What a workload asks for now, as doctor reads its spec. */
struct kind_doctor_want {
	const cJSON *tmpl; /* the pod template that carries distenv's annotations (a worker's) */
	long world;        /* the ranks of one world; -1: not known */
	long groups;       /* how many worlds; 1 unless the kind says */
	long start;        /* the first ordinal of its pods; 0 unless the kind says */
};

struct kind_doctor {
	/*
	 * The words kubectl takes for the kind in KIND/NAME ("sts", "statefulset",
	 * "statefulset.apps", ...), NULL ending: the usage names the first, and the
	 * second after it when the first is not the kind's own name ("sts
	 * (statefulset)"); and an example target ("sts/ddp").
	 */
	const char *const *words;
	const char *example;
	/*
	 * The label key whose value is the workload's name on every pod, which
	 * lists them ("batch.kubernetes.io/job-name"); NULL: the kind's mark, or
	 * without one the workload's own spec.selector.matchLabels.
	 */
	const char *pods_label;
	/* Reads what the workload asks for from its spec into *out (filled with the defaults). */
	void (*want)(const cJSON *spec, struct kind_doctor_want *out);
	/*
	 * A pod's group (*group is 0 before) and, when *rank is -1 (distenv's own
	 * annotation did not say), its rank, from what its controller writes on it.
	 * NULL: neither.
	 */
	void (*pod_place)(const cJSON *labels, const cJSON *anns, long start, long *rank,
	                  long *group);
	/*
	 * A missing rank's pod name as the controller names it ("<sts>-<start+r>");
	 * NULL: "rank R".
	 */
	void (*rank_name)(const char *name, long start, long g, long r, char *out, size_t len);
	/*
	 * The Service its pods' names live under when no pod has spec.subdomain
	 * (NULL: none known); may be name, the workload's.
	 */
	const char *(*service)(const cJSON *spec, const char *name);
	int events_by_prefix; /* 1: FailedCreate is on objects named after it (its Jobs) */
	int worlds_per_group; /* 1: each group is a world of its own, with its own rank 0 */
};

struct kind {
	/*
	 * A prefix of variables the kind's own webhook writes into its pods
	 * (LeaderWorkerSet's "TPU_"): a container's own value of such a variable is
	 * not judged against distenv's. NULL: none.
	 */
	const char *own_env_prefix;
	/* How the Kubernetes API names and serves the kind (GET and its answer's reader). */
	struct workload_api api;
	/* How its pods are recognised: their controller ownerReference, and a mark. */
	const char *owner_kind, *owner_group;
	const char *mark;      /* a label/annotation the kind's controller writes; NULL: none */
	const char *name_from; /* where the workload's name is: the mark's value, or the owner */
	/*
	 * 1 when the workload fixes the world (all a JobSet's pods, a LeaderWorkerSet
	 * group): distenv.dev/world-size may only repeat it. 0: the annotation wins
	 * over the count, which count_noun names ("replicas", "completions").
	 */
	int fixed_world;
	const char *count_noun;
	/*
	 * What brings every pod to a new world after an UPDATE changed its size: a
	 * format taking the workload's name ("kubectl rollout restart
	 * statefulset/%s"). NULL: the controller itself re-creates each world whole
	 * at its new size, and the warning says so.
	 */
	const char *restart;
	/*
	 * The end of the denial of a pod without spec.subdomain ("pod of KIND NS/NAME
	 * has no spec.subdomain<hint>"); NULL: the pod may name its Service with
	 * distenv.dev/service instead (an Indexed Job).
	 */
	const char *no_subdomain_hint;
	/*
	 * Why a pod that carries the kind's mark under another controller cannot be
	 * read ("pod P carries the marks of KIND NS/NAME but is controlled by
	 * OWNER<hint>"); NULL: such a pod is refused as any other controller's.
	 */
	const char *foreign_owner_hint;
	/* The pod's rank, world and start (topology_resolve's place step). */
	enum topology_status (*place)(struct resolve *rs);
	/* The labels its controllers add to every pod (ending with a NULL key); NULL: none. */
	const struct kind_label *pod_labels;
	/*
	 * The label its controller writes each pod's index in (a StatefulSet's
	 * apps.kubernetes.io/pod-index: its ordinal, rank + start), which a user
	 * may read into RANK with a fieldRef; NULL: none besides a Job's completion
	 * index, which /validate knows by itself.
	 */
	const char *index_label;
	/* Its pod templates (ending with a NULL path). */
	const struct kind_template *templates;
	/* Rank r's host name, as the kind's controllers name the pod: its length, or -1. */
	int (*hostname)(const struct topology *t, long r, char *out, size_t outlen);
	/*
	 * For host lists (a W=1,024 TF_CONFIG names every rank): the run of ranks
	 * from r whose names are "<prefix><number>", the number counting up by one
	 * from *first, as hostname names them. Writes the prefix into out (its
	 * length in *plen) and returns how many ranks the run has, none past the
	 * world's end; 0 when rank r's name is not of that form or the prefix does
	 * not fit (hostname then names it). NULL: none.
	 */
	long (*host_run)(const struct topology *t, long r, char *out, size_t outlen, size_t *plen,
	                 long *first);
	/* What doctor reads differently for it (struct kind_doctor). */
	const struct kind_doctor *doctor;
	/*
	 * The parts the kind cuts a world into (topology.h, struct topology_part),
	 * read from its state in t->kind_state: how many, and part k into *out.
	 * NULL: none.
	 */
	int (*n_parts)(const struct topology *t);
	void (*part)(const struct topology *t, int k, struct topology_part *out);
	/*
	 * The position of rank 0's pod in the order the controller lists the pods
	 * (topology_rank_at). NULL: 0, every rank is its position.
	 */
	long (*rank0_position)(const struct topology *t);
	/* Reads the workload's spec into the view /validate checks; reports what is its own. */
	void (*view)(const cJSON *spec, const struct config *cfg, struct view *w,
	             struct validation *v);
	/*
	 * The pods its controllers make from the manifest obj (named name, in ns),
	 * in rank order, each sent to s. Returns 0, or -1 with s->err.
	 */
	int (*make_pods)(const cJSON *obj, const char *name, const char *ns, struct pod_sink *s);
	/* 1: a manifest without an object at spec.template is refused before its checks */
	int needs_spec_template;
	/*
	 * What the kind's own defaulting webhook does to a manifest before the API
	 * server stores it (NULL: nothing distenv reads), so that render judges
	 * the object /validate and the controllers see. Changes obj in place;
	 * returns 0, or -1 when memory ran out.
	 */
	int (*defaults)(cJSON *obj);
	/*
	 * The chart's rules for /validate and RBAC: the API's plural resource name
	 * ("statefulsets"), and 1 for a custom resource, served only where its CRD
	 * is installed (its rule takes any version). A kind with api.resource is
	 * read with GET, so the ClusterRole grants get on it.
	 */
	const char *plural;
	int crd;
	/* A phrase for "distenv supports only pods of ...": "a JobSet (jobset.x-k8s.io)". */
	const char *supported;
	/*
	 * The prefixes of labels its controllers own ("jobset.sigs.k8s.io/"), NULL
	 * ending: a template's value for such a key is not the pod's.
	 */
	const char *const *label_prefixes;
};

/* ---- registry.c: the kinds the program registered (registry.h) ---- */

/* "StatefulSet", "Job", "JobSet", "LeaderWorkerSet" (the API's name of k), or "none" for NULL. */
const char *kind_name(const struct kind *k);

/*
 * The i-th kind in the order messages and the chart list them, or NULL past
 * the last: the built-in kinds first, then the custom resources, each by its
 * API group (StatefulSet, Job, JobSet, LeaderWorkerSet).
 */
const struct kind *kind_listed(size_t i);

/*
 * The kind the API calls name ("StatefulSet") in group ("apps"; NULL: any);
 * NULL when distenv has none.
 */
const struct kind *kind_named(const char *group, const char *name);

/* The kind the API serves as resource ("statefulsets") of group ("apps"), or NULL. */
const struct kind *kind_of_resource(const char *group, const char *resource);

/*
 * "distenv supports only pods of a StatefulSet (apps/v1), ... or of a
 * LeaderWorkerSet (...)": every kind's supported phrase, in kind_listed's order.
 */
void kind_supported(char *out, size_t outlen);

/*
 * 1 when key is a label some kind's controllers set on their pods themselves
 * (a key of its pod_labels, or under one of its label_prefixes).
 */
int kind_controller_label(const char *key);

/* ---- template.c: a workload's pod templates, for every kind ---- */

/*
 * Calls fn once for every pod template of obj, a workload of kind k, in the
 * order of k->templates (and of a list's items), with what names it for a
 * warning ("" for the workload's only template). what lives until fn returns.
 */
void kind_each_template(const struct kind *k, const cJSON *obj,
                        void (*fn)(void *ctx, const cJSON *tmpl, const char *what), void *ctx);

/* 1 when the pod template tmpl carries the opt-in label distenv.dev/inject: "true". */
int kind_template_opts_in(const cJSON *tmpl);

#endif
