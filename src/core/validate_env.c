/*
 * Apply-time validation of the env a pod template sets itself (validate.c
 * runs it with the other checks): a target container's own MASTER_ADDR or
 * MASTER_PORT, its literal values of the variables distenv gives, and values
 * it reads from the Job's completion index or the pod index where those are
 * not the ranks. What /mutate would deny or warn of, said at apply.
 */
#include "validate_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotation.h"
#include "env.h"
#include "json.h"
#include "ownenv.h"
#include "plan.h"
#include "topology.h"

/*
 * A target container's own MASTER_ADDR or MASTER_PORT that every pod of the
 * template would be denied for (plan_template_own_master): the pod's denial,
 * after the template's name when the workload has several.
 */
static void check_own_master(const struct view *w, const struct config *cfg, struct validation *v)
{
	char err[512];
	int i;

	for (i = 0; i < w->n_tmpl; i++) {
		const char *what = w->tmpl_what[i];

		if (plan_template_own_master(
		        json_get(w->tmpl[i], "spec"),
		        json_get(json_get(w->tmpl[i], "metadata"), "annotations"), cfg, err,
		        sizeof(err)) == 0)
			continue;
		view_problem_as(v, DENY_ENV, "%s%s%s", what, what[0] ? ": " : "",
		                err + strlen("distenv: "));
	}
}

/*
 * The part of w's world that a template's name for a warning (what) names:
 * an item of a kind's template list ("replicated Job NAME": the list's what,
 * then the item's name) whose name is a part's. 1 and *out, else 0.
 */
static int part_of_template(const struct view *w, const char *what, struct topology_part *out)
{
	const struct kind_template *kt;
	const char *name = NULL;
	int k, n = topology_parts(&w->t);

	for (kt = n > 0 ? w->t.kind->templates : NULL; kt != NULL && kt->path != NULL; kt++) {
		size_t l = kt->what != NULL ? strlen(kt->what) : 0;
		if (l > 0 && strstr(kt->path, "[*]") != NULL && strncmp(what, kt->what, l) == 0 &&
		    what[l] == ' ')
			name = what + l + 1;
	}
	for (k = 0; name != NULL && k < n; k++) {
		topology_part(&w->t, k, out);
		if (strcmp(name, out->name) == 0)
			return 1;
	}
	return 0;
}

/*
 * The ranks pod template i of w takes in one world of world ranks: what its
 * kind's template row says (a LeaderWorkerSet's leader one, its workers the
 * rest of the group), a part's units times pods (a replicated Job's Jobs times
 * completions), else the whole world.
 */
static long template_ranks(const struct view *w, int i, long world)
{
	const char *what = w->tmpl_what[i];
	const struct kind_template *kt;
	struct topology_part part;

	for (kt = w->t.kind != NULL ? w->t.kind->templates : NULL; kt != NULL && kt->path != NULL;
	     kt++)
		if (kt->ranks != 0 && kt->what != NULL && strcmp(what, kt->what) == 0)
			return kt->ranks > 0 ? kt->ranks : world + kt->ranks;
	if (part_of_template(w, what, &part))
		return part.units * part.pods;
	return world;
}

/* The Job controller's completion index: an annotation, and since 1.28 a label too. */
#define INDEX_KEY "batch.kubernetes.io/job-completion-index"

/* 1 when container ctr's entry name reads the Job controller's completion index. */
static int own_from_index(const cJSON *ctr, const char *name)
{
	return ownenv_from_key(ctr, name, INDEX_KEY);
}

/*
 * The Jobs of replicated Job template i of a JobSet when its pods' completion
 * indexes are not their ranks (another replicated Job's pods come first or
 * after, or several Jobs repeat the indexes); 0 when they are, or when w is
 * no JobSet.
 */
static long index_not_rank(const struct view *w, int i, long ranks, long world)
{
	struct topology_part part;

	if (!part_of_template(w, w->tmpl_what[i], &part))
		return 0;
	return part.units > 1 || ranks != world ? part.units : 0;
}

/* The variables judged at apply time: the same for every pod, or one literal for many ranks. */
static int judged_at_apply(const char *name, long ranks)
{
	static const char *const world_wide[] = {
	    "WORLD_SIZE",           "NNODES",
	    "PET_NNODES",           "JAX_NUM_PROCESSES",
	    "DMLC_NUM_WORKER",      "PADDLE_NNODES",
	    "MEGASCALE_NUM_SLICES", "MASTER_ADDR",
	    "PET_MASTER_ADDR",      NULL,
	};
	int k;

	if (ownenv_per_rank(name) || strcmp(name, "TF_CONFIG") == 0)
		return ranks >= 2;
	for (k = 0; world_wide[k] != NULL; k++)
		if (strcmp(world_wide[k], name) == 0)
			return 1;
	return 0;
}

/*
 * A target container's own literal value of a variable distenv gives (it
 * wins) against the world's (ownenv_judge): what every pod of the template
 * would run with. Values the same for every pod are judged against rank 0's;
 * a per-rank variable is certainly wrong as one literal for two or more ranks.
 * Values the controller fills in (fieldRef) are judged per pod by /mutate.
 */
static void check_own_values(struct view *w, const struct config *cfg, long world,
                             struct validation *v)
{
	char msg[600];
	int i;

	if (world < 1 || world > cfg->max_world_size || w->t.domain[0] == '\0')
		return;
	for (i = 0; i < w->n_tmpl; i++) {
		const cJSON *spec = json_get(w->tmpl[i], "spec");
		const cJSON *anns = json_get(json_get(w->tmpl[i], "metadata"), "annotations");
		const char *el = json_str(anns, ANN_ELASTIC), *what = w->tmpl_what[i];
		long ranks = template_ranks(w, i, world);
		struct topology t = w->t;
		struct env_list env;
		long jobs;
		int j;

		t.targets = NULL;
		t.n_targets = 0;
		t.rank = 0;
		t.frameworks = topology_template_frameworks(spec, anns, cfg);
		t.elastic_min = t.elastic_max = 0;
		if (el != NULL &&
		    annotation_range(el, cfg->max_world_size, &t.elastic_min, &t.elastic_max) != 0)
			continue; /* a bad annotation is a problem of its own */
		t.max_restarts = -1;
		snprintf(t.nproc, sizeof(t.nproc), "1");
		if (t.frameworks == 0 || topology_template_targets(spec, anns, cfg, &t) != 0)
			continue;
		if (env_build(&t, &env) != 0) {
			free(t.targets);
			continue;
		}
		for (j = 0; j < t.n_targets; j++) {
			const cJSON *ctr = topology_target_container(spec, &t.targets[j]);
			size_t k;

			for (k = 0; k < env.n; k++) {
				const char *own;
				char how[220];

				if (ownenv_per_rank(env.vars[k].name) && ranks >= 1 &&
				    own_from_index(ctr, env.vars[k].name) &&
				    (jobs = index_not_rank(w, i, ranks, world)) > 0) {
					/* the index repeats or starts at 0 where the ranks do not
					 */
					view_problem_as(
					    v, DENY_ENV,
					    "%s: container %.63s sets %s from the completion "
					    "index, "
					    "0 to %ld in each of its %ld Job(s), not the ranks of "
					    "%s %s's %ld pods, so two pods would claim one "
					    "rank: "
					    "remove %s from its env (distenv gives each pod its "
					    "own)",
					    what, json_str(ctr, "name"), env.vars[k].name,
					    ranks / jobs - 1, jobs, kind_name(w->t.kind), w->name,
					    world, env.vars[k].name);
					continue;
				}
				if (ownenv_per_rank(env.vars[k].name) && w->t.start > 0 &&
				    w->t.kind->index_label != NULL &&
				    ownenv_from_key(ctr, env.vars[k].name,
				                    w->t.kind->index_label)) {
					/* the pod index is the ordinal: the ranks plus the start */
					view_problem_as(
					    v, DENY_ENV,
					    "%s%scontainer %.63s sets %s from the pod index "
					    "(%s), %ld to %ld, not the ranks 0 to %ld of %s "
					    "%s's %ld pods (its ordinals start at %ld), so "
					    "no pod would be rank 0 and the job would wait "
					    "for it: remove %s from its env (distenv gives "
					    "each pod its own)",
					    what, what[0] ? ": " : "", json_str(ctr, "name"),
					    env.vars[k].name, w->t.kind->index_label, w->t.start,
					    w->t.start + world - 1, world - 1, kind_name(w->t.kind),
					    w->name, world, w->t.start, env.vars[k].name);
					continue;
				}
				if (strcmp(env.vars[k].name, "PET_RDZV_CONF") == 0) {
					if (ownenv_rdzv_conf_unmerged(ctr, msg, sizeof(msg)))
						view_warn_template(v, w, i, "%s",
						                   msg + strlen("distenv: "));
					continue;
				}
				if (!judged_at_apply(env.vars[k].name, ranks) ||
				    ownenv_value(ctr, NULL, env.vars[k].name, &own, how,
				                 sizeof(how)) <= 0)
					continue;
				switch (ownenv_judge(&t, json_str(ctr, "name"), env.vars[k].name,
				                     own, how, env.vars[k].value, ranks, msg,
				                     sizeof(msg))) {
				case OWNENV_AGREES:
					break;
				case OWNENV_WARN:
					view_warn_template(v, w, i, "%s",
					                   msg + strlen("distenv: "));
					break;
				case OWNENV_DENY:
					view_problem_as(v, DENY_ENV, "%s%s%s", what,
					                what[0] ? ": " : "",
					                msg + strlen("distenv: "));
					break;
				}
			}
		}
		env_list_free(&env);
		free(t.targets);
	}
}

void validate_own_env(struct view *w, const struct config *cfg, long world, struct validation *v)
{
	check_own_master(w, cfg, v);
	check_own_values(w, cfg, world, v);
}
