#!/usr/bin/env bash
# Installs what the framework conformance tier (test/frameworks/) needs:
#   - Debian packages: python3-torch, python3-jsonpatch, python3-venv, iproute2,
#     util-linux (unshare), hostname, gawk;
#   - tensorflow-cpu and jax (CPU) from PyPI into a cached virtualenv under
#     ${DISTENV_CACHE:-/root/.cache/distenv}, with pip's cache beside it;
#   - the launchers (pytorch-lightning, accelerate, paddlepaddle) from PyPI into a
#     second virtualenv made with --system-site-packages, so that Debian's torch
#     1.13 and python3-xgboost are the ones imported (the first venv's numpy 2.x
#     would break that torch);
#   - DeepSpeed's source archive (never installed: it needs torch >= 2), whose
#     deepspeed/comm/comm.py the tier reads.
# Idempotent: a warm run only checks that everything imports (a few seconds).
# Prints LAUNCH_PYTHON=<path> and DEEPSPEED_SDIST=<path>, then the first
# virtualenv's python as the last line: FW_PYTHON=<path>.
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
	python3-xgboost python3-requests python3-yaml python3-psutil
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

# The launchers' virtualenv. pip would read Debian's torch (1.13.0a0+gitunknown,
# a pre-release of 1.13.0) as too old for pytorch-lightning's torch>=1.13.0 and
# download a CUDA torch 2.x; so these are installed --no-deps, each dependency
# pinned here. paddlepaddle is installed with its own dependencies first (numpy
# is Debian's 1.24, which satisfies it).
LPINS_PADDLE=(paddlepaddle==3.2.2)
LPINS=(pytorch-lightning==2.2.5 lightning-utilities==0.11.9 torchmetrics==1.4.3
	fsspec==2024.6.1 tqdm==4.66.5 packaging==24.1
	accelerate==0.34.2 huggingface-hub==0.24.7 safetensors==0.4.5 filelock==3.16.1)
DS_PIN=deepspeed==0.16.9
LVENV=${FW_LAUNCH_VENV:-$CACHE/launchers-venv}
LSTAMP=$LVENV/.distenv-pins
DS_DIR=$CACHE/deepspeed-sdist
DS_SDIST=$DS_DIR/${DS_PIN/==/-}.tar.gz

check_launchers() {
	[ -x "$LVENV/bin/python" ] && [ -f "$LSTAMP" ] &&
		[ "$(cat "$LSTAMP")" = "${LPINS_PADDLE[*]} ${LPINS[*]}" ] &&
		"$LVENV/bin/python" - <<'PY' 2>/dev/null
import numpy, torch, torch.distributed.run
import pytorch_lightning, accelerate, xgboost, xgboost.tracker
import paddle.distributed.launch.main
assert numpy.__version__.startswith("1."), numpy.__version__
assert torch.__file__.startswith("/usr/lib/python3/"), torch.__file__
print("deps-frameworks: torch", torch.__version__, "lightning", pytorch_lightning.__version__,
      "accelerate", accelerate.__version__, "paddle", paddle.__version__,
      "xgboost", xgboost.__version__)
PY
}

if check_launchers >&2; then
	log "launchers already installed in $LVENV"
else
	start=$(date +%s)
	mkdir -p "$CACHE" "$PIP_CACHE_DIR"
	rm -rf "$LVENV"
	/usr/bin/python3 -m venv --system-site-packages "$LVENV"
	"$LVENV/bin/python" -m pip install -q "${LPINS_PADDLE[@]}"
	"$LVENV/bin/python" -m pip install -q --no-deps "${LPINS[@]}"
	printf '%s' "${LPINS_PADDLE[*]} ${LPINS[*]}" >"$LSTAMP"
	check_launchers >&2 || { log "launchers installed but do not import"; exit 1; }
	log "installed ${LPINS_PADDLE[*]} ${LPINS[*]} in $(( $(date +%s) - start ))s"
fi

if [ ! -s "$DS_SDIST" ]; then
	mkdir -p "$DS_DIR"
	"$LVENV/bin/python" -m pip download -q --no-deps -d "$DS_DIR" "$DS_PIN" >&2
fi
tar -tzf "$DS_SDIST" "${DS_PIN/==/-}/deepspeed/comm/comm.py" >/dev/null ||
	{ log "$DS_SDIST has no deepspeed/comm/comm.py"; exit 1; }

echo "LAUNCH_PYTHON=$LVENV/bin/python"
echo "DEEPSPEED_SDIST=$DS_SDIST"
echo "FW_PYTHON=$VENV/bin/python"
