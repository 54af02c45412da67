/*
 * The shell of `doctor`: reads, as a person with kubectl would, the workload,
 * its pods, the namespace's events, the Service and its EndpointSlices, the
 * namespace and its NetworkPolicies, and distenv's MutatingWebhookConfiguration
 * and the EndpointSlices of its Service; hands them to core/doctor.c and
 * prints its report. Every answer is owned here and freed at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "doctor.h"
#include "doctor_cmd.h"
#include "dns.h"
#include "kind.h"
#include "kube.h"
#include "strbuf.h"
#include "util.h"

/* One read: the answer (owned) and why it could not be made. */
struct read {
	cJSON *obj;
	char why[512];
	int done;
};

static void get(struct kube_client *kc, const char *path, const char *what, struct read *r)
{
	int rc = kube_get_json(kc, path, what, &r->obj, r->why, sizeof(r->why));

	r->done = 1;
	if (rc >= 0)
		r->why[0] = '\0';
}

static struct doctor_obj as_obj(const struct read *r)
{
	struct doctor_obj o = {NULL, NULL};

	if (!r->done)
		o.unread = "not read (an earlier read it depends on failed)";
	else if (r->why[0])
		o.unread = r->why;
	else
		o.obj = r->obj;
	return o;
}

int doctor_cmd_run(const struct doctor_opts *o, const struct config *cfg, FILE *out, char *err,
                   size_t errlen)
{
	enum {
		R_WORKLOAD,
		R_PODS,
		R_EVENTS,
		R_SVC,
		R_SLICES,
		R_NS,
		R_NETPOLS,
		R_MWCS,
		R_WHSLICES,
		R_N
	};
	struct read rd[R_N];
	struct kube_client *kc;
	struct doctor_input in;
	struct doctor_report *rep = NULL;
	char path[1024], what[512], sel[700], svc[256] = "", whns[256], whname[256];
	struct strbuf sb;
	int i, rc = 2;

	memset(rd, 0, sizeof(rd));
	kc = kube_client_new(cfg, err, errlen);
	if (kc == NULL)
		return 2;
	if (workload_api_path(o->kind, o->ns, o->name, path, sizeof(path), err, errlen) != 0)
		goto out;
	snprintf(what, sizeof(what), "get %s %s in namespace %s", kind_name(o->kind), o->name,
	         o->ns);
	get(kc, path, what, &rd[R_WORKLOAD]);
	if (rd[R_WORKLOAD].why[0] && strstr(rd[R_WORKLOAD].why, "cannot reach") != NULL) {
		errf(err, errlen, "%s", rd[R_WORKLOAD].why);
		goto out;
	}
	if (rd[R_WORKLOAD].obj != NULL &&
	    doctor_pod_selector(o->kind, rd[R_WORKLOAD].obj, o->name, sel, sizeof(sel),
	                        rd[R_PODS].why, sizeof(rd[R_PODS].why)) == 0) {
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods?labelSelector=%s", o->ns,
		         sel);
		snprintf(what, sizeof(what), "list pods in namespace %s", o->ns);
		get(kc, path, what, &rd[R_PODS]);
	} else if (rd[R_PODS].why[0]) {
		rd[R_PODS].done = 1;
	}
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events?limit=1000", o->ns);
	snprintf(what, sizeof(what), "list events in namespace %s", o->ns);
	get(kc, path, what, &rd[R_EVENTS]);
	if (rd[R_WORKLOAD].obj != NULL)
		doctor_service_name(o->kind, rd[R_WORKLOAD].obj, rd[R_PODS].obj, o->name, svc,
		                    sizeof(svc));
	if (svc[0] && dns_label_valid(svc)) {
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/services/%s", o->ns, svc);
		snprintf(what, sizeof(what), "get services in namespace %s", o->ns);
		get(kc, path, what, &rd[R_SVC]);
		snprintf(path, sizeof(path),
		         "/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices?labelSelector="
		         "kubernetes.io/service-name=%s",
		         o->ns, svc);
		snprintf(what, sizeof(what), "list endpointslices.discovery.k8s.io in namespace %s",
		         o->ns);
		get(kc, path, what, &rd[R_SLICES]);
	}
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s", o->ns);
	snprintf(what, sizeof(what), "get namespace %s", o->ns);
	get(kc, path, what, &rd[R_NS]);
	snprintf(path, sizeof(path), "/apis/networking.k8s.io/v1/namespaces/%s/networkpolicies",
	         o->ns);
	snprintf(what, sizeof(what), "list networkpolicies.networking.k8s.io in namespace %s",
	         o->ns);
	get(kc, path, what, &rd[R_NETPOLS]);
	get(kc, "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
	    "list mutatingwebhookconfigurations.admissionregistration.k8s.io (cluster-wide)",
	    &rd[R_MWCS]);
	if (rd[R_MWCS].obj != NULL &&
	    doctor_webhook_service(rd[R_MWCS].obj, whns, sizeof(whns), whname, sizeof(whname)) &&
	    whns[0]) {
		snprintf(path, sizeof(path),
		         "/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices?labelSelector="
		         "kubernetes.io/service-name=%s",
		         whns, whname);
		snprintf(what, sizeof(what),
		         "list endpointslices.discovery.k8s.io in namespace %s (distenv's own)",
		         whns);
		get(kc, path, what, &rd[R_WHSLICES]);
	} else {
		rd[R_WHSLICES].done = 1; /* no Service to read: a URL, or no webhook */
	}

	memset(&in, 0, sizeof(in));
	in.kind = o->kind;
	in.ns = o->ns;
	in.name = o->name;
	in.workload = as_obj(&rd[R_WORKLOAD]);
	in.pods = as_obj(&rd[R_PODS]);
	in.events = as_obj(&rd[R_EVENTS]);
	in.service_name = svc;
	in.service = as_obj(&rd[R_SVC]);
	if (!svc[0])
		in.service.unread = NULL; /* no name known: "does not exist" is the finding */
	in.slices = as_obj(&rd[R_SLICES]);
	in.namespace_ = as_obj(&rd[R_NS]);
	in.netpols = as_obj(&rd[R_NETPOLS]);
	in.mwcs = as_obj(&rd[R_MWCS]);
	in.webhook_slices = as_obj(&rd[R_WHSLICES]);
	if (in.events.unread != NULL) /* events only add quotes: go on without them */
		in.events.unread = NULL;

	rep = malloc(sizeof(*rep));
	if (rep == NULL) {
		errf(err, errlen, "out of memory");
		goto out;
	}
	doctor_run(&in, rep);
	strbuf_init(&sb);
	if (o->json)
		doctor_print_json(&in, rep, &sb);
	else
		doctor_print_text(&in, rep, &sb);
	if (!o->json && rd[R_EVENTS].why[0])
		strbuf_printf(&sb, "(events not read: %s)\n", rd[R_EVENTS].why);
	if (sb.oom || sb.buf == NULL) {
		errf(err, errlen, "out of memory");
		strbuf_free(&sb);
		goto out;
	}
	fputs(sb.buf, out);
	strbuf_free(&sb);
	rc = rep->n_fail > 0 ? 1 : rep->n_unknown > 0 ? 3 : 0;
out:
	free(rep);
	for (i = 0; i < R_N; i++)
		cJSON_Delete(rd[i].obj);
	kube_client_free(kc);
	return rc;
}
