/*
 * Environment generation: the frameworks of the table (framework.c), each
 * from its own file, add their variables in the table's order. Values are
 * computed from the topology alone; the list owns every name and value string.
 */
#include "env.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework.h"
#include "util.h"
#include "strbuf.h"

int env_list_add(struct env_list *l, const char *name, const char *value)
{
	char *own = strdup(value);

	return own != NULL ? env_list_add_own(l, name, own) : -1;
}

int env_list_add_own(struct env_list *l, const char *name, char *value)
{
	struct env_var *v;

	/* the list's invariant: n entries, each with its name and value, in cap slots */
	assert(l->n <= l->cap && (l->cap == 0) == (l->vars == NULL));
	assert(l->n == 0 || (l->vars[l->n - 1].name != NULL && l->vars[l->n - 1].value != NULL));
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		v = realloc(l->vars, cap * sizeof(*v));
		if (v == NULL) {
			free(value);
			return -1;
		}
		l->vars = v;
		l->cap = cap;
	}
	v = &l->vars[l->n];
	v->name = strdup(name);
	v->value = value;
	v->merge = 0;
	v->fw = 0;
	if (v->name == NULL || v->value == NULL) {
		free(v->name);
		free(v->value);
		return -1;
	}
	l->n++;
	return 0;
}

int env_list_addl(struct env_list *l, const char *name, long value)
{
	char buf[32];

	buf[fmt_long(buf, value)] = '\0';
	return env_list_add(l, name, buf);
}

int env_master_addr(const struct topology *t, char *out, size_t outlen)
{
	char host[320];

	if (topology_hostname(t, 0, host, sizeof(host)) < 0)
		return -1;
	return bounded_printf(out, outlen, "%s%s", host, t->domain);
}

/* The decimal s of len digits, plus one, in place (999 becomes 1000: s has room for one more). */
static void decimal_next(char *s, size_t *len)
{
	size_t i = *len;

	while (i > 0 && s[i - 1] == '9')
		s[--i] = '0';
	if (i > 0) {
		s[i - 1]++;
	} else {
		s[0] = '1'; /* every digit was 9 and is now 0 */
		s[(*len)++] = '0';
	}
}

/*
 * Appends "\"<host r><domain>:<port>\"" for the pods at positions [from, to),
 * comma-separated, to buf, in rank order: rank 0 (a JobSet's coordinator,
 * wherever its position) comes first when it is among them. The one host-list writer: TF_CONFIG's
 * lists and any later framework that lists every rank. Returns 0 or -1 (out of memory, or a host
 * too long).
 */
int env_host_list(const struct topology *t, long from, long to, struct strbuf *buf)
{
	enum { HOST_MAX = 320 };
	char suffix[420];
	/*
	 * volatile: knowing sl below 420, gcc copies the suffix with `rep movsq`,
	 * whose start-up is most of a 30-byte copy (perf: 17 % of a W=1024 answer's
	 * CPU); unknown, it calls the C library's memcpy.
	 */
	volatile size_t sl;
	char prefix[HOST_MAX - 21]; /* a run's prefix: room for any number after it */
	char digits[24] = {0};      /* a run's next number, counted up in place (fmt_long was a
	                               tenth of a W=1,024 answer) */
	size_t pl = 0, dl = 0;
	long c = topology_position(t, 0), n, p, run = 0, num = 0;
	int hl, has_c = c >= from && c < to;

	if (bounded_printf(suffix, sizeof(suffix), "%s:%ld\"", t->domain, t->port) != 0)
		return -1;
	sl = strlen(suffix);
	for (n = 0; n < to - from; n++) {
		size_t k = 0;
		char *d;

		/* the n-th in rank order: rank 0, then the others in their order */
		p = !has_c ? from + n : n == 0 ? c : from + n - 1 + (from + n - 1 >= c);
		/* the name is written where it goes: room for ',"', a name and the suffix */
		if ((buf->oom || buf->buf == NULL || buf->cap - buf->len <= 2 + HOST_MAX + sl) &&
		    strbuf_reserve(buf, 2 + HOST_MAX + sl) != 0)
			return -1;
		d = buf->buf + buf->len;
		if (n > 0)
			d[k++] = ',';
		d[k++] = '"';
		/*
		 * A run of names that differ only in a number counting up (a Job's
		 * every rank) is written from its prefix: a call to the kind for each
		 * name was a quarter of a W=1,024 TF_CONFIG's admission.
		 */
		if (run == 0) {
			run = topology_host_run(t, topology_rank_at(t, p), prefix, sizeof(prefix),
			                        &pl, &num);
			dl = run > 0 && num >= 0 ? fmt_long(digits, num) : 0;
		}
		if (run > 0) {
			memcpy(d + k, prefix, pl);
			if (dl > 0) {
				memcpy(d + k + pl, digits, dl);
				hl = (int)(pl + dl);
				decimal_next(digits, &dl);
			} else {
				hl =
				    (int)(pl + fmt_long(d + k + pl, num++)); /* a negative number */
			}
			run--;
		} else if ((hl = topology_hostname(t, topology_rank_at(t, p), d + k, HOST_MAX)) <
		           0) {
			d[0] = '\0';
			return -1;
		}
		k += (size_t)hl;
		memcpy(d + k, suffix, sl);
		buf->len += k + sl;
		buf->buf[buf->len] = '\0';
	}
	return 0;
}

int env_host_names(const struct topology *t, long from, long to, struct strbuf *buf)
{
	char host[320];
	long p;
	int hl;

	for (p = from; p < to; p++) {
		if ((hl = topology_hostname(t, topology_rank_at(t, p), host, sizeof(host))) < 0)
			return -1;
		if (p > from)
			strbuf_putc(buf, ',');
		strbuf_put(buf, host, (size_t)hl);
		strbuf_put(buf, t->domain, strlen(t->domain));
	}
	return buf->oom ? -1 : 0;
}

/*
 * 1 when l's variables stand in the order of the frameworks that wrote them,
 * the table's: the order the patch, the goldens and a container's merge rely on.
 */
__attribute__((unused)) static int env_in_table_order(const struct env_list *l)
{
	size_t k, i = 0;

	for (k = 0; k < l->n; k++) {
		while (framework_at(i) != NULL && framework_at(i)->bit != l->vars[k].fw)
			i++;
		if (framework_at(i) == NULL)
			return 0;
	}
	return 1;
}

int env_build(const struct topology *t, struct env_list *out)
{
	return env_build_master(t, NULL, 0, out);
}

int env_build_master(const struct topology *t, const char *master_addr, long master_port,
                     struct env_list *out)
{
	char addr[512], endpoint[544];
	struct fw_input in;
	size_t i;

	memset(out, 0, sizeof(*out));
	in.port = master_port > 0 ? master_port : t->port;
	if (master_addr != NULL) {
		if (bounded_printf(addr, sizeof(addr), "%s", master_addr) != 0)
			return -1;
	} else if (env_master_addr(t, addr, sizeof(addr)) != 0) {
		return -1;
	}
	if (bounded_printf(endpoint, sizeof(endpoint), "%s:%ld", addr, in.port) != 0)
		return -1;
	in.addr = addr;
	in.endpoint = endpoint;
	in.own_addr = master_addr == NULL;
	for (i = 0; framework_at(i) != NULL; i++) {
		const struct framework *fw = framework_at(i);
		size_t k, n = out->n;
		if (!(t->frameworks & fw->bit))
			continue;
		if (fw->add(t, &in, out) != 0) {
			env_list_free(out);
			return -1;
		}
		for (k = n; k < out->n; k++)
			out->vars[k].fw = fw->bit;
	}
	assert(env_in_table_order(out));
	return 0;
}

void env_list_free(struct env_list *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++) {
		free(l->vars[i].name);
		free(l->vars[i].value);
	}
	free(l->vars);
	memset(l, 0, sizeof(*l));
}
