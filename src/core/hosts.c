/*
 * A rank's host name and its position: the kind's names through its row
 * (topology_hostname, topology_host_run), the helpers every kind's names are
 * made with (kind_host_name, kind_host_run: no printf, TF_CONFIG names every
 * rank), and the order of the pods and their parts as the kind's row says
 * (topology_rank_at, topology_part_of). Pure; writes only into the caller's
 * buffers.
 */
#include "topology.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "dns.h"
#include "kind.h"
#include "util.h"

/*
 * "<a>[-<b>]-<n1>[-<n2>]" into out (b NULL, n2 < 0: left out), without
 * printf: TF_CONFIG asks for every rank's name, and vsnprintf was three
 * quarters of an admission at W=8,192. Returns 0, or -1 when it does not fit.
 */
int kind_host_name(char *out, size_t outlen, const char *a, const char *b, long n1, long n2)
{
	const char *parts[2] = {a, b};
	long nums[2] = {n1, n2};
	size_t o = 0;
	int i;

	for (i = 0; i < 2; i++) {
		const char *p = parts[i];

		if (p == NULL)
			continue;
		if (i > 0) {
			if (o + 1 >= outlen)
				return -1;
			out[o++] = '-';
		}
		for (; *p != '\0'; p++) {
			if (o + 1 >= outlen)
				return -1;
			out[o++] = *p;
		}
	}
	for (i = 0; i < 2 && !(i == 1 && n2 < 0); i++) {
		size_t d = fmt_long_len(nums[i]);

		if (o + 1 + d >= outlen)
			return -1;
		out[o++] = '-';
		o += fmt_long(out + o, nums[i]);
	}
	out[o] = '\0';
	return (int)o;
}

long kind_host_run(char *out, size_t outlen, const char *a, const char *b, long n1, long number,
                   long count, size_t *plen, long *first)
{
	int l = n1 >= 0     ? kind_host_name(out, outlen, a, b, n1, -1)
	        : b != NULL ? snprintf(out, outlen, "%s-%s", a, b)
	                    : snprintf(out, outlen, "%s", a);

	if (count <= 0 || l < 0 || (size_t)l + 2 > outlen)
		return 0;
	out[l++] = '-';
	out[l] = '\0';
	*plen = (size_t)l;
	*first = number;
	return count;
}

int topology_hostname(const struct topology *t, long r, char *out, size_t outlen)
{
	const struct kind *row = t->kind;
	int n;

	if (row == NULL || r < 0 || r >= (t->world_size > 0 ? t->world_size : 1))
		return -1;
	n = row->hostname(t, r, out, outlen);
	/* a kind's name is its length, within out and ended there, or -1 */
	assert(n < 0 || ((size_t)n < outlen && out[n] == '\0'));
	return n;
}

long topology_host_run(const struct topology *t, long r, char *out, size_t outlen, size_t *plen,
                       long *first)
{
	const struct kind *row = t->kind;
	long n;

	/* with rank 0 elsewhere than position 0, ranks are not positions */
	if (row == NULL || row->host_run == NULL || topology_position(t, 0) != 0 || r < 0 ||
	    r >= (t->world_size > 0 ? t->world_size : 1))
		return 0;
	n = row->host_run(t, r, out, outlen, plen, first);
	return n > 0 ? n : 0;
}

long topology_bad_host(const struct topology *t)
{
	struct topology_part k;
	char host[320];
	long p;

	/* the last rank of each part has the longest name of its run */
	for (p = t->world_size - 1; p >= 0;) {
		long r = topology_rank_at(t, p);
		if (topology_hostname(t, r, host, sizeof(host)) < 0 || !dns_label_valid(host))
			return r;
		p = topology_part_of(t, r, &k) ? k.first - 1 : -1;
	}
	return -1;
}

void topology_bad_host_why(const struct topology *t, long r, char *out, size_t outlen)
{
	char host[320];
	int n = topology_hostname(t, r, host, sizeof(host));

	if (n < 0)
		snprintf(out, outlen,
		         "is longer than a DNS label's 63 characters: shorten the names");
	else if (n > 63)
		snprintf(out, outlen,
		         "%.100s%s, is %d characters, above a DNS label's 63: shorten the names",
		         host, n > 100 ? "..." : "", n);
	else if (strchr(host, '.') != NULL)
		snprintf(out, outlen,
		         "%s, has a dot, which a pod's hostname (one DNS label) cannot: name the "
		         "workload without dots",
		         host);
	else
		snprintf(out, outlen, "%s, is not a DNS label (a-z, 0-9 and '-', at most 63)",
		         host);
}

/* The position of rank 0: the kind's answer, else 0. */
static long rank0_position(const struct topology *t)
{
	return t->kind != NULL && t->kind->rank0_position != NULL ? t->kind->rank0_position(t) : 0;
}

long topology_rank_at(const struct topology *t, long pos)
{
	long c = rank0_position(t);

	return pos == c ? 0 : pos < c ? pos + 1 : pos;
}

long topology_position(const struct topology *t, long r)
{
	long c = rank0_position(t);

	return r == 0 ? c : r <= c ? r - 1 : r;
}

int topology_parts(const struct topology *t)
{
	return t->kind != NULL && t->kind->n_parts != NULL ? t->kind->n_parts(t) : 0;
}

void topology_part(const struct topology *t, int k, struct topology_part *out)
{
	assert(k >= 0 && k < topology_parts(t));
	t->kind->part(t, k, out);
}

int topology_part_of(const struct topology *t, long r, struct topology_part *out)
{
	long pos = topology_position(t, r);
	int k, n = topology_parts(t);

	for (k = 0; k < n; k++) {
		topology_part(t, k, out);
		if (pos >= out->first && pos < out->first + out->units * out->pods)
			return 1;
	}
	return 0;
}
