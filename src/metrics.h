/*
 * Process-wide Prometheus metrics: lock-free counters and a latency histogram,
 * rendered in the text exposition format. The rendered text is malloc'd; the
 * caller frees it.
 */
#ifndef DISTENV_METRICS_H
#define DISTENV_METRICS_H

#include <stddef.h>
#include <time.h>
#include "admission.h"

void metrics_admission(enum admission_outcome outcome, double seconds);
void metrics_http_error(int status); /* 404, 405, 413, 500 */
void metrics_inflight(int delta);
void metrics_lookup(int ok, int cached); /* outcome of one look-up */
void metrics_cert_expiry(time_t not_after);
void metrics_cert_reload(int ok);

/* Returns malloc'd text and its length in *len, or NULL when memory ran out. */
char *metrics_render(size_t *len);

#endif
