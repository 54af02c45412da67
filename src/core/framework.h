/*
 * A framework is a file: each frameworks/fw_*.c holds one struct framework
 * (its name and help line, the variables it writes for a rank, the variables
 * it builds from MASTER_ADDR/MASTER_PORT, whether it is a default, what of it
 * grows with the world, its launcher warning); frameworks/framework.c holds
 * the one table config, annotations, messages, `render --help` and the chart's
 * values.schema.json take the names from (test_framework keeps the written
 * copies equal to it). The core reaches a framework through the table only and
 * names none. Static data; nothing here allocates.
 */
#ifndef DISTENV_FRAMEWORK_H
#define DISTENV_FRAMEWORK_H

#include <stddef.h>

#include "registry.h"

struct topology;
struct env_list;
struct cJSON;

/* What a framework's variables are made from, besides the topology. */
struct fw_input {
	const char *addr;     /* the rendezvous host: MASTER_ADDR, or the container's own */
	const char *endpoint; /* "<addr>:<port>" */
	long port;
	int own_addr; /* 1: addr is distenv's (rank 0's host), not a container's own MASTER_ADDR */
};

struct framework {
	const char *name; /* "pytorch": the word in config, annotations and messages */
	unsigned bit;     /* its own bit in a set of frameworks (frameworks/frameworks.h) */
	const char *help; /* one line: what it writes, for render --help and the README */
	/*
	 * The variables it builds from MASTER_ADDR and from MASTER_PORT (NULL-ended):
	 * they follow a container's own literal MASTER_ADDR/MASTER_PORT.
	 */
	const char *const *from_addr;
	const char *const *from_port;
	/* Appends the variables of rank t->rank to out. Returns 0 or -1 (out of memory). */
	int (*add)(const struct topology *t, const struct fw_input *in, struct env_list *out);
	/* 1: among the configured defaults when the config names none (defaults.frameworks) */
	int by_default;
	/*
	 * What grows with the world: the variable that lists every rank (NULL: none).
	 * The budgets count it: over a limit, the framework's variables are left out
	 * (with a warning) when it was only a default, and the pod is denied when its
	 * annotation asked for it; /validate warns or refuses the same at apply time.
	 */
	const char *grows;
	/*
	 * With grows: the ranks whose value of grows is the longest in t's world (up
	 * to max into ranks), so that /validate sizes a world of N ranks without
	 * building every rank's. Returns how many.
	 */
	int (*widest)(const struct topology *t, long *ranks, int max);
	/*
	 * A launcher warning of a resolved pod of t (NULL: none): writes
	 * "distenv: ..." (under 120 characters) into out and returns 1, or returns 0.
	 */
	int (*warn)(const struct topology *t, char *out, size_t len);
	/*
	 * An extended resource (NULL: none): a pod whose target containers request
	 * it gets the framework added to the configured defaults (never to a list
	 * its annotation gives).
	 */
	const char *resource;
	/*
	 * A world the framework cannot serve without guessing (NULL: it serves
	 * every world): writes the reason (without "distenv: ") into msg and
	 * returns 1, or returns 0. anns: the pod's annotations, NULL for a
	 * template (/validate).
	 */
	int (*refuse)(const struct topology *t, const struct cJSON *anns, char *msg, size_t len);
};

/* ---- registry.c: the frameworks the program registered (registry.h) ---- */

/* The framework called s[0..n), or NULL. */
const struct framework *framework_named(const char *s, size_t n);

/* The framework of bit, or NULL. */
const struct framework *framework_of(unsigned bit);

/* "pytorch, tensorflow, jax, xgboost, paddle" (the names joined by sep) into out; returns out. */
const char *framework_names(char *out, size_t outlen, const char *sep);

#endif
