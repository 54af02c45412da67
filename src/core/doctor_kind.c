/*
 * What doctor reads differently for each workload kind, asked of the kind's
 * row (struct kind_doctor, kind.h): KIND/NAME as kubectl writes it, the
 * selector that lists the pods, the Service their names live under, the pod
 * template, the world the workload asks for, where a pod's rank and group are
 * written, and a missing rank's pod name. The kinds are the registered ones;
 * none is named here. Pure.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "annotation.h"
#include "doctor_int.h"
#include "json.h"
#include "kind.h"
#include "util.h"

void doctor_want(const struct kind *kind, const cJSON *w, struct kind_doctor_want *out)
{
	const char *ann;
	long v;

	memset(out, 0, sizeof(*out));
	out->world = -1;
	out->groups = 1;
	kind->doctor->want(json_get(w, "spec"), out);
	ann =
	    json_map_str(json_get(json_get(out->tmpl, "metadata"), "annotations"), ANN_WORLD_SIZE);
	if (ann != NULL) /* a world of 1 or more; 0 is no world distenv takes (unknown) */
		out->world = (v = str_long(ann, 0)) >= 1 ? v : -1;
}

void doctor_pod_place(const struct kind *kind, long start, const cJSON *labels, const cJSON *anns,
                      struct pinfo *p)
{
	p->group = 0;
	if (kind->doctor->pod_place != NULL)
		kind->doctor->pod_place(labels, anns, start, &p->rank, &p->group);
}

void doctor_rank_name(const struct kind *kind, const char *name, long start, long g, long r,
                      char *out, size_t len)
{
	if (kind->doctor->rank_name != NULL)
		kind->doctor->rank_name(name, start, g, r, out, len);
	else
		snprintf(out, len, "rank %ld", r);
}

/*
 * Every kind's example target, or, for the usage, its first word and its own
 * name after it when that differs ("sts (statefulset)"), ", " between.
 */
static void kinds_said(char *out, size_t outlen, int example)
{
	const struct kind *k;
	size_t i, used;

	out[0] = '\0';
	for (i = 0; (k = kind_listed(i)) != NULL; i++) {
		const char *w = k->doctor->words[0];
		used = strlen(out);
		if (example)
			snprintf(out + used, outlen - used, "%s%s", i ? ", " : "",
			         k->doctor->example);
		else if (strcasecmp(w, kind_name(k)) == 0)
			snprintf(out + used, outlen - used, "%s%s", i ? ", " : "", w);
		else
			snprintf(out + used, outlen - used, "%s%s (%s)", i ? ", " : "", w,
			         k->doctor->words[1]);
	}
}

int doctor_parse_target(const char *arg, const struct kind **kind, char *name, size_t namelen,
                        char *err, size_t errlen)
{
	const char *slash = arg != NULL ? strchr(arg, '/') : NULL;
	const char *const *w;
	const struct kind *k;
	char said[256];
	size_t i, klen;

	if (slash == NULL || slash == arg || slash[1] == '\0' || strchr(slash + 1, '/') != NULL) {
		kinds_said(said, sizeof(said), 1);
		errf(err, errlen, "'%.100s' is not KIND/NAME (%s)", arg ? arg : "", said);
		return -1;
	}
	klen = (size_t)(slash - arg);
	for (i = 0; (k = kind_at(i)) != NULL; i++)
		for (w = k->doctor != NULL ? k->doctor->words : NULL; w != NULL && *w != NULL;
		     w++) {
			if (strlen(*w) != klen || strncasecmp(arg, *w, klen) != 0)
				continue;
			if (bounded_printf(name, namelen, "%s", slash + 1) != 0) {
				errf(err, errlen, "name too long");
				return -1;
			}
			*kind = k;
			return 0;
		}
	kinds_said(said, sizeof(said), 0);
	errf(err, errlen, "'%.*s' is not a kind distenv knows: %s", (int)(klen > 60 ? 60 : klen),
	     arg, said);
	return -1;
}

int doctor_pod_selector(const struct kind *kind, const cJSON *workload, const char *name, char *out,
                        size_t outlen, char *err, size_t errlen)
{
	const cJSON *ml, *e;
	size_t o = 0;
	const char *label =
	    kind->doctor->pods_label != NULL ? kind->doctor->pods_label : kind->mark;

	if (label != NULL)
		return bounded_printf(out, outlen, "%s=%s", label, name) == 0
		           ? 0
		           : (errf(err, errlen, "name too long"), -1);
	ml = json_get(json_get(json_get(workload, "spec"), "selector"), "matchLabels");
	if (ml == NULL || ml->child == NULL) {
		errf(err, errlen,
		     "the %s's selector has no matchLabels: doctor lists pods by matchLabels only",
		     kind_name(kind));
		return -1;
	}
	out[0] = '\0';
	cJSON_ArrayForEach(e, ml)
	{
		const char *v = cJSON_GetStringValue(e);
		int n =
		    snprintf(out + o, outlen - o, "%s%s=%s", o ? "," : "", e->string, v ? v : "");
		if (n < 0 || (size_t)n >= outlen - o) {
			errf(err, errlen, "the %s's selector is too long", kind_name(kind));
			return -1;
		}
		o += (size_t)n;
	}
	return 0;
}

void doctor_service_name(const struct kind *kind, const cJSON *workload, const cJSON *pods,
                         const char *name, char *out, size_t outlen)
{
	const cJSON *pod;
	const char *s = NULL;

	cJSON_ArrayForEach(pod, json_get(pods, "items"))
	{
		if ((s = json_str(json_get(pod, "spec"), "subdomain")) != NULL && s[0])
			break;
		s = NULL;
	}
	if (s == NULL && kind->doctor->service != NULL)
		s = kind->doctor->service(json_get(workload, "spec"), name);
	snprintf(out, outlen, "%s", s != NULL ? s : "");
}
