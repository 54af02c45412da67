/*
 * RFC 1123 DNS names, as Kubernetes checks host names, subdomains and the
 * names distenv writes. Pure checks; nothing is kept.
 */
#ifndef DISTENV_DNS_H
#define DISTENV_DNS_H

/* RFC 1123 label: 1-63 of [a-z0-9-], alphanumeric at both ends. */
int dns_label_valid(const char *s);
/* RFC 1123 subdomain: dot-separated labels, at most 253 bytes. */
int dns_subdomain_valid(const char *s);

#endif
