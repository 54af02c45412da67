"""What you see is what runs: every manifest of the repository through `render` and, as
the pods its controllers make, through the running webhook over HTTPS.

For each manifest (deploy/examples, fuzz/corpus/render, the workloads of test/data's
goldens and a few shapes below) and each of two configurations (look-ups on, against
run.py's FakeAPI serving the stored objects; look-ups off), with the same --config file:

- render -o json and render (text): exit status, the error, the ranks;
- /validate with each workload, then /mutate with each pod that
  test/data/gen/controllers.py's workload_pods builds the way the controllers do.

The decision must be the same (render refuses exactly when /validate denies the workload
or /mutate denies one of its pods, with the same words), and every pod /mutate patches is
a rank render printed: each target container's env after the patch, for every variable
render lists (distenv's and the container's own), value for value, distenv's entries in
render's order, and the init containers added the ones render prints. The text output
says what the JSON says.

Run by run.py (the integration tier); its helpers are passed in as `h`.
"""

import base64
import copy
import glob
import json
import os
import re
import subprocess
import sys

import jsonpatch
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "test", "data", "gen"))
import controllers  # noqa: E402

DATA = os.path.join(REPO, "test", "data")

# Shapes the sources above lack, each a mistake or a default a user meets.
EXTRA = {
    # JobSet's own example shape: no completionMode (its webhook defaults it to Indexed)
    "jobset-no-completion-mode": """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: pytorch, namespace: ml}
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 2
        completions: 2
        backoffLimit: 0
        template:
          metadata: {labels: {distenv.dev/inject: "true"}}
          spec:
            containers: [{name: trainer, image: "train:1.0"}]
""",
    # a LeaderWorkerSet with only a workerTemplate that requests TPUs: the leader is a
    # TPU host, and the LWS controller marks the workers leader-requests-tpus
    "lws-worker-template-tpu": """
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: tl, namespace: ml}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      metadata: {labels: {distenv.dev/inject: "true"}}
      spec:
        containers:
        - name: jax
          image: "jax:1.0"
          resources: {limits: {google.com/tpu: 4}}
""",
    # a StatefulSet whose one ordinal is the last an int32 holds
    "sts-start-int32-max": """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: ddp, namespace: ml}
spec:
  replicas: 1
  serviceName: ddp
  podManagementPolicy: Parallel
  ordinals: {start: 2147483647}
  selector: {matchLabels: {app: ddp}}
  template:
    metadata: {labels: {app: ddp, distenv.dev/inject: "true"}}
    spec:
      containers: [{name: trainer, image: "train:1.0"}]
""",
    # a glue script's leftovers: the container's own RANK, WORLD_SIZE and MASTER_ADDR
    "sts-own-env": """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: ddp, namespace: ml}
spec:
  replicas: 1
  serviceName: ddp
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: ddp}}
  template:
    metadata: {labels: {app: ddp, distenv.dev/inject: "true"}}
    spec:
      containers:
      - name: trainer
        image: "train:1.0"
        env:
        - {name: WORLD_SIZE, value: "32"}
        - {name: MASTER_PORT, value: "23456"}
        - {name: POD, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
""",
    # JobSet's documented pattern: RANK from the completion index
    "jobset-own-rank-from-index": """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, namespace: ml}
spec:
  replicatedJobs:
  - name: workers
    replicas: 1
    template:
      spec:
        parallelism: 3
        completions: 3
        template:
          metadata: {labels: {distenv.dev/inject: "true"}}
          spec:
            containers:
            - name: trainer
              image: "train:1.0"
              env:
              - name: RANK
                valueFrom:
                  fieldRef:
                    fieldPath: metadata.annotations['batch.kubernetes.io/job-completion-index']
""",
    # an Indexed Job with wait-for-master, an init container and an elastic world
    "job-wait-elastic": """
apiVersion: batch/v1
kind: Job
metadata: {name: el, namespace: ml}
spec:
  completionMode: Indexed
  completions: 3
  parallelism: 3
  template:
    metadata:
      labels: {distenv.dev/inject: "true"}
      annotations:
        distenv.dev/wait-for-master: 5m
        distenv.dev/elastic: "2:3"
        distenv.dev/frameworks: pytorch,jax
    spec:
      subdomain: el
      restartPolicy: Never
      initContainers: [{name: fetch, image: "busybox:1.36"}]
      containers: [{name: trainer, image: "train:1.0"}]
""",
}

# a Kubeflow PyTorchJob turned into two StatefulSets behind one Service: two worlds (render
# warns; each pod still gets what render shows)
EXTRA["kubeflow-master-worker"] = "\n---\n".join(
    EXTRA["sts-start-int32-max"].replace("  ordinals: {start: 2147483647}\n", "")
    .replace("name: ddp,", "name: mnist-%s," % role).replace("replicas: 1", "replicas: %d" % n)
    .replace("serviceName: ddp", "serviceName: mnist") for role, n in (("master", 1), ("worker", 3)))

# and one whose second ordinal passes it: the controller names that pod ddp--1
EXTRA["sts-start-overflow"] = EXTRA["sts-start-int32-max"].replace("replicas: 1", "replicas: 2")

GOLDEN_OWNED = ("batch.kubernetes.io/", "controller-uid", "job-name", "jobset.sigs.k8s.io/",
                "leaderworkerset.sigs.k8s.io/", "apps.kubernetes.io/", "statefulset.kubernetes.io/",
                "controller-revision-hash")


def _owned(key):
    return key.startswith(GOLDEN_OWNED)


def _template_of_pod(pod):
    """A golden pod back into the template its controller made it from."""
    meta = pod["metadata"]
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if not _owned(k)}
    ann = {k: v for k, v in (meta.get("annotations") or {}).items() if not _owned(k)}
    spec = copy.deepcopy(pod["spec"])
    for k in ("hostname", "subdomain"):
        spec.pop(k, None)
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            c["env"] = [e for e in c.get("env") or [] if e.get("name") != "JOB_COMPLETION_INDEX"]
            if not c["env"]:
                del c["env"]
    return {"metadata": {"labels": labels, "annotations": ann}, "spec": spec}


def _golden_workload(name):
    """The workload a golden pod with a look-up file belongs to, as a manifest: the
    look-up's object (a JobSet), or one made from its fields with the pod's template."""
    req = json.load(open(os.path.join(DATA, name + ".request.json")))["request"]
    spec = json.load(open(os.path.join(DATA, name + ".lookup.json")))
    if name.startswith("validate-"):
        return None
    if "object" in spec:
        return spec["object"]
    pod = req["object"]
    ns = pod["metadata"].get("namespace") or req.get("namespace") or "default"
    owner = [o for o in pod["metadata"].get("ownerReferences", []) if o.get("controller")][0]
    tmpl = _template_of_pod(pod)
    if owner["kind"] == "StatefulSet":
        w = {"apiVersion": "apps/v1", "kind": "StatefulSet",
             "metadata": {"name": owner["name"], "namespace": ns},
             "spec": {"replicas": spec["replicas"], "podManagementPolicy": "Parallel",
                      "serviceName": pod["spec"].get("subdomain", owner["name"]),
                      "selector": {"matchLabels": {}}, "template": tmpl}}
        if "ordinalsStart" in spec:
            w["spec"]["ordinals"] = {"start": spec["ordinalsStart"]}
        return w
    if "subdomain" in pod["spec"]:
        tmpl["spec"]["subdomain"] = pod["spec"]["subdomain"]
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": owner["name"], "namespace": ns},
            "spec": {"completions": spec["completions"], "parallelism": spec["parallelism"],
                     "completionMode": "Indexed" if spec.get("indexed") else "NonIndexed",
                     "template": tmpl}}


def manifests():
    """(name, YAML text, pods only under look-ups off) of every manifest to compare."""
    out = []
    for p in sorted(glob.glob(os.path.join(REPO, "deploy", "examples", "*.yaml"))):
        out.append(("examples/" + os.path.basename(p), open(p).read(), False))
    for p in sorted(glob.glob(os.path.join(REPO, "fuzz", "corpus", "render", "*.yaml"))):
        out.append(("fuzz/" + os.path.basename(p), open(p).read(), False))
    for p in sorted(glob.glob(os.path.join(DATA, "*.request.json"))):
        name = os.path.basename(p)[:-len(".request.json")]
        req = json.load(open(p))["request"]
        obj = req.get("object") or {}
        if req.get("operation") != "CREATE" or req["kind"]["kind"] == "ConfigMap":
            continue
        if name.startswith("validate-"):
            doc = copy.deepcopy(obj)
            doc.setdefault("metadata", {}).setdefault("namespace", req.get("namespace"))
            out.append(("golden/" + name, json.dumps(doc), False))
        elif os.path.exists(os.path.join(DATA, name + ".lookup.json")):
            w = _golden_workload(name)
            out.append(("golden/" + name, json.dumps(w), False))
        else:
            # a pod alone: render judges it without a look-up, as /mutate with look-ups off
            doc = dict(copy.deepcopy(obj), apiVersion="v1", kind="Pod")
            doc["metadata"].setdefault("namespace", req.get("namespace") or "default")
            out.append(("golden/" + name, json.dumps(doc), True))
    for name, text in sorted(EXTRA.items()):
        out.append(("case/" + name, text, False))
    return out


# A world above this many pods (the goldens' 5,000-rank StatefulSets) is compared on its
# first three, middle and last two pods: render still prints every rank.
SAMPLE_ABOVE = 64


def _sample(pods):
    n = len(pods)
    if n <= SAMPLE_ABOVE:
        return pods
    return [pods[i] for i in sorted({0, 1, 2, n // 2, n - 2, n - 1})]


def _unprefixed(msg):
    return msg[len("distenv: "):] if msg.startswith("distenv: ") else msg


def _field(pod, path):
    """A fieldRef's value on the pod, as the kubelet reads it; None when only the node knows."""
    meta = pod["metadata"]
    m = re.match(r"metadata\.(labels|annotations)\['([^']*)'\]$", path)
    if m:
        return (meta.get(m.group(1)) or {}).get(m.group(2), "")
    if path in ("metadata.name", "metadata.namespace", "metadata.uid"):
        return meta.get(path.split(".")[1], "")
    if path == "spec.serviceAccountName":
        return pod["spec"].get("serviceAccountName", "")
    return None


class Suite:
    def __init__(self, h, suite, lookups):
        self.h = h
        self.s = suite
        self.lk = lookups  # run.py's LookupSuite: its FakeAPI and certificates
        self.servers = {}
        self.configs = {}
        self.uid = 0

    def case_start(self):
        h, s = self.h, self.s
        kc = os.path.join(s.work, "kubeconfig")
        cert, key = (os.path.join(s.certs1, f) for f in ("tls.crt", "tls.key"))
        self.ctx = h.tls_context([os.path.join(s.certs1, "ca.crt")])
        for mode, extra, config in (
                ("look-ups on", ["--kubeconfig", kc], "lookups:\n  cacheTTLMs: 0\n"),
                ("look-ups off", [], "lookups:\n  enabled: false\n")):
            srv = h.Server(s.args.binary, s.work, cert, key, s.args.valgrind, extra=extra,
                           config=config)
            self.servers[mode] = srv
            self.configs[mode] = srv.cmd[srv.cmd.index("--config") + 1]
            srv.wait_ready(self.ctx)

    def close(self):
        for srv in self.servers.values():
            srv.kill()

    def call(self, mode, path, review):
        c = self.h.Conn(self.servers[mode].port, self.ctx, timeout=30)
        st, _, out = c.call("POST", path, body=json.dumps(review))
        c.close()
        self.h.check(st == 200, "%s: HTTP %d: %r" % (path, st, out[:200]))
        return json.loads(out)["response"]

    def review(self, obj, ns, gvk, resource):
        self.uid += 1
        group, version, kind = gvk
        k = {"group": group, "version": version, "kind": kind}
        r = {"group": group, "version": version, "resource": resource}
        return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                "request": {"uid": "eq-%d" % self.uid, "kind": k, "resource": r,
                            "requestKind": k, "requestResource": r, "namespace": ns,
                            "name": obj["metadata"].get("name", ""), "operation": "CREATE",
                            "userInfo": {"username": "system:serviceaccount:kube-system:eq"},
                            "object": obj, "oldObject": None, "dryRun": False}}

    def render(self, mode, text):
        path = os.path.join(self.s.work, "eq-manifest.yaml")
        with open(path, "w") as f:
            f.write(text)
        out = {}
        for fmt in ("json", "text"):
            r = subprocess.run([self.s.args.binary, "render", "--config", self.configs[mode],
                                "-o", fmt, path], capture_output=True, text=True, timeout=60)
            out[fmt] = r
        return out

    # -- the webhook's side

    def cluster(self, mode, docs, pods_only):
        """What the cluster does with the manifest: ("denied", message) at the first
        refusal, else ("allowed", [(pod, patched pod or None)])."""
        h, api = self.h, self.lk.api
        served = {}
        work = []
        for d in docs:
            if d.get("kind") == "Service":
                ns = d["metadata"].get("namespace") or "default"
                served["/api/v1/namespaces/%s/services/%s" % (ns, d["metadata"]["name"])] = d
        for d in docs:
            if d.get("kind") == "Pod":
                ns = d["metadata"].get("namespace") or "default"
                work.append((None, None, ns, [d]))
                continue
            got = controllers.workload_pods(d)
            if got is None:
                continue
            obj, path, pods = got
            served[path] = obj
            served["/apis/networking.k8s.io/v1/namespaces/%s/networkpolicies"
                   % obj["metadata"]["namespace"]] = {
                "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicyList",
                "metadata": {"resourceVersion": "1"}, "items": []}
            work.append((d, obj, obj["metadata"]["namespace"], pods))
        api.expect, api.extra = None, served
        self.sizes = [len(pods) for _, _, _, pods in work]
        seen = len(api.seen)
        try:
            answers = []
            for doc, obj, ns, pods in work:
                if doc is not None:
                    group, _, version = doc["apiVersion"].rpartition("/")
                    plural = {"StatefulSet": "statefulsets", "Job": "jobs", "JobSet": "jobsets",
                              "LeaderWorkerSet": "leaderworkersets"}[doc["kind"]]
                    resp = self.call(mode, "/validate",
                                     self.review(copy.deepcopy(obj), ns,
                                                 (group, version, doc["kind"]), plural))
                    if not resp.get("allowed"):
                        return "denied", resp["status"]["message"], doc
                for pod in _sample(pods):
                    resp = self.call(mode, "/mutate",
                                     self.review(pod, ns, ("", "v1", "Pod"), "pods"))
                    if not resp.get("allowed"):
                        return "denied", resp["status"]["message"], doc or pod
                    patched = None
                    if "patch" in resp:
                        ops = json.loads(base64.b64decode(resp["patch"]))
                        patched = jsonpatch.JsonPatch(ops).apply(copy.deepcopy(pod))
                    answers.append((ns, pod, patched, resp.get("warnings") or []))
            return "allowed", answers, None
        finally:
            api.extra = {}
            # /validate reads the Service too: one the manifest lacks is a 404 (a warning)
            stray = [p for p in api.seen[seen:] if p.split("?")[0] not in served
                     and "/services/" not in p]
            h.check(not stray, "GETs of what the manifest does not hold: %r" % stray)

    # -- the comparison

    def compare(self, name, text, pods_only):
        h = self.h
        try:
            docs = [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]
        except yaml.YAMLError as e:
            # kubectl cannot read it either (it parses each document alone): nothing is
            # applied, and render must refuse it too
            for mode in ("look-ups on", "look-ups off"):
                r = self.render(mode, text)["json"]
                h.check(r.returncode == 1 and r.stdout == "",
                        "%s: YAML no client reads (%s), yet render exits %d"
                        % (name, str(e).splitlines()[0], r.returncode))
            return
        if any(d.get("kind") == "List" for d in docs):
            docs = [i for d in docs for i in (d.get("items") if d.get("kind") == "List" else [d])]
        # a Pod alone: render reads no owner, as /mutate with look-ups off
        pods_only = pods_only or all(d.get("kind") in ("Pod", "Service") for d in docs)
        modes = ("look-ups off",) if pods_only else ("look-ups on", "look-ups off")
        for mode in modes:
            where = "%s (%s)" % (name, mode)
            r = self.render(mode, text)
            rj, rt = r["json"], r["text"]
            verdict, what, culprit = self.cluster(mode, docs, pods_only)
            h.check(rj.returncode == rt.returncode,
                    "%s: render -o json exit %d, text exit %d" % (where, rj.returncode,
                                                                   rt.returncode))
            if verdict == "denied":
                last = rj.stderr.strip().splitlines()[-1] if rj.stderr.strip() else ""
                h.check(rj.returncode == 1 and rj.stdout == "",
                        "%s: the cluster denies (%s) but render exits %d:\n%s"
                        % (where, what, rj.returncode, rj.stdout[:600]))
                h.check(last.endswith(": " + _unprefixed(what)),
                        "%s: the cluster denies with\n  %s\nrender says\n  %s"
                        % (where, what, last))
                continue
            if rj.returncode != 0:
                msg = rj.stderr.strip().splitlines()[-1] if rj.stderr.strip() else ""
                if "no StatefulSet" in msg and not any(p for _, _, p, _ in what):
                    continue  # nothing opts in: both leave every pod alone
                raise h.CaseFailed("%s: every pod is allowed but render exits %d: %s"
                                   % (where, rj.returncode, msg))
            ranks = json.loads(rj.stdout)
            self.same_text(where, ranks, rt.stdout)
            by_pod = {}
            for rk in ranks:
                key = (rk["namespace"], rk["pod"])
                h.check(key not in by_pod, "%s: render prints pod %s twice" % (where, key))
                by_pod[key] = rk
            patched_keys = set()
            for ns, pod, patched, _ in what:
                if patched is None:
                    continue
                key = (ns, patched["spec"].get("hostname") or patched["metadata"].get("name"))
                patched_keys.add(key)
                h.check(key in by_pod, "%s: /mutate patches pod %s, which render does not print"
                        " (it prints %s)" % (where, key, sorted(by_pod)))
                self.same_pod(where, key, pod, patched, by_pod[key])
            sampled = any(n > SAMPLE_ABOVE for n in self.sizes)
            h.check(sampled or set(by_pod) == patched_keys,
                    "%s: render prints pods %s that /mutate leaves alone"
                    % (where, sorted(set(by_pod) - patched_keys)))

    def same_pod(self, where, key, pod, patched, rank):
        h = self.h
        where = "%s, pod %s/%s" % (where, key[0], key[1])
        ann = patched["metadata"].get("annotations") or {}
        injected = ann.get("distenv.dev/injected", "")
        h.check("rank=%d," % rank["rank"] in injected + ","
                and "world-size=%d" % rank["worldSize"] in injected,
                "%s: render says rank %d of %d, the pod's annotation %r"
                % (where, rank["rank"], rank["worldSize"], injected))
        targets = set()
        for eff in rank["effective"]:
            key_c = "initContainers" if eff["init"] else "containers"
            cs = [c for c in patched["spec"].get(key_c) or [] if c["name"] == eff["container"]]
            h.check(len(cs) == 1, "%s: no container %s" % (where, eff["container"]))
            before = [c for c in pod["spec"].get(key_c) or [] if c["name"] == eff["container"]][0]
            targets.add((key_c, eff["container"]))
            env = cs[0].get("env") or []
            had = {e["name"] for e in before.get("env") or []}
            by_name = {e["name"]: e for e in env}
            # distenv's entries: those the patch added, in its order, and those it rewrote
            # where the container had them (PET_RDZV_CONF's is_host)
            added = [(e["name"], e.get("value")) for e in env if e["name"] not in had]
            want_added = [(e["name"], e.get("value")) for e in eff["env"]
                          if e["source"] == "distenv" and e["name"] not in had]
            h.check(added == want_added,
                    "%s, container %s: the patch adds\n  %s\nrender's effective env says\n  %s"
                    % (where, eff["container"], added, want_added))
            for e in eff["env"]:
                got = by_name.get(e["name"])
                h.check(got is not None, "%s, container %s: render lists %s (%s); the pod"
                        " has none" % (where, eff["container"], e["name"], e["source"]))
                if "value" in got:
                    val = got["value"]
                else:
                    ref = (got.get("valueFrom") or {}).get("fieldRef")
                    val = _field(patched, ref["fieldPath"]) if ref else None
                h.check(e.get("value") == val,
                        "%s, container %s: %s is %r in the pod, %r in render"
                        % (where, eff["container"], e["name"], val, e.get("value")))
        # no container render does not name was given env
        for key_c in ("containers", "initContainers"):
            for c in patched["spec"].get(key_c) or []:
                old = [o for o in pod["spec"].get(key_c) or [] if o["name"] == c["name"]]
                if old and (key_c, c["name"]) not in targets:
                    h.check(c.get("env") == old[0].get("env"),
                            "%s: container %s changed, render names %s"
                            % (where, c["name"], sorted(targets)))
        old_init = {c["name"] for c in pod["spec"].get("initContainers") or []}
        added_init = [c for c in patched["spec"].get("initContainers") or []
                      if c["name"] not in old_init]
        h.check(added_init == rank.get("initContainers", []),
                "%s: the patch adds init containers\n  %s\nrender prints\n  %s"
                % (where, json.dumps(added_init), json.dumps(rank.get("initContainers", []))))

    def same_text(self, where, ranks, text):
        """render's text says what its JSON says: a header per rank, distenv's lines, each
        container's own and differing lines, the init container's line."""
        h = self.h
        want, open_ended = [], set()
        for rk in ranks:
            head = "--- rank %d/%d: %s %s/%s, " % (rk["rank"], rk["worldSize"], rk["kind"],
                                                  rk["namespace"], rk["workload"])
            if "group" in rk:
                head += "group %d, " % rk["group"]
            head += "pod %s, containers" % rk["pod"]
            for i, c in enumerate(rk["containers"]):
                init = rk["effective"][i]["init"] if i < len(rk["effective"]) else False
                head += "%s%s%s" % ("," if i else " ", c, "(init)" if init else "")
            want.append(head)
            env = {e["name"]: e["value"] for e in rk["env"]}
            want += ["%s=%s" % (e["name"], e["value"]) for e in rk["env"]]
            for eff in rk["effective"]:
                for e in eff["env"]:
                    if e["source"] == "distenv" and env.get(e["name"]) == e["value"]:
                        continue
                    # a reference read at run time has no value: the text shows it as
                    # written ($(VAR), or (valueFrom)), which the prefix leaves open
                    want.append("  (container %s) %s=%s" % (eff["container"], e["name"],
                                                            e.get("value", "")))
                    if "value" not in e:
                        open_ended.add(len(want) - 1)
            for ic in rk.get("initContainers", []):
                want.append("  (init container %s, added by distenv)" % ic["name"])
        got = text.splitlines()
        # the container lines carry a note in parentheses after the value; the init
        # container's line its command and env
        j = 0
        for line in got:
            if j < len(want) and (line == want[j] or line.startswith(want[j] + " (")
                                  or ((j in open_ended or want[j].startswith("  (init"))
                                      and line.startswith(want[j]))):
                j += 1
                continue
            raise h.CaseFailed("%s: render's text line\n  %s\nwhere its JSON gives\n  %s"
                               % (where, line, want[j] if j < len(want) else "(nothing)"))
        h.check(j == len(want), "%s: render's text ends before\n  %s" % (where, want[j:j + 1]))
