/*
 * PyTorch: env:// (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE), the node rank
 * and count that Lightning, accelerate, Megatron/NeMo scripts, SGLang and vLLM
 * read (NODE_RANK, NNODES), and torchrun's PET_* flags, elastic rendezvous
 * included. Counts pods; a launcher derives the per-process values. A
 * one-process pod is the process: LOCAL_RANK=0 and LOCAL_WORLD_SIZE=1 complete
 * what DeepSpeed's init_distributed needs without a launcher; never where a
 * launcher must spawn (Lightning sees LOCAL_RANK and starts one process). Pure.
 */
#include "frameworks.h"

#include <stdio.h>
#include <string.h>

#include "env.h"
#include "topology.h"

static int add_pytorch(const struct topology *t, const struct fw_input *in, struct env_list *out)
{
	char buf[64];

	if (env_list_add(out, "MASTER_ADDR", in->addr) ||
	    env_list_addl(out, "MASTER_PORT", in->port) || env_list_addl(out, "RANK", t->rank) ||
	    env_list_addl(out, "WORLD_SIZE", t->world_size))
		return -1;
	/* Elastic: torchrun assigns node ranks; a fixed NODE_RANK would contradict it. */
	if (t->elastic_min == 0 && (env_list_addl(out, "NODE_RANK", t->rank) ||
	                            env_list_addl(out, "NNODES", t->world_size)))
		return -1;
	if (env_list_add(out, "PET_MASTER_ADDR", in->addr) ||
	    env_list_addl(out, "PET_MASTER_PORT", in->port))
		return -1;
	if (t->elastic_min > 0) {
		snprintf(buf, sizeof(buf), "%ld:%ld", t->elastic_min, t->elastic_max);
		if (env_list_add(out, "PET_NNODES", buf))
			return -1;
	} else if (env_list_addl(out, "PET_NNODES", t->world_size)) {
		return -1;
	}
	if (env_list_addl(out, "PET_NODE_RANK", t->rank) ||
	    env_list_add(out, "PET_NPROC_PER_NODE", t->nproc))
		return -1;
	if (t->elastic_min == 0 && t->one_process &&
	    (env_list_add(out, "LOCAL_RANK", "0") || env_list_add(out, "LOCAL_WORLD_SIZE", "1")))
		return -1;
	if (t->elastic_min > 0) {
		/*
		 * The endpoint's own pod hosts the c10d store: say so, so that torchrun
		 * never has to guess from host names (pytorch#73380).
		 */
		if (env_list_add(out, "PET_RDZV_BACKEND", "c10d") ||
		    env_list_add(out, "PET_RDZV_ENDPOINT", in->endpoint) ||
		    env_list_add(out, "PET_RDZV_ID", t->rdzv_id) ||
		    env_list_add(out, "PET_RDZV_CONF", t->rank == 0 ? "is_host=1" : "is_host=0"))
			return -1;
		if (t->max_restarts >= 0 && env_list_addl(out, "PET_MAX_RESTARTS", t->max_restarts))
			return -1;
	}
	return 0;
}

/*
 * A pod of an accelerator gpuResources does not list (habana.ai/gaudi) runs
 * one process (PET_NPROC_PER_NODE=1), using one of its devices: say so.
 */
static int warn_pytorch(const struct topology *t, char *out, size_t len)
{
	int n = (int)strlen(t->accel), pass, w;

	if (t->accel_n <= 1)
		return 0;
	/*
	 * Under 120 characters (framework.h) with the advice whole: when the name
	 * runs past, the second pass cuts it by as much, and by the "..." it adds.
	 */
	for (pass = 0; pass < 2; pass++) {
		w = snprintf(
		    out, len,
		    "distenv: %ld %.*s%s a pod, not in gpuResources: PET_NPROC_PER_NODE=1; "
		    "set distenv.dev/nproc-per-node",
		    t->accel_n, n, t->accel, pass ? "..." : "");
		if (w < 120)
			break;
		n -= w - 119 + 3;
	}
	return 1;
}

static const char *const from_addr[] = {"PET_MASTER_ADDR", "PET_RDZV_ENDPOINT", NULL};
static const char *const from_port[] = {"PET_MASTER_PORT", "PET_RDZV_ENDPOINT", NULL};

const struct framework fw_pytorch = {
    .name = "pytorch",
    .bit = FW_PYTORCH,
    .help = "MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, NODE_RANK, NNODES, torchrun's PET_* "
            "variables; LOCAL_RANK, LOCAL_WORLD_SIZE in a one-process pod",
    .from_addr = from_addr,
    .from_port = from_port,
    .add = add_pytorch,
    .warn = warn_pytorch,
    .by_default = 1,
};
