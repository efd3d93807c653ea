"""fp32 add, sub and mul on small arrays: the exact result (or its rounding to odd at 53
bits) in float64, for the codec's float64 encoder to round once -- as
:mod:`._bfloat16` does for bf16, whose argument this is with 24-bit significands.

The general path streams blocks through a hundred numpy calls whatever the size: about
100 us for an fp32 addition of one element, where this takes a few numpy calls.

Why the bits and flags are the general path's
---------------------------------------------
* the operands are finite (anything else is declined: NaN results follow the platform's
  rules, inf - inf raises invalid), and their float64 values are exact (every float32
  value is a float64 one);
* products: two 24-bit significands make at most 48 bits, and fp32 products lie in
  [2**-298, 2**256), inside float64's normal range, so ``x * y`` is exact (zeros have the
  exclusive or of the signs in every mode, as float64 gives them);
* sums and differences: :func:`._bfloat16.sum_to_odd` -- TwoSum's exact error (every
  intermediate is below 2**130 and a multiple of fp32's quantum 2**-149, so none
  overflows or underflows), the sum rounded to odd at 53 bits where it is inexact, which
  followed by a rounding to p = 24 <= 51 bits is one rounding to 24 bits in every mode,
  for every target exponent (Boldo and Melquiond, IEEE TC 2008); the odd value is an
  fp32 value, below 2**-126 or beyond the overflow threshold (a 25-bit number) exactly
  when the exact sum is, so the flags follow too.  Exact zero sums get IEEE 754's signs
  (-0 for a cancellation under downward).
* quotients and square roots are declined: rounded twice, to float64 and then to 24
  bits, they are correctly rounded only by a margin (53 >= 2 * 24 + 2) that is not
  proved here for the directed modes and the flags, so the general path keeps them.

tests/test_small_fp32.py compares it with the general path (switch off) and MPFR.
"""

from __future__ import annotations

import numpy as np

from ..formats import fp32
from ..rounding import Rounding
from ._bfloat16 import sum_to_odd

__all__ = ["applies", "exact_values"]

_MAGNITUDE, _INFINITY = np.uint32(0x7FFFFFFF), np.uint32(0x7F800000)  # |pattern| >= 0x7F800000: inf or NaN
_TAKEN = (np.add, np.subtract, np.multiply)


def applies(fmt, ufunc, attrs) -> bool:
    """fp32 add, sub or mul in a deterministic mode (stochastic rounding draws from every
    discarded bit); every option is the encoder's.  DAZ is the caller's to exclude."""
    return (fmt is fp32 or fmt == fp32) and ufunc in _TAKEN and attrs.rounding is not Rounding.STOCHASTIC


def exact_values(ufunc, patterns, attrs):
    """``ufunc`` (np.add, np.subtract, np.multiply) of non-empty uint32 fp32 pattern arrays
    as a float64 array of the broadcast shape whose rounding into fp32 is the exact
    result's (see the module docstring), or None (declined: an infinite or NaN operand)."""
    values = []
    for p in patterns:
        if p.size == 0 or (p & _MAGNITUDE).max() >= _INFINITY:
            return None
        values.append(p.view(np.float32).astype(np.float64))
    x, y = values
    if ufunc is np.multiply:
        return np.asarray(x * y)
    return sum_to_odd(x, -y if ufunc is np.subtract else y, attrs)
