/*
 * The registry (src/core/registry.c): a row past the count the program handed
 * it is never read, however the table goes on in memory, and the frameworks'
 * names join within the buffer.
 */
#include "framework.h"
#include "kind.h"
#include "testutil.h"

/* Tables of three rows registered as two: the third is no row of the registry. */
static void test_past_the_count(void)
{
	const struct kind *const kinds3[] = {kind_table[0], kind_table[1], kind_table[2]};
	const struct framework *const fws3[] = {framework_table[0], framework_table[1],
	                                        framework_table[2]};
	size_t n;

	registry_set(kinds3, 2, fws3, 2);
	CHECK(kind_at(0) == kinds3[0] && kind_at(1) == kinds3[1], "the two kinds");
	CHECK(kind_at(2) == NULL, "kind_at(2) of 2: %s", kind_name(kind_at(2)));
	CHECK(framework_at(0) == fws3[0] && framework_at(1) == fws3[1], "the two frameworks");
	CHECK(framework_at(2) == NULL, "framework_at(2) of 2: %s",
	      framework_at(2) ? framework_at(2)->name : "(none)");
	CHECK(kind_named(NULL, kinds3[2]->api.kind) == NULL, "the third kind is not found");
	CHECK(framework_named(fws3[2]->name, strlen(fws3[2]->name)) == NULL,
	      "the third framework is not found");
	for (n = 0; kind_listed(n) != NULL; n++)
		;
	CHECK(n == 2, "%zu kinds listed, want 2", n);
	registry_set(kind_table, kind_count, framework_table, framework_count);
}

/* The names joined whole when they fit, cut when they do not, never past outlen. */
static void test_names(void)
{
	char out[64], want[64], small[9];
	size_t i, used = 0;

	for (i = 0; i < framework_count; i++)
		used += (size_t)snprintf(want + used, sizeof(want) - used, "%s%s", i ? ", " : "",
		                         framework_table[i]->name);
	CHECK_STR(framework_names(out, sizeof(out), ", "), want, "the names");
	memset(small, 'x', sizeof(small));
	framework_names(small, 8, ", ");
	CHECK(strncmp(small, want, 7) == 0 && small[7] == '\0' && small[8] == 'x',
	      "cut to 8 bytes: '%.8s'", small);
}

int main(void)
{
	test_past_the_count();
	test_names();
	TEST_MAIN_END("registry");
}
