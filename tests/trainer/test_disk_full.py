"""A full disk is an ordinary failure: one line naming the file and the system's reason, exit 1, no
temp file left, the earlier checkpoints intact, and --resume works once there is space again."""
import os
import subprocess

import pytest
import torch

from conftest import read_json, run_ranks

DISK_MB = 8  # an mlp checkpoint (weights + momentum) is ~1.6 MB: the disk fills after a few
ARGS = ["--model", "mlp", "--batch-size", "64", "--threads", "1", "--seed", "5", "--eval-batch-size", "5000",
        "--checkpoint-every", "10", "--keep-checkpoints", "1000"]


@pytest.fixture
def small_disk(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK_MB}M", "tmpfs", str(disk)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=False)


def step_of(path):
    return int(path.name[len("step-"):-len(".pt")])


def test_full_disk_fails_cleanly_and_resume_works_after(small_disk, tmp_path):
    run = small_disk / "run"
    logs = tmp_path  # the logs must not be on the full disk
    codes, out = run_ranks(1, ARGS + ["--max-steps", "100000"], run, log_dir=logs)
    log = out[0]
    assert codes == [1], f"exit {codes}:\n{log}"

    enospc = [line for line in log.splitlines() if "No space left on device" in line]
    assert len(enospc) == 1, log
    assert str(run) in enospc[0], enospc[0]
    assert "frame #" not in log and "terminate called" not in log, log

    leftovers = [str(p) for p in run.rglob("*") if ".tmp" in p.name]
    assert leftovers == [], leftovers
    checkpoints = sorted((run / "checkpoints").glob("step-*.pt"), key=step_of)
    assert len(checkpoints) >= 2, log
    assert [step_of(p) for p in checkpoints] == [10 * (i + 1) for i in range(len(checkpoints))]
    for path in checkpoints:
        torch.jit.load(str(path))  # whole and readable: a TorchScript archive (torch.load refuses those by default since 2.6)

    # Space again: the same run continues from its newest checkpoint and completes.
    subprocess.run(["mount", "-o", "remount,size=64M", str(small_disk)], check=True)
    last = step_of(checkpoints[-1])
    codes, out = run_ranks(1, ARGS + ["--max-steps", str(last + 10), "--resume", str(run)], run, log_dir=logs)
    assert codes == [0], out[0]
    assert f"at step {last} " in out[0], out[0]
    summary = read_json(run / "summary.json")
    assert summary["status"] == "completed" and summary["steps"] == last + 10
    steps = [int(line.split(",", 1)[0]) for line in (run / "metrics.csv").read_text().splitlines()[1:]]
    assert steps == list(range(1, last + 11))
    assert (run / "model.pt").exists()
