/*
 * loadgen: an HTTPS/1.1 keep-alive load generator for POST bodies (OpenSSL,
 * epoll, non-blocking). Two modes:
 *   closed loop (default): every connection sends its next request as soon as
 *     the answer to the last one is in; measures the most requests per second.
 *   open loop (-R RATE): requests are due at a fixed rate whatever the server
 *     does; latency counts from the moment a request was due, so a stall shows
 *     in the percentiles instead of hiding (no coordinated omission, as wrk2).
 * Every answer is checked: status (default 200) and, for AdmissionReviews, that
 * the response echoes the request's uid. Prints a summary and one JSON line.
 *
 *   loadgen -p PORT [-H HOST] [-P PATH] -b FILE [-b FILE]... [-c CONNS] [-t THREADS]
 *           (-n REQUESTS | -d SECONDS) [-R RATE] [-r REQS_PER_CONN] [-s STATUS]
 *           [--no-uid-check] [--sni NAME] [--tls-max 1.2|1.3] [--timeout MS]
 *           [--certs] [--label TEXT] [--max-seconds S]
 *
 * Exit status: 0 when every request was answered as expected, 1 otherwise,
 * 2 on bad usage. Owns everything it allocates.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#define MAX_BODIES   16
#define MAX_CONNS    4096
#define RESP_MAX     (16 * 1024 * 1024)
#define MAX_CERTS    8

enum cstate { C_CONNECTING, C_HANDSHAKE, C_IDLE, C_WRITING, C_READING, C_DEAD };

struct body {
	char *req;     /* the whole request: head and body */
	size_t req_len;
	char uid[160]; /* "\"uid\":\"...\"" as it must appear in the answer, "" for none */
};

struct conn {
	int fd;
	SSL *ssl;
	enum cstate st;
	const struct body *b;
	size_t woff;
	char *rbuf;
	size_t rlen, rcap;
	double due;   /* when the current request was due (open loop) or sent (closed) */
	long served;  /* requests answered on this TCP connection */
	unsigned ev;  /* epoll events registered */
	int retired;  /* no more requests: count reached */
};

struct stats {
	uint32_t *lat_us; /* one per answered request */
	size_t n, cap;
	long ok, bad_status, bad_body, io_errors, connect_errors, tls_errors, timeouts;
	long connects, reconnects_by_server;
	char cert_fp[MAX_CERTS][65];
	long cert_count[MAX_CERTS];
	int n_certs;
};

struct opts {
	const char *host, *path, *sni;
	int port;
	struct body bodies[MAX_BODIES];
	int n_bodies;
	int conns, threads;
	long requests;  /* 0: use duration */
	double seconds; /* 0: use requests */
	double rate;    /* 0: closed loop */
	long per_conn;  /* 0: keep the connection for the whole run */
	int status;
	int uid_check;
	int tls_max;    /* 0, TLS1_2_VERSION or TLS1_3_VERSION */
	long timeout_ms;
	int certs;
	const char *label;
	double max_seconds; /* bound on a counted run */
};

static struct opts o;
static SSL_CTX *g_ctx;
static atomic_long g_tickets;  /* requests handed out so far */
static atomic_int g_stop;
static double g_t0, g_deadline;
static struct sockaddr_in g_addr;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *msg)
{
	fprintf(stderr, "loadgen: %s\n", msg);
	exit(2);
}

/* ---- bodies ------------------------------------------------------------------ */

static void load_body(const char *path, struct body *b)
{
	FILE *f = fopen(path, "rb");
	char *data, head[512], *u, *e;
	long n;
	int hl;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "loadgen: cannot read %s\n", path);
		exit(2);
	}
	data = malloc((size_t)n + 1);
	if (data == NULL || fread(data, 1, (size_t)n, f) != (size_t)n)
		die("cannot read a body file");
	data[n] = '\0';
	fclose(f);
	hl = snprintf(head, sizeof(head),
	              "POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: distenv-loadgen\r\n"
	              "Content-Type: application/json\r\nAccept: application/json\r\n"
	              "Content-Length: %ld\r\n\r\n",
	              o.path, o.sni, n);
	b->req = malloc((size_t)hl + (size_t)n);
	if (b->req == NULL)
		die("out of memory");
	memcpy(b->req, head, (size_t)hl);
	memcpy(b->req + hl, data, (size_t)n);
	b->req_len = (size_t)hl + (size_t)n;
	b->uid[0] = '\0';
	/* request.uid is the first "uid" of an AdmissionReview as the API server writes it. */
	u = strstr(data, "\"uid\":\"");
	if (u != NULL && (e = strchr(u + 7, '"')) != NULL && e - u < (long)sizeof(b->uid) - 1) {
		memcpy(b->uid, u, (size_t)(e - u + 1));
		b->uid[e - u + 1] = '\0';
	}
	free(data);
}

/* ---- statistics -------------------------------------------------------------- */

static void stat_lat(struct stats *s, double secs)
{
	double us = secs * 1e6;

	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 65536;
		uint32_t *p = realloc(s->lat_us, cap * sizeof(*p));
		if (p == NULL)
			die("out of memory for latencies");
		s->lat_us = p;
		s->cap = cap;
	}
	s->lat_us[s->n++] = us < 0 ? 0 : us > 4e9 ? 4000000000u : (uint32_t)us;
}

static void stat_cert(struct stats *s, SSL *ssl)
{
	X509 *x = SSL_get1_peer_certificate(ssl);
	unsigned char md[32];
	unsigned mdlen = 0, i;
	char fp[65];
	int k;

	if (x == NULL)
		return;
	if (X509_digest(x, EVP_sha256(), md, &mdlen) == 1) {
		for (i = 0; i < mdlen && i < 32; i++)
			snprintf(fp + 2 * i, 3, "%02x", md[i]);
		fp[2 * i] = '\0';
		for (k = 0; k < s->n_certs && strcmp(s->cert_fp[k], fp) != 0; k++)
			;
		if (k == s->n_certs && k < MAX_CERTS) {
			snprintf(s->cert_fp[k], sizeof(s->cert_fp[k]), "%s", fp);
			s->n_certs++;
		}
		if (k < MAX_CERTS)
			s->cert_count[k]++;
	}
	X509_free(x);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(const uint32_t *v, size_t n, double p)
{
	size_t i;

	if (n == 0)
		return 0;
	i = (size_t)(p / 100.0 * (double)n);
	if (i >= n)
		i = n - 1;
	return (double)v[i];
}

/* ---- connections -------------------------------------------------------------- */

struct worker {
	pthread_t th;
	int id, epfd;
	struct conn *c;
	int nc;
	struct stats st;
	/* open loop */
	double next_due;
	long backlog;     /* due requests waiting for a free connection */
	double *backlog_due;
	size_t bl_head, bl_cap;
	long issued;      /* requests this worker has scheduled */
	long connect_streak; /* connection attempts failed in a row */
};

static void set_events(struct worker *w, struct conn *c, unsigned ev)
{
	struct epoll_event e;

	if (c->ev == ev)
		return;
	memset(&e, 0, sizeof(e));
	e.events = ev;
	e.data.ptr = c;
	if (c->ev == 0 && ev != 0)
		epoll_ctl(w->epfd, EPOLL_CTL_ADD, c->fd, &e);
	else if (ev == 0)
		epoll_ctl(w->epfd, EPOLL_CTL_DEL, c->fd, &e);
	else
		epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &e);
	c->ev = ev;
}

static void conn_close(struct worker *w, struct conn *c)
{
	if (c->fd >= 0) {
		set_events(w, c, 0);
		if (c->ssl != NULL) {
			SSL_set_quiet_shutdown(c->ssl, 1);
			SSL_free(c->ssl);
			c->ssl = NULL;
		}
		close(c->fd);
		c->fd = -1;
	}
	c->st = C_DEAD;
	c->rlen = 0;
	c->served = 0;
}

static int conn_open(struct worker *w, struct conn *c)
{
	int fd, one = 1;

	c->fd = -1;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&g_addr, sizeof(g_addr)) != 0 && errno != EINPROGRESS) {
		close(fd);
		w->st.connect_errors++;
		w->connect_streak++;
		return -1;
	}
	c->fd = fd;
	c->ev = 0;
	c->st = C_CONNECTING;
	c->rlen = 0;
	c->served = 0;
	w->st.connects++;
	set_events(w, c, EPOLLOUT);
	return 0;
}

/* Takes the next request ticket; 0 when the run's count is used up. */
static int take_ticket(void)
{
	if (atomic_load(&g_stop))
		return 0;
	if (o.requests > 0 && atomic_fetch_add(&g_tickets, 1) >= o.requests)
		return 0;
	return 1;
}

static void conn_fail(struct worker *w, struct conn *c, long *counter);

static void conn_send(struct worker *w, struct conn *c, double due)
{
	long k = atomic_load(&g_tickets);

	c->b = &o.bodies[(unsigned long)k % (unsigned long)o.n_bodies];
	c->woff = 0;
	c->rlen = 0;
	c->due = due;
	c->st = C_WRITING;
	set_events(w, c, EPOLLOUT);
}

/* A connection is idle: give it work, or leave it parked. */
static void conn_next(struct worker *w, struct conn *c)
{
	if (o.rate > 0) {
		if (w->backlog > 0) {
			double due = w->backlog_due[w->bl_head];
			w->bl_head = (w->bl_head + 1) % w->bl_cap;
			w->backlog--;
			conn_send(w, c, due);
		} else {
			set_events(w, c, EPOLLIN); /* notice a close by the server */
		}
		return;
	}
	if (!take_ticket()) {
		c->retired = 1;
		set_events(w, c, 0);
		return;
	}
	conn_send(w, c, now_s());
}

static void conn_fail(struct worker *w, struct conn *c, long *counter)
{
	if (counter != NULL)
		(*counter)++;
	conn_close(w, c);
	if (!atomic_load(&g_stop) && !c->retired) {
		if (conn_open(w, c) != 0)
			c->st = C_DEAD;
	}
}

/* Parses a complete answer in c->rbuf. Returns its length, 0 when more is needed, -1 if bad. */
static long parse_answer(struct conn *c, int *status, int *close_after, const char **body,
                         size_t *blen)
{
	char *end = memmem(c->rbuf, c->rlen, "\r\n\r\n", 4), *p, *line_end;
	long cl = -1;
	size_t hl;

	if (end == NULL)
		return c->rlen > 65536 ? -1 : 0;
	hl = (size_t)(end - c->rbuf) + 4;
	if (c->rlen < 12 || memcmp(c->rbuf, "HTTP/1.", 7) != 0)
		return -1;
	*status = atoi(c->rbuf + 9);
	*close_after = 0;
	for (p = c->rbuf; p < end; p = line_end + 2) {
		line_end = memmem(p, (size_t)(end + 2 - p), "\r\n", 2);
		if (line_end == NULL)
			break;
		if (strncasecmp(p, "Content-Length:", 15) == 0)
			cl = strtol(p + 15, NULL, 10);
		else if (strncasecmp(p, "Connection:", 11) == 0 &&
		         memmem(p, (size_t)(line_end - p), "close", 5) != NULL)
			*close_after = 1;
	}
	if (cl < 0 || cl > RESP_MAX)
		return -1;
	if (c->rlen < hl + (size_t)cl)
		return 0;
	*body = c->rbuf + hl;
	*blen = (size_t)cl;
	return (long)(hl + (size_t)cl);
}

static void on_answer(struct worker *w, struct conn *c, int status, const char *body, size_t blen,
                      int close_after)
{
	double t = now_s();

	stat_lat(&w->st, t - c->due);
	if (status != o.status)
		w->st.bad_status++;
	else if (o.uid_check && c->b->uid[0] != '\0' &&
	         memmem(body, blen, c->b->uid, strlen(c->b->uid)) == NULL)
		w->st.bad_body++;
	else
		w->st.ok++;
	c->served++;
	c->rlen = 0;
	c->st = C_IDLE;
	if (close_after || (o.per_conn > 0 && c->served >= o.per_conn)) {
		if (close_after)
			w->st.reconnects_by_server++;
		conn_close(w, c);
		if (!atomic_load(&g_stop) && !c->retired && conn_open(w, c) != 0)
			c->st = C_DEAD;
		return;
	}
	conn_next(w, c);
}

static void do_io(struct worker *w, struct conn *c)
{
	int r, e, status, close_after;
	long used;
	const char *body;
	size_t blen;

	for (;;) {
		switch (c->st) {
		case C_CONNECTING: {
			int err = 0;
			socklen_t l = sizeof(err);
			getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &l);
			if (err != 0) {
				conn_close(w, c);
				w->st.connect_errors++;
				w->connect_streak++;
				c->st = C_DEAD;
				return;
			}
			c->ssl = SSL_new(g_ctx);
			if (c->ssl == NULL)
				die("SSL_new");
			SSL_set_fd(c->ssl, c->fd);
			SSL_set_tlsext_host_name(c->ssl, o.sni);
			SSL_set_connect_state(c->ssl);
			c->st = C_HANDSHAKE;
			break;
		}
		case C_HANDSHAKE:
			r = SSL_do_handshake(c->ssl);
			if (r == 1) {
				w->connect_streak = 0;
				if (o.certs)
					stat_cert(&w->st, c->ssl);
				c->st = C_IDLE;
				conn_next(w, c);
				if (c->st != C_WRITING)
					return;
				break;
			}
			e = SSL_get_error(c->ssl, r);
			if (e == SSL_ERROR_WANT_READ) {
				set_events(w, c, EPOLLIN);
				return;
			}
			if (e == SSL_ERROR_WANT_WRITE) {
				set_events(w, c, EPOLLOUT);
				return;
			}
			ERR_clear_error();
			conn_fail(w, c, &w->st.tls_errors);
			return;
		case C_WRITING:
			r = SSL_write(c->ssl, c->b->req + c->woff, (int)(c->b->req_len - c->woff));
			if (r > 0) {
				c->woff += (size_t)r;
				if (c->woff == c->b->req_len) {
					c->st = C_READING;
					set_events(w, c, EPOLLIN);
				}
				break;
			}
			e = SSL_get_error(c->ssl, r);
			if (e == SSL_ERROR_WANT_WRITE) {
				set_events(w, c, EPOLLOUT);
				return;
			}
			if (e == SSL_ERROR_WANT_READ) {
				set_events(w, c, EPOLLIN);
				return;
			}
			ERR_clear_error();
			conn_fail(w, c, &w->st.io_errors);
			return;
		case C_READING:
		case C_IDLE:
			if (c->rcap - c->rlen < 16384) {
				size_t cap = c->rcap ? c->rcap * 2 : 65536;
				char *p;
				if (cap > RESP_MAX + 65536) {
					conn_fail(w, c, &w->st.io_errors);
					return;
				}
				p = realloc(c->rbuf, cap);
				if (p == NULL)
					die("out of memory");
				c->rbuf = p;
				c->rcap = cap;
			}
			r = SSL_read(c->ssl, c->rbuf + c->rlen, (int)(c->rcap - c->rlen));
			if (r > 0) {
				if (c->st == C_IDLE) {
					/* Bytes nobody asked for. */
					conn_fail(w, c, &w->st.io_errors);
					return;
				}
				c->rlen += (size_t)r;
				used = parse_answer(c, &status, &close_after, &body, &blen);
				if (used < 0) {
					conn_fail(w, c, &w->st.io_errors);
					return;
				}
				if (used > 0) {
					if ((size_t)used != c->rlen) {
						conn_fail(w, c, &w->st.io_errors);
						return;
					}
					on_answer(w, c, status, body, blen, close_after);
					if (c->st != C_WRITING)
						return;
				}
				break;
			}
			e = SSL_get_error(c->ssl, r);
			if (e == SSL_ERROR_WANT_READ) {
				set_events(w, c, EPOLLIN);
				return;
			}
			if (e == SSL_ERROR_WANT_WRITE) {
				set_events(w, c, EPOLLOUT);
				return;
			}
			ERR_clear_error();
			if (c->st == C_IDLE) {
				/* The server closed an idle keep-alive connection: reopen. */
				w->st.reconnects_by_server++;
				conn_fail(w, c, NULL);
			} else {
				conn_fail(w, c, &w->st.io_errors);
			}
			return;
		case C_DEAD:
			return;
		}
	}
}

/* Open loop: schedule every request that has come due. */
static void schedule_due(struct worker *w, double t)
{
	long total = o.requests > 0 ? o.requests : (long)(o.rate * o.seconds);
	int i;

	while (w->next_due <= t && w->issued < total && !atomic_load(&g_stop)) {
		struct conn *idle = NULL;
		for (i = 0; i < w->nc; i++)
			if (w->c[i].st == C_IDLE) {
				idle = &w->c[i];
				break;
			}
		if (idle != NULL) {
			conn_send(w, idle, w->next_due);
			do_io(w, idle);
		} else {
			if ((size_t)w->backlog == w->bl_cap) {
				size_t cap = w->bl_cap ? w->bl_cap * 2 : 1024, k;
				double *p = malloc(cap * sizeof(*p));
				if (p == NULL)
					die("out of memory");
				for (k = 0; k < (size_t)w->backlog; k++)
					p[k] = w->backlog_due[(w->bl_head + k) % w->bl_cap];
				free(w->backlog_due);
				w->backlog_due = p;
				w->bl_head = 0;
				w->bl_cap = cap;
			}
			w->backlog_due[(w->bl_head + (size_t)w->backlog) % w->bl_cap] = w->next_due;
			w->backlog++;
		}
		w->issued++;
		atomic_fetch_add(&g_tickets, 1);
		w->next_due = g_t0 + (double)w->issued / o.rate;
	}
}

static int worker_busy(struct worker *w)
{
	int i;

	for (i = 0; i < w->nc; i++)
		if (w->c[i].st == C_WRITING || w->c[i].st == C_READING ||
		    w->c[i].st == C_HANDSHAKE || w->c[i].st == C_CONNECTING)
			return 1;
	return 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct epoll_event evs[256];
	int i, n;
	struct timespec wait_ts;
	double t, total_deadline;
	long total = o.rate > 0 ? (o.requests > 0 ? o.requests : (long)(o.rate * o.seconds)) : 0;

	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	for (i = 0; i < w->nc; i++)
		conn_open(w, &w->c[i]);
	w->next_due = g_t0;
	/* Hard stop: the duration (or a generous bound for counted runs) plus the timeout. */
	total_deadline = g_deadline + (double)o.timeout_ms / 1000.0;
	for (;;) {
		t = now_s();
		if (o.rate > 0)
			schedule_due(w, t);
		if (t >= g_deadline)
			atomic_store(&g_stop, 1);
		if (atomic_load(&g_stop) && !worker_busy(w))
			break;
		if (o.rate > 0 && w->issued >= total && w->backlog == 0 && !worker_busy(w))
			break;
		if (o.rate == 0 && o.requests > 0 && atomic_load(&g_tickets) >= o.requests &&
		    !worker_busy(w))
			break;
		if (t >= total_deadline) {
			for (i = 0; i < w->nc; i++)
				if (w->c[i].st == C_WRITING || w->c[i].st == C_READING)
					w->st.timeouts++;
			break;
		}
		/* Nobody listens any more: stop rather than spin. */
		if (w->connect_streak > 200) {
			atomic_store(&g_stop, 1);
			for (i = 0; i < w->nc; i++)
				if (w->c[i].st == C_DEAD)
					w->c[i].retired = 1;
		}
		/* A connection that could not be opened: try again (counted as an error). */
		for (i = 0; i < w->nc; i++)
			if (w->c[i].st == C_DEAD && !w->c[i].retired && !atomic_load(&g_stop)) {
				if (conn_open(w, &w->c[i]) != 0)
					usleep(1000);
			}
		/* Sleep until the next request is due (to the microsecond: no spinning). */
		wait_ts.tv_sec = 0;
		wait_ts.tv_nsec = 50000000L;
		if (o.rate > 0) {
			double d = w->next_due - now_s();
			if (d <= 0)
				wait_ts.tv_nsec = 0;
			else if (d < 0.05)
				wait_ts.tv_nsec = (long)(d * 1e9);
		}
		n = epoll_pwait2(w->epfd, evs, 256, &wait_ts, NULL);
		for (i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;
			if (c->st == C_IDLE && o.rate > 0 && (evs[i].events & (EPOLLIN | EPOLLHUP))) {
				do_io(w, c); /* reads the close */
				continue;
			}
			do_io(w, c);
		}
		/* Requests stuck longer than the timeout. */
		t = now_s();
		for (i = 0; i < w->nc; i++) {
			struct conn *c = &w->c[i];
			if ((c->st == C_READING || c->st == C_WRITING) &&
			    (t - c->due) * 1000.0 > (double)o.timeout_ms)
				conn_fail(w, c, &w->st.timeouts);
		}
	}
	for (i = 0; i < w->nc; i++) {
		conn_close(w, &w->c[i]);
		free(w->c[i].rbuf);
	}
	close(w->epfd);
	free(w->backlog_due);
	return NULL;
}

/* ---- main ---------------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr,
	        "usage: loadgen -p PORT [-H HOST] [-P PATH] -b FILE... [-c CONNS] [-t THREADS]\n"
	        "               (-n REQUESTS | -d SECONDS) [-R RATE] [-r REQS_PER_CONN]\n"
	        "               [-s STATUS] [--no-uid-check] [--sni NAME] [--tls-max 1.2|1.3]\n"
	        "               [--timeout MS] [--certs] [--label TEXT] [--max-seconds S]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct worker *ws;
	struct stats all;
	const char *files[MAX_BODIES];
	int nf = 0, i, k, per, rest, rc;
	double t_end, secs;
	long answered, failed;

	memset(&o, 0, sizeof(o));
	o.host = "127.0.0.1";
	o.path = "/mutate";
	o.sni = "distenv.distenv-system.svc";
	o.conns = 1;
	o.threads = 1;
	o.status = 200;
	o.uid_check = 1;
	o.timeout_ms = 10000;
	o.label = "";
	o.max_seconds = 900;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED() do { if (v == NULL) usage(); i++; } while (0)
		if (strcmp(a, "-p") == 0) { NEED(); o.port = atoi(v); }
		else if (strcmp(a, "-H") == 0) { NEED(); o.host = v; }
		else if (strcmp(a, "-P") == 0) { NEED(); o.path = v; }
		else if (strcmp(a, "-b") == 0) { NEED(); if (nf < MAX_BODIES) files[nf++] = v; }
		else if (strcmp(a, "-c") == 0) { NEED(); o.conns = atoi(v); }
		else if (strcmp(a, "-t") == 0) { NEED(); o.threads = atoi(v); }
		else if (strcmp(a, "-n") == 0) { NEED(); o.requests = atol(v); }
		else if (strcmp(a, "-d") == 0) { NEED(); o.seconds = atof(v); }
		else if (strcmp(a, "-R") == 0) { NEED(); o.rate = atof(v); }
		else if (strcmp(a, "-r") == 0) { NEED(); o.per_conn = atol(v); }
		else if (strcmp(a, "-s") == 0) { NEED(); o.status = atoi(v); }
		else if (strcmp(a, "--sni") == 0) { NEED(); o.sni = v; }
		else if (strcmp(a, "--timeout") == 0) { NEED(); o.timeout_ms = atol(v); }
		else if (strcmp(a, "--label") == 0) { NEED(); o.label = v; }
		else if (strcmp(a, "--max-seconds") == 0) { NEED(); o.max_seconds = atof(v); }
		else if (strcmp(a, "--tls-max") == 0) {
			NEED();
			o.tls_max = strcmp(v, "1.2") == 0 ? TLS1_2_VERSION : TLS1_3_VERSION;
		} else if (strcmp(a, "--no-uid-check") == 0) o.uid_check = 0;
		else if (strcmp(a, "--certs") == 0) o.certs = 1;
		else usage();
#undef NEED
	}
	if (o.port <= 0 || o.port > 65535 || nf == 0 || o.conns < 1 || o.conns > MAX_CONNS ||
	    o.threads < 1 || (o.requests <= 0 && o.seconds <= 0) || o.timeout_ms < 1)
		usage();
	if (o.rate > 0)
		o.threads = 1; /* one scheduler keeps the due times exact */
	if (o.threads > o.conns)
		o.threads = o.conns;
	for (k = 0; k < nf; k++)
		load_body(files[k], &o.bodies[k]);
	o.n_bodies = nf;

	memset(&g_addr, 0, sizeof(g_addr));
	g_addr.sin_family = AF_INET;
	g_addr.sin_port = htons((uint16_t)o.port);
	if (inet_pton(AF_INET, o.host, &g_addr.sin_addr) != 1)
		die("-H must be an IPv4 address");
	signal(SIGPIPE, SIG_IGN);

	g_ctx = SSL_CTX_new(TLS_client_method());
	if (g_ctx == NULL)
		die("SSL_CTX_new");
	SSL_CTX_set_min_proto_version(g_ctx, TLS1_2_VERSION);
	if (o.tls_max)
		SSL_CTX_set_max_proto_version(g_ctx, o.tls_max);
	SSL_CTX_set_verify(g_ctx, SSL_VERIFY_NONE, NULL); /* load, not trust: the tests check certs */
	SSL_CTX_set_mode(g_ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
	                            SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_session_cache_mode(g_ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_alpn_protos(g_ctx, (const unsigned char *)"\x08http/1.1", 9);

	ws = calloc((size_t)o.threads, sizeof(*ws));
	if (ws == NULL)
		die("out of memory");
	per = o.conns / o.threads;
	rest = o.conns % o.threads;
	g_t0 = now_s();
	g_deadline = g_t0 + (o.seconds > 0 ? o.seconds : o.max_seconds);
	for (i = 0; i < o.threads; i++) {
		ws[i].id = i;
		ws[i].nc = per + (i < rest);
		ws[i].c = calloc((size_t)ws[i].nc, sizeof(struct conn));
		if (ws[i].c == NULL)
			die("out of memory");
		for (k = 0; k < ws[i].nc; k++)
			ws[i].c[k].fd = -1;
		if (pthread_create(&ws[i].th, NULL, worker_main, &ws[i]) != 0)
			die("pthread_create");
	}
	memset(&all, 0, sizeof(all));
	for (i = 0; i < o.threads; i++) {
		struct stats *s = &ws[i].st;
		pthread_join(ws[i].th, NULL);
		all.ok += s->ok;
		all.bad_status += s->bad_status;
		all.bad_body += s->bad_body;
		all.io_errors += s->io_errors;
		all.connect_errors += s->connect_errors;
		all.tls_errors += s->tls_errors;
		all.timeouts += s->timeouts;
		all.connects += s->connects;
		all.reconnects_by_server += s->reconnects_by_server;
		for (k = 0; k < s->n_certs; k++) {
			int j;
			for (j = 0; j < all.n_certs && strcmp(all.cert_fp[j], s->cert_fp[k]); j++)
				;
			if (j == all.n_certs && j < MAX_CERTS)
				strcpy(all.cert_fp[all.n_certs++], s->cert_fp[k]);
			if (j < MAX_CERTS)
				all.cert_count[j] += s->cert_count[k];
		}
		if (all.n + s->n > all.cap) {
			all.cap = all.n + s->n;
			all.lat_us = realloc(all.lat_us, all.cap * sizeof(uint32_t));
			if (all.lat_us == NULL && all.cap > 0)
				die("out of memory");
		}
		if (s->n)
			memcpy(all.lat_us + all.n, s->lat_us, s->n * sizeof(uint32_t));
		all.n += s->n;
		free(s->lat_us);
		free(ws[i].c);
	}
	t_end = now_s();
	secs = t_end - g_t0;
	qsort(all.lat_us, all.n, sizeof(uint32_t), cmp_u32);
	answered = (long)all.n;
	failed = all.bad_status + all.bad_body + all.io_errors + all.connect_errors +
	         all.tls_errors + all.timeouts;
	printf("%s%srequests %ld in %.2f s: %.0f req/s; ok %ld, bad status %ld, bad body %ld, "
	       "io errors %ld, connect errors %ld, tls errors %ld, timeouts %ld; connections %ld "
	       "(closed by server %ld)\n",
	       o.label, o.label[0] ? ": " : "", answered, secs, (double)answered / secs, all.ok,
	       all.bad_status, all.bad_body, all.io_errors, all.connect_errors, all.tls_errors,
	       all.timeouts, all.connects, all.reconnects_by_server);
	printf("latency us: p50 %.0f p90 %.0f p99 %.0f p99.9 %.0f max %.0f\n",
	       pct(all.lat_us, all.n, 50), pct(all.lat_us, all.n, 90), pct(all.lat_us, all.n, 99),
	       pct(all.lat_us, all.n, 99.9), all.n ? (double)all.lat_us[all.n - 1] : 0.0);
	for (k = 0; k < all.n_certs; k++)
		printf("certificate sha256 %s: %ld handshakes\n", all.cert_fp[k], all.cert_count[k]);
	printf("JSON {\"label\":\"%s\",\"requests\":%ld,\"seconds\":%.3f,\"rps\":%.1f,\"ok\":%ld,"
	       "\"failed\":%ld,\"bad_status\":%ld,\"bad_body\":%ld,\"io_errors\":%ld,"
	       "\"connect_errors\":%ld,\"tls_errors\":%ld,\"timeouts\":%ld,\"connections\":%ld,"
	       "\"p50_us\":%.0f,\"p90_us\":%.0f,\"p99_us\":%.0f,\"p999_us\":%.0f,\"max_us\":%.0f,"
	       "\"certs\":%d}\n",
	       o.label, answered, secs, (double)answered / secs, all.ok, failed, all.bad_status,
	       all.bad_body, all.io_errors, all.connect_errors, all.tls_errors, all.timeouts,
	       all.connects, pct(all.lat_us, all.n, 50), pct(all.lat_us, all.n, 90),
	       pct(all.lat_us, all.n, 99), pct(all.lat_us, all.n, 99.9),
	       all.n ? (double)all.lat_us[all.n - 1] : 0.0, all.n_certs);
	rc = failed == 0 && answered > 0 ? 0 : 1;
	free(all.lat_us);
	for (k = 0; k < o.n_bodies; k++)
		free(o.bodies[k].req);
	SSL_CTX_free(g_ctx);
	return rc;
}
