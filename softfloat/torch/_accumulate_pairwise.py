"""The pairwise order of the IEEE fp32, fp16 and bf16 accumulators in torch operations on
the operands' device: ``sf.matmul(..., order="pairwise")``'s definition (the package
docstring of ``softfloat.accumulate``; ``softfloat.accumulate._orders._pairwise``):

* the leaves are the terms rounded into the accumulator A (float32 products, exact as
  the caller checks, or rounded into fp32 by the call's ``product``: fp32 leaves are the products, fp16/bf16 leaves round
  them in nearest even by torch's float16 cast or bf16's integer rounding);
* level by level, nodes 2i and 2i + 1 are added and the sum rounded into A (fp32: one
  float32 addition; fp16/bf16: ``softfloat.torch._accumulate_narrow``'s step, TwoSum
  and rounding to odd, then one rounding into A), an odd last node carried up unchanged;
* the root P joins c last: round_A(c + P), c held exactly;
* with ``block``, each run of ``block`` terms is such a tree from no c, and the run sums
  are promoted in order into the output as the sequential order's are.

The leaves are taken in aligned chunks of 2**h (h fixed by a memory budget), each reduced
to its root, the roots merged as a binary counter and the incomplete right part right to
left: the same tree, as ``_orders._pairwise`` argues.

Swamped counts: a pair addition when its result equals one operand (finite) and the
other is non-zero and finite; c + P when the result equals c and P is non-zero and
finite -- ``softfloat.accumulate``'s definitions.

Memory: one chunk of leaves (2**h, ..., M, N) float32 and the counter's roots (at most
log2 K of the output's shape).
"""

from __future__ import annotations

import torch

from ..formats import fp32
from ._accumulate_ieee import canonical_nan, count_down, products, swamped_additions
from ._accumulate_narrow import add_rounded, all_finite, promote_runs, round_into, step_bound

__all__ = ["pairwise"]

#: leaves times outputs one chunk holds
_BUDGET = 1 << 22


class _Tree:
    """The pair additions of one accumulator, their swamped counts added up."""

    def __init__(self, acc, shape, device, count, nans=True):
        self.acc, self.nans = acc, nans  # nans: may the sums meet a NaN (add_rounded)
        self.swamped = torch.zeros(shape, dtype=torch.int64, device=device) if count else None

    def add(self, left, right):
        """round_A(left + right), rows of pairs; their swamped additions counted."""
        new = torch.add(left, right) if self.acc == fp32 else add_rounded(self.acc, left, right, self.nans)
        if self.swamped is not None:
            hit = swamped_additions(left, right, new).logical_or_(swamped_additions(right, left, new))
            self.swamped += count_down(hit.reshape((-1,) + tuple(self.swamped.shape)))
        return new

    def run(self, a, b, k0, k1):
        """The pairwise sum of the terms k0 .. k1-1 (k1 > k0)."""
        n = max(1, self.swamped.numel() if self.swamped is not None else a.shape[-2] * b.shape[-1])
        h = min(max(0, (_BUDGET // n).bit_length() - 1), max(k1 - k0 - 1, 0).bit_length())
        chunk = 1 << h
        stack = []  # (level, first leaf, root) of complete subtrees, left to right
        for s in range(k0, k1, chunk):
            e = min(s + chunk, k1)
            nodes = products(a, b, s, e)
            if self.acc != fp32:
                nodes = round_into(self.acc, nodes)
            elif nodes.dtype != torch.float32:  # exact float64 products: the leaves round them
                nodes = nodes.to(torch.float32)
            level = 0
            while nodes.shape[0] > 1:
                m, half = nodes.shape[0], nodes.shape[0] // 2
                summed = self.add(nodes[0:2 * half:2], nodes[1:2 * half:2])
                nodes = torch.cat([summed, nodes[2 * half:]]) if m % 2 else summed
                level += 1
            root, start = nodes[0], s
            if e - s == chunk:
                while stack and stack[-1][0] == level:
                    lvl, start, left = stack.pop()
                    root, level = self.add(left[None], root[None])[0], lvl + 1
            stack.append((level, start, root))
        while len(stack) > 1:
            _, _, right = stack.pop()
            lvl, start, left = stack.pop()
            stack.append((lvl + 1, start, self.add(left[None], right[None])[0]))
        return stack[0][2]


def pairwise(acc, a, b, c=None, block=None, out=None, count=False):
    """The ``acc`` (fp32, fp16 or bf16) accumulator's pairwise sums (..., M, N) float32.

    Parameters
    ----------
    acc : Format
        fp32, fp16 or bf16.
    a, b : torch.Tensor of float32
        Values (..., M, K) and (..., K, N) whose float32 products are the terms (exact, or
        rounded into fp32 by definition), infinities and NaNs included (float32
        additions, or the 16-bit accumulators' steps, give the IEEE results).
    c : torch.Tensor of float32, optional
        Start values, held exactly, broadcast to the output.
    block : int, optional
        The promotion interval: each run's tree from no c, its sum promoted into ``out``.
    out : Format, optional
        With ``block``: the format the runs are promoted into (fp32, fp16 or bf16).
    count : bool
        Also count the swamped additions.

    Returns
    -------
    float32 values of ``acc`` (with ``block``: of ``out``), and with ``count`` the int64
    swamped counts; or None where a bf16 step's float32 TwoSum could overflow (the
    caller's reference answers).

    Examples
    --------
    >>> import torch
    >>> from softfloat.formats import fp16
    >>> a = torch.tensor([[2048.0, 1.0, 1.0, 1.0]]); b = torch.ones(4, 1)
    >>> pairwise(fp16, a, b).tolist()   # (2048 + 1) + (1 + 1): 2048 + 2
    [[2050.0]]
    """
    K = a.shape[-1]
    shape = torch.broadcast_shapes(a.shape[:-1] + (1,), b.shape[:-2] + (1, b.shape[-1]))
    if acc != fp32 and not step_bound(acc, a, b, c, K):
        return None
    tree = _Tree(acc, shape, a.device, count, acc != fp32 and not all_finite(a, b, c))
    if block is not None:
        runs = (tree.run(a, b, k0, min(k0 + block, K)) for k0 in range(0, K, block))
        got = promote_runs(runs, c, out, count)
        if got is None:
            return None
        total, promoted = got if count else (got, None)
        return (total, tree.swamped + promoted) if count else total
    total = torch.broadcast_to(tree.run(a, b, 0, K), shape)
    if c is not None:
        start = torch.broadcast_to(c, shape)
        new = torch.add(start, total) if acc == fp32 else add_rounded(acc, start, total)
        if count:
            tree.swamped += swamped_additions(start, total, new)
        total = new
    total = canonical_nan(total)  # opposite infinities met in the tree
    return (total, tree.swamped) if count else total
