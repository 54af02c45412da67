/*
 * A container's own values of the variables distenv gives a pod: what its
 * process will really see (a container's own entry wins over distenv's, which
 * is then not added), and whether that contradicts the world. Pure: values in,
 * a verdict and a message out; nothing is kept.
 */
#ifndef DISTENV_OWNENV_H
#define DISTENV_OWNENV_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "topology.h"

/* The longest own value ownenv_value reads back (a fieldRef's label or annotation). */
#define OWNENV_VALUE_MAX 4096

/*
 * The entry of container ctr's env list named name that its process sees: the
 * last one of that name, *index its place in the list (0 when ctr has none).
 * A name listed twice is allowed (the API server only warns, "hides previous
 * definition", pkg/api/pod/warnings.go), and the kubelet builds the
 * environment as a map filled in list order, so the last entry wins
 * (pkg/kubelet/kubelet_pods.go makeEnvironmentVariables, Kubernetes v1.36.3).
 * NULL when ctr has no entry of that name.
 */
const cJSON *ownenv_entry(const cJSON *ctr, const char *name, int *index);

/*
 * 1 when container ctr's entry name (the one its process sees, ownenv_entry)
 * reads the pod's label or annotation key with a fieldRef.
 */
int ownenv_from_key(const cJSON *ctr, const char *name, const char *key);

/*
 * The container ctr's env entry named name that its process sees (ownenv_entry:
 * the last of that name), as its process will see it: a literal value, or a valueFrom.fieldRef of
 * the pod's metadata.name, metadata.namespace, metadata.labels['k'] or metadata.annotations['k'],
 * read from meta (the pod's metadata; NULL for a pod template, whose fields
 * the controller fills in later). Returns 1 with the value in *value
 * (pointing into ctr or meta), 0 when ctr has no entry of that name, -1 when
 * the value cannot be known at admission (another valueFrom, a $(reference),
 * a field the pod does not carry); *value is then NULL. *how says where the
 * value came from ("", or "from metadata.annotations['...']"), into a buffer
 * of howlen bytes.
 */
int ownenv_value(const cJSON *ctr, const cJSON *meta, const char *name, const char **value,
                 char *how, size_t howlen);

enum ownenv_verdict {
	OWNENV_AGREES = 0, /* the same value, or one that names the same pod */
	OWNENV_WARN = 1,   /* differs: the job runs with it; msg says what it will do */
	OWNENV_DENY = 2,   /* certainly wrong: msg says why and what to do */
};

/*
 * Judges container cname's own value own of variable name against world,
 * distenv's value for the pod (t: its topology, rank included). ranks: for a
 * pod, 0; for a pod template at apply time, how many ranks its pods take
 * (then a per-rank variable set to one literal for two or more ranks is
 * certainly wrong, whatever world says). Certainly wrong: a per-rank variable
 * (RANK, NODE_RANK, PET_NODE_RANK, JAX_PROCESS_ID, DMLC_TASK_ID, PADDLE_RANK,
 * TPU_WORKER_ID, MEGASCALE_SLICE_ID) that is not the pod's; TF_CONFIG that is
 * not the pod's in a world of two or more; a MASTER_ADDR or PET_MASTER_ADDR
 * that names a pod under the world's own Service other than rank 0's, or
 * loopback in a world of two or more. Every other difference is warned with
 * what the launchers do with it (docs/environment.md's table). Writes "distenv: ..."
 * into msg (under 120 characters for a warning) unless OWNENV_AGREES.
 */
enum ownenv_verdict ownenv_judge(const struct topology *t, const char *cname, const char *name,
                                 const char *own, const char *how, const char *world, long ranks,
                                 char *msg, size_t len);

/*
 * The warning for a pod's answer where ownenv_judge said OWNENV_DENY: the
 * pod is admitted with the container's own value, which wins (README "A
 * container's own value"); what is certainly wrong is refused at apply time
 * (/validate, render), and said here, under 120 characters, with both values
 * when they fit. Writes into msg of len bytes.
 */
void ownenv_wrong_warning(const char *cname, const char *name, const char *own, const char *how,
                          const char *world, char *msg, size_t len);

/*
 * 1 when container ctr's own PET_RDZV_CONF (its last entry, ownenv_entry) is
 * read at run time (valueFrom, or a value with a $(reference)) and its text
 * does not say is_host: distenv cannot merge is_host into it, so torchrun
 * guesses which pod hosts the c10d store from host names (NOTES: pytorch#73380)
 * and the job may wait for a store no pod hosts. Then writes the warning,
 * "distenv: container C: ...", under 120 characters for a short name, into msg.
 */
int ownenv_rdzv_conf_unmerged(const cJSON *ctr, char *msg, size_t len);

/* 1 when name is a variable that differs from rank to rank (the list above). */
int ownenv_per_rank(const char *name);

#endif
