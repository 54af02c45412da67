/*
 * Apply-time validation of what the cluster around a workload does to its
 * ranks' names (validate.c runs it with the other checks): the headless
 * Service its pods' names resolve through, and the namespace's
 * NetworkPolicies between its pods on the rendezvous port. Warnings only:
 * both can change after the apply.
 */
#include "validate_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotation.h"
#include "dns.h"
#include "json.h"
#include "netpol.h"
#include "util.h"
#include "workload.h"

/*
 * Whether the Service's selector selects every pod of template tmpl of kind k:
 * 1 yes, 0 no, -1 cannot be told (a label the controller adds with a value not
 * known at apply time). A label the template lacks may be one the kind's
 * controllers add to every pod (job-name: the workload's name); one whose value
 * differs from pod to pod selects one pod at most (*per_pod names it).
 */
static int selects(const struct service_info *si, const struct kind *k, const char *name,
                   const cJSON *tmpl, const char **per_pod)
{
	const cJSON *labels = json_get(json_get(tmpl, "metadata"), "labels");
	int i, unknown = 0;

	*per_pod = NULL;
	if (si->n_selector <= 0)
		return 0;
	for (i = 0; i < si->n_selector; i++) {
		const char *key = si->selector[i][0], *want = si->selector[i][1];
		const char *have = json_str(labels, key);
		const struct kind_label *l = k != NULL ? k->pod_labels : NULL;

		while (have == NULL && l != NULL && l->key != NULL && strcmp(l->key, key) != 0)
			l++;
		if (have != NULL || l == NULL || l->key == NULL) {
			if (have == NULL || strcmp(have, want) != 0)
				return 0;
		} else if (l->value == KIND_LABEL_NAME) {
			if (strcmp(name, want) != 0)
				return 0;
		} else if (l->value == KIND_LABEL_PER_POD) {
			*per_pod = l->key;
			return 0;
		} else {
			unknown = 1;
		}
	}
	return unknown ? -1 : 1;
}

/* The Service from the manifest (render), as the API would answer; 1 found, 0 not. */
static int service_from(const cJSON *services, const char *ns, const char *name,
                        struct service_info *si, char *err, size_t errlen)
{
	const cJSON *s;

	cJSON_ArrayForEach(s, services)
	{
		const cJSON *meta = json_get(s, "metadata");
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
	const char *per_pod;
	char err[256];
	int found, sel;

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
		view_warn(v, "cannot check Service %.40s: %.60s", w->service, err);
		return;
	}
	if (found == 0) {
		view_warn(v, "Service %.50s not found in %.30s: MASTER_ADDR will not resolve",
		          w->service, w->ns);
		return;
	}
	if (!si.headless)
		/* clusterIP cannot be changed in place: the Service has to be made again */
		view_warn(v,
		          "Service %.30s is not headless: no pod names; delete, re-create with "
		          "clusterIP: None",
		          w->service);
	sel = selects(&si, kind_named(NULL, w->kind), w->name, w->tmpl[0], &per_pod);
	if (sel == 0 && per_pod != NULL)
		view_warn(v, "Service %.40s selects by %.40s, which differs per pod: not every pod",
		          w->service, per_pod);
	else if (sel == 0)
		view_warn(v, "Service %.50s does not select the pod template's labels", w->service);
	if (!si.publish_not_ready)
		view_warn(
		    v,
		    "Service %.40s lacks publishNotReadyAddresses: true; rank 0 resolves only when "
		    "Ready",
		    w->service);
}

/*
 * Cuts the longest of the n strings (each at most 253 bytes, in bufs of 254)
 * one byte at a time until together they take at most budget bytes.
 */
static void fit(char (*s)[254], int n, size_t budget)
{
	size_t total, len[3];
	int i, longest;

	for (;;) {
		total = 0;
		longest = 0;
		for (i = 0; i < n; i++) {
			len[i] = strlen(s[i]);
			total += len[i];
			if (len[i] > len[longest])
				longest = i;
		}
		if (total <= budget || len[longest] == 0)
			return;
		s[longest][len[longest] - 1] = '\0';
	}
}

#define NETPOL_WARNING "NetworkPolicy %s/%s drops port %ld between pods of %s %s: admit it"

/*
 * The NetworkPolicies of the namespace let every template's pods reach rank 0
 * on the rendezvous port (netpol_check). Only a certain drop is warned about;
 * a failed list, or a policy distenv cannot judge, says nothing.
 */
static void check_netpols(const struct view *w, const struct config *cfg,
                          const struct workload_lookup *lookup, struct validation *v)
{
	const cJSON *anns = json_get(json_get(w->rank0, "metadata"), "annotations");
	const char *ps = json_str(anns, ANN_PORT);
	char names[3][254], err[256];
	struct netpol_result r;
	cJSON *list = NULL;
	long port = cfg->default_port;

	if (lookup == NULL || lookup->list_netpols == NULL || w->rank0 == NULL || w->n_pods == 0)
		return;
	if (ps != NULL && parse_long(ps, 1, 65535, &port) != 0)
		return; /* a bad port is a problem of its own */
	if (lookup->list_netpols(lookup->ctx, w->ns, &list, err, sizeof(err)) != 0)
		return;
	if (netpol_check(json_get(list, "items"), w->ns, w->rank0, w->pods, w->n_pods, port, &r) ==
	    NETPOL_DROPPED) {
		snprintf(names[0], sizeof(names[0]), "%s", w->ns);
		snprintf(names[1], sizeof(names[1]), "%s", r.policy);
		snprintf(names[2], sizeof(names[2]), "%s", w->name);
		/* the names share what the rest of the warning leaves of its 119 characters */
		fit(names, 3,
		    VALIDATE_WARNING_LEN - 1 - strlen("distenv: ") -
		        (size_t)snprintf(NULL, 0, NETPOL_WARNING, "", "", port, w->kind, ""));
		view_warn(v, NETPOL_WARNING, names[0], names[1], port, w->kind, names[2]);
	}
	cJSON_Delete(list);
}

void validate_cluster(const struct view *w, const struct config *cfg,
                      const struct workload_lookup *lookup, const cJSON *services,
                      struct validation *v)
{
	check_service(w, lookup, services, v);
	check_netpols(w, cfg, lookup, v);
}
