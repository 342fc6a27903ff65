"""The trainer keeps each step's tensors in the heap (core/trainer/allocator_tuning.h): after set-up, a step
costs no new page faults, where glibc left as it is maps and unmaps every step's 0.1-3 MB tensors (600 to 2,300
minor faults a step for the cnn, measured). Counted in the running trainer (/proc/PID/stat's minflt) between the
steps metrics.csv shows at two moments, from step 20 on: start-up is outside the window (the CUDA build's
start-up alone varies by tens of thousands of faults between two runs on a busy machine). A malloc setting of
the user's (GLIBC_TUNABLES) is left alone: the faults come back. The user's setting here is glibc's own first
threshold (128 KiB) made fixed: glibc left to itself raises its threshold as blocks are freed, so how often it
faults depends on the build (torch 2.11's allocations settled at 15 a step once in CI), while a fixed 128 KiB maps
every step's larger tensors afresh, which the trainer's 32 MiB would not."""
import os
import subprocess

from conftest import TRAINER, metric_rows, wait_until

ARGS = ["--model", "cnn", "--threads", "1", "--eval-every", "0", "--log-every", "1000", "--seed", "3",
        "--max-steps", "400"]
FIRST, LAST = 20, 120  # the window, in steps done


def minor_faults_of(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[7])  # minflt: field 10 of proc(5), the 8th after the command name


def faults_per_step(tmp_path, extra_env):
    out = tmp_path / ("run-" + "-".join(sorted(extra_env)))  # one fresh run directory per setting
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    env.update(OMP_NUM_THREADS="1", **extra_env)
    proc = subprocess.Popen([TRAINER, *ARGS, "--out", str(out)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        samples = []
        for steps in (FIRST, LAST):
            wait_until(lambda: metric_rows(out) >= steps or proc.poll() is not None, 240, f"step {steps}")
            assert proc.poll() is None, f"the trainer ended (exit {proc.returncode}) before step {steps}"
            samples.append((minor_faults_of(proc.pid), metric_rows(out)))
    finally:
        proc.kill()
        proc.wait()
    (f1, s1), (f2, s2) = samples
    assert s2 > s1, samples
    return (f2 - f1) / (s2 - s1)


def test_steps_reuse_their_memory_unless_the_user_tuned_malloc(tmp_path):
    kept = faults_per_step(tmp_path, {})
    # Any glibc.malloc tunable means "the user set malloc up": the trainer then changes nothing. A fixed
    # mmap threshold turns glibc's adjustment off, so the count is the same whatever the build allocates.
    default = faults_per_step(tmp_path, {"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=131072"})
    assert default > 100, f"with the user's 128 KiB threshold only {default:.0f} faults a step: the setting was not left alone"
    assert kept < 50, f"{kept:.0f} page faults a step with the step memory kept (glibc's own: {default:.0f})"
