/*
 * Kubernetes API client: GETs workloads over libcurl/OpenSSL with credentials
 * from a kubeconfig (src/kube/kubeconfig.c) or the in-cluster service account, a
 * per-look-up deadline and a lookup_cache (src/kube/lookupcache.c) in front. The
 * client owns its credentials and wipes key material and tokens when it lets
 * go of them; easy handles are pooled so that connections are reused.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdatomic.h>
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
#include "kind.h"
#include "log.h"
#include "metrics.h"
#include "kubeconfig.h"
#include "lookupcache.h"
#include "netpol.h"
#include "util.h"
#include "strbuf.h"
#include "dns.h"
#include "mono.h"
#include "version.h"

#define KUBE_MAX_BODY (4L * 1024 * 1024) /* a StatefulSet/Job is far smaller */
#define TOKEN_REFRESH_MS                                                                           \
	60000LL /* the kubelet rotates projected tokens; client-go re-reads each minute */
#define POOL_MAX         8
#define KUBE_MAX_NETPOLS NETPOL_MAX_POLICIES /* one page of the list; more: not judged */

struct kube_client {
	struct kubeconfig k; /* where and who; k.token is guarded by token_lock */
	long timeout_ms;

	pthread_mutex_t token_lock;
	long long token_read_ms;

	pthread_mutex_t pool_lock;
	CURL *pool[POOL_MAX];
	int n_pool;

	struct lookup_cache *cache; /* NULL when answers are not cached */

	int curl_ready;
};

static _Thread_local long long tl_deadline_ms; /* kube_set_thread_deadline; 0: none */
static atomic_llong g_deadline_ms;             /* kube_set_global_deadline; 0: none */

void kube_set_thread_deadline(long long deadline_ms)
{
	tl_deadline_ms = deadline_ms;
}

void kube_set_global_deadline(long long deadline_ms)
{
	atomic_store(&g_deadline_ms, deadline_ms);
}

/* The look-up deadline now + timeout_ms, cut to the thread's and the process's caps. */
static long long deadline_from_now(long timeout_ms)
{
	long long d = mono_ms() + timeout_ms, g = atomic_load(&g_deadline_ms);

	if (tl_deadline_ms > 0 && tl_deadline_ms < d)
		d = tl_deadline_ms;
	if (g > 0 && g < d)
		d = g;
	return d;
}

/* CURLOPT_XFERINFOFUNCTION: aborts a transfer in flight once the process's cap passed. */
static int on_progress(void *p, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
	long long g = atomic_load(&g_deadline_ms);

	(void)p;
	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return g > 0 && mono_ms() >= g;
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
	if (kc->k.token_file[0] && (force || mono_ms() - kc->token_read_ms >= TOKEN_REFRESH_MS)) {
		char err[256];
		size_t cap = 0;
		char *t = kubeconfig_read_token(kc->k.token_file, &cap, err, sizeof(err));
		kc->token_read_ms = mono_ms();
		if (t) {
			if (!kc->k.token || strcmp(t, kc->k.token) != 0)
				changed = 1;
			wipe_free(kc->k.token, kc->k.token_len);
			kc->k.token = t;
			kc->k.token_len = cap;
		} else {
			log_kv(LOG_WARN, "token_reread_failed", "error", err, LOG_END);
		}
	}
	snprintf(out, outlen, "%s", kc->k.token ? kc->k.token : "");
	pthread_mutex_unlock(&kc->token_lock);
	return changed;
}

/* ---- client life cycle ---- */

static int fetch_now(void *kc, const struct workload_ref *ref, int fresh, struct workload_spec *out,
                     char *err, size_t errlen);

static struct kube_client *client_alloc(const struct config *cfg, char *err, size_t errlen)
{
	struct kube_client *kc = calloc(1, sizeof(*kc));

	if (!kc) {
		errf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&kc->token_lock, NULL);
	pthread_mutex_init(&kc->pool_lock, NULL);
	kc->timeout_ms = cfg->lookup_timeout_ms > 0 ? cfg->lookup_timeout_ms : 3000;
	if (cfg->cache_ttl_ms > 0 && cfg->cache_entries > 0) {
		struct workload_lookup inner = {fetch_now, kc, NULL, NULL, NULL};
		struct lookup_cache_opts o = {cfg->cache_ttl_ms, cfg->cache_entries, kc->timeout_ms,
		                              NULL};
		if (!(kc->cache = lookup_cache_new(&inner, &o, err, errlen))) {
			kube_client_free(kc);
			return NULL;
		}
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
	if (kubeconfig_set_server(&kc->k, url, err, errlen) < 0 ||
	    bounded_printf(kc->k.token_file, sizeof(kc->k.token_file), "%s/token", sa_dir) != 0 ||
	    bounded_printf(kc->k.ca_file, sizeof(kc->k.ca_file), "%s/ca.crt", sa_dir) != 0)
		goto fail;
	if (kubeconfig_check_readable("service account CA", kc->k.ca_file, err, errlen) < 0)
		goto fail;
	if (!(kc->k.token = kubeconfig_read_token(kc->k.token_file, &kc->k.token_len, err, errlen)))
		goto fail;
	kc->token_read_ms = mono_ms();
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
	if (kubeconfig_load(cfg->kubeconfig, &kc->k, err, errlen) < 0) {
		kube_client_free(kc);
		return NULL;
	}
	kc->token_read_ms = mono_ms();
	client_log(kc);
	return kc;
}

void kube_client_free(struct kube_client *kc)
{
	int i;

	if (!kc)
		return;
	lookup_cache_free(kc->cache);
	for (i = 0; i < kc->n_pool; i++)
		curl_easy_cleanup(kc->pool[i]);
	kubeconfig_free(&kc->k);
	pthread_mutex_destroy(&kc->token_lock);
	pthread_mutex_destroy(&kc->pool_lock);
	if (kc->curl_ready)
		curl_global_cleanup();
	OPENSSL_cleanse(kc, sizeof(*kc));
	free(kc);
}

void kube_client_describe(const struct kube_client *kc, struct kube_client_info *info)
{
	size_t o = 0;

	memset(info, 0, sizeof(*info));
	snprintf(info->server, sizeof(info->server), "%s", kc->k.server);
	snprintf(info->context, sizeof(info->context), "%s", kc->k.context);
	snprintf(info->ca, sizeof(info->ca), "%s",
	         kc->k.ca_data      ? "data"
	         : kc->k.ca_file[0] ? "file"
	                            : "system");
	if (kc->k.token_file[0])
		o += (size_t)snprintf(info->auth + o, sizeof(info->auth) - o, "token-file");
	else if (kc->k.token)
		o += (size_t)snprintf(info->auth + o, sizeof(info->auth) - o, "token");
	if (kc->k.cert_data || kc->k.cert_file[0])
		snprintf(info->auth + o, sizeof(info->auth) - o, "%sclient-certificate",
		         o ? "+" : "");
	snprintf(info->token_file, sizeof(info->token_file), "%s", kc->k.token_file);
}

/* ---- HTTP ---- */

/* curl's write callback: the answer into a strbuf limited to KUBE_MAX_BODY. */
static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct strbuf *b = ud;
	size_t n = size * nmemb;

	if (b->cap == 0 && strbuf_reserve(b, 16383) != 0)
		return 0;
	strbuf_append(b, ptr, n);
	return b->oom ? 0 : n; /* too_big tells the caller why */
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

/*
 * A PEM blob from the kubeconfig, not copied: the client outlives every
 * transfer, and NOCOPY keeps curl from making a copy of the key it would not
 * wipe. curl copies the struct itself.
 */
static void set_blob(CURL *h, CURLoption opt, unsigned char *data, size_t len)
{
	struct curl_blob blob = {.data = data, .len = len, .flags = CURL_BLOB_NOCOPY};

	curl_easy_setopt(h, opt, &blob);
}

/* One GET of path within timeout_ms. Returns the CURLcode; fills status, body, errbuf. */
static CURLcode http_get(struct kube_client *kc, const char *path, long timeout_ms,
                         const char *token, struct strbuf *b, long *status, char *errbuf)
{
	struct curl_slist *hdrs = NULL, *h2;
	char url[1024], auth[KUBECONFIG_TOKEN_MAX + 32], noproxy[1024];
	const char *np = getenv("NO_PROXY") ? getenv("NO_PROXY") : getenv("no_proxy");
	CURL *h;
	CURLcode rc;

	*status = 0;
	errbuf[0] = '\0';
	if (bounded_printf(url, sizeof(url), "%s%s", kc->k.server, path) != 0)
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
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, kc->k.plain_http ? "http" : "https");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)KUBE_MAX_BODY);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "distenv-webhook/" DISTENV_VERSION);
	if (kc->k.proxy[0])
		curl_easy_setopt(h, CURLOPT_PROXY, kc->k.proxy);
	else
		curl_easy_setopt(h, CURLOPT_NOPROXY, noproxy);
	if (!kc->k.plain_http) {
		curl_easy_setopt(h, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
		if (kc->k.ca_data || kc->k.ca_file[0]) {
			/* trust the cluster CA only, not the system store as well */
			curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
			curl_easy_setopt(h, CURLOPT_CAINFO, kc->k.ca_data ? NULL : kc->k.ca_file);
		}
		if (kc->k.ca_data)
			set_blob(h, CURLOPT_CAINFO_BLOB, kc->k.ca_data, kc->k.ca_len);
		if (kc->k.cert_data) {
			set_blob(h, CURLOPT_SSLCERT_BLOB, kc->k.cert_data, kc->k.cert_len);
			curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
		} else if (kc->k.cert_file[0]) {
			curl_easy_setopt(h, CURLOPT_SSLCERT, kc->k.cert_file);
		}
		if (kc->k.key_data) {
			set_blob(h, CURLOPT_SSLKEY_BLOB, kc->k.key_data, kc->k.key_len);
			curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
		} else if (kc->k.key_file[0]) {
			curl_easy_setopt(h, CURLOPT_SSLKEY, kc->k.key_file);
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
static void status_message(const struct strbuf *b, char *out, size_t outlen)
{
	cJSON *j = b->buf ? cJSON_ParseWithLength(b->buf, b->len) : NULL;
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
                             const struct strbuf *b, const char *errbuf,
                             const struct api_noun *noun, const char *ns, const char *name,
                             long timeout_ms, char *err, size_t errlen)
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
		errf(err, errlen, "cannot connect to the API server at %s: %s", kc->k.server,
		     detail);
		return;
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_CLIENTCERT:
		errf(err, errlen, "TLS with the API server at %s failed: %s", kc->k.server, detail);
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
 * the kubelet rotates projected tokens). The answer is in b (caller frees it with strbuf_free).
 */
static CURLcode api_get(struct kube_client *kc, const char *path, long long deadline_ms,
                        struct strbuf *b, long *status, char *errbuf)
{
	char token[KUBECONFIG_TOKEN_MAX + 1];
	int retried = 0;
	long left;
	CURLcode rc;

	errbuf[0] = '\0';
	token_get(kc, 0, token, sizeof(token));
	for (;;) {
		left = (long)(deadline_ms - mono_ms());
		if (left <= 0) {
			rc = CURLE_OPERATION_TIMEDOUT;
			break;
		}
		strbuf_reset(b);
		rc = http_get(kc, path, left, token, b, status, errbuf);
		if (rc == CURLE_OK && *status == 401 && !retried && kc->k.token_file[0] &&
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
	struct strbuf b;
	struct api_noun noun = {"", "", ""};
	char path[600], errbuf[CURL_ERROR_SIZE];
	long status = 0;
	CURLcode rc;
	int rc_out = -1;

	strbuf_init_max(&b, KUBE_MAX_BODY);
	if (errlen)
		err[0] = '\0';
	if (!ns || !dns_label_valid(ns) || !name || !dns_label_valid(name)) {
		errf(err, errlen, "'%.64s/%.64s' is not a valid Service name", ns ? ns : "",
		     name ? name : "");
		return -1;
	}
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/services/%s", ns, name);
	rc = api_get(kc, path, deadline_from_now(kc->timeout_ms), &b, &status, errbuf);
	if (rc == CURLE_OK && status == 404) {
		rc_out = 0;
	} else if (rc != CURLE_OK || status != 200) {
		api_noun_of("Service", "services", "", &noun);
		describe_failure(kc, rc, status, &b, errbuf, &noun, ns, name, kc->timeout_ms, err,
		                 errlen);
	} else if (workload_parse_service(b.buf ? b.buf : "", b.len, out, err, errlen) == 0) {
		rc_out = 1;
	}
	strbuf_free(&b);
	return rc_out;
}

int kube_list_netpols(void *ctx, const char *ns, cJSON **out, char *err, size_t errlen)
{
	struct kube_client *kc = ctx;
	struct strbuf b;
	struct api_noun noun = {"", "", ""};
	char path[600], errbuf[CURL_ERROR_SIZE];
	const char *more;
	long status = 0;
	CURLcode rc;
	cJSON *list = NULL;
	int rc_out = -1;

	*out = NULL;
	strbuf_init_max(&b, KUBE_MAX_BODY);
	if (errlen)
		err[0] = '\0';
	if (!ns || !dns_label_valid(ns)) {
		errf(err, errlen, "'%.64s' is not a valid namespace", ns ? ns : "");
		return -1;
	}
	/* one page; a longer list is not judged (continue set below) */
	snprintf(path, sizeof(path),
	         "/apis/networking.k8s.io/v1/namespaces/%s/networkpolicies?limit=%d", ns,
	         KUBE_MAX_NETPOLS);
	rc = api_get(kc, path, deadline_from_now(kc->timeout_ms), &b, &status, errbuf);
	if (rc == CURLE_OK && status == 403) {
		errf(err, errlen,
		     "forbidden: the webhook's service account may not list networkpolicies in "
		     "namespace %s (grant list on networkpolicies.networking.k8s.io)",
		     ns);
	} else if (rc != CURLE_OK || status != 200) {
		api_noun_of("NetworkPolicy", "networkpolicies", "networking.k8s.io", &noun);
		describe_failure(kc, rc, status, &b, errbuf, &noun, ns, "*", kc->timeout_ms, err,
		                 errlen);
	} else if ((list = cJSON_ParseWithLength(b.buf ? b.buf : "", b.len)) == NULL ||
	           !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(list, "items"))) {
		errf(err, errlen, "the API server's NetworkPolicyList of %s is not one", ns);
	} else if ((more = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	                cJSON_GetObjectItemCaseSensitive(list, "metadata"), "continue"))) != NULL &&
	           more[0] != '\0') {
		errf(err, errlen, "namespace %s has more than %d NetworkPolicies", ns,
		     KUBE_MAX_NETPOLS);
	} else {
		*out = list;
		list = NULL;
		rc_out = 0;
	}
	if (rc_out < 0) /* no warning comes of it: /validate says nothing it cannot know */
		log_kv(LOG_INFO, "netpol_list_failed", "namespace", ns, "error", err, LOG_END);
	cJSON_Delete(list);
	strbuf_free(&b);
	return rc_out;
}

/* One look-up within a deadline shared with the wait for a look-up in flight. */
struct fetch_call {
	struct kube_client *kc;
	long long deadline_ms;
};

/* GETs ref's object from the API server before call->deadline_ms; no cache. */
static int fetch(void *ctx, const struct workload_ref *ref, int fresh, struct workload_spec *out,
                 char *err, size_t errlen)
{
	const struct fetch_call *call = ctx;
	struct kube_client *kc = call->kc;
	const struct kind *kind = ref->kind;
	const char *ns = ref->ns, *name = ref->name;
	char path[600], errbuf[CURL_ERROR_SIZE];
	struct strbuf b;
	struct workload_spec spec;
	long status = 0;
	CURLcode rc;
	int rc_out = -1;
	struct timespec t0;

	(void)fresh; /* nothing below caches */
	strbuf_init_max(&b, KUBE_MAX_BODY);
	if (errlen)
		err[0] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (workload_api_path(kind, ns, name, path, sizeof(path), err, errlen) < 0) {
		metrics_lookup(0, 0, 0);
		return -1;
	}
	rc = api_get(kc, path, call->deadline_ms, &b, &status, errbuf);
	if (rc != CURLE_OK || status != 200) {
		const struct workload_api *a = &kind->api;
		struct api_noun noun = {"", "", ""};
		api_noun_of(a->kind, a->resource, a->group, &noun);
		describe_failure(kc, rc, status, &b, errbuf, &noun, ns, name, kc->timeout_ms, err,
		                 errlen);
		goto out;
	}
	if (workload_parse(kind, b.buf ? b.buf : "", b.len, &spec, err, errlen) < 0)
		goto out;
	*out = spec;
	rc_out = 0;
out:
	metrics_lookup(rc_out == 0, 0, mono_elapsed_s(&t0));
	if (rc_out != 0)
		log_kv(LOG_WARN, "lookup_failed", "kind", kind_name(kind), "namespace", ns, "name",
		       name, "error", err, LOG_END);
	strbuf_free(&b);
	return rc_out;
}

/* fetch with a deadline from now (the cache's own inner look-up). */
static int fetch_now(void *kc, const struct workload_ref *ref, int fresh, struct workload_spec *out,
                     char *err, size_t errlen)
{
	struct fetch_call call = {kc, deadline_from_now(((struct kube_client *)kc)->timeout_ms)};

	return fetch(&call, ref, fresh, out, err, errlen);
}

int kube_get_workload(void *ctx, const struct workload_ref *ref, int fresh,
                      struct workload_spec *out, char *err, size_t errlen)
{
	struct kube_client *kc = ctx;
	struct fetch_call call = {kc, deadline_from_now(kc->timeout_ms)};
	struct workload_lookup inner = {fetch, &call, NULL, NULL, NULL};
	int rc;

	if (!kc->cache)
		return fetch(&call, ref, fresh, out, err, errlen);
	/* the wait for a look-up in flight and the GET share one deadline */
	rc = lookup_cache_get_via(kc->cache, &inner, ref, fresh, out, err, errlen);
	if (rc == 0 && out->cached)
		metrics_lookup(1, 1, 0);
	return rc;
}

int kube_get_object(void *ctx, const struct kind *kind, const char *ns, const char *name,
                    cJSON **out, char *err, size_t errlen)
{
	struct kube_client *kc = ctx;
	char path[600], errbuf[CURL_ERROR_SIZE];
	struct strbuf b;
	long status = 0;
	CURLcode rc;
	int rc_out = -1;

	*out = NULL;
	strbuf_init_max(&b, KUBE_MAX_BODY);
	if (errlen)
		err[0] = '\0';
	if (workload_api_path(kind, ns, name, path, sizeof(path), err, errlen) < 0)
		return -1;
	rc = api_get(kc, path, deadline_from_now(kc->timeout_ms), &b, &status, errbuf);
	if (rc == CURLE_OK && status == 404) {
		rc_out = 0;
	} else if (rc != CURLE_OK || status != 200) {
		const struct workload_api *a = &kind->api;
		struct api_noun noun = {"", "", ""};
		api_noun_of(a->kind, a->resource, a->group, &noun);
		describe_failure(kc, rc, status, &b, errbuf, &noun, ns, name, kc->timeout_ms, err,
		                 errlen);
	} else if ((*out = cJSON_ParseWithLength(b.buf ? b.buf : "", b.len)) == NULL ||
	           !cJSON_IsObject(*out)) {
		cJSON_Delete(*out);
		*out = NULL;
		errf(err, errlen, "the API server's answer for %s %s/%s is not an object",
		     kind_name(kind), ns, name);
	} else {
		rc_out = 1;
	}
	strbuf_free(&b);
	return rc_out;
}

int kube_get_json(struct kube_client *kc, const char *path, const char *what, cJSON **out,
                  char *err, size_t errlen)
{
	char errbuf[CURL_ERROR_SIZE], msg[256];
	struct strbuf b;
	long status = 0;
	CURLcode rc;
	int rc_out = -1;

	*out = NULL;
	strbuf_init_max(&b, KUBE_MAX_BODY);
	if (errlen)
		err[0] = '\0';
	rc = api_get(kc, path, deadline_from_now(kc->timeout_ms), &b, &status, errbuf);
	if (rc == CURLE_OPERATION_TIMEDOUT) {
		errf(err, errlen, "timeout after %ldms: %s", kc->timeout_ms, what);
	} else if (rc == CURLE_FILESIZE_EXCEEDED || (rc == CURLE_WRITE_ERROR && b.too_big)) {
		errf(err, errlen, "the answer is larger than %ld bytes: %s", KUBE_MAX_BODY, what);
	} else if (rc != CURLE_OK) {
		errf(err, errlen, "cannot reach the API server at %s: %s", kc->k.server,
		     errbuf[0] ? errbuf : curl_easy_strerror(rc));
	} else if (status == 404) {
		rc_out = 0;
	} else if (status != 200) {
		status_message(&b, msg, sizeof(msg));
		errf(err, errlen, "%s: you may not %s (HTTP %ld%s%s)",
		     status == 403   ? "forbidden"
		     : status == 401 ? "unauthorized"
		                     : "failed",
		     what, status, msg[0] ? ": " : "", msg);
	} else if ((*out = cJSON_ParseWithLength(b.buf ? b.buf : "", b.len)) == NULL ||
	           !cJSON_IsObject(*out)) {
		cJSON_Delete(*out);
		*out = NULL;
		errf(err, errlen, "the API server's answer is not a JSON object: %s", what);
	} else {
		rc_out = 1;
	}
	strbuf_free(&b);
	return rc_out;
}
