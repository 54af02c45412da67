#!/usr/bin/env python3
"""make mutation-score: the mutation score of the tests, measured by universalmutator.

    python3 test/mutants/score.py [--sample N] [--seed S] [--check] [FILE[:LINES]...]

The mutants are universalmutator's own (its universal, c and c_like rules, strings
left alone), over src/core, src/kinds, src/frameworks and src/kube/lookupcache.c
unless files are named. For each mutant, in a scratch copy of the tracked tree:

1. the mutated file is compiled alone (-O1 -g0); a mutant that does not compile (or link) is
   not counted, nor one whose object code is byte for byte the original's (trivially
   equivalent: the compiler proves it);
2. the unit test binaries that reach the file are linked with it and run, those that
   name one of its public functions first, then the others that reach it through the
   objects they call (the link map), fastest first; the first that fails (or runs
   past its timeout) kills it;
3. one that every unit test let live is built again with AddressSanitizer and
   UBSan (make check's flags) and the same unit tests run: a read past an array's
   end, a signed overflow or a leak the plain run cannot see kills it there, as CI's
   sanitizer tier (make check) would fail on it; unless --no-sanitizers;
4. one that lives through both is run against the HTTPS integration tier
   (test/integration/run.py) with the real binary linked with it, unless
   --no-integration.

Prints one line per survivor and the score per file: killed / (killed + survived),
the survivors written down as equivalent in docs/mutants.md (its `equivalent`
blocks) left out of both. --sample N takes N counted mutants per file in a fixed
order (a hash of the seed, the file, the line and its mutation: the same mutants
from run to run while their lines stand), the full form takes all. --check fails
(exit 1) on a survivor that is not listed. --time-limit stops starting mutants after
that many seconds; what was not run is counted and named as not run. SIGTERM or
SIGINT (Ctrl-C) stops it the same way, after the mutant under test.
"""
import argparse
import concurrent.futures
import glob
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, "docs", "mutants.md")
DEFAULT_FILES = ["src/core/*.c", "src/kinds/*.c", "src/frameworks/*.c", "src/kube/lookupcache.c"]
RULES = ["universal.rules", "c.rules", "c_like.rules"]  # what `mutate FILE c` uses
OPT = ["-O1", "-g0"]
# make check's (the Makefile's check target): the sanitizer tier CI runs
SAN_OPT = ["-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined",
           "-fno-sanitize-recover=all"]
SAN_LDFLAGS = ["-fsanitize=address,undefined"]
BROAD = ["test_golden", "test_admission", "test_render", "test_validate", "test_plan"]
SLOW = 10.0  # seconds unmutated

GEN = r"""
import json, sys
from universalmutator import mutator
out = {}
for path in sys.argv[1:]:
    with open(path) as f:
        src = f.readlines()
    ms = mutator.mutants_regexp(src, ruleFiles=%r, ignorePatterns=[], ignoreStringOnly=True)
    out[path] = [[ln, m] for (ln, m, _rule, _pair) in ms]
sys.stdout.write("\n" + json.dumps(out))
""" % (RULES,)


def log(msg):
    print(msg, flush=True)


def mutator_python():
    venv = os.environ.get("MUTATION_VENV") or os.path.join(
        os.environ.get("DISTENV_CACHE", "/root/.cache/distenv"), "mutation-venv")
    py = os.path.join(venv, "bin", "python")
    if not os.access(py, os.X_OK):
        return None
    return py


def generate(py, files):
    """{file: [(line number, original line, mutated line)]} from universalmutator."""
    p = subprocess.run([py, "-c", GEN] + files, cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit("mutation-score: universalmutator failed:\n" + p.stderr[-2000:])
    data = json.loads(p.stdout.rsplit("\n", 1)[1])
    res = {}
    for f in files:
        with open(os.path.join(ROOT, f)) as fh:
            src = fh.readlines()
        res[f] = [(ln, src[ln - 1], m) for ln, m in data[f]]
    return res


def parse_equivalents(path):
    """The `equivalent` fenced blocks of docs/mutants.md: entries of `file:`, `from:`,
    `to:`, `why:` lines, separated by blank lines; from/to are the stripped lines."""
    eqs, errors = [], []
    inside, cur = False, {}
    with open(path) as f:
        lines = f.read().splitlines() + [""]
    for n, line in enumerate(lines, 1):
        if line.startswith("```"):
            if not inside and line.strip() == "```equivalent":
                inside, cur = True, {}
                continue
            if inside:
                if cur:
                    eqs.append(cur)
                inside, cur = False, {}
            continue
        if not inside:
            continue
        if not line.strip():
            if cur:
                eqs.append(cur)
            cur = {}
            continue
        k, sep, v = line.partition(": ")
        if not sep or k not in ("file", "from", "to", "why", "after", "before"):
            errors.append("%s:%d: want file:/from:/to:/why: (after:/before:) lines, got %r"
                          % (path, n, line))
            continue
        cur[k] = v.strip()
    for e in eqs:
        missing = [k for k in ("file", "from", "to", "why") if k not in e]
        if missing:
            errors.append("%s: equivalent entry %r lacks %s" % (path, e, ", ".join(missing)))
    return eqs, errors


def esc(line):
    """A line as the survivor list prints it and docs/mutants.md names it: stripped, a
    newline and a tab inside (a mutant that adds a statement) as \\n and \\t."""
    return line.strip().replace("\n", "\\n").replace("\t", "\\t")


EDGES = (("<", "<="), ("<=", "<"), (">", ">="), (">=", ">"))


def is_op(line, i, op):
    """line[i:] starts the comparison operator op (not a part of <<, >>, ->, <<=, >>=)."""
    if line[i:i + len(op)] != op:
        return False
    before = line[i - 1] if i else " "
    after = line[i + len(op)] if i + len(op) < len(line) else " "
    return before not in "<>-=!" and after not in "<>=" if len(op) == 1 else \
        before not in "<>" and after not in "<>="


def is_boundary(orig, mut):
    """The mutant moves one comparison by one across its edge: < for <=, > for >= and back.
    Such a mutant lives when no test tries the value at the edge itself."""
    for a, b in EDGES:
        i = orig.find(a)
        while i >= 0:
            if is_op(orig, i, a) and orig[:i] + b + orig[i + len(a):] == mut:
                return True
            i = orig.find(a, i + 1)
    return False


def key(seed, f, orig, mut, occ):
    return hashlib.sha256(("%s|%s|%s|%s|%d" % (seed, f, orig.strip(), mut.strip(), occ))
                          .encode()).hexdigest()


def scratch_copy(dest):
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for f in files:
        if not f or not os.path.isfile(os.path.join(ROOT, f)):
            continue
        os.makedirs(os.path.join(dest, os.path.dirname(f)), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, f), os.path.join(dest, f))


class Build:
    """Objects of the scratch copy, compiled once; a mutant replaces one of them."""

    def __init__(self, tree, cc, cflags, ldflags, ldlibs, opt=OPT, out="build-mscore"):
        self.tree, self.cc, self.opt = tree, cc, opt
        self.cflags, self.ldflags, self.ldlibs = cflags, ldflags, ldlibs
        self.out = os.path.join(tree, out)
        self.srcs = sorted(p for p in glob.glob(os.path.join(tree, "src", "*", "*.c")))
        self.objs = {}
        self.tests = sorted(os.path.splitext(os.path.basename(p))[0]
                            for p in glob.glob(os.path.join(tree, "test", "unit", "test_*.c")))
        self.base_time = {}

    def rel(self, p):
        return os.path.relpath(p, self.tree)

    def compile(self, src, obj, extra=()):
        os.makedirs(os.path.dirname(obj), exist_ok=True)
        argv = [self.cc] + self.cflags + self.opt + list(extra) + ["-c", "-o", obj, src]
        p = subprocess.run(argv, cwd=self.tree, capture_output=True, text=True)
        return p.returncode == 0, p.stderr

    def build_all(self, jobs):
        work = []
        for s in self.srcs:
            o = os.path.join(self.out, "obj", os.path.splitext(self.rel(s))[0] + ".o")
            self.objs[self.rel(s)] = o
            work.append((s, o, ()))
        for t in self.tests:
            work.append((os.path.join(self.tree, "test", "unit", t + ".c"),
                         os.path.join(self.out, "tobj", t + ".o"), ("-Itest/unit",)))
        with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
            for (s, _o, _e), (ok, err) in zip(work, ex.map(lambda w: self.compile(*w), work)):
                if not ok:
                    raise SystemExit("mutation-score: %s does not compile unmutated:\n%s"
                                     % (self.rel(s), err))

    def link(self, out, first, replace=None):
        objs = [o for s, o in sorted(self.objs.items()) if s != "src/cli/main.c"]
        if replace:
            objs = [replace[1] if o == self.objs[replace[0]] else o for o in objs]
        argv = [self.cc] + self.ldflags + ["-o", out, first] + objs + self.ldlibs
        p = subprocess.run(argv, cwd=self.tree, capture_output=True, text=True)
        if p.returncode != 0 and replace:
            return False  # the mutant does not link (a definition it removed): not built
        if p.returncode != 0:
            raise SystemExit("mutation-score: link of %s failed:\n%s" % (out, p.stderr[-2000:]))
        return True

    def test_bin(self, t, replace=None):
        out = os.path.join(self.out, "bin" if replace is None else "mbin", t)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        return out if self.link(out, os.path.join(self.out, "tobj", t + ".o"), replace) else None

    def server_bin(self, replace=None):
        out = os.path.join(self.out, "bin" if replace is None else "mbin", "distenv-webhook")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        return out if self.link(out, self.objs["src/cli/main.c"], replace) else None


def symbols(path, defined):
    argv = ["nm", "-g", "--defined-only" if defined else "--undefined-only", path]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return {ln.split()[-1] for ln in out.splitlines() if ln.strip()}


def reach_map(b):
    """{source: ([tests naming its public symbols], [tests reaching it through others])}."""
    defs = {s: symbols(o, True) for s, o in b.objs.items()}
    owner = {}
    for s, names in defs.items():
        for n in names:
            owner[n] = s
    deps = {s: {owner[n] for n in symbols(o, False) if n in owner} for s, o in b.objs.items()}
    res = {s: ([], []) for s in b.objs}
    for t in b.tests:
        with open(os.path.join(b.tree, "test", "unit", t + ".c")) as f:
            text = f.read()
        direct = {owner[n] for n in symbols(os.path.join(b.out, "tobj", t + ".o"), False)
                  if n in owner}
        seen, todo = set(direct), list(direct)
        while todo:
            for d in deps[todo.pop()]:
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        for s in seen:
            named = any(re.search(r"\b%s\b" % re.escape(n), text) for n in defs[s])
            res[s][0 if named else 1].append(t)
    return res


def test_order(f, tests, direct, indirect):
    """[(test, named)]: the module's own test (test_X for X.c; test_kind for kind_*.c,
    test_framework for fw_*.c), then those naming its public symbols, then the broad
    ones (whole reviews), then the rest that reach it."""
    base = os.path.splitext(os.path.basename(f))[0]
    own = ["test_" + base, "test_" + base.split("_")[0],
           {"kind": "test_kind", "fw": "test_framework"}.get(base.split("_")[0], "")]
    order, seen = [], set()
    for t, named in ([(t, True) for t in own if t in tests] + [(t, True) for t in direct]
                     + [(t, False) for t in BROAD if t in indirect]
                     + [(t, False) for t in sorted(indirect)]):
        if t not in seen:
            seen.add(t)
            order.append((t, named))
    return order


def run(argv, cwd, timeout, logf, env=None):
    """0 when it passed, its exit status, or 'timeout'."""
    with open(logf, "ab") as out:
        out.write(("$ %s\n" % " ".join(argv)).encode())
        out.flush()
        p = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                             start_new_session=True, env=env)
        try:
            return p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            return "timeout"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="FILE or FILE:A-B (lines A to B); default: "
                    + " ".join(DEFAULT_FILES))
    ap.add_argument("--sample", type=int, default=0, help="N counted mutants per file (0: all)")
    ap.add_argument("--seed", default="distenv")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 on a survivor not listed as equivalent in docs/mutants.md")
    ap.add_argument("--no-integration", action="store_true",
                    help="do not run the integration tier for unit survivors")
    ap.add_argument("--no-sanitizers", action="store_true",
                    help="do not run the unit tests under ASan/UBSan for unit survivors")
    ap.add_argument("--timeout", type=float, default=60,
                    help="seconds a unit test may run past 4x its unmutated time")
    ap.add_argument("--integration-timeout", type=float, default=600)
    ap.add_argument("--only", choices=("boundary",),
                    help="boundary: only the mutants that move one comparison across its "
                         "edge (< for <=, > for >= and back): every comparison tried at its "
                         "edge")
    ap.add_argument("--time-limit", type=float, default=0, help="seconds (0: none)")
    ap.add_argument("--jobs", type=int, default=2, help="parallel compiles of the baseline")
    ap.add_argument("--json", help="write every mutant's outcome here")
    ap.add_argument("--keep", action="store_true", help="keep the scratch copy")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--cflags", default="", help="compiler flags and include path (make's)")
    ap.add_argument("--ldflags", default="")
    ap.add_argument("--ldlibs", default="")
    a = ap.parse_args()

    py = mutator_python()
    if py is None:
        log("mutation-score: universalmutator is not installed: run scripts/deps-mutation.sh")
        return 2
    eqs, errors = parse_equivalents(DOC)
    if errors:
        for e in errors:
            log("mutation-score: " + e)
        return 2

    def listed_as(f, o, m, prev, nxt):
        """The entry naming this mutant: after/before, when given, are the lines
        before and after it (stripped), for a text that names lines the reason does
        not hold for."""
        for e in eqs:
            if ((e["file"], e["from"], e["to"]) == (f, o, m)
                    and e.get("after", prev) == prev and e.get("before", nxt) == nxt):
                return id(e)
        return None

    targets, ranges = [], {}
    for spec in a.files or DEFAULT_FILES:
        f, _, rng = spec.partition(":")
        for p in sorted(glob.glob(os.path.join(ROOT, f))) or [os.path.join(ROOT, f)]:
            if not os.path.isfile(p):
                log("mutation-score: no file %s" % f)
                return 2
            r = os.path.relpath(p, ROOT)
            targets.append(r)
            if rng:
                lo, _, hi = rng.partition("-")
                ranges[r] = (int(lo), int(hi or lo))
    t0 = time.monotonic()
    muts = generate(py, targets)
    used_eq = set()

    work = tempfile.mkdtemp(prefix="distenv-mscore-")
    tree = os.path.join(work, "tree")
    logs = os.path.join(work, "logs")
    os.makedirs(logs)
    survivors_unlisted, results = [], []
    stopped = False
    stop_asked = False

    def ask_stop(signum, _frame):
        """SIGTERM or SIGINT: the mutant under test finishes, none starts after it, and the
        figures are printed as at the time limit (the rest counted as not run)."""
        nonlocal stop_asked
        stop_asked = True
        log("mutation-score: signal %d: stopping after this mutant" % signum)

    signal.signal(signal.SIGTERM, ask_stop)
    signal.signal(signal.SIGINT, ask_stop)
    try:
        scratch_copy(tree)
        b = Build(tree, a.cc, shlex.split(a.cflags), shlex.split(a.ldflags),
                  shlex.split(a.ldlibs))
        b.build_all(a.jobs)
        reach = reach_map(b)
        base_obj = {}
        tmp = os.path.join(work, "tmp")
        os.makedirs(tmp)
        env = dict(os.environ, TMPDIR=tmp)
        env.pop("GOLDEN_UPDATE", None)

        def baseline(t, cap=None, bb=b):
            """Its unmutated time in build bb; with cap, only whether it is over cap (inf)."""
            if t not in bb.base_time or (cap is None and bb.base_time[t] == float("inf")):
                exe = bb.test_bin(t)
                s = time.monotonic()
                blog = os.path.join(logs, "baseline-%s%s.log" % (t, "" if bb is b else "-san"))
                rc = run([exe], tree, cap or 900, blog, env)
                if rc == "timeout" and cap:
                    bb.base_time[t] = float("inf")
                    return bb.base_time[t]
                if rc != 0:
                    raise SystemExit("mutation-score: %s%s fails unmutated (%s); log %s"
                                     % (t, "" if bb is b else " (ASan/UBSan)", rc, blog))
                bb.base_time[t] = time.monotonic() - s
            return bb.base_time[t]

        san = []

        def san_build():
            """The sanitizer build (make check's flags), made the first time a mutant
            lives through the plain unit tests."""
            if not san:
                log("mutation-score: building the ASan/UBSan objects (once)")
                sb = Build(tree, a.cc, shlex.split(a.cflags), shlex.split(a.ldflags)
                           + SAN_LDFLAGS, shlex.split(a.ldlibs), SAN_OPT, "build-mscore-san")
                sb.build_all(a.jobs)
                san.append(sb)
            return san[0]

        def unit_tier(bb, f, mobj, order, logf):
            """The first of order's tests that fails with the mutant (in build bb), as
            'test_X (exit N)'; None when all pass; False when the mutant does not link."""
            for t, named in order:
                # a slow test (test_config's deep-nesting case) only for the files
                # it names: run for every file it reaches it would cost minutes each
                if not named and baseline(t, SLOW) > SLOW:
                    continue
                baseline(t, None, bb)
                exe = bb.test_bin(t, (f, mobj))
                if exe is None:
                    return False
                rc = run([exe], tree, 4 * bb.base_time[t] + a.timeout, logf, env)
                if rc != 0:
                    return "%s%s (%s)" % (t, "" if bb is b else " under ASan/UBSan",
                                          "timeout" if rc == "timeout" else "exit %s" % rc)
            return None

        integ_ok = [None]

        def integration(exe, logf):
            return run([sys.executable, "test/integration/run.py", "--binary", exe], tree,
                       a.integration_timeout, logf, env)

        totals, files = {}, []
        for f in targets:
            src_path = os.path.join(tree, f)
            with open(src_path) as fh:
                orig_text = fh.read()
            with open(b.objs[f], "rb") as fh:
                base_obj[f] = fh.read()
            occ, ms = {}, []
            for ln, o, m in muts[f]:
                if f in ranges and not ranges[f][0] <= ln <= ranges[f][1]:
                    continue
                if a.only == "boundary" and not is_boundary(o, m):
                    continue
                k = (o.strip(), m.strip())
                occ[k] = occ.get(k, 0) + 1
                ms.append((key(a.seed, f, o, m, occ[k]), ln, o, m))
            if a.sample:
                ms.sort()
            else:
                ms.sort(key=lambda x: x[1])
            totals[f] = dict(generated=len(ms), killed=0, survived=0, equivalent=0,
                             invalid=0, same=0, notrun=0)
            files.append(dict(f=f, src=src_path, text=orig_text, ms=ms, pos=0,
                              lines=orig_text.splitlines(keepends=True),
                              order=test_order(f, b.tests, *reach[f]),
                              mobj=os.path.join(b.out, "mobj", f.replace("/", "_") + ".o")))

        def counted(c):
            return c["killed"] + c["survived"] + c["equivalent"]

        def run_mutant(st, ln, o, m):
            """Builds and runs one mutant of st's file; True when it counts (it compiled
            and changed the object code)."""
            f, c, lines, order, mobj = st["f"], totals[st["f"]], st["lines"], st["order"], st["mobj"]
            mut_lines = list(lines)
            mut_lines[ln - 1] = m

            def compile_mutant(bb, obj):
                """The mutated file compiled in build bb into obj, the file put back."""
                with open(st["src"], "w") as fh:
                    fh.write("".join(mut_lines))
                try:
                    return bb.compile(st["src"], obj)[0]
                finally:
                    with open(st["src"], "w") as fh:
                        fh.write(st["text"])

            ok = compile_mutant(b, mobj)
            rec = dict(file=f, line=ln, orig=esc(o), mutant=esc(m))
            if not ok:
                c["invalid"] += 1
                return False
            with open(mobj, "rb") as fh:
                if fh.read() == base_obj[f]:
                    c["same"] += 1
                    return False
            logf = os.path.join(logs, "%s-%d.log" % (f.replace("/", "_"), ln))
            by = unit_tier(b, f, mobj, order, logf)
            if by is False:
                c["invalid"] += 1  # it compiles alone but does not link
                return False
            listed = listed_as(f, esc(o), esc(m), esc(lines[ln - 2]) if ln >= 2 else "",
                               esc(lines[ln]) if ln < len(lines) else "")
            # a listed one is not sent on in a sample: its sanitized build (once, about
            # 100 s) would eat the sample's time; the full form sends it, and says which
            # listed entries were killed
            if by is None and not a.no_sanitizers and not (a.sample and listed):
                # what the plain build cannot see (a read one past an array, into
                # memory that happens to hold zeros) fails CI's sanitizer tier
                sb = san_build()
                smobj = mobj[:-2] + "-san.o"
                if not compile_mutant(sb, smobj):
                    raise SystemExit("mutation-score: %s:%d compiles, but not with the "
                                     "sanitizers" % (f, ln))
                by = unit_tier(sb, f, smobj, order, logf) or None
            # a listed equivalent the unit tests let live is not sent to the
            # integration tier: no test can tell it from the original
            if by is None and not listed and not a.no_integration:
                if integ_ok[0] is None:
                    rc = integration(b.server_bin(), os.path.join(logs, "baseline-it.log"))
                    if rc != 0:
                        raise SystemExit("mutation-score: the integration tier fails "
                                         "unmutated (%s)" % rc)
                    integ_ok[0] = True
                exe = b.server_bin((f, mobj))
                if exe is None:
                    c["invalid"] += 1
                    return False
                rc = integration(exe, logf)
                if rc != 0:
                    by = "integration (%s)" % ("timeout" if rc == "timeout"
                                               else "exit %s" % rc)
            rec["killed_by"] = by
            results.append(rec)
            if by:
                c["killed"] += 1
                return True
            if listed:
                used_eq.add(listed)
                c["equivalent"] += 1
                rec["equivalent"] = True
                return True
            c["survived"] += 1
            survivors_unlisted.append(rec)
            log("SURVIVED %s:%d: `%s` -> `%s` (ran %s%s%s)"
                % (f, ln, esc(o), esc(m),
                   ", ".join(t for t, n in order if n or b.base_time.get(t, 0) <= SLOW)
                   or "no unit test",
                   "" if a.no_sanitizers else ", the same under ASan/UBSan",
                   "" if a.no_integration else ", integration"))
            return True

        def summary(f):
            c = totals[f]
            n = c["killed"] + c["survived"]
            log("mutation-score: %-34s %4d killed %3d survived %3d equivalent: %s"
                "  (%d generated, %d do not compile, %d same code%s)"
                % (f, c["killed"], c["survived"], c["equivalent"],
                   "%5.1f%%" % (100.0 * c["killed"] / n) if n else "    -",
                   c["generated"], c["invalid"], c["same"],
                   ", %d not run" % c["notrun"] if c["notrun"] else ""))

        def out_of_time():
            return stop_asked or (a.time_limit and time.monotonic() - t0 > a.time_limit)

        if a.sample:
            # Round by round: each file's next counted mutant in turn, so that a time
            # limit cuts every file's sample alike instead of leaving the last files out.
            active = list(files)
            while active and not stopped:
                for st in list(active):
                    c = totals[st["f"]]
                    while counted(c) < a.sample and st["pos"] < len(st["ms"]):
                        if out_of_time():
                            stopped = True
                            break
                        _h, ln, o, m = st["ms"][st["pos"]]
                        st["pos"] += 1
                        if run_mutant(st, ln, o, m):
                            break
                    if stopped:
                        break
                    if counted(c) >= a.sample or st["pos"] >= len(st["ms"]):
                        active.remove(st)
            for st in active:  # the sample's mutants not run, not the whole file's
                c = totals[st["f"]]
                c["notrun"] = a.sample - counted(c)
            for f in targets:
                summary(f)
        else:
            for st in files:
                for _h, ln, o, m in st["ms"]:
                    if out_of_time():
                        stopped = True
                        totals[st["f"]]["notrun"] += 1
                        continue
                    run_mutant(st, ln, o, m)
                summary(st["f"])
    finally:
        if a.keep or survivors_unlisted:
            log("mutation-score: scratch copy and logs kept in %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    if not a.sample and not ranges and not stopped:
        for e in eqs:
            if e["file"] in totals and id(e) not in used_eq:
                log("mutation-score: note: the equivalent %s `%s` -> `%s` of docs/mutants.md "
                    "was not met (killed, or its line is gone)" % (e["file"], e["from"], e["to"]))
    k = sum(c["killed"] for c in totals.values())
    s = sum(c["survived"] for c in totals.values())
    e = sum(c["equivalent"] for c in totals.values())
    log("mutation-score: %d killed, %d survived, %d listed as equivalent: %s over %d files "
        "in %.0f s%s" % (k, s, e, "%.1f%%" % (100.0 * k / (k + s)) if k + s else "-",
                         len(totals), time.monotonic() - t0,
                         ("; stopped by a signal" if stop_asked else "; stopped at the time limit")
                         if stopped else ""))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(dict(totals=totals, mutants=results), fh, indent=1)
    if a.check and survivors_unlisted:
        log("mutation-score: FAIL %d survivors neither killed nor listed as equivalent in "
            "docs/mutants.md" % len(survivors_unlisted))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
