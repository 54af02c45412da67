#!/usr/bin/python3
"""Framework conformance tier: real PyTorch, torchrun, TensorFlow and JAX form a
job from the environment that distenv-webhook injects.

1. Starts the built distenv-webhook on loopback with certificates it made itself,
   and POSTs AdmissionReview v1 requests over HTTPS (verified against its CA) for
   every rank of a StatefulSet, an Indexed Job and an elastic StatefulSet, shaped
   as kube-apiserver sends them. The returned JSON Patch is applied with jsonpatch
   and the env is read from the patched pod.
2. Plays each pod with a network namespace (own address on a bridge that lives in
   a hub namespace of its own), a UTS namespace with the pod's hostname and a
   kubelet-style /etc/netns/<ns>/hosts. Every rank runs with exactly the injected
   variables plus PATH and PYTHONPATH.
3. Checks what the frameworks derived against the topology computed here, and
   prints `N passed, N failed` as the closing line.

Run as root through run.sh. Every wait is bounded; namespaces, hosts files and
processes are removed on exit, also on failure or signal."""

import argparse
import ast
import base64
import copy
import glob
import http.client
import json
import os
import re
import shutil
import shlex
import signal
import socket
import ssl
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid

import jsonpatch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
WORKERS = os.path.join(HERE, "workers")
sys.path.insert(0, os.path.join(ROOT, "test", "data", "gen"))
import controllers  # noqa: E402  (pods shaped as the JobSet/LWS controllers make them)

NAMESPACE = "team-a"
CLUSTER_DOMAIN = "cluster.local"
DEFAULT_PORT = 29500
FRAMEWORKS_ANNOTATION = "pytorch,tensorflow,jax"
WEBHOOK_SERVICE, WEBHOOK_NAMESPACE = "distenv", "distenv-system"
PATH_VALUE = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
RESULT_PREFIX = "DISTENV-RESULT "

# Per framework run: how long the ranks may take, all together (seconds).
TIMEOUTS = {"pytorch": 150, "torchrun-elastic": 180, "tensorflow": 300, "jax": 240,
            "launcher": 150, "lightning-old-env": 30}

# The workloads. Subnets are a private test range used only inside the namespaces
# this program creates (RFC 2544 benchmarking range).
SCENARIOS = [
    {"key": "sts", "kind": "StatefulSet", "workload": "ddp", "service": "ddp",
     "world": 3, "elastic": None, "max_restarts": None, "net": "198.18.1",
     "runs": ["pytorch", "tensorflow", "jax"]},
    {"key": "job", "kind": "Job", "workload": "train", "service": "train-workers",
     "world": 3, "elastic": None, "max_restarts": None, "net": "198.18.2",
     "runs": ["pytorch", "tensorflow", "jax"]},
    # Indexed Job whose template has no subdomain: distenv.dev/service names the
    # Service and distenv sets spec.subdomain, without which the pods would have
    # no DNS name at all.
    {"key": "job-svc", "kind": "Job", "workload": "gen", "service": "gen-workers",
     "service_annotation": True, "world": 3, "elastic": None, "max_restarts": None,
     "net": "198.18.4", "runs": ["pytorch"]},
    {"key": "elastic", "kind": "StatefulSet", "workload": "edp", "service": "edp",
     "world": 4, "elastic": (2, 4), "max_restarts": 3, "net": "198.18.3",
     "runs": ["torchrun-elastic"]},
    # distenv.dev/wait-for-master: ranks 1 and 2 start first and run the injected
    # init container's command; rank 0's name appears in their hosts files only
    # after a few seconds and its process starts later still.
    {"key": "wait", "kind": "StatefulSet", "workload": "wdp", "service": "wdp",
     "world": 3, "elastic": None, "max_restarts": None, "net": "198.18.8",
     "wait_for_master": "60s", "runs": ["pytorch-wait"]},
    # A JobSet of one replicated Job, 2 Jobs x 2 pods: one world of 4 across both
    # Jobs, pods built as the JobSet and Job controllers build them.
    {"key": "jobset", "kind": "JobSet", "workload": "js", "service": "js",
     "rjobs": [("w", 2, 2)], "world": 4, "elastic": None, "max_restarts": None,
     "net": "198.18.5", "runs": ["pytorch"]},
    # One group (group 1) of a LeaderWorkerSet of size 4: leader + 3 workers.
    {"key": "lws", "kind": "LeaderWorkerSet", "workload": "lws", "service": "lws",
     "group": 1, "world": 4, "elastic": None, "max_restarts": None, "net": "198.18.6",
     "runs": ["pytorch"]},
    # TensorFlow roles: a JobSet whose replicated Jobs are chief (1) and worker
    # (1 Job x 2 pods). Several replicated Jobs need the JobSet itself, so the env
    # comes from `distenv-webhook render` (the same core, answering the look-up
    # from the manifest) rather than a --no-lookups server.
    {"key": "jobset-tf", "kind": "JobSet", "workload": "tfjs", "service": "tfjs",
     "rjobs": [("chief", 1, 1), ("worker", 1, 2)], "world": 3, "elastic": None,
     "max_restarts": None, "net": "198.18.7", "runs": ["tensorflow-roles"],
     "env_from": "render"},
    # JobSet's own coordinator example: 4 workers, then the driver, which
    # spec.coordinator names. The driver's pod is rank 0 (it hosts torch's
    # TCPStore) and MASTER_ADDR; the workers are ranks 1..4.
    {"key": "jobset-coord", "kind": "JobSet", "workload": "cjs", "service": "cjs",
     "rjobs": [("workers", 1, 4), ("driver", 1, 1)], "coordinator": ("driver", 0, 0),
     "world": 5, "elastic": None, "max_restarts": None, "net": "198.18.9",
     "runs": ["pytorch"], "env_from": "render"},
    # TensorFlow parameter-server training with a sidecar evaluator: a JobSet of
    # chief, worker (1 Job x 2 pods), ps and evaluator, env from `render` as
    # above. The evaluator is a cluster of its own (TensorFlow's split): the
    # chief's ParameterServerStrategy connects to every task its TF_CONFIG lists.
    {"key": "jobset-tf-ps", "kind": "JobSet", "workload": "tfps", "service": "tfps",
     "rjobs": [("chief", 1, 1), ("worker", 1, 2), ("ps", 1, 1), ("evaluator", 1, 1)],
     "world": 5, "elastic": None, "max_restarts": None, "net": "198.18.20",
     "runs": ["tensorflow-ps"], "env_from": "render"},
    # The launchers (issue 22): each started as a pod's command, with nothing but
    # the env distenv gave that pod (docs/frameworks.md, "Launcher scenarios").
    # The real torchrun launcher: 2 pods x 2 processes from PET_* alone.
    {"key": "torchrun", "kind": "StatefulSet", "workload": "trun", "service": "trun",
     "world": 2, "nproc": "2", "frameworks": "pytorch", "elastic": None,
     "max_restarts": None, "net": "198.18.30", "runs": ["torchrun-launcher"]},
    # Lightning's default environment: 2 pods x 2 CPU processes that Lightning
    # starts itself (and, as a control, the env before NODE_RANK existed) ...
    {"key": "lightning", "kind": "StatefulSet", "workload": "lit", "service": "lit",
     "world": 2, "nproc": "2", "frameworks": "pytorch", "elastic": None,
     "max_restarts": None, "net": "198.18.31", "runs": ["lightning", "lightning-old-env"]},
    # ... and 3 one-process pods (LOCAL_RANK=0 injected: Lightning starts nothing).
    {"key": "lightning-1p", "kind": "StatefulSet", "workload": "lit1", "service": "lit1",
     "world": 3, "nproc": "1", "frameworks": "pytorch", "elastic": None,
     "max_restarts": None, "net": "198.18.32", "runs": ["lightning"]},
    # accelerate launch --machine_rank $NODE_RANK --num_machines $NNODES ...
    {"key": "accelerate", "kind": "StatefulSet", "workload": "acc", "service": "acc",
     "world": 2, "nproc": "2", "frameworks": "pytorch", "elastic": None,
     "max_restarts": None, "net": "198.18.33", "runs": ["accelerate"]},
    # XGBoost's Rabit: an Indexed Job of 3 workers, the tracker in task 0's pod.
    {"key": "xgboost", "kind": "Job", "workload": "xgb", "service": "xgb-workers",
     "world": 3, "frameworks": "xgboost", "elastic": None, "max_restarts": None,
     "net": "198.18.34", "runs": ["xgboost"]},
    # python -m paddle.distributed.launch with no argument but the script.
    {"key": "paddle", "kind": "StatefulSet", "workload": "pdl", "service": "pdl",
     "world": 2, "frameworks": "paddle", "elastic": None, "max_restarts": None,
     "net": "198.18.35", "runs": ["paddle"]},
    # DeepSpeed's init_distributed rule, read from its source, against a one-GPU
    # pod's env (and an eight-GPU pod's: no LOCAL_RANK). No namespaces.
    {"key": "deepspeed", "kind": "StatefulSet", "workload": "dsp", "service": "dsp",
     "world": 2, "gpus": 1, "frameworks": "pytorch", "elastic": None,
     "max_restarts": None, "net": None, "runs": ["deepspeed-rule"]},
]


class Failure(Exception):
    pass


# --------------------------------------------------------------------------
# Results


class Results:
    def __init__(self):
        self.items = []  # (ok, name, detail)
        self.times = []  # (label, seconds)

    def check(self, ok, name, detail=""):
        self.items.append((bool(ok), name, detail))
        tag = "PASS" if ok else "FAIL"
        line = f"{tag}  {name}"
        if detail and not ok:
            line += "\n      " + detail.replace("\n", "\n      ")
        print(line, flush=True)
        return ok

    def passed(self):
        return sum(1 for ok, _, _ in self.items if ok)

    def failed(self):
        return sum(1 for ok, _, _ in self.items if not ok)


def say(msg):
    print(f"--- {msg}", flush=True)


# --------------------------------------------------------------------------
# What the topology says every rank must get (README: "What a pod gets").


def jobset_position(sc, r):
    """The position of rank r in the order the JobSet lists its pods (replicated
    Jobs in spec order, then Job, then index). README: the coordinator's pod is
    rank 0 and every other pod keeps its order after it."""
    if not sc.get("coordinator"):
        return r
    crjob, cj, ci = sc["coordinator"]
    c = 0
    for name, jobs, pods in sc["rjobs"]:
        if name == crjob:
            c += cj * pods + ci
            break
        c += jobs * pods
    return c if r == 0 else r - 1 if r <= c else r


def jobset_place(sc, r):
    """(replicated Job, job index, pod index, first position of the replicated Job) of rank r."""
    first, pos = 0, jobset_position(sc, r)
    for name, jobs, pods in sc["rjobs"]:
        if pos < first + jobs * pods:
            return name, (pos - first) // pods, (pos - first) % pods, first
        first += jobs * pods
    raise ValueError(f"rank {r} is not in JobSet {sc['workload']}")


def pod_hostname(sc, r):
    if sc["kind"] == "JobSet":
        rjob, j, i, _ = jobset_place(sc, r)
        return f"{sc['workload']}-{rjob}-{j}-{i}"
    if sc["kind"] == "LeaderWorkerSet":
        g = sc["group"]
        return f"{sc['workload']}-{g}" if r == 0 else f"{sc['workload']}-{g}-{r}"
    return f"{sc['workload']}-{r}"


def pod_fqdn(sc, r):
    return f"{pod_hostname(sc, r)}.{sc['service']}.{NAMESPACE}.svc.{CLUSTER_DOMAIN}"


def nproc_per_node(sc):
    """README: distenv.dev/nproc-per-node, else the largest GPU limit, else 1; and
    whether the pod is one process (the annotation says "1", or no annotation
    and exactly one GPU; a CPU pod without the annotation is not)."""
    if sc.get("nproc"):
        return sc["nproc"], sc["nproc"] == "1"
    gpus = sc.get("gpus") or 0
    return str(gpus or 1), gpus == 1


def expected_env(sc, r):
    w, p = sc["world"], str(DEFAULT_PORT)
    a = pod_fqdn(sc, 0)
    frameworks = sc.get("frameworks", FRAMEWORKS_ANNOTATION).split(",")
    nproc, one_process = nproc_per_node(sc)
    env = {}
    if "pytorch" in frameworks:
        env.update({
            "MASTER_ADDR": a, "MASTER_PORT": p, "RANK": str(r), "WORLD_SIZE": str(w),
            "NODE_RANK": str(r), "NNODES": str(w),
            "PET_MASTER_ADDR": a, "PET_MASTER_PORT": p, "PET_NNODES": str(w),
            "PET_NODE_RANK": str(r), "PET_NPROC_PER_NODE": nproc})
        if one_process and not sc["elastic"]:
            env.update({"LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1"})
    if "tensorflow" in frameworks:
        env["TF_CONFIG"] = tf_config_expected(sc, r)
    if "jax" in frameworks:
        env.update({"JAX_COORDINATOR_ADDRESS": f"{a}:{p}", "JAX_NUM_PROCESSES": str(w),
                    "JAX_PROCESS_ID": str(r)})
    if "xgboost" in frameworks:
        env.update({"DMLC_TRACKER_URI": a, "DMLC_TRACKER_PORT": p, "DMLC_TASK_ID": str(r),
                    "DMLC_NUM_WORKER": str(w)})
    if "paddle" in frameworks:
        # Paddle's launcher starts its KV store only where the master's host is
        # 127.0.0.1 or the node's own IP (HTTPMaster.lazy_init): rank 0 names
        # itself by loopback, the others name rank 0.
        env.update({"PADDLE_MASTER": f"127.0.0.1:{p}" if r == 0 else f"{a}:{p}",
                    "PADDLE_NNODES": str(w), "PADDLE_RANK": str(r),
                    "PADDLE_JOB_ID": f"{NAMESPACE}-{sc['workload']}"})
    if sc["elastic"]:
        lo, hi = sc["elastic"]
        env.pop("NODE_RANK", None)
        env.pop("NNODES", None)
        env["PET_NNODES"] = f"{lo}:{hi}"
        env["PET_RDZV_BACKEND"] = "c10d"
        env["PET_RDZV_ENDPOINT"] = f"{a}:{p}"
        env["PET_RDZV_ID"] = f"{NAMESPACE}-{sc['workload']}"
        # the endpoint's own pod (rank 0) hosts the c10d store
        env["PET_RDZV_CONF"] = "is_host=1" if r == 0 else "is_host=0"
        if sc["max_restarts"] is not None:
            env["PET_MAX_RESTARTS"] = str(sc["max_restarts"])
    return env


TF_ROLES = {"chief", "worker", "ps", "evaluator"}


def tf_roles(sc):
    return sc["kind"] == "JobSet" and all(n in TF_ROLES for n, _, _ in sc["rjobs"])


def tf_config_expected(sc, r):
    """README: every pod a worker, or, for a JobSet named after TF task types, one
    list per role and the pod's own role and index; the evaluator is a cluster
    of its own (TensorFlow's _split_cluster_for_evaluator): the training roles'
    cluster leaves it out, the evaluator's lists only the evaluators."""
    p = DEFAULT_PORT
    if not tf_roles(sc):
        return {"cluster": {"worker": [f"{pod_fqdn(sc, i)}:{p}" for i in range(sc["world"])]},
                "task": {"type": "worker", "index": r}}
    # one list per role, in rank order; the task's index is its place in its
    # list. The evaluator is a cluster of its own (TensorFlow's split): the
    # training roles' pods do not list it, and an evaluator lists only evaluators.
    own_role = jobset_place(sc, r)[0]
    cluster = {name: [] for name, _, _ in sc["rjobs"]
               if (name == "evaluator") == (own_role == "evaluator")}
    index = None
    for k in range(sc["world"]):
        role = jobset_place(sc, k)[0]
        if role not in cluster:
            continue
        if k == r:
            index = len(cluster[role])
        cluster[role].append(f"{pod_fqdn(sc, k)}:{p}")
    return {"cluster": cluster, "task": {"type": own_role, "index": index}}


def env_differences(got, want):
    """Returns a list of human-readable differences; TF_CONFIG compared as JSON."""
    out = []
    for k in sorted(set(got) | set(want)):
        if k not in got:
            out.append(f"missing {k} (want {want[k]!r})")
        elif k not in want:
            out.append(f"unexpected {k}={got[k]!r}")
        elif k == "TF_CONFIG":
            try:
                parsed = json.loads(got[k])
            except ValueError as e:
                out.append(f"TF_CONFIG is not JSON ({e}): {got[k]!r}")
                continue
            if parsed != want[k]:
                out.append(f"TF_CONFIG={got[k]} want {json.dumps(want[k])}")
        elif got[k] != want[k]:
            out.append(f"{k}={got[k]!r} want {want[k]!r}")
    return out


# --------------------------------------------------------------------------
# Pods as kube-apiserver sends them to a mutating webhook (after defaulting).


def _container(name, image, env=None):
    c = {
        "name": name, "image": image, "command": ["python3", "train.py"],
        "resources": {}, "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent",
    }
    if env is not None:
        c["env"] = env
    return c


def _pod_spec(restart_policy, hostname, subdomain, containers):
    spec = {
        "containers": containers, "restartPolicy": restart_policy,
        "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default", "serviceAccount": "default",
        "securityContext": {}, "hostname": hostname, "subdomain": subdomain,
        "schedulerName": "default-scheduler",
        "tolerations": [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists",
             "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
             "effect": "NoExecute", "tolerationSeconds": 300}],
        "priority": 0, "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
    }
    if subdomain is None:  # the API server omits empty fields
        del spec["subdomain"]
    return spec


def _distenv_annotations(sc):
    a = {"distenv.dev/world-size": str(sc["world"]),
         "distenv.dev/frameworks": sc.get("frameworks", FRAMEWORKS_ANNOTATION)}
    if sc.get("nproc"):
        a["distenv.dev/nproc-per-node"] = sc["nproc"]
    if sc["elastic"]:
        a["distenv.dev/elastic"] = "%d:%d" % sc["elastic"]
    if sc["max_restarts"] is not None:
        a["distenv.dev/max-restarts"] = str(sc["max_restarts"])
    if sc.get("service_annotation"):
        a["distenv.dev/service"] = sc["service"]
    if sc.get("wait_for_master"):
        a["distenv.dev/wait-for-master"] = sc["wait_for_master"]
    return a


def build_pod(sc, r, owner_uid):
    """Returns (pod, request name or None, username)."""
    w = sc["workload"]
    if sc["kind"] in ("JobSet", "LeaderWorkerSet"):
        # As test/data/gen/controllers.py builds them from the JobSet and
        # LeaderWorkerSet controllers' sources (the goldens use the same).
        if sc["kind"] == "JobSet":
            rjob, j, i, _ = jobset_place(sc, r)
            coord = None
            if sc.get("coordinator"):
                coord = "%s-%s-%d-%d.%s" % ((w,) + tuple(sc["coordinator"]) + (sc["service"],))
            pod = controllers.jobset_pod(w, sc["rjobs"], rjob, j, i, coord)
            user, name = "system:serviceaccount:kube-system:job-controller", None
        else:
            pod = controllers.lws_pod(w, sc["group"], r, sc["world"])
            user, name = "system:serviceaccount:kube-system:statefulset-controller", \
                pod["metadata"]["name"]
        pod["metadata"].pop("namespace", None)
        pod["metadata"]["annotations"].update(_distenv_annotations(sc))
        if sc["kind"] == "LeaderWorkerSet":
            # the LWS size annotation gives the world; no world-size annotation
            pod["metadata"]["annotations"].pop("distenv.dev/world-size")
        pod["apiVersion"], pod["kind"] = "v1", "Pod"
        return pod, name, user
    if sc["kind"] == "StatefulSet":
        name = f"{w}-{r}"
        pod = {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {
                "name": name, "generateName": f"{w}-", "namespace": NAMESPACE,
                "labels": {"app": w, "distenv.dev/inject": "true",
                           "controller-revision-hash": f"{w}-6c9f8d7b5",
                           "statefulset.kubernetes.io/pod-name": name,
                           "apps.kubernetes.io/pod-index": str(r)},
                "annotations": _distenv_annotations(sc),
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet",
                                     "name": w, "uid": owner_uid, "controller": True,
                                     "blockOwnerDeletion": True}],
            },
            # A container with env of its own, and a sidecar without any env key.
            "spec": _pod_spec("Always", name, sc["service"], [
                _container("trainer", "trainer:1.0",
                           [{"name": "LOG_LEVEL", "value": "info"}]),
                _container("metrics", "metrics:1.0")]),
            "status": {},
        }
        if sc.get("gpus"):  # as the API server defaults it: requests = limits
            n = str(sc["gpus"])
            pod["spec"]["containers"][0]["resources"] = {
                "limits": {"nvidia.com/gpu": n}, "requests": {"nvidia.com/gpu": n}}
        return pod, name, "system:serviceaccount:kube-system:statefulset-controller"
    # Indexed Job pod: no metadata.name, no namespace in the object, generateName.
    idx = str(r)
    annotations = {"batch.kubernetes.io/job-completion-index": idx}
    annotations.update(_distenv_annotations(sc))
    pod = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "generateName": f"{w}-{idx}-",
            "labels": {"batch.kubernetes.io/controller-uid": owner_uid,
                       "batch.kubernetes.io/job-name": w, "controller-uid": owner_uid,
                       "job-name": w, "batch.kubernetes.io/job-completion-index": idx,
                       "distenv.dev/inject": "true"},
            "annotations": annotations,
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": w,
                                 "uid": owner_uid, "controller": True,
                                 "blockOwnerDeletion": True}],
        },
        "spec": _pod_spec("Never", f"{w}-{idx}",
                          None if sc.get("service_annotation") else sc["service"], [
            _container("trainer", "trainer:1.0", [
                {"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
                    "apiVersion": "v1",
                    "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}])]),
        "status": {},
    }
    return pod, None, "system:serviceaccount:kube-system:job-controller"


def admission_review(pod, name, username):
    gvk = {"group": "", "version": "v1", "kind": "Pod"}
    gvr = {"group": "", "version": "v1", "resource": "pods"}
    req = {
        "uid": str(uuid.uuid4()), "kind": gvk, "resource": gvr,
        "requestKind": gvk, "requestResource": gvr, "namespace": NAMESPACE,
        "operation": "CREATE",
        "userInfo": {"username": username, "uid": str(uuid.uuid4()),
                     "groups": ["system:serviceaccounts",
                                "system:serviceaccounts:kube-system",
                                "system:authenticated"]},
        "object": pod, "oldObject": None, "dryRun": False,
        "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"},
    }
    if name:
        req["name"] = name
    return {"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": req}


# --------------------------------------------------------------------------
# The webhook over real HTTPS.


class Webhook:
    def __init__(self, binary, workdir):
        self.binary, self.workdir = binary, workdir
        self.proc, self.port, self.conn = None, None, None
        self.certdir = os.path.join(workdir, "certs")
        self.log_path = os.path.join(workdir, "webhook.log")

    def start(self):
        r = subprocess.run([self.binary, "certs", "--service", WEBHOOK_SERVICE,
                            "--namespace", WEBHOOK_NAMESPACE, "--out", self.certdir],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise Failure(f"distenv-webhook certs exited {r.returncode}: {r.stderr.strip()}")
        for f in ("ca.crt", "tls.crt", "tls.key"):
            if not os.path.isfile(os.path.join(self.certdir, f)):
                raise Failure(f"distenv-webhook certs did not write {f}")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [self.binary, "serve", "--no-lookups", "--listen", f"127.0.0.1:{self.port}",
             "--tls-cert", os.path.join(self.certdir, "tls.crt"),
             "--tls-key", os.path.join(self.certdir, "tls.key")],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        if os.environ.get("FW_RUNDIR"):
            with open(os.path.join(os.environ["FW_RUNDIR"], "webhook.pid"), "w") as f:
                f.write(str(self.proc.pid))
        self.ctx = ssl.create_default_context(cafile=os.path.join(self.certdir, "ca.crt"))
        self.ctx.set_alpn_protocols(["http/1.1"])  # as kube-apiserver's client does
        deadline = time.monotonic() + 20
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise Failure(f"distenv-webhook serve exited {self.proc.returncode}: "
                              + tail(self.log_path))
            try:
                self._connect().close()
                self.conn = None
                return
            except OSError as e:
                last = e
                time.sleep(0.1)
        raise Failure(f"distenv-webhook serve not answering TLS on 127.0.0.1:{self.port} "
                      f"within 20s: {last}")

    def _connect(self):
        # Dial loopback, but name the Service as kube-apiserver does (SNI and
        # certificate check against <svc>.<ns>.svc).
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        try:
            tls = self.ctx.wrap_socket(
                sock, server_hostname=f"{WEBHOOK_SERVICE}.{WEBHOOK_NAMESPACE}.svc")
        except Exception:
            sock.close()
            raise
        conn = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=10,
                                           context=self.ctx)
        conn.sock = tls
        return conn

    def post(self, review):
        """Returns (status, parsed body or raw text). Keeps one pooled
        connection, as the API server does; reconnects once if the server closed it."""
        body = json.dumps(review).encode()
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = self._connect()
            try:
                self.conn.request("POST", "/mutate?timeout=10s", body=body,
                                  headers={"Content-Type": "application/json",
                                           "Accept": "application/json"})
                resp = self.conn.getresponse()
                data = resp.read()
                if resp.getheader("Connection", "").lower() == "close":
                    self.conn.close()
                    self.conn = None
                break
            except (http.client.RemoteDisconnected, ConnectionResetError,
                    BrokenPipeError, http.client.CannotSendRequest):
                self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise
        try:
            return resp.status, json.loads(data)
        except ValueError:
            return resp.status, data.decode(errors="replace")

    def stop(self):
        """Sends SIGTERM; returns the exit code, or None if it had to be killed."""
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
            return None


def mutate(webhook, review, pod):
    """Sends one review; returns (patched pod, problems). problems is a list of
    strings describing every way the answer broke the AdmissionReview contract."""
    problems = []
    status, body = webhook.post(review)
    if status != 200:
        return None, [f"HTTP {status}: {str(body)[:300]}"]
    if not isinstance(body, dict):
        return None, [f"answer is not JSON: {body[:300]!r}"]
    if body.get("apiVersion") != "admission.k8s.io/v1" or body.get("kind") != "AdmissionReview":
        problems.append(f"apiVersion/kind = {body.get('apiVersion')}/{body.get('kind')}")
    resp = body.get("response") or {}
    if resp.get("uid") != review["request"]["uid"]:
        problems.append(f"response.uid {resp.get('uid')!r} != request.uid")
    if resp.get("allowed") is not True:
        return None, problems + [f"not allowed: {json.dumps(resp.get('status'))}"]
    if "patch" not in resp:
        return copy.deepcopy(pod), problems
    if resp.get("patchType") != "JSONPatch":
        problems.append(f"patchType {resp.get('patchType')!r}")
    try:
        ops = json.loads(base64.b64decode(resp["patch"], validate=True))
        patched = jsonpatch.JsonPatch(ops).apply(copy.deepcopy(pod))
    except Exception as e:  # any decoding or apply error is a contract break
        return None, problems + [f"patch does not apply to the pod as sent: "
                                 f"{type(e).__name__}: {e}"]
    return patched, problems


def injected_env(orig_pod, patched_pod):
    """Returns (env of the first container as the injected name->value map,
    problems). Checks every target container got the same injected entries, in
    front of the container's own entries, which are left as they were."""
    problems, first = [], None
    for before, after in zip(orig_pod["spec"]["containers"],
                             patched_pod["spec"]["containers"]):
        own = before.get("env", [])
        env = after.get("env")
        if not isinstance(env, list):
            problems.append(f"container {before['name']}: env is {env!r}")
            continue
        own_names = {e["name"] for e in own}
        new = [e for e in env if e.get("name") not in own_names]
        if env[len(new):] != own:
            problems.append(f"container {before['name']}: own env entries changed or "
                            f"not after the injected ones: {env}")
        names = [e.get("name") for e in env]
        if len(names) != len(set(names)):
            problems.append(f"container {before['name']}: duplicate env names {names}")
        vals = {}
        for e in new:
            if set(e) != {"name", "value"} or not isinstance(e["value"], str):
                problems.append(f"container {before['name']}: entry {e}")
            else:
                vals[e["name"]] = e["value"]
        if first is None:
            first = vals
        elif vals != first:
            problems.append(f"container {before['name']}: env differs from the first "
                            f"container's")
    if "distenv.dev/injected" not in (patched_pod["metadata"].get("annotations") or {}):
        problems.append("annotation distenv.dev/injected missing")
    return first or {}, problems


# --------------------------------------------------------------------------
# Pods as network namespaces.


def sh(*argv, timeout=20, check=True):
    r = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise Failure(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr.strip()}")
    return r


def tail(path, lines=25):
    """Last lines of a log, without the workers' result lines."""
    try:
        with open(path, errors="replace") as f:
            text = [ln for ln in f if not ln.startswith(RESULT_PREFIX)]
            return "".join(text[-lines:]).rstrip()
    except OSError:
        return ""


class PodNet:
    """W network namespaces, one per pod, joined by a bridge in a hub namespace.
    Nothing is added to the caller's own network namespace."""

    def __init__(self, prefix, tag, pods, net):
        # pods: list of (short hostname, fqdn)
        self.hub = f"{prefix}{tag}h"
        self.names = [f"{prefix}{tag}{i}" for i in range(len(pods))]
        self.pods = pods
        self.addrs = [f"{net}.{10 + i}" for i in range(len(pods))]
        self.procs = []

    def up(self):
        sh("ip", "netns", "add", self.hub)
        sh("ip", "-n", self.hub, "link", "set", "lo", "up")
        sh("ip", "-n", self.hub, "link", "add", "br0", "type", "bridge")
        sh("ip", "-n", self.hub, "link", "set", "br0", "up")
        for i, (ns, addr) in enumerate(zip(self.names, self.addrs)):
            sh("ip", "netns", "add", ns)
            sh("ip", "-n", self.hub, "link", "add", f"v{i}", "type", "veth",
               "peer", "name", "eth0", "netns", ns)
            sh("ip", "-n", self.hub, "link", "set", f"v{i}", "master", "br0")
            sh("ip", "-n", self.hub, "link", "set", f"v{i}", "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", "eth0")
            sh("ip", "-n", ns, "link", "set", "eth0", "up")
            self._write_etc(i)

    def hide_peer(self, i, peer, hidden):
        """Rewrites pod i's hosts file in place (the bind mount keeps the inode)
        without, or again with, peer's name: as cluster DNS before and after the
        peer's pod exists."""
        self._write_etc(i, skip=peer if hidden else None)

    def _write_etc(self, i, skip=None):
        d = f"/etc/netns/{self.names[i]}"
        os.makedirs(d, exist_ok=True)
        # As the kubelet writes a pod's hosts file: own FQDN first (the canonical
        # name), then the short hostname. The peers' names, which cluster DNS
        # answers in a real cluster, are listed here too.
        lines = ["# pod network namespace of distenv test/frameworks",
                 "127.0.0.1\tlocalhost",
                 "::1\tlocalhost ip6-localhost ip6-loopback"]
        for j, ((short, fqdn), addr) in enumerate(zip(self.pods, self.addrs)):
            if j == i:
                lines.append(f"{addr}\t{fqdn}\t{short}" if fqdn else f"{addr}\t{short}")
            elif fqdn and j != skip:
                lines.append(f"{addr}\t{fqdn}")
        # "r+" and truncate, not "w" after the first write: the same inode, so a
        # running `ip netns exec` (a bind mount of this file) sees the change.
        path = f"{d}/hosts"
        with open(path, "r+" if os.path.exists(path) else "w") as f:
            f.seek(0)
            f.truncate()
            f.write("\n".join(lines) + "\n")
        # No DNS server inside: any other lookup fails at once instead of waiting.
        with open(f"{d}/resolv.conf", "w") as f:
            f.write("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")

    def wait_links(self, timeout=10):
        """Bounded wait until every eth0 reports LOWER_UP and the bridge forwards."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all("LOWER_UP" in sh("ip", "-n", ns, "link", "show", "eth0").stdout
                   for ns in self.names):
                return
            time.sleep(0.1)
        raise Failure("pod interfaces not up within %ds" % timeout)

    def start(self, i, env, argv, log_path):
        full = dict(env)
        full["PATH"] = PATH_VALUE
        full["PYTHONPATH"] = WORKERS
        log = open(log_path, "w")
        # Pod = network namespace (ip netns exec also binds /etc/netns/<ns>/*
        # over /etc) + UTS namespace with the pod's hostname. env -i keeps the
        # process environment exactly the injected variables + PATH/PYTHONPATH.
        cmd = ["ip", "netns", "exec", self.names[i], "unshare", "--uts", "--",
               "/bin/sh", "-c", 'h=$1; shift; hostname "$h" && exec env -i "$@"', "sh",
               self.pods[i][0]] + [f"{k}={v}" for k, v in sorted(full.items())] + argv
        p = subprocess.Popen(cmd, env={"PATH": PATH_VALUE}, stdout=log,
                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True, cwd=WORKERS)
        log.close()
        self.procs.append(p)
        return p

    def kill_all(self):
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 5
        for p in self.procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(timeout=5)

    def down(self):
        self.kill_all()
        for ns in self.names + [self.hub]:
            sh("ip", "netns", "del", ns, check=False)
            shutil.rmtree(f"/etc/netns/{ns}", ignore_errors=True)


def run_ranks(net, envs, argv_for_rank, timeout, logdir, label):
    """Starts every rank, waits for all with one deadline. Returns per-rank dicts
    {rc, results: [..], log}. A rank still running at the deadline gets rc None."""
    net.procs = []
    logs = [os.path.join(logdir, f"{label}-rank{i}.log") for i in range(len(envs))]
    procs = [net.start(i, envs[i], argv_for_rank(i), logs[i]) for i in range(len(envs))]
    deadline = time.monotonic() + timeout
    rcs = [None] * len(procs)
    for i, p in enumerate(procs):
        try:
            rcs[i] = p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            rcs[i] = None
            # Once one rank timed out the others get only a short grace.
            deadline = min(deadline, time.monotonic() + 2)
    net.kill_all()
    out = []
    for i in range(len(procs)):
        results = []
        try:
            with open(logs[i], errors="replace") as f:
                for line in f:
                    if line.startswith(RESULT_PREFIX):
                        try:
                            results.append(json.loads(line[len(RESULT_PREFIX):]))
                        except ValueError:
                            pass
        except OSError:
            pass
        out.append({"rc": rcs[i], "results": results, "log": logs[i]})
    return out


def result(rank_out, what):
    for r in rank_out["results"]:
        if r.get("what") == what:
            return r
    return None


def why(rank_out, i, timeout):
    rc = rank_out["rc"]
    state = f"timed out after {timeout}s" if rc is None else f"exit {rc}"
    return f"rank {i}: {state}; log {rank_out['log']}:\n" + tail(rank_out["log"], 15)


# --------------------------------------------------------------------------
# The checks of each framework run.


def check_start(res, sc, label, outs, envs):
    """Each rank ran with exactly its injected env + PATH/PYTHONPATH, under its
    pod's hostname."""
    bad = []
    for i, o in enumerate(outs):
        st = result(o, "start")
        want = sorted(set(envs[i]) | {"PATH", "PYTHONPATH"})
        if st is None:
            bad.append(f"rank {i}: no start report")
            continue
        # The interpreter itself adds LC_CTYPE when it coerces the C locale (PEP 538).
        got = [k for k in st["env"] if k != "LC_CTYPE"]
        if got != want:
            bad.append(f"rank {i}: env names {got} want {want}")
        if st["hostname"] != pod_hostname(sc, i):
            bad.append(f"rank {i}: hostname {st['hostname']!r}")
    return res.check(not bad, f"{sc['key']}/{label}: every rank in its own pod namespace "
                     f"with exactly the injected env", "\n".join(bad))


def check_torchrun(res, sc, outs):
    w, p = sc["world"], DEFAULT_PORT
    a = pod_fqdn(sc, 0)
    bad = []
    for i, o in enumerate(outs):
        t = result(o, "torchrun")
        if t is None:
            bad.append(why(o, i, "?"))
            continue
        if sc["elastic"]:
            lo, hi = sc["elastic"]
            want = {"nnodes": f"{lo}:{hi}", "min_nodes": lo, "max_nodes": hi,
                    "nproc": 1, "rdzv_backend": "c10d", "rdzv_endpoint": f"{a}:{p}",
                    "run_id": f"{NAMESPACE}-{sc['workload']}",
                    "max_restarts": sc["max_restarts"] or 0,
                    # PET_RDZV_CONF: the endpoint's own pod hosts the c10d store
                    "is_host": "1" if i == 0 else "0"}
        else:
            want = {"nnodes": str(w), "min_nodes": w, "max_nodes": w, "nproc": 1,
                    "node_rank": i, "master_addr": a, "master_port": p,
                    "rdzv_backend": "static", "rdzv_endpoint": f"{a}:{p}",
                    "static_rank": str(i)}
        # The static rendezvous takes the node rank from rdzv_configs["rank"].
        t = dict(t, static_rank=t.get("rdzv_configs", {}).get("rank"),
                 is_host=t.get("rdzv_configs", {}).get("is_host"))
        for k, v in want.items():
            if t.get(k) != v:
                bad.append(f"rank {i}: {k}={t.get(k)!r} want {v!r}")
    what = ("min:max nodes, c10d backend, rendezvous endpoint, id and is_host, max restarts"
            if sc["elastic"] else "nnodes, nproc_per_node, node_rank, master addr/port")
    return res.check(not bad, f"{sc['key']}/torchrun: parse_args + config_from_args "
                     f"from PET_* give {what}", "\n".join(bad))


def run_pytorch(res, sc, net, envs, logdir):
    t = TIMEOUTS["pytorch"]
    outs = run_ranks(net, envs, lambda i: ["/usr/bin/python3", "-u", "torch_worker.py",
                                           "static"], t, logdir, f"{sc['key']}-pytorch")
    check_start(res, sc, "pytorch", outs, envs)
    check_torchrun(res, sc, outs)
    w = sc["world"]
    bad = []
    for i, o in enumerate(outs):
        r = result(o, "allreduce")
        if o["rc"] != 0 or r is None:
            bad.append(why(o, i, t))
        elif not (r["ok"] and r["rank"] == i and r["world"] == w
                  and r["value"] == w * (w + 1) / 2
                  and r["members"] == [f"{j}@{pod_hostname(sc, j)}" for j in range(w)]):
            bad.append(f"rank {i}: {r}")
    res.check(not bad, f"{sc['key']}/pytorch: init_process_group(gloo, env://) in "
              f"{w} namespaces, all_reduce = {w * (w + 1) // 2} on every rank",
              "\n".join(bad))


def run_torchrun_elastic(res, sc, net, envs, logdir):
    t = TIMEOUTS["torchrun-elastic"]
    outs = run_ranks(net, envs, lambda i: ["/usr/bin/python3", "-u", "torch_worker.py",
                                           "elastic"], t, logdir, f"{sc['key']}-torchrun")
    check_start(res, sc, "torchrun", outs, envs)
    check_torchrun(res, sc, outs)
    w = sc["world"]
    bad, ranks = [], []
    for i, o in enumerate(outs):
        rz, ar = result(o, "rendezvous"), result(o, "allreduce")
        if o["rc"] != 0 or rz is None or ar is None:
            bad.append(why(o, i, t))
            continue
        ranks.append(rz["group_rank"])
        if rz["group_world"] != w or not ar["ok"] or ar["value"] != w * (w + 1) / 2:
            bad.append(f"rank {i}: {rz} {ar}")
    if not bad and sorted(ranks) != list(range(w)):
        bad.append(f"group ranks {ranks} are not 0..{w - 1}")
    res.check(not bad, f"{sc['key']}/torchrun: c10d rendezvous at PET_RDZV_ENDPOINT "
              f"forms {w} nodes ({'%d:%d' % sc['elastic']}), gloo all_reduce on its store",
              "\n".join(bad))


def run_tensorflow(res, sc, net, envs, logdir, fw_python):
    t = TIMEOUTS["tensorflow"]
    outs = run_ranks(net, envs, lambda i: [fw_python, "-u", "tf_worker.py"], t, logdir,
                     f"{sc['key']}-tensorflow")
    check_start(res, sc, "tensorflow", outs, envs)
    w = sc["world"]
    workers = [f"{pod_fqdn(sc, i)}:{DEFAULT_PORT}" for i in range(w)]
    bad = []
    for i, o in enumerate(outs):
        r = result(o, "resolver")
        if r is None:
            bad.append(why(o, i, t))
        elif (r["cluster"] != {"worker": workers} or r["task_type"] != "worker"
              or r["task_id"] != i):
            bad.append(f"rank {i}: cluster={r['cluster']} task={r['task_type']}/{r['task_id']}")
    res.check(not bad, f"{sc['key']}/tensorflow: TFConfigClusterResolver gives the "
              f"{w}-worker cluster spec and task worker/<rank>", "\n".join(bad))
    bad = []
    for i, o in enumerate(outs):
        r = result(o, "mwms")
        if o["rc"] != 0 or r is None:
            bad.append(why(o, i, t))
        elif not (r["ok"] and r["replicas"] == w and r["value"] == w * (w + 1) / 2
                  and r["worker_index"] == i):
            bad.append(f"rank {i}: {r}")
    res.check(not bad, f"{sc['key']}/tensorflow: MultiWorkerMirroredStrategy across "
              f"{w} namespaces, all_reduce = {w * (w + 1) // 2}", "\n".join(bad))


def wait_command(sc, r, binary):
    """The injected init container of rank r, as (env, argv) with the built binary
    in place of the image's path."""
    pod = sc["_patched"][r]
    init = pod["spec"]["initContainers"][0]
    if init["name"] != "distenv-wait-for-master":
        raise Failure(f"rank {r}: first init container is {init['name']}")
    env = {e["name"]: e["value"] for e in init.get("env", [])}
    argv = [binary] + init["command"][1:]
    return env, argv


def run_pytorch_wait(res, sc, net, envs, logdir, binary):
    """Ranks 1.. start first, each running the init container's command before its
    training process; rank 0's name appears in their hosts files after 7 s, its
    process starts after 12 s. The job still forms, and the waits are in the logs."""
    t = TIMEOUTS["pytorch"]
    w = sc["world"]
    label = f"{sc['key']}-pytorch"
    logs = [os.path.join(logdir, f"{label}-rank{i}.log") for i in range(w)]
    net.procs = []
    for i in range(1, w):
        net.hide_peer(i, 0, True)

    def start(i):
        wenv, wargv = wait_command(sc, i, binary)
        script = ('env -i ' + " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(wenv.items()))
                  + " " + " ".join(shlex.quote(a) for a in wargv) + ' && exec "$@"')
        return net.start(i, envs[i], ["/bin/sh", "-c", script, "sh", "/usr/bin/python3", "-u",
                                      "torch_worker.py", "static"], logs[i])

    # The wait reports every 5 s: hidden for 7 s, the name is reported missing
    # once; from 7 s it resolves and the port is refused until rank 0 starts at 12 s.
    procs = {i: start(i) for i in range(1, w)}
    time.sleep(7)
    for i in range(1, w):
        net.hide_peer(i, 0, False)
    time.sleep(5)
    procs[0] = start(0)
    deadline = time.monotonic() + t
    rcs = {}
    for i in range(w):
        try:
            rcs[i] = procs[i].wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            rcs[i] = None
            deadline = min(deadline, time.monotonic() + 2)
    net.kill_all()
    outs = []
    for i in range(w):
        results = []
        with open(logs[i], errors="replace") as f:
            text = f.read()
        for line in text.splitlines():
            if line.startswith(RESULT_PREFIX):
                results.append(json.loads(line[len(RESULT_PREFIX):]))
        outs.append({"rc": rcs[i], "results": results, "log": logs[i], "text": text})
    bad = []
    a = pod_fqdn(sc, 0)
    for i, o in enumerate(outs):
        r = result(o, "allreduce")
        if o["rc"] != 0 or r is None or not r["ok"] or r["value"] != w * (w + 1) / 2:
            bad.append(why(o, i, t))
        if i > 0 and not (f"waiting for {a} to resolve" in o["text"]
                          and f"{a}:{DEFAULT_PORT} accepts connections" in o["text"]):
            bad.append(f"rank {i}: the wait did not see rank 0 missing, then accepting: "
                       + tail(o["log"], 6))
        if i == 0 and f"{a} resolves (rank 0 opens port" not in o["text"]:
            bad.append("rank 0: the wait did not return on the name alone: " + tail(o["log"], 6))
    res.check(not bad, f"{sc['key']}/pytorch: ranks started 12 s before rank 0 wait with the "
              f"injected init container's command, then form the gloo job "
              f"(all_reduce = {w * (w + 1) // 2})", "\n".join(bad))


def run_tensorflow_roles(res, sc, net, envs, logdir, fw_python):
    """TFConfigClusterResolver in each pod reads the roles distenv wrote: the
    cluster spec with one list per replicated Job and the pod's own task type
    and index."""
    t = TIMEOUTS["tensorflow"]
    outs = run_ranks(net, envs, lambda i: [fw_python, "-u", "tf_worker.py", "resolver-only"],
                     t, logdir, f"{sc['key']}-tensorflow")
    check_start(res, sc, "tensorflow", outs, envs)
    bad = []
    for i, o in enumerate(outs):
        r, want = result(o, "resolver"), tf_config_expected(sc, i)
        if o["rc"] != 0 or r is None:
            bad.append(why(o, i, t))
        elif (r["cluster"] != want["cluster"] or r["task_type"] != want["task"]["type"]
              or r["task_id"] != want["task"]["index"]):
            bad.append(f"rank {i}: cluster={r['cluster']} task={r['task_type']}/{r['task_id']}")
    roles = "+".join(f"{n}x{jobs * pods}" for n, jobs, pods in sc["rjobs"])
    res.check(not bad, f"{sc['key']}/tensorflow: TFConfigClusterResolver gives the {roles} "
              f"cluster spec and each pod its own task type and index", "\n".join(bad))


def run_tensorflow_ps(res, sc, net, envs, logdir, fw_python):
    """Parameter-server training with a sidecar evaluator, every task's role and
    cluster read by TFConfigClusterResolver from its own TF_CONFIG: TensorFlow's
    own cluster checks on every pod's view, the chief's ParameterServerStrategy
    trains on the workers and ps, the evaluator restores the chief's checkpoint
    without joining the cluster."""
    t, steps = TIMEOUTS["tensorflow"], 5
    shared = tempfile.mkdtemp(prefix=f"{sc['key']}-shared-", dir=logdir)
    outs = run_ranks(net, envs, lambda i: [fw_python, "-u", "tf_ps_worker.py", shared,
                                           str(steps)], t, logdir, f"{sc['key']}-tensorflow")
    check_start(res, sc, "tensorflow", outs, envs)
    w = sc["world"]
    types = [jobset_place(sc, i)[0] for i in range(w)]
    training = [i for i in range(w) if types[i] != "evaluator"]
    evaluators = [i for i in range(w) if types[i] == "evaluator"]
    views = [result(o, "resolver") for o in outs]
    bad = []
    for i, (o, r) in enumerate(zip(outs, views)):
        want = tf_config_expected(sc, i)
        if r is None:
            bad.append(why(o, i, t))
        elif (r["cluster"] != want["cluster"] or r["task_type"] != want["task"]["type"]
              or r["task_id"] != want["task"]["index"]):
            bad.append(f"rank {i}: cluster={r['cluster']} task={r['task_type']}/{r['task_id']}")
    if not bad:
        first = views[training[0]]["cluster"]
        for i in training:
            if views[i]["cluster"] != first or "evaluator" in views[i]["cluster"]:
                bad.append(f"rank {i} ({types[i]}): cluster {views[i]['cluster']} is not the "
                           f"training roles' {first} without the evaluator")
        for i in evaluators:
            if set(views[i]["cluster"]) != {"evaluator"}:
                bad.append(f"rank {i} (evaluator): cluster {views[i]['cluster']}")
    res.check(not bad, f"{sc['key']}/tensorflow: TFConfigClusterResolver: chief, workers and "
              f"ps read one cluster without the evaluator, the evaluator a cluster of its "
              f"own, each pod its own task type and index", "\n".join(bad))
    n_train = sum(1 for i in training if types[i] in ("chief", "worker"))
    bad = []
    for i, (o, r) in enumerate(zip(outs, views)):
        c = result(o, "tf-checks")
        if c is None or r is None:
            bad.append(why(o, i, t))
            continue
        want = {"validate": "ok", "normalized": r["cluster"], "split": r["cluster"],
                "is_chief": types[i] in ("chief", "evaluator")}
        if types[i] in ("chief", "worker"):
            chiefs = len(r["cluster"].get("chief", []))
            leader = "chief" if chiefs else "worker"
            want.update(worker_count=n_train, collective_leader=f"/job:{leader}/replica:0/task:0",
                        id_in_cluster=0 if types[i] == "chief" else r["task_id"] + chiefs)
        elif types[i] == "evaluator":
            want.update(worker_count=len(r["cluster"]["evaluator"]), collective_leader="",
                        id_in_cluster=r["task_id"])
        got = {k: c.get(k) for k in want}
        if got != want:
            bad.append(f"rank {i} ({types[i]}): {got} want {want}")
    res.check(not bad, f"{sc['key']}/tensorflow: TensorFlow's own checks accept every pod's "
              f"view (multi_worker_util._validate_cluster_spec, normalize_cluster_spec, "
              f"is_chief, worker_count, id_in_cluster, collective_leader) and "
              f"_split_cluster_for_evaluator leaves it as it is", "\n".join(bad))
    bad = []
    c = types.index("chief")
    chief = result(outs[c], "ps-training")
    if chief is None or outs[c]["rc"] != 0 or chief["value"] != steps:
        bad.append(f"chief: {chief}; connecting to {result(outs[c], 'connecting')}; "
                   + why(outs[c], c, t))
    for i, o in enumerate(outs):
        if types[i] in ("worker", "ps") and (o["rc"] != 0 or result(o, "server") is None):
            bad.append(why(o, i, t))
        if types[i] == "evaluator":
            ev = result(o, "sidecar")
            if (o["rc"] != 0 or ev is None or chief is None or ev["value"] != steps
                    or ev["checkpoint"] != chief["checkpoint"]):
                bad.append(f"evaluator: {ev}; " + why(o, i, t))
    res.check(not bad, f"{sc['key']}/tensorflow: the chief's ParameterServerStrategy runs "
              f"{steps} steps on the workers and ps across namespaces; the sidecar evaluator "
              f"restores its checkpoint (v = {steps}) without joining the cluster",
              "\n".join(bad))


def run_jax(res, sc, net, envs, logdir, fw_python):
    t = TIMEOUTS["jax"]
    outs = run_ranks(net, envs, lambda i: [fw_python, "-u", "jax_worker.py"], t, logdir,
                     f"{sc['key']}-jax")
    check_start(res, sc, "jax", outs, envs)
    w = sc["world"]
    bad = []
    for i, o in enumerate(outs):
        r = result(o, "init")
        if r is None:
            bad.append(why(o, i, t))
        elif r["process_index"] != i or r["process_count"] != w or r["global_devices"] != w:
            bad.append(f"rank {i}: {r}")
    res.check(not bad, f"{sc['key']}/jax: jax.distributed.initialize() via "
              f"JAX_COORDINATOR_ADDRESS: process {{rank}} of {w}", "\n".join(bad))
    bad = []
    for i, o in enumerate(outs):
        r = result(o, "psum")
        if o["rc"] != 0 or r is None:
            bad.append(why(o, i, t))
        elif not (r["ok"] and r["value"] == w * (w + 1) / 2
                  and r["gathered"] == list(range(w))):
            bad.append(f"rank {i}: {r}")
    res.check(not bad, f"{sc['key']}/jax: psum across {w} processes (gloo CPU "
              f"collectives) = {w * (w + 1) // 2}", "\n".join(bad))


# --------------------------------------------------------------------------
# The launchers (docs/frameworks.md, "Launcher scenarios"). Each pod's command
# is launch_pod.py with a shell command line, as a container's `sh -c` would
# run it: `$NODE_RANK` and the like are expanded from the injected env.


def run_launcher_pods(net, envs, cmd_for_rank, timeout, logdir, label):
    """Starts every pod's command line under launch_pod.py; returns run_ranks'
    per-pod dicts, the results of every process the pod's launcher started
    included (they share the pod's output)."""
    return run_ranks(net, envs, lambda i: ["/usr/bin/python3", "-u", "launch_pod.py",
                                           cmd_for_rank(i)], timeout, logdir, label)


def results_of(rank_out, what):
    return [r for r in rank_out["results"] if r.get("what") == what]


def check_world(res, sc, outs, t, name, nproc, extra=None):
    """Every process of every pod reported the world the launcher gave it: W x
    nproc processes, pod i holding global ranks i*nproc .. i*nproc+nproc-1 with
    local ranks 0..nproc-1, the same gathered member list everywhere, and the
    all_reduce of rank+1 on every process."""
    w = sc["world"]
    n = w * nproc
    members = [f"{r}@{pod_hostname(sc, r // nproc)}/{r % nproc}" for r in range(n)]
    bad = []
    for i, o in enumerate(outs):
        got = results_of(o, "world")
        if o["rc"] != 0 or len(got) != nproc:
            bad.append(f"pod {i}: {len(got)} of {nproc} processes reported; " + why(o, i, t))
            continue
        for r in got:
            want = {"world": n, "members": members, "value": n * (n + 1) / 2}
            want.update(extra or {})
            if {k: r.get(k) for k in want} != want:
                bad.append(f"pod {i}: {r} want {want}")
        ranks = sorted((r["rank"], r["local_rank"]) for r in got)
        if ranks != [(i * nproc + k, k) for k in range(nproc)]:
            bad.append(f"pod {i}: (rank, local rank) {ranks}")
    return res.check(not bad, name, "\n".join(bad))


def run_torchrun_launcher(res, sc, net, envs, logdir):
    t = TIMEOUTS["launcher"]
    # --redirects/--tee: Debian's torch 1.13 under Python 3.11 fails on the
    # default "0" (Std.from_str: iterating an IntFlag no longer yields the
    # zero member), so stderr is redirected and teed, stdout left as it is.
    cmd = "exec torchrun --redirects 2 --tee 2 dist_worker.py torchrun"
    outs = run_launcher_pods(net, envs, lambda i: cmd, t, logdir, f"{sc['key']}-torchrun")
    check_start(res, sc, "torchrun", outs, envs)
    nproc = int(sc["nproc"])
    check_world(res, sc, outs, t, f"{sc['key']}/torchrun: `torchrun dist_worker.py` in "
                f"{sc['world']} pods starts {nproc} processes each from PET_* alone: one gloo "
                f"world of {sc['world'] * nproc}, node rank = pod, all_reduce on every process",
                nproc)


def lightning_outcome(sc, outs, nproc):
    """(formed, problems): formed when every process reported, global ranks
    0..n-1 each once, pod i holding node rank i, and every all_gather 0..n-1."""
    n = sc["world"] * nproc
    bad, ranks = [], []
    for i, o in enumerate(outs):
        got = results_of(o, "lightning")
        done = results_of(o, "fit-done")
        if o["rc"] != 0 or len(got) != nproc or len(done) != nproc:
            bad.append(f"pod {i}: {len(got)} of {nproc} processes reported, {len(done)} "
                       f"finished fit; " + why(o, i, "?"))
        for r in got:
            ranks.append(r["global_rank"])
            want = {"world": n, "node_rank": i, "gathered": list(range(n)),
                    "environment": "LightningEnvironment", "host": pod_hostname(sc, i)}
            if {k: r.get(k) for k in want} != want:
                bad.append(f"pod {i}: {r} want {want}")
            if r["global_rank"] != i * nproc + r["local_rank"]:
                bad.append(f"pod {i}: global rank {r['global_rank']} local {r['local_rank']}")
    if sorted(ranks) != list(range(n)):
        bad.append(f"global ranks reported: {sorted(ranks)} want 0..{n - 1}")
    return not bad, bad


def run_lightning(res, sc, net, envs, logdir, launch_python):
    t = TIMEOUTS["launcher"]
    nproc = int(sc["nproc"])
    cmd = f"exec {launch_python} -u lightning_worker.py {nproc}"
    outs = run_launcher_pods(net, envs, lambda i: cmd, t, logdir, f"{sc['key']}-lightning")
    check_start(res, sc, "lightning", outs, envs)
    ok, bad = lightning_outcome(sc, outs, nproc)
    how = ("LOCAL_RANK=0 injected, no process started by Lightning" if nproc == 1
           else f"Lightning starts {nproc} processes in each")
    res.check(ok, f"{sc['key']}/lightning: Trainer(devices={nproc}, num_nodes=$NNODES) with "
              f"the default LightningEnvironment in {sc['world']} pods ({how}): one world "
              f"of {sc['world'] * nproc}, node rank from NODE_RANK, all_gather of the global "
              f"ranks 0..{sc['world'] * nproc - 1} on every process", "\n".join(bad))


def run_lightning_old_env(res, sc, net, envs, logdir, launch_python):
    """The control: the same script with the env distenv gave before NODE_RANK
    and NNODES (num_nodes written into the script instead). Every pod believes
    it is node 0, ranks collide; the world must not form."""
    t = TIMEOUTS["lightning-old-env"]
    nproc = int(sc["nproc"])
    old = [{k: v for k, v in e.items() if k not in ("NODE_RANK", "NNODES")} for e in envs]
    cmd = f"exec {launch_python} -u lightning_worker.py {nproc} {sc['world']}"
    outs = run_launcher_pods(net, old, lambda i: cmd, t, logdir, f"{sc['key']}-old-env")
    formed, _ = lightning_outcome(sc, outs, nproc)
    # Lightning logs "Initializing distributed: GLOBAL_RANK: g, MEMBER: m/n" in
    # every process it starts: each pod must show the ranks of node 0.
    claimed = []
    for o in outs:
        with open(o["log"], errors="replace") as f:
            claimed.append(sorted(int(g) for g in re.findall(
                r"Initializing distributed: GLOBAL_RANK: (\d+)", f.read())))
    states = ["timed out" if o["rc"] is None else f"exit {o['rc']}" for o in outs]
    collide = all(c == list(range(nproc)) for c in claimed)
    res.check(not formed and collide, f"{sc['key']}/lightning: control: without NODE_RANK "
              f"(the env before it was injected) every pod takes global ranks 0..{nproc - 1} "
              f"of node 0 and the world does not form within {t} s",
              f"formed: {formed}; global ranks claimed per pod {claimed}; pods {states}")
    say(f"{sc['key']}/lightning control: global ranks claimed per pod {claimed}, pods {states}")


def run_accelerate(res, sc, net, envs, logdir, launch_python):
    t = TIMEOUTS["launcher"]
    nproc = int(sc["nproc"])
    accelerate = os.path.join(os.path.dirname(launch_python), "accelerate")
    # PET_REDIRECTS=2: accelerate hands torchrun its own --tee but not
    # --redirects, whose default "0" Debian's torch 1.13 cannot read under
    # Python 3.11 (see run_torchrun_launcher).
    cmd = (f"PET_REDIRECTS=2 exec {accelerate} launch --multi_gpu "
           f"--num_processes $((NNODES * {nproc})) --num_machines $NNODES "
           f"--machine_rank $NODE_RANK --main_process_ip $MASTER_ADDR "
           f"--main_process_port $MASTER_PORT --tee 2 dist_worker.py accelerate")
    outs = run_launcher_pods(net, envs, lambda i: cmd, t, logdir, f"{sc['key']}-accelerate")
    check_start(res, sc, "accelerate", outs, envs)
    check_world(res, sc, outs, t, f"{sc['key']}/accelerate: `accelerate launch --machine_rank "
                f"$NODE_RANK --num_machines $NNODES --main_process_ip $MASTER_ADDR "
                f"--main_process_port $MASTER_PORT` in {sc['world']} pods: PartialState "
                f"gives one world of {sc['world'] * nproc} (MULTI_CPU, gloo), all_reduce on "
                f"every process", nproc,
                {"distributed_type": "DistributedType.MULTI_CPU", "backend": "gloo"})


def run_xgboost(res, sc, net, envs, logdir):
    t = TIMEOUTS["launcher"]
    outs = run_ranks(net, envs, lambda i: ["/usr/bin/python3", "-u", "xgb_worker.py"], t,
                     logdir, f"{sc['key']}-xgboost")
    check_start(res, sc, "xgboost", outs, envs)
    w = sc["world"]
    bad = []
    if result(outs[0], "tracker") is None:
        bad.append("pod 0 started no tracker: " + why(outs[0], 0, t))
    for i, o in enumerate(outs):
        r = result(o, "allreduce")
        want = {"rank": i, "world": w, "value": w * (w + 1) / 2,
                "each": [float(k + 1) for k in range(w)], "host": pod_hostname(sc, i)}
        if o["rc"] != 0 or r is None:
            bad.append(why(o, i, t))
        elif {k: r.get(k) for k in want} != want:
            bad.append(f"pod {i}: {r} want {want}")
    res.check(not bad, f"{sc['key']}/xgboost: Rabit joins from DMLC_* alone, the tracker in "
              f"pod 0 for DMLC_NUM_WORKER={w}: rank = DMLC_TASK_ID, allreduce = "
              f"{w * (w + 1) // 2} on every worker", "\n".join(bad))
    bad = []
    trains = [result(o, "train") for o in outs]
    if any(tr is None for tr in trains):
        bad.append("not every worker finished training: "
                   + "; ".join(why(o, i, t) for i, o in enumerate(outs) if trains[i] is None))
    else:
        if len({tr["model_sha"] for tr in trains}) != 1:
            bad.append(f"models differ: {[tr['model_sha'][:12] for tr in trains]}")
        for i, tr in enumerate(trains):
            if tr["rounds"] != 5 or tr["accuracy"] < 0.85 or tr["rows"] != 120:
                bad.append(f"pod {i}: {tr}")
    res.check(not bad, f"{sc['key']}/xgboost: xgb.train (hist, 5 rounds) on {w} shards of "
              f"120 rows: the same model on every worker, accuracy >= 0.85 on all rows",
              "\n".join(bad))


def run_paddle(res, sc, net, envs, logdir, launch_python):
    t = TIMEOUTS["launcher"]
    w = sc["world"]
    # The launcher writes its logs under ./log of its working directory: one
    # directory per pod, kept with the other logs.
    dirs = [tempfile.mkdtemp(prefix=f"{sc['key']}-paddle-pod{i}-", dir=logdir)
            for i in range(w)]
    script = os.path.join(WORKERS, "paddle_worker.py")
    outs = run_launcher_pods(
        net, envs, lambda i: f"cd {dirs[i]} && exec {launch_python} -m "
                             f"paddle.distributed.launch {script}",
        t, logdir, f"{sc['key']}-paddle")
    check_start(res, sc, "paddle", outs, envs)
    for o, d in zip(outs, dirs):
        for f in sorted(glob.glob(os.path.join(d, "log", "workerlog.*"))):
            with open(f, errors="replace") as fh:
                for line in fh:
                    if line.startswith(RESULT_PREFIX):
                        try:
                            r = json.loads(line[len(RESULT_PREFIX):])
                        except ValueError:
                            continue
                        # the launcher also echoes local rank 0's log
                        if r not in o["results"]:
                            o["results"].append(r)
    bad = []
    for i, o in enumerate(outs):
        got = results_of(o, "paddle")
        if o["rc"] != 0 or len(got) != 1:
            logs = glob.glob(os.path.join(dirs[i], "log", "*"))
            bad.append(why(o, i, t) + f"\n  launcher logs: {logs}")
            continue
        want = {"rank": i, "world": w, "value": w * (w + 1) / 2, "gathered": list(range(w)),
                "host": pod_hostname(sc, i)}
        if {k: got[0].get(k) for k in want} != want:
            bad.append(f"pod {i}: {got[0]} want {want}")
    res.check(not bad, f"{sc['key']}/paddle: `python -m paddle.distributed.launch "
              f"paddle_worker.py` (no other argument) in {w} pods forms one collective job "
              f"from PADDLE_*: rank = PADDLE_RANK, all_reduce = {w * (w + 1) // 2}, "
              f"all_gather 0..{w - 1}", "\n".join(bad))


def deepspeed_rule(sdist):
    """Reads DeepSpeed's own init_distributed from its source archive (never
    imported: it needs torch >= 2) and returns (version, required_env, the
    test of the `if` that falls back to MPI discovery, as a function of an
    environment)."""
    base = os.path.basename(sdist)[:-len(".tar.gz")]
    with tarfile.open(sdist) as tf:
        src = tf.extractfile(f"{base}/deepspeed/comm/comm.py").read().decode()
    tree = ast.parse(src)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef)
              and n.name == "init_distributed")
    required = fallback = None
    for node in ast.walk(fn):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and getattr(node.targets[0], "id", None) == "required_env"):
            required = ast.literal_eval(node.value)
        if isinstance(node, ast.If):
            names = {getattr(c.func, "id", None) for c in ast.walk(node)
                     if isinstance(c, ast.Call)}
            uses = {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)}
            if "mpi_discovery" in names and "required_env" in uses:
                fallback = node.test
    if required is None or fallback is None:
        raise Failure(f"{base}: init_distributed has no required_env list or no "
                      f"mpi_discovery fallback on it")
    code = compile(ast.Expression(fallback), f"{base}/deepspeed/comm/comm.py", "eval")

    def falls_back(env):
        fake_os = type("os", (), {"environ": dict(env)})
        return bool(eval(code, {"os": fake_os, "all": all, "map": map},
                         {"auto_mpi_discovery": True, "required_env": required}))
    return base, required, falls_back


def run_deepspeed_rule(res, sc, webhook, sdist):
    """A one-GPU pod's env has every variable DeepSpeed's init_distributed
    requires (env://, no MPI discovery); an eight-GPU pod's has no LOCAL_RANK
    (the deepspeed launcher or torchrun sets it per process)."""
    base, required, falls_back = deepspeed_rule(sdist)
    say(f"{sc['key']}: {base} init_distributed requires {required}")
    res.check(set(required) >= {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"},
              f"{sc['key']}: {base}'s init_distributed names its required variables",
              f"required_env = {required}")
    many = dict(sc, key=f"{sc['key']}-8gpu", workload="dsp8", service="dsp8", gpus=8)
    envs1, _ = get_envs(res, sc, webhook) if webhook else (None, None)
    envs8, _ = get_envs(res, many, webhook) if webhook else (None, None)
    if envs1 is None or envs8 is None:
        return
    bad = []
    for i, env in enumerate(envs1):
        missing = [k for k in required if k not in env]
        if missing or falls_back(env):
            bad.append(f"one-GPU pod {i}: missing {missing}")
        old = {k: v for k, v in env.items() if k not in ("LOCAL_RANK", "LOCAL_WORLD_SIZE")}
        if not falls_back(old):
            bad.append(f"one-GPU pod {i}: without LOCAL_RANK the rule still takes env://")
    res.check(not bad, f"{sc['key']}: a one-GPU pod's injected env has all of {required}: "
              f"DeepSpeed's rule takes env:// (without LOCAL_RANK, as before, it falls back "
              f"to MPI discovery)", "\n".join(bad))
    bad = [f"eight-GPU pod {i}: LOCAL_RANK={env['LOCAL_RANK']}"
           for i, env in enumerate(envs8) if "LOCAL_RANK" in env]
    bad += [f"eight-GPU pod {i}: PET_NPROC_PER_NODE={env.get('PET_NPROC_PER_NODE')}"
            for i, env in enumerate(envs8) if env.get("PET_NPROC_PER_NODE") != "8"]
    res.check(not bad, f"{sc['key']}: an eight-GPU pod gets PET_NPROC_PER_NODE=8 and no "
              f"LOCAL_RANK (its launcher sets one per process)", "\n".join(bad))


# --------------------------------------------------------------------------


def dns_names(pod):
    """The names cluster DNS gives a pod: (short hostname, FQDN or None). A pod
    has an FQDN only with spec.hostname and spec.subdomain (the headless
    Service); the namespace is the request's when the object has none."""
    spec, meta = pod["spec"], pod["metadata"]
    short = spec.get("hostname") or meta.get("name")
    ns = meta.get("namespace") or NAMESPACE
    sub = spec.get("subdomain")
    return short, (f"{short}.{sub}.{ns}.svc.{CLUSTER_DOMAIN}" if sub else None)


def render_envs(res, sc, binary, workdir):
    """Per-rank env and DNS names from `distenv-webhook render -o json` of the
    JobSet manifest (the same core as /mutate; the look-up answered from the
    manifest), checked against the README like the webhook's."""
    tmpl = {"metadata": {"labels": {"distenv.dev/inject": "true"},
                         "annotations": {"distenv.dev/frameworks": FRAMEWORKS_ANNOTATION}},
            "spec": {"containers": [{"name": "trainer", "image": "trainer:1.0"}]}}
    manifest = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                "metadata": {"name": sc["workload"], "namespace": NAMESPACE},
                "spec": {"replicatedJobs": [
                    {"name": n, "replicas": jobs, "template": {"spec": {
                        "completions": pods, "parallelism": pods, "completionMode": "Indexed",
                        "template": tmpl}}} for n, jobs, pods in sc["rjobs"]]}}
    if sc.get("coordinator"):
        rjob, j, i = sc["coordinator"]
        manifest["spec"]["coordinator"] = {"replicatedJob": rjob, "jobIndex": j, "podIndex": i}
    path = os.path.join(workdir, f"{sc['key']}.yaml")
    with open(path, "w") as f:
        json.dump(manifest, f)  # JSON is YAML
    r = subprocess.run([binary, "render", "-o", "json", path], capture_output=True, text=True,
                       timeout=60)
    if not res.check(r.returncode == 0, f"{sc['key']}: render of the {sc['kind']} manifest",
                     r.stderr.strip()):
        return None, None
    ranks = {item["rank"]: item for item in json.loads(r.stdout)}
    envs = [{e["name"]: e["value"] for e in ranks[i]["env"]} for i in range(sc["world"])]
    names = [(ranks[i]["pod"], pod_fqdn(sc, i)) for i in range(sc["world"])]
    diffs = []
    for i, env in enumerate(envs):
        if ranks[i]["pod"] != pod_hostname(sc, i):
            diffs.append(f"rank {i}: pod {ranks[i]['pod']} want {pod_hostname(sc, i)}")
        d = env_differences(env, expected_env(sc, i))
        if d:
            diffs.append(f"rank {i}: " + "; ".join(d))
    res.check(not diffs, f"{sc['key']}: rendered env of every rank is the README's",
              "\n".join(diffs))
    return envs, names


def get_envs(res, sc, webhook):
    """Returns (per-rank injected env, per-rank DNS names of the patched pods)
    from the webhook, or (None, None) on failure."""
    envs, names, bad = [], [], []
    owner_uid = str(uuid.uuid4())
    for r in range(sc["world"]):
        pod, name, user = build_pod(sc, r, owner_uid)
        review = admission_review(pod, name, user)
        try:
            patched, problems = mutate(webhook, review, pod)
        except (OSError, http.client.HTTPException) as e:
            patched, problems = None, [f"request failed: {type(e).__name__}: {e}"]
        if patched is None:
            bad.append(f"rank {r}: " + "; ".join(problems)
                       + f"\n  request object: {json.dumps(pod)[:2000]}")
            envs.append(None)
            continue
        env, more = injected_env(pod, patched)
        problems += more
        names.append(dns_names(patched))
        # Reinvocation on the mutated pod must add nothing.
        try:
            again, p2 = mutate(webhook, admission_review(patched, name, user), patched)
            if again is None or again != patched:
                problems.append("second call on the mutated pod changed it: "
                                + "; ".join(p2))
        except (OSError, http.client.HTTPException) as e:
            problems.append(f"second call failed: {e}")
        if problems:
            bad.append(f"rank {r}: " + "; ".join(problems))
        envs.append(env)
        sc.setdefault("_patched", []).append(patched)
    res.check(not bad, f"{sc['key']}: /mutate over HTTPS answers every rank of the "
              f"{sc['world']}-rank {sc['kind']} with a patch that applies (and is "
              f"idempotent)", "\n".join(bad))
    if any(e is None for e in envs):
        return None, None
    diffs = []
    for r, env in enumerate(envs):
        d = env_differences(env, expected_env(sc, r))
        if d:
            diffs.append(f"rank {r}: " + "; ".join(d))
    res.check(not diffs, f"{sc['key']}: injected env of every rank is the README's",
              "\n".join(diffs))
    return envs, names



# --------------------------------------------------------------------------
# Cloud TPU (docs/frameworks.md, "Cloud TPU"): no TPU here, so JAX's own
# GkeTpuCluster class methods read each pod's injected env instead.

TPU_SCENARIOS = [
    {"key": "tpu-sts", "kind": "StatefulSet", "workload": "tps", "service": "tps",
     "world": 4, "elastic": None, "max_restarts": None, "net": "198.18.40"},
    {"key": "tpu-job", "kind": "Job", "workload": "tpj", "service": "tpj",
     "world": 4, "elastic": None, "max_restarts": None, "frameworks": "pytorch,tpu",
     "net": "198.18.41"},
    {"key": "tpu-lws", "kind": "LeaderWorkerSet", "workload": "tpl", "service": "tpl",
     "group": 1, "world": 4, "elastic": None, "max_restarts": None, "net": "198.18.42"},
    # 2 slices x 2 hosts: one replicated Job of 2 Jobs, one slice a Job.
    {"key": "tpu-multislice", "kind": "JobSet", "workload": "tpm", "service": "tpm",
     "rjobs": [("slice", 2, 2)], "world": 4, "elastic": None, "max_restarts": None,
     "net": "198.18.43"},
]


def tpu_pod(sc, r, owner_uid):
    """A pod of sc whose containers request google.com/tpu, as GKE's TPU pods do;
    without distenv.dev/frameworks (tpu is added to the defaults for the
    resource) unless sc names frameworks."""
    pod, name, user = build_pod(sc, r, owner_uid)
    anns = pod["metadata"]["annotations"]
    if "frameworks" not in sc:
        anns.pop("distenv.dev/frameworks")
    if sc["kind"] == "LeaderWorkerSet" and r > 0:
        # LeaderWorkerSet marks a group's workers so when the leader requests TPUs
        anns["leaderworkerset.sigs.k8s.io/leader-requests-tpus"] = "true"
    for c in pod["spec"]["containers"]:
        c["resources"] = {"limits": {"google.com/tpu": "4"},
                          "requests": {"google.com/tpu": "4"}}
    return pod, name, user


def run_tpu_jax(res, sc, envs, fw_python, logdir, prefix, tag):
    """Each pod in its own network namespace with exactly its injected env: JAX's
    GkeTpuCluster gives the ids and coordinator, jax.distributed.initialize forms
    the job on CPU with them, and a psum checks it."""
    w, t = sc["world"], TIMEOUTS["jax"]
    net = PodNet(prefix, tag, [(pod_hostname(sc, r), pod_fqdn(sc, r)) for r in range(w)],
                 sc["net"])
    try:
        net.up()
        net.wait_links()
        outs = run_ranks(net, envs, lambda i: [fw_python, "-u", "tpu_jax_worker.py"], t,
                         logdir, f"{sc['key']}-jax")
    finally:
        net.down()
    check_start(res, sc, "jax-tpu", outs, envs)
    bad = []
    for i, o in enumerate(outs):
        r = result(o, "psum")
        if o["rc"] != 0 or r is None:
            bad.append(why(o, i, t))
        elif not (r["ok"] and r["process_index"] == i and r["process_count"] == w):
            bad.append(f"rank {i}: {r}")
    res.check(not bad, f"{sc['key']}/jax-tpu: jax.distributed.initialize with "
              f"GkeTpuCluster's values forms the job on CPU: process {{rank}} of {w}, "
              f"psum = {w * (w + 1) // 2}", "\n".join(bad))


def run_tpu(res, webhook, fw_python, logdir, prefix):
    for k, sc in enumerate(TPU_SCENARIOS):
        w, owner_uid, envs, bad = sc["world"], str(uuid.uuid4()), [], []
        for r in range(w):
            pod, name, user = tpu_pod(sc, r, owner_uid)
            patched, problems = mutate(webhook, admission_review(pod, name, user), pod)
            if patched is None:
                bad.append(f"rank {r}: " + "; ".join(problems))
                continue
            env, more = injected_env(pod, patched)
            again, _ = mutate(webhook, admission_review(patched, name, user), patched)
            if again != patched:
                more.append("second call on the mutated pod changed it")
            bad += [f"rank {r}: {p}" for p in problems + more]
            envs.append(env)
        res.check(not bad, f"{sc['key']}: /mutate answers every rank of the {w}-rank "
                  f"{sc['kind']} that requests google.com/tpu", "\n".join(bad))
        if len(envs) != w:
            continue
        p = subprocess.run([fw_python, "-u", os.path.join(WORKERS, "tpu_worker.py")],
                           input=json.dumps(envs), capture_output=True, text=True,
                           timeout=120, cwd=WORKERS)
        with open(os.path.join(logdir, f"{sc['key']}.log"), "w") as f:
            f.write(p.stdout + p.stderr)
        outs = [json.loads(line[len(RESULT_PREFIX):]) for line in p.stdout.splitlines()
                if line.startswith(RESULT_PREFIX)]
        bad = [] if p.returncode == 0 and len(outs) == w else \
            [f"tpu_worker.py exit {p.returncode}, {len(outs)} results: {p.stderr[-1500:]}"]
        for r, o in enumerate(outs):
            host = o.get("coordinator", "").rsplit(":", 1)[0]
            if (o.get("error") or o.get("metadata_reads")
                    or o.get("process_id") != int(envs[r]["RANK"])
                    or o.get("process_count") != int(envs[r]["WORLD_SIZE"])
                    or o.get("process_count") != w or o.get("process_id") != r
                    or host != pod_fqdn(sc, 0)):
                bad.append(f"rank {r}: JAX says {o}; env {envs[r]}")
        res.check(not bad, f"{sc['key']}: JAX 0.7.2's GkeTpuCluster on each pod's env: "
                  f"get_process_id() == RANK, get_process_count() == WORLD_SIZE == {w}, "
                  f"the coordinator rank 0's host, no metadata read", "\n".join(bad))
        if not bad:
            run_tpu_jax(res, sc, envs, fw_python, logdir, prefix, f"t{k}")


# Each framework run: its function, then the options it takes after
# (res, sc, net, envs, logdir).
RUNNERS = {
    "pytorch": (run_pytorch, ()),
    "torchrun-elastic": (run_torchrun_elastic, ()),
    "tensorflow": (run_tensorflow, ("fw_python",)),
    "jax": (run_jax, ("fw_python",)),
    "pytorch-wait": (run_pytorch_wait, ("webhook",)),
    "tensorflow-roles": (run_tensorflow_roles, ("fw_python",)),
    "tensorflow-ps": (run_tensorflow_ps, ("fw_python",)),
    "torchrun-launcher": (run_torchrun_launcher, ()),
    "lightning": (run_lightning, ("launch_python",)),
    "lightning-old-env": (run_lightning_old_env, ("launch_python",)),
    "accelerate": (run_accelerate, ("launch_python",)),
    "xgboost": (run_xgboost, ()),
    "paddle": (run_paddle, ("launch_python",)),
}

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--webhook", default=os.path.join(ROOT, "distenv-webhook"))
    ap.add_argument("--fw-python", required=True,
                    help="python with tensorflow and jax (scripts/deps-frameworks.sh)")
    ap.add_argument("--launch-python", default="",
                    help="python of the launchers' virtualenv (scripts/deps-frameworks.sh)")
    ap.add_argument("--deepspeed-sdist", default="",
                    help="DeepSpeed's source archive (scripts/deps-frameworks.sh)")
    ap.add_argument("--env-from", choices=["webhook", "spec"], default="webhook",
                    help="'spec' (development only) takes the env from expected_env "
                         "(docs/environment.md's tables) instead and always counts one failure")
    ap.add_argument("--only", default="",
                    help="comma list of scenario keys or scenario/run to run")
    ap.add_argument("--ns-prefix", default=f"dfw{os.getpid()}")
    ap.add_argument("--logdir", default="")
    ap.add_argument("--deps-seconds", type=float, default=None,
                    help="time run.sh spent on scripts/deps-frameworks.sh")
    opts = ap.parse_args()

    if os.geteuid() != 0:
        print("conformance.py: must run as root (network namespaces)", file=sys.stderr)
        return 2
    only = {s for s in opts.only.split(",") if s}
    workdir = tempfile.mkdtemp(prefix="distenv-fw-")
    logdir = opts.logdir or os.path.join(workdir, "logs")
    os.makedirs(logdir, exist_ok=True)
    res = Results()
    nets, webhook = [], None

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    t_all = time.monotonic()
    if opts.deps_seconds is not None:
        res.times.append(("dependencies (deps script)", opts.deps_seconds))
    try:
        if opts.env_from == "webhook":
            if not os.access(opts.webhook, os.X_OK):
                res.check(False, "distenv-webhook is built", f"{opts.webhook} not found "
                          "or not executable (run make first)")
                raise Failure("no webhook")
            say(f"starting {opts.webhook} serve on loopback with its own certificates")
            webhook = Webhook(opts.webhook, workdir)
            t0 = time.monotonic()
            webhook.start()
            res.times.append(("webhook start", time.monotonic() - t0))
        else:
            res.check(False, "env taken from the real webhook",
                      "--env-from spec: development run, env computed from SPEC.md")

        for sc in SCENARIOS:
            runs = [r for r in sc["runs"]
                    if not only or sc["key"] in only or f"{sc['key']}/{r}" in only]
            if not runs:
                continue
            say(f"{sc['key']}: {sc['world']}-rank {sc['kind']} {sc['workload']} "
                f"(Service {sc['service']}, namespace {NAMESPACE})")
            t0 = time.monotonic()
            if runs == ["deepspeed-rule"]:
                run_deepspeed_rule(res, sc, webhook, opts.deepspeed_sdist)
                res.times.append((f"{sc['key']}/deepspeed-rule", time.monotonic() - t0))
                continue
            names = [(pod_hostname(sc, r), pod_fqdn(sc, r)) for r in range(sc["world"])]
            if sc.get("env_from") == "render" and opts.env_from == "webhook":
                envs, names = render_envs(res, sc, opts.webhook, workdir)
            elif webhook:
                envs, names = get_envs(res, sc, webhook)
            else:
                envs = [{k: (json.dumps(v, separators=(",", ":")) if k == "TF_CONFIG"
                             else v) for k, v in expected_env(sc, r).items()}
                        for r in range(sc["world"])]
            res.times.append((f"{sc['key']} admission", time.monotonic() - t0))
            if envs is None:
                continue
            for run in runs:
                # Fresh namespaces for every framework run: no port or state
                # carries over from the previous one.
                net = PodNet(opts.ns_prefix, f"{sc['key'][0]}{len(nets)}", names, sc["net"])
                nets.append(net)
                say(f"{sc['key']}/{run}: {sc['world']} pod namespaces "
                    f"{net.names[0]}..{net.names[-1]} on {sc['net']}.0/24")
                t0 = time.monotonic()
                try:
                    net.up()
                    net.wait_links()
                    fn, extra = RUNNERS[run]
                    fn(res, sc, net, envs, logdir, *[getattr(opts, a) for a in extra])
                except (Failure, subprocess.TimeoutExpired, OSError) as e:
                    res.check(False, f"{sc['key']}/{run}: pod namespaces", str(e))
                finally:
                    net.down()
                res.times.append((f"{sc['key']}/{run}", time.monotonic() - t0))
        if webhook and (not only or "tpu" in only):
            say("tpu: JAX's GkeTpuCluster on the env of TPU pods of every kind")
            t0 = time.monotonic()
            run_tpu(res, webhook, opts.fw_python, logdir, opts.ns_prefix)
            res.times.append(("tpu/jax-cluster", time.monotonic() - t0))
    except Failure as e:
        if not res.items or res.items[-1][0]:
            res.check(False, "setup", str(e))
    except KeyboardInterrupt as e:
        res.check(False, "interrupted", str(e))
    finally:
        for net in nets:
            net.down()
        if webhook:
            rc = webhook.stop()
            res.check(rc == 0, "distenv-webhook serve exits 0 on SIGTERM",
                      f"exit {rc}; log:\n{tail(webhook.log_path)}")
    total = time.monotonic() - t_all + (opts.deps_seconds or 0)
    res.times.append(("total", total))

    print()
    print("time per step:")
    for label, secs in res.times:
        print(f"  {label:<28} {secs:7.1f} s")
    if res.failed() == 0 and not opts.logdir:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        print(f"logs: {logdir}")
    per_fw = {}
    for label, secs in res.times:
        if "/" in label:
            fw = label.split("/", 1)[1]
            per_fw[fw] = per_fw.get(fw, 0.0) + secs
    print("time per framework (all workloads):")
    for fw, secs in per_fw.items():
        print(f"  {fw:<28} {secs:7.1f} s")
    print(f"{res.passed()} passed, {res.failed()} failed")
    return 0 if res.failed() == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
