"""--keep-best: every evaluation that beats the best so far gets a checkpoint, which the rotation of
--keep-checkpoints never deletes; checkpoints/best.pt is a hard link to it, checkpoints/best.json and summary.json
name it, and the best is the one eval.csv says it is. A resume from best.pt continues from it with the best kept; a
resume from before the best forgets it (it belongs to the abandoned timeline, and its files go aside with it) and
chooses afresh; another rule on resume leaves the earlier best.pt as it was."""
import json
import os
from pathlib import Path

from conftest import read_csv, read_json, run_single

# The mlp on Fashion-MNIST, 10% held out, 4 epochs of 211 steps, a checkpoint every 50 steps.
JOB = ["--model", "mlp", "--val-split", "0.1", "--epochs", "4", "--batch-size", "256", "--checkpoint-every", "50",
       "--threads", "2"]


def checkpoint_steps(run):
    return sorted(int(p.name[5:13]) for p in (run / "checkpoints").glob("step-*.pt"))


def best_of(run, column, pick):
    rows = read_csv(run / "eval.csv")
    chosen = pick(rows, key=lambda row: float(row[column]))
    return int(chosen["step"]), float(chosen[column])


def assert_best_is(run, step, metric, mode, value):
    checkpoints = run / "checkpoints"
    record = read_json(checkpoints / "best.json")
    assert record == {"metric": metric, "mode": mode, "step": step, "value": value,
                      "checkpoint": f"step-{step:08d}.pt"}, record
    summary = read_json(run / "summary.json")["best_checkpoint"]
    assert summary == dict(record, path=str(checkpoints / "best.pt")), summary
    # The same file, not a second copy.
    assert os.stat(checkpoints / "best.pt").st_ino == os.stat(checkpoints / f"step-{step:08d}.pt").st_ino


def test_the_rotation_never_deletes_the_best_checkpoint(tmp_path):
    run = tmp_path / "run"
    # The highest validation loss is the first evaluation's: an old best, which --keep-checkpoints 1 would delete.
    code, output = run_single([*JOB, "--keep-checkpoints", "1", "--keep-best", "val_loss:max", "--out", str(run)])
    assert code == 0, output
    step, value = best_of(run, "val_loss", max)
    assert step == 211, read_csv(run / "eval.csv")
    assert checkpoint_steps(run) == [211, 844]
    assert_best_is(run, 211, "val_loss", "max", value)
    assert "best checkpoint step=211" in output


def test_by_default_the_lowest_validation_loss_is_kept(tmp_path):
    run = tmp_path / "run"
    code, output = run_single([*JOB, "--keep-checkpoints", "2", "--out", str(run)])
    assert code == 0, output
    step, value = best_of(run, "val_loss", min)
    assert_best_is(run, step, "val_loss", "min", value)
    assert step in checkpoint_steps(run)

    # val_accuracy: the highest unless said.
    accuracy_run = tmp_path / "accuracy"
    code, output = run_single([*JOB, "--keep-best", "val_accuracy", "--out", str(accuracy_run)])
    assert code == 0, output
    step, value = best_of(accuracy_run, "val_accuracy", max)
    assert_best_is(accuracy_run, step, "val_accuracy", "max", value)


def test_none_keeps_no_best(tmp_path):
    run = tmp_path / "run"
    code, output = run_single([*JOB, "--epochs", "1", "--keep-best", "none", "--out", str(run)])
    assert code == 0, output
    assert not (run / "checkpoints" / "best.pt").exists() and not (run / "checkpoints" / "best.json").exists()
    assert read_json(run / "summary.json")["best_checkpoint"] is None


def test_resuming_from_the_best_keeps_it_and_from_before_it_chooses_afresh(tmp_path):
    run = tmp_path / "run"
    code, output = run_single([*JOB, "--keep-checkpoints", "20", "--keep-best", "val_loss:max", "--out", str(run)])
    assert code == 0, output
    best = run / "checkpoints" / "best.pt"
    code, output = run_single([*JOB, "--keep-checkpoints", "20", "--keep-best", "val_loss:max", "--resume", str(best),
                               "--out", str(run)])
    assert code == 0, output
    assert "resumed from " + str(best) + " at step 211" in output
    assert read_json(run / "summary.json")["resumed_from"] == str(best)
    _, value = best_of(run, "val_loss", max)
    assert_best_is(run, 211, "val_loss", "max", value)

    # The lowest validation loss is the last step's; resuming from step 400 abandons it, and the best found again is
    # the new timeline's step 844, not the abandoned file.
    lowest = tmp_path / "lowest"
    code, output = run_single([*JOB, "--keep-checkpoints", "20", "--out", str(lowest)])
    assert code == 0, output
    assert read_json(lowest / "checkpoints" / "best.json")["step"] == 844
    abandoned_inode = os.stat(lowest / "checkpoints" / "step-00000844.pt").st_ino
    code, output = run_single([*JOB, "--keep-checkpoints", "20", "--resume",
                               str(lowest / "checkpoints" / "step-00000400.pt"), "--out", str(lowest)])
    assert code == 0, output
    step, value = best_of(lowest, "val_loss", min)
    assert step == 844
    assert_best_is(lowest, 844, "val_loss", "min", value)
    assert os.stat(lowest / "checkpoints" / "best.pt").st_ino != abandoned_inode
    # The abandoned timeline's best went aside with its checkpoints.
    aside = next((lowest / "checkpoints").glob("abandoned-*"))
    assert read_json(aside / "best.json")["step"] == 844
    assert os.stat(aside / "best.pt").st_ino == abandoned_inode


def test_another_rule_on_resume_leaves_the_earlier_best_until_a_new_one(tmp_path):
    run = tmp_path / "run"
    code, output = run_single([*JOB, "--keep-checkpoints", "1", "--keep-best", "val_loss:max", "--out", str(run)])
    assert code == 0, output
    before = (run / "checkpoints" / "best.json").read_text()
    inode = os.stat(run / "checkpoints" / "best.pt").st_ino
    # --keep-best none from here on: nothing new is kept as the best, and the earlier best.pt stays, its bytes too.
    code, output = run_single([*JOB, "--epochs", "5", "--keep-checkpoints", "1", "--keep-best", "none",
                               "--resume", str(run), "--out", str(run)])
    assert code == 0, output
    assert (run / "checkpoints" / "best.json").read_text() == before
    assert os.stat(run / "checkpoints" / "best.pt").st_ino == inode
    assert read_json(run / "summary.json")["best_checkpoint"] is None


def test_a_bad_rule_is_one_line_and_exit_2(tmp_path):
    for rule, needle in (("loss", "--keep-best: unknown metric 'loss'"), ("val_loss:lowest", "must be min or max")):
        code, output = run_single(["--keep-best", rule, "--out", str(tmp_path / "run")])
        assert code == 2 and needle in output and len(output.strip().splitlines()) == 1, output
        assert not (tmp_path / "run").exists()
