"""Parameters that get no gradient on some ranks (a forward that skips a layer depending on the rank or the
data). By default a clear error naming them; with find-unused-parameters every rank ends bit-identical and
equal to PyTorch DDP's semantics: unused counts as a zero gradient in the mean, and a parameter no rank used
in a step keeps no gradient (the optimizer skips it). The model and its branch rule are in
tests/tools/grad_sync_probe.cpp (BranchyModel); the reference below is the same model in Python."""
import pytest
import torch

from conftest import digest, run_ranks, run_single
from test_shm_allreduce import run_probe

WORLD = 3
STEPS = 4
BATCH = 5
LR = 0.1
NAMES = ["trunk.weight", "trunk.bias", "left.weight", "left.bias", "right.weight", "right.bias",
         "rare.weight", "rare.bias"]


class Branchy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = torch.nn.Linear(4, 8)
        self.left = torch.nn.Linear(8, 3)
        self.right = torch.nn.Linear(8, 3)
        self.rare = torch.nn.Linear(8, 3)

    def forward(self, x, rank, step):
        h = torch.tanh(self.trunk(x))
        y = self.left(h)
        if (rank + step) % WORLD == 0:  # exactly one rank uses `right` in each step
            y = y + self.right(h)
        if step == 0:  # every rank uses `rare` in step 0 only
            y = y + self.rare(h)
        return y


def write(path, tensor):
    path.write_bytes(tensor.detach().contiguous().numpy().tobytes())


@pytest.fixture
def data(tmp_path):
    torch.manual_seed(3)
    model = Branchy()
    inputs = torch.randn(WORLD, STEPS, BATCH, 4)
    targets = torch.randn(WORLD, STEPS, BATCH, 3)
    assert [n for n, _ in model.named_parameters()] == NAMES
    write(tmp_path / "init.bin", torch.cat([p.reshape(-1) for p in model.parameters()]))
    write(tmp_path / "inputs.bin", inputs)
    write(tmp_path / "targets.bin", targets)
    return tmp_path, model, inputs, targets


def reference(model, inputs, targets):
    """What PyTorch DDP (find_unused_parameters=True) computes: the gradient summed over ranks, a rank that
    did not use a parameter contributing zeros, divided by the world size; no gradient where no rank used it."""
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9)
    params = list(model.parameters())
    for step in range(STEPS):
        total = [torch.zeros_like(p) for p in params]
        used = [False] * len(params)
        for rank in range(WORLD):
            loss = torch.nn.functional.mse_loss(model(inputs[rank, step], rank, step), targets[rank, step])
            grads = torch.autograd.grad(loss, params, allow_unused=True)
            for i, g in enumerate(grads):
                if g is not None:
                    total[i] += g
                    used[i] = True
        for i, p in enumerate(params):
            p.grad = total[i] / WORLD if used[i] else None
        optimizer.step()
    return torch.cat([p.detach().reshape(-1) for p in params])


@pytest.mark.parametrize("transport", ["shm", "gloo"])
def test_unused_parameters_are_an_error_naming_them_by_default(data, transport):
    directory = data[0]
    codes, outputs = run_probe(WORLD, ["unused", str(directory), "0", transport, str(STEPS), str(LR)])
    # Step 0: only rank 0 uses `right`; ranks 1 and 2 name it, rank 0 then loses its peers.
    for rank in (1, 2):
        assert codes[rank] == 2, outputs
        assert f"rank {rank}: 2 parameter(s) got no gradient in this step: right.weight, right.bias" in outputs[rank], \
            outputs[rank]
        assert "--find-unused-parameters true" in outputs[rank], outputs[rank]
    assert codes[0] == 1 and "a peer rank died" in outputs[0], outputs[0]
    assert not list(directory.glob("final-rank*.bin"))


@pytest.mark.parametrize("transport", ["shm", "gloo"])
def test_find_unused_parameters_matches_ddp_on_every_rank(data, transport):
    directory, model, inputs, targets = data
    codes, outputs = run_probe(WORLD, ["unused", str(directory), "1", transport, str(STEPS), str(LR)])
    assert codes == [0] * WORLD, outputs
    expected_transport = "shared memory" if transport == "shm" else "gloo"
    assert f"transport {expected_transport}, 8 buckets" in outputs[0], outputs[0]
    finals = [torch.frombuffer(bytearray((directory / f"final-rank{r}.bin").read_bytes()), dtype=torch.float32)
              for r in range(WORLD)]
    for rank in range(1, WORLD):
        assert torch.equal(finals[0], finals[rank]), f"rank {rank} differs from rank 0"
    start = torch.cat([p.detach().reshape(-1).clone() for p in model.parameters()])
    expected = reference(model, inputs, targets)
    worst = (finals[0] - expected).abs().max().item()
    assert worst < 1e-5, f"max difference from the PyTorch reference {worst}"
    # The comparison is between trained models, and `rare` (used only in step 0, then kept by momentum in
    # a zero-gradient world but skipped in DDP's) is where the two semantics part.
    assert (expected - start).abs().max().item() > 1e-2


def test_flag_takes_a_boolean():
    code, output = run_single(["--find-unused-parameters", "maybe"])
    assert code == 2, output
    assert "--find-unused-parameters: 'maybe' is not a boolean (true or false)" in output, output
    code, output = run_single(["--help"])
    assert "--find-unused-parameters true|false" in output, output


def test_trainer_with_the_flag_trains_as_without_it(tmp_path):
    """The built-in models use every parameter: the flag adds a used-parameter all-reduce after the buckets
    (the same collective in the same place on every rank) and changes no number."""
    common = ["--model", "linear", "--data", "synthetic", "--max-steps", "10", "--batch-size", "16", "--threads", "1",
              "--local-allreduce", "gloo", "--bucket-mb", "0.000001"]
    codes, plain = run_ranks(2, common, tmp_path / "plain")
    assert codes == [0, 0], plain
    codes, flagged = run_ranks(2, common + ["--find-unused-parameters", "true"], tmp_path / "flagged")
    assert codes == [0, 0], flagged
    assert "2 gradient bucket(s)" in flagged[0], flagged[0]
    assert digest(plain[0]) is not None
    assert {digest(o) for o in plain + flagged} == {digest(plain[0])}


def test_one_rank_reports_unused_parameters_too(data):
    """The job that fails on many ranks fails the same way on one (as PyTorch DDP with one process),
    instead of training quietly until someone adds a GPU: `rare` gets no gradient from step 1 on."""
    directory = data[0]
    codes, outputs = run_probe(1, ["unused", str(directory), "0", "gloo", str(STEPS), str(LR)])
    assert codes == [2], outputs
    assert "rank 0: 2 parameter(s) got no gradient in this step: rare.weight, rare.bias" in outputs[0], outputs[0]
    codes, outputs = run_probe(1, ["unused", str(directory), "1", "gloo", str(STEPS), str(LR)])
    assert codes == [0], outputs
