/*
 * JAX: jax.distributed's coordinator address, process count and id. Pure.
 */
#include "frameworks.h"

#include <stdio.h>
#include <string.h>

#include "env.h"
#include "topology.h"

static int add_jax(const struct topology *t, const struct fw_input *in, struct env_list *out)
{
	if (env_list_add(out, "JAX_COORDINATOR_ADDRESS", in->endpoint) ||
	    env_list_addl(out, "JAX_NUM_PROCESSES", t->world_size) ||
	    env_list_addl(out, "JAX_PROCESS_ID", t->rank))
		return -1;
	return 0;
}

static const char *const from_master[] = {"JAX_COORDINATOR_ADDRESS", NULL};

const struct framework fw_jax = {
    .name = "jax",
    .bit = FW_JAX,
    .help = "JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES, JAX_PROCESS_ID",
    .from_addr = from_master,
    .from_port = from_master,
    .add = add_jax,
};
