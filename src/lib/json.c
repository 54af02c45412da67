/*
 * The JSON room's getters and writers: reading members of a cJSON tree with
 * their types checked, the string escaper every JSON writer shares (answers,
 * log lines, render) and the compact printer of the patch. Nothing here keeps
 * memory: getters point into the caller's tree, writers append to the
 * caller's strbuf. The parser is jsonparse.c.
 */
#include "json.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/*
 * cJSON_GetObjectItemCaseSensitive's answer (the first member named key), with
 * the keys compared in place rather than by a call to strcmp each: the core
 * asks for members by name thousands of times an admission (every env
 * entry's "name").
 */
static int same_key(const char *a, const char *b)
{
	for (; *a == *b; a++, b++)
		if (*a == '\0')
			return 1;
	return 0;
}

const cJSON *json_get(const cJSON *obj, const char *key)
{
	const cJSON *c;

	if (obj == NULL || key == NULL)
		return NULL;
	for (c = obj->child; c != NULL; c = c->next)
		if (c->string != NULL && same_key(c->string, key))
			return c;
	return NULL;
}

const char *json_str(const cJSON *obj, const char *key)
{
	const cJSON *it = json_get(obj, key);

	return it != NULL && (it->type & 0xff) == cJSON_String ? it->valuestring : NULL;
}

const char *json_map_str(const cJSON *map, const char *key)
{
	return cJSON_IsObject(map) ? json_str(map, key) : NULL;
}

long json_long(const cJSON *obj, const char *key, long max, long dflt)
{
	const cJSON *it = json_get(obj, key);

	if (cJSON_IsNumber(it) && it->valuedouble >= 0 && it->valuedouble <= (double)max)
		return (long)it->valuedouble;
	return dflt;
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

void json_put_string(struct strbuf *sb, const char *s, size_t max)
{
	json_put_string_bytes(sb, s, max, 0);
}

/*
 * What each byte is to the escaper: 1 printable ASCII stored as it is, 2 a
 * byte from 0x80 up (stored as it is when kept, else checked as UTF-8), 0
 * what needs an escape (control bytes, '"', backslash, DEL).
 */
#define PLAIN_ROW(b)                                                                               \
	((b) >= 0x80 ? 2 : (b) >= 0x20 && (b) < 0x7f && (b) != '"' && (b) != '\\' ? 1 : 0)
#define PLAIN4(b)  PLAIN_ROW(b), PLAIN_ROW((b) + 1), PLAIN_ROW((b) + 2), PLAIN_ROW((b) + 3)
#define PLAIN16(b) PLAIN4(b), PLAIN4((b) + 4), PLAIN4((b) + 8), PLAIN4((b) + 12)
#define PLAIN64(b) PLAIN16(b), PLAIN16((b) + 16), PLAIN16((b) + 32), PLAIN16((b) + 48)
static const unsigned char plain_byte[256] = {PLAIN64(0), PLAIN64(64), PLAIN64(128), PLAIN64(192)};

#ifndef __SSE2__
#define ONES  0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* Whether the eight bytes at p are all printable ASCII other than '"' and backslash. */
static int plain8(const unsigned char *p)
{
	uint64_t x, q, b;

	memcpy(&x, p, 8);
	q = x ^ (ONES * '"');
	b = x ^ (ONES * '\\');
	/* each term is nonzero exactly when some byte is below 0x20, '"', backslash, or >= 0x7f */
	return ((((x - ONES * 0x20) & ~x) | ((q - ONES) & ~q) | ((b - ONES) & ~b) | x |
	         (x + ONES)) &
	        HIGHS) == 0;
}
#endif

/* The second byte of a two-byte escape of c ('n' for a newline), 0 when c needs \u00XX. */
static const char esc2[128] = {['"'] = '"',  ['\\'] = '\\', ['\n'] = 'n', ['\r'] = 'r',
                               ['\t'] = 't', ['\b'] = 'b',  ['\f'] = 'f'};

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_QUOTE_STEPS 1

/*
 * For each set of '"' and backslash bytes among eight (bit b: byte b): the
 * pshufb indices that spread the eight out with a slot before each such byte
 * (0x80, which pshufb makes 0), the backslashes for those slots, and the
 * bytes written.
 */
static struct {
	unsigned char shuf[16], ins[16];
	size_t len;
} quote8[256];
static int quote_ssse3;
static pthread_once_t quote_once = PTHREAD_ONCE_INIT;

static void quote_init(void)
{
	unsigned m, b, o;

	quote_ssse3 = __builtin_cpu_supports("ssse3");
	for (m = 0; m < 256; m++) {
		for (b = 0, o = 0; b < 8; b++) {
			if (m >> b & 1) {
				quote8[m].shuf[o] = 0x80;
				quote8[m].ins[o++] = '\\';
			}
			quote8[m].shuf[o++] = (unsigned char)b;
		}
		quote8[m].len = o;
		for (; o < 16; o++)
			quote8[m].shuf[o] = 0x80;
	}
}

/*
 * json_put_string_bytes' sixteen-byte steps where the only bytes to escape
 * are '"' and backslash (a W=1,024 TF_CONFIG has 2,048 quotes): each step is
 * escaped whole, eight bytes a shuffle, with no branch for each quote. From
 * u + *ip to d + *op while at least sixteen bytes are left and the room (cap
 * bytes from d) holds the rest, its quote, its NUL and the two stores; stops
 * before a step with any other byte to escape. Moves *ip and *op.
 */
__attribute__((target("ssse3"))) static void quote_steps(const unsigned char *u, size_t n,
                                                         size_t *ip, char *d, size_t *op,
                                                         size_t cap, unsigned char accept)
{
	const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
	const __m128i below = _mm_set1_epi8(0x1f), del = _mm_set1_epi8(0x7f);
	size_t i = *ip, o = *op;

	while (n - i >= 16 && cap - o >= (n - i) + 2 + 32) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(u + i));
		__m128i other =
		    _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(v, below), v), _mm_cmpeq_epi8(v, del));
		unsigned m = (unsigned)_mm_movemask_epi8(
		    _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)));
		unsigned lo = m & 0xff, hi = m >> 8;

		if (_mm_movemask_epi8(other) != 0 ||
		    (accept != 3 && _mm_movemask_epi8(v) != 0)) /* 0x80 and up: not here */
			break;
		_mm_storeu_si128(
		    (__m128i *)(void *)(d + o),
		    _mm_or_si128(
		        _mm_shuffle_epi8(
		            v, _mm_loadu_si128((const __m128i *)(const void *)quote8[lo].shuf)),
		        _mm_loadu_si128((const __m128i *)(const void *)quote8[lo].ins)));
		o += quote8[lo].len;
		_mm_storeu_si128(
		    (__m128i *)(void *)(d + o),
		    _mm_or_si128(
		        _mm_shuffle_epi8(
		            _mm_srli_si128(v, 8),
		            _mm_loadu_si128((const __m128i *)(const void *)quote8[hi].shuf)),
		        _mm_loadu_si128((const __m128i *)(const void *)quote8[hi].ins)));
		o += quote8[hi].len;
		i += 16;
	}
	*ip = i;
	*op = o;
}
#endif

/*
 * Where the plain run from u[i] ends: the first byte in u[i..n) that accept
 * leaves out. With SSE2 the escaper's own loop takes sixteen bytes a step and
 * this finishes the last fifteen.
 */
static size_t plain_run(const unsigned char *u, size_t i, size_t n, unsigned char accept)
{
#ifndef __SSE2__
	while (n - i >= 8 && plain8(u + i))
		i += 8;
#endif
	while (i < n && (plain_byte[u[i]] & accept))
		i++;
	return i;
}

void json_put_string_bytes(struct strbuf *sb, const char *s, size_t max, int keep_invalid)
{
	const unsigned char accept = keep_invalid ? 3 : 1;
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strnlen(s, max), i = 0, o, seq;

	/*
	 * Room for the string as it is and its quotes; each escape makes room for
	 * the rest again, so plain bytes are stored with no call per byte and a
	 * limited buffer is not refused for escapes it will never need.
	 */
	if (n > ((size_t)-1) / 2 || ((sb->oom || sb->buf == NULL || sb->cap - sb->len <= n + 2) &&
	                             strbuf_reserve(sb, n + 2) != 0))
		return;
#ifdef HAVE_QUOTE_STEPS
	/* whole steps only from sixteen bytes on: most names and values are shorter */
	const int steps = n >= 16 && pthread_once(&quote_once, quote_init) == 0 && quote_ssse3;
#endif
	o = sb->len;
	sb->buf[o++] = '"';
	while (i < n) {
		unsigned char c;
		size_t r;
		char *d = sb->buf; /* a local: a char store could alias sb->buf */

		/*
		 * Plain ASCII, or any byte when kept, is stored as it is found: sixteen
		 * bytes a step, each step stored whole before it is looked at. The
		 * room kept below (the rest of s, its quote and the NUL from o) holds
		 * the whole store, and the bytes past the run are written again.
		 */
#ifdef HAVE_QUOTE_STEPS
		if (steps)
			quote_steps(u, n, &i, d, &o, sb->cap, accept);
#endif
#ifdef __SSE2__
		/* '"', backslash, below 0x20, DEL, and 0x80 up unless kept */
		const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
		const __m128i ctl = _mm_set1_epi8(0x1f), del = _mm_set1_epi8(0x7f);

		while (n - i >= 16) {
			__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(u + i));
			__m128i stop = _mm_or_si128(
			    _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
			    _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(v, ctl), v),
			                 _mm_cmpeq_epi8(v, del)));
			unsigned m = (unsigned)_mm_movemask_epi8(stop);

			if (accept != 3)
				m |= (unsigned)_mm_movemask_epi8(v); /* the high bit: 0x80 and up */
			_mm_storeu_si128((__m128i *)(void *)(d + o), v);
			if (m != 0) {
				i += (size_t)__builtin_ctz(m);
				o += (size_t)__builtin_ctz(m);
				c = u[i];
				/*
				 * '"' and backslash (TF_CONFIG's quotes, thousands) escaped
				 * here while there is room; the rest below.
				 */
				if ((c != '"' && c != '\\') || sb->cap - o < 2 + (n - i) + 2)
					break;
				d[o] = '\\';
				d[o + 1] = (char)c;
				o += 2;
				i++;
				continue;
			}
			i += 16;
			o += 16;
		}
		if (n - i < 16)
#endif
		{
			size_t run = plain_run(u, i, n, accept);

			memcpy(d + o, s + i, run - i);
			o += run - i;
			i = run;
		}
		if (i == n)
			break;
		c = u[i];
		if (c >= 0x80 && (seq = utf8_seq(u + i, n - i)) != 0) {
			memcpy(sb->buf + o, s + i, seq);
			o += seq;
			i += seq;
			continue;
		}
		r = c < 0x80 && esc2[c] != 0 ? 2 : 6;
		/* room for the escape, the rest as it is and the closing quote (and the NUL) */
		if (sb->cap - o < r + (n - i) + 2) {
			sb->buf[o] = '\0'; /* the buffer's invariant, which strbuf_reserve checks */
			sb->len = o;
			if (strbuf_reserve(sb, r + (n - i) + 1) != 0)
				return;
		}
		d = sb->buf;
		d[o] = '\\';
		if (r == 2) {
			d[o + 1] = esc2[c];
		} else if (c >= 0x80) {
			memcpy(d + o + 1, "ufffd", 5);
		} else {
			d[o + 1] = 'u';
			d[o + 2] = '0';
			d[o + 3] = '0';
			d[o + 4] = "0123456789abcdef"[c >> 4];
			d[o + 5] = "0123456789abcdef"[c & 15];
		}
		o += r;
		i++;
	}
	sb->buf[o++] = '"';
	sb->buf[o] = '\0';
	sb->len = o;
}

/*
 * Appends t as compact JSON, as cJSON_PrintUnformatted prints it (numbers with
 * its rule; strings through the shared escaper, other bytes as they are), in
 * a third of cJSON's instructions: its printer scans every string twice and
 * copies its buffer as it grows. depth bounds the recursion (the patch is 5
 * deep; an init container from the configuration adds its own).
 */
static void print_tree(struct strbuf *sb, const cJSON *t, int depth)
{
	const cJSON *c;
	char num[32];

	if (depth > 64) {
		sb->oom = 1;
		return;
	}
	switch (t->type & 0xff) {
	case cJSON_False:
		strbuf_append(sb, "false", 5);
		return;
	case cJSON_True:
		strbuf_append(sb, "true", 4);
		return;
	case cJSON_NULL:
		strbuf_append(sb, "null", 4);
		return;
	case cJSON_Number: {
		double d = t->valuedouble, back;
		if (isnan(d) || isinf(d))
			snprintf(num, sizeof(num), "null");
		else if (d == (double)t->valueint)
			snprintf(num, sizeof(num), "%d", t->valueint);
		else if (snprintf(num, sizeof(num), "%1.15g", d),
		         sscanf(num, "%lg", &back) != 1 || back != d)
			snprintf(num, sizeof(num), "%1.17g", d);
		strbuf_puts(sb, num);
		return;
	}
	case cJSON_String:
		json_put_string_bytes(sb, t->valuestring != NULL ? t->valuestring : "", JSON_ALL,
		                      1);
		return;
	case cJSON_Raw:
		if (t->valuestring == NULL)
			sb->oom = 1;
		else
			strbuf_puts(sb, t->valuestring);
		return;
	case cJSON_Array:
	case cJSON_Object:
		strbuf_putc(sb, cJSON_IsArray(t) ? '[' : '{');
		for (c = t->child; c != NULL; c = c->next) {
			if (c != t->child)
				strbuf_putc(sb, ',');
			if (cJSON_IsObject(t)) {
				json_put_string_bytes(sb, c->string != NULL ? c->string : "",
				                      JSON_ALL, 1);
				strbuf_putc(sb, ':');
			}
			print_tree(sb, c, depth + 1);
		}
		strbuf_putc(sb, cJSON_IsArray(t) ? ']' : '}');
		return;
	default:
		sb->oom = 1; /* cJSON_Invalid: cJSON's printer fails too */
	}
}

void json_print(struct strbuf *sb, const cJSON *t)
{
	print_tree(sb, t, 0);
}
