"""A week-long run at 100 steps/s must not make listing or opening it need gigabytes (issue 22, item 8).

A run folder with 2 million metrics.csv rows and 4 million scalars.csv rows (about 250 MB) is listed by
`ringmaster-runs list --json` and drawn by `ringmaster-runs plot` with a peak resident memory far below what
holding the files would take (the old readers held every row: over a gigabyte here). The figures they report
are the files' own: the last step and loss from the tail, the best validation accuracy over every row.
"""
import json
import os
import resource
import subprocess

import pytest

RUNS = os.environ["RINGMASTER_RUNS"]
STEPS = 2_000_000
PEAK_LIMIT_MB = 300


def run_measured(arguments):
    """(completed process, its peak resident memory in MB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run(arguments, capture_output=True, text=True, timeout=600, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of children is the largest of any child so far: one measured program per test process.
    return proc, max(before, after) / 1024


@pytest.fixture(scope="module")
def long_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    run = root / "20261202-010000-cnn"
    (run / "logs").mkdir(parents=True)
    (run / "job.json").write_text(json.dumps({"version": 1, "launch": {"nproc": 1}, "trainer": {"model": "cnn"}}))
    (run / "summary.json").write_text(json.dumps({"status": "completed"}))
    with open(run / "metrics.csv", "w") as metrics, open(run / "scalars.csv", "w") as scalars:
        metrics.write("step,epoch,loss,lr,samples_per_sec,wall_time\n")
        scalars.write("step,wall_time,name,value\n")
        for step in range(1, STEPS + 1):
            loss = 1.0 / step
            metrics.write(f"{step},{step // 1000},{loss:.9g},0.01,6000,{step / 100:.2f}\n")
            scalars.write(f"{step},{1.8e9 + step / 100:.3f},loss,{loss:.9g}\n{step},{1.8e9 + step / 100:.3f},lr,0.01\n")
    with open(run / "eval.csv", "w") as evals:
        evals.write("epoch,step,val_loss,val_accuracy\n")
        for epoch in range(1, 2001):
            evals.write(f"{epoch},{epoch * 1000},{1.0 / epoch:.9g},{0.5 + epoch / 10000:.9g}\n")
    return root, run


def test_listing_a_week_long_run_streams_its_files(long_run):
    root, run = long_run
    proc, peak_mb = run_measured([RUNS, "list", "--root", str(root), "--json"])
    assert proc.returncode == 0, proc.stderr
    listed = json.loads(proc.stdout)
    assert len(listed) == 1
    assert listed[0]["steps"] == STEPS
    assert listed[0]["final_loss"] == pytest.approx(1.0 / STEPS, rel=1e-6)
    assert listed[0]["best_val_accuracy"] == pytest.approx(0.7)
    assert peak_mb < PEAK_LIMIT_MB, f"peak resident memory {peak_mb:.0f} MB"


def test_drawing_a_week_long_run_reads_a_bounded_number_of_points(long_run, tmp_path):
    _, run = long_run
    out = tmp_path / "loss.png"
    proc, peak_mb = run_measured([RUNS, "plot", str(run), "--out", str(out)])
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_size > 1000
    assert peak_mb < PEAK_LIMIT_MB, f"peak resident memory {peak_mb:.0f} MB"
