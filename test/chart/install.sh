#!/usr/bin/env bash
# Chart tier against a real control plane (test/e2e/cluster.sh: etcd,
# kube-apiserver, kube-controller-manager on loopback; no kubelet, so pods stay
# Pending with their admitted spec):
#   - helm install (selfSigned) into a namespace that enforces the "restricted"
#     Pod Security Standard: every object is accepted, and the webhook's own
#     pods are created by the ReplicaSet controller;
#   - the webhook configuration the chart made, with clientConfig.url pointed at
#     a ./distenv-webhook running on loopback with the chart's ConfigMap, the
#     chart's certificate and the chart's ServiceAccount token (so its RBAC is
#     what the look-ups get), mutates a labelled StatefulSet's pods;
#   - `helm test` creates the chart's test hook Pod, admitted as restricted (it
#     never runs here), and the Pod's command passes run from the host;
#   - excluded namespaces are never sent; an unsupported opted-in pod is denied;
#   - helm upgrade keeps the selfSigned CA and caBundle, and rolls the pods on a
#     config change;
#   - every deploy/examples manifest is applied and its pods get the expected env
#     (a LeaderWorkerSet example only where its controller runs, see below);
#   - helm uninstall cleans up, and deploy/distenv.yaml applied with the steps of
#     docs/install.md is accepted and routes opted-in pods to its Service.
# Ends with "chart-install: N passed, N failed".
#   test/chart/install.sh [--binary PATH]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
binary=""
if [[ "${1:-}" == "--binary" ]]; then
	binary=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
fi
bin=$(bash scripts/deps-image.sh helm)
helm=${DISTENV_HELM:-$bin/helm} # DISTENV_HELM: try another helm client
if [[ -z "$binary" ]]; then
	binary=$root/distenv-webhook
	make -s distenv-webhook >&2 # a no-op when up to date
fi
py=/usr/bin/python3
t0=$(date +%s)

pass=0
fail=0
ok() {
	pass=$((pass + 1))
	echo "ok   - $*"
}
nok() {
	fail=$((fail + 1))
	echo "FAIL - $*"
}

work=$(mktemp -d "${TMPDIR:-/tmp}/distenv-chart-install.XXXXXX")
webhook_pid=""
cluster_dir=""
cleanup() {
	if [[ -n "$webhook_pid" ]] && kill -0 "$webhook_pid" 2>/dev/null; then
		kill -TERM "$webhook_pid" 2>/dev/null || true
		# The drain keeps the API server's idle keep-alive connections up to
		# server.drainTimeoutSeconds (25 s in the chart's config), then exits.
		for _ in $(seq 1 300); do kill -0 "$webhook_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$webhook_pid" 2>/dev/null || true
	fi
	if [[ -n "$cluster_dir" ]]; then
		test/e2e/cluster.sh down "$cluster_dir" || true
	fi
	if [[ "${DISTENV_KEEP:-0}" == 1 ]]; then
		echo "chart-install: kept $work" >&2
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

# The control plane, in a directory of our own (its processes are stopped by `down`).
cluster_dir="$work/cluster"
if ! cluster_env=$(test/e2e/cluster.sh up "$cluster_dir"); then
	nok "the e2e control plane did not start (test/e2e/cluster.sh up)"
	echo "chart-install: $pass passed, $fail failed"
	exit 1
fi
eval "$cluster_env"
kc() { kubectl --request-timeout=30s "$@"; }

# wait_for SECONDS CMD...: retry CMD every 0.5 s until it succeeds.
wait_for() {
	local secs=$1 i
	shift
	for ((i = 0; i < secs * 2; i++)); do
		if "$@" >/dev/null 2>&1; then return 0; fi
		sleep 0.5
	done
	return 1
}
pod_count() { # NS SELECTOR N: true when exactly N pods match
	[[ $(kc -n "$1" get pods -l "$2" -o name 2>/dev/null | wc -l) -eq $3 ]]
}

ns=distenv
port=$($py -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
url="https://127.0.0.1:$port/mutate"

# --- install ---------------------------------------------------------------------
kc create namespace "$ns" >/dev/null
kc label namespace "$ns" pod-security.kubernetes.io/enforce=restricted \
	pod-security.kubernetes.io/enforce-version=latest >/dev/null
install_args=(--namespace "$ns" --set webhook.url="$url" --set "certificates.extraIPAddresses={127.0.0.1}")
if "$helm" install distenv charts/distenv "${install_args[@]}" >"$work/install.log" 2>&1; then
	ok "helm install (selfSigned, clientConfig.url $url) into a restricted namespace"
else
	nok "helm install: $(tail -n 20 "$work/install.log")"
	echo "chart-install: $pass passed, $fail failed"
	exit 1
fi

# Every object of the release exists in the API server.
"$helm" get manifest distenv -n "$ns" >"$work/manifest.yaml"
if out=$($py - "$work/manifest.yaml" <<'EOF' 2>&1
import subprocess, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
missing = []
for d in docs:
    args = ["kubectl", "get", d["kind"], d["metadata"]["name"], "-o", "name"]
    if d["metadata"].get("namespace"):
        args += ["-n", d["metadata"]["namespace"]]
    if subprocess.run(args, capture_output=True).returncode != 0:
        missing.append(f"{d['kind']}/{d['metadata']['name']}")
if missing:
    sys.exit("missing: " + " ".join(missing))
print(f"{len(docs)} objects: " + " ".join(sorted(d["kind"] for d in docs)))
EOF
); then
	ok "every object of the release exists in the API server ($out)"
else
	nok "release objects: $out"
fi

# The webhook's own pods pass the restricted Pod Security admission.
if wait_for 60 pod_count "$ns" app.kubernetes.io/name=distenv 2; then
	ok "the ReplicaSet controller created the 2 webhook pods under pod-security enforce=restricted"
else
	nok "webhook pods not created: $(kc -n "$ns" get events --field-selector reason=FailedCreate -o jsonpath='{.items[*].message}' | head -c 600)"
fi

# --- the local server with the chart's config, certificate and ServiceAccount ---
mkdir -p "$work/webhook"
kc -n "$ns" get secret distenv-tls -o json >"$work/secret.json"
kc get mutatingwebhookconfiguration distenv -o json >"$work/mwc-1.json"
$py - "$work" <<'EOF'
import base64, json, os, sys
w = sys.argv[1]
sec = json.load(open(f"{w}/secret.json"))["data"]
for k in ("ca.crt", "tls.crt", "tls.key"):
    open(f"{w}/webhook/{k}", "wb").write(base64.b64decode(sec[k]))
os.chmod(f"{w}/webhook/tls.key", 0o600)
EOF
kc -n "$ns" get configmap distenv -o jsonpath='{.data.config\.yaml}' |
	sed "s#/etc/distenv/tls/#$work/webhook/#" >"$work/webhook/config.yaml"
token=$(kc -n "$ns" create token distenv --duration=1h)
cat >"$work/webhook/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: $DISTENV_E2E_SERVER
    certificate-authority: $DISTENV_E2E_CA
contexts:
- name: sa
  context: {cluster: e2e, user: sa, namespace: $ns}
current-context: sa
users:
- name: sa
  user:
    token: $token
EOF
chmod 600 "$work/webhook/kubeconfig"
# The chart sets no clusterDomain; this control plane has no node and so no pod
# resolv.conf: the server reads a host's (serve's test hook, not this machine's,
# which inside a CI pod would name that cluster's domain) and falls back to
# cluster.local, which the checks below expect.
printf 'nameserver 127.0.0.53\nsearch example.internal\n' >"$work/webhook/resolv.conf"
DISTENV_RESOLV_CONF="$work/webhook/resolv.conf" "$binary" serve --config "$work/webhook/config.yaml" \
	--listen "127.0.0.1:$port" --kubeconfig "$work/webhook/kubeconfig" >"$work/webhook.log" 2>&1 &
webhook_pid=$!
echo "$webhook_pid" >"$cluster_dir/pids/distenv-webhook.pid"
if wait_for 20 curl -fsS --max-time 2 --cacert "$work/webhook/ca.crt" "https://127.0.0.1:$port/healthz"; then
	ok "./distenv-webhook serves the chart's certificate (verified with the chart's CA) on 127.0.0.1:$port"
else
	nok "local webhook did not come up: $(tail -n 5 "$work/webhook.log")"
fi
if grep -q '"event":"cluster_domain","domain":"cluster.local","source":"default"' "$work/webhook.log" &&
	grep -q '"event":"cluster_domain_default"' "$work/webhook.log" &&
	! grep -q '^clusterDomain:' "$work/webhook/config.yaml"; then
	ok "the chart's config sets no clusterDomain; without a svc.<domain> in resolv.conf the server says it uses cluster.local (default)"
else
	nok "cluster domain at start: $(grep -h cluster_domain "$work/webhook.log" "$work/webhook/config.yaml" | head -c 600)"
fi

# --- helm test: no kubelet runs the test Pod here, so check what can be checked --
# (1) `helm test` creates the chart's test hook Pod and the API server admits it
# in the namespace that enforces the restricted profile (it then stays Pending,
# so helm test itself times out); (2) the Pod's own command (args and env from
# the stored hook) passes from the host against the local server, which stands
# in for the Service.
"$helm" get hooks distenv -n "$ns" >"$work/hooks.yaml"
"$helm" test distenv -n "$ns" --timeout 10s >"$work/helm-test.log" 2>&1 || true
if grep -qi 'forbidden\|violates PodSecurity' "$work/helm-test.log"; then
	nok "helm test: the test Pod was refused: $(head -c 600 "$work/helm-test.log")"
elif [[ $(kc -n "$ns" get pod distenv-test -o jsonpath='{.metadata.annotations.helm\.sh/hook}' 2>/dev/null) == test ]]; then
	ok "helm test created the test hook Pod distenv-test, admitted under pod-security enforce=restricted (not run: no kubelet)"
else
	nok "helm test: no test Pod: $(head -c 600 "$work/helm-test.log")"
fi
kc -n "$ns" delete pod distenv-test --ignore-not-found --wait=false >/dev/null 2>&1 || true
if out=$($py - "$work/hooks.yaml" "$binary" "$port" "$work/webhook/ca.crt" <<'EOF' 2>&1
import subprocess, sys, yaml
hooks = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
(pod,) = [d for d in hooks if d["kind"] == "Pod" and d["metadata"]["annotations"].get("helm.sh/hook") == "test"]
(c,) = pod["spec"]["containers"]
args = list(c["args"])
url = args[args.index("--url") + 1]
host = url.split("//")[1].rsplit(":", 1)[0]
args[args.index("--url") + 1] = "https://%s:%s" % (host, sys.argv[3])
args[args.index("--ca-file") + 1] = sys.argv[4]  # the Secret's ca.crt, which the Pod mounts
r = subprocess.run([sys.argv[2], *args, "--connect-to", "127.0.0.1"], capture_output=True,
                   text=True, timeout=120)
assert r.returncode == 0, f"rc {r.returncode}: {(r.stdout + r.stderr).strip()[-500:]}"
print(f"selftest --url {url} through 127.0.0.1: {r.stdout.count('selftest: ok')} checks ok")
EOF
); then
	ok "the test Pod's command passes from the host against the local server ($out)"
else
	nok "the test Pod's command: $out"
fi

# The ServiceAccount the look-ups run as may get statefulsets, jobs, jobsets and
# services (the /validate checks), nothing more.
sa="system:serviceaccount:$ns:distenv"
can=""
for q in "get statefulsets.apps" "get jobs.batch" "get services" \
	"list networkpolicies.networking.k8s.io" "get networkpolicies.networking.k8s.io" \
	"watch networkpolicies.networking.k8s.io" \
	"list statefulsets.apps" "watch jobs.batch" "list services" \
	"get pods" "get secrets" "create statefulsets.apps"; do
	can+="$q=$(kc auth can-i $q --as "$sa" --all-namespaces 2>/dev/null || true) "
done
# The CRDs are not installed here, so kubectl cannot map their resources: ask
# with a SubjectAccessReview, which names the group itself.
sar() { # VERB GROUP RESOURCE
	kc create -o jsonpath='{.status.allowed}' -f - 2>/dev/null <<EOF || true
{"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": {
 "user": "$sa", "groups": ["system:serviceaccounts", "system:serviceaccounts:$ns", "system:authenticated"],
 "resourceAttributes": {"verb": "$1", "group": "$2", "resource": "$3", "namespace": "team-a"}}}
EOF
}
can+="get jobsets=$(sar get jobset.x-k8s.io jobsets) list jobsets=$(sar list jobset.x-k8s.io jobsets) "
can+="get leaderworkersets=$(sar get leaderworkerset.x-k8s.io leaderworkersets) "
if [[ "$can" == "get statefulsets.apps=yes get jobs.batch=yes get services=yes list networkpolicies.networking.k8s.io=yes get networkpolicies.networking.k8s.io=no watch networkpolicies.networking.k8s.io=no list statefulsets.apps=no watch jobs.batch=no list services=no get pods=no get secrets=no create statefulsets.apps=no get jobsets=true list jobsets=false get leaderworkersets=false " ]]; then
	ok "RBAC: the webhook's ServiceAccount can get statefulsets, jobs, jobsets and services and list networkpolicies, and nothing else of them, leaderworkersets, pods or secrets"
else
	nok "RBAC of $sa: $can"
fi

# --- a labelled StatefulSet, an unlabelled one, excluded namespaces, a denial -----
kc create namespace team-a >/dev/null
cat >"$work/sts.yaml" <<'EOF'
apiVersion: v1
kind: Service
metadata: {name: trainer}
spec:
  clusterIP: None
  publishNotReadyAddresses: true
  selector: {app: trainer}
  ports: [{name: rdzv, port: 29500}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: trainer}
spec:
  serviceName: trainer
  replicas: 3
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: trainer}}
  template:
    metadata:
      labels: {app: trainer, distenv.dev/inject: "true"}
    spec:
      containers:
        - name: train
          image: trainer:1
          env: [{name: RANK, value: "user-set"}, {name: EXTRA, value: "$(MASTER_ADDR)"}]
          resources: {limits: {nvidia.com/gpu: 4}}
        - name: sidecar
          image: sidecar:1
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: plain}
spec:
  serviceName: trainer
  replicas: 1
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: plain}}
  template:
    metadata:
      labels: {app: plain}
    spec:
      containers: [{name: c, image: plain:1}]
EOF
kc -n team-a apply -f "$work/sts.yaml" >/dev/null
if wait_for 60 pod_count team-a app=trainer 3 && wait_for 30 pod_count team-a app=plain 1; then
	kc -n team-a get pods -o json >"$work/team-a.json"
	if out=$($py - "$work/team-a.json" <<'EOF' 2>&1
import json, sys
pods = {p["metadata"]["name"]: p for p in json.load(open(sys.argv[1]))["items"]}
fq = "trainer-0.trainer.team-a.svc.cluster.local"
for r in range(3):
    p = pods[f"trainer-{r}"]
    assert "distenv.dev/injected" in p["metadata"].get("annotations", {}), f"trainer-{r} not marked"
    for c in p["spec"]["containers"]:
        env = [(e["name"], e.get("value")) for e in c.get("env", [])]
        names = [n for n, _ in env]
        assert len(names) == len(set(names)), f"{c['name']}: duplicate env {names}"
        d = dict(env)
        want = {"MASTER_ADDR": fq, "MASTER_PORT": "29500", "WORLD_SIZE": "3",
                "PET_NNODES": "3", "PET_NODE_RANK": str(r), "PET_MASTER_ADDR": fq,
                "PET_NPROC_PER_NODE": "4"}
        for k, v in want.items():
            assert d.get(k) == v, f"trainer-{r}/{c['name']} {k}={d.get(k)!r}, want {v!r}"
        tf = json.loads(d["TF_CONFIG"])
        assert tf["task"] == {"type": "worker", "index": r}, tf
        assert tf["cluster"]["worker"] == [f"trainer-{i}.trainer.team-a.svc.cluster.local:29500" for i in range(3)], tf
        if c["name"] == "train":
            # The user's RANK wins; injected entries precede the user's own.
            assert d["RANK"] == "user-set", d["RANK"]
            assert names.index("MASTER_ADDR") < names.index("EXTRA"), names
        else:
            assert d["RANK"] == str(r), d.get("RANK")
plain = pods["plain-0"]
assert all("env" not in c for c in plain["spec"]["containers"]), "unlabelled pod mutated"
assert "distenv.dev/injected" not in plain["metadata"].get("annotations", {}), "unlabelled pod marked"
print("ok")
EOF
	); then
		ok "labelled StatefulSet: 3 pods mutated (rank, WORLD_SIZE=3 from the API via the chart's RBAC, nproc 4, user's RANK kept); unlabelled untouched"
	else
		nok "StatefulSet pods: $out"
	fi
else
	nok "StatefulSet pods not created: $(kc -n team-a get events -o jsonpath='{range .items[*]}{.message}{"\n"}{end}' | tail -n 5)"
fi

# Compliant with the restricted profile, which the release namespace enforces.
bare='{"apiVersion":"v1","kind":"Pod","metadata":{"name":"bare","labels":{"distenv.dev/inject":"true"}},"spec":{"securityContext":{"runAsNonRoot":true,"runAsUser":1000,"seccompProfile":{"type":"RuntimeDefault"}},"containers":[{"name":"c","image":"x","securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]}}}]}}'
if out=$(kc -n team-a create -f - <<<"$bare" 2>&1); then
	nok "a labelled bare pod was admitted: $out"
elif grep -q 'distenv:' <<<"$out"; then
	ok "a labelled bare pod is denied with the webhook's message ($(grep -o 'distenv:.*' <<<"$out" | head -c 100))"
else
	nok "bare pod failed for another reason: $out"
fi
excluded_ok=1
for xns in kube-system "$ns"; do
	if ! kc -n "$xns" create -f - <<<"$bare" >"$work/bare-$xns.log" 2>&1; then
		excluded_ok=0
		nok "labelled pod in excluded namespace $xns: $(cat "$work/bare-$xns.log")"
	fi
done
((excluded_ok)) && ok "labelled pods in kube-system and the release namespace are never sent to the webhook"

# --- helm upgrade keeps the CA; a config change rolls the pods -------------------
ca1=$($py -c 'import json,sys; print(json.load(open(sys.argv[1]))["webhooks"][0]["clientConfig"]["caBundle"])' "$work/mwc-1.json")
sum1=$(kc -n "$ns" get deployment distenv -o jsonpath='{.spec.template.metadata.annotations.checksum/config}')
key1=$(kc -n "$ns" get secret distenv-tls -o jsonpath='{.data.tls\.key}')
if "$helm" upgrade distenv charts/distenv "${install_args[@]}" --set config.logging.level=debug \
	--set containerPort=443 >"$work/upgrade.log" 2>&1; then
	ca2=$(kc get mutatingwebhookconfiguration distenv -o jsonpath='{.webhooks[0].clientConfig.caBundle}')
	sec2=$(kc -n "$ns" get secret distenv-tls -o jsonpath='{.data.ca\.crt}')
	key2=$(kc -n "$ns" get secret distenv-tls -o jsonpath='{.data.tls\.key}')
	sum2=$(kc -n "$ns" get deployment distenv -o jsonpath='{.spec.template.metadata.annotations.checksum/config}')
	if [[ -n "$ca1" && "$ca1" == "$ca2" && "$ca2" == "$sec2" && "$key1" == "$key2" ]]; then
		ok "helm upgrade keeps the selfSigned CA, key and caBundle (lookup of the existing Secret)"
	else
		nok "helm upgrade changed the certificate (caBundle same: $([[ "$ca1" == "$ca2" ]] && echo yes || echo no), key same: $([[ "$key1" == "$key2" ]] && echo yes || echo no))"
	fi
	new_pods() { # true when a pod of the ReplicaSet with the new checksum exists
		[[ -n $(kc -n "$ns" get pods -l app.kubernetes.io/name=distenv -o json | $py -c '
import json, sys
pods = json.load(sys.stdin)["items"]
print(" ".join(p["metadata"]["name"] for p in pods
               if p["metadata"]["annotations"].get("checksum/config") == sys.argv[1]))' "$sum2") ]]
	}
	if [[ -n "$sum1" && "$sum1" != "$sum2" ]] && wait_for 60 new_pods; then
		ok "a config change rolls the Deployment (new checksum/config; the new pod, port 443 with the unprivileged-port sysctl, is admitted as restricted)"
	else
		nok "no rollout after the config change: checksum $sum1 -> $sum2; $(kc -n "$ns" get events --field-selector reason=FailedCreate -o jsonpath='{.items[*].message}' | head -c 400)"
	fi
	# Still mutating after the upgrade (same CA, so the local server still verifies).
	kc -n team-a scale statefulset trainer --replicas=4 >/dev/null
	if wait_for 60 pod_count team-a app=trainer 4 &&
		[[ $(kc -n team-a get pod trainer-3 -o jsonpath='{.spec.containers[1].env[?(@.name=="RANK")].value}') == 3 &&
			$(kc -n team-a get pod trainer-3 -o jsonpath='{.spec.containers[1].env[?(@.name=="WORLD_SIZE")].value}') == 4 ]]; then
		ok "after the upgrade the webhook still answers: scaled to 4, trainer-3 gets RANK=3 WORLD_SIZE=4"
	else
		nok "trainer-3 after upgrade: $(kc -n team-a get pod trainer-3 -o jsonpath='{.spec.containers[1].env}' 2>&1 | head -c 400)"
	fi
else
	nok "helm upgrade: $(tail -n 20 "$work/upgrade.log")"
fi

# --- deploy/examples -------------------------------------------------------------
kc create namespace examples >/dev/null
for f in deploy/examples/*.yaml; do
	name=$(basename "$f")
	# A LeaderWorkerSet example needs the LeaderWorkerSet CRD and controller,
	# which this tier runs only when DISTENV_E2E_MANAGERS names lws (the e2e
	# tier runs them); `make chart` checks its env through `render` either way.
	if grep -q '^kind: LeaderWorkerSet' "$f" &&
		! kc api-resources --api-group=leaderworkerset.x-k8s.io -o name 2>/dev/null | grep -q '^leaderworkersets'; then
		echo "skip - example $name: no LeaderWorkerSet controller here (its env is checked by render in make chart)"
		continue
	fi
	if ! kc -n examples apply -f "$f" >"$work/apply-$name.log" 2>&1; then
		nok "kubectl apply $name: $(cat "$work/apply-$name.log")"
		continue
	fi
	if out=$(PYTHONPATH="$root/test/chart" $py - "$name" <<'EOF' 2>&1
import json, subprocess, sys, time
import check
name = sys.argv[1]
world, want = check.expected_examples("examples")[name]
docs = check.load_examples()[name]
w, _ = check.example_workload(name, docs)
lws = "leaderworkerset.sigs.k8s.io/"
if w["kind"] == "StatefulSet":
    sel = ",".join(f"{k}={v}" for k, v in w["spec"]["selector"]["matchLabels"].items())
elif w["kind"] == "LeaderWorkerSet":
    sel = f"{lws}name={w['metadata']['name']}"  # one group: replicas 1
else:
    sel = f"app.kubernetes.io/name={w['spec']['template']['metadata']['labels']['app.kubernetes.io/name']}"
deadline = time.time() + 90
while True:
    pods = json.loads(subprocess.run(["kubectl", "-n", "examples", "get", "pods", "-l", sel, "-o", "json"],
                                     capture_output=True, text=True, check=True).stdout)["items"]
    if len(pods) >= world or time.time() > deadline:
        break
    time.sleep(0.5)
assert len(pods) == world, f"{len(pods)} pods of {world} created"
seen = set()
for p in pods:
    if w["kind"] == "LeaderWorkerSet":
        rank = int(p["metadata"]["labels"][f"{lws}worker-index"])
    elif w["kind"] == "StatefulSet":
        rank = int(p["metadata"]["name"].rsplit("-", 1)[1])
    else:
        rank = int(p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"])
    seen.add(rank)
    for c in p["spec"]["containers"]:
        env = {e["name"]: e.get("value") for e in c.get("env", [])}
        check.env_matches(env, want, rank, f"{p['metadata']['name']}/{c['name']}")
    if name == "jax.yaml":
        check.eq(p["spec"].get("subdomain"), "jax", "subdomain set from distenv.dev/service")
    assert "distenv.dev/injected" in p["metadata"]["annotations"], "not marked injected"
assert seen == set(range(world)), f"ranks {sorted(seen)}"
print(f"{world} pods")
EOF
	); then
		ok "example $name: applied, $out with the expected env"
	else
		nok "example $name: $(tail -n 1 <<<"$out")"
	fi
done

# --- apply-time validation, through kubectl as a user runs it ----------------------
kc create namespace checks >/dev/null
sts_doc() { # NAME ANNOTATIONS: a labelled StatefulSet whose Service "ddp" does not exist
	cat <<EOF
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: $1}
spec:
  replicas: 2
  serviceName: ddp
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: $1}}
  template:
    metadata:
      labels: {app: $1, distenv.dev/inject: "true"}
      annotations: {$2}
    spec:
      containers: [{name: t, image: busybox}]
EOF
}
job_doc='apiVersion: batch/v1
kind: Job
metadata: {name: plain}
spec:
  completions: 2
  parallelism: 2
  template:
    metadata:
      labels: {distenv.dev/inject: "true"}
    spec:
      subdomain: ddp
      restartPolicy: Never
      containers: [{name: t, image: busybox}]'
for dry in "" "--dry-run=server"; do
	what=${dry:-apply}
	if sts_doc nosvc "" | kc -n checks apply $dry -f - >"$work/v1.out" 2>"$work/v1.err" &&
		grep -q '^Warning: distenv: Service ddp not found in checks: MASTER_ADDR will not resolve' "$work/v1.err"; then
		ok "$what: a labelled StatefulSet without its Service is accepted with 'Warning: distenv: Service ddp not found ...'"
	else
		nok "$what: StatefulSet without its Service: $(cat "$work/v1.out" "$work/v1.err" | head -c 600)"
	fi
	if ! kc -n checks apply $dry -f - <<<"$job_doc" >"$work/v2.out" 2>"$work/v2.err" &&
		grep -q 'denied the request: distenv: Job plain is not an Indexed Job' "$work/v2.err"; then
		ok "$what: a labelled non-Indexed Job is refused: $(grep -o 'distenv: Job plain is not an Indexed Job[^;]*' "$work/v2.err" | head -n 1)"
	else
		nok "$what: non-Indexed Job: $(cat "$work/v2.out" "$work/v2.err" | head -c 600)"
	fi
	if ! sts_doc twobad '"distenv.dev/port": "0", "distenv.dev/elastic": "4:2"' |
		kc -n checks apply $dry -f - >"$work/v3.out" 2>"$work/v3.err" &&
		grep -q 'distenv.dev/port: \\"0\\"\|distenv.dev/port: "0"' "$work/v3.err" &&
		grep -q 'distenv.dev/elastic: .*4:2.* has MIN greater than MAX' "$work/v3.err"; then
		ok "$what: a StatefulSet with two bad annotations is refused naming both"
	else
		nok "$what: two bad annotations: $(cat "$work/v3.out" "$work/v3.err" | head -c 600)"
	fi
done
if [[ $(kc -n checks get statefulset -o name) == "statefulset.apps/nosvc" ]] && ! kc -n checks get job plain >/dev/null 2>&1; then
	ok "only the accepted StatefulSet was stored (dry runs and refusals store nothing)"
else
	nok "stored in checks: $(kc -n checks get statefulset,job -o name 2>&1 | tr '\n' ' ')"
fi

# --- /metrics after all of the above: what the rules and the dashboard read -------
# The local server has answered the examples, the checks and the refusals above;
# it must serve exactly the names of charts/distenv/metrics.txt (the list the
# PrometheusRule and the dashboard are checked against in `make chart`), with the
# series those queries need carrying data.
if curl -fsS --max-time 5 --cacert "$work/webhook/ca.crt" "https://127.0.0.1:$port/metrics" >"$work/metrics.txt" &&
	out=$($py - "$work/metrics.txt" charts/distenv/metrics.txt <<'EOF' 2>&1
import re, sys
text = open(sys.argv[1]).read()
want = {l.strip() for l in open(sys.argv[2]) if l.strip()}
served = set(re.findall(r"^# TYPE (\S+) ", text, re.M))
assert served == want, f"served but not listed {sorted(served - want)}, listed but not served {sorted(want - served)}"
vals = {}
for line in text.splitlines():
    if line and not line.startswith("#"):
        k, _, v = line.rpartition(" ")
        vals[k] = float(v)
def total(prefix):
    return sum(v for k, v in vals.items() if k.startswith(prefix))
need = {
    "mutate patched": total('distenv_admission_requests_total{webhook="mutate",outcome="patched"}'),
    "validate answers": total('distenv_admission_requests_total{webhook="validate"'),
    "denials with a reason": total("distenv_admission_denials_total{"),
    "/mutate 200": total('distenv_http_requests_total{path="/mutate",code="200"}'),
    "look-ups from the API": total('distenv_lookups_total{outcome="ok"}'),
    "look-up latency": total("distenv_lookup_duration_seconds_count"),
    "mutate latency": total('distenv_admission_duration_seconds_count{webhook="mutate"}'),
    "certificate expiry": vals.get("distenv_certificate_expiry_timestamp_seconds", 0),
    "process RSS": vals.get("process_resident_memory_bytes", 0),
}
need["cluster domain (default)"] = vals.get('distenv_cluster_domain_info{domain="cluster.local",source="default"}', 0)
empty = [k for k, v in need.items() if not v > 0]
assert not empty, f"no data for {empty}"
print(f"{len(served)} metric names as listed; {int(need['mutate patched'])} patched, "
      f"{int(need['validate answers'])} validated, {int(need['denials with a reason'])} denied, "
      f"{int(need['look-ups from the API'])} API look-ups")
EOF
	); then
	ok "/metrics after the examples: $out"
else
	nok "/metrics after the examples: ${out:-scrape failed}"
fi

if kill -0 "$webhook_pid" 2>/dev/null; then
	ok "the local webhook is still running after every request"
else
	nok "the local webhook exited: $(tail -n 5 "$work/webhook.log")"
fi

# --- helm uninstall, then the plain manifest as docs/install.md applies it ---------
if "$helm" uninstall distenv -n "$ns" >"$work/uninstall.log" 2>&1 &&
	wait_for 30 bash -c '! kubectl get mutatingwebhookconfiguration distenv && ! kubectl get clusterrole distenv && ! kubectl get clusterrolebinding distenv' &&
	wait_for 60 pod_count "$ns" app.kubernetes.io/name=distenv 0; then
	ok "helm uninstall removes the webhook configuration, the cluster RBAC and (garbage collector) the pods"
else
	nok "helm uninstall: $(cat "$work/uninstall.log")"
fi
# The steps of docs/install.md (and the header of deploy/distenv.yaml), verbatim
# apart from the paths.
certs="$work/certs"
if "$binary" certs --service distenv --namespace distenv --out "$certs" >"$work/certs.log" 2>&1 &&
	kc -n distenv create secret generic distenv-tls --type kubernetes.io/tls \
		--from-file=tls.crt="$certs/tls.crt" --from-file=tls.key="$certs/tls.key" \
		--from-file=ca.crt="$certs/ca.crt" >"$work/plain.log" 2>&1 &&
	kc apply -f deploy/distenv.yaml >>"$work/plain.log" 2>&1 &&
	kc patch mutatingwebhookconfiguration distenv --type json -p \
		"[{\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$(base64 -w0 "$certs/ca.crt")\"}]" >>"$work/plain.log" 2>&1; then
	ok "deploy/distenv.yaml: certs, Secret, kubectl apply and the caBundle patch are accepted ($(grep -c 'created\|configured\|unchanged' "$work/plain.log") objects)"
else
	nok "deploy/distenv.yaml steps: $(tail -n 5 "$work/certs.log" "$work/plain.log")"
fi
if [[ $(kc get mutatingwebhookconfiguration distenv -o jsonpath='{.webhooks[0].clientConfig.caBundle}') == "$(base64 -w0 "$certs/ca.crt")" ]] &&
	wait_for 60 pod_count distenv app.kubernetes.io/name=distenv 2; then
	ok "deploy/distenv.yaml: caBundle is the generated CA; its 2 webhook pods pass the restricted profile"
else
	nok "deploy/distenv.yaml: caBundle or pods: $(kc -n distenv get events --field-selector reason=FailedCreate -o jsonpath='{.items[*].message}' | head -c 400)"
fi
# Its webhook is live and points at the Service: with no replica serving (no
# kubelet here), failurePolicy Fail refuses opted-in pods, and only those.
if out=$(kc -n team-a create -f - <<<"$bare" 2>&1); then
	nok "opted-in pod admitted while the manifest's webhook has no endpoint: $out"
elif grep -q 'distenv.distenv.svc' <<<"$out" && kc -n team-a run unlabelled --image=x --restart=Never >/dev/null 2>&1; then
	ok "deploy/distenv.yaml: opted-in pods go to service distenv.distenv.svc (refused while it has no endpoint); other pods are not affected"
else
	nok "deploy/distenv.yaml webhook: $out"
fi

echo "chart-install: $(($(date +%s) - t0)) s" >&2
echo "chart-install: $pass passed, $fail failed"
((fail == 0))
