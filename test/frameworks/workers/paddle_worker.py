"""PaddlePaddle trainer started by `python -m paddle.distributed.launch` with no
argument but this script: the launcher found the job from PADDLE_* alone. Joins
the collective group (gloo on CPU), all_reduces rank+1 and all_gathers the
ranks, and reports what the launcher gave it."""
import os
import socket

import report

report.quiet_frameworks()
import paddle  # noqa: E402
import paddle.distributed as dist  # noqa: E402

paddle.set_device("cpu")
dist.init_parallel_env()
rank, world = dist.get_rank(), dist.get_world_size()
value = paddle.to_tensor([float(rank + 1)])
dist.all_reduce(value)
gathered = []
dist.all_gather(gathered, paddle.to_tensor([rank]))
report.emit("paddle", rank=rank, world=world, value=float(value.numpy()[0]),
            gathered=sorted(int(t.numpy()[0]) for t in gathered), host=socket.gethostname(),
            trainer_id=os.environ.get("PADDLE_TRAINER_ID"),
            master=os.environ.get("PADDLE_MASTER"), pid=os.getpid())
