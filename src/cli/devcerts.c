/*
 * Development certificates with OpenSSL 3: an ECDSA P-256 CA and a serving
 * certificate signed by it, written as ca.crt, tls.crt (the leaf alone) and
 * tls.key. The CA key lives only in memory and is never written: rotating means
 * running `certs` again and updating the caBundle. Keys are freed by OpenSSL,
 * which clears them; the PEM text of the key is kept in the secure heap.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkostemp */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "devcerts.h"
#include "util.h"
#include "dns.h"

#define BACKDATE_SECONDS 3600
#define DEFAULT_DAYS     365
#define MAX_DAYS         36500

/* "what: <first OpenSSL error>" */
static void ssl_err(char *err, size_t errlen, const char *what)
{
	char buf[256];
	unsigned long e = ERR_get_error();

	if (e) {
		ERR_error_string_n(e, buf, sizeof(buf));
		errf(err, errlen, "%s: %s", what, buf);
	} else {
		errf(err, errlen, "%s", what);
	}
	ERR_clear_error();
}

/* A DNS name for a SAN: a subdomain, optionally with a leading "*." wildcard. */
static int san_dns_valid(const char *s)
{
	if (strncmp(s, "*.", 2) == 0)
		s += 2;
	return dns_subdomain_valid(s);
}

/* Creates dir and its missing parents with mode 0700; an existing dir is left alone. */
static int make_dirs(const char *dir, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct stat st;
	size_t i, n = strlen(dir);

	if (n == 0 || n >= sizeof(path)) {
		errf(err, errlen, "output directory name is empty or too long");
		return -1;
	}
	memcpy(path, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		path[i] = '\0';
		if (mkdir(path, 0700) != 0 && errno != EEXIST) {
			errf(err, errlen, "cannot create %s: %s", path, strerror(errno));
			return -1;
		}
		path[i] = i == n ? '\0' : '/';
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		errf(err, errlen, "%s is not a directory", dir);
		return -1;
	}
	return 0;
}

/*
 * Writes data to dir/name.tmp-XXXXXX with exactly mode (umask does not apply:
 * mkostemp creates 0600 or less, fchmod sets the mode), then syncs. The caller
 * renames it into place. Fills tmp with the temporary path.
 */
static int write_temp(const char *dir, const char *name, const void *data, size_t len, mode_t mode,
                      char *tmp, size_t tmplen, char *err, size_t errlen)
{
	const char *p = data;
	int fd;

	if (bounded_printf(tmp, tmplen, "%s/.%s.tmp-XXXXXX", dir, name) != 0) {
		errf(err, errlen, "output path too long");
		return -1;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		errf(err, errlen, "cannot create a file in %s: %s", dir, strerror(errno));
		return -1;
	}
	if (fchmod(fd, mode) != 0)
		goto fail;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		p += n;
		len -= (size_t)n;
	}
	if (fsync(fd) != 0)
		goto fail;
	if (close(fd) != 0) {
		fd = -1;
		goto fail;
	}
	return 0;
fail:
	errf(err, errlen, "cannot write %s/%s: %s", dir, name, strerror(errno));
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return -1;
}

static int rename_into(const char *tmp, const char *dir, const char *name, char *err, size_t errlen)
{
	char dst[PATH_MAX];

	if (bounded_printf(dst, sizeof(dst), "%s/%s", dir, name) != 0 || rename(tmp, dst) != 0) {
		errf(err, errlen, "cannot write %s/%s: %s", dir, name, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* PEM text of a certificate or (secure=1) a private key. Returns a BIO to read it from. */
static BIO *pem_of(X509 *cert, EVP_PKEY *key)
{
	BIO *b = BIO_new(key ? BIO_s_secmem() : BIO_s_mem());

	if (!b)
		return NULL;
	if (cert && !PEM_write_bio_X509(b, cert))
		goto fail;
	if (key && !PEM_write_bio_PrivateKey(b, key, NULL, NULL, 0, NULL, NULL))
		goto fail;
	return b;
fail:
	BIO_free(b);
	return NULL;
}

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!ext)
		return 0;
	ok = X509_add_ext(cert, ext, -1);
	X509_EXTENSION_free(ext);
	return ok;
}

/* A positive random 127-bit serial (RFC 5280: at most 20 octets, positive). */
static int set_serial(X509 *cert)
{
	unsigned char buf[16];
	BIGNUM *bn;
	int ok = 0;

	if (RAND_bytes(buf, sizeof(buf)) != 1)
		return 0;
	buf[0] = (unsigned char)((buf[0] & 0x7f) | 0x40);
	bn = BN_bin2bn(buf, sizeof(buf), NULL);
	if (bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)))
		ok = 1;
	BN_free(bn);
	return ok;
}

static X509 *new_cert(EVP_PKEY *key, const char *cn, time_t now, long days)
{
	X509 *cert = X509_new();
	X509_NAME *name;

	if (!cert)
		return NULL;
	name = X509_get_subject_name(cert);
	if (!X509_set_version(cert, X509_VERSION_3) || !set_serial(cert) ||
	    !ASN1_TIME_adj(X509_getm_notBefore(cert), now, 0, -BACKDATE_SECONDS) ||
	    !ASN1_TIME_adj(X509_getm_notAfter(cert), now, (int)days, 0) ||
	    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1,
	                                -1, 0) ||
	    !X509_set_pubkey(cert, key)) {
		X509_free(cert);
		return NULL;
	}
	return cert;
}

static int add_name(GENERAL_NAMES *gens, int type, const unsigned char *data, int len)
{
	GENERAL_NAME *gn = GENERAL_NAME_new();
	ASN1_STRING *s = type == GEN_IPADD ? ASN1_OCTET_STRING_new() : ASN1_IA5STRING_new();
	int i;

	if (!gn || !s || !ASN1_STRING_set(s, data, len))
		goto fail;
	/* skip a name that is already there */
	for (i = 0; i < sk_GENERAL_NAME_num(gens); i++) {
		const GENERAL_NAME *o = sk_GENERAL_NAME_value(gens, i);
		if (o->type == type && ASN1_STRING_cmp(o->d.ia5, s) == 0) {
			ASN1_STRING_free(s);
			GENERAL_NAME_free(gn);
			return 1;
		}
	}
	GENERAL_NAME_set0_value(gn, type, s);
	if (!sk_GENERAL_NAME_push(gens, gn)) {
		GENERAL_NAME_free(gn);
		return 0;
	}
	return 1;
fail:
	ASN1_STRING_free(s);
	GENERAL_NAME_free(gn);
	return 0;
}

static int add_dns(GENERAL_NAMES *gens, const char *name)
{
	return add_name(gens, GEN_DNS, (const unsigned char *)name, (int)strlen(name));
}

static int add_ip(GENERAL_NAMES *gens, const char *ip)
{
	unsigned char addr[16];

	if (inet_pton(AF_INET, ip, addr) == 1)
		return add_name(gens, GEN_IPADD, addr, 4);
	if (inet_pton(AF_INET6, ip, addr) == 1)
		return add_name(gens, GEN_IPADD, addr, 16);
	return 0;
}

/* The SANs `certs --help` lists, in order, then --dns and --ip. Returns 0 or -1. */
static int add_sans(X509 *cert, const struct certs_opts *o)
{
	GENERAL_NAMES *gens = sk_GENERAL_NAME_new_null();
	char name[512];
	int i, ok = 0;

	if (!gens)
		return -1;
	snprintf(name, sizeof(name), "%s", o->service);
	if (!add_dns(gens, name))
		goto out;
	snprintf(name, sizeof(name), "%s.%s", o->service, o->namespace);
	if (!add_dns(gens, name))
		goto out;
	snprintf(name, sizeof(name), "%s.%s.svc", o->service, o->namespace);
	if (!add_dns(gens, name))
		goto out;
	snprintf(name, sizeof(name), "%s.%s.svc.cluster.local", o->service, o->namespace);
	if (!add_dns(gens, name) || !add_dns(gens, "localhost") || !add_ip(gens, "127.0.0.1"))
		goto out;
	for (i = 0; i < o->n_dns; i++)
		if (!add_dns(gens, o->dns[i]))
			goto out;
	for (i = 0; i < o->n_ip; i++)
		if (!add_ip(gens, o->ip[i]))
			goto out;
	ok = X509_add1_ext_i2d(cert, NID_subject_alt_name, gens, 0, X509V3_ADD_DEFAULT) == 1;
out:
	GENERAL_NAMES_free(gens);
	return ok ? 0 : -1;
}

static int check_opts(const struct certs_opts *o, long *days, char *err, size_t errlen)
{
	unsigned char addr[16];
	int i;

	if (!o->service || !dns_label_valid(o->service)) {
		errf(err, errlen, "service '%s' is not a valid Service name (DNS label)",
		     o->service ? o->service : "");
		return -1;
	}
	if (!o->namespace || !dns_label_valid(o->namespace)) {
		errf(err, errlen, "namespace '%s' is not a valid namespace (DNS label)",
		     o->namespace ? o->namespace : "");
		return -1;
	}
	if (!o->out_dir || !o->out_dir[0]) {
		errf(err, errlen, "an output directory is required");
		return -1;
	}
	*days = o->days == 0 ? DEFAULT_DAYS : o->days;
	if (*days < 1 || *days > MAX_DAYS) {
		errf(err, errlen, "days must be from 1 to %d, got %ld", MAX_DAYS, o->days);
		return -1;
	}
	if (o->n_dns < 0 || o->n_dns > CERTS_MAX_EXTRA || o->n_ip < 0 ||
	    o->n_ip > CERTS_MAX_EXTRA) {
		errf(err, errlen, "at most %d extra DNS names and %d extra IP addresses",
		     CERTS_MAX_EXTRA, CERTS_MAX_EXTRA);
		return -1;
	}
	for (i = 0; i < o->n_dns; i++) {
		if (!o->dns[i] || !san_dns_valid(o->dns[i])) {
			errf(err, errlen, "'%s' is not a valid DNS name",
			     o->dns[i] ? o->dns[i] : "");
			return -1;
		}
	}
	for (i = 0; i < o->n_ip; i++) {
		if (!o->ip[i] || (inet_pton(AF_INET, o->ip[i], addr) != 1 &&
		                  inet_pton(AF_INET6, o->ip[i], addr) != 1)) {
			errf(err, errlen, "'%s' is not an IPv4 or IPv6 address",
			     o->ip[i] ? o->ip[i] : "");
			return -1;
		}
	}
	return 0;
}

/*
 * The self-signed CA: its key into *ca_key and its certificate into *ca, each
 * set as soon as made; the caller frees both, on failure too. Returns 0 or -1.
 */
static int make_ca(const struct certs_opts *opts, time_t now, long days, EVP_PKEY **ca_key,
                   X509 **ca, char *err, size_t errlen)
{
	char cn[256];

	if (!(*ca_key = EVP_EC_gen("P-256"))) {
		ssl_err(err, errlen, "cannot generate the CA key");
		return -1;
	}
	snprintf(cn, sizeof(cn), "distenv-webhook CA (%s.%s)", opts->service, opts->namespace);
	if (!(*ca = new_cert(*ca_key, cn, now, days)) ||
	    !X509_set_issuer_name(*ca, X509_get_subject_name(*ca)) ||
	    !add_ext(*ca, *ca, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
	    !add_ext(*ca, *ca, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature") ||
	    !add_ext(*ca, *ca, NID_subject_key_identifier, "hash") ||
	    !add_ext(*ca, *ca, NID_authority_key_identifier, "keyid:always") ||
	    !X509_sign(*ca, *ca_key, EVP_sha256())) {
		ssl_err(err, errlen, "cannot make the CA certificate");
		return -1;
	}
	return 0;
}

/*
 * The serving certificate, signed by ca: its key into *key and its
 * certificate into *leaf, each set as soon as made; the caller frees both, on
 * failure too. Returns 0 or -1.
 */
static int make_leaf(const struct certs_opts *opts, time_t now, long days, X509 *ca,
                     EVP_PKEY *ca_key, EVP_PKEY **key, X509 **leaf, char *err, size_t errlen)
{
	char cn[256];

	if (!(*key = EVP_EC_gen("P-256"))) {
		ssl_err(err, errlen, "cannot generate the serving key");
		return -1;
	}
	snprintf(cn, sizeof(cn), "%s.%s.svc", opts->service, opts->namespace);
	if (!(*leaf = new_cert(*key, cn, now, days)) ||
	    !X509_set_issuer_name(*leaf, X509_get_subject_name(ca)) ||
	    !add_ext(*leaf, ca, NID_basic_constraints, "critical,CA:FALSE") ||
	    !add_ext(*leaf, ca, NID_key_usage, "critical,digitalSignature") ||
	    !add_ext(*leaf, ca, NID_ext_key_usage, "serverAuth") ||
	    !add_ext(*leaf, ca, NID_subject_key_identifier, "hash") ||
	    !add_ext(*leaf, ca, NID_authority_key_identifier, "keyid:always") ||
	    add_sans(*leaf, opts) < 0 || !X509_sign(*leaf, ca_key, EVP_sha256())) {
		ssl_err(err, errlen, "cannot make the serving certificate");
		return -1;
	}
	return 0;
}

/*
 * ca.crt, tls.crt and tls.key in dir, as PEM. All three are written before any
 * is renamed, key and certificate back to back; a temporary file left by a
 * failure is removed. Returns 0 or -1.
 */
static int write_files(const char *dir, X509 *ca, X509 *leaf, EVP_PKEY *key, char *err,
                       size_t errlen)
{
	BIO *ca_pem = NULL, *leaf_pem = NULL, *key_pem = NULL;
	char tmp_ca[PATH_MAX] = "", tmp_crt[PATH_MAX] = "", tmp_key[PATH_MAX] = "";
	char *data;
	long n;
	int rc = -1;

	if (!(ca_pem = pem_of(ca, NULL)) || !(leaf_pem = pem_of(leaf, NULL)) ||
	    !(key_pem = pem_of(NULL, key))) {
		ssl_err(err, errlen, "cannot encode PEM");
		goto out;
	}
	if (make_dirs(dir, err, errlen) < 0)
		goto out;
	n = BIO_get_mem_data(ca_pem, &data);
	if (write_temp(dir, "ca.crt", data, (size_t)n, 0644, tmp_ca, sizeof(tmp_ca), err, errlen) <
	    0)
		goto out;
	n = BIO_get_mem_data(leaf_pem, &data);
	if (write_temp(dir, "tls.crt", data, (size_t)n, 0644, tmp_crt, sizeof(tmp_crt), err,
	               errlen) < 0)
		goto out;
	n = BIO_get_mem_data(key_pem, &data);
	if (write_temp(dir, "tls.key", data, (size_t)n, 0600, tmp_key, sizeof(tmp_key), err,
	               errlen) < 0)
		goto out;
	if (rename_into(tmp_ca, dir, "ca.crt", err, errlen) < 0) {
		tmp_ca[0] = '\0';
		goto out;
	}
	tmp_ca[0] = '\0';
	if (rename_into(tmp_key, dir, "tls.key", err, errlen) < 0) {
		tmp_key[0] = '\0';
		goto out;
	}
	tmp_key[0] = '\0';
	if (rename_into(tmp_crt, dir, "tls.crt", err, errlen) < 0) {
		tmp_crt[0] = '\0';
		goto out;
	}
	tmp_crt[0] = '\0';
	rc = 0;
out:
	if (tmp_ca[0])
		unlink(tmp_ca);
	if (tmp_crt[0])
		unlink(tmp_crt);
	if (tmp_key[0])
		unlink(tmp_key);
	BIO_free(ca_pem);
	BIO_free(leaf_pem);
	BIO_free(key_pem); /* secure memory BIO: cleared on free */
	return rc;
}

int certs_generate(const struct certs_opts *opts, char *err, size_t errlen)
{
	EVP_PKEY *ca_key = NULL, *key = NULL;
	X509 *ca = NULL, *leaf = NULL;
	long days;
	time_t now = time(NULL);
	int rc = -1;

	if (errlen)
		err[0] = '\0';
	if (check_opts(opts, &days, err, errlen) < 0)
		return -1;
	ERR_clear_error();

	if (make_ca(opts, now, days, &ca_key, &ca, err, errlen) < 0 ||
	    make_leaf(opts, now, days, ca, ca_key, &key, &leaf, err, errlen) < 0 ||
	    write_files(opts->out_dir, ca, leaf, key, err, errlen) < 0)
		goto out;
	rc = 0;
out:
	X509_free(ca);
	X509_free(leaf);
	EVP_PKEY_free(ca_key); /* OpenSSL clears private key material on free */
	EVP_PKEY_free(key);
	return rc;
}
