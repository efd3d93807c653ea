"""fp16 sums and differences of large arrays, block by block, in the directed modes and
round to odd (toward zero, upward, downward, odd), with flags or without: the
exact float64 sum, numpy's float16 cast (round to nearest even), then one step to the
neighbouring pattern where the mode's result is the other neighbour of the exact sum.

The operations' general path builds an exact result record for each block, fixes the
signs of exact zeros by a masked store and rounds through the codec, whose re-bias
kernel rounds every lane below fp16's smallest normal by extra whole-block passes (or,
with flags, by the general rounding).  Sums of fp16 values below it are exact, so none
of that is needed (benchmarks/bench_native_ops.py times both).

Why the bits and flags are the general path's
---------------------------------------------
Condition (:func:`softfloat._fastpaths._native16.applies`): fp16, toward zero, upward,
downward or odd (ties away measured no faster than the general path: it takes that),
gradual underflow, no saturation, no DAZ, add or sub; per block (:func:`run` declines
the block otherwise): every exact sum ``r`` finite, i.e. the operands finite.

* ``r`` is exact: fp16 values are multiples of 2**-24 below 2**16, so a sum has at most
  40 significant bits, inside float64's 53 (softfloat._fastpaths._native16).  Its sign
  is IEEE 754's (6.3): numpy's float64 sum is exact, so only exact zeros need a rule;
  in the nearest modes, toward zero, upward and odd an exact zero sum of opposite-signed
  operands is +0 and x + x keeps x's sign, as float64's round-to-nearest sum gives them.
  Under downward the zero is -0 unless both operands are +0: there ``r`` is computed as
  ``-((-y) - x)`` (add) or ``-(y - x)`` (sub), the same exact value, whose zero is the
  negation of a round-to-nearest zero: -0 for x + (-x) (from +0), for +0 + -0 and
  -0 + -0 (from +0), and +0 for +0 + +0 (from -0) -- IEEE's downward signs.
* ``c``, numpy's float64 -> float16 cast of ``r``, is ``r`` rounded to nearest even,
  overflow to infinity included (softfloat._fastpaths._native16).  ``cv``, its value
  (the decoding table at its pattern), and ``d = cv - r`` are exact (both multiples of
  2**-24 below 2**17; d is infinite where c is).  A sum below 2**-14 is a multiple of
  2**-24, an fp16 subnormal: exact.  So where ``d != 0``, ``|r| > 2**-14``, ``c`` is no
  zero, and the two fp16 values around ``r`` (with infinity above max_finite = 65504,
  IEEE's overflow results aside) are ``c`` and its neighbour on r's side: one pattern
  further from zero (``+1`` on the magnitude) where ``|cv| < |r|``, one nearer (``-1``)
  where ``|cv| > |r|``, across binades too, fp16's patterns being sign and magnitude in
  value order; from infinity -1 gives max_finite.  Where ``d = 0`` every mode returns
  ``c``.  Per mode, with ``away`` = ``d`` has r's sign and is nonzero (c rounded away
  from zero; "d * r > 0", no underflow: both are at least 2**-24):

  - toward zero: ``-1`` where ``away``.  Overflow: |r| >= 65520 gives infinity, -1 gives
    max_finite, IEEE's result; 65504 < |r| < 65520 gives max_finite, kept;
  - upward: where ``cv < r`` (``d < 0``) the next value up: ``+1`` for positive r, ``-1``
    for negative r.  65504 < r < 65520 goes to +infinity; r <= -65520 (cv = -infinity)
    to -max_finite: IEEE's overflow results.  downward: the mirror image;
  - odd: where ``d != 0`` and c's last bit is 0, the neighbour (whose last bit is 1)
    toward r: ``-1`` where ``away``, else ``+1``.  |r| >= 65520 goes from infinity to
    max_finite (odd never overflows to infinity); 65504 < |r| < 65520 keeps max_finite.
* inexact: ``d != 0`` (the mode's result is exact iff r is an fp16 value, iff c is);
  an overflow result always differs from a finite r above 65504.
* overflow: the rounding of ``r`` with an unbounded exponent exceeds max_finite (IEEE
  754 7.4).  Above 2**15 fp16's grid steps by 32 up to 65504, then 65536, and every
  rounding is monotone, so that rounding is at least 65536 exactly where: toward zero
  and odd (65504 has an odd significand), |r| >= 65536; upward, r > 65504 or r <= -65536; downward, r < -65504 or r >= 65536.
* underflow never: a sum below 2**-14 is exact (above), and underflow needs inexactness
  with gradual underflow whichever the tininess rule; invalid and divide_by_zero cannot
  arise from finite operands.

tests/test_native_ops.py compares it with the general path (switch off), every finite
fp16 value against dozens of partners, in every mode and both tininess rules.
"""

from __future__ import annotations

import numpy as np

from .._flagmasks import FlagMasks
from ..rounding import Rounding

__all__ = ["run"]

_MAX = 65504.0
_NEXT = 65536.0

#: per mode: (positive r overflows from, negative r overflows from |r| of, strict bound
#: for positive r): the thresholds of the docstring
_OVERFLOW = {Rounding.TOWARD_ZERO: (_NEXT, _NEXT, False),
             Rounding.ODD: (_NEXT, _NEXT, False),
             Rounding.UPWARD: (_MAX, _NEXT, True),
             Rounding.DOWNWARD: (_NEXT, _MAX, None)}


def run(ufunc, x, y, attrs, want, out, ws, values):
    """Round ``ufunc(x, y)`` (np.add or np.subtract of float64 blocks of exact fp16
    operand values) into ``out`` (uint16) in ``attrs.rounding`` (toward zero, upward,
    downward or odd), or return None (declined: some sum is not finite).  Returns
    ``[flags]``: the block's FlagMasks with ``want``, else None.  ``values`` is fp16's
    decoding table (float64, index: pattern)."""
    n = out.size
    rounding = attrs.rounding
    r = ws.get("d16.r", np.float64, n)
    if rounding is Rounding.DOWNWARD:  # the zero signs of the docstring
        t = np.negative(y, out=ws.get("d16.t", np.float64, n)) if ufunc is np.add else y
        np.subtract(t, x, out=r)
        np.negative(r, out=r)
    else:
        ufunc(x, y, out=r)
    lo, hi = r.min(), r.max()  # NaN propagates: finite bounds mean finite lanes
    if not (-np.inf < lo and hi < np.inf):
        return None
    with np.errstate(over="ignore"):  # overflow to infinity is the cast's IEEE result
        np.copyto(out.view(np.float16), r, casting="unsafe")
    d = np.take(values, out, out=ws.get("d16.d", np.float64, n), mode="clip")
    with np.errstate(invalid="ignore"):  # inf - r is inf; no NaN arises from finite r
        np.subtract(d, r, out=d)
    inexact = np.not_equal(d, 0.0)  # fresh: the flags keep it
    if inexact.any():
        _step(rounding, r, d, inexact, out, ws)
    if not want:
        return [None]
    overflow = None
    if max(-lo, hi) > _MAX:
        up, down, strict = _OVERFLOW[rounding]
        overflow = (np.greater if strict else np.greater_equal)(r, up)
        neg = np.less(r, -down) if strict is None else np.less_equal(r, -down)
        np.logical_or(overflow, neg, out=overflow)
    return [FlagMasks(overflow=overflow, inexact=inexact)]


def _step(rounding, r, d, inexact, out, ws):
    """out <- the mode's result from the nearest-even patterns (the docstring's steps)."""
    n = out.size
    step = ws.get("d16.step", np.uint16, n)
    if rounding is Rounding.UPWARD or rounding is Rounding.DOWNWARD:
        # move where cv < r (upward) or cv > r (downward): +1 on the magnitude for
        # positive r, -1 for negative r (upward); the mirror for downward
        move = (np.less if rounding is Rounding.UPWARD else np.greater)(d, 0.0, out=ws.get("d16.m", np.bool_, n))
        negative = np.signbit(r, out=ws.get("d16.neg", np.bool_, n))
        if rounding is Rounding.DOWNWARD:
            np.logical_not(negative, out=negative)
        _signed_step(move, negative, out, step)
        return
    away = np.multiply(d, r, out=ws.get("d16.p", np.float64, n))
    away = np.greater(away, 0.0, out=ws.get("d16.m", np.bool_, n))
    if rounding is Rounding.TOWARD_ZERO:
        np.subtract(out, away.view(np.uint8), out=out, casting="unsafe")
        return
    # odd: where inexact and c even, -1 where away, else +1
    even = np.bitwise_and(out, np.uint16(1), out=step)
    move = np.less(even, 1, out=ws.get("d16.move", np.bool_, n))
    np.logical_and(move, inexact, out=move)
    _signed_step(move, away, out, step)


def _signed_step(move, down, out, step):
    """out += 1 where ``move`` and not ``down``, -1 where ``move`` and ``down`` (uint16,
    wrapping): ``move - 2 * (move & down)``."""
    m = move.view(np.uint8)
    np.bitwise_and(m, down.view(np.uint8), out=down.view(np.uint8))
    np.copyto(step, m, casting="unsafe")
    np.add(out, step, out=out)
    np.copyto(step, down.view(np.uint8), casting="unsafe")
    np.left_shift(step, np.uint16(1), out=step)
    np.subtract(out, step, out=out)
