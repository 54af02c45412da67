/*
 * RFC 1123 DNS names, as Kubernetes checks host names, subdomains and the
 * names distenv writes, and the cluster domain a pod's resolv.conf shows.
 * Pure functions on the caller's text; nothing is kept.
 */
#ifndef DISTENV_DNS_H
#define DISTENV_DNS_H

#include <stddef.h>

/* RFC 1123 label: 1-63 of [a-z0-9-], alphanumeric at both ends. */
int dns_label_valid(const char *s);
/* RFC 1123 subdomain: dot-separated labels, at most 253 bytes. */
int dns_subdomain_valid(const char *s);

/*
 * The cluster domain in resolv.conf text: kubelet writes every ClusterFirst
 * pod's search list as "<ns>.svc.<domain> svc.<domain> <domain>" (its own
 * entries first). Of the last search or domain line (resolv.conf(5): the last
 * wins), the svc.<domain> of that triple, else the first svc.<domain> entry;
 * lowercased, a final dot dropped, <domain> a DNS subdomain that fits out.
 * Returns 1 with it in out, or 0 (out "") when there is none: a node's own
 * resolv.conf (hostNetwork with dnsPolicy Default), a host outside a cluster.
 */
int dns_cluster_domain_from_resolv(const char *text, size_t len, char *out, size_t outlen);

#endif
