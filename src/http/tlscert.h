/*
 * The serving certificate: reference-counted holders of a PEM chain and its
 * key (GnuTLS), and a store that keeps the current holder and a watcher
 * thread that swaps in a new pair when the files change. Every TLS connection
 * keeps the holder its handshake used until it closes; a holder is freed when
 * its last reference goes.
 */
#ifndef DISTENV_TLSCERT_H
#define DISTENV_TLSCERT_H

#include <stdatomic.h>
#include <stddef.h>
#include <time.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>

#define TLSCERT_CHAIN_MAX 16

/* One certificate chain and its key. Read-only after tlscert_load, except refs. */
struct tlscert {
	atomic_int refs;
	gnutls_pcert_st pcerts[TLSCERT_CHAIN_MAX];
	unsigned n_pcerts;
	gnutls_privkey_t key;
	time_t not_before;
	time_t not_after;
	char fingerprint[65]; /* SHA-256 of the leaf, hex */
};

/* Drops one reference; the last one frees the holder. NULL is fine. */
void tlscert_release(struct tlscert *c);

/* t as "YYYY-MM-DDTHH:MM:SSZ" (UTC). */
void tlscert_format_time(time_t t, char *out, size_t outlen);

struct tlscert_store;

/*
 * Loads the first pair (it must be good: there is nothing to fall back to)
 * and makes it current. Returns a store (free with tlscert_store_free), or
 * NULL with err. interval_s (<= 0: 5) is how often the watcher looks.
 */
struct tlscert_store *tlscert_store_new(const char *cert_path, const char *key_path,
                                        long interval_s, char *err, size_t errlen);

/* The current holder with one more reference (the caller releases it), or NULL. */
struct tlscert *tlscert_store_acquire(struct tlscert_store *st);

/* Starts the watcher thread. Returns 0, or -1 when the thread cannot start. */
int tlscert_store_watch(struct tlscert_store *st) __attribute__((warn_unused_result));

/*
 * Asks the watcher for a check now (SIGHUP): the pair is read again even when
 * the files look unchanged. Returns at once; the check runs on the watcher.
 */
void tlscert_store_poke(struct tlscert_store *st);

/* Stops the watcher thread (if it runs) and waits for it. */
void tlscert_store_unwatch(struct tlscert_store *st);

/* Stops the watcher, drops the current holder's store reference and frees st. NULL is fine. */
void tlscert_store_free(struct tlscert_store *st);

#endif
