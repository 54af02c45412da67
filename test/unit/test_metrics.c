/*
 * metrics: observations in, Prometheus text out. The metrics are process-wide,
 * so this test owns the process and checks exact values after known calls.
 */
#include <stdlib.h>
#include <string.h>

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
    {"distenv_admission_requests_total{outcome=\"skipped\"}", 1, "one skipped"},
    {"distenv_admission_requests_total{outcome=\"patched\"}", 3, "three patched"},
    {"distenv_admission_requests_total{outcome=\"unchanged\"}", 0, "zero still rendered"},
    {"distenv_admission_requests_total{outcome=\"denied\"}", 1, "one denied"},
    {"distenv_admission_requests_total{outcome=\"bad_request\"}", 1, "one bad request"},
    {"distenv_admission_duration_seconds_bucket{le=\"0.0001\"}", 2,
     "0 and exactly 0.0001 (le is inclusive)"},
    {"distenv_admission_duration_seconds_bucket{le=\"0.00025\"}", 2, "cumulative, nothing new"},
    {"distenv_admission_duration_seconds_bucket{le=\"0.001\"}", 3, "0.0007"},
    {"distenv_admission_duration_seconds_bucket{le=\"0.5\"}", 4, "0.3"},
    {"distenv_admission_duration_seconds_bucket{le=\"1\"}", 4, "1.5 is above the last bound"},
    {"distenv_admission_duration_seconds_bucket{le=\"+Inf\"}", 6, "1.5 and 2.0 only here"},
    {"distenv_admission_duration_seconds_count", 6, "count equals +Inf"},
    {"distenv_http_errors_total{code=\"404\"}", 2, "two 404s"},
    {"distenv_http_errors_total{code=\"413\"}", 1, "one 413"},
    {"distenv_http_errors_total{code=\"405\"}", 0, "known code, zero"},
    {"distenv_http_errors_total{code=\"other\"}", 1, "418 goes to other"},
    {"distenv_inflight_requests", 1, "+1 +1 -1"},
    {"distenv_lookups_total{outcome=\"ok\"}", 1, "fresh look-up"},
    {"distenv_lookups_total{outcome=\"cached\"}", 2, "cache hits"},
    {"distenv_lookups_total{outcome=\"error\"}", 1, "failed look-up (cached flag ignored)"},
    {"distenv_certificate_expiry_timestamp_seconds", 1900000000, "last expiry set wins"},
    {"distenv_certificate_reloads_total{result=\"success\"}", 2, "two good reloads"},
    {"distenv_certificate_reloads_total{result=\"failure\"}", 1, "one bad reload"},
    {"distenv_build_info{version=\"" DISTENV_VERSION "\",revision=\"" DISTENV_GIT_REV "\"}", 1,
     "build info"},
};

int main(void)
{
	size_t len = 0, i;
	char *text;
	double sum;

	text = metrics_render(&len);
	CHECK(text != NULL && len == strlen(text), "render before any observation");
	CHECK(text != NULL && sample(text, "distenv_admission_duration_seconds_count") == 0,
	      "empty histogram has count 0");
	free(text);

	metrics_admission(ADMISSION_SKIPPED, 0.0);
	metrics_admission(ADMISSION_PATCHED, 0.0001);
	metrics_admission(ADMISSION_PATCHED, 0.0007);
	metrics_admission(ADMISSION_PATCHED, 0.3);
	metrics_admission(ADMISSION_DENIED, 1.5);
	metrics_admission(ADMISSION_BAD_REQUEST, 2.0);
	metrics_admission(ADMISSION_OUTCOME_COUNT, 0.0); /* out of range: ignored entirely */
	metrics_admission((enum admission_outcome) - 1, 0.0);
	metrics_http_error(404);
	metrics_http_error(404);
	metrics_http_error(413);
	metrics_http_error(418);
	metrics_inflight(1);
	metrics_inflight(1);
	metrics_inflight(-1);
	metrics_lookup(1, 0);
	metrics_lookup(1, 1);
	metrics_lookup(1, 1);
	metrics_lookup(0, 1);
	metrics_cert_expiry(1800000000);
	metrics_cert_expiry(1900000000);
	metrics_cert_reload(1);
	metrics_cert_reload(1);
	metrics_cert_reload(0);

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
	sum = sample(text, "distenv_admission_duration_seconds_sum");
	CHECK(sum > 3.8008 - 1e-6 && sum < 3.8008 + 1e-6, "sum of durations: got %.9f", sum);

	/* Every metric family has HELP and TYPE, and every outcome is rendered. */
	CHECK(count_lines_starting(text, "# TYPE ") == 8, "eight metric families");
	CHECK(count_lines_starting(text, "# HELP ") == 8, "eight HELP lines");
	CHECK(count_lines_starting(text, "distenv_admission_requests_total{") ==
	          ADMISSION_OUTCOME_COUNT,
	      "one series per outcome");
	CHECK(count_lines_starting(text, "distenv_admission_duration_seconds_bucket{") == 14,
	      "13 bounds plus +Inf");
	CHECK(strstr(text, "# TYPE distenv_admission_duration_seconds histogram\n") != NULL,
	      "histogram type");
	free(text);
	TEST_MAIN_END("metrics");
}
