"""--model FILE: a user's TorchScript module trained like a built-in model. The same N steps as plain
single-process PyTorch (1 rank, and 2 ranks x half the batch), batch norm kept identical on every rank
by broadcasting rank 0's buffers, model.torchscript.pt and model.pt as results, exact resume, and one
clear line with exit 2 for a file that is not TorchScript, a frozen module or a wrong output shape."""
import importlib.util
import os
import sys

import pytest
import torch
from torch.utils.data import DistributedSampler

from conftest import digest, read_csv, read_json, run_ranks, run_single

sys.path.insert(0, os.path.join(os.environ["RINGMASTER_SOURCE_DIR"], "tests", "bench"))
from reference_ddp import load  # noqa: E402

FASHION = "/usr/share/datasets/fashion-mnist"

# torch.jit.script reads source code, so the models live in a file written at test time.
MODELS = '''
import torch
from torch import nn


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x.reshape(x.shape[0], -1))))


class BnNet(nn.Module):
    def __init__(self, dropout: float):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.drop = nn.Dropout(dropout)
        self.fc = nn.Linear(4 * 14 * 14, 10)

    def forward(self, x):
        x = torch.max_pool2d(torch.relu(self.bn(self.conv(x))), 2)
        return self.fc(self.drop(x.flatten(1)))


class FiveClasses(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 5)

    def forward(self, x):
        return self.fc(x.flatten(1))
'''


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    source = folder / "user_models.py"
    source.write_text(MODELS)
    spec = importlib.util.spec_from_file_location("user_models", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch.manual_seed(1234)  # weights unlike anything the trainer's --seed would draw
    paths = {}
    for name, model in {"mlp": module.Mlp(), "bn_dropout": module.BnNet(0.2), "five": module.FiveClasses()}.items():
        paths[name] = folder / f"{name}.pt"
        torch.jit.save(torch.jit.script(model), str(paths[name]))
    paths["frozen"] = folder / "frozen.pt"
    torch.jit.save(torch.jit.freeze(torch.jit.script(module.Mlp().eval())), str(paths["frozen"]))
    paths["state_dict"] = folder / "state_dict.pt"
    torch.save(module.Mlp().state_dict(), paths["state_dict"])
    return paths


@pytest.fixture(scope="module")
def fashion():
    train_x, train_y = load(FASHION, "train").tensors
    test_x, test_y = load(FASHION, "t10k").tensors
    return train_x, train_y, test_x, test_y


STEPS = 15
SEED = 5
COMMON = ["--optimizer", "sgd", "--lr", "0.05", "--momentum", "0", "--max-steps", str(STEPS), "--threads", "1",
          "--seed", str(SEED), "--eval-batch-size", "5000"]


def pytorch_reference(path, fashion, world, batch):
    """Plain PyTorch, one process: each step averages the per-rank mean losses of the batches that
    DistributedSampler gives each rank, which is what DDP's averaged gradients compute."""
    train_x, train_y, _, _ = fashion
    model = torch.jit.load(str(path))
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    shards = []
    for rank in range(world):
        sampler = DistributedSampler(range(len(train_x)), num_replicas=world, rank=rank, shuffle=True, seed=SEED)
        sampler.set_epoch(0)
        shards.append(torch.tensor(list(sampler)))
    losses = []
    for step in range(STEPS):
        per_rank = []
        for shard in shards:
            idx = shard[step * batch:(step + 1) * batch]
            per_rank.append(torch.nn.functional.cross_entropy(model(train_x[idx]), train_y[idx]))
        loss = sum(per_rank) / world
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model.state_dict(), losses


@pytest.mark.parametrize("world,batch", [(1, 64), (2, 32)])
def test_torchscript_mlp_matches_pytorch(tmp_path, models, fashion, world, batch):
    run = tmp_path / "run"
    codes, out = run_ranks(world, COMMON + ["--model", str(models["mlp"]), "--batch-size", str(batch)], run)
    assert codes == [0] * world, out
    expected, losses = pytorch_reference(models["mlp"], fashion, world, batch)

    trained = torch.load(run / "model.pt")
    assert sorted(trained) == sorted(expected) == ["fc1.bias", "fc1.weight", "fc2.bias", "fc2.weight"]
    initial = torch.jit.load(str(models["mlp"])).state_dict()
    moved = max((expected[k] - initial[k]).abs().max().item() for k in expected)
    worst = max((trained[k] - expected[k]).abs().max().item() for k in expected)
    assert moved > 1e-3, "the reference did not train"
    assert worst < 1e-5, f"max weight difference to PyTorch {worst} (weights moved by {moved})"

    rows = read_csv(run / "metrics.csv")
    assert [int(r["step"]) for r in rows] == list(range(1, STEPS + 1))
    for row, loss in zip(rows, losses):
        assert abs(float(row["loss"]) - loss) < 1e-4, (row, loss)

    # The trained TorchScript module is saved too, with the same weights.
    scripted = torch.jit.load(str(run / "model.torchscript.pt")).state_dict()
    assert all(torch.equal(scripted[k], trained[k]) for k in trained)
    if world == 2:
        assert digest(out[0]) is not None and digest(out[0]) == digest(out[1]), out


def test_batch_norm_and_dropout_on_two_ranks(tmp_path, models, fashion):
    run = tmp_path / "run"
    args = COMMON + ["--model", str(models["bn_dropout"]), "--batch-size", "32", "--max-steps", "40"]
    codes, out = run_ranks(2, args, run)
    assert codes == [0, 0], out
    # Parameters and buffers (batch-norm statistics) are bit-identical on both ranks.
    assert digest(out[0]) is not None and digest(out[0]) == digest(out[1]), out

    state = torch.load(run / "model.pt")
    assert {"bn.running_mean", "bn.running_var", "bn.num_batches_tracked", "bn.weight"} <= set(state)
    assert state["bn.num_batches_tracked"].item() == 40
    assert state["bn.running_mean"].abs().max().item() > 1e-3, "batch-norm statistics never moved"

    module = torch.jit.load(str(run / "model.torchscript.pt"))
    saved = module.state_dict()
    assert all(torch.equal(saved[k], state[k]) for k in state)
    module.eval()
    _, _, test_x, test_y = fashion
    with torch.no_grad():
        logits = module(test_x)
    correct = (logits.argmax(1) == test_y).sum().item()
    loss = torch.nn.functional.cross_entropy(logits, test_y).item()
    summary = read_json(run / "summary.json")
    assert summary["val_accuracy"] > 0.5, summary
    assert abs(correct - summary["val_accuracy"] * 10000) <= 1, (correct, summary)
    assert abs(loss - summary["val_loss"]) < 1e-4, (loss, summary)


def test_resume_of_a_torchscript_run_is_exact(tmp_path, models):
    # Batch norm (buffers in the checkpoint), dropout (the CPU generator's state in the checkpoint) and
    # momentum (optimizer state in the checkpoint).
    args = COMMON + ["--model", str(models["bn_dropout"]), "--batch-size", "32", "--momentum", "0.9"]
    straight = tmp_path / "straight"
    codes, out = run_ranks(2, args + ["--max-steps", "20"], straight)
    assert codes == [0, 0], out

    resumed = tmp_path / "resumed"
    codes, out = run_ranks(2, args + ["--max-steps", "10"], resumed)
    assert codes == [0, 0], out
    codes, out = run_ranks(2, args + ["--max-steps", "20", "--resume", str(resumed)], resumed)
    assert codes == [0, 0], out
    assert "step-00000010.pt at step 10" in out[0], out[0]

    a = torch.load(straight / "model.pt")
    b = torch.load(resumed / "model.pt")
    assert sorted(a) == sorted(b)
    assert all(torch.equal(a[k], b[k]) for k in a), "resumed weights or buffers differ from the straight run"
    assert [r["loss"] for r in read_csv(resumed / "metrics.csv")] == [r["loss"] for r in read_csv(straight / "metrics.csv")]
    c = torch.jit.load(str(resumed / "model.torchscript.pt")).state_dict()
    assert all(torch.equal(a[k], c[k]) for k in a)


@pytest.mark.parametrize("name,message", [
    ("state_dict", "not a TorchScript file"),
    ("frozen", "has no parameters to train"),
])
def test_unusable_model_file_is_refused(tmp_path, models, name, message):
    path = str(models[name])
    code, out = run_single(["--model", path, "--validate-only"], env={"WORLD_SIZE": "1"})
    assert code == 2, out
    assert message in out and path in out, out
    assert len(out.strip().splitlines()) == 1, out
    run = tmp_path / "run"
    codes, outs = run_ranks(1, ["--model", path, "--max-steps", "1", "--threads", "1"], run)
    assert codes == [2], outs
    assert message in outs[0], outs
    assert "Traceback" not in outs[0] and "frame #" not in outs[0], outs


def test_wrong_output_shape_is_refused(tmp_path, models):
    run = tmp_path / "run"
    codes, out = run_ranks(1, ["--model", str(models["five"]), "--max-steps", "1", "--threads", "1"], run)
    assert codes == [2], out
    assert "model outputs [64, 5] but the labels have 10 classes" in out[0], out[0]
    assert not (run / "metrics.csv").exists() and not (run / "summary.json").exists()


def test_missing_model_file_is_refused():
    code, out = run_single(["--model", "/nonexistent/model.pt", "--validate-only"])
    assert code == 2 and "neither a built-in model" in out, out
