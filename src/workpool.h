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

/*
 * Claims a place in the queue (thread-safe). Returns 0, or -1 when max_queued
 * items already wait. Each claimed place is filled by one workpool_push.
 */
int workpool_reserve(struct workpool *p) __attribute__((warn_unused_result));

/* Queues item into a place claimed by workpool_reserve; a worker runs it soon after. */
void workpool_push(struct workpool *p, struct workpool_item *item);

/*
 * Runs every queued item, then stops the threads, waits for them and frees
 * the pool. NULL is fine.
 */
void workpool_stop(struct workpool *p);

#endif
