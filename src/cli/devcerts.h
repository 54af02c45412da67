/*
 * Development certificates: a CA and a serving certificate signed by it
 * (OpenSSL). Writes ca.crt, tls.crt, tls.key (0600). Keys are wiped from memory.
 */
#ifndef DISTENV_DEVCERTS_H
#define DISTENV_DEVCERTS_H

#include <stddef.h>

#define CERTS_MAX_EXTRA 32

struct certs_opts {
	const char *service;   /* required */
	const char *namespace; /* required */
	const char *out_dir;   /* required; created 0700 if absent */
	long days;             /* validity, default 365 */
	const char *dns[CERTS_MAX_EXTRA];
	int n_dns;
	const char *ip[CERTS_MAX_EXTRA];
	int n_ip;
};

/*
 * Generates the CA and serving certificate. SANs: service, service.ns,
 * service.ns.svc, service.ns.svc.cluster.local, localhost, 127.0.0.1, plus
 * opts->dns/ip. NotBefore is back-dated one hour. Returns 0 or -1 with err.
 */
int certs_generate(const struct certs_opts *opts, char *err, size_t errlen)
    __attribute__((warn_unused_result));

#endif
