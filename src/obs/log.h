/*
 * Structured logs: one JSON object per line on stderr. Thread-safe; no allocation
 * owned by callers. Secrets are never passed here.
 */
#ifndef DISTENV_LOG_H
#define DISTENV_LOG_H

#include "config.h"

void log_set_level(enum log_level lvl);
int log_enabled(enum log_level lvl);

/* Ends the variadic lists below: a typed null pointer, as variadic calls need. */
#define LOG_END ((const char *)0)

/*
 * Writes {"ts":"...","level":"...","msg":MSG,"event":EVENT, KEY: VALUE ...}
 * where MSG is EVENT in words ("certificate_reloaded": "certificate
 * reloaded"), and the variadic arguments are pairs of const char * (key,
 * value), ended by LOG_END. A value NULL is skipped. Values are JSON-escaped
 * strings.
 */
void log_kv(enum log_level lvl, const char *event, ...) __attribute__((sentinel));

/* Like log_kv but numeric values: pairs of (const char *key, long long value), ended by LOG_END. */
void log_kvn(enum log_level lvl, const char *event, ...) __attribute__((sentinel));

/*
 * One answered AdmissionReview as the log line reports it: plain strings and
 * numbers (log_admission knows no admission; admission_log_fields fills it).
 * The strings are the caller's and are copied.
 */
struct log_admission {
	const char *uid, *ns, *workload; /* "" when not known */
	long rank;                       /* -1 when not known */
	const char *outcome;             /* "patched", "denied", ... */
	const char *reason;              /* a denial's reason, or NULL */
	const char *message;             /* the denial, the error or the warnings; "" when none */
	enum log_level level;            /* LOG_WARN for denials and bad requests */
};

/*
 * One line per answered AdmissionReview, event "admission": msg is the
 * message when there is one, else "pod <outcome>"; the workload and rank as
 * far as they were known (rank null when not); the reason when there is one.
 */
void log_admission(const struct log_admission *a, long long micros);

struct admission_result;
/* The log line's fields of res, written into *out (its strings point into res) and returned. */
struct log_admission *admission_log_fields(const struct admission_result *res,
                                           struct log_admission *out);
#endif
