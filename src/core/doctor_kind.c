/*
 * What doctor reads differently for each workload kind: KIND/NAME as kubectl
 * writes it, the selector that lists the pods, the Service their names live
 * under, the pod template, the world the workload asks for, where a pod's
 * rank and group are written, and a missing rank's pod name. Pure.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "annotation.h"
#include "doctor_int.h"
#include "json.h"
#include "util.h"

const cJSON *doctor_template(enum workload_kind kind, const cJSON *w)
{
	const cJSON *spec = json_get(w, "spec");

	switch (kind) {
	case WORKLOAD_STATEFULSET:
	case WORKLOAD_JOB:
		return json_get(spec, "template");
	case WORKLOAD_JOBSET: {
		const cJSON *rj = json_get(spec, "replicatedJobs");
		return json_get(
		    json_get(json_get(cJSON_IsArray(rj) ? rj->child : NULL, "template"), "spec"),
		    "template");
	}
	case WORKLOAD_LWS:
		return json_get(json_get(spec, "leaderWorkerTemplate"), "workerTemplate");
	default:
		return NULL;
	}
}

long doctor_world(enum workload_kind kind, const cJSON *w, long *groups)
{
	const cJSON *spec = json_get(w, "spec"), *tpl = doctor_template(kind, w), *rj;
	const char *ann =
	    json_map_str(json_get(json_get(tpl, "metadata"), "annotations"), ANN_WORLD_SIZE);
	long n = 0;

	*groups = 1;
	if (kind == WORKLOAD_LWS)
		*groups = json_long(spec, "replicas", 1L << 20, 1);
	if (ann != NULL)
		return str_long(ann, -1);
	switch (kind) {
	case WORKLOAD_STATEFULSET:
		return json_long(spec, "replicas", 1L << 20, 1);
	case WORKLOAD_JOB:
		return json_long(spec, "completions", 1L << 20, -1);
	case WORKLOAD_JOBSET:
		cJSON_ArrayForEach(rj, json_get(spec, "replicatedJobs"))
		{
			const cJSON *js = json_get(json_get(rj, "template"), "spec");
			long per = json_long(js, "completions", 1L << 20,
			                     json_long(js, "parallelism", 1L << 20, 1));
			n += json_long(rj, "replicas", 1L << 20, 1) * per;
		}
		return n;
	case WORKLOAD_LWS:
		return json_long(json_get(spec, "leaderWorkerTemplate"), "size", 1L << 20, 1);
	default:
		return -1;
	}
}

long doctor_start(enum workload_kind kind, const cJSON *w)
{
	return kind == WORKLOAD_STATEFULSET
	           ? json_long(json_get(json_get(w, "spec"), "ordinals"), "start", 1L << 30, 0)
	           : 0;
}

void doctor_pod_place(enum workload_kind kind, long start, const cJSON *labels, const cJSON *anns,
                      struct pinfo *p)
{
	const char *s;

	if (kind == WORKLOAD_LWS) {
		p->group =
		    str_long(json_map_str(labels, "leaderworkerset.sigs.k8s.io/group-index"), -1);
		if (p->rank < 0)
			p->rank = str_long(
			    json_map_str(labels, "leaderworkerset.sigs.k8s.io/worker-index"), -1);
	} else {
		p->group = 0;
	}
	if (p->rank >= 0)
		return;
	if (kind == WORKLOAD_STATEFULSET &&
	    (s = json_map_str(labels, "apps.kubernetes.io/pod-index")) != NULL &&
	    str_long(s, -1) >= start)
		p->rank = str_long(s, -1) - start;
	else if (kind == WORKLOAD_JOB)
		p->rank =
		    str_long(json_map_str(anns, "batch.kubernetes.io/job-completion-index"), -1);
}

int doctor_events_by_prefix(enum workload_kind kind)
{
	return kind == WORKLOAD_JOBSET;
}

int doctor_worlds_per_group(enum workload_kind kind)
{
	return kind == WORKLOAD_LWS;
}

void doctor_rank_name(enum workload_kind kind, const char *name, long start, long g, long r,
                      char *out, size_t len)
{
	if (kind == WORKLOAD_STATEFULSET)
		snprintf(out, len, "%s-%ld", name, start + r);
	else if (kind == WORKLOAD_JOB)
		snprintf(out, len, "%s-%ld-…", name, r);
	else if (kind == WORKLOAD_LWS)
		snprintf(out, len, r == 0 ? "%s-%ld" : "%s-%ld-%ld", name, g, r);
	else
		snprintf(out, len, "rank %ld", r);
}

int doctor_parse_target(const char *arg, enum workload_kind *kind, char *name, size_t namelen,
                        char *err, size_t errlen)
{
	static const struct {
		const char *word;
		enum workload_kind kind;
	} words[] = {
	    {"sts", WORKLOAD_STATEFULSET},
	    {"statefulset", WORKLOAD_STATEFULSET},
	    {"statefulsets", WORKLOAD_STATEFULSET},
	    {"statefulset.apps", WORKLOAD_STATEFULSET},
	    {"statefulsets.apps", WORKLOAD_STATEFULSET},
	    {"job", WORKLOAD_JOB},
	    {"jobs", WORKLOAD_JOB},
	    {"job.batch", WORKLOAD_JOB},
	    {"jobs.batch", WORKLOAD_JOB},
	    {"jobset", WORKLOAD_JOBSET},
	    {"jobsets", WORKLOAD_JOBSET},
	    {"js", WORKLOAD_JOBSET},
	    {"jobset.jobset.x-k8s.io", WORKLOAD_JOBSET},
	    {"jobsets.jobset.x-k8s.io", WORKLOAD_JOBSET},
	    {"lws", WORKLOAD_LWS},
	    {"leaderworkerset", WORKLOAD_LWS},
	    {"leaderworkersets", WORKLOAD_LWS},
	    {"leaderworkerset.leaderworkerset.x-k8s.io", WORKLOAD_LWS},
	    {"leaderworkersets.leaderworkerset.x-k8s.io", WORKLOAD_LWS},
	};
	const char *slash = arg != NULL ? strchr(arg, '/') : NULL;
	size_t i, klen;

	if (slash == NULL || slash == arg || slash[1] == '\0' || strchr(slash + 1, '/') != NULL) {
		errf(err, errlen,
		     "'%.100s' is not KIND/NAME (sts/ddp, job/train, jobset/js, lws/vllm)",
		     arg ? arg : "");
		return -1;
	}
	klen = (size_t)(slash - arg);
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (strlen(words[i].word) != klen || strncasecmp(arg, words[i].word, klen) != 0)
			continue;
		if (bounded_printf(name, namelen, "%s", slash + 1) != 0) {
			errf(err, errlen, "name too long");
			return -1;
		}
		*kind = words[i].kind;
		return 0;
	}
	errf(err, errlen,
	     "'%.*s' is not a kind distenv knows: sts (statefulset), job, jobset, lws "
	     "(leaderworkerset)",
	     (int)(klen > 60 ? 60 : klen), arg);
	return -1;
}

int doctor_pod_selector(enum workload_kind kind, const cJSON *workload, const char *name, char *out,
                        size_t outlen, char *err, size_t errlen)
{
	const cJSON *ml, *e;
	size_t o = 0;

	switch (kind) {
	case WORKLOAD_STATEFULSET:
		ml = json_get(json_get(json_get(workload, "spec"), "selector"), "matchLabels");
		if (ml == NULL || ml->child == NULL) {
			errf(err, errlen,
			     "the StatefulSet's selector has no matchLabels: doctor lists pods by "
			     "matchLabels only");
			return -1;
		}
		out[0] = '\0';
		cJSON_ArrayForEach(e, ml)
		{
			const char *v = cJSON_GetStringValue(e);
			int n = snprintf(out + o, outlen - o, "%s%s=%s", o ? "," : "", e->string,
			                 v ? v : "");
			if (n < 0 || (size_t)n >= outlen - o) {
				errf(err, errlen, "the StatefulSet's selector is too long");
				return -1;
			}
			o += (size_t)n;
		}
		return 0;
	case WORKLOAD_JOB:
		return bounded_printf(out, outlen, "batch.kubernetes.io/job-name=%s", name) == 0
		           ? 0
		           : (errf(err, errlen, "name too long"), -1);
	case WORKLOAD_JOBSET:
		return bounded_printf(out, outlen, "jobset.sigs.k8s.io/jobset-name=%s", name) == 0
		           ? 0
		           : (errf(err, errlen, "name too long"), -1);
	case WORKLOAD_LWS:
		return bounded_printf(out, outlen, "leaderworkerset.sigs.k8s.io/name=%s", name) == 0
		           ? 0
		           : (errf(err, errlen, "name too long"), -1);
	default:
		errf(err, errlen, "not a workload kind");
		return -1;
	}
}

void doctor_service_name(enum workload_kind kind, const cJSON *workload, const cJSON *pods,
                         const char *name, char *out, size_t outlen)
{
	const cJSON *pod, *spec = json_get(workload, "spec");
	const char *s = NULL;

	cJSON_ArrayForEach(pod, json_get(pods, "items"))
	{
		if ((s = json_str(json_get(pod, "spec"), "subdomain")) != NULL && s[0])
			break;
		s = NULL;
	}
	if (s == NULL && kind == WORKLOAD_STATEFULSET)
		s = json_str(spec, "serviceName");
	if (s == NULL && kind == WORKLOAD_JOB) {
		const cJSON *tpl = json_get(spec, "template");
		s = json_str(json_get(tpl, "spec"), "subdomain");
		if (s == NULL)
			s = json_map_str(json_get(json_get(tpl, "metadata"), "annotations"),
			                 ANN_SERVICE);
	}
	if (s == NULL && kind == WORKLOAD_JOBSET)
		s = json_str(json_get(spec, "network"), "subdomain");
	if (s == NULL && (kind == WORKLOAD_JOBSET || kind == WORKLOAD_LWS))
		s = name;
	snprintf(out, outlen, "%s", s != NULL ? s : "");
}
