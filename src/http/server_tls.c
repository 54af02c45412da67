/*
 * The TLS handshake's waits. libmicrohttpd 0.9.75 in epoll mode keeps a
 * connection on its ready list until its own receive adapter sees EAGAIN;
 * during the handshake GnuTLS reads the socket itself, so a connection
 * waiting for the client's next flight was run again and again, each time
 * re-entering gnutls_handshake, until that flight came or a deadline closed
 * it: one client that sent a ClientHello and stopped held a core. Here every
 * session reads and writes through tls_pull and tls_push. When a read before
 * the client's Finished would wait, the connection is suspended (off the
 * library's epoll set and ready list) and its socket handed to the one
 * handshake-wait thread, which resumes it when the socket is readable, shut
 * down by a deadline, or closed by the client. After the client's Finished
 * the library's readiness tracking is exact again, and nothing waits here.
 *
 * Lock order: wait_lock is never held while calling into the library except
 * for MHD_suspend_connection, on the connection's own network thread, and
 * the library holds none of its locks while it calls us.
 */
#include "server_int.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "metrics.h"

#define WAIT_EVENTS 64 /* events taken per epoll_wait */

/* The stop event's tag in the epoll set (a connection's is its conn_ctx). */
static char stop_tag;

/* Links c into the waiting list (wait_lock held). */
static void waiting_link(struct server *s, struct conn_ctx *c)
{
	c->wait_prev = NULL;
	c->wait_next = s->waiting;
	if (s->waiting != NULL)
		s->waiting->wait_prev = c;
	s->waiting = c;
	c->waiting = 1;
}

/* Unlinks c from the waiting list (wait_lock held). */
static void waiting_unlink(struct server *s, struct conn_ctx *c)
{
	if (c->wait_prev != NULL)
		c->wait_prev->wait_next = c->wait_next;
	else
		s->waiting = c->wait_next;
	if (c->wait_next != NULL)
		c->wait_next->wait_prev = c->wait_prev;
	c->wait_next = c->wait_prev = NULL;
	c->waiting = 0;
}

/*
 * Parks c until its socket has the events asked for (c's network thread,
 * inside gnutls_handshake). The socket is armed first and the connection
 * suspended under wait_lock, so the wait thread, which takes that lock
 * before resuming, never resumes a connection not yet suspended. Returns 0,
 * or -1 when the server is stopping or the socket cannot be watched: the
 * handshake then fails and the library closes the connection.
 */
static int tls_park(struct server *s, struct conn_ctx *c, uint32_t events)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = events | EPOLLRDHUP | EPOLLONESHOT;
	ev.data.ptr = c;
	pthread_mutex_lock(&s->wait_lock);
	if (s->wait_closing || c->mhd == NULL ||
	    epoll_ctl(s->wait_ep, c->watched ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd, &ev) != 0) {
		pthread_mutex_unlock(&s->wait_lock);
		return -1;
	}
	c->watched = 1;
	c->hs_waits++;
	MHD_suspend_connection(c->mhd);
	waiting_link(s, c);
	pthread_mutex_unlock(&s->wait_lock);
	return 0;
}

/*
 * gnutls_pull_func: a read of the connection's socket. Before the client's
 * Finished, a read that would wait parks the connection and still answers
 * EAGAIN (gnutls_handshake returns, the library moves on).
 */
static ssize_t tls_pull(gnutls_transport_ptr_t p, void *buf, size_t len)
{
	struct conn_ctx *c = p;
	ssize_t n = recv(c->fd, buf, len, 0);

	if (atomic_load_explicit(&c->hs_done, memory_order_relaxed))
		return n;
	c->hs_reads++;
	if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
		return n;
	if (tls_park(c->srv, c, EPOLLIN) != 0) {
		errno = ECONNRESET;
		return -1;
	}
	errno = EAGAIN;
	return -1;
}

/* gnutls_vec_push_func: one sendmsg, never raising SIGPIPE (as GnuTLS's own with GNUTLS_NO_SIGNAL).
 */
static ssize_t tls_push(gnutls_transport_ptr_t p, const giovec_t *iov, int iovcnt)
{
	struct conn_ctx *c = p;
	struct msghdr m;

	memset(&m, 0, sizeof(m));
	m.msg_iov = (struct iovec *)(uintptr_t)iov;
	m.msg_iovlen = (size_t)iovcnt;
	return sendmsg(c->fd, &m, MSG_NOSIGNAL);
}

/* gnutls_pull_timeout_func: as GnuTLS's own for a socket (poll for ms). */
static int tls_pull_timeout(gnutls_transport_ptr_t p, unsigned int ms)
{
	struct conn_ctx *c = p;
	struct pollfd pfd = {c->fd, POLLIN, 0};

	return poll(&pfd, 1, ms == GNUTLS_INDEFINITE_TIMEOUT ? -1 : (int)ms);
}

/*
 * gnutls_handshake_hook_func, after each Finished: the client's ends the
 * reads of the handshake. Counts the handshake and the socket reads and
 * waits it took (distenv_tls_handshake_*), which show a loop that spins.
 */
static int tls_hook(gnutls_session_t session, unsigned int htype, unsigned int when,
                    unsigned int incoming, const gnutls_datum_t *msg)
{
	struct conn_ctx *c = gnutls_transport_get_ptr(session);

	(void)when;
	(void)msg;
	if (htype != GNUTLS_HANDSHAKE_FINISHED || !incoming || c == NULL ||
	    atomic_load(&c->hs_done))
		return 0;
	atomic_store(&c->hs_done, 1);
	metrics_tls_handshake(c->hs_reads, c->hs_waits);
	return 0;
}

/* Routes c's session through tls_pull and tls_push (NOTIFY_STARTED, before any handshake). */
void tls_conn_started(struct server *s, struct conn_ctx *c, struct MHD_Connection *connection)
{
	c->srv = s;
	c->mhd = connection;
	if (c->session == NULL || c->fd < 0)
		return;
	gnutls_transport_set_ptr(c->session, c);
	gnutls_transport_set_pull_function(c->session, tls_pull);
	gnutls_transport_set_pull_timeout_function(c->session, tls_pull_timeout);
	gnutls_transport_set_vec_push_function(c->session, tls_push);
	gnutls_handshake_set_hook_function(c->session, GNUTLS_HANDSHAKE_FINISHED, GNUTLS_HOOK_POST,
	                                   tls_hook);
}

/* Resumes every parked connection, its socket shut down first (wait thread, stopping). */
static void resume_all_shut(struct server *s)
{
	struct conn_ctx *c;

	pthread_mutex_lock(&s->wait_lock);
	s->wait_closing = 1;
	while ((c = s->waiting) != NULL) {
		waiting_unlink(s, c);
		shutdown(c->fd, SHUT_RDWR);
		MHD_resume_connection(c->mhd);
	}
	pthread_mutex_unlock(&s->wait_lock);
}

/*
 * The handshake-wait thread: resumes each parked connection whose socket is
 * ready. A parked connection is never closed by the library, so its context
 * lives until it is resumed here.
 */
static void *wait_main(void *arg)
{
	struct server *s = arg;
	struct epoll_event ev[WAIT_EVENTS];
	struct conn_ctx *ready[WAIT_EVENTS];
	int n, i, k;

	pthread_setname_np(pthread_self(), "distenv-tlswait");
	for (;;) {
		n = epoll_wait(s->wait_ep, ev, WAIT_EVENTS, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_kv(LOG_ERROR, "tls_wait_failed", "message", strerror(errno), LOG_END);
			break;
		}
		k = 0;
		pthread_mutex_lock(&s->wait_lock);
		for (i = 0; i < n; i++) {
			struct conn_ctx *c = ev[i].data.ptr;
			if ((void *)c == (void *)&stop_tag || !c->waiting)
				continue;
			waiting_unlink(s, c);
			ready[k++] = c;
		}
		pthread_mutex_unlock(&s->wait_lock);
		for (i = 0; i < k; i++)
			MHD_resume_connection(ready[i]->mhd);
		for (i = 0; i < n; i++)
			if (ev[i].data.ptr == (void *)&stop_tag)
				goto out;
	}
out:
	resume_all_shut(s);
	return NULL;
}

/* Starts the handshake-wait thread. Returns 0 or -1. */
int tls_wait_start(struct server *s)
{
	struct epoll_event ev;

	s->wait_ep = epoll_create1(EPOLL_CLOEXEC);
	s->wait_stop = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->wait_ep < 0 || s->wait_stop < 0)
		return -1;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.ptr = &stop_tag;
	if (epoll_ctl(s->wait_ep, EPOLL_CTL_ADD, s->wait_stop, &ev) != 0)
		return -1;
	if (pthread_create(&s->waiter, NULL, wait_main, s) != 0)
		return -1;
	s->waiter_started = 1;
	return 0;
}

/*
 * Stops the handshake-wait thread before the daemon stops (which must find
 * no connection suspended): every connection still parked is resumed with its
 * socket shut down, and no connection parks from then on.
 */
void tls_wait_stop(struct server *s)
{
	uint64_t one = 1;

	if (s->waiter_started) {
		if (write(s->wait_stop, &one, sizeof(one)) != (ssize_t)sizeof(one))
			log_kv(LOG_WARN, "tls_wait_stop", "message", strerror(errno), LOG_END);
		pthread_join(s->waiter, NULL);
		s->waiter_started = 0;
	} else {
		resume_all_shut(s);
	}
	if (s->wait_stop >= 0)
		close(s->wait_stop);
	if (s->wait_ep >= 0)
		close(s->wait_ep);
	s->wait_stop = s->wait_ep = -1;
}
