"""PyTorch rank: torchrun's own argument parser reads the PET_* environment, then
the rank joins the job and runs an all_reduce that it checks itself.

  torch_worker.py static   init_process_group("gloo") with the default env://
                           rendezvous (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE)
  torch_worker.py elastic  the c10d rendezvous torchrun would create from the
                           parsed PET_* flags, then a gloo group on its store

No rendezvous value is given on the command line: all of it comes from the
environment the pod received."""
import socket
import sys
from datetime import timedelta

import report

report.emit_start()

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.distributed.run import config_from_args, parse_args  # noqa: E402

mode = sys.argv[1] if len(sys.argv) > 1 else "static"

# torchrun reads every flag from PET_<FLAG> when it is not on the command line.
args = parse_args(["train.py"])
config, _cmd, _cmd_args = config_from_args(args)
report.emit(
    "torchrun",
    nnodes=args.nnodes,
    nproc_per_node=args.nproc_per_node,
    node_rank=args.node_rank,
    master_addr=args.master_addr,
    master_port=args.master_port,
    rdzv_backend_arg=args.rdzv_backend,
    rdzv_endpoint_arg=args.rdzv_endpoint,
    rdzv_id_arg=args.rdzv_id,
    max_restarts_arg=args.max_restarts,
    min_nodes=config.min_nodes,
    max_nodes=config.max_nodes,
    nproc=config.nproc_per_node,
    rdzv_backend=config.rdzv_backend,
    rdzv_endpoint=config.rdzv_endpoint,
    run_id=config.run_id,
    max_restarts=config.max_restarts,
    rdzv_configs={k: str(v) for k, v in config.rdzv_configs.items()},
)

if mode == "static":
    dist.init_process_group("gloo", timeout=timedelta(seconds=90))
    group_rank, group_world = dist.get_rank(), dist.get_world_size()
elif mode == "elastic":
    from torch.distributed.elastic.rendezvous import RendezvousParameters
    from torch.distributed.elastic.rendezvous import registry

    # As torch.distributed.launcher.api.launch_agent builds it from the config.
    params = RendezvousParameters(
        backend=config.rdzv_backend,
        endpoint=config.rdzv_endpoint,
        run_id=config.run_id,
        min_nodes=config.min_nodes,
        max_nodes=config.max_nodes,
        **config.rdzv_configs,
    )
    handler = registry.get_rendezvous_handler(params)
    store, group_rank, group_world = handler.next_rendezvous()
    report.emit("rendezvous", group_rank=group_rank, group_world=group_world,
                run_id=handler.get_run_id())
    dist.init_process_group("gloo", store=dist.PrefixStore("distenv-fw", store),
                            rank=group_rank, world_size=group_world,
                            timeout=timedelta(seconds=90))
else:
    sys.exit("torch_worker.py: mode must be static or elastic")

value = torch.tensor([float(group_rank + 1)])
dist.all_reduce(value)
names = [None] * group_world
dist.all_gather_object(names, report.START_ENV.get("RANK", "") + "@" + socket.gethostname())
dist.barrier()
expected = group_world * (group_world + 1) / 2
ok = value.item() == expected
report.emit("allreduce", rank=group_rank, world=group_world, value=value.item(),
            expected=expected, ok=ok, members=names)
dist.destroy_process_group()
sys.exit(0 if ok else 1)
