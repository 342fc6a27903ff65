"""Bad input: a one-line error naming the flag or file and what would be valid, exit code 2."""
import gzip
import os
import resource
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
import torch

from conftest import TRAINER, free_port, run_single

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
    check(["--model", "resnet9000", "--out", str(tmp_path)], "--model", "resnet9000", "cnn|mlp|linear")


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


def test_job_file_with_text_after_the_object(tmp_path):
    job = tmp_path / "job.json"
    job.write_text('{"trainer": {"epochs": 1}} {"trainer": {"epochs": 999}}')
    check(["--job", str(job)], "job file", "not valid JSON")


def test_job_file_trainer_not_an_object(tmp_path):
    job = tmp_path / "job.json"
    job.write_text('{"trainer": ["--epochs", "3"]}')
    check(["--job", str(job)], "job file", '"trainer" must be an object of trainer flags')


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


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is visible here")
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



# Found by fuzzing (tests/fuzz) or while writing its targets: each of these crashed the trainer (std::terminate)
# or made it allocate what a corrupt header declared.

def idx_folder(tmp_path, images_header, images_data=b""):
    """An IDX folder whose training images file has the given header (labels: 3 valid ones)."""
    data = tmp_path / "idx"
    data.mkdir()
    (data / "train-images-idx3-ubyte").write_bytes(images_header + images_data)
    (data / "train-labels-idx1-ubyte").write_bytes(bytes([0, 0, 8, 1, 0, 0, 0, 3, 0, 1, 2]))
    return data


def test_idx_shape_whose_product_overflows(tmp_path):
    # 3 x (2^32 - 1): the product wrapped past 64 bits to 12884901887, under the 16 GiB limit, and LibTorch's
    # own overflow check then threw out of --validate-only (std::terminate, core dump).
    data = idx_folder(tmp_path, bytes([0, 0, 8, 3]) + b"\xff\xff\xff\xff" * 3)
    check(["--validate-only", "--data", str(data), "--out", str(tmp_path / "run")],
          "train-images-idx3-ubyte declares an implausible shape")


def check_in_2gib(args, *needles):
    """As check(), with the trainer's data segment and private mappings limited to 2 GiB (RLIMIT_DATA)."""
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    limit = 2 << 30
    proc = subprocess.run([TRAINER, *args], env=env, capture_output=True, text=True, timeout=120,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_DATA, (limit, limit)))
    output = proc.stdout + proc.stderr
    assert proc.returncode == 2, f"exit code {proc.returncode}, output:\n{output}"
    for needle in needles:
        assert needle in output, f"{needle!r} not in:\n{output}"


def test_idx_header_promising_gigabytes_allocates_nothing(tmp_path):
    # A 16-byte file whose header declares 65536 x 65536 x 3 bytes (12 GiB): refused before allocating, so it
    # holds under a 2 GiB data limit (it used to allocate the 12 GiB first, and abort when that failed).
    data = idx_folder(tmp_path, bytes([0, 0, 8, 3]) + struct.pack(">III", 3, 65536, 65536))
    check_in_2gib(["--validate-only", "--data", str(data), "--out", str(tmp_path / "run")],
                  "train-images-idx3-ubyte is truncated: its header promises 12884901888 bytes")


def test_csv_long_header_short_rows_allocates_nothing(tmp_path):
    # 24,000 columns, then 24,000 rows of one field (96 KiB): the rows are refused before the 24,000 x 23,999
    # float features (2.1 GiB) are allocated (they used to be allocated first).
    table = tmp_path / "wide.csv"
    table.write_text(",".join(f"c{i}" for i in range(24000)) + "\n" + "1\n" * 24000)
    check_in_2gib(["--probe", "--data", str(table), "--out", str(tmp_path / "run")],
                  "wide.csv: line 2 has 1 fields, the header has 24000")


def test_model_or_resume_name_the_system_refuses(tmp_path):
    # A name longer than a file name may be (ENAMETOOLONG) threw std::filesystem_error out of the checks.
    long_name = "m" * 300
    check(["--model", long_name, "--out", str(tmp_path / "run")], "--model", "neither a built-in model")
    check(["--validate-only", "--resume", long_name, "--out", str(tmp_path / "run")],
          "--resume", "no such checkpoint file or run directory")


def test_integer_flag_past_its_type(tmp_path):
    # --epochs 4294967297 wrapped to 1 epoch (and --threads 2147483648 to a negative) without a word.
    check(["--validate-only", "--epochs", "4294967297", "--out", str(tmp_path / "run")], "--epochs", "out of range")
    job = tmp_path / "job.json"
    job.write_text('{"trainer": {"keep_checkpoints": 2147483648}}')
    check(["--validate-only", "--job", str(job), "--out", str(tmp_path / "run")], "--keep-checkpoints", "out of range")
