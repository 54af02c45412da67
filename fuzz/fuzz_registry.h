/*
 * Every fuzz target that reaches the core hands it its plug-ins before the
 * first input, as cli/main.c does at start-up (core/registry.h).
 */
#ifndef DISTENV_FUZZ_REGISTRY_H
#define DISTENV_FUZZ_REGISTRY_H

#include "frameworks.h"
#include "kinds.h"
#include "registry.h"

__attribute__((constructor)) static void fuzz_registry(void)
{
	registry_set(kind_table, kind_count, framework_table, framework_count);
}

#endif
