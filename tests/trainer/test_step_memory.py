"""The trainer keeps each step's tensors in the heap (core/trainer/allocator_tuning.h): after set-up, a step
costs no new page faults, where glibc left as it is maps and unmaps every step's 0.1-3 MB tensors (600 to 2,300
minor faults a step for the cnn, measured). Counted with wait4()'s ru_minflt: runs of 20 and 120 steps differ
only by 100 steps. A malloc setting of the user's (GLIBC_TUNABLES) is left alone: the faults come back."""
import os
import subprocess

from conftest import TRAINER

ARGS = ["--model", "cnn", "--threads", "1", "--eval-every", "0", "--log-every", "1000", "--seed", "3"]


def minor_faults(tmp_path, steps, extra_env):
    out = tmp_path / f"run-{steps}-{len(extra_env)}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    env.update(OMP_NUM_THREADS="1", **extra_env)
    proc = subprocess.Popen([TRAINER, *ARGS, "--max-steps", str(steps), "--out", str(out)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, output
    return usage.ru_minflt


def faults_per_step(tmp_path, extra_env):
    return (minor_faults(tmp_path, 120, extra_env) - minor_faults(tmp_path, 20, extra_env)) / 100.0


def test_steps_reuse_their_memory_unless_the_user_tuned_malloc(tmp_path):
    kept = faults_per_step(tmp_path, {})
    # Any glibc.malloc tunable means "the user set malloc up": the trainer then changes nothing.
    default = faults_per_step(tmp_path, {"GLIBC_TUNABLES": "glibc.malloc.arena_max=8"})
    # glibc's own adaptive threshold varies the count (624 to 2,300 a step seen), never near zero.
    assert default > 100, f"glibc left as it is faulted only {default:.0f} times a step: the setting was not left alone"
    assert kept < 50, f"{kept:.0f} page faults a step with the step memory kept (glibc's own: {default:.0f})"
