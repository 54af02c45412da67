/*
 * The Indexed Job: rank = the completion index, host <job>-<r>, the Service
 * spec.subdomain or distenv.dev/service. Everything distenv knows of the kind;
 * pure apart from the look-up the resolution passes in.
 */
#include "kind.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static int job_would_deny(const struct resolve *rs, const struct workload_spec *ws)
{
	long world = rs->ann_world > 0 ? rs->ann_world : ws->completions;

	return !ws->indexed ||
	       (ws->completions > 0 && ws->parallelism >= 0 && ws->parallelism < ws->completions) ||
	       world < 0 || rs->t->rank >= world;
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
		struct workload_ref ref = {WORKLOAD_JOB, rs->ns, rs->owner_name,
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
		if (ws.completions > 0 && ws.parallelism >= 0 && ws.parallelism < ws.completions)
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
	w->t.kind = WORKLOAD_JOB;
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

const struct kind kind_job = {
    .kind = WORKLOAD_JOB,
    .api = {"Job", "batch", "batch/v1", "jobs", parse_job},
    .owner_kind = "Job",
    .owner_group = "batch",
    .count_noun = "completions",
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
    .templates = (const struct kind_template[]){{"spec.template", NULL}, {NULL, NULL}},
    .hostname = host_job,
    .view = view_indexed_job,
};
