"""Trainer benchmark: ringmaster-trainer vs plain PyTorch DDP, 1 vs 2 ranks. Prints figures; asserts nothing.

  /usr/bin/python3 tests/bench/bench_trainer.py [--steps 300] [--rounds 3]

Each round runs, interleaved: Ringmaster 2 ranks, reference 2 ranks, Ringmaster 1 rank, reference 1 rank;
1 intra-op thread per rank, batch 64 per rank, the cnn on Fashion-MNIST, SGD. Throughput is measured
from step --warmup to the last step (Ringmaster: from metrics.csv wall_time; reference: its own timer).
Peak RSS per rank comes from wait4().
"""
import argparse
import csv
import os
import socket
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRAINER = os.environ.get("RINGMASTER_TRAINER", str(HERE.parents[1] / "build" / "app" / "ringmaster-trainer"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(command, world):
    port = free_port()
    procs = []
    for rank in range(world):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world),
                   LOCAL_WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    outputs, rss = [], []
    for proc in procs:
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            sys.exit(f"benchmark run failed ({command[0]}):\n{out}")
        outputs.append(out)
        rss.append(usage.ru_maxrss / 1024.0)  # MiB
    return outputs, rss


def ringmaster(world, steps, warmup):
    with tempfile.TemporaryDirectory() as run:
        _, rss = launch([TRAINER, "--model", "cnn", "--batch-size", "64", "--threads", "1", "--max-steps", str(steps),
                         "--lr", "0.01", "--out", run, "--eval-every", "0",
                         "--log-every", "1000000"], world)
        rows = list(csv.DictReader(open(Path(run) / "metrics.csv")))
    t0 = float(rows[warmup - 1]["wall_time"])
    t1 = float(rows[-1]["wall_time"])
    return (steps - warmup) * 64 * world / (t1 - t0), rss


def reference(world, steps, warmup):
    outputs, rss = launch([sys.executable, str(HERE / "reference_ddp.py"), "--steps", str(steps), "--warmup",
                           str(warmup), "--threads", "1"], world)
    line = next(l for l in outputs[0].splitlines() if l.startswith("reference samples_per_sec="))
    return float(line.split("=")[1].split()[0]), rss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results = {key: [] for key in ("rm2", "ref2", "rm1", "ref1")}
    rss = {key: 0.0 for key in results}
    for round_index in range(args.rounds):
        for key, func, world in (("rm2", ringmaster, 2), ("ref2", reference, 2), ("rm1", ringmaster, 1),
                                 ("ref1", reference, 1)):
            value, peak = func(world, args.steps, args.warmup)
            results[key].append(value)
            rss[key] = max(rss[key], max(peak))
            print(f"round {round_index + 1} {key:5s} {value:8.1f} samples/s  peak RSS/rank {max(peak):6.1f} MiB",
                  flush=True)
    med = {key: statistics.median(values) for key, values in results.items()}
    print()
    print(f"{'run':32s} {'samples/s (median)':>18s} {'peak RSS/rank':>14s}")
    names = {"rm2": "ringmaster-trainer, 2 ranks", "ref2": "PyTorch DDP reference, 2 ranks",
             "rm1": "ringmaster-trainer, 1 rank", "ref1": "PyTorch reference, 1 rank"}
    for key, name in names.items():
        print(f"{name:32s} {med[key]:18.1f} {rss[key]:11.1f} MiB")
    print()
    print(f"ratio ringmaster / reference, 2 ranks: {med['rm2'] / med['ref2']:.2f}x (target >= 1.25x)")
    print(f"ratio ringmaster / reference, 1 rank:  {med['rm1'] / med['ref1']:.2f}x")
    print(f"scaling 2 ranks / 1 rank, ringmaster:  {med['rm2'] / med['rm1']:.2f}x (target >= 1.6x)")
    print(f"scaling 2 ranks / 1 rank, reference:   {med['ref2'] / med['ref1']:.2f}x")


if __name__ == "__main__":
    main()
