/*
 * Process-wide Prometheus metrics kept in C11 atomics (relaxed: each counter is
 * independent), rendered in the text exposition format 0.0.4, with the
 * process_* series of the Prometheus client libraries read from /proc at each
 * scrape. metrics_render returns a malloc'd string the caller frees.
 */
#include "metrics.h"
#include "version.h"

#include <dirent.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/*
 * A latency histogram: upper bounds (seconds; +Inf implied), non-cumulative
 * counts (one more than the bounds, the last for +Inf) and the sum in ns
 * (2^64 ns is 584 years: it cannot wrap in practice).
 */
struct histogram {
	const double *le;
	size_t n;
	atomic_ullong *counts;
	atomic_ullong sum_ns;
};

/*
 * Admission latency: up to the longest webhook timeout the API server allows
 * (30 s), so that a look-up near the chart's 10 s timeout still lands in a
 * bucket of its own.
 */
static const double admission_le[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                      0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
                                      1.0,    2.5,     5.0,    10.0,  30.0};
#define N_ADMISSION_LE (sizeof(admission_le) / sizeof(admission_le[0]))
/* Look-up latency: an API round trip, bounded by lookups.timeoutMs (at most 10 s). */
static const double lookup_le[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                   0.25,  0.5,    1.0,   2.5,  5.0,   10.0};
#define N_LOOKUP_LE (sizeof(lookup_le) / sizeof(lookup_le[0]))

static const char *const webhook_names[METRICS_WEBHOOK_COUNT] = {"mutate", "validate"};
static const char *const path_names[METRICS_PATH_COUNT] = {"/mutate", "/validate", "/healthz",
                                                           "/readyz", "/metrics",  "other"};
/* Status codes with their own series; then "other", then "none" (closed unanswered). */
static const int http_codes[] = {200, 400, 404, 405, 413, 429, 500, 503};
#define N_CODES    (sizeof(http_codes) / sizeof(http_codes[0]))
#define CODE_OTHER N_CODES
#define CODE_NONE  (N_CODES + 1)

static atomic_ullong m_requests[METRICS_WEBHOOK_COUNT][ADMISSION_OUTCOME_COUNT];
static atomic_ullong m_denials[METRICS_WEBHOOK_COUNT][DENY_REASON_COUNT];
static atomic_ullong m_admission_counts[METRICS_WEBHOOK_COUNT][N_ADMISSION_LE + 1];
static struct histogram m_admission[METRICS_WEBHOOK_COUNT] = {
    {admission_le, N_ADMISSION_LE, m_admission_counts[0], 0},
    {admission_le, N_ADMISSION_LE, m_admission_counts[1], 0},
};
static atomic_ullong m_lookup_counts[N_LOOKUP_LE + 1];
static struct histogram m_lookup_latency = {lookup_le, N_LOOKUP_LE, m_lookup_counts, 0};
static atomic_ullong m_http[METRICS_PATH_COUNT][N_CODES + 2];
static atomic_llong m_inflight, m_connections;
static atomic_ullong m_connections_total; /* every connection opened on the webhook port */
static atomic_ullong m_hs_total, m_hs_reads,
    m_hs_waits; /* TLS handshakes done, their reads, waits */
static atomic_ullong m_lookup_ok, m_lookup_error, m_lookup_cached;
static atomic_llong m_cert_expiry;
static atomic_ullong m_reload_ok, m_reload_fail;
static atomic_ullong m_overload[METRICS_OVERLOAD_COUNT];
static const char *const overload_names[METRICS_OVERLOAD_COUNT] = {
    "queue_full", "body_budget", "connection_limit", "per_ip_limit", "evicted"};
static atomic_ullong m_timeouts[METRICS_TIMEOUT_COUNT];
static const char *const timeout_names[METRICS_TIMEOUT_COUNT] = {"head", "body", "idle",
                                                                 "handshake"};
static atomic_llong m_buffered;
/* Set once at start, before any thread that scrapes exists (metrics_cluster_domain). */
static char m_domain[254], m_domain_source[16];

static void inc(atomic_ullong *a)
{
	atomic_fetch_add_explicit(a, 1, memory_order_relaxed);
}

static unsigned long long rd(atomic_ullong *a)
{
	return atomic_load_explicit(a, memory_order_relaxed);
}

static void histogram_observe(struct histogram *h, double seconds)
{
	size_t i;

	if (!(seconds >= 0)) /* also catches NaN */
		seconds = 0;
	for (i = 0; i < h->n && seconds > h->le[i]; i++)
		;
	inc(&h->counts[i]);
	if (seconds > 1e6)
		seconds = 1e6;
	atomic_fetch_add_explicit(&h->sum_ns, (unsigned long long)(seconds * 1e9 + 0.5),
	                          memory_order_relaxed);
}

void metrics_admission(enum metrics_webhook w, enum admission_outcome outcome,
                       enum deny_reason reason, double seconds)
{
	if ((unsigned)w >= METRICS_WEBHOOK_COUNT || (unsigned)outcome >= ADMISSION_OUTCOME_COUNT)
		return;
	inc(&m_requests[w][outcome]);
	if (outcome == ADMISSION_DENIED)
		inc(&m_denials[w][(unsigned)reason < DENY_REASON_COUNT && reason != DENY_NONE
		                      ? reason
		                      : DENY_OTHER]);
	histogram_observe(&m_admission[w], seconds);
}

void metrics_http_request(enum metrics_path path, int status)
{
	size_t i;

	if ((unsigned)path >= METRICS_PATH_COUNT)
		path = METRICS_PATH_OTHER;
	for (i = 0; i < N_CODES && http_codes[i] != status; i++)
		;
	if (status == 0)
		i = CODE_NONE;
	inc(&m_http[path][i]);
}

void metrics_connections(int delta)
{
	atomic_fetch_add_explicit(&m_connections, delta, memory_order_relaxed);
	if (delta > 0)
		atomic_fetch_add_explicit(&m_connections_total, (unsigned long long)delta,
		                          memory_order_relaxed);
}

void metrics_buffered_bytes(long long delta)
{
	atomic_fetch_add_explicit(&m_buffered, delta, memory_order_relaxed);
}

void metrics_inflight(int delta)
{
	atomic_fetch_add_explicit(&m_inflight, delta, memory_order_relaxed);
}

void metrics_lookup(int ok, int cached, double seconds)
{
	if (!ok)
		inc(&m_lookup_error);
	else if (cached)
		inc(&m_lookup_cached);
	else
		inc(&m_lookup_ok);
	if (!cached)
		histogram_observe(&m_lookup_latency, seconds);
}

void metrics_overload(enum metrics_overload r)
{
	if ((unsigned)r < METRICS_OVERLOAD_COUNT)
		inc(&m_overload[r]);
}

void metrics_tls_handshake(unsigned reads, unsigned waits)
{
	inc(&m_hs_total);
	atomic_fetch_add_explicit(&m_hs_reads, reads, memory_order_relaxed);
	atomic_fetch_add_explicit(&m_hs_waits, waits, memory_order_relaxed);
}

void metrics_conn_timeout(enum metrics_timeout p)
{
	if ((unsigned)p < METRICS_TIMEOUT_COUNT)
		inc(&m_timeouts[p]);
}

void metrics_cert_expiry(time_t not_after)
{
	atomic_store_explicit(&m_cert_expiry, (long long)not_after, memory_order_relaxed);
}

void metrics_cert_reload(int ok)
{
	inc(ok ? &m_reload_ok : &m_reload_fail);
}

void metrics_cluster_domain(const char *domain, const char *source)
{
	snprintf(m_domain, sizeof(m_domain), "%s", domain);
	snprintf(m_domain_source, sizeof(m_domain_source), "%s", source);
}

static void header(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A gauge without labels: its header and its one sample. */
static void gauge(FILE *f, const char *name, const char *help, atomic_llong *v)
{
	header(f, name, "gauge", help);
	fprintf(f, "%s %lld\n", name, atomic_load_explicit(v, memory_order_relaxed));
}

/* The series of one histogram; labels is "" or `key="value",` (with the comma). */
static void histogram_render(FILE *f, const char *name, const char *labels, struct histogram *h)
{
	unsigned long long cum = 0, sum_ns;
	size_t i;
	size_t ll = strlen(labels);

	/* Counts are read one by one: a scrape may straddle an observation, as in any client
	 * library. */
	sum_ns = rd(&h->sum_ns);
	for (i = 0; i < h->n; i++) {
		cum += rd(&h->counts[i]);
		fprintf(f, "%s_bucket{%sle=\"%g\"} %llu\n", name, labels, h->le[i], cum);
	}
	cum += rd(&h->counts[h->n]);
	fprintf(f, "%s_bucket{%sle=\"+Inf\"} %llu\n", name, labels, cum);
	/* The labels without their trailing comma, in braces, or nothing. */
	if (ll > 0) {
		fprintf(f, "%s_sum{%.*s} %.9f\n", name, (int)(ll - 1), labels,
		        (double)sum_ns / 1e9);
		fprintf(f, "%s_count{%.*s} %llu\n", name, (int)(ll - 1), labels, cum);
	} else {
		fprintf(f, "%s_sum %.9f\n", name, (double)sum_ns / 1e9);
		fprintf(f, "%s_count %llu\n", name, cum);
	}
}

/* Open descriptors: the entries of /proc/self/fd, less the one that reads them. -1 on error. */
static long open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n > 0 ? n - 1 : 0;
}

/*
 * Start time in Unix seconds: field 22 of /proc/self/stat (clock ticks after
 * boot) plus btime of /proc/stat, as the Prometheus client libraries do. -1 on error.
 */
static double start_time(void)
{
	char buf[1024], *p;
	unsigned long long ticks = 0, btime = 0;
	long hz = sysconf(_SC_CLK_TCK);
	size_t n;
	int field;
	FILE *f;

	if (hz <= 0 || (f = fopen("/proc/self/stat", "re")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* comm may hold spaces and parentheses: the fields start after the last ')'. */
	if ((p = strrchr(buf, ')')) == NULL)
		return -1;
	for (field = 2; field < 22 && p != NULL; field++)
		p = strchr(p + 1, ' ');
	if (p == NULL || sscanf(p + 1, "%llu", &ticks) != 1)
		return -1;
	if ((f = fopen("/proc/stat", "re")) == NULL)
		return -1;
	while (fgets(buf, sizeof(buf), f) != NULL)
		if (sscanf(buf, "btime %llu", &btime) == 1)
			break;
	fclose(f);
	if (btime == 0)
		return -1;
	return (double)btime + (double)ticks / (double)hz;
}

/* process_* as the Prometheus client libraries name them; a series that cannot be read is left
 * out. */
static void process_render(FILE *f)
{
	struct rusage ru;
	struct rlimit rl;
	unsigned long long vsize, resident;
	long page = sysconf(_SC_PAGESIZE), fds;
	double st;
	FILE *sm;

	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		header(f, "process_cpu_seconds_total", "counter",
		       "Total user and system CPU time spent in seconds.");
		fprintf(f, "process_cpu_seconds_total %.6f\n",
		        (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		            (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	}
	if (page > 0 && (sm = fopen("/proc/self/statm", "re")) != NULL) {
		if (fscanf(sm, "%llu %llu", &vsize, &resident) == 2) {
			header(f, "process_resident_memory_bytes", "gauge",
			       "Resident memory size in bytes.");
			fprintf(f, "process_resident_memory_bytes %llu\n",
			        resident * (unsigned long long)page);
			header(f, "process_virtual_memory_bytes", "gauge",
			       "Virtual memory size in bytes.");
			fprintf(f, "process_virtual_memory_bytes %llu\n",
			        vsize * (unsigned long long)page);
		}
		fclose(sm);
	}
	if ((fds = open_fds()) >= 0) {
		header(f, "process_open_fds", "gauge", "Number of open file descriptors.");
		fprintf(f, "process_open_fds %ld\n", fds);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		header(f, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
		fprintf(f, "process_max_fds %llu\n", (unsigned long long)rl.rlim_cur);
	}
	if ((st = start_time()) >= 0) {
		header(f, "process_start_time_seconds", "gauge",
		       "Start time of the process since unix epoch in seconds.");
		fprintf(f, "process_start_time_seconds %.2f\n", st);
	}
}

/* distenv_build_info: the version and git revision as labels of a constant 1. */
static void build_info_render(FILE *f)
{
	header(f, "distenv_build_info", "gauge",
	       "Build version and git revision of distenv-webhook.");
	fprintf(f, "distenv_build_info{version=\"%s\",revision=\"%s\"} 1\n", DISTENV_VERSION,
	        DISTENV_GIT_REV);
}

/*
 * distenv_cluster_domain_info: the domain MASTER_ADDR names end in, and its
 * source, as labels of a constant 1 (a DNS name needs no label escaping).
 * Absent until serve has said which (never in unit tests that did not).
 */
static void cluster_domain_render(FILE *f)
{
	if (m_domain[0] == '\0')
		return;
	header(f, "distenv_cluster_domain_info", "gauge",
	       "Cluster DNS domain of the names distenv writes, and where it came from.");
	fprintf(f, "distenv_cluster_domain_info{domain=\"%s\",source=\"%s\"} 1\n", m_domain,
	        m_domain_source);
}

/* distenv_http_requests_total: every path with every code, "other" and "none". */
static void http_render(FILE *f)
{
	size_t i, c;

	header(f, "distenv_http_requests_total", "counter",
	       "HTTP requests by path and status code (none: closed without an answer).");
	for (i = 0; i < METRICS_PATH_COUNT; i++) {
		for (c = 0; c < N_CODES; c++)
			fprintf(f, "distenv_http_requests_total{path=\"%s\",code=\"%d\"} %llu\n",
			        path_names[i], http_codes[c], rd(&m_http[i][c]));
		fprintf(f, "distenv_http_requests_total{path=\"%s\",code=\"other\"} %llu\n",
		        path_names[i], rd(&m_http[i][CODE_OTHER]));
		fprintf(f, "distenv_http_requests_total{path=\"%s\",code=\"none\"} %llu\n",
		        path_names[i], rd(&m_http[i][CODE_NONE]));
	}
}

/* The AdmissionReview series of both webhooks: requests, denials and latency. */
static void admission_render(FILE *f)
{
	char labels[64];
	int w, o, r;

	header(f, "distenv_admission_requests_total", "counter",
	       "AdmissionReview requests by webhook and outcome.");
	for (w = 0; w < METRICS_WEBHOOK_COUNT; w++)
		for (o = 0; o < ADMISSION_OUTCOME_COUNT; o++)
			fprintf(f,
			        "distenv_admission_requests_total{webhook=\"%s\",outcome=\"%s\"} "
			        "%llu\n",
			        webhook_names[w], verdict_outcome_name((enum admission_outcome)o),
			        rd(&m_requests[w][o]));

	header(f, "distenv_admission_denials_total", "counter",
	       "Denied AdmissionReviews by webhook and reason.");
	for (w = 0; w < METRICS_WEBHOOK_COUNT; w++)
		for (r = DENY_NONE + 1; r < DENY_REASON_COUNT; r++)
			fprintf(
			    f,
			    "distenv_admission_denials_total{webhook=\"%s\",reason=\"%s\"} %llu\n",
			    webhook_names[w], verdict_reason_name((enum deny_reason)r),
			    rd(&m_denials[w][r]));

	header(f, "distenv_admission_duration_seconds", "histogram",
	       "Time to answer one AdmissionReview, from its first byte to its answer.");
	for (w = 0; w < METRICS_WEBHOOK_COUNT; w++) {
		snprintf(labels, sizeof(labels), "webhook=\"%s\",", webhook_names[w]);
		histogram_render(f, "distenv_admission_duration_seconds", labels, &m_admission[w]);
	}
}

/* What the server holds now: requests in flight, open connections, buffered bodies. */
static void load_render(FILE *f)
{
	gauge(f, "distenv_inflight_requests", "AdmissionReview requests being handled now.",
	      &m_inflight);

	gauge(f, "distenv_open_connections",
	      "Open connections on the webhook port, idle keep-alive ones included.",
	      &m_connections);

	header(f, "distenv_connections_total", "counter",
	       "Connections opened on the webhook port (each one TLS handshake).");
	fprintf(f, "distenv_connections_total %llu\n", rd(&m_connections_total));

	header(f, "distenv_tls_handshakes_total", "counter",
	       "TLS handshakes on the webhook port that reached the client's Finished.");
	fprintf(f, "distenv_tls_handshakes_total %llu\n", rd(&m_hs_total));
	header(f, "distenv_tls_handshake_reads_total", "counter",
	       "Socket reads those handshakes took (a few each; many: the handshake loop spins).");
	fprintf(f, "distenv_tls_handshake_reads_total %llu\n", rd(&m_hs_reads));
	header(f, "distenv_tls_handshake_waits_total", "counter",
	       "Times those handshakes waited for the client's next flight (one wake-up each).");
	fprintf(f, "distenv_tls_handshake_waits_total %llu\n", rd(&m_hs_waits));

	gauge(f, "distenv_buffered_body_bytes",
	      "Bytes of request bodies held in memory now (limits.maxBufferedBodyBytes).",
	      &m_buffered);
}

/* Kubernetes API look-ups: by outcome, and the round trip's latency. */
static void lookups_render(FILE *f)
{
	header(f, "distenv_lookups_total", "counter",
	       "Kubernetes API workload look-ups by outcome (cached: answered from the cache).");
	fprintf(f, "distenv_lookups_total{outcome=\"ok\"} %llu\n", rd(&m_lookup_ok));
	fprintf(f, "distenv_lookups_total{outcome=\"error\"} %llu\n", rd(&m_lookup_error));
	fprintf(f, "distenv_lookups_total{outcome=\"cached\"} %llu\n", rd(&m_lookup_cached));

	header(f, "distenv_lookup_duration_seconds", "histogram",
	       "Time of one Kubernetes API workload look-up round trip (cache hits not included).");
	histogram_render(f, "distenv_lookup_duration_seconds", "", &m_lookup_latency);
}

/* The serving certificate: when it expires, and how its reloads went. */
static void certificate_render(FILE *f)
{
	gauge(f, "distenv_certificate_expiry_timestamp_seconds",
	      "NotAfter of the serving certificate in use (Unix time).", &m_cert_expiry);

	header(f, "distenv_certificate_reloads_total", "counter",
	       "Serving certificate reloads by result.");
	fprintf(f, "distenv_certificate_reloads_total{result=\"success\"} %llu\n",
	        rd(&m_reload_ok));
	fprintf(f, "distenv_certificate_reloads_total{result=\"failure\"} %llu\n",
	        rd(&m_reload_fail));
}

/* What the server turned away or closed to protect itself, by reason and phase. */
static void protection_render(FILE *f)
{
	size_t i;

	header(f, "distenv_overload_rejections_total", "counter",
	       "Requests and connections turned away to protect the server, by reason.");
	for (i = 0; i < METRICS_OVERLOAD_COUNT; i++)
		fprintf(f, "distenv_overload_rejections_total{reason=\"%s\"} %llu\n",
		        overload_names[i], rd(&m_overload[i]));

	header(f, "distenv_connection_timeouts_total", "counter",
	       "Connections closed for passing a deadline, by the phase they were in.");
	for (i = 0; i < METRICS_TIMEOUT_COUNT; i++)
		fprintf(f, "distenv_connection_timeouts_total{phase=\"%s\"} %llu\n",
		        timeout_names[i], rd(&m_timeouts[i]));
}

char *metrics_render(size_t *len)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f;

	/* open_memstream: the stream owns buf until fclose, then the caller does. */
	f = open_memstream(&buf, &size);
	if (f == NULL)
		return NULL;

	build_info_render(f);
	cluster_domain_render(f);
	http_render(f);
	admission_render(f);
	load_render(f);
	lookups_render(f);
	certificate_render(f);
	protection_render(f);
	process_render(f);

	if (ferror(f)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	if (len != NULL)
		*len = size;
	return buf;
}
