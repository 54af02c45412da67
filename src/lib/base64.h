/*
 * Standard base64 (RFC 4648): the answer's patch is encoded into a strbuf
 * (our encoder), kubeconfig *-data fields are decoded (OpenSSL's decoder).
 * Decoded bytes are malloc'd and owned by the caller.
 */
#ifndef DISTENV_BASE64_H
#define DISTENV_BASE64_H

#include <stddef.h>

#include "strbuf.h"

/* Appends the standard base64 encoding of len bytes of data (sets oom when it cannot). */
void base64_append(struct strbuf *sb, const void *data, size_t len);

/*
 * Decodes len bytes of standard base64 (padding required, white space
 * ignored, nothing after the padding), as Go's StdEncoding reads kubeconfig
 * *-data fields. Returns malloc'd bytes and their count in *outlen (caller
 * frees; wipe first if secret), or NULL when s is not base64 or memory ran
 * out. A failed decode wipes what it wrote.
 */
unsigned char *base64_decode(const char *s, size_t len, size_t *outlen)
    __attribute__((warn_unused_result));

#endif
