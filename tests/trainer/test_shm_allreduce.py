"""The shared-memory all-reduce in real processes: buffers that differ between ranks fail loudly on every
rank, set-up failures leave no segment behind and report the real error, the world size is checked."""
import os
import subprocess
import time
from pathlib import Path

from conftest import free_port

PROBE = os.environ.get("RINGMASTER_GRAD_SYNC_PROBE", "ringmaster-grad-sync-probe")
TIMEOUT = 120


def run_probe(world, args):
    """Starts WORLD probe processes on one host; returns their exit codes and outputs."""
    port = free_port()
    procs = []
    for rank in range(world):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world),
                   LOCAL_WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        procs.append(subprocess.Popen([PROBE, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True))
    codes, outputs = [], []
    try:
        for proc in procs:
            out, _ = proc.communicate(timeout=TIMEOUT)
            codes.append(proc.returncode)
            outputs.append(out)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return codes, outputs


def test_equal_buffers_sum_correctly_on_three_ranks():
    codes, outputs = run_probe(3, ["shm-reduce", "0", "0"])
    assert codes == [0, 0, 0], outputs
    assert all("sum ok" in o for o in outputs), outputs


def test_buffers_of_different_sizes_fail_on_every_rank():
    # Rank r reduces 100 + 7r floats: the old reducer summed each rank's own length of its peers' slots.
    codes, outputs = run_probe(3, ["shm-reduce", "7", "0"])
    assert codes == [1, 1, 1], outputs
    for rank, out in enumerate(outputs):
        assert "the ranks reduce different buffers" in out, out
        assert f"rank {rank} reduces buffer 0 of {100 + 7 * rank} floats" in out, out
        assert "--bucket-mb" in out, out  # (unused parameters now fail before this, naming them)
    # Names the other side's size too.
    assert "rank 1 reduces buffer 0 of 107 floats" in outputs[0], outputs[0]


def test_different_buffers_of_the_same_size_fail_on_every_rank():
    # Same length, different bucket: sizes alone cannot tell, the tag does.
    codes, outputs = run_probe(2, ["shm-reduce", "0", "5"])
    assert codes == [1, 1], outputs
    assert "rank 0 reduces buffer 0 of 100 floats but rank 1 reduces buffer 5 of 100 floats" in outputs[0], outputs[0]
    assert "rank 1 reduces buffer 5 of 100 floats but rank 0 reduces buffer 0 of 100 floats" in outputs[1], outputs[1]


def test_peer_that_leaves_after_set_up_is_seen_at_once():
    # Each rank's pid is in the segment before set-up returns, so the survivor sees the peer gone within
    # 0.1 s (here a zombie: the test reaps rank 1 only after rank 0), not after the 30 s timeout.
    codes, outputs = run_probe(2, ["shm-peer-dies"])
    assert codes == [1, 0], outputs
    assert "a peer rank died: rank 1" in outputs[0], outputs[0]
    elapsed = float(outputs[0].split("gave up after ", 1)[1].split()[0])
    assert elapsed < 5, outputs[0]


def segments_of(pid):
    return [p for p in Path("/dev/shm").iterdir() if p.name.startswith(f"ringmaster-{pid}-")]


def test_set_up_that_throws_leaves_no_segment():
    # Rank 1 leaves after the rendezvous: rank 0 has created the segment when its barrier fails.
    codes, outputs = run_probe(2, ["shm-setup-peer-leaves"])
    pid = int(outputs[0].split("pid ", 1)[1].split()[0])
    leaked = segments_of(pid)
    for path in leaked:  # never leave the old code's leak behind on the machine
        path.unlink()
    assert codes[0] == 1 and "error: barrier failed" in outputs[0], outputs
    assert not leaked, f"segment left in /dev/shm: {leaked}"


def test_reservation_failure_reports_its_own_error():
    # posix_fallocate returns its error instead of setting errno: the old message printed a stale errno.
    codes, outputs = run_probe(1, ["shm-oversized"])
    assert codes == [0], outputs
    if "skip:" in outputs[0]:
        return
    assert "set up fell back" in outputs[0], outputs[0]
    assert "cannot reserve" in outputs[0] and "No space left on device" in outputs[0], outputs[0]
    assert "using the gloo backend for gradients" in outputs[0], outputs[0]


def test_world_size_is_checked_against_the_segment_cells():
    assert subprocess.run([PROBE, "world-size", "1024"], capture_output=True, text=True).stdout.strip() == "ok"
    proc = subprocess.run([PROBE, "world-size", "1025"], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stdout
    assert "1025 ranks on one host" in proc.stdout and "at most 1024" in proc.stdout, proc.stdout
    assert "--local-allreduce gloo" in proc.stdout, proc.stdout
