"""A script's group that hangs (rank 1 never reaches the barrier rank 0 waits in) is declared hung after
--heartbeat-timeout, and before it is killed every rank's stacks are taken into logs/rank-N.stacks.txt: gdb's C
frames (rank 0 inside torch's c10d wait) and, because py-spy is beside the interpreter (pinned in
scripts/torch-env.lock), each rank's Python stack naming the script's own functions. The root cause points to the
hung rank's file, and every rank is gone afterwards.

Runs in RINGMASTER_FRAMEWORK_PYTHON (scripts/test.sh sets it to .torch-env/bin/python); without it, or without gdb,
the test is skipped and says why."""
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from framework_runs import FRAMEWORK_PYTHON, HUNG_BARRIER_SCRIPT, SKIP_REASON, launch, rank_pid, wait_until  # noqa: E402

pytestmark = [pytest.mark.skipif(not FRAMEWORK_PYTHON, reason=SKIP_REASON),
              pytest.mark.skipif(not shutil.which("gdb"), reason="gdb is not installed (scripts/setup.sh installs it)")]


def test_a_hung_scripts_ranks_leave_their_c_and_python_stacks(tmp_path):
    (tmp_path / "train.py").write_text(HUNG_BARRIER_SCRIPT)
    run = launch(tmp_path, ["--heartbeat-timeout", "8"], wait=False)
    try:
        pids = [rank_pid(run.dir, rank) for rank in range(2)]
        run.finish(120)
    finally:
        run.kill()
    assert run.returncode == 1, run.output
    summary = json.loads((run.dir / "summary.json").read_text())
    assert summary["status"] == "failed"
    assert "its threads' stacks: " + str(run.dir / "logs") in json.dumps(summary), summary

    stacks = [(run.dir / "logs" / f"rank-{rank}.stacks.txt").read_text() for rank in range(2)]
    for text in stacks:
        assert "Thread 1 " in text and "ringmaster: the Python stacks (py-spy dump):" in text, text
    assert "c10d" in stacks[0] and "meet_the_others" in stacks[0] and "barrier" in stacks[0], stacks[0]
    assert "wait_forever" in stacks[1], stacks[1]
    launcher_log = (run.dir / "logs" / "launcher.log").read_text()
    for rank in range(2):
        assert re.search(rf"rank {rank}: \d+ thread\(s\)' stacks, \d+ Python thread\(s\) in ", launcher_log), launcher_log
    wait_until(lambda: not any(Path(f"/proc/{pid}").exists() for pid in pids), 30, "every rank to be gone")
