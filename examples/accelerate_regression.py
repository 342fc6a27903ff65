"""A Hugging Face Accelerate script of the usual shape (and one ringmaster.log() call in its loop), which Ringmaster
runs unchanged:

    ringmaster-launch --script examples/accelerate_regression.py --nproc 2 --device cpu \
        --tensorboard-dir accelerate_logs --metric-pattern none -- --epochs 3

Accelerate sees one 2-process group (--device cpu sets ACCELERATE_USE_CPU, as `accelerate launch --cpu` does); its
TensorBoard tracker's train_loss and the loop's ringmaster.log() values reach the charts and scalars.csv.
tests/frameworks/test_accelerate.py runs this file (--step-sleep, --fail-rank and --fail-step are there for it).
"""
import argparse, time
import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from torch.utils.data import DataLoader, TensorDataset
import ringmaster

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--step-sleep", type=float, default=0.0)
parser.add_argument("--fail-rank", type=int, default=-1)
parser.add_argument("--fail-step", type=int, default=-1)
args = parser.parse_args()

accelerator = Accelerator(log_with="tensorboard", project_dir="accelerate_logs")
accelerator.init_trackers("regression")
set_seed(0)
x = torch.randn(256, 3)
data = TensorDataset(x, x @ torch.tensor([1.0, -2.0, 0.5]) + 0.25)
model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
model, optimizer, loader = accelerator.prepare(model, optimizer, DataLoader(data, batch_size=8, shuffle=True))
accelerator.print(f"{accelerator.num_processes} processes, {accelerator.distributed_type}")
step = 0
for epoch in range(args.epochs):
    for inputs, targets in loader:
        if accelerator.process_index == args.fail_rank and step == args.fail_step:
            raise RuntimeError(f"injected failure on rank {accelerator.process_index} at step {step}")
        time.sleep(args.step_sleep)
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(inputs).squeeze(1), targets)
        accelerator.backward(loss)
        optimizer.step()
        accelerator.log({"train_loss": loss.item()}, step=step)
        ringmaster.log(step, helper_loss=loss.item())
        step += 1
accelerator.end_training()
