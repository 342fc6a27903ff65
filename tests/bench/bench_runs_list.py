#!/usr/bin/python3
"""Times `ringmaster-runs list` over 1,000 run directories and prints figures (a benchmark: asserts nothing).

    tests/bench/bench_runs_list.py build/app/ringmaster-runs [--baseline OTHER-ringmaster-runs]
                                   [--runs 1000] [--steps 500] [--tries 5] [--contend]

Each run is a 2-rank trainer run as a real one leaves it: job.json, metrics.csv with STEPS rows, eval.csv,
scalars.csv (4 values a step), then summary.json, written last as the trainer and supervisor do.

Figures (each the median and the range of --tries listings):
  - first listing (no index anywhere: every file read and parsed, every index written),
  - warm (indexes fresh, files in the page cache),
  - cold (indexes fresh, page cache dropped before each listing: `sync; echo 3 > /proc/sys/vm/drop_caches`;
    only as root, else skipped), with the read requests the disk served meanwhile (/proc/diskstats: every
    process's, so other work on the machine adds to them), and the cold start of the program alone,
  - cold with only the per-run indexes (the root's index removed before each listing),
  - after one run's summary.json was replaced (as the supervisor does) and after a row was appended to
    the metrics.csv of a live run (no summary.json): both are re-read.
With --contend, the cold figure again while another process walks /usr (root only).
With --baseline, every figure is also taken for OTHER (e.g. the previous build), interleaved with the
first program's tries so both see the same machine.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time


def make_run(root, index, steps, summary=True):
    name = "20261130-%06d-cnn" % index
    run = os.path.join(root, name)
    os.makedirs(os.path.join(run, "logs"))
    with open(os.path.join(run, "job.json"), "w") as f:
        json.dump({"version": 1, "launch": {"device": "cpu", "nproc": 2, "gpus": []},
                   "trainer": {"model": "cnn", "epochs": 1}}, f, indent=4)
    metrics = ["step,epoch,loss,lr,samples_per_sec,wall_time"]
    scalars = ["step,wall_time,name,value"]
    for step in range(1, steps + 1):
        loss = 1.0 / step
        metrics.append("%d,0,%.9g,0.01,7000.5,%.6f" % (step, loss, step * 0.05))
        for name, value in (("loss", loss), ("lr", 0.01), ("samples_per_sec", 7000.5), ("epoch", 0)):
            scalars.append("%d,%.3f,%s,%.17g" % (step, 1796049634 + step * 0.05, name, value))
    with open(os.path.join(run, "metrics.csv"), "w") as f:
        f.write("\n".join(metrics) + "\n")
    with open(os.path.join(run, "scalars.csv"), "w") as f:
        f.write("\n".join(scalars) + "\n")
    with open(os.path.join(run, "eval.csv"), "w") as f:
        f.write("epoch,step,val_loss,val_accuracy\n0,%d,0.5,0.9\n" % steps)
    if summary:
        write_summary(run, "completed", steps)
    return run


def write_summary(run, status, steps):
    """Replaced whole (a temporary file renamed over it), as the trainer and the supervisor write it."""
    temporary = os.path.join(run, "summary.json.tmp")
    with open(temporary, "w") as f:
        json.dump({"status": status, "model": "cnn", "world_size": 2, "steps": steps,
                   "final_loss": 1.0 / steps, "val_accuracy": 0.9, "seconds": steps * 0.05}, f, indent=2)
    os.rename(temporary, os.path.join(run, "summary.json"))


def can_drop_caches():
    return os.geteuid() == 0 and os.access("/proc/sys/vm/drop_caches", os.W_OK)


def drop_caches():
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def device_reads():
    """Read requests completed by the disk holding the runs, all processes together (/proc/diskstats)."""
    device = os.stat(tempfile.gettempdir() if not os.environ.get("BENCH_DIR") else os.environ["BENCH_DIR"]).st_dev
    major, minor = os.major(device), os.minor(device)
    with open("/proc/diskstats") as f:
        for line in f:
            fields = line.split()
            if int(fields[0]) == major and int(fields[1]) == minor:
                return int(fields[3])
    return 0


def timed_list(program, root, command=("list", "--root")):
    """Seconds, runs listed, device read requests during it, the output."""
    reads = device_reads()
    start = time.perf_counter()
    arguments = [program] + list(command) + ([root] if command and command[-1] == "--root" else [])
    result = subprocess.run(arguments, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
    seconds = time.perf_counter() - start
    return seconds, result.stdout.count(b"\n") - 1, device_reads() - reads, result.stdout


def figure(label, samples):
    seconds = [s for s, _, _ in samples]
    reads = [r for _, _, r in samples]
    listed = samples[0][1]
    print("  %-14s %.3f s median (%.3f-%.3f) over %d, %s%d disk reads (median; whole machine)"
          % (label, statistics.median(seconds), min(seconds), max(seconds), len(seconds),
             "%d runs listed, " % listed if listed >= 0 else "", statistics.median(reads)))


def measure(title, programs, root, tries, before=None, command=("list", "--root")):
    """Each program TRIES times, interleaved; BEFORE(program) runs before each try (untimed)."""
    print(title)
    samples = {p: [] for p in programs}
    for _ in range(tries):
        for label, program in programs.items():
            if before:
                before(label)
            seconds, listed, reads, _ = timed_list(program, root, command)
            samples[label].append((seconds, listed if command[0] == "list" else -1, reads))
    for label in programs:
        figure(label, samples[label])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("program")
    parser.add_argument("--baseline", help="another ringmaster-runs to time the same way, e.g. the previous build")
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--tries", type=int, default=5)
    parser.add_argument("--contend", action="store_true",
                        help="also time cold listings while another process walks /usr (a stat of every file, the page "
                             "cache dropped after each walk), as other work on the machine competes for the disk")
    args = parser.parse_args()
    programs = {"this": args.program}
    if args.baseline:
        programs["baseline"] = args.baseline
    root = tempfile.mkdtemp(prefix="bench-runs-", dir=os.environ.get("BENCH_DIR"))
    root_index = os.path.join(root, ".ringmaster-runs-index.json")

    def no_indexes(_label):
        for name in os.listdir(root):
            index = os.path.join(root, name, ".ringmaster-index.json")
            if os.path.exists(index):
                os.remove(index)
        if os.path.exists(root_index):
            os.remove(root_index)

    try:
        start = time.perf_counter()
        runs = [make_run(root, index, args.steps) for index in range(args.runs)]
        print("made %d runs of %d steps in %.1f s under %s" % (args.runs, args.steps, time.perf_counter() - start, root))
        time.sleep(3)   # older than the index's quiet time (2 s): a finished run is settled
        measure("first listing (no index: every file read)", programs, root, min(args.tries, 3), no_indexes)
        time.sleep(3)
        # Index all runs with the program (and the baseline, whose per-run indexes are the same).
        for program in programs.values():
            timed_list(program, root)
        measure("warm (indexes fresh)", programs, root, args.tries)
        if can_drop_caches():
            measure("cold start alone (`ringmaster-runs --help`, page cache dropped; the floor of a cold listing)",
                    programs, root, args.tries, lambda _l: drop_caches(), command=("--help",))
            measure("cold (indexes fresh, page cache dropped)", programs, root, args.tries, lambda _l: drop_caches())

            def per_run_only(_label):
                if os.path.exists(root_index):
                    os.remove(root_index)
                drop_caches()
            measure("cold, per-run indexes only (root index removed)", programs, root, args.tries, per_run_only)
            if args.contend:
                for program in programs.values():
                    timed_list(program, root)
                walker = subprocess.Popen(["bash", "-c", "while :; do find /usr -xdev -printf '%s\\n' > /dev/null; "
                                                         "echo 2 > /proc/sys/vm/drop_caches; done"])
                try:
                    time.sleep(2)
                    measure("cold, while another process walks /usr", programs, root, args.tries, lambda _l: drop_caches())
                finally:
                    walker.kill()
                    walker.wait()
        else:
            print("cold: skipped (needs root to drop the page cache)")
        for label, program in programs.items():
            timed_list(program, root)

        print("changes (each must show in the listing):")
        for label, program in programs.items():
            timed_list(program, root)
            write_summary(runs[7], "failed", args.steps)
            seconds, listed, _, out = timed_list(program, root)
            line = [l for l in out.decode().splitlines() if os.path.basename(runs[7]) in l][0]
            print("  %-14s summary.json replaced: %.3f s, shows %s" % (label, seconds, "failed" if " failed " in line else "NOT failed"))
            write_summary(runs[7], "completed", args.steps)

        live = make_run(root, args.runs, args.steps, summary=False)
        for label, program in programs.items():
            timed_list(program, root)
            with open(os.path.join(live, "metrics.csv"), "a") as f:
                f.write("%d,0,0.001,0.01,7000.5,99.0\n" % (args.steps + 1))
            seconds, listed, _, out = timed_list(program, root)
            line = [l for l in out.decode().splitlines() if os.path.basename(live) in l][0]
            print("  %-14s a live run's metrics.csv appended: %.3f s, shows %s steps"
                  % (label, seconds, "the new" if str(args.steps + 1) in line.split() else "OLD"))
            args.steps += 1
    finally:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
