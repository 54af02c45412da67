/*
 * The growable byte buffer every printer writes into (as curl's dynbuf):
 * reserve, append, printf, take. The buffer owns its heap memory, never the
 * caller's first storage; strbuf_free or strbuf_take releases it.
 */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void strbuf_json_string(struct strbuf *sb, const char *s, size_t max)
{
	strbuf_json_string_bytes(sb, s, max, 0);
}

void strbuf_json_string_bytes(struct strbuf *sb, const char *s, size_t max, int keep_invalid)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strnlen(s, max), i = 0, o, seq;
	char esc[8];

	/*
	 * Room for the string as it is and its quotes; each escape makes room for
	 * the rest again, so plain bytes are stored with no call per byte and a
	 * limited buffer is not refused for escapes it will never need.
	 */
	if (n > ((size_t)-1) / 2 || strbuf_reserve(sb, n + 2) != 0)
		return;
	o = sb->len;
	sb->buf[o++] = '"';
	while (i < n) {
		unsigned char c = 0;
		const char *rep = NULL;
		size_t r;
		char *d = sb->buf; /* a local: a char store could alias sb->buf */

		/* Plain ASCII, or any byte when kept: the run is copied in place. */
		while (i < n && (c = u[i], (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') ||
		                               (c >= 0x80 && keep_invalid)))
			d[o++] = s[i++];
		if (i == n)
			break;
		if (c >= 0x80 && (seq = utf8_seq(u + i, n - i)) != 0) {
			memcpy(sb->buf + o, s + i, seq);
			o += seq;
			i += seq;
			continue;
		}
		switch (c) {
		case '"':
			rep = "\\\"";
			break;
		case '\\':
			rep = "\\\\";
			break;
		case '\n':
			rep = "\\n";
			break;
		case '\r':
			rep = "\\r";
			break;
		case '\t':
			rep = "\\t";
			break;
		case '\b':
			rep = "\\b";
			break;
		case '\f':
			rep = "\\f";
			break;
		default:
			if (c >= 0x80) {
				rep = "\\ufffd";
			} else {
				snprintf(esc, sizeof(esc), "\\u%04x", c);
				rep = esc;
			}
		}
		r = strlen(rep);
		sb->len = o;
		if (strbuf_reserve(sb, r + (n - i) + 1) != 0)
			return;
		memcpy(sb->buf + o, rep, r);
		o += r;
		i++;
	}
	sb->buf[o++] = '"';
	sb->buf[o] = '\0';
	sb->len = o;
}
