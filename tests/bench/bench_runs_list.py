#!/usr/bin/python3
"""Times `ringmaster-runs list` over 1,000 run directories: cold (no index files) and warm (every index
fresh), and after one run changed. Prints figures and asserts nothing (a benchmark, not a test).

    tests/bench/bench_runs_list.py build/app/ringmaster-runs [--runs 1000] [--steps 500]

Each run is a 2-rank trainer run: job.json, summary.json, metrics.csv with STEPS rows, eval.csv, and
scalars.csv (4 values a step), the files a real run of that length leaves.
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time


def make_run(root, index, steps):
    name = "20261130-%06d-cnn" % index
    run = os.path.join(root, name)
    os.makedirs(os.path.join(run, "logs"))
    with open(os.path.join(run, "job.json"), "w") as f:
        json.dump({"version": 1, "launch": {"device": "cpu", "nproc": 2, "gpus": []},
                   "trainer": {"model": "cnn", "epochs": 1}}, f, indent=4)
    with open(os.path.join(run, "summary.json"), "w") as f:
        json.dump({"status": "completed", "model": "cnn", "world_size": 2, "steps": steps,
                   "final_loss": 1.0 / steps, "val_accuracy": 0.9, "seconds": steps * 0.05}, f, indent=2)
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


def timed_list(program, root):
    start = time.perf_counter()
    result = subprocess.run([program, "list", "--root", root], stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
    return time.perf_counter() - start, result.stdout.count(b"\n") - 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("program")
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=500)
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="bench-runs-")
    try:
        start = time.perf_counter()
        for index in range(args.runs):
            make_run(root, index, args.steps)
        print("made %d runs of %d steps in %.1f s" % (args.runs, args.steps, time.perf_counter() - start))
        seconds, listed = timed_list(args.program, root)
        print("cold (no index, every file read): %.3f s for %d runs" % (seconds, listed))
        for attempt in range(3):
            seconds, listed = timed_list(args.program, root)
            print("warm (every index fresh), try %d: %.3f s for %d runs" % (attempt + 1, seconds, listed))
        with open(os.path.join(root, "20261130-000007-cnn", "summary.json"), "a") as f:
            f.write("\n")
        seconds, listed = timed_list(args.program, root)
        print("one run changed (its index rebuilt): %.3f s for %d runs" % (seconds, listed))
    finally:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
