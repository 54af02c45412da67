#!/usr/bin/env bash
# make faults: soak and fault tests against the real binary on loopback.
#   FAULTS_QUICK=1     CI size: 100,000 admissions in the soak (after 300,000 to warm up),
#                      300 under valgrind
#   FAULTS_SOAK=N      admissions in the soak (default 1,000,000)
#   DISTENV_BIN=PATH   the binary (default ./distenv-webhook)
#   test/faults/run.sh [CASE...]   signals tls_policy framing tls_refused lookups lookup_queue body_budget conn_limit conn_flood slowloris cert_swap cert_validity sigterm drain_keepalive drain_deadline valgrind soak
# Closes with "faults: N passed, N failed"; exit 1 when any case failed.
set -euo pipefail
cd "$(dirname "$0")/../.."

bin=${DISTENV_BIN:-./distenv-webhook}
out=${BUILD:-build}/faults
[ -x "$bin" ] || { echo "faults: $bin not built: run make" >&2; exit 2; }
for tool in valgrind python3; do
	command -v "$tool" >/dev/null || { echo "faults: $tool is missing: run scripts/deps-bench.sh" >&2; exit 2; }
done
mkdir -p "$out"
# loadgen has one build rule, in the Makefile (make loadgen).
loadgen=${LOADGEN:-${BUILD:-build}/tools/loadgen}
[ -n "${LOADGEN:-}" ] || make -s "$loadgen"
# Hundreds of sockets on both sides.
ulimit -n 4096 2>/dev/null || true

args=(--binary "$bin" --loadgen "$loadgen")
[ -n "${FAULTS_QUICK:-}" ] && args+=(--quick)
[ -n "${FAULTS_SOAK:-}" ] && args+=(--soak "$FAULTS_SOAK")
exec python3 test/faults/faults.py "${args[@]}" "$@"
