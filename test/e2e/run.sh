#!/usr/bin/env bash
# The end-to-end tier: distenv against a real kube-apiserver and
# kube-controller-manager (see docs/e2e.md).
#
#   test/e2e/run.sh [go test flags...]     e.g. test/e2e/run.sh -run 'TestStatefulSet'
#
# 1. builds (or reuses) the control-plane binary and the test binary;
# 2. starts etcd, kube-apiserver and kube-controller-manager on loopback
#    (cluster.sh up), with a fresh CA, admin kubeconfig and service-account keys;
# 3. runs the scenarios with `go test` (scenarios/): they start
#    `distenv-webhook serve`, register it, create workloads and check the stored pods,
#    and finally print the 200-completion admission figures;
# 4. tears everything down, also on failure or interrupt.
#
# Environment: DISTENV_WEBHOOK (default ./distenv-webhook at the repo root),
# DISTENV_E2E_KEEP=1 keeps the cluster directory and its logs,
# DISTENV_E2E_FIGURES=0 skips the 200-pod figures,
# DISTENV_E2E_FIGURES_OUT=FILE also writes the figures to FILE,
# DISTENV_E2E_MANAGERS (default "jobset lws kueue") names the controller managers to run
# (build-managers.sh; "" runs none and the JobSet/LeaderWorkerSet scenarios skip).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=test/e2e/lib/goenv.sh
. "$here/lib/goenv.sh"

t_start=$(date +%s%N)
elapsed() { # since t_start, in seconds with 1 decimal
	local ms=$((($(date +%s%N) - t_start) / 1000000))
	printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100))
}

webhook=${DISTENV_WEBHOOK:-$root/distenv-webhook}
if [[ ! -x "$webhook" ]]; then
	echo "run.sh: $webhook not found or not executable: build it first (make)" >&2
	exit 1
fi
export DISTENV_WEBHOOK=$(cd "$(dirname "$webhook")" && pwd)/$(basename "$webhook")

echo "run.sh: control-plane binary" >&2
t0=$(date +%s%N)
"$here/build.sh" >/dev/null
t_build=$((($(date +%s%N) - t0) / 1000000))

export DISTENV_E2E_MANAGERS=${DISTENV_E2E_MANAGERS-jobset lws kueue}
t_managers=0
if [[ -n "$DISTENV_E2E_MANAGERS" ]]; then
	echo "run.sh: controller managers ($DISTENV_E2E_MANAGERS)" >&2
	t0=$(date +%s%N)
	# shellcheck disable=SC2086 # a list of names
	"$here/build-managers.sh" $DISTENV_E2E_MANAGERS >/dev/null
	t_managers=$((($(date +%s%N) - t0) / 1000000))
fi

echo "run.sh: compiling the scenarios" >&2
(cd "$here" && go test -c -o /dev/null ./scenarios)

dir=$(mktemp -d "${TMPDIR:-/tmp}/distenv-e2e.XXXXXX")
status=1
cleanup() {
	if [[ $status -ne 0 && -d "$dir/logs" ]]; then
		for f in kube-apiserver kube-controller-manager webhook jobset-manager lws-manager kueue-manager; do
			[[ -f "$dir/logs/$f.log" ]] || continue
			echo "---- last lines of $f.log ----" >&2
			tail -n 40 "$dir/logs/$f.log" >&2 || true
		done
	fi
	"$here/cluster.sh" down "$dir" || true
}
trap cleanup EXIT
# shellcheck source=test/e2e/lib/gotest.sh
. "$here/lib/gotest.sh"
trap on_signal INT TERM

t0=$(date +%s%N)
eval "$("$here/cluster.sh" up "$dir")"
t_up=$((($(date +%s%N) - t0) / 1000000))

echo "run.sh: running the scenarios against $DISTENV_E2E_K8S_VERSION" >&2
t0=$(date +%s%N)
scenarios_test "$here" "$@"
status=$scenarios_status
t_test=$((($(date +%s%N) - t0) / 1000000))

printf 'run.sh: control plane binary %d.%03d s, managers %d.%03d s (both cached when unchanged), control plane up %d.%03d s, scenarios %d.%03d s, total %s s\n' \
	$((t_build / 1000)) $((t_build % 1000)) $((t_managers / 1000)) $((t_managers % 1000)) $((t_up / 1000)) $((t_up % 1000)) \
	$((t_test / 1000)) $((t_test % 1000)) "$(elapsed)" >&2
exit $status
