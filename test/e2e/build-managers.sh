#!/usr/bin/env bash
# Builds the controller managers of JobSet, LeaderWorkerSet and Kueue from their Go
# modules, or reuses the cached ones, and prints their paths on stdout, one a line
# in the order asked.
#
#   build-managers.sh [jobset] [lws] [kueue]   (jobset and lws when none is named)
#
# Each is built from its own module as released, with that module's go.mod and
# go.sum (what `go install MODULE/PKG@VERSION` would do; that command itself needs
# the module proxy's version list, which is not always served): the module archive
# is fetched into GOMODCACHE with `go mod download`, then `go build` runs inside
# it. The two modules depend on other Kubernetes releases than the control plane,
# so they are not part of test/e2e/go.mod.
#
# The binaries are cached as $DISTENV_CACHE/<name>-manager-<key>, the key hashing
# the module version, the Go version and this script, so a later run skips the
# build. The CRDs ship in the same archives; `build-managers.sh --crds NAME`
# prints the CRD files of NAME, one a line, instead of building anything.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=test/e2e/lib/goenv.sh
. "$here/lib/goenv.sh"

jobset_module=sigs.k8s.io/jobset
jobset_version=v0.12.0
jobset_pkg=.
jobset_crds=config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml
# lws v0.10 is not served by the module proxy; v0.9 has the same pod shape.
lws_module=sigs.k8s.io/lws
lws_version=v0.9.0
lws_pkg=./cmd
# The manager also runs the DisaggregatedSet controller, which needs its CRD.
lws_crds="config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml
config/crd/bases/disaggregatedset.x-k8s.io_disaggregatedsets.yaml"
# Kueue: partial admission and elastic Jobs (the README's "When the world changes").
kueue_module=sigs.k8s.io/kueue
kueue_version=v0.19.0
kueue_pkg=./cmd/kueue
kueue_crds="config/components/crd/bases/kueue.x-k8s.io_admissionchecks.yaml
config/components/crd/bases/kueue.x-k8s.io_clusterqueues.yaml
config/components/crd/bases/kueue.x-k8s.io_cohorts.yaml
config/components/crd/bases/kueue.x-k8s.io_localqueues.yaml
config/components/crd/bases/kueue.x-k8s.io_multikueueclusters.yaml
config/components/crd/bases/kueue.x-k8s.io_multikueueconfigs.yaml
config/components/crd/bases/kueue.x-k8s.io_provisioningrequestconfigs.yaml
config/components/crd/bases/kueue.x-k8s.io_resourceflavors.yaml
config/components/crd/bases/kueue.x-k8s.io_topologies.yaml
config/components/crd/bases/kueue.x-k8s.io_workloadpriorityclasses.yaml
config/components/crd/bases/kueue.x-k8s.io_workloads.yaml"

die() {
	echo "build-managers.sh: $*" >&2
	exit 1
}

# moddir NAME: download the module archive (a no-op when cached), print its directory.
moddir() {
	local m="${1}_module" v="${1}_version" dir
	dir=$(cd / && go mod download -json "${!m}@${!v}" |
		sed -n 's/^[[:space:]]*"Dir": *"\([^"]*\)".*/\1/p')
	[[ -n "$dir" && -d "$dir" ]] || die "go mod download ${!m}@${!v} gave no directory"
	echo "$dir"
}

build() {
	local name=$1 m="${1}_module" v="${1}_version" p="${1}_pkg" key out dir start
	key=$({
		go version
		echo "${!m}@${!v} ${!p}"
		cat "$here/build-managers.sh" "$here/lib/goenv.sh"
	} | sha256sum | cut -c1-16)
	mkdir -p "$DISTENV_CACHE"
	out="$DISTENV_CACHE/$name-manager-$key"
	if [[ -x "$out" ]]; then
		echo "$out"
		return 0
	fi
	dir=$(moddir "$name")
	echo "build-managers.sh: building ${!m}@${!v} into $out" >&2
	start=$(date +%s)
	# -mod=readonly: the module's own go.sum decides every dependency.
	(cd "$dir" && go build -trimpath \
		-ldflags "-s -w -X '${!m}/pkg/version.GitVersion=${!v}'" \
		-o "$out.tmp.$$" "${!p}")
	mv -f "$out.tmp.$$" "$out"
	echo "build-managers.sh: built $name-manager in $(($(date +%s) - start)) s" >&2
	# Keep only the newest few cached binaries of this manager.
	ls -1t "$DISTENV_CACHE/$name-manager-"* 2>/dev/null | tail -n +4 | xargs -r rm -f
	echo "$out"
}

if [[ "${1:-}" == --crds ]]; then
	[[ $# -eq 2 ]] || die "usage: build-managers.sh --crds jobset|lws|kueue"
	case "$2" in jobset | lws | kueue) ;; *) die "unknown manager '$2' (jobset, lws, kueue)" ;; esac
	c="${2}_crds"
	d=$(moddir "$2")
	for f in ${!c}; do
		[[ -f "$d/$f" ]] || die "no CRD file $d/$f"
		echo "$d/$f"
	done
	exit 0
fi

names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=(jobset lws)
for n in "${names[@]}"; do
	case "$n" in
	jobset | lws | kueue) build "$n" ;;
	*) die "unknown manager '$n' (jobset, lws, kueue)" ;;
	esac
done
