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

#include "util.h"
#include "strbuf.h"
#include "admission.h"
#include "json.h"

/* Lines longer than this are cut (the JSON stays valid: values are truncated). */
#define LOG_VALUE_MAX  4096
#define LOG_STACK_LINE 2048

static _Atomic int log_min_level = LOG_INFO;
static pthread_mutex_t log_write_lock = PTHREAD_MUTEX_INITIALIZER;

/* A log line: a strbuf that starts in a LOG_STACK_LINE array on the caller's stack. */
static void line_add_json_string(struct strbuf *l, const char *s)
{
	json_put_string(l, s, LOG_VALUE_MAX);
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

/* Starts a line with {"ts":"2006-01-02T15:04:05.000Z","level":...,"msg":...,"event":...
 * msg NULL: the event in words. */
static void line_begin(struct strbuf *l, enum log_level lvl, const char *event, const char *msg)
{
	char words[64];
	size_t i;

	static __thread time_t cached_sec = -1;
	static __thread char cached[96]; /* {"ts":"2006-01-02T15:04:05 for cached_sec */
	struct timespec ts;
	char ms[6];
	long m;

	/* The date and time are formatted once a second per thread; the milliseconds each line. */
	clock_gettime(CLOCK_REALTIME, &ts);
	if (ts.tv_sec != cached_sec) {
		struct tm tm;
		gmtime_r(&ts.tv_sec, &tm);
		snprintf(cached, sizeof(cached), "{\"ts\":\"%04d-%02d-%02dT%02d:%02d:%02d",
		         tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
		         tm.tm_sec);
		cached_sec = ts.tv_sec;
	}
	m = ts.tv_nsec / 1000000;
	ms[0] = '.';
	ms[1] = (char)('0' + m / 100);
	ms[2] = (char)('0' + m / 10 % 10);
	ms[3] = (char)('0' + m % 10);
	ms[4] = 'Z';
	ms[5] = '"';
	strbuf_puts(l, cached);
	strbuf_append(l, ms, sizeof(ms));
	strbuf_puts(l, ",\"level\":\"");
	strbuf_puts(l, level_name(lvl));
	strbuf_puts(l, "\",\"msg\":");
	if (msg == NULL) {
		snprintf(words, sizeof(words), "%s", event ? event : "");
		for (i = 0; words[i] != '\0'; i++)
			if (words[i] == '_')
				words[i] = ' ';
		msg = words;
	}
	line_add_json_string(l, msg);
	strbuf_puts(l, ",\"event\":");
	line_add_json_string(l, event ? event : "");
}

static void line_key(struct strbuf *l, const char *key)
{
	strbuf_append(l, ",", 1);
	line_add_json_string(l, key);
	strbuf_append(l, ":", 1);
}

static void line_num(struct strbuf *l, long long v)
{
	char buf[24];

	strbuf_append(l, buf, fmt_long(buf, v));
}

/* Closes the object and writes it with one write(2) under the lock; frees the buffer. */
static void line_emit(struct strbuf *l)
{
	static const char oom_line[] = "{\"level\":\"error\",\"event\":\"log_out_of_memory\"}\n";
	const char *p;
	size_t left;
	int saved = errno;

	strbuf_append(l, "}\n", 2);
	if (l->oom) {
		p = oom_line;
		left = sizeof(oom_line) - 1;
	} else {
		p = l->buf;
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
	strbuf_free(l);
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
	struct strbuf l;
	char stack[LOG_STACK_LINE];
	va_list ap;
	const char *k, *v;

	if (!log_enabled(lvl))
		return;
	strbuf_init_stack(&l, stack, sizeof(stack));
	line_begin(&l, lvl, event, NULL);
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
	struct strbuf l;
	char stack[LOG_STACK_LINE];
	va_list ap;
	const char *k;
	long long v;

	if (!log_enabled(lvl))
		return;
	strbuf_init_stack(&l, stack, sizeof(stack));
	line_begin(&l, lvl, event, NULL);
	va_start(ap, event);
	while ((k = va_arg(ap, const char *)) != NULL) {
		v = va_arg(ap, long long);
		line_key(&l, k);
		line_num(&l, v);
	}
	va_end(ap);
	line_emit(&l);
}

void log_admission(const struct log_admission *a, long long micros)
{
	struct strbuf l;
	char stack[LOG_STACK_LINE], msg[64];

	if (!log_enabled(a->level))
		return;
	memcpy(msg, "pod ", 4);
	strncpy(msg + 4, a->outcome, sizeof(msg) - 5);
	msg[sizeof(msg) - 1] = '\0';
	strbuf_init_stack(&l, stack, sizeof(stack));
	line_begin(&l, a->level, "admission", a->message[0] != '\0' ? a->message : msg);
	line_key(&l, "uid");
	line_add_json_string(&l, a->uid);
	line_key(&l, "namespace");
	line_add_json_string(&l, a->ns);
	line_key(&l, "workload");
	line_add_json_string(&l, a->workload);
	line_key(&l, "rank");
	if (a->rank < 0)
		strbuf_puts(&l, "null");
	else
		line_num(&l, a->rank);
	line_key(&l, "outcome");
	line_add_json_string(&l, a->outcome);
	if (a->reason != NULL) {
		line_key(&l, "reason");
		line_add_json_string(&l, a->reason);
	}
	line_key(&l, "micros");
	line_num(&l, micros);
	line_emit(&l);
}

struct log_admission *admission_log_fields(const struct admission_result *res,
                                           struct log_admission *out)
{
	out->uid = res->uid;
	out->ns = res->ns;
	out->workload = res->workload;
	out->rank = res->rank;
	out->outcome = verdict_outcome_name(res->outcome);
	out->reason = res->outcome == ADMISSION_DENIED ? verdict_reason_name(res->reason) : NULL;
	out->message = res->message;
	/* A malformed review is the caller's bug; a denial stops a pod: both worth a warning. */
	out->level = res->outcome == ADMISSION_BAD_REQUEST || res->outcome == ADMISSION_DENIED
	                 ? LOG_WARN
	                 : LOG_INFO;
	return out;
}
