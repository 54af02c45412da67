/*
 * libFuzzer target: arbitrary bytes as the API server's answer to a GET of a
 * StatefulSet or Job, through kube_parse_workload (what a compromised or
 * broken API server, or a proxy in between, could send). The first byte picks
 * the kind. A failure must say why; a success must give values in range.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube.h"
#include "fuzz_registry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct workload_spec spec;
	const struct kind *kind;
	char err[512];

	if (size < 1)
		return 0;
	kind = data[0] & 1 ? &kind_job : &kind_statefulset;
	memset(&spec, 0x5a, sizeof(spec));
	err[0] = '\0';
	if (workload_parse(kind, (const char *)data + 1, size - 1, &spec, err, sizeof(err)) != 0) {
		if (err[0] == '\0' || memchr(err, '\0', sizeof(err)) == NULL)
			abort();
		return 0;
	}
	/* Fields are -1 when unset, otherwise counts. */
	if (spec.replicas < -1 || spec.ordinals_start < -1 || spec.completions < -1 ||
	    spec.parallelism < -1 || (spec.indexed != 0 && spec.indexed != 1))
		abort();
	return 0;
}
