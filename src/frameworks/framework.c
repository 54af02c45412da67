/*
 * The one table of frameworks, which the program hands the core
 * (core/registry.h): config, annotations, messages and env.c reach a
 * framework through what was registered. Static data.
 */
#include "frameworks.h"

/* The rows after the first five are declared here, beside their place in the table. */
extern const struct framework fw_tpu;

const struct framework *const framework_table[] = {&fw_pytorch, &fw_tensorflow, &fw_jax,
                                                   &fw_xgboost, &fw_paddle,     &fw_tpu};
const size_t framework_count = sizeof(framework_table) / sizeof(framework_table[0]);
