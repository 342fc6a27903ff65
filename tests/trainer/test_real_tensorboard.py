"""What real TensorBoard (the pinned tensorboard of scripts/torch-env.lock) makes of a trainer run, not what our own
readers make of it: TensorBoard's EventAccumulator reads RUN_DIR/tb, and every scalar at every step is the float32
of metrics.csv's and eval.csv's value, each step once; after a resume from an older checkpoint, after a resume that
cut the last steps, and after a fresh run over an old one, TensorBoard still draws one timeline (the abandoned
event files sit in checkpoints/abandoned-*/tb/ beside that timeline's CSVs); and `tensorboard --logdir` over 100
runs starts on loopback and lists every one, with the same values through its HTTP API.

TensorBoard runs in RINGMASTER_FRAMEWORK_PYTHON (scripts/test.sh sets it to .torch-env/bin/python), or in this
Python when it has tensorboard; without either the tests are skipped and say why."""
import importlib.util
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest

from conftest import read_csv, run_ranks, wait_until

sys.path.insert(0, str(Path(__file__).parents[1] / "frameworks"))
import framework_runs  # noqa: E402  (TensorBoard's own reader, run in the framework Python)

FRAMEWORK_PYTHON = os.environ.get("RINGMASTER_FRAMEWORK_PYTHON") or (
    sys.executable if importlib.util.find_spec("tensorboard") else None)
pytestmark = pytest.mark.skipif(
    not FRAMEWORK_PYTHON, reason="no Python with tensorboard: set RINGMASTER_FRAMEWORK_PYTHON to .torch-env/bin/python "
                                 "(scripts/setup-torch.sh makes it; scripts/test.sh sets it)")

COMMON = ["--model", "mlp", "--batch-size", "32", "--threads", "1", "--seed", "7", "--eval-batch-size", "5000",
          "--checkpoint-every", "10", "--keep-checkpoints", "10"]

def float32(text):
    return struct.unpack("<f", struct.pack("<f", float(text)))[0]


def tensorboard_scalars(logdir):
    return framework_runs.tensorboard_scalars(logdir, FRAMEWORK_PYTHON)


def csv_scalars(folder):
    """What TensorBoard should show for the CSVs in folder: each tag's steps in order, values as float32."""
    expected = {}
    for name, tags in (("metrics.csv", ("loss", "lr", "samples_per_sec")), ("eval.csv", ("val_loss", "val_accuracy"))):
        for row in read_csv(Path(folder) / name):
            for tag in tags:
                expected.setdefault(tag, []).append([int(row["step"]), float32(row[tag])])
    return expected


def assert_one_timeline(logdir, csv_folder, last_step):
    seen = tensorboard_scalars(logdir)
    expected = csv_scalars(csv_folder)
    assert [step for step, _ in seen["loss"]] == list(range(1, last_step + 1)), "one timeline, each step once"
    assert seen == expected


def test_event_accumulator_reads_every_scalar_of_a_two_rank_run(tmp_path):
    run = tmp_path / "run"
    codes, out = run_ranks(2, ["--model", "mlp", "--max-steps", "40", "--threads", "1", "--lr-schedule", "cosine",
                               "--warmup-steps", "3", "--eval-batch-size", "5000", "--eval-every", "15"], run)
    assert codes == [0, 0], out
    seen = tensorboard_scalars(run / "tb")
    assert sorted(seen) == ["loss", "lr", "samples_per_sec", "val_accuracy", "val_loss"]
    assert len({value for _, value in seen["lr"]}) > 3  # the schedule moved lr: not one trivially exact value
    assert [step for step, _ in seen["val_loss"]] == [int(r["step"]) for r in read_csv(run / "eval.csv")]
    assert_one_timeline(run / "tb", run, 40)


def abandoned_folders(run):
    return sorted(p for p in (run / "checkpoints").iterdir() if p.is_dir())


def test_one_timeline_after_resuming_older_and_cut_checkpoints_and_a_fresh_start(tmp_path):
    run = tmp_path / "run"
    codes, out = run_ranks(1, COMMON + ["--lr", "0.05", "--max-steps", "30"], run)
    assert codes == [0], out[0]

    # Back to step 10 with another learning rate: TensorBoard shows 1-10 of the first attempt, then 11-20 of this.
    codes, out = run_ranks(1, COMMON + ["--lr", "0.02", "--max-steps", "20",
                                        "--resume", str(run / "checkpoints" / "step-00000010.pt")], run)
    assert codes == [0], out[0]
    [aside] = abandoned_folders(run)
    assert_one_timeline(run / "tb", run, 20)
    assert len(list((run / "tb").iterdir())) == 2  # the first attempt's file, cut at step 10, and this one's
    # The abandoned attempt, whole, beside its CSVs: TensorBoard can still show it on its own.
    assert len(list((aside / "tb").iterdir())) == 1
    assert_one_timeline(aside / "tb", aside, 30)

    # A run that died after logging step 20 but before saving it: its restart resumes from step 10 of its own
    # checkpoints and sets nothing aside, and the event files lose steps 11-20 as metrics.csv does.
    (run / "checkpoints" / "step-00000020.pt").unlink()
    codes, out = run_ranks(1, COMMON + ["--lr", "0.01", "--max-steps", "25", "--resume", str(run)], run)
    assert codes == [0], out[0]
    assert "step-00000010.pt at step 10 " in out[0], out[0]
    assert abandoned_folders(run) == [aside]
    assert_one_timeline(run / "tb", run, 25)
    assert {value for step, value in tensorboard_scalars(run / "tb")["lr"] if step > 10} == {float32("0.01")}

    # A fresh run in the same folder: every earlier event file goes aside with the earlier checkpoints.
    codes, out = run_ranks(1, COMMON + ["--lr", "0.03", "--max-steps", "5"], run)
    assert codes == [0], out[0]
    assert_one_timeline(run / "tb", run, 5)
    assert len(list((run / "tb").iterdir())) == 1
    [second] = [p for p in abandoned_folders(run) if p != aside]
    assert len(list((second / "tb").iterdir())) == 3
    assert_one_timeline(second / "tb", second, 25)


def read_port(stream, found):
    """Reads TensorBoard's stderr to its end (so it never blocks on a full pipe), noting the port it serves on."""
    for line in stream:
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if match and "port" not in found:
            found["port"] = int(match.group(1))
        found.setdefault("lines", []).append(line)


def get_json(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
        return json.loads(response.read())


def test_tensorboard_serves_a_logdir_of_100_runs(tmp_path):
    run = tmp_path / "run"
    codes, out = run_ranks(1, COMMON + ["--max-steps", "12"], run)
    assert codes == [0], out[0]
    logdir = tmp_path / "runs"
    names = [f"run-{i:03d}" for i in range(100)]
    for name in names:
        shutil.copytree(run / "tb", logdir / name / "tb")

    server = subprocess.Popen([FRAMEWORK_PYTHON, "-m", "tensorboard.main", "--logdir", str(logdir),
                               "--host", "127.0.0.1", "--port", "0", "--reload_interval", "1"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    found = {}
    reader = threading.Thread(target=read_port, args=(server.stderr, found), daemon=True)
    reader.start()
    try:
        wait_until(lambda: "port" in found or server.poll() is not None, 60, "TensorBoard to say its port")
        assert "port" in found, "".join(found.get("lines", []))
        port = found["port"]

        def lists_every_run():
            try:
                return len(get_json(port, "/data/runs")) >= len(names)
            except OSError:
                return False
        wait_until(lists_every_run, 120, "TensorBoard to list 100 runs")
        assert sorted(get_json(port, "/data/runs")) == [f"{name}/tb" for name in names]
        # One run's loss through the scalars plugin: [wall_time, step, value] rows, the CSV's float32 values.
        rows = get_json(port, "/data/plugin/scalars/scalars?run=run-042/tb&tag=loss")
        assert [[step, value] for _, step, value in rows] == csv_scalars(run)["loss"]
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        reader.join(timeout=5)
