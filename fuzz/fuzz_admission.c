/*
 * libFuzzer target: arbitrary bytes as an AdmissionReview body through
 * admission_handle, the same call /mutate makes. Every answer must be a
 * well-formed result: 200 or 400 with a JSON body, or -1 only for memory.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "admission.h"
#include "fuzz_registry.h"

/*
 * A deterministic stand-in for the Kubernetes API: the answer depends only on
 * the input's length, so a crash always replays the same way, and both the
 * success and the failure paths of the look-up are reached.
 */
static int fake_get(void *ctx, const struct workload_ref *ref, int fresh,
		    struct workload_spec *out, char *err, size_t errlen)
{
	size_t len = *(const size_t *)ctx;
	const char *ns = ref->ns, *name = ref->name;

	if (ns == NULL || name == NULL)
		abort(); /* the core must never look up without a name */
	if (len % 7 == 0) {
		snprintf(err, errlen, "statefulsets.apps \"%s\" not found", name);
		return -1;
	}
	out->replicas = (long)(1 + len % 9);
	out->ordinals_start = len % 5 == 0 ? 3 : -1;
	out->completions = (long)(1 + len % 9);
	out->parallelism = len % 11 == 0 ? 1 : out->completions;
	out->indexed = len % 13 != 0;
	out->uid[0] = '\0';
	if (len % 17 == 0)
		snprintf(out->uid, sizeof(out->uid), "other-uid");
	out->cached = !fresh && len % 3 == 0;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct config cfg;
	static int init;
	struct admission_result res;
	size_t lenctx = size;
	struct workload_lookup lk = {fake_get, &lenctx, NULL, NULL, NULL};
	cJSON *parsed;

	if (!init) {
		config_defaults(&cfg);
		/*
		 * TF_CONFIG is O(W) per rank; a smaller ceiling than the 65536
		 * default keeps executions fast without hiding any code path.
		 */
		cfg.max_world_size = 2048;
		init = 1;
	}
	if (admission_handle((const char *)data, size, &cfg, size % 3 ? &lk : NULL, &res) != 0) {
		/* Only allocation failure may return -1; libFuzzer's malloc does not fail here. */
		abort();
	}
	if (res.body == NULL || res.body_len != strlen(res.body))
		abort();
	if (res.http_status != 200 && res.http_status != 400)
		abort();
	/* The answer is always JSON (kube-apiserver parses it). */
	parsed = cJSON_ParseWithLength(res.body, res.body_len);
	if (parsed == NULL)
		abort();
	if (res.http_status == 200) {
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(parsed, "response");
		const cJSON *uid = cJSON_GetObjectItemCaseSensitive(r, "uid");
		if (!cJSON_IsString(uid) || strcmp(uid->valuestring, res.uid) != 0)
			abort(); /* the uid must be echoed exactly */
	}
	cJSON_Delete(parsed);
	admission_result_free(&res);
	return 0;
}
