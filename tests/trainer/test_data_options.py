"""Data options on IDX folders written at test time: --val-split matches torch.utils.data.random_split,
per-channel statistics are the training split's, built-in models take the data's image size and class
count, the loss follows the labels, and every bad option is one line and exit 2."""
import gzip
import json
import struct

import torch
from torch import nn

from conftest import Mlp, read_json, run_ranks, run_single

SEED = 5


def write_idx(folder, prefix, images, labels, gz=False):
    """MNIST IDX files: magic 0x00000803 / 0x00000801, big-endian dimensions, then the bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    n, h, w = images.shape
    opener = gzip.open if gz else open
    suffix = ".gz" if gz else ""
    with opener(folder / f"{prefix}-images-idx3-ubyte{suffix}", "wb") as f:
        f.write(struct.pack(">IIII", 0x803, n, h, w) + images.to(torch.uint8).numpy().tobytes())
    with opener(folder / f"{prefix}-labels-idx1-ubyte{suffix}", "wb") as f:
        f.write(struct.pack(">II", 0x801, n) + labels.to(torch.uint8).numpy().tobytes())


def make_folder(folder, n=480, size=(12, 16), classes=4, test_classes=None):
    """Images whose brightness says their class, so a few steps learn something."""
    g = torch.Generator().manual_seed(11)
    def split(count, k):
        labels = torch.randint(0, k, (count,), generator=g)
        base = (labels.float() * 50 + 30).view(-1, 1, 1)
        noise = torch.randint(0, 40, (count, *size), generator=g).float()
        return (base + noise).clamp(0, 255).to(torch.uint8), labels
    train = split(n, classes)
    test = split(n // 4, test_classes or classes)
    write_idx(folder, "train", *train)
    write_idx(folder, "t10k", *test, gz=True)
    return train, test


COMMON = ["--threads", "1", "--seed", str(SEED), "--batch-size", "16", "--lr", "0.05", "--eval-batch-size", "1000"]


def test_val_split_and_statistics_match_python(tmp_path):
    (images, labels), _ = make_folder(tmp_path / "data")
    run = tmp_path / "run"
    codes, out = run_ranks(2, COMMON + ["--model", "mlp", "--data", str(tmp_path / "data"), "--val-split", "0.25",
                                        "--max-steps", "12"], run)
    assert codes == [0, 0], out
    summary = read_json(run / "summary.json")
    assert summary["train_samples"] == 360 and summary["val_samples"] == 120 and summary["val_source"] == "split"

    # The same split as random_split with the seed; statistics over its training part only, x / 255.
    train_part, val_part = torch.utils.data.random_split(range(480), [360, 120],
                                                         generator=torch.Generator().manual_seed(SEED))
    scaled = images.double() / 255
    train_pixels = scaled[list(train_part)]
    mean, std = train_pixels.mean().item(), train_pixels.std(unbiased=False).item()
    assert summary["normalize"]["source"] == "computed"
    assert abs(summary["normalize"]["mean"][0] - mean) < 1e-12
    assert abs(summary["normalize"]["std"][0] - std) < 1e-12

    # model.pt on the held-out samples, normalised with those statistics, gives the reported val_loss.
    model = Mlp(12 * 16, 4)
    model.load_state_dict(torch.load(run / "model.pt"))
    model.eval()
    val_index = torch.tensor(list(val_part))
    x = ((images[val_index].float().unsqueeze(1) / 255) - mean) / std
    with torch.no_grad():
        logits = model(x)
    loss = nn.functional.cross_entropy(logits, labels[val_index].long()).item()
    correct = (logits.argmax(1) == labels[val_index]).sum().item()
    assert abs(loss - summary["val_loss"]) < 1e-5, (loss, summary["val_loss"])
    assert abs(correct / 120 - summary["val_accuracy"]) < 1e-9


def test_builtin_models_take_the_data_shape(tmp_path):
    make_folder(tmp_path / "data", size=(12, 16), classes=3)
    code, text = run_single(COMMON + ["--model", "cnn", "--data", str(tmp_path / "data"), "--probe"])
    assert code == 0, text
    probe = json.loads(text)
    assert probe["data"]["input_shape"] == [1, 12, 16] and probe["data"]["class_count"] == 3
    assert probe["data"]["val_source"] == "test-split" and probe["data"]["val_samples"] == 120
    assert probe["model"]["output_shape"] == [16, 3] and probe["model"]["loss"] == "cross_entropy"
    run = tmp_path / "run"
    codes, out = run_ranks(1, COMMON + ["--model", "cnn", "--data", str(tmp_path / "data"), "--max-steps", "3"], run)
    assert codes == [0], out
    state = torch.load(run / "model.pt")
    assert state["conv1.weight"].shape == (16, 1, 3, 3)
    assert state["fc1.weight"].shape == (128, 32 * 3 * 4)  # 12x16 pooled twice: 3x4
    assert state["fc2.weight"].shape == (3, 128)
    # The documented parameter count: conv 160 + 4640, fc1 49280, fc2 387.
    assert probe["model"]["parameters"] == sum(t.numel() for t in state.values())


def test_bce_on_two_classes_and_mse_on_labels(tmp_path):
    make_folder(tmp_path / "data", classes=2)
    run = tmp_path / "bce"
    codes, out = run_ranks(1, COMMON + ["--model", "mlp", "--data", str(tmp_path / "data"), "--loss", "bce",
                                        "--max-steps", "20"], run)
    assert codes == [0], out
    summary = read_json(run / "summary.json")
    assert summary["loss"] == "bce" and 0.0 <= summary["val_accuracy"] <= 1.0
    assert torch.load(run / "model.pt")["fc2.weight"].shape == (1, 256)
    run = tmp_path / "mse"
    codes, out = run_ranks(1, COMMON + ["--model", "linear", "--data", str(tmp_path / "data"), "--loss", "mse",
                                        "--max-steps", "5", "--lr", "0.001"], run)
    assert codes == [0], out
    summary = read_json(run / "summary.json")
    assert summary["loss"] == "mse" and summary["val_accuracy"] is None
    assert torch.load(run / "model.pt")["fc.weight"].shape == (1, 12 * 16)


def test_bad_data_options(tmp_path):
    make_folder(tmp_path / "data", classes=3)
    make_folder(tmp_path / "wider", classes=3, test_classes=5)
    make_folder(tmp_path / "small", size=(8, 8), classes=3)
    (tmp_path / "empty").mkdir()
    data = ["--data", str(tmp_path / "data")]
    cases = [
        (["--model", "mlp", "--val-split", "1.5"] + data, "--val-split: must be in [0, 1)"),
        (["--model", "mlp", "--val-split", "0.001"] + data, "holds out 0"),
        (["--model", "mlp", "--val-split", "0.2", "--val-data", str(tmp_path / "data")] + data, "use one of them"),
        (["--model", "mlp", "--loss", "cross_entropy", "--data", "synthetic"], "--loss cross_entropy needs class labels"),
        (["--model", "mlp", "--loss", "bce"] + data, "--loss bce needs 0/1 labels"),
        (["--model", "mlp", "--loss", "hinge"] + data, "--loss: unknown value 'hinge'"),
        (["--model", "mlp", "--normalize", "0.5,0.2,0.1"] + data, "give MEAN,STD or 1 means then 1 stds"),
        (["--model", "mlp", "--normalize", "0.5,0"] + data, "every std must be > 0"),
        (["--model", "mlp", "--image-size", "12x12"] + data, "--image-size 12x12: give HEIGHT,WIDTH"),
        (["--model", "mlp", "--data", str(tmp_path / "wider")], "labels out of range"),
        (["--model", "mlp", "--val-data", str(tmp_path / "small")] + data, "samples are 1x8x8 but the training samples are 1x12x16"),
        (["--model", "cnn", "--data", "synthetic"], "--model cnn needs images"),
        (["--model", "mlp", "--data", str(tmp_path / "nothing")], "no such file or folder"),
        (["--model", "mlp", "--data", str(tmp_path / "empty")], "holds neither MNIST-format IDX files"),
    ]
    for args, needle in cases:
        code, text = run_single(COMMON + args + ["--validate-only"])
        assert code == 2, (args, text)
        assert needle in text, (args, text)
        assert len(text.strip().splitlines()) == 1, text
