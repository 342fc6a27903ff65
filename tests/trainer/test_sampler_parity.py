"""The trainer's DistributedSampler matches torch.utils.data.DistributedSampler index for index."""
import os
import subprocess

import pytest
import torch
from torch.utils.data import DistributedSampler

DUMP = os.environ["RINGMASTER_SAMPLER_DUMP"]

CASES = [  # (N, world, seed, epoch, drop_last)
    (100, 2, 0, 0, False),
    (101, 2, 42, 3, False),
    (101, 2, 42, 3, True),
    (10, 3, 7, 1, False),
    (5, 4, 1, 0, False),      # padding longer than the data: indices repeat more than once
    (60000, 8, 123, 9, False),
    (1000, 7, 5, 2, True),
]


def ours(n, world, rank, seed, epoch, drop_last, shuffle=True):
    out = subprocess.run([DUMP, str(n), str(world), str(rank), str(seed), str(epoch), str(int(drop_last)),
                          str(int(shuffle))], check=True, capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


def theirs(n, world, rank, seed, epoch, drop_last, shuffle=True):
    sampler = DistributedSampler(range(n), num_replicas=world, rank=rank, shuffle=shuffle, seed=seed,
                                 drop_last=drop_last)
    sampler.set_epoch(epoch)
    return list(sampler)


@pytest.mark.parametrize("n,world,seed,epoch,drop_last", CASES)
def test_shards_equal_python(n, world, seed, epoch, drop_last):
    shards = [ours(n, world, r, seed, epoch, drop_last) for r in range(world)]
    for rank, shard in enumerate(shards):
        assert shard == theirs(n, world, rank, seed, epoch, drop_last), f"rank {rank}"
    assert len({len(s) for s in shards}) == 1, "every rank must get the same number of samples"
    flat = [i for s in shards for i in s]
    if drop_last:
        assert len(set(flat)) == len(flat), "drop_last shards must be disjoint"
    else:
        assert set(flat) == set(range(n)), "padded shards must cover the data"
        if n % world == 0:
            assert len(set(flat)) == len(flat) == n, "shards of divisible data must be disjoint"


def test_epoch_reshuffles_and_seed_matters():
    assert ours(1000, 2, 0, 1, 0, False) != ours(1000, 2, 0, 1, 1, False)
    assert ours(1000, 2, 0, 1, 0, False) != ours(1000, 2, 0, 2, 0, False)


def test_no_shuffle_is_strided():
    assert ours(10, 3, 1, 9, 4, False, shuffle=False) == theirs(10, 3, 1, 9, 4, False, shuffle=False) == [1, 4, 7, 0]
