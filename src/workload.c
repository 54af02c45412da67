/*
 * Names of workload kinds, as the Kubernetes API spells them. Static strings;
 * nothing is allocated.
 */
#include "workload.h"

const char *workload_kind_name(enum workload_kind kind)
{
	switch (kind) {
	case WORKLOAD_STATEFULSET:
		return "StatefulSet";
	case WORKLOAD_JOB:
		return "Job";
	case WORKLOAD_NONE:
		break;
	}
	return "none";
}
