"""PyTorch programs under softfloat.torch.emulate, round 7: the probe scripts that found
something (recurrent layers, convolutions, norms, torch.func, custom Functions, hooks,
optimizers, distributions, einsum, linalg, sparse and complex tensors ran without a
finding).  Oracles: real CPU autocast where its lists agree with CUDA's, torch's own
float16/bfloat16 CPU arithmetic (correctly rounded per operation), and products of small
integers (exact) rounded once."""

from __future__ import annotations

import pytest

from tests.conftest import import_torch

torch = import_torch()

import torch.nn.functional as F  # noqa: E402

import softfloat.torch as sft  # noqa: E402

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


def _same(a, b) -> bool:
    """Bit-equal values, NaN where NaN (dtypes aside: the emulation's are float32)."""
    a, b = a.float(), b.float()
    return torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(7.0), b.nan_to_num(7.0))


def _activations(rows: int, features: int, seed: int):
    """Small-integer operands (every product and sum of the linear layer exact in the
    activations format) and a function of them: an activation scaled, with NaNs where
    it is small."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(-3, 4, (rows, 6), generator=g).float()
    w = torch.randint(-2, 3, (features, 6), generator=g).float()

    def activation():
        h = F.linear(x, w) * 0.3
        return h.masked_fill(h.abs() < 0.5, float("nan"))
    return activation


@pytest.mark.parametrize("recipe", list(DTYPES))
def test_nanmean_var_mean_std_mean_of_activations_as_real_cpu_autocast(recipe):
    """var_mean/std_mean of an activation are float16 pairs in AMP and nanmean is ATen's
    nansum / count (nansum rounded, the count taken into float16, the quotient rounded):
    under an autocast recipe all three returned torch's float32 results unrounded.  2600
    columns make counts above 2048 in a row (inexact in fp16, bf16 from 257 on); the
    whole-tensor nanmean takes a contiguous row of 200 (CPU's bf16 nansum of a strided
    view rounds partial sums, and CPU takes a whole-tensor nanmean's zero-dimensional
    count as a float32 scalar, unrounded; the emulation rounds every count as in the
    dimensioned case)."""
    activation = _activations(8, 2600, 11)

    def reductions():
        h = activation()
        dense = h.nan_to_num()
        return [torch.nanmean(h, 1), h.nanmean(0, keepdim=True), h[0, :200].nanmean(),
                *torch.var_mean(dense, 1), *torch.std_mean(dense, 0, correction=0), *torch.var_mean(dense)]
    with torch.autocast("cpu", dtype=DTYPES[recipe]):
        want = reductions()
    assert all(t.dtype == DTYPES[recipe] for t in want)
    with sft.emulate(recipe, accumulator="fp32", elementwise=True):
        got = reductions()
    assert [_same(g, w) for g, w in zip(got, want)] == [True] * len(want)
    assert not all(_same(g, g.to(DTYPES[recipe])) for g in reductions())  # the rounding shows


def test_nanmean_of_float32_tensors_and_in_float32_stays_torchs():
    """Only an activation's nanmean is AMP's float16 composite: an input's (float32 in
    AMP), one asked for in float32 (dtype=) and a pure recipe's are torch's own."""
    activation = _activations(4, 300, 12)
    with sft.emulate("bf16", accumulator="fp32", elementwise=True):
        h = activation()
        asked = h.nanmean(1, dtype=torch.float32)
        wide = h.float().nanmean(1)
    assert torch.equal(asked, torch.nanmean(h, 1, dtype=torch.float32))
    assert _same(wide, torch.nanmean(h, 1))
    with sft.emulate("bf16-pure", accumulator="fp32", elementwise=True):
        h = activation()
        got = torch.nanmean(h, 1)
    assert _same(got, torch.nanmean(h, 1))
