"""--precision bf16|fp16 against PyTorch's own mixed precision on the same model, data order and optimizer:
bf16 is `with torch.autocast("cpu", torch.bfloat16):` around forward and loss (with the torch of this suite:
1.13 for the Debian build, 2.11 for the CUDA build); fp16 adds torch.amp.GradScaler("cpu") (PyTorch 2.x only:
LibTorch 1.13 has no fp16 CPU autocast, and that trainer refuses it in one line). The loss scaler's skipped steps,
its backoff and growth, and its state across a resume are compared step by step."""
import importlib.util
import re
import subprocess

import pytest
import torch
import torch.nn.functional as F
from torch.utils.data import DistributedSampler

from conftest import TRAINER, read_csv, read_json, run_ranks, run_single

FASHION = "/usr/share/datasets/fashion-mnist"
STEPS = 15
SEED = 5
LR = 0.05

MODEL = '''
import torch
from torch import nn


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3, padding=1)
        self.fc1 = nn.Linear(8 * 14 * 14, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = torch.max_pool2d(torch.relu(self.conv(x)), 2)
        return self.fc2(torch.relu(self.fc1(x.flatten(1))))
'''

COMMON = ["--optimizer", "sgd", "--lr", str(LR), "--momentum", "0", "--threads", "1", "--seed", str(SEED),
          "--eval-batch-size", "5000"]


def trainer_libtorch_major():
    out = subprocess.run([TRAINER, "--version"], capture_output=True, text=True, check=True).stdout
    return int(re.search(r"^LibTorch (\d+)\.", out, re.M).group(1))


FP16_ON_CPU = trainer_libtorch_major() >= 2 and hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler")


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("model")
    source = folder / "small_cnn.py"
    source.write_text(MODEL)
    spec = importlib.util.spec_from_file_location("small_cnn", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch.manual_seed(1234)
    path = folder / "small_cnn.pt"
    torch.jit.save(torch.jit.script(module.SmallCnn()), str(path))
    return path


@pytest.fixture(scope="module")
def fashion():
    import os
    import sys
    sys.path.insert(0, os.path.join(os.environ["RINGMASTER_SOURCE_DIR"], "tests", "bench"))
    from reference_ddp import load
    train_x, train_y = load(FASHION, "train").tensors
    test_x, test_y = load(FASHION, "t10k").tensors
    return train_x, train_y, test_x, test_y


def autocast(precision):
    if precision == "fp32":
        return torch.autocast("cpu", enabled=False)
    return torch.autocast("cpu", dtype=torch.bfloat16 if precision == "bf16" else torch.float16)


def pytorch_reference(path, fashion, precision, world=1, batch=64, steps=STEPS, scaler_args=None):
    """Plain PyTorch, one process: each step averages the per-rank mean losses of DistributedSampler's batches
    (what DDP's averaged gradients compute), forward and loss under autocast, backward outside it, as the AMP
    recipe writes it. Returns the weights, the losses, and for fp16 the scale after each step and the steps
    skipped."""
    train_x, train_y, test_x, test_y = fashion
    model = torch.jit.load(str(path))
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    scaler = torch.amp.GradScaler("cpu", **scaler_args) if precision == "fp16" else None
    shards = []
    for rank in range(world):
        sampler = DistributedSampler(range(len(train_x)), num_replicas=world, rank=rank, shuffle=True, seed=SEED)
        sampler.set_epoch(0)
        shards.append(torch.tensor(list(sampler)))
    losses, scales, skipped = [], [], []
    for step in range(steps):
        per_rank = []
        for shard in shards:
            idx = shard[step * batch:(step + 1) * batch]
            with autocast(precision):
                per_rank.append(F.cross_entropy(model(train_x[idx]), train_y[idx]))
        loss = sum(per_rank) / world
        optimizer.zero_grad()
        if scaler is None:
            loss.backward()
            optimizer.step()
        else:
            before = scaler.get_scale()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            scales.append(scaler.get_scale())
            if scaler.get_scale() < before:
                skipped.append(step + 1)
        losses.append(loss.item())
    model.eval()
    with torch.no_grad(), autocast(precision):
        val_loss = F.cross_entropy(model(test_x), test_y, reduction="sum").float().item() / len(test_y)
    return model.state_dict(), losses, val_loss, scales, skipped


def worst_difference(a, b):
    return max((a[k] - b[k]).abs().max().item() for k in a)


@pytest.mark.parametrize("world,batch", [(1, 64), (2, 32)])
def test_bf16_matches_pytorch_autocast(tmp_path, model_file, fashion, world, batch):
    run = tmp_path / "run"
    args = COMMON + ["--model", str(model_file), "--batch-size", str(batch), "--max-steps", str(STEPS),
                     "--precision", "bf16"]
    codes, out = run_ranks(world, args, run)
    assert codes == [0] * world, out
    expected, losses, val_loss, _, _ = pytorch_reference(model_file, fashion, "bf16", world, batch)
    fp32, fp32_losses, _, _, _ = pytorch_reference(model_file, fashion, "fp32", world, batch)

    trained = torch.load(run / "model.pt")
    worst = worst_difference(trained, expected)
    # bf16 keeps 8 bits of mantissa: had the trainer run in fp32 it would sit this far from PyTorch's bf16 run.
    bf16_effect = worst_difference(fp32, expected)
    assert bf16_effect > 1e-4, f"autocast changed nothing in the reference ({bf16_effect})"
    # The same ops through the same dispatcher: bit-identical here (0.0 measured at 1 and 2 ranks), while fp32
    # weights would sit bf16_effect away.
    assert worst < 1e-6, f"max weight difference to PyTorch's bf16 {worst} (bf16 vs fp32: {bf16_effect})"

    rows = read_csv(run / "metrics.csv")
    assert [int(r["step"]) for r in rows] == list(range(1, STEPS + 1))
    for row, loss in zip(rows, losses):
        assert abs(float(row["loss"]) - loss) < 1e-4, (row, loss)
    assert max(abs(a - b) for a, b in zip(losses, fp32_losses)) > 1e-4, "the losses show no bf16 at all"

    summary = read_json(run / "summary.json")
    assert summary["precision"] == "bf16"
    assert "loss_scale" not in summary  # bf16 has fp32's range: no scaler
    # Evaluation runs under autocast too, as the reference's.
    assert abs(summary["val_loss"] - val_loss) < 1e-3, (summary["val_loss"], val_loss)


def skipped_steps_in(output):
    return [int(m) for m in re.findall(r"inf/NaN gradients at step (\d+): step skipped", output)]


@pytest.mark.skipif(not FP16_ON_CPU, reason="fp16 autocast on the CPU needs PyTorch 2.x (the CUDA build's suite)")
def test_fp16_with_loss_scaling_matches_gradscaler(tmp_path, model_file, fashion):
    # A first scale of 2^30 overflows fp16 at once: the first steps are skipped while the scale halves, then
    # it grows every 4 finite steps until it overflows again, so skipping, backoff and growth all happen.
    steps = 40
    run = tmp_path / "run"
    args = COMMON + ["--model", str(model_file), "--batch-size", "64", "--max-steps", str(steps),
                     "--precision", "fp16", "--loss-scale", str(2.0 ** 30), "--loss-scale-growth-interval", "4"]
    code, out = run_single(args + ["--out", str(run)])
    assert code == 0, out
    expected, losses, val_loss, scales, skipped = pytorch_reference(
        model_file, fashion, "fp16", steps=steps, scaler_args={"init_scale": 2.0 ** 30, "growth_interval": 4})
    assert len(skipped) >= 5 and skipped[0] == 1, skipped
    assert max(scales) > min(scales[len(skipped):]), "the reference's scale never grew"

    assert skipped_steps_in(out) == skipped, out
    summary = read_json(run / "summary.json")
    assert summary["precision"] == "fp16"
    assert summary["loss_scale"] == scales[-1], (summary["loss_scale"], scales)
    assert summary["skipped_steps"] == len(skipped)

    trained = torch.load(run / "model.pt")
    worst = worst_difference(trained, expected)
    assert worst < 1e-4, f"max weight difference to PyTorch's fp16 + GradScaler {worst}"
    rows = read_csv(run / "metrics.csv")
    for row, loss in zip(rows, losses):
        assert abs(float(row["loss"]) - loss) < 1e-3, (row, loss)
    assert abs(summary["val_loss"] - val_loss) < 1e-3, (summary["val_loss"], val_loss)


@pytest.mark.skipif(not FP16_ON_CPU, reason="fp16 autocast on the CPU needs PyTorch 2.x (the CUDA build's suite)")
def test_fp16_resume_continues_the_loss_scale(tmp_path, model_file):
    # Growth every 3 steps: at the checkpoint (step 10) the scaler is one finite step into a count, which a
    # resume that forgot it would restart.
    args = COMMON + ["--model", str(model_file), "--batch-size", "64", "--precision", "fp16",
                     "--loss-scale", str(2.0 ** 20), "--loss-scale-growth-interval", "3"]
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    code, out = run_single(args + ["--max-steps", "20", "--out", str(straight)])
    assert code == 0, out
    code, out = run_single(args + ["--max-steps", "10", "--out", str(resumed)])
    assert code == 0, out
    code, out = run_single(args + ["--max-steps", "20", "--out", str(resumed), "--resume", str(resumed)])
    assert code == 0, out
    assert "at step 10" in out, out

    a, b = read_json(straight / "summary.json"), read_json(resumed / "summary.json")
    assert a["loss_scale"] == b["loss_scale"], (a["loss_scale"], b["loss_scale"])
    wa, wb = torch.load(straight / "model.pt"), torch.load(resumed / "model.pt")
    assert all(torch.equal(wa[k], wb[k]) for k in wa), "resumed weights differ from the straight run"
    assert [r["loss"] for r in read_csv(resumed / "metrics.csv")] == [r["loss"] for r in read_csv(straight / "metrics.csv")]


@pytest.mark.skipif(FP16_ON_CPU, reason="this trainer has fp16 on the CPU")
def test_fp16_on_cpu_with_libtorch_1_is_one_clear_line(tmp_path):
    code, out = run_single(["--model", "mlp", "--precision", "fp16", "--out", str(tmp_path / "run")])
    assert code == 2, out
    lines = out.strip().splitlines()
    assert len(lines) == 1 and "--precision fp16 on the CPU needs a trainer built against PyTorch 2.x" in lines[0], out
    assert "use --precision bf16" in lines[0]
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("flag,value,message", [
    ("--precision", "fp8", "--precision: unknown value 'fp8' (valid: fp32|bf16|fp16)"),
    ("--loss-scale", "0", "--loss-scale: must be > 0"),
    ("--loss-scale-growth-interval", "0", "--loss-scale-growth-interval: must be >= 1"),
    ("--tf32", "maybe", "--tf32: 'maybe' is not a boolean"),
    ("--cudnn-benchmark", "2", "--cudnn-benchmark: '2' is not a boolean"),
])
def test_bad_precision_flags_are_one_line(tmp_path, flag, value, message):
    code, out = run_single(["--model", "mlp", flag, value, "--out", str(tmp_path / "run")])
    assert code == 2, out
    assert len(out.strip().splitlines()) == 1 and message in out, out


def test_precision_from_a_job_file(tmp_path, model_file):
    job = tmp_path / "job.json"
    job.write_text('{"trainer": {"precision": "bf16", "max_steps": 2, "batch_size": 16}}')
    code, out = run_single(["--job", str(job), "--model", str(model_file), "--threads", "1",
                            "--out", str(tmp_path / "run")])
    assert code == 0, out
    assert read_json(tmp_path / "run" / "summary.json")["precision"] == "bf16"
