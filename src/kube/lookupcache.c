/*
 * The look-up cache: a hash table of answers with an insertion-ordered list
 * for eviction and expiry, and a list of the keys being fetched so that a
 * burst of misses for one workload makes one inner call. Entries are owned by
 * the cache; the inner look-up is borrowed.
 *
 * Refresh ahead: an entry is served for ttl_ms and no longer. From its
 * refresh time (ttl_ms less the smaller of ttl_ms / 2 and wait_ms, the
 * look-up deadline) the first look-up of its key fetches it again while every
 * other look-up of the key keeps getting the entry, so that in a burst longer
 * than the TTL the admissions of one workload do not all wait for one GET when
 * the entry expires. No answer is served older than ttl_ms, as before.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lookupcache.h"
#include "kind.h"
#include "util.h"
#include "mono.h"

#define KEY_MAX     400
#define BUCKETS_MAX 65536

struct cache_entry {
	struct cache_entry *hnext;         /* hash chain */
	struct cache_entry *older, *newer; /* insertion order: oldest goes first */
	long long expires_ms;
	long long refresh_ms; /* from here on the next look-up fetches it again */
	struct workload_spec spec;
	char key[KEY_MAX];
};

/* A look-up in progress: others asking for the same key wait for it (one call per burst). */
struct inflight {
	struct inflight *next;
	const char *key;
};

struct lookup_cache {
	struct workload_lookup inner;
	long ttl_ms, max_entries, wait_ms;
	long refresh_margin_ms; /* an entry is refreshed this long before it expires */
	long long (*now_ms)(void);

	pthread_mutex_t lock; /* guards everything below */
	pthread_cond_t inflight_done;
	struct inflight *inflight;
	struct cache_entry **buckets;
	size_t n_buckets;
	struct cache_entry *oldest, *newest;
	long n_entries;
};

struct lookup_cache *lookup_cache_new(const struct workload_lookup *inner,
                                      const struct lookup_cache_opts *opts, char *err,
                                      size_t errlen)
{
	struct lookup_cache *c = calloc(1, sizeof(*c));
	pthread_condattr_t ca;
	size_t nb = 1;

	if (!c) {
		errf(err, errlen, "out of memory");
		return NULL;
	}
	c->inner = *inner;
	c->ttl_ms = opts->ttl_ms;
	c->max_entries = opts->ttl_ms > 0 && opts->max_entries > 0 ? opts->max_entries : 0;
	c->wait_ms = opts->wait_ms;
	c->refresh_margin_ms = opts->wait_ms < opts->ttl_ms / 2 ? opts->wait_ms : opts->ttl_ms / 2;
	if (c->refresh_margin_ms < 0)
		c->refresh_margin_ms = 0;
	c->now_ms = opts->now_ms ? opts->now_ms : mono_ms;
	pthread_mutex_init(&c->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->inflight_done, &ca);
	pthread_condattr_destroy(&ca);
	while (nb < (size_t)c->max_entries && nb < BUCKETS_MAX)
		nb <<= 1;
	c->n_buckets = nb;
	if (!(c->buckets = calloc(nb, sizeof(*c->buckets)))) {
		errf(err, errlen, "out of memory");
		lookup_cache_free(c);
		return NULL;
	}
	return c;
}

void lookup_cache_free(struct lookup_cache *c)
{
	struct cache_entry *e, *next;

	if (!c)
		return;
	for (e = c->oldest; e; e = next) {
		next = e->newer;
		free(e);
	}
	free(c->buckets);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->inflight_done);
	free(c);
}

long lookup_cache_count(struct lookup_cache *c)
{
	long n;

	pthread_mutex_lock(&c->lock);
	n = c->n_entries;
	pthread_mutex_unlock(&c->lock);
	return n;
}

static size_t key_hash(const char *s)
{
	size_t h = (size_t)1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * (size_t)1099511628211ULL;
	return h;
}

static void cache_unlink(struct lookup_cache *c, struct cache_entry *e)
{
	struct cache_entry **pp = &c->buckets[key_hash(e->key) & (c->n_buckets - 1)];

	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = e->hnext;
	if (e->older)
		e->older->newer = e->newer;
	else
		c->oldest = e->newer;
	if (e->newer)
		e->newer->older = e->older;
	else
		c->newest = e->older;
	c->n_entries--;
	free(e);
}

static struct cache_entry *cache_find(struct lookup_cache *c, const char *key)
{
	struct cache_entry *e = c->buckets[key_hash(key) & (c->n_buckets - 1)];

	while (e && strcmp(e->key, key) != 0)
		e = e->hnext;
	return e;
}

/*
 * 0: no live entry; 1: *out from the entry; 2: *out from an entry due for its
 * refresh, which expires at *expires_ms.
 */
static int cache_lookup_locked(struct lookup_cache *c, const char *key, struct workload_spec *out,
                               long long *expires_ms)
{
	struct cache_entry *e = cache_find(c, key);
	long long now = c->now_ms();

	if (e && e->expires_ms <= now) {
		cache_unlink(c, e);
		e = NULL;
	}
	if (!e)
		return 0;
	*out = e->spec;
	*expires_ms = e->expires_ms;
	return e->refresh_ms <= now ? 2 : 1;
}

static int inflight_has(const struct lookup_cache *c, const char *key)
{
	const struct inflight *f;

	for (f = c->inflight; f; f = f->next)
		if (strcmp(f->key, key) == 0)
			return 1;
	return 0;
}

/*
 * Returns 1 with *out from the cache. An entry due for its refresh is
 * returned (1) while another thread fetches key; when none does, node is
 * registered as the fetcher of key and 2 is returned with *out the entry,
 * live until *expires_ms. Otherwise, when another thread is already fetching
 * key, waits for it (until deadline_ms) and looks again; on a miss registers
 * node as the fetcher of key and returns 0. After 0 or 2 the caller fetches
 * and calls cache_finish.
 */
static int cache_get_or_claim(struct lookup_cache *c, const char *key, struct workload_spec *out,
                              struct inflight *node, long long deadline_ms, long long *expires_ms)
{
	int hit;

	pthread_mutex_lock(&c->lock);
	while ((hit = cache_lookup_locked(c, key, out, expires_ms)) != 1 && inflight_has(c, key)) {
		struct timespec ts;
		long long left = deadline_ms - mono_ms();
		if (hit == 2) {
			hit = 1; /* the refresh is under way: the entry is still live */
			break;
		}
		if (left <= 0)
			break;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += (time_t)(left / 1000);
		ts.tv_nsec += (long)(left % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (pthread_cond_timedwait(&c->inflight_done, &c->lock, &ts) == ETIMEDOUT)
			break;
	}
	if (hit != 1) {
		node->key = key;
		node->next = c->inflight;
		c->inflight = node;
	}
	pthread_mutex_unlock(&c->lock);
	return hit;
}

/*
 * Ends a fetch: unregisters node (NULL for a fresh read, which claims
 * nothing), caches spec when it is not NULL, drops the entry of key when
 * drop is set (the API answered for another object) and wakes the waiters.
 */
static void cache_finish(struct lookup_cache *c, struct inflight *node, const char *key,
                         const struct workload_spec *spec, int drop)
{
	struct inflight **pp;
	struct cache_entry *e;
	size_t b;

	pthread_mutex_lock(&c->lock);
	for (pp = &c->inflight; *pp; pp = &(*pp)->next) {
		if (*pp == node) {
			*pp = node->next;
			break;
		}
	}
	if (drop && (e = cache_find(c, key)))
		cache_unlink(c, e);
	if (spec) {
		if ((e = cache_find(c, key)))
			cache_unlink(c, e);
		while (c->n_entries >= c->max_entries && c->oldest)
			cache_unlink(c, c->oldest);
		if ((e = calloc(1, sizeof(*e)))) {
			snprintf(e->key, sizeof(e->key), "%s", key);
			e->spec = *spec;
			e->expires_ms = c->now_ms() + c->ttl_ms;
			e->refresh_ms = e->expires_ms - c->refresh_margin_ms;
			b = key_hash(key) & (c->n_buckets - 1);
			e->hnext = c->buckets[b];
			c->buckets[b] = e;
			e->older = c->newest;
			if (c->newest)
				c->newest->newer = e;
			else
				c->oldest = e;
			c->newest = e;
			c->n_entries++;
		}
	}
	pthread_cond_broadcast(&c->inflight_done);
	pthread_mutex_unlock(&c->lock);
}

int lookup_cache_get_via(struct lookup_cache *c, const struct workload_lookup *inner,
                         const struct workload_ref *ref, int fresh, struct workload_spec *out,
                         char *err, size_t errlen)
{
	const char *uid = ref->uid ? ref->uid : "";
	char key[KEY_MAX];
	struct workload_spec spec, live;
	long long live_until = 0;
	struct inflight node;
	int rc, claimed = 0, have_live = 0, keep;

	/*
	 * The owner's uid is part of the key: a workload deleted and created again
	 * under the same name is another object and never gets the old answer. A
	 * key that does not fit (no valid name makes one) is not cached.
	 */
	if (c->max_entries <= 0 ||
	    bounded_printf(key, sizeof(key), "%s/%s/%s/%.63s", kind_name(ref->kind),
	                   ref->ns ? ref->ns : "", ref->name ? ref->name : "", uid) != 0)
		return inner->get(inner->ctx, ref, fresh, out, err, errlen);
	if (!fresh) {
		switch (
		    cache_get_or_claim(c, key, &live, &node, mono_ms() + c->wait_ms, &live_until)) {
		case 1:
			*out = live;
			if (errlen)
				err[0] = '\0';
			out->cached = 1;
			return 0;
		case 2:
			have_live = 1; /* this call refreshes an entry that is still live */
			break;
		default:
			break;
		}
		claimed = 1;
	}
	rc = inner->get(inner->ctx, ref, fresh, &spec, err, errlen);
	if (rc == 0)
		*out = spec;
	/*
	 * A fresh read replaces what the cache holds; an answer for another uid is
	 * not kept, and the entry under the pod's owner uid goes: that object is gone.
	 */
	keep = rc == 0 && (uid[0] == '\0' || strcmp(spec.uid, uid) == 0);
	cache_finish(c, claimed ? &node : NULL, key, keep ? &spec : NULL, rc == 0 && !keep);
	if (rc != 0 && have_live && c->now_ms() < live_until) {
		/* A failed refresh: the entry is still live and is served, as it was before it. */
		*out = live;
		if (errlen)
			err[0] = '\0';
		out->cached = 1;
		return 0;
	}
	return rc;
}

int lookup_cache_get(void *cache, const struct workload_ref *ref, int fresh,
                     struct workload_spec *out, char *err, size_t errlen)
{
	struct lookup_cache *c = cache;

	return lookup_cache_get_via(c, &c->inner, ref, fresh, out, err, errlen);
}
