/*
 * json_parse: RFC 8259 JSON text to a cJSON tree, as cJSON_ParseWithLength
 * builds it, faster (see jsonparse.c). The caller owns the tree
 * (cJSON_Delete); nodes come from cJSON_malloc, so an arena serves them.
 */
#ifndef DISTENV_JSONPARSE_H
#define DISTENV_JSONPARSE_H

#include <stddef.h>

#include <cjson/cJSON.h>

/*
 * The value in text[0..len), white space around it allowed; NULL when that
 * is not JSON or memory ran out.
 */
cJSON *json_parse(const char *text, size_t len);

#endif
