"""TensorFlow rank: TFConfigClusterResolver reads TF_CONFIG, then a
MultiWorkerMirroredStrategy built from the same environment runs an all-reduce
across the workers, which the rank checks itself."""
import sys

import report

report.emit_start()
report.quiet_frameworks()

import tensorflow as tf  # noqa: E402

resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
report.emit(
    "resolver",
    cluster=resolver.cluster_spec().as_dict(),
    task_type=resolver.task_type,
    task_id=resolver.task_id,
    rpc_layer=resolver.rpc_layer,
    master=resolver.master(),
)

if sys.argv[1:] == ["resolver-only"]:
    sys.exit(0)

# Default construction: the strategy makes its own resolver from TF_CONFIG.
strategy = tf.distribute.MultiWorkerMirroredStrategy()


@tf.function
def step():
    ctx = tf.distribute.get_replica_context()
    mine = tf.cast(ctx.replica_id_in_sync_group, tf.float32) + 1.0
    return ctx.all_reduce(tf.distribute.ReduceOp.SUM, mine), mine


summed, mine = strategy.run(step)
total = strategy.reduce(tf.distribute.ReduceOp.SUM, mine, axis=None)
n = strategy.num_replicas_in_sync
value = float(strategy.experimental_local_results(summed)[0].numpy())
expected = n * (n + 1) / 2
ok = value == expected and float(total.numpy()) == expected
report.emit("mwms", replicas=n, value=value, reduced=float(total.numpy()),
            expected=expected, ok=ok,
            worker_index=strategy.cluster_resolver.task_id)
sys.exit(0 if ok else 1)
