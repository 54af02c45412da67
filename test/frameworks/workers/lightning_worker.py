"""A Lightning script as people write it: Trainer(accelerator="cpu", devices=D,
num_nodes=$NNODES, strategy="ddp") with the default cluster environment
(LightningEnvironment), which takes the node rank from NODE_RANK and, unless
LOCAL_RANK is set, starts the pod's D processes itself. Each process reports
the global rank and world size Lightning gave it and the global ranks gathered
across the world (an all_gather of the DDP group).

  lightning_worker.py D [NUM_NODES]   (NUM_NODES: else $NNODES)"""
import os
import socket
import sys
from datetime import timedelta

import report

report.quiet_frameworks()
import torch  # noqa: E402
import pytorch_lightning as pl  # noqa: E402
from pytorch_lightning.strategies import DDPStrategy  # noqa: E402

devices = int(sys.argv[1])
num_nodes = int(sys.argv[2]) if len(sys.argv) > 2 else int(os.environ["NNODES"])


class Probe(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(2, 1)

    def _register_sharded_tensor_state_dict_hooks_if_available(self):
        # Lightning does this for torch < 2.1 only; Debian's torch 1.13 cannot
        # import torch.distributed._shard under Python 3.11 (a dataclass field
        # default that 3.11 rejects). The hooks only save ShardedTensors.
        pass

    def training_step(self, batch, _idx):
        return self.layer(batch).sum()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

    def on_train_start(self):
        gathered = self.all_gather(torch.tensor([self.global_rank]))
        env = self.trainer.strategy.cluster_environment
        report.emit("lightning", global_rank=self.global_rank, world=self.trainer.world_size,
                    node_rank=self.trainer.node_rank, local_rank=self.trainer.local_rank,
                    gathered=sorted(int(x) for x in gathered.flatten().tolist()),
                    environment=type(env).__name__, host=socket.gethostname(),
                    pid=os.getpid())


data = torch.utils.data.DataLoader(torch.randn(8, 2), batch_size=2)
trainer = pl.Trainer(accelerator="cpu", devices=devices, num_nodes=num_nodes,
                     strategy=DDPStrategy(process_group_backend="gloo",
                                          timeout=timedelta(seconds=40)),
                     max_steps=2, logger=False, enable_checkpointing=False,
                     enable_progress_bar=False, enable_model_summary=False)
trainer.fit(Probe(), data)
report.emit("fit-done", global_rank=trainer.global_rank, pid=os.getpid())
