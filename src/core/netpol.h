/*
 * Whether a namespace's NetworkPolicies (networking.k8s.io/v1) let a workload's
 * pods reach rank 0 on the rendezvous port, judged from the pod templates
 * alone, as the API reference defines the policies. Pure: values in, a
 * verdict out; nothing is kept and nothing of the caller's is freed.
 */
#ifndef DISTENV_NETPOL_H
#define DISTENV_NETPOL_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* At most this many policies are judged; a longer list is NETPOL_UNKNOWN. */
#define NETPOL_MAX_POLICIES 256
/* At most this many rules, peers, ports, selector terms or values in one list. */
#define NETPOL_MAX_ITEMS 64

enum netpol_verdict {
	NETPOL_ADMITTED, /* no policy isolates rank 0, or one that selects it admits every source */
	NETPOL_UNKNOWN,  /* something decisive cannot be known from the templates: no warning */
	NETPOL_DROPPED,  /* a policy isolates rank 0 for Ingress and none that selects it admits */
};

struct netpol_result {
	enum netpol_verdict verdict;
	char policy[254]; /* NETPOL_DROPPED: a policy that selects rank 0 for Ingress */
	int source;       /* NETPOL_DROPPED: the index in sources of a template it drops */
};

/*
 * Judges policies (an array of NetworkPolicy objects, those of namespace ns;
 * NULL or empty: none) for TCP port on rank 0's pod template target, from the
 * pods of every template in sources (n_sources of them, the target among
 * them). A pod's labels are its template's plus ones distenv cannot know (its
 * controllers set some: each kind's pod_labels and label_prefixes), so a
 * selector term about a label the template lacks, or about one of those, is
 * unknown; of the namespace's labels only kubernetes.io/metadata.name is
 * known. ipBlock peers, hostNetwork pods, values the API would reject and
 * lists over the limits are unknown. Fills out and returns out->verdict.
 */
enum netpol_verdict netpol_check(const cJSON *policies, const char *ns, const cJSON *target,
                                 const cJSON *const *sources, int n_sources, long port,
                                 struct netpol_result *out);

#endif
