"""JAX rank: jax.distributed.initialize() finds the coordinator from
JAX_COORDINATOR_ADDRESS, process count and id come from JAX_NUM_PROCESSES /
JAX_PROCESS_ID, and a psum across the processes (gloo CPU collectives) is
checked by the rank itself."""
import os
import sys

import report

report.emit_start()
report.quiet_frameworks()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental import multihost_utils  # noqa: E402

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_cpu_collectives_implementation", "gloo")

# The coordinator address is read by JAX itself from JAX_COORDINATOR_ADDRESS.
jax.distributed.initialize(
    num_processes=int(os.environ["JAX_NUM_PROCESSES"]),
    process_id=int(os.environ["JAX_PROCESS_ID"]),
    initialization_timeout=120,
)
pid, count = jax.process_index(), jax.process_count()
report.emit("init", process_index=pid, process_count=count,
            global_devices=len(jax.devices()), local_devices=jax.local_device_count())

x = jnp.full((jax.local_device_count(),), float(pid + 1))
summed = jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")(x)
value = float(summed[0])
gathered = [int(v) for v in multihost_utils.process_allgather(jnp.array(pid))]
expected = count * (count + 1) / 2
ok = value == expected and gathered == list(range(count))
report.emit("psum", value=value, expected=expected, gathered=gathered, ok=ok)
jax.distributed.shutdown()
sys.exit(0 if ok else 1)
