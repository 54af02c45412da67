/*
 * The distenv.dev/ annotations as one table: name, what a valid value is, what
 * it means and its default. The core reads every annotation through it, so a
 * bad value's message, docs/environment.md's table (`distenv-webhook annotations`) and
 * the validation of unknown keys cannot drift apart. Static data; nothing is
 * allocated.
 */
#ifndef DISTENV_ANNOTATION_H
#define DISTENV_ANNOTATION_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "config.h"

/* The pod annotations distenv reads and writes, and the opt-in label. */
#define ANN_WORLD_SIZE      "distenv.dev/world-size"
#define ANN_PORT            "distenv.dev/port"
#define ANN_NPROC           "distenv.dev/nproc-per-node"
#define ANN_CONTAINERS      "distenv.dev/containers"
#define ANN_FRAMEWORKS      "distenv.dev/frameworks"
#define ANN_ELASTIC         "distenv.dev/elastic"
#define ANN_MAX_RESTARTS    "distenv.dev/max-restarts"
#define ANN_SERVICE         "distenv.dev/service"
#define ANN_WAIT_FOR_MASTER "distenv.dev/wait-for-master"
#define ANN_INJECTED        "distenv.dev/injected"
#define ANN_WARNINGS        "distenv.dev/warnings"
#define LABEL_INJECT        "distenv.dev/inject"

#define ANNOTATION_PREFIX "distenv.dev/"

enum annotation_type {
	ANNOT_COUNT,      /* a whole number in [min, max]; max 0 = limits.maxWorldSize */
	ANNOT_FRAMEWORKS, /* comma list of the framework names */
	ANNOT_ELASTIC,    /* MIN:MAX within [1, limits.maxWorldSize], MIN <= MAX */
	ANNOT_NPROC,      /* 1 ... 4096, or auto, gpu, cpu */
	ANNOT_NAMES,      /* comma list of non-empty names (checked against the pod later) */
	ANNOT_DNS_LABEL,  /* a DNS label (a Service name) */
	ANNOT_DURATION,   /* 30s, 5m, 1h (also 1h30m), at most max seconds */
	ANNOT_OUTPUT,     /* written by distenv itself */
};

struct annotation_def {
	const char *name; /* "distenv.dev/world-size" */
	enum annotation_type type;
	long min, max;
	const char *what;    /* "a world size": the noun of the error message */
	const char *meaning; /* for docs/environment.md and `distenv-webhook annotations` */
	const char *dflt;
};

/* The table, and its length. */
extern const struct annotation_def annotation_defs[];
extern const size_t annotation_ndefs;

/* The row of name, or NULL when distenv has no such annotation. */
const struct annotation_def *annotation_find(const char *name);

/*
 * The known annotation within two edits (a letter added, left out, changed or
 * two swapped) of name, the nearest first in table order; NULL when none is.
 */
const char *annotation_nearest(const char *name);

/*
 * Checks value v of annotation d. Returns 0, or -1 with err ("distenv:
 * annotation NAME: "V" is not ..."). When out is non-NULL and the type is
 * ANNOT_COUNT or ANNOT_DURATION, *out gets the number (seconds for a duration).
 */
int annotation_check(const struct annotation_def *d, const char *v, const struct config *cfg,
                     long *out, char *err, size_t errlen);

/* Parses "MIN:MAX" with both in [1, max] (no order check). Returns 0 or -1. */
int annotation_range(const char *v, long max, long *lo, long *hi);

/* Parses a duration ("30s", "5m", "1h", "1h30m") into seconds in [1, max]. Returns 0 or -1. */
int annotation_duration(const char *v, long max, long *seconds);

/*
 * Every distenv.dev/ annotation of anns: each bad value (in err, joined by
 * "; ") and each unknown key (in unknown, one a line, each whole with a hint:
 * the nearest known name, or that distenv.dev/inject is a label; one that
 * does not fit is left out but counted). Returns the number of bad values;
 * *n_unknown gets the number of unknown keys.
 */
int annotation_check_all(const cJSON *anns, const struct config *cfg, char *err, size_t errlen,
                         char *unknown, size_t unknownlen, int *n_unknown);

#endif
