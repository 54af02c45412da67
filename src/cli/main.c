/*
 * distenv-webhook: the command line. Parses flags, loads configuration and
 * calls the modules; the only place that prints usage or exits.
 */
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <curl/curl.h>

#include "annotation.h"
#include "arena.h"
#include "devcerts.h"
#include "doctor.h"
#include "doctor_cmd.h"
#include "config.h"
#include "frameworks.h"
#include "kinds.h"
#include "kube.h"
#include "log.h"
#include "render.h"
#include "selftest.h"
#include "server.h"
#include "util.h"
#include "strbuf.h"
#include "dns.h"
#include "file.h"
#include "metrics.h"
#include "version.h"
#include "wait.h"

#define MANIFEST_MAX (16L * 1024 * 1024)
#define RESOLV_MAX   (64 * 1024) /* kubelet's resolv.conf is a few lines */
/* Test hook (docs/testing only): the resolv.conf serve reads instead of /etc/resolv.conf. */
#define RESOLV_ENV "DISTENV_RESOLV_CONF"

static const char usage_main[] =
    "usage: distenv-webhook COMMAND [OPTIONS]\n"
    "\n"
    "Admission webhook that gives the pods of StatefulSets, Indexed Jobs, JobSets\n"
    "and LeaderWorkerSets the environment of a distributed training job (PyTorch,\n"
    "torchrun, Lightning, accelerate, DeepSpeed, TensorFlow, JAX, XGBoost,\n"
    "PaddlePaddle), and checks those workloads when they are applied.\n"
    "\n"
    "commands:\n"
    "  serve         run the HTTPS admission webhook\n"
    "  render        print the env every rank of a manifest would get\n"
    "  certs         write a development CA and serving certificate\n"
    "  check-config  validate a configuration file\n"
    "  wait          wait for rank 0 (the distenv.dev/wait-for-master init container)\n"
    "  selftest      check a running webhook over HTTPS (the chart's helm test)\n"
    "  version       print the version\n"
    "\n"
    "Run 'distenv-webhook COMMAND --help' for the options of a command.\n";

static const char usage_serve[] =
    "usage: distenv-webhook serve [--config FILE] [--listen HOST:PORT] [--tls-cert FILE]\n"
    "                             [--tls-key FILE] [--kubeconfig FILE] [--no-lookups]\n"
    "                             [--log-level debug|info|warn|error] [--probe-listen HOST:PORT]\n"
    "\n"
    "Serves POST /mutate and /validate (AdmissionReview v1), GET /healthz, /readyz and\n"
    "/metrics over\n"
    "HTTPS (TLS 1.2 and 1.3). Flags override the config file. Without --kubeconfig,\n"
    "lookups.kubeconfig or $KUBECONFIG (its first file) the\n"
    "in-cluster service account is used for look-ups; --no-lookups turns them off.\n"
    "--probe-listen (server.probeListen) serves GET /healthz and /readyz over plain HTTP\n"
    "on a port of its own, for the kubelet's probes. SIGTERM or SIGINT drains open\n"
    "connections and exits 0; SIGHUP checks the certificate files now.\n";

static const char usage_render[] =
    "usage: distenv-webhook render [--config FILE] [--namespace NS] [--world-size N]\n"
    "                              [-o text|json] [--strict] MANIFEST.yaml\n"
    "\n"
    "Reads StatefulSet, Job, JobSet, LeaderWorkerSet or Pod manifests (YAML, several\n"
    "documents or a List allowed; '-' is stdin) and prints, offline, the environment\n"
    "each rank would get; a LeaderWorkerSet's ranks name their group, a world of its\n"
    "own. --strict (or --warnings-as-errors, kubectl's spelling) exits 1 when there\n"
    "is any warning, for a CI gate.\n";

static const char usage_certs[] =
    "usage: distenv-webhook certs --service NAME --namespace NS --out DIR [--days N]\n"
    "                             [--dns NAME]... [--ip ADDR]...\n"
    "\n"
    "Writes DIR/ca.crt, DIR/tls.crt and DIR/tls.key (mode 0600): a CA and a serving\n"
    "certificate for NAME, NAME.NS, NAME.NS.svc, NAME.NS.svc.cluster.local, localhost,\n"
    "127.0.0.1 and every --dns/--ip.\n";

static const char usage_check[] =
    "usage: distenv-webhook check-config FILE\n"
    "\n"
    "Validates a configuration file; prints 'configuration OK' and where\n"
    "serve takes the cluster domain from.\n";

static const char usage_version[] = "usage: distenv-webhook version\n";

static const char usage_selftest[] =
    "usage: distenv-webhook selftest --url https://HOST[:PORT] [--ca-file FILE]\n"
    "                                [--timeout DURATION] [--connect-to ADDR]\n"
    "\n"
    "Checks a running webhook as the API server would reach it: GET /healthz, then\n"
    "AdmissionReviews whose answers need nothing in the cluster (a pod without the\n"
    "opt-in label is allowed without a patch, an opted-in ReplicaSet pod is denied,\n"
    "/validate denies a Job that is not Indexed). The server's certificate must chain\n"
    "to FILE (default: the system CAs) and name HOST. DURATION per request, default 10s.\n"
    "--connect-to ADDR connects to ADDR (e.g. one replica's IP, [::1] for IPv6) on the\n"
    "same port instead of resolving HOST; the certificate must still name HOST.\n"
    "One line per check; exit 0 when all pass, 1 when one fails, 2 on bad arguments.\n";

static const char usage_wait[] =
    "usage: distenv-webhook wait [--timeout DURATION]\n"
    "\n"
    "Waits until MASTER_ADDR resolves and, unless RANK is 0, until MASTER_PORT accepts\n"
    "a TCP connection (read from the environment, as distenv injects them). Prints\n"
    "what it waits for every 5 s. DURATION is 30s, 5m, 1h (or 1h30m), default 10m.\n"
    "Exit 0 when ready, 1 when the time is up, 2 on bad arguments or environment.\n";

static const char usage_doctor[] =
    "usage: distenv-webhook doctor KIND/NAME [-n NAMESPACE] [--kubeconfig FILE] [-o text|json]\n"
    "       kubectl distenv doctor KIND/NAME [-n NAMESPACE] [--kubeconfig FILE] [-o text|json]\n"
    "\n"
    "Reads a running job from the API server as a person would (the workload, its\n"
    "pods and events, the Service and its EndpointSlices, the namespace and its\n"
    "NetworkPolicies, distenv's webhook configuration) and prints a checklist in the\n"
    "order a job forms: distenv installed, pods opted in and injected, every rank\n"
    "present and running, one world, rank 0 reachable, no mesh in the way, ranks in\n"
    "step. Each line is OK (\u2713), blocking (\u2717), a warning (!) or not checkable (?),\n"
    "with what was seen and the fix; the first blocking cause is named first.\n"
    "KIND: sts (statefulset), job, jobset, lws (leaderworkerset). NAMESPACE: default\n"
    "'default'. --kubeconfig, else $KUBECONFIG (its first file), else ~/.kube/config,\n"
    "else the in-cluster service account. The RBAC it needs: docs/troubleshooting.md.\n"
    "Exit 0 when nothing blocks and everything could be read, 1 when something\n"
    "blocks, 3 when nothing blocks in what could be read but something could not be\n"
    "read, 2 on bad arguments or when the API server cannot be used.\n";

/* How errors name the program: "kubectl distenv" when run as the kubectl plugin. */
static const char *prog = "distenv-webhook";

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static int is_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
	return 0;
}

static int copy_opt(char *dst, size_t dstlen, const char *val, const char *flag)
{
	if (bounded_printf(dst, dstlen, "%s", val) != 0) {
		fail("%s: value too long", flag);
		return -1;
	}
	return 0;
}

/* serve's flags as given: NULL where absent. */
struct serve_flags {
	const char *config, *listen, *cert, *key, *kubeconfig, *level, *probe;
	int no_lookups;
};

/*
 * Reads serve's flags into f. Returns 0, or the exit status having said why:
 * 2 with the usage on an unknown flag, 1 on an argument after them.
 */
static int serve_parse_flags(int argc, char **argv, struct serve_flags *f)
{
	static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
	                                     {"listen", required_argument, NULL, 'l'},
	                                     {"tls-cert", required_argument, NULL, 'C'},
	                                     {"tls-key", required_argument, NULL, 'K'},
	                                     {"kubeconfig", required_argument, NULL, 'k'},
	                                     {"no-lookups", no_argument, NULL, 'n'},
	                                     {"log-level", required_argument, NULL, 'v'},
	                                     {"probe-listen", required_argument, NULL, 'p'},
	                                     {NULL, 0, NULL, 0}};
	int c;

	memset(f, 0, sizeof(*f));
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			f->config = optarg;
			break;
		case 'l':
			f->listen = optarg;
			break;
		case 'C':
			f->cert = optarg;
			break;
		case 'K':
			f->key = optarg;
			break;
		case 'k':
			f->kubeconfig = optarg;
			break;
		case 'n':
			f->no_lookups = 1;
			break;
		case 'v':
			f->level = optarg;
			break;
		case 'p':
			f->probe = optarg;
			break;
		default:
			fputs(usage_serve, stderr);
			return 2;
		}
	}
	if (optind != argc)
		return fail("serve: unexpected argument '%s'", argv[optind]);
	return 0;
}

/*
 * As every Kubernetes tool: --kubeconfig, then the config file, then
 * $KUBECONFIG (its first file; lists are not merged), then in-cluster.
 * Returns 0, or 1 having said why.
 */
static int serve_kubeconfig_env(struct config *cfg)
{
	const char *env = getenv("KUBECONFIG");
	size_t n;

	if (cfg->kubeconfig[0] != '\0' || env == NULL || env[0] == '\0')
		return 0;
	n = strcspn(env, ":");
	if (n == 0 || n >= sizeof(cfg->kubeconfig))
		return fail("serve: KUBECONFIG \"%.64s\" does not start with a usable path", env);
	memcpy(cfg->kubeconfig, env, n);
	cfg->kubeconfig[n] = '\0';
	return 0;
}

/*
 * Fills cfg: the defaults, the config file over them, the flags over that,
 * $KUBECONFIG where none names a kubeconfig; then checks the log level and
 * that a certificate and key are named. Returns 0, or 1 having said why.
 */
static int serve_config(const struct serve_flags *f, struct config *cfg)
{
	char err[512];

	config_defaults(cfg);
	if (f->config != NULL && config_load(f->config, cfg, err, sizeof(err)) != 0)
		return fail("%s: %s", f->config, err);
	if ((f->listen && copy_opt(cfg->listen, sizeof(cfg->listen), f->listen, "--listen")) ||
	    (f->cert && copy_opt(cfg->tls_cert, sizeof(cfg->tls_cert), f->cert, "--tls-cert")) ||
	    (f->key && copy_opt(cfg->tls_key, sizeof(cfg->tls_key), f->key, "--tls-key")) ||
	    (f->kubeconfig &&
	     copy_opt(cfg->kubeconfig, sizeof(cfg->kubeconfig), f->kubeconfig, "--kubeconfig")) ||
	    (f->probe &&
	     copy_opt(cfg->probe_listen, sizeof(cfg->probe_listen), f->probe, "--probe-listen")))
		return 1;
	if (f->no_lookups)
		cfg->lookups = 0;
	if (serve_kubeconfig_env(cfg) != 0)
		return 1;
	if (f->level != NULL && config_parse_log_level(f->level, &cfg->log_level) != 0)
		return fail("--log-level: '%s' is not one of debug, info, warn, error", f->level);
	if (cfg->tls_cert[0] == '\0' || cfg->tls_key[0] == '\0')
		return fail("serve: a TLS certificate and key are required (--tls-cert, "
		            "--tls-key or tls.certFile/keyFile in the config)");
	return 0;
}

/*
 * The cluster domain serve writes into MASTER_ADDR: the config's when set,
 * else what its own pod's resolv.conf shows (kubelet wrote it from its
 * clusterDomain), else cluster.local. Says which and where from (a log line,
 * distenv_cluster_domain_info), and warns when a configured one differs from
 * the pod's. The file is read here; dns_cluster_domain_from_resolv reads it.
 */
static void serve_cluster_domain(struct config *cfg)
{
	const char *path = getenv(RESOLV_ENV), *source;
	char seen[254] = "", why[128] = "", msg[640];
	size_t len = 0;
	char *text;

	if (path == NULL || path[0] == '\0')
		path = "/etc/resolv.conf";
	text = file_read(path, RESOLV_MAX, &len, NULL, 0);
	if (text == NULL) {
		snprintf(why, sizeof(why), "cannot be read (%s)", strerror(errno));
	} else {
		if (dns_cluster_domain_from_resolv(text, len, seen, sizeof(seen)) != 1)
			snprintf(why, sizeof(why), "its search list has no svc.<domain> entry");
		free(text);
	}
	if (cfg->cluster_domain_set) {
		source = "config";
		if (seen[0] != '\0' && strcmp(seen, cfg->cluster_domain) != 0) {
			snprintf(msg, sizeof(msg),
			         /* the domain itself: "svc.<it>" read like a copied svc.<domain> */
			         "distenv: clusterDomain %s, but this pod's resolv.conf says %s: "
			         "MASTER_ADDR may not resolve",
			         cfg->cluster_domain, seen);
			log_kv(LOG_WARN, "cluster_domain_mismatch", "message", msg, "domain",
			       cfg->cluster_domain, "resolv_conf", path, "resolv_conf_domain", seen,
			       LOG_END);
		}
	} else if (seen[0] != '\0') {
		source = "resolv.conf";
		snprintf(cfg->cluster_domain, sizeof(cfg->cluster_domain), "%s", seen);
	} else {
		source = "default";
		snprintf(msg, sizeof(msg),
		         "distenv: %s: %s; using %s (set clusterDomain if the cluster's differs)",
		         path, why, cfg->cluster_domain);
		log_kv(LOG_INFO, "cluster_domain_default", "message", msg, LOG_END);
	}
	log_kv(LOG_INFO, "cluster_domain", "domain", cfg->cluster_domain, "source", source,
	       "resolv_conf", path, "resolv_conf_domain", seen, LOG_END);
	metrics_cluster_domain(cfg->cluster_domain, source);
}

static int cmd_serve(int argc, char **argv)
{
	struct serve_flags flags;
	int st, rc = 1;
	struct config cfg;
	struct kube_client *kc = NULL;
	struct workload_lookup lk = {NULL, NULL, NULL, NULL, NULL};
	char err[512];

	if ((st = serve_parse_flags(argc, argv, &flags)) != 0)
		return st;
	if (serve_config(&flags, &cfg) != 0)
		return 1;
	log_set_level(cfg.log_level);
	serve_cluster_domain(&cfg);
	/*
	 * Process-wide, before any thread starts (as nginx does): a write to a
	 * closed stderr pipe or socket must fail with EPIPE, not kill the server.
	 */
	signal(SIGPIPE, SIG_IGN);

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return fail("serve: cannot initialise libcurl");
	if (cfg.lookups) {
		kc = kube_client_new(&cfg, err, sizeof(err));
		if (kc == NULL) {
			fail("serve: Kubernetes API client: %s (use --kubeconfig, or --no-lookups "
			     "to take the world size from annotations only)",
			     err);
			goto out;
		}
		lk.get = kube_get_workload;
		lk.get_service = kube_get_service;
		lk.list_netpols = kube_list_netpols;
		lk.get_object = kube_get_object;
		lk.ctx = kc;
	}
	if (server_run(&cfg, kc ? &lk : NULL, err, sizeof(err)) != 0) {
		fail("serve: %s", err);
		goto out;
	}
	rc = 0;
out:
	kube_client_free(kc);
	curl_global_cleanup();
	return rc;
}

/* Reads a whole file (or stdin for "-") up to max bytes. Returns malloc'd data or NULL with err. */
static char *read_input(const char *path, long max, size_t *len, char *err, size_t errlen)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	struct strbuf sb;
	char buf[65536];
	size_t n;

	if (f == NULL) {
		snprintf(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	strbuf_init(&sb);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		if ((long)(sb.len + n) > max) {
			snprintf(err, errlen, "larger than %ld bytes", max);
			strbuf_free(&sb);
			if (f != stdin)
				fclose(f);
			return NULL;
		}
		strbuf_append(&sb, buf, n);
	}
	if (ferror(f)) {
		snprintf(err, errlen, "read error");
		strbuf_free(&sb);
		if (f != stdin)
			fclose(f);
		return NULL;
	}
	if (f != stdin)
		fclose(f);
	*len = sb.len;
	if (sb.oom)
		snprintf(err, errlen, "out of memory");
	return strbuf_take(&sb);
}

static int cmd_render(int argc, char **argv)
{
	static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
	                                     {"namespace", required_argument, NULL, 'N'},
	                                     {"world-size", required_argument, NULL, 'w'},
	                                     {"output", required_argument, NULL, 'o'},
	                                     {"strict", no_argument, NULL, 'S'},
	                                     {"warnings-as-errors", no_argument, NULL, 'S'},
	                                     {NULL, 0, NULL, 0}};
	struct render_opts ro = {NULL, 0, RENDER_TEXT};
	int strict = 0, warned;
	const char *config = NULL;
	struct config cfg;
	char err[1280], *text, *out;
	struct strbuf warn;
	size_t len = 0;
	int c;

	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config = optarg;
			break;
		case 'N':
			if (!dns_label_valid(optarg))
				return fail("--namespace: '%s' is not a valid namespace", optarg);
			ro.namespace = optarg;
			break;
		case 'w':
			if (parse_long(optarg, 1, 1L << 20, &ro.world_size) != 0)
				return fail("--world-size: '%s' is not a whole number above 0",
				            optarg);
			break;
		case 'S':
			strict = 1;
			break;
		case 'o':
			if (strcmp(optarg, "text") == 0)
				ro.format = RENDER_TEXT;
			else if (strcmp(optarg, "json") == 0)
				ro.format = RENDER_JSON;
			else
				return fail("-o: '%s' is not text or json", optarg);
			break;
		default:
			fputs(usage_render, stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fputs(usage_render, stderr);
		return 2;
	}
	config_defaults(&cfg);
	if (config != NULL && config_load(config, &cfg, err, sizeof(err)) != 0)
		return fail("%s: %s", config, err);
	if (ro.world_size > cfg.max_world_size)
		return fail("--world-size: above the limit of limits.maxWorldSize");
	text = read_input(argv[optind], MANIFEST_MAX, &len, err, sizeof(err));
	if (text == NULL)
		return fail("%s: %s", argv[optind], err);
	strbuf_init(&warn);
	out = render_manifest(text, len, &cfg, &ro, &warn, err, sizeof(err));
	free(text);
	if (warn.len > 0)
		fputs(warn.buf, stderr);
	if (warn.oom)
		fputs("distenv-webhook render: out of memory: warnings cut short\n", stderr);
	warned = warn.len > 0 || warn.oom;
	strbuf_free(&warn);
	if (out == NULL)
		return fail("%s: %s", argv[optind], err);
	fputs(out, stdout);
	free(out);
	if (fflush(stdout) != 0)
		return 1;
	if (strict && warned)
		return fail("%s: warnings (--strict)", argv[optind]);
	return 0;
}

static int cmd_certs(int argc, char **argv)
{
	static const struct option opts[] = {{"service", required_argument, NULL, 's'},
	                                     {"namespace", required_argument, NULL, 'N'},
	                                     {"out", required_argument, NULL, 'o'},
	                                     {"days", required_argument, NULL, 'd'},
	                                     {"dns", required_argument, NULL, 'D'},
	                                     {"ip", required_argument, NULL, 'i'},
	                                     {NULL, 0, NULL, 0}};
	struct certs_opts co;
	char err[512];
	int c;

	memset(&co, 0, sizeof(co));
	co.days = 365;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			co.service = optarg;
			break;
		case 'N':
			co.namespace = optarg;
			break;
		case 'o':
			co.out_dir = optarg;
			break;
		case 'd':
			if (parse_long(optarg, 1, 36500, &co.days) != 0)
				return fail("--days: '%s' is not a whole number from 1 to 36500",
				            optarg);
			break;
		case 'D':
			if (co.n_dns == CERTS_MAX_EXTRA)
				return fail("--dns: at most %d names", CERTS_MAX_EXTRA);
			co.dns[co.n_dns++] = optarg;
			break;
		case 'i':
			if (co.n_ip == CERTS_MAX_EXTRA)
				return fail("--ip: at most %d addresses", CERTS_MAX_EXTRA);
			co.ip[co.n_ip++] = optarg;
			break;
		default:
			fputs(usage_certs, stderr);
			return 2;
		}
	}
	if (optind != argc)
		return fail("certs: unexpected argument '%s'", argv[optind]);
	if (co.service == NULL || co.namespace == NULL || co.out_dir == NULL) {
		fputs(usage_certs, stderr);
		return fail("certs: --service, --namespace and --out are required");
	}
	if (!dns_label_valid(co.service))
		return fail("--service: '%s' is not a valid Service name", co.service);
	if (!dns_label_valid(co.namespace))
		return fail("--namespace: '%s' is not a valid namespace", co.namespace);
	if (certs_generate(&co, err, sizeof(err)) != 0)
		return fail("certs: %s", err);
	printf("wrote %s/ca.crt, %s/tls.crt and %s/tls.key\n", co.out_dir, co.out_dir, co.out_dir);
	return 0;
}

static int cmd_check_config(int argc, char **argv)
{
	struct config cfg;
	char err[512];

	if (argc != 2) {
		fputs(usage_check, stderr);
		return 2;
	}
	config_defaults(&cfg);
	if (config_load(argv[1], &cfg, err, sizeof(err)) != 0)
		return fail("%s: %s", argv[1], err);
	puts("configuration OK");
	/* set or defaulted: serve treats the two apart */
	if (cfg.cluster_domain_set)
		printf("clusterDomain: %s (set here)\n", cfg.cluster_domain);
	else
		puts("clusterDomain: not set (serve reads svc.<domain> from its pod's "
		     "/etc/resolv.conf, else cluster.local)");
	return 0;
}

static const char *env_get(const char *name)
{
	return getenv(name);
}

static int cmd_wait(int argc, char **argv)
{
	struct wait_target t;
	long timeout_s = 600;
	char err[256];
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc &&
		    annotation_duration(argv[i + 1], 86400, &timeout_s) == 0) {
			i++;
			continue;
		}
		if (strcmp(argv[i], "--timeout") == 0) {
			fail(
			    "wait: --timeout \"%.32s\" is not a duration such as 30s, 5m or 1h (at "
			    "most 24h)",
			    i + 1 < argc ? argv[i + 1] : "");
			return 2;
		}
		fputs(usage_wait, stderr);
		return 2;
	}
	if (wait_target_from_env(env_get, &t, err, sizeof(err)) != 0) {
		fail("wait: %s", err);
		return 2;
	}
	return wait_run(&t, timeout_s * 1000, 5000, stderr);
}

static int cmd_selftest(int argc, char **argv)
{
	static const struct option opts[] = {{"url", required_argument, NULL, 'u'},
	                                     {"ca-file", required_argument, NULL, 'a'},
	                                     {"connect-to", required_argument, NULL, 'C'},
	                                     {"timeout", required_argument, NULL, 't'},
	                                     {NULL, 0, NULL, 0}};
	struct selftest_opts o = {NULL, NULL, 10000, NULL};
	long secs = 10;
	char err[256];
	int c, failed;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'u':
			o.url = optarg;
			break;
		case 'a':
			o.ca_file = optarg;
			break;
		case 'C':
			o.connect_to = optarg;
			break;
		case 't':
			if (annotation_duration(optarg, 300, &secs) != 0 || secs < 1) {
				fail(
				    "selftest: --timeout \"%.32s\" is not a duration from 1s to 5m",
				    optarg);
				return 2;
			}
			o.timeout_ms = secs * 1000;
			break;
		default:
			fputs(usage_selftest, stderr);
			return 2;
		}
	}
	if (optind != argc || o.url == NULL) {
		fputs(usage_selftest, stderr);
		return 2;
	}
	failed = selftest_run(&o, stdout, err, sizeof(err));
	if (failed < 0) {
		fail("selftest: %s", err);
		return 2;
	}
	return failed > 0 ? 1 : 0;
}

static int cmd_doctor(int argc, char **argv)
{
	static const struct option opts[] = {{"namespace", required_argument, NULL, 'n'},
	                                     {"kubeconfig", required_argument, NULL, 'k'},
	                                     {"output", required_argument, NULL, 'o'},
	                                     {NULL, 0, NULL, 0}};
	struct doctor_opts o = {NULL, NULL, "default", 0};
	const char *kubeconfig = NULL, *home;
	char name[256], err[1024];
	struct config cfg;
	int c, rc;

	while ((c = getopt_long(argc, argv, "n:o:", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (!dns_label_valid(optarg))
				return fail("-n: '%s' is not a valid namespace", optarg), 2;
			o.ns = optarg;
			break;
		case 'k':
			kubeconfig = optarg;
			break;
		case 'o':
			if (strcmp(optarg, "json") == 0)
				o.json = 1;
			else if (strcmp(optarg, "text") != 0)
				return fail("-o: '%s' is not text or json", optarg), 2;
			break;
		default:
			fputs(usage_doctor, stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fputs(usage_doctor, stderr);
		return 2;
	}
	if (doctor_parse_target(argv[optind], &o.kind, name, sizeof(name), err, sizeof(err)) != 0)
		return fail("doctor: %s", err), 2;
	o.name = name;
	config_defaults(&cfg);
	cfg.lookup_timeout_ms = 15000; /* a person waits longer than an admission */
	cfg.cache_ttl_ms = 0;
	if (kubeconfig != NULL &&
	    copy_opt(cfg.kubeconfig, sizeof(cfg.kubeconfig), kubeconfig, "--kubeconfig") != 0)
		return 2;
	if (serve_kubeconfig_env(&cfg) != 0)
		return 2;
	home = getenv("HOME");
	if (cfg.kubeconfig[0] == '\0' && getenv("KUBERNETES_SERVICE_HOST") == NULL &&
	    home != NULL) {
		struct stat st;
		char def[sizeof(cfg.kubeconfig)];
		if (bounded_printf(def, sizeof(def), "%s/.kube/config", home) == 0 &&
		    stat(def, &st) == 0)
			memcpy(cfg.kubeconfig, def, sizeof(def));
	}
	/* said here with every place looked at: the client's own words name the flag alone */
	if (cfg.kubeconfig[0] == '\0' && getenv("KUBERNETES_SERVICE_HOST") == NULL)
		return fail("doctor: no kubeconfig: give --kubeconfig FILE or set $KUBECONFIG "
		            "(~/.kube/config does not exist, and this is not a pod)"),
		       2;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return fail("doctor: cannot initialise libcurl"), 2;
	log_set_level(LOG_ERROR); /* the client's start-up line is for serve's log, not here */
	err[0] = '\0';
	rc = doctor_cmd_run(&o, &cfg, stdout, err, sizeof(err));
	curl_global_cleanup();
	if (rc == 2)
		fail("doctor: %s", err[0] ? err : "failed");
	if (fflush(stdout) != 0)
		return 2;
	return rc;
}

/* The annotation table as docs/environment.md's Markdown rows, and the frameworks (render --help).
 */
static void print_annotations(FILE *out)
{
	size_t i;

	fputs("\nAnnotations on the pod template (docs/environment.md's table):\n\n"
	      "| annotation | meaning | default |\n| --- | --- | --- |\n",
	      out);
	for (i = 0; i < annotation_ndefs; i++)
		fprintf(out, "| `%s` | %s | %s |\n", annotation_defs[i].name,
		        annotation_defs[i].meaning, annotation_defs[i].dflt);
	fputs("\nFrameworks (distenv.dev/frameworks) and what each injects:\n\n", out);
	for (i = 0; framework_at(i) != NULL; i++)
		fprintf(out, "  %-11s %s\n", framework_at(i)->name, framework_at(i)->help);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(int, char **);
		const char *usage;
	} cmds[] = {
	    {"serve", cmd_serve, usage_serve},    {"render", cmd_render, usage_render},
	    {"certs", cmd_certs, usage_certs},    {"check-config", cmd_check_config, usage_check},
	    {"wait", cmd_wait, usage_wait},       {"selftest", cmd_selftest, usage_selftest},
	    {"doctor", cmd_doctor, usage_doctor}, {"version", NULL, usage_version},
	};
	size_t i;

	arena_init(); /* cJSON's hooks, before any thread uses cJSON */
	/* the core's plug-ins, before any thread calls into it */
	registry_set(kind_table, kind_count, framework_table, framework_count);
	{
		/* kubectl-distenv (make install's link): kubectl's plugin convention */
		const char *base = argc > 0 && argv[0] ? strrchr(argv[0], '/') : NULL;
		base = base ? base + 1 : argc > 0 && argv[0] ? argv[0] : "";
		if (strcmp(base, "kubectl-distenv") == 0)
			prog = "kubectl distenv";
	}
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		fputs(usage_main, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "--version") == 0)
		argv[1] = (char *)"version";
	/*
	 * Not in the usage: the chart's files made from the kind table
	 * (charts/distenv/files/; scripts/chart-files.sh writes them, make chart
	 * checks that they agree): "opt-in-cel", the CEL of the matchConditions
	 * from the kinds' pod template paths; "chart-file NAME" for each file.
	 */
	if ((strcmp(argv[1], "opt-in-cel") == 0 && argc == 2) ||
	    (strcmp(argv[1], "chart-file") == 0 && argc == 3)) {
		static const struct {
			const char *name;
			void (*make)(struct strbuf *out);
		} files[] = {{"opt-in.cel", kind_opt_in_cel},
		             {"validate-rules.yaml", kind_chart_validate_rules},
		             {"rbac-rules.yaml", kind_chart_rbac_rules}};
		const char *want = argc == 2 ? "opt-in.cel" : argv[2];
		struct strbuf sb;
		int ok;

		for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
			if (strcmp(files[i].name, want) == 0)
				break;
		if (i == sizeof(files) / sizeof(files[0])) {
			fprintf(stderr,
			        "distenv-webhook: chart-file: no file %s (opt-in.cel, "
			        "validate-rules.yaml, rbac-rules.yaml)\n",
			        want);
			return 2;
		}
		strbuf_init(&sb);
		files[i].make(&sb);
		ok = !sb.oom && sb.buf != NULL && fputs(sb.buf, stdout) >= 0 && fflush(stdout) == 0;
		strbuf_free(&sb);
		return ok ? 0 : 1;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[1], cmds[i].name) != 0)
			continue;
		if (is_help(argc - 1, argv + 1)) {
			fputs(cmds[i].usage, stdout);
			if (cmds[i].run == cmd_render)
				print_annotations(stdout);
			return 0;
		}
		if (cmds[i].run == NULL) {
			if (argc != 2) {
				fputs(usage_version, stderr);
				return 2;
			}
			printf("distenv-webhook %s (%s)\n", DISTENV_VERSION, DISTENV_GIT_REV);
			return 0;
		}
		return cmds[i].run(argc - 1, argv + 1);
	}
	fail("unknown command '%s'", argv[1]);
	fputs(usage_main, stderr);
	return 2;
}
