#!/usr/bin/env python3
"""The include graph of src/ by wing (src/README.md), and the same rule for symbols.

Prints, for each wing, the wings its files include, and fails (exit 1) when a
file includes a header of a higher wing or of another wing at its own level
(kinds, frameworks and obs sit side by side: none sees the others), when an
#include names a header that is not in src/, or when the file graph has a
circle.

With --symbols OBJDIR (make lint passes the build's objects, build/obj/<wing>/)
it also reads every object with nm and fails when an object references a
symbol defined in an object of a higher wing or of another wing at its own
level (the core is handed its plug-ins: core/registry.h), or when a room of
kinds/ or frameworks/ references a symbol of another room: rooms share only
through their wing's shared file (SHARED), which alone names the rows.

  python3 scripts/include-graph.py                        the check, and the wing graph
  python3 scripts/include-graph.py --files                every file's includes too
  python3 scripts/include-graph.py --symbols build/obj    the symbol check too
"""
import os
import re
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SRC = os.path.join(ROOT, "src")

# Lowest first; the Makefile's WINGS lists the same folders.
LEVEL = {
    "lib": 0,
    "core": 1,
    "kinds": 2,
    "frameworks": 2,
    "obs": 2,
    "kube": 3,
    "http": 4,
    "cli": 5,
}

# The wings made of rooms, and the one file of each the rooms may share.
SHARED = {"kinds": "kind.c", "frameworks": "framework.c"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def symbols(objdir, files):
    """Errors of the symbol rule over objdir/<wing>/<file>.o for every .c of files."""
    errors = []
    defined = {}  # symbol -> (wing, file)
    used = {}  # (wing, file) -> symbols it references
    for f, wing in sorted(files.items()):
        if not f.endswith(".c"):
            continue
        obj = os.path.join(objdir, wing, f[:-2] + ".o")
        if not os.path.isfile(obj):
            errors.append("%s: missing (build first: make)" % obj)
            continue
        out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
        used[(wing, f)] = set()
        for line in out.splitlines():
            p = line.split()
            if len(p) == 2 and p[0] == "U":
                used[(wing, f)].add(p[1])
            elif len(p) == 3 and p[1] in "TDBRCVW":
                defined[p[2]] = (wing, f)
    for (wing, f), syms in sorted(used.items()):
        for sym in sorted(syms):
            if sym not in defined:
                continue  # a library's
            to, g = defined[sym]
            if to != wing and LEVEL[to] >= LEVEL[wing]:
                errors.append("src/%s/%s uses %s of src/%s/%s: %s"
                              % (wing, f, sym, to, g,
                                 "upward" if LEVEL[to] > LEVEL[wing] else "sideways, between wings of one level"))
            elif to == wing and g != f and wing in SHARED and SHARED[wing] not in (f, g):
                errors.append("src/%s/%s uses %s of src/%s/%s: one room calls another (share through %s)"
                              % (wing, f, sym, to, g, SHARED[wing]))
    return errors, len(used)


def main():
    files = {}  # basename -> wing
    for wing in sorted(os.listdir(SRC)):
        d = os.path.join(SRC, wing)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if f.endswith((".c", ".h")):
                files[f] = wing
    errors = []
    for f, wing in files.items():
        if wing not in LEVEL:
            errors.append("src/%s/%s: %s is not a wing of this script's LEVEL" % (wing, f, wing))
    if errors:
        print("\n".join(errors))
        return 1

    edges = {}
    wing_edges = {}
    for f, wing in sorted(files.items()):
        text = open(os.path.join(SRC, wing, f), encoding="utf-8").read()
        edges[f] = []
        for inc in INCLUDE.findall(text):
            if inc not in files:
                errors.append("src/%s/%s includes \"%s\", which is not in src/" % (wing, f, inc))
                continue
            to = files[inc]
            edges[f].append(inc)
            if to != wing:
                wing_edges.setdefault(wing, set()).add(to)
                if LEVEL[to] >= LEVEL[wing]:
                    errors.append(
                        "src/%s/%s includes %s/%s: %s"
                        % (wing, f, to, inc,
                           "upward" if LEVEL[to] > LEVEL[wing] else "sideways, between wings of one level"))

    # A circle among files (a header that includes, through others, itself).
    state = {}
    stack = []

    def visit(f):
        state[f] = 1
        stack.append(f)
        for g in edges.get(f, []):
            if state.get(g) == 1:
                errors.append("include circle: " + " -> ".join(stack[stack.index(g):] + [g]))
            elif g not in state:
                visit(g)
        stack.pop()
        state[f] = 2

    for f in sorted(edges):
        if f not in state:
            visit(f)

    for wing in sorted(LEVEL, key=lambda w: (LEVEL[w], w)):
        n = sum(1 for w in files.values() if w == wing)
        print("%-10s (level %d, %2d files) -> %s"
              % (wing, LEVEL[wing], n, " ".join(sorted(wing_edges.get(wing, []), key=lambda w: (LEVEL[w], w))) or "-"))
    if "--files" in sys.argv[1:]:
        for f in sorted(edges, key=lambda f: (LEVEL[files[f]], files[f], f)):
            print("  %s/%s: %s" % (files[f], f, " ".join(edges[f]) or "-"))
    nobj = None
    if "--symbols" in sys.argv[1:]:
        i = sys.argv.index("--symbols")
        if i + 1 >= len(sys.argv):
            errors.append("--symbols needs the objects' folder (build/obj)")
        else:
            errs, nobj = symbols(sys.argv[i + 1], files)
            errors += errs
    if errors:
        print("\n".join(errors))
        return 1
    print("include-graph: ok, %d files, no upward or sideways include, no circle" % len(files))
    if nobj is not None:
        print("include-graph: ok, %d objects, no upward or sideways symbol, no room calls another" % nobj)
    return 0


if __name__ == "__main__":
    sys.exit(main())
