"""A PyTorch Lightning script (its own LightningModule, self.log("train_loss", ...), a ModelCheckpoint, and
Trainer(accelerator="cpu", devices=2, strategy="ddp")) run unchanged by
`ringmaster-launch --script train.py --nproc 2 --tensorboard-dir lightning_logs --metric-pattern none`, the
recipe of docs/scripts.md:
  - Lightning takes torchrun's environment: each rank is one of Ringmaster's two processes (no spawned ones);
  - every train_loss its TensorBoard logger writes reaches scalars.csv, at its step, as written (TensorBoard's
    EventAccumulator reads the same file), and nothing of an earlier run in lightning_logs/ does; so does what a
    callback sends with the helper module (`ringmaster.log()`);
  - a rank that raises is the root cause, with its Python exception line;
  - Ctrl-C (SIGINT to the launcher) stops every rank and leaves Lightning's checkpoint loadable;
  - after kill -9 of a rank, --max-restarts 1 starts the group again and Lightning resumes through its own
    ckpt_path="last".

Runs in RINGMASTER_FRAMEWORK_PYTHON (scripts/test.sh sets it to .torch-env/bin/python: torch 2.11, lightning 2.6.6);
without it the tests are skipped and say why."""
import csv
import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from framework_runs import (FRAMEWORK_PYTHON, HELPER_DIR, SKIP_REASON,  # noqa: E402
                            assert_a_raising_rank_is_the_root_cause, float32, free_port, launch, rank_pid,
                            read_scalars, stop_with_ctrl_c, tensorboard_scalars, wait_until)

pytestmark = pytest.mark.skipif(not FRAMEWORK_PYTHON, reason=SKIP_REASON)
TIMEOUT = 240
STEPS_PER_EPOCH = 256 // 2 // 8

SCRIPT = (Path(__file__).parents[2] / "examples" / "lightning_regression.py").read_text()

RECIPE = ["--tensorboard-dir", "lightning_logs", "--metric-pattern", "none"]

CHECKPOINT_EPOCH = r"""
import sys, torch
checkpoint = torch.load(sys.argv[1], map_location="cpu", weights_only=False)
print(checkpoint["epoch"], checkpoint["global_step"])
"""


@pytest.fixture
def project(tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    return tmp_path


def checkpoint_position(path):
    out = subprocess.run([FRAMEWORK_PYTHON, "-c", CHECKPOINT_EPOCH, str(path)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    epoch, step = out.stdout.split()
    return int(epoch), int(step)


def test_values_reach_scalars_csv_from_lightnings_own_logger(project):
    # An earlier run in the same lightning_logs/ (plain torchrun, 1 epoch): its values must not be followed.
    earlier = subprocess.run([FRAMEWORK_PYTHON, "-m", "torch.distributed.run", "--nproc_per_node", "2",
                              "--master_port", str(free_port()), "train.py", "--epochs", "1"],
                             cwd=project, env=dict(os.environ, PYTHONPATH=HELPER_DIR), capture_output=True, text=True,
                             timeout=TIMEOUT)
    assert earlier.returncode == 0, earlier.stdout + earlier.stderr
    (project / "checkpoints").rename(project / "earlier-checkpoints")  # so this run starts from scratch

    run = launch(project, RECIPE + ["--", "--epochs", "3"], timeout=TIMEOUT)
    assert run.returncode == 0, run.output
    summary = json.loads((run.dir / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["world_size"] == 2
    # Lightning found torchrun's variables: rank N of Ringmaster's is its GLOBAL_RANK N, of 2 members.
    for rank in range(2):
        log = (run.dir / "logs" / f"rank-{rank}.log").read_text()
        assert f"Initializing distributed: GLOBAL_RANK: {rank}, MEMBER: {rank + 1}/2" in log, log
    assert len(json.loads((run.dir / "commands.json").read_text())["ranks"]) == 2

    # Lightning's logger writes train_loss and its own `epoch` at every step; its banners are not scalars.
    written = tensorboard_scalars(project / "lightning_logs" / "version_1")
    assert sorted(written) == ["epoch", "train_loss"] and len(written["train_loss"]) == 3 * STEPS_PER_EPOCH
    recorded = read_scalars(run.dir)
    reported = recorded.pop("callback_loss")
    assert recorded == written
    # ringmaster.log() from the callback: the same losses, at Lightning's global_step after each step (1, 2, ...).
    assert [[step - 1, float32(value)] for step, value in reported] == written["train_loss"]
    assert summary["last_scalars"] == {**{tag: values[-1][1] for tag, values in written.items()},
                                       "callback_loss": reported[-1][1]}
    assert checkpoint_position(project / "checkpoints" / "last.ckpt") == (2, 3 * STEPS_PER_EPOCH)

    # What each rank used, sampled by the launcher every 2 s: real TensorBoard reads RUN_DIR/tb/system as system.csv
    # holds it (tag system/rank<R>/<name>, step the Unix second, value the float32), and none of it was taken for
    # one of the script's own scalars.
    expected = {}
    with open(run.dir / "system.csv", newline="") as rows:
        for row in csv.DictReader(rows):
            expected.setdefault(f"system/rank{row['rank']}/{row['name']}", []).append(
                [math.floor(float(row["wall_time"])), float32(float(row["value"]))])
    assert "system/rank0/rss_mib" in expected and "system/rank1/threads" in expected, expected.keys()
    assert tensorboard_scalars(run.dir / "tb" / "system") == expected
    assert not any(name.startswith("system/") for name in read_scalars(run.dir))


def test_a_rank_that_raises_is_the_root_cause(project):
    assert_a_raising_rank_is_the_root_cause(project, RECIPE, TIMEOUT)


def test_ctrl_c_stops_every_rank_and_leaves_lightnings_checkpoint(project):
    stop_with_ctrl_c(project, RECIPE, lambda run: (project / "checkpoints" / "last.ckpt").exists(),
                     "Lightning's first checkpoint", TIMEOUT)
    epoch, step = checkpoint_position(project / "checkpoints" / "last.ckpt")
    assert step >= STEPS_PER_EPOCH and step % STEPS_PER_EPOCH == 0 and epoch == step // STEPS_PER_EPOCH - 1


def test_a_restart_after_kill_resumes_through_lightnings_ckpt_path(project):
    epochs = 12
    run = launch(project, RECIPE + ["--max-restarts", "1", "--", "--epochs", str(epochs), "--step-sleep", "0.02"],
                 wait=False)
    try:
        wait_until(lambda: (project / "checkpoints" / "last.ckpt").exists() or run.proc.poll() is not None, TIMEOUT,
                   "Lightning's first checkpoint")
        assert run.proc.poll() is None, run.finish(TIMEOUT).output
        os.kill(rank_pid(run.dir, 1), signal.SIGKILL)
        run.finish(TIMEOUT)
    finally:
        run.kill()
    assert run.returncode == 0, run.output
    summary = json.loads((run.dir / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["restarts"] == 1, summary
    log = (run.dir / "logs" / "rank-0.log").read_text()
    assert "Restoring states from the checkpoint path at " in log and "last.ckpt" in log, log
    assert checkpoint_position(project / "checkpoints" / "last.ckpt") == (epochs - 1, epochs * STEPS_PER_EPOCH)
    # The second attempt logged only the steps after the checkpoint it resumed from, in a new version folder.
    second = tensorboard_scalars(project / "lightning_logs" / "version_1")["train_loss"]
    assert second and second[0][0] > 0 and second[-1][0] == epochs * STEPS_PER_EPOCH - 1
