"""ForeachSgd (core/trainer/foreach_sgd.h), the trainer's SGD, steps every parameter of a group in a few
multi-tensor operations. Its numbers must be PyTorch's SGD's bit for bit, with foreach=True (what PyTorch
runs on CUDA by default) and per parameter (LibTorch's torch::optim::SGD, PyTorch's CPU default), including
parameters that get no gradient in some steps; and a checkpoint of its state must resume in LibTorch's SGD.
tests/tools/optimizer_probe.cpp runs both C++ optimizers on the inputs written here."""
import os
import subprocess

import numpy as np
import pytest
import torch

PROBE = os.environ.get("RINGMASTER_OPTIMIZER_PROBE", "ringmaster-optimizer-probe")
SHAPES = [(4, 3), (3,), (5,)]
STEPS = 6


def split(flat):
    parts, offset = [], 0
    for shape in SHAPES:
        numel = int(np.prod(shape))
        parts.append(flat[offset:offset + numel].reshape(shape).clone())
        offset += numel
    return parts


def write(path, tensor):
    path.write_bytes(tensor.contiguous().numpy().astype(np.float32).tobytes())


def read(path):
    return torch.from_numpy(np.fromfile(path, dtype=np.float32))


def pytorch_sgd(initial, grads, masks, lr, momentum, dampening, nesterov, weight_decay, foreach):
    params = [p.requires_grad_() for p in split(initial)]
    sgd = torch.optim.SGD(params, lr=lr, momentum=momentum, dampening=dampening, nesterov=nesterov,
                          weight_decay=weight_decay, foreach=foreach)
    for step in range(STEPS):
        for p, g, has in zip(params, split(grads[step]), masks[step]):
            p.grad = g if has else None
        sgd.step()
    return torch.cat([p.detach().flatten() for p in params])


CASES = {
    "momentum": (0.05, 0.9, 0.0, False, 0.0),
    "momentum, weight decay": (0.05, 0.9, 0.0, False, 0.01),
    "nesterov": (0.05, 0.9, 0.0, True, 0.001),
    "dampening": (0.05, 0.8, 0.3, False, 0.0),
    "plain": (0.1, 0.0, 0.0, False, 0.0),
}


@pytest.mark.parametrize("case", CASES)
def test_bit_for_bit_pytorch_sgd_and_resumes_in_libtorch_sgd(tmp_path, case):
    lr, momentum, dampening, nesterov, weight_decay = CASES[case]
    torch.manual_seed(7)
    initial = torch.randn(20)
    grads = torch.randn(STEPS, 20) * 3
    # parameter 1 has no gradient in steps 0 and 3 (its momentum buffer starts at step 1), parameter 2 in step 4
    masks = torch.ones(STEPS, 3)
    masks[0, 1] = masks[3, 1] = masks[4, 2] = 0
    write(tmp_path / "params.bin", initial)
    write(tmp_path / "grads.bin", grads)
    write(tmp_path / "mask.bin", masks)
    out = subprocess.run([PROBE, str(tmp_path), str(STEPS), str(lr), str(momentum), str(dampening),
                          "1" if nesterov else "0", str(weight_decay)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "checkpoint resumes in SGD: identical" in out.stdout

    foreach = read(tmp_path / "final-foreach.bin")
    assert not torch.equal(foreach, initial), "the parameters moved"
    expected = pytorch_sgd(initial, grads, masks.bool().tolist(), lr, momentum, dampening, nesterov, weight_decay,
                           foreach=True)
    assert torch.equal(foreach, expected), (foreach - expected).abs().max()
    assert torch.equal(expected, pytorch_sgd(initial, grads, masks.bool().tolist(), lr, momentum, dampening,
                                             nesterov, weight_decay, foreach=False))
    assert torch.equal(foreach, read(tmp_path / "final-sgd.bin"))
