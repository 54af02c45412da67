"""TensorFlow parameter-server training with a sidecar evaluator, each task's
role and cluster read only from TF_CONFIG (TFConfigClusterResolver), as
TensorFlow's parameter server tutorial runs one binary for every task:

- every task reports what the resolver read and what TensorFlow's own cluster
  checks say of it (multi_worker_util._validate_cluster_spec and the helpers
  that call it; distribute_coordinator._split_cluster_for_evaluator);
- "worker" and "ps" run a tf.distribute.Server until the chief is done;
- "chief" builds a ParameterServerStrategy from the resolver (it connects to
  every task its cluster lists), runs steps on the workers through a
  ClusterCoordinator, and saves a checkpoint;
- "evaluator" connects to nothing: it evaluates the chief's checkpoint.

Usage: tf_ps_worker.py DIR STEPS (DIR: the checkpoints and the chief's done
marker, shared by the tasks as a volume would be; STEPS: steps to schedule).
"""
import os
import socket
import sys
import time

import report

report.emit_start()
report.quiet_frameworks()

import tensorflow as tf  # noqa: E402
from tensorflow.python.distribute import distribute_coordinator  # noqa: E402
from tensorflow.python.distribute import multi_worker_util  # noqa: E402

SHARED, STEPS = sys.argv[1], int(sys.argv[2])
DONE = os.path.join(SHARED, "chief-done")
WAIT = 240  # seconds any task waits for another

resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
cluster = resolver.cluster_spec()
task_type, task_id = resolver.task_type, resolver.task_id
report.emit("resolver", cluster=cluster.as_dict(), task_type=task_type, task_id=task_id,
            rpc_layer=resolver.rpc_layer, master=resolver.master())


def attempt(fn):
    try:
        return fn()
    except Exception as e:  # reported, judged by conformance.py
        return f"raises {type(e).__name__}: {e}"


checks = {
    "validate": attempt(lambda: multi_worker_util._validate_cluster_spec(
        cluster, task_type, task_id) or "ok"),
    "normalized": attempt(
        lambda: multi_worker_util.normalize_cluster_spec(cluster.as_dict()).as_dict()),
    "split": attempt(lambda: distribute_coordinator._split_cluster_for_evaluator(
        cluster, task_type).as_dict()),
    "is_chief": attempt(lambda: multi_worker_util.is_chief(cluster, task_type, task_id)),
}
if task_type in ("chief", "worker", "evaluator"):
    checks["worker_count"] = attempt(lambda: multi_worker_util.worker_count(cluster, task_type))
    checks["id_in_cluster"] = attempt(
        lambda: multi_worker_util.id_in_cluster(cluster, task_type, task_id))
    checks["collective_leader"] = attempt(
        lambda: multi_worker_util.collective_leader(cluster, task_type, task_id))
report.emit("tf-checks", **checks)


def wait_for(cond, what):
    deadline = time.monotonic() + WAIT
    while not cond():
        if time.monotonic() > deadline:
            report.emit("timeout", waited_for=what)
            sys.exit(1)
        time.sleep(0.5)


def accepts(addr):
    host, port = addr.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=2).close()
        return True
    except OSError:
        return False


if task_type in ("worker", "ps"):
    # As the tutorial's tasks do: report a failed task to the caller at once.
    os.environ["GRPC_FAIL_FAST"] = "use_caller"
    server = tf.distribute.Server(cluster, job_name=task_type, task_index=task_id,
                                  protocol=resolver.rpc_layer or "grpc", start=True)
    report.emit("server", target=server.target)
    wait_for(lambda: os.path.exists(DONE), "the chief's done marker")
    sys.exit(0)

if task_type == "evaluator":
    v = tf.Variable(0.0)
    ckpt = tf.train.Checkpoint(v=v)
    seen = None
    for path in tf.train.checkpoints_iterator(SHARED, min_interval_secs=1, timeout=2,
                                              timeout_fn=lambda: os.path.exists(DONE)):
        ckpt.restore(path).expect_partial()
        seen = path
    # The iterator may stop on the marker just after the last checkpoint came.
    last = tf.train.latest_checkpoint(SHARED)
    if last is not None and last != seen:
        ckpt.restore(last).expect_partial()
        seen = last
    report.emit("sidecar", checkpoint=os.path.basename(seen) if seen else None,
                value=float(v.numpy()))
    sys.exit(0 if seen else 1)

# The chief: the coordinator of parameter-server training.
try:
    os.environ["GRPC_FAIL_FAST"] = "use_caller"
    for addr in [a for job in ("ps", "worker") for a in cluster.job_tasks(job)]:
        wait_for(lambda: accepts(addr), addr)
    # Every ps and worker accepts connections; what the strategy waits for now
    # is only what else the cluster lists.
    report.emit("connecting", jobs=sorted(cluster.jobs))
    t0 = time.monotonic()
    strategy = tf.distribute.ParameterServerStrategy(resolver)
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    with strategy.scope():
        v = tf.Variable(0.0)

    @tf.function
    def step():
        v.assign_add(1.0)
        return v.read_value()

    for _ in range(STEPS):
        coordinator.schedule(step)
    coordinator.join()
    path = tf.train.Checkpoint(v=v).save(os.path.join(SHARED, "ckpt"))
    report.emit("ps-training", value=float(v.numpy()), steps=STEPS,
                checkpoint=os.path.basename(path),
                seconds=round(time.monotonic() - t0, 1))
finally:
    open(DONE, "w").close()
