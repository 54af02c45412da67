/*
 * TensorFlow: TF_CONFIG, every rank a worker, or the parts of a world (a
 * JobSet's replicated Jobs) as TensorFlow's roles with the evaluator a cluster of its own. Pure.
 */
#include "frameworks.h"

#include <stdio.h>
#include <string.h>

#include "env.h"
#include "topology.h"
#include "strbuf.h"

/*
 * 1 when t's world is in parts (a JobSet's replicated Jobs) each named after
 * a TensorFlow task type (chief, worker, ps, evaluator), so that TF_CONFIG
 * lists them as roles.
 */
static int tf_roles(const struct topology *t)
{
	static const char *const roles[] = {"chief", "worker", "ps", "evaluator"};
	struct topology_part part;
	size_t i;
	int k, named, n = topology_parts(t);

	for (k = 0; k < n; k++) {
		topology_part(t, k, &part);
		for (i = 0, named = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
			named |= strcmp(part.name, roles[i]) == 0;
		if (!named)
			return 0;
	}
	return n > 0;
}

/*
 * TF_CONFIG: {"cluster":{"worker":["h0:P",...]},"task":{"type":"worker","index":R}},
 * or, for a world whose parts (a JobSet's replicated Jobs) are named after
 * TensorFlow's task types, one list per role and the pod's own role and index
 * in it (its place in the role's list, which is in rank order like the
 * workers'). The evaluator is a cluster of its own, as TensorFlow splits it
 * (distribute_coordinator.py, _split_cluster_for_evaluator): the training
 * roles' cluster leaves it out (a chief's ParameterServerStrategy connects to
 * every task it lists), and an evaluator's lists only the evaluators.
 */
static int add_tensorflow(const struct topology *t, const struct fw_input *in, struct env_list *out)
{
	struct topology_part own, r;
	struct strbuf buf;
	int k, n, eval, rc = -1;

	(void)in;
	strbuf_init(&buf);
	strbuf_puts(&buf, "{\"cluster\":{");
	if (tf_roles(t) && topology_part_of(t, t->rank, &own)) {
		long pos = topology_position(t, t->rank), c = topology_position(t, 0);
		long end = own.first + own.units * own.pods, index = pos - own.first;

		if (c >= own.first && c < end)
			index = pos == c ? 0 : pos < c ? index + 1 : index;
		eval = strcmp(own.name, "evaluator") == 0;
		for (k = 0, n = 0; k < topology_parts(t); k++) {
			topology_part(t, k, &r);
			if ((strcmp(r.name, "evaluator") == 0) != eval)
				continue;
			strbuf_printf(&buf, "%s\"%s\":[", n++ ? "," : "", r.name);
			if (env_host_list(t, r.first, r.first + r.units * r.pods, &buf) != 0)
				goto out;
			strbuf_puts(&buf, "]");
		}
		strbuf_printf(&buf, "},\"task\":{\"type\":\"%s\",\"index\":%ld}}", own.name, index);
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
	struct topology_part part;
	int j, n = 0;

	if (!tf_roles(t)) {
		ranks[0] = t->world_size - 1;
		return max > 0;
	}
	for (j = 0; j < topology_parts(t) && n < max; j++) {
		topology_part(t, j, &part);
		ranks[n++] = topology_rank_at(t, part.first + part.units * part.pods - 1);
	}
	return n;
}

/*
 * A world in parts some of which are named after a TensorFlow role and some
 * not (replicated Jobs chief, workers, ps): tf_roles then makes every pod a
 * worker, the ps and the chief too, and ParameterServerStrategy finds no ps.
 * Refused when the pod asks for tensorflow by its annotation, or when a part
 * is named chief or ps (words only TensorFlow gives a replicated Job); a part
 * named evaluator beside others under the default frameworks is left alone (a
 * PyTorch job may well have one).
 */
static int refuse_tensorflow(const struct topology *t, const cJSON *anns, char *msg, size_t len)
{
	static const char *const roles[] = {"chief", "worker", "ps", "evaluator"};
	struct topology_part part;
	char role[64] = "", other[64] = "";
	int k, signal = (t->frameworks_asked & FW_TENSORFLOW) != 0, n = topology_parts(t);
	size_t i;

	(void)anns;
	for (k = 0; k < n; k++) {
		int named = 0;
		topology_part(t, k, &part);
		for (i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
			named |= strcmp(part.name, roles[i]) == 0;
		if (named && strcmp(part.name, "worker") != 0 && role[0] == '\0')
			snprintf(role, sizeof(role), "%s", part.name);
		if (!named && other[0] == '\0')
			snprintf(other, sizeof(other), "%s", part.name);
		signal |= strcmp(part.name, "chief") == 0 || strcmp(part.name, "ps") == 0;
	}
	if (role[0] == '\0' || other[0] == '\0' || !signal)
		return 0;
	snprintf(msg, len,
	         "tensorflow: replicated Job %s is named after a TensorFlow role and %s is "
	         "not, so TF_CONFIG would make every pod a worker, %s included: name every "
	         "replicated Job chief, worker, ps or evaluator, or list the frameworks "
	         "without tensorflow in distenv.dev/frameworks",
	         role, other, role);
	return 1;
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
    .refuse = refuse_tensorflow,
};
