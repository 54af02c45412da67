/*
 * The framework table is the one list of frameworks: every copy of the names
 * written elsewhere (the annotation's help, the chart's values.schema.json
 * enum, deploy/config.example.yaml, README's framework table) must equal it,
 * and each framework's variables come from its own row.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "annotation.h"
#include "config.h"
#include "env.h"
#include "framework.h"
#include "testutil.h"
#include "testworld.h"

/*
 * strdup as the library's, but the one after strdup_fail more calls returns
 * NULL (out of memory): every env entry's name and value is a strdup
 * (env_list_add), so each entry a framework writes can be made to fail.
 * strdup_calls counts the calls. -1: none fails.
 */
static long strdup_fail = -1, strdup_calls;

char *strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p;

	strdup_calls++;
	if (strdup_fail >= 0 && strdup_fail-- == 0)
		return NULL;
	p = malloc(n);
	return p != NULL ? memcpy(p, s, n) : NULL;
}

static void test_table(void)
{
	unsigned seen = 0;
	size_t i;

	CHECK(framework_count >= 3, "%zu frameworks", framework_count);
	for (i = 0; i < framework_count; i++) {
		const struct framework *fw = framework_table[i];
		CHECK(fw->name && fw->help && fw->add && fw->from_addr && fw->from_port,
		      "row %zu is complete", i);
		CHECK(fw->bit != 0 && (fw->bit & (fw->bit - 1)) == 0 && !(seen & fw->bit),
		      "%s: one bit of its own", fw->name);
		seen |= fw->bit;
		CHECK(framework_named(fw->name, strlen(fw->name)) == fw, "%s by name", fw->name);
		CHECK(framework_of(fw->bit) == fw, "%s by bit", fw->name);
		/* a name of the same length, sorting below and above it, is none */
		{
			char other[32];
			size_t n = strlen(fw->name);

			CHECK(n < sizeof(other), "%s: a short name", fw->name);
			if (n < sizeof(other)) {
				memcpy(other, fw->name, n + 1);
				other[0] = '0';
				CHECK(framework_named(other, n) == NULL, "%s: %s is a framework",
				      fw->name, other);
				other[0] = '~';
				CHECK(framework_named(other, n) == NULL, "%s: %s is a framework",
				      fw->name, other);
			}
		}
	}
	CHECK(framework_named("pytorc", 6) == NULL && framework_named("mxnet", 5) == NULL,
	      "no framework of another name");
}

/* The annotation's help names every framework, in the table's order. */
static void test_annotation(void)
{
	const struct annotation_def *d = annotation_find(ANNOTATION_PREFIX "frameworks");
	char names[256], want[300];

	framework_names(names, sizeof(names), ", ");
	snprintf(want, sizeof(want), "of %s", names);
	CHECK(d != NULL && strstr(d->what, want) != NULL, "annotation what '%s' lacks '%s'",
	      d ? d->what : "", want);
	CHECK(d != NULL && strstr(d->meaning, want) != NULL, "annotation meaning '%s' lacks '%s'",
	      d ? d->meaning : "", want);
}

/* Finds the first object member called key anywhere below o. */
static const cJSON *find(const cJSON *o, const char *key)
{
	const cJSON *c;

	for (c = o ? o->child : NULL; c != NULL; c = c->next) {
		const cJSON *hit;
		if (c->string && strcmp(c->string, key) == 0)
			return c;
		if ((hit = find(c, key)) != NULL)
			return hit;
	}
	return NULL;
}

/* The chart's schema enum of defaults.frameworks is the table's names. */
static void test_chart_schema(void)
{
	char *txt = test_read("charts/distenv/values.schema.json", NULL);
	cJSON *schema = txt ? cJSON_Parse(txt) : NULL;
	const cJSON *fws = find(schema, "frameworks");
	const cJSON *en = cJSON_GetObjectItem(cJSON_GetObjectItem(fws, "items"), "enum"), *e;
	size_t i = 0;

	CHECK(schema != NULL && cJSON_IsArray(en), "values.schema.json has a frameworks enum");
	cJSON_ArrayForEach(e, en)
	{
		CHECK(i < framework_count && cJSON_IsString(e) &&
		          strcmp(e->valuestring, framework_table[i]->name) == 0,
		      "schema enum item %zu is %s", i,
		      i < framework_count ? framework_table[i]->name : "(none)");
		i++;
	}
	CHECK(i == framework_count, "schema enum has %zu names, the table %zu", i, framework_count);
	cJSON_Delete(schema);
	free(txt);
}

/* deploy/config.example.yaml, the README's and docs/environment.md's framework tables name
 * every framework. */
static void test_docs(void)
{
	char *example = test_read("deploy/config.example.yaml", NULL),
	     *readme = test_read("README.md", NULL), *env = test_read("docs/environment.md", NULL);
	char names[256], want[300];
	size_t i;

	framework_names(names, sizeof(names), ", ");
	snprintf(want, sizeof(want), "string of %s.", names);
	CHECK(example != NULL && strstr(example, want) != NULL,
	      "deploy/config.example.yaml lacks '%s'", want);
	for (i = 0; i < framework_count; i++) {
		snprintf(want, sizeof(want), "\n| %s |", framework_table[i]->name);
		CHECK(readme != NULL && strstr(readme, want) != NULL,
		      "README's framework table has no row '| %s |'", framework_table[i]->name);
		CHECK(env != NULL && strstr(env, want) != NULL,
		      "docs/environment.md's framework table has no row '| %s |'",
		      framework_table[i]->name);
	}
	free(example);
	free(readme);
	free(env);
}

/* The config reader knows exactly the table's names. */
static void test_config(void)
{
	unsigned mask;
	size_t i;

	for (i = 0; i < framework_count; i++)
		CHECK(config_parse_frameworks(framework_table[i]->name, &mask) == 0 &&
		          mask == framework_table[i]->bit,
		      "config reads %s", framework_table[i]->name);
	CHECK(config_parse_frameworks("mxnet", &mask) != 0, "config refuses mxnet");
}

/* Rank `rank` of StatefulSet ml/ddp, world 4, with only framework fw (variant v: 0 plain,
 * 1 elastic 2:4 with max-restarts 3, 2 a one-process pod). */
static void world(struct topology *t, const struct framework *fw, int v, long rank)
{
	test_world(t, &kind_statefulset, "ddp", rank, 4, 29500, fw->bit);
	strcpy(t->nproc, v == 2 ? "1" : "8");
	t->processes = v == 2 ? 1 : 8;
	t->one_process = v == 2;
	t->elastic_min = v == 1 ? 2 : 0;
	t->elastic_max = v == 1 ? 4 : 0;
	t->max_restarts = v == 1 ? 3 : -1;
}

static int listed(const char *const *names, const char *name)
{
	for (; *names != NULL; names++)
		if (strcmp(*names, name) == 0)
			return 1;
	return 0;
}

/*
 * Out of memory is never a partial environment: for every framework and every
 * allocation of an entry it writes, a failed one fails the whole build
 * (env_build returns -1, which the admission answers as an error), and the
 * build that does not fail gives every variable.
 */
static void test_out_of_memory(void)
{
	size_t i;
	int v;

	for (i = 0; i < framework_count; i++)
		for (v = 0; v < 3; v++) {
			const struct framework *fw = framework_table[i];
			struct topology t;
			struct env_list env;
			long calls, k, partial = 0;
			size_t n;

			world(&t, fw, v, 1);
			strdup_calls = 0;
			if (env_build(&t, &env) != 0) {
				CHECK(0, "%s variant %d: env_build fails with memory", fw->name, v);
				continue;
			}
			calls = strdup_calls;
			n = env.n;
			env_list_free(&env);
			CHECK(n > 0 && calls >= (long)n,
			      "%s variant %d: %zu variables, %ld strdups", fw->name, v, n, calls);
			for (k = 0; k < calls; k++) {
				strdup_fail = k;
				if (env_build(&t, &env) == 0) {
					partial++;
					env_list_free(&env);
				}
				strdup_fail = -1;
			}
			CHECK(partial == 0,
			      "%s variant %d: %ld of %ld failed allocations built an env", fw->name,
			      v, partial, calls);
		}
}

/*
 * from_addr and from_port are exactly the variables that follow a container's
 * own MASTER_ADDR or MASTER_PORT (env_build_master), besides those two: plan
 * denies a container whose MASTER_ADDR cannot be read at admission unless it
 * sets each of them, so a name missing there is a variable left pointing at
 * the wrong host, and one too many a needless denial.
 */
static void test_from_master(void)
{
	size_t i, k;
	int v;

	for (i = 0; i < framework_count; i++) {
		const struct framework *fw = framework_table[i];
		int met_addr = 0, met_port = 0;

		for (v = 0; v < 3; v++) {
			struct topology t;
			struct env_list base, addr, port;

			world(&t, fw, v, 1);
			if (env_build(&t, &base) != 0 ||
			    env_build_master(&t, "own-master.example", 0, &addr) != 0 ||
			    env_build_master(&t, NULL, 4242, &port) != 0) {
				CHECK(0, "%s variant %d: env_build", fw->name, v);
				continue;
			}
			for (k = 0; k < base.n; k++) {
				const char *name = base.vars[k].name;
				const char *a = test_env_value(&addr, name),
				           *p = test_env_value(&port, name);
				int moved_a = a == NULL || strcmp(a, base.vars[k].value) != 0;
				int moved_p = p == NULL || strcmp(p, base.vars[k].value) != 0;

				if (strcmp(name, "MASTER_ADDR") == 0 ||
				    strcmp(name, "MASTER_PORT") == 0)
					continue;
				CHECK(moved_a == listed(fw->from_addr, name),
				      "%s variant %d: %s follows MASTER_ADDR: %d, from_addr lists "
				      "it: %d",
				      fw->name, v, name, moved_a, listed(fw->from_addr, name));
				CHECK(moved_p == listed(fw->from_port, name),
				      "%s variant %d: %s follows MASTER_PORT: %d, from_port lists "
				      "it: %d",
				      fw->name, v, name, moved_p, listed(fw->from_port, name));
				met_addr += listed(fw->from_addr, name);
				met_port += listed(fw->from_port, name);
			}
			env_list_free(&base);
			env_list_free(&addr);
			env_list_free(&port);
		}
		/* every name listed is written in some pod */
		for (k = 0; fw->from_addr[k] != NULL; k++)
			;
		CHECK(met_addr >= (int)k, "%s: from_addr lists %zu names, met %d times", fw->name,
		      k, met_addr);
		for (k = 0; fw->from_port[k] != NULL; k++)
			;
		CHECK(met_port >= (int)k, "%s: from_port lists %zu names, met %d times", fw->name,
		      k, met_port);
	}
}

/*
 * A row whose help is a plain list of names ("A, B, C") lists exactly the
 * variables it writes, in their order (render --help and the README say so).
 */
static void test_help_lists(void)
{
	size_t i, k;

	for (i = 0; i < framework_count; i++) {
		const struct framework *fw = framework_table[i];
		struct topology t;
		struct env_list env;
		char want[512] = "";

		if (strspn(fw->help, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_, ") != strlen(fw->help))
			continue; /* a description, not a list */
		world(&t, fw, 0, 1);
		if (env_build(&t, &env) != 0) {
			CHECK(0, "%s: env_build", fw->name);
			continue;
		}
		for (k = 0; k < env.n; k++)
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%s",
			         k ? ", " : "", env.vars[k].name);
		CHECK_STR(fw->help, want, fw->name);
		env_list_free(&env);
	}
}

/* 1 when help names name: as a whole word, or by a prefix written with a star (PET_*). */
static int help_names(const char *help, const char *name)
{
	static const char word[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789";
	const char *p;
	size_t n = strlen(name);

	for (p = strstr(help, name); p != NULL; p = strstr(p + 1, name))
		if ((p == help || strchr(word, p[-1]) == NULL) &&
		    (p[n] == '\0' || strchr(word, p[n]) == NULL))
			return 1;
	for (p = strchr(help, '*'); p != NULL; p = strchr(p + 1, '*')) {
		const char *b = p;
		while (b > help && strchr(word, b[-1]) != NULL)
			b--;
		if (p > b && strncmp(name, b, (size_t)(p - b)) == 0)
			return 1;
	}
	return 0;
}

/* Every row's help (render --help, the README) names every variable it writes, in any pod. */
static void test_help_names(void)
{
	struct topology t;
	struct env_list env;
	size_t n, k;

	/* each row in each of world()'s three pods: plain, elastic, one process */
	for (n = 0; n < framework_count * 3; n++) {
		const struct framework *fw = framework_table[n / 3];

		int built;

		world(&t, fw, (int)(n % 3), 0);
		built = env_build(&t, &env) == 0;
		CHECK(built, "%s: env_build", fw->name);
		for (k = 0; built && k < env.n; k++)
			CHECK(help_names(fw->help, env.vars[k].name),
			      "%s pod %zu: help '%s' does not name %s", fw->name, n % 3, fw->help,
			      env.vars[k].name);
		if (built)
			env_list_free(&env);
	}
}

/*
 * PET_MAX_RESTARTS is given an elastic world whose max-restarts is set, 0
 * included (torchrun then restarts nothing): -1 (not set) gives none, 0 gives
 * "0", 1 gives "1"; a world that is not elastic gets none at 0.
 */
static void test_max_restarts(void)
{
	static const struct {
		int elastic;
		long max_restarts;
		const char *want; /* NULL: absent */
	} rows[] = {
	    {1, -1, NULL},
	    {1, 0, "0"},
	    {1, 1, "1"},
	    {0, 0, NULL},
	};
	const struct framework *fw = NULL;
	size_t i;

	for (i = 0; i < framework_count; i++)
		if (strcmp(framework_table[i]->name, "pytorch") == 0)
			fw = framework_table[i];
	CHECK(fw != NULL, "the table has pytorch");
	if (fw == NULL)
		return;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct topology t;
		struct env_list env;
		const char *v;

		world(&t, fw, rows[i].elastic ? 1 : 0, 1);
		t.max_restarts = rows[i].max_restarts;
		CHECK(env_build(&t, &env) == 0, "row %zu: env_build", i);
		v = test_env_value(&env, "PET_MAX_RESTARTS");
		CHECK(rows[i].want == NULL ? v == NULL : v != NULL && strcmp(v, rows[i].want) == 0,
		      "elastic %d, max-restarts %ld: PET_MAX_RESTARTS %s (want %s)",
		      rows[i].elastic, rows[i].max_restarts, v ? v : "absent",
		      rows[i].want ? rows[i].want : "absent");
		env_list_free(&env);
	}
}

int main(void)
{
	test_table();
	test_help_names();
	test_out_of_memory();
	test_from_master();
	test_max_restarts();
	test_help_lists();
	test_annotation();
	test_chart_schema();
	test_docs();
	test_config();
	TEST_MAIN_END("framework");
}
