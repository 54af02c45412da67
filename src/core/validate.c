/*
 * Apply-time validation: each kind's pod templates and counts are read into
 * one view (the ranks, their hosts and their Service), then the same checks run
 * for every kind. Pure apart from the Service look-up; nothing is kept.
 */
#include "validate.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotation.h"
#include "env.h"
#include "framework.h"
#include "kind.h"
#include "topology.h"
#include "util.h"
#include "dns.h"
#include "json.h"
#include "plan.h"
#include "targets.h"
#include "validate_int.h"

#define KUEUE_MIN_PARALLELISM "kueue.x-k8s.io/job-min-parallelism"
#define KUEUE_EQUAL           "kueue.x-k8s.io/job-completions-equal-parallelism"
#define KUEUE_ELASTIC         "kueue.x-k8s.io/elastic-job"

static void view_vproblem(struct validation *v, enum deny_reason reason, const char *fmt,
                          va_list ap)
{
	size_t used = strlen(v->denial);

	if (used == 0)
		used = (size_t)snprintf(v->denial, sizeof(v->denial), "distenv: ");
	else if (used + 2 < sizeof(v->denial))
		used += (size_t)snprintf(v->denial + used, sizeof(v->denial) - used, "; ");
	if (used < sizeof(v->denial))
		vsnprintf(v->denial + used, sizeof(v->denial) - used, fmt, ap);
	if (v->n_problems++ == 0)
		v->reason = reason; /* the first problem names the reason */
}

void view_problem(struct validation *v, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	view_vproblem(v, DENY_WORKLOAD, fmt, ap);
	va_end(ap);
}

void view_problem_as(struct validation *v, enum deny_reason reason, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	view_vproblem(v, reason, fmt, ap);
	va_end(ap);
}

/* Keeps "distenv: <text>" (text cut to fit under 120), once. */
static void warn_text(struct validation *v, const char *text)
{
	char w[VALIDATE_WARNING_LEN];
	int i;

	snprintf(w, sizeof(w), "distenv: %s", text);
	for (i = 0; i < v->n_warnings; i++)
		if (strcmp(v->warnings[i], w) == 0)
			return;
	if (v->n_warnings >= VALIDATE_MAX_WARNINGS) {
		v->n_more++; /* past the list: counted (each distinct one is not known) */
		return;
	}
	memcpy(v->warnings[v->n_warnings++], w, sizeof(w));
}

void view_warn(struct validation *v, const char *fmt, ...)
{
	char buf[VALIDATE_WARNING_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	warn_text(v, buf);
}

/* "distenv: <what>: <msg>", what shortened so that msg fits; msg alone when what is "". */
static void warn_named(struct validation *v, const char *what, const char *msg)
{
	char buf[2 * VALIDATE_WARNING_LEN + 96]; /* warn_text cuts */
	/* room for the name: under 120 with "distenv: ", ": " and the message */
	int room = VALIDATE_WARNING_LEN - 1 - 9 - 2, len;

	if (what[0] == '\0') {
		warn_text(v, msg);
		return;
	}
	room -= (int)strlen(msg);
	len = (int)strlen(what);
	if (room < 16)
		room = 16; /* the name matters more than the message's last words */
	if (len <= room)
		snprintf(buf, sizeof(buf), "%s: %s", what, msg);
	else
		snprintf(buf, sizeof(buf), "%.*s...: %s", room - 3, what, msg);
	warn_text(v, buf);
}

void view_warn_template(struct validation *v, const struct view *w, int i, const char *fmt, ...)
{
	char msg[VALIDATE_WARNING_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	warn_named(v, w->tmpl_what[i], msg);
}

/*
 * A pod template of an opted-in workload that does not opt in itself (a
 * kind_each_template fn): its pods are counted in the world (every pod of a
 * JobSet, every pod of a LeaderWorkerSet group) but get nothing.
 */
static void warn_not_opted(void *ctx, const cJSON *tmpl, const char *what)
{
	if (kind_template_opts_in(tmpl) || what[0] == '\0')
		return;
	warn_named(ctx, what,
	           "no label " LABEL_INJECT ", so its pods get no env, yet WORLD_SIZE counts them");
}

/*
 * Keeps tmpl among the view's pod templates (every one: whose pods must reach
 * rank 0), and among the opted-in ones when it opts in (kind_each_template's fn).
 */
static void add_template(void *ctx, const cJSON *tmpl, const char *what)
{
	struct view *w = ctx;

	if (cJSON_IsObject(tmpl) && w->n_pods < (int)(sizeof(w->pods) / sizeof(w->pods[0])))
		w->pods[w->n_pods++] = tmpl;
	if (!kind_template_opts_in(tmpl) ||
	    w->n_tmpl >= (int)(sizeof(w->tmpl) / sizeof(w->tmpl[0])))
		return;
	snprintf(w->tmpl_what[w->n_tmpl], sizeof(w->tmpl_what[0]), "%s", what);
	w->tmpl[w->n_tmpl++] = tmpl;
}

/* -- each kind into the view -- */

void view_job(const cJSON *spec, const cJSON *tmpl, struct validation *v, const char *what)
{
	const char *mode = json_str(spec, "completionMode");
	long completions = json_long(spec, "completions", INT_MAX, -1),
	     parallelism = json_long(spec, "parallelism", INT_MAX, 1);

	if (mode == NULL || strcmp(mode, "Indexed") != 0)
		view_problem(v,
		             "%s is not an Indexed Job, so its pods have no rank: set "
		             "spec.completionMode: Indexed",
		             what);
	if (completions == 0)
		view_problem(v,
		             "%s has spec.completions 0, so it has no ranks: set spec.completions "
		             "to the number of ranks",
		             what);
	else if (completions < 1)
		view_problem(v, "%s has no spec.completions (the number of ranks)", what);
	else if (parallelism < completions && v->partial_admission) {
		view_warn(v, "%s runs %ld of its %ld ranks at once, as Kueue admitted it", what,
		          parallelism, completions);
		view_warn(v, "so its pods are refused: give it %s: \"true\"", KUEUE_EQUAL);
	} else if (parallelism < completions)
		view_problem(
		    v,
		    "%s has parallelism %ld below completions %ld, so not all ranks can run "
		    "at once: set them equal",
		    what, parallelism, completions);
	(void)tmpl;
}

/* -- the checks every kind shares -- */

/*
 * The world the opted-in templates' distenv.dev/world-size gives (the last
 * valid one), or -1 when none gives one; *from the template that gives it
 * (NULL: not wanted).
 */
static long annotated_world(const struct view *w, const struct config *cfg, int *from)
{
	long world = -1, n;
	int i;

	for (i = 0; i < w->n_tmpl; i++) {
		const char *ws = json_str(json_get(json_get(w->tmpl[i], "metadata"), "annotations"),
		                          ANN_WORLD_SIZE);

		if (ws != NULL && parse_long(ws, 1, cfg->max_world_size, &n) == 0) {
			world = n;
			if (from != NULL)
				*from = i;
		}
	}
	return world;
}

/* 1 when an opted-in template of w carries the annotation ann, valid or not. */
static int tmpl_annotated(const struct view *w, const char *ann)
{
	int i;

	for (i = 0; i < w->n_tmpl; i++) {
		const cJSON *anns = json_get(json_get(w->tmpl[i], "metadata"), "annotations");
		if (json_str(anns, ann) != NULL)
			return 1;
	}
	return 0;
}

/*
 * 1 when an opted-in template of w (of kind k) carries the mark of another
 * kind whose pods k's controller makes: a LeaderWorkerSet's worker
 * StatefulSet, a JobSet's Job. Its pods are placed as that kind's.
 */
static int built_by_other(const struct kind *k, const struct view *w)
{
	size_t j;
	int i;

	for (j = 0; kind_at(j) != NULL; j++) {
		const struct kind *o = kind_at(j);

		if (o == k || o->mark == NULL || strcmp(o->owner_kind, k->owner_kind) != 0)
			continue;
		for (i = 0; i < w->n_tmpl; i++) {
			const cJSON *meta = json_get(w->tmpl[i], "metadata");
			if (json_str(json_get(meta, "labels"), o->mark) != NULL ||
			    json_str(json_get(meta, "annotations"), o->mark) != NULL)
				return 1;
		}
	}
	return 0;
}

/*
 * Kueue's annotations on the workload (sigs.k8s.io/kueue v0.19.0,
 * pkg/controller/jobs/job/job_controller.go and pkg/constants/constants.go):
 * partial admission may start a Job with fewer pods than ranks unless its
 * completions follow its parallelism; an elastic job is resized while it runs.
 */
static void check_kueue(const cJSON *obj, const struct view *w, struct validation *v)
{
	const cJSON *anns = json_get(json_get(obj, "metadata"), "annotations");
	const char *eq = json_str(anns, KUEUE_EQUAL), *el = json_str(anns, KUEUE_ELASTIC);

	if (json_str(anns, KUEUE_MIN_PARALLELISM) != NULL && !(eq && strcmp(eq, "true") == 0)) {
		view_warn(v, "%s %s: with %s Kueue may start fewer pods than its ranks", w->kind,
		          w->name, KUEUE_MIN_PARALLELISM);
		view_warn(v, "their pods would be refused: add %s: \"true\"", KUEUE_EQUAL);
	}
	if (el && strcmp(el, "true") == 0 && !tmpl_annotated(w, ANN_ELASTIC))
		view_warn(v, "%s resizes %s %s while it runs: set %s MIN:MAX", KUEUE_ELASTIC,
		          w->kind, w->name, ANN_ELASTIC);
}

static void check_annotations(const struct view *w, const struct config *cfg, struct validation *v,
                              long *world, int *from)
{
	int i, n_unknown;

	for (i = 0; i < w->n_tmpl; i++) {
		const cJSON *anns = json_get(json_get(w->tmpl[i], "metadata"), "annotations");
		char err[1024], unknown[4096], *line, *next;
		int said = 0;

		if (annotation_check_all(anns, cfg, err, sizeof(err), unknown, sizeof(unknown),
		                         &n_unknown) > 0) {
			/* after the template's name when the workload has several */
			view_problem_as(v, DENY_ANNOTATION, "%s%s%s", w->tmpl_what[i],
			                w->tmpl_what[i][0] ? ": " : "", err);
		}
		/* one warning each, whole: a list cut short would hide the last typos */
		for (line = unknown; n_unknown > 0 && line[0] != '\0'; line = next) {
			next = strchr(line, '\n');
			if (next != NULL)
				*next++ = '\0';
			else
				next = line + strlen(line);
			view_warn_template(v, w, i, "unknown annotation %s (ignored)", line);
			said++;
		}
		if (n_unknown > said)
			view_warn_template(v, w, i,
			                   "%d more unknown distenv.dev/ annotations (ignored)",
			                   n_unknown - said);
		if (json_str(anns, ANN_MAX_RESTARTS) != NULL && json_str(anns, ANN_ELASTIC) == NULL)
			view_warn_template(v, w, i,
			                   "%s is ignored without %s: only elastic jobs get "
			                   "PET_MAX_RESTARTS",
			                   ANN_MAX_RESTARTS, ANN_ELASTIC);
	}
	*world = annotated_world(w, cfg, from);
}

/*
 * A distenv.dev/ annotation on the workload's own metadata that no opted-in pod
 * template carries: distenv reads the pods' annotations, which come from the
 * templates alone, so it would be ignored without a word.
 */
static void check_workload_annotations(const cJSON *obj, const struct view *w, struct validation *v)
{
	const cJSON *a;
	int i;

	cJSON_ArrayForEach(a, json_get(json_get(obj, "metadata"), "annotations"))
	{
		int carried = 0;

		if (a->string == NULL ||
		    strncmp(a->string, ANNOTATION_PREFIX, strlen(ANNOTATION_PREFIX)) != 0)
			continue;
		for (i = 0; i < w->n_tmpl && !carried; i++)
			carried =
			    json_get(json_get(json_get(w->tmpl[i], "metadata"), "annotations"),
			             a->string) != NULL;
		if (!carried)
			view_warn(
			    v, "%.40s is on the %s, not its pod template: ignored; move it there",
			    a->string, w->kind);
	}
}

/*
 * The longest value of fw's growing variable in t's world (TF_CONFIG, a TPU
 * host list: framework.h, grows), measured at the ranks fw names, and what it
 * means at apply time: within the exec limit, left out (a default), or a
 * denial (asked for).
 */
static void check_grows(struct topology *t, const struct framework *fw, int asked,
                        struct validation *v)
{
	long ranks[WORKLOAD_MAX_RJOBS + 1];
	struct env_list env;
	size_t i, sz = 0;
	int j, n = fw->widest(t, ranks, WORKLOAD_MAX_RJOBS + 1);

	t->frameworks = fw->bit;
	for (j = 0; j < n; j++) {
		t->rank = ranks[j];
		if (env_build(t, &env) != 0)
			return;
		for (i = 0; i < env.n; i++)
			if (strcmp(env.vars[i].name, fw->grows) == 0 &&
			    strlen(env.vars[i].name) + strlen(env.vars[i].value) + 2 > sz)
				sz = strlen(env.vars[i].name) + strlen(env.vars[i].value) + 2;
		env_list_free(&env);
	}
	if (sz <= ENV_STRING_MAX)
		return;
	if (asked)
		view_problem(v,
		             "%s would be about %zu bytes for %ld ranks, above Linux's limit "
		             "of %d bytes for one environment string: drop %s from %s",
		             fw->grows, sz, t->world_size, ENV_STRING_MAX, fw->name,
		             ANN_FRAMEWORKS);
	else
		/* the pods' own words (plan.c), at the widest rank's size */
		view_warn(v, "%s left out: %zu bytes for %ld ranks, over Linux's %d per variable",
		          fw->grows, sz, t->world_size, ENV_STRING_MAX);
}

/*
 * A world within limits.maxWorldSize (above it every pod is refused, so the
 * workload is, with the pods' words); every host a DNS label; each opted-in
 * template's elastic range against the world (its pods are refused when MIN is
 * above it); what grows with the world within the exec limit. The frameworks
 * are every template's: those a template asks for (distenv.dev/frameworks)
 * and, for a template that asks for none, what its pods get by default.
 */
static void check_world(struct view *w, const struct config *cfg, long world, struct validation *v)
{
	struct topology *t = &w->t, last;
	unsigned frameworks = 0, asked = 0, m;
	int defaults = 0;
	char msg[512];
	long lo, hi;
	size_t f;
	long r;
	int i;

	if (world > cfg->max_world_size) {
		/* every pod would be refused (topology.c), with these words */
		view_problem_as(v, DENY_LIMIT,
		                "%s %s/%s has a world size of %ld, above the limit of %ld", w->kind,
		                w->ns, w->name, world, cfg->max_world_size);
		return;
	}
	if (world < 1)
		return;
	snprintf(t->workload, sizeof(t->workload), "%s", w->name);
	snprintf(t->ns, sizeof(t->ns), "%s", w->ns);
	if (t->service[0] == '\0')
		snprintf(t->service, sizeof(t->service), "%s", w->service ? w->service : "svc");
	t->world_size = world;
	if ((r = topology_bad_host(t)) >= 0) {
		topology_bad_host_why(t, r, msg, sizeof(msg));
		view_problem(v, "the hostname of rank %ld of %s %s, %s", r, w->kind, w->name, msg);
		return;
	}
	for (i = 0; i < w->n_tmpl; i++) {
		const cJSON *anns = json_get(json_get(w->tmpl[i], "metadata"), "annotations");
		const char *el = json_str(anns, ANN_ELASTIC), *what = w->tmpl_what[i];

		if (el == NULL || annotation_range(el, cfg->max_world_size, &lo, &hi) != 0)
			continue; /* a bad annotation is a problem of its own */
		if (lo > world)
			view_problem(
			    v,
			    "%s%sannotation %s: MIN %ld is above the world size %ld, so torchrun "
			    "would wait for nodes that never exist",
			    what, what[0] ? ": " : "", ANN_ELASTIC, lo, world);
		else if (hi > world)
			view_warn_template(
			    v, w, i,
			    "elastic MAX %ld is above the world size %ld: more nodes join only "
			    "when the workload is scaled up",
			    hi, world);
	}
	for (i = 0; i < w->n_tmpl; i++) {
		const cJSON *anns = json_get(json_get(w->tmpl[i], "metadata"), "annotations");
		const char *fws = json_str(anns, ANN_FRAMEWORKS);

		if (fws != NULL && config_parse_frameworks(fws, &m) != 0)
			return; /* a bad annotation is a problem of its own */
		if (fws != NULL) {
			asked |= m;
			frameworks |= m;
		} else {
			defaults = 1;
			frameworks |=
			    topology_template_frameworks(json_get(w->tmpl[i], "spec"), anns, cfg);
		}
	}
	if (defaults)
		frameworks |= cfg->default_frameworks;
	t->frameworks_asked = asked;
	/*
	 * Rank 0 is judged, and the last rank when rank 0 is not refused: a
	 * refusal may depend on the rank (a LeaderWorkerSet's workers, whose leader
	 * must be a TPU host).
	 */
	last = *t;
	last.rank = world - 1;
	for (f = 0; framework_at(f) != NULL; f++) {
		const struct framework *fw = framework_at(f);

		if ((frameworks & fw->bit) && fw->refuse != NULL &&
		    (fw->refuse(t, w->pod_anns, msg, sizeof(msg)) ||
		     fw->refuse(&last, w->pod_anns, msg, sizeof(msg))))
			view_problem(v, "%s", msg);
	}
	if (bounded_printf(t->domain, sizeof(t->domain), ".%s.%s.svc.%s", t->service, w->ns,
	                   cfg->cluster_domain) != 0)
		return;
	t->port = cfg->default_port;
	for (f = 0; framework_at(f) != NULL; f++)
		if ((frameworks & framework_at(f)->bit) && framework_at(f)->grows != NULL)
			check_grows(t, framework_at(f), (asked & framework_at(f)->bit) != 0, v);
}

/* What a known launcher would misread in a pod template (topology_launcher_warnings). */
static void check_launchers(const struct view *w, const struct config *cfg, struct validation *v)
{
	char msg[3][VALIDATE_WARNING_LEN + 16];
	int i, k, n;

	for (i = 0; i < w->n_tmpl; i++) {
		n = topology_template_launcher_warnings(
		    json_get(w->tmpl[i], "spec"),
		    json_get(json_get(w->tmpl[i], "metadata"), "annotations"), cfg, msg[0],
		    sizeof(msg[0]), 3);
		for (k = 0; k < n; k++)
			view_warn_template(v, w, i, "%s", msg[k] + strlen("distenv: "));
	}
}

/*
 * The target containers of each template (targets_resolve): a
 * distenv.dev/containers that names no container of the template, or more
 * containers and init containers than limits.maxContainers, has every pod
 * denied, so the workload is denied with the pod's words. An empty name is the
 * annotation's own problem; a template with no container is left to the API
 * server, which refuses it.
 */
static void check_targets(const struct view *w, const struct config *cfg, struct validation *v)
{
	int i;

	for (i = 0; i < w->n_tmpl; i++) {
		const cJSON *spec = json_get(w->tmpl[i], "spec"),
		            *ctrs = json_get(spec, "containers");
		const cJSON *anns = json_get(json_get(w->tmpl[i], "metadata"), "annotations");
		const char *list = json_str(anns, ANN_CONTAINERS), *what = w->tmpl_what[i];
		const struct annotation_def *d = annotation_find(ANN_CONTAINERS);
		struct topology t;
		char err[512];
		enum topology_status ts;

		if (!cJSON_IsArray(ctrs) || cJSON_GetArraySize(ctrs) == 0 ||
		    (list != NULL && annotation_check(d, list, cfg, NULL, err, sizeof(err)) != 0))
			continue;
		memset(&t, 0, sizeof(t));
		ts = targets_resolve(spec, anns, cfg, &t, err, sizeof(err));
		free(t.targets);
		if (ts != TOPOLOGY_DENY)
			continue;
		view_problem_as(v, t.reason, "%s%s%s", what, what[0] ? ": " : "",
		                err + strlen("distenv: "));
	}
}

/* What name resolution a pod template gives its pods (topology_dns_warning). */
static void check_dns(const struct view *w, struct validation *v)
{
	char msg[VALIDATE_WARNING_LEN];
	int i;

	for (i = 0; i < w->n_tmpl; i++)
		if (topology_dns_warning(json_get(w->tmpl[i], "spec"), msg, sizeof(msg)))
			view_warn_template(v, w, i, "%s", msg);
}

/*
 * Whether a pod spec keeps two of its pods off one node: a required
 * podAntiAffinity term or a DoNotSchedule spread of maxSkew 1, both over
 * kubernetes.io/hostname. (Whether the term selects the template's own pods
 * is not judged: a term on the node is what users write for this.)
 */
static int one_per_node(const cJSON *spec)
{
	const cJSON *t;

	cJSON_ArrayForEach(t, json_get(json_get(json_get(spec, "affinity"), "podAntiAffinity"),
	                               "requiredDuringSchedulingIgnoredDuringExecution"))
	{
		const char *k = json_str(t, "topologyKey");
		if (k != NULL && strcmp(k, "kubernetes.io/hostname") == 0)
			return 1;
	}
	cJSON_ArrayForEach(t, json_get(spec, "topologySpreadConstraints"))
	{
		const char *k = json_str(t, "topologyKey"), *u = json_str(t, "whenUnsatisfiable");
		if (k != NULL && strcmp(k, "kubernetes.io/hostname") == 0 && u != NULL &&
		    strcmp(u, "DoNotSchedule") == 0 && json_long(t, "maxSkew", 1L << 20, 0) == 1)
			return 1;
	}
	return 0;
}

/* hostNetwork ranks share the node's ports: two on one node cannot both bind the rendezvous port.
 */
static void check_host_spread(const struct view *w, struct validation *v)
{
	int i;

	for (i = 0; i < w->n_tmpl; i++) {
		const cJSON *spec = json_get(w->tmpl[i], "spec");
		if (cJSON_IsTrue(json_get(spec, "hostNetwork")) && !one_per_node(spec))
			view_warn_template(
			    v, w, i,
			    "hostNetwork ranks may share a node and its ports: add a "
			    "hostname podAntiAffinity or spread");
	}
}

/* Frees the view w (calloc'ed) and what it owns. */
static void view_free(struct view *w)
{
	cJSON_Delete(w->pod_anns);
	free(w);
}

/*
 * Reads workload obj of kind k into the view w (zeroed by the caller): its
 * name, its pod templates, and what the kind's own view makes of its spec
 * (what is the kind's own goes into v).
 */
static void view_read(const cJSON *obj, const struct kind *k, const char *ns,
                      const struct config *cfg, struct view *w, struct validation *v)
{
	const char *name = json_str(json_get(obj, "metadata"), "name");

	w->kind = k->api.kind;
	w->name = name ? name : "";
	w->ns = ns;
	w->t.group = -1;
	kind_each_template(k, obj, add_template, w);
	k->view(json_get(obj, "spec"), cfg, w, v);
}

int validate_kind_known(const char *group, const char *kind)
{
	return kind_named(group, kind) != NULL;
}

void validate_workload(const cJSON *obj, const char *kind, const char *ns, const struct config *cfg,
                       const struct workload_lookup *lookup, const cJSON *services,
                       struct validation *v)
{
	const struct kind *k;
	struct view *w;
	long world;
	int from = 0;

	memset(v, 0, sizeof(*v));
	v->partial_admission = json_str(json_get(json_get(obj, "metadata"), "annotations"),
	                                KUEUE_MIN_PARALLELISM) != NULL;
	w = calloc(1, sizeof(*w));
	if (w == NULL) {
		view_problem(v, "out of memory");
		return;
	}
	if ((k = kind_named(NULL, kind)) != NULL)
		view_read(obj, k, ns, cfg, w, v);
	else
		w->kind = kind;
	v->opted_in = k != NULL && w->n_tmpl > 0;
	if (!v->opted_in) {
		/* only opted-in workloads are checked: what a kind view found does not count */
		memset(v, 0, sizeof(*v));
		view_free(w);
		return;
	}
	kind_each_template(k, obj, warn_not_opted, v);
	check_annotations(w, cfg, v, &world, &from);
	check_workload_annotations(obj, w, v);
	if (world > 0 && w->count >= 0 && world != w->count) {
		if (k->fixed_world)
			/* after the name of the template that says it when the workload has several
			 */
			view_problem(
			    v,
			    "%s%sannotation %s is %ld, but %s %s has %ld pods per world: remove it",
			    w->tmpl_what[from], w->tmpl_what[from][0] ? ": " : "", ANN_WORLD_SIZE,
			    world, kind, w->name, w->count);
		else if (world > w->count && !tmpl_annotated(w, ANN_ELASTIC))
			/*
			 * A fixed world above the pods the workload makes never forms: every
			 * pod waits for ranks that do not exist. Usually it counts GPUs, not
			 * pods: nproc-per-node gives a pod's processes. A world to grow into
			 * is distenv.dev/elastic's (warned below).
			 */
			view_problem(
			    v,
			    "world size %ld (annotation) is above the %ld %s: ranks from %ld "
			    "never start and every pod waits for them: count pods, not GPUs "
			    "(%s gives a pod's processes), or make it elastic (%s)",
			    world, w->count, k->count_noun, w->count, ANN_NPROC, ANN_ELASTIC);
		else if (world > w->count)
			view_warn(
			    v,
			    "world size %ld (annotation) is above the %ld %s: ranks from %ld never "
			    "start and the job waits",
			    world, w->count, k->count_noun, w->count);
		else
			/* never works: ranks below W train alone, the rest are refused */
			view_problem(
			    v,
			    "annotation %s is %ld, below the %ld %s of %s %s: ranks 0 to %ld "
			    "would train as a world of their own while the pods from rank %ld "
			    "are refused for ever: set it to %ld or remove it",
			    ANN_WORLD_SIZE, world, w->count, k->count_noun, kind, w->name,
			    world - 1, world, w->count);
	}
	/*
	 * Look-ups off: a StatefulSet's or a Job's pod reads its world from
	 * distenv.dev/world-size alone (topology.c: "is not known ... turned off"),
	 * so without it every pod would be refused; a bad value is a problem of its
	 * own above. A workload of no pods (scaled to 0) has none refused, and an
	 * annotation above its 0 pods is refused above: it is judged when scaled.
	 * Pods another kind places (a LeaderWorkerSet's, a JobSet's) read that kind's.
	 */
	if (!k->fixed_world && !cfg->lookups && w->count > 0 &&
	    !tmpl_annotated(w, ANN_WORLD_SIZE) && !built_by_other(k, w)) {
		view_problem_as(v, DENY_WORLD,
		                "look-ups of the workload are turned off, so the pods of %s %s "
		                "cannot read its %ld %s and each would be refused: set the "
		                "annotation %s to %ld on its pod template",
		                kind, w->name, w->count, k->count_noun, ANN_WORLD_SIZE, w->count);
	}
	if (world <= 0 || k->fixed_world)
		world = w->count;
	check_world(w, cfg, world, v);
	check_targets(w, cfg, v);
	validate_own_env(w, cfg, world, v);
	check_launchers(w, cfg, v);
	check_dns(w, v);
	check_host_spread(w, v);
	validate_cluster(w, cfg, lookup, services, v);
	check_kueue(obj, w, v);
	view_free(w);
}

/* -- an UPDATE: the world before and after -- */

/* What a workload object says of its world, for a comparison. */
struct world_seen {
	int opted_in;
	long world;  /* ranks; 0: no rank runs (scaled to 0, or suspended) */
	long lo, hi; /* distenv.dev/elastic's MIN:MAX; 0 when not elastic */
};

static int world_seen(const cJSON *obj, const struct kind *k, const char *ns,
                      const struct config *cfg, struct world_seen *out)
{
	const cJSON *spec = json_get(obj, "spec");
	struct validation *scratch = calloc(1, sizeof(*scratch));
	struct view *w = calloc(1, sizeof(*w));
	const char *el;
	long n, lo, hi;
	int i, rc = -1;

	memset(out, 0, sizeof(*out));
	if (scratch == NULL || w == NULL)
		goto out;
	view_read(obj, k, ns, cfg, w, scratch);
	out->opted_in = w->n_tmpl > 0;
	out->world = w->count;
	if (!k->fixed_world && (n = annotated_world(w, cfg, NULL)) > 0)
		out->world = n;
	/* the range every opted-in template's pods were told (none if one was told none) */
	for (i = 0; i < w->n_tmpl; i++) {
		el = json_str(json_get(json_get(w->tmpl[i], "metadata"), "annotations"),
		              ANN_ELASTIC);
		if (el == NULL || annotation_range(el, cfg->max_world_size, &lo, &hi) != 0) {
			out->lo = out->hi = 0;
			break;
		}
		if (i == 0 || lo > out->lo)
			out->lo = lo;
		if (i == 0 || hi < out->hi)
			out->hi = hi;
	}
	if (cJSON_IsTrue(json_get(spec, "suspend")))
		out->world = 0; /* a suspended Job or JobSet runs no pod */
	rc = 0;
out:
	free(scratch);
	view_free(w);
	return rc;
}

void validate_update(const cJSON *old, const cJSON *obj, const char *kind, const char *ns,
                     const struct config *cfg, struct validation *v)
{
	const struct kind *k = kind_named(NULL, kind);
	const char *name = json_str(json_get(obj, "metadata"), "name");
	struct world_seen was, now;
	char what[160];

	if (k == NULL || !cJSON_IsObject(old) || world_seen(old, k, ns, cfg, &was) != 0 ||
	    world_seen(obj, k, ns, cfg, &now) != 0)
		return;
	/* Pods of a template that did not opt in got nothing; a restart is no change. */
	if (!was.opted_in || !now.opted_in || was.world <= 0 || now.world <= 0 ||
	    was.world == now.world)
		return;
	/* Running pods were told MIN:MAX: torchrun re-forms within it. */
	if (was.lo > 0 && was.lo <= now.world && now.world <= was.hi)
		return;
	if (name == NULL)
		name = "";
	if (k->restart == NULL) {
		view_warn(v,
		          "%s %s: %ld -> %ld %s; its controller re-creates each world whole at "
		          "the new size",
		          kind, name, was.world, now.world, k->count_noun);
		return;
	}
	view_warn(v, "%s %s: world %ld -> %ld ranks, but the running pods keep WORLD_SIZE=%ld",
	          kind, name, was.world, now.world, was.world);
	snprintf(what, sizeof(what), k->restart, name);
	view_warn(v, "to form one world of %ld, restart every pod (%s) or use %s", now.world, what,
	          ANN_ELASTIC);
}
