/*
 * Unit tests for the shared helpers that had copies before: the growable
 * buffer (limit, caller storage), base64 both ways and the decimal writer.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "util.h"
#include "strbuf.h"
#include "base64.h"

static void test_strbuf(void)
{
	struct strbuf sb;
	char stack[8], *got;
	size_t i;

	/* a limit: the append that would pass it fails, and later ones do nothing */
	strbuf_init_max(&sb, 10);
	strbuf_puts(&sb, "0123456789");
	CHECK(!sb.oom && sb.len == 10 && sb.cap <= 11, "exactly the limit: len %zu cap %zu", sb.len,
	      sb.cap);
	strbuf_puts(&sb, "x");
	CHECK(sb.oom && sb.too_big, "past the limit");
	strbuf_reset(&sb);
	CHECK(!sb.oom && !sb.too_big && sb.len == 0 && strcmp(sb.buf, "") == 0, "reset");
	strbuf_puts(&sb, "again");
	got = strbuf_take(&sb);
	CHECK_STR(got, "again", "after reset");
	free(got);
	CHECK(sb.buf == NULL && sb.len == 0, "take resets");

	/* caller storage first, the heap when it grows */
	strbuf_init_stack(&sb, stack, sizeof(stack));
	strbuf_puts(&sb, "1234567");
	CHECK(sb.buf == stack, "fits in the caller's storage");
	got = strbuf_take(&sb);
	CHECK(got != NULL && got != stack && strcmp(got, "1234567") == 0, "take copies it");
	free(got);
	strbuf_init_stack(&sb, stack, sizeof(stack));
	for (i = 0; i < 100; i++)
		strbuf_printf(&sb, "%zu,", i % 10);
	CHECK(sb.buf != stack && sb.len == 200 && !sb.oom, "moved to the heap: len %zu", sb.len);
	CHECK(strncmp(sb.buf, "0,1,2,3,4,5,6,7,8,9,0,", 22) == 0, "content kept on the move");
	strbuf_free(&sb);
	strbuf_free(&sb); /* twice is fine */

	strbuf_init(&sb);
	got = strbuf_take(&sb);
	CHECK_STR(got, "", "empty take");
	free(got);

	/* one byte at a time: in the caller's storage, onto the heap, and up to a limit */
	strbuf_init_stack(&sb, stack, sizeof(stack));
	for (i = 0; i < 300; i++)
		strbuf_putc(&sb, (char)('a' + i % 26));
	CHECK(sb.buf != stack && sb.len == 300 && !sb.oom && sb.buf[300] == '\0' &&
	          strncmp(sb.buf, "abcdefghijklmnopqrstuvwxyzab", 28) == 0 && sb.buf[299] == 'n',
	      "putc: len %zu", sb.len);
	strbuf_free(&sb);
	strbuf_init_max(&sb, 3);
	strbuf_puts(&sb, "ab");
	strbuf_putc(&sb, 'c');
	strbuf_putc(&sb, 'd');
	CHECK(sb.oom && sb.too_big && sb.len == 3, "putc past the limit");
	strbuf_puts(&sb, "");
	sb.len = 1; /* room again, but after a failed append later ones do nothing */
	sb.buf[1] = '\0';
	strbuf_putc(&sb, 'x');
	CHECK(sb.len == 1, "putc after a failed append");
	strbuf_free(&sb);
}

static void test_base64(void)
{
	static const struct {
		const char *in;
		const char *want; /* NULL: refused */
		const char *what;
	} cases[] = {
	    {"aGVsbG8=", "hello", "padded"},
	    {"aGVs\nbG8=\n", "hello", "newlines ignored"},
	    {" aGVs bG8=\t", "hello", "spaces and tabs ignored"},
	    {"aA==", "h", "two pad bytes"},
	    {"", "", "empty"},
	    {"aGVsbG8", NULL, "unpadded (Go's StdEncoding refuses it too)"},
	    {"aA=", NULL, "short padding"},
	    {"aGVsbG8=x", NULL, "data after the padding"},
	    {"a!==", NULL, "outside the alphabet"},
	    {"aGVsbG8-", NULL, "URL alphabet"},
	};
	size_t i, n;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned char *got = base64_decode(cases[i].in, strlen(cases[i].in), &n);
		if (cases[i].want)
			CHECK(got != NULL && n == strlen(cases[i].want) &&
			          memcmp(got, cases[i].want, n) == 0,
			      "%s", cases[i].what);
		else
			CHECK(got == NULL, "%s: accepted", cases[i].what);
		free(got);
	}
	/* Round trip through the encoder, appended to text: every length to 300, every byte value.
	 */
	{
		unsigned char in[300], *dec;
		struct strbuf sb;
		int bad = 0;

		for (n = 0; n < sizeof(in); n++)
			in[n] = (unsigned char)(n * 167 + 13);
		for (i = 0; i <= sizeof(in); i++) {
			strbuf_init(&sb);
			strbuf_puts(&sb, "x");
			base64_append(&sb, in, i);
			dec = sb.oom || sb.len != 1 + (i + 2) / 3 * 4
			          ? NULL
			          : base64_decode(sb.buf + 1, sb.len - 1, &n);
			bad += dec == NULL || n != i || memcmp(dec, in, i) != 0;
			free(dec);
			strbuf_free(&sb);
		}
		CHECK(bad == 0, "%d lengths did not decode to their bytes", bad);
	}
}

/* fmt_long writes what printf's %lld does, without the NUL. */
static void test_fmt_long(void)
{
	static const long long cases[] = {0,
	                                  7,
	                                  9,
	                                  10,
	                                  99,
	                                  100,
	                                  101,
	                                  999,
	                                  1000,
	                                  1023,
	                                  1024,
	                                  8191,
	                                  10000,
	                                  99999,
	                                  -1,
	                                  -10,
	                                  -100,
	                                  -12345,
	                                  1234567890123LL,
	                                  LLONG_MAX,
	                                  LLONG_MIN};
	char got[24], want[24];
	size_t i, n;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(got, 'x', sizeof(got));
		n = fmt_long(got, cases[i]);
		snprintf(want, sizeof(want), "%lld", cases[i]);
		CHECK(n == strlen(want) && memcmp(got, want, n) == 0 && got[n] == 'x',
		      "fmt_long(%s) wrote %.*s", want, (int)n, got);
	}
}

/*
 * fmt_printf writes what snprintf writes, and returns the same, at every buffer
 * size around the text's; bounded_printf reports exactly the truncations.
 */
#define SAME_AS_SNPRINTF(fmt, ...)                                                                 \
	do {                                                                                       \
		char got[96], want[96];                                                            \
		int whole = snprintf(want, sizeof(want), fmt, __VA_ARGS__);                        \
		size_t sz;                                                                         \
		for (sz = 0; sz <= (size_t)whole + 2 && sz <= sizeof(got); sz++) {                 \
			int gn, wn;                                                                \
			memset(got, 'x', sizeof(got));                                             \
			memset(want, 'x', sizeof(want));                                           \
			gn = fmt_printf(got, sz, fmt, __VA_ARGS__);                                \
			wn = snprintf(want, sz, fmt, __VA_ARGS__);                                 \
			CHECK(gn == wn && memcmp(got, want, sizeof(got)) == 0,                     \
			      "fmt_printf(\"%s\") at %zu bytes: %d '%.*s' vs snprintf %d '%.*s'",  \
			      fmt, sz, gn, (int)(sz ? sz : 1), got, wn, (int)(sz ? sz : 1), want); \
			CHECK((bounded_printf(got, sz, fmt, __VA_ARGS__) != 0) == (wn >= (int)sz), \
			      "bounded_printf(\"%s\") at %zu bytes", fmt, sz);                     \
		}                                                                                  \
	} while (0)

static void test_fmt_printf(void)
{
	const char *volatile none = NULL;

	SAME_AS_SNPRINTF("%s%s", "ddp-0", ".ddp.ml.svc.cluster.local");
	SAME_AS_SNPRINTF(".%s.%s.svc.%s", "ddp", "ml", "cluster.local");
	SAME_AS_SNPRINTF("%s:%ld", "ddp-0.ddp.ml.svc.cluster.local", 29500L);
	SAME_AS_SNPRINTF("rank=%ld,world-size=%ld,master=%s:%ld%s%s", -3L, LONG_MAX, "h", LONG_MIN,
	                 "", ",x");
	SAME_AS_SNPRINTF("%d %d %d", 0, INT_MIN, INT_MAX);
	SAME_AS_SNPRINTF("100%% %s %%", "sure");
	SAME_AS_SNPRINTF("[%s]", none);
	SAME_AS_SNPRINTF("%s", "");
	SAME_AS_SNPRINTF("plain text, no directive%s", "");
	/* formats of other kinds go to vsnprintf */
	SAME_AS_SNPRINTF("%.3s|%5ld|%zu|%x", "abcdef", 42L, (size_t)7, 255u);
}

static void test_parse_long(void)
{
	static const struct {
		const char *s;
		long min, max;
		int ok;
		long v;
	} cases[] = {
	    {"0", 0, 10, 1, 0},     {"10", 0, 10, 1, 10},
	    {"11", 0, 10, 0, 0},    {"-1", 0, 10, 0, 0},
	    {"-1", -5, 10, 1, -1},  {"+1", 0, 10, 0, 0},
	    {" 1", 0, 10, 0, 0},    {"1 ", 0, 10, 0, 0},
	    {"", 0, 10, 0, 0},      {"99999999999999999999", 0, 10, 0, 0},
	    {"0x10", 0, 100, 0, 0}, {"007", 0, 10, 1, 7},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long v = -99;
		int ok = parse_long(cases[i].s, cases[i].min, cases[i].max, &v) == 0;
		CHECK(ok == cases[i].ok && (!ok || v == cases[i].v),
		      "parse_long('%s'): ok %d v %ld", cases[i].s, ok, v);
	}
}

int main(void)
{
	test_parse_long();
	test_strbuf();
	test_base64();
	test_fmt_long();
	test_fmt_printf();
	TEST_MAIN_END("util");
}
