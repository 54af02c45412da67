/*
 * The kinds and frameworks the program registered (registry.h), and the
 * look-ups over them every wing shares: a kind by API name or resource, in list order,
 * a framework by name or bit, the phrases made of every row. Set once at
 * start-up, read only after; nothing here allocates.
 */
#include "registry.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "framework.h"
#include "kind.h"

static const struct kind *const *kinds;
static size_t n_kinds;
static const struct framework *const *frameworks;
static size_t n_frameworks;

void registry_set(const struct kind *const *k, size_t nk, const struct framework *const *f,
                  size_t nf)
{
	kinds = k;
	n_kinds = nk;
	frameworks = f;
	n_frameworks = nf;
}

const struct kind *kind_at(size_t i)
{
	assert(kinds != NULL); /* registry_set comes first */
	return i < n_kinds ? kinds[i] : NULL;
}

const struct framework *framework_at(size_t i)
{
	assert(frameworks != NULL); /* registry_set comes first */
	return i < n_frameworks ? frameworks[i] : NULL;
}

/* ---- kinds ---- */

const char *kind_name(const struct kind *k)
{
	return k != NULL ? k->api.kind : "none";
}

const struct kind *kind_named(const char *group, const char *name)
{
	const struct kind *row;
	size_t i;

	for (i = 0; name != NULL && (row = kind_at(i)) != NULL; i++)
		if ((group == NULL || strcmp(row->api.group, group) == 0) &&
		    strcmp(row->api.kind, name) == 0)
			return row;
	return NULL;
}

const struct kind *kind_of_resource(const char *group, const char *resource)
{
	const struct kind *row;
	size_t i;

	for (i = 0; group != NULL && resource != NULL && (row = kind_at(i)) != NULL; i++)
		if (row->api.resource != NULL && strcmp(row->api.group, group) == 0 &&
		    strcmp(row->api.resource, resource) == 0)
			return row;
	return NULL;
}

/* 1 when kind a comes before kind b in lists: built-in first, then by API group, then name. */
static int listed_before(const struct kind *a, const struct kind *b)
{
	int c = strcmp(a->api.group, b->api.group);

	if (a->crd != b->crd)
		return a->crd < b->crd;
	return c != 0 ? c < 0 : strcmp(a->api.kind, b->api.kind) < 0;
}

const struct kind *kind_listed(size_t i)
{
	const struct kind *row, *other;
	size_t j, k, before;

	/* the row with exactly i rows before it (a handful of rows: no sort, no copy) */
	for (j = 0; (row = kind_at(j)) != NULL; j++) {
		for (k = 0, before = 0; (other = kind_at(k)) != NULL; k++)
			before += other != row && listed_before(other, row);
		if (before == i)
			return row;
	}
	return NULL;
}

void kind_supported(char *out, size_t outlen)
{
	const struct kind *row;
	size_t i, used = 0;

	snprintf(out, outlen, "distenv supports only pods of ");
	for (i = 0; (row = kind_listed(i)) != NULL; i++) {
		used = strlen(out);
		snprintf(out + used, outlen - used, "%s%s",
		         i == 0                       ? ""
		         : kind_listed(i + 1) == NULL ? " or of "
		                                      : ", of ",
		         row->supported);
	}
}

int kind_controller_label(const char *key)
{
	const struct kind *row;
	const struct kind_label *l;
	const char *const *p;
	size_t i;

	for (i = 0; (row = kind_at(i)) != NULL; i++) {
		for (l = row->pod_labels; l != NULL && l->key != NULL; l++)
			if (strcmp(key, l->key) == 0)
				return 1;
		for (p = row->label_prefixes; p != NULL && *p != NULL; p++)
			if (strncmp(key, *p, strlen(*p)) == 0)
				return 1;
	}
	return 0;
}

/* ---- frameworks ---- */

const struct framework *framework_named(const char *s, size_t n)
{
	const struct framework *fw;
	size_t i;

	for (i = 0; (fw = framework_at(i)) != NULL; i++)
		if (strlen(fw->name) == n && memcmp(fw->name, s, n) == 0)
			return fw;
	return NULL;
}

const struct framework *framework_of(unsigned bit)
{
	const struct framework *fw;
	size_t i;

	for (i = 0; (fw = framework_at(i)) != NULL; i++)
		if (fw->bit == bit)
			return fw;
	return NULL;
}

const char *framework_names(char *out, size_t outlen, const char *sep)
{
	const struct framework *fw;
	size_t i, used = 0;

	if (outlen == 0)
		return out;
	out[0] = '\0';
	for (i = 0; (fw = framework_at(i)) != NULL && used < outlen; i++)
		used += (size_t)snprintf(out + used, outlen - used, "%s%s", i ? sep : "", fw->name);
	return out;
}
