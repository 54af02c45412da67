/*
 * Runtime configuration: defaults, a YAML parser that works on a string, and a
 * loader that only reads the file. The struct is plain data owned by the caller.
 */
#ifndef DISTENV_CONFIG_H
#define DISTENV_CONFIG_H

#include <stddef.h>

#include "framework.h"

#define CONFIG_MAX_GPU_RESOURCES 8
#define CONFIG_PATH_MAX          1024

enum log_level { LOG_DEBUG = 0, LOG_INFO, LOG_WARN, LOG_ERROR };

struct config {
	/* server */
	char listen[256];               /* "HOST:PORT", ":PORT" or "[v6]:PORT"; default ":8443" */
	char tls_cert[CONFIG_PATH_MAX]; /* PEM certificate chain */
	char tls_key[CONFIG_PATH_MAX];  /* PEM private key */
	long threads;                   /* worker threads, default 4 */
	long idle_timeout_s;            /* connection idle timeout, default 120 (>= 90) */
	long max_connections;           /* default 1024 */
	long drain_timeout_s;           /* SIGTERM drain deadline, default 25 */
	long cert_check_interval_s;     /* how often cert files are checked for change, default 5 */
	long max_queued;                /* admissions waiting for a look-up worker, default 1024 */
	long header_timeout_s;          /* TLS handshake + request head, default 10 */
	long handshake_timeout_s;       /* the TLS handshake alone, from the accept, default 5 */
	long request_timeout_s;         /* a request's body, from its head, default 30 */
	long max_conns_per_ip;          /* connections from one client address, default 768 */
	char probe_listen[256]; /* plain-HTTP /healthz, /readyz listener; "" (default): none */

	/* topology */
	char cluster_domain[254]; /* default "cluster.local" */
	/*
	 * 1: clusterDomain was given in the file. 0: the default above, which
	 * serve replaces with what its pod's /etc/resolv.conf shows (render keeps it).
	 */
	int cluster_domain_set;
	long default_port;           /* default 29500 */
	unsigned default_frameworks; /* framework bits; default: the rows with by_default */
	char gpu_resources[CONFIG_MAX_GPU_RESOURCES][128]; /* default nvidia.com/gpu, amd.com/gpu */
	int n_gpu_resources;

	/* look-ups */
	int lookups;                      /* 1: GET StatefulSet/Job from the API; default 1 */
	char kubeconfig[CONFIG_PATH_MAX]; /* empty: in-cluster service account */
	long lookup_timeout_ms;           /* whole-request deadline, default 3000 */
	long cache_ttl_ms;                /* default 10000 */
	long cache_entries;               /* default 4096 */

	/* limits */
	long max_body_bytes;        /* default 7 MiB */
	long max_buffered_bytes;    /* all request bodies held at once, default 32 MiB */
	long max_containers;        /* containers + initContainers per pod, default 256 */
	long max_env_per_container; /* default 4096 */
	long max_world_size;        /* default 65536 */

	/* logging */
	enum log_level log_level; /* default LOG_INFO */

	/* the init container of distenv.dev/wait-for-master */
	char wait_image[512];      /* default "distenv:<version>", the chart's default image */
	char wait_pull_policy[16]; /* default IfNotPresent */
};

/* Fills cfg with the documented defaults. */
void config_defaults(struct config *cfg);

/*
 * Parses YAML text over the current contents of cfg (call config_defaults first).
 * Returns 0, or -1 with "line N: key 'a.b': why" in err. cfg may be partly
 * updated on failure.
 */
int config_parse(const char *text, size_t len, struct config *cfg, char *err, size_t errlen)
    __attribute__((warn_unused_result));

/* Reads path (at most 1 MiB) and calls config_parse. Returns 0 or -1 with err. */
int config_load(const char *path, struct config *cfg, char *err, size_t errlen)
    __attribute__((warn_unused_result));

/*
 * Parses "pytorch,tensorflow,jax" into a mask of the registered frameworks' bits.
 * Returns 0, or -1 on an unknown or empty name.
 */
int config_parse_frameworks(const char *list, unsigned *mask);

/* Parses "debug|info|warn|error". Returns 0 or -1. */
int config_parse_log_level(const char *s, enum log_level *lvl);

#endif
