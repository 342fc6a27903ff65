"""ringmaster-launch in a real terminal (a pty), as a user runs it: Ctrl-C typed at the terminal and a
closed terminal both stop the run gracefully (every rank checkpoints and exits 0), the ranks live in a
process group of their own that the terminal's signals never reach, and the live line fits the window."""
import json
import os
import pty
import re
import select
import signal
import struct
import termios
import fcntl
import time
from pathlib import Path

import pytest

LAUNCH = os.environ.get("RINGMASTER_LAUNCH", "ringmaster-launch")
TRAINER = os.environ.get("RINGMASTER_TRAINER", "ringmaster-trainer")
RUN_TIMEOUT = 240


class Terminal:
    """ringmaster-launch as the session leader of a new pty, like a shell's foreground job."""

    def __init__(self, args, columns=120):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the launcher
            try:
                os.execv(LAUNCH, [LAUNCH, *args])
            finally:
                os._exit(127)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
        self.output = b""
        self.status = None

    def pump(self, timeout):
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if ready:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:  # EIO: the other side is gone
                chunk = b""
            self.output += chunk
            return bool(chunk)
        return True

    def read_until(self, pattern, timeout=RUN_TIMEOUT):
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        while time.monotonic() < deadline:
            match = regex.search(self.text())
            if match:
                return match
            if not self.pump(0.2) and self.exited():
                break
        raise AssertionError(f"{pattern!r} did not appear; output:\n{self.text()[-3000:]}")

    def exited(self):
        if self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                self.status = status
        return self.status is not None

    def wait(self, timeout=RUN_TIMEOUT):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.exited():
                try:
                    while self.pump(0.05):
                        pass
                except OSError:
                    pass
                return os.waitstatus_to_exitcode(self.status)
            try:
                self.pump(0.2)
            except OSError:
                time.sleep(0.2)
        os.kill(self.pid, signal.SIGKILL)
        raise AssertionError(f"the launcher did not exit in {timeout} s; output:\n{self.text()[-3000:]}")

    def text(self):
        return self.output.decode("utf-8", "replace")

    def close(self):
        if not self.exited():
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        try:
            os.close(self.fd)
        except OSError:
            pass


def launch_args(root):
    return ["--trainer", TRAINER, "--output-root", str(root), "--threads", "1", "--epochs", "3",
            "--eval-batch-size", "5000", "--grace-period", "60"]


def rank_pids(run_dir, world=2, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = {}
        for rank in range(world):
            log = Path(run_dir, "logs", f"rank-{rank}.log")
            match = re.search(r"pid (\d+) joined", log.read_text()) if log.exists() else None
            if match:
                pids[rank] = int(match.group(1))
        if len(pids) == world:
            return pids
        time.sleep(0.1)
    raise AssertionError("the ranks did not log their pids")


def assert_stopped_gracefully(run_dir, exit_code, world=2):
    assert exit_code == 3, f"exit code {exit_code}"
    summary = json.loads(Path(run_dir, "summary.json").read_text())
    assert summary["status"] == "stopped", summary
    launcher_log = Path(run_dir, "logs", "launcher.log").read_text()
    for rank in range(world):
        assert re.search(rf"rank {rank} \(pid \d+\) exited with code 0", launcher_log), launcher_log
        log = Path(run_dir, "logs", f"rank-{rank}.log").read_text()
        assert "a peer rank died" not in log, log[-2000:]
    # The final checkpoint of the stop, at the step the run ended on.
    checkpoints = sorted(Path(run_dir, "checkpoints").glob("step-*.pt"))
    assert checkpoints, "no final checkpoint"
    assert int(checkpoints[-1].stem.split("-")[1]) == summary["steps"], (checkpoints, summary["steps"])


def test_ctrl_c_at_the_terminal_stops_every_rank_gracefully(tmp_path):
    term = Terminal(launch_args(tmp_path))
    try:
        run_dir = term.read_until(r"run (\S+): 2 rank").group(1)
        term.read_until(r"step \d+/\d+")
        pids = rank_pids(run_dir)
        # The ranks share one process group, which is neither the launcher's nor the terminal's
        # foreground group: the terminal's SIGINT cannot reach them.
        groups = {os.getpgid(pid) for pid in pids.values()}
        assert len(groups) == 1, groups
        assert groups != {os.getpgid(term.pid)}
        assert groups.pop() != os.tcgetpgrp(term.fd)
        os.write(term.fd, b"\x03")  # Ctrl-C, typed: SIGINT to the terminal's foreground group
        code = term.wait()
        assert "stopping gracefully" in term.text()
        assert_stopped_gracefully(run_dir, code)
        for pid in pids.values():
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
    finally:
        term.close()


def test_closing_the_terminal_stops_gracefully(tmp_path):
    term = Terminal(launch_args(tmp_path))
    try:
        run_dir = term.read_until(r"run (\S+): 2 rank").group(1)
        term.read_until(r"step \d+/\d+")
        os.close(term.fd)  # the terminal window closes: SIGHUP to the launcher
        deadline = time.monotonic() + RUN_TIMEOUT
        while not term.exited() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert term.exited(), "the launcher did not exit after its terminal closed"
        assert_stopped_gracefully(run_dir, os.waitstatus_to_exitcode(term.status))
    finally:
        term.close()


def test_live_line_fits_a_narrow_terminal(tmp_path):
    columns = 40
    term = Terminal(launch_args(tmp_path)[:-4] + ["--max-steps", "40", "--epochs", "1"], columns=columns)
    try:
        code = term.wait()
        assert code == 0, term.text()[-2000:]
        # Every redraw of the live line ("\r\x1b[K" + text) fits in the window, so it never wraps
        # into a trail of half lines.
        # (A redraw has no newline before the next one; a printed line, such as an eval result, ends
        # with one — "\r\n" on a terminal — and may wrap.)
        segments = term.text().split("\r\x1b[K")[1:]
        live = [seg for seg in segments if "\n" not in seg and "step" in seg]
        assert live, term.text()[-2000:]
        assert all(len(r) < columns for r in live), [r for r in live if len(r) >= columns][:3]
    finally:
        term.close()


def test_ctrl_c_during_pre_flight_launches_nothing(tmp_path):
    # A trainer whose validation takes a while: Ctrl-C while it runs stops the launcher (exit 3),
    # says that nothing was launched, and leaves no run directory.
    stub = tmp_path / "slow-trainer.sh"
    started = tmp_path / "validation-started"
    stub.write_text(f"#!/bin/sh\ntouch {started}\nsleep 30\n")
    stub.chmod(0o755)
    runs = tmp_path / "runs"
    term = Terminal(["--trainer", str(stub), "--output-root", str(runs)])
    try:
        deadline = time.monotonic() + 60
        while not started.exists() and time.monotonic() < deadline:  # the launcher is in pre-flight
            term.pump(0.1)
        assert started.exists() and not term.exited(), term.text()
        os.write(term.fd, b"\x03")
        code = term.wait(60)
        assert code == 3, term.text()
        assert "nothing was launched" in term.text()
        assert not runs.exists() or not any(runs.iterdir())
    finally:
        term.close()


SCRIPT = r'''
import os, signal, sys, time
rank = int(os.environ["RANK"])
run_dir = os.environ["RINGMASTER_RUN_DIR"]
stopping = False
def on_term(signum, frame):
    global stopping
    stopping = True
signal.signal(signal.SIGTERM, on_term)
print("pid %d joined" % os.getpid(), flush=True)
step = 0
while not stopping:
    if rank == 0:
        print("step %d loss=%.4f" % (step, 1.0 / (step + 1)), flush=True)
    step += 1
    time.sleep(0.1)
# A graceful end: the script saves what it must, then exits 0.
with open(os.path.join(run_dir, "final-%d.txt" % rank), "w") as f:
    f.write(str(step))
'''


def test_ctrl_c_stops_a_users_script_gracefully(tmp_path):
    # A user's script in a terminal: Ctrl-C reaches only the launcher, which sends SIGTERM to every rank;
    # the script's own handler finishes (writes its file) and exits 0; no python is left.
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    term = Terminal(["--script", str(script), "--python", "/usr/bin/python3", "--device", "cpu", "--nproc", "2",
                     "--output-root", str(tmp_path / "runs"), "--grace-period", "30"])
    try:
        run_dir = term.read_until(r"run (\S+): 2 rank").group(1)
        pids = rank_pids(run_dir)
        deadline = time.monotonic() + 60
        while "step 5 loss" not in Path(run_dir, "logs", "rank-0.log").read_text() and time.monotonic() < deadline:
            term.pump(0.1)
        groups = {os.getpgid(pid) for pid in pids.values()}
        assert len(groups) == 1 and groups.pop() != os.tcgetpgrp(term.fd)
        term.read_until(r"\r\x1b\[Kstep \d+  loss 0\.\d+", 30)  # the live line of the script's scalars
        os.write(term.fd, b"\x03")
        code = term.wait()
        assert code == 3, term.text()[-2000:]
        assert "stopping gracefully (SIGTERM to every rank)" in term.text()
        assert json.loads(Path(run_dir, "summary.json").read_text())["status"] == "stopped"
        for rank in range(2):
            assert Path(run_dir, f"final-{rank}.txt").exists(), f"rank {rank} did not finish its SIGTERM handler"
        launcher_log = Path(run_dir, "logs", "launcher.log").read_text()
        for rank in range(2):
            assert re.search(rf"rank {rank} \(pid \d+\) exited with code 0", launcher_log), launcher_log
        for pid in pids.values():
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
        scalars = Path(run_dir, "scalars.csv").read_text().splitlines()
        assert scalars[0] == "step,wall_time,name,value" and any(",loss," in row for row in scalars[1:])
    finally:
        term.close()
