"""softfloat.torch.emulate's backward products take the forward's quantised operands
(GemmEngine.gemm_kept) only where quantising again gives the same bits: the
oracle is the same emulation with every product quantising its operands afresh (the
engine's gemm in place of gemm_kept, as before the reuse), weights, gradients and
telemetry compared exactly."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import import_torch

torch = import_torch()

import torch.nn.functional as F  # noqa: E402

import softfloat.torch as sft  # noqa: E402
from softfloat.recipes import GemmEngine  # noqa: E402


@pytest.fixture
def afresh(monkeypatch):
    """A switch: ``afresh(True)`` makes every product quantise its operands again."""
    original = GemmEngine.gemm_kept

    def without_reuse(self, operands, *args, **kwargs):
        return self.gemm(*args, **kwargs)

    def switch(on: bool):
        monkeypatch.setattr(GemmEngine, "gemm_kept", without_reuse if on else original)
    return switch


def _bits(tensors):
    return [t.detach().numpy().view(np.uint32).copy() for t in tensors]


def _same(a, b):
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


def _mlp_steps(recipe, telemetry):
    """Four SGD steps of a 2-layer MLP under ``recipe`` (the input needs a gradient too,
    so that every product of a layer runs); weights, input gradients and telemetry."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16))
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    gen = torch.Generator().manual_seed(1)
    em = sft.emulate(recipe, telemetry=telemetry, model=model)
    grads = []
    for i in range(4):
        x = (torch.randn(16, 12, generator=gen) * 10.0 ** (i - 2)).requires_grad_()
        with em:
            opt.zero_grad()
            F.cross_entropy(model(x), torch.arange(16) % 16).backward()
            opt.step()
        grads.append(x.grad)
    return _bits(model.parameters()) + _bits(grads), repr(list(em.telemetry))


@pytest.mark.parametrize("recipe", ["bf16", "fp16", "fp8", "fp8-current", "mxfp8"])
@pytest.mark.parametrize("telemetry", [False, True])
def test_training_steps_are_those_of_fresh_quantisations(afresh, recipe, telemetry):
    got = _mlp_steps(recipe, telemetry)
    afresh(True)
    want = _mlp_steps(recipe, telemetry)
    assert _same(got[0], want[0]) and got[1] == want[1]


def _two_calls_one_backward(square):
    """One Linear called twice in one graph (the same call site): under delayed scaling
    the second forward starts a new iteration with new scales, so the first call's
    backward products take the new scales, not its forward's quantisation."""
    n = 8 if square else 6
    torch.manual_seed(2)
    lin = torch.nn.Linear(8, n, bias=False)
    x1 = (torch.randn(8, 8) * 100).requires_grad_()
    x2 = (torch.randn(8, 8) / 100).requires_grad_()
    with sft.emulate("fp8", telemetry=True, model=lin) as em:
        (lin(x1).sum() + (lin(x2) * 3).sum()).backward()
    scales = {(r.kind, r.record.a.scale) for r in em.telemetry}
    return _bits([lin.weight.grad, x1.grad, x2.grad]), repr(list(em.telemetry)), scales


@pytest.mark.parametrize("square", [False, True])
def test_a_changed_delayed_scale_quantises_again(afresh, square):
    got = _two_calls_one_backward(square)
    assert len({s for k, s in got[2] if k == "fprop"}) == 2  # the two iterations' scales differ
    afresh(True)
    want = _two_calls_one_backward(square)
    assert _same(got[0], want[0]) and got[1] == want[1]


def _retained(recipe):
    """backward twice through one graph (retain_graph=True) with different gradients:
    the second pass must not take the first pass's quantised gradient."""
    torch.manual_seed(3)
    x, w = torch.randn(8, 8).requires_grad_(), torch.randn(8, 8).requires_grad_()
    with sft.emulate(recipe, telemetry=True) as em:
        y = x @ w
        y.backward(torch.ones(8, 8), retain_graph=True)
        first = _bits([x.grad, w.grad])
        x.grad = w.grad = None
        y.backward(torch.linspace(-3, 3, 64).reshape(8, 8))
    return first + _bits([x.grad, w.grad]), repr(list(em.telemetry))


@pytest.mark.parametrize("recipe", ["bf16", "fp8", "fp8-current"])
def test_a_second_backward_quantises_its_own_gradient(afresh, recipe):
    got = _retained(recipe)
    afresh(True)
    want = _retained(recipe)
    assert _same(got[0], want[0]) and got[1] == want[1]


@pytest.mark.parametrize("recipe, method", [("bf16", "encode"), ("fp8", "scaled_encode")])
def test_each_tensor_is_quantised_once_a_step(monkeypatch, recipe, method):
    """A 2-layer MLP whose input needs a gradient runs 6 products a step, 12 operands:
    the input, both weights, the hidden activations and both gradients, each quantised
    once (the output rounding, a quantize, once per product)."""
    from softfloat.recipes.kernels import Kernels
    calls = []
    original = getattr(Kernels, method)

    def counted(self, x, fmt, **kwargs):
        calls.append(np.shape(x))
        return original(self, x, fmt, **kwargs)

    rounded = []
    quantize = Kernels.quantize

    def counted_quantize(self, x, fmt):
        rounded.append(np.shape(x))
        return quantize(self, x, fmt)

    _mlp_steps(recipe, False)  # (first: no product runs before its delayed state exists)
    monkeypatch.setattr(Kernels, method, counted)
    monkeypatch.setattr(Kernels, "quantize", counted_quantize)
    _mlp_steps(recipe, False)
    assert len(rounded) == 6 * 4  # each product's output
    assert len(calls) == 6 * 4
