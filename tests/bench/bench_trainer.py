"""Trainer benchmark: ringmaster-trainer against plain PyTorch DDP and against its own raw compute limit.
Prints figures and the targets beside them; asserts nothing (a timed test on a machine that drifts would lie).

  /usr/bin/python3 tests/bench/bench_trainer.py [--steps 300] [--warmup 20] [--rounds 5] [--precision bf16]

--precision bf16 (or fp16, with a PyTorch 2.x Python) runs the trainer and both references under autocast in that
type (the raw limit stays fp32: compare the trainer with the references then).

Each round runs, interleaved, 1 intra-op thread per rank, batch 64 per rank, the cnn on Fashion-MNIST, SGD with
momentum 0.9:
  rm2, rm1       ringmaster-trainer on 2 ranks and on 1
  std2, std1     tests/bench/reference_ddp.py, standardised inputs (what the trainer feeds)
  unit2, unit1   the same script on inputs scaled to [0, 1] only, as the DDP tutorials write it
  raw1           bench_raw_step: the trainer's model, forward, backward and step on one fixed batch, nothing else
  raw2           two of them at once, independent: what 2 cores give 2 processes that never talk (the
                 scaling limit of this machine: shared caches and memory bandwidth, not the all-reduce)
The references are DDP over gloo at 2 ranks and a plain loop at 1 (the faster of the two ways to run one
process). Figures are medians over the rounds; each ratio compares runs of the same rounds. Throughput is
counted from step --warmup to the last step (the trainer: metrics.csv's wall_time; the others: their own timer).
Memory per rank: peak RSS from wait4(), steady RSS as the median of /proc samples over the second half of the
run (training, not start-up).
"""
import argparse
import csv
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUILD = HERE.parents[1] / "build"
TRAINER = os.environ.get("RINGMASTER_TRAINER", str(BUILD / "app" / "ringmaster-trainer"))
RAW_STEP = os.environ.get("RINGMASTER_BENCH_RAW_STEP", str(BUILD / "tests" / "bench_raw_step"))
BATCH = 64

NAMES = {
    "rm2": "ringmaster-trainer, 2 ranks",
    "std2": "PyTorch DDP, standardised, 2 ranks",
    "unit2": "PyTorch DDP, [0, 1] inputs, 2 ranks",
    "rm1": "ringmaster-trainer, 1 rank",
    "std1": "PyTorch, standardised, 1 rank",
    "unit1": "PyTorch, [0, 1] inputs, 1 rank",
    "raw1": "raw compute limit, 1 rank",
    "raw2": "raw compute limit, 2 processes",
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RssSampler(threading.Thread):
    """Samples VmRSS (MiB) of each process every 50 ms until they exit."""

    def __init__(self, pids):
        super().__init__(daemon=True)
        self.samples = {pid: [] for pid in pids}
        self.done = threading.Event()
        self.start()

    def run(self):
        while not self.done.is_set():
            for pid, series in self.samples.items():
                try:
                    with open(f"/proc/{pid}/status") as status:
                        for line in status:
                            if line.startswith("VmRSS:"):
                                series.append(int(line.split()[1]) / 1024.0)
                except OSError:
                    pass
            self.done.wait(0.05)

    def steady(self):
        """Per process: the median of the second half of its samples."""
        return [statistics.median(s[len(s) // 2:]) if s else 0.0 for s in self.samples.values()]


def launch(command, world):
    port = free_port()
    procs = []
    for rank in range(world):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world),
                   LOCAL_WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    sampler = RssSampler([proc.pid for proc in procs])
    outputs, peak = [], []
    for proc in procs:
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            sys.exit(f"benchmark run failed ({command[0]}):\n{out}")
        outputs.append(out)
        peak.append(usage.ru_maxrss / 1024.0)  # MiB
    sampler.done.set()
    sampler.join()
    return outputs, peak, sampler.steady()


def printed_rate(output, prefix):
    line = next(l for l in output.splitlines() if l.startswith(prefix))
    return float(line.split("=")[1].split()[0])


def ringmaster(world, args):
    with tempfile.TemporaryDirectory() as run:
        _, peak, steady = launch([TRAINER, "--model", "cnn", "--batch-size", str(BATCH), "--threads", "1",
                                  "--max-steps", str(args.steps), "--lr", "0.01", "--out", run, "--eval-every", "0",
                                  "--log-every", "1000000", "--precision", args.precision], world)
        rows = list(csv.DictReader(open(Path(run) / "metrics.csv")))
    t0 = float(rows[args.warmup - 1]["wall_time"])
    t1 = float(rows[-1]["wall_time"])
    return (args.steps - args.warmup) * BATCH * world / (t1 - t0), peak, steady


def reference(inputs):
    def run(world, args):
        outputs, peak, steady = launch([sys.executable, str(HERE / "reference_ddp.py"), "--steps", str(args.steps),
                                        "--warmup", str(args.warmup), "--threads", "1", "--inputs", inputs,
                                        "--precision", args.precision], world)
        return printed_rate(outputs[0], "reference samples_per_sec="), peak, steady
    return run


def raw(world, args):
    outputs, peak, steady = launch([RAW_STEP, "--steps", str(args.steps), "--warmup", str(args.warmup),
                                    "--threads", "1", "--batch-size", str(BATCH)], world)
    return sum(printed_rate(out, "raw samples_per_sec=") for out in outputs), peak, steady


RUNS = (("rm2", ringmaster, 2), ("std2", reference("standardised"), 2), ("unit2", reference("unit"), 2),
        ("rm1", ringmaster, 1), ("std1", reference("standardised"), 1), ("unit1", reference("unit"), 1),
        ("raw1", raw, 1), ("raw2", raw, 2))


def ratio_line(label, numerator, denominator, target):
    # The median of same-round ratios: the machine drifts by tens of percent between rounds, so only two
    # runs of one round are compared with each other.
    ratios = [a / b for a, b in zip(numerator, denominator)]
    value = statistics.median(ratios)
    per_round = " ".join(f"{r:.2f}" for r in ratios)
    if target is None:
        print(f"{label:44s} {value:5.2f}x  (per round {per_round})")
        return
    verdict = "meets" if value >= target else "MISSES"
    print(f"{label:44s} {value:5.2f}x  (target >= {target:.2f}x: {verdict}; per round {per_round})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--precision", choices=("fp32", "bf16", "fp16"), default="fp32")
    args = parser.parse_args()
    for binary in (TRAINER, RAW_STEP):
        if not os.access(binary, os.X_OK):
            sys.exit(f"bench_trainer: {binary} is not built: run scripts/build.sh first")
    results = {key: [] for key, _, _ in RUNS}
    peaks = {key: [] for key in results}
    steadies = {key: [] for key in results}
    started = time.monotonic()
    for round_index in range(args.rounds):
        for key, func, world in RUNS:
            value, peak, steady = func(world, args)
            results[key].append(value)
            peaks[key].append(max(peak))
            steadies[key].append(max(steady))
            print(f"round {round_index + 1} {key:5s} {value:8.1f} samples/s  RSS/rank peak {max(peak):6.1f} MiB"
                  f" steady {max(steady):6.1f} MiB", flush=True)
    med = {key: statistics.median(values) for key, values in results.items()}
    print(f"\n{args.rounds} rounds of {args.steps} steps in {time.monotonic() - started:.0f} s; "
          f"CPU: {cpu_name()}\n")
    print(f"{'run':38s} {'samples/s (median)':>18s} {'peak RSS/rank':>14s} {'steady RSS/rank':>16s}")
    for key, name in NAMES.items():
        print(f"{name:38s} {med[key]:18.1f} {max(peaks[key]):10.1f} MiB {statistics.median(steadies[key]):12.1f} MiB")
    print()
    # The faster reference is the one with the higher median, compared round by round; not the larger of two
    # noisy values in each round, which is biased upwards when both run at about the same speed.
    fast1 = max(results["std1"], results["unit1"], key=statistics.median)
    fast2 = max(results["std2"], results["unit2"], key=statistics.median)
    ratio_line("1 rank: trainer / faster reference", results["rm1"], fast1, 1.25)
    ratio_line("2 ranks: trainer / faster reference", results["rm2"], fast2, 1.5)
    ratio_line("scaling, trainer 2 ranks / 1 rank", results["rm2"], results["rm1"], 1.8)
    ratio_line("1 rank: trainer / raw compute limit", results["rm1"], results["raw1"], 0.9)
    ratio_line("2 ranks: trainer / raw limit of 2 processes", results["rm2"], results["raw2"], None)
    ratio_line("scaling limit, raw 2 processes / 1", results["raw2"], results["raw1"], None)
    ratio_line("1 rank: reference [0, 1] / standardised", results["unit1"], results["std1"], None)
    ratio_line("scaling, reference 2 ranks / 1 rank (faster)", fast2, fast1, None)
    peak_ratio = max(peaks["rm1"] + peaks["rm2"]) / statistics.median(steadies["rm1"] + steadies["rm2"])
    verdict = "meets" if peak_ratio <= 1.2 else "MISSES"
    print(f"{'trainer memory: peak RSS / steady RSS':44s} {peak_ratio:5.2f}x  (target <= 1.20x: {verdict})")


def cpu_name():
    flags = ""
    name = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name") and name == "unknown":
                name = line.split(":", 1)[1].strip()
            if line.startswith("flags") and not flags:
                flags = line
    except OSError:
        pass
    vector = "AVX-512" if " avx512f" in flags else "AVX2" if " avx2" in flags else "no AVX2"
    return f"{name}, {vector}, {os.cpu_count()} cores"


if __name__ == "__main__":
    main()
