/* Unit tests for the listen-address grammar the config file and the server share. */
#include <string.h>

#include "listenaddr.h"
#include "testutil.h"

static void test_listen(void)
{
	static const struct {
		const char *spec;
		long min_port;
		int ok;
		const char *host; /* or the start of the error */
		int ipv6;
		long port;
	} cases[] = {
	    {":8443", 1, 1, "", 0, 8443},                   /* every address */
	    {"127.0.0.1:9443", 1, 1, "127.0.0.1", 0, 9443}, /* IPv4 */
	    {"localhost:80", 1, 1, "localhost", 0, 80},     /* DNS name */
	    {"[::1]:8443", 1, 1, "::1", 1, 8443},           /* IPv6 literal */
	    {"[::]:443", 1, 1, "::", 1, 443},               /* IPv6 any */
	    {"127.0.0.1:0", 0, 1, "127.0.0.1", 0, 0},       /* the server lets the kernel pick */
	    {":0", 1, 0, "listen address ':0': port must be 1..65535", 0, 0},
	    {":65536", 0, 0, "listen address ':65536': port must be 0..65535", 0, 0},
	    {"8443", 1, 0, "listen address '8443': expected HOST:PORT", 0, 0},
	    {"host:", 1, 0, "listen address 'host:': port must be", 0, 0},
	    {"::1:8443", 1, 0, "listen address '::1:8443': expected HOST:PORT", 0, 0},
	    {"[::1]8443", 1, 0, "listen address '[::1]8443': expected [IPv6]:PORT", 0, 0},
	    {"[zz]:8443", 1, 0, "listen address '[zz]:8443': not an IPv6 address", 0, 0},
	    {"[]:8443", 1, 0, "listen address '[]:8443': not an IPv6 address", 0, 0},
	    {"bad_host:80", 1, 0, "listen address 'bad_host:80': host is not", 0, 0},
	    {"Upper:80", 1, 0, "listen address 'Upper:80': host is not", 0, 0},
	    {"nonsense", 0, 0, "listen address 'nonsense': expected", 0, 0},
	    {"1.2.3.4: 80", 1, 0, "listen address '1.2.3.4: 80': port must be", 0, 0},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct listen_addr la;
		char err[256] = "";
		int rc = listen_addr_parse(cases[i].spec, cases[i].min_port, &la, err, sizeof(err));
		if (cases[i].ok) {
			CHECK(rc == 0 && strcmp(la.host, cases[i].host) == 0 &&
			          la.ipv6 == cases[i].ipv6 && la.port == cases[i].port,
			      "%s: rc %d host '%s' ipv6 %d port %ld (%s)", cases[i].spec, rc,
			      la.host, la.ipv6, la.port, err);
		} else {
			CHECK(rc == -1 && strncmp(err, cases[i].host, strlen(cases[i].host)) == 0,
			      "%s: rc %d err '%s'", cases[i].spec, rc, err);
		}
	}
}

int main(void)
{
	test_listen();
	TEST_MAIN_END("listenaddr");
}
