/*
 * The resolution steps (src/core/topology.c) through pod_plan_build, row by
 * row of docs/environment.md: the owner and its API group, the look-up and its
 * fresh read, the world size and the rank within it, the Service and subdomain,
 * the elastic range against the world, the pod's own name; and how a denial
 * names every problem it can know (test_denials).
 */
#include "testpods.h"

/* 32 characters of an API group name (four make a group past identify()'s buffer). */
#define G32 "abcdefghijklmnopqrstuvwxyzabcdef"

/* The reason of a denial (the metrics label), by plan case name; the others only need one. */
static const struct plan_reason deny_reasons[] = {
    {"the API has only the namesake: denied", DENY_LOOKUP},
    {"look-up fails", DENY_LOOKUP},
    {"fresh read agrees the rank is too high", DENY_WORLD},
    {"world size unknown without look-ups", DENY_WORLD},
    {"elastic MIN above the world size", DENY_WORLD},
    {"job without subdomain or service", DENY_SERVICE},
    {"sts pod without subdomain speaks of serviceName", DENY_SERVICE},
    {"invalid subdomain", DENY_SERVICE},
    {"deployment pod refused", DENY_OWNER},
    {"a StatefulSet of another API group is not apps/v1's", DENY_OWNER},
    {"bare pod refused", DENY_OWNER},
};

/* A StatefulSet the API says has 0 replicas (scaled down while a pod is created). */
static const struct lookup_answer STS0 = {0, WSPEC(0, -1, -1, -1, 0, ""), NULL};

static const struct plan_case plan_cases[] = {
    {"a Job pod with only a generateName and no hostname: no name to compare",
     "{'metadata':{'generateName':'train-1-','labels':{" LABEL "},'annotations':{'batch."
     "kubernetes.io/job-completion-index':'1','distenv.dev/world-size':'4'}," JOB_OWNER "},"
     "'spec':{'subdomain':'train'," CTR "}}",
     "ml", NULL, "MASTER_ADDR=train-0.train.ml.svc.cluster.local\nRANK=1\nWORLD_SIZE=4\n", NULL},
    {"cached world too small: read again, the new size wins", STS_POD("3", "", ""), "ml",
     &STS2_CACHED, "RANK=3\nWORLD_SIZE=4\n", NULL},
    {"cached answer of a deleted namesake: read again", STS_POD("1", "", ""), "ml",
     &STS_OTHER_UID_CACHED, "RANK=1\nWORLD_SIZE=4\n", NULL},
    {"the API has only the namesake: denied", STS_POD("1", "", ""), "ml", &STS_OTHER_UID, NULL,
     "not the uid u-ddp the pod names as its owner"},
    {"fresh read agrees the rank is too high", STS_POD("3", "", ""), "ml", &STS2_STILL, NULL,
     "rank 3 of StatefulSet ml/ddp is not below the world size 2"},
    {"re-created Job: pod 0 never gets the old completions",
     JOB_POD("0", "", ",'subdomain':'train'"), "default", &JOB2_RECREATED, "RANK=0\nWORLD_SIZE=4\n",
     NULL},
    {"re-created Job: pod 3 is not denied", JOB_POD("3", "", ",'subdomain':'train'"), "default",
     &JOB2_RECREATED, "RANK=3\nWORLD_SIZE=4\n", NULL},
    {"annotation wins over the API", STS_POD("1", "'distenv.dev/world-size':'8'", ""), "ml", &STS4,
     "RANK=1\nWORLD_SIZE=8\nPET_NNODES=8\n", NULL},
    {"namespace from request only",
     "{'metadata':{'name':'ddp-0','labels':{" LABEL "},'annotations':{'distenv.dev/world-size':"
     "'2'}," STS_OWNER "},'spec':{'subdomain':'ddp'," CTR "}}",
     "team-a", NULL, "MASTER_ADDR=ddp-0.ddp.team-a.svc.cluster.local\n", NULL},
    {"job with distenv.dev/service", JOB_POD("2", ",'distenv.dev/service':'train'", ""), "default",
     &JOB3, "MASTER_ADDR=" J_ "\nRANK=2\n", NULL},
    {"job without subdomain or service", JOB_POD("0", "", ""), "default", &JOB3, NULL,
     "point spec.subdomain"},
    {"job rank >= world size", JOB_POD("3", "", ",'subdomain':'train'"), "default", &JOB3, NULL,
     "rank 3 of Job default/train is not below the world size 3"},
    {"sts rank >= annotated world size", STS_POD("5", "'distenv.dev/world-size':'4'", ""), "ml",
     NULL, NULL, "rank 5"},
    {"world size unknown without look-ups", STS_POD("0", "", ""), "ml", NULL, NULL,
     "world size of StatefulSet ml/ddp is not known"},
    {"look-up fails", STS_POD("0", "", ""), "ml", &FAILS, NULL,
     "cannot read StatefulSet ml/ddp from the Kubernetes API (connection refused)"},
    {"deployment pod refused",
     "{'metadata':{'name':'web-abc','namespace':'ml','labels':{" LABEL "},'ownerReferences':[{"
     "'kind':'ReplicaSet','name':'web-5d4','controller':true}]},'spec':{" CTR "}}",
     "ml", NULL, NULL,
     "controlled by ReplicaSet web-5d4 (no apiVersion); distenv supports only pods of a "
     "StatefulSet (apps/v1), of an Indexed Job (batch/v1, completionMode: Indexed), of a JobSet "
     "(jobset.x-k8s.io) or of a LeaderWorkerSet"},
    {"a StatefulSet of another API group is not apps/v1's",
     "{'metadata':{'name':'ddp-0','namespace':'ml','labels':{" LABEL "},'annotations':{"
     "'distenv.dev/world-size':'2'},'ownerReferences':[{'apiVersion':'apps.kruise.io/v1beta1',"
     "'kind':'StatefulSet','name':'ddp','uid':'u-k','controller':true}]},'spec':{'subdomain':"
     "'ddp'," CTR "}}",
     "ml", &STS4, NULL,
     "controlled by StatefulSet ddp (apps.kruise.io/v1beta1); distenv supports only pods of a "
     "StatefulSet (apps/v1)"},
    /* a group past the 127 characters identify() reads of it: refused all the same */
    {"a StatefulSet of an API group of 128 characters",
     "{'metadata':{'name':'ddp-0','namespace':'ml','labels':{" LABEL "},'annotations':{"
     "'distenv.dev/world-size':'2'},'ownerReferences':[{'apiVersion':'" G32 G32 G32 G32 "/v1',"
     "'kind':'StatefulSet','name':'ddp','uid':'u-k','controller':true}]},'spec':{'subdomain':"
     "'ddp'," CTR "}}",
     "ml", &STS4, NULL, "controlled by StatefulSet ddp (" G32 G32 "); distenv supports only"},
    {"a StatefulSet of an API group of 127 characters",
     "{'metadata':{'name':'ddp-0','namespace':'ml','labels':{" LABEL "},'annotations':{"
     "'distenv.dev/world-size':'2'},'ownerReferences':[{'apiVersion':'" G32 G32 G32
     "abcdefghijklmnopqrstuvwxyzabcde/v1','kind':'StatefulSet','name':'ddp','uid':'u-k',"
     "'controller':true}]},'spec':{'subdomain':'ddp'," CTR "}}",
     "ml", &STS4, NULL, "controlled by StatefulSet ddp (" G32 G32 "); distenv supports only"},
    {"a Job of another API group",
     "{'metadata':{'generateName':'t-0-','namespace':'ml','labels':{" LABEL "},'annotations':{"
     "'batch.kubernetes.io/job-completion-index':'0'},'ownerReferences':[{'apiVersion':"
     "'example.com/v1','kind':'Job','name':'t','controller':true}]},'spec':{'subdomain':'t'," CTR
     "}}",
     "ml", &JOB3, NULL, "controlled by Job t (example.com/v1)"},
    {"bare pod refused", "{'metadata':{'name':'p','labels':{" LABEL "}},'spec':{" CTR "}}", "ml",
     NULL, NULL, "controlled by nothing"},
    {"elastic MIN above the world size", STS_POD("0", "'distenv.dev/elastic':'5:8'", ""), "ml",
     &STS4, NULL, "MIN 5 is above the world size 4 of StatefulSet ml/ddp"},
    {"a StatefulSet scaled to 0: its world is 0, not unknown", STS_POD("0", "", ""), "ml", &STS0,
     NULL, "rank 0 of StatefulSet ml/ddp is not below the world size 0"},
    {"elastic MIN at the world size is allowed", STS_POD("0", "'distenv.dev/elastic':'4:8'", ""),
     "ml", &STS4, "PET_NNODES=4:8\n", NULL},
    {"elastic MIN one above the world size", STS_POD("0", "'distenv.dev/elastic':'5:5'", ""), "ml",
     &STS4, NULL, "MIN 5 is above the world size 4 of StatefulSet ml/ddp"},
    {"the last rank of the world", STS_POD("3", "", ""), "ml", &STS4, "RANK=3\nWORLD_SIZE=4\n",
     NULL},
    {"a rank at the world size", STS_POD("4", "", ""), "ml", &STS4, NULL,
     "rank 4 of StatefulSet ml/ddp is not below the world size 4"},
    {"elastic MAX above the world size is allowed", STS_POD("0", "'distenv.dev/elastic':'2:8'", ""),
     "ml", &STS4, "PET_NNODES=2:8\n", NULL},
    {"sts pod without subdomain speaks of serviceName",
     "{'metadata':{'name':'ddp-0','namespace':'ml','labels':{" LABEL "},'annotations':{"
     "'distenv.dev/world-size':'2'}," STS_OWNER "},'spec':{'hostname':'ddp-0'," CTR "}}",
     "ml", NULL, NULL, "the StatefulSet has no spec.serviceName: set spec.serviceName"},
    {"invalid subdomain",
     "{'metadata':{'name':'ddp-0','namespace':'ml','labels':{" LABEL "}," STS_OWNER "},"
     "'spec':{'subdomain':'Bad_x'," CTR "}}",
     "ml", &STS4, NULL, "spec.subdomain \"Bad_x\" is not a valid Service name"},
};

static const struct denial_case denial_cases[] = {
    {"a bad nproc and no world size: both", STS_POD("1", "'distenv.dev/nproc-per-node':'0'", ""),
     NULL, DENY_ANNOTATION,
     "distenv: annotation distenv.dev/nproc-per-node: \"0\" is not a whole number between 1 and "
     "4096 (or auto, gpu, cpu); the world size of StatefulSet ml/ddp is not known: set the "
     "annotation distenv.dev/world-size (look-ups of the workload are turned off)"},
    {"a bad world size is not echoed as an unknown world",
     STS_POD("1", "'distenv.dev/world-size':'x'", ""), NULL, DENY_ANNOTATION,
     "distenv: annotation distenv.dev/world-size: \"x\" is not a world size between 1 and "
     "65536"},
    {"a bad value and an API that cannot be reached",
     STS_POD("1", "'distenv.dev/elastic':'4:2'", ""), &FAILS, DENY_ANNOTATION,
     "distenv: annotation distenv.dev/elastic: \"4:2\" has MIN greater than MAX; cannot read "
     "StatefulSet ml/ddp from the Kubernetes API (connection refused), so the world size is not "
     "known; retry, or check the webhook's access to the API"},
    {"a missing container and a rank past the world",
     STS_POD("5", "'distenv.dev/containers':'nope'", ""), &STS4, DENY_ANNOTATION,
     "distenv: annotation distenv.dev/containers: the pod has no container or init container "
     "named \"nope\"; rank 5 of StatefulSet ml/ddp is not below the world size 4: scale the "
     "workload and distenv.dev/world-size together"},
    {"a bad Service name is not echoed as a missing subdomain",
     JOB_POD("0", ",'distenv.dev/service':'Bad_Name','distenv.dev/world-size':'2'", ""), NULL,
     DENY_ANNOTATION,
     "distenv: annotation distenv.dev/service: \"Bad_Name\" is not a valid Service name"},
    {"a Job pod whose spec.hostname another webhook rewrote",
     "{'metadata':{'generateName':'train-1-','labels':{" LABEL "},'annotations':{'batch."
     "kubernetes.io/job-completion-index':'1','distenv.dev/world-size':'4'}," JOB_OWNER "},"
     "'spec':{'hostname':'custom','subdomain':'train'," CTR "}}",
     NULL, DENY_IDENTITY,
     "distenv: the pod's own name custom (spec.hostname) is not train-1, the host distenv "
     "derives for rank 1 of Job ml/train, so the addresses it derives for the other ranks "
     "cannot be trusted: leave the pod's name as the Job's controllers set it (another "
     "webhook or controller renamed it)"},
    {"a StatefulSet pod named by its name, whose index label says another ordinal",
     "{'metadata':{'name':'ddp-3','namespace':'ml','labels':{" LABEL ",'apps.kubernetes.io/"
     "pod-index':'2'},'annotations':{'distenv.dev/world-size':'4'}," STS_OWNER "},'spec':{"
     "'subdomain':'ddp'," CTR "}}",
     NULL, DENY_IDENTITY,
     "distenv: the pod's own name ddp-3 (metadata.name) is not ddp-2, the host distenv "
     "derives for rank 2 of StatefulSet ml/ddp, so the addresses it derives for the other "
     "ranks cannot be trusted: leave the pod's name as the StatefulSet's controllers set "
     "it (another webhook or controller renamed it)"},
    {"a JobSet pod renamed: its hostname is not <js>-<rjob>-<j>-<i>",
     "{'metadata':{'generateName':'js-a-0-1-','namespace':'ml','labels':{" LABEL
     ",'jobset.sigs.k8s.io/jobset-name':'js','jobset.sigs.k8s.io/replicatedjob-name':'a',"
     "'jobset.sigs.k8s.io/job-index':'0','jobset.sigs.k8s.io/jobset-uid':'u-js',"
     "'jobset.sigs.k8s.io/replicatedjob-replicas':'2','jobset.sigs.k8s.io/global-replicas':'2',"
     "'batch.kubernetes.io/job-completion-index':'1'},'annotations':{'batch.kubernetes.io/"
     "job-completion-index':'1','distenv.dev/world-size':'4'},'ownerReferences':[{'apiVersion':"
     "'batch/v1','kind':'Job','name':'js-a-0','uid':'u-job','controller':true}]},'spec':{"
     "'hostname':'js-a-0-1-x','subdomain':'js'," CTR "}}",
     NULL, DENY_IDENTITY,
     "distenv: the pod's own name js-a-0-1-x (spec.hostname) is not js-a-0-1, the host "
     "distenv derives for rank 1 of JobSet ml/js, so the addresses it derives for the "
     "other ranks cannot be trusted: leave the pod's name as the JobSet's controllers set "
     "it (another webhook or controller renamed it)"},
    {"no problem with the annotations: the step's own reason",
     STS_POD("1", "'distenv.dev/port':'80'", ""), NULL, DENY_WORLD,
     "distenv: the world size of StatefulSet ml/ddp is not known: set the annotation "
     "distenv.dev/world-size (look-ups of the workload are turned off)"},
};

/*
 * A pod's problems are joined in 1023 characters (after "distenv: "): a
 * problem that does not fit is cut, and its "; " is written only with room for
 * it and one more character. A bare pod with nine bad annotations (the port's
 * value of 54, 55 or 56 characters, the others' of 35) and no owner: the
 * annotations' problem takes 1019, 1020 or 1021 characters, then the owner's
 * comes. err is render's size (1280), larger than the joined problems.
 */
static void test_denial_full(void)
{
	static const struct {
		int port_len;
		size_t len;       /* of the denial, "distenv: " included */
		const char *tail; /* its last characters */
	} rows[] = {
	    {54, 1032, "x\"; po"},
	    {55, 1032, "x\"; p"},
	    {56, 1030, "xxx\""},
	};
	static const char *const anns[] = {ANN_NPROC,           ANN_FRAMEWORKS, ANN_ELASTIC,
	                                   ANN_MAX_RESTARTS,    ANN_WORLD_SIZE, ANN_SERVICE,
	                                   ANN_WAIT_FOR_MASTER, ANN_CONTAINERS};
	struct config cfg;
	size_t i, k;

	config_defaults(&cfg);
	for (i = 0; i < N_OF(rows); i++) {
		char pod[4096], port[64], x35[36], err[1280];
		struct pod_plan plan;
		enum plan_status st;
		size_t used, len;
		cJSON *o;

		memset(port, 'x', sizeof(port));
		port[rows[i].port_len] = '\0';
		memset(x35, 'x', sizeof(x35) - 1);
		x35[sizeof(x35) - 1] = '\0';
		used =
		    (size_t)snprintf(pod, sizeof(pod),
		                     "{\"metadata\":{\"name\":\"ddp-5\",\"namespace\":\"ml\","
		                     "\"labels\":{\"%s\":\"true\"},\"annotations\":{\"%s\":\"%s\"",
		                     LABEL_INJECT, ANN_PORT, port);
		for (k = 0; k < N_OF(anns); k++)
			used += (size_t)snprintf(pod + used, sizeof(pod) - used, ",\"%s\":\"%s\"",
			                         anns[k], x35);
		snprintf(pod + used, sizeof(pod) - used,
		         "}},\"spec\":{\"containers\":[{\"name\":\"t\",\"image\":\"x\"}]}}");
		o = cJSON_Parse(pod);
		st = pod_plan_build(o, "ml", 0, &cfg, NULL, &plan, err, sizeof(err));
		len = strlen(err);
		CHECK(st == PLAN_DENY && len == rows[i].len &&
		          strcmp(err + len - strlen(rows[i].tail), rows[i].tail) == 0 &&
		          plan.topo.reason == DENY_ANNOTATION,
		      "the port's value of %d characters: status %d, %zu characters (want %zu) "
		      "ending '%s' (want '%s'), reason %s",
		      rows[i].port_len, st, len, rows[i].len, len > 12 ? err + len - 12 : err,
		      rows[i].tail, verdict_reason_name(plan.topo.reason));
		if (st == PLAN_OK)
			pod_plan_free(&plan);
		cJSON_Delete(o);
	}
}

int main(void)
{
	plan_cases_run(plan_cases, N_OF(plan_cases), deny_reasons, N_OF(deny_reasons));
	denial_cases_run(denial_cases, N_OF(denial_cases));
	test_denial_full();
	TEST_MAIN_END("topology");
}
