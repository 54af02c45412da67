/*
 * log: lines are captured by pointing fd 2 at a temporary file, then each one
 * is parsed back with cJSON to prove it is one valid JSON object per line.
 */
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admission.h"
#include "log.h"
#include "testutil.h"

static FILE *cap;
static int saved_stderr = -1;

static void capture_start(void)
{
	cap = tmpfile();
	fflush(stderr);
	saved_stderr = dup(STDERR_FILENO);
	dup2(fileno(cap), STDERR_FILENO);
}

/* Restores stderr and returns everything written meanwhile (caller frees). */
static char *capture_end(void)
{
	long n;
	char *buf;

	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	fseek(cap, 0, SEEK_END);
	n = ftell(cap);
	rewind(cap);
	buf = calloc(1, (size_t)n + 1);
	if (buf != NULL && fread(buf, 1, (size_t)n, cap) != (size_t)n)
		buf[0] = '\0';
	fclose(cap);
	return buf;
}

static const struct {
	const char *value;
	const char *want_raw; /* the JSON-escaped form that must appear in the line */
	const char *want_decoded;
	const char *edge;
} esc[] = {
    {"plain", "\"plain\"", "plain", "nothing to escape"},
    {"a\"b\\c", "\"a\\\"b\\\\c\"", "a\"b\\c", "quote and backslash"},
    {"l1\nl2\r\t", "\"l1\\nl2\\r\\t\"", "l1\nl2\r\t", "newline, CR, tab"},
    {"\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"", "\x01\x1f\x7f", "other control bytes"},
    {"caf\xc3\xa9 \xe2\x82\xac", "\"caf\xc3\xa9 \xe2\x82\xac\"", "caf\xc3\xa9 \xe2\x82\xac",
     "valid UTF-8 kept"},
    {"bad\xff\xc3", "\"bad\\ufffd\\ufffd\"", "bad\xef\xbf\xbd\xef\xbf\xbd",
     "invalid UTF-8 replaced"},
    {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd",
     "UTF-16 surrogate rejected"},
    {"\xc0\xaf", "\"\\ufffd\\ufffd\"", "\xef\xbf\xbd\xef\xbf\xbd", "overlong form rejected"},
    {"</script>", "\"</script>\"", "</script>", "slash needs no escape"},
};

static void *spam(void *arg)
{
	int i;
	char big[3000];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (i = 0; i < 200; i++)
		log_kv(LOG_INFO, "spam", "thread", (const char *)arg, "big", big, LOG_END);
	return NULL;
}

int main(void)
{
	char *out, *line, *save = NULL;
	size_t i;
	int n;
	cJSON *j;

	/* Escaping, one case per line. */
	capture_start();
	for (i = 0; i < sizeof(esc) / sizeof(esc[0]); i++)
		log_kv(LOG_INFO, "esc", "v", esc[i].value, LOG_END);
	out = capture_end();
	line = strtok_r(out, "\n", &save);
	for (i = 0; i < sizeof(esc) / sizeof(esc[0]); i++, line = strtok_r(NULL, "\n", &save)) {
		cJSON *v;
		CHECK(line != NULL, "line %zu missing", i);
		if (line == NULL)
			break;
		CHECK(strstr(line, esc[i].want_raw) != NULL, "%s: raw form in %s", esc[i].edge,
		      line);
		j = cJSON_Parse(line);
		CHECK(j != NULL, "%s: line is JSON: %s", esc[i].edge, line);
		v = cJSON_GetObjectItemCaseSensitive(j, "v");
		CHECK(cJSON_IsString(v) && strcmp(v->valuestring, esc[i].want_decoded) == 0,
		      "%s: decodes back", esc[i].edge);
		cJSON_Delete(j);
	}
	free(out);

	/* Shape: ts, level, event, NULL values skipped, numbers, admission line, levels. */
	log_set_level(LOG_INFO);
	capture_start();
	log_kv(LOG_INFO, "started", "listen", ":8443", "skipped", NULL, "tls", "1.2,1.3", LOG_END);
	log_kvn(LOG_WARN, "drain", "inflight", 3LL, "timeout_s", -25LL, LOG_END);
	log_kv(LOG_DEBUG, "hidden", "k", "v", LOG_END);
	{
		struct admission_result a = {.outcome = ADMISSION_PATCHED, .rank = 3};
		struct admission_result b = {.outcome = ADMISSION_BAD_REQUEST, .rank = -1};
		struct admission_result d = {
		    .outcome = ADMISSION_DENIED, .rank = 7, .reason = DENY_WORLD};
		struct log_admission fields;
		strcpy(a.uid, "u-1");
		strcpy(a.ns, "ns");
		strcpy(a.workload, "StatefulSet/w");
		log_admission(admission_log_fields(&a, &fields), 1234);
		strcpy(b.uid, "u-2");
		strcpy(b.ns, "ns");
		strcpy(b.message, "no request.uid");
		log_admission(admission_log_fields(&b, &fields), 7);
		strcpy(d.uid, "u-3");
		strcpy(d.ns, "ns");
		strcpy(d.workload, "StatefulSet/w");
		strcpy(d.message,
		       "distenv: rank 7 of StatefulSet ns/w is not below the world size 4");
		log_admission(admission_log_fields(&d, &fields), 9);
	}
	log_set_level(LOG_ERROR);
	log_kv(LOG_WARN, "hidden too", LOG_END);
	CHECK(!log_enabled(LOG_WARN) && log_enabled(LOG_ERROR), "log_enabled follows the level");
	log_set_level(LOG_INFO);
	out = capture_end();
	save = NULL;
	n = 0;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		cJSON *ts, *lvl, *ev;
		j = cJSON_Parse(line);
		CHECK(j != NULL, "JSON line: %s", line);
		if (j == NULL)
			continue;
		ts = cJSON_GetObjectItemCaseSensitive(j, "ts");
		lvl = cJSON_GetObjectItemCaseSensitive(j, "level");
		ev = cJSON_GetObjectItemCaseSensitive(j, "event");
		CHECK(cJSON_IsString(ts) && strlen(ts->valuestring) == 24 &&
		          ts->valuestring[10] == 'T' && ts->valuestring[19] == '.' &&
		          ts->valuestring[23] == 'Z',
		      "RFC 3339 UTC with ms: %s", line);
		CHECK(cJSON_IsString(lvl) && cJSON_IsString(ev), "level and event: %s", line);
		CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "msg")), "msg: %s", line);
		if (n == 0) {
			CHECK(strstr(line, "\"level\":\"info\",\"msg\":\"started\",\"event\":"
			                   "\"started\"") != NULL,
			      "msg is the event in words, before it: %s", line);
			CHECK(strstr(line, "\"skipped\"") == NULL, "NULL value skipped: %s", line);
			CHECK(strstr(line, "\"listen\":\":8443\",\"tls\":\"1.2,1.3\"}") != NULL,
			      "pairs in order: %s", line);
			CHECK_STR(lvl->valuestring, "info", "level");
		} else if (n == 1) {
			CHECK(strstr(line, "\"inflight\":3,\"timeout_s\":-25}") != NULL,
			      "numbers: %s", line);
			CHECK_STR(lvl->valuestring, "warn", "level");
			CHECK(strstr(line, "\"msg\":\"drain\"") != NULL, "msg: %s", line);
		} else if (n == 2) {
			CHECK(strstr(line,
			             "\"msg\":\"pod patched\",\"event\":\"admission\",\"uid\":"
			             "\"u-1\",\"namespace\":\"ns\","
			             "\"workload\":\"StatefulSet/w\",\"rank\":3,"
			             "\"outcome\":\"patched\",\"micros\":1234}") != NULL,
			      "admission line: %s", line);
			CHECK_STR(lvl->valuestring, "info", "a patch logs at info");
		} else if (n == 3) {
			CHECK(strstr(line, "\"rank\":null") != NULL, "rank null: %s", line);
			CHECK(strstr(line, "\"msg\":\"no request.uid\"") != NULL, "msg: %s", line);
			CHECK_STR(lvl->valuestring, "warn", "bad_request logs at warn");
		} else if (n == 4) {
			CHECK(strstr(line, "\"msg\":\"distenv: rank 7 of StatefulSet ns/w is not "
			                   "below the world size 4\"") != NULL,
			      "denial text in msg: %s", line);
			CHECK(strstr(line, "\"workload\":\"StatefulSet/w\",\"rank\":7,"
			                   "\"outcome\":\"denied\",\"reason\":\"world\"") != NULL,
			      "denial with workload, rank and reason: %s", line);
			CHECK_STR(lvl->valuestring, "warn", "a denial logs at warn");
		}
		cJSON_Delete(j);
		n++;
	}
	CHECK(n == 5, "5 lines (debug and filtered warn hidden), got %d", n);
	free(out);

	/* Concurrent writers: every line stays whole (3 kB lines, larger than PIPE_BUF). */
	{
		pthread_t th[4];
		const char *names[4] = {"a", "b", "c", "d"};
		capture_start();
		for (i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, spam, (void *)names[i]);
		for (i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		out = capture_end();
		n = 0;
		save = NULL;
		for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			j = cJSON_Parse(line);
			if (j != NULL)
				n++;
			cJSON_Delete(j);
		}
		CHECK(n == 800, "800 whole JSON lines from 4 threads, got %d", n);
		free(out);
	}
	TEST_MAIN_END("log");
}
