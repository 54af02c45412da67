"""XGBoost (Debian's 1.7) worker: Rabit reads DMLC_TRACKER_URI, DMLC_TRACKER_PORT
and DMLC_TASK_ID from the environment itself. The pod of task 0 also runs the
tracker, for DMLC_NUM_WORKER workers, on DMLC_TRACKER_PORT (ranks in task-id
order). Every worker runs an allreduce, then a small distributed training in
which each worker holds only its own shard of the rows."""
import hashlib
import os
import socket

import report

report.emit_start()
import numpy as np  # noqa: E402
import xgboost as xgb  # noqa: E402
from xgboost import collective  # noqa: E402

tracker = None
if os.environ["DMLC_TASK_ID"] == "0":
    from xgboost.tracker import RabitTracker

    n = int(os.environ["DMLC_NUM_WORKER"])
    tracker = RabitTracker(host_ip="0.0.0.0", n_workers=n,
                           port=int(os.environ["DMLC_TRACKER_PORT"]), sortby="task")
    tracker.start(n)
    report.emit("tracker", port=tracker.port, n_workers=n)

with collective.CommunicatorContext():
    rank, world = collective.get_rank(), collective.get_world_size()
    total = collective.allreduce(np.array([rank + 1.0]), collective.Op.SUM)
    hosts = collective.allreduce(np.eye(world)[rank] * (rank + 1), collective.Op.SUM)
    report.emit("allreduce", rank=rank, world=world, value=float(total[0]),
                each=[float(x) for x in hosts], host=socket.gethostname())
    # Each worker holds its own rows; the histograms are summed across workers.
    rng = np.random.default_rng(7)
    x_all = rng.normal(size=(120 * world, 4))
    y_all = (x_all[:, 0] + 0.5 * x_all[:, 1] > 0).astype(float)
    shard = slice(rank * 120, (rank + 1) * 120)
    dtrain = xgb.DMatrix(x_all[shard], label=y_all[shard])
    booster = xgb.train({"objective": "binary:logistic", "tree_method": "hist",
                         "max_depth": 3, "nthread": 1}, dtrain, num_boost_round=5)
    model = booster.save_raw("json")
    # Accuracy on all rows, and the model's digest: equal on every worker.
    acc = float(((booster.predict(xgb.DMatrix(x_all)) > 0.5) == y_all).mean())
    report.emit("train", rank=rank, rounds=booster.num_boosted_rounds(),
                model_sha=hashlib.sha256(bytes(model)).hexdigest(), accuracy=acc,
                rows=int(dtrain.num_row()))
if tracker is not None:
    tracker.join()
