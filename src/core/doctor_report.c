/*
 * doctor's report: a finding added (the first blocking cause kept), its
 * evidence appended, a check that could not be made, and the report printed
 * as text or JSON. Writes only into the report and the caller's buffer.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "doctor_int.h"
#include "json.h"
#include "kind.h"

struct doctor_finding *doctor_add(struct doctor_report *r, enum doctor_state st, const char *check,
                                  const char *fix, const char *title_fmt, ...)
{
	static struct doctor_finding spare; /* written past the cap; never read */
	struct doctor_finding *f;
	va_list ap;

	if (r->n == DOCTOR_MAX_FINDINGS) {
		memset(&spare, 0, sizeof(spare));
		return &spare;
	}
	f = &r->f[r->n++];
	memset(f, 0, sizeof(*f));
	f->state = st;
	snprintf(f->check, sizeof(f->check), "%s", check);
	snprintf(f->fix, sizeof(f->fix), "%s", fix != NULL ? fix : "");
	va_start(ap, title_fmt);
	vsnprintf(f->title, sizeof(f->title), title_fmt, ap);
	va_end(ap);
	if (st == DOCTOR_FAIL) {
		if (r->first_fail < 0)
			r->first_fail = r->n - 1;
		r->n_fail++;
	} else if (st == DOCTOR_WARN) {
		r->n_warn++;
	} else if (st == DOCTOR_UNKNOWN) {
		r->n_unknown++;
	}
	return f;
}

void doctor_say(struct doctor_finding *f, const char *fmt, ...)
{
	size_t n = strlen(f->evidence);
	va_list ap;

	if (n + 1 >= sizeof(f->evidence))
		return;
	va_start(ap, fmt);
	vsnprintf(f->evidence + n, sizeof(f->evidence) - n, fmt, ap);
	va_end(ap);
}

void doctor_unknown(struct doctor_report *r, const char *check, const char *what, const char *why)
{
	struct doctor_finding *f =
	    doctor_add(r, DOCTOR_UNKNOWN, check,
	               "grant get/list on it (docs/troubleshooting.md#what-doctor-reads), or ask "
	               "someone who can",
	               "could not read %s", what);
	doctor_say(f, "%.400s", why);
}

/* A state's mark in the text report and its name in the JSON one. */
struct state_words {
	const char *mark, *name;
};

static const struct state_words *state_words(enum doctor_state s)
{
	static const struct state_words words[] = {
	    [DOCTOR_OK] = {"✓", "ok"},
	    [DOCTOR_FAIL] = {"✗", "fail"},
	    [DOCTOR_WARN] = {"!", "warn"},
	    [DOCTOR_UNKNOWN] = {"?", "unknown"},
	};

	return (unsigned)s < sizeof(words) / sizeof(words[0]) ? &words[s] : &words[DOCTOR_UNKNOWN];
}

static const char *const cannot_see =
    "what doctor cannot see: the training code, and the network between nodes "
    "(firewalls outside Kubernetes, MTU, RDMA)";

void doctor_print_text(const struct doctor_input *in, const struct doctor_report *r,
                       struct strbuf *out)
{
	int i;

	strbuf_printf(out, "distenv doctor: %s %s in namespace %s\n", kind_name(in->kind), in->name,
	              in->ns);
	if (r->first_fail >= 0)
		strbuf_printf(out, "first blocking cause: %s\n\n", r->f[r->first_fail].title);
	else
		strbuf_puts(out, "\n");
	for (i = 0; i < r->n; i++) {
		const struct doctor_finding *f = &r->f[i];
		strbuf_printf(out, "%s %s\n", state_words(f->state)->mark, f->title);
		if (f->evidence[0] && f->state != DOCTOR_OK)
			strbuf_printf(out, "    seen: %s\n", f->evidence);
		else if (f->evidence[0])
			strbuf_printf(out, "    %s\n", f->evidence);
		if (f->fix[0] && f->state != DOCTOR_OK)
			strbuf_printf(out, "    fix:  %s\n", f->fix);
	}
	strbuf_puts(out, "\n");
	if (r->n_fail > 0)
		strbuf_printf(out, "%d blocking cause(s), %d warning(s).\n", r->n_fail, r->n_warn);
	else if (r->n_unknown > 0)
		strbuf_printf(
		    out,
		    "nothing blocking found in what could be read; %d check(s) could not be "
		    "made (?).\n",
		    r->n_unknown);
	else
		strbuf_printf(out, "nothing wrong found%s.\n",
		              r->n_warn ? " that blocks (see the warnings)" : "");
	strbuf_printf(out, "%s.\n", cannot_see);
}

void doctor_print_json(const struct doctor_input *in, const struct doctor_report *r,
                       struct strbuf *out)
{
	int i;

	strbuf_puts(out, "{\"kind\":");
	json_put_string(out, kind_name(in->kind), 64);
	strbuf_puts(out, ",\"namespace\":");
	json_put_string(out, in->ns, 256);
	strbuf_puts(out, ",\"name\":");
	json_put_string(out, in->name, 256);
	strbuf_printf(out, ",\"blocked\":%s,\"firstCause\":", r->n_fail > 0 ? "true" : "false");
	if (r->first_fail >= 0)
		json_put_string(out, r->f[r->first_fail].check, 64);
	else
		strbuf_puts(out, "null");
	strbuf_puts(out, ",\"checks\":[");
	for (i = 0; i < r->n; i++) {
		const struct doctor_finding *f = &r->f[i];
		strbuf_puts(out, i ? ",{\"check\":" : "{\"check\":");
		json_put_string(out, f->check, sizeof(f->check));
		strbuf_puts(out, ",\"state\":");
		json_put_string(out, state_words(f->state)->name, 16);
		strbuf_puts(out, ",\"title\":");
		json_put_string(out, f->title, sizeof(f->title));
		strbuf_puts(out, ",\"evidence\":");
		json_put_string(out, f->evidence, sizeof(f->evidence));
		strbuf_puts(out, ",\"fix\":");
		json_put_string(out, f->fix, sizeof(f->fix));
		strbuf_puts(out, "}");
	}
	strbuf_puts(out, "],\"cannotSee\":");
	json_put_string(out, cannot_see, 256);
	strbuf_puts(out, "}\n");
}
