#!/usr/bin/env python3
"""Every documented promise in the rules, limits and bad-input tables maps to a test.

Reads docs/environment.md (the reference the README links to for what a pod gets):
the clauses of the "Rules:" paragraph of "What a pod gets" and the bold titles of
the bullets after it, and the rows of "What bad input gets"; and docs/reference.md:
the `limits.*` and `server.max*` keys of its Configuration table. Each must be a row of
docs/promises.md (its first column, word for word) whose test column names one or
more `FILE: NAME` references, each FILE existing and holding NAME, and whose
mutation column (if any) names mutations of test/mutants/mutants.txt. Fails, naming
them, when a promise has no row, a row no promise, or a reference does not resolve.

    python3 scripts/promises-check.py
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read(p):
    with open(os.path.join(ROOT, p)) as f:
        return f.read()


def section(text, title):
    m = re.search(r"^#+ %s\n(.*?)(?=^#+ |\Z)" % re.escape(title), text, re.M | re.S)
    return m.group(1) if m else ""


def promises(env, ref):
    out = []
    pod = section(env, "What a pod gets")
    m = re.search(r"^Rules: (.*?)\n\n", pod, re.M | re.S)
    if not m:
        sys.exit("promises: docs/environment.md has no \"Rules:\" paragraph under What a pod gets")
    rules = " ".join(m.group(1).split())
    for clause in rules.split("; "):
        out.append("Rules: " + clause.split(" (")[0].rstrip("."))
    for b in re.findall(r"^- \*\*(.+?)\*\*", pod[m.end():].split("\n###")[0], re.M):
        out.append("Rules: " + b.strip().rstrip("."))
    bad = section(env, "What bad input gets")
    for row in re.findall(r"^\| (.+?) \| .+ \|$", bad, re.M):
        if row not in ("input", "---"):
            out.append("Bad input: " + row)
    conf = section(ref, "Configuration")
    for cell in re.findall(r"^\| (.+?) \| .+ \|$", conf, re.M):
        for key in re.findall(r"`((?:limits\.\w+)|(?:server\.max\w+))`", cell):
            out.append("Limit: " + key)
    return out


def table(doc):
    rows = {}
    for line in doc.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")] if \
            line.startswith("| ") else []
        if len(cells) >= 2 and cells[0] not in ("promise", "---"):
            rows[cells[0]] = cells[1:]
    return rows


def main():
    want = promises(read("docs/environment.md"), read("docs/reference.md"))
    rows = table(read("docs/promises.md"))
    mutants = set(re.findall(r"^name: (\S+)$", read("test/mutants/mutants.txt"), re.M))
    bad = []
    for p in want:
        if p not in rows:
            bad.append("no row for the promise: %s" % p)
    for p, cells in rows.items():
        if p not in want:
            bad.append("a row for no promise (reworded?): %s" % p)
        refs = re.findall(r"`([^`:]+): ([^`]+)`", cells[0])
        if not refs:
            bad.append("%s: no test named (`FILE: NAME`)" % p)
        for f, name in refs:
            path = os.path.join(ROOT, f)
            if not os.path.isfile(path):
                bad.append("%s: no file %s" % (p, f))
            elif name not in read(f):
                bad.append("%s: %s holds no %r" % (p, f, name))
        for mname in re.findall(r"`([\w-]+)`", cells[1] if len(cells) > 1 else ""):
            if mname not in mutants:
                bad.append("%s: no mutation %s in test/mutants/mutants.txt" % (p, mname))
    for b in bad:
        print("promises: " + b)
    print("promises: %d promises, %d with a test%s"
          % (len(want), len([p for p in want if p in rows]),
             "" if not bad else "; %d problems" % len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
