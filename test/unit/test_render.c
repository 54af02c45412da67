/*
 * render: manifests in, every rank's env out, through the same core as /mutate.
 */
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "testtemplates.h"
#include "testutil.h"

#define STS                                                                                        \
	"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: ddp, namespace: ml}\n"           \
	"spec:\n  serviceName: ddp\n  replicas: 3\n  podManagementPolicy: Parallel\n  "            \
	"template:\n    metadata:\n"                                                               \
	"      labels: {distenv.dev/inject: \"true\"}\n    spec:\n      containers:\n"             \
	"      - name: t\n        image: x\n"
#define JOB                                                                                        \
	"apiVersion: batch/v1\nkind: Job\nmetadata: {name: train}\n"                               \
	"spec:\n  completions: 2\n  parallelism: 2\n  completionMode: Indexed\n  template:\n"      \
	"    metadata:\n      labels: {distenv.dev/inject: \"true\"}\n"                            \
	"      annotations: {distenv.dev/frameworks: jax}\n    spec:\n"                            \
	"      subdomain: train\n      containers: [{name: m, image: x}]\n"

/* A JobSet of 2 one-pod Jobs whose coordinator is the second. */
#define JS_COORD_YAML                                                                              \
	"kind: JobSet\nmetadata: {name: js}\nspec:\n  coordinator: {replicatedJob: w, jobIndex: "  \
	"1}\n"                                                                                     \
	"  network: {subdomain: net}\n  replicatedJobs:\n  - name: w\n    replicas: 2\n"           \
	"    template:\n      spec:\n        completions: 1\n        completionMode: Indexed\n"    \
	"        template:\n          metadata: {labels: {distenv.dev/inject: 'true'}}\n"          \
	"          spec: {containers: [{name: t}]}\n"

/* A replicated Job of 1 Job x 2 pods whose 8-GPU container sets LOCAL_RANK and asks for xgboost. */
#define RJOB_GPU8(name)                                                                            \
	"  - name: " name "\n    template:\n      spec:\n        completions: 2\n"                 \
	"        parallelism: 2\n        completionMode: Indexed\n        template:\n"             \
	"          metadata: {labels: {distenv.dev/inject: 'true'}, annotations: "                 \
	"{distenv.dev/frameworks: 'pytorch,xgboost'}}\n          spec: {containers: [{name: "      \
	"trainer, env: [{name: LOCAL_RANK, value: '0'}], resources: {limits: {nvidia.com/gpu: "    \
	"8}}}]}\n"

/* A LeaderWorkerSet whose leader template alone opts in. */
#define LWS_LEADER_ONLY                                                                            \
	"kind: LeaderWorkerSet\nmetadata: {name: lws}\nspec:\n  replicas: 2\n"                     \
	"  leaderWorkerTemplate:\n    size: 3\n    leaderTemplate:\n"                              \
	"      metadata: {labels: {distenv.dev/inject: 'true'}}\n"                                 \
	"      spec: {containers: [{name: l}]}\n    workerTemplate:\n"                             \
	"      spec: {containers: [{name: w}]}\n"

static const struct {
	const char *name;
	const char *yaml;
	long world;
	enum render_format fmt;
	const char *want;      /* substring of the output, NULL when an error is expected */
	const char *want_err;  /* substring of err */
	const char *want_warn; /* substring of the warnings, or NULL */
} cases[] = {
    /* counts are int32 in the API: INT_MAX is a count (too many pods), as every path reads it */
    {"LeaderWorkerSet of INT_MAX groups: too many pods, not one group",
     "kind: LeaderWorkerSet\nmetadata: {name: lws}\nspec:\n  replicas: 2147483647\n"
     "  leaderWorkerTemplate:\n    size: 2\n    workerTemplate:\n"
     "      metadata: {labels: {distenv.dev/inject: 'true'}}\n      spec: {containers: [{name: "
     "w}]}\n",
     0, RENDER_TEXT, NULL, "LeaderWorkerSet lws: more than 65536 pods to render", NULL},
    {"LeaderWorkerSet of groups of INT_MAX: above the limit, not groups of one",
     "kind: LeaderWorkerSet\nmetadata: {name: lws}\nspec:\n  replicas: 1\n"
     "  leaderWorkerTemplate:\n    size: 2147483647\n    workerTemplate:\n"
     "      metadata: {labels: {distenv.dev/inject: 'true'}}\n      spec: {containers: [{name: "
     "w}]}\n",
     0, RENDER_TEXT, NULL,
     "LeaderWorkerSet default/lws: distenv: LeaderWorkerSet default/lws has a world size of "
     "2147483647, above the limit of 65536",
     NULL},
    {"StatefulSet of INT_MAX replicas: above the limit, not one",
     "kind: StatefulSet\nmetadata: {name: ddp, namespace: ml}\nspec: {serviceName: ddp, replicas: "
     "2147483647, template: {metadata: {labels: {distenv.dev/inject: 'true'}}, spec: "
     "{containers: [{name: t}]}}}\n",
     0, RENDER_TEXT, NULL,
     "StatefulSet ml/ddp has a world size of 2147483647, above the limit of 65536", NULL},
    {"Indexed Job of INT_MAX completions: above the limit, not one",
     "kind: Job\nmetadata: {name: train}\nspec: {completions: 2147483647, parallelism: "
     "2147483647, completionMode: Indexed, template: {metadata: {labels: {distenv.dev/inject: "
     "'true'}}, spec: {subdomain: train, containers: [{name: t}]}}}\n",
     0, RENDER_TEXT, NULL,
     "Job default/train has a world size of 2147483647, above the limit of 65536", NULL},
    {"JobSet without completionMode: JobSet's defaulting webhook makes it Indexed",
     "kind: JobSet\nmetadata: {name: pytorch, namespace: ml}\nspec:\n  replicatedJobs:\n"
     "  - name: workers\n    replicas: 1\n    template:\n      spec:\n        parallelism: 2\n"
     "        completions: 2\n        template:\n          metadata: {labels: "
     "{distenv.dev/inject: 'true'}}\n          spec: {containers: [{name: t}]}\n",
     0, RENDER_TEXT,
     "--- rank 1/2: JobSet ml/pytorch, pod pytorch-workers-0-1, containers t\n"
     "MASTER_ADDR=pytorch-workers-0-0.pytorch.ml.svc.cluster.local\n",
     NULL, NULL},
    {"LeaderWorkerSet of a TPU workerTemplate only: the leader is a TPU host, as the controller "
     "tells the workers (leader-requests-tpus)",
     "kind: LeaderWorkerSet\nmetadata: {name: tpu, namespace: ml}\nspec:\n  replicas: 1\n"
     "  leaderWorkerTemplate:\n    size: 2\n    workerTemplate:\n      metadata: {labels: "
     "{distenv.dev/inject: 'true'}}\n      spec: {containers: [{name: jax, resources: {limits: "
     "{google.com/tpu: 4}}}]}\n",
     0, RENDER_TEXT, "--- rank 1/2: LeaderWorkerSet ml/tpu, group 0, pod tpu-0-1, containers jax\n",
     NULL, NULL},
    /* a zero quantity written as a string is no request, as the LWS controller reads it */
    {"LeaderWorkerSet whose leader asks \"0\" TPUs: no TPU host, refused",
     "kind: LeaderWorkerSet\nmetadata: {name: tpu, namespace: ml}\nspec:\n  replicas: 1\n"
     "  leaderWorkerTemplate:\n    size: 3\n    leaderTemplate:\n      metadata: {labels: "
     "{distenv.dev/inject: 'true'}}\n      spec: {containers: [{name: jax, resources: {limits: "
     "{google.com/tpu: '0'}}}]}\n    workerTemplate:\n      metadata: {labels: "
     "{distenv.dev/inject: 'true'}}\n      spec: {containers: [{name: jax, resources: {limits: "
     "{google.com/tpu: 4}}}]}\n",
     0, RENDER_TEXT, NULL, "the leader of LeaderWorkerSet ml/tpu requests no google.com/tpu", NULL},
    {"LeaderWorkerSet whose leader asks \"+0.0\" TPUs: no TPU host, refused",
     "kind: LeaderWorkerSet\nmetadata: {name: tpu, namespace: ml}\nspec:\n  replicas: 1\n"
     "  leaderWorkerTemplate:\n    size: 3\n    leaderTemplate:\n      metadata: {labels: "
     "{distenv.dev/inject: 'true'}}\n      spec: {containers: [{name: jax, resources: {limits: "
     "{google.com/tpu: '+0.0'}}}]}\n    workerTemplate:\n      metadata: {labels: "
     "{distenv.dev/inject: 'true'}}\n      spec: {containers: [{name: jax, resources: {limits: "
     "{google.com/tpu: 4}}}]}\n",
     0, RENDER_TEXT, NULL, "the leader of LeaderWorkerSet ml/tpu requests no google.com/tpu", NULL},
    {"a container's own WORLD_SIZE: warned once, marked in its env",
     "kind: StatefulSet\nmetadata: {name: ddp, namespace: ml}\nspec: {serviceName: ddp, replicas: "
     "2, podManagementPolicy: Parallel, template: {metadata: {labels: {distenv.dev/inject: "
     "'true'}}, spec: {containers: [{name: t, env: [{name: WORLD_SIZE, value: '16'}]}]}}}\n",
     0, RENDER_TEXT, "WORLD_SIZE=2\n", NULL,
     "warning: StatefulSet ddp: distenv: container t: WORLD_SIZE=16, not distenv's 2: env:// waits "
     "for that many; torchrun sets its own\n"},
    {"a container's own WORLD_SIZE: its effective line",
     "kind: StatefulSet\nmetadata: {name: ddp, namespace: ml}\nspec: {serviceName: ddp, replicas: "
     "2, podManagementPolicy: Parallel, template: {metadata: {labels: {distenv.dev/inject: "
     "'true'}}, spec: {containers: [{name: t, env: [{name: WORLD_SIZE, value: '16'}]}]}}}\n",
     0, RENDER_TEXT, "  (container t) WORLD_SIZE=16 (its own, not distenv's)\n", NULL, ""},
    {"a container's own RANK from a fieldRef: its effective line names where it comes from",
     "kind: StatefulSet\nmetadata: {name: ddp, namespace: ml}\nspec: {serviceName: ddp, replicas: "
     "2, podManagementPolicy: Parallel, template: {metadata: {labels: {distenv.dev/inject: "
     "'true'}}, spec: {containers: [{name: t, env: [{name: RANK, valueFrom: {fieldRef: "
     "{fieldPath: \"metadata.labels['apps.kubernetes.io/pod-index']\"}}}]}]}}}\n",
     0, RENDER_TEXT,
     "  (container t) RANK=1 (its own, from metadata.labels['apps.kubernetes.io/pod-index'])\n",
     NULL, ""},
    {"a container's own RANK set by a $(reference): shown as written, not as an empty value",
     "kind: StatefulSet\nmetadata: {name: ddp, namespace: ml}\nspec: {serviceName: ddp, replicas: "
     "2, podManagementPolicy: Parallel, template: {metadata: {labels: {distenv.dev/inject: "
     "'true'}}, spec: {containers: [{name: t, env: [{name: RANK, value: '$(IDX)'}]}]}}}\n",
     0, RENDER_TEXT, "  (container t) RANK=$(IDX) (its own, set by a reference read at run time)\n",
     NULL, ""},
    {"a literal RANK for two ranks: refused, as /validate refuses it",
     "kind: StatefulSet\nmetadata: {name: ddp, namespace: ml}\nspec: {serviceName: ddp, replicas: "
     "2, podManagementPolicy: Parallel, template: {metadata: {labels: {distenv.dev/inject: "
     "'true'}}, spec: {containers: [{name: t, env: [{name: RANK, value: '0'}]}]}}}\n",
     0, RENDER_TEXT, NULL, "container t sets RANK=0 for each of its 2 ranks", NULL},
    {"wait-for-master: the init container distenv adds is printed",
     "kind: StatefulSet\nmetadata: {name: ddp, namespace: ml}\nspec: {serviceName: ddp, replicas: "
     "2, podManagementPolicy: Parallel, template: {metadata: {labels: {distenv.dev/inject: "
     "'true'}, annotations: {distenv.dev/wait-for-master: 5m}}, spec: {containers: [{name: "
     "t}]}}}\n",
     0, RENDER_TEXT,
     "  (init container distenv-wait-for-master, added by distenv) distenv-webhook wait --timeout "
     "300s: MASTER_ADDR=ddp-0.ddp.ml.svc.cluster.local MASTER_PORT=29500 RANK=1\n",
     NULL, NULL},
    {"statefulset: last rank", STS, 0, RENDER_TEXT,
     "--- rank 2/3: StatefulSet ml/ddp, pod ddp-2, containers t\n"
     "MASTER_ADDR=ddp-0.ddp.ml.svc.cluster.local\nMASTER_PORT=29500\nRANK=2\nWORLD_SIZE=3\n",
     NULL, NULL},
    {"statefulset: --world-size", STS, 5, RENDER_TEXT, "--- rank 4/5:", NULL, NULL},
    {"start ordinal",
     "kind: StatefulSet\nmetadata: {name: w}\nspec: {serviceName: s, replicas: 2,"
     " ordinals: {start: 5}, template: {metadata: {labels: {distenv.dev/inject: 'true'}},"
     " spec: {containers: [{name: c}]}}}\n",
     0, RENDER_TEXT,
     "--- rank 1/2: StatefulSet default/w, pod w-6, containers c\n"
     "MASTER_ADDR=w-5.s.default.svc.cluster.local",
     NULL, "podManagementPolicy OrderedReady"},
    /* the start is an int32: its largest value is a pod's ordinal, not 0's */
    {"start ordinal 2147483647: the pod is w-2147483647",
     "kind: StatefulSet\nmetadata: {name: w}\nspec: {serviceName: s, replicas: 1,"
     " podManagementPolicy: Parallel, ordinals: {start: 2147483647}, template: {metadata: "
     "{labels: {distenv.dev/inject: 'true'}}, spec: {containers: [{name: c}]}}}\n",
     0, RENDER_TEXT,
     "--- rank 0/1: StatefulSet default/w, pod w-2147483647, containers c\n"
     "MASTER_ADDR=w-2147483647.s.default.svc.cluster.local",
     NULL, NULL},
    /* past it the controller parses the ordinal back as -1 and names the pod w--1 */
    {"ordinals past 2147483647: refused with the start to use",
     "kind: StatefulSet\nmetadata: {name: w}\nspec: {serviceName: s, replicas: 3,"
     " podManagementPolicy: Parallel, ordinals: {start: 2147483646}, template: {metadata: "
     "{labels: {distenv.dev/inject: 'true'}}, spec: {containers: [{name: c}]}}}\n",
     0, RENDER_TEXT, NULL,
     "StatefulSet default/w: distenv: StatefulSet w's ordinals run from 2147483646 to "
     "2147483648 (spec.ordinals.start + spec.replicas - 1), past 2147483647, the largest the "
     "StatefulSet controller reads back from a pod's name: it names the pod of ordinal "
     "2147483648 w--1 and the world never forms: lower spec.ordinals.start to at most "
     "2147483645",
     NULL},
    {"a template that does not opt in: said so, and no rank printed as if injected",
     "kind: StatefulSet\nmetadata: {name: w}\nspec: {serviceName: s, replicas: 2,"
     " template: {spec: {containers: [{name: c}]}}}\n",
     0, RENDER_TEXT, "", NULL, "has no label distenv.dev/inject: \"true\", so the webhook"},
    {"the opt-in written as an annotation: said where it is and where it goes",
     "kind: StatefulSet\nmetadata: {name: w}\nspec: {serviceName: s, replicas: 2,"
     " template: {metadata: {annotations: {distenv.dev/inject: 'true'}}, spec: {containers: "
     "[{name: c}]}}}\n",
     0, RENDER_TEXT, "", NULL,
     "has no label distenv.dev/inject: \"true\" (it is an annotation here: move it under "
     "labels), so the webhook"},
    {"the opt-in label on the StatefulSet, not its pod template: said so",
     "kind: StatefulSet\nmetadata: {name: w, labels: {distenv.dev/inject: 'true'}}\nspec: "
     "{serviceName: s, replicas: 2, template: {spec: {containers: [{name: c}]}}}\n",
     0, RENDER_TEXT, "", NULL,
     "(the StatefulSet's own metadata has it: pods get the pod template's labels)"},
    {"the opt-in label with another value than \"true\": said so",
     "kind: StatefulSet\nmetadata: {name: w}\nspec: {serviceName: s, replicas: 2,"
     " template: {metadata: {labels: {distenv.dev/inject: 'yes'}}, spec: {containers: "
     "[{name: c}]}}}\n",
     0, RENDER_TEXT, "", NULL, "(its value is \"yes\": only \"true\" opts in)"},
    {"an opted-in Deployment beside a Job: its pods would be denied, so render fails naming it",
     JOB "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {template: "
         "{metadata: {labels: {distenv.dev/inject: 'true'}}, spec: {containers: [{name: c}]}}}\n",
     0, RENDER_TEXT, NULL,
     "Deployment web: its pod template opts in, but its pods would be denied: distenv supports "
     "only pods of a StatefulSet (apps/v1)",
     NULL},
    {"a Deployment that does not opt in beside a Job: left alone",
     JOB "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {template: "
         "{spec: {containers: [{name: c}]}}}\n",
     0, RENDER_TEXT, "--- rank 1/2: Job default/train", NULL, NULL},
    {"an unquoted true: YAML's boolean, which the API server refuses as a label",
     "kind: StatefulSet\nmetadata: {name: w}\nspec: {serviceName: s, replicas: 2,"
     " template: {metadata: {labels: {distenv.dev/inject: true}}, spec: {containers: "
     "[{name: c}]}}}\n",
     0, RENDER_TEXT, "", NULL,
     "label distenv.dev/inject: true is unquoted: YAML reads a boolean, which the API server "
     "refuses as a label; write distenv.dev/inject: \"true\""},
    {"indexed job, default namespace, jax", JOB, 0, RENDER_TEXT,
     "--- rank 1/2: Job default/train, pod train-1, containers m\n"
     "JAX_COORDINATOR_ADDRESS=train-0.train.default.svc.cluster.local:29500\n"
     "JAX_NUM_PROCESSES=2\nJAX_PROCESS_ID=1\n",
     NULL, NULL},
    {"json output", JOB, 0, RENDER_JSON,
     "\"name\":\t\"JAX_PROCESS_ID\",\n\t\t\t\t\"value\":\t\"1\"", NULL, NULL},
    {"two documents with a Service between",
     STS "---\nkind: Service\nmetadata: {name: s}\n---\n" JOB, 0, RENDER_TEXT,
     "--- rank 0/2: Job default/train", NULL,
     "warning: StatefulSet ddp: distenv: Service ddp not found in ml: MASTER_ADDR will not "
     "resolve"},
    {"the manifest's headless Service passes the Service checks",
     STS "---\nkind: Service\nmetadata: {name: ddp, namespace: ml}\nspec: {clusterIP: None, "
         "publishNotReadyAddresses: true, selector: {distenv.dev/inject: 'true'}}\n",
     0, RENDER_TEXT, "--- rank 2/3: StatefulSet ml/ddp", NULL, NULL},
    {"non-indexed job",
     "kind: Job\nmetadata: {name: j}\nspec: {completions: 2, template: {metadata: {labels: "
     "{distenv.dev/inject: 'true'}}, spec: {subdomain: j, containers: [{name: c}]}}}\n",
     0, RENDER_TEXT, NULL, "not an Indexed Job", NULL},
    {"job without subdomain",
     "kind: Job\nmetadata: {name: j}\nspec: {completions: 2, parallelism: 2,"
     " completionMode: Indexed, template: {metadata: {labels: {distenv.dev/inject: 'true'}},"
     " spec: {containers: [{name: c}]}}}\n",
     0, RENDER_TEXT, NULL, "has no spec.subdomain: point it at a headless Service", NULL},
    {"bare pod needs an owner",
     "kind: Pod\nmetadata: {name: p, labels: {distenv.dev/inject: 'true'}}\nspec: "
     "{containers: [{name: c}]}\n",
     0, RENDER_TEXT, NULL, "distenv supports only pods of a StatefulSet", NULL},
    {"nothing to render", "kind: Service\nmetadata: {name: s}\n", 0, RENDER_TEXT, NULL,
     "no StatefulSet, Job, JobSet, LeaderWorkerSet or Pod", NULL},
    {"bad yaml", "kind: [\n", 0, RENDER_TEXT, NULL, "line ", NULL},
    {"bad annotation",
     "kind: StatefulSet\nmetadata: {name: w}\nspec: {serviceName: s, template: "
     "{metadata: {labels: {distenv.dev/inject: 'true'}, annotations: {distenv.dev/port: "
     "'99999'}}, spec: {containers: "
     "[{name: c}]}}}\n",
     0, RENDER_TEXT, NULL, "annotation distenv.dev/port: \"99999\"", NULL},
    {"statefulset without serviceName: the template's subdomain is replaced, as the controller "
     "does",
     "kind: StatefulSet\nmetadata: {name: ddp, namespace: ml}\nspec: {replicas: 2, template: "
     "{metadata: {labels: {distenv.dev/inject: 'true'}}, spec: {subdomain: ddp, containers: "
     "[{name: t}]}}}\n",
     0, RENDER_TEXT, NULL,
     "StatefulSet ml/ddp: distenv: StatefulSet ddp has no spec.serviceName, so its pods have "
     "no DNS names",
     NULL},
    {"TF_CONFIG past the exec limit: left out with a warning", STS, 4000, RENDER_TEXT,
     "--- rank 3999/4000:", NULL, "warning: ranks 0-9: distenv: TF_CONFIG left out"},
    {"jobset: one world across replicated Jobs of different sizes",
     "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: js, namespace: ml}\n"
     "spec:\n  replicatedJobs:\n  - name: a\n    replicas: 2\n    template:\n      spec:\n"
     "        completions: 2\n        parallelism: 2\n        completionMode: Indexed\n"
     "        template:\n          metadata: {labels: {distenv.dev/inject: 'true'}}\n"
     "          spec: {containers: [{name: t}]}\n  - name: b\n    replicas: 1\n    template:\n"
     "      spec:\n        completions: 3\n        parallelism: 3\n"
     "        completionMode: Indexed\n        template:\n"
     "          metadata: {labels: {distenv.dev/inject: 'true'}}\n"
     "          spec: {containers: [{name: t}]}\n",
     0, RENDER_TEXT,
     "--- rank 6/7: JobSet ml/js, pod js-b-0-2, containers t\n"
     "MASTER_ADDR=js-a-0-0.js.ml.svc.cluster.local\nMASTER_PORT=29500\nRANK=6\nWORLD_SIZE=7\n",
     NULL, NULL},
    {"jobset: a coordinator", JS_COORD_YAML, 0, RENDER_TEXT,
     "--- rank 1/2: JobSet default/js, pod js-w-0-0, containers t\n"
     "MASTER_ADDR=js-w-1-0.net.default.svc.cluster.local\nMASTER_PORT=29500\nRANK=1\n",
     NULL, NULL},
    {"jobset: the coordinator is rank 0", JS_COORD_YAML, 0, RENDER_TEXT,
     "--- rank 0/2: JobSet default/js, pod js-w-1-0, containers t\n"
     "MASTER_ADDR=js-w-1-0.net.default.svc.cluster.local\nMASTER_PORT=29500\nRANK=0\n",
     NULL, NULL},
    {"jobset: a replicated Job that says NonIndexed (no default then)",
     "kind: JobSet\nmetadata: {name: js}\nspec:\n  replicatedJobs:\n  - name: w\n"
     "    template:\n      spec:\n        completions: 2\n        parallelism: 2\n"
     "        completionMode: NonIndexed\n"
     "        template:\n          metadata: {labels: {distenv.dev/inject: 'true'}}\n"
     "          spec: {containers: [{name: t}]}\n",
     0, RENDER_TEXT, NULL, "JobSet default/js: distenv: replicated Job w is not an Indexed Job",
     NULL},
    {"leaderworkerset: one world per group",
     "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: lws}\n"
     "spec:\n  replicas: 2\n  leaderWorkerTemplate:\n    size: 4\n    workerTemplate:\n"
     "      metadata: {labels: {distenv.dev/inject: 'true'}}\n"
     "      spec: {containers: [{name: t}]}\n",
     0, RENDER_TEXT,
     "--- rank 3/4: LeaderWorkerSet default/lws, group 1, pod lws-1-3, containers t\n"
     "MASTER_ADDR=lws-1.lws.default.svc.cluster.local\nMASTER_PORT=29500\nRANK=3\n"
     "WORLD_SIZE=4\n",
     NULL, NULL},
    {"leaderworkerset -o json: each rank names its group",
     "kind: LeaderWorkerSet\nmetadata: {name: lws}\nspec:\n  replicas: 2\n"
     "  leaderWorkerTemplate:\n    size: 2\n    workerTemplate:\n"
     "      metadata: {labels: {distenv.dev/inject: 'true'}}\n"
     "      spec: {containers: [{name: t}]}\n",
     0, RENDER_JSON,
     "\"pod\":\t\"lws-1-1\",\n\t\t\"rank\":\t1,\n\t\t\"worldSize\":\t2,\n"
     "\t\t\"group\":\t1,",
     NULL, NULL},
    {"a List of workloads",
     "apiVersion: v1\nkind: List\nitems:\n- kind: Service\n  metadata: {name: ddp}\n"
     "  spec: {clusterIP: None, publishNotReadyAddresses: true, selector: "
     "{distenv.dev/inject: 'true'}}\n"
     "- kind: StatefulSet\n  metadata: {name: ddp, namespace: ml}\n  spec: {serviceName: ddp, "
     "replicas: 2, podManagementPolicy: Parallel, template: {metadata: {labels: "
     "{distenv.dev/inject: 'true'}}, spec: "
     "{containers: [{name: t}]}}}\n",
     0, RENDER_TEXT, "--- rank 1/2: StatefulSet ml/ddp, pod ddp-1", NULL, NULL},
    {"hostNetwork without ClusterFirstWithHostNet: warned once, as /validate and /mutate do",
     "kind: StatefulSet\nmetadata: {name: ddp, namespace: ml}\nspec: {serviceName: ddp, replicas: "
     "3, podManagementPolicy: Parallel, template: {metadata: {labels: {distenv.dev/inject: "
     "'true'}}, spec: {hostNetwork: true, containers: [{name: t}]}}}\n",
     0, RENDER_TEXT, "--- rank 2/3: StatefulSet ml/ddp, pod ddp-2", NULL,
     "warning: StatefulSet ddp: distenv: hostNetwork needs dnsPolicy: ClusterFirstWithHostNet, "
     "or MASTER_ADDR will not resolve\n"
     "warning: StatefulSet ddp: distenv: hostNetwork ranks may share a node and its ports: add a "
     "hostname podAntiAffinity or spread\n"},
    {"a JobSet's warnings name their replicated Job; the pods' same ones not again",
     "kind: JobSet\nmetadata: {name: js}\nspec:\n  replicatedJobs:\n" RJOB_GPU8("a") RJOB_GPU8("b"),
     0, RENDER_TEXT, "--- rank 3/4: JobSet default/js, pod js-b-0-1", NULL,
     "warning: JobSet js: distenv: replicated Job a: container trainer sets LOCAL_RANK: launchers "
     "start 1 process, not 8; remove it\n"
     "warning: JobSet js: distenv: replicated Job a: DMLC_NUM_WORKER counts 1 XGBoost worker a "
     "pod, not its 8 processes\n"
     "warning: JobSet js: distenv: replicated Job b: container trainer sets LOCAL_RANK: launchers "
     "start 1 process, not 8; remove it\n"
     "warning: JobSet js: distenv: replicated Job b: DMLC_NUM_WORKER counts 1 XGBoost worker a "
     "pod, not its 8 processes\n"},
    {"a Kueue warning that names its Job: the Job named once",
     "kind: Job\nmetadata: {name: train, namespace: ml, annotations: "
     "{kueue.x-k8s.io/job-min-parallelism: '2'}}\nspec: {completions: 2, parallelism: 2, "
     "completionMode: Indexed, template: {metadata: {labels: {distenv.dev/inject: 'true'}}, "
     "spec: {subdomain: train, containers: [{name: t}]}}}\n",
     0, RENDER_TEXT, "--- rank 1/2: Job ml/train", NULL,
     "warning: distenv: Job train: with kueue.x-k8s.io/job-min-parallelism Kueue may start fewer "
     "pods than its ranks\nwarning: Job train: distenv: their pods would be refused: add "
     "kueue.x-k8s.io/job-completions-equal-parallelism: \"true\"\n"},
    {"a container's own MASTER_PORT",
     "kind: StatefulSet\nmetadata: {name: ddp, namespace: ml}\nspec: {serviceName: ddp, replicas: "
     "1, podManagementPolicy: Parallel, template: {metadata: {labels: {distenv.dev/inject: "
     "'true'}}, spec: {containers: "
     "[{name: t, env: [{name: MASTER_PORT, value: '1234'}]}]}}}\n",
     0, RENDER_TEXT, "  (container t) PET_MASTER_PORT=1234\n", NULL, NULL},
};

/*
 * A leader-only opt-in: render reads both templates (kind.h), as /validate and
 * the chart do: the leaders are rendered, the workers (whose template does not
 * opt in, so the webhook leaves them) are not, and /validate's warning names the
 * worker template, whose pods the world counts.
 */
/*
 * A config that turns look-ups off: render refuses what /validate and /mutate
 * refuse with it (the world of a JobSet its pods' labels do not give), not what
 * a look-up of the manifest would give.
 */
static void test_no_lookups(void)
{
	static const char js[] =
	    "kind: JobSet\nmetadata: {name: pytorch, namespace: ml}\nspec:\n  replicatedJobs:\n"
	    "  - name: workers\n    replicas: 1\n    template:\n      spec:\n        parallelism: "
	    "2\n        completions: 2\n        template:\n          metadata: {labels: "
	    "{distenv.dev/inject: 'true'}}\n          spec: {containers: [{name: t}]}\n";
	struct config cfg;
	struct render_opts o = {NULL, 0, RENDER_TEXT};
	char err[512] = "", *out;

	config_defaults(&cfg);
	cfg.lookups = 0;
	out = render_manifest(js, strlen(js), &cfg, &o, NULL, err, sizeof(err));
	CHECK(out == NULL &&
	          strcmp(err, "JobSet ml/pytorch: distenv: look-ups of the workload are turned "
	                      "off, so the pods of JobSet pytorch cannot read its 2 pods and each "
	                      "would be refused: set the annotation distenv.dev/world-size to 2 "
	                      "on its pod template") == 0,
	      "look-ups off: err '%s'", err);
	free(out);
	cfg.lookups = 1;
	out = render_manifest(js, strlen(js), &cfg, &o, NULL, err, sizeof(err));
	CHECK(out != NULL && strstr(out, "--- rank 1/2: JobSet ml/pytorch"),
	      "look-ups on: err '%s'", err);
	free(out);
}

/*
 * A Kubeflow PyTorchJob turned into a master and a worker StatefulSet behind one
 * Service: two worlds, each with its own rank 0; render sees both documents and
 * says so once, naming both and the fix. Behind two Services: no such warning.
 */
static void test_one_service(const struct config *cfg)
{
#define KF_STS(name, n, svc)                                                                       \
	"---\nkind: StatefulSet\nmetadata: {name: " name ", namespace: ml}\nspec: {replicas: " n   \
	", serviceName: " svc ", podManagementPolicy: Parallel, template: {metadata: {labels: "    \
	"{distenv.dev/inject: 'true'}}, spec: {containers: [{name: c}]}}}\n"
	static const char one[] =
	    KF_STS("mnist-master", "1", "mnist") KF_STS("mnist-worker", "3", "mnist");
	static const char two[] = KF_STS("mnist-master", "1", "m") KF_STS("mnist-worker", "3", "w");
#undef KF_STS
	struct render_opts o = {NULL, 0, RENDER_TEXT};
	char err[512] = "", *out;
	struct strbuf wb;

	strbuf_init(&wb);
	out = render_manifest(one, strlen(one), cfg, &o, &wb, err, sizeof(err));
	CHECK(out != NULL && strstr(out, "--- rank 0/1: StatefulSet ml/mnist-master") &&
	          strstr(out, "--- rank 2/3: StatefulSet ml/mnist-worker"),
	      "one Service: err '%s'", err);
	CHECK(
	    wb.buf != NULL &&
	        strcmp(wb.buf,
	               "warning: StatefulSet mnist-master (1 rank) and StatefulSet mnist-worker (3 "
	               "ranks) are opted in behind one Service, mnist in namespace ml, yet each is "
	               "a world of its own with its own rank 0, so they never train together: make "
	               "them one workload of 4 pods, or one JobSet with a replicated Job for "
	               "each\n") == 0,
	    "one Service: warnings '%s'", wb.buf ? wb.buf : "");
	free(out);
	strbuf_free(&wb);
	strbuf_init(&wb);
	out = render_manifest(two, strlen(two), cfg, &o, &wb, err, sizeof(err));
	CHECK(out != NULL && (wb.buf == NULL || !strstr(wb.buf, "behind one Service")),
	      "two Services: err '%s', warnings '%s'", err, wb.buf ? wb.buf : "");
	free(out);
	strbuf_free(&wb);
}

/* 1 when no line of text appears twice. */
static int lines_distinct(const char *text)
{
	const char *a, *b;

	for (a = text; *a != '\0'; a = strchr(a, '\n') ? strchr(a, '\n') + 1 : a + strlen(a)) {
		size_t la = strcspn(a, "\n");
		for (b = strchr(a, '\n') ? strchr(a, '\n') + 1 : a + strlen(a); *b != '\0';
		     b = strchr(b, '\n') ? strchr(b, '\n') + 1 : b + strlen(b))
			if (strcspn(b, "\n") == la && strncmp(a, b, la) == 0)
				return 0;
	}
	return 1;
}

static void test_leader_only(const struct config *cfg)
{
	struct render_opts o = {NULL, 0, RENDER_TEXT};
	char err[512] = "";
	struct strbuf wb;
	char *out;

	strbuf_init(&wb);
	out = render_manifest(LWS_LEADER_ONLY, strlen(LWS_LEADER_ONLY), cfg, &o, &wb, err,
	                      sizeof(err));
	CHECK(out != NULL &&
	          strstr(out, "--- rank 0/3: LeaderWorkerSet default/lws, group 0, pod lws-0, "
	                      "containers l\nMASTER_ADDR=lws-0.lws.default.svc") &&
	          strstr(out, "group 1, pod lws-1, containers l") && !strstr(out, "lws-0-1,") &&
	          !strstr(out, "containers w"),
	      "leader-only LeaderWorkerSet: err '%s'; got:\n%s", err, out ? out : "(null)");
	CHECK(wb.buf != NULL &&
	          strcmp(wb.buf,
	                 "warning: LeaderWorkerSet lws: distenv: worker template: no label "
	                 "distenv.dev/inject, so its pods get no env, yet WORLD_SIZE counts "
	                 "them\n") == 0,
	      "leader-only LeaderWorkerSet: warnings '%s'", wb.buf ? wb.buf : "");
	free(out);
	strbuf_free(&wb);
}

/*
 * A TF_CONFIG over Linux's limit (the default frameworks, 5,000 ranks): each
 * rank's own size differs with its index's digits, yet the warning is one line,
 * the workload's, in the pods' words.
 */
static void test_left_out_once(const struct config *cfg)
{
	static const char sts[] =
	    "kind: StatefulSet\nmetadata: {name: train, namespace: ml}\nspec:\n  serviceName: "
	    "train\n  replicas: 5000\n  podManagementPolicy: Parallel\n  template:\n    metadata: "
	    "{labels: {distenv.dev/inject: 'true'}}\n    spec: {containers: [{name: main}]}\n";
	struct render_opts o = {NULL, 0, RENDER_TEXT};
	char err[512] = "";
	struct strbuf wb;
	char *out;
	const char *w;
	int n = 0;

	strbuf_init(&wb);
	out = render_manifest(sts, strlen(sts), cfg, &o, &wb, err, sizeof(err));
	for (w = wb.buf; w != NULL && (w = strstr(w, "TF_CONFIG left out")) != NULL; w++)
		n++;
	CHECK(out != NULL && n == 1 && wb.buf != NULL &&
	          strcmp(wb.buf, "warning: StatefulSet train: distenv: TF_CONFIG left out: 228963 "
	                         "bytes for 5000 ranks, over Linux's 131072 per variable\n") == 0,
	      "5,000 ranks: %d TF_CONFIG warnings: '%s' (err '%s')", n, wb.buf ? wb.buf : "", err);
	CHECK(out != NULL && strstr(out, "--- rank 4999/5000:") && !strstr(out, "TF_CONFIG="),
	      "5,000 ranks: no TF_CONFIG in any rank's env");
	free(out);
	strbuf_free(&wb);
}

/*
 * Every per-template rule of testtemplates.h through render, its problem on
 * the first, middle or last replicated Job of a JobSet, or on a
 * LeaderWorkerSet's leader or worker template: a denial is the workload's,
 * naming that template; a warning is printed once, naming it and no other;
 * a warning of the pods is the ranks of that template's pods alone.
 */
static void test_per_template(const struct config *cfg)
{
	size_t r;
	int p, q;

	for (r = 0; r < sizeof(tt_rules) / sizeof(tt_rules[0]); r++)
		for (p = 0; p < TT_N_PLACES; p++) {
			const struct tt_rule *rule = &tt_rules[r];
			struct render_opts o = {NULL, 0, RENDER_TEXT};
			char want[1024], line[1200], err[1024] = "", *txt, *out;
			const char *name = tt_places[p].bit & TT_JS ? "js" : "lws", *warn;
			struct strbuf wb;

			if (!(rule->places & tt_places[p].bit))
				continue;
			txt = tt_json(rule, p);
			strbuf_init(&wb);
			out = render_manifest(txt, strlen(txt), cfg, &o, &wb, err, sizeof(err));
			warn = wb.buf ? wb.buf : "";
			if (rule->want != NULL)
				tt_want(want, sizeof(want), rule->want, p, rule->deny ? 0 : 120);
			if (rule->want == NULL) {
				CHECK(out != NULL && !strstr(warn, "warning: JobSet") &&
				          !strstr(warn, "warning: LeaderWorkerSet"),
				      "render, %s on the %s: warnings '%s' (err '%s')", rule->name,
				      tt_places[p].what, warn, err);
			} else if (rule->deny) {
				snprintf(line, sizeof(line), "%s ml/%s: %s", tt_places[p].kind,
				         name, want);
				CHECK(out == NULL && strcmp(err, line) == 0,
				      "render, %s on the %s: err '%s', want '%s'", rule->name,
				      tt_places[p].what, err, line);
			} else {
				snprintf(line, sizeof(line), "warning: %s %s: %s\n",
				         tt_places[p].kind, name, want);
				CHECK(out != NULL && strstr(warn, line) != NULL &&
				          lines_distinct(warn),
				      "render, %s on the %s: warnings '%s', want '%s' (err '%s')",
				      rule->name, tt_places[p].what, warn, line, err);
			}
			for (q = 0; q < TT_N_PLACES; q++)
				CHECK(q == p || (!strstr(warn, tt_places[q].what) &&
				                 !strstr(err, tt_places[q].what)),
				      "render, %s on the %s: '%s%s' names the %s", rule->name,
				      tt_places[p].what, err, warn, tt_places[q].what);
			if (rule->pod_warn != NULL) {
				/* the pods' words, unless the template's warning said them whole */
				int whole;

				tt_want(want, sizeof(want), rule->pod_warn, p, 0);
				whole =
				    rule->want != NULL &&
				    strlen(want) + strlen(tt_places[p].what) + strlen(": ") < 120;
				snprintf(line, sizeof(line), "warning: %s: %s\n",
				         tt_places[p].ranks, want);
				CHECK((strstr(warn, line) != NULL) == !whole,
				      "render, %s on the %s: warnings '%s', want '%s'", rule->name,
				      tt_places[p].what, warn, line);
				for (q = 0; q < TT_N_PLACES; q++)
					if (q != p && (tt_places[q].bit & TT_JS) ==
					                  (tt_places[p].bit & TT_JS)) {
						snprintf(line, sizeof(line),
						         "warning: %s: ", tt_places[q].ranks);
						CHECK(strstr(warn, line) == NULL,
						      "render, %s on the %s: warnings of %s: '%s'",
						      rule->name, tt_places[p].what,
						      tt_places[q].ranks, warn);
					}
			}
			free(out);
			free(txt);
			strbuf_free(&wb);
		}
}

int main(void)
{
	struct config cfg;
	size_t i;

	config_defaults(&cfg);
	test_leader_only(&cfg);
	test_per_template(&cfg);
	test_one_service(&cfg);
	test_left_out_once(&cfg);
	test_no_lookups();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct render_opts o = {NULL, cases[i].world, cases[i].fmt};
		char err[512] = "", *warn;
		struct strbuf wb;
		char *out;

		strbuf_init(&wb);
		out = render_manifest(cases[i].yaml, strlen(cases[i].yaml), &cfg, &o, &wb, err,
		                      sizeof(err));
		warn = wb.buf ? wb.buf : "";
		if (cases[i].want != NULL) {
			/* want "": nothing at all is printed */
			CHECK(out != NULL && strstr(out, cases[i].want) != NULL &&
			          (cases[i].want[0] != '\0' || out[0] == '\0'),
			      "%s: output lacks '%s'; err '%s'; got:\n%s", cases[i].name,
			      cases[i].want, err, out ? out : "(null)");
		} else {
			CHECK(out == NULL && strstr(err, cases[i].want_err) != NULL,
			      "%s: err '%s', want '%s'", cases[i].name, err, cases[i].want_err);
		}
		if (cases[i].want_warn != NULL) {
			const char *at = strstr(warn, cases[i].want_warn);
			CHECK(at != NULL, "%s: warnings '%s'", cases[i].name, warn);
			/* each warning once: no line of warn is printed twice */
			CHECK(lines_distinct(warn), "%s: a warning printed twice: '%s'",
			      cases[i].name, warn);
		} else if (cases[i].want != NULL)
			CHECK(warn[0] == '\0', "%s: unexpected warnings '%s'", cases[i].name, warn);
		free(out);
		strbuf_free(&wb);
	}
	TEST_MAIN_END("render");
}
