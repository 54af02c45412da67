/*
 * The admission core's cost as the world size W grows: one Indexed Job pod
 * with the annotation distenv.dev/world-size=W and every framework (TF_CONFIG
 * lists all W hosts up to Linux's exec limit, about 3,000 here, and is left out
 * past it) through admission_handle, as /mutate calls it.
 *
 *   core_cost [--iters N] W...        wall time per admission (ns) for each W
 *   core_cost --callgrind W           one warm call, then one call counted:
 *       valgrind --tool=callgrind --collect-atstart=no ./core_cost --callgrind W
 *   leaves the instruction total of exactly that one admission in its output file.
 * An argument @FILE sends the AdmissionReview in FILE instead of a generated
 * Job pod (the bench bodies: the 4 KB and 64 KB pods).
 *
 * Owns everything it allocates; exits non-zero when an admission is not patched.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <valgrind/callgrind.h>

#include "admission.h"
/* A tree whose core is handed its plug-ins (BENCH_SRC may name an older one). */
#if __has_include("registry.h")
#include "frameworks.h"
#include "kinds.h"
#define REGISTER() registry_set(kind_table, kind_count, framework_table, framework_count)
#else
#define REGISTER() ((void)0)
#endif

/* A compact Indexed Job pod as kube-apiserver sends it; %ld are the index (x3) and W. */
static const char review_fmt[] =
    "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\",\"request\":{"
    "\"uid\":\"7e3b9d2a-0002-4f1c-8b2e-000000000001\","
    "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
    "\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},"
    "\"namespace\":\"ml\",\"operation\":\"CREATE\","
    "\"userInfo\":{\"username\":\"system:serviceaccount:kube-system:job-controller\"},"
    "\"object\":{\"metadata\":{\"generateName\":\"train-%ld-\",\"namespace\":\"ml\","
    "\"labels\":{\"batch.kubernetes.io/job-completion-index\":\"%ld\","
    "\"batch.kubernetes.io/job-name\":\"train\",\"distenv.dev/inject\":\"true\"},"
    "\"annotations\":{\"batch.kubernetes.io/job-completion-index\":\"%ld\","
    "\"distenv.dev/world-size\":\"%ld\"},"
    "\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"train\","
    "\"uid\":\"7d0f5a3c-2b9e-4c61-9f7a-1e2d3c4b5a60\",\"controller\":true,"
    "\"blockOwnerDeletion\":true}]},"
    "\"spec\":{\"containers\":[{\"name\":\"trainer\",\"image\":\"trainer:2.5.1\","
    "\"command\":[\"python3\",\"/opt/train/train.py\"],"
    "\"env\":[{\"name\":\"JOB_COMPLETION_INDEX\",\"valueFrom\":{\"fieldRef\":{"
    "\"apiVersion\":\"v1\",\"fieldPath\":"
    "\"metadata.annotations['batch.kubernetes.io/job-completion-index']\"}}}],"
    "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"8\"}},"
    "\"terminationMessagePath\":\"/dev/termination-log\",\"imagePullPolicy\":\"IfNotPresent\"}],"
    "\"restartPolicy\":\"Never\",\"hostname\":\"train-%ld\",\"subdomain\":\"train\","
    "\"schedulerName\":\"default-scheduler\"},\"status\":{}},"
    "\"oldObject\":null,\"dryRun\":false}}";

/* Returns the malloc'd review for W (rank W/2); caller frees. */
static char *make_review(long w, size_t *len)
{
	long idx = w / 2;
	int n = snprintf(NULL, 0, review_fmt, idx, idx, idx, w, idx);
	char *buf;

	if (n < 0 || (buf = malloc((size_t)n + 1)) == NULL)
		return NULL;
	snprintf(buf, (size_t)n + 1, review_fmt, idx, idx, idx, w, idx);
	*len = (size_t)n;
	return buf;
}

static int admit(const char *body, size_t len, const struct config *cfg, size_t *resp_len)
{
	struct admission_result res;
	int ok;

	if (admission_handle(body, len, cfg, NULL, &res) != 0)
		return -1;
	ok = res.outcome == ADMISSION_PATCHED;
	if (!ok)
		fprintf(stderr, "core_cost: not patched (%s): %s\n",
			verdict_outcome_name(res.outcome), res.message);
	*resp_len = res.body_len;
	admission_result_free(&res);
	return ok ? 0 : -1;
}

/* Returns FILE's contents, malloc'd (caller frees), or NULL. */
static char *read_body(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0 || (buf = malloc((size_t)n + 1)) == NULL ||
	    fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "core_cost: cannot read %s\n", path);
		free(buf);
		buf = NULL;
	} else {
		buf[n] = '\0';
		*len = (size_t)n;
	}
	if (f != NULL)
		fclose(f);
	return buf;
}

static int parse_w(const char *s, long *w)
{
	char *end;

	errno = 0;
	*w = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || *w < 1 || *w > 1048576) {
		fprintf(stderr, "core_cost: bad world size '%s'\n", s);
		return -1;
	}
	return 0;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct config cfg;
	long w, iters = 0, i;
	int a = 1, callgrind = 0, rc = 1;
	size_t len, resp_len = 0;
	char *body;

	REGISTER();
	config_defaults(&cfg);
	/*
	 * All three frameworks as the config's default, not by annotation: past the
	 * exec limit (about 3,000 ranks here) TF_CONFIG is then left out, as for a
	 * pod that did not ask for it, instead of the pod being denied.
	 */
	cfg.default_frameworks = FW_PYTORCH | FW_TENSORFLOW | FW_JAX;
	cfg.max_world_size = 1048576;
	if (a < argc && strcmp(argv[a], "--callgrind") == 0) {
		callgrind = 1;
		a++;
	} else if (a + 1 < argc && strcmp(argv[a], "--iters") == 0) {
		iters = strtol(argv[a + 1], NULL, 10);
		a += 2;
	}
	if (a >= argc) {
		fprintf(stderr, "usage: core_cost [--callgrind | --iters N] W...\n");
		return 2;
	}
	if (!callgrind)
		printf("%8s %10s %12s %14s %12s\n", "W", "body_B", "response_B", "ns/admission",
		       "ns/rank");
	for (; a < argc; a++) {
		if (argv[a][0] == '@') {
			w = 1;
			body = read_body(argv[a] + 1, &len);
		} else {
			if (parse_w(argv[a], &w) != 0)
				return 2;
			body = make_review(w, &len);
		}
		if (body == NULL)
			return 1;
		/* Warm: the first call pays for malloc's arenas and the page faults. */
		if (admit(body, len, &cfg, &resp_len) != 0)
			goto out;
		if (callgrind) {
			CALLGRIND_TOGGLE_COLLECT;
			i = admit(body, len, &cfg, &resp_len);
			CALLGRIND_TOGGLE_COLLECT;
			if (i != 0)
				goto out;
			printf("%s body=%zu response=%zu\n", argv[a], len, resp_len);
		} else {
			long n = iters > 0 ? iters : (w >= 4096 || len > 32768 ? 20 : w >= 512 ? 200 : 2000);
			double t0 = now_ns(), per;
			for (i = 0; i < n; i++)
				if (admit(body, len, &cfg, &resp_len) != 0)
					goto out;
			per = (now_ns() - t0) / (double)n;
			printf("%8s %10zu %12zu %14.0f %12.1f\n",
			       argv[a][0] == '@' ? "file" : argv[a], len, resp_len, per,
			       per / (double)w);
		}
		free(body);
		body = NULL;
	}
	rc = 0;
out:
	free(body);
	return rc;
}
