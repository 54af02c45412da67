/*
 * metrics: observations in, Prometheus text out. The metrics are process-wide,
 * so this test owns the process and checks exact values after known calls.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "metrics.h"
#include "testutil.h"

/* Returns the value of the sample line that starts with series + ' ', or -1. */
static double sample(const char *text, const char *series)
{
	size_t n = strlen(series);
	const char *p = text;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, series, n) == 0 && p[n] == ' ')
			return strtod(p + n + 1, NULL);
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return -1;
}

/* Metric families rendered (distenv_* and process_*). */
#define FAMILIES 25

static int count_lines_starting(const char *text, const char *prefix)
{
	int n = 0;
	const char *p = text;
	size_t plen = strlen(prefix);

	while (p != NULL && *p != '\0') {
		if (strncmp(p, prefix, plen) == 0)
			n++;
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return n;
}

static const struct {
	const char *series;
	double want;
	const char *edge;
} expect[] = {
    {"distenv_overload_rejections_total{reason=\"queue_full\"}", 2, "queue full twice"},
    {"distenv_open_connections", 1, "two opened, one closed"},
    {"distenv_connections_total", 2, "two opened"},
    {"distenv_overload_rejections_total{reason=\"body_budget\"}", 1, "budget once"},
    {"distenv_buffered_body_bytes", 4096, "8192 held, 4096 released"},
    {"distenv_overload_rejections_total{reason=\"evicted\"}", 1, "one evicted"},
    {"distenv_overload_rejections_total{reason=\"per_ip_limit\"}", 0, "zero rendered"},
    {"distenv_connection_timeouts_total{phase=\"head\"}", 2, "two head timeouts"},
    {"distenv_connection_timeouts_total{phase=\"idle\"}", 0, "zero rendered"},
    {"distenv_connection_timeouts_total{phase=\"handshake\"}", 1, "one handshake timeout"},
    {"distenv_tls_handshakes_total", 2, "two handshakes"},
    {"distenv_tls_handshake_reads_total", 10, "their reads summed"},
    {"distenv_tls_handshake_waits_total", 1, "their waits summed"},
    {"distenv_admission_requests_total{webhook=\"mutate\",outcome=\"skipped\"}", 2,
     "a quick one and one of 45 s"},
    {"distenv_admission_requests_total{webhook=\"mutate\",outcome=\"patched\"}", 3,
     "three patched"},
    {"distenv_admission_requests_total{webhook=\"mutate\",outcome=\"unchanged\"}", 0,
     "zero still rendered"},
    {"distenv_admission_requests_total{webhook=\"mutate\",outcome=\"denied\"}", 2, "two denied"},
    {"distenv_admission_requests_total{webhook=\"mutate\",outcome=\"bad_request\"}", 1,
     "one bad request"},
    {"distenv_admission_requests_total{webhook=\"validate\",outcome=\"denied\"}", 1,
     "validate kept apart"},
    {"distenv_admission_denials_total{webhook=\"mutate\",reason=\"world\"}", 1, "reason world"},
    {"distenv_admission_denials_total{webhook=\"mutate\",reason=\"other\"}", 1,
     "DENY_NONE counts as other"},
    {"distenv_admission_denials_total{webhook=\"mutate\",reason=\"owner\"}", 0, "zero rendered"},
    {"distenv_admission_denials_total{webhook=\"validate\",reason=\"workload\"}", 1,
     "validate denial"},
    {"distenv_admission_duration_seconds_bucket{webhook=\"mutate\",le=\"0.0001\"}", 2,
     "0 and exactly 0.0001 (le is inclusive)"},
    {"distenv_admission_duration_seconds_bucket{webhook=\"mutate\",le=\"0.00025\"}", 2,
     "cumulative, nothing new"},
    {"distenv_admission_duration_seconds_bucket{webhook=\"mutate\",le=\"0.001\"}", 3, "0.0007"},
    {"distenv_admission_duration_seconds_bucket{webhook=\"mutate\",le=\"0.5\"}", 4, "0.3"},
    {"distenv_admission_duration_seconds_bucket{webhook=\"mutate\",le=\"1\"}", 4, "1.5 is above 1"},
    {"distenv_admission_duration_seconds_bucket{webhook=\"mutate\",le=\"2.5\"}", 6,
     "1.5 and 2.0 within 2.5"},
    {"distenv_admission_duration_seconds_bucket{webhook=\"mutate\",le=\"10\"}", 6, "9.99 not yet"},
    {"distenv_admission_duration_seconds_bucket{webhook=\"mutate\",le=\"30\"}", 7,
     "12 s (a timeout) in the 30 s bucket"},
    {"distenv_admission_duration_seconds_bucket{webhook=\"mutate\",le=\"+Inf\"}", 8,
     "45 s only here"},
    {"distenv_admission_duration_seconds_count{webhook=\"mutate\"}", 8, "count equals +Inf"},
    {"distenv_admission_duration_seconds_count{webhook=\"validate\"}", 1, "validate histogram"},
    {"distenv_http_requests_total{path=\"/mutate\",code=\"200\"}", 2, "two answered reviews"},
    {"distenv_http_requests_total{path=\"other\",code=\"404\"}", 2, "two 404s"},
    {"distenv_http_requests_total{path=\"/mutate\",code=\"413\"}", 1, "one 413"},
    {"distenv_http_requests_total{path=\"/mutate\",code=\"405\"}", 0, "known code, zero"},
    {"distenv_http_requests_total{path=\"/metrics\",code=\"other\"}", 1, "418 goes to other"},
    {"distenv_http_requests_total{path=\"/mutate\",code=\"none\"}", 1, "closed unanswered"},
    {"distenv_http_requests_total{path=\"other\",code=\"200\"}", 1, "a bad path enum is other"},
    {"distenv_inflight_requests", 1, "+1 +1 -1"},
    {"distenv_lookups_total{outcome=\"ok\"}", 1, "fresh look-up"},
    {"distenv_lookups_total{outcome=\"cached\"}", 2, "cache hits"},
    {"distenv_lookups_total{outcome=\"error\"}", 1, "failed look-up (cached flag ignored)"},
    {"distenv_lookup_duration_seconds_bucket{le=\"0.005\"}", 1, "the fresh 4 ms round trip"},
    {"distenv_lookup_duration_seconds_bucket{le=\"+Inf\"}", 1,
     "cache hits and the cached error are not round trips"},
    {"distenv_lookup_duration_seconds_count", 1, "unlabelled count"},
    {"distenv_certificate_expiry_timestamp_seconds", 1900000000, "last expiry set wins"},
    {"distenv_certificate_reloads_total{result=\"success\"}", 2, "two good reloads"},
    {"distenv_certificate_reloads_total{result=\"failure\"}", 1, "one bad reload"},
    {"distenv_build_info{version=\"" DISTENV_VERSION "\",revision=\"" DISTENV_GIT_REV "\"}", 1,
     "build info"},
    {"distenv_cluster_domain_info{domain=\"ml.example\",source=\"resolv.conf\"}", 1,
     "the cluster domain and its source, the last set"},
};

int main(void)
{
	size_t len = 0, i;
	char *text;
	double sum;

	text = metrics_render(&len);
	CHECK(text != NULL && len == strlen(text), "render before any observation");
	CHECK(text != NULL &&
	          sample(text, "distenv_admission_duration_seconds_count{webhook=\"mutate\"}") == 0,
	      "empty histogram has count 0");
	CHECK(text != NULL && strstr(text, "distenv_cluster_domain_info") == NULL,
	      "no cluster domain series before serve said which");
	free(text);
	metrics_cluster_domain("cluster.local", "default");
	metrics_cluster_domain("ml.example", "resolv.conf");

	metrics_admission(METRICS_MUTATE, ADMISSION_SKIPPED, DENY_NONE, 0.0);
	metrics_admission(METRICS_MUTATE, ADMISSION_PATCHED, DENY_NONE, 0.0001);
	metrics_admission(METRICS_MUTATE, ADMISSION_PATCHED, DENY_WORLD, 0.0007); /* not denied */
	metrics_admission(METRICS_MUTATE, ADMISSION_PATCHED, DENY_NONE, 0.3);
	metrics_admission(METRICS_MUTATE, ADMISSION_DENIED, DENY_WORLD, 1.5);
	metrics_admission(METRICS_MUTATE, ADMISSION_BAD_REQUEST, DENY_NONE, 2.0);
	metrics_admission(METRICS_MUTATE, ADMISSION_DENIED, DENY_NONE, 12.0);
	metrics_admission(METRICS_MUTATE, ADMISSION_SKIPPED, DENY_NONE, 45.0);
	metrics_admission(METRICS_VALIDATE, ADMISSION_DENIED, DENY_WORKLOAD, 0.001);
	metrics_admission(METRICS_MUTATE, ADMISSION_OUTCOME_COUNT, DENY_NONE, 0.0); /* ignored */
	metrics_admission(METRICS_MUTATE, (enum admission_outcome) - 1, DENY_NONE, 0.0);
	metrics_admission(METRICS_WEBHOOK_COUNT, ADMISSION_PATCHED, DENY_NONE, 0.0);
	metrics_http_request(METRICS_PATH_MUTATE, 200);
	metrics_http_request(METRICS_PATH_MUTATE, 200);
	metrics_http_request(METRICS_PATH_OTHER, 404);
	metrics_http_request(METRICS_PATH_OTHER, 404);
	metrics_http_request(METRICS_PATH_MUTATE, 413);
	metrics_http_request(METRICS_PATH_METRICS, 418);
	metrics_http_request(METRICS_PATH_MUTATE, 0);
	metrics_http_request(METRICS_PATH_COUNT, 200);
	metrics_inflight(1);
	metrics_inflight(1);
	metrics_inflight(-1);
	metrics_lookup(1, 0, 0.004);
	metrics_lookup(1, 1, 0);
	metrics_lookup(1, 1, 0);
	metrics_lookup(0, 1, 0);
	metrics_cert_expiry(1800000000);
	metrics_cert_expiry(1900000000);
	metrics_cert_reload(1);
	metrics_cert_reload(1);
	metrics_cert_reload(0);
	metrics_overload(METRICS_OVERLOAD_QUEUE_FULL);
	metrics_overload(METRICS_OVERLOAD_QUEUE_FULL);
	metrics_overload(METRICS_OVERLOAD_COUNT); /* ignored */
	metrics_connections(1);
	metrics_connections(1);
	metrics_connections(-1);
	metrics_overload(METRICS_OVERLOAD_BODY_BUDGET);
	metrics_buffered_bytes(8192);
	metrics_buffered_bytes(-4096);
	metrics_overload(METRICS_OVERLOAD_EVICTED);
	metrics_conn_timeout(METRICS_TIMEOUT_HEAD);
	metrics_conn_timeout(METRICS_TIMEOUT_HEAD);
	metrics_conn_timeout(METRICS_TIMEOUT_HANDSHAKE);
	metrics_tls_handshake(7, 1);
	metrics_tls_handshake(3, 0);
	metrics_conn_timeout(METRICS_TIMEOUT_COUNT); /* ignored */

	text = metrics_render(&len);
	CHECK(text != NULL, "render");
	if (text == NULL)
		TEST_MAIN_END("metrics");
	CHECK(len == strlen(text) && len > 0 && text[len - 1] == '\n', "ends with a newline");

	for (i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		double got = sample(text, expect[i].series);
		CHECK(got == expect[i].want, "%s (%s): got %g want %g", expect[i].series,
		      expect[i].edge, got, expect[i].want);
	}
	sum = sample(text, "distenv_admission_duration_seconds_sum{webhook=\"mutate\"}");
	CHECK(sum > 60.8008 - 1e-6 && sum < 60.8008 + 1e-6, "sum of durations: got %.9f", sum);
	sum = sample(text, "distenv_lookup_duration_seconds_sum");
	CHECK(sum > 0.004 - 1e-9 && sum < 0.004 + 1e-9, "look-up sum: got %.9f", sum);

	/* Every metric family has HELP and TYPE; every label value is rendered. */
	CHECK(count_lines_starting(text, "# TYPE ") == FAMILIES, "%d metric families, got %d",
	      FAMILIES, count_lines_starting(text, "# TYPE "));
	CHECK(count_lines_starting(text, "# HELP ") == FAMILIES, "%d HELP lines", FAMILIES);
	CHECK(count_lines_starting(text, "distenv_cluster_domain_info{") == 1,
	      "one cluster domain series: a second call replaces the first");
	CHECK(count_lines_starting(text, "distenv_overload_rejections_total{") ==
	          METRICS_OVERLOAD_COUNT,
	      "one series per overload reason");
	CHECK(count_lines_starting(text, "distenv_admission_requests_total{") ==
	          2 * ADMISSION_OUTCOME_COUNT,
	      "one series per webhook and outcome");
	CHECK(count_lines_starting(text, "distenv_admission_denials_total{") ==
	          2 * (DENY_REASON_COUNT - 1),
	      "one series per webhook and reason");
	CHECK(count_lines_starting(text, "distenv_http_requests_total{") == 6 * 10,
	      "6 paths x (8 codes, other, none)");
	CHECK(count_lines_starting(
	          text, "distenv_admission_duration_seconds_bucket{webhook=\"mutate\"") == 18,
	      "17 bounds plus +Inf");
	CHECK(strstr(text, "# TYPE distenv_admission_duration_seconds histogram\n") != NULL,
	      "histogram type");
	/* The process series, read from /proc. */
	CHECK(sample(text, "process_cpu_seconds_total") >= 0, "process_cpu_seconds_total");
	CHECK(sample(text, "process_resident_memory_bytes") > 1024 * 1024, "RSS above 1 MiB");
	CHECK(sample(text, "process_virtual_memory_bytes") >=
	          sample(text, "process_resident_memory_bytes"),
	      "virtual >= resident");
	CHECK(sample(text, "process_open_fds") >= 3, "stdin, stdout, stderr at least");
	CHECK(sample(text, "process_max_fds") >= sample(text, "process_open_fds"), "max fds");
	{
		double st = sample(text, "process_start_time_seconds");
		time_t now = time(NULL);
		CHECK(st > (double)now - 600 && st <= (double)now + 1,
		      "start time within the last 10 minutes: %.2f vs %lld", st, (long long)now);
	}
	free(text);
	TEST_MAIN_END("metrics");
}
