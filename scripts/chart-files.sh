#!/usr/bin/env bash
# Writes the chart's files that are made from the kind table (src/kinds/):
#   charts/distenv/files/opt-in.cel           the /validate webhook's matchConditions
#   charts/distenv/files/validate-rules.yaml  the /validate webhook's rules
#   charts/distenv/files/rbac-rules.yaml      the ClusterRole's get on the kinds read
# each what `distenv-webhook chart-file NAME` prints.
#
#   scripts/chart-files.sh [--binary PATH]           write them
#   scripts/chart-files.sh --check [--binary PATH]   exit 1 (with a diff) when one differs
#
# `make manifests` runs it before rendering deploy/; `make manifests-check` and
# `make chart` (test/chart/check.py) fail when a file differs.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
check=0
binary=./distenv-webhook
while (($#)); do
	case "$1" in
	--check) check=1 ;;
	--binary)
		binary=$2
		shift
		;;
	*)
		echo "usage: $0 [--check] [--binary PATH]" >&2
		exit 2
		;;
	esac
	shift
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for f in opt-in.cel validate-rules.yaml rbac-rules.yaml; do
	"$binary" chart-file "$f" >"$tmp/$f"
	if ((check)); then
		if ! diff -u "charts/distenv/files/$f" "$tmp/$f" >"$tmp/$f.diff" 2>&1; then
			echo "chart-files: charts/distenv/files/$f differs from \`distenv-webhook chart-file $f\`; run scripts/chart-files.sh (or make manifests)" >&2
			head -n 40 "$tmp/$f.diff" >&2
			status=1
		else
			echo "chart-files: charts/distenv/files/$f is up to date"
		fi
	else
		cp "$tmp/$f" "charts/distenv/files/$f"
		echo "chart-files: wrote charts/distenv/files/$f"
	fi
done
exit $status
