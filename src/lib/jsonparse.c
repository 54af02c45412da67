/*
 * The JSON room's parser (json.h declares it): builds the same cJSON tree as
 * cJSON_ParseWithLength, in about a third of its instructions. cJSON tries
 * "null", "false" and "true" with strncmp before every value, scans each
 * string twice and goes through its allocator for every node; at 30-35
 * instructions a byte its parser was half of an admission (docs/benchmarks.md).
 *
 * It reads RFC 8259 JSON text: one value with optional white space around it
 * (space, tab, CR, LF). That is a subset of what cJSON accepts (cJSON also
 * takes a byte-order mark, any byte up to 0x20 as white space, numbers such as
 * "01" or "1.", and text after the value); on the subset the tree is cJSON's,
 * node for node: the same types, valueint rule, key and string bytes (escapes
 * decoded, \u pairs to UTF-8, other bytes as they are), tail pointers, and the
 * same nesting limit. fuzz/fuzz_jsonparse.c holds the two to that.
 *
 * Every node and string comes from cJSON_malloc, so cJSON_Delete frees the
 * tree; inside an admission the nodes are cut from chunks of the arena (take)
 * and the strings stay in the parser's own copy of the text, also the arena's.
 * That copy is marked as it is made (copy_marked): a bit for each '"' and
 * backslash, from which string ends most strings with no loop.
 */
#include "json.h"

#include "arena.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

struct reader {
	const unsigned char *p, *end;
	int depth;
	int arena;   /* an arena serves cJSON_malloc: nodes are cut from chunks, strings in place */
	char *chunk; /* the chunk being cut, and what is left of it */
	size_t left;
	const unsigned char *base; /* in an arena: the parser's copy of the text, and */
	const uint64_t *marks;     /* a bit for each of its '"' and backslash bytes (marks_of) */
};

/*
 * In an admission's arena nothing is freed one by one (cJSON_free of a pointer
 * into the arena does nothing), so the parser cuts its nodes from
 * chunks it takes from the arena: an inline bump instead of a call through
 * cJSON's hook for each of a 64 KB pod's 16,000 allocations. Outside an arena
 * every allocation is cJSON_malloc's, so that cJSON_Delete frees the tree.
 */
#define CHUNK 16384

static inline __attribute__((always_inline)) void *take(struct reader *r, size_t n)
{
	void *p;

	if (!r->arena)
		return cJSON_malloc(n);
	n = (n + 7) & ~(size_t)7; /* nodes stay aligned */
	if (n > r->left) {
		if (n > CHUNK / 4)
			return cJSON_malloc(n); /* a long string: its own */
		if ((r->chunk = cJSON_malloc(CHUNK)) == NULL) {
			r->left = 0;
			return NULL;
		}
		r->left = CHUNK;
	}
	p = r->chunk;
	r->chunk += n;
	r->left -= n;
	return p;
}

/* cJSON's CJSON_NESTING_LIMIT: arrays and objects deeper than this are refused. */
#define NESTING_LIMIT 1000

static cJSON *value(struct reader *r);

/*
 * The API server sends compact JSON: the first byte is almost always not
 * white space, and that test is inlined at every call (skip_ws was 5 % of a
 * 64 KB pod's parse as a loop).
 */
static inline __attribute__((always_inline)) void skip_ws(struct reader *r)
{
	if (r->p != r->end && r->p[0] > ' ')
		return;
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t'))
		r->p++;
}

static inline __attribute__((always_inline)) cJSON *node(struct reader *r, int type)
{
	cJSON *n = take(r, sizeof(*n));

	if (n != NULL) {
		memset(n, 0, sizeof(*n));
		n->type = type;
	}
	return n;
}

static int hex4(const unsigned char *s, unsigned *out)
{
	unsigned v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		unsigned c = s[i], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (c | 0x20) - 'a' + 10;
		else
			return -1;
		v = v << 4 | d;
	}
	*out = v;
	return 0;
}

/* Writes code point cp as UTF-8 at o; returns the bytes written. */
static size_t utf8_put(unsigned long cp, char *o)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

#ifdef __SSE2__
/* A bit for each of the sixteen bytes of v that is '"' or a backslash. */
static inline unsigned quote_or_backslash_of(__m128i v)
{
	return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
	                                                _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
}

/* The same for the sixteen bytes at q. */
static inline unsigned quote_or_backslash(const unsigned char *q)
{
	return quote_or_backslash_of(_mm_loadu_si128((const __m128i *)(const void *)q));
}
#endif

/* 1 for the bytes that end a plain run inside a string: '"' and '\\'. */
static const unsigned char string_stop[256] = {['"'] = 1, ['\\'] = 1};

/*
 * The string whose opening quote r->p is at, NUL-terminated: in an arena the
 * string where it is in the parser's copy, decoded in place; outside one a
 * copy from cJSON_malloc. NULL on a bad escape, a missing quote or no memory.
 * Bytes are kept as they are, as cJSON does (the API server sends valid UTF-8).
 */
static char *string_any(struct reader *r)
{
	const unsigned char *s = ++r->p, *q = s, *end = r->end;
	size_t n;
	char *out, *o;
	int escaped = 0;

	for (;;) {
#ifdef __SSE2__
		/* Sixteen bytes a step through the plain run (SSE2 is every x86-64's). */
		while (end - q >= 16) {
			unsigned m = quote_or_backslash(q);
			if (m != 0) {
				q += __builtin_ctz(m);
				break;
			}
			q += 16;
		}
#endif
		while (q < end && !string_stop[*q])
			q++;
		if (q == end)
			return NULL;
		if (*q == '"')
			break;
		escaped = 1; /* a backslash: skip it and the byte it escapes */
		if (end - q < 2)
			return NULL;
		q += 2;
	}
	n = (size_t)(q - s); /* an escape never decodes to more bytes than it takes */
	r->p = q + 1;
	if (r->arena) {
		/*
		 * In an arena the text is the parser's own copy (json_parse), inside
		 * the arena: the string stays where it is, decoded in place (the
		 * decoded bytes never pass the ones still to read), its closing quote
		 * turned into its NUL. No allocation and no copy for each of a 64 KB
		 * pod's 3,500 strings; cJSON_free of it does nothing, as of any node.
		 */
		out = (char *)(uintptr_t)s;
		if (!escaped) {
			out[n] = '\0';
			return out;
		}
	} else {
		if ((out = take(r, n + 1)) == NULL)
			return NULL;
		if (!escaped) {
			memcpy(out, s, n);
			out[n] = '\0';
			return out;
		}
	}
	for (o = out; s < q;) {
		unsigned u, lo;
		unsigned long cp;

		if (*s != '\\') {
			*o++ = (char)*s++;
			continue;
		}
		switch (s[1]) {
		case '"':
		case '\\':
		case '/':
			*o++ = (char)s[1];
			break;
		case 'b':
			*o++ = '\b';
			break;
		case 'f':
			*o++ = '\f';
			break;
		case 'n':
			*o++ = '\n';
			break;
		case 'r':
			*o++ = '\r';
			break;
		case 't':
			*o++ = '\t';
			break;
		case 'u':
			/* \uXXXX, a surrogate pair as two: cJSON's utf16_literal_to_utf8 */
			if (q - s < 6 || hex4(s + 2, &u) != 0 || (u >= 0xdc00 && u <= 0xdfff))
				goto bad;
			cp = u;
			if (u >= 0xd800 && u <= 0xdbff) {
				if (q - s < 12 || s[6] != '\\' || s[7] != 'u' ||
				    hex4(s + 8, &lo) != 0 || lo < 0xdc00 || lo > 0xdfff)
					goto bad;
				cp = 0x10000 + (((unsigned long)u & 0x3ff) << 10 | (lo & 0x3ff));
				s += 6;
			}
			o += utf8_put(cp, o);
			s += 6;
			continue;
		default:
			goto bad;
		}
		s += 2;
	}
	*o = '\0';
	return out;
bad:
	cJSON_free(out);
	return NULL;
}

/*
 * string, inlined where keys and values are read: in an arena, a string
 * whose first '"' or backslash in its next 64 bytes is its closing quote is
 * ended in place here by one look at the marks (most of a pod's strings);
 * anything else is string_any's.
 */
static inline __attribute__((always_inline)) char *string(struct reader *r)
{
	if (r->marks != NULL) {
		const unsigned char *s = r->p + 1;
		size_t at = (size_t)(s - r->base);
		unsigned sh = (unsigned)(at % 64);
		/* the 64 marks from s on: the rest of its word and the start of the next */
		uint64_t m = r->marks[at / 64] >> sh | r->marks[at / 64 + 1] << 1 << (63 - sh);

		if (m != 0) {
			const unsigned char *q = s + __builtin_ctzll(m);
			if (*q == '"') {
				r->p = q + 1;
				*(char *)(uintptr_t)q = '\0';
				return (char *)(uintptr_t)s;
			}
		}
	}
	return string_any(r);
}

/* An RFC 8259 number at r->p (first byte '-' or a digit), with cJSON's valueint rule. */
static cJSON *number(struct reader *r)
{
	const unsigned char *s = r->p, *q = s;
	char buf[64];
	double d;
	cJSON *n;
	int whole;

	if (q < r->end && *q == '-')
		q++;
	if (q < r->end && *q == '0')
		q++;
	else if (q < r->end && *q >= '1' && *q <= '9')
		while (q < r->end && *q >= '0' && *q <= '9')
			q++;
	else
		return NULL;
	whole = !(q < r->end && (*q == '.' || *q == 'e' || *q == 'E'));
	if (q < r->end && *q == '.') {
		if (++q == r->end || *q < '0' || *q > '9')
			return NULL;
		while (q < r->end && *q >= '0' && *q <= '9')
			q++;
	}
	if (q < r->end && (*q == 'e' || *q == 'E')) {
		if (++q < r->end && (*q == '+' || *q == '-'))
			q++;
		if (q == r->end || *q < '0' || *q > '9')
			return NULL;
		while (q < r->end && *q >= '0' && *q <= '9')
			q++;
	}
	if ((size_t)(q - s) >= sizeof(buf))
		return NULL; /* cJSON reads at most 63 bytes of a number */
	if (whole && q - s <= 15) {
		/*
		 * An integer of at most 15 digits (a pod's ports, counts and
		 * seconds) is exact in a double: strtod's answer, without strtod.
		 */
		const unsigned char *c = *s == '-' ? s + 1 : s;
		long long v = 0;

		for (; c < q; c++)
			v = v * 10 + (*c - '0');
		d = *s == '-' ? -(double)v : (double)v;
	} else {
		memcpy(buf, s, (size_t)(q - s));
		buf[q - s] = '\0';
		d = strtod(buf, NULL);
	}
	if ((n = node(r, cJSON_Number)) == NULL)
		return NULL;
	n->valuedouble = d;
	n->valueint = d >= INT_MAX ? INT_MAX : d <= (double)INT_MIN ? INT_MIN : (int)d;
	r->p = q;
	return n;
}

static int literal(struct reader *r, const char *word, size_t n)
{
	if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
		return -1;
	r->p += n;
	return 0;
}

/*
 * In place (an arena's parse), a member whose key is "name" or "value" (most
 * of a pod's members: every env entry, port, volume and mount has a name) is
 * known from one eight-byte compare: the bytes of the key with its quotes and
 * the ':' after it. Returns the length of those bytes, 0 for any other key. The
 * key's end is then not a load that the next string's start waits on.
 */
static inline __attribute__((always_inline)) size_t known_key(const struct reader *r)
{
	uint64_t w;

	if (r->end - r->p < 8)
		return 0;
	memcpy(&w, r->p, sizeof(w));
	if ((w & 0x00ffffffffffffffULL) == 0x003a22656d616e22ULL) /* "name": */
		return 7;
	if (w == 0x3a2265756c617622ULL) /* "value": */
		return 8;
	return 0;
}

/* An array or object at r->p ('[' or '{'): its members in order, head->prev the last. */
static cJSON *container(struct reader *r, int object)
{
	cJSON *c, *last = NULL, *item;
	char close = object ? '}' : ']';

	if (r->depth >= NESTING_LIMIT || (c = node(r, object ? cJSON_Object : cJSON_Array)) == NULL)
		return NULL;
	r->depth++;
	r->p++;
	skip_ws(r);
	if (r->p < r->end && *r->p == close) {
		r->p++;
		r->depth--;
		return c;
	}
	for (;;) {
		char *key = NULL;

		/*
		 * The API server's JSON is compact: ':' right after a key, ',' or
		 * the close right after a value. Those are tested first, and white
		 * space skipped only when they are not there.
		 */
		if (object) {
			size_t k = r->marks != NULL ? known_key(r) : 0;

			if (k != 0) {
				key = (char *)(uintptr_t)r->p + 1;
				key[k - 3] = '\0';
				r->p += k - 1;
			} else if (r->p == r->end || *r->p != '"' || (key = string(r)) == NULL)
				goto bad;
			if (r->p == r->end || *r->p != ':') {
				skip_ws(r);
				if (r->p == r->end || *r->p != ':') {
					cJSON_free(key);
					goto bad;
				}
			}
			r->p++;
			skip_ws(r);
		}
		if (r->p < r->end && *r->p == '"') {
			/* a string value (most of a pod's values), without value's call */
			char *s = string(r);

			if (s == NULL || (item = node(r, cJSON_String)) == NULL) {
				cJSON_free(s);
				cJSON_free(key);
				goto bad;
			}
			item->valuestring = s;
		} else if ((item = value(r)) == NULL) {
			cJSON_free(key);
			goto bad;
		}
		item->string = key;
		if (last == NULL) {
			c->child = item;
		} else {
			last->next = item;
			item->prev = last;
		}
		last = item;
		if (r->p == r->end || (*r->p != ',' && *r->p != close))
			skip_ws(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			skip_ws(r);
			continue;
		}
		if (r->p < r->end && *r->p == close) {
			r->p++;
			break;
		}
		goto bad;
	}
	c->child->prev = last;
	r->depth--;
	return c;
bad:
	if (c->child != NULL)
		c->child->prev = last;
	cJSON_Delete(c);
	return NULL;
}

static cJSON *value(struct reader *r)
{
	cJSON *n;
	char *s;

	if (r->p == r->end)
		return NULL;
	switch (*r->p) {
	case '"':
		if ((s = string(r)) == NULL)
			return NULL;
		if ((n = node(r, cJSON_String)) == NULL) {
			cJSON_free(s);
			return NULL;
		}
		n->valuestring = s;
		return n;
	case '{':
		return container(r, 1);
	case '[':
		return container(r, 0);
	case 't':
		if (literal(r, "true", 4) != 0 || (n = node(r, cJSON_True)) == NULL)
			return NULL;
		n->valueint = 1; /* cJSON sets it for true */
		return n;
	case 'f':
		return literal(r, "false", 5) == 0 ? node(r, cJSON_False) : NULL;
	case 'n':
		return literal(r, "null", 4) == 0 ? node(r, cJSON_NULL) : NULL;
	default:
		return *r->p == '-' || (*r->p >= '0' && *r->p <= '9') ? number(r) : NULL;
	}
}

/*
 * Copies len bytes of text to own (NUL-terminated) and returns its marks, a
 * bit for each '"' and backslash (bit at % 64 of word at / 64), with a last
 * word of zeros: string finds a string's end from them with no loop and no
 * branch on its length, and the marks cost little more than the copy that
 * reads the same bytes (a 64 KB pod's strings were scanned sixteen bytes a
 * step, with a branch on each string's length that no predictor learns).
 */
static uint64_t *copy_marked(char *own, const char *text, size_t len)
{
	size_t words = len / 64 + 2, at = 0;
	uint64_t *marks = cJSON_malloc(words * sizeof(*marks));

	if (marks == NULL)
		return NULL;
#ifdef __SSE2__
	for (; len - at >= 64; at += 64) {
		uint64_t w = 0;
#pragma GCC unroll 4
		for (unsigned k = 0; k < 4; k++) {
			__m128i v =
			    _mm_loadu_si128((const __m128i *)(const void *)(text + at + 16 * k));
			_mm_storeu_si128((__m128i *)(void *)(own + at + 16 * k), v);
			w |= (uint64_t)quote_or_backslash_of(v) << (16 * k);
		}
		marks[at / 64] = w;
	}
#endif
	memset(marks + at / 64, 0, (words - at / 64) * sizeof(*marks));
	for (; at < len; at++) {
		own[at] = text[at];
		if (string_stop[(unsigned char)text[at]])
			marks[at / 64] |= 1ULL << (at % 64);
	}
	own[len] = '\0';
	return marks;
}

cJSON *json_parse(const char *text, size_t len)
{
	struct reader r;
	cJSON *root;

	if (text == NULL)
		return NULL;
	r.depth = 0;
	r.arena = arena_active();
	r.chunk = NULL;
	r.left = 0;
	r.base = NULL;
	r.marks = NULL;
	if (r.arena) {
		/* The parser's own copy, in the arena, for strings in place (string). */
		char *own = cJSON_malloc(len + 1);

		if (own == NULL || (r.marks = copy_marked(own, text, len)) == NULL)
			return NULL;
		text = own;
		r.base = (const unsigned char *)own;
	}
	r.p = (const unsigned char *)text;
	r.end = r.p + len;
	skip_ws(&r);
	if ((root = value(&r)) == NULL)
		return NULL;
	skip_ws(&r);
	if (r.p != r.end) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}
