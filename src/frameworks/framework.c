/*
 * The one table of frameworks: config, annotations, messages and env.c reach
 * a framework through it. Static data.
 */
#include "framework.h"

#include <stdio.h>
#include <string.h>

/* The rows after the first five are declared here, beside their place in the table. */
extern const struct framework fw_tpu;

const struct framework *const framework_table[] = {&fw_pytorch, &fw_tensorflow, &fw_jax,
                                                   &fw_xgboost, &fw_paddle,     &fw_tpu};
const size_t framework_count = sizeof(framework_table) / sizeof(framework_table[0]);

const struct framework *framework_named(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < framework_count; i++)
		if (strlen(framework_table[i]->name) == n &&
		    memcmp(framework_table[i]->name, s, n) == 0)
			return framework_table[i];
	return NULL;
}

const struct framework *framework_of(unsigned bit)
{
	size_t i;

	for (i = 0; i < framework_count; i++)
		if (framework_table[i]->bit == bit)
			return framework_table[i];
	return NULL;
}

const char *framework_names(char *out, size_t outlen, const char *sep)
{
	size_t i, used = 0;

	if (outlen == 0)
		return out;
	out[0] = '\0';
	for (i = 0; i < framework_count && used < outlen; i++)
		used += (size_t)snprintf(out + used, outlen - used, "%s%s", i ? sep : "",
		                         framework_table[i]->name);
	return out;
}
