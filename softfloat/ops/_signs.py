"""The signs of zeros: of a Python float, and of exact zero sums (IEEE 754-2019 6.3)."""

from __future__ import annotations

import math

import numpy as np

from ..rounding import Rounding

__all__ = ["exact_zero_sign", "sign_of", "zero_sum_is_negative"]


def sign_of(x: float) -> bool:
    """True for negative numbers and -0.0."""
    return math.copysign(1.0, x) < 0


def zero_sum_is_negative(first_negative: bool, second_negative: bool, attrs) -> bool:
    """IEEE 754-2019 6.3 for one exact zero sum: the operands' sign if they agree (both
    zeros), else +0 -- or -0 under downward."""
    if first_negative == second_negative:
        return first_negative
    return attrs.rounding is Rounding.DOWNWARD


def exact_zero_sign(hi, lo, first, second, attrs):
    """IEEE 754-2019 6.3 for sums: an exact zero sum of operands of opposite signs (or a
    cancellation) is +0, except -0 under downward; x + x keeps x's sign.  float64's own
    sum already gets the nearest-mode signs right; fix the downward ones in place."""
    if attrs.rounding is not Rounding.DOWNWARD:
        return
    zero = (hi == 0) & (lo == 0 if lo is not None else True)
    both_plus_zero = (first == 0) & (second == 0) & ~np.signbit(first) & ~np.signbit(second)
    hi[zero & ~both_plus_zero] = -0.0
