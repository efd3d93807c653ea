"""torch's products of one term -- ``outer`` (``ger``), ``addr`` (``addr_``) and ``kron``,
each output one product of an element of each operand (k = 1) -- as emulated 2-d
products, and the epilogue of the ``addmm`` family they share with it.

- ``outer(a, b)`` is the (n, 1) x (1, m) product of a column and a row
  (:func:`softfloat.torch._products.gemm`): the operands quantised by the recipe, each
  product rounded into the output format by the accumulator's model of a one-term sum,
  as ``softfloat.matmul`` rounds it; the gradients are products too (dgrad
  ``dy @ b^T``, wgrad ``a^T @ dy``: the sums over the other operand that torch's
  ``grad * b`` summed gives);
- ``addr(c, a, b, beta=, alpha=)`` is ``addmm(c, a[:, None], b[None, :])``: with
  ``beta == alpha == 1`` ``c`` added in the accumulator and the sum rounded once, as
  ATen's addr kernel adds in its opmath and rounds once (:func:`scaled`);
- ``kron(a, b)`` is the outer product of the flattened operands (their shapes padded
  with leading ones to one rank), its axes interleaved into torch's blocks.
"""

from __future__ import annotations

import torch

from ._products import batched, gemm

__all__ = ["Ignored", "addr", "addr_shapes", "in_place", "kron", "outer", "scaled"]


def outer(run, a, b):
    """torch.outer (ger) of 1-d ``a`` (n) and ``b`` (m): one (n, 1) x (1, m) product."""
    return gemm(run, a[:, None], b[None, :])


def addr(run, bound, round_again):
    """torch.addr: ``beta * input + alpha * outer(vec1, vec2)`` with addmm's epilogue."""
    vec1, vec2 = bound["vec1"], bound["vec2"]
    return scaled(run, {**bound, "mat1": vec1[:, None], "mat2": vec2[None, :]}, "mat1", "mat2", round_again)


def addr_shapes(b, exact: bool = False) -> bool:
    """addr's operands: two vectors and an input that broadcasts to their outer product's
    shape (addr_: has it); else torch's own error."""
    vec1, vec2, c = b.get("vec1"), b.get("vec2"), b.get("input")
    if not all(isinstance(t, torch.Tensor) for t in (vec1, vec2, c)) or vec1.dim() != 1 or vec2.dim() != 1:
        return False
    shape = (vec1.shape[0], vec2.shape[0])
    try:
        return torch.broadcast_shapes(c.shape, shape) == shape and (not exact or tuple(c.shape) == shape)
    except RuntimeError:
        return False


def kron(run, a, b):
    """torch.kron: every product a[i] * b[j] of the operands (padded with leading unit
    axes to one rank d) at index i * b.shape + j, axis by axis."""
    d = max(a.dim(), b.dim())
    a = a.reshape((1,) * (d - a.dim()) + tuple(a.shape))
    b = b.reshape((1,) * (d - b.dim()) + tuple(b.shape))
    products = gemm(run, a.reshape(-1, 1), b.reshape(1, -1)).reshape(tuple(a.shape) + tuple(b.shape))
    order = [axis for pair in zip(range(d), range(d, 2 * d)) for axis in pair]  # a0, b0, a1, b1, ...
    return products.permute(order).reshape(tuple(a.shape[i] * b.shape[i] for i in range(d)))


def scaled(run, b, first: str, second: str, round_again):
    """addmm/baddbmm (addmv, addr): beta * input + alpha * (first @ second).  With
    ``beta == alpha == 1`` ``input`` is added in the accumulator (the epilogue); else the
    product is rounded, scaled and added in the caller's dtype and the sum rounded again;
    ``beta == 0`` ignores ``input`` (as torch does)."""
    beta, alpha = b.get("beta", 1), b.get("alpha", 1)
    x, y, c = b[first], b[second], b["input"]
    m, n = x.shape[-2], y.shape[-1]
    shape = (*x.shape[:-2], m, n)
    if beta == 1 and alpha == 1:
        c = c.expand(shape)
        return gemm(run, x, y, c) if x.dim() == 2 else batched(run, x, y, c)
    product = gemm(run, x, y) if x.dim() == 2 else batched(run, x, y, None)
    if beta == 0:
        result = product if alpha == 1 else round_again(alpha * product)
        return Ignored.apply(result, c) if c.requires_grad else result
    return round_again(beta * c + alpha * product)


class Ignored(torch.autograd.Function):
    """``result`` unchanged, with ``ignored`` in the graph with a zero gradient: torch's
    addmm/baddbmm with beta = 0 ignore ``input``'s values (even NaNs) and give it a
    gradient of zeros."""

    @staticmethod
    def forward(ctx, result, ignored):  # noqa: D102 - torch's protocol
        ctx.shape, ctx.dtype = ignored.shape, ignored.dtype
        return result.view_as(result)

    @staticmethod
    def backward(ctx, grad):  # noqa: D102
        return grad, grad.new_zeros(ctx.shape, dtype=ctx.dtype)


def in_place(b, result):
    """``self`` (``input``) overwritten with ``result``, recorded by autograd (copy_)."""
    return b["input"].copy_(result.expand(b["input"].shape))
