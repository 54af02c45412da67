#!/usr/bin/env bash
# Installs what make mutation-score needs: universalmutator (the regex-based
# mutation tool; mutants of C by its c rules) from PyPI, pinned, into a cached
# virtualenv under ${DISTENV_CACHE:-/root/.cache/distenv}, and gcov (gcc) for the
# per-line map of which test reaches which mutant. Idempotent: a warm run only
# checks that the tool starts. Prints the tool's path as the last line:
# MUTATE=<path>.
set -euo pipefail

CACHE=${DISTENV_CACHE:-/root/.cache/distenv}
PIN=universalmutator==1.14.1
VENV=${MUTATION_VENV:-$CACHE/mutation-venv}
export PIP_CACHE_DIR=$CACHE/pip
export PIP_DISABLE_PIP_VERSION_CHECK=1
export PIP_NO_INPUT=1

log() { printf 'deps-mutation: %s\n' "$*" >&2; }

. "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
apt_install deps-mutation python3 python3-venv gcc

if [ -x "$VENV/bin/mutate" ] && [ "$(cat "$VENV/.distenv-pins" 2>/dev/null)" = "$PIN" ]; then
	log "$PIN already installed in $VENV"
else
	start=$(date +%s)
	mkdir -p "$CACHE" "$PIP_CACHE_DIR"
	rm -rf "$VENV"
	/usr/bin/python3 -m venv "$VENV"
	"$VENV/bin/python" -m pip install -q "$PIN"
	printf '%s' "$PIN" >"$VENV/.distenv-pins"
	log "installed $PIN in $(($(date +%s) - start))s"
fi
"$VENV/bin/python" -c "import universalmutator" || { log "universalmutator does not import"; exit 1; }
echo "MUTATE=$VENV/bin/mutate"
