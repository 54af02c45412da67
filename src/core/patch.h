/*
 * The JSON Patch (RFC 6902) that brings a pod to its planned state: the
 * missing env entries of every target container (before the user's own), the
 * Service subdomain when it came from the annotation, and the injected marker.
 * It is written as JSON text into the caller's buffer, as cJSON would print it.
 */
#ifndef DISTENV_PATCH_H
#define DISTENV_PATCH_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "env.h"
#include "strbuf.h"
#include "topology.h"

enum patch_status { PATCH_OK = 0, PATCH_DENY = 1, PATCH_NOMEM = -1 };

/*
 * The volume the first init container mounts over the service-account token
 * path, so that the ServiceAccount admission plugin (which also runs again after
 * webhooks) never mounts a token into it.
 */
#define WAIT_VOLUME "distenv-no-token"

/*
 * Builds the patch for pod as the API server serialised it. A variable a
 * container already defines by name is left alone; an absent env is added as a
 * whole array. On PATCH_OK out holds the array's text, "[]" when there is
 * nothing to do (reinvocation), and *n_ops its operations; otherwise out holds
 * nothing of use (the caller frees it). marker is the value of the
 * distenv.dev/injected annotation; warnings (NULL or "": none) of the
 * distenv.dev/warnings annotation, added with it.
 * envs[i] is the environment of target i (t->targets[i]). first_init (may be
 * NULL; copied) becomes the first init container unless one of its name is
 * there already. max_env bounds the
 * entries of one container that still needs some (PATCH_DENY with err above it).
 */
enum patch_status patch_build(const cJSON *pod, const struct topology *t,
                              const struct env_list *const *envs, const cJSON *first_init,
                              const char *marker, const char *warnings, long max_env,
                              struct strbuf *out, int *n_ops, char *err, size_t errlen)
    __attribute__((warn_unused_result));

#endif
