#!/usr/bin/python3
"""Offline checks of charts/distenv: helm lint, helm template in every
certificate mode with assertions on the rendered objects, schema and template
rejections of bad values, the rendered config accepted by the real binary, the
chart's generated certificate served by the real binary over HTTPS, and the
deploy/ manifests and examples.

Usage: check.py --helm PATH [--binary ./distenv-webhook] [--promtool PATH]
Prints one line per check and ends with "chart: N passed, N failed".
"""
import argparse
import base64
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CHART = os.path.join(ROOT, "charts", "distenv")
NS = "ml-infra"
RELEASE = "distenv"

results = {"pass": 0, "fail": 0}


def check(name):
    """Decorator-free runner: check(name)(fn) runs fn and records the outcome."""
    def run(fn, *args):
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001 - every failure is reported
            results["fail"] += 1
            detail = "".join(traceback.format_exception_only(type(e), e)).strip()
            print(f"FAIL - {name}: {detail[:2000]}")
            return False
        results["pass"] += 1
        print(f"ok   - {name}")
        return True
    return run


class Helm:
    def __init__(self, path):
        self.path = path

    def run(self, *args, env=None):
        e = dict(os.environ)
        # No cluster: lookup() returns nothing, as under `helm template`.
        e["KUBECONFIG"] = "/nonexistent/kubeconfig"
        e.update(env or {})
        return subprocess.run([self.path, *args], capture_output=True, text=True, env=e, timeout=120)

    def template(self, *args, ns=NS, kube="1.33.0"):
        r = self.run("template", RELEASE, CHART, "--namespace", ns, "--kube-version", kube, *args)
        if r.returncode != 0:
            raise AssertionError(f"helm template {' '.join(args)} failed: {r.stderr.strip()}")
        return Render(r.stdout)

    def template_fails(self, *args):
        r = self.run("template", RELEASE, CHART, "--namespace", NS, "--kube-version", "1.33.0", *args)
        return r.returncode, r.stderr


class Render:
    def __init__(self, text):
        self.text = text
        self.objs = [d for d in yaml.safe_load_all(text) if d]

    def kinds(self):
        return sorted(o["kind"] for o in self.objs)

    def all(self, kind):
        return [o for o in self.objs if o["kind"] == kind]

    def one(self, kind, name=None):
        found = [o for o in self.all(kind) if name is None or o["metadata"]["name"] == name]
        assert len(found) == 1, f"expected one {kind} {name or ''}, got {len(found)}"
        return found[0]

    def pod(self):
        return self.one("Deployment")["spec"]["template"]

    def webhook(self):
        cfg = self.one("MutatingWebhookConfiguration")
        assert len(cfg["webhooks"]) == 1, cfg["webhooks"]
        return cfg["webhooks"][0]

    def validating(self):
        cfg = self.one("ValidatingWebhookConfiguration")
        assert len(cfg["webhooks"]) == 2, cfg["webhooks"]
        return cfg["webhooks"][0]

    def scale(self):
        """The validating configuration's second webhook: kubectl scale, fails open."""
        return self.one("ValidatingWebhookConfiguration")["webhooks"][1]

    def config(self):
        return yaml.safe_load(self.one("ConfigMap")["data"]["config.yaml"])


def eq(got, want, what):
    assert got == want, f"{what}: got {got!r}, want {want!r}"


def openssl(*args, stdin=None):
    r = subprocess.run(["openssl", *args], input=stdin, capture_output=True, timeout=30)
    assert r.returncode == 0, f"openssl {' '.join(args)}: {r.stderr.decode()}"
    return r.stdout.decode()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# --------------------------------------------------------------------------
# Assertions shared by the modes


SECURE = {
    "runAsNonRoot": True,
    "runAsUser": 65532,
    "runAsGroup": 65532,
    "allowPrivilegeEscalation": False,
    "privileged": False,
    "readOnlyRootFilesystem": True,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}


def assert_deployment(r, port=8443):
    dep = r.one("Deployment")
    eq(dep["metadata"]["namespace"], NS, "Deployment namespace")
    eq(dep["spec"]["replicas"], 2, "replicas")
    tpl = dep["spec"]["template"]
    spec = tpl["spec"]
    sel = dep["spec"]["selector"]["matchLabels"]
    for k, v in sel.items():
        eq(tpl["metadata"]["labels"].get(k), v, f"pod label {k}")
    psc = spec["securityContext"]
    eq(psc["runAsNonRoot"], True, "pod runAsNonRoot")
    eq(psc["runAsUser"], 65532, "pod runAsUser")
    eq(psc["seccompProfile"], {"type": "RuntimeDefault"}, "pod seccompProfile")
    containers = spec["containers"] + spec.get("initContainers", [])
    for c in containers:
        eq(c["securityContext"], SECURE, f"securityContext of {c['name']}")
    (web,) = spec["containers"]
    eq(web["args"], ["serve", "--config", "/etc/distenv/config.yaml"], "webhook args")
    eq(web["ports"], [{"name": "https", "containerPort": port, "protocol": "TCP"},
                      {"name": "probes", "containerPort": 8081, "protocol": "TCP"}], "ports")
    # The probes have a port of their own: answered when the webhook port is full.
    for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
        eq(web[probe]["httpGet"], {"path": path, "port": "probes", "scheme": "HTTP"}, probe)
    for c in containers:
        res = c["resources"]
        assert res.get("requests", {}).get("memory") and res.get("limits", {}).get("memory"), \
            f"{c['name']} has no memory request/limit: {res}"
    (init,) = spec["initContainers"]
    eq(init["args"], ["check-config", "/etc/distenv/config.yaml"], "init container args")
    eq(init["image"], web["image"], "init container image")
    # Config and certificate come from one projected volume at /etc/distenv.
    for c in containers:
        eq(c["volumeMounts"], [{"name": "etc", "mountPath": "/etc/distenv", "readOnly": True}],
           f"volumeMounts of {c['name']}")
    (vol,) = spec["volumes"]
    srcs = vol["projected"]["sources"]
    cm = [s["configMap"] for s in srcs if "configMap" in s][0]
    sec = [s["secret"] for s in srcs if "secret" in s][0]
    eq(cm["name"], r.one("ConfigMap")["metadata"]["name"], "projected ConfigMap name")
    eq({i["path"] for i in cm["items"]}, {"config.yaml"}, "ConfigMap items")
    eq({i["key"]: i["path"] for i in sec["items"]},
       {"tls.crt": "tls/tls.crt", "tls.key": "tls/tls.key"}, "Secret items")
    cfg = r.config()
    eq(cfg["listen"], f":{port}", "config listen")
    eq(cfg["tls"]["certFile"], "/etc/distenv/tls/tls.crt", "config tls.certFile")
    eq(cfg["tls"]["keyFile"], "/etc/distenv/tls/tls.key", "config tls.keyFile")
    # Spread across nodes.
    tsc = spec["topologySpreadConstraints"]
    eq([t["topologyKey"] for t in tsc], ["kubernetes.io/hostname"], "topologySpread key")
    eq(tsc[0]["labelSelector"]["matchLabels"], sel, "topologySpread selector")
    anti = spec["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    eq(anti[0]["podAffinityTerm"]["topologyKey"], "kubernetes.io/hostname", "anti-affinity key")
    # Stopping: preStop sleep, then the drain, within the grace period.
    eq(web["lifecycle"], {"preStop": {"sleep": {"seconds": 10}}}, "preStop")
    drain = cfg["server"]["drainTimeoutSeconds"]
    assert spec["terminationGracePeriodSeconds"] > 10 + drain, \
        f"terminationGracePeriodSeconds {spec['terminationGracePeriodSeconds']} <= 10 + {drain}"
    assert "checksum/config" in tpl["metadata"]["annotations"], "no checksum/config annotation"
    eq(spec["automountServiceAccountToken"], True, "automountServiceAccountToken")
    eq(spec["serviceAccountName"], r.one("ServiceAccount")["metadata"]["name"], "serviceAccountName")


def assert_service_rbac(r):
    svc = r.one("Service")
    eq(svc["spec"]["ports"], [{"name": "https", "port": 443, "targetPort": "https", "protocol": "TCP"}],
       "Service ports")
    pod_labels = r.pod()["metadata"]["labels"]
    for k, v in svc["spec"]["selector"].items():
        eq(pod_labels.get(k), v, f"Service selector {k}")
    role = r.one("ClusterRole")
    # get on the kinds distenv reads: files/rbac-rules.yaml (t_chart_files: what the binary makes)
    kinds_read = yaml.safe_load(chart_file("rbac-rules.yaml"))
    assert kinds_read and all(r["verbs"] == ["get"] for r in kinds_read), kinds_read
    eq(role["rules"], kinds_read + [
        {"apiGroups": [""], "resources": ["services"], "verbs": ["get"]},
        {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"], "verbs": ["list"]},
    ], "ClusterRole rules")
    binding = r.one("ClusterRoleBinding")
    eq(binding["roleRef"], {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                            "name": role["metadata"]["name"]}, "roleRef")
    sa = r.one("ServiceAccount")
    eq(binding["subjects"], [{"kind": "ServiceAccount", "name": sa["metadata"]["name"],
                              "namespace": NS}], "binding subjects")
    assert not r.all("Role") and not r.all("RoleBinding"), "unexpected namespaced RBAC"
    pdb = r.one("PodDisruptionBudget")
    eq(pdb["spec"]["minAvailable"], 1, "PDB minAvailable")
    eq(pdb["spec"]["selector"]["matchLabels"], r.one("Deployment")["spec"]["selector"]["matchLabels"],
       "PDB selector")


def assert_webhook(r, service=True):
    w = r.webhook()
    eq(w["name"], "pods.distenv.dev", "webhook name")
    eq(w["admissionReviewVersions"], ["v1"], "admissionReviewVersions")
    eq(w["sideEffects"], "None", "sideEffects")
    eq(w["failurePolicy"], "Fail", "failurePolicy")
    eq(w["matchPolicy"], "Equivalent", "matchPolicy")
    eq(w["reinvocationPolicy"], "IfNeeded", "reinvocationPolicy")
    eq(w["timeoutSeconds"], 10, "timeoutSeconds")
    eq(w["rules"], [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"],
                     "operations": ["CREATE"], "scope": "Namespaced"}], "rules")
    eq(w["objectSelector"], {"matchLabels": {"distenv.dev/inject": "true"}}, "objectSelector")
    eq(w["namespaceSelector"], {"matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", NS]}]},
        "namespaceSelector")
    if service:
        svc = r.one("Service")
        eq(w["clientConfig"]["service"], {"name": svc["metadata"]["name"], "namespace": NS,
                                          "path": "/mutate", "port": 443}, "clientConfig.service")
        assert "url" not in w["clientConfig"], "url and service both set"
    # the validating webhook: same server and certificate, path /validate, the
    # four workload kinds on CREATE and UPDATE, only opted-in pod templates
    v = r.validating()
    eq(v["name"], "workloads.distenv.dev", "validating webhook name")
    eq(v["failurePolicy"], "Fail", "validating failurePolicy")
    eq(v["sideEffects"], "None", "validating sideEffects")
    eq(v["namespaceSelector"], w["namespaceSelector"], "validating namespaceSelector")
    eq(v["clientConfig"].get("caBundle"), w["clientConfig"].get("caBundle"), "validating caBundle")
    # every kind: files/validate-rules.yaml (t_chart_files: what the binary makes)
    eq(v["rules"], yaml.safe_load(chart_file("validate-rules.yaml")), "validating rules")
    for rule in v["rules"]:
        eq(rule["operations"], ["CREATE", "UPDATE"], "validating operations")
    eq([m["name"] for m in v["matchConditions"]], ["pod-template-opts-in"], "matchConditions")
    # the expression is files/opt-in.cel (t_chart_files: what the binary makes), folded
    eq(v["matchConditions"][0]["expression"], " ".join(opt_in_cel_file().split("\n")).strip(),
       "matchCondition expression")
    if service:
        eq(v["clientConfig"]["service"]["path"], "/validate", "validating path")
    # the scale webhook: the same server, path and certificate; statefulsets/scale on
    # UPDATE; no matchConditions (a Scale has no template); fails open, as it only warns
    s = r.scale()
    eq(s["name"], "scale.distenv.dev", "scale webhook name")
    eq(s["failurePolicy"], "Ignore", "scale failurePolicy")
    eq(s["sideEffects"], "None", "scale sideEffects")
    eq(s["clientConfig"], v["clientConfig"], "scale clientConfig")
    eq(s["namespaceSelector"], w["namespaceSelector"], "scale namespaceSelector")
    eq(s["rules"], [{"apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["statefulsets/scale"],
                     "operations": ["UPDATE"], "scope": "Namespaced"}], "scale rules")
    assert "matchConditions" not in s, "scale webhook has matchConditions"


CHART_FILES = ("opt-in.cel", "validate-rules.yaml", "rbac-rules.yaml")


def chart_file(name):
    with open(os.path.join(CHART, "files", name)) as f:
        return f.read()


def opt_in_cel_file():
    return chart_file("opt-in.cel")


def t_chart_files(binary):
    """The chart's files made from the kind table (src/kinds/) are what
    `distenv-webhook chart-file NAME` makes: a kind added, or one whose templates,
    group or resource change, fails here until scripts/chart-files.sh writes them again."""
    for name in CHART_FILES:
        r = subprocess.run([binary, "chart-file", name], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, f"chart-file {name} exited {r.returncode}: {r.stderr}"
        assert r.stdout == chart_file(name), (
            f"charts/distenv/files/{name} differs from `distenv-webhook chart-file {name}`: run "
            f"`scripts/chart-files.sh && make manifests`\n"
            f"--- binary ---\n{r.stdout}--- file ---\n{chart_file(name)}")
    r = subprocess.run([binary, "opt-in-cel"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stdout == opt_in_cel_file(), "opt-in-cel is chart-file opt-in.cel"
    # a name the command does not know is refused
    r = subprocess.run([binary, "chart-file", "nope.yaml"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "nope.yaml" in r.stderr, (r.returncode, r.stderr)


def dns_names(domain=None):
    """The serving certificate's names: the fully-qualified one only when the chart is given
    the cluster's domain (by default the server reads it from its pod; the API server calls
    <svc>.<ns>.svc)."""
    names = [f"{RELEASE}.{NS}.svc", RELEASE, f"{RELEASE}.{NS}"]
    return names + [f"{RELEASE}.{NS}.svc.{domain}"] if domain else names


# --------------------------------------------------------------------------
# The checks


def t_lint(helm):
    for extra in ([], ["--set", "certificates.mode=certManager"],
                  ["--set", "certificates.mode=existingSecret", "--set", "certificates.secretName=x"],
                  ["--set", "hostNetwork=true", "--set", "containerPort=9443"],
                  ["--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.prometheusRule.enabled=true",
                   "--set", "metrics.grafanaDashboard.enabled=true", "--set", "test.enabled=false"]):
        r = helm.run("lint", "--strict", CHART, *extra)
        assert r.returncode == 0, f"helm lint {extra}: {r.stdout}{r.stderr}"


def t_chart_version():
    chart = yaml.safe_load(open(os.path.join(CHART, "Chart.yaml")))
    version = open(os.path.join(ROOT, "VERSION")).read().strip()
    eq(chart["appVersion"], version, "Chart appVersion vs VERSION")
    # The license annotation names the repository's LICENSE.
    lic = open(os.path.join(ROOT, "LICENSE")).read()
    eq(chart["annotations"]["artifacthub.io/license"], "Apache-2.0", "license annotation")
    assert "Apache License" in lic and "Version 2.0" in lic, "LICENSE is not Apache-2.0"
    for kind in ("StatefulSet", "Indexed Job", "JobSet", "LeaderWorkerSet"):
        assert kind in chart["description"], f"Chart description lacks {kind}"


def t_self_signed(helm):
    r = helm.template()
    eq(r.kinds(), sorted(["ClusterRole", "ClusterRoleBinding", "ConfigMap", "Deployment",
                          "MutatingWebhookConfiguration", "Pod", "PodDisruptionBudget", "Secret",
                          "Service", "ServiceAccount", "ValidatingWebhookConfiguration"]), "kinds")
    for o in r.objs:
        if o["kind"] not in ("ClusterRole", "ClusterRoleBinding", "MutatingWebhookConfiguration",
                             "ValidatingWebhookConfiguration"):
            eq(o["metadata"].get("namespace"), NS, f"namespace of {o['kind']}")
    assert_deployment(r)
    assert_service_rbac(r)
    assert_webhook(r)
    eq(r.one("Deployment")["spec"]["template"]["spec"]["volumes"][0]["projected"]["sources"][1]
       ["secret"]["name"], r.one("Secret")["metadata"]["name"], "Deployment mounts the chart's Secret")


def t_self_signed_cert(helm, tmp):
    r = helm.template("--set", "certificates.extraIPAddresses={127.0.0.1}")
    sec = r.one("Secret")
    eq(sec["type"], "kubernetes.io/tls", "Secret type")
    data = {k: base64.b64decode(v) for k, v in sec["data"].items()}
    eq(sorted(data), ["ca.crt", "tls.crt", "tls.key"], "Secret keys")
    eq(r.webhook()["clientConfig"]["caBundle"], sec["data"]["ca.crt"], "caBundle is the Secret's ca.crt")
    for k, v in data.items():
        open(os.path.join(tmp, k), "wb").write(v)
    out = openssl("verify", "-CAfile", os.path.join(tmp, "ca.crt"), os.path.join(tmp, "tls.crt"))
    assert out.strip().endswith("OK"), out
    text = openssl("x509", "-in", os.path.join(tmp, "tls.crt"), "-noout", "-text")
    for name in dns_names():
        assert f"DNS:{name}" in text, f"SAN DNS:{name} missing"
    assert "IP Address:127.0.0.1" in text, "SAN IP 127.0.0.1 missing"
    assert re.search(r"Subject: CN ?= ?" + re.escape(f"{RELEASE}.{NS}.svc"), text), "CN"
    end = openssl("x509", "-in", os.path.join(tmp, "tls.crt"), "-noout", "-enddate").split("=", 1)[1]
    days = (time.mktime(time.strptime(end.strip(), "%b %d %H:%M:%S %Y GMT")) - time.time()) / 86400
    assert 3640 < days < 3660, f"certificate valid for {days:.0f} days, want 3650"
    pub_cert = openssl("x509", "-in", os.path.join(tmp, "tls.crt"), "-noout", "-pubkey")
    pub_key = openssl("pkey", "-in", os.path.join(tmp, "tls.key"), "-pubout")
    eq(pub_cert, pub_key, "tls.key matches tls.crt")
    for k in ("ca.crt", "tls.crt"):
        text = openssl("x509", "-in", os.path.join(tmp, k), "-noout", "-text")
        assert "id-ecPublicKey" in text and "prime256v1" in text, f"{k} is not ECDSA P-256"
    # Without a cluster every render makes a new CA: this is why the checked-in
    # manifest does not use selfSigned, and why install.sh checks the upgrade.
    r2 = helm.template()
    assert r2.one("Secret")["data"]["ca.crt"] != sec["data"]["ca.crt"], "two renders gave the same CA"


def t_cert_manager(helm):
    r = helm.template("--set", "certificates.mode=certManager",
                      "--set", "certificates.extraIPAddresses={127.0.0.1}")
    assert not r.all("Secret"), "certManager mode must not render a Secret"
    assert_deployment(r)
    assert_webhook(r)
    assert "caBundle" not in r.webhook()["clientConfig"], "caBundle templated in certManager mode"
    issuers = {o["metadata"]["name"]: o["spec"] for o in r.all("Issuer")}
    certs = {o["metadata"]["name"]: o["spec"] for o in r.all("Certificate")}
    eq(sorted(issuers), [f"{RELEASE}-ca", f"{RELEASE}-selfsigned"], "Issuers")
    eq(issuers[f"{RELEASE}-selfsigned"], {"selfSigned": {}}, "self-signed Issuer")
    eq(sorted(certs), [f"{RELEASE}-ca", f"{RELEASE}-tls"], "Certificates")
    ca = certs[f"{RELEASE}-ca"]
    eq(ca["isCA"], True, "CA Certificate isCA")
    eq(ca["issuerRef"]["name"], f"{RELEASE}-selfsigned", "CA issuerRef")
    eq(issuers[f"{RELEASE}-ca"], {"ca": {"secretName": ca["secretName"]}}, "CA Issuer secret")
    srv = certs[f"{RELEASE}-tls"]
    eq(srv["issuerRef"], {"group": "cert-manager.io", "kind": "Issuer", "name": f"{RELEASE}-ca"},
       "serving Certificate issuerRef")
    eq(srv["dnsNames"], dns_names(), "serving dnsNames")
    dom = helm.template("--set", "certificates.mode=certManager", "--set", "config.clusterDomain=corp.example")
    eq({o["metadata"]["name"]: o["spec"] for o in dom.all("Certificate")}[f"{RELEASE}-tls"]["dnsNames"],
       dns_names("corp.example"), "serving dnsNames with config.clusterDomain set")
    eq(srv["ipAddresses"], ["127.0.0.1"], "serving ipAddresses")
    assert "server auth" in srv["usages"], srv["usages"]
    vol = r.pod()["spec"]["volumes"][0]["projected"]["sources"][1]["secret"]["name"]
    eq(vol, srv["secretName"], "Deployment mounts the Certificate's Secret")
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        ann = r.one(kind)["metadata"]["annotations"]
        eq(ann["cert-manager.io/inject-ca-from"], f"{NS}/{RELEASE}-tls", f"{kind} inject-ca-from")
    assert "caBundle" not in r.validating()["clientConfig"], "caBundle templated in certManager mode (validating)"
    assert "caBundle" not in r.scale()["clientConfig"], "caBundle templated in certManager mode (scale)"
    for o in r.all("Issuer") + r.all("Certificate"):
        eq(o["metadata"]["namespace"], NS, f"namespace of {o['kind']}")
    # An issuer of the user's: no chart Issuers, the Certificate points at it.
    r = helm.template("--set", "certificates.mode=certManager",
                      "--set", "certificates.certManager.issuerRef.name=corp-ca",
                      "--set", "certificates.certManager.issuerRef.kind=ClusterIssuer")
    assert not r.all("Issuer"), "Issuers rendered with a user issuerRef"
    eq([o["metadata"]["name"] for o in r.all("Certificate")], [f"{RELEASE}-tls"], "Certificates")
    eq(r.one("Certificate")["spec"]["issuerRef"],
       {"group": "cert-manager.io", "kind": "ClusterIssuer", "name": "corp-ca"}, "issuerRef")


def t_existing_secret(helm, tmp):
    pem = ("-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUZmFrZQ==\n-----END CERTIFICATE-----\n")
    path = os.path.join(tmp, "ca.pem")
    open(path, "w").write(pem)
    base = ["--set", "certificates.mode=existingSecret", "--set", "certificates.secretName=corp-tls"]
    # --skip-tests: the helm test hook's CA ConfigMap is t_helm_test_hook's to check
    r = helm.template(*base, "--skip-tests", "--set-file", f"certificates.existingSecret.caBundle={path}")
    assert not r.all("Secret") and not r.all("Certificate") and not r.all("Issuer"), r.kinds()
    assert_deployment(r)
    assert_webhook(r)
    eq(r.pod()["spec"]["volumes"][0]["projected"]["sources"][1]["secret"]["name"], "corp-tls",
       "mounted Secret")
    eq(base64.b64decode(r.webhook()["clientConfig"]["caBundle"]).decode(), pem, "caBundle from PEM")
    b64 = base64.b64encode(pem.encode()).decode()
    r = helm.template(*base, "--set", f"certificates.existingSecret.caBundle={b64}")
    eq(r.webhook()["clientConfig"]["caBundle"], b64, "caBundle given base64-encoded")
    r = helm.template(*base)
    assert "caBundle" not in r.webhook()["clientConfig"], "caBundle without a value or Secret"


def t_install_traps(helm):
    """The traps a new user falls into: each refused with a clear message or fixed."""
    # `helm install` without -n lands in default, which the webhook never serves
    r = helm.run("template", RELEASE, CHART, "--namespace", "default", "--kube-version", "1.33.0")
    assert r.returncode != 0 and "refusing to install into namespace default" in r.stderr \
        and "-n distenv --create-namespace" in r.stderr, f"default namespace: {r.returncode} {r.stderr}"
    ok = helm.template("--set", "allowDefaultNamespace=true", ns="default")
    eq(ok.one("Deployment")["metadata"]["namespace"], "default", "allowDefaultNamespace")
    # existingSecret without a name: the documented default FULLNAME-tls
    r = helm.template("--set", "certificates.mode=existingSecret")
    secrets = [src["secret"]["name"] for v in r.pod()["spec"]["volumes"]
               for src in v.get("projected", {}).get("sources", []) if "secret" in src]
    eq(secrets, [f"{RELEASE}-tls"], "existingSecret default name")
    # an external cert-manager issuer keeps its group and kind
    r = helm.template("--set", "certificates.mode=certManager",
                      "--set", "certificates.certManager.issuerRef.name=pca",
                      "--set", "certificates.certManager.issuerRef.kind=AWSPCAClusterIssuer",
                      "--set", "certificates.certManager.issuerRef.group=awspca.cert-manager.io")
    cert = [c for c in r.all("Certificate") if c["metadata"]["name"].endswith("-tls")][0]
    eq(cert["spec"]["issuerRef"], {"group": "awspca.cert-manager.io", "kind": "AWSPCAClusterIssuer",
                                   "name": "pca"}, "issuerRef")
    # runAsUser/runAsGroup null: left to the platform, still non-root
    r = helm.template("--set", "runAsUser=null", "--set", "runAsGroup=null",
                      "--set-json", 'containerSecurityContext={"seLinuxOptions":{"level":"s0:c1,c2"}}',
                      "--set-json", 'podSecurityContext={"supplementalGroups":[1000]}')
    pod = r.pod()["spec"]
    for sc in [pod["securityContext"]] + [c["securityContext"] for c in pod["containers"]]:
        assert "runAsUser" not in sc and "runAsGroup" not in sc, f"runAsUser rendered: {sc}"
        eq(sc["runAsNonRoot"], True, "runAsNonRoot")
    eq(pod["securityContext"]["supplementalGroups"], [1000], "podSecurityContext merged")
    for c in pod["containers"]:
        eq(c["securityContext"]["seLinuxOptions"], {"level": "s0:c1,c2"}, "containerSecurityContext")
        eq(c["securityContext"]["allowPrivilegeEscalation"], False, "defaults kept")


def t_escape_hatches(helm):
    """extraArgs/extraEnv/extraVolumes, priorityClassName, the opt-in NetworkPolicy and
    the PDB's unhealthyPodEvictionPolicy render where they belong."""
    r = helm.template("--set-json", 'extraArgs=["--log-level","debug"]',
                      "--set-json", 'extraEnv=[{"name":"X","value":"1"}]',
                      "--set-json", 'extraVolumes=[{"name":"v","emptyDir":{}}]',
                      "--set-json", 'extraVolumeMounts=[{"name":"v","mountPath":"/v"}]',
                      "--set", "networkPolicy.enabled=true",
                      "--set", "priorityClassName=system-cluster-critical")
    pod = r.pod()["spec"]
    c = pod["containers"][0]
    eq(c["args"], ["serve", "--config", "/etc/distenv/config.yaml", "--log-level", "debug"], "args")
    eq(c["env"], [{"name": "X", "value": "1"}], "extraEnv")
    assert {"name": "v", "mountPath": "/v"} in c["volumeMounts"], c["volumeMounts"]
    assert {"name": "v", "emptyDir": {}} in pod["volumes"], pod["volumes"]
    eq(pod["priorityClassName"], "system-cluster-critical", "priorityClassName")
    np = r.one("NetworkPolicy")
    eq(np["spec"]["ingress"], [{"ports": [{"protocol": "TCP", "port": 8443},
                                          {"protocol": "TCP", "port": 8081}]}], "NetworkPolicy")
    eq(np["spec"]["podSelector"]["matchLabels"], pod_selector(r), "NetworkPolicy selects the pods")
    eq(r.one("PodDisruptionBudget")["spec"]["unhealthyPodEvictionPolicy"], "AlwaysAllow", "PDB policy")
    r = helm.template("--set", "podDisruptionBudget.unhealthyPodEvictionPolicy=IfHealthyBudget")
    eq(r.one("PodDisruptionBudget")["spec"]["unhealthyPodEvictionPolicy"], "IfHealthyBudget", "PDB policy set")
    assert not helm.template().all("NetworkPolicy"), "NetworkPolicy is opt-in"


def pod_selector(r):
    return r.one("Deployment")["spec"]["selector"]["matchLabels"]


def t_url_mode(helm):
    r = helm.template("--set", "webhook.url=https://127.0.0.1:18443/mutate")
    cc = r.webhook()["clientConfig"]
    eq(cc.get("url"), "https://127.0.0.1:18443/mutate", "clientConfig.url")
    assert "service" not in cc, "service set together with url"
    assert cc.get("caBundle"), "no caBundle in url mode"
    assert_webhook(r, service=False)
    vcc = r.validating()["clientConfig"]
    eq(vcc.get("url"), "https://127.0.0.1:18443/validate", "validating clientConfig.url")
    eq(r.scale()["clientConfig"].get("url"), "https://127.0.0.1:18443/validate", "scale clientConfig.url")
    assert "service" not in vcc, "validating: service set together with url"
    off = helm.template("--set", "validation.enabled=false")
    assert not off.all("ValidatingWebhookConfiguration"), "validation.enabled=false still renders it"


def t_host_network(helm):
    r = helm.template("--set", "hostNetwork=true", "--set", "containerPort=9443")
    spec = r.pod()["spec"]
    eq(spec.get("hostNetwork"), True, "hostNetwork")
    eq(spec["dnsPolicy"], "ClusterFirstWithHostNet", "dnsPolicy")
    assert "sysctls" not in spec["securityContext"], "sysctl with hostNetwork"
    eq(r.config()["listen"], ":9443", "listen")
    eq(r.one("Deployment")["spec"]["strategy"]["rollingUpdate"], {"maxSurge": 0, "maxUnavailable": 1},
       "rolling update frees the host port first")
    assert_deployment(r, port=9443)
    code, err = helm.template_fails("--set", "hostNetwork=true", "--set", "containerPort=443")
    assert code != 0 and "below 1024" in err, f"hostNetwork with port 443 accepted: {err}"


def t_low_port(helm):
    r = helm.template("--set", "containerPort=443")
    spec = r.pod()["spec"]
    eq(spec["securityContext"].get("sysctls"),
       [{"name": "net.ipv4.ip_unprivileged_port_start", "value": "0"}], "unprivileged port sysctl")
    eq(r.config()["listen"], ":443", "listen")
    assert_deployment(r, port=443)
    assert "sysctls" not in helm.template().pod()["spec"]["securityContext"], "sysctl on port 8443"


def chart_floor():
    """The kubeVersion floor of Chart.yaml, e.g. "1.30.0" from ">=1.30.0-0"."""
    want = yaml.safe_load(open(os.path.join(CHART, "Chart.yaml")))["kubeVersion"]
    m = re.fullmatch(r">=(\d+)\.(\d+)\.0-0", want)
    assert m, f"Chart.yaml kubeVersion {want!r}: expected >=1.N.0-0"
    return int(m.group(1)), int(m.group(2))


def t_kube_floor(helm):
    major, minor = chart_floor()
    # matchConditions (the ValidatingWebhookConfiguration's opt-in filter) is GA
    # in 1.30; an API server without it sends every StatefulSet and Job there.
    assert (major, minor) >= (1, 30), f"floor {major}.{minor} is below 1.30 (matchConditions GA)"
    for mode in ("selfSigned", "certManager", "existingSecret"):
        r = helm.template("--set", f"certificates.mode={mode}", kube=f"{major}.{minor}.0")
        mc = r.validating().get("matchConditions")
        assert mc and mc[0]["name"] == "pod-template-opts-in", f"{mode}: matchConditions {mc}"
        spec = r.pod()["spec"]
        eq(spec["containers"][0]["lifecycle"]["preStop"]["sleep"]["seconds"], 10,
           f"{mode}: preStop sleep at the floor")
    below = f"{major}.{minor - 1}.15"
    r = helm.run("template", RELEASE, CHART, "--namespace", NS, "--kube-version", below)
    assert r.returncode != 0, f"helm template --kube-version {below} rendered (floor {major}.{minor})"
    assert "incompatible with Kubernetes" in r.stderr, r.stderr.strip()
    # The floor is stated the same way in the docs.
    floor = f"Kubernetes {major}.{minor} or later"
    for doc in ("README.md", os.path.join("docs", "install.md")):
        text = " ".join(open(os.path.join(ROOT, doc)).read().split())
        assert floor in text, f"{doc} does not say {floor!r}"


def t_prestop_versions(helm):
    spec = helm.template("--set", "preStop.enabled=false").pod()["spec"]
    assert "lifecycle" not in spec["containers"][0], "preStop rendered while disabled"
    eq(spec["terminationGracePeriodSeconds"], 25 + 5, "grace period without preStop")
    spec = helm.template("--set", "preStop.sleepSeconds=20",
                         "--set", "config.server.drainTimeoutSeconds=40").pod()["spec"]
    eq(spec["containers"][0]["lifecycle"]["preStop"]["sleep"]["seconds"], 20, "preStop seconds")
    eq(spec["terminationGracePeriodSeconds"], 65, "grace period follows preStop + drain")


def t_checksum(helm):
    def ck(*a):
        return helm.template(*a).pod()["metadata"]["annotations"]["checksum/config"]
    base = ck()
    assert ck("--set", "config.logging.level=debug") != base, "config change keeps the checksum"
    eq(ck("--set", "replicaCount=3"), base, "checksum after a non-config change")
    cfg_text = helm.template().one("ConfigMap")["data"]["config.yaml"]
    assert "level: info" in cfg_text, cfg_text


def t_toggles(helm):
    r = helm.template("--set", "replicaCount=1")
    assert not r.all("PodDisruptionBudget"), "PDB with one replica"
    r = helm.template("--set", "config.lookups.enabled=false", "--set", "rbac.create=false")
    assert not r.all("ClusterRole") and not r.all("ClusterRoleBinding"), "RBAC with rbac.create=false"
    eq(r.pod()["spec"]["automountServiceAccountToken"], False, "token without look-ups")
    eq(r.one("ServiceAccount")["automountServiceAccountToken"], False, "SA token without look-ups")
    code, err = helm.template_fails("--set", "rbac.create=false")
    assert code != 0 and "needs RBAC" in err, f"look-ups without RBAC accepted: {err}"
    r = helm.template("--set", "webhook.excludeNamespaces={batch-system}",
                      "--set", "webhook.failurePolicy=Ignore", "--set", "webhook.timeoutSeconds=5")
    w = r.webhook()
    eq(w["namespaceSelector"]["matchExpressions"][0]["values"], ["kube-system", NS, "batch-system"],
       "excluded namespaces")
    eq((w["failurePolicy"], w["timeoutSeconds"]), ("Ignore", 5), "failurePolicy/timeoutSeconds")
    r = helm.template("--set", "checkConfig=false")
    assert "initContainers" not in r.pod()["spec"], "check-config with checkConfig=false"
    r = helm.template("--set", "image.repository=registry.example/ml/distenv",
                      "--set", "image.digest=sha256:" + "ab" * 32)
    eq(r.pod()["spec"]["containers"][0]["image"], "registry.example/ml/distenv@sha256:" + "ab" * 32,
       "image by digest")
    eq(helm.template().pod()["spec"]["containers"][0]["image"], "distenv:" +
       open(os.path.join(ROOT, "VERSION")).read().strip(), "default image tag")


def t_service_monitor(helm):
    assert not helm.template().all("ServiceMonitor"), "ServiceMonitor rendered by default"
    r = helm.template("--set", "metrics.serviceMonitor.enabled=true",
                      "--set", "metrics.serviceMonitor.labels.release=prom")
    sm = r.one("ServiceMonitor")
    eq(sm["metadata"]["labels"]["release"], "prom", "ServiceMonitor label")
    (ep,) = sm["spec"]["endpoints"]
    eq((ep["port"], ep["scheme"], ep["path"]), ("https", "https", "/metrics"), "endpoint")
    eq(ep["tlsConfig"], {"serverName": f"{RELEASE}.{NS}.svc",
                         "ca": {"secret": {"name": f"{RELEASE}-tls", "key": "ca.crt"}}}, "tlsConfig")
    svc_labels = r.one("Service")["metadata"]["labels"]
    for k, v in sm["spec"]["selector"]["matchLabels"].items():
        eq(svc_labels.get(k), v, f"ServiceMonitor selector {k} matches the Service")


METRIC_NAME = re.compile(r"\b((?:distenv|process)_[a-z0-9_]+)")


def served_metrics():
    """charts/distenv/metrics.txt: the names the server serves, one a line
    (histograms by their base name). The server's own tests read it too."""
    names = [n.strip() for n in open(os.path.join(CHART, "metrics.txt")) if n.strip()]
    eq(names, sorted(set(names)), "metrics.txt sorted, no duplicates")
    for n in names:
        assert re.fullmatch(r"(distenv|process)_[a-z0-9_]+", n), f"metrics.txt: bad name {n!r}"
        assert not re.search(r"_(bucket|sum|count)$", n), f"metrics.txt: {n} is not a base name"
    return set(names)


def metric_names(text):
    """The distenv_*/process_* names a query text uses, a histogram's
    _bucket/_sum/_count series mapped to its base name."""
    served = served_metrics()
    out = set()
    for n in METRIC_NAME.findall(text):
        base = re.sub(r"_(bucket|sum|count)$", "", n)
        out.add(n if n in served or base not in served else base)
    return out


def gh_anchors(path):
    """The anchors GitHub makes of a Markdown file's headings."""
    out = set()
    for line in open(path):
        m = re.match(r"#+ (.*)", line)
        if m:
            out.add(re.sub(r"[^a-z0-9 _-]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return out


ALERTS = ["DistenvWebhookDown", "DistenvCertificateExpiry", "DistenvCertificateReloadFailing",
          "DistenvHighDenialRate", "DistenvLookupErrors", "DistenvAdmissionSlow", "DistenvServerErrors"]


def rule_spec(r):
    (pr,) = r.all("PrometheusRule")
    (group,) = pr["spec"]["groups"]
    return pr, group["rules"]


def t_prometheus_rule(helm):
    assert not helm.template().all("PrometheusRule"), "PrometheusRule rendered by default"
    r = helm.template("--set", "metrics.prometheusRule.enabled=true",
                      "--set", "metrics.prometheusRule.labels.release=prom")
    pr, rules = rule_spec(r)
    eq(pr["apiVersion"], "monitoring.coreos.com/v1", "PrometheusRule apiVersion")
    eq((pr["metadata"]["name"], pr["metadata"]["namespace"]), (RELEASE, NS), "PrometheusRule name")
    eq(pr["metadata"]["labels"]["release"], "prom", "PrometheusRule label")
    eq([x["alert"] for x in rules], [ALERTS[0], ALERTS[1], *ALERTS[1:]], "alerts")
    anchors = gh_anchors(os.path.join(ROOT, "docs", "operations.md"))
    sel = f'job="{RELEASE}",namespace="{NS}"'
    for x in rules:
        a = x["annotations"]
        assert a.get("summary") and a.get("description"), f"{x['alert']}: summary/description"
        eq(a["runbook_url"], "docs/operations.md#" + x["alert"].lower(), f"{x['alert']} runbook_url")
        assert x["alert"].lower() in anchors, f"docs/operations.md has no section {x['alert']}"
        assert x["labels"]["severity"] in ("warning", "critical"), x["labels"]
        assert sel in x["expr"], f"{x['alert']} does not select {sel}: {x['expr']}"
    sev = {(x["alert"], x["labels"]["severity"]): x["expr"] for x in rules}
    assert "< 14 * 86400" in sev[("DistenvCertificateExpiry", "warning")], sev
    assert "< 2 * 86400" in sev[("DistenvCertificateExpiry", "critical")], sev
    assert sev[("DistenvAdmissionSlow", "warning")].rstrip().endswith("> 5"), "latency threshold 0.5 x 10 s"
    # The values move the thresholds, the selector, the namespace and the set of alerts.
    r = helm.template("--set", "metrics.prometheusRule.enabled=true",
                      "--set", "metrics.prometheusRule.namespace=monitoring",
                      "--set", "metrics.prometheusRule.job=webhooks",
                      "--set", "metrics.prometheusRule.runbookURL=https://runbooks.example/distenv/",
                      "--set", "metrics.prometheusRule.certificate.warningDays=30",
                      "--set", "metrics.prometheusRule.denials.ratio=0.5",
                      "--set", "metrics.prometheusRule.denials.window=30m",
                      "--set", "metrics.prometheusRule.lookups.errorRatio=0.25",
                      "--set", "metrics.prometheusRule.latency.timeoutRatio=0.8",
                      "--set", "webhook.timeoutSeconds=20",
                      "--set", "metrics.prometheusRule.serverErrors.ratio=0.01",
                      "--set", "metrics.prometheusRule.alertLabels.team=ml",
                      "--set", "metrics.prometheusRule.disabledAlerts={DistenvLookupErrors}",
                      "--set-json", 'metrics.prometheusRule.additionalRules=[{"alert":"Mine","expr":"vector(1)"}]')
    pr, rules = rule_spec(r)
    eq(pr["metadata"]["namespace"], "monitoring", "PrometheusRule namespace")
    by = {(x["alert"], x["labels"]["severity"] if "labels" in x else ""): x for x in rules}
    eq(sorted({x["alert"] for x in rules}), sorted(set(ALERTS) - {"DistenvLookupErrors"} | {"Mine"}),
       "disabledAlerts / additionalRules")
    for x in rules:
        if x["alert"] != "Mine":
            assert f'job="webhooks",namespace="{NS}"' in x["expr"], x["expr"]
            eq(x["labels"]["team"], "ml", "alertLabels")
            assert x["annotations"]["runbook_url"].startswith("https://runbooks.example/distenv#"), \
                x["annotations"]["runbook_url"]
    assert "< 30 * 86400" in by[("DistenvCertificateExpiry", "warning")]["expr"]
    den = by[("DistenvHighDenialRate", "warning")]["expr"]
    assert ") > 0.5" in den and "[30m]" in den and "[15m]" not in den, den
    assert by[("DistenvAdmissionSlow", "warning")]["expr"].rstrip().endswith("> 16"), "0.8 x 20 s"
    assert by[("DistenvServerErrors", "warning")]["expr"].rstrip().endswith("> 0.01")
    code, err = helm.template_fails("--set", "metrics.prometheusRule.enabled=true",
                                    "--set", "metrics.prometheusRule.disabledAlerts={NoSuchAlert}")
    assert code != 0 and "disabledAlerts" in err, f"unknown alert name accepted: {err}"


def t_promtool(helm, promtool, tmp):
    """promtool check rules on the rendered spec, and promtool test rules
    (test/chart/prometheusrule.test.yaml: each alert fires on synthetic
    series, and stays quiet below its threshold)."""
    assert promtool and os.path.exists(promtool), f"promtool not found ({promtool!r}): scripts/deps-image.sh helm"
    d = os.path.join(tmp, "promtool")
    os.makedirs(d, exist_ok=True)
    pr, _ = rule_spec(helm.template("--set", "metrics.prometheusRule.enabled=true"))
    with open(os.path.join(d, "rules.yaml"), "w") as f:
        yaml.safe_dump(pr["spec"], f, sort_keys=False)
    shutil.copy(os.path.join(ROOT, "test", "chart", "prometheusrule.test.yaml"), d)
    out = subprocess.run([promtool, "check", "rules", "rules.yaml"], cwd=d, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0 and "SUCCESS: 8 rules found" in out.stdout + out.stderr, \
        f"promtool check rules: {out.stdout}{out.stderr}"
    out = subprocess.run([promtool, "test", "rules", "prometheusrule.test.yaml"], cwd=d, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, f"promtool test rules: {(out.stdout + out.stderr)[-3000:]}"


DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}


def t_grafana_dashboard(helm):
    assert not [c for c in helm.template().all("ConfigMap") if "distenv.json" in c.get("data", {})], \
        "dashboard rendered by default"
    r = helm.template("--set", "metrics.grafanaDashboard.enabled=true",
                      "--set", "metrics.grafanaDashboard.annotations.grafana_folder=ML")
    (cm,) = [c for c in r.all("ConfigMap") if c["metadata"]["name"] == f"{RELEASE}-dashboard"]
    eq(cm["metadata"]["labels"]["grafana_dashboard"], "1", "sidecar label")
    eq(cm["metadata"]["annotations"], {"grafana_folder": "ML"}, "dashboard annotations")
    eq(cm["metadata"]["namespace"], NS, "dashboard namespace")
    text = open(os.path.join(CHART, "dashboards", "distenv.json")).read()
    eq(json.loads(cm["data"]["distenv.json"]), json.loads(text), "ConfigMap holds dashboards/distenv.json")
    dash = json.loads(text)
    eq(dash["uid"], "distenv", "dashboard uid")
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    eq((variables["datasource"]["type"], variables["datasource"]["query"]), ("datasource", "prometheus"),
       "datasource variable")
    for v in variables.values():
        if v["type"] == "query":
            eq(v["datasource"], DATASOURCE, f"variable {v['name']} datasource")
    panels = [p for p in dash["panels"] if p["type"] != "row"]
    ids = [p["id"] for p in dash["panels"]]
    eq(len(ids), len(set(ids)), "unique panel ids")
    exprs = [v["query"]["query"] for v in variables.values() if v["type"] == "query"]
    for p in panels:
        eq(p.get("datasource"), DATASOURCE, f"panel {p['title']!r} datasource")
        assert p["targets"], f"panel {p['title']!r} has no query"
        for t in p["targets"]:
            eq(t.get("datasource"), DATASOURCE, f"panel {p['title']!r} target datasource")
            exprs.append(t["expr"])
        g = p["gridPos"]
        assert g["x"] + g["w"] <= 24, f"panel {p['title']!r} wider than the grid"
    titles = " / ".join(p["title"] for p in panels)
    for want in ("Requests by path and code", "Admission outcomes", "Denial reasons", "Admission latency",
                 "Look-ups by outcome", "Look-up errors", "Look-up latency", "In flight",
                 "Certificate days left", "CPU", "Memory", "File descriptors", "Build"):
        assert want in titles, f"no panel {want!r}: {titles}"
    used = metric_names("\n".join(exprs))
    served = served_metrics()
    eq(sorted(used - served), [], "dashboard metrics the server does not serve")
    eq(sorted(served - used), [], "served metrics the dashboard does not show")
    for q in ("0.5", "0.9", "0.99"):
        assert any(f"histogram_quantile({q}, sum by (webhook, le)" in e for e in exprs), f"no p{q} by webhook"


def t_rule_metric_names(helm):
    """Every distenv_*/process_* name the rules use is in metrics.txt."""
    _, rules = rule_spec(helm.template("--set", "metrics.prometheusRule.enabled=true"))
    used = metric_names(json.dumps(rules))
    eq(sorted(used - served_metrics()), [], "rule metrics the server does not serve")
    assert "distenv_certificate_expiry_timestamp_seconds" in used and \
        "distenv_admission_duration_seconds" in used, used


# The restricted Pod Security Standard (pod-security.kubernetes.io/enforce:
# restricted), as the pod-security admission plugin checks it.
RESTRICTED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
                      "projected", "secret"}


def restricted_violations(spec):
    bad = []
    psc = spec.get("securityContext", {})
    for k in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(k):
            bad.append(k)
    for v in spec.get("volumes", []):
        kinds = set(v) - {"name"}
        if not kinds <= RESTRICTED_VOLUMES:
            bad.append(f"volume {v['name']}: {sorted(kinds)}")
    if psc.get("runAsUser") == 0:
        bad.append("pod runAsUser 0")
    pod_seccomp = psc.get("seccompProfile", {}).get("type")
    for c in spec.get("initContainers", []) + spec["containers"]:
        sc = c.get("securityContext", {})
        n = c["name"]
        if sc.get("privileged"):
            bad.append(f"{n}: privileged")
        if sc.get("allowPrivilegeEscalation") is not False:
            bad.append(f"{n}: allowPrivilegeEscalation not false")
        if "ALL" not in sc.get("capabilities", {}).get("drop", []):
            bad.append(f"{n}: capabilities not dropped")
        if set(sc.get("capabilities", {}).get("add", [])) - {"NET_BIND_SERVICE"}:
            bad.append(f"{n}: capabilities added")
        if not (sc.get("runAsNonRoot", psc.get("runAsNonRoot")) is True):
            bad.append(f"{n}: runAsNonRoot not true")
        if sc.get("runAsUser") == 0:
            bad.append(f"{n}: runAsUser 0")
        if sc.get("seccompProfile", {}).get("type", pod_seccomp) not in ("RuntimeDefault", "Localhost"):
            bad.append(f"{n}: seccompProfile")
        if any(p.get("hostPort") for p in c.get("ports", [])):
            bad.append(f"{n}: hostPort")
    for s in psc.get("sysctls", []):
        if s["name"] not in ("kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range",
                             "net.ipv4.ip_unprivileged_port_start", "net.ipv4.tcp_syncookies",
                             "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
                             "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
                             "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"):
            bad.append(f"sysctl {s['name']}")
    return bad


def t_helm_test_hook(helm):
    r = helm.template()
    pod = r.one("Pod")
    eq(pod["metadata"]["name"], f"{RELEASE}-test", "test Pod name")
    eq(pod["metadata"]["namespace"], NS, "test Pod namespace")
    ann = pod["metadata"]["annotations"]
    eq(ann["helm.sh/hook"], "test", "hook annotation")
    eq(ann["helm.sh/hook-delete-policy"], "before-hook-creation,hook-succeeded", "hook delete policy")
    spec = pod["spec"]
    eq(spec["restartPolicy"], "Never", "test Pod restartPolicy")
    eq(spec["automountServiceAccountToken"], False, "test Pod token")
    (c,) = spec["containers"]
    eq(c["image"], r.pod()["spec"]["containers"][0]["image"], "test Pod image is the webhook's")
    eq(c["args"], ["selftest", "--url", f"https://{RELEASE}.{NS}.svc:443", "--ca-file",
                   "/etc/distenv-test/ca.crt", "--timeout", "10s"], "test Pod args")
    eq(c.get("env"), None, "test Pod env")
    eq(c["volumeMounts"], [{"name": "ca", "mountPath": "/etc/distenv-test", "readOnly": True}],
       "test Pod mounts the CA")
    eq(spec["volumes"], [{"name": "ca", "secret": {"secretName": f"{RELEASE}-tls", "items": [
        {"key": "ca.crt", "path": "ca.crt"}]}}], "the CA from the serving Secret")
    eq(c["securityContext"], SECURE, "test Pod container securityContext")
    assert c["resources"]["limits"]["memory"], c["resources"]
    eq(restricted_violations(spec), [], "test Pod vs the restricted profile")
    eq(restricted_violations(r.pod()["spec"]), [], "webhook Pod vs the restricted profile")
    # Not a replica: the Service, the PDB and the Deployment do not select it.
    labels = pod["metadata"]["labels"]
    for sel in (r.one("Service")["spec"]["selector"], pod_selector(r),
                r.one("PodDisruptionBudget")["spec"]["selector"]["matchLabels"]):
        assert any(labels.get(k) != v for k, v in sel.items()), f"test Pod matches selector {sel}"
    r = helm.template("--set", "test.timeout=1m", "--set", "service.port=8443",
                      "--set", "runAsUser=null", "--set", "runAsGroup=null")
    c = r.one("Pod")["spec"]["containers"][0]
    eq(c["args"][-2:], ["--timeout", "1m"], "test.timeout")
    eq(c["args"][2], f"https://{RELEASE}.{NS}.svc:8443", "test Pod follows service.port")
    eq(restricted_violations(r.one("Pod")["spec"]), [], "test Pod with runAsUser=null")
    # existingSecret with a caBundle: the CA comes from a test hook ConfigMap, PEM or base64.
    pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
    for given in (pem, base64.b64encode(pem.encode()).decode()):
        r = helm.template("--set", "certificates.mode=existingSecret",
                          "--set", "certificates.existingSecret.caBundle=" + given)
        cms = [d for d in r.all("ConfigMap") if d["metadata"]["name"] == f"{RELEASE}-test-ca"]
        eq(len(cms), 1, "test CA ConfigMap")
        eq(cms[0]["metadata"]["annotations"]["helm.sh/hook"], "test", "the ConfigMap is a test hook")
        eq(cms[0]["data"]["ca.crt"].strip(), pem.strip(), "the ConfigMap holds the PEM")
        eq(r.one("Pod")["spec"]["volumes"][0]["configMap"]["name"], f"{RELEASE}-test-ca",
           "the Pod mounts it")
    assert not helm.template("--set", "test.enabled=false").all("Pod"), "test.enabled=false"


def t_chart_readme(helm):
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "chart-readme.py"), "--check"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, (r.stdout + r.stderr)[-2000:]
    out = helm.run("show", "readme", CHART)
    assert out.returncode == 0 and "## Values" in out.stdout, out.stderr
    values = yaml.safe_load(open(os.path.join(CHART, "values.yaml")))
    for key in values:
        assert f"| `{key}" in out.stdout, f"helm show readme lacks {key}"
    for key in ("metrics.prometheusRule.enabled", "metrics.grafanaDashboard.enabled", "test.enabled"):
        assert f"| `{key}` |" in out.stdout, f"helm show readme lacks {key}"
    # The template is not packaged.
    pkg = os.path.join(tempfile.mkdtemp(), "pkg")
    p = helm.run("package", CHART, "--destination", pkg)
    assert p.returncode == 0, p.stderr
    (tgz,) = os.listdir(pkg)
    listing = subprocess.run(["tar", "-tzf", os.path.join(pkg, tgz)], capture_output=True, text=True).stdout
    shutil.rmtree(os.path.dirname(pkg))
    assert "distenv/README.md.in" not in listing and "distenv/README.md" in listing, listing
    assert "distenv/dashboards/distenv.json" in listing, listing


def t_notes(helm):
    r = helm.run("install", RELEASE, CHART, "--namespace", NS, "--dry-run=client")
    assert r.returncode == 0, r.stderr
    notes = r.stdout.split("NOTES:", 1)[1]
    assert 'distenv.dev/inject: "true"' in notes, notes
    assert "subdomain" in notes and f"kube-system, {NS}" in notes, notes
    assert f"helm test {RELEASE} -n {NS}" in notes, notes


REJECT = [
    (["--set", "replicaCount=0"], "/replicaCount"),
    (["--set", "certificates.mode=vault"], "/certificates/mode"),
    (["--set", "webhook.failurePolicy=Sometimes"], "/webhook/failurePolicy"),
    (["--set", "webhook.timeoutSeconds=31"], "/webhook/timeoutSeconds"),
    (["--set", "webhook.url=http://127.0.0.1:8080/mutate"], "/webhook/url"),
    (["--set", "containerPort=70000"], "/containerPort"),
    (["--set", "runAsUser=0"], "/runAsUser"),
    (["--set", "replicas=3"], "replicas"),
    (["--set", "config.logging.level=verbose"], "/config/logging/level"),
    (["--set", "config.defaults.frameworks={pytorch,mxnet}"], "/config/defaults/frameworks"),
    (["--set", "config.server.idleTimeoutSeconds=30"], "/config/server/idleTimeoutSeconds"),
    (["--set", "config.listen=:1"], "listen"),
    (["--set", "config.lookups.kubeconfig=/k"], "kubeconfig"),
    (["--set", "config.defaults.port=0"], "/config/defaults/port"),
    (["--set", "config.clusterDomain=Cluster.Local"], "/config/clusterDomain"),
    (["--set", "config.clusterDomain=cluster.local."], "/config/clusterDomain"),
    (["--set", "certificates.extraIPAddresses={not-an-ip}"], "/certificates/extraIPAddresses"),
    (["--set", "image.digest=latest"], "/image/digest"),
    (["--set", "terminationGracePeriodSeconds=30"], "must be larger than"),
    (["--set", "metrics.prometheusRule.denials.ratio=1.5"], "/metrics/prometheusRule/denials/ratio"),
    (["--set", "metrics.prometheusRule.latency.timeoutRatio=0"], "/metrics/prometheusRule/latency/timeoutRatio"),
    (["--set", "metrics.prometheusRule.denials.window=15 minutes"], "/metrics/prometheusRule/denials/window"),
    (["--set", "test.timeout=1d"], "/test/timeout"),
    (["--set", "probePort=8443"], "a port of their own"),
    (["--set", "config.server.probeListen=:9000"], "probeListen"),
    (["--set", "config.server.headerTimeoutSeconds=0"], "/config/server/headerTimeoutSeconds"),
]


def t_reject(helm, args, needle):
    code, err = helm.template_fails(*args)
    assert code != 0, f"accepted {args}"
    # Helm 4 names the key as /a/b, Helm 3 as a.b.
    dotted = needle.strip("/").replace("/", ".")
    assert needle in err or dotted in err, f"error does not name {needle!r}: {err.strip()[:600]}"


def t_check_config(helm, binary, tmp):
    """The rendered config.yaml, in every mode and with non-default values, is
    accepted by the real parser (`check-config`)."""
    variants = [
        [],
        ["--set", "certificates.mode=certManager", "--set", "containerPort=443"],
        ["--set", "config.defaults.frameworks={jax}", "--set", "config.logging.level=debug",
         "--set", "config.lookups.enabled=false", "--set", "config.gpuResources={habana.ai/gaudi}",
         "--set", "config.clusterDomain=corp.example"],
    ]
    for i, args in enumerate(variants):
        text = helm.template(*args).one("ConfigMap")["data"]["config.yaml"]
        # The certificate paths exist only in the pod: point them at real files.
        text = text.replace("/etc/distenv/tls/", tmp + "/")
        path = os.path.join(tmp, f"config-{i}.yaml")
        open(path, "w").write(text)
        r = subprocess.run([binary, "check-config", path], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0 and "configuration OK" in r.stdout, \
            f"check-config {args}: rc {r.returncode} {r.stdout}{r.stderr}"
        # The chart writes no clusterDomain unless given one: the server reads its pod's.
        given = "config.clusterDomain=corp.example" in args
        assert ("clusterDomain" in yaml.safe_load(text)) == given, f"{args}: config.yaml {text}"
        want = "clusterDomain: corp.example (set here)" if given else "clusterDomain: not set"
        assert want in r.stdout, f"check-config {args}: {r.stdout!r} lacks {want!r}"
    # And a bad value that slipped past the schema would be caught at start.
    bad = os.path.join(tmp, "bad.yaml")
    open(bad, "w").write("defaults:\n  port: 0\n")
    r = subprocess.run([binary, "check-config", bad], capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "port" in r.stderr, f"check-config accepted port 0: {r.stdout}{r.stderr}"


def t_serve_chart_cert(helm, binary, tmp):
    """The binary serves the chart's selfSigned certificate with the chart's
    config, and a client that trusts only the chart's caBundle and checks the
    name the API server uses (<svc>.<ns>.svc) gets an AdmissionReview answer."""
    r = helm.template()
    sec = r.one("Secret")["data"]
    d = os.path.join(tmp, "serve")
    os.makedirs(d, exist_ok=True)
    for k in ("tls.crt", "tls.key"):
        open(os.path.join(d, k), "wb").write(base64.b64decode(sec[k]))
    os.chmod(os.path.join(d, "tls.key"), 0o600)
    open(os.path.join(d, "ca.crt"), "wb").write(base64.b64decode(r.webhook()["clientConfig"]["caBundle"]))
    cfg = r.one("ConfigMap")["data"]["config.yaml"].replace("/etc/distenv/tls/", d + "/")
    open(os.path.join(d, "config.yaml"), "w").write(cfg)
    port = free_port()
    log = open(os.path.join(d, "serve.log"), "w")
    probe = free_port()
    # The chart sets no clusterDomain: the server takes its pod's, as kubelet wrote it
    # (serve's test hook stands in for the pod's /etc/resolv.conf).
    resolv = os.path.join(d, "resolv.conf")
    open(resolv, "w").write(f"search {NS}.svc.ml.example svc.ml.example ml.example\n"
                            "nameserver 10.96.0.10\noptions ndots:5\n")
    proc = subprocess.Popen([binary, "serve", "--config", os.path.join(d, "config.yaml"), "--no-lookups",
                             "--listen", f"127.0.0.1:{port}", "--probe-listen", f"127.0.0.1:{probe}"],
                            stdout=log, stderr=log, env=dict(os.environ, DISTENV_RESOLV_CONF=resolv))
    host = f"{RELEASE}.{NS}.svc"
    curl = ["curl", "-sS", "--max-time", "5", "--cacert", os.path.join(d, "ca.crt"),
            "--resolve", f"{host}:{port}:127.0.0.1"]
    try:
        for _ in range(100):
            if proc.poll() is not None:
                raise AssertionError("serve exited: " + open(os.path.join(d, "serve.log")).read()[-800:])
            if subprocess.run(curl + ["-f", f"https://{host}:{port}/healthz"],
                              capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        else:
            raise AssertionError("serve did not answer /healthz in 10 s")
        # The probes' paths on the probe port (plain HTTP), and on the webhook port with
        # the ServiceMonitor's.
        for path in ("/readyz", "/healthz"):
            out = subprocess.run(["curl", "-fsS", "--max-time", "5", f"http://127.0.0.1:{probe}{path}"],
                                 capture_output=True, text=True)
            assert out.returncode == 0 and out.stdout == "ok\n", f"probe port GET {path}: {out.stderr}"
        for path in ("/readyz", "/healthz", "/metrics"):
            out = subprocess.run(curl + ["-f", f"https://{host}:{port}{path}"], capture_output=True, text=True)
            assert out.returncode == 0, f"GET {path}: {out.stderr}"
            if path == "/metrics":
                assert "# TYPE" in out.stdout, out.stdout[:300]
                assert 'distenv_cluster_domain_info{domain="ml.example",source="resolv.conf"} 1' \
                    in out.stdout, [ln for ln in out.stdout.splitlines() if "cluster_domain" in ln]
        review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": "chart-cert-1", "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "namespace": "team-a", "operation": "CREATE",
            "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {
                "name": "w-0", "namespace": "team-a",
                "labels": {"distenv.dev/inject": "true", "apps.kubernetes.io/pod-index": "0"},
                "annotations": {"distenv.dev/world-size": "3"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "w",
                                     "uid": "1", "controller": True}]},
                "spec": {"hostname": "w-0", "subdomain": "w", "containers": [{"name": "c", "image": "i"}]}}}}
        out = subprocess.run(curl + ["-H", "Content-Type: application/json", "--data-binary",
                                     json.dumps(review), f"https://{host}:{port}/mutate"],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        resp = json.loads(out.stdout)["response"]
        eq((resp["uid"], resp["allowed"]), ("chart-cert-1", True), "answer")
        patch = json.loads(base64.b64decode(resp["patch"]))
        text = json.dumps(patch)
        assert "w-0.w.team-a.svc.ml.example" in text and '"WORLD_SIZE"' in text, text[:400]
        # A client that checks another name must be refused.
        bad = subprocess.run(["curl", "-sS", "--max-time", "5", "--cacert", os.path.join(d, "ca.crt"),
                              "--resolve", f"other.{NS}.svc:{port}:127.0.0.1",
                              f"https://other.{NS}.svc:{port}/healthz"], capture_output=True)
        assert bad.returncode != 0, "certificate accepted for a name it does not cover"
        run_test_hook(binary, r, port, free_port(), os.path.join(d, "ca.crt"))
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run_test_hook(binary, r, port, closed_port, ca_file):
    """Runs the helm test Pod's container command from the host, as the Pod
    would (its args, the CA it mounts), connecting to the local server in place
    of the Service: it must pass, and fail against a port nobody listens on."""
    (c,) = r.one("Pod")["spec"]["containers"]
    args = list(c["args"])
    url = args[args.index("--url") + 1]
    eq(url, f"https://{RELEASE}.{NS}.svc:{r.one('Service')['spec']['ports'][0]['port']}",
       "test Pod URL")
    args[args.index("--ca-file") + 1] = ca_file
    for p, want in ((port, 0), (closed_port, 1)):
        a = list(args)
        a[a.index("--url") + 1] = f"https://{RELEASE}.{NS}.svc:{p}"
        out = subprocess.run([binary, *a, "--connect-to", "127.0.0.1"], capture_output=True,
                             text=True, timeout=120)
        eq(out.returncode, want, f"helm test command against port {p} ({out.stdout.strip()[-400:]})")


def atomic_write(d, files, gen):
    """Lays out files as the kubelet's AtomicWriter does for a projected volume:
    ..<gen>/<path>, ..data -> ..<gen>, and <top dir> -> ..data/<top dir>;
    an update renames a new ..data symlink over the old one."""
    real = os.path.join(d, f"..{gen}")
    for path, data in files.items():
        os.makedirs(os.path.dirname(os.path.join(real, path)), exist_ok=True)
        open(os.path.join(real, path), "wb").write(data)
    tmp = os.path.join(d, "..data_tmp")
    os.symlink(f"..{gen}", tmp)
    os.rename(tmp, os.path.join(d, "..data"))
    for top in {p.split("/")[0] for p in files}:
        link = os.path.join(d, top)
        if not os.path.islink(link):
            os.symlink(os.path.join("..data", top), link)


def t_hot_reload_projected(helm, binary, tmp):
    """The certificate reaches the server the way the chart mounts it (one
    projected volume, updated by swapping the ..data symlink): after a swap to
    a new CA and certificate the server serves the new one without a restart."""
    d = os.path.join(tmp, "projected")
    os.makedirs(d)
    renders = [helm.template("--set", "config.tls.checkIntervalSeconds=1") for _ in range(2)]
    pairs = []
    for r in renders:
        sec = r.one("Secret")["data"]
        pairs.append({k: base64.b64decode(sec[k]) for k in ("ca.crt", "tls.crt", "tls.key")})
    assert pairs[0]["ca.crt"] != pairs[1]["ca.crt"], "the two renders share a CA"
    for i, p in enumerate(pairs):
        open(os.path.join(tmp, f"ca-{i}.crt"), "wb").write(p["ca.crt"])
    cfg = renders[0].one("ConfigMap")["data"]["config.yaml"].replace("/etc/distenv/", d + "/")
    atomic_write(d, {"config.yaml": cfg.encode(), "tls/tls.crt": pairs[0]["tls.crt"],
                     "tls/tls.key": pairs[0]["tls.key"]}, "gen1")
    port = free_port()
    log = open(os.path.join(tmp, "reload.log"), "w")
    open(os.path.join(tmp, "resolv.conf"), "w").write("nameserver 127.0.0.53\n")  # not the machine's
    proc = subprocess.Popen([binary, "serve", "--config", os.path.join(d, "config.yaml"), "--no-lookups",
                             "--listen", f"127.0.0.1:{port}", "--probe-listen", f"127.0.0.1:{free_port()}"],
                            stdout=log, stderr=log,
                            env=dict(os.environ, DISTENV_RESOLV_CONF=os.path.join(tmp, "resolv.conf")))
    host = f"{RELEASE}.{NS}.svc"

    def served_by(i):
        return subprocess.run(["curl", "-fsS", "--max-time", "3", "--cacert", os.path.join(tmp, f"ca-{i}.crt"),
                               "--resolve", f"{host}:{port}:127.0.0.1", f"https://{host}:{port}/healthz"],
                              capture_output=True).returncode == 0

    def wait(i, tries):
        for _ in range(tries):
            if proc.poll() is not None:
                raise AssertionError("serve exited: " + open(os.path.join(tmp, "reload.log")).read()[-600:])
            if served_by(i):
                return True
            time.sleep(0.25)
        return False
    try:
        assert wait(0, 80), "first certificate not served"
        assert not served_by(1), "second CA trusted before the swap"
        atomic_write(d, {"config.yaml": cfg.encode(), "tls/tls.crt": pairs[1]["tls.crt"],
                         "tls/tls.key": pairs[1]["tls.key"]}, "gen2")
        shutil.rmtree(os.path.join(d, "..gen1"))  # as the kubelet removes the old generation
        assert wait(1, 80), "new certificate not served 20 s after the ..data swap"
        assert not served_by(0), "old certificate still served after the swap"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def doc_block(name, path=os.path.join(ROOT, "docs", "install.md")):
    """The lines of the fenced block that follows `<!-- chart-install: NAME ...-->`
    in docs/install.md (test/chart/install.sh runs them as written)."""
    lines = open(path).read().splitlines()
    marks = [i for i, l in enumerate(lines) if re.fullmatch(rf"<!-- chart-install: {re.escape(name)}( .*)? -->", l)]
    assert len(marks) == 1, f"{path}: {len(marks)} blocks marked chart-install: {name}"
    i = marks[0] + 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    assert i < len(lines) and lines[i] == "```sh", f"{path}: no ```sh block after chart-install: {name}"
    end = lines.index("```", i + 1)
    return lines[i + 1:end]


def header_commands(path):
    """The indented command lines of a deploy/ manifest's leading comment."""
    out = []
    for l in open(path):
        if not l.startswith("#"):
            break
        m = re.match(r"#   (.*)", l.rstrip("\n"))
        if m:
            out.append(m.group(1))
    return out


def t_manifests():
    r = subprocess.run(["bash", os.path.join(ROOT, "scripts", "render-manifests.sh"), "--check"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    docs = [d for d in yaml.safe_load_all(open(os.path.join(ROOT, "deploy", "distenv.yaml"))) if d]
    eq(docs[0]["kind"], "Namespace", "first object of deploy/distenv.yaml")
    eq(docs[0]["metadata"]["name"], "distenv", "namespace")
    kinds = sorted(d["kind"] for d in docs)
    assert "Secret" not in kinds, "deploy/distenv.yaml contains a Secret (private key in git)"
    for d in docs[1:]:
        if d["kind"] not in ("ClusterRole", "ClusterRoleBinding", "MutatingWebhookConfiguration",
                             "ValidatingWebhookConfiguration"):
            eq(d["metadata"]["namespace"], "distenv", f"namespace of {d['kind']}")
    # Neither webhook configuration has a CA: the steps patch it into both.
    hooks = [d for d in docs if d["kind"].endswith("WebhookConfiguration")]
    eq(sorted(d["kind"] for d in hooks), ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"],
       "webhook configurations of deploy/distenv.yaml")
    for d in hooks:
        for w in d["webhooks"]:
            assert "caBundle" not in w["clientConfig"], f"{d['kind']} has a caBundle in git"
    # The file's header gives the very steps of docs/install.md, which patch both.
    steps = doc_block("kubectl-apply")
    eq(header_commands(os.path.join(ROOT, "deploy", "distenv.yaml")), steps,
       "header of deploy/distenv.yaml vs docs/install.md's kubectl-apply block")
    patched = " ".join(steps)
    for kind in ("mutatingwebhookconfiguration", "validatingwebhookconfiguration"):
        assert kind in patched, f"docs/install.md's kubectl-apply steps never patch the {kind}"
    # cert-manager's CA injector fills in both configurations.
    cm = [d for d in yaml.safe_load_all(open(os.path.join(ROOT, "deploy", "distenv-cert-manager.yaml"))) if d]
    hooks = [d for d in cm if d["kind"].endswith("WebhookConfiguration")]
    eq(sorted(d["kind"] for d in hooks), ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"],
       "webhook configurations of deploy/distenv-cert-manager.yaml")
    certs = {d["metadata"]["name"] for d in cm if d["kind"] == "Certificate"}
    for d in hooks:
        src = d["metadata"].get("annotations", {}).get("cert-manager.io/inject-ca-from")
        eq(src, "distenv/distenv-tls", f"{d['kind']} cert-manager.io/inject-ca-from")
        assert src.split("/")[1] in certs, f"{src} names no Certificate of the file ({sorted(certs)})"
        for w in d["webhooks"]:
            assert "caBundle" not in w["clientConfig"], f"{d['kind']}: caBundle templated beside the injector"
    eq(header_commands(os.path.join(ROOT, "deploy", "distenv-cert-manager.yaml")), doc_block("cert-manager"),
       "header of deploy/distenv-cert-manager.yaml vs docs/install.md's cert-manager block")


def load_examples():
    d = os.path.join(ROOT, "deploy", "examples")
    out = {}
    for f in sorted(os.listdir(d)):
        if f.endswith(".yaml"):
            out[f] = [x for x in yaml.safe_load_all(open(os.path.join(d, f))) if x]
    return out


def example_workload(f, docs):
    """The one workload of an example and its pod templates (a LeaderWorkerSet
    has two: the leader's and the workers')."""
    workloads = [d for d in docs if d["kind"] in ("StatefulSet", "Job", "JobSet", "LeaderWorkerSet")]
    assert len(workloads) == 1, f"{f}: {len(workloads)} workloads"
    w = workloads[0]
    if w["kind"] == "JobSet":
        return w, [rj["template"]["spec"]["template"] for rj in w["spec"]["replicatedJobs"]]
    if w["kind"] == "LeaderWorkerSet":
        lwt = w["spec"]["leaderWorkerTemplate"]
        return w, [lwt["leaderTemplate"], lwt["workerTemplate"]]
    return w, [w["spec"]["template"]]


def t_rbac_doc(helm):
    """docs/install.md's RBAC table is what the chart's ClusterRole grants, and
    what both deploy/ manifests grant: one row per (group, resource, verb)."""
    text = open(os.path.join(ROOT, "docs", "install.md")).read()
    m = re.search(r"<!-- rbac: .*?-->\n(.*?)\n\n", text, re.S)
    assert m, "docs/install.md: no <!-- rbac: --> table"
    doc = set()
    for line in m.group(1).splitlines()[2:]:
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        group = "" if cells[0].startswith('""') else cells[0]
        doc.add((group, cells[1], cells[2]))

    def granted(objs, what):
        roles = [o for o in objs if o["kind"] in ("ClusterRole", "Role")]
        eq([o["kind"] for o in roles], ["ClusterRole"], f"{what}: roles")
        got = set()
        for rule in roles[0]["rules"]:
            for g in rule["apiGroups"]:
                for res in rule["resources"]:
                    for v in rule["verbs"]:
                        got.add((g, res, v))
        return got

    eq(sorted(doc), sorted(granted(helm.template().objs, "helm template")),
       "docs/install.md's RBAC table vs the chart")
    for f in ("distenv.yaml", "distenv-cert-manager.yaml"):
        objs = [o for o in yaml.safe_load_all(open(os.path.join(ROOT, "deploy", f))) if o]
        eq(sorted(doc), sorted(granted(objs, f)), f"docs/install.md's RBAC table vs deploy/{f}")


def t_examples():
    ex = load_examples()
    eq(sorted(ex), sorted(expected_examples()), "examples (each with its expected env)")
    eq(sorted(ex), ["indexed-job.yaml", "jax.yaml", "lightning-statefulset.yaml",
                    "pytorch-ddp-statefulset.yaml", "pytorch-jobset.yaml",
                    "sglang-leaderworkerset.yaml",
                    "tensorflow-multiworker.yaml", "torchrun-elastic.yaml",
                    "xgboost-indexed-job.yaml"], "examples")
    # Each example says what ran it (its header) and has its row in the user page.
    launchers = open(os.path.join(ROOT, "docs", "launchers.md")).read()
    for f in ex:
        text = open(os.path.join(ROOT, "deploy", "examples", f)).read()
        assert "\n# Tested: " in text, f"{f}: no '# Tested:' line in its header"
        assert f"| `{f}` |" in launchers, f"docs/launchers.md has no row for {f}"
    for f, docs in ex.items():
        services = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Service"}
        w, tpls = example_workload(f, docs)
        for tpl in tpls:
            eq(tpl["metadata"]["labels"].get("distenv.dev/inject"), "true", f"{f}: opt-in label")
        tpl = tpls[0]
        if w["kind"] == "LeaderWorkerSet":
            # LeaderWorkerSet makes the headless Service <lws> itself, with
            # publishNotReadyAddresses; both templates must agree on distenv's
            # annotations, or the leader and the workers form different worlds.
            eq(w["apiVersion"], "leaderworkerset.x-k8s.io/v1", f"{f}: apiVersion")
            assert not services, f"{f}: LeaderWorkerSet makes its own Service"
            annos = [{k: v for k, v in t["metadata"].get("annotations", {}).items()
                      if k.startswith("distenv.dev/")} for t in tpls]
            eq(annos[1], annos[0], f"{f}: distenv.dev/ annotations of leader and workers")
            assert w["spec"]["leaderWorkerTemplate"]["size"] >= 2, f"{f}: group size"
        elif w["kind"] == "JobSet":
            # The JobSet controller makes the headless Service (the subdomain,
            # else the JobSet's name) with publishNotReadyAddresses; every
            # replicated Job must be Indexed with all its pods at once.
            eq(w["apiVersion"], "jobset.x-k8s.io/v1alpha2", f"{f}: apiVersion")
            assert not services, f"{f}: JobSet makes its own Service"
            for rj in w["spec"]["replicatedJobs"]:
                js = rj["template"]["spec"]
                eq(js.get("completionMode"), "Indexed", f"{f}: {rj['name']}: completionMode")
                eq(js["parallelism"], js["completions"], f"{f}: {rj['name']}: parallelism")
        else:
            if w["kind"] == "StatefulSet":
                svc_name = w["spec"]["serviceName"]
                eq(w["spec"].get("podManagementPolicy"), "Parallel", f"{f}: podManagementPolicy")
            else:
                eq(w["spec"].get("completionMode"), "Indexed", f"{f}: completionMode")
                eq(w["spec"]["parallelism"], w["spec"]["completions"], f"{f}: parallelism")
                svc_name = tpl["spec"].get("subdomain") or tpl["metadata"]["annotations"]["distenv.dev/service"]
            svc = services.get(svc_name)
            assert svc, f"{f}: no Service {svc_name}"
            eq(svc["spec"].get("clusterIP"), "None", f"{f}: headless")
            eq(svc["spec"].get("publishNotReadyAddresses"), True, f"{f}: publishNotReadyAddresses")
            for k, v in svc["spec"]["selector"].items():
                eq(tpl["metadata"]["labels"].get(k), v, f"{f}: Service selects the pods")
            port = int(tpl["metadata"].get("annotations", {}).get("distenv.dev/port", 29500))
            assert port in [p["port"] for p in svc["spec"]["ports"]], f"{f}: Service lacks port {port}"
        cms = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ConfigMap"}
        for t in tpls:
            for v in t["spec"].get("volumes", []):
                if "configMap" in v:
                    assert v["configMap"]["name"] in cms, f"{f}: ConfigMap {v['configMap']['name']} missing"
                    for name, src in cms[v["configMap"]["name"]]["data"].items():
                        if name.endswith(".py"):
                            compile(src, f"{f}:{name}", "exec")


# What `render` must print for each example (namespace "examples"): every
# variable distenv injects into rank r's pods, "{r}" standing for the rank, a
# function of the rank where the value is not the rank itself, and None for a
# variable that must be absent. `render` must give exactly the named variables;
# install.sh checks the same against the pods the real controllers create
# (where the pods carry env of their own too).
def expected_examples(ns="examples"):
    def fq(h, s):
        return f"{h}.{s}.{ns}.svc.cluster.local"

    def tf_config(hosts, port):
        workers = json.dumps([f"{h}:{port}" for h in hosts], separators=(",", ":"))
        return '{"cluster":{"worker":' + workers + '},"task":{"type":"worker","index":{r}}}'

    def pytorch(addr, world, nproc, port=29500, one_process=False):
        """The pytorch row of the README's "What a pod gets" (not elastic):
        RANK/WORLD_SIZE/NODE_RANK/NNODES count pods; LOCAL_RANK and
        LOCAL_WORLD_SIZE only in a one-process pod."""
        return {
            "MASTER_ADDR": addr, "MASTER_PORT": str(port), "RANK": "{r}", "WORLD_SIZE": str(world),
            "NODE_RANK": "{r}", "NNODES": str(world),
            "PET_MASTER_ADDR": addr, "PET_MASTER_PORT": str(port), "PET_NNODES": str(world),
            "PET_NODE_RANK": "{r}", "PET_NPROC_PER_NODE": str(nproc),
            "LOCAL_RANK": "0" if one_process else None,
            "LOCAL_WORLD_SIZE": "1" if one_process else None,
        }

    # frameworks a pod did not ask for inject nothing
    none = {k: None for k in ("MASTER_ADDR", "RANK", "NODE_RANK", "NNODES", "LOCAL_RANK", "TF_CONFIG",
                              "JAX_COORDINATOR_ADDRESS", "DMLC_TRACKER_URI", "DMLC_NUM_WORKER",
                              "PADDLE_MASTER", "PADDLE_RANK")}

    def only(env):
        return {**none, **env}

    return {
        # 2 pods x 2 GPUs: torchrun spawns the processes, no LOCAL_RANK
        "pytorch-ddp-statefulset.yaml": (2, only(pytorch(fq("ddp-0", "ddp"), 2, 2))),
        # CPU pods without distenv.dev/nproc-per-node are not one-process pods;
        # no frameworks annotation: the default pytorch,tensorflow
        "indexed-job.yaml": (4, only({
            **pytorch(fq("ddp-job-0", "ddp-job"), 4, 1),
            "TF_CONFIG": tf_config([fq(f"ddp-job-{i}", "ddp-job") for i in range(4)], 29500)})),
        "tensorflow-multiworker.yaml": (3, only({
            "TF_CONFIG": tf_config([fq(f"tf-{i}", "tf") for i in range(3)], 2222)})),
        "jax.yaml": (2, only({
            "JAX_COORDINATOR_ADDRESS": fq("jax-0", "jax") + ":1234", "JAX_NUM_PROCESSES": "2",
            "JAX_PROCESS_ID": "{r}"})),
        # elastic: torchrun assigns node ranks and local ranks
        "torchrun-elastic.yaml": (3, only({
            "MASTER_ADDR": fq("elastic-0", "elastic"), "MASTER_PORT": "29500", "RANK": "{r}",
            "WORLD_SIZE": "3", "PET_MASTER_ADDR": fq("elastic-0", "elastic"), "PET_MASTER_PORT": "29500",
            "PET_NNODES": "2:4", "PET_NODE_RANK": "{r}", "PET_NPROC_PER_NODE": "1",
            "PET_RDZV_BACKEND": "c10d", "PET_RDZV_ENDPOINT": fq("elastic-0", "elastic") + ":29500",
            "PET_RDZV_ID": f"{ns}-elastic", "PET_RDZV_CONF": lambda r: f"is_host={int(r == 0)}",
            "PET_MAX_RESTARTS": "3", "NODE_RANK": None, "NNODES": None, "LOCAL_WORLD_SIZE": None})),
        # Lightning: node rank from NODE_RANK; 2 processes per pod, which it
        # spawns itself only when LOCAL_RANK is absent
        "lightning-statefulset.yaml": (2, only(pytorch(fq("lightning-0", "lightning"), 2, 2))),
        # XGBoost: tracker on rank 0, one worker per pod
        "xgboost-indexed-job.yaml": (3, only({
            "DMLC_TRACKER_URI": fq("xgb-0", "xgb"), "DMLC_TRACKER_PORT": "9091", "DMLC_TASK_ID": "{r}",
            "DMLC_NUM_WORKER": "3"})),
        # A JobSet of 2 Jobs x 2 CPU pods: one world of every pod, rank 0 the
        # first pod of the first Job; frameworks: pytorch alone
        "pytorch-jobset.yaml": (4, only(pytorch(fq("ddp-js-workers-0-0", "ddp-js"), 4, 1))),
        # SGLang on one LeaderWorkerSet group of 2 pods x 8 GPUs: the leader is
        # rank 0 and MASTER_ADDR; NNODES is the group size
        "sglang-leaderworkerset.yaml": (2, only(pytorch(fq("sglang-0", "sglang"), 2, 8, port=20000))),
    }


def expected_value(v, rank):
    return v(rank) if callable(v) else v.replace("{r}", str(rank))


def env_matches(env, want, rank, what, exact=False):
    """env: name -> value of one pod. want: name -> expected (None: absent).
    exact: env holds only injected variables, and must hold nothing else."""
    for k, v in want.items():
        if v is None:
            assert k not in env, f"{what}: {k} should not be set, got {env.get(k)!r}"
            continue
        v = expected_value(v, rank)
        if k == "TF_CONFIG" and k in env:
            eq(json.loads(env[k]), json.loads(v), f"{what}: TF_CONFIG")
        else:
            eq(env.get(k), v, f"{what}: {k}")
    if exact:
        extra = sorted(set(env) - {k for k, v in want.items() if v is not None})
        assert not extra, f"{what}: injected but not expected: {extra}"


def t_examples_render(binary):
    """`distenv-webhook render` (the /mutate code path, offline) on every
    example gives every rank exactly the documented env."""
    want = expected_examples()
    for f in sorted(load_examples()):
        assert f in want, f"{f}: no expected env in check.py expected_examples()"
        world, env_want = want[f]
        path = os.path.join(ROOT, "deploy", "examples", f)
        r = subprocess.run([binary, "render", "--namespace", "examples", "-o", "json", path],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, f"render {f}: {r.stderr}"
        out = json.loads(r.stdout)
        ranks = render_ranks(out)
        eq(len(ranks), world, f"{f}: ranks rendered")
        for rank, env in sorted(ranks.items()):
            env_matches(env, env_want, rank, f"{f} rank {rank}", exact=True)


def render_ranks(out):
    """Maps rank -> {name: value} from `render -o json`: a list with one entry
    per rank ({kind, namespace, workload, pod, rank, worldSize, containers, env})."""
    ranks = {}
    for p in out:
        assert int(p["rank"]) not in ranks, f"rank {p['rank']} twice"
        ranks[int(p["rank"])] = {e["name"]: e["value"] for e in p["env"]}
    return ranks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--helm", required=True)
    ap.add_argument("--binary", default="")
    ap.add_argument("--promtool", default=shutil.which("promtool") or "")
    a = ap.parse_args()
    helm = Helm(a.helm)
    tmp = tempfile.mkdtemp(prefix="distenv-chart-")
    try:
        check("helm lint --strict (each certificate mode, hostNetwork, monitoring on)")(t_lint, helm)
        check("Chart.yaml: appVersion equals VERSION, license annotation, description")(t_chart_version)
        check("selfSigned: objects, Deployment hardening, probes, RBAC, webhook fields")(t_self_signed, helm)
        check("selfSigned: certificate verifies against caBundle, SANs, key pair, validity")(
            t_self_signed_cert, helm, tmp)
        check("certManager: Issuers, Certificates, CA injection into both webhook configurations, no caBundle")(t_cert_manager, helm)
        check("existingSecret: mounted Secret, caBundle from PEM / base64 / none")(t_existing_secret, helm, tmp)
        check("webhook.url replaces the Service in clientConfig")(t_url_mode, helm)
        check("docs/install.md's RBAC table is the ClusterRole of the chart and of deploy/")(t_rbac_doc, helm)
        check("escape hatches: extra args/env/volumes, priorityClassName, NetworkPolicy, PDB "
              "eviction policy")(t_escape_hatches, helm)
        check("install traps: default namespace refused, existingSecret default name, issuer "
              "group, runAsUser=null and securityContext overrides")(t_install_traps, helm)
        check("hostNetwork: port, dnsPolicy, rollout, port < 1024 refused")(t_host_network, helm)
        check("containerPort 443: unprivileged-port sysctl")(t_low_port, helm)
        check("Kubernetes floor: Chart.yaml kubeVersion >= 1.30 (matchConditions GA) renders at the floor, "
              "is refused one minor below it, and README.md and docs/install.md state it")(t_kube_floor, helm)
        check("preStop sleep: switch, grace period")(t_prestop_versions, helm)
        check("checksum/config changes with the config only")(t_checksum, helm)
        check("PDB, RBAC, token, namespaces, failurePolicy, checkConfig, image toggles")(t_toggles, helm)
        check("ServiceMonitor (optional) scrapes /metrics over HTTPS with the CA")(t_service_monitor, helm)
        check("PrometheusRule (optional): alerts, runbooks in docs/operations.md, thresholds as values")(
            t_prometheus_rule, helm)
        check("promtool check rules + promtool test rules (test/chart/prometheusrule.test.yaml)")(
            t_promtool, helm, a.promtool, tmp)
        check("rules use only metrics.txt names")(t_rule_metric_names, helm)
        check("Grafana dashboard ConfigMap (optional): JSON, ${datasource} everywhere, metrics.txt names")(
            t_grafana_dashboard, helm)
        check("helm test Pod: hook, the webhook's image, restricted profile, not a replica")(t_helm_test_hook, helm)
        check("charts/distenv/README.md is generated from values.yaml; helm show readme")(t_chart_readme, helm)
        check("NOTES.txt tells how to label a workload")(t_notes, helm)
        for args, needle in REJECT:
            check(f"rejected: {' '.join(args[1::2])}")(t_reject, helm, args, needle)
        check("deploy/ manifests are up to date, hold no Secret, and their headers give docs/install.md's steps "
              "(CA into both webhook configurations; cert-manager's injector annotated on both)")(t_manifests)
        check("deploy/examples: opt-in label, headless Service, Indexed, scripts compile")(t_examples)
        binary = a.binary
        if binary and os.path.exists(binary):
            check("files/opt-in.cel, validate-rules.yaml and rbac-rules.yaml are what "
                  "`distenv-webhook chart-file` makes from the kind table")(t_chart_files, binary)
            check("check-config accepts the rendered config.yaml (3 variants)")(t_check_config, helm, binary, tmp)
            check("serve with the chart's config and selfSigned certificate: probes, /metrics, /mutate over HTTPS, "
                  "the helm test Pod's command")(
                t_serve_chart_cert, helm, binary, tmp)
            check("hot reload: a ..data swap of the projected volume serves the new certificate")(
                t_hot_reload_projected, helm, binary, tmp)
            check("render of each deploy/examples manifest gives the documented env")(t_examples_render, binary)
        else:
            results["fail"] += 1
            print(f"FAIL - distenv-webhook binary not found ({binary or 'not given'}): "
                  "config, serve and render checks not run")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"chart: {results['pass']} passed, {results['fail']} failed")
    return 0 if results["fail"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
