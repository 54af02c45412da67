/*
 * RFC 1123 label and subdomain checks, and the cluster domain read from
 * resolv.conf text. Pure: no allocation, no files.
 */
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

/* ---- the cluster domain in resolv.conf ---- */

#define RESOLV_MAX_SEARCH 64 /* entries of one search line looked at */

struct span {
	const char *p;
	size_t n;
};

static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Whether line [p, p+n) starts with keyword kw followed by a blank (as glibc's res_init). */
static int keyword(const char *p, size_t n, const char *kw)
{
	size_t k = strlen(kw);

	return n > k && memcmp(p, kw, k) == 0 && blank(p[k]);
}

/* Splits [p, p+n) at blanks into at most max spans; returns how many. */
static int split(const char *p, size_t n, struct span *out, int max)
{
	size_t i = 0, start;
	int count = 0;

	while (i < n && count < max) {
		while (i < n && blank(p[i]))
			i++;
		if (i == n)
			break;
		start = i;
		while (i < n && !blank(p[i]))
			i++;
		out[count].p = p + start;
		out[count++].n = i - start;
	}
	return count;
}

/* Whether span a is "svc." followed by span b (either may end in a dot: absolute names). */
static int svc_of(struct span a, struct span b)
{
	if (a.n > 0 && a.p[a.n - 1] == '.')
		a.n--;
	if (b.n > 0 && b.p[b.n - 1] == '.')
		b.n--;
	return a.n == b.n + 4 && memcmp(a.p, "svc.", 4) == 0 && memcmp(a.p + 4, b.p, b.n) == 0;
}

/* Whether span a ends in ".<b>". */
static int ends_with_dot(struct span a, struct span b)
{
	if (a.n > 0 && a.p[a.n - 1] == '.')
		a.n--;
	if (b.n > 0 && b.p[b.n - 1] == '.')
		b.n--;
	return a.n > b.n + 1 && a.p[a.n - b.n - 1] == '.' && memcmp(a.p + a.n - b.n, b.p, b.n) == 0;
}

/*
 * The domain of entry "svc.<domain>" (lowercased, without a final dot) into
 * out. Returns 1, or 0 when it is not that or <domain> is not a DNS name.
 */
static int svc_domain(struct span e, char *out, size_t outlen)
{
	size_t i, n;

	if (e.n > 0 && e.p[e.n - 1] == '.')
		e.n--;
	if (e.n <= 4 || memcmp(e.p, "svc.", 4) != 0)
		return 0;
	n = e.n - 4;
	if (n >= outlen)
		return 0;
	for (i = 0; i < n; i++) {
		char c = e.p[4 + i];
		out[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
	}
	out[n] = '\0';
	return dns_subdomain_valid(out);
}

int dns_cluster_domain_from_resolv(const char *text, size_t len, char *out, size_t outlen)
{
	struct span list[RESOLV_MAX_SEARCH];
	const char *line, *end = text + len, *last = NULL, *nl;
	size_t last_n = 0, n;
	int count, i;

	if (outlen > 0)
		out[0] = '\0';
	/* resolv.conf(5): search and domain replace each other; the last line of either wins */
	for (line = text; line < end; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(end - line));
		if (nl == NULL)
			nl = end;
		n = (size_t)(nl - line);
		if (keyword(line, n, "search") || keyword(line, n, "domain")) {
			last = line + 6; /* both keywords are six letters */
			last_n = n - 6;
		}
	}
	if (last == NULL)
		return 0;
	count = split(last, last_n, list, RESOLV_MAX_SEARCH);
	/*
	 * kubelet writes "<ns>.svc.<domain> svc.<domain> <domain>": that triple
	 * first, so that a namespace named "svc" ("svc.svc.<domain>") is not taken
	 * for the entry; then, for lists written by hand, the first svc.<domain>.
	 */
	for (i = 0; i + 2 < count; i++)
		if (svc_of(list[i + 1], list[i + 2]) && ends_with_dot(list[i], list[i + 1]) &&
		    svc_domain(list[i + 1], out, outlen))
			return 1;
	for (i = 0; i < count; i++)
		if (svc_domain(list[i], out, outlen))
			return 1;
	if (outlen > 0)
		out[0] = '\0';
	return 0;
}
