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

/*
 * Every outcome by its name (the metrics' outcome label); a value past the
 * table, at its end or far past it, is "unknown".
 */
static void test_outcome_names(void)
{
	static const char *const want[] = {"skipped", "patched", "unchanged", "denied",
	                                   "bad_request"};
	static const long past[] = {ADMISSION_OUTCOME_COUNT, ADMISSION_OUTCOME_COUNT + 1,
	                            ADMISSION_OUTCOME_COUNT + 100, -1};
	size_t i;

	CHECK(ADMISSION_OUTCOME_COUNT == sizeof(want) / sizeof(want[0]), "%d outcomes",
	      (int)ADMISSION_OUTCOME_COUNT);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK_STR(verdict_outcome_name((enum admission_outcome)i), want[i], "an outcome");
	CHECK_STR(verdict_outcome_name(ADMISSION_DENIED), "denied", "ADMISSION_DENIED");
	for (i = 0; i < sizeof(past) / sizeof(past[0]); i++) {
		const char *n = verdict_outcome_name((enum admission_outcome)past[i]);
		CHECK(n != NULL && strcmp(n, "unknown") == 0, "outcome %ld: %s, want unknown",
		      past[i], n ? n : "(null)");
	}
}

int main(void)
{
	test_reason_names();
	test_outcome_names();
	TEST_MAIN_END("verdict");
}
