/*
 * The tpu framework (src/frameworks/fw_tpu.c): every rank's TPU_* and
 * MEGASCALE_* against JAX's own arithmetic (cloud_tpu_cluster.py: process id =
 * TPU_WORKER_ID + MEGASCALE_SLICE_ID x hosts per slice, count = hosts per slice
 * x MEGASCALE_NUM_SLICES), the worlds it refuses, what it sizes for /validate,
 * and its row (what grows, the resource that adds it).
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "env.h"
#include "framework.h"
#include "kind_jobset.h"
#include "testutil.h"
#include "topology.h"

static const struct framework *tpu(void)
{
	return framework_named("tpu", 3);
}

static const char *get(const struct env_list *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->vars[i].name, name) == 0)
			return l->vars[i].value;
	return NULL;
}

/* A JobSet js in ml: replicated Jobs a (2 Jobs x 2 pods) and b (1 Job x pods_b). */
static void jobset(struct topology *t, long pods_b)
{
	struct jobset_state *js = jobset_state(t);

	memset(t, 0, sizeof(*t));
	t->kind = &kind_jobset;
	t->group = -1;
	strcpy(t->ns, "ml");
	strcpy(t->workload, "js");
	strcpy(t->service, "js");
	strcpy(t->domain, ".js.ml.svc.cluster.local");
	t->port = 29500;
	js->n_rjobs = 2;
	strcpy(js->rjobs[0].name, "a");
	js->rjobs[0].jobs = 2;
	js->rjobs[0].pods = 2;
	js->rjobs[0].first = 0;
	strcpy(js->rjobs[1].name, "b");
	js->rjobs[1].jobs = 1;
	js->rjobs[1].pods = pods_b;
	js->rjobs[1].first = 4;
	t->world_size = 4 + pods_b;
	t->frameworks = tpu()->bit;
}

/* Three slices of two hosts across two replicated Jobs: JAX's id is the rank. */
static void test_multislice(void)
{
	static const char *const hosts[3] = {
	    "js-a-0-0.js.ml.svc.cluster.local,js-a-0-1.js.ml.svc.cluster.local",
	    "js-a-1-0.js.ml.svc.cluster.local,js-a-1-1.js.ml.svc.cluster.local",
	    "js-b-0-0.js.ml.svc.cluster.local,js-b-0-1.js.ml.svc.cluster.local"};
	struct topology t;
	struct env_list env;
	long r;

	jobset(&t, 2);
	for (r = 0; r < t.world_size; r++) {
		const char *id, *sl, *n, *h;
		t.rank = r;
		if (env_build(&t, &env) != 0) {
			CHECK(0, "rank %ld: env_build", r);
			continue;
		}
		id = get(&env, "TPU_WORKER_ID");
		sl = get(&env, "MEGASCALE_SLICE_ID");
		n = get(&env, "MEGASCALE_NUM_SLICES");
		h = get(&env, "TPU_WORKER_HOSTNAMES");
		CHECK(id && sl && n && h, "rank %ld: every variable", r);
		if (id && sl && n && h) {
			CHECK(atol(id) + atol(sl) * 2 == r, "rank %ld: JAX's id %s + %s x 2", r, id,
			      sl);
			CHECK(atol(n) * 2 == t.world_size, "rank %ld: JAX's count %s x 2", r, n);
			CHECK_STR(h, hosts[r / 2], "slice hosts");
		}
		CHECK_STR(get(&env, "MEGASCALE_COORDINATOR_ADDRESS"),
		          "js-a-0-0.js.ml.svc.cluster.local", "coordinator");
		CHECK_STR(get(&env, "MEGASCALE_PORT"), "8081", "megascale port");
		CHECK(env.n == 6 && strcmp(env.vars[0].name, "TPU_WORKER_ID") == 0,
		      "rank %ld: 6 variables in JAX's order", r);
		env_list_free(&env);
	}
}

/*
 * Slices of three hosts, two of them in one replicated Job (a: 2 Jobs x 3 pods,
 * b: 1 x 3, c: 1 x 3): each rank's slice is its own Job's, the last pod of a's
 * second Job (rank 5) included, not the whole of a, and c's slice id counts the
 * Jobs of every replicated Job before it (3), not of the one before it alone.
 */
static void test_multislice_three(void)
{
	static const char *const hosts[4] = {
	    "js-a-0-0.js.ml.svc.cluster.local,js-a-0-1.js.ml.svc.cluster.local,"
	    "js-a-0-2.js.ml.svc.cluster.local",
	    "js-a-1-0.js.ml.svc.cluster.local,js-a-1-1.js.ml.svc.cluster.local,"
	    "js-a-1-2.js.ml.svc.cluster.local",
	    "js-b-0-0.js.ml.svc.cluster.local,js-b-0-1.js.ml.svc.cluster.local,"
	    "js-b-0-2.js.ml.svc.cluster.local",
	    "js-c-0-0.js.ml.svc.cluster.local,js-c-0-1.js.ml.svc.cluster.local,"
	    "js-c-0-2.js.ml.svc.cluster.local"};
	struct topology t;
	struct env_list env;
	struct jobset_state *js;
	long r;

	jobset(&t, 3);
	js = jobset_state(&t);
	js->rjobs[0].pods = 3;
	js->rjobs[1].first = 6;
	js->n_rjobs = 3;
	strcpy(js->rjobs[2].name, "c");
	js->rjobs[2].jobs = 1;
	js->rjobs[2].pods = 3;
	js->rjobs[2].first = 9;
	t.world_size = 12;
	for (r = 0; r < t.world_size; r++) {
		char want[24];
		t.rank = r;
		if (env_build(&t, &env) != 0) {
			CHECK(0, "rank %ld: env_build", r);
			continue;
		}
		snprintf(want, sizeof(want), "%ld", r % 3);
		CHECK_STR(get(&env, "TPU_WORKER_ID"), want, "worker id in its slice");
		snprintf(want, sizeof(want), "%ld", r / 3);
		CHECK_STR(get(&env, "MEGASCALE_SLICE_ID"), want, "slice id");
		CHECK_STR(get(&env, "MEGASCALE_NUM_SLICES"), "4", "slices");
		CHECK_STR(get(&env, "TPU_WORKER_HOSTNAMES"), hosts[r / 3], "slice hosts");
		env_list_free(&env);
	}
}

/* One slice (a StatefulSet): MEGASCALE_* say one slice, no port. */
static void test_single_slice(void)
{
	struct topology t;
	struct env_list env;

	memset(&t, 0, sizeof(t));
	t.kind = &kind_statefulset;
	t.group = -1;
	strcpy(t.ns, "ml");
	strcpy(t.workload, "tp");
	strcpy(t.domain, ".tp.ml.svc.cluster.local");
	t.port = 29500;
	t.world_size = 3;
	t.rank = 2;
	t.frameworks = tpu()->bit;
	CHECK(env_build(&t, &env) == 0, "env_build");
	CHECK_STR(get(&env, "TPU_WORKER_ID"), "2", "worker id");
	CHECK_STR(get(&env, "TPU_WORKER_HOSTNAMES"),
	          "tp-0.tp.ml.svc.cluster.local,tp-1.tp.ml.svc.cluster.local,"
	          "tp-2.tp.ml.svc.cluster.local",
	          "hosts");
	CHECK_STR(get(&env, "MEGASCALE_NUM_SLICES"), "1", "one slice");
	CHECK_STR(get(&env, "MEGASCALE_SLICE_ID"), "0", "slice 0");
	CHECK(get(&env, "MEGASCALE_PORT") == NULL, "no megascale port for one slice");
	env_list_free(&env);
}

static void test_refuse(void)
{
	const struct framework *fw = tpu();
	struct topology t;
	char msg[512];
	cJSON *anns = cJSON_CreateObject();

	jobset(&t, 2);
	CHECK(fw->refuse(&t, NULL, msg, sizeof(msg)) == 0, "equal Jobs are served");
	jobset(&t, 3);
	CHECK(fw->refuse(&t, NULL, msg, sizeof(msg)) == 1 && strstr(msg, "not one size"),
	      "Jobs of 2 and 3 pods refused: %s", msg);
	jobset(&t, 2); /* three replicated Jobs, the third alone of another size */
	strcpy(jobset_state(&t)->rjobs[2].name, "c");
	jobset_state(&t)->rjobs[2].jobs = 1;
	jobset_state(&t)->rjobs[2].pods = 3;
	jobset_state(&t)->rjobs[2].first = 6;
	jobset_state(&t)->n_rjobs = 3;
	t.world_size = 9;
	CHECK(fw->refuse(&t, NULL, msg, sizeof(msg)) == 1 && strstr(msg, "(a: 2 pods, c: 3)"),
	      "Jobs of 2, 2 and 3 pods refused: %s", msg);
	jobset(&t, 1); /* the later replicated Job the smaller */
	CHECK(fw->refuse(&t, NULL, msg, sizeof(msg)) == 1 && strstr(msg, "(a: 2 pods, b: 1)"),
	      "Jobs of 2 and 1 pods refused: %s", msg);
	jobset(&t, 2);
	jobset_state(&t)->coordinator = 5;
	CHECK(fw->refuse(&t, NULL, msg, sizeof(msg)) == 1 && strstr(msg, "coordinator"),
	      "a coordinator that is not the first pod refused: %s", msg);

	memset(&t, 0, sizeof(t));
	t.kind = &kind_leaderworkerset;
	strcpy(t.ns, "ml");
	strcpy(t.workload, "tl");
	t.world_size = 4;
	t.group = 0;
	t.rank = 2;
	CHECK(fw->refuse(&t, NULL, msg, sizeof(msg)) == 0, "a template (no annotations): served");
	CHECK(fw->refuse(&t, anns, msg, sizeof(msg)) == 1 && strstr(msg, "leader"),
	      "a worker whose leader requests no TPUs refused: %s", msg);
	cJSON_AddStringToObject(anns, "leaderworkerset.sigs.k8s.io/leader-requests-tpus", "true");
	CHECK(fw->refuse(&t, anns, msg, sizeof(msg)) == 0, "leader requests TPUs: served");
	t.rank = 0;
	cJSON_DeleteItemFromObject(anns, "leaderworkerset.sigs.k8s.io/leader-requests-tpus");
	CHECK(fw->refuse(&t, anns, msg, sizeof(msg)) == 0, "the leader itself: served");
	cJSON_AddStringToObject(anns, "leaderworkerset.sigs.k8s.io/subgroup-size", "2");
	CHECK(fw->refuse(&t, anns, msg, sizeof(msg)) == 1 && strstr(msg, "subgroup"),
	      "subgroups refused: %s", msg);
	cJSON_Delete(anns);
}

/* The row: what grows, the ranks /validate sizes it at, the resource that adds it. */
static void test_row(void)
{
	const struct framework *fw = tpu();
	struct topology t;
	long ranks[4];

	CHECK(fw != NULL && fw->grows && strcmp(fw->grows, "TPU_WORKER_HOSTNAMES") == 0,
	      "TPU_WORKER_HOSTNAMES grows with the world");
	CHECK(fw->resource && strcmp(fw->resource, "google.com/tpu") == 0,
	      "google.com/tpu adds it");
	CHECK(!fw->by_default, "not a configured default");
	jobset(&t, 2);
	CHECK(fw->widest(&t, ranks, 4) == 2 && ranks[0] == 3 && ranks[1] == 5,
	      "widest: each replicated Job's last pod (%ld, %ld)", ranks[0], ranks[1]);
	/* room for as many ranks as the caller gives: 2 parts in 2, 1 of them in 1 */
	ranks[0] = ranks[1] = -7;
	CHECK(fw->widest(&t, ranks, 2) == 2 && ranks[0] == 3 && ranks[1] == 5,
	      "widest in room for 2: %ld, %ld", ranks[0], ranks[1]);
	ranks[0] = ranks[1] = -7;
	CHECK(fw->widest(&t, ranks, 1) == 1 && ranks[0] == 3 && ranks[1] == -7,
	      "widest in room for 1: %ld, %ld", ranks[0], ranks[1]);
	/* a world of no parts: its last rank, when there is room for one */
	t.kind = NULL;
	t.world_size = 6;
	CHECK(fw->widest(&t, ranks, 1) == 1 && ranks[0] == 5, "widest of no parts: %ld", ranks[0]);
	CHECK(fw->widest(&t, ranks, 0) == 0, "widest of no parts, no room: no ranks");
}

int main(void)
{
	test_multislice();
	test_multislice_three();
	test_single_slice();
	test_refuse();
	test_row();
	TEST_MAIN_END("fw_tpu");
}
