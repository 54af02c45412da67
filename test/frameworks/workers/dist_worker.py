"""One process started by a launcher (torchrun, accelerate): joins the world the
launcher set up for it and reports its global rank, world size and local rank,
and every member of the world, gathered across it.

  dist_worker.py torchrun     init_process_group("gloo") from the launcher's env
  dist_worker.py accelerate   accelerate's PartialState (its own init)"""
import os
import socket
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

import report

mode = sys.argv[1] if len(sys.argv) > 1 else "torchrun"
if mode == "accelerate":
    from accelerate import PartialState

    # accelerate 0.34's MULTI_CPU set_device() calls torch.cpu.device_count()
    # and torch.cpu.set_device(), which torch 2.x has (1, and a no-op) and
    # Debian's 1.13 lacks: the same two, nothing else.
    if not hasattr(torch.cpu, "device_count"):
        torch.cpu.device_count = lambda: 1
    if not hasattr(torch.cpu, "set_device"):
        torch.cpu.set_device = lambda _device: None

    state = PartialState(timeout=timedelta(seconds=60))
    rank, world, local = state.process_index, state.num_processes, state.local_process_index
    extra = {"distributed_type": str(state.distributed_type), "backend": state.backend}
else:
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ["LOCAL_RANK"])
    extra = {}
members = [None] * world
dist.all_gather_object(members, f"{rank}@{socket.gethostname()}/{local}")
value = torch.tensor([float(rank + 1)])
dist.all_reduce(value)
dist.barrier()
report.emit("world", rank=rank, world=world, local_rank=local, members=members,
            value=value.item(), pid=os.getpid(), **extra)
dist.destroy_process_group()
