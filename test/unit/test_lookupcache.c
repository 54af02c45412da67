/*
 * Unit tests for the look-up cache with an in-process fake look-up: hits and
 * misses, the owner uid in the key, fresh reads, TTL on a fake clock, the
 * entry cap, failures never kept, concurrent misses of one key coalesced
 * into one inner call, and the refresh ahead of the TTL (one call while the
 * others get the live entry, never an entry past its TTL, nor at it).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lookupcache.h"
#include "testutil.h"

#define STS (&kind_statefulset)
#define JOB (&kind_job)

/* The fake: answers replicas = `replicas` with uid `uid`, or fails; counts calls. */
struct fake {
	pthread_mutex_t mu;
	int calls;
	long replicas;
	char uid[64];
	int fail;
	long delay_ms;   /* how long each call takes (to make misses overlap) */
	long advance_ms; /* the fake clock moves this far during each call */
	int hold;        /* the first call waits (on released) until hold is cleared */
	int holding;     /* a call is waiting: the others do not */
	pthread_cond_t released;
};

static long long fake_now;

static int fake_get(void *ctx, const struct workload_ref *ref, int fresh, struct workload_spec *out,
                    char *err, size_t errlen)
{
	struct fake *f = ctx;
	struct timespec ts = {0, 0};
	int fail;

	(void)ref;
	(void)fresh;
	pthread_mutex_lock(&f->mu);
	f->calls++;
	fail = f->fail;
	workload_spec_init(out);
	out->replicas = f->replicas;
	snprintf(out->uid, sizeof(out->uid), "%s", f->uid);
	ts.tv_nsec = f->delay_ms * 1000000L;
	if (f->advance_ms)
		fake_now += f->advance_ms;
	if (f->hold && !f->holding) {
		f->holding = 1;
		while (f->hold)
			pthread_cond_wait(&f->released, &f->mu);
		f->holding = 0;
	}
	pthread_mutex_unlock(&f->mu);
	if (ts.tv_nsec)
		nanosleep(&ts, NULL);
	if (fail) {
		snprintf(err, errlen, "fake failure");
		return -1;
	}
	return 0;
}

static long long fake_clock(void)
{
	return fake_now;
}

static int calls(struct fake *f)
{
	int n;

	pthread_mutex_lock(&f->mu);
	n = f->calls;
	pthread_mutex_unlock(&f->mu);
	return n;
}

static struct lookup_cache *make(struct fake *f, long ttl, long cap)
{
	struct workload_lookup inner = {fake_get, f, NULL, NULL, NULL};
	struct lookup_cache_opts o = {ttl, cap, 2000, fake_clock};
	char err[128];

	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->released, NULL);
	f->replicas = 4;
	return lookup_cache_new(&inner, &o, err, sizeof(err));
}

/* One call: op 'g' get, 'f' fresh get; want the call count and cached flag after it. */
static void test_table(void)
{
	static const struct {
		const char *what;
		char op;
		const struct kind *kind;
		const char *name, *uid;
		long long advance_ms; /* before the call */
		int fail;             /* the fake fails this call */
		int want_rc, want_calls, want_cached;
	} cases[] = {
	    {"first look-up is a miss", 'g', STS, "a", NULL, 0, 0, 0, 1, 0},
	    {"second is a hit", 'g', STS, "a", NULL, 0, 0, 0, 1, 1},
	    {"another kind of the same name is a miss", 'g', JOB, "a", NULL, 0, 0, 0, 2, 0},
	    {"an owner uid is another key", 'g', STS, "a", "u1", 0, 0, 0, 3, 0},
	    {"an answer for another uid is not kept", 'g', STS, "a", "u1", 0, 0, 0, 4, 0},
	    {"fresh skips the cache", 'f', STS, "a", NULL, 0, 0, 0, 5, 0},
	    {"fresh replaced the entry", 'g', STS, "a", NULL, 0, 0, 0, 5, 1},
	    {"a failed fresh read keeps the entry", 'f', STS, "a", NULL, 0, 1, -1, 6, 0},
	    {"still cached after a failed fresh read", 'g', STS, "a", NULL, 0, 0, 0, 6, 1},
	    {"failures are not kept (1)", 'g', STS, "bad", NULL, 0, 1, -1, 7, 0},
	    {"failures are not kept (2)", 'g', STS, "bad", NULL, 0, 1, -1, 8, 0},
	    /* TTL 1000, wait 2000: refreshed from 500 after it was kept */
	    {"alive before its refresh time", 'g', STS, "a", NULL, 499, 0, 0, 8, 1},
	    {"at its refresh time the look-up calls again", 'g', STS, "a", NULL, 1, 0, 0, 9, 0},
	    {"the refreshed entry is a hit", 'g', STS, "a", NULL, 0, 0, 0, 9, 1},
	    {"another key kept at 500", 'g', STS, "b2", NULL, 0, 0, 0, 10, 0},
	    {"a failed refresh serves the live entry", 'g', STS, "a", NULL, 500, 1, 0, 11, 1},
	    {"the next look-up refreshes again", 'g', STS, "a", NULL, 0, 1, 0, 12, 1},
	    {"a failed refresh just before the TTL", 'g', STS, "b2", NULL, 499, 1, 0, 13, 1},
	    {"expired at the TTL", 'g', STS, "a", NULL, 1, 0, 0, 14, 0},
	    {"expired and failing: the failure", 'g', STS, "b2", NULL, 0, 1, -1, 15, 0},
	};
	struct fake f;
	struct lookup_cache *c = make(&f, 1000, 100);
	size_t i;

	CHECK(c != NULL, "cache");
	if (!c)
		return;
	fake_now = 0;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct workload_ref ref = {cases[i].kind, "ns", cases[i].name, cases[i].uid};
		struct workload_spec ws;
		char err[128] = "";
		int rc;

		fake_now += cases[i].advance_ms;
		/* the fake answers uid "u2" to owner-uid look-ups: never kept under "u1" */
		snprintf(f.uid, sizeof(f.uid), "%s", cases[i].uid ? "u2" : "");
		f.fail = cases[i].fail;
		memset(&ws, 0, sizeof(ws));
		rc = lookup_cache_get(c, &ref, cases[i].op == 'f', &ws, err, sizeof(err));
		CHECK(rc == cases[i].want_rc, "%s: rc %d (%s)", cases[i].what, rc, err);
		CHECK(calls(&f) == cases[i].want_calls, "%s: %d calls, want %d", cases[i].what,
		      calls(&f), cases[i].want_calls);
		if (rc == 0)
			CHECK(ws.cached == cases[i].want_cached && ws.replicas == 4,
			      "%s: cached %d replicas %ld", cases[i].what, ws.cached, ws.replicas);
		else
			CHECK(strcmp(err, "fake failure") == 0, "%s: err '%s'", cases[i].what, err);
	}
	lookup_cache_free(c);
	pthread_mutex_destroy(&f.mu);
	pthread_cond_destroy(&f.released);
}

/* The uid matching the answer is kept; the cap evicts the oldest; no cache without TTL. */
static void test_uid_cap_off(void)
{
	struct fake f;
	struct lookup_cache *c = make(&f, 1000, 2);
	struct workload_spec ws;
	char err[128];
	const char *names[] = {"a", "b", "c", "c", "b", "a"};
	const int want[] = {1, 2, 3, 3, 3, 4};
	struct workload_ref ref = {STS, "ns", "x", "u9"};
	size_t i;

	fake_now = 0;
	for (i = 0; c && i < 6; i++) {
		struct workload_ref r = {STS, "ns", names[i], NULL};
		CHECK(lookup_cache_get(c, &r, 0, &ws, err, sizeof(err)) == 0, "cap get %zu", i);
		CHECK(calls(&f) == want[i], "cap: after %s: %d calls, want %d", names[i], calls(&f),
		      want[i]);
		CHECK(lookup_cache_count(c) <= 2, "cap: %ld entries", lookup_cache_count(c));
	}
	snprintf(f.uid, sizeof(f.uid), "u9");
	CHECK(c && lookup_cache_get(c, &ref, 0, &ws, err, sizeof(err)) == 0 && !ws.cached,
	      "uid: miss");
	CHECK(c && lookup_cache_get(c, &ref, 0, &ws, err, sizeof(err)) == 0 && ws.cached &&
	          strcmp(ws.uid, "u9") == 0,
	      "uid: the owner's own answer is a hit");
	lookup_cache_free(c);
	pthread_mutex_destroy(&f.mu);
	pthread_cond_destroy(&f.released);

	c = make(&f, 0, 100);
	CHECK(c && lookup_cache_get(c, &ref, 0, &ws, err, sizeof(err)) == 0 &&
	          lookup_cache_get(c, &ref, 0, &ws, err, sizeof(err)) == 0 && calls(&f) == 2,
	      "TTL 0: every look-up calls the inner one (%d)", calls(&f));
	lookup_cache_free(c);
	lookup_cache_free(NULL);
	pthread_mutex_destroy(&f.mu);
	pthread_cond_destroy(&f.released);

	/* a cap of 0 entries is no cache either, whatever the TTL; a cap of 1 keeps one */
	c = make(&f, 1000, 0);
	snprintf(f.uid, sizeof(f.uid), "u9");
	CHECK(c && lookup_cache_get(c, &ref, 0, &ws, err, sizeof(err)) == 0 &&
	          lookup_cache_get(c, &ref, 0, &ws, err, sizeof(err)) == 0 && calls(&f) == 2 &&
	          lookup_cache_count(c) == 0,
	      "cap 0: every look-up calls the inner one (%d)", calls(&f));
	lookup_cache_free(c);
	pthread_mutex_destroy(&f.mu);
	pthread_cond_destroy(&f.released);
	c = make(&f, 1000, 1);
	snprintf(f.uid, sizeof(f.uid), "u9");
	CHECK(c && lookup_cache_get(c, &ref, 0, &ws, err, sizeof(err)) == 0 &&
	          lookup_cache_get(c, &ref, 0, &ws, err, sizeof(err)) == 0 && calls(&f) == 1 &&
	          lookup_cache_count(c) == 1,
	      "cap 1: the second look-up is a hit (%d calls)", calls(&f));
	lookup_cache_free(c);
	pthread_mutex_destroy(&f.mu);
	pthread_cond_destroy(&f.released);
}

struct worker {
	struct lookup_cache *c;
	const char *name;
	int rc;
	long replicas; /* the answer's */
	int cached;
	int done; /* under done_mu */
};

static pthread_mutex_t done_mu = PTHREAD_MUTEX_INITIALIZER;

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct workload_ref ref = {STS, "ns", w->name, NULL};
	struct workload_spec ws;
	char err[128];
	int rc = lookup_cache_get(w->c, &ref, 0, &ws, err, sizeof(err));

	pthread_mutex_lock(&done_mu);
	w->rc = rc;
	w->replicas = rc == 0 ? ws.replicas : -1;
	w->cached = rc == 0 && ws.cached;
	w->done = 1;
	pthread_mutex_unlock(&done_mu);
	return NULL;
}

static int worker_done(struct worker *w)
{
	int d;

	pthread_mutex_lock(&done_mu);
	d = w->done;
	pthread_mutex_unlock(&done_mu);
	return d;
}

/* 32 concurrent misses of 2 keys make 2 inner calls. */
static void test_coalesced(void)
{
	struct fake f;
	struct lookup_cache *c = make(&f, 60000, 100);
	struct worker w[32];
	pthread_t t[32];
	int i, started = 0, ok = 0;

	f.delay_ms = 100;
	fake_now = 0;
	for (i = 0; c && i < 32; i++) {
		w[i].c = c;
		w[i].name = i % 2 ? "odd" : "even";
		w[i].rc = -1;
		if (pthread_create(&t[i], NULL, worker_run, &w[i]) == 0)
			started++;
		else
			break;
	}
	for (i = 0; i < started; i++) {
		pthread_join(t[i], NULL);
		ok += w[i].rc == 0;
	}
	CHECK(started == 32 && ok == 32, "%d threads, %d answers", started, ok);
	CHECK(calls(&f) == 2, "32 misses of 2 keys made %d calls", calls(&f));
	lookup_cache_free(c);
	pthread_mutex_destroy(&f.mu);
	pthread_cond_destroy(&f.released);
}

/*
 * The refresh ahead of the TTL in a burst: one thread refreshes (its call
 * held until released) while 16 more look-ups of the key get the live entry
 * without waiting for it; the refreshed answer replaces the entry.
 */
static void test_refresh_in_burst(void)
{
	struct fake f;
	struct lookup_cache *c = make(&f, 1000, 100);
	struct workload_ref ref = {STS, "ns", "burst", NULL};
	struct workload_spec ws;
	struct worker w = {c, "burst", -1, 0, 0, 0};
	struct timespec tick = {0, 5000000L};
	char err[128];
	pthread_t t;
	int i, hits = 0, started;

	fake_now = 0;
	CHECK(c && lookup_cache_get(c, &ref, 0, &ws, err, sizeof(err)) == 0 && calls(&f) == 1,
	      "kept");
	if (!c)
		return;
	fake_now = 600; /* past the refresh time (500), before the TTL (1000) */
	pthread_mutex_lock(&f.mu);
	f.replicas = 8;
	f.hold = 1;
	pthread_mutex_unlock(&f.mu);
	started = pthread_create(&t, NULL, worker_run, &w) == 0;
	for (i = 0; started && i < 400 && calls(&f) < 2; i++)
		nanosleep(&tick, NULL);
	CHECK(calls(&f) == 2, "the refresh started (%d calls)", calls(&f));
	for (i = 0; i < 16; i++)
		hits += lookup_cache_get(c, &ref, 0, &ws, err, sizeof(err)) == 0 && ws.cached &&
		        ws.replicas == 4;
	/* the refresh is held until now: the 16 look-ups did not wait for it */
	CHECK(calls(&f) == 2 && hits == 16, "%d of 16 got the live entry, %d calls", hits,
	      calls(&f));
	pthread_mutex_lock(&f.mu);
	f.hold = 0;
	pthread_cond_broadcast(&f.released);
	pthread_mutex_unlock(&f.mu);
	if (started)
		pthread_join(t, NULL);
	CHECK(w.rc == 0, "the refresh answered");
	CHECK(lookup_cache_get(c, &ref, 0, &ws, err, sizeof(err)) == 0 && ws.cached &&
	          ws.replicas == 8 && calls(&f) == 2,
	      "the refreshed answer is kept: replicas %ld, %d calls", ws.replicas, calls(&f));
	lookup_cache_free(c);
	pthread_mutex_destroy(&f.mu);
	pthread_cond_destroy(&f.released);
}

/*
 * A failed refresh that ends after the entry's TTL fails (no entry is served
 * past its TTL); a refresh answered for another uid drops the entry.
 */
static void test_refresh_bounds(void)
{
	struct fake f;
	struct lookup_cache *c = make(&f, 1000, 100);
	struct workload_ref ref = {STS, "ns", "late", NULL};
	struct workload_ref owned = {JOB, "ns", "owned", "u1"};
	struct workload_spec ws;
	char err[128];

	fake_now = 0;
	CHECK(c && lookup_cache_get(c, &ref, 0, &ws, err, sizeof(err)) == 0, "kept");
	if (!c)
		return;
	fake_now = 900;
	f.fail = 1;
	f.advance_ms = 100; /* the call ends at 1000, the TTL */
	CHECK(lookup_cache_get(c, &ref, 0, &ws, err, sizeof(err)) == -1 &&
	          strcmp(err, "fake failure") == 0,
	      "a refresh failing at the TTL is a failure: '%s'", err);
	f.advance_ms = 0;
	f.fail = 0;

	fake_now = 0;
	snprintf(f.uid, sizeof(f.uid), "u1");
	CHECK(lookup_cache_get(c, &owned, 0, &ws, err, sizeof(err)) == 0 && !ws.cached, "u1 kept");
	fake_now = 600;
	snprintf(f.uid, sizeof(f.uid), "u2"); /* deleted and created again under the same name */
	CHECK(lookup_cache_get(c, &owned, 0, &ws, err, sizeof(err)) == 0 && !ws.cached &&
	          strcmp(ws.uid, "u2") == 0,
	      "the refresh answers for u2");
	f.fail = 1;
	CHECK(lookup_cache_get(c, &owned, 0, &ws, err, sizeof(err)) == -1,
	      "the entry of u1 is gone: no live entry to fall back on");
	lookup_cache_free(c);
	pthread_mutex_destroy(&f.mu);
	pthread_cond_destroy(&f.released);
}

/*
 * An entry at its TTL exactly is no longer served: with the key's fetch in
 * flight (held), a look-up at that instant waits for the fetch and gets its
 * answer, never the entry of ttl_ms ago.
 */
static void test_at_ttl(void)
{
	struct fake f;
	struct lookup_cache *c = make(&f, 1000, 100);
	struct workload_ref ref = {STS, "ns", "edge", NULL};
	struct workload_spec ws;
	struct worker a = {c, "edge", -1, 0, 0, 0}, b = {c, "edge", -1, 0, 0, 0};
	struct timespec tick = {0, 5000000L}, settle = {0, 200000000L};
	char err[128];
	pthread_t ta, tb;
	int i, started_a, started_b, b_early;

	fake_now = 0;
	CHECK(c && lookup_cache_get(c, &ref, 0, &ws, err, sizeof(err)) == 0 && calls(&f) == 1,
	      "kept");
	if (!c)
		return;
	fake_now = 1000; /* the TTL of the entry made at 0 */
	pthread_mutex_lock(&f.mu);
	f.replicas = 8;
	f.hold = 1;
	pthread_mutex_unlock(&f.mu);
	started_a = pthread_create(&ta, NULL, worker_run, &a) == 0;
	for (i = 0; started_a && i < 400 && calls(&f) < 2; i++)
		nanosleep(&tick, NULL);
	CHECK(calls(&f) == 2, "the fetch at the TTL started (%d calls)", calls(&f));
	started_b = pthread_create(&tb, NULL, worker_run, &b) == 0;
	nanosleep(&settle, NULL); /* b looks up while a's fetch is held */
	b_early = worker_done(&b);
	pthread_mutex_lock(&f.mu);
	f.hold = 0;
	pthread_cond_broadcast(&f.released);
	pthread_mutex_unlock(&f.mu);
	if (started_a)
		pthread_join(ta, NULL);
	if (started_b)
		pthread_join(tb, NULL);
	CHECK(started_a && a.rc == 0 && a.replicas == 8 && !a.cached,
	      "the look-up at the TTL fetched: rc %d, replicas %ld", a.rc, a.replicas);
	CHECK(started_b && !b_early && b.rc == 0 && b.replicas == 8 && b.cached,
	      "the look-up at the TTL during the fetch: answered before it %d, rc %d, replicas "
	      "%ld (the entry of ttl_ms ago has 4)",
	      b_early, b.rc, b.replicas);
	CHECK(calls(&f) == 2, "%d calls", calls(&f));
	lookup_cache_free(c);
	pthread_mutex_destroy(&f.mu);
	pthread_cond_destroy(&f.released);
}

int main(void)
{
	test_table();
	test_uid_cap_off();
	test_coalesced();
	test_refresh_in_burst();
	test_refresh_bounds();
	test_at_ttl();
	TEST_MAIN_END("lookupcache");
}
