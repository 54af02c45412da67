/*
 * Unit tests for the JSON room (json.h): the typed getters, the string
 * escaper and the compact printer against cJSON's own printer. The parser
 * has its differential fuzz target (fuzz/fuzz_jsonparse.c) and the goldens.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "json.h"
#include "arena.h"
#include "strbuf.h"

static void test_getters(void)
{
	static const char doc[] = "{\"s\":\"v\",\"n\":7.9,\"neg\":-1,\"big\":3000000000,"
	                          "\"m\":{\"k\":\"x\",\"num\":1},\"a\":[\"k\"],\"null\":null}";
	static const struct {
		const char *key, *sub;
		const char *want_str; /* json_str(doc or doc.sub, key) */
		long want_long;       /* json_long(..., key, 2147483647, -5) */
		const char *what;
	} cases[] = {
	    {"s", NULL, "v", -5, "a string member; not a number"},
	    {"n", NULL, NULL, 7, "a number is cut to a whole one; not a string"},
	    {"neg", NULL, NULL, -5, "below 0: the default"},
	    {"big", NULL, NULL, -5, "past max: the default"},
	    {"null", NULL, NULL, -5, "null is neither"},
	    {"missing", NULL, NULL, -5, "absent"},
	    {"k", "m", "x", -5, "nested through json_get"},
	    {"num", "m", NULL, 1, "nested number"},
	    {"k", "missing", NULL, -5, "below an absent member: NULL all the way"},
	};
	cJSON *root = json_parse(doc, sizeof(doc) - 1);
	size_t i;

	CHECK(root != NULL, "the document parses");
	for (i = 0; root != NULL && i < sizeof(cases) / sizeof(cases[0]); i++) {
		const cJSON *o = cases[i].sub ? json_get(root, cases[i].sub) : root;
		const char *s = json_str(o, cases[i].key);
		long n = json_long(o, cases[i].key, 2147483647L, -5);
		CHECK(cases[i].want_str ? (s != NULL && strcmp(s, cases[i].want_str) == 0)
		                        : s == NULL,
		      "%s: json_str gave %s", cases[i].what, s ? s : "NULL");
		CHECK(n == cases[i].want_long, "%s: json_long gave %ld", cases[i].what, n);
	}
	if (root != NULL) {
		CHECK(json_map_str(json_get(root, "m"), "k") != NULL,
		      "json_map_str reads an object");
		CHECK(json_map_str(json_get(root, "a"), "k") == NULL,
		      "json_map_str: an array is no map");
		CHECK(json_map_str(NULL, "k") == NULL, "json_map_str: NULL map");
	}
	cJSON_Delete(root);
}

static void test_print(void)
{
	static const char *const docs[] = {
	    "[]",
	    "{}",
	    "[{\"op\":\"add\",\"path\":\"/spec/containers/0/env\",\"value\":[{\"name\":\"RANK\","
	    "\"value\":\"3\"}]}]",
	    "{\"n\":[0,-1,1.5,1e300,123456789012,0.1],\"b\":[true,false,null]}",
	    "{\"esc\":\"q\\\"b\\\\s\\n\\u0001\\u00e9\"}",
	};
	size_t i;

	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		cJSON *t = cJSON_Parse(docs[i]);
		char *want = t ? cJSON_PrintUnformatted(t) : NULL;
		struct strbuf sb;
		strbuf_init(&sb);
		if (t != NULL)
			json_print(&sb, t);
		CHECK(want != NULL && !sb.oom && strcmp(sb.buf, want) == 0, "%s: got %s, cJSON %s",
		      docs[i], sb.buf ? sb.buf : "(null)", want ? want : "(null)");
		strbuf_free(&sb);
		free(want);
		cJSON_Delete(t);
	}
}

static void test_json_string(void)
{
	static const struct {
		const char *in;
		size_t max;
		const char *want;
		const char *what;
	} cases[] = {
	    {"plain", JSON_ALL, "\"plain\"", "ASCII as it is"},
	    {"", JSON_ALL, "\"\"", "empty"},
	    {"q\"b\\s", JSON_ALL, "\"q\\\"b\\\\s\"", "quote and backslash"},
	    {"l1\nl2\r\t\b\f", JSON_ALL, "\"l1\\nl2\\r\\t\\b\\f\"", "short escapes"},
	    {"\x01\x1f\x7f", JSON_ALL, "\"\\u0001\\u001f\\u007f\"", "other control bytes, DEL"},
	    {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", JSON_ALL,
	     "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"", "valid UTF-8 kept"},
	    {"bad\xff\xc3", JSON_ALL, "\"bad\\ufffd\\ufffd\"", "invalid byte, cut sequence"},
	    {"\xed\xa0\x80", JSON_ALL, "\"\\ufffd\\ufffd\\ufffd\"", "surrogate: each byte"},
	    {"\xc0\xaf", JSON_ALL, "\"\\ufffd\\ufffd\"", "overlong form"},
	    {"\xf4\x90\x80\x80", JSON_ALL, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"", "past U+10FFFF"},
	    {"abcdef", 3, "\"abc\"", "cut at max"},
	    {"abcdefghijklmnopqrstuvwxyz0123456789-ABCDEFGHIJKLMNOPQRSTUVWXYZ", JSON_ALL,
	     "\"abcdefghijklmnopqrstuvwxyz0123456789-ABCDEFGHIJKLMNOPQRSTUVWXYZ\"",
	     "long plain run, eight bytes a step"},
	    {"abcdefg\"ijklmno\\qrstuvw\x7fyz01234\n6789abc\xc3\xa9"
	     "fghijk~ 0123456\x1f"
	     "",
	     JSON_ALL,
	     "\"abcdefg\\\"ijklmno\\\\qrstuvw\\u007fyz01234\\n6789abc\xc3\xa9"
	     "fghijk~ "
	     "0123456\\u001f\"",
	     "each escape at the end of an eight-byte word, ~ and space plain"},
	    {"a\xc3\xa9", 2, "\"a\\ufffd\"", "a sequence cut by max"},
	};
	/* keep_invalid: the same escapes, bytes that are not UTF-8 echoed as they are */
	static const struct {
		const char *in, *want, *what;
	} raw[] = {
	    {"u\xff\xc3-1\n", "\"u\xff\xc3-1\\n\"", "invalid bytes echoed, controls escaped"},
	    {"caf\xc3\xa9\"", "\"caf\xc3\xa9\\\"\"", "valid UTF-8 and quote as in the default"},
	};
	size_t i;

	for (i = 0; i < sizeof(raw) / sizeof(raw[0]); i++) {
		struct strbuf sb;
		char *got;
		strbuf_init(&sb);
		json_put_string_bytes(&sb, raw[i].in, JSON_ALL, 1);
		got = strbuf_take(&sb);
		CHECK_STR(got, raw[i].want, raw[i].what);
		free(got);
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strbuf sb;
		char *got;
		strbuf_init(&sb);
		json_put_string(&sb, cases[i].in, cases[i].max);
		got = strbuf_take(&sb);
		CHECK_STR(got, cases[i].want, cases[i].what);
		free(got);
	}
}

/*
 * The escaper against cJSON's printer on random strings rich in quotes and
 * backslashes (TF_CONFIG's are escaped sixteen bytes a step, a shuffle for
 * each eight), with controls and valid UTF-8 among them, after a random
 * prefix so that the room left in the buffer varies. DEL is left out: cJSON
 * writes it as it is, distenv as \u007f.
 */
static void test_escape_random(void)
{
	static const char *const pieces[] = {"\"",
	                                     "\\",
	                                     "a",
	                                     "Z",
	                                     "0",
	                                     ":",
	                                     ",",
	                                     "[",
	                                     " ",
	                                     "\n",
	                                     "\x01",
	                                     "\x1f",
	                                     "\xc3\xa9",
	                                     "\xe2\x82\xac",
	                                     "\"host-1.svc:2222\"",
	                                     "abcdefghijklmnop"};
	unsigned seed = 12345;
	int round, bad = 0;

	for (round = 0; round < 3000 && !bad; round++) {
		char in[600], pre[400];
		size_t n = 0, np, k;
		struct strbuf sb;
		cJSON *str;
		char *want;

		seed = seed * 1103515245u + 12345u;
		k = (seed >> 16) % 60;
		while (k-- > 0) {
			const char *p;
			seed = seed * 1103515245u + 12345u;
			p = pieces[(seed >> 16) % (sizeof(pieces) / sizeof(pieces[0]))];
			if (n + strlen(p) >= sizeof(in))
				break;
			memcpy(in + n, p, strlen(p));
			n += strlen(p);
		}
		in[n] = '\0';
		seed = seed * 1103515245u + 12345u;
		np = (seed >> 16) % sizeof(pre);
		memset(pre, 'p', np);
		pre[np] = '\0';
		str = cJSON_CreateString(in);
		want = str ? cJSON_PrintUnformatted(str) : NULL;
		for (int keep = 0; keep <= 1 && want != NULL; keep++) {
			strbuf_init(&sb);
			strbuf_puts(&sb, pre);
			json_put_string_bytes(&sb, in, JSON_ALL, keep);
			if (sb.oom || sb.len < np || strcmp(sb.buf + np, want) != 0 ||
			    strncmp(sb.buf, pre, np) != 0)
				bad = 1;
			CHECK(!bad, "escape of %s (after %zu bytes, keep %d): %s, cJSON %s", in, np,
			      keep, sb.buf ? sb.buf + (sb.len >= np ? np : 0) : "(none)", want);
			strbuf_free(&sb);
		}
		CHECK(want != NULL, "cJSON printed nothing for %s", in);
		cJSON_free(want);
		cJSON_Delete(str);
	}
}

/* t printed by cJSON into malloc's memory, outside any arena (the caller frees). */
static char *print_alone(const cJSON *t)
{
	struct strbuf sb;
	char *out;

	strbuf_init(&sb);
	json_print(&sb, t);
	out = sb.oom ? NULL : strdup(sb.buf != NULL ? sb.buf : "");
	strbuf_free(&sb);
	return out;
}

/*
 * json_parse gives cJSON's tree for JSON text (printed alike) and refuses what
 * is not JSON; fuzz/fuzz_jsonparse.c compares the two node for node.
 */
static void test_json_parse(void)
{
	static const char *const same[] = {
	    "{\"a\":\"\\u00e9\\ud83d\\ude00 \\\"q\\\" \\\\ \\/ \\b\\f\\n\\r\\t\",\"b\":[]}",
	    " [0,-0,1.5,-2e-3,1E+2,2147483648,-2147483649,1e400,true,false,null,{}] \n",
	    "{\"d\":{\"a\":1,\"a\":2},\"e\":[[[{\"k\":\"\\u0000x\"}]]]}",
	    "\"\xc3\xa9 raw UTF-8 and \xff a stray byte\"",
	    /* past 64 bytes: strings across the marks' words, long, escaped, white space */
	    "{\"metadata\":{\"name\":\"train-0\",\"labels\":{\"distenv.dev/inject\":\"true\"}},"
	    "\"long\":\"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef\",\"esc\":\"0123456789abcdef0123456789abcdef"
	    "0123456789 \\\"quoted\\\" and \\\\ \\u00e9 past sixty-four\",\"k\"  :\t\"v\" ,"
	    "\n\"arr\"\r\n:\t[ \"a\" ,\"b\"\n,\"\",{}, 12 ] "
	    ",\"last\":\"0123456789abcdef0123456789a\"}",
	    /* keys known from eight bytes ("name", "value") beside their look-alikes */
	    "[{\"name\":\"A\",\"value\":\"1\"},{\"name\" :\"B\",\"valueFrom\":{\"x\":1}},"
	    "{\"namex\":\"C\",\"nam\":\"\",\"value\" :2,\"na\\u006de\":\"D\",\"value\":[]},"
	    "\"name\",\":\",{\"valuee\":\"\\\"\",\"value\":\"\\\"e\"},{\"name\":{\"name\":\"\"}}]",
	    "{\"value\":\"\"}",
	};
	static const char *const refused[] = {
	    "",
	    "01",
	    "1.",
	    ".5",
	    "+1",
	    "{\"a\":1} x",
	    "[1,]",
	    "{\"a\" 1}",
	    "\"\\udc00\"",
	    "\"\\ud800x\"",
	    "\"\\q\"",
	    "tru",
	    "\"open",
	    "{\"a\":1,}",
	    "\xef\xbb\xbf{}",
	    "\f1",
	    "[1 2]",
	    "nul",
	    "{\"name\":}",
	    "{\"name\":",
	    "{\"value\":",
	    "{\"value\"",
	    "{\"name\"\"x\"}",
	    "{\"value\":1,\"name\":\"x\"",
	};
	size_t i;

	for (i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		cJSON *a = json_parse(same[i], strlen(same[i]));
		cJSON *b = cJSON_ParseWithLength(same[i], strlen(same[i]));
		char *pa = a ? cJSON_PrintUnformatted(a) : NULL;
		char *pb = b ? cJSON_PrintUnformatted(b) : NULL;
		CHECK(pa != NULL && pb != NULL && strcmp(pa, pb) == 0,
		      "json_parse %s: %s vs cJSON %s", same[i], pa ? pa : "(refused)",
		      pb ? pb : "(refused)");
		{
			/* In an admission's arena, strings are decoded in the parser's own copy. */
			char *text = strdup(same[i]), *pc, *want = a ? print_alone(a) : NULL;
			cJSON *c;

			arena_begin();
			c = json_parse(text, strlen(text));
			pc = c ? print_alone(c) : NULL;
			arena_end();
			CHECK(pc != NULL && want != NULL && strcmp(pc, want) == 0 &&
			          strcmp(text, same[i]) == 0,
			      "json_parse in an arena %s: %s vs outside %s (text after: %s)",
			      same[i], pc ? pc : "(refused)", want ? want : "(refused)", text);
			free(want);
			free(pc);
			free(text);
		}
		cJSON_free(pa);
		cJSON_free(pb);
		cJSON_Delete(a);
		cJSON_Delete(b);
	}
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		cJSON *a = json_parse(refused[i], strlen(refused[i]));
		char *text = strdup(refused[i]);
		CHECK(a == NULL, "json_parse accepted %s", refused[i]);
		cJSON_Delete(a);
		arena_begin();
		a = json_parse(text, strlen(text));
		arena_end();
		CHECK(a == NULL, "json_parse in an arena accepted %s", refused[i]);
		free(text);
	}
	{
		/* cJSON's nesting limit: 1,000 arrays deep is read, 1,001 is not. */
		char deep[2003];
		cJSON *a;
		memset(deep, '[', 1001);
		memset(deep + 1001, ']', 1001);
		a = json_parse(deep + 1, 2000);
		CHECK(a != NULL, "1,000 nested arrays refused");
		cJSON_Delete(a);
		a = json_parse(deep, 2002);
		CHECK(a == NULL, "1,001 nested arrays read");
		cJSON_Delete(a);
	}
}

int main(void)
{
	test_json_parse();
	test_getters();
	test_print();
	test_json_string();
	test_escape_random();
	TEST_MAIN_END("json");
}
