#!/usr/bin/env bash
# make bench: builds the load generator and the core-cost driver, then runs
# bench/bench.py (HTTPS throughput and latency against nginx, fixed-rate
# latency, peak RSS, instructions per admission as W grows; a new connection
# per request and kept-alive requests beside 1,024 idle connections, against
# nginx and the controller-runtime peer).
#   BENCH_QUICK=1     short runs for CI (about a minute)
#   BENCH_SECONDS=N   seconds per wrk run (default 5, quick 2)
#   BENCH_ROUNDS=N    rounds over every case (default 3, quick 1)
#   DISTENV_BIN=PATH  the binary to measure (default ./distenv-webhook)
#   BENCH_OUT=DIR     where results go (default bench/out)
#   BENCH_SRC=DIR     the source tree core_cost is built from (default src)
#   BENCH_CORE_ONLY=1 only the callgrind/core tables (no servers)
#   BENCH_CONNECTIONS=0 skip the new-connection and idle-connection rows (they need Go
#                     for the peer: scripts/deps.sh e2e)
#   BENCH_CONNECTIONS_ONLY=1 only those rows (no wrk, fixed-rate, callgrind or cluster parts)
#   BENCH_MUTATION=0  skip the sampled mutation score (quick form only; make mutation-score)
#   BENCH_CLUSTER=0   skip the quick form of bench/cluster.sh (a 200-pod Indexed Job and
#                     JobSet on the e2e control plane, beside no webhook and a
#                     controller-runtime peer; about 2 minutes; needs scripts/deps.sh e2e)
set -euo pipefail
cd "$(dirname "$0")/.."

out=${BENCH_OUT:-bench/out}
bin=${DISTENV_BIN:-./distenv-webhook}
mkdir -p "$out/bin"

for tool in wrk nginx valgrind python3 curl; do
	command -v "$tool" >/dev/null || { echo "bench: $tool is missing: run scripts/deps-bench.sh" >&2; exit 2; }
done
[ -x "$bin" ] || { echo "bench: $bin not built: run make" >&2; exit 2; }

cc=${CC:-cc}
pkgs="libcjson yaml-0.1 libcrypto"
srcdir=${BENCH_SRC:-src}
core=""
# Every kind and framework room (kind_*.c, fw_*.c) of the tree is core; an
# older tree (BENCH_SRC) may have none, or other modules.
rooms=""
for f in "$srcdir"/kind_*.c "$srcdir"/fw_*.c "$srcdir"/*/kind_*.c "$srcdir"/*/fw_*.c; do
	[ -f "$f" ] && rooms="$rooms $(basename "$f" .c)"
done
if [ -d "$srcdir/core" ]; then
	# A tree in wings: the core is every file of lib/, core/, kinds/ and frameworks/
	# (the layer rule keeps them free of the server, the client and the CLI).
	for f in "$srcdir"/lib/*.c "$srcdir"/core/*.c "$srcdir"/kinds/*.c "$srcdir"/frameworks/*.c; do
		[ -f "$f" ] && core="$core $f"
	done
else
	for m in admission verdict plan topology framework kind $rooms env patch workload util strbuf base64 dns file json config yamljson listenaddr annotation validate netpol arena jsonparse; do
		for f in "$srcdir/$m.c" "$srcdir"/*/"$m.c"; do
			[ -f "$f" ] && core="$core $f"
		done
	done
fi
# A tree in wings (src/lib, src/core, ...) has each wing on the include path.
incs="-I$srcdir"
for d in "$srcdir"/*/; do [ -d "$d" ] && incs="$incs -I${d%/}"; done
# shellcheck disable=SC2086
$cc -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra $incs $(pkg-config --cflags $pkgs) \
	-o "$out/bin/core_cost" bench/core_cost.c $core $(pkg-config --libs $pkgs) -lpthread
# loadgen has one build rule, in the Makefile (make loadgen).
loadgen=${LOADGEN:-${BUILD:-build}/tools/loadgen}
[ -n "${LOADGEN:-}" ] || make -s "$loadgen"
cp "$loadgen" "$out/bin/loadgen"
# The controller-runtime peer (bench/cluster/peer), for the new-connection rows.
peer=()
if [ -z "${BENCH_CORE_ONLY:-}" ] && [ "${BENCH_CONNECTIONS:-1}" != 0 ]; then
	# shellcheck source=test/e2e/lib/goenv.sh
	outabs=$(cd "$out" && pwd)
	(. test/e2e/lib/goenv.sh && cd bench/cluster && go build -trimpath -o "$outabs/bin/peer" ./peer)
	peer=(--peer "$out/bin/peer")
fi
# The idle rows hold 1,024 connections open beside the load.
ulimit -n 8192 2>/dev/null || true

python3 bench/bench.py --binary "$bin" --out "$out" ${BENCH_QUICK:+--quick} ${BENCH_CORE_ONLY:+--core-only} \
	${BENCH_CONNECTIONS_ONLY:+--connections-only} "${peer[@]}"
if [ -z "${BENCH_CORE_ONLY:-}" ] && [ -z "${BENCH_CONNECTIONS_ONLY:-}" ] && [ "${BENCH_CLUSTER:-1}" != 0 ]; then
	BENCH_CLUSTER_QUICK=1 DISTENV_WEBHOOK="$bin" BENCH_OUT="$out" bash bench/cluster.sh
fi
# The sampled mutation score (docs/mutants.md), in the quick form CI runs: three
# universalmutator mutants per file, taken file by file in rounds, no mutant started
# after 300 s (CI's cold run stays under an hour); --check fails the step on a
# survivor neither killed nor listed as equivalent. BENCH_MUTATION=0 leaves it out.
if [ -n "${BENCH_QUICK:-}" ] && [ -z "${BENCH_CORE_ONLY:-}" ] && [ -z "${BENCH_CONNECTIONS_ONLY:-}" ] &&
	[ "${BENCH_MUTATION:-1}" != 0 ]; then
	make -s mutation-score MUTATION_ARGS="--sample 3 --time-limit 300 --check"
fi
