/*
 * Cloud TPU: what JAX's cluster detection reads on GKE (JAX 0.7.2,
 * jax/_src/clusters/cloud_tpu_cluster.py, GkeTpuCluster and BaseTpuCluster):
 * TPU_WORKER_ID (the pod's index in its slice) and TPU_WORKER_HOSTNAMES (the
 * slice's hosts in worker order, comma separated), and the MEGASCALE_* values
 * of a multislice job. JAX's process id is TPU_WORKER_ID + MEGASCALE_SLICE_ID
 * x hosts per slice and its process count hosts per slice x
 * MEGASCALE_NUM_SLICES, so a slice is one Job of a JobSet (every Job of one
 * size, slices in spec order), the whole world for the other kinds, and the
 * ids equal RANK only when rank 0 is the first pod.
 *
 * JAX reads every MEGASCALE_* value the environment lacks from the GCE
 * metadata server (get_tpu_env_value): a single slice gets
 * MEGASCALE_NUM_SLICES=1, MEGASCALE_SLICE_ID=0 and
 * MEGASCALE_COORDINATOR_ADDRESS (rank 0's host, the one JAX would take from
 * the host list), so that no rank's world depends on its node's metadata;
 * MEGASCALE_PORT only where there are slices to connect. LeaderWorkerSet's own
 * TPU code (pkg/utils/accelerators/tpu.go) writes the same two TPU_* names,
 * with hosts "<pod>.<subdomain>"; distenv writes them as qualified as
 * MASTER_ADDR. Pure.
 */
#include "frameworks.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "env.h"
#include "topology.h"
#include "strbuf.h"
#include "json.h"

/* The megascale (DCN) port Ray's TPU utilities and the kuberay TPU webhook use. */
#define TPU_MEGASCALE_PORT 8081

/* LeaderWorkerSet's annotations on a group's pods (pkg/utils/accelerators/tpu.go). */
#define LWS_LEADER_REQUESTS_TPUS "leaderworkerset.sigs.k8s.io/leader-requests-tpus"
#define LWS_SUBGROUP_SIZE        "leaderworkerset.sigs.k8s.io/subgroup-size"

/* A slice: the pods at positions [first, first + hosts), slice id of n. */
struct slice {
	long first, hosts, id, n;
};

/* The slice of the pod at position pos: one unit of a part (a Job of a JobSet), else the world. */
static void slice_at(const struct topology *t, long pos, struct slice *s)
{
	struct topology_part r;
	long before = 0, total = 0;
	int k, n = topology_parts(t);

	s->first = 0;
	s->hosts = t->world_size;
	s->id = 0;
	s->n = 1;
	for (k = 0; k < n; k++) {
		topology_part(t, k, &r);
		total += r.units;
	}
	for (k = 0; k < n; k++) {
		topology_part(t, k, &r);
		if (pos >= r.first && pos < r.first + r.units * r.pods) {
			s->first = r.first + (pos - r.first) / r.pods * r.pods;
			s->hosts = r.pods;
			s->id = before + (pos - r.first) / r.pods;
			s->n = total;
			return;
		}
		before += r.units;
	}
}

static int add_tpu(const struct topology *t, const struct fw_input *in, struct env_list *out)
{
	struct slice s;
	struct strbuf buf;
	char coord[512];
	long pos = topology_position(t, t->rank);
	int rc = -1;

	(void)in; /* the hosts are every rank's own; nothing follows MASTER_ADDR */
	slice_at(t, pos, &s);
	if (env_master_addr(t, coord, sizeof(coord)) != 0)
		return -1;
	strbuf_init(&buf);
	if (env_host_names(t, s.first, s.first + s.hosts, &buf) != 0)
		goto out;
	if (env_list_addl(out, "TPU_WORKER_ID", pos - s.first) ||
	    env_list_add(out, "TPU_WORKER_HOSTNAMES", buf.buf) ||
	    env_list_add(out, "MEGASCALE_COORDINATOR_ADDRESS", coord) ||
	    env_list_addl(out, "MEGASCALE_NUM_SLICES", s.n) ||
	    env_list_addl(out, "MEGASCALE_SLICE_ID", s.id) ||
	    (s.n > 1 && env_list_addl(out, "MEGASCALE_PORT", TPU_MEGASCALE_PORT)))
		goto out;
	rc = 0;
out:
	strbuf_free(&buf);
	return rc;
}

/* The longest host list: the last pod's of each part (names differ), else any. */
static int widest_tpu(const struct topology *t, long *ranks, int max)
{
	struct topology_part part;
	int k, n = 0;

	if (topology_parts(t) == 0) {
		ranks[0] = t->world_size - 1;
		return max > 0;
	}
	for (k = 0; k < topology_parts(t) && n < max; k++) {
		topology_part(t, k, &part);
		ranks[n++] = topology_rank_at(t, part.first + part.units * part.pods - 1);
	}
	return n;
}

/*
 * What JAX's ids cannot express: slices of different sizes (process id is
 * worker id + slice id x hosts per slice), a JobSet whose rank 0 is not its
 * first pod (the ids would not be RANK), a LeaderWorkerSet group whose leader
 * is no TPU host (LeaderWorkerSet then leaves it out of the host list, distenv's
 * world counts it) or that is cut into subgroups (slices of their own).
 */
static int refuse_tpu(const struct topology *t, const cJSON *anns, char *msg, size_t len)
{
	struct topology_part p0, pk;
	const char *v;
	int k;

	for (k = 1; k < topology_parts(t); k++) {
		topology_part(t, 0, &p0);
		topology_part(t, k, &pk);
		if (pk.pods != p0.pods) {
			snprintf(
			    msg, len,
			    "tpu: the Jobs of JobSet %s/%s are not one size (%.63s: %ld pods, "
			    "%.63s: %ld), so a TPU slice's hosts are not all of one Job and JAX's "
			    "process ids would not be the ranks: give every replicated Job the "
			    "same completions, or list the frameworks in distenv.dev/frameworks "
			    "without tpu",
			    t->ns, t->workload, p0.name, p0.pods, pk.name, pk.pods);
			return 1;
		}
	}
	if (topology_parts(t) > 0 && topology_position(t, 0) != 0) {
		snprintf(
		    msg, len,
		    "tpu: the coordinator of JobSet %s/%s is not its first pod, so JAX's process "
		    "ids (slice by slice) would not be the ranks: make the first replicated "
		    "Job's first pod the coordinator or remove spec.coordinator",
		    t->ns, t->workload);
		return 1;
	}
	if (anns == NULL || t->group < 0)
		return 0;
	if (json_map_str(anns, LWS_SUBGROUP_SIZE) != NULL) {
		snprintf(
		    msg, len,
		    "tpu: LeaderWorkerSet %s/%s cuts its groups into subgroups (%s), which are "
		    "slices of their own; distenv's tpu serves one slice a group: remove "
		    "subGroupPolicy or tpu from distenv.dev/frameworks",
		    t->ns, t->workload, LWS_SUBGROUP_SIZE);
		return 1;
	}
	v = json_map_str(anns, LWS_LEADER_REQUESTS_TPUS);
	if (t->rank > 0 && (v == NULL || strcmp(v, "true") != 0)) {
		snprintf(
		    msg, len,
		    "tpu: the leader of LeaderWorkerSet %s/%s requests no google.com/tpu (no %s "
		    "annotation), so it is no TPU host, yet distenv's world counts it as rank 0: "
		    "give the leader TPUs, or list the frameworks in distenv.dev/frameworks "
		    "without tpu",
		    t->ns, t->workload, LWS_LEADER_REQUESTS_TPUS);
		return 1;
	}
	return 0;
}

static const char *const none[] = {NULL};

const struct framework fw_tpu = {
    .name = "tpu",
    .bit = 0x20u,
    .help = "TPU_WORKER_ID, TPU_WORKER_HOSTNAMES (a slice's hosts), MEGASCALE_* (one slice a "
            "JobSet Job); added for pods that request google.com/tpu",
    .from_addr = none,
    .from_port = none,
    .add = add_tpu,
    .grows = "TPU_WORKER_HOSTNAMES",
    .widest = widest_tpu,
    .resource = "google.com/tpu",
    .refuse = refuse_tpu,
};
