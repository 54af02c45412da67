/*
 * YAML to cJSON, with the scalar rules kubectl applies to manifests and
 * kubeconfigs (sigs.k8s.io/yaml, i.e. go-yaml v2 / YAML 1.1): the result is a
 * cJSON tree owned by the caller, freed with cJSON_Delete.
 */
#ifndef DISTENV_YAMLJSON_H
#define DISTENV_YAMLJSON_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* Nesting limit (mappings and sequences) of one document. */
#define YAMLJSON_MAX_DEPTH 64
/*
 * Nodes that alias and merge-key copies may add, over the whole stream, on top
 * of the nodes the text spells out: a stream without aliases is not limited,
 * one with aliases cannot blow up (billion laughs). The input size is the
 * caller's to limit.
 */
#define YAMLJSON_MAX_ALIAS_NODES 100000

/*
 * Parses a YAML stream (several documents separated by "---" allowed) into a
 * cJSON array with one element per document; empty documents (nothing, or a
 * lone null) are skipped, so the array may be empty.
 *
 * Scalars: quoted, literal and folded scalars are strings. Plain scalars follow
 * go-yaml v2 as kubectl uses it: ~, null, Null, NULL and the empty scalar are
 * null; true/false, yes/no, on/off, y/n (each also Capitalised and UPPER) are
 * booleans; integers in decimal, 0x hex, 0o or leading-0 octal (0600 is 384,
 * as in a Pod's defaultMode), 0b binary, with '_' separators; floats such as 1.5,
 * .5, 1e3. Everything else is a string. .inf and .nan cannot be JSON: error.
 * Tags !!str, !!int, !!float, !!bool, !!null force the type; other tags are
 * ignored. Integers beyond 2^53 lose precision (cJSON numbers are doubles).
 *
 * Mappings: keys must be scalars (null keys are an error); a key that resolves
 * to a boolean or an integer becomes its canonical text ("yes" -> "true",
 * 0x10 -> "16"), as kubectl does. Duplicate keys are an error. Merge keys
 * ("<<: *anchor" or a list of them) are honoured; explicit keys win.
 * Anchors and aliases are expanded by copy, within YAMLJSON_MAX_DEPTH and
 * YAMLJSON_MAX_ALIAS_NODES.
 *
 * Returns the array (caller frees with cJSON_Delete), or NULL with
 * "line N: why" in err (N counts from 1).
 */
cJSON *yamljson_parse(const char *text, size_t len, char *err, size_t errlen)
    __attribute__((warn_unused_result));

/*
 * The one set of YAML boolean words (kubectl's: go-yaml v2 reads YAML 1.1
 * booleans, so y/yes/on/true and n/no/off/false in their three cases). Returns
 * 0 with *out, or -1 when s is not one. The config file uses it too.
 */
int yamljson_bool(const char *s, int *out);

#endif
