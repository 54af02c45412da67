/*
 * The vocabulary of an answer: how an admission ended and why a pod or a
 * workload was denied. Small fixed sets, so that each can be a metrics label
 * and a log field; a leaf that the core, metrics and the shells share (the
 * logger and metrics need these names, not the admission core). Names are
 * static strings.
 */
#ifndef DISTENV_VERDICT_H
#define DISTENV_VERDICT_H

enum admission_outcome {
	ADMISSION_SKIPPED = 0, /* not for us: allowed, no patch */
	ADMISSION_PATCHED,     /* allowed with a patch */
	ADMISSION_UNCHANGED,   /* opted in, nothing left to add (reinvocation) */
	ADMISSION_DENIED,      /* allowed: false */
	ADMISSION_BAD_REQUEST, /* HTTP 400 */
	ADMISSION_OUTCOME_COUNT
};

/* What begins every message distenv writes for a user: a denial, a warning. */
#define VERDICT_PREFIX "distenv: "

/* msg after VERDICT_PREFIX, or msg itself when it does not begin with it. */
const char *verdict_unprefixed(const char *msg);

/* "skipped", "patched", "unchanged", "denied", "bad_request"; "unknown" past the set. */
const char *verdict_outcome_name(enum admission_outcome o);

/*
 * Why a pod or a workload is denied: a small fixed set, so that it can be a
 * metrics label (distenv_admission_denials_total{reason}) and a log field.
 */
enum deny_reason {
	DENY_NONE = 0,
	DENY_OWNER,      /* not a pod of a supported controller, kind or API group */
	DENY_ANNOTATION, /* a distenv.dev/ value that cannot be read */
	DENY_IDENTITY,   /* the pod's index, ordinal, group or labels cannot be told */
	DENY_LOOKUP,     /* the workload could not be read from the API, or is another object */
	DENY_WORLD,      /* world size not known, rank outside it, elastic MIN above it */
	DENY_SERVICE,    /* no headless Service to name the hosts */
	DENY_WORKLOAD,   /* the workload cannot work: not Indexed, parallelism below completions */
	DENY_ENV,        /* a container's own MASTER_ADDR/MASTER_PORT cannot be reconciled */
	DENY_LIMIT,      /* a size limit: exec, storage, containers, env entries, name lengths */
	DENY_OTHER,      /* not a pod spec, no namespace */
	DENY_REASON_COUNT
};

/* "owner", "annotation", ... ; "none" for DENY_NONE. */
const char *verdict_reason_name(enum deny_reason r);

#endif
