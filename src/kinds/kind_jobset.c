/*
 * The JobSet (jobset.x-k8s.io): one world across every pod of every replicated
 * Job, ranks in spec.replicatedJobs order with the coordinator's pod first,
 * host <js>-<rjob>-<j>-<i>. Everything distenv knows of the kind; pure apart from the
 * look-up the resolution passes in.
 */
#include "kinds.h"
#include "kind_jobset.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "dns.h"
#include "json.h"

/* What the JobSet controller writes on its pods (labels and annotations both). */
#define JOBSET_NAME         "jobset.sigs.k8s.io/jobset-name"
#define JOBSET_UID          "jobset.sigs.k8s.io/jobset-uid"
#define JOBSET_RJOB         "jobset.sigs.k8s.io/replicatedjob-name"
#define JOBSET_RJOB_REPS    "jobset.sigs.k8s.io/replicatedjob-replicas"
#define JOBSET_GLOBAL_REPS  "jobset.sigs.k8s.io/global-replicas"
#define JOBSET_JOB_INDEX    "jobset.sigs.k8s.io/job-index"
#define JOBSET_GLOBAL_INDEX "jobset.sigs.k8s.io/job-global-index"
#define JOBSET_COORDINATOR  "jobset.sigs.k8s.io/coordinator"

/* Finds the replicated Job called name; NULL when the JobSet has none. */
static struct jobset_rjob *rjob_named(struct topology *t, const char *name)
{
	struct jobset_state *js = jobset_state(t);
	int k;

	for (k = 0; k < js->n_rjobs; k++)
		if (strcmp(js->rjobs[k].name, name) == 0)
			return &js->rjobs[k];
	return NULL;
}

static int jobset_would_deny(const struct resolve *rs, const struct workload_spec *ws)
{
	const char *rjob = resolve_mark(rs, JOBSET_RJOB);
	int k;

	for (k = 0; k < ws->n_rjobs; k++)
		if (rjob != NULL && strcmp(ws->rjobs[k].name, rjob) == 0)
			return 0;
	return 1; /* a replicated Job the (cached) JobSet does not list */
}

/* The replicated Jobs from the JobSet in the API (look-ups on). */
static enum topology_status jobset_from_api(struct resolve *rs, struct workload_spec *ws)
{
	struct jobset_state *js = jobset_state(rs->t);
	struct topology *t = rs->t;
	struct workload_ref ref = {&kind_jobset, rs->ns, t->workload, resolve_mark(rs, JOBSET_UID)};
	enum topology_status rc;
	long first = 0;
	int k;

	rc = resolve_fetch(rs, &ref, jobset_would_deny, ws, "its replicated Jobs are not known");
	if (rc != TOPOLOGY_OK)
		return rc;
	for (k = 0; k < ws->n_rjobs; k++) {
		const struct workload_rjob *w = &ws->rjobs[k];
		struct jobset_rjob *r = &js->rjobs[k];

		if (!w->indexed)
			return resolve_deny(
			    rs, DENY_WORKLOAD,
			    "replicated Job %s of JobSet %s/%s is not Indexed: set "
			    "completionMode: Indexed in its template, so that every pod has a rank",
			    w->name, rs->ns, t->workload);
		if (w->completions < 1)
			return resolve_deny(
			    rs, DENY_WORKLOAD,
			    "replicated Job %s of JobSet %s/%s has no completions: set completions "
			    "(the pods of each Job)",
			    w->name, rs->ns, t->workload);
		if (w->parallelism < w->completions)
			return resolve_deny(
			    rs, DENY_WORKLOAD,
			    "replicated Job %s of JobSet %s/%s has parallelism %ld below "
			    "completions %ld, so not all ranks can run at once: set parallelism "
			    "equal to completions",
			    w->name, rs->ns, t->workload, w->parallelism, w->completions);
		snprintf(r->name, sizeof(r->name), "%s", w->name);
		r->jobs = w->replicas;
		r->pods = w->completions;
		r->first = first;
		if (r->jobs > rs->cfg->max_world_size || r->pods > rs->cfg->max_world_size ||
		    (first += r->jobs * r->pods) > rs->cfg->max_world_size)
			return resolve_deny(
			    rs, DENY_LIMIT,
			    "JobSet %s/%s has more pods than the world size limit of %ld", rs->ns,
			    t->workload, rs->cfg->max_world_size);
	}
	js->n_rjobs = ws->n_rjobs;
	t->world_size = first;
	return resolve_fixed_world(rs, first, "all its pods: every replicated Job's");
}

/*
 * The replicated Jobs from the pod's labels alone (look-ups off): exact only
 * when the JobSet has one replicated Job and the world size is annotated.
 */
static enum topology_status jobset_from_labels(struct resolve *rs, const char *rjob)
{
	struct jobset_state *js = jobset_state(rs->t);
	struct topology *t = rs->t;
	long reps = -1, global = -1;
	int have_r, have_g;
	enum topology_status rc;

	if ((rc = resolve_mark_long(rs, JOBSET_RJOB_REPS, &reps, &have_r)) != TOPOLOGY_OK ||
	    (rc = resolve_mark_long(rs, JOBSET_GLOBAL_REPS, &global, &have_g)) != TOPOLOGY_OK)
		return rc;
	if (!have_r || !have_g || reps < 1 || global != reps)
		return resolve_deny(
		    rs, DENY_WORLD,
		    "JobSet %s/%s has several replicated Jobs, whose sizes only the JobSet "
		    "object tells: turn look-ups on (the webhook needs get on jobsets)",
		    rs->ns, t->workload);
	if (rs->ann_world <= 0)
		return resolve_deny(
		    rs, DENY_WORLD,
		    "the world size of JobSet %s/%s is not known: set the annotation %s to "
		    "all its pods (look-ups of the workload are turned off)",
		    rs->ns, t->workload, ANN_WORLD_SIZE);
	if (rs->ann_world % reps != 0)
		return resolve_deny(
		    rs, DENY_WORLD,
		    "annotation %s is %ld, not a multiple of the %ld Jobs of JobSet %s/%s",
		    ANN_WORLD_SIZE, rs->ann_world, reps, rs->ns, t->workload);
	js->n_rjobs = 1;
	snprintf(js->rjobs[0].name, sizeof(js->rjobs[0].name), "%s", rjob);
	js->rjobs[0].jobs = reps;
	js->rjobs[0].pods = rs->ann_world / reps;
	js->rjobs[0].first = 0;
	t->world_size = rs->ann_world;
	return TOPOLOGY_OK;
}

/*
 * The position (spec order) of pod i of Job j of replicated Job r, or -1 when
 * there is no such pod. topology_rank_at turns it into the pod's rank.
 */
static long jobset_pos(const struct jobset_rjob *r, long j, long i)
{
	if (r == NULL || j < 0 || j >= r->jobs || i < 0 || i >= r->pods)
		return -1;
	return r->first + j * r->pods + i;
}

/* The coordinator "<js>-<rjob>-<j>-<i>.<subdomain>" of the pod's label, as a position. */
static long coordinator_from_label(struct topology *t, const char *v)
{
	const struct jobset_state *js = jobset_cstate(t);
	size_t wl = strlen(t->workload);
	int k;

	if (strncmp(v, t->workload, wl) != 0 || v[wl] != '-')
		return -1;
	for (k = 0; k < js->n_rjobs; k++) {
		size_t nl = strlen(js->rjobs[k].name);
		const char *p = v + wl + 1;
		char *end;
		long j, i;

		if (strncmp(p, js->rjobs[k].name, nl) != 0 || p[nl] != '-')
			continue;
		j = strtol(p + nl + 1, &end, 10);
		if (*end != '-')
			continue;
		i = strtol(end + 1, &end, 10);
		if (*end != '.' && *end != '\0')
			continue;
		return jobset_pos(&js->rjobs[k], j, i);
	}
	return -1;
}

static enum topology_status place_jobset(struct resolve *rs)
{
	struct jobset_state *js = jobset_state(rs->t);
	struct topology *t = rs->t;
	const char *rjob = resolve_mark(rs, JOBSET_RJOB), *coord;
	struct workload_spec ws;
	long j = -1, idx = -1, pos;
	int have_j;
	char want_owner[320];
	enum topology_status rc;

	if (rjob == NULL || !dns_label_valid(rjob))
		return resolve_deny(rs, DENY_NONE, "pod of JobSet %s/%s has no valid %s", rs->ns,
		                    t->workload, JOBSET_RJOB);
	if ((rc = resolve_mark_long(rs, JOBSET_JOB_INDEX, &j, &have_j)) != TOPOLOGY_OK)
		return rc;
	if (!have_j)
		return resolve_deny(rs, DENY_NONE, "pod of JobSet %s/%s has no %s", rs->ns,
		                    t->workload, JOBSET_JOB_INDEX);
	/* The JobSet controller names each Job <js>-<rjob>-<j>: the labels must agree. */
	if (bounded_printf(want_owner, sizeof(want_owner), "%s-%s-%ld", t->workload, rjob, j) !=
	        0 ||
	    strcmp(want_owner, rs->owner_name) != 0)
		return resolve_deny(
		    rs, DENY_NONE,
		    "pod of Job %s/%s carries JobSet labels for Job %.64s: distenv does not "
		    "trust labels its owner contradicts",
		    rs->ns, rs->owner_name, want_owner);
	if ((rc = resolve_completion_index(rs, "JobSet Job", &idx)) != TOPOLOGY_OK)
		return rc;
	workload_spec_init(&ws);
	rc = rs->lookup != NULL ? jobset_from_api(rs, &ws) : jobset_from_labels(rs, rjob);
	if (rc != TOPOLOGY_OK)
		return rc;
	pos = jobset_pos(rjob_named(t, rjob), j, idx);
	if (pos < 0)
		return resolve_deny(
		    rs, DENY_WORLD,
		    "pod %ld of Job %ld of replicated Job %s is not part of JobSet %s/%s as it is "
		    "now (re-created or resized?): retry",
		    idx, j, rjob, rs->ns, t->workload);
	/*
	 * The coordinator's pod is rank 0 and MASTER_ADDR: from the JobSet, or from
	 * its jobset.sigs.k8s.io/coordinator label without look-ups.
	 */
	if (ws.coordinator[0] != '\0') {
		js->coordinator = jobset_pos(rjob_named(t, ws.coordinator), ws.coordinator_job,
		                             ws.coordinator_pod);
		if (js->coordinator < 0)
			return resolve_deny(
			    rs, DENY_WORKLOAD,
			    "the coordinator of JobSet %s/%s (replicated Job %s, Job %ld, pod %ld) "
			    "is not one of its pods",
			    rs->ns, t->workload, ws.coordinator, ws.coordinator_job,
			    ws.coordinator_pod);
	} else if (rs->lookup == NULL && (coord = resolve_mark(rs, JOBSET_COORDINATOR)) != NULL) {
		js->coordinator = coordinator_from_label(t, coord);
		if (js->coordinator < 0)
			return resolve_deny(rs, DENY_NONE,
			                    "%s \"%.128s\" does not name a pod of JobSet %s/%s",
			                    JOBSET_COORDINATOR, coord, rs->ns, t->workload);
	}
	t->rank = topology_rank_at(t, pos);
	if (bounded_printf(t->rdzv_id, sizeof(t->rdzv_id), "%s-%s", t->ns, t->workload) != 0)
		return resolve_deny(rs, DENY_LIMIT, "the rendezvous id of JobSet %s/%s is too long",
		                    rs->ns, t->workload);
	return TOPOLOGY_OK;
}

/* The replicated Job that rank r belongs to, or NULL. */
static const struct jobset_rjob *rjob_of(const struct topology *t, long r)
{
	const struct jobset_state *js = jobset_cstate(t);
	long pos = topology_position(t, r);
	int k;

	for (k = 0; k < js->n_rjobs; k++)
		if (pos >= js->rjobs[k].first &&
		    pos < js->rjobs[k].first + js->rjobs[k].jobs * js->rjobs[k].pods)
			return &js->rjobs[k];
	return NULL;
}

/* The parts of a JobSet's world: its replicated Jobs, each a part of Jobs. */
static int n_parts_jobset(const struct topology *t)
{
	return jobset_cstate(t)->n_rjobs;
}

static void part_jobset(const struct topology *t, int k, struct topology_part *out)
{
	const struct jobset_rjob *r = &jobset_cstate(t)->rjobs[k];

	out->name = r->name;
	out->units = r->jobs;
	out->pods = r->pods;
	out->first = r->first;
}

static long rank0_jobset(const struct topology *t)
{
	return jobset_cstate(t)->coordinator;
}

static int host_jobset(const struct topology *t, long r, char *out, size_t outlen)
{
	long pos = topology_position(t, r);
	const struct jobset_rjob *k = rjob_of(t, r);

	if (k == NULL)
		return -1;
	return kind_host_name(out, outlen, t->workload, k->name, (pos - k->first) / k->pods,
	                      (pos - k->first) % k->pods);
}

/* The rest of rank r's Job: "<js>-<rjob>-<j>-" and its pod index on. */
static long run_jobset(const struct topology *t, long r, char *out, size_t outlen, size_t *plen,
                       long *first)
{
	long pos = topology_position(t, r);
	const struct jobset_rjob *k = rjob_of(t, r);

	if (k == NULL)
		return 0;
	return kind_host_run(out, outlen, t->workload, k->name, (pos - k->first) / k->pods,
	                     (pos - k->first) % k->pods, k->pods - (pos - k->first) % k->pods, plen,
	                     first);
}

static int parse_jobset(const char *json, size_t len, struct workload_spec *out, char *err,
                        size_t errlen)
{
	struct workload_spec s;
	const cJSON *spec, *rjobs, *rj, *coord, *net;
	cJSON *j;
	int rc = -1;

	workload_spec_init(&s);
	if ((j = workload_parse_object(json, len, "JobSet", &s, &spec, err, errlen)) == NULL)
		return -1;
	rjobs = json_get(spec, "replicatedJobs");
	if (!cJSON_IsArray(rjobs) || cJSON_GetArraySize(rjobs) == 0) {
		errf(err, errlen, "JobSet .spec.replicatedJobs is not a non-empty list");
		goto out;
	}
	if (cJSON_GetArraySize(rjobs) > WORKLOAD_MAX_RJOBS) {
		errf(err, errlen, "JobSet has %d replicated Jobs, more than distenv's limit of %d",
		     cJSON_GetArraySize(rjobs), WORKLOAD_MAX_RJOBS);
		goto out;
	}
	cJSON_ArrayForEach(rj, rjobs)
	{
		struct workload_rjob *r = &s.rjobs[s.n_rjobs];
		const cJSON *tmpl, *jspec;
		char path[160];

		snprintf(path, sizeof(path), "JobSet .spec.replicatedJobs[%d]", s.n_rjobs);
		r->replicas = 1; /* the API default */
		if (!cJSON_IsObject(rj) ||
		    workload_get_string(rj, "name", path, r->name, sizeof(r->name), err, errlen) <
		        0 ||
		    workload_get_count(rj, "replicas", path, &r->replicas, err, errlen) < 0 ||
		    workload_get_object(rj, "template", path, &tmpl, err, errlen) < 0 ||
		    workload_get_object(tmpl, "spec", path, &jspec, err, errlen) < 0) {
			if (!cJSON_IsObject(rj))
				errf(err, errlen, "%s is not an object", path);
			goto out;
		}
		if (r->name[0] == '\0') {
			errf(err, errlen, "%s has no name", path);
			goto out;
		}
		strncat(path, ".template.spec", sizeof(path) - strlen(path) - 1);
		if (workload_read_job_spec(jspec, path, &r->completions, &r->parallelism,
		                           &r->indexed, err, errlen) < 0)
			goto out;
		s.n_rjobs++;
	}
	if (workload_get_object(spec, "coordinator", "JobSet .spec.coordinator", &coord, err,
	                        errlen) < 0 ||
	    workload_get_string(coord, "replicatedJob", "JobSet .spec.coordinator.replicatedJob",
	                        s.coordinator, sizeof(s.coordinator), err, errlen) < 0)
		goto out;
	if (coord != NULL) {
		s.coordinator_job = s.coordinator_pod = 0;
		if (workload_get_count(coord, "jobIndex", "JobSet .spec.coordinator.jobIndex",
		                       &s.coordinator_job, err, errlen) < 0 ||
		    workload_get_count(coord, "podIndex", "JobSet .spec.coordinator.podIndex",
		                       &s.coordinator_pod, err, errlen) < 0)
			goto out;
	}
	if (workload_get_object(spec, "network", "JobSet .spec.network", &net, err, errlen) < 0 ||
	    workload_get_string(net, "subdomain", "JobSet .spec.network.subdomain", s.subdomain,
	                        sizeof(s.subdomain), err, errlen) < 0)
		goto out;
	*out = s;
	rc = 0;
out:
	cJSON_Delete(j);
	return rc;
}

/* spec.coordinator names one of the JobSet's pods, which becomes rank 0. */
static void view_coordinator(const cJSON *coord, struct view *w, struct validation *v)
{
	struct jobset_state *js = jobset_state(&w->t);
	const char *rjob = json_str(coord, "replicatedJob");
	long j = json_long(coord, "jobIndex", INT_MAX, 0),
	     i = json_long(coord, "podIndex", INT_MAX, 0);
	int k;

	if (coord == NULL)
		return;
	for (k = 0; rjob != NULL && k < js->n_rjobs; k++) {
		const struct jobset_rjob *r = &js->rjobs[k];
		if (strcmp(r->name, rjob) != 0)
			continue;
		if (j >= 0 && j < r->jobs && i >= 0 && i < r->pods) {
			js->coordinator = r->first + j * r->pods + i;
			return;
		}
		break;
	}
	view_problem(
	    v,
	    "the coordinator of JobSet %s (replicated Job %.63s, Job %ld, pod %ld) is not one "
	    "of its pods, so no pod could be rank 0: name a replicated Job, jobIndex and "
	    "podIndex that exist",
	    w->name, rjob ? rjob : "(none)", j, i);
}

/*
 * Look-ups off, a pod reads its replicated Job's sizes from its own labels
 * (jobset_from_labels) and its world from distenv.dev/world-size alone: a
 * JobSet whose one replicated Job with pods is opted in without world-size
 * would have every pod refused, so it is refused now; so is a JobSet of
 * several replicated Jobs with Jobs, whose pods' labels count every Job
 * (jobset.sigs.k8s.io/global-replicas) but tell only their own replicated
 * Job's sizes, so that each is refused for that.
 */
static void view_lookups_off(const struct view *w, const cJSON *const *tmpls, struct validation *v)
{
	const struct jobset_state *js = jobset_cstate(&w->t);
	int k, i, with_jobs = 0, with_pods = 0, which = -1;

	for (k = 0; k < js->n_rjobs; k++) {
		if (js->rjobs[k].jobs <= 0)
			continue;
		with_jobs++;
		if (js->rjobs[k].pods > 0) {
			with_pods++;
			which = k;
		}
	}
	if (with_jobs > 1) {
		view_problem_as(v, DENY_WORLD,
		                "look-ups of the workload are turned off, so the pods of JobSet %s "
		                "cannot read the sizes of its %d replicated Jobs, which only the "
		                "JobSet object tells, and each would be refused: turn look-ups on "
		                "(the webhook needs get on jobsets)",
		                w->name, with_jobs);
		return;
	}
	if (with_pods != 1)
		return;
	for (i = 0; i < w->n_tmpl; i++)
		if (w->tmpl[i] == tmpls[which])
			break;
	if (i == w->n_tmpl || json_str(json_get(json_get(tmpls[which], "metadata"), "annotations"),
	                               ANN_WORLD_SIZE) != NULL)
		return; /* not opted in: no pod of it is refused; annotated: checked as any */
	view_problem_as(
	    v, DENY_WORLD,
	    "look-ups of the workload are turned off, so the pods of JobSet %s cannot read "
	    "its %ld pods and each would be refused: set the annotation %s to %ld on its "
	    "pod template",
	    w->name, w->count, ANN_WORLD_SIZE, w->count);
}

static void view_jobset(const cJSON *spec, const struct config *cfg, struct view *w,
                        struct validation *v)
{
	struct jobset_state *js = jobset_state(&w->t);
	const cJSON *rj, *net = json_get(spec, "network");
	const char *sub = json_str(net, "subdomain");
	const cJSON *tmpls[WORKLOAD_MAX_RJOBS];
	const struct jobset_rjob *r0;
	long first = 0;

	w->t.kind = &kind_jobset;
	cJSON_ArrayForEach(rj, json_get(spec, "replicatedJobs"))
	{
		const cJSON *jspec = json_get(json_get(rj, "template"), "spec");
		const char *rname = json_str(rj, "name");
		struct jobset_rjob *r;
		char what[300];

		if (js->n_rjobs >= WORKLOAD_MAX_RJOBS) {
			/* parse_jobset's words: each pod would be refused with them */
			view_problem_as(
			    v, DENY_LIMIT,
			    "JobSet %s/%s has %d replicated Jobs, more than distenv's limit "
			    "of %d",
			    w->ns, w->name, cJSON_GetArraySize(json_get(spec, "replicatedJobs")),
			    WORKLOAD_MAX_RJOBS);
			break;
		}
		tmpls[js->n_rjobs] = json_get(jspec, "template");
		r = &js->rjobs[js->n_rjobs++];
		snprintf(r->name, sizeof(r->name), "%s", rname ? rname : "");
		r->jobs = json_long(rj, "replicas", INT_MAX, 1);
		r->pods = json_long(jspec, "completions", INT_MAX, 1);
		r->first = first;
		first += r->jobs * r->pods;
		snprintf(what, sizeof(what), "replicated Job %s", r->name);
		view_job(jspec, NULL, v, what);
	}
	w->count = first;
	if (w->n_tmpl == 0)
		return;
	view_coordinator(json_get(spec, "coordinator"), w, v);
	/* rank 0: the coordinator's pod, else the first pod of the first replicated Job */
	if ((r0 = rjob_of(&w->t, 0)) != NULL)
		w->rank0 = tmpls[r0 - js->rjobs];
	if (cJSON_IsFalse(json_get(net, "enableDNSHostnames")))
		view_problem(
		    v,
		    "JobSet %s turns network.enableDNSHostnames off, so its pods have no DNS "
		    "names: leave it on",
		    w->name);
	/* the JobSet controller makes the headless Service (publishNotReadyAddresses by default) */
	w->service = NULL;
	snprintf(w->t.service, sizeof(w->t.service), "%s", sub && sub[0] ? sub : w->name);
	if (cJSON_IsFalse(json_get(net, "publishNotReadyAddresses")))
		view_warn(
		    v,
		    "JobSet network.publishNotReadyAddresses is false: rank 0's name resolves only "
		    "once Ready");
	if (!cfg->lookups)
		view_lookups_off(w, tmpls, v);
}

/* -- the pods render makes -- */

/*
 * A JobSet: Job <js>-<rjob>-<j> per replica of each replicated Job, labelled and
 * annotated as jobset_controller.go's labelAndAnnotateObject does, each pod made
 * by the Job controller; the look-up answers with the JobSet itself.
 */
static int make_pods_jobset(const cJSON *doc, const char *name, const char *ns, struct pod_sink *s)
{
	const cJSON *spec = json_get(doc, "spec");
	const cJSON *net = json_get(spec, "network");
	const cJSON *dns = json_get(net, "enableDNSHostnames");
	const char *subdomain = json_str(net, "subdomain");
	struct workload_spec ws;
	char *txt = cJSON_PrintUnformatted(doc), job[320], which[352], buf[32], global[32];
	char coord[640];
	const cJSON *rj;
	long total_jobs = 0, j, i, gidx = 0;
	int k = 0;

	workload_spec_init(&ws);
	if (txt == NULL || parse_jobset(txt, strlen(txt), &ws, s->err, s->errlen) != 0) {
		if (txt == NULL)
			snprintf(s->err, s->errlen, "out of memory");
		free(txt);
		return -1;
	}
	free(txt);
	for (k = 0; k < ws.n_rjobs; k++)
		total_jobs += ws.rjobs[k].replicas;
	snprintf(global, sizeof(global), "%ld", total_jobs);
	if (subdomain == NULL || subdomain[0] == '\0')
		subdomain = name; /* GetSubdomain: the network subdomain, else the JobSet's name */
	k = 0;
	cJSON_ArrayForEach(rj, json_get(spec, "replicatedJobs"))
	{
		const struct workload_rjob *w = &ws.rjobs[k++];
		const cJSON *jt = json_get(json_get(json_get(rj, "template"), "spec"), "template");
		long pods = w->completions > 0 ? w->completions : 1;

		for (j = 0; j < w->replicas; j++, gidx++) {
			snprintf(job, sizeof(job), "%s-%s-%ld", name, w->name, j);
			for (i = 0; i < pods; i++) {
				cJSON *pod = kind_job_pod(jt, job, ns, i);
				static const char *const keys[] = {
				    JOBSET_NAME, JOBSET_RJOB, JOBSET_RJOB_REPS, JOBSET_GLOBAL_REPS,
				    JOBSET_JOB_INDEX};
				char reps[32], jidx[32];
				const char *vals[5];
				size_t m;

				snprintf(reps, sizeof(reps), "%ld", w->replicas);
				snprintf(jidx, sizeof(jidx), "%ld", j);
				vals[0] = name, vals[1] = w->name, vals[2] = reps, vals[3] = global,
				vals[4] = jidx;
				for (m = 0; pod != NULL && m < 5; m++)
					if (kind_pod_mark(pod, keys[m], vals[m], 1, 1) != 0) {
						cJSON_Delete(pod);
						pod = NULL;
					}
				snprintf(buf, sizeof(buf), "%ld", gidx);
				if (pod != NULL &&
				    kind_pod_mark(pod, JOBSET_GLOBAL_INDEX, buf, 1, 1) != 0) {
					cJSON_Delete(pod);
					pod = NULL;
				}
				/* CoordinatorEndpoint: "<js>-<rjob>-<j>-<i>.<subdomain>" */
				if (pod != NULL && ws.coordinator[0] != '\0' &&
				    (bounded_printf(coord, sizeof(coord), "%s-%s-%ld-%ld.%s", name,
				                    ws.coordinator, ws.coordinator_job,
				                    ws.coordinator_pod, subdomain) != 0 ||
				     kind_pod_mark(pod, JOBSET_COORDINATOR, coord, 1, 1) != 0)) {
					cJSON_Delete(pod);
					pod = NULL;
				}
				/* enableDNSHostnames defaults to true (the JobSet webhook) */
				if (pod != NULL && !cJSON_IsFalse(dns) &&
				    kind_pod_set(cJSON_GetObjectItemCaseSensitive(pod, "spec"),
				                 "subdomain", subdomain) != 0) {
					cJSON_Delete(pod);
					pod = NULL;
				}
				snprintf(which, sizeof(which), "%s-%ld", job, i);
				if (s->emit(s, pod, &ws, which) != 0)
					return -1;
			}
		}
	}
	return 0;
}

/* obj[key] = v when obj has no key. Returns 0, or -1 when memory ran out. */
static int default_str(cJSON *obj, const char *key, const char *v)
{
	if (!cJSON_IsObject(obj) || cJSON_HasObjectItem(obj, key))
		return 0;
	return cJSON_AddStringToObject(obj, key, v) != NULL ? 0 : -1;
}

static int default_bool(cJSON *obj, const char *key)
{
	if (!cJSON_IsObject(obj) || cJSON_HasObjectItem(obj, key))
		return 0;
	return cJSON_AddTrueToObject(obj, key) != NULL ? 0 : -1;
}

/*
 * JobSet's defaulting webhook, sigs.k8s.io/jobset v0.12.0
 * pkg/webhooks/jobset_webhook.go Default(): every replicated Job's
 * completionMode Indexed and its pods' restartPolicy OnFailure when unset;
 * network.enableDNSHostnames and publishNotReadyAddresses true when unset.
 */
static int defaults_jobset(cJSON *obj)
{
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec"), *rj, *net;

	if (!cJSON_IsObject(spec))
		return 0;
	cJSON_ArrayForEach(rj, cJSON_GetObjectItemCaseSensitive(spec, "replicatedJobs"))
	{
		cJSON *jspec = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(rj, "template"), "spec");
		cJSON *pspec = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(jspec, "template"), "spec");
		if (default_str(jspec, "completionMode", "Indexed") != 0 ||
		    default_str(pspec, "restartPolicy", "OnFailure") != 0)
			return -1;
	}
	net = cJSON_GetObjectItemCaseSensitive(spec, "network");
	if (net == NULL && (net = cJSON_AddObjectToObject(spec, "network")) == NULL)
		return -1;
	if (default_bool(net, "enableDNSHostnames") != 0 ||
	    default_bool(net, "publishNotReadyAddresses") != 0)
		return -1;
	return 0;
}

/* -- what doctor reads (struct kind_doctor) -- */

/*
 * The first replicated Job's pod template, and every replicated Job's Jobs
 * times their completions (else parallelism).
 */
static void doctor_want_jobset(const cJSON *spec, struct kind_doctor_want *out)
{
	const cJSON *rj = json_get(spec, "replicatedJobs");

	out->tmpl =
	    json_get(json_get(json_get(cJSON_IsArray(rj) ? rj->child : NULL, "template"), "spec"),
	             "template");
	out->world = 0;
	cJSON_ArrayForEach(rj, json_get(spec, "replicatedJobs"))
	{
		const cJSON *js = json_get(json_get(rj, "template"), "spec");
		long per = json_long(js, "completions", 1L << 20,
		                     json_long(js, "parallelism", 1L << 20, 1));
		out->world += json_long(rj, "replicas", 1L << 20, 1) * per;
	}
}

/* spec.network.subdomain, else the JobSet's name (the controller's Service). */
static const char *doctor_service_jobset(const cJSON *spec, const char *name)
{
	const char *s = json_str(json_get(spec, "network"), "subdomain");

	return s != NULL ? s : name;
}

static const struct kind_doctor doctor_jobset = {
    .words = (const char *const[]){"jobset", "jobsets", "js", "jobset.jobset.x-k8s.io",
                                   "jobsets.jobset.x-k8s.io", NULL},
    .example = "jobset/js",
    .want = doctor_want_jobset,
    .service = doctor_service_jobset,
    .events_by_prefix = 1,
};

const struct kind kind_jobset = {
    .doctor = &doctor_jobset,
    .api = {"JobSet", "jobset.x-k8s.io", "jobset.x-k8s.io/v1alpha2", "jobsets", parse_jobset},
    .owner_kind = "Job",
    .owner_group = "batch",
    .mark = JOBSET_NAME,
    .name_from = JOBSET_NAME,
    .fixed_world = 1,
    .count_noun = "pods",
    .restart = "delete and re-create JobSet %s",
    .no_subdomain_hint = ": leave the JobSet's spec.network.enableDNSHostnames on (the "
                         "default) so that its pods have stable names",
    .place = place_jobset,
    .templates = (const struct kind_template[]){{"spec.replicatedJobs[*].template.spec.template",
                                                 "replicated Job", 0},
                                                {NULL, NULL, 0}},
    .hostname = host_jobset,
    .host_run = run_jobset,
    .n_parts = n_parts_jobset,
    .part = part_jobset,
    .rank0_position = rank0_jobset,
    .view = view_jobset,
    .make_pods = make_pods_jobset,
    .defaults = defaults_jobset,
    .plural = "jobsets",
    .crd = 1,
    .supported = "a JobSet (jobset.x-k8s.io)",
    .label_prefixes = (const char *const[]){"jobset.sigs.k8s.io/", NULL},
};
