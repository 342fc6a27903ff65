"""Which GPU a rank computes on (core/trainer/cuda_device.h), from the environment each launcher gives it and
the number of devices CUDA shows the process, through the trainer's own code (ringmaster-dist-env-probe
device N): no GPU needed. LOCAL_RANK is the device only when every local rank sees every GPU."""
import os
import subprocess

import pytest

PROBE = os.environ.get("RINGMASTER_DIST_ENV_PROBE", "ringmaster-dist-env-probe")
EXIT_USAGE = 2
CONTRACT = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


def device(visible, **env):
    clean = {k: v for k, v in os.environ.items() if k not in CONTRACT and not k.startswith("SLURM_")}
    clean.update({k: str(v) for k, v in env.items()})
    proc = subprocess.run([PROBE, "device", str(visible)], env=clean, capture_output=True, text=True, timeout=60)
    return proc.returncode, proc.stdout.strip(), proc.stderr.strip()


def torchrun(local_rank, local_world, world=None, rank=None):
    return {"RANK": rank if rank is not None else local_rank, "LOCAL_RANK": local_rank,
            "WORLD_SIZE": world or local_world, "LOCAL_WORLD_SIZE": local_world,
            "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": 29500}


@pytest.mark.parametrize("local_rank", [0, 1, 2, 3])
def test_every_rank_sees_every_gpu_takes_its_local_rank(local_rank):
    # The launcher's and torchrun's way: one CUDA_VISIBLE_DEVICES (say 4,5,6,7) for all four ranks.
    assert device(4, **torchrun(local_rank, 4)) == (0, str(local_rank), "")


def test_more_gpus_than_ranks_uses_the_first_ones():
    assert device(8, **torchrun(1, 2)) == (0, "1", "")


@pytest.mark.parametrize("local_rank", [0, 1, 3])
def test_a_rank_given_only_its_own_gpu_takes_it(local_rank):
    # CUDA_VISIBLE_DEVICES of one entry per rank: LOCAL_RANK 3 must not ask for a device 3 it cannot see.
    assert device(1, **torchrun(local_rank, 4)) == (0, "0", "")


def test_srun_gpus_per_task_one_on_a_second_node():
    # srun --gpus-per-task 1 on 2 nodes x 4 tasks: task 6 is SLURM_LOCALID 2 of 4 and sees one GPU.
    env = {"SLURM_PROCID": 6, "SLURM_LOCALID": 2, "SLURM_NTASKS": 8, "SLURM_STEP_TASKS_PER_NODE": "4(x2)",
           "SLURM_NODEID": 1, "SLURM_STEP_NODELIST": "gpu[01-02]", "SLURM_JOB_ID": 4242}
    assert device(1, **env) == (0, "0", "")


def test_fewer_gpus_than_local_ranks_is_refused_with_the_fix():
    code, out, err = device(2, **torchrun(3, 4))
    assert code == EXIT_USAGE and out == "", (code, out, err)
    assert "LOCAL_RANK 3 of 4 sees 2 GPUs" in err and "srun --gpus-per-task 1" in err, err


def test_no_visible_gpu_is_refused_with_the_fix():
    code, out, err = device(0, **torchrun(0, 1))
    assert code == EXIT_USAGE and out == "", (code, out, err)
    assert "no CUDA device is visible" in err and "--device cpu" in err, err
