/* Unit tests for the worker pool the server runs admissions on. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "workpool.h"

struct job {
	struct workpool_item item; /* first: the pool hands it back */
	int done;
};

static atomic_int ran;

static void run_job(void *ctx, struct workpool_item *it)
{
	struct job *j = (struct job *)it;

	(void)ctx;
	j->done = 1;
	atomic_fetch_add(&ran, 1);
}

/* Every item pushed before workpool_stop runs, on any number of workers. */
static void test_pool(void)
{
	static const int sizes[] = {1, 4};
	struct job jobs[200];
	char err[128];
	size_t k;
	int i, all;

	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct workpool *p = workpool_start(sizes[k], 0, run_job, NULL, err, sizeof(err));
		CHECK(p != NULL, "pool of %d: %s", sizes[k], err);
		if (!p)
			continue;
		atomic_store(&ran, 0);
		memset(jobs, 0, sizeof(jobs));
		for (i = 0; i < 200; i++) {
			CHECK(workpool_reserve(p) == 0, "reserve %d", i);
			workpool_push(p, &jobs[i].item);
		}
		workpool_stop(p);
		CHECK(workpool_reserve(p) == WORKPOOL_STOPPED, "pool of %d: a place after the stop",
		      sizes[k]);
		workpool_stop(p); /* again: nothing */
		workpool_free(p);
		for (all = 1, i = 0; i < 200; i++)
			all &= jobs[i].done;
		CHECK(atomic_load(&ran) == 200 && all, "pool of %d ran %d of 200", sizes[k],
		      atomic_load(&ran));
	}
	workpool_free(NULL);
	workpool_stop(NULL);
}

static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static atomic_int started;

/* Blocks on the gate: keeps the single worker busy while the queue fills. */
static void run_gated(void *ctx, struct workpool_item *it)
{
	(void)ctx;
	atomic_fetch_add(&started, 1);
	pthread_mutex_lock(&gate);
	pthread_mutex_unlock(&gate);
	((struct job *)it)->done = 1;
	atomic_fetch_add(&ran, 1);
}

/*
 * A queue of max_queued holds exactly that many waiting items: with the one
 * worker busy on the first item, exactly max_queued of the next ones are
 * accepted and every other one refused, and every accepted item runs. Checked
 * for queues of 1 and 3, so that neither a smaller nor a larger bound passes.
 */
static void test_bounded(void)
{
	static const int queues[] = {1, 3};
	struct job jobs[8];
	char err[128];
	struct workpool *p;
	size_t k;
	int i, spins, refused, accepted;

	for (k = 0; k < sizeof(queues) / sizeof(queues[0]); k++) {
		memset(jobs, 0, sizeof(jobs));
		atomic_store(&ran, 0);
		atomic_store(&started, 0);
		refused = accepted = 0;
		pthread_mutex_lock(&gate);
		p = workpool_start(1, queues[k], run_gated, NULL, err, sizeof(err));
		CHECK(p != NULL, "bounded pool: %s", err);
		if (!p) {
			pthread_mutex_unlock(&gate);
			return;
		}
		/* the first item: wait (bounded) until the worker holds it, blocked on the gate */
		CHECK(workpool_reserve(p) == 0, "queue of %d: the first item refused", queues[k]);
		workpool_push(p, &jobs[0].item);
		for (spins = 0; atomic_load(&started) == 0 && spins < 10000; spins++)
			usleep(1000);
		CHECK(atomic_load(&started) == 1,
		      "queue of %d: the worker never took the first item", queues[k]);
		for (i = 1; i < 8; i++) {
			if (workpool_reserve(p) == 0) {
				workpool_push(p, &jobs[i].item);
				accepted++;
			} else {
				refused++;
			}
		}
		pthread_mutex_unlock(&gate);
		workpool_free(p);
		CHECK(accepted == queues[k] && refused == 7 - queues[k],
		      "queue of %d: %d of 7 accepted while the worker was busy, %d refused (want "
		      "%d, %d)",
		      queues[k], accepted, refused, queues[k], 7 - queues[k]);
		CHECK(atomic_load(&ran) == accepted + 1, "queue of %d: ran %d of %d accepted",
		      queues[k], atomic_load(&ran), accepted + 1);
	}
}

int main(void)
{
	test_pool();
	test_bounded();
	TEST_MAIN_END("workpool");
}
