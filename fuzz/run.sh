#!/usr/bin/env bash
# make fuzz: builds the libFuzzer targets with clang (ASan + UBSan), replays
# every committed regression input and seed, and every artifact an earlier run
# kept, then fuzzes each target for FUZZ_SECONDS (default 60). Crashes, leaks,
# timeouts and out-of-memory inputs land in FUZZ_WORK/artifacts/<target>/ and
# fail the run, and every later run while they still fail; a crash found there
# is committed to fuzz/regressions/<target>/ once fixed, so every later run
# replays it.
#   FUZZ_SECONDS=N     seconds per target (0: replay only)
#   FUZZ_TARGETS="…"   subset of: admission render config kube kubeconfig
#   FUZZ_WORK=DIR      growing corpus and artifacts
#                      (default ${XDG_CACHE_HOME:-$HOME/.cache}/distenv-fuzz)
set -uo pipefail
cd "$(dirname "$0")/.."

secs=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-admission render config kube kubeconfig jsonparse}
work=${FUZZ_WORK:-${XDG_CACHE_HOME:-$HOME/.cache}/distenv-fuzz}
build=${BUILD:-build}/fuzz
cc=${FUZZ_CC:-clang}

command -v "$cc" >/dev/null || { echo "fuzz: $cc is missing: run scripts/deps-bench.sh" >&2; exit 2; }

# Which sources each target needs (the pure core only: no sockets, no TLS).
# The core is every file of lib/, core/, kinds/ and frameworks/ (the layer rule
# keeps them free of the server, the client and the CLI), so a new one needs no
# line here.
core=""
for f in src/lib/*.c src/core/*.c src/kinds/*.c src/frameworks/*.c; do core="$core $(basename "$f" .c)"; done
declare -A srcs=(
	[admission]="$core"
	[render]="$core render"
	[config]="$core"
	[kube]="$core kube kubeconfig lookupcache log metrics"
	[kubeconfig]="kubeconfig util strbuf base64 file dns yamljson"
	[jsonparse]="jsonparse json strbuf arena"
)
declare -A maxlen=([admission]=65536 [render]=16384 [config]=4096 [kube]=16384 [kubeconfig]=16384 [jsonparse]=65536)
declare -A dict=([admission]=admission [render]=yaml [config]=yaml [kube]=admission [kubeconfig]=yaml [jsonparse]=admission)
declare -A libs=([kube]="libcurl")

pkgs="libcjson yaml-0.1 openssl"
incs=""
for d in src/*/; do incs="$incs -I${d%/}"; done
cflags="-std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer $incs $(pkg-config --cflags $pkgs libcurl openssl)"
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
mkdir -p "$build/obj"

pass=0
fail=0
ok() { pass=$((pass + 1)); printf 'fuzz: ok   %s\n' "$*"; }
bad() { fail=$((fail + 1)); printf 'fuzz: FAIL %s\n' "$*"; }

# Objects, rebuilt when their source is newer.
for m in $core yamljson render kube kubeconfig lookupcache log metrics mono; do
	o="$build/obj/$m.o"
	c=$(echo src/*/"$m.c")
	if [ ! -f "$o" ] || [ "$c" -nt "$o" ] || [ -n "$(find src -name '*.h' -newer "$o" -print -quit)" ]; then
		# shellcheck disable=SC2086
		$cc $cflags $san -fsanitize=fuzzer-no-link -c -o "$o" "$c" || { echo "fuzz: cannot build $c" >&2; exit 2; }
	fi
done

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

for t in $targets; do
	[ -n "${srcs[$t]:-}" ] || { bad "$t: unknown target"; continue; }
	exe="$build/fuzz_$t"
	objs=""
	for m in ${srcs[$t]}; do objs="$objs $build/obj/$m.o"; done
	# shellcheck disable=SC2086
	if ! $cc $cflags $san -fsanitize=fuzzer -o "$exe" "fuzz/fuzz_$t.c" $objs \
		$(pkg-config --libs $pkgs ${libs[$t]:-}) -lpthread; then
		bad "$t: build"
		continue
	fi

	# 1. Replay: committed regressions and seeds, each input once.
	inputs=()
	for f in fuzz/regressions/"$t"/* fuzz/corpus/"$t"/*; do
		[ -f "$f" ] && [ "$(basename "$f")" != .gitkeep ] && inputs+=("$f")
	done
	if ((${#inputs[@]})); then
		if "$exe" -runs=1 -timeout=20 -rss_limit_mb=2048 "${inputs[@]}" >"$build/replay-$t.log" 2>&1; then
			ok "$t: replayed ${#inputs[@]} regression and seed inputs"
		else
			bad "$t: replay (see $build/replay-$t.log)"
			tail -40 "$build/replay-$t.log"
		fi
	fi

	# 2. Every artifact an earlier run found and kept (crash, leak, timeout, oom,
	#    slow unit), each on its own: one that still fails fails the run, so an
	#    unfixed crash stays red until it is fixed and committed as a regression.
	corpus="$work/corpus/$t"
	arts="$work/artifacts/$t"
	mkdir -p "$corpus" "$arts"
	kept=0
	still=0
	while IFS= read -r -d '' a; do
		kept=$((kept + 1))
		if ! "$exe" -runs=1 -timeout=20 -rss_limit_mb=2048 "$a" >"$build/artifact-$t.log" 2>&1; then
			still=$((still + 1))
			bad "$t: kept artifact $a still fails:"
			grep -E 'ERROR|SUMMARY|runtime error' "$build/artifact-$t.log" | head -5 | sed 's/^/      /'
		else
			printf 'fuzz:      %s: kept artifact %s passes now: cp it to fuzz/regressions/%s/ and remove it\n' \
				"$t" "$a" "$t"
		fi
	done < <(find "$arts" -type f -print0)
	if [ "$kept" -gt 0 ] && [ "$still" -eq 0 ]; then
		ok "$t: replayed $kept kept artifacts of earlier runs, none fails"
	fi

	# 3. Fuzz for a bounded time, growing a corpus kept across runs.
	[ "$secs" -gt 0 ] || continue
	before=$(find "$arts" -type f | wc -l)
	log="$build/fuzz-$t.log"
	"$exe" "$corpus" "fuzz/corpus/$t" -max_total_time="$secs" -max_len="${maxlen[$t]}" \
		-timeout=10 -rss_limit_mb=2048 -dict="fuzz/dict/${dict[$t]}.dict" \
		-artifact_prefix="$arts/" -print_final_stats=1 >"$log" 2>&1
	rc=$?
	after=$(find "$arts" -type f | wc -l)
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
	if [ "$rc" -eq 0 ] && [ "$after" -eq "$before" ]; then
		ok "$t: ${secs}s, ${runs:-?} executions, ${cov:-cov: ?}, corpus $(find "$corpus" -type f | wc -l) inputs"
	else
		bad "$t: exit $rc, new artifacts in $arts (log $log):"
		find "$arts" -type f -newer "$exe" | sed 's/^/      /'
		grep -E 'ERROR|SUMMARY|runtime error' "$log" | head -10
		echo "      reproduce: $exe FILE; once fixed: cp FILE fuzz/regressions/$t/"
	fi
done

echo "fuzz: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
