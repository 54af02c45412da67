/*
 * HTTP on the webhook port: the request's state machine (framing checks,
 * routing, the body and its share of the body budget, the hand-off of an
 * admission to the worker pool), the answers, and the TLS cork that puts each
 * answer in one record; also the probe port's handler. A request's req_ctx
 * is this file's: made when its headers are in, freed in http_on_completed.
 */
#include "server_int.h"

#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <linux/sockios.h>

#include "admission.h"
#include "kube.h"
#include "log.h"
#include "metrics.h"
#include "util.h"
#include "strbuf.h"
#include "mono.h"
#include "workpool.h"

#define BODY_INITIAL_CAP  (16 * 1024)   /* chunked uploads start here */
#define BODY_PREALLOC_MAX (1024 * 1024) /* an announced length is allocated up to this */
#define BODY_TRIM_MIN     (1024 * 1024) /* after a review this large, free pages go back */

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

/*
 * One TLS record per answer. libmicrohttpd 0.9.75 hands GnuTLS the header and
 * the body as two gnutls_record_send calls: two records and two sendmsg, and
 * on loopback each sendmsg also runs the receiver's TCP path (a quarter of the
 * server's CPU for the 4 KB pod). Corking the session before the response is
 * queued makes GnuTLS keep both; http_on_completed, which libmicrohttpd calls on
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
	struct log_admission line;
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
	log_admission(admission_log_fields(&res, &line), (long long)(secs * 1e6));
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
void http_run_queued(void *ctx, struct workpool_item *item)
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
 * Readies the body of a /mutate or /validate request whose headers are in:
 * refuses an announced oversize body before reading any of it, else reserves
 * the announced length. Returns MHD_YES to read the body, or what answering
 * (or failing) now returned.
 */
static enum MHD_Result body_start(struct server *s, struct MHD_Connection *c, struct req_ctx *r)
{
	const char *cl;
	long announced;

	metrics_inflight(1);
	/* Refuse an announced oversize body before reading any of it. */
	cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl != NULL &&
	    (parse_long(cl, 0, LONG_MAX, &announced) != 0 || announced > s->cfg->max_body_bytes)) {
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
		size_t pre =
		    announced < BODY_PREALLOC_MAX ? (size_t)announced + 1 : BODY_PREALLOC_MAX;
		if (budget_charge(s, r, strbuf_cap_for(&r->body, pre - 1)) != 0) {
			/* Spent before a byte is read: answer now, skip the body. */
			body_over_budget(s, r);
			r->responded = 1;
			r->close = 1;
			return respond_over_budget(s, c, r);
		}
		if (strbuf_reserve(&r->body, pre - 1) != 0)
			return MHD_NO;
	}
	return MHD_YES;
}

/*
 * The first call, the headers in: makes the request's req_ctx, routes it and
 * checks its framing. Answers now only when the body must not be read.
 */
static enum MHD_Result request_start(struct server *s, struct MHD_Connection *c, const char *url,
                                     const char *method, void **req_cls)
{
	struct req_ctx *r;
	const char *bad;

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
	if (r->route == ROUTE_MUTATE || r->route == ROUTE_VALIDATE)
		return body_start(s, c, r);
	if (has_body(c)) {
		/* Nothing to read for these routes: answer now, without the body. */
		r->responded = 1;
		return handle_other(s, c, r);
	}
	return MHD_YES;
}

/*
 * A whole /mutate or /validate request in, within its limits: hands it to
 * the worker pool, or runs it here, or answers it once a worker has run it.
 */
static enum MHD_Result request_admit(struct server *s, struct MHD_Connection *c, struct req_ctx *r)
{
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

/* The last call, the whole request in: answers it (or hands it to a worker). */
static enum MHD_Result request_end(struct server *s, struct MHD_Connection *c, struct req_ctx *r)
{
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
	return request_admit(s, c, r);
}

/*
 * libmicrohttpd calls this first when the headers are in (*req_cls NULL), then
 * once per body chunk, then once with *upload_data_size 0. A response queued
 * in the first call makes libmicrohttpd 0.9.75 skip the body and close the
 * connection afterwards; answers queued in the last call keep it alive. So
 * answers go out in the last call, except when a body must not be read.
 */
enum MHD_Result http_on_request(void *cls, struct MHD_Connection *c, const char *url,
                                const char *method, const char *version, const char *upload_data,
                                size_t *upload_data_size, void **req_cls)
{
	struct server *s = cls;
	struct req_ctx *r = *req_cls;

	(void)version;
	if (r == NULL)
		return request_start(s, c, url, method, req_cls);
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
	return request_end(s, c, r);
}

/*
 * MHD_RequestCompletedCallback: sends the held answer, clears the cork, and
 * frees the request, its body and an answer never sent.
 */
void http_on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
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

/*
 * The probe listener's handler: GET /healthz and /readyz over plain HTTP,
 * nothing else. Answered when the headers are in; a body is never read.
 */
enum MHD_Result http_probe_request(void *cls, struct MHD_Connection *c, const char *url,
                                   const char *method, const char *version, const char *upload_data,
                                   size_t *upload_data_size, void **req_cls)
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
