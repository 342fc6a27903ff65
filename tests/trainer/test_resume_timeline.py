"""Resuming from an older checkpoint starts a new timeline: the later checkpoints (and the metrics rows)
of the abandoned one move aside, so pruning and a later --resume RUN_DIR only ever see the new one."""
from conftest import read_csv, run_ranks

COMMON = ["--model", "mlp", "--batch-size", "32", "--threads", "1", "--seed", "7", "--eval-batch-size", "5000",
          "--checkpoint-every", "10"]
FIRST_LR, SECOND_LR = "0.05", "0.02"  # the learning rate tells the timelines apart in metrics.csv


def names(folder):
    """The files, but the best checkpoint's link and record (test_best_checkpoint.py covers them)."""
    return sorted(p.name for p in folder.iterdir() if p.is_file() and not p.name.startswith("best."))


def test_resume_from_an_older_checkpoint_abandons_the_later_ones(tmp_path):
    run = tmp_path / "run"
    codes, out = run_ranks(1, COMMON + ["--lr", FIRST_LR, "--max-steps", "40", "--keep-checkpoints", "10"], run)
    assert codes == [0], out[0]
    checkpoints = run / "checkpoints"
    assert names(checkpoints) == [f"step-000000{s}.pt" for s in (10, 20, 30, 40)]

    # Back to step 10 with another learning rate, keeping only 2 checkpoints.
    codes, out = run_ranks(1, COMMON + ["--lr", SECOND_LR, "--max-steps", "20", "--keep-checkpoints", "2",
                                        "--resume", str(checkpoints / "step-00000010.pt")], run)
    assert codes == [0], out[0]
    abandoned = [p for p in checkpoints.iterdir() if p.is_dir()]
    assert len(abandoned) == 1 and abandoned[0].name.startswith("abandoned-"), list(checkpoints.iterdir())
    moved = [line for line in out[0].splitlines() if "abandoned timeline" in line]
    assert len(moved) == 1 and str(abandoned[0]) in moved[0], out[0]
    # The new timeline's checkpoints are the ones kept; the old 20, 30 and 40 are aside, untouched.
    assert names(checkpoints) == ["step-00000010.pt", "step-00000020.pt"]
    assert names(abandoned[0]) == ["eval.csv", "metrics.csv", "step-00000020.pt", "step-00000030.pt",
                                   "step-00000040.pt"]

    rows = read_csv(run / "metrics.csv")
    assert [int(r["step"]) for r in rows] == list(range(1, 21)), "one timeline, each step once"
    assert {r["lr"] for r in rows[:10]} == {FIRST_LR} and {r["lr"] for r in rows[10:]} == {SECOND_LR}
    old_rows = read_csv(abandoned[0] / "metrics.csv")
    assert [int(r["step"]) for r in old_rows] == list(range(1, 41))
    assert {r["lr"] for r in old_rows} == {FIRST_LR}
    assert all(int(r["step"]) <= 20 for r in read_csv(run / "eval.csv"))

    # A later restart of the run directory continues the new timeline, not the abandoned step 40.
    codes, out = run_ranks(1, COMMON + ["--lr", SECOND_LR, "--max-steps", "30", "--keep-checkpoints", "2",
                                        "--resume", str(run)], run)
    assert codes == [0], out[0]
    assert "step-00000020.pt at step 20 " in out[0], out[0]
    assert "abandoned timeline" not in out[0]
    assert names(checkpoints) == ["step-00000020.pt", "step-00000030.pt"]
    assert [int(r["step"]) for r in read_csv(run / "metrics.csv")] == list(range(1, 31))


def test_a_fresh_run_in_a_used_folder_sets_the_old_timeline_aside(tmp_path):
    # Run by hand twice into one --out: the second run's checkpoints must not mix with the first's
    # (a later --resume RUN_DIR would otherwise pick the first run's step 30).
    run = tmp_path / "run"
    codes, out = run_ranks(1, COMMON + ["--lr", FIRST_LR, "--max-steps", "30", "--keep-checkpoints", "10"], run)
    assert codes == [0], out[0]
    codes, out = run_ranks(1, COMMON + ["--lr", SECOND_LR, "--max-steps", "20", "--keep-checkpoints", "10"], run)
    assert codes == [0], out[0]
    checkpoints = run / "checkpoints"
    assert names(checkpoints) == ["step-00000010.pt", "step-00000020.pt"]
    abandoned = [p for p in checkpoints.iterdir() if p.is_dir()]
    assert len(abandoned) == 1, list(checkpoints.iterdir())
    assert names(abandoned[0]) == ["eval.csv", "metrics.csv", "step-00000010.pt", "step-00000020.pt", "step-00000030.pt"]
    assert {r["lr"] for r in read_csv(abandoned[0] / "metrics.csv")} == {FIRST_LR}
    codes, out = run_ranks(1, COMMON + ["--lr", SECOND_LR, "--max-steps", "30", "--resume", str(run)], run)
    assert codes == [0], out[0]
    assert "step-00000020.pt at step 20 " in out[0], out[0]


def test_resuming_an_abandoned_checkpoint_sets_the_current_timeline_aside(tmp_path):
    run = tmp_path / "run"
    codes, out = run_ranks(1, COMMON + ["--lr", FIRST_LR, "--max-steps", "30", "--keep-checkpoints", "10"], run)
    assert codes == [0], out[0]
    codes, out = run_ranks(1, COMMON + ["--lr", SECOND_LR, "--max-steps", "20", "--keep-checkpoints", "10",
                                        "--resume", str(run / "checkpoints" / "step-00000010.pt")], run)
    assert codes == [0], out[0]
    first = next(p for p in (run / "checkpoints").iterdir() if p.is_dir())  # holds the first run's 20 and 30
    # Back to the first timeline's step 30: the second timeline's 10 and 20 go aside, none stays beside it.
    codes, out = run_ranks(1, COMMON + ["--lr", FIRST_LR, "--max-steps", "40", "--keep-checkpoints", "10",
                                        "--resume", str(first / "step-00000030.pt")], run)
    assert codes == [0], out[0]
    assert names(run / "checkpoints") == ["step-00000040.pt"]
