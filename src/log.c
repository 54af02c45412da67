/*
 * Structured logs: each call formats one JSON object into a private buffer and
 * hands it to stderr in a single write under a lock, so lines from different
 * threads never interleave. Callers own nothing here; values are copied.
 */
#include "log.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Lines longer than this are cut (the JSON stays valid: values are truncated). */
#define LOG_VALUE_MAX  4096
#define LOG_STACK_LINE 2048

static _Atomic int log_min_level = LOG_INFO;
static pthread_mutex_t log_write_lock = PTHREAD_MUTEX_INITIALIZER;

/* A line buffer that starts on the stack and moves to the heap when it grows. */
struct line {
	char *p;
	size_t len;
	size_t cap;
	int heap;
	int oom;
	char stack[LOG_STACK_LINE];
};

static void line_init(struct line *l)
{
	l->p = l->stack;
	l->len = 0;
	l->cap = sizeof(l->stack);
	l->heap = 0;
	l->oom = 0;
}

static int line_reserve(struct line *l, size_t extra)
{
	size_t cap;
	char *np;

	if (l->oom)
		return -1;
	if (l->len + extra + 2 <= l->cap) /* room for "}\n" */
		return 0;
	cap = l->cap * 2;
	while (cap < l->len + extra + 2)
		cap *= 2;
	if (l->heap) {
		np = realloc(l->p, cap);
	} else {
		np = malloc(cap);
		if (np != NULL)
			memcpy(np, l->p, l->len);
	}
	if (np == NULL) {
		l->oom = 1;
		return -1;
	}
	l->p = np;
	l->cap = cap;
	l->heap = 1;
	return 0;
}

static void line_add(struct line *l, const char *s, size_t n)
{
	if (line_reserve(l, n) != 0)
		return;
	memcpy(l->p + l->len, s, n);
	l->len += n;
}

static void line_puts(struct line *l, const char *s)
{
	line_add(l, s, strlen(s));
}

/*
 * Length of the valid UTF-8 sequence at s (at most n bytes), or 0 when the
 * bytes are not valid UTF-8 (overlong forms, surrogates and > U+10FFFF included).
 */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len, i;
	unsigned long cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* Appends s as a JSON string: quotes, escapes, invalid UTF-8 replaced by U+FFFD. */
static void line_add_json_string(struct line *l, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, seq;
	char esc[8];

	if (n > LOG_VALUE_MAX)
		n = LOG_VALUE_MAX;
	line_add(l, "\"", 1);
	while (i < n) {
		unsigned char c = u[i];
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			line_add(l, esc, 2);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			switch (c) {
			case '\n':
				line_add(l, "\\n", 2);
				break;
			case '\r':
				line_add(l, "\\r", 2);
				break;
			case '\t':
				line_add(l, "\\t", 2);
				break;
			case '\b':
				line_add(l, "\\b", 2);
				break;
			case '\f':
				line_add(l, "\\f", 2);
				break;
			default:
				snprintf(esc, sizeof(esc), "\\u%04x", c);
				line_add(l, esc, 6);
			}
			i++;
		} else if ((seq = utf8_seq(u + i, n - i)) == 0) {
			line_add(l, "\\ufffd", 6);
			i++;
		} else {
			line_add(l, s + i, seq);
			i += seq;
		}
	}
	line_add(l, "\"", 1);
}

static const char *level_name(enum log_level lvl)
{
	switch (lvl) {
	case LOG_DEBUG:
		return "debug";
	case LOG_INFO:
		return "info";
	case LOG_WARN:
		return "warn";
	case LOG_ERROR:
		return "error";
	}
	return "info";
}

/* Starts a line with {"ts":"2006-01-02T15:04:05.000Z","level":...,"event":... */
static void line_begin(struct line *l, enum log_level lvl, const char *event)
{
	struct timespec ts;
	struct tm tm;
	char buf[64];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(buf, sizeof(buf), "{\"ts\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ\"",
	         tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
	         ts.tv_nsec / 1000000);
	line_puts(l, buf);
	line_puts(l, ",\"level\":\"");
	line_puts(l, level_name(lvl));
	line_puts(l, "\",\"event\":");
	line_add_json_string(l, event ? event : "");
}

static void line_key(struct line *l, const char *key)
{
	line_add(l, ",", 1);
	line_add_json_string(l, key);
	line_add(l, ":", 1);
}

static void line_num(struct line *l, long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", v);
	line_puts(l, buf);
}

/* Closes the object and writes it with one write(2) under the lock; frees the buffer. */
static void line_emit(struct line *l)
{
	static const char oom_line[] = "{\"level\":\"error\",\"event\":\"log_out_of_memory\"}\n";
	const char *p;
	size_t left;
	int saved = errno;

	if (l->oom) {
		p = oom_line;
		left = sizeof(oom_line) - 1;
	} else {
		/* line_reserve always keeps two spare bytes for this. */
		l->p[l->len++] = '}';
		l->p[l->len++] = '\n';
		p = l->p;
		left = l->len;
	}
	/*
	 * A line up to PIPE_BUF goes out in one write(2), which pipes and O_APPEND
	 * files keep whole: no lock, so workers do not queue (futex) behind each
	 * other's system call. Longer lines, and the rest of a short write, take it.
	 */
	if (left <= PIPE_BUF) {
		ssize_t w;
		do
			w = write(STDERR_FILENO, p, left);
		while (w < 0 && errno == EINTR);
		if (w > 0) {
			p += w;
			left -= (size_t)w;
		} else {
			left = 0; /* stderr is gone: nothing to do about it */
		}
	}
	if (left == 0)
		goto done;
	pthread_mutex_lock(&log_write_lock);
	while (left > 0) {
		ssize_t w = write(STDERR_FILENO, p, left);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		p += w;
		left -= (size_t)w;
	}
	pthread_mutex_unlock(&log_write_lock);
done:
	if (l->heap)
		free(l->p);
	errno = saved;
}

void log_set_level(enum log_level lvl)
{
	atomic_store(&log_min_level, (int)lvl);
}

int log_enabled(enum log_level lvl)
{
	return (int)lvl >= atomic_load(&log_min_level);
}

void log_kv(enum log_level lvl, const char *event, ...)
{
	struct line l;
	va_list ap;
	const char *k, *v;

	if (!log_enabled(lvl))
		return;
	line_init(&l);
	line_begin(&l, lvl, event);
	va_start(ap, event);
	while ((k = va_arg(ap, const char *)) != NULL) {
		v = va_arg(ap, const char *);
		if (v == NULL)
			continue;
		line_key(&l, k);
		line_add_json_string(&l, v);
	}
	va_end(ap);
	line_emit(&l);
}

void log_kvn(enum log_level lvl, const char *event, ...)
{
	struct line l;
	va_list ap;
	const char *k;
	long long v;

	if (!log_enabled(lvl))
		return;
	line_init(&l);
	line_begin(&l, lvl, event);
	va_start(ap, event);
	while ((k = va_arg(ap, const char *)) != NULL) {
		v = va_arg(ap, long long);
		line_key(&l, k);
		line_num(&l, v);
	}
	va_end(ap);
	line_emit(&l);
}

void log_admission(const char *uid, const char *ns, const char *workload, long rank,
                   const char *outcome, const char *message, long long micros)
{
	enum log_level lvl = LOG_INFO;
	struct line l;

	/* A malformed review is the caller's bug, worth a warning; denials are normal answers. */
	if (outcome != NULL && strcmp(outcome, "bad_request") == 0)
		lvl = LOG_WARN;
	if (!log_enabled(lvl))
		return;
	line_init(&l);
	line_begin(&l, lvl, "admission");
	line_key(&l, "uid");
	line_add_json_string(&l, uid ? uid : "");
	line_key(&l, "namespace");
	line_add_json_string(&l, ns ? ns : "");
	line_key(&l, "workload");
	line_add_json_string(&l, workload ? workload : "");
	line_key(&l, "rank");
	if (rank < 0)
		line_puts(&l, "null");
	else
		line_num(&l, rank);
	line_key(&l, "outcome");
	line_add_json_string(&l, outcome ? outcome : "");
	if (message != NULL && message[0] != '\0') {
		line_key(&l, "message");
		line_add_json_string(&l, message);
	}
	line_key(&l, "micros");
	line_num(&l, micros);
	line_emit(&l);
}
