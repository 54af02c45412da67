/*
 * The annotation table and its checks. Pure: strings in, messages out.
 */
#include "annotation.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "util.h"
#include "verdict.h"
#include "dns.h"

const struct annotation_def annotation_defs[] = {
    {ANNOTATION_PREFIX "world-size", ANNOT_COUNT, 1, 0, "a world size",
     "number of pods in the job (1 ... limits.maxWorldSize); for a JobSet or LeaderWorkerSet it "
     "must equal all its pods or the group size, else denied",
     ".spec.replicas / .spec.completions from the API"},
    {ANNOTATION_PREFIX "port", ANNOT_COUNT, 1, 65535, "a port number", "rendezvous port",
     "config defaults.port, 29500"},
    {ANNOTATION_PREFIX "nproc-per-node", ANNOT_NPROC, 1, 4096, "a whole number",
     "processes per pod: 1 ... 4096, or torchrun's auto, gpu, cpu",
     "the largest GPU limit among the target containers (gpuResources), else 1"},
    {ANNOTATION_PREFIX "containers", ANNOT_NAMES, 0, 0, "a comma list of container names",
     "comma list of containers to inject into; init containers only when named",
     "every non-init container"},
    {ANNOTATION_PREFIX "frameworks", ANNOT_FRAMEWORKS, 0, 0,
     "a comma list of pytorch, tensorflow, jax, xgboost, paddle, tpu",
     "comma list of pytorch, tensorflow, jax, xgboost, paddle, tpu",
     "config defaults.frameworks, pytorch,tensorflow (plus tpu for pods that request "
     "google.com/tpu)"},
    {ANNOTATION_PREFIX "elastic", ANNOT_ELASTIC, 1, 0, "MIN:MAX",
     "MIN:MAX nodes for torchrun elastic (c10d)", "off"},
    {ANNOTATION_PREFIX "max-restarts", ANNOT_COUNT, 0, 1000000, "a restart count",
     "torchrun --max-restarts (elastic only): 0 ... 1000000", "unset"},
    {ANNOTATION_PREFIX "service", ANNOT_DNS_LABEL, 0, 0, "a valid Service name",
     "headless Service for Job pods without spec.subdomain", "none"},
    {ANNOTATION_PREFIX "wait-for-master", ANNOT_DURATION, 1, 86400, "a duration",
     "add a first init container that waits up to this long (30s, 5m, 1h; at most 24h) for "
     "MASTER_ADDR to resolve and, on ranks but 0, MASTER_PORT to accept connections",
     "off"},
    {ANNOTATION_PREFIX "injected", ANNOT_OUTPUT, 0, 0, "", "set by distenv: what it injected", "-"},
    {ANNOTATION_PREFIX "warnings", ANNOT_OUTPUT, 0, 0, "",
     "set by distenv: the warnings of its answer, one a line", "-"},
};
const size_t annotation_ndefs = sizeof(annotation_defs) / sizeof(annotation_defs[0]);

const struct annotation_def *annotation_find(const char *name)
{
	size_t i;

	for (i = 0; i < annotation_ndefs; i++)
		if (strcmp(annotation_defs[i].name, name) == 0)
			return &annotation_defs[i];
	return NULL;
}

/* The edit distance of a and b (insert, delete, replace, swap), up to 64 characters each. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, d[65][65];

	if (la > 64 || lb > 64)
		return (size_t)-1;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

const char *annotation_nearest(const char *name)
{
	const char *best = NULL;
	size_t i, dist, best_dist = 3; /* two edits at most: a typo, not another word */

	for (i = 0; i < annotation_ndefs; i++) {
		dist = edit_distance(name, annotation_defs[i].name);
		if (dist < best_dist) {
			best_dist = dist;
			best = annotation_defs[i].name;
		}
	}
	return best;
}

int annotation_duration(const char *v, long max, long *seconds)
{
	long total = 0, n;
	const char *p = v;
	int parts = 0;

	if (v == NULL || *v == '\0' || strlen(v) > 32)
		return -1;
	while (*p) {
		long unit;
		if (*p < '0' || *p > '9')
			return -1;
		for (n = 0; *p >= '0' && *p <= '9'; p++) {
			n = n * 10 + (*p - '0');
			if (n > max)
				return -1;
		}
		if (*p == 'h')
			unit = 3600;
		else if (*p == 'm')
			unit = 60;
		else if (*p == 's')
			unit = 1;
		else
			return -1;
		p++;
		total += n * unit;
		if (total > max || ++parts > 3)
			return -1;
	}
	if (total < 1)
		return -1;
	*seconds = total;
	return 0;
}

int annotation_range(const char *v, long max, long *lo, long *hi)
{
	char buf[48];
	char *colon;

	if (strlen(v) >= sizeof(buf))
		return -1;
	strcpy(buf, v);
	colon = strchr(buf, ':');
	if (colon == NULL)
		return -1;
	*colon = '\0';
	if (parse_long(buf, 1, max, lo) != 0 || parse_long(colon + 1, 1, max, hi) != 0)
		return -1;
	return 0;
}

/* 1 when every comma-separated item of v is non-empty after trimming. */
static int names_ok(const char *v)
{
	const char *p = v;

	for (;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p), i, blank = 1;
		for (i = 0; i < n; i++)
			if (p[i] != ' ' && p[i] != '\t')
				blank = 0;
		if (blank)
			return 0;
		if (comma == NULL)
			return 1;
		p = comma + 1;
	}
}

int annotation_check(const struct annotation_def *d, const char *v, const struct config *cfg,
                     long *out, char *err, size_t errlen)
{
	long max = d->max > 0 ? d->max : cfg->max_world_size, n, lo, hi;
	unsigned mask;

	switch (d->type) {
	case ANNOT_COUNT:
		if (parse_long(v, d->min, max, &n) == 0) {
			if (out)
				*out = n;
			return 0;
		}
		snprintf(err, errlen,
		         "distenv: annotation %s: \"%.64s\" is not %s between %ld and %ld", d->name,
		         v, d->what, d->min, max);
		return -1;
	case ANNOT_FRAMEWORKS:
		if (config_parse_frameworks(v, &mask) == 0)
			return 0;
		snprintf(err, errlen, "distenv: annotation %s: \"%.128s\" is not %s", d->name, v,
		         d->what);
		return -1;
	case ANNOT_ELASTIC:
		if (annotation_range(v, max, &lo, &hi) != 0) {
			snprintf(
			    err, errlen,
			    "distenv: annotation %s: \"%.64s\" is not MIN:MAX with whole numbers "
			    "between 1 and %ld",
			    d->name, v, max);
			return -1;
		}
		if (lo > hi) {
			snprintf(err, errlen,
			         "distenv: annotation %s: \"%.64s\" has MIN greater than MAX",
			         d->name, v);
			return -1;
		}
		return 0;
	case ANNOT_NPROC:
		if (strcmp(v, "auto") == 0 || strcmp(v, "gpu") == 0 || strcmp(v, "cpu") == 0 ||
		    parse_long(v, d->min, d->max, &n) == 0)
			return 0;
		snprintf(
		    err, errlen,
		    "distenv: annotation %s: \"%.32s\" is not a whole number between %ld and %ld "
		    "(or auto, gpu, cpu)",
		    d->name, v, d->min, d->max);
		return -1;
	case ANNOT_NAMES:
		if (names_ok(v))
			return 0;
		snprintf(err, errlen,
		         "distenv: annotation %s: \"%.128s\" has an empty container name", d->name,
		         v);
		return -1;
	case ANNOT_DNS_LABEL:
		if (dns_label_valid(v))
			return 0;
		snprintf(err, errlen, "distenv: annotation %s: \"%.64s\" is not %s", d->name, v,
		         d->what);
		return -1;
	case ANNOT_DURATION:
		if (annotation_duration(v, d->max, &n) == 0) {
			if (out)
				*out = n;
			return 0;
		}
		snprintf(
		    err, errlen,
		    "distenv: annotation %s: \"%.32s\" is not a duration such as 30s, 5m or 1h "
		    "(at most %ldh)",
		    d->name, v, d->max / 3600);
		return -1;
	case ANNOT_OUTPUT:
		return 0;
	}
	return 0;
}

/* Appends s to buf (of len bytes) after sep when buf is not empty. */
static void join(char *buf, size_t len, const char *sep, const char *s)
{
	size_t used = strlen(buf);

	if (used + 1 < len)
		snprintf(buf + used, len - used, "%s%s", used ? sep : "", s);
}

/* As join, but s goes in whole or not at all (a list item is never cut). */
static void join_whole(char *buf, size_t len, const char *sep, const char *s)
{
	size_t used = strlen(buf);

	if (used + (used ? strlen(sep) : 0) + strlen(s) < len)
		join(buf, len, sep, s);
}

int annotation_check_all(const cJSON *anns, const struct config *cfg, char *err, size_t errlen,
                         char *unknown, size_t unknownlen, int *n_unknown)
{
	const size_t plen = strlen(ANNOTATION_PREFIX);
	const cJSON *a;
	int bad = 0;

	err[0] = '\0';
	unknown[0] = '\0';
	*n_unknown = 0;
	cJSON_ArrayForEach(a, anns)
	{
		const struct annotation_def *d;
		char one[512];

		if (a->string == NULL || strncmp(a->string, ANNOTATION_PREFIX, plen) != 0)
			continue;
		d = annotation_find(a->string);
		if (d == NULL) {
			const char *near = annotation_nearest(a->string);
			if (strcmp(a->string, ANNOTATION_PREFIX "inject") == 0)
				/*
				 * the opt-in is a label: as an annotation it opts nothing in,
				 * and only opted-in (labelled) pods and templates are read here
				 */
				snprintf(one, sizeof(one), "%s (only the label opts in)",
				         a->string);
			else if (near != NULL)
				snprintf(one, sizeof(one), "%.200s (did you mean %s?)", a->string,
				         near + strlen(ANNOTATION_PREFIX));
			else
				snprintf(one, sizeof(one), "%.250s", a->string);
			join_whole(unknown, unknownlen, "\n", one);
			(*n_unknown)++;
			continue;
		}
		if (!cJSON_IsString(a)) {
			snprintf(one, sizeof(one), "annotation %s is not a string", d->name);
		} else if (annotation_check(d, a->valuestring, cfg, NULL, one, sizeof(one)) == 0) {
			continue;
		}
		/* joined messages keep one "distenv: " at the front */
		join(err, errlen, "; ", verdict_unprefixed(one));
		bad++;
	}
	return bad;
}
