/*
 * kube: kubeconfig and in-cluster credentials, and real GETs on loopback: a
 * closed port, a listener that never answers, and a small TLS server (OpenSSL,
 * certificates from certs_generate) that records what the client sent. The
 * look-up answer's parsing and API path: test_workload.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "devcerts.h"
#include "config.h"
#include "kube.h"
#include "log.h"
#include "metrics.h"
#include "testutil.h"
#include "strbuf.h"
#include "base64.h"

static const char *S(const char *s)
{
	return s;
}

static char tmp[] = "/tmp/distenv-test-kube-XXXXXX";

#define STS (&kind_statefulset)
#define JOB (&kind_job)

/* ---- files and PKI for the credential tests ---- */

static void write_file(const char *path, const char *data)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(data, f);
		fclose(f);
	}
}

static char *b64_of_file(const char *path)
{
	char *d = test_read(path, NULL);
	struct strbuf sb;

	if (!d)
		return strdup("");
	strbuf_init(&sb);
	base64_append(&sb, d, strlen(d));
	free(d);
	return strbuf_take(&sb);
}

/* server/: the serving pair and its CA; client/: a second CA and leaf, used as client certificate
 */
static char srv_dir[300], cli_dir[300], srv_ca_b64_buf[4096], cli_crt_b64[4096], cli_key_b64[4096];
static const char *srv_ca_b64 = srv_ca_b64_buf;

static int make_pki(void)
{
	struct certs_opts o;
	char err[256], path[400], *b;

	snprintf(srv_dir, sizeof(srv_dir), "%s/server", tmp);
	snprintf(cli_dir, sizeof(cli_dir), "%s/client", tmp);
	memset(&o, 0, sizeof(o));
	o.service = "apiserver";
	o.namespace = "test";
	o.out_dir = srv_dir;
	if (certs_generate(&o, err, sizeof(err)) != 0) {
		fprintf(stderr, "certs: %s\n", err);
		return -1;
	}
	o.service = "client";
	o.out_dir = cli_dir;
	if (certs_generate(&o, err, sizeof(err)) != 0) {
		fprintf(stderr, "certs: %s\n", err);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/ca.crt", srv_dir);
	b = b64_of_file(path);
	snprintf(srv_ca_b64_buf, sizeof(srv_ca_b64_buf), "%s", b);
	free(b);
	snprintf(path, sizeof(path), "%s/tls.crt", cli_dir);
	b = b64_of_file(path);
	snprintf(cli_crt_b64, sizeof(cli_crt_b64), "%s", b);
	free(b);
	snprintf(path, sizeof(path), "%s/tls.key", cli_dir);
	b = b64_of_file(path);
	snprintf(cli_key_b64, sizeof(cli_key_b64), "%s", b);
	free(b);
	return 0;
}

/* Writes tmp/kc-N.yaml with one cluster, user and context. Returns its path in out. */
static void kubeconfig(char *out, size_t outlen, const char *cluster_body, const char *user_body)
{
	static int n;
	char *text = malloc(65536);

	snprintf(out, outlen, "%s/kc-%d.yaml", tmp, n++);
	snprintf(text, 65536,
	         "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
	         "contexts:\n- name: other\n  context: {cluster: nope, user: nope}\n"
	         "- name: test\n  context:\n    cluster: c1\n    user: u1\n    namespace: x\n"
	         "clusters:\n- name: c1\n  cluster:\n%s"
	         "users:\n- name: u1\n  user:\n%s",
	         cluster_body, user_body);
	write_file(out, text);
	free(text);
}

static void test_kubeconfig(void)
{
	char server_ca[400], cli_crt[400], cli_key[400], tokfile[400], cl[8192], us[16384];
	char path[400], err[512];
	struct config cfg;
	struct kube_client *kc;
	struct kube_client_info info;
	size_t i;
	struct {
		const char *name;
		const char *cluster; /* %s: server CA b64 or path */
		const char *user;
		const char *server, *ca, *auth, *err_has;
	} cases[] = {
	    {"token and ca data",
	     "    server: https://127.0.0.1:6443\n    certificate-authority-data: %s\n",
	     "    token: abc.def\n", "https://127.0.0.1:6443", "data", "token", NULL},
	    {"trailing slash trimmed",
	     "    server: https://10.0.0.1:6443/\n    certificate-authority-data: %s\n",
	     "    token: abc\n", "https://10.0.0.1:6443", "data", "token", NULL},
	    {"ca file, client cert files",
	     "    server: https://k8s.example:443\n    certificate-authority: %s\n",
	     "    client-certificate: client/tls.crt\n    client-key: client/tls.key\n",
	     "https://k8s.example:443", "file", "client-certificate", NULL},
	    {"client cert data and token",
	     "    server: https://127.0.0.1:6443\n    certificate-authority-data: %s\n",
	     "    client-certificate-data: CRT\n    client-key-data: KEY\n    token: t\n",
	     "https://127.0.0.1:6443", "data", "token+client-certificate", NULL},
	    {"token file relative", "    server: https://127.0.0.1:6443\n",
	     "    tokenFile: token.txt\n    token: ignored\n", "https://127.0.0.1:6443", "system",
	     "token-file", NULL},
	    {"kubectl proxy over http", "    server: http://127.0.0.1:8001\n", "    token: t\n",
	     "http://127.0.0.1:8001", "system", "token", NULL},
	    {"no server", "    certificate-authority-data: %s\n", "    token: t\n", NULL, NULL,
	     NULL, "cluster 'c1' has no server"},
	    {"http to a remote host", "    server: http://10.0.0.1:8080\n", "    token: t\n", NULL,
	     NULL, NULL, "must be an https:// URL"},
	    {"not a url", "    server: 10.0.0.1:6443\n", "    token: t\n", NULL, NULL, NULL,
	     "must be an https:// URL"},
	    {"insecure", "    server: https://h:1\n    insecure-skip-tls-verify: true\n",
	     "    token: t\n", NULL, NULL, NULL, "insecure-skip-tls-verify, which distenv refuses"},
	    {"tls-server-name", "    server: https://h:1\n    tls-server-name: x\n",
	     "    token: t\n", NULL, NULL, NULL, "tls-server-name"},
	    {"ca file missing",
	     "    server: https://h:1\n    certificate-authority: /nonexistent/ca\n",
	     "    token: t\n", NULL, NULL, NULL,
	     "certificate-authority /nonexistent/ca: No such file"},
	    {"ca data not base64",
	     "    server: https://h:1\n    certificate-authority-data: '!!'\n", "    token: t\n",
	     NULL, NULL, NULL, "certificate-authority-data is not base64 of PEM data"},
	    {"ca data not pem",
	     "    server: https://h:1\n    certificate-authority-data: aGVsbG8=\n",
	     "    token: t\n", NULL, NULL, NULL, "not base64 of PEM"},
	    {"cert without key", "    server: https://h:1\n", "    client-certificate-data: CRT\n",
	     NULL, NULL, NULL, "client certificate without a key"},
	    {"key without cert", "    server: https://h:1\n", "    client-key: client/tls.key\n",
	     NULL, NULL, NULL, "without a key, or a key without"},
	    {"client cert file missing", "    server: https://h:1\n",
	     "    client-certificate: nope.crt\n    client-key: client/tls.key\n", NULL, NULL, NULL,
	     "client-certificate "},
	    {"exec plugin", "    server: https://h:1\n",
	     "    exec:\n      command: aws\n      apiVersion: client.authentication.k8s.io/v1\n",
	     NULL, NULL, NULL, "credential plugin (exec or auth-provider)"},
	    {"basic auth", "    server: https://h:1\n", "    username: u\n    password: p\n", NULL,
	     NULL, NULL, "basic authentication"},
	    {"no credentials", "    server: https://h:1\n", "    {}\n", NULL, NULL, NULL,
	     "user 'u1' has no token, tokenFile or client certificate"},
	    {"impersonation", "    server: https://h:1\n", "    token: t\n    as: admin\n", NULL,
	     NULL, NULL, "impersonates"},
	    {"empty token file", "    server: https://h:1\n", "    tokenFile: empty.txt\n", NULL,
	     NULL, NULL, "is empty"},
	    {"token not a string", "    server: https://h:1\n", "    token: [a]\n", NULL, NULL,
	     NULL, "user 'u1': 'token' is not a string"},
	};

	snprintf(server_ca, sizeof(server_ca), "%s/ca.crt", srv_dir);
	snprintf(cli_crt, sizeof(cli_crt), "%s/tls.crt", cli_dir);
	snprintf(cli_key, sizeof(cli_key), "%s/tls.key", cli_dir);
	snprintf(tokfile, sizeof(tokfile), "%s/token.txt", tmp);
	write_file(tokfile, "from-file\n");
	snprintf(path, sizeof(path), "%s/empty.txt", tmp);
	write_file(path, "\n");

	config_defaults(&cfg);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *ca =
		    strstr(cases[i].cluster, "certificate-authority:") ? server_ca : srv_ca_b64;
		char *u = strdup(cases[i].user), *p;
		snprintf(cl, sizeof(cl), cases[i].cluster, ca);
		/* inline data placeholders */
		snprintf(us, sizeof(us), "%s", u);
		if ((p = strstr(u, "CRT")) != NULL) {
			*p = '\0';
			snprintf(us, sizeof(us), "%s%s%s", u, cli_crt_b64, p + 3);
			free(u);
			u = strdup(us);
		}
		if ((p = strstr(u, "KEY")) != NULL) {
			*p = '\0';
			snprintf(us, sizeof(us), "%s%s%s", u, cli_key_b64, p + 3);
		}
		free(u);
		kubeconfig(path, sizeof(path), cl, us);
		snprintf(cfg.kubeconfig, sizeof(cfg.kubeconfig), "%s", path);
		err[0] = '\0';
		kc = kube_client_new(&cfg, err, sizeof(err));
		if (cases[i].server) {
			CHECK(kc != NULL, "%s: %s", cases[i].name, err);
			if (!kc)
				continue;
			kube_client_describe(kc, &info);
			CHECK_STR(S(info.server), cases[i].server, cases[i].name);
			CHECK_STR(S(info.ca), cases[i].ca, cases[i].name);
			CHECK_STR(S(info.auth), cases[i].auth, cases[i].name);
			CHECK_STR(S(info.context), "test", cases[i].name);
			if (strcmp(cases[i].auth, "token-file") == 0)
				CHECK_STR(S(info.token_file), tokfile, "token file made absolute");
		} else {
			CHECK(kc == NULL, "%s: accepted", cases[i].name);
			CHECK(strstr(err, cases[i].err_has) != NULL, "%s: '%s' lacks '%s'",
			      cases[i].name, err, cases[i].err_has);
			CHECK(strncmp(err, "kubeconfig ", 11) == 0,
			      "%s: '%s' does not name the file", cases[i].name, err);
		}
		kube_client_free(kc);
	}

	/* the file itself */
	static const struct {
		const char *name, *text, *err_has;
	} files[] = {
	    {"not yaml", "a: [\n", "line 2: "},
	    {"empty", "", "not a kubeconfig"},
	    {"a list", "- a\n", "not a kubeconfig"},
	    {"no current-context", "clusters: []\n", "no current-context"},
	    {"unknown context", "current-context: x\ncontexts: []\n", "no context named 'x'"},
	    {"contexts not a list", "current-context: x\ncontexts: {}\n",
	     "'contexts' is missing or not a list"},
	    {"context without user",
	     "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n",
	     "context 'x' lacks a cluster or a user"},
	    {"unknown cluster",
	     "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
	     "clusters: []\n",
	     "no cluster named 'c' in 'clusters'"},
	    {"cluster entry without body",
	     "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
	     "clusters:\n- name: c\n",
	     "cluster 'c' has no 'cluster' mapping"},
	    {"unknown user",
	     "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
	     "clusters:\n- name: c\n  cluster: {server: 'https://h:1'}\nusers: []\n",
	     "no user named 'u'"},
	};
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/file-%zu.yaml", tmp, i);
		write_file(path, files[i].text);
		snprintf(cfg.kubeconfig, sizeof(cfg.kubeconfig), "%s", path);
		kc = kube_client_new(&cfg, err, sizeof(err));
		CHECK(kc == NULL && strstr(err, files[i].err_has) != NULL, "%s: '%s' lacks '%s'",
		      files[i].name, err, files[i].err_has);
		kube_client_free(kc);
	}
	snprintf(cfg.kubeconfig, sizeof(cfg.kubeconfig), "%s/missing.yaml", tmp);
	kc = kube_client_new(&cfg, err, sizeof(err));
	CHECK(kc == NULL && strstr(err, "missing.yaml: No such file or directory"), "missing: %s",
	      err);
	kube_client_free(kc);
	kube_client_free(NULL);
}

static void test_incluster_env(void)
{
	struct config cfg;
	struct kube_client *kc;
	char err[512], sa[400], path[450];

	config_defaults(&cfg);
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	kc = kube_client_new(&cfg, err, sizeof(err));
	CHECK(kc == NULL && strstr(err, "not running in a pod"), "outside a pod: %s", err);
	kube_client_free(kc);

	snprintf(sa, sizeof(sa), "%s/sa-bad", tmp);
	mkdir(sa, 0700);
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "https", 1);
	kc = kube_client_new_incluster(&cfg, sa, err, sizeof(err));
	CHECK(kc == NULL && strstr(err, "are not an address"), "bad port: %s", err);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	kc = kube_client_new_incluster(&cfg, sa, err, sizeof(err));
	CHECK(kc == NULL && strstr(err, "service account CA") && strstr(err, "No such file"),
	      "no ca.crt: %s", err);
	snprintf(path, sizeof(path), "%s/ca.crt", sa);
	write_file(path, "x");
	kc = kube_client_new_incluster(&cfg, sa, err, sizeof(err));
	CHECK(kc == NULL && strstr(err, "/token: No such file"), "no token: %s", err);
	snprintf(path, sizeof(path), "%s/token", sa);
	write_file(path, "  \n");
	kc = kube_client_new_incluster(&cfg, sa, err, sizeof(err));
	CHECK(kc == NULL && strstr(err, "is empty"), "empty token: %s", err);
	write_file(path, "abc def");
	kc = kube_client_new_incluster(&cfg, sa, err, sizeof(err));
	CHECK(kc == NULL && strstr(err, "control character or space"), "token with space: %s", err);
	write_file(path, "tok\n");
	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	kc = kube_client_new_incluster(&cfg, sa, err, sizeof(err));
	CHECK(kc != NULL, "ipv6 in-cluster: %s", err);
	if (kc) {
		struct kube_client_info info;
		kube_client_describe(kc, &info);
		CHECK_STR(S(info.server), "https://[fd00::1]:443", "bracketed IPv6 server");
		CHECK_STR(S(info.auth), "token-file", "in-cluster auth");
		CHECK_STR(S(info.ca), "file", "in-cluster ca");
		CHECK_STR(S(info.context), "", "in-cluster context");
	}
	kube_client_free(kc);
}

/* ---- a loopback server that records requests ---- */

enum fake_mode { FAKE_TLS, FAKE_PLAIN, FAKE_SILENT };

struct fake {
	int lfd, port;
	enum fake_mode mode;
	SSL_CTX *ctx;
	pthread_t thr;
	atomic_int stop;
	pthread_mutex_t mu;
	/* recorded */
	int requests;
	char path[600];
	char auth[256];
	char client_cn[256];
	/* behaviour */
	int status;
	char *body;
	size_t body_len;
	char want_token[64]; /* when set: 401 unless "Bearer <want_token>" */
};

static int verify_any(int ok, X509_STORE_CTX *x)
{
	(void)ok;
	(void)x;
	return 1;
}

static int io_read(struct fake *f, SSL *ssl, int fd, char *buf, int n)
{
	(void)f;
	return ssl ? SSL_read(ssl, buf, n) : (int)read(fd, buf, (size_t)n);
}

static int io_write_all(SSL *ssl, int fd, const char *buf, size_t n)
{
	while (n > 0) {
		int w = ssl ? SSL_write(ssl, buf, n > 65536 ? 65536 : (int)n)
		            : (int)write(fd, buf, n > 65536 ? 65536 : n);
		if (w <= 0)
			return -1;
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

static void serve_one(struct fake *f, int fd)
{
	char req[16384], head[512], auth[256] = "", path[600] = "", cn[256] = "";
	SSL *ssl = NULL;
	size_t n = 0;
	int status;
	const char *body;
	size_t body_len;

	if (f->mode == FAKE_SILENT) {
		/* read and drop whatever comes, never answer; give up after 10 s */
		int i;
		for (i = 0; i < 100 && !atomic_load(&f->stop); i++) {
			struct pollfd p = {fd, POLLIN, 0};
			if (poll(&p, 1, 100) > 0 && read(fd, req, sizeof(req)) <= 0)
				break;
		}
		return;
	}
	if (f->mode == FAKE_TLS) {
		ssl = SSL_new(f->ctx);
		SSL_set_fd(ssl, fd);
		if (SSL_accept(ssl) != 1) {
			SSL_free(ssl);
			ERR_clear_error();
			return;
		}
		{
			X509 *peer = SSL_get1_peer_certificate(ssl);
			if (peer) {
				X509_NAME_get_text_by_NID(X509_get_subject_name(peer),
				                          NID_commonName, cn, sizeof(cn));
				X509_free(peer);
			}
		}
	}
	while (n < sizeof(req) - 1) {
		int r = io_read(f, ssl, fd, req + n, (int)(sizeof(req) - 1 - n));
		if (r <= 0)
			break;
		n += (size_t)r;
		req[n] = '\0';
		if (strstr(req, "\r\n\r\n"))
			break;
	}
	req[n] = '\0';
	sscanf(req, "GET %599s", path);
	{
		const char *a = strcasestr(req, "\r\nAuthorization: ");
		if (a)
			sscanf(a + 17, "%255[^\r]", auth);
	}
	pthread_mutex_lock(&f->mu);
	f->requests++;
	snprintf(f->path, sizeof(f->path), "%s", path);
	snprintf(f->auth, sizeof(f->auth), "%s", auth);
	snprintf(f->client_cn, sizeof(f->client_cn), "%s", cn);
	status = f->status;
	body = f->body;
	body_len = f->body_len;
	if (f->want_token[0]) {
		char want[128];
		snprintf(want, sizeof(want), "Bearer %s", f->want_token);
		if (strcmp(auth, want) != 0) {
			status = 401;
			body = "{\"kind\":\"Status\",\"message\":\"Unauthorized\"}";
			body_len = strlen(body);
		}
	}
	snprintf(head, sizeof(head),
	         "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
	         "Connection: close\r\n\r\n",
	         status, body_len);
	if (io_write_all(ssl, fd, head, strlen(head)) == 0)
		io_write_all(ssl, fd, body, body_len);
	pthread_mutex_unlock(&f->mu);
	if (ssl) {
		SSL_shutdown(ssl);
		SSL_free(ssl);
	}
	ERR_clear_error();
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;
	int i;

	/* bounded: at most 10 minutes of 100 ms polls */
	for (i = 0; i < 6000 && !atomic_load(&f->stop); i++) {
		struct pollfd p = {f->lfd, POLLIN, 0};
		struct timeval tv = {5, 0};
		int fd;
		if (poll(&p, 1, 100) <= 0)
			continue;
		fd = accept(f->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		serve_one(f, fd);
		close(fd);
	}
	return NULL;
}

static int listen_loopback(int *port)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 64) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &al) != 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static int fake_start(struct fake *f, enum fake_mode mode)
{
	char crt[400], key[400];

	memset(f, 0, sizeof(*f));
	f->mode = mode;
	pthread_mutex_init(&f->mu, NULL);
	f->status = 200;
	f->body = strdup("{}");
	f->body_len = 2;
	if ((f->lfd = listen_loopback(&f->port)) < 0)
		return -1;
	if (mode == FAKE_TLS) {
		snprintf(crt, sizeof(crt), "%s/tls.crt", srv_dir);
		snprintf(key, sizeof(key), "%s/tls.key", srv_dir);
		f->ctx = SSL_CTX_new(TLS_server_method());
		if (!f->ctx || SSL_CTX_use_certificate_chain_file(f->ctx, crt) != 1 ||
		    SSL_CTX_use_PrivateKey_file(f->ctx, key, SSL_FILETYPE_PEM) != 1)
			return -1;
		/* ask for a client certificate, accept any: the test records what came */
		SSL_CTX_set_verify(f->ctx, SSL_VERIFY_PEER, verify_any);
		/* clients resume sessions; with peer verification OpenSSL needs a context id */
		SSL_CTX_set_session_id_context(f->ctx, (const unsigned char *)"distenv-test", 12);
	}
	return pthread_create(&f->thr, NULL, fake_main, f) == 0 ? 0 : -1;
}

static void fake_stop(struct fake *f)
{
	atomic_store(&f->stop, 1);
	pthread_join(f->thr, NULL);
	close(f->lfd);
	SSL_CTX_free(f->ctx);
	free(f->body);
	pthread_mutex_destroy(&f->mu);
}

static void fake_answer(struct fake *f, int status, const char *body)
{
	pthread_mutex_lock(&f->mu);
	f->status = status;
	free(f->body);
	f->body = strdup(body);
	f->body_len = strlen(body);
	pthread_mutex_unlock(&f->mu);
}

static int fake_requests(struct fake *f)
{
	int n;

	pthread_mutex_lock(&f->mu);
	n = f->requests;
	pthread_mutex_unlock(&f->mu);
	return n;
}

static unsigned long long lookups_metric(const char *outcome)
{
	size_t len;
	char *m = metrics_render(&len), want[128], *p;
	unsigned long long v = 0;

	snprintf(want, sizeof(want), "distenv_lookups_total{outcome=\"%s\"} ", outcome);
	if (m && (p = strstr(m, want)))
		v = strtoull(p + strlen(want), NULL, 10);
	free(m);
	return v;
}

static const char sts_body[] =
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"ddp\"},"
    "\"spec\":{\"replicas\":4,\"ordinals\":{\"start\":2},\"serviceName\":\"ddp\"}}";
static const char job_body[] = "{\"kind\":\"Job\",\"spec\":{\"completions\":6,\"parallelism\":6,"
                               "\"completionMode\":\"Indexed\"}}";

/* kube_get_workload for an owner reference without a uid, through the cache. */
static int kget(struct kube_client *kc, const struct kind *kind, const char *ns, const char *name,
                struct workload_spec *out, char *err, size_t errlen)
{
	struct workload_ref ref = {kind, ns, name, NULL};

	return kube_get_workload(kc, &ref, 0, out, err, errlen);
}

/* In-cluster credentials against the TLS server: success, cache, errors, token rotation. */
static void test_incluster_tls(void)
{
	struct fake f;
	struct config cfg;
	struct kube_client *kc;
	struct workload_spec ws;
	char sa[400], path[450], port[16], err[512];
	int before;
	unsigned long long m_ok, m_cached, m_err;

	if (fake_start(&f, FAKE_TLS) != 0) {
		CHECK(0, "fake TLS server did not start");
		return;
	}
	snprintf(sa, sizeof(sa), "%s/sa", tmp);
	mkdir(sa, 0700);
	snprintf(path, sizeof(path), "%s/ca.crt", sa);
	{
		char src[400], *pem;
		snprintf(src, sizeof(src), "%s/ca.crt", srv_dir);
		pem = test_read(src, NULL);
		write_file(path, pem ? pem : "");
		free(pem);
	}
	snprintf(path, sizeof(path), "%s/token", sa);
	write_file(path, "tok1\n");
	snprintf(port, sizeof(port), "%d", f.port);
	setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", port, 1);
	config_defaults(&cfg);
	cfg.cache_ttl_ms = 60000;
	kc = kube_client_new_incluster(&cfg, sa, err, sizeof(err));
	CHECK(kc != NULL, "in-cluster client: %s", err);
	if (!kc)
		goto out;

	m_ok = lookups_metric("ok");
	m_cached = lookups_metric("cached");
	m_err = lookups_metric("error");
	fake_answer(&f, 200, sts_body);
	CHECK(kget(kc, STS, "team-a", "ddp", &ws, err, sizeof(err)) == 0, "get sts: %s", err);
	CHECK(ws.replicas == 4 && ws.ordinals_start == 2, "sts spec %ld/%ld", ws.replicas,
	      ws.ordinals_start);
	CHECK(fake_requests(&f) == 1, "one request, got %d", fake_requests(&f));
	CHECK_STR(S(f.path), "/apis/apps/v1/namespaces/team-a/statefulsets/ddp", "request path");
	CHECK_STR(S(f.auth), "Bearer tok1", "bearer token sent");
	CHECK_STR(S(f.client_cn), "", "no client certificate in-cluster");

	/* cached: no second request */
	memset(&ws, 0, sizeof(ws));
	CHECK(kget(kc, STS, "team-a", "ddp", &ws, err, sizeof(err)) == 0 && ws.replicas == 4,
	      "cached sts: %s", err);
	CHECK(fake_requests(&f) == 1, "cache hit went to the server");
	CHECK(lookups_metric("ok") == m_ok + 1 && lookups_metric("cached") == m_cached + 1,
	      "metrics ok/cached");

	/* a Job of the same name is another entry */
	fake_answer(&f, 200, job_body);
	CHECK(kget(kc, JOB, "team-a", "ddp", &ws, err, sizeof(err)) == 0, "get job: %s", err);
	CHECK(ws.completions == 6 && ws.parallelism == 6 && ws.indexed == 1, "job spec");
	CHECK_STR(S(f.path), "/apis/batch/v1/namespaces/team-a/jobs/ddp", "job path");
	CHECK(fake_requests(&f) == 2, "job request");

	/* errors, and they are not cached */
	fake_answer(&f, 404,
	            "{\"kind\":\"Status\",\"reason\":\"NotFound\",\"message\":\"statefulsets.apps "
	            "\\\"gone\\\" not found\"}");
	CHECK(kget(kc, STS, "team-a", "gone", &ws, err, sizeof(err)) != 0, "404 ok");
	CHECK_STR(S(err), "statefulset team-a/gone not found", "404 message");
	fake_answer(&f, 200, sts_body);
	CHECK(kget(kc, STS, "team-a", "gone", &ws, err, sizeof(err)) == 0,
	      "after 404 the next look-up asks again: %s", err);
	CHECK(fake_requests(&f) == 4, "404 was cached");
	CHECK(lookups_metric("error") == m_err + 1, "error metric");

	fake_answer(&f, 403, "{\"kind\":\"Status\",\"reason\":\"Forbidden\"}");
	CHECK(kget(kc, JOB, "team-b", "train", &ws, err, sizeof(err)) != 0, "403 ok");
	CHECK_STR(S(err),
	          "forbidden: the webhook's service account may not get jobs in namespace team-b "
	          "(grant get on jobs.batch)",
	          "403 message");
	fake_answer(&f, 500,
	            "{\"kind\":\"Status\",\"message\":\"etcdserver: request timed\nout\"}");
	CHECK(kget(kc, JOB, "team-b", "train", &ws, err, sizeof(err)) != 0, "500 ok");
	CHECK_STR(
	    S(err),
	    "the API server answered HTTP 500 for job team-b/train: etcdserver: request timed "
	    "out",
	    "500 message");
	fake_answer(&f, 429, "");
	CHECK(kget(kc, JOB, "team-b", "train", &ws, err, sizeof(err)) != 0 &&
	          strstr(err, "throttling"),
	      "429: %s", err);
	fake_answer(&f, 200, "<html>proxy error</html>");
	CHECK(kget(kc, JOB, "team-b", "train", &ws, err, sizeof(err)) != 0 &&
	          strstr(err, "is not JSON"),
	      "bad JSON: %s", err);
	fake_answer(&f, 200, sts_body);
	CHECK(kget(kc, JOB, "team-b", "train", &ws, err, sizeof(err)) != 0 &&
	          strstr(err, "expected a Job, got kind StatefulSet"),
	      "wrong kind: %s", err);
	{
		size_t big = 5 * 1024 * 1024;
		char *b = malloc(big + 1);
		memset(b, ' ', big);
		b[big] = '\0';
		fake_answer(&f, 200, b);
		free(b);
		CHECK(kget(kc, JOB, "team-b", "big", &ws, err, sizeof(err)) != 0 &&
		          strstr(err, "is larger than 4194304 bytes"),
		      "5 MiB answer: %s", err);
	}

	/* invalid names never reach the server */
	before = fake_requests(&f);
	CHECK(kget(kc, STS, "team-a", "../../api/v1/secrets", &ws, err, sizeof(err)) != 0 &&
	          strstr(err, "not a valid StatefulSet name"),
	      "traversal: %s", err);
	CHECK(kget(kc, JOB, "Team", "x", &ws, err, sizeof(err)) != 0, "bad ns");
	CHECK(fake_requests(&f) == before, "an invalid name reached the server");

	/* the token rotated: 401, the file is re-read, the request is repeated once */
	snprintf(path, sizeof(path), "%s/token", sa);
	write_file(path, "tok2\n");
	pthread_mutex_lock(&f.mu);
	snprintf(f.want_token, sizeof(f.want_token), "tok2");
	pthread_mutex_unlock(&f.mu);
	fake_answer(&f, 200, job_body);
	before = fake_requests(&f);
	CHECK(kget(kc, JOB, "team-c", "rotated", &ws, err, sizeof(err)) == 0, "after rotation: %s",
	      err);
	CHECK(fake_requests(&f) == before + 2, "401 then 200: %d requests",
	      fake_requests(&f) - before);
	CHECK_STR(S(f.auth), "Bearer tok2", "new token sent");

	/* a 401 with an unchanged file is not repeated */
	pthread_mutex_lock(&f.mu);
	snprintf(f.want_token, sizeof(f.want_token), "tok3");
	pthread_mutex_unlock(&f.mu);
	before = fake_requests(&f);
	CHECK(kget(kc, JOB, "team-c", "other", &ws, err, sizeof(err)) != 0, "401 ok");
	CHECK_STR(S(err), "unauthorized: the API server rejected the webhook's credentials (401)",
	          "401 message");
	CHECK(fake_requests(&f) == before + 1, "401 repeated without a new token");
	pthread_mutex_lock(&f.mu);
	f.want_token[0] = '\0';
	pthread_mutex_unlock(&f.mu);
out:
	kube_client_free(kc);
	fake_stop(&f);
}

/* Inline and file client certificates reach the server; a wrong CA is refused. */
static void test_kubeconfig_tls(void)
{
	struct fake f;
	struct config cfg;
	struct kube_client *kc;
	struct workload_spec ws;
	char cl[8192], us[16384], path[400], err[512], wrong_ca[4096], *b;

	if (fake_start(&f, FAKE_TLS) != 0) {
		CHECK(0, "fake TLS server did not start");
		return;
	}
	fake_answer(&f, 200, sts_body);
	config_defaults(&cfg);

	/* everything inline */
	snprintf(cl, sizeof(cl),
	         "    server: https://127.0.0.1:%d\n    certificate-authority-data: %s\n", f.port,
	         srv_ca_b64);
	snprintf(us, sizeof(us), "    client-certificate-data: %s\n    client-key-data: %s\n",
	         cli_crt_b64, cli_key_b64);
	kubeconfig(path, sizeof(path), cl, us);
	snprintf(cfg.kubeconfig, sizeof(cfg.kubeconfig), "%s", path);
	kc = kube_client_new(&cfg, err, sizeof(err));
	CHECK(kc != NULL, "inline kubeconfig: %s", err);
	if (kc) {
		CHECK(kget(kc, STS, "ns", "ddp", &ws, err, sizeof(err)) == 0 && ws.replicas == 4,
		      "GET with inline credentials: %s", err);
		CHECK_STR(S(f.client_cn), "client.test.svc", "client certificate from -data");
		CHECK_STR(S(f.auth), "", "no token sent");
	}
	kube_client_free(kc);

	/* files, relative to the kubeconfig, plus a token */
	snprintf(cl, sizeof(cl),
	         "    server: https://127.0.0.1:%d/\n    certificate-authority: server/ca.crt\n",
	         f.port);
	snprintf(us, sizeof(us),
	         "    client-certificate: client/tls.crt\n    client-key: %s/tls.key\n"
	         "    token: file-user\n",
	         cli_dir);
	kubeconfig(path, sizeof(path), cl, us);
	snprintf(cfg.kubeconfig, sizeof(cfg.kubeconfig), "%s", path);
	kc = kube_client_new(&cfg, err, sizeof(err));
	CHECK(kc != NULL, "file kubeconfig: %s", err);
	if (kc) {
		CHECK(kget(kc, STS, "ns", "ddp2", &ws, err, sizeof(err)) == 0,
		      "GET with file credentials: %s", err);
		CHECK_STR(S(f.client_cn), "client.test.svc", "client certificate from a file");
		CHECK_STR(S(f.auth), "Bearer file-user", "token with a client certificate");
		CHECK_STR(S(f.path), "/apis/apps/v1/namespaces/ns/statefulsets/ddp2",
		          "no double slash");
	}
	kube_client_free(kc);

	/* the client CA does not vouch for the server */
	snprintf(path, sizeof(path), "%s/ca.crt", cli_dir);
	b = b64_of_file(path);
	snprintf(wrong_ca, sizeof(wrong_ca), "%s", b);
	free(b);
	snprintf(cl, sizeof(cl),
	         "    server: https://127.0.0.1:%d\n    certificate-authority-data: %s\n", f.port,
	         wrong_ca);
	kubeconfig(path, sizeof(path), cl, "    token: t\n");
	snprintf(cfg.kubeconfig, sizeof(cfg.kubeconfig), "%s", path);
	kc = kube_client_new(&cfg, err, sizeof(err));
	CHECK(kc != NULL, "wrong-CA kubeconfig: %s", err);
	if (kc) {
		CHECK(kget(kc, STS, "ns", "ddp", &ws, err, sizeof(err)) != 0, "wrong CA accepted");
		CHECK(strstr(err, "TLS with the API server at https://127.0.0.1:") != NULL,
		      "wrong CA: %s", err);
	}
	kube_client_free(kc);

	fake_stop(&f);
}

/* Plain http to loopback (kubectl proxy) works; the cache evicts the oldest and expires. */
static void test_plain_and_cache(void)
{
	struct fake f;
	struct config cfg;
	struct kube_client *kc;
	struct workload_spec ws;
	char cl[8192], path[400], err[512];
	int before;

	if (fake_start(&f, FAKE_PLAIN) != 0) {
		CHECK(0, "fake server did not start");
		return;
	}
	fake_answer(&f, 200, sts_body);
	config_defaults(&cfg);
	cfg.cache_entries = 2;
	cfg.cache_ttl_ms = 60000;
	snprintf(cl, sizeof(cl), "    server: http://127.0.0.1:%d\n", f.port);
	kubeconfig(path, sizeof(path), cl, "    token: proxy\n");
	snprintf(cfg.kubeconfig, sizeof(cfg.kubeconfig), "%s", path);
	kc = kube_client_new(&cfg, err, sizeof(err));
	CHECK(kc != NULL, "http kubeconfig: %s", err);
	if (kc) {
		CHECK(kget(kc, STS, "ns", "a", &ws, err, sizeof(err)) == 0, "a: %s", err);
		CHECK(kget(kc, STS, "ns", "b", &ws, err, sizeof(err)) == 0, "b: %s", err);
		CHECK(kget(kc, STS, "ns", "c", &ws, err, sizeof(err)) == 0, "c: %s", err);
		CHECK(fake_requests(&f) == 3, "three misses");
		before = fake_requests(&f);
		CHECK(kget(kc, STS, "ns", "c", &ws, err, sizeof(err)) == 0, "c again");
		CHECK(kget(kc, STS, "ns", "b", &ws, err, sizeof(err)) == 0, "b again");
		CHECK(fake_requests(&f) == before, "b and c should be cached");
		CHECK(kget(kc, STS, "ns", "a", &ws, err, sizeof(err)) == 0, "a again");
		CHECK(fake_requests(&f) == before + 1, "a should have been evicted (cap 2)");
	}
	kube_client_free(kc);

	/* a 1 ms TTL: expired by the next look-up */
	cfg.cache_entries = 10;
	cfg.cache_ttl_ms = 1;
	kc = kube_client_new(&cfg, err, sizeof(err));
	if (kc) {
		struct timespec ts = {0, 5 * 1000 * 1000};
		before = fake_requests(&f);
		CHECK(kget(kc, STS, "ns", "a", &ws, err, sizeof(err)) == 0, "ttl a");
		nanosleep(&ts, NULL);
		CHECK(kget(kc, STS, "ns", "a", &ws, err, sizeof(err)) == 0, "ttl a 2");
		CHECK(fake_requests(&f) == before + 2, "an expired entry was served");
	}
	kube_client_free(kc);

	/* the owner's uid is part of the key; a fresh read skips and replaces the entry */
	cfg.cache_entries = 10;
	cfg.cache_ttl_ms = 60000;
	fake_answer(&f, 200,
	            "{\"kind\":\"StatefulSet\",\"metadata\":{\"uid\":\"uid-new\"},"
	            "\"spec\":{\"replicas\":5}}");
	kc = kube_client_new(&cfg, err, sizeof(err));
	if (kc) {
		struct workload_ref old_owner = {STS, "ns", "re", "uid-old"};
		struct workload_ref new_owner = {STS, "ns", "re", "uid-new"};
		before = fake_requests(&f);
		CHECK(kube_get_workload(kc, &new_owner, 0, &ws, err, sizeof(err)) == 0 &&
		          ws.replicas == 5 && strcmp(ws.uid, "uid-new") == 0 && !ws.cached,
		      "uid: first read %s", err);
		CHECK(kube_get_workload(kc, &new_owner, 0, &ws, err, sizeof(err)) == 0 && ws.cached,
		      "uid: same uid is a hit");
		CHECK(fake_requests(&f) == before + 1, "uid: one GET for the same owner");
		CHECK(kube_get_workload(kc, &old_owner, 0, &ws, err, sizeof(err)) == 0 &&
		          strcmp(ws.uid, "uid-new") == 0 && !ws.cached,
		      "uid: another owner uid is a miss");
		CHECK(kube_get_workload(kc, &old_owner, 0, &ws, err, sizeof(err)) == 0 &&
		          !ws.cached,
		      "uid: an answer for another uid is not cached");
		CHECK(fake_requests(&f) == before + 3, "uid: old owner read twice");
		CHECK(kube_get_workload(kc, &new_owner, 1, &ws, err, sizeof(err)) == 0 &&
		          !ws.cached,
		      "fresh: not from the cache");
		CHECK(fake_requests(&f) == before + 4, "fresh: a GET");
		CHECK(kube_get_workload(kc, &new_owner, 0, &ws, err, sizeof(err)) == 0 && ws.cached,
		      "fresh: the fresh answer is cached");
		CHECK(fake_requests(&f) == before + 4, "fresh: then a hit");
	}
	kube_client_free(kc);
	fake_answer(&f, 200, sts_body);

	/* cache off */
	cfg.cache_entries = 0;
	cfg.cache_ttl_ms = 60000;
	kc = kube_client_new(&cfg, err, sizeof(err));
	if (kc) {
		before = fake_requests(&f);
		CHECK(kget(kc, STS, "ns", "a", &ws, err, sizeof(err)) == 0, "off a");
		CHECK(kget(kc, STS, "ns", "a", &ws, err, sizeof(err)) == 0, "off a 2");
		CHECK(fake_requests(&f) == before + 2, "cache off still cached");
	}
	kube_client_free(kc);
	fake_stop(&f);
}

/* Several threads through one client: every answer right, few requests. */
struct worker {
	struct kube_client *kc;
	int ok;
};

/* LIST of NetworkPolicies: the path, one page, the list's end, and what a failure says. */
static void test_netpols(void)
{
	struct fake f;
	struct config cfg;
	struct kube_client *kc;
	cJSON *list = NULL;
	char cl[8192], path[400], err[512];

	if (fake_start(&f, FAKE_PLAIN) != 0) {
		CHECK(0, "fake server did not start");
		return;
	}
	config_defaults(&cfg);
	snprintf(cl, sizeof(cl), "    server: http://127.0.0.1:%d\n", f.port);
	kubeconfig(path, sizeof(path), cl, "    token: proxy\n");
	snprintf(cfg.kubeconfig, sizeof(cfg.kubeconfig), "%s", path);
	kc = kube_client_new(&cfg, err, sizeof(err));
	CHECK(kc != NULL, "http kubeconfig: %s", err);
	if (kc == NULL) {
		fake_stop(&f);
		return;
	}
	fake_answer(
	    &f, 200,
	    "{\"kind\":\"NetworkPolicyList\",\"metadata\":{\"resourceVersion\":\"7\"},"
	    "\"items\":[{\"metadata\":{\"name\":\"deny\"},\"spec\":{\"podSelector\":{}}}]}");
	CHECK(kube_list_netpols(kc, "ml", &list, err, sizeof(err)) == 0, "list: %s", err);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(list, "items")) == 1, "one item");
	pthread_mutex_lock(&f.mu);
	CHECK_STR(S(f.path), "/apis/networking.k8s.io/v1/namespaces/ml/networkpolicies?limit=256",
	          "list path");
	pthread_mutex_unlock(&f.mu);
	cJSON_Delete(list);
	fake_answer(&f, 200,
	            "{\"kind\":\"NetworkPolicyList\",\"metadata\":{\"continue\":\"abc\"},"
	            "\"items\":[]}");
	CHECK(kube_list_netpols(kc, "ml", &list, err, sizeof(err)) == -1 && list == NULL &&
	          strstr(err, "more than 256 NetworkPolicies") != NULL,
	      "a second page: %s", err);
	fake_answer(&f, 200, "{\"kind\":\"Status\"}");
	CHECK(kube_list_netpols(kc, "ml", &list, err, sizeof(err)) == -1 && list == NULL &&
	          strstr(err, "is not one") != NULL,
	      "no items: %s", err);
	fake_answer(&f, 403, "{\"kind\":\"Status\",\"message\":\"forbidden\"}");
	CHECK(kube_list_netpols(kc, "ml", &list, err, sizeof(err)) == -1 &&
	          strstr(err, "may not list networkpolicies in namespace ml") != NULL,
	      "403: %s", err);
	CHECK(kube_list_netpols(kc, "Not/A-Namespace", &list, err, sizeof(err)) == -1 &&
	          strstr(err, "not a valid namespace") != NULL,
	      "bad namespace: %s", err);
	kube_client_free(kc);
	fake_stop(&f);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct workload_spec ws;
	char err[256], name[32];
	int i;

	for (i = 0; i < 50; i++) {
		snprintf(name, sizeof(name), "job-%d", i % 5);
		if (kget(w->kc, STS, "ns", name, &ws, err, sizeof(err)) == 0 && ws.replicas == 4)
			w->ok++;
	}
	return NULL;
}

static void test_threads(void)
{
	struct fake f;
	struct config cfg;
	struct kube_client *kc;
	struct worker w[8];
	pthread_t t[8];
	char cl[8192], path[400], err[512];
	int i, ok = 0;

	if (fake_start(&f, FAKE_TLS) != 0) {
		CHECK(0, "fake server did not start");
		return;
	}
	fake_answer(&f, 200, sts_body);
	config_defaults(&cfg);
	snprintf(cl, sizeof(cl),
	         "    server: https://localhost:%d\n    certificate-authority-data: %s\n", f.port,
	         srv_ca_b64);
	kubeconfig(path, sizeof(path), cl, "    token: t\n");
	snprintf(cfg.kubeconfig, sizeof(cfg.kubeconfig), "%s", path);
	kc = kube_client_new(&cfg, err, sizeof(err));
	CHECK(kc != NULL, "threads client: %s", err);
	if (kc) {
		for (i = 0; i < 8; i++) {
			w[i].kc = kc;
			w[i].ok = 0;
			pthread_create(&t[i], NULL, worker_main, &w[i]);
		}
		for (i = 0; i < 8; i++) {
			pthread_join(t[i], NULL);
			ok += w[i].ok;
		}
		CHECK(ok == 400, "%d of 400 look-ups right", ok);
		CHECK(fake_requests(&f) == 5,
		      "%d requests for 5 names: concurrent misses must share one GET",
		      fake_requests(&f));
		printf("threads: 400 look-ups of 5 names cost %d requests\n", fake_requests(&f));
	}
	kube_client_free(kc);
	fake_stop(&f);
}

/* A closed port: connection refused, reported as such. */
static void test_refused(void)
{
	struct config cfg;
	struct kube_client *kc;
	struct workload_spec ws;
	char cl[8192], path[400], err[512];
	int port, fd = listen_loopback(&port);

	if (fd < 0) {
		CHECK(0, "no loopback socket");
		return;
	}
	close(fd); /* nothing listens there now */
	config_defaults(&cfg);
	snprintf(cl, sizeof(cl),
	         "    server: https://127.0.0.1:%d\n    certificate-authority-data: %s\n", port,
	         srv_ca_b64);
	kubeconfig(path, sizeof(path), cl, "    token: t\n");
	snprintf(cfg.kubeconfig, sizeof(cfg.kubeconfig), "%s", path);
	kc = kube_client_new(&cfg, err, sizeof(err));
	CHECK(kc != NULL, "refused client: %s", err);
	if (kc) {
		CHECK(kget(kc, STS, "ns", "x", &ws, err, sizeof(err)) != 0, "refused ok");
		CHECK(strstr(err, "cannot connect to the API server at https://127.0.0.1:") != NULL,
		      "refused: %s", err);
	}
	kube_client_free(kc);
}

/*
 * A listener that takes the connection and never answers: the look-up fails
 * with a timeout. The listener hangs up after 10 s, so a client that ignored its
 * deadline would report something else.
 */
static void test_timeout(void)
{
	static const char *const schemes[] = {"https", "http"};
	struct fake f;
	struct config cfg;
	struct kube_client *kc;
	struct workload_spec ws;
	char cl[8192], path[400], err[512];
	size_t i;

	if (fake_start(&f, FAKE_SILENT) != 0) {
		CHECK(0, "silent listener did not start");
		return;
	}
	for (i = 0; i < 2; i++) {
		struct timespec a, b;
		config_defaults(&cfg);
		cfg.lookup_timeout_ms = 300;
		snprintf(cl, sizeof(cl), "    server: %s://127.0.0.1:%d\n%s%s%s", schemes[i],
		         f.port, i == 0 ? "    certificate-authority-data: " : "",
		         i == 0 ? srv_ca_b64 : "", i == 0 ? "\n" : "");
		kubeconfig(path, sizeof(path), cl, "    token: t\n");
		snprintf(cfg.kubeconfig, sizeof(cfg.kubeconfig), "%s", path);
		kc = kube_client_new(&cfg, err, sizeof(err));
		CHECK(kc != NULL, "%s timeout client: %s", schemes[i], err);
		if (!kc)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &a);
		CHECK(kget(kc, JOB, "ns", "slow", &ws, err, sizeof(err)) != 0,
		      "silent server answered");
		clock_gettime(CLOCK_MONOTONIC, &b);
		CHECK_STR(S(err), "timeout after 300ms getting job ns/slow from the API server",
		          schemes[i]);
		printf("%s: silent server, 300 ms deadline: failed after %ld ms\n", schemes[i],
		       (long)((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000));
		kube_client_free(kc);
	}
	fake_stop(&f);
}

int main(void)
{
	char cmd[600];

	signal(SIGPIPE, SIG_IGN);
	log_set_level(LOG_ERROR); /* the failures below are on purpose; keep the output short */
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	if (make_pki() == 0) {
		test_kubeconfig();
		test_incluster_env();
		test_incluster_tls();
		test_kubeconfig_tls();
		test_plain_and_cache();
		test_netpols();
		test_threads();
		test_refused();
		test_timeout();
	} else {
		CHECK(0, "cannot make test certificates");
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmp);
	TEST_MAIN_END("kube");
}
