/*
 * The Indexed Job: rank = the completion index, host <job>-<r>, the Service
 * spec.subdomain or distenv.dev/service. Everything distenv knows of the kind;
 * pure apart from the look-up the resolution passes in.
 */
#include "kinds.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "util.h"

/* 1 when the Job runs fewer pods at once than it has ranks (parallelism below completions). */
static int runs_fewer(const struct workload_spec *ws)
{
	return ws->completions > 0 && ws->parallelism >= 0 && ws->parallelism < ws->completions;
}

static int job_would_deny(const struct resolve *rs, const struct workload_spec *ws)
{
	long world = rs->ann_world > 0 ? rs->ann_world : ws->completions;

	return !ws->indexed || runs_fewer(ws) || world < 0 || rs->t->rank >= world;
}

static enum topology_status place_job(struct resolve *rs)
{
	struct topology *t = rs->t;
	struct workload_spec ws;
	enum topology_status rc;

	if ((rc = resolve_completion_index(rs, "Job", &t->rank)) != TOPOLOGY_OK)
		return rc;
	workload_spec_init(&ws);
	if (rs->lookup != NULL) {
		struct workload_ref ref = {&kind_job, rs->ns, rs->owner_name,
		                           json_str(rs->owner, "uid")};
		rc = resolve_fetch(rs, &ref, job_would_deny, &ws,
		                   rs->ann_world <= 0
		                       ? "the world size is not known"
		                       : "its completion mode and parallelism cannot be checked");
		if (rc != TOPOLOGY_OK)
			return rc;
		if (!ws.indexed)
			return resolve_deny(
			    rs, DENY_WORKLOAD,
			    "Job %s/%s is not an Indexed Job: distenv supports only pods of a "
			    "StatefulSet or of an Indexed Job (set spec.completionMode: Indexed)",
			    rs->ns, rs->owner_name);
		if (runs_fewer(&ws) && ws.partial_admission)
			return resolve_deny(
			    rs, DENY_WORKLOAD,
			    "Job %s/%s runs %ld of its %ld ranks at once, as Kueue admitted it "
			    "(kueue.x-k8s.io/job-min-parallelism), so they can never form one "
			    "world: "
			    "give the Job kueue.x-k8s.io/job-completions-equal-parallelism: "
			    "\"true\" "
			    "so that its completions follow",
			    rs->ns, rs->owner_name, ws.parallelism, ws.completions);
		if (runs_fewer(&ws))
			return resolve_deny(
			    rs, DENY_WORKLOAD,
			    "Job %s/%s has parallelism %ld below completions %ld, so not all ranks "
			    "can run at once: set parallelism equal to completions",
			    rs->ns, rs->owner_name, ws.parallelism, ws.completions);
	}
	return resolve_set_world(rs, ws.completions);
}

static int host_job(const struct topology *t, long r, char *out, size_t outlen)
{
	return kind_host_name(out, outlen, t->workload, NULL, r, -1);
}

/* "<job>-" and r on: every rank to the world's end. */
static long run_job(const struct topology *t, long r, char *out, size_t outlen, size_t *plen,
                    long *first)
{
	return kind_host_run(out, outlen, t->workload, NULL, -1, r, t->world_size - r, plen, first);
}

static int parse_job(const char *json, size_t len, struct workload_spec *out, char *err,
                     size_t errlen)
{
	struct workload_spec s;
	const cJSON *spec;
	cJSON *j;
	int rc = -1;

	workload_spec_init(&s);
	if ((j = workload_parse_object(json, len, "Job", &s, &spec, err, errlen)) == NULL)
		return -1;
	if (workload_read_job_spec(spec, "Job .spec", &s.completions, &s.parallelism, &s.indexed,
	                           err, errlen) < 0)
		goto out;
	s.partial_admission = json_str(json_get(json_get(j, "metadata"), "annotations"),
	                               "kueue.x-k8s.io/job-min-parallelism") != NULL;
	*out = s;
	rc = 0;
out:
	cJSON_Delete(j);
	return rc;
}

static void view_indexed_job(const cJSON *spec, const struct config *cfg, struct view *w,
                             struct validation *v)
{
	const cJSON *tmpl = json_get(spec, "template");
	const char *sub = json_str(json_get(tmpl, "spec"), "subdomain");
	const char *ann =
	    json_str(json_get(json_get(tmpl, "metadata"), "annotations"), ANN_SERVICE);
	char what[300];

	(void)cfg;
	w->rank0 = tmpl;
	w->count = json_long(spec, "completions", INT_MAX, -1);
	w->t.kind = &kind_job;
	if (w->n_tmpl == 0)
		return;
	snprintf(what, sizeof(what), "Job %s", w->name);
	view_job(spec, tmpl, v, what);
	w->service = sub && sub[0] ? sub : ann;
	if (w->service == NULL || w->service[0] == '\0')
		view_problem(v,
		             "Job %s's pod template has no spec.subdomain: point it at a headless "
		             "Service, or set the annotation %s",
		             w->name, ANN_SERVICE);
}

/* -- the pods render makes (kind_job_pod: kinds/kind.c) -- */

static int make_pods_job(const cJSON *obj, const char *name, const char *ns, struct pod_sink *s)
{
	const cJSON *spec = json_get(obj, "spec");
	const cJSON *tmpl = json_get(spec, "template");
	const char *mode = json_str(spec, "completionMode");
	struct workload_spec ws;
	long i, n;
	char which[32];

	workload_spec_init(&ws);
	/* counts are int32 in the API: one past 10^9 is too many pods to render, not 1 */
	ws.completions = json_long(spec, "completions", INT_MAX, -1);
	ws.parallelism = json_long(spec, "parallelism", INT_MAX, 1);
	ws.indexed = mode != NULL && strcmp(mode, "Indexed") == 0;
	if (s->world_size > 0)
		ws.completions = ws.parallelism = s->world_size;
	n = ws.completions > 0 ? ws.completions : 1;
	for (i = 0; i < n; i++) {
		snprintf(which, sizeof(which), "%ld", i);
		if (s->emit(s, kind_job_pod(tmpl, name, ns, i), &ws, which) != 0)
			return -1;
	}
	return 0;
}

/* -- what doctor reads (struct kind_doctor) -- */

/* Its template and completions. */
static void doctor_want_job(const cJSON *spec, struct kind_doctor_want *out)
{
	out->tmpl = json_get(spec, "template");
	out->world = json_long(spec, "completions", 1L << 20, -1);
}

/* The completion index the Job controller writes on the pod. */
static void doctor_place_job(const cJSON *labels, const cJSON *anns, long start, long *rank,
                             long *group)
{
	(void)labels;
	(void)start;
	(void)group;
	if (*rank < 0)
		*rank = kind_map_long(anns, ANN_JOB_INDEX);
}

static void doctor_name_job(const char *name, long start, long g, long r, char *out, size_t len)
{
	(void)start;
	(void)g;
	snprintf(out, len, "%s-%ld-…", name, r);
}

/* The template's spec.subdomain, else its distenv.dev/service. */
static const char *doctor_service_job(const cJSON *spec, const char *name)
{
	const cJSON *tpl = json_get(spec, "template");
	const char *s = json_str(json_get(tpl, "spec"), "subdomain");

	(void)name;
	return s != NULL
	           ? s
	           : json_map_str(json_get(json_get(tpl, "metadata"), "annotations"), ANN_SERVICE);
}

static const struct kind_doctor doctor_job = {
    .words = (const char *const[]){"job", "jobs", "job.batch", "jobs.batch", NULL},
    .example = "job/train",
    .pods_label = "batch.kubernetes.io/job-name",
    .want = doctor_want_job,
    .pod_place = doctor_place_job,
    .rank_name = doctor_name_job,
    .service = doctor_service_job,
};

const struct kind kind_job = {
    .doctor = &doctor_job,
    .api = {"Job", "batch", "batch/v1", "jobs", parse_job},
    .owner_kind = "Job",
    .owner_group = "batch",
    .count_noun = "completions",
    .restart = "delete and re-create Job %s",
    .place = place_job,
    /* the Job API's generated selector and the Job controller's index (k8s 1.28+) */
    .pod_labels =
        (const struct kind_label[]){
            {"job-name", KIND_LABEL_NAME},
            {"batch.kubernetes.io/job-name", KIND_LABEL_NAME},
            {"controller-uid", KIND_LABEL_UNKNOWN},
            {"batch.kubernetes.io/controller-uid", KIND_LABEL_UNKNOWN},
            {"batch.kubernetes.io/job-completion-index", KIND_LABEL_PER_POD},
            {NULL, KIND_LABEL_UNKNOWN}},
    .templates = (const struct kind_template[]){{"spec.template", NULL, 0}, {NULL, NULL, 0}},
    .hostname = host_job,
    .host_run = run_job,
    .view = view_indexed_job,
    .make_pods = make_pods_job,
    .needs_spec_template = 1,
    .plural = "jobs",
    .supported = "an Indexed Job (batch/v1, completionMode: Indexed)",
    .label_prefixes = (const char *const[]){"batch.kubernetes.io/", NULL},
};
