/*
 * A fixed pool of worker threads draining a FIFO of caller-owned items. The
 * server runs admissions here, with their connections suspended, so that a
 * slow look-up never holds a network thread. The pool owns its threads; the
 * items stay the caller's (the pool only links them through item->next).
 */
#ifndef DISTENV_WORKPOOL_H
#define DISTENV_WORKPOOL_H

#include <stddef.h>

/* Embed in the caller's struct; the pool links queued items through next. */
struct workpool_item {
	struct workpool_item *next;
};

/* Runs one item on a worker thread. */
typedef void (*workpool_fn)(void *ctx, struct workpool_item *item);

struct workpool;

/*
 * Starts n threads running fn(ctx, item); at most max_queued items wait
 * (<= 0: no bound). Returns the pool, or NULL with err.
 */
struct workpool *workpool_start(int n, long max_queued, workpool_fn fn, void *ctx, char *err,
                                size_t errlen);

/* workpool_reserve's answers. */
enum workpool_place {
	WORKPOOL_OK = 0,  /* a place is claimed: fill it with workpool_push */
	WORKPOOL_FULL,    /* max_queued items already wait */
	WORKPOOL_STOPPED, /* workpool_stop was called: run the item yourself */
};

/* Claims a place in the queue (thread-safe). */
enum workpool_place workpool_reserve(struct workpool *p) __attribute__((warn_unused_result));

/* Queues item into a place claimed by workpool_reserve; a worker runs it soon after. */
void workpool_push(struct workpool *p, struct workpool_item *item);

/*
 * Runs every queued item, then stops the threads and waits for them; later
 * workpool_reserve calls answer WORKPOOL_STOPPED. Calling it again does
 * nothing; NULL is fine. The pool stays allocated (other threads may still
 * call workpool_reserve) until workpool_free.
 */
void workpool_stop(struct workpool *p);

/* Stops the pool if it runs, and frees it. NULL is fine. */
void workpool_free(struct workpool *p);

#endif
