/*
 * selftest: checks a running distenv webhook from outside, as an operator or
 * `helm test` would. Over HTTPS, verifying the server against a given CA, it
 * GETs /healthz and posts AdmissionReviews whose right answers need no object
 * in the cluster: a pod without the opt-in label (allowed, no patch), an
 * opted-in pod of a ReplicaSet (denied, naming what is supported) and an
 * opted-in Job that is not Indexed (/validate denies it). Holds nothing
 * between calls.
 */
#ifndef DISTENV_SELFTEST_H
#define DISTENV_SELFTEST_H

#include <stdio.h>

struct selftest_opts {
	const char *url;     /* https://HOST[:PORT], no path */
	const char *ca_file; /* PEM CA the server's certificate must chain to; NULL: system CAs */
	long timeout_ms;     /* per request */
	const char
	    *connect_to; /* NULL, or an address to connect to instead of the URL's host,
	                  * whose name the certificate must still carry (curl --connect-to) */
};

/*
 * Runs every check, printing one line each to out ("selftest: ok ..." or
 * "selftest: FAIL ...: why"). Returns the number of failed checks (0: all
 * passed), or -1 when the options are unusable (err says why).
 */
int selftest_run(const struct selftest_opts *o, FILE *out, char *err, size_t errlen);

#endif
