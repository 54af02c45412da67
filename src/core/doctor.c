/*
 * `distenv-webhook doctor`: why a job does not form, judged on the objects
 * the shell read from the API server, in the order a job forms: distenv
 * installed for the namespace, pods opted in and injected, every rank
 * present and running, one world that matches the workload, rank 0
 * reachable (Service, EndpointSlice, DNS, hostNetwork, NetworkPolicy), no
 * mesh in the way, ranks in step. This file is the driver: it reads the pod
 * table and calls the checks in that order (doctor_pods.c, doctor_net.c;
 * what differs by kind is doctor_kind.c's, the report doctor_report.c's).
 * Pure: values in, a report out; the pod table is the one allocation, freed
 * before doctor_run returns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotation.h"
#include "doctor_int.h"
#include "json.h"
#include "kind.h"

#define DEFAULT_PORT 29500

/* "rank=1,world-size=3,master=HOST:PORT[,omitted=...]" into p. */
static void read_injected(const char *v, struct pinfo *p)
{
	const char *m;
	char *colon;
	long n;

	p->injected = 1;
	if (v == NULL)
		return;
	/* a world of 1 or more, as distenv writes it; else unknown (-1) */
	if (strncmp(v, "rank=", 5) == 0 && v[5] >= '0' && v[5] <= '9')
		p->rank = strtol(v + 5, NULL, 10);
	if ((m = strstr(v, "world-size=")) != NULL && (n = strtol(m + 11, NULL, 10)) >= 1)
		p->world = n;
	if ((m = strstr(v, "master=")) != NULL) {
		snprintf(p->master, sizeof(p->master), "%.*s", (int)strcspn(m + 7, ","), m + 7);
		if ((colon = strrchr(p->master, ':')) != NULL) {
			p->port = strtol(colon + 1, NULL, 10);
			*colon = '\0';
		}
	}
}

static void pod_read(const struct kind *kind, long start, const cJSON *pod, struct pinfo *p)
{
	const cJSON *meta = json_get(pod, "metadata"), *status = json_get(pod, "status");
	const cJSON *labels = json_get(meta, "labels"), *anns = json_get(meta, "annotations");
	const char *inj = json_map_str(anns, ANN_INJECTED);
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
	doctor_pod_place(kind, start, labels, anns, p);
}

void doctor_run(const struct doctor_input *in, struct doctor_report *out)
{
	struct doctor_ctx c;
	struct kind_doctor_want want;
	const cJSON *pod;
	const char *dom;
	int i;

	memset(out, 0, sizeof(*out));
	out->first_fail = -1;
	memset(&c, 0, sizeof(c));
	c.in = in;
	c.r = out;
	if (in->workload.unread != NULL) {
		doctor_unknown(out, "workload", "the workload", in->workload.unread);
		return;
	}
	if (in->workload.obj == NULL) {
		doctor_add(out, DOCTOR_FAIL, "workload", "check the name and the namespace (-n)",
		           "%s %s not found in namespace %s", kind_name(in->kind), in->name,
		           in->ns);
		return;
	}
	doctor_want(in->kind, in->workload.obj, &want);
	c.tpl = want.tmpl;
	c.start = want.start;
	c.world = want.world;
	c.groups = want.groups;
	c.port =
	    str_long(json_map_str(json_get(json_get(c.tpl, "metadata"), "annotations"), ANN_PORT),
	             DEFAULT_PORT);

	doctor_check_webhook(&c);
	if (in->pods.unread != NULL) {
		doctor_unknown(out, "opt-in", "the workload's pods", in->pods.unread);
		return;
	}
	c.n = cJSON_GetArraySize(items(&in->pods));
	if (c.n > DOCTOR_MAX_PODS)
		c.n = DOCTOR_MAX_PODS;
	c.p = c.n > 0 ? calloc((size_t)c.n, sizeof(*c.p)) : NULL;
	if (c.n > 0 && c.p == NULL) {
		doctor_add(out, DOCTOR_UNKNOWN, "opt-in", NULL, "out of memory reading the pods");
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
	doctor_check_opt_in(&c);
	if (c.n > 0) {
		doctor_check_ranks(&c);
		doctor_check_world(&c);
		doctor_check_own_env(&c);
	}
	doctor_check_service(&c);
	doctor_check_endpoint(&c);
	doctor_check_host_network(&c);
	doctor_check_netpol(&c);
	doctor_check_mesh(&c);
	if (c.n > 0)
		doctor_check_step(&c);
	if (c.rank0 != NULL && c.rank0->master[0] &&
	    (dom = strstr(c.rank0->master, ".svc.")) != NULL)
		doctor_add(
		    out, DOCTOR_OK, "dns", NULL,
		    "MASTER_ADDR %s (cluster domain %s, as distenv read it from its own pod)",
		    c.rank0->master, dom + 5);
	free(c.p);
}
