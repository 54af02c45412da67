#!/usr/bin/env bash
# Installs and prebuilds what the node tier (test/e2e-node, `make e2e-node`)
# needs, on a Debian bookworm machine as root, idempotently:
#   - Debian's runc, CNI plugins (bridge, host-local, loopback), conntrack and
#     nftables (kube-proxy's nftables mode runs nft), curl; buildah and
#     debootstrap for the images (scripts/deps-image.sh), helm (the same script);
#   - the e2e tier's Go toolchain and control plane (scripts/deps-e2e.sh);
#   - the node binary (kubelet, kube-scheduler, kube-proxy from k8s.io/kubernetes,
#     test/e2e/build.sh node: about 6 min cold on 2 cores) and containerd v2,
#     crictl and CoreDNS (test/e2e-node/build-tools.sh: about 5 min cold), all
#     cached in ~/.cache/distenv.
# DISTENV_E2E_PREBUILD=0 skips the builds (test/e2e-node/run.sh makes them).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
log() { printf 'deps-node: %s\n' "$*" >&2; }

. "$root/scripts/apt.sh"
apt_install deps-node runc containernetworking-plugins conntrack nftables curl gcc libc6-dev
bash "$root/scripts/deps-image.sh" all >/dev/null
# deps.sh e2e node has run it in this process tree already (DISTENV_DEPS_E2E_DONE)
[[ "${DISTENV_DEPS_E2E_DONE:-}" == 1 ]] || bash "$root/scripts/deps-e2e.sh"

# shellcheck source=test/e2e/lib/goenv.sh
. "$root/test/e2e/lib/goenv.sh"
if [[ "${DISTENV_E2E_PREBUILD:-1}" != 0 ]]; then
	log "node: $("$root/test/e2e/build.sh" node)"
	log "tools: $("$root/test/e2e-node/build-tools.sh")"
fi
