/*
 * libFuzzer target: arbitrary bytes as a manifest through render_manifest,
 * which reads YAML (yamljson) and plans every rank through pod_plan_build.
 * Both outcomes are fine; what must not happen is a crash, a leak, undefined
 * behaviour, or a result and an error at once.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "fuzz_registry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct config cfg;
	static int init;
	struct render_opts opts = {NULL, 0, RENDER_TEXT};
	struct strbuf warn;
	char err[512];
	char *out;

	if (!init) {
		config_defaults(&cfg);
		/* render prints every rank, each O(W): keep W small so runs stay fast. */
		cfg.max_world_size = 64;
		init = 1;
	}
	if (size > 0)
		opts.format = data[size - 1] & 1 ? RENDER_JSON : RENDER_TEXT;
	err[0] = '\0';
	strbuf_init(&warn);
	out = render_manifest((const char *)data, size, &cfg, &opts, &warn, err, sizeof(err));
	if (out == NULL && err[0] == '\0')
		abort(); /* a failure always says why */
	if (memchr(err, '\0', sizeof(err)) == NULL || (warn.len > 0 && strlen(warn.buf) != warn.len))
		abort();
	strbuf_free(&warn);
	free(out);
	return 0;
}
