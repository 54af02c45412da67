/*
 * The names of the denial reasons (src/core/verdict.c), the metrics' labels.
 */
#include "testutil.h"
#include "verdict.h"

/* Every reason has its own name; a value past the table, at its end or far past it, is "other". */
static void test_reason_names(void)
{
	static const long past[] = {DENY_REASON_COUNT, DENY_REASON_COUNT + 1,
	                            DENY_REASON_COUNT + 100, -1};
	int r, q;
	size_t i;

	for (r = 0; r < DENY_REASON_COUNT; r++) {
		const char *n = verdict_reason_name((enum deny_reason)r);
		CHECK(n != NULL && n[0] != '\0', "reason %d has a name", r);
		for (q = 0; n != NULL && q < r; q++)
			CHECK(strcmp(n, verdict_reason_name((enum deny_reason)q)) != 0,
			      "reasons %d and %d are both %s", q, r, n);
	}
	CHECK(strcmp(verdict_reason_name(DENY_NONE), "none") == 0, "DENY_NONE is none");
	for (i = 0; i < sizeof(past) / sizeof(past[0]); i++) {
		const char *n = verdict_reason_name((enum deny_reason)past[i]);
		CHECK(n != NULL && strcmp(n, "other") == 0, "reason %ld: %s, want other", past[i],
		      n ? n : "(null)");
	}
}

int main(void)
{
	test_reason_names();
	TEST_MAIN_END("verdict");
}
