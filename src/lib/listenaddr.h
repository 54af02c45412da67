/*
 * The listen-address grammar, one for the config file and the server:
 * "HOST:PORT", ":PORT" (every address) or "[IPv6]:PORT", HOST an IPv4
 * address or a DNS name. Pure: nothing is resolved or bound here.
 */
#ifndef DISTENV_LISTENADDR_H
#define DISTENV_LISTENADDR_H

#include <stddef.h>

struct listen_addr {
	char host[256]; /* "" for ":PORT" */
	int ipv6;       /* host was given in brackets (an IPv6 literal) */
	long port;
};

/*
 * Parses spec with a port from min_port (0 lets the kernel pick) to 65535.
 * Returns 0 and fills la, or -1 with "listen address 'SPEC': why" in err.
 */
int listen_addr_parse(const char *spec, long min_port, struct listen_addr *la, char *err,
                      size_t errlen) __attribute__((warn_unused_result));

#endif
