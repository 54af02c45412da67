/*
 * Sockets and connections of the webhook port: the listening socket and the
 * acceptor thread that hands its connections to libmicrohttpd, the registry
 * of live connections (per-address and total limits, eviction, deadlines),
 * the certificate each TLS connection holds, and the open-file limit. The
 * registry (struct server's conns) is this file's: others reach a connection
 * only through conn_of and conn_enter; a conn_ctx is freed here when its
 * connection closes.
 */
#include "server_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "listenaddr.h"
#include "log.h"
#include "metrics.h"
#include "tlscert.h"
#include "mono.h"

/*
 * Descriptors kept free of connections: stdio, listen sockets, one epoll and
 * one event fd per network thread, the certificate and /proc reads, and the
 * look-up workers' API connections.
 */
#define FD_RESERVE_BASE        32
#define FD_RESERVE_PER_THREAD  (2 + WORKERS_PER_THREAD + CONN_HEADROOM_PER_THREAD)
#define LIMIT_WARN_INTERVAL_MS 10000 /* the connection-limit warning, at most this often */
#define PENDING_MAX_MS         2000  /* an accepted connection not started by then was dropped */
#define ACCEPT_BURST           64    /* accepts per wake-up of the acceptor */
#define ACCEPT_BACKOFF_MS      50    /* the pause after accept fails for want of descriptors */

/*
 * GnuTLS's certificate callback carries no closure, so the one server of the
 * process is reachable through this pointer while server_run runs.
 */
static struct server *g_server;

/* Makes s the server conn_cert_callback serves (NULL: none, every handshake refused). */
void conn_cert_owner(struct server *s)
{
	g_server = s;
}

/*
 * gnutls_certificate_retrieve_function2: called on each handshake. Hands out
 * the current holder and records it in the connection's context, which keeps
 * it alive until the connection closes.
 */
int conn_cert_callback(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
                       const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                       gnutls_pcert_st **pcert, unsigned int *pcert_length,
                       gnutls_privkey_t *privkey)
{
	struct server *s = g_server;
	struct MHD_Connection *connection = gnutls_session_get_ptr(session);
	struct conn_ctx *c = connection != NULL ? conn_of(connection) : NULL;
	struct tlscert *h, *old;

	(void)req_ca_rdn;
	(void)nreqs;
	(void)pk_algos;
	(void)pk_algos_length;
	/*
	 * The session's pointer is its connection (libmicrohttpd sets it), whose
	 * context is ours; without one, refuse rather than hand out an unowned
	 * reference. The holder is read and written on the connection's network
	 * thread only (here and at its close).
	 */
	if (s == NULL || c == NULL || c->session != session)
		return -1;
	h = tlscert_store_acquire(s->certs);
	if (h == NULL)
		return -1;
	old = c->holder; /* a renegotiation on the same connection */
	c->holder = h;
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
void conn_enter(struct conn_ctx *c, enum conn_phase p)
{
	if (c == NULL)
		return;
	atomic_store(&c->since_ms, mono_ms()); /* before phase: conn_reap reads phase first */
	atomic_store(&c->phase, (int)p);
}

/* The conn_ctx of a connection, or NULL. */
struct conn_ctx *conn_of(struct MHD_Connection *connection)
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
 * the limits count it before its network thread starts it (conn_on_notify
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
	c->accepted_ms = atomic_load(&c->since_ms);
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
enum MHD_Result conn_accept_policy(void *cls, const struct sockaddr *addr, socklen_t addrlen)
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
void conn_reap(struct server *s)
{
	static const enum metrics_timeout which[CONN_PHASE_COUNT] = {
	    METRICS_TIMEOUT_HEAD, METRICS_TIMEOUT_BODY, METRICS_TIMEOUT_COUNT,
	    METRICS_TIMEOUT_IDLE};
	long long now = mono_ms(), limit_ms[CONN_PHASE_COUNT];
	long long hs_ms = s->cfg->handshake_timeout_s * 1000;
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
		/* The handshake's own deadline, from the accept (a parked connection has no other).
		 */
		if (!atomic_load(&c->hs_done) && now - c->accepted_ms >= hs_ms) {
			conn_shut(s, c);
			metrics_conn_timeout(METRICS_TIMEOUT_HANDSHAKE);
			continue;
		}
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

/*
 * MHD_NotifyConnectionCallback: lists a connection when its network thread
 * starts it (claiming the pending entry the accept policy made), and unlists
 * and frees it, with its certificate holder, when it closes.
 */
void conn_on_notify(void *cls, struct MHD_Connection *connection, void **socket_context,
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
		/* Without one the handshake fails in conn_cert_callback. */
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
			tls_conn_started(s, c, connection);
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
		c->accepted_ms = atomic_load(&c->since_ms);
		pthread_mutex_lock(&s->conns_lock);
		c->next = s->conns;
		if (s->conns != NULL)
			s->conns->prev = c;
		s->conns = c;
		pthread_mutex_unlock(&s->conns_lock);
		*socket_context = c;
		tls_conn_started(s, c, connection);
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

/* Parses and resolves spec (port 0: the kernel picks). Returns 0 or -1 with err. */
int listen_resolve(const char *spec, struct bind_addr *ba, char *err, size_t errlen)
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

/*
 * Opens the webhook's listening socket (non-blocking): la's address, or with
 * any_dual all addresses, IPv6 and IPv4 when dual, IPv4 only otherwise.
 * Returns the socket, or -1 with err.
 */
int listen_open(const struct bind_addr *la, int dual, char *err, size_t errlen)
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
int acceptor_start(struct server *s)
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
void acceptor_stop(struct server *s)
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
 * Makes room for max_connections descriptors: raises the soft open-file limit
 * (up to the hard one) when it is too low, else clamps the connection limit
 * below it and warns. Past the limit accept() fails with EMFILE, which
 * libmicrohttpd retries at once (a busy loop); its own connection limit is
 * checked first. Returns the connection limit to use, or -1 with err.
 */
long fd_fit_connections(long want, long threads, int probe, char *err, size_t errlen)
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
