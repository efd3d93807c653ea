"""bf16 arithmetic on small arrays: the exact result (or a rounding of it that decides the
same bits and flags) in float64, for the codec's float64 encoder to round once.

The operations' general path streams blocks through a hundred numpy calls whatever the
size, which on a thousand elements is the whole cost.  For bf16 in every deterministic
mode and option this computes add, sub, mul, div and sqrt in a few float64 calls; the
caller (softfloat.ops._driver) hands the float64 values to the codec's encoder
(:func:`softfloat._encode.encode_block`, its shortcuts included), which rounds any
float64 value correctly into bf16 with flags in every deterministic mode and option.

Why the bits and flags are the general path's
---------------------------------------------
* the operands are finite (anything else is declined: NaN results follow the platform's
  rules; infinities, zero divisors and negative square roots raise invalid or
  divide_by_zero), and their float64 values are exact (every bf16 value is a float32
  value, every float32 value a float64 one);
* products: two 8-bit significands make at most 16 bits, and bf16 products lie in
  [2**-266, 2**257), inside float64's normal range, so ``x * y`` is exact (zeros have
  the exclusive or of the signs in every mode, as float64 gives them);
* sums and differences (``x - y`` as ``x + (-y)``): TwoSum gives s = fl(x + y) and the
  exact error e (``s + e = x + y``; every intermediate is below 2**130 and a multiple of
  bf16's quantum 2**-133, so none overflows or underflows).  Where e != 0, s is rounded
  to odd at float64's 53 bits (s moves one ulp toward e where its last bit is even).
  Rounding to odd at 53 bits followed by rounding to p <= 51 bits is one rounding to p
  bits in every mode, for every target exponent (Boldo and Melquiond, IEEE TC 2008), and
  the flags follow as in softfloat.ops._native (the odd value is a bf16 value, below
  2**-126, beyond the overflow threshold exactly when the exact sum is).  Exact zero sums
  get IEEE 754's signs: float64's sum has the nearest modes' (+0 for a cancellation,
  x + x keeps x's sign); under downward a cancellation is -0, set here;
* quotients and square roots are rounded twice, to float64 and then to bf16.  Every
  number v of at most 10 significant bits (bf16 values, the midpoints between them, the
  overflow threshold, the tininess bound below) that the true result q is not lies at
  least 2**-20 (relatively) from q: ``|a/b - v| = |a - v b| / b`` with ``a - v b`` a
  nonzero multiple of the last bit of ``a`` or of ``v b``, and ``|a - v**2| / (sqrt(a) +
  v)`` likewise, while float64's rounding moves q by at most 2**-53 relatively (quotients
  lie in [2**-262, 2**262], square roots in [2**-67, 2**64]: float64 normals).  So the
  float64 value r lies in the same open interval between those numbers as q, and equals
  one of them exactly when q does: every deterministic rounding of r to bf16, with its
  inexact, overflow and tininess (before or after rounding) flags, is q's (Figueroa,
  "When is double rounding innocuous?", 1995, for round to nearest).

On request the values come back as float32 where float32 holds every one of them
exactly (without flags the codec's float32 -> bf16 kernel is the faster one).

tests/test_small_bf16.py compares it with the general path (switch off).
"""

from __future__ import annotations

import numpy as np

from ..formats import bf16
from ..rounding import Rounding

__all__ = ["applies", "exact_values"]

_FLOAT32_TOP = np.uint32(16)


def applies(fmt, attrs) -> bool:
    """bf16 in a deterministic mode (stochastic rounding draws from every discarded bit);
    every option is the encoder's.  DAZ is the caller's to exclude."""
    return fmt == bf16 and attrs.rounding is not Rounding.STOCHASTIC


def exact_values(ufunc, patterns, attrs, narrow=False):
    """``ufunc`` (np.add, np.subtract, np.multiply, np.divide, np.sqrt) of uint16 bf16
    pattern arrays as a float32 or float64 array of the broadcast shape whose rounding into bf16 is
    the exact result's (see the module docstring), or None (declined: a non-finite
    operand, a zero divisor, a negative square root).  ``narrow``: float32 where it holds
    every value exactly."""
    values = []
    for p in patterns:
        x = (p.astype(np.uint32) << _FLOAT32_TOP).view(np.float32)
        if not np.isfinite(x).all():
            return None
        values.append(x.astype(np.float64))
    if ufunc is np.add or ufunc is np.subtract:
        x, y = values
        r = _sum(x, -y if ufunc is np.subtract else y, attrs)
    elif ufunc is np.divide and not values[1].all():
        return None
    elif ufunc is np.sqrt and (values[0] < 0).any():
        return None
    else:
        r = np.asarray(ufunc(*values))
    if not narrow:
        return r
    with np.errstate(over="ignore"):
        r32 = r.astype(np.float32)
    return r32 if (r32 == r).all() else r  # the same values


def _sum(x, y, attrs):
    """x + y rounded to odd at 53 bits, zero signs as IEEE 754 (module docstring)."""
    s = np.asarray(x + y)
    bv = s - x
    e = (y - bv) + (x - (s - bv))  # TwoSum's exact error: s + e == x + y
    odd = e != 0
    if odd.any():
        u = s.view(np.uint64)  # s != 0 where e != 0: one ulp toward e where s's last bit is 0
        odd &= (u & np.uint64(1)) == 0
        grow = np.signbit(e) == np.signbit(s)
        u[odd & grow] += np.uint64(1)
        u[odd & ~grow] -= np.uint64(1)
    if attrs.rounding is Rounding.DOWNWARD:
        zero = s == 0
        if zero.any():
            s[zero & (np.signbit(x) | np.signbit(y))] = -0.0
    return s
