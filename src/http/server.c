/*
 * The daemon's life: checks the configuration, loads the first certificate,
 * blocks the signals, starts the worker pool, the webhook's daemon, the probe
 * listener, the certificate watcher and the acceptor, serves until SIGTERM or
 * SIGINT, drains, and stops them in the reverse order. server_run owns the
 * struct server and everything it starts, and frees it all before returning;
 * connections are src/http/server_conn.c's, requests src/http/server_http.c's.
 */
#include "server_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kube.h"
#include "log.h"
#include "tlscert.h"
#include "mono.h"
#include "workpool.h"

/*
 * Mozilla's intermediate profile in GnuTLS terms: TLS 1.2 and 1.3, forward
 * secret (ECDHE) key exchange and AEAD ciphers only, so no RSA key exchange
 * and no CBC/SHA-1 suites. `gnutls-cli -l --priority '...'` lists what it
 * allows (the fault case tls_policy checks that list and the server's).
 */
#define TLS_PRIORITIES                                                                             \
	"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:"        \
	"+CHACHA20-POLY1305:-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA"
#define TLS_VERSIONS  "TLS1.2,TLS1.3"
#define DRAIN_POLL_NS 50000000L /* 50 ms between in-flight checks while draining */
/*
 * Look-ups end this long before the drain's deadline (at most half the drain),
 * so that their denials are sent before the deadline closes the connections:
 * ended at the deadline itself, some answers were cut. A transfer in flight
 * sees the cap at libcurl's next progress call, up to a second later.
 */
#define DRAIN_ANSWER_MARGIN_MS 1500
/*
 * libmicrohttpd's per-connection memory (request head, read buffer, answer
 * head): 16 KiB instead of its 32 KiB. 0.9.75 zeroes the whole of it after
 * every request (MHD_pool_reset), 3.5 % of the server's CPU at 32 KiB on the
 * 4 KB pod, and it is resident for every open connection. The API server's
 * request heads are well under 1 KiB; bodies are read through it in chunks.
 */
#define CONN_MEMORY_BYTES        (16 * 1024)
#define CONN_LIBRARY_FACTOR      2
#define PROBE_PER_IP_CONNECTIONS 8
#define PROBE_TIMEOUT_S          5

/*
 * libmicrohttpd's messages: errors until start-up is done (the last one kept
 * for server_run's error), debug afterwards.
 */
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct server *s = cls;
	char buf[512];
	size_t n;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	if (!atomic_load(&s->started)) {
		snprintf(s->start_error, sizeof(s->start_error), "%s", buf);
		log_kv(LOG_ERROR, "http_library", "message", buf, LOG_END);
	} else {
		/* Handshake failures from scanners and old clients are routine. */
		log_kv(LOG_DEBUG, "http_library", "message", buf, LOG_END);
	}
}

/*
 * The webhook's daemon: a pool of network threads with no listening socket of
 * its own (the acceptor hands it connections).
 */
static struct MHD_Daemon *daemon_start(struct server *s)
{
	/* Suspend and resume: admissions waiting on look-ups, handshakes waiting on a flight. */
	unsigned flags = MHD_USE_TLS | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
	                 MHD_USE_ITC | MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET |
	                 MHD_ALLOW_SUSPEND_RESUME;
	unsigned threads = (unsigned)(s->cfg->threads > 0 ? s->cfg->threads : 1);

	return MHD_start_daemon(
	    flags, 0, conn_accept_policy, s, http_on_request, s, MHD_OPTION_EXTERNAL_LOGGER,
	    on_mhd_log, s, MHD_OPTION_HTTPS_PRIORITIES, TLS_PRIORITIES,
	    MHD_OPTION_HTTPS_CERT_CALLBACK, conn_cert_callback, MHD_OPTION_NOTIFY_CONNECTION,
	    conn_on_notify, s, MHD_OPTION_NOTIFY_COMPLETED, http_on_completed, s,
	    MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned)s->cfg->idle_timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
	    (size_t)CONN_MEMORY_BYTES, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned)((s->max_connections + (long)threads * CONN_HEADROOM_PER_THREAD) *
	               (long)threads * CONN_LIBRARY_FACTOR),
	    MHD_OPTION_END);
}

/*
 * The probe listener (server.probeListen): plain HTTP on its own port, one
 * thread, a few connections, so that the kubelet's probes are answered even
 * when the webhook port is full (as controller-runtime serves them).
 */
static struct MHD_Daemon *probe_start(struct server *s, const struct bind_addr *la, int dual)
{
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
	const struct sockaddr *sa = NULL;

	if (la->any_dual) {
		if (dual)
			flags |= MHD_USE_DUAL_STACK;
	} else {
		sa = (const struct sockaddr *)&la->ss;
		if (la->v6)
			flags |= MHD_USE_IPv6;
	}
	return MHD_start_daemon(
	    flags, la->port, NULL, NULL, http_probe_request, s, MHD_OPTION_EXTERNAL_LOGGER,
	    on_mhd_log, s, MHD_OPTION_CONNECTION_LIMIT, (unsigned)PROBE_MAX_CONNECTIONS,
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)PROBE_PER_IP_CONNECTIONS,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)PROBE_TIMEOUT_S,
	    sa != NULL ? MHD_OPTION_SOCK_ADDR : MHD_OPTION_END, sa, MHD_OPTION_END);
}

/*
 * The drain period: connections already open keep being served, each answer
 * with Connection: close, so every kept-alive client sends at most one more
 * request on its connection and then reconnects (to another replica). Ends
 * when no connection is left, at the deadline (the rest are closed then), or
 * on a second signal. Closing idle keep-alive connections at once would lose
 * the requests their clients send at that instant: kube-apiserver does not
 * retry a POST.
 */
static void drain(struct server *s, const sigset_t *sigs)
{
	struct timespec start, step = {0, DRAIN_POLL_NS};
	long timeout = s->cfg->drain_timeout_s;
	long long reaped = mono_ms();
	int sig;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		/* Slow connections still meet their deadlines, so they end the drain early too. */
		if (mono_ms() - reaped >= REAP_INTERVAL_MS) {
			conn_reap(s);
			reaped = mono_ms();
		}
		if (atomic_load(&s->inflight) <= 0 && atomic_load(&s->open_conns) <= 0)
			return;
		/* Sub-second: comparing whole seconds ended the drain up to 1 s early. */
		if (mono_elapsed_s(&start) >= (double)timeout) {
			log_kvn(LOG_WARN, "drain_timeout", "inflight",
			        (long long)atomic_load(&s->inflight), "connections",
			        (long long)atomic_load(&s->open_conns), "timeout_s",
			        (long long)timeout, LOG_END);
			return;
		}
		sig = sigtimedwait(sigs, NULL, &step);
		if (sig == SIGHUP) {
			tlscert_store_poke(s->certs);
			continue;
		}
		if (sig > 0) {
			log_kv(LOG_WARN, "drain_interrupted", "signal", strsignal(sig), LOG_END);
			return;
		}
	}
}

/* Checks what the configuration promises before anything starts. Returns 0 or -1 with err. */
static int limits_check(struct server *s, char *err, size_t errlen)
{
	const struct config *cfg = s->cfg;

	if (cfg->max_body_bytes <= 0) {
		snprintf(err, errlen, "max body bytes must be positive");
		return -1;
	}
	if (cfg->max_buffered_bytes <= cfg->max_body_bytes) {
		snprintf(
		    err, errlen,
		    "limits.maxBufferedBodyBytes (%ld) must be larger than limits.maxBodyBytes "
		    "(%ld), or no request of the largest size could ever be read",
		    cfg->max_buffered_bytes, cfg->max_body_bytes);
		return -1;
	}
	if (!MHD_is_feature_supported(MHD_FEATURE_TLS) ||
	    !MHD_is_feature_supported(MHD_FEATURE_HTTPS_CERT_CALLBACK)) {
		snprintf(err, errlen, "libmicrohttpd was built without TLS certificate callbacks");
		return -1;
	}
	s->max_connections =
	    fd_fit_connections(cfg->max_connections, cfg->threads > 0 ? cfg->threads : 1,
	                       cfg->probe_listen[0] != '\0', err, errlen);
	return s->max_connections < 0 ? -1 : 0;
}

/*
 * Opens the certificate store and takes the first pair, which must be good:
 * there is nothing to fall back to. Returns the holder (the caller releases
 * it) with its expiry in when, or NULL with err; s->certs may be set either way.
 */
static struct tlscert *cert_first(struct server *s, char *when, size_t whenlen, char *err,
                                  size_t errlen)
{
	const struct config *cfg = s->cfg;
	struct tlscert *h;

	s->certs =
	    tlscert_store_new(cfg->tls_cert, cfg->tls_key, cfg->cert_check_interval_s, err, errlen);
	if (s->certs == NULL || (h = tlscert_store_acquire(s->certs)) == NULL)
		return NULL;
	tlscert_format_time(h->not_after, when, whenlen);
	if (h->not_after < time(NULL))
		log_kv(LOG_WARN, "certificate_expired", "cert", cfg->tls_cert, "not_after", when,
		       LOG_END);
	return h;
}

/*
 * Blocks the signals this thread waits for before any thread starts, so
 * every thread inherits the mask: SIGTERM and SIGINT stop, SIGHUP asks for a
 * certificate check. Returns 0, or -1 with err.
 */
static int signals_block(sigset_t *sigs, sigset_t *oldmask, char *err, size_t errlen)
{
	sigemptyset(sigs);
	sigaddset(sigs, SIGTERM);
	sigaddset(sigs, SIGINT);
	sigaddset(sigs, SIGHUP);
	if (pthread_sigmask(SIG_BLOCK, sigs, oldmask) != 0) {
		snprintf(err, errlen, "cannot block SIGTERM/SIGINT/SIGHUP");
		return -1;
	}
	return 0;
}

/* Starts the admission workers when look-ups are on. Returns 0, or -1 with err. */
static int pool_start(struct server *s, char *err, size_t errlen)
{
	const struct config *cfg = s->cfg;

	if (s->lookup != NULL &&
	    (s->pool =
	         workpool_start((int)(cfg->threads > 0 ? cfg->threads : 1) * WORKERS_PER_THREAD,
	                        cfg->max_queued, http_run_queued, s, NULL, 0)) == NULL) {
		snprintf(err, errlen, "cannot start the admission worker threads");
		return -1;
	}
	return 0;
}

/*
 * Opens the webhook's listening socket (all IPv4 addresses when IPv6 is not
 * there for ":PORT") and starts its daemon. Returns 0, or -1 with err.
 */
static int webhook_start(struct server *s, const struct bind_addr *la, char *err, size_t errlen)
{
	const struct config *cfg = s->cfg;
	char lerr[128];

	s->listen_fd = listen_open(la, 1, lerr, sizeof(lerr));
	if (s->listen_fd < 0 && la->any_dual) {
		/* No IPv6 on this host: all IPv4 addresses instead. */
		log_kv(LOG_WARN, "listen_fallback", "reason", "IPv6 unavailable, IPv4 only",
		       LOG_END);
		s->listen_fd = listen_open(la, 0, lerr, sizeof(lerr));
	}
	if (s->listen_fd < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s", cfg->listen, lerr);
		return -1;
	}
	s->daemon = daemon_start(s);
	if (s->daemon == NULL) {
		snprintf(err, errlen, "cannot serve on %s: %s", cfg->listen,
		         s->start_error[0] ? s->start_error : "libmicrohttpd failed to start");
		return -1;
	}
	return 0;
}

/* Starts the probe listener when server.probeListen is set. Returns 0, or -1 with err. */
static int probes_start(struct server *s, char *err, size_t errlen)
{
	const struct config *cfg = s->cfg;
	struct bind_addr pa;

	if (cfg->probe_listen[0] == '\0')
		return 0;
	if (listen_resolve(cfg->probe_listen, &pa, err, errlen) != 0)
		return -1;
	s->probe = probe_start(s, &pa, 1);
	if (s->probe == NULL && pa.any_dual)
		s->probe = probe_start(s, &pa, 0);
	if (s->probe == NULL) {
		snprintf(err, errlen, "cannot listen for probes on %s: %s", cfg->probe_listen,
		         s->start_error[0] ? s->start_error : "libmicrohttpd failed to start");
		return -1;
	}
	log_kv(LOG_INFO, "probes_listening", "listen", cfg->probe_listen, "paths",
	       "/healthz,/readyz", LOG_END);
	return 0;
}

/*
 * Marks start-up done (libmicrohttpd's messages are routine from now on) and
 * starts the certificate watcher and the acceptor. Returns 0, or -1 with err.
 */
static int threads_start(struct server *s, char *err, size_t errlen)
{
	atomic_store(&s->started, 1);
	if (tls_wait_start(s) != 0) {
		snprintf(err, errlen, "cannot start the TLS handshake wait thread");
		return -1;
	}
	if (tlscert_store_watch(s->certs) != 0) {
		snprintf(err, errlen, "cannot start the certificate watcher thread");
		return -1;
	}
	if (acceptor_start(s) != 0) {
		snprintf(err, errlen, "cannot start the acceptor thread");
		return -1;
	}
	return 0;
}

/* Logs the address, port and certificate served, and the limits in force. */
static void log_listening(const struct server *s, const struct bind_addr *la,
                          const struct tlscert *h, const char *when)
{
	const struct config *cfg = s->cfg;
	struct sockaddr_storage bound;
	socklen_t bound_len = sizeof(bound);
	long port = la->port;

	if (getsockname(s->listen_fd, (struct sockaddr *)&bound, &bound_len) == 0)
		port = ntohs(bound.ss_family == AF_INET6
		                 ? ((struct sockaddr_in6 *)(void *)&bound)->sin6_port
		                 : ((struct sockaddr_in *)(void *)&bound)->sin_port);
	log_kv(LOG_INFO, "listening", "listen", cfg->listen, "tls", TLS_VERSIONS, "cert",
	       cfg->tls_cert, "sha256", h->fingerprint, "not_after", when, LOG_END);
	log_kvn(LOG_INFO, "server_config", "port", (long long)port, "threads",
	        (long long)cfg->threads, "max_connections", (long long)s->max_connections,
	        "idle_timeout_s", (long long)cfg->idle_timeout_s, "header_timeout_s",
	        (long long)cfg->header_timeout_s, "handshake_timeout_s",
	        (long long)cfg->handshake_timeout_s, "request_timeout_s",
	        (long long)cfg->request_timeout_s, "max_connections_per_ip",
	        (long long)cfg->max_conns_per_ip, "max_body_bytes", (long long)cfg->max_body_bytes,
	        "cert_check_interval_s", (long long)cfg->cert_check_interval_s, LOG_END);
}

/*
 * Serves until SIGTERM or SIGINT, which it returns: reaps connections past
 * their deadlines every REAP_INTERVAL_MS and hands SIGHUP to the certificate
 * watcher.
 */
static int serve(struct server *s, const sigset_t *sigs)
{
	int sig;

	for (;;) {
		struct timespec tick = {REAP_INTERVAL_MS / 1000,
		                        (REAP_INTERVAL_MS % 1000) * 1000000L};
		sig = sigtimedwait(sigs, NULL, &tick);
		if (sig < 0) {
			conn_reap(s); /* EAGAIN: the tick passed (or EINTR) */
			continue;
		}
		if (sig != SIGHUP)
			return sig;
		tlscert_store_poke(s->certs);
	}
}

/*
 * The stop that signal sig asked for: no new connections, look-ups bounded
 * by the drain deadline, then the drain.
 */
static void shut_down(struct server *s, const sigset_t *sigs, int sig)
{
	struct timespec t0;
	long long drain_ms = s->cfg->drain_timeout_s * 1000LL, margin = drain_ms / 2;

	if (margin > DRAIN_ANSWER_MARGIN_MS)
		margin = DRAIN_ANSWER_MARGIN_MS;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	atomic_store(&s->draining, 1);
	/* Look-ups, those in flight and those queued, end (denied) before the drain does. */
	kube_set_global_deadline((long long)t0.tv_sec * 1000 + t0.tv_nsec / 1000000 + drain_ms -
	                         margin);
	log_kv(LOG_INFO, "drain_start", "signal", strsignal(sig), LOG_END);
	acceptor_stop(s); /* no new connections, now rather than after the drain */
	drain(s, sigs);
	log_kvn(LOG_INFO, "drain_end", "inflight", (long long)atomic_load(&s->inflight),
	        "connections", (long long)atomic_load(&s->open_conns), "millis",
	        (long long)(mono_elapsed_s(&t0) * 1000), LOG_END);
}

int server_run(const struct config *cfg, const struct workload_lookup *lookup, char *err,
               size_t errlen)
{
	struct server s;
	struct bind_addr la;
	struct tlscert *h = NULL;
	sigset_t sigs, oldmask;
	char when[64];
	int rc = -1, mask_set = 0;

	memset(&s, 0, sizeof(s));
	s.cfg = cfg;
	s.lookup = lookup;
	s.listen_fd = -1;
	s.stop_fd = -1;
	s.accepting_fd = -1;
	s.wait_ep = s.wait_stop = -1;
	pthread_mutex_init(&s.conns_lock, NULL);
	pthread_mutex_init(&s.wait_lock, NULL);

	if (listen_resolve(cfg->listen, &la, err, errlen) != 0 ||
	    limits_check(&s, err, errlen) != 0)
		goto out_locks;
	if ((h = cert_first(&s, when, sizeof(when), err, errlen)) == NULL ||
	    signals_block(&sigs, &oldmask, err, errlen) != 0)
		goto out_cert;
	mask_set = 1;
	if (pool_start(&s, err, errlen) != 0)
		goto out_pool;
	conn_cert_owner(&s);
	if (webhook_start(&s, &la, err, errlen) != 0)
		goto out_pool;
	if (probes_start(&s, err, errlen) != 0 || threads_start(&s, err, errlen) != 0)
		goto out_daemon;
	log_listening(&s, &la, h, when);
	shut_down(&s, &sigs, serve(&s, &sigs));
	rc = 0;

out_daemon:
	acceptor_stop(&s);
	tls_wait_stop(&s); /* no connection is left suspended in its handshake */
	tlscert_store_unwatch(s.certs);
	/*
	 * Runs every queued admission, resuming its connection, before the daemon
	 * stops; admissions arriving meanwhile run on the network threads. The
	 * pool is freed only once no network thread can reach it.
	 */
	workpool_stop(s.pool);
	MHD_stop_daemon(s.daemon);
	if (s.probe != NULL)
		MHD_stop_daemon(s.probe);
out_pool:
	acceptor_stop(&s); /* the listening socket, when the daemon did not start */
	workpool_free(s.pool);
out_cert:
	conn_cert_owner(NULL);
	/*
	 * After a clean stop the signals stay blocked: a second SIGTERM that arrived
	 * meanwhile must not kill the process on its way to exit 0.
	 */
	if (mask_set && rc != 0)
		pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
	tlscert_release(h);
	tlscert_store_free(s.certs);
	if (rc == 0)
		log_kv(LOG_INFO, "stopped", LOG_END);
out_locks:
	pthread_mutex_destroy(&s.wait_lock);
	pthread_mutex_destroy(&s.conns_lock);
	return rc;
}
