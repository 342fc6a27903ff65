"""Rank 0 of a real 2-rank run writes RUN_DIR/tb/events.out.tfevents.*: read record by record here, every checksum
checked by the independent implementation in test_tensorboard_records.py. Its tags are the CSV columns (loss, lr,
samples_per_sec from metrics.csv; val_loss, val_accuracy from eval.csv), one event per value at every step, and
each value is exactly the float32 of the CSV's text (the CSVs hold the trainer's doubles in their shortest exact
form; the event file holds them as float32 simple_values)."""
import re
import struct
import time

from conftest import read_csv, run_ranks
from test_tensorboard_records import decode_event, unframe

STEPS = 12


def as_float32_bytes(number):
    """The 4 bytes of the float32 nearest to NUMBER (what the writer's static_cast<float> gives)."""
    return struct.pack("<f", number)


def test_trainer_event_file_matches_the_csvs(tmp_path):
    run = tmp_path / "run"
    before = time.time()
    # A cosine schedule after a warmup: lr takes a different, inexact value at every step.
    codes, out = run_ranks(2, ["--model", "mlp", "--max-steps", str(STEPS), "--threads", "1",
                               "--lr-schedule", "cosine", "--warmup-steps", "3"], run)
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

    def take(step, tag, csv_text):
        """The event (step, tag), which must exist, equal bit for bit to the float32 of the CSV's value."""
        assert (step, tag) in scalars, f"no {tag} event at step {step}"
        event_bytes = as_float32_bytes(scalars.pop((step, tag)))  # exact: the value was decoded from 4 bytes
        assert event_bytes == as_float32_bytes(float(csv_text)), (step, tag, csv_text)

    metrics = read_csv(run / "metrics.csv")
    assert [int(row["step"]) for row in metrics] == list(range(1, STEPS + 1))
    assert len({row["lr"] for row in metrics}) > 3  # the schedule moved lr: not one trivially exact value
    for row in metrics:
        step = int(row["step"])
        for tag in ("loss", "lr", "samples_per_sec"):
            take(step, tag, row[tag])
    evals = read_csv(run / "eval.csv")
    assert evals
    for row in evals:
        step = int(row["step"])
        for tag in ("val_loss", "val_accuracy"):
            take(step, tag, row[tag])
    assert scalars == {}  # nothing but the CSVs' values
