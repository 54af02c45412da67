#!/usr/bin/env bash
# Installs what the framework conformance tier (test/frameworks/) needs:
#   - Debian packages: python3-torch, python3-jsonpatch, python3-venv, iproute2,
#     util-linux (unshare), hostname, gawk;
#   - tensorflow-cpu and jax (CPU) from PyPI into a cached virtualenv under
#     ${DISTENV_CACHE:-/root/.cache/distenv}, with pip's cache beside it.
# Idempotent: a warm run only checks that everything imports (a few seconds).
# Prints the virtualenv's python as the last line: FW_PYTHON=<path>.
set -euo pipefail

CACHE=${DISTENV_CACHE:-/root/.cache/distenv}
# Pinned versions known to work together on Debian bookworm's python3 (3.11).
PINS=(tensorflow-cpu==2.20.0 jax==0.7.2 jaxlib==0.7.2
	numpy==2.4.6 ml_dtypes==0.6.0 protobuf==7.36.2)
VENV=${FW_VENV:-$CACHE/frameworks-venv}
STAMP=$VENV/.distenv-pins
export PIP_CACHE_DIR=$CACHE/pip
export PIP_DISABLE_PIP_VERSION_CHECK=1
export PIP_NO_INPUT=1

log() { printf 'deps-frameworks: %s\n' "$*" >&2; }

apt_pkgs=(python3 python3-torch python3-jsonpatch python3-venv python3-numpy
	iproute2 util-linux hostname)
. "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
apt_install deps-frameworks "${apt_pkgs[@]}"

/usr/bin/python3 -c 'import torch, torch.distributed, jsonpatch' ||
	{ log "python3-torch or python3-jsonpatch does not import"; exit 1; }

check_venv() {
	[ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] &&
		[ "$(cat "$STAMP")" = "${PINS[*]}" ] &&
		"$VENV/bin/python" - <<'PY' 2>/dev/null
import os
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
import jax
assert tf.distribute.cluster_resolver.TFConfigClusterResolver
assert tf.distribute.MultiWorkerMirroredStrategy
assert jax.distributed.initialize
jax.config.update("jax_cpu_collectives_implementation", "gloo")
print("deps-frameworks: tensorflow", tf.__version__, "jax", jax.__version__)
PY
}

if check_venv >&2; then
	log "tensorflow-cpu and jax already installed in $VENV"
else
	start=$(date +%s)
	mkdir -p "$CACHE" "$PIP_CACHE_DIR"
	rm -rf "$VENV"
	/usr/bin/python3 -m venv "$VENV"
	"$VENV/bin/python" -m pip install -q --upgrade pip
	"$VENV/bin/python" -m pip install -q "${PINS[@]}"
	printf '%s' "${PINS[*]}" >"$STAMP"
	check_venv >&2 || { log "tensorflow/jax installed but do not import"; exit 1; }
	log "installed ${PINS[*]} in $(( $(date +%s) - start ))s"
fi
echo "FW_PYTHON=$VENV/bin/python"
