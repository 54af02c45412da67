#!/usr/bin/env bash
# Framework conformance tier: real PyTorch (gloo, env://), torchrun's parser and
# c10d rendezvous, TensorFlow (TFConfigClusterResolver, MultiWorkerMirroredStrategy)
# and JAX (jax.distributed, gloo CPU collectives) form jobs from the env that the
# built ./distenv-webhook injects, each pod played by its own network and UTS
# namespace. Needs root. Closing line: `N passed, N failed`; non-zero exit on any
# failure. Options are passed to conformance.py (e.g. --only sts/jax, --logdir DIR).
#
# Environment: DISTENV_WEBHOOK (binary, default ./distenv-webhook at the repo root),
# FW_TIMEOUT (seconds for the whole tier, default 1500).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
webhook=${DISTENV_WEBHOOK:-$root/distenv-webhook}
prefix="dfw$$"
rundir=$(mktemp -d /tmp/distenv-fw-run.XXXXXX)

fail_line() {
	echo "FAIL  $1"
	echo "0 passed, 1 failed"
	exit 1
}

# Removes what a killed conformance.py could leave: processes inside our own
# namespaces (by pid, from `ip netns pids`), the namespaces, their /etc/netns
# files, and the webhook it started (pid file).
cleanup() {
	local ns pid
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$prefix" || true); do
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			kill -9 "$pid" 2>/dev/null || true
		done
		ip netns del "$ns" 2>/dev/null || true
		rm -rf "/etc/netns/$ns"
	done
	if [ -s "$rundir/webhook.pid" ]; then
		pid=$(cat "$rundir/webhook.pid")
		if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null || true; fi
	fi
	rm -rf "$rundir"
}
trap cleanup EXIT
child=
stopping=
# A signal is passed on to conformance.py (through timeout, which runs it in a
# process group of its own), which stops its ranks, removes its namespaces and
# prints its summary.
on_signal() {
	stopping=1
	[ -n "$child" ] && kill -TERM "$child" 2>/dev/null
	[ -n "$child" ] || exit 130
}
trap on_signal INT TERM

[ "$(id -u)" = 0 ] || fail_line "run.sh must run as root (network namespaces)"
for tool in ip unshare hostname timeout awk; do
	command -v "$tool" >/dev/null || fail_line "$tool not found (scripts/deps-frameworks.sh installs it)"
done

t0=$EPOCHREALTIME
deps_out=$(bash "$root/scripts/deps-frameworks.sh") ||
	fail_line "scripts/deps-frameworks.sh failed"
fw_python=${deps_out##*FW_PYTHON=}
launch_python=$(awk -F= '$1 == "LAUNCH_PYTHON" { print $2 }' <<<"$deps_out")
deepspeed_sdist=$(awk -F= '$1 == "DEEPSPEED_SDIST" { print $2 }' <<<"$deps_out")
deps_s=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
echo "--- dependencies ready in ${deps_s} s ($fw_python)"

# conformance.py prints the closing `N passed, N failed` line itself.
FW_RUNDIR=$rundir timeout -k 15 "${FW_TIMEOUT:-1500}" /usr/bin/python3 -u "$here/conformance.py" \
	--webhook "$webhook" --fw-python "$fw_python" --ns-prefix "$prefix" \
	--launch-python "$launch_python" --deepspeed-sdist "$deepspeed_sdist" \
	--deps-seconds "$deps_s" "$@" &
child=$!
wait "$child"
rc=$?
if [ -n "$stopping" ]; then
	# Bounded: conformance.py gets 30 s to clean up, then is killed.
	for _ in $(seq 30); do
		kill -0 "$child" 2>/dev/null || break
		sleep 1
	done
	if kill -KILL "$child" 2>/dev/null; then
		wait "$child" 2>/dev/null
		rc=137
	else
		wait "$child" 2>/dev/null
		rc=$?
	fi
fi
case $rc in
0 | 1) ;;
*)
	echo "FAIL  conformance.py ended abnormally (exit $rc; 124 = tier timeout, 137 = killed)"
	echo "0 passed, 1 failed"
	;;
esac
exit $(( rc == 0 ? 0 : 1 ))
