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

# ensure_venv WHAT DIR PINS CHECK INSTALL: keeps the virtualenv DIR whose stamp
# says PINS and whose CHECK (a function reading DIR/bin/python) passes, else makes
# it again with INSTALL (a function given DIR) and stamps it.
ensure_venv() {
	local what=$1 dir=$2 pins=$3 check=$4 install=$5 start
	if [ -x "$dir/bin/python" ] && [ "$(cat "$dir/.distenv-pins" 2>/dev/null)" = "$pins" ] &&
		"$check" "$dir/bin/python" >&2 2>/dev/null; then
		log "$what already installed in $dir"
		return
	fi
	start=$(date +%s)
	mkdir -p "$CACHE" "$PIP_CACHE_DIR"
	rm -rf "$dir"
	"$install" "$dir"
	printf '%s' "$pins" >"$dir/.distenv-pins"
	"$check" "$dir/bin/python" >&2 || { log "$what installed but do not import"; exit 1; }
	log "installed $pins in $(( $(date +%s) - start ))s"
}

check_frameworks() {
	"$1" - <<'PY'
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

install_frameworks() {
	/usr/bin/python3 -m venv "$1"
	"$1/bin/python" -m pip install -q --upgrade pip
	"$1/bin/python" -m pip install -q "${PINS[@]}"
}

ensure_venv "tensorflow-cpu and jax" "$VENV" "${PINS[*]}" check_frameworks install_frameworks

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
DS_DIR=$CACHE/deepspeed-sdist
DS_SDIST=$DS_DIR/${DS_PIN/==/-}.tar.gz

check_launchers() {
	"$1" - <<'PY'
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

install_launchers() {
	/usr/bin/python3 -m venv --system-site-packages "$1"
	"$1/bin/python" -m pip install -q "${LPINS_PADDLE[@]}"
	"$1/bin/python" -m pip install -q --no-deps "${LPINS[@]}"
}

ensure_venv launchers "$LVENV" "${LPINS_PADDLE[*]} ${LPINS[*]}" check_launchers install_launchers

if [ ! -s "$DS_SDIST" ]; then
	mkdir -p "$DS_DIR"
	"$LVENV/bin/python" -m pip download -q --no-deps -d "$DS_DIR" "$DS_PIN" >&2
fi
tar -tzf "$DS_SDIST" "${DS_PIN/==/-}/deepspeed/comm/comm.py" >/dev/null ||
	{ log "$DS_SDIST has no deepspeed/comm/comm.py"; exit 1; }

echo "LAUNCH_PYTHON=$LVENV/bin/python"
echo "DEEPSPEED_SDIST=$DS_SDIST"
echo "FW_PYTHON=$VENV/bin/python"
