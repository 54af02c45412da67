/*
 * The HTTPS shell around the admission core (libmicrohttpd over GnuTLS):
 * routes, body limit, TLS 1.2/1.3 only, certificate hot reload, health,
 * metrics, and a graceful drain on SIGTERM/SIGINT. Its three files (server.c,
 * server_conn.c, server_http.c) share src/http/server_int.h, their map.
 */
#ifndef DISTENV_SERVER_H
#define DISTENV_SERVER_H

#include <stddef.h>
#include "config.h"
#include "workload.h"

/*
 * Serves until SIGTERM or SIGINT, then stops accepting, finishes in-flight
 * requests (up to cfg->drain_timeout_s) and returns 0. Returns -1 with err when
 * it cannot start (bad listen address, unreadable certificate, port in use).
 * lookup may be NULL.
 */
int server_run(const struct config *cfg, const struct workload_lookup *lookup, char *err,
               size_t errlen) __attribute__((warn_unused_result));

#endif
