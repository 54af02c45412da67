/*
 * Helpers: strict integer parsing, string buffer, base64, DNS names, error
 * formatting, and one bounded whole-file reader (the only I/O here).
 */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return -1;
	/* strtol accepts leading blanks and '+': the contract does not. */
	if (!(isdigit((unsigned char)s[0]) ||
	      (s[0] == '-' && min < 0 && isdigit((unsigned char)s[1]))))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
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

/* Standard base64 of len bytes into out ((len + 2) / 3 * 4 bytes, no NUL); returns that count. */
static size_t base64_into(char *out, const unsigned char *in, size_t len)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *o = out;
	size_t i = 0;

	for (; i + 3 <= len; i += 3, o += 4) {
		unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 | in[i + 2];
		o[0] = tab[v >> 18];
		o[1] = tab[(v >> 12) & 63];
		o[2] = tab[(v >> 6) & 63];
		o[3] = tab[v & 63];
	}
	if (i < len) {
		unsigned v = (unsigned)in[i] << 16 | (i + 1 < len ? (unsigned)in[i + 1] << 8 : 0);
		o[0] = tab[v >> 18];
		o[1] = tab[(v >> 12) & 63];
		o[2] = i + 1 < len ? tab[(v >> 6) & 63] : '=';
		o[3] = '=';
		o += 4;
	}
	return (size_t)(o - out);
}

void strbuf_base64(struct strbuf *sb, const void *data, size_t len)
{
	if (len > ((size_t)-1) / 4 * 3 - 3 || strbuf_reserve(sb, (len + 2) / 3 * 4) != 0) {
		sb->oom = 1;
		return;
	}
	sb->len += base64_into(sb->buf + sb->len, data, len);
	sb->buf[sb->len] = '\0';
}

unsigned char *base64_decode(const char *s, size_t len, size_t *outlen)
{
	EVP_ENCODE_CTX *ctx = NULL;
	unsigned char *out = NULL;
	size_t cap = len / 4 * 3 + 3;
	int n = 0, m = 0, ok = 0;

	if (len > INT_MAX || (out = malloc(cap)) == NULL || (ctx = EVP_ENCODE_CTX_new()) == NULL)
		goto out;
	EVP_DecodeInit(ctx);
	/* -1: a byte outside the alphabet or after the padding; Final -1: a group cut short */
	if (EVP_DecodeUpdate(ctx, out, &n, (const unsigned char *)s, (int)len) < 0 ||
	    EVP_DecodeFinal(ctx, out + n, &m) < 0)
		goto out;
	*outlen = (size_t)n + (size_t)m;
	ok = 1;
out:
	EVP_ENCODE_CTX_free(ctx);
	if (!ok && out != NULL) {
		explicit_bzero(out, cap);
		free(out);
		out = NULL;
	}
	return out;
}

static int label_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 63)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
			return 0;
	}
	return s[0] != '-' && s[n - 1] != '-';
}

int dns_label_valid(const char *s)
{
	return s != NULL && label_ok(s, strlen(s));
}

int dns_subdomain_valid(const char *s)
{
	size_t n;
	const char *p, *dot;

	if (s == NULL)
		return 0;
	n = strlen(s);
	if (n == 0 || n > 253)
		return 0;
	for (p = s;; p = dot + 1) {
		dot = strchr(p, '.');
		if (!label_ok(p, dot ? (size_t)(dot - p) : strlen(p)))
			return 0;
		if (dot == NULL)
			return 1;
	}
}

int bounded_printf(char *out, size_t outlen, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, outlen, fmt, ap);
	va_end(ap);
	return (n < 0 || (size_t)n >= outlen) ? -1 : 0;
}

void errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

char *file_read(const char *path, size_t max, size_t *len, char *err, size_t errlen)
{
	struct stat st;
	char *buf = NULL;
	size_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY), why = 0;

	if (fd < 0) {
		why = errno;
		errf(err, errlen, "cannot read %s: %s", path, strerror(why));
		errno = why;
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		why = EINVAL;
		errf(err, errlen, "cannot read %s: not a regular file", path);
		goto fail;
	}
	if ((buf = malloc(max + 1)) == NULL) {
		why = ENOMEM;
		errf(err, errlen, "cannot read %s: out of memory", path);
		goto fail;
	}
	for (;;) {
		ssize_t r = read(fd, buf + n, max + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			why = errno;
			errf(err, errlen, "cannot read %s: %s", path, strerror(why));
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			why = EFBIG;
			errf(err, errlen, "%s is larger than %zu bytes", path, max);
			goto fail;
		}
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
fail:
	if (buf != NULL) {
		explicit_bzero(buf, max + 1); /* it may have held part of a key */
		free(buf);
	}
	close(fd);
	errno = why;
	return NULL;
}

void wipe_free(void *p, size_t len)
{
	if (p) {
		explicit_bzero(p, len);
		free(p);
	}
}

size_t fmt_long(char *out, long long v)
{
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v, w;
	size_t n = (size_t)(v < 0) + 1, i;

	for (w = u; w >= 10; w /= 10)
		n++; /* the digits of u */
	if (v < 0)
		out[0] = '-';
	for (i = n; i > (size_t)(v < 0); u /= 10)
		out[--i] = (char)('0' + u % 10);
	return n;
}

long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

double mono_elapsed_s(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}
