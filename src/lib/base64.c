/*
 * Standard base64: the encoder is ours (a table of every 12-bit group's two
 * characters, six bytes a step: about a third of EVP_EncodeBlock's
 * instructions, docs/benchmarks.md; the unit tests hold it equal to
 * EVP_EncodeBlock), the decoder is OpenSSL's EVP decoder. Nothing here keeps
 * memory; a decode's result belongs to its caller.
 */
#include "base64.h"

#include <endian.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_SSSE3_PATH 1

/*
 * Twelve bytes a step into sixteen characters with SSSE3 (W. Mula and D. Lemire,
 * "Faster Base64 Encoding and Decoding using AVX2 Instructions", 2018: the
 * shuffle, the two multiplies that spread each 24 bits into four 6-bit
 * indices, and the pshufb table that adds each index's offset). Reads sixteen
 * bytes a step, so it stops sixteen before the end; returns the bytes it encoded.
 */
__attribute__((target("ssse3"))) static size_t encode_ssse3(const unsigned char *in, size_t len,
                                                            char *out)
{
	const __m128i shuf = _mm_set_epi8(10, 11, 9, 10, 7, 8, 6, 7, 4, 5, 3, 4, 1, 2, 0, 1);
	const __m128i shift =
	    _mm_setr_epi8('a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
	                  '0' - 52, '0' - 52, '0' - 52, '0' - 52, '+' - 62, '/' - 63, 'A', 0, 0);
	size_t i = 0;

	for (; len - i >= 16; i += 12, out += 16) {
		__m128i v = _mm_shuffle_epi8(
		    _mm_loadu_si128((const __m128i *)(const void *)(in + i)), shuf);
		__m128i hi = _mm_mulhi_epu16(_mm_and_si128(v, _mm_set1_epi32(0x0fc0fc00)),
		                             _mm_set1_epi32(0x04000040));
		__m128i lo = _mm_mullo_epi16(_mm_and_si128(v, _mm_set1_epi32(0x003f03f0)),
		                             _mm_set1_epi32(0x01000010));
		__m128i idx = _mm_or_si128(hi, lo);
		__m128i k = _mm_subs_epu8(idx, _mm_set1_epi8(51));

		k = _mm_or_si128(
		    k, _mm_and_si128(_mm_cmpgt_epi8(_mm_set1_epi8(26), idx), _mm_set1_epi8(13)));
		_mm_storeu_si128((__m128i *)(void *)out,
		                 _mm_add_epi8(_mm_shuffle_epi8(shift, k), idx));
	}
	return i;
}

static int ssse3;

static void cpu_init(void)
{
	ssse3 = __builtin_cpu_supports("ssse3");
}
#endif

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static uint16_t pairs[4096]; /* the two characters of each 12-bit group, in memory order */
static pthread_once_t pairs_once = PTHREAD_ONCE_INIT;

static void pairs_init(void)
{
	unsigned i;

#ifdef HAVE_SSSE3_PATH
	cpu_init();
#endif
	for (i = 0; i < 4096; i++) {
		char two[2] = {alphabet[i >> 6], alphabet[i & 63]};
		memcpy(&pairs[i], two, 2);
	}
}

void base64_append(struct strbuf *sb, const void *data, size_t len)
{
	const unsigned char *in = data;
	size_t i = 0;
	char *o;

	if (len > (size_t)INT_MAX / 4 * 3 || strbuf_reserve(sb, (len + 2) / 3 * 4) != 0) {
		sb->oom = 1;
		return;
	}
	pthread_once(&pairs_once, pairs_init);
	o = sb->buf + sb->len;
#ifdef HAVE_SSSE3_PATH
	if (ssse3 && len >= 16) {
		i = encode_ssse3(in, len, o);
		o += i / 3 * 4;
	}
#endif
	/* Six bytes a step from an eight-byte load: four 12-bit groups. */
	for (; len - i >= 8; i += 6) {
		uint64_t w;
		uint16_t g[4];

		memcpy(&w, in + i, 8);
		w = be64toh(w); /* the first byte on top; the last two are the next step's */
		g[0] = pairs[w >> 52];
		g[1] = pairs[(w >> 40) & 0xfff];
		g[2] = pairs[(w >> 28) & 0xfff];
		g[3] = pairs[(w >> 16) & 0xfff];
		memcpy(o, g, 8);
		o += 8;
	}
	for (; len - i >= 3; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		memcpy(o, &pairs[v >> 12], 2);
		memcpy(o + 2, &pairs[v & 0xfff], 2);
		o += 4;
	}
	if (len - i == 1) {
		o[0] = alphabet[in[i] >> 2];
		o[1] = alphabet[(in[i] & 3) << 4];
		o[2] = '=';
		o[3] = '=';
		o += 4;
	} else if (len - i == 2) {
		o[0] = alphabet[in[i] >> 2];
		o[1] = alphabet[(in[i] & 3) << 4 | in[i + 1] >> 4];
		o[2] = alphabet[(in[i + 1] & 15) << 2];
		o[3] = '=';
		o += 4;
	}
	*o = '\0'; /* strbuf_reserve left room for it */
	sb->len = (size_t)(o - sb->buf);
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
