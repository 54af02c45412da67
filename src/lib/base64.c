/*
 * Standard base64 with OpenSSL both ways: EVP_EncodeBlock into the caller's
 * strbuf (a hand-written encoder measured no cheaper: docs/benchmarks.md) and
 * the EVP decoder. Nothing here keeps memory; a decode's result belongs to
 * its caller.
 */
#include "base64.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

void base64_append(struct strbuf *sb, const void *data, size_t len)
{
	if (len > (size_t)INT_MAX / 4 * 3 || strbuf_reserve(sb, (len + 2) / 3 * 4) != 0) {
		sb->oom = 1;
		return;
	}
	/* EVP_EncodeBlock writes the NUL too: strbuf_reserve left room for it */
	sb->len += (size_t)EVP_EncodeBlock((unsigned char *)sb->buf + sb->len, data, (int)len);
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
