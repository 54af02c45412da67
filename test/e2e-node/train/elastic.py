"""One worker of a torchrun elastic job (c10d rendezvous), configured only by
what torchrun derives from the PET_* distenv injects. Each time torchrun starts
it (at first, and again when the world re-forms after a scale) it joins the
group, does one gloo all_reduce and prints

    elastic: rank R of W sum S restart N

then waits to be stopped: torchrun's agent stops and restarts its workers when
nodes join or leave (its rendezvous sees them waiting), and the node tier's
scenario reads the world each pod saw last with `kubectl logs`.
"""
import datetime
import os
import sys
import time


def main():
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method="env://", timeout=datetime.timedelta(seconds=180))
    rank, world = dist.get_rank(), dist.get_world_size()
    t = torch.tensor([1.0])
    dist.all_reduce(t)
    print(f"elastic: rank {rank} of {world} sum {int(t.item())} "
          f"restart {os.environ.get('TORCHELASTIC_RESTART_COUNT', '?')}", flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main())
