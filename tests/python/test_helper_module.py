"""python/ringmaster, the helper module for users' scripts: each test runs a real Python process that
imports it, against a fake supervisor socket (the one the trainer tests use)."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "trainer"))
from conftest import FakeSupervisor, wait_until  # noqa: E402

PYTHON_DIR = Path(os.environ.get("RINGMASTER_SOURCE_DIR", Path(__file__).resolve().parents[2])) / "python"
INTERPRETER = "/usr/bin/python3"


def script_env(supervisor=None, rank=0, **extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("RINGMASTER_SOCKET", "RINGMASTER_ENDPOINT", "RINGMASTER_TOKEN", "RANK")}
    env["PYTHONPATH"] = str(PYTHON_DIR)
    env["RANK"] = str(rank)
    if supervisor is not None:
        env.update(supervisor.env())
    env.update(extra)
    return env


def run_script(code, env, timeout=60):
    proc = subprocess.run([INTERPRETER, "-c", code], env=env, capture_output=True, text=True, timeout=timeout)
    return proc


@pytest.fixture
def supervisor(tmp_path):
    fake = FakeSupervisor(tmp_path)
    yield fake
    fake.close()


def test_rank0_sends_hello_then_scalars(supervisor):
    proc = subprocess.Popen([INTERPRETER, "-c", "import ringmaster, sys\n"
                             "ringmaster.log(3, loss=0.5, acc=1)\n"
                             "ringmaster.log(4, **{'train/loss': 0.25, 'bad': float('nan'), 'text': 'x'})\n"
                             "assert ringmaster.flush(10)\n"
                             "print(ringmaster.dropped())\n"],
                            env=script_env(supervisor), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.strip() == "0"
    wait_until(lambda: len(supervisor.received("scalars")) == 2, 10, "two scalars frames")
    frames = [f for _, f in supervisor.received()]
    hello = frames[0]
    assert hello == {"v": 1, "type": "hello", "rank": 0, "pid": proc.pid, "token": supervisor.token}
    assert frames[1] == {"v": 1, "type": "scalars", "step": 3, "values": {"loss": 0.5, "acc": 1.0}}
    # Not finite or not a number: skipped, as the supervisor would drop it.
    assert frames[2] == {"v": 1, "type": "scalars", "step": 4, "values": {"train/loss": 0.25}}


@pytest.mark.parametrize("socket_offered", [True, False], ids=["socket-absent-then-tcp", "tcp-only"])
def test_rank0_reports_over_tcp_when_the_socket_reaches_nothing(tmp_path, socket_offered):
    """Rank 0 on another Slurm node: the socket path names nothing there; the TCP endpoint takes it."""
    fake = FakeSupervisor(tmp_path, tcp=True)
    try:
        env = script_env(fake)
        if not socket_offered:
            del env["RINGMASTER_SOCKET"]
        proc = run_script("import ringmaster\nassert ringmaster.active()\nringmaster.log(7, loss=0.125)\n"
                          "assert ringmaster.flush(10)\n", env)
        assert proc.returncode == 0, proc.stderr
        wait_until(lambda: len(fake.received("scalars")) == 1, 10, "the scalars frame")
        frames = [f for _, f in fake.received()]
        # The token never crosses the network: the hello and the frame carry MACs the fake checks with hmac.
        assert frames[0]["type"] == "hello" and "token" not in frames[0] and "mac" in frames[0]
        assert fake.mac_failures == 0
        assert fake.token.encode() not in fake.wire
        assert frames[1] == {"v": 1, "type": "scalars", "step": 7, "values": {"loss": 0.125}}
    finally:
        fake.close()


def test_queued_frames_are_sent_at_exit(supervisor):
    # No flush() in the script: the exit handler gives the queue its second.
    proc = run_script("import ringmaster\nfor s in range(50): ringmaster.log(s, loss=s / 10)\n", script_env(supervisor))
    assert proc.returncode == 0, proc.stderr
    wait_until(lambda: len(supervisor.received("scalars")) == 50, 10, "all 50 frames")
    assert [f["step"] for _, f in supervisor.received("scalars")] == list(range(50))


def test_other_ranks_and_no_supervisor_do_nothing(supervisor, tmp_path):
    code = ("import ringmaster, threading\n"
            "class Boom:\n"
            "    def __float__(self): raise SystemExit('a value was read')\n"
            "ringmaster.log(1, loss=Boom())\n"
            "print(ringmaster.active(), ringmaster.dropped(), threading.active_count())\n")
    rank1 = run_script(code, script_env(supervisor, rank=1))
    assert rank1.returncode == 0, rank1.stderr
    assert rank1.stdout.split() == ["False", "0", "1"]  # no sender thread
    outside = run_script(code, script_env(None))
    assert outside.returncode == 0, outside.stderr
    assert outside.stdout.split() == ["False", "0", "1"]
    time.sleep(0.5)  # nothing may arrive; give a wrongly sent frame the time to show up
    assert supervisor.received() == []


def test_a_supervisor_that_never_reads_never_blocks_training(tmp_path):
    stalled = FakeSupervisor(tmp_path, read=False)
    try:
        code = ("import ringmaster, time\n"
                "big = {f'metric_{i}': float(i) for i in range(200)}\n"
                "worst = 0.0\n"
                "for step in range(5000):\n"
                "    t = time.perf_counter(); ringmaster.log(step, **big); worst = max(worst, time.perf_counter() - t)\n"
                "print(worst, ringmaster.dropped())\n"
                "import os; os._exit(0)\n")  # no exit flush wait
        started = time.monotonic()
        proc = run_script(code, script_env(stalled))
        assert proc.returncode == 0, proc.stderr
        worst, drops = proc.stdout.split()
        # 5000 frames of ~5 KB cannot fit in a socket buffer and a 1000-frame queue.
        assert int(drops) >= 5000 - 1000 - 500, proc.stdout
        assert float(worst) < 0.5, f"one log() call took {worst} s"
        assert time.monotonic() - started < 30
        assert stalled.received("hello")
    finally:
        stalled.close()


def test_exit_does_not_hang_on_a_stalled_supervisor(tmp_path):
    stalled = FakeSupervisor(tmp_path, read=False)
    try:
        code = ("import ringmaster\n"
                "big = {f'metric_{i}': float(i) for i in range(200)}\n"
                "for step in range(2000): ringmaster.log(step, **big)\n")
        started = time.monotonic()
        proc = run_script(code, script_env(stalled))
        assert proc.returncode == 0, proc.stderr
        assert time.monotonic() - started < 15  # the exit flush waits at most 1 s
    finally:
        stalled.close()


def test_no_listener_counts_drops(tmp_path):
    code = ("import ringmaster\n"
            "for s in range(5): ringmaster.log(s, loss=1.0)\n"
            "ringmaster.flush(5)\n"
            "print(ringmaster.dropped())\n")
    proc = run_script(code, script_env(None, RINGMASTER_SOCKET=str(tmp_path / "nobody.sock"), RINGMASTER_TOKEN="t"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "5"


def test_checkpoint_requested_once_per_sigusr1_and_chains(tmp_path, supervisor):
    code = ("import os, signal, sys, time, ringmaster\n"
            "seen = []\n"
            "signal.signal(signal.SIGUSR1, lambda s, f: seen.append(s))\n"  # installed before the first call
            "print(ringmaster.checkpoint_requested(), flush=True)\n"
            "os.kill(os.getpid(), signal.SIGUSR1)\n"
            "time.sleep(0.05)\n"
            "print(ringmaster.checkpoint_requested(), ringmaster.checkpoint_requested(), len(seen), flush=True)\n")
    proc = run_script(code, script_env(None))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "True", "False", "1"]
    # Under Ringmaster the handler is there from the import: SIGUSR1 before any call does not kill.
    under = ("import os, signal, time, ringmaster\n"
             "os.kill(os.getpid(), signal.SIGUSR1)\n"
             "time.sleep(0.05)\n"
             "print(ringmaster.checkpoint_requested(), ringmaster.checkpoint_requested())\n")
    proc = run_script(under, script_env(supervisor))
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    assert proc.stdout.split() == ["True", "False"]
    assert proc.returncode != -signal.SIGUSR1
