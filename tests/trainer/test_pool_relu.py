"""The cnn's fused max-pool + ReLU (core/trainer/models/pool_relu.h) against PyTorch's own
max_pool2d(x, 2).relu_(), forward and backward, through ringmaster-pool-relu-probe. Equal means bit for bit:
the same winner in every window (ties and NaNs included), the same output, the same input gradient."""
import os
import subprocess

import numpy as np
import pytest
import torch
import torch.nn.functional as F

PROBE = os.environ.get("RINGMASTER_POOL_RELU_PROBE", "ringmaster-pool-relu-probe")


def pytorch_reference(x, grad):
    x = x.clone().requires_grad_(True)
    out = F.max_pool2d(x, 2).relu_()
    out.backward(grad)
    return out.detach(), x.grad


def probe(tmp_path, x, grad):
    x.numpy().astype("<f4").tofile(tmp_path / "case.input")
    grad.numpy().astype("<f4").tofile(tmp_path / "case.grad")
    proc = subprocess.run([PROBE, *map(str, x.shape), tmp_path / "case", tmp_path / "out"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "channels_last=1" in proc.stdout, proc.stdout  # the fused path ran, not the fallback

    def read(name, shape):
        return torch.from_numpy(np.fromfile(tmp_path / f"out.{name}", dtype="<f4").reshape(shape))
    n, c, h, w = x.shape
    return (read("output", (n, c, h // 2, w // 2)), read("grad_input", (n, c, h, w)),
            read("output_no_grad", (n, c, h // 2, w // 2)))


def same_bits(a, b):
    """Equal bit patterns, except that any NaN equals any NaN (both sides keep NaN where PyTorch does)."""
    nan_a, nan_b = torch.isnan(a), torch.isnan(b)
    if not torch.equal(nan_a, nan_b):
        return False
    return torch.equal(a[~nan_a].view(torch.int32), b[~nan_b].view(torch.int32))


def cases():
    g = torch.Generator().manual_seed(3)
    yield "normal", torch.randn(4, 8, 10, 12, generator=g)
    # Small integers: most windows hold ties, many outputs are exactly zero or negative.
    yield "ties", torch.randint(-2, 3, (4, 8, 10, 12), generator=g).float()
    yield "odd sizes", torch.randn(3, 5, 7, 9, generator=g)
    yield "one channel", torch.randint(-1, 2, (2, 1, 6, 6), generator=g).float()
    special = torch.randn(4, 16, 8, 8, generator=g)
    flat = special.view(-1)
    flat[torch.randint(0, flat.numel(), (60,), generator=g)] = float("nan")
    flat[torch.randint(0, flat.numel(), (60,), generator=g)] = float("-inf")
    flat[torch.randint(0, flat.numel(), (60,), generator=g)] = float("inf")
    flat[torch.randint(0, flat.numel(), (60,), generator=g)] = -0.0
    yield "nan and inf", special
    yield "the cnn's first pool", torch.randint(-3, 4, (64, 16, 28, 28), generator=g).float() * 0.5


@pytest.mark.parametrize("name,x", list(cases()), ids=[name for name, _ in cases()])
def test_fused_pool_relu_equals_pytorch(tmp_path, name, x):
    n, c, h, w = x.shape
    g = torch.Generator().manual_seed(7)
    grad = torch.randn(n, c, h // 2, w // 2, generator=g)
    grad.view(-1)[::5] = -0.0  # a -0 gradient must come back as PyTorch's +0 (zero fill, then add)
    want_out, want_grad = pytorch_reference(x, grad)
    out, grad_input, out_no_grad = probe(tmp_path, x, grad)
    assert same_bits(out, want_out), f"{name}: output differs at {(out != want_out).nonzero()[:5].tolist()}"
    assert same_bits(grad_input, want_grad), \
        f"{name}: input gradient differs at {(grad_input != want_grad).nonzero()[:5].tolist()}"
    assert same_bits(out_no_grad, want_out), f"{name}: the forward-only path differs"
