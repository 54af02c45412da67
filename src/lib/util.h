/*
 * Small pure helpers that have no room of their own: strict integer parsing,
 * decimal writing, bounded formatting into a caller's buffer and wiping a
 * secret before it is freed. The named pieces live in strbuf.h, base64.h,
 * dns.h, mono.h and file.h.
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

/* snprintf into an error buffer (nothing when errlen is 0). */
void errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Wipes len bytes at p (explicit_bzero: not optimised away), then frees p. NULL is fine. */
void wipe_free(void *p, size_t len);

/*
 * snprintf, the same bytes and return, with a fast path for text, %s, %d, %ld
 * and %% (other formats go to vsnprintf): for the calls made on every
 * admission.
 */
int fmt_printf(char *out, size_t outlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* snprintf that reports truncation: returns 0, or -1 when out was too small. */
int bounded_printf(char *out, size_t outlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Writes v in decimal at out (at most 20 bytes, no NUL) and returns how many:
 * for the hot paths that write numbers without printf (rank names, patch
 * paths, log lines).
 */
size_t fmt_long(char *out, long long v);
/* How many bytes fmt_long(out, v) writes. */
size_t fmt_long_len(long long v);

#endif
