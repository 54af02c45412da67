#!/usr/bin/env bash
# A real Kubernetes control plane on loopback for the distenv tests:
# etcd, kube-apiserver and kube-controller-manager as separate processes of one
# binary built from the k8s.io/kubernetes module (see build.sh). No kubelet and no
# scheduler: pods are stored and stay Pending.
#
#   cluster.sh up [DIR]    start everything in DIR (default: a new temp dir) and
#                          print shell lines to source (KUBECONFIG=..., ...)
#   cluster.sh env [DIR]   print those lines again
#   cluster.sh down [DIR]  stop every process started by `up` and remove DIR
#                          (kept when DISTENV_E2E_KEEP=1)
#
# DISTENV_E2E_MANAGERS="jobset lws kueue" (any of them) makes `up` also install the
# CRDs of JobSet / LeaderWorkerSet and run their controller managers (built by
# build-managers.sh), their webhooks served on loopback with a certificate of the
# cluster CA.
#
# A node (test/e2e-node) reaches the control plane on an address of its own:
# DISTENV_E2E_ADDRESS (default 127.0.0.1) is where the API server binds and what
# it advertises (its certificate names it), DISTENV_E2E_SERVICE_CIDR (default
# 10.0.0.0/24) the Service range, DISTENV_E2E_AUTHORIZATION_MODE the API
# server's authorizers (default RBAC; a node needs Node,RBAC),
# DISTENV_E2E_APISERVER_ARGS more API server flags and DISTENV_E2E_CONTROLLERS more controllers of
# kube-controller-manager (comma-separated), DISTENV_E2E_KCM_ARGS more of its flags (bench/cluster
# raises its client's --kube-api-qps); DISTENV_E2E_NODE_NAME=NAME also
# issues the certificates of node NAME into DIR/pki (see cmd/controlplane/pki.go).
#
# DIR defaults to $DISTENV_E2E_DIR for env/down. Typical use from another tier:
#   eval "$(test/e2e/cluster.sh up)"; trap 'test/e2e/cluster.sh down' EXIT
#   kubectl get ns          # $DISTENV_E2E_DIR/bin is put on PATH
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

die() {
	echo "cluster.sh: $*" >&2
	exit 1
}

usage() {
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//' >&2
	exit 2
}

print_env() {
	local dir=$1
	[[ -f "$dir/env" ]] || die "no cluster in $dir (missing $dir/env)"
	cat "$dir/env"
}

# stop_pid NAME DIR: SIGTERM the process recorded in DIR/pids/NAME.pid, wait up to
# 15 s, then SIGKILL. Only processes this script started are touched.
stop_pid() {
	local name=$1 dir=$2 pidfile pid i
	pidfile="$dir/pids/$name.pid"
	[[ -f "$pidfile" ]] || return 0
	pid=$(<"$pidfile")
	if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < 150; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "cluster.sh: $name (pid $pid) did not stop in 15 s, killing it" >&2
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	rm -f "$pidfile"
}

down() {
	local dir=$1
	[[ -d "$dir" ]] || return 0
	[[ -f "$dir/.distenv-e2e" ]] || die "$dir is not a cluster directory made by cluster.sh"
	local name
	# Anything another script registered in pids/ (e.g. the webhook) goes first.
	for f in "$dir"/pids/*.pid; do
		[[ -e "$f" ]] || continue
		name=$(basename "$f" .pid)
		case "$name" in etcd | kube-apiserver | kube-controller-manager) ;; *) stop_pid "$name" "$dir" ;; esac
	done
	stop_pid kube-controller-manager "$dir"
	stop_pid kube-apiserver "$dir"
	stop_pid etcd "$dir"
	if [[ "${DISTENV_E2E_KEEP:-0}" == 1 ]]; then
		echo "cluster.sh: kept $dir (logs in $dir/logs)" >&2
	else
		rm -rf "$dir"
	fi
}

# start NAME DIR ARGS...: start the control-plane binary as NAME in its own
# session, logging to DIR/logs/NAME.log, pid in DIR/pids/NAME.pid.
start() {
	local name=$1 dir=$2
	shift 2
	setsid "$dir/bin/controlplane" "$name" "$@" >"$dir/logs/$name.log" 2>&1 </dev/null &
	echo $! >"$dir/pids/$name.pid"
}

# wait_for WHAT DIR NAME SECONDS CMD...: run CMD until it succeeds, at most SECONDS
# seconds; fail early if process NAME has exited.
wait_for() {
	local what=$1 dir=$2 name=$3 secs=$4 i
	shift 4
	for ((i = 0; i < secs * 4; i++)); do
		if "$@" >/dev/null 2>&1; then
			return 0
		fi
		if ! kill -0 "$(<"$dir/pids/$name.pid")" 2>/dev/null; then
			tail -n 30 "$dir/logs/$name.log" >&2 || true
			die "$name exited while waiting for $what (log: $dir/logs/$name.log)"
		fi
		sleep 0.25
	done
	tail -n 30 "$dir/logs/$name.log" >&2 || true
	die "$what not ready after $secs s (log: $dir/logs/$name.log)"
}

kubeconfig() { # FILE SERVER CA CERT KEY USER
	cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: distenv-e2e
  cluster:
    server: $2
    certificate-authority: $3
contexts:
- name: distenv-e2e
  context:
    cluster: distenv-e2e
    user: $6
current-context: distenv-e2e
users:
- name: $6
  user:
    client-certificate: $4
    client-key: $5
EOF
	chmod 600 "$1"
}

# serving_cert DIR NAME: a serving certificate for 127.0.0.1 signed by the
# cluster CA (DIR/pki/ca.*), written to DIR/NAME/tls.{crt,key}.
serving_cert() {
	local dir=$1 out="$1/$2"
	mkdir -p "$out"
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$out/tls.key" -subj "/CN=$2" -out "$out/tls.csr" 2>/dev/null
	openssl x509 -req -in "$out/tls.csr" -CA "$dir/pki/ca.crt" -CAkey "$dir/pki/ca.key" \
		-set_serial "0x$(openssl rand -hex 8)" -days 7 -out "$out/tls.crt" \
		-extfile <(printf '%s\n' 'subjectAltName=IP:127.0.0.1,DNS:localhost' \
			'keyUsage=critical,digitalSignature' 'extendedKeyUsage=serverAuth') 2>/dev/null
	rm -f "$out/tls.csr"
	chmod 600 "$out/tls.key"
}

# manager_webhooks NAME PORT CABUNDLE: the webhook configurations of a manager as
# its release ships them (the kubebuilder markers of pkg/webhooks and the
# objectSelector patches of config/.../webhook), with clientConfig.url on loopback
# in place of a Service.
manager_webhooks() {
	local name=$1 url="https://127.0.0.1:$2" ca=$3 group version kind podlabel
	local mutate_ops='["CREATE"]' pod_validate_ops='["CREATE"]'
	if [[ $name == kueue ]]; then
		kueue_webhooks "$url" "$ca"
		return
	fi
	case "$name" in
	jobset)
		group=jobset.x-k8s.io version=v1alpha2 kind=jobset
		podlabel=jobset.sigs.k8s.io/jobset-name
		;;
	lws)
		group=leaderworkerset.x-k8s.io version=v1 kind=leaderworkerset
		podlabel=leaderworkerset.sigs.k8s.io/name
		mutate_ops='["CREATE", "UPDATE"]' pod_validate_ops='["CREATE", "UPDATE"]'
		;;
	esac
	local path="${group//./-}-$version-$kind"
	cat <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: $name-mutating-webhook-configuration
webhooks:
- name: m$kind.kb.io
  admissionReviewVersions: ["v1"]
  clientConfig: {url: "$url/mutate-$path", caBundle: "$ca"}
  failurePolicy: Fail
  sideEffects: None
  rules:
  - {apiGroups: ["$group"], apiVersions: ["$version"], operations: $mutate_ops, resources: ["${kind}s"]}
- name: mpod.kb.io
  admissionReviewVersions: ["v1"]
  clientConfig: {url: "$url/mutate--v1-pod", caBundle: "$ca"}
  failurePolicy: Fail
  sideEffects: None
  objectSelector:
    matchExpressions: [{key: $podlabel, operator: Exists}]
  rules:
  - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: $name-validating-webhook-configuration
webhooks:
- name: v$kind.kb.io
  admissionReviewVersions: ["v1"]
  clientConfig: {url: "$url/validate-$path", caBundle: "$ca"}
  failurePolicy: Fail
  sideEffects: None
  rules:
  - {apiGroups: ["$group"], apiVersions: ["$version"], operations: ["CREATE", "UPDATE"], resources: ["${kind}s"]}
- name: vpod.kb.io
  admissionReviewVersions: ["v1"]
  clientConfig: {url: "$url/validate--v1-pod", caBundle: "$ca"}
  failurePolicy: Fail
  sideEffects: None
  objectSelector:
    matchExpressions: [{key: $podlabel, operator: Exists}]
  rules:
  - {apiGroups: [""], apiVersions: ["v1"], operations: $pod_validate_ops, resources: ["pods"]}
EOF
}

# kueue_webhooks URL CABUNDLE: Kueue's webhook configurations as its release
# ships them (config/components/webhook/manifests.yaml of the module), those of
# its own objects and of batch/v1 Jobs only (no other integration runs here),
# with clientConfig.url on loopback; the Job webhooks see only Jobs that name a
# queue (Kueue acts on no other with manageJobsWithoutQueueName false), so that
# the other scenarios' Jobs do not wait on it.
kueue_webhooks() {
	local url=$1 ca=$2 dir
	local -a crds
	# the module's directory, from the path of its first CRD (one pinned version);
	# read whole (a `| head` could end the script early by SIGPIPE under pipefail)
	mapfile -t crds < <("$here/build-managers.sh" --crds kueue)
	[[ ${#crds[@]} -gt 0 ]] || die "no CRDs for kueue"
	dir=${crds[0]%/config/components/crd/bases/*}
	python3 - "$dir/config/components/webhook/manifests.yaml" "$url" "$ca" <<'PY'
import sys, yaml
path, url, ca = sys.argv[1:]
out = []
for d in yaml.safe_load_all(open(path)):
    if not d:
        continue
    keep = []
    for w in d["webhooks"]:
        groups = {g for r in w["rules"] for g in r["apiGroups"]}
        if not groups <= {"kueue.x-k8s.io", "batch"}:
            continue
        w["clientConfig"] = {"url": url + w["clientConfig"]["service"]["path"], "caBundle": ca}
        if groups == {"batch"}:
            w["objectSelector"] = {"matchExpressions": [
                {"key": "kueue.x-k8s.io/queue-name", "operator": "Exists"}]}
        keep.append(w)
    d["metadata"] = {"name": "kueue-" + d["metadata"]["name"]}
    d["webhooks"] = keep
    out.append(d)
print(yaml.safe_dump_all(out, sort_keys=False))
PY
}

# manager_answers DIR NAME: true once a server-side dry-run create comes back with
# what only the manager's defaulting webhook sets (the CRDs default neither field).
manager_answers() {
	local dir=$1 name=$2 want got
	case "$name" in
	jobset)
		want=true
		got=$("$dir/bin/kubectl" --kubeconfig "$dir/admin.kubeconfig" create --dry-run=server \
			-o 'jsonpath={.spec.network.enableDNSHostnames}' -f - <<'EOF'
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: probe, namespace: default}
spec:
  replicatedJobs:
  - name: w
    template:
      spec:
        template:
          spec:
            containers: [{name: c, image: registry.invalid/probe:1}]
EOF
		)
		;;
	lws)
		want=Shared
		got=$("$dir/bin/kubectl" --kubeconfig "$dir/admin.kubeconfig" create --dry-run=server \
			-o 'jsonpath={.spec.networkConfig.subdomainPolicy}' -f - <<'EOF'
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: probe, namespace: default}
spec:
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers: [{name: c, image: registry.invalid/probe:1}]
EOF
		)
		;;
	kueue)
		# Kueue's Job webhook suspends a Job that names a queue until it is admitted.
		want=true
		got=$("$dir/bin/kubectl" --kubeconfig "$dir/admin.kubeconfig" create --dry-run=server \
			-o 'jsonpath={.spec.suspend}' -f - <<'EOF'
apiVersion: batch/v1
kind: Job
metadata: {name: probe, namespace: default, labels: {kueue.x-k8s.io/queue-name: probe}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: registry.invalid/probe:1}]
EOF
		)
		;;
	esac
	[[ "$got" == "$want" ]]
}

# install_crds DIR NAME...: the CRDs of the managers, from their module archives,
# before kube-controller-manager starts: its garbage collector then knows the new
# kinds from the start (it looks for new ones only every 30 s), as in a cluster
# where they were installed long ago, so deleting a JobSet deletes its Jobs at once.
install_crds() {
	local dir=$1 kc="$1/admin.kubeconfig" name crd t0 ms
	shift
	local -a crds
	t0=$(date +%s%N)
	for name in "$@"; do
		mapfile -t crds < <("$here/build-managers.sh" --crds "$name")
		[[ ${#crds[@]} -gt 0 ]] || die "no CRDs for $name"
		# create, not apply: the CRDs are too large for the last-applied annotation.
		for crd in "${crds[@]}"; do
			"$dir/bin/kubectl" --kubeconfig "$kc" create -f "$crd" >/dev/null
			wait_for "$name CRD $(basename "$crd")" "$dir" kube-apiserver 60 \
				"$dir/bin/kubectl" --kubeconfig "$kc" wait --for condition=established --timeout=5s -f "$crd"
		done
	done
	ms=$((($(date +%s%N) - t0) / 1000000))
	printf 'cluster.sh: CRDs of %s established in %d.%03d s\n' "$*" $((ms / 1000)) $((ms % 1000)) >&2
}

# start_managers DIR NAME...: for each of jobset, lws: its manager (leader
# election, its own certificate rotation and metrics off; health and webhook
# servers on free loopback ports; the admin kubeconfig), then its webhook
# configurations; ready once the API server gets answers from its webhooks.
start_managers() {
	local dir=$1 kc="$1/admin.kubeconfig" name i=0 ca
	shift
	local -a names=("$@") bins ports
	mapfile -t bins < <("$here/build-managers.sh" "${names[@]}")
	[[ ${#bins[@]} -eq ${#names[@]} ]] || die "build-managers.sh ${names[*]} failed"
	mapfile -t ports < <("$dir/bin/controlplane" freeport $((2 * ${#names[@]})))
	serving_cert "$dir" managers
	ca=$(base64 -w0 <"$dir/pki/ca.crt")
	for name in "${names[@]}"; do
		local webhook_port=${ports[2 * i]} health_port=${ports[2 * i + 1]} bin=${bins[i]} t0
		i=$((i + 1))
		t0=$(date +%s%N)
		local api=v1alpha1 more=""
		if [[ $name == jobset ]]; then
			# a replicated Job's parallelism and completions mutable (alpha, v0.12),
			# so that a resized JobSet can be shown to be warned
			more="featureGates:
  ElasticJobSet: true"
		fi
		if [[ $name == kueue ]]; then
			# Kueue's own namespace; batch/v1 Jobs only; the visibility API server
			# (an aggregated API the control plane here does not route) off.
			api=v1beta2
			more="namespace: kueue-system
manageJobsWithoutQueueName: false
integrations:
  frameworks: [batch/job]
featureGates:
  VisibilityOnDemand: false"
			"$dir/bin/kubectl" --kubeconfig "$kc" create namespace kueue-system >/dev/null
		fi
		cat >"$dir/$name-manager.yaml" <<EOF
apiVersion: config.$name.x-k8s.io/$api
kind: Configuration
internalCertManagement:
  enable: false
leaderElection:
  leaderElect: false
webhook:
  host: 127.0.0.1
  port: $webhook_port
  certDir: $dir/managers
health:
  healthProbeBindAddress: 127.0.0.1:$health_port
metrics:
  bindAddress: "0"
$more
EOF
		ln -sf "$bin" "$dir/bin/$name-manager"
		local -a wrap=()
		if [[ $name == kueue ]]; then
			# Without its own certificate management Kueue serves metrics with a
			# certificate read from a fixed path (/etc/kueue/metrics/certs,
			# cmd/kueue/main.go). It gets the loopback one there in a mount
			# namespace of its own, /etc overlaid with a directory of this run's:
			# nothing on the machine's /etc changes, and the mount ends with it.
			mkdir -p "$dir/kueue-etc/upper/kueue/metrics/certs" "$dir/kueue-etc/work"
			cp "$dir/managers/tls.crt" "$dir/managers/tls.key" "$dir/kueue-etc/upper/kueue/metrics/certs/"
			local userns=""
			[[ $(id -u) -eq 0 ]] || userns=-Ur
			wrap=(unshare -m $userns --propagation private sh -c \
				'mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1,workdir=$2" /etc && shift 2 && exec "$@"' \
				sh "$dir/kueue-etc/upper" "$dir/kueue-etc/work")
		fi
		KUBECONFIG=$kc setsid "${wrap[@]}" "$dir/bin/$name-manager" --config "$dir/$name-manager.yaml" \
			>"$dir/logs/$name-manager.log" 2>&1 </dev/null &
		echo $! >"$dir/pids/$name-manager.pid"
		wait_for "$name-manager /readyz" "$dir" "$name-manager" 120 \
			curl -sf --max-time 2 "http://127.0.0.1:$health_port/readyz"
		manager_webhooks "$name" "$webhook_port" "$ca" >"$dir/$name-webhooks.yaml"
		"$dir/bin/kubectl" --kubeconfig "$kc" apply -f "$dir/$name-webhooks.yaml" >/dev/null
		wait_for "$name webhooks" "$dir" "$name-manager" 60 manager_answers "$dir" "$name"
		local ms=$((($(date +%s%N) - t0) / 1000000))
		printf 'cluster.sh: %s-manager %s ready in %d.%03d s (/readyz, webhooks answering)\n' \
			"$name" "$(basename "$(readlink -f "$bin")")" $((ms / 1000)) $((ms % 1000)) >&2
	done
}

up() {
	local dir=$1 t0 bin m
	local -a managers
	read -r -a managers <<<"${DISTENV_E2E_MANAGERS:-}"
	for m in "${managers[@]}"; do
		case "$m" in jobset | lws | kueue) ;; *) die "DISTENV_E2E_MANAGERS: unknown manager '$m' (jobset, lws, kueue)" ;; esac
	done
	t0=$(date +%s%N)
	bin=$("$here/build.sh")
	mkdir -p "$dir"/{bin,logs,pids,pki,etcd,kcm}
	touch "$dir/.distenv-e2e"
	# If anything below fails, stop what was started (the directory and its logs stay).
	trap 'echo "cluster.sh: start failed; stopping" >&2; DISTENV_E2E_KEEP=1 down "$dir"' EXIT
	ln -sf "$bin" "$dir/bin/controlplane"
	ln -sf "$bin" "$dir/bin/kubectl"

	local ports etcd_port peer_port api_port kcm_port
	mapfile -t ports < <("$dir/bin/controlplane" freeport 4)
	etcd_port=${ports[0]} peer_port=${ports[1]} api_port=${ports[2]} kcm_port=${ports[3]}
	local address=${DISTENV_E2E_ADDRESS:-127.0.0.1} service_cidr=${DISTENV_E2E_SERVICE_CIDR:-10.0.0.0/24}
	local -a apiserver_args kcm_args
	read -r -a apiserver_args <<<"${DISTENV_E2E_APISERVER_ARGS:-}"
	read -r -a kcm_args <<<"${DISTENV_E2E_KCM_ARGS:-}"
	# The kubernetes Service takes the first address of the range.
	local service_ip
	service_ip=$(python3 -c 'import ipaddress, sys; print(ipaddress.ip_network(sys.argv[1])[1])' "$service_cidr") ||
		die "DISTENV_E2E_SERVICE_CIDR: not a network: $service_cidr"
	"$dir/bin/controlplane" pki --dir "$dir/pki" --service-ip "$service_ip" --ip "$address" \
		${DISTENV_E2E_NODE_NAME:+--node "$DISTENV_E2E_NODE_NAME"}
	local pki="$dir/pki" server="https://$address:$api_port"

	start etcd "$dir" --data-dir "$dir/etcd" \
		--client-url "http://127.0.0.1:$etcd_port" --peer-url "http://127.0.0.1:$peer_port"
	wait_for etcd "$dir" etcd 60 grep -q 'etcd: ready' "$dir/logs/etcd.log"

	cat >"$dir/audit-policy.yaml" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Request
  verbs: ["create"]
  resources:
  - group: ""
    resources: ["pods"]
- level: None
EOF
	start kube-apiserver "$dir" \
		--etcd-servers="http://127.0.0.1:$etcd_port" \
		--bind-address="$address" --advertise-address="$address" --secure-port="$api_port" \
		--cert-dir="$pki" --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
		--client-ca-file="$pki/ca.crt" \
		--service-cluster-ip-range="$service_cidr" \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
		--authorization-mode="${DISTENV_E2E_AUTHORIZATION_MODE:-RBAC}" \
		--allow-privileged=true \
		--profiling=false \
		--audit-policy-file="$dir/audit-policy.yaml" --audit-log-path="$dir/logs/audit.log" \
		--audit-log-format=json --audit-log-mode=blocking --audit-log-maxsize=200 \
		--requestheader-client-ca-file="$pki/ca.crt" --requestheader-allowed-names=front-proxy-client \
		--requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
		--requestheader-extra-headers-prefix=X-Remote-Extra- \
		"${apiserver_args[@]}"
	kubeconfig "$dir/admin.kubeconfig" "$server" "$pki/ca.crt" "$pki/admin.crt" "$pki/admin.key" distenv-e2e-admin
	kubeconfig "$dir/kcm.kubeconfig" "$server" "$pki/ca.crt" "$pki/kcm.crt" "$pki/kcm.key" system:kube-controller-manager
	wait_for kube-apiserver "$dir" kube-apiserver 120 \
		"$dir/bin/kubectl" --kubeconfig "$dir/admin.kubeconfig" get --raw /readyz

	if [[ ${#managers[@]} -gt 0 ]]; then
		install_crds "$dir" "${managers[@]}"
	fi

	start kube-controller-manager "$dir" \
		--kubeconfig="$dir/kcm.kubeconfig" \
		--authentication-kubeconfig="$dir/kcm.kubeconfig" --authorization-kubeconfig="$dir/kcm.kubeconfig" \
		--bind-address=127.0.0.1 --secure-port="$kcm_port" --cert-dir="$dir/kcm" \
		--leader-elect=false \
		--use-service-account-credentials=true \
		--service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" \
		--cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key" \
		--controllers=serviceaccount-controller,serviceaccount-token-controller,statefulset-controller,job-controller,replicaset-controller,deployment-controller,namespace-controller,garbage-collector-controller,root-ca-certificate-publisher-controller${DISTENV_E2E_CONTROLLERS:+,$DISTENV_E2E_CONTROLLERS} \
		--concurrent-job-syncs=5 \
		"${kcm_args[@]}"
	wait_for kube-controller-manager "$dir" kube-controller-manager 60 \
		curl -sfk --max-time 2 "https://127.0.0.1:$kcm_port/healthz"
	# The serviceaccount controller is working once "default" has its ServiceAccount.
	wait_for "ServiceAccount default/default" "$dir" kube-controller-manager 60 \
		"$dir/bin/kubectl" --kubeconfig "$dir/admin.kubeconfig" -n default get serviceaccount default

	if [[ ${#managers[@]} -gt 0 ]]; then
		start_managers "$dir" "${managers[@]}"
	fi

	cat >"$dir/env" <<EOF
export DISTENV_E2E_DIR=$dir
export KUBECONFIG=$dir/admin.kubeconfig
export DISTENV_E2E_SERVER=$server
export DISTENV_E2E_CA=$pki/ca.crt
export DISTENV_E2E_AUDIT_LOG=$dir/logs/audit.log
export DISTENV_E2E_K8S_VERSION=$("$dir/bin/controlplane" version)
export DISTENV_E2E_MANAGERS="${managers[*]}"
export PATH=$dir/bin:\$PATH
EOF
	trap - EXIT
	local ms=$((($(date +%s%N) - t0) / 1000000))
	printf 'cluster.sh: control plane %s up at %s in %d.%03d s (dir %s)\n' \
		"$("$dir/bin/controlplane" version)" "$server" $((ms / 1000)) $((ms % 1000)) "$dir" >&2
	print_env "$dir"
}

cmd=${1:-}
[[ -n "$cmd" ]] || usage
case "$cmd" in
up)
	dir=${2:-}
	if [[ -z "$dir" ]]; then
		dir=$(mktemp -d "${TMPDIR:-/tmp}/distenv-e2e.XXXXXX")
	fi
	dir=$(mkdir -p "$dir" && cd "$dir" && pwd)
	up "$dir"
	;;
env)
	print_env "${2:-${DISTENV_E2E_DIR:?set DISTENV_E2E_DIR or pass DIR}}"
	;;
down)
	down "${2:-${DISTENV_E2E_DIR:?set DISTENV_E2E_DIR or pass DIR}}"
	;;
-h | --help | help) usage ;;
*) usage ;;
esac
