#!/usr/bin/env bash
# Installs everything distenv needs on a fresh Debian bookworm machine (as root).
#   scripts/deps.sh            build + unit/integration test dependencies
#   scripts/deps.sh all        also the e2e, framework, chart and image tiers
#   scripts/deps.sh TIER...    build plus the named tiers: e2e frameworks image bench node
# Idempotent: packages already installed are not fetched again.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'deps: %s\n' "$*" >&2; }

# Build and the unit/integration/sanitizer/valgrind tiers.
pkgs=(build-essential pkg-config git ca-certificates
	libmicrohttpd-dev libgnutls28-dev libssl-dev libcjson-dev libyaml-dev libcurl4-openssl-dev
	python3 python3-jsonpatch python3-yaml openssl gnutls-bin curl
	valgrind cppcheck clang-format procps iproute2)

. scripts/apt.sh
apt_install deps "${pkgs[@]}"

tiers=("$@")
if [ "${tiers[0]:-}" = all ]; then
	tiers=(e2e frameworks image bench node)
fi
for t in "${tiers[@]}"; do
	case "$t" in
	e2e | frameworks | image | bench | node)
		if [ -f "scripts/deps-$t.sh" ]; then
			log "tier $t"
			bash "scripts/deps-$t.sh"
			# deps-node.sh needs deps-e2e.sh's toolchain and control plane: done now
			[ "$t" != e2e ] || export DISTENV_DEPS_E2E_DONE=1
		fi
		;;
	*) log "unknown tier '$t' (e2e, frameworks, image, bench, node, all)"; exit 2 ;;
	esac
done
log "ok"
