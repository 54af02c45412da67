#!/usr/bin/env python3
"""The include graph of src/ by wing (src/README.md).

Prints, for each wing, the wings its files include, and fails (exit 1) when a
file includes a header of a higher wing or of another wing at its own level
(kinds, frameworks and obs sit side by side: none sees the others), when an
#include names a header that is not in src/, or when the file graph has a
circle.

  python3 scripts/include-graph.py           the check, and the wing graph
  python3 scripts/include-graph.py --files   every file's includes too
"""
import os
import re
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

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


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
    if errors:
        print("\n".join(errors))
        return 1
    print("include-graph: ok, %d files, no upward or sideways include, no circle" % len(files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
