"""The IEEE fp32 accumulator in sequential k order, in torch operations on the operands'
device: ``sf.matmul(..., accumulator="fp32")``'s definition

    s = c (held exactly) if given; then for k = 0, 1, ..., K-1:
        s = round_fp32(t_k) while s is undefined, else s = round_fp32(s + t_k)

with t_k = a_k * b_k exact (or, with ``product="fp32"``, round_fp32(a_k * b_k)), computed as
two float32 operations per step: the product
(``torch.mul``, one kernel over a tile of k) and the addition (``Tensor.add_``, another).
Where every product of the call is exact in float32, the first rounds nothing and the
second is the IEEE binary32 addition rounded to nearest even -- the definition's step
exactly (with rounded products the first is the definition's product rounding).  Mul and add are separate kernels, so no compiler contracts them into an FMA
(addcmul, addmm and baddbmm are not used: they may).  torch does not flush subnormals
unless ``torch.set_flush_denormal(True)`` was called, which this path assumes it was not.

When every product is exact in float32 (:func:`products_exact`): products of two
formats whose precisions add up to at most 24 bits, with each product's last bit at or
above 2**-149 and its magnitude below 2**128 (infinities and NaNs: the products
inf * x and NaN * x are the exact ones, and float32 additions then give the IEEE
results; the caller makes every NaN the canonical one).  fp16, FP8 and their pairings are exact by
their formats; bf16 products are checked per k on the data (the lowest last bit of
column k of a plus that of row k of b; the largest magnitudes likewise), a sum of O(M K
+ K N) work.

Products that are not float32 values (bf16 products below 2**-149 or beyond float32's
range, fp32 x fp32): the operands come as float64 values, each product is exact in
float64 (at most 48 significant bits, exponents within [-298, 256]), and each step is
:func:`add_exact`: round_fp32(s + t_k) in one rounding, about four times the work.

``block=b`` (promotion): each run of b terms is summed as above from no value, and the
run sums R_j are added in sequence into the total T in fp32 (T = c, or R_0; then
T = round_fp32(T + R_j)): the same float32 addition.  Runs that overflowed to opposite
infinities make a NaN, returned as the canonical (positive) NaN the reference gives
(the sign of a NaN from inf - inf is the platform's).

Swamped counts (``count=True``, ``sf.matmul``'s ``return_flags="swamped"``): per output,
the additions r = s + t (the steps s + t_k, c + t_0 included, and the promotions T + R_j;
not the first term of a chain, which is no addition) whose addend t is non-zero and
finite, s finite, and r == s -- ``softfloat.accumulate``'s definition, tested on the
same float32 values the reference compares.  A tile's running sums are kept as rows
(rows[0] = s, rows[i + 1] = rows[i] + t_i, each one ``torch.add``), so the test is a few
whole-tile passes (:func:`swamped_additions`) and one count down the tile per TILE steps.

Memory: the output and one tile of ``tile`` k's products, (tile, ..., M, N) float32 (and,
counting, one tile of running sums and the (..., M, N) int64 counts).
"""

from __future__ import annotations

import torch

from . import _accumulate_compiled
from ._accumulate_tables import NO_LAST

__all__ = ["TILE", "add_exact", "canonical_nan", "count_down", "finite_magnitude", "products", "products_exact",
           "sequential_fp32", "swamped_additions"]

#: k's whose products one multiply kernel forms
TILE = 16

_F32_LAST, _F32_BOUND = -149, 2.0 ** 128
_NAN = float("nan")  # torch's Python NaN: the positive quiet NaN on every device


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
    big_a = finite_magnitude(ta.values64[a_idx]).amax(dim=-2)
    big_b = finite_magnitude(tb.values64[b_idx]).amax(dim=-1)
    return not bool((big_a * big_b >= _F32_BOUND).any())


def finite_magnitude(x):
    """|x| where x is finite, else 0: the magnitude bounds of the torch paths leave
    infinities and NaNs out (their products and sums are IEEE arithmetic's own)."""
    return torch.where(torch.isfinite(x), x.abs(), 0.0)


def products(a, b, k0, k1):
    """(k1 - k0, ..., M, N) float32: the products of k0 .. k1-1, one multiply kernel."""
    x = a[..., :, k0:k1].movedim(-1, 0).unsqueeze(-1)  # (T, ..., M, 1)
    y = b[..., k0:k1, :].movedim(-2, 0).unsqueeze(-2)  # (T, ..., 1, N)
    return torch.mul(x, y)


def swamped_additions(s, t, r):
    """The mask of the IEEE additions r = s + t that were swamped: t non-zero and finite,
    s finite, r == s.  Tested as (r - s == 0) & (t != 0), the same mask in two passes:
    for finite r and s, r - s is 0 iff r == s (gradual underflow: the difference of two
    distinct floats is never 0); an infinite s gives r - s NaN (inf - inf) and an
    infinite t with a finite s an infinite r, r - s infinite; a NaN anywhere, NaN."""
    return ((r - s) == 0).logical_and_(t != 0)


def canonical_nan(x):
    """``x`` with its NaNs (made by inf - inf, signed as the platform makes them: x86's
    are negative) the canonical positive NaN the reference returns.  A NaN stays one
    through later additions, so one pass at the end of a sum suffices."""
    return torch.where(torch.isnan(x), _NAN, x)


def count_down(mask):
    """Per element of mask[0], how many of the fewer than 2**15 rows of the boolean
    ``mask`` are True (int16; byte lanes summed, several times a bool sum's speed --
    eagerly: inside a compiled kernel the bools, whose sum the compiler fuses, as torch
    2.11's inductor cannot lower a bool tensor's view as uint8)."""
    if torch.compiler.is_compiling():
        return mask.sum(dim=0, dtype=torch.int16)
    return mask.view(torch.uint8).sum(dim=0, dtype=torch.int16)


def _counted_tile(P, s, swamped):
    """s + P[0] + P[1] + ... (s None: from P[0], which is no addition), each addition's
    swamped test added into ``swamped``; the running sums as rows of one buffer."""
    terms = P if s is not None else P[1:]
    rows = torch.empty((terms.shape[0] + 1,) + tuple(P.shape[1:]), dtype=torch.float32, device=P.device)
    rows[0] = P[0] if s is None else s  # (a float64 product: rounded by the cast, nearest even)
    for t in range(terms.shape[0]):
        if P.dtype == torch.float64:
            rows[t + 1] = add_exact(rows[t], terms[t])
        else:
            torch.add(rows[t], terms[t], out=rows[t + 1])  # one IEEE binary32 addition each
    if terms.shape[0]:
        swamped += count_down(swamped_additions(rows[:-1], terms, rows[1:]))
    return rows[-1].clone()


def _run(a, b, k0, k1, s, swamped=None, exact=False):
    """The sequential sum of the products k0 .. k1-1 from ``s`` (None: undefined); with
    ``swamped`` (int64 counts of the output's shape) its swamped additions added in;
    ``exact``: every product is exact in float32, so compiled tiles may compute it."""
    if exact:
        got = _accumulate_compiled.sequential(a, b, k0, k1, s, swamped)
        if got is not None:
            return got
    for t0 in range(k0, k1, TILE):
        P = products(a, b, t0, min(t0 + TILE, k1))
        if swamped is not None:
            s = _counted_tile(P, s, swamped)
            continue
        wide = P.dtype == torch.float64
        for t in range(P.shape[0]):
            if s is None:
                s = P[t].to(torch.float32) if wide else P[t].clone()
            elif wide:
                s = add_exact(s, P[t])
            else:
                s.add_(P[t])
    return s


def add_exact(s, p):
    """round_fp32(s + p), one rounding to nearest even, for float32 ``s`` and float64 ``p``
    (an exact product): TwoSum in float64 (exact: no float64 sum of these overflows or
    loses its error to underflow), the sum rounded to odd at 53 bits where the error is
    not 0 (its bits moved one ulp toward the error where that is the truncation, the last
    bit set), then torch's float64 -> float32 cast.  53 >= 24 + 2: the two roundings are
    one (Boldo and Melquiond), float32's subnormals included.  An infinite or NaN s or p
    gives a NaN error, and the IEEE sum passes unchanged."""
    s = s.to(torch.float64)
    t = s + p
    bv = t - s
    e = (p - bv) + (s - (t - bv))
    u = t.view(torch.int64)
    odd = ((e.view(torch.int64) ^ u) >> 63).add_(u).bitwise_or_(1)  # -1 where e and t differ in sign
    return torch.where(e.abs() > 0, odd, u).view(torch.float64).to(torch.float32)


def sequential_fp32(a, b, c=None, block=None, count=False, exact=False):
    """The fp32 accumulator's result (..., M, N) float32 from float32 values ``a`` (..., M,
    K) and ``b`` (..., K, N) whose float32 products are the terms (exact, or rounded into
    fp32 by the call's ``product="fp32"``) -- or float64 values whose exact products
    are float64 values (each step then :func:`add_exact`) --, ``c`` None or float32
    values broadcast to the output, ``block`` None or the promotion interval; with
    ``count``, (result, swamped): the swamped additions per output, int64 (see the
    module docstring).  ``exact`` says that every product is exact in float32 (not only
    rounded into it): then compiled tiles may compute the chain
    (softfloat.torch._accumulate_compiled, where its MODE says)."""
    K = a.shape[-1]
    shape = torch.broadcast_shapes(a.shape[:-1] + (1,), b.shape[:-2] + (1, b.shape[-1]))
    start = None if c is None else torch.broadcast_to(c, shape).to(torch.float32).clone()
    swamped = torch.zeros(shape, dtype=torch.int64, device=a.device) if count else None
    if block is None:
        total = _run(a, b, 0, K, start, swamped, exact)
    else:
        total = start
        for k0 in range(0, K, block):
            run = _run(a, b, k0, min(k0 + block, K), None, swamped, exact)
            if total is None:
                total = run
            elif swamped is None:
                total.add_(run)
            else:
                new = total + run
                swamped += swamped_additions(total, run, new)
                total = new
    if total is None:
        total = torch.zeros(shape, dtype=torch.float32, device=a.device)
    elif block is not None:  # runs that overflowed to opposite infinities: the canonical NaN, as the reference's
        total = canonical_nan(total)
    return (total, swamped) if count else total

