/*
 * The environment a rank gets, from its topology: the variables of each
 * framework of the table (frameworks/framework.c), in the table's order. The
 * list owns its strings; env_list_free releases them.
 */
#ifndef DISTENV_ENV_H
#define DISTENV_ENV_H

#include <stddef.h>
#include "topology.h"
#include "strbuf.h"

struct env_var {
	char *name;
	char *value;
	int merge;   /* 1: the value merges the container's own literal value into distenv's */
	unsigned fw; /* the bit of the framework that wrote it (0: none) */
};

struct env_list {
	struct env_var *vars;
	size_t n;
	size_t cap;
};

/*
 * Builds the variables for rank t->rank. Returns 0, or -1 when memory ran out
 * or a name did not fit (out is then empty). Caller frees with env_list_free.
 */
int env_build(const struct topology *t, struct env_list *out) __attribute__((warn_unused_result));

/*
 * env_build for a container that sets MASTER_ADDR and/or MASTER_PORT itself:
 * every variable that carries the rendezvous address (PET_MASTER_*,
 * PET_RDZV_ENDPOINT, JAX_COORDINATOR_ADDRESS) uses master_addr (NULL: the
 * topology's) and master_port (0: the topology's), so torchrun, env:// and JAX
 * agree. TF_CONFIG lists every rank's own host and port and is unchanged.
 */
int env_build_master(const struct topology *t, const char *master_addr, long master_port,
                     struct env_list *out) __attribute__((warn_unused_result));

/* The rank-0 address "<host 0><domain>" into out. Returns 0 or -1 if it does not fit. */
int env_master_addr(const struct topology *t, char *out, size_t outlen);

void env_list_free(struct env_list *l);

/* Appends NAME=value (copies both) / NAME=<decimal value>. Returns 0 or -1 (out of memory). */
int env_list_add(struct env_list *l, const char *name, const char *value);
int env_list_addl(struct env_list *l, const char *name, long value);
/*
 * env_list_add of a malloc'd value, which the list takes (freed on failure):
 * a W=1,024 TF_CONFIG is 35 KB.
 */
int env_list_add_own(struct env_list *l, const char *name, char *value);

/*
 * Appends "\"<host r><domain>:<port>\"" for the pods at positions [from, to),
 * comma-separated, to buf, in rank order: rank 0 (a JobSet's coordinator,
 * wherever its position) comes first when it is among them. The one host-list writer: TF_CONFIG's
 * lists and any framework that lists every rank. Returns 0 or -1 (out of memory, or a host too
 * long).
 */
int env_host_list(const struct topology *t, long from, long to, struct strbuf *buf);

/*
 * The hosts of the pods at positions [from, to) in position order (rank 0
 * not moved first), without quotes or ports, comma separated:
 * "<host a><domain>,<host b><domain>,...". Returns 0 or -1.
 */
int env_host_names(const struct topology *t, long from, long to, struct strbuf *buf);

#endif
