"""scripts/build-trainer.sh, the GPU user's one command, as such a user runs it: built against a named Python's
PyTorch (here scripts/setup-torch.sh's torch 2.11.0+cu130; the build folder scripts/test.sh made, so only a
no-op rebuild happens), installed into $XDG_DATA_HOME/ringmaster/bin, and then the trainer ringmaster-launch
runs without being told (it names it, with CUDA and NCCL). Bad input is one line and exit 2."""
import os
import re
import subprocess
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("RINGMASTER_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SCRIPT = SOURCE / "scripts" / "build-trainer.sh"
LAUNCH = os.environ.get("RINGMASTER_LAUNCH", "ringmaster-launch")
CUDA_TRAINER = os.environ.get("RINGMASTER_CUDA_TRAINER", "")


def cuda_build():
    if not CUDA_TRAINER:
        pytest.skip("RINGMASTER_CUDA_TRAINER is not set (scripts/test.sh sets it to build-cuda's trainer)")
    build = Path(CUDA_TRAINER).resolve().parents[1]
    cache = (build / "CMakeCache.txt").read_text()
    python = re.search(r"^RINGMASTER_TORCH_PYTHON:FILEPATH=(.+)$", cache, re.M).group(1)
    return build, python


def run(args, env=None, timeout=1800):
    full = {k: v for k, v in os.environ.items() if k != "RINGMASTER_TRAINER"}
    full.update(env or {})
    return subprocess.run(args, env=full, capture_output=True, text=True, timeout=timeout)


def test_builds_installs_and_the_launcher_runs_it(tmp_path):
    build, python = cuda_build()
    data_home = tmp_path / "share"
    # --with-tests: the same configuration scripts/test.sh made, so build-cuda keeps its tests.
    built = run(["bash", str(SCRIPT), "--python", python, "--build-dir", str(build), "--with-tests"],
                {"XDG_DATA_HOME": str(data_home)})
    assert built.returncode == 0, built.stdout + built.stderr
    installed = data_home / "ringmaster" / "bin" / "ringmaster-trainer"
    assert f"installed {installed}" in built.stdout, built.stdout
    assert re.search(r"CUDA: yes \(\d+\.\d+\)", built.stdout) and "NCCL: yes (" in built.stdout, built.stdout
    assert os.access(installed, os.X_OK)

    launched = run([LAUNCH, "--device", "cpu", "--nproc", "1", "--max-steps", "2", "--threads", "1",
                    "--eval-batch-size", "5000", "--output-root", str(tmp_path / "runs")],
                   {"XDG_DATA_HOME": str(data_home)}, timeout=300)
    assert launched.returncode == 0, launched.stdout + launched.stderr
    assert re.search(rf"trainer {re.escape(str(installed))} \(LibTorch 2\.\d+\.\d+, CUDA \d+\.\d+, NCCL ",
                     launched.stdout + launched.stderr), launched.stdout + launched.stderr


@pytest.mark.parametrize("args, needle", [
    ([], "--python PYTHON is required"),
    (["--python", "/nonexistent/python"], "--python /nonexistent/python: no such program"),
    (["--python", "/bin/false"], "cannot import torch"),
    (["--python", "/bin/true", "--jobs", "2"], "unknown argument '--jobs'"),
])
def test_bad_input_is_one_line(tmp_path, args, needle):
    proc = run(["bash", str(SCRIPT), *args], {"XDG_DATA_HOME": str(tmp_path)}, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0], proc.stderr
    assert not (tmp_path / "ringmaster").exists()
