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

/* Starts n threads running fn(ctx, item). Returns the pool, or NULL with err. */
struct workpool *workpool_start(int n, workpool_fn fn, void *ctx, char *err, size_t errlen);

/* Queues item (thread-safe); a worker runs it soon after. */
void workpool_push(struct workpool *p, struct workpool_item *item);

/*
 * Runs every queued item, then stops the threads, waits for them and frees
 * the pool. NULL is fine.
 */
void workpool_stop(struct workpool *p);

#endif
