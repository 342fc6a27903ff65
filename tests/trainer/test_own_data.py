"""The user's own data end to end, with files made at test time by python3-torch and python3-pil: a
tensor file regression learned by a TorchScript model, an RGB PNG image folder and a CSV with string
labels trained by the built-in models, whose model.pt reproduces in Python the validation numbers the
run reports; classes.json; bad data refused at --validate-only with one line and exit 2."""
import json

import pytest
import torch
from torch import nn

from conftest import Mlp, read_json, run_ranks, run_single

PIL = pytest.importorskip("PIL.Image")

SEED = 9
COMMON = ["--threads", "1", "--seed", str(SEED), "--eval-batch-size", "1000"]


class Cnn(nn.Module):
    """The built-in cnn for C x H x W images (docs/trainer.md): ReLU then max-pool, twice, then two linear layers."""
    def __init__(self, channels, height, width, outputs):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc1 = nn.Linear(32 * (height // 4) * (width // 4), 128)
        self.fc2 = nn.Linear(128, outputs)

    def forward(self, x):
        x = nn.functional.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = nn.functional.max_pool2d(torch.relu(self.conv2(x)), 2)
        return self.fc2(torch.relu(self.fc1(x.flatten(1))))


def test_tensor_file_regression_with_a_torchscript_linear(tmp_path):
    g = torch.Generator().manual_seed(1)
    w = torch.linspace(-1.0, 1.0, 10)
    b = 0.3
    x = torch.randn(2048, 10, generator=g)
    y = x @ w + b + 0.01 * torch.randn(2048, generator=g)
    torch.save({"x": x, "y": y}, tmp_path / "regression.pt")
    torch.manual_seed(0)  # the model's starting weights: the same every run
    torch.jit.save(torch.jit.script(nn.Linear(10, 1)), tmp_path / "linear.pt")

    run = tmp_path / "run"
    codes, out = run_ranks(2, COMMON + ["--model", str(tmp_path / "linear.pt"), "--data", str(tmp_path / "regression.pt"),
                                        "--val-split", "0.1", "--batch-size", "32", "--lr", "0.05", "--epochs", "8"], run)
    assert codes == [0, 0], out
    summary = read_json(run / "summary.json")
    assert summary["loss"] == "mse" and summary["data_format"] == "tensor-file" and summary["val_samples"] == 204
    assert summary["normalize"]["source"] == "none"  # tensor files are used as given
    learned = torch.jit.load(str(run / "model.torchscript.pt"))
    assert torch.allclose(learned.weight.detach().squeeze(0), w, atol=0.02), learned.weight
    assert abs(learned.bias.item() - b) < 0.02
    assert summary["val_loss"] < 0.001


def write_image_folder(root, classes, per_class, size, mode="RGB"):
    """Each class its own colour plus noise; returns {class: [(path, tensor C x H x W uint8)]}."""
    g = torch.Generator().manual_seed(3)
    colours = [(200, 40, 40), (40, 200, 40), (40, 40, 200)]
    for index, name in enumerate(classes):
        (root / name).mkdir(parents=True)
        for i in range(per_class):
            noise = torch.randint(-40, 40, (size[0], size[1], 3), generator=g)
            pixels = (torch.tensor(colours[index]) + noise).clamp(0, 255).to(torch.uint8)
            PIL.fromarray(pixels.numpy(), "RGB").convert(mode).save(root / name / f"img{i:03d}.png")


def test_png_image_folder_trains_and_python_reproduces_its_validation(tmp_path):
    classes = ["cat", "dog", "emu"]
    write_image_folder(tmp_path / "train", classes, 40, (12, 8))
    write_image_folder(tmp_path / "val", classes, 10, (12, 8))
    run = tmp_path / "run"
    codes, out = run_ranks(2, COMMON + ["--model", "cnn", "--data", str(tmp_path / "train"), "--val-data",
                                        str(tmp_path / "val"), "--batch-size", "10", "--lr", "0.05",
                                        "--max-steps", "12"], run)
    assert codes == [0, 0], out
    assert json.loads((run / "classes.json").read_text()) == classes
    summary = read_json(run / "summary.json")
    assert summary["data_format"] == "image-folder" and summary["class_count"] == 3 and summary["val_samples"] == 30

    def load(folder):
        xs, ys = [], []
        for label, name in enumerate(classes):
            for path in sorted((folder / name).iterdir()):
                img = PIL.open(path).convert("RGB")
                xs.append(torch.frombuffer(bytearray(img.tobytes()), dtype=torch.uint8).view(12, 8, 3).permute(2, 0, 1))
                ys.append(label)
        return torch.stack(xs).double() / 255, torch.tensor(ys)

    train_x, _ = load(tmp_path / "train")
    mean = train_x.mean(dim=(0, 2, 3))
    std = train_x.permute(1, 0, 2, 3).reshape(3, -1).std(dim=1, unbiased=False)
    assert torch.allclose(torch.tensor(summary["normalize"]["mean"], dtype=torch.float64), mean, atol=1e-12)
    assert torch.allclose(torch.tensor(summary["normalize"]["std"], dtype=torch.float64), std, atol=1e-12)

    model = Cnn(3, 12, 8, 3)
    model.load_state_dict(torch.load(run / "model.pt"))
    model.eval()
    val_x, val_y = load(tmp_path / "val")
    m = torch.tensor(summary["normalize"]["mean"]).float().view(1, 3, 1, 1)
    s = torch.tensor(summary["normalize"]["std"]).float().view(1, 3, 1, 1)
    with torch.no_grad():
        logits = model((val_x.float() - m) / s)
    assert abs(nn.functional.cross_entropy(logits, val_y).item() - summary["val_loss"]) < 1e-5
    assert abs((logits.argmax(1) == val_y).double().mean().item() - summary["val_accuracy"]) < 1e-9


def write_csv(path, rows, header):
    path.write_text(",".join(header) + "\n" + "".join(",".join(str(v) for v in row) + "\n" for row in rows))


def test_csv_with_string_labels(tmp_path):
    g = torch.Generator().manual_seed(4)
    names = ["versicolor", "setosa", "virginica"]  # sorted: setosa, versicolor, virginica

    def rows(count):
        out = []
        for _ in range(count):
            k = int(torch.randint(0, 3, (1,), generator=g))
            f = (torch.randn(4, generator=g) + 2 * k).tolist()
            out.append([f"{f[0]:.6f}", f"{f[1]:.6f}", names[k], f"{f[2]:.6f}", f"{f[3]:.6f}"])
        return out

    header = ["sepal_length", "sepal_width", "species", "petal_length", "petal_width"]
    train_rows, val_rows = rows(300), rows(60)
    write_csv(tmp_path / "train.csv", train_rows, header)
    write_csv(tmp_path / "val.csv", val_rows, header)
    run = tmp_path / "run"
    codes, out = run_ranks(2, COMMON + ["--model", "mlp", "--data", str(tmp_path / "train.csv"), "--val-data",
                                        str(tmp_path / "val.csv"), "--label-column", "species", "--batch-size", "16",
                                        "--lr", "0.05", "--epochs", "2"], run)
    assert codes == [0, 0], out
    assert json.loads((run / "classes.json").read_text()) == sorted(names)
    summary = read_json(run / "summary.json")
    assert summary["data_format"] == "csv" and summary["class_count"] == 3 and summary["normalize"]["source"] == "none"

    model = Mlp(4, 3)
    model.load_state_dict(torch.load(run / "model.pt"))
    model.eval()
    x = torch.tensor([[float(r[0]), float(r[1]), float(r[3]), float(r[4])] for r in val_rows], dtype=torch.float32)
    y = torch.tensor([sorted(names).index(r[2]) for r in val_rows])
    with torch.no_grad():
        logits = model(x)
    assert abs(nn.functional.cross_entropy(logits, y).item() - summary["val_loss"]) < 1e-5
    assert summary["val_accuracy"] > 0.8, summary


def test_bad_data_is_refused_at_validate_only(tmp_path):
    write_image_folder(tmp_path / "images", ["a", "b"], 3, (8, 8))
    (tmp_path / "images" / "b" / "img001.png").write_bytes(b"\x89PNG\r\n\x1a\n truncated")
    write_csv(tmp_path / "ragged.csv", [[1, 2, "x"], [3, "y"]], ["f1", "f2", "label"])
    torch.save({"x": torch.randn(10, 3), "y": torch.zeros(9, dtype=torch.long)}, tmp_path / "mismatch.pt")
    torch.save({"x": torch.randn(10, 3), "y": torch.zeros(10, dtype=torch.long)}, tmp_path / "ten.pt")
    cases = [
        (["--model", "cnn", "--data", str(tmp_path / "images")], {}, "img001.png"),
        (["--model", "mlp", "--data", str(tmp_path / "ragged.csv")], {}, "line 3"),
        (["--model", "mlp", "--data", str(tmp_path / "mismatch.pt")], {}, "mismatch.pt"),
        (["--model", "mlp", "--data", str(tmp_path / "ten.pt"), "--batch-size", "8"], {"WORLD_SIZE": "2"},
         "larger than each rank's shard of 5 samples"),
    ]
    for args, env, needle in cases:
        code, text = run_single(COMMON + args + ["--validate-only"], env=env)
        assert code == 2, (args, text)
        assert needle in text and len(text.strip().splitlines()) == 1, (args, text)
