/*
 * A container's own values of distenv's variables against the world's. What
 * each launcher does with one (docs/environment.md's table "A container's own value"):
 * torchrun sets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK,
 * MASTER_ADDR and MASTER_PORT for the processes it starts (pytorch
 * torch/distributed/elastic/agent/server/local_elastic_agent.py,
 * _start_workers) and reads only PET_* itself (argparse_util.py, env);
 * init_process_group("env://") reads RANK, WORLD_SIZE, MASTER_ADDR and
 * MASTER_PORT as they are; Lightning's LightningEnvironment takes its node
 * rank from NODE_RANK (lightning/fabric/plugins/environments/lightning.py);
 * TensorFlow reads TF_CONFIG as it is. Nothing is kept.
 */
#include "ownenv.h"

#include <stdio.h>
#include <string.h>

#include "kind.h"
#include "util.h"
#include "json.h"

/* The variables that differ from rank to rank: one value for two ranks is wrong. */
static const char *const per_rank[] = {
    "RANK",           "NODE_RANK",          "PET_NODE_RANK",
    "JAX_PROCESS_ID", "DMLC_TASK_ID",       "PADDLE_RANK",
    "TPU_WORKER_ID",  "MEGASCALE_SLICE_ID", NULL,
};

/* What the job does with a container's own value of a variable (a warning's end). */
static const struct {
	const char *name, *effect;
} effects[] = {
    {"WORLD_SIZE", "env:// waits for that many; torchrun sets its own"},
    {"NNODES", "a launcher given --nnodes $NNODES waits for that many pods"},
    {"PET_NNODES", "torchrun waits for that many nodes"},
    {"PET_NPROC_PER_NODE", "torchrun starts that many processes a pod"},
    {"LOCAL_RANK", "a process without a launcher uses it"},
    {"LOCAL_WORLD_SIZE", "a process without a launcher uses it"},
    {"JAX_NUM_PROCESSES", "jax.distributed waits for that many"},
    {"DMLC_NUM_WORKER", "XGBoost's tracker waits for that many"},
    {"PADDLE_NNODES", "Paddle's launcher waits for that many nodes"},
    {"MEGASCALE_NUM_SLICES", "JAX waits for that many slices"},
    {"TF_CONFIG", "TensorFlow uses its cluster and task"},
    {NULL, NULL},
};

int ownenv_per_rank(const char *name)
{
	size_t i;

	for (i = 0; per_rank[i] != NULL; i++)
		if (strcmp(per_rank[i], name) == 0)
			return 1;
	return 0;
}

/* "metadata.labels['k']" -> k of map in meta; NULL when path is not of that form. */
/* The KEY of a fieldRef path prefix + "KEY']" into key, or NULL when path is not that. */
static const char *field_key(const char *path, const char *prefix, char *key, size_t keylen)
{
	size_t n = strlen(prefix), len = strlen(path);

	if (strncmp(path, prefix, n) != 0 || len < n + 3 || path[len - 1] != ']' ||
	    path[len - 2] != '\'' || len - n - 2 >= keylen)
		return NULL;
	memcpy(key, path + n, len - n - 2);
	key[len - n - 2] = '\0';
	return key;
}

static const char *field_map(const cJSON *meta, const char *path, const char *prefix,
                             const char *map)
{
	char key[320];

	if (field_key(path, prefix, key, sizeof(key)) == NULL)
		return NULL;
	return json_map_str(json_get(meta, map), key);
}

int ownenv_from_key(const cJSON *ctr, const char *name, const char *key)
{
	int index;
	const cJSON *e = ownenv_entry(ctr, name, &index);
	const char *path = json_str(json_get(json_get(e, "valueFrom"), "fieldRef"), "fieldPath");
	char got[320];

	return path != NULL &&
	       ((field_key(path, "metadata.labels['", got, sizeof(got)) != NULL &&
	         strcmp(got, key) == 0) ||
	        (field_key(path, "metadata.annotations['", got, sizeof(got)) != NULL &&
	         strcmp(got, key) == 0));
}

const cJSON *ownenv_entry(const cJSON *ctr, const char *name, int *index)
{
	const cJSON *e, *last = NULL;
	int i = 0;

	*index = 0;
	cJSON_ArrayForEach(e, json_get(ctr, "env"))
	{
		const char *nm = json_name(e);

		if (nm != NULL && strcmp(nm, name) == 0) {
			last = e;
			*index = i;
		}
		i++;
	}
	return last;
}

int ownenv_value(const cJSON *ctr, const cJSON *meta, const char *name, const char **value,
                 char *how, size_t howlen)
{
	int index;
	const cJSON *e = ownenv_entry(ctr, name, &index), *from;
	const char *v, *path;

	*value = NULL;
	how[0] = '\0';
	if (e == NULL)
		return 0;
	from = json_get(e, "valueFrom");
	if (from == NULL) {
		v = json_str(e, "value");
		if (v != NULL && strstr(v, "$(") != NULL)
			return -1; /* expanded by the kubelet from what comes before it */
		*value = v != NULL ? v : "";
		return 1;
	}
	path = json_str(json_get(from, "fieldRef"), "fieldPath");
	if (path == NULL || meta == NULL)
		return -1;
	if (strcmp(path, "metadata.name") == 0)
		v = json_str(meta, "name");
	else if (strcmp(path, "metadata.namespace") == 0)
		v = json_str(meta, "namespace");
	else if ((v = field_map(meta, path, "metadata.labels['", "labels")) == NULL)
		v = field_map(meta, path, "metadata.annotations['", "annotations");
	if (v == NULL || strlen(v) > OWNENV_VALUE_MAX)
		return -1;
	snprintf(how, howlen, " (from %.200s)", path);
	*value = v;
	return 1;
}

static const char *effect_of(const char *name)
{
	size_t i;

	for (i = 0; effects[i].name != NULL; i++)
		if (strcmp(effects[i].name, name) == 0)
			return effects[i].effect;
	return NULL;
}

/* 1 when addr is a loopback address or name. */
static int loopback(const char *addr)
{
	return strcmp(addr, "localhost") == 0 || strncmp(addr, "127.", 4) == 0 ||
	       strcmp(addr, "::1") == 0 || strcmp(addr, "[::1]") == 0;
}

/*
 * Where own, an address, stands against the world t: 0 it names rank 0's pod
 * (in any of the forms the pod's DNS search path resolves), 1 it names another
 * pod under the world's own Service (*host: its first label), 2 cannot be told
 * (a Service, an IP, a name elsewhere).
 */
static int addr_place(const struct topology *t, const char *own, char *host, size_t hostlen)
{
	char rank0[128], rest[512];
	const char *dot = strchr(own, '.');
	size_t hl;

	if (topology_hostname(t, 0, rank0, sizeof(rank0)) < 0 || dot == NULL)
		return 2;
	hl = (size_t)(dot - own);
	if (hl + 1 > hostlen)
		return 2;
	memcpy(host, own, hl);
	host[hl] = '\0';
	/* <host>.<service>[.<ns>[.svc[.<domain>]]], a trailing dot allowed */
	snprintf(rest, sizeof(rest), "%s", dot + 1);
	if (rest[0] != '\0' && rest[strlen(rest) - 1] == '.')
		rest[strlen(rest) - 1] = '\0';
	{
		char full[512];
		size_t n;
		/* t->domain is ".<service>.<ns>.svc.<domain>": each shorter form is a prefix */
		snprintf(full, sizeof(full), "%s.", t->domain + 1);
		n = strlen(rest);
		if (n == 0 || strncmp(full, rest, n) != 0 || full[n] != '.')
			return 2;
		if (strncmp(rest, t->service, strlen(t->service)) != 0)
			return 2;
	}
	return strcmp(host, rank0) == 0 ? 0 : 1;
}

/*
 * Writes the warning "distenv: container C: NAME=own, not distenv's W: effect"
 * under 120 characters; when the values do not fit whole, it names the
 * variable alone (render prints both values, whole): a value is never cut.
 */
static void warn_text(char *msg, size_t len, const char *cname, const char *name, const char *own,
                      const char *how, const char *world, const char *effect)
{
	const char *cut = strlen(cname) > 20 ? "..." : ""; /* the short forms' name: 20 at most */
	int n = snprintf(msg, len, "distenv: container %s: %s=%s%s, not distenv's %s: %s", cname,
	                 name, own, how, world, effect);

	if (n >= 0 && n < 120 && (size_t)n < len)
		return;
	n = snprintf(msg, len, "distenv: container %s keeps its own %s (render shows both): %s",
	             cname, name, effect);
	if (n >= 0 && n < 120 && (size_t)n < len)
		return;
	n = snprintf(msg, len,
	             "distenv: container %.20s%s keeps its own %s (render shows both): %s", cname,
	             cut, name, effect);
	if (n >= 0 && n < 120 && (size_t)n < len)
		return;
	/* the effect is never cut either: render prints both values and it whole */
	n = snprintf(msg, len, "distenv: container %.20s%s keeps its own %s: %s", cname, cut, name,
	             effect);
	if (n >= 0 && n < 120 && (size_t)n < len)
		return;
	snprintf(msg, len, "distenv: container %.20s%s keeps its own %.40s (render shows both)",
	         cname, cut, name);
}

enum ownenv_verdict ownenv_judge(const struct topology *t, const char *cname, const char *name,
                                 const char *own, const char *how, const char *world, long ranks,
                                 char *msg, size_t len)
{
	const char *effect;
	char host[128];

	if (cname == NULL)
		cname = "?";
	if (ownenv_per_rank(name)) {
		if (ranks >= 2) {
			snprintf(
			    msg, len,
			    "distenv: container %.63s sets %s=%.64s for each of its %ld ranks, so "
			    "they would all claim one rank: remove %s from its env (distenv "
			    "gives each pod its own)",
			    cname, name, own, ranks, name);
			return OWNENV_DENY;
		}
		if (ranks == 1 || strcmp(own, world) == 0)
			return OWNENV_AGREES; /* one pod: judged when it is made */
		snprintf(msg, len,
		         "distenv: container %.63s sets %s=%.64s%s, but this pod is rank %ld of "
		         "%s %s/%s (world size %ld), so two pods would claim one rank: remove %s "
		         "from its env (distenv gives each pod its own)",
		         cname, name, own, how, t->rank, kind_name(t->kind), t->ns, t->workload,
		         t->world_size, name);
		return OWNENV_DENY;
	}
	if (strcmp(name, "MASTER_ADDR") == 0 || strcmp(name, "PET_MASTER_ADDR") == 0) {
		int place;

		if (strcmp(own, world) == 0)
			return OWNENV_AGREES;
		if (loopback(own) && t->world_size >= 2) {
			snprintf(
			    msg, len,
			    "distenv: container %.63s sets %s=%.64s, which is each pod itself: "
			    "in a world of %ld the other ranks never reach rank 0; remove it "
			    "(distenv gives %s)",
			    cname, name, own, t->world_size, world);
			return OWNENV_DENY;
		}
		place = addr_place(t, own, host, sizeof(host));
		if (place == 0)
			return OWNENV_AGREES; /* rank 0's pod, spelled as the search path allows */
		if (place == 1) {
			snprintf(
			    msg, len,
			    "distenv: container %.63s sets %s=%.253s, which is not rank 0's pod "
			    "of %s %s/%s (%s names no rank or another one, and rank 0 hosts "
			    "the rendezvous): remove it (distenv gives %s)",
			    cname, name, own, kind_name(t->kind), t->ns, t->workload, host, world);
			return OWNENV_DENY;
		}
		if (snprintf(msg, len,
		             "distenv: container %s: %s=%s%s is not a name of rank 0's pod: every "
		             "rank meets there; check it",
		             cname, name, own, how) >= 120)
			snprintf(
			    msg, len,
			    /* short, so that a template's name fits before it (warn_named) */
			    "distenv: container %.20s: %s is not rank 0's pod (render shows it): "
			    "check it",
			    cname, name);
		return OWNENV_WARN;
	}
	if (strcmp(name, "TF_CONFIG") == 0 && t->world_size >= 2 &&
	    (ranks >= 2 || strcmp(own, world) != 0)) {
		snprintf(msg, len,
		         "distenv: container %.63s sets TF_CONFIG itself: one value for the %ld "
		         "ranks of %s %s/%s gives them all one task; remove it (distenv gives "
		         "each pod its own)",
		         cname, t->world_size, kind_name(t->kind), t->ns, t->workload);
		return OWNENV_DENY;
	}
	if (strcmp(own, world) == 0)
		return OWNENV_AGREES;
	effect = effect_of(name);
	warn_text(msg, len, cname, name, own, how, world,
	          effect != NULL ? effect : "its own value is used, not distenv's");
	return OWNENV_WARN;
}

void ownenv_wrong_warning(const char *cname, const char *name, const char *own, const char *how,
                          const char *world, char *msg, size_t len)
{
	const char *effect = "not this pod's task; remove it";

	if (ownenv_per_rank(name))
		effect = "another pod has that rank; remove it";
	else if (strcmp(name, "MASTER_ADDR") == 0 || strcmp(name, "PET_MASTER_ADDR") == 0)
		effect = "not rank 0's pod; remove it";
	warn_text(msg, len, cname != NULL ? cname : "?", name, own, how, world, effect);
}

int ownenv_rdzv_conf_unmerged(const cJSON *ctr, char *msg, size_t len)
{
	int index;
	const cJSON *e = ownenv_entry(ctr, "PET_RDZV_CONF", &index);
	const char *v = json_str(e, "value"), *cname = json_str(ctr, "name");

	if (e == NULL ||
	    (!cJSON_HasObjectItem(e, "valueFrom") && (v == NULL || strstr(v, "$(") == NULL)))
		return 0; /* absent, or a literal: merged (plan_rdzv_conf) */
	if (v != NULL && strstr(v, "is_host") != NULL)
		return 0; /* it says is_host itself: its own choice */
	snprintf(msg, len,
	         "distenv: container %.40s: PET_RDZV_CONF from a reference gets no is_host, so "
	         "torchrun guesses its host: use a literal",
	         cname != NULL ? cname : "?");
	return 1;
}
