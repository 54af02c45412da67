/*
 * What doctor's files share (doctor.c, the driver; doctor_pods.c and
 * doctor_net.c, the checks; doctor_kind.c, what differs by kind;
 * doctor_report.c, the findings and their printing): the pod table, the
 * state the checks read, and the report's writers. Private to src/core/doctor*.c.
 */
#ifndef DISTENV_DOCTOR_INT_H
#define DISTENV_DOCTOR_INT_H

#include <stddef.h>
#include <string.h>
#include <cjson/cJSON.h>

#include "doctor.h"
#include "kind.h"
#include "json.h"
#include "util.h"

/* The items of a List as read, or NULL. */
static inline const cJSON *items(const struct doctor_obj *o)
{
	return o->obj != NULL ? json_get(o->obj, "items") : NULL;
}

static inline int streq(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* s as a whole number in [0, 2^30], else dflt. */
static inline long str_long(const char *s, long dflt)
{
	long v;

	return s != NULL && parse_long(s, 0, 1L << 30, &v) == 0 ? v : dflt;
}

/* A pod as doctor reads it. */
struct pinfo {
	const cJSON *pod;
	const char *name;
	long rank, group, world; /* -1 when unknown */
	char master[256];        /* host of rank 0 as injected; "" when not */
	long port;
	int injected, opted_in, ready, scheduled, deleting;
	const char *phase, *node, *created;
};

/* What the checks read: the input, the report, the workload's template and world, the pods. */
struct doctor_ctx {
	const struct doctor_input *in;
	struct doctor_report *r;
	const cJSON *tpl;
	struct pinfo *p;
	int n;
	long start, world, groups, port;
	struct pinfo *rank0; /* of group 0 */
	const cJSON *svc;
};

/* ---- doctor_report.c ---- */

/* Adds a finding (none past DOCTOR_MAX_FINDINGS: a spare is written and dropped). */
struct doctor_finding *doctor_add(struct doctor_report *r, enum doctor_state st, const char *check,
                                  const char *fix, const char *title_fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Appends to a finding's evidence (cut at its size). */
void doctor_say(struct doctor_finding *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A check that could not be made: what could not be read, and why. */
void doctor_unknown(struct doctor_report *r, const char *check, const char *what, const char *why);

/* ---- doctor_kind.c: the kind's row asked (struct kind_doctor) ---- */

/* What the workload asks for now (its template's distenv.dev/world-size first). */
void doctor_want(const struct kind *kind, const cJSON *w, struct kind_doctor_want *out);

/*
 * A pod's group, and its rank when its distenv.dev/injected annotation did
 * not say, from what its controller writes on it (labels, annotations).
 */
void doctor_pod_place(const struct kind *kind, long start, const cJSON *labels, const cJSON *anns,
                      struct pinfo *p);

/* A pod's own name for rank r of group g, as its controller names it ("" when not derivable). */
void doctor_rank_name(const struct kind *kind, const char *name, long start, long g, long r,
                      char *out, size_t len);

/* ---- doctor_pods.c and doctor_net.c: the checks, in the order doctor_run calls them ---- */

void doctor_check_webhook(struct doctor_ctx *c);
void doctor_check_opt_in(struct doctor_ctx *c);
void doctor_check_ranks(struct doctor_ctx *c);
void doctor_check_world(struct doctor_ctx *c);
void doctor_check_own_env(struct doctor_ctx *c);
void doctor_check_service(struct doctor_ctx *c);
void doctor_check_endpoint(struct doctor_ctx *c);
void doctor_check_host_network(struct doctor_ctx *c);
void doctor_check_netpol(struct doctor_ctx *c);
void doctor_check_mesh(struct doctor_ctx *c);
void doctor_check_step(struct doctor_ctx *c);

#endif
