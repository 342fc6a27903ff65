"""model.pt loads in Python into the documented cnn and reproduces rank 0's eval accuracy."""
import os
import sys

import torch
from torch import nn

from conftest import read_csv, read_json, run_ranks

# The documented cnn (ReLU before pooling, the PyTorch way) and the documented normalisation live in
# the benchmark's reference script: one definition for both.
sys.path.insert(0, os.path.join(os.environ["RINGMASTER_SOURCE_DIR"], "tests", "bench"))
from reference_ddp import Cnn, load  # noqa: E402


def test_model_pt_reproduces_eval_accuracy(tmp_path):
    run = tmp_path / "run"
    codes, out = run_ranks(2, ["--model", "cnn", "--max-steps", "60", "--threads", "1", "--lr", "0.05"], run)
    assert codes == [0, 0], out

    # weights_only=True (the default since PyTorch 2.6) refuses TorchScript's type tags: model.pt has none.
    state = torch.load(run / "model.pt", weights_only=True)
    assert type(state) is dict
    assert list(state) == ["conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias",
                           "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    model = Cnn()
    model.load_state_dict(state)
    model.eval()

    images, labels = load("/usr/share/datasets/fashion-mnist", "t10k").tensors
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
    # The LibTorch the trainer was built with, for bundles' environment.json ("1.13.0" for torch "1.13.0a0").
    assert torch.__version__.startswith(summary["libtorch_version"]), summary
