"""A small MLP's training steps under softfloat.torch.emulate with the per-step shortcuts
(the mode's pass-through lane for torch functions it does not change, the codec's
one-block lane, lookup tables filled across calls, float32 -> fp32 by its patterns, the
short matrix products with fp32's rounded products) against the same steps without them
(the mode deciding every call, every shortcut off): the same parameters bit for bit, the
same telemetry rows, the same warnings -- for the unscaled (fp32 among them), delayed and
current FP8 recipes, with and without elementwise rounding and telemetry, on data with
edge values (zeros of both signs, subnormals and overflows of the FP8 formats)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.conftest import import_torch

torch = import_torch()

import softfloat.torch as sft  # noqa: E402
from softfloat import _fastpaths  # noqa: E402
from softfloat.torch import _emulate  # noqa: E402


def _train(recipe, elementwise, steps=3, telemetry=True):
    torch.manual_seed(11)
    m = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    opt = torch.optim.SGD(m.parameters(), lr=0.5)
    x = torch.randn(16, 32)
    x[0, :8] = torch.tensor([0.0, -0.0, 1e-9, -3e-7, 2e-3, 600.0, -1e5, 60000.0])  # FP8 subnormals, overflows
    y = torch.randint(0, 10, (16,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with sft.emulate(recipe, elementwise=elementwise, telemetry=telemetry) as em:
            for _ in range(steps):
                opt.zero_grad()
                torch.nn.functional.cross_entropy(m(x), y).backward()
                opt.step()
    params = [p.detach().numpy().copy() for p in m.parameters()]
    return params, em.telemetry.rows(), [str(w.message) for w in caught]


def _same_rows(a, b):
    assert len(a) == len(b)
    for r, s in zip(a, b):
        assert r.keys() == s.keys()
        for k in r:
            same = (r[k] == s[k]) or (isinstance(r[k], float) and np.isnan(r[k]) and np.isnan(s[k]))
            assert same, (k, r[k], s[k])


@pytest.mark.parametrize("recipe", ["fp32", "bf16", "fp16", "fp8", "fp8-current"])
@pytest.mark.parametrize("elementwise", [False, True])
@pytest.mark.parametrize("telemetry", [True, False])
def test_steps_equal_the_steps_without_shortcuts(recipe, elementwise, telemetry, monkeypatch):
    """(telemetry=False: the products without flags, fp32's rounded products by the short
    matrix products; telemetry=True: with swamped counts and the operands' flags)"""
    fast = _train(recipe, elementwise, telemetry=telemetry)
    with monkeypatch.context() as m:
        m.setattr(_emulate, "_PLAIN", set())
        m.setattr(_emulate, "_PLAIN_MAX", 0)
        m.setattr(_fastpaths, "ENABLED", False)
        slow = _train(recipe, elementwise, telemetry=telemetry)
    for p, q in zip(fast[0], slow[0]):
        assert np.array_equal(p.view(np.uint32), q.view(np.uint32))
    _same_rows(fast[1], slow[1])
    assert fast[2] == slow[2]


def test_the_pass_through_lane_holds_none_of_the_modes_cases():
    _train("bf16", True, steps=1)
    plain = _emulate._PLAIN
    assert torch.Tensor.grad.__get__ in plain  # an attribute read: passed through
    cases = (set(_emulate._ops.FUNCTIONS) | {f for f in plain if _emulate._ops.may_reach_out(f)}
             | set(_emulate.ELEMENTWISE) | _emulate._COMPOSITES | _emulate._BACKWARDS
             | set(_emulate._recurrent.KINDS) | set(_emulate._recurrent.CELLS))
    assert not plain & cases


def test_a_function_out_of_reach_still_warns_once_after_plain_calls():
    with sft.emulate("bf16") as em:
        for _ in range(2):
            torch.ones(3).sum()  # plain calls first
        with pytest.warns(UserWarning, match="not emulated"):
            torch.nn.functional.embedding_bag(torch.tensor([0, 1]), torch.ones(4, 3), torch.tensor([0]),
                                              per_sample_weights=torch.ones(2), mode="sum")
    assert em is not None


def test_an_autocast_recipes_account_follows_calls_the_lane_has_seen():
    """Under an autocast recipe with elementwise=True the account of float16 tensors follows
    every call (a reshape, cat or permute of a product's result stays float16 in AMP, so
    arithmetic on it is rounded): the same bits on the second run as on the first, once
    the pass-through lane has seen those functions."""
    torch.manual_seed(3)
    lin = torch.nn.Linear(8, 8)
    x = torch.randn(4, 8)

    def run():
        with sft.emulate("fp16", elementwise=True):
            h = lin(x)
            return [t.mul(1.1).detach() for t in (h.reshape(-1), torch.cat([h, h]), h.permute(1, 0).contiguous())]

    first, second = run(), run()
    for a, b in zip(first, second):
        assert torch.equal(a.half().float(), a)  # rounded into fp16
        assert torch.equal(a, b)


def test_each_tensor_of_a_linear_step_is_checked_once(monkeypatch):
    """The operands softfloat.torch._ops checked (input, weight, bias) are not checked
    again where their views reach the product (``gemm(checked=True)``), nor the saved
    operands in the backward: one check_device per tensor, the gradient's included."""
    from softfloat.torch import _ops, _tensors
    seen = []
    real = _tensors.check_device

    def spy(name, t):
        seen.append(name)
        real(name, t)
    monkeypatch.setattr(_tensors, "check_device", spy)
    monkeypatch.setattr(_ops, "check_device", spy)
    lin = torch.nn.Linear(8, 4)
    x = torch.randn(3, 8, requires_grad=True)
    with sft.emulate("bf16"):
        lin(x).sum().backward()
    assert sorted(seen) == ["bias of linear", "grad_output", "input of linear", "weight of linear"]
    with pytest.raises(ValueError, match="holds no values"), sft.emulate("bf16"):
        torch.nn.functional.linear(torch.ones(3, 8, device="meta"), torch.ones(4, 8, device="meta"))
