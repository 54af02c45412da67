/*
 * Per-thread bump arena behind cJSON's hooks (see arena.h). A block list per
 * thread; cJSON's free of a pointer inside a block is a no-op, anything else
 * goes to free().
 */
#include "arena.h"

#include <assert.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#define ARENA_BLOCK (64 * 1024) /* a 4 KB pod's trees fit in one */

struct block {
	struct block *next;
	size_t used, cap;
	max_align_t data[];
};

static __thread struct block *tl_blocks; /* newest first */
static __thread int tl_active;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key; /* frees a thread's blocks when the thread ends */
static int installed;          /* the hooks are in (set once, under once) */

/*
 * The arena's invariant (asserted as curl's dynbuf asserts its own): every
 * block has used within cap, an aligned cap, and only the newest may have
 * room taken from it; the blocks are the thread's exit key's value.
 */
static void arena_check(void)
{
	const struct block *b = tl_blocks;

	assert(b == NULL || (b->used <= b->cap && b->cap % sizeof(max_align_t) == 0));
	assert(b == NULL || b->used % sizeof(max_align_t) == 0);
	assert(pthread_getspecific(exit_key) == b);
	(void)b;
}

static void free_blocks(struct block *b)
{
	struct block *next;

	for (; b != NULL; b = next) {
		next = b->next;
		free(b);
	}
}

static void on_thread_exit(void *blocks)
{
	free_blocks(blocks);
}

static void *arena_malloc(size_t n)
{
	struct block *b = tl_blocks;

	if (!tl_active)
		return malloc(n);
	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	if (b == NULL || b->cap - b->used < n) {
		size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
		b = malloc(sizeof(*b) + cap);
		if (b == NULL)
			return NULL;
		b->used = 0;
		b->cap = cap;
		b->next = tl_blocks;
		tl_blocks = b;
		pthread_setspecific(exit_key, b);
		arena_check(); /* per block, not per allocation: the hot path stays a bump */
	}
	b->used += n;
	return (char *)b->data + b->used - n;
}

static void arena_free(void *p)
{
	const struct block *b;

	if (p == NULL)
		return;
	for (b = tl_blocks; b != NULL; b = b->next)
		if ((const char *)p >= (const char *)b->data &&
		    (const char *)p < (const char *)b->data + b->cap)
			return; /* the arena's: forgotten by arena_end */
	free(p);
}

static void install(void)
{
	cJSON_Hooks h = {arena_malloc, arena_free};

	if (pthread_key_create(&exit_key, on_thread_exit) != 0)
		return; /* no hooks: cJSON keeps malloc/free, arena_begin does nothing */
	cJSON_InitHooks(&h);
	installed = 1;
}

void arena_init(void)
{
	pthread_once(&once, install);
}

void arena_begin(void)
{
	arena_init();
	tl_active = installed;
	if (installed)
		arena_check();
}

int arena_active(void)
{
	return tl_active;
}

void arena_end(void)
{
	struct block *b = tl_blocks;

	tl_active = 0;
	if (b == NULL)
		return;
	/* Keep one ordinary block for the next admission on this thread; give back the rest. */
	free_blocks(b->next);
	b->next = NULL;
	if (b->cap > ARENA_BLOCK) {
		free(b);
		b = NULL;
	} else {
		b->used = 0;
	}
	tl_blocks = b;
	pthread_setspecific(exit_key, b);
	arena_check();
}

int arena_pause(void)
{
	int was = tl_active;

	tl_active = 0;
	return was;
}

void arena_resume(int was)
{
	tl_active = was;
}
