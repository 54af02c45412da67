#!/usr/bin/env bash
# Development certificates for running distenv-webhook on this machine:
# writes certs/out/{ca.crt,tls.crt,tls.key} (the key mode 0600) with
# `distenv-webhook certs`, unless they exist and are valid for another day.
# Generated files are ignored by git; never commit them.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-certs/out}
bin=${DISTENV_BIN:-./distenv-webhook}
if [ -f "$out/tls.crt" ] && [ -f "$out/tls.key" ] &&
	openssl x509 -in "$out/tls.crt" -noout -checkend 86400 >/dev/null 2>&1; then
	echo "certs: using $out (valid for more than a day)"
	exit 0
fi
"$bin" certs --service distenv --namespace distenv-system --out "$out" --dns "$(hostname)"
