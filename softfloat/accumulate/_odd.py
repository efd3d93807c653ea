"""Running sums of products that are not values of the accumulator -- fp32 x fp32 into
fp32, fp16 x fp16 into fp16, bf16 products below fp32's range -- by float64 arithmetic
rounded to odd, then once to the accumulator by numpy's cast.

Each step of the definition is s_k = RN(s_{k-1} + p_k), one rounding to nearest even of
the exact sum, where p_k is the exact product (a float64 value: the inputs' format is
narrow, softfloat.ops.kernels.is_narrow).  In float64, r = s + p is rounded and
e = (s + p) - r is exact (Knuth's TwoSum).  Where e != 0 and r's last significand bit is
even, r is moved one float64 step towards e: that is s + p rounded to odd (the
neighbour of s + p with an odd last bit), which carries the sticky information.
Rounding to odd in a format of at least p + 2 bits and then to nearest even in p bits is
the single rounding to nearest even (Boldo and Melquiond, "Emulation of FMA and
correctly-rounded sums: proved algorithms using rounding to odd", IEEE TC 2008): float64
has 53 >= 24 + 2 bits, and subnormal results round onto a grid coarser still.  numpy's
float64 -> float32/float16 casts round to nearest even, once.

Flags, as the general path (softfloat.accumulate._ieee) raises them for each fused
step: inexact where the rounded s_k is not s + p (e != 0, or the cast moved r); swamped
where s_k == s_{k-1} and p_k != 0 (a product of non-zero factors, exact in float64, is
non-zero); underflow where a step is inexact and its exact sum x = r + e is tiny,
|x| < t (:func:`tiny_below` gives t, a float64 value, by the tininess rule): as rounding
to float64 is monotone, |x| < t iff |r| < t, or |r| == t and e points towards zero.  A
non-finite sum is left to the general path (its overflow and invalid rules).  Zeros: s + p in float64 is an IEEE addition of the exact
values, so an exact zero sum has IEEE's sign; the first term is the product rounded
once (a -0 product stays -0), as the general path's first step.
"""

from __future__ import annotations

import numpy as np

from .._workspace import Workspace
from ..ops.kernels import round_to_odd, two_sum
from ..rounding import Tininess

__all__ = ["running_sums", "tiny_below"]


def running_sums(P, dtype, flags: bool, tiny_below: float):
    """The last running sums of the (K, n) float64 products ``P`` (each column an
    output's terms in order, K >= 1) in the accumulator's numpy ``dtype`` (float32 or
    float16), with, where ``flags``, the per-output inexact and underflow masks and
    swamped counts: ``(last, inexact, underflow, swamped)`` (None for the flags when not
    asked), or None where an output is not finite (the general path's rules).
    ``tiny_below``: the magnitude below which an exact sum is tiny (:func:`tiny_below`)."""
    s = P[0].astype(dtype)
    n = s.shape[0]
    a = s.astype(np.float64)  # the running sum, exactly (float64 holds the accumulator)
    inexact = underflow = swamped = None
    if flags:
        inexact = a != P[0]
        underflow = inexact & (np.abs(P[0]) < tiny_below)
        swamped = np.zeros(n, dtype=np.int64)
    ws = Workspace(n)  # (the steps' buffers, reused: each step's r, e and odd sum are used up in it)
    for p in P[1:]:
        r, e = two_sum(a, p, ws)  # r + e == a + p exactly
        step = round_to_odd(r, e, ws) if e.any() else r  # (exact sums: often, into fp16)
        s = step.astype(dtype)
        new = s.astype(np.float64)  # (comparisons in float64: numpy's float16 arithmetic is slow)
        if flags:
            lost = (e != 0) | (new != step)
            inexact |= lost
            magnitude = np.abs(r)
            if (magnitude <= tiny_below).any():  # |r + e| < tiny_below, r a float64 rounding of it
                below = (magnitude < tiny_below) | ((magnitude == tiny_below) & (e != 0)
                                                    & (np.signbit(e) != np.signbit(r)))
                underflow |= lost & below
            swamped += (new == a) & (p != 0)
        a = new
    if not np.isfinite(a).all():
        return None
    return s, inexact, underflow, swamped


def tiny_below(fmt, tininess) -> float:
    """The magnitude below which a non-zero exact result is tiny in ``fmt`` (precision p,
    smallest normal m): m before rounding; after rounding (IEEE: the result rounded to
    nearest even as though the exponent range were unbounded lies below m), below the
    midpoint m * (1 - 2**-(p + 1)) of m and the p-bit number under it, the midpoint
    itself rounding up to m (an even significand)."""
    m = float(fmt.min_normal)
    return m if tininess is Tininess.BEFORE else m * (1.0 - 2.0 ** -(fmt.precision + 1))
