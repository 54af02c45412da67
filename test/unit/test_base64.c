/* base64 (lib/base64.c): the RFC 4648 test vectors and a patch-shaped input. */
#include <string.h>

#include "testutil.h"
#include "strbuf.h"
#include "base64.h"

static void test_base64(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {"", ""},        {"f", "Zg=="},        {"fo", "Zm8="},
	    {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}, {"[{\"op\":\"add\"}]", "W3sib3AiOiJhZGQifV0="}};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strbuf sb;
		strbuf_init(&sb);
		base64_append(&sb, cases[i].in, strlen(cases[i].in));
		CHECK(!sb.oom, "%s: out of memory", cases[i].in);
		CHECK_STR(sb.buf != NULL ? sb.buf : "(nothing)", cases[i].out, cases[i].in);
		strbuf_free(&sb);
	}
}

int main(void)
{
	test_base64();
	TEST_MAIN_END("base64");
}
