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
#   - helm uninstall cleans up;
#   - docs/install.md's kubectl path, its marked blocks run as written (the
#     registry substituted): deploy/distenv.yaml installed with the CA in both
#     webhook configurations; with a replica behind the Service (this host's
#     distenv-webhook named by an EndpointSlice; the API server runs with
#     --enable-aggregator-routing, so it dials endpoints, not ClusterIPs) the
#     page's check applies the example StatefulSet through /validate and its
#     pods are patched through /mutate; the page's rotation, and a workload
#     admitted with only the new CA trusted;
#   - docs/install.md's cert-manager path: cert-manager's CRDs, controller and
#     CA injector (test/chart/cert-manager/build.sh) on this host, the page's
#     block as written, the CA injected into both webhook configurations, and
#     the page's check passing through a replica with cert-manager's certificate.
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
webhook_pids=() # every local distenv-webhook this script started
cluster_dir=""
cleanup() {
	local pid
	for pid in "${webhook_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${webhook_pids[@]}"; do
		# The drain keeps the API server's idle keep-alive connections up to
		# server.drainTimeoutSeconds (25 s in the chart's config), then exits.
		for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null || true
	done
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
# With aggregator routing the API server reaches a webhook's Service at an
# address of its EndpointSlices rather than at its ClusterIP (nothing routes
# ClusterIPs here): the kubectl path below gives the manifest's Service an
# EndpointSlice naming a distenv-webhook on this host, as the endpointslice
# controller would for a Ready replica.
export DISTENV_E2E_APISERVER_ARGS="${DISTENV_E2E_APISERVER_ARGS:+$DISTENV_E2E_APISERVER_ARGS }--enable-aggregator-routing=true"
# The JobSet and LeaderWorkerSet managers too (built from their modules, cached),
# so that every deploy/examples manifest is applied, its JobSet and
# LeaderWorkerSet ones included; a manager DISTENV_E2E_MANAGERS leaves out makes
# its example a counted skip.
export DISTENV_E2E_MANAGERS=${DISTENV_E2E_MANAGERS-jobset lws}
skipped=0
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
# local_webhook DIR ADDRESS PORT: what a replica in namespace $ns gets (the
# Secret distenv-tls, the ConfigMap's config.yaml, a token of the ServiceAccount
# distenv) written to DIR, and ./distenv-webhook serving with it on
# ADDRESS:PORT; its PID is appended to webhook_pids.
local_webhook() {
	local d=$1 addr=$2 p=$3 token probe
	mkdir -p "$d"
	kc -n "$ns" get secret distenv-tls -o json >"$d/secret.json"
	secret_files "$d/secret.json" "$d"
	kc -n "$ns" get configmap distenv -o jsonpath='{.data.config\.yaml}' |
		sed "s#/etc/distenv/tls/#$d/#" >"$d/config.yaml"
	token=$(kc -n "$ns" create token distenv --duration=1h)
	cat >"$d/kubeconfig" <<EOF
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
	chmod 600 "$d/kubeconfig"
	# The chart sets no clusterDomain; this control plane has no node and so no pod
	# resolv.conf: the server reads a host's (serve's test hook, not this machine's,
	# which inside a CI pod would name that cluster's domain) and falls back to
	# cluster.local, which the checks below expect.
	printf 'nameserver 127.0.0.53\nsearch example.internal\n' >"$d/resolv.conf"
	# The config's probeListen (:8081) is a pod's own port: here a free one.
	probe=$($py -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	DISTENV_RESOLV_CONF="$d/resolv.conf" "$binary" serve --config "$d/config.yaml" --listen "$addr:$p" --probe-listen "127.0.0.1:$probe" \
		--kubeconfig "$d/kubeconfig" >"$d/webhook.log" 2>&1 &
	webhook_pids+=($!)
	echo "$!" >"$cluster_dir/pids/distenv-webhook-${#webhook_pids[@]}.pid"
}
# secret_files SECRET_JSON DIR: ca.crt, tls.crt and tls.key of a Secret written
# into DIR, each file replaced whole (as the kubelet updates a mounted Secret).
secret_files() {
	$py - "$1" "$2" <<'EOF'
import base64, json, os, sys
sec, d = json.load(open(sys.argv[1]))["data"], sys.argv[2]
for k in ("ca.crt", "tls.crt", "tls.key"):
    with open(f"{d}/.{k}.new", "wb") as f:
        f.write(base64.b64decode(sec[k]))
    os.chmod(f"{d}/.{k}.new", 0o600)
    os.replace(f"{d}/.{k}.new", f"{d}/{k}")
EOF
}
kc get mutatingwebhookconfiguration distenv -o json >"$work/mwc-1.json"
local_webhook "$work/webhook" 127.0.0.1 "$port"
if wait_for 20 curl -fsS --max-time 2 --cacert "$work/webhook/ca.crt" "https://127.0.0.1:$port/healthz"; then
	ok "./distenv-webhook serves the chart's certificate (verified with the chart's CA) on 127.0.0.1:$port"
else
	nok "local webhook did not come up: $(tail -n 5 "$work/webhook/webhook.log")"
fi
if grep -q '"event":"cluster_domain","domain":"cluster.local","source":"default"' "$work/webhook/webhook.log" &&
	grep -q '"event":"cluster_domain_default"' "$work/webhook/webhook.log" &&
	! grep -q '^clusterDomain:' "$work/webhook/config.yaml"; then
	ok "the chart's config sets no clusterDomain; without a svc.<domain> in resolv.conf the server says it uses cluster.local (default)"
else
	nok "cluster domain at start: $(grep -h cluster_domain "$work/webhook/webhook.log" "$work/webhook/config.yaml" | head -c 600)"
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
          env: [{name: NNODES, value: "user-set"}, {name: EXTRA, value: "$(MASTER_ADDR)"}]
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
        assert d["RANK"] == str(r), d.get("RANK")
        if c["name"] == "train":
            # The user's NNODES wins (a literal RANK for 3 ranks is refused at
            # apply); injected entries precede the user's own.
            assert d["NNODES"] == "user-set", d["NNODES"]
            assert names.index("MASTER_ADDR") < names.index("EXTRA"), names
        else:
            assert d["NNODES"] == "3", d.get("NNODES")
plain = pods["plain-0"]
assert all("env" not in c for c in plain["spec"]["containers"]), "unlabelled pod mutated"
assert "distenv.dev/injected" not in plain["metadata"].get("annotations", {}), "unlabelled pod marked"
print("ok")
EOF
	); then
		ok "labelled StatefulSet: 3 pods mutated (rank, WORLD_SIZE=3 from the API via the chart's RBAC, nproc 4, user's NNODES kept); unlabelled untouched"
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
	# A JobSet or LeaderWorkerSet example needs that CRD and controller, which
	# this tier runs unless DISTENV_E2E_MANAGERS leaves it out; `make chart`
	# checks its env through `render` either way.
	mgr=
	if grep -q '^kind: LeaderWorkerSet' "$f"; then
		mgr=lws group=leaderworkerset.x-k8s.io res=leaderworkersets
	elif grep -q '^kind: JobSet' "$f"; then
		mgr=jobset group=jobset.x-k8s.io res=jobsets
	fi
	if [[ -n "$mgr" ]] &&
		! kc api-resources --api-group="$group" -o name 2>/dev/null | grep -q "^$res"; then
		if [[ " $DISTENV_E2E_MANAGERS " == *" $mgr "* ]]; then
			nok "example $name: the $mgr manager was asked for, but its CRD is not served"
		else
			skipped=$((skipped + 1))
			echo "skip - example $name: DISTENV_E2E_MANAGERS leaves out $mgr (its env is checked by render in make chart)"
		fi
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
elif w["kind"] == "JobSet":
    sel = f"jobset.sigs.k8s.io/jobset-name={w['metadata']['name']}"
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
    elif w["kind"] == "JobSet":
        # one replicated Job: Job j's completion index i is rank j x completions + i
        assert len(w["spec"]["replicatedJobs"]) == 1, "one replicated Job"
        per_job = w["spec"]["replicatedJobs"][0]["template"]["spec"]["completions"]
        rank = (int(p["metadata"]["labels"]["jobset.sigs.k8s.io/job-index"]) * per_job +
                int(p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]))
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

if kill -0 "${webhook_pids[0]}" 2>/dev/null; then
	ok "the local webhook is still running after every request"
else
	nok "the local webhook exited: $(tail -n 5 "$work/webhook/webhook.log")"
fi

# --- docs/install.md's blocks, its commands as written ------------------------------
# The blocks of docs/install.md marked `<!-- chart-install: NAME -->` run with
# bash -e, in a directory that holds the repository's deploy/ and
# ./distenv-webhook (the repository after `make`, as the page's commands are
# run; nothing on PATH), with the one substitution the page asks for: a
# registry in place of registry.example.com/ml/distenv.
registry=registry.test/ml/distenv
user="$work/user"
mkdir -p "$user/bin"
ln -s "$root/deploy" "$user/deploy"
ln -s "$binary" "$user/distenv-webhook" # ./distenv-webhook, as the README and install.md run it
run_block() { # NAME [DOC]: the block NAME of DOC (docs/install.md); stdout in $work/NAME.out, trace in $work/NAME.log
	PYTHONPATH="$root/test/chart" $py -c 'import sys, check; print("\n".join(check.doc_block(*sys.argv[1:])))' "$1" ${2:+"$root/$2"} |
		sed "s|registry.example.com/ml/distenv|$registry|g" >"$work/$1.sh" || return 1
	(cd "$user" && PATH="$user/bin:$PATH" bash -eu -o pipefail -x "$work/$1.sh") >"$work/$1.out" 2>"$work/$1.log"
}

# --- the README's five minutes, its commands as written -----------------------------
# Render and apply the Indexed Job example in the default namespace, then, once
# the Job controller has made the four pods, the README's listing shows each
# pod's distenv.dev/injected annotation. (Its last step, the pods' logs, needs a
# kubelet: not here.)
readme_pods() { pod_count default app.kubernetes.io/name=ddp-job 4; }
if run_block five-minutes-apply README.md &&
	grep -q '^--- rank 3/4: Job default/ddp-job, pod ddp-job-3, containers train$' "$work/five-minutes-apply.out" &&
	wait_for 60 readme_pods && run_block five-minutes-check README.md &&
	[[ $(grep -Ec '^ddp-job-[0-3]-[a-z0-9]+	rank=[0-3],world-size=4,master=ddp-job-0\.ddp-job\.default\.svc\.cluster\.local:29500$' "$work/five-minutes-check.out") == 4 &&
	$(grep -o 'rank=[0-3]' "$work/five-minutes-check.out" | sort -u | wc -l) == 4 ]]; then
	ok "README five minutes: render, apply and the annotation listing run as written; 4 pods, ranks $(grep -o 'rank=[0-3]' "$work/five-minutes-check.out" | sort | tr '\n' ' ')"
else
	nok "README five minutes: $(tail -n 4 "$work/five-minutes-apply.log" "$work/five-minutes-check.log" 2>&1; head -c 400 "$work/five-minutes-check.out" 2>/dev/null)"
fi
kc delete -f deploy/examples/indexed-job.yaml --wait=false >/dev/null 2>&1 || true

# --- helm uninstall ---------------------------------------------------------------
if "$helm" uninstall distenv -n "$ns" >"$work/uninstall.log" 2>&1 &&
	wait_for 30 bash -c '! kubectl get mutatingwebhookconfiguration distenv && ! kubectl get validatingwebhookconfiguration distenv && ! kubectl get clusterrole distenv && ! kubectl get clusterrolebinding distenv' &&
	wait_for 60 pod_count "$ns" app.kubernetes.io/name=distenv 0; then
	ok "helm uninstall removes both webhook configurations, the cluster RBAC and (garbage collector) the pods"
else
	nok "helm uninstall: $(cat "$work/uninstall.log")"
fi
# With no webhook left, a labelled pod re-created now (the StatefulSet
# controller replacing a deleted one) gets no env, and the page's command shows
# it (no distenv.dev/injected annotation) beside the pods that got theirs.
kc -n team-a delete pod trainer-1 >/dev/null
recreated() { # trainer-1 exists again, without the annotation
	kc -n team-a get pod trainer-1 -o jsonpath='{.metadata.annotations}' >"$work/trainer-1.ann" 2>/dev/null &&
		! grep -q 'distenv.dev/injected' "$work/trainer-1.ann"
}
if wait_for 60 recreated && run_block find-uninjected &&
	[[ -z $(kc -n team-a get pod trainer-1 -o jsonpath='{.spec.containers[1].env}') ]] &&
	grep -Eq '^team-a +trainer-1 +<none>$' "$work/find-uninjected.out" &&
	grep -Eq '^team-a +trainer-0 +rank=0,world-size=3,' "$work/find-uninjected.out"; then
	ok "after helm uninstall a re-created labelled pod starts without env; docs/install.md's find-uninjected lists it as <none>"
else
	nok "after helm uninstall: trainer-1 env $(kc -n team-a get pod trainer-1 -o jsonpath='{.spec.containers[1].env}' 2>&1 | head -c 200); $(grep 'trainer-[01] ' "$work/find-uninjected.out" 2>&1; tail -n 3 "$work/find-uninjected.log" 2>/dev/null)"
fi

# --- docs/install.md's kubectl path, its blocks in order ----------------------------
# Between the blocks this script does only what the cluster's own parts would: an EndpointSlice for the
# Service (the endpointslice controller, for a Ready replica) and the Secret's
# files for the server (the kubelet, which updates a mounted Secret).
# A user starts from a cluster without distenv: the release's namespace goes too.
kc delete namespace "$ns" --wait=false >/dev/null
if ! wait_for 120 bash -c "! kubectl get namespace $ns"; then
	nok "namespace $ns not deleted after helm uninstall: $(kc get namespace "$ns" -o jsonpath='{.status}')"
fi
bundles() { # the caBundle of the MutatingWebhookConfiguration and of each webhook of the ValidatingWebhookConfiguration
	echo "$(kc get mutatingwebhookconfiguration distenv -o jsonpath='{.webhooks[0].clientConfig.caBundle}')" \
		"$(kc get validatingwebhookconfiguration distenv -o jsonpath='{.webhooks[0].clientConfig.caBundle}')" \
		"$(kc get validatingwebhookconfiguration distenv -o jsonpath='{.webhooks[1].clientConfig.caBundle}')"
}
if run_block kubectl-apply; then
	ok "docs/install.md kubectl-apply: $(grep -c . "$work/kubectl-apply.sh") lines run as written (image $registry)"
else
	nok "docs/install.md kubectl-apply: $(tail -n 8 "$work/kubectl-apply.log")"
fi
ca1=$(base64 -w0 "$user/certs/ca.crt" 2>/dev/null || true)
if [[ -n "$ca1" && "$(bundles)" == "$ca1 $ca1 $ca1" ]]; then
	ok "docs/install.md kubectl-apply: both webhook configurations carry the CA of distenv-webhook certs"
else
	nok "docs/install.md kubectl-apply: caBundles (mutating, validating) are not the generated CA: $(bundles | head -c 200)"
fi
kc -n "$ns" get deployment distenv -o json >"$work/plain-deploy.json" 2>/dev/null || true
kc -n "$ns" get configmap distenv -o jsonpath='{.data.config\.yaml}' >"$work/plain-config.yaml" 2>/dev/null || true
if out=$($py - "$work/plain-deploy.json" "$work/plain-config.yaml" "$registry:$(cat VERSION)" <<'EOF' 2>&1
import json, sys, yaml
spec = json.load(open(sys.argv[1]))["spec"]["template"]["spec"]
want = sys.argv[3]
images = [c["image"] for c in spec.get("initContainers", []) + spec["containers"]]
assert images and all(i == want for i in images), f"Deployment images {images}, want {want}"
wait = yaml.safe_load(open(sys.argv[2]))["waitInit"]["image"]
assert wait == want, f"waitInit.image {wait}, want {want}"
print(f"{len(images)} containers and waitInit.image")
EOF
); then
	ok "docs/install.md's sed points the images at the registry: $out"
else
	nok "images after docs/install.md's sed: $out"
fi
if wait_for 60 pod_count "$ns" app.kubernetes.io/name=distenv 2; then
	ok "deploy/distenv.yaml: the ReplicaSet controller created its 2 webhook pods"
else
	nok "deploy/distenv.yaml: pods: $(kc -n "$ns" get events --field-selector reason=FailedCreate -o jsonpath='{.items[*].message}' | head -c 400)"
fi
# No replica serves yet (no kubelet here): failurePolicy Fail refuses opted-in
# pods, and only those.
if out=$(kc -n team-a create -f - <<<"$bare" 2>&1); then
	nok "opted-in pod admitted while the manifest's webhook has no endpoint: $out"
elif grep -q 'pods.distenv.dev' <<<"$out" && kc -n team-a run unlabelled --image=x --restart=Never >/dev/null 2>&1; then
	ok "deploy/distenv.yaml: opted-in pods are refused while its Service has no endpoint; other pods are not affected ($(grep -o 'failed calling webhook.*' <<<"$out" | head -c 160))"
else
	nok "deploy/distenv.yaml webhook: $out"
fi

# A replica as the cluster would run it, at an address of this host that an
# EndpointSlice may name (not loopback): the Secret's files, the ConfigMap's
# config and the ServiceAccount's token. The API server dials it through the
# Service and checks its certificate against the caBundles for the name
# distenv.distenv.svc, as it would a pod's.
host_ip=$(ip -4 -o addr show scope global 2>/dev/null | awk '{ split($4, a, "/"); print a[1]; exit }')
rep_dir="" rep_port=""
# replica DIR CA_FILE: local_webhook DIR on $host_ip and a free port, named by
# an EndpointSlice of the Service distenv; true once it serves
# distenv.distenv.svc verified with CA_FILE.
replica() {
	rep_dir=$1
	rep_port=$($py -c 'import socket, sys; s = socket.socket(); s.bind((sys.argv[1], 0)); print(s.getsockname()[1])' "$host_ip")
	local_webhook "$rep_dir" "$host_ip" "$rep_port"
	kc apply -f - >/dev/null <<EOF
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: distenv-chart-install
  namespace: $ns
  labels:
    kubernetes.io/service-name: distenv
    endpointslice.kubernetes.io/managed-by: chart-install.distenv.dev
addressType: IPv4
ports: [{name: https, port: $rep_port, protocol: TCP}]
endpoints: [{addresses: ["$host_ip"], conditions: {ready: true}}]
EOF
	wait_for 20 curl -fsS --max-time 2 --cacert "$2" \
		--resolve "distenv.distenv.svc:$rep_port:$host_ip" "https://distenv.distenv.svc:$rep_port/healthz"
}
serving=0
if [[ -z "$host_ip" ]]; then
	nok "kubectl path: this host has no global IPv4 address for the Service's EndpointSlice (ip -4 addr)"
elif replica "$work/webhook2" "$user/certs/ca.crt"; then
	serving=1
	ok "deploy/distenv.yaml: a replica with the Secret's certificate serves distenv.distenv.svc at $host_ip:$rep_port (EndpointSlice of the Service)"
else
	nok "kubectl path: the replica did not come up: $(tail -n 5 "$work/webhook2/webhook.log")"
fi
answers() { # "VALIDATED PATCHED": /validate answers and /mutate patches so far
	curl -fsS --max-time 5 --cacert "$rep_dir/ca.crt" --resolve "distenv.distenv.svc:$rep_port:$host_ip" \
		"https://distenv.distenv.svc:$rep_port/metrics" | $py -c '
import sys
v = p = 0
for line in sys.stdin:
    if line.startswith("distenv_admission_requests_total{"):
        n = float(line.rsplit(" ", 1)[1])
        v += n if "webhook=\"validate\"" in line else 0
        p += n if "webhook=\"mutate\"" in line and "outcome=\"patched\"" in line else 0
print(int(v), int(p))'
}
# expect_env NS POD RANK OUT: POD's first container (its env as JSON in the
# last line of OUT) has the env docs/install.md's example gives rank RANK.
expect_env() {
	PYTHONPATH="$root/test/chart" $py - "$@" <<'EOF'
import json, sys
import check
ns, pod, rank, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
lines = open(out).read().strip().splitlines()
assert lines, f"{out}: no output"
env = {e["name"]: e.get("value") for e in json.loads(lines[-1])}
_, want = check.expected_examples(ns)["pytorch-ddp-statefulset.yaml"]
check.env_matches(env, want, rank, f"{ns}/{pod}")
print(f"{ns}/{pod}: RANK={env['RANK']} WORLD_SIZE={env['WORLD_SIZE']} MASTER_ADDR={env['MASTER_ADDR']}")
EOF
}
# check_block WHAT HOW: install.md's check block run as written; the StatefulSet
# must come through /validate (its answers rise) and its 2 pods through /mutate
# (HOW: with which certificate), ddp-1 with RANK=1.
check_block() {
	local v0 p0 v1 p1 out
	read -r v0 p0 <<<"$(answers)"
	if run_block check; then
		read -r v1 p1 <<<"$(answers)"
		if out=$(expect_env default ddp-1 1 "$work/check.out" 2>&1) && ((v1 > v0 && p1 >= p0 + 2)); then
			ok "$1: runs as written; the StatefulSet accepted through /validate ($((v1 - v0)) answers), its pods patched through /mutate ($((p1 - p0)))$2: $out"
		else
			nok "$1: /validate answers $v0 -> $v1, /mutate patches $p0 -> $p1; $out"
		fi
	else
		nok "$1: $(tail -n 8 "$work/check.log")"
	fi
}
if ((serving)); then
	check_block "docs/install.md check" ""

	# Rotation: the new CA trusted beside the old one, the Secret replaced, the
	# replica given the new files (the kubelet's part), then only the new CA.
	old_ca=$(cat "$user/certs/ca.crt")
	if run_block rotate; then
		both=$(cat "$user/certs/ca.crt" "$user/certs-new/ca.crt" | base64 -w0)
		if [[ "$(bundles)" == "$both $both $both" ]]; then
			ok "docs/install.md rotate: runs as written; both webhook configurations trust the old and the new CA"
		else
			nok "docs/install.md rotate: caBundles are not old + new CA"
		fi
	else
		nok "docs/install.md rotate: $(tail -n 8 "$work/rotate.log")"
	fi
	reloads() { grep -c certificate_reloaded "$work/webhook2/webhook.log" || true; }
	r0=$(reloads)
	reloaded() { [[ $(reloads) -gt $r0 ]]; }
	kc -n "$ns" get secret distenv-tls -o json >"$work/webhook2/secret.json"
	secret_files "$work/webhook2/secret.json" "$work/webhook2"
	if wait_for 60 reloaded && cmp -s "$work/webhook2/tls.crt" "$user/certs-new/tls.crt"; then
		ok "the replica logs certificate_reloaded for the Secret's new certificate"
	else
		nok "no certificate_reloaded after the Secret changed: $(tail -n 3 "$work/webhook2/webhook.log")"
	fi
	if run_block rotate-finish; then
		new=$(base64 -w0 "$user/certs/ca.crt")
		if [[ "$(bundles)" == "$new $new $new" && "$(cat "$user/certs/ca.crt")" != "$old_ca" && ! -e "$user/certs-new" ]]; then
			ok "docs/install.md rotate-finish: runs as written; both webhook configurations trust only the new CA, now certs/ca.crt"
		else
			nok "docs/install.md rotate-finish: caBundles or certs/ not as the page says"
		fi
	else
		nok "docs/install.md rotate-finish: $(tail -n 8 "$work/rotate-finish.log")"
	fi
	# Only the new CA is trusted now, and only the new certificate served: a
	# workload applied as the page applies it still passes both webhooks.
	kc create namespace rotated >/dev/null
	read -r v0 p0 <<<"$(answers)"
	if (cd "$user" && kubectl -n rotated apply -f deploy/examples/pytorch-ddp-statefulset.yaml) >"$work/rotated.log" 2>&1 &&
		wait_for 60 pod_count rotated app.kubernetes.io/name=ddp 2 &&
		kc -n rotated get pod ddp-1 -o jsonpath='{.spec.containers[0].env}' >"$work/rotated.out" &&
		out=$(expect_env rotated ddp-1 1 "$work/rotated.out" 2>&1); then
		read -r v1 p1 <<<"$(answers)"
		if ((v1 > v0 && p1 >= p0 + 2)); then
			ok "after the rotation: a StatefulSet accepted through /validate and its pods patched through /mutate: $out"
		else
			nok "after the rotation: /validate answers $v0 -> $v1, /mutate patches $p0 -> $p1"
		fi
	else
		nok "after the rotation: $(tail -n 5 "$work/rotated.log") ${out:-}"
	fi
fi

# --- docs/install.md's cert-manager path ----------------------------------------
# cert-manager's CRDs, and its controller and CA injector built from its Go
# module (test/chart/cert-manager/build.sh) running on this host with the admin
# kubeconfig; then the page's cert-manager block as written, and, once the CA
# injector has filled in both caBundles, a replica with the Secret cert-manager
# issued and the page's check again.
# First the kubectl path's install goes (the page's uninstall), with the check's
# StatefulSet, so that the check creates its pods afresh.
kc delete -f deploy/distenv.yaml --wait=false >/dev/null 2>&1 || true
kc -n default delete -f deploy/examples/pytorch-ddp-statefulset.yaml --wait=false >/dev/null 2>&1 || true
gone() {
	! kc get namespace "$ns" >/dev/null 2>&1 && ! kc get validatingwebhookconfiguration distenv >/dev/null 2>&1 &&
		pod_count default app.kubernetes.io/name=ddp 0
}
cm_ok=0
if ! wait_for 120 gone; then
	nok "cert-manager path: kubectl delete -f deploy/distenv.yaml left namespace $ns, the webhooks or default/ddp pods"
elif ! cm_bin=$(test/chart/cert-manager/build.sh 2>"$work/cm-build.log") ||
	! cm_crds=$(test/chart/cert-manager/build.sh crds 2>>"$work/cm-build.log"); then
	nok "cert-manager path: test/chart/cert-manager/build.sh: $(tail -n 5 "$work/cm-build.log")"
elif ! kc create -f "$cm_crds" >"$work/cm-crds.log" 2>&1 ||
	! kc wait --for condition=established --timeout=60s -f "$cm_crds" >>"$work/cm-crds.log" 2>&1; then
	nok "cert-manager path: CRDs: $(tail -n 5 "$work/cm-crds.log")"
else
	for what in controller cainjector; do
		"$cm_bin" "$what" --kubeconfig "$KUBECONFIG" >"$work/cm-$what.log" 2>&1 &
		webhook_pids+=($!)
		echo "$!" >"$cluster_dir/pids/cert-manager-$what.pid"
	done
	cm_ok=1
	ok "cert-manager $(awk '$1 == "github.com/cert-manager/cert-manager" { print $2; exit }' test/chart/cert-manager/go.mod): CRDs established, controller and cainjector running"
fi
if ((cm_ok)); then
	if run_block cert-manager; then
		ok "docs/install.md cert-manager: $(grep -c . "$work/cert-manager.sh") line run as written (image $registry)"
	else
		nok "docs/install.md cert-manager: $(tail -n 8 "$work/cert-manager.log")"
	fi
	injected() { # both caBundles are the ca.crt of the Secret cert-manager issued
		local ca
		ca=$(kc -n "$ns" get secret distenv-tls -o jsonpath='{.data.ca\.crt}' 2>/dev/null) &&
			[[ -n "$ca" && "$(bundles)" == "$ca $ca $ca" ]]
	}
	if kc -n "$ns" wait --for=condition=Ready certificate/distenv-tls --timeout=120s >"$work/cm-ready.log" 2>&1 &&
		wait_for 60 injected; then
		ok "cert-manager issued distenv-tls (CA Issuer distenv-ca) and its CA injector put its CA into both webhook configurations"
	else
		nok "cert-manager: certificate or caBundles: $(tail -n 2 "$work/cm-ready.log") $(kc -n "$ns" get certificate,certificaterequest -o wide 2>&1 | tail -n 4) $(tail -n 3 "$work/cm-controller.log" "$work/cm-cainjector.log")"
		cm_ok=0
	fi
fi
if ((cm_ok)); then
	kc -n "$ns" get secret distenv-tls -o jsonpath='{.data.ca\.crt}' | base64 -d >"$work/cm-ca.crt"
	if [[ -z "$host_ip" ]]; then
		nok "cert-manager path: this host has no global IPv4 address for the Service's EndpointSlice"
	elif ! replica "$work/webhook3" "$work/cm-ca.crt"; then
		nok "cert-manager path: the replica did not come up: $(tail -n 5 "$work/webhook3/webhook.log")"
	else
		check_block "cert-manager path, docs/install.md check" " with cert-manager's certificate"
	fi
fi

echo "chart-install: $(($(date +%s) - t0)) s" >&2
echo "chart-install: $pass passed, $fail failed, $skipped skipped"
((fail == 0))
