/* The names of the outcomes and denial reasons (verdict.h): static strings. */
#include "verdict.h"

#include <string.h>

const char *verdict_unprefixed(const char *msg)
{
	size_t n = sizeof(VERDICT_PREFIX) - 1;

	return strncmp(msg, VERDICT_PREFIX, n) == 0 ? msg + n : msg;
}

const char *verdict_outcome_name(enum admission_outcome o)
{
	static const char *const names[] = {"skipped", "patched", "unchanged", "denied",
	                                    "bad_request"};

	return (unsigned)o < ADMISSION_OUTCOME_COUNT ? names[o] : "unknown";
}

const char *verdict_reason_name(enum deny_reason r)
{
	static const char *const names[DENY_REASON_COUNT] = {
	    "none",    "owner",    "annotation", "identity", "lookup", "world",
	    "service", "workload", "env",        "limit",    "other"};

	return (unsigned)r < DENY_REASON_COUNT ? names[r] : "other";
}
