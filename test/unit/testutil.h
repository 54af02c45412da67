/*
 * A tiny table-driven test harness: CHECK records a failure with file:line and
 * carries on; TEST_MAIN_END prints "unit NAME: N passed, N failed" and sets the
 * exit status.
 */
#ifndef DISTENV_TESTUTIL_H
#define DISTENV_TESTUTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "frameworks.h"
#include "kinds.h"
#include "registry.h"

static int t_pass, t_fail;

/*
 * Every test is a program that hands the core its plug-ins, as cli/main.c
 * does, before main; a test may register its own tables after.
 */
__attribute__((constructor)) static void test_registry(void)
{
	registry_set(kind_table, kind_count, framework_table, framework_count);
}

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (cond) {                                                                        \
			t_pass++;                                                                  \
		} else {                                                                           \
			t_fail++;                                                                  \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);   \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

#define CHECK_STR(got, want, what)                                                                 \
	CHECK((got) != NULL && strcmp((got), (want)) == 0, "%s: got '%s', want '%s'", (what),      \
	      (got) ? (got) : "(null)", (want))

#define TEST_MAIN_END(name)                                                                        \
	do {                                                                                       \
		printf("unit %s: %d passed, %d failed\n", (name), t_pass, t_fail);                 \
		return t_fail ? 1 : 0;                                                             \
	} while (0)

/*
 * A fixture file's text, NUL-terminated, its length in *len when len is not NULL;
 * NULL when it cannot be read (and why on stderr, unless it does not exist: some
 * fixtures are optional, and a caller that needs one says so).
 */
static inline char *test_read(const char *path, size_t *len)
{
	char err[256];
	size_t n;
	char *p = file_read(path, (size_t)16 << 20, &n, err, sizeof(err));

	if (p == NULL && errno != ENOENT)
		fprintf(stderr, "%s\n", err);
	else if (len != NULL)
		*len = n;
	return p;
}

/*
 * GOLDEN_UPDATE=1: 1, the test rewrites its expected files (review the diff);
 * else 0, it compares. With CI=true a rewrite would pass whatever the answers
 * are: it is refused, a failed check, and -1.
 */
static inline int test_golden_update(void)
{
	const char *up = getenv("GOLDEN_UPDATE"), *ci = getenv("CI");

	if (up == NULL || strcmp(up, "1") != 0)
		return 0;
	if (ci != NULL && strcmp(ci, "true") == 0) {
		CHECK(0, "GOLDEN_UPDATE=1 with CI=true: goldens are rewritten only by hand, never "
		         "in CI");
		return -1;
	}
	return 1;
}

/* A struct workload_spec of a StatefulSet or Job look-up answer; the JobSet fields unset. */
#define WSPEC(replicas_, start_, completions_, parallelism_, indexed_, uid_)                       \
	{                                                                                          \
		.replicas = (replicas_), .ordinals_start = (start_),                               \
		.completions = (completions_), .parallelism = (parallelism_),                      \
		.indexed = (indexed_), .uid = uid_, .coordinator_job = -1, .coordinator_pod = -1   \
	}

#endif
