/*
 * yamljson: YAML streams to cJSON with kubectl's scalar rules, and its limits.
 */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "yamljson.h"

/* want: the compact JSON of the document array; or NULL and err_has: a substring of the error. */
static const struct {
	const char *name;
	const char *yaml;
	const char *want;
	const char *err_has;
} cases[] = {
    {"empty input", "", "[]", NULL},
    {"only comments", "# nothing\n# here\n", "[]", NULL},
    {"empty documents skipped", "---\n---\n", "[]", NULL},
    {"null document skipped", "a: 1\n---\n~\n---\nb: 2\n", "[{\"a\":1},{\"b\":2}]", NULL},
    {"two documents", "a: 1\n---\nb: x\n...\n", "[{\"a\":1},{\"b\":\"x\"}]", NULL},
    {"scalar document", "hello\n", "[\"hello\"]", NULL},
    {"json is yaml", "{\"a\": [1, 2.5, true, null, \"x\"]}", "[{\"a\":[1,2.5,true,null,\"x\"]}]",
     NULL},
    {"block sequence", "- a\n- b\n", "[[\"a\",\"b\"]]", NULL},
    {"flow mixed", "[1, \"2\", three]", "[[1,\"2\",\"three\"]]", NULL},
    {"bool true forms", "[true, True, TRUE, yes, Yes, YES, on, On, ON, y, Y]",
     "[[true,true,true,true,true,true,true,true,true,true,true]]", NULL},
    {"bool false forms", "[false, False, FALSE, no, No, NO, off, Off, OFF, n, N]",
     "[[false,false,false,false,false,false,false,false,false,false,false]]", NULL},
    {"not bools", "[tRUE, yES, ok, 'true', \"yes\"]",
     "[[\"tRUE\",\"yES\",\"ok\",\"true\",\"yes\"]]", NULL},
    {"null forms", "a: ~\nb:\nc: null\nd: Null\ne: NULL\nf: nULL\n",
     "[{\"a\":null,\"b\":null,\"c\":null,\"d\":null,\"e\":null,\"f\":\"nULL\"}]", NULL},
    {"quoted empty is a string", "a: ''\n", "[{\"a\":\"\"}]", NULL},
    {"decimal ints", "[0, 42, -7, +5, 1_000]", "[[0,42,-7,5,1000]]", NULL},
    {"prefixed ints", "[0x1F, 0o17, 0b101, -0x10]", "[[31,15,5,-16]]", NULL},
    {"leading zero is octal", "defaultMode: 0644\n", "[{\"defaultMode\":420}]", NULL},
    {"quoted octal stays a string", "mode: '0600'\n", "[{\"mode\":\"0600\"}]", NULL},
    {"bad octal falls back to float", "[08, 09.5]", "[[8,9.5]]", NULL},
    {"floats", "[1.5, .5, 1e3, -2.5e-1, 3.]", "[[1.5,0.5,1000,-0.25,3]]", NULL},
    {"beyond int32", "[4294967296, -1099511627776]", "[[4294967296,-1099511627776]]", NULL},
    {"beyond int64 is still a number", "[18446744073709551615, -9223372036854775808]",
     "[[1.8446744073709552e+19,-9.2233720368547758e+18]]", NULL},
    {"beyond uint64 is a float", "[18446744073709551616]", "[[1.8446744073709552e+19]]", NULL},
    {"float overflow stays text", "x: 1e400\n", "[{\"x\":\"1e400\"}]", NULL},
    {"strings that look close", "[1.2.3, 2024-01-01, v1, apps/v1, 0x, 1:30, -, +]",
     "[[\"1.2.3\",\"2024-01-01\",\"v1\",\"apps/v1\",\"0x\",\"1:30\",\"-\",\"+\"]]", NULL},
    {"literal block", "a: |\n  one\n  two\n", "[{\"a\":\"one\\ntwo\\n\"}]", NULL},
    {"folded block", "a: >-\n  one\n  two\n", "[{\"a\":\"one two\"}]", NULL},
    {"double-quoted escapes", "a: \"tab\\there \\u00e9\"\n", "[{\"a\":\"tab\\there \u00e9\"}]",
     NULL},
    {"tag str", "[!!str 123, !!str true, !!str ~]", "[[\"123\",\"true\",\"~\"]]", NULL},
    {"tag int float bool null", "[!!int \"42\", !!float 1, !!bool yes, !!null '']",
     "[[42,1,true,null]]", NULL},
    {"non-specific tag", "a: ! 12\n", "[{\"a\":\"12\"}]", NULL},
    {"foreign tag ignored", "a: !Ref 12\nb: !Ref x\n", "[{\"a\":12,\"b\":\"x\"}]", NULL},
    {"tag int mismatch", "a: !!int abc\n", NULL, "line 1: cannot read 'abc' as !!int"},
    {"infinity", "a: 1\nb: .inf\n", NULL, "line 2: '.inf' (infinity or NaN) cannot be represented"},
    {"nan", "- -.Inf\n", NULL, "cannot be represented in JSON"},
    {"bool key", "yes: 1\nNo: 2\n", "[{\"true\":1,\"false\":2}]", NULL},
    {"y and n keys are booleans too", "x: 1\ny: 2\nn: 3\n", "[{\"x\":1,\"true\":2,\"false\":3}]",
     NULL},
    {"int key", "0x10: a\n007: b\n", "[{\"16\":\"a\",\"7\":\"b\"}]", NULL},
    {"quoted keys stay", "\"yes\": 1\n'0x10': 2\n", "[{\"yes\":1,\"0x10\":2}]", NULL},
    {"null key", "~: 1\n", NULL, "line 1: a mapping key may not be null"},
    {"collection key", "? [a]\n: 1\n", NULL, "line 1: a mapping key must be a scalar"},
    {"duplicate key", "a: 1\nb: 2\na: 3\n", NULL, "line 3: duplicate key 'a'"},
    {"duplicate after resolution", "true: 1\nyes: 2\n", NULL, "duplicate key 'true'"},
    {"same key in two mappings", "a: {x: 1}\nb: {x: 2}\n", "[{\"a\":{\"x\":1},\"b\":{\"x\":2}}]",
     NULL},
    {"alias copies", "a: &x {b: 1}\nc: *x\n", "[{\"a\":{\"b\":1},\"c\":{\"b\":1}}]", NULL},
    {"scalar alias", "a: &v 5\nb: *v\n", "[{\"a\":5,\"b\":5}]", NULL},
    {"anchored key", "&k a: 1\nb: *k\n", "[{\"a\":1,\"b\":\"a\"}]", NULL},
    {"alias as key", "x: &k foo\n*k : 2\n", "[{\"x\":\"foo\",\"foo\":2}]", NULL},
    {"anchor shadowing", "- &a 1\n- &a 2\n- *a\n", "[[1,2,2]]", NULL},
    {"anchors are per document", "a: &x 1\n---\nb: *x\n", NULL, "line 3: unknown anchor 'x'"},
    {"unknown alias", "a: *nope\n", NULL, "line 1: unknown anchor 'nope'"},
    {"self-reference", "a: &s [*s]\n", NULL, "unknown anchor 's'"},
    {"merge key", "base: &b {p: 1, q: 2}\nd:\n  <<: *b\n  q: 3\n",
     "[{\"base\":{\"p\":1,\"q\":2},\"d\":{\"q\":3,\"p\":1}}]", NULL},
    {"merge list, first wins", "a: &a {k: 1}\nb: &b {k: 2, m: 3}\nc:\n  <<: [*a, *b]\n",
     "[{\"a\":{\"k\":1},\"b\":{\"k\":2,\"m\":3},\"c\":{\"k\":1,\"m\":3}}]", NULL},
    {"merge inline, anchor kept", "c:\n  <<: &m {k: 1}\nd: *m\n",
     "[{\"c\":{\"k\":1},\"d\":{\"k\":1}}]", NULL},
    {"merge of a scalar", "a:\n  <<: 1\n", NULL, "line 2: merge key '<<' needs a mapping"},
    {"quoted << is a key", "'<<': 1\n", "[{\"<<\":1}]", NULL},
    {"unclosed flow", "a: [1, 2\n", NULL, "line 2: "},
    {"mapping in scalar", "a: b: c\n", NULL, "line 1: mapping values are not allowed"},
    {"bad indentation", "a:\n  b: 1\n c: 2\n", NULL, "line 3: "},
    {"unterminated quote", "a: 'x\n", NULL, "found unexpected end of stream"},
    {"tab indentation", "a:\n\tb: 1\n", NULL, "line 2: "},
    {"invalid utf-8", "a: 1\nb: \xff\n", NULL, "line 2: invalid leading UTF-8 octet"},
    {"nul byte", "a: \001\n", NULL, "control characters are not allowed"},
    {"statefulset",
     "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: ddp\n  annotations:\n"
     "    distenv.dev/port: \"29400\"\nspec:\n  replicas: 4\n  ordinals: {start: 1}\n",
     "[{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"ddp\","
     "\"annotations\":{\"distenv.dev/port\":\"29400\"}},\"spec\":{\"replicas\":4,"
     "\"ordinals\":{\"start\":1}}}]",
     NULL},
};

static void run_case(const char *name, const char *yaml, size_t len, const char *want,
                     const char *err_has)
{
	char err[512] = "untouched";
	cJSON *got = yamljson_parse(yaml, len, err, sizeof(err));

	if (want) {
		char *txt = got ? cJSON_PrintUnformatted(got) : NULL;
		CHECK(got != NULL, "%s: unexpected error: %s", name, err);
		if (got) {
			CHECK(txt && strcmp(txt, want) == 0, "%s: got %s, want %s", name,
			      txt ? txt : "(null)", want);
		}
		free(txt);
	} else {
		CHECK(got == NULL, "%s: parsed, want error containing '%s'", name, err_has);
		CHECK(strstr(err, err_has) != NULL, "%s: error '%s' lacks '%s'", name, err,
		      err_has);
		CHECK(strncmp(err, "line ", 5) == 0, "%s: error '%s' does not start with a line",
		      name, err);
	}
	cJSON_Delete(got);
}

/* a: &a [x x x ... (10)], b: &b [*a * 10], ... : grows tenfold per level. */
static char *billion_laughs(int levels)
{
	size_t cap = 4096, n = 0;
	char *s = malloc(cap);
	int l, i;

	n += (size_t)snprintf(s + n, cap - n, "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
	for (l = 1; l < levels; l++) {
		n += (size_t)snprintf(s + n, cap - n, "l%d: &l%d [", l, l);
		for (i = 0; i < 10; i++)
			n +=
			    (size_t)snprintf(s + n, cap - n, "*l%d%s", l - 1, i < 9 ? ", " : "]\n");
	}
	return s;
}

static char *nested(int depth)
{
	char *s = malloc((size_t)depth * 2 + 1);
	int i;

	for (i = 0; i < depth; i++) {
		s[i] = '[';
		s[depth * 2 - 1 - i] = ']';
	}
	s[depth * 2] = '\0';
	return s;
}

static void test_limits(void)
{
	char err[512];
	char *s;
	cJSON *got;
	size_t n, i;

	s = billion_laughs(9);
	got = yamljson_parse(s, strlen(s), err, sizeof(err));
	CHECK(got == NULL, "billion laughs parsed");
	CHECK(strstr(err, "aliases expand to more than 100000 nodes") != NULL, "laughs: %s", err);
	cJSON_Delete(got);
	free(s);

	s = billion_laughs(4); /* 11 + 111 + 1111 + 11111 nodes: within the budget */
	got = yamljson_parse(s, strlen(s), err, sizeof(err));
	CHECK(got != NULL, "4 levels of aliases: %s", err);
	CHECK(got &&
	          cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(got, 0), "l3")) == 10,
	      "l3 has 10 copies");
	cJSON_Delete(got);
	free(s);

	s = nested(YAMLJSON_MAX_DEPTH);
	got = yamljson_parse(s, strlen(s), err, sizeof(err));
	CHECK(got != NULL, "64 levels: %s", err);
	cJSON_Delete(got);
	free(s);

	s = nested(YAMLJSON_MAX_DEPTH + 1);
	got = yamljson_parse(s, strlen(s), err, sizeof(err));
	CHECK(got == NULL && strstr(err, "nesting deeper than 64 levels"), "65 levels: %s", err);
	cJSON_Delete(got);
	free(s);

	/* an alias of 40 levels landing 30 levels deep would nest 70 levels */
	{
		char *inner = nested(40);
		char *doc = malloc(strlen(inner) + 128);
		size_t off = (size_t)sprintf(doc, "a: &x %s\nb: ", inner);
		for (i = 0; i < 30; i++)
			doc[off++] = '[';
		off += (size_t)sprintf(doc + off, "*x");
		for (i = 0; i < 30; i++)
			doc[off++] = ']';
		doc[off] = '\0';
		got = yamljson_parse(doc, off, err, sizeof(err));
		CHECK(got == NULL && strstr(err, "line 2: nesting deeper than 64 levels"),
		      "deep alias: %s", err);
		cJSON_Delete(got);
		free(inner);
		free(doc);
	}

	/* many plain nodes without aliases are not limited by the alias budget */
	n = 300000;
	s = malloc(n * 2 + 3);
	s[0] = '[';
	for (i = 0; i < n; i++) {
		s[1 + 2 * i] = '0';
		s[2 + 2 * i] = ',';
	}
	s[2 * n] = ']';
	s[2 * n + 1] = '\0';
	got = yamljson_parse(s, strlen(s), err, sizeof(err));
	CHECK(got != NULL && cJSON_GetArraySize(cJSON_GetArrayItem(got, 0)) == (int)n,
	      "300000 items: %s", got ? "wrong size" : err);
	cJSON_Delete(got);
	free(s);

	/* a wide mapping: duplicate detection stays linear and exact */
	n = 50000;
	s = malloc(n * 16 + 32);
	{
		size_t off = 0;
		for (i = 0; i < n; i++)
			off += (size_t)sprintf(s + off, "k%zu: %zu\n", i, i);
		got = yamljson_parse(s, off, err, sizeof(err));
		CHECK(got != NULL && cJSON_GetArraySize(cJSON_GetArrayItem(got, 0)) == (int)n,
		      "50000 keys: %s", got ? "wrong size" : err);
		cJSON_Delete(got);
		off += (size_t)sprintf(s + off, "k17: again\n");
		got = yamljson_parse(s, off, err, sizeof(err));
		CHECK(got == NULL && strstr(err, "line 50001: duplicate key 'k17'"), "dup: %s",
		      err);
		cJSON_Delete(got);
	}
	free(s);

	/* 2^53 is exact in the tree (cJSON prints it with 15 digits) */
	got = yamljson_parse("9007199254740992", 16, err, sizeof(err));
	CHECK(got && cJSON_GetArrayItem(got, 0)->valuedouble == 9007199254740992.0, "2^53");
	cJSON_Delete(got);

	/* embedded NUL counts as input, not as the end */
	got = yamljson_parse("a: 1\0b: 2", 9, err, sizeof(err));
	CHECK(got == NULL, "NUL inside the length must be rejected");
	cJSON_Delete(got);

	/* errlen 0 must not write */
	got = yamljson_parse("a: [", 4, NULL, 0);
	CHECK(got == NULL, "error without a buffer");
	cJSON_Delete(got);
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(cases[i].name, cases[i].yaml, strlen(cases[i].yaml), cases[i].want,
		         cases[i].err_has);
	test_limits();
	TEST_MAIN_END("yamljson");
}
