/*
 * Apply-time validation, row by row: what is denied (every problem in one
 * message), what is warned about (each under 120 characters, starting
 * "distenv: "), and the Service checks through the look-up interface.
 */
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "kind.h"
#include "testtemplates.h"
#include "testutil.h"
#include "validate.h"

static char *dq(const char *s)
{
	char *p = strdup(s), *q;

	for (q = p; *q; q++)
		if (*q == '\'')
			*q = '"';
	return p;
}

#define TMPL(anns, spec)                                                                           \
	"'template':{'metadata':{'labels':{'app':'ddp','distenv.dev/"                              \
	"inject':'true'},'annotations':{" anns "}},'spec':{" spec "'containers':[{'name':'t'}]}}"
/* A replicated Job of 1 Job x pods, TensorFlow asked for. */
#define TF_RJOB(name, pods)                                                                        \
	"{'name':'" name "','replicas':1,'template':{'spec':{'completions':" pods                  \
	",'parallelism':" pods                                                                     \
	",'completionMode':'Indexed'," TMPL("'distenv.dev/frameworks':'tensorflow'", "") "}}}"
/* A pod template whose container takes RANK from its completion index (a fieldRef; \u0027 is '). */
#define IDX_TMPL                                                                                   \
	"'template':{'metadata':{'labels':{'distenv.dev/inject':'true'}},'spec':{'containers':[{"  \
	"'name':'t','env':[{'name':'RANK','valueFrom':{'fieldRef':{'fieldPath':"                   \
	"'metadata.annotations[\\u0027batch.kubernetes.io/job-completion-index\\u0027]'}}}]}]}}"
/* A StatefulSet pod template whose container takes var from the pod-index label. */
#define POD_INDEX_TMPL(var)                                                                        \
	"'template':{'metadata':{'labels':{'distenv.dev/inject':'true'}},'spec':{'containers':[{"  \
	"'name':'t','env':[{'name':'" var "','valueFrom':{'fieldRef':{'fieldPath':"                \
	"'metadata.labels[\\u0027apps.kubernetes.io/pod-index\\u0027]'}}}]}]}}"
#define STS_INDEX(start, var)                                                                      \
	"{'metadata':{'name':'ddp'},'spec':{'replicas':2,'serviceName':'ddp','"                    \
	"podManagementPolicy':"                                                                    \
	"'Parallel','ordinals':{'start':" start "}," POD_INDEX_TMPL(var) "}}"
#define STS(name, extra, anns)                                                                     \
	"{'metadata':{'name':'" name "'},'spec':{'replicas':2,'serviceName':'ddp'," extra TMPL(    \
	    anns, "") "}}"

/* A StatefulSet of 2 whose container t has the env entries given (may be ""). */
#define STS_ENV(anns, env)                                                                         \
	"{'metadata':{'name':'ddp'},'spec':{'replicas':2,'serviceName':'ddp',"                     \
	"'podManagementPolicy':'Parallel','template':{'metadata':{'labels':{'distenv.dev/"         \
	"inject':'true'},'annotations':{" anns "}},'spec':{'containers':[{'name':'t','env':[" env  \
	"]}]}}}}"
/* An elastic StatefulSet whose container sets PET_RDZV_CONF with entry (its value or valueFrom). */
/* An elastic StatefulSet whose container sets PET_RDZV_CONF with entry (its value or valueFrom). */
#define RDZV_STS(entry)                                                                            \
	"{'metadata':{'name':'ddp'},'spec':{'replicas':2,'serviceName':'ddp','"                    \
	"podManagementPolicy':"                                                                    \
	"'Parallel','template':{'metadata':{'labels':{'distenv.dev/"                               \
	"inject':'true'},'annotations':{"                                                          \
	"'distenv.dev/elastic':'1:2'}},'spec':{'containers':[{'name':'t','env':[{'name':'BASE',"   \
	"'value':'timeout=900'},{'name':'PET_RDZV_CONF'," entry "}]}]}}}}"

/* A replicated Job of reps Jobs of pods pods each, Indexed, opted in with annotations anns. */
#define RJOB_OF(name, reps, pods, anns)                                                            \
	"{'name':'" name "','replicas':" reps ",'template':{'spec':{'completions':" pods           \
	",'parallelism':" pods ",'completionMode':'Indexed'," TMPL(anns, "") "}}}"
/* A replicated Job of 1 Job: its completions, parallelism and completionMode. */
#define RJOB3(name, comp, par, mode)                                                               \
	"{'name':'" name "','replicas':1,'template':{'spec':{'completions':" comp                  \
	",'parallelism':" par ",'completionMode':'" mode "'," TMPL("", "") "}}}"

/* A JobSet of three replicated Jobs of 2 pods, b and c Indexed, a of completionMode mode. */
#define JS3(mode)                                                                                  \
	"{'metadata':{'name':'js'},'spec':{'replicatedJobs':[" RJOB3(                              \
	    "a", "2", "2", mode) "," RJOB3("b", "2", "2", "Indexed") "," RJOB3("c", "2", "2",      \
	                                                                       "Indexed") "]}}"

/* The pod template of replicated Job number i of JobSet obj. */
static cJSON *rjob_template(cJSON *obj, int i)
{
	cJSON *rj = cJSON_GetArrayItem(
	    cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "spec"), "replicatedJobs"), i);

	return cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(rj, "template"), "spec"),
	                           "template");
}

/* Services the fake look-up knows, by name. */
static int fake_service(void *ctx, const char *ns, const char *name, struct service_info *out,
                        char *err, size_t errlen)
{
	(void)ctx;
	(void)ns;
	memset(out, 0, sizeof(*out));
	if (strcmp(name, "broken") == 0) {
		snprintf(err, errlen, "forbidden");
		return -1;
	}
	if (strcmp(name, "ddp") == 0 || strcmp(name, "clusterip") == 0 ||
	    strcmp(name, "other") == 0) {
		out->headless = strcmp(name, "clusterip") != 0;
		out->publish_not_ready = strcmp(name, "ddp") == 0;
		out->n_selector = 1;
		strcpy(out->selector[0][0], "app");
		strcpy(out->selector[0][1], strcmp(name, "other") == 0 ? "web" : "ddp");
		return 1;
	}
	return 0;
}

static const struct {
	const char *name;
	const char *kind;
	const char *obj;
	int opted_in;
	const char *deny; /* substrings, '|'-separated; NULL: allowed */
	const char *warn; /* a substring of one warning; NULL: no warnings */
} cases[] = {
    {"a good StatefulSet", "StatefulSet", STS("ddp", "'podManagementPolicy':'Parallel',", ""), 1,
     NULL, NULL},
    {"not opted in: nothing checked", "StatefulSet",
     "{'metadata':{'name':'x'},'spec':{'template':{'metadata':{}}}}", 0, NULL, NULL},
    {"OrderedReady (the default)", "StatefulSet", STS("ddp", "", ""), 1, NULL,
     "distenv: podManagementPolicy OrderedReady"},
    {"two bad annotations, both named", "StatefulSet",
     STS("ddp", "'podManagementPolicy':'Parallel',",
         "'distenv.dev/port':'0','distenv.dev/elastic':'4:2'"),
     1, "distenv.dev/port: \"0\"|distenv.dev/elastic: \"4:2\" has MIN greater than MAX", NULL},
    {"containers names no container of the template: every pod would be denied", "StatefulSet",
     STS("ddp", "'podManagementPolicy':'Parallel',", "'distenv.dev/containers':'t, trainer'"), 1,
     "annotation distenv.dev/containers: the pod has no container or init container named "
     "\"trainer\"",
     NULL},
    {"containers names the template's container", "StatefulSet",
     STS("ddp", "'podManagementPolicy':'Parallel',", "'distenv.dev/containers':' t '"), 1, NULL,
     NULL},
    {"an empty container name: the annotation's problem, said once", "StatefulSet",
     STS("ddp", "'podManagementPolicy':'Parallel',", "'distenv.dev/containers':'t,,'"), 1,
     "distenv: annotation distenv.dev/containers: \"t,,\" has an empty container name", NULL},
    {"a misspelled annotation", "StatefulSet",
     STS("ddp", "'podManagementPolicy':'Parallel',", "'distenv.dev/wolrd-size':'3'"), 1, NULL,
     "distenv: unknown annotation distenv.dev/wolrd-size (did you mean world-size?) (ignored)"},
    {"world size above the replicas, not elastic: refused with the fix (the job would wait)",
     "StatefulSet", STS("ddp", "'podManagementPolicy':'Parallel',", "'distenv.dev/world-size':'3'"),
     1,
     "distenv: world size 3 (annotation) is above the 2 replicas: ranks from 2 never start and "
     "every pod waits for them: count pods, not GPUs (distenv.dev/nproc-per-node gives a pod's "
     "processes), or make it elastic (distenv.dev/elastic)",
     NULL},
    {"world size equal to the replicas: allowed", "StatefulSet",
     STS("ddp", "'podManagementPolicy':'Parallel',", "'distenv.dev/world-size':'2'"), 1, NULL,
     NULL},
    {"world size above the replicas, elastic: warned", "StatefulSet",
     STS("ddp", "'podManagementPolicy':'Parallel',",
         "'distenv.dev/world-size':'3','distenv.dev/elastic':'1:3'"),
     1, NULL, "world size 3 (annotation) is above the 2 replicas: ranks from 2 never start"},
    {"elastic, PET_RDZV_CONF from a $(reference): warned, no is_host can be merged", "StatefulSet",
     RDZV_STS("'value':'$(BASE)'"), 1, NULL,
     "distenv: container t: PET_RDZV_CONF from a reference gets no is_host, so torchrun guesses "
     "its host: use a literal"},
    {"elastic, PET_RDZV_CONF from valueFrom: warned", "StatefulSet",
     RDZV_STS("'valueFrom':{'configMapKeyRef':{'name':'c','key':'k'}}"), 1, NULL,
     "distenv: container t: PET_RDZV_CONF from a reference gets no is_host"},
    {"elastic, PET_RDZV_CONF a literal: merged, no warning", "StatefulSet",
     RDZV_STS("'value':'timeout=900'"), 1, NULL, NULL},
    {"elastic, PET_RDZV_CONF a reference that says is_host: its own choice, no warning",
     "StatefulSet", RDZV_STS("'value':'$(BASE),is_host=0'"), 1, NULL, NULL},
    {"8 of an accelerator gpuResources does not list, no nproc-per-node: warned at apply",
     "StatefulSet",
     "{'metadata':{'name':'ddp'},'spec':{'replicas':2,'serviceName':'ddp','podManagementPolicy':"
     "'Parallel','template':{'metadata':{'labels':{'distenv.dev/inject':'true'}},'spec':{"
     "'containers':[{'name':'t','resources':{'limits':{'habana.ai/gaudi':'8'}}}]}}}}",
     1, NULL,
     "distenv: 8 habana.ai/gaudi a pod, not in gpuResources: PET_NPROC_PER_NODE=1; set "
     "distenv.dev/nproc-per-node"},
    {"nproc-per-node above the GPUs of a container: warned", "StatefulSet",
     "{'metadata':{'name':'ddp'},'spec':{'replicas':2,'serviceName':'ddp','podManagementPolicy':"
     "'Parallel','template':{'metadata':{'labels':{'distenv.dev/inject':'true'},'annotations':{"
     "'distenv.dev/nproc-per-node':'16'}},'spec':{'containers':[{'name':'t','resources':{"
     "'limits':{'nvidia.com/gpu':'8'}}}]}}}}",
     1, NULL,
     "distenv: distenv.dev/nproc-per-node 16 is above the 8 GPUs of a container: processes would "
     "share a GPU; set 8"},
    {"nproc-per-node below the GPUs, or on a pod without GPUs: no warning", "StatefulSet",
     "{'metadata':{'name':'ddp'},'spec':{'replicas':2,'serviceName':'ddp','podManagementPolicy':"
     "'Parallel','template':{'metadata':{'labels':{'distenv.dev/inject':'true'},'annotations':{"
     "'distenv.dev/nproc-per-node':'4'}},'spec':{'containers':[{'name':'t','resources':{"
     "'limits':{'nvidia.com/gpu':'8'}}},{'name':'cpu'}]}}}}",
     1, NULL, NULL},
    {"a StatefulSet name of 52 characters: allowed", "StatefulSet",
     STS("abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefgh",
         "'podManagementPolicy':'Parallel',", ""),
     1, NULL, NULL},
    {"a StatefulSet name of 53 characters", "StatefulSet",
     STS("abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghi",
         "'podManagementPolicy':'Parallel',", ""),
     1, "above 52 its pods cannot be created", NULL},
    {"a StatefulSet name with a dot: its pods' hostnames are no DNS label, and the fix says why",
     "StatefulSet", STS("llama.v2", "'podManagementPolicy':'Parallel',", ""), 1,
     "the hostname of rank 1 of StatefulSet llama.v2, llama.v2-1, has a dot, which a pod's "
     "hostname (one DNS label) cannot: name the workload without dots",
     NULL},
    {"a JobSet whose longest hostname is 64 characters: named, with its length", "JobSet",
     "{'metadata':{'name':'pytorch-pretraining-llama-3-70b-run'},'spec':{'replicatedJobs':[{"
     "'name':'workers-with-a-long-name','replicas':1,'template':{'spec':{'completions':4,"
     "'parallelism':4,'completionMode':'Indexed'," TMPL("", "") "}}}]}}",
     1,
     "the hostname of rank 3 of JobSet pytorch-pretraining-llama-3-70b-run, "
     "pytorch-pretraining-llama-3-70b-run-workers-with-a-long-name-0-3, is 64 characters, "
     "above a DNS label's 63: shorten the names",
     NULL},
    {"a distenv.dev/ annotation on the StatefulSet itself: ignored by the pods, said so",
     "StatefulSet",
     "{'metadata':{'name':'ddp','annotations':{'distenv.dev/frameworks':'jax'}},'spec':{"
     "'replicas':2,'serviceName':'ddp','podManagementPolicy':'Parallel'," TMPL("", "") "}}",
     1, NULL,
     "distenv: distenv.dev/frameworks is on the StatefulSet, not its pod template: ignored; move "
     "it there"},
    {"the same annotation on the StatefulSet and its pod template: the pods have it, no warning",
     "StatefulSet",
     "{'metadata':{'name':'ddp','annotations':{'distenv.dev/frameworks':'jax'}},'spec':{"
     "'replicas':2,'serviceName':'ddp','podManagementPolicy':'Parallel'," TMPL(
         "'distenv.dev/frameworks':'jax'", "") "}}",
     1, NULL, NULL},
    {"a replicated Job's container with its own MASTER_ADDR under another Service: the warning "
     "names the replicated Job whole",
     "JobSet",
     "{'metadata':{'name':'pytorch'},'spec':{'network':{'subdomain':'mysvc'},'replicatedJobs':[{"
     "'name':'workers','replicas':1,'template':{'spec':{'completions':4,'parallelism':4,"
     "'completionMode':'Indexed','template':{'metadata':{'labels':{'distenv.dev/inject':'true'}},"
     "'spec':{'containers':[{'name':'pytorch','env':[{'name':'MASTER_ADDR','value':"
     "'pytorch-workers-0-0.pytorch'}]}]}}}}}]}}",
     1, NULL,
     "distenv: replicated Job workers: container pytorch: MASTER_ADDR is not rank 0's pod (render "
     "shows it): check it"},
    {"no serviceName", "StatefulSet",
     "{'metadata':{'name':'ddp'},'spec':{'podManagementPolicy':'Parallel'," TMPL("", "") "}}", 1,
     "has no spec.serviceName", NULL},
    {"elastic MIN above the world", "StatefulSet",
     STS("ddp", "'podManagementPolicy':'Parallel',", "'distenv.dev/elastic':'3:4'"), 1,
     "MIN 3 is above the world size 2", NULL},
    /* the world's edges: MIN at the world, a world of 1, a world at the limit (65536) */
    {"elastic MIN equal to the world: allowed, no warning", "StatefulSet",
     STS("ddp", "'podManagementPolicy':'Parallel',", "'distenv.dev/elastic':'2:2'"), 1, NULL, NULL},
    {"a world of 1 pod whose container sets WORLD_SIZE 2: judged against the world of 1",
     "StatefulSet",
     "{'metadata':{'name':'ddp'},'spec':{'replicas':1,'serviceName':'ddp',"
     "'podManagementPolicy':'Parallel','template':{'metadata':{'labels':{'app':'ddp',"
     "'distenv.dev/inject':'true'}},'spec':{'containers':[{'name':'t','env':[{'name':"
     "'WORLD_SIZE','value':'2'}]}]}}}}",
     1, NULL,
     "distenv: container t: WORLD_SIZE=2, not distenv's 1: env:// waits for that many; torchrun "
     "sets its own"},
    {"a world of 1 pod whose name has a dot: rank 0's hostname named", "StatefulSet",
     "{'metadata':{'name':'llama.v2'},'spec':{'replicas':1,'serviceName':'ddp',"
     "'podManagementPolicy':'Parallel'," TMPL("", "") "}}",
     1,
     "distenv: the hostname of rank 0 of StatefulSet llama.v2, llama.v2-0, has a dot, which a "
     "pod's hostname (one DNS label) cannot: name the workload without dots",
     NULL},
    {"a world of 65536 pods (the limit) whose name has a dot: its last hostname named",
     "StatefulSet",
     "{'metadata':{'name':'llama.v2'},'spec':{'replicas':65536,'serviceName':'ddp',"
     "'podManagementPolicy':'Parallel'," TMPL("", "") "}}",
     1,
     "distenv: the hostname of rank 65535 of StatefulSet llama.v2, llama.v2-65535, has a dot, "
     "which a pod's hostname (one DNS label) cannot: name the workload without dots",
     NULL},
    {"4000 ranks asking for pytorch alone: no TF_CONFIG to size, nothing said", "StatefulSet",
     "{'metadata':{'name':'ddp'},'spec':{'replicas':4000,'serviceName':'ddp',"
     "'podManagementPolicy':'Parallel'," TMPL("'distenv.dev/frameworks':'pytorch'", "") "}}",
     1, NULL, NULL},
    {"TF_CONFIG past the exec limit, tensorflow a default", "StatefulSet",
     "{'metadata':{'name':'ddp'},'spec':{'replicas':4000,'serviceName':'ddp',"
     "'podManagementPolicy':'Parallel'," TMPL("", "") "}}",
     1, NULL, "TF_CONFIG left out: 166963 bytes for 4000 ranks, over Linux's 131072 per variable"},
    {"TF_CONFIG past the exec limit, tensorflow asked", "StatefulSet",
     "{'metadata':{'name':'ddp'},'spec':{'replicas':4000,'serviceName':'ddp',"
     "'podManagementPolicy':'Parallel'," TMPL("'distenv.dev/frameworks':'tensorflow'", "") "}}",
     1, "TF_CONFIG would be about", NULL},
    /* a TPU host list at its edge: ddp-0 ... ddp-3886 make "TPU_WORKER_HOSTNAMES=..." and
       its NUL 131069 bytes, one pod more 131103 */
    {"TPU_WORKER_HOSTNAMES of 3887 pods, tpu asked: within the exec limit", "StatefulSet",
     "{'metadata':{'name':'ddp'},'spec':{'replicas':3887,'serviceName':'ddp',"
     "'podManagementPolicy':'Parallel'," TMPL("'distenv.dev/frameworks':'pytorch,tpu'", "") "}}",
     1, NULL, NULL},
    {"TPU_WORKER_HOSTNAMES of 3888 pods, tpu asked: refused", "StatefulSet",
     "{'metadata':{'name':'ddp'},'spec':{'replicas':3888,'serviceName':'ddp',"
     "'podManagementPolicy':'Parallel'," TMPL("'distenv.dev/frameworks':'pytorch,tpu'", "") "}}",
     1,
     "distenv: TPU_WORKER_HOSTNAMES would be about 131103 bytes for 3888 ranks, above Linux's "
     "limit of 131072 bytes for one environment string: drop tpu from distenv.dev/frameworks",
     NULL},
    /* slices of different sizes are refused; the host list is still sized at the
       widest rank of each replicated Job, here the last of b, whose slice is 3888 hosts */
    {"TPU slices of 2 and 3888 hosts: refused, and the host list past the exec limit", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[" RJOB_OF(
         "a", "1", "2",
         "'distenv.dev/frameworks':'pytorch,tpu'") "," RJOB_OF("b", "1", "3888",
                                                               "'distenv.dev/"
                                                               "frameworks':'pytorch,tpu'") "]}}",
     1,
     "distenv: tpu: the Jobs of JobSet ml/js are not one size (a: 2 pods, b: 3888), so a TPU "
     "slice's hosts are not all of one Job and JAX's process ids would not be the ranks: give "
     "every replicated Job the same completions, or list the frameworks in "
     "distenv.dev/frameworks without tpu; TPU_WORKER_HOSTNAMES would be about 138879 bytes for "
     "3890 ranks, above Linux's limit of 131072 bytes for one environment string: drop tpu from "
     "distenv.dev/frameworks",
     NULL},
    {"a non-Indexed Job", "Job",
     "{'metadata':{'name':'train'},'spec':{'completions':2,'parallelism':2," TMPL(
         "", "'subdomain':'ddp',") "}}",
     1, "Job train is not an Indexed Job", NULL},
    {"parallelism below completions", "Job",
     "{'metadata':{'name':'train'},'spec':{'completions':4,'parallelism':2,'completionMode':"
     "'Indexed'," TMPL("", "'subdomain':'ddp',") "}}",
     1, "parallelism 2 below completions 4", NULL},
    {"a Job without subdomain", "Job",
     "{'metadata':{'name':'train'},'spec':{'completions':2,'parallelism':2,'completionMode':"
     "'Indexed'," TMPL("", "") "}}",
     1, "has no spec.subdomain", NULL},
    {"a Job whose last hostname passes 63", "Job",
     "{'metadata':{'name':'abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefgh'},"
     "'spec':{'completions':12,'parallelism':12,'completionMode':'Indexed'," TMPL(
         "", "'subdomain':'ddp',") "}}",
     1, "the hostname of rank 11", NULL},
    {"a JobSet with a non-Indexed replicated Job", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[{'name':'a','replicas':2,'template':"
     "{'spec':{'completions':2,'parallelism':2," TMPL("", "") "}}}]}}",
     1, "replicated Job a is not an Indexed Job", NULL},
    {"a JobSet whose world annotation disagrees", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[{'name':'a','replicas':2,'template':"
     "{'spec':{'completions':2,'parallelism':2,'completionMode':'Indexed'," TMPL(
         "'distenv.dev/world-size':'2'", "") "}}}]}}",
     1, "is 2, but JobSet js has 4 pods", NULL},
    {"a JobSet's RANK from the completion index in 2 Jobs: it repeats, denied", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[{'name':'a','replicas':2,'template':"
     "{'spec':{'completions':2,'parallelism':2,'completionMode':'Indexed'," IDX_TMPL "}}}]}}",
     1,
     "replicated Job a: container t sets RANK from the completion index, 0 to 1 in each of its 2 "
     "Job(s), not the ranks of JobSet js's 4 pods, so two pods would claim one rank: remove RANK",
     NULL},
    {"a JobSet's RANK from the completion index after another replicated Job: denied", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[{'name':'d','replicas':1,'template':"
     "{'spec':{'completions':1,'parallelism':1,'completionMode':'Indexed'," TMPL(
         "", "") "}}},{'name':'a','replicas':1,'template':{'spec':{'completions':2,'parallelism':2,"
                 "'completionMode':'Indexed'," IDX_TMPL "}}}]}}",
     1, "0 to 1 in each of its 1 Job(s), not the ranks of JobSet js's 3 pods", NULL},
    {"a JobSet's RANK from the completion index of a 1-pod Job after another: denied", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[{'name':'d','replicas':1,'template':"
     "{'spec':{'completions':1,'parallelism':1,'completionMode':'Indexed'," TMPL(
         "", "") "}}},{'name':'a','replicas':1,'template':{'spec':{'completions':1,'parallelism':1,"
                 "'completionMode':'Indexed'," IDX_TMPL "}}}]}}",
     1, "0 to 0 in each of its 1 Job(s), not the ranks of JobSet js's 2 pods", NULL},
    {"a StatefulSet of 0 replicas whose pods are told a world of 2: refused", "StatefulSet",
     "{'metadata':{'name':'ddp'},'spec':{'replicas':0,'serviceName':'ddp',"
     "'podManagementPolicy':'Parallel'," TMPL("'distenv.dev/world-size':'2'", "") "}}",
     1, "world size 2 (annotation) is above the 0", NULL},
    {"a JobSet's RANK from the completion index of its only Job: the rank, allowed", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[{'name':'a','replicas':1,'template':"
     "{'spec':{'completions':2,'parallelism':2,'completionMode':'Indexed'," IDX_TMPL "}}}]}}",
     1, NULL, NULL},
    {"a JobSet whose coordinator is its last pod", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'coordinator':{'replicatedJob':'d'},'replicatedJobs':["
     "{'name':'w','replicas':1,'template':{'spec':{'completions':4,'parallelism':4,"
     "'completionMode':'Indexed'," TMPL(
         "", "") "}}},{'name':'d','replicas':1,'template':{"
                 "'spec':{'completions':1,'parallelism':1,'completionMode':'Indexed'," TMPL(
                     "", "") "}}}]}}",
     1, NULL, NULL},
    {"a JobSet whose coordinator names no pod", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'coordinator':{'replicatedJob':'w','podIndex':4},"
     "'replicatedJobs':[{'name':'w','replicas':1,'template':{'spec':{'completions':4,"
     "'parallelism':4,'completionMode':'Indexed'," TMPL("", "") "}}}]}}",
     1, "the coordinator of JobSet js (replicated Job w, Job 0, pod 4) is not one of its pods",
     NULL},
    {"a JobSet whose coordinator names no replicated Job", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'coordinator':{'replicatedJob':'x'},"
     "'replicatedJobs':[{'name':'w','replicas':1,'template':{'spec':{'completions':4,"
     "'parallelism':4,'completionMode':'Indexed'," TMPL("", "") "}}}]}}",
     1, "(replicated Job x, Job 0, pod 0) is not one of its pods", NULL},
    {"a good LeaderWorkerSet", "LeaderWorkerSet",
     "{'metadata':{'name':'lws'},'spec':{'replicas':2,'leaderWorkerTemplate':{'size':4,"
     "'workerTemplate':{'metadata':{'labels':{'distenv.dev/inject':'true'}},'spec':{}}}}}",
     1, NULL, NULL},
    {"world-size below the replicas: the rest refused for ever, denied at apply", "StatefulSet",
     STS("ddp", "'podManagementPolicy':'Parallel',", "'distenv.dev/world-size':'1'"), 1,
     "annotation distenv.dev/world-size is 1, below the 2 replicas of StatefulSet ddp: ranks 0 "
     "to 0 would train as a world of their own while the pods from rank 1 are refused for "
     "ever: set it to 2 or remove it",
     NULL},
    {"world-size above the completions (GPUs counted): refused, count pods", "Job",
     "{'metadata':{'name':'train'},'spec':{'completions':2,'parallelism':2,'completionMode':"
     "'Indexed'," TMPL("'distenv.dev/world-size':'3'", "'subdomain':'ddp',") "}}",
     1,
     "world size 3 (annotation) is above the 2 completions: ranks from 2 never start and every "
     "pod waits for them: count pods, not GPUs",
     NULL},
    {"max-restarts without elastic: torchrun would never be told", "StatefulSet",
     STS("ddp", "'podManagementPolicy':'Parallel',", "'distenv.dev/max-restarts':'3'"), 1, NULL,
     "distenv: distenv.dev/max-restarts is ignored without distenv.dev/elastic: only elastic "
     "jobs get PET_MAX_RESTARTS"},
    {"max-restarts with elastic: no warning", "StatefulSet",
     STS("ddp", "'podManagementPolicy':'Parallel',",
         "'distenv.dev/max-restarts':'3','distenv.dev/elastic':'1:2'"),
     1, NULL, NULL},
    /* the pod's DNS (Kubernetes, "DNS for Services and Pods") */
    {"hostNetwork, dnsPolicy absent (ClusterFirst): the node's DNS", "StatefulSet",
     "{'metadata':{'name':'ddp'},'spec':{'replicas':2,'serviceName':'ddp','podManagementPolicy':"
     "'Parallel'," TMPL("", "'hostNetwork':true,") "}}",
     1, NULL,
     "distenv: hostNetwork needs dnsPolicy: ClusterFirstWithHostNet, or MASTER_ADDR will "
     "not resolve"},
    {"hostNetwork, dnsPolicy ClusterFirst (the API default): the node's DNS", "Job",
     "{'metadata':{'name':'train'},'spec':{'completions':2,'parallelism':2,'completionMode':"
     "'Indexed'," TMPL("", "'subdomain':'ddp','hostNetwork':true,'dnsPolicy':'ClusterFirst',") "}}",
     1, NULL, "distenv: hostNetwork needs dnsPolicy: ClusterFirstWithHostNet"},
    {"hostNetwork with ClusterFirstWithHostNet, one per node (anti-affinity): nothing to say",
     "StatefulSet",
     "{'metadata':{'name':'ddp'},'spec':{'replicas':2,'serviceName':'ddp','podManagementPolicy':"
     "'Parallel'," TMPL("", "'hostNetwork':true,'dnsPolicy':'ClusterFirstWithHostNet',"
                            "'affinity':{'podAntiAffinity':{'requiredDuringSchedulingIgnoredDuring"
                            "Execution':[{'labelSelector':{'matchLabels':{'app':'ddp'}},"
                            "'topologyKey':'kubernetes.io/hostname'}]}},") "}}",
     1, NULL, NULL},
    {"hostNetwork, one per node by a DoNotSchedule hostname spread of maxSkew 1", "StatefulSet",
     "{'metadata':{'name':'ddp'},'spec':{'replicas':2,'serviceName':'ddp','podManagementPolicy':"
     "'Parallel'," TMPL("", "'hostNetwork':true,'dnsPolicy':'ClusterFirstWithHostNet',"
                            "'topologySpreadConstraints':[{'maxSkew':1,'topologyKey':"
                            "'kubernetes.io/hostname','whenUnsatisfiable':'DoNotSchedule',"
                            "'labelSelector':{'matchLabels':{'app':'ddp'}}}],") "}}",
     1, NULL, NULL},
    {"hostNetwork with nothing that keeps two ranks off one node: they may share its ports",
     "StatefulSet",
     "{'metadata':{'name':'ddp'},'spec':{'replicas':2,'serviceName':'ddp','podManagementPolicy':"
     "'Parallel'," TMPL("", "'hostNetwork':true,'dnsPolicy':'ClusterFirstWithHostNet',") "}}",
     1, NULL, "distenv: hostNetwork ranks may share a node and its ports"},
    {"hostNetwork, a spread that only prefers (ScheduleAnyway): may share", "StatefulSet",
     "{'metadata':{'name':'ddp'},'spec':{'replicas':2,'serviceName':'ddp','podManagementPolicy':"
     "'Parallel'," TMPL("",
                        "'hostNetwork':true,'dnsPolicy':'ClusterFirstWithHostNet',"
                        "'topologySpreadConstraints':[{'maxSkew':1,'topologyKey':"
                        "'kubernetes.io/hostname','whenUnsatisfiable':'ScheduleAnyway'}],") "}}",
     1, NULL, "distenv: hostNetwork ranks may share a node and its ports"},
    {"dnsPolicy Default: the node's DNS", "StatefulSet",
     "{'metadata':{'name':'ddp'},'spec':{'replicas':2,'serviceName':'ddp','podManagementPolicy':"
     "'Parallel'," TMPL("", "'dnsPolicy':'Default',") "}}",
     1, NULL,
     "distenv: dnsPolicy Default: the node's DNS usually cannot resolve MASTER_ADDR; use "
     "ClusterFirst"},
    {"hostNetwork and dnsPolicy Default", "StatefulSet",
     "{'metadata':{'name':'ddp'},'spec':{'replicas':2,'serviceName':'ddp','podManagementPolicy':"
     "'Parallel'," TMPL("", "'hostNetwork':true,'dnsPolicy':'Default',") "}}",
     1, NULL, "MASTER_ADDR; use ClusterFirstWithHostNet"},
    {"dnsPolicy None: its own nameservers, not judged", "StatefulSet",
     "{'metadata':{'name':'ddp'},'spec':{'replicas':2,'serviceName':'ddp','podManagementPolicy':"
     "'Parallel'," TMPL("", "'dnsPolicy':'None','dnsConfig':{'nameservers':['10.0.0.10']},") "}}",
     1, NULL, NULL},
    /* which templates opt in: every one of the kind's (kind_template), each named */
    {"a LeaderWorkerSet whose leader template alone opts in is checked", "LeaderWorkerSet",
     "{'metadata':{'name':'lws'},'spec':{'leaderWorkerTemplate':{'size':4,'leaderTemplate':{"
     "'metadata':{'labels':{'distenv.dev/inject':'true'},'annotations':{'distenv.dev/port':'0'}},"
     "'spec':{}},'workerTemplate':{'spec':{}}}}}",
     1, "distenv.dev/port: \"0\"", NULL},
    /* the ranks a template's pods take (kind_template.ranks): a leader one, its workers the rest */
    {"a LeaderWorkerSet's leader sets RANK itself: one rank, one literal is not judged",
     "LeaderWorkerSet",
     "{'metadata':{'name':'lws'},'spec':{'leaderWorkerTemplate':{'size':4,'leaderTemplate':{"
     "'metadata':{'labels':{'distenv.dev/inject':'true'}},'spec':{'containers':[{'name':'t',"
     "'env':[{'name':'RANK','value':'0'}]}]}},'workerTemplate':{'metadata':{'labels':{"
     "'distenv.dev/inject':'true'}},'spec':{'containers':[{'name':'t'}]}}}}}",
     1, NULL, NULL},
    {"a LeaderWorkerSet of 2 whose one worker sets RANK itself: one rank, not judged",
     "LeaderWorkerSet",
     "{'metadata':{'name':'lws'},'spec':{'leaderWorkerTemplate':{'size':2,'workerTemplate':{"
     "'metadata':{'labels':{'distenv.dev/inject':'true'}},'spec':{'containers':[{'name':'t',"
     "'env':[{'name':'RANK','value':'1'}]}]}}}}}",
     1, NULL, NULL},
    {"a LeaderWorkerSet of 4 whose workers set RANK: one literal for 3 ranks, denied",
     "LeaderWorkerSet",
     "{'metadata':{'name':'lws'},'spec':{'leaderWorkerTemplate':{'size':4,'workerTemplate':{"
     "'metadata':{'labels':{'distenv.dev/inject':'true'}},'spec':{'containers':[{'name':'t',"
     "'env':[{'name':'RANK','value':'1'}]}]}}}}}",
     1, "worker template: ", NULL},
    {"a leader template's warning names it", "LeaderWorkerSet",
     "{'metadata':{'name':'lws'},'spec':{'leaderWorkerTemplate':{'size':4,'leaderTemplate':{"
     "'metadata':{'labels':{'distenv.dev/inject':'true'}},'spec':{'hostNetwork':true}},"
     "'workerTemplate':{'metadata':{'labels':{'distenv.dev/inject':'true'}},'spec':{}}}}}",
     1, NULL, "distenv: leader template: hostNetwork needs dnsPolicy: ClusterFirstWithHostNet"},
    {"a replicated Job's warning names it", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[{'name':'workers','replicas':1,"
     "'template':{'spec':{'completions':2,'parallelism':2,'completionMode':'Indexed'," TMPL(
         "'distenv.dev/wolrd-size':'2'", "") "}}}]}}",
     1, NULL,
     "distenv: replicated Job workers: unknown annotation distenv.dev/wolrd-size (did you mean "
     "world-size?) (ignored)"},
    {"a LeaderWorkerSet whose worker template does not opt in: its pods are counted",
     "LeaderWorkerSet",
     "{'metadata':{'name':'lws'},'spec':{'leaderWorkerTemplate':{'size':4,'leaderTemplate':{"
     "'metadata':{'labels':{'distenv.dev/"
     "inject':'true'}},'spec':{}},'workerTemplate':{'spec':{}}}}}",
     1, NULL,
     "distenv: worker template: no label distenv.dev/inject, so its pods get no env, yet "
     "WORLD_SIZE counts them"},
    {"a JobSet replicated Job that does not opt in: its pods are counted", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[{'name':'driver','template':{'spec':{"
     "'completions':1,'parallelism':1,'completionMode':'Indexed','template':{'spec':{}}}}},"
     "{'name':'w','template':{'spec':{'completions':2,'parallelism':2,'completionMode':'Indexed'"
     "," TMPL("", "") "}}}]}}",
     1, NULL,
     "distenv: replicated Job driver: no label distenv.dev/inject, so its pods get no env"},
    /* the frameworks are every template's: asked on any replicated Job, not the first alone */
    {"tensorflow asked on the first of three replicated Jobs, one named after a role", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[" TF_RJOB(
         "evaluator",
         "1") ","
              "{'name':'trainer','replicas':1,'template':{'spec':{'completions':1,'parallelism':1,"
              "'completionMode':'Indexed'," TMPL(
                  "",
                  "") "}}},{'name':'data','replicas':1,'template':{"
                      "'spec':{'completions':1,'parallelism':1,'completionMode':'Indexed'," TMPL(
                          "", "") "}}}]}}",
     1,
     "distenv: tensorflow: replicated Job evaluator is named after a TensorFlow role and trainer "
     "is not, so TF_CONFIG would make every pod a worker, evaluator included",
     NULL},
    {"tensorflow asked on the middle replicated Job alone", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[{'name':'trainer','replicas':1,"
     "'template':{'spec':{'completions':1,'parallelism':1,'completionMode':'Indexed'," TMPL(
         "", "") "}}}," TF_RJOB("evaluator", "1") ",{'name':'data','replicas':1,'template':{"
                                                  "'spec':{'completions':1,'parallelism':1,"
                                                  "'completionMode':'Indexed'," TMPL("",
                                                                                     "") "}}}]}}",
     1,
     "distenv: tensorflow: replicated Job evaluator is named after a TensorFlow role and trainer "
     "is not, so TF_CONFIG would make every pod a worker, evaluator included",
     NULL},
    {"tensorflow asked on the last replicated Job alone", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[{'name':'trainer','replicas':1,"
     "'template':{'spec':{'completions':1,'parallelism':1,'completionMode':'Indexed'," TMPL(
         "", "") "}}},{'name':'data','replicas':1,'template':{'spec':{'completions':1,"
                 "'parallelism':1,'completionMode':'Indexed'," TMPL("", "") "}}}," TF_RJOB(
                     "evaluator", "1") "]}}",
     1,
     "distenv: tensorflow: replicated Job evaluator is named after a TensorFlow role and trainer "
     "is not, so TF_CONFIG would make every pod a worker, evaluator included",
     NULL},
    {"TF_CONFIG past the exec limit, tensorflow asked on the last replicated Job alone", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[{'name':'a','replicas':1,'template':{"
     "'spec':{'completions':2000,'parallelism':2000,'completionMode':'Indexed'," TMPL(
         "'distenv.dev/frameworks':'pytorch'", "") "}}}," TF_RJOB("b", "2000") "]}}",
     1,
     "distenv: TF_CONFIG would be about 173853 bytes for 4000 ranks, above Linux's limit of "
     "131072 bytes for one environment string: drop tensorflow from distenv.dev/frameworks",
     NULL},
    /*
     * Linux's limit at its edge: "TF_CONFIG=value" and its NUL of exactly 131072
     * bytes at the widest rank (a 4-digit index: ranks 1000 to 2942; hosts
     * "js-a-0-I.js.ml.svc.cluster.local:29500" and one byte longer for bb's) is
     * taken by execve, one byte more is not
     */
    {"TF_CONFIG of exactly 131072 bytes at its widest rank", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[" TF_RJOB("a", "108") "," TF_RJOB(
         "bb", "2835") "]}}",
     1, NULL, NULL},
    {"TF_CONFIG of 131073 bytes at its widest rank", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[" TF_RJOB("a", "130") "," TF_RJOB(
         "bb", "2814") "]}}",
     1,
     "distenv: TF_CONFIG would be about 131073 bytes for 2944 ranks, above Linux's limit of "
     "131072 bytes for one environment string: drop tensorflow from distenv.dev/frameworks",
     NULL},
    {"TF_CONFIG past the exec limit, tensorflow a default of the last replicated Job", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[{'name':'a','replicas':1,'template':{"
     "'spec':{'completions':2000,'parallelism':2000,'completionMode':'Indexed'," TMPL(
         "'distenv.dev/frameworks':'pytorch'",
         "") "}}},{'name':'b','replicas':1,'template':{"
             "'spec':{'completions':2000,'parallelism':"
             "2000,'completionMode':'Indexed'," TMPL("", "") "}}}]}}",
     1, NULL,
     "distenv: TF_CONFIG left out: 173853 bytes for 4000 ranks, over Linux's 131072 per "
     "variable"},
    /* a replicated Job's own spec, on one of three (the others Indexed, 2 of 2) */
    {"the last of three replicated Jobs not Indexed", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[" RJOB3(
         "a", "2", "2", "Indexed") "," RJOB3("b", "2", "2",
                                             "Indexed") "," RJOB3("c", "2", "2",
                                                                  "NonIndexed") "]}}",
     1,
     "distenv: replicated Job c is not an Indexed Job, so its pods have no rank: set "
     "spec.completionMode: Indexed",
     NULL},
    {"the middle of three replicated Jobs running fewer pods than its ranks", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[" RJOB3(
         "a", "2", "2", "Indexed") "," RJOB3("b", "2", "1", "Indexed") "," RJOB3("c", "2", "2",
                                                                                 "Indexed") "]}}",
     1,
     "distenv: replicated Job b has parallelism 1 below completions 2, so not all ranks can run "
     "at once: set them equal",
     NULL},
    {"the first of three replicated Jobs of completions 0", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[" RJOB3(
         "a", "0", "2", "Indexed") "," RJOB3("b", "2", "2", "Indexed") "," RJOB3("c", "2", "2",
                                                                                 "Indexed") "]}}",
     1,
     "distenv: replicated Job a has spec.completions 0, so it has no ranks: set "
     "spec.completions to the number of ranks",
     NULL},
    {"the first of three replicated Jobs of completions -1 (read as none)", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[" RJOB3(
         "a", "-1", "2", "Indexed") "," RJOB3("b", "2", "2", "Indexed") "," RJOB3("c", "2", "2",
                                                                                  "Indexed") "]}}",
     1, "distenv: replicated Job a has no spec.completions (the number of ranks)", NULL},
    {"the first of three replicated Jobs of completions 1", "JobSet",
     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[" RJOB3(
         "a", "1", "1", "Indexed") "," RJOB3("b", "2", "2", "Indexed") "," RJOB3("c", "2", "2",
                                                                                 "Indexed") "]}}",
     1, NULL, NULL},
    {"a LeaderWorkerSet no template of which opts in", "LeaderWorkerSet",
     "{'metadata':{'name':'lws'},'spec':{'leaderWorkerTemplate':{'size':4,'leaderTemplate':{"
     "'spec':{}},'workerTemplate':{'spec':{}}}}}",
     0, NULL, NULL},
};

static const struct {
	const char *name;
	const char *service;
	const char *warn; /* NULL: none */
} svc_cases[] = {
    {"a headless Service that selects the pods and publishes", "ddp", NULL},
    {"a missing Service", "gone", "distenv: Service gone not found in ml"},
    {"a Service with a cluster IP", "clusterip", "is not headless"},
    {"a Service selecting other pods", "other", "does not select the pod template's labels"},
    {"a Service without publishNotReadyAddresses", "clusterip", "lacks publishNotReadyAddresses"},
    {"a Service the API does not show", "broken", "cannot check Service broken: forbidden"},
};

static int has_warning(const struct validation *v, const char *want)
{
	int i;

	for (i = 0; i < v->n_warnings; i++)
		if (strstr(v->warnings[i], want))
			return 1;
	return 0;
}

/* A headless, publishing Service whose selector is ctx ("k=v,k=v"). */
static int selector_service(void *ctx, const char *ns, const char *name, struct service_info *out,
                            char *err, size_t errlen)
{
	char buf[256], *tok, *save = NULL;

	(void)ns;
	(void)name;
	(void)err;
	(void)errlen;
	memset(out, 0, sizeof(*out));
	out->headless = out->publish_not_ready = 1;
	snprintf(buf, sizeof(buf), "%s", (const char *)ctx);
	for (tok = strtok_r(buf, ",", &save); tok != NULL && out->n_selector < 8;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		*eq = '\0';
		snprintf(out->selector[out->n_selector][0], sizeof(out->selector[0][0]), "%s", tok);
		snprintf(out->selector[out->n_selector][1], sizeof(out->selector[0][1]), "%s",
		         eq + 1);
		out->n_selector++;
	}
	return 1;
}

#define SEL_JOB                                                                                    \
	"{'metadata':{'name':'train'},'spec':{'completions':2,'parallelism':2,'completionMode':"   \
	"'Indexed'," TMPL("", "'subdomain':'ddp',") "}}"

/*
 * A Service may select by the labels the controller adds to every pod (the
 * Kubernetes docs' own Indexed Job example selects job-name): only a label the
 * pods never carry, or one that differs per pod, is warned about.
 */
static const struct {
	const char *name, *kind, *obj, *selector;
	const char *warn; /* a substring; NULL: no warning */
} selector_cases[] = {
    {"job-name of the Job: the docs' pattern", "Job", SEL_JOB, "job-name=train", NULL},
    {"batch.kubernetes.io/job-name and the template's app", "Job", SEL_JOB,
     "batch.kubernetes.io/job-name=train,app=ddp", NULL},
    {"no selector at all: the Service selects no pod", "Job", SEL_JOB, "",
     "distenv: Service ddp does not select the pod template's labels"},
    {"job-name of another Job", "Job", SEL_JOB, "job-name=other",
     "Service ddp does not select the pod template's labels"},
    {"controller-uid: not known at apply, not judged", "Job", SEL_JOB, "controller-uid=1234", NULL},
    {"the completion index: one pod", "Job", SEL_JOB, "batch.kubernetes.io/job-completion-index=0",
     "selects by batch.kubernetes.io/job-completion-index, which differs per pod"},
    {"a StatefulSet's pod-name: one pod", "StatefulSet",
     STS("ddp",
         "'podManagementPolicy':"
         "'Parallel',",
         ""),
     "statefulset.kubernetes.io/pod-name=ddp-0", "which differs per pod: not every pod"},
    {"job-name on a StatefulSet: no such label", "StatefulSet",
     STS("ddp", "'podManagementPolicy':'Parallel',", ""), "job-name=ddp",
     "does not select the pod template's labels"},
};

static void test_selectors(void)
{
	struct config cfg;
	size_t i;

	config_defaults(&cfg);
	for (i = 0; i < sizeof(selector_cases) / sizeof(selector_cases[0]); i++) {
		struct workload_lookup lk = {NULL, (void *)selector_cases[i].selector,
		                             selector_service, NULL, NULL};
		char *txt = dq(selector_cases[i].obj);
		cJSON *obj = cJSON_Parse(txt);
		struct validation v;

		validate_workload(obj, selector_cases[i].kind, "ml", &cfg, &lk, NULL, &v);
		if (selector_cases[i].warn)
			CHECK(has_warning(&v, selector_cases[i].warn),
			      "%s: no warning '%s' (%d: '%s')", selector_cases[i].name,
			      selector_cases[i].warn, v.n_warnings,
			      v.n_warnings ? v.warnings[0] : "");
		else
			CHECK(v.n_warnings == 0, "%s: warning '%s'", selector_cases[i].name,
			      v.n_warnings ? v.warnings[0] : "");
		cJSON_Delete(obj);
		free(txt);
	}
}

/* spec.ordinals.start needs the look-ups: the server's lookups setting decides. */
static const struct {
	const char *name, *obj;
	int lookups;
	const char *deny; /* substrings, '|'-separated; NULL: allowed */
} start_cases[] = {
    {"ordinals from 1 without look-ups: rank 0 would be a pod that never exists",
     STS("ddp", "'podManagementPolicy':'Parallel','ordinals':{'start':1},",
         "'distenv.dev/world-size':'2'"),
     0, "StatefulSet ddp starts its ordinals at 1|rank 0 would be ddp-0|turn look-ups on"},
    {"ordinals from 1 with look-ups: the start is read from the API",
     STS("ddp", "'podManagementPolicy':'Parallel','ordinals':{'start':1},", ""), 1, NULL},
    {"ordinals from 0 without look-ups (the world from the annotation)",
     STS("ddp", "'podManagementPolicy':'Parallel','ordinals':{'start':0},",
         "'distenv.dev/world-size':'2'"),
     0, NULL},
    {"a LeaderWorkerSet's worker StatefulSet (ordinals from 1) without look-ups",
     "{'metadata':{'name':'lws-0'},'spec':{'replicas':3,'serviceName':'lws','podManagementPolicy':"
     "'Parallel','ordinals':{'start':1},'template':{'metadata':{'labels':{'distenv.dev/inject':"
     "'true','leaderworkerset.sigs.k8s.io/name':'lws'}},'spec':{'containers':[{'name':'t'}]}}}}",
     0, NULL},
    {"ordinals from 1, RANK from the pod index: 1 and 2, no rank 0, denied", STS_INDEX("1", "RANK"),
     1,
     "container t sets RANK from the pod index (apps.kubernetes.io/pod-index), 1 to 2, not the "
     "ranks 0 to 1 of StatefulSet ddp's 2 pods (its ordinals start at 1)|remove RANK"},
    {"ordinals from 2, NODE_RANK from the pod index: denied", STS_INDEX("2", "NODE_RANK"), 1,
     "sets NODE_RANK from the pod index (apps.kubernetes.io/pod-index), 2 to 3"},
    {"ordinals from 0, RANK from the pod index: the rank, allowed", STS_INDEX("0", "RANK"), 1,
     NULL},
};

static void test_start(void)
{
	struct config cfg;
	size_t i;

	config_defaults(&cfg);
	for (i = 0; i < sizeof(start_cases) / sizeof(start_cases[0]); i++) {
		char *txt = dq(start_cases[i].obj), want[512], *tok, *save = NULL;
		cJSON *obj = cJSON_Parse(txt);
		struct validation v;

		cfg.lookups = start_cases[i].lookups;
		validate_workload(obj, "StatefulSet", "ml", &cfg, NULL, NULL, &v);
		if (start_cases[i].deny == NULL) {
			CHECK(v.n_problems == 0, "%s: denied '%s'", start_cases[i].name, v.denial);
		} else {
			snprintf(want, sizeof(want), "%s", start_cases[i].deny);
			CHECK(v.n_problems > 0, "%s: allowed", start_cases[i].name);
			for (tok = strtok_r(want, "|", &save); tok;
			     tok = strtok_r(NULL, "|", &save))
				CHECK(strstr(v.denial, tok) != NULL, "%s: denial '%s' lacks '%s'",
				      start_cases[i].name, v.denial, tok);
		}
		cJSON_Delete(obj);
		free(txt);
	}
}

/* The fake list: ctx is the items, quoted with '; "fail" fails. */
static int fake_netpols(void *ctx, const char *ns, cJSON **out, char *err, size_t errlen)
{
	char *txt, *list;
	size_t n;

	(void)ns;
	*out = NULL;
	if (strcmp(ctx, "fail") == 0) {
		snprintf(err, errlen, "forbidden");
		return -1;
	}
	n = strlen(ctx) + 32;
	list = malloc(n);
	snprintf(list, n, "{'items':%s}", (const char *)ctx);
	txt = dq(list);
	*out = cJSON_Parse(txt);
	free(txt);
	free(list);
	return *out ? 0 : -1;
}

#define DENY_ALL "[{'metadata':{'name':'deny-all'},'spec':{'podSelector':{}}}]"
/* Admits pods labelled key=value on port (to every pod of the namespace). */
#define ADMIT(key, value, port)                                                                    \
	"[{'metadata':{'name':'deny-all'},'spec':{'podSelector':{}}},{'metadata':{'name':'rdzv'}," \
	"'spec':{'podSelector':{},'ingress':[{'from':[{'podSelector':{'matchLabels':{'" key        \
	"':'" value "'}}}],'ports':[{'port':" port "}]}]}}]"
#define PTMPL(labels, anns)                                                                        \
	"{'metadata':{'labels':{'distenv.dev/inject':'true'," labels "},'annotations':{" anns      \
	"}},'spec':{'containers':[{'name':'t'}]}}"
#define LWS(leader)                                                                                \
	"{'metadata':{'name':'lws'},'spec':{'replicas':1,'leaderWorkerTemplate':{'size':3,"        \
	"'workerTemplate':" PTMPL("'role':'worker'", "") leader "}}}"
#define JS(coord)                                                                                  \
	"{'metadata':{'name':'js'},'spec':{" coord "'replicatedJobs':[{'name':'a','replicas':1,"   \
	"'template':{'spec':{'completions':1,'parallelism':1,'completionMode':'Indexed',"          \
	"'template':" PTMPL(                                                                       \
	    "'rj':'a'",                                                                            \
	    "") "}}},{'name':'b','replicas':1,'template':{'spec':{"                                \
	        "'completions':2,'parallelism':2,'completionMode':'Indexed','template':" PTMPL(    \
	            "'rj':'b'", "") "}}}]}}"
#define NP_STS(anns)                                                                               \
	"{'metadata':{'name':'ddp'},'spec':{'replicas':2,'serviceName':'ddp','"                    \
	"podManagementPolicy':"                                                                    \
	"'Parallel','template':" PTMPL("'app':'ddp'", anns) "}}"

static const struct {
	const char *name, *kind, *obj, *ns;
	const char *policies; /* the fake list's items; "fail": the list fails */
	const char *warn;     /* the whole warning; NULL: none */
} np_cases[] = {
    {"a default deny", "StatefulSet", NP_STS(""), "ml", DENY_ALL,
     "distenv: NetworkPolicy ml/deny-all drops port 29500 between pods of StatefulSet ddp: "
     "admit it"},
    {"no policies", "StatefulSet", NP_STS(""), "ml", "[]", NULL},
    {"the list failed: nothing said", "StatefulSet", NP_STS(""), "ml", "fail", NULL},
    {"admitted on the port", "StatefulSet", NP_STS(""), "ml", ADMIT("app", "ddp", "29500"), NULL},
    {"the port annotation is the rendezvous", "StatefulSet", NP_STS("'distenv.dev/port':'23456'"),
     "ml", ADMIT("app", "ddp", "29500"),
     "distenv: NetworkPolicy ml/deny-all drops port 23456 between pods of StatefulSet ddp: "
     "admit it"},
    {"long names cut to fit", "StatefulSet", NP_STS(""),
     "abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefgh",
     "[{'metadata':{'name':'abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-"
     "abcdefghij-abcdefghij'},'spec':{'podSelector':{}}}]",
     "distenv: NetworkPolicy abcdefghij-abcdefg/abcdefghij-abcdefg drops port 29500 between pods "
     "of StatefulSet ddp: admit it"},
    /* an odd number of bytes to cut between two names of one length: the first is cut first */
    {"long names of one length cut to fit, the first one byte more", "StatefulSet",
     "{'metadata':{'name':'ddpx'},'spec':{'replicas':2,'serviceName':'ddp','"
     "podManagementPolicy':'Parallel','template':" PTMPL("'app':'ddp'", "") "}}",
     "abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefgh",
     "[{'metadata':{'name':'abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-"
     "abcdefgh'},'spec':{'podSelector':{}}}]",
     "distenv: NetworkPolicy abcdefghij-abcdef/abcdefghij-abcdefg drops port 29500 between pods "
     "of StatefulSet ddpx: admit it"},
    {"LWS: the workers are dropped at the leader", "LeaderWorkerSet",
     LWS(",'leaderTemplate':" PTMPL("'role':'leader'", "")), "ml", ADMIT("role", "leader", "29500"),
     "distenv: NetworkPolicy ml/deny-all drops port 29500 between pods of LeaderWorkerSet "
     "lws: admit it"},
    {"LWS: workers admitted, leader from the worker template", "LeaderWorkerSet", LWS(""), "ml",
     ADMIT("role", "worker", "29500"), NULL},
    {"JobSet: rank 0 in a, b's pods not admitted", "JobSet", JS(""), "ml",
     ADMIT("rj", "a", "29500"),
     "distenv: NetworkPolicy ml/deny-all drops port 29500 between pods of JobSet js: admit "
     "it"},
    {"JobSet: the coordinator's rank 0 in b", "JobSet",
     JS("'coordinator':{'replicatedJob':'b','jobIndex':0,'podIndex':1},"), "ml",
     "[{'metadata':{'name':'b-only'},'spec':{'podSelector':{'matchLabels':{'rj':'b'}}}}]",
     "distenv: NetworkPolicy ml/b-only drops port 29500 between pods of JobSet js: admit "
     "it"},
    {"JobSet: rank 0 in a, b isolated (not rank 0)", "JobSet", JS(""), "ml",
     "[{'metadata':{'name':'b-only'},'spec':{'podSelector':{'matchLabels':{'rj':'b'}}}}]", NULL},
};

static void test_netpols(void)
{
	struct config cfg;
	size_t i;

	config_defaults(&cfg);
	for (i = 0; i < sizeof(np_cases) / sizeof(np_cases[0]); i++) {
		struct workload_lookup lk = {NULL, (void *)np_cases[i].policies, NULL, fake_netpols,
		                             NULL};
		char *txt = dq(np_cases[i].obj);
		cJSON *obj = cJSON_Parse(txt);
		struct validation v;
		int w, found = 0;

		CHECK(obj != NULL, "%s: JSON", np_cases[i].name);
		validate_workload(obj, np_cases[i].kind, np_cases[i].ns, &cfg, &lk, NULL, &v);
		CHECK(v.n_problems == 0, "%s: denied '%s'", np_cases[i].name, v.denial);
		for (w = 0; w < v.n_warnings; w++) {
			CHECK(strlen(v.warnings[w]) < 120, "%s: '%s' is too long", np_cases[i].name,
			      v.warnings[w]);
			if (strstr(v.warnings[w], "NetworkPolicy") != NULL) {
				found++;
				CHECK_STR(v.warnings[w], np_cases[i].warn ? np_cases[i].warn : "",
				          np_cases[i].name);
			}
		}
		CHECK(found == (np_cases[i].warn != NULL), "%s: %d NetworkPolicy warnings",
		      np_cases[i].name, found);
		cJSON_Delete(obj);
		free(txt);
	}
}

/* Each warning once; past the list counted; a long template name shortened, the message kept. */
static void test_warning_list(void)
{
	struct validation *v = calloc(1, sizeof(*v));
	struct view *w = calloc(1, sizeof(*w));
	int i;

	if (v == NULL || w == NULL) {
		CHECK(0, "out of memory");
		free(v);
		free(w);
		return;
	}
	view_warn(v, "Service %s not found", "ddp");
	view_warn(v, "Service %s not found", "ddp");
	view_warn(v, "Service %s not found", "other");
	CHECK(v->n_warnings == 2 && v->n_more == 0 &&
	          strcmp(v->warnings[0], "distenv: Service ddp not found") == 0,
	      "an identical warning twice: %d kept, first '%s'", v->n_warnings, v->warnings[0]);
	for (i = 0; i < VALIDATE_MAX_WARNINGS + 5; i++)
		view_warn(v, "warning %d", i);
	CHECK(v->n_warnings == VALIDATE_MAX_WARNINGS && v->n_more == 7,
	      "past the list: %d kept, %d more (want %d, 7)", v->n_warnings, v->n_more,
	      VALIDATE_MAX_WARNINGS);
	memset(v, 0, sizeof(*v));
	w->n_tmpl = 2;
	snprintf(w->tmpl_what[0], sizeof(w->tmpl_what[0]), "replicated Job %s",
	         "a-replicated-job-name-of-sixty-three-characters-abcdefghijklmnop");
	view_warn_template(v, w, 0, "%s",
	                   "container trainer sets LOCAL_RANK: launchers start 1 process, not 8; "
	                   "remove it");
	view_warn_template(v, w, 1, "%s", "unknown annotation distenv.dev/x (ignored)");
	CHECK(v->n_warnings == 2 && strlen(v->warnings[0]) < 120 &&
	          strncmp(v->warnings[0], "distenv: replicated Job a-replicated", 36) == 0 &&
	          strstr(v->warnings[0], "...: container trainer sets LOCAL_RANK") != NULL &&
	          strstr(v->warnings[0], "not 8; remove it") != NULL,
	      "a long template name: '%s'", v->warnings[0]);
	CHECK(strcmp(v->warnings[1], "distenv: unknown annotation distenv.dev/x (ignored)") == 0,
	      "the only template is not named: '%s'", v->warnings[1]);
	free(v);
	free(w);
}

/*
 * Every per-template rule with its problem on the first, the middle and the
 * last replicated Job of a JobSet, and on a LeaderWorkerSet's leader and
 * worker templates, the others clean (testtemplates.h): the whole answer,
 * naming that template and no other.
 */
static void test_per_template(void)
{
	struct config cfg;
	size_t r;
	int p, q, w;

	config_defaults(&cfg);
	for (r = 0; r < sizeof(tt_rules) / sizeof(tt_rules[0]); r++)
		for (p = 0; p < TT_N_PLACES; p++) {
			const struct tt_rule *rule = &tt_rules[r];
			char *txt, want[1024];
			struct validation v;
			cJSON *obj;
			int found = 0;

			if (!(rule->places & tt_places[p].bit))
				continue;
			txt = tt_json(rule, p);
			obj = cJSON_Parse(txt);
			CHECK(obj != NULL, "%s on the %s: JSON", rule->name, tt_places[p].what);
			validate_workload(obj, tt_places[p].kind, "ml", &cfg, NULL, NULL, &v);
			if (rule->want == NULL) {
				CHECK(v.n_problems == 0 && v.n_warnings == 0,
				      "%s on the %s: '%s' (%d warnings: '%s')", rule->name,
				      tt_places[p].what, v.denial, v.n_warnings,
				      v.n_warnings ? v.warnings[0] : "");
				cJSON_Delete(obj);
				free(txt);
				continue;
			}
			tt_want(want, sizeof(want), rule->want, p,
			        rule->deny ? 0 : VALIDATE_WARNING_LEN);
			if (rule->deny)
				CHECK(v.n_problems == 1 && strcmp(v.denial, want) == 0,
				      "%s on the %s: denial '%s' (%d problems), want '%s'",
				      rule->name, tt_places[p].what, v.denial, v.n_problems, want);
			else
				CHECK(v.n_problems == 0, "%s on the %s: denied '%s'", rule->name,
				      tt_places[p].what, v.denial);
			for (w = 0; w < v.n_warnings; w++) {
				found += strcmp(v.warnings[w], want) == 0;
				for (q = 0; q < TT_N_PLACES; q++)
					CHECK(q == p ||
					          strstr(v.warnings[w], tt_places[q].what) == NULL,
					      "%s on the %s: warning '%s' names the %s", rule->name,
					      tt_places[p].what, v.warnings[w], tt_places[q].what);
			}
			for (q = 0; q < TT_N_PLACES; q++)
				CHECK(q == p || strstr(v.denial, tt_places[q].what) == NULL,
				      "%s on the %s: denial '%s' names the %s", rule->name,
				      tt_places[p].what, v.denial, tt_places[q].what);
			if (!rule->deny)
				CHECK(found == 1, "%s on the %s: no warning '%s' (%d: '%s')",
				      rule->name, tt_places[p].what, want, v.n_warnings,
				      v.n_warnings ? v.warnings[0] : "");
			cJSON_Delete(obj);
			free(txt);
		}
}

/*
 * Appends to the JobSet JSON in obj (of size bytes) a replicated Job name of one
 * Job of one pod, Indexed and opted in, its template annotated with anns (JSON
 * members; NULL: none), after a comma unless it is the list's first.
 */
static void append_rjob(char *obj, size_t size, const char *name, const char *anns)
{
	size_t used = strlen(obj);

	snprintf(obj + used, size - used,
	         "%s{\"name\":\"%s\",\"replicas\":1,\"template\":{\"spec\":{\"completions\":1,"
	         "\"parallelism\":1,\"completionMode\":\"Indexed\",\"template\":{\"metadata\":{"
	         "\"labels\":{\"distenv.dev/inject\":\"true\"}%s%s%s},\"spec\":{\"containers\":[{"
	         "\"name\":\"t\"}]}}}}}",
	         used > 0 && obj[used - 1] == '[' ? "" : ",", name,
	         anns ? ",\"annotations\":{" : "", anns ? anns : "", anns ? "}" : "");
}

/*
 * A JobSet of count opted-in replicated Jobs, with distenv.dev/port on the
 * JobSet itself (each template is asked for it) and, when kueue, Kueue's
 * elastic-job (each template is asked for distenv.dev/elastic): up to 16
 * allowed, above refused with the look-up's words (kind_jobset.c's parse),
 * each pod's; the warnings as they are either way.
 */
static void check_many_rjobs(const struct config *cfg, int count, int kueue)
{
	char obj[16384], want[256];
	struct validation v;
	cJSON *o;
	int k;

	snprintf(obj, sizeof(obj),
	         "{\"metadata\":{\"name\":\"js\",\"annotations\":{\"distenv.dev/port\":"
	         "\"1234\"%s}},\"spec\":{\"replicatedJobs\":[",
	         kueue ? ",\"kueue.x-k8s.io/elastic-job\":\"true\"" : "");
	for (k = 0; k < count; k++) {
		char name[16];

		snprintf(name, sizeof(name), "r%d", k);
		append_rjob(obj, sizeof(obj), name, NULL);
	}
	snprintf(obj + strlen(obj), sizeof(obj) - strlen(obj), "]}}");
	o = cJSON_Parse(obj);
	validate_workload(o, "JobSet", "ml", cfg, NULL, NULL, &v);
	snprintf(want, sizeof(want),
	         "distenv: JobSet ml/js has %d replicated Jobs, more than distenv's limit of 16",
	         count);
	if (count <= 16)
		CHECK(v.opted_in && v.n_problems == 0, "%d replicated Jobs: '%s'", count, v.denial);
	else
		CHECK(v.opted_in && v.n_problems == 1 && strcmp(v.denial, want) == 0 &&
		          v.reason == DENY_LIMIT,
		      "%d replicated Jobs: '%s' (reason %d)", count, v.denial, (int)v.reason);
	CHECK(v.n_warnings == 1 + kueue &&
	          strcmp(v.warnings[0], "distenv: distenv.dev/port is on the JobSet, not its pod "
	                                "template: ignored; move it there") == 0 &&
	          (!kueue || strcmp(v.warnings[1], "distenv: kueue.x-k8s.io/elastic-job resizes "
	                                           "JobSet js while it runs: set "
	                                           "distenv.dev/elastic MIN:MAX") == 0),
	      "%d replicated Jobs%s: %d warnings, '%s'", count, kueue ? ", Kueue elastic" : "",
	      v.n_warnings, v.n_warnings ? v.warnings[v.n_warnings - 1] : "");
	cJSON_Delete(o);
}

/*
 * A JobSet of 16, 17 and 18 opted-in replicated Jobs: every template is read
 * (the view keeps 17, one past the limit, and no more), 16 are allowed, 17
 * and 18 refused with the words; with Kueue's elastic-job too, whose check
 * reads every template the view kept.
 */
static void test_many_rjobs(void)
{
	static const int counts[] = {16, 17, 18};
	struct config cfg;
	size_t i;
	int kueue;

	config_defaults(&cfg);
	for (kueue = 0; kueue < 2; kueue++)
		for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
			check_many_rjobs(&cfg, counts[i], kueue);
}

/*
 * The denial holds 2047 characters: a problem that does not fit is cut, and
 * its "; " is written only with room for it and one more character. JobSet
 * j.s of 14 replicated Jobs, each with distenv.dev/port "0" (the first named
 * with 35, 36 or 37 characters, the rest with 55), then its hostnames' dot:
 * the port problems take 2045, 2046 or 2047 characters.
 */
static void test_denial_full(void)
{
	static const struct {
		int first;
		const char *tail; /* the denial's last characters */
	} rows[] = {
	    {35, "between 1 and 65535; "},
	    {36, "between 1 and 65535t"},
	    {37, "between 1 and 65535"},
	};
	struct config cfg;
	size_t i;

	config_defaults(&cfg);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		static char obj[32768];
		struct validation v;
		size_t len;
		cJSON *o;
		int k;

		snprintf(obj, sizeof(obj),
		         "{\"metadata\":{\"name\":\"j.s\"},\"spec\":{\"replicatedJobs\":[");
		for (k = 0; k < 14; k++) {
			char name[64];

			memset(name, 'a' + k, sizeof(name));
			name[k == 0 ? rows[i].first : 55] = '\0';
			append_rjob(obj, sizeof(obj), name, "\"distenv.dev/port\":\"0\"");
		}
		snprintf(obj + strlen(obj), sizeof(obj) - strlen(obj), "]}}");
		o = cJSON_Parse(obj);
		validate_workload(o, "JobSet", "ml", &cfg, NULL, NULL, &v);
		len = strlen(v.denial);
		CHECK(v.n_problems == 15 && len == 2047 && len >= strlen(rows[i].tail) &&
		          strcmp(v.denial + len - strlen(rows[i].tail), rows[i].tail) == 0,
		      "first name of %d: %d problems, %zu characters, ending '%s' (want '%s')",
		      rows[i].first, v.n_problems, len, len > 24 ? v.denial + len - 24 : v.denial,
		      rows[i].tail);
		cJSON_Delete(o);
	}
}

/*
 * The denial's reason is its first problem's (the log line and the metric's label): a
 * later rule's problem never replaces it.
 */
static void test_first_reason(void)
{
	static const struct {
		const char *name, *obj;
		enum deny_reason want;
	} rc[] = {
	    {"a container's own MASTER_PORT alone",
	     STS_ENV("'distenv.dev/containers':'t'", "{'name':'MASTER_PORT','value':'http'}"),
	     DENY_ENV},
	    {"a bad annotation, then the own MASTER_PORT",
	     STS_ENV("'distenv.dev/port':'0'", "{'name':'MASTER_PORT','value':'http'}"),
	     DENY_ANNOTATION},
	    {"a container the template lacks alone", STS_ENV("'distenv.dev/containers':'x'", ""),
	     DENY_ANNOTATION},
	    {"no serviceName, then a container the template lacks",
	     "{'metadata':{'name':'ddp'},'spec':{'replicas':2,'podManagementPolicy':'Parallel',"
	     "'template':{'metadata':{'labels':{'distenv.dev/inject':'true'},'annotations':{"
	     "'distenv.dev/containers':'x'}},'spec':{'containers':[{'name':'t'}]}}}}",
	     DENY_WORKLOAD},
	    {"no serviceName, then a container's own MASTER_PORT",
	     "{'metadata':{'name':'ddp'},'spec':{'replicas':2,'podManagementPolicy':'Parallel',"
	     "'template':{'metadata':{'labels':{'distenv.dev/inject':'true'}},'spec':{'containers':"
	     "[{'name':'t','env':[{'name':'MASTER_PORT','value':'http'}]}]}}}}",
	     DENY_WORKLOAD},
	};
	struct config cfg;
	size_t i;

	config_defaults(&cfg);
	for (i = 0; i < sizeof(rc) / sizeof(rc[0]); i++) {
		char *txt = dq(rc[i].obj);
		cJSON *obj = cJSON_Parse(txt);
		struct validation v;

		CHECK(obj != NULL, "%s: JSON", rc[i].name);
		validate_workload(obj, "StatefulSet", "ml", &cfg, NULL, NULL, &v);
		CHECK(v.n_problems > 0 && v.reason == rc[i].want, "%s: reason %d, want %d ('%s')",
		      rc[i].name, (int)v.reason, (int)rc[i].want, v.denial);
		cJSON_Delete(obj);
		free(txt);
	}
}

/*
 * limits.maxContainers at apply: a template whose pods would have more
 * containers (and init containers) than the limit is refused, as each pod would
 * be; at the limit it is not. On a StatefulSet (one template, not named) and on
 * the last replicated Job of a JobSet (named).
 */
static void test_container_limit(void)
{
	static const struct {
		const char *kind;
		int n_ctrs, n_inits;
		int a_indexed;    /* a JobSet's first replicated Job Indexed (0: a problem first) */
		const char *deny; /* the whole denial; NULL: allowed */
		enum deny_reason reason; /* the first problem's */
	} rows[] = {
	    {"StatefulSet", 256, 0, 1, NULL, 0},
	    {"StatefulSet", 257, 0, 1,
	     "distenv: the pod has 257 containers, more than the limit of 256", DENY_LIMIT},
	    {"StatefulSet", 255, 2, 1,
	     "distenv: the pod has 257 containers, more than the limit of 256", DENY_LIMIT},
	    {"JobSet", 256, 0, 1, NULL, 0},
	    {"JobSet", 257, 0, 1,
	     "distenv: replicated Job c: the pod has 257 containers, more than the limit of 256",
	     DENY_LIMIT},
	    {"JobSet", 257, 0, 0,
	     "distenv: replicated Job a is not an Indexed Job, so its pods have no rank: set "
	     "spec.completionMode: Indexed; replicated Job c: the pod has 257 containers, more "
	     "than "
	     "the limit of 256",
	     DENY_WORKLOAD},
	};
	struct config cfg;
	size_t r;

	config_defaults(&cfg);
	for (r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		cJSON *ctrs = cJSON_CreateArray(), *inits = cJSON_CreateArray(), *obj, *tmpl;
		struct validation v;
		char name[16];
		int i;

		for (i = 0; i < rows[r].n_ctrs + rows[r].n_inits; i++) {
			cJSON *c = cJSON_CreateObject();
			snprintf(name, sizeof(name), "c%d", i);
			cJSON_AddStringToObject(c, "name", name);
			cJSON_AddItemToArray(i < rows[r].n_ctrs ? ctrs : inits, c);
		}
		if (strcmp(rows[r].kind, "StatefulSet") == 0) {
			char *txt = dq(STS("ddp", "'podManagementPolicy':'Parallel',", ""));
			obj = cJSON_Parse(txt);
			free(txt);
			tmpl = cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "spec"), "template");
		} else {
			char *txt = dq(rows[r].a_indexed ? JS3("Indexed") : JS3("NonIndexed"));
			obj = cJSON_Parse(txt);
			free(txt);
			tmpl = rjob_template(obj, 2);
		}
		cJSON_ReplaceItemInObject(cJSON_GetObjectItem(tmpl, "spec"), "containers", ctrs);
		cJSON_AddItemToObject(cJSON_GetObjectItem(tmpl, "spec"), "initContainers", inits);
		validate_workload(obj, rows[r].kind, "ml", &cfg, NULL, NULL, &v);
		if (rows[r].deny == NULL)
			CHECK(v.n_problems == 0, "%s of %d + %d containers: denied '%s'",
			      rows[r].kind, rows[r].n_ctrs, rows[r].n_inits, v.denial);
		else
			CHECK(v.n_problems == 2 - rows[r].a_indexed &&
			          strcmp(v.denial, rows[r].deny) == 0 && v.reason == rows[r].reason,
			      "%s of %d + %d containers: '%s', want '%s'", rows[r].kind,
			      rows[r].n_ctrs, rows[r].n_inits, v.denial, rows[r].deny);
		cJSON_Delete(obj);
	}
}

/*
 * limits.maxWorldSize at apply: a workload whose world is above the limit has
 * every pod refused (topology.c), so it is refused with the pods' words and
 * reason; at the limit it is allowed. A StatefulSet's replicas, an Indexed
 * Job's completions, a JobSet's pods of every replicated Job.
 */
static void test_world_limit(void)
{
	static const struct {
		const char *kind, *obj;
		const char *deny; /* the whole denial; NULL: allowed */
		enum deny_reason reason;
	} rows[] = {
	    {"StatefulSet",
	     "{'metadata':{'name':'big'},'spec':{'replicas':65536,'serviceName':'ddp',"
	     "'podManagementPolicy':'Parallel'," TMPL("'distenv.dev/frameworks':'pytorch'",
	                                              "") "}}",
	     NULL, DENY_NONE},
	    /* at the limit, a container's own values are still judged (check_own_values) */
	    {"StatefulSet",
	     "{'metadata':{'name':'big'},'spec':{'replicas':65536,'serviceName':'ddp',"
	     "'podManagementPolicy':'Parallel','template':{'metadata':{'labels':{'distenv.dev/"
	     "inject':'true'},'annotations':{'distenv.dev/frameworks':'pytorch'}},'spec':{"
	     "'containers':[{'name':'t','env':[{'name':'RANK','value':'0'}]}]}}}}",
	     "distenv: container t sets RANK=0 for each of its 65536 ranks, so they would all "
	     "claim one rank: remove RANK from its env (distenv gives each pod its own)",
	     DENY_ENV},
	    {"StatefulSet",
	     "{'metadata':{'name':'big'},'spec':{'replicas':65537,'serviceName':'ddp',"
	     "'podManagementPolicy':'Parallel'," TMPL("'distenv.dev/frameworks':'pytorch'",
	                                              "") "}}",
	     "distenv: StatefulSet ml/big has a world size of 65537, above the limit of 65536",
	     DENY_LIMIT},
	    {"Job",
	     "{'metadata':{'name':'big'},'spec':{'completions':65536,'parallelism':65536,"
	     "'completionMode':'Indexed'," TMPL("'distenv.dev/frameworks':'pytorch'",
	                                        "'subdomain':'ddp',") "}}",
	     NULL, DENY_NONE},
	    {"Job",
	     "{'metadata':{'name':'big'},'spec':{'completions':65537,'parallelism':65537,"
	     "'completionMode':'Indexed'," TMPL("'distenv.dev/frameworks':'pytorch'",
	                                        "'subdomain':'ddp',") "}}",
	     "distenv: Job ml/big has a world size of 65537, above the limit of 65536", DENY_LIMIT},
	    {"JobSet",
	     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[" RJOB3(
	         "a", "32768", "32768", "Indexed") "," RJOB3("b", "32768", "32768",
	                                                     "Indexed") "]}}",
	     NULL, DENY_NONE},
	    {"JobSet",
	     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[" RJOB3(
	         "a", "32768", "32768", "Indexed") "," RJOB3("b", "32769", "32769",
	                                                     "Indexed") "]}}",
	     "distenv: JobSet ml/js has a world size of 65537, above the limit of 65536",
	     DENY_LIMIT},
	};
	struct config cfg;
	size_t r;

	config_defaults(&cfg);
	for (r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		char *txt = dq(rows[r].obj);
		cJSON *obj = cJSON_Parse(txt);
		struct validation v;

		CHECK(obj != NULL, "%s %zu: JSON", rows[r].kind, r);
		validate_workload(obj, rows[r].kind, "ml", &cfg, NULL, NULL, &v);
		if (rows[r].deny == NULL)
			CHECK(v.n_problems == 0, "%s %zu: denied '%s'", rows[r].kind, r, v.denial);
		else
			CHECK(v.n_problems == 1 && strcmp(v.denial, rows[r].deny) == 0 &&
			          v.reason == rows[r].reason,
			      "%s %zu: '%s' (reason %d), want '%s'", rows[r].kind, r, v.denial,
			      (int)v.reason, rows[r].deny);
		cJSON_Delete(obj);
		free(txt);
	}
}

/*
 * Validates obj (a workload of kind, quoted for dq) in namespace ml with cfg:
 * allowed when deny is NULL, else refused with exactly deny for reason.
 */
static void check_validated(const char *what, const char *kind, const char *obj,
                            const struct config *cfg, const char *deny, enum deny_reason reason)
{
	char *txt = dq(obj);
	cJSON *o = cJSON_Parse(txt);
	struct validation v;

	CHECK(o != NULL, "%s: JSON", what);
	validate_workload(o, kind, "ml", cfg, NULL, NULL, &v);
	if (deny == NULL)
		CHECK(v.n_problems == 0, "%s: denied '%s'", what, v.denial);
	else
		CHECK(strcmp(v.denial, deny) == 0 && v.reason == reason,
		      "%s: '%s' (reason %d), want '%s'", what, v.denial, (int)v.reason, deny);
	cJSON_Delete(o);
	free(txt);
}

/*
 * Look-ups off: a StatefulSet's or an Indexed Job's pods read the world from
 * distenv.dev/world-size alone, so without it every pod is refused ("is not
 * known ... turned off", topology.c) and the workload is refused at apply,
 * saying the value to set. With the annotation, or with look-ups on, it is
 * allowed; so is a workload of no pods, and a StatefulSet a LeaderWorkerSet
 * made (its pods read the LeaderWorkerSet's size).
 */
static void test_lookups_off(void)
{
	static const struct {
		const char *name, *kind, *obj;
		int lookups;
		const char *deny; /* the whole denial; NULL: allowed */
		enum deny_reason reason;
	} rows[] = {
	    {"a StatefulSet without world-size", "StatefulSet",
	     STS("ddp", "'podManagementPolicy':'Parallel',", ""), 0,
	     "distenv: look-ups of the workload are turned off, so the pods of StatefulSet ddp "
	     "cannot read its 2 replicas and each would be refused: set the annotation "
	     "distenv.dev/world-size to 2 on its pod template",
	     DENY_WORLD},
	    {"a StatefulSet with world-size", "StatefulSet",
	     STS("ddp", "'podManagementPolicy':'Parallel',", "'distenv.dev/world-size':'2'"), 0,
	     NULL, 0},
	    {"a StatefulSet without world-size, look-ups on", "StatefulSet",
	     STS("ddp", "'podManagementPolicy':'Parallel',", ""), 1, NULL, 0},
	    {"an Indexed Job without world-size", "Job",
	     "{'metadata':{'name':'train'},'spec':{'completions':4,'parallelism':4,"
	     "'completionMode':'Indexed'," TMPL("", "'subdomain':'ddp',") "}}",
	     0,
	     "distenv: look-ups of the workload are turned off, so the pods of Job train cannot "
	     "read its 4 completions and each would be refused: set the annotation "
	     "distenv.dev/world-size to 4 on its pod template",
	     DENY_WORLD},
	    {"an Indexed Job with world-size", "Job",
	     "{'metadata':{'name':'train'},'spec':{'completions':4,'parallelism':4,"
	     "'completionMode':'Indexed'," TMPL("'distenv.dev/world-size':'4'",
	                                        "'subdomain':'ddp',") "}}",
	     0, NULL, 0},
	    {"an Indexed Job without world-size, look-ups on", "Job",
	     "{'metadata':{'name':'train'},'spec':{'completions':4,'parallelism':4,"
	     "'completionMode':'Indexed'," TMPL("", "'subdomain':'ddp',") "}}",
	     1, NULL, 0},
	    {"a problem first: the reason stays its own", "StatefulSet",
	     "{'metadata':{'name':'ddp'},'spec':{'replicas':2,'podManagementPolicy':'Parallel'"
	     "," TMPL("", "") "}}",
	     0,
	     "distenv: StatefulSet ddp has no spec.serviceName, so its pods have no DNS names: set "
	     "it to a headless Service that selects them; look-ups of the workload are turned off, "
	     "so the pods of StatefulSet ddp cannot read its 2 replicas and each would be refused: "
	     "set the annotation distenv.dev/world-size to 2 on its pod template",
	     DENY_WORKLOAD},
	    {"a bad world-size: the annotation's own problem alone", "StatefulSet",
	     STS("ddp", "'podManagementPolicy':'Parallel',", "'distenv.dev/world-size':'two'"), 0,
	     "distenv: annotation distenv.dev/world-size: \"two\" is not a world size between 1 "
	     "and 65536",
	     DENY_ANNOTATION},
	    {"a StatefulSet scaled to 0: no pod to refuse", "StatefulSet",
	     "{'metadata':{'name':'ddp'},'spec':{'replicas':0,'serviceName':'ddp',"
	     "'podManagementPolicy':'Parallel'," TMPL("", "") "}}",
	     0, NULL, 0},
	    {"a LeaderWorkerSet's worker StatefulSet: its pods read the group size", "StatefulSet",
	     "{'metadata':{'name':'lws-0'},'spec':{'replicas':3,'serviceName':'lws',"
	     "'podManagementPolicy':'Parallel','ordinals':{'start':1},'template':{'metadata':{"
	     "'labels':{'distenv.dev/inject':'true','leaderworkerset.sigs.k8s.io/name':'lws'}},"
	     "'spec':{'containers':[{'name':'t'}]}}}}",
	     0, NULL, 0},
	    /* a JobSet's pods read one replicated Job's sizes from their labels
	       (jobset_from_labels) */
	    {"a JobSet of one replicated Job without world-size", "JobSet",
	     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[" RJOB_OF("w", "2", "2",
	                                                                    "") "]}}",
	     0,
	     "distenv: look-ups of the workload are turned off, so the pods of JobSet js cannot "
	     "read its 4 pods and each would be refused: set the annotation distenv.dev/world-size "
	     "to 4 on its pod template",
	     DENY_WORLD},
	    {"a JobSet of one replicated Job with world-size", "JobSet",
	     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[" RJOB_OF(
	         "w", "2", "2", "'distenv.dev/world-size':'4'") "]}}",
	     0, NULL, 0},
	    {"a JobSet of one replicated Job without world-size, look-ups on", "JobSet",
	     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[" RJOB_OF("w", "2", "2",
	                                                                    "") "]}}",
	     1, NULL, 0},
	    {"a JobSet of two replicated Jobs, one of 0 replicas: the other's pods read theirs",
	     "JobSet",
	     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[" RJOB_OF(
	         "a", "0", "1", "") "," RJOB_OF("b", "1", "2",
	                                        "'distenv.dev/world-size':'2'") "]}}",
	     0, NULL, 0},
	    {"a JobSet whose replicated Job of 0 replicas alone is annotated", "JobSet",
	     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[" RJOB_OF(
	         "a", "0", "1", "'distenv.dev/world-size':'2'") "," RJOB_OF("b", "1", "2",
	                                                                    "") "]}}",
	     0,
	     "distenv: look-ups of the workload are turned off, so the pods of JobSet js cannot "
	     "read its 2 pods and each would be refused: set the annotation distenv.dev/world-size "
	     "to 2 on its pod template",
	     DENY_WORLD},
	    {"a JobSet whose replicated Job with pods is not opted in: no pod to refuse", "JobSet",
	     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[" RJOB_OF(
	         "a", "0", "1",
	         "'distenv.dev/world-size':'2'") ",{'name':'b','replicas':1,"
	                                         "'template':{'spec':{'completions':"
	                                         "2,'parallelism':2,'completionMode':"
	                                         "'Indexed','template':{'spec':{"
	                                         "'containers':[{'name':'t'}]}}}}}]}}",
	     0, NULL, 0},
	    {"a JobSet of one replicated Job of completions 0: its own problem alone", "JobSet",
	     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[" RJOB_OF("w", "2", "0",
	                                                                    "") "]}}",
	     0,
	     "distenv: replicated Job w has spec.completions 0, so it has no ranks: set "
	     "spec.completions to the number of ranks",
	     DENY_WORKLOAD},
	    /* several replicated Jobs with Jobs: a pod's labels count every Job
	       (global-replicas) but size only its own replicated Job */
	    {"a JobSet of two replicated Jobs with Jobs, annotated", "JobSet",
	     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[" RJOB_OF(
	         "a", "1", "1",
	         "'distenv.dev/world-size':'5'") "," RJOB_OF("b", "2", "2",
	                                                     "'distenv.dev/world-size':'5'") "]}}",
	     0,
	     "distenv: look-ups of the workload are turned off, so the pods of JobSet js cannot "
	     "read the sizes of its 2 replicated Jobs, which only the JobSet object tells, and "
	     "each would be refused: turn look-ups on (the webhook needs get on jobsets)",
	     DENY_WORLD},
	    {"a JobSet of three replicated Jobs, the middle of 0 replicas: two counted", "JobSet",
	     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[" RJOB_OF(
	         "a", "1", "1", "") "," RJOB_OF("b", "0", "2", "") "," RJOB_OF("c", "2", "2",
	                                                                       "") "]}}",
	     0,
	     "distenv: look-ups of the workload are turned off, so the pods of JobSet js cannot "
	     "read the sizes of its 2 replicated Jobs, which only the JobSet object tells, and "
	     "each would be refused: turn look-ups on (the webhook needs get on jobsets)",
	     DENY_WORLD},
	    {"a JobSet of two replicated Jobs with Jobs, look-ups on", "JobSet",
	     "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[" RJOB_OF(
	         "a", "1", "1", "") "," RJOB_OF("b", "2", "2", "") "]}}",
	     1, NULL, 0},
	    {"a JobSet's Job: its pods read the JobSet's world", "Job",
	     "{'metadata':{'name':'js-w-0'},'spec':{'completions':2,'parallelism':2,"
	     "'completionMode':'Indexed','template':{'metadata':{'labels':{'distenv.dev/inject':"
	     "'true','jobset.sigs.k8s.io/jobset-name':'js'}},'spec':{'subdomain':'js',"
	     "'containers':[{'name':'t'}]}}}}",
	     0, NULL, 0},
	};
	struct config cfg;
	size_t r;

	config_defaults(&cfg);
	for (r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		cfg.lookups = rows[r].lookups;
		check_validated(rows[r].name, rows[r].kind, rows[r].obj, &cfg, rows[r].deny,
		                rows[r].reason);
	}
}

/*
 * A container's own LOCAL_RANK in a template (topology_template_launcher_warnings,
 * what /validate and render warn): warned from 2 processes a pod, not at 1; only
 * in a target container: a container the containers annotation leaves out is not
 * read.
 */
static void test_local_rank_edges(void)
{
	static const struct {
		const char *what, *anns, *ctrs, *want; /* want: the one warning, NULL none */
	} lr[] = {
	    {"1 process", "{'distenv.dev/nproc-per-node':'1'}",
	     "[{'name':'trainer','image':'x','env':[{'name':'LOCAL_RANK','value':'0'}]}]", NULL},
	    {"2 processes", "{'distenv.dev/nproc-per-node':'2'}",
	     "[{'name':'trainer','image':'x','env':[{'name':'LOCAL_RANK','value':'0'}]}]",
	     "distenv: container trainer sets LOCAL_RANK: launchers start 1 process, not 2; remove "
	     "it"},
	    {"a container the annotation leaves out",
	     "{'distenv.dev/nproc-per-node':'2','distenv.dev/containers':'trainer'}",
	     "[{'name':'sidecar','image':'y','env':[{'name':'LOCAL_RANK','value':'0'}]},"
	     "{'name':'trainer','image':'x'}]",
	     NULL},
	};
	struct config cfg;
	size_t i;

	config_defaults(&cfg);
	for (i = 0; i < sizeof(lr) / sizeof(lr[0]); i++) {
		char buf[1024], out[3][VALIDATE_WARNING_LEN], *a, *s;
		cJSON *anns, *spec;
		int n;

		snprintf(buf, sizeof(buf), "{'containers':%s}", lr[i].ctrs);
		s = tt_dq(buf);
		a = tt_dq(lr[i].anns);
		spec = cJSON_Parse(s);
		anns = cJSON_Parse(a);
		n = topology_template_launcher_warnings(spec, anns, &cfg, out[0], sizeof(out[0]),
		                                        3);
		CHECK(n == (lr[i].want != NULL) &&
		          (lr[i].want == NULL || strcmp(out[0], lr[i].want) == 0),
		      "%s: %d warnings, first '%s'", lr[i].what, n, n > 0 ? out[0] : "");
		cJSON_Delete(spec);
		cJSON_Delete(anns);
		free(s);
		free(a);
	}
}

/* A LeaderWorkerSet each, denied with deny (DENY_WORKLOAD) or, NULL, allowed. */
struct lws_row {
	const char *what, *obj, *deny;
};

static void check_lws_rows(const struct lws_row *rows, size_t n)
{
	struct config cfg;
	size_t r;

	config_defaults(&cfg);
	for (r = 0; r < n; r++)
		check_validated(rows[r].what, "LeaderWorkerSet", rows[r].obj, &cfg, rows[r].deny,
		                DENY_WORKLOAD);
}

/*
 * A LeaderWorkerSet cut into subgroups, its pods TPU hosts: the controllers
 * write leaderworkerset.sigs.k8s.io/subgroup-size on every pod, which tpu
 * refuses pod by pod; /validate refuses it at apply with the same words.
 */
static void test_lws_subgroups(void)
{
#define SUB_LWS(policy, fws)                                                                       \
	"{'metadata':{'name':'lws'},'spec':{'replicas':2,'leaderWorkerTemplate':{" policy          \
	"'size':4,'workerTemplate':{'metadata':{'labels':{'distenv.dev/inject':'true'},"           \
	"'annotations':{'distenv.dev/frameworks':'" fws "'}},'spec':{'containers':[{'name':'t',"   \
	"'resources':{'limits':{'google.com/tpu':'4'}}}]}}}}}"
	static const struct lws_row rows[] = {
	    {"tpu in subgroups", SUB_LWS("'subGroupPolicy':{'subGroupSize':2},", "tpu"),
	     "distenv: tpu: LeaderWorkerSet ml/lws cuts its groups into subgroups "
	     "(leaderworkerset.sigs.k8s.io/subgroup-size), which are slices of their own; "
	     "distenv's "
	     "tpu serves one slice a group: remove subGroupPolicy or tpu from "
	     "distenv.dev/frameworks"},
	    {"tpu, no subGroupPolicy", SUB_LWS("", "tpu"), NULL},
	    {"subgroups without tpu", SUB_LWS("'subGroupPolicy':{'subGroupSize':2},", "pytorch"),
	     NULL},
	    {"a subGroupPolicy without a size", SUB_LWS("'subGroupPolicy':{},", "tpu"), NULL},
	};
#undef SUB_LWS
	check_lws_rows(rows, sizeof(rows) / sizeof(rows[0]));
}

/*
 * A LeaderWorkerSet with tpu whose leader requests no TPUs: its workers lack
 * leader-requests-tpus, and each is refused (refuse_tpu), so the apply is too.
 * The leader's TPUs as LWS reads them (PodRequestsTPUs: a limit, else a
 * request, not zero); a group of one has no worker; without tpu, nothing.
 */
static void test_lws_tpu_leader(void)
{
#define TPU_LWS(size, leader, fws)                                                                 \
	"{'metadata':{'name':'lws'},'spec':{'replicas':2,'leaderWorkerTemplate':{'size':" size     \
	",'leaderTemplate':{'metadata':{'labels':{'distenv.dev/inject':'true'},'annotations':{"    \
	"'distenv.dev/frameworks':'" fws "'}},'spec':{'containers':[{'name':'l'" leader "}]}},"    \
	"'workerTemplate':{'metadata':{'labels':{'distenv.dev/inject':'true'},'annotations':{"     \
	"'distenv.dev/frameworks':'" fws "'}},'spec':{'containers':[{'name':'t',"                  \
	"'resources':{'limits':{'google.com/tpu':'4'}}}]}}}}}"
#define NO_TPU_LEADER                                                                              \
	"distenv: tpu: the leader of LeaderWorkerSet ml/lws requests no google.com/tpu (no "       \
	"leaderworkerset.sigs.k8s.io/leader-requests-tpus annotation), so it is no TPU host, yet " \
	"distenv's world counts it as rank 0: give the leader TPUs, or list the frameworks in "    \
	"distenv.dev/frameworks without tpu"
	static const struct lws_row rows[] = {
	    {"a leader without TPUs", TPU_LWS("4", "", "tpu"), NO_TPU_LEADER},
	    {"a leader limiting 0 TPUs",
	     TPU_LWS("4", ",'resources':{'limits':{'google.com/tpu':'0'}}", "tpu"), NO_TPU_LEADER},
	    {"a leader requesting TPUs",
	     TPU_LWS("4", ",'resources':{'requests':{'google.com/tpu':'4'}}", "tpu"), NULL},
	    {"a leader limiting TPUs",
	     TPU_LWS("2", ",'resources':{'limits':{'google.com/tpu':'4'}}", "tpu"), NULL},
	    {"a group of one: no worker", TPU_LWS("1", "", "tpu"), NULL},
	    {"a group of two", TPU_LWS("2", "", "tpu"), NO_TPU_LEADER},
	    {"without tpu", TPU_LWS("4", "", "pytorch"), NULL},
	};
#undef TPU_LWS
#undef NO_TPU_LEADER
	check_lws_rows(rows, sizeof(rows) / sizeof(rows[0]));
}

int main(void)
{
	struct config cfg;
	struct workload_lookup lk = {NULL, NULL, fake_service, NULL, NULL};
	size_t i;

	config_defaults(&cfg);
	test_warning_list();
	test_local_rank_edges();
	test_per_template();
	test_many_rjobs();
	test_denial_full();
	test_first_reason();
	test_lookups_off();
	test_container_limit();
	test_world_limit();
	test_lws_subgroups();
	test_lws_tpu_leader();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *txt = dq(cases[i].obj);
		cJSON *obj = cJSON_Parse(txt);
		struct validation v;
		int w;

		CHECK(obj != NULL, "%s: JSON", cases[i].name);
		validate_workload(obj, cases[i].kind, "ml", &cfg, NULL, NULL, &v);
		CHECK(v.opted_in == cases[i].opted_in, "%s: opted_in %d", cases[i].name,
		      v.opted_in);
		if (cases[i].deny) {
			char want[512], *tok, *save = NULL;
			snprintf(want, sizeof(want), "%s", cases[i].deny);
			CHECK(v.n_problems > 0 && strncmp(v.denial, "distenv: ", 9) == 0,
			      "%s: '%s'", cases[i].name, v.denial);
			for (tok = strtok_r(want, "|", &save); tok;
			     tok = strtok_r(NULL, "|", &save))
				CHECK(strstr(v.denial, tok) != NULL, "%s: denial '%s' lacks '%s'",
				      cases[i].name, v.denial, tok);
		} else {
			CHECK(v.n_problems == 0, "%s: denied '%s'", cases[i].name, v.denial);
		}
		if (cases[i].warn)
			CHECK(has_warning(&v, cases[i].warn), "%s: no warning '%s' (first: '%s')",
			      cases[i].name, cases[i].warn, v.n_warnings ? v.warnings[0] : "");
		else if (!cases[i].deny)
			CHECK(v.n_warnings == 0, "%s: warning '%s'", cases[i].name,
			      v.n_warnings ? v.warnings[0] : "");
		for (w = 0; w < v.n_warnings; w++)
			CHECK(strlen(v.warnings[w]) < 120 &&
			          strncmp(v.warnings[w], "distenv: ", 9) == 0,
			      "%s: warning shape '%s'", cases[i].name, v.warnings[w]);
		cJSON_Delete(obj);
		free(txt);
	}
	for (i = 0; i < sizeof(svc_cases) / sizeof(svc_cases[0]); i++) {
		char buf[512], *txt;
		cJSON *obj;
		struct validation v;

		snprintf(buf, sizeof(buf),
		         "{'metadata':{'name':'ddp'},'spec':{'replicas':2,'serviceName':'%s',"
		         "'podManagementPolicy':'Parallel'," TMPL("", "") "}}",
		         svc_cases[i].service);
		txt = dq(buf);
		obj = cJSON_Parse(txt);
		validate_workload(obj, "StatefulSet", "ml", &cfg, &lk, NULL, &v);
		if (svc_cases[i].warn)
			CHECK(has_warning(&v, svc_cases[i].warn), "%s: no warning '%s'",
			      svc_cases[i].name, svc_cases[i].warn);
		else
			CHECK(v.n_warnings == 0, "%s: warning '%s'", svc_cases[i].name,
			      v.n_warnings ? v.warnings[0] : "");
		cJSON_Delete(obj);
		free(txt);
	}
	test_start();
	test_netpols();
	test_selectors();
	TEST_MAIN_END("validate");
}
