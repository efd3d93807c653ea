"""softfloat.torch.emulate: einsum, mv, dot, inner and in-place addmm_/baddbmm_ against
the bit-level products."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import import_torch

torch = import_torch()

import softfloat.torch as sft  # noqa: E402
from tests.torch_checks import bf16_product, tensor  # noqa: E402
from tests.torch_checks import values as _np  # noqa: E402


def _t(shape, seed, spread=6):
    return tensor(shape, seed, spread)


_prod = bf16_product
from softfloat.recipes import GemmEngine  # noqa: E402


def test_einsum_contractions_are_the_products():
    a4, b4 = _t((2, 3, 4, 8), 1), _t((2, 3, 5, 8), 2)
    a3, b3, w = _t((3, 4, 8), 3), _t((3, 8, 2), 4), _t((8, 6), 5)
    with sft.emulate("bf16", accumulator="fp32") as em:
        qk = torch.einsum("bhqd,bhkd->bhqk", a4, b4)
        bmm = torch.einsum("bij,bjk->bik", [a3, b3])
        mm = torch.einsum("ij,jk->ik", a3[0], w)
        lin = torch.einsum("...d,de->...e", a4, w)
        implicit = torch.einsum("ij,jk", a3[0], w)       # implicit output "ik"
    for b in range(2):
        for h in range(3):
            assert np.array_equal(_np(qk[b, h]), _prod(_np(a4[b, h]), _np(b4[b, h]).T))
    for b in range(3):
        assert np.array_equal(_np(bmm[b]), _prod(_np(a3[b]), _np(b3[b])))
    assert torch.equal(implicit, mm)
    assert np.array_equal(_np(mm), _prod(_np(a3[0]), _np(w)))
    assert np.array_equal(_np(lin), _prod(_np(a4).reshape(-1, 8), _np(w)).reshape(2, 3, 4, 6))
    lin.sum().backward()
    assert np.array_equal(_np(w.grad), _prod(_np(a4).reshape(-1, 8).T, np.ones((24, 6), np.float32)))
    assert {r.site for r in em.telemetry} == {f"einsum#{i}" for i in range(1, 6)}


def test_einsum_outside_the_products():
    a = _t((4, 4), 6)
    with sft.emulate("bf16") as em:
        with pytest.raises(NotImplementedError, match="einsum '...ij,...jk,...kl->il'"):
            torch.einsum("...ij,...jk,...kl->il", a, a, a)
        for eq, n in (("ii->i", 1), ("ij->i", 1), ("ij,ij->ij", 2), ("ii", 1)):  # torch's own, as torch.sum, a * b
            assert torch.equal(torch.einsum(eq, *[a] * n), _unemulated(lambda: torch.einsum(eq, *[a] * n)))
        assert torch.equal(torch.einsum("ij->ji", a), a.T)                         # a permutation
        ints = torch.arange(4).reshape(2, 2)
        assert torch.equal(torch.einsum("ij,jk->ik", ints, ints), ints @ ints)      # integers: torch
    assert len(em.telemetry) == 0


def _unemulated(call):
    """``call()`` with torch's own arithmetic (the emulation's mode off the stack)."""
    with torch._C.DisableTorchFunction():
        return call()


def test_einsum_diagonals_and_lone_labels_before_the_product():
    """A diagonal is taken (exact) and a label of one operand alone summed by torch
    first; the product that is left is the emulated one."""
    a, b = _t((3, 3, 4), 30), _t((4, 5, 2), 31)
    with sft.emulate("bf16", accumulator="fp32") as em:
        got = torch.einsum("iij,jkl->ik", a, b)
    diag = _unemulated(lambda: torch.diagonal(a, dim1=0, dim2=1).T)   # (i, j)
    lone = _unemulated(lambda: b.sum(dim=2))                          # (j, k)
    assert np.array_equal(_np(got), _prod(_np(diag), _np(lone)))
    assert len(em.telemetry) == 1


def test_mv_dot_inner():
    m, v, u = _t((3, 8), 7), _t((8,), 8), _t((5, 8), 9)
    with sft.emulate("bf16", accumulator="fp32"):
        mv, mv2 = torch.mv(m, v), m.mv(v)
        dot, dot2 = torch.dot(v, v), v.dot(v)
        inner = torch.inner(m, u)
        inner_v, inner_mv = torch.inner(v, v), torch.inner(m, v)    # two vectors: a 0-d tensor
    assert torch.equal(inner_v, dot) and inner_v.shape == () and torch.equal(inner_mv, mv)
    assert np.array_equal(_np(mv), _prod(_np(m), _np(v)[:, None])[:, 0]) and torch.equal(mv, mv2)
    assert np.array_equal(_np(dot), _prod(_np(v)[None], _np(v)[:, None])[0, 0]) and torch.equal(dot, dot2)
    assert dot.shape == ()
    assert np.array_equal(_np(inner), _prod(_np(m), _np(u).T))


def test_in_place_addmm_and_baddbmm():
    a, b, c = _t((3, 8), 10).detach(), _t((8, 4), 11).detach(), _t((3, 4), 12).detach()
    a3, b3, c3 = _t((2, 3, 8), 13).detach(), _t((2, 8, 4), 14).detach(), _t((2, 3, 4), 15).detach()
    c0, c30 = c.clone(), c3.clone()
    eng = GemmEngine("bf16", accumulator="fp32", bias_epilogue=True)
    with sft.emulate("bf16", accumulator="fp32") as em:
        assert c.addmm_(a, b) is c
        assert c3.baddbmm_(a3, b3) is c3
    assert np.array_equal(_np(c), eng.gemm(_np(a), _np(b), "fprop", "s", bias=_np(c0), out="bf16"))
    for i in range(2):
        assert np.array_equal(_np(c3[i]), eng.gemm(_np(a3[i]), _np(b3[i]), "fprop", "s", bias=_np(c30[i]),
                                                   out="bf16"))
    assert [(r.op, r.batch) for r in em.telemetry] == [("addmm", 1), ("baddbmm", 2)]  # the batch: one call


def test_in_place_addmv_and_addbmm():
    """Tensor.addmv_ and Tensor.addbmm_ (torch's kernels, which ran unemulated and
    unwarned): addmv's and addbmm's definitions (an addmm with a column; ATen's loop of
    addmm_ over the batch), written into ``self``, with a gradient through the copy."""
    a3, b3 = _t((2, 3, 8), 30).detach(), _t((2, 8, 4), 31).detach()
    v, u, c = _t((8,), 32).detach(), _t((3,), 33).detach(), _t((3, 4), 34).detach()
    u0, c0 = u.clone(), c.clone()
    eng = GemmEngine("bf16", accumulator="fp32", bias_epilogue=True)
    leaf = _t((8,), 35)
    u2 = u.clone()
    with sft.emulate("bf16", accumulator="fp32") as em:
        assert u.addmv_(a3[0], v) is u
        assert c.addbmm_(a3, b3) is c
        grad, = torch.autograd.grad(torch.zeros(3).addmv_(a3[0], leaf).sum(), leaf)
    with sft.emulate("bf16", accumulator="fp32") as function_form:
        assert torch.addmv_(u2, a3[0], v) is u2  # torch.addmv_ too
    assert torch.equal(u2, u) and len(function_form.telemetry) == 1
    want = eng.gemm(_np(a3[0]), _np(v)[:, None], "fprop", "s", bias=_np(u0)[:, None], out="bf16")[:, 0]
    assert np.array_equal(_np(u), want)
    running = eng.gemm(_np(a3[0]), _np(b3[0]), "fprop", "s", bias=_np(c0), out="bf16")
    running = eng.gemm(_np(a3[1]), _np(b3[1]), "fprop", "s", bias=running, out="bf16")
    assert np.array_equal(_np(c), running)
    assert [(r.op, r.kind, r.batch) for r in em.telemetry] == [
        ("addmv", "fprop", 1), ("addbmm", "fprop", 2), ("addmv", "fprop", 1), ("addmv", "wgrad", 1)]
    assert grad.shape == (8,)


def test_einsum_of_several_operands_is_torchs_pairs():
    """Left to right as torch contracts them without opt_einsum (the running result
    first), each pair an emulated product rounded into the recipe's format."""
    a, b, c, d = _t((2, 8), 20), _t((8, 6), 21), _t((6, 5), 22), _t((5, 3), 23)
    with sft.emulate("bf16", accumulator="fp32") as em:
        three = torch.einsum("ij,jk,kl->il", a, b, c)
        four = torch.einsum("ij,jk,kl,lm", [a, b, c, d])   # implicit output "im"
        chained = ((a @ b) @ c) @ d
        lone = torch.einsum("ij,jk,kl->i", a, b, c)        # l summed within c alone, by torch, first
    assert np.array_equal(_np(three), _prod(_prod(_np(a), _np(b)), _np(c)))
    c_sums = _unemulated(lambda: c.sum(dim=1))
    assert np.array_equal(_np(lone), _prod(_prod(_np(a), _np(b)), _np(c_sums)[:, None])[:, 0])
    assert torch.equal(four, chained)
    assert sum(r.kind == "fprop" for r in em.telemetry) >= 5


def test_pairwise_steps_follow_the_path_and_keep_the_labels_still_needed():
    from softfloat.torch._einsum import pairwise
    assert pairwise("ab,bc,cd,de->ae", 4) == [(0, 1, "ab,bc->ac"), (0, 2, "cd,ac->ad"), (0, 1, "de,ad->ae")]
    assert pairwise("ij,jk,kl->il", 3, [(1, 2), (0, 1)]) == [(1, 2, "jk,kl->lj"), (0, 1, "ij,lj->il")]
    assert pairwise("bij,bjk,bkl->bil", 3) == [(0, 1, "bij,bjk->bik"), (0, 1, "bkl,bik->bil")]
    with pytest.raises(ValueError, match="names 2 operand"):
        pairwise("ij,jk->ik", 3)


@pytest.mark.parametrize("equation, a, b", [
    ("ij,jk->ik", (3, 0), (0, 4)),        # nothing contracted: zeros
    ("bij,bjk->bik", (2, 3, 0), (2, 0, 4)),
    ("ij,kj->ik", (3, 0), (4, 0)),
    ("ij,jk->ik", (3, 1), (0, 4)),        # a size 1 broadcast to 0
    ("ij,jk->ik", (0, 3), (3, 4)),
])
def test_einsum_with_an_empty_axis_is_torchs(equation, a, b):
    """An empty axis (a size-0 label, or a size 1 broadcast to 0) gives torch's result and
    gradient (zeros, or nothing); a 0 taken for a broadcast 1 made it an expand error."""
    x, y = torch.randn(*a, requires_grad=True), torch.randn(*b)
    want = torch.einsum(equation, x, y)
    want_grad, = torch.autograd.grad(want.sum(), x, allow_unused=True)
    with sft.emulate("bf16", accumulator="fp32"):
        got = torch.einsum(equation, x, y)
        grad, = torch.autograd.grad(got.sum(), x, allow_unused=True)
    assert got.shape == want.shape and torch.equal(got, want)
    assert torch.equal(grad, want_grad)
