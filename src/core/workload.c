/*
 * A kind's name and API path, by its registered row (core/registry.h), and the
 * parts the kinds' readers of the API server's answers share. Pure; the
 * readers allocate only a cJSON tree they free before returning.
 */
#include "workload.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "kind.h"
#include "util.h"
#include "dns.h"
#include "json.h"

void workload_spec_init(struct workload_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->replicas = spec->ordinals_start = spec->completions = spec->parallelism = -1;
	spec->coordinator_job = spec->coordinator_pod = -1;
}

int workload_api_path(const struct kind *kind, const char *ns, const char *name, char *out,
                      size_t outlen, char *err, size_t errlen)
{
	const struct workload_api *a = kind != NULL ? &kind->api : NULL;

	if (a == NULL || a->resource == NULL) {
		errf(err, errlen, "no workload kind to look up");
		return -1;
	}
	if (!ns || !dns_label_valid(ns)) {
		errf(err, errlen, "namespace '%.100s' is not a valid namespace name", ns ? ns : "");
		return -1;
	}
	if (!name || !dns_subdomain_valid(name)) {
		errf(err, errlen, "'%.100s' is not a valid %s name", name ? name : "", a->kind);
		return -1;
	}
	if (bounded_printf(out, outlen, "/apis/%s/namespaces/%s/%s/%s", a->api_version, ns,
	                   a->resource, name) != 0) {
		errf(err, errlen, "path too long");
		return -1;
	}
	return 0;
}

/* A whole number in [0, 2^31-1] at obj.key; absent or null leaves *out. Returns 0 or -1. */
int workload_get_count(const cJSON *obj, const char *key, const char *path, long *out, char *err,
                       size_t errlen)
{
	const cJSON *v = json_get(obj, key);

	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 ||
	    v->valuedouble > 2147483647.0 || floor(v->valuedouble) != v->valuedouble) {
		errf(err, errlen, "%s is not a whole number from 0 to 2147483647", path);
		return -1;
	}
	*out = (long)v->valuedouble;
	return 0;
}

/* An optional object member: NULL when absent or null, err when of another type. */
int workload_get_object(const cJSON *obj, const char *key, const char *path, const cJSON **out,
                        char *err, size_t errlen)
{
	const cJSON *v = json_get(obj, key);

	*out = NULL;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsObject(v)) {
		errf(err, errlen, "%s is not an object", path);
		return -1;
	}
	*out = v;
	return 0;
}

/* An optional string member copied into out (outlen bytes); err when not a string or too long. */
int workload_get_string(const cJSON *obj, const char *key, const char *path, char *out,
                        size_t outlen, char *err, size_t errlen)
{
	const cJSON *v = json_get(obj, key);

	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v) || strlen(v->valuestring) >= outlen) {
		errf(err, errlen, "%s is not a string of at most %zu characters", path, outlen - 1);
		return -1;
	}
	strcpy(out, v->valuestring);
	return 0;
}

/*
 * Parses json as one object of kind want: the whole input, nothing after it.
 * Returns the tree (caller deletes) with *spec pointing at its .spec (or NULL),
 * and the metadata.uid copied into out; NULL with err.
 */
cJSON *workload_parse_object(const char *json, size_t len, const char *want,
                             struct workload_spec *out, const cJSON **spec, char *err,
                             size_t errlen)
{
	const char *end = NULL, *uid;
	const cJSON *k;
	cJSON *j;

	j = cJSON_ParseWithLengthOpts(json, len, &end, 0);
	if (!j) {
		errf(err, errlen, "the API server's answer for the %s is not JSON", want);
		return NULL;
	}
	while (end && end < json + len &&
	       (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t'))
		end++;
	if (end && end < json + len && *end != '\0') {
		errf(err, errlen, "the API server's answer for the %s has bytes after the JSON",
		     want);
		goto fail;
	}
	if (!cJSON_IsObject(j)) {
		errf(err, errlen, "the API server's answer for the %s is not a JSON object", want);
		goto fail;
	}
	k = json_get(j, "kind");
	if (k && (!cJSON_IsString(k) || strcmp(k->valuestring, want) != 0)) {
		errf(err, errlen, "expected a %s, got kind %.60s", want,
		     cJSON_IsString(k) ? k->valuestring : "(not a string)");
		goto fail;
	}
	uid = cJSON_GetStringValue(json_get(json_get(j, "metadata"), "uid"));
	if (uid != NULL && strlen(uid) < sizeof(out->uid))
		strcpy(out->uid, uid);
	*spec = json_get(j, "spec");
	if (*spec && !cJSON_IsObject(*spec)) {
		errf(err, errlen, "%s .spec is not an object", want);
		goto fail;
	}
	return j;
fail:
	cJSON_Delete(j);
	return NULL;
}

/* completions, parallelism and completionMode of a Job spec (path names it in errors). */
int workload_read_job_spec(const cJSON *spec, const char *path, long *completions,
                           long *parallelism, int *indexed, char *err, size_t errlen)
{
	char where[160];
	const cJSON *mode;

	*parallelism = 1; /* the API default */
	snprintf(where, sizeof(where), "%s.completions", path);
	if (workload_get_count(spec, "completions", where, completions, err, errlen) < 0)
		return -1;
	snprintf(where, sizeof(where), "%s.parallelism", path);
	if (workload_get_count(spec, "parallelism", where, parallelism, err, errlen) < 0)
		return -1;
	mode = json_get(spec, "completionMode");
	if (mode && !cJSON_IsNull(mode) && !cJSON_IsString(mode)) {
		errf(err, errlen, "%s.completionMode is not a string", path);
		return -1;
	}
	*indexed = cJSON_IsString(mode) && strcmp(mode->valuestring, "Indexed") == 0;
	return 0;
}

int workload_parse(const struct kind *kind, const char *json, size_t len, struct workload_spec *out,
                   char *err, size_t errlen)
{
	const struct workload_api *a = kind != NULL ? &kind->api : NULL;

	if (a == NULL || a->parse == NULL) {
		errf(err, errlen, "no workload kind to parse");
		return -1;
	}
	return a->parse(json, len, out, err, errlen);
}

int workload_parse_service(const char *json, size_t len, struct service_info *out, char *err,
                           size_t errlen)
{
	struct workload_spec unused;
	struct service_info si;
	const cJSON *spec, *sel, *it;
	const char *ip;
	cJSON *j;

	memset(&si, 0, sizeof(si));
	workload_spec_init(&unused);
	if ((j = workload_parse_object(json, len, "Service", &unused, &spec, err, errlen)) == NULL)
		return -1;
	ip = cJSON_GetStringValue(json_get(spec, "clusterIP"));
	si.headless = ip != NULL && strcmp(ip, "None") == 0;
	si.publish_not_ready = cJSON_IsTrue(json_get(spec, "publishNotReadyAddresses"));
	sel = json_get(spec, "selector");
	cJSON_ArrayForEach(it, sel)
	{
		if (!cJSON_IsString(it) || it->string == NULL)
			continue;
		if (si.n_selector >= SERVICE_MAX_SELECTOR ||
		    strlen(it->string) >= sizeof(si.selector[0][0]) ||
		    strlen(it->valuestring) >= sizeof(si.selector[0][1])) {
			si.n_selector = -1;
			break;
		}
		strcpy(si.selector[si.n_selector][0], it->string);
		strcpy(si.selector[si.n_selector][1], it->valuestring);
		si.n_selector++;
	}
	cJSON_Delete(j);
	*out = si;
	return 0;
}
