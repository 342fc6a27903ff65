"""Data benchmark: memory of 1 vs 2 ranks with the per-machine cache, decode speed of an image folder, and
training speed on a cached image folder against the same images as IDX, and the time to fingerprint a large
image folder. Prints figures; asserts nothing.

  /usr/bin/python3 tests/bench/bench_data.py [--images 10000] [--steps 200] [--fingerprint-files 50000]

Memory: each run trains the cnn on Fashion-MNIST (batch 64 per rank, 1 thread per rank); after step 40,
every rank's Pss (/proc/PID/smaps_rollup: shared pages divided among their users) and VmRSS are read.
Decode: the first Fashion-MNIST training images written as PNG into an ImageFolder (one sub-folder per
class), read by `ringmaster-trainer --validate-only --data-cache off` (minus the same command's time on a
one-image folder, which is process start-up). Speed: 2 ranks train --steps steps on that folder (cached)
and on the same images as an IDX folder; samples/s from metrics.csv after a warm-up of 20 steps.
Fingerprint: `ringmaster-cache-probe fingerprint` of a folder of empty files in 100 class folders (the probe
prints how long the fingerprint took; the cache key is read on every run, so this is pre-flight's cost).
"""
import argparse
import csv
import gzip
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRAINER = os.environ.get("RINGMASTER_TRAINER", str(HERE.parents[1] / "build" / "app" / "ringmaster-trainer"))
CACHE_PROBE = os.environ.get("RINGMASTER_CACHE_PROBE", str(HERE.parents[1] / "build" / "tests" / "ringmaster-cache-probe"))
FASHION = Path("/usr/share/datasets/fashion-mnist")
PYTHON_REFERENCE_RSS_MIB = 635  # tests/bench/reference_ddp.py, per rank (docs/performance.md)
WARMUP = 20


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(args, world, out, cache):
    port = free_port()
    procs = []
    for rank in range(world):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world),
                   LOCAL_WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                   OMP_NUM_THREADS="1", RINGMASTER_DATA_CACHE=cache)
        procs.append(subprocess.Popen([TRAINER, "--out", out, "--threads", "1", "--log-every", "1000000",
                                       "--eval-every", "0", *args], env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))
    return procs


def metric_rows(out):
    path = Path(out) / "metrics.csv"
    return list(csv.DictReader(open(path))) if path.exists() else []


def memory_of(pid):
    """(Pss, VmRSS, Pss_Anon, Pss_File) in MiB."""
    fields = {}
    for name in (f"/proc/{pid}/smaps_rollup", f"/proc/{pid}/status"):
        for line in open(name):
            key, _, value = line.partition(":")
            if key in ("Pss", "VmRSS", "Pss_Anon", "Pss_File"):
                fields[key] = int(value.split()[0]) / 1024.0
    return fields["Pss"], fields["VmRSS"], fields.get("Pss_Anon", 0.0), fields.get("Pss_File", 0.0)


def memory(world, cache):
    with tempfile.TemporaryDirectory() as out:
        procs = start(["--model", "cnn", "--max-steps", "100000", "--batch-size", "64"], world, out, cache)
        deadline = time.monotonic() + 600
        while len(metric_rows(out)) < 40:
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                sys.exit("memory run did not reach step 40")
            time.sleep(0.2)
        figures = [memory_of(p.pid) for p in procs]
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait()
    return figures


def write_images(count, root_png, root_idx):
    from PIL import Image
    import torch
    with gzip.open(FASHION / "train-images-idx3-ubyte.gz") as f:
        _, n, h, w = struct.unpack(">IIII", f.read(16))
        pixels = torch.frombuffer(bytearray(f.read(count * h * w)), dtype=torch.uint8).view(count, h, w)
    with gzip.open(FASHION / "train-labels-idx1-ubyte.gz") as f:
        f.read(8)
        labels = list(f.read(count))
    for c in range(10):
        (root_png / f"class{c}").mkdir(parents=True)
    # An ImageFolder orders images by class, then name; the IDX copy holds them in that same order.
    order = sorted(range(count), key=lambda i: (labels[i], f"{i:06d}.png"))
    for i in range(count):
        Image.fromarray(pixels[i].numpy(), "L").save(root_png / f"class{labels[i]}" / f"{i:06d}.png")
    root_idx.mkdir()
    ordered = pixels[order].contiguous()
    for prefix, images, targets in (("train", ordered, [labels[i] for i in order]),):
        with open(root_idx / f"{prefix}-images-idx3-ubyte", "wb") as f:
            f.write(struct.pack(">IIII", 0x803, count, h, w) + ordered.numpy().tobytes())
        with open(root_idx / f"{prefix}-labels-idx1-ubyte", "wb") as f:
            f.write(struct.pack(">II", 0x801, count) + bytes(targets))
    for name in ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):  # a small test split for the IDX copy
        src = FASHION / f"{name}.gz"
        (root_idx / f"{name}.gz").write_bytes(src.read_bytes())


def timed_validate(data, cache):
    t0 = time.monotonic()
    subprocess.run([TRAINER, "--validate-only", "--model", "cnn", "--batch-size", "1", "--data", str(data),
                    "--data-cache", cache],
                   check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - t0


def speed(data, steps, cache):
    with tempfile.TemporaryDirectory() as out:
        procs = start(["--model", "cnn", "--data", str(data), "--max-steps", str(steps), "--batch-size", "64"], 2, out, cache)
        for p in procs:
            if p.wait() != 0:
                sys.exit(f"training on {data} failed")
        rows = metric_rows(out)
    t0, t1 = float(rows[WARMUP - 1]["wall_time"]), float(rows[-1]["wall_time"])
    return (len(rows) - WARMUP) * 64 * 2 / (t1 - t0)


def fingerprint_seconds(work, files):
    source = work / "many"
    for folder in range(100):
        (source / f"class{folder:03d}").mkdir(parents=True)
    for index in range(files):
        (source / f"class{index % 100:03d}" / f"{index}.png").touch()
    proc = subprocess.run([CACHE_PROBE, "fingerprint", str(source), "x"], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        sys.exit(f"bench_data: {CACHE_PROBE} fingerprint failed: {proc.stderr.strip()}")
    return float(proc.stderr.split("took ")[1].split(" s")[0])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--images", type=int, default=10000)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--fingerprint-files", type=int, default=50000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        seconds = fingerprint_seconds(work, args.fingerprint_files)
        print(f"fingerprint of {args.fingerprint_files} files in 100 folders: {seconds:.3f} s")
        cache = str(work / "cache")
        one = memory(1, cache)
        two = memory(2, cache)
        pss1, rss1, anon1, file1 = one[0]
        pss2 = sum(m[0] for m in two)
        print(f"memory, Fashion-MNIST cnn (MiB): 1 rank Pss {pss1:.0f} (anonymous {anon1:.0f}, files {file1:.0f}) "
              f"RSS {rss1:.0f}; 2 ranks Pss {' + '.join(f'{m[0]:.0f}' for m in two)} = {pss2:.0f} (anonymous "
              f"{' + '.join(f'{m[2]:.0f}' for m in two)}, files {' + '.join(f'{m[3]:.0f}' for m in two)}), "
              f"RSS {', '.join(f'{m[1]:.0f}' for m in two)}")
        print(f"  2 ranks / 1 rank total Pss: {pss2 / pss1:.2f}x (target <= 1.3x); "
              f"per-rank RSS vs Python reference {PYTHON_REFERENCE_RSS_MIB} MiB: {two[0][1] / PYTHON_REFERENCE_RSS_MIB:.2f}x")

        write_images(args.images, work / "png", work / "idx")
        tiny = work / "tiny" / "only"
        tiny.mkdir(parents=True)
        next((work / "png" / "class0").iterdir()).rename(tiny / "a.png")
        startup = timed_validate(work / "tiny", "off")
        decode = timed_validate(work / "png", "off") - startup
        print(f"decode: {args.images - 1} PNG images in {decode:.2f} s = {(args.images - 1) / decode:.0f} images/s "
              f"(start-up {startup:.2f} s subtracted)")
        timed_validate(work / "png", cache)  # fills the cache, as pre-flight does
        png = speed(work / "png", args.steps, cache)
        idx = speed(work / "idx", args.steps, cache)
        print(f"training, 2 ranks x batch 64: cached image folder {png:.0f} samples/s, same images as IDX "
              f"{idx:.0f} samples/s: {png / idx:.2f}x (target within 10%)")


if __name__ == "__main__":
    main()
