#!/usr/bin/env bash
# What a pod webhook costs a cluster: `make bench-cluster` (docs/benchmarks.md;
# docs/benchmarks-history.md, "What distenv costs a cluster"). Figures, not a test.
#
# Starts the e2e tier's control plane (test/e2e/cluster.sh: etcd, kube-apiserver,
# kube-controller-manager, the JobSet manager; no scheduler, pods stay Pending)
# and runs bench/cluster (clusterbench): an Indexed Job and a JobSet, each under
# no webhook, distenv (look-ups on) and a controller-runtime peer
# (bench/cluster/peer), interleaved, on this one machine.
#
# Environment:
#   BENCH_CLUSTER_QUICK=1     200-pod Indexed Job, JobSet of 2 Jobs x 100 pods, one round
#   BENCH_CLUSTER_ROUNDS=N    interleaved rounds (default 1)
#   BENCH_CLUSTER_ARGS="..."  more clusterbench flags (-pods, -jobset-jobs, -jobset-pods,
#                             -variants none,distenv,peer, -workloads job,jobset)
#   BENCH_CLUSTER_KCM_QPS=N   kube-controller-manager's --kube-api-qps (default 500;
#                             its own default, 20, makes the Job controller the bound)
#   DISTENV_WEBHOOK=PATH      the distenv-webhook to measure (default ./distenv-webhook)
#   BENCH_OUT=DIR             where cluster.md / cluster.json go (default bench/out)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
e2e=$root/test/e2e
# shellcheck source=test/e2e/lib/goenv.sh
. "$e2e/lib/goenv.sh"

webhook=${DISTENV_WEBHOOK:-$root/distenv-webhook}
[[ -x "$webhook" ]] || {
	echo "bench/cluster.sh: $webhook not found: build it first (make)" >&2
	exit 1
}
webhook=$(cd "$(dirname "$webhook")" && pwd)/$(basename "$webhook")
out=${BENCH_OUT:-$root/bench/out}
mkdir -p "$out"

echo "bench/cluster.sh: control plane, JobSet manager, clusterbench and the peer webhook" >&2
"$e2e/build.sh" >/dev/null
"$e2e/build-managers.sh" jobset >/dev/null
bin=$DISTENV_CACHE/bench-cluster
mkdir -p "$bin"
# The pinned go.mod/go.sum decide every module (fetched through the module proxy once).
(cd "$here/cluster" && go build -trimpath -o "$bin/clusterbench" . && go build -trimpath -o "$bin/peer" ./peer)

args=()
if [[ "${BENCH_CLUSTER_QUICK:-0}" == 1 ]]; then
	args+=(-pods 200 -jobset-jobs 2 -jobset-pods 100)
fi
args+=(-rounds "${BENCH_CLUSTER_ROUNDS:-1}")
# shellcheck disable=SC2206 # a list of flags
args+=(${BENCH_CLUSTER_ARGS:-})

dir=$(mktemp -d "${TMPDIR:-/tmp}/distenv-bench-cluster.XXXXXX")
test_pid=
cleanup() {
	[[ -n "$test_pid" ]] && kill -TERM "$test_pid" 2>/dev/null
	"$e2e/cluster.sh" down "$dir" || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "bench/cluster.sh: before: $(uptime)" >&2
qps=${BENCH_CLUSTER_KCM_QPS:-500}
eval "$(DISTENV_E2E_MANAGERS=jobset DISTENV_E2E_KCM_ARGS="--kube-api-qps=$qps --kube-api-burst=$((2 * qps))" \
	"$e2e/cluster.sh" up "$dir")"
echo "bench/cluster.sh: kube-controller-manager --kube-api-qps=$qps; $(nproc) cores" >&2
set +e
"$bin/clusterbench" -distenv "$webhook" -peer "$bin/peer" -out "$out" "${args[@]}" &
test_pid=$!
wait "$test_pid"
status=$?
test_pid=
set -e
echo "bench/cluster.sh: after: $(uptime)" >&2
exit $status
