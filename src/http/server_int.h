/*
 * The server's map: what src/http/server.c, server_conn.c, server_tls.c and
 * server_http.c share, and each file's API, grouped by file (as OpenBSD
 * httpd's httpd.h). Private to those files; the rest of the program sees only
 * server.h.
 * struct server is made and freed by server_run; its connection registry is
 * server_conn.c's.
 */
#ifndef DISTENV_SERVER_INT_H
#define DISTENV_SERVER_INT_H

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "server.h"

struct tlscert;
struct tlscert_store;
struct workpool;
struct workpool_item;

#define WORKERS_PER_THREAD 4 /* admission workers per network thread (look-ups on) */
/*
 * The accept policy enforces server.maxConnections on live connections (an
 * idle one evicted to make room), and this far (per network thread) above it
 * on all, those shut down but not yet closed included. libmicrohttpd's own
 * limit is set out of reach (CONN_LIBRARY_FACTOR times that bound on every
 * network thread): 0.9.75 leaves a mutex locked when a connection handed in
 * by MHD_add_connection meets the limit on its network thread
 * (new_connection_process_), which deadlocks that thread.
 */
#define CONN_HEADROOM_PER_THREAD 4
#define REAP_INTERVAL_MS         500 /* how often connection deadlines are checked */
#define PROBE_MAX_CONNECTIONS    16  /* the probe listener's, counted in the fd reserve */

/* Where a connection is, for its deadline (see conn_reap). */
enum conn_phase {
	CONN_HEAD = 0, /* TLS handshake and the first request's head: server.headerTimeoutSeconds */
	CONN_BODY,     /* head in, body arriving: server.requestTimeoutSeconds */
	CONN_BUSY,     /* request read, being answered: no deadline of ours */
	CONN_IDLE,     /* answered, kept alive: server.idleTimeoutSeconds, the next head included */
	CONN_PHASE_COUNT
};

/* A client address, for the per-address limit: family and raw address bytes. */
struct ip_key {
	int family;
	unsigned char addr[16];
};

/*
 * Per TCP connection: which holder its handshake used, its socket, peer and
 * phase. Linked (under conns_lock) while the connection lives: libmicrohttpd
 * sends NOTIFY_CLOSED before it closes the socket, so fd is open while listed.
 */
struct conn_ctx {
	gnutls_session_t session;
	struct tlscert *holder;
	struct conn_ctx *prev, *next;
	int fd;
	struct ip_key peer;
	atomic_llong since_ms; /* when phase began; written before phase */
	atomic_int phase;      /* enum conn_phase */
	int shut;              /* shut down by conn_reap or an eviction (conns_lock) */
	int pending;           /* accepted, not yet started on its network thread (conns_lock) */
	/* One TLS record per answer (network thread only; see cork_answer). */
	int corked; /* the session holds the answer until http_on_completed */
	int sndbuf; /* SO_SNDBUF when the connection started; 0: not known */
	/* The handshake (server_tls.c): its reads go through tls_pull until the client's Finished.
	 */
	struct server *srv;
	struct MHD_Connection *mhd;
	long long accepted_ms; /* when accepted: server.handshakeTimeoutSeconds runs from it */
	atomic_int hs_done;    /* the client's Finished is in (network thread writes) */
	unsigned hs_reads, hs_waits; /* socket reads and parked waits before it */
	int watched;                 /* the socket is in the wait thread's epoll set */
	int waiting;                 /* parked: suspended, in the waiting list (wait_lock) */
	struct conn_ctx *wait_prev, *wait_next;
};

struct server {
	const struct config *cfg;
	const struct workload_lookup *lookup;
	struct MHD_Daemon *daemon;

	struct tlscert_store *certs; /* the current certificate and its watcher */
	long max_connections;        /* cfg's, clamped below the open-file limit */

	pthread_mutex_t conns_lock; /* guards the conns list, shut flags and n_shut */
	struct conn_ctx *conns;
	long n_shut;              /* listed connections already shut down, not yet closed */
	long n_pending;           /* listed connections accepted, not yet started */
	struct MHD_Daemon *probe; /* the plain-HTTP probe listener, or NULL */

	/* the acceptor (see acceptor_main) */
	int listen_fd;        /* -1 when closed */
	int stop_fd;          /* eventfd: the acceptor ends when it is readable */
	int accepting_fd;     /* the socket being handed to the library (acceptor only) */
	int acceptor_started; /* acceptor joined by acceptor_stop */
	pthread_t acceptor;

	/* the handshake-wait thread (server_tls.c) and the connections parked on it */
	pthread_mutex_t wait_lock; /* guards waiting, each conn_ctx's waiting links, wait_closing */
	struct conn_ctx *waiting;
	int wait_closing; /* stopping: nothing parks any more */
	int wait_ep;      /* epoll set of the parked sockets and wait_stop; -1 when closed */
	int wait_stop;    /* eventfd: the wait thread ends when it is readable */
	int waiter_started;
	pthread_t waiter;

	/* connection-limit events, for the periodic warning (main thread reads) */
	atomic_ullong refused, refused_ip, evicted;
	unsigned long long warned_refused, warned_refused_ip, warned_evicted;
	long long last_warn_ms;

	atomic_int draining;
	atomic_long inflight;
	atomic_long open_conns; /* connections between NOTIFY_STARTED and NOTIFY_CLOSED */
	atomic_llong buffered;  /* request body bytes held (buffer capacities), all requests */
	atomic_int started;

	/* last libmicrohttpd message before start-up finished, for the error */
	char start_error[512];

	/*
	 * Admission workers. With look-ups on, an admission may wait on the API
	 * server for up to lookups.timeoutMs; it runs here, with its connection
	 * suspended, so the network threads keep serving every other connection
	 * (health probes included) meanwhile.
	 */
	struct workpool *pool; /* NULL when admissions run on the network threads */
};

/* A listen address (src/lib/listenaddr.c's grammar) resolved for binding. */
struct bind_addr {
	struct sockaddr_storage ss;
	int any_dual; /* ":PORT": all addresses, IPv6 and IPv4 */
	int v6;
	uint16_t port;
};

/* server.c */
/* server_run: see server.h. */

/* server_conn.c */
void conn_cert_owner(struct server *);
int conn_cert_callback(gnutls_session_t, const gnutls_datum_t *, int, const gnutls_pk_algorithm_t *,
                       int, gnutls_pcert_st **, unsigned int *, gnutls_privkey_t *);
void conn_enter(struct conn_ctx *, enum conn_phase);
struct conn_ctx *conn_of(struct MHD_Connection *);
enum MHD_Result conn_accept_policy(void *, const struct sockaddr *, socklen_t);
void conn_on_notify(void *, struct MHD_Connection *, void **, enum MHD_ConnectionNotificationCode);
void conn_reap(struct server *);
int listen_resolve(const char *, struct bind_addr *, char *, size_t)
    __attribute__((warn_unused_result));
int listen_open(const struct bind_addr *, int, char *, size_t);
int acceptor_start(struct server *) __attribute__((warn_unused_result));
void acceptor_stop(struct server *);
long fd_fit_connections(long, long, int, char *, size_t);

/* server_tls.c */
void tls_conn_started(struct server *, struct conn_ctx *, struct MHD_Connection *);
int tls_wait_start(struct server *) __attribute__((warn_unused_result));
void tls_wait_stop(struct server *);

/* server_http.c */
enum MHD_Result http_on_request(void *, struct MHD_Connection *, const char *, const char *,
                                const char *, const char *, size_t *, void **);
void http_on_completed(void *, struct MHD_Connection *, void **, enum MHD_RequestTerminationCode);
void http_run_queued(void *, struct workpool_item *);
enum MHD_Result http_probe_request(void *, struct MHD_Connection *, const char *, const char *,
                                   const char *, const char *, size_t *, void **);

#endif
