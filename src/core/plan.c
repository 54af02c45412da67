/*
 * Planning one pod: topology, then the environment of each target container,
 * budgeted so that no variable makes exec fail and the patched pod stays
 * storable, then the patch. The plan owns its topology, env lists and patch.
 */
#include "plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotation.h"
#include "framework.h"
#include "mesh.h"
#include "ownenv.h"
#include "patch.h"
#include "kind.h"
#include "util.h"
#include "json.h"

/* Per-entry overhead of a patched env entry: {"name":"","value":""}, and an op around it. */
#define ENV_ENTRY_OVERHEAD 64

static void plan_warn(struct pod_plan *plan, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Keeps the warning w ("distenv: ..."), once; one past the list is counted. */
static void plan_warn_text(struct pod_plan *plan, const char *w)
{
	int i;

	for (i = 0; i < plan->n_warnings; i++)
		if (strncmp(plan->warnings[i], w, PLAN_WARNING_LEN - 1) == 0)
			return;
	if (plan->n_warnings >= PLAN_MAX_WARNINGS) {
		plan->n_more++;
		return;
	}
	snprintf(plan->warnings[plan->n_warnings++], PLAN_WARNING_LEN, "%s", w);
}

static void plan_warn(struct pod_plan *plan, const char *fmt, ...)
{
	char buf[PLAN_WARNING_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	plan_warn_text(plan, buf);
}

const struct env_list *pod_plan_target_env(const struct pod_plan *plan, int i)
{
	if (plan->own_env != NULL && plan->own_env[i].n > 0)
		return &plan->own_env[i];
	return &plan->env;
}

/* Removes the variables framework bit fw wrote from l (their strings are freed). */
static void env_remove_fw(struct env_list *l, unsigned fw)
{
	size_t i = 0;

	while (i < l->n) {
		if (l->vars[i].fw != fw) {
			i++;
			continue;
		}
		free(l->vars[i].name);
		free(l->vars[i].value);
		memmove(&l->vars[i], &l->vars[i + 1], (l->n - i - 1) * sizeof(l->vars[0]));
		l->n--;
	}
}

static const struct env_var *env_find(const struct env_list *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->vars[i].name, name) == 0)
			return &l->vars[i];
	return NULL;
}

/* The size of "NAME=value" with its NUL, as execve() counts it. */
static size_t env_string_size(const struct env_var *v)
{
	return strlen(v->name) + 1 + strlen(v->value) + 1;
}

/* Bytes the patch adds to the pod for one container that gets l. */
static size_t env_patch_bytes(const struct env_list *l)
{
	size_t i, n = 0;

	for (i = 0; i < l->n; i++)
		n += env_string_size(&l->vars[i]) + ENV_ENTRY_OVERHEAD;
	return n;
}

/*
 * The user's env entries named names[0..n) (distinct), in one walk over the
 * container's list: found[k] 1 with a literal value in values[k], 0 absent,
 * -1 set by valueFrom or $(ref). The last entry of a name counts, as the
 * kubelet's (ownenv_entry).
 */
static void user_envs(const cJSON *ctr, const struct topology_target *tg, const char *const *names,
                      int n, const char **values, int *found)
{
	const cJSON *e;
	int k, may = 0;

	for (k = 0; k < n; k++) {
		found[k] = 0;
		may |= topology_target_may_define(tg, names[k]);
	}
	if (!may)
		return; /* no entry starts like any of the names: the list need not be walked */
	cJSON_ArrayForEach(e, json_get(ctr, "env"))
	{
		const char *nm = json_name(e), *v;

		if (nm == NULL)
			continue;
		for (k = 0; k < n; k++)
			if (nm[0] == names[k][0] && strcmp(nm, names[k]) == 0)
				break;
		if (k == n)
			continue;
		v = json_str(e, "value");
		if (cJSON_HasObjectItem(e, "valueFrom") || (v != NULL && strstr(v, "$(") != NULL)) {
			found[k] = -1;
			values[k] = NULL;
		} else {
			found[k] = 1;
			values[k] = v != NULL ? v : "";
		}
	}
}

/* A user env entry: 1 with a literal value in *value, 0 absent, -1 set by valueFrom or $(ref). */
static int user_env(const cJSON *ctr, const struct topology_target *tg, const char *name,
                    const char **value)
{
	int found;

	user_envs(ctr, tg, &name, 1, value, &found);
	return found;
}

/*
 * 1 when ctr defines every variable of l that a framework builds from master
 * ("MASTER_ADDR" or "MASTER_PORT"): the framework table's from_addr/from_port.
 */
static int defines_all_derived(const cJSON *ctr, const struct topology_target *tg,
                               const struct env_list *l, const char *master)
{
	int port = strcmp(master, "MASTER_PORT") == 0;
	const char *v;
	size_t i, k;

	for (i = 0; framework_at(i) != NULL; i++) {
		const char *const *derived =
		    port ? framework_at(i)->from_port : framework_at(i)->from_addr;
		for (k = 0; derived[k] != NULL; k++)
			if (env_find(l, derived[k]) != NULL &&
			    user_env(ctr, tg, derived[k], &v) == 0)
				return 0;
	}
	return 1;
}

/*
 * The variables of l a framework builds from master that ctr does not set, as
 * "A, B and C" into out (what defines_all_derived found missing).
 */
static void missing_derived(const cJSON *ctr, const struct topology_target *tg,
                            const struct env_list *l, const char *master, char *out, size_t outlen)
{
	const char *names[32], *v;
	size_t i, k, n = 0, used;

	for (i = 0; framework_at(i) != NULL; i++) {
		const char *const *derived = strcmp(master, "MASTER_PORT") == 0
		                                 ? framework_at(i)->from_port
		                                 : framework_at(i)->from_addr;
		for (k = 0; derived[k] != NULL && n < sizeof(names) / sizeof(names[0]); k++)
			if (env_find(l, derived[k]) != NULL &&
			    user_env(ctr, tg, derived[k], &v) == 0)
				names[n++] = derived[k];
	}
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		used = strlen(out);
		snprintf(out + used, outlen - used, "%s%s",
		         i == 0      ? ""
		         : i + 1 < n ? ", "
		                     : " and ",
		         names[i]);
	}
}

/*
 * The rule of a target container ctr that sets MASTER_ADDR or MASTER_PORT
 * itself, against env, the variables distenv gives the pod: one set by
 * valueFrom or a $(reference), which cannot be read at admission, is denied
 * unless ctr also sets every variable of env a framework builds from it; a
 * literal must be a port number, or a non-empty address of at most 253
 * characters. Returns -1 with the denial ("distenv: container ...") in err; 0
 * when ctr keeps distenv's values; 1 when it gets its own (*addr: its literal
 * MASTER_ADDR or NULL, *port: its MASTER_PORT or 0). tg is ctr's target, whose
 * env_pairs spare walks for names its list cannot hold; NULL: walk.
 */
static int plan_own_master_check(const cJSON *ctr, const struct topology_target *tg,
                                 const struct env_list *env, const char **addr, long *port,
                                 char *err, size_t errlen)
{
	static const char *const master[2] = {"MASTER_ADDR", "MASTER_PORT"};
	const char *cname = json_str(ctr, "name"), *port_s = NULL, *vals[2] = {NULL, NULL};
	int found[2], ha, hp;

	user_envs(ctr, tg, master, 2, vals, found);
	ha = found[0];
	hp = found[1];
	if (ha > 0)
		*addr = vals[0];
	if (hp > 0)
		port_s = vals[1];

	*port = 0;
	if (ha <= 0)
		*addr = NULL;
	/* Nothing of distenv's would carry another address than the user's. */
	if ((ha == 0 || defines_all_derived(ctr, tg, env, "MASTER_ADDR")) &&
	    (hp == 0 || defines_all_derived(ctr, tg, env, "MASTER_PORT")))
		return 0;
	if ((ha < 0 && !defines_all_derived(ctr, tg, env, "MASTER_ADDR")) ||
	    (hp < 0 && !defines_all_derived(ctr, tg, env, "MASTER_PORT"))) {
		const char *which = ha < 0 && !defines_all_derived(ctr, tg, env, "MASTER_ADDR")
		                        ? "MASTER_ADDR"
		                        : "MASTER_PORT";
		char missing[512];

		missing_derived(ctr, tg, env, which, missing, sizeof(missing));
		snprintf(err, errlen,
		         "distenv: container %.63s sets %s from valueFrom or a $(reference), "
		         "which distenv cannot read at admission, so %s would disagree with it: "
		         "give it a literal value, set %s too, or remove it and use distenv's",
		         cname ? cname : "?", which, missing,
		         strchr(missing, ' ') != NULL ? "those" : "that");
		return -1;
	}
	if (hp > 0 && parse_long(port_s, 1, 65535, port) != 0) {
		snprintf(err, errlen,
		         "distenv: container %.63s sets MASTER_PORT to \"%.32s\", which is not "
		         "a port number between 1 and 65535",
		         cname ? cname : "?", port_s);
		return -1;
	}
	if (ha > 0 && ((*addr)[0] == '\0' || strlen(*addr) > 253)) {
		snprintf(err, errlen,
		         "distenv: container %.63s sets MASTER_ADDR to an empty or over-long "
		         "value",
		         cname ? cname : "?");
		return -1;
	}
	return 1;
}

/*
 * A container that sets MASTER_ADDR or MASTER_PORT itself gets every other
 * address variable from those values, so that env://, torchrun and JAX agree.
 */
static enum plan_status plan_own_master(struct pod_plan *plan, const cJSON *spec, char *err,
                                        size_t errlen)
{
	const struct topology *t = &plan->topo;
	int i, rc;

	for (i = 0; i < t->n_targets; i++) {
		const cJSON *ctr = topology_target_container(spec, &t->targets[i]);
		const char *addr;
		long port;

		rc = plan_own_master_check(ctr, &t->targets[i], &plan->env, &addr, &port, err,
		                           errlen);
		if (rc < 0)
			return PLAN_DENY;
		if (rc == 0)
			continue;
		if (plan->own_env == NULL &&
		    (plan->own_env = calloc((size_t)t->n_targets, sizeof(*plan->own_env))) == NULL)
			return PLAN_NOMEM;
		if (env_build_master(t, addr, port, &plan->own_env[i]) != 0)
			return PLAN_NOMEM;
	}
	return PLAN_OK;
}

int plan_template_own_master(const cJSON *pod_spec, const cJSON *anns, const struct config *cfg,
                             char *err, size_t errlen)
{
	const char *fws = json_map_str(anns, ANN_FRAMEWORKS);
	const char *el = json_map_str(anns, ANN_ELASTIC);
	struct topology t;
	struct env_list env;
	size_t f;
	int i, rc = 0;

	memset(&t, 0, sizeof(t));
	/*
	 * The annotation's frameworks, else the defaults, without the frameworks a
	 * resource adds (targets_frameworks_of): those (tpu) build nothing from
	 * MASTER_ADDR/MASTER_PORT, so the rule below would drop them anyway.
	 */
	t.frameworks = cfg->default_frameworks;
	if (fws != NULL && config_parse_frameworks(fws, &t.frameworks) != 0)
		return 0; /* a bad annotation is denied on its own */
	/* a framework that builds nothing from MASTER_ADDR/MASTER_PORT plays no part */
	for (f = 0; framework_at(f) != NULL; f++)
		if (framework_at(f)->from_addr[0] == NULL && framework_at(f)->from_port[0] == NULL)
			t.frameworks &= ~framework_at(f)->bit;
	if (el != NULL &&
	    annotation_range(el, cfg->max_world_size, &t.elastic_min, &t.elastic_max) != 0)
		t.elastic_min = t.elastic_max = 0;
	/* which variables a pod gets depends on its frameworks and elasticity, not its rank */
	t.world_size = 1;
	t.group = -1;
	t.max_restarts = -1;
	t.port = cfg->default_port;
	snprintf(t.nproc, sizeof(t.nproc), "1");
	snprintf(t.rdzv_id, sizeof(t.rdzv_id), "apply");
	if (topology_template_targets(pod_spec, anns, cfg, &t) != 0)
		return 0; /* targets that cannot be read are denied on their own */
	if (env_build_master(&t, "rank-0", t.port, &env) != 0) {
		free(t.targets);
		return 0;
	}
	for (i = 0; i < t.n_targets && rc == 0; i++) {
		const char *addr;
		long port;
		rc = plan_own_master_check(topology_target_container(pod_spec, &t.targets[i]),
		                           &t.targets[i], &env, &addr, &port, err, errlen) < 0;
	}
	env_list_free(&env);
	free(t.targets);
	return rc;
}

/* Copies src into dst (dst empty). Returns 0 or -1. */
static int env_copy(struct env_list *dst, const struct env_list *src)
{
	size_t i;

	memset(dst, 0, sizeof(*dst));
	dst->vars = calloc(src->n ? src->n : 1, sizeof(*dst->vars));
	if (dst->vars == NULL)
		return -1;
	dst->cap = src->n ? src->n : 1;
	for (i = 0; i < src->n; i++) {
		dst->vars[i].name = strdup(src->vars[i].name);
		dst->vars[i].value = strdup(src->vars[i].value);
		dst->vars[i].merge = src->vars[i].merge;
		dst->vars[i].fw = src->vars[i].fw;
		dst->n++;
		if (dst->vars[i].name == NULL || dst->vars[i].value == NULL)
			return -1;
	}
	return 0;
}

/*
 * PET_RDZV_CONF: a container's own literal value wins and is merged with, not
 * overwritten: distenv adds is_host when the value does not say it.
 */
static enum plan_status plan_rdzv_conf(struct pod_plan *plan, const cJSON *spec)
{
	const struct topology *t = &plan->topo;
	int i;

	if (env_find(&plan->env, "PET_RDZV_CONF") == NULL)
		return PLAN_OK;
	for (i = 0; i < t->n_targets; i++) {
		const cJSON *ctr = topology_target_container(spec, &t->targets[i]);
		const char *own = NULL;
		struct env_list *l;
		struct env_var *v;
		char merged[1024], warning[PLAN_WARNING_LEN];
		size_t k;

		if (ownenv_rdzv_conf_unmerged(ctr, warning, sizeof(warning))) {
			plan_warn_text(plan, warning);
			continue; /* read at run time: is_host cannot be merged in */
		}
		if (user_env(ctr, &t->targets[i], "PET_RDZV_CONF", &own) <= 0 ||
		    strstr(own, "is_host") != NULL)
			continue; /* absent (distenv's is injected), theirs says it, or cannot be
			             read */
		if (bounded_printf(merged, sizeof(merged), "%s%sis_host=%d", own, own[0] ? "," : "",
		                   t->rank == 0) != 0)
			continue; /* too long to merge: theirs stays as it is */
		if (plan->own_env == NULL &&
		    (plan->own_env = calloc((size_t)t->n_targets, sizeof(*plan->own_env))) == NULL)
			return PLAN_NOMEM;
		l = &plan->own_env[i];
		if (l->n == 0 && env_copy(l, &plan->env) != 0)
			return PLAN_NOMEM;
		for (k = 0, v = NULL; k < l->n; k++)
			if (strcmp(l->vars[k].name, "PET_RDZV_CONF") == 0)
				v = &l->vars[k];
		if (v == NULL)
			continue;
		free(v->value);
		if ((v->value = strdup(merged)) == NULL)
			return PLAN_NOMEM;
		v->merge = 1;
	}
	return PLAN_OK;
}

/* The value of name in l, or NULL. */
static const char *env_value(const struct env_list *l, const char *name)
{
	const struct env_var *v = env_find(l, name);

	return v != NULL ? v->value : NULL;
}

/*
 * Every target container's own entries of the variables distenv gives the pod
 * (they win: distenv does not add its own), judged against the world
 * (ownenv_judge): kept in plan->own for render and the marker, a difference
 * warned, and what is certainly wrong warned too (ownenv_wrong_warning): the
 * user's value wins in a pod, and /validate refuses it at apply. MASTER_ADDR is judged against the
 * world's; the variables built from it against what the container gets.
 */
static enum plan_status plan_own_values(struct pod_plan *plan, const cJSON *pod, const cJSON *spec)
{
	const struct topology *t = &plan->topo;
	const cJSON *meta = json_get(pod, "metadata");
	char msg[600];
	int i;

	for (i = 0; i < t->n_targets; i++) {
		const cJSON *ctr = topology_target_container(spec, &t->targets[i]);
		const struct env_list *l = pod_plan_target_env(plan, i);
		const char *cname = json_str(ctr, "name");
		size_t k;

		for (k = 0; k < l->n; k++) {
			const char *name = l->vars[k].name, *own, *world = l->vars[k].value;
			struct plan_own *o;
			char how[220];
			int rc;

			if (l->vars[k].merge || !topology_target_may_define(&t->targets[i], name))
				continue; /* merged with the container's own (PET_RDZV_CONF), or
				             absent */
			/* the kind's own webhook writes these (LeaderWorkerSet's TPU_*), shorter */
			if (t->kind != NULL && t->kind->own_env_prefix != NULL &&
			    strncmp(name, t->kind->own_env_prefix,
			            strlen(t->kind->own_env_prefix)) == 0)
				continue;
			rc = ownenv_value(ctr, meta, name, &own, how, sizeof(how));
			if (rc == 0 || (rc > 0 && strcmp(name, "PET_RDZV_CONF") == 0))
				continue; /* a literal PET_RDZV_CONF is merged, or says is_host
				             itself: not compared; a reference is recorded */
			/* a literal MASTER_PORT is followed by every address variable: agreed */
			if (strcmp(name, "MASTER_ADDR") == 0)
				world = env_value(&plan->env, name);
			if (plan->n_own % 8 == 0) {
				struct plan_own *p =
				    realloc(plan->own, (size_t)(plan->n_own + 8) * sizeof(*p));
				if (p == NULL)
					return PLAN_NOMEM;
				plan->own = p;
			}
			o = &plan->own[plan->n_own];
			memset(o, 0, sizeof(*o));
			o->target = i;
			snprintf(o->name, sizeof(o->name), "%s", name);
			snprintf(o->how, sizeof(o->how), "%s", how);
			if (rc > 0 && (o->value = strdup(own)) == NULL)
				return PLAN_NOMEM;
			plan->n_own++;
			if (rc < 0 || world == NULL)
				continue; /* read at run time (MASTER_*: plan_own_master) */
			switch (
			    ownenv_judge(t, cname, name, own, how, world, 0, msg, sizeof(msg))) {
			case OWNENV_AGREES:
				break;
			case OWNENV_WARN:
				o->differs = 1;
				plan_warn_text(plan, msg);
				break;
			case OWNENV_DENY:
				/* the user's value wins: refused at apply, warned here */
				o->differs = 1;
				ownenv_wrong_warning(cname, name, own, how, world, msg,
				                     sizeof(msg));
				plan_warn_text(plan, msg);
				break;
			}
		}
	}
	return PLAN_OK;
}

/* The plan's warnings, one a line (the distenv.dev/warnings annotation), into sb. */
static void plan_warning_lines(const struct pod_plan *plan, struct strbuf *sb)
{
	int i;

	for (i = 0; i < plan->n_warnings; i++)
		strbuf_printf(sb, "%s%s", i ? "\n" : "", plan->warnings[i]);
	if (plan->n_more > 0)
		strbuf_printf(sb, "\ndistenv: %d more warnings not shown (render prints them all)",
		              plan->n_more);
}

/* The pod's effective MASTER_ADDR and MASTER_PORT: its first target's, else the world's. */
static void plan_master(const struct pod_plan *plan, const char *addr, const char **a, long *port)
{
	const struct env_list *l = plan->topo.n_targets > 0 ? pod_plan_target_env(plan, 0) : NULL;
	const char *ea = l != NULL ? env_value(l, "MASTER_ADDR") : NULL;
	const char *ep = l != NULL ? env_value(l, "MASTER_PORT") : NULL;
	long p;
	int i;

	*a = ea != NULL ? ea : addr;
	if (ep == NULL || parse_long(ep, 1, 65535, port) != 0)
		*port = plan->topo.port;
	/* a container's own literal MASTER_ADDR/MASTER_PORT is what its process reads */
	for (i = 0; i < plan->n_own; i++) {
		const struct plan_own *o = &plan->own[i];
		if (o->target != 0 || o->value == NULL)
			continue;
		if (strcmp(o->name, "MASTER_ADDR") == 0 && o->value[0] != '\0')
			*a = o->value;
		else if (strcmp(o->name, "MASTER_PORT") == 0 &&
		         parse_long(o->value, 1, 65535, &p) == 0)
			*port = p;
	}
}

/*
 * ",own=NAME=value+NAME" into out: the variables whose own value a target
 * keeps, where it differs from distenv's or is set by a reference (a value
 * that is long or holds ',', '+' or '=' is named only).
 */
static void own_marker(const struct pod_plan *plan, char *out, size_t outlen)
{
	size_t used = 0;
	int i, n = 0;

	out[0] = '\0';
	for (i = 0; i < plan->n_own; i++) {
		const struct plan_own *o = &plan->own[i];
		const char *v = o->value;
		int bare;

		if (o->value != NULL && !o->differs)
			continue;
		bare = v == NULL || strlen(v) > 40 || strpbrk(v, ",+=") != NULL;
		used = strlen(out);
		if (used + strlen(o->name) + (bare ? 0 : strlen(v) + 1) + 7 >= outlen)
			break;
		snprintf(out + used, outlen - used, "%s%s%s%s", n++ ? "+" : ",own=", o->name,
		         bare ? "" : "=", bare ? "" : v);
	}
}

/*
 * The init container of distenv.dev/wait-for-master: `distenv-webhook wait`
 * from the webhook's own image, reading MASTER_ADDR, MASTER_PORT and RANK;
 * non-root, read-only, no privileges, tiny resources (the restricted Pod
 * Security Standard); addr and port are what the pod's first target reads.
 * Returns a new object (caller deletes) or NULL.
 */
static cJSON *wait_container(const struct pod_plan *plan, const struct config *cfg,
                             const char *addr, long port)
{
	const struct topology *t = &plan->topo;
	char timeout[32], num[32];
	cJSON *c = cJSON_CreateObject(), *cmd, *env, *e, *res, *req, *lim, *sc, *caps, *drop, *sp;

	if (c == NULL)
		return NULL;
	snprintf(timeout, sizeof(timeout), "%lds", t->wait_seconds);
	cJSON_AddStringToObject(c, "name", WAIT_CONTAINER);
	cJSON_AddStringToObject(c, "image", cfg->wait_image);
	cJSON_AddStringToObject(c, "imagePullPolicy", cfg->wait_pull_policy);
	cmd = cJSON_AddArrayToObject(c, "command");
	cJSON_AddItemToArray(cmd, cJSON_CreateString("/usr/local/bin/distenv-webhook"));
	cJSON_AddItemToArray(cmd, cJSON_CreateString("wait"));
	cJSON_AddItemToArray(cmd, cJSON_CreateString("--timeout"));
	cJSON_AddItemToArray(cmd, cJSON_CreateString(timeout));
	env = cJSON_AddArrayToObject(c, "env");
	e = cJSON_CreateObject();
	cJSON_AddItemToArray(env, e);
	cJSON_AddStringToObject(e, "name", "MASTER_ADDR");
	cJSON_AddStringToObject(e, "value", addr);
	e = cJSON_CreateObject();
	cJSON_AddItemToArray(env, e);
	snprintf(num, sizeof(num), "%ld", port);
	cJSON_AddStringToObject(e, "name", "MASTER_PORT");
	cJSON_AddStringToObject(e, "value", num);
	e = cJSON_CreateObject();
	cJSON_AddItemToArray(env, e);
	/* `wait` skips the port on RANK 0, the master's pod, whose own process opens it. */
	snprintf(num, sizeof(num), "%ld", t->rank);
	cJSON_AddStringToObject(e, "name", "RANK");
	cJSON_AddStringToObject(e, "value", num);
	res = cJSON_AddObjectToObject(c, "resources");
	req = cJSON_AddObjectToObject(res, "requests");
	cJSON_AddStringToObject(req, "cpu", "10m");
	cJSON_AddStringToObject(req, "memory", "16Mi");
	lim = cJSON_AddObjectToObject(res, "limits");
	cJSON_AddStringToObject(lim, "cpu", "100m");
	cJSON_AddStringToObject(lim, "memory", "32Mi");
	sc = cJSON_AddObjectToObject(c, "securityContext");
	cJSON_AddTrueToObject(sc, "runAsNonRoot");
	cJSON_AddNumberToObject(sc, "runAsUser", 65532);
	cJSON_AddNumberToObject(sc, "runAsGroup", 65532);
	cJSON_AddFalseToObject(sc, "allowPrivilegeEscalation");
	cJSON_AddTrueToObject(sc, "readOnlyRootFilesystem");
	caps = cJSON_AddObjectToObject(sc, "capabilities");
	drop = cJSON_AddArrayToObject(caps, "drop");
	cJSON_AddItemToArray(drop, cJSON_CreateString("ALL"));
	sp = cJSON_AddObjectToObject(sc, "seccompProfile");
	cJSON_AddStringToObject(sp, "type", "RuntimeDefault");
	{
		cJSON *mounts = cJSON_AddArrayToObject(c, "volumeMounts"),
		      *m = cJSON_CreateObject();
		cJSON_AddItemToArray(mounts, m);
		cJSON_AddStringToObject(m, "name", WAIT_VOLUME);
		cJSON_AddStringToObject(m, "mountPath",
		                        "/var/run/secrets/kubernetes.io/serviceaccount");
		cJSON_AddTrueToObject(m, "readOnly");
	}
	cJSON_AddStringToObject(c, "terminationMessagePolicy", "FallbackToLogsOnError");
	if (sp == NULL || cJSON_GetArraySize(env) != 3 || cJSON_GetArraySize(cmd) != 4) {
		cJSON_Delete(c);
		return NULL;
	}
	return c;
}

/* Leaves the variables of framework fw out of every env list of the plan. */
static void plan_omit(struct pod_plan *plan, const struct framework *fw)
{
	size_t used = strlen(plan->omitted);
	int i;

	env_remove_fw(&plan->env, fw->bit);
	for (i = 0; plan->own_env != NULL && i < plan->topo.n_targets; i++)
		env_remove_fw(&plan->own_env[i], fw->bit);
	snprintf(plan->omitted + used, sizeof(plan->omitted) - used, "%s%s", used ? "+" : "",
	         fw->grows);
}

/* The framework whose growing variable v is (framework.h, grows), or NULL. */
static const struct framework *grower_of(const struct env_var *v)
{
	const struct framework *fw = framework_of(v->fw);

	return fw != NULL && fw->grows != NULL && strcmp(fw->grows, v->name) == 0 ? fw : NULL;
}

/*
 * Budgets: every "NAME=value" within ENV_STRING_MAX, the pod with its patch
 * within POD_BYTES_MAX. A variable that grows with the world (a framework's
 * grows: TF_CONFIG, a TPU host list) is left out with its framework's other
 * variables (with a warning) when the framework was only a default, and denies
 * the pod when the pod asked for it.
 */
static enum plan_status plan_budget(struct pod_plan *plan, size_t pod_bytes, char *err,
                                    size_t errlen)
{
	const struct topology *t = &plan->topo;
	const struct framework *fw, *grown = NULL;
	char drop[160] = "";
	size_t i, total = pod_bytes;
	int k;

	for (i = 0; i < plan->env.n; i++) {
		const struct env_var *v = &plan->env.vars[i];
		size_t sz = env_string_size(v);

		fw = grower_of(v);
		if (fw != NULL && grown == NULL && !(t->frameworks_asked & fw->bit))
			grown = fw; /* the first a budget may leave out */
		if (fw != NULL && strlen(drop) + strlen(fw->name) + 4 < sizeof(drop))
			snprintf(drop + strlen(drop), sizeof(drop) - strlen(drop), "%s%s",
			         drop[0] ? ", " : "", fw->name);
		if (sz <= ENV_STRING_MAX)
			continue;
		if (fw != NULL && !(t->frameworks_asked & fw->bit)) {
			plan_warn(plan,
			          "distenv: %s left out: %zu bytes for %ld ranks, over Linux's "
			          "%d per variable",
			          v->name, sz, t->world_size, ENV_STRING_MAX);
			plan_omit(plan, fw);
			return plan_budget(plan, pod_bytes, err, errlen);
		}
		snprintf(
		    err, errlen,
		    "distenv: %s would be %zu bytes for a world size of %ld, above Linux's limit "
		    "of %d bytes for one environment string (exec would fail with E2BIG): %s%s%s",
		    v->name, sz, t->world_size, ENV_STRING_MAX, fw != NULL ? "drop " : "",
		    fw != NULL ? fw->name : "",
		    fw != NULL ? " from the annotation distenv.dev/frameworks, or use a smaller "
		                 "world"
		               : "use shorter names or a smaller world");
		return PLAN_DENY;
	}
	for (k = 0; k < t->n_targets; k++)
		total += env_patch_bytes(pod_plan_target_env(plan, k));
	if (total <= POD_BYTES_MAX)
		return PLAN_OK;
	if (grown != NULL) {
		plan_warn(plan,
		          "distenv: %s left out: the pod would pass %d bytes with it in %d "
		          "containers",
		          grown->grows, POD_BYTES_MAX, t->n_targets);
		plan_omit(plan, grown);
		return plan_budget(plan, pod_bytes, err, errlen);
	}
	snprintf(err, errlen,
	         "distenv: the pod with its injected environment would be about %zu bytes, above "
	         "the %d bytes distenv keeps pods under so that the API server can store them: "
	         "%s%s%sinject into fewer containers (annotation distenv.dev/containers)",
	         total, POD_BYTES_MAX, drop[0] ? "drop " : "", drop,
	         drop[0] ? " from distenv.dev/frameworks, or " : "");
	return PLAN_DENY;
}

enum plan_status pod_plan_build(const cJSON *pod, const char *ns, size_t pod_bytes,
                                const struct config *cfg, const struct workload_lookup *lookup,
                                struct pod_plan *plan, char *err, size_t errlen)
{
	const cJSON *spec = json_get(pod, "spec");
	const struct env_list **envs = NULL;
	cJSON *wait = NULL;
	char addr[512], marker[1100], own[320];
	struct strbuf warnings;
	const char *maddr;
	long mport;
	enum topology_status ts;
	enum patch_status ps;
	enum plan_status rc = PLAN_NOMEM;
	int i;

	memset(plan, 0, sizeof(*plan));
	strbuf_init(&warnings);
	ts = topology_resolve(pod, ns, cfg, lookup, &plan->topo, err, errlen);
	if (ts != TOPOLOGY_OK)
		return ts == TOPOLOGY_DENY ? PLAN_DENY : PLAN_NOMEM;
	if (env_build(&plan->topo, &plan->env) != 0 ||
	    env_master_addr(&plan->topo, addr, sizeof(addr)) != 0)
		goto out;
	if ((rc = plan_own_master(plan, spec, err, errlen)) != PLAN_OK) {
		plan->topo.reason = DENY_ENV;
		goto out;
	}
	if ((rc = plan_rdzv_conf(plan, spec)) != PLAN_OK)
		goto out;
	if ((rc = plan_budget(plan, pod_bytes, err, errlen)) != PLAN_OK) {
		plan->topo.reason = DENY_LIMIT;
		goto out;
	}
	if ((rc = plan_own_values(plan, pod, spec)) != PLAN_OK)
		goto out;
	{
		char lw[3][PLAN_WARNING_LEN], dns[PLAN_WARNING_LEN];
		int k,
		    n = topology_launcher_warnings(&plan->topo, spec, lw[0], PLAN_WARNING_LEN, 3);

		for (k = 0; k < n; k++)
			plan_warn_text(plan, lw[k]);
		if (topology_dns_warning(spec, dns, sizeof(dns)))
			plan_warn(plan, "distenv: %s", dns);
		/*
		 * Istio's injector runs after distenv (webhooks are called in name
		 * order); reinvoked (IfNeeded), distenv sees its sidecar here.
		 */
		switch (mesh_redirects(pod, plan->topo.port, NULL)) {
		case MESH_IN | MESH_OUT:
			plan_warn(plan,
			          "distenv: Istio's sidecar takes port %ld: annotate "
			          "traffic.sidecar.istio.io/exclude{Inbound,Outbound}Ports",
			          plan->topo.port);
			break;
		case MESH_IN:
			plan_warn(plan,
			          "distenv: Istio's sidecar takes port %ld: annotate "
			          "traffic.sidecar.istio.io/excludeInboundPorts",
			          plan->topo.port);
			break;
		case MESH_OUT:
			plan_warn(plan,
			          "distenv: Istio's sidecar takes port %ld: annotate "
			          "traffic.sidecar.istio.io/excludeOutboundPorts",
			          plan->topo.port);
			break;
		default:
			break;
		}
	}
	plan_master(plan, addr, &maddr, &mport);
	if (plan->topo.wait_seconds > 0 &&
	    (wait = wait_container(plan, cfg, maddr, mport)) == NULL) {
		rc = PLAN_NOMEM;
		goto out;
	}
	rc = PLAN_NOMEM;
	own_marker(plan, own, sizeof(own));
	fmt_printf(marker, sizeof(marker), "rank=%ld,world-size=%ld,master=%s:%ld%s%s%s",
	           plan->topo.rank, plan->topo.world_size, maddr, mport,
	           plan->omitted[0] ? ",omitted=" : "", plan->omitted, own);
	envs = calloc((size_t)plan->topo.n_targets, sizeof(*envs));
	if (envs == NULL)
		goto out;
	for (i = 0; i < plan->topo.n_targets; i++)
		envs[i] = pod_plan_target_env(plan, i);
	plan_warning_lines(plan, &warnings);
	if (warnings.oom)
		goto out;
	ps = patch_build(pod, &plan->topo, envs, wait, marker, warnings.buf,
	                 cfg->max_env_per_container, &plan->patch, &plan->patch_ops, err, errlen);
	rc = ps == PATCH_OK ? PLAN_OK : ps == PATCH_DENY ? PLAN_DENY : PLAN_NOMEM;
	if (ps == PATCH_DENY)
		plan->topo.reason = DENY_LIMIT; /* env entries over the limit */
out:
	free(envs);
	strbuf_free(&warnings);
	if (rc == PLAN_OK)
		plan->wait = wait; /* render prints it */
	else
		cJSON_Delete(wait);
	if (rc != PLAN_OK)
		pod_plan_free(plan);
	return rc;
}

void pod_plan_free(struct pod_plan *plan)
{
	int i;

	if (plan == NULL)
		return;
	for (i = 0; plan->own_env != NULL && i < plan->topo.n_targets; i++)
		env_list_free(&plan->own_env[i]);
	free(plan->own_env);
	plan->own_env = NULL;
	for (i = 0; i < plan->n_own; i++)
		free(plan->own[i].value);
	free(plan->own);
	plan->own = NULL;
	plan->n_own = 0;
	cJSON_Delete(plan->wait);
	plan->wait = NULL;
	topology_free(&plan->topo);
	env_list_free(&plan->env);
	strbuf_free(&plan->patch);
	plan->patch_ops = 0;
}
