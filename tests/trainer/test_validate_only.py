"""--validate-only, the supervisor's pre-flight: it gets WORLD_SIZE (and nothing else of the launcher
contract) and must refuse a per-rank batch larger than a rank's shard, as training would."""
from conftest import run_single

FASHION_TRAIN = 60000


def validate(batch, world=None, extra=()):
    env = {"WORLD_SIZE": str(world)} if world is not None else {}
    return run_single(["--validate-only", "--batch-size", str(batch), *extra], env=env)


def test_batch_larger_than_the_shard_of_the_world_size_is_refused():
    code, output = validate(100000, world=2)
    assert code == 2, output
    lines = output.strip().splitlines()
    assert len(lines) == 1, output
    shard = FASHION_TRAIN // 2
    for needle in ("--batch-size 100000", f"shard of {shard} samples", "world size of 2", f"use at most {shard}"):
        assert needle in lines[0], lines[0]


def test_the_world_size_decides_the_shard():
    # 40000 fits one rank's 60000 samples but not half of them.
    assert validate(40000) == (0, "ok\n")
    code, output = validate(40000, world=2)
    assert code == 2 and "world size of 2" in output, output
    assert validate(30000, world=2) == (0, "ok\n")


def test_only_world_size_is_needed():
    # No RANK, MASTER_ADDR or MASTER_PORT: a pre-flight runs before those exist.
    assert validate(64, world=4) == (0, "ok\n")


def test_drop_last_shrinks_the_shard():
    # 60001 synthetic samples over 2 ranks: padded shards of 30001, or 30000 with --drop-last.
    synthetic = ["--data", "synthetic", "--model", "linear", "--synthetic-samples", "60001"]
    assert validate(30001, world=2, extra=synthetic) == (0, "ok\n")
    code, output = validate(30001, world=2, extra=synthetic + ["--drop-last", "true"])
    assert code == 2 and "shard of 30000 samples" in output, output
