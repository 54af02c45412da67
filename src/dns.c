/* RFC 1123 label and subdomain checks (no allocation). */
#include "dns.h"

#include <stddef.h>
#include <string.h>

static int label_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 63)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
			return 0;
	}
	return s[0] != '-' && s[n - 1] != '-';
}

int dns_label_valid(const char *s)
{
	return s != NULL && label_ok(s, strlen(s));
}

int dns_subdomain_valid(const char *s)
{
	size_t n;
	const char *p, *dot;

	if (s == NULL)
		return 0;
	n = strlen(s);
	if (n == 0 || n > 253)
		return 0;
	for (p = s;; p = dot + 1) {
		dot = strchr(p, '.');
		if (!label_ok(p, dot ? (size_t)(dot - p) : strlen(p)))
			return 0;
		if (dot == NULL)
			return 1;
	}
}
