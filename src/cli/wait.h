/*
 * `distenv-webhook wait`: the first init container of a rank that asked for
 * distenv.dev/wait-for-master. Waits, bounded, until MASTER_ADDR resolves and
 * (on every rank but 0, whose own process opens it) MASTER_PORT accepts a TCP
 * connection. A shell around the resolver and sockets; it owns nothing past a
 * call.
 */
#ifndef DISTENV_WAIT_H
#define DISTENV_WAIT_H

#include <stdio.h>

/* What to wait for, read from the environment. */
struct wait_target {
	char addr[254];
	char port[8];
	long rank;
};

/*
 * Reads MASTER_ADDR, MASTER_PORT and RANK through get (getenv in the binary).
 * Returns 0, or -1 with a one-line reason in err.
 */
int wait_target_from_env(const char *(*get)(const char *name), struct wait_target *t, char *err,
                         size_t errlen);

/*
 * Waits for t until timeout_ms, printing what it waits for to log every
 * report_ms. Returns 0 when ready, 1 when the time is up (the last line on log
 * names what it waited for and the last error; when the name never resolved,
 * the line before names the likely causes, the pod's DNS policy among them).
 */
int wait_run(const struct wait_target *t, long timeout_ms, long report_ms, FILE *log);

#endif
