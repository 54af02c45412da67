/*
 * What the core needs to know about the owning workload, and the callback the
 * shell provides to fetch it from the Kubernetes API. Plain data, no ownership.
 */
#ifndef DISTENV_WORKLOAD_H
#define DISTENV_WORKLOAD_H

#include <stddef.h>

enum workload_kind { WORKLOAD_NONE = 0, WORKLOAD_STATEFULSET, WORKLOAD_JOB };

/* Fields are -1 when the object does not set them. */
struct workload_spec {
	long replicas;       /* StatefulSet .spec.replicas (API default 1) */
	long ordinals_start; /* StatefulSet .spec.ordinals.start */
	long completions;    /* Job .spec.completions */
	long parallelism;    /* Job .spec.parallelism */
	int indexed;         /* Job .spec.completionMode == Indexed */
	char uid[64];        /* .metadata.uid; "" when the answer has none */
	int cached;          /* 1: the answer came from a cache, not a fresh read */
};

/* The object a pod names as its controller: kind, namespace, name and uid. */
struct workload_ref {
	enum workload_kind kind;
	const char *ns;
	const char *name;
	const char *uid; /* the ownerReference's uid; NULL or "" when the pod has none */
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
};

/* "StatefulSet", "Job" or "none". */
const char *workload_kind_name(enum workload_kind kind);

#endif
