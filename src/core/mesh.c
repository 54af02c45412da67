/*
 * Istio's traffic redirection read back from a pod: what its injector wrote
 * (manifests/charts/istio-control/istio-discovery/files/injection-template.yaml:
 * an istio-init init container running `istio-iptables -p 15001 -z 15006 -u
 * 1337 -m MODE -i RANGES -x RANGES -b PORTS -d PORTS [-q PORTS] [-o PORTS]`,
 * istio-validation in its place when the CNI plugin applies the rules from
 * the traffic.sidecar.istio.io annotations, an istio-proxy container or
 * native sidecar, the sidecar.istio.io/status annotation). Pure.
 */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "mesh.h"

int mesh_port_listed(const char *list, long port)
{
	const char *p = list;
	char *end;
	long v;

	if (list == NULL)
		return 0;
	while (*p != '\0') {
		while (*p == ' ' || *p == ',')
			p++;
		if (*p == '*')
			return 1;
		if (*p < '0' || *p > '9') {
			p += strcspn(p, ",");
			continue;
		}
		v = strtol(p, &end, 10);
		if (v == port && (*end == '\0' || *end == ',' || *end == ' '))
			return 1;
		p = end;
		p += strcspn(p, ",");
	}
	return 0;
}

/* The container named name in the array list, or NULL. */
static const cJSON *container_named(const cJSON *list, const char *name)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, list)
	{
		const char *n = json_str(c, "name");
		if (n != NULL && strcmp(n, name) == 0)
			return c;
	}
	return NULL;
}

/* istio-iptables' settings: the annotations' values, then the arguments over them. */
struct redirect {
	const char *mode, *in_include, *in_exclude, *out_ranges, *out_exclude, *out_include;
};

static void from_args(const cJSON *c, struct redirect *r)
{
	static const char *const keys[] = {"command", "args"};
	const cJSON *a, *next;
	size_t k;

	for (k = 0; k < 2; k++) {
		for (a = json_get(c, keys[k]) ? json_get(c, keys[k])->child : NULL; a;
		     a = a->next) {
			const char *flag = cJSON_GetStringValue(a), *val;
			next = a->next;
			if (flag == NULL || next == NULL ||
			    (val = cJSON_GetStringValue(next)) == NULL)
				continue;
			if (strcmp(flag, "-m") == 0)
				r->mode = val;
			else if (strcmp(flag, "-b") == 0)
				r->in_include = val;
			else if (strcmp(flag, "-d") == 0)
				r->in_exclude = val;
			else if (strcmp(flag, "-i") == 0)
				r->out_ranges = val;
			else if (strcmp(flag, "-o") == 0)
				r->out_exclude = val;
			else if (strcmp(flag, "-q") == 0)
				r->out_include = val;
			else
				continue;
			a = next;
		}
	}
}

int mesh_redirects(const cJSON *pod, long port, const char **who)
{
	const cJSON *meta = json_get(pod, "metadata"), *spec = json_get(pod, "spec");
	const cJSON *anns = json_get(meta, "annotations");
	const cJSON *inits = json_get(spec, "initContainers");
	const cJSON *init = container_named(inits, "istio-init");
	const cJSON *proxy = container_named(json_get(spec, "containers"), "istio-proxy");
	struct redirect r = {"REDIRECT", "*", "", "*", "", ""};
	const char *v;
	int mask = 0;

	if (proxy == NULL)
		proxy = container_named(inits, "istio-proxy"); /* a native sidecar */
	if (init == NULL)
		init = container_named(inits, "istio-validation");
	if (proxy == NULL && init == NULL && json_map_str(anns, "sidecar.istio.io/status") == NULL)
		return 0;
	if (who != NULL)
		*who = proxy != NULL  ? "istio-proxy"
		       : init != NULL ? json_str(init, "name")
		                      : "sidecar.istio.io/status";
	if ((v = json_map_str(anns, "sidecar.istio.io/interceptionMode")) != NULL)
		r.mode = v;
	if ((v = json_map_str(anns, "traffic.sidecar.istio.io/includeInboundPorts")) != NULL)
		r.in_include = v;
	if ((v = json_map_str(anns, "traffic.sidecar.istio.io/excludeInboundPorts")) != NULL)
		r.in_exclude = v;
	if ((v = json_map_str(anns, "traffic.sidecar.istio.io/includeOutboundIPRanges")) != NULL)
		r.out_ranges = v;
	if ((v = json_map_str(anns, "traffic.sidecar.istio.io/excludeOutboundPorts")) != NULL)
		r.out_exclude = v;
	if ((v = json_map_str(anns, "traffic.sidecar.istio.io/includeOutboundPorts")) != NULL)
		r.out_include = v;
	if (init != NULL)
		from_args(init, &r);
	if (strcmp(r.mode, "NONE") == 0)
		return 0;
	if (mesh_port_listed(r.in_include, port) && !mesh_port_listed(r.in_exclude, port))
		mask |= MESH_IN;
	if ((r.out_ranges[0] != '\0' && !mesh_port_listed(r.out_exclude, port)) ||
	    mesh_port_listed(r.out_include, port))
		mask |= MESH_OUT;
	return mask;
}
