/*
 * Every per-template rule of /validate with its problem on one pod template of
 * a workload that has several, the others clean: a JobSet of three replicated
 * Jobs (a, b, c: each one Indexed Job of 2 pods, 6 in all) and a
 * LeaderWorkerSet of one group of 3 (leaderTemplate, workerTemplate). Shared
 * by test_validate.c (the apply-time answer) and test_render.c (render's).
 *
 * A rule's want is the whole answer after "distenv: ", with {T} for the
 * template's name ("replicated Job b", "worker template") and {W} for the
 * world (6, 3), {K} for the workload ("JobSet js"). Quotes are written ' and turned into " by
 * tt_json.
 */
#ifndef TESTTEMPLATES_H
#define TESTTEMPLATES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TT_JS_A     1 /* the JobSet's first replicated Job */
#define TT_JS_B     2 /* its middle one */
#define TT_JS_C     4 /* its last one */
#define TT_LWS_LEAD 8
#define TT_LWS_WORK 16
#define TT_JS       (TT_JS_A | TT_JS_B | TT_JS_C)
#define TT_LWS      (TT_LWS_LEAD | TT_LWS_WORK)
#define TT_ALL      (TT_JS | TT_LWS)
#define TT_N_PLACES 5

static const struct tt_rule {
	const char *name;
	const char *anns;   /* the template's annotations (members) */
	const char *spec;   /* members of its pod spec before containers, each ending "," */
	const char *ctr;    /* members of its container after the name, each starting "," */
	const char *labels; /* its labels (members); NULL: the opt-in label alone */
	int places;         /* where the rule applies (TT_*) */
	int deny;           /* 1: the denial is want; 0: one warning is want */
	const char *want;   /* NULL: /validate says nothing (a rule of the pods alone) */
	const char
	    *pod_warn; /* NULL, or render's warning of the template's pods, {R} their ranks */
} tt_rules[] = {
    {"a port that is no port number", "'distenv.dev/port':'0'", "", "", NULL, TT_ALL, 1,
     "{T}: annotation distenv.dev/port: \"0\" is not a port number between 1 and 65535", NULL},
    {"a framework misspelled", "'distenv.dev/frameworks':'pytroch'", "", "", NULL, TT_ALL, 1,
     "{T}: annotation distenv.dev/frameworks: \"pytroch\" is not a comma list of pytorch, "
     "tensorflow, jax, xgboost, paddle, tpu",
     NULL},
    /* a fixed world: every pod of the JobSet, one group of the LeaderWorkerSet */
    {"a world-size that is not the pods'", "'distenv.dev/world-size':'4'", "", "", NULL, TT_ALL, 1,
     "{T}: annotation distenv.dev/world-size is 4, but {K} has {W} pods per world: remove it",
     NULL},
    {"an annotation misspelled", "'distenv.dev/wolrd-size':'3'", "", "", NULL, TT_ALL, 0,
     "{T}: unknown annotation distenv.dev/wolrd-size (did you mean world-size?) (ignored)", NULL},
    {"max-restarts without elastic", "'distenv.dev/max-restarts':'3'", "", "", NULL, TT_ALL, 0,
     "{T}: distenv.dev/max-restarts is ignored without distenv.dev/elastic: only elastic jobs get "
     "PET_MAX_RESTARTS",
     NULL},
    {"elastic MIN above the world", "'distenv.dev/elastic':'9:10'", "", "", NULL, TT_ALL, 1,
     "{T}: annotation distenv.dev/elastic: MIN 9 is above the world size {W}, so torchrun would "
     "wait for nodes that never exist",
     NULL},
    {"elastic MAX above the world", "'distenv.dev/elastic':'1:9'", "", "", NULL, TT_ALL, 0,
     "{T}: elastic MAX 9 is above the world size {W}: more nodes join only when the workload is "
     "scaled up",
     NULL},
    {"hostNetwork without ClusterFirstWithHostNet", "", "'hostNetwork':true,", "", NULL, TT_ALL, 0,
     "{T}: hostNetwork needs dnsPolicy: ClusterFirstWithHostNet, or MASTER_ADDR will not resolve",
     NULL},
    {"dnsPolicy Default", "", "'dnsPolicy':'Default',", "", NULL, TT_ALL, 0,
     "{T}: dnsPolicy Default: the node's DNS usually cannot resolve MASTER_ADDR; use ClusterFirst",
     NULL},
    {"hostNetwork ranks that may share a node", "",
     "'hostNetwork':true,'dnsPolicy':'ClusterFirstWithHostNet',", "", NULL, TT_ALL, 0,
     "{T}: hostNetwork ranks may share a node and its ports: add a hostname podAntiAffinity or "
     "spread",
     NULL},
    {"a container's own MASTER_ADDR, not rank 0's", "", "",
     ",'env':[{'name':'MASTER_ADDR','value':'x.y'}]", NULL, TT_ALL, 0,
     "{T}: container t: MASTER_ADDR=x.y is not a name of rank 0's pod: every rank meets there; "
     "check it",
     NULL},
    {"a container's own MASTER_PORT, no port number", "", "",
     ",'env':[{'name':'MASTER_PORT','value':'abc'}]", NULL, TT_ALL, 1,
     "{T}: container t sets MASTER_PORT to \"abc\", which is not a port number between 1 and "
     "65535",
     NULL},
    {"a container's own WORLD_SIZE", "", "", ",'env':[{'name':'WORLD_SIZE','value':'7'}]", NULL,
     TT_ALL, 0,
     "{T}: container t: WORLD_SIZE=7, not distenv's {W}: env:// waits for that many; torchrun "
     "sets its own",
     "container t: WORLD_SIZE=7, not distenv's {W}: env:// waits for that many; torchrun sets its "
     "own"},
    /* the leader is one rank: one literal RANK is judged per pod, not at apply */
    {"one literal RANK for two ranks", "", "", ",'env':[{'name':'RANK','value':'1'}]", NULL,
     TT_JS | TT_LWS_WORK, 1,
     "{T}: container t sets RANK=1 for each of its 2 ranks, so they would all claim one rank: "
     "remove RANK from its env (distenv gives each pod its own)",
     NULL},
    /* a JobSet's: the completion index of a replicated Job is not the ranks of the JobSet */
    {"RANK from the completion index", "", "",
     ",'env':[{'name':'RANK','valueFrom':{'fieldRef':{'fieldPath':"
     "'metadata.annotations[\\u0027batch.kubernetes.io/job-completion-index\\u0027]'}}}]",
     NULL, TT_JS, 1,
     "{T}: container t sets RANK from the completion index, 0 to 1 in each of its 1 Job(s), not "
     "the ranks of JobSet js's 6 pods, so two pods would claim one rank: remove RANK from its env "
     "(distenv gives each pod its own)",
     NULL},
    {"LOCAL_RANK with two processes a pod", "'distenv.dev/nproc-per-node':'2'", "",
     ",'env':[{'name':'LOCAL_RANK','value':'0'}]", NULL, TT_ALL, 0,
     "{T}: container t sets LOCAL_RANK: launchers start 1 process, not 2; remove it", NULL},
    {"nproc-per-node above the GPUs", "'distenv.dev/nproc-per-node':'16'", "",
     ",'resources':{'limits':{'nvidia.com/gpu':'8'}}", NULL, TT_ALL, 0,
     "{T}: distenv.dev/nproc-per-node 16 is above the 8 GPUs of a container: processes would "
     "share a GPU; set 8",
     "distenv.dev/nproc-per-node 16 is above the 8 GPUs of a container: processes would share a "
     "GPU; set 8"},
    {"XGBoost with two processes a pod",
     "'distenv.dev/frameworks':'pytorch,xgboost','distenv.dev/nproc-per-node':'2'", "", "", NULL,
     TT_ALL, 0, "{T}: DMLC_NUM_WORKER counts 1 XGBoost worker a pod, not its 2 processes",
     "DMLC_NUM_WORKER counts 1 XGBoost worker a pod, not its 2 processes"},
    {"elastic, PET_RDZV_CONF from a reference", "'distenv.dev/elastic':'1:3'", "",
     ",'env':[{'name':'PET_RDZV_CONF','valueFrom':{'configMapKeyRef':{'name':'c','key':'k'}}}]",
     NULL, TT_ALL, 0,
     "{T}: container t: PET_RDZV_CONF from a reference gets no is_host, so torchrun guesses its "
     "host: use a literal",
     NULL},
    /* the pods' alone: Istio's injector runs after distenv, its sidecar is seen in the pod */
    {"Istio's sidecar on the rendezvous port", "'sidecar.istio.io/status':'{}'", "", "", NULL,
     TT_ALL, 0, NULL,
     "Istio's sidecar takes port 29500: annotate "
     "traffic.sidecar.istio.io/exclude{Inbound,Outbound}Ports"},
    /* the target containers (targets.c): every pod of the template would be refused */
    {"distenv.dev/containers naming no container", "'distenv.dev/containers':'t,trainer'", "", "",
     NULL, TT_ALL, 1,
     "{T}: annotation distenv.dev/containers: the pod has no container or init container named "
     "\"trainer\"",
     NULL},
    {"a template that does not opt in", "", "", "", "'app':'ddp'", TT_ALL, 0,
     "{T}: no label distenv.dev/inject, so its pods get no env, yet WORLD_SIZE counts them", NULL},
};

/* Where place p (0 to TT_N_PLACES - 1) is: its TT_* bit, kind, template name, world, ranks. */
static const struct tt_place {
	int bit;
	const char *kind, *what;
	long world;
	const char *ranks;
} tt_places[TT_N_PLACES] = {
    {TT_JS_A, "JobSet", "replicated Job a", 6, "ranks 0-1"},
    {TT_JS_B, "JobSet", "replicated Job b", 6, "ranks 2-3"},
    {TT_JS_C, "JobSet", "replicated Job c", 6, "ranks 4-5"},
    {TT_LWS_LEAD, "LeaderWorkerSet", "leader template", 3, "rank 0"},
    {TT_LWS_WORK, "LeaderWorkerSet", "worker template", 3, "ranks 1-2"},
};

/* s with ' turned into " (malloc'd). */
static char *tt_dq(const char *s)
{
	char *p = strdup(s), *q;

	for (q = p; p != NULL && *q; q++)
		if (*q == '\'')
			*q = '"';
	return p;
}

/* A pod template, with rule r's problem when bad (r NULL: clean). */
static void tt_template(char *out, size_t len, const struct tt_rule *r, int bad)
{
	snprintf(out, len,
	         "{'metadata':{'labels':{%s},'annotations':{%s}},'spec':{%s'containers':[{'name':"
	         "'t','image':'registry.invalid/train:1'%s}]}}",
	         bad && r->labels != NULL ? r->labels : "'distenv.dev/inject':'true'",
	         bad ? r->anns : "", bad ? r->spec : "", bad ? r->ctr : "");
}

/* The workload of place p with rule r's problem on its template, as JSON (malloc'd). */
static char *tt_json(const struct tt_rule *r, int p)
{
	char t[3][2048], buf[8192];
	int i;

	if (tt_places[p].bit & TT_JS) {
		for (i = 0; i < 3; i++)
			tt_template(t[i], sizeof(t[i]), r, tt_places[p].bit == (TT_JS_A << i));
		snprintf(
		    buf, sizeof(buf),
		    "{'apiVersion':'jobset.x-k8s.io/v1alpha2','kind':'JobSet','metadata':{'name':"
		    "'js','namespace':'ml'},'spec':{'replicatedJobs':["
		    "{'name':'a','replicas':1,'template':{'spec':{'completions':2,'parallelism':2,"
		    "'completionMode':'Indexed','template':%s}}},"
		    "{'name':'b','replicas':1,'template':{'spec':{'completions':2,'parallelism':2,"
		    "'completionMode':'Indexed','template':%s}}},"
		    "{'name':'c','replicas':1,'template':{'spec':{'completions':2,'parallelism':2,"
		    "'completionMode':'Indexed','template':%s}}}]}}",
		    t[0], t[1], t[2]);
	} else {
		tt_template(t[0], sizeof(t[0]), r, tt_places[p].bit == TT_LWS_LEAD);
		tt_template(t[1], sizeof(t[1]), r, tt_places[p].bit == TT_LWS_WORK);
		snprintf(
		    buf, sizeof(buf),
		    "{'apiVersion':'leaderworkerset.x-k8s.io/v1','kind':'LeaderWorkerSet',"
		    "'metadata':{'name':'lws','namespace':'ml'},'spec':{'replicas':1,"
		    "'leaderWorkerTemplate':{'size':3,'leaderTemplate':%s,'workerTemplate':%s}}}",
		    t[0], t[1]);
	}
	return tt_dq(buf);
}

/* want with {T}, {W} and {R} filled in for place p, after "distenv: ", cut to max - 1 bytes. */
static void tt_want(char *out, size_t len, const char *want, int p, size_t max)
{
	const char *s;
	size_t n = (size_t)snprintf(out, len, "distenv: ");

	for (s = want; *s != '\0' && n + 1 < len; s++) {
		if (strncmp(s, "{T}", 3) == 0)
			n += (size_t)snprintf(out + n, len - n, "%s", tt_places[p].what), s += 2;
		else if (strncmp(s, "{W}", 3) == 0)
			n += (size_t)snprintf(out + n, len - n, "%ld", tt_places[p].world), s += 2;
		else if (strncmp(s, "{K}", 3) == 0)
			n += (size_t)snprintf(out + n, len - n, "%s %s", tt_places[p].kind,
			                      tt_places[p].bit & TT_JS ? "js" : "lws"),
			    s += 2;
		else if (strncmp(s, "{R}", 3) == 0)
			n += (size_t)snprintf(out + n, len - n, "%s", tt_places[p].ranks), s += 2;
		else
			out[n++] = *s;
		if (n >= len)
			n = len - 1;
	}
	out[n] = '\0';
	if (max > 0 && strlen(out) > max - 1)
		out[max - 1] = '\0';
}

#endif
