/*
 * Works out a pod's place in its distributed job from the pod object, its
 * namespace, the config and (optionally) a look-up of the owning workload:
 * workload kind and name, rank, world size, rank-0 address, port, frameworks,
 * and which containers to inject into. Pure apart from the look-up callback.
 * struct topology owns its targets array; topology_free releases it. One
 * header over four rooms: topology.c (the resolution), targets.c (the target
 * containers), hosts.c (host names and positions), warnings.c (warnings).
 */
#ifndef DISTENV_TOPOLOGY_H
#define DISTENV_TOPOLOGY_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "config.h"
#include "workload.h"
#include "verdict.h"

struct kind;

/*
 * A container to inject into: index into spec.containers, or spec.initContainers when init.
 * Its env list as topology_resolve found it, read once (a 64 KB pod's lists were walked
 * three times, once for each question): with env_read 1, env_entries is the list's length
 * and env_pairs holds topology_env_pair of each entry's name. env_read 0: unknown.
 */
struct topology_target {
	int init;
	int index;
	int env_read;
	long env_entries;
	uint64_t env_pairs[4];
};

/* A variable name's first two bytes (the second 0 for a one-byte name) folded to 0..255. */
static inline unsigned topology_env_pair(const char *name)
{
	return ((unsigned char)name[0] * 31u + (name[0] != '\0' ? (unsigned char)name[1] : 0u)) &
	       255u;
}

/*
 * 0 when target tg's env list certainly has no entry named name (no entry
 * starts with its two bytes); 1 when it may (walk the list to know), or when
 * tg is NULL or its list was not read.
 */
static inline int topology_target_may_define(const struct topology_target *tg, const char *name)
{
	unsigned p = topology_env_pair(name);

	return tg == NULL || !tg->env_read || (tg->env_pairs[p / 64] >> (p % 64) & 1);
}

/*
 * A part of a world whose pods its controller makes in units of one size:
 * units units of pods pods each, at the positions [first, first + units *
 * pods) of the order the controller lists the pods (a JobSet's replicated
 * Job: units Jobs of pods pods). A kind says what its parts are (struct kind,
 * n_parts and part); a world of a kind without parts is not cut.
 */
struct topology_part {
	const char *name; /* lives as long as the topology */
	long units;
	long pods;
	long first;
};

/*
 * Room for a kind's own state, which the core never reads (as struct
 * sockaddr_storage holds any address family's): the kind's room writes it in
 * its place and view steps and reads it in its callbacks. Zero until then.
 */
#define TOPOLOGY_KIND_STATE 1536

struct topology {
	const struct kind *kind; /* the pod's kind, its registered row (NULL: not known) */
	char ns[64];
	char workload[254]; /* the StatefulSet, Job, JobSet or LeaderWorkerSet name */
	char service[64];   /* headless Service: the pod's subdomain */
	int set_subdomain;  /* 1: spec.subdomain is absent and must be set to service */
	long rank;
	long world_size;
	long start; /* StatefulSet start ordinal; 0 for the other kinds */
	long group; /* LeaderWorkerSet group index; -1 for the other kinds */
	long port;
	char nproc[24];            /* PET_NPROC_PER_NODE value */
	long processes;            /* the processes the pod says it runs: nproc-per-node's
	                              number, else its largest GPU limit; 0 when not known */
	long gpus;                 /* the largest GPU limit among the targets; 0: none */
	char accel[64];            /* without GPUs and without nproc-per-node: the extended
	                              resource (a name with '/') of the largest limit above 1
	                              that gpuResources does not list and no framework
	                              claims (habana.ai/gaudi), "" when none */
	long accel_n;              /* its limit; 0 when none */
	int one_process;           /* 1: processes is 1 (nproc-per-node 1, or no such
	                              annotation and a largest GPU limit of exactly 1): it gets
	                              LOCAL_RANK=0 and LOCAL_WORLD_SIZE=1 */
	unsigned frameworks;       /* FW_* */
	unsigned frameworks_asked; /* FW_* named by the pod's annotation; 0 when defaulted */
	long elastic_min;          /* 0 when not elastic */
	long elastic_max;
	long max_restarts; /* -1 when not annotated */
	long wait_seconds; /* distenv.dev/wait-for-master; 0 when not annotated */
	char rdzv_id[330]; /* PET_RDZV_ID: one per world */
	char domain[384];  /* ".<service>.<ns>.svc.<clusterDomain>" */
	union {
		unsigned char bytes[TOPOLOGY_KIND_STATE];
		long align_long;
		void *align_ptr;
	} kind_state;                    /* the kind's own (TOPOLOGY_KIND_STATE) */
	struct topology_target *targets; /* malloc'd */
	int n_targets;
	enum deny_reason reason; /* on TOPOLOGY_DENY: why */
};

enum topology_status {
	TOPOLOGY_OK = 0,
	TOPOLOGY_DENY = 1, /* err holds the user-facing reason, starting "distenv: " */
	TOPOLOGY_NOMEM = -1,
};

/*
 * Resolves the topology of pod in namespace ns (the request's namespace, used
 * when the object has none). lookup may be NULL: no API look-ups, world size
 * only from the annotation and start ordinal 0. On TOPOLOGY_OK the caller calls
 * topology_free(t); on other results t holds nothing to free, and on
 * TOPOLOGY_DENY t->reason says why while kind, ns, workload and rank keep
 * what was known before the denial (workload "" and rank -1 when not known).
 */
enum topology_status topology_resolve(const cJSON *pod, const char *ns, const struct config *cfg,
                                      const struct workload_lookup *lookup, struct topology *t,
                                      char *err, size_t errlen) __attribute__((warn_unused_result));

void topology_free(struct topology *t);

/*
 * The warnings of a resolved pod whose env a known launcher would misread, when
 * the pod runs more than one process (t->processes above 1):
 * - distenv.dev/nproc-per-node above the largest GPU limit of the targets:
 *   processes would share a GPU, which NCCL refuses (whatever t->processes);
 * - a target container sets LOCAL_RANK itself: Lightning and accelerate then
 *   believe they were launched and start one process, on one device;
 * - a framework of the pod warns of its own (framework.h, warn: xgboost's
 *   DMLC_NUM_WORKER counts one worker a pod, so a tracker waits for the wrong
 *   number if the pod runs several).
 * Writes up to max strings "distenv: ..." of len bytes each into out (an array
 * of max * len bytes) and returns how many.
 */
int topology_launcher_warnings(const struct topology *t, const cJSON *pod_spec, char *out,
                               size_t len, int max);

/*
 * The same warnings for a pod template, which is not resolved: none when its
 * targets cannot be read (/validate and /mutate report that on their own).
 */
int topology_template_launcher_warnings(const cJSON *pod_spec, const cJSON *anns,
                                        const struct config *cfg, char *out, size_t len, int max);

/*
 * The target containers of a pod template (distenv.dev/containers, else every
 * container) into t->targets (the caller frees it). Returns 0, or -1 when they
 * cannot be read (denied on their own) and t holds nothing to free.
 */
int topology_template_targets(const cJSON *pod_spec, const cJSON *anns, const struct config *cfg,
                              struct topology *t);

/*
 * The frameworks a pod template's pods get: its annotation's list, else the
 * configured defaults and every framework whose resource (framework.h) a
 * target container requests (the defaults alone when the targets cannot be
 * read); 0 when the annotation is bad.
 */
unsigned topology_template_frameworks(const cJSON *pod_spec, const cJSON *anns,
                                      const struct config *cfg);

/*
 * The warning of a pod spec whose pods will not resolve the names distenv
 * writes (Kubernetes, "DNS for Services and Pods"): hostNetwork with dnsPolicy
 * ClusterFirst (the default) falls back to the node's DNS, and dnsPolicy
 * Default is the node's DNS. None takes the pod's own dnsConfig, which cannot
 * be judged: no warning. Writes the text (without "distenv: ") into out and
 * returns 1, or returns 0.
 */
int topology_dns_warning(const cJSON *pod_spec, char *out, size_t len);

/* The pod spec array a target lives in: "containers" or "initContainers". */
const char *topology_target_array(const struct topology_target *tg);

/* The container object of target tg in pod_spec, or NULL. */
const cJSON *topology_target_container(const cJSON *pod_spec, const struct topology_target *tg);

/*
 * Writes the hostname of rank r into out (as its controller names the pod:
 * "<sts>-<start+r>", "<job>-<r>", "<js>-<rjob>-<j>-<i>", "<lws>-<g>[-<r>]").
 * Returns its length, or -1 when r is out of range or it does not fit.
 */
int topology_hostname(const struct topology *t, long r, char *out, size_t outlen);

/*
 * The run of ranks from r whose host names are "<prefix><number>", the number
 * counting up by one from *first (the kind's host_run): the prefix in out, its
 * length in *plen, and how many ranks the run has (none past the world's end).
 * 0 when rank r's name must come from topology_hostname.
 */
long topology_host_run(const struct topology *t, long r, char *out, size_t outlen, size_t *plen,
                       long *first);

/*
 * A rank of t's world whose host name is not a DNS label (the pod's own rule,
 * at most 63 characters), or -1 when every one is: the one check of the
 * world's names, for a pod (topology.c) and a template (validate.c).
 */
long topology_bad_host(const struct topology *t);

/*
 * What is wrong with rank r's host name (topology_bad_host's answer) and the fix,
 * to follow "the hostname of rank R": "NAME, has a dot, ...". Writes into out.
 */
void topology_bad_host_why(const struct topology *t, long r, char *out, size_t outlen);

/* How many parts t's kind cuts its world into (struct topology_part); 0: none. */
int topology_parts(const struct topology *t);

/* Part k (0 <= k < topology_parts(t)) into *out. */
void topology_part(const struct topology *t, int k, struct topology_part *out);

/* The part rank r belongs to into *out: 1, or 0 when it belongs to none. */
int topology_part_of(const struct topology *t, long r, struct topology_part *out);

/*
 * The rank of the pod at position pos in the order its controller lists the
 * pods (a JobSet's replicated Jobs in spec order, then Job, then index): pos
 * itself, except where the kind puts rank 0 elsewhere (its rank0_position: a
 * JobSet's coordinator, since torch's TCPStore, JAX's coordination service
 * and XGBoost's tracker live on rank 0), which moves the pods before it one
 * rank up. topology_position is the inverse.
 */
long topology_rank_at(const struct topology *t, long pos);
long topology_position(const struct topology *t, long r);

#endif
