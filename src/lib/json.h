/*
 * The JSON room: the parser that reads an AdmissionReview into a cJSON tree,
 * the getters every module reads trees with, the string escaper and the
 * compact printer that write JSON into a strbuf. Trees are cJSON's: the
 * caller owns a parsed tree (cJSON_Delete); getters return pointers into the
 * tree they are given; printers append to the caller's strbuf.
 */
#ifndef DISTENV_JSON_H
#define DISTENV_JSON_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "strbuf.h"

/* jsonparse.c */

/*
 * The value in text[0..len), white space around it allowed, as
 * cJSON_ParseWithLength builds it, faster; NULL when that is not JSON or
 * memory ran out. Nodes come from cJSON_malloc, so an arena serves them.
 */
cJSON *json_parse(const char *text, size_t len);

/* json.c */

/* obj[key] (case-sensitive), or NULL when obj is NULL or has no such member. */
const cJSON *json_get(const cJSON *obj, const char *key);

/* obj[key] when it is a string, else NULL. */
const char *json_str(const cJSON *obj, const char *key);

/*
 * json_str(entry, "name"), asked for every entry of a container's env list
 * by each walk over it: inline, and without a call when "name" is the
 * entry's first member, as the API server writes it.
 */
static inline const char *json_name(const cJSON *entry)
{
	const cJSON *c = entry != NULL ? entry->child : NULL;

	if (c != NULL && c->string != NULL && c->string[0] == 'n' && c->string[1] == 'a' &&
	    c->string[2] == 'm' && c->string[3] == 'e' && c->string[4] == '\0')
		return (c->type & 0xff) == cJSON_String ? c->valuestring : NULL;
	return json_str(entry, "name");
}

/* map[key] when map is an object (labels, annotations) and the entry a string, else NULL. */
const char *json_map_str(const cJSON *map, const char *key);

/* obj[key] when it is a number in [0, max], cut to a whole number; dflt otherwise. */
long json_long(const cJSON *obj, const char *key, long max, long dflt);

/*
 * Appends the first max bytes of s (the whole of it when shorter) as a
 * quoted JSON string: '"' and '\\' escaped; control bytes and DEL escaped
 * (\b \f \n \r \t, \u00XX for the rest); valid UTF-8 copied as it is;
 * each byte that does not start a valid UTF-8 sequence (overlong forms,
 * surrogates and code points past U+10FFFF included) becomes \ufffd, as Go's
 * encoding/json reads it. The output is always valid JSON and valid UTF-8.
 */
void json_put_string(struct strbuf *sb, const char *s, size_t max);
/*
 * The same escaper with keep_invalid = 1: bytes that are not valid UTF-8 are
 * copied as they are instead of becoming \ufffd. For echoing a value exactly
 * (the AdmissionReview uid the API server compares); 0 is json_put_string.
 */
void json_put_string_bytes(struct strbuf *sb, const char *s, size_t max, int keep_invalid);
/* json_put_string's max for "the whole string". */
#define JSON_ALL ((size_t)-1)

/*
 * Appends t as compact JSON, as cJSON_PrintUnformatted prints it (numbers with
 * its rule, strings through json_put_string_bytes keeping invalid bytes).
 * Sets sb->oom when memory ran out, t is nested deeper than 64 or holds a
 * node cJSON cannot print.
 */
void json_print(struct strbuf *sb, const cJSON *t);

#endif
