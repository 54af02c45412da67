/* DNS names (lib/dns.c): RFC 1123 labels and subdomains, the domain from resolv.conf. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "dns.h"

static void test_dns(void)
{
	static const struct {
		const char *s;
		int label, subdomain;
	} cases[] = {
	    {"a", 1, 1},
	    {"ddp-0", 1, 1},
	    {"-a", 0, 0},
	    {"a-", 0, 0},
	    {"A", 0, 0},
	    {"a.b", 0, 1},
	    {"a..b", 0, 0},
	    {"", 0, 0},
	    {"a_b", 0, 0},
	    {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 1, 1},
	    {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0, 0},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK(dns_label_valid(cases[i].s) == cases[i].label, "label '%s'", cases[i].s);
		CHECK(dns_subdomain_valid(cases[i].s) == cases[i].subdomain, "subdomain '%s'",
		      cases[i].s);
	}
}

/* resolv.conf as kubelet, nodes and people write it: the cluster domain serve reads. */
static void test_dns_resolv(void)
{
	static const struct {
		const char *name, *text, *want; /* want NULL: none found */
	} cases[] = {
	    {"kubelet ClusterFirst",
	     "search distenv.svc.cluster.local svc.cluster.local cluster.local\n"
	     "nameserver 10.96.0.10\noptions ndots:5\n",
	     "cluster.local"},
	    {"kubelet, another domain",
	     "search distenv-system.svc.ml.example svc.ml.example ml.example\n"
	     "nameserver 198.19.128.10\noptions ndots:5\n",
	     "ml.example"},
	    {"kubelet with the node's searches after its own",
	     "nameserver 10.96.0.10\nsearch team-a.svc.k8s.corp svc.k8s.corp k8s.corp "
	     "us-east-1.compute.internal corp.example\noptions ndots:5 timeout:2 attempts:3\n",
	     "k8s.corp"},
	    {"namespace named svc",
	     "search svc.svc.cluster.local svc.cluster.local cluster.local\n", "cluster.local"},
	    {"namespace named svc, another domain", "search svc.svc.a.b svc.a.b a.b\n", "a.b"},
	    {"hostNetwork, dnsPolicy Default: the node's own",
	     "nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch ec2.internal\n", NULL},
	    {"a host without a search line", "nameserver 10.255.255.53\n", NULL},
	    {"empty", "", NULL},
	    {"several search lines: the last wins",
	     "search a.svc.old.example svc.old.example old.example\n"
	     "search b.svc.new.example svc.new.example new.example\n",
	     "new.example"},
	    {"the last search line has none",
	     "search a.svc.old.example svc.old.example old.example\nsearch corp.example\n", NULL},
	    {"a domain line after search replaces it",
	     "search a.svc.cluster.local svc.cluster.local cluster.local\ndomain corp.example\n",
	     NULL},
	    {"a search line after domain replaces it",
	     "domain corp.example\nsearch x.svc.c.l svc.c.l c.l\n", "c.l"},
	    {"tabs, absolute names, CRLF",
	     "search\tns.svc.cluster.local.\tsvc.cluster.local.  cluster.local.\r\n",
	     "cluster.local"},
	    {"uppercase is lowercased", "search ns.svc.ML.Example svc.ML.Example ML.Example\n",
	     "ml.example"},
	    {"hand-written list, no triple", "search svc.hand.example\n", "hand.example"},
	    {"comment lines are not read",
	     "# search ns.svc.wrong.example svc.wrong.example wrong.example\n"
	     "search ns.svc.right.example svc.right.example right.example\n"
	     "; search svc.wrong.example\n",
	     "right.example"},
	    {"indented keyword is not a keyword (glibc)", "  search ns.svc.a.b svc.a.b a.b\n",
	     NULL},
	    {"keyword without a blank", "searchns.svc.a.b svc.a.b a.b\n", NULL},
	    {"svc. alone", "search svc. svc\n", NULL},
	    {"not a DNS name after svc.", "search ns.svc.a_b svc.a_b a_b svc.ok.example\n",
	     "ok.example"},
	    {"no final newline", "search ns.svc.cluster.local svc.cluster.local cluster.local",
	     "cluster.local"},
	    {"search with nothing after it", "search \n", NULL},
	};
	char out[254];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = dns_cluster_domain_from_resolv(cases[i].text, strlen(cases[i].text), out,
		                                         sizeof(out));
		if (cases[i].want == NULL)
			CHECK(got == 0 && out[0] == '\0', "%s: got %d '%s', want none",
			      cases[i].name, got, out);
		else
			CHECK(got == 1 && strcmp(out, cases[i].want) == 0,
			      "%s: got %d '%s', want '%s'", cases[i].name, got, out, cases[i].want);
	}
	/* the length given is the text's: a search line past it is not read */
	{
		const char t[] = "nameserver 1.1.1.1\nsearch ns.svc.a.b svc.a.b a.b\n";
		CHECK(dns_cluster_domain_from_resolv(t, 19, out, sizeof(out)) == 0,
		      "bounded by len: '%s'", out);
	}
	/* a domain that does not fit out is none, never a cut one */
	CHECK(dns_cluster_domain_from_resolv("search svc.cluster.local\n", 25, out, 8) == 0 &&
	          out[0] == '\0',
	      "too long for out: '%s'", out);
}

int main(void)
{
	test_dns();
	test_dns_resolv();
	TEST_MAIN_END("dns");
}
