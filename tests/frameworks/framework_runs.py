"""What the tests against the real frameworks share: the Python that has them (RINGMASTER_FRAMEWORK_PYTHON, which
scripts/test.sh sets to .torch-env/bin/python: torch 2.11, tensorboard, tensorboardX, lightning, accelerate, all
pinned in scripts/torch-env.lock), a user's script run by ringmaster-launch in its own session (so a failed test
kills the whole group), a rank's process found by its environment, scalars.csv, and what TensorBoard's own reader
finds in a logdir."""
import csv
import json
import os
import signal
import socket
import struct
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "trainer"))
from conftest import wait_until  # noqa: E402,F401  (the shared polling helper, re-exported)

LAUNCH = os.environ.get("RINGMASTER_LAUNCH", "ringmaster-launch")
FRAMEWORK_PYTHON = os.environ.get("RINGMASTER_FRAMEWORK_PYTHON")
# The helper module's folder (`import ringmaster`), for scripts run by another launcher than ringmaster-launch.
HELPER_DIR = str(Path(os.environ.get("RINGMASTER_SOURCE_DIR", Path(__file__).parents[2])) / "python")
SKIP_REASON = ("RINGMASTER_FRAMEWORK_PYTHON is not set: scripts/test.sh sets it to .torch-env/bin/python "
               "(made by scripts/setup-torch.sh), which has the pinned torch 2.x, TensorBoard and frameworks")

# A torchrun-style script whose group hangs: rank 1 sleeps and never reaches the barrier rank 0 waits in. Its lines
# 7 (meet_the_others, inside barrier) and 11 (wait_forever, inside sleep) are where the stacks must find them.
HUNG_BARRIER_SCRIPT = r"""
import time
import torch.distributed as dist


def meet_the_others():
    dist.barrier()


def wait_forever():
    time.sleep(1000)


dist.init_process_group("gloo")
print("joined", dist.get_rank(), flush=True)
if dist.get_rank() == 1:
    wait_forever()
meet_the_others()
"""

# Every scalar TensorBoard's own reader finds in a logdir, as {tag: [[step, value], ...]} in its order.
_ACCUMULATE = r"""
import json, sys
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator, SCALARS
accumulator = EventAccumulator(sys.argv[1], size_guidance={SCALARS: 0})
accumulator.Reload()
print(json.dumps({tag: [[e.step, e.value] for e in accumulator.Scalars(tag)]
                  for tag in accumulator.Tags()["scalars"]}))
"""


def tensorboard_scalars(logdir, python=None):
    proc = subprocess.run([python or FRAMEWORK_PYTHON, "-c", _ACCUMULATE, str(logdir)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def float32(value):
    """VALUE rounded to the nearest float32, as a TensorBoard simple_value holds it."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_scalars(run_dir):
    """{name: [[step, value], ...]} from RUN_DIR/scalars.csv, in the order recorded."""
    values = {}
    path = Path(run_dir) / "scalars.csv"
    if path.exists():
        with open(path) as f:
            for row in csv.DictReader(f):
                values.setdefault(row["name"], []).append([int(row["step"]), float(row["value"])])
    return values


def rank_pid(run_dir, rank, timeout=60):
    """The pid of the live process that Ringmaster started as RANK of the run in run_dir (found by its environment)."""
    wanted = {f"RINGMASTER_RUN_DIR={run_dir}".encode(), f"RANK={rank}".encode()}
    found = []

    def look():
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                environment = set((entry / "environ").read_bytes().split(b"\0"))
            except OSError:
                continue
            if wanted <= environment:
                found.append(int(entry.name))
                return True
        return False
    wait_until(look, timeout, f"rank {rank}'s process")
    return found[0]


class LaunchedRun:
    def __init__(self, project, arguments, python=None):
        self.root = Path(project) / "runs"
        self.proc = subprocess.Popen([LAUNCH, "--script", "train.py", "--python", python or FRAMEWORK_PYTHON, "--device", "cpu",
                                      "--nproc", "2", "--output-root", str(self.root), *arguments],
                                     cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
        self.output = ""
        wait_until(lambda: (self.root.is_dir() and any(self.root.iterdir())) or self.proc.poll() is not None, 60,
                   "the run directory")
        runs = sorted(self.root.iterdir()) if self.root.is_dir() else []
        assert runs, self.finish(60).output
        self.dir = runs[-1]

    @property
    def returncode(self):
        return self.proc.returncode

    def finish(self, timeout):
        self.output = self.proc.communicate(timeout=timeout)[0]
        return self

    def kill(self):
        """Whatever is left of the launcher's session, after a failed test."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)
            self.proc.communicate()


def launch(project, arguments, timeout=240, wait=True, python=None):
    """ringmaster-launch --script train.py in project, with python (default: FRAMEWORK_PYTHON) as the interpreter."""
    run = LaunchedRun(project, arguments, python)
    if wait:
        try:
            run.finish(timeout)
        finally:
            run.kill()
    return run


def assert_a_raising_rank_is_the_root_cause(project, recipe, timeout=240):
    """The example scripts' --fail-rank 1 --fail-step 5: the launcher fails, naming rank 1 and its exception."""
    run = launch(project, recipe + ["--", "--epochs", "3", "--fail-rank", "1", "--fail-step", "5"], timeout=timeout)
    assert run.returncode == 1, run.output
    summary = json.loads((run.dir / "summary.json").read_text())
    assert summary["status"] == "failed"
    cause = json.dumps(summary)
    assert "rank 1" in cause and "RuntimeError: injected failure on rank 1 at step 5" in cause, cause


def stop_with_ctrl_c(project, recipe, ready, what, timeout=240):
    """Starts a long run, waits until ready(run), sends the launcher SIGINT (Ctrl-C) and checks that the run ended
    stopped with every rank gone; returns the run."""
    run = launch(project, recipe + ["--", "--epochs", "1000", "--step-sleep", "0.01"], wait=False)
    try:
        wait_until(lambda: ready(run) or run.proc.poll() is not None, timeout, what)
        assert run.proc.poll() is None, run.finish(timeout).output
        pids = [rank_pid(run.dir, rank) for rank in range(2)]
        run.proc.send_signal(signal.SIGINT)
        run.finish(timeout)
    finally:
        run.kill()
    assert json.loads((run.dir / "summary.json").read_text())["status"] == "stopped", run.output
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text(), pid
    return run
