/*
 * XGBoost: the DMLC_* variables of its Rabit tracker, the names Kubeflow
 * Trainer's XGBoost runtime sets. XGBoost 1.7's Rabit reads DMLC_TRACKER_URI,
 * DMLC_TRACKER_PORT and DMLC_TASK_ID itself (rabit/src/allreduce_base.cc);
 * from 2.0 user code passes them to CommunicatorContext, and rank 0 runs
 * RabitTracker(n_workers=DMLC_NUM_WORKER, port=DMLC_TRACKER_PORT). One worker a
 * pod: DMLC_NUM_WORKER counts pods, as the processes really run (a tracker
 * told of more workers than connect waits forever). Pure.
 */
#include "frameworks.h"

#include <stdio.h>

#include "env.h"
#include "topology.h"

static int add_xgboost(const struct topology *t, const struct fw_input *in, struct env_list *out)
{
	if (env_list_add(out, "DMLC_TRACKER_URI", in->addr) ||
	    env_list_addl(out, "DMLC_TRACKER_PORT", in->port) ||
	    env_list_addl(out, "DMLC_TASK_ID", t->rank) ||
	    env_list_addl(out, "DMLC_NUM_WORKER", t->world_size))
		return -1;
	return 0;
}

/* DMLC_NUM_WORKER counts one worker a pod, not the processes of a pod that runs several. */
static int warn_xgboost(const struct topology *t, char *out, size_t len)
{
	if (t->processes <= 1)
		return 0;
	snprintf(out, len,
	         "distenv: DMLC_NUM_WORKER counts 1 XGBoost worker a pod, not its %ld processes",
	         t->processes);
	return 1;
}

static const char *const from_addr[] = {"DMLC_TRACKER_URI", NULL};
static const char *const from_port[] = {"DMLC_TRACKER_PORT", NULL};

const struct framework fw_xgboost = {
    .name = "xgboost",
    .bit = FW_XGBOOST,
    .help = "DMLC_TRACKER_URI, DMLC_TRACKER_PORT, DMLC_TASK_ID, DMLC_NUM_WORKER",
    .from_addr = from_addr,
    .from_port = from_port,
    .add = add_xgboost,
    .warn = warn_xgboost,
};
