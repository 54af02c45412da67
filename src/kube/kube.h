/*
 * Kubernetes API client for the look-ups distenv needs (GET of a workload or
 * a Service, LIST of a namespace's NetworkPolicies), over libcurl/OpenSSL, with credentials from a
 * kubeconfig or the in-cluster service account, a deadline and a short-lived cache. The client owns
 * its credentials (key material is wiped on free).
 */
#ifndef DISTENV_KUBE_H
#define DISTENV_KUBE_H

#include <stddef.h>
#include "config.h"
#include "workload.h"

struct kube_client;

/* The in-cluster service account directory (token, ca.crt). */
#define KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/*
 * Creates a client from cfg->kubeconfig, or from the in-cluster service account
 * (KUBERNETES_SERVICE_HOST/PORT, KUBE_SA_DIR) when cfg->kubeconfig is empty.
 * Returns NULL with err on failure. Free with kube_client_free (NULL is fine).
 * Initialises libcurl itself (curl_global_init is reference-counted and
 * thread-safe in libcurl >= 7.84); main may also call it first.
 */
struct kube_client *kube_client_new(const struct config *cfg, char *err, size_t errlen);

/* kube_client_new's in-cluster path with the service account directory given (tests). */
struct kube_client *kube_client_new_incluster(const struct config *cfg, const char *sa_dir,
                                              char *err, size_t errlen);

void kube_client_free(struct kube_client *kc);

/* Where a client talks to and how it authenticates; no secrets. */
struct kube_client_info {
	char server[512];      /* base URL */
	char context[256];     /* kubeconfig context; "" in-cluster */
	char ca[16];           /* "file", "data" or "system" (the system trust store) */
	char auth[64];         /* "token", "token-file", "client-certificate", joined by '+' */
	char token_file[4096]; /* "" unless auth has token-file */
};

/* Fills info (for start-up logs and tests). */
void kube_client_describe(const struct kube_client *kc, struct kube_client_info *info);

/*
 * GETs the workload (cached for cfg->cache_ttl_ms under kind/ns/name/uid;
 * fresh = 1 skips the cache and replaces its entry). Thread-safe. Returns 0 or
 * -1 with a one-line reason in err. Matches struct workload_lookup's get when
 * ctx is the client.
 */
int kube_get_workload(void *kc, const struct workload_ref *ref, int fresh,
                      struct workload_spec *out, char *err, size_t errlen);

/*
 * GETs Service ns/name (not cached: /validate is called once per apply).
 * Matches struct workload_lookup's get_service: 1 found, 0 not found, -1 err.
 */
int kube_get_service(void *kc, const char *ns, const char *name, struct service_info *out,
                     char *err, size_t errlen);

/*
 * LISTs the NetworkPolicies of namespace ns (one page of at most
 * NETPOL_MAX_POLICIES, not cached: /validate is called once per apply).
 * Matches struct workload_lookup's list_netpols: 0 and *out, the
 * NetworkPolicyList (caller frees with cJSON_Delete), or -1 with err (a
 * longer list included).
 */
int kube_list_netpols(void *kc, const char *ns, cJSON **out, char *err, size_t errlen);

/* Matches struct workload_lookup's get_object: 1 and *out, 0 not found, -1 err. Not cached. */
int kube_get_object(void *kc, const struct kind *kind, const char *ns, const char *name,
                    cJSON **out, char *err, size_t errlen);

/*
 * GETs path (an API path, query included) for `doctor`. Returns 1 and *out
 * (the answer; caller frees with cJSON_Delete) on 200, 0 when the object does
 * not exist (404), -1 with err otherwise; what ("list pods in namespace ml")
 * is the request in words, and err names it ("forbidden: you may not list
 * pods in namespace ml (HTTP 403: ...)").
 */
int kube_get_json(struct kube_client *kc, const char *path, const char *what, cJSON **out,
                  char *err, size_t errlen);

/*
 * Caps the look-ups this thread makes from now on: they end by deadline_ms
 * (CLOCK_MONOTONIC, milliseconds) even when lookups.timeoutMs would allow
 * more; 0 removes the cap. The server sets it from an admission's arrival, so
 * that time spent queued counts against the deadline.
 */
void kube_set_thread_deadline(long long deadline_ms);

/*
 * Caps every look-up of the process, those in flight included (they are
 * aborted at deadline_ms); 0 removes the cap. The server sets it to the end of
 * its drain.
 */
void kube_set_global_deadline(long long deadline_ms);

#endif
