/*
 * The admission core: AdmissionReview v1 bytes in, AdmissionReview response
 * bytes out. Pure: no sockets, files, clock or globals; the only outside call is
 * the workload look-up callback. The result owns its body; admission_result_free
 * releases it.
 */
#ifndef DISTENV_ADMISSION_H
#define DISTENV_ADMISSION_H

#include <stddef.h>
#include "config.h"
#include "workload.h"
#include "env.h"
#include "topology.h"
#include "plan.h"
#include "verdict.h"
#include <cjson/cJSON.h>

/*
 * Warnings in one answer. The API server keeps about 4,096 characters of
 * warnings per request, from every webhook and its own (apiserver's
 * WithWarningRecorder): 24 of under 120 leave a quarter of it to others. Past
 * it, the last warning says how many more there are.
 */
#define ADMISSION_MAX_WARNINGS 24

struct admission_result {
	int http_status; /* 200 or 400 */
	char *body;      /* malloc'd JSON; caller frees via admission_result_free */
	size_t body_len;
	enum admission_outcome outcome;
	char uid[128];
	char ns[64];
	char workload[256];      /* "StatefulSet/name", "Job/name" or "" */
	long rank;               /* -1 when not known */
	enum deny_reason reason; /* ADMISSION_DENIED: why (a bounded set, for metrics) */
	char message[1024];      /* denial or error text, or the warnings joined by "; " */
	char warnings[ADMISSION_MAX_WARNINGS][PLAN_WARNING_LEN]; /* the response's warnings */
	int n_warnings;
};

/*
 * Handles one AdmissionReview v1 request body. lookup may be NULL (no look-ups).
 * Always fills res (http_status, body); returns 0, or -1 only when memory ran out
 * (then res->body may be NULL and the caller answers 500). Everything it
 * parses and builds lives in this thread's arena (arena.h) and dies with the
 * call; res->body is malloc'd outside it.
 */
int admission_handle(const char *body, size_t len, const struct config *cfg,
                     const struct workload_lookup *lookup, struct admission_result *res);

/*
 * Handles one AdmissionReview v1 request body for /validate: a StatefulSet,
 * Job, JobSet or LeaderWorkerSet whose pod template opts in is checked
 * (validate.h); what can never work is denied, the rest allowed with warnings.
 * Same returns as admission_handle.
 */
int admission_validate(const char *body, size_t len, const struct config *cfg,
                       const struct workload_lookup *lookup, struct admission_result *res);

void admission_result_free(struct admission_result *res);

#endif
