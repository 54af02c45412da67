/*
 * The growable byte buffer every printer writes into (as curl's dynbuf):
 * reserve, append, printf, take. The buffer owns its heap memory, never the
 * caller's first storage; strbuf_free or strbuf_take releases it.
 */
#include "strbuf.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * What every call may assume of sb and must leave true (as curl's dynbuf
 * asserts its own): no storage and nothing in it, or len below cap with the
 * text NUL-terminated; never past the limit; the caller's storage only ever
 * as the first buffer. A failed append keeps them.
 */
static void strbuf_check(const struct strbuf *sb)
{
	assert(sb->buf != NULL || (sb->len == 0 && sb->cap == 0));
	assert(sb->buf == NULL || (sb->len < sb->cap && sb->buf[sb->len] == '\0'));
	assert(sb->max == 0 || sb->len <= sb->max);
	assert(sb->stack == NULL || sb->buf == sb->stack || sb->buf == NULL || sb->cap > 0);
	assert(!sb->too_big || sb->oom);
	(void)sb;
}

void strbuf_init(struct strbuf *sb)
{
	memset(sb, 0, sizeof(*sb));
}

void strbuf_init_max(struct strbuf *sb, size_t max)
{
	strbuf_init(sb);
	sb->max = max;
}

void strbuf_init_stack(struct strbuf *sb, char *stack, size_t size)
{
	strbuf_init(sb);
	sb->buf = sb->stack = stack;
	sb->cap = size;
	stack[0] = '\0';
}

size_t strbuf_cap_for(const struct strbuf *sb, size_t extra)
{
	size_t need, cap, limit = sb->max ? sb->max : ((size_t)-1) / 2;

	if (extra > limit - sb->len)
		return 0;
	need = sb->len + extra + 1;
	if (need <= sb->cap)
		return sb->cap;
	cap = sb->cap ? sb->cap : 256;
	while (cap < need)
		cap *= 2;
	return cap > limit + 1 ? limit + 1 : cap; /* never more than the limit allows */
}

int strbuf_reserve(struct strbuf *sb, size_t extra)
{
	size_t cap;
	char *p;

	strbuf_check(sb);
	if (sb->oom)
		return -1;
	cap = strbuf_cap_for(sb, extra);
	if (cap == 0) {
		sb->oom = 1;
		sb->too_big = sb->max != 0;
		return -1;
	}
	if (cap == sb->cap)
		return 0;
	if (sb->buf != NULL && sb->buf == sb->stack) {
		if ((p = malloc(cap)) != NULL)
			memcpy(p, sb->buf, sb->len + 1);
	} else {
		p = realloc(sb->buf, cap);
		if (p != NULL && sb->buf == NULL)
			p[0] = '\0'; /* a first reservation is empty text, not what malloc left */
	}
	if (p == NULL) {
		sb->oom = 1;
		return -1;
	}
	sb->buf = p;
	sb->cap = cap;
	return 0;
}

void strbuf_append(struct strbuf *sb, const char *s, size_t n)
{
	if (strbuf_reserve(sb, n) != 0)
		return;
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
	strbuf_check(sb);
}

void strbuf_puts(struct strbuf *sb, const char *s)
{
	strbuf_append(sb, s, strlen(s));
}

void strbuf_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		sb->oom = 1;
		return;
	}
	if (strbuf_reserve(sb, (size_t)n) != 0)
		return;
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
	strbuf_check(sb);
}

void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	sb->oom = sb->too_big = 0;
	if (sb->buf != NULL)
		sb->buf[0] = '\0';
}

char *strbuf_take(struct strbuf *sb)
{
	char *p = NULL;

	strbuf_check(sb);
	if (!sb->oom) {
		if (sb->buf == NULL)
			p = calloc(1, 1);
		else if (sb->buf == sb->stack)
			p = strdup(sb->buf);
		else
			p = sb->buf;
		if (p == sb->buf)
			sb->buf = NULL;
	}
	strbuf_free(sb);
	return p;
}

void strbuf_free(struct strbuf *sb)
{
	if (sb->buf != sb->stack)
		free(sb->buf);
	strbuf_init(sb);
}
