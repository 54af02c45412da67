/*
 * TensorFlow: TF_CONFIG, every rank a worker, or a JobSet's replicated Jobs
 * as TensorFlow's roles with the evaluator a cluster of its own. Pure.
 */
#include "frameworks.h"

#include <stdio.h>
#include <string.h>

#include "env.h"
#include "topology.h"
#include "strbuf.h"

/*
 * 1 when t is a JobSet whose every replicated Job is named after a TensorFlow
 * task type (chief, worker, ps, evaluator), so that TF_CONFIG lists them as roles.
 */
static int tf_roles(const struct topology *t)
{
	static const char *const roles[] = {"chief", "worker", "ps", "evaluator"};
	size_t i;
	int k, named;

	for (k = 0; k < t->n_rjobs; k++) {
		for (i = 0, named = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
			named |= strcmp(t->rjobs[k].name, roles[i]) == 0;
		if (!named)
			return 0;
	}
	return t->n_rjobs > 0;
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
	const struct topology_rjob *own = tf_roles(t) ? topology_rjob_of(t, t->rank) : NULL;
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
			if (env_host_list(t, r->first, r->first + r->jobs * r->pods, &buf) != 0)
				goto out;
			strbuf_puts(&buf, "]");
		}
		strbuf_printf(&buf, "},\"task\":{\"type\":\"%s\",\"index\":%ld}}", own->name,
		              index);
	} else {
		strbuf_puts(&buf, "\"worker\":[");
		if (env_host_list(t, 0, t->world_size, &buf) != 0)
			goto out;
		strbuf_printf(&buf, "]},\"task\":{\"type\":\"worker\",\"index\":%ld}}", t->rank);
	}
	if (buf.oom)
		goto out;
	rc = env_list_add_own(out, "TF_CONFIG", strbuf_take(&buf));
out:
	strbuf_free(&buf);
	return rc;
}

/*
 * The largest TF_CONFIG: the last rank's, or, with TensorFlow roles (each pod
 * lists only its own partition: the training roles or the evaluators), each
 * role's last pod's.
 */
static int widest_tensorflow(const struct topology *t, long *ranks, int max)
{
	int j, n = 0;

	if (!tf_roles(t)) {
		ranks[0] = t->world_size - 1;
		return max > 0;
	}
	for (j = 0; j < t->n_rjobs && n < max; j++)
		ranks[n++] = topology_rank_at(t, t->rjobs[j].first +
		                                     t->rjobs[j].jobs * t->rjobs[j].pods - 1);
	return n;
}

/* TF_CONFIG lists every rank's own host and port: nothing follows MASTER_ADDR. */
static const char *const none[] = {NULL};

const struct framework fw_tensorflow = {
    .name = "tensorflow",
    .bit = FW_TENSORFLOW,
    .help = "TF_CONFIG",
    .from_addr = none,
    .from_port = none,
    .add = add_tensorflow,
    .by_default = 1,
    .grows = "TF_CONFIG",
    .widest = widest_tensorflow,
};
