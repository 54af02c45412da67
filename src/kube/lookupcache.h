/*
 * A cache of workload look-up answers in front of any struct workload_lookup:
 * answers are kept for a TTL (and fetched again before it ends while used)
 * under kind/namespace/name/owner uid, at most a fixed number of them (the
 * oldest goes first), and concurrent misses of one key wait for a single call
 * of the inner look-up. Failures are never kept.
 * The cache owns its entries; lookup_cache_free releases them.
 */
#ifndef DISTENV_LOOKUPCACHE_H
#define DISTENV_LOOKUPCACHE_H

#include <stddef.h>
#include "workload.h"

struct lookup_cache;

struct lookup_cache_opts {
	long ttl_ms;      /* how long an answer is served */
	long max_entries; /* at most this many answers; <= 0 or ttl_ms <= 0: no caching */
	long wait_ms;     /* how long a miss waits for the same key's call in flight */
	/* The clock of the TTL in milliseconds; NULL: CLOCK_MONOTONIC (tests pass their own). */
	long long (*now_ms)(void);
};

/*
 * A cache in front of inner (copied; inner.ctx must outlive the cache).
 * Returns NULL with err when memory ran out. Free with lookup_cache_free.
 */
struct lookup_cache *lookup_cache_new(const struct workload_lookup *inner,
                                      const struct lookup_cache_opts *opts, char *err,
                                      size_t errlen);

/* Frees the cache and its entries (not inner). NULL is fine. */
void lookup_cache_free(struct lookup_cache *c);

/*
 * struct workload_lookup's get with ctx the cache: a hit fills out with
 * out->cached = 1; a miss calls the inner look-up (one call per key at a
 * time: other misses of the key wait up to wait_ms for it, then look again)
 * and keeps a successful answer whose uid matches ref->uid (or any answer when
 * ref->uid is unset). fresh = 1 skips the cache and replaces the entry when
 * the inner call succeeds. Refresh ahead: from ttl_ms - min(ttl_ms / 2,
 * wait_ms) after it was kept, the first look-up of a key calls the inner
 * look-up again while the others get the entry (live until ttl_ms, never
 * longer); when that call fails, it gets the entry too if still live. An answer
 * for another uid drops the entry of ref->uid. Thread-safe. Returns what the
 * inner look-up returns.
 */
int lookup_cache_get(void *cache, const struct workload_ref *ref, int fresh,
                     struct workload_spec *out, char *err, size_t errlen);

/* lookup_cache_get with another inner look-up for this call (one that carries per-call state). */
int lookup_cache_get_via(struct lookup_cache *c, const struct workload_lookup *inner,
                         const struct workload_ref *ref, int fresh, struct workload_spec *out,
                         char *err, size_t errlen);

/* The number of answers held (tests, metrics). */
long lookup_cache_count(struct lookup_cache *c);

#endif
