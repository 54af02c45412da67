/*
 * NetworkPolicy Ingress semantics (networking.k8s.io/v1 API reference) over
 * three values: true, false and unknown. Unknown is what the pod templates
 * cannot tell (a label the pod may get later, a namespace label, an ipBlock,
 * a value the API would reject); it never becomes a warning. Pure.
 */
#include "netpol.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "kind.h"

/* Kleene's three values: AND is the smallest, OR the largest (F < U < T). */
enum tri { F = 0, U = 1, T = 2 };

static enum tri tri_and(enum tri a, enum tri b)
{
	return a < b ? a : b;
}

static enum tri tri_or(enum tri a, enum tri b)
{
	return a > b ? a : b;
}

/* The labels distenv knows a pod (or the namespace) has; every other key is unknown. */
struct labels {
	const cJSON *map;        /* a template's metadata.labels, or NULL */
	const char *key, *value; /* one more known label, or NULL */
};

static const char *label_value(const struct labels *l, const char *key)
{
	if (l->key != NULL && strcmp(l->key, key) == 0)
		return l->value;
	/* a label the pod's controllers set themselves: its value on the pod is not the template's
	 */
	if (l->map != NULL && kind_controller_label(key))
		return NULL;
	return json_map_str(l->map, key);
}

/* An array of at most NETPOL_MAX_ITEMS entries (absent or null: empty); -1 otherwise. */
static int list_len(const cJSON *a)
{
	int n;

	if (a == NULL || cJSON_IsNull(a))
		return 0;
	if (!cJSON_IsArray(a))
		return -1;
	n = cJSON_GetArraySize(a);
	return n <= NETPOL_MAX_ITEMS ? n : -1;
}

/* One matchExpressions term. */
static enum tri expression(const cJSON *e, const struct labels *l)
{
	const char *key = json_str(e, "key"), *op = json_str(e, "operator"), *have;
	const cJSON *values = json_get(e, "values"), *it;
	int n = list_len(values), in = 0,
	    vals = strcmp(op ? op : "", "In") == 0 || strcmp(op ? op : "", "NotIn") == 0;

	if (key == NULL || op == NULL || n < 0 || (vals ? n == 0 : n != 0))
		return U; /* the API rejects it: In/NotIn need values, Exists/DoesNotExist none */
	cJSON_ArrayForEach(it, values)
	{
		if (!cJSON_IsString(it))
			return U;
	}
	have = label_value(l, key);
	if (have == NULL)
		return U; /* the pod may carry the key or not */
	cJSON_ArrayForEach(it, values)
	{
		if (strcmp(it->valuestring, have) == 0)
			in = 1;
	}
	if (strcmp(op, "In") == 0)
		return in ? T : F;
	if (strcmp(op, "NotIn") == 0)
		return in ? F : T;
	if (strcmp(op, "Exists") == 0)
		return T;
	if (strcmp(op, "DoesNotExist") == 0)
		return F;
	return U;
}

/* A LabelSelector: every matchLabels entry and matchExpressions term; empty selects all. */
static enum tri selector(const cJSON *sel, const struct labels *l)
{
	const cJSON *ml = json_get(sel, "matchLabels"), *me = json_get(sel, "matchExpressions"),
	            *it;
	enum tri r = T;

	if (!cJSON_IsObject(sel) || (ml != NULL && !cJSON_IsNull(ml) && !cJSON_IsObject(ml)) ||
	    cJSON_GetArraySize(ml) > NETPOL_MAX_ITEMS || list_len(me) < 0)
		return U;
	cJSON_ArrayForEach(it, ml)
	{
		const char *have = label_value(l, it->string);
		if (!cJSON_IsString(it))
			return U;
		r = tri_and(r, have == NULL ? U : strcmp(have, it->valuestring) == 0 ? T : F);
	}
	cJSON_ArrayForEach(it, me)
	{
		r = tri_and(r, expression(it, l));
	}
	return r;
}

/* Present and not null. */
static int has(const cJSON *obj, const char *key)
{
	const cJSON *it = json_get(obj, key);
	return it != NULL && !cJSON_IsNull(it);
}

/* One `from` peer admits the pods of template src (namespace ns). */
static enum tri peer(const cJSON *p, const cJSON *src, const char *ns)
{
	struct labels pod = {json_get(json_get(src, "metadata"), "labels"), NULL, NULL};
	/* every namespace carries kubernetes.io/metadata.name; its other labels are unknown */
	struct labels nsl = {NULL, "kubernetes.io/metadata.name", ns};
	int ps = has(p, "podSelector"), nss = has(p, "namespaceSelector");

	if (!cJSON_IsObject(p) || has(p, "ipBlock") || (!ps && !nss))
		return U; /* pod IPs are not known at apply time */
	/* podSelector alone: the policy's namespace, which is the pods' own */
	return tri_and(ps ? selector(json_get(p, "podSelector"), &pod) : T,
	               nss ? selector(json_get(p, "namespaceSelector"), &nsl) : T);
}

/* A whole number in [lo, hi], or -1. */
static long whole(const cJSON *n, long lo, long hi)
{
	if (!cJSON_IsNumber(n) || n->valuedouble != floor(n->valuedouble) ||
	    n->valuedouble < (double)lo || n->valuedouble > (double)hi)
		return -1;
	return (long)n->valuedouble;
}

/* A named port of the target's containers (init containers too: sidecars) is port. */
static enum tri named_port(const cJSON *target, const char *name, long port)
{
	static const char *const lists[] = {"containers", "initContainers"};
	const cJSON *spec = json_get(target, "spec"), *c, *cp;
	size_t i;

	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		if (list_len(json_get(spec, lists[i])) < 0)
			return U;
		cJSON_ArrayForEach(c, json_get(spec, lists[i]))
		{
			if (list_len(json_get(c, "ports")) < 0)
				return U;
			cJSON_ArrayForEach(cp, json_get(c, "ports"))
			{
				const char *n = json_str(cp, "name"),
				           *proto = json_str(cp, "protocol");
				if (n == NULL || strcmp(n, name) != 0 ||
				    (proto != NULL && strcmp(proto, "TCP") != 0))
					continue;
				return whole(json_get(cp, "containerPort"), 1, 65535) == port ? T
				                                                              : F;
			}
		}
	}
	return F; /* no container port of that name: the entry matches nothing on this pod */
}

/* One NetworkPolicyPort admits TCP port of the target. */
static enum tri port_entry(const cJSON *e, const cJSON *target, long port)
{
	const char *proto = json_str(e, "protocol");
	const cJSON *p = json_get(e, "port"), *end = json_get(e, "endPort");
	long lo, hi;

	if (!cJSON_IsObject(e))
		return U;
	if (proto != NULL && strcmp(proto, "TCP") != 0)
		return strcmp(proto, "UDP") == 0 || strcmp(proto, "SCTP") == 0 ? F : U;
	if (p == NULL || cJSON_IsNull(p))
		return end == NULL || cJSON_IsNull(end) ? T : U; /* every port of the protocol */
	if (cJSON_IsString(p)) /* a named port; with endPort the API rejects it */
		return end == NULL || cJSON_IsNull(end) ? named_port(target, p->valuestring, port)
		                                        : U;
	if ((lo = whole(p, 1, 65535)) < 0)
		return U;
	if (end == NULL || cJSON_IsNull(end))
		return lo == port ? T : F;
	if ((hi = whole(end, lo, 65535)) < 0)
		return U;
	return port >= lo && port <= hi ? T : F;
}

/* One NetworkPolicyIngressRule admits the pods of src on port of target. */
static enum tri ingress_rule(const cJSON *rule, const cJSON *target, const cJSON *src,
                             const char *ns, long port)
{
	const cJSON *ports = json_get(rule, "ports"), *from = json_get(rule, "from"), *it;
	enum tri ok_port = F, ok_from = F;

	if (!cJSON_IsObject(rule) || list_len(ports) < 0 || list_len(from) < 0)
		return U;
	/* absent or empty ports: every port; absent or empty from: every source */
	if (list_len(ports) == 0)
		ok_port = T;
	cJSON_ArrayForEach(it, ports)
	{
		ok_port = tri_or(ok_port, port_entry(it, target, port));
	}
	if (list_len(from) == 0)
		ok_from = T;
	cJSON_ArrayForEach(it, from)
	{
		ok_from = tri_or(ok_from, peer(it, src, ns));
	}
	return tri_and(ok_port, ok_from);
}

/* The policy applies to Ingress: policyTypes says so, or is absent (then always). */
static enum tri for_ingress(const cJSON *spec)
{
	const cJSON *types = json_get(spec, "policyTypes"), *it;
	int n = list_len(types);

	if (n < 0)
		return U;
	if (n == 0)
		return T;
	cJSON_ArrayForEach(it, types)
	{
		if (cJSON_IsString(it) && strcmp(it->valuestring, "Ingress") == 0)
			return T;
	}
	return F;
}

static int host_network(const cJSON *tmpl)
{
	return cJSON_IsTrue(json_get(json_get(tmpl, "spec"), "hostNetwork"));
}

enum netpol_verdict netpol_check(const cJSON *policies, const char *ns, const cJSON *target,
                                 const cJSON *const *sources, int n_sources, long port,
                                 struct netpol_result *out)
{
	struct labels tl = {json_get(json_get(target, "metadata"), "labels"), NULL, NULL};
	const cJSON *pol;
	int s, n = policies == NULL || cJSON_IsNull(policies) ? 0 : cJSON_GetArraySize(policies);
	enum netpol_verdict worst = NETPOL_ADMITTED;

	memset(out, 0, sizeof(*out));
	out->verdict = NETPOL_UNKNOWN;
	if ((policies != NULL && !cJSON_IsNull(policies) && !cJSON_IsArray(policies)) ||
	    n > NETPOL_MAX_POLICIES || !cJSON_IsObject(target) || ns == NULL || port < 1 ||
	    port > 65535)
		return out->verdict;
	/* NetworkPolicy does not apply to host-network pods (left to the implementation) */
	for (s = 0; s < n_sources; s++)
		if (host_network(sources[s]))
			return out->verdict;
	if (host_network(target))
		return out->verdict;
	for (s = 0; s < n_sources; s++) {
		enum tri admitted = F, isolated = F;
		const char *first = NULL;

		cJSON_ArrayForEach(pol, policies)
		{
			const cJSON *meta = json_get(pol, "metadata"),
			            *spec = json_get(pol, "spec"),
			            *rules = json_get(spec, "ingress"),
			            *sel = json_get(spec, "podSelector"), *r;
			const char *pns = json_str(meta, "namespace");
			enum tri selects, admits = F;

			if (!cJSON_IsObject(pol) || list_len(rules) < 0)
				return out->verdict;
			if (pns != NULL && strcmp(pns, ns) != 0)
				continue; /* another namespace's policy selects no pod of this one
				           */
			/* an absent podSelector reads as the empty one: every pod of the namespace
			 */
			selects =
			    tri_and(for_ingress(spec),
			            sel == NULL || cJSON_IsNull(sel) ? T : selector(sel, &tl));
			if (selects == F)
				continue;
			/* absent or empty ingress: the policy admits nothing */
			cJSON_ArrayForEach(r, rules)
			{
				admits =
				    tri_or(admits, ingress_rule(r, target, sources[s], ns, port));
			}
			admitted = tri_or(admitted, tri_and(selects, admits));
			isolated = tri_or(isolated, selects);
			if (selects == T && first == NULL)
				first = json_str(meta, "name");
		}
		if (admitted == T || isolated == F)
			continue;
		if (admitted == U || isolated == U) {
			worst = NETPOL_UNKNOWN;
			continue;
		}
		out->verdict = NETPOL_DROPPED;
		out->source = s;
		snprintf(out->policy, sizeof(out->policy), "%s", first ? first : "");
		return out->verdict;
	}
	out->verdict = worst;
	return out->verdict;
}
