/*
 * YAML to cJSON over libyaml's event parser (the document loader drops the
 * "was a tag given" bit that tells `!!str 1` from `1`). Builds each document
 * with an explicit stack; the finished array belongs to the caller.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "yamljson.h"

#define TAG_PREFIX "tag:yaml.org,2002:"

enum scalar_kind { SC_STR, SC_NULL, SC_BOOL, SC_INT, SC_FLOAT, SC_NOTJSON };

struct scalar {
	enum scalar_kind kind;
	int b;
	int neg;      /* SC_INT: value is -mag */
	uint64_t mag; /* SC_INT: magnitude */
	double d;     /* SC_FLOAT */
};

/* A set of the keys of one mapping: open addressing over borrowed strings. */
struct keyset {
	const char **slot;
	size_t cap, n;
};

struct frame {
	cJSON *node; /* object or array being built, owned by the frame */
	int is_map;
	char *key;     /* pending key of a mapping, malloc'd */
	int key_merge; /* pending key is "<<" */
	cJSON *merges; /* array of merge sources, owned */
	char *anchor;  /* anchor of this collection, malloc'd */
	struct keyset keys;
};

struct anchor {
	char *name;
	const cJSON *node; /* borrowed: lives in the document tree or the graveyard */
};

struct builder {
	struct frame stack[YAMLJSON_MAX_DEPTH];
	int depth;
	cJSON *root;      /* finished document root */
	cJSON *graveyard; /* nodes anchors may point at that are not in the tree */
	struct anchor *anchors;
	size_t n_anchors, cap_anchors;
	size_t alias_nodes; /* nodes added by alias and merge copies, whole stream */
	char *err;
	size_t errlen;
};

static void set_err(struct builder *b, size_t line0, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(struct builder *b, size_t line0, const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (b->errlen)
		snprintf(b->err, b->errlen, "line %zu: %s", line0 + 1, msg);
}

/* ---- scalar resolution (go-yaml v2 rules) ---- */

static int parse_digits(const char *s, unsigned base, uint64_t *out)
{
	uint64_t v = 0;

	if (*s == '\0')
		return -1;
	for (; *s; s++) {
		unsigned d;
		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a') + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A') + 10;
		else
			return -1;
		if (d >= base)
			return -1;
		if (v > (UINT64_MAX - d) / base)
			return -1;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

/* Go's strconv.ParseInt(s, 0, 64), falling back to ParseUint like go-yaml. */
static int parse_go_int(const char *s, struct scalar *sc)
{
	int neg = 0, had_sign = 0;
	unsigned base = 10;
	uint64_t mag;

	if (*s == '+' || *s == '-') {
		neg = *s == '-';
		had_sign = 1;
		s++;
	}
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	} else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) {
		base = 8;
		s += 2;
	} else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
		base = 2;
		s += 2;
	} else if (s[0] == '0' && s[1] != '\0') {
		base = 8;
		s += 1;
	}
	if (parse_digits(s, base, &mag) < 0)
		return -1;
	if (neg ? mag > (uint64_t)INT64_MAX + 1 : mag > (uint64_t)INT64_MAX) {
		/* ParseUint takes no sign at all */
		if (had_sign)
			return -1;
	}
	sc->kind = SC_INT;
	sc->neg = neg && mag != 0;
	sc->mag = mag;
	return 0;
}

/* go-yaml's yamlStyleFloat: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static int is_yaml_float(const char *s)
{
	const char *p = s;
	size_t n;

	if (*p == '+' || *p == '-')
		p++;
	if (*p == '.') {
		p++;
		n = strspn(p, "0123456789");
		if (n == 0)
			return 0;
		p += n;
	} else {
		n = strspn(p, "0123456789");
		if (n == 0)
			return 0;
		p += n;
		if (*p == '.')
			p += 1 + strspn(p + 1, "0123456789");
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		n = strspn(p, "0123456789");
		if (n == 0)
			return 0;
		p += n;
	}
	return *p == '\0';
}

static int parse_float(const char *s, struct scalar *sc)
{
	char *end;
	double d;

	if (!is_yaml_float(s))
		return -1;
	errno = 0;
	d = strtod(s, &end);
	if (*end != '\0')
		return -1;
	if (errno == ERANGE && (d > 1.0 || d < -1.0))
		return -1; /* overflow: Go reports an error and go-yaml keeps the string */
	sc->kind = SC_FLOAT;
	sc->d = d;
	return 0;
}

static int in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return 1;
	return 0;
}

static const char *const yes_words[] = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                        "True", "TRUE", "on",  "On",  "ON",  NULL};
static const char *const no_words[] = {"n",     "N",     "no",  "No",  "NO",  "false",
                                       "False", "FALSE", "off", "Off", "OFF", NULL};
static const char *const null_words[] = {"", "~", "null", "Null", "NULL", NULL};
static const char *const notjson_words[] = {".nan",  ".NaN",  ".NAN",  ".inf",  ".Inf",
                                            ".INF",  "+.inf", "+.Inf", "+.INF", "-.inf",
                                            "-.Inf", "-.INF", NULL};

int yamljson_bool(const char *s, int *out)
{
	if (s == NULL || !(in_list(s, yes_words) || in_list(s, no_words)))
		return -1;
	*out = in_list(s, yes_words);
	return 0;
}

/* Resolves a plain, untagged scalar. s is NUL-terminated, may hold '_' separators. */
static void resolve_plain(const char *s, size_t len, struct scalar *sc)
{
	char buf[80];
	size_t i, j;

	memset(sc, 0, sizeof(*sc));
	sc->kind = SC_STR;
	if (in_list(s, null_words)) {
		sc->kind = SC_NULL;
		return;
	}
	if (in_list(s, yes_words) || in_list(s, no_words)) {
		sc->kind = SC_BOOL;
		sc->b = in_list(s, yes_words);
		return;
	}
	if (in_list(s, notjson_words)) {
		sc->kind = SC_NOTJSON;
		return;
	}
	if (s[0] == '.') {
		parse_float(s, sc);
		return;
	}
	if (!(s[0] == '+' || s[0] == '-' || (s[0] >= '0' && s[0] <= '9')))
		return;
	if (len >= sizeof(buf))
		return; /* longer than any int64/float go-yaml would take as such */
	for (i = j = 0; i < len; i++)
		if (s[i] != '_')
			buf[j++] = s[i];
	buf[j] = '\0';
	if (parse_go_int(buf, sc) == 0)
		return;
	if (parse_float(buf, sc) == 0)
		return;
	sc->kind = SC_STR;
}

static double scalar_number(const struct scalar *sc)
{
	if (sc->kind == SC_FLOAT)
		return sc->d;
	return sc->neg ? -(double)sc->mag : (double)sc->mag;
}

/* ---- key sets ---- */

static size_t hash_str(const char *s)
{
	size_t h = (size_t)1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * (size_t)1099511628211ULL;
	return h;
}

static int keyset_has(const struct keyset *ks, const char *key)
{
	size_t i;

	if (ks->cap == 0)
		return 0;
	for (i = hash_str(key) & (ks->cap - 1); ks->slot[i]; i = (i + 1) & (ks->cap - 1))
		if (strcmp(ks->slot[i], key) == 0)
			return 1;
	return 0;
}

/* Adds a borrowed key. Returns 0, or -1 when memory ran out. */
static int keyset_add(struct keyset *ks, const char *key)
{
	size_t i;

	if ((ks->n + 1) * 2 > ks->cap) {
		size_t ncap = ks->cap ? ks->cap * 2 : 16, k;
		const char **ns = calloc(ncap, sizeof(*ns));
		if (!ns)
			return -1;
		for (k = 0; k < ks->cap; k++) {
			if (!ks->slot[k])
				continue;
			for (i = hash_str(ks->slot[k]) & (ncap - 1); ns[i];
			     i = (i + 1) & (ncap - 1))
				;
			ns[i] = ks->slot[k];
		}
		free(ks->slot);
		ks->slot = ns;
		ks->cap = ncap;
	}
	for (i = hash_str(key) & (ks->cap - 1); ks->slot[i]; i = (i + 1) & (ks->cap - 1))
		;
	ks->slot[i] = key;
	ks->n++;
	return 0;
}

/* ---- builder ---- */

static void frame_clear(struct frame *f)
{
	cJSON_Delete(f->node);
	cJSON_Delete(f->merges);
	free(f->key);
	free(f->anchor);
	free(f->keys.slot);
	memset(f, 0, sizeof(*f));
}

static void anchors_clear(struct builder *b)
{
	size_t i;

	for (i = 0; i < b->n_anchors; i++)
		free(b->anchors[i].name);
	b->n_anchors = 0;
}

static void builder_reset_doc(struct builder *b)
{
	while (b->depth > 0)
		frame_clear(&b->stack[--b->depth]);
	cJSON_Delete(b->root);
	b->root = NULL;
	cJSON_Delete(b->graveyard);
	b->graveyard = NULL;
	anchors_clear(b);
}

static int oom(struct builder *b, size_t line0)
{
	set_err(b, line0, "out of memory");
	return -1;
}

/* Keeps node alive until the end of the document (anchors may point at it). Takes node. */
static int bury(struct builder *b, cJSON *node, size_t line0)
{
	if (!b->graveyard && !(b->graveyard = cJSON_CreateArray())) {
		cJSON_Delete(node);
		return oom(b, line0);
	}
	if (!cJSON_AddItemToArray(b->graveyard, node)) {
		cJSON_Delete(node);
		return oom(b, line0);
	}
	return 0;
}

static int anchor_add(struct builder *b, const char *name, const cJSON *node, size_t line0)
{
	size_t i;
	char *copy;

	/* A later anchor of the same name shadows the earlier one (YAML 1.2 7.1). */
	for (i = 0; i < b->n_anchors; i++) {
		if (strcmp(b->anchors[i].name, name) == 0) {
			b->anchors[i].node = node;
			return 0;
		}
	}
	if (b->n_anchors == b->cap_anchors) {
		size_t ncap = b->cap_anchors ? b->cap_anchors * 2 : 8;
		struct anchor *na = realloc(b->anchors, ncap * sizeof(*na));
		if (!na)
			return oom(b, line0);
		b->anchors = na;
		b->cap_anchors = ncap;
	}
	if (!(copy = strdup(name)))
		return oom(b, line0);
	b->anchors[b->n_anchors].name = copy;
	b->anchors[b->n_anchors].node = node;
	b->n_anchors++;
	return 0;
}

static const cJSON *anchor_find(const struct builder *b, const char *name)
{
	size_t i;

	for (i = 0; i < b->n_anchors; i++)
		if (strcmp(b->anchors[i].name, name) == 0)
			return b->anchors[i].node;
	return NULL;
}

/* Counts nodes (stopping past limit) and measures nesting of collections. */
static void tree_measure(const cJSON *n, int level, size_t *count, size_t limit, int *height)
{
	const cJSON *c;

	(*count)++;
	if (!cJSON_IsArray(n) && !cJSON_IsObject(n))
		return;
	if (level + 1 > *height)
		*height = level + 1;
	for (c = n->child; c && *count <= limit; c = c->next)
		tree_measure(c, level + 1, count, limit, height);
}

/* Copies an aliased or merged subtree within the node budget and depth limit. */
static cJSON *copy_limited(struct builder *b, const cJSON *src, size_t line0)
{
	size_t count = 0, room = YAMLJSON_MAX_ALIAS_NODES - b->alias_nodes;
	int height = 0;
	cJSON *dup;

	tree_measure(src, 0, &count, room, &height);
	if (count > room) {
		set_err(b, line0, "aliases expand to more than %d nodes", YAMLJSON_MAX_ALIAS_NODES);
		return NULL;
	}
	if (b->depth + height > YAMLJSON_MAX_DEPTH) {
		set_err(b, line0, "nesting deeper than %d levels", YAMLJSON_MAX_DEPTH);
		return NULL;
	}
	if (!(dup = cJSON_Duplicate(src, 1))) {
		oom(b, line0);
		return NULL;
	}
	b->alias_nodes += count;
	return dup;
}

/* The text a scalar node stands for as a mapping key (kubectl's rules). */
static char *key_from_node(struct builder *b, const cJSON *n, size_t line0)
{
	char buf[64];
	const char *s = NULL;
	char *out;

	if (cJSON_IsString(n)) {
		s = n->valuestring;
	} else if (cJSON_IsBool(n)) {
		s = cJSON_IsTrue(n) ? "true" : "false";
	} else if (cJSON_IsNumber(n)) {
		snprintf(buf, sizeof(buf), "%.17g", n->valuedouble);
		s = buf;
	} else if (cJSON_IsNull(n)) {
		set_err(b, line0, "a mapping key may not be null");
		return NULL;
	} else {
		set_err(b, line0, "a mapping key must be a scalar");
		return NULL;
	}
	if (!(out = strdup(s)))
		oom(b, line0);
	return out;
}

static char *key_from_scalar(struct builder *b, const char *text, const struct scalar *sc,
                             size_t line0)
{
	char buf[32];
	const char *s = text;
	char *out;

	switch (sc->kind) {
	case SC_NULL:
		set_err(b, line0, "a mapping key may not be null");
		return NULL;
	case SC_BOOL:
		s = sc->b ? "true" : "false";
		break;
	case SC_INT:
		snprintf(buf, sizeof(buf), "%s%llu", sc->neg ? "-" : "",
		         (unsigned long long)sc->mag);
		s = buf;
		break;
	default:
		break;
	}
	if (!(out = strdup(s)))
		oom(b, line0);
	return out;
}

/* Places a finished value (takes ownership) into the parent, or makes it the root. */
static int place_value(struct builder *b, cJSON *v, size_t line0)
{
	struct frame *f;

	if (b->depth == 0) {
		b->root = v;
		return 0;
	}
	f = &b->stack[b->depth - 1];
	if (!f->is_map) {
		if (!cJSON_AddItemToArray(f->node, v)) {
			cJSON_Delete(v);
			return oom(b, line0);
		}
		return 0;
	}
	if (!f->key) {
		/* a collection or alias in key position */
		char *k = key_from_node(b, v, line0);
		cJSON_Delete(v);
		if (!k)
			return -1;
		f->key = k;
		f->key_merge = 0;
		return 0;
	}
	if (f->key_merge) {
		int ok = cJSON_IsObject(v);
		const cJSON *c;
		if (cJSON_IsArray(v)) {
			ok = 1;
			cJSON_ArrayForEach(c, v) ok &= cJSON_IsObject(c);
		}
		if (!ok) {
			cJSON_Delete(v);
			set_err(b, line0, "merge key '<<' needs a mapping or a list of mappings");
			return -1;
		}
		if (!f->merges && !(f->merges = cJSON_CreateArray())) {
			cJSON_Delete(v);
			return oom(b, line0);
		}
		if (!cJSON_AddItemToArray(f->merges, v)) {
			cJSON_Delete(v);
			return oom(b, line0);
		}
	} else {
		if (keyset_has(&f->keys, f->key)) {
			set_err(b, line0, "duplicate key '%.200s'", f->key);
			cJSON_Delete(v);
			return -1;
		}
		/* cJSON copies the key; on success it owns v. */
		if (!cJSON_AddItemToObject(f->node, f->key, v)) {
			cJSON_Delete(v);
			return oom(b, line0);
		}
		if (keyset_add(&f->keys, v->string) < 0)
			return oom(b, line0);
	}
	free(f->key);
	f->key = NULL;
	f->key_merge = 0;
	return 0;
}

/* Adds the keys of one merge source that the mapping does not have yet. */
static int merge_one(struct builder *b, struct frame *f, const cJSON *src, size_t line0)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, src)
	{
		cJSON *dup;
		if (keyset_has(&f->keys, c->string))
			continue;
		if (!(dup = copy_limited(b, c, line0)))
			return -1;
		if (!cJSON_AddItemToObject(f->node, c->string, dup)) {
			cJSON_Delete(dup);
			return oom(b, line0);
		}
		if (keyset_add(&f->keys, dup->string) < 0)
			return oom(b, line0);
	}
	return 0;
}

static int apply_merges(struct builder *b, struct frame *f, size_t line0)
{
	const cJSON *m, *c;

	if (!f->merges)
		return 0;
	cJSON_ArrayForEach(m, f->merges)
	{
		if (cJSON_IsObject(m)) {
			if (merge_one(b, f, m, line0) < 0)
				return -1;
			continue;
		}
		cJSON_ArrayForEach(c, m)
		{
			if (merge_one(b, f, c, line0) < 0)
				return -1;
		}
	}
	/* Anchors may point into the sources: keep them until the document ends. */
	if (bury(b, f->merges, line0) < 0) {
		f->merges = NULL;
		return -1;
	}
	f->merges = NULL;
	return 0;
}

static int start_collection(struct builder *b, int is_map, const yaml_char_t *anchor, size_t line0)
{
	struct frame *f;

	if (b->depth > 0 && b->stack[b->depth - 1].is_map && !b->stack[b->depth - 1].key) {
		set_err(b, line0, "a mapping key must be a scalar");
		return -1;
	}
	if (b->depth >= YAMLJSON_MAX_DEPTH) {
		set_err(b, line0, "nesting deeper than %d levels", YAMLJSON_MAX_DEPTH);
		return -1;
	}
	f = &b->stack[b->depth];
	memset(f, 0, sizeof(*f));
	f->is_map = is_map;
	f->node = is_map ? cJSON_CreateObject() : cJSON_CreateArray();
	if (!f->node)
		return oom(b, line0);
	if (anchor && !(f->anchor = strdup((const char *)anchor))) {
		frame_clear(f);
		return oom(b, line0);
	}
	b->depth++;
	return 0;
}

static int end_collection(struct builder *b, size_t line0)
{
	struct frame *f = &b->stack[b->depth - 1];
	cJSON *node;
	char *anchor;

	if (f->is_map && apply_merges(b, f, line0) < 0)
		return -1;
	node = f->node;
	anchor = f->anchor;
	f->node = NULL;
	f->anchor = NULL;
	frame_clear(f);
	b->depth--;
	if (anchor && anchor_add(b, anchor, node, line0) < 0) {
		free(anchor);
		cJSON_Delete(node);
		return -1;
	}
	free(anchor);
	return place_value(b, node, line0);
}

/* Decides what a scalar event stands for; -1 with err when a tag cannot be honoured. */
static int scalar_type(struct builder *b, const yaml_event_t *ev, struct scalar *sc)
{
	const char *text = (const char *)ev->data.scalar.value;
	const char *tag = (const char *)ev->data.scalar.tag;
	size_t len = ev->data.scalar.length, plen = strlen(TAG_PREFIX);
	int plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	const char *core;

	memset(sc, 0, sizeof(*sc));
	sc->kind = SC_STR;
	if (!tag || (strncmp(tag, TAG_PREFIX, plen) != 0 && strcmp(tag, "!") != 0)) {
		/* untagged, or a foreign tag, which is ignored */
		if (plain)
			resolve_plain(text, len, sc);
		return 0;
	}
	if (strcmp(tag, "!") == 0)
		return 0; /* the non-specific tag: a string */
	core = tag + plen;
	if (strcmp(core, "null") && strcmp(core, "bool") && strcmp(core, "int") &&
	    strcmp(core, "float"))
		return 0; /* !!str, !!binary, !!timestamp, !!map on a scalar...: the text */
	resolve_plain(text, len, sc);
	if ((!strcmp(core, "null") && sc->kind == SC_NULL) ||
	    (!strcmp(core, "bool") && sc->kind == SC_BOOL) ||
	    (!strcmp(core, "int") && sc->kind == SC_INT) ||
	    (!strcmp(core, "float") && (sc->kind == SC_INT || sc->kind == SC_FLOAT)))
		return 0;
	set_err(b, ev->start_mark.line, "cannot read '%.100s' as !!%s", text, core);
	return -1;
}

static int on_scalar(struct builder *b, const yaml_event_t *ev)
{
	const char *text = (const char *)ev->data.scalar.value;
	size_t line0 = ev->start_mark.line;
	struct frame *f = b->depth ? &b->stack[b->depth - 1] : NULL;
	struct scalar sc;
	cJSON *v;

	if (scalar_type(b, ev, &sc) < 0)
		return -1;
	if (f && f->is_map && !f->key) {
		/* key position */
		if (!ev->data.scalar.tag && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		    strcmp(text, "<<") == 0) {
			if (!(f->key = strdup("<<")))
				return oom(b, line0);
			f->key_merge = 1;
			return 0;
		}
		if (!(f->key = key_from_scalar(b, text, &sc, line0)))
			return -1;
		f->key_merge = 0;
		if (ev->data.scalar.anchor) {
			/* an anchored key: keep a node for later aliases */
			cJSON *kn = cJSON_CreateString(f->key);
			if (!kn)
				return oom(b, line0);
			if (bury(b, kn, line0) < 0)
				return -1;
			return anchor_add(b, (const char *)ev->data.scalar.anchor, kn, line0);
		}
		return 0;
	}
	switch (sc.kind) {
	case SC_NOTJSON:
		set_err(b, line0, "'%.40s' (infinity or NaN) cannot be represented in JSON", text);
		return -1;
	case SC_NULL:
		v = cJSON_CreateNull();
		break;
	case SC_BOOL:
		v = cJSON_CreateBool(sc.b);
		break;
	case SC_INT:
	case SC_FLOAT:
		v = cJSON_CreateNumber(scalar_number(&sc));
		break;
	default:
		v = cJSON_CreateString(text);
		break;
	}
	if (!v)
		return oom(b, line0);
	if (ev->data.scalar.anchor &&
	    anchor_add(b, (const char *)ev->data.scalar.anchor, v, line0) < 0) {
		cJSON_Delete(v);
		return -1;
	}
	return place_value(b, v, line0);
}

static int on_alias(struct builder *b, const yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	size_t line0 = ev->start_mark.line;
	const cJSON *src = anchor_find(b, name);
	cJSON *dup;

	if (!src) {
		set_err(b, line0, "unknown anchor '%.100s'", name);
		return -1;
	}
	if (!(dup = copy_limited(b, src, line0)))
		return -1;
	return place_value(b, dup, line0);
}

static size_t line_of_offset(const char *text, size_t len, size_t off)
{
	size_t line0 = 0, i;

	for (i = 0; i < off && i < len; i++)
		if (text[i] == '\n')
			line0++;
	return line0;
}

static void parser_error(struct builder *b, const yaml_parser_t *p, const char *text, size_t len)
{
	const char *problem = p->problem ? p->problem : "malformed YAML";

	if (p->error == YAML_MEMORY_ERROR) {
		oom(b, 0);
	} else if (p->error == YAML_READER_ERROR) {
		set_err(b, line_of_offset(text, len, p->problem_offset), "%s", problem);
	} else if (p->context) {
		set_err(b, p->problem_mark.line, "%s (%s at line %zu)", problem, p->context,
		        p->context_mark.line + 1);
	} else {
		set_err(b, p->problem_mark.line, "%s", problem);
	}
}

cJSON *yamljson_parse(const char *text, size_t len, char *err, size_t errlen)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	struct builder b;
	cJSON *docs = NULL, *out = NULL;
	int done = 0;

	memset(&b, 0, sizeof(b));
	b.err = err;
	b.errlen = errlen;
	if (errlen)
		err[0] = '\0';
	if (!yaml_parser_initialize(&parser)) {
		oom(&b, 0);
		return NULL;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!(docs = cJSON_CreateArray())) {
		oom(&b, 0);
		goto out;
	}
	while (!done) {
		int rc = 0;

		if (!yaml_parser_parse(&parser, &ev)) {
			parser_error(&b, &parser, text, len);
			goto out;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_DOCUMENT_START_EVENT:
			builder_reset_doc(&b);
			break;
		case YAML_DOCUMENT_END_EVENT:
			if (b.root && !cJSON_IsNull(b.root)) {
				if (!cJSON_AddItemToArray(docs, b.root)) {
					rc = oom(&b, ev.start_mark.line);
					break;
				}
				b.root = NULL;
			}
			builder_reset_doc(&b);
			break;
		case YAML_SEQUENCE_START_EVENT:
			rc = start_collection(&b, 0, ev.data.sequence_start.anchor,
			                      ev.start_mark.line);
			break;
		case YAML_MAPPING_START_EVENT:
			rc = start_collection(&b, 1, ev.data.mapping_start.anchor,
			                      ev.start_mark.line);
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			rc = end_collection(&b, ev.start_mark.line);
			break;
		case YAML_SCALAR_EVENT:
			rc = on_scalar(&b, &ev);
			break;
		case YAML_ALIAS_EVENT:
			rc = on_alias(&b, &ev);
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
		if (rc < 0)
			goto out;
	}
	out = docs;
	docs = NULL;
out:
	builder_reset_doc(&b);
	free(b.anchors);
	cJSON_Delete(docs);
	yaml_parser_delete(&parser);
	return out;
}
