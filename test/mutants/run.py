#!/usr/bin/env python3
"""make mutants: every mutation in test/mutants/mutants.txt is applied to a scratch
copy of the tree (never the working tree), built, and run against the one tier that
must catch it; a mutation that survives (its tier passes) fails the run and is named.

    python3 test/mutants/run.py [-k NAME] [--list]

Each tier is first run on the unmutated copy: a tier that fails there would "catch"
every mutation, so it fails the run instead. Closes with "mutants: N killed, N survived".
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIST = os.path.join(ROOT, "test", "mutants", "mutants.txt")
FIELDS = ("name", "file", "from", "to", "tier", "guards")
TIER_TIMEOUT = 300  # seconds; a tier that hangs on a mutation has caught it


def log(msg):
    print(msg, flush=True)


def unescape(v):
    """The list's snippets are one line each: \\n and \\t stand for a newline and a tab."""
    return v.replace("\\n", "\n").replace("\\t", "\t")


def parse(path):
    """Blocks of `key: value` lines separated by blank lines; # starts a comment line."""
    muts, cur, errors = [], {}, []
    with open(path) as f:
        lines = f.read().splitlines() + [""]
    for n, line in enumerate(lines, 1):
        if line.startswith("#"):
            continue
        if not line.strip():
            if cur:
                missing = [k for k in FIELDS if k not in cur]
                if missing:
                    errors.append("%s:%d: mutation %s lacks %s" % (
                        path, n, cur.get("name", "?"), ", ".join(missing)))
                muts.append(cur)
                cur = {}
            continue
        k, sep, v = line.partition(": ")
        if not sep or k not in FIELDS:
            errors.append("%s:%d: not a `key: value` line with a key of %s: %r"
                          % (path, n, "/".join(FIELDS), line))
            continue
        cur[k] = unescape(v) if k in ("from", "to") else v
    names = [m.get("name") for m in muts]
    for d in sorted({x for x in names if names.count(x) > 1}):
        errors.append("mutation name %s is used twice" % d)
    return muts, errors


def tier_argv(tier):
    """The commands (run in the scratch copy) of a tier: unit BIN | integration NAME |
    faults CASE."""
    kind, _, arg = tier.partition(" ")
    if kind == "unit" and re.fullmatch(r"test_\w+", arg):
        return [["make", "-s", "OPT=-O1 -g", "build/test/" + arg], ["./build/test/" + arg]]
    if kind == "integration" and arg:
        return [["make", "-s", "OPT=-O1 -g", "build/distenv-webhook"],
                [sys.executable, "test/integration/run.py", "--binary", "build/distenv-webhook",
                 "-k", arg]]
    if kind == "faults" and re.fullmatch(r"\w+", arg):
        return [["make", "-s", "OPT=-O1 -g", "build/distenv-webhook", "build/tools/loadgen"],
                ["bash", "test/faults/run.sh", arg]]
    return None


def run_tier(copy, tier, logpath):
    """0 when every command of the tier passed; else the failing command's exit status
    (or 'timeout')."""
    # TMPDIR inside the scratch directory: what a failing tier keeps goes with it.
    tmp = os.path.join(os.path.dirname(copy), "tmp")
    os.makedirs(tmp, exist_ok=True)
    env = dict(os.environ, FAULTS_QUICK="1", DISTENV_BIN="build/distenv-webhook",
               LOADGEN="build/tools/loadgen", TMPDIR=tmp)
    env.pop("GOLDEN_UPDATE", None)
    with open(logpath, "ab") as out:
        for step, argv in enumerate(tier_argv(tier)):
            out.write(("$ %s\n" % " ".join(argv)).encode())
            out.flush()
            p = subprocess.Popen(argv, cwd=copy, stdout=out, stderr=subprocess.STDOUT,
                                 env=env, start_new_session=True)
            try:
                rc = p.wait(timeout=TIER_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)  # the tier's own process group
                p.wait()
                return "timeout"
            if rc != 0:
                return "build" if step == 0 else rc
    return 0


def first_failure(logpath):
    """The first line of the log that says what failed, for the summary."""
    with open(logpath, errors="replace") as f:
        for line in f:
            if re.search(r"check failed|^FAIL|ERROR|Assertion|runtime error|\*\*\* .* \*\*\*", line):
                return line.strip()[:160]
    return ""


def scratch_copy(dest):
    """The tracked files of the working tree, as they are now (uncommitted edits too)."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for f in files:
        if not f or not os.path.isfile(os.path.join(ROOT, f)):
            continue
        os.makedirs(os.path.join(dest, os.path.dirname(f)), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, f), os.path.join(dest, f))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-k", dest="filter", help="only the mutations whose name holds this")
    ap.add_argument("--list", action="store_true", help="print the mutations and exit")
    ap.add_argument("--keep", action="store_true", help="keep the scratch copy")
    ap.add_argument("--file", default=LIST, help="another list (default %(default)s)")
    a = ap.parse_args()
    muts, errors = parse(a.file)
    for m in muts:
        if "tier" in m and tier_argv(m["tier"]) is None:
            errors.append("mutation %s: unknown tier %r (unit test_X | integration NAME | "
                          "faults CASE)" % (m.get("name"), m["tier"]))
        path = os.path.join(ROOT, m.get("file", ""))
        if "from" in m and os.path.isfile(path):
            with open(path) as f:
                n = f.read().count(m["from"])
            if n != 1:
                errors.append("mutation %s: its snippet occurs %d times in %s, want once "
                              "(the list is out of date)" % (m.get("name"), n, m["file"]))
        elif "file" in m:
            errors.append("mutation %s: no file %s" % (m.get("name"), m["file"]))
    if errors:
        for e in errors:
            log("mutants: " + e)
        return 2
    if a.filter:
        muts = [m for m in muts if a.filter in m["name"]]
    if a.list:
        for m in muts:
            log("%-28s %-24s %-36s %s" % (m["name"], m["file"], m["tier"], m["guards"]))
        return 0
    if not muts:
        log("mutants: no mutation selected")
        return 2

    work = tempfile.mkdtemp(prefix="distenv-mutants-")
    copy = os.path.join(work, "tree")
    logs = os.path.join(work, "logs")
    os.makedirs(logs)
    t0 = time.monotonic()
    killed, survived, broken = [], [], []
    try:
        scratch_copy(copy)
        # The unmutated copy first: every tier used must pass on it.
        for tier in sorted({m["tier"] for m in muts}):
            lp = os.path.join(logs, "baseline-%s.log" % re.sub(r"\W+", "_", tier))
            rc = run_tier(copy, tier, lp)
            if rc != 0:
                log("mutants: FAIL the tier `%s` fails without any mutation (%s); log %s"
                    % (tier, rc, lp))
                broken.append(tier)
        if broken:
            a.keep = True
            return 1
        for m in muts:
            path = os.path.join(copy, m["file"])
            with open(path) as f:
                orig = f.read()
            lp = os.path.join(logs, m["name"] + ".log")
            try:
                with open(path, "w") as f:
                    f.write(orig.replace(m["from"], m["to"], 1))
                rc = run_tier(copy, m["tier"], lp)
            finally:
                with open(path, "w") as f:
                    f.write(orig)
                # newer than any object built from the mutation: rebuilt for the next
                os.utime(path, None)
            if rc == "build":
                broken.append(m["name"])
                log("mutants: FAIL mutation %s does not build (log %s): fix its `to`"
                    % (m["name"], lp))
            elif rc == 0:
                survived.append(m)
                log("SURVIVED %-28s %s: `%s` -> `%s`; tier `%s` passed (guards: %s); log %s"
                    % (m["name"], m["file"], m["from"], m["to"], m["tier"], m["guards"], lp))
            else:
                killed.append(m)
                log("killed   %-28s by `%s` (%s): %s"
                    % (m["name"], m["tier"], "timeout" if rc == "timeout" else "exit %s" % rc,
                       first_failure(lp)))
    finally:
        if a.keep or survived or broken:
            log("mutants: scratch copy and logs kept in %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    log("mutants: %d killed, %d survived, %d do not build in %.0f s"
        % (len(killed), len(survived), len(broken), time.monotonic() - t0))
    if survived:
        log("mutants: survivors (a promise no test holds): %s"
            % ", ".join(m["name"] for m in survived))
    return 1 if survived or broken else 0


if __name__ == "__main__":
    sys.exit(main())
