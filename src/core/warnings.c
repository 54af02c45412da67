/*
 * What a pod's topology warns of, resolved or as a template at apply time: a
 * launcher that would misread it (more processes than GPUs, a container's own
 * LOCAL_RANK, each framework's own warning) and a DNS policy under which
 * MASTER_ADDR will not resolve. Writes only into the caller's buffers; a
 * template's targets are freed before returning.
 */
#include "topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotation.h"
#include "framework.h"
#include "json.h"
#include "targets.h"

int topology_launcher_warnings(const struct topology *t, const cJSON *pod_spec, char *out,
                               size_t len, int max)
{
	const char *cname;
	long n = t->processes;
	int i, found = 0, k = 0;

	/* two processes on one GPU: NCCL refuses it ("Duplicate GPU detected") */
	if (t->gpus > 0 && n > t->gpus && k < max)
		snprintf(out + (size_t)k++ * len, len,
		         "distenv: %s %ld is above the %ld GPUs of a container: processes would "
		         "share a GPU; set %ld",
		         ANN_NPROC, n, t->gpus, t->gpus);
	for (i = 0; n > 1 && i < t->n_targets && !found && k < max; i++) {
		const cJSON *c = topology_target_container(pod_spec, &t->targets[i]), *e;
		if (!topology_target_may_define(&t->targets[i], "LOCAL_RANK"))
			continue;
		cJSON_ArrayForEach(e, json_get(c, "env"))
		{
			const char *name = json_name(e);
			if (name == NULL || name[0] != 'L' || strcmp(name, "LOCAL_RANK") != 0)
				continue;
			cname = json_str(c, "name");
			snprintf(
			    out + (size_t)k++ * len, len,
			    "distenv: container %.24s sets LOCAL_RANK: launchers start 1 process, "
			    "not %ld; remove it",
			    cname ? cname : "?", n);
			found = 1;
			break;
		}
	}
	for (i = 0; framework_at(i) != NULL && k < max; i++)
		if ((t->frameworks & framework_at(i)->bit) && framework_at(i)->warn != NULL &&
		    framework_at(i)->warn(t, out + (size_t)k * len, len))
			k++;
	return k;
}

int topology_dns_warning(const cJSON *pod_spec, char *out, size_t len)
{
	const char *policy = json_str(pod_spec, "dnsPolicy");
	int host = cJSON_IsTrue(json_get(pod_spec, "hostNetwork"));

	if (host && (policy == NULL || strcmp(policy, "ClusterFirst") == 0)) {
		snprintf(
		    out, len,
		    "hostNetwork needs dnsPolicy: ClusterFirstWithHostNet, or MASTER_ADDR will "
		    "not resolve");
		return 1;
	}
	if (policy != NULL && strcmp(policy, "Default") == 0) {
		snprintf(
		    out, len,
		    "dnsPolicy Default: the node's DNS usually cannot resolve MASTER_ADDR; use %s",
		    host ? "ClusterFirstWithHostNet" : "ClusterFirst");
		return 1;
	}
	return 0;
}

int topology_template_launcher_warnings(const cJSON *pod_spec, const cJSON *anns,
                                        const struct config *cfg, char *out, size_t len, int max)
{
	struct topology t;
	char err[256];
	int k = 0;

	memset(&t, 0, sizeof(t));
	/* 0 for a bad annotation, which is denied on its own */
	t.frameworks = topology_template_frameworks(pod_spec, anns, cfg);
	if (targets_resolve(pod_spec, anns, cfg, &t, err, sizeof(err)) == TOPOLOGY_OK) {
		t.processes = targets_nproc(&t, pod_spec, anns, cfg);
		k = topology_launcher_warnings(&t, pod_spec, out, len, max);
	}
	free(t.targets);
	return k;
}
