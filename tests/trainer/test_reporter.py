"""The reporting socket: heartbeats come from a timer (so a long step never looks hung) and a
supervisor that stops reading cannot keep a finished trainer alive."""
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

from conftest import TRAINER, FakeSupervisor, run_single

HEARTBEAT_INTERVAL_S = 1.0  # protocol::kHeartbeatIntervalMs
# Slack over the interval for a loaded 2-core machine; once-per-step heartbeats leave gaps of a whole step.
MAX_HEARTBEAT_GAP_S = 2.2  # under 2.5 s, the shortest step the test accepts: a once-per-step beat fails it


@pytest.fixture
def supervisor_dir():
    # A short path: Unix socket paths are limited to 107 bytes, pytest's tmp_path can be longer.
    directory = tempfile.mkdtemp(prefix="rm-sock-")
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def test_heartbeats_keep_coming_during_a_long_step(tmp_path, supervisor_dir):
    supervisor = FakeSupervisor(supervisor_dir)
    try:
        # One step of the cnn on 16384 images takes several seconds on one CPU thread (measured 5-12 s; 8192 images
        # took 2.4 s on a fast CI machine, too short to tell a timer's heartbeats from once-per-step ones).
        started = time.monotonic()
        code, output = run_single(["--model", "cnn", "--batch-size", "16384", "--threads", "1", "--max-steps", "2",
                                   "--eval-batch-size", "5000", "--out", str(tmp_path / "run")],
                                  env=supervisor.env(), timeout=300)
        finished = time.monotonic()
    finally:
        supervisor.close()
    assert code == 0, output
    frames = supervisor.received()
    assert frames and frames[0][1]["type"] == "hello" and frames[0][1]["token"] == "test-token"

    steps = [(t, f) for t, f in supervisor.received("step")]
    assert [f["step"] for _, f in steps] == [1, 2], output
    step_seconds = steps[1][0] - steps[0][0]
    assert step_seconds > 2.5 * HEARTBEAT_INTERVAL_S, f"a step took only {step_seconds:.2f}s: not a long step"

    beats = supervisor.received("heartbeat")
    times = [t for t, _ in beats]
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert max(gaps) < MAX_HEARTBEAT_GAP_S, f"heartbeat gaps {[round(g, 2) for g in gaps]}"
    # Heartbeats cover the whole life of the process, not only the training steps.
    assert times[0] - started < 5.0 and finished - times[-1] < MAX_HEARTBEAT_GAP_S + 1.0
    # During the second step (between the step-1 and step-2 frames) they say: training, at step 1.
    during = [f for t, f in beats if steps[0][0] < t < steps[1][0]]
    assert len(during) >= 2, f"only {len(during)} heartbeat(s) during a {step_seconds:.1f}s step"
    assert all(f["phase"] == "train" and f["step"] == 1 for f in during), during
    phases = [f["phase"] for _, f in beats]
    assert phases[0] == "loading" and phases[-1] == "done"
    assert {"rendezvous", "train", "eval", "checkpoint"} <= set(phases), phases

    # The hello names the node (where a hung Slurm rank's stacks are taken), and the beats carry what the
    # process uses, at most every 2 s (protocol::kUsageIntervalMs), under system.csv's names.
    assert frames[0][1]["host"] == socket.gethostname()
    usage = [(t, f["usage"]) for t, f in beats if "usage" in f]
    assert 0 < len(usage) <= len(beats) // 2 + 1, (len(usage), len(beats))
    assert set(usage[0][1]) == {"rss_mib", "threads"}, usage[0]  # rates need a second reading
    assert all(b - a > 1.9 for (a, _), (b, _) in zip(usage, usage[1:]))
    for _, values in usage:
        assert set(values) <= {"cpu_percent", "rss_mib", "threads", "disk_read_mib_s", "disk_write_mib_s"}, values
        assert values["rss_mib"] > 50, values  # LibTorch alone maps more than that
        assert values["threads"] >= 2, values  # the training thread and the heartbeat timer at least
    # During the long step one intra-op thread computes all the time: about one core.
    busy = [values for t, values in usage if steps[0][0] < t < steps[1][0] and "cpu_percent" in values]
    assert busy, usage
    assert all(30 < values["cpu_percent"] < 100 * values["threads"] for values in busy), busy


def test_a_supervisor_that_stops_reading_cannot_hold_the_exit(tmp_path, supervisor_dir):
    supervisor = FakeSupervisor(supervisor_dir, read=False)
    run = tmp_path / "run"
    # Thousands of tiny steps: far more frames than a Unix socket buffers, so the writer blocks.
    args = [TRAINER, "--model", "linear", "--data", "synthetic", "--batch-size", "1", "--synthetic-samples", "4096",
            "--max-steps", "3000", "--log-every", "1000", "--threads", "1", "--out", str(run)]
    env = {k: v for k, v in __import__("os").environ.items()
           if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    env.update(supervisor.env())
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        output = ""
        # The last thing the trainer prints is its "done" line: from there it must exit within seconds.
        done_at = None
        for line in proc.stdout:
            output += line
            if " done status=" in line:
                done_at = time.monotonic()
                break
        assert done_at is not None, output
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the trainer still runs 10 s after its last step:\n{output}")
        exited_after = time.monotonic() - done_at
        output += proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        supervisor.close()
    assert code == 0, output
    assert exited_after < 5.0, f"exit took {exited_after:.1f}s after the last step"
    assert "not delivered" in output, output


@pytest.mark.parametrize("socket_offered", [True, False], ids=["socket-absent-then-tcp", "tcp-only"])
def test_reports_over_tcp_when_the_socket_reaches_nothing(tmp_path, supervisor_dir, socket_offered):
    """A rank on another Slurm node: the socket path names nothing there, so it reports to the endpoint."""
    supervisor = FakeSupervisor(supervisor_dir, tcp=True)
    env = supervisor.env()
    if not socket_offered:
        del env["RINGMASTER_SOCKET"]
    try:
        code, output = run_single(["--model", "linear", "--data", "synthetic", "--synthetic-samples", "256",
                                   "--batch-size", "32", "--max-steps", "6", "--threads", "1",
                                   "--out", str(tmp_path / "run")], env=env, timeout=300)
    finally:
        supervisor.close()
    assert code == 0, output
    frames = [f for _, f in supervisor.received()]
    # Over TCP the hello proves the token with its MAC and every frame carries one; the token never crossed.
    assert frames[0]["type"] == "hello" and "token" not in frames[0] and frames[0]["rank"] == 0
    assert supervisor.mac_failures == 0
    assert b"test-token" not in supervisor.wire
    assert [f["step"] for f in frames if f["type"] == "step"] == [1, 2, 3, 4, 5, 6]
    assert "reporting over TCP to " + supervisor.endpoint in output, output
