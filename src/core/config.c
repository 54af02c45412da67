/*
 * Configuration: documented defaults, a strict YAML reader driven by a table of
 * keys (libyaml's document API, for line numbers), and a loader that only reads
 * the file. Everything lands in the caller's struct config; nothing is kept.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "version.h"

#include <yaml.h>

#include "config.h"
#include "yamljson.h"
#include "listenaddr.h"
#include "util.h"
#include "dns.h"
#include "file.h"

#define CONFIG_FILE_MAX (1024 * 1024)

enum key_kind {
	K_SECTION,    /* a mapping of further keys */
	K_INT,        /* long in [min, max] */
	K_BOOL,       /* int 0/1 */
	K_PATH,       /* char[size]; empty or null clears it */
	K_LISTEN,     /* char[size], HOST:PORT */
	K_LISTEN_OPT, /* char[size], HOST:PORT, or null / "" for none */
	K_DOMAIN,     /* char[size], DNS subdomain; sets cluster_domain_set */
	K_FRAMEWORKS, /* unsigned FW_* mask, list or comma string */
	K_RESOURCES,  /* gpu_resources, list or comma string */
	K_LOGLEVEL,   /* enum log_level */
	K_IMAGE,      /* char[size], a container image reference (no spaces or controls) */
	K_PULLPOLICY, /* char[size], Always, IfNotPresent or Never */
};

struct key {
	const char *section; /* NULL at the top level */
	const char *name;
	enum key_kind kind;
	size_t off;  /* offset in struct config */
	size_t size; /* string buffer size */
	long min, max;
};

#define STR(field) offsetof(struct config, field), sizeof(((struct config *)0)->field)
#define NUM(field) offsetof(struct config, field), 0

/* Every key the file may hold. Keep deploy/config.example.yaml in step. */
static const struct key keys[] = {
    {NULL, "listen", K_LISTEN, STR(listen), 0, 0},
    {NULL, "tls", K_SECTION, 0, 0, 0, 0},
    {"tls", "certFile", K_PATH, STR(tls_cert), 0, 0},
    {"tls", "keyFile", K_PATH, STR(tls_key), 0, 0},
    {"tls", "checkIntervalSeconds", K_INT, NUM(cert_check_interval_s), 1, 3600},
    {NULL, "clusterDomain", K_DOMAIN, STR(cluster_domain), 0, 0},
    {NULL, "defaults", K_SECTION, 0, 0, 0, 0},
    {"defaults", "port", K_INT, NUM(default_port), 1, 65535},
    {"defaults", "frameworks", K_FRAMEWORKS, NUM(default_frameworks), 0, 0},
    {NULL, "gpuResources", K_RESOURCES, 0, 0, 0, 0},
    {NULL, "lookups", K_SECTION, 0, 0, 0, 0},
    {"lookups", "enabled", K_BOOL, NUM(lookups), 0, 1},
    {"lookups", "kubeconfig", K_PATH, STR(kubeconfig), 0, 0},
    {"lookups", "timeoutMs", K_INT, NUM(lookup_timeout_ms), 100, 60000},
    {"lookups", "cacheTTLMs", K_INT, NUM(cache_ttl_ms), 0, 3600000},
    {"lookups", "cacheEntries", K_INT, NUM(cache_entries), 0, 1000000},
    {NULL, "limits", K_SECTION, 0, 0, 0, 0},
    {"limits", "maxBodyBytes", K_INT, NUM(max_body_bytes), 4096, 64L * 1024 * 1024},
    {"limits", "maxBufferedBodyBytes", K_INT, NUM(max_buffered_bytes), 4096,
     16L * 1024 * 1024 * 1024},
    {"limits", "maxContainers", K_INT, NUM(max_containers), 1, 10000},
    {"limits", "maxEnvPerContainer", K_INT, NUM(max_env_per_container), 1, 100000},
    {"limits", "maxWorldSize", K_INT, NUM(max_world_size), 1, 1048576},
    {NULL, "server", K_SECTION, 0, 0, 0, 0},
    {"server", "threads", K_INT, NUM(threads), 1, 256},
    {"server", "idleTimeoutSeconds", K_INT, NUM(idle_timeout_s), 1, 86400},
    {"server", "maxConnections", K_INT, NUM(max_connections), 1, 100000},
    {"server", "drainTimeoutSeconds", K_INT, NUM(drain_timeout_s), 0, 3600},
    {"server", "maxQueuedAdmissions", K_INT, NUM(max_queued), 1, 100000},
    {"server", "headerTimeoutSeconds", K_INT, NUM(header_timeout_s), 1, 300},
    {"server", "handshakeTimeoutSeconds", K_INT, NUM(handshake_timeout_s), 1, 300},
    {"server", "requestTimeoutSeconds", K_INT, NUM(request_timeout_s), 1, 3600},
    {"server", "maxConnectionsPerIP", K_INT, NUM(max_conns_per_ip), 1, 100000},
    {"server", "probeListen", K_LISTEN_OPT, STR(probe_listen), 0, 0},
    {NULL, "logging", K_SECTION, 0, 0, 0, 0},
    {"logging", "level", K_LOGLEVEL, NUM(log_level), 0, 0},
    {NULL, "waitInit", K_SECTION, 0, 0, 0, 0},
    {"waitInit", "image", K_IMAGE, STR(wait_image), 0, 0},
    {"waitInit", "imagePullPolicy", K_PULLPOLICY, STR(wait_pull_policy), 0, 0},
};

#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

void config_defaults(struct config *cfg)
{
	size_t i;

	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->listen, sizeof(cfg->listen), ":8443");
	cfg->threads = 4;
	cfg->idle_timeout_s = 120;
	cfg->max_connections = 1024;
	cfg->drain_timeout_s = 25;
	cfg->max_queued = 1024;
	cfg->header_timeout_s = 10;
	cfg->handshake_timeout_s = 5;
	cfg->request_timeout_s = 30;
	cfg->max_conns_per_ip = 768;
	cfg->cert_check_interval_s = 5;
	snprintf(cfg->cluster_domain, sizeof(cfg->cluster_domain), "cluster.local");
	/* the image the chart and scripts/image-build.sh name by default */
	snprintf(cfg->wait_image, sizeof(cfg->wait_image), "distenv:%s", DISTENV_VERSION);
	snprintf(cfg->wait_pull_policy, sizeof(cfg->wait_pull_policy), "IfNotPresent");
	cfg->default_port = 29500;
	for (i = 0; framework_at(i) != NULL; i++)
		if (framework_at(i)->by_default)
			cfg->default_frameworks |= framework_at(i)->bit;
	snprintf(cfg->gpu_resources[0], sizeof(cfg->gpu_resources[0]), "nvidia.com/gpu");
	snprintf(cfg->gpu_resources[1], sizeof(cfg->gpu_resources[1]), "amd.com/gpu");
	cfg->n_gpu_resources = 2;
	cfg->lookups = 1;
	cfg->lookup_timeout_ms = 3000;
	cfg->cache_ttl_ms = 10000;
	cfg->cache_entries = 4096;
	cfg->max_body_bytes = 7L * 1024 * 1024;
	cfg->max_buffered_bytes = 32L * 1024 * 1024;
	cfg->max_containers = 256;
	cfg->max_env_per_container = 4096;
	cfg->max_world_size = 65536;
	cfg->log_level = LOG_INFO;
}

static int framework_bit(const char *s, size_t n, unsigned *bit)
{
	const struct framework *fw = framework_named(s, n);

	if (fw == NULL)
		return -1;
	*bit = fw->bit;
	return 0;
}

int config_parse_frameworks(const char *list, unsigned *mask)
{
	unsigned m = 0, bit;
	const char *p, *end;

	if (list == NULL)
		return -1;
	for (p = list;; p = end + 1) {
		const char *a, *b;
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		for (a = p; a < end && (*a == ' ' || *a == '\t'); a++)
			;
		for (b = end; b > a && (b[-1] == ' ' || b[-1] == '\t'); b--)
			;
		if (b == a || framework_bit(a, (size_t)(b - a), &bit) < 0)
			return -1;
		m |= bit;
		if (*end == '\0')
			break;
	}
	*mask = m;
	return 0;
}

int config_parse_log_level(const char *s, enum log_level *lvl)
{
	if (s == NULL)
		return -1;
	if (strcmp(s, "debug") == 0)
		*lvl = LOG_DEBUG;
	else if (strcmp(s, "info") == 0)
		*lvl = LOG_INFO;
	else if (strcmp(s, "warn") == 0 || strcmp(s, "warning") == 0)
		*lvl = LOG_WARN;
	else if (strcmp(s, "error") == 0)
		*lvl = LOG_ERROR;
	else
		return -1;
	return 0;
}

/* ---- validators of single values ---- */

static int isalnum_c(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Kubernetes extended resource name: [DNS-subdomain/]name, name 1-63 of [A-Za-z0-9-_.]. */
static int resource_name_valid(const char *s)
{
	const char *slash = strchr(s, '/'), *name = s;
	size_t n;

	if (slash) {
		char prefix[254];
		size_t pl = (size_t)(slash - s);
		if (pl == 0 || pl >= sizeof(prefix))
			return 0;
		memcpy(prefix, s, pl);
		prefix[pl] = '\0';
		if (!dns_subdomain_valid(prefix))
			return 0;
		name = slash + 1;
	}
	n = strlen(name);
	if (n == 0 || n > 63)
		return 0;
	if (strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != n)
		return 0;
	return isalnum_c(name[0]) && isalnum_c(name[n - 1]);
}

/* ---- the walk over the YAML document ---- */

struct walk {
	yaml_document_t *doc;
	struct config *cfg;
	char *err;
	size_t errlen;
};

static void fail_at(struct walk *w, const yaml_node_t *n, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Writes "line N: key 'path': why". */
static void fail_at(struct walk *w, const yaml_node_t *n, const char *path, const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (w->errlen == 0)
		return;
	if (path)
		snprintf(w->err, w->errlen, "line %zu: key '%s': %s", n->start_mark.line + 1, path,
		         msg);
	else
		snprintf(w->err, w->errlen, "line %zu: %s", n->start_mark.line + 1, msg);
}

/* What the user wrote, for messages: "abc" (quoted, printable, cut at 60), or a shape. */
static void describe(const yaml_node_t *n, char *out, size_t outlen)
{
	size_t i, o = 0, len;
	const unsigned char *v;

	if (n->type == YAML_MAPPING_NODE) {
		snprintf(out, outlen, "a mapping");
		return;
	}
	if (n->type == YAML_SEQUENCE_NODE) {
		snprintf(out, outlen, "a list");
		return;
	}
	v = n->data.scalar.value;
	len = n->data.scalar.length;
	if (len == 0 && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		snprintf(out, outlen, "nothing");
		return;
	}
	if (outlen < 8)
		return;
	out[o++] = '"';
	for (i = 0; i < len && o + 6 < outlen && i < 60; i++)
		out[o++] = (v[i] >= 0x20 && v[i] != 0x7f) ? (char)v[i] : '?';
	if (i < len)
		o += (size_t)snprintf(out + o, outlen - o, "...");
	if (o + 2 <= outlen)
		out[o++] = '"';
	out[o] = '\0';
}

static int is_null(const yaml_node_t *n)
{
	const char *v;

	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	v = (const char *)n->data.scalar.value;
	return v[0] == '\0' || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 ||
	       strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0;
}

static const char *scalar(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int set_int(struct walk *w, const struct key *k, const yaml_node_t *v, const char *path)
{
	long out;
	char got[80];

	if (!scalar(v) || parse_long(scalar(v), k->min, k->max, &out) != 0) {
		describe(v, got, sizeof(got));
		fail_at(w, v, path, "must be an integer between %ld and %ld, got %s", k->min,
		        k->max, got);
		return -1;
	}
	*(long *)(void *)((char *)w->cfg + k->off) = out;
	return 0;
}

static int set_bool(struct walk *w, const struct key *k, const yaml_node_t *v, const char *path)
{
	const char *s = scalar(v);
	char got[80];
	int b;

	/* the manifests' dialect (kubectl's YAML 1.1 booleans): one set of words */
	if (yamljson_bool(s, &b) == 0) {
		*(int *)(void *)((char *)w->cfg + k->off) = b;
		return 0;
	}
	describe(v, got, sizeof(got));
	fail_at(w, v, path, "must be a boolean (true/false, yes/no, on/off), got %s", got);
	return -1;
}

/* A non-empty image reference: printable ASCII without spaces. */
static int image_valid(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s; s++)
		if (*s <= ' ' || *s > '~')
			return 0;
	return 1;
}

static int set_string(struct walk *w, const struct key *k, const yaml_node_t *v, const char *path)
{
	char *dst = (char *)w->cfg + k->off;
	const char *s = scalar(v);
	struct listen_addr la;
	char got[80];

	if ((k->kind == K_PATH || k->kind == K_LISTEN_OPT) && is_null(v)) {
		dst[0] = '\0';
		return 0;
	}
	describe(v, got, sizeof(got));
	if (k->kind == K_DOMAIN && (is_null(v) || (s && s[0] == '\0'))) {
		fail_at(w, v, path,
		        "is empty: leave the key out and serve reads the domain from its pod's "
		        "/etc/resolv.conf, or name it (such as cluster.local)");
		return -1;
	}
	if (!s || is_null(v)) {
		fail_at(w, v, path, "must be a string, got %s", got);
		return -1;
	}
	if (strlen(s) >= k->size) {
		fail_at(w, v, path, "longer than %zu bytes", k->size - 1);
		return -1;
	}
	if ((k->kind == K_LISTEN || (k->kind == K_LISTEN_OPT && s[0] != '\0')) &&
	    listen_addr_parse(s, 1, &la, NULL, 0) != 0) {
		fail_at(
		    w, v, path,
		    "must be HOST:PORT, :PORT or [IPv6]:PORT with a port from 1 to 65535, got %s",
		    got);
		return -1;
	}
	if (k->kind == K_IMAGE && !image_valid(s)) {
		fail_at(w, v, path,
		        "must be a container image reference such as "
		        "registry.example/distenv:1.0, got %s",
		        got);
		return -1;
	}
	if (k->kind == K_PULLPOLICY && strcmp(s, "Always") != 0 && strcmp(s, "IfNotPresent") != 0 &&
	    strcmp(s, "Never") != 0) {
		fail_at(w, v, path, "must be one of Always, IfNotPresent, Never, got %s", got);
		return -1;
	}
	if (k->kind == K_DOMAIN && !dns_subdomain_valid(s)) {
		fail_at(
		    w, v, path,
		    "must be a lowercase DNS name such as cluster.local (no trailing dot), got %s",
		    got);
		return -1;
	}
	snprintf(dst, k->size, "%s", s);
	/* set, not defaulted: serve then checks it against its pod's resolv.conf, no more */
	if (k->kind == K_DOMAIN)
		w->cfg->cluster_domain_set = 1;
	return 0;
}

static int set_log_level(struct walk *w, const struct key *k, const yaml_node_t *v,
                         const char *path)
{
	char got[80];

	if (scalar(v) && config_parse_log_level(
	                     scalar(v), (enum log_level *)(void *)((char *)w->cfg + k->off)) == 0)
		return 0;
	describe(v, got, sizeof(got));
	fail_at(w, v, path, "must be one of debug, info, warn, error, got %s", got);
	return -1;
}

/*
 * Collects the items of a list, or of a comma-separated string, into items[]
 * (pointers into the document or into buf). Returns the count or -1.
 */
static int list_items(struct walk *w, const yaml_node_t *v, const char *path, const char *what,
                      char *buf, size_t buflen, const char **items, const yaml_node_t **at, int max)
{
	int n = 0;
	char got[80];

	if (v->type == YAML_SEQUENCE_NODE) {
		yaml_node_item_t *it;
		for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
			const yaml_node_t *item = yaml_document_get_node(w->doc, *it);
			if (!scalar(item) || is_null(item)) {
				describe(item, got, sizeof(got));
				fail_at(w, item, path, "every item must be %s, got %s", what, got);
				return -1;
			}
			if (n == max) {
				fail_at(w, item, path, "at most %d items", max);
				return -1;
			}
			at[n] = item;
			items[n++] = scalar(item);
		}
		return n;
	}
	if (!scalar(v) || is_null(v) || strlen(scalar(v)) >= buflen) {
		describe(v, got, sizeof(got));
		fail_at(w, v, path, "must be a list or a comma-separated string of %s, got %s",
		        what, got);
		return -1;
	}
	snprintf(buf, buflen, "%s", scalar(v));
	for (char *tok = buf;;) {
		char *comma = strchr(tok, ','), *e;
		if (comma)
			*comma = '\0';
		while (*tok == ' ' || *tok == '\t')
			tok++;
		for (e = tok + strlen(tok); e > tok && (e[-1] == ' ' || e[-1] == '\t'); e--)
			e[-1] = '\0';
		if (*tok == '\0') {
			describe(v, got, sizeof(got));
			fail_at(w, v, path, "empty item in %s", got);
			return -1;
		}
		if (n == max) {
			fail_at(w, v, path, "at most %d items", max);
			return -1;
		}
		at[n] = v;
		items[n++] = tok;
		if (!comma)
			break;
		tok = comma + 1;
	}
	return n;
}

static int set_frameworks(struct walk *w, const struct key *k, const yaml_node_t *v,
                          const char *path)
{
	char buf[256], names[128];
	const char *items[16];
	const yaml_node_t *at[16];
	unsigned mask = 0, bit;
	int n, i;

	framework_names(names, sizeof(names), ", ");
	n = list_items(w, v, path, names, buf, sizeof(buf), items, at, 16);
	if (n < 0)
		return -1;
	if (n == 0) {
		fail_at(w, v, path, "must name at least one of %s", names);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (framework_bit(items[i], strlen(items[i]), &bit) < 0) {
			fail_at(w, at[i], path, "unknown framework \"%.60s\" (known: %s)", items[i],
			        names);
			return -1;
		}
		mask |= bit;
	}
	*(unsigned *)(void *)((char *)w->cfg + k->off) = mask;
	return 0;
}

static int set_resources(struct walk *w, const yaml_node_t *v, const char *path)
{
	char buf[CONFIG_MAX_GPU_RESOURCES * 128 + 64];
	const char *items[CONFIG_MAX_GPU_RESOURCES];
	const yaml_node_t *at[CONFIG_MAX_GPU_RESOURCES];
	int n, i, j;

	if (is_null(v)) {
		w->cfg->n_gpu_resources = 0;
		return 0;
	}
	n = list_items(w, v, path, "resource names such as nvidia.com/gpu", buf, sizeof(buf), items,
	               at, CONFIG_MAX_GPU_RESOURCES);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (strlen(items[i]) >= sizeof(w->cfg->gpu_resources[0]) ||
		    !resource_name_valid(items[i])) {
			fail_at(w, at[i], path,
			        "\"%.60s\" is not a resource name such as nvidia.com/gpu",
			        items[i]);
			return -1;
		}
		for (j = 0; j < i; j++) {
			if (strcmp(items[i], items[j]) == 0) {
				fail_at(w, at[i], path, "\"%.60s\" is listed twice", items[i]);
				return -1;
			}
		}
	}
	for (i = 0; i < n; i++)
		snprintf(w->cfg->gpu_resources[i], sizeof(w->cfg->gpu_resources[i]), "%s",
		         items[i]);
	w->cfg->n_gpu_resources = n;
	return 0;
}

static const struct key *find_key(const char *section, const char *name)
{
	size_t i;

	for (i = 0; i < N_KEYS; i++) {
		if ((section == NULL) != (keys[i].section == NULL))
			continue;
		if (section && strcmp(section, keys[i].section) != 0)
			continue;
		if (strcmp(name, keys[i].name) == 0)
			return &keys[i];
	}
	return NULL;
}

/* "a, b, c": the keys known in a section, for the unknown-key message. */
static void known_keys(const char *section, char *out, size_t outlen)
{
	size_t i, o = 0;

	out[0] = '\0';
	for (i = 0; i < N_KEYS && o < outlen; i++) {
		if ((section == NULL) != (keys[i].section == NULL))
			continue;
		if (section && strcmp(section, keys[i].section) != 0)
			continue;
		o += (size_t)snprintf(out + o, outlen - o, "%s%s", o ? ", " : "", keys[i].name);
	}
}

static int walk_mapping(struct walk *w, const yaml_node_t *map, const char *section);

static int set_value(struct walk *w, const struct key *k, const yaml_node_t *v, const char *path)
{
	char got[80];

	switch (k->kind) {
	case K_SECTION:
		if (is_null(v))
			return 0;
		if (v->type != YAML_MAPPING_NODE) {
			describe(v, got, sizeof(got));
			fail_at(w, v, path, "must be a mapping, got %s", got);
			return -1;
		}
		return walk_mapping(w, v, k->name);
	case K_INT:
		return set_int(w, k, v, path);
	case K_BOOL:
		return set_bool(w, k, v, path);
	case K_PATH:
	case K_LISTEN:
	case K_LISTEN_OPT:
	case K_DOMAIN:
	case K_IMAGE:
	case K_PULLPOLICY:
		return set_string(w, k, v, path);
	case K_FRAMEWORKS:
		return set_frameworks(w, k, v, path);
	case K_RESOURCES:
		return set_resources(w, v, path);
	case K_LOGLEVEL:
		return set_log_level(w, k, v, path);
	}
	return -1;
}

static int walk_mapping(struct walk *w, const yaml_node_t *map, const char *section)
{
	yaml_node_pair_t *pair;
	unsigned char seen[N_KEYS];

	memset(seen, 0, sizeof(seen));
	for (pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; pair++) {
		const yaml_node_t *kn = yaml_document_get_node(w->doc, pair->key);
		const yaml_node_t *vn = yaml_document_get_node(w->doc, pair->value);
		char path[160], known[512];
		const struct key *k;

		if (!scalar(kn)) {
			fail_at(w, kn, NULL, "%s%s%skeys must be plain names",
			        section ? "in '" : "", section ? section : "",
			        section ? "': " : "");
			return -1;
		}
		snprintf(path, sizeof(path), "%s%s%.100s", section ? section : "",
		         section ? "." : "", scalar(kn));
		k = find_key(section, scalar(kn));
		if (!k) {
			known_keys(section, known, sizeof(known));
			fail_at(w, kn, path, "unknown key (known here: %s)", known);
			return -1;
		}
		if (seen[k - keys]++) {
			fail_at(w, kn, path, "given twice");
			return -1;
		}
		if (set_value(w, k, vn, path) < 0)
			return -1;
	}
	return 0;
}

static void parser_failed(const yaml_parser_t *p, const char *text, size_t len, char *err,
                          size_t errlen)
{
	const char *problem = p->problem ? p->problem : "malformed YAML";
	size_t line0 = p->problem_mark.line, i;

	if (p->error == YAML_MEMORY_ERROR) {
		snprintf(err, errlen, "out of memory");
		return;
	}
	if (p->error == YAML_READER_ERROR)
		for (i = line0 = 0; i < p->problem_offset && i < len; i++)
			line0 += text[i] == '\n';
	if (p->context && p->error != YAML_READER_ERROR)
		snprintf(err, errlen, "line %zu: %s (%s at line %zu)", line0 + 1, problem,
		         p->context, p->context_mark.line + 1);
	else
		snprintf(err, errlen, "line %zu: %s", line0 + 1, problem);
}

int config_parse(const char *text, size_t len, struct config *cfg, char *err, size_t errlen)
{
	yaml_parser_t parser;
	yaml_document_t doc, extra;
	yaml_node_t *root;
	struct walk w;
	int rc = -1, have_doc = 0;

	if (errlen)
		err[0] = '\0';
	if (len > CONFIG_FILE_MAX) {
		snprintf(err, errlen, "larger than %d bytes", CONFIG_FILE_MAX);
		return -1;
	}
	if (!yaml_parser_initialize(&parser)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		parser_failed(&parser, text, len, err, errlen);
		goto out;
	}
	have_doc = 1;
	root = yaml_document_get_root_node(&doc);
	/* a second document is a mistake, not something to ignore; empty ones are fine */
	while (root) {
		yaml_node_t *xroot;
		if (!yaml_parser_load(&parser, &extra)) {
			parser_failed(&parser, text, len, err, errlen);
			goto out;
		}
		xroot = yaml_document_get_root_node(&extra);
		if (xroot && !is_null(xroot)) {
			snprintf(err, errlen,
			         "line %zu: the configuration must be one YAML document",
			         xroot->start_mark.line + 1);
			yaml_document_delete(&extra);
			goto out;
		}
		yaml_document_delete(&extra);
		if (!xroot)
			break;
	}
	if (!root || is_null(root)) {
		rc = 0; /* an empty file: the defaults */
		goto out;
	}
	if (root->type != YAML_MAPPING_NODE) {
		snprintf(err, errlen, "line %zu: the configuration must be a mapping of keys",
		         root->start_mark.line + 1);
		goto out;
	}
	w.doc = &doc;
	w.cfg = cfg;
	w.err = err;
	w.errlen = errlen;
	if (walk_mapping(&w, root, NULL) < 0)
		goto out;
	rc = 0;
out:
	if (have_doc)
		yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return rc;
}

int config_load(const char *path, struct config *cfg, char *err, size_t errlen)
{
	size_t len = 0;
	char *buf = file_read(path, CONFIG_FILE_MAX, &len, NULL, 0);
	int rc;

	if (buf == NULL) {
		/* main prefixes the path: the reason alone here */
		if (errno == EFBIG)
			snprintf(err, errlen, "larger than 1 MiB");
		else if (errno == EINVAL)
			snprintf(err, errlen, "not a regular file");
		else
			snprintf(err, errlen, "cannot open: %s", strerror(errno));
		return -1;
	}
	rc = config_parse(buf, len, cfg, err, errlen);
	free(buf);
	return rc;
}
