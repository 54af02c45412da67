/*
 * Offline rendering: a StatefulSet, Indexed Job, JobSet, LeaderWorkerSet or
 * Pod manifest (YAML, several
 * documents allowed) in, what every rank would get out, through the same
 * pod_plan_build as /mutate. Pure: text in, text out; the caller owns both.
 */
#ifndef DISTENV_RENDER_H
#define DISTENV_RENDER_H

#include <stddef.h>
#include "config.h"
#include "strbuf.h"

enum render_format { RENDER_TEXT = 0, RENDER_JSON };

struct render_opts {
	const char *namespace; /* used when a manifest has none; NULL means "default" */
	long world_size;       /* > 0: render as if replicas/completions were this */
	enum render_format format;
};

/*
 * Renders every StatefulSet, Job, JobSet, LeaderWorkerSet and Pod in the YAML
 * text. Returns a malloc'd string (caller frees), or NULL with a one-line
 * reason in err (bad YAML, a denial, nothing to render). Every warning (what
 * /validate would say, each pod's, a template without the opt-in label) is
 * appended to warn, one per line, when warn is non-NULL: the pods' each once,
 * with the ranks that got it. The caller owns warn (and frees it).
 */
char *render_manifest(const char *text, size_t len, const struct config *cfg,
                      const struct render_opts *opts, struct strbuf *warn, char *err,
                      size_t errlen);

#endif
