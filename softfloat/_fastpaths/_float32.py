"""fp32 arithmetic on small arrays: the exact result (or a rounding of it that decides the
same bits and flags) in float64, for the codec's float64 encoder to round once -- as
:mod:`._bfloat16` does for bf16, whose argument this is with 24-bit significands.

The general path streams blocks through a hundred numpy calls whatever the size: about
90 us for an fp32 addition of one element, where this takes a few numpy calls.

Why the bits and flags are the general path's
---------------------------------------------
* the operands are finite (anything else is declined: NaN results follow the platform's
  rules; infinities, zero divisors and negative square roots raise invalid or
  divide_by_zero), and their float64 values are exact (every float32 value is a float64
  one);
* products: two 24-bit significands make at most 48 bits, and fp32 products lie in
  [2**-298, 2**256), inside float64's normal range, so ``x * y`` is exact (zeros have the
  exclusive or of the signs in every mode, as float64 gives them);
* sums and differences: :func:`._bfloat16.sum_to_odd` -- TwoSum's exact error (every
  intermediate is below 2**130 and a multiple of fp32's quantum 2**-149, so none
  overflows or underflows), the sum rounded to odd at 53 bits where it is inexact, which
  followed by a rounding to p = 24 <= 51 bits is one rounding to 24 bits in every mode,
  for every target exponent (Boldo and Melquiond, IEEE TC 2008); the odd value is an fp32
  value, below 2**-126 or beyond the overflow threshold (a 25-bit number) exactly when the
  exact sum is, so the flags follow too.  Exact zero sums get IEEE 754's signs (-0 for a
  cancellation under downward);
* quotients and square roots are rounded twice, to float64 and then to fp32.  What any
  deterministic rounding of a value q into fp32 decides -- its bits, inexact, overflow,
  tininess before or after rounding, flushing -- depends only on where q lies among the
  numbers v of at most 25 significant bits (fp32 values, subnormals included, the
  midpoints between them, 2**-126 and the midpoint below it, the overflow threshold
  (2 - 2**-24) * 2**127) and whether it equals one.  Let q != v with ``|q - v| < |v| / 2``
  (else there is nothing to show), a = A 2**ea, b = B 2**eb, v = V 2**ev with integers
  A, B < 2**24, V < 2**25.  Quotient: ``q - v = (a - v b) / b`` and ``a - v b`` is a
  non-zero multiple of ``2**min(ea, ev + eb)``, so ``|q - v| / |v|`` is at least about
  ``min(1 / A, 1 / (B V)) > 2**-50`` (|v b| is within a factor 2 of |a|).  Square root:
  ``q - v = (a - v**2) / (q + v)`` and ``a - v**2`` is a non-zero multiple of
  ``2**min(ea, 2 ev)``, so ``|q - v| / |v| > 2**-52``.  float64's division and square
  root (IEEE, correctly rounded; quotients lie in [2**-277, 2**277], roots in
  [2**-75, 2**64]: float64 normals) move q by at most half an ulp, at most 2**-53 |v|
  near v, less than that distance: so the float64 result r lies on the same side of
  every such v as q, and equals v only where q does (v is a float64 value).  Every
  rounding decision on r is then q's (Figueroa, "When is double rounding innocuous?",
  1995, proves the round-to-nearest case: 53 >= 2 * 24 + 2).

In round to nearest even (the default), without flushing or saturation, the caller takes
numpy's own float32 arithmetic first (:func:`nearest_even`, its proof beside it).

tests/test_small_fp32.py compares it with the general path (switch off) and with MPFR,
on operands built next to those decision points.
"""

from __future__ import annotations

import numpy as np

from ..formats import fp32
from ..rounding import Rounding
from ._bfloat16 import all_finite, float64_result, sum_inexact

__all__ = ["applies", "exact_values", "nearest_even", "rounded_values"]



def applies(fmt, attrs) -> bool:
    """fp32 in a deterministic mode (stochastic rounding draws from every discarded bit);
    every option is the encoder's.  DAZ is the caller's to exclude."""
    return (fmt is fp32 or fmt == fp32) and attrs.rounding is not Rounding.STOCHASTIC


def exact_values(ufunc, patterns, attrs):
    """``ufunc`` (np.add, np.subtract, np.multiply, np.divide, np.sqrt) of non-empty uint32
    fp32 pattern arrays as a float64 array of the broadcast shape whose rounding into
    fp32 is the exact result's (see the module docstring), or None (declined: a
    non-finite operand, a zero divisor, a negative square root)."""
    return float64_result(ufunc, _widen, patterns, attrs)


def _widen(p):
    """The float64 values of fp32 patterns (exact: every float32 is a float64)."""
    return p.view(np.float32).astype(np.float64)


_MIN_NORMAL, _THRESHOLD = 2.0 ** -126, (2 - 2.0 ** -24) * 2.0 ** 127


def rounded_values(r):
    """``(bits, inexact)``: the float64 array ``r`` (libm's results, softfloat._array_libm)
    rounded to nearest even into fp32 and the inexact mask, or None (declined: a non-zero
    |r| below 2**-126 or at least the overflow threshold (2 - 2**-24) * 2**127; NaNs and
    infinities are outside too).

    Why it is the codec's rounding of r, bits and flags: numpy's float64 -> float32 cast
    is IEEE's conversion, rounded to nearest even (the process does not flush subnormals:
    softfloat._fpenv checks it).  For such an r the result is an fp32 normal number or a
    zero of r's sign, nothing is tiny before or after rounding and nothing overflows, so
    inexact (the result differs from r) is the only flag, and no option (tininess,
    flushing, saturation, platform) changes anything.
    """
    if not _in_range(r, _MIN_NORMAL, _THRESHOLD):
        return None
    rounded = r.astype(np.float32)
    return rounded.view(np.uint32), rounded != r


def _in_range(r, low: float, high: float) -> bool:
    """Whether every value of the non-empty float64 array ``r`` is zero or of magnitude
    in ``[low, high)`` (a NaN is not): the elements below ``high`` are all of them, and
    those below ``low`` are the zeros -- three counts, no reduction ufunc (about 1 us
    less on a few elements)."""
    if r.size == 0:
        return False
    a = np.abs(r)
    n = np.count_nonzero(a < high)
    return n == r.size and np.count_nonzero(a < low) == n - np.count_nonzero(a)


def nearest_even(ufunc, patterns, want: bool):
    """``(bits, inexact)``: fp32 ``ufunc`` (np.add, np.subtract, np.multiply, np.divide,
    np.sqrt) of uint32 pattern arrays rounded to nearest even by numpy's own float32
    arithmetic, the inexact mask only with ``want`` (else None); or None (declined: a NaN
    result; with ``want`` also an infinite operand or result, or an inexact result of
    magnitude at most 2**-126, where underflow and the tininess rule decide).

    Why it is the general path's result, bits and flags: numpy's float32 + - * / and
    sqrt are IEEE's operations rounded to nearest even with gradual underflow (the
    process does not flush subnormals: softfloat._fpenv checks it), and x - y is
    x + (-y) exactly.  Without flags every result but a NaN (whose bits follow the
    platform) is the correctly rounded one, overflow's infinity included (no saturation,
    no flushing: the caller's condition, softfloat._fastpaths._nearest_even_applies).
    With flags, the results are finite from finite operands, so nothing overflows and
    nothing is invalid or a division by zero,
    and the inexact mask is read by exact float64 arithmetic:

    * a sum r of x + y is exact iff r - x == y and r - y == x in float32: where r is the
      exact sum both differences are the other operand; where it is not, the difference
      from the larger operand is exact (Fast2Sum) and differs from the other one.  A sum
      below 2**-126 is exact (both operands are multiples of 2**-149), so none underflows;
    * a product r is exact iff r == x * y in float64 (48 bits: exact there), a quotient
      iff r * y == x and a root iff r * r == x in float64 (products of 24-bit values);
    * an inexact product or quotient of magnitude at most 2**-126 is declined (tiny, by
      one tininess rule or the other); any other inexact result is above 2**-126, so its
      exact value is too (rounding is monotone) and nothing is tiny.  Square roots of
      fp32 values are at least 2**-75: never tiny.

    So inexact is the only flag raised, and no option (tininess, platform) changes it.
    tests/test_small_fp32.py compares it with the general path and MPFR."""
    x = patterns[0].view(np.float32)
    y = None if ufunc is np.sqrt else patterns[1].view(np.float32)
    with np.errstate(all="ignore"):
        r = np.asarray(ufunc(x) if y is None else ufunc(x, y))
        if not want:
            return (r.view(np.uint32), None) if not np.count_nonzero(r != r) else None
        if ufunc is np.add or ufunc is np.subtract:
            inexact = sum_inexact(r, x, -y if ufunc is np.subtract else y)
            return (r.view(np.uint32), inexact) if all_finite(r) else None
        if y is None:
            wide = r.astype(np.float64)
            inexact = np.not_equal(wide * wide, x)
            return (r.view(np.uint32), inexact) if all_finite(r) else None
        wide = y.astype(np.float64)
        if ufunc is np.multiply:
            inexact = np.not_equal(wide * x, r)
            finite = all_finite(r)
        else:  # (r * y, not r: a finite quotient of an infinite divisor is declined too)
            check = wide * r
            inexact = np.not_equal(check, x)
            finite = all_finite(check)
        if not finite:
            return None
        if np.count_nonzero(inexact) and np.count_nonzero(inexact & (np.abs(r) <= _MIN_NORMAL)):
            return None
    return r.view(np.uint32), inexact
