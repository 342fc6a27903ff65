"""--version on every program: the first line is "PROGRAM VERSION" (what help2man and users read), then
the Qt version (not for the trainer, which has no Qt), the LibTorch version and whether CUDA and NCCL are
compiled in. The Qt programs answer before creating an application, so no display is needed."""
import json
import os
import re
import subprocess

import pytest

VERSION = os.environ["RINGMASTER_PROJECT_VERSION"]
LIBTORCH = os.environ["RINGMASTER_LIBTORCH_VERSION"]
WITH_CUDA = os.environ["RINGMASTER_WITH_CUDA"] == "1"

QT_PROGRAMS = {
    "ringmaster": os.environ["RINGMASTER_GUI"],
    "ringmaster-launch": os.environ["RINGMASTER_LAUNCH"],
    "ringmaster-runs": os.environ["RINGMASTER_RUNS"],
}
TRAINER = os.environ["RINGMASTER_TRAINER"]


def version_lines(binary):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    result = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return result.stdout.splitlines()


@pytest.mark.parametrize("program", sorted(QT_PROGRAMS))
def test_qt_program_version(program):
    lines = version_lines(QT_PROGRAMS[program])
    assert lines[0] == f"{program} {VERSION}"
    qt = re.fullmatch(r"Qt (6\.\d+\.\d+) \(built with (6\.\d+\.\d+)\)", lines[1])
    assert qt, lines[1]
    assert lines[2].startswith(f"LibTorch {LIBTORCH} (in ringmaster-trainer")
    cuda = "yes" if WITH_CUDA else "no"
    assert lines[3].startswith(f"CUDA: {cuda}")
    assert lines[4].startswith(f"NCCL: {cuda}")
    if program == "ringmaster-runs":
        assert len(lines) == 5
    else:
        # The launcher and the app name the trainer they would run, as its own --version describes it.
        assert len(lines) == 6
        built = "CUDA " if WITH_CUDA else "CPU only"
        assert lines[5].startswith(f"Trainer: {TRAINER} (LibTorch {LIBTORCH}, ") and built in lines[5], lines[5]


def test_launcher_version_names_the_cuda_trainer_it_would_run():
    cuda = os.environ.get("RINGMASTER_CUDA_TRAINER")
    if not cuda:
        pytest.skip("RINGMASTER_CUDA_TRAINER is not set (scripts/test.sh sets it to build-cuda's trainer)")
    env = dict(os.environ, RINGMASTER_TRAINER=cuda)
    out = subprocess.run([QT_PROGRAMS["ringmaster-launch"], "--version"], capture_output=True, text=True, timeout=120,
                         env=env, check=True).stdout.splitlines()
    assert re.fullmatch(rf"Trainer: {re.escape(os.path.abspath(cuda))} \(LibTorch 2\.\d+\.\d+, CUDA \d+\.\d+, NCCL \S+\)",
                        out[5]), out


def test_trainer_version():
    lines = version_lines(TRAINER)
    assert lines[0] == f"ringmaster-trainer {VERSION}"
    assert lines[1] == f"LibTorch {LIBTORCH}"
    cuda = "yes" if WITH_CUDA else "no"
    assert lines[2].startswith(f"CUDA: {cuda}")
    assert lines[3].startswith(f"NCCL: {cuda}")
    assert lines[4] == "Gloo: yes"
    assert not any(line.startswith("Qt") for line in lines), "the trainer has no Qt"


def test_trainer_summary_records_what_it_was_built_with(tmp_path):
    """summary.json names the LibTorch, CUDA and NCCL the trainer was compiled with, as --version does
    ("CUDA: yes (12.1)"); a build without CUDA records null for both (bundles' environment.json reads them)."""
    lines = version_lines(TRAINER)
    compiled = {}
    for line in lines[2:4]:
        name, _, rest = line.partition(": ")
        match = re.fullmatch(r"yes \((.+)\)", rest)
        compiled[name] = match.group(1) if match else None
    if WITH_CUDA:
        assert compiled["CUDA"] and compiled["NCCL"], lines
    else:
        assert compiled == {"CUDA": None, "NCCL": None}, lines
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    run = tmp_path / "run"
    result = subprocess.run([TRAINER, "--model", "linear", "--data", "synthetic", "--synthetic-samples", "64",
                             "--batch-size", "16", "--max-steps", "2", "--threads", "1", "--out", str(run)],
                            capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads((run / "summary.json").read_text())
    assert summary["libtorch_version"] == LIBTORCH
    assert summary["cuda_version"] == compiled["CUDA"]
    assert summary["nccl_version"] == compiled["NCCL"]


@pytest.mark.parametrize("binary", [TRAINER, *QT_PROGRAMS.values()])
def test_help_lists_version(binary):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    result = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    assert "--version" in result.stdout


def test_the_app_answers_help_without_a_display():
    """ringmaster --help in an SSH session: the usage, not Qt's "could not connect to display" (help2man reads it too)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    for flag in ("--help", "-h"):
        result = subprocess.run([QT_PROGRAMS["ringmaster"], flag], capture_output=True, text=True, timeout=60, env=env)
        assert result.returncode == 0, result.stderr
        assert "display" not in result.stderr, result.stderr
        assert result.stdout.startswith("Usage: ") and "--start" in result.stdout and "job" in result.stdout, result.stdout
    # Anything else without a display: one line naming the problem and the way out, exit 2.
    result = subprocess.run([QT_PROGRAMS["ringmaster"]], capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("ringmaster: error: no display") and result.stderr.count("\n") == 1, result.stderr
    assert "ringmaster-launch" in result.stderr
