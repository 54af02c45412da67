/*
 * What is left of the shared helpers once each named piece has its own file
 * (strbuf, base64, dns, mono, file): strict integer parsing, decimal writing,
 * bounded formatting and wiping. Nothing here allocates except wipe_free's
 * free of the caller's memory.
 */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return -1;
	/* strtol accepts leading blanks and '+': distenv's numbers do not. */
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

/*
 * vsnprintf for the formats of the hot paths (text, %s, %d, %ld and %%): the
 * same bytes and the same return, without stdio's machinery (a thousand
 * instructions a call, a dozen calls an admission). -2 when fmt has anything
 * else; the caller then asks vsnprintf, with a fresh copy of ap.
 */
static int fmt_simple(char *out, size_t outlen, const char *fmt, va_list ap)
{
	const char *p;
	size_t o = 0;

	for (p = fmt; *p != '\0'; p++) {
		if (*p != '%')
			continue;
		if (p[1] == 's' || p[1] == 'd' || p[1] == '%')
			p++;
		else if (p[1] == 'l' && p[2] == 'd')
			p += 2;
		else
			return -2;
	}
	for (p = fmt; *p != '\0'; p++) {
		char num[24];
		const char *part = p;
		size_t n = 1;

		if (*p != '%') {
			/* a run of text, to the next '%' */
			while (p[n] != '\0' && p[n] != '%')
				n++;
			p += n - 1;
		} else {
			p++;
			if (*p == 's') {
				part = va_arg(ap, const char *);
				if (part == NULL)
					part = "(null)"; /* glibc's */
				n = strlen(part);
			} else if (*p == 'd') {
				part = num;
				n = fmt_long(num, va_arg(ap, int));
			} else if (*p == 'l') {
				p++;
				part = num;
				n = fmt_long(num, va_arg(ap, long));
			} /* else "%%": part is the second '%' */
			if (*p == '%')
				part = p;
		}
		if (o < outlen)
			memcpy(out + o, part, o + n < outlen ? n : outlen - o);
		o += n;
	}
	if (outlen > 0)
		out[o < outlen ? o : outlen - 1] = '\0';
	return o > INT_MAX ? -1 : (int)o;
}

/* fmt_simple, or vsnprintf when fmt is not one of its formats. */
static int fmt_any(char *out, size_t outlen, const char *fmt, va_list ap)
{
	va_list again;
	int n;

	va_copy(again, ap);
	if ((n = fmt_simple(out, outlen, fmt, ap)) == -2)
		n = vsnprintf(out, outlen, fmt, again);
	va_end(again);
	return n;
}

int fmt_printf(char *out, size_t outlen, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = fmt_any(out, outlen, fmt, ap);
	va_end(ap);
	return n;
}

int bounded_printf(char *out, size_t outlen, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = fmt_any(out, outlen, fmt, ap);
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

void wipe_free(void *p, size_t len)
{
	if (p) {
		explicit_bzero(p, len);
		free(p);
	}
}

size_t fmt_long_len(long long v)
{
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	size_t n = (size_t)(v < 0) + 1;

	while (u >= 10000) {
		n += 4;
		u /= 10000;
	}
	return n + (u >= 10) + (u >= 100) + (u >= 1000);
}

size_t fmt_long(char *out, long long v)
{
	static const char pairs[201] = "00010203040506070809101112131415161718192021222324"
	                               "25262728293031323334353637383940414243444546474849"
	                               "50515253545556575859606162636465666768697071727374"
	                               "75767778798081828384858687888990919293949596979899";
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	size_t n = fmt_long_len(v);
	char *p = out + n;

	/* from the right, two digits a step: one division for every two (host lists' indices) */
	while (u >= 100) {
		unsigned d = (unsigned)(u % 100);
		u /= 100;
		p -= 2;
		p[0] = pairs[2 * d];
		p[1] = pairs[2 * d + 1];
	}
	if (u >= 10) {
		p[-2] = pairs[2 * u];
		p[-1] = pairs[2 * u + 1];
	} else {
		p[-1] = (char)('0' + u);
	}
	if (v < 0)
		out[0] = '-';
	return n;
}
