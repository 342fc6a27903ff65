"""Reference: plain PyTorch DDP on the same cnn and data, for the trainer benchmark.

One process per rank, env:// rendezvous (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), gloo,
DistributedSampler + DataLoader over an in-memory TensorDataset, SGD. Prints one line:
  reference samples_per_sec=X steps=N [val_accuracy=A] [peak_gpu_allocated_mb=M peak_gpu_reserved_mb=R]
measured from step --warmup to the last step, on rank 0. --ddp wraps the model in DDP even for one rank (as
a torchrun job of one process does; the GPU check compares against that), --eval adds the accuracy on the
test split, and on cuda the peak memory of PyTorch's caching allocator follows. --inputs unit feeds pixels
scaled to [0, 1] and nothing else, as the DDP tutorials write it (transforms.ToTensor()); the default
standardises them with Fashion-MNIST's mean and std, as the trainer does.
"""
import argparse
import contextlib
import gzip
import os
import time

import numpy as np
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

MEAN, STD = 0.2860, 0.3530


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc1 = nn.Linear(32 * 7 * 7, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = nn.functional.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = nn.functional.max_pool2d(torch.relu(self.conv2(x)), 2)
        return self.fc2(torch.relu(self.fc1(x.flatten(1))))


def load(root, prefix, standardise=True):
    with gzip.open(f"{root}/{prefix}-images-idx3-ubyte.gz") as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).copy()
    with gzip.open(f"{root}/{prefix}-labels-idx1-ubyte.gz") as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8).astype(np.int64)
    x = torch.from_numpy(images).float() / 255.0
    if standardise:
        x = (x - MEAN) / STD
    x = x.view(-1, 1, 28, 28)
    return TensorDataset(x, torch.from_numpy(labels))


def accuracy(model, dataset, device):
    model.eval()
    x, y = dataset.tensors
    with torch.no_grad():
        correct = sum((model(x[i:i + 1000].to(device)).argmax(1).cpu() == y[i:i + 1000]).sum().item()
                      for i in range(0, len(y), 1000))
    model.train()
    return correct / len(y)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (rank r on cuda:LOCAL_RANK)")
    parser.add_argument("--ddp", action="store_true", help="a process group and DDP even for one rank")
    parser.add_argument("--eval", action="store_true", help="print the accuracy on the test split at the end")
    parser.add_argument("--inputs", choices=("standardised", "unit"), default="standardised",
                        help="standardised pixels (as the trainer), or scaled to [0, 1] only (as the tutorials)")
    parser.add_argument("--precision", choices=("fp32", "bf16", "fp16"), default="fp32",
                        help="forward and loss under torch.autocast in this type; fp16 with torch.amp.GradScaler")
    parser.add_argument("--cuda-fast-math", action="store_true",
                        help="TF32 matrix products and cuDNN benchmark mode (the trainer's defaults on cuda)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    distributed = world > 1 or args.ddp
    cuda = args.device == "cuda"
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0"))) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
        if args.cuda_fast_math:
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
            torch.backends.cudnn.benchmark = True
    lowp = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(args.precision)
    scaler = torch.amp.GradScaler(device.type) if args.precision == "fp16" else None
    if distributed:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29517")
        bound = {"device_id": device} if cuda else {}  # bound to its GPU, as the trainer's NCCL group is (2.x)
        dist.init_process_group("nccl" if cuda else "gloo", rank=rank, world_size=world, **bound)
    torch.manual_seed(42)
    standardise = args.inputs == "standardised"
    dataset = load(args.data, "train", standardise)
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=42)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, num_workers=0, pin_memory=cuda)
    model = Cnn().to(device)
    if distributed:
        model = DistributedDataParallel(model, device_ids=[device.index] if cuda else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    step, start, epoch = 0, None, 0
    while step < args.steps:
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            if step == args.warmup:
                if cuda:
                    torch.cuda.synchronize()
                start = time.perf_counter()
            optimizer.zero_grad(set_to_none=True)
            # nullcontext for fp32: torch 1.13's autocast sets its dtype even when disabled, and refuses fp32.
            with torch.autocast(device.type, dtype=lowp) if lowp else contextlib.nullcontext():
                loss = nn.functional.cross_entropy(model(x), y)
            if scaler is None:
                loss.backward()
                optimizer.step()
            else:
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            reported = loss.detach().clone()
            if distributed:
                dist.all_reduce(reported)  # as the trainer does: the all-rank mean loss, every step
            step += 1
            if step >= args.steps:
                break
        epoch += 1
    if cuda:
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    if rank == 0:
        samples = (args.steps - args.warmup) * args.batch_size * world
        line = f"reference samples_per_sec={samples / elapsed:.1f} steps={args.steps}"
        if args.eval:
            line += f" val_accuracy={accuracy(model, load(args.data, 't10k', standardise), device):.4f}"
        if cuda:
            line += (f" peak_gpu_allocated_mb={torch.cuda.max_memory_allocated(device) / 2**20:.1f}"
                     f" peak_gpu_reserved_mb={torch.cuda.max_memory_reserved(device) / 2**20:.1f}")
        print(line, flush=True)
    if distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
