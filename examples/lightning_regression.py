"""A PyTorch Lightning script of the usual shape (and one callback that uses Ringmaster's helper module), which
Ringmaster runs unchanged:

    ringmaster-launch --script examples/lightning_regression.py --nproc 2 --device cpu \
        --tensorboard-dir lightning_logs --metric-pattern none -- --epochs 3

Lightning sees torchrun's environment and trains as one 2-process DDP group; its TensorBoard logger's train_loss
and the callback's ringmaster.log() values reach the charts and scalars.csv; `--max-restarts 1` restarts a failed
group and ckpt_path="last" resumes it from checkpoints/last.ckpt. tests/frameworks/test_lightning.py runs this file
(--step-sleep, --fail-rank and --fail-step are there for it: a slower step, and a rank that raises).
"""
import argparse, time
import torch
import lightning as L
from lightning.pytorch.callbacks import ModelCheckpoint
from torch.utils.data import DataLoader, TensorDataset
import ringmaster

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--step-sleep", type=float, default=0.0)
parser.add_argument("--fail-rank", type=int, default=-1)
parser.add_argument("--fail-step", type=int, default=-1)
args = parser.parse_args()


class Regression(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(3, 1)

    def training_step(self, batch, batch_idx):
        if self.global_rank == args.fail_rank and self.global_step == args.fail_step:
            raise RuntimeError(f"injected failure on rank {self.global_rank} at step {self.global_step}")
        time.sleep(args.step_sleep)
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.layer(x).squeeze(1), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


class ReportToRingmaster(L.Callback):
    # The helper module from a Lightning callback: rank 0's loss after each optimizer step.

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        ringmaster.log(trainer.global_step, callback_loss=outputs["loss"].item())


if __name__ == "__main__":
    L.seed_everything(0)
    x = torch.randn(256, 3)
    data = TensorDataset(x, x @ torch.tensor([1.0, -2.0, 0.5]) + 0.25)
    trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp", max_epochs=args.epochs, log_every_n_steps=1,
                        callbacks=[ModelCheckpoint(dirpath="checkpoints", save_last=True), ReportToRingmaster()])
    trainer.fit(Regression(), DataLoader(data, batch_size=8), ckpt_path="last")
