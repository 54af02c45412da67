/*
 * Topology resolution, the driver: the named steps of a pod (its annotations,
 * its target containers through targets.c, its kind, then the kind's own place
 * step from src/kinds/kind_*.c, the world, the Service, its own name, its
 * frameworks) and the state they share with the kinds' place steps (struct
 * resolve, kind.h). Host names are hosts.c's, warnings warnings.c's. Denials
 * are written to err for the user; nothing is kept.
 */
#include "topology.h"

#include <assert.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotation.h"
#include "framework.h"
#include "kind.h"
#include "targets.h"
#include "util.h"
#include "dns.h"
#include "json.h"

/* "distenv: " and the message into err. */
static void deny_text(char *err, size_t errlen, const char *fmt, va_list ap)
{
	int n = snprintf(err, errlen, "distenv: ");

	if (n >= 0 && (size_t)n < errlen)
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
}

enum topology_status resolve_deny(const struct resolve *rs, enum deny_reason why, const char *fmt,
                                  ...)
{
	va_list ap;

	if (why != DENY_NONE)
		rs->t->reason = why;
	va_start(ap, fmt);
	deny_text(rs->err, rs->errlen, fmt, ap);
	va_end(ap);
	return TOPOLOGY_DENY;
}

static const cJSON *controller_owner(const cJSON *meta)
{
	const cJSON *refs = json_get(meta, "ownerReferences");
	const cJSON *ref;

	cJSON_ArrayForEach(ref, refs)
	{
		if (cJSON_IsTrue(json_get(ref, "controller")))
			return ref;
	}
	return NULL;
}

/* 1 when the look-up answered for another object of the same name (deleted and re-created). */
static int spec_is_foreign(const struct workload_spec *ws, const struct workload_ref *ref)
{
	return ws->uid[0] != '\0' && ref->uid != NULL && ref->uid[0] != '\0' &&
	       strcmp(ws->uid, ref->uid) != 0;
}

/* ---- the resolution, step by step ---- */

/* 1 when annotation name is set to a value its row refuses. */
static int bad_value(const struct resolve *rs, const char *name)
{
	const char *v = json_map_str(rs->anns, name);
	char scratch[512];

	return v != NULL && annotation_check(annotation_find(name), v, rs->cfg, NULL, scratch,
	                                     sizeof(scratch)) != 0;
}

/* A value the controller writes as a label, an annotation or both: the label first. */
const char *resolve_pod_name(const struct resolve *rs)
{
	return rs->pod_name != NULL && rs->pod_name[0] != '\0' ? rs->pod_name : "(unnamed)";
}

const char *resolve_mark(const struct resolve *rs, const char *key)
{
	const char *v = json_map_str(rs->labels, key);

	return v != NULL ? v : json_map_str(rs->anns, key);
}

/* Reads resolve_mark(key) as a whole number in [0, INT_MAX]: 0 absent, 1 set, deny when bad. */
enum topology_status resolve_mark_long(const struct resolve *rs, const char *key, long *out,
                                       int *present)
{
	const char *v = resolve_mark(rs, key);

	*present = v != NULL;
	if (v != NULL && parse_long(v, 0, INT_MAX, out) != 0)
		return resolve_deny(rs, DENY_NONE, "%s \"%.32s\" is not a whole number", key, v);
	return TOPOLOGY_OK;
}

/*
 * Fetches the workload through the look-up. A cached answer that would deny
 * the pod (would_deny, may be NULL), or that belongs to another object of the
 * same name, is read again before it is believed.
 */
enum topology_status resolve_fetch(struct resolve *rs, const struct workload_ref *ref,
                                   int (*would_deny)(const struct resolve *,
                                                     const struct workload_spec *),
                                   struct workload_spec *ws, const char *why)
{
	const char *kname = kind_name(ref->kind);
	char lerr[256];
	int fresh;

	lerr[0] = '\0';
	for (fresh = 0; fresh < 2; fresh++) {
		workload_spec_init(ws);
		if (rs->lookup->get(rs->lookup->ctx, ref, fresh, ws, lerr, sizeof(lerr)) != 0)
			return resolve_deny(
			    rs, DENY_LOOKUP,
			    "cannot read %s %s/%s from the Kubernetes API (%s), so %s; retry, or "
			    "check the webhook's access to the API",
			    kname, rs->ns, ref->name, lerr[0] ? lerr : "look-up failed", why);
		if (!ws->cached ||
		    (!spec_is_foreign(ws, ref) && (would_deny == NULL || !would_deny(rs, ws))))
			break;
	}
	if (spec_is_foreign(ws, ref))
		return resolve_deny(
		    rs, DENY_LOOKUP,
		    "%s %s/%s in the API has uid %.63s, not the uid %.63s the pod names as its "
		    "owner: the workload was deleted (and perhaps created again); the controller "
		    "of the new one creates new pods",
		    kname, rs->ns, ref->name, ws->uid, ref->uid);
	return TOPOLOGY_OK;
}

/* The world: the annotation when set, else what the workload says (< 0: not known). */
enum topology_status resolve_set_world(struct resolve *rs, long from_api)
{
	struct topology *t = rs->t;

	if (rs->ann_world > 0)
		t->world_size = rs->ann_world;
	else if (from_api >= 0)
		t->world_size = from_api;
	else
		return resolve_deny(
		    rs, DENY_WORLD,
		    "the world size of %s %s/%s is not known: set the annotation %s%s",
		    kind_name(t->kind), rs->ns, t->workload, ANN_WORLD_SIZE,
		    rs->lookup ? "" : " (look-ups of the workload are turned off)");
	return TOPOLOGY_OK;
}

/*
 * A kind whose workload fixes the world (a JobSet's pods, a LeaderWorkerSet's
 * group): distenv.dev/world-size, when set, must say the same (what: the pods
 * a world counts). /validate applies the same rule at apply time.
 */
enum topology_status resolve_fixed_world(struct resolve *rs, long world, const char *what)
{
	if (rs->ann_world > 0 && rs->ann_world != world)
		return resolve_deny(
		    rs, DENY_WORLD,
		    "annotation %s is %ld, but %s %s/%s has %ld pods per world (%s): remove "
		    "the annotation",
		    ANN_WORLD_SIZE, rs->ann_world, kind_name(rs->t->kind), rs->ns, rs->t->workload,
		    world, what);
	return TOPOLOGY_OK;
}

/* -- recognising the kind -- */

/* "apps" of "apps/v1", "" of "v1". */
static void api_group(const char *api_version, char *out, size_t outlen)
{
	const char *slash = api_version ? strchr(api_version, '/') : NULL;
	size_t n = slash ? (size_t)(slash - api_version) : 0;

	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, api_version ? api_version : "", n);
	out[n] = '\0';
}

/* Step: which row the pod belongs to, and the workload's name. */
static enum topology_status identify(struct resolve *rs, const struct kind **row)
{
	const char *kind = json_str(rs->owner, "kind");
	const char *apiv = json_str(rs->owner, "apiVersion");
	const char *name;
	char group[128], supported[512];
	size_t i;

	api_group(apiv, group, sizeof(group));
	for (i = 0; kind_at(i) != NULL; i++) {
		const struct kind *k = kind_at(i);
		if (kind == NULL || strcmp(kind, k->owner_kind) != 0 ||
		    strcmp(group, k->owner_group) != 0 || (k->mark && !resolve_mark(rs, k->mark)))
			continue;
		*row = k;
		rs->t->kind = k;
		name = k->name_from ? resolve_mark(rs, k->name_from) : rs->owner_name;
		if (rs->owner_name == NULL || !dns_subdomain_valid(rs->owner_name))
			return resolve_deny(rs, DENY_NONE,
			                    "the pod's %s owner reference has no valid name",
			                    k->owner_kind);
		if (name == NULL || !dns_subdomain_valid(name))
			return resolve_deny(rs, DENY_NONE,
			                    "the pod's %s name \"%.64s\" is not valid",
			                    kind_name(k), name ? name : "");
		strcpy(rs->t->workload, name);
		return TOPOLOGY_OK;
	}
	for (i = 0; kind_at(i) != NULL; i++) {
		const struct kind *k = kind_at(i);
		if (k->foreign_owner_hint == NULL || k->mark == NULL ||
		    (name = resolve_mark(rs, k->mark)) == NULL)
			continue;
		rs->t->kind = k;
		return resolve_deny(
		    rs, DENY_NONE,
		    "pod %.64s carries the marks of %s %s/%.64s but is controlled by %.64s%s%.64s"
		    "%s",
		    resolve_pod_name(rs), kind_name(k), rs->ns, name, kind ? kind : "nothing",
		    rs->owner_name ? " " : "", rs->owner_name ? rs->owner_name : "",
		    k->foreign_owner_hint);
	}
	kind_supported(supported, sizeof(supported));
	return resolve_deny(rs, DENY_NONE,
	                    "pod %.64s is controlled by %.64s%s%.128s%s%.64s%s; %s: remove the "
	                    "distenv.dev/inject label from other workloads",
	                    resolve_pod_name(rs), kind ? kind : "nothing",
	                    rs->owner_name ? " " : "", rs->owner_name ? rs->owner_name : "",
	                    kind ? " (" : "", kind ? (apiv ? apiv : "no apiVersion") : "",
	                    kind ? ")" : "", supported);
}

/*
 * Reads annotation name through the annotation table: 0 absent, 1 set (*out for
 * numbers). A bad value reads as absent: check_annotations has reported it.
 */
static int ann_read(struct resolve *rs, const char *name, const char **v, long *out)
{
	char scratch[512];

	*v = json_map_str(rs->anns, name);
	if (*v == NULL)
		return 0;
	if (annotation_check(annotation_find(name), *v, rs->cfg, out, scratch, sizeof(scratch)) ==
	    0)
		return 1;
	*v = NULL;
	return 0;
}

/*
 * Step: every distenv.dev/ annotation's value, all at once and before anything
 * else, so that a bad value is reported even when the API cannot be reached (the
 * checks /validate runs on the template). Fills rs->bad_world / bad_service.
 */
static enum topology_status check_annotations(struct resolve *rs)
{
	char unknown[256];
	int n_unknown;

	if (annotation_check_all(rs->anns, rs->cfg, rs->err, rs->errlen, unknown, sizeof(unknown),
	                         &n_unknown) == 0)
		return TOPOLOGY_OK;
	rs->bad_world = bad_value(rs, ANN_WORLD_SIZE);
	rs->bad_service = bad_value(rs, ANN_SERVICE);
	return TOPOLOGY_DENY;
}

/* Step: the distenv.dev/... values the steps after it use (bad ones read as absent). */
static enum topology_status read_annotations(struct resolve *rs)
{
	struct topology *t = rs->t;
	const char *v;

	ann_read(rs, ANN_WORLD_SIZE, &v, &rs->ann_world);
	t->port = rs->cfg->default_port;
	ann_read(rs, ANN_PORT, &v, &t->port);
	ann_read(rs, ANN_FRAMEWORKS, &v, NULL); /* v NULL: absent, or bad and reported */
	if (targets_frameworks_of(t, rs->spec, v, rs->cfg, &t->frameworks) > 0)
		t->frameworks_asked = t->frameworks;
	if (ann_read(rs, ANN_ELASTIC, &v, NULL) > 0 &&
	    annotation_range(v, rs->cfg->max_world_size, &t->elastic_min, &t->elastic_max) != 0)
		t->elastic_min = t->elastic_max = 0;
	ann_read(rs, ANN_MAX_RESTARTS, &v, &t->max_restarts);
	ann_read(rs, ANN_WAIT_FOR_MASTER, &v, &t->wait_seconds);
	return TOPOLOGY_OK;
}

/* Step: the headless Service (the pod's subdomain) and the domain every host shares. */
static enum topology_status resolve_service(struct resolve *rs)
{
	struct topology *t = rs->t;
	const char *kname = kind_name(t->kind);
	const char *subdomain = json_str(rs->spec, "subdomain"), *v;

	if (t->service[0] != '\0') {
		/* set by the kind (a LeaderWorkerSet group's own Service) */
	} else if (subdomain != NULL && subdomain[0] != '\0') {
		if (!dns_label_valid(subdomain))
			return resolve_deny(rs, DENY_NONE,
			                    "spec.subdomain \"%.64s\" is not a valid Service name",
			                    subdomain);
		strcpy(t->service, subdomain);
	} else if (t->kind->no_subdomain_hint != NULL) {
		return resolve_deny(rs, DENY_NONE, "pod of %s %s/%s has no spec.subdomain%s", kname,
		                    rs->ns, t->workload, t->kind->no_subdomain_hint);
	} else if (!rs->bad_service && (v = json_map_str(rs->anns, ANN_SERVICE)) != NULL) {
		strcpy(t->service, v);
		t->set_subdomain = 1;
	} else {
		return resolve_deny(
		    rs, DENY_NONE,
		    "pod of %s %s/%s has no spec.subdomain: point spec.subdomain (the Job's pod "
		    "template) at a headless Service, or set the annotation %s",
		    kname, rs->ns, rs->owner_name, ANN_SERVICE);
	}
	if (bounded_printf(t->domain, sizeof(t->domain), ".%s.%s.svc.%s", t->service, rs->ns,
	                   rs->cfg->cluster_domain) != 0)
		return resolve_deny(rs, DENY_LIMIT, "the Service address of %s %s/%s is too long",
		                    kname, rs->ns, t->workload);
	return TOPOLOGY_OK;
}

/*
 * Step: the pod's own DNS name is the host distenv derives for its rank. Every
 * other rank's host is derived the same way, so a pod named otherwise (a
 * controller that names pods its own way, a webhook that rewrote spec.hostname)
 * means that no derived name can be trusted. The pod's name is its
 * spec.hostname (what its DNS record carries), else metadata.name; a pod with
 * neither (a bare generateName) has no name to compare.
 */
static enum topology_status check_own_name(struct resolve *rs)
{
	struct topology *t = rs->t;
	const char *own = json_str(rs->spec, "hostname"), *from = "spec.hostname";
	char host[320];

	if (own == NULL || own[0] == '\0') {
		own = json_str(rs->meta, "name");
		from = "metadata.name";
	}
	if (own == NULL || own[0] == '\0')
		return TOPOLOGY_OK;
	if (topology_hostname(t, t->rank, host, sizeof(host)) < 0 || strcmp(own, host) == 0)
		return TOPOLOGY_OK;
	return resolve_deny(
	    rs, DENY_NONE,
	    "the pod's own name %.64s (%s) is not %s, the host distenv derives for rank %ld of "
	    "%s %s/%s, so the addresses it derives for the other ranks cannot be trusted: "
	    "leave the pod's name as the %s's controllers set it (another webhook or "
	    "controller renamed it)",
	    own, from, host, t->rank, kind_name(t->kind), rs->ns, t->workload, kind_name(t->kind));
}

/* Step: a framework of the pod that cannot serve its world (framework.h, refuse). */
static enum topology_status check_frameworks(struct resolve *rs)
{
	char msg[512];
	size_t i;

	for (i = 0; framework_at(i) != NULL; i++) {
		const struct framework *fw = framework_at(i);
		if (!(rs->t->frameworks & fw->bit) || fw->refuse == NULL ||
		    !fw->refuse(rs->t, rs->anns, msg, sizeof(msg)))
			continue;
		snprintf(rs->err, rs->errlen, "distenv: %s", msg);
		return TOPOLOGY_DENY;
	}
	return TOPOLOGY_OK;
}

/* Step: the checks every kind shares, once rank and world are known. */
static enum topology_status check_world(struct resolve *rs)
{
	struct topology *t = rs->t;
	const char *kname = kind_name(t->kind);
	long r;

	if (t->world_size > rs->cfg->max_world_size)
		return resolve_deny(
		    rs, DENY_LIMIT, "%s %s/%s has a world size of %ld, above the limit of %ld",
		    kname, rs->ns, t->workload, t->world_size, rs->cfg->max_world_size);
	if (t->rank >= t->world_size)
		return resolve_deny(
		    rs, DENY_NONE,
		    "rank %ld of %s %s/%s is not below the world size %ld: scale the workload "
		    "and %s together",
		    t->rank, kname, rs->ns, t->workload, t->world_size, ANN_WORLD_SIZE);
	if (t->elastic_min > t->world_size)
		return resolve_deny(
		    rs, DENY_NONE,
		    "annotation %s: MIN %ld is above the world size %ld of %s %s/%s, so torchrun "
		    "would wait for nodes that never exist: lower MIN or scale the workload",
		    ANN_ELASTIC, t->elastic_min, t->world_size, kname, rs->ns, t->workload);
	if (t->rdzv_id[0] == '\0' &&
	    bounded_printf(t->rdzv_id, sizeof(t->rdzv_id), "%s-%s", t->ns, t->workload) != 0)
		return resolve_deny(rs, DENY_LIMIT, "the rendezvous id of %s %s/%s is too long",
		                    kname, rs->ns, t->workload);
	if ((r = topology_bad_host(t)) >= 0) {
		char why[256];
		topology_bad_host_why(t, r, why, sizeof(why));
		return resolve_deny(rs, DENY_LIMIT, "%s %s/%s: the hostname of rank %ld, %s", kname,
		                    rs->ns, t->workload, r, why);
	}
	return TOPOLOGY_OK;
}

/* The problems of one pod, joined by "; " behind one "distenv: ". */
struct problems {
	char text[1024];
	int n;
	enum deny_reason first; /* the first problem's: the metrics label */
};

static void problem(struct problems *pb, enum deny_reason why, const char *msg)
{
	size_t used = strlen(pb->text);

	msg = verdict_unprefixed(msg);
	if (pb->n++ == 0)
		pb->first = why;
	if (used + 3 < sizeof(pb->text))
		snprintf(pb->text + used, sizeof(pb->text) - used, "%s%s", used ? "; " : "", msg);
}

/* A step's result: a denial that named no reason of its own gets the step's. */
static enum topology_status step(struct resolve *rs, enum topology_status rc, enum deny_reason why)
{
	if (rc == TOPOLOGY_DENY && rs->t->reason == DENY_NONE)
		rs->t->reason = why;
	return rc;
}

enum topology_status topology_resolve(const cJSON *pod, const char *req_ns,
                                      const struct config *cfg,
                                      const struct workload_lookup *lookup, struct topology *t,
                                      char *err, size_t errlen)
{
	struct resolve rsv, *rs = &rsv;
	const struct kind *row = NULL;
	enum topology_status rc;
	struct problems pb = {0};

	memset(t, 0, sizeof(*t));
	memset(rs, 0, sizeof(*rs));
	t->rank = -1;
	t->group = -1;
	t->max_restarts = -1;
	err[0] = '\0';
	rs->t = t;
	rs->cfg = cfg;
	rs->lookup = lookup != NULL && lookup->get != NULL ? lookup : NULL;
	rs->err = err;
	rs->errlen = errlen;
	rs->ann_world = -1;
	rs->meta = json_get(pod, "metadata");
	rs->spec = json_get(pod, "spec");
	rs->anns = json_get(rs->meta, "annotations");
	rs->labels = json_get(rs->meta, "labels");

	if (!cJSON_IsObject(rs->spec))
		return resolve_deny(rs, DENY_OTHER, "the object has no pod spec");
	rs->ns = json_str(rs->meta, "namespace");
	if (rs->ns == NULL || rs->ns[0] == '\0')
		rs->ns = req_ns;
	if (!dns_label_valid(rs->ns))
		return resolve_deny(rs, DENY_OTHER, "the request has no valid namespace");
	strcpy(t->ns, rs->ns);
	rs->pod_name = json_str(rs->meta, "name");
	if (rs->pod_name == NULL || rs->pod_name[0] == '\0')
		rs->pod_name = json_str(rs->meta, "generateName"); /* Job pods at CREATE */
	rs->owner = controller_owner(rs->meta);
	rs->owner_name = json_str(rs->owner, "name");

	/*
	 * The denial names every problem it can know, as /validate does: the
	 * annotations first (their values, and the containers they name), then the
	 * first problem of the steps after them, which read a bad value as absent,
	 * unless that problem is only the bad value's echo (a world or Service not
	 * known).
	 */
	if (check_annotations(rs) == TOPOLOGY_DENY)
		problem(&pb, DENY_ANNOTATION, err);
	if (!bad_value(rs, ANN_CONTAINERS)) {
		rc = targets_resolve(rs->spec, rs->anns, cfg, t, err, errlen);
		if (rc == TOPOLOGY_NOMEM)
			goto out;
		if (rc == TOPOLOGY_DENY)
			problem(&pb, t->reason, err);
	}
	t->reason = DENY_NONE;
	rc = step(rs, identify(rs, &row), DENY_OWNER);
	if (rc == TOPOLOGY_OK && (rc = read_annotations(rs)) == TOPOLOGY_OK &&
	    (rc = step(rs, row->place(rs), DENY_IDENTITY)) == TOPOLOGY_OK &&
	    (rc = step(rs, check_world(rs), DENY_WORLD)) == TOPOLOGY_OK &&
	    (rc = step(rs, resolve_service(rs), DENY_SERVICE)) == TOPOLOGY_OK &&
	    (rc = step(rs, check_own_name(rs), DENY_IDENTITY)) == TOPOLOGY_OK)
		rc = step(rs, check_frameworks(rs), DENY_WORLD);
	if (rc == TOPOLOGY_NOMEM)
		goto out;
	if (rc == TOPOLOGY_DENY && !(t->reason == DENY_WORLD && rs->bad_world) &&
	    !(t->reason == DENY_SERVICE && rs->bad_service))
		problem(&pb, t->reason, err);
	if (pb.n > 0) {
		snprintf(err, errlen, "distenv: %s", pb.text);
		t->reason = pb.first;
		rc = TOPOLOGY_DENY;
	}
	if (rc != TOPOLOGY_OK)
		goto out;
	/* what every later step relies on: a rank within its world, the world within the limit */
	assert(t->rank >= 0 && t->rank < t->world_size && t->world_size <= cfg->max_world_size);
	t->processes = targets_nproc(t, rs->spec, rs->anns, cfg);
	t->one_process = t->processes == 1;
	rc = TOPOLOGY_OK;
out:
	if (rc != TOPOLOGY_OK) {
		free(t->targets);
		t->targets = NULL;
		t->n_targets = 0;
	}
	return rc;
}

void topology_free(struct topology *t)
{
	if (t == NULL)
		return;
	free(t->targets);
	t->targets = NULL;
	t->n_targets = 0;
}
