"""Checkpoints: atomic, last K kept, and 10 steps + resume 10 steps == 20 steps straight."""
import torch

from conftest import read_csv, read_json, run_ranks

COMMON = ["--model", "cnn", "--batch-size", "32", "--threads", "1", "--seed", "3", "--lr", "0.05",
          "--eval-batch-size", "5000"]


def test_resume_is_exact(tmp_path):
    straight = tmp_path / "straight"
    codes, out = run_ranks(2, COMMON + ["--max-steps", "20", "--checkpoint-every", "5", "--keep-checkpoints", "3"],
                           straight)
    assert codes == [0, 0], out
    kept = sorted(p.name for p in (straight / "checkpoints").iterdir())
    assert kept == ["step-00000010.pt", "step-00000015.pt", "step-00000020.pt"]

    resumed = tmp_path / "resumed"
    codes, out = run_ranks(2, COMMON + ["--max-steps", "10"], resumed)
    assert codes == [0, 0], out
    assert read_json(resumed / "summary.json")["steps"] == 10
    # A temp file left by a crash mid-write must not be taken for a checkpoint.
    (resumed / "checkpoints" / "step-00000099.pt.tmp-4242").write_bytes(b"half a checkpoint")

    codes, out = run_ranks(2, COMMON + ["--max-steps", "20", "--resume", str(resumed)], resumed)
    assert codes == [0, 0], out
    assert "resumed from" in out[0] and "step-00000010.pt at step 10" in out[0]

    a = torch.load(straight / "model.pt")
    b = torch.load(resumed / "model.pt")
    assert all(torch.equal(a[k], b[k]) for k in a), "resumed weights differ from the straight run"

    rows_straight = read_csv(straight / "metrics.csv")
    rows_resumed = read_csv(resumed / "metrics.csv")
    assert [r["step"] for r in rows_resumed] == [str(s) for s in range(1, 21)], "steps must continue, never repeat"
    assert [r["loss"] for r in rows_resumed] == [r["loss"] for r in rows_straight]
    summary = read_json(resumed / "summary.json")
    assert summary["status"] == "completed" and summary["steps"] == 20
    assert summary["resumed_from"].endswith("step-00000010.pt")


def test_checkpoint_holds_model_optimizer_and_position(tmp_path):
    run = tmp_path / "run"
    codes, out = run_ranks(1, ["--model", "mlp", "--optimizer", "adam", "--lr", "0.001", "--max-steps", "3",
                               "--eval-batch-size", "5000"], run)
    assert codes == [0], out
    files = list((run / "checkpoints").iterdir())
    assert [f.name for f in files] == ["step-00000003.pt"]
    # Resuming with another optimizer is refused: the optimizer state is part of the checkpoint.
    codes, out = run_ranks(1, ["--model", "mlp", "--optimizer", "sgd", "--resume", str(run)], tmp_path / "other")
    assert codes == [2]
    assert "trained with --optimizer adam" in out[0]
