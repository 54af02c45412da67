/*
 * The listen-address grammar (see listenaddr.h). Owns nothing: the result is
 * plain data in the caller's struct.
 */
#include "listenaddr.h"

#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

#include "util.h"
#include "dns.h"

int listen_addr_parse(const char *spec, long min_port, struct listen_addr *la, char *err,
                      size_t errlen)
{
	const char *hs, *he, *colon;
	unsigned char addr[16];
	size_t hl;

	memset(la, 0, sizeof(*la));
	if (spec[0] == '[') {
		he = strchr(spec, ']');
		if (he == NULL || he[1] != ':') {
			errf(err, errlen, "listen address '%s': expected [IPv6]:PORT", spec);
			return -1;
		}
		hs = spec + 1;
		colon = he + 1;
		la->ipv6 = 1;
	} else {
		colon = strrchr(spec, ':');
		if (colon == NULL || memchr(spec, ':', (size_t)(colon - spec)) != NULL) {
			errf(err, errlen,
			     "listen address '%s': expected HOST:PORT, :PORT or [IPv6]:PORT", spec);
			return -1;
		}
		hs = spec;
		he = colon;
	}
	if (parse_long(colon + 1, min_port, 65535, &la->port) != 0) {
		errf(err, errlen, "listen address '%s': port must be %ld..65535", spec, min_port);
		return -1;
	}
	hl = (size_t)(he - hs);
	if (hl >= sizeof(la->host)) {
		errf(err, errlen, "listen address '%s': host too long", spec);
		return -1;
	}
	memcpy(la->host, hs, hl);
	la->host[hl] = '\0';
	if (la->ipv6 && inet_pton(AF_INET6, la->host, addr) != 1) {
		errf(err, errlen, "listen address '%s': not an IPv6 address", spec);
		return -1;
	}
	if (!la->ipv6 && hl > 0 && inet_pton(AF_INET, la->host, addr) != 1 &&
	    !dns_subdomain_valid(la->host)) {
		errf(err, errlen, "listen address '%s': host is not an IPv4 address or DNS name",
		     spec);
		return -1;
	}
	return 0;
}
