/*
 * Small pure helpers shared by the core and the shells: strict integer parsing,
 * a growable string buffer, base64, DNS name checks and bounded formatting.
 * strbuf owns its memory; strbuf_free releases it.
 */
#ifndef DISTENV_UTIL_H
#define DISTENV_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <time.h>

/*
 * Parses a whole decimal integer in [min, max] (no sign unless min < 0, no
 * spaces, no trailing bytes). Returns 0 and sets *out, or -1.
 */
int parse_long(const char *s, long min, long max, long *out) __attribute__((warn_unused_result));

/*
 * The one growable NUL-terminated byte buffer (as curl's dynbuf): it may
 * start in caller-provided storage and move to the heap when it grows, and it
 * may have a size limit. A failed append (memory ran out, or the limit would
 * be passed: then too_big is set too) sets oom, and later appends do nothing.
 * The buffer owns its heap memory; strbuf_free releases it.
 */
struct strbuf {
	char *buf; /* NULL until something is reserved */
	size_t len;
	size_t cap;
	size_t max;  /* the most bytes len may reach; 0: no limit */
	int oom;     /* an append failed */
	int too_big; /* ... because of max */
	char *stack; /* caller's first storage (never freed), or NULL */
};

void strbuf_init(struct strbuf *sb);
/* An empty buffer that refuses to hold more than max bytes. */
void strbuf_init_max(struct strbuf *sb, size_t max);
/* An empty buffer that starts in stack[size] (size > 0) and moves to the heap to grow. */
void strbuf_init_stack(struct strbuf *sb, char *stack, size_t size);
/* Makes room for extra more bytes and the NUL. Returns 0, or -1 (sets oom, maybe too_big). */
int strbuf_reserve(struct strbuf *sb, size_t extra);
/*
 * The capacity strbuf_reserve(sb, extra) would leave (sb->cap when it has room),
 * so that a caller can account for memory before it is taken; 0 past the limit.
 */
size_t strbuf_cap_for(const struct strbuf *sb, size_t extra);
void strbuf_append(struct strbuf *sb, const char *s, size_t n);
void strbuf_puts(struct strbuf *sb, const char *s);
/* Appends one byte: inline, a store when there is room (printers call it per token). */
static inline void strbuf_putc(struct strbuf *sb, char c)
{
	if (!sb->oom && sb->len + 1 < sb->cap) {
		sb->buf[sb->len++] = c;
		sb->buf[sb->len] = '\0';
	} else {
		strbuf_append(sb, &c, 1);
	}
}
void strbuf_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * Appends the first max bytes of s (the whole of it when shorter) as a
 * quoted JSON string: '"' and '\\' escaped; control bytes and DEL escaped
 * (\b \f \n \r \t, \u00XX for the rest); valid UTF-8 copied as it is;
 * each byte that does not start a valid UTF-8 sequence (overlong forms,
 * surrogates and code points past U+10FFFF included) becomes \ufffd, as Go's
 * encoding/json reads it. The output is always valid JSON and valid UTF-8.
 */
void strbuf_json_string(struct strbuf *sb, const char *s, size_t max);
/*
 * The same escaper with keep_invalid = 1: bytes that are not valid UTF-8 are
 * copied as they are instead of becoming \ufffd. For echoing a value exactly
 * (the AdmissionReview uid the API server compares); 0 is strbuf_json_string.
 */
void strbuf_json_string_bytes(struct strbuf *sb, const char *s, size_t max, int keep_invalid);
/* strbuf_json_string's max for "the whole string". */
#define STRBUF_ALL ((size_t)-1)
/* Empties the buffer (keeps its memory) and clears oom and too_big. */
void strbuf_reset(struct strbuf *sb);
/* Returns the text as a malloc'd string (caller frees), or NULL after a failed append; resets sb.
 */
char *strbuf_take(struct strbuf *sb);
/* Frees the heap memory (not the caller's storage) and empties sb. */
void strbuf_free(struct strbuf *sb);

/* Appends the standard base64 encoding of len bytes of data (sets oom when it cannot). */
void strbuf_base64(struct strbuf *sb, const void *data, size_t len);

/*
 * Decodes len bytes of standard base64 (padding required, white space
 * ignored, nothing after the padding), as Go's StdEncoding reads kubeconfig
 * *-data fields. Returns malloc'd bytes and their count in *outlen (caller
 * frees; wipe first if secret), or NULL when s is not base64 or memory ran
 * out. A failed decode wipes what it wrote.
 */
unsigned char *base64_decode(const char *s, size_t len, size_t *outlen)
    __attribute__((warn_unused_result));

/* RFC 1123 label: 1-63 of [a-z0-9-], alphanumeric at both ends. */
int dns_label_valid(const char *s);
/* RFC 1123 subdomain: dot-separated labels, at most 253 bytes. */
int dns_subdomain_valid(const char *s);

/* snprintf into an error buffer (nothing when errlen is 0). */
void errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Reads a whole regular file of at most max bytes. Returns a malloc'd
 * NUL-terminated buffer (caller frees; wipe it first if it held a secret) and
 * its length in *len, or NULL with "cannot read PATH: why" / "PATH is larger
 * than N bytes" in err, and errno saying why: EFBIG (over max), EINVAL (not
 * a regular file), ENOMEM, or the error of open(2)/read(2). A partial read is
 * wiped before it is freed.
 */
char *file_read(const char *path, size_t max, size_t *len, char *err, size_t errlen)
    __attribute__((warn_unused_result));

/* Wipes len bytes at p (explicit_bzero: not optimised away), then frees p. NULL is fine. */
void wipe_free(void *p, size_t len);

/* snprintf that reports truncation: returns 0, or -1 when out was too small. */
int bounded_printf(char *out, size_t outlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Writes v in decimal at out (at most 20 bytes, no NUL) and returns how many:
 * for the hot paths that write numbers without printf (rank names, patch
 * paths, log lines).
 */
size_t fmt_long(char *out, long long v);

/* Milliseconds of CLOCK_MONOTONIC (for deadlines; the shells' one clock). */
long long mono_ms(void);

/* Seconds since start, a clock_gettime(CLOCK_MONOTONIC) reading. */
double mono_elapsed_s(const struct timespec *start);

#endif
