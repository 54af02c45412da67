/*
 * Process-wide Prometheus metrics: lock-free counters and latency histograms,
 * plus the standard process_* series read from /proc, rendered in the text
 * exposition format. The rendered text is malloc'd; the caller frees it.
 * Every label has a fixed set of values (charts/distenv/metrics.txt lists the
 * names), so no input can grow the number of series.
 */
#ifndef DISTENV_METRICS_H
#define DISTENV_METRICS_H

#include <stddef.h>
#include <time.h>
#include "verdict.h"

/* The webhook label of the admission series. */
enum metrics_webhook { METRICS_MUTATE = 0, METRICS_VALIDATE, METRICS_WEBHOOK_COUNT };

/* The path label of distenv_http_requests_total: the routes, and "other" for the rest. */
enum metrics_path {
	METRICS_PATH_MUTATE = 0,
	METRICS_PATH_VALIDATE,
	METRICS_PATH_HEALTHZ,
	METRICS_PATH_READYZ,
	METRICS_PATH_METRICS,
	METRICS_PATH_OTHER,
	METRICS_PATH_COUNT
};

/* One answered AdmissionReview; reason counts only when outcome is ADMISSION_DENIED. */
void metrics_admission(enum metrics_webhook w, enum admission_outcome outcome,
                       enum deny_reason reason, double seconds);

/* One HTTP request, by path and status; status 0: the connection closed without an answer. */
void metrics_http_request(enum metrics_path path, int status);

/* Open connections on the webhook port (TCP accepted, not yet closed). */
void metrics_connections(int delta);

/*
 * One TLS handshake whose client Finished came in: the socket reads it took
 * and the times it waited for the client's next flight (each one wake-up).
 */
void metrics_tls_handshake(unsigned reads, unsigned waits);

/* Bytes of request bodies held in memory now (the capacity of their buffers). */
void metrics_buffered_bytes(long long delta);

/* Admission requests being handled (the scrape itself is not one). */
void metrics_inflight(int delta);

/*
 * One workload look-up: ok or not, answered from the cache or not, and for an
 * API round trip (cached 0) how long it took, observed in the look-up histogram.
 */
void metrics_lookup(int ok, int cached, double seconds);

/* Why a request or connection was turned away to protect the server. */
enum metrics_overload {
	METRICS_OVERLOAD_QUEUE_FULL = 0, /* the look-up workers' queue is full */
	METRICS_OVERLOAD_BODY_BUDGET,    /* request bodies held would pass maxBufferedBodyBytes */
	METRICS_OVERLOAD_CONNECTIONS,    /* a connection refused: maxConnections, none to evict */
	METRICS_OVERLOAD_PER_IP,         /* a connection refused: maxConnectionsPerIP */
	METRICS_OVERLOAD_EVICTED,        /* an idle connection closed to make room at the limit */
	METRICS_OVERLOAD_COUNT
};

/* One request or connection turned away for reason r. */
void metrics_overload(enum metrics_overload r);

/* Why a connection was closed for passing a deadline (the phase it was in). */
enum metrics_timeout {
	METRICS_TIMEOUT_HEAD = 0,  /* handshake and request head */
	METRICS_TIMEOUT_BODY,      /* request body */
	METRICS_TIMEOUT_IDLE,      /* kept alive without a next request */
	METRICS_TIMEOUT_HANDSHAKE, /* the TLS handshake: server.handshakeTimeoutSeconds */
	METRICS_TIMEOUT_COUNT
};

/* One connection closed for passing its deadline in phase p. */
void metrics_conn_timeout(enum metrics_timeout p);

void metrics_cert_expiry(time_t not_after);
void metrics_cert_reload(int ok);

/*
 * The cluster domain in use and where it came from ("config", "resolv.conf"
 * or "default"), served as distenv_cluster_domain_info. Both are copied; call
 * it before the server's threads start (nothing guards it against a scrape).
 */
void metrics_cluster_domain(const char *domain, const char *source);

/* Returns malloc'd text and its length in *len, or NULL when memory ran out. */
char *metrics_render(size_t *len);

#endif
