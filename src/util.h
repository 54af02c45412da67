/*
 * Small pure helpers shared by the core and the shells: strict integer parsing,
 * a growable string buffer, base64, DNS name checks and bounded formatting.
 * strbuf owns its memory; strbuf_free releases it.
 */
#ifndef DISTENV_UTIL_H
#define DISTENV_UTIL_H

#include <stdarg.h>
#include <stddef.h>

/*
 * Parses a whole decimal integer in [min, max] (no sign unless min < 0, no
 * spaces, no trailing bytes). Returns 0 and sets *out, or -1.
 */
int parse_long(const char *s, long min, long max, long *out) __attribute__((warn_unused_result));

/* A growable NUL-terminated buffer. A failed append sets oom and later appends do nothing. */
struct strbuf {
	char *buf;
	size_t len;
	size_t cap;
	int oom;
};

void strbuf_init(struct strbuf *sb);
void strbuf_append(struct strbuf *sb, const char *s, size_t n);
void strbuf_puts(struct strbuf *sb, const char *s);
void strbuf_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Returns the buffer (caller frees) or NULL after an allocation failure; resets sb. */
char *strbuf_take(struct strbuf *sb);
void strbuf_free(struct strbuf *sb);

/* Returns a malloc'd NUL-terminated standard base64 encoding of data (caller frees), or NULL. */
char *base64_encode(const unsigned char *data, size_t len);

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
 * than N bytes" in err. A partial read is wiped before it is freed.
 */
char *file_read(const char *path, size_t max, size_t *len, char *err, size_t errlen)
    __attribute__((warn_unused_result));

/* Wipes len bytes at p (explicit_bzero: not optimised away), then frees p. NULL is fine. */
void wipe_free(void *p, size_t len);

/* snprintf that reports truncation: returns 0, or -1 when out was too small. */
int bounded_printf(char *out, size_t outlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
