/*
 * The plug-ins the core is handed: the program (cli/main.c at start-up, each
 * unit test, fuzz target and bench program) registers the kind and framework
 * tables once, before any thread starts, as Linux's drivers register with
 * their bus; the core reaches a kind or a framework only through what was
 * registered and names none. The tables are the caller's static data, read
 * only after registry_set; nothing here allocates.
 */
#ifndef DISTENV_REGISTRY_H
#define DISTENV_REGISTRY_H

#include <stddef.h>

struct kind;
struct framework;

/*
 * Hands the core its plug-ins: kinds in the order a pod is matched against
 * them, frameworks in the order their variables are injected. Both arrays
 * must outlive every call into the core; called again, it replaces them (a
 * test's own tables).
 */
void registry_set(const struct kind *const *kinds, size_t n_kinds,
                  const struct framework *const *frameworks, size_t n_frameworks);

/* The i-th registered kind, or NULL past the last (loops: `(k = kind_at(i)) != NULL`). */
const struct kind *kind_at(size_t i);

/* The i-th registered framework, or NULL past the last. */
const struct framework *framework_at(size_t i);

#endif
