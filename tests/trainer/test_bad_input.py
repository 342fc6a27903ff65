"""Bad input: a one-line error naming the flag or file and what would be valid, exit code 2."""
import gzip
import shutil
from pathlib import Path

import pytest

from conftest import free_port, run_single

FASHION = Path("/usr/share/datasets/fashion-mnist")


def copy_dataset(tmp_path):
    """A writable copy of Fashion-MNIST to damage."""
    data = tmp_path / "data"
    data.mkdir()
    for f in FASHION.glob("*.gz"):
        shutil.copy(f, data)
    return data


def check(args, *needles, env=None):
    code, output = run_single(args, env=env)
    assert code == 2, f"exit code {code}, output:\n{output}"
    for needle in needles:
        assert needle in output, f"{needle!r} not in:\n{output}"
    return output


def test_unknown_model(tmp_path):
    check(["--model", "resnet9000", "--out", str(tmp_path)], "--model", "resnet9000", "linear|mlp|cnn")


def test_batch_size_zero(tmp_path):
    check(["--batch-size", "0", "--out", str(tmp_path)], "--batch-size", ">= 1")


def test_batch_larger_than_shard(tmp_path):
    check(["--batch-size", "70000", "--out", str(tmp_path)], "--batch-size 70000", "60000", "use at most")


def test_negative_lr(tmp_path):
    check(["--lr", "-0.1", "--out", str(tmp_path)], "--lr", "> 0")


def test_unknown_flag(tmp_path):
    check(["--learning-rate", "0.1"], "--learning-rate", "--help")


def test_missing_dataset(tmp_path):
    check(["--data", str(tmp_path / "nowhere"), "--out", str(tmp_path / "run")], "--data", "no such file or folder")


def test_dataset_folder_missing_a_file(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(FASHION / "train-images-idx3-ubyte.gz", data)
    check(["--data", str(data), "--out", str(tmp_path / "run")], "missing train-labels-idx1-ubyte")


def test_corrupt_dataset(tmp_path):
    data = copy_dataset(tmp_path)
    with gzip.open(FASHION / "t10k-images-idx3-ubyte.gz") as src:
        head = src.read(5000)  # header promises 10000 images, data is cut short
    with gzip.open(data / "t10k-images-idx3-ubyte.gz", "wb") as dst:
        dst.write(head)
    check(["--data", str(data), "--out", str(tmp_path / "run")], "t10k-images-idx3-ubyte.gz is truncated")


def test_not_an_idx_file(tmp_path):
    data = copy_dataset(tmp_path)
    (data / "train-labels-idx1-ubyte.gz").unlink()
    (data / "train-labels-idx1-ubyte").write_bytes(b"hello, not idx")
    check(["--data", str(data), "--out", str(tmp_path / "run")], "train-labels-idx1-ubyte", "not an IDX file")


def test_unreadable_job_file(tmp_path):
    check(["--job", str(tmp_path / "missing.json")], "job file", "cannot be read")


def test_malformed_job_file(tmp_path):
    job = tmp_path / "job.json"
    job.write_text("{ \"lr\": 0.1, ")
    check(["--job", str(job)], "job file", "not valid JSON")


def test_job_file_bad_value(tmp_path):
    job = tmp_path / "job.json"
    job.write_text('{"trainer": {"batch_size": 0}}')
    check(["--job", str(job)], "--batch-size", ">= 1")


def test_resume_from_other_model(tmp_path):
    run = tmp_path / "mlp-run"
    code, output = run_single(["--model", "mlp", "--max-steps", "2", "--eval-batch-size", "5000", "--out", str(run)])
    assert code == 0, output
    check(["--model", "cnn", "--resume", str(run), "--out", str(tmp_path / "cnn-run")],
          "holds model 'mlp'", "--model is 'cnn'")


def test_resume_from_garbage(tmp_path):
    bad = tmp_path / "step-00000001.pt"
    bad.write_bytes(b"not a checkpoint")
    check(["--resume", str(bad), "--out", str(tmp_path / "run")], "--resume", "not a readable Ringmaster checkpoint")


def test_nccl_without_cuda(tmp_path):
    check(["--backend", "nccl", "--out", str(tmp_path)], "--backend nccl", "--device cuda")


def test_cuda_without_gpu(tmp_path):
    check(["--device", "cuda", "--out", str(tmp_path)], "--device cuda", "--device cpu")


def test_missing_master_addr(tmp_path):
    check(["--out", str(tmp_path)], "MASTER_ADDR",
          env={"WORLD_SIZE": "2", "RANK": "0", "MASTER_PORT": str(free_port())})


def test_bad_port(tmp_path):
    check(["--out", str(tmp_path)], "MASTER_PORT", "[1, 65535]",
          env={"WORLD_SIZE": "2", "RANK": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "99999"})


def test_rank_out_of_range(tmp_path):
    check(["--out", str(tmp_path)], "RANK", "[0, 1]",
          env={"WORLD_SIZE": "2", "RANK": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"})

