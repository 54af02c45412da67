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

int main(void)
{
	test_table();
	test_annotation();
	test_chart_schema();
	test_docs();
	test_config();
	TEST_MAIN_END("framework");
}
