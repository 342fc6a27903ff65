"""A Hugging Face Accelerate script (`Accelerator(log_with="tensorboard")`, `accelerator.prepare`, `accelerator.log`)
run unchanged by `ringmaster-launch --script train.py --nproc 2 --device cpu --tensorboard-dir accelerate_logs
--metric-pattern none`, the recipe of docs/scripts.md:
  - Accelerate sees one group of 2 CPU processes (MULTI_CPU; --device cpu sets ACCELERATE_USE_CPU as
    `accelerate launch --cpu` does, without which each rank would train alone);
  - every value its TensorBoard tracker writes reaches scalars.csv, at its step, as written, and so does what
    the loop sends with the helper module (`ringmaster.log()`);
  - a rank that raises is the root cause, with its Python exception line;
  - Ctrl-C (SIGINT to the launcher) stops every rank.

Runs in RINGMASTER_FRAMEWORK_PYTHON (scripts/test.sh sets it to .torch-env/bin/python: torch 2.11, accelerate 1.16);
without it the tests are skipped and say why."""
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from framework_runs import (FRAMEWORK_PYTHON, SKIP_REASON, assert_a_raising_rank_is_the_root_cause,  # noqa: E402
                            float32, launch, read_scalars, stop_with_ctrl_c, tensorboard_scalars)

pytestmark = pytest.mark.skipif(not FRAMEWORK_PYTHON, reason=SKIP_REASON)
TIMEOUT = 240
STEPS_PER_EPOCH = 256 // 2 // 8

SCRIPT = (Path(__file__).parents[2] / "examples" / "accelerate_regression.py").read_text()

RECIPE = ["--tensorboard-dir", "accelerate_logs", "--metric-pattern", "none"]


@pytest.fixture
def project(tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    return tmp_path


def test_values_reach_scalars_csv_from_the_tracker_and_the_helper(project):
    run = launch(project, RECIPE + ["--", "--epochs", "3"], timeout=TIMEOUT)
    assert run.returncode == 0, run.output
    summary = json.loads((run.dir / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["world_size"] == 2
    assert "2 processes, DistributedType.MULTI_CPU" in (run.dir / "logs" / "rank-0.log").read_text()

    # One event file: only the main process writes the tracker's.
    [events] = list((project / "accelerate_logs").rglob("events.out.tfevents.*"))
    written = tensorboard_scalars(events.parent)
    assert sorted(written) == ["train_loss"] and len(written["train_loss"]) == 3 * STEPS_PER_EPOCH
    recorded = read_scalars(run.dir)
    helper = recorded.pop("helper_loss")
    assert recorded == written
    assert [[step, float32(value)] for step, value in helper] == written["train_loss"]


def test_a_rank_that_raises_is_the_root_cause(project):
    assert_a_raising_rank_is_the_root_cause(project, RECIPE, TIMEOUT)


def test_ctrl_c_stops_every_rank(project):
    stop_with_ctrl_c(project, RECIPE, lambda run: len(read_scalars(run.dir).get("helper_loss", [])) >= 5, "five steps",
                     TIMEOUT)
