/*
 * Apply-time validation: each kind's pod templates and counts are read into
 * one view (the ranks, their hosts and their Service), then the same checks run
 * for every kind. Pure apart from the Service look-up; nothing is kept.
 */
#include "validate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotation.h"
#include "envgen.h"
#include "plan.h"
#include "topology.h"
#include "util.h"

/* One workload as the checks see it. */
struct view {
	const char *kind, *name, *ns;
	const cJSON *tmpl[WORKLOAD_MAX_RJOBS + 1]; /* the opted-in pod templates */
	int n_tmpl;
	long count;          /* replicas / completions / all pods / group size */
	const char *service; /* the Service to check; NULL when the controller makes it */
	struct topology t;   /* ranks and hosts (no targets) */
};

static void problem(struct validation *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void warn(struct validation *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void problem(struct validation *v, const char *fmt, ...)
{
	size_t used = strlen(v->denial);
	va_list ap;

	if (used == 0)
		used = (size_t)snprintf(v->denial, sizeof(v->denial), "distenv: ");
	else if (used + 2 < sizeof(v->denial))
		used += (size_t)snprintf(v->denial + used, sizeof(v->denial) - used, "; ");
	if (used < sizeof(v->denial)) {
		va_start(ap, fmt);
		vsnprintf(v->denial + used, sizeof(v->denial) - used, fmt, ap);
		va_end(ap);
	}
	if (v->n_problems++ == 0)
		v->reason = DENY_WORKLOAD; /* the first problem names the reason */
}

/* A warning, "distenv: ..." cut to VALIDATE_WARNING_LEN - 1 characters. */
static void warn(struct validation *v, const char *fmt, ...)
{
	char buf[VALIDATE_WARNING_LEN];
	va_list ap;

	if (v->n_warnings >= VALIDATE_MAX_WARNINGS)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* "distenv: " and the text, cut to fit (the API server's guidance: under 120) */
	memcpy(v->warnings[v->n_warnings], "distenv: ", 9);
	memcpy(v->warnings[v->n_warnings] + 9, buf, VALIDATE_WARNING_LEN - 10);
	v->warnings[v->n_warnings][VALIDATE_WARNING_LEN - 1] = '\0';
	v->n_warnings++;
}

static const cJSON *child(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static long num(const cJSON *o, const char *k, long dflt)
{
	const cJSON *it = child(o, k);

	if (cJSON_IsNumber(it) && it->valuedouble >= 0 && it->valuedouble <= 2147483647.0)
		return (long)it->valuedouble;
	return dflt;
}

static int opted_in(const cJSON *tmpl)
{
	const char *v = json_str(child(child(tmpl, "metadata"), "labels"), LABEL_INJECT);

	return v != NULL && strcmp(v, "true") == 0;
}

static void add_template(struct view *w, const cJSON *tmpl)
{
	if (cJSON_IsObject(tmpl) && opted_in(tmpl) &&
	    w->n_tmpl < (int)(sizeof(w->tmpl) / sizeof(w->tmpl[0])))
		w->tmpl[w->n_tmpl++] = tmpl;
}

/* -- each kind into the view -- */

static void view_statefulset(const cJSON *spec, struct view *w, struct validation *v)
{
	const char *policy = json_str(spec, "podManagementPolicy");

	add_template(w, child(spec, "template"));
	w->count = num(spec, "replicas", 1);
	w->t.kind = WORKLOAD_STATEFULSET;
	w->t.start = num(child(spec, "ordinals"), "start", 0);
	w->service = json_str(spec, "serviceName");
	if (w->n_tmpl == 0)
		return;
	/* kubernetes#64023: the controller-revision-hash label of its pods passes 63 characters */
	if (strlen(w->name) > 52)
		problem(
		    v,
		    "StatefulSet name %s is %zu characters; above 52 its pods cannot be created: "
		    "shorten it",
		    w->name, strlen(w->name));
	if (w->service == NULL || w->service[0] == '\0')
		problem(
		    v,
		    "StatefulSet %s has no spec.serviceName, so its pods have no DNS names: set it "
		    "to a headless Service that selects them",
		    w->name);
	if (policy == NULL || strcmp(policy, "Parallel") != 0)
		warn(v,
		     "podManagementPolicy OrderedReady: pod N+1 waits for pod N to be Ready; use "
		     "Parallel");
}

static void view_job(const cJSON *spec, const cJSON *tmpl, struct validation *v, const char *what)
{
	const char *mode = json_str(spec, "completionMode");
	long completions = num(spec, "completions", -1), parallelism = num(spec, "parallelism", 1);

	if (mode == NULL || strcmp(mode, "Indexed") != 0)
		problem(v,
		        "%s is not an Indexed Job, so its pods have no rank: set "
		        "spec.completionMode: Indexed",
		        what);
	if (completions < 1)
		problem(v, "%s has no spec.completions (the number of ranks)", what);
	else if (parallelism < completions)
		problem(v,
		        "%s has parallelism %ld below completions %ld, so not all ranks can run "
		        "at once: set them equal",
		        what, parallelism, completions);
	(void)tmpl;
}

static void view_indexed_job(const cJSON *spec, struct view *w, struct validation *v)
{
	const cJSON *tmpl = child(spec, "template");
	const char *sub = json_str(child(tmpl, "spec"), "subdomain");
	const char *ann = json_str(child(child(tmpl, "metadata"), "annotations"), ANN_SERVICE);
	char what[300];

	add_template(w, tmpl);
	w->count = num(spec, "completions", -1);
	w->t.kind = WORKLOAD_JOB;
	if (w->n_tmpl == 0)
		return;
	snprintf(what, sizeof(what), "Job %s", w->name);
	view_job(spec, tmpl, v, what);
	w->service = sub && sub[0] ? sub : ann;
	if (w->service == NULL || w->service[0] == '\0')
		problem(v,
		        "Job %s's pod template has no spec.subdomain: point it at a headless "
		        "Service, or set the annotation %s",
		        w->name, ANN_SERVICE);
}

/* spec.coordinator names one of the JobSet's pods, which becomes rank 0. */
static void view_coordinator(const cJSON *coord, struct view *w, struct validation *v)
{
	const char *rjob = json_str(coord, "replicatedJob");
	long j = num(coord, "jobIndex", 0), i = num(coord, "podIndex", 0);
	int k;

	if (coord == NULL)
		return;
	for (k = 0; rjob != NULL && k < w->t.n_rjobs; k++) {
		const struct topology_rjob *r = &w->t.rjobs[k];
		if (strcmp(r->name, rjob) != 0)
			continue;
		if (j >= 0 && j < r->jobs && i >= 0 && i < r->pods) {
			w->t.coordinator = r->first + j * r->pods + i;
			return;
		}
		break;
	}
	problem(v,
	        "the coordinator of JobSet %s (replicated Job %.63s, Job %ld, pod %ld) is not one "
	        "of its pods, so no pod could be rank 0: name a replicated Job, jobIndex and "
	        "podIndex that exist",
	        w->name, rjob ? rjob : "(none)", j, i);
}

static void view_jobset(const cJSON *spec, struct view *w, struct validation *v)
{
	const cJSON *rj, *net = child(spec, "network");
	const char *sub = json_str(net, "subdomain");
	long first = 0;

	w->t.kind = WORKLOAD_JOBSET;
	cJSON_ArrayForEach(rj, child(spec, "replicatedJobs"))
	{
		const cJSON *jspec = child(child(rj, "template"), "spec");
		const char *rname = json_str(rj, "name");
		struct topology_rjob *r;
		char what[300];

		add_template(w, child(jspec, "template"));
		if (w->t.n_rjobs >= WORKLOAD_MAX_RJOBS) {
			problem(v, "JobSet %s has more than %d replicated Jobs", w->name,
			        WORKLOAD_MAX_RJOBS);
			break;
		}
		r = &w->t.rjobs[w->t.n_rjobs++];
		snprintf(r->name, sizeof(r->name), "%s", rname ? rname : "");
		r->jobs = num(rj, "replicas", 1);
		r->pods = num(jspec, "completions", 1);
		r->first = first;
		first += r->jobs * r->pods;
		snprintf(what, sizeof(what), "replicated Job %s", r->name);
		view_job(jspec, NULL, v, what);
	}
	w->count = first;
	if (w->n_tmpl == 0)
		return;
	view_coordinator(child(spec, "coordinator"), w, v);
	if (cJSON_IsFalse(child(net, "enableDNSHostnames")))
		problem(v,
		        "JobSet %s turns network.enableDNSHostnames off, so its pods have no DNS "
		        "names: leave it on",
		        w->name);
	/* the JobSet controller makes the headless Service (publishNotReadyAddresses by default) */
	w->service = NULL;
	snprintf(w->t.service, sizeof(w->t.service), "%s", sub && sub[0] ? sub : w->name);
	if (cJSON_IsFalse(child(net, "publishNotReadyAddresses")))
		warn(
		    v,
		    "JobSet network.publishNotReadyAddresses is false: rank 0's name resolves only "
		    "once Ready");
}

static void view_lws(const cJSON *spec, struct view *w, struct validation *v)
{
	const cJSON *lwt = child(spec, "leaderWorkerTemplate");
	long groups = num(spec, "replicas", 1);

	add_template(w, child(lwt, "workerTemplate"));
	add_template(w, child(lwt, "leaderTemplate"));
	w->count = num(lwt, "size", 1);
	w->t.kind = WORKLOAD_LWS;
	w->t.group = groups > 0 ? groups - 1 : 0; /* the longest names are the last group's */
	w->service = NULL;                        /* the LeaderWorkerSet controller makes it */
	snprintf(w->t.service, sizeof(w->t.service), "%s", w->name);
	(void)v;
}

/* -- the checks every kind shares -- */

static void check_annotations(const struct view *w, const struct config *cfg, struct validation *v,
                              long *world)
{
	int i, n_unknown;

	*world = -1;
	for (i = 0; i < w->n_tmpl; i++) {
		const cJSON *anns = child(child(w->tmpl[i], "metadata"), "annotations");
		const char *ws = json_str(anns, ANN_WORLD_SIZE);
		char err[1024], unknown[512];
		long n;

		if (annotation_check_all(anns, cfg, err, sizeof(err), unknown, sizeof(unknown),
		                         &n_unknown) > 0) {
			int first = v->n_problems == 0;
			problem(v, "%s", err);
			if (first)
				v->reason = DENY_ANNOTATION;
		}
		if (n_unknown > 0)
			warn(v, "unknown annotation %.80s (ignored)", unknown);
		if (ws != NULL && parse_long(ws, 1, cfg->max_world_size, &n) == 0)
			*world = n;
	}
}

/* The label selector matches the template's labels. */
static int selects(const struct service_info *si, const cJSON *tmpl)
{
	const cJSON *labels = child(child(tmpl, "metadata"), "labels");
	int i;

	if (si->n_selector <= 0)
		return 0;
	for (i = 0; i < si->n_selector; i++) {
		const char *have = json_str(labels, si->selector[i][0]);
		if (have == NULL || strcmp(have, si->selector[i][1]) != 0)
			return 0;
	}
	return 1;
}

/* The Service from the manifest (render), as the API would answer; 1 found, 0 not. */
static int service_from(const cJSON *services, const char *ns, const char *name,
                        struct service_info *si, char *err, size_t errlen)
{
	const cJSON *s;

	cJSON_ArrayForEach(s, services)
	{
		const cJSON *meta = child(s, "metadata");
		const char *sns = json_str(meta, "namespace");
		char *txt;
		int rc;

		if (!json_str(meta, "name") || strcmp(json_str(meta, "name"), name) != 0 ||
		    (sns && sns[0] && strcmp(sns, ns) != 0))
			continue;
		txt = cJSON_PrintUnformatted(s);
		rc = txt && workload_parse_service(txt, strlen(txt), si, err, errlen) == 0;
		free(txt);
		return rc ? 1 : -1;
	}
	return 0;
}

static void check_service(const struct view *w, const struct workload_lookup *lookup,
                          const cJSON *services, struct validation *v)
{
	struct service_info si;
	char err[256];
	int found;

	if (w->service == NULL || w->service[0] == '\0' || !dns_label_valid(w->service))
		return;
	memset(&si, 0, sizeof(si));
	if (services != NULL)
		found = service_from(services, w->ns, w->service, &si, err, sizeof(err));
	else if (lookup != NULL && lookup->get_service != NULL)
		found = lookup->get_service(lookup->ctx, w->ns, w->service, &si, err, sizeof(err));
	else
		return;
	if (found < 0) {
		warn(v, "cannot check Service %.40s: %.60s", w->service, err);
		return;
	}
	if (found == 0) {
		warn(v, "Service %.50s not found in %.30s: MASTER_ADDR will not resolve",
		     w->service, w->ns);
		return;
	}
	if (!si.headless)
		warn(v,
		     "Service %.50s is not headless (clusterIP: None): pod names will not resolve",
		     w->service);
	if (!selects(&si, w->tmpl[0]))
		warn(v, "Service %.50s does not select the pod template's labels", w->service);
	if (!si.publish_not_ready)
		warn(
		    v,
		    "Service %.40s lacks publishNotReadyAddresses: true; rank 0 resolves only when "
		    "Ready",
		    w->service);
}

/*
 * A StatefulSet whose ordinals start above 0 needs the look-ups: its pods do not
 * carry the start, and without it rank 0 would be <sts>-0, a pod that never
 * exists. A LeaderWorkerSet's worker StatefulSets (ordinals from 1) are not
 * concerned: their pods' ranks come from the LeaderWorkerSet's own labels.
 */
static void check_start(const struct view *w, const struct config *cfg, struct validation *v)
{
	const cJSON *meta = child(w->tmpl[0], "metadata");

	if (w->t.kind != WORKLOAD_STATEFULSET || w->t.start <= 0 || cfg->lookups ||
	    json_str(child(meta, "labels"), LWS_NAME) != NULL ||
	    json_str(child(meta, "annotations"), LWS_NAME) != NULL)
		return;
	problem(v,
	        "StatefulSet %s starts its ordinals at %ld (spec.ordinals.start), which its pods "
	        "do not carry, and look-ups are off, so rank 0 would be %.63s-0, a pod that never "
	        "exists: turn look-ups on (lookups.enabled, no --no-lookups), or start at 0",
	        w->name, w->t.start, w->name);
}

/* Every host a DNS label; the TF_CONFIG of the world within the exec limit. */
static void check_world(struct view *w, const struct config *cfg, long world, struct validation *v)
{
	const cJSON *anns = child(child(w->tmpl[0], "metadata"), "annotations");
	const char *fws = json_str(anns, ANN_FRAMEWORKS), *el = json_str(anns, ANN_ELASTIC);
	struct topology *t = &w->t;
	struct env_list env;
	unsigned frameworks = cfg->default_frameworks;
	char host[320];
	long lo, hi;
	size_t i;
	long p;

	if (world < 1 || world > cfg->max_world_size)
		return;
	snprintf(t->workload, sizeof(t->workload), "%s", w->name);
	snprintf(t->ns, sizeof(t->ns), "%s", w->ns);
	if (t->service[0] == '\0')
		snprintf(t->service, sizeof(t->service), "%s", w->service ? w->service : "svc");
	t->world_size = world;
	for (p = world - 1; p >= 0;) {
		long r = topology_rank_at(t, p);
		const struct topology_rjob *k = topology_rjob_of(t, r);
		if (topology_hostname(t, r, host, sizeof(host)) < 0 || !dns_label_valid(host)) {
			problem(
			    v,
			    "the hostname of rank %ld of %s %s is not a DNS label of at most 63 "
			    "characters: shorten the names",
			    r, w->kind, w->name);
			return;
		}
		p = k ? k->first - 1 : -1;
	}
	if (el != NULL && annotation_range(el, cfg->max_world_size, &lo, &hi) == 0) {
		if (lo > world)
			problem(
			    v,
			    "annotation %s: MIN %ld is above the world size %ld, so torchrun would "
			    "wait for nodes that never exist",
			    ANN_ELASTIC, lo, world);
		else if (hi > world)
			warn(v,
			     "elastic MAX %ld is above the world size %ld: more nodes join only "
			     "when the workload is scaled up",
			     hi, world);
	}
	if (fws != NULL && config_parse_frameworks(fws, &frameworks) != 0)
		return;
	if (!(frameworks & FW_TENSORFLOW))
		return;
	if (bounded_printf(t->domain, sizeof(t->domain), ".%s.%s.svc.%s", t->service, w->ns,
	                   cfg->cluster_domain) != 0)
		return;
	t->rank = world - 1;
	t->port = cfg->default_port;
	t->frameworks = FW_TENSORFLOW;
	t->tf_roles = 0;
	if (envgen_build(t, &env) != 0)
		return;
	for (i = 0; i < env.n; i++) {
		size_t sz = strlen(env.vars[i].name) + strlen(env.vars[i].value) + 2;
		if (sz <= ENV_STRING_MAX)
			continue;
		if (fws != NULL)
			problem(v,
			        "TF_CONFIG would be about %zu bytes for %ld ranks, above Linux's "
			        "limit of "
			        "%d bytes for one environment string: drop tensorflow from %s",
			        sz, world, ENV_STRING_MAX, ANN_FRAMEWORKS);
		else
			warn(v,
			     "TF_CONFIG (%zu bytes for %ld ranks) passes Linux's %d: it will be "
			     "left out",
			     sz, world, ENV_STRING_MAX);
	}
	env_list_free(&env);
}

int validate_kind_known(const char *group, const char *kind)
{
	static const struct {
		const char *group, *kind;
	} known[] = {{"apps", "StatefulSet"},
	             {"batch", "Job"},
	             {"jobset.x-k8s.io", "JobSet"},
	             {"leaderworkerset.x-k8s.io", "LeaderWorkerSet"}};
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (group && kind && strcmp(group, known[i].group) == 0 &&
		    strcmp(kind, known[i].kind) == 0)
			return 1;
	return 0;
}

void validate_workload(const cJSON *obj, const char *kind, const char *ns, const struct config *cfg,
                       const struct workload_lookup *lookup, const cJSON *services,
                       struct validation *v)
{
	const cJSON *spec = child(obj, "spec");
	const char *name = json_str(child(obj, "metadata"), "name");
	struct view *w;
	long world;

	memset(v, 0, sizeof(*v));
	w = calloc(1, sizeof(*w));
	if (w == NULL) {
		problem(v, "out of memory");
		return;
	}
	w->kind = kind;
	w->name = name ? name : "";
	w->ns = ns;
	w->t.group = -1;
	if (strcmp(kind, "StatefulSet") == 0)
		view_statefulset(spec, w, v);
	else if (strcmp(kind, "Job") == 0)
		view_indexed_job(spec, w, v);
	else if (strcmp(kind, "JobSet") == 0)
		view_jobset(spec, w, v);
	else if (strcmp(kind, "LeaderWorkerSet") == 0)
		view_lws(spec, w, v);
	v->opted_in = w->n_tmpl > 0;
	if (!v->opted_in) {
		/* only opted-in workloads are checked: what a kind view found does not count */
		memset(v, 0, sizeof(*v));
		free(w);
		return;
	}
	check_annotations(w, cfg, v, &world);
	if (world > 0 && w->count >= 0 && world != w->count) {
		if (w->t.kind == WORKLOAD_JOBSET || w->t.kind == WORKLOAD_LWS)
			problem(v,
			        "annotation %s is %ld, but %s %s has %ld pods per world: remove it",
			        ANN_WORLD_SIZE, world, kind, w->name, w->count);
		else if (world > w->count)
			warn(
			    v,
			    "world size %ld (annotation) is above the %ld %s: ranks from %ld never "
			    "start and the job waits",
			    world, w->count, w->t.kind == WORKLOAD_JOB ? "completions" : "replicas",
			    w->count);
		else
			warn(v,
			     "world size %ld (annotation) is below the %ld %s: pods from rank %ld "
			     "are "
			     "denied",
			     world, w->count,
			     w->t.kind == WORKLOAD_JOB ? "completions" : "replicas", world);
	}
	if (world <= 0 || w->t.kind == WORKLOAD_JOBSET || w->t.kind == WORKLOAD_LWS)
		world = w->count;
	check_start(w, cfg, v);
	check_world(w, cfg, world, v);
	check_service(w, lookup, services, v);
	free(w);
}
