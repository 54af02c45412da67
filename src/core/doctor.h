/*
 * Why a job does not form: `distenv-webhook doctor`'s rules, judged on the
 * objects a person would read (the workload, its pods and their events, the
 * Service and its EndpointSlices, the namespace and its NetworkPolicies,
 * distenv's webhook configurations), as the API server returns them. Pure:
 * the shell reads the objects and hands them in; nothing of the caller's is
 * kept or freed, and the report is plain data.
 */
#ifndef DISTENV_DOCTOR_H
#define DISTENV_DOCTOR_H

#include <stddef.h>
#include <cjson/cJSON.h>

#include "strbuf.h"
#include "workload.h"

struct kind;

enum doctor_state {
	DOCTOR_OK,      /* ✓ checked, nothing in the way */
	DOCTOR_FAIL,    /* ✗ blocks the job */
	DOCTOR_WARN,    /* ! may block it, or will on the next restart */
	DOCTOR_UNKNOWN, /* ? could not be read or judged */
};

#define DOCTOR_MAX_FINDINGS 40
#define DOCTOR_MAX_PODS     4096 /* more pods than this: the ranks check says so */

struct doctor_finding {
	enum doctor_state state;
	char check[24];     /* stable name: "webhook", "opt-in", "ranks", ... (-o json) */
	char title[200];    /* one line */
	char evidence[900]; /* what was seen, quoted where it came from the cluster */
	char fix[400];      /* "" when there is nothing to do */
};

struct doctor_report {
	int n;
	struct doctor_finding f[DOCTOR_MAX_FINDINGS];
	int first_fail; /* index of the first DOCTOR_FAIL, -1 when none */
	int n_fail, n_warn, n_unknown;
};

/*
 * One object or list as read: obj is the API server's answer (a List for the
 * lists), NULL with unread NULL when it does not exist, NULL with unread
 * "why" (forbidden, an error) when it could not be read.
 */
struct doctor_obj {
	const cJSON *obj;
	const char *unread;
};

struct doctor_input {
	const struct kind *kind; /* a registered row */
	const char *ns, *name;
	struct doctor_obj workload;
	struct doctor_obj pods;           /* PodList of the workload's pods */
	struct doctor_obj events;         /* EventList (v1) of the namespace */
	const char *service_name;         /* doctor_service_name's answer */
	struct doctor_obj service;        /* the Service */
	struct doctor_obj slices;         /* EndpointSliceList of the Service */
	struct doctor_obj namespace_;     /* the Namespace */
	struct doctor_obj netpols;        /* NetworkPolicyList of the namespace */
	struct doctor_obj mwcs;           /* MutatingWebhookConfigurationList */
	struct doctor_obj webhook_slices; /* EndpointSliceList of distenv's own Service */
};

/*
 * KIND/NAME as kubectl writes it ("sts/ddp", "statefulset.apps/ddp", "job/train",
 * "jobset/js", "lws/vllm"): the kind and the name (into name, namelen bytes).
 * Returns 0, or -1 with err naming the kinds it knows.
 */
int doctor_parse_target(const char *arg, const struct kind **kind, char *name, size_t namelen,
                        char *err, size_t errlen);

/*
 * The label selector (URL-ready "k=v,k2=v2", no escaping needed: label keys
 * and values are DNS-ish) that lists the workload's pods. Returns 0, or -1
 * with err (a StatefulSet selector with matchExpressions only, say).
 */
int doctor_pod_selector(const struct kind *kind, const cJSON *workload, const char *name, char *out,
                        size_t outlen, char *err, size_t errlen);

/* The headless Service the pods' names live under: a pod's spec.subdomain, else the workload's. */
void doctor_service_name(const struct kind *kind, const cJSON *workload, const cJSON *pods,
                         const char *name, char *out, size_t outlen);

/*
 * distenv's pod webhook among mwcs (a MutatingWebhookConfigurationList): the
 * namespace and name of the Service it calls, "" when it calls a URL or none
 * is found. Returns 1 found, 0 not.
 */
int doctor_webhook_service(const cJSON *mwcs, char *ns, size_t nslen, char *name, size_t namelen);

/* Judges in and fills out, in the order a job forms. */
void doctor_run(const struct doctor_input *in, struct doctor_report *out);

/*
 * The report as text (one line a check, evidence and fix indented under it)
 * or as JSON, appended to out.
 */
void doctor_print_text(const struct doctor_input *in, const struct doctor_report *r,
                       struct strbuf *out);
void doctor_print_json(const struct doctor_input *in, const struct doctor_report *r,
                       struct strbuf *out);

#endif
