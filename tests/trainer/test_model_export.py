"""model.pt loads in Python into the documented cnn and reproduces rank 0's eval accuracy."""
import gzip

import numpy as np
import torch
from torch import nn

from conftest import read_csv, read_json, run_ranks

MEAN, STD = 0.2860, 0.3530  # the trainer's documented normalisation


class Cnn(nn.Module):
    """The documented `cnn`, written the PyTorch way (ReLU before pooling)."""

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


def load_idx(path, offset):
    with gzip.open(path) as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def test_model_pt_reproduces_eval_accuracy(tmp_path):
    run = tmp_path / "run"
    codes, out = run_ranks(2, ["--model", "cnn", "--max-steps", "60", "--threads", "1", "--lr", "0.05"], run)
    assert codes == [0, 0], out

    state = torch.load(run / "model.pt")
    assert list(state) == ["conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias",
                           "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    model = Cnn()
    model.load_state_dict(state)
    model.eval()

    root = "/usr/share/datasets/fashion-mnist/"
    images = torch.from_numpy(load_idx(root + "t10k-images-idx3-ubyte.gz", 16).copy()).float()
    labels = torch.from_numpy(load_idx(root + "t10k-labels-idx1-ubyte.gz", 8).astype(np.int64))
    images = ((images / 255.0 - MEAN) / STD).view(-1, 1, 28, 28)
    with torch.no_grad():
        logits = model(images)
    correct = (logits.argmax(1) == labels).sum().item()
    loss = nn.functional.cross_entropy(logits, labels).item()

    summary = read_json(run / "summary.json")
    evals = read_csv(run / "eval.csv")
    assert summary["val_accuracy"] == float(evals[-1]["val_accuracy"])
    assert summary["val_accuracy"] > 0.5, "60 steps should learn something"
    assert abs(correct - summary["val_accuracy"] * 10000) <= 1, (correct, summary)
    assert abs(loss - summary["val_loss"]) < 1e-4
