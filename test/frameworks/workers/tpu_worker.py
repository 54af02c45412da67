"""TPU rank check: JAX's own GkeTpuCluster (jax/_src/clusters/cloud_tpu_cluster.py)
reads the environment distenv injected, one pod after another.

Input (stdin): a JSON list of envs, one a pod, each exactly the names and values
of distenv's answer. For each, os.environ is made that env alone and JAX's class
methods are called: get_process_id(), get_process_count() and
get_coordinator_address(). No TPU is here, so is_env_present() (it needs a TPU
device) is not asked; the metadata server is not here either, so a read from it
(a MEGASCALE_* value the env lacks) is recorded as a failure rather than made.
wait_for_coordinator resolves the name with retries; it is replaced by a no-op
(the names are cluster names this machine does not resolve). Prints one
`DISTENV-RESULT {json}` line a pod."""
import json
import os
import sys

import report

envs = json.load(sys.stdin)
report.quiet_frameworks()

from jax._src.clusters import cloud_tpu_cluster as ctc  # noqa: E402

metadata_reads = []


def no_metadata(key):
    metadata_reads.append(key)
    return None


ctc.get_tpu_env_value_from_metadata = no_metadata
ctc.BaseTpuCluster.wait_for_coordinator = classmethod(lambda cls, addr, timeout: None)
cluster = ctc.GkeTpuCluster

for i, env in enumerate(envs):
    os.environ.clear()
    os.environ.update(env)
    del metadata_reads[:]
    out = {"pod": i}
    try:
        out["process_id"] = cluster.get_process_id()
        out["process_count"] = cluster.get_process_count()
        out["coordinator"] = cluster.get_coordinator_address(timeout_secs=1)
    except Exception as e:  # reported, judged by conformance.py
        out["error"] = f"{type(e).__name__}: {e}"
    out["metadata_reads"] = sorted(set(metadata_reads))
    report.emit("tpu", **out)
