/*
 * A container's own values of distenv's variables: how each is read
 * (ownenv_value) and how it stands against the world (ownenv_judge), one row
 * per edge.
 */
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "ownenv.h"
#include "testutil.h"

/* Rank 1 of StatefulSet ml/ddp, world 4, Service ddp. */
static void world(struct topology *t, long rank, long size)
{
	memset(t, 0, sizeof(*t));
	t->kind = &kind_statefulset;
	snprintf(t->ns, sizeof(t->ns), "ml");
	snprintf(t->workload, sizeof(t->workload), "ddp");
	snprintf(t->service, sizeof(t->service), "ddp");
	snprintf(t->domain, sizeof(t->domain), ".ddp.ml.svc.cluster.local");
	t->rank = rank;
	t->world_size = size;
	t->group = -1;
	t->port = 29500;
}

#define A0 "ddp-0.ddp.ml.svc.cluster.local"

static const struct {
	const char *name;
	const char *var, *own, *world;
	long rank, size, ranks;
	enum ownenv_verdict want;
	const char *want_msg; /* the whole message, or a part of it ("~..."), or NULL */
} judge_cases[] = {
    {"RANK the pod's own: agrees", "RANK", "1", "1", 1, 4, 0, OWNENV_AGREES, NULL},
    {"RANK of another pod: denied with both and the fix", "RANK", "0", "1", 1, 4, 0, OWNENV_DENY,
     "distenv: container train sets RANK=0, but this pod is rank 1 of StatefulSet ml/ddp (world "
     "size 4), so two pods would claim one rank: remove RANK from its env (distenv gives each "
     "pod its own)"},
    {"NODE_RANK literal in a template of 4 ranks: denied whatever it is", "NODE_RANK", "0", "0", 0,
     4, 4, OWNENV_DENY, "~sets NODE_RANK=0 for each of its 4 ranks"},
    {"RANK literal in a template of 2 ranks, right for rank 0: denied", "RANK", "0", "0", 0, 2, 2,
     OWNENV_DENY, "~for each of its 2 ranks"},
    {"RANK literal in a template of one rank: left to the pod", "RANK", "3", "0", 0, 4, 1,
     OWNENV_AGREES, NULL},
    {"PET_NODE_RANK, JAX_PROCESS_ID, DMLC_TASK_ID, PADDLE_RANK are per rank", "PADDLE_RANK", "0",
     "2", 2, 4, 0, OWNENV_DENY, "~remove PADDLE_RANK"},
    {"WORLD_SIZE counted in processes: warned with both values and the effect", "WORLD_SIZE", "32",
     "4", 1, 4, 0, OWNENV_WARN,
     "distenv: container train: WORLD_SIZE=32, not distenv's 4: env:// waits for that many; "
     "torchrun sets its own"},
    {"WORLD_SIZE the same: agrees", "WORLD_SIZE", "4", "4", 1, 4, 0, OWNENV_AGREES, NULL},
    {"PET_NNODES: torchrun waits", "PET_NNODES", "8", "4", 1, 4, 0, OWNENV_WARN,
     "~torchrun waits for that many nodes"},
    {"a variable without an effect of its own: generic", "PET_RDZV_ID", "x", "ml-ddp", 1, 4, 0,
     OWNENV_WARN, "~its own value is used, not distenv's"},
    {"MASTER_ADDR rank 0 by its short name: agrees", "MASTER_ADDR", "ddp-0.ddp", A0, 1, 4, 0,
     OWNENV_AGREES, NULL},
    {"MASTER_ADDR rank 0, namespace form: agrees", "MASTER_ADDR", "ddp-0.ddp.ml", A0, 1, 4, 0,
     OWNENV_AGREES, NULL},
    {"MASTER_ADDR rank 0, with the root's dot: agrees", "MASTER_ADDR", A0 ".", A0, 1, 4, 0,
     OWNENV_AGREES, NULL},
    {"MASTER_ADDR another pod of the world: denied", "MASTER_ADDR", "ddp-3.ddp", A0, 1, 4, 0,
     OWNENV_DENY, "~which is not rank 0's pod of StatefulSet ml/ddp (ddp-3"},
    {"MASTER_ADDR no pod of the world under its Service: denied", "PET_MASTER_ADDR",
     "mnist-master-0.ddp.ml.svc.cluster.local", A0, 1, 4, 0, OWNENV_DENY, "~(distenv gives " A0},
    {"MASTER_ADDR a pod under another subdomain: cannot be told", "MASTER_ADDR", "ddp-0.other", A0,
     1, 4, 0, OWNENV_WARN, "~is not a name of rank 0's pod: every rank meets there; check it"},
    {"MASTER_ADDR a Service's name: cannot be told", "MASTER_ADDR", "mnist-master-0", A0, 1, 4, 0,
     OWNENV_WARN, "~MASTER_ADDR=mnist-master-0"},
    {"MASTER_ADDR an IP: cannot be told", "MASTER_ADDR", "10.0.0.7", A0, 1, 4, 0, OWNENV_WARN,
     NULL},
    {"MASTER_ADDR localhost in a world of 4: denied", "MASTER_ADDR", "localhost", A0, 1, 4, 0,
     OWNENV_DENY, "~which is each pod itself"},
    {"MASTER_ADDR 127.0.0.1 in a world of 1: warned, not denied", "MASTER_ADDR", "127.0.0.1", A0, 0,
     1, 0, OWNENV_WARN, NULL},
    {"MASTER_ADDR localhost in a world of 2: denied", "MASTER_ADDR", "localhost", A0, 1, 2, 0,
     OWNENV_DENY,
     "distenv: container train sets MASTER_ADDR=localhost, which is each pod itself: in a world "
     "of 2 the other ranks never reach rank 0; remove it (distenv gives " A0 ")"},
    {"TF_CONFIG not the pod's in a world of 4: denied", "TF_CONFIG", "{\"task\":{}}", "{}", 1, 4, 0,
     OWNENV_DENY, "~gives them all one task"},
    {"TF_CONFIG literal in a template of 4 ranks: denied even if rank 0's", "TF_CONFIG", "{}", "{}",
     0, 4, 4, OWNENV_DENY, NULL},
    {"TF_CONFIG not the pod's in a world of 2: denied", "TF_CONFIG", "{\"task\":{}}", "{}", 1, 2, 0,
     OWNENV_DENY,
     "distenv: container train sets TF_CONFIG itself: one value for the 2 ranks of StatefulSet "
     "ml/ddp gives them all one task; remove it (distenv gives each pod its own)"},
    {"TF_CONFIG literal in a template of 2 ranks: denied even if rank 0's", "TF_CONFIG", "{}", "{}",
     0, 2, 2, OWNENV_DENY, "~one value for the 2 ranks of StatefulSet ml/ddp"},
    {"TF_CONFIG not distenv's in a world of 1: warned", "TF_CONFIG", "{\"task\":{}}", "{}", 0, 1, 0,
     OWNENV_WARN, "~TensorFlow uses its cluster and task"},
    {"a long value: the warning names the variable, under 120", "TF_CONFIG",
     "{\"cluster\":{\"worker\":[\"a-very-long-host-name-0.example:2222\"]},\"task\":{\"type\":"
     "\"worker\",\"index\":0}}",
     "{}", 0, 1, 0, OWNENV_WARN, "~keeps its own TF_CONFIG (render shows both)"},
};

static void test_judge(void)
{
	size_t i;

	for (i = 0; i < sizeof(judge_cases) / sizeof(judge_cases[0]); i++) {
		struct topology t;
		char msg[600] = "";
		enum ownenv_verdict v;

		world(&t, judge_cases[i].rank, judge_cases[i].size);
		v = ownenv_judge(&t, "train", judge_cases[i].var, judge_cases[i].own, "",
		                 judge_cases[i].world, judge_cases[i].ranks, msg, sizeof(msg));
		CHECK(v == judge_cases[i].want, "%s: verdict %d, want %d (%s)", judge_cases[i].name,
		      (int)v, (int)judge_cases[i].want, msg);
		if (v == OWNENV_WARN)
			CHECK(strlen(msg) < 120 && strncmp(msg, "distenv: ", 9) == 0,
			      "%s: warning not a whole distenv: line under 120: '%s'",
			      judge_cases[i].name, msg);
		if (judge_cases[i].want_msg == NULL)
			continue;
		if (judge_cases[i].want_msg[0] == '~')
			CHECK(strstr(msg, judge_cases[i].want_msg + 1) != NULL,
			      "%s: '%s' lacks '%s'", judge_cases[i].name, msg,
			      judge_cases[i].want_msg + 1);
		else
			CHECK(strcmp(msg, judge_cases[i].want_msg) == 0, "%s: got '%s'",
			      judge_cases[i].name, msg);
	}
}

/* What a pod's answer says where ownenv_judge denies: the user's value wins in a pod. */
static const struct {
	const char *name;
	const char *ctr, *var, *own, *world;
	const char *want; /* the whole warning */
} wrong_cases[] = {
    {"RANK of another pod: both values and the fix", "train", "RANK", "0", "1",
     "distenv: container train: RANK=0, not distenv's 1: another pod has that rank; remove it"},
    {"PADDLE_RANK is per rank too", "train", "PADDLE_RANK", "0", "2",
     "distenv: container train: PADDLE_RANK=0, not distenv's 2: another pod has that rank; "
     "remove it"},
    {"MASTER_ADDR too long with both values: the variable named alone", "train", "MASTER_ADDR",
     "ddp-3.ddp.ml", A0,
     "distenv: container train keeps its own MASTER_ADDR (render shows both): not rank 0's pod; "
     "remove it"},
    {"PET_MASTER_ADDR loopback", "t", "PET_MASTER_ADDR", "localhost", "a-0.a",
     "distenv: container t: PET_MASTER_ADDR=localhost, not distenv's a-0.a: not rank 0's pod; "
     "remove it"},
    {"TF_CONFIG", "t", "TF_CONFIG", "{}", "{\"task\":{}}",
     "distenv: container t: TF_CONFIG={}, not distenv's {\"task\":{}}: not this pod's task; "
     "remove it"},
    {"a container name of 63: cut, the effect whole",
     "a-container-name-that-is-sixty-three-characters-long-xxxxxxxxxx", "MEGASCALE_SLICE_ID", "0",
     "1",
     "distenv: container a-container-name-tha... keeps its own MEGASCALE_SLICE_ID: another pod "
     "has that rank; remove it"},
};

static void test_wrong_warning(void)
{
	size_t i;

	for (i = 0; i < sizeof(wrong_cases) / sizeof(wrong_cases[0]); i++) {
		char msg[600] = "";

		ownenv_wrong_warning(wrong_cases[i].ctr, wrong_cases[i].var, wrong_cases[i].own, "",
		                     wrong_cases[i].world, msg, sizeof(msg));
		CHECK(strcmp(msg, wrong_cases[i].want) == 0 && strlen(msg) < 120,
		      "%s: got '%s' (%zu)", wrong_cases[i].name, msg, strlen(msg));
	}
}

/* A container of env entries; R(v): an entry RANK=v. */
#define ENV(entries) "{\"env\":[" entries "]}"
#define R(v)         "{\"name\":\"RANK\",\"value\":\"" v "\"}"

static const struct {
	const char *name;
	const char *ctr, *meta; /* JSON; meta NULL: a pod template */
	int want;
	const char *want_value, *want_how;
} value_cases[] = {
    {"absent", "{\"env\":[{\"name\":\"X\",\"value\":\"1\"}]}", "{}", 0, NULL, ""},
    {"no env at all", "{}", "{}", 0, NULL, ""},
    {"literal", "{\"env\":[{\"name\":\"RANK\",\"value\":\"3\"}]}", "{}", 1, "3", ""},
    {"literal without value: empty", "{\"env\":[{\"name\":\"RANK\"}]}", "{}", 1, "", ""},
    /* a name listed twice: the kubelet's map keeps the last (kubelet_pods.go) */
    {"listed twice: the last entry counts", ENV(R("3") "," R("4")), "{}", 1, "4", ""},
    {"listed three times, others between: the last",
     ENV(R("3") ",{\"name\":\"X\"}," R("4") ",{\"name\":\"RANKS\"}," R("5") ",{\"name\":\"Y\"}"),
     "{}", 1, "5", ""},
    {"a literal, then a $(reference) to it: read at run time", ENV(R("3") "," R("$(RANK)0")), "{}",
     -1, NULL, ""},
    {"a literal, then the pod-index label: the label",
     ENV(R("0") ",{\"name\":\"RANK\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":"
                "\"metadata.labels['apps.kubernetes.io/pod-index']\"}}}"),
     "{\"labels\":{\"apps.kubernetes.io/pod-index\":\"2\"}}", 1, "2",
     " (from metadata.labels['apps.kubernetes.io/pod-index'])"},
    {"a $(reference): read at run time", "{\"env\":[{\"name\":\"RANK\",\"value\":\"$(IDX)\"}]}",
     "{}", -1, NULL, ""},
    {"the completion index annotation",
     "{\"env\":[{\"name\":\"RANK\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"metadata."
     "annotations['batch.kubernetes.io/job-completion-index']\"}}}]}",
     "{\"annotations\":{\"batch.kubernetes.io/job-completion-index\":\"2\"}}", 1, "2",
     " (from metadata.annotations['batch.kubernetes.io/job-completion-index'])"},
    {"the pod-index label",
     "{\"env\":[{\"name\":\"NODE_RANK\",\"valueFrom\":{\"fieldRef\":{"
     "\"fieldPath\":\"metadata.labels['apps.kubernetes.io/pod-index']\"}}}]}",
     "{\"labels\":{\"apps.kubernetes.io/pod-index\":\"5\"}}", 1, "5",
     " (from metadata.labels['apps.kubernetes.io/pod-index'])"},
    {"metadata.name",
     "{\"env\":[{\"name\":\"MASTER_ADDR\",\"valueFrom\":{\"fieldRef\":{"
     "\"fieldPath\":\"metadata.name\"}}}]}",
     "{\"name\":\"ddp-1\"}", 1, "ddp-1", " (from metadata.name)"},
    {"a label the pod lacks: not known",
     "{\"env\":[{\"name\":\"RANK\",\"valueFrom\":{\"fieldRef\":{"
     "\"fieldPath\":\"metadata.labels['x']\"}}}]}",
     "{\"labels\":{}}", -1, NULL, ""},
    {"a fieldRef in a template: filled in later",
     "{\"env\":[{\"name\":\"RANK\",\"valueFrom\":{"
     "\"fieldRef\":{\"fieldPath\":\"metadata.name\"}}}]}",
     NULL, -1, NULL, ""},
    {"status.podIP: not known at admission",
     "{\"env\":[{\"name\":\"MASTER_ADDR\",\"valueFrom\":{"
     "\"fieldRef\":{\"fieldPath\":\"status.podIP\"}}}]}",
     "{}", -1, NULL, ""},
    {"a Secret: not known",
     "{\"env\":[{\"name\":\"WORLD_SIZE\",\"valueFrom\":{\"secretKeyRef\":{"
     "\"name\":\"s\",\"key\":\"k\"}}}]}",
     "{}", -1, NULL, ""},
};

static void test_value(void)
{
	size_t i;

	for (i = 0; i < sizeof(value_cases) / sizeof(value_cases[0]); i++) {
		cJSON *ctr = cJSON_Parse(value_cases[i].ctr);
		cJSON *meta = value_cases[i].meta ? cJSON_Parse(value_cases[i].meta) : NULL;
		const char *var = strstr(value_cases[i].ctr, "NODE_RANK")     ? "NODE_RANK"
		                  : strstr(value_cases[i].ctr, "MASTER_ADDR") ? "MASTER_ADDR"
		                  : strstr(value_cases[i].ctr, "WORLD_SIZE")  ? "WORLD_SIZE"
		                                                              : "RANK";
		const char *v = "unset";
		char how[256];
		int rc;

		CHECK(ctr != NULL, "%s: fixture JSON", value_cases[i].name);
		rc = ownenv_value(ctr, meta, var, &v, how, sizeof(how));
		CHECK(rc == value_cases[i].want, "%s: %d, want %d", value_cases[i].name, rc,
		      value_cases[i].want);
		if (value_cases[i].want_value != NULL)
			CHECK_STR(v, value_cases[i].want_value, value_cases[i].name);
		else
			CHECK(v == NULL, "%s: value '%s', want none", value_cases[i].name, v);
		CHECK(strcmp(how, value_cases[i].want_how) == 0, "%s: how '%s'",
		      value_cases[i].name, how);
		cJSON_Delete(ctr);
		cJSON_Delete(meta);
	}
}

/* ownenv_entry: the last entry of the name and its place; entries without a name skipped. */
static void test_entry(void)
{
	static const struct {
		const char *env; /* the env list's JSON */
		int want;        /* the index of the entry named RANK the kubelet uses; -1 none */
	} rows[] = {
	    {"[]", -1},
	    {"[{\"name\":\"RANKS\",\"value\":\"1\"},{\"name\":\"RAN\"}]", -1},
	    {"[{\"name\":\"RANK\",\"value\":\"1\"}]", 0},
	    {"[{\"value\":\"1\"},{\"name\":\"X\"},{\"name\":\"RANK\",\"value\":\"1\"}]", 2},
	    {"[{\"name\":\"RANK\",\"value\":\"1\"},{\"name\":\"RANK\",\"value\":\"2\"}]", 1},
	    {"[{\"name\":\"RANK\",\"value\":\"1\"},{\"name\":\"X\"},{\"name\":\"RANK\"},"
	     "{\"name\":\"Y\"}]",
	     2},
	    {"[{\"name\":\"X\"},{\"name\":\"RANK\",\"value\":\"1\"},{\"name\":\"Y\"},"
	     "{\"name\":\"Z\"}]",
	     1},
	};
	char buf[512];
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		cJSON *ctr;
		const cJSON *e, *want = NULL;
		int index = -7, k = 0;

		snprintf(buf, sizeof(buf), "{\"env\":%s}", rows[i].env);
		ctr = cJSON_Parse(buf);
		CHECK(ctr != NULL, "row %zu: JSON", i);
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(ctr, "env")) if (k++ == rows[i].want)
		    want = e;
		e = ownenv_entry(ctr, "RANK", &index);
		CHECK(e == want && index == (rows[i].want < 0 ? 0 : rows[i].want),
		      "row %zu (%s): entry %p index %d, want entry %d", i, rows[i].env,
		      (const void *)e, index, rows[i].want);
		cJSON_Delete(ctr);
	}
	CHECK(ownenv_entry(NULL, "RANK", &(int){0}) == NULL, "no container: no entry");
}

/*
 * ownenv_rdzv_conf_unmerged: 1 (and the warning) only when the entry the
 * process sees is read at run time and does not say is_host.
 */
static void test_rdzv_conf_unmerged(void)
{
	static const struct {
		const char *env;
		int want;
	} rows[] = {
	    {"[]", 0},
	    {"[{\"name\":\"PET_RDZV_CONF\",\"value\":\"a=b\"}]", 0},
	    {"[{\"name\":\"PET_RDZV_CONF\"}]", 0},
	    {"[{\"name\":\"PET_RDZV_CONF\",\"value\":\"$(B)\"}]", 1},
	    {"[{\"name\":\"PET_RDZV_CONF\",\"value\":\"a=$(B)\"}]", 1},
	    {"[{\"name\":\"PET_RDZV_CONF\",\"value\":\"$(B),is_host=0\"}]", 0},
	    {"[{\"name\":\"PET_RDZV_CONF\",\"valueFrom\":{\"configMapKeyRef\":{}}}]", 1},
	    {"[{\"name\":\"PET_RDZV_CONF\",\"value\":\"$(B)\"},{\"name\":\"PET_RDZV_CONF\","
	     "\"value\":\"a=b\"}]",
	     0},
	    {"[{\"name\":\"PET_RDZV_CONF\",\"value\":\"a=b\"},{\"name\":\"PET_RDZV_CONF\","
	     "\"value\":\"$(B)\"}]",
	     1},
	    {"[{\"name\":\"PET_RDZV_CONFX\",\"value\":\"$(B)\"}]", 0},
	};
	char buf[512], msg[200];
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		cJSON *ctr;
		int got;

		snprintf(buf, sizeof(buf), "{\"name\":\"train\",\"env\":%s}", rows[i].env);
		ctr = cJSON_Parse(buf);
		CHECK(ctr != NULL, "row %zu: JSON", i);
		msg[0] = '\0';
		got = ownenv_rdzv_conf_unmerged(ctr, msg, sizeof(msg));
		CHECK(got == rows[i].want, "row %zu (%s): %d, want %d", i, rows[i].env, got,
		      rows[i].want);
		if (rows[i].want)
			CHECK(strcmp(msg,
			             "distenv: container train: PET_RDZV_CONF from a reference "
			             "gets no is_host, so torchrun guesses its host: use a "
			             "literal") == 0,
			      "row %zu: '%s'", i, msg);
		cJSON_Delete(ctr);
	}
}

/*
 * A warning's forms at 120 characters, the edge of the API server's guidance:
 * the whole one of 119 is kept, one of 120 gives way to the next form, which is
 * kept at 119 and gives way at 120 (WORLD_SIZE=32 or a 40-digit value, a
 * container name sized to the edge). The short forms cut a name past 20
 * characters, and only then write "..." after it.
 */
static void test_warn_edges(void)
{
	static const struct {
		size_t cname; /* the container name's length */
		const char *own, *want;
	} cases[] = {
	    {17, "32",
	     "distenv: container ccccccccccccccccc: WORLD_SIZE=32, not distenv's 4: env:// waits "
	     "for that many; torchrun sets its own"},
	    {18, "32",
	     "distenv: container cccccccccccccccccc keeps its own WORLD_SIZE: env:// waits for "
	     "that many; torchrun sets its own"},
	    {20, "32",
	     "distenv: container cccccccccccccccccccc keeps its own WORLD_SIZE: env:// waits for "
	     "that many; torchrun sets its own"},
	    {21, "32",
	     "distenv: container cccccccccccccccccccc... keeps its own WORLD_SIZE: env:// waits "
	     "for that many; torchrun sets its own"},
	    {4, "3333333333333333333333333333333333333333",
	     "distenv: container cccc keeps its own WORLD_SIZE (render shows both): env:// waits "
	     "for that many; torchrun sets its own"},
	    {5, "3333333333333333333333333333333333333333",
	     "distenv: container ccccc keeps its own WORLD_SIZE: env:// waits for that many; "
	     "torchrun sets its own"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct topology t;
		char msg[600] = "", cname[64];
		enum ownenv_verdict v;

		memset(cname, 'c', cases[i].cname);
		cname[cases[i].cname] = '\0';
		world(&t, 1, 4);
		v = ownenv_judge(&t, cname, "WORLD_SIZE", cases[i].own, "", "4", 0, msg,
		                 sizeof(msg));
		CHECK(v == OWNENV_WARN && strcmp(msg, cases[i].want) == 0,
		      "a container name of %zu, WORLD_SIZE=%s: %d '%s'", cases[i].cname,
		      cases[i].own, (int)v, msg);
	}
}

/*
 * MASTER_ADDR's first label against the 128 bytes it is read into: a label of
 * 127 under the world's Service names no pod of it and is denied, as one of 126;
 * one of 128 cannot be read, so it cannot be told and is warned.
 */
static void test_addr_label_edge(void)
{
	static const size_t lens[] = {126, 127, 128};
	size_t i;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct topology t;
		char msg[600] = "", own[200];
		enum ownenv_verdict v, want = lens[i] < 128 ? OWNENV_DENY : OWNENV_WARN;

		memset(own, 'x', lens[i]);
		snprintf(own + lens[i], sizeof(own) - lens[i], ".ddp");
		world(&t, 1, 4);
		v = ownenv_judge(&t, "train", "MASTER_ADDR", own, "", A0, 0, msg, sizeof(msg));
		CHECK(v == want &&
		          strstr(msg, want == OWNENV_DENY
		                          ? "which is not rank 0's pod of StatefulSet ml/ddp"
		                          : "is not rank 0's pod (render shows it)") != NULL,
		      "a first label of %zu: verdict %d, want %d: '%s'", lens[i], (int)v, (int)want,
		      msg);
	}
}

/*
 * A fieldRef's value at its edges: the shortest key (labels['x']) is read, and
 * an annotation's value of OWNENV_VALUE_MAX (4096) bytes is read whole while one
 * of 4097 is not known (-1), and so is a key of 320 bytes (319 are read).
 */
static void test_value_edges(void)
{
	static const char ctr[] = "{\"env\":[{\"name\":\"RANK\",\"valueFrom\":{\"fieldRef\":{"
	                          "\"fieldPath\":\"metadata.annotations['v']\"}}}]}";
	cJSON *c = cJSON_Parse(ctr), *meta;
	const char *v = NULL;
	char how[256], *big = malloc(OWNENV_VALUE_MAX + 2);
	size_t n;
	int rc;

	meta = cJSON_Parse("{\"labels\":{\"x\":\"7\"}}");
	{
		cJSON *cx = cJSON_Parse("{\"env\":[{\"name\":\"RANK\",\"valueFrom\":{\"fieldRef\":{"
		                        "\"fieldPath\":\"metadata.labels['x']\"}}}]}");
		rc = ownenv_value(cx, meta, "RANK", &v, how, sizeof(how));
		CHECK(rc == 1 && v != NULL && strcmp(v, "7") == 0 &&
		          strcmp(how, " (from metadata.labels['x'])") == 0,
		      "labels['x']: %d '%s' '%s'", rc, v ? v : "(none)", how);
		cJSON_Delete(cx);
	}
	cJSON_Delete(meta);
	for (n = OWNENV_VALUE_MAX; big != NULL && n <= OWNENV_VALUE_MAX + 1; n++) {
		memset(big, '1', n);
		big[n] = '\0';
		meta = cJSON_CreateObject();
		cJSON_AddStringToObject(cJSON_AddObjectToObject(meta, "annotations"), "v", big);
		v = NULL;
		rc = ownenv_value(c, meta, "RANK", &v, how, sizeof(how));
		CHECK(n == OWNENV_VALUE_MAX ? rc == 1 && v != NULL && strlen(v) == n : rc == -1,
		      "an annotation value of %zu bytes: %d, %zu bytes", n, rc, v ? strlen(v) : 0);
		cJSON_Delete(meta);
	}
	/* a key of 319 bytes, the most key[320] holds, is read; one of 320 is not known */
	for (n = 319; big != NULL && n <= 320; n++) {
		char path[400];
		cJSON *ck = cJSON_CreateObject(), *e = cJSON_CreateObject();

		memset(big, 'k', n);
		big[n] = '\0';
		snprintf(path, sizeof(path), "metadata.annotations['%s']", big);
		cJSON_AddStringToObject(e, "name", "RANK");
		cJSON_AddStringToObject(
		    cJSON_AddObjectToObject(cJSON_AddObjectToObject(e, "valueFrom"), "fieldRef"),
		    "fieldPath", path);
		cJSON_AddItemToArray(cJSON_AddArrayToObject(ck, "env"), e);
		meta = cJSON_CreateObject();
		cJSON_AddStringToObject(cJSON_AddObjectToObject(meta, "annotations"), big, "5");
		v = NULL;
		rc = ownenv_value(ck, meta, "RANK", &v, how, sizeof(how));
		CHECK(n == 319 ? rc == 1 && v != NULL && strcmp(v, "5") == 0
		               : rc == -1 && v == NULL,
		      "an annotation key of %zu bytes: %d '%s'", n, rc, v ? v : "(none)");
		cJSON_Delete(meta);
		cJSON_Delete(ck);
	}
	free(big);
	cJSON_Delete(c);
}

/*
 * MASTER_ADDR that cannot be told (an IP) at 120 characters: the whole warning
 * of 119 is kept, one of 120 gives way to the short form.
 */
static void test_addr_warn_edge(void)
{
	static const struct {
		size_t cname;
		const char *want;
	} cases[] = {
	    {14,
	     "distenv: container cccccccccccccc: MASTER_ADDR=10.0.0.7 is not a name of rank 0's "
	     "pod: every rank meets there; check it"},
	    {15,
	     "distenv: container ccccccccccccccc: MASTER_ADDR is not rank 0's pod (render shows "
	     "it): check it"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct topology t;
		char msg[600] = "", cname[64];
		enum ownenv_verdict v;

		memset(cname, 'c', cases[i].cname);
		cname[cases[i].cname] = '\0';
		world(&t, 1, 4);
		v = ownenv_judge(&t, cname, "MASTER_ADDR", "10.0.0.7", "", A0, 0, msg, sizeof(msg));
		CHECK(v == OWNENV_WARN && strcmp(msg, cases[i].want) == 0,
		      "a container name of %zu: %d '%s'", cases[i].cname, (int)v, msg);
	}
}

/*
 * The shorter forms at 120 characters: NNODES's form without the values is
 * kept at 119 (a container name of 19) and gives way at 120 (20) to the last,
 * which names the variable alone, the name whole to 20 characters and cut with
 * "..." past them (21); MASTER_PORT's wrong-value warning
 * with a long container name is exactly 120 in the cut form with "render shows
 * both", so the next form is given.
 */
static void test_short_form_edges(void)
{
	static const char own[] = "1111111111111111111111111111111111111111";
	static const struct {
		size_t cname;
		const char *want;
	} cases[] = {
	    {19, "distenv: container ccccccccccccccccccc keeps its own NNODES: a launcher given "
	         "--nnodes $NNODES waits for that many pods"},
	    {20,
	     "distenv: container cccccccccccccccccccc keeps its own NNODES (render shows both)"},
	    {21,
	     "distenv: container cccccccccccccccccccc... keeps its own NNODES (render shows both)"},
	};
	char msg[600], cname[64];
	struct topology t;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum ownenv_verdict v;

		memset(cname, 'c', cases[i].cname);
		cname[cases[i].cname] = '\0';
		world(&t, 1, 4);
		msg[0] = '\0';
		v = ownenv_judge(&t, cname, "NNODES", own, "", "4", 0, msg, sizeof(msg));
		CHECK(v == OWNENV_WARN && strcmp(msg, cases[i].want) == 0,
		      "NNODES, a container name of %zu: %d '%s'", cases[i].cname, (int)v, msg);
	}
	memset(cname, 'c', 25);
	cname[25] = '\0';
	msg[0] = '\0';
	ownenv_wrong_warning(cname, "MASTER_PORT", own, "", "29500", msg, sizeof(msg));
	CHECK(strcmp(msg, "distenv: container cccccccccccccccccccc... keeps its own MASTER_PORT: "
	                  "not this pod's task; remove it") == 0,
	      "MASTER_PORT, a container name of 25: '%s'", msg);
}

int main(void)
{
	test_entry();
	test_rdzv_conf_unmerged();
	test_judge();
	test_warn_edges();
	test_addr_label_edge();
	test_value_edges();
	test_addr_warn_edge();
	test_short_form_edges();
	test_wrong_warning();
	test_value();
	TEST_MAIN_END("ownenv");
}
