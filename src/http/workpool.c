/*
 * The worker pool: one mutex-guarded FIFO of bounded length, a condition
 * variable to wake idle workers, and a stop flag honoured only once the queue is empty, so that
 * every queued item is run. The pool owns its threads and nothing else.
 */
#include "workpool.h"

#include <pthread.h>
#include <stdlib.h>

#include "util.h"

struct workpool {
	workpool_fn fn;
	void *ctx;
	pthread_t *threads;
	int n_threads;
	pthread_mutex_t lock; /* guards the queue and stop */
	pthread_cond_t cond;
	struct workpool_item *head, *tail;
	long queued, max_queued; /* items waiting; max_queued <= 0: no bound */
	int stop;
	int joined; /* workpool_stop has waited for the threads */
};

static void *worker_main(void *arg)
{
	struct workpool *p = arg;
	struct workpool_item *it;

	for (;;) {
		pthread_mutex_lock(&p->lock);
		while (p->head == NULL && !p->stop)
			pthread_cond_wait(&p->cond, &p->lock);
		it = p->head;
		if (it == NULL) { /* stopping and nothing left */
			pthread_mutex_unlock(&p->lock);
			return NULL;
		}
		p->head = it->next;
		if (p->head == NULL)
			p->tail = NULL;
		p->queued--;
		pthread_mutex_unlock(&p->lock);
		p->fn(p->ctx, it);
	}
}

struct workpool *workpool_start(int n, long max_queued, workpool_fn fn, void *ctx, char *err,
                                size_t errlen)
{
	struct workpool *p = calloc(1, sizeof(*p));

	if (p == NULL) {
		errf(err, errlen, "out of memory");
		return NULL;
	}
	p->fn = fn;
	p->ctx = ctx;
	p->max_queued = max_queued;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	if ((p->threads = calloc((size_t)n, sizeof(*p->threads))) == NULL) {
		errf(err, errlen, "out of memory");
		workpool_free(p);
		return NULL;
	}
	for (; p->n_threads < n; p->n_threads++) {
		if (pthread_create(&p->threads[p->n_threads], NULL, worker_main, p) != 0) {
			errf(err, errlen, "cannot start worker thread %d of %d", p->n_threads + 1,
			     n);
			workpool_free(p);
			return NULL;
		}
	}
	return p;
}

enum workpool_place workpool_reserve(struct workpool *p)
{
	enum workpool_place rc = WORKPOOL_OK;

	pthread_mutex_lock(&p->lock);
	if (p->stop)
		rc = WORKPOOL_STOPPED;
	else if (p->max_queued > 0 && p->queued >= p->max_queued)
		rc = WORKPOOL_FULL;
	else
		p->queued++;
	pthread_mutex_unlock(&p->lock);
	return rc;
}

void workpool_push(struct workpool *p, struct workpool_item *item)
{
	pthread_mutex_lock(&p->lock);
	item->next = NULL;
	if (p->tail != NULL)
		p->tail->next = item;
	else
		p->head = item;
	p->tail = item;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

void workpool_stop(struct workpool *p)
{
	int i;

	if (p == NULL)
		return;
	if (p->joined)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = 1;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->n_threads; i++)
		pthread_join(p->threads[i], NULL);
	p->joined = 1;
}

void workpool_free(struct workpool *p)
{
	if (p == NULL)
		return;
	workpool_stop(p);
	free(p->threads);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
