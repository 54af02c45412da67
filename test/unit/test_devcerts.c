/*
 * certs: generate into a temporary directory, read everything back with
 * OpenSSL and check the chain, names, validity, key and file modes.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "devcerts.h"
#include "testutil.h"

/* CHECK_STR tests its argument for NULL; arrays need to decay first. */
static const char *S(const char *s)
{
	return s;
}

static X509 *read_cert(const char *dir, const char *name)
{
	char path[512];
	FILE *f;
	X509 *x;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "r")))
		return NULL;
	x = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	return x;
}

static EVP_PKEY *read_key(const char *dir)
{
	char path[512];
	FILE *f;
	EVP_PKEY *k;

	snprintf(path, sizeof(path), "%s/tls.key", dir);
	if (!(f = fopen(path, "r")))
		return NULL;
	k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	return k;
}

static int mode_of(const char *dir, const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s%s%s", dir, name ? "/" : "", name ? name : "");
	if (stat(path, &st) != 0)
		return -1;
	return (int)(st.st_mode & 07777);
}

/* The directory holds exactly ca.crt, tls.crt and tls.key (no CA key, no temporaries). */
static int dir_is_exact(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0, bad = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!strcmp(e->d_name, "ca.crt") || !strcmp(e->d_name, "tls.crt") ||
		    !strcmp(e->d_name, "tls.key"))
			n++;
		else
			bad++;
	}
	closedir(d);
	return n == 3 && bad == 0;
}

/* Seconds from now to t (negative: in the past). */
static long secs_from_now(const ASN1_TIME *t)
{
	int days = 0, secs = 0;

	if (!ASN1_TIME_diff(&days, &secs, NULL, t))
		return 0x7fffffff;
	return (long)days * 86400 + secs;
}

/* The SAN list as "DNS:a,IP:1.2.3.4,..." in certificate order. */
static void san_list(X509 *x, char *out, size_t outlen)
{
	GENERAL_NAMES *gens = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
	size_t o = 0;
	int i;

	out[0] = '\0';
	for (i = 0; gens && i < sk_GENERAL_NAME_num(gens); i++) {
		const GENERAL_NAME *g = sk_GENERAL_NAME_value(gens, i);
		const unsigned char *d = ASN1_STRING_get0_data(g->d.ia5);
		int len = ASN1_STRING_length(g->d.ia5);
		if (g->type == GEN_DNS) {
			o += (size_t)snprintf(out + o, outlen - o, "%sDNS:%.*s", o ? "," : "", len,
			                      (const char *)d);
		} else if (g->type == GEN_IPADD && len == 4) {
			o += (size_t)snprintf(out + o, outlen - o, "%sIP:%d.%d.%d.%d", o ? "," : "",
			                      d[0], d[1], d[2], d[3]);
		} else if (g->type == GEN_IPADD && len == 16) {
			o += (size_t)snprintf(out + o, outlen - o, "%sIP6:%02x%02x..%02x",
			                      o ? "," : "", d[0], d[1], d[15]);
		}
	}
	GENERAL_NAMES_free(gens);
}

static int verify_chain(X509 *ca, X509 *leaf)
{
	X509_STORE *store = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	int ok = 0;

	if (store && ctx && X509_STORE_add_cert(store, ca) &&
	    X509_STORE_CTX_init(ctx, store, leaf, NULL) &&
	    X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER))
		ok = X509_verify_cert(ctx) == 1;
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	return ok;
}

static void check_generated(const char *dir, long days, const char *want_sans)
{
	X509 *ca = read_cert(dir, "ca.crt"), *leaf = read_cert(dir, "tls.crt");
	EVP_PKEY *key = read_key(dir);
	char sans[2048], cn[256];
	BIGNUM *s1 = NULL, *s2 = NULL;

	CHECK(ca && leaf && key, "%s: files do not load", dir);
	if (!ca || !leaf || !key)
		goto out;
	CHECK(verify_chain(ca, leaf), "leaf does not verify against ca.crt as a TLS server");
	CHECK(X509_check_private_key(leaf, key) == 1, "tls.key does not match tls.crt");
	CHECK(EVP_PKEY_get_id(key) == EVP_PKEY_EC && EVP_PKEY_get_bits(key) == 256,
	      "key is not ECDSA P-256");
	CHECK(X509_check_ca(ca) >= 1, "ca.crt is not a CA");
	CHECK(X509_get_key_usage(ca) & KU_KEY_CERT_SIGN, "CA lacks keyCertSign");
	CHECK(X509_check_ca(leaf) == 0, "leaf is a CA");
	CHECK(X509_get_extended_key_usage(leaf) & XKU_SSL_SERVER, "leaf lacks serverAuth");
	CHECK(X509_get_key_usage(leaf) & KU_DIGITAL_SIGNATURE, "leaf lacks digitalSignature");
	CHECK(X509_get_version(leaf) == X509_VERSION_3, "not v3");

	X509_NAME_get_text_by_NID(X509_get_subject_name(leaf), NID_commonName, cn, sizeof(cn));
	CHECK_STR(S(cn), "webhook.distenv-system.svc", "leaf CN");

	san_list(leaf, sans, sizeof(sans));
	CHECK_STR(S(sans), want_sans, "SANs");
	CHECK(X509_check_host(leaf, "webhook.distenv-system.svc", 0, 0, NULL) == 1, "host svc");
	CHECK(X509_check_host(leaf, "other.distenv-system.svc", 0, 0, NULL) == 0, "other host");
	CHECK(X509_check_ip_asc(leaf, "127.0.0.1", 0) == 1, "127.0.0.1");
	CHECK(X509_check_ip_asc(leaf, "127.0.0.2", 0) == 0, "127.0.0.2 is not in the SANs");

	/* NotBefore an hour back, NotAfter days ahead (generous margin for a slow run) */
	CHECK(labs(secs_from_now(X509_get0_notBefore(leaf)) + 3600) < 120, "leaf NotBefore %ld",
	      secs_from_now(X509_get0_notBefore(leaf)));
	CHECK(labs(secs_from_now(X509_get0_notAfter(leaf)) - days * 86400) < 120,
	      "leaf NotAfter %ld", secs_from_now(X509_get0_notAfter(leaf)));
	CHECK(labs(secs_from_now(X509_get0_notBefore(ca)) + 3600) < 120, "CA NotBefore");
	CHECK(ASN1_TIME_compare(X509_get0_notAfter(leaf), X509_get0_notAfter(ca)) <= 0,
	      "leaf outlives the CA");

	s1 = ASN1_INTEGER_to_BN(X509_get0_serialNumber(ca), NULL);
	s2 = ASN1_INTEGER_to_BN(X509_get0_serialNumber(leaf), NULL);
	CHECK(s1 && s2 && BN_num_bits(s1) == 127 && BN_num_bits(s2) == 127 && !BN_is_negative(s2),
	      "serials are not positive 127-bit numbers");
	CHECK(s1 && s2 && BN_cmp(s1, s2) != 0, "CA and leaf share a serial");

	CHECK(mode_of(dir, "ca.crt") == 0644, "ca.crt mode %o", mode_of(dir, "ca.crt"));
	CHECK(mode_of(dir, "tls.crt") == 0644, "tls.crt mode %o", mode_of(dir, "tls.crt"));
	CHECK(mode_of(dir, "tls.key") == 0600, "tls.key mode %o", mode_of(dir, "tls.key"));
	CHECK(dir_is_exact(dir), "%s holds other files than ca.crt, tls.crt, tls.key", dir);
out:
	BN_free(s1);
	BN_free(s2);
	X509_free(ca);
	X509_free(leaf);
	EVP_PKEY_free(key);
}

static const char *const base_sans =
    "DNS:webhook,DNS:webhook.distenv-system,DNS:webhook.distenv-system.svc,"
    "DNS:webhook.distenv-system.svc.cluster.local,DNS:localhost,IP:127.0.0.1";

static void test_generate(const char *tmp)
{
	struct certs_opts o;
	char dir[512], err[512], want[2048];
	X509 *first, *second;

	/* a nested directory that does not exist yet, with umask 0 */
	snprintf(dir, sizeof(dir), "%s/a/b/out", tmp);
	memset(&o, 0, sizeof(o));
	o.service = "webhook";
	o.namespace = "distenv-system";
	o.out_dir = dir;
	umask(0);
	CHECK(certs_generate(&o, err, sizeof(err)) == 0, "generate: %s", err);
	check_generated(dir, 365, base_sans);
	CHECK(mode_of(dir, NULL) == 0700, "out dir mode %o", mode_of(dir, NULL));
	first = read_cert(dir, "tls.crt");

	/* again over the same files, umask 077, extra names (one a duplicate), 30 days */
	umask(077);
	o.days = 30;
	o.dns[o.n_dns++] = "webhook.example.com";
	o.dns[o.n_dns++] = "*.apps.example.com";
	o.dns[o.n_dns++] = "localhost";
	o.ip[o.n_ip++] = "10.0.0.7";
	o.ip[o.n_ip++] = "::1";
	CHECK(certs_generate(&o, err, sizeof(err)) == 0, "regenerate: %s", err);
	snprintf(want, sizeof(want),
	         "%s,DNS:webhook.example.com,DNS:*.apps.example.com,IP:10.0.0.7,"
	         "IP6:0000..01",
	         base_sans);
	check_generated(dir, 30, want);
	second = read_cert(dir, "tls.crt");
	CHECK(first && second && X509_cmp(first, second) != 0,
	      "regenerate kept the old certificate");
	CHECK(X509_check_host(second, "x.apps.example.com", 0, 0, NULL) == 1, "wildcard SAN");
	CHECK(X509_check_ip_asc(second, "::1", 0) == 1, "IPv6 SAN");
	X509_free(first);
	X509_free(second);
	umask(022);
}

static void test_errors(const char *tmp)
{
	char file[512], dir[512], err[512];
	struct {
		const char *name, *service, *ns, *out, *dns, *ip;
		long days;
		const char *err_has;
	} cases[] = {
	    {"no service", NULL, "ns", dir, NULL, NULL, 0, "service '' is not a valid"},
	    {"bad service", "Web_hook", "ns", dir, NULL, NULL, 0, "service 'Web_hook'"},
	    {"long service", "a123456789012345678901234567890123456789012345678901234567890123",
	     "ns", dir, NULL, NULL, 0, "not a valid Service name"},
	    {"no namespace", "svc", NULL, dir, NULL, NULL, 0, "namespace '' is not"},
	    {"bad namespace", "svc", "ns.x", dir, NULL, NULL, 0, "namespace 'ns.x'"},
	    {"no out dir", "svc", "ns", NULL, NULL, NULL, 0, "an output directory is required"},
	    {"days negative", "svc", "ns", dir, NULL, NULL, -1, "days must be from 1 to 36500"},
	    {"days too many", "svc", "ns", dir, NULL, NULL, 36501, "got 36501"},
	    {"bad dns", "svc", "ns", dir, "a..b", NULL, 0, "'a..b' is not a valid DNS name"},
	    {"dns with comma", "svc", "ns", dir, "a,IP:1.2.3.4", NULL, 0, "not a valid DNS name"},
	    {"bad ip", "svc", "ns", dir, NULL, "300.1.1.1", 0, "'300.1.1.1' is not an IPv4"},
	    {"out is a file", "svc", "ns", file, NULL, NULL, 0, "is not a directory"},
	    {"out under a file", "svc", "ns", NULL, NULL, NULL, 0, "cannot create"},
	};
	char under[600];
	size_t i;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/errors", tmp);
	snprintf(file, sizeof(file), "%s/plainfile", tmp);
	snprintf(under, sizeof(under), "%s/sub", file);
	cases[sizeof(cases) / sizeof(cases[0]) - 1].out = under;
	if ((f = fopen(file, "w")))
		fclose(f);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct certs_opts o;
		memset(&o, 0, sizeof(o));
		o.service = cases[i].service;
		o.namespace = cases[i].ns;
		o.out_dir = cases[i].out;
		o.days = cases[i].days;
		if (cases[i].dns)
			o.dns[o.n_dns++] = cases[i].dns;
		if (cases[i].ip)
			o.ip[o.n_ip++] = cases[i].ip;
		err[0] = '\0';
		CHECK(certs_generate(&o, err, sizeof(err)) != 0, "%s: accepted", cases[i].name);
		CHECK(strstr(err, cases[i].err_has) != NULL, "%s: '%s' lacks '%s'", cases[i].name,
		      err, cases[i].err_has);
	}
	CHECK(access(dir, F_OK) != 0, "a rejected request created %s", dir);
	{
		struct certs_opts o;
		memset(&o, 0, sizeof(o));
		o.service = "svc";
		o.namespace = "ns";
		o.out_dir = dir;
		o.n_dns = CERTS_MAX_EXTRA + 1;
		CHECK(certs_generate(&o, err, sizeof(err)) != 0 && strstr(err, "at most 32"),
		      "33 names: %s", err);
	}
	unlink(file);
}

static void rm_tree(const char *tmp)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmp);
}

int main(void)
{
	char tmp[] = "/tmp/distenv-test-certs-XXXXXX";

	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	test_generate(tmp);
	test_errors(tmp);
	rm_tree(tmp);
	TEST_MAIN_END("certs");
}
