#!/usr/bin/env bash
# Builds cert-manager's controller and CA injector for the chart-install tier
# (test/chart/install.sh: the cert-manager path of docs/install.md), or reuses
# the cached binary, and prints its path on stdout:
#
#   build.sh          the binary (main.go: `controller` and `cainjector`)
#   build.sh crds     the directory of cert-manager's CRDs, from the same module
#
# cert-manager's own commands are separate modules that the Go module proxy does
# not serve (github.com/cert-manager/cert-manager/controller-binary and
# cainjector-binary: 404), so main.go wires the controllers of the
# github.com/cert-manager/cert-manager module (version in go.mod) as those
# commands do. The binary is cached as $DISTENV_CACHE/cert-manager-<key>, the
# key hashing the Go version and this directory; about 5 minutes on 2 cores the
# first time (with the k8s.io modules of the e2e tier already built).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=test/e2e/lib/goenv.sh
. "$here/../../e2e/lib/goenv.sh"
cd "$here"

if [[ "${1:-}" == crds ]]; then
	dir=$(go mod download -json github.com/cert-manager/cert-manager | sed -n 's/.*"Dir": *"\([^"]*\)".*/\1/p')
	if [[ ! -d "$dir/deploy/crds" ]]; then
		echo "build.sh: no deploy/crds in the cert-manager module ($dir)" >&2
		exit 1
	fi
	echo "$dir/deploy/crds"
	exit 0
fi

key=$({
	go version
	cat go.mod go.sum main.go build.sh ../../e2e/lib/goenv.sh
} | sha256sum | cut -c1-16)
mkdir -p "$DISTENV_CACHE"
out="$DISTENV_CACHE/cert-manager-$key"
if [[ -x "$out" ]]; then
	echo "$out"
	exit 0
fi
echo "build.sh: building cert-manager $(awk '$1 == "github.com/cert-manager/cert-manager" { print $2; exit }' go.mod) into $out (about 5 min on 2 cores the first time)" >&2
start=$(date +%s)
go build -trimpath -ldflags "-s -w" -o "$out.tmp.$$" .
mv -f "$out.tmp.$$" "$out"
echo "build.sh: built in $(($(date +%s) - start)) s" >&2
ls -1t "$DISTENV_CACHE/cert-manager"-* 2>/dev/null | tail -n +4 | xargs -r rm -f
echo "$out"
