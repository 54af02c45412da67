/* Unit tests for the worker pool the server runs admissions on. */
#include <stdatomic.h>
#include <string.h>

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
		struct workpool *p = workpool_start(sizes[k], run_job, NULL, err, sizeof(err));
		CHECK(p != NULL, "pool of %d: %s", sizes[k], err);
		if (!p)
			continue;
		atomic_store(&ran, 0);
		memset(jobs, 0, sizeof(jobs));
		for (i = 0; i < 200; i++)
			workpool_push(p, &jobs[i].item);
		workpool_stop(p);
		for (all = 1, i = 0; i < 200; i++)
			all &= jobs[i].done;
		CHECK(atomic_load(&ran) == 200 && all, "pool of %d ran %d of 200", sizes[k],
		      atomic_load(&ran));
	}
	workpool_stop(NULL);
}

int main(void)
{
	test_pool();
	TEST_MAIN_END("workpool");
}
