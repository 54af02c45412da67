/*
 * Process-wide Prometheus metrics kept in C11 atomics (relaxed: each counter is
 * independent), rendered in the text exposition format 0.0.4. metrics_render
 * returns a malloc'd string the caller frees.
 */
#include "metrics.h"
#include "version.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

/* Upper bounds (seconds) of the latency buckets; +Inf is implied. */
static const double bucket_le[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                   0.025,  0.05,    0.1,    0.25,  0.5,    1.0};
#define N_BUCKETS (sizeof(bucket_le) / sizeof(bucket_le[0]))

/* HTTP error codes with their own series; anything else is counted as "other". */
static const int error_codes[] = {400, 404, 405, 413, 500, 503};
#define N_CODES (sizeof(error_codes) / sizeof(error_codes[0]))

static atomic_ullong m_requests[ADMISSION_OUTCOME_COUNT];
static atomic_ullong m_buckets[N_BUCKETS + 1]; /* non-cumulative; last is (1, +Inf) */
static atomic_ullong m_sum_ns;
static atomic_ullong m_http_errors[N_CODES + 1]; /* last is "other" */
static atomic_llong m_inflight;
static atomic_ullong m_lookup_ok, m_lookup_error, m_lookup_cached;
static atomic_llong m_cert_expiry;
static atomic_ullong m_reload_ok, m_reload_fail;

void metrics_admission(enum admission_outcome outcome, double seconds)
{
	size_t i;

	if ((int)outcome < 0 || outcome >= ADMISSION_OUTCOME_COUNT)
		return;
	atomic_fetch_add_explicit(&m_requests[outcome], 1, memory_order_relaxed);
	if (!(seconds >= 0)) /* also catches NaN */
		seconds = 0;
	for (i = 0; i < N_BUCKETS && seconds > bucket_le[i]; i++)
		;
	atomic_fetch_add_explicit(&m_buckets[i], 1, memory_order_relaxed);
	/* 2^64 ns is 584 years: a sum in nanoseconds cannot wrap in practice. */
	if (seconds > 1e6)
		seconds = 1e6;
	atomic_fetch_add_explicit(&m_sum_ns, (unsigned long long)(seconds * 1e9 + 0.5),
	                          memory_order_relaxed);
}

void metrics_http_error(int status)
{
	size_t i;

	for (i = 0; i < N_CODES && error_codes[i] != status; i++)
		;
	atomic_fetch_add_explicit(&m_http_errors[i], 1, memory_order_relaxed);
}

void metrics_inflight(int delta)
{
	atomic_fetch_add_explicit(&m_inflight, delta, memory_order_relaxed);
}

void metrics_lookup(int ok, int cached)
{
	if (!ok)
		atomic_fetch_add_explicit(&m_lookup_error, 1, memory_order_relaxed);
	else if (cached)
		atomic_fetch_add_explicit(&m_lookup_cached, 1, memory_order_relaxed);
	else
		atomic_fetch_add_explicit(&m_lookup_ok, 1, memory_order_relaxed);
}

void metrics_cert_expiry(time_t not_after)
{
	atomic_store_explicit(&m_cert_expiry, (long long)not_after, memory_order_relaxed);
}

void metrics_cert_reload(int ok)
{
	atomic_fetch_add_explicit(ok ? &m_reload_ok : &m_reload_fail, 1, memory_order_relaxed);
}

static unsigned long long rd(atomic_ullong *a)
{
	return atomic_load_explicit(a, memory_order_relaxed);
}

char *metrics_render(size_t *len)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f;
	unsigned long long cum = 0, sum_ns;
	size_t i;
	int o;

	/* open_memstream: the stream owns buf until fclose, then the caller does. */
	f = open_memstream(&buf, &size);
	if (f == NULL)
		return NULL;

	fputs("# HELP distenv_build_info Build version and git revision of distenv-webhook.\n"
	      "# TYPE distenv_build_info gauge\n",
	      f);
	fprintf(f, "distenv_build_info{version=\"%s\",revision=\"%s\"} 1\n", DISTENV_VERSION,
	        DISTENV_GIT_REV);

	fputs("# HELP distenv_admission_requests_total AdmissionReview requests by outcome.\n"
	      "# TYPE distenv_admission_requests_total counter\n",
	      f);
	for (o = 0; o < ADMISSION_OUTCOME_COUNT; o++)
		fprintf(f, "distenv_admission_requests_total{outcome=\"%s\"} %llu\n",
		        admission_outcome_name((enum admission_outcome)o), rd(&m_requests[o]));

	fputs("# HELP distenv_admission_duration_seconds Time to answer one AdmissionReview.\n"
	      "# TYPE distenv_admission_duration_seconds histogram\n",
	      f);
	/* Counts are read one by one: a scrape may straddle an observation, as in any client
	 * library. */
	sum_ns = rd(&m_sum_ns);
	for (i = 0; i < N_BUCKETS; i++) {
		cum += rd(&m_buckets[i]);
		fprintf(f, "distenv_admission_duration_seconds_bucket{le=\"%g\"} %llu\n",
		        bucket_le[i], cum);
	}
	cum += rd(&m_buckets[N_BUCKETS]);
	fprintf(f, "distenv_admission_duration_seconds_bucket{le=\"+Inf\"} %llu\n", cum);
	fprintf(f, "distenv_admission_duration_seconds_sum %.9f\n", (double)sum_ns / 1e9);
	fprintf(f, "distenv_admission_duration_seconds_count %llu\n", cum);

	fputs("# HELP distenv_http_errors_total HTTP error answers by status code.\n"
	      "# TYPE distenv_http_errors_total counter\n",
	      f);
	for (i = 0; i < N_CODES; i++)
		fprintf(f, "distenv_http_errors_total{code=\"%d\"} %llu\n", error_codes[i],
		        rd(&m_http_errors[i]));
	fprintf(f, "distenv_http_errors_total{code=\"other\"} %llu\n", rd(&m_http_errors[N_CODES]));

	fputs("# HELP distenv_inflight_requests HTTP requests being handled now.\n"
	      "# TYPE distenv_inflight_requests gauge\n",
	      f);
	fprintf(f, "distenv_inflight_requests %lld\n",
	        atomic_load_explicit(&m_inflight, memory_order_relaxed));

	fputs("# HELP distenv_lookups_total Kubernetes API workload look-ups by outcome.\n"
	      "# TYPE distenv_lookups_total counter\n",
	      f);
	fprintf(f, "distenv_lookups_total{outcome=\"ok\"} %llu\n", rd(&m_lookup_ok));
	fprintf(f, "distenv_lookups_total{outcome=\"error\"} %llu\n", rd(&m_lookup_error));
	fprintf(f, "distenv_lookups_total{outcome=\"cached\"} %llu\n", rd(&m_lookup_cached));

	fputs("# HELP distenv_certificate_expiry_timestamp_seconds NotAfter of the serving "
	      "certificate in use (Unix time).\n"
	      "# TYPE distenv_certificate_expiry_timestamp_seconds gauge\n",
	      f);
	fprintf(f, "distenv_certificate_expiry_timestamp_seconds %lld\n",
	        atomic_load_explicit(&m_cert_expiry, memory_order_relaxed));

	fputs("# HELP distenv_certificate_reloads_total Serving certificate reloads by result.\n"
	      "# TYPE distenv_certificate_reloads_total counter\n",
	      f);
	fprintf(f, "distenv_certificate_reloads_total{result=\"success\"} %llu\n",
	        rd(&m_reload_ok));
	fprintf(f, "distenv_certificate_reloads_total{result=\"failure\"} %llu\n",
	        rd(&m_reload_fail));

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
