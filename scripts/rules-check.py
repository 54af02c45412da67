#!/usr/bin/env python3
"""Every denial and warning the server can give is a row of docs/testing.md's rule table,
and each row names the integration case that reaches it over HTTPS.

The message sites are the calls in src/core, src/kinds and src/frameworks (doctor and the
configuration file aside: they answer no review) that write a message: view_problem,
view_warn, view_warn_template, resolve_deny, plan_warn, and snprintf or fmt_printf with a
literal format of words. A row of the table "Every rule over HTTPS" is

    | `WORDS` | FILE | denied/warned | `CASE` |

WORDS is a piece of a site's format, word for word as in the source (without its printf
directives); a site belongs to the row of the longest WORDS its format holds. CASE is a method of
test/integration/run.py or equivalence.py (several, comma separated, allowed); "none yet"
marks a rule no case reaches over HTTPS yet (counted, named with --inventory).

Fails, naming them, when a site has no row, a row's WORDS are in no site (reworded?), or a
row names a case that does not exist. With --answers FILE (what `run.py --answers FILE`
wrote: every answer's denial, warnings and distenv.dev/warnings annotation (whole, never
cut) over HTTPS with the case that got it), it fails too when no answer a row's case got is a message of the row's sites (their formats read as
patterns; a warning cut at its 119 characters matches as far as it goes; a /validate answer
that names a pod template after "distenv: ", as "distenv: replicated Job b: container ...",
matches as the message without that name).

    python3 scripts/rules-check.py [--answers FILE] [--inventory]

--inventory prints, for every site, its words and the cases whose answers it matched.
"""
import argparse
import glob
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TITLE = "Every rule over HTTPS"
DIRECTIVE = re.compile(r"%[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|z|j|t)?[diuxXscp%]")
CUT = 119  # a warning is cut to PLAN_WARNING_LEN - 1 characters
# the pod template a /validate answer names after "distenv: " (validate.c's warn_named, and
# view_problem with tmpl_what): a JobSet's "replicated Job NAME" (NAME cut with "..." to
# fit), a LeaderWorkerSet's "leader template" or "worker template"; nothing else
TEMPLATE = re.compile(r"distenv: (?:replicated Job [a-z0-9-]+(?:\.\.\.)?|(?:leader|worker) "
                      r"template): ")
ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'"}


def read(p):
    with open(os.path.join(ROOT, p)) as f:
        return f.read()


def source_files():
    files = glob.glob(os.path.join(ROOT, "src/core/*.c")) + \
        glob.glob(os.path.join(ROOT, "src/kinds/*.c")) + \
        glob.glob(os.path.join(ROOT, "src/frameworks/*.c"))
    return sorted(f for f in files if "doctor" not in os.path.basename(f)
                  and os.path.basename(f) != "config.c")


def unescape(lit):
    return re.sub(r"\\(.)", lambda m: ESCAPES.get(m.group(1), m.group(1)), lit)


def call_args(s, start):
    """The text between the parenthesis at start - 1 and its match (strings skipped)."""
    depth, j = 1, start
    while depth and j < len(s):
        c = s[j]
        if c == '"':
            j += 1
            while s[j] != '"':
                j += 2 if s[j] == "\\" else 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        j += 1
    return s[start:j - 1]


def literal_runs(args):
    """The string literals of args, adjacent ones joined (as the compiler joins them)."""
    out, cur = [], None
    for m in re.finditer(r'"((?:[^"\\]|\\.)*)"|(\S)', args):
        if m.group(1) is not None:
            cur = (cur or "") + unescape(m.group(1))
        elif cur is not None:
            out.append(cur)
            cur = None
    if cur is not None:
        out.append(cur)
    return out


def writers():
    """The calls that write a message: snprintf, and every function of src taking a printf
    format (`const char *fmt, ...`)."""
    names = {"snprintf", "vsnprintf"}
    for f in glob.glob(os.path.join(ROOT, "src/*/*.[ch]")):
        names |= set(re.findall(r"\b(\w+)\([^()]*\bconst char \*fmt,\s*\.\.\.\)", read(f)))
    return re.compile(r"\b(%s)\s*\(" % "|".join(sorted(names, key=len, reverse=True)))


def sites():
    """[(file:line, format)] of every call that writes a message of words."""
    out = []
    calls = writers()
    for f in source_files():
        s = read(f)
        s = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), s, flags=re.S)
        s = re.sub(r"//[^\n]*", "", s)
        for m in calls.finditer(s):
            runs = literal_runs(call_args(s, m.end()))
            fmt = max(runs, key=len) if runs else ""
            if not re.search(r"[a-z]{3,} [a-z]{2,}", DIRECTIVE.sub(" ", fmt)):
                continue  # a name, a number, a separator: no message of its own
            line = s.count("\n", 0, m.start()) + 1
            out.append(("%s:%d" % (os.path.relpath(f, ROOT), line), fmt))
    return out


def words(fmt):
    """The longest piece of fmt between two directives."""
    return max((p.strip(" :;,") for p in DIRECTIVE.split(fmt)), key=len)


def pattern(fmt, cut=False):
    """fmt as a regular expression (a %s is any text within one problem of a joined
    denial); cut: the text may end inside any piece from the one holding the words on."""
    parts = DIRECTIVE.split(fmt)
    dirs = DIRECTIVE.findall(fmt)
    rx = []
    for i, p in enumerate(parts):
        rx.append(re.escape(p))
        if i < len(dirs):
            d = dirs[i]
            rx.append("%" if d == "%%" else
                      (r"-?\d+" if d[-1] in "diux" else r"(?:(?!; ).)*?"))
    if not cut:
        return re.compile("".join(rx), re.S)
    # a warning cut at its length: the pieces up to the words whole, then a piece's start
    w = words(fmt)
    first = next(i for i, p in enumerate(parts) if w in p)
    alts = []
    for k in range(first, len(parts)):
        head = "".join(rx[:2 * k])
        p = parts[k]
        keep = len(p) // 2 if k == first else 1
        alts.append(head + "(?:%s)" % "|".join(re.escape(p[:n]) for n in
                                                  range(len(p), keep - 1, -1) if n > 0))
    return re.compile("(?:%s)\\Z" % "|".join(alts), re.S)


def matches(fmt, text, cut=True):
    """text says fmt: whole, or (cut) a warning cut at the API server's length; a /validate
    answer about one pod template may name it after "distenv: " (TEMPLATE), the rest being
    the message as its source writes it."""
    said = [text]
    m = TEMPLATE.match(text)
    if m:
        said.append("distenv: " + text[m.end():])
    for t in said:
        if pattern(fmt).search(t):
            return True
        if cut and len(text) >= CUT and pattern(fmt, cut=True).search(t) is not None:
            return True
    return False


def table(doc):
    m = re.search(r"^#+ %s\n(.*?)(?=^#+ |\Z)" % re.escape(TITLE), doc, re.M | re.S)
    if not m:
        sys.exit("rules: docs/testing.md has no section \"%s\"" % TITLE)
    rows = []
    for line in m.group(1).splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) != 4:
            sys.exit("rules: a row without four cells: %s" % line)
        w = re.fullmatch(r"`(.+)`", cells[0])
        rows.append((w.group(1).replace("\\|", "|") if w else cells[0],
                     re.findall(r"`(\w+)`", cells[3]), line))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--answers", help="what run.py --answers wrote")
    ap.add_argument("--inventory", action="store_true", help="print every site and its cases")
    args = ap.parse_args()
    found = sites()
    answers = []
    if args.answers:
        with open(args.answers) as f:
            answers = [json.loads(line) for line in f if line.strip()]
    if args.inventory:
        for where, fmt in found:
            got = sorted({a["case"] for a in answers
                          if matches(fmt, a["text"], cut=a.get("what") != "annotation")})
            print("%s\t%s\t%s" % (where, words(fmt), ",".join(got) or "-"))
        return 0
    rows = table(read("docs/testing.md"))
    tests = read("test/integration/run.py") + read("test/integration/equivalence.py")
    bad, gaps = [], 0
    for where, fmt in found:
        if not any(w in fmt for w, _, _ in rows):
            bad.append("%s: no row for the message \"%s\"" % (where, words(fmt)))
    def owner(fmt):
        held = [w for w, _, _ in rows if w in fmt]
        return max(held, key=len) if held else None
    for w, cases, line in rows:
        covered = [(where, fmt) for where, fmt in found if owner(fmt) == w]
        if not covered:
            bad.append("a row for no message (reworded?): %s" % w)
        if not cases:
            if "none yet" not in line:
                bad.append("%s: no integration case named (or \"none yet\")" % w)
            gaps += 1
        for c in cases:
            if not re.search(r"^\s*def %s\(" % re.escape(c), tests, re.M):
                bad.append("%s: no integration case %s in test/integration" % (w, c))
        if args.answers and cases:
            for where, fmt in covered:
                if not any(a["case"] in cases and
                           matches(fmt, a["text"], cut=a.get("what") != "annotation")
                           for a in answers):
                    bad.append("%s (%s): no answer of %s over HTTPS says it"
                               % (w, where, ", ".join(cases)))
    for b in bad:
        print("rules: " + b)
    if bad:
        return 1
    print("rules: %d message sites, %d rows, %d reached by their cases%s, %d none yet"
          % (len(found), len(rows), len(rows) - gaps,
             " (answers checked)" if args.answers else "", gaps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
