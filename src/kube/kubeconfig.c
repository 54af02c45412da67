/*
 * kubeconfig: the current context of a kubeconfig read into a struct
 * kubeconfig. kubeconfig_parse works on text alone (no files, no network);
 * kubeconfig_load adds the file reads: the kubeconfig itself, the token file
 * and a readability check of the files it names. The struct owns its inline
 * keys and token; key material and the parsed text are wiped when let go.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "kubeconfig.h"
#include "util.h"
#include "base64.h"
#include "file.h"
#include "yamljson.h"

char *kubeconfig_read_token(const char *path, size_t *len, char *err, size_t errlen)
{
	size_t n = 0, i, size;
	char *t = file_read(path, KUBECONFIG_TOKEN_MAX, &n, err, errlen);

	if (!t)
		return NULL;
	size = n + 1;
	while (n > 0 &&
	       (t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == ' ' || t[n - 1] == '\t'))
		t[--n] = '\0';
	for (i = 0; i < n; i++) {
		if ((unsigned char)t[i] < 0x21 || (unsigned char)t[i] == 0x7f) {
			errf(err, errlen, "token file %s holds a control character or space", path);
			wipe_free(t, size);
			return NULL;
		}
	}
	if (n == 0) {
		errf(err, errlen, "token file %s is empty", path);
		wipe_free(t, size);
		return NULL;
	}
	*len = size;
	return t;
}
/* Resolves a kubeconfig path relative to the kubeconfig's directory, as kubectl does. */
static int resolve_path(const char *kubeconfig, const char *p, char *out, size_t outlen)
{
	const char *slash = strrchr(kubeconfig, '/');

	if (p[0] == '/' || !slash)
		return bounded_printf(out, outlen, "%s", p);
	return bounded_printf(out, outlen, "%.*s/%s", (int)(slash - kubeconfig), kubeconfig, p);
}

/* A string member, or NULL when absent or null; -1 when present with another type. */
static int get_str(const cJSON *obj, const char *key, const char **out, const char *where,
                   char *err, size_t errlen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	*out = NULL;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v)) {
		errf(err, errlen, "%s: '%s' is not a string", where, key);
		return -1;
	}
	*out = v->valuestring[0] ? v->valuestring : NULL;
	return 0;
}

/* The object under `field` of the entry of list `list` named `name`, or NULL with err. */
static const cJSON *find_named(const cJSON *root, const char *list, const char *field,
                               const char *name, char *err, size_t errlen)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, list), *it;

	if (!cJSON_IsArray(arr)) {
		errf(err, errlen, "'%s' is missing or not a list", list);
		return NULL;
	}
	cJSON_ArrayForEach(it, arr)
	{
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, field);
		if (!cJSON_IsString(n) || strcmp(n->valuestring, name) != 0)
			continue;
		if (!cJSON_IsObject(v)) {
			errf(err, errlen, "%s '%s' has no '%s' mapping", field, name, field);
			return NULL;
		}
		return v;
	}
	errf(err, errlen, "no %s named '%s' in '%s'", field, name, list);
	return NULL;
}

static int is_loopback_url(const char *url)
{
	static const char *const prefixes[] = {"http://127.0.0.1:", "http://127.0.0.1/",
	                                       "http://localhost:", "http://localhost/",
	                                       "http://[::1]:",     "http://[::1]/"};
	size_t i;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(url, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return strcmp(url, "http://127.0.0.1") == 0 || strcmp(url, "http://localhost") == 0;
}

int kubeconfig_set_server(struct kubeconfig *kc, const char *server, char *err, size_t errlen)
{
	size_t n;

	if (strncmp(server, "https://", 8) == 0 && server[8] != '\0' && server[8] != '/') {
		kc->plain_http = 0;
	} else if (is_loopback_url(server)) {
		kc->plain_http = 1;
	} else {
		errf(err, errlen,
		     "server '%.200s' must be an https:// URL (http:// only to a loopback address)",
		     server);
		return -1;
	}
	if (strpbrk(server, " \t\r\n?#")) {
		errf(err, errlen, "server '%.200s' is not a plain URL", server);
		return -1;
	}
	if (bounded_printf(kc->server, sizeof(kc->server), "%s", server) != 0) {
		errf(err, errlen, "server URL is too long");
		return -1;
	}
	n = strlen(kc->server);
	while (n > 0 && kc->server[n - 1] == '/')
		kc->server[--n] = '\0';
	return 0;
}

int kubeconfig_check_readable(const char *what, const char *path, char *err, size_t errlen)
{
	if (access(path, R_OK) != 0) {
		errf(err, errlen, "%s %s: %s", what, path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Decodes a *-data field and checks it is PEM. Returns malloc'd bytes or NULL with err. */
static unsigned char *pem_data(const char *what, const char *b64, size_t *len, char *err,
                               size_t errlen)
{
	unsigned char *d = base64_decode(b64, strlen(b64), len);

	if (!d || !memmem(d, *len, "-----BEGIN ", 11)) {
		errf(err, errlen, "%s is not base64 of PEM data", what);
		wipe_free(d, d ? *len : 0);
		return NULL;
	}
	return d;
}

static int load_cluster(struct kubeconfig *kc, const char *path, const cJSON *cl, const char *name,
                        char *err, size_t errlen)
{
	const char *server, *ca, *ca_data, *proxy, *sni;
	const cJSON *insecure = cJSON_GetObjectItemCaseSensitive(cl, "insecure-skip-tls-verify");
	char where[300];

	snprintf(where, sizeof(where), "cluster '%.200s'", name);
	if (get_str(cl, "server", &server, where, err, errlen) < 0 ||
	    get_str(cl, "certificate-authority", &ca, where, err, errlen) < 0 ||
	    get_str(cl, "certificate-authority-data", &ca_data, where, err, errlen) < 0 ||
	    get_str(cl, "proxy-url", &proxy, where, err, errlen) < 0 ||
	    get_str(cl, "tls-server-name", &sni, where, err, errlen) < 0)
		return -1;
	if (!server) {
		errf(err, errlen, "%s has no server", where);
		return -1;
	}
	if (kubeconfig_set_server(kc, server, err, errlen) < 0)
		return -1;
	if (cJSON_IsTrue(insecure)) {
		errf(err, errlen,
		     "%s sets insecure-skip-tls-verify, which distenv refuses: give "
		     "certificate-authority or certificate-authority-data",
		     where);
		return -1;
	}
	if (sni) {
		errf(err, errlen, "%s sets tls-server-name, which distenv does not support", where);
		return -1;
	}
	if (proxy && bounded_printf(kc->proxy, sizeof(kc->proxy), "%s", proxy) != 0) {
		errf(err, errlen, "%s: proxy-url is too long", where);
		return -1;
	}
	if (ca_data) {
		if (!(kc->ca_data = pem_data("certificate-authority-data", ca_data, &kc->ca_len,
		                             err, errlen)))
			return -1;
	} else if (ca) {
		if (resolve_path(path, ca, kc->ca_file, sizeof(kc->ca_file)) != 0) {
			errf(err, errlen, "certificate-authority path is too long");
			return -1;
		}
	}
	return 0;
}

static int load_user(struct kubeconfig *kc, const char *path, const cJSON *u, const char *name,
                     char *err, size_t errlen)
{
	const char *token, *token_file, *cert, *key, *cert_data, *key_data, *user, *as;
	char where[300];

	snprintf(where, sizeof(where), "user '%.200s'", name);
	if (get_str(u, "token", &token, where, err, errlen) < 0 ||
	    get_str(u, "tokenFile", &token_file, where, err, errlen) < 0 ||
	    get_str(u, "client-certificate", &cert, where, err, errlen) < 0 ||
	    get_str(u, "client-key", &key, where, err, errlen) < 0 ||
	    get_str(u, "client-certificate-data", &cert_data, where, err, errlen) < 0 ||
	    get_str(u, "client-key-data", &key_data, where, err, errlen) < 0 ||
	    get_str(u, "username", &user, where, err, errlen) < 0 ||
	    get_str(u, "as", &as, where, err, errlen) < 0)
		return -1;
	if (as) {
		errf(err, errlen, "%s impersonates ('as'), which distenv does not support", where);
		return -1;
	}
	if ((cert || cert_data) != (key || key_data)) {
		errf(err, errlen,
		     "%s has a client certificate without a key, or a key without "
		     "a certificate",
		     where);
		return -1;
	}
	if (!token && !token_file && !cert && !cert_data) {
		if (cJSON_GetObjectItemCaseSensitive(u, "exec") ||
		    cJSON_GetObjectItemCaseSensitive(u, "auth-provider"))
			errf(err, errlen,
			     "%s uses a credential plugin (exec or auth-provider), which "
			     "distenv does not run: give it a token, tokenFile or client "
			     "certificate",
			     where);
		else if (user)
			errf(err, errlen,
			     "%s uses basic authentication, which distenv does not support: "
			     "give it a token, tokenFile or client certificate",
			     where);
		else
			errf(err, errlen, "%s has no token, tokenFile or client certificate",
			     where);
		return -1;
	}
	if (cert_data) {
		if (!(kc->cert_data = pem_data("client-certificate-data", cert_data, &kc->cert_len,
		                               err, errlen)))
			return -1;
	} else if (cert) {
		if (resolve_path(path, cert, kc->cert_file, sizeof(kc->cert_file)) != 0) {
			errf(err, errlen, "client-certificate path is too long");
			return -1;
		}
	}
	if (key_data) {
		if (!(kc->key_data =
		          pem_data("client-key-data", key_data, &kc->key_len, err, errlen)))
			return -1;
	} else if (key) {
		if (resolve_path(path, key, kc->key_file, sizeof(kc->key_file)) != 0) {
			errf(err, errlen, "client-key path is too long");
			return -1;
		}
	}
	if (token_file) {
		/* the file's value takes precedence over token (read by kubeconfig_load) */
		if (resolve_path(path, token_file, kc->token_file, sizeof(kc->token_file)) != 0) {
			errf(err, errlen, "tokenFile path is too long");
			return -1;
		}
	} else if (token) {
		kc->token_len = strlen(token) + 1;
		if (!(kc->token = strdup(token))) {
			errf(err, errlen, "out of memory");
			return -1;
		}
	}
	return 0;
}

int kubeconfig_parse(const char *text, size_t len, const char *path, struct kubeconfig *kc,
                     char *err, size_t errlen)
{
	char perr[400];
	cJSON *docs = NULL;
	const cJSON *root = NULL, *ctx, *cl, *u;
	const char *current, *cluster, *user;
	int rc = -1;

	memset(kc, 0, sizeof(*kc));
	if (!(docs = yamljson_parse(text, len, perr, sizeof(perr)))) {
		errf(err, errlen, "kubeconfig %s: %s", path, perr);
		return -1;
	}
	root = cJSON_GetArrayItem(docs, 0);
	if (!cJSON_IsObject(root)) {
		errf(err, errlen, "kubeconfig %s: not a kubeconfig (no mapping)", path);
		goto out;
	}
	if (get_str(root, "current-context", &current, "kubeconfig", perr, sizeof(perr)) < 0)
		goto bad;
	if (!current) {
		errf(err, errlen, "kubeconfig %s: no current-context", path);
		goto out;
	}
	snprintf(kc->context, sizeof(kc->context), "%s", current);
	if (!(ctx = find_named(root, "contexts", "context", current, perr, sizeof(perr))))
		goto bad;
	if (get_str(ctx, "cluster", &cluster, "context", perr, sizeof(perr)) < 0 ||
	    get_str(ctx, "user", &user, "context", perr, sizeof(perr)) < 0)
		goto bad;
	if (!cluster || !user) {
		errf(err, errlen, "kubeconfig %s: context '%.200s' lacks a cluster or a user", path,
		     current);
		goto out;
	}
	if (!(cl = find_named(root, "clusters", "cluster", cluster, perr, sizeof(perr))) ||
	    load_cluster(kc, path, cl, cluster, perr, sizeof(perr)) < 0)
		goto bad;
	if (!(u = find_named(root, "users", "user", user, perr, sizeof(perr))) ||
	    load_user(kc, path, u, user, perr, sizeof(perr)) < 0)
		goto bad;
	rc = 0;
	goto out;
bad:
	errf(err, errlen, "kubeconfig %s: %s", path, perr);
out : {
	/* wipe inline keys and tokens held in the parsed tree */
	const cJSON *users = cJSON_GetObjectItemCaseSensitive(root, "users"), *it, *uu, *f;
	cJSON_ArrayForEach(it, users)
	{
		uu = cJSON_GetObjectItemCaseSensitive(it, "user");
		cJSON_ArrayForEach(f, uu)
		{
			if (cJSON_IsString(f))
				explicit_bzero(f->valuestring, strlen(f->valuestring));
		}
	}
}
	cJSON_Delete(docs);
	if (rc != 0)
		kubeconfig_free(kc);
	return rc;
}

int kubeconfig_load(const char *path, struct kubeconfig *kc, char *err, size_t errlen)
{
	char *text = NULL, perr[400];
	size_t len = 0;
	int rc;

	memset(kc, 0, sizeof(*kc));
	if (!(text = file_read(path, KUBECONFIG_MAX, &len, perr, sizeof(perr)))) {
		errf(err, errlen, "kubeconfig: %s", perr);
		return -1;
	}
	rc = kubeconfig_parse(text, len, path, kc, err, errlen);
	wipe_free(text, len + 1); /* it may hold keys */
	if (rc != 0)
		return -1;
	if ((kc->ca_file[0] && kubeconfig_check_readable("certificate-authority", kc->ca_file, perr,
	                                                 sizeof(perr)) < 0) ||
	    (kc->cert_file[0] && kubeconfig_check_readable("client-certificate", kc->cert_file,
	                                                   perr, sizeof(perr)) < 0) ||
	    (kc->key_file[0] &&
	     kubeconfig_check_readable("client-key", kc->key_file, perr, sizeof(perr)) < 0))
		goto bad;
	if (kc->token_file[0]) {
		/* read now; the client reads it again each minute */
		wipe_free(kc->token, kc->token_len);
		if (!(kc->token = kubeconfig_read_token(kc->token_file, &kc->token_len, perr,
		                                        sizeof(perr))))
			goto bad;
	}
	return 0;
bad:
	errf(err, errlen, "kubeconfig %s: %s", path, perr);
	kubeconfig_free(kc);
	return -1;
}

void kubeconfig_free(struct kubeconfig *kc)
{
	if (!kc)
		return;
	wipe_free(kc->token, kc->token_len);
	wipe_free(kc->key_data, kc->key_len);
	wipe_free(kc->cert_data, kc->cert_len);
	free(kc->ca_data);
	explicit_bzero(kc, sizeof(*kc));
}
