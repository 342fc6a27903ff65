"""A user's script that logs with the real writers, torch.utils.tensorboard.SummaryWriter and tensorboardX's
SummaryWriter (both pinned in scripts/torch-env.lock), 1,000 steps each, run unchanged under
`ringmaster-launch --script`: the launcher follows their event files live (half the steps reach scalars.csv while
the script waits for the test to let it go on) and in the end scalars.csv holds every value at its step, as the
float32 the writers stored.

The script runs in RINGMASTER_FRAMEWORK_PYTHON (scripts/test.sh sets it to .torch-env/bin/python); without it the
test is skipped and says why."""
import csv
import os
import struct
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "frameworks"))
from framework_runs import FRAMEWORK_PYTHON, LAUNCH, SKIP_REASON, wait_until  # noqa: E402

pytestmark = pytest.mark.skipif(not FRAMEWORK_PYTHON, reason=SKIP_REASON)
STEPS = 1000
HALF = STEPS // 2
TIMEOUT = 180

SCRIPT = r"""
import os, sys, time
from torch.utils.tensorboard import SummaryWriter
from tensorboardX import SummaryWriter as XWriter

run_dir, go = os.environ["RINGMASTER_RUN_DIR"], sys.argv[1]
torch_writer = SummaryWriter(os.path.join(run_dir, "tb-torch"))
# tensorboardX's flush() does not wait for its queue: what is still queued is written at the next flush_secs.
x_writer = XWriter(os.path.join(run_dir, "tb-x"), flush_secs=1)

def log(step):
    torch_writer.add_scalar("torch/loss", 1.0 / (step + 1), step)
    x_writer.add_scalar("x/loss", 2.0 / (step + 1), step)

for step in range(%(half)d):
    log(step)
torch_writer.flush()
x_writer.flush()
deadline = time.monotonic() + %(timeout)d
while not os.path.exists(go):
    if time.monotonic() > deadline:
        sys.exit("the test never said go")
    time.sleep(0.05)
for step in range(%(half)d, %(steps)d):
    log(step)
torch_writer.close()
x_writer.close()
""" % {"half": HALF, "steps": STEPS, "timeout": TIMEOUT}


def float32(value):
    return struct.unpack("<f", struct.pack("<f", value))[0]


def recorded(run_dir):
    """{name: {step: value}} from RUN_DIR/scalars.csv, with every step seen once per name."""
    values = {}
    path = os.path.join(run_dir, "scalars.csv")
    if not os.path.exists(path):
        return values
    with open(path) as f:
        for row in csv.DictReader(f):
            steps = values.setdefault(row["name"], {})
            assert int(row["step"]) not in steps, f"{row['name']} step {row['step']} recorded twice"
            steps[int(row["step"])] = float(row["value"])
    return values


def test_summary_writer_and_tensorboardx_are_followed_live(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    go = tmp_path / "go"
    root = tmp_path / "runs"
    launcher = subprocess.Popen([LAUNCH, "--script", str(script), "--python", FRAMEWORK_PYTHON, "--device", "cpu",
                                 "--nproc", "1", "--output-root", str(root), "--", str(go)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_until(lambda: root.is_dir() and any(root.iterdir()) or launcher.poll() is not None, 60,
                   "the run directory")
        assert launcher.poll() is None, launcher.communicate()[0]
        [run_dir] = list(root.iterdir())

        def half_is_recorded():
            values = recorded(run_dir)
            return all(len(values.get(name, {})) == HALF for name in ("torch/loss", "x/loss"))
        # Live: the script is still waiting for `go` when its first half is in scalars.csv.
        wait_until(lambda: half_is_recorded() or launcher.poll() is not None, TIMEOUT, "the first 500 steps")
        assert launcher.poll() is None, launcher.communicate()[0]
        go.touch()
        output = launcher.communicate(timeout=TIMEOUT)[0]
        assert launcher.returncode == 0, output
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()

    values = recorded(run_dir)
    for name, numerator in (("torch/loss", 1.0), ("x/loss", 2.0)):
        assert sorted(values[name]) == list(range(STEPS)), name
        for step, value in values[name].items():
            assert value == float32(numerator / (step + 1)), (name, step, value)
