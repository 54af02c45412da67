/*
 * Environment generation. Values are computed from the topology alone; the
 * list owns every name and value string.
 */
#include "envgen.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static int env_add(struct env_list *l, const char *name, const char *value)
{
	struct env_var *v;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		v = realloc(l->vars, cap * sizeof(*v));
		if (v == NULL)
			return -1;
		l->vars = v;
		l->cap = cap;
	}
	v = &l->vars[l->n];
	v->name = strdup(name);
	v->value = strdup(value);
	v->merge = 0;
	if (v->name == NULL || v->value == NULL) {
		free(v->name);
		free(v->value);
		return -1;
	}
	l->n++;
	return 0;
}

static int env_addl(struct env_list *l, const char *name, long value)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", value);
	return env_add(l, name, buf);
}

int envgen_master_addr(const struct topology *t, char *out, size_t outlen)
{
	char host[320];

	if (topology_hostname(t, 0, host, sizeof(host)) < 0)
		return -1;
	return bounded_printf(out, outlen, "%s%s", host, t->domain);
}

/* What a framework's variables are made from, besides the topology. */
struct fw_input {
	const char *addr;     /* the rendezvous host */
	const char *endpoint; /* "<addr>:<port>" */
	long port;
};

/*
 * Appends "\"<host r><domain>:<port>\"" for the pods at positions [from, to),
 * comma-separated, to buf, in rank order: a JobSet's coordinator, rank 0, comes
 * first when it is among them. The one host-list writer: TF_CONFIG's lists and
 * any later framework that lists every rank. Returns 0 or -1 (out of memory, or
 * a host too long).
 */
static int host_list(const struct topology *t, long from, long to, struct strbuf *buf)
{
	char suffix[420], host[320];
	size_t sl;
	long c = t->coordinator, n, p;
	int hl, has_c = c >= from && c < to;

	if (bounded_printf(suffix, sizeof(suffix), "%s:%ld\"", t->domain, t->port) != 0)
		return -1;
	sl = strlen(suffix);
	for (n = 0; n < to - from; n++) {
		/* the n-th in rank order: the coordinator, then the others in their order */
		p = !has_c ? from + n : n == 0 ? c : from + n - 1 + (from + n - 1 >= c);
		if ((hl = topology_hostname(t, topology_rank_at(t, p), host, sizeof(host))) < 0)
			return -1;
		strbuf_append(buf, n > 0 ? ",\"" : "\"", n > 0 ? 2 : 1);
		strbuf_append(buf, host, (size_t)hl);
		strbuf_append(buf, suffix, sl);
	}
	return buf->oom ? -1 : 0;
}

/*
 * TF_CONFIG: {"cluster":{"worker":["h0:P",...]},"task":{"type":"worker","index":R}},
 * or, for a JobSet whose replicated Jobs are named after TensorFlow's task
 * types, one list per role and the pod's own role and index in it (its place
 * in the role's list, which is in rank order like the workers'). The
 * evaluator is a cluster of its own, as TensorFlow splits it
 * (distribute_coordinator.py, _split_cluster_for_evaluator): the training
 * roles' cluster leaves it out (a chief's ParameterServerStrategy connects to
 * every task it lists), and an evaluator's lists only the evaluators.
 */
static int add_tensorflow(const struct topology *t, const struct fw_input *in, struct env_list *out)
{
	const struct topology_rjob *own = t->tf_roles ? topology_rjob_of(t, t->rank) : NULL;
	struct strbuf buf;
	int k, n, eval, rc = -1;

	(void)in;
	strbuf_init(&buf);
	strbuf_puts(&buf, "{\"cluster\":{");
	if (own != NULL) {
		long pos = topology_position(t, t->rank), c = t->coordinator;
		long end = own->first + own->jobs * own->pods, index = pos - own->first;

		if (c >= own->first && c < end)
			index = pos == c ? 0 : pos < c ? index + 1 : index;
		eval = strcmp(own->name, "evaluator") == 0;
		for (k = 0, n = 0; k < t->n_rjobs; k++) {
			const struct topology_rjob *r = &t->rjobs[k];
			if ((strcmp(r->name, "evaluator") == 0) != eval)
				continue;
			strbuf_printf(&buf, "%s\"%s\":[", n++ ? "," : "", r->name);
			if (host_list(t, r->first, r->first + r->jobs * r->pods, &buf) != 0)
				goto out;
			strbuf_puts(&buf, "]");
		}
		strbuf_printf(&buf, "},\"task\":{\"type\":\"%s\",\"index\":%ld}}", own->name,
		              index);
	} else {
		strbuf_puts(&buf, "\"worker\":[");
		if (host_list(t, 0, t->world_size, &buf) != 0)
			goto out;
		strbuf_printf(&buf, "]},\"task\":{\"type\":\"worker\",\"index\":%ld}}", t->rank);
	}
	if (buf.oom)
		goto out;
	rc = env_add(out, "TF_CONFIG", buf.buf);
out:
	strbuf_free(&buf);
	return rc;
}

static int add_pytorch(const struct topology *t, const struct fw_input *in, struct env_list *out)
{
	char buf[64];

	if (env_add(out, "MASTER_ADDR", in->addr) || env_addl(out, "MASTER_PORT", in->port) ||
	    env_addl(out, "RANK", t->rank) || env_addl(out, "WORLD_SIZE", t->world_size) ||
	    env_add(out, "PET_MASTER_ADDR", in->addr) || env_addl(out, "PET_MASTER_PORT", in->port))
		return -1;
	if (t->elastic_min > 0) {
		snprintf(buf, sizeof(buf), "%ld:%ld", t->elastic_min, t->elastic_max);
		if (env_add(out, "PET_NNODES", buf))
			return -1;
	} else if (env_addl(out, "PET_NNODES", t->world_size)) {
		return -1;
	}
	if (env_addl(out, "PET_NODE_RANK", t->rank) || env_add(out, "PET_NPROC_PER_NODE", t->nproc))
		return -1;
	if (t->elastic_min > 0) {
		/*
		 * The endpoint's own pod hosts the c10d store: say so, so that torchrun
		 * never has to guess from host names (pytorch#73380).
		 */
		if (env_add(out, "PET_RDZV_BACKEND", "c10d") ||
		    env_add(out, "PET_RDZV_ENDPOINT", in->endpoint) ||
		    env_add(out, "PET_RDZV_ID", t->rdzv_id) ||
		    env_add(out, "PET_RDZV_CONF", t->rank == 0 ? "is_host=1" : "is_host=0"))
			return -1;
		if (t->max_restarts >= 0 && env_addl(out, "PET_MAX_RESTARTS", t->max_restarts))
			return -1;
	}
	return 0;
}

static int add_jax(const struct topology *t, const struct fw_input *in, struct env_list *out)
{
	if (env_add(out, "JAX_COORDINATOR_ADDRESS", in->endpoint) ||
	    env_addl(out, "JAX_NUM_PROCESSES", t->world_size) ||
	    env_addl(out, "JAX_PROCESS_ID", t->rank))
		return -1;
	return 0;
}

/*
 * The framework table, in the order variables are injected: each framework's
 * FW_* bit (its name is config_framework_name's) and what it adds for a rank.
 */
static const struct framework {
	unsigned bit;
	int (*add)(const struct topology *t, const struct fw_input *in, struct env_list *out);
} frameworks[] = {
    {FW_PYTORCH, add_pytorch},
    {FW_TENSORFLOW, add_tensorflow},
    {FW_JAX, add_jax},
};

int envgen_build(const struct topology *t, struct env_list *out)
{
	return envgen_build_master(t, NULL, 0, out);
}

int envgen_build_master(const struct topology *t, const char *master_addr, long master_port,
                        struct env_list *out)
{
	char addr[512], endpoint[544];
	struct fw_input in;
	size_t i;

	memset(out, 0, sizeof(*out));
	in.port = master_port > 0 ? master_port : t->port;
	if (master_addr != NULL) {
		if (bounded_printf(addr, sizeof(addr), "%s", master_addr) != 0)
			return -1;
	} else if (envgen_master_addr(t, addr, sizeof(addr)) != 0) {
		return -1;
	}
	if (bounded_printf(endpoint, sizeof(endpoint), "%s:%ld", addr, in.port) != 0)
		return -1;
	in.addr = addr;
	in.endpoint = endpoint;
	for (i = 0; i < sizeof(frameworks) / sizeof(frameworks[0]); i++) {
		if ((t->frameworks & frameworks[i].bit) && frameworks[i].add(t, &in, out) != 0) {
			env_list_free(out);
			return -1;
		}
	}
	return 0;
}

void env_list_free(struct env_list *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++) {
		free(l->vars[i].name);
		free(l->vars[i].value);
	}
	free(l->vars);
	memset(l, 0, sizeof(*l));
}
