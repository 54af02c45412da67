/*
 * libFuzzer target, differential: arbitrary bytes through json_parse and
 * cJSON_ParseWithLength. Whatever json_parse accepts, cJSON accepts too, with
 * the same tree node for node (type, key, string bytes, valueint, valuedouble,
 * order, the tail pointer head->prev). Whatever cJSON accepts, printed back as
 * standard JSON by cJSON, json_parse accepts with the same tree: json_parse may
 * refuse only what is not RFC 8259 JSON (cJSON is laxer). And json_print, the
 * printer of distenv's answers, prints whatever cJSON accepts so that it
 * reads back as the same tree. The parse inside an admission's arena (nodes cut
 * from its chunks, strings decoded in place in the parser's copy of the text)
 * gives the same tree as the parse outside it, and leaves the text as it was
 * (libFuzzer stops on an input that was written to).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same_str(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static int same(const cJSON *a, const cJSON *b)
{
	const cJSON *x, *y;

	if (a->type != b->type || !same_str(a->string, b->string) || a->valueint != b->valueint ||
	    memcmp(&a->valuedouble, &b->valuedouble, sizeof(double)) != 0)
		return 0;
	if ((cJSON_IsString(a) || cJSON_IsRaw(a)) && !same_str(a->valuestring, b->valuestring))
		return 0;
	for (x = a->child, y = b->child; x != NULL && y != NULL; x = x->next, y = y->next) {
		if (!same(x, y) || (x->next == NULL) != (y->next == NULL))
			return 0;
		if (x->next == NULL && (a->child->prev != x || b->child->prev != y))
			return 0; /* the head's prev is the last member in both */
	}
	return x == NULL && y == NULL;
}

/*
 * p, json_print's text of r read back, holds r: numbers equal as numbers (a
 * number that is not finite prints as null, as cJSON prints it), strings and
 * keys byte for byte. cJSON's own print is no reference for numbers: it may
 * print 15 digits where they do not read back exactly.
 */
static int printed_as(const cJSON *p, const cJSON *r)
{
	const cJSON *x, *y;

	if (!same_str(p->string, r->string))
		return 0;
	if (cJSON_IsNumber(r) && !isfinite(r->valuedouble))
		return cJSON_IsNull(p);
	if (p->type != r->type || (cJSON_IsNumber(r) && p->valuedouble != r->valuedouble))
		return 0;
	if (cJSON_IsString(r) && !same_str(p->valuestring, r->valuestring))
		return 0;
	for (x = p->child, y = r->child; x != NULL && y != NULL; x = x->next, y = y->next)
		if (!printed_as(x, y))
			return 0;
	return x == NULL && y == NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *mine = json_parse((const char *)data, size);
	cJSON *ref = cJSON_ParseWithLength((const char *)data, size);

	if (mine != NULL && (ref == NULL || !same(mine, ref)))
		abort();
	{
		cJSON *in_arena;

		arena_begin();
		in_arena = json_parse((const char *)data, size);
		if ((in_arena == NULL) != (mine == NULL) ||
		    (in_arena != NULL && !same(in_arena, mine)))
			abort();
		arena_end();
	}
	if (ref != NULL) {
		char *txt = cJSON_PrintUnformatted(ref);
		cJSON *again = txt != NULL ? json_parse(txt, strlen(txt)) : NULL;
		cJSON *ref2 = txt != NULL ? cJSON_Parse(txt) : NULL;

		if (txt != NULL && (again == NULL || ref2 == NULL || !same(again, ref2)))
			abort();
		/* json_print (the answer's printer) reads back as the tree it printed */
		if (txt != NULL) {
			struct strbuf sb;
			cJSON *printed;

			strbuf_init(&sb);
			json_print(&sb, ref);
			printed = sb.oom || sb.buf == NULL ? NULL : cJSON_Parse(sb.buf);
			if (!sb.oom && (printed == NULL || !printed_as(printed, ref)))
				abort();
			cJSON_Delete(printed);
			strbuf_free(&sb);
		}
		cJSON_Delete(again);
		cJSON_Delete(ref2);
		cJSON_free(txt);
	}
	cJSON_Delete(mine);
	cJSON_Delete(ref);
	return 0;
}
