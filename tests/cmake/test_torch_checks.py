"""cmake/RingmasterTorch.cmake's checks of a PyTorch wheel, each against a stand-in Python that reports what a
problem wheel would (torch.version.cuda, torch.cuda.nccl.version(), the ABI, where nccl.h is): every problem
stops the configure before LibTorch's own CMake files run, with one message naming the cause and the fix.
The real wheel's path (scripts/setup-torch.sh's torch 2.11.0) is the CUDA build itself."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("RINGMASTER_SOURCE_DIR", Path(__file__).resolve().parents[2]))
NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)


def nvcc_release():
    out = subprocess.run([NVCC, "--version"], capture_output=True, text=True, check=True).stdout
    return out.split("release ", 1)[1].split(",", 1)[0]


def configure(tmp_path, facts, fails_to_import=False, extra=()):
    python = tmp_path / "python"
    if fails_to_import:
        python.write_text("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'torch'\" >&2\nexit 1\n")
    else:
        python.write_text("#!/bin/sh\ncat <<'FACTS'\n" + "".join(f"{k}={v}\n" for k, v in facts.items()) + "FACTS\n")
    python.chmod(0o755)
    project = tmp_path / "project"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.22)\nproject(check CXX)\nadd_library(ringmaster_options INTERFACE)\n"
        f"list(APPEND CMAKE_MODULE_PATH {SOURCE / 'cmake'})\ninclude(RingmasterTorch)\n")
    proc = subprocess.run(["cmake", "-S", str(project), "-B", str(tmp_path / "build"),
                           f"-DRINGMASTER_TORCH_PYTHON={python}", *extra],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    # CMake folds long messages over lines: compare the words.
    return " ".join(proc.stderr.split())


def wheel(**facts):
    base = {"version": "2.11.0", "full_version": "2.11.0+cu130", "prefix": "/nonexistent/share/cmake",
            "library_dir": "/nonexistent/lib", "abi": "1", "cuda": "13.0", "nccl": "2.28.9"}
    base.update(facts)
    return base


def test_a_python_without_torch(tmp_path):
    err = configure(tmp_path, {}, fails_to_import=True)
    assert "cannot import torch (ModuleNotFoundError: No module named 'torch')" in err, err
    assert "scripts/setup-torch.sh" in err, err


def test_the_pre_cxx11_abi_of_the_2_4_to_2_6_wheels(tmp_path):
    err = configure(tmp_path, wheel(version="2.5.1", full_version="2.5.1+cu124", abi="0", cuda="12.4"))
    assert "torch 2.5.1+cu124 uses the pre-C++11 ABI (_GLIBCXX_USE_CXX11_ABI=0" in err, err
    assert "Use torch 2.7 or newer" in err, err


def test_a_torch_older_than_the_build_supports(tmp_path):
    err = configure(tmp_path, wheel(version="2.6.0", full_version="2.6.0+cu126", cuda="12.6"))
    assert "torch 2.6.0+cu126 is older than a wheel build supports" in err, err


@pytest.mark.skipif(NVCC is None, reason="no CUDA toolkit (nvcc) on this machine")
def test_a_cuda_toolkit_of_another_version(tmp_path):
    other = "12.8" if nvcc_release() != "12.8" else "12.9"
    err = configure(tmp_path, wheel(cuda=other, full_version="2.11.0+cu128"), extra=[f"-DCMAKE_CUDA_COMPILER={NVCC}"])
    assert f"the CUDA toolkit of {NVCC} is {nvcc_release()}, but torch 2.11.0 was built with CUDA {other}" in err, err
    assert "-DCMAKE_CUDA_COMPILER=" in err, err


def test_no_cuda_compiler(tmp_path):
    fake = tmp_path / "nvcc"
    fake.write_text("#!/bin/sh\necho 'not a compiler'\n")
    fake.chmod(0o755)
    err = configure(tmp_path, wheel(), extra=[f"-DCMAKE_CUDA_COMPILER={fake}"])
    assert f"{fake} --version did not say its release" in err, err


@pytest.mark.skipif(NVCC is None, reason="no CUDA toolkit (nvcc) on this machine")
def test_the_wheel_without_its_nccl_header(tmp_path):
    err = configure(tmp_path, wheel(cuda=nvcc_release()), extra=[f"-DCMAKE_CUDA_COMPILER={NVCC}"])
    assert "uses NCCL 2.28.9, whose nccl.h (ProcessGroupNCCL.hpp includes it) is not in that Python's environment" in err, err


@pytest.mark.skipif(NVCC is None, reason="no CUDA toolkit (nvcc) on this machine")
def test_an_nccl_header_of_another_version(tmp_path):
    include = tmp_path / "nccl" / "include"
    include.mkdir(parents=True)
    (include / "nccl.h").write_text("#define NCCL_MAJOR 2\n#define NCCL_VERSION_CODE 22703\n")
    err = configure(tmp_path, wheel(cuda=nvcc_release(), nccl_include=include), extra=[f"-DCMAKE_CUDA_COMPILER={NVCC}"])
    assert f"{include}/nccl.h is NCCL_VERSION_CODE 22703, but torch 2.11.0+cu130 was built with NCCL 2.28.9 (22809)" in err, err
    assert "ProcessGroupNCCL::Options" in err, err
