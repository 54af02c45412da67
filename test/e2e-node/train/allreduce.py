"""One rank of a gloo all_reduce, configured only by the environment distenv
injects (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE; under torchrun, the values
torchrun derives from PET_*). Prints what the node tier's scenarios read back
with `kubectl logs`:

    resolve: MASTER_ADDR=<name> -> <address>
    allreduce: rank R of W sum S want S' OK|WRONG

and exits 0 when the sum is right. --hold keeps the process alive afterwards
(StatefulSet pods restart a container that exits).
"""
import datetime
import os
import socket
import sys
import time


def resolve(name, within):
    deadline = time.monotonic() + within
    while True:
        try:
            return socket.gethostbyname(name)
        except OSError as e:
            if time.monotonic() > deadline:
                raise SystemExit(f"resolve: MASTER_ADDR={name} failed: {e}")
            time.sleep(0.5)


def main():
    import torch
    import torch.distributed as dist

    addr = os.environ["MASTER_ADDR"]
    print(f"resolve: MASTER_ADDR={addr} -> {resolve(addr, 120)}", flush=True)
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", init_method="env://", timeout=datetime.timedelta(seconds=180))
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t)
    want = world * (world + 1) // 2
    ok = int(t.item()) == want
    extra = ""
    if "LOCAL_RANK" in os.environ and "GROUP_RANK" in os.environ:  # started by torchrun
        extra = f" local_rank {os.environ['LOCAL_RANK']} node_rank {os.environ['GROUP_RANK']}"
    print(f"allreduce: rank {rank} of {world} sum {int(t.item())} want {want} {'OK' if ok else 'WRONG'}{extra}",
          flush=True)
    dist.barrier()
    dist.destroy_process_group()
    if "--hold" in sys.argv[1:]:
        while True:
            time.sleep(3600)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
