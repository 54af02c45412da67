/*
 * Apply-time checks of an opted-in workload (StatefulSet, Job, JobSet,
 * LeaderWorkerSet): what can never work (denied, every problem in one message)
 * and what will probably not work (warnings, each under 120 characters). Pure
 * apart from the optional look-ups (the Service, the namespace's NetworkPolicies). The result is
 * plain data.
 */
#ifndef DISTENV_VALIDATE_H
#define DISTENV_VALIDATE_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "config.h"
#include "topology.h"
#include "workload.h"

/*
 * Warnings kept: more than every check can give for a workload of distenv's
 * limits (four per pod template, WORKLOAD_MAX_RJOBS + 1 templates, and the
 * workload's own); one past it is counted in n_more, never dropped unsaid.
 */
#define VALIDATE_MAX_WARNINGS 96
#define VALIDATE_WARNING_LEN  120

struct validation {
	int opted_in;            /* 0: no pod template carries the opt-in label; nothing checked */
	int n_problems;          /* what can never work */
	char denial[2048];       /* "distenv: <problem>; <problem>..." when n_problems > 0 */
	enum deny_reason reason; /* the first problem's: DENY_ANNOTATION or DENY_WORKLOAD */
	char warnings[VALIDATE_MAX_WARNINGS][VALIDATE_WARNING_LEN]; /* each once, in order */
	int n_warnings;
	int n_more; /* distinct warnings past VALIDATE_MAX_WARNINGS: counted, not kept */
	/*
	 * The workload carries Kueue's kueue.x-k8s.io/job-min-parallelism: Kueue may
	 * lower its parallelism below its completions when it admits it, so that is
	 * warned, not refused (Kueue's update must go through; the pods are refused).
	 */
	int partial_admission;
};

/*
 * Checks obj, a workload of kind ("StatefulSet", "Job", "JobSet",
 * "LeaderWorkerSet") in namespace ns. lookup may be NULL, or have no
 * get_service: then the Service checks are skipped; without list_netpols the
 * NetworkPolicy check is. services, when not NULL,
 * is an array of Service objects to check against instead (render reads them
 * from the manifest). Always fills v.
 */
void validate_workload(const cJSON *obj, const char *kind, const char *ns, const struct config *cfg,
                       const struct workload_lookup *lookup, const cJSON *services,
                       struct validation *v);

/*
 * An UPDATE of an opted-in workload from old to obj: when it changes the
 * world (the ranks every pod was told at its creation), a warning naming the
 * old and the new world and what brings every pod to the new one, added to v
 * (after validate_workload). No warning for a change to or from 0 ranks (a
 * suspended Job or JobSet runs none), within the running pods' elastic
 * MIN:MAX, or for a kind whose controller re-creates each world whole.
 */
void validate_update(const cJSON *old, const cJSON *obj, const char *kind, const char *ns,
                     const struct config *cfg, struct validation *v);

/* 1 when kind (with its API group) is one /validate checks. */
int validate_kind_known(const char *group, const char *kind);

#endif
