/*
 * `distenv-webhook doctor`: why a job does not form, judged on the objects
 * the shell read from the API server, in the order a job forms: distenv
 * installed for the namespace, pods opted in and injected, every rank
 * present and running, one world that matches the workload, rank 0
 * reachable (Service, EndpointSlice, DNS, hostNetwork, NetworkPolicy), no
 * mesh in the way, ranks in step. Pure: values in, a report out; the pod
 * table is the one allocation, freed before doctor_run returns. Past 800
 * lines because the rules read one pod table and only make sense in order.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotation.h"
#include "doctor.h"
#include "json.h"
#include "mesh.h"
#include "netpol.h"
#include "util.h"

#define DEFAULT_PORT 29500

/* ---- reading what the API server returns ---- */

static const cJSON *items(const struct doctor_obj *o)
{
	return o->obj != NULL ? json_get(o->obj, "items") : NULL;
}

static int streq(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* The pod template of the workload (a JobSet's first replicated Job's, a LWS's worker's). */
static const cJSON *workload_template(enum workload_kind kind, const cJSON *w)
{
	const cJSON *spec = json_get(w, "spec");

	switch (kind) {
	case WORKLOAD_STATEFULSET:
	case WORKLOAD_JOB:
		return json_get(spec, "template");
	case WORKLOAD_JOBSET: {
		const cJSON *rj = json_get(spec, "replicatedJobs");
		return json_get(
		    json_get(json_get(cJSON_IsArray(rj) ? rj->child : NULL, "template"), "spec"),
		    "template");
	}
	case WORKLOAD_LWS:
		return json_get(json_get(spec, "leaderWorkerTemplate"), "workerTemplate");
	default:
		return NULL;
	}
}

/* Whether a LabelSelector (matchLabels, matchExpressions) selects labels. NULL selects all. */
static int selector_matches(const cJSON *sel, const cJSON *labels)
{
	const cJSON *e, *v;

	if (sel == NULL)
		return 1;
	cJSON_ArrayForEach(e, json_get(sel, "matchLabels"))
	{
		if (!streq(json_map_str(labels, e->string), cJSON_GetStringValue(e)))
			return 0;
	}
	cJSON_ArrayForEach(e, json_get(sel, "matchExpressions"))
	{
		const char *key = json_str(e, "key"), *op = json_str(e, "operator");
		const char *have = key != NULL ? json_map_str(labels, key) : NULL;
		int in = 0;

		cJSON_ArrayForEach(v, json_get(e, "values")) in |=
		    streq(have, cJSON_GetStringValue(v));
		if (streq(op, "In") && !in)
			return 0;
		if (streq(op, "NotIn") && in)
			return 0;
		if (streq(op, "Exists") && have == NULL)
			return 0;
		if (streq(op, "DoesNotExist") && have != NULL)
			return 0;
	}
	return 1;
}

static long str_long(const char *s, long dflt)
{
	long v;

	return s != NULL && parse_long(s, 0, 1L << 30, &v) == 0 ? v : dflt;
}

/* ---- the report ---- */

static struct doctor_finding *add(struct doctor_report *r, enum doctor_state st, const char *check,
                                  const char *fix, const char *title_fmt, ...)
    __attribute__((format(printf, 5, 6)));

static struct doctor_finding *add(struct doctor_report *r, enum doctor_state st, const char *check,
                                  const char *fix, const char *title_fmt, ...)
{
	static struct doctor_finding spare; /* written past the cap; never read */
	struct doctor_finding *f;
	va_list ap;

	if (r->n == DOCTOR_MAX_FINDINGS) {
		memset(&spare, 0, sizeof(spare));
		return &spare;
	}
	f = &r->f[r->n++];
	memset(f, 0, sizeof(*f));
	f->state = st;
	snprintf(f->check, sizeof(f->check), "%s", check);
	snprintf(f->fix, sizeof(f->fix), "%s", fix != NULL ? fix : "");
	va_start(ap, title_fmt);
	vsnprintf(f->title, sizeof(f->title), title_fmt, ap);
	va_end(ap);
	if (st == DOCTOR_FAIL) {
		if (r->first_fail < 0)
			r->first_fail = r->n - 1;
		r->n_fail++;
	} else if (st == DOCTOR_WARN) {
		r->n_warn++;
	} else if (st == DOCTOR_UNKNOWN) {
		r->n_unknown++;
	}
	return f;
}

/* Appends to a finding's evidence (cut at its size). */
static void say(struct doctor_finding *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void say(struct doctor_finding *f, const char *fmt, ...)
{
	size_t n = strlen(f->evidence);
	va_list ap;

	if (n + 1 >= sizeof(f->evidence))
		return;
	va_start(ap, fmt);
	vsnprintf(f->evidence + n, sizeof(f->evidence) - n, fmt, ap);
	va_end(ap);
}

static void unknown(struct doctor_report *r, const char *check, const char *what, const char *why)
{
	struct doctor_finding *f =
	    add(r, DOCTOR_UNKNOWN, check,
	        "grant get/list on it (docs/troubleshooting.md#what-doctor-reads), or ask "
	        "someone who can",
	        "could not read %s", what);
	say(f, "%.400s", why);
}

/* ---- the pods ---- */

struct pinfo {
	const cJSON *pod;
	const char *name;
	long rank, group, world; /* -1 when unknown */
	char master[256];        /* host of rank 0 as injected; "" when not */
	long port;
	int injected, opted_in, ready, scheduled, deleting;
	const char *phase, *node, *created;
};

/* "rank=1,world-size=3,master=HOST:PORT[,omitted=...]" into p. */
static void read_injected(const char *v, struct pinfo *p)
{
	const char *m;
	char *colon;

	p->injected = 1;
	if (v == NULL)
		return;
	if (strncmp(v, "rank=", 5) == 0 && v[5] >= '0' && v[5] <= '9')
		p->rank = strtol(v + 5, NULL, 10);
	if ((m = strstr(v, "world-size=")) != NULL)
		p->world = strtol(m + 11, NULL, 10);
	if ((m = strstr(v, "master=")) != NULL) {
		snprintf(p->master, sizeof(p->master), "%.*s", (int)strcspn(m + 7, ","), m + 7);
		if ((colon = strrchr(p->master, ':')) != NULL) {
			p->port = strtol(colon + 1, NULL, 10);
			*colon = '\0';
		}
	}
}

static void pod_read(enum workload_kind kind, long start, const cJSON *pod, struct pinfo *p)
{
	const cJSON *meta = json_get(pod, "metadata"), *status = json_get(pod, "status");
	const cJSON *labels = json_get(meta, "labels"), *anns = json_get(meta, "annotations");
	const char *inj = json_map_str(anns, ANN_INJECTED), *s;
	const cJSON *c;

	memset(p, 0, sizeof(*p));
	p->pod = pod;
	p->name = json_str(meta, "name");
	p->rank = p->group = p->world = -1;
	p->port = -1;
	p->opted_in = streq(json_map_str(labels, LABEL_INJECT), "true");
	p->phase = json_str(status, "phase");
	p->node = json_str(json_get(pod, "spec"), "nodeName");
	p->created = json_str(meta, "creationTimestamp");
	p->deleting = json_get(meta, "deletionTimestamp") != NULL;
	cJSON_ArrayForEach(c, json_get(status, "conditions"))
	{
		if (streq(json_str(c, "type"), "Ready"))
			p->ready = streq(json_str(c, "status"), "True");
		if (streq(json_str(c, "type"), "PodScheduled"))
			p->scheduled = streq(json_str(c, "status"), "True");
	}
	if (p->node != NULL)
		p->scheduled = 1;
	if (inj != NULL)
		read_injected(inj, p);
	if (kind == WORKLOAD_LWS) {
		p->group =
		    str_long(json_map_str(labels, "leaderworkerset.sigs.k8s.io/group-index"), -1);
		if (p->rank < 0)
			p->rank = str_long(
			    json_map_str(labels, "leaderworkerset.sigs.k8s.io/worker-index"), -1);
	} else {
		p->group = 0;
	}
	if (p->rank >= 0)
		return;
	if (kind == WORKLOAD_STATEFULSET &&
	    (s = json_map_str(labels, "apps.kubernetes.io/pod-index")) != NULL &&
	    str_long(s, -1) >= start)
		p->rank = str_long(s, -1) - start;
	else if (kind == WORKLOAD_JOB)
		p->rank =
		    str_long(json_map_str(anns, "batch.kubernetes.io/job-completion-index"), -1);
}

/* The world the workload asks for now, per group; *groups: how many worlds (LWS groups). */
static long expected_world(enum workload_kind kind, const cJSON *w, long *groups)
{
	const cJSON *spec = json_get(w, "spec"), *tpl = workload_template(kind, w), *rj;
	const char *ann =
	    json_map_str(json_get(json_get(tpl, "metadata"), "annotations"), ANN_WORLD_SIZE);
	long n = 0;

	*groups = 1;
	if (kind == WORKLOAD_LWS)
		*groups = json_long(spec, "replicas", 1L << 20, 1);
	if (ann != NULL)
		return str_long(ann, -1);
	switch (kind) {
	case WORKLOAD_STATEFULSET:
		return json_long(spec, "replicas", 1L << 20, 1);
	case WORKLOAD_JOB:
		return json_long(spec, "completions", 1L << 20, -1);
	case WORKLOAD_JOBSET:
		cJSON_ArrayForEach(rj, json_get(spec, "replicatedJobs"))
		{
			const cJSON *js = json_get(json_get(rj, "template"), "spec");
			long per = json_long(js, "completions", 1L << 20,
			                     json_long(js, "parallelism", 1L << 20, 1));
			n += json_long(rj, "replicas", 1L << 20, 1) * per;
		}
		return n;
	case WORKLOAD_LWS:
		return json_long(json_get(spec, "leaderWorkerTemplate"), "size", 1L << 20, 1);
	default:
		return -1;
	}
}

/* A pod's own name for rank r of group g, as its controller names it ("" when not derivable). */
static void rank_name(enum workload_kind kind, const char *name, long start, long g, long r,
                      char *out, size_t len)
{
	if (kind == WORKLOAD_STATEFULSET)
		snprintf(out, len, "%s-%ld", name, start + r);
	else if (kind == WORKLOAD_JOB)
		snprintf(out, len, "%s-%ld-…", name, r);
	else if (kind == WORKLOAD_LWS)
		snprintf(out, len, r == 0 ? "%s-%ld" : "%s-%ld-%ld", name, g, r);
	else
		snprintf(out, len, "rank %ld", r);
}

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

/* ---- the checks, in the order a job forms ---- */

struct ctx {
	const struct doctor_input *in;
	struct doctor_report *r;
	const cJSON *tpl;
	struct pinfo *p;
	int n;
	long start, world, groups, port;
	struct pinfo *rank0; /* of group 0 */
	const cJSON *svc;
};

static void check_webhook(struct ctx *c)
{
	const struct doctor_input *in = c->in;
	const cJSON *cfg, *wh, *found = NULL, *ep;
	const cJSON *tpl_labels = json_get(json_get(c->tpl, "metadata"), "labels");
	const cJSON *ns_labels = json_get(json_get(in->namespace_.obj, "metadata"), "labels");
	const char *cfg_name = NULL, *ca;
	struct doctor_finding *f;
	int ready = 0, any = 0;

	if (in->mwcs.unread != NULL) {
		unknown(c->r, "webhook", "distenv's MutatingWebhookConfiguration", in->mwcs.unread);
		return;
	}
	cJSON_ArrayForEach(cfg, items(&in->mwcs))
	{
		cJSON_ArrayForEach(wh, json_get(cfg, "webhooks"))
		{
			if (streq(json_str(wh, "name"), "pods.distenv.dev") && found == NULL) {
				found = wh;
				cfg_name = json_str(json_get(cfg, "metadata"), "name");
			}
		}
	}
	if (found == NULL) {
		f = add(c->r, DOCTOR_FAIL, "webhook",
		        "install it: helm install distenv charts/distenv -n distenv-system "
		        "--create-namespace (README, Install); then delete the pods so their "
		        "controller makes them again",
		        "distenv is not installed: no MutatingWebhookConfiguration has the webhook "
		        "pods.distenv.dev");
		say(f, "%d MutatingWebhookConfiguration(s) in the cluster, none of them distenv's",
		    cJSON_GetArraySize(items(&in->mwcs)));
		return;
	}
	ca = json_str(json_get(found, "clientConfig"), "caBundle");
	if (json_get(json_get(found, "clientConfig"), "url") == NULL && (ca == NULL || !ca[0])) {
		f = add(
		    c->r, DOCTOR_FAIL, "webhook",
		    "the chart writes caBundle itself (selfSigned) or through cert-manager's CA "
		    "injector (certManager: is cert-manager's cainjector running?); helm upgrade "
		    "distenv, then delete the pods",
		    "distenv's webhook has no CA: the API server cannot call it");
		say(f,
		    "MutatingWebhookConfiguration %s, webhook pods.distenv.dev: "
		    "clientConfig.caBundle is empty",
		    cfg_name ? cfg_name : "?");
		return;
	}
	if (c->tpl != NULL && !selector_matches(json_get(found, "objectSelector"), tpl_labels)) {
		f = add(
		    c->r, DOCTOR_FAIL, "webhook",
		    "add the label distenv.dev/inject: \"true\" to the pod template's "
		    "metadata.labels, then delete the pods",
		    "the pod template does not opt in: distenv's objectSelector does not match its "
		    "labels");
		say(f,
		    "webhook pods.distenv.dev of %s selects distenv.dev/inject=true; the template "
		    "has distenv.dev/inject=%s",
		    cfg_name ? cfg_name : "?",
		    json_map_str(tpl_labels, LABEL_INJECT) ? json_map_str(tpl_labels, LABEL_INJECT)
		                                           : "(none)");
		return;
	}
	if (in->namespace_.obj != NULL &&
	    !selector_matches(json_get(found, "namespaceSelector"), ns_labels)) {
		f = add(c->r, DOCTOR_FAIL, "webhook",
		        "run the job in another namespace, or take this one out of the chart's "
		        "webhook.excludeNamespaces / namespaceSelectorExpressions",
		        "distenv's webhook leaves namespace %s out (its namespaceSelector)",
		        in->ns);
		say(f,
		    "MutatingWebhookConfiguration %s: namespaceSelector does not match the "
		    "namespace's labels",
		    cfg_name ? cfg_name : "?");
		return;
	}
	if (in->webhook_slices.unread != NULL) {
		f = add(c->r, DOCTOR_OK, "webhook", NULL,
		        "distenv is installed for namespace %s (%s, CA set, selectors match)",
		        in->ns, cfg_name ? cfg_name : "?");
		unknown(c->r, "webhook", "the EndpointSlices of distenv's Service",
		        in->webhook_slices.unread);
		return;
	}
	if (in->webhook_slices.obj != NULL) {
		const cJSON *sl;
		cJSON_ArrayForEach(sl, items(&in->webhook_slices))
		{
			cJSON_ArrayForEach(ep, json_get(sl, "endpoints"))
			{
				const cJSON *cond = json_get(ep, "conditions");
				any++;
				/* the API omits ready when unknown: treat it as ready, as
				 * kube-proxy does */
				if (json_get(cond, "ready") == NULL ||
				    cJSON_IsTrue(json_get(cond, "ready")))
					ready++;
			}
		}
		if (ready == 0) {
			const char *fp = json_str(found, "failurePolicy");
			f = add(c->r, DOCTOR_FAIL, "webhook",
			        "look at distenv's own pods: kubectl -n <distenv's namespace> get "
			        "pods, "
			        "describe, logs",
			        "distenv's Service has no ready endpoint: pods are %s",
			        streq(fp, "Ignore")
			            ? "created without distenv's env (failurePolicy "
			              "Ignore)"
			            : "refused (failurePolicy Fail)");
			say(f, "%d endpoint(s), none ready", any);
			return;
		}
	}
	f = add(c->r, DOCTOR_OK, "webhook", NULL,
	        "distenv is installed for namespace %s (%s, CA set, selectors match)", in->ns,
	        cfg_name ? cfg_name : "?");
	if (in->webhook_slices.obj != NULL)
		say(f, "%d ready endpoint(s) behind distenv's Service", ready);
	else
		say(f, "its clientConfig names a URL: whether it answers is not checked here");
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
static int failed_create(struct ctx *c, enum doctor_state st, const char *title)
{
	const struct doctor_input *in = c->in;
	const cJSON *e =
	    event_about(&in->events, in->name, in->kind == WORKLOAD_JOBSET, "FailedCreate");
	const char *msg = json_str(e, "message");
	struct doctor_finding *f;

	if (e == NULL)
		return 0;
	f = add(c->r, st, "opt-in", create_fix(msg), "%s", title);
	say(f, "event FailedCreate on %s/%s (x%ld): \"%.700s\"",
	    json_str(json_get(e, "involvedObject"), "kind")
	        ? json_str(json_get(e, "involvedObject"), "kind")
	        : "?",
	    json_str(json_get(e, "involvedObject"), "name")
	        ? json_str(json_get(e, "involvedObject"), "name")
	        : "?",
	    json_long(e, "count", 1L << 30, 1), msg ? msg : "");
	return 1;
}

static void check_opt_in(struct ctx *c)
{
	struct doctor_finding *f = NULL;
	int i, n_not = 0, n_bare = 0;

	if (c->n == 0) {
		if (!failed_create(c, DOCTOR_FAIL,
		                   "no pod of the workload exists: their creation failed"))
			add(c->r, c->world == 0 ? DOCTOR_WARN : DOCTOR_FAIL, "opt-in",
			    "kubectl describe the workload; a Job may be suspended (Kueue) or done",
			    "no pod of the workload exists, and no FailedCreate event says why");
		return;
	}
	for (i = 0; i < c->n; i++) {
		if (!c->p[i].opted_in) {
			if (n_not++ == 0)
				f = add(c->r, DOCTOR_FAIL, "opt-in",
				        "add distenv.dev/inject: \"true\" to the pod template's "
				        "labels, "
				        "then delete the pods",
				        "pods without the opt-in label distenv.dev/inject=true");
			say(f, "%s%s", n_not > 1 ? ", " : "", c->p[i].name ? c->p[i].name : "?");
		}
	}
	for (i = 0; i < c->n; i++) {
		if (c->p[i].opted_in && !c->p[i].injected) {
			if (n_bare++ == 0)
				f = add(
				    c->r, DOCTOR_FAIL, "opt-in",
				    "delete these pods once distenv serves: their controller makes "
				    "them again and distenv injects them",
				    "pods created without distenv's env (no distenv.dev/injected "
				    "annotation: made while distenv was not installed or not "
				    "reachable "
				    "with failurePolicy Ignore)");
			say(f, "%s%s", n_bare > 1 ? ", " : "", c->p[i].name ? c->p[i].name : "?");
		}
	}
	if (n_not == 0 && n_bare == 0)
		add(c->r, DOCTOR_OK, "opt-in", NULL, "%d pod(s) opted in and injected by distenv",
		    c->n);
}

static void check_ranks(struct ctx *c)
{
	const struct doctor_input *in = c->in;
	long g, r, total = c->world * c->groups;
	int i, n_missing = 0, n_dup = 0, problems = 0;
	struct doctor_finding *f = NULL;
	char nm[300];
	char *seen;

	if (c->world <= 0 || c->world > (1L << 20) || total > DOCTOR_MAX_PODS * 4) {
		add(c->r, DOCTOR_UNKNOWN, "ranks", NULL,
		    "the workload's world size is not known: ranks not counted");
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
				f = add(
				    c->r, DOCTOR_FAIL, "ranks",
				    "delete the extra pods; check that nothing else creates pods "
				    "with these labels",
				    "ranks held by more than one pod");
			say(f, "%srank %ld (%s)", n_dup > 1 ? ", " : "", p->rank,
			    p->name ? p->name : "?");
		}
	}
	for (g = 0; g < c->groups; g++)
		for (r = 0; r < c->world; r++) {
			if (seen[g * c->world + r])
				continue;
			if (n_missing++ == 0) {
				f = add(
				    c->r, DOCTOR_FAIL, "ranks",
				    "see why the controller did not make it: kubectl describe the "
				    "workload (events)",
				    "ranks without a pod: the job cannot form");
				say(f, "world %ld%s; missing: ", c->world,
				    c->groups > 1 ? " per group" : "");
			}
			if (n_missing <= 16) {
				rank_name(in->kind, in->name, c->start, g, r, nm, sizeof(nm));
				say(f, "%s%ld (%s)", n_missing > 1 ? ", " : "", r, nm);
			}
		}
	free(seen);
	if (n_missing > 16)
		say(f, " and %d more", n_missing - 16);
	if (n_missing > 0) {
		/* the controller's reason quoted, and what to do about it (a denial: the template)
		 */
		const cJSON *e = event_about(&in->events, in->name, 0, "FailedCreate");
		if (e != NULL) {
			say(f, "; event FailedCreate: \"%.400s\"",
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
			f = add(c->r, DOCTOR_FAIL, "scheduling",
			        "free or add what the scheduler names (resources, node selectors, "
			        "taints), or lower the pod's requests; every rank must run at once",
			        "rank %ld (%s) is Pending: not scheduled", p->rank,
			        p->name ? p->name : "?");
			say(f, "the scheduler: \"%.600s\"", why ? why : "(no message yet)");
			problems++;
			continue;
		}
		if ((reason = pod_waiting(p->pod, &who, &msg)) != NULL) {
			f = add(c->r, DOCTOR_FAIL, "containers",
			        strstr(reason, "Image")
			            ? "fix the image name or pull secret; kubectl "
			              "describe pod shows the pull error"
			            : "kubectl logs --previous on the container shows why "
			              "it exits",
			        "rank %ld (%s): container %s is %s", p->rank,
			        p->name ? p->name : "?", who ? who : "?", reason);
			say(f, "\"%.600s\"", msg ? msg : "");
			problems++;
		} else if (streq(p->phase, "Failed")) {
			const char *why = json_str(json_get(p->pod, "status"), "reason");
			f = add(
			    c->r, DOCTOR_FAIL, "containers",
			    "the controller replaces a failed pod; if the others stay in the old "
			    "rendezvous, restart them all",
			    "rank %ld (%s) failed%s%s", p->rank, p->name ? p->name : "?",
			    why ? ": " : "", why ? why : "");
			say(f, "\"%.600s\"",
			    json_str(json_get(p->pod, "status"), "message")
			        ? json_str(json_get(p->pod, "status"), "message")
			        : "");
			problems++;
		}
	}
	if (problems == 0)
		add(c->r, DOCTOR_OK, "ranks", NULL,
		    "every rank has one pod, scheduled, none waiting on an image or crash-looping "
		    "(world %ld%s)",
		    c->world, c->groups > 1 ? " per group" : "");
}

/* The elastic range of a pod (PET_NNODES MIN:MAX in its env): 1 and min/max, else 0. */
static int pod_elastic(const cJSON *pod, long *min, long *max)
{
	const cJSON *ct, *e;

	cJSON_ArrayForEach(ct, json_get(json_get(pod, "spec"), "containers"))
	{
		cJSON_ArrayForEach(e, json_get(ct, "env"))
		{
			const char *v = json_str(e, "value");
			if (streq(json_str(e, "name"), "PET_NNODES") && v != NULL &&
			    strchr(v, ':')) {
				*min = strtol(v, NULL, 10);
				*max = strtol(strchr(v, ':') + 1, NULL, 10);
				return 1;
			}
		}
	}
	return 0;
}

static void check_world(struct ctx *c)
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
				f = add(c->r, DOCTOR_FAIL, "world",
				        "restart every pod (kubectl delete pod -l ...; a Job: "
				        "delete and "
				        "re-apply it), or use distenv.dev/elastic: MIN:MAX for "
				        "torchrun's "
				        "elastic rendezvous",
				        "the workload was resized after its pods started: they "
				        "wait for a "
				        "world of %ld, it now has %ld",
				        p->world, c->world);
				say(f, "pods with the old world: ");
			}
			say(f, "%s%s (world %ld)", stale > 1 ? ", " : "", p->name ? p->name : "?",
			    p->world);
		}
	} else if (elastic && c->world > 0 && (c->world < min || c->world > max)) {
		add(c->r, DOCTOR_FAIL, "world",
		    "scale within the range, or change distenv.dev/elastic and restart the pods",
		    "the workload's %ld ranks are outside the elastic range %ld:%ld", c->world, min,
		    max);
		stale = 1;
	}
	for (i = 0; i < c->n && !stale && c->in->kind != WORKLOAD_LWS; i++) {
		const struct pinfo *p = &c->p[i];
		if (!p->injected || p->world < 0 || (p->world == w0 && strcmp(p->master, m0) == 0))
			continue;
		if (split++ == 0)
			f = add(
			    c->r, DOCTOR_FAIL, "world",
			    "delete every pod of the job (or the Job) so that all start with one "
			    "world; use distenv.dev/elastic for a world that changes",
			    "ranks were given different worlds");
		say(f, "%s%s: world %ld, master %s", split > 1 ? "; " : "", p->name ? p->name : "?",
		    p->world, p->master);
	}
	if (!stale && !split) {
		f = add(c->r, DOCTOR_OK, "world", NULL, "one world: %ld rank(s), rank 0 at %s:%ld",
		        w0, m0, c->port);
		if (elastic)
			say(f, "elastic %ld:%ld (torchrun re-forms the world as pods come and go)",
			    min, max);
	}
}

/* A container's own entry for a name distenv writes, when it differs from distenv's. */
static void check_own_env(struct ctx *c)
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
	int i, n = 0;
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
				if (what == NULL)
					continue;
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
					f = add(
					    c->r, DOCTOR_FAIL, "own-env",
					    "remove these entries from the pod template's env: the "
					    "container's own value wins over distenv's",
					    "containers set their own distributed env, which "
					    "overrides "
					    "distenv's");
				if (n <= 8)
					say(f, "%s%s/%s: %s=%s%s (distenv's: %s)",
					    n > 1 ? "; " : "", p->name ? p->name : "?",
					    json_str(ct, "name") ? json_str(ct, "name") : "?", what,
					    v ? v : "(valueFrom)", "", want);
			}
		}
	}
	if (n > 8)
		say(f, "; and %d more", n - 8);
	if (n == 0)
		add(c->r, DOCTOR_OK, "own-env", NULL,
		    "no container overrides distenv's RANK, WORLD_SIZE, MASTER_ADDR or "
		    "MASTER_PORT");
}

static void check_service(struct ctx *c)
{
	const struct doctor_input *in = c->in;
	const cJSON *spec, *sel, *labels;
	struct doctor_finding *f;

	if (in->service.unread != NULL) {
		unknown(c->r, "service", "the Service", in->service.unread);
		return;
	}
	if (in->service.obj == NULL) {
		f = add(
		    c->r, DOCTOR_FAIL, "service",
		    "create a headless Service (clusterIP: None, publishNotReadyAddresses: true) "
		    "of that name whose selector selects the pods (README, the five-minute "
		    "example)",
		    "Service %s does not exist: rank 0's name does not resolve",
		    in->service_name ? in->service_name : "?");
		say(f, "the pods' spec.subdomain is %s; no Service %s in namespace %s",
		    in->service_name ? in->service_name : "?",
		    in->service_name ? in->service_name : "?", in->ns);
		return;
	}
	spec = json_get(in->service.obj, "spec");
	if (!streq(json_str(spec, "clusterIP"), "None")) {
		f = add(c->r, DOCTOR_FAIL, "service",
		        "make it headless: clusterIP: None (the field cannot change: delete and "
		        "re-create the Service)",
		        "Service %s is not headless: its pods get no DNS names", in->service_name);
		say(f, "spec.clusterIP: %s",
		    json_str(spec, "clusterIP") ? json_str(spec, "clusterIP") : "(none)");
		return;
	}
	sel = json_get(spec, "selector");
	if (c->rank0 != NULL) {
		const cJSON *e;
		labels = json_get(json_get(c->rank0->pod, "metadata"), "labels");
		if (sel == NULL || sel->child == NULL) {
			f = add(
			    c->r, DOCTOR_FAIL, "service",
			    "give the Service a selector that matches the pod template's labels",
			    "Service %s has no selector: no EndpointSlice lists the pods",
			    in->service_name);
			return;
		}
		cJSON_ArrayForEach(e, sel)
		{
			if (!streq(json_map_str(labels, e->string), cJSON_GetStringValue(e))) {
				f = add(c->r, DOCTOR_FAIL, "service",
				        "make the Service's spec.selector match the pod template's "
				        "labels",
				        "Service %s's selector does not select rank 0 (%s)",
				        in->service_name, c->rank0->name ? c->rank0->name : "?");
				say(f, "selector %s=%s; the pod has %s=%s", e->string,
				    cJSON_GetStringValue(e) ? cJSON_GetStringValue(e) : "?",
				    e->string,
				    json_map_str(labels, e->string)
				        ? json_map_str(labels, e->string)
				        : "(no such label)");
				return;
			}
		}
	}
	c->svc = in->service.obj;
	add(c->r, DOCTOR_OK, "service", NULL, "Service %s is headless and selects rank 0",
	    in->service_name);
}

static void check_endpoint(struct ctx *c)
{
	const struct doctor_input *in = c->in;
	const struct pinfo *r0 = c->rank0;
	const cJSON *sl, *ep;
	int pnr, listed = 0, ready = 0;
	struct doctor_finding *f;

	if (c->svc == NULL || r0 == NULL || r0->name == NULL || !r0->scheduled)
		return;
	if (in->slices.unread != NULL) {
		unknown(c->r, "endpoint", "the Service's EndpointSlices", in->slices.unread);
		return;
	}
	pnr = cJSON_IsTrue(json_get(json_get(c->svc, "spec"), "publishNotReadyAddresses"));
	cJSON_ArrayForEach(sl, items(&in->slices))
	{
		cJSON_ArrayForEach(ep, json_get(sl, "endpoints"))
		{
			if (!streq(json_str(json_get(ep, "targetRef"), "name"), r0->name))
				continue;
			listed = 1;
			ready |= json_get(json_get(ep, "conditions"), "ready") == NULL ||
			         cJSON_IsTrue(json_get(json_get(ep, "conditions"), "ready"));
		}
	}
	if ((!listed || !ready) && !pnr && !r0->ready) {
		f = add(
		    c->r, DOCTOR_FAIL, "endpoint",
		    "set publishNotReadyAddresses: true on the Service (a rank is ready only once "
		    "the job formed), or drop the readiness probe that keeps rank 0 out",
		    "rank 0 (%s) is not Ready and Service %s does not publish not-ready "
		    "addresses: DNS has no name for it",
		    r0->name, in->service_name);
		say(f, "EndpointSlices of %s: rank 0 %s; publishNotReadyAddresses: false",
		    in->service_name, listed ? "listed, not ready" : "not listed");
		return;
	}
	if (!listed && r0->ready) {
		f = add(c->r, DOCTOR_WARN, "endpoint",
		        "wait a few seconds; if it stays so, check the EndpointSlice controller",
		        "rank 0 (%s) is not in Service %s's EndpointSlices yet", r0->name,
		        in->service_name);
		return;
	}
	if (listed)
		add(c->r, DOCTOR_OK, "endpoint", NULL,
		    "rank 0 (%s) is in Service %s's EndpointSlices%s", r0->name, in->service_name,
		    pnr ? " (publishNotReadyAddresses)" : "");
}

static void check_host_network(struct ctx *c)
{
	struct doctor_finding *f = NULL;
	int i, j, nodns = 0, shared = 0, any = 0;

	for (i = 0; i < c->n; i++) {
		const cJSON *spec = json_get(c->p[i].pod, "spec");
		if (!cJSON_IsTrue(json_get(spec, "hostNetwork")))
			continue;
		any = 1;
		if (!streq(json_str(spec, "dnsPolicy"), "ClusterFirstWithHostNet")) {
			if (nodns++ == 0)
				f = add(
				    c->r, DOCTOR_FAIL, "hostnetwork",
				    "set dnsPolicy: ClusterFirstWithHostNet in the pod template",
				    "hostNetwork pods without dnsPolicy ClusterFirstWithHostNet "
				    "use the "
				    "node's DNS: MASTER_ADDR does not resolve");
			say(f, "%s%s (dnsPolicy %s)", nodns > 1 ? ", " : "",
			    c->p[i].name ? c->p[i].name : "?",
			    json_str(spec, "dnsPolicy") ? json_str(spec, "dnsPolicy")
			                                : "ClusterFirst");
		}
	}
	for (i = 0; i < c->n; i++) {
		if (!cJSON_IsTrue(json_get(json_get(c->p[i].pod, "spec"), "hostNetwork")) ||
		    c->p[i].node == NULL)
			continue;
		for (j = i + 1; j < c->n; j++) {
			if (!cJSON_IsTrue(json_get(json_get(c->p[j].pod, "spec"), "hostNetwork")) ||
			    !streq(c->p[i].node, c->p[j].node) || c->p[i].port != c->p[j].port)
				continue;
			if (shared++ == 0)
				f = add(c->r, DOCTOR_FAIL, "hostnetwork",
				        "keep hostNetwork ranks on separate nodes: podAntiAffinity "
				        "(requiredDuringScheduling, topologyKey "
				        "kubernetes.io/hostname) or a "
				        "topologySpreadConstraint with maxSkew 1 and DoNotSchedule",
				        "hostNetwork ranks share a node and the rendezvous port");
			say(f, "%s%s and %s on %s, port %ld", shared > 1 ? "; " : "",
			    c->p[i].name ? c->p[i].name : "?", c->p[j].name ? c->p[j].name : "?",
			    c->p[i].node, c->p[i].port);
		}
	}
	if (any && !nodns && !shared)
		add(c->r, DOCTOR_OK, "hostnetwork", NULL,
		    "hostNetwork pods use ClusterFirstWithHostNet, one per node");
}

static void check_netpol(struct ctx *c)
{
	const struct doctor_input *in = c->in;
	const cJSON *srcs[DOCTOR_MAX_PODS > 64 ? 64 : DOCTOR_MAX_PODS];
	struct netpol_result res;
	struct doctor_finding *f;
	int i, n = 0;

	if (c->rank0 == NULL)
		return;
	if (in->netpols.unread != NULL) {
		unknown(c->r, "netpol", "the namespace's NetworkPolicies", in->netpols.unread);
		return;
	}
	if (cJSON_GetArraySize(items(&in->netpols)) == 0) {
		add(c->r, DOCTOR_OK, "netpol", NULL, "no NetworkPolicy in namespace %s", in->ns);
		return;
	}
	for (i = 0; i < c->n && n < (int)(sizeof(srcs) / sizeof(srcs[0])); i++)
		srcs[n++] = c->p[i].pod;
	switch (netpol_check(items(&in->netpols), in->ns, c->rank0->pod, srcs, n, c->port, &res)) {
	case NETPOL_DROPPED:
		f = add(c->r, DOCTOR_FAIL, "netpol",
		        "add an Ingress rule that admits the job's own pods (podSelector of the "
		        "template's labels) on the rendezvous port, or on every port for the "
		        "collectives",
		        "NetworkPolicy %s drops connections to rank 0 on port %ld", res.policy,
		        c->port);
		say(f,
		    "policy %s selects rank 0 (%s) for Ingress; no policy that selects it admits "
		    "%s on TCP %ld",
		    res.policy, c->rank0->name ? c->rank0->name : "?",
		    res.source >= 0 && res.source < n
		        ? json_str(json_get(srcs[res.source], "metadata"), "name")
		        : "the job's pods",
		    c->port);
		break;
	case NETPOL_UNKNOWN:
		add(c->r, DOCTOR_UNKNOWN, "netpol",
		    "check the policies by hand: kubectl get networkpolicy -o yaml",
		    "the namespace's NetworkPolicies cannot be judged here (ipBlock, named ports, "
		    "labels of other namespaces)");
		break;
	case NETPOL_ADMITTED:
		add(c->r, DOCTOR_OK, "netpol", NULL,
		    "the namespace's NetworkPolicies admit the job's pods to rank 0 on port %ld",
		    c->port);
		break;
	}
}

static void check_mesh(struct ctx *c)
{
	const struct doctor_input *in = c->in;
	const cJSON *ns_labels = json_get(json_get(in->namespace_.obj, "metadata"), "labels");
	const char *label = json_map_str(ns_labels, "istio-injection");
	struct doctor_finding *f = NULL;
	int i, n = 0;

	for (i = 0; i < c->n; i++) {
		const char *who = NULL;
		int m = mesh_redirects(c->p[i].pod, c->port, &who);
		if (m == 0)
			continue;
		if (n++ == 0) {
			char fix[400];
			snprintf(fix, sizeof(fix),
			         "add to the pod template's annotations sidecar.istio.io/inject: "
			         "\"false\" "
			         "(collectives use other ports too), or at least "
			         "traffic.sidecar.istio.io/excludeInboundPorts and "
			         "excludeOutboundPorts: "
			         "\"%ld\"; then restart the pods",
			         c->port);
			f = add(c->r, DOCTOR_FAIL, "mesh", fix,
			        "an Istio sidecar intercepts the rendezvous port %ld", c->port);
		}
		if (n <= 6)
			say(f, "%s%s: %s redirects %s", n > 1 ? "; " : "",
			    c->p[i].name ? c->p[i].name : "?", who ? who : "istio",
			    m == (MESH_IN | MESH_OUT) ? "inbound and outbound"
			    : m == MESH_IN            ? "inbound"
			                              : "outbound");
	}
	if (n > 6)
		say(f, "; and %d more pods", n - 6);
	if (n == 0) {
		f = add(c->r, DOCTOR_OK, "mesh", NULL,
		        "no service-mesh sidecar redirects port %ld in the pods", c->port);
		if (streq(label, "enabled") || json_map_str(ns_labels, "istio.io/rev") != NULL)
			say(f, "the namespace asks for Istio injection, the pods opted out or were "
			       "made "
			       "before it");
	}
}

static void check_step(struct ctx *c)
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
					f = add(c->r, DOCTOR_WARN, "step",
					        "pin the image by digest (image@sha256:...) or use "
					        "imagePullPolicy: IfNotPresent with a tag that "
					        "does not move",
					        "ranks run different images of container %s",
					        json_str(a, "name"));
					say(f, "%s: %.200s; %s: %.200s", c->p[i].name, ia,
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
			f = add(c->r, DOCTOR_WARN, "step",
			        "a static world does not take a rank back: restart every pod of "
			        "the job "
			        "together, or use distenv.dev/elastic",
			        "rank %ld (%s): container %s restarted %ld time(s) after the "
			        "others started",
			        c->p[i].rank, c->p[i].name ? c->p[i].name : "?",
			        json_str(cs, "name") ? json_str(cs, "name") : "?", rc);
			if (last != NULL)
				say(f, "last exit: %s, code %ld",
				    json_str(last, "reason") ? json_str(last, "reason") : "?",
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
			f = add(c->r, DOCTOR_WARN, "step",
			        "the controller makes the pod again with the same rank; the others "
			        "must "
			        "restart with it (a static world), or use distenv.dev/elastic",
			        "%s was %s", on ? on : "a pod",
			        streq(reason, "Evicted") ? "evicted" : "preempted");
			say(f, "\"%.500s\"", json_str(e, "message") ? json_str(e, "message") : "");
			break;
		}
	}
	if (c->r->n_warn == warned)
		add(c->r, DOCTOR_OK, "step", NULL,
		    "ranks in step: one image, no restarts, no eviction or preemption seen");
}

void doctor_run(const struct doctor_input *in, struct doctor_report *out)
{
	struct ctx c;
	const cJSON *pod;
	const char *dom;
	int i;

	memset(out, 0, sizeof(*out));
	out->first_fail = -1;
	memset(&c, 0, sizeof(c));
	c.in = in;
	c.r = out;
	if (in->workload.unread != NULL) {
		unknown(out, "workload", "the workload", in->workload.unread);
		return;
	}
	if (in->workload.obj == NULL) {
		add(out, DOCTOR_FAIL, "workload", "check the name and the namespace (-n)",
		    "%s %s not found in namespace %s", workload_kind_name(in->kind), in->name,
		    in->ns);
		return;
	}
	c.tpl = workload_template(in->kind, in->workload.obj);
	c.start = in->kind == WORKLOAD_STATEFULSET
	              ? json_long(json_get(json_get(in->workload.obj, "spec"), "ordinals"), "start",
	                          1L << 30, 0)
	              : 0;
	c.world = expected_world(in->kind, in->workload.obj, &c.groups);
	c.port =
	    str_long(json_map_str(json_get(json_get(c.tpl, "metadata"), "annotations"), ANN_PORT),
	             DEFAULT_PORT);

	check_webhook(&c);
	if (in->pods.unread != NULL) {
		unknown(out, "opt-in", "the workload's pods", in->pods.unread);
		return;
	}
	c.n = cJSON_GetArraySize(items(&in->pods));
	if (c.n > DOCTOR_MAX_PODS)
		c.n = DOCTOR_MAX_PODS;
	c.p = c.n > 0 ? calloc((size_t)c.n, sizeof(*c.p)) : NULL;
	if (c.n > 0 && c.p == NULL) {
		add(out, DOCTOR_UNKNOWN, "opt-in", NULL, "out of memory reading the pods");
		return;
	}
	i = 0;
	cJSON_ArrayForEach(pod, items(&in->pods))
	{
		if (i == c.n)
			break;
		pod_read(in->kind, c.start, pod, &c.p[i]);
		if (c.p[i].port > 0)
			c.port = c.p[i].port;
		if (c.p[i].rank == 0 && c.p[i].group <= 0 && !c.p[i].deleting)
			c.rank0 = &c.p[i];
		i++;
	}
	check_opt_in(&c);
	if (c.n > 0) {
		check_ranks(&c);
		check_world(&c);
		check_own_env(&c);
	}
	check_service(&c);
	check_endpoint(&c);
	check_host_network(&c);
	check_netpol(&c);
	check_mesh(&c);
	if (c.n > 0)
		check_step(&c);
	if (c.rank0 != NULL && c.rank0->master[0] &&
	    (dom = strstr(c.rank0->master, ".svc.")) != NULL)
		add(out, DOCTOR_OK, "dns", NULL,
		    "MASTER_ADDR %s (cluster domain %s, as distenv read it from its own pod)",
		    c.rank0->master, dom + 5);
	free(c.p);
}

/* ---- target, selector, Service name ---- */

int doctor_parse_target(const char *arg, enum workload_kind *kind, char *name, size_t namelen,
                        char *err, size_t errlen)
{
	static const struct {
		const char *word;
		enum workload_kind kind;
	} words[] = {
	    {"sts", WORKLOAD_STATEFULSET},
	    {"statefulset", WORKLOAD_STATEFULSET},
	    {"statefulsets", WORKLOAD_STATEFULSET},
	    {"statefulset.apps", WORKLOAD_STATEFULSET},
	    {"statefulsets.apps", WORKLOAD_STATEFULSET},
	    {"job", WORKLOAD_JOB},
	    {"jobs", WORKLOAD_JOB},
	    {"job.batch", WORKLOAD_JOB},
	    {"jobs.batch", WORKLOAD_JOB},
	    {"jobset", WORKLOAD_JOBSET},
	    {"jobsets", WORKLOAD_JOBSET},
	    {"js", WORKLOAD_JOBSET},
	    {"jobset.jobset.x-k8s.io", WORKLOAD_JOBSET},
	    {"jobsets.jobset.x-k8s.io", WORKLOAD_JOBSET},
	    {"lws", WORKLOAD_LWS},
	    {"leaderworkerset", WORKLOAD_LWS},
	    {"leaderworkersets", WORKLOAD_LWS},
	    {"leaderworkerset.leaderworkerset.x-k8s.io", WORKLOAD_LWS},
	    {"leaderworkersets.leaderworkerset.x-k8s.io", WORKLOAD_LWS},
	};
	const char *slash = arg != NULL ? strchr(arg, '/') : NULL;
	size_t i, klen;

	if (slash == NULL || slash == arg || slash[1] == '\0' || strchr(slash + 1, '/') != NULL) {
		errf(err, errlen,
		     "'%.100s' is not KIND/NAME (sts/ddp, job/train, jobset/js, lws/vllm)",
		     arg ? arg : "");
		return -1;
	}
	klen = (size_t)(slash - arg);
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (strlen(words[i].word) != klen || strncasecmp(arg, words[i].word, klen) != 0)
			continue;
		if (bounded_printf(name, namelen, "%s", slash + 1) != 0) {
			errf(err, errlen, "name too long");
			return -1;
		}
		*kind = words[i].kind;
		return 0;
	}
	errf(err, errlen,
	     "'%.*s' is not a kind distenv knows: sts (statefulset), job, jobset, lws "
	     "(leaderworkerset)",
	     (int)(klen > 60 ? 60 : klen), arg);
	return -1;
}

int doctor_pod_selector(enum workload_kind kind, const cJSON *workload, const char *name, char *out,
                        size_t outlen, char *err, size_t errlen)
{
	const cJSON *ml, *e;
	size_t o = 0;

	switch (kind) {
	case WORKLOAD_STATEFULSET:
		ml = json_get(json_get(json_get(workload, "spec"), "selector"), "matchLabels");
		if (ml == NULL || ml->child == NULL) {
			errf(err, errlen,
			     "the StatefulSet's selector has no matchLabels: doctor lists pods by "
			     "matchLabels only");
			return -1;
		}
		out[0] = '\0';
		cJSON_ArrayForEach(e, ml)
		{
			const char *v = cJSON_GetStringValue(e);
			int n = snprintf(out + o, outlen - o, "%s%s=%s", o ? "," : "", e->string,
			                 v ? v : "");
			if (n < 0 || (size_t)n >= outlen - o) {
				errf(err, errlen, "the StatefulSet's selector is too long");
				return -1;
			}
			o += (size_t)n;
		}
		return 0;
	case WORKLOAD_JOB:
		return bounded_printf(out, outlen, "batch.kubernetes.io/job-name=%s", name) == 0
		           ? 0
		           : (errf(err, errlen, "name too long"), -1);
	case WORKLOAD_JOBSET:
		return bounded_printf(out, outlen, "jobset.sigs.k8s.io/jobset-name=%s", name) == 0
		           ? 0
		           : (errf(err, errlen, "name too long"), -1);
	case WORKLOAD_LWS:
		return bounded_printf(out, outlen, "leaderworkerset.sigs.k8s.io/name=%s", name) == 0
		           ? 0
		           : (errf(err, errlen, "name too long"), -1);
	default:
		errf(err, errlen, "not a workload kind");
		return -1;
	}
}

void doctor_service_name(enum workload_kind kind, const cJSON *workload, const cJSON *pods,
                         const char *name, char *out, size_t outlen)
{
	const cJSON *pod, *spec = json_get(workload, "spec");
	const char *s = NULL;

	cJSON_ArrayForEach(pod, json_get(pods, "items"))
	{
		if ((s = json_str(json_get(pod, "spec"), "subdomain")) != NULL && s[0])
			break;
		s = NULL;
	}
	if (s == NULL && kind == WORKLOAD_STATEFULSET)
		s = json_str(spec, "serviceName");
	if (s == NULL && kind == WORKLOAD_JOB) {
		const cJSON *tpl = json_get(spec, "template");
		s = json_str(json_get(tpl, "spec"), "subdomain");
		if (s == NULL)
			s = json_map_str(json_get(json_get(tpl, "metadata"), "annotations"),
			                 ANN_SERVICE);
	}
	if (s == NULL && kind == WORKLOAD_JOBSET)
		s = json_str(json_get(spec, "network"), "subdomain");
	if (s == NULL && (kind == WORKLOAD_JOBSET || kind == WORKLOAD_LWS))
		s = name;
	snprintf(out, outlen, "%s", s != NULL ? s : "");
}

int doctor_webhook_service(const cJSON *mwcs, char *ns, size_t nslen, char *name, size_t namelen)
{
	const cJSON *cfg, *wh;

	ns[0] = name[0] = '\0';
	cJSON_ArrayForEach(cfg, json_get(mwcs, "items"))
	{
		cJSON_ArrayForEach(wh, json_get(cfg, "webhooks"))
		{
			const cJSON *svc = json_get(json_get(wh, "clientConfig"), "service");
			if (!streq(json_str(wh, "name"), "pods.distenv.dev"))
				continue;
			if (svc != NULL && json_str(svc, "namespace") && json_str(svc, "name")) {
				snprintf(ns, nslen, "%s", json_str(svc, "namespace"));
				snprintf(name, namelen, "%s", json_str(svc, "name"));
			}
			return 1;
		}
	}
	return 0;
}

/* ---- printing ---- */

static const char *mark(enum doctor_state s)
{
	switch (s) {
	case DOCTOR_OK:
		return "✓";
	case DOCTOR_FAIL:
		return "✗";
	case DOCTOR_WARN:
		return "!";
	default:
		return "?";
	}
}

static const char *state_name(enum doctor_state s)
{
	switch (s) {
	case DOCTOR_OK:
		return "ok";
	case DOCTOR_FAIL:
		return "fail";
	case DOCTOR_WARN:
		return "warn";
	default:
		return "unknown";
	}
}

static const char *const cannot_see =
    "what doctor cannot see: the training code, and the network between nodes "
    "(firewalls outside Kubernetes, MTU, RDMA)";

void doctor_print_text(const struct doctor_input *in, const struct doctor_report *r,
                       struct strbuf *out)
{
	int i;

	strbuf_printf(out, "distenv doctor: %s %s in namespace %s\n", workload_kind_name(in->kind),
	              in->name, in->ns);
	if (r->first_fail >= 0)
		strbuf_printf(out, "first blocking cause: %s\n\n", r->f[r->first_fail].title);
	else
		strbuf_puts(out, "\n");
	for (i = 0; i < r->n; i++) {
		const struct doctor_finding *f = &r->f[i];
		strbuf_printf(out, "%s %s\n", mark(f->state), f->title);
		if (f->evidence[0] && f->state != DOCTOR_OK)
			strbuf_printf(out, "    seen: %s\n", f->evidence);
		else if (f->evidence[0])
			strbuf_printf(out, "    %s\n", f->evidence);
		if (f->fix[0] && f->state != DOCTOR_OK)
			strbuf_printf(out, "    fix:  %s\n", f->fix);
	}
	strbuf_puts(out, "\n");
	if (r->n_fail > 0)
		strbuf_printf(out, "%d blocking cause(s), %d warning(s).\n", r->n_fail, r->n_warn);
	else if (r->n_unknown > 0)
		strbuf_printf(
		    out,
		    "nothing blocking found in what could be read; %d check(s) could not be "
		    "made (?).\n",
		    r->n_unknown);
	else
		strbuf_printf(out, "nothing wrong found%s.\n",
		              r->n_warn ? " that blocks (see the warnings)" : "");
	strbuf_printf(out, "%s.\n", cannot_see);
}

void doctor_print_json(const struct doctor_input *in, const struct doctor_report *r,
                       struct strbuf *out)
{
	int i;

	strbuf_puts(out, "{\"kind\":");
	json_put_string(out, workload_kind_name(in->kind), 64);
	strbuf_puts(out, ",\"namespace\":");
	json_put_string(out, in->ns, 256);
	strbuf_puts(out, ",\"name\":");
	json_put_string(out, in->name, 256);
	strbuf_printf(out, ",\"blocked\":%s,\"firstCause\":", r->n_fail > 0 ? "true" : "false");
	if (r->first_fail >= 0)
		json_put_string(out, r->f[r->first_fail].check, 64);
	else
		strbuf_puts(out, "null");
	strbuf_puts(out, ",\"checks\":[");
	for (i = 0; i < r->n; i++) {
		const struct doctor_finding *f = &r->f[i];
		strbuf_puts(out, i ? ",{\"check\":" : "{\"check\":");
		json_put_string(out, f->check, sizeof(f->check));
		strbuf_puts(out, ",\"state\":");
		json_put_string(out, state_name(f->state), 16);
		strbuf_puts(out, ",\"title\":");
		json_put_string(out, f->title, sizeof(f->title));
		strbuf_puts(out, ",\"evidence\":");
		json_put_string(out, f->evidence, sizeof(f->evidence));
		strbuf_puts(out, ",\"fix\":");
		json_put_string(out, f->fix, sizeof(f->fix));
		strbuf_puts(out, "}");
	}
	strbuf_puts(out, "],\"cannotSee\":");
	json_put_string(out, cannot_see, 256);
	strbuf_puts(out, "}\n");
}
