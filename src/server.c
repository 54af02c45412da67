/*
 * The HTTPS shell: libmicrohttpd (thread pool, epoll) over GnuTLS, fed by an
 * acceptor thread of ours that spreads connections over the pool, routing
 * /mutate to the admission core and serving /healthz, /readyz and /metrics,
 * then a graceful drain on SIGTERM/SIGINT. Each TLS connection holds the
 * certificate (src/tlscert.c) its handshake was handed until it closes;
 * admissions that may wait on look-ups run on a workpool (src/workpool.c);
 * the listen address follows src/listenaddr.c. server_run owns everything it
 * creates and frees it before returning.
 */
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/sockios.h>

#include "admission.h"
#include "kube.h"
#include "listenaddr.h"
#include "log.h"
#include "metrics.h"
#include "tlscert.h"
#include "util.h"
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
#define TLS_VERSIONS       "TLS1.2,TLS1.3"
#define DRAIN_POLL_NS      50000000L     /* 50 ms between in-flight checks while draining */
#define BODY_INITIAL_CAP   (16 * 1024)   /* chunked uploads start here */
#define BODY_PREALLOC_MAX  (1024 * 1024) /* an announced length is allocated up to this */
#define BODY_TRIM_MIN      (1024 * 1024) /* after a review this large, free pages go back */
#define WORKERS_PER_THREAD 4             /* admission workers per network thread (look-ups on) */
/*
 * Descriptors kept free of connections: stdio, listen sockets, one epoll and
 * one event fd per network thread, the certificate and /proc reads, and the
 * look-up workers' API connections.
 */
#define FD_RESERVE_BASE       32
#define FD_RESERVE_PER_THREAD (2 + WORKERS_PER_THREAD + CONN_HEADROOM_PER_THREAD)
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
/*
 * libmicrohttpd's per-connection memory (request head, read buffer, answer
 * head): 16 KiB instead of its 32 KiB. 0.9.75 zeroes the whole of it after
 * every request (MHD_pool_reset), 3.5 % of the server's CPU at 32 KiB on the
 * 4 KB pod, and it is resident for every open connection. The API server's
 * request heads are well under 1 KiB; bodies are read through it in chunks.
 */
#define CONN_MEMORY_BYTES        (16 * 1024)
#define CONN_LIBRARY_FACTOR      2
#define REAP_INTERVAL_MS         500   /* how often connection deadlines are checked */
#define LIMIT_WARN_INTERVAL_MS   10000 /* the connection-limit warning, at most this often */
#define PENDING_MAX_MS           2000  /* an accepted connection not started by then was dropped */
#define ACCEPT_BURST             64    /* accepts per wake-up of the acceptor */
#define ACCEPT_BACKOFF_MS        50    /* the pause after accept fails for want of descriptors */
#define PROBE_MAX_CONNECTIONS    16
#define PROBE_PER_IP_CONNECTIONS 8
#define PROBE_TIMEOUT_S          5

/* Where a connection is, for its deadline (see reap). */
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
	int shut;              /* shut down by reap or an eviction (conns_lock) */
	int pending;           /* accepted, not yet started on its network thread (conns_lock) */
	/* One TLS record per answer (network thread only; see cork_answer). */
	int corked; /* the session holds the answer until on_completed */
	int sndbuf; /* SO_SNDBUF when the connection started; 0: not known */
};

/* What a request will get, decided from its method and path when the headers are in. */
enum route {
	ROUTE_MUTATE = 1,
	ROUTE_VALIDATE, /* POST /validate: the same body handling as /mutate */
	ROUTE_HEALTHZ,
	ROUTE_READYZ,
	ROUTE_METRICS,
	ROUTE_NOT_FOUND,
	ROUTE_POST_ONLY, /* /mutate or /validate with another method */
	ROUTE_GET_ONLY,  /* a GET route with another method */
};

/* Where a /mutate request is when admissions run on the worker pool. */
enum req_state {
	REQ_READING = 0, /* headers and body arriving on a network thread */
	REQ_QUEUED,      /* connection suspended, waiting for or running on a worker */
	REQ_DONE,        /* res is filled and the connection resumed */
};

/* Per HTTP request. */
struct req_ctx {
	enum route route;
	enum metrics_path mpath; /* its path label */
	int status;              /* the status of the queued answer; 0 while none */
	struct timespec start;
	struct strbuf body; /* limited to max_body_bytes */
	int too_large;
	int over_budget;  /* the body would pass limits.maxBufferedBodyBytes: 503 */
	size_t charged;   /* bytes of body.cap counted in server.buffered */
	size_t discarded; /* bytes dropped after the limit was passed */
	int responded;    /* a response is queued; ignore further calls */
	int close;        /* answer with Connection: close (the framing cannot be trusted) */
	/* worker pool hand-off (look-ups on) */
	atomic_int state; /* enum req_state */
	struct MHD_Connection *conn;
	struct workpool_item qitem;
	struct admission_result res;
	int res_rc; /* admission_handle's return */
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

/*
 * GnuTLS's certificate callback carries no closure, so the one server of the
 * process is reachable through this pointer while server_run runs.
 */
static struct server *g_server;

/*
 * gnutls_certificate_retrieve_function2: called on each handshake. Hands out
 * the current holder and records it in the connection's context, which keeps
 * it alive until the connection closes.
 */
static int cert_callback(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
                         const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                         gnutls_pcert_st **pcert, unsigned int *pcert_length,
                         gnutls_privkey_t *privkey)
{
	struct server *s = g_server;
	struct conn_ctx *c;
	struct tlscert *h, *old = NULL;

	(void)req_ca_rdn;
	(void)nreqs;
	(void)pk_algos;
	(void)pk_algos_length;
	if (s == NULL)
		return -1;
	pthread_mutex_lock(&s->conns_lock);
	for (c = s->conns; c != NULL && c->session != session; c = c->next)
		;
	if (c == NULL) {
		/* Not a connection we track: refuse rather than hand out an unowned reference. */
		pthread_mutex_unlock(&s->conns_lock);
		return -1;
	}
	h = tlscert_store_acquire(s->certs);
	if (h == NULL) {
		pthread_mutex_unlock(&s->conns_lock);
		return -1;
	}
	old = c->holder; /* a renegotiation on the same connection */
	c->holder = h;
	pthread_mutex_unlock(&s->conns_lock);
	tlscert_release(old);
	*pcert = h->pcerts;
	*pcert_length = h->n_pcerts;
	*privkey = h->key;
	return 0;
}

/* The address part of sa (IPv4-mapped IPv6 as IPv4); family 0 when it has none. */
static void ip_key_of(const struct sockaddr *sa, struct ip_key *k)
{
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	memset(k, 0, sizeof(*k));
	if (sa == NULL)
		return;
	if (sa->sa_family == AF_INET) {
		k->family = AF_INET;
		memcpy(k->addr, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		const unsigned char *a =
		    ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr;
		if (memcmp(a, mapped, sizeof(mapped)) == 0) {
			k->family = AF_INET;
			memcpy(k->addr, a + 12, 4);
		} else {
			k->family = AF_INET6;
			memcpy(k->addr, a, 16);
		}
	}
}

/* Moves c to phase p now (any network or worker thread). */
static void conn_enter(struct conn_ctx *c, enum conn_phase p)
{
	if (c == NULL)
		return;
	atomic_store(&c->since_ms, mono_ms()); /* before phase: reap reads phase first */
	atomic_store(&c->phase, (int)p);
}

/* The conn_ctx of a connection, or NULL. */
static struct conn_ctx *conn_of(struct MHD_Connection *connection)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci != NULL ? ci->socket_context : NULL;
}

/* Closes c's socket under it (conns_lock held); libmicrohttpd then closes c. */
static void conn_shut(struct server *s, struct conn_ctx *c)
{
	if (c->fd >= 0)
		shutdown(c->fd, SHUT_RDWR);
	c->shut = 1;
	s->n_shut++;
}

/*
 * The oldest connection that can go to make room (conns_lock held): one
 * still in its handshake or first head, else one idle between requests (a
 * request sent at that instant would be lost, so those go last). NULL: none.
 */
static struct conn_ctx *conn_evictable(struct server *s)
{
	struct conn_ctx *c, *best = NULL;
	int best_phase = CONN_PHASE_COUNT, ph;
	long long best_since = 0, since;

	for (c = s->conns; c != NULL; c = c->next) {
		/* A pending socket is the library's, and may be closed already. */
		if (c->shut || c->pending)
			continue;
		ph = atomic_load(&c->phase);
		if (ph != CONN_HEAD && ph != CONN_IDLE)
			continue;
		since = atomic_load(&c->since_ms);
		if (best == NULL || (ph == CONN_HEAD && best_phase != CONN_HEAD) ||
		    (ph == best_phase && since < best_since)) {
			best = c;
			best_phase = ph;
			best_since = since;
		}
	}
	return best;
}

/*
 * Lists the connection being accepted (conns_lock held) as pending, so that
 * the limits count it before its network thread starts it (on_connection
 * claims the entry by its socket). Without memory it is listed at the start.
 */
static void conn_add_pending(struct server *s, const struct ip_key *k)
{
	struct conn_ctx *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return;
	c->fd = s->accepting_fd;
	c->peer = *k;
	c->pending = 1;
	conn_enter(c, CONN_HEAD); /* the header deadline runs from the accept */
	c->next = s->conns;
	if (s->conns != NULL)
		s->conns->prev = c;
	s->conns = c;
	s->n_pending++;
}

/* Unlinks c (conns_lock held); the caller frees it. */
static void conn_unlink(struct server *s, struct conn_ctx *c)
{
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	if (c->shut)
		s->n_shut--;
	if (c->pending)
		s->n_pending--;
}

/*
 * MHD_AcceptPolicyCallback, called on the acceptor thread only:
 * server.maxConnectionsPerIP, then server.maxConnections. At the limit the
 * oldest connection that has sent no request (or, failing that, the oldest
 * idle one) is closed to make room, as nginx reuses idle connections, so that
 * clients holding connections open cannot lock out the API server; only when
 * none can go is the new one refused. Every refusal and eviction is counted.
 * A connection is listed (pending) from the moment it passes, and one thread
 * decides, so neither limit can be passed at a race.
 */
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
	struct server *s = cls;
	struct conn_ctx *c, *victim;
	struct ip_key k;
	long same = 0, live, all;
	long threads = s->cfg->threads > 0 ? s->cfg->threads : 1;

	(void)addrlen;
	ip_key_of(addr, &k);
	pthread_mutex_lock(&s->conns_lock);
	if (k.family != 0)
		for (c = s->conns; c != NULL; c = c->next)
			if (!c->shut && c->peer.family == k.family &&
			    memcmp(c->peer.addr, k.addr, sizeof(k.addr)) == 0)
				same++;
	if (same >= s->cfg->max_conns_per_ip) {
		pthread_mutex_unlock(&s->conns_lock);
		atomic_fetch_add(&s->refused_ip, 1);
		metrics_overload(METRICS_OVERLOAD_PER_IP);
		return MHD_NO;
	}
	all = atomic_load(&s->open_conns) + s->n_pending;
	if (all >= s->max_connections + threads * CONN_HEADROOM_PER_THREAD) {
		pthread_mutex_unlock(&s->conns_lock); /* evicted ones still closing */
		atomic_fetch_add(&s->refused, 1);
		metrics_overload(METRICS_OVERLOAD_CONNECTIONS);
		return MHD_NO;
	}
	live = all - s->n_shut;
	if (live < s->max_connections) {
		conn_add_pending(s, &k);
		pthread_mutex_unlock(&s->conns_lock);
		return MHD_YES;
	}
	victim = conn_evictable(s);
	if (victim != NULL) {
		conn_shut(s, victim);
		conn_add_pending(s, &k);
	}
	pthread_mutex_unlock(&s->conns_lock);
	if (victim == NULL) {
		atomic_fetch_add(&s->refused, 1);
		metrics_overload(METRICS_OVERLOAD_CONNECTIONS);
		return MHD_NO;
	}
	atomic_fetch_add(&s->evicted, 1);
	metrics_overload(METRICS_OVERLOAD_EVICTED);
	return MHD_YES;
}

/*
 * Closes connections past their phase's deadline (main thread, every
 * REAP_INTERVAL_MS): libmicrohttpd's only timeout is for inactivity, so a
 * client trickling a byte at a time through the handshake, the head or the
 * body would hold its slot for ever. Also warns, at most every
 * LIMIT_WARN_INTERVAL_MS, when connections were refused or evicted.
 */
static void reap(struct server *s)
{
	static const enum metrics_timeout which[CONN_PHASE_COUNT] = {
	    METRICS_TIMEOUT_HEAD, METRICS_TIMEOUT_BODY, METRICS_TIMEOUT_COUNT,
	    METRICS_TIMEOUT_IDLE};
	long long now = mono_ms(), limit_ms[CONN_PHASE_COUNT];
	unsigned long long refused, refused_ip, evicted;
	struct conn_ctx *c, *next;
	int ph;

	limit_ms[CONN_HEAD] = s->cfg->header_timeout_s * 1000;
	limit_ms[CONN_BODY] = s->cfg->request_timeout_s * 1000;
	limit_ms[CONN_BUSY] = 0;
	limit_ms[CONN_IDLE] = s->cfg->idle_timeout_s * 1000;
	pthread_mutex_lock(&s->conns_lock);
	for (c = s->conns; c != NULL; c = next) {
		next = c->next;
		if (c->pending) {
			/* The library dropped it before it started (no memory, its limit). */
			if (now - atomic_load(&c->since_ms) >= PENDING_MAX_MS) {
				conn_unlink(s, c);
				free(c);
			}
			continue;
		}
		if (c->shut)
			continue;
		ph = atomic_load(&c->phase); /* before since_ms: see conn_enter */
		if (ph < 0 || ph >= CONN_PHASE_COUNT || limit_ms[ph] == 0 ||
		    now - atomic_load(&c->since_ms) < limit_ms[ph])
			continue;
		conn_shut(s, c);
		metrics_conn_timeout(which[ph]);
	}
	pthread_mutex_unlock(&s->conns_lock);

	refused = atomic_load(&s->refused);
	refused_ip = atomic_load(&s->refused_ip);
	evicted = atomic_load(&s->evicted);
	if ((refused != s->warned_refused || refused_ip != s->warned_refused_ip ||
	     evicted != s->warned_evicted) &&
	    now - s->last_warn_ms >= LIMIT_WARN_INTERVAL_MS) {
		log_kvn(LOG_WARN, "connection_limit_reached", "open",
		        (long long)atomic_load(&s->open_conns), "max_connections",
		        (long long)s->max_connections, "max_connections_per_ip",
		        (long long)s->cfg->max_conns_per_ip, "refused",
		        (long long)(refused - s->warned_refused), "refused_per_ip",
		        (long long)(refused_ip - s->warned_refused_ip), "evicted",
		        (long long)(evicted - s->warned_evicted), LOG_END);
		s->warned_refused = refused;
		s->warned_refused_ip = refused_ip;
		s->warned_evicted = evicted;
		s->last_warn_ms = now;
	}
}

static void on_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
	struct server *s = cls;
	struct conn_ctx *c;
	const union MHD_ConnectionInfo *ci;
	gnutls_session_t session;
	int fd, sndbuf = 0;
	socklen_t sndbuf_len = sizeof(sndbuf);

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		atomic_fetch_add(&s->open_conns, 1);
		metrics_connections(1);
		ci = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
		/* Without one the handshake fails in cert_callback. */
		session = ci != NULL ? (gnutls_session_t)ci->tls_session : NULL;
		ci = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
		fd = ci != NULL ? ci->connect_fd : -1;
		if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &sndbuf_len) != 0)
			sndbuf = 0; /* answers are not corked */
		pthread_mutex_lock(&s->conns_lock);
		for (c = s->conns; c != NULL && !(c->pending && c->fd == fd); c = c->next)
			;
		if (c != NULL) {
			c->pending = 0;
			s->n_pending--;
			c->session = session;
			c->sndbuf = sndbuf;
			pthread_mutex_unlock(&s->conns_lock);
			*socket_context = c;
			return;
		}
		pthread_mutex_unlock(&s->conns_lock);
		c = calloc(1, sizeof(*c));
		if (c == NULL) {
			*socket_context = NULL;
			return;
		}
		c->session = session;
		c->sndbuf = sndbuf;
		c->fd = fd;
		ci = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		ip_key_of(ci != NULL ? ci->client_addr : NULL, &c->peer);
		conn_enter(c, CONN_HEAD);
		pthread_mutex_lock(&s->conns_lock);
		c->next = s->conns;
		if (s->conns != NULL)
			s->conns->prev = c;
		s->conns = c;
		pthread_mutex_unlock(&s->conns_lock);
		*socket_context = c;
		return;
	}
	atomic_fetch_sub(&s->open_conns, 1);
	metrics_connections(-1);
	c = *socket_context;
	if (c == NULL)
		return;
	pthread_mutex_lock(&s->conns_lock);
	conn_unlink(s, c);
	pthread_mutex_unlock(&s->conns_lock);
	tlscert_release(c->holder);
	free(c);
	*socket_context = NULL;
}

/* ---- HTTP ---------------------------------------------------------------- */

/*
 * One TLS record per answer. libmicrohttpd 0.9.75 hands GnuTLS the header and
 * the body as two gnutls_record_send calls: two records and two sendmsg, and
 * on loopback each sendmsg also runs the receiver's TCP path (a quarter of the
 * server's CPU for the 4 KB pod). Corking the session before the response is
 * queued makes GnuTLS keep both; on_completed, which libmicrohttpd calls on
 * the same network thread once it has handed over the last byte, uncorks:
 * one record, one sendmsg.
 *
 * Only an answer that fits at once is corked: at most CORK_MAX bytes, less
 * than half the socket's send buffer, and nothing else of this
 * connection waiting in the kernel (a client that sends its next request has
 * read the previous answer). The uncork then never waits; if it must (a
 * pipelining client that does not read), it polls for CORK_WAIT_MS and then
 * closes the connection rather than leave an answer unsent.
 *
 * libmicrohttpd corks the socket too (mhd_send.c, 0.9.75): before the header
 * of an answer it does not push at once (header and body under 1,400 bytes),
 * pre_send_setopt sets TCP_CORK, unless it believes it set already; after
 * the body, post_send_setopt pushes by setting TCP_NODELAY and leaves the
 * cork on, for the next answer. The record uncork_answer writes comes after
 * that push: on a corked socket it would wait for the kernel's 200 ms cork
 * timer. So after every answer, held or not, answer_pushed clears TCP_CORK.
 */
#define CORK_MAX     8192
#define CORK_WAIT_MS 200

static void cork_answer(struct conn_ctx *cc, size_t body_len)
{
	int queued = 0;

	if (cc == NULL || cc->session == NULL || cc->corked || cc->sndbuf <= 0 ||
	    body_len + 512 > CORK_MAX || body_len + 512 > (size_t)cc->sndbuf / 2 ||
	    ioctl(cc->fd, SIOCOUTQ, &queued) != 0 || queued != 0)
		return;
	gnutls_record_cork(cc->session);
	cc->corked = 1;
}

/*
 * Sends what the corked session holds; with send 0 (the request failed, the connection closes)
 * drops it. Returns 1 when it wrote a held answer, 0 when none was held or it was dropped, -1
 * when it could not write it (the connection is shut down).
 */
static int uncork_answer(struct conn_ctx *cc, int send)
{
	long long deadline;
	ssize_t r;

	if (cc == NULL || !cc->corked)
		return 0;
	cc->corked = 0;
	if (!send)
		return 0; /* libmicrohttpd closes the connection; the session goes with it */
	deadline = mono_ms() + CORK_WAIT_MS;
	while ((r = gnutls_record_uncork(cc->session, 0)) == GNUTLS_E_AGAIN ||
	       r == GNUTLS_E_INTERRUPTED) {
		struct pollfd p = {.fd = cc->fd, .events = POLLOUT};
		long long left = deadline - mono_ms();
		if (left <= 0 || (poll(&p, 1, (int)left) < 0 && errno != EINTR))
			break;
	}
	if (r < 0) {
		/* Never an answer left behind: the client sees the connection end. */
		log_kvn(LOG_WARN, "answer_not_sent", "gnutls_error", (long long)r, LOG_END);
		shutdown(cc->fd, SHUT_RDWR);
		return -1;
	}
	return 1;
}

/*
 * Clears TCP_CORK once an answer is written, whoever set it (see above): what
 * is queued goes out now, and the next answer finds the socket uncorked.
 * libmicrohttpd, which believes it still corked, does not set it again; if it
 * does, the next answer clears it again. held is uncork_answer's 1 or 0, for
 * the debug line that shows the cork after each answer.
 */
static void answer_pushed(const struct conn_ctx *cc, int held)
{
	int off = 0, cork = -1;
	socklen_t len = sizeof(cork);

	if (cc == NULL || cc->fd < 0)
		return;
	setsockopt(cc->fd, IPPROTO_TCP, TCP_CORK, &off, sizeof(off));
	if (!log_enabled(LOG_DEBUG))
		return;
	if (getsockopt(cc->fd, IPPROTO_TCP, TCP_CORK, &cork, &len) != 0)
		cork = -1;
	log_kvn(LOG_DEBUG, "answer_sent", "one_record", (long long)held, "tcp_cork",
	        (long long)cork, LOG_END);
}

/*
 * Queues one response. mode is the libmicrohttpd memory mode of body, chosen
 * by the caller: PERSISTENT for string literals, MUST_COPY for stack buffers,
 * MUST_FREE for malloc'd buffers handed over to libmicrohttpd (freed by it
 * with free() once sent, also when queuing fails).
 */
static enum MHD_Result respond(struct server *s, struct MHD_Connection *c, struct req_ctx *r,
                               unsigned status, const char *ctype, const char *body, size_t len,
                               enum MHD_ResponseMemoryMode mode, const char *allow)
{
	struct MHD_Response *resp;
	struct conn_ctx *cc;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(len, (void *)body, mode);
	if (resp == NULL) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free((void *)body);
		return MHD_NO; /* libmicrohttpd closes the connection */
	}
	if (MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype) != MHD_YES ||
	    (allow != NULL &&
	     MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow) != MHD_YES) ||
	    /* While draining, tell keep-alive clients to reconnect elsewhere. */
	    ((atomic_load(&s->draining) || r->close) &&
	     MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close") != MHD_YES)) {
		MHD_destroy_response(resp);
		return MHD_NO;
	}
	cc = conn_of(c);
	cork_answer(cc, len);
	ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp); /* the queue holds its own reference */
	if (ret == MHD_YES)
		r->status = (int)status; /* counted when the request completes */
	else
		(void)uncork_answer(cc, 1); /* nothing was written into it */
	return ret;
}

/* Answers {"error":"<msg>"} with status. msg must be plain ASCII without quotes or backslashes. */
static enum MHD_Result respond_error(struct server *s, struct MHD_Connection *c, struct req_ctx *r,
                                     unsigned status, const char *msg, const char *allow)
{
	char buf[256];
	int n;

	n = snprintf(buf, sizeof(buf), "{\"error\":\"%s\"}\n", msg);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return MHD_NO;
	/* MUST_COPY: buf lives on this stack frame. */
	return respond(s, c, r, status, "application/json", buf, (size_t)n, MHD_RESPMEM_MUST_COPY,
	               allow);
}

static enum MHD_Result respond_too_large(struct server *s, struct MHD_Connection *c,
                                         struct req_ctx *r)
{
	char msg[128];

	snprintf(msg, sizeof(msg), "request body exceeds the limit of %ld bytes",
	         s->cfg->max_body_bytes);
	return respond_error(s, c, r, MHD_HTTP_CONTENT_TOO_LARGE, msg, NULL);
}

/*
 * Counts n more bytes of r's body buffer against limits.maxBufferedBodyBytes,
 * before they are allocated. Returns 0, or -1 when they do not fit (nothing
 * counted).
 */
static int budget_charge(struct server *s, struct req_ctx *r, size_t n)
{
	long long after = atomic_fetch_add(&s->buffered, (long long)n) + (long long)n;

	if (after > s->cfg->max_buffered_bytes) {
		atomic_fetch_sub(&s->buffered, (long long)n);
		return -1;
	}
	r->charged += n;
	metrics_buffered_bytes((long long)n);
	return 0;
}

/* Frees r's body and gives its bytes back to the budget. */
static void body_release(struct server *s, struct req_ctx *r)
{
	strbuf_free(&r->body);
	if (r->charged > 0) {
		atomic_fetch_sub(&s->buffered, (long long)r->charged);
		metrics_buffered_bytes(-(long long)r->charged);
		r->charged = 0;
	}
}

/* The budget is spent: the body is dropped, the rest read and discarded, then 503. */
static void body_over_budget(struct server *s, struct req_ctx *r)
{
	if (!r->over_budget) {
		metrics_overload(METRICS_OVERLOAD_BODY_BUDGET);
		log_kvn(LOG_WARN, "body_budget_spent", "max_buffered_body_bytes",
		        (long long)s->cfg->max_buffered_bytes, LOG_END);
	}
	r->over_budget = 1;
	r->too_large = 1; /* the same reading on and discarding */
	body_release(s, r);
}

static enum MHD_Result respond_over_budget(struct server *s, struct MHD_Connection *c,
                                           struct req_ctx *r)
{
	return respond_error(s, c, r, MHD_HTTP_SERVICE_UNAVAILABLE,
	                     "overloaded: request bodies in flight exceed the memory budget", NULL);
}

/* Runs the core on the request body into r->res (any thread). */
static void admit(struct server *s, struct req_ctx *r)
{
	const char *body = r->body.buf ? r->body.buf : "";
	int big;

	memset(&r->res, 0, sizeof(r->res));
	r->res_rc = r->route == ROUTE_VALIDATE
	                ? admission_validate(body, r->body.len, s->cfg, s->lookup, &r->res)
	                : admission_handle(body, r->body.len, s->cfg, s->lookup, &r->res);
	big = r->body.len >= BODY_TRIM_MIN;
	body_release(s, r); /* read: its bytes go back to the budget now, not after the send */
	/*
	 * A large review leaves its parse tree's small blocks free in this
	 * thread's malloc arena, where other threads cannot reuse them: hand the
	 * free pages back, or RSS ratchets up by one large review per arena.
	 */
	if (big)
		malloc_trim(0);
}

/* Answers a /mutate request from r->res (filled by admit); takes the body. */
static enum MHD_Result respond_admission(struct server *s, struct MHD_Connection *c,
                                         struct req_ctx *r)
{
	struct admission_result res = r->res;
	enum MHD_Result ret;
	double secs;
	char *body;
	size_t body_len;

	memset(&r->res, 0, sizeof(r->res));
	if (r->res_rc != 0 || res.body == NULL) {
		admission_result_free(&res);
		log_kv(LOG_ERROR, "admission_failed", "error", "out of memory", LOG_END);
		return respond_error(s, c, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
		                     "out of memory while handling the review", NULL);
	}
	secs = mono_elapsed_s(&r->start);
	metrics_admission(r->route == ROUTE_VALIDATE ? METRICS_VALIDATE : METRICS_MUTATE,
	                  res.outcome, res.reason, secs);
	log_admission(&res, (long long)(secs * 1e6));
	/* Hand the body to libmicrohttpd (MUST_FREE) and detach it from res. */
	body = res.body;
	body_len = res.body_len;
	res.body = NULL;
	ret = respond(s, c, r, (unsigned)res.http_status, "application/json", body, body_len,
	              MHD_RESPMEM_MUST_FREE, NULL);
	admission_result_free(&res);
	return ret;
}

/*
 * workpool_fn: runs one queued admission, then resumes its connection. Its
 * look-ups end lookups.timeoutMs after the request arrived: time spent in the
 * queue counts, so a backlog of slow look-ups cannot push answers past the
 * API server's own timeout.
 */
static void run_queued(void *ctx, struct workpool_item *item)
{
	struct req_ctx *r = (struct req_ctx *)((char *)item - offsetof(struct req_ctx, qitem));
	struct server *s = ctx;

	kube_set_thread_deadline((long long)r->start.tv_sec * 1000 + r->start.tv_nsec / 1000000 +
	                         s->cfg->lookup_timeout_ms);
	admit(s, r);
	kube_set_thread_deadline(0);
	atomic_store(&r->state, REQ_DONE);
	MHD_resume_connection(r->conn); /* the handler answers from r->res */
}

/* Answers a request whose route is not ROUTE_MUTATE. */
static enum MHD_Result handle_other(struct server *s, struct MHD_Connection *c, struct req_ctx *r)
{
	static const char ok[] = "ok\n";
	char *text;
	size_t len = 0;

	switch (r->route) {
	case ROUTE_HEALTHZ:
		/* PERSISTENT: a string literal outlives the response. */
		return respond(s, c, r, MHD_HTTP_OK, "text/plain; charset=utf-8", ok,
		               sizeof(ok) - 1, MHD_RESPMEM_PERSISTENT, NULL);
	case ROUTE_READYZ:
		if (atomic_load(&s->draining))
			return respond_error(s, c, r, MHD_HTTP_SERVICE_UNAVAILABLE,
			                     "draining: shutting down", NULL);
		return respond(s, c, r, MHD_HTTP_OK, "text/plain; charset=utf-8", ok,
		               sizeof(ok) - 1, MHD_RESPMEM_PERSISTENT, NULL);
	case ROUTE_METRICS:
		text = metrics_render(&len);
		if (text == NULL)
			return respond_error(s, c, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
			                     "out of memory while rendering metrics", NULL);
		/* MUST_FREE: metrics_render's buffer now belongs to libmicrohttpd. */
		return respond(s, c, r, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
		               text, len, MHD_RESPMEM_MUST_FREE, NULL);
	case ROUTE_POST_ONLY:
		return respond_error(s, c, r, MHD_HTTP_METHOD_NOT_ALLOWED,
		                     "method not allowed: use POST", "POST");
	case ROUTE_GET_ONLY:
		return respond_error(s, c, r, MHD_HTTP_METHOD_NOT_ALLOWED,
		                     "method not allowed: use GET", "GET, HEAD");
	case ROUTE_NOT_FOUND:
	case ROUTE_MUTATE:
	case ROUTE_VALIDATE:
		break;
	}
	return respond_error(
	    s, c, r, MHD_HTTP_NOT_FOUND,
	    "not found: the webhook serves POST /mutate, /validate, GET /healthz, /readyz, "
	    "/metrics",
	    NULL);
}

/*
 * Appends one chunk of the upload. Past the limit the body is dropped and the
 * rest only counted; returns -1 when memory ran out or the client keeps
 * sending far beyond the limit (then the connection is closed without answer).
 */
static int body_append(struct server *s, struct req_ctx *r, const char *data, size_t n)
{
	size_t limit = (size_t)s->cfg->max_body_bytes, cap;

	if (r->too_large) {
		/* libmicrohttpd 0.9.75 cannot answer mid-upload: read on, up to the limit again. */
		if (n > limit - r->discarded)
			return -1;
		r->discarded += n;
		return 0;
	}
	/* a chunked upload starts at BODY_INITIAL_CAP */
	if (r->body.cap == 0 && n <= limit) {
		size_t first = limit < BODY_INITIAL_CAP - 1 ? limit : BODY_INITIAL_CAP - 1;
		cap = strbuf_cap_for(&r->body, first);
		if (budget_charge(s, r, cap) != 0) {
			body_over_budget(s, r);
			return body_append(s, r, data, n); /* discards */
		}
		if (strbuf_reserve(&r->body, first) != 0)
			return -1;
	}
	/* Count the growth before it is allocated (past the limit cap is 0: too_big below). */
	cap = strbuf_cap_for(&r->body, n);
	if (cap > r->body.cap && budget_charge(s, r, cap - r->body.cap) != 0) {
		body_over_budget(s, r);
		return body_append(s, r, data, n);
	}
	strbuf_append(&r->body, data, n);
	if (r->body.too_big) {
		r->too_large = 1;
		body_release(s, r);
		return 0;
	}
	return r->body.oom ? -1 : 0;
}

static enum route route_of(const char *url, const char *method)
{
	int get =
	    strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;

	if (strcmp(url, "/mutate") == 0)
		return strcmp(method, MHD_HTTP_METHOD_POST) == 0 ? ROUTE_MUTATE : ROUTE_POST_ONLY;
	if (strcmp(url, "/validate") == 0)
		return strcmp(method, MHD_HTTP_METHOD_POST) == 0 ? ROUTE_VALIDATE : ROUTE_POST_ONLY;
	if (strcmp(url, "/healthz") == 0)
		return get ? ROUTE_HEALTHZ : ROUTE_GET_ONLY;
	if (strcmp(url, "/readyz") == 0)
		return get ? ROUTE_READYZ : ROUTE_GET_ONLY;
	if (strcmp(url, "/metrics") == 0)
		return get ? ROUTE_METRICS : ROUTE_GET_ONLY;
	return ROUTE_NOT_FOUND;
}

/* The path label of a request: the route's path, whatever the method, else "other". */
static enum metrics_path metrics_path_of(const char *url)
{
	static const char *const paths[] = {"/mutate", "/validate", "/healthz", "/readyz",
	                                    "/metrics"};
	size_t i;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (strcmp(url, paths[i]) == 0)
			return (enum metrics_path)i;
	return METRICS_PATH_OTHER;
}

/* True when the request announces a body (Content-Length > 0 or chunked). */
static int has_body(struct MHD_Connection *c)
{
	const char *cl =
	    MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);

	if (MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
		return 1;
	return cl != NULL && strcmp(cl, "0") != 0;
}

/* What framing_check counts: the Content-Length and Transfer-Encoding headers. */
struct framing {
	int n_cl, n_te;
	const char *cl, *te;
};

static enum MHD_Result framing_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                      const char *value)
{
	struct framing *f = cls;

	(void)kind;
	if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
		f->n_cl++;
		f->cl = value;
	} else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
		f->n_te++;
		f->te = value;
	}
	return MHD_YES;
}

/*
 * Checks the body framing of a request whose headers are in (RFC 9112 6.1,
 * 6.3): one Content-Length of digits only, or one Transfer-Encoding that is
 * exactly "chunked", never both. libmicrohttpd 0.9.75 reads Content-Length
 * with Transfer-Encoding as chunked and keeps the connection (the shape of
 * request smuggling), waits forever on an unknown coding, and takes the first
 * of two Content-Lengths; other versions differ, so distenv decides itself.
 * Returns NULL when the framing is sound, else why not.
 */
static const char *framing_check(struct MHD_Connection *c)
{
	struct framing f = {0, 0, NULL, NULL};
	size_t i, n;

	MHD_get_connection_values(c, MHD_HEADER_KIND, framing_header, &f);
	if (f.n_cl > 1 || f.n_te > 1)
		return "bad request: repeated Content-Length or Transfer-Encoding header";
	if (f.n_cl > 0 && f.n_te > 0)
		return "bad request: both Content-Length and Transfer-Encoding";
	if (f.te != NULL && strcasecmp(f.te, "chunked") != 0)
		return "bad request: the only Transfer-Encoding accepted is chunked";
	if (f.cl != NULL) {
		n = strlen(f.cl);
		for (i = 0; i < n && f.cl[i] >= '0' && f.cl[i] <= '9'; i++)
			;
		if (n == 0 || i != n || n > 18)
			return "bad request: malformed Content-Length";
	}
	return NULL;
}

/*
 * libmicrohttpd calls this first when the headers are in (*req_cls NULL), then
 * once per body chunk, then once with *upload_data_size 0. A response queued
 * in the first call makes libmicrohttpd 0.9.75 skip the body and close the
 * connection afterwards; answers queued in the last call keep it alive. So
 * answers go out in the last call, except when a body must not be read.
 */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls)
{
	struct server *s = cls;
	struct req_ctx *r = *req_cls;
	const char *cl, *bad;
	long announced;

	(void)version;
	if (r == NULL) {
		r = calloc(1, sizeof(*r));
		if (r == NULL)
			return MHD_NO;
		clock_gettime(CLOCK_MONOTONIC, &r->start);
		strbuf_init_max(&r->body, (size_t)s->cfg->max_body_bytes);
		*req_cls = r;
		atomic_fetch_add(&s->inflight, 1);
		conn_enter(conn_of(c), CONN_BODY);
		r->route = route_of(url, method);
		r->mpath = metrics_path_of(url);
		if ((bad = framing_check(c)) != NULL) {
			/* Answered before the body: libmicrohttpd then closes the connection. */
			r->responded = 1;
			r->close = 1;
			log_kv(LOG_DEBUG, "request_refused", "reason", bad, LOG_END);
			return respond_error(s, c, r, MHD_HTTP_BAD_REQUEST, bad, NULL);
		}
		if (r->route == ROUTE_MUTATE || r->route == ROUTE_VALIDATE) {
			metrics_inflight(1);
			/* Refuse an announced oversize body before reading any of it. */
			cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
			                                 MHD_HTTP_HEADER_CONTENT_LENGTH);
			if (cl != NULL && (parse_long(cl, 0, LONG_MAX, &announced) != 0 ||
			                   announced > s->cfg->max_body_bytes)) {
				r->too_large = 1;
				r->responded = 1;
				return respond_too_large(s, c, r);
			}
			/*
			 * One allocation of the announced size (bounded, so that an idle
			 * client cannot reserve the limit): growing from a fixed 64 KiB
			 * cost a 64 KiB malloc and free per request, and freeing a chunk
			 * that large makes glibc consolidate all its fastbins.
			 */
			if (cl != NULL && announced > 0) {
				size_t pre = announced < BODY_PREALLOC_MAX ? (size_t)announced + 1
				                                           : BODY_PREALLOC_MAX;
				if (budget_charge(s, r, strbuf_cap_for(&r->body, pre - 1)) != 0) {
					/* Spent before a byte is read: answer now, skip the body.
					 */
					body_over_budget(s, r);
					r->responded = 1;
					r->close = 1;
					return respond_over_budget(s, c, r);
				}
				if (strbuf_reserve(&r->body, pre - 1) != 0)
					return MHD_NO;
			}
		} else if (has_body(c)) {
			/* Nothing to read for these routes: answer now, without the body. */
			r->responded = 1;
			return handle_other(s, c, r);
		}
		return MHD_YES;
	}

	if (r->responded) {
		*upload_data_size = 0; /* a response is queued; whatever still arrives is dropped */
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		if (r->route != ROUTE_MUTATE && r->route != ROUTE_VALIDATE) {
			*upload_data_size = 0;
			return MHD_YES;
		}
		if (body_append(s, r, upload_data, *upload_data_size) != 0) {
			log_kv(LOG_WARN, "request_dropped", "reason",
			       r->too_large ? "body far over the limit"
			                    : "out of memory for the body",
			       LOG_END);
			return MHD_NO; /* libmicrohttpd closes the connection */
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	/* The whole request is in. */
	conn_enter(conn_of(c), CONN_BUSY);
	if (r->route != ROUTE_MUTATE && r->route != ROUTE_VALIDATE) {
		r->responded = 1;
		return handle_other(s, c, r);
	}
	if (r->over_budget) {
		r->responded = 1;
		return respond_over_budget(s, c, r);
	}
	if (r->too_large) {
		r->responded = 1;
		return respond_too_large(s, c, r);
	}
	/*
	 * By the request's state, not by whether a pool runs: the pool stops
	 * (and takes no more) before the daemon does, and an admission it ran
	 * must be answered, not run again.
	 */
	switch (atomic_load(&r->state)) {
	case REQ_QUEUED:
		return MHD_YES; /* not ours yet */
	case REQ_DONE:
		break; /* the worker filled r->res: answer below */
	default:       /* REQ_READING */
		switch (s->pool != NULL ? workpool_reserve(s->pool) : WORKPOOL_STOPPED) {
		case WORKPOOL_OK:
			/* Suspend first: the worker may resume as soon as it is queued. */
			atomic_store(&r->state, REQ_QUEUED);
			r->conn = c;
			MHD_suspend_connection(c);
			workpool_push(s->pool, &r->qitem);
			return MHD_YES;
		case WORKPOOL_FULL:
			/* Answer now rather than queue behind slow look-ups. */
			metrics_overload(METRICS_OVERLOAD_QUEUE_FULL);
			log_kvn(LOG_WARN, "admission_queue_full", "max_queued",
			        (long long)s->cfg->max_queued, LOG_END);
			r->responded = 1;
			return respond_error(s, c, r, MHD_HTTP_SERVICE_UNAVAILABLE,
			                     "overloaded: too many admissions waiting for look-ups",
			                     NULL);
		case WORKPOOL_STOPPED:
			admit(s, r); /* no pool (look-ups off), or stopping: here */
			break;
		}
		break;
	}
	r->responded = 1;
	return respond_admission(s, c, r);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
	struct server *s = cls;
	struct req_ctx *r = *req_cls;
	struct conn_ctx *cc = conn_of(c);
	int ok = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK, held;

	/* The answer goes out, in one record, and nothing of it waits for a cork. */
	held = uncork_answer(cc, ok);
	if (ok && held >= 0)
		answer_pushed(cc, held);
	conn_enter(cc, CONN_IDLE); /* kept alive, or about to close */
	if (r == NULL)
		return;
	if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
		log_kvn(LOG_DEBUG, "request_aborted", "reason", (long long)toe, LOG_END);
	admission_result_free(&r->res); /* an answer that was never sent */
	body_release(s, r);
	metrics_http_request(r->mpath, r->status);
	if (r->route == ROUTE_MUTATE || r->route == ROUTE_VALIDATE)
		metrics_inflight(-1);
	free(r);
	*req_cls = NULL;
	atomic_fetch_sub(&s->inflight, 1);
}

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

/* ---- listen address -------------------------------------------------------- */

/* A listen address (src/listenaddr.c's grammar) resolved for binding. */
struct bind_addr {
	struct sockaddr_storage ss;
	int any_dual; /* ":PORT": all addresses, IPv6 and IPv4 */
	int v6;
	uint16_t port;
};

/* Parses and resolves spec (port 0: the kernel picks). Returns 0 or -1 with err. */
static int bind_resolve(const char *spec, struct bind_addr *ba, char *err, size_t errlen)
{
	struct listen_addr la;
	struct addrinfo hints, *ai = NULL;
	char port[8];
	int r;

	memset(ba, 0, sizeof(*ba));
	if (listen_addr_parse(spec, 0, &la, err, errlen) != 0)
		return -1;
	ba->port = (uint16_t)la.port;
	if (la.host[0] == '\0') {
		ba->any_dual = 1;
		return 0;
	}
	snprintf(port, sizeof(port), "%ld", la.port);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = la.ipv6 ? AF_INET6 : AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	r = getaddrinfo(la.host, port, &hints, &ai);
	if (r != 0 || ai == NULL) {
		snprintf(err, errlen, "listen address '%s': %s", spec,
		         r ? gai_strerror(r) : "no address");
		if (ai != NULL)
			freeaddrinfo(ai);
		return -1;
	}
	memcpy(&ba->ss, ai->ai_addr, ai->ai_addrlen);
	ba->v6 = ai->ai_family == AF_INET6;
	freeaddrinfo(ai);
	return 0;
}

/* ---- run ------------------------------------------------------------------- */

/*
 * Opens the webhook's listening socket (non-blocking): la's address, or with
 * any_dual all addresses, IPv6 and IPv4 when dual, IPv4 only otherwise.
 * Returns the socket, or -1 with err.
 */
static int listen_open(const struct bind_addr *la, int dual, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, on = 1, v6only;

	memset(&ss, 0, sizeof(ss));
	if (la->any_dual && dual) {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)(void *)&ss;
		a6->sin6_family = AF_INET6;
		a6->sin6_addr = in6addr_any;
		a6->sin6_port = htons(la->port);
		len = sizeof(*a6);
	} else if (la->any_dual) {
		struct sockaddr_in *a4 = (struct sockaddr_in *)(void *)&ss;
		a4->sin_family = AF_INET;
		a4->sin_addr.s_addr = htonl(INADDR_ANY);
		a4->sin_port = htons(la->port);
		len = sizeof(*a4);
	} else {
		memcpy(&ss, &la->ss, sizeof(ss));
		len = la->v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		return -1;
	}
	/* As libmicrohttpd's own listening socket: restartable at once, v6-only unless dual. */
	v6only = !(la->any_dual && dual);
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
	    (ss.ss_family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only)) != 0) ||
	    bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, SOMAXCONN) != 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The acceptor thread: accepts every connection of the webhook port and hands
 * it to the library with MHD_add_connection, which gives it to the network
 * thread numbered (socket mod threads); descriptors are handed out lowest
 * first, so connections opened together go round the threads. Left to the
 * library, every thread of its pool polls the one listening socket and the
 * first awake takes up to ten at a time: in half of the bench runs all 64
 * connections landed on one of four threads, which then used a whole core
 * while the others idled. The accept policy runs here, on this one thread.
 */
static void *acceptor_main(void *arg)
{
	struct server *s = arg;
	struct pollfd pfd[2] = {{s->listen_fd, POLLIN, 0}, {s->stop_fd, POLLIN, 0}};
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, n;

	pthread_setname_np(pthread_self(), "distenv-accept");
	for (;;) {
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents != 0)
			break;
		for (n = 0; n < ACCEPT_BURST; n++) {
			len = sizeof(ss);
			fd = accept4(s->listen_fd, (struct sockaddr *)&ss, &len,
			             SOCK_NONBLOCK | SOCK_CLOEXEC);
			if (fd < 0) {
				/* Out of descriptors: the backlog waits instead of a busy loop. */
				if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
				    errno == ENOMEM)
					(void)poll(&pfd[1], 1, ACCEPT_BACKOFF_MS);
				break;
			}
			s->accepting_fd = fd;
			/* Closes fd when refused (by the policy or the library's limit). */
			if (MHD_add_connection(s->daemon, fd, (struct sockaddr *)&ss, len) !=
			    MHD_YES)
				log_kvn(LOG_DEBUG, "connection_not_added", "errno",
				        (long long)errno, LOG_END);
		}
	}
	return NULL;
}

/* Starts the acceptor on s->listen_fd. Returns 0 or -1. */
static int acceptor_start(struct server *s)
{
	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->stop_fd < 0)
		return -1;
	if (pthread_create(&s->acceptor, NULL, acceptor_main, s) != 0)
		return -1;
	s->acceptor_started = 1;
	return 0;
}

/*
 * Stops the acceptor and closes the listening socket: a connection still in
 * the backlog or arriving afterwards is refused at once, instead of
 * completing the TCP handshake and waiting for a TLS handshake that never
 * comes.
 */
static void acceptor_stop(struct server *s)
{
	uint64_t one = 1;

	if (s->acceptor_started) {
		if (write(s->stop_fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
			log_kv(LOG_WARN, "acceptor_stop", "message", strerror(errno), LOG_END);
		pthread_join(s->acceptor, NULL);
		s->acceptor_started = 0;
	}
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	s->stop_fd = -1;
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	s->listen_fd = -1;
}

/*
 * The webhook's daemon: a pool of network threads with no listening socket of
 * its own (the acceptor hands it connections).
 */
static struct MHD_Daemon *daemon_start(struct server *s)
{
	unsigned flags = MHD_USE_TLS | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
	                 MHD_USE_ITC | MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET;

	if (s->pool != NULL)
		flags |= MHD_ALLOW_SUSPEND_RESUME;
	unsigned threads = (unsigned)(s->cfg->threads > 0 ? s->cfg->threads : 1);

	return MHD_start_daemon(
	    flags, 0, accept_policy, s, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s,
	    MHD_OPTION_HTTPS_PRIORITIES, TLS_PRIORITIES, MHD_OPTION_HTTPS_CERT_CALLBACK,
	    cert_callback, MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_THREAD_POOL_SIZE, threads,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s->cfg->idle_timeout_s,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY_BYTES,
	    MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned)((s->max_connections + (long)threads * CONN_HEADROOM_PER_THREAD) *
	               (long)threads * CONN_LIBRARY_FACTOR),
	    MHD_OPTION_END);
}

/*
 * The probe listener's handler: GET /healthz and /readyz over plain HTTP,
 * nothing else. Answered when the headers are in; a body is never read.
 */
static enum MHD_Result probe_request(void *cls, struct MHD_Connection *c, const char *url,
                                     const char *method, const char *version,
                                     const char *upload_data, size_t *upload_data_size,
                                     void **req_cls)
{
	static const char ok[] = "ok\n", draining[] = "draining: shutting down\n",
	                  nf[] = "not found: the probe port serves GET /healthz and /readyz\n";
	struct server *s = cls;
	enum route rt = route_of(url, method);
	const char *body = nf;
	size_t len = sizeof(nf) - 1;
	unsigned status = MHD_HTTP_NOT_FOUND;
	struct MHD_Response *resp;
	enum MHD_Result ret;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)req_cls;
	if (rt == ROUTE_HEALTHZ || (rt == ROUTE_READYZ && !atomic_load(&s->draining))) {
		body = ok;
		len = sizeof(ok) - 1;
		status = MHD_HTTP_OK;
	} else if (rt == ROUTE_READYZ) {
		body = draining;
		len = sizeof(draining) - 1;
		status = MHD_HTTP_SERVICE_UNAVAILABLE;
	}
	/* PERSISTENT: string literals outlive the response. */
	resp = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_PERSISTENT);
	if (resp == NULL)
		return MHD_NO;
	if (MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
	                            "text/plain; charset=utf-8") != MHD_YES) {
		MHD_destroy_response(resp);
		return MHD_NO;
	}
	ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	if (ret == MHD_YES)
		metrics_http_request(metrics_path_of(url), (int)status);
	return ret;
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
	    flags, la->port, NULL, NULL, probe_request, s, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log,
	    s, MHD_OPTION_CONNECTION_LIMIT, (unsigned)PROBE_MAX_CONNECTIONS,
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
			reap(s);
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

/*
 * Makes room for max_connections descriptors: raises the soft open-file limit
 * (up to the hard one) when it is too low, else clamps the connection limit
 * below it and warns. Past the limit accept() fails with EMFILE, which
 * libmicrohttpd retries at once (a busy loop); its own connection limit is
 * checked first. Returns the connection limit to use, or -1 with err.
 */
static long fit_open_files(long want, long threads, int probe, char *err, size_t errlen)
{
	struct rlimit rl;
	rlim_t reserve = (rlim_t)(FD_RESERVE_BASE + FD_RESERVE_PER_THREAD * threads +
	                          (probe ? PROBE_MAX_CONNECTIONS + 4 : 0));
	rlim_t need = (rlim_t)want + reserve, soft;
	long max;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return want; /* nothing known: leave it to the library */
	soft = rl.rlim_cur;
	if (soft != RLIM_INFINITY && soft < need) {
		rl.rlim_cur =
		    rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
		if (rl.rlim_cur > soft && setrlimit(RLIMIT_NOFILE, &rl) == 0) {
			log_kvn(LOG_INFO, "open_file_limit_raised", "from", (long long)soft, "to",
			        (long long)rl.rlim_cur, LOG_END);
			soft = rl.rlim_cur;
		}
	}
	if (soft == RLIM_INFINITY || soft >= need)
		return want;
	if (soft <= reserve) {
		snprintf(err, errlen,
		         "the open-file limit (%llu) leaves no room for connections: raise it "
		         "above %llu (ulimit -n)",
		         (unsigned long long)soft, (unsigned long long)reserve);
		return -1;
	}
	max = (long)(soft - reserve);
	log_kvn(LOG_WARN, "max_connections_clamped", "max_connections", (long long)want,
	        "clamped_to", (long long)max, "open_file_limit", (long long)soft, "hard_limit",
	        (long long)(rl.rlim_max == RLIM_INFINITY ? -1 : (long long)rl.rlim_max), LOG_END);
	return max;
}

int server_run(const struct config *cfg, const struct workload_lookup *lookup, char *err,
               size_t errlen)
{
	struct server s;
	struct bind_addr la;
	struct tlscert *h = NULL;
	sigset_t sigs, oldmask;
	struct sockaddr_storage bound;
	socklen_t bound_len = sizeof(bound);
	long port;
	char when[64], lerr[128];
	int rc = -1, sig = 0, mask_set = 0;
	struct timespec t0;

	memset(&s, 0, sizeof(s));
	s.cfg = cfg;
	s.lookup = lookup;
	s.listen_fd = -1;
	s.stop_fd = -1;
	s.accepting_fd = -1;
	pthread_mutex_init(&s.conns_lock, NULL);

	if (bind_resolve(cfg->listen, &la, err, errlen) != 0)
		goto out_locks;
	if (cfg->max_body_bytes <= 0) {
		snprintf(err, errlen, "max body bytes must be positive");
		goto out_locks;
	}
	if (cfg->max_buffered_bytes <= cfg->max_body_bytes) {
		snprintf(
		    err, errlen,
		    "limits.maxBufferedBodyBytes (%ld) must be larger than limits.maxBodyBytes "
		    "(%ld), or no request of the largest size could ever be read",
		    cfg->max_buffered_bytes, cfg->max_body_bytes);
		goto out_locks;
	}
	if (!MHD_is_feature_supported(MHD_FEATURE_TLS) ||
	    !MHD_is_feature_supported(MHD_FEATURE_HTTPS_CERT_CALLBACK)) {
		snprintf(err, errlen, "libmicrohttpd was built without TLS certificate callbacks");
		goto out_locks;
	}

	s.max_connections =
	    fit_open_files(cfg->max_connections, cfg->threads > 0 ? cfg->threads : 1,
	                   cfg->probe_listen[0] != '\0', err, errlen);
	if (s.max_connections < 0)
		goto out_locks;

	/* The first pair must be good: there is nothing to fall back to. */
	s.certs =
	    tlscert_store_new(cfg->tls_cert, cfg->tls_key, cfg->cert_check_interval_s, err, errlen);
	if (s.certs == NULL || (h = tlscert_store_acquire(s.certs)) == NULL)
		goto out_cert;
	tlscert_format_time(h->not_after, when, sizeof(when));
	if (h->not_after < time(NULL))
		log_kv(LOG_WARN, "certificate_expired", "cert", cfg->tls_cert, "not_after", when,
		       LOG_END);

	/*
	 * Block the signals this thread waits for before any thread starts, so
	 * every thread inherits the mask: SIGTERM and SIGINT stop, SIGHUP asks
	 * for a certificate check.
	 */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	if (pthread_sigmask(SIG_BLOCK, &sigs, &oldmask) != 0) {
		snprintf(err, errlen, "cannot block SIGTERM/SIGINT/SIGHUP");
		goto out_cert;
	}
	mask_set = 1;

	if (lookup != NULL && (s.pool = workpool_start(
	                           (int)(cfg->threads > 0 ? cfg->threads : 1) * WORKERS_PER_THREAD,
	                           cfg->max_queued, run_queued, &s, NULL, 0)) == NULL) {
		snprintf(err, errlen, "cannot start the admission worker threads");
		goto out_pool;
	}

	g_server = &s;
	s.listen_fd = listen_open(&la, 1, lerr, sizeof(lerr));
	if (s.listen_fd < 0 && la.any_dual) {
		/* No IPv6 on this host: all IPv4 addresses instead. */
		log_kv(LOG_WARN, "listen_fallback", "reason", "IPv6 unavailable, IPv4 only",
		       LOG_END);
		s.listen_fd = listen_open(&la, 0, lerr, sizeof(lerr));
	}
	if (s.listen_fd < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s", cfg->listen, lerr);
		goto out_pool;
	}
	s.daemon = daemon_start(&s);
	if (s.daemon == NULL) {
		snprintf(err, errlen, "cannot serve on %s: %s", cfg->listen,
		         s.start_error[0] ? s.start_error : "libmicrohttpd failed to start");
		goto out_pool;
	}
	if (cfg->probe_listen[0] != '\0') {
		struct bind_addr pa;
		if (bind_resolve(cfg->probe_listen, &pa, err, errlen) != 0)
			goto out_daemon;
		s.probe = probe_start(&s, &pa, 1);
		if (s.probe == NULL && pa.any_dual)
			s.probe = probe_start(&s, &pa, 0);
		if (s.probe == NULL) {
			snprintf(
			    err, errlen, "cannot listen for probes on %s: %s", cfg->probe_listen,
			    s.start_error[0] ? s.start_error : "libmicrohttpd failed to start");
			goto out_daemon;
		}
		log_kv(LOG_INFO, "probes_listening", "listen", cfg->probe_listen, "paths",
		       "/healthz,/readyz", LOG_END);
	}
	atomic_store(&s.started, 1);
	if (tlscert_store_watch(s.certs) != 0) {
		snprintf(err, errlen, "cannot start the certificate watcher thread");
		goto out_daemon;
	}
	if (acceptor_start(&s) != 0) {
		snprintf(err, errlen, "cannot start the acceptor thread");
		goto out_daemon;
	}

	port = la.port;
	if (getsockname(s.listen_fd, (struct sockaddr *)&bound, &bound_len) == 0)
		port = ntohs(bound.ss_family == AF_INET6
		                 ? ((struct sockaddr_in6 *)(void *)&bound)->sin6_port
		                 : ((struct sockaddr_in *)(void *)&bound)->sin_port);
	log_kv(LOG_INFO, "listening", "listen", cfg->listen, "tls", TLS_VERSIONS, "cert",
	       cfg->tls_cert, "sha256", h->fingerprint, "not_after", when, LOG_END);
	log_kvn(LOG_INFO, "server_config", "port", (long long)port, "threads",
	        (long long)cfg->threads, "max_connections", (long long)s.max_connections,
	        "idle_timeout_s", (long long)cfg->idle_timeout_s, "header_timeout_s",
	        (long long)cfg->header_timeout_s, "request_timeout_s",
	        (long long)cfg->request_timeout_s, "max_connections_per_ip",
	        (long long)cfg->max_conns_per_ip, "max_body_bytes", (long long)cfg->max_body_bytes,
	        "cert_check_interval_s", (long long)cfg->cert_check_interval_s, LOG_END);

	for (;;) {
		struct timespec tick = {REAP_INTERVAL_MS / 1000,
		                        (REAP_INTERVAL_MS % 1000) * 1000000L};
		sig = sigtimedwait(&sigs, NULL, &tick);
		if (sig < 0) {
			reap(&s); /* EAGAIN: the tick passed (or EINTR) */
			continue;
		}
		if (sig != SIGHUP)
			break;
		tlscert_store_poke(s.certs);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	atomic_store(&s.draining, 1);
	/* Look-ups, those in flight and those queued, end with the drain. */
	kube_set_global_deadline((long long)t0.tv_sec * 1000 + t0.tv_nsec / 1000000 +
	                         cfg->drain_timeout_s * 1000);
	log_kv(LOG_INFO, "drain_start", "signal", strsignal(sig), LOG_END);
	acceptor_stop(&s); /* no new connections, now rather than after the drain */
	drain(&s, &sigs);
	log_kvn(LOG_INFO, "drain_end", "inflight", (long long)atomic_load(&s.inflight),
	        "connections", (long long)atomic_load(&s.open_conns), "millis",
	        (long long)(mono_elapsed_s(&t0) * 1000), LOG_END);
	rc = 0;

out_daemon:
	acceptor_stop(&s);
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
	g_server = NULL;
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
	pthread_mutex_destroy(&s.conns_lock);
	return rc;
}
