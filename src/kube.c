/*
 * Kubernetes API client for GET StatefulSet and GET Job: libcurl over OpenSSL,
 * credentials from a kubeconfig (token, token file, client certificate, inline
 * or as files) or the in-cluster service account, a per-look-up deadline, and a
 * cache of successful answers. The client owns its credentials and wipes key
 * material and tokens when it lets go of them; easy handles are pooled so that
 * connections to the API server are reused.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <openssl/crypto.h>

#include "kube.h"
#include "log.h"
#include "metrics.h"
#include "util.h"
#include "yamljson.h"

#ifndef DISTENV_VERSION
#define DISTENV_VERSION "0.0.0"
#endif

#define KUBE_MAX_BODY  (4L * 1024 * 1024) /* a StatefulSet/Job is far smaller */
#define KUBECONFIG_MAX (4L * 1024 * 1024)
#define TOKEN_MAX      16384
#define TOKEN_REFRESH_MS                                                                           \
	60000LL /* the kubelet rotates projected tokens; client-go re-reads each minute */
#define POOL_MAX          8
#define CACHE_KEY_MAX     400
#define CACHE_BUCKETS_MAX 65536

struct cache_entry {
	struct cache_entry *hnext;         /* hash chain */
	struct cache_entry *older, *newer; /* insertion order: oldest goes first */
	long long expires_ms;
	struct workload_spec spec;
	char key[CACHE_KEY_MAX];
};

struct kube_client {
	char server[512]; /* no trailing slash */
	char context[256];
	char proxy[512];
	int plain_http; /* http:// to a loopback address (kubectl proxy) */
	long timeout_ms;

	char ca_file[PATH_MAX];
	unsigned char *ca_data;
	size_t ca_len;
	char cert_file[PATH_MAX];
	char key_file[PATH_MAX];
	unsigned char *cert_data;
	size_t cert_len;
	unsigned char *key_data; /* wiped on free */
	size_t key_len;

	pthread_mutex_t token_lock;
	char *token; /* wiped when replaced and on free */
	size_t token_len;
	char token_file[PATH_MAX];
	long long token_read_ms;

	pthread_mutex_t pool_lock;
	CURL *pool[POOL_MAX];
	int n_pool;

	pthread_mutex_t cache_lock; /* guards the cache and the in-flight list */
	pthread_cond_t inflight_done;
	struct inflight *inflight;
	struct cache_entry **buckets;
	size_t n_buckets;
	struct cache_entry *oldest, *newest;
	long n_entries, max_entries, ttl_ms;

	int curl_ready;
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void wipe_free(void *p, size_t len)
{
	if (p) {
		OPENSSL_cleanse(p, len);
		free(p);
	}
}

/* Standard base64 with optional padding, whitespace ignored. Returns malloc'd bytes or NULL. */
static unsigned char *b64_decode(const char *s, size_t *outlen)
{
	size_t n = strlen(s), o = 0;
	unsigned char *out = malloc(n / 4 * 3 + 4);
	unsigned acc = 0;
	int bits = 0, pad = 0;

	if (!out)
		return NULL;
	for (; *s; s++) {
		int v;
		char c = *s;
		if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
			continue;
		if (c == '=') {
			pad++;
			continue;
		}
		if (pad)
			goto bad; /* data after padding */
		if (c >= 'A' && c <= 'Z')
			v = c - 'A';
		else if (c >= 'a' && c <= 'z')
			v = c - 'a' + 26;
		else if (c >= '0' && c <= '9')
			v = c - '0' + 52;
		else if (c == '+')
			v = 62;
		else if (c == '/')
			v = 63;
		else
			goto bad;
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	if (bits >= 6 || pad > 2 || o == 0)
		goto bad;
	*outlen = o;
	return out;
bad:
	wipe_free(out, n / 4 * 3 + 4);
	return NULL;
}

/* ---- bearer token ---- */

/* Reads a token file: trimmed, non-empty, no control bytes. Returns malloc'd or NULL with err. */
static char *read_token(const char *path, size_t *len, char *err, size_t errlen)
{
	size_t n = 0, i, size;
	char *t = file_read(path, TOKEN_MAX, &n, err, errlen);

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

/*
 * Copies the current token into out ("" when the client has none), re-reading
 * the token file when it is a minute old or when force is set. A failed re-read
 * keeps the last good token. Returns 1 when the token changed.
 */
static int token_get(struct kube_client *kc, int force, char *out, size_t outlen)
{
	int changed = 0;

	pthread_mutex_lock(&kc->token_lock);
	if (kc->token_file[0] && (force || now_ms() - kc->token_read_ms >= TOKEN_REFRESH_MS)) {
		char err[256];
		size_t cap = 0;
		char *t = read_token(kc->token_file, &cap, err, sizeof(err));
		kc->token_read_ms = now_ms();
		if (t) {
			if (!kc->token || strcmp(t, kc->token) != 0)
				changed = 1;
			wipe_free(kc->token, kc->token_len);
			kc->token = t;
			kc->token_len = cap;
		} else {
			log_kv(LOG_WARN, "token_reread_failed", "error", err, LOG_END);
		}
	}
	snprintf(out, outlen, "%s", kc->token ? kc->token : "");
	pthread_mutex_unlock(&kc->token_lock);
	return changed;
}

/* ---- kubeconfig ---- */

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

static int set_server(struct kube_client *kc, const char *server, char *err, size_t errlen)
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

static int check_readable(const char *what, const char *path, char *err, size_t errlen)
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
	unsigned char *d = b64_decode(b64, len);

	if (!d || !memmem(d, *len, "-----BEGIN ", 11)) {
		errf(err, errlen, "%s is not base64 of PEM data", what);
		wipe_free(d, d ? *len : 0);
		return NULL;
	}
	return d;
}

static int load_cluster(struct kube_client *kc, const char *path, const cJSON *cl, const char *name,
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
	if (set_server(kc, server, err, errlen) < 0)
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
		if (check_readable("certificate-authority", kc->ca_file, err, errlen) < 0)
			return -1;
	}
	return 0;
}

static int load_user(struct kube_client *kc, const char *path, const cJSON *u, const char *name,
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
		if (resolve_path(path, cert, kc->cert_file, sizeof(kc->cert_file)) != 0 ||
		    check_readable("client-certificate", kc->cert_file, err, errlen) < 0)
			return -1;
	}
	if (key_data) {
		if (!(kc->key_data =
		          pem_data("client-key-data", key_data, &kc->key_len, err, errlen)))
			return -1;
	} else if (key) {
		if (resolve_path(path, key, kc->key_file, sizeof(kc->key_file)) != 0 ||
		    check_readable("client-key", kc->key_file, err, errlen) < 0)
			return -1;
	}
	if (token_file) {
		/* read now, then each minute; the file's value takes precedence over token */
		if (resolve_path(path, token_file, kc->token_file, sizeof(kc->token_file)) != 0) {
			errf(err, errlen, "tokenFile path is too long");
			return -1;
		}
		if (!(kc->token = read_token(kc->token_file, &kc->token_len, err, errlen)))
			return -1;
		kc->token_read_ms = now_ms();
	} else if (token) {
		kc->token_len = strlen(token) + 1;
		if (!(kc->token = strdup(token))) {
			errf(err, errlen, "out of memory");
			return -1;
		}
	}
	return 0;
}

static int load_kubeconfig(struct kube_client *kc, const char *path, char *err, size_t errlen)
{
	char *text = NULL, perr[400];
	size_t len = 0;
	cJSON *docs = NULL;
	const cJSON *root, *ctx, *cl, *u;
	const char *current, *cluster, *user;
	int rc = -1;

	if (!(text = file_read(path, KUBECONFIG_MAX, &len, perr, sizeof(perr)))) {
		errf(err, errlen, "kubeconfig: %s", perr);
		return -1;
	}
	docs = yamljson_parse(text, len, perr, sizeof(perr));
	wipe_free(text, len + 1); /* it may hold keys */
	if (!docs) {
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
out:
	/* wipe inline keys and tokens held in the parsed tree */
	if (docs) {
		const cJSON *users = cJSON_GetObjectItemCaseSensitive(root, "users"), *it, *uu, *f;
		cJSON_ArrayForEach(it, users)
		{
			uu = cJSON_GetObjectItemCaseSensitive(it, "user");
			cJSON_ArrayForEach(f, uu)
			{
				if (cJSON_IsString(f))
					OPENSSL_cleanse(f->valuestring, strlen(f->valuestring));
			}
		}
		cJSON_Delete(docs);
	}
	return rc;
}

/* ---- client life cycle ---- */

static struct kube_client *client_alloc(const struct config *cfg, char *err, size_t errlen)
{
	struct kube_client *kc = calloc(1, sizeof(*kc));
	size_t nb = 1;

	if (!kc) {
		errf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&kc->token_lock, NULL);
	pthread_mutex_init(&kc->pool_lock, NULL);
	pthread_mutex_init(&kc->cache_lock, NULL);
	{
		pthread_condattr_t ca;
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&kc->inflight_done, &ca);
		pthread_condattr_destroy(&ca);
	}
	kc->timeout_ms = cfg->lookup_timeout_ms > 0 ? cfg->lookup_timeout_ms : 3000;
	kc->ttl_ms = cfg->cache_ttl_ms;
	kc->max_entries = cfg->cache_ttl_ms > 0 ? cfg->cache_entries : 0;
	while (nb < (size_t)kc->max_entries && nb < CACHE_BUCKETS_MAX)
		nb <<= 1;
	kc->n_buckets = nb;
	if (!(kc->buckets = calloc(nb, sizeof(*kc->buckets)))) {
		errf(err, errlen, "out of memory");
		kube_client_free(kc);
		return NULL;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		errf(err, errlen, "cannot initialise libcurl");
		kube_client_free(kc);
		return NULL;
	}
	kc->curl_ready = 1;
	return kc;
}

static void client_log(const struct kube_client *kc)
{
	struct kube_client_info info;

	kube_client_describe(kc, &info);
	log_kv(LOG_INFO, "kube_client", "server", info.server, "context",
	       info.context[0] ? info.context : "in-cluster", "ca", info.ca, "auth", info.auth,
	       LOG_END);
}

struct kube_client *kube_client_new_incluster(const struct config *cfg, const char *sa_dir,
                                              char *err, size_t errlen)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	struct kube_client *kc;
	char url[600];
	long p;

	if (errlen)
		err[0] = '\0';
	if (!host || !host[0] || !port || !port[0]) {
		errf(err, errlen,
		     "no kubeconfig given and not running in a pod "
		     "(KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT are not set)");
		return NULL;
	}
	if (parse_long(port, 1, 65535, &p) != 0 || strpbrk(host, "/[]@ ?#")) {
		errf(err, errlen, "KUBERNETES_SERVICE_HOST/PORT (%.100s:%.20s) are not an address",
		     host, port);
		return NULL;
	}
	if (!(kc = client_alloc(cfg, err, errlen)))
		return NULL;
	snprintf(url, sizeof(url),
	         strchr(host, ':') ? "https://[%.300s]:%ld" : "https://%.300s:%ld", host, p);
	if (set_server(kc, url, err, errlen) < 0 ||
	    bounded_printf(kc->token_file, sizeof(kc->token_file), "%s/token", sa_dir) != 0 ||
	    bounded_printf(kc->ca_file, sizeof(kc->ca_file), "%s/ca.crt", sa_dir) != 0)
		goto fail;
	if (check_readable("service account CA", kc->ca_file, err, errlen) < 0)
		goto fail;
	if (!(kc->token = read_token(kc->token_file, &kc->token_len, err, errlen)))
		goto fail;
	kc->token_read_ms = now_ms();
	client_log(kc);
	return kc;
fail:
	if (err && errlen && !err[0])
		errf(err, errlen, "service account directory path is too long");
	kube_client_free(kc);
	return NULL;
}

struct kube_client *kube_client_new(const struct config *cfg, char *err, size_t errlen)
{
	struct kube_client *kc;

	if (errlen)
		err[0] = '\0';
	if (!cfg->kubeconfig[0])
		return kube_client_new_incluster(cfg, KUBE_SA_DIR, err, errlen);
	if (!(kc = client_alloc(cfg, err, errlen)))
		return NULL;
	if (load_kubeconfig(kc, cfg->kubeconfig, err, errlen) < 0) {
		kube_client_free(kc);
		return NULL;
	}
	client_log(kc);
	return kc;
}

void kube_client_free(struct kube_client *kc)
{
	struct cache_entry *e, *next;
	int i;

	if (!kc)
		return;
	for (i = 0; i < kc->n_pool; i++)
		curl_easy_cleanup(kc->pool[i]);
	for (e = kc->oldest; e; e = next) {
		next = e->newer;
		free(e);
	}
	free(kc->buckets);
	wipe_free(kc->token, kc->token_len);
	wipe_free(kc->key_data, kc->key_len);
	wipe_free(kc->cert_data, kc->cert_len);
	free(kc->ca_data);
	pthread_mutex_destroy(&kc->token_lock);
	pthread_mutex_destroy(&kc->pool_lock);
	pthread_mutex_destroy(&kc->cache_lock);
	pthread_cond_destroy(&kc->inflight_done);
	if (kc->curl_ready)
		curl_global_cleanup();
	OPENSSL_cleanse(kc, sizeof(*kc));
	free(kc);
}

void kube_client_describe(const struct kube_client *kc, struct kube_client_info *info)
{
	size_t o = 0;

	memset(info, 0, sizeof(*info));
	snprintf(info->server, sizeof(info->server), "%s", kc->server);
	snprintf(info->context, sizeof(info->context), "%s", kc->context);
	snprintf(info->ca, sizeof(info->ca), "%s",
	         kc->ca_data      ? "data"
	         : kc->ca_file[0] ? "file"
	                          : "system");
	if (kc->token_file[0])
		o += (size_t)snprintf(info->auth + o, sizeof(info->auth) - o, "token-file");
	else if (kc->token)
		o += (size_t)snprintf(info->auth + o, sizeof(info->auth) - o, "token");
	if (kc->cert_data || kc->cert_file[0])
		snprintf(info->auth + o, sizeof(info->auth) - o, "%sclient-certificate",
		         o ? "+" : "");
	snprintf(info->token_file, sizeof(info->token_file), "%s", kc->token_file);
}

/* ---- cache ---- */

static size_t key_hash(const char *s)
{
	size_t h = (size_t)1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * (size_t)1099511628211ULL;
	return h;
}

static void cache_unlink(struct kube_client *kc, struct cache_entry *e)
{
	struct cache_entry **pp = &kc->buckets[key_hash(e->key) & (kc->n_buckets - 1)];

	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = e->hnext;
	if (e->older)
		e->older->newer = e->newer;
	else
		kc->oldest = e->newer;
	if (e->newer)
		e->newer->older = e->older;
	else
		kc->newest = e->older;
	kc->n_entries--;
	free(e);
}

static struct cache_entry *cache_find(struct kube_client *kc, const char *key)
{
	struct cache_entry *e = kc->buckets[key_hash(key) & (kc->n_buckets - 1)];

	while (e && strcmp(e->key, key) != 0)
		e = e->hnext;
	return e;
}

/* A look-up in progress: others asking for the same key wait for it (one GET per burst). */
struct inflight {
	struct inflight *next;
	const char *key;
};

static int cache_lookup_locked(struct kube_client *kc, const char *key, struct workload_spec *out)
{
	struct cache_entry *e = cache_find(kc, key);

	if (e && e->expires_ms <= now_ms()) {
		cache_unlink(kc, e);
		e = NULL;
	}
	if (e)
		*out = e->spec;
	return e != NULL;
}

static int inflight_has(const struct kube_client *kc, const char *key)
{
	const struct inflight *f;

	for (f = kc->inflight; f; f = f->next)
		if (strcmp(f->key, key) == 0)
			return 1;
	return 0;
}

/*
 * Returns 1 with *out from the cache. Otherwise, when another thread is
 * already fetching key, waits for it (until deadline_ms) and looks again; on a
 * miss registers node as the fetcher of key and returns 0: the caller then
 * fetches and calls cache_finish.
 */
static int cache_get_or_claim(struct kube_client *kc, const char *key, struct workload_spec *out,
                              struct inflight *node, long long deadline_ms)
{
	int hit;

	pthread_mutex_lock(&kc->cache_lock);
	while (!(hit = cache_lookup_locked(kc, key, out)) && inflight_has(kc, key)) {
		struct timespec ts;
		long long left = deadline_ms - now_ms();
		if (left <= 0)
			break;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += (time_t)(left / 1000);
		ts.tv_nsec += (long)(left % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (pthread_cond_timedwait(&kc->inflight_done, &kc->cache_lock, &ts) == ETIMEDOUT)
			break;
	}
	if (!hit) {
		node->key = key;
		node->next = kc->inflight;
		kc->inflight = node;
	}
	pthread_mutex_unlock(&kc->cache_lock);
	return hit;
}

/* Ends a claimed fetch: caches spec when it succeeded (spec != NULL) and wakes the waiters. */
static void cache_finish(struct kube_client *kc, struct inflight *node, const char *key,
                         const struct workload_spec *spec)
{
	struct inflight **pp;
	struct cache_entry *e;
	size_t b;

	pthread_mutex_lock(&kc->cache_lock);
	for (pp = &kc->inflight; *pp; pp = &(*pp)->next) {
		if (*pp == node) {
			*pp = node->next;
			break;
		}
	}
	if (spec) {
		if ((e = cache_find(kc, key)))
			cache_unlink(kc, e);
		while (kc->n_entries >= kc->max_entries && kc->oldest)
			cache_unlink(kc, kc->oldest);
		if ((e = calloc(1, sizeof(*e)))) {
			snprintf(e->key, sizeof(e->key), "%s", key);
			e->spec = *spec;
			e->expires_ms = now_ms() + kc->ttl_ms;
			b = key_hash(key) & (kc->n_buckets - 1);
			e->hnext = kc->buckets[b];
			kc->buckets[b] = e;
			e->older = kc->newest;
			if (kc->newest)
				kc->newest->newer = e;
			else
				kc->oldest = e;
			kc->newest = e;
			kc->n_entries++;
		}
	}
	pthread_cond_broadcast(&kc->inflight_done);
	pthread_mutex_unlock(&kc->cache_lock);
}

/* ---- HTTP ---- */

struct body {
	char *p;
	size_t len, cap;
	int too_big;
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct body *b = ud;
	size_t n = size * nmemb;

	if (b->len + n > (size_t)KUBE_MAX_BODY) {
		b->too_big = 1;
		return 0;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 16384;
		char *np;
		while (cap < b->len + n + 1)
			cap *= 2;
		if (!(np = realloc(b->p, cap)))
			return 0;
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, ptr, n);
	b->len += n;
	b->p[b->len] = '\0';
	return n;
}

static CURL *handle_take(struct kube_client *kc)
{
	CURL *h = NULL;

	pthread_mutex_lock(&kc->pool_lock);
	if (kc->n_pool > 0)
		h = kc->pool[--kc->n_pool];
	pthread_mutex_unlock(&kc->pool_lock);
	if (h)
		curl_easy_reset(h); /* keeps the connection and TLS session caches */
	else
		h = curl_easy_init();
	return h;
}

static void handle_give(struct kube_client *kc, CURL *h)
{
	pthread_mutex_lock(&kc->pool_lock);
	if (kc->n_pool < POOL_MAX) {
		kc->pool[kc->n_pool++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&kc->pool_lock);
	if (h)
		curl_easy_cleanup(h);
}

/* One GET of path within timeout_ms. Returns the CURLcode; fills status, body, errbuf. */
static CURLcode http_get(struct kube_client *kc, const char *path, long timeout_ms,
                         const char *token, struct body *b, long *status, char *errbuf)
{
	struct curl_slist *hdrs = NULL, *h2;
	char url[1024], auth[TOKEN_MAX + 32], noproxy[1024];
	const char *np = getenv("NO_PROXY") ? getenv("NO_PROXY") : getenv("no_proxy");
	struct curl_blob blob;
	CURL *h;
	CURLcode rc;

	*status = 0;
	errbuf[0] = '\0';
	if (bounded_printf(url, sizeof(url), "%s%s", kc->server, path) != 0)
		return CURLE_URL_MALFORMAT;
	if (!(h = handle_take(kc)))
		return CURLE_OUT_OF_MEMORY;
	hdrs = curl_slist_append(NULL, "Accept: application/json");
	if (hdrs && token[0]) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
		h2 = curl_slist_append(hdrs, auth);
		OPENSSL_cleanse(auth, sizeof(auth));
		if (h2)
			hdrs = h2;
		else {
			curl_slist_free_all(hdrs);
			hdrs = NULL;
		}
	}
	if (!hdrs) {
		handle_give(kc, h);
		return CURLE_OUT_OF_MEMORY;
	}
	snprintf(noproxy, sizeof(noproxy), "%s%slocalhost,127.0.0.1,::1", np ? np : "",
	         np && np[0] ? "," : "");

	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, kc->plain_http ? "http" : "https");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)KUBE_MAX_BODY);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "distenv-webhook/" DISTENV_VERSION);
	if (kc->proxy[0])
		curl_easy_setopt(h, CURLOPT_PROXY, kc->proxy);
	else
		curl_easy_setopt(h, CURLOPT_NOPROXY, noproxy);
	if (!kc->plain_http) {
		curl_easy_setopt(h, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
		if (kc->ca_data || kc->ca_file[0]) {
			/* trust the cluster CA only, not the system store as well */
			curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
			curl_easy_setopt(h, CURLOPT_CAINFO, kc->ca_data ? NULL : kc->ca_file);
		}
		if (kc->ca_data) {
			blob.data = kc->ca_data;
			blob.len = kc->ca_len;
			blob.flags = CURL_BLOB_NOCOPY; /* the client outlives every transfer */
			curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
		}
		if (kc->cert_data) {
			blob.data = kc->cert_data;
			blob.len = kc->cert_len;
			blob.flags = CURL_BLOB_NOCOPY;
			curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &blob);
			curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
		} else if (kc->cert_file[0]) {
			curl_easy_setopt(h, CURLOPT_SSLCERT, kc->cert_file);
		}
		if (kc->key_data) {
			/* NOCOPY also keeps curl from making a copy of the key it would not wipe */
			blob.data = kc->key_data;
			blob.len = kc->key_len;
			blob.flags = CURL_BLOB_NOCOPY;
			curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &blob);
			curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
		} else if (kc->key_file[0]) {
			curl_easy_setopt(h, CURLOPT_SSLKEY, kc->key_file);
		}
	}
	rc = curl_easy_perform(h);
	if (rc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	curl_slist_free_all(hdrs);
	handle_give(kc, h);
	return rc;
}

/* The "message" of a Kubernetes Status body, on one line and cut short, or "". */
static void status_message(const struct body *b, char *out, size_t outlen)
{
	cJSON *j = b->p ? cJSON_ParseWithLength(b->p, b->len) : NULL;
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "message");
	size_t i;

	out[0] = '\0';
	if (cJSON_IsString(m)) {
		snprintf(out, outlen, "%.200s", m->valuestring);
		for (i = 0; out[i]; i++)
			if ((unsigned char)out[i] < 0x20)
				out[i] = ' ';
	}
	cJSON_Delete(j);
}

/* What the API calls an object: "statefulset", and its resource "statefulsets.apps". */
struct api_noun {
	char what[64];
	char resource[128];  /* plural, without the group */
	char qualified[160]; /* plural.group, for RBAC messages */
};

static void api_noun_of(const char *kind, const char *resource, const char *group,
                        struct api_noun *n)
{
	size_t i;

	snprintf(n->what, sizeof(n->what), "%s", kind);
	for (i = 0; n->what[i]; i++)
		if (n->what[i] >= 'A' && n->what[i] <= 'Z')
			n->what[i] = (char)(n->what[i] - 'A' + 'a');
	snprintf(n->resource, sizeof(n->resource), "%s", resource);
	snprintf(n->qualified, sizeof(n->qualified), "%s%s%s", resource, group[0] ? "." : "",
	         group);
}

static void describe_failure(const struct kube_client *kc, CURLcode rc, long status,
                             const struct body *b, const char *errbuf, const struct api_noun *noun,
                             const char *ns, const char *name, long timeout_ms, char *err,
                             size_t errlen)
{
	const char *what = noun->what;
	const char *res = noun->qualified;
	const char *detail = errbuf[0] ? errbuf : curl_easy_strerror(rc);
	char msg[256];

	switch (rc) {
	case CURLE_OK:
		break;
	case CURLE_OPERATION_TIMEDOUT:
		errf(err, errlen, "timeout after %ldms getting %s %s/%s from the API server",
		     timeout_ms, what, ns, name);
		return;
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		errf(err, errlen, "cannot connect to the API server at %s: %s", kc->server, detail);
		return;
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_CLIENTCERT:
		errf(err, errlen, "TLS with the API server at %s failed: %s", kc->server, detail);
		return;
	case CURLE_WRITE_ERROR:
	case CURLE_FILESIZE_EXCEEDED:
		if (b->too_big || rc == CURLE_FILESIZE_EXCEEDED) {
			errf(err, errlen,
			     "the API server's answer for %s %s/%s is larger than "
			     "%ld bytes",
			     what, ns, name, KUBE_MAX_BODY);
			return;
		}
		/* fall through */
	default:
		errf(err, errlen, "getting %s %s/%s from the API server failed: %s", what, ns, name,
		     detail);
		return;
	}
	status_message(b, msg, sizeof(msg));
	switch (status) {
	case 404:
		errf(err, errlen, "%s %s/%s not found", what, ns, name);
		break;
	case 401:
		errf(err, errlen,
		     "unauthorized: the API server rejected the webhook's credentials (401)");
		break;
	case 403:
		errf(err, errlen,
		     "forbidden: the webhook's service account may not get %s in namespace %s "
		     "(grant get on %s)",
		     noun->resource, ns, res);
		break;
	case 429:
		errf(err, errlen, "the API server is throttling requests (429)");
		break;
	default:
		errf(err, errlen, "the API server answered HTTP %ld for %s %s/%s%s%s", status, what,
		     ns, name, msg[0] ? ": " : "", msg);
		break;
	}
}

/*
 * GETs path until deadline_ms with the client's token (re-read once after a 401:
 * the kubelet rotates projected tokens). The answer is in b (caller frees b->p).
 */
static CURLcode api_get(struct kube_client *kc, const char *path, long long deadline_ms,
                        struct body *b, long *status, char *errbuf)
{
	char token[TOKEN_MAX + 1];
	int retried = 0;
	long left;
	CURLcode rc;

	errbuf[0] = '\0';
	token_get(kc, 0, token, sizeof(token));
	for (;;) {
		left = (long)(deadline_ms - now_ms());
		if (left <= 0) {
			rc = CURLE_OPERATION_TIMEDOUT;
			break;
		}
		b->len = 0;
		b->too_big = 0;
		rc = http_get(kc, path, left, token, b, status, errbuf);
		if (rc == CURLE_OK && *status == 401 && !retried && kc->token_file[0] &&
		    token_get(kc, 1, token, sizeof(token))) {
			retried = 1;
			continue;
		}
		break;
	}
	OPENSSL_cleanse(token, sizeof(token));
	return rc;
}

int kube_get_service(void *ctx, const char *ns, const char *name, struct service_info *out,
                     char *err, size_t errlen)
{
	struct kube_client *kc = ctx;
	struct body b = {NULL, 0, 0, 0};
	struct api_noun noun = {"", "", ""};
	char path[600], errbuf[CURL_ERROR_SIZE];
	long status = 0;
	CURLcode rc;
	int rc_out = -1;

	if (errlen)
		err[0] = '\0';
	if (!ns || !dns_label_valid(ns) || !name || !dns_label_valid(name)) {
		errf(err, errlen, "'%.64s/%.64s' is not a valid Service name", ns ? ns : "",
		     name ? name : "");
		return -1;
	}
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/services/%s", ns, name);
	rc = api_get(kc, path, now_ms() + kc->timeout_ms, &b, &status, errbuf);
	if (rc == CURLE_OK && status == 404) {
		rc_out = 0;
	} else if (rc != CURLE_OK || status != 200) {
		api_noun_of("Service", "services", "", &noun);
		describe_failure(kc, rc, status, &b, errbuf, &noun, ns, name, kc->timeout_ms, err,
		                 errlen);
	} else if (workload_parse_service(b.p ? b.p : "", b.len, out, err, errlen) == 0) {
		rc_out = 1;
	}
	free(b.p);
	return rc_out;
}

int kube_get_workload(void *ctx, const struct workload_ref *ref, int fresh,
                      struct workload_spec *out, char *err, size_t errlen)
{
	struct kube_client *kc = ctx;
	enum workload_kind kind = ref->kind;
	const char *ns = ref->ns, *name = ref->name;
	const char *uid = ref->uid ? ref->uid : "";
	char path[600], key[CACHE_KEY_MAX], errbuf[CURL_ERROR_SIZE];
	struct body b = {NULL, 0, 0, 0};
	struct workload_spec spec;
	struct inflight node;
	long long deadline;
	long status = 0;
	CURLcode rc;
	int rc_out = -1, claimed = 0;

	if (errlen)
		err[0] = '\0';
	if (workload_api_path(kind, ns, name, path, sizeof(path), err, errlen) < 0) {
		metrics_lookup(0, 0);
		return -1;
	}
	/*
	 * The owner's uid is part of the key: a workload deleted and created again
	 * under the same name is another object and never gets the old answer.
	 */
	if (bounded_printf(key, sizeof(key), "%d/%s/%s/%.63s", (int)kind, ns, name, uid) != 0) {
		errf(err, errlen, "the look-up key of %s/%s is too long", ns, name);
		metrics_lookup(0, 0);
		return -1;
	}
	deadline = now_ms() + kc->timeout_ms;
	if (kc->max_entries > 0 && !fresh) {
		if (cache_get_or_claim(kc, key, out, &node, deadline)) {
			out->cached = 1;
			metrics_lookup(1, 1);
			return 0;
		}
		claimed = 1;
	}
	rc = api_get(kc, path, deadline, &b, &status, errbuf);
	if (rc != CURLE_OK || status != 200) {
		const struct workload_api *a = workload_api_of(kind);
		struct api_noun noun = {"", "", ""};
		api_noun_of(a->kind, a->resource, a->group, &noun);
		describe_failure(kc, rc, status, &b, errbuf, &noun, ns, name, kc->timeout_ms, err,
		                 errlen);
		goto out;
	}
	if (workload_parse(kind, b.p ? b.p : "", b.len, &spec, err, errlen) < 0)
		goto out;
	*out = spec;
	rc_out = 0;
out:
	/* A fresh read replaces what the cache holds; an answer for another uid is not kept. */
	if (claimed || (fresh && kc->max_entries > 0))
		cache_finish(kc, claimed ? &node : NULL, key,
		             rc_out == 0 && (uid[0] == '\0' || strcmp(spec.uid, uid) == 0) ? &spec
		                                                                           : NULL);
	metrics_lookup(rc_out == 0, 0);
	if (rc_out != 0)
		log_kv(LOG_WARN, "lookup_failed", "kind", workload_kind_name(kind), "namespace", ns,
		       "name", name, "error", err, LOG_END);
	free(b.p);
	return rc_out;
}
