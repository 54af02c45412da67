/*
 * Certificate holders and the store that swaps them: tlscert_load reads and
 * checks a pair into a reference-counted holder; the store owns one reference
 * to the current holder and a watcher thread that stats the two files every
 * interval and installs a new holder when they changed and load cleanly (a
 * bad pair is logged and the old one kept).
 */
#include "tlscert.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <gnutls/x509.h>

#include "log.h"
#include "metrics.h"
#include "util.h"
#include "file.h"

#define PEM_MAX_BYTES (1024 * 1024)

/* What the watcher last saw of a file (stat follows symlinks). */
struct file_sig {
	int err; /* errno of a failed stat, 0 when st is valid */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

struct tlscert_store {
	const char *cert_path, *key_path; /* borrowed: they outlive the store */
	long interval_s;

	pthread_mutex_t lock; /* guards current */
	struct tlscert *current;

	pthread_t watcher;
	int watcher_running;
	pthread_mutex_t watch_lock;
	pthread_cond_t watch_cond; /* CLOCK_MONOTONIC */
	int watch_stop;
	int watch_poke; /* a check was asked for: read the pair whatever the files look like */
	int failing;    /* the last pair tried was not installed: try again each interval */
	char last_err[512];
	struct file_sig sig_cert, sig_key;
};

void tlscert_release(struct tlscert *h)
{
	unsigned i;

	if (h == NULL || atomic_fetch_sub(&h->refs, 1) != 1)
		return;
	for (i = 0; i < h->n_pcerts; i++)
		gnutls_pcert_deinit(&h->pcerts[i]);
	if (h->key != NULL)
		gnutls_privkey_deinit(h->key); /* the key material is zeroed by GnuTLS */
	free(h);
}

/* Reads a non-empty PEM file of at most PEM_MAX_BYTES. Returns 0 or -1 with err. */
static int read_pem(const char *path, unsigned char **out, size_t *outlen, char *err, size_t errlen)
{
	char *buf = file_read(path, PEM_MAX_BYTES, outlen, err, errlen);

	if (buf == NULL)
		return -1;
	if (*outlen == 0) {
		snprintf(err, errlen, "%s is empty", path);
		free(buf);
		return -1;
	}
	*out = (unsigned char *)buf;
	return 0;
}

/* SHA-256 key id of a public key, for the key/certificate match. */
static int pubkey_id(gnutls_pubkey_t pk, unsigned char *id, size_t *idlen)
{
	return gnutls_pubkey_get_key_id(pk, GNUTLS_KEYID_USE_SHA256, id, idlen);
}
void tlscert_format_time(time_t t, char *out, size_t outlen)
{
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL || strftime(out, outlen, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(out, outlen, "%lld", (long long)t);
}

/*
 * Loads the PEM chain and key, checks that the key belongs to the leaf, and
 * returns a holder with one reference (the caller's), or NULL with err. Never
 * logs key bytes; the key's PEM text is wiped.
 */
static struct tlscert *tlscert_load(const char *cert_path, const char *key_path, char *err,
                                    size_t errlen)
{
	struct tlscert *h = NULL, *ret = NULL;
	unsigned char *cert_pem = NULL, *key_pem = NULL;
	size_t cert_len = 0, key_len = 0, idlen_a, idlen_b;
	unsigned char id_a[64], id_b[64], fp[32];
	size_t fplen = sizeof(fp);
	gnutls_datum_t d;
	gnutls_pubkey_t kpub = NULL;
	gnutls_x509_crt_t crt = NULL;
	unsigned i;
	int r;

	if (read_pem(cert_path, &cert_pem, &cert_len, err, errlen) != 0)
		goto out;
	if (read_pem(key_path, &key_pem, &key_len, err, errlen) != 0)
		goto out;
	h = calloc(1, sizeof(*h));
	if (h == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	atomic_init(&h->refs, 1);

	d.data = cert_pem;
	d.size = (unsigned)cert_len;
	h->n_pcerts = TLSCERT_CHAIN_MAX;
	r = gnutls_pcert_list_import_x509_raw(h->pcerts, &h->n_pcerts, &d, GNUTLS_X509_FMT_PEM, 0);
	if (r < 0 || h->n_pcerts == 0) {
		h->n_pcerts = 0;
		snprintf(err, errlen, "%s: no usable PEM certificate: %s", cert_path,
		         gnutls_strerror(r));
		goto out;
	}

	d.data = key_pem;
	d.size = (unsigned)key_len;
	if ((r = gnutls_privkey_init(&h->key)) < 0 ||
	    (r = gnutls_privkey_import_x509_raw(h->key, &d, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
		snprintf(err, errlen, "%s: no usable PEM private key: %s", key_path,
		         gnutls_strerror(r));
		goto out;
	}

	/* The key must be the leaf's: compare the two public keys' ids. */
	idlen_a = sizeof(id_a);
	idlen_b = sizeof(id_b);
	if (gnutls_pubkey_init(&kpub) < 0 || gnutls_pubkey_import_privkey(kpub, h->key, 0, 0) < 0 ||
	    pubkey_id(kpub, id_a, &idlen_a) < 0 ||
	    pubkey_id(h->pcerts[0].pubkey, id_b, &idlen_b) < 0) {
		snprintf(err, errlen, "cannot compare %s with %s", key_path, cert_path);
		goto out;
	}
	if (idlen_a != idlen_b || memcmp(id_a, id_b, idlen_a) != 0) {
		snprintf(err, errlen, "%s does not match the certificate in %s", key_path,
		         cert_path);
		goto out;
	}

	if (gnutls_pcert_export_x509(&h->pcerts[0], &crt) < 0) {
		snprintf(err, errlen, "%s: cannot read the leaf certificate", cert_path);
		goto out;
	}
	h->not_after = gnutls_x509_crt_get_expiration_time(crt);
	h->not_before = gnutls_x509_crt_get_activation_time(crt);
	if (h->not_after == (time_t)-1 || h->not_before == (time_t)-1) {
		snprintf(err, errlen, "%s: certificate has no validity period", cert_path);
		goto out;
	}
	if (gnutls_x509_crt_get_fingerprint(crt, GNUTLS_DIG_SHA256, fp, &fplen) < 0)
		fplen = 0;
	for (i = 0; i < fplen && i < 32; i++)
		snprintf(h->fingerprint + 2 * i, 3, "%02x", fp[i]);
	ret = h;
	h = NULL;
out:
	if (crt != NULL)
		gnutls_x509_crt_deinit(crt);
	if (kpub != NULL)
		gnutls_pubkey_deinit(kpub);
	if (key_pem != NULL) {
		explicit_bzero(key_pem, key_len);
		free(key_pem);
	}
	free(cert_pem);
	if (h != NULL) {
		atomic_store(&h->refs, 1);
		tlscert_release(h);
	}
	return ret;
}

static void file_stat(const char *path, struct file_sig *sig)
{
	struct stat st;

	memset(sig, 0, sizeof(*sig));
	if (stat(path, &st) != 0) { /* stat, not lstat: Secret volumes swap a ..data symlink */
		sig->err = errno ? errno : EIO;
		return;
	}
	sig->dev = st.st_dev;
	sig->ino = st.st_ino;
	sig->size = st.st_size;
	sig->mtime = st.st_mtim;
}

static int sig_equal(const struct file_sig *a, const struct file_sig *b)
{
	return a->err == b->err && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* Makes h current (taking over its reference) and drops the old one's store reference. */
static void store_install(struct tlscert_store *st, struct tlscert *h)
{
	struct tlscert *old;

	pthread_mutex_lock(&st->lock);
	old = st->current;
	st->current = h;
	pthread_mutex_unlock(&st->lock);
	tlscert_release(old); /* freed now, or when its last connection closes */
	metrics_cert_expiry(h->not_after);
}

/* Why h cannot be used at now, or NULL when it can. */
static const char *validity_problem(const struct tlscert *h, time_t now)
{
	if (now < h->not_before)
		return "not yet valid";
	if (now > h->not_after)
		return "expired";
	return NULL;
}

/*
 * A pair that was not installed: counted each time; logged at warn when the
 * reason changes (every interval would flood the log), else at debug.
 */
static void store_refuse(struct tlscert_store *s, const char *event, const char *err)
{
	int same = s->failing && strcmp(s->last_err, err) == 0;

	metrics_cert_reload(0);
	s->failing = 1;
	snprintf(s->last_err, sizeof(s->last_err), "%s", err);
	log_kv(same ? LOG_DEBUG : LOG_WARN, event, "cert", s->cert_path, "key", s->key_path,
	       "error", err, "action", "keeping the certificate in use, trying again each interval",
	       LOG_END);
}

/*
 * One check: when either file changed since the last look, when the last
 * pair was not installed, or when forced, try the pair.
 */
static void store_check(struct tlscert_store *s, int force)
{
	struct file_sig sc, sk;
	struct tlscert *h, *cur;
	char err[512], when[64];
	const char *bad, *cur_bad;
	time_t now;

	/* stat before reading: a change during the read shows up as a change next time. */
	file_stat(s->cert_path, &sc);
	file_stat(s->key_path, &sk);
	if (!force && !s->failing && sig_equal(&sc, &s->sig_cert) && sig_equal(&sk, &s->sig_key))
		return;
	s->sig_cert = sc;
	s->sig_key = sk;
	err[0] = '\0';
	h = tlscert_load(s->cert_path, s->key_path, err, sizeof(err));
	if (h == NULL) {
		store_refuse(s, "certificate_reload_failed", err);
		return;
	}
	now = time(NULL);
	if ((bad = validity_problem(h, now)) != NULL) {
		/* Never trade a valid pair for one that clients will refuse. */
		cur = tlscert_store_acquire(s);
		cur_bad = cur != NULL ? validity_problem(cur, now) : "none";
		tlscert_release(cur);
		if (cur_bad == NULL) {
			tlscert_format_time(strcmp(bad, "expired") == 0 ? h->not_after
			                                                : h->not_before,
			                    when, sizeof(when));
			snprintf(err, sizeof(err), "%s: certificate %s (%s %s)", s->cert_path, bad,
			         strcmp(bad, "expired") == 0 ? "not after" : "not before", when);
			tlscert_release(h);
			store_refuse(s, "certificate_rejected", err);
			return;
		}
		log_kv(LOG_WARN, "certificate_invalid", "cert", s->cert_path, "error", bad,
		       "action", "installed: the certificate in use is not valid either", LOG_END);
	}
	s->failing = 0;
	s->last_err[0] = '\0';
	tlscert_format_time(h->not_after, when, sizeof(when));
	log_kv(LOG_INFO, "certificate_reloaded", "cert", s->cert_path, "sha256", h->fingerprint,
	       "not_after", when, LOG_END);
	store_install(s, h);
	metrics_cert_reload(1);
}

static void *watcher_main(void *arg)
{
	struct tlscert_store *s = arg;
	struct timespec deadline;
	int force;

	pthread_mutex_lock(&s->watch_lock);
	while (!s->watch_stop) {
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_sec += s->interval_s;
		while (!s->watch_stop && !s->watch_poke &&
		       pthread_cond_timedwait(&s->watch_cond, &s->watch_lock, &deadline) == 0)
			;
		if (s->watch_stop)
			break;
		force = s->watch_poke;
		s->watch_poke = 0;
		pthread_mutex_unlock(&s->watch_lock);
		if (force)
			log_kv(LOG_INFO, "certificate_check", "reason", "SIGHUP", "cert",
			       s->cert_path, LOG_END);
		store_check(s, force);
		pthread_mutex_lock(&s->watch_lock);
	}
	pthread_mutex_unlock(&s->watch_lock);
	return NULL;
}

struct tlscert_store *tlscert_store_new(const char *cert_path, const char *key_path,
                                        long interval_s, char *err, size_t errlen)
{
	struct tlscert_store *st = calloc(1, sizeof(*st));
	pthread_condattr_t ca;
	struct tlscert *h;

	if (st == NULL) {
		errf(err, errlen, "out of memory");
		return NULL;
	}
	st->cert_path = cert_path;
	st->key_path = key_path;
	st->interval_s = interval_s > 0 ? interval_s : 5;
	pthread_mutex_init(&st->lock, NULL);
	pthread_mutex_init(&st->watch_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&st->watch_cond, &ca);
	pthread_condattr_destroy(&ca);
	file_stat(cert_path, &st->sig_cert);
	file_stat(key_path, &st->sig_key);
	if ((h = tlscert_load(cert_path, key_path, err, errlen)) == NULL) {
		tlscert_store_free(st);
		return NULL;
	}
	store_install(st, h);
	return st;
}

struct tlscert *tlscert_store_acquire(struct tlscert_store *st)
{
	struct tlscert *h;

	pthread_mutex_lock(&st->lock);
	h = st->current;
	if (h != NULL)
		atomic_fetch_add(&h->refs, 1);
	pthread_mutex_unlock(&st->lock);
	return h;
}

int tlscert_store_watch(struct tlscert_store *st)
{
	if (pthread_create(&st->watcher, NULL, watcher_main, st) != 0)
		return -1;
	st->watcher_running = 1;
	return 0;
}

void tlscert_store_poke(struct tlscert_store *st)
{
	pthread_mutex_lock(&st->watch_lock);
	st->watch_poke = 1;
	pthread_cond_signal(&st->watch_cond);
	pthread_mutex_unlock(&st->watch_lock);
}

void tlscert_store_unwatch(struct tlscert_store *st)
{
	if (!st->watcher_running)
		return;
	pthread_mutex_lock(&st->watch_lock);
	st->watch_stop = 1;
	pthread_cond_signal(&st->watch_cond);
	pthread_mutex_unlock(&st->watch_lock);
	pthread_join(st->watcher, NULL);
	st->watcher_running = 0;
}

void tlscert_store_free(struct tlscert_store *st)
{
	struct tlscert *h;

	if (st == NULL)
		return;
	tlscert_store_unwatch(st);
	pthread_mutex_lock(&st->lock);
	h = st->current;
	st->current = NULL;
	pthread_mutex_unlock(&st->lock);
	tlscert_release(h);
	pthread_cond_destroy(&st->watch_cond);
	pthread_mutex_destroy(&st->watch_lock);
	pthread_mutex_destroy(&st->lock);
	free(st);
}
