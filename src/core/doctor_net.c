/*
 * doctor's checks of the way to rank 0: distenv installed for the namespace
 * (its MutatingWebhookConfiguration, CA, selectors and endpoints), the
 * headless Service and its EndpointSlices, hostNetwork pods' DNS and ports,
 * NetworkPolicies (netpol.c) and a mesh sidecar (mesh.c). Pure: reads the
 * objects, adds findings.
 */
#include <stdio.h>
#include <string.h>

#include "annotation.h"
#include "doctor_int.h"
#include "json.h"
#include "mesh.h"
#include "netpol.h"

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

void doctor_check_webhook(struct doctor_ctx *c)
{
	const struct doctor_input *in = c->in;
	const cJSON *cfg, *wh, *found = NULL, *ep;
	const cJSON *tpl_labels = json_get(json_get(c->tpl, "metadata"), "labels");
	const cJSON *ns_labels = json_get(json_get(in->namespace_.obj, "metadata"), "labels");
	const char *cfg_name = NULL, *ca;
	struct doctor_finding *f;
	int ready = 0, any = 0;

	if (in->mwcs.unread != NULL) {
		doctor_unknown(c->r, "webhook", "distenv's MutatingWebhookConfiguration",
		               in->mwcs.unread);
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
		f = doctor_add(
		    c->r, DOCTOR_FAIL, "webhook",
		    "install it: helm install distenv charts/distenv -n distenv-system "
		    "--create-namespace (README, Install); then delete the pods so their "
		    "controller makes them again",
		    "distenv is not installed: no MutatingWebhookConfiguration has the webhook "
		    "pods.distenv.dev");
		doctor_say(
		    f, "%d MutatingWebhookConfiguration(s) in the cluster, none of them distenv's",
		    cJSON_GetArraySize(items(&in->mwcs)));
		return;
	}
	ca = json_str(json_get(found, "clientConfig"), "caBundle");
	if (json_get(json_get(found, "clientConfig"), "url") == NULL && (ca == NULL || !ca[0])) {
		f = doctor_add(
		    c->r, DOCTOR_FAIL, "webhook",
		    "the chart writes caBundle itself (selfSigned) or through cert-manager's CA "
		    "injector (certManager: is cert-manager's cainjector running?); helm upgrade "
		    "distenv, then delete the pods",
		    "distenv's webhook has no CA: the API server cannot call it");
		doctor_say(f,
		           "MutatingWebhookConfiguration %s, webhook pods.distenv.dev: "
		           "clientConfig.caBundle is empty",
		           cfg_name ? cfg_name : "?");
		return;
	}
	if (c->tpl != NULL && !selector_matches(json_get(found, "objectSelector"), tpl_labels)) {
		f = doctor_add(
		    c->r, DOCTOR_FAIL, "webhook",
		    "add the label distenv.dev/inject: \"true\" to the pod template's "
		    "metadata.labels, then delete the pods",
		    "the pod template does not opt in: distenv's objectSelector does not match its "
		    "labels");
		doctor_say(
		    f,
		    "webhook pods.distenv.dev of %s selects distenv.dev/inject=true; the template "
		    "has distenv.dev/inject=%s",
		    cfg_name ? cfg_name : "?",
		    json_map_str(tpl_labels, LABEL_INJECT) ? json_map_str(tpl_labels, LABEL_INJECT)
		                                           : "(none)");
		return;
	}
	if (in->namespace_.obj != NULL &&
	    !selector_matches(json_get(found, "namespaceSelector"), ns_labels)) {
		f = doctor_add(
		    c->r, DOCTOR_FAIL, "webhook",
		    "run the job in another namespace, or take this one out of the chart's "
		    "webhook.excludeNamespaces / namespaceSelectorExpressions",
		    "distenv's webhook leaves namespace %s out (its namespaceSelector)", in->ns);
		doctor_say(f,
		           "MutatingWebhookConfiguration %s: namespaceSelector does not match the "
		           "namespace's labels",
		           cfg_name ? cfg_name : "?");
		return;
	}
	if (in->webhook_slices.unread != NULL) {
		f = doctor_add(
		    c->r, DOCTOR_OK, "webhook", NULL,
		    "distenv is installed for namespace %s (%s, CA set, selectors match)", in->ns,
		    cfg_name ? cfg_name : "?");
		doctor_unknown(c->r, "webhook", "the EndpointSlices of distenv's Service",
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
			f = doctor_add(
			    c->r, DOCTOR_FAIL, "webhook",
			    "look at distenv's own pods: kubectl -n <distenv's namespace> get "
			    "pods, "
			    "describe, logs",
			    "distenv's Service has no ready endpoint: pods are %s",
			    streq(fp, "Ignore") ? "created without distenv's env (failurePolicy "
			                          "Ignore)"
			                        : "refused (failurePolicy Fail)");
			doctor_say(f, "%d endpoint(s), none ready", any);
			return;
		}
	}
	f = doctor_add(c->r, DOCTOR_OK, "webhook", NULL,
	               "distenv is installed for namespace %s (%s, CA set, selectors match)",
	               in->ns, cfg_name ? cfg_name : "?");
	if (in->webhook_slices.obj != NULL)
		doctor_say(f, "%d ready endpoint(s) behind distenv's Service", ready);
	else
		doctor_say(f,
		           "its clientConfig names a URL: whether it answers is not checked here");
}

void doctor_check_service(struct doctor_ctx *c)
{
	const struct doctor_input *in = c->in;
	const cJSON *spec, *sel, *labels;
	struct doctor_finding *f;

	if (in->service.unread != NULL) {
		doctor_unknown(c->r, "service", "the Service", in->service.unread);
		return;
	}
	if (in->service.obj == NULL) {
		f = doctor_add(
		    c->r, DOCTOR_FAIL, "service",
		    "create a headless Service (clusterIP: None, publishNotReadyAddresses: true) "
		    "of that name whose selector selects the pods (README, the five-minute "
		    "example)",
		    "Service %s does not exist: rank 0's name does not resolve",
		    in->service_name ? in->service_name : "?");
		doctor_say(f, "the pods' spec.subdomain is %s; no Service %s in namespace %s",
		           in->service_name ? in->service_name : "?",
		           in->service_name ? in->service_name : "?", in->ns);
		return;
	}
	spec = json_get(in->service.obj, "spec");
	if (!streq(json_str(spec, "clusterIP"), "None")) {
		f = doctor_add(
		    c->r, DOCTOR_FAIL, "service",
		    "make it headless: clusterIP: None (the field cannot change: delete and "
		    "re-create the Service)",
		    "Service %s is not headless: its pods get no DNS names", in->service_name);
		doctor_say(f, "spec.clusterIP: %s",
		           json_str(spec, "clusterIP") ? json_str(spec, "clusterIP") : "(none)");
		return;
	}
	sel = json_get(spec, "selector");
	if (c->rank0 != NULL) {
		const cJSON *e;
		labels = json_get(json_get(c->rank0->pod, "metadata"), "labels");
		if (sel == NULL || sel->child == NULL) {
			f = doctor_add(
			    c->r, DOCTOR_FAIL, "service",
			    "give the Service a selector that matches the pod template's labels",
			    "Service %s has no selector: no EndpointSlice lists the pods",
			    in->service_name);
			return;
		}
		cJSON_ArrayForEach(e, sel)
		{
			if (!streq(json_map_str(labels, e->string), cJSON_GetStringValue(e))) {
				f = doctor_add(
				    c->r, DOCTOR_FAIL, "service",
				    "make the Service's spec.selector match the pod template's "
				    "labels",
				    "Service %s's selector does not select rank 0 (%s)",
				    in->service_name, c->rank0->name ? c->rank0->name : "?");
				doctor_say(f, "selector %s=%s; the pod has %s=%s", e->string,
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
	doctor_add(c->r, DOCTOR_OK, "service", NULL, "Service %s is headless and selects rank 0",
	           in->service_name);
}

void doctor_check_endpoint(struct doctor_ctx *c)
{
	const struct doctor_input *in = c->in;
	const struct pinfo *r0 = c->rank0;
	const cJSON *sl, *ep;
	int pnr, listed = 0, ready = 0;
	struct doctor_finding *f;

	if (c->svc == NULL || r0 == NULL || r0->name == NULL || !r0->scheduled)
		return;
	if (in->slices.unread != NULL) {
		doctor_unknown(c->r, "endpoint", "the Service's EndpointSlices", in->slices.unread);
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
		f = doctor_add(
		    c->r, DOCTOR_FAIL, "endpoint",
		    "set publishNotReadyAddresses: true on the Service (a rank is ready only once "
		    "the job formed), or drop the readiness probe that keeps rank 0 out",
		    "rank 0 (%s) is not Ready and Service %s does not publish not-ready "
		    "addresses: DNS has no name for it",
		    r0->name, in->service_name);
		doctor_say(f, "EndpointSlices of %s: rank 0 %s; publishNotReadyAddresses: false",
		           in->service_name, listed ? "listed, not ready" : "not listed");
		return;
	}
	if (!listed && r0->ready) {
		f = doctor_add(
		    c->r, DOCTOR_WARN, "endpoint",
		    "wait a few seconds; if it stays so, check the EndpointSlice controller",
		    "rank 0 (%s) is not in Service %s's EndpointSlices yet", r0->name,
		    in->service_name);
		return;
	}
	if (listed)
		doctor_add(c->r, DOCTOR_OK, "endpoint", NULL,
		           "rank 0 (%s) is in Service %s's EndpointSlices%s", r0->name,
		           in->service_name, pnr ? " (publishNotReadyAddresses)" : "");
}

void doctor_check_host_network(struct doctor_ctx *c)
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
				f = doctor_add(
				    c->r, DOCTOR_FAIL, "hostnetwork",
				    "set dnsPolicy: ClusterFirstWithHostNet in the pod template",
				    "hostNetwork pods without dnsPolicy ClusterFirstWithHostNet "
				    "use the "
				    "node's DNS: MASTER_ADDR does not resolve");
			doctor_say(f, "%s%s (dnsPolicy %s)", nodns > 1 ? ", " : "",
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
				f = doctor_add(
				    c->r, DOCTOR_FAIL, "hostnetwork",
				    "keep hostNetwork ranks on separate nodes: podAntiAffinity "
				    "(requiredDuringScheduling, topologyKey "
				    "kubernetes.io/hostname) or a "
				    "topologySpreadConstraint with maxSkew 1 and DoNotSchedule",
				    "hostNetwork ranks share a node and the rendezvous port");
			doctor_say(f, "%s%s and %s on %s, port %ld", shared > 1 ? "; " : "",
			           c->p[i].name ? c->p[i].name : "?",
			           c->p[j].name ? c->p[j].name : "?", c->p[i].node, c->p[i].port);
		}
	}
	if (any && !nodns && !shared)
		doctor_add(c->r, DOCTOR_OK, "hostnetwork", NULL,
		           "hostNetwork pods use ClusterFirstWithHostNet, one per node");
}

void doctor_check_netpol(struct doctor_ctx *c)
{
	const struct doctor_input *in = c->in;
	const cJSON *srcs[DOCTOR_MAX_PODS > 64 ? 64 : DOCTOR_MAX_PODS];
	struct netpol_result res;
	struct doctor_finding *f;
	int i, n = 0;

	if (c->rank0 == NULL)
		return;
	if (in->netpols.unread != NULL) {
		doctor_unknown(c->r, "netpol", "the namespace's NetworkPolicies",
		               in->netpols.unread);
		return;
	}
	if (cJSON_GetArraySize(items(&in->netpols)) == 0) {
		doctor_add(c->r, DOCTOR_OK, "netpol", NULL, "no NetworkPolicy in namespace %s",
		           in->ns);
		return;
	}
	for (i = 0; i < c->n && n < (int)(sizeof(srcs) / sizeof(srcs[0])); i++)
		srcs[n++] = c->p[i].pod;
	switch (netpol_check(items(&in->netpols), in->ns, c->rank0->pod, srcs, n, c->port, &res)) {
	case NETPOL_DROPPED:
		f = doctor_add(
		    c->r, DOCTOR_FAIL, "netpol",
		    "add an Ingress rule that admits the job's own pods (podSelector of the "
		    "template's labels) on the rendezvous port, or on every port for the "
		    "collectives",
		    "NetworkPolicy %s drops connections to rank 0 on port %ld", res.policy,
		    c->port);
		doctor_say(
		    f,
		    "policy %s selects rank 0 (%s) for Ingress; no policy that selects it admits "
		    "%s on TCP %ld",
		    res.policy, c->rank0->name ? c->rank0->name : "?",
		    res.source >= 0 && res.source < n
		        ? json_str(json_get(srcs[res.source], "metadata"), "name")
		        : "the job's pods",
		    c->port);
		break;
	case NETPOL_UNKNOWN:
		doctor_add(
		    c->r, DOCTOR_UNKNOWN, "netpol",
		    "check the policies by hand: kubectl get networkpolicy -o yaml",
		    "the namespace's NetworkPolicies cannot be judged here (ipBlock, named ports, "
		    "labels of other namespaces)");
		break;
	case NETPOL_ADMITTED:
		doctor_add(
		    c->r, DOCTOR_OK, "netpol", NULL,
		    "the namespace's NetworkPolicies admit the job's pods to rank 0 on port %ld",
		    c->port);
		break;
	}
}

void doctor_check_mesh(struct doctor_ctx *c)
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
			f = doctor_add(c->r, DOCTOR_FAIL, "mesh", fix,
			               "an Istio sidecar intercepts the rendezvous port %ld",
			               c->port);
		}
		if (n <= 6)
			doctor_say(f, "%s%s: %s redirects %s", n > 1 ? "; " : "",
			           c->p[i].name ? c->p[i].name : "?", who ? who : "istio",
			           m == (MESH_IN | MESH_OUT) ? "inbound and outbound"
			           : m == MESH_IN            ? "inbound"
			                                     : "outbound");
	}
	if (n > 6)
		doctor_say(f, "; and %d more pods", n - 6);
	if (n == 0) {
		f = doctor_add(c->r, DOCTOR_OK, "mesh", NULL,
		               "no service-mesh sidecar redirects port %ld in the pods", c->port);
		if (streq(label, "enabled") || json_map_str(ns_labels, "istio.io/rev") != NULL)
			doctor_say(
			    f, "the namespace asks for Istio injection, the pods opted out or were "
			       "made "
			       "before it");
	}
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
