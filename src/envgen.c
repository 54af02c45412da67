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

	if (topology_hostname(t, 0, host, sizeof(host)) != 0)
		return -1;
	return bounded_printf(out, outlen, "%s%s", host, t->domain);
}

/* Writes v in decimal at out (room for 21 bytes); returns the length. */
static size_t put_long(char *out, long v)
{
	char tmp[24];
	unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		tmp[n++] = '-';
	for (i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

/*
 * TF_CONFIG: {"cluster":{"worker":["h0:P",...]},"task":{"type":"worker","index":R}}
 * Every host is "<workload>-<start+r><domain>:<port>" (topology_hostname plus
 * the domain): only the ordinal changes, so the list is written with memcpy
 * into one buffer sized up front, not with a printf per rank.
 */
static char *tf_config(const struct topology *t)
{
	static const char head[] = "{\"cluster\":{\"worker\":[";
	char host0[320], suffix[600], tail[96];
	size_t wl = strlen(t->workload), sl, tl, per, cap, len = 0;
	long r;
	char *buf;
	int n;

	/* The longest host must fit where topology_hostname would put it. */
	if (topology_hostname(t, t->world_size > 0 ? t->world_size - 1 : 0, host0, sizeof(host0)) !=
	    0)
		return NULL;
	n = snprintf(suffix, sizeof(suffix), "%s:%ld\"", t->domain, t->port);
	if (n < 0 || (size_t)n >= sizeof(suffix))
		return NULL;
	sl = (size_t)n;
	n = snprintf(tail, sizeof(tail), "]},\"task\":{\"type\":\"worker\",\"index\":%ld}}",
	             t->rank);
	if (n < 0 || (size_t)n >= sizeof(tail))
		return NULL;
	tl = (size_t)n;
	per = 2 + wl + 1 + 21 + sl; /* ',' '"' workload '-' ordinal suffix */
	if (t->world_size < 0 || (size_t)t->world_size > (SIZE_MAX - sizeof(head) - tl) / per)
		return NULL;
	cap = sizeof(head) + per * (size_t)t->world_size + tl + 1;
	buf = malloc(cap);
	if (buf == NULL)
		return NULL;
	memcpy(buf, head, sizeof(head) - 1);
	len = sizeof(head) - 1;
	for (r = 0; r < t->world_size; r++) {
		if (r)
			buf[len++] = ',';
		buf[len++] = '"';
		memcpy(buf + len, t->workload, wl);
		len += wl;
		buf[len++] = '-';
		len += put_long(buf + len, t->start + r);
		memcpy(buf + len, suffix, sl);
		len += sl;
	}
	memcpy(buf + len, tail, tl + 1);
	return buf;
}

int envgen_build(const struct topology *t, struct env_list *out)
{
	return envgen_build_master(t, NULL, 0, out);
}

int envgen_build_master(const struct topology *t, const char *master_addr, long master_port,
                        struct env_list *out)
{
	char addr[512], endpoint[544], buf[64], rdzv_id[330];
	char *tf = NULL;
	long port = master_port > 0 ? master_port : t->port;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (master_addr != NULL) {
		if (bounded_printf(addr, sizeof(addr), "%s", master_addr) != 0)
			goto out;
	} else if (envgen_master_addr(t, addr, sizeof(addr)) != 0) {
		goto out;
	}
	if (bounded_printf(endpoint, sizeof(endpoint), "%s:%ld", addr, port) != 0)
		goto out;

	if (t->frameworks & FW_PYTORCH) {
		if (env_add(out, "MASTER_ADDR", addr) || env_addl(out, "MASTER_PORT", port) ||
		    env_addl(out, "RANK", t->rank) || env_addl(out, "WORLD_SIZE", t->world_size) ||
		    env_add(out, "PET_MASTER_ADDR", addr) || env_addl(out, "PET_MASTER_PORT", port))
			goto out;
		if (t->elastic_min > 0) {
			snprintf(buf, sizeof(buf), "%ld:%ld", t->elastic_min, t->elastic_max);
			if (env_add(out, "PET_NNODES", buf))
				goto out;
		} else if (env_addl(out, "PET_NNODES", t->world_size)) {
			goto out;
		}
		if (env_addl(out, "PET_NODE_RANK", t->rank) ||
		    env_add(out, "PET_NPROC_PER_NODE", t->nproc))
			goto out;
		if (t->elastic_min > 0) {
			if (bounded_printf(rdzv_id, sizeof(rdzv_id), "%s-%s", t->ns, t->workload) !=
			        0 ||
			    env_add(out, "PET_RDZV_BACKEND", "c10d") ||
			    env_add(out, "PET_RDZV_ENDPOINT", endpoint) ||
			    env_add(out, "PET_RDZV_ID", rdzv_id))
				goto out;
			if (t->max_restarts >= 0 &&
			    env_addl(out, "PET_MAX_RESTARTS", t->max_restarts))
				goto out;
		}
	}
	if (t->frameworks & FW_TENSORFLOW) {
		tf = tf_config(t);
		if (tf == NULL || env_add(out, "TF_CONFIG", tf))
			goto out;
	}
	if (t->frameworks & FW_JAX) {
		if (env_add(out, "JAX_COORDINATOR_ADDRESS", endpoint) ||
		    env_addl(out, "JAX_NUM_PROCESSES", t->world_size) ||
		    env_addl(out, "JAX_PROCESS_ID", t->rank))
			goto out;
	}
	rc = 0;
out:
	free(tf);
	if (rc != 0)
		env_list_free(out);
	return rc;
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
