/* base64 (lib/base64.c): the RFC 4648 test vectors and a patch-shaped input. */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "testutil.h"
#include "strbuf.h"
#include "base64.h"

/*
 * Our encoder against OpenSSL's EVP_EncodeBlock: every length from 0 to 600
 * (each path of the six-byte step, the three-byte step and both tails), bytes
 * from a fixed generator covering all 256 values, appended after text already
 * in the buffer; and every encoding decodes back to its bytes.
 */
static void test_base64_like_openssl(void)
{
	unsigned char in[600], want[801];
	unsigned x = 12345;
	size_t len, i;
	int bad = 0, bad_back = 0;

	for (i = 0; i < sizeof(in); i++) {
		x = x * 1103515245u + 12345u;
		in[i] = (unsigned char)(i < 256 ? i : x >> 16);
	}
	for (len = 0; len <= sizeof(in); len++) {
		struct strbuf sb;
		unsigned char *back;
		size_t n = 0;
		int wn = EVP_EncodeBlock(want, in + (len % 7 < 3 ? 0 : sizeof(in) - len), (int)len);

		strbuf_init(&sb);
		strbuf_puts(&sb, "p:");
		base64_append(&sb, in + (len % 7 < 3 ? 0 : sizeof(in) - len), len);
		if (sb.oom || sb.len != 2 + (size_t)wn ||
		    memcmp(sb.buf + 2, want, (size_t)wn) != 0 || sb.buf[sb.len] != '\0') {
			if (bad++ == 0)
				CHECK(0, "len %zu: '%s', want 'p:%s'", len, sb.buf ? sb.buf : "",
				      want);
		}
		back = base64_decode(sb.buf + 2, sb.len - 2, &n);
		if (back == NULL || n != len ||
		    memcmp(back, in + (len % 7 < 3 ? 0 : sizeof(in) - len), len) != 0)
			bad_back++;
		free(back);
		strbuf_free(&sb);
	}
	CHECK(bad == 0, "%d lengths encoded unlike EVP_EncodeBlock", bad);
	CHECK(bad_back == 0, "%d encodings did not decode back", bad_back);
}

static void test_base64(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {"", ""},        {"f", "Zg=="},        {"fo", "Zm8="},
	    {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}, {"[{\"op\":\"add\"}]", "W3sib3AiOiJhZGQifV0="}};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strbuf sb;
		strbuf_init(&sb);
		base64_append(&sb, cases[i].in, strlen(cases[i].in));
		CHECK(!sb.oom, "%s: out of memory", cases[i].in);
		CHECK_STR(sb.buf != NULL ? sb.buf : "(nothing)", cases[i].out, cases[i].in);
		strbuf_free(&sb);
	}
}

int main(void)
{
	test_base64();
	test_base64_like_openssl();
	TEST_MAIN_END("base64");
}
