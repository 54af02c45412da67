/*
 * doctor's checks of the pods, in the order a job forms: opted in and
 * injected (else the FailedCreate event that says why), every rank present,
 * scheduled and running, one world that matches the workload, no container
 * that overrides distenv's env, ranks in step (one image, no restarts, no
 * eviction). Pure: reads the pod table and the events, adds findings.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_int.h"
#include "json.h"
#include "kind.h"
#include "ownenv.h"

/* The newest event of reason (NULL: any) about object name (prefix match when prefix). */
static const cJSON *event_about(const struct doctor_obj *events, const char *name, int prefix,
                                const char *reason)
{
	const cJSON *e, *best = NULL;
	const char *best_t = "";

	cJSON_ArrayForEach(e, items(events))
	{
		const char *on = json_str(json_get(e, "involvedObject"), "name");
		const char *t = json_str(e, "lastTimestamp");

		if (on == NULL ||
		    (prefix ? strncmp(on, name, strlen(name)) != 0 : strcmp(on, name)))
			continue;
		if (reason != NULL && !streq(json_str(e, "reason"), reason))
			continue;
		if (t == NULL)
			t = json_str(e, "eventTime");
		if (best == NULL || (t != NULL && strcmp(t, best_t) >= 0)) {
			best = e;
			best_t = t != NULL ? t : "";
		}
	}
	return best;
}

/* The first container (init containers first) waiting for a reason that keeps a rank down. */
static const char *pod_waiting(const cJSON *pod, const char **container, const char **msg)
{
	static const char *const keys[] = {"initContainerStatuses", "containerStatuses"};
	static const char *const bad[] = {
	    "ImagePullBackOff",           "ErrImagePull",      "CrashLoopBackOff",
	    "CreateContainerConfigError", "InvalidImageName",  "CreateContainerError",
	    "RunContainerError",          "ErrImageNeverPull",
	};
	const cJSON *cs;
	size_t k, b;

	for (k = 0; k < 2; k++)
		cJSON_ArrayForEach(cs, json_get(json_get(pod, "status"), keys[k]))
		{
			const cJSON *w = json_get(json_get(cs, "state"), "waiting");
			const char *reason = json_str(w, "reason");
			for (b = 0; reason != NULL && b < sizeof(bad) / sizeof(bad[0]); b++)
				if (strcmp(reason, bad[b]) == 0) {
					*container = json_str(cs, "name");
					*msg = json_str(w, "message");
					return reason;
				}
		}
	return NULL;
}

/* What to do about a FailedCreate event's message: distenv's denial, distenv unreachable, other. */
static const char *create_fix(const char *msg)
{
	if (msg != NULL && strstr(msg, "denied the request") && strstr(msg, "distenv"))
		return "fix what distenv's denial names (the pod template), then re-apply";
	if (msg != NULL && strstr(msg, "failed calling webhook"))
		return "the API server cannot reach distenv: check its pods, Service and CA "
		       "(kubectl -n <distenv's namespace> get pods,endpointslices)";
	return "fix what the message names, then delete the workload's pods or let the "
	       "controller retry";
}

/* FailedCreate of the workload (a JobSet's Jobs too): 1 and an added finding when there is one. */
static int failed_create(struct doctor_ctx *c, enum doctor_state st, const char *title)
{
	const struct doctor_input *in = c->in;
	const cJSON *e =
	    event_about(&in->events, in->name, in->kind->doctor->events_by_prefix, "FailedCreate");
	const char *msg = json_str(e, "message");
	struct doctor_finding *f;

	if (e == NULL)
		return 0;
	f = doctor_add(c->r, st, "opt-in", create_fix(msg), "%s", title);
	doctor_say(f, "event FailedCreate on %s/%s (x%ld): \"%.700s\"",
	           json_str(json_get(e, "involvedObject"), "kind")
	               ? json_str(json_get(e, "involvedObject"), "kind")
	               : "?",
	           json_str(json_get(e, "involvedObject"), "name")
	               ? json_str(json_get(e, "involvedObject"), "name")
	               : "?",
	           json_long(e, "count", 1L << 30, 1), msg ? msg : "");
	return 1;
}

void doctor_check_opt_in(struct doctor_ctx *c)
{
	struct doctor_finding *f = NULL;
	int i, n_not = 0, n_bare = 0;

	if (c->n == 0) {
		if (!failed_create(c, DOCTOR_FAIL,
		                   "no pod of the workload exists: their creation failed"))
			doctor_add(
			    c->r, c->world == 0 ? DOCTOR_WARN : DOCTOR_FAIL, "opt-in",
			    "kubectl describe the workload; a Job may be suspended (Kueue) or done",
			    "no pod of the workload exists, and no FailedCreate event says why");
		return;
	}
	for (i = 0; i < c->n; i++) {
		if (!c->p[i].opted_in) {
			if (n_not++ == 0)
				f = doctor_add(
				    c->r, DOCTOR_FAIL, "opt-in",
				    "add distenv.dev/inject: \"true\" to the pod template's "
				    "labels, "
				    "then delete the pods",
				    "pods without the opt-in label distenv.dev/inject=true");
			doctor_say(f, "%s%s", n_not > 1 ? ", " : "",
			           c->p[i].name ? c->p[i].name : "?");
		}
	}
	for (i = 0; i < c->n; i++) {
		if (c->p[i].opted_in && !c->p[i].injected) {
			if (n_bare++ == 0)
				f = doctor_add(
				    c->r, DOCTOR_FAIL, "opt-in",
				    "delete these pods once distenv serves: their controller makes "
				    "them again and distenv injects them",
				    "pods created without distenv's env (no distenv.dev/injected "
				    "annotation: made while distenv was not installed or not "
				    "reachable "
				    "with failurePolicy Ignore)");
			doctor_say(f, "%s%s", n_bare > 1 ? ", " : "",
			           c->p[i].name ? c->p[i].name : "?");
		}
	}
	if (n_not == 0 && n_bare == 0)
		doctor_add(c->r, DOCTOR_OK, "opt-in", NULL,
		           "%d pod(s) opted in and injected by distenv", c->n);
}

void doctor_check_ranks(struct doctor_ctx *c)
{
	const struct doctor_input *in = c->in;
	long g, r, total = c->world * c->groups;
	int i, n_missing = 0, n_dup = 0, problems = 0;
	struct doctor_finding *f = NULL;
	char nm[300];
	char *seen;

	if (c->world == 0) {
		/* scaled to 0 while pods remain (terminating): no rank to hold */
		doctor_add(c->r, DOCTOR_UNKNOWN, "ranks", NULL,
		           "the workload has no ranks now (0 replicas or completions): its %d "
		           "remaining pod(s) not counted",
		           c->n);
		return;
	}
	if (c->world < 0) {
		doctor_add(c->r, DOCTOR_UNKNOWN, "ranks", NULL,
		           "the workload's world size is not known: ranks not counted");
		return;
	}
	/* world and groups are at most 2^30 each (doctor_want): total did not overflow */
	if (total > DOCTOR_MAX_PODS * 4) {
		doctor_add(c->r, DOCTOR_UNKNOWN, "ranks", NULL,
		           "the workload's %ld ranks are more than doctor counts (%d): ranks not "
		           "counted",
		           total, DOCTOR_MAX_PODS * 4);
		return;
	}
	seen = calloc((size_t)total, 1);
	if (seen == NULL)
		return;
	for (i = 0; i < c->n; i++) {
		const struct pinfo *p = &c->p[i];
		long key = p->group * c->world + p->rank;
		if (p->rank < 0 || p->group < 0 || p->rank >= c->world || p->group >= c->groups ||
		    p->deleting)
			continue;
		if (seen[key]++ == 1) {
			if (n_dup++ == 0)
				f = doctor_add(
				    c->r, DOCTOR_FAIL, "ranks",
				    "delete the extra pods; check that nothing else creates pods "
				    "with these labels",
				    "ranks held by more than one pod");
			doctor_say(f, "%srank %ld (%s)", n_dup > 1 ? ", " : "", p->rank,
			           p->name ? p->name : "?");
		}
	}
	for (g = 0; g < c->groups; g++)
		for (r = 0; r < c->world; r++) {
			if (seen[g * c->world + r])
				continue;
			if (n_missing++ == 0) {
				f = doctor_add(
				    c->r, DOCTOR_FAIL, "ranks",
				    "see why the controller did not make it: kubectl describe the "
				    "workload (events)",
				    "ranks without a pod: the job cannot form");
				doctor_say(f, "world %ld%s; missing: ", c->world,
				           c->groups > 1 ? " per group" : "");
			}
			if (n_missing <= 16) {
				doctor_rank_name(in->kind, in->name, c->start, g, r, nm,
				                 sizeof(nm));
				doctor_say(f, "%s%ld (%s)", n_missing > 1 ? ", " : "", r, nm);
			}
		}
	free(seen);
	if (n_missing > 16)
		doctor_say(f, " and %d more", n_missing - 16);
	if (n_missing > 0) {
		/* the controller's reason quoted, and what to do about it (a denial: the template)
		 */
		const cJSON *e = event_about(&in->events, in->name, 0, "FailedCreate");
		if (e != NULL) {
			doctor_say(f, "; event FailedCreate: \"%.400s\"",
			           json_str(e, "message") ? json_str(e, "message") : "");
			snprintf(f->fix, sizeof(f->fix), "%s", create_fix(json_str(e, "message")));
		}
	}
	problems = n_missing + n_dup;

	for (i = 0; i < c->n; i++) {
		const struct pinfo *p = &c->p[i];
		const char *who = NULL, *msg = NULL, *reason;
		const cJSON *cond;

		if (!p->scheduled && !p->deleting) {
			const char *why = NULL;
			cJSON_ArrayForEach(cond, json_get(json_get(p->pod, "status"), "conditions"))
			{
				if (streq(json_str(cond, "type"), "PodScheduled"))
					why = json_str(cond, "message");
			}
			if (why == NULL) {
				const cJSON *e =
				    event_about(&in->events, p->name, 0, "FailedScheduling");
				why = json_str(e, "message");
			}
			f = doctor_add(
			    c->r, DOCTOR_FAIL, "scheduling",
			    "free or add what the scheduler names (resources, node selectors, "
			    "taints), or lower the pod's requests; every rank must run at once",
			    "rank %ld (%s) is Pending: not scheduled", p->rank,
			    p->name ? p->name : "?");
			doctor_say(f, "the scheduler: \"%.600s\"", why ? why : "(no message yet)");
			problems++;
			continue;
		}
		if ((reason = pod_waiting(p->pod, &who, &msg)) != NULL) {
			f = doctor_add(c->r, DOCTOR_FAIL, "containers",
			               strstr(reason, "Image")
			                   ? "fix the image name or pull secret; kubectl "
			                     "describe pod shows the pull error"
			                   : "kubectl logs --previous on the container shows why "
			                     "it exits",
			               "rank %ld (%s): container %s is %s", p->rank,
			               p->name ? p->name : "?", who ? who : "?", reason);
			doctor_say(f, "\"%.600s\"", msg ? msg : "");
			problems++;
		} else if (streq(p->phase, "Failed")) {
			const char *why = json_str(json_get(p->pod, "status"), "reason");
			f = doctor_add(
			    c->r, DOCTOR_FAIL, "containers",
			    "the controller replaces a failed pod; if the others stay in the old "
			    "rendezvous, restart them all",
			    "rank %ld (%s) failed%s%s", p->rank, p->name ? p->name : "?",
			    why ? ": " : "", why ? why : "");
			doctor_say(f, "\"%.600s\"",
			           json_str(json_get(p->pod, "status"), "message")
			               ? json_str(json_get(p->pod, "status"), "message")
			               : "");
			problems++;
		}
	}
	if (problems == 0)
		doctor_add(
		    c->r, DOCTOR_OK, "ranks", NULL,
		    "every rank has one pod, scheduled, none waiting on an image or crash-looping "
		    "(world %ld%s)",
		    c->world, c->groups > 1 ? " per group" : "");
}

/*
 * The elastic range of a pod (PET_NNODES MIN:MAX in a container's env, its
 * last entry of that name: the kubelet's, ownenv_entry): 1 and min/max, else 0.
 */
static int pod_elastic(const cJSON *pod, long *min, long *max)
{
	const cJSON *ct;
	int index;

	cJSON_ArrayForEach(ct, json_get(json_get(pod, "spec"), "containers"))
	{
		const char *v = json_str(ownenv_entry(ct, "PET_NNODES", &index), "value");
		if (v != NULL && strchr(v, ':')) {
			*min = strtol(v, NULL, 10);
			*max = strtol(strchr(v, ':') + 1, NULL, 10);
			return 1;
		}
	}
	return 0;
}

void doctor_check_world(struct doctor_ctx *c)
{
	struct doctor_finding *f = NULL;
	long w0 = -1, min = 0, max = 0;
	const char *m0 = NULL;
	int i, stale = 0, split = 0, elastic = 0;

	for (i = 0; i < c->n; i++) {
		const struct pinfo *p = &c->p[i];
		if (!p->injected || p->world < 0)
			continue;
		if (pod_elastic(p->pod, &min, &max))
			elastic = 1;
		if (w0 < 0) {
			w0 = p->world;
			m0 = p->master;
		}
	}
	if (w0 < 0)
		return;
	/* A resize since the pods started explains ranks with different worlds: said first. */
	if (c->world > 0 && !elastic) {
		for (i = 0; i < c->n; i++) {
			const struct pinfo *p = &c->p[i];
			if (!p->injected || p->world < 0 || p->world == c->world)
				continue;
			if (stale++ == 0) {
				f = doctor_add(
				    c->r, DOCTOR_FAIL, "world",
				    "restart every pod (kubectl delete pod -l ...; a Job: "
				    "delete and "
				    "re-apply it), or use distenv.dev/elastic: MIN:MAX for "
				    "torchrun's "
				    "elastic rendezvous",
				    "the workload was resized after its pods started: they "
				    "wait for a "
				    "world of %ld, it now has %ld",
				    p->world, c->world);
				doctor_say(f, "pods with the old world: ");
			}
			doctor_say(f, "%s%s (world %ld)", stale > 1 ? ", " : "",
			           p->name ? p->name : "?", p->world);
		}
	} else if (elastic && c->world > 0 && (c->world < min || c->world > max)) {
		doctor_add(
		    c->r, DOCTOR_FAIL, "world",
		    "scale within the range, or change distenv.dev/elastic and restart the pods",
		    "the workload's %ld ranks are outside the elastic range %ld:%ld", c->world, min,
		    max);
		stale = 1;
	}
	for (i = 0; i < c->n && !stale && !c->in->kind->doctor->worlds_per_group; i++) {
		const struct pinfo *p = &c->p[i];
		if (!p->injected || p->world < 0 || (p->world == w0 && strcmp(p->master, m0) == 0))
			continue;
		if (split++ == 0)
			f = doctor_add(
			    c->r, DOCTOR_FAIL, "world",
			    "delete every pod of the job (or the Job) so that all start with one "
			    "world; use distenv.dev/elastic for a world that changes",
			    "ranks were given different worlds");
		doctor_say(f, "%s%s: world %ld, master %s", split > 1 ? "; " : "",
		           p->name ? p->name : "?", p->world, p->master);
	}
	if (!stale && !split) {
		f = doctor_add(c->r, DOCTOR_OK, "world", NULL,
		               "one world: %ld rank(s), rank 0 at %s:%ld", w0, m0, c->port);
		if (elastic)
			doctor_say(
			    f, "elastic %ld:%ld (torchrun re-forms the world as pods come and go)",
			    min, max);
	}
}

/* A container's own entry for a name distenv writes, when it differs from distenv's. */
void doctor_check_own_env(struct doctor_ctx *c)
{
	static const char *const names[] = {"RANK",
	                                    "WORLD_SIZE",
	                                    "MASTER_ADDR",
	                                    "MASTER_PORT",
	                                    "NODE_RANK",
	                                    "NNODES",
	                                    "PET_NODE_RANK",
	                                    "PET_NNODES",
	                                    "PET_MASTER_ADDR",
	                                    "PET_MASTER_PORT",
	                                    "TF_CONFIG",
	                                    "JAX_PROCESS_ID",
	                                    "JAX_NUM_PROCESSES",
	                                    "JAX_COORDINATOR_ADDRESS"};
	struct doctor_finding *f = NULL;
	int i, n = 0, index;
	size_t k;

	for (i = 0; i < c->n; i++) {
		const struct pinfo *p = &c->p[i];
		const cJSON *ct, *e;
		char want[300];

		if (!p->injected || p->rank < 0)
			continue;
		cJSON_ArrayForEach(ct, json_get(json_get(p->pod, "spec"), "containers"))
		{
			cJSON_ArrayForEach(e, json_get(ct, "env"))
			{
				const char *name = json_str(e, "name"), *v = json_str(e, "value");
				const char *what = NULL;
				for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
					if (streq(name, names[k]))
						what = names[k];
				if (what == NULL || ownenv_entry(ct, what, &index) != e)
					continue; /* none of distenv's, or hidden by a later entry
					           */
				want[0] = '\0';
				if (streq(what, "RANK") || streq(what, "NODE_RANK") ||
				    streq(what, "PET_NODE_RANK") || streq(what, "JAX_PROCESS_ID"))
					snprintf(want, sizeof(want), "%ld", p->rank);
				else if ((streq(what, "WORLD_SIZE") || streq(what, "NNODES") ||
				          streq(what, "JAX_NUM_PROCESSES")) &&
				         p->world >= 0)
					snprintf(want, sizeof(want), "%ld", p->world);
				else if (streq(what, "MASTER_ADDR") ||
				         streq(what, "PET_MASTER_ADDR"))
					snprintf(want, sizeof(want), "%s", p->master);
				else if ((streq(what, "MASTER_PORT") ||
				          streq(what, "PET_MASTER_PORT")) &&
				         p->port > 0)
					snprintf(want, sizeof(want), "%ld", p->port);
				else
					continue; /* TF_CONFIG, ranges: not compared */
				if (v != NULL && strcmp(v, want) == 0)
					continue;
				if (n++ == 0)
					f = doctor_add(
					    c->r, DOCTOR_FAIL, "own-env",
					    "remove these entries from the pod template's env: the "
					    "container's own value wins over distenv's",
					    "containers set their own distributed env, which "
					    "overrides "
					    "distenv's");
				if (n <= 8)
					doctor_say(f, "%s%s/%s: %s=%s%s (distenv's: %s)",
					           n > 1 ? "; " : "", p->name ? p->name : "?",
					           json_str(ct, "name") ? json_str(ct, "name")
					                                : "?",
					           what, v ? v : "(valueFrom)", "", want);
			}
		}
	}
	if (n > 8)
		doctor_say(f, "; and %d more", n - 8);
	if (n == 0)
		doctor_add(c->r, DOCTOR_OK, "own-env", NULL,
		           "no container overrides distenv's RANK, WORLD_SIZE, MASTER_ADDR or "
		           "MASTER_PORT");
}

void doctor_check_step(struct doctor_ctx *c)
{
	const struct doctor_input *in = c->in;
	struct doctor_finding *f = NULL;
	int i, j, n = 0, warned = c->r->n_warn;

	/* Images: one imageID per container name across the ranks. */
	for (i = 0; i < c->n && n == 0; i++) {
		const cJSON *a, *b;
		cJSON_ArrayForEach(a,
		                   json_get(json_get(c->p[i].pod, "status"), "containerStatuses"))
		{
			for (j = i + 1; j < c->n; j++) {
				cJSON_ArrayForEach(b, json_get(json_get(c->p[j].pod, "status"),
				                               "containerStatuses"))
				{
					const char *ia = json_str(a, "imageID"),
					           *ib = json_str(b, "imageID");
					if (!streq(json_str(a, "name"), json_str(b, "name")) ||
					    ia == NULL || ib == NULL || !ia[0] || !ib[0] ||
					    strcmp(ia, ib) == 0 || n)
						continue;
					n++;
					f = doctor_add(
					    c->r, DOCTOR_WARN, "step",
					    "pin the image by digest (image@sha256:...) or use "
					    "imagePullPolicy: IfNotPresent with a tag that "
					    "does not move",
					    "ranks run different images of container %s",
					    json_str(a, "name"));
					doctor_say(f, "%s: %.200s; %s: %.200s", c->p[i].name, ia,
					           c->p[j].name, ib);
				}
			}
		}
	}
	/* Restarts: a rank that started again after the others rejoins a rendezvous that moved on.
	 */
	for (i = 0; i < c->n; i++) {
		const cJSON *cs;
		cJSON_ArrayForEach(cs,
		                   json_get(json_get(c->p[i].pod, "status"), "containerStatuses"))
		{
			long rc = json_long(cs, "restartCount", 1L << 30, 0);
			const cJSON *last = json_get(json_get(cs, "lastState"), "terminated");
			if (rc <= 0 || pod_elastic(c->p[i].pod, &(long){0}, &(long){0}))
				continue;
			f = doctor_add(
			    c->r, DOCTOR_WARN, "step",
			    "a static world does not take a rank back: restart every pod of "
			    "the job "
			    "together, or use distenv.dev/elastic",
			    "rank %ld (%s): container %s restarted %ld time(s) after the "
			    "others started",
			    c->p[i].rank, c->p[i].name ? c->p[i].name : "?",
			    json_str(cs, "name") ? json_str(cs, "name") : "?", rc);
			if (last != NULL)
				doctor_say(f, "last exit: %s, code %ld",
				           json_str(last, "reason") ? json_str(last, "reason")
				                                    : "?",
				           json_long(last, "exitCode", 1L << 30, -1));
			break;
		}
	}
	/* Evicted or preempted while forming. */
	{
		const cJSON *e;
		cJSON_ArrayForEach(e, items(&in->events))
		{
			const char *reason = json_str(e, "reason"), *on;
			if (!streq(reason, "Evicted") && !streq(reason, "Preempted") &&
			    !streq(reason, "Preempting"))
				continue;
			on = json_str(json_get(e, "involvedObject"), "name");
			for (i = 0; i < c->n; i++)
				if (streq(on, c->p[i].name) ||
				    (on != NULL && strncmp(on, in->name, strlen(in->name)) == 0))
					break;
			if (i == c->n)
				continue;
			f = doctor_add(
			    c->r, DOCTOR_WARN, "step",
			    "the controller makes the pod again with the same rank; the others "
			    "must "
			    "restart with it (a static world), or use distenv.dev/elastic",
			    "%s was %s", on ? on : "a pod",
			    streq(reason, "Evicted") ? "evicted" : "preempted");
			doctor_say(f, "\"%.500s\"",
			           json_str(e, "message") ? json_str(e, "message") : "");
			break;
		}
	}
	if (c->r->n_warn == warned)
		doctor_add(c->r, DOCTOR_OK, "step", NULL,
		           "ranks in step: one image, no restarts, no eviction or preemption seen");
}
