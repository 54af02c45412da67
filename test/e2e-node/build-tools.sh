#!/usr/bin/env bash
# Builds the node's programs that are not part of k8s.io/kubernetes from their
# own Go modules, or reuses the cached ones, and prints the directory holding
# them on stdout:
#
#   containerd, ctr, containerd-shim-runc-v2   github.com/containerd/containerd/v2
#   crictl                                     sigs.k8s.io/cri-tools
#   coredns                                    github.com/coredns/coredns (only the
#                                              plugins the node's Corefile uses)
#
# containerd and crictl are built inside their module archives as released, with
# their own go.mod and go.sum (`go install M@V` needs the proxy's version list,
# which is not always served). CoreDNS is built from a small main module of our
# own (plugins.go.in) that requires the released module: the full plugin set
# takes several times longer to build. Debian's containerd 1.6 lacks the CRI
# RuntimeConfig call kubelet 1.36 makes, hence v2 from source.
#
# Cached as $DISTENV_CACHE/node-tools-<key>/, the key hashing the versions, the
# Go version, this script and plugins.go.in. About 5 min cold on 2 cores.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=test/e2e/lib/goenv.sh
. "$here/../e2e/lib/goenv.sh"

containerd_module=github.com/containerd/containerd/v2
containerd_version=v2.2.3
critools_module=sigs.k8s.io/cri-tools
critools_version=v1.36.0
coredns_module=github.com/coredns/coredns
coredns_version=v1.14.3

die() {
	echo "build-tools.sh: $*" >&2
	exit 1
}

key=$({
	go version
	echo "$containerd_module@$containerd_version $critools_module@$critools_version $coredns_module@$coredns_version"
	cat "$here/build-tools.sh" "$here/plugins.go.in" "$here/../e2e/lib/goenv.sh"
} | sha256sum | cut -c1-16)
out="$DISTENV_CACHE/node-tools-$key"
if [[ -x "$out/coredns" && -x "$out/crictl" && -x "$out/containerd" ]]; then
	echo "$out"
	exit 0
fi

# moddir MODULE@VERSION: download the module archive (a no-op when cached), print its directory.
moddir() {
	local dir
	dir=$(cd / && go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": *"\([^"]*\)".*/\1/p')
	[[ -n "$dir" && -d "$dir" ]] || die "go mod download $1 gave no directory"
	echo "$dir"
}

tmp="$out.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)

echo "build-tools.sh: building containerd $containerd_version" >&2
dir=$(moddir "$containerd_module@$containerd_version")
(cd "$dir" && CGO_ENABLED=0 go build -trimpath -tags "no_btrfs no_devmapper no_zfs no_aufs" \
	-ldflags "-s -w -X '$containerd_module/version.Version=$containerd_version'" \
	-o "$tmp/" ./cmd/containerd ./cmd/ctr ./cmd/containerd-shim-runc-v2)

echo "build-tools.sh: building crictl $critools_version" >&2
dir=$(moddir "$critools_module@$critools_version")
(cd "$dir" && CGO_ENABLED=0 go build -trimpath \
	-ldflags "-s -w -X '$critools_module/pkg/version.Version=$critools_version'" \
	-o "$tmp/crictl" ./cmd/crictl)

echo "build-tools.sh: building coredns $coredns_version" >&2
mkdir -p "$tmp/coredns-src"
cp "$here/plugins.go.in" "$tmp/coredns-src/main.go"
printf 'module distenv.dev/test/e2e-node/coredns\n\ngo 1.24\n\nrequire %s %s\n' \
	"$coredns_module" "$coredns_version" >"$tmp/coredns-src/go.mod"
# The released module's go.sum first: tidy then only adds what it lacks and keeps
# every version coredns itself pins.
cp "$(moddir "$coredns_module@$coredns_version")/go.sum" "$tmp/coredns-src/go.sum"
(cd "$tmp/coredns-src" && GOFLAGS=-modcacherw go mod tidy &&
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp/coredns" .)
rm -rf "$tmp/coredns-src"

rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "build-tools.sh: built in $(($(date +%s) - start)) s" >&2
ls -1dt "$DISTENV_CACHE"/node-tools-* 2>/dev/null | tail -n +4 | xargs -r rm -rf
echo "$out"
