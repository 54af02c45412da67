"""TPU pod, played on CPU: JAX's own GkeTpuCluster (jax/_src/clusters/
cloud_tpu_cluster.py) reads the injected TPU_* and MEGASCALE_* variables for
the process id, the process count and the coordinator (port 8476, JAX's), and
jax.distributed.initialize() forms the job with exactly those values; a psum
across the processes (gloo CPU collectives) checks it. There is no metadata
server here: a MEGASCALE_* value the env lacked would be read from it, so such
a read fails the rank."""
import sys

import report

report.emit_start()
report.quiet_frameworks()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax._src.clusters import cloud_tpu_cluster as ctc  # noqa: E402
from jax.experimental import multihost_utils  # noqa: E402


def no_metadata(key):
    raise RuntimeError(f"JAX asked the metadata server for {key}")


ctc.get_tpu_env_value_from_metadata = no_metadata
jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_cpu_collectives_implementation", "gloo")

cluster = ctc.GkeTpuCluster
pid, count = cluster.get_process_id(), cluster.get_process_count()
coordinator = cluster.get_coordinator_address(timeout_secs=60)
report.emit("tpu", process_id=pid, process_count=count, coordinator=coordinator)
jax.distributed.initialize(coordinator_address=coordinator, num_processes=count,
                           process_id=pid, initialization_timeout=120)
index, total = jax.process_index(), jax.process_count()
x = jnp.full((jax.local_device_count(),), float(index + 1))
value = float(jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")(x)[0])
gathered = [int(v) for v in multihost_utils.process_allgather(jnp.array(index))]
ok = value == total * (total + 1) / 2 and gathered == list(range(total))
report.emit("psum", process_index=index, process_count=total, value=value,
            gathered=gathered, ok=ok)
jax.distributed.shutdown()
sys.exit(0 if ok else 1)
