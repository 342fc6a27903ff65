"""`srun -n 2 ringmaster-trainer` on a real one-node Slurm (scripts/slurm-local.sh starts it), with
nothing but Slurm's environment: no MASTER_ADDR, MASTER_PORT, RANK or WORLD_SIZE. Skipped, with the
reason, where Slurm cannot be started (not root, slurm-wlm not installed). The daemons stay up for the
next run; the queue is empty afterwards."""
import csv
import json
import os
import shutil
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from conftest import TRAINER

SOURCE_DIR = Path(os.environ.get("RINGMASTER_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SLURM_LOCAL = SOURCE_DIR / "scripts" / "slurm-local.sh"
EXIT_CANNOT_RUN_HERE = 77  # slurm-local.sh: not root, or Slurm not installed
STEP_TIMEOUT_S = 180
QUEUE_DRAIN_S = 60
# Launchers' variables and anything of an enclosing Slurm job: the step must get only its own.
NOT_PASSED = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
              "RINGMASTER_SOCKET", "RINGMASTER_TOKEN")


@pytest.fixture(scope="module")
def local_slurm():
    if os.geteuid() != 0:
        pytest.skip("needs root: scripts/slurm-local.sh starts munged, slurmctld and slurmd")
    missing = [t for t in ("srun", "squeue", "scancel", "slurmctld", "slurmd", "munged") if shutil.which(t) is None]
    if missing:
        pytest.skip(f"Slurm is not installed ({', '.join(missing)} missing): scripts/setup.sh installs slurm-wlm and munge")
    proc = subprocess.run([str(SLURM_LOCAL)], capture_output=True, text=True, timeout=120)
    if proc.returncode == EXIT_CANNOT_RUN_HERE:
        pytest.skip(proc.stderr.strip())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    yield


def queued(job_name):
    out = subprocess.run(["squeue", "-h", "-n", job_name, "-o", "%i %T"], capture_output=True, text=True, timeout=30)
    return out.stdout.strip()


def wait_until_gone(job_name):
    deadline = time.monotonic() + QUEUE_DRAIN_S
    while queued(job_name) and time.monotonic() < deadline:
        time.sleep(0.2)
    return queued(job_name)


def test_srun_two_tasks_train_with_only_slurms_environment(local_slurm, tmp_path):
    job_name = f"ringmaster-test-{uuid.uuid4().hex[:8]}"
    run_dir = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if k not in NOT_PASSED and not k.startswith("SLURM_")}
    command = ["srun", "-n", "2", "--cpus-per-task", "1", "--job-name", job_name, "--time", "5",
               "--kill-on-bad-exit=1", TRAINER, "--device", "cpu", "--data", "synthetic", "--model", "linear",
               "--synthetic-samples", "512", "--batch-size", "32", "--epochs", "1", "--threads", "1",
               "--out", str(run_dir)]
    started = time.monotonic()
    try:
        proc = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=STEP_TIMEOUT_S)
    finally:
        if queued(job_name):
            subprocess.run(["scancel", "-n", job_name], timeout=30)
        left = wait_until_gone(job_name)
    seconds = time.monotonic() - started
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert left == "", f"still queued after the step: {left}"

    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed", summary
    assert summary["world_size"] == 2, summary
    with open(run_dir / "metrics.csv") as f:
        steps = [int(row["step"]) for row in csv.DictReader(f)]
    # 512 samples over 2 ranks of 32 per batch: 8 steps in the epoch.
    assert steps and steps[-1] == 8, steps
    host = socket.gethostname().split(".")[0]
    assert output.count(f"MASTER_ADDR {host} = first host of SLURM_STEP_NODELIST") == 2, output
    assert output.count("rank 0/2") >= 1 and output.count("rank 1/2") >= 1, output
    print(f"srun step took {seconds:.1f} s")
