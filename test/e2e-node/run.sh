#!/usr/bin/env bash
# The node tier: distenv installed from its chart on a control plane with one
# real node, and the pods it mutates started (see docs/e2e-node.md).
#
#   test/e2e-node/run.sh [go test flags...]     e.g. test/e2e-node/run.sh -run 'TestNode2'
#
# 1. builds (or reuses) the control plane and node binaries (test/e2e/build.sh),
#    containerd, crictl and CoreDNS (build-tools.sh) and the images (images.sh);
# 2. makes the node's bridge, starts the control plane on its address
#    (test/e2e/cluster.sh up) and the node (node.sh up);
# 3. runs the TestNode* scenarios of test/e2e/scenarios with DISTENV_E2E_NODE=1:
#    helm install of charts/distenv, training pods, figures;
# 4. stops everything by PID, restores what the node changed (node.sh down) and
#    fails if the machine is not as it was found (node.sh check), also on failure
#    or interrupt.
#
# Only some scenarios: test/e2e-node/run.sh -run 'TestNode8Doctor' (TestMain
# installs the chart either way; -run 'TestNode8Doctor/netpol' for one case).
# Needs root (kubelet, containerd, network). Environment: DISTENV_E2E_KEEP=1
# keeps the directory and logs; DISTENV_E2E_FIGURES_OUT=FILE also writes the
# figures to FILE; DISTENV_E2E_MANAGERS (default "jobset lws") as for test/e2e;
# DISTENV_NODE_CLUSTER_DOMAIN (default ml.example) the cluster's DNS domain.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
e2e="$root/test/e2e"
# shellcheck source=test/e2e/lib/goenv.sh
. "$e2e/lib/goenv.sh"

[[ $(id -u) -eq 0 ]] || {
	echo "run.sh: the node tier needs root (kubelet, containerd, a bridge)" >&2
	exit 1
}
t_start=$(date +%s%N)
since() { # ms since $1
	echo $((($(date +%s%N) - $1) / 1000000))
}
secs() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }

echo "run.sh: binaries (control plane, node, containerd/crictl/CoreDNS)" >&2
t0=$(date +%s%N)
"$e2e/build.sh" >/dev/null
"$e2e/build.sh" node >/dev/null
"$here/build-tools.sh" >/dev/null
export DISTENV_E2E_MANAGERS=${DISTENV_E2E_MANAGERS-jobset lws}
if [[ -n "$DISTENV_E2E_MANAGERS" ]]; then
	# shellcheck disable=SC2086 # a list of names
	"$e2e/build-managers.sh" $DISTENV_E2E_MANAGERS >/dev/null
fi
t_build=$(since "$t0")

echo "run.sh: images (distenv, train, pause)" >&2
t0=$(date +%s%N)
mapfile -t images < <("$here/images.sh")
t_images=$(since "$t0")
archives=()
for line in "${images[@]}"; do
	read -r name ref archive <<<"$line"
	archives+=("$archive")
	case "$name" in
	distenv) export DISTENV_NODE_IMAGE_DISTENV=$ref ;;
	train) export DISTENV_NODE_IMAGE_TRAIN=$ref ;;
	esac
done
export DISTENV_NODE_IMAGES="${archives[*]}"
DISTENV_HELM=$(bash "$root/scripts/deps-image.sh" helm)/helm
export DISTENV_HELM DISTENV_CHART="$root/charts/distenv"
# `kubectl distenv doctor` (TestNode8Doctor) runs the host's build as the plugin.
make -C "$root" -s distenv-webhook >/dev/null
export DISTENV_DOCTOR_BIN="$root/distenv-webhook"

echo "run.sh: compiling the scenarios" >&2
(cd "$e2e" && go test -c -o /dev/null ./scenarios)

dir=$(mktemp -d "${TMPDIR:-/tmp}/distenv-e2e.XXXXXX")
# What cleanup removes, fixed now: cleanup may run inside any function.
readonly run_dir=$dir
status=1
cleanup() {
	local rc=0
	if [[ $status -ne 0 ]]; then
		for f in "$run_dir"/node/logs/{kubelet,containerd,kube-proxy,coredns}.log "$run_dir"/logs/kube-apiserver.log; do
			[[ -f "$f" ]] || continue
			echo "---- last lines of $f ----" >&2
			tail -n 25 "$f" >&2 || true
		done
	fi
	"$here/node.sh" down "$run_dir" || rc=1
	# The control plane before the bridge (it serves on the bridge's address); the
	# directory is kept for node.sh until the check.
	DISTENV_E2E_KEEP=1 "$e2e/cluster.sh" down "$run_dir" 2>&1 | grep -v '^cluster.sh: kept ' >&2 || true
	"$here/node.sh" net-down "$run_dir" || rc=1
	"$here/node.sh" check "$run_dir" || rc=1
	if [[ "${DISTENV_E2E_KEEP:-0}" == 1 ]]; then
		echo "run.sh: kept $run_dir (logs in $run_dir/logs and $run_dir/node/logs)" >&2
	elif awk -v d="$run_dir/" 'index($5, d) == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo; then
		echo "run.sh: kept $run_dir: something is still mounted under it" >&2
		rc=1
	elif [[ -f "$run_dir/.distenv-e2e" ]]; then
		rm -rf "$run_dir"
	else
		rmdir "$run_dir" 2>/dev/null || true # stopped before anything was made in it
	fi
	if [[ $rc -ne 0 ]]; then
		echo "run.sh: FAIL: the machine was not left as found" >&2
		exit 1
	fi
}
trap cleanup EXIT
# shellcheck source=test/e2e/lib/gotest.sh
. "$e2e/lib/gotest.sh"
trap on_signal INT TERM

# The cluster's domain is not cluster.local (kubelet and CoreDNS, node.sh): the
# chart sets none, and the jobs form only if distenv reads this one.
export DISTENV_NODE_CLUSTER_DOMAIN=${DISTENV_NODE_CLUSTER_DOMAIN:-ml.example}
t0=$(date +%s%N)
"$here/node.sh" net-up "$dir"
net=${DISTENV_NODE_NET:-198.19}
export DISTENV_E2E_ADDRESS=$net.0.1 DISTENV_E2E_SERVICE_CIDR=$net.128.0/20 DISTENV_E2E_NODE_NAME=distenv-node
export DISTENV_E2E_AUTHORIZATION_MODE=Node,RBAC
# exec and logs reach the kubelet at its InternalIP, as the cluster's admin.
export DISTENV_E2E_APISERVER_ARGS="--kubelet-preferred-address-types=InternalIP \
--kubelet-client-certificate=$dir/pki/admin.crt --kubelet-client-key=$dir/pki/admin.key"
export DISTENV_E2E_CONTROLLERS=node-lifecycle-controller,endpointslice-controller,endpointslice-mirroring-controller,disruption-controller,pod-garbage-collector-controller
eval "$("$e2e/cluster.sh" up "$dir")"
t_cp=$(since "$t0")
t0=$(date +%s%N)
"$here/node.sh" up "$dir"
eval "$("$e2e/cluster.sh" env "$dir")"
t_node=$(since "$t0")

echo "run.sh: running the node scenarios against $DISTENV_E2E_K8S_VERSION" >&2
t0=$(date +%s%N)
export DISTENV_E2E_NODE=1 # TestMain installs the chart; only TestNode* run
scenarios_test "$e2e" -run '^TestNode' "$@"
status=$scenarios_status
t_test=$(since "$t0")

printf 'run.sh: binaries %s s, images %s s (both cached when unchanged), control plane up %s s, node up %s s, scenarios %s s, total %s s\n' \
	"$(secs "$t_build")" "$(secs "$t_images")" "$(secs "$t_cp")" "$(secs "$t_node")" "$(secs "$t_test")" "$(secs "$(since "$t_start")")" >&2
exit $status
