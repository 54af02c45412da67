#!/usr/bin/env bash
# Installs and prebuilds what the end-to-end tier (test/e2e) needs, on a Debian
# bookworm machine as root:
#   - a Go toolchain at least as new as test/e2e/go.mod asks for (a Go >= 1.21
#     fetches the exact toolchain through the Go module proxy by itself);
#   - curl (health checks of kube-controller-manager);
#   - the Go modules of test/e2e, into ~/.cache/go-mod;
#   - the control-plane binary (etcd, kube-apiserver, kube-controller-manager,
#     kubectl from k8s.io/kubernetes), cached in ~/.cache/distenv: the first build
#     takes about 10 minutes on 2 cores, later runs reuse it at once;
#   - the JobSet, LeaderWorkerSet and Kueue controller managers
#     (test/e2e/build-managers.sh, their modules and CRDs into ~/.cache/go-mod, the
#     binaries into ~/.cache/distenv: 2 to 4 minutes each the first time, Kueue's 8
#     to 19); openssl signs their webhook certificate;
#   - cert-manager's controller and CA injector for the chart-install tier
#     (test/chart/cert-manager/build.sh, about 5 minutes the first time);
#   - the scenarios' test binary (test/e2e/scenarios) and bench/cluster's
#     clusterbench and peer, compiled once so that Go's build cache holds their
#     packages (about 3 minutes the first time; the tiers then only link).
# Idempotent and fast when everything is there. DISTENV_E2E_PREBUILD=0 skips the
# builds (test/e2e/run.sh builds what it needs).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
log() { printf 'deps-e2e: %s\n' "$*" >&2; }

. "$(dirname "${BASH_SOURCE[0]}")/apt.sh"

apt_install deps-e2e ca-certificates curl git openssl

if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
	export PATH="/usr/local/go/bin:$PATH"
fi
if ! command -v go >/dev/null 2>&1; then
	# Debian's own Go is too old to build Kubernetes, and too old (< 1.21) to
	# fetch a newer toolchain; say so plainly.
	log "no Go toolchain: install Go >= $(awk '$1 == "go" { print $2 }' "$root/test/e2e/go.mod") at /usr/local/go"
	exit 1
fi

# shellcheck source=test/e2e/lib/goenv.sh
. "$root/test/e2e/lib/goenv.sh"
cd "$root/test/e2e"
# With GOTOOLCHAIN=auto this also fetches the toolchain go.mod names if the
# installed one is older.
log "$(go version)"
go mod download
if [[ "${DISTENV_E2E_PREBUILD:-1}" != 0 ]]; then
	log "control plane: $(./build.sh)"
	log "managers: $(./build-managers.sh jobset lws kueue | tr '\n' ' ')"
	log "cert-manager: $("$root/test/chart/cert-manager/build.sh")"
	start=$(date +%s)
	go test -c -o /dev/null ./scenarios
	(cd "$root/bench/cluster" && go build -trimpath -o /dev/null . && go build -trimpath -o /dev/null ./peer)
	log "scenarios and bench/cluster compiled in $(($(date +%s) - start)) s"
fi
