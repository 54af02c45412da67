/*
 * Kubernetes API client for the two look-ups distenv needs (GET StatefulSet,
 * GET Job), over libcurl/OpenSSL, with credentials from a kubeconfig or the
 * in-cluster service account, a deadline and a short-lived cache.
 * The client owns its credentials (key material is wiped on free).
 */
#ifndef DISTENV_KUBE_H
#define DISTENV_KUBE_H

#include <stddef.h>
#include "config.h"
#include "workload.h"

struct kube_client;

/*
 * Creates a client from cfg->kubeconfig, or from the in-cluster service account
 * (KUBERNETES_SERVICE_HOST/PORT, /var/run/secrets/kubernetes.io/serviceaccount)
 * when cfg->kubeconfig is empty. Returns NULL with err on failure. Free with
 * kube_client_free.
 */
struct kube_client *kube_client_new(const struct config *cfg, char *err, size_t errlen);
void kube_client_free(struct kube_client *kc);

/*
 * GETs the workload (cached for cfg->cache_ttl_ms). Thread-safe. Returns 0 or
 * -1 with a one-line reason in err. Matches struct workload_lookup's get when
 * ctx is the client.
 */
int kube_get_workload(void *kc, enum workload_kind kind, const char *ns, const char *name,
		      struct workload_spec *out, char *err, size_t errlen);

/* Pure parsers, exposed for tests. Return 0 or -1 with err. */
int kube_parse_workload(enum workload_kind kind, const char *json, size_t len,
			struct workload_spec *out, char *err, size_t errlen);

#endif
