/*
 * A kubeconfig read into the plain data the API client needs: the current
 * context's server, CA, client certificate and key (inline or as paths made
 * absolute against the kubeconfig's directory) and token. kubeconfig_parse is
 * pure (text in, struct out); kubeconfig_load reads the file and checks that
 * the files it names are readable. A struct kubeconfig owns its inline key
 * material and token; kubeconfig_free wipes and frees them.
 */
#ifndef DISTENV_KUBECONFIG_H
#define DISTENV_KUBECONFIG_H

#include <limits.h>
#include <stddef.h>

#define KUBECONFIG_MAX       (4L * 1024 * 1024)
#define KUBECONFIG_TOKEN_MAX 16384

struct kubeconfig {
	char server[512]; /* no trailing slash */
	char context[256];
	char proxy[512];
	int plain_http; /* http:// to a loopback address (kubectl proxy) */

	char ca_file[PATH_MAX];
	unsigned char *ca_data;
	size_t ca_len;
	char cert_file[PATH_MAX];
	char key_file[PATH_MAX];
	unsigned char *cert_data;
	size_t cert_len;
	unsigned char *key_data; /* wiped on free */
	size_t key_len;

	char *token; /* NUL-terminated; token_len counts the NUL; wiped on free */
	size_t token_len;
	char token_file[PATH_MAX]; /* takes precedence over token */
};

/*
 * Reads a kubeconfig (YAML or JSON) of the current context from text. path
 * names it in messages and is the base of relative file paths; nothing is
 * read from disk. Returns 0 and fills k (free with kubeconfig_free), or -1
 * with "kubeconfig PATH: why" in err and k holding nothing.
 */
int kubeconfig_parse(const char *text, size_t len, const char *path, struct kubeconfig *k,
                     char *err, size_t errlen) __attribute__((warn_unused_result));

/*
 * Reads the file at path, parses it, checks that the CA, certificate and key
 * files it names are readable and reads the token file into k->token.
 * Returns 0, or -1 with err and k holding nothing. The text read is wiped.
 */
int kubeconfig_load(const char *path, struct kubeconfig *k, char *err, size_t errlen)
    __attribute__((warn_unused_result));

/*
 * Sets k->server from an https:// URL (or http:// to a loopback address),
 * without trailing slashes. Returns 0 or -1 with err.
 */
int kubeconfig_set_server(struct kubeconfig *k, const char *server, char *err, size_t errlen)
    __attribute__((warn_unused_result));

/*
 * Reads a token file: trimmed, non-empty, no control bytes or spaces. Returns
 * a malloc'd string and its allocated size (length + 1) in *size (caller wipes
 * and frees), or NULL with err.
 */
char *kubeconfig_read_token(const char *path, size_t *size, char *err, size_t errlen)
    __attribute__((warn_unused_result));

/* Checks path is readable: 0, or -1 with "WHAT PATH: why" in err. */
int kubeconfig_check_readable(const char *what, const char *path, char *err, size_t errlen);

/* Wipes and frees what k holds (not k itself) and zeroes it. NULL is fine. */
void kubeconfig_free(struct kubeconfig *k);

#endif
