#!/usr/bin/env python3
"""Every src/... path named in a comment or a doc names a file that exists.

Reads every file git tracks (but the fixtures of test/data/ and the ignore
lists, whose patterns are not claims) and fails (exit 1) on a path of this
tree that names no file: src/<wing>/<file>, src/<file>, or a pattern of them
(src/kinds/kind_*.c, src/frameworks/fw_<name>.c: a `<...>` stands for any
name), which must match at least one. A path under src/ of another project
(src/accelerate/..., as docs/launchers.md quotes them) is not this tree's: its
first folder is no wing of src/.

  python3 scripts/paths-check.py     the check (make lint runs it)
"""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
PATH = re.compile(r"(?<![\w./-])(src/[A-Za-z0-9_./*<>-]*[A-Za-z0-9_*>])")
SKIP = (".dockerignore", ".gitignore")


def ours(path, wings):
    """1 when path is of this tree: src/<wing>/... or a file right in src/."""
    parts = path.split("/")
    if len(parts) == 2:
        return "." in parts[1]
    return parts[1] in wings


def main():
    os.chdir(ROOT)
    wings = {d for d in os.listdir("src") if os.path.isdir(os.path.join("src", d))}
    files = subprocess.run(["git", "ls-files"], capture_output=True, text=True,
                           check=True).stdout.split("\n")
    errors, seen = [], 0
    for f in files:
        if not f or f.startswith("test/data/") or os.path.basename(f) in SKIP or not os.path.isfile(f):
            continue
        try:
            text = open(f, encoding="utf-8").read()
        except (UnicodeDecodeError, OSError):
            continue  # not text
        for m in PATH.finditer(text):
            path = m.group(1).rstrip(".")
            if not ours(path, wings):
                continue
            seen += 1
            pattern = re.sub(r"<[^>/]*>", "*", path)
            if not glob.glob(pattern):
                line = text.count("\n", 0, m.start()) + 1
                errors.append("%s:%d: %s names no file" % (f, line, path))
    if errors:
        print("\n".join(errors))
        return 1
    print("paths-check: ok, %d src/ paths named, each a file" % seen)
    return 0


if __name__ == "__main__":
    sys.exit(main())
