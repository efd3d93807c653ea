"""softfloat.torch.emulate: scaled_dot_product_attention against its pencil-and-paper
definition (bit-level products, one rounding per elementwise step), forward and backward."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from tests.conftest import import_torch

torch = import_torch()

import torch.nn.functional as F  # noqa: E402

import softfloat as sf  # noqa: E402
import softfloat.torch as sft  # noqa: E402
from tests.torch_checks import bf16_product, tensor  # noqa: E402
from tests.torch_checks import values as _np  # noqa: E402


def _t(shape, seed, spread=3):
    return tensor(shape, seed, spread)


_prod = bf16_product


def _reference(q, k, v, g, *, mask=None, causal=False, scale=None):
    """The definition on (H, L, E) arrays: forward O and the gradients dQ, dK, dV."""
    heads, length, width = q.shape
    source = k.shape[1]
    sc = np.float64(np.float32(1 / math.sqrt(width) if scale is None else scale))
    out, dq, dk, dv = [], [], [], []
    for h in range(heads):
        s = _prod(q[h], k[h].T)
        t = sf.quantize(s.astype(np.float64) * sc, "bf16")              # exact product, one rounding
        if mask is not None and mask.dtype == bool:
            t = np.where(mask, t, -np.inf)
        elif mask is not None:
            t = sf.quantize(t + mask.astype(np.float64), "bf16")        # sums exact in float64 here
        if causal:
            t = np.where(np.tril(np.ones((length, source), bool)), t, -np.inf)
        u = torch.tensor(t.astype(np.float32), requires_grad=True)
        y = torch.softmax(u, -1)                                        # torch's float32 softmax
        p = sf.quantize(y.detach().numpy(), "bf16")
        out.append(_prod(p, v[h]))
        dp = _prod(g[h], v[h].T)                                        # dgrad of P V
        dv.append(_prod(p.T, g[h]))                                     # wgrad of P V
        y.backward(torch.tensor(dp))
        ds = (u.grad.numpy().astype(np.float64) * sc).astype(np.float32)  # scale's gradient, float64
        dq.append(_prod(ds, k[h]))                                      # dgrad of Q K^T
        dk.append(_prod(q[h].T, ds).T)                                  # wgrad of Q K^T, transposed
    return [np.stack(x) for x in (out, dq, dk, dv)]


def _run(q, k, v, g, **kw):
    with sft.emulate("bf16", accumulator="fp32") as em:
        o = F.scaled_dot_product_attention(q, k, v, **kw)
    o.backward(g)
    return o, em


@pytest.mark.parametrize("causal", [False, True])
def test_attention_is_the_definition_forward_and_backward(causal):
    q, k, v = _t((2, 5, 8), 1), _t((2, 5, 8), 2), _t((2, 5, 6), 3)
    g = _t((2, 5, 6), 4).detach()
    o, em = _run(q, k, v, g, is_causal=causal)
    ro, rq, rk, rv = _reference(_np(q), _np(k), _np(v), _np(g), causal=causal)
    assert np.array_equal(_np(o), ro)
    assert np.array_equal(_np(q.grad), rq) and np.array_equal(_np(k.grad), rk)
    assert np.array_equal(_np(v.grad), rv)
    sites = {(r.site, r.kind) for r in em.telemetry}
    assert sites == {(f"attention#1.{p}", kind) for p in ("qk", "pv") for kind in ("fprop", "dgrad", "wgrad")}


def test_attention_masks_and_scale():
    q, k, v = _t((2, 4, 8), 5), _t((2, 6, 8), 6), _t((2, 6, 8), 7)
    g = _t((2, 4, 8), 8).detach()
    boolean = np.random.default_rng(9).random((4, 6)) < 0.7
    boolean[:, 0] = True
    o, _ = _run(q, k, v, g, attn_mask=torch.tensor(boolean), scale=0.3)
    ro, rq, rk, rv = _reference(_np(q), _np(k), _np(v), _np(g), mask=boolean, scale=0.3)
    assert np.array_equal(_np(o), ro) and np.array_equal(_np(q.grad), rq)
    assert np.array_equal(_np(k.grad), rk) and np.array_equal(_np(v.grad), rv)
    q.grad = k.grad = v.grad = None
    bias = np.float32(np.random.default_rng(10).integers(-4, 4, (4, 6)) / 4)  # sums exact in float64
    o, _ = _run(q, k, v, g, attn_mask=torch.tensor(bias))
    ro, rq, rk, rv = _reference(_np(q), _np(k), _np(v), _np(g), mask=bias)
    assert np.array_equal(_np(o), ro) and np.array_equal(_np(q.grad), rq)
    assert np.array_equal(_np(k.grad), rk) and np.array_equal(_np(v.grad), rv)


def test_float_mask_sum_is_rounded_once():
    """A mask value on a bf16 midpoint plus a tiny score: the exact sum rounds up, where
    a float64 sum rounded again would tie to even (gmpy2 as the oracle)."""
    gmpy2 = pytest.importorskip("gmpy2")
    from softfloat.torch._attention import _sum_to_odd
    a = torch.tensor([1.0 + 2.0**-8, 1.0 + 2.0**-8, 3.0, -2.5], dtype=torch.float64)   # midpoints of bf16
    b = torch.tensor([2.0**-120, -2.0**-120, 2.0**-60, 0.0], dtype=torch.float64)
    got = sf.quantize(_sum_to_odd(a, b).numpy(), "bf16")
    with gmpy2.context(precision=8, round=gmpy2.RoundToNearest):
        want = [float(gmpy2.mpfr(gmpy2.mpq(Fraction(x) + Fraction(y)))) for x, y in zip(a.tolist(), b.tolist())]
    assert got.tolist() == want
    assert got[0] == 1.0 + 2.0**-7 and got[1] == 1.0


def test_gqa_repeats_heads():
    q, k, v = _t((1, 4, 3, 8), 11), _t((1, 2, 5, 8), 12), _t((1, 2, 5, 8), 13)
    g = _t((1, 4, 3, 8), 14).detach()
    o, _ = _run(q, k, v, g, enable_gqa=True)
    kk, vv = np.repeat(_np(k)[0], 2, axis=0), np.repeat(_np(v)[0], 2, axis=0)
    ro, rq, rk, rv = _reference(_np(q)[0], kk, vv, _np(g)[0])
    assert np.array_equal(_np(o)[0], ro) and np.array_equal(_np(q.grad)[0], rq)
    # the two query heads sharing a key head: their gradients added by torch in float32
    assert np.array_equal(_np(k.grad)[0], (rk[0::2] + rk[1::2]).astype(np.float32))
    assert np.array_equal(_np(v.grad)[0], (rv[0::2] + rv[1::2]).astype(np.float32))


def test_dropout_uses_torchs_rng():
    q, k, v = (_t((1, 2, 4, 8), s).detach() for s in (15, 16, 17))
    torch.manual_seed(0)
    with sft.emulate("fp32", accumulator="fp32"):
        o = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    torch.manual_seed(0)
    keep = torch.dropout(torch.ones(1, 2, 4, 4), 0.5, True) != 0   # the same draws
    torch.manual_seed(0)
    with sft.emulate("fp32", accumulator="fp32"):
        mask = F.scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(4, 4, dtype=torch.bool))
    assert not torch.equal(o, mask)
    s = torch.softmax((q @ k.transpose(-1, -2)) * np.float32(1 / math.sqrt(8)), -1)
    ref = (s * keep / 0.5) @ v
    assert torch.allclose(o, ref, rtol=1e-5, atol=1e-6)


def test_fp32_recipe_is_close_to_torch():
    q, k, v = (_t((2, 3, 7, 16), s).detach() for s in (18, 19, 20))
    mask = torch.randn(7, 7)
    for kw in ({"is_causal": True}, {"attn_mask": mask}, {"scale": 0.1}):
        with sft.emulate("fp32", accumulator="fp32"):
            o = F.scaled_dot_product_attention(q, k, v, **kw)
        assert torch.allclose(o, F.scaled_dot_product_attention(q, k, v, **kw), rtol=1e-4, atol=1e-5)


def test_fully_masked_row_gives_zeros_and_bad_arguments():
    q, k, v = (_t((1, 3, 4), s) for s in (21, 22, 23))
    mask = torch.ones(3, 3, dtype=torch.bool)
    mask[1] = False
    with sft.emulate("bf16"):
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        o.sum().backward()
        assert torch.equal(o[0, 1], torch.zeros(4)) and torch.isfinite(q.grad).all()
        with pytest.raises(ValueError, match="attn_mask .*is_causal"):
            F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=True)
        with pytest.raises(ValueError, match="enable_gqa"):
            F.scaled_dot_product_attention(_t((1, 3, 2, 4), 24), _t((1, 2, 2, 4), 25), _t((1, 2, 2, 4), 26),
                                           enable_gqa=True)
        with pytest.raises(TypeError, match="attn_mask .*int64"):
            F.scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(3, 3, dtype=torch.long))
