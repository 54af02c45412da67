/*
 * `distenv-webhook doctor` (and `kubectl distenv doctor`): reads a live job's
 * objects from the API server and prints why it does not form (core/doctor.c
 * judges them). Owns what it reads; frees it before returning.
 */
#ifndef DISTENV_DOCTOR_CMD_H
#define DISTENV_DOCTOR_CMD_H

#include <stdio.h>

#include "config.h"
#include "workload.h"

struct kind;

struct doctor_opts {
	const struct kind *kind; /* a registered row */
	const char *name, *ns;
	int json; /* -o json */
};

/*
 * Runs the checks with cfg's kubeconfig (or in-cluster) and prints the report
 * to out. Returns the exit status: 0 nothing blocking found and everything
 * read, 1 a blocking cause found, 3 nothing blocking in what could be read
 * but something could not be, 2 when the API server cannot be used at all
 * (err says why).
 */
int doctor_cmd_run(const struct doctor_opts *o, const struct config *cfg, FILE *out, char *err,
                   size_t errlen);

#endif
