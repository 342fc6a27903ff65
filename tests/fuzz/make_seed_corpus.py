#!/usr/bin/python3
"""Writes the fuzz targets' seed corpus (tests/fuzz/corpus/NAME/): small valid inputs of each format, so that
libFuzzer starts from real structure instead of from nothing. Run with Debian's python3 (PIL and torch):

    /usr/bin/python3 tests/fuzz/make_seed_corpus.py --trainer build/app/ringmaster-trainer

The trainer makes a tiny run (linear model, synthetic data) whose checkpoint, metrics.csv, eval.csv and
TensorBoard events become seeds too. Files are written only when their content changed, so running it again
leaves git clean (the trainer's run has wall times in it: its seeds are kept unless --refresh-run is given).
"""
import argparse
import gzip
import io
import json
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
PART_SEPARATOR = b"\n--ringmaster-fuzz-part--\n"  # tests/fuzz/fuzz_support.h


def put(target, name, data, keep_existing=False):
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name)
    if isinstance(data, str):
        data = data.encode()
    if os.path.exists(path) and (keep_existing or open(path, "rb").read() == data):
        return
    with open(path, "wb") as out:
        out.write(data)


# ---- the reporting socket (core/protocol/wire.h) ----

def frame(**fields):
    return json.dumps(fields, separators=(",", ":")).encode() + b"\n"


def frames():
    hello = frame(v=1, type="hello", rank=0, pid=1234, token="ab" * 32)
    put("frames", "hello-step-heartbeat", b"\x05" + hello +
        frame(v=1, type="heartbeat", step=0, phase="loading") +
        frame(v=1, type="step", step=20, epoch=0, loss=0.6931, lr=0.01, samples_per_sec=5120.5, wall_time=1.25))
    put("frames", "eval-checkpoint-status", b"\x21" + hello +
        frame(v=1, type="eval", epoch=1, step=940, val_loss=0.41, val_accuracy=0.853) +
        frame(v=1, type="checkpoint", step=940, path="/runs/r/checkpoints/step-00000940.pt") +
        frame(v=1, type="status", status="completed", message="", total_steps=940, steps_per_epoch=470,
              resumed_from_step=0))
    put("frames", "scalars", b"\x60" + hello +
        frame(v=1, type="scalars", step=7, values={"train/loss": 0.5, "acc": 1, "lr": 1e-3}) +
        frame(v=1, type="scalars", step=8, values={"bad\u0001": 1, "": 2, "x": "text"}))
    put("frames", "rank1-split", b"\xff" + frame(v=1, type="hello", rank=1, pid=99, token="00") +
        frame(v=1, type="heartbeat", step=3, phase="train") + b'{"v":1,"type":"heartbeat","st')


# ---- a training script's output (core/supervisor/metric_line_parser.h) ----

def metric_lines():
    put("metric_lines", "plain", "epoch 1 step 20 loss: 0.25 acc=0.91\n"
        "Step [20/600] loss 0.1234, val.acc = 8.5e-1\n"
        "{'loss': 0.25, 'train/acc': 0.9, \"lr\": 1e-05}\n"
        "[2026-11-30 12:00:00.123] iter=40 loss=0.2 time 12:30:45 v1.13.1 127.0.0.1\n")
    put("metric_lines", "progress", "train:  45%|####5     | 45/100 [00:01<00:01, loss: 0.31]\r"
        "train: 100%|##########| 100/100 [00:02<00:00, loss: 0.29]\n"
        "\x1b[32mINFO\x1b[0m epoch: 2 loss=0.28 12.3s 45/100 1,234\n")
    put("metric_lines", "patterns", "[12/100] loss 0.5 acc 0.75\nloss=nan loss=inf loss: -3.5e+2\n")


# ---- job files (core/supervisor/job_spec.h, core/trainer/config.h) ----

def jobs():
    trainer_job = {
        "version": 1,
        "launch": {"device": "cpu", "nproc": 2, "gpus": [], "output_root": "runs", "run_dir": "",
                   "master_port": 0, "max_restarts": 0, "heartbeat_timeout": 120, "grace_period": 30,
                   "resume": "", "trainer_path": ""},
        "trainer": {"model": "cnn", "data": "fashion-mnist", "epochs": 1, "batch_size": 64, "lr": 0.01,
                    "optimizer": "sgd", "momentum": 0.9, "seed": 1234567, "drop-last": True},
    }
    script_job = {
        "version": 1,
        "launch": {"device": "cuda", "gpus": [0, 1], "script": "train.py", "script_args": ["--lr", "0.1"],
                   "python": "python3", "metric_patterns": ["loss (?<loss>[0-9.eE+-]+)"], "tensorboard_dir": "tb",
                   "slurm": {"nodes": 2, "ntasks_per_node": 4, "gpus_per_node": 4, "partition": "gpu",
                             "time": "0-02:00:00", "account": "proj42", "extra_args": ["--mem=64G"],
                             "metrics": "auto", "job_id": "12345"}},
    }
    flat = {"model": "mlp", "data": "synthetic", "epochs": 2, "batch-size": 8, "lr-schedule": "cosine",
            "warmup_steps": 5, "val-split": 0.25, "image-size": "28,28", "normalize": "0.5,0.25"}
    for target in ("job_spec", "trainer_job"):
        put(target, "trainer-job.json", json.dumps(trainer_job, indent=2))
        put(target, "script-job.json", json.dumps(script_job, indent=2))
    put("trainer_job", "flat-flags.json", json.dumps(flat))


# ---- IDX folders (core/trainer/data/idx_folder.h) ----

def idx():
    images = struct.pack(">BBBBIII", 0, 0, 8, 3, 3, 4, 4) + bytes(range(48))
    labels = struct.pack(">BBBBI", 0, 0, 8, 1, 3) + bytes([0, 1, 2])
    put("idx", "plain-3x4x4", images + PART_SEPARATOR + labels)
    put("idx", "gzip-3x4x4", gzip.compress(images, mtime=0) + PART_SEPARATOR + gzip.compress(labels, mtime=0))
    put("idx", "count-mismatch", images + PART_SEPARATOR + struct.pack(">BBBBI", 0, 0, 8, 1, 2) + bytes([0, 1]))


# ---- images (core/trainer/data/image_decode.h) ----

def images():
    from PIL import Image
    def save(name, image, fmt, **options):
        buffer = io.BytesIO()
        image.save(buffer, fmt, **options)
        put("image", name, buffer.getvalue())
    rgb = Image.new("RGB", (5, 4))
    rgb.putdata([(x * 40, y * 60, (x * y * 20) % 256) for y in range(4) for x in range(5)])
    grey = rgb.convert("L")
    save("rgb.png", rgb, "PNG")
    save("grey.png", grey, "PNG")
    save("palette.png", rgb.convert("P"), "PNG")
    save("rgba.png", rgb.convert("RGBA"), "PNG")
    save("grey16.png", grey.convert("I;16"), "PNG")
    save("interlaced.png", rgb, "PNG", interlace=1)
    save("bilevel.png", grey.convert("1"), "PNG")
    save("rgb.jpg", rgb, "JPEG", quality=90)
    save("grey.jpg", grey, "JPEG", quality=90)
    save("progressive.jpg", rgb, "JPEG", quality=75, progressive=True)


# ---- CSV tables (core/trainer/data/csv_table.h) ----

def csv_tables():
    put("csv_table", "classes.csv", "a,b,label\n1,2,cat\n3.5,-4,dog\n0,1e-3,cat\n")
    put("csv_table", "integers.csv", "\ufeffx1,x2,y\r\n1,2,0\r\n3,4,1\r\n")
    put("csv_table", "regression.csv", "f,target\n0.5,1.25\n1.5,-2.5\n\n")
    put("csv_table", "quoted.csv", '"feature, one","feat""two",label\n"1"," 2 ","cat\nline"\n3,4,dog')


# ---- tensor files (core/trainer/data/tensor_file.h) ----

def tensor_files():
    import torch
    def save(name, value):
        buffer = io.BytesIO()
        torch.save(value, buffer)
        put("tensor_file", name, buffer.getvalue())
    save("float-classes.pt", {"x": torch.arange(6, dtype=torch.float32).reshape(3, 2),
                              "y": torch.tensor([0, 1, 1])})
    save("uint8-targets.pt", {"x": torch.arange(8, dtype=torch.uint8).reshape(2, 2, 2),
                              "y": torch.tensor([[0.5], [1.5]], dtype=torch.float64)})


# ---- TensorBoard records (core/protocol/tensorboard_records.h) ----

def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def record(data):
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked(crc32c(length))) + data + struct.pack("<I", masked(crc32c(data)))


def varint(value):
    value &= (1 << 64) - 1
    out = b""
    while value >= 0x80:
        out += bytes([(value & 0x7F) | 0x80])
        value >>= 7
    return out + bytes([value])


def field(number, wire, payload):
    key = varint(number << 3 | wire)
    if wire == 2:
        return key + varint(len(payload)) + payload
    return key + payload


def tensorboard():
    version = field(1, 1, struct.pack("<d", 1700000000.5)) + field(3, 2, b"brain.Event:2")
    def scalar_event(step, tag, value):
        value_msg = field(1, 2, tag.encode()) + field(2, 5, struct.pack("<f", value))
        return field(1, 1, struct.pack("<d", 1700000001.0 + step)) + field(2, 0, varint(step)) + \
            field(5, 2, field(1, 2, value_msg))
    def tensor_event(step, tag, value):
        shape = field(2, 2, field(1, 0, varint(1)))
        tensor = field(1, 0, varint(2)) + field(2, 2, shape) + field(4, 2, struct.pack("<d", value))
        value_msg = field(1, 2, tag.encode()) + field(8, 2, tensor)
        return field(2, 0, varint(step)) + field(5, 2, field(1, 2, value_msg))
    def packed_float_event(step, tag, value):
        tensor = field(1, 0, varint(1)) + field(5, 2, struct.pack("<f", value))
        return field(2, 0, varint(step)) + field(5, 2, field(1, 2, field(1, 2, tag.encode()) + field(8, 2, tensor)))
    put("tensorboard", "simple-values", record(version) + record(scalar_event(1, "train/loss", 0.5)) +
        record(scalar_event(2, "train/loss", 0.25)) + record(scalar_event(-1, "neg", -1.0)))
    put("tensorboard", "tensor-values", record(version) + record(tensor_event(3, "val/acc", 0.875)) +
        record(packed_float_event(4, "lr", 0.01)))
    damaged = bytearray(record(scalar_event(5, "x", 1.0)))
    damaged[-1] ^= 0xFF
    put("tensorboard", "damaged-then-cut", bytes(damaged) + record(scalar_event(6, "y", 2.0)) + record(version)[:10])
    # The bare Event messages too: the target also frames its input as one record's data.
    put("tensorboard", "bare-event", scalar_event(7, "bare", 3.0))


# ---- runs' CSV files (core/runs/csv_table.h) ----

def runs_csv():
    put("runs_csv", "scalars.csv", 'step,name,value,wall_time\n1,train/loss,0.5,1.0\n2,"a,b ""q""",nan,2.0\n'
        '3,"multi\nline",inf,3.0\n4,cut')
    put("runs_csv", "damaged-metrics.csv", "step,epoch,loss,lr,samples_per_sec,wall_time\n5,0,0.9,0.01,100,0.5\n"
        "10,0,0.8\n20,1,0.7,0.01,100,1.5\r\n\n30,1,0.6,0.01,10")


# ---- a tiny trainer run: checkpoint, metrics, TensorBoard events ----

def trainer_run(trainer, refresh):
    with tempfile.TemporaryDirectory() as work:
        run = os.path.join(work, "run")
        subprocess.run([trainer, "--model", "linear", "--data", "synthetic", "--synthetic-samples", "32",
                        "--batch-size", "16", "--epochs", "2", "--checkpoint-every", "2", "--keep-checkpoints", "1",
                        "--out", run], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env={k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE")})
        checkpoints = sorted(os.listdir(os.path.join(run, "checkpoints")))
        keep = not refresh
        put("checkpoint", "trainer-linear.pt", open(os.path.join(run, "checkpoints", checkpoints[-1]), "rb").read(), keep)
        put("runs_csv", "metrics.csv", open(os.path.join(run, "metrics.csv"), "rb").read(), keep)
        put("runs_csv", "eval.csv", open(os.path.join(run, "eval.csv"), "rb").read(), keep)
        events = [f for f in os.listdir(os.path.join(run, "tb")) if f.startswith("events.out.tfevents.")]
        put("tensorboard", "trainer-events", open(os.path.join(run, "tb", events[0]), "rb").read(), keep)
        put("tensor_file", "trainer-model.pt", open(os.path.join(run, "model.pt"), "rb").read(), keep)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trainer", help="ringmaster-trainer, for the seeds of a tiny run (skipped without it)")
    parser.add_argument("--refresh-run", action="store_true", help="replace the tiny run's seeds")
    args = parser.parse_args()
    frames()
    metric_lines()
    jobs()
    idx()
    images()
    csv_tables()
    tensor_files()
    tensorboard()
    runs_csv()
    if args.trainer:
        trainer_run(args.trainer, args.refresh_run)
    total = sum(os.path.getsize(os.path.join(root, f)) for root, _, files in os.walk(CORPUS) for f in files)
    print(f"seed corpus: {total} bytes in {CORPUS}")


if __name__ == "__main__":
    sys.exit(main())
