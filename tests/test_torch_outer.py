"""emulate's products of one term: ``outer`` (``ger``), ``addr`` (``addr_``) and
``kron``, forward and backward.  They ran as torch's multiplication, silently (under a
pure recipe too).  Oracles: softfloat.matmul on the quantised operands with k = 1 (a
column times a row), torch's own results on the quantised operands in float64 (every
product exact there) rounded once, and plain torch under the "fp32" recipe on operands
whose products and sums are exact."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import import_torch

torch = import_torch()

import softfloat as sf  # noqa: E402
import softfloat.torch as sft  # noqa: E402
from softfloat.recipes import GemmEngine  # noqa: E402
from tests.torch_checks import bf16_product, tensor  # noqa: E402
from tests.torch_checks import values as _np  # noqa: E402

OUTERS = {"torch.outer": torch.outer, "torch.ger": torch.ger, "Tensor.outer": torch.Tensor.outer,
          "Tensor.ger": torch.Tensor.ger}


def _bf16(t):
    """``t``'s values rounded into bf16 (float64 in, float32 out: one rounding)."""
    return np.asarray(sf.quantize(np.asarray(t, np.float64), "bf16"), np.float32)


@pytest.mark.parametrize("name", list(OUTERS))
def test_outer_forward_and_gradients_are_the_bit_level_products(name):
    a, b, g = tensor((5,), 0, 8), tensor((7,), 1, 8), tensor((5, 7), 2, 8).detach()
    with sft.emulate("bf16", accumulator="fp32") as em:
        y = OUTERS[name](a, b)
    y.backward(g)
    assert np.array_equal(_np(y), bf16_product(_np(a)[:, None], _np(b)[None, :]))      # k = 1
    assert np.array_equal(_np(a.grad), bf16_product(_np(g), _np(b)[:, None])[:, 0])   # dgrad: dy b
    assert np.array_equal(_np(b.grad), bf16_product(_np(a)[None, :], _np(g))[0])      # wgrad: a^T dy
    site = "ger#1" if name.endswith("ger") else "outer#1"  # each spelling its own name
    assert [(r.site, r.kind, r.shape) for r in em.telemetry] == [
        (site, "fprop", (5, 1, 7)), (site, "dgrad", (5, 7, 1)), (site, "wgrad", (1, 5, 7))]
    # the same by an oracle that shares no layout with the emulation: exact products, rounded once
    qa, qb = _bf16(_np(a)), _bf16(_np(b))
    assert np.array_equal(_np(y), _bf16(np.outer(qa.astype(np.float64), qb)))


def test_outer_under_a_pure_recipe_and_a_scaled_one():
    """Under "bf16-pure" (no autocast anywhere: the silent escape) and under "fp8"
    (per-tensor scales of the site, the h100 accumulator's one-term sum)."""
    a, b = tensor((6,), 3, 4), tensor((9,), 4, 4)
    with sft.emulate("bf16-pure"):
        y = torch.outer(a, b)
    assert np.array_equal(_np(y), _bf16(np.outer(_bf16(_np(a)).astype(np.float64), _bf16(_np(b)))))
    with sft.emulate("fp8", accumulator="h100") as em:
        y = torch.outer(a, b)
    ref = GemmEngine("fp8", accumulator="h100", history="site")
    assert np.array_equal(_np(y), ref.gemm(_np(a)[:, None], _np(b)[None, :], "fprop", "outer#1", out=sf.bf16))
    assert em.telemetry[0].record.a.format == sf.fp8_e4m3


@pytest.mark.parametrize("shapes", [((2, 3), (4,)), ((2, 1, 3), (3, 2, 2)), ((), ()), ((3,), ()), ((0, 2), (3,))])
def test_kron_is_one_product_per_output(shapes):
    a, b = tensor(shapes[0], 5, 8), tensor(shapes[1], 6, 8)
    with sft.emulate("bf16", accumulator="fp32") as em:
        y = torch.kron(a, b)
        method = a.kron(b)
    qa, qb = (torch.from_numpy(_bf16(_np(t))).double() for t in (a, b))
    want = _bf16(torch.kron(qa, qb).numpy())  # torch's layout, exact products, one rounding
    assert y.shape == want.shape and np.array_equal(_np(y), want) and torch.equal(y, method)
    assert {r.kind for r in em.telemetry} == {"fprop"} and len(em.telemetry) == 2


def test_under_the_fp32_recipe_exact_products_are_torchs():
    """Small integers times powers of two: every product and every gradient's sum exact,
    so the "fp32" recipe gives plain torch's bits, gradients included."""
    g = torch.Generator().manual_seed(7)

    def make(*shape):
        return (torch.randint(-8, 9, shape, generator=g).float() / 4).requires_grad_()
    a, b, c, m, n = make(4), make(6), make(4, 6), make(2, 3), make(3, 2)
    dy_outer, dy_kron = make(4, 6).detach(), make(6, 6).detach()

    def run():
        for t in (a, b, c, m, n):
            t.grad = None
        outs = [torch.outer(a, b), torch.addr(c, a, b), torch.addr(c, a, b, beta=0.5, alpha=2), torch.kron(m, n)]
        (outs[0] * dy_outer + outs[1] + outs[2]).sum().backward(retain_graph=True)
        outs[3].backward(dy_kron)
        return [o.detach() for o in outs] + [t.grad.clone() for t in (a, b, c, m, n)]
    want = run()
    with sft.emulate("fp32", accumulator="fp32") as em:
        got = run()
    assert len(em.telemetry) == 4 * 3  # each product: fprop, dgrad, wgrad (c: torch's sums)
    for x, w in zip(got, want):
        assert torch.equal(x, w)


def test_addr_adds_its_input_in_the_epilogue():
    """addr = addmm(c, a as a column, b as a row): c added to the exact product in the
    fp32 accumulator, the sum rounded once into bf16 (the engine's bias epilogue)."""
    a, b, c = tensor((5,), 8, 8), tensor((3,), 9, 8), tensor((5, 3), 10, 8)
    row = tensor((3,), 11, 8)
    with sft.emulate("bf16", accumulator="fp32") as em:
        y = torch.addr(c, a, b)
        broadcast = row.addr(a, b)
        inplace = c.detach().clone().addr_(a.detach(), b.detach())
    eng = GemmEngine("bf16", accumulator="fp32", bias_epilogue=True)
    want = eng.gemm(_np(a)[:, None], _np(b)[None, :], "fprop", "s", bias=_np(c), out="bf16")
    assert np.array_equal(_np(y), want) and np.array_equal(_np(inplace), want)
    want_row = eng.gemm(_np(a)[:, None], _np(b)[None, :], "fprop", "s", bias=np.broadcast_to(_np(row), (5, 3)),
                        out="bf16")
    assert np.array_equal(_np(broadcast), want_row)
    assert [r.site for r in em.telemetry] == ["addr#1", "addr#2", "addr#3"]


def test_addr_with_beta_zero_ignores_its_input_as_torch_does():
    a, b = tensor((2,), 12, 2), tensor((3,), 13, 2)
    c = torch.full((2, 3), float("nan"), requires_grad=True)
    with sft.emulate("bf16"):
        y = torch.addr(c, a, b, beta=0)
    y.sum().backward()
    assert not y.isnan().any() and torch.equal(c.grad, torch.zeros(2, 3))


def test_out_and_what_stays_torchs():
    a, b = tensor((3,), 14, 2).detach(), tensor((2,), 15, 2).detach()
    out = torch.empty(0)
    with sft.emulate("bf16") as em:
        got = torch.outer(a, b, out=out)
        ints = torch.outer(torch.arange(3), torch.arange(2))              # integer: exact, torch's
        mixed = torch.outer(a, b.double())                                # torch's promotion
        with pytest.raises(RuntimeError):
            torch.outer(a[None], b)                                       # torch's own error
        with pytest.raises(RuntimeError):
            torch.addr(torch.ones(3, 3), a, b)
        with pytest.raises(RuntimeError, match="size mismatch"):
            torch.ones(1, 2).addr_(a, b)                                  # addr_ does not broadcast self
    assert got is out and np.array_equal(_np(out), bf16_product(_np(a)[:, None], _np(b)[None, :]))
    assert torch.equal(ints, torch.outer(torch.arange(3), torch.arange(2)))
    assert torch.equal(mixed, torch.outer(a.double(), b.double()))
    assert len(em.telemetry) == 1


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_inside_autocast_the_dtypes_are_autocasts(dtype):
    """Inside torch.autocast the emulated products return the dtype real autocast gives
    (asked of torch: CUDA's list has addr, the CPU's none of them)."""
    a, b, c = torch.ones(2), torch.ones(3), torch.ones(2, 3)
    calls = [lambda: torch.outer(a, b), lambda: torch.addr(c, a, b), lambda: torch.kron(c, c)]
    with torch.autocast("cpu", dtype=dtype):
        want = [f().dtype for f in calls]
        with sft.emulate("bf16"):
            got = [f().dtype for f in calls]
    assert got == want
