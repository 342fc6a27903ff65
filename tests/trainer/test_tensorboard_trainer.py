"""Rank 0 of a real 2-rank run writes RUN_DIR/tb/events.out.tfevents.*: read record by record here, every checksum
checked by the independent implementation in test_tensorboard_records.py, and every value equal to metrics.csv and
eval.csv (as float32; the CSVs print 9 significant digits, so within one float32 step)."""
import math
import re
import time

from conftest import read_csv, run_ranks
from test_tensorboard_records import decode_event, unframe

STEPS = 12


def test_trainer_event_file_matches_the_csvs(tmp_path):
    run = tmp_path / "run"
    before = time.time()
    codes, out = run_ranks(2, ["--model", "mlp", "--max-steps", str(STEPS), "--threads", "1"], run)
    assert codes == [0, 0], out
    after = time.time()

    files = list((run / "tb").iterdir())
    assert len(files) == 1, files  # rank 0 only
    assert re.fullmatch(r"events\.out\.tfevents\.\d+\..+\.\d+", files[0].name)
    events = [decode_event(r) for r in unframe(files[0].read_bytes())]
    assert events[0][2] == "brain.Event:2"
    scalars = {}
    for wall_time, step, version, values in events[1:]:
        assert before - 1 <= wall_time <= after + 1
        for tag, value in values:
            assert (step, tag) not in scalars
            scalars[(step, tag)] = value

    def same(tb_value, csv_text):
        return math.isclose(tb_value, float(csv_text), rel_tol=2 ** -23)

    metrics = read_csv(run / "metrics.csv")
    assert [int(row["step"]) for row in metrics] == list(range(1, STEPS + 1))
    for row in metrics:
        step = int(row["step"])
        assert same(scalars.pop((step, "train/loss")), row["loss"]), row
        assert same(scalars.pop((step, "train/lr")), row["lr"]), row
        assert scalars.pop((step, "train/samples_per_sec")) > 0
    evals = read_csv(run / "eval.csv")
    assert evals
    for row in evals:
        step = int(row["step"])
        assert same(scalars.pop((step, "val/loss")), row["val_loss"]), row
        assert same(scalars.pop((step, "val/accuracy")), row["val_accuracy"]), row
    assert scalars == {}
