/*
 * NetworkPolicy verdicts, row by row: the Kubernetes docs' own examples
 * (concepts page "Network Policies": test-network-policy, default deny, allow
 * all, the endPort example, namespaceSelector and podSelector in one peer or
 * two), then the edges of the API reference (absent vs empty lists, named
 * ports, protocols, matchExpressions, what cannot be known).
 */
#include <stdlib.h>
#include <string.h>

#include "netpol.h"
#include "testutil.h"

static char *dq(const char *s)
{
	char *p = strdup(s), *q;

	for (q = p; *q; q++)
		if (*q == '\'')
			*q = '"';
	return p;
}

/* A policy named name in namespace ml with spec. */
#define POL(name, spec) "{'metadata':{'name':'" name "','namespace':'ml'},'spec':{" spec "}}"

/* The docs' test-network-policy (namespace ml here). */
#define DOCS_TEST_POLICY                                                                           \
	POL("test-network-policy",                                                                 \
	    "'podSelector':{'matchLabels':{'role':'db'}},'policyTypes':['Ingress','Egress'],"      \
	    "'ingress':[{'from':[{'ipBlock':{'cidr':'172.17.0.0/16','except':['172.17.1.0/24']}}," \
	    "{'namespaceSelector':{'matchLabels':{'project':'myproject'}}},"                       \
	    "{'podSelector':{'matchLabels':{'role':'frontend'}}}],"                                \
	    "'ports':[{'protocol':'TCP','port':6379}]}],"                                          \
	    "'egress':[{'to':[{'ipBlock':{'cidr':'10.0.0.0/24'}}],"                                \
	    "'ports':[{'protocol':'TCP','port':5978}]}]")
#define DENY_INGRESS POL("default-deny-ingress", "'podSelector':{},'policyTypes':['Ingress']")
#define ALLOW_ALL                                                                                  \
	POL("allow-all-ingress", "'podSelector':{},'ingress':[{}],'policyTypes':['Ingress']")
#define DENY_EGRESS POL("default-deny-egress", "'podSelector':{},'policyTypes':['Egress']")
#define DENY_ALL    POL("default-deny-all", "'podSelector':{},'policyTypes':['Ingress','Egress']")
/* The docs' multi-port-egress, and the same ports on an Ingress rule. */
#define DOCS_ENDPORT                                                                               \
	POL("multi-port-egress",                                                                   \
	    "'podSelector':{'matchLabels':{'role':'db'}},'policyTypes':['Egress'],"                \
	    "'egress':[{'to':[{'ipBlock':{'cidr':'10.0.0.0/24'}}],"                                \
	    "'ports':[{'protocol':'TCP','port':32000,'endPort':32768}]}]")
#define ENDPORT_IN                                                                                 \
	POL("multi-port-ingress",                                                                  \
	    "'podSelector':{'matchLabels':{'role':'db'}},'policyTypes':['Ingress'],"               \
	    "'ingress':[{'from':[{'podSelector':{'matchLabels':{'role':'db'}}}],"                  \
	    "'ports':[{'protocol':'TCP','port':32000,'endPort':32768}]}]")
/* The docs' namespaceSelector and podSelector in one peer (user: alice), and in two. */
#define ONE_PEER(role)                                                                             \
	POL("alice-one-peer", "'podSelector':{'matchLabels':{'role':'db'}},'ingress':[{'from':["   \
	                      "{'namespaceSelector':{'matchLabels':{'user':'alice'}},"             \
	                      "'podSelector':{'matchLabels':{'role':'" role "'}}}]}]")
#define TWO_PEERS(role)                                                                            \
	POL("alice-two-peers", "'podSelector':{'matchLabels':{'role':'db'}},'ingress':[{'from':["  \
	                       "{'namespaceSelector':{'matchLabels':{'user':'alice'}}},"           \
	                       "{'podSelector':{'matchLabels':{'role':'" role "'}}}]}]")
/* Admits pods of role db from peers on ports. */
#define ADMIT(name, from, ports)                                                                   \
	POL(name, "'podSelector':{'matchLabels':{'role':'db'}},'ingress':[{" from ports "}]")
#define FROM_DB  "'from':[{'podSelector':{'matchLabels':{'role':'db'}}}]"
#define PORTS(p) ",'ports':[" p "]"

/* Pod templates: labels, and the containers' ports. */
#define TMPL(labels, spec)                                                                         \
	"{'metadata':{'labels':{" labels "}},'spec':{'containers':[{'name':'c','ports':[{'name':"  \
	"'rdzv','containerPort':29500},{'name':'dns','containerPort':29500,'protocol':'UDP'}]}"    \
	"]" spec "}}"
#define DB       TMPL("'role':'db'", "")
#define FRONTEND TMPL("'role':'frontend'", "")
#define NOLABELS TMPL("", "")

static const struct {
	const char *what;
	const char *policies; /* a JSON array, quoted with ' */
	const char *target;   /* rank 0's template */
	const char *other;    /* another template whose pods must reach it; NULL: none */
	const char *ns;
	long port;
	enum netpol_verdict want;
	const char *policy; /* the policy named when dropped */
} cases[] = {
    {"no policies", "[]", DB, NULL, "ml", 29500, NETPOL_ADMITTED, ""},
    {"docs default-deny-ingress", "[" DENY_INGRESS "]", DB, NULL, "ml", 29500, NETPOL_DROPPED,
     "default-deny-ingress"},
    {"docs allow-all-ingress", "[" ALLOW_ALL "]", DB, NULL, "ml", 29500, NETPOL_ADMITTED, ""},
    {"docs deny + allow all: policies are additive", "[" DENY_INGRESS "," ALLOW_ALL "]", DB, NULL,
     "ml", 29500, NETPOL_ADMITTED, ""},
    {"docs default-deny-egress: not Ingress", "[" DENY_EGRESS "]", DB, NULL, "ml", 29500,
     NETPOL_ADMITTED, ""},
    {"docs default-deny-all", "[" DENY_EGRESS "," DENY_ALL "]", DB, NULL, "ml", 29500,
     NETPOL_DROPPED, "default-deny-all"},
    {"docs test-network-policy: frontend to db on 6379", "[" DOCS_TEST_POLICY "]", DB, FRONTEND,
     "ml", 6379, NETPOL_UNKNOWN, ""},
    {"docs test-network-policy: db to db on 6379 (ipBlock, namespace label)",
     "[" DOCS_TEST_POLICY "]", DB, NULL, "ml", 6379, NETPOL_UNKNOWN, ""},
    {"docs test-network-policy: 29500 is no port of it", "[" DOCS_TEST_POLICY "]", DB, FRONTEND,
     "ml", 29500, NETPOL_DROPPED, "test-network-policy"},
    {"docs test-network-policy: selects no frontend pod", "[" DOCS_TEST_POLICY "]", FRONTEND, NULL,
     "ml", 29500, NETPOL_ADMITTED, ""},
    {"docs test-network-policy: the target's label unknown", "[" DOCS_TEST_POLICY "]", NOLABELS,
     NULL, "ml", 29500, NETPOL_UNKNOWN, ""},
    {"docs multi-port-egress: Egress only", "[" DOCS_ENDPORT "]", DB, NULL, "ml", 29500,
     NETPOL_ADMITTED, ""},
    {"endPort: 32500 in 32000-32768", "[" ENDPORT_IN "]", DB, NULL, "ml", 32500, NETPOL_ADMITTED,
     ""},
    {"endPort: 32768 is in", "[" ENDPORT_IN "]", DB, NULL, "ml", 32768, NETPOL_ADMITTED, ""},
    {"endPort: 29500 is not", "[" ENDPORT_IN "]", DB, NULL, "ml", 29500, NETPOL_DROPPED,
     "multi-port-ingress"},
    {"docs one peer: unknown namespace label", "[" ONE_PEER("db") "]", DB, NULL, "ml", 29500,
     NETPOL_UNKNOWN, ""},
    {"docs one peer: the pod label fails, so the peer", "[" ONE_PEER("client") "]", DB, NULL, "ml",
     29500, NETPOL_DROPPED, "alice-one-peer"},
    {"docs two peers: the pod peer admits", "[" TWO_PEERS("db") "]", DB, NULL, "ml", 29500,
     NETPOL_ADMITTED, ""},
    {"docs two peers: the namespace peer is unknown", "[" TWO_PEERS("client") "]", DB, NULL, "ml",
     29500, NETPOL_UNKNOWN, ""},
    /* edges of the API reference */
    {"policyTypes absent: Ingress", "[" POL("p", "'podSelector':{}") "]", DB, NULL, "ml", 29500,
     NETPOL_DROPPED, "p"},
    {"policyTypes empty: Ingress", "[" POL("p", "'podSelector':{},'policyTypes':[]") "]", DB, NULL,
     "ml", 29500, NETPOL_DROPPED, "p"},
    {"policyTypes absent, egress rules: still Ingress",
     "[" POL("p", "'podSelector':{},'egress':[{}]") "]", DB, NULL, "ml", 29500, NETPOL_DROPPED,
     "p"},
    {"podSelector absent: every pod", "[" POL("p", "'policyTypes':['Ingress']") "]", DB, NULL, "ml",
     29500, NETPOL_DROPPED, "p"},
    {"ingress empty: deny", "[" POL("p", "'podSelector':{},'ingress':[]") "]", DB, NULL, "ml",
     29500, NETPOL_DROPPED, "p"},
    {"from absent, ports absent: all", "[" ADMIT("p", "", "") "]", DB, NULL, "ml", 29500,
     NETPOL_ADMITTED, ""},
    {"from empty: all sources", "[" ADMIT("p", "'from':[]", PORTS("{'port':29500}")) "]", DB,
     FRONTEND, "ml", 29500, NETPOL_ADMITTED, ""},
    {"ports empty: all ports", "[" ADMIT("p", FROM_DB, ",'ports':[]") "]", DB, NULL, "ml", 29500,
     NETPOL_ADMITTED, ""},
    {"from db: the frontend source is dropped", "[" ADMIT("p", FROM_DB, "") "]", DB, FRONTEND, "ml",
     29500, NETPOL_DROPPED, "p"},
    {"port without protocol: TCP", "[" ADMIT("p", FROM_DB, PORTS("{'port':29500}")) "]", DB, NULL,
     "ml", 29500, NETPOL_ADMITTED, ""},
    {"protocol UDP: not the rendezvous",
     "[" ADMIT("p", FROM_DB, PORTS("{'protocol':'UDP','port':29500}")) "]", DB, NULL, "ml", 29500,
     NETPOL_DROPPED, "p"},
    {"protocol TCP, no port: every TCP port",
     "[" ADMIT("p", FROM_DB, PORTS("{'protocol':'SCTP'},{'protocol':'TCP'}")) "]", DB, NULL, "ml",
     29500, NETPOL_ADMITTED, ""},
    {"an unknown protocol: unknown",
     "[" ADMIT("p", FROM_DB, PORTS("{'protocol':'QUIC','port':29500}")) "]", DB, NULL, "ml", 29500,
     NETPOL_UNKNOWN, ""},
    {"protocol SCTP: not the rendezvous",
     "[" ADMIT("p", FROM_DB, PORTS("{'protocol':'SCTP','port':29500}")) "]", DB, NULL, "ml", 29500,
     NETPOL_DROPPED, "p"},
    /* names that sort after SCTP and UDP: the API's protocols are spelled in capitals */
    {"protocol tcp in lower case: unknown",
     "[" ADMIT("p", FROM_DB, PORTS("{'protocol':'tcp','port':29500}")) "]", DB, NULL, "ml", 29500,
     NETPOL_UNKNOWN, ""},
    {"protocol UDPLITE: unknown",
     "[" ADMIT("p", FROM_DB, PORTS("{'protocol':'UDPLITE','port':29500}")) "]", DB, NULL, "ml",
     29500, NETPOL_UNKNOWN, ""},
    {"another numeric port", "[" ADMIT("p", FROM_DB, PORTS("{'port':29501}")) "]", DB, NULL, "ml",
     29500, NETPOL_DROPPED, "p"},
    {"named port of the target's container", "[" ADMIT("p", FROM_DB, PORTS("{'port':'rdzv'}")) "]",
     DB, NULL, "ml", 29500, NETPOL_ADMITTED, ""},
    {"named port is another port", "[" ADMIT("p", FROM_DB, PORTS("{'port':'rdzv'}")) "]", DB, NULL,
     "ml", 29501, NETPOL_DROPPED, "p"},
    {"named port is UDP: TCP has no such name",
     "[" ADMIT("p", FROM_DB, PORTS("{'port':'dns'}")) "]", DB, NULL, "ml", 29500, NETPOL_DROPPED,
     "p"},
    {"named port no container has", "[" ADMIT("p", FROM_DB, PORTS("{'port':'metrics'}")) "]", DB,
     NULL, "ml", 29500, NETPOL_DROPPED, "p"},
    {"named port of a sidecar (initContainers)",
     "[" ADMIT("p", FROM_DB, PORTS("{'port':'side'}")) "]",
     TMPL("'role':'db'", ",'initContainers':[{'name':'s','restartPolicy':'Always','ports':[{"
                         "'name':'side','containerPort':29500}]}]"),
     NULL, "ml", 29500, NETPOL_ADMITTED, ""},
    {"named port with endPort: the API rejects it",
     "[" ADMIT("p", FROM_DB, PORTS("{'port':'rdzv','endPort':30000}")) "]", DB, NULL, "ml", 29500,
     NETPOL_UNKNOWN, ""},
    {"endPort below port: the API rejects it",
     "[" ADMIT("p", FROM_DB, PORTS("{'port':29500,'endPort':29000}")) "]", DB, NULL, "ml", 29500,
     NETPOL_UNKNOWN, ""},
    {"ipBlock only: pod IPs unknown",
     "[" ADMIT("p", "'from':[{'ipBlock':{'cidr':'10.0.0.0/8'}}]", "") "]", DB, NULL, "ml", 29500,
     NETPOL_UNKNOWN, ""},
    {"ipBlock on another port: still dropped",
     "[" ADMIT("p", "'from':[{'ipBlock':{'cidr':'10.0.0.0/8'}}]", PORTS("{'port':80}")) "]", DB,
     NULL, "ml", 29500, NETPOL_DROPPED, "p"},
    {"namespaceSelector empty: every namespace",
     "[" ADMIT("p", "'from':[{'namespaceSelector':{}}]", "") "]", DB, FRONTEND, "ml", 29500,
     NETPOL_ADMITTED, ""},
    {"namespaceSelector by metadata.name: this one",
     "[" ADMIT(
         "p", "'from':[{'namespaceSelector':{'matchLabels':{'kubernetes.io/metadata.name':'ml'}}}]",
         "") "]",
     DB, NULL, "ml", 29500, NETPOL_ADMITTED, ""},
    {"namespaceSelector by metadata.name: another",
     "[" ADMIT(
         "p",
         "'from':[{'namespaceSelector':{'matchLabels':{'kubernetes.io/metadata.name':'web'}}}]",
         "") "]",
     DB, NULL, "ml", 29500, NETPOL_DROPPED, "p"},
    {"namespaceSelector NotIn metadata.name, podSelector: both known",
     "[" ADMIT("p",
               "'from':[{'namespaceSelector':{'matchExpressions':[{'key':'kubernetes.io/"
               "metadata.name','operator':'NotIn','values':['web']}]},'podSelector':{}}]",
               "") "]",
     DB, FRONTEND, "ml", 29500, NETPOL_ADMITTED, ""},
    {"policy podSelector In",
     "[" POL("p", "'podSelector':{'matchExpressions':[{'key':'role',"
                  "'operator':'In','values':['web','db']}]}") "]",
     DB, NULL, "ml", 29500, NETPOL_DROPPED, "p"},
    {"policy podSelector NotIn",
     "[" POL("p", "'podSelector':{'matchExpressions':[{'key':'role','operator':'NotIn','values':['"
                  "db']}]}") "]",
     DB, NULL, "ml", 29500, NETPOL_ADMITTED, ""},
    {"policy podSelector Exists",
     "[" POL("p", "'podSelector':{'matchExpressions':[{'key':'role','operator':'Exists'}]}") "]",
     DB, NULL, "ml", 29500, NETPOL_DROPPED, "p"},
    {"policy podSelector DoesNotExist on a template label",
     "[" POL("p",
             "'podSelector':{'matchExpressions':[{'key':'role','operator':'DoesNotExist'}]}") "]",
     DB, NULL, "ml", 29500, NETPOL_ADMITTED, ""},
    {"policy podSelector on a label the controller may add",
     "[" POL("p", "'podSelector':{'matchLabels':{'job-name':'train'}}") "]", DB, NULL, "ml", 29500,
     NETPOL_UNKNOWN, ""},
    {"policy podSelector: matchLabels and matchExpressions, one fails",
     "[" POL("p", "'podSelector':{'matchLabels':{'role':'db'},'matchExpressions':[{'key':'role',"
                  "'operator':'In','values':['web']}]}") "]",
     DB, NULL, "ml", 29500, NETPOL_ADMITTED, ""},
    {"a controller's label in the template: the controller's value wins",
     "[" POL("p", "'podSelector':{'matchLabels':{'job-name':'other'}}") "]",
     TMPL("'role':'db','job-name':'train'", ""), NULL, "ml", 29500, NETPOL_UNKNOWN, ""},
    {"a controller's label prefix in the template",
     "[" POL("p", "'podSelector':{'matchExpressions':[{'key':'apps.kubernetes.io/pod-index',"
                  "'operator':'DoesNotExist'}]}") "]",
     TMPL("'role':'db','apps.kubernetes.io/pod-index':'0'", ""), NULL, "ml", 29500, NETPOL_UNKNOWN,
     ""},
    {"an unknown operator",
     "[" POL("p", "'podSelector':{'matchExpressions':[{'key':'role',"
                  "'operator':'Gt','values':['1']}]}") "]",
     DB, NULL, "ml", 29500, NETPOL_UNKNOWN, ""},
    {"In without values: the API rejects it",
     "[" POL("p", "'podSelector':{'matchExpressions':[{'key':'role','operator':'In'}]}") "]", DB,
     NULL, "ml", 29500, NETPOL_UNKNOWN, ""},
    {"from podSelector on a label the controller may add",
     "[" ADMIT("p", "'from':[{'podSelector':{'matchLabels':{'job-name':'train'}}}]", "") "]", DB,
     NULL, "ml", 29500, NETPOL_UNKNOWN, ""},
    {"another namespace's policy",
     "[{'metadata':{'name':'x','namespace':'web'},'spec':{"
     "'podSelector':{}}}]",
     DB, NULL, "ml", 29500, NETPOL_ADMITTED, ""},
    {"hostNetwork pods: left to the implementation", "[" DENY_INGRESS "]",
     TMPL("'role':'db'", ",'hostNetwork':true"), NULL, "ml", 29500, NETPOL_UNKNOWN, ""},
    {"a source without the label: unknown", "[" ADMIT("p", FROM_DB, "") "]", DB,
     TMPL("'app':'x'", ""), "ml", 29500, NETPOL_UNKNOWN, ""},
    {"one source unknown, the other dropped: dropped",
     "[" ADMIT("p",
               "'from':[{'podSelector':{'matchExpressions':[{'key':'role','operator':'NotIn',"
               "'values':['frontend']},{'key':'job-name','operator':'Exists'}]}}]",
               "") "]",
     DB, FRONTEND, "ml", 29500, NETPOL_DROPPED, "p"},
    {"a leader template admits its workers' pods, not others",
     "[" ADMIT("p", "'from':[{'podSelector':{'matchLabels':{'role':'worker'}}}]", "") "]", DB,
     TMPL("'role':'worker'", ""), "ml", 29500, NETPOL_DROPPED, "p"},
    /* every number at its edge: the first and last port of a range, 1 and 65535 */
    {"endPort: 32000, its first port, is in", "[" ENDPORT_IN "]", DB, NULL, "ml", 32000,
     NETPOL_ADMITTED, ""},
    {"endPort: 31999, below its first port, is not", "[" ENDPORT_IN "]", DB, NULL, "ml", 31999,
     NETPOL_DROPPED, "multi-port-ingress"},
    {"endPort: 32769, above its last port, is not", "[" ENDPORT_IN "]", DB, NULL, "ml", 32769,
     NETPOL_DROPPED, "multi-port-ingress"},
    {"endPort equal to port: that one port",
     "[" ADMIT("p", FROM_DB, PORTS("{'port':29500,'endPort':29500}")) "]", DB, NULL, "ml", 29500,
     NETPOL_ADMITTED, ""},
    {"endPort one below port: the API rejects it",
     "[" ADMIT("p", FROM_DB, PORTS("{'port':29500,'endPort':29499}")) "]", DB, NULL, "ml", 29500,
     NETPOL_UNKNOWN, ""},
    {"endPort 65535", "[" ADMIT("p", FROM_DB, PORTS("{'port':29500,'endPort':65535}")) "]", DB,
     NULL, "ml", 65535, NETPOL_ADMITTED, ""},
    {"endPort 65536: the API rejects it",
     "[" ADMIT("p", FROM_DB, PORTS("{'port':29500,'endPort':65536}")) "]", DB, NULL, "ml", 29500,
     NETPOL_UNKNOWN, ""},
    {"port 65535", "[" ADMIT("p", FROM_DB, PORTS("{'port':65535}")) "]", DB, NULL, "ml", 65535,
     NETPOL_ADMITTED, ""},
    {"port 65536: the API rejects it", "[" ADMIT("p", FROM_DB, PORTS("{'port':65536}")) "]", DB,
     NULL, "ml", 29500, NETPOL_UNKNOWN, ""},
    {"port 1", "[" ADMIT("p", FROM_DB, PORTS("{'port':1}")) "]", DB, NULL, "ml", 1, NETPOL_ADMITTED,
     ""},
    {"port 0: the API rejects it", "[" ADMIT("p", FROM_DB, PORTS("{'port':0}")) "]", DB, NULL, "ml",
     29500, NETPOL_UNKNOWN, ""},
    {"a rendezvous on port 0: not known", "[" ALLOW_ALL "]", DB, NULL, "ml", 0, NETPOL_UNKNOWN, ""},
    {"a rendezvous on port 65536: not known", "[" ALLOW_ALL "]", DB, NULL, "ml", 65536,
     NETPOL_UNKNOWN, ""},
    {"a named port on the second container, the first without ports",
     "[" ADMIT("p", FROM_DB, PORTS("{'port':'rdzv'}")) "]",
     "{'metadata':{'labels':{'role':'db'}},'spec':{'containers':[{'name':'side'},{'name':'c',"
     "'ports':[{'name':'rdzv','containerPort':29500}]}]}}",
     NULL, "ml", 29500, NETPOL_ADMITTED, ""},
    {"a named port of 65535", "[" ADMIT("p", FROM_DB, PORTS("{'port':'big'}")) "]",
     TMPL("'role':'db'", ",'initContainers':[{'name':'i','ports':[{'name':'big','containerPort':"
                         "65535}]}]"),
     NULL, "ml", 65535, NETPOL_ADMITTED, ""},
    {"policies not a list", "{}", DB, NULL, "ml", 29500, NETPOL_UNKNOWN, ""},
};

/* More policies than NETPOL_MAX_POLICIES, each allowing everything: unknown, not admitted. */
static void test_too_many(void)
{
	char *t = dq(DB);
	cJSON *list = cJSON_CreateArray(), *target = cJSON_Parse(t);
	const cJSON *src[1];
	struct netpol_result r;
	int i;

	for (i = 0; i <= NETPOL_MAX_POLICIES; i++) {
		char *p = dq(DENY_INGRESS);
		cJSON_AddItemToArray(list, cJSON_Parse(p)); /* list owns it */
		free(p);
	}
	src[0] = target;
	CHECK(netpol_check(list, "ml", target, src, 1, 29500, &r) == NETPOL_UNKNOWN,
	      "more than %d policies: got %d", NETPOL_MAX_POLICIES, r.verdict);
	cJSON_DeleteItemFromArray(list, 0);
	CHECK(netpol_check(list, "ml", target, src, 1, 29500, &r) == NETPOL_DROPPED,
	      "%d policies: got %d", NETPOL_MAX_POLICIES, r.verdict);
	cJSON_Delete(list);
	cJSON_Delete(target);
	free(t);
}

/*
 * A list of NETPOL_MAX_ITEMS (64) entries is read, one of 65 is not (unknown):
 * the ports of a rule (the matching one last), the policyTypes, the values of a
 * matchExpressions term and the entries of a matchLabels.
 */
static cJSON *policy_of(const char *spec)
{
	char buf[256], *t;
	cJSON *list;

	snprintf(buf, sizeof(buf), "[{'metadata':{'name':'p','namespace':'ml'},'spec':{%s}}]",
	         spec);
	t = dq(buf);
	list = cJSON_Parse(t);
	free(t);
	return list;
}

static enum netpol_verdict verdict_of(const cJSON *list, long port)
{
	char *t = dq(DB);
	cJSON *target = cJSON_Parse(t);
	const cJSON *src[1] = {target};
	struct netpol_result r;
	enum netpol_verdict v = netpol_check(list, "ml", target, src, 1, port, &r);

	cJSON_Delete(target);
	free(t);
	return v;
}

static void test_item_limit(void)
{
	char *db = dq(DB);
	int n;

	for (n = NETPOL_MAX_ITEMS; n <= NETPOL_MAX_ITEMS + 1; n++) {
		enum netpol_verdict want = n <= NETPOL_MAX_ITEMS ? NETPOL_ADMITTED : NETPOL_UNKNOWN;
		enum netpol_verdict want_dropped =
		    n <= NETPOL_MAX_ITEMS ? NETPOL_DROPPED : NETPOL_UNKNOWN;
		cJSON *list, *spec, *arr, *me, *ml, *target, *labels;
		const cJSON *src[1];
		struct netpol_result r;
		int i;

		/* ports: n - 1 that do not match, then 29500 */
		list = policy_of("'podSelector':{},'ingress':[{'ports':[]}]");
		arr = cJSON_GetObjectItem(
		    cJSON_GetArrayItem(
		        cJSON_GetObjectItem(
		            cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "spec"), "ingress"),
		        0),
		    "ports");
		for (i = 0; i < n; i++) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddNumberToObject(e, "port", i == n - 1 ? 29500 : 1000 + i);
			cJSON_AddItemToArray(arr, e);
		}
		CHECK(verdict_of(list, 29500) == want, "%d ports: got %d", n,
		      verdict_of(list, 29500));
		cJSON_Delete(list);

		/* policyTypes: n - 1 Egress, then Ingress; no ingress rule: dropped */
		list = policy_of("'podSelector':{},'policyTypes':[]");
		spec = cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "spec");
		arr = cJSON_GetObjectItem(spec, "policyTypes");
		for (i = 0; i < n; i++)
			cJSON_AddItemToArray(arr,
			                     cJSON_CreateString(i == n - 1 ? "Ingress" : "Egress"));
		CHECK(verdict_of(list, 29500) == want_dropped, "%d policyTypes: got %d", n,
		      verdict_of(list, 29500));
		cJSON_Delete(list);

		/* matchExpressions values: n - 1 others, then db; the policy selects: dropped */
		list = policy_of("'podSelector':{'matchExpressions':[{'key':'role','operator':'In',"
		                 "'values':[]}]}");
		spec = cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "spec");
		me =
		    cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(spec, "podSelector"),
		                                           "matchExpressions"),
		                       0);
		arr = cJSON_GetObjectItem(me, "values");
		for (i = 0; i < n; i++) {
			char v[16];
			snprintf(v, sizeof(v), "r%d", i);
			cJSON_AddItemToArray(arr, cJSON_CreateString(i == n - 1 ? "db" : v));
		}
		CHECK(verdict_of(list, 29500) == want_dropped, "%d values: got %d", n,
		      verdict_of(list, 29500));
		cJSON_Delete(list);

		/* matchLabels: n keys, each on the target's labels too: it selects, dropped */
		list = policy_of("'podSelector':{'matchLabels':{}}");
		spec = cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "spec");
		ml = cJSON_GetObjectItem(cJSON_GetObjectItem(spec, "podSelector"), "matchLabels");
		target = cJSON_Parse(db);
		labels = cJSON_GetObjectItem(cJSON_GetObjectItem(target, "metadata"), "labels");
		for (i = 0; i < n; i++) {
			char k[16];
			snprintf(k, sizeof(k), "k%d", i);
			cJSON_AddStringToObject(ml, k, "v");
			cJSON_AddStringToObject(labels, k, "v");
		}
		src[0] = target;
		CHECK(netpol_check(list, "ml", target, src, 1, 29500, &r) == want_dropped,
		      "%d matchLabels: got %d", n, r.verdict);
		cJSON_Delete(target);
		cJSON_Delete(list);
	}
	free(db);
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *p = dq(cases[i].policies), *t = dq(cases[i].target),
		     *o = cases[i].other ? dq(cases[i].other) : NULL;
		cJSON *pj = cJSON_Parse(p), *tj = cJSON_Parse(t), *oj = o ? cJSON_Parse(o) : NULL;
		const cJSON *src[2] = {tj, oj};
		struct netpol_result r;
		enum netpol_verdict got;

		CHECK(pj != NULL && tj != NULL && (o == NULL || oj != NULL), "%s: bad row JSON",
		      cases[i].what);
		got = netpol_check(pj, cases[i].ns, tj, src, o ? 2 : 1, cases[i].port, &r);
		CHECK(got == cases[i].want && r.verdict == got, "%s: got %d, want %d",
		      cases[i].what, got, cases[i].want);
		CHECK_STR(r.policy, cases[i].policy, cases[i].what);
		if (got == NETPOL_DROPPED)
			CHECK(r.source >= 0 && r.source < (o ? 2 : 1), "%s: source %d",
			      cases[i].what, r.source);
		cJSON_Delete(pj);
		cJSON_Delete(tj);
		cJSON_Delete(oj);
		free(p);
		free(t);
		free(o);
	}
	test_too_many();
	test_item_limit();
	TEST_MAIN_END("netpol");
}
