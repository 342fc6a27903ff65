"""Checkpoints: atomic, last K kept, and 10 steps + resume 10 steps == 20 steps straight."""
import torch

from conftest import read_csv, read_json, run_ranks, run_single

COMMON = ["--model", "cnn", "--batch-size", "32", "--threads", "1", "--seed", "3", "--lr", "0.05",
          "--eval-batch-size", "5000"]


def test_resume_is_exact(tmp_path):
    straight = tmp_path / "straight"
    codes, out = run_ranks(2, COMMON + ["--max-steps", "20", "--checkpoint-every", "5", "--keep-checkpoints", "3"],
                           straight)
    assert codes == [0, 0], out
    kept = sorted(p.name for p in (straight / "checkpoints").glob("step-*.pt"))
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
    files = sorted((run / "checkpoints").iterdir())
    # The one checkpoint, which is also the best one (one evaluation): best.pt is the same file.
    assert [f.name for f in files] == ["best.json", "best.pt", "step-00000003.pt"]
    # Resuming with another optimizer is refused: the optimizer state is part of the checkpoint.
    codes, out = run_ranks(1, ["--model", "mlp", "--optimizer", "sgd", "--resume", str(run)], tmp_path / "other")
    assert codes == [2]
    assert "trained with --optimizer adam" in out[0]


def flip_middle(path, count=64):
    data = bytearray(path.read_bytes())
    for i in range(len(data) // 2, len(data) // 2 + count):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


def test_damaged_newest_checkpoint_is_skipped(tmp_path):
    """LibTorch's zip reader does not check CRCs: flipped bytes would load as silently wrong weights."""
    straight = tmp_path / "straight"
    codes, out = run_ranks(2, COMMON + ["--max-steps", "15"], straight)
    assert codes == [0, 0], out

    run = tmp_path / "run"
    codes, out = run_ranks(2, COMMON + ["--max-steps", "10", "--checkpoint-every", "5"], run)
    assert codes == [0, 0], out
    newest = run / "checkpoints" / "step-00000010.pt"
    flip_middle(newest)

    # Named explicitly: bad input, at --validate-only as well as at start.
    code, text = run_single(COMMON + ["--validate-only", "--resume", str(newest)])
    assert code == 2 and "damaged checkpoint" in text and "bad CRC" in text, text
    codes, out = run_ranks(1, COMMON + ["--max-steps", "15", "--resume", str(newest)], tmp_path / "other")
    assert codes == [2], out
    assert "damaged checkpoint" in out[0]
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(newest.read_bytes()[: newest.stat().st_size // 2])
    code, text = run_single(COMMON + ["--validate-only", "--resume", str(truncated)])
    assert code == 2 and "damaged checkpoint" in text, text

    # The run directory: the newest intact checkpoint (step 5), said so, and the result is exact.
    code, text = run_single(COMMON + ["--validate-only", "--resume", str(run)])
    assert code == 0, text
    codes, out = run_ranks(2, COMMON + ["--max-steps", "15", "--resume", str(run)], run)
    assert codes == [0, 0], out
    assert "damaged checkpoint" in out[0] and "skipped; resuming from" in out[0], out[0]
    assert "step-00000005.pt at step 5" in out[0]
    a = torch.load(straight / "model.pt")
    b = torch.load(run / "model.pt")
    assert all(torch.equal(a[k], b[k]) for k in a), "resumed weights differ from the straight run"
