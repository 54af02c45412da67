/*
 * PaddlePaddle: what `python -m paddle.distributed.launch` reads to join a
 * collective job with no arguments but the script
 * (python/paddle/distributed/launch/context/args_envs.py: PADDLE_MASTER,
 * PADDLE_NNODES, PADDLE_RANK, PADDLE_JOB_ID). Its HTTP master
 * (launch/controllers/master.py, HTTPMaster.lazy_init) starts the job's
 * key-value store only on a node whose master host is 127.0.0.1 or the node's
 * own IP address: given rank 0's DNS name, no pod starts it and every pod
 * waits. So rank 0 gets 127.0.0.1:P (the store binds every address, and the
 * launcher swaps 127.0.0.1 for its own IP before it publishes the endpoint)
 * and the other ranks rank 0's host (Kubeflow's Paddle operator gives rank 0
 * its pod IP for the same reason). Pure.
 */
#include "frameworks.h"

#include <stdio.h>

#include "env.h"
#include "topology.h"

static int add_paddle(const struct topology *t, const struct fw_input *in, struct env_list *out)
{
	char local[32];

	snprintf(local, sizeof(local), "127.0.0.1:%ld", in->port);
	if (env_list_add(out, "PADDLE_MASTER",
	                 t->rank == 0 && in->own_addr ? local : in->endpoint) ||
	    env_list_addl(out, "PADDLE_NNODES", t->world_size) ||
	    env_list_addl(out, "PADDLE_RANK", t->rank) ||
	    env_list_add(out, "PADDLE_JOB_ID", t->rdzv_id))
		return -1;
	return 0;
}

static const char *const from_master[] = {"PADDLE_MASTER", NULL};

const struct framework fw_paddle = {
    .name = "paddle",
    .bit = FW_PADDLE,
    .help = "PADDLE_MASTER (127.0.0.1:port on rank 0), PADDLE_NNODES, PADDLE_RANK, "
            "PADDLE_JOB_ID",
    .from_addr = from_master,
    .from_port = from_master,
    .add = add_paddle,
};
