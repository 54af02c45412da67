#!/usr/bin/env bash
# Builds a multi-call binary of the k8s.io/kubernetes module named in go.mod, or
# reuses the cached one, and prints its path on stdout:
#
#   build.sh [controlplane]   etcd, kube-apiserver, kube-controller-manager, kubectl
#   build.sh node             kubelet, kube-scheduler, kube-proxy (test/e2e-node)
#
# The binary is cached as $DISTENV_CACHE/<name>-<key>, where the key hashes
# the Go version, go.mod, go.sum, this script and the sources of the command
# (and of internal/, which both commands use), so
# a later run with the same inputs skips the build entirely. Go's own caches
# (GOCACHE, GOMODCACHE) live under ~/.cache too, so even a changed key rebuilds
# only what changed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=test/e2e/lib/goenv.sh
. "$here/lib/goenv.sh"

name=${1:-controlplane}
case "$name" in
controlplane) what="control plane" minutes=10 ;;
node) what="node (kubelet, kube-scheduler, kube-proxy)" minutes=8 ;;
*)
	echo "build.sh: unknown binary '$name' (controlplane, node)" >&2
	exit 2
	;;
esac

cd "$here"
k8s_version=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v1\./ { print $2; exit }' go.mod)
if [[ -z "$k8s_version" ]]; then
	echo "build.sh: k8s.io/kubernetes version not found in $here/go.mod" >&2
	exit 1
fi
minor=${k8s_version#v1.}
minor=${minor%%.*}

key=$({
	go version
	cat go.mod go.sum build.sh lib/goenv.sh
	cat "cmd/$name"/*.go internal/*/*.go
} | sha256sum | cut -c1-16)
mkdir -p "$DISTENV_CACHE"
out="$DISTENV_CACHE/$name-$key"
if [[ -x "$out" ]]; then
	echo "$out"
	exit 0
fi

# Date of the release's module, so the stamp does not change between builds.
build_date=$(go mod download -json "k8s.io/kubernetes@$k8s_version" 2>/dev/null |
	sed -n 's/.*"Time": *"\([^"]*\)".*/\1/p' | awk 'NR == 1')
build_date=${build_date:-1970-01-01T00:00:00Z}

ldflags=(-s -w)
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=(
		"-X '$pkg.gitVersion=$k8s_version'"
		"-X '$pkg.gitMajor=1'"
		"-X '$pkg.gitMinor=$minor'"
		"-X '$pkg.gitTreeState=clean'"
		"-X '$pkg.buildDate=$build_date'"
	)
done

echo "build.sh: building $what $k8s_version into $out (about $minutes min on 2 cores with an empty Go build cache)" >&2
start=$(date +%s)
go build -trimpath -ldflags "${ldflags[*]}" -o "$out.tmp.$$" "./cmd/$name"
mv -f "$out.tmp.$$" "$out"
echo "build.sh: built in $(($(date +%s) - start)) s" >&2
# Keep only the newest few cached binaries.
ls -1t "$DISTENV_CACHE/$name"-* 2>/dev/null | tail -n +4 | xargs -r rm -f
echo "$out"
