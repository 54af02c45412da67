/*
 * A workload as the core sees it, whatever its kind: the plain data a
 * look-up answers (struct workload_spec, struct service_info), the
 * callback the shell provides to fetch an object, and how the API names and
 * serves a kind (struct workload_api, a part of each kind's row: the rows are
 * in src/kinds/, handed to the core through core/registry.h). Plain data and
 * pure functions; nothing is allocated that outlives a call.
 */
#ifndef DISTENV_WORKLOAD_H
#define DISTENV_WORKLOAD_H

#include <stddef.h>
#include <cjson/cJSON.h>

struct kind;

/* The replicated Jobs a JobSet may have and distenv reads (JobSets rarely have more than 5). */
#define WORKLOAD_MAX_RJOBS 16

/* One replicated Job of a JobSet: replicas Jobs, each of pods Indexed pods. */
struct workload_rjob {
	char name[64];
	long replicas;
	long completions; /* -1 when unset */
	long parallelism; /* API default 1 */
	int indexed;
};

/* Fields are -1 when the object does not set them. */
struct workload_spec {
	long replicas;       /* StatefulSet .spec.replicas (API default 1) */
	long ordinals_start; /* StatefulSet .spec.ordinals.start */
	long completions;    /* Job .spec.completions */
	long parallelism;    /* Job .spec.parallelism */
	int indexed;         /* Job .spec.completionMode == Indexed */
	/* Job: Kueue's kueue.x-k8s.io/job-min-parallelism is set (partial admission) */
	int partial_admission;
	char uid[64]; /* .metadata.uid; "" when the answer has none */
	int cached;   /* 1: the answer came from a cache, not a fresh read */
	/* JobSet */
	int n_rjobs;
	struct workload_rjob rjobs[WORKLOAD_MAX_RJOBS];
	char coordinator[64]; /* spec.coordinator.replicatedJob; "" when none */
	long coordinator_job, coordinator_pod;
	char subdomain[64]; /* spec.network.subdomain; "" when unset */
};

/* spec with every field "not set". */
void workload_spec_init(struct workload_spec *spec);

/* What /validate checks of a headless Service. */
#define SERVICE_MAX_SELECTOR 16
struct service_info {
	int headless;          /* spec.clusterIP is "None" */
	int publish_not_ready; /* spec.publishNotReadyAddresses */
	int n_selector;        /* -1: more labels than distenv keeps */
	char selector[SERVICE_MAX_SELECTOR][2][128];
};

/* Reads the API server's answer for a Service. Returns 0 or -1 with err. Pure. */
int workload_parse_service(const char *json, size_t len, struct service_info *out, char *err,
                           size_t errlen);

/* The object a pod names as its controller: kind, namespace, name and uid. */
struct workload_ref {
	const struct kind *kind; /* a registered row */
	const char *ns;
	const char *name;
	const char *uid; /* the owner's uid; NULL or "" when the pod does not say */
};

/*
 * Fetches the spec of ref's object. fresh = 1 asks for a read that bypasses any
 * cache (the core asks for one before it denies on a cached answer). An answer
 * for another object of the same name (ref->uid set and different) must not be
 * served from a cache. Returns 0 and fills out, or -1 with a one-line reason in
 * err (not found, forbidden, timeout, ...). Must be safe to call from several
 * threads at once.
 */
struct workload_lookup {
	int (*get)(void *ctx, const struct workload_ref *ref, int fresh, struct workload_spec *out,
	           char *err, size_t errlen);
	void *ctx;
	/*
	 * Optional (NULL: not looked up): the Service ns/name for the checks of
	 * /validate. Returns 1 and fills out, 0 when there is no such Service, or
	 * -1 with err when the API could not say.
	 */
	int (*get_service)(void *ctx, const char *ns, const char *name, struct service_info *out,
	                   char *err, size_t errlen);
	/*
	 * Optional (NULL: not listed): the NetworkPolicies of namespace ns for the
	 * checks of /validate. Returns 0 and *out, a NetworkPolicyList the caller
	 * frees with cJSON_Delete, or -1 with err when the API could not say.
	 */
	int (*list_netpols)(void *ctx, const char *ns, cJSON **out, char *err, size_t errlen);
	/*
	 * Optional (NULL: not read): the whole object kind ns/name, for the checks
	 * of a scale, whose Scale object has no pod template. Returns 1 and *out,
	 * which the caller frees with cJSON_Delete, 0 when there is no such object,
	 * or -1 with err when the API could not say. Never cached.
	 */
	int (*get_object)(void *ctx, const struct kind *kind, const char *ns, const char *name,
	                  cJSON **out, char *err, size_t errlen);
};

/* How the Kubernetes API names and serves one kind. */
struct workload_api {
	const char *kind;        /* "StatefulSet" */
	const char *group;       /* "apps"; "" for the core group */
	const char *api_version; /* "apps/v1" */
	const char *resource;    /* "statefulsets"; NULL when distenv never GETs the kind */
	/* Reads the API server's JSON answer. Returns 0 or -1 with err. */
	int (*parse)(const char *json, size_t len, struct workload_spec *out, char *err,
	             size_t errlen);
};

/*
 * The API path of ref's object ("/apis/apps/v1/namespaces/NS/statefulsets/NAME")
 * after checking ns is a DNS label and name a DNS subdomain. Returns 0, or -1
 * with err (also for a kind distenv never GETs).
 */
int workload_api_path(const struct kind *kind, const char *ns, const char *name, char *out,
                      size_t outlen, char *err, size_t errlen);

/* Reads the API server's answer for kind. Returns 0 or -1 with err. Pure. */
int workload_parse(const struct kind *kind, const char *json, size_t len, struct workload_spec *out,
                   char *err, size_t errlen);

#endif
