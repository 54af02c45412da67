/*
 * The wait loop: resolve MASTER_ADDR, then connect to MASTER_PORT, with a
 * short growing pause between tries, a monotonic deadline and a progress line
 * every few seconds. Each look-up and each connect attempt has its own bound,
 * so neither a resolver that never answers nor a black-holed address holds the
 * loop past its deadline.
 */
#include "wait.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "mono.h"

#define CONNECT_MS   1000
#define LOOKUP_MS    1000
#define PAUSE_MIN_MS 100
#define PAUSE_MAX_MS 1000

int wait_target_from_env(const char *(*get)(const char *name), struct wait_target *t, char *err,
                         size_t errlen)
{
	const char *addr = get("MASTER_ADDR"), *port = get("MASTER_PORT"), *rank = get("RANK");
	long p;

	memset(t, 0, sizeof(*t));
	if (addr == NULL || addr[0] == '\0' || strlen(addr) >= sizeof(t->addr)) {
		errf(err, errlen, "MASTER_ADDR is %s",
		     addr == NULL ? "not set" : "empty or too long");
		return -1;
	}
	if (port == NULL || parse_long(port, 1, 65535, &p) != 0) {
		errf(err, errlen, "MASTER_PORT \"%.16s\" is not a port number between 1 and 65535",
		     port ? port : "");
		return -1;
	}
	if (rank == NULL || parse_long(rank, 0, 1L << 30, &t->rank) != 0) {
		errf(err, errlen, "RANK \"%.16s\" is not a rank", rank ? rank : "");
		return -1;
	}
	strcpy(t->addr, addr);
	snprintf(t->port, sizeof(t->port), "%ld", p);
	return 0;
}

/* One bounded non-blocking connect. Returns 0, or an errno. */
static int try_connect(const struct addrinfo *ai, long budget_ms)
{
	struct pollfd pfd;
	socklen_t len = sizeof(int);
	int fd, rc, soerr = 0;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0)
		return errno;
	rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
	if (rc != 0 && errno != EINPROGRESS) {
		soerr = errno;
		goto out;
	}
	if (rc != 0) {
		pfd.fd = fd;
		pfd.events = POLLOUT;
		rc = poll(&pfd, 1, (int)(budget_ms > CONNECT_MS ? CONNECT_MS : budget_ms));
		if (rc == 0)
			soerr = ETIMEDOUT;
		else if (rc < 0)
			soerr = errno;
		else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0)
			soerr = errno;
	}
out:
	close(fd);
	return soerr;
}

/* A look-up of resolve_bounded's; those glibc could not cancel stay listed. */
struct lookup {
	struct gaicb cb;
	struct addrinfo hints;
	struct lookup *next;
};
static struct lookup *left_behind;

/*
 * getaddrinfo bounded to budget_ms (at most LOOKUP_MS): glibc's resolver waits
 * its own timeouts times its attempts (5 s x 2 by default, more as configured),
 * which would outlive --timeout. Returns getaddrinfo's result (EAI_AGAIN when
 * the bound passed; *res is then NULL). A look-up glibc cannot cancel keeps
 * running and keeps its request: it is left behind, as the process ends soon.
 */
static int resolve_bounded(const char *host, const char *port, long budget_ms,
                           struct addrinfo **res)
{
	struct lookup *l = calloc(1, sizeof(*l));
	struct gaicb *list[1];
	struct timespec ts;
	long ms = budget_ms > LOOKUP_MS ? LOOKUP_MS : budget_ms < 1 ? 1 : budget_ms;
	int rc;

	*res = NULL;
	if (l == NULL)
		return EAI_MEMORY;
	/* an address needs no resolver: answered at once, with no thread to wait for */
	l->hints.ai_flags = AI_NUMERICHOST;
	l->hints.ai_family = AF_UNSPEC;
	l->hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, port, &l->hints, res) == 0) {
		free(l);
		return 0;
	}
	*res = NULL;
	l->hints.ai_flags = 0;
	l->hints.ai_family = AF_UNSPEC;
	l->hints.ai_socktype = SOCK_STREAM;
	l->cb.ar_name = host;
	l->cb.ar_service = port;
	l->cb.ar_request = &l->hints;
	list[0] = &l->cb;
	if ((rc = getaddrinfo_a(GAI_NOWAIT, list, 1, NULL)) != 0) {
		free(l);
		return rc;
	}
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	rc = gai_suspend((const struct gaicb *const *)list, 1, &ts);
	if ((rc == 0 || rc == EAI_ALLDONE) && (rc = gai_error(&l->cb)) != EAI_INPROGRESS) {
		*res = l->cb.ar_result;
		free(l);
		return rc;
	}
	/* past the bound (or interrupted): cancel, and leave it behind if it runs on */
	if (gai_cancel(&l->cb) == EAI_NOTCANCELED && gai_error(&l->cb) == EAI_INPROGRESS) {
		l->next = left_behind; /* still glibc's: reachable, never freed */
		left_behind = l;
		return EAI_AGAIN;
	}
	if (l->cb.ar_result != NULL)
		freeaddrinfo(l->cb.ar_result);
	free(l);
	return EAI_AGAIN;
}

int wait_run(const struct wait_target *t, long timeout_ms, long report_ms, FILE *log)
{
	long long start = mono_ms(), deadline = start + timeout_ms, next_report = start + report_ms;
	long pause = PAUSE_MIN_MS;
	char why[160] = "not tried yet";
	int resolved = 0;

	for (;;) {
		struct addrinfo *res = NULL, *ai;
		long long now;
		int gai;

		now = mono_ms();
		gai = resolve_bounded(t->addr, t->port, (long)(deadline - now), &res);
		if (gai != 0) {
			resolved = 0;
			snprintf(why, sizeof(why), "%s", gai_strerror(gai));
		} else {
			resolved = 1;
			if (t->rank == 0) {
				freeaddrinfo(res);
				fprintf(log,
				        "distenv-webhook wait: %s resolves (rank 0 opens port %s "
				        "itself)\n",
				        t->addr, t->port);
				return 0;
			}
			for (ai = res; ai != NULL; ai = ai->ai_next) {
				long left = (long)(deadline - mono_ms());
				int e = try_connect(ai, left > 0 ? left : 1);
				if (e == 0) {
					freeaddrinfo(res);
					fprintf(log,
					        "distenv-webhook wait: %s:%s accepts connections\n",
					        t->addr, t->port);
					return 0;
				}
				snprintf(why, sizeof(why), "%s", strerror(e));
			}
			freeaddrinfo(res);
		}
		now = mono_ms();
		if (now >= deadline) {
			/* what usually keeps rank 0's name from resolving; the last line stays why
			 */
			if (!resolved)
				fprintf(
				    log,
				    "distenv-webhook wait: %s does not resolve in this pod; likely "
				    "causes: no headless Service of that name selecting the pods, "
				    "rank 0's pod not created yet, a Service without "
				    "publishNotReadyAddresses: true, or this pod uses the node's "
				    "DNS "
				    "(hostNetwork without dnsPolicy: ClusterFirstWithHostNet, or "
				    "dnsPolicy: Default)\n",
				    t->addr);
			fprintf(
			    log,
			    "distenv-webhook wait: timed out after %lds waiting for %s%s%s to %s "
			    "(%s)\n",
			    timeout_ms / 1000, t->addr, resolved ? ":" : "",
			    resolved ? t->port : "", resolved ? "accept connections" : "resolve",
			    why);
			return 1;
		}
		if (now >= next_report) {
			fprintf(log,
			        "distenv-webhook wait: waiting for %s%s%s to %s (%s), %llds left\n",
			        t->addr, resolved ? ":" : "", resolved ? t->port : "",
			        resolved ? "accept connections" : "resolve", why,
			        (deadline - now + 999) / 1000);
			fflush(log);
			next_report = now + report_ms;
		}
		{
			long long left = deadline - mono_ms();
			struct timespec ts;
			long ms = left < pause ? (long)(left > 0 ? left : 0) : pause;
			ts.tv_sec = ms / 1000;
			ts.tv_nsec = (ms % 1000) * 1000000L;
			nanosleep(&ts, NULL);
		}
		pause = pause * 2 > PAUSE_MAX_MS ? PAUSE_MAX_MS : pause * 2;
	}
}
