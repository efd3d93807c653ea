"""The IEEE fp32 accumulator in sequential k order, in torch operations on the operands'
device: ``sf.matmul(..., accumulator="fp32")``'s definition

    s = c (held exactly) if given; then for k = 0, 1, ..., K-1:
        s = round_fp32(t_k) while s is undefined, else s = round_fp32(s + t_k)

with t_k = a_k * b_k exact, computed as two float32 operations per step: the product
(``torch.mul``, one kernel over a tile of k) and the addition (``Tensor.add_``, another).
Where every product of the call is exact in float32, the first rounds nothing and the
second is the IEEE binary32 addition rounded to nearest even -- the definition's step
exactly.  Mul and add are separate kernels, so no compiler contracts them into an FMA
(addcmul, addmm and baddbmm are not used: they may).  torch does not flush subnormals
unless ``torch.set_flush_denormal(True)`` was called, which this path assumes it was not.

When every product is exact in float32 (:func:`products_exact`): products of two
formats whose precisions add up to at most 24 bits, with each product's last bit at or
above 2**-149 and its magnitude below 2**128.  fp16, FP8 and their pairings are exact by
their formats; bf16 products are checked per k on the data (the lowest last bit of
column k of a plus that of row k of b; the largest magnitudes likewise), a sum of O(M K
+ K N) work.

``block=b`` (promotion): each run of b terms is summed as above from no value, and the
run sums R_j are added in sequence into the total T in fp32 (T = c, or R_0; then
T = round_fp32(T + R_j)): the same float32 addition.

Memory: the output and one tile of ``tile`` k's products, (tile, ..., M, N) float32.
"""

from __future__ import annotations

import torch

from ._accumulate_tables import NO_LAST

__all__ = ["TILE", "products_exact", "sequential_fp32"]

#: k's whose products one multiply kernel forms
TILE = 16

_F32_LAST, _F32_BOUND = -149, 2.0 ** 128


def products_exact(fa, fb, ta, tb, a_idx, b_idx) -> bool:
    """Is every product a_k * b_k of the call exact in float32?  ``ta``/``tb`` the
    operands' tables, ``a_idx`` (..., M, K) and ``b_idx`` (..., K, N) their patterns."""
    if fa.precision + fb.precision > 24:
        return False
    static_last = (fa.emin - fa.mantissa_bits) + (fb.emin - fb.mantissa_bits)
    if static_last >= _F32_LAST and fa.max_finite * fb.max_finite < _F32_BOUND:
        return True  # by the formats: fp16, FP8 and their pairings
    last_a = ta.last[a_idx].amin(dim=-2)  # (..., K): the lowest last bit of column k
    last_b = tb.last[b_idx].amin(dim=-1)
    live = (last_a < NO_LAST) & (last_b < NO_LAST)
    if bool((live & (last_a.to(torch.int64) + last_b < _F32_LAST)).any()):
        return False
    big_a = ta.values64[a_idx].abs().amax(dim=-2)
    big_b = tb.values64[b_idx].abs().amax(dim=-1)
    return not bool((big_a * big_b >= _F32_BOUND).any())


def _products(a, b, k0, k1):
    """(k1 - k0, ..., M, N) float32: the products of k0 .. k1-1, one multiply kernel."""
    x = a[..., :, k0:k1].movedim(-1, 0).unsqueeze(-1)  # (T, ..., M, 1)
    y = b[..., k0:k1, :].movedim(-2, 0).unsqueeze(-2)  # (T, ..., 1, N)
    return torch.mul(x, y)


def _run(a, b, k0, k1, s):
    """The sequential sum of the products k0 .. k1-1 from ``s`` (None: undefined)."""
    for t0 in range(k0, k1, TILE):
        P = _products(a, b, t0, min(t0 + TILE, k1))
        for t in range(P.shape[0]):
            if s is None:
                s = P[t].clone()
            else:
                s.add_(P[t])
    return s


def sequential_fp32(a, b, c=None, block=None):
    """The fp32 accumulator's result (..., M, N) float32 from float32 values ``a`` (..., M,
    K) and ``b`` (..., K, N) whose products are all exact in float32, ``c`` None or float32
    values broadcast to the output, ``block`` None or the promotion interval."""
    K = a.shape[-1]
    shape = torch.broadcast_shapes(a.shape[:-1] + (1,), b.shape[:-2] + (1, b.shape[-1]))
    start = None if c is None else torch.broadcast_to(c, shape).to(torch.float32).clone()
    if block is None:
        s = _run(a, b, 0, K, start)
        return torch.zeros(shape, dtype=torch.float32, device=a.device) if s is None else s
    total = start
    for k0 in range(0, K, block):
        run = _run(a, b, k0, min(k0 + block, K), None)
        total = run if total is None else total.add_(run)
    return torch.zeros(shape, dtype=torch.float32, device=a.device) if total is None else total

