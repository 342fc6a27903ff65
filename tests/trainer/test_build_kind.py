"""What this ringmaster-trainer was compiled and linked against, checked from the binary itself: the Debian
build (LibTorch 1.13, CPU) or the CUDA build against PyTorch's wheel (torch 2.11, CUDA 13.0, NCCL). CMake
passes what it configured (RINGMASTER_WITH_CUDA, RINGMASTER_EXPECTED_*). Also how a GPU request ends on a
machine without a GPU, in either build: one line and exit 2, never a crash while CUDA loads."""
import os
import re
import subprocess

import pytest
import torch

from conftest import TRAINER, digest, run_single

WITH_CUDA = os.environ.get("RINGMASTER_WITH_CUDA") == "1"
EXPECTED_LIBTORCH = os.environ.get("RINGMASTER_EXPECTED_LIBTORCH", "")
EXPECTED_CUDA = os.environ.get("RINGMASTER_EXPECTED_CUDA", "")
EXPECTED_NCCL = os.environ.get("RINGMASTER_EXPECTED_NCCL", "")
# The wheel's torch/lib (empty for Debian's LibTorch), and whether its libraries export libstdc++ symbols.
EXPECTED_TORCH_LIBRARY_DIR = os.environ.get("RINGMASTER_EXPECTED_TORCH_LIBRARY_DIR", "")
EXPORTS_LIBSTDCXX = os.environ.get("RINGMASTER_EXPORTS_LIBSTDCXX") == "1"
EXIT_USAGE = 2  # protocol::kTrainerExitUsage
WORLD_OF_ONE = {"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "LOCAL_WORLD_SIZE": "1",
                "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29999"}


def test_version_names_libtorch_cuda_and_nccl():
    out = subprocess.run([TRAINER, "--version"], capture_output=True, text=True, timeout=120, check=True).stdout
    assert f"LibTorch {EXPECTED_LIBTORCH}\n" in out, out
    if WITH_CUDA:
        assert f"CUDA: yes ({EXPECTED_CUDA})\n" in out, out
        assert f"NCCL: yes ({EXPECTED_NCCL})\n" in out, out
    else:
        assert "CUDA: no" in out and "NCCL: no" in out, out


def linked():
    return subprocess.run(["ldd", TRAINER], capture_output=True, text=True, timeout=60, check=True).stdout


def test_links_libtorch_cuda_and_nccl_only_in_the_cuda_build():
    libraries = linked()
    assert "not found" not in libraries, libraries
    for name in ("libtorch_cuda.so", "libnccl.so.2", "libc10_cuda.so"):
        assert (name in libraries) == WITH_CUDA, (name, libraries)
    # Every LibTorch library is the named wheel's (Debian's libtorch-dev is installed beside it here).
    resolved = re.findall(r"^\s*(lib(?:torch|c10)\S*\.so\S*)\s+=>\s+(\S+)", libraries, re.M)
    assert resolved, libraries
    if EXPECTED_TORCH_LIBRARY_DIR:
        wheel = os.path.realpath(EXPECTED_TORCH_LIBRARY_DIR)
        for name, path in resolved:
            assert os.path.realpath(path).startswith(wheel + os.sep), (name, path, wheel)


def needed():
    dynamic = subprocess.run(["readelf", "-d", TRAINER], capture_output=True, text=True, timeout=60, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)


def test_libstdcxx_comes_before_libtorch_where_libtorch_exports_its_symbols():
    # PyTorch's wheels export copies of libstdc++'s std::filesystem (pytorch#133437): listed first, they would
    # take over the trainer's calls (std::filesystem::remove_all jumped to address 0).
    order = needed()
    torch_libraries = [i for i, name in enumerate(order) if name.startswith(("libtorch", "libc10"))]
    assert torch_libraries, order
    if EXPORTS_LIBSTDCXX:
        assert order.index("libstdc++.so.6") < min(torch_libraries), order


# On a machine with a GPU these requests train instead: the refusals are for machines without one.
no_gpu = pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is visible here")


def one_line_refusal(args, tmp_path):
    env = dict(os.environ, **WORLD_OF_ONE)
    env.pop("RINGMASTER_SOCKET", None)
    proc = subprocess.run([TRAINER, *args, "--out", str(tmp_path / "run")], env=env, capture_output=True,
                          text=True, timeout=120)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == EXIT_USAGE, (proc.returncode, proc.stdout, proc.stderr)
    assert len(lines) == 1, proc.stderr
    for crash in ("frame #", "terminate called", "Traceback", "Segmentation", "Aborted"):
        assert crash not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    return lines[0]


@no_gpu
def test_cuda_request_without_a_gpu_is_one_line(tmp_path):
    line = one_line_refusal(["--device", "cuda", "--max-steps", "1"], tmp_path)
    assert "--device cuda" in line and "--device cpu" in line, line
    if WITH_CUDA:
        assert "no CUDA device is visible" in line, line
    else:
        assert "without CUDA" in line and "build-trainer.sh" in line, line


@no_gpu
def test_nccl_forced_on_one_rank_without_a_gpu_is_one_line(tmp_path):
    line = one_line_refusal(["--device", "cuda", "--backend", "nccl", "--force-collectives", "true",
                             "--max-steps", "1"], tmp_path)
    assert "--device cuda" in line, line


def test_bad_data_placement_is_one_line(tmp_path):
    line = one_line_refusal(["--data-placement", "gpu"], tmp_path)
    assert "--data-placement" in line and "auto|device|host" in line, line


def test_deterministic_kernels_change_nothing_on_cpu(tmp_path):
    # On the CPU the built-in models' kernels are deterministic already: the flag is accepted and the
    # weights are bit-identical (on a GPU it chooses other cuDNN and cuBLAS kernels; see docs/gpu.md).
    args = ["--model", "cnn", "--max-steps", "12", "--eval-every", "0", "--threads", "1"]
    code, plain = run_single(args + ["--out", str(tmp_path / "plain")])
    assert code == 0, plain
    code, strict = run_single(args + ["--deterministic", "true", "--out", str(tmp_path / "strict")])
    assert code == 0, strict
    assert "deterministic kernels only" in strict and "deterministic kernels only" not in plain, strict
    assert digest(plain) is not None and digest(plain) == digest(strict)
