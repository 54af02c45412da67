/*
 * libFuzzer target: arbitrary bytes as a kubeconfig, through kubeconfig_parse
 * (pure: no file is read). A failure must say why and hold nothing; a success
 * must name an https:// or loopback http:// server and free cleanly.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kubeconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kubeconfig k;
	char err[512];

	err[0] = '\0';
	if (kubeconfig_parse((const char *)data, size, "/fuzz/kubeconfig", &k, err, sizeof(err)) !=
	    0) {
		if (err[0] == '\0' || memchr(err, '\0', sizeof(err)) == NULL)
			abort();
		if (k.token || k.ca_data || k.cert_data || k.key_data)
			abort();
		return 0;
	}
	if (strncmp(k.server, "https://", 8) != 0 && strncmp(k.server, "http://", 7) != 0)
		abort();
	if (!k.context[0] || (k.cert_data || k.cert_file[0]) != (k.key_data || k.key_file[0]))
		abort();
	kubeconfig_free(&k);
	return 0;
}
