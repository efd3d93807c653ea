"""softfloat.torch.emulate with activation checkpointing (torch.utils.checkpoint): the
backward pass's recompute runs under the emulation with the forward's scales, so the
gradients are bit for bit those of the same model without checkpointing."""

from __future__ import annotations

import pytest

from tests.conftest import import_torch

torch = import_torch()

from torch.utils.checkpoint import checkpoint  # noqa: E402

import softfloat.torch as sft  # noqa: E402


def _grads(recipe, reentrant, x_grad):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))
    x = torch.randn(4, 8, requires_grad=x_grad)
    with sft.emulate(recipe, model=model, elementwise=True) as em:
        for _ in range(3):  # FP8: the delayed scales move from step to step
            y = model(x) if reentrant is None else checkpoint(model, x, use_reentrant=reentrant)
            y.square().sum().backward()
    return [p.grad for p in model.parameters()] + [x.grad], em


@pytest.mark.parametrize("recipe", ["bf16", "fp8"])
@pytest.mark.parametrize("reentrant, x_grad", [(False, True), (False, False), (True, True)])
def test_checkpointed_gradients_are_the_plain_models(recipe, reentrant, x_grad):
    plain, _ = _grads(recipe, None, x_grad)
    got, em = _grads(recipe, reentrant, x_grad)
    assert all((a is None and b is None) or torch.equal(a, b) for a, b in zip(plain, got))
    # the recompute's products are emulated (and recorded as forward products)
    assert sum(r.kind == "fprop" for r in em.telemetry) == 2 * 2 * 3
