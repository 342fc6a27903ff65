"""Graceful stop on SIGTERM (agreed by all ranks) and no rank left blocked when a peer dies."""
import signal
import time

from conftest import Ranks, digest, metric_rows, read_json, wait_until

LONG = ["--model", "cnn", "--epochs", "50", "--threads", "1", "--eval-batch-size", "5000"]


def test_sigterm_to_one_rank_stops_all_with_checkpoint(tmp_path):
    run = tmp_path / "run"
    ranks = Ranks(2, LONG, run)
    try:
        wait_until(lambda: metric_rows(run) >= 5, 120, "5 training steps")
        ranks.procs[1].send_signal(signal.SIGTERM)  # only one rank is told: the stop must still be agreed
        codes = ranks.wait(timeout=60)
    finally:
        ranks.kill()
    assert codes == [0, 0], [ranks.output(0), ranks.output(1)]
    summary = read_json(run / "summary.json")
    assert summary["status"] == "stopped"
    steps = summary["steps"]
    assert (run / "checkpoints" / f"step-{steps:08d}.pt").exists()
    assert (run / "model.pt").exists()
    assert digest(ranks.output(0)) == digest(ranks.output(1)), "both ranks stop after the same step"
    assert f"final step={steps} " in ranks.output(1)


def test_dead_peer_fails_the_survivor_quickly(tmp_path):
    run = tmp_path / "run"
    ranks = Ranks(2, LONG + ["--collective-timeout", "30"], run)
    try:
        wait_until(lambda: metric_rows(run) >= 3, 120, "3 training steps")
        killed_at = time.monotonic()
        ranks.procs[1].kill()
        code = ranks.procs[0].wait(timeout=45)
        elapsed = time.monotonic() - killed_at
    finally:
        ranks.kill()
    assert code == 1, ranks.output(0)
    # Rank 1 is left unreaped (a zombie), as under a launcher that polls slowly: still seen as dead.
    assert elapsed < 10, f"survivor took {elapsed:.1f}s"
    assert "a peer rank died" in ranks.output(0)
    assert "failed" in ranks.output(0)
    summary = read_json(run / "summary.json")
    assert summary["status"] == "failed" and summary["message"]
