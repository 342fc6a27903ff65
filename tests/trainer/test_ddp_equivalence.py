"""2 ranks x batch 32 == 1 rank x batch 64 and 3 ranks x batch 20 == 1 rank x batch 60: same data per step,
gradients averaged across ranks. Three ranks matter: with two, a + b == b + a, so a rank-dependent summation
order cannot show; with three, (a + b) + c and a + (b + c) differ in the last bits."""
import pytest
import torch

from conftest import digest, read_csv, run_ranks

# Plain SGD: with momentum and a large lr, float noise (1e-8 after 5 steps) is amplified to ~3e-5 by
# step 20 (measured), which would hide a real error behind a loose bound.
COMMON = ["--model", "cnn", "--optimizer", "sgd", "--lr", "0.01", "--momentum", "0", "--max-steps", "20",
          "--threads", "1", "--seed", "7", "--eval-batch-size", "5000"]


@pytest.mark.parametrize("transport,logged", [("shm", "over shared memory"), ("gloo", "over gloo")])
def test_two_ranks_match_one_rank_with_double_batch(tmp_path, transport, logged):
    codes, outputs = run_ranks(2, COMMON + ["--batch-size", "32", "--local-allreduce", transport], tmp_path / "two")
    assert codes == [0, 0], outputs
    assert logged in outputs[0], outputs[0]
    codes, single = run_ranks(1, COMMON + ["--batch-size", "64"], tmp_path / "one")
    assert codes == [0], single

    # Both ranks end bit-identical (same all-reduced gradients, same update).
    digests = [digest(o) for o in outputs]
    assert digests[0] is not None and digests[0] == digests[1], outputs

    two = torch.load(tmp_path / "two" / "model.pt")
    one = torch.load(tmp_path / "one" / "model.pt")
    assert sorted(two) == sorted(one)
    worst = max((two[k] - one[k]).abs().max().item() for k in two)
    # Float summation order differs (two means of 32 vs one mean of 64): measured ~1.5e-8.
    assert worst < 1e-6, f"max weight difference {worst}"

    # The reported loss is the all-rank mean: equal to the single rank's loss on the same 64 samples.
    rows_two = read_csv(tmp_path / "two" / "metrics.csv")
    rows_one = read_csv(tmp_path / "one" / "metrics.csv")
    assert [r["step"] for r in rows_two] == [str(s) for s in range(1, 21)]
    for a, b in zip(rows_two, rows_one):
        assert abs(float(a["loss"]) - float(b["loss"])) < 1e-4, (a, b)
    # ... and training made progress, so the comparison is not between two untouched models.
    assert float(rows_two[-1]["loss"]) < float(rows_two[0]["loss"]) - 0.05


def test_many_buckets_equal_one_bucket(tmp_path):
    """Several buckets launched during backward give the same weights as one bucket, and ranks stay identical."""
    codes, outputs = run_ranks(2, COMMON + ["--batch-size", "32", "--bucket-mb", "0.1"], tmp_path / "buckets")
    assert codes == [0, 0], outputs
    # 0.1 MB buckets over the reversed parameters: [fc2.*, fc1.bias], [fc1.weight], [conv2.*, conv1.*].
    assert "3 gradient bucket(s)" in outputs[0], outputs[0]
    assert digest(outputs[0]) == digest(outputs[1])
    # Many small buckets give the same weights as one big bucket.
    codes, big = run_ranks(2, COMMON + ["--batch-size", "32"], tmp_path / "onebucket")
    assert codes == [0, 0]
    a = torch.load(tmp_path / "buckets" / "model.pt")
    b = torch.load(tmp_path / "onebucket" / "model.pt")
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def one_rank_batch_60(tmp_path_factory):
    out = tmp_path_factory.mktemp("one60") / "run"
    codes, outputs = run_ranks(1, COMMON + ["--batch-size", "60"], out)
    assert codes == [0], outputs
    return out


@pytest.mark.parametrize("transport,logged", [("shm", "over shared memory"), ("gloo", "over gloo")])
def test_three_ranks_match_one_rank_with_triple_batch(tmp_path, one_rank_batch_60, transport, logged):
    # 0.1 MB buckets: three buckets launched during backward on each of three ranks.
    args = COMMON + ["--batch-size", "20", "--local-allreduce", transport, "--bucket-mb", "0.1"]
    codes, outputs = run_ranks(3, args, tmp_path / "three")
    assert codes == [0, 0, 0], outputs
    assert logged in outputs[0] and "3 gradient bucket(s)" in outputs[0], outputs[0]

    # All three replicas are bit-identical: every rank adds the same values in the same order.
    digests = [digest(o) for o in outputs]
    assert digests[0] is not None and digests.count(digests[0]) == 3, digests

    three = torch.load(tmp_path / "three" / "model.pt")
    one = torch.load(one_rank_batch_60 / "model.pt")
    assert sorted(three) == sorted(one)
    worst = max((three[k] - one[k]).abs().max().item() for k in three)
    assert worst < 1e-6, f"max weight difference {worst}"

    rows_three = read_csv(tmp_path / "three" / "metrics.csv")
    rows_one = read_csv(one_rank_batch_60 / "metrics.csv")
    assert [r["step"] for r in rows_three] == [str(s) for s in range(1, 21)]
    for a, b in zip(rows_three, rows_one):
        assert abs(float(a["loss"]) - float(b["loss"])) < 1e-4, (a, b)
    assert float(rows_three[-1]["loss"]) < float(rows_three[0]["loss"]) - 0.05
