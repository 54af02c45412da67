/*
 * Standard base64: an encoder into the caller's strbuf and OpenSSL's decoder.
 * Nothing here keeps memory; a decode's result belongs to its caller.
 */
#include "base64.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

/* Standard base64 of len bytes into out ((len + 2) / 3 * 4 bytes, no NUL); returns that count. */
static size_t base64_into(char *out, const unsigned char *in, size_t len)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *o = out;
	size_t i = 0;

	for (; i + 3 <= len; i += 3, o += 4) {
		unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 | in[i + 2];
		o[0] = tab[v >> 18];
		o[1] = tab[(v >> 12) & 63];
		o[2] = tab[(v >> 6) & 63];
		o[3] = tab[v & 63];
	}
	if (i < len) {
		unsigned v = (unsigned)in[i] << 16 | (i + 1 < len ? (unsigned)in[i + 1] << 8 : 0);
		o[0] = tab[v >> 18];
		o[1] = tab[(v >> 12) & 63];
		o[2] = i + 1 < len ? tab[(v >> 6) & 63] : '=';
		o[3] = '=';
		o += 4;
	}
	return (size_t)(o - out);
}

void base64_append(struct strbuf *sb, const void *data, size_t len)
{
	if (len > ((size_t)-1) / 4 * 3 - 3 || strbuf_reserve(sb, (len + 2) / 3 * 4) != 0) {
		sb->oom = 1;
		return;
	}
	sb->len += base64_into(sb->buf + sb->len, data, len);
	sb->buf[sb->len] = '\0';
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
