/*
 * Structured logs: one JSON object per line on stderr. Thread-safe; no allocation
 * owned by callers. Secrets are never passed here.
 */
#ifndef DISTENV_LOG_H
#define DISTENV_LOG_H

#include "admission.h"
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
 * One line per answered AdmissionReview, event "admission": msg is the denial,
 * the error or the warnings when there are any, else "pod <outcome>"; the
 * workload and rank as far as they were known (rank null when not); a denial
 * also carries its reason. Denials and bad requests are logged at warn.
 */
void log_admission(const struct admission_result *res, long long micros);
#endif
