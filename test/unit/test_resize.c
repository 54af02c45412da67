/*
 * An UPDATE that changes the world (validate_update), row by row: which
 * changes are warned, with the old and the new world and what to do, and which
 * are not (to or from 0, a suspended Job, within the running pods' elastic
 * range, a template that never opted in, a LeaderWorkerSet's groups).
 */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "validate.h"

static char *dq(const char *s)
{
	char *p = strdup(s), *q;

	for (q = p; *q; q++)
		if (*q == '\'')
			*q = '"';
	return p;
}

#define OPT   "'labels':{'distenv.dev/inject':'true'}"
#define NOOPT "'labels':{'app':'x'}"
#define STS(reps, meta)                                                                            \
	"{'metadata':{'name':'ddp'},'spec':{'replicas':" reps ",'serviceName':'ddp',"              \
	"'template':{'metadata':{" meta "},'spec':{'containers':[{'name':'t'}]}}}}"
#define ELASTIC(range) OPT ",'annotations':{'distenv.dev/elastic':'" range "'}"
#define JOB(n, extra)                                                                              \
	"{'metadata':{'name':'train'},'spec':{" extra "'completions':" n ",'parallelism':" n       \
	",'completionMode':'Indexed','template':{'metadata':{" OPT "},'spec':{'subdomain':'t',"    \
	"'containers':[{'name':'t'}]}}}}"
#define RJOB(name, reps, pods)                                                                     \
	"{'name':'" name "','replicas':" reps ",'template':{'spec':{'completions':" pods           \
	",'parallelism':" pods ",'completionMode':'Indexed','template':{'metadata':{" OPT          \
	"},'spec':{'containers':[{'name':'t'}]}}}}}"
/* A replicated Job of 1 Job of pods pods, distenv.dev/elastic range on its template. */
#define RJOB_EL(name, pods, range)                                                                 \
	"{'name':'" name "','replicas':1,'template':{'spec':{'completions':" pods                  \
	",'parallelism':" pods ",'completionMode':'Indexed','template':{'metadata':{" ELASTIC(     \
	    range) "},'spec':{'containers':[{'name':'t'}]}}}}}"
#define JOBSET(rjobs) "{'metadata':{'name':'js'},'spec':{'replicatedJobs':[" rjobs "]}}"
#define LWS(reps, size)                                                                            \
	"{'metadata':{'name':'lws'},'spec':{'replicas':" reps                                      \
	",'leaderWorkerTemplate':{'size':" size ",'workerTemplate':{'metadata':{" OPT              \
	"},'spec':{'containers':[{'name':'t'}]}}}}}"

static const struct {
	const char *name, *kind, *old, *now;
	/* each warning expected, in order ("|" between two); NULL: no warning */
	const char *want;
} cases[] = {
    {"sts 4 -> 8", "StatefulSet", STS("4", OPT), STS("8", OPT),
     "distenv: StatefulSet ddp: world 4 -> 8 ranks, but the running pods keep WORLD_SIZE=4|"
     "distenv: to form one world of 8, restart every pod (kubectl rollout restart "
     "statefulset/ddp) or use distenv.dev/elastic"},
    {"sts 4 -> 2", "StatefulSet", STS("4", OPT), STS("2", OPT),
     "distenv: StatefulSet ddp: world 4 -> 2 ranks, but the running pods keep WORLD_SIZE=4|"
     "distenv: to form one world of 2, restart every pod (kubectl rollout restart "
     "statefulset/ddp) or use distenv.dev/elastic"},
    {"sts to 0", "StatefulSet", STS("4", OPT), STS("0", OPT), NULL},
    {"sts from 0", "StatefulSet", STS("0", OPT), STS("4", OPT), NULL},
    {"sts unchanged", "StatefulSet", STS("4", OPT), STS("4", OPT), NULL},
    {"sts within elastic", "StatefulSet", STS("2", ELASTIC("2:3")), STS("3", ELASTIC("2:3")), NULL},
    {"sts down to elastic MIN", "StatefulSet", STS("3", ELASTIC("2:3")), STS("2", ELASTIC("2:3")),
     NULL},
    {"sts below elastic MIN", "StatefulSet", STS("3", ELASTIC("2:3")), STS("1", ELASTIC("2:3")),
     "distenv: StatefulSet ddp: world 3 -> 1 ranks, but the running pods keep WORLD_SIZE=3|"
     "distenv: to form one world of 1, restart every pod (kubectl rollout restart "
     "statefulset/ddp) or use distenv.dev/elastic"},
    {"sts past elastic MAX", "StatefulSet", STS("2", ELASTIC("2:3")), STS("4", ELASTIC("2:4")),
     "distenv: StatefulSet ddp: world 2 -> 4 ranks, but the running pods keep WORLD_SIZE=2|"
     "distenv: to form one world of 4, restart every pod (kubectl rollout restart "
     "statefulset/ddp) or use distenv.dev/elastic"},
    {"sts opts in now", "StatefulSet", STS("4", NOOPT), STS("8", OPT), NULL},
    {"sts world-size annotation wins", "StatefulSet",
     STS("4", OPT ",'annotations':{'distenv.dev/world-size':'4'}"),
     STS("8", OPT ",'annotations':{'distenv.dev/world-size':'4'}"), NULL},
    {"job 4 -> 6", "Job", JOB("4", ""), JOB("6", ""),
     "distenv: Job train: world 4 -> 6 ranks, but the running pods keep WORLD_SIZE=4|"
     "distenv: to form one world of 6, restart every pod (delete and re-create Job train) or "
     "use distenv.dev/elastic"},
    {"job suspended before (Kueue admits it smaller)", "Job", JOB("4", "'suspend':true,"),
     JOB("2", "'suspend':false,"), NULL},
    {"jobset parallelism 2 -> 3", "JobSet", JOBSET(RJOB("w", "2", "2")),
     JOBSET(RJOB("w", "2", "3")),
     "distenv: JobSet js: world 4 -> 6 ranks, but the running pods keep WORLD_SIZE=4|"
     "distenv: to form one world of 6, restart every pod (delete and re-create JobSet js) or use "
     "distenv.dev/elastic"},
    {"jobset replicas 2 -> 1", "JobSet", JOBSET(RJOB("w", "2", "2")), JOBSET(RJOB("w", "1", "2")),
     "distenv: JobSet js: world 4 -> 2 ranks, but the running pods keep WORLD_SIZE=4|"
     "distenv: to form one world of 2, restart every pod (delete and re-create JobSet js) or use "
     "distenv.dev/elastic"},
    /* the range the running pods were told is every template's: one not elastic keeps its world */
    {"jobset elastic on every replicated Job, grown within", "JobSet",
     JOBSET(RJOB_EL("a", "2", "2:8") "," RJOB_EL("b", "2", "2:8")),
     JOBSET(RJOB_EL("a", "2", "2:8") "," RJOB_EL("b", "3", "2:8")), NULL},
    {"jobset elastic on the first replicated Job only", "JobSet",
     JOBSET(RJOB_EL("a", "2", "2:8") "," RJOB("b", "1", "2")),
     JOBSET(RJOB_EL("a", "2", "2:8") "," RJOB("b", "1", "3")),
     "distenv: JobSet js: world 4 -> 5 ranks, but the running pods keep WORLD_SIZE=4|"
     "distenv: to form one world of 5, restart every pod (delete and re-create JobSet js) or use "
     "distenv.dev/elastic"},
    {"jobset elastic on the last replicated Job only", "JobSet",
     JOBSET(RJOB("a", "1", "2") "," RJOB_EL("b", "2", "2:8")),
     JOBSET(RJOB("a", "1", "2") "," RJOB_EL("b", "3", "2:8")),
     "distenv: JobSet js: world 4 -> 5 ranks, but the running pods keep WORLD_SIZE=4|"
     "distenv: to form one world of 5, restart every pod (delete and re-create JobSet js) or use "
     "distenv.dev/elastic"},
    {"jobset grown past the last replicated Job's narrower MAX", "JobSet",
     JOBSET(RJOB_EL("a", "2", "2:8") "," RJOB_EL("b", "2", "2:4")),
     JOBSET(RJOB_EL("a", "2", "2:8") "," RJOB_EL("b", "3", "2:4")),
     "distenv: JobSet js: world 4 -> 5 ranks, but the running pods keep WORLD_SIZE=4|"
     "distenv: to form one world of 5, restart every pod (delete and re-create JobSet js) or use "
     "distenv.dev/elastic"},
    {"jobset shrunk below the first replicated Job's higher MIN", "JobSet",
     JOBSET(RJOB_EL("a", "2", "4:8") "," RJOB_EL("b", "2", "2:8")),
     JOBSET(RJOB_EL("a", "2", "4:8") "," RJOB_EL("b", "1", "2:8")),
     "distenv: JobSet js: world 4 -> 3 ranks, but the running pods keep WORLD_SIZE=4|"
     "distenv: to form one world of 3, restart every pod (delete and re-create JobSet js) or use "
     "distenv.dev/elastic"},
    {"lws replicas: each group its own world", "LeaderWorkerSet", LWS("2", "4"), LWS("5", "4"),
     NULL},
    {"lws size", "LeaderWorkerSet", LWS("2", "4"), LWS("2", "8"),
     "distenv: LeaderWorkerSet lws: 4 -> 8 pods of a group; its controller re-creates each "
     "world whole at the new size"},
};

#define KJOB(anns, par, tmpl_anns)                                                                 \
	"{'metadata':{'name':'train','labels':{'kueue.x-k8s.io/"                                   \
	"queue-name':'q'},'annotations':{" anns "}},'spec':{'completions':4,'parallelism':" par    \
	",'completionMode':'Indexed','template':{"                                                 \
	"'metadata':{" OPT ",'annotations':{" tmpl_anns                                            \
	"}},'spec':{'subdomain':'t','containers':[{"                                               \
	"'name':'t'}]}}}}"
#define MINPAR "'kueue.x-k8s.io/job-min-parallelism':'2'"
#define EQUAL  "'kueue.x-k8s.io/job-completions-equal-parallelism':'true'"

/* Kueue's annotations at apply time (validate_workload): what is warned, what is refused. */
static const struct {
	const char *name, *obj;
	const char *want; /* the warnings, "|" between two; NULL: none */
	int refused;
} kueue[] = {
    {"min-parallelism without equal", KJOB(MINPAR, "4", ""),
     "distenv: Job train: with kueue.x-k8s.io/job-min-parallelism Kueue may start fewer pods than "
     "its ranks|distenv: their pods would be refused: add "
     "kueue.x-k8s.io/job-completions-equal-parallelism: \"true\"",
     0},
    {"min-parallelism with equal", KJOB(MINPAR "," EQUAL, "4", ""), NULL, 0},
    {"Kueue lowered parallelism (its update)", KJOB(MINPAR, "2", ""),
     "distenv: Job train runs 2 of its 4 ranks at once, as Kueue admitted it|distenv: so its pods "
     "are refused: give it kueue.x-k8s.io/job-completions-equal-parallelism: \"true\"|distenv: Job "
     "train: with kueue.x-k8s.io/job-min-parallelism Kueue may start fewer pods than its "
     "ranks|distenv: their pods would be refused: add "
     "kueue.x-k8s.io/job-completions-equal-parallelism: \"true\"",
     0},
    {"parallelism below completions, no Kueue annotation", KJOB("", "2", ""), NULL, 1},
    {"elastic-job on a world that is not elastic",
     KJOB("'kueue.x-k8s.io/elastic-job':'true'", "4", ""),
     "distenv: kueue.x-k8s.io/elastic-job resizes Job train while it runs: set distenv.dev/elastic "
     "MIN:MAX",
     0},
    {"elastic-job on an elastic world",
     KJOB("'kueue.x-k8s.io/elastic-job':'true'", "4", "'distenv.dev/elastic':'2:4'"), NULL, 0},
};

static void test_kueue(const struct config *cfg)
{
	size_t i;

	for (i = 0; i < sizeof(kueue) / sizeof(kueue[0]); i++) {
		char *a = dq(kueue[i].obj), want[1024], *tok, *save = NULL;
		cJSON *obj = cJSON_Parse(a);
		struct validation *v = calloc(1, sizeof(*v));
		int n = 0;

		CHECK(obj != NULL && v != NULL, "%s: JSON", kueue[i].name);
		if (obj == NULL || v == NULL)
			goto next;
		validate_workload(obj, "Job", "ml", cfg, NULL, NULL, v);
		CHECK(v->opted_in, "%s: opted in", kueue[i].name);
		CHECK((v->n_problems > 0) == kueue[i].refused, "%s: %d problems: %s", kueue[i].name,
		      v->n_problems, v->denial);
		snprintf(want, sizeof(want), "%s", kueue[i].want ? kueue[i].want : "");
		for (tok = strtok_r(want, "|", &save); tok; tok = strtok_r(NULL, "|", &save), n++) {
			CHECK(n < v->n_warnings, "%s: warning %d missing, want '%s'", kueue[i].name,
			      n, tok);
			if (n < v->n_warnings)
				CHECK_STR(v->warnings[n], tok, kueue[i].name);
		}
		CHECK(v->n_warnings == n, "%s: %d warnings, want %d", kueue[i].name, v->n_warnings,
		      n);
	next:
		cJSON_Delete(obj);
		free(a);
		free(v);
	}
}

int main(void)
{
	struct config cfg;
	size_t i;

	config_defaults(&cfg);
	test_kueue(&cfg);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *a = dq(cases[i].old), *b = dq(cases[i].now), want[1024], *tok, *save = NULL;
		cJSON *old = cJSON_Parse(a), *now = cJSON_Parse(b);
		struct validation *v = calloc(1, sizeof(*v));
		int n = 0;

		CHECK(old != NULL && now != NULL && v != NULL, "%s: JSON", cases[i].name);
		if (old == NULL || now == NULL || v == NULL)
			goto next;
		validate_update(old, now, cases[i].kind, "ml", &cfg, v);
		snprintf(want, sizeof(want), "%s", cases[i].want ? cases[i].want : "");
		for (tok = strtok_r(want, "|", &save); tok; tok = strtok_r(NULL, "|", &save), n++) {
			CHECK(n < v->n_warnings, "%s: warning %d missing, want '%s'", cases[i].name,
			      n, tok);
			if (n < v->n_warnings) {
				CHECK_STR(v->warnings[n], tok, cases[i].name);
				CHECK(strlen(v->warnings[n]) < 120,
				      "%s: warning %d is %zu characters", cases[i].name, n,
				      strlen(v->warnings[n]));
			}
		}
		CHECK(v->n_warnings == n && v->n_problems == 0, "%s: %d warnings, %d problems",
		      cases[i].name, v->n_warnings, v->n_problems);
	next:
		cJSON_Delete(old);
		cJSON_Delete(now);
		free(a);
		free(b);
		free(v);
	}
	TEST_MAIN_END("resize");
}
