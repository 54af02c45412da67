#!/usr/bin/env bash
# Dependencies of make bench, make fuzz and make faults on Debian bookworm (as root):
# wrk and nginx (HTTPS comparison), valgrind (callgrind, memcheck), clang with its
# libFuzzer/sanitizer runtimes, OpenSSL headers (bench/loadgen), Python 3, gnutls-cli
# (the TLS policy case) and python3-cryptography (certificates with chosen dates);
# universalmutator for the sampled mutation score (scripts/deps-mutation.sh).
# Idempotent: does nothing when everything is installed.
set -euo pipefail

pkgs=(wrk nginx-light clang libclang-rt-14-dev valgrind libssl-dev pkg-config
	python3 curl procps openssl gnutls-bin python3-cryptography)

. "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
apt_install deps-bench "${pkgs[@]}"
# nginx-light's package starts a system nginx on :80; the benchmarks run their own.
if command -v systemctl >/dev/null && systemctl is-active -q nginx 2>/dev/null; then
	systemctl stop nginx || true
fi
bash "$(dirname "${BASH_SOURCE[0]}")/deps-mutation.sh" >&2
echo "deps-bench: ok" >&2
