#!/usr/bin/python3
"""Writes charts/distenv/README.md (what `helm show readme` prints) from
charts/distenv/README.md.in, Chart.yaml and the `# --` comments of values.yaml
(the helm-docs convention: a `# -- text` comment, continued by the `#` lines
below it, documents the key that follows).

  scripts/chart-readme.py           write charts/distenv/README.md
  scripts/chart-readme.py --check   exit 1, with a diff, when the file differs

README.md.in holds the prose; @NAME@, @VERSION@, @APP_VERSION@, @DESCRIPTION@,
@KUBE_VERSION@ and @VALUES@ (the table of values) are replaced. Every leaf key
of values.yaml gets a row, with its default from the parsed file; a map with a
comment of its own gets a row too. Needs PyYAML (Debian's python3-yaml).
"""
import difflib
import json
import os
import re
import sys

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
CHART = os.path.join(ROOT, "charts", "distenv")
KEY = re.compile(r"^(\s*)([A-Za-z0-9_.-]+|\"[^\"]+\"):(\s|$)")


def comments(lines):
    """Maps each documented key path (a tuple) to its description."""
    out = {}
    stack = []  # (indent, key)
    pending = None  # lines of the `# --` block above the next key
    in_block = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("#"):
            text = stripped[1:]
            if text.startswith(" --"):
                pending = [text[3:].strip()]
                in_block = True
            elif in_block and pending is not None:
                # a continuation; deeper indentation starts a new line in the cell
                body = text[1:] if text.startswith(" ") else text
                if body.startswith("  "):
                    pending.append("<br>" + body.strip())
                else:
                    pending.append(body.strip())
            continue
        in_block = False
        m = KEY.match(line)
        if not m or line.lstrip().startswith("-"):
            if stripped:
                pending = None
            continue
        indent = len(m.group(1))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, m.group(2).strip('"')))
        if pending is not None:
            path = tuple(k for _, k in stack)
            out[path] = " ".join(p for p in pending if p).replace(" <br>", "<br>")
            pending = None
    return out


def kind(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "list"
    return "object"


def rows(values, docs, prefix=()):
    for k, v in values.items():
        path = prefix + (k,)
        if isinstance(v, dict) and v:
            if path in docs:
                yield path, v, docs[path], True
            yield from rows(v, docs, path)
        else:
            yield path, v, docs.get(path, ""), False


def cell(text):
    return text.replace("|", "\\|")


def key_name(path):
    return ".".join(f'"{p}"' if "." in p else p for p in path)


def table(values, docs):
    out = ["| Key | Type | Default | Description |", "| --- | --- | --- | --- |"]
    for path, v, desc, parent in rows(values, docs):
        default = "(the keys below)" if parent else "`" + cell(json.dumps(v)) + "`"
        out.append(f"| `{key_name(path)}` | {kind(v)} | {default} | {cell(desc)} |")
    return "\n".join(out)


def generate():
    text = open(os.path.join(CHART, "values.yaml")).read()
    values = yaml.safe_load(text)
    docs = comments(text.splitlines())
    chart = yaml.safe_load(open(os.path.join(CHART, "Chart.yaml")))
    tpl = open(os.path.join(CHART, "README.md.in")).read()
    subst = {
        "@NAME@": chart["name"],
        "@VERSION@": chart["version"],
        "@APP_VERSION@": chart["appVersion"],
        "@DESCRIPTION@": " ".join(chart["description"].split()),
        "@KUBE_VERSION@": chart.get("kubeVersion", ""),
        "@VALUES@": table(values, docs),
    }
    for k, v in subst.items():
        tpl = tpl.replace(k, v)
    return tpl


def main():
    out = os.path.join(CHART, "README.md")
    want = generate()
    if sys.argv[1:] == ["--check"]:
        have = open(out).read() if os.path.exists(out) else ""
        if have != want:
            sys.stdout.writelines(difflib.unified_diff(
                have.splitlines(True), want.splitlines(True), "charts/distenv/README.md", "generated", n=1))
            print("chart-readme: charts/distenv/README.md is out of date; run scripts/chart-readme.py",
                  file=sys.stderr)
            return 1
        print("chart-readme: charts/distenv/README.md is up to date")
        return 0
    if sys.argv[1:]:
        print("usage: scripts/chart-readme.py [--check]", file=sys.stderr)
        return 2
    with open(out + ".tmp", "w") as f:
        f.write(want)
    os.replace(out + ".tmp", out)
    print("chart-readme: wrote charts/distenv/README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
