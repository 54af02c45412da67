/*
 * config: defaults, every key, ranges, and the "line N: key 'a.b': why" errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "testutil.h"

/* CHECK_STR tests its argument for NULL; arrays need to decay first. */
static const char *S(const char *s)
{
	return s;
}

/* Renders one key of cfg as text, so that cases can compare any key. */
static void get(const struct config *c, const char *path, char *out, size_t outlen)
{
	const struct {
		const char *path;
		const long *num;
		const char *str;
	} f[] = {
	    {"listen", NULL, c->listen},
	    {"tls.certFile", NULL, c->tls_cert},
	    {"tls.keyFile", NULL, c->tls_key},
	    {"tls.checkIntervalSeconds", &c->cert_check_interval_s, NULL},
	    {"clusterDomain", NULL, c->cluster_domain},
	    {"defaults.port", &c->default_port, NULL},
	    {"lookups.kubeconfig", NULL, c->kubeconfig},
	    {"lookups.timeoutMs", &c->lookup_timeout_ms, NULL},
	    {"lookups.cacheTTLMs", &c->cache_ttl_ms, NULL},
	    {"lookups.cacheEntries", &c->cache_entries, NULL},
	    {"limits.maxBodyBytes", &c->max_body_bytes, NULL},
	    {"limits.maxContainers", &c->max_containers, NULL},
	    {"limits.maxEnvPerContainer", &c->max_env_per_container, NULL},
	    {"limits.maxWorldSize", &c->max_world_size, NULL},
	    {"server.threads", &c->threads, NULL},
	    {"server.idleTimeoutSeconds", &c->idle_timeout_s, NULL},
	    {"server.maxConnections", &c->max_connections, NULL},
	    {"server.drainTimeoutSeconds", &c->drain_timeout_s, NULL},
	    {"server.maxQueuedAdmissions", &c->max_queued, NULL},
	    {"server.headerTimeoutSeconds", &c->header_timeout_s, NULL},
	    {"server.handshakeTimeoutSeconds", &c->handshake_timeout_s, NULL},
	    {"server.requestTimeoutSeconds", &c->request_timeout_s, NULL},
	    {"server.maxConnectionsPerIP", &c->max_conns_per_ip, NULL},
	    {"server.probeListen", NULL, c->probe_listen},
	    {"limits.maxBufferedBodyBytes", &c->max_buffered_bytes, NULL},
	    {"waitInit.image", NULL, c->wait_image},
	};
	size_t i, o = 0;
	int k;

	out[0] = '\0';
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (strcmp(path, f[i].path) != 0)
			continue;
		if (f[i].num)
			snprintf(out, outlen, "%ld", *f[i].num);
		else
			snprintf(out, outlen, "%s", f[i].str);
		return;
	}
	if (strcmp(path, "defaults.frameworks") == 0) {
		snprintf(out, outlen, "%s%s%s",
		         c->default_frameworks & FW_PYTORCH ? "pytorch," : "",
		         c->default_frameworks & FW_TENSORFLOW ? "tensorflow," : "",
		         c->default_frameworks & FW_JAX ? "jax," : "");
	} else if (strcmp(path, "gpuResources") == 0) {
		for (k = 0; k < c->n_gpu_resources; k++)
			o += (size_t)snprintf(out + o, outlen - o, "%s,", c->gpu_resources[k]);
	} else if (strcmp(path, "lookups.enabled") == 0) {
		snprintf(out, outlen, "%d", c->lookups);
	} else if (strcmp(path, "logging.level") == 0) {
		snprintf(out, outlen, "%d", (int)c->log_level);
	} else {
		snprintf(out, outlen, "?unknown path %s", path);
	}
}

/* The documented defaults, key by key. */
static const struct {
	const char *path, *want;
} defaults[] = {
    {"listen", ":8443"},
    {"tls.certFile", ""},
    {"tls.keyFile", ""},
    {"tls.checkIntervalSeconds", "5"},
    {"clusterDomain", "cluster.local"},
    {"defaults.port", "29500"},
    {"defaults.frameworks", "pytorch,tensorflow,"},
    {"gpuResources", "nvidia.com/gpu,amd.com/gpu,"},
    {"lookups.enabled", "1"},
    {"lookups.kubeconfig", ""},
    {"lookups.timeoutMs", "3000"},
    {"lookups.cacheTTLMs", "10000"},
    {"lookups.cacheEntries", "4096"},
    {"limits.maxBodyBytes", "7340032"},
    {"limits.maxContainers", "256"},
    {"limits.maxEnvPerContainer", "4096"},
    {"limits.maxWorldSize", "65536"},
    {"server.threads", "4"},
    {"server.idleTimeoutSeconds", "120"},
    {"server.maxConnections", "1024"},
    {"server.drainTimeoutSeconds", "25"},
    {"server.maxQueuedAdmissions", "1024"},
    {"server.headerTimeoutSeconds", "10"},
    {"server.handshakeTimeoutSeconds", "5"},
    {"server.requestTimeoutSeconds", "30"},
    {"server.maxConnectionsPerIP", "768"},
    {"server.probeListen", ""},
    {"limits.maxBufferedBodyBytes", "33554432"},
    {"logging.level", "1"},
};

/* Accepted input: after parsing, key path reads want. */
static const struct {
	const char *name, *yaml, *path, *want;
} ok_cases[] = {
    {"empty file keeps defaults", "", "listen", ":8443"},
    {"only a comment", "# nothing here\n", "server.threads", "4"},
    {"explicit empty document", "---\n", "server.threads", "4"},
    {"trailing empty document", "server: {threads: 3}\n---\n", "server.threads", "3"},
    {"listen host:port", "listen: \"127.0.0.1:9443\"\n", "listen", "127.0.0.1:9443"},
    {"listen :port", "listen: \":10250\"\n", "listen", ":10250"},
    {"listen plain hostname", "listen: localhost:8443\n", "listen", "localhost:8443"},
    {"listen ipv6", "listen: \"[::1]:8443\"\n", "listen", "[::1]:8443"},
    {"listen any ipv6", "listen: \"[::]:443\"\n", "listen", "[::]:443"},
    {"tls.certFile", "tls:\n  certFile: /etc/tls/tls.crt\n", "tls.certFile", "/etc/tls/tls.crt"},
    {"tls.keyFile", "tls:\n  keyFile: /etc/tls/tls.key\n", "tls.keyFile", "/etc/tls/tls.key"},
    {"tls.checkIntervalSeconds", "tls: {checkIntervalSeconds: 30}\n", "tls.checkIntervalSeconds",
     "30"},
    {"server.probeListen", "server: {probeListen: \":8081\"}\n", "server.probeListen", ":8081"},
    {"server.probeListen empty: none", "server: {probeListen: \"\"}\n", "server.probeListen", ""},
    {"server.probeListen null: none", "server:\n  probeListen:\n", "server.probeListen", ""},
    {"server.headerTimeoutSeconds", "server: {headerTimeoutSeconds: 32}\n",
     "server.headerTimeoutSeconds", "32"},
    {"server.handshakeTimeoutSeconds 1", "server: {handshakeTimeoutSeconds: 1}\n",
     "server.handshakeTimeoutSeconds", "1"},
    {"server.handshakeTimeoutSeconds 300", "server: {handshakeTimeoutSeconds: 300}\n",
     "server.handshakeTimeoutSeconds", "300"},
    {"server.maxConnectionsPerIP", "server: {maxConnectionsPerIP: 8}\n",
     "server.maxConnectionsPerIP", "8"},
    {"server.maxQueuedAdmissions", "server: {maxQueuedAdmissions: 1}\n",
     "server.maxQueuedAdmissions", "1"},
    {"limits.maxBufferedBodyBytes", "limits: {maxBufferedBodyBytes: 8388609}\n",
     "limits.maxBufferedBodyBytes", "8388609"},
    {"null path clears", "tls:\n  certFile:\n", "tls.certFile", ""},
    {"null section is empty", "tls:\n", "tls.checkIntervalSeconds", "5"},
    {"clusterDomain", "clusterDomain: corp.example\n", "clusterDomain", "corp.example"},
    {"clusterDomain single label", "clusterDomain: local\n", "clusterDomain", "local"},
    {"defaults.port", "defaults:\n  port: 23456\n", "defaults.port", "23456"},
    {"defaults.port max", "defaults: {port: 65535}\n", "defaults.port", "65535"},
    {"frameworks flow list", "defaults: {frameworks: [jax]}\n", "defaults.frameworks", "jax,"},
    {"frameworks block list", "defaults:\n  frameworks:\n    - tensorflow\n    - jax\n",
     "defaults.frameworks", "tensorflow,jax,"},
    {"frameworks comma string", "defaults: {frameworks: \"pytorch, jax\"}\n", "defaults.frameworks",
     "pytorch,jax,"},
    {"frameworks repeated", "defaults: {frameworks: [jax, jax]}\n", "defaults.frameworks", "jax,"},
    {"gpuResources list", "gpuResources: [nvidia.com/gpu, intel.com/gpu, gpu]\n", "gpuResources",
     "nvidia.com/gpu,intel.com/gpu,gpu,"},
    {"gpuResources comma string", "gpuResources: \"amd.com/gpu,nvidia.com/mig-1g.5gb\"\n",
     "gpuResources", "amd.com/gpu,nvidia.com/mig-1g.5gb,"},
    {"gpuResources empty list", "gpuResources: []\n", "gpuResources", ""},
    {"gpuResources null", "gpuResources:\n", "gpuResources", ""},
    {"gpuResources eight", "gpuResources: [a, b, c, d, e, f, g, h]\n", "gpuResources",
     "a,b,c,d,e,f,g,h,"},
    /* a name starts and ends with a letter or digit: the ranges' first and last */
    {"gpuResources the edge characters",
     "gpuResources: [x.io/A100, x.io/Z9, x.io/0a, x.io/9z, x.io/a-Z, x.io/z.0]\n", "gpuResources",
     "x.io/A100,x.io/Z9,x.io/0a,x.io/9z,x.io/a-Z,x.io/z.0,"},
    /* a name of 63 characters, the most (the prefix's 253 are past the item's 127) */
    /* an image reference is printable ASCII without spaces: '!' and '~' are its edges */
    /* a comma string of 255 characters fits the buffer of 256 (its NUL after) */
    {"frameworks comma string of 255",
     "defaults: {frameworks: \"jax                                                                 "
     "                                                                                             "
     "                                                                                             "
     " \"}\n",
     "defaults.frameworks", "jax,"},
    {"waitInit.image edges", "waitInit: {image: \"!x/y:1~\"}\n", "waitInit.image", "!x/y:1~"},
    {"gpuResources a name of 63",
     "gpuResources: [x.io/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaz]\n",
     "gpuResources", "x.io/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaz,"},
    /* a name of 127 characters fits gpu_resources[128] whole */
    {"gpuResources a name of 127",
     "gpuResources: "
     "[aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.io/"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaz]\n",
     "gpuResources",
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.io/"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaz,"},
    {"lookups.enabled false", "lookups:\n  enabled: false\n", "lookups.enabled", "0"},
    {"lookups.enabled no (kubectl's YAML 1.1 words)", "lookups:\n  enabled: no\n",
     "lookups.enabled", "0"},
    {"lookups.enabled On", "lookups:\n  enabled: On\n", "lookups.enabled", "1"},
    {"lookups.enabled True", "lookups:\n  enabled: True\n", "lookups.enabled", "1"},
    {"lookups.kubeconfig", "lookups: {kubeconfig: /root/.kube/config}\n", "lookups.kubeconfig",
     "/root/.kube/config"},
    {"lookups.timeoutMs", "lookups: {timeoutMs: 100}\n", "lookups.timeoutMs", "100"},
    {"lookups.cacheTTLMs zero", "lookups: {cacheTTLMs: 0}\n", "lookups.cacheTTLMs", "0"},
    {"lookups.cacheEntries", "lookups: {cacheEntries: 1000000}\n", "lookups.cacheEntries",
     "1000000"},
    {"limits.maxBodyBytes", "limits: {maxBodyBytes: 1048576}\n", "limits.maxBodyBytes", "1048576"},
    {"limits.maxContainers", "limits: {maxContainers: 10}\n", "limits.maxContainers", "10"},
    {"limits.maxEnvPerContainer", "limits: {maxEnvPerContainer: 100}\n",
     "limits.maxEnvPerContainer", "100"},
    {"limits.maxWorldSize min", "limits: {maxWorldSize: 1}\n", "limits.maxWorldSize", "1"},
    {"server.threads max", "server: {threads: 256}\n", "server.threads", "256"},
    {"server.threads quoted", "server: {threads: \"8\"}\n", "server.threads", "8"},
    {"server.idleTimeoutSeconds", "server: {idleTimeoutSeconds: 90}\n", "server.idleTimeoutSeconds",
     "90"},
    {"server.maxConnections", "server: {maxConnections: 64}\n", "server.maxConnections", "64"},
    {"server.drainTimeoutSeconds zero", "server: {drainTimeoutSeconds: 0}\n",
     "server.drainTimeoutSeconds", "0"},
    {"logging.level debug", "logging: {level: debug}\n", "logging.level", "0"},
    {"logging.level warn", "logging: {level: warn}\n", "logging.level", "2"},
    {"logging.level error", "logging:\n  level: error\n", "logging.level", "3"},
    {"later sections keep earlier", "server: {threads: 2}\nlogging: {level: error}\n",
     "server.threads", "2"},
};

/* Rejected input: the whole error message (when exact) or a part of it. */
static const struct {
	const char *name, *yaml, *err;
	int exact;
} bad_cases[] = {
    {"int not a number", "listen: \":8443\"\nlookups:\n  timeoutMs: abc\n",
     "line 3: key 'lookups.timeoutMs': must be an integer between 100 and 60000, got \"abc\"", 1},
    {"int below range", "lookups: {timeoutMs: 99}\n",
     "line 1: key 'lookups.timeoutMs': must be an integer between 100 and 60000, got \"99\"", 1},
    {"int above range", "lookups: {timeoutMs: 60001}\n", "between 100 and 60000, got \"60001\"", 0},
    {"int negative", "lookups: {cacheTTLMs: -1}\n", "key 'lookups.cacheTTLMs'", 0},
    {"probeListen without a port", "server: {probeListen: \"localhost\"}\n",
     "key 'server.probeListen': must be HOST:PORT", 0},
    {"headerTimeoutSeconds 0", "server: {headerTimeoutSeconds: 0}\n",
     "key 'server.headerTimeoutSeconds': must be an integer between 1 and 300", 0},
    {"handshakeTimeoutSeconds 0", "server: {handshakeTimeoutSeconds: 0}\n",
     "key 'server.handshakeTimeoutSeconds': must be an integer between 1 and 300, got \"0\"", 0},
    {"handshakeTimeoutSeconds 301", "server: {handshakeTimeoutSeconds: 301}\n",
     "key 'server.handshakeTimeoutSeconds': must be an integer between 1 and 300, got \"301\"", 0},
    {"int float", "server: {threads: 1.5}\n", "got \"1.5\"", 0},
    {"int exponent", "server: {threads: 1e1}\n", "got \"1e1\"", 0},
    {"int hex", "server: {threads: 0x10}\n", "got \"0x10\"", 0},
    {"int plus sign", "server: {threads: +4}\n", "got \"+4\"", 0},
    {"int overflow", "limits: {maxBodyBytes: 99999999999999999999999}\n",
     "key 'limits.maxBodyBytes': must be an integer between 4096 and 67108864", 0},
    {"int empty", "server:\n  threads:\n",
     "line 2: key 'server.threads': must be an integer "
     "between 1 and 256, got nothing",
     1},
    {"int list", "server:\n  threads: [1]\n", "got a list", 0},
    {"threads zero", "server: {threads: 0}\n", "key 'server.threads'", 0},
    {"threads 257", "server: {threads: 257}\n", "between 1 and 256, got \"257\"", 0},
    {"port zero", "defaults: {port: 0}\n",
     "key 'defaults.port': must be an integer between 1 "
     "and 65535",
     0},
    {"port 65536", "defaults: {port: 65536}\n", "key 'defaults.port'", 0},
    {"idle zero", "server: {idleTimeoutSeconds: 0}\n", "key 'server.idleTimeoutSeconds'", 0},
    {"maxConnections zero", "server: {maxConnections: 0}\n", "key 'server.maxConnections'", 0},
    {"drain too long", "server: {drainTimeoutSeconds: 3601}\n", "key 'server.drainTimeoutSeconds'",
     0},
    {"check interval zero", "tls: {checkIntervalSeconds: 0}\n", "key 'tls.checkIntervalSeconds'",
     0},
    {"body limit too small", "limits: {maxBodyBytes: 100}\n", "key 'limits.maxBodyBytes'", 0},
    {"containers zero", "limits: {maxContainers: 0}\n", "key 'limits.maxContainers'", 0},
    {"env zero", "limits: {maxEnvPerContainer: 0}\n", "key 'limits.maxEnvPerContainer'", 0},
    {"world size too big", "limits: {maxWorldSize: 1048577}\n", "key 'limits.maxWorldSize'", 0},
    {"cache entries too many", "lookups: {cacheEntries: 1000001}\n", "key 'lookups.cacheEntries'",
     0},
    {"bool maybe", "lookups:\n  enabled: maybe\n",
     "line 2: key 'lookups.enabled': must be a boolean (true/false, yes/no, on/off), got "
     "\"maybe\"",
     1},
    {"bool number", "lookups: {enabled: 1}\n",
     "must be a boolean (true/false, yes/no, on/off), got \"1\"", 0},
    {"unknown top key", "listen: \":8443\"\nport: 1\n",
     "line 2: key 'port': unknown key (known here: listen, tls, clusterDomain, defaults, "
     "gpuResources, lookups, limits, server, logging, waitInit)",
     1},
    {"unknown nested key", "lookups:\n  enabled: true\n  timeout: 5\n",
     "line 3: key 'lookups.timeout': unknown key (known here: enabled, kubeconfig, timeoutMs, "
     "cacheTTLMs, cacheEntries)",
     1},
    {"key in the wrong section", "server:\n  level: debug\n", "key 'server.level': unknown key", 0},
    {"keys are case-sensitive", "ClusterDomain: x\n", "key 'ClusterDomain': unknown key", 0},
    {"duplicate key", "listen: \":1\"\nlisten: \":2\"\n", "line 2: key 'listen': given twice", 1},
    {"duplicate nested key", "server:\n  threads: 1\n  threads: 2\n",
     "line 3: key 'server.threads': given twice", 1},
    {"section not a mapping", "tls: yes\n", "line 1: key 'tls': must be a mapping, got \"yes\"", 1},
    {"section is a list", "limits:\n  - 1\n", "key 'limits': must be a mapping, got a list", 0},
    {"string is a mapping", "lookups:\n  kubeconfig: {a: 1}\n",
     "line 2: key 'lookups.kubeconfig': must be a string, got a mapping", 1},
    {"listen no port", "listen: \"8443\"\n",
     "key 'listen': must be HOST:PORT, :PORT or "
     "[IPv6]:PORT with a port from 1 to 65535, "
     "got \"8443\"",
     0},
    {"listen empty port", "listen: \"host:\"\n", "key 'listen'", 0},
    {"listen port zero", "listen: \":0\"\n", "key 'listen'", 0},
    {"listen port too big", "listen: \":65536\"\n", "key 'listen'", 0},
    {"listen bare ipv6", "listen: \"::1:8443\"\n", "key 'listen'", 0},
    {"listen ipv6 no colon", "listen: \"[::1]8443\"\n", "key 'listen'", 0},
    {"listen bad ipv6", "listen: \"[zz]:8443\"\n", "key 'listen'", 0},
    {"listen bad host", "listen: \"bad_host:80\"\n", "key 'listen'", 0},
    {"listen null", "listen:\n", "key 'listen': must be a string, got nothing", 0},
    {"domain uppercase", "clusterDomain: Cluster.Local\n",
     "line 1: key 'clusterDomain': must be a lowercase DNS name such as cluster.local (no "
     "trailing dot), got \"Cluster.Local\"",
     1},
    {"domain trailing dot", "clusterDomain: cluster.local.\n", "key 'clusterDomain'", 0},
    {"domain leading dash", "clusterDomain: -a.b\n", "key 'clusterDomain'", 0},
    {"domain empty", "clusterDomain: \"\"\n",
     "line 1: key 'clusterDomain': is empty: leave the key out and serve reads the domain from "
     "its pod's /etc/resolv.conf, or name it (such as cluster.local)",
     1},
    {"domain null", "clusterDomain:\n", "key 'clusterDomain': is empty: leave the key out", 0},
    {"domain label too long",
     "clusterDomain: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.b\n",
     "key 'clusterDomain'", 0},
    {"framework unknown in list", "defaults:\n  frameworks:\n    - pytorch\n    - mxnet\n",
     "line 4: key 'defaults.frameworks': unknown framework \"mxnet\" (known: pytorch, "
     "tensorflow, jax, xgboost, paddle, tpu)",
     1},
    {"framework unknown in string", "defaults: {frameworks: \"pytorch,PyTorch\"}\n",
     "unknown framework \"PyTorch\"", 0},
    {"framework empty item", "defaults: {frameworks: \"pytorch,,jax\"}\n", "empty item", 0},
    {"framework trailing comma", "defaults: {frameworks: \"pytorch,\"}\n", "empty item", 0},
    {"framework leading comma", "defaults: {frameworks: \",jax\"}\n", "empty item", 0},
    {"frameworks empty list", "defaults: {frameworks: []}\n",
     "key 'defaults.frameworks': must name at least one of pytorch, tensorflow, jax", 0},
    {"frameworks mapping", "defaults: {frameworks: {a: 1}}\n",
     "must be a list or a comma-separated string", 0},
    {"frameworks nested list", "defaults: {frameworks: [[jax]]}\n",
     "every item must be pytorch, tensorflow, jax, xgboost, paddle, tpu, got a list", 0},
    {"gpu too many", "gpuResources: [a, b, c, d, e, f, g, h, i]\n",
     "key 'gpuResources': at most 8 items", 0},
    {"gpu bad prefix", "gpuResources: [Nvidia.com/gpu]\n",
     "line 1: key 'gpuResources': \"Nvidia.com/gpu\" is not a resource name such as "
     "nvidia.com/gpu",
     1},
    {"gpu empty name", "gpuResources: [nvidia.com/]\n", "is not a resource name", 0},
    {"gpu two slashes", "gpuResources: [a/b/c]\n", "is not a resource name", 0},
    /* a value is described in 60 characters: a longer one is cut with "...", not one of 60 */
    {"a value of 61 described",
     "defaults: {port: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxy}\n",
     "got \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\"", 0},
    {"frameworks comma string of 256",
     "defaults: {frameworks: \"jax                                                                 "
     "                                                                                             "
     "                                                                                             "
     "  \"}\n",
     "must be a list or a comma-separated string of", 0},
    {"an image with a space", "waitInit: {image: \"x y\"}\n",
     "line 1: key 'waitInit.image': must be a container image reference", 0},
    {"an image with a DEL", "waitInit: {image: \"x\\x7fy\"}\n",
     "key 'waitInit.image': must be a container image reference", 0},
    {"an empty image", "waitInit: {image: \"\"}\n", "key 'waitInit.image'", 0},
    {"a space is described as itself, a control character as ?", "defaults: {port: \"a b\\tc\"}\n",
     "got \"a b?c\"", 0},
    {"a value of 60 described",
     "defaults: {port: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx}\n",
     "got \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"", 0},
    {"gpu a name of 64",
     "gpuResources: [x.io/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaz]\n",
     "is not a resource name", 0},
    /* valid, but past gpu_resources[128]: refused, never kept cut */
    {"gpu a name of 128",
     "gpuResources: "
     "[aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.io/"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaz]\n",
     "is not a resource name", 0},
    {"gpu duplicate", "gpuResources: [nvidia.com/gpu, nvidia.com/gpu]\n",
     "\"nvidia.com/gpu\" is listed twice", 0},
    {"gpu null item", "gpuResources: [a, ~]\n", "every item must be", 0},
    {"log level unknown", "logging: {level: verbose}\n",
     "line 1: key 'logging.level': must be one of debug, info, warn, error, got \"verbose\"", 1},
    {"root is a list", "- listen\n", "line 1: the configuration must be a mapping of keys", 1},
    {"root is a scalar", "hello\n", "the configuration must be a mapping", 0},
    {"two documents", "server: {threads: 2}\n---\nserver: {threads: 3}\n",
     "line 3: the configuration must be one YAML document", 1},
    {"key is a list", "? [a]\n: 1\n", "line 1: keys must be plain names", 1},
    {"malformed flow", "server: {threads: 2\n", "line 2: ", 0},
    {"malformed indentation", "server:\n  threads: 2\n maxConnections: 3\n", "line 3: ", 0},
    {"tab indentation", "server:\n\tthreads: 2\n",
     "line 2: found character that cannot start "
     "any token",
     0},
    {"invalid utf-8", "listen: \":1\"\nclusterDomain: \xc3\x28\n", "line 2: invalid", 0},
};

static void test_defaults(void)
{
	struct config c;
	char got[1024];
	size_t i;

	config_defaults(&c);
	for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
		get(&c, defaults[i].path, got, sizeof(got));
		CHECK_STR(S(got), defaults[i].want, defaults[i].path);
	}
	CHECK(c.log_level == LOG_INFO, "default level");
}

static void test_ok(void)
{
	struct config c;
	char err[512], got[1024];
	size_t i;

	for (i = 0; i < sizeof(ok_cases) / sizeof(ok_cases[0]); i++) {
		config_defaults(&c);
		err[0] = '\0';
		CHECK(config_parse(ok_cases[i].yaml, strlen(ok_cases[i].yaml), &c, err,
		                   sizeof(err)) == 0,
		      "%s: %s", ok_cases[i].name, err);
		get(&c, ok_cases[i].path, got, sizeof(got));
		CHECK_STR(S(got), ok_cases[i].want, ok_cases[i].name);
	}
}

static void test_bad(void)
{
	struct config c;
	char err[512];
	size_t i;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		config_defaults(&c);
		err[0] = '\0';
		CHECK(config_parse(bad_cases[i].yaml, strlen(bad_cases[i].yaml), &c, err,
		                   sizeof(err)) != 0,
		      "%s: accepted", bad_cases[i].name);
		if (bad_cases[i].exact)
			CHECK_STR(S(err), bad_cases[i].err, bad_cases[i].name);
		else
			CHECK(strstr(err, bad_cases[i].err) != NULL, "%s: '%s' lacks '%s'",
			      bad_cases[i].name, err, bad_cases[i].err);
		CHECK(strncmp(err, "line ", 5) == 0, "%s: '%s' names no line", bad_cases[i].name,
		      err);
	}
}

/* clusterDomain set in the file, or the default that serve replaces from resolv.conf. */
static void test_domain_set(void)
{
	static const struct {
		const char *name, *yaml, *domain;
		int set;
	} cases[] = {
	    {"no file content: defaulted", "", "cluster.local", 0},
	    {"other keys only: defaulted", "server: {threads: 2}\n", "cluster.local", 0},
	    {"set to the default's value: set", "clusterDomain: cluster.local\n", "cluster.local",
	     1},
	    {"set to another", "clusterDomain: ml.example\n", "ml.example", 1},
	    {"a bad value is not set", "clusterDomain: Bad.Example\n", "cluster.local", 0},
	};
	struct config c;
	char err[512];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		config_defaults(&c);
		CHECK(c.cluster_domain_set == 0, "%s: defaults say set", cases[i].name);
		(void)!config_parse(cases[i].yaml, strlen(cases[i].yaml), &c, err, sizeof(err));
		CHECK(c.cluster_domain_set == cases[i].set, "%s: set %d, want %d", cases[i].name,
		      c.cluster_domain_set, cases[i].set);
		CHECK_STR(S(c.cluster_domain), cases[i].domain, cases[i].name);
	}
}

/* A full file with every key, as deploy/config.example.yaml documents them. */
static void test_full(void)
{
	static const char yaml[] = "listen: \"0.0.0.0:9443\"\n"
	                           "tls:\n"
	                           "  certFile: /tls/tls.crt\n"
	                           "  keyFile: /tls/tls.key\n"
	                           "  checkIntervalSeconds: 10\n"
	                           "clusterDomain: k8s.example\n"
	                           "defaults:\n"
	                           "  port: 23456\n"
	                           "  frameworks: [pytorch, jax]\n"
	                           "gpuResources: [nvidia.com/gpu]\n"
	                           "lookups:\n"
	                           "  enabled: false\n"
	                           "  kubeconfig: /kube/config\n"
	                           "  timeoutMs: 2000\n"
	                           "  cacheTTLMs: 5000\n"
	                           "  cacheEntries: 100\n"
	                           "limits:\n"
	                           "  maxBodyBytes: 2097152\n"
	                           "  maxContainers: 50\n"
	                           "  maxEnvPerContainer: 500\n"
	                           "  maxWorldSize: 1024\n"
	                           "server:\n"
	                           "  threads: 8\n"
	                           "  idleTimeoutSeconds: 180\n"
	                           "  maxConnections: 256\n"
	                           "  drainTimeoutSeconds: 20\n"
	                           "logging:\n"
	                           "  level: warn\n";
	struct config c;
	char err[512];

	config_defaults(&c);
	CHECK(config_parse(yaml, sizeof(yaml) - 1, &c, err, sizeof(err)) == 0, "full: %s", err);
	CHECK_STR(S(c.listen), "0.0.0.0:9443", "listen");
	CHECK_STR(S(c.tls_cert), "/tls/tls.crt", "certFile");
	CHECK_STR(S(c.tls_key), "/tls/tls.key", "keyFile");
	CHECK(c.cert_check_interval_s == 10, "checkIntervalSeconds");
	CHECK_STR(S(c.cluster_domain), "k8s.example", "clusterDomain");
	CHECK(c.default_port == 23456, "port");
	CHECK(c.default_frameworks == (FW_PYTORCH | FW_JAX), "frameworks %u", c.default_frameworks);
	CHECK(c.n_gpu_resources == 1, "gpu count");
	CHECK_STR(S(c.gpu_resources[0]), "nvidia.com/gpu", "gpu");
	CHECK(c.lookups == 0, "enabled");
	CHECK_STR(S(c.kubeconfig), "/kube/config", "kubeconfig");
	CHECK(c.lookup_timeout_ms == 2000 && c.cache_ttl_ms == 5000 && c.cache_entries == 100,
	      "lookups numbers");
	CHECK(c.max_body_bytes == 2097152 && c.max_containers == 50 &&
	          c.max_env_per_container == 500 && c.max_world_size == 1024,
	      "limits");
	CHECK(c.threads == 8 && c.idle_timeout_s == 180 && c.max_connections == 256 &&
	          c.drain_timeout_s == 20,
	      "server");
	CHECK(c.log_level == LOG_WARN, "level");
}

static void test_long_values(void)
{
	struct config c;
	char err[512];
	char *yaml = malloc(4096);
	size_t n;

	/* a path of CONFIG_PATH_MAX bytes does not fit with its NUL */
	n = (size_t)snprintf(yaml, 4096, "lookups:\n  kubeconfig: /");
	memset(yaml + n, 'a', CONFIG_PATH_MAX - 1);
	n += CONFIG_PATH_MAX - 1;
	yaml[n++] = '\n';
	config_defaults(&c);
	CHECK(config_parse(yaml, n, &c, err, sizeof(err)) != 0, "long path accepted");
	CHECK(strstr(err, "line 2: key 'lookups.kubeconfig': longer than 1023 bytes") != NULL, "%s",
	      err);
	/* one byte shorter fits */
	n = (size_t)snprintf(yaml, 4096, "lookups:\n  kubeconfig: /");
	memset(yaml + n, 'a', CONFIG_PATH_MAX - 2);
	n += CONFIG_PATH_MAX - 2;
	config_defaults(&c);
	CHECK(config_parse(yaml, n, &c, err, sizeof(err)) == 0, "1023-byte path: %s", err);
	CHECK(strlen(c.kubeconfig) == CONFIG_PATH_MAX - 1, "kept whole");
	free(yaml);

	/* the parser refuses more than 1 MiB even from a string */
	n = 1024 * 1024 + 1;
	yaml = malloc(n);
	memset(yaml, '\n', n);
	config_defaults(&c);
	CHECK(config_parse(yaml, n, &c, err, sizeof(err)) != 0, "2 MiB accepted");
	free(yaml);

	/* deep nesting inside a known key is rejected without trouble */
	n = 100000;
	yaml = malloc(n + 64);
	{
		size_t o = (size_t)sprintf(yaml, "gpuResources: ");
		memset(yaml + o, '[', n);
		o += n;
		config_defaults(&c);
		CHECK(config_parse(yaml, o, &c, err, sizeof(err)) != 0, "deep nesting accepted");
	}
	free(yaml);
}

static void write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(data, 1, len, f);
		fclose(f);
	}
}

static void test_load(void)
{
	char dir[] = "/tmp/distenv-test-config-XXXXXX", path[256], err[512];
	struct config c;
	char *big;

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/config.yaml", dir);
	write_file(path, "server:\n  threads: 7\n", 21);
	config_defaults(&c);
	CHECK(config_load(path, &c, err, sizeof(err)) == 0, "load: %s", err);
	CHECK(c.threads == 7, "threads from file");

	write_file(path, "server:\n  threads: x\n", 21);
	CHECK(config_load(path, &c, err, sizeof(err)) != 0, "bad file accepted");
	CHECK_STR(S(err),
	          "line 2: key 'server.threads': must be an integer between 1 and 256, got \"x\"",
	          "error from a file");

	big = malloc(1024 * 1024 + 1);
	memset(big, '#', 1024 * 1024 + 1);
	big[1024 * 1024 - 1] = '\n';
	write_file(path, big, 1024 * 1024); /* exactly 1 MiB: a comment */
	CHECK(config_load(path, &c, err, sizeof(err)) == 0, "1 MiB file: %s", err);
	write_file(path, big, 1024 * 1024 + 1);
	CHECK(config_load(path, &c, err, sizeof(err)) != 0, "1 MiB + 1 accepted");
	CHECK_STR(S(err), "larger than 1 MiB", "oversize file");
	free(big);
	unlink(path);

	CHECK(config_load(path, &c, err, sizeof(err)) != 0, "missing file accepted");
	CHECK_STR(S(err), "cannot open: No such file or directory", "missing file");
	CHECK(config_load(dir, &c, err, sizeof(err)) != 0, "directory accepted");
	CHECK_STR(S(err), "not a regular file", "directory");
	rmdir(dir);
}

/* deploy/config.example.yaml documents every key at its default: it must parse to the defaults. */
static void test_example(void)
{
	struct config c, d;
	char err[512], got[1024], want[1024];
	size_t i;

	config_defaults(&d);
	config_defaults(&c);
	c.threads = 99; /* proves the file sets it */
	CHECK(config_load("deploy/config.example.yaml", &c, err, sizeof(err)) == 0,
	      "deploy/config.example.yaml (run from the repository root): %s", err);
	for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
		get(&c, defaults[i].path, got, sizeof(got));
		get(&d, defaults[i].path, want, sizeof(want));
		CHECK(strcmp(got, want) == 0, "example %s: %s, default %s", defaults[i].path, got,
		      want);
	}
	CHECK(c.cluster_domain_set == 0, "the example sets clusterDomain: it would stop serve "
	                                 "reading its pod's resolv.conf");
}

/*
 * The config.yaml the chart renders from its default values (the ConfigMap of
 * deploy/distenv.yaml and deploy/distenv-cert-manager.yaml: helm template's
 * output, which make manifests-check holds to the chart) gives every setting a
 * rule's answer depends on the binary's own default, so the tests that run
 * with config_defaults() run with what the chart ships. The chart sets only
 * where its pod keeps the certificate (tls.certFile, tls.keyFile) and its probe
 * port (server.probeListen), and writes no clusterDomain: serve then reads its
 * pod's resolv.conf, as it does with no file.
 */
static void test_chart_config(void)
{
	static const char *const files[] = {"deploy/distenv.yaml",
	                                    "deploy/distenv-cert-manager.yaml"};
	static const struct {
		const char *path, *want;
	} chart_sets[] = {
	    {"tls.certFile", "/etc/distenv/tls/tls.crt"},
	    {"tls.keyFile", "/etc/distenv/tls/tls.key"},
	    {"server.probeListen", ":8081"},
	};
	char line[1024], got[1024], want[1024], err[512], path[32];
	size_t i, k, f;

	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		FILE *in = fopen(files[f], "r"), *out;
		struct config c, d;
		int fd, inside = 0, lines = 0;

		snprintf(path, sizeof(path), "/tmp/distenv-chart-XXXXXX");
		fd = mkstemp(path);

		CHECK(in != NULL && fd >= 0, "%s (run from the repository root)", files[f]);
		if (in == NULL || fd < 0) {
			if (in != NULL)
				fclose(in);
			if (fd >= 0)
				close(fd);
			continue;
		}
		out = fdopen(fd, "w");
		while (fgets(line, sizeof(line), in) != NULL) {
			if (!inside) {
				inside = strcmp(line, "  config.yaml: |\n") == 0;
				continue;
			}
			if (strncmp(line, "    ", 4) != 0 && line[0] != '\n')
				break; /* the block ends where its indentation does */
			fputs(line[0] == '\n' ? line : line + 4, out);
			lines++;
		}
		fclose(in);
		fclose(out);
		CHECK(lines > 20, "%s: the ConfigMap's config.yaml has %d lines", files[f], lines);
		config_defaults(&d);
		config_defaults(&c);
		c.threads = 99; /* proves the file sets it */
		CHECK(config_load(path, &c, err, sizeof(err)) == 0, "%s's config.yaml: %s",
		      files[f], err);
		unlink(path);
		for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
			get(&d, defaults[i].path, want, sizeof(want));
			for (k = 0; k < sizeof(chart_sets) / sizeof(chart_sets[0]); k++)
				if (strcmp(chart_sets[k].path, defaults[i].path) == 0)
					snprintf(want, sizeof(want), "%s", chart_sets[k].want);
			get(&c, defaults[i].path, got, sizeof(got));
			CHECK(strcmp(got, want) == 0, "%s: %s is %s, the binary's default %s",
			      files[f], defaults[i].path, got, want);
		}
		CHECK(c.cluster_domain_set == 0,
		      "%s sets clusterDomain: serve would stop reading its pod's resolv.conf",
		      files[f]);
		CHECK(strcmp(c.wait_image, d.wait_image) == 0 &&
		          strcmp(c.wait_pull_policy, d.wait_pull_policy) == 0,
		      "%s: waitInit %s (%s), the binary's %s (%s)", files[f], c.wait_image,
		      c.wait_pull_policy, d.wait_image, d.wait_pull_policy);
	}
}

static const struct {
	const char *in;
	int rc;
	unsigned mask;
} fw_cases[] = {
    {"pytorch", 0, FW_PYTORCH},
    {"tensorflow", 0, FW_TENSORFLOW},
    {"jax", 0, FW_JAX},
    {"pytorch,tensorflow", 0, FW_PYTORCH | FW_TENSORFLOW},
    {" jax , pytorch ", 0, FW_JAX | FW_PYTORCH},
    {"jax,jax", 0, FW_JAX},
    {"", -1, 0},
    {",", -1, 0},
    {"pytorch,", -1, 0},
    {",jax", -1, 0},
    {"torch", -1, 0},
    {"PyTorch", -1, 0},
    {"pytorch;jax", -1, 0},
};

static const struct {
	const char *in;
	int rc;
	enum log_level lvl;
} level_cases[] = {
    {"debug", 0, LOG_DEBUG},  {"info", 0, LOG_INFO},   {"warn", 0, LOG_WARN},
    {"warning", 0, LOG_WARN}, {"error", 0, LOG_ERROR}, {"", -1, LOG_INFO},
    {"DEBUG", -1, LOG_INFO},  {"trace", -1, LOG_INFO}, {"info ", -1, LOG_INFO},
};

static void test_helpers(void)
{
	size_t i;

	for (i = 0; i < sizeof(fw_cases) / sizeof(fw_cases[0]); i++) {
		unsigned m = 0xdead;
		int rc = config_parse_frameworks(fw_cases[i].in, &m);
		CHECK(rc == fw_cases[i].rc, "frameworks '%s': rc %d", fw_cases[i].in, rc);
		if (rc == 0)
			CHECK(m == fw_cases[i].mask, "frameworks '%s': mask %u", fw_cases[i].in, m);
		else
			CHECK(m == 0xdead, "frameworks '%s': mask written on failure",
			      fw_cases[i].in);
	}
	CHECK(config_parse_frameworks(NULL, &(unsigned){0}) == -1, "NULL list");
	for (i = 0; i < sizeof(level_cases) / sizeof(level_cases[0]); i++) {
		enum log_level l = LOG_INFO;
		int rc = config_parse_log_level(level_cases[i].in, &l);
		CHECK(rc == level_cases[i].rc && l == level_cases[i].lvl,
		      "level '%s': rc %d lvl %d", level_cases[i].in, rc, (int)l);
	}
}

int main(void)
{
	test_defaults();
	test_ok();
	test_bad();
	test_full();
	test_domain_set();
	test_long_values();
	test_load();
	test_example();
	test_chart_config();
	test_helpers();
	TEST_MAIN_END("config");
}
