/*
 * libFuzzer target: arbitrary bytes as a configuration file through
 * config_parse. A failure must say why; a success must leave every value in
 * its documented range.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "framework.h"
#include "fuzz_registry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config cfg;
	char err[512];
	unsigned known = 0;
	size_t i;

	for (i = 0; framework_at(i) != NULL; i++)
		known |= framework_at(i)->bit;

	config_defaults(&cfg);
	err[0] = '\0';
	if (config_parse((const char *)data, size, &cfg, err, sizeof(err)) != 0) {
		if (err[0] == '\0' || memchr(err, '\0', sizeof(err)) == NULL)
			abort();
		return 0;
	}
	/* The ranges deploy/config.example.yaml documents. */
	if (cfg.threads < 1 || cfg.threads > 256 || cfg.idle_timeout_s < 1 ||
	    cfg.max_connections < 1 || cfg.drain_timeout_s < 0 || cfg.default_port < 1 ||
	    cfg.default_port > 65535 || cfg.lookup_timeout_ms < 100 ||
	    cfg.lookup_timeout_ms > 60000 || cfg.max_body_bytes < 4096 ||
	    cfg.max_body_bytes > 67108864 || cfg.max_world_size < 1 ||
	    cfg.max_world_size > 1048576 || cfg.n_gpu_resources < 0 ||
	    cfg.n_gpu_resources > CONFIG_MAX_GPU_RESOURCES || cfg.default_frameworks == 0 ||
	    (cfg.default_frameworks & ~known) != 0)
		abort();
	if (memchr(cfg.listen, '\0', sizeof(cfg.listen)) == NULL ||
	    memchr(cfg.cluster_domain, '\0', sizeof(cfg.cluster_domain)) == NULL ||
	    memchr(cfg.tls_cert, '\0', sizeof(cfg.tls_cert)) == NULL)
		abort();
	return 0;
}
