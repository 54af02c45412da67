#!/usr/bin/env python3
"""HTTPS integration tier for distenv-webhook.

Starts the built binary on loopback with certificates from `distenv-webhook
certs`, speaks real HTTPS (TLS 1.2/1.3, SNI distenv.distenv-system.svc) to it and
checks: the golden fixtures in test/data/, admission cases whose patches are
applied with the independent `jsonpatch` library, the README's bad-input table,
TLS versions, keep-alive, metrics, a certificate swap under load, and a SIGTERM
drain with a request in flight. With --valgrind the server runs under valgrind
and must exit 0 with no errors.

Prints one line per case and ends with `integration: N passed, N failed`.
Every wait is bounded; the server and temporary files are removed on exit.
"""

import os
import re
import sys


def _ensure_jsonpatch():
    try:
        import jsonpatch  # noqa: F401
        return
    except ImportError:
        pass
    # `python3` may be a pyenv interpreter without the distro's modules.
    system = "/usr/bin/python3"
    if (os.environ.get("DISTENV_IT_REEXEC") != "1" and os.path.exists(system)
            and os.path.realpath(sys.executable) != os.path.realpath(system)):
        os.environ["DISTENV_IT_REEXEC"] = "1"
        os.execv(system, [system] + sys.argv)
    sys.stderr.write("integration: the Python module jsonpatch is missing "
                     "(apt-get install python3-jsonpatch, or pip install jsonpatch)\n")
    sys.exit(2)


_ensure_jsonpatch()

import argparse  # noqa: E402
import base64  # noqa: E402
import copy  # noqa: E402
import difflib  # noqa: E402
import glob  # noqa: E402
import hashlib  # noqa: E402
import http.client  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import shlex  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import ssl  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402

import jsonpatch  # noqa: E402
import yaml  # noqa: E402

SNI = "distenv.distenv-system.svc"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "test", "lib"))
import equivalence  # noqa: E402
import controllers  # noqa: E402  (test/data/gen, on the path equivalence sets)
import httpwire  # noqa: E402
import tlsflights  # noqa: E402
DATA = os.path.join(REPO, "test", "data")
MAX_BODY = 7 * 1024 * 1024

# Scaled up under valgrind (set in main).
SLOW = 1.0

results = {"passed": 0, "failed": 0, "skipped": 0, "chosen": 0}
# -k SUBSTR: only the cases whose name holds SUBSTR, with the set-up cases (SETUP) and the
# earlier cases a selected one reads the effects of (DEPS: name part -> name parts).
FILTER = None
SETUP = ("certs: ", "start: ", "look-ups: serve --kubeconfig", "equivalence: two servers")
DEPS = {"metrics: counters": ("patch: ", "denied: ", "HTTP 400", "HTTP 404", "HTTP 413"),
        "secrets are never logged": ("(look-up)", "look-ups: SIGTERM")}
# --answers FILE: every /mutate and /validate answer's denial and warnings, with the case
# (its method's name) that got it over HTTPS, one JSON line each, for scripts/rules-check.py.
ANSWERS = None
CASE = None
# Called after a failed case: starts the shared server again when the case left it dead,
# so that one failure does not fail every case after it.
AFTER_FAILURE = []


def log(msg):
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


class CaseFailed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise CaseFailed(what)


def selected(name):
    if FILTER is None or FILTER in name or name.startswith(SETUP):
        return True
    return any(FILTER in k and any(d in name for d in deps) for k, deps in DEPS.items())


def run_case(name, fn, *args):
    if not selected(name):
        results["skipped"] += 1
        return True
    if FILTER is not None and FILTER in name:
        results["chosen"] += 1
    global CASE
    CASE = getattr(fn, "__name__", None)
    try:
        fn(*args)
    except CaseFailed as e:
        results["failed"] += 1
        log("FAIL %s: %s" % (name, e))
        for f in AFTER_FAILURE:
            f()
        return False
    except Exception as e:  # a crash in the test or a dropped connection
        results["failed"] += 1
        log("FAIL %s: %s: %s" % (name, type(e).__name__, e))
        traceback.print_exc(file=sys.stdout)
        for f in AFTER_FAILURE:
            f()
        return False
    results["passed"] += 1
    log("ok   %s" % name)
    return True


def wait_until(pred, timeout, step=0.05, what="condition"):
    """Polls pred() until it is true; at most `timeout` seconds (scaled)."""
    end = time.monotonic() + timeout * SLOW
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() >= end:
            raise CaseFailed("timed out after %.0fs waiting for %s" % (timeout * SLOW, what))
        time.sleep(step)


# ---------------------------------------------------------------- TLS + HTTP


def tls_context(cafiles, min_version=None, max_version=None, legacy=False):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = True
    ctx.verify_mode = ssl.CERT_REQUIRED
    for ca in cafiles:
        ctx.load_verify_locations(cafile=ca)
    if legacy:
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        # Let the client itself offer TLS 1.0/1.1, so a refusal is the server's.
        ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
    if min_version is not None:
        ctx.minimum_version = min_version
    if max_version is not None:
        ctx.maximum_version = max_version
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx


def tls_socket(port, ctx, timeout=10.0, host="127.0.0.1"):
    raw = socket.create_connection((host, port), timeout=timeout * SLOW)
    try:
        return ctx.wrap_socket(raw, server_hostname=SNI)
    except Exception:
        raw.close()
        raise


class Conn(http.client.HTTPSConnection):
    """An HTTPS connection to 127.0.0.1 that verifies the name the API server uses."""

    def __init__(self, port, ctx, timeout=10.0, host="127.0.0.1"):
        super().__init__(host, port, timeout=timeout * SLOW, context=ctx)
        self._ctx = ctx
        self.connects = 0
        self.peer_der = None

    def connect(self):
        self.sock = tls_socket(self.port, self._ctx, self.timeout / SLOW, host=self.host)
        self.peer_der = self.sock.getpeercert(binary_form=True)
        self.connects += 1

    def call(self, method, path, body=None, headers=None):
        h = {"Content-Type": "application/json"} if body is not None else {}
        h.update(headers or {})
        self.request(method, path, body=body, headers=h)
        resp = self.getresponse()
        data = resp.read()
        if ANSWERS is not None and method == "POST" and path in ("/mutate", "/validate"):
            record_answer(path, resp.status, data)
        return resp.status, resp, data


def record_answer(path, status, data):
    """Writes the answer's denial (or HTTP error), warnings and the lines of the
    distenv.dev/warnings annotation its patch writes to ANSWERS, with the case that got
    them."""
    try:
        body = json.loads(data)
        r = body["response"] if status == 200 else {"allowed": False,
                                                    "status": {"message": body["error"]}}
    except (ValueError, KeyError, TypeError):
        return
    texts = [("warning", w) for w in r.get("warnings") or []]
    try:
        ops = json.loads(base64.b64decode(r.get("patch") or "W10="))
    except ValueError:
        ops = []
    for op in ops if isinstance(ops, list) else []:
        if isinstance(op, dict) and op.get("path") == "/metadata/annotations/distenv.dev~1warnings":
            texts.append(("annotation", str(op.get("value"))))
        elif isinstance(op, dict) and op.get("path") == "/metadata/annotations" and \
                isinstance(op.get("value"), dict) and "distenv.dev/warnings" in op["value"]:
            texts.append(("annotation", str(op["value"]["distenv.dev/warnings"])))
    msg = (r.get("status") or {}).get("message")
    if r.get("allowed") is False and msg:
        texts.append(("denial", msg))
    for what, text in texts:
        ANSWERS.write(json.dumps({"case": CASE, "path": path, "what": what, "text": text}) + "\n")


# a cluster domain as long as a DNS name can be (253 characters, labels of 63)
LONG_DOMAIN = ".".join(["d" * 63] * 3 + ["d" * 61])

# What a host outside a cluster has: no svc.<domain> in the search list. Every server
# reads this (or the case's own) through serve's test hook, never the machine's
# /etc/resolv.conf, which inside a CI pod would name that cluster's domain.
HOST_RESOLV = "nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch example.internal\n"


class Server:
    def __init__(self, binary, workdir, cert, key, valgrind, extra=None, config=None,
                 listen=None, resolv=HOST_RESOLV, exact=False):
        self.port = free_port()
        self.log_path = os.path.join(workdir, "server-%d.log" % self.port)
        self.vg_path = os.path.join(workdir, "valgrind-%d.log" % self.port)
        listen = (listen or "127.0.0.1:%d") % self.port
        cmd = [binary, "serve", "--listen", listen,
               "--tls-cert", cert, "--tls-key", key, "--log-level", "debug"] + (extra or [])
        # The goldens name the wait-for-master image the test configs give (not the
        # version-stamped default), so a VERSION bump does not change them.
        # config False: no --config at all (the binary's own defaults); exact: config as given
        if config is not False and not exact:
            config = "waitInit:\n  image: %s\n" % GOLDEN_WAIT_IMAGE + (config or "")
        if config is not False:
            path = os.path.join(workdir, "config-%d.yaml" % self.port)
            with open(path, "w") as f:
                f.write(config)
            cmd += ["--config", path]
        if valgrind:
            cmd = ["valgrind", "--error-exitcode=99", "--leak-check=full",
                   "--log-file=" + self.vg_path] + cmd
        self.cmd = cmd
        self.resolv_path = os.path.join(workdir, "resolv-%d.conf" % self.port)
        with open(self.resolv_path, "w") as f:
            f.write(resolv)
        self.logf = open(self.log_path, "wb")
        self.started = time.time()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.logf,
                                     stderr=self.logf, cwd=workdir,
                                     env=dict(os.environ, DISTENV_RESOLV_CONF=self.resolv_path))

    def wait_ready(self, ctx, host="127.0.0.1"):
        def healthy():
            check(self.proc.poll() is None,
                  "server exited with %s: %s" % (self.proc.returncode, self.log_tail()))
            try:
                c = Conn(self.port, ctx, timeout=5, host=host)
                st, _, _ = c.call("GET", "/healthz")
                c.close()
                return st == 200
            except (OSError, ssl.SSLError, http.client.HTTPException):
                return False
        wait_until(healthy, 15, step=0.1, what="GET /healthz")

    def alive(self):
        return self.proc.poll() is None

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout * SLOW)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)
            raise CaseFailed("server did not exit within %.0fs of %s"
                             % (timeout * SLOW, signal.Signals(sig).name))
        finally:
            self.logf.close()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        if not self.logf.closed:
            self.logf.close()

    def log_lines(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace").splitlines()

    def log_tail(self, n=15):
        try:
            return "\n".join(self.log_lines()[-n:])
        except OSError:
            return ""

    def events(self):
        out = []
        for line in self.log_lines():
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
        return out


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def raw_http(sock, head, body_parts=(), read=True):
    """Sends a request head and body parts on a TLS socket; returns (status, headers, body)."""
    sock.sendall(head.encode("ascii"))
    for part in body_parts:
        sock.sendall(part)
    if not read:
        return None
    return read_response(sock)


def read_response(sock):
    return httpwire.read_response(sock, error=CaseFailed, partial_ok=True)


# ---------------------------------------------------------------- reviews


def review(obj, uid, namespace="default", operation="CREATE", kind="Pod"):
    group, version = ("", "v1")
    resource = {"Pod": "pods", "ConfigMap": "configmaps"}.get(kind, kind.lower() + "s")
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": group, "version": version, "kind": kind},
            "resource": {"group": group, "version": version, "resource": resource},
            "namespace": namespace,
            "operation": operation,
            "userInfo": {"username": "system:serviceaccount:kube-system:test"},
            "object": obj,
            "oldObject": None,
            "dryRun": False,
        },
    }


def container(name, env=None, gpus=None, gpu_resource="nvidia.com/gpu"):
    c = {"name": name, "image": "train:1.0", "resources": {},
         "terminationMessagePath": "/dev/termination-log",
         "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}
    if gpus is not None:
        c["resources"] = {"limits": {gpu_resource: str(gpus)}}
    if env is not None:
        c["env"] = env
    return c


def sts_pod(sts, ordinal, ns="ml", subdomain=None, annotations=None, containers=None,
            init_containers=None, index_label=True):
    name = "%s-%d" % (sts, ordinal)
    labels = {"app": sts, "distenv.dev/inject": "true",
              "statefulset.kubernetes.io/pod-name": name}
    if index_label:
        labels["apps.kubernetes.io/pod-index"] = str(ordinal)
    pod = {
        "metadata": {
            "name": name, "generateName": sts + "-", "namespace": ns, "labels": labels,
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": sts,
                                 "uid": "0000-sts", "controller": True,
                                 "blockOwnerDeletion": True}],
        },
        "spec": {"containers": containers or [container("main")], "hostname": name,
                 "subdomain": subdomain or sts, "restartPolicy": "Always"},
    }
    if annotations:
        pod["metadata"]["annotations"] = annotations
    if init_containers:
        pod["spec"]["initContainers"] = init_containers
    return pod


def job_pod(job, index, annotations=None, containers=None, init_containers=None,
            subdomain=None, index_annotation=True):
    ann = dict(annotations or {})
    if index_annotation:
        ann["batch.kubernetes.io/job-completion-index"] = str(index)
    pod = {
        "metadata": {
            "generateName": "%s-%d-" % (job, index),
            "labels": {"distenv.dev/inject": "true", "job-name": job,
                       "batch.kubernetes.io/job-name": job},
            "annotations": ann,
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": job,
                                 "uid": "0000-job", "controller": True,
                                 "blockOwnerDeletion": True}],
        },
        "spec": {"containers": containers or [container("main")],
                 "hostname": "%s-%d" % (job, index), "restartPolicy": "Never"},
    }
    if subdomain:
        pod["spec"]["subdomain"] = subdomain
    if init_containers:
        pod["spec"]["initContainers"] = init_containers
    return pod


def sts_doc(name, replicas, anns=None, containers=None, inject="true", ns="ml", init=None):
    """A StatefulSet manifest whose pod template opts in (label value inject)."""
    tmpl = {"metadata": {"labels": {"app": name, "distenv.dev/inject": inject},
                         "annotations": dict(anns or {})},
            "spec": {"containers": containers or [{"name": "train", "image": "train:1.0"}]}}
    if init:
        tmpl["spec"]["initContainers"] = init
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"replicas": replicas, "serviceName": name, "podManagementPolicy": "Parallel",
                     "selector": {"matchLabels": {"app": name}}, "template": tmpl}}


def job_doc(name, completions, anns=None, ns="ml", subdomain=None, parallelism=None,
            indexed=True, template_extra=None):
    """An Indexed Job manifest whose pod template opts in."""
    tspec = {"restartPolicy": "Never", "containers": [{"name": "train", "image": "train:1.0"}]}
    if subdomain:
        tspec["subdomain"] = subdomain
    tspec.update(template_extra or {})
    spec = {"completions": completions,
            "parallelism": completions if parallelism is None else parallelism,
            "template": {"metadata": {"labels": {"distenv.dev/inject": "true"},
                                      "annotations": dict(anns or {})}, "spec": tspec}}
    if indexed:
        spec["completionMode"] = "Indexed"
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": ns},
            "spec": spec}


def made(doc):
    """(the object the API server stores, the pods its controller makes), as
    test/data/gen/controllers.py's workload_pods builds them."""
    obj, _, pods = controllers.workload_pods(copy.deepcopy(doc))
    return obj, pods


def expected_env(addr_host0, hosts, port, rank, world, nproc, frameworks, namespace=None,
                 workload=None, elastic=None, max_restarts=None, one_process=False):
    """docs/environment.md's tables ("What a pod gets"), computed independently: list of (name, value).
    one_process: the pod says it runs one process (nproc-per-node 1, or a GPU
    limit of exactly 1), so it gets LOCAL_RANK=0 and LOCAL_WORLD_SIZE=1."""
    a = addr_host0
    out = []
    if "pytorch" in frameworks:
        out += [("MASTER_ADDR", a), ("MASTER_PORT", str(port)), ("RANK", str(rank)),
                ("WORLD_SIZE", str(world))]
        if not elastic:
            out += [("NODE_RANK", str(rank)), ("NNODES", str(world))]
        out += [("PET_MASTER_ADDR", a), ("PET_MASTER_PORT", str(port)),
                ("PET_NNODES", elastic if elastic else str(world)),
                ("PET_NODE_RANK", str(rank)), ("PET_NPROC_PER_NODE", str(nproc))]
        if one_process and not elastic:
            out += [("LOCAL_RANK", "0"), ("LOCAL_WORLD_SIZE", "1")]
        if elastic:
            out += [("PET_RDZV_BACKEND", "c10d"), ("PET_RDZV_ENDPOINT", "%s:%d" % (a, port)),
                    ("PET_RDZV_ID", "%s-%s" % (namespace, workload)),
                    # the endpoint's own pod (rank 0) hosts the c10d store
                    ("PET_RDZV_CONF", "is_host=%d" % (rank == 0))]
            if max_restarts is not None:
                out.append(("PET_MAX_RESTARTS", str(max_restarts)))
    if "tensorflow" in frameworks:
        out.append(("TF_CONFIG", {"cluster": {"worker": ["%s:%d" % (h, port) for h in hosts]},
                                  "task": {"type": "worker", "index": rank}}))
    if "jax" in frameworks:
        out += [("JAX_COORDINATOR_ADDRESS", "%s:%d" % (a, port)),
                ("JAX_NUM_PROCESSES", str(world)), ("JAX_PROCESS_ID", str(rank))]
    if "xgboost" in frameworks:
        out += [("DMLC_TRACKER_URI", a), ("DMLC_TRACKER_PORT", str(port)),
                ("DMLC_TASK_ID", str(rank)), ("DMLC_NUM_WORKER", str(world))]
    if "paddle" in frameworks:
        # Paddle's launcher starts its store only where the master host is
        # 127.0.0.1 or its own IP (launch/controllers/master.py): rank 0 says 127.0.0.1.
        out += [("PADDLE_MASTER", "127.0.0.1:%d" % port if rank == 0 else "%s:%d" % (a, port)),
                ("PADDLE_NNODES", str(world)), ("PADDLE_RANK", str(rank)),
                ("PADDLE_JOB_ID", "%s-%s" % (namespace, workload))]
    return out


def check_env(env, expected, user_env, where):
    """Injected entries first (all expected names the user did not define), user entries after."""
    user_env = user_env or []
    user_names = {e["name"] for e in user_env}
    want = [(n, v) for (n, v) in expected if n not in user_names]
    check(isinstance(env, list), "%s: env is not a list: %r" % (where, env))
    names = [e.get("name") for e in env]
    check(len(names) == len(set(names)), "%s: duplicate env names %r" % (where, names))
    check(len(env) == len(want) + len(user_env),
          "%s: %d env entries, want %d injected + %d user: %r"
          % (where, len(env), len(want), len(user_env), names))
    injected, tail = env[:len(want)], env[len(want):]
    check(tail == user_env, "%s: user entries changed or moved: %r" % (where, tail))
    got = {}
    for e in injected:
        check(set(e.keys()) == {"name", "value"}, "%s: injected entry %r" % (where, e))
        got[e["name"]] = e["value"]
    check(set(got) == {n for n, _ in want},
          "%s: injected names %r, want %r" % (where, sorted(got), sorted(n for n, _ in want)))
    for n, v in want:
        if isinstance(v, dict):
            try:
                parsed = json.loads(got[n])
            except ValueError:
                raise CaseFailed("%s: %s is not JSON: %r" % (where, n, got[n]))
            check(parsed == v, "%s: %s = %r, want %r" % (where, n, parsed, v))
        else:
            check(got[n] == v, "%s: %s = %r, want %r" % (where, n, got[n], v))


# ---------------------------------------------------------------- the suite


class Suite:
    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.uid_n = 0
        self.server = None
        # a LookupSuite whose server answers validate_workload (None: this suite's server)
        self.validate_via = None
        self.ca = None
        self.ctx = None

    def uid(self):
        self.uid_n += 1
        return "it-%08d-0000-4000-8000-%012d" % (os.getpid() % 10 ** 8, self.uid_n)

    def gen_certs(self, name):
        out = os.path.join(self.work, name)
        p = subprocess.run([self.args.binary, "certs", "--service", "distenv", "--namespace",
                            "distenv-system", "--out", out], capture_output=True, text=True,
                           timeout=60)
        check(p.returncode == 0, "certs exited %d: %s" % (p.returncode, p.stderr.strip()))
        # what it says names each file where it is
        want = "wrote %s/ca.crt, %s/tls.crt and %s/tls.key\n" % (out, out, out)
        check(p.stdout == want, "certs said %r, want %r" % (p.stdout, want))
        for f in ("ca.crt", "tls.crt", "tls.key"):
            check(os.path.exists(os.path.join(out, f)), "certs did not write %s" % f)
        mode = os.stat(os.path.join(out, "tls.key")).st_mode & 0o777
        check(mode == 0o600, "tls.key mode %o, want 600" % mode)
        return out

    # -- plumbing
    def post(self, body, conn=None, raw=False, path="/mutate"):
        c = conn or Conn(self.server.port, self.ctx)
        data = body if isinstance(body, (bytes, str)) else json.dumps(body)
        st, resp, out = c.call("POST", path, body=data)
        if conn is None:
            c.close()
        return st, resp, out

    def validate_workload(self, obj, ns="ml"):
        """POSTs obj (a StatefulSet, Job, JobSet or LeaderWorkerSet) to /validate as the API
        server sends its CREATE; checks HTTP 200 and returns the AdmissionReview response."""
        group, _, version = obj["apiVersion"].rpartition("/")
        req = review(obj, self.uid(), namespace=ns)
        req["request"]["kind"] = {"group": group, "version": version, "kind": obj["kind"]}
        req["request"]["resource"] = {"group": group, "version": version,
                                      "resource": obj["kind"].lower() + "s"}
        if self.validate_via is None:
            st, _, out = self.post(req, path="/validate")
        else:  # the look-up server's, in a namespace without NetworkPolicies
            st, out = self.validate_via.validate_with(req, [])
        check(st == 200, "validate %s: HTTP %d" % (obj["kind"], st))
        return json.loads(out)["response"]

    def admit(self, obj, ns="default", **kw):
        uid = self.uid()
        st, resp, out = self.post(review(obj, uid, namespace=ns, **kw))
        check(st == 200, "HTTP %d: %r" % (st, out[:300]))
        check(resp.getheader("Content-Type", "").startswith("application/json"),
              "Content-Type %r" % resp.getheader("Content-Type"))
        r = json.loads(out)
        check(r.get("apiVersion") == "admission.k8s.io/v1" and r.get("kind") == "AdmissionReview",
              "envelope %r" % {k: r.get(k) for k in ("apiVersion", "kind")})
        check(r["response"].get("uid") == uid, "uid not echoed: %r" % r["response"].get("uid"))
        return r["response"]

    def admit_and_apply(self, obj, ns="default"):
        resp = self.admit(obj, ns=ns)
        check(resp.get("allowed") is True, "not allowed: %r" % resp.get("status"))
        check(resp.get("patchType") == "JSONPatch", "patchType %r" % resp.get("patchType"))
        ops = json.loads(base64.b64decode(resp["patch"], validate=True))
        patched = jsonpatch.JsonPatch(ops).apply(copy.deepcopy(obj))
        # Idempotent: the mutated pod, sent again, gets nothing more.
        again = self.admit(patched, ns=ns)
        check(again.get("allowed") is True, "re-sent pod not allowed: %r" % again)
        if "patch" in again:
            ops2 = json.loads(base64.b64decode(again["patch"]))
            check(jsonpatch.JsonPatch(ops2).apply(copy.deepcopy(patched)) == patched,
                  "re-sent pod was changed again: %r" % ops2)
        check("distenv.dev/injected" in patched["metadata"].get("annotations", {}),
              "annotation distenv.dev/injected missing")
        return patched, ops

    def denied(self, obj, ns="default", contains=()):
        resp = self.admit(obj, ns=ns)
        check(resp.get("allowed") is False, "allowed, want denied: %r" % resp)
        check("patch" not in resp, "denial carries a patch")
        msg = (resp.get("status") or {}).get("message", "")
        check(msg.startswith("distenv:"), "message %r does not start with distenv:" % msg)
        for c in contains:
            check(c in msg, "message %r does not mention %r" % (msg, c))
        return msg

    def skipped(self, obj, ns="default", **kw):
        resp = self.admit(obj, ns=ns, **kw)
        check(resp.get("allowed") is True, "not allowed: %r" % resp)
        check("patch" not in resp and "patchType" not in resp, "unexpected patch: %r" % resp)

    # -- cases
    def case_certs(self):
        self.certs1 = self.gen_certs("certs1")

    def case_start(self):
        # Serve from a Kubernetes-Secret-like volume: files are symlinks through ..data.
        self.vol = os.path.join(self.work, "vol")
        os.makedirs(self.vol)
        self.secret_publish(self.certs1, "..v1")
        for f in ("tls.crt", "tls.key"):
            os.symlink(os.path.join("..data", f), os.path.join(self.vol, f))
        self.ca = [os.path.join(self.certs1, "ca.crt")]
        self.ctx = tls_context(self.ca)
        self.start_server()
        c = Conn(self.server.port, self.ctx)
        st, _, _ = c.call("GET", "/healthz")
        check(st == 200, "healthz %d" % st)
        check(c.peer_der == pem_to_der(os.path.join(self.certs1, "tls.crt")),
              "served certificate is not certs1/tls.crt")
        c.close()

    def start_server(self):
        # A short check interval keeps the swap case quick; the YAML key is the config's.
        self.server = Server(self.args.binary, self.work, os.path.join(self.vol, "tls.crt"),
                             os.path.join(self.vol, "tls.key"), self.args.valgrind,
                             extra=["--no-lookups"],
                             config="tls:\n  checkIntervalSeconds: 1\n")
        self.server.wait_ready(self.ctx)

    def restart_if_dead(self):
        """After a failed case: a server the case left dead is started again (its log kept)."""
        if self.server is None or self.server.alive() or self.ctx is None:
            return
        log("      the server is gone (exit %s): started again for the next cases"
            % self.server.proc.returncode)
        self.server.kill()
        try:
            self.start_server()
        except CaseFailed as e:
            log("      could not start it again: %s" % e)

    def secret_publish(self, src, tsdir):
        """Atomically points vol/..data at a new directory holding src's pair (kubelet style)."""
        d = os.path.join(self.vol, tsdir)
        os.makedirs(d)
        for f in ("tls.crt", "tls.key"):
            shutil.copy(os.path.join(src, f), os.path.join(d, f))
        tmp = os.path.join(self.vol, "..data_tmp")
        os.symlink(tsdir, tmp)
        os.rename(tmp, os.path.join(self.vol, "..data"))

    def case_selftest(self):
        """distenv-webhook selftest (the chart's helm test) against the real server."""
        url = "https://localhost:%d" % self.server.port

        def run(*args):
            return subprocess.run([self.args.binary, "selftest"] + list(args),
                                  capture_output=True, text=True, timeout=300)
        p = run("--url", url, "--ca-file", os.path.join(self.certs1, "ca.crt"), "--timeout", "2m")
        lines = p.stdout.splitlines()
        check(p.returncode == 0, "selftest exited %d: %s %s" % (p.returncode, p.stdout, p.stderr))
        check(len(lines) == 4 and all(ln.startswith("selftest: ok ") for ln in lines),
              "four ok lines: %r" % lines)
        # The Service's name, as the helm test Pod uses it, reached on loopback.
        p = run("--url", "https://distenv.distenv-system.svc:%d" % self.server.port,
                "--connect-to", "127.0.0.1", "--ca-file", os.path.join(self.certs1, "ca.crt"),
                "--timeout", "2m")
        check(p.returncode == 0 and p.stdout.count("selftest: ok ") == 4,
              "--connect-to: exit %d: %s %s" % (p.returncode, p.stdout, p.stderr))
        # Another CA: every check fails on the certificate, exit 1.
        other = self.gen_certs("certs-selftest-other")
        p = run("--url", url, "--ca-file", os.path.join(other, "ca.crt"), "--timeout", "2m")
        check(p.returncode == 1, "wrong CA: exit %d" % p.returncode)
        check(p.stdout.count("selftest: FAIL") == 4 and "certificate" in p.stdout,
              "wrong CA: %r" % p.stdout)
        # A name the certificate does not carry.
        p = run("--url", "https://127.0.0.2:%d" % self.server.port, "--ca-file",
                os.path.join(self.certs1, "ca.crt"), "--timeout", "5s")
        check(p.returncode == 1, "wrong host: exit %d: %s" % (p.returncode, p.stdout))
        for args in (["--url", "http://localhost:1"], ["--url", url + "/mutate"], [],
                     ["--url", url, "--timeout", "0s"], ["--url"], ["--bogus", "x"],
                     ["--url", url, "extra"]):
            p = run(*args)
            check(p.returncode == 2 and p.stdout == "", "%r: exit %d, stdout %r"
                  % (args, p.returncode, p.stdout))

    def case_health_routes(self):
        c = Conn(self.server.port, self.ctx)
        st, resp, out = c.call("GET", "/healthz")
        check(st == 200 and out.strip() == b"ok", "healthz %d %r" % (st, out))
        st, resp, out = c.call("GET", "/readyz")
        check(st == 200 and out.strip() == b"ok", "readyz %d %r" % (st, out))
        st, resp, out = c.call("HEAD", "/healthz")
        check(st == 200 and out == b"", "HEAD healthz %d %r" % (st, out))
        c.close()

    def case_golden(self, name):
        req = json.load(open(os.path.join(DATA, name + ".request.json")))
        want = json.load(open(os.path.join(DATA, name + ".response.json")))
        # validate-* goldens are workloads for /validate; the others pods for /mutate
        st, resp, out = self.post(req, path="/validate" if name.startswith("validate-")
                                  else "/mutate")
        check(st == 200, "HTTP %d: %r" % (st, out[:200]))
        got = json.loads(out)
        if "patch" in got.get("response", {}):
            got["response"]["patch"] = json.loads(base64.b64decode(got["response"]["patch"]))
        check(got == want, "response differs:\n got: %s\nwant: %s"
              % (json.dumps(got, sort_keys=True)[:1500], json.dumps(want, sort_keys=True)[:1500]))

    def case_sts_all_frameworks(self):
        user = [{"name": "RANK", "value": "12"},  # the pod's own: kept, not duplicated
                {"name": "URL", "value": "$(MASTER_ADDR):$(MASTER_PORT)"},
                {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]
        pod = sts_pod("gpt-neo", 12, ns="train", subdomain="gpt-neo-hl", index_label=False,
                      annotations={"distenv.dev/world-size": "16", "distenv.dev/port": "23456",
                                   "distenv.dev/frameworks": "pytorch,tensorflow,jax"},
                      containers=[container("trainer", env=user, gpus=4),
                                  container("helper", gpus=2, gpu_resource="amd.com/gpu")],
                      init_containers=[container("setup")])
        patched, _ = self.admit_and_apply(pod, ns="train")
        host = lambda r: "gpt-neo-%d.gpt-neo-hl.train.svc.cluster.local" % r  # noqa: E731
        exp = expected_env(host(0), [host(r) for r in range(16)], 23456, 12, 16, 4,
                           ("pytorch", "tensorflow", "jax"))
        cs = patched["spec"]["containers"]
        check_env(cs[0]["env"], exp, user, "trainer")
        check_env(cs[1].get("env"), exp, [], "helper (had no env)")
        check(patched["spec"]["initContainers"] == pod["spec"]["initContainers"],
              "init container changed without distenv.dev/containers")
        # Nothing but env and the annotation changed.
        strip = copy.deepcopy(patched)
        for c in strip["spec"]["containers"]:
            c.pop("env", None)
        del strip["metadata"]["annotations"]["distenv.dev/injected"]
        orig = copy.deepcopy(pod)
        for c in orig["spec"]["containers"]:
            c.pop("env", None)
        check(strip == orig, "patch changed more than env and the annotation")

    def case_launchers(self):
        """The five frameworks on every rank of a one-process world, over HTTPS;
        LOCAL_RANK by what the pod runs; a container's own LOCAL_RANK in a
        multi-process pod draws the warning."""
        fws = ("pytorch", "tensorflow", "jax", "xgboost", "paddle")
        host = lambda r: "llm-%d.llm.train.svc.cluster.local" % r  # noqa: E731
        for rank in range(4):
            pod = sts_pod("llm", rank, ns="train", subdomain="llm",
                          annotations={"distenv.dev/world-size": "4",
                                       "distenv.dev/nproc-per-node": "1",
                                       "distenv.dev/frameworks": ",".join(fws)},
                          containers=[container("trainer")])
            patched, _ = self.admit_and_apply(pod, ns="train")
            exp = expected_env(host(0), [host(r) for r in range(4)], 29500, rank, 4, 1, fws,
                               namespace="train", workload="llm", one_process=True)
            check_env(patched["spec"]["containers"][0]["env"], exp, [], "rank %d" % rank)
        for gpus, one in [(1, True), (8, False), (None, False)]:
            pod = sts_pod("llm", 1, ns="train", subdomain="llm",
                          annotations={"distenv.dev/world-size": "2"},
                          containers=[container("trainer", gpus=gpus)])
            patched, _ = self.admit_and_apply(pod, ns="train")
            exp = expected_env(host(0), [host(0), host(1)], 29500, 1, 2, gpus or 1,
                               ("pytorch", "tensorflow"), one_process=one)
            check_env(patched["spec"]["containers"][0]["env"], exp, [], "%s GPUs" % gpus)
        own = [{"name": "LOCAL_RANK", "value": "0"}]
        pod = sts_pod("llm", 1, ns="train", subdomain="llm",
                      annotations={"distenv.dev/world-size": "2"},
                      containers=[container("trainer", env=own, gpus=8)])
        resp = self.admit(pod, ns="train")
        want = "distenv: container trainer sets LOCAL_RANK: launchers start 1 process, not 8; remove it"
        check(resp.get("allowed") is True and resp.get("warnings") == [want],
              "own LOCAL_RANK with 8 GPUs: %r" % resp.get("warnings"))
        # nproc-per-node above the GPUs of a container: processes would share a GPU
        for nproc, warned in (("16", True), ("8", False), ("4", False), ("auto", False)):
            pod = sts_pod("llm", 1, ns="train", subdomain="llm",
                          annotations={"distenv.dev/world-size": "2",
                                       "distenv.dev/nproc-per-node": nproc},
                          containers=[container("trainer", gpus=8)])
            resp = self.admit(pod, ns="train")
            want = ("distenv: distenv.dev/nproc-per-node 16 is above the 8 GPUs of a container: "
                    "processes would share a GPU; set 8")
            check(resp.get("allowed") is True and
                  (resp.get("warnings") or []) == ([want] if warned else []),
                  "nproc-per-node %s with 8 GPUs: %r" % (nproc, resp.get("warnings")))

    def case_exec_limit(self):
        """TF_CONFIG near and past Linux's 131072-byte limit per environment string:
        every container's resulting env is exec'd for real."""
        ctrs = [{"name": "trainer", "image": "x"},
                {"name": "side", "image": "y", "env": [{"name": "A", "value": "1"}]}]
        for world, tf_in in [(3100, True), (4000, False)]:
            pod = sts_pod("ddp", world - 1, ns="ml", subdomain="ddp", containers=ctrs,
                          annotations={"distenv.dev/world-size": str(world)})
            resp = self.admit(pod, ns="ml")
            check(resp.get("allowed") is True, "world %d: %r" % (world, resp.get("status")))
            ops = json.loads(base64.b64decode(resp["patch"]))
            patched = jsonpatch.JsonPatch(ops).apply(copy.deepcopy(pod))
            warns = resp.get("warnings") or []
            if tf_in:
                check(not warns, "world %d: warnings %r" % (world, warns))
            else:
                check(len(warns) == 1 and warns[0].startswith("distenv: TF_CONFIG left out")
                      and len(warns[0]) < 120, "world %d: warnings %r" % (world, warns))
                check(",omitted=TF_CONFIG" in patched["metadata"]["annotations"]
                      ["distenv.dev/injected"], "annotation does not say TF_CONFIG was left out")
            for c in patched["spec"]["containers"]:
                env = {e["name"]: e["value"] for e in c["env"] if "value" in e}
                check(("TF_CONFIG" in env) == tf_in, "world %d %s: TF_CONFIG %s"
                      % (world, c["name"], "missing" if tf_in else "present"))
                if tf_in:
                    n = len("TF_CONFIG=") + len(env["TF_CONFIG"].encode()) + 1
                    check(120000 < n <= 131072, "world %d: TF_CONFIG string %d bytes" % (world, n))
                # execve() with exactly this environment: E2BIG would fail here
                r = subprocess.run(["/usr/bin/env"], env=env, capture_output=True, timeout=20)
                check(r.returncode == 0 and len(r.stdout) >= sum(len(k) + len(v) for k, v in
                                                                   env.items()),
                      "world %d %s: exec failed: %r" % (world, c["name"], r.stderr[:200]))
        # tensorflow asked for by annotation: denied, naming the limit and the world
        pod = sts_pod("ddp", 5, ns="ml", subdomain="ddp", containers=ctrs,
                      annotations={"distenv.dev/world-size": "4000",
                                   "distenv.dev/frameworks": "pytorch,tensorflow"})
        resp = self.admit(pod, ns="ml")
        msg = resp.get("status", {}).get("message", "")
        check(resp.get("allowed") is False and "131072" in msg and "4000" in msg
              and "distenv.dev/frameworks" in msg, "asked tensorflow: %r" % msg)

    def case_reinvocation_at_limit(self):
        """4,090 env entries patched past 4,096: the reinvocation is allowed unchanged."""
        env = [{"name": "E%d" % i, "value": "v"} for i in range(4090)]
        pod = sts_pod("ddp", 1, ns="ml", subdomain="ddp",
                      annotations={"distenv.dev/world-size": "2"},
                      containers=[{"name": "t", "image": "x", "env": env}])
        resp = self.admit(pod, ns="ml")
        check(resp.get("allowed") is True, "first call: %r" % resp.get("status"))
        patched = jsonpatch.JsonPatch(json.loads(base64.b64decode(resp["patch"]))).apply(
            copy.deepcopy(pod))
        n = len(patched["spec"]["containers"][0]["env"])
        check(n > 4096, "patched to %d entries" % n)
        again = self.admit(patched, ns="ml")
        check(again.get("allowed") is True and "patch" not in again,
              "reinvocation at %d entries: %r" % (n, again))

    def case_kubeconfig_env(self):
        """serve honours $KUBECONFIG (its first file) when neither the flag nor the
        config names one; the flag wins over it."""
        base = [self.args.binary, "serve", "--listen", "127.0.0.1:%d" % free_port(),
                "--tls-cert", os.path.join(self.certs1, "tls.crt"),
                "--tls-key", os.path.join(self.certs1, "tls.key")]
        env = dict(os.environ, KUBECONFIG="/nonexistent/first.kc:/nonexistent/second.kc")
        r = subprocess.run(base, env=env, capture_output=True, text=True, timeout=20)
        check(r.returncode != 0 and "cannot read /nonexistent/first.kc" in r.stderr,
              "KUBECONFIG not used: %d %s" % (r.returncode, r.stderr))
        r = subprocess.run(base + ["--kubeconfig", "/nonexistent/flag.kc"], env=env,
                           capture_output=True, text=True, timeout=20)
        check(r.returncode != 0 and "cannot read /nonexistent/flag.kc" in r.stderr,
              "--kubeconfig does not win: %d %s" % (r.returncode, r.stderr))

    def case_doctor_no_kubeconfig(self):
        """doctor with no --kubeconfig, no $KUBECONFIG, no ~/.kube/config and outside a pod
        says every place it looked and what to give (exit 2); with a ~/.kube/config it reads
        that one."""
        home = os.path.join(self.work, "doctor-home")
        os.makedirs(home, exist_ok=True)
        env = {k: v for k, v in os.environ.items()
               if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT")}
        env["HOME"] = home
        cmd = [self.args.binary, "doctor", "sts/ddp", "-n", "ml"]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=20)
        check(r.returncode == 2 and "give --kubeconfig FILE or set $KUBECONFIG "
              "(~/.kube/config does not exist, and this is not a pod)" in r.stderr,
              "doctor without a kubeconfig: %d %s" % (r.returncode, r.stderr))
        os.makedirs(os.path.join(home, ".kube"), exist_ok=True)
        with open(os.path.join(home, ".kube", "config"), "w") as f:
            f.write("apiVersion: v1\nkind: Config\nclusters: []\n")
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=20)
        check(r.returncode == 2 and "/.kube/config: no current-context" in r.stderr,
              "doctor with ~/.kube/config: %d %s" % (r.returncode, r.stderr))

    def case_render_strict(self):
        """render --strict (and kubectl's spelling --warnings-as-errors) is a CI gate: the same
        output, and exit 1 when there is a warning; 0 without one."""
        path = os.path.join(self.work, "strict.yaml")
        good = ("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: ddp, namespace: ml}\n"
                "spec:\n  replicas: 2\n  serviceName: ddp\n  podManagementPolicy: Parallel\n"
                "  template:\n    metadata: {labels: {distenv.dev/inject: 'true'}%s}\n"
                "    spec: {containers: [{name: t, image: x}]}\n")
        for anns, want_rc in (("", 0), (", annotations: {distenv.dev/wolrd-size: '2'}", 1)):
            with open(path, "w") as f:
                f.write(good % anns)
            plain = subprocess.run([self.args.binary, "render", path], capture_output=True,
                                   text=True, timeout=30)
            check(plain.returncode == 0 and "RANK=1" in plain.stdout,
                  "render %r: %d %s" % (anns, plain.returncode, plain.stderr))
            for flag in ("--strict", "--warnings-as-errors"):
                r = subprocess.run([self.args.binary, "render", flag, path], capture_output=True,
                                   text=True, timeout=30)
                check(r.returncode == want_rc and r.stdout == plain.stdout,
                      "render %s %r: exit %d (want %d): %s" % (flag, anns, r.returncode, want_rc,
                                                               r.stderr))
                if want_rc:
                    check("did you mean world-size?" in r.stderr and "warnings (--strict)" in r.stderr,
                          "render %s: %s" % (flag, r.stderr))

    def case_readme_render_sample(self):
        """README.md's sample `render` output is the binary's: every fenced block whose
        first line is `$ ./distenv-webhook render ARGS` holds exactly what that command
        prints (run from the repository root, no warnings)."""
        text = open(os.path.join(REPO, "README.md")).read()
        blocks = re.findall(r"^```\n\$ \./distenv-webhook (render [^\n]*)\n(.*?)^```$", text,
                            re.M | re.S)
        check(blocks, "README.md has no block starting '$ ./distenv-webhook render'")
        for cmd, want in blocks:
            r = subprocess.run([self.args.binary] + shlex.split(cmd), capture_output=True,
                               text=True, timeout=30, cwd=REPO)
            check(r.returncode == 0 and r.stderr == "",
                  "README's `%s`: exit %d: %s" % (cmd, r.returncode, r.stderr))
            if r.stdout != want:
                diff = "".join(difflib.unified_diff(want.splitlines(True), r.stdout.splitlines(True),
                                                    "README.md", "distenv-webhook " + cmd))
                check(False, "README's `%s` block differs from the binary's output:\n%s" % (cmd, diff))

    def case_render_no_service_name(self):
        path = os.path.join(self.work, "no-service-name.yaml")
        with open(path, "w") as f:
            f.write("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: ddp, namespace: ml}\n"
                    "spec:\n  replicas: 2\n  podManagementPolicy: Parallel\n  template:\n"
                    "    metadata: {labels: {distenv.dev/inject: 'true'}}\n"
                    "    spec: {subdomain: ddp, containers: [{name: t, image: x}]}\n")
        r = subprocess.run([self.args.binary, "render", path], capture_output=True, text=True,
                           timeout=30)
        check(r.returncode != 0 and "has no spec.serviceName" in r.stderr and r.stdout == "",
              "render exit %d: %s %s" % (r.returncode, r.stdout[:200], r.stderr))
        # and /mutate denies the pod the controller makes (no subdomain), speaking of serviceName
        pod = sts_pod("ddp", 0, ns="ml", annotations={"distenv.dev/world-size": "2"})
        pod["spec"].pop("subdomain", None)
        resp = self.admit(pod, ns="ml")
        check(resp.get("allowed") is False and "spec.serviceName" in resp["status"]["message"],
              "/mutate: %r" % resp.get("status"))

    def case_sts_defaults(self):
        pod = sts_pod("ddp", 3, ns="ml", subdomain="ddp-svc",
                      annotations={"distenv.dev/world-size": "4"})
        patched, _ = self.admit_and_apply(pod, ns="ml")
        a = "ddp-0.ddp-svc.ml.svc.cluster.local"
        exp = expected_env(a, ["ddp-%d.ddp-svc.ml.svc.cluster.local" % r for r in range(4)],
                           29500, 3, 4, 1, ("pytorch", "tensorflow"))
        check_env(patched["spec"]["containers"][0]["env"], exp, [], "main")

    def case_sts_elastic(self):
        pod = sts_pod("el", 1, ns="ml", annotations={
            "distenv.dev/world-size": "4", "distenv.dev/elastic": "2:4",
            "distenv.dev/max-restarts": "3", "distenv.dev/frameworks": "pytorch",
            "distenv.dev/nproc-per-node": "8"})
        patched, _ = self.admit_and_apply(pod, ns="ml")
        exp = expected_env("el-0.el.ml.svc.cluster.local", [], 29500, 1, 4, 8, ("pytorch",),
                           namespace="ml", workload="el", elastic="2:4", max_restarts=3)
        check_env(patched["spec"]["containers"][0]["env"], exp, [], "main")

    def case_job_service_init(self):
        pod = job_pod("bert", 3, annotations={
            "distenv.dev/world-size": "4", "distenv.dev/service": "bert-svc",
            "distenv.dev/frameworks": "jax", "distenv.dev/containers": "main,init-data"},
            containers=[container("main", env=[{"name": "JAX_PROCESS_ID", "value": "3"}]),
                        container("sidecar")],
            init_containers=[container("init-data")])
        check("name" not in pod["metadata"] and "namespace" not in pod["metadata"],
              "fixture: Job pod must have no name/namespace")
        patched, _ = self.admit_and_apply(pod, ns="nlp")
        check(patched["spec"].get("subdomain") == "bert-svc",
              "spec.subdomain = %r, want bert-svc" % patched["spec"].get("subdomain"))
        exp = expected_env("bert-0.bert-svc.nlp.svc.cluster.local", [], 29500, 3, 4, 1, ("jax",))
        check_env(patched["spec"]["containers"][0]["env"], exp,
                  [{"name": "JAX_PROCESS_ID", "value": "3"}], "main")
        check_env(patched["spec"]["initContainers"][0].get("env"), exp, [], "init-data")
        check("env" not in patched["spec"]["containers"][1], "sidecar was not named but changed")

    def case_own_env(self):
        """A container's own values of distenv's variables, over HTTPS: what differs is
        warned with both values (and recorded on the pod); what is certainly wrong is
        warned at /mutate (the user's value wins in a pod) and denied at /validate."""
        ann = {"distenv.dev/world-size": "4", "distenv.dev/frameworks": "pytorch"}
        # WORLD_SIZE left from a glue script: allowed, warned, kept, recorded on the pod
        own = [{"name": "WORLD_SIZE", "value": "32"}, {"name": "MASTER_ADDR", "value": "ddp-0.ddp"}]
        pod = sts_pod("ddp", 1, ns="ml", annotations=ann, containers=[container("train", env=own)])
        resp = self.admit(pod, ns="ml")
        check(resp.get("allowed") is True, "not allowed: %r" % resp.get("status"))
        want = ("distenv: container train: WORLD_SIZE=32, not distenv's 4: env:// waits for that "
                "many; torchrun sets its own")
        check(resp.get("warnings") == [want], "warnings %r, want [%r]" % (resp.get("warnings"), want))
        patched, _ = self.admit_and_apply(pod, ns="ml")
        anns = patched["metadata"]["annotations"]
        check(anns["distenv.dev/injected"] ==
              "rank=1,world-size=4,master=ddp-0.ddp:29500,own=WORLD_SIZE=32",
              "injected %r" % anns["distenv.dev/injected"])
        check(anns.get("distenv.dev/warnings") == want, "warnings annotation %r"
              % anns.get("distenv.dev/warnings"))
        env = {e["name"]: e.get("value") for e in patched["spec"]["containers"][0]["env"]}
        check(env["WORLD_SIZE"] == "32" and env["RANK"] == "1" and
              [e["name"] for e in patched["spec"]["containers"][0]["env"]].count("WORLD_SIZE") == 1,
              "env %r" % env)
        # a literal RANK on rank 1, a MASTER_ADDR of another pod of the world: certainly
        # wrong, but the user's value wins in a pod (SPEC): allowed, kept, warned with
        # both values and the fix, recorded on the pod; /validate refuses it at apply
        for var, val, world_, effect in (
                ("RANK", "0", "1", "another pod has that rank; remove it"),
                ("NODE_RANK", "0", "1", "another pod has that rank; remove it"),
                ("MASTER_ADDR", "ddp-3.ddp.ml", "ddp-0.ddp.ml.svc.cluster.local",
                 None),
                ("MASTER_ADDR", "localhost", "ddp-0.ddp.ml.svc.cluster.local", None)):
            p = sts_pod("ddp", 1, ns="ml", annotations=ann,
                        containers=[container("train", env=[{"name": var, "value": val}])])
            resp = self.admit(p, ns="ml")
            w = ("distenv: container train: %s=%s, not distenv's %s: %s" % (var, val, world_, effect)
                 if effect else
                 "distenv: container train keeps its own MASTER_ADDR (render shows both): not "
                 "rank 0's pod; remove it")
            check(resp.get("allowed") is True and resp.get("warnings") == [w],
                  "%s=%s: %r, want allowed with [%r]" % (var, val, resp, w))
            patched, _ = self.admit_and_apply(p, ns="ml")
            env = patched["spec"]["containers"][0]["env"]
            check([e["name"] for e in env].count(var) == 1 and
                  {e["name"]: e.get("value") for e in env}[var] == val, "%s: env %r" % (var, env))
            check(patched["metadata"]["annotations"]["distenv.dev/warnings"] == w and
                  ("own=%s=%s" % (var, val)) in patched["metadata"]["annotations"]
                  ["distenv.dev/injected"], "%s: annotations %r" % (var, patched["metadata"]))
        # RANK from the Job's completion index is the pod's own rank in a Job: allowed
        fr = [{"name": "RANK", "valueFrom": {"fieldRef": {
            "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}]
        jp = job_pod("bert", 2, annotations={"distenv.dev/world-size": "4",
                                             "distenv.dev/frameworks": "pytorch"},
                     containers=[container("main", env=fr)], subdomain="bert")
        resp = self.admit(jp, ns="nlp")
        check(resp.get("allowed") is True and not resp.get("warnings"), "Job pod: %r" % resp)
        # /validate: the same template, every problem at apply
        sts = {"apiVersion": "apps/v1", "kind": "StatefulSet",
               "metadata": {"name": "ddp", "namespace": "ml"},
               "spec": {"replicas": 4, "serviceName": "ddp", "podManagementPolicy": "Parallel",
                        "selector": {"matchLabels": {"app": "ddp"}},
                        "template": {"metadata": {"labels": {"app": "ddp",
                                                             "distenv.dev/inject": "true"},
                                                  "annotations": {"distenv.dev/frameworks":
                                                                  "pytorch",
                                                                  "distenv.dev/world-size": "4"}},
                                     "spec": {"containers": [container("train", env=[
                                         {"name": "WORLD_SIZE", "value": "32"},
                                         {"name": "RANK", "value": "0"}])]}}}}
        req = review(sts, self.uid(), namespace="ml")
        req["request"]["kind"] = {"group": "apps", "version": "v1", "kind": "StatefulSet"}
        req["request"]["resource"] = {"group": "apps", "version": "v1",
                                      "resource": "statefulsets"}
        st, _, out = self.post(req, path="/validate")
        check(st == 200, "HTTP %d" % st)
        r = json.loads(out)["response"]
        msg = (r.get("status") or {}).get("message", "")
        check(r.get("allowed") is False and "sets RANK=0 for each of its 4 ranks" in msg,
              "validate: %r" % r)
        # without the RANK: allowed, the WORLD_SIZE warned as the pods' answers warn it
        del req["request"]["object"]["spec"]["template"]["spec"]["containers"][0]["env"][1]
        req["request"]["uid"] = self.uid()
        st, _, out = self.post(req, path="/validate")
        r = json.loads(out)["response"]
        check(st == 200 and r.get("allowed") is True, "validate: %r" % r)
        check(want in r.get("warnings", []), "validate warnings %r" % r.get("warnings"))
        # a JobSet's RANK from the completion index (a fieldRef): in 2 Jobs of 2 pods the
        # index repeats, so /mutate can only warn each pod; refused at apply
        idx = {"name": "RANK", "valueFrom": {"fieldRef": {
            "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}
        js = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
              "metadata": {"name": "pytorch", "namespace": "ml"},
              "spec": {"replicatedJobs": [{"name": "workers", "replicas": 2, "template": {
                  "spec": {"completions": 2, "parallelism": 2, "completionMode": "Indexed",
                           "template": {"metadata": {"labels": {"distenv.dev/inject": "true"}},
                                        "spec": {"containers": [container("main", env=[idx])]}}}}}]}}
        req = review(js, self.uid(), namespace="ml")
        req["request"]["kind"] = {"group": "jobset.x-k8s.io", "version": "v1alpha2", "kind": "JobSet"}
        req["request"]["resource"] = {"group": "jobset.x-k8s.io", "version": "v1alpha2",
                                      "resource": "jobsets"}
        st, _, out = self.post(req, path="/validate")
        r = json.loads(out)["response"]
        msg = (r.get("status") or {}).get("message", "")
        check(st == 200 and r.get("allowed") is False and
              "replicated Job workers: container main sets RANK from the completion index, 0 to 1 "
              "in each of its 2 Job(s), not the ranks of JobSet pytorch's 4 pods" in msg,
              "validate JobSet: %r" % r)
        # one Job: the index is the rank, allowed (this server runs --no-lookups: the pods
        # read their world of 2 from distenv.dev/world-size)
        req["request"]["object"]["spec"]["replicatedJobs"][0]["replicas"] = 1
        req["request"]["object"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"][
            "metadata"]["annotations"] = {"distenv.dev/world-size": "2"}
        req["request"]["uid"] = self.uid()
        st, _, out = self.post(req, path="/validate")
        r = json.loads(out)["response"]
        check(st == 200 and r.get("allowed") is True, "validate JobSet of one Job: %r" % r)
        # a StatefulSet's RANK from the pod-index label (the ordinal): with ordinals from 1
        # its pods would be ranks 1 and 2 of a world of 2, no rank 0; refused at apply
        pidx = {"name": "RANK", "valueFrom": {"fieldRef": {
            "fieldPath": "metadata.labels['apps.kubernetes.io/pod-index']"}}}
        for start, says in ((1, "container main sets RANK from the pod index "
                                "(apps.kubernetes.io/pod-index), 1 to 2, not the ranks 0 to 1 of "
                                "StatefulSet train's 2 pods (its ordinals start at 1)"),
                            (0, None)):
            sts = {"apiVersion": "apps/v1", "kind": "StatefulSet",
                   "metadata": {"name": "train", "namespace": "ml"},
                   "spec": {"replicas": 2, "serviceName": "train", "podManagementPolicy": "Parallel",
                            "ordinals": {"start": start},
                            "selector": {"matchLabels": {"app": "train"}},
                            "template": {"metadata": {"labels": {"app": "train",
                                                                 "distenv.dev/inject": "true"},
                                                      "annotations": {
                                                          "distenv.dev/world-size": "2"}},
                                         "spec": {"containers": [container("main", env=[pidx])]}}}}
            r = self.validate_workload(sts)
            msg = (r.get("status") or {}).get("message", "")
            if says:
                check(r.get("allowed") is False and says in msg,
                      "validate StatefulSet from %d: %r" % (start, r))
            else:
                check(r.get("allowed") is True, "validate StatefulSet from 0: %r" % r)

    def case_tensorflow_roles(self):
        """A JobSet whose replicated Jobs are named after some of TensorFlow's roles and not
        others (chief, workers, ps): TF_CONFIG would make every pod a worker, the ps too, so
        /validate refuses it at apply with the fix; every part a role: allowed."""
        def rjob(name, pods):
            return {"name": name, "replicas": 1, "template": {"spec": {
                "completions": pods, "parallelism": pods, "completionMode": "Indexed",
                "template": {"metadata": {"labels": {"distenv.dev/inject": "true"},
                                          "annotations": {"distenv.dev/frameworks": "tensorflow"}},
                             "spec": {"containers": [container("tf")]}}}}}
        for names, says in ((("chief", "workers", "ps"),
                             "tensorflow: replicated Job chief is named after a TensorFlow role and "
                             "workers is not, so TF_CONFIG would make every pod a worker, chief "
                             "included: name every replicated Job chief, worker, ps or evaluator"),
                            (("chief", "worker", "ps"), None)):
            js = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                  "metadata": {"name": "tfjob", "namespace": "ml"},
                  "spec": {"replicatedJobs": [rjob(n, 2 if n.startswith("worker") else 1)
                                              for n in names]}}
            r = self.validate_workload(js)
            msg = (r.get("status") or {}).get("message", "")
            if says:
                check(r.get("allowed") is False and says in msg,
                      "validate %s: %r" % (",".join(names), r))
            else:
                check(r.get("allowed") is True, "validate %s: %r" % (",".join(names), r))

    # Every per-template rule of /validate (test/unit/testtemplates.h, the unit tests' table),
    # each (name, template annotations, pod spec, container, labels, places, refused, answer):
    # {T} the template's name, {W} the world. places: "js" the middle replicated Job of three,
    # "lws" the worker template.
    PER_TEMPLATE = [
        ("a port that is no port number", {"distenv.dev/port": "0"}, {}, {}, None, "js lws", True,
         '{T}: annotation distenv.dev/port: "0" is not a port number between 1 and 65535'),
        ("a framework misspelled", {"distenv.dev/frameworks": "pytroch"}, {}, {}, None, "js lws",
         True, '{T}: annotation distenv.dev/frameworks: "pytroch" is not a comma list of pytorch, '
         "tensorflow, jax, xgboost, paddle, tpu"),
        ("a world-size that is not the pods'", {"distenv.dev/world-size": "4"}, {}, {}, None,
         "js lws", True, "{T}: annotation distenv.dev/world-size is 4, but {K} has {W} pods per "
         "world: remove it"),
        ("an annotation misspelled", {"distenv.dev/wolrd-size": "3"}, {}, {}, None, "js lws",
         False, "{T}: unknown annotation distenv.dev/wolrd-size (did you mean world-size?) "
         "(ignored)"),
        ("max-restarts without elastic", {"distenv.dev/max-restarts": "3"}, {}, {}, None,
         "js lws", False, "{T}: distenv.dev/max-restarts is ignored without distenv.dev/elastic: "
         "only elastic jobs get PET_MAX_RESTARTS"),
        ("elastic MIN above the world", {"distenv.dev/elastic": "9:10"}, {}, {}, None, "js lws",
         True, "{T}: annotation distenv.dev/elastic: MIN 9 is above the world size {W}, so "
         "torchrun would wait for nodes that never exist"),
        ("elastic MAX above the world", {"distenv.dev/elastic": "1:9"}, {}, {}, None, "js lws",
         False, "{T}: elastic MAX 9 is above the world size {W}: more nodes join only when the "
         "workload is scaled up"),
        ("hostNetwork without ClusterFirstWithHostNet", {}, {"hostNetwork": True}, {}, None,
         "js lws", False, "{T}: hostNetwork needs dnsPolicy: ClusterFirstWithHostNet, or "
         "MASTER_ADDR will not resolve"),
        ("dnsPolicy Default", {}, {"dnsPolicy": "Default"}, {}, None, "js lws", False,
         "{T}: dnsPolicy Default: the node's DNS usually cannot resolve MASTER_ADDR; use "
         "ClusterFirst"),
        ("hostNetwork ranks that may share a node", {},
         {"hostNetwork": True, "dnsPolicy": "ClusterFirstWithHostNet"}, {}, None, "js lws", False,
         "{T}: hostNetwork ranks may share a node and its ports: add a hostname podAntiAffinity "
         "or spread"),
        ("a container's own MASTER_ADDR, not rank 0's", {}, {},
         {"env": [{"name": "MASTER_ADDR", "value": "x.y"}]}, None, "js lws", False,
         "{T}: container t: MASTER_ADDR=x.y is not a name of rank 0's pod: every rank meets "
         "there; check it"),
        ("a container's own MASTER_PORT, no port number", {}, {},
         {"env": [{"name": "MASTER_PORT", "value": "abc"}]}, None, "js lws", True,
         '{T}: container t sets MASTER_PORT to "abc", which is not a port number between 1 and '
         "65535"),
        ("a container's own WORLD_SIZE", {}, {}, {"env": [{"name": "WORLD_SIZE", "value": "7"}]},
         None, "js lws", False, "{T}: container t: WORLD_SIZE=7, not distenv's {W}: env:// waits "
         "for that many; torchrun sets its own"),
        ("one literal RANK for two ranks", {}, {}, {"env": [{"name": "RANK", "value": "1"}]}, None,
         "js lws", True, "{T}: container t sets RANK=1 for each of its 2 ranks, so they would all "
         "claim one rank: remove RANK from its env (distenv gives each pod its own)"),
        ("RANK from the completion index", {}, {}, {"env": [{"name": "RANK", "valueFrom": {
            "fieldRef": {"fieldPath": "metadata.annotations['batch.kubernetes.io/"
                                      "job-completion-index']"}}}]}, None, "js", True,
         "{T}: container t sets RANK from the completion index, 0 to 1 in each of its 1 Job(s), "
         "not the ranks of JobSet js's 6 pods, so two pods would claim one rank: remove RANK "
         "from its env (distenv gives each pod its own)"),
        ("LOCAL_RANK with two processes a pod", {"distenv.dev/nproc-per-node": "2"}, {},
         {"env": [{"name": "LOCAL_RANK", "value": "0"}]}, None, "js lws", False,
         "{T}: container t sets LOCAL_RANK: launchers start 1 process, not 2; remove it"),
        ("nproc-per-node above the GPUs", {"distenv.dev/nproc-per-node": "16"}, {},
         {"resources": {"limits": {"nvidia.com/gpu": "8"}}}, None, "js lws", False,
         "{T}: distenv.dev/nproc-per-node 16 is above the 8 GPUs of a container: processes "
         "would share a GPU; set 8"),
        ("XGBoost with two processes a pod",
         {"distenv.dev/frameworks": "pytorch,xgboost", "distenv.dev/nproc-per-node": "2"}, {}, {},
         None, "js lws", False,
         "{T}: DMLC_NUM_WORKER counts 1 XGBoost worker a pod, not its 2 processes"),
        ("elastic, PET_RDZV_CONF from a reference", {"distenv.dev/elastic": "1:3"}, {},
         {"env": [{"name": "PET_RDZV_CONF",
                   "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}}]}, None,
         "js lws", False, "{T}: container t: PET_RDZV_CONF from a reference gets no is_host, so "
         "torchrun guesses its host: use a literal"),
        ("distenv.dev/containers naming no container", {"distenv.dev/containers": "t,trainer"},
         {}, {}, None, "js lws", True, "{T}: annotation distenv.dev/containers: the pod has no "
         'container or init container named "trainer"'),
        ("a template that does not opt in", {}, {}, {}, {"app": "ddp"}, "js lws", False,
         "{T}: no label distenv.dev/inject, so its pods get no env, yet WORLD_SIZE counts them"),
    ]

    @staticmethod
    def per_template_workload(rule, place):
        """The JobSet of three replicated Jobs (a, b, c; 2 pods each) or the LeaderWorkerSet of
        one group of 3 with rule's problem on b or on the worker template, the others clean."""
        _, anns, spec, ctr, labels, _, _, _ = rule

        def tmpl(bad):
            c = {"name": "t", "image": "registry.invalid/train:1"}
            c.update(ctr if bad else {})
            s = dict(spec if bad else {})
            s["containers"] = [c]
            meta = {"labels": dict(labels if bad and labels is not None
                                   else {"distenv.dev/inject": "true"})}
            if bad and anns:
                meta["annotations"] = dict(anns)
            return {"metadata": meta, "spec": s}
        if place == "js":
            return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                    "metadata": {"name": "js", "namespace": "ml"},
                    "spec": {"replicatedJobs": [
                        {"name": n, "replicas": 1, "template": {"spec": {
                            "completions": 2, "parallelism": 2, "completionMode": "Indexed",
                            "template": tmpl(n == "b")}}} for n in "abc"]}}
        return {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                "metadata": {"name": "lws", "namespace": "ml"},
                "spec": {"replicas": 1, "leaderWorkerTemplate": {
                    "size": 3, "leaderTemplate": tmpl(False), "workerTemplate": tmpl(True)}}}

    def case_per_template(self):
        """Every per-template rule of /validate over HTTPS with its problem on a template other
        than the first (the middle replicated Job of a JobSet, a LeaderWorkerSet's worker
        template), the others clean: refused or warned with the whole answer, which names that
        template and no other."""
        names = {"js": "replicated Job b", "lws": "worker template"}
        others = ("replicated Job a", "replicated Job c", "leader template")
        for rule in self.PER_TEMPLATE:
            name, _, _, _, _, places, refused, answer = rule
            for place in places.split():
                want = "distenv: " + answer.replace("{T}", names[place]).replace(
                    "{W}", "6" if place == "js" else "3").replace(
                    "{K}", "JobSet js" if place == "js" else "LeaderWorkerSet lws")
                r = self.validate_workload(self.per_template_workload(rule, place))
                msg = (r.get("status") or {}).get("message", "")
                warns = r.get("warnings") or []
                where = "%s on the %s: %r" % (name, names[place], r)
                if refused:
                    check(r.get("allowed") is False and msg == want, where)
                else:
                    check(r.get("allowed") is True and want[:119] in warns, where)
                check(not any(o in w for o in others for w in warns + [msg]), where)
        # a replicated Job's own spec, on the middle or the last of three
        clean = ("clean", {}, {}, {}, None, "js", False, "")
        for rj, change, want in (
                (2, {"completionMode": "NonIndexed"},
                 "distenv: replicated Job c is not an Indexed Job, so its pods have no rank: set "
                 "spec.completionMode: Indexed"),
                (1, {"parallelism": 1},
                 "distenv: replicated Job b has parallelism 1 below completions 2, so not all "
                 "ranks can run at once: set them equal")):
            js = self.per_template_workload(clean, "js")
            js["spec"]["replicatedJobs"][rj]["template"]["spec"].update(change)
            r = self.validate_workload(js)
            check(r.get("allowed") is False and r["status"]["message"] == want,
                  "%r on replicated Job %d: %r" % (change, rj, r))

    def case_world_above_pods(self):
        """A StatefulSet annotated with a world above its replicas (GPUs counted): every pod
        would wait for ranks that never start, so /validate refuses it at apply with the fix;
        elastic, the same world is warned; equal, allowed."""
        for anns, allowed, says in (
                ({"distenv.dev/world-size": "32"}, False,
                 "world size 32 (annotation) is above the 4 replicas: ranks from 4 never start "
                 "and every pod waits for them: count pods, not GPUs"),
                ({"distenv.dev/world-size": "32", "distenv.dev/elastic": "4:32"}, True,
                 "world size 32 (annotation) is above the 4 replicas"),
                ({"distenv.dev/world-size": "4"}, True, None)):
            sts = {"apiVersion": "apps/v1", "kind": "StatefulSet",
                   "metadata": {"name": "ddp", "namespace": "ml"},
                   "spec": {"replicas": 4, "serviceName": "ddp", "podManagementPolicy": "Parallel",
                            "selector": {"matchLabels": {"app": "ddp"}},
                            "template": {"metadata": {"labels": {"app": "ddp",
                                                                 "distenv.dev/inject": "true"},
                                                      "annotations": anns},
                                         "spec": {"containers": [container("train")]}}}}
            r = self.validate_workload(sts)
            msg = (r.get("status") or {}).get("message", "") + " ".join(r.get("warnings") or [])
            check(r.get("allowed") is allowed and (says is None or says in msg),
                  "validate %r: %r" % (anns, r))

    def case_rdzv_conf_reference(self):
        """An elastic pod whose container sets PET_RDZV_CONF by a reference, over HTTPS:
        distenv cannot merge is_host into a value read at run time, so torchrun would guess
        the store's host from host names; the pod keeps its own value (no is_host added),
        each rank is warned and the marker records it; /validate warns at apply. A literal is
        merged, with no warning."""
        want = ("distenv: container train: PET_RDZV_CONF from a reference gets no is_host, so "
                "torchrun guesses its host: use a literal")
        ann = {"distenv.dev/world-size": "2", "distenv.dev/elastic": "1:2",
               "distenv.dev/frameworks": "pytorch"}
        for entry, warned in (({"value": "$(BASE)"}, True),
                              ({"valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}}, True),
                              ({"value": "timeout=900"}, False)):
            own = [{"name": "BASE", "value": "timeout=900"}, dict({"name": "PET_RDZV_CONF"}, **entry)]
            for rank in (0, 1):
                pod = sts_pod("el", rank, ns="ml", annotations=ann,
                              containers=[container("train", env=own)])
                resp = self.admit(pod, ns="ml")
                check(resp.get("allowed") is True and
                      (resp.get("warnings") or []) == ([want] if warned else []),
                      "%r rank %d: %r" % (entry, rank, resp))
                patched, _ = self.admit_and_apply(pod, ns="ml")
                ctr = patched["spec"]["containers"][0]
                mine = [e for e in ctr["env"] if e["name"] == "PET_RDZV_CONF"]
                merged = [{"name": "PET_RDZV_CONF", "value": "timeout=900,is_host=%d" % (rank == 0)}]
                check(mine == ([own[1]] if warned else merged),
                      "%r rank %d: entries %r" % (entry, rank, mine))
                marker = patched["metadata"]["annotations"]["distenv.dev/injected"]
                check(("own=PET_RDZV_CONF" in marker) is warned, "%r: marker %r" % (entry, marker))
            sts = {"apiVersion": "apps/v1", "kind": "StatefulSet",
                   "metadata": {"name": "el", "namespace": "ml"},
                   "spec": {"replicas": 2, "serviceName": "el", "podManagementPolicy": "Parallel",
                            "selector": {"matchLabels": {"app": "el"}},
                            "template": {"metadata": {"labels": {"app": "el",
                                                                 "distenv.dev/inject": "true"},
                                                      "annotations": {"distenv.dev/elastic": "1:2",
                                                                      "distenv.dev/world-size": "2"}},
                                         "spec": {"containers": [container("train", env=own)]}}}}
            r = self.validate_workload(sts)
            check(r.get("allowed") is True and (want in (r.get("warnings") or [])) is warned,
                  "validate %r: %r" % (entry, r))

    def case_env_listed_twice(self):
        """A variable listed twice in a container's env, over HTTPS: the kubelet keeps the
        last entry (pkg/kubelet/kubelet_pods.go makeEnvironmentVariables fills a map in
        list order), so distenv reads, judges and merges that one, at /mutate and
        /validate; the hidden entry is neither judged nor changed."""
        def kubelet_env(ctr):
            env = {}
            for e in ctr.get("env", []):
                env[e["name"]] = e.get("value")  # a later entry replaces an earlier one
            return env

        # PET_RDZV_CONF of an elastic pod: is_host merged into the entry the process sees
        ann = {"distenv.dev/world-size": "4", "distenv.dev/elastic": "2:4",
               "distenv.dev/frameworks": "pytorch"}
        for rank in (0, 1):
            own = [{"name": "PET_RDZV_CONF", "value": "is_host=1"}, {"name": "A", "value": "1"},
                   {"name": "PET_RDZV_CONF", "value": "timeout=60"}]
            pod = sts_pod("el", rank, ns="ml", annotations=ann,
                          containers=[container("train", env=own)])
            patched, _ = self.admit_and_apply(pod, ns="ml")
            ctr = patched["spec"]["containers"][0]
            env = kubelet_env(ctr)
            want = "timeout=60,is_host=%d" % (rank == 0)
            check(env["PET_RDZV_CONF"] == want, "rank %d: PET_RDZV_CONF %r, want %r"
                  % (rank, env["PET_RDZV_CONF"], want))
            check(env["PET_RDZV_ENDPOINT"] == "el-0.el.ml.svc.cluster.local:29500" and
                  env["PET_NODE_RANK"] == str(rank), "rank %d: env %r" % (rank, env))
            mine = [e for e in ctr["env"] if e["name"] in ("PET_RDZV_CONF", "A")]
            check(mine == [own[0], own[1], {"name": "PET_RDZV_CONF", "value": want}],
                  "rank %d: the user's entries %r" % (rank, mine))
        # a per-rank variable: only the entry the process sees is judged
        plain = {"distenv.dev/world-size": "4", "distenv.dev/frameworks": "pytorch"}
        for own, warned in ((["1", "0"], True), (["0", "1"], False)):
            p = sts_pod("ddp", 1, ns="ml", annotations=plain, containers=[container(
                "train", env=[{"name": "RANK", "value": own[0]}, {"name": "X", "value": "x"},
                              {"name": "RANK", "value": own[1]}])])
            resp = self.admit(p, ns="ml")
            w = ("distenv: container train: RANK=0, not distenv's 1: another pod has that "
                 "rank; remove it")
            check(resp.get("allowed") is True and
                  (resp.get("warnings") or []) == ([w] if warned else []),
                  "RANK %r: %r" % (own, resp))
            patched, _ = self.admit_and_apply(p, ns="ml")
            env = kubelet_env(patched["spec"]["containers"][0])
            check(env["RANK"] == own[1] and env["WORLD_SIZE"] == "4", "RANK %r: env %r" % (own, env))
            # a differing own value is recorded on the pod; one that agrees is not
            check((("own=RANK=0") in patched["metadata"]["annotations"]["distenv.dev/injected"])
                  is warned and "own=RANK=1" not in
                  patched["metadata"]["annotations"]["distenv.dev/injected"],
                  "RANK %r: injected %r" % (own, patched["metadata"]["annotations"]))
        # MASTER_ADDR: a literal hidden by a valueFrom is denied as the valueFrom is
        ip = {"name": "MASTER_ADDR", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
        lit = {"name": "MASTER_ADDR", "value": "10.0.0.1"}
        p = sts_pod("ddp", 1, ns="ml", annotations=plain,
                    containers=[container("train", env=[lit, ip])])
        self.denied(p, ns="ml", contains=("MASTER_ADDR", "valueFrom"))
        p = sts_pod("ddp", 1, ns="ml", annotations=plain,
                    containers=[container("train", env=[ip, lit])])
        patched, _ = self.admit_and_apply(p, ns="ml")
        check(kubelet_env(patched["spec"]["containers"][0])["MASTER_ADDR"] == "10.0.0.1",
              "MASTER_ADDR: %r" % patched["spec"]["containers"][0]["env"])

        # /validate: a StatefulSet template, and a JobSet's completion index
        def validate(obj):
            r = self.validate_workload(obj)
            return r.get("allowed"), (r.get("status") or {}).get("message", "")

        idx_label = {"name": "RANK", "valueFrom": {"fieldRef": {
            "fieldPath": "metadata.labels['apps.kubernetes.io/pod-index']"}}}
        zero = {"name": "RANK", "value": "0"}
        for env, denied in (([idx_label, zero], True), ([zero, idx_label], False)):
            sts = {"apiVersion": "apps/v1", "kind": "StatefulSet",
                   "metadata": {"name": "ddp", "namespace": "ml"},
                   "spec": {"replicas": 4, "serviceName": "ddp", "podManagementPolicy": "Parallel",
                            "selector": {"matchLabels": {"app": "ddp"}},
                            "template": {"metadata": {"labels": {"app": "ddp",
                                                                 "distenv.dev/inject": "true"},
                                                      "annotations": {
                                                          "distenv.dev/world-size": "4"}},
                                         "spec": {"containers": [container("train", env=env)]}}}}
            allowed, msg = validate(sts)
            check(allowed is (not denied) and
                  (("sets RANK=0 for each of its 4 ranks" in msg) is denied),
                  "StatefulSet with RANK %r: allowed %r, %r" % (env, allowed, msg))
        idx = {"name": "RANK", "valueFrom": {"fieldRef": {
            "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}
        for env, says in (([zero, idx], "sets RANK from the completion index"),
                          ([idx, zero], "sets RANK=0 for each of its 4 ranks")):
            js = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                  "metadata": {"name": "pytorch", "namespace": "ml"},
                  "spec": {"replicatedJobs": [{"name": "workers", "replicas": 2, "template": {
                      "spec": {"completions": 2, "parallelism": 2, "completionMode": "Indexed",
                               "template": {"metadata": {"labels": {"distenv.dev/inject": "true"}},
                                            "spec": {"containers": [
                                                container("main", env=env)]}}}}}]}}
            allowed, msg = validate(js)
            check(allowed is False and says in msg, "JobSet with RANK %r: %r" % (env, msg))

    def case_skips(self):
        pod = sts_pod("w", 0, annotations={"distenv.dev/world-size": "2"})
        nolabel = copy.deepcopy(pod)
        del nolabel["metadata"]["labels"]["distenv.dev/inject"]
        self.skipped(nolabel)
        self.skipped(pod, operation="UPDATE")
        self.skipped(pod, operation="DELETE")
        cm = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "c", "labels": {"distenv.dev/inject": "true"}}, "data": {}}
        self.skipped(cm, kind="ConfigMap")

    def case_denials(self):
        # Not a StatefulSet or Indexed Job pod.
        rs = sts_pod("web", 0)
        rs["metadata"]["ownerReferences"][0].update(kind="ReplicaSet", name="web-7c9d")
        self.denied(rs, contains=("StatefulSet", "Job"))
        bare = sts_pod("web", 0)
        del bare["metadata"]["ownerReferences"]
        self.denied(bare, contains=("StatefulSet", "Job"))
        notindexed = job_pod("j", 0, annotations={"distenv.dev/world-size": "2"},
                             subdomain="s", index_annotation=False)
        self.denied(notindexed, ns="x", contains=("Indexed",))
        # Job pod without a Service to name rank 0.
        nosvc = job_pod("train", 0, annotations={"distenv.dev/world-size": "2"})
        self.denied(nosvc, ns="x", contains=("spec.subdomain", "headless Service"))
        # rank >= world size; world size unknown without look-ups.
        self.denied(sts_pod("ddp", 4, annotations={"distenv.dev/world-size": "4"}),
                    contains=("rank 4", "world size"))
        self.denied(sts_pod("ddp", 1), contains=("world size",))

    def case_bad_annotations(self):
        bad = [("distenv.dev/world-size", "abc"), ("distenv.dev/world-size", "0"),
               ("distenv.dev/world-size", "-3"), ("distenv.dev/world-size", "99999999999999999999"),
               ("distenv.dev/port", "70000"), ("distenv.dev/port", "0"),
               ("distenv.dev/port", "12ab"), ("distenv.dev/nproc-per-node", "x"),
               ("distenv.dev/nproc-per-node", "0"), ("distenv.dev/elastic", "4:2"),
               ("distenv.dev/elastic", "a:b"), ("distenv.dev/elastic", "3"),
               ("distenv.dev/max-restarts", "-1"), ("distenv.dev/frameworks", "pytorch,caffe"),
               ("distenv.dev/containers", "nosuch")]
        for key, val in bad:
            ann = {"distenv.dev/world-size": "4", "distenv.dev/elastic": "1:4"}
            if key != "distenv.dev/max-restarts":
                del ann["distenv.dev/elastic"]
            ann[key] = val
            self.denied(sts_pod("ddp", 1, annotations=ann), contains=(key, val))

    def case_http_400(self):
        cases = [(b"{not json", "bad JSON"), (b"", "empty body"), (b"[]", "JSON array"),
                 (json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                              "request": {"operation": "CREATE"}}), "no request.uid"),
                 (json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}),
                  "no request"),
                 (json.dumps(review(sts_pod("a", 0), "u1") | {
                     "apiVersion": "admission.k8s.io/v1beta1"}), "v1beta1")]
        c = Conn(self.server.port, self.ctx)
        for body, what in cases:
            st, resp, out = c.call("POST", "/mutate", body=body)
            check(st == 400, "%s: HTTP %d, want 400" % (what, st))
            check(resp.getheader("Content-Type", "").startswith("application/json"),
                  "%s: Content-Type %r" % (what, resp.getheader("Content-Type")))
            err = json.loads(out)
            check(isinstance(err.get("error"), str) and err["error"],
                  "%s: body %r has no error" % (what, out))
        c.close()

    def case_http_404_405(self):
        c = Conn(self.server.port, self.ctx)
        for method, path, want, allow in [("GET", "/nope", 404, None), ("POST", "/", 404, None),
                                          ("GET", "/mutate/x", 404, None),
                                          ("GET", "/mutate", 405, "POST"),
                                          ("PUT", "/mutate", 405, "POST"),
                                          ("POST", "/healthz", 405, "GET"),
                                          ("DELETE", "/metrics", 405, "GET")]:
            st, resp, out = c.call(method, path)
            check(st == want, "%s %s: HTTP %d, want %d" % (method, path, st, want))
            check("error" in json.loads(out), "%s %s: body %r" % (method, path, out))
            if allow:
                check(allow in (resp.getheader("Allow") or ""),
                      "%s %s: Allow %r" % (method, path, resp.getheader("Allow")))
        # These answers keep the connection: all on one.
        check(c.connects == 1, "%d connections for 7 small error answers" % c.connects)
        c.close()

    def case_http_413(self):
        # Announced too large: answered from the headers alone.
        s = tls_socket(self.server.port, self.ctx)
        st, h, body = raw_http(s, "POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: "
                                  "application/json\r\nContent-Length: %d\r\n\r\n" % (MAX_BODY + 1))
        s.close()
        check(st == 413, "Content-Length over the limit: HTTP %d" % st)
        check("error" in json.loads(body), "413 body %r" % body)
        # Exactly at the limit is read (and is bad JSON, so 400, not 413).
        c = Conn(self.server.port, self.ctx, timeout=60)
        st, _, out = c.call("POST", "/mutate", body=b" " * (MAX_BODY - 2) + b"{]")
        check(st == 400, "body of exactly the limit: HTTP %d, want 400" % st)
        c.close()
        # Chunked, no length announced: counted as it arrives.
        s = tls_socket(self.server.port, self.ctx, timeout=60)
        chunk = b"x" * 65536
        n = (MAX_BODY // len(chunk)) + 3
        parts = [b"%x\r\n%s\r\n" % (len(chunk), chunk)] * n + [b"0\r\n\r\n"]
        st, h, body = raw_http(s, "POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: "
                                  "application/json\r\nTransfer-Encoding: chunked\r\n\r\n", parts)
        s.close()
        check(st == 413, "chunked over the limit: HTTP %d" % st)
        check("error" in json.loads(body), "413 body %r" % body)
        self.server_still_serves()

    def server_still_serves(self):
        check(self.server.alive(), "server died: %s" % self.server.log_tail())
        c = Conn(self.server.port, self.ctx)
        st, _, _ = c.call("GET", "/healthz")
        c.close()
        check(st == 200, "healthz %d after bad input" % st)

    def case_tls_versions(self):
        for ver, name in ((ssl.TLSVersion.TLSv1_2, "TLSv1.2"), (ssl.TLSVersion.TLSv1_3, "TLSv1.3")):
            ctx = tls_context(self.ca, min_version=ver, max_version=ver)
            s = tls_socket(self.server.port, ctx)
            check(s.version() == name, "negotiated %s, want %s" % (s.version(), name))
            check(s.selected_alpn_protocol() == "http/1.1",
                  "ALPN %r" % s.selected_alpn_protocol())
            st, _, body = raw_http(s, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            check(st == 200, "%s: healthz %d" % (name, st))
            s.close()
        for ver, name in ((ssl.TLSVersion.TLSv1, "TLSv1.0"), (ssl.TLSVersion.TLSv1_1, "TLSv1.1")):
            ctx = tls_context(self.ca, min_version=ver, max_version=ver, legacy=True)
            try:
                s = tls_socket(self.server.port, ctx)
            except ssl.SSLError as e:
                check("NO_PROTOCOLS_AVAILABLE" not in str(e).upper(),
                      "%s: the client could not offer it (%s); the test proves nothing" % (name, e))
                continue
            except ConnectionResetError:
                continue
            v = s.version()
            s.close()
            raise CaseFailed("%s handshake succeeded (%s)" % (name, v))

    def case_keepalive(self):
        c = Conn(self.server.port, self.ctx)
        pod = sts_pod("ka", 1, annotations={"distenv.dev/world-size": "2"})
        for i in range(30):
            if i % 3 == 0:
                st, _, _ = c.call("GET", "/healthz")
            else:
                st, _, out = c.call("POST", "/mutate", body=json.dumps(review(pod, self.uid())))
            check(st == 200, "request %d: HTTP %d" % (i, st))
        check(c.connects == 1, "30 requests used %d connections" % c.connects)
        c.close()

    def case_parallel(self):
        errors = []
        pod = sts_pod("par", 2, annotations={"distenv.dev/world-size": "8"})

        def worker(k):
            try:
                c = Conn(self.server.port, self.ctx, timeout=30)
                for _ in range(25):
                    st, _, out = c.call("POST", "/mutate",
                                        body=json.dumps(review(pod, "p-%d" % k)))
                    r = json.loads(out)["response"]
                    if st != 200 or r["uid"] != "p-%d" % k or not r["allowed"]:
                        errors.append((k, st, out[:100]))
                c.close()
            except Exception as e:
                errors.append((k, repr(e)))
        ts = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(120 * SLOW)
        check(not any(t.is_alive() for t in ts), "workers did not finish")
        check(not errors, "errors under 8 parallel clients: %r" % errors[:3])

    def case_one_record(self):
        """A small answer is one TLS record (header and body corked together); a
        large one still arrives whole; 40 pipelined reviews are all answered."""
        raw = socket.create_connection(("127.0.0.1", self.server.port), timeout=10 * SLOW)
        inc, outb = ssl.MemoryBIO(), ssl.MemoryBIO()
        tls = self.ctx.wrap_bio(inc, outb, server_hostname=SNI)
        wire = bytearray()  # every byte the server sent after the last request

        def pump():
            data = outb.read()
            if data:
                raw.sendall(data)

        def feed():
            chunk = raw.recv(65536)
            if not chunk:
                raise CaseFailed("connection closed")
            wire.extend(chunk)
            inc.write(chunk)

        while True:
            try:
                tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                pump()
                feed()
        pump()

        def exchange(bodies):
            """Sends every review at once; returns [(status, body)] in order."""
            reqs = b"".join(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: "
                            b"application/json\r\nContent-Length: %d\r\n\r\n%s"
                            % (len(b), b) for b in bodies)
            tls.write(reqs)
            del wire[:]
            pump()
            buf, answers = b"", []
            while len(answers) < len(bodies):
                try:
                    buf += tls.read(65536)
                except ssl.SSLWantReadError:
                    feed()
                    continue
                while b"\r\n\r\n" in buf:
                    head, rest = buf.split(b"\r\n\r\n", 1)
                    n = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
                    if len(rest) < n:
                        break
                    answers.append((int(head.split()[1]), rest[:n]))
                    buf = rest[n:]
            return answers

        def records():
            """(content type, length) of each TLS record in wire."""
            out, i = [], 0
            while i + 5 <= len(wire):
                n = int.from_bytes(wire[i + 3:i + 5], "big")
                out.append((wire[i], n))
                i += 5 + n
            check(i == len(wire), "the answer's bytes end inside a record")
            return out

        small = json.dumps(review(sts_pod("rec", 1, annotations={
            "distenv.dev/world-size": "4"}), "rec-1")).encode()
        exchange([small])  # the first answer may share the wire with session tickets
        got = exchange([small])
        check(got[0][0] == 200 and b'"patch"' in got[0][1], "small answer: %r" % (got[0],))
        recs = records()
        check(len(got[0][1]) < 4096 and len(recs) == 1,
              "a %d-byte answer came as %d TLS records %r, not 1" % (len(got[0][1]), len(recs),
                                                                    recs))
        big_pod = sts_pod("rec", 1, annotations={"distenv.dev/world-size": "400"})
        big = json.dumps(review(big_pod, "rec-2")).encode()
        got = exchange([big])
        check(got[0][0] == 200 and len(got[0][1]) > 8192 and b'"patch"' in got[0][1],
              "large answer: HTTP %d, %d bytes" % (got[0][0], len(got[0][1])))
        bodies = [json.dumps(review(sts_pod("rec", 1, annotations={
            "distenv.dev/world-size": "4"}), "pipe-%d" % i)).encode() for i in range(40)]
        got = exchange(bodies)
        uids = [json.loads(b)["response"]["uid"] for _, b in got]
        check([st for st, _ in got] == [200] * 40 and uids == ["pipe-%d" % i for i in range(40)],
              "pipelined: %r" % (([st for st, _ in got], uids[:5]),))
        raw.close()

    def server_unacked(self, client_port):
        """Bytes the server's end of the connection from client_port has sent and the client
        not yet acknowledged: tx_queue of /proc/net/tcp, what SIOCOUTQ tells the server."""
        want = ("0100007F:%04X" % self.server.port, "0100007F:%04X" % client_port)
        with open("/proc/net/tcp") as f:
            for line in f.readlines()[1:]:
                p = line.split()
                if (p[1], p[2]) == want:
                    return int(p[4].split(":")[0], 16)
        raise CaseFailed("the server's end of port %d is not in /proc/net/tcp" % client_port)

    def case_no_cork_hold(self):
        """No answer waits for TCP_CORK's 200 ms timer (issue 24): after every answer the
        server's socket is uncorked, whatever the connection's first answer was. The first
        answer is 1.4-7.6 KB with nothing of the server's unacknowledged (checked in
        /proc/net/tcp), over TLS 1.2 and 1.3, so distenv holds it in one record while
        libmicrohttpd, pushing its header at once, does not cork; or over 8 KiB, which
        distenv does not hold. Then small answers, which libmicrohttpd corks the socket
        for, and medium ones, which distenv holds, on the same connection."""
        def body(world, uid):
            return json.dumps(review(sts_pod("cork", 1, annotations={
                "distenv.dev/world-size": str(world)}), uid))
        first_kinds = (("1.4-7.6 KB, TLS 1.2", ssl.TLSVersion.TLSv1_2, 32, (1400, 7600)),
                       ("1.4-7.6 KB, TLS 1.3", ssl.TLSVersion.TLSv1_3, 32, (1400, 7600)),
                       ("over 8 KiB, TLS 1.3", ssl.TLSVersion.TLSv1_3, 400, (8193, 1 << 20)))
        n_after = 24
        for what, version, world, (lo, hi) in first_kinds:
            ctx = tls_context(self.ca, min_version=version, max_version=version)
            s = tls_socket(self.server.port, ctx)
            port = s.getsockname()[1]
            wait_until(lambda: self.server_unacked(port) == 0, 10, step=0.01,
                       what="the client to acknowledge the handshake")
            n_lines = len(self.server.log_lines())
            n_answers = 1 + n_after
            for i in range(n_answers):
                k = i % 3
                if i == 0:
                    head, data = "POST /mutate", body(world, "cork-first")
                elif k == 0:
                    head, data = "GET /healthz", ""
                else:
                    head, data = "POST /mutate", body(2 if k == 1 else 32, "cork-%d" % i)
                st, _, out = raw_http(s, "%s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                                      "\r\nContent-Length: %d\r\n\r\n%s" % (head, len(data), data))
                check(st == 200, "%s: answer %d: HTTP %d" % (what, i, st))
                if i == 0:
                    check(lo <= len(out) <= hi, "%s: the first answer has %d bytes" %
                          (what, len(out)))
            s.close()
            # No timing here (a slow machine is no defect; timings belong in bench/): the
            # socket's state after each answer is the check, it catches a held cork.
            # One debug line per answer, written once it is out: the cork after it.

            def answered():
                evs = [e for e in (json.loads(ln) for ln in self.server.log_lines()[n_lines:]
                                   if '"answer_sent"' in ln) if e.get("event") == "answer_sent"]
                return evs if len(evs) >= n_answers else None
            evs = wait_until(answered, 10, what="%d answer_sent lines" % n_answers)
            check(len(evs) == n_answers, "%s: %d answer_sent lines for %d answers" %
                  (what, len(evs), n_answers))
            corked = [i for i, e in enumerate(evs) if e.get("tcp_cork") != 0]
            check(not corked, "%s: the server's socket was left corked after answers %r: %r" %
                  (what, corked, evs[corked[0]] if corked else None))
            check(evs[0].get("one_record") == (1 if world == 32 else 0),
                  "%s: the first answer %s held in one record: %r" %
                  (what, "was not" if world == 32 else "was", evs[0]))

    def metrics(self):
        c = Conn(self.server.port, self.ctx)
        st, resp, out = c.call("GET", "/metrics")
        c.close()
        check(st == 200, "metrics HTTP %d" % st)
        check(resp.getheader("Content-Type", "").startswith("text/plain; version=0.0.4"),
              "metrics Content-Type %r" % resp.getheader("Content-Type"))
        vals = {}
        for line in out.decode().splitlines():
            if line and not line.startswith("#"):
                k, _, v = line.rpartition(" ")
                vals[k] = float(v)
        return vals

    def case_handshake_flights(self):
        """Handshakes whose client pauses before each flight (half a ClientHello, then
        the rest, then its own Finished), TLS 1.2 and 1.3: each takes a bounded number
        of socket reads and waits (distenv_tls_handshake_*), however long the client
        pauses; a loop that ran the handshake again while the client paused would
        read thousands of times. Each is then served on the same connection."""
        def paced(pause):
            for ver in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
                ctx = tls_context(self.ca, min_version=ver, max_version=ver)
                sock = socket.create_connection(("127.0.0.1", self.server.port), timeout=10 * SLOW)
                try:
                    obj, inc, out = tlsflights.handshake_slowly(sock, ctx, SNI, pause=pause)
                    resp = tlsflights.request(sock, obj, inc, out,
                                              b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                finally:
                    sock.close()
                check(resp.startswith(b"HTTP/1.1 200"), "%s, pauses of %.2f s: %r"
                      % (ver.name, pause, resp[:80]))
            return 2

        def delta(m0, m1, name):
            return m1["distenv_tls_handshake%s_total" % name] - m0["distenv_tls_handshake%s_total" % name]

        m0 = self.metrics()
        n = paced(0.05)
        m1 = self.metrics()
        n_long = paced(0.4)
        m2 = self.metrics()
        # Each scrape's own connection is a handshake too (counted by the next scrape).
        hs, reads, waits = (delta(m0, m2, k) for k in ("s", "_reads", "_waits"))
        check(hs == n + n_long + 2, "%d handshakes counted, want %d" % (hs, n + n_long + 2))
        log("     %d handshakes: %d socket reads, %d waits" % (hs, reads, waits))
        check(reads <= 16 * hs, "%d socket reads for %d handshakes (bound: 16 each)" % (reads, hs))
        check(waits <= 4 * hs, "%d waits for %d handshakes (bound: 4 each)" % (waits, hs))
        # A client pausing 0.4 s before its Finished is waited for, not missed: the
        # server reads right after sending its flight, in the same handshake call.
        long_waits = delta(m1, m2, "_waits")
        check(long_waits >= n_long, "%d waits for %d handshakes paused 0.4 s before each "
              "flight (want one each at least)" % (long_waits, n_long))

    def case_handshake_timeout(self):
        """server.handshakeTimeoutSeconds: a client that sends half a ClientHello, or
        a whole one and no Finished, is closed at that deadline (counted as a
        handshake timeout), while other clients are served."""
        crt = os.path.join(self.certs1, "tls.crt")
        key = os.path.join(self.certs1, "tls.key")
        ctx = tls_context([os.path.join(self.certs1, "ca.crt")])
        srv = Server(self.args.binary, self.work, crt, key, self.args.valgrind,
                     extra=["--no-lookups"], config="server:\n  handshakeTimeoutSeconds: 1\n")
        try:
            srv.wait_ready(ctx)
            _, _, _, hello = tlsflights.client_hello(ctx, SNI)
            half = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
            half.sendall(hello[:len(hello) // 2])
            whole = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
            whole.sendall(hello)
            t0 = time.monotonic()
            c = Conn(srv.port, ctx)
            st, _, _ = c.call("GET", "/healthz")
            c.close()
            check(st == 200, "served beside the stalled handshakes: HTTP %d" % st)
            for name, sock in (("half a ClientHello", half), ("a ClientHello, no Finished", whole)):
                # Well before server.headerTimeoutSeconds (10), which would close it too.
                took = tlsflights.closed_within(sock, 4 * SLOW)
                sock.close()
                check(took is not None, "%s: still open after %d s" % (name, 4 * SLOW))
                waited = time.monotonic() - t0
                check(waited >= 0.9, "%s: closed after %.2f s, before the 1 s deadline"
                      % (name, waited))
            c = Conn(srv.port, ctx)
            st, _, out = c.call("GET", "/metrics")
            c.close()
            got = re.search(rb'^distenv_connection_timeouts_total\{phase="handshake"\} (\S+)$', out,
                            re.M)
            check(got is not None and float(got.group(1)) == 2,
                  "handshake timeouts: %r, want 2" % (got and got.group(1)))
            check(srv.stop() == 0, "exit status after SIGTERM")
        finally:
            srv.kill()

    def case_metrics(self):
        m = self.metrics()
        # Exactly the names the chart's rules and dashboard are checked against.
        c = Conn(self.server.port, self.ctx)
        _, _, out = c.call("GET", "/metrics")
        c.close()
        served = set(re.findall(r"^# TYPE (\S+) ", out.decode(), re.M))
        listed = {ln.strip() for ln in open(os.path.join(REPO, "charts", "distenv", "metrics.txt"))
                  if ln.strip()}
        check(served == listed, "served but not in charts/distenv/metrics.txt: %s; listed but not "
              "served: %s" % (sorted(served - listed), sorted(listed - served)))
        adm = 'distenv_admission_requests_total{webhook="mutate",outcome="%s"}'
        for outcome in ("skipped", "patched", "unchanged", "denied", "bad_request"):
            for wh in ("mutate", "validate"):
                check('distenv_admission_requests_total{webhook="%s",outcome="%s"}'
                      % (wh, outcome) in m, "no series for %s %s" % (wh, outcome))
        check(m[adm % "patched"] >= 5, "patched count")
        check(m[adm % "denied"] >= 10, "denied count")
        check(m[adm % "bad_request"] >= 6, "400 count")
        # Every denial is counted once under a reason, and the known ones are there.
        denials = {k: v for k, v in m.items()
                   if k.startswith('distenv_admission_denials_total{webhook="mutate"')}
        check(sum(denials.values()) == m[adm % "denied"],
              "denials by reason %r != denied %r" % (sum(denials.values()), m[adm % "denied"]))
        for reason in ("owner", "annotation", "world", "service"):
            check(m['distenv_admission_denials_total{webhook="mutate",reason="%s"}' % reason] >= 1,
                  "no denial counted under reason %s" % reason)
        for wh in ("mutate", "validate"):
            total = sum(v for k, v in m.items()
                        if k.startswith('distenv_admission_requests_total{webhook="%s"' % wh))
            cnt = 'distenv_admission_duration_seconds_count{webhook="%s"}' % wh
            check(m[cnt] == total, "%s histogram count %r != requests %r" % (wh, m[cnt], total))
            check(m['distenv_admission_duration_seconds_bucket{webhook="%s",le="+Inf"}' % wh]
                  == total, "+Inf bucket")
            check('distenv_admission_duration_seconds_bucket{webhook="%s",le="30"}' % wh in m,
                  "buckets up to the longest webhook timeout")
        # Every request is counted, answered or not, by path and code.
        req = 'distenv_http_requests_total{path="%s",code="%s"}'
        check(m[req % ("other", "404")] >= 3, "404 count")
        check(m[req % ("/mutate", "405")] + m[req % ("/validate", "405")] +
              m[req % ("/healthz", "405")] + m[req % ("/readyz", "405")] +
              m[req % ("/metrics", "405")] >= 4, "405 count")
        check(m[req % ("/mutate", "413")] >= 2, "413 count")
        check(m[req % ("/mutate", "400")] >= 6, "400s counted as requests too")
        check(m[req % ("/mutate", "200")] >= m[adm % "patched"] + m[adm % "denied"],
              "reviews answered 200")
        check(m[req % ("/healthz", "200")] >= 1, "health probes counted")
        # A scrape is counted once answered: the next one shows exactly one more.
        m1, m2 = self.metrics(), self.metrics()
        check(m1[req % ("/metrics", "200")] >= 1 and
              m2[req % ("/metrics", "200")] == m1[req % ("/metrics", "200")] + 1,
              "/metrics scrapes counted: %r then %r" % (m1[req % ("/metrics", "200")],
                                                        m2[req % ("/metrics", "200")]))
        check(m["distenv_inflight_requests"] == 0, "the scrape is not in flight: %r"
              % m["distenv_inflight_requests"])
        for k in ('distenv_lookups_total{outcome="ok"}', 'distenv_lookups_total{outcome="error"}',
                  'distenv_lookups_total{outcome="cached"}',
                  'distenv_lookup_duration_seconds_count',
                  'distenv_certificate_reloads_total{result="success"}',
                  'distenv_certificate_reloads_total{result="failure"}'):
            check(k in m, "missing %s" % k)
        check(any(k.startswith("distenv_build_info{") for k in m), "no build info")
        want = cert_not_after(os.path.join(self.certs1, "tls.crt"))
        check(m["distenv_certificate_expiry_timestamp_seconds"] == want,
              "certificate expiry %r, want %r" % (m["distenv_certificate_expiry_timestamp_seconds"],
                                                  want))
        # The process series of the Prometheus client libraries.
        st = m.get("process_start_time_seconds", 0)
        check(self.server.started - 60 < st <= time.time() + 1,
              "process_start_time_seconds %r" % st)
        check(m.get("process_resident_memory_bytes", 0) > 1 << 20, "process_resident_memory_bytes")
        check(m.get("process_cpu_seconds_total", -1) > 0, "process_cpu_seconds_total")
        check(3 <= m.get("process_open_fds", 0) <= m.get("process_max_fds", 0),
              "process_open_fds %r, process_max_fds %r"
              % (m.get("process_open_fds"), m.get("process_max_fds")))

    def case_cert_swap(self):
        """New pairs arrive while clients keep calling: served within a bounded wait, no failure."""
        certs2 = self.gen_certs("certs2")
        certs3 = self.gen_certs("certs3")
        self.ca = [os.path.join(d, "ca.crt") for d in (self.certs1, certs2, certs3)]
        self.ctx = ctx = tls_context(self.ca)
        stop = threading.Event()
        stats = {"ok": 0, "fail": [], "seen": set()}
        lock = threading.Lock()
        pod = sts_pod("swap", 1, annotations={"distenv.dev/world-size": "2"})

        def load(keepalive):
            c = Conn(self.server.port, ctx, timeout=30)
            while not stop.is_set():
                try:
                    if not keepalive:
                        c.close()
                    st, _, out = c.call("POST", "/mutate", body=json.dumps(review(pod, "swap")))
                    good = st == 200 and json.loads(out)["response"]["allowed"]
                    with lock:
                        if good:
                            stats["ok"] += 1
                            stats["seen"].add(hashlib.sha256(c.peer_der).hexdigest())
                        else:
                            stats["fail"].append((st, out[:100]))
                except Exception as e:
                    with lock:
                        stats["fail"].append(repr(e))
                    c.close()
            c.close()

        threads = [threading.Thread(target=load, args=(k % 2 == 0,)) for k in range(4)]
        for t in threads:
            t.start()
        try:
            m0 = self.metrics()
            der2 = pem_to_der(os.path.join(certs2, "tls.crt"))
            der3 = pem_to_der(os.path.join(certs3, "tls.crt"))
            # 1. Kubernetes Secret volume update: the ..data symlink is swapped.
            self.secret_publish(certs2, "..v2")
            self.wait_served(ctx, der2, "certs2 after the ..data swap")
            m1 = self.metrics()
            check(m1['distenv_certificate_reloads_total{result="success"}'] >
                  m0['distenv_certificate_reloads_total{result="success"}'], "no successful reload")
            check(m1["distenv_certificate_expiry_timestamp_seconds"] ==
                  cert_not_after(os.path.join(certs2, "tls.crt")), "expiry not updated")
            # 2. A bad pair (certs3's certificate with certs2's key): refused, old one kept.
            bad = os.path.join(self.work, "badpair")
            os.makedirs(bad)
            shutil.copy(os.path.join(certs3, "tls.crt"), os.path.join(bad, "tls.crt"))
            shutil.copy(os.path.join(certs2, "tls.key"), os.path.join(bad, "tls.key"))
            self.secret_publish(bad, "..v3")
            failures = m1['distenv_certificate_reloads_total{result="failure"}']
            wait_until(lambda: self.metrics()['distenv_certificate_reloads_total{result="failure"}']
                       > failures, 30, step=0.2, what="the failed reload to be counted")
            c = Conn(self.server.port, ctx)
            st, _, _ = c.call("GET", "/healthz")
            check(st == 200 and c.peer_der == der2, "after a bad pair the old pair is not served")
            c.close()
            events = [e for e in self.server.events() if e.get("event") ==
                      "certificate_reload_failed"]
            check(events and "match" in events[-1].get("error", ""),
                  "no log line naming the key/certificate mismatch: %r" % events[-1:])
            # 3. Plain files renamed over the paths the server reads.
            for f in ("tls.key", "tls.crt"):
                tmp = os.path.join(self.vol, "." + f + ".tmp")
                shutil.copy(os.path.join(certs3, f), tmp)
                os.rename(tmp, os.path.join(self.vol, f))
            self.wait_served(ctx, der3, "certs3 after renaming files")
        finally:
            stop.set()
            for t in threads:
                t.join(60 * SLOW)
        check(not any(t.is_alive() for t in threads), "load threads hung")
        check(not stats["fail"], "%d requests failed during the swaps: %r"
              % (len(stats["fail"]), stats["fail"][:3]))
        check(stats["ok"] > 0, "no request succeeded")
        want_seen = {hashlib.sha256(pem_to_der(os.path.join(d, "tls.crt"))).hexdigest()
                     for d in (self.certs1, certs2, certs3)}
        check(stats["seen"] <= want_seen, "unknown certificate served")
        log("     cert swap: %d requests during the swaps, 0 failed" % stats["ok"])

    def wait_served(self, ctx, der, what):
        def served():
            c = Conn(self.server.port, ctx)
            try:
                st, _, _ = c.call("GET", "/healthz")
                return st == 200 and c.peer_der == der
            finally:
                c.close()
        wait_until(served, 30, step=0.2, what=what)

    def case_log_lines(self):
        lines = [ln for ln in self.server.log_lines() if ln.strip()]
        check(lines, "no log lines")
        for ln in lines:
            try:
                e = json.loads(ln)
            except ValueError:
                raise CaseFailed("log line is not JSON: %r" % ln[:200])
            check(all(k in e for k in ("ts", "level", "event")), "log line fields: %r" % ln[:200])
        evs = [json.loads(ln) for ln in lines]
        adm = [e for e in evs if e["event"] == "admission"]
        check(adm, "no admission log lines")
        for k in ("uid", "namespace", "workload", "rank", "outcome", "micros"):
            check(k in adm[-1], "admission line lacks %s: %r" % (k, adm[-1]))
        check(all(e.get("msg") for e in evs), "a line without msg: %r"
              % [e for e in evs if not e.get("msg")][:1])
        # Denials at warn, with the reason, and the workload and rank where known.
        denied = [e for e in adm if e["outcome"] == "denied"]
        check(denied and all(e["level"] == "warn" and e.get("reason") and
                             e["msg"].startswith("distenv: ") for e in denied),
              "denials not at warn with reason and msg: %r" % denied[:1])
        check(any(e["workload"].startswith("StatefulSet/") and e["rank"] is not None and
                  "is not below the world size" in e["msg"] and e["reason"] == "world"
                  for e in denied),
              "no rank-out-of-world denial naming its workload and rank: %r" % denied[:3])
        check(all(e["level"] == "info" for e in adm if e["outcome"] == "patched"),
              "patched pods not at info")
        check(any(e["event"] == "listening" and "TLS1.2" in e.get("tls", "") for e in evs),
              "no start-up line naming the TLS versions")

    def case_sigterm_drain(self):
        """SIGTERM with a request in flight: it completes, readyz says 503, exit 0."""
        body = json.dumps(review(sts_pod("dr", 1, annotations={"distenv.dev/world-size": "2"}),
                                 "drain-uid")).encode()
        # Several kept-alive connections: once the drain starts new ones are refused,
        # and an answer given as the drain starts (200 or 503) may close its own.
        pool = [Conn(self.server.port, self.ctx, timeout=30) for _ in range(8)]
        for ka in pool:
            st, _, _ = ka.call("GET", "/readyz")
            check(st == 200, "readyz before SIGTERM %d" % st)
        s = tls_socket(self.server.port, self.ctx, timeout=60)
        half = len(body) // 2
        raw_http(s, "POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    "Content-Length: %d\r\n\r\n" % len(body), [body[:half]], read=False)
        wait_until(lambda: self.metrics()["distenv_inflight_requests"] >= 1, 10,
                   what="the partial request to be in flight")
        self.server.proc.send_signal(signal.SIGTERM)

        def not_ready():
            if not pool:
                raise CaseFailed("every kept-alive connection closed before readyz said 503")
            st2, resp, _ = pool[0].call("GET", "/readyz")
            if (resp.getheader("Connection") or "").lower() == "close":
                pool.pop(0).close()  # answered while the drain began: the next one asks
            return st2 == 503
        wait_until(not_ready, 10, step=0.1, what="readyz 503 while draining")
        check(self.server.alive(), "server exited with a request in flight")
        s.sendall(body[half:])
        st, h, out = read_response(s)
        s.close()
        for ka in pool:
            ka.close()
        check(st == 200, "in-flight request got HTTP %d" % st)
        check(json.loads(out)["response"]["uid"] == "drain-uid", "in-flight answer %r" % out[:200])
        rc = self.server.stop(timeout=60)
        check(rc == 0, "exit code %d after SIGTERM, want 0: %s" % (rc, self.server.log_tail()))
        evs = [e.get("event") for e in self.server.events()]
        check("drain_start" in evs and "drain_end" in evs, "no drain log lines: %r" % evs[-5:])
        if self.args.valgrind:
            with open(self.server.vg_path) as f:
                vg = f.read()
            check("ERROR SUMMARY: 0 errors" in vg, "valgrind: %s" % vg[-2000:])
            log("     valgrind: ERROR SUMMARY: 0 errors")

    def case_listen_forms(self):
        """":PORT" (all addresses, both families), "[::1]:PORT", "0.0.0.0:PORT"."""
        crt = os.path.join(self.certs1, "tls.crt")
        key = os.path.join(self.certs1, "tls.key")
        ctx = tls_context([os.path.join(self.certs1, "ca.crt")])
        v6 = socket.has_ipv6 and os.path.exists("/proc/net/if_inet6")
        forms = [(":%d", ["127.0.0.1"] + (["::1"] if v6 else [])), ("0.0.0.0:%d", ["127.0.0.1"])]
        if v6:
            forms.append(("[::1]:%d", ["::1"]))
        for form, hosts in forms:
            srv = Server(self.args.binary, self.work, crt, key, self.args.valgrind,
                         extra=["--no-lookups"], listen=form)
            try:
                srv.wait_ready(ctx, host=hosts[0])
                for h in hosts:
                    c = Conn(srv.port, ctx, host=h)
                    st, _, _ = c.call("GET", "/healthz")
                    c.close()
                    check(st == 200, "%s via %s: HTTP %d" % (form, h, st))
                rc = srv.stop()
                check(rc == 0, "%s: exit %d" % (form, rc))
            finally:
                srv.kill()
        if not v6:
            log("     (no IPv6 on this host: [::1] not tried)")

    def case_cluster_domain(self):
        """The cluster domain: from a kubelet resolv.conf when the config sets none, the
        config's (with a warning when the pod's differs), cluster.local when neither says;
        each named in the log and on /metrics, and in the MASTER_ADDR written."""
        crt = os.path.join(self.certs1, "tls.crt")
        key = os.path.join(self.certs1, "tls.key")
        kubelet = ("search distenv.svc.ml.example svc.ml.example ml.example\n"
                   "nameserver 198.19.128.10\noptions ndots:5\n")
        for name, config, resolv, domain, source, warned in (
                ("kubelet resolv.conf, no config", "", kubelet, "ml.example", "resolv.conf",
                 False),
                ("config differs from resolv.conf", "clusterDomain: corp.example\n", kubelet,
                 "corp.example", "config", True),
                ("config agrees", "clusterDomain: ml.example\n", kubelet, "ml.example", "config",
                 False),
                # the search entry copied as the domain: the warning names the domain itself
                ("config copies the svc. entry", "clusterDomain: svc.ml.example\n", kubelet,
                 "svc.ml.example", "config", True),
                ("host resolv.conf, no config", "", HOST_RESOLV, "cluster.local", "default",
                 False),
                # the longest a domain can be: 253 characters
                ("config, 253 characters", "clusterDomain: %s\n" % LONG_DOMAIN, HOST_RESOLV,
                 LONG_DOMAIN, "config", False)):
            srv = Server(self.args.binary, self.work, crt, key, self.args.valgrind,
                         extra=["--no-lookups"], config=config, resolv=resolv)
            try:
                srv.wait_ready(self.ctx)
                c = Conn(srv.port, self.ctx)
                st, _, out = c.call("GET", "/metrics")
                info = re.findall(r"^distenv_cluster_domain_info\{(.*)\} (\S+)$", out.decode(),
                                  re.M)
                check(st == 200 and info == [('domain="%s",source="%s"' % (domain, source), "1")],
                      "%s: /metrics cluster domain %r, want %s from %s"
                      % (name, info, domain, source))
                pod = sts_pod("ddp", 1, ns="ml", annotations={"distenv.dev/world-size": "2"})
                body = json.dumps(review(pod, "dom-%d" % srv.port, namespace="ml"))
                st, _, out = c.call("POST", "/mutate", body=body)
                c.close()
                resp = json.loads(out)["response"]
                check(st == 200 and resp.get("allowed") is True,
                      "%s: %r" % (name, resp.get("status")))
                ops = json.loads(base64.b64decode(resp["patch"]))
                patched = jsonpatch.JsonPatch(ops).apply(pod)
                env = {e["name"]: e.get("value") for e in patched["spec"]["containers"][0]["env"]}
                check(env.get("MASTER_ADDR") == "ddp-0.ddp.ml.svc." + domain,
                      "%s: MASTER_ADDR %r" % (name, env.get("MASTER_ADDR")))
                if domain == LONG_DOMAIN:
                    # with a Service and a namespace of 63 characters, the address
                    # .<service>.<namespace>.svc.<domain> is past what distenv holds
                    ns = "n" * 63
                    pod = sts_pod("ddp", 1, ns=ns, subdomain="s" * 63,
                                  annotations={"distenv.dev/world-size": "2"})
                    c = Conn(srv.port, self.ctx)
                    st, _, out = c.call("POST", "/mutate", body=json.dumps(
                        review(pod, "dom-long-%d" % srv.port, namespace=ns)))
                    c.close()
                    resp = json.loads(out)["response"]
                    want = "distenv: the Service address of StatefulSet %s/ddp is too long" % ns
                    check(st == 200 and resp.get("allowed") is False and
                          (resp.get("status") or {}).get("message") == want,
                          "%s: %r, want %r" % (name, resp.get("status"), want))
                rc = srv.stop()
                check(rc == 0, "%s: exit %d" % (name, rc))
                evs = srv.events()
                said = [e for e in evs if e.get("event") == "cluster_domain"]
                check(len(said) == 1 and said[0].get("domain") == domain and
                      said[0].get("source") == source and
                      said[0].get("resolv_conf") == srv.resolv_path,
                      "%s: start-up line %r" % (name, said))
                warn = [e for e in evs if e.get("event") == "cluster_domain_mismatch"]
                check(bool(warn) == warned and all(
                    e.get("level") == "warn" and e["message"].startswith("distenv: ") and
                    ("clusterDomain %s," % domain) in e["message"] and
                    "resolv.conf says ml.example:" in e["message"] and
                    len(e["message"]) < 120 for e in warn),
                      "%s: mismatch warning %r, want %s"
                      % (name, warn, "one" if warned else "none"))
                dflt = [e for e in evs if e.get("event") == "cluster_domain_default"]
                check(bool(dflt) == (source == "default") and all(
                    "cluster.local" in e["message"] and "svc.<domain>" in e["message"]
                    for e in dflt), "%s: default line %r" % (name, dflt))
            finally:
                srv.kill()

    def case_start_errors(self):
        """Start-up failures: a named error and a non-zero exit, no hang."""
        key = os.path.join(self.certs1, "tls.key")
        crt = os.path.join(self.certs1, "tls.crt")
        other_key = os.path.join(self.work, "certs2", "tls.key")
        cases = [(["--listen", "nonsense"], "listen"),
                 (["--listen", "127.0.0.1:70000"], "port"),
                 (["--tls-cert", os.path.join(self.work, "missing.crt"), "--tls-key", key],
                  "missing.crt"),
                 (["--tls-cert", crt, "--tls-key", other_key], "does not match")]
        for extra, want in cases:
            args = [self.args.binary, "serve", "--no-lookups"]
            if "--listen" not in extra:
                args += ["--listen", "127.0.0.1:%d" % free_port()]
            if "--tls-cert" not in extra:
                args += ["--tls-cert", crt, "--tls-key", key]
            p = subprocess.run(args + extra, capture_output=True, text=True, timeout=30 * SLOW)
            check(p.returncode != 0, "%r: exit 0" % extra)
            check(want in p.stderr, "%r: stderr %r does not mention %r" % (extra, p.stderr, want))

    # -- every annotation value docs/reference.md names, and one it does not (issue 45)
    def sts_patched(self, doc, rank):
        """/validate allows doc without a warning; its controller's pod of rank `rank` is
        patched (and the patch applied, idempotent). Returns the patched pod."""
        obj, pods = made(doc)
        r = self.validate_workload(obj)
        check(r.get("allowed") is True and not r.get("warnings"),
              "validate %r: %r" % (obj["spec"]["template"]["metadata"], r))
        patched, _ = self.admit_and_apply(pods[rank], ns=obj["metadata"]["namespace"])
        return patched

    def refused(self, doc, want, rank=1, validate=True):
        """/mutate denies the controller's pod of rank `rank` with exactly want, and /validate
        (validate: the same words, or the words given) denies the workload."""
        obj, pods = made(doc)
        resp = self.admit(pods[rank], ns=obj["metadata"]["namespace"])
        msg = (resp.get("status") or {}).get("message")
        check(resp.get("allowed") is False and msg == want,
              "/mutate: %r, want %r" % (msg, want))
        if validate:
            r = self.validate_workload(obj)
            msg = (r.get("status") or {}).get("message")
            vwant = want if validate is True else validate
            check(r.get("allowed") is False and msg == vwant,
                  "/validate: %r, want %r" % (msg, vwant))

    def case_annotation_values(self):
        """Every value docs/reference.md names for each distenv.dev/ annotation, on the pods
        a StatefulSet's controller makes, over HTTPS: the exact env; and for each one value it
        does not name: denied at /mutate and /validate with words naming the annotation and
        the value."""
        host = lambda r: "ddp-%d.ddp.ml.svc.cluster.local" % r  # noqa: E731
        both = ("pytorch", "tensorflow")
        W = {"distenv.dev/world-size": "2"}

        def env(patched, i=0):
            return patched["spec"]["containers"][i].get("env")

        def bad(key, value, says, extra=None):
            anns = dict(W, **(extra or {}))
            anns["distenv.dev/" + key] = value
            self.refused(sts_doc("ddp", 2, anns),
                         'distenv: annotation distenv.dev/%s: "%s" %s' % (key, value, says))
        # port: the first, the default and the last
        for port in ("1", "29500", "65535"):
            p = self.sts_patched(sts_doc("ddp", 2, dict(W, **{"distenv.dev/port": port})), 1)
            check_env(env(p), expected_env(host(0), [host(0), host(1)], int(port), 1, 2, 1, both),
                      [], "port %s" % port)
        bad("port", "65536", "is not a port number between 1 and 65535")
        # world-size: 1, and the cap (limits.maxWorldSize, 65536) on the last pod
        p = self.sts_patched(sts_doc("ddp", 1, {"distenv.dev/world-size": "1"}), 0)
        check_env(env(p), expected_env(host(0), [host(0)], 29500, 0, 1, 1, both), [], "world 1")
        cap = sts_doc("ddp", 65536, {"distenv.dev/world-size": "65536",
                                      "distenv.dev/frameworks": "pytorch"})
        obj = controllers.stored(cap)
        last = controllers._sts_pod(obj["spec"]["template"], "ddp", "ml", "ddp", 65535, "5f6d8c7b9")
        patched, _ = self.admit_and_apply(last, ns="ml")
        check_env(env(patched), expected_env(host(0), [], 29500, 65535, 65536, 1, ("pytorch",)),
                  [], "world 65536, rank 65535")
        bad("world-size", "65537", "is not a world size between 1 and 65536")
        # nproc-per-node: 1 (one process: LOCAL_RANK), the cap, and torchrun's words
        for nproc in ("1", "4096", "auto", "gpu", "cpu"):
            p = self.sts_patched(sts_doc("ddp", 2, dict(W, **{"distenv.dev/nproc-per-node": nproc})), 1)
            check_env(env(p), expected_env(host(0), [host(0), host(1)], 29500, 1, 2, nproc, both,
                                           one_process=nproc == "1"), [], "nproc %s" % nproc)
        bad("nproc-per-node", "4097", "is not a whole number between 1 and 4096 (or auto, gpu, cpu)")
        bad("nproc-per-node", "GPU", "is not a whole number between 1 and 4096 (or auto, gpu, cpu)")
        # containers: a container, an init container (only when named), both
        ctrs = [{"name": "train", "image": "train:1.0"}, {"name": "sidecar", "image": "proxy:1"}]
        init = [{"name": "setup", "image": "setup:1"}]
        exp = expected_env(host(0), [host(0), host(1)], 29500, 1, 2, 1, both)
        for names, got in (("train", ("train",)), ("setup", ("setup",)),
                           ("train, setup", ("train", "setup"))):
            p = self.sts_patched(sts_doc("ddp", 2, dict(W, **{"distenv.dev/containers": names}),
                                         containers=ctrs, init=init), 1)
            for c in p["spec"]["containers"] + p["spec"]["initContainers"]:
                if c["name"] in got:
                    check_env(c.get("env"), exp, [], "containers %r: %s" % (names, c["name"]))
                else:
                    check("env" not in c, "containers %r: %s changed" % (names, c["name"]))
        bad("containers", "train,,sidecar", "has an empty container name")
        # a name the template has not: refused at apply, and every pod
        self.refused(sts_doc("ddp", 2, dict(W, **{"distenv.dev/containers": "trainer"})),
                     'distenv: annotation distenv.dev/containers: the pod has no container or '
                     'init container named "trainer"')
        # frameworks: each one alone
        for fw in ("pytorch", "tensorflow", "jax", "xgboost", "paddle"):
            p = self.sts_patched(sts_doc("ddp", 2, dict(W, **{"distenv.dev/frameworks": fw})), 1)
            check_env(env(p), expected_env(host(0), [host(0), host(1)], 29500, 1, 2, 1, (fw,),
                                           namespace="ml", workload="ddp"), [], "framework %s" % fw)
        p = self.sts_patched(sts_doc("ddp", 2, dict(W, **{"distenv.dev/frameworks": "tpu"})), 1)
        check_env(env(p), [("TPU_WORKER_ID", "1"), ("TPU_WORKER_HOSTNAMES", host(0) + "," + host(1)),
                           ("MEGASCALE_COORDINATOR_ADDRESS", host(0)),
                           ("MEGASCALE_NUM_SLICES", "1"), ("MEGASCALE_SLICE_ID", "0")], [],
                  "framework tpu")
        bad("frameworks", "PyTorch", "is not a comma list of pytorch, tensorflow, jax, xgboost, "
            "paddle, tpu")
        # elastic: MIN below MAX, MIN equal to MAX (at the world, and below it), with
        # max-restarts at its edges
        for el, mr in (("1:2", None), ("2:2", "0"), ("1:1", "1000000")):
            anns = dict(W, **{"distenv.dev/elastic": el, "distenv.dev/frameworks": "pytorch"})
            if mr is not None:
                anns["distenv.dev/max-restarts"] = mr
            for rank in (0, 1):
                p = self.sts_patched(sts_doc("ddp", 2, anns), rank)
                check_env(env(p), expected_env(host(0), [], 29500, rank, 2, 1, ("pytorch",),
                                               namespace="ml", workload="ddp", elastic=el,
                                               max_restarts=mr), [], "elastic %s rank %d" % (el, rank))
        bad("elastic", "2:1", "has MIN greater than MAX")
        bad("elastic", "0:2", "is not MIN:MAX with whole numbers between 1 and 65536")
        bad("max-restarts", "1000001", "is not a restart count between 0 and 1000000",
            extra={"distenv.dev/elastic": "1:2"})
        # MIN above the world: torchrun would wait for ever
        self.refused(sts_doc("ddp", 2, dict(W, **{"distenv.dev/elastic": "3:4"})),
                     "distenv: annotation distenv.dev/elastic: MIN 3 is above the world size 2 of "
                     "StatefulSet ml/ddp, so torchrun would wait for nodes that never exist: lower "
                     "MIN or scale the workload",
                     validate="distenv: annotation distenv.dev/elastic: MIN 3 is above the world "
                              "size 2, so torchrun would wait for nodes that never exist")
        # MAX above it: warned at /validate, the pods patched
        obj, pods = made(sts_doc("ddp", 2, dict(W, **{"distenv.dev/elastic": "1:4"})))
        r = self.validate_workload(obj)
        check(r.get("allowed") is True and r.get("warnings") == [
            "distenv: elastic MAX 4 is above the world size 2: more nodes join only when the "
            "workload is scaled up"], "elastic 1:4: %r" % r)
        # max-restarts without elastic: warned, and no PET_MAX_RESTARTS
        doc = sts_doc("ddp", 2, dict(W, **{"distenv.dev/max-restarts": "3"}))
        obj, pods = made(doc)
        r = self.validate_workload(obj)
        check(r.get("allowed") is True and r.get("warnings") == [
            "distenv: distenv.dev/max-restarts is ignored without distenv.dev/elastic: only "
            "elastic jobs get PET_MAX_RESTARTS"], "max-restarts alone: %r" % r)
        patched, _ = self.admit_and_apply(pods[1], ns="ml")
        check_env(env(patched), exp, [], "max-restarts alone")
        # wait-for-master: the forms named, and the cap
        for dur, secs in (("30s", 30), ("5m", 300), ("10m", 600), ("1h", 3600), ("24h", 86400)):
            for rank in (0, 1):
                p = self.sts_patched(sts_doc("ddp", 2, dict(W, **{
                    "distenv.dev/wait-for-master": dur})), rank)
                ic = p["spec"]["initContainers"][0]
                check(ic["name"] == "distenv-wait-for-master" and
                      ic["command"][-3:] == ["wait", "--timeout", "%ds" % secs] and
                      ic["env"] == [{"name": "MASTER_ADDR", "value": host(0)},
                                    {"name": "MASTER_PORT", "value": "29500"},
                                    {"name": "RANK", "value": str(rank)}],
                      "wait-for-master %s rank %d: %r" % (dur, rank, ic))
                check_env(env(p), expected_env(host(0), [host(0), host(1)], 29500, rank, 2, 1,
                                               both), [], "wait-for-master %s" % dur)
        bad("wait-for-master", "25h", "is not a duration such as 30s, 5m or 1h (at most 24h)")
        bad("wait-for-master", "0s", "is not a duration such as 30s, 5m or 1h (at most 24h)")
        # service: a Job's pods without spec.subdomain get it, and their hosts under it
        js = job_doc("bert", 2, {"distenv.dev/world-size": "2", "distenv.dev/service": "bert-svc"})
        obj, pods = made(js)
        r = self.validate_workload(obj)
        check(r.get("allowed") is True and not r.get("warnings"), "service: %r" % r)
        patched, _ = self.admit_and_apply(pods[1], ns="ml")
        bh = lambda r: "bert-%d.bert-svc.ml.svc.cluster.local" % r  # noqa: E731
        check(patched["spec"].get("subdomain") == "bert-svc", "subdomain %r"
              % patched["spec"].get("subdomain"))
        check_env(env(patched), expected_env(bh(0), [bh(0), bh(1)], 29500, 1, 2, 1, both),
                  pods[1]["spec"]["containers"][0]["env"], "service bert-svc")
        js["spec"]["template"]["metadata"]["annotations"]["distenv.dev/service"] = "Bert_Svc"
        self.refused(js, 'distenv: annotation distenv.dev/service: "Bert_Svc" is not a valid '
                         'Service name')

    def case_inject_values(self):
        """The opt-in label: "true" opts in (patched, checked at /validate); any other value
        ("True", "yes", "1", "false", "") opts nothing in: allowed, no patch, no warning; as an
        annotation it is no opt-in, and /validate says so."""
        W = {"distenv.dev/world-size": "2"}
        p = self.sts_patched(sts_doc("ddp", 2, W), 1)
        check(len(p["spec"]["containers"][0]["env"]) == 12, "inject true: %r" % p["spec"])
        for v in ("True", "yes", "1", "false", ""):
            obj, pods = made(sts_doc("ddp", 2, dict(W, **{"distenv.dev/port": "0"}), inject=v))
            r = self.validate_workload(obj)
            check(r == {"uid": r["uid"], "allowed": True}, "validate inject %r: %r" % (v, r))
            self.skipped(pods[1], ns="ml")
        obj, pods = made(sts_doc("ddp", 2, dict(W, **{"distenv.dev/inject": "true"})))
        r = self.validate_workload(obj)
        check(r.get("allowed") is True and r.get("warnings") == [
            "distenv: unknown annotation distenv.dev/inject (only the label opts in) (ignored)"],
            "inject as an annotation: %r" % r)
    # -- every /validate and /mutate rule reached over HTTPS (issue 45; docs/testing.md)
    def validate_says(self, obj, denial=None, warnings=()):
        """/validate answers obj with exactly the denial (None: allowed) and the warnings."""
        r = self.validate_workload(copy.deepcopy(obj))
        msg = (r.get("status") or {}).get("message")
        if denial is None:
            check(r.get("allowed") is True and (r.get("warnings") or []) == list(warnings),
                  "%s %s: %r, want warnings %r" % (obj["kind"], obj["metadata"]["name"], r,
                                                   list(warnings)))
        else:
            check(r.get("allowed") is False and msg == denial,
                  "%s %s: %r, want %r" % (obj["kind"], obj["metadata"]["name"], msg, denial))

    def mutate_says(self, pod, denial, ns="ml"):
        """/mutate denies pod with exactly denial."""
        resp = self.admit(pod, ns=ns)
        msg = (resp.get("status") or {}).get("message")
        check(resp.get("allowed") is False and msg == denial and "patch" not in resp,
              "pod %s: %r, want %r" % (pod["metadata"].get("name") or
                                       pod["metadata"].get("generateName"), msg, denial))

    def case_lookups_off_world(self):
        """Look-ups off (this server runs --no-lookups): a StatefulSet's, an Indexed Job's and
        a one-replicated-Job JobSet's pods read the world from distenv.dev/world-size alone,
        so without it every pod is refused and /validate refuses the workload, saying the
        value to set; with it both allow. A JobSet of two replicated Jobs has every pod
        refused, annotated or not, and /validate says to turn look-ups on. Look-ups on, the
        same workloads are allowed at /validate (case_shipped_defaults, the look-up
        server's)."""
        self.refused(sts_doc("ddp", 2),
                     "distenv: the world size of StatefulSet ml/ddp is not known: set the "
                     "annotation distenv.dev/world-size (look-ups of the workload are turned off)",
                     validate="distenv: look-ups of the workload are turned off, so the pods of "
                     "StatefulSet ddp cannot read its 2 replicas and each would be refused: set "
                     "the annotation distenv.dev/world-size to 2 on its pod template")
        self.validate_says(sts_doc("ddp", 2, {"distenv.dev/world-size": "2"}))
        self.refused(job_doc("bert", 4, subdomain="bert"),
                     "distenv: the world size of Job ml/bert is not known: set the annotation "
                     "distenv.dev/world-size (look-ups of the workload are turned off)",
                     validate="distenv: look-ups of the workload are turned off, so the pods of "
                     "Job bert cannot read its 4 completions and each would be refused: set the "
                     "annotation distenv.dev/world-size to 4 on its pod template")
        self.validate_says(job_doc("bert", 4, {"distenv.dev/world-size": "4"}, subdomain="bert"))

        # a JobSet of one replicated Job: its pods' labels give the Jobs, not the world
        def js(anns):
            return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                    "metadata": {"name": "js", "namespace": "ml"},
                    "spec": {"replicatedJobs": [{"name": "workers", "replicas": 2, "template": {
                        "spec": {"completions": 2, "parallelism": 2, "completionMode": "Indexed",
                                 "template": {"metadata": {
                                     "labels": {"distenv.dev/inject": "true"},
                                     "annotations": anns},
                                     "spec": {"restartPolicy": "Never", "containers": [
                                         {"name": "train", "image": "train:1.0"}]}}}}}]}}
        self.refused(js({}),
                     "distenv: the world size of JobSet ml/js is not known: set the annotation "
                     "distenv.dev/world-size to all its pods (look-ups of the workload are "
                     "turned off)",
                     validate="distenv: look-ups of the workload are turned off, so the pods of "
                     "JobSet js cannot read its 4 pods and each would be refused: set the "
                     "annotation distenv.dev/world-size to 4 on its pod template")
        self.validate_says(js({"distenv.dev/world-size": "4"}))
        # two replicated Jobs: a pod's labels tell its own replicated Job's sizes only, so
        # each pod is refused, annotated or not, and so is the JobSet at /validate
        two = js({})
        two["spec"]["replicatedJobs"].insert(0, copy.deepcopy(two["spec"]["replicatedJobs"][0]))
        two["spec"]["replicatedJobs"][0]["name"] = "driver"
        two["spec"]["replicatedJobs"][0]["replicas"] = 1
        for anns in ({}, {"distenv.dev/world-size": "6"}):
            for rj in two["spec"]["replicatedJobs"]:
                rj["template"]["spec"]["template"]["metadata"]["annotations"] = anns
            self.refused(two,
                         "distenv: JobSet ml/js has several replicated Jobs, whose sizes only "
                         "the JobSet object tells: turn look-ups on (the webhook needs get on "
                         "jobsets)",
                         validate="distenv: look-ups of the workload are turned off, so the "
                         "pods of JobSet js cannot read the sizes of its 2 replicated Jobs, which "
                         "only the JobSet object tells, and each would be refused: turn look-ups "
                         "on (the webhook needs get on jobsets)")
        # a replicated Job of no Jobs (replicas 0) makes no pod and is counted by none
        two["spec"]["replicatedJobs"][0]["replicas"] = 0
        for rj in two["spec"]["replicatedJobs"]:
            rj["template"]["spec"]["template"]["metadata"]["annotations"] = {
                "distenv.dev/world-size": "4"}
        self.validate_says(two)

    def case_validate_rules(self):
        """The workload rules of /validate over HTTPS, each on the smallest workload that
        breaks it, with the exact words: a Job's completions, parallelism and Kueue's
        annotations, annotations on the workload, unknown ones past the list, DNS policy,
        host names, a StatefulSet's name and serviceName, a world below the pods."""
        W4 = {"distenv.dev/world-size": "4"}
        job = job_doc("bert", 4, W4, subdomain="bert")
        j = copy.deepcopy(job)
        del j["spec"]["completions"]
        self.validate_says(j, "distenv: Job bert has no spec.completions (the number of ranks)")
        j = job_doc("bert", 0, subdomain="bert")
        self.validate_says(j, "distenv: Job bert has spec.completions 0, so it has no ranks: "
                           "set spec.completions to the number of ranks")
        j = copy.deepcopy(job)
        j["spec"]["parallelism"] = 2
        self.validate_says(j, "distenv: Job bert has parallelism 2 below completions 4, so not "
                              "all ranks can run at once: set them equal")
        kueue_equal = ('distenv: their pods would be refused: add '
                       'kueue.x-k8s.io/job-completions-equal-parallelism: "true"')
        kueue_min = ("distenv: Job bert: with kueue.x-k8s.io/job-min-parallelism Kueue may start "
                     "fewer pods than its ranks")
        j["metadata"]["annotations"] = {"kueue.x-k8s.io/job-min-parallelism": "2"}
        self.validate_says(j, None, [
            "distenv: Job bert runs 2 of its 4 ranks at once, as Kueue admitted it",
            'distenv: so its pods are refused: give it '
            'kueue.x-k8s.io/job-completions-equal-parallelism: "true"', kueue_min, kueue_equal])
        j = copy.deepcopy(job)
        j["metadata"]["annotations"] = {"kueue.x-k8s.io/job-min-parallelism": "2"}
        self.validate_says(j, None, [kueue_min, kueue_equal])
        j["metadata"]["annotations"]["kueue.x-k8s.io/job-completions-equal-parallelism"] = "true"
        self.validate_says(j, None, [])
        j = copy.deepcopy(job)
        j["metadata"]["annotations"] = {"kueue.x-k8s.io/elastic-job": "true"}
        self.validate_says(j, None, ["distenv: kueue.x-k8s.io/elastic-job resizes Job bert while "
                                     "it runs: set distenv.dev/elastic MIN:MAX"])
        j["spec"]["template"]["metadata"]["annotations"]["distenv.dev/elastic"] = "2:4"
        self.validate_says(j, None, [])
        j = copy.deepcopy(job)
        j["metadata"]["annotations"] = {"distenv.dev/port": "1234"}
        self.validate_says(j, None, ["distenv: distenv.dev/port is on the Job, not its pod "
                                     "template: ignored; move it there"])
        j = copy.deepcopy(job)
        j["spec"]["template"]["spec"]["dnsPolicy"] = "Default"
        self.validate_says(j, None, ["distenv: dnsPolicy Default: the node's DNS usually cannot "
                                     "resolve MASTER_ADDR; use ClusterFirst"])
        j = copy.deepcopy(job)
        j["spec"]["template"]["spec"].update(hostNetwork=True, dnsPolicy="ClusterFirstWithHostNet")
        self.validate_says(j, None, ["distenv: hostNetwork ranks may share a node and its ports: "
                                     "add a hostname podAntiAffinity or spread"])
        # host names: one character over a DNS label on the last rank, and a dot
        j = job_doc("b" * 62, 4, W4, subdomain="bert")
        self.validate_says(j, "distenv: the hostname of rank 3 of Job %s, %s-3, is 64 characters, "
                              "above a DNS label's 63: shorten the names" % ("b" * 62, "b" * 62))
        self.validate_says(job_doc("b" * 61, 4, W4, subdomain="bert"), None, [])
        self.validate_says(sts_doc("ddp.v1", 2, {"distenv.dev/world-size": "2"}),
                           "distenv: the hostname of rank 1 of StatefulSet ddp.v1, ddp.v1-1, has "
                           "a dot, which a pod's hostname (one DNS label) cannot: name the "
                           "workload without dots")
        # a StatefulSet's name: 52 characters at most; its serviceName
        self.validate_says(sts_doc("a" * 53, 2, {"distenv.dev/world-size": "2"}),
                           "distenv: StatefulSet name %s is 53 characters; above 52 its pods "
                           "cannot be created: shorten it" % ("a" * 53))
        self.validate_says(sts_doc("a" * 52, 2, {"distenv.dev/world-size": "2"}), None, [])
        s = sts_doc("ddp", 2, {"distenv.dev/world-size": "2"})
        del s["spec"]["serviceName"]
        self.validate_says(s, "distenv: StatefulSet ddp has no spec.serviceName, so its pods have "
                              "no DNS names: set it to a headless Service that selects them")
        # a world below the pods: the first ranks would train alone
        self.validate_says(sts_doc("ddp", 4, {"distenv.dev/world-size": "3"}),
                           "distenv: annotation distenv.dev/world-size is 3, below the 4 replicas "
                           "of StatefulSet ddp: ranks 0 to 2 would train as a world of their own "
                           "while the pods from rank 3 are refused for ever: set it to 4 or "
                           "remove it")
        # more unknown annotations than the answer lists: 19 named (each cut to 119
        # characters), the one past distenv's list counted
        anns = {"distenv.dev/world-size": "2"}
        for i in range(20):
            anns["distenv.dev/%02d%s" % (i, "x" * 200)] = "1"
        r = self.validate_workload(sts_doc("ddp", 2, anns))
        check(r.get("allowed") is True and r.get("warnings") == [
            ("distenv: unknown annotation distenv.dev/%02d%s" % (i, "x" * 200))[:119]
            for i in range(19)] + ["distenv: 1 more unknown distenv.dev/ annotations (ignored)"],
            "20 unknown annotations: %r" % r.get("warnings"))

    def case_mutate_rules(self):
        """The pod rules of /mutate over HTTPS, each on a pod its controller made with one
        thing broken, with the exact words: the completion index, the ordinal, the owner's
        name, spec.subdomain, the namespace, the pod spec, the containers; and the Istio
        warning."""
        _, jpods = made(job_doc("bert", 4, {"distenv.dev/world-size": "4"}, subdomain="bert"))
        p = copy.deepcopy(jpods[1])
        p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] = "x"
        p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] = "x"
        self.mutate_says(p, 'distenv: annotation batch.kubernetes.io/job-completion-index: "x" '
                            'is not a completion index')
        p = copy.deepcopy(jpods[1])
        p["spec"]["subdomain"] = "Bad_Sub"
        self.mutate_says(p, 'distenv: spec.subdomain "Bad_Sub" is not a valid Service name')
        p = copy.deepcopy(jpods[1])
        del p["spec"]
        self.mutate_says(p, "distenv: the object has no pod spec")
        self.mutate_says(copy.deepcopy(jpods[1]), "distenv: the request has no valid namespace",
                         ns="Bad_NS")
        p = copy.deepcopy(jpods[1])
        p["metadata"]["ownerReferences"][0]["name"] = "Bad_Name"
        self.mutate_says(p, "distenv: the pod's Job owner reference has no valid name")
        p = copy.deepcopy(jpods[1])
        p["spec"]["containers"] = []
        self.mutate_says(p, "distenv: the pod has no containers")
        _, spods = made(sts_doc("ddp", 2, {"distenv.dev/world-size": "2"}))
        p = copy.deepcopy(spods[1])
        p["metadata"]["labels"]["apps.kubernetes.io/pod-index"] = "x"
        self.mutate_says(p, 'distenv: label apps.kubernetes.io/pod-index: "x" is not an ordinal')
        p = copy.deepcopy(spods[1])
        del p["metadata"]["labels"]["apps.kubernetes.io/pod-index"]
        p["metadata"]["name"] = p["spec"]["hostname"] = "ddp-x"
        self.mutate_says(p, "distenv: cannot tell the ordinal of pod ddp-x of StatefulSet ml/ddp: "
                            "no apps.kubernetes.io/pod-index label and the name does not end in -N")
        p = copy.deepcopy(spods[1])
        p["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/name"] = "other"
        self.mutate_says(p, "distenv: pod of LeaderWorkerSet ml/other has no valid annotation "
                            "leaderworkerset.sigs.k8s.io/size (a group size between 1 and 65536)")
        # Istio's sidecar on the rendezvous port: warned, patched
        p = copy.deepcopy(spods[1])
        p["spec"]["initContainers"] = [{"name": "istio-init", "image": "istio/proxyv2:1.22"}]
        p["spec"]["containers"].append({"name": "istio-proxy", "image": "istio/proxyv2:1.22"})
        resp = self.admit(p, ns="ml")
        check(resp.get("allowed") is True and resp.get("warnings") == [
            "distenv: Istio's sidecar takes port 29500: annotate "
            "traffic.sidecar.istio.io/exclude{Inbound,Outbound}Ports"] and "patch" in resp,
            "istio: %r" % resp.get("warnings"))
        # the port excluded one way: the other way named alone
        for excluded, other in (("Outbound", "Inbound"), ("Inbound", "Outbound")):
            q = copy.deepcopy(p)
            q["metadata"].setdefault("annotations", {})[
                "traffic.sidecar.istio.io/exclude%sPorts" % excluded] = "29500"
            resp = self.admit(q, ns="ml")
            check(resp.get("allowed") is True and resp.get("warnings") == [
                "distenv: Istio's sidecar takes port 29500: annotate "
                "traffic.sidecar.istio.io/exclude%sPorts" % other] and "patch" in resp,
                "istio, %s excluded: %r" % (excluded, resp.get("warnings")))
    def case_kind_rules(self):
        """The JobSet and LeaderWorkerSet rules of /validate and /mutate over HTTPS, on the
        objects their defaulting webhooks store and the pods their controllers make, each
        with one thing broken, with the exact words."""
        def js(name="js", rjobs=(("workers", 2, 2),), anns=None, **spec):
            d = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                 "metadata": {"name": name, "namespace": "ml"},
                 "spec": {"replicatedJobs": [{"name": n, "replicas": r, "template": {"spec": {
                     "completions": c, "parallelism": c, "completionMode": "Indexed",
                     "template": {"metadata": {"labels": {"distenv.dev/inject": "true"},
                                               "annotations": dict(anns or {})},
                                  "spec": {"restartPolicy": "Never", "containers": [
                                      {"name": "train", "image": "train:1.0"}]}}}}}
                     for n, r, c in rjobs]}}
            d["spec"].update(spec)
            return d

        def lws(name="lws", size=4, anns=None, ctr=None, lwt=None, **spec):
            d = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                 "metadata": {"name": name, "namespace": "ml"},
                 "spec": {"replicas": 2, "leaderWorkerTemplate": {"size": size, "workerTemplate": {
                     "metadata": {"labels": {"distenv.dev/inject": "true"},
                                  "annotations": dict(anns or {})},
                     "spec": {"containers": [ctr or {"name": "train", "image": "train:1.0"}]}}}}}
            d["spec"]["leaderWorkerTemplate"].update(lwt or {})
            d["spec"].update(spec)
            return d

        def stored(doc):
            return made(doc)[0]

        def marked(pod, key, value):
            """The pod with the JobSet mark key (label and annotation) set to value (None:
            removed)."""
            pod = copy.deepcopy(pod)
            for part in ("labels", "annotations"):
                if value is None:
                    pod["metadata"][part].pop(key, None)
                else:
                    pod["metadata"][part][key] = value
            return pod
        # this server runs --no-lookups: a JobSet of one replicated Job tells its pods their
        # world with distenv.dev/world-size (else /validate refuses it, as every pod would be)
        A = {"distenv.dev/world-size": "4"}
        # /validate: a JobSet
        self.validate_says(stored(js(anns=A, network={"enableDNSHostnames": False})),
                           "distenv: JobSet js turns network.enableDNSHostnames off, so its pods "
                           "have no DNS names: leave it on")
        self.validate_says(stored(js(anns=A, network={"publishNotReadyAddresses": False})), None,
                           ["distenv: JobSet network.publishNotReadyAddresses is false: rank 0's "
                            "name resolves only once Ready"])
        self.validate_says(stored(js(rjobs=[("r%d" % i, 1, 1) for i in range(17)])),
                           "distenv: JobSet ml/js has 17 replicated Jobs, more than distenv's "
                           "limit of 16")
        self.validate_says(stored(js(rjobs=[("r%d" % i, 1, 1) for i in range(16)])), None, [])
        self.validate_says(stored(js(anns=A, coordinator={"replicatedJob": "workers",
                                                          "jobIndex": 2})),
                           "distenv: the coordinator of JobSet js (replicated Job workers, Job 2, "
                           "pod 0) is not one of its pods, so no pod could be rank 0: name a "
                           "replicated Job, jobIndex and podIndex that exist")
        self.validate_says(stored(js(anns={"distenv.dev/world-size": "3"})),
                           "distenv: replicated Job workers: annotation distenv.dev/world-size is "
                           "3, but JobSet js has 4 pods per world: remove it")
        self.validate_says(stored(lws(anns={"distenv.dev/world-size": "3"})),
                           "distenv: worker template: annotation distenv.dev/world-size is 3, "
                           "but LeaderWorkerSet lws has 4 pods per world: remove it")
        tpu_coord = js(anns=dict(A, **{"distenv.dev/frameworks": "tpu"}),
                       coordinator={"replicatedJob": "workers", "jobIndex": 1, "podIndex": 0})
        says = ("distenv: tpu: the coordinator of JobSet ml/js is not its first pod, so JAX's "
                "process ids (slice by slice) would not be the ranks: make the first replicated "
                "Job's first pod the coordinator or remove spec.coordinator")
        self.validate_says(stored(tpu_coord), says)
        # /mutate: a JobSet's pods (look-ups off: the annotation gives the world)
        self.mutate_says(made(tpu_coord)[1][1], says)
        pods = made(js(anns={"distenv.dev/world-size": "3"}))[1]
        self.mutate_says(pods[1], "distenv: annotation distenv.dev/world-size is 3, not a multiple "
                                  "of the 2 Jobs of JobSet ml/js")
        pods = made(js(anns=A))[1]
        self.mutate_says(marked(pods[1], "jobset.sigs.k8s.io/job-index", "x"),
                         'distenv: jobset.sigs.k8s.io/job-index "x" is not a whole number')
        self.mutate_says(marked(pods[1], "jobset.sigs.k8s.io/job-index", "7"),
                         "distenv: pod of Job ml/js-workers-0 carries JobSet labels for Job "
                         "js-workers-7: distenv does not trust labels its owner contradicts")
        self.mutate_says(marked(pods[1], "jobset.sigs.k8s.io/replicatedjob-name", None),
                         "distenv: pod of JobSet ml/js has no valid "
                         "jobset.sigs.k8s.io/replicatedjob-name")
        pods = made(js(anns=A, coordinator={"replicatedJob": "workers", "podIndex": 1}))[1]
        for coord in ("nosuch.js", "js-workers-5-0.js"):
            self.mutate_says(marked(pods[1], "jobset.sigs.k8s.io/coordinator", coord),
                             'distenv: jobset.sigs.k8s.io/coordinator "%s" does not name a pod '
                             'of JobSet ml/js' % coord)
        long_js = js(name="j" * 40, rjobs=(("w" * 20, 2, 2),), anns=A)
        self.mutate_says(made(long_js)[1][3],
                         "distenv: JobSet ml/%s: the hostname of rank 3, %s-%s-1-1, is 65 "
                         "characters, above a DNS label's 63: shorten the names"
                         % ("j" * 40, "j" * 40, "w" * 20))
        # /mutate: a LeaderWorkerSet's worker
        w = made(lws())[1][1]
        p = copy.deepcopy(w)
        p["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/group-index"] = "x"
        self.mutate_says(p, "distenv: pod lws-0-1 of LeaderWorkerSet ml/lws has group x, not a "
                            "group index: a LeaderWorkerSet with groupIdentity: Hash, whose groups "
                            "have no index and whose leaders a Deployment names; distenv reads "
                            "groupIdentity: Ordinal (<lws>-<group>[-<worker>])")
        p = copy.deepcopy(w)
        p["metadata"]["annotations"]["leaderworkerset.sigs.k8s.io/leader-name"] = "lws-7"
        self.mutate_says(p, "distenv: worker pod lws-0-1 of LeaderWorkerSet ml/lws says its leader "
                            "is lws-7 (annotation leaderworkerset.sigs.k8s.io/leader-name), not "
                            "lws-0, the leader of group 0 as distenv names it: every worker would "
                            "meet at a leader that does not exist")
        p = copy.deepcopy(w)
        p["metadata"]["labels"].pop("apps.kubernetes.io/pod-index", None)
        p["metadata"]["name"] = p["spec"]["hostname"] = "lws-0-x"
        self.mutate_says(p, "distenv: cannot tell the worker index of pod lws-0-x of "
                            "LeaderWorkerSet ml/lws")
        self.mutate_says(made(lws(anns={"distenv.dev/world-size": "3"}))[1][1],
                         "distenv: annotation distenv.dev/world-size is 3, but LeaderWorkerSet "
                         "ml/lws has 4 pods per world (one group): remove the annotation")
        # each group's own Service (UniquePerReplica) named <lws>-<group>: 64 characters for
        # a name of 62 (the API server refuses the pod after the mutating webhooks)
        self.mutate_says(made(lws(name="l" * 62, networkConfig={
            "subdomainPolicy": "UniquePerReplica"}))[1][0],
            "distenv: the Service name of group 0 of LeaderWorkerSet ml/%s is too long" % ("l" * 62))
        # TPU hosts in subgroups (the controller tells each pod the subgroup size)
        sub_lws, sub = made(lws(anns={"distenv.dev/frameworks": "tpu"}, lwt={
            "subGroupPolicy": {"subGroupSize": 2}}, ctr={
                "name": "train", "image": "train:1.0",
                "resources": {"limits": {"google.com/tpu": "4"}}}))
        check(sub[1]["metadata"]["annotations"].get(
            "leaderworkerset.sigs.k8s.io/subgroup-size") == "2", "no subgroup size: %r" % sub[1])
        sub_words = ("distenv: tpu: LeaderWorkerSet ml/lws cuts its groups into subgroups "
                     "(leaderworkerset.sigs.k8s.io/subgroup-size), which are slices of their "
                     "own; distenv's tpu serves one slice a group: remove subGroupPolicy or tpu "
                     "from distenv.dev/frameworks")
        for pod in (sub[0], sub[1]):
            self.mutate_says(pod, sub_words)
        # and at apply, from the subgroup size the controllers will write on every pod
        self.validate_says(sub_lws, sub_words)
        # a JobSet's host names past any buffer: a name of 253 (four labels) and a replicated
        # Job of 63
        name = ".".join(["j" * 63] * 4)[:253]
        self.validate_says(stored(js(name=name, rjobs=(("w" * 63, 2, 2),), anns=A)),
                           "distenv: the hostname of rank 3 of JobSet %s, is longer than a DNS "
                           "label's 63 characters: shorten the names" % name)

    def case_world_changes(self):
        """An UPDATE (with oldObject) that changes an opted-in workload's world, over HTTPS:
        warned with the old and the new world and what to do; none for a change to 0, within
        an elastic MIN:MAX, or of a LeaderWorkerSet's replicas."""
        def update(old, new):
            o, n = made(old)[0], made(new)[0]
            group, _, version = n["apiVersion"].rpartition("/")
            req = review(n, self.uid(), namespace="ml", operation="UPDATE")
            req["request"]["kind"] = {"group": group, "version": version, "kind": n["kind"]}
            req["request"]["resource"] = {"group": group, "version": version,
                                          "resource": n["kind"].lower() + "s"}
            req["request"]["oldObject"] = o
            st, _, out = self.post(req, path="/validate")
            check(st == 200, "UPDATE %s: HTTP %d" % (n["kind"], st))
            r = json.loads(out)["response"]
            check(r.get("allowed") is True, "UPDATE %s: %r" % (n["kind"], r))
            return r.get("warnings") or []

        def lws(size, replicas=2):
            return {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                    "metadata": {"name": "lws", "namespace": "ml"},
                    "spec": {"replicas": replicas, "leaderWorkerTemplate": {
                        "size": size, "workerTemplate": {
                            "metadata": {"labels": {"distenv.dev/inject": "true"}},
                            "spec": {"containers": [{"name": "train", "image": "train:1.0"}]}}}}}
        got = update(lws(4), lws(8))
        check(got == ["distenv: LeaderWorkerSet lws: 4 -> 8 pods of a group; its controller "
                      "re-creates each world whole at the new size"], "LWS size: %r" % got)
        got = update(lws(4, 2), lws(4, 3))
        check(got == [], "LWS replicas: %r" % got)
        # the server runs without look-ups: a Job's and a StatefulSet's pods read the world
        # from distenv.dev/world-size
        got = update(job_doc("bert", 2, {"distenv.dev/world-size": "2"}, subdomain="bert"),
                     job_doc("bert", 4, {"distenv.dev/world-size": "4"}, subdomain="bert"))
        check(got == ["distenv: Job bert: world 2 -> 4 ranks, but the running pods keep "
                      "WORLD_SIZE=2", "distenv: to form one world of 4, restart every pod "
                      "(delete and re-create Job bert) or use distenv.dev/elastic"],
              "Job completions: %r" % got)
        got = update(sts_doc("ddp", 2, {"distenv.dev/world-size": "2"}), sts_doc("ddp", 0))
        check(got == [], "StatefulSet to 0: %r" % got)
        el = {"distenv.dev/elastic": "1:4"}
        got = update(sts_doc("ddp", 2, dict(el, **{"distenv.dev/world-size": "2"})),
                     sts_doc("ddp", 4, dict(el, **{"distenv.dev/world-size": "4"})))
        check(got == [], "StatefulSet 2 -> 4 within elastic 1:4: %r" % got)
    def case_own_env_rules(self):
        """A container's own values of distenv's variables, over HTTPS, each rule with its
        exact words: what can never work denied at /validate (a per-rank value for every
        rank, a MASTER_ADDR that is each pod itself or another rank, one TF_CONFIG for all),
        what may be wrong warned at /mutate, a warning too long for its values shortened,
        and a MASTER_PORT or MASTER_ADDR distenv cannot use denied at both."""
        W = {"distenv.dev/world-size": "2", "distenv.dev/frameworks": "pytorch,tensorflow"}
        a0 = "ddp-0.ddp.ml.svc.cluster.local"

        def doc(env, cname="train"):
            return sts_doc("ddp", 2, W, containers=[{"name": cname, "image": "train:1.0",
                                                     "env": env}])

        def warned(d, want):
            obj, pods = made(d)
            resp = self.admit(pods[1], ns="ml")
            check(resp.get("allowed") is True and resp.get("warnings") == [want] and
                  "patch" in resp, "/mutate: %r, want %r" % (resp.get("warnings"), want))
        for env, denial, warning in (
                ([{"name": "RANK", "value": "0"}],
                 "distenv: container train sets RANK=0 for each of its 2 ranks, so they would all "
                 "claim one rank: remove RANK from its env (distenv gives each pod its own)",
                 "distenv: container train: RANK=0, not distenv's 1: another pod has that rank; "
                 "remove it"),
                ([{"name": "MASTER_ADDR", "value": "localhost"}],
                 "distenv: container train sets MASTER_ADDR=localhost, which is each pod itself: "
                 "in a world of 2 the other ranks never reach rank 0; remove it (distenv gives "
                 "%s)" % a0,
                 "distenv: container train keeps its own MASTER_ADDR (render shows both): not "
                 "rank 0's pod; remove it"),
                ([{"name": "MASTER_ADDR", "value": "ddp-1.ddp.ml.svc.cluster.local"}],
                 "distenv: container train sets MASTER_ADDR=ddp-1.ddp.ml.svc.cluster.local, which "
                 "is not rank 0's pod of StatefulSet ml/ddp (ddp-1 names no rank or another one, "
                 "and rank 0 hosts the rendezvous): remove it (distenv gives %s)" % a0,
                 "distenv: container train keeps its own MASTER_ADDR (render shows both): not "
                 "rank 0's pod; remove it"),
                ([{"name": "TF_CONFIG", "value": "{}"}],
                 "distenv: container train sets TF_CONFIG itself: one value for the 2 ranks of "
                 "StatefulSet ml/ddp gives them all one task; remove it (distenv gives each pod "
                 "its own)",
                 "distenv: container train keeps its own TF_CONFIG (render shows both): not this "
                 "pod's task; remove it")):
            self.validate_says(made(doc(env))[0], denial)
            warned(doc(env), warning)
        # a name too long for the whole warning: named shorter, never cut
        c60 = "c" * 60
        d = doc([{"name": "MASTER_ADDR", "value": "trainer-head.example.com"}], cname=c60)
        want = ("distenv: container cccccccccccccccccccc: MASTER_ADDR is not rank 0's pod (render "
                "shows it): check it")
        self.validate_says(made(d)[0], None, [want])
        warned(d, want)
        d = doc([{"name": "WORLD_SIZE", "value": "3"}], cname="c" * 63)
        want = ("distenv: container cccccccccccccccccccc... keeps its own WORLD_SIZE: env:// waits "
                "for that many; torchrun sets its own")
        self.validate_says(made(d)[0], None, [want])
        warned(d, want)
        # the name cut, the effect whole; and where even that is too long, the effect left
        # out (render prints it)
        warned(doc([{"name": "RANK", "value": "0"}], cname="c" * 40),
               "distenv: container cccccccccccccccccccc... keeps its own RANK (render shows both): "
               "another pod has that rank; remove it")
        d = doc([{"name": "NNODES", "value": "3"}], cname="c" * 40)
        want = "distenv: container cccccccccccccccccccc... keeps its own NNODES (render shows both)"
        self.validate_says(made(d)[0], None, [want])
        warned(d, want)
        # past the 8 warnings a pod keeps: the answer and its distenv.dev/warnings say how
        # many more (render prints them all)
        own = [{"name": n, "value": "7"} for n in ("WORLD_SIZE", "NNODES", "PET_NNODES",
                                                   "PET_NPROC_PER_NODE")]
        _, pods = made(sts_doc("ddp", 2, W, containers=[
            {"name": c, "image": "train:1.0", "env": own} for c in ("a", "b", "c")]))
        kept = [w % c for c in ("a", "b") for w in (
            "distenv: container %s: WORLD_SIZE=7, not distenv's 2: env:// waits for that many; "
            "torchrun sets its own",
            "distenv: container %s: NNODES=7, not distenv's 2: a launcher given --nnodes $NNODES "
            "waits for that many pods",
            "distenv: container %s: PET_NNODES=7, not distenv's 2: torchrun waits for that many "
            "nodes",
            "distenv: container %s: PET_NPROC_PER_NODE=7, not distenv's 1: torchrun starts that "
            "many processes a pod")]
        resp = self.admit(pods[1], ns="ml")
        check(resp.get("allowed") is True and resp.get("warnings") == kept + [
            "distenv: 4 more warnings not shown"], "12 warnings: %r" % resp.get("warnings"))
        patched, _ = self.admit_and_apply(pods[1], ns="ml")
        got = patched["metadata"]["annotations"].get("distenv.dev/warnings")
        check(got == "\n".join(kept + ["distenv: 4 more warnings not shown (render prints them "
                                        "all)"]), "12 warnings, the annotation: %r" % got)
        # values distenv cannot build on
        for env, denial in (
                ([{"name": "MASTER_PORT", "value": "http"}],
                 'distenv: container train sets MASTER_PORT to "http", which is not a port number '
                 'between 1 and 65535'),
                ([{"name": "MASTER_ADDR", "value": ""}],
                 "distenv: container train sets MASTER_ADDR to an empty or over-long value")):
            obj, pods = made(doc(env))
            self.validate_says(obj, denial)
            self.mutate_says(pods[1], denial)

    def case_owner_marks(self):
        """A pod whose marks and owner disagree, over HTTPS: a JobSet name that is no name, a
        LeaderWorkerSet worker whose StatefulSet is another group's or whose group is not
        known; exact words."""
        _, pods = made({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                        "metadata": {"name": "js", "namespace": "ml"},
                        "spec": {"replicatedJobs": [{"name": "workers", "replicas": 2, "template": {
                            "spec": {"completions": 2, "parallelism": 2, "template": {
                                "metadata": {"labels": {"distenv.dev/inject": "true"},
                                             "annotations": {"distenv.dev/world-size": "4"}},
                                "spec": {"restartPolicy": "Never", "containers": [
                                    {"name": "train", "image": "train:1.0"}]}}}}}]}})
        p = copy.deepcopy(pods[1])
        for part in ("labels", "annotations"):
            p["metadata"][part]["jobset.sigs.k8s.io/jobset-name"] = "Bad_JS"
        self.mutate_says(p, 'distenv: the pod\'s JobSet name "Bad_JS" is not valid')
        _, pods = made({"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                        "metadata": {"name": "lws", "namespace": "ml"},
                        "spec": {"replicas": 2, "leaderWorkerTemplate": {"size": 4, "workerTemplate": {
                            "metadata": {"labels": {"distenv.dev/inject": "true"}},
                            "spec": {"containers": [{"name": "train", "image": "train:1.0"}]}}}}})
        p = copy.deepcopy(pods[1])
        p["metadata"]["ownerReferences"][0]["name"] = "lws-1"
        self.mutate_says(p, "distenv: pod of StatefulSet ml/lws-1 carries LeaderWorkerSet labels "
                            "for StatefulSet lws-0: distenv does not trust labels its owner "
                            "contradicts")
        p = copy.deepcopy(pods[1])
        del p["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/group-index"]
        p["metadata"]["ownerReferences"][0]["name"] = "lwsx"
        self.mutate_says(p, "distenv: cannot tell the group of pod lws-0-1 of LeaderWorkerSet "
                            "ml/lws")
        # a worker with the LeaderWorkerSet's marks that a ReplicaSet controls
        p = copy.deepcopy(pods[1])
        p["metadata"]["ownerReferences"][0].update(kind="ReplicaSet", name="lws-5d8f")
        self.mutate_says(p, "distenv: pod lws-0-1 carries the marks of LeaderWorkerSet ml/lws but "
                            "is controlled by ReplicaSet lws-5d8f: a LeaderWorkerSet with "
                            "groupIdentity: Hash, whose groups have no index and whose leaders a "
                            "Deployment names; distenv reads groupIdentity: Ordinal "
                            "(<lws>-<group>[-<worker>])")

    def case_uid_limit(self):
        """request.uid at its limit (127 characters) is echoed; one more is HTTP 400 naming
        both lengths, at /mutate and /validate."""
        pod = sts_pod("ddp", 1, annotations={"distenv.dev/world-size": "2"})
        for path in ("/mutate", "/validate"):
            st, _, out = self.post(review(pod, "u" * 127), path=path)
            check(st == 200 and json.loads(out)["response"]["uid"] == "u" * 127,
                  "%s, uid of 127: HTTP %d %r" % (path, st, out[:200]))
            st, _, out = self.post(review(pod, "u" * 128), path=path)
            check(st == 400 and json.loads(out) == {
                "error": "AdmissionReview request.uid is 128 characters long, more than 127"},
                "%s, uid of 128: HTTP %d %r" % (path, st, out[:200]))

    def case_pod_budget(self):
        """The pod's size budget over HTTPS: 20 containers of a world of 2000, TF_CONFIG
        (about 90 KB each) would take the pod past the bytes distenv keeps it under: left out
        with a warning when tensorflow was only a default, refused when the annotation asks
        for it; exact words."""
        ctrs = [{"name": "c%02d" % i, "image": "train:1.0"} for i in range(20)]
        W = {"distenv.dev/world-size": "2000"}
        _, pods = made(sts_doc("ddp", 2, W, containers=ctrs))
        resp = self.admit(pods[1], ns="ml")
        check(resp.get("allowed") is True and resp.get("warnings") == [
            "distenv: TF_CONFIG left out: the pod would pass 1179648 bytes with it in 20 "
            "containers"], "default frameworks: %r" % resp.get("warnings"))
        patched, _ = self.admit_and_apply(pods[1], ns="ml")
        names = {e["name"] for c in patched["spec"]["containers"] for e in c["env"]}
        check("TF_CONFIG" not in names and "MASTER_ADDR" in names, "env names %r" % names)
        _, pods = made(sts_doc("ddp", 2, dict(W, **{"distenv.dev/frameworks": "pytorch,tensorflow"}),
                               containers=ctrs))
        resp = self.admit(pods[1], ns="ml")
        msg = (resp.get("status") or {}).get("message", "")
        check(resp.get("allowed") is False and re.fullmatch(
            r"distenv: the pod with its injected environment would be about \d+ bytes, above the "
            r"1179648 bytes distenv keeps pods under so that the API server can store them: drop "
            r"tensorflow from distenv.dev/frameworks, or inject into fewer containers "
            r"\(annotation distenv.dev/containers\)", msg), "asked for: %r" % msg)


GOLDEN_WAIT_IMAGE = "distenv:test"


class WaitSuite:
    """`distenv-webhook wait`, the command of the wait-for-master init container,
    against loopback listeners it does not control and names that never resolve."""

    def __init__(self, binary):
        self.binary = binary

    def run(self, env, *args, timeout=30):
        t0 = time.monotonic()
        p = subprocess.run([self.binary, "wait"] + list(args), env=dict(env, PATH="/usr/bin:/bin"),
                           capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stderr, time.monotonic() - t0

    def case_late_listener(self):
        # A port that is free now; a listener opens on it after 2 s.
        port = free_port()
        srv = socket.socket()
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)

        def listen_late():
            time.sleep(2)
            srv.bind(("127.0.0.1", port))
            srv.listen(4)

        th = threading.Thread(target=listen_late, daemon=True)
        th.start()
        try:
            rc, err, secs = self.run({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port),
                                      "RANK": "3"}, "--timeout", "30s")
        finally:
            th.join(5)
            srv.close()
        check(rc == 0, "exit %d: %s" % (rc, err))
        check(1.5 <= secs < 15, "returned after %.1f s, want once the listener opened" % secs)
        check("127.0.0.1:%d accepts connections" % port in err, err)

    def case_never_resolves(self):
        rc, err, secs = self.run({"MASTER_ADDR": "rank0.distenv-never.invalid",
                                  "MASTER_PORT": "29500", "RANK": "1"}, "--timeout", "7s")
        check(rc == 1, "exit %d: %s" % (rc, err))
        check(6.5 <= secs < 25, "gave up after %.1f s, want about 7" % secs)
        last = err.strip().splitlines()[-1]
        check(last.startswith("distenv-webhook wait: timed out after 7s waiting for "
                              "rank0.distenv-never.invalid to resolve"), last)
        check("waiting for rank0.distenv-never.invalid to resolve" in err,
              "no progress line: %s" % err)
        # the line before names the likely causes, a hostNetwork pod's DNS policy among them
        causes = err.strip().splitlines()[-2]
        check(causes.startswith("distenv-webhook wait: rank0.distenv-never.invalid does not "
                                "resolve in this pod; likely causes:") and
              "hostNetwork without dnsPolicy: ClusterFirstWithHostNet" in causes and
              "headless Service" in causes, causes)

    def case_silent_resolver(self):
        """A nameserver that takes queries and never answers (glibc would wait its
        timeout x attempts, here 30 s x 5, per look-up): each look-up is bounded like
        each connect, so --timeout 3s still ends the wait. Needs root (a network and
        mount namespace of its own: loopback, a resolv.conf bound over /etc/resolv.conf,
        a silent UDP and TCP sink on 127.0.0.1:53)."""
        if os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("ip") is None:
            print("skip - silent resolver: needs root, unshare and ip")
            return
        d = tempfile.mkdtemp(prefix="distenv-wait-dns-")
        try:
            with open(os.path.join(d, "resolv.conf"), "w") as f:
                f.write("nameserver 127.0.0.1\noptions timeout:30 attempts:5\n")
            with open(os.path.join(d, "sink.py"), "w") as f:
                f.write("import socket, sys, time\n"
                        "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                        "u.bind(('127.0.0.1', 53))\n"
                        "t = socket.socket()\nt.bind(('127.0.0.1', 53))\nt.listen(16)\n"
                        "open(sys.argv[1] + '/ready', 'w').close()\n"
                        "u.settimeout(1)\nn = 0\nend = time.monotonic() + 120\n"
                        "while time.monotonic() < end:\n"
                        "    try:\n        u.recvfrom(512)\n    except OSError:\n"
                        "        continue\n    n += 1\n"
                        "    open(sys.argv[1] + '/queries', 'w').write(str(n))\n")
            script = ('ip link set lo up && mount --bind "$1/resolv.conf" /etc/resolv.conf && '
                      '{ python3 "$1/sink.py" "$1" & sink=$!; } && '
                      'i=0; while [ ! -e "$1/ready" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; '
                      'MASTER_ADDR=rank0.distenv-silent.test MASTER_PORT=29500 RANK=1 '
                      '"$2" wait --timeout 3s; rc=$?; kill $sink; exit $rc')
            # 30 s bounds the test; a look-up without its own bound takes 150 s here
            # (its own process group, so that on the bound the sink and wait go with it)
            p = subprocess.Popen(["unshare", "--net", "--mount", "--", "sh", "-c", script, "sh", d,
                                  self.binary], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, start_new_session=True)
            try:
                _, err = p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate()
                raise CaseFailed("wait --timeout 3s still waiting after 30 s: an unbounded "
                                     "look-up")
            err = err.strip()
            check(p.returncode == 1, "exit %d: %s" % (p.returncode, err))
            check(err.splitlines()[-1].startswith(
                "distenv-webhook wait: timed out after 3s waiting for rank0.distenv-silent.test "
                "to resolve"), err)
            queries = open(os.path.join(d, "queries")).read() if os.path.exists(
                os.path.join(d, "queries")) else "0"
            check(int(queries) >= 1, "the silent nameserver saw no query: %s" % err)
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def case_refused_timeout(self):
        port = free_port()  # nothing listens
        rc, err, secs = self.run({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port),
                                  "RANK": "2"}, "--timeout", "2s")
        check(rc == 1 and 1.5 <= secs < 15, "exit %d after %.1f s: %s" % (rc, secs, err))
        check("timed out after 2s waiting for 127.0.0.1:%d to accept connections "
              "(Connection refused)" % port in err, err)

    def case_rank0(self):
        port = free_port()  # rank 0's own process opens the port: no listener needed
        rc, err, secs = self.run({"MASTER_ADDR": "localhost", "MASTER_PORT": str(port),
                                  "RANK": "0"}, "--timeout", "30s")
        check(rc == 0 and secs < 5, "exit %d after %.1f s: %s" % (rc, secs, err))

    def case_bad_input(self):
        for env, args, want in [
                ({"MASTER_PORT": "1", "RANK": "1"}, [], "MASTER_ADDR is not set"),
                ({"MASTER_ADDR": "a", "MASTER_PORT": "http", "RANK": "1"}, [],
                 "MASTER_PORT \"http\" is not a port"),
                ({"MASTER_ADDR": "a", "MASTER_PORT": "1", "RANK": "-1"}, [], "RANK \"-1\""),
                ({"MASTER_ADDR": "a", "MASTER_PORT": "1", "RANK": "1"}, ["--timeout", "5"],
                 "--timeout \"5\" is not a duration"),
                ({"MASTER_ADDR": "a", "MASTER_PORT": "1", "RANK": "1"}, ["--bogus"],
                 "usage: distenv-webhook wait")]:
            rc, err, _ = self.run(env, *args)
            check(rc == 2 and want in err, "%r %r: exit %d: %s" % (env, args, rc, err))


class FakeAPI:
    """A loopback HTTPS stand-in for the API server's GET statefulset/job (and, for /validate,
    GET service and LIST networkpolicies), with a bearer token."""

    TOKEN = "distenv-it-token"

    def __init__(self, certdir):
        import http.server

        api = self
        self.expect = None  # (path, object) served for the fixture being run
        self.extra = {}  # more paths served for it: path -> object
        self.hold = None  # a threading.Event: GETs of expect's path wait for it (at most 60 s)
        self.seen = []
        self.unexpected = []

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_GET(self):
                api.seen.append(self.path)
                if self.headers.get("Authorization") != "Bearer " + FakeAPI.TOKEN:
                    return self.reply(401, {"kind": "Status", "code": 401,
                                            "reason": "Unauthorized"})
                exp = api.expect
                if self.path.split("?")[0] in api.extra:
                    return self.reply(200, api.extra[self.path.split("?")[0]])
                if exp is None or self.path.split("?")[0] != exp[0]:
                    if exp is not None:
                        api.unexpected.append(self.path)
                    return self.reply(404, {"kind": "Status", "code": 404, "reason": "NotFound",
                                            "message": "not found"})
                hold = api.hold
                if hold is not None:
                    hold.wait(60)
                    exp = api.expect
                return self.reply(200, exp[1])

            def reply(self, code, obj):
                data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(certdir, "tls.crt"), os.path.join(certdir, "tls.key"))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def kubeconfig(self, path, ca):
        with open(path, "w") as f:
            f.write("apiVersion: v1\nkind: Config\nclusters:\n- name: it\n  cluster:\n"
                    "    server: https://127.0.0.1:%d\n    certificate-authority: %s\n"
                    "users:\n- name: it\n  user:\n    token: %s\ncontexts:\n- name: it\n"
                    "  context:\n    cluster: it\n    user: it\ncurrent-context: it\n"
                    % (self.port, ca, FakeAPI.TOKEN))

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def workload_of(req):
    """(API path, object) the look-up of this review's pod must GET, from a fixture's lookup."""
    r = req["request"]
    meta = r["object"]["metadata"]
    ns = meta.get("namespace") or r.get("namespace")
    owner = [o for o in meta.get("ownerReferences", []) if o.get("controller")][0]
    js = (meta.get("labels") or {}).get("jobset.sigs.k8s.io/jobset-name")
    if js:
        return "/apis/jobset.x-k8s.io/v1alpha2/namespaces/%s/jobsets/%s" % (ns, js)
    if owner["kind"] == "StatefulSet":
        return "/apis/apps/v1/namespaces/%s/statefulsets/%s" % (ns, owner["name"])
    return "/apis/batch/v1/namespaces/%s/jobs/%s" % (ns, owner["name"])


def workload_object(path, spec):
    """The API server's answer: a fixture's whole object, or one made from its fields."""
    if "object" in spec:
        return spec["object"]
    name = path.rsplit("/", 1)[1]
    if "/statefulsets/" in path:
        obj = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name},
               "spec": {"replicas": spec["replicas"], "serviceName": name,
                        "selector": {"matchLabels": {"app": name}}, "template": {}}}
        if "ordinalsStart" in spec:
            obj["spec"]["ordinals"] = {"start": spec["ordinalsStart"]}
        return obj
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"completions": spec["completions"], "parallelism": spec["parallelism"],
                     "completionMode": "Indexed" if spec.get("indexed") else "NonIndexed",
                     "template": {}}}


class LookupSuite:
    """A second server with look-ups on, against FakeAPI: the fixtures that need a look-up."""

    def __init__(self, suite):
        self.s = suite
        self.api = None
        self.server = None

    def case_start(self):
        s = self.s
        apicerts = s.gen_certs("apicerts")
        self.api = FakeAPI(apicerts)
        kc = os.path.join(s.work, "kubeconfig")
        self.api.kubeconfig(kc, os.path.join(apicerts, "ca.crt"))
        self.server = Server(s.args.binary, s.work, os.path.join(s.certs1, "tls.crt"),
                             os.path.join(s.certs1, "tls.key"), s.args.valgrind,
                             extra=["--kubeconfig", kc],
                             config="lookups:\n  cacheTTLMs: 0\n  timeoutMs: %d\n"
                                    % int(3000 * SLOW))
        self.ctx = tls_context([os.path.join(s.certs1, "ca.crt")])
        self.server.wait_ready(self.ctx)

    def post(self, req):
        c = Conn(self.server.port, self.ctx, timeout=30)
        st, _, out = c.call("POST", "/mutate", body=json.dumps(req))
        c.close()
        check(st == 200, "HTTP %d: %r" % (st, out[:200]))
        return json.loads(out)

    def case_golden(self, name):
        req = json.load(open(os.path.join(DATA, name + ".request.json")))
        want = json.load(open(os.path.join(DATA, name + ".response.json")))
        spec = json.load(open(os.path.join(DATA, name + ".lookup.json")))
        if name.startswith("validate-"):
            return self.validate_golden(req, want, spec)
        path = workload_of(req)
        self.api.expect = (path, workload_object(path, spec))
        before = len(self.api.seen)
        got = self.post(req)
        if "patch" in got.get("response", {}):
            got["response"]["patch"] = json.loads(base64.b64decode(got["response"]["patch"]))
        check(got == want, "response differs:\n got: %s\nwant: %s"
              % (json.dumps(got, sort_keys=True)[:1500], json.dumps(want, sort_keys=True)[:1500]))
        check(not self.api.unexpected, "unexpected GETs: %r" % self.api.unexpected)
        ann = req["request"]["object"]["metadata"].get("annotations") or {}
        if "patch" in got["response"] and "distenv.dev/world-size" not in ann:
            check(len(self.api.seen) > before, "patched without a look-up reaching the API")

    def shipped_configs(self):
        """The configurations distenv ships: the binary's own defaults (no --config) and the
        config.yaml the chart renders from its default values.yaml (deploy/distenv.yaml's
        ConfigMap: helm template's output, held to the chart by make manifests-check)."""
        with open(os.path.join(REPO, "deploy", "distenv.yaml")) as f:
            cm = next(d for d in yaml.safe_load_all(f) if d and d.get("kind") == "ConfigMap")
        return [("the binary's defaults", False),
                ("the chart's default values", cm["data"]["config.yaml"])]

    def case_shipped_defaults(self):
        """Each rule whose answer depends on a setting, under the settings distenv ships (the
        binary's defaults; the chart's default values), look-ups on as both ship them, over
        HTTPS with the controllers' pods: defaults.port 29500, defaults.frameworks pytorch and
        tensorflow, gpuResources nvidia.com/gpu and amd.com/gpu (nproc-per-node), no
        clusterDomain (the pod's resolv.conf, else cluster.local), lookups on (the world of a
        StatefulSet from the API; ordinals from 1 allowed at /validate), waitInit (distenv's own
        image, IfNotPresent), limits.maxWorldSize 65536 and limits.maxContainers 256."""
        s = self.s
        version = open(os.path.join(REPO, "VERSION")).read().strip()
        kc = os.path.join(s.work, "kubeconfig")
        for label, config in self.shipped_configs():
            srv = Server(s.args.binary, s.work, os.path.join(s.certs1, "tls.crt"),
                         os.path.join(s.certs1, "tls.key"), s.args.valgrind,
                         extra=["--kubeconfig", kc, "--probe-listen",
                                "127.0.0.1:%d" % free_port()], config=config, exact=True)
            try:
                srv.wait_ready(self.ctx)
                self.shipped_probes(srv, label, version)
            finally:
                self.api.expect = None
                srv.stop()

    def shipped_probes(self, srv, label, version):
        def call(path, req):
            c = Conn(srv.port, self.ctx, timeout=60)
            st, _, out = c.call("POST", path, body=json.dumps(req))
            c.close()
            check(st == 200, "%s: %s: HTTP %d: %r" % (label, path, st, out[:200]))
            return json.loads(out)["response"]

        def sts(name, replicas, resources=None, anns=None, extra=None, containers=1):
            ctrs = [{"name": "main" if i == 0 else "side-%d" % i,
                     "image": "registry.invalid/train:1"} for i in range(containers)]
            if resources:
                ctrs[0]["resources"] = {"limits": resources}
            meta = {"labels": {"app": name, "distenv.dev/inject": "true"}}
            if anns:
                meta["annotations"] = anns
            spec = {"replicas": replicas, "serviceName": name, "podManagementPolicy": "Parallel",
                    "selector": {"matchLabels": {"app": name}},
                    "template": {"metadata": meta, "spec": {"containers": ctrs}}}
            spec.update(extra or {})
            return {"apiVersion": "apps/v1", "kind": "StatefulSet",
                    "metadata": {"name": name, "namespace": "ml"}, "spec": spec}

        def mutate(doc, ordinal):
            obj, path, pods = equivalence.controllers.workload_pods(doc)
            self.api.expect = (path, obj)
            pod = pods[ordinal]
            r = call("/mutate", review(pod, "%s-%s-%d" % (label[:3], path[-8:], ordinal),
                                       namespace="ml"))
            patched = jsonpatch.JsonPatch(json.loads(base64.b64decode(r["patch"]))).apply(
                copy.deepcopy(pod)) if r.get("patch") else None
            return r, patched

        def env_of(patched, i=0):
            return {e["name"]: e.get("value") for e in patched["spec"]["containers"][i]["env"]}

        # port, frameworks, GPUs (nvidia.com/gpu), cluster domain, look-ups: rank 1 of 2
        for resource, gpus in (("nvidia.com/gpu", "8"), ("amd.com/gpu", "4")):
            r, patched = mutate(sts("ddp", 2, {resource: gpus}), 1)
            check(r.get("allowed") is True and patched is not None,
                  "%s: %s %s: %r" % (label, resource, gpus, r))
            hosts = ["ddp-%d.ddp.ml.svc.cluster.local" % i for i in range(2)]
            check_env(patched["spec"]["containers"][0]["env"],
                      expected_env(hosts[0], hosts, 29500, 1, 2, int(gpus),
                                   ("pytorch", "tensorflow")),
                      [], "%s: %s %s" % (label, resource, gpus))
        # a GPU of a resource not listed: one process, and said so
        r, patched = mutate(sts("ddp", 2, {"habana.ai/gaudi": "8"}), 1)
        check(env_of(patched).get("PET_NPROC_PER_NODE") == "1" and
              r.get("warnings") == ["distenv: 8 habana.ai/gaudi a pod, not in gpuResources: "
                                    "PET_NPROC_PER_NODE=1; set distenv.dev/nproc-per-node"],
              "%s: habana.ai/gaudi: %r" % (label, r))
        # the wait-for-master init container: distenv's own image of this version
        r, patched = mutate(sts("ddp", 2, anns={"distenv.dev/wait-for-master": "5m"}), 1)
        inits = (patched or {}).get("spec", {}).get("initContainers") or [{}]
        check(inits[0].get("image") == "distenv:" + version and
              inits[0].get("imagePullPolicy") == "IfNotPresent",
              "%s: wait-for-master: %r" % (label, inits))
        # the workload at apply time, as /validate sees it
        def validate(doc):
            req = review(doc, "%s-v-%s" % (label[:3], doc["metadata"]["name"]), namespace="ml")
            req["request"]["kind"] = {"group": "apps", "version": "v1", "kind": "StatefulSet"}
            req["request"]["resource"] = {"group": "apps", "version": "v1",
                                          "resource": "statefulsets"}
            return call("/validate", req)
        # limits.maxWorldSize: 65536 ranks allowed, 65537 refused, the pod and the workload
        r, patched = mutate(sts("big", 65536), 65535)
        check(r.get("allowed") is True and env_of(patched).get("WORLD_SIZE") == "65536",
              "%s: 65536 ranks: %r" % (label, r.get("status")))
        r, _ = mutate(sts("big", 65537), 0)
        check(r.get("allowed") is False and r["status"]["message"] ==
              "distenv: StatefulSet ml/big has a world size of 65537, above the limit of 65536",
              "%s: 65537 ranks: %r" % (label, r.get("status")))
        r = validate(sts("big", 65536))
        check(r.get("allowed") is True, "%s: 65536 ranks at /validate: %r" % (label, r))
        r = validate(sts("big", 65537))
        check(r.get("allowed") is False and r["status"]["message"] ==
              "distenv: StatefulSet ml/big has a world size of 65537, above the limit of 65536",
              "%s: 65537 ranks at /validate: %r" % (label, r))
        # limits.maxContainers: 256 containers allowed, 257 refused, the pod and the workload
        r, _ = mutate(sts("wide", 2, containers=256), 0)
        check(r.get("allowed") is True, "%s: 256 containers: %r" % (label, r.get("status")))
        r = validate(sts("wide", 2, containers=256))
        check(r.get("allowed") is True, "%s: 256 containers at /validate: %r" % (label, r))
        r, _ = mutate(sts("wide", 2, containers=257), 0)
        check(r.get("allowed") is False and r["status"]["message"] ==
              "distenv: the pod has 257 containers, more than the limit of 256",
              "%s: 257 containers: %r" % (label, r.get("status")))
        r = validate(sts("wide", 2, containers=257))
        check(r.get("allowed") is False and r["status"]["message"] ==
              "distenv: the pod has 257 containers, more than the limit of 256",
              "%s: 257 containers at /validate: %r" % (label, r))
        # limits.maxEnvPerContainer: a container's own 4,000 entries and distenv's within it,
        # 4,097 of its own above it
        for own, allowed in ((4000, True), (4097, False)):
            doc = sts("envs", 2)
            doc["spec"]["template"]["spec"]["containers"][0]["env"] = [
                {"name": "V%d" % i, "value": "x"} for i in range(own)]
            r, patched = mutate(doc, 1)
            if allowed:
                check(r.get("allowed") is True and
                      len(patched["spec"]["containers"][0]["env"]) == own + 12,
                      "%s: %d own env entries: %r" % (label, own, r.get("status")))
            else:
                check(r.get("allowed") is False and r["status"]["message"] ==
                      "distenv: container main has %d env entries, more than the limit of "
                      "4096" % own, "%s: %d own env entries: %r" % (label, own, r.get("status")))
        # look-ups on: a StatefulSet whose ordinals start at 1 is read from the API, allowed
        r = validate(sts("ddp", 2, extra={"ordinals": {"start": 1}}))
        check(r.get("allowed") is True, "%s: ordinals from 1: %r" % (label, r))

    def case_netpol_list_fails(self):
        """A default-deny namespace whose list fails (here 404): no warning, still allowed."""
        name = "validate-sts-netpol-deny"
        req = json.load(open(os.path.join(DATA, name + ".request.json")))
        want = json.load(open(os.path.join(DATA, name + ".response.json")))
        del want["response"]["warnings"]
        self.validate_golden(req, want, {"networkPolicies": []}, listed=False)

    @staticmethod
    def netpols_path(ns):
        return "/apis/networking.k8s.io/v1/namespaces/%s/networkpolicies" % ns

    def validate_with(self, req, policies, extra=None):
        """POSTs req to this server's /validate while the fake API lists policies as the
        namespace's NetworkPolicies (None: that LIST fails, 404) and serves extra's paths;
        (HTTP status, body)."""
        lst = self.netpols_path(req["request"]["namespace"])
        self.api.expect = None
        self.api.extra = dict(extra or {})
        if policies is not None:
            self.api.extra[lst] = {"apiVersion": "networking.k8s.io/v1",
                                   "kind": "NetworkPolicyList",
                                   "metadata": {"resourceVersion": "1"}, "items": list(policies)}
        try:
            c = Conn(self.server.port, self.ctx, timeout=30)
            st, _, out = c.call("POST", "/validate", body=json.dumps(req))
            c.close()
        finally:
            self.api.extra = {}
        return st, out

    def validate_golden(self, req, want, spec, listed=True):
        """/validate with look-ups: the namespace's NetworkPolicies as the lookup file lists
        them, and a Service that passes every check (the golden harness looks up none)."""
        r = req["request"]
        ns, obj = r["namespace"], r["object"]
        lst = self.netpols_path(ns)
        extra = {}
        svc = obj["spec"].get("serviceName")
        if svc:
            labels = obj["spec"]["template"]["metadata"]["labels"]
            extra["/api/v1/namespaces/%s/services/%s" % (ns, svc)] = {
                "apiVersion": "v1", "kind": "Service", "metadata": {"name": svc},
                "spec": {"clusterIP": "None", "publishNotReadyAddresses": True,
                         "selector": {"app": labels["app"]}}}
        before = len(self.api.seen)
        st, out = self.validate_with(req, spec.get("networkPolicies", []) if listed else None,
                                     extra)
        check(st == 200, "HTTP %d: %r" % (st, out[:200]))
        got = json.loads(out)
        check(got == want, "response differs:\n got: %s\nwant: %s"
              % (json.dumps(got, sort_keys=True), json.dumps(want, sort_keys=True)))
        lists = [p for p in self.api.seen[before:] if p.split("?")[0] == lst]
        check(len(lists) == 1 and "limit=" in lists[0], "LISTs of %s: %r" % (lst, lists))

    def case_scale(self):
        """`kubectl scale` of a StatefulSet (UPDATE statefulsets/scale): the Scale object has
        only the replicas, so the StatefulSet is read from the API; 4 -> 8 is warned, 4 -> 0
        is not, a StatefulSet that does not opt in is not, and one that cannot be read is
        allowed with a warning saying the scale was not checked."""
        path = "/apis/apps/v1/namespaces/ml/statefulsets/ddp"

        def sts(opted, replicas=4):
            labels = {"app": "ddp"}
            if opted:
                labels["distenv.dev/inject"] = "true"
            return {"apiVersion": "apps/v1", "kind": "StatefulSet",
                    "metadata": {"name": "ddp", "namespace": "ml", "uid": "u-ddp"},
                    "spec": {"replicas": replicas, "serviceName": "ddp",
                             "selector": {"matchLabels": {"app": "ddp"}},
                             "template": {"metadata": {"labels": labels},
                                          "spec": {"containers": [{"name": "t", "image": "x"}]}}}}

        def scale_review(uid, old, new):
            def scale(n):
                return {"apiVersion": "autoscaling/v1", "kind": "Scale",
                        "metadata": {"name": "ddp", "namespace": "ml", "uid": "u-ddp"},
                        "spec": {"replicas": n}, "status": {"replicas": old}}
            return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                    "request": {"uid": uid,
                                "kind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
                                "resource": {"group": "apps", "version": "v1",
                                             "resource": "statefulsets"},
                                "subResource": "scale",
                                "requestKind": {"group": "autoscaling", "version": "v1",
                                                "kind": "Scale"},
                                "name": "ddp", "namespace": "ml", "operation": "UPDATE",
                                "userInfo": {"username": "admin"},
                                "object": scale(new), "oldObject": scale(old), "dryRun": False}}

        def call(req):
            c = Conn(self.server.port, self.ctx, timeout=30)
            st, _, out = c.call("POST", "/validate", body=json.dumps(req))
            c.close()
            check(st == 200, "HTTP %d: %r" % (st, out[:200]))
            r = json.loads(out)["response"]
            check(r.get("uid") == req["request"]["uid"] and r.get("allowed") is True,
                  "not allowed: %r" % r)
            return r.get("warnings", [])

        try:
            self.api.extra = {path: sts(True)}
            before = len(self.api.seen)
            w = call(scale_review("s1", 4, 8))
            check(w == ["distenv: StatefulSet ddp: world 4 -> 8 ranks, but the running pods "
                        "keep WORLD_SIZE=4",
                        "distenv: to form one world of 8, restart every pod (kubectl rollout "
                        "restart statefulset/ddp) or use distenv.dev/elastic"],
                  "4 -> 8: %r" % w)
            check(self.api.seen[before:] == [path], "GETs: %r" % self.api.seen[before:])
            check(call(scale_review("s2", 4, 0)) == [], "4 -> 0 warned")
            check(call(scale_review("s3", 0, 4)) == [], "0 -> 4 warned")
            self.api.extra = {path: sts(False)}
            check(call(scale_review("s4", 4, 8)) == [], "not opted in, warned")
            self.api.extra = {}
            w = call(scale_review("s5", 4, 8))
            check(len(w) == 0, "a StatefulSet that is not there (404) warned: %r" % w)
            self.api.expect = (path, None)  # served as 404 below: the answer is not an object
            self.api.extra = {path: ["not", "an", "object"]}
            w = call(scale_review("s6", 4, 8))
            check(len(w) == 1 and w[0].startswith("distenv: the world change of this scale is "
                                                  "not checked: "), "unreadable: %r" % w)
            # a namespace that is no namespace name: not asked for
            self.api.expect = None
            self.api.extra = {path: sts(True)}
            req = scale_review("s7", 4, 8)
            req["request"]["namespace"] = "Bad_NS"
            before = len(self.api.seen)
            w = call(req)
            check(w == ["distenv: the world change of this scale is not checked: namespace "
                        "'Bad_NS' is not a valid namespace name"] and
                  self.api.seen[before:] == [], "namespace Bad_NS: %r, GETs %r"
                  % (w, self.api.seen[before:]))
        finally:
            self.api.extra = {}
            self.api.expect = None

    def case_recreated_job(self):
        """A Job deleted and created again under the same name with more completions,
        within the cache TTL: the new pods never get the old world size."""
        s = self.s
        srv = Server(s.args.binary, s.work, os.path.join(s.certs1, "tls.crt"),
                     os.path.join(s.certs1, "tls.key"), s.args.valgrind,
                     extra=["--kubeconfig", os.path.join(s.work, "kubeconfig")],
                     config="lookups:\n  cacheTTLMs: 60000\n  timeoutMs: %d\n" % int(3000 * SLOW))
        try:
            srv.wait_ready(self.ctx)
            path = "/apis/batch/v1/namespaces/default/jobs/rerun"

            def job(uid, n):
                return {"apiVersion": "batch/v1", "kind": "Job",
                        "metadata": {"name": "rerun", "uid": uid},
                        "spec": {"completions": n, "parallelism": n,
                                 "completionMode": "Indexed", "template": {}}}

            def admit(index, owner_uid):
                pod = job_pod("rerun", index, subdomain="rerun")
                pod["metadata"]["ownerReferences"][0]["uid"] = owner_uid
                c = Conn(srv.port, self.ctx, timeout=30)
                st, _, out = c.call("POST", "/mutate", body=json.dumps(
                    review(pod, "rerun-%s-%d" % (owner_uid, index))))
                c.close()
                check(st == 200, "HTTP %d" % st)
                resp = json.loads(out)["response"]
                if not resp.get("allowed"):
                    return resp["status"]["message"]
                patched = jsonpatch.JsonPatch(json.loads(base64.b64decode(resp["patch"]))).apply(pod)
                return {e["name"]: e.get("value") for e in patched["spec"]["containers"][0]["env"]}

            self.api.expect = (path, job("uid-old", 2))
            got = admit(0, "uid-old")
            check(isinstance(got, dict) and got.get("WORLD_SIZE") == "2", "old Job pod 0: %r" % got)
            before = len(self.api.seen)
            check(isinstance(admit(1, "uid-old"), dict) and len(self.api.seen) == before,
                  "the old Job's second pod was not answered from the cache")
            self.api.expect = (path, job("uid-new", 4))  # deleted and created again
            for i in (0, 3):
                got = admit(i, "uid-new")
                check(isinstance(got, dict) and got.get("WORLD_SIZE") == "4"
                      and got.get("RANK") == str(i), "new Job pod %d: %r" % (i, got))
        finally:
            srv.kill()

    def case_refresh_ahead(self):
        """In a burst the Job's cached answer is read again before its TTL ends: while that
        GET is held, the other pods are answered from the live entry, without waiting."""
        s = self.s
        ttl_ms = 6000  # refreshed from 3 s (min(timeoutMs, TTL / 2) before the end)
        srv = Server(s.args.binary, s.work, os.path.join(s.certs1, "tls.crt"),
                     os.path.join(s.certs1, "tls.key"), s.args.valgrind,
                     extra=["--kubeconfig", os.path.join(s.work, "kubeconfig")],
                     config="lookups:\n  cacheTTLMs: %d\n  timeoutMs: %d\n"
                            % (ttl_ms, int(3000 * SLOW)))
        hold = threading.Event()
        path = "/apis/batch/v1/namespaces/default/jobs/burst"
        job = {"apiVersion": "batch/v1", "kind": "Job",
               "metadata": {"name": "burst", "uid": "uid-burst"},
               "spec": {"completions": 8, "parallelism": 8, "completionMode": "Indexed",
                        "template": {}}}

        def admit(index, out=None):
            pod = job_pod("burst", index, subdomain="burst")
            pod["metadata"]["ownerReferences"][0]["uid"] = "uid-burst"
            c = Conn(srv.port, self.ctx, timeout=60)
            st, _, body = c.call("POST", "/mutate", body=json.dumps(review(pod, "burst-%d" % index)))
            c.close()
            resp = json.loads(body)["response"] if st == 200 else {}
            env = {}
            if resp.get("allowed") and resp.get("patch"):
                patched = jsonpatch.JsonPatch(json.loads(base64.b64decode(resp["patch"]))).apply(pod)
                env = {e["name"]: e.get("value") for e in patched["spec"]["containers"][0]["env"]}
            if out is not None:
                out.append((st, env))
            return st, env

        def gets():
            return len([p for p in self.api.seen if p.split("?")[0] == path])

        try:
            srv.wait_ready(self.ctx)
            self.api.expect = (path, job)
            st, env = admit(0)
            kept = time.monotonic()
            check(st == 200 and env.get("WORLD_SIZE") == "8" and gets() == 1,
                  "first pod: HTTP %d %r, %d GETs" % (st, env, gets()))
            time.sleep(ttl_ms / 2000.0 + 0.2)  # past the refresh time, 2.8 s before the TTL
            self.api.hold = hold
            got = []
            refresher = threading.Thread(target=admit, args=(1, got), daemon=True)
            refresher.start()
            for _ in range(600):
                if gets() == 2:
                    break
                time.sleep(0.01)
            check(gets() == 2, "the refresh GET did not come (%d GETs)" % gets())
            answered = [admit(i) for i in range(2, 6)]
            live = time.monotonic() - kept < ttl_ms / 1000.0
            check(not hold.is_set() and not got, "the refresh was released early")
            check(all(a[0] == 200 and a[1].get("WORLD_SIZE") == "8" for a in answered),
                  "pods 2-5 while the refresh is held: %r" % answered)
            check(gets() == 2, "pods 2-5 made %d more GETs (answered within the TTL: %s)"
                  % (gets() - 2, live))
            hold.set()
            refresher.join(60)
            check(got and got[0][0] == 200 and got[0][1].get("RANK") == "1",
                  "the refreshing pod: %r" % got)
            st, env = admit(6)
            check(st == 200 and env.get("RANK") == "6" and gets() == 2,
                  "after the refresh: HTTP %d %r, %d GETs" % (st, env, gets()))
        finally:
            self.api.hold = None
            hold.set()
            self.api.expect = None
            srv.kill()

    def case_lookup_failure(self):
        self.api.expect = None  # every GET answers 404
        uid = "lookup-fail"
        pod = sts_pod("gone", 1)
        got = self.post(review(pod, uid, namespace="ml"))["response"]
        check(got["uid"] == uid and got["allowed"] is False, "not denied: %r" % got)
        msg = got.get("status", {}).get("message", "")
        check(msg.startswith("distenv:") and "world size" in msg, "message %r" % msg)

    def case_lookup_rules(self):
        """The rules that need the workload or its Service from the API, over HTTPS against
        the fake API server: each Service check of /validate, and each /mutate denial the
        workload's own object decides (a Job not Indexed or short of its completions, Kueue's
        partial admission, another uid, a world above the limit, a start ordinal, a JobSet's
        replicated Jobs, an answer that is not a workload), with the exact words."""
        s = self.s

        def validate(doc, service=None):
            obj = made(doc)[0]
            group, _, version = obj["apiVersion"].rpartition("/")
            req = review(obj, s.uid(), namespace="ml")
            req["request"]["kind"] = {"group": group, "version": version, "kind": obj["kind"]}
            req["request"]["resource"] = {"group": group, "version": version,
                                          "resource": obj["kind"].lower() + "s"}
            st, out = self.validate_with(
                req, None,
                {} if service is None else {"/api/v1/namespaces/ml/services/ddp": service})
            check(st == 200, "validate: HTTP %d" % st)
            return json.loads(out)["response"]

        def svc(**spec):
            d = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ddp"},
                 "spec": {"clusterIP": "None", "publishNotReadyAddresses": True,
                          "selector": {"app": "ddp"}}}
            d["spec"].update(spec)
            return d
        for service, warning in (
                (svc(), None),
                (None, "distenv: Service ddp not found in ml: MASTER_ADDR will not resolve"),
                (svc(clusterIP="10.0.0.1"), "distenv: Service ddp is not headless: no pod names; "
                                            "delete, re-create with clusterIP: None"),
                (svc(selector={"statefulset.kubernetes.io/pod-name": "ddp-0"}),
                 "distenv: Service ddp selects by statefulset.kubernetes.io/pod-name, which "
                 "differs per pod: not every pod"),
                (svc(selector={"app": "other"}),
                 "distenv: Service ddp does not select the pod template's labels"),
                (svc(publishNotReadyAddresses=False),
                 "distenv: Service ddp lacks publishNotReadyAddresses: true; rank 0 resolves only "
                 "when Ready"),
                ("not a Service", "distenv: cannot check Service ddp: the API server's answer "
                                  "for the Service is not a JSON object")):
            r = validate(sts_doc("ddp", 2), service)
            check(r.get("allowed") is True and
                  (r.get("warnings") or []) == ([warning] if warning else []),
                  "Service %r: %r" % (service, r))

        def mutate(doc, index, change=None):
            """/mutate of the controller's pod `index` of doc, the API serving doc's object
            as change leaves it; returns the denial."""
            obj, path, pods = controllers.workload_pods(copy.deepcopy(doc))
            pod = pods[index]
            meta = pod["metadata"]
            obj["metadata"]["uid"] = (meta["labels"].get("jobset.sigs.k8s.io/jobset-uid") or
                                      meta["ownerReferences"][0]["uid"])
            if change:
                change(obj)
            self.api.expect = (path, obj)
            r = self.post(review(pod, s.uid(), namespace="ml"))["response"]
            check(r.get("allowed") is False and "patch" not in r, "not denied: %r" % r)
            return r["status"]["message"]

        def says(got, want):
            check(got == want, "%r, want %r" % (got, want))
        job = job_doc("bert", 4, subdomain="bert")
        says(mutate(job, 1, lambda o: o["spec"].update(completionMode="NonIndexed")),
             "distenv: Job ml/bert is not an Indexed Job: distenv supports only pods of a "
             "StatefulSet or of an Indexed Job (set spec.completionMode: Indexed)")
        says(mutate(job, 1, lambda o: o["spec"].update(parallelism=2)),
             "distenv: Job ml/bert has parallelism 2 below completions 4, so not all ranks can run "
             "at once: set parallelism equal to completions")
        kueue = copy.deepcopy(job)
        kueue["metadata"]["annotations"] = {"kueue.x-k8s.io/job-min-parallelism": "2"}
        says(mutate(kueue, 1, lambda o: o["spec"].update(parallelism=2)),
             'distenv: Job ml/bert runs 2 of its 4 ranks at once, as Kueue admitted it '
             '(kueue.x-k8s.io/job-min-parallelism), so they can never form one world: give the '
             'Job kueue.x-k8s.io/job-completions-equal-parallelism: "true" so that its '
             'completions follow')
        got = mutate(job, 1, lambda o: o["metadata"].update(uid="0000-other"))
        check(re.fullmatch(r"distenv: Job ml/bert in the API has uid 0000-other, not the uid "
                           r"[0-9a-f-]{36} the pod names as its owner: the workload was deleted "
                           r"\(and perhaps created again\); the controller of the new one creates "
                           r"new pods", got) is not None, "another uid: %r" % got)
        says(mutate(sts_doc("ddp", 2), 1, lambda o: o["spec"].update(replicas=65537)),
             "distenv: StatefulSet ml/ddp has a world size of 65537, above the limit of 65536")
        says(mutate(sts_doc("ddp", 2), 1, lambda o: o["spec"].update(ordinals={"start": 2})),
             "distenv: pod ordinal 1 is below the start ordinal 2 of StatefulSet ml/ddp")
        says(mutate(sts_doc("ddp", 2), 1, lambda o: o["spec"].update(replicas="2")),
             "distenv: cannot read StatefulSet ml/ddp from the Kubernetes API (StatefulSet "
             ".spec.replicas is not a whole number from 0 to 2147483647), so the world size is not "
             "known; retry, or check the webhook's access to the API")
        says(mutate(sts_doc("ddp", 2), 1, lambda o: o.update(spec=[])),
             "distenv: cannot read StatefulSet ml/ddp from the Kubernetes API (StatefulSet .spec "
             "is not an object), so the world size is not known; retry, or check the webhook's "
             "access to the API")
        says(mutate(sts_doc("ddp", 2), 1, lambda o: o.update(kind="Job")),
             "distenv: cannot read StatefulSet ml/ddp from the Kubernetes API (expected a "
             "StatefulSet, got kind Job), so the world size is not known; retry, or check the "
             "webhook's access to the API")
        says(mutate(job, 1, lambda o: o["spec"].update(completionMode=1)),
             "distenv: cannot read Job ml/bert from the Kubernetes API (Job .spec.completionMode "
             "is not a string), so the world size is not known; retry, or check the webhook's "
             "access to the API")
        # a JobSet's replicated Jobs as the API has them
        js = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
              "metadata": {"name": "js", "namespace": "ml"},
              "spec": {"replicatedJobs": [{"name": "workers", "replicas": 3, "template": {"spec": {
                  "completions": 2, "parallelism": 2, "completionMode": "Indexed",
                  "template": {"metadata": {"labels": {"distenv.dev/inject": "true"}},
                               "spec": {"restartPolicy": "Never", "containers": [
                                   {"name": "train", "image": "train:1.0"}]}}}}}]}}

        def rjob(o):
            return o["spec"]["replicatedJobs"][0]
        says(mutate(js, 1, lambda o: rjob(o)["template"]["spec"].update(completionMode="NonIndexed")),
             "distenv: replicated Job workers of JobSet ml/js is not Indexed: set completionMode: "
             "Indexed in its template, so that every pod has a rank")
        says(mutate(js, 1, lambda o: rjob(o)["template"]["spec"].pop("completions")),
             "distenv: replicated Job workers of JobSet ml/js has no completions: set completions "
             "(the pods of each Job)")
        says(mutate(js, 1, lambda o: rjob(o)["template"]["spec"].update(parallelism=1)),
             "distenv: replicated Job workers of JobSet ml/js has parallelism 1 below completions "
             "2, so not all ranks can run at once: set parallelism equal to completions")
        says(mutate(js, 1, lambda o: rjob(o).update(replicas=32769)),
             "distenv: JobSet ml/js has more pods than the world size limit of 65536")
        says(mutate(js, 1, lambda o: o["spec"].update(coordinator={
            "replicatedJob": "workers", "jobIndex": 3, "podIndex": 0})),
             "distenv: the coordinator of JobSet ml/js (replicated Job workers, Job 3, pod 0) is "
             "not one of its pods")
        says(mutate(js, 5, lambda o: rjob(o).update(replicas=2)),
             "distenv: pod 1 of Job 2 of replicated Job workers is not part of JobSet ml/js as it "
             "is now (re-created or resized?): retry")
        why = "distenv: cannot read JobSet ml/js from the Kubernetes API (%s), so its replicated " \
              "Jobs are not known; retry, or check the webhook's access to the API"
        says(mutate(js, 1, lambda o: o["spec"].update(replicatedJobs=[])),
             why % "JobSet .spec.replicatedJobs is not a non-empty list")
        says(mutate(js, 1, lambda o: o["spec"].update(replicatedJobs=[
            dict(rjob(o), name="r%d" % i) for i in range(17)])),
            why % "JobSet has 17 replicated Jobs, more than distenv's limit of 16")
        says(mutate(js, 1, lambda o: rjob(o).pop("name")),
             why % "JobSet .spec.replicatedJobs[0] has no name")
        says(mutate(js, 1, lambda o: o["spec"]["replicatedJobs"].append(3)),
             why % "JobSet .spec.replicatedJobs[1] is not an object")
        says(mutate(js, 1, lambda o: o["spec"].update(network={"subdomain": 3})),
             why % "JobSet .spec.network.subdomain is not a string of at most 63 characters")
        # answers that are not one JSON object
        obj, path, pods = controllers.workload_pods(copy.deepcopy(job))
        for body, what in ((b"{not json", "is not JSON"), (b"{} {}", "has bytes after the JSON")):
            self.api.expect = (path, body)
            r = self.post(review(pods[1], s.uid(), namespace="ml"))["response"]
            says(r["status"]["message"],
                 "distenv: cannot read Job ml/bert from the Kubernetes API (the API server's "
                 "answer for the Job %s), so the world size is not known; retry, or check the "
                 "webhook's access to the API" % what)
        self.api.expect = None

    def case_metrics(self):
        c = Conn(self.server.port, self.ctx)
        st, _, out = c.call("GET", "/metrics")
        c.close()
        text = out.decode()
        ok = [ln for ln in text.splitlines() if ln.startswith('distenv_lookups_total{outcome="ok"}')]
        err = [ln for ln in text.splitlines()
               if ln.startswith('distenv_lookups_total{outcome="error"}')]
        check(ok and float(ok[0].split()[-1]) >= 1, "look-ups ok not counted: %r" % ok)
        check(err and float(err[0].split()[-1]) >= 1, "look-up errors not counted: %r" % err)

    def case_stop(self):
        rc = self.server.stop(timeout=60)
        check(rc == 0, "exit code %d after SIGTERM: %s" % (rc, self.server.log_tail()))
        if self.s.args.valgrind:
            with open(self.server.vg_path) as f:
                vg = f.read()
            check("ERROR SUMMARY: 0 errors" in vg, "valgrind: %s" % vg[-2000:])

    def case_secrets(self):
        """Secrets are never logged: the whole log of this server (debug level, look-ups
        made with the bearer token, its TLS key loaded) holds neither the token nor any
        line of the key."""
        lines = self.server.log_lines()
        text = "\n".join(lines)
        check(any('"level":"debug"' in ln for ln in lines), "no debug line: the log level "
              "was not debug, so the search covers less than it should")
        check(any(p.startswith("/apis/") for p in self.api.seen),
              "no look-up reached the API server with the token")
        check(FakeAPI.TOKEN not in text, "the bearer token is in the log: %s"
              % [ln for ln in lines if FakeAPI.TOKEN in ln][:2])
        check(base64.b64encode(FakeAPI.TOKEN.encode()).decode() not in text,
              "the bearer token (base64) is in the log")
        with open(os.path.join(self.s.certs1, "tls.key")) as f:
            key = [ln for ln in f.read().splitlines() if ln and not ln.startswith("-----")]
        check(key and not any(k in text for k in key), "a line of the TLS key is in the log")

    def close(self):
        if self.server is not None:
            self.server.kill()
        if self.api is not None:
            self.api.close()


def pem_to_der(path):
    with open(path) as f:
        pem = f.read()
    first = pem[pem.index("-----BEGIN CERTIFICATE-----"):]
    first = first[:first.index("-----END CERTIFICATE-----") + len("-----END CERTIFICATE-----")]
    return ssl.PEM_cert_to_DER_cert(first)


def cert_not_after(path):
    """notAfter of the leaf, read with the ssl module's decoder (independent of the server)."""
    info = ssl._ssl._test_decode_cert(path)  # reads the first certificate of the file
    return float(ssl.cert_time_to_seconds(info["notAfter"]))


def main():
    global SLOW
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default="./distenv-webhook")
    ap.add_argument("--valgrind", action="store_true", help="run the server under valgrind")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--answers", metavar="FILE",
                    help="write every denial and warning with the case that got it (JSON lines)")
    ap.add_argument("-k", dest="filter", metavar="SUBSTR",
                    help="only the cases whose name holds SUBSTR (with their set-up)")
    args = ap.parse_args()
    global FILTER, ANSWERS
    FILTER = args.filter
    if args.answers:
        ANSWERS = open(args.answers, "w", buffering=1)
    args.binary = os.path.abspath(args.binary)
    if args.valgrind:
        SLOW = 10.0
        if shutil.which("valgrind") is None:
            log("integration: valgrind is not installed")
            return 2
    if not os.access(args.binary, os.X_OK):
        log("integration: %s is not an executable" % args.binary)
        return 2

    work = tempfile.mkdtemp(prefix="distenv-it-")
    suite = Suite(args, work)
    AFTER_FAILURE.append(suite.restart_if_dead)

    def on_signal(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)
    lk = None  # the look-up server's suite, once started
    try:
        if not run_case("certs: distenv-webhook certs writes ca.crt, tls.crt, tls.key (0600)",
                        suite.case_certs):
            return finish()
        if not run_case("start: serve on loopback, /healthz over HTTPS", suite.case_start):
            return finish()
        run_case("routes: /healthz, /readyz, HEAD", suite.case_health_routes)
        run_case("selftest: healthz and three reviews over verified TLS; wrong CA, host, args",
                 suite.case_selftest)
        golden = sorted(os.path.basename(p)[:-len(".request.json")]
                        for p in glob.glob(os.path.join(DATA, "*.request.json")))
        for name in golden:
            if os.path.exists(os.path.join(DATA, name + ".lookup.json")):
                continue  # needs a workload look-up; this server runs --no-lookups
            if not os.path.exists(os.path.join(DATA, name + ".response.json")):
                continue
            run_case("golden %s" % name, suite.case_golden, name)
        run_case("patch: StatefulSet, 3 frameworks, user env kept, GPUs, idempotent",
                 suite.case_sts_all_frameworks)
        run_case("patch: five frameworks, LOCAL_RANK by GPUs and nproc-per-node, own "
                 "LOCAL_RANK warned", suite.case_launchers)
        run_case("patch: StatefulSet defaults (port 29500, pytorch+tensorflow, nproc 1)",
                 suite.case_sts_defaults)
        run_case("patch: elastic MIN:MAX with max-restarts", suite.case_sts_elastic)
        run_case("patch: Indexed Job, no name, request.namespace, service annotation, init "
                 "container", suite.case_job_service_init)
        run_case("exec limit: TF_CONFIG near and past 131072 bytes, every container exec'd",
                 suite.case_exec_limit)
        run_case("reinvocation at the env limit: allowed unchanged", suite.case_reinvocation_at_limit)
        run_case("render and /mutate agree on a StatefulSet without serviceName",
                 suite.case_render_no_service_name)
        run_case("render --strict / --warnings-as-errors: exit 1 on a warning, same output",
                 suite.case_render_strict)
        run_case("README's sample render output is the binary's", suite.case_readme_render_sample)
        run_case("serve honours $KUBECONFIG; --kubeconfig wins", suite.case_kubeconfig_env)
        run_case("doctor without a kubeconfig names where it looked; reads ~/.kube/config",
                 suite.case_doctor_no_kubeconfig)
        run_case("own env: a differing value warned and recorded, a certainly wrong one "
                 "warned at /mutate and denied at /validate", suite.case_own_env)
        # the second server, look-ups on against a fake API server (LookupSuite's cases
        # below); first: JobSets of several replicated Jobs are refused at /validate with
        # look-ups off (case_lookups_off_world), so their other rules are asked of the
        # look-up server's /validate, while /mutate stays this server's
        lk = LookupSuite(suite)
        lk_up = run_case("look-ups: serve --kubeconfig (bearer token) against a fake API server",
                         lk.case_start)
        suite.validate_via = lk if lk_up else None
        try:
            run_case("TensorFlow roles on some replicated Jobs and not others: refused at "
                     "/validate", suite.case_tensorflow_roles)
            run_case("every per-template rule at /validate with its problem on a JobSet's "
                     "middle replicated Job and a LeaderWorkerSet's worker template: the whole "
                     "answer, naming that template", suite.case_per_template)
            run_case("JobSet and LeaderWorkerSet rules of /validate and /mutate over HTTPS",
                     suite.case_kind_rules)
        finally:
            suite.validate_via = None
        run_case("a fixed world above the replicas refused at /validate, an elastic one warned",
                 suite.case_world_above_pods)
        run_case("a variable listed twice: the last entry (the kubelet's) read, judged and merged "
                 "at /mutate and /validate", suite.case_env_listed_twice)
        run_case("PET_RDZV_CONF from a reference: no is_host can be merged, warned at /mutate "
                 "and /validate", suite.case_rdzv_conf_reference)
        run_case("allowed without patch: no label, UPDATE, DELETE, ConfigMap", suite.case_skips)
        run_case("denied: not STS/Indexed Job, no Service, rank >= world, unknown world",
                 suite.case_denials)
        run_case("denied: every bad annotation names key and value", suite.case_bad_annotations)
        run_case("every value of each annotation the reference names: the exact env; one it "
                 "does not: denied naming both", suite.case_annotation_values)
        run_case("the opt-in label: only \"true\" opts in; as an annotation, warned",
                 suite.case_inject_values)
        run_case("/validate's workload rules over HTTPS, exact words", suite.case_validate_rules)
        run_case("look-ups off: a StatefulSet or an Indexed Job without distenv.dev/world-size "
                 "refused at /validate, as each of its pods is at /mutate",
                 suite.case_lookups_off_world)
        run_case("/mutate's pod rules over HTTPS, exact words", suite.case_mutate_rules)
        run_case("UPDATE with oldObject: a world change warned, none to 0, within elastic, "
                 "or of LeaderWorkerSet replicas", suite.case_world_changes)
        run_case("a container's own MASTER_ADDR, RANK, TF_CONFIG, MASTER_PORT: each rule over "
                 "HTTPS, exact words", suite.case_own_env_rules)
        run_case("marks and owner disagree: JobSet name, LeaderWorkerSet group, exact words",
                 suite.case_owner_marks)
        run_case("request.uid: 127 characters echoed, 128 refused with HTTP 400",
                 suite.case_uid_limit)
        run_case("the pod's size budget: TF_CONFIG left out when a default, refused when asked",
                 suite.case_pod_budget)
        run_case("HTTP 400: bad JSON, empty, array, no uid, no request, v1beta1",
                 suite.case_http_400)
        run_case("HTTP 404/405 with Allow, JSON bodies, connection kept", suite.case_http_404_405)
        run_case("HTTP 413: announced, at/over the limit, chunked", suite.case_http_413)
        run_case("TLS 1.2 and 1.3 accepted (ALPN http/1.1), 1.0 and 1.1 refused",
                 suite.case_tls_versions)
        run_case("keep-alive: 30 requests on one connection", suite.case_keepalive)
        run_case("parallel: 8 clients x 25 reviews", suite.case_parallel)
        run_case("one TLS record per small answer; large and pipelined answers whole",
                 suite.case_one_record)
        run_case("no answer waits for TCP_CORK: the socket is uncorked after every answer, "
                 "whatever the first answer was", suite.case_no_cork_hold)
        run_case("TLS handshakes paced by a pausing client: bounded reads and waits each, "
                 "TLS 1.2 and 1.3", suite.case_handshake_flights)
        run_case("server.handshakeTimeoutSeconds: stalled handshakes closed at it, others "
                 "served", suite.case_handshake_timeout)
        run_case("metrics: counters, histogram, errors, in-flight, expiry", suite.case_metrics)
        run_case("certificate swap under load: ..data symlink, bad pair kept out, rename",
                 suite.case_cert_swap)
        run_case("listen forms: :PORT (dual stack), [::1]:PORT, 0.0.0.0:PORT",
                 suite.case_listen_forms)
        run_case("cluster domain: resolv.conf, config (mismatch warned), default; log, "
                 "/metrics and MASTER_ADDR", suite.case_cluster_domain)
        run_case("start-up errors: bad listen, missing file, key mismatch",
                 suite.case_start_errors)
        run_case("logs: every line JSON, admission fields, start-up line", suite.case_log_lines)
        run_case("SIGTERM: in-flight request completes, readyz 503, exit 0",
                 suite.case_sigterm_drain)
        ws = WaitSuite(args.binary)
        run_case("wait: a listener that appears late (rank 3)", ws.case_late_listener)
        run_case("wait: a name that never resolves: exit 1 after the timeout, progress lines",
                 ws.case_never_resolves)
        run_case("wait: a refused port: exit 1 naming it", ws.case_refused_timeout)
        run_case("wait: a nameserver that never answers: each look-up bounded, --timeout holds",
                 ws.case_silent_resolver)
        run_case("wait: rank 0 needs only the name", ws.case_rank0)
        run_case("wait: bad environment or arguments: exit 2", ws.case_bad_input)
        if lk_up:
            for name in golden:
                if os.path.exists(os.path.join(DATA, name + ".lookup.json")):
                    run_case("golden %s (look-up)" % name, lk.case_golden, name)
            run_case("look-ups: a Job re-created with more completions within the cache "
                     "TTL: new pods get the new world", lk.case_recreated_job)
            run_case("look-ups: kubectl scale of a StatefulSet (its scale subresource) is "
                     "warned when it changes the world", lk.case_scale)
            run_case("look-ups: read again before the TTL ends, the other pods answered "
                     "from the live entry meanwhile", lk.case_refresh_ahead)
            run_case("shipped defaults: the binary's and the chart's default values, each "
                     "rule that depends on a setting, with look-ups on",
                     lk.case_shipped_defaults)
            run_case("look-ups: a failed look-up denies with the reason",
                     lk.case_lookup_failure)
            run_case("look-ups: a failed NetworkPolicy list gives no warning",
                     lk.case_netpol_list_fails)
            run_case("look-ups: the rules the workload's object or its Service decide, over "
                     "HTTPS, exact words", lk.case_lookup_rules)
            run_case("look-ups: counted in /metrics", lk.case_metrics)
            eq = equivalence.Suite(sys.modules[__name__], suite, lk)
            try:
                if run_case("equivalence: two servers (look-ups on, off) for render's "
                            "configs", eq.case_start):
                    for name, text, pods_only in equivalence.manifests():
                        run_case("equivalence %s: render = /validate + /mutate of the "
                                 "controllers' pods" % name, eq.compare, name, text,
                                 pods_only)
            finally:
                eq.close()
            run_case("look-ups: SIGTERM, exit 0", lk.case_stop)
            run_case("secrets are never logged: no token, no key line at debug level",
                     lk.case_secrets)
    except KeyboardInterrupt:
        log("integration: interrupted")
        results["failed"] += 1
    finally:
        if lk is not None:
            lk.close()
        if suite.server is not None:
            suite.server.kill()
        if args.keep or results["failed"]:
            log("integration: files kept in %s" % work)
        if not args.keep and not results["failed"]:
            shutil.rmtree(work, ignore_errors=True)
    return finish()


def finish():
    skipped = " (%d not selected by -k %s)" % (results["skipped"], FILTER) if FILTER else ""
    log("integration: %d passed, %d failed%s" % (results["passed"], results["failed"], skipped))
    if FILTER and not results["chosen"]:
        log("integration: no case matches -k %s" % FILTER)
        return 1
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
