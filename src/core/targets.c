/*
 * A pod's target containers: which containers distenv writes into (the
 * annotation distenv.dev/containers, or all), each one's env names read once
 * (the env-name filter of topology.h), the resources they ask for (the
 * frameworks a resource adds, the GPUs behind PET_NPROC_PER_NODE), and the
 * same for a pod template at apply time. The targets array is malloc'd into
 * the topology (topology_free frees it); nothing else is kept.
 */
#include "targets.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotation.h"
#include "framework.h"
#include "util.h"
#include "json.h"

/* A denial of the targets step (no struct resolve there): as resolve_deny. */
static enum topology_status targets_deny(struct topology *t, char *err, size_t errlen,
                                         enum deny_reason why, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static enum topology_status targets_deny(struct topology *t, char *err, size_t errlen,
                                         enum deny_reason why, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err, errlen, "distenv: ");

	t->reason = why;
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < errlen)
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return TOPOLOGY_DENY;
}

/* Finds a container by name in an array; returns its index or -1. */
static int find_container(const cJSON *arr, const char *name, size_t n)
{
	const cJSON *c;
	int i = 0;

	cJSON_ArrayForEach(c, arr)
	{
		const char *cn = json_str(c, "name");
		if (cn != NULL && strlen(cn) == n && strncmp(cn, name, n) == 0)
			return i;
		i++;
	}
	return -1;
}

static int has_target(const struct topology *t, int init, int index)
{
	int i;

	for (i = 0; i < t->n_targets; i++)
		if (t->targets[i].init == init && t->targets[i].index == index)
			return 1;
	return 0;
}

/* Reads a resource quantity that is a whole number ("8" or 8); -1 otherwise. */
static long whole_quantity(const cJSON *q)
{
	long v;

	if (cJSON_IsString(q) && parse_long(q->valuestring, 0, 1 << 20, &v) == 0)
		return v;
	if (cJSON_IsNumber(q) && q->valuedouble >= 0 && q->valuedouble <= (1 << 20) &&
	    q->valuedouble == (double)(long)q->valuedouble)
		return (long)q->valuedouble;
	return -1;
}

/* 1 when a target container of t in pod_spec requests or limits resource to a count above 0. */
static int targets_request(const struct topology *t, const cJSON *pod_spec, const char *resource)
{
	int i;

	for (i = 0; i < t->n_targets; i++) {
		const cJSON *c = topology_target_container(pod_spec, &t->targets[i]);
		const cJSON *res = json_get(c, "resources");

		if (whole_quantity(json_get(json_get(res, "limits"), resource)) > 0 ||
		    whole_quantity(json_get(json_get(res, "requests"), resource)) > 0)
			return 1;
	}
	return 0;
}

/* The frameworks whose resource (framework.h) a target container of t requests. */
unsigned targets_resource_frameworks(const struct topology *t, const cJSON *pod_spec)
{
	unsigned m = 0;
	size_t i;

	for (i = 0; framework_at(i) != NULL; i++)
		if (framework_at(i)->resource != NULL &&
		    targets_request(t, pod_spec, framework_at(i)->resource))
			m |= framework_at(i)->bit;
	return m;
}

const char *topology_target_array(const struct topology_target *tg)
{
	return tg->init ? "initContainers" : "containers";
}

const cJSON *topology_target_container(const cJSON *pod_spec, const struct topology_target *tg)
{
	return cJSON_GetArrayItem(json_get(pod_spec, topology_target_array(tg)), tg->index);
}

static long max_gpu_limit(const struct topology *t, const cJSON *pod_spec, const struct config *cfg)
{
	long best = 0;
	int i, g;

	for (i = 0; i < t->n_targets; i++) {
		const cJSON *c = topology_target_container(pod_spec, &t->targets[i]);
		const cJSON *res = json_get(c, "resources");
		const cJSON *lim = json_get(res, "limits");

		for (g = 0; g < cfg->n_gpu_resources; g++) {
			long v = whole_quantity(json_get(lim, cfg->gpu_resources[g]));
			if (v > best)
				best = v;
		}
	}
	return best;
}

/*
 * For a pod without GPUs and without nproc-per-node: the extended resource of
 * the largest limit above 1 among the targets that gpuResources does not list
 * and no framework claims (google.com/tpu), into t->accel and t->accel_n
 * (an accelerator the pod runs one process for, which a launcher may read).
 */
static void other_accelerator(struct topology *t, const cJSON *pod_spec, const struct config *cfg)
{
	int i, g;
	size_t f;

	for (i = 0; i < t->n_targets; i++) {
		const cJSON *c = topology_target_container(pod_spec, &t->targets[i]), *q;

		cJSON_ArrayForEach(q, json_get(json_get(c, "resources"), "limits"))
		{
			long v = whole_quantity(q);
			int listed = 0;

			if (q->string == NULL || strchr(q->string, '/') == NULL ||
			    v <= t->accel_n || v <= 1)
				continue;
			for (g = 0; g < cfg->n_gpu_resources; g++)
				listed |= strcmp(q->string, cfg->gpu_resources[g]) == 0;
			for (f = 0; framework_at(f) != NULL; f++)
				listed |= framework_at(f)->resource != NULL &&
				          strcmp(q->string, framework_at(f)->resource) == 0;
			if (listed)
				continue;
			/* a name past 63 bytes (its prefix may have 253) is kept cut */
			snprintf(t->accel, sizeof(t->accel), "%s", q->string);
			t->accel_n = v;
		}
	}
}

/*
 * Writes PET_NPROC_PER_NODE into t->nproc: the annotation distenv.dev/nproc-per-node
 * (a number, or torchrun's auto, gpu, cpu), else the largest GPU limit of the
 * targets, else 1. Returns the processes the pod says it runs: the annotation's
 * number, or the GPU limit; 0 when that is not known (auto, gpu, cpu, or a pod
 * without GPUs and without the annotation, which may run several on its CPUs).
 */
long targets_nproc(struct topology *t, const cJSON *pod_spec, const cJSON *anns,
                   const struct config *cfg)
{
	const char *v = json_map_str(anns, ANN_NPROC);
	long n;

	t->gpus = max_gpu_limit(t, pod_spec, cfg);
	t->accel[0] = '\0';
	t->accel_n = 0;
	if (v == NULL && t->gpus == 0)
		other_accelerator(t, pod_spec, cfg);
	if (v != NULL) {
		if (parse_long(v, 1, 4096, &n) == 0) {
			fmt_printf(t->nproc, sizeof(t->nproc), "%ld", n);
			return n;
		}
		fmt_printf(t->nproc, sizeof(t->nproc), "%s", v); /* auto, gpu, cpu */
		return 0;
	}
	n = t->gpus;
	fmt_printf(t->nproc, sizeof(t->nproc), "%ld", n > 0 ? n : 1);
	return n;
}

static enum topology_status target_list(const cJSON *pod_spec, const cJSON *anns,
                                        const struct config *cfg, struct topology *t, char *err,
                                        size_t errlen)
{
	const cJSON *ctrs = json_get(pod_spec, "containers");
	const cJSON *inits = json_get(pod_spec, "initContainers");
	int nc = cJSON_IsArray(ctrs) ? cJSON_GetArraySize(ctrs) : 0;
	int ni = cJSON_IsArray(inits) ? cJSON_GetArraySize(inits) : 0;
	const char *list = json_map_str(anns, ANN_CONTAINERS);

	if (nc == 0)
		return targets_deny(t, err, errlen, DENY_OTHER, "the pod has no containers");
	if ((long)nc + ni > cfg->max_containers)
		return targets_deny(t, err, errlen, DENY_LIMIT,
		                    "the pod has %d containers, more than the limit of %ld",
		                    nc + ni, cfg->max_containers);
	t->targets = calloc((size_t)(nc + ni), sizeof(*t->targets));
	if (t->targets == NULL)
		return TOPOLOGY_NOMEM;

	if (list == NULL) {
		for (t->n_targets = 0; t->n_targets < nc; t->n_targets++)
			t->targets[t->n_targets].index = t->n_targets;
		return TOPOLOGY_OK;
	}
	for (const char *p = list;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		const char *q = p;
		int idx, init = 0;

		while (n > 0 && (*q == ' ' || *q == '\t'))
			q++, n--;
		while (n > 0 && (q[n - 1] == ' ' || q[n - 1] == '\t'))
			n--;
		if (n == 0)
			return targets_deny(t, err, errlen, DENY_ANNOTATION,
			                    "annotation %s: \"%.128s\" has an empty container name",
			                    ANN_CONTAINERS, list);
		idx = find_container(ctrs, q, n);
		if (idx < 0) {
			idx = find_container(inits, q, n);
			init = 1;
		}
		if (idx < 0)
			return targets_deny(
			    t, err, errlen, DENY_ANNOTATION,
			    "annotation %s: the pod has no container or init container named "
			    "\"%.*s\"",
			    ANN_CONTAINERS, (int)(n > 63 ? 63 : n), q);
		if (!has_target(t, init, idx)) {
			t->targets[t->n_targets].init = init;
			t->targets[t->n_targets].index = idx;
			t->n_targets++;
		}
		if (comma == NULL)
			break;
		p = comma + 1;
	}
	return TOPOLOGY_OK;
}

/* Reads target tg's env list once: its length and its names' pairs (struct topology_target). */
static void target_read_env(const cJSON *pod_spec, struct topology_target *tg)
{
	const cJSON *env = json_get(topology_target_container(pod_spec, tg), "env"), *e;

	tg->env_entries = 0;
	memset(tg->env_pairs, 0, sizeof(tg->env_pairs));
	if (env != NULL && !cJSON_IsArray(env))
		return; /* not a list: env_read stays 0 */
	cJSON_ArrayForEach(e, env)
	{
		const char *n = json_name(e);

		tg->env_entries++;
		if (n != NULL) {
			unsigned p = topology_env_pair(n);
			tg->env_pairs[p / 64] |= 1ULL << (p % 64);
		}
	}
	tg->env_read = 1;
}

/* The containers to inject into (annotation distenv.dev/containers, or all), each env read. */
enum topology_status targets_resolve(const cJSON *pod_spec, const cJSON *anns,
                                     const struct config *cfg, struct topology *t, char *err,
                                     size_t errlen)
{
	enum topology_status rc = target_list(pod_spec, anns, cfg, t, err, errlen);
	int i;

	for (i = 0; rc == TOPOLOGY_OK && i < t->n_targets; i++)
		target_read_env(pod_spec, &t->targets[i]);
	return rc;
}

int topology_template_targets(const cJSON *pod_spec, const cJSON *anns, const struct config *cfg,
                              struct topology *t)
{
	char err[256];
	enum deny_reason keep = t->reason;

	t->targets = NULL;
	t->n_targets = 0;
	if (targets_resolve(pod_spec, anns, cfg, t, err, sizeof(err)) == TOPOLOGY_OK) {
		t->reason = keep;
		return 0;
	}
	free(t->targets);
	t->targets = NULL;
	t->n_targets = 0;
	t->reason = keep;
	return -1;
}

int targets_frameworks_of(const struct topology *t, const cJSON *pod_spec, const char *fws,
                          const struct config *cfg, unsigned *m)
{
	if (fws != NULL && config_parse_frameworks(fws, m) == 0)
		return 1;
	*m = cfg->default_frameworks | targets_resource_frameworks(t, pod_spec);
	return fws != NULL ? -1 : 0;
}

unsigned topology_template_frameworks(const cJSON *pod_spec, const cJSON *anns,
                                      const struct config *cfg)
{
	struct topology t;
	char err[256];
	unsigned m;
	int asked;

	memset(&t, 0, sizeof(t));
	if (targets_resolve(pod_spec, anns, cfg, &t, err, sizeof(err)) != TOPOLOGY_OK)
		t.n_targets = 0; /* no resource is read from targets that cannot be read */
	asked = targets_frameworks_of(&t, pod_spec, json_map_str(anns, ANN_FRAMEWORKS), cfg, &m);
	free(t.targets);
	return asked < 0 ? 0 : m; /* a bad annotation is denied on its own */
}
