/*
 * doctor's rules on recorded API objects (the JSON files of test/data/doctor, written by
 * gen.py in the API server's shapes): each broken job is diagnosed with its
 * own first cause, the healthy one with none (and its text, whole; ranks read
 * from distenv's annotation alone where no pod-index label is written; a
 * workload with no pod; a port of 0 in the annotation); then KIND/NAME
 * parsing, the pod selector (one that fills its buffer) and Service name, and
 * Istio's redirection read back from pods shaped as its injector shapes them.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "kind.h"
#include "json.h"
#include "mesh.h"
#include "strbuf.h"
#include "testutil.h"

#define FX_DIR "test/data/doctor/"

static const char *const keys[] = {"workload",
                                   "pods",
                                   "events",
                                   "service",
                                   "endpointslices",
                                   "namespace",
                                   "networkpolicies",
                                   "mutatingwebhookconfigurations",
                                   "webhookendpointslices"};

static struct doctor_obj obj_of(const cJSON *fx, const char *key)
{
	char uk[64];
	struct doctor_obj o = {NULL, NULL};

	snprintf(uk, sizeof(uk), "unread:%s", key);
	o.obj = json_get(fx, key);
	if (json_str(fx, uk) != NULL) {
		o.obj = NULL;
		o.unread = json_str(fx, uk);
	}
	return o;
}

/* Runs doctor on fixture name; *fx is the parsed fixture (caller frees). */
static int run(const char *name, cJSON **fx, struct doctor_input *in, struct doctor_report *r)
{
	char path[256], svc[256] = "";
	size_t len = 0;
	char *text;

	snprintf(path, sizeof(path), FX_DIR "%s.json", name);
	text = test_read(path, &len);
	*fx = text ? cJSON_ParseWithLength(text, len) : NULL;
	free(text);
	if (*fx == NULL)
		return -1;
	memset(in, 0, sizeof(*in));
	/* a StatefulSet ddp, unless the fixture names another kind and name (doctorKind,
	 * doctorName) */
	in->kind = kind_named(NULL, json_str(*fx, "doctorKind") ? json_str(*fx, "doctorKind")
	                                                        : "StatefulSet");
	in->ns = "ml";
	in->name = json_str(*fx, "doctorName") ? json_str(*fx, "doctorName") : "ddp";
	in->workload = obj_of(*fx, keys[0]);
	in->pods = obj_of(*fx, keys[1]);
	in->events = obj_of(*fx, keys[2]);
	doctor_service_name(in->kind, in->workload.obj, in->pods.obj, in->name, svc, sizeof(svc));
	in->service_name = strdup(svc);
	in->service = obj_of(*fx, keys[3]);
	in->slices = obj_of(*fx, keys[4]);
	in->namespace_ = obj_of(*fx, keys[5]);
	in->netpols = obj_of(*fx, keys[6]);
	in->mwcs = obj_of(*fx, keys[7]);
	in->webhook_slices = obj_of(*fx, keys[8]);
	doctor_run(in, r);
	return 0;
}

static void test_cases(void)
{
	static const struct {
		const char *fixture;
		const char *first;   /* the first blocking check; "" for none */
		const char *says;    /* in its title or evidence */
		int warns, unknowns; /* how many ! and ? lines */
	} cases[] = {
	    {"healthy", "", "", 0, 0},
	    {"service-missing", "service", "Service ddp does not exist", 0, 0},
	    {"service-selector", "service", "selector app=ddp-wrong; the pod has app=ddp", 0, 0},
	    {"service-not-headless", "service", "spec.clusterIP: 198.19.128.40", 0, 0},
	    {"rank0-not-ready", "endpoint", "does not publish not-ready addresses", 0, 0},
	    {"rank0-pending", "scheduling", "1 Insufficient cpu", 0, 0},
	    {"pending-event-only", "scheduling",
	     "the scheduler: \"0/1 nodes are available: 1 node(s) didn't match Pod's node", 0, 0},
	    {"scaled", "world", "they wait for a world of 3, it now has 4", 0, 0},
	    {"split-master", "world", "ddp-2: world 3, master ddp-0.ddp-old.ml.svc.ml.example", 0,
	     0},
	    {"own-rank", "own-env", "ddp-1/trainer: RANK=0 (distenv's: 1)", 0, 0},
	    {"own-rank-hidden", "", "", 0, 0},
	    {"own-rank-last", "own-env", "ddp-1/trainer: RANK=0 (distenv's: 1)", 0, 0},
	    {"netpol", "netpol", "NetworkPolicy web-only drops connections to rank 0 on port 29500",
	     0, 0},
	    {"not-installed", "webhook", "no MutatingWebhookConfiguration has the webhook", 0, 0},
	    {"ca-missing", "webhook", "clientConfig.caBundle is empty", 0, 0},
	    {"webhook-down", "webhook", "no ready endpoint", 0, 0},
	    {"denied", "opt-in", "denied the request: distenv: distenv.dev/world-size", 0, 0},
	    {"istio", "mesh", "ddp-0: istio-proxy redirects inbound and outbound", 0, 0},
	    {"istio-excluded", "", "", 0, 0},
	    {"hostnetwork", "hostnetwork", "ddp-0 (dnsPolicy ClusterFirst)", 0, 0},
	    {"image-pull", "containers", "container trainer is ImagePullBackOff", 0, 0},
	    {"out-of-step", "", "", 2, 0},
	    {"rank-missing", "ranks", "missing: 1 (ddp-1)", 0, 0},
	    {"no-pod-index", "", "", 0, 0},
	    {"own-rank-denied", "ranks",
	     "missing: 1 (ddp-1), 2 (ddp-2); event FailedCreate: \"create Pod ddp-2", 0, 0},
	    {"forbidden", "", "", 0, 2},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct doctor_report *r = calloc(1, sizeof(*r));
		struct doctor_input in;
		cJSON *fx = NULL;
		const struct doctor_finding *f;
		struct strbuf sb;

		if (run(cases[i].fixture, &fx, &in, r) != 0) {
			CHECK(0, "%s: fixture not read", cases[i].fixture);
			free(r);
			continue;
		}
		if (cases[i].first[0] == '\0') {
			CHECK(r->n_fail == 0, "%s: %d blocking, first: %s", cases[i].fixture,
			      r->n_fail, r->first_fail >= 0 ? r->f[r->first_fail].title : "");
		} else {
			CHECK(r->first_fail >= 0, "%s: nothing blocking found", cases[i].fixture);
			if (r->first_fail >= 0) {
				f = &r->f[r->first_fail];
				CHECK_STR(f->check, cases[i].first, cases[i].fixture);
				CHECK(strstr(f->title, cases[i].says) ||
				          strstr(f->evidence, cases[i].says),
				      "%s: '%s' not in '%s' / '%s'", cases[i].fixture,
				      cases[i].says, f->title, f->evidence);
				CHECK(f->fix[0] != '\0', "%s: no fix", cases[i].fixture);
			}
		}
		CHECK(r->n_warn == cases[i].warns, "%s: %d warnings, want %d", cases[i].fixture,
		      r->n_warn, cases[i].warns);
		CHECK(r->n_unknown == cases[i].unknowns, "%s: %d unknown, want %d",
		      cases[i].fixture, r->n_unknown, cases[i].unknowns);
		/* the text says the first cause first, or that nothing was found, and what it
		 * cannot see */
		strbuf_init(&sb);
		doctor_print_text(&in, r, &sb);
		CHECK(sb.buf != NULL && strstr(sb.buf, "cannot see: the training code"),
		      "%s: text lacks what it cannot see", cases[i].fixture);
		if (cases[i].first[0] && r->first_fail >= 0) {
			char line[300];
			const char *at;
			snprintf(line, sizeof(line), "first blocking cause: %s\n",
			         r->f[r->first_fail].title);
			at = sb.buf ? strstr(sb.buf, line) : NULL;
			/* on the second line, above the checklist */
			CHECK(at != NULL && strchr(sb.buf, '\n') + 1 == at,
			      "%s: text lacks the first cause on its second line",
			      cases[i].fixture);
		} else if (cases[i].unknowns == 0)
			CHECK(sb.buf != NULL && strstr(sb.buf, "nothing wrong found"),
			      "%s: text does not say nothing was found", cases[i].fixture);
		else
			CHECK(sb.buf != NULL && strstr(sb.buf, "could not be made") &&
			          strstr(sb.buf, "may not list pods"),
			      "%s: text does not name what it could not read", cases[i].fixture);
		if (getenv("DOCTOR_PRINT") != NULL && sb.buf != NULL)
			fputs(sb.buf, stdout);
		strbuf_reset(&sb);
		doctor_print_json(&in, r, &sb);
		{
			cJSON *j = sb.buf ? cJSON_Parse(sb.buf) : NULL;
			CHECK(j != NULL && cJSON_IsBool(json_get(j, "blocked")) &&
			          cJSON_IsTrue(json_get(j, "blocked")) ==
			              (cases[i].first[0] != '\0') &&
			          cJSON_GetArraySize(json_get(j, "checks")) == r->n,
			      "%s: -o json: %.200s", cases[i].fixture, sb.buf ? sb.buf : "");
			if (j != NULL && cases[i].first[0])
				CHECK_STR(json_str(j, "firstCause"), cases[i].first,
				          cases[i].fixture);
			cJSON_Delete(j);
		}
		strbuf_free(&sb);
		free((char *)in.service_name);
		cJSON_Delete(fx);
		free(r);
	}
}

/*
 * A missing rank's fix follows the workload's FailedCreate: distenv's denial (a
 * template's own RANK refused for rank 1 on) is fixed in the template; without an
 * event, the controller's events are where to look.
 */
static void test_missing_fix(void)
{
	static const struct {
		const char *fixture, *fix;
	} cases[] = {
	    {"own-rank-denied", "fix what distenv's denial names (the pod template)"},
	    {"rank-missing", "see why the controller did not make it"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct doctor_report *r = calloc(1, sizeof(*r));
		struct doctor_input in;
		cJSON *fx = NULL;

		CHECK(r != NULL && run(cases[i].fixture, &fx, &in, r) == 0, "%s: fixture not read",
		      cases[i].fixture);
		if (r != NULL && fx != NULL) {
			CHECK(r->first_fail >= 0 && strncmp(r->f[r->first_fail].fix, cases[i].fix,
			                                    strlen(cases[i].fix)) == 0,
			      "%s: fix '%s', want '%s...'", cases[i].fixture,
			      r->first_fail >= 0 ? r->f[r->first_fail].fix : "", cases[i].fix);
			free((char *)in.service_name);
		}
		cJSON_Delete(fx);
		free(r);
	}
}

/* The healthy job's checklist, in the order a job forms. */
static void test_order(void)
{
	static const char *const want[] = {"webhook", "opt-in",  "ranks",    "world",
	                                   "own-env", "service", "endpoint", "netpol",
	                                   "mesh",    "step",    "dns"};
	struct doctor_report *r = calloc(1, sizeof(*r));
	struct doctor_input in;
	cJSON *fx = NULL;
	size_t i;

	CHECK(run("healthy", &fx, &in, r) == 0, "healthy fixture");
	CHECK(r->n == (int)(sizeof(want) / sizeof(want[0])), "healthy: %d lines", r->n);
	for (i = 0; i < sizeof(want) / sizeof(want[0]) && (int)i < r->n; i++) {
		CHECK_STR(r->f[i].check, want[i], "healthy order");
		CHECK(r->f[i].state == DOCTOR_OK, "healthy: %s is not OK: %s", r->f[i].check,
		      r->f[i].title);
	}
	CHECK(r->n > 10 && strstr(r->f[10].title, "cluster domain ml.example"), "dns line: %s",
	      r->n > 10 ? r->f[10].title : "");
	free((char *)in.service_name);
	cJSON_Delete(fx);
	free(r);
}

/*
 * The healthy job's report as text, whole: its heading, each check once in
 * order with its evidence, nothing after the last, then the summary.
 */
static void test_text_whole(void)
{
	static const char want[] =
	    "distenv doctor: StatefulSet ddp in namespace ml\n"
	    "\n"
	    "\u2713 distenv is installed for namespace ml (distenv, CA set, selectors match)\n"
	    "    1 ready endpoint(s) behind distenv's Service\n"
	    "\u2713 3 pod(s) opted in and injected by distenv\n"
	    "\u2713 every rank has one pod, scheduled, none waiting on an image or crash-looping "
	    "(world 3)\n"
	    "\u2713 one world: 3 rank(s), rank 0 at ddp-0.ddp.ml.svc.ml.example:29500\n"
	    "\u2713 no container overrides distenv's RANK, WORLD_SIZE, MASTER_ADDR or MASTER_PORT\n"
	    "\u2713 Service ddp is headless and selects rank 0\n"
	    "\u2713 rank 0 (ddp-0) is in Service ddp's EndpointSlices (publishNotReadyAddresses)\n"
	    "\u2713 no NetworkPolicy in namespace ml\n"
	    "\u2713 no service-mesh sidecar redirects port 29500 in the pods\n"
	    "\u2713 ranks in step: one image, no restarts, no eviction or preemption seen\n"
	    "\u2713 MASTER_ADDR ddp-0.ddp.ml.svc.ml.example (cluster domain ml.example, as distenv "
	    "read it from its own pod)\n"
	    "\n"
	    "nothing wrong found.\n"
	    "what doctor cannot see: the training code, and the network between nodes (firewalls "
	    "outside Kubernetes, MTU, RDMA).\n";
	struct doctor_report *r = calloc(1, sizeof(*r));
	struct doctor_input in;
	cJSON *fx = NULL;
	struct strbuf sb;

	CHECK(r != NULL && run("healthy", &fx, &in, r) == 0, "healthy fixture");
	if (r == NULL || fx == NULL) {
		free(r);
		return;
	}
	strbuf_init(&sb);
	doctor_print_text(&in, r, &sb);
	CHECK(sb.buf != NULL && strcmp(sb.buf, want) == 0, "healthy text:\n%s\nwant:\n%s",
	      sb.buf ? sb.buf : "", want);
	strbuf_free(&sb);
	free((char *)in.service_name);
	cJSON_Delete(fx);
	free(r);
}

/*
 * Every fixture's report whole, as text against NAME.txt beside it and as -o
 * json against NAME.json-out: the words a user reads for each broken job (each
 * list's separators, its counts, where it is cut) and each check's id and
 * state, not only the first cause. GOLDEN_UPDATE=1 rewrites them (review the
 * diff); in CI (CI=true) that is refused.
 */
static void test_text_goldens(void)
{
	int update = test_golden_update(), n = 0;
	DIR *d;
	struct dirent *e;

	if (update < 0)
		return;
	d = opendir(FX_DIR);
	CHECK(d != NULL, "cannot open " FX_DIR " (run from the repository root)");
	while (d != NULL && (e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name), len = 0;
		char name[128], path[256];
		int form;
		struct doctor_report *r;
		struct doctor_input in;
		struct strbuf sb;
		cJSON *fx = NULL;
		char *want;

		if (l <= 5 || l - 5 >= sizeof(name) || strcmp(e->d_name + l - 5, ".json") != 0)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(l - 5), e->d_name);
		r = calloc(1, sizeof(*r));
		if (r == NULL || run(name, &fx, &in, r) != 0) {
			CHECK(0, "%s: fixture not read", name);
			free(r);
			cJSON_Delete(fx);
			continue;
		}
		for (form = 0; form < 2; form++) {
			strbuf_init(&sb);
			if (form == 0)
				doctor_print_text(&in, r, &sb);
			else
				doctor_print_json(&in, r, &sb);
			snprintf(path, sizeof(path), FX_DIR "%s%s", name,
			         form == 0 ? ".txt" : ".json-out");
			if (update) {
				FILE *f = fopen(path, "w");
				CHECK(f != NULL && fputs(sb.buf ? sb.buf : "", f) >= 0 &&
				          fclose(f) == 0,
				      "%s: cannot write", path);
			} else {
				want = test_read(path, &len);
				CHECK(want != NULL && sb.buf != NULL && strcmp(sb.buf, want) == 0,
				      "%s: differs from %s:\n%s", name, path, sb.buf ? sb.buf : "");
				free(want);
			}
			strbuf_free(&sb);
		}
		n++;
		free((char *)in.service_name);
		cJSON_Delete(fx);
		free(r);
	}
	if (d != NULL)
		closedir(d);
	CHECK(n >= 46, "%d fixtures read, want every one of " FX_DIR " (46)", n);
}

/*
 * A workload with no pod (every creation denied): the checks of the pods are
 * not run, only those of what exists, each in its place.
 */
static void test_no_pods(void)
{
	static const struct {
		const char *check;
		enum doctor_state state;
	} want[] = {
	    {"webhook", DOCTOR_OK},
	    {"opt-in", DOCTOR_FAIL},
	    {"service", DOCTOR_OK},
	    {"mesh", DOCTOR_OK},
	};
	struct doctor_report *r = calloc(1, sizeof(*r));
	struct doctor_input in;
	cJSON *fx = NULL;
	size_t i;

	CHECK(r != NULL && run("denied", &fx, &in, r) == 0, "denied fixture");
	if (r == NULL || fx == NULL) {
		free(r);
		return;
	}
	CHECK(r->n == (int)(sizeof(want) / sizeof(want[0])), "no pods: %d lines", r->n);
	for (i = 0; i < sizeof(want) / sizeof(want[0]) && (int)i < r->n; i++) {
		CHECK_STR(r->f[i].check, want[i].check, "no pods: order");
		CHECK(r->f[i].state == want[i].state, "no pods: %s is %d: %s", r->f[i].check,
		      (int)r->f[i].state, r->f[i].title);
	}
	free((char *)in.service_name);
	cJSON_Delete(fx);
	free(r);
}

/*
 * The rendezvous port is read from distenv's annotation on the pods: a port
 * of 0 (distenv writes 1 to 65535) on the last pod is no port, and the others'
 * 29500 stands in every line that names it.
 */
static void test_marker_port(void)
{
	struct doctor_report *r = calloc(1, sizeof(*r));
	struct doctor_input in;
	cJSON *fx = NULL, *anns;
	int i, seen = 0;

	CHECK(r != NULL && run("healthy", &fx, &in, r) == 0, "healthy fixture");
	if (r == NULL || fx == NULL) {
		free(r);
		return;
	}
	anns = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(in.pods.obj, "items"), 2),
	        "metadata"),
	    "annotations");
	CHECK(cJSON_ReplaceItemInObjectCaseSensitive(
	          anns, "distenv.dev/injected",
	          cJSON_CreateString("rank=2,world-size=3,master=ddp-0.ddp.ml.svc.ml.example:0")),
	      "the last pod's annotation replaced");
	doctor_run(&in, r);
	CHECK(r->n_fail == 0, "port 0 on one pod: %d blocking", r->n_fail);
	for (i = 0; i < r->n; i++) {
		if (strcmp(r->f[i].check, "world") == 0) {
			seen++;
			CHECK_STR(
			    r->f[i].title,
			    "one world: 3 rank(s), rank 0 at ddp-0.ddp.ml.svc.ml.example:29500",
			    "port 0 on one pod: world");
		}
		if (strcmp(r->f[i].check, "mesh") == 0) {
			seen++;
			CHECK_STR(r->f[i].title,
			          "no service-mesh sidecar redirects port 29500 in the pods",
			          "port 0 on one pod: mesh");
		}
	}
	CHECK(seen == 2, "port 0 on one pod: %d of the world and mesh lines", seen);
	free((char *)in.service_name);
	cJSON_Delete(fx);
	free(r);
}

static void test_targets(void)
{
	static const struct {
		const char *arg;
		int ok;
		const char *kind; /* the API's name of the kind */
		const char *name;
	} cases[] = {
	    {"sts/ddp", 1, "StatefulSet", "ddp"},
	    {"statefulset.apps/ddp", 1, "StatefulSet", "ddp"},
	    {"StatefulSet/ddp", 1, "StatefulSet", "ddp"},
	    {"job/train", 1, "Job", "train"},
	    {"jobs.batch/train", 1, "Job", "train"},
	    {"jobset/js", 1, "JobSet", "js"},
	    {"lws/vllm", 1, "LeaderWorkerSet", "vllm"},
	    {"leaderworkerset/vllm", 1, "LeaderWorkerSet", "vllm"},
	    {"deploy/web", 0, NULL, ""}, /* not a kind distenv injects */
	    {"ddp", 0, NULL, ""},        /* no kind */
	    {"sts/", 0, NULL, ""},       /* no name */
	    {"/ddp", 0, NULL, ""},       /* no kind */
	    {"sts/a/b", 0, NULL, ""},    /* two slashes */
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct kind *k = NULL;
		char name[64] = "", err[256] = "";
		int rc =
		    doctor_parse_target(cases[i].arg, &k, name, sizeof(name), err, sizeof(err));
		CHECK((rc == 0) == cases[i].ok, "%s: rc %d (%s)", cases[i].arg, rc, err);
		if (cases[i].ok) {
			CHECK(k == kind_named(NULL, cases[i].kind), "%s: kind %s", cases[i].arg,
			      kind_name(k));
			const char *got = name;
			CHECK_STR(got, cases[i].name, cases[i].arg);
		} else {
			CHECK(err[0] != '\0', "%s: no reason", cases[i].arg);
		}
	}
	/* a refusal names every kind doctor reads, as it is typed (and its name when it differs) */
	{
		const struct kind *k = NULL;
		char name[64], err[256];

		CHECK(doctor_parse_target("deploy/web", &k, name, sizeof(name), err, sizeof(err)) !=
		              0 &&
		          strstr(err, ": sts (statefulset), job, jobset, lws (leaderworkerset)") !=
		              NULL,
		      "deploy/web: '%s'", err);
		CHECK(doctor_parse_target("ddp", &k, name, sizeof(name), err, sizeof(err)) != 0 &&
		          strstr(err, "(sts/ddp, job/train, jobset/js, lws/vllm)") != NULL,
		      "ddp: '%s'", err);
	}
}

static void test_selector(void)
{
	static const struct {
		const char *kind;            /* the API's name of the kind */
		const char *workload, *want; /* want NULL: refused */
	} cases[] = {
	    {"StatefulSet", "{\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"ddp\"}}}}",
	     "app=ddp"},
	    {"StatefulSet",
	     "{\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"ddp\",\"tier\":\"a\"}}}}",
	     "app=ddp,tier=a"},
	    {"StatefulSet",
	     "{\"spec\":{\"selector\":{\"matchExpressions\":[{\"key\":\"app\",\"operator\":"
	     "\"Exists\"}]}}}",
	     NULL},
	    {"Job", "{}", "batch.kubernetes.io/job-name=ddp"},
	    {"JobSet", "{}", "jobset.sigs.k8s.io/jobset-name=ddp"},
	    {"LeaderWorkerSet", "{}", "leaderworkerset.sigs.k8s.io/name=ddp"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *w = cJSON_Parse(cases[i].workload);
		char out[256] = "", err[256] = "";
		int rc = doctor_pod_selector(kind_named(NULL, cases[i].kind), w, "ddp", out,
		                             sizeof(out), err, sizeof(err));
		if (cases[i].want == NULL)
			CHECK(rc == -1 && err[0], "case %zu: accepted '%s'", i, out);
		else
			CHECK(rc == 0 && strcmp(out, cases[i].want) == 0, "case %zu: '%s' (%s)", i,
			      out, err);
		cJSON_Delete(w);
	}
}

/*
 * A selector that fills doctor's buffer to its last byte is read whole; one
 * character more is refused (a cut selector would list other pods), with one
 * label and with the second of two.
 */
static void test_selector_fit(void)
{
	static const struct {
		const char *first; /* a label before the long one, or NULL */
		int len;           /* the selector's length, "k=v,..." */
		int ok;
	} cases[] = {
	    {NULL, 254, 1}, {NULL, 255, 1}, {NULL, 256, 0}, {"app", 255, 1}, {"app", 256, 0},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[256] = "", err[256] = "", want[300], v[260];
		cJSON *w = cJSON_CreateObject(), *ml;
		int pre = cases[i].first ? (int)strlen("app=ddp,") : 0;
		int vl = cases[i].len - pre - (int)strlen("k=");
		int rc;

		memset(v, 'v', (size_t)vl);
		v[vl] = '\0';
		ml = cJSON_AddObjectToObject(
		    cJSON_AddObjectToObject(cJSON_AddObjectToObject(w, "spec"), "selector"),
		    "matchLabels");
		if (cases[i].first)
			cJSON_AddStringToObject(ml, cases[i].first, "ddp");
		cJSON_AddStringToObject(ml, "k", v);
		snprintf(want, sizeof(want), "%sk=%s", cases[i].first ? "app=ddp," : "", v);
		rc = doctor_pod_selector(kind_named(NULL, "StatefulSet"), w, "ddp", out,
		                         sizeof(out), err, sizeof(err));
		if (cases[i].ok)
			CHECK(rc == 0 && strlen(want) == (size_t)cases[i].len &&
			          strcmp(out, want) == 0,
			      "%d characters: rc %d, '%s' (%s)", cases[i].len, rc, out, err);
		else
			CHECK(rc == -1 &&
			          strcmp(err, "the StatefulSet's selector is too long") == 0,
			      "%d characters: rc %d, '%s', err '%s'", cases[i].len, rc, out, err);
		cJSON_Delete(w);
	}
}

static void test_service_name(void)
{
	static const struct {
		const char *kind; /* the API's name of the kind */
		const char *workload, *pods, *want;
	} cases[] = {
	    /* the pods' subdomain first: it is the name in their DNS records */
	    {"StatefulSet", "{\"spec\":{\"serviceName\":\"a\"}}",
	     "{\"items\":[{\"spec\":{\"subdomain\":\"b\"}}]}", "b"},
	    {"StatefulSet", "{\"spec\":{\"serviceName\":\"a\"}}", "{\"items\":[]}", "a"},
	    {"Job",
	     "{\"spec\":{\"template\":{\"metadata\":{\"annotations\":{\"distenv.dev/"
	     "service\":\"s\"}}}}}",
	     "{\"items\":[]}", "s"},
	    {"JobSet", "{\"spec\":{\"network\":{\"subdomain\":\"net\"}}}", "{\"items\":[]}", "net"},
	    {"JobSet", "{\"spec\":{}}", "{\"items\":[]}", "ddp"},
	    {"LeaderWorkerSet", "{\"spec\":{}}", "{\"items\":[]}", "ddp"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *w = cJSON_Parse(cases[i].workload), *p = cJSON_Parse(cases[i].pods);
		char out[64];
		const char *got = out;
		doctor_service_name(kind_named(NULL, cases[i].kind), w, p, "ddp", out, sizeof(out));
		CHECK_STR(got, cases[i].want, "service name");
		cJSON_Delete(w);
		cJSON_Delete(p);
	}
}

/* Istio's injector output (sidecar mode; CNI mode: istio-validation and annotations). */
static void test_mesh(void)
{
#define INIT(args)                                                                                 \
	"{\"metadata\":{},\"spec\":{\"initContainers\":[{\"name\":\"istio-init\",\"args\":[" args  \
	"]}],\"containers\":[{\"name\":\"t\"},{\"name\":\"istio-proxy\"}]}}"
#define STD                                                                                        \
	"\"istio-iptables\",\"-p\",\"15001\",\"-z\",\"15006\",\"-u\",\"1337\",\"-m\","             \
	"\"REDIRECT\",\"-i\",\"*\",\"-x\",\"\",\"-b\",\"*\""
	static const struct {
		const char *pod;
		long port;
		int want;
	} cases[] = {
	    {"{\"spec\":{\"containers\":[{\"name\":\"t\"}]}}", 29500, 0}, /* no mesh */
	    {INIT(STD ",\"-d\",\"15090,15021,15020\""), 29500, MESH_IN | MESH_OUT},
	    {INIT(STD ",\"-d\",\"15090,15021,15020,29500\""), 29500, MESH_OUT},
	    {INIT(STD ",\"-d\",\"15090,15021,15020,29500\",\"-o\",\"29500\""), 29500, 0},
	    {INIT(STD ",\"-d\",\"15090,15021,15020\",\"-o\",\"29500\""), 29500, MESH_IN},
	    {INIT(STD ",\"-d\",\"15090,15021,15020,29501\""), 29500, MESH_IN | MESH_OUT},
	    {INIT("\"istio-iptables\",\"-m\",\"NONE\""), 29500, 0},
	    /* includeInboundPorts listing others only; no outbound IP ranges */
	    {INIT("\"istio-iptables\",\"-b\",\"8080\",\"-i\",\"\""), 29500, 0},
	    /* -q includes the port outbound even with no IP ranges */
	    {INIT("\"istio-iptables\",\"-b\",\"8080\",\"-i\",\"\",\"-q\",\"29500\""), 29500,
	     MESH_OUT},
	    /* CNI: istio-validation, the rules from the annotations */
	    {"{\"metadata\":{\"annotations\":{\"sidecar.istio.io/status\":\"{}\","
	     "\"traffic.sidecar.istio.io/excludeInboundPorts\":\"15020,29500\"}},\"spec\":{"
	     "\"initContainers\":[{\"name\":\"istio-validation\",\"args\":[\"istio-iptables\","
	     "\"--run-validation\",\"--skip-rule-apply\"]}],\"containers\":[{\"name\":\"istio-"
	     "proxy\"}]}}",
	     29500, MESH_OUT},
	    /* a native sidecar (restartPolicy Always in initContainers), defaults */
	    {"{\"spec\":{\"initContainers\":[{\"name\":\"istio-proxy\",\"restartPolicy\":"
	     "\"Always\"}],"
	     "\"containers\":[{\"name\":\"t\"}]}}",
	     29500, MESH_IN | MESH_OUT},
	    /* the status annotation alone, interception NONE */
	    {"{\"metadata\":{\"annotations\":{\"sidecar.istio.io/status\":\"{}\","
	     "\"sidecar.istio.io/interceptionMode\":\"NONE\"}},\"spec\":{}}",
	     29500, 0},
	};
	static const struct {
		const char *list;
		long port;
		int want;
	} lists[] = {
	    {"*", 1, 1},
	    {"29500", 29500, 1},
	    {"15090, 29500", 29500, 1},
	    {"295000", 29500, 0},
	    {"2950", 29500, 0},
	    {"", 29500, 0},
	    {"a,29500", 29500, 1},
	    {"29501,", 29500, 0},
	    {"9000", 9000, 1},
	    {"15090,9000", 9000, 1},
	    {"029500", 29500, 1},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *p = cJSON_Parse(cases[i].pod);
		const char *who = NULL;
		int got = mesh_redirects(p, cases[i].port, &who);
		CHECK(p != NULL && got == cases[i].want, "mesh case %zu: %d, want %d", i, got,
		      cases[i].want);
		cJSON_Delete(p);
	}
	/* a port's first digit at both ends of 0-9: 9000, and 029500 read as 29500 */
	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		CHECK(mesh_port_listed(lists[i].list, lists[i].port) == lists[i].want,
		      "list '%s' port %ld", lists[i].list, lists[i].port);
#undef INIT
#undef STD
}

/* Which Service the MutatingWebhookConfigurations name for distenv's pod webhook. */
static void test_webhook_service(void)
{
#define WH(name, cc) "{\"name\":\"" name "\",\"clientConfig\":" cc "}"
#define SVC(ns, n)   "{\"service\":{\"namespace\":\"" ns "\",\"name\":\"" n "\"}}"
#define CFG(...)     "{\"webhooks\":[" __VA_ARGS__ "]}"
	static const struct {
		const char *what, *mwcs;
		int rc;
		const char *ns, *name;
	} cases[] = {
	    {"no configurations", "{\"items\":[]}", 0, "", ""},
	    {"no items at all", "{}", 0, "", ""},
	    {"only other webhooks", "{\"items\":[" CFG(WH("x.example", SVC("a", "b"))) "]}", 0, "",
	     ""},
	    {"a name that shares the prefix",
	     "{\"items\":[" CFG(WH("pods.distenv.dev.other", SVC("a", "b"))) "]}", 0, "", ""},
	    {"its Service",
	     "{\"items\":[" CFG(WH("pods.distenv.dev", SVC("distenv-system", "distenv"))) "]}", 1,
	     "distenv-system", "distenv"},
	    {"a url, no Service",
	     "{\"items\":[" CFG(WH("pods.distenv.dev", "{\"url\":\"https://h\"}")) "]}", 1, "", ""},
	    {"in the second configuration, after another webhook",
	     "{\"items\":[" CFG(WH("x.example", SVC("a", "b"))) "," CFG(
	         WH("y.example", SVC("c", "d")) "," WH("pods.distenv.dev", SVC("ml", "hook"))) "]}",
	     1, "ml", "hook"},
	    {"the first of two",
	     "{\"items\":[" CFG(WH("pods.distenv.dev", SVC("one", "first"))) "," CFG(
	         WH("pods.distenv.dev", SVC("two", "second"))) "]}",
	     1, "one", "first"},
	};
#undef WH
#undef SVC
#undef CFG
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *m = cJSON_Parse(cases[i].mwcs);
		char ns[64] = "junk", name[64] = "junk";
		int rc;

		CHECK(m != NULL, "%s: test JSON does not parse", cases[i].what);
		rc = doctor_webhook_service(m, ns, sizeof(ns), name, sizeof(name));
		CHECK(rc == cases[i].rc && strcmp(ns, cases[i].ns) == 0 &&
		          strcmp(name, cases[i].name) == 0,
		      "%s: %d '%s' '%s', want %d '%s' '%s'", cases[i].what, rc, ns, name,
		      cases[i].rc, cases[i].ns, cases[i].name);
		cJSON_Delete(m);
	}
}

int main(void)
{
	test_webhook_service();
	test_cases();
	test_missing_fix();
	test_order();
	test_text_whole();
	test_text_goldens();
	test_no_pods();
	test_marker_port();
	test_targets();
	test_selector();
	test_selector_fit();
	test_service_name();
	test_mesh();
	TEST_MAIN_END("doctor");
}
