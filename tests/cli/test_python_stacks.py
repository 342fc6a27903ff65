"""A script's ranks leave their Python stacks when the group hangs, with nothing installed: the launcher's own
start-up hook (python/sitecustomize.py) registers faulthandler in every rank, and before the hung group is killed
the launcher sends each rank the signal, so logs/rank-N.stacks.txt names the script's functions where each rank
waits (rank 0 inside gloo's barrier, rank 1 in a sleep), whether or not gdb and py-spy exist. A run that ends
without hanging leaves no stacks file, nor a named pipe for NCCL trace requests.

Runs Debian's python3 with python3-torch (torch 1.13), the interpreter every machine here has."""
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "frameworks"))
from framework_runs import HUNG_BARRIER_SCRIPT, launch, rank_pid, wait_until  # noqa: E402

INTERPRETER = "/usr/bin/python3"

FINISHING = r"""
import os
import torch.distributed as dist

dist.init_process_group("gloo")
# What PyTorch's NCCL group makes for trace requests (a GPU run): the launcher removes it at the end.
os.mkfifo(os.path.join(os.environ["RINGMASTER_RUN_DIR"], "logs", "nccl-trace-rank-%s.pipe" % os.environ["RANK"]))
dist.barrier()
print("stacks file", os.environ["RINGMASTER_STACKS_FILE"], "signal", os.environ["RINGMASTER_STACKS_SIGNAL"], flush=True)
"""


def test_a_hung_scripts_ranks_leave_their_python_stacks_through_faulthandler(tmp_path):
    (tmp_path / "train.py").write_text(HUNG_BARRIER_SCRIPT)
    run = launch(tmp_path, ["--heartbeat-timeout", "8"], wait=False, python=INTERPRETER)
    try:
        pids = [rank_pid(run.dir, rank) for rank in range(2)]
        run.finish(120)
    finally:
        run.kill()
    assert run.returncode == 1, run.output
    summary = json.loads((run.dir / "summary.json").read_text())
    assert summary["status"] == "failed" and "hung" in json.dumps(summary), summary

    stacks = [(run.dir / "logs" / f"rank-{rank}.stacks.txt").read_text() for rank in range(2)]
    for text in stacks:
        assert "ringmaster: the Python stacks (faulthandler, signal " in text, text
        assert "Current thread 0x" in text or "Thread 0x" in text, text
    # Each rank's own frames, innermost first, with the script's line numbers.
    assert re.search(r'File ".*train\.py", line 7 in meet_the_others', stacks[0]), stacks[0]
    assert re.search(r'File ".*train\.py", line 11 in wait_forever', stacks[1]), stacks[1]
    assert "barrier" in stacks[0], stacks[0]
    launcher_log = (run.dir / "logs" / "launcher.log").read_text()
    for rank in range(2):
        assert re.search(rf"rank {rank}: \d+ thread\(s\)' stacks, [1-9]\d* Python thread\(s\) in ", launcher_log), launcher_log
    wait_until(lambda: not any(Path(f"/proc/{pid}").exists() for pid in pids), 30, "every rank to be gone")


def test_a_run_that_does_not_hang_leaves_no_stacks_file(tmp_path):
    (tmp_path / "train.py").write_text(FINISHING)
    run = launch(tmp_path, [], python=INTERPRETER, timeout=120)
    assert run.returncode == 0, run.output
    logs = run.dir / "logs"
    for rank in range(2):
        # The rank had the hook's file and signal; it made the file, and the launcher removed it, empty, at the end.
        assert f"stacks file {logs}/rank-{rank}.stacks.txt signal " in (logs / f"rank-{rank}.log").read_text()
    assert sorted(p.name for p in logs.glob("*.stacks.txt")) == []
    assert sorted(p.name for p in logs.glob("nccl-trace-rank-*")) == []
