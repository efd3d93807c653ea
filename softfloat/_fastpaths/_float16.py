"""fp16 arithmetic on small arrays by numpy's float64 arithmetic and its float16 cast.

The operations' general path streams blocks through a hundred numpy calls whatever the
size, which on a thousand elements is the whole cost.  For fp16 in the default
attributes (round to nearest even, gradual underflow, no saturation) this does
add, sub, mul, div and sqrt in a dozen calls, flags included.

Why the bits and flags are the general path's
---------------------------------------------
* the operands are finite (anything else is declined: NaN results follow the platform's
  rules; infinities, zero divisors and negative square roots raise invalid or
  divide_by_zero), and their float64 values are exact (the float16 -> float64 cast);
* sums, differences and products of two fp16 values are exact in float64 (at most 40
  and 22 significant bits, exponents far inside float64's), so ``r`` is the exact
  result and numpy's float64 -> float16 cast, IEEE 754's convertFormat to nearest even
  (overflow to infinity, subnormals kept), rounds it once;
* quotients and square roots are rounded twice, to float64 and then to fp16: with
  53 >= 2 * 11 + 2 bits, the first rounding never changes the second in round to nearest
  (Figueroa, "When is double rounding innocuous?", 1995; it covers +, -, *, / and sqrt);
* inexact: ``float64(h) != r``.  For exact ``r`` that is the definition.  For a quotient
  or root, r itself may be inexact, but an fp16 quotient or root that is not an fp16
  value lies at least ``2**-24`` (relatively) from every fp16 value and from every
  13-bit number (``|a/b - v| = |a - v b| / b``, and ``a - v b`` is a non-zero multiple of
  the products' last bit), far more than float64's rounding moves it: so r is exact
  exactly when the true result is, and r equals an fp16 value (or the tininess bound
  below) only when the true result does;
* overflow: an infinite ``h`` from finite operands (the exact result rounded beyond
  max_finite); it is inexact too, as the definition above gives;
* tininess after rounding: the exact result rounded to 11 bits with an unbounded
  exponent is below ``2**-14``, i.e. ``|r| < 2**-14 * (1 - 2**-12)`` (the midpoint below
  ``2**-14``, a tie that goes to the even ``2**-14``); before rounding: ``|r| < 2**-14``.
  Underflow is tiny and inexact; square roots of fp16 values are never tiny.

tests/test_small_paths.py compares it with the general path (switch off).
"""

from __future__ import annotations

import numpy as np

from ..formats import fp16
from ..rounding import Rounding, Tininess

__all__ = ["applies", "run"]

_MIN_NORMAL = 2.0 ** -14
_TINY_AFTER = _MIN_NORMAL * (1 - 2.0 ** -12)


def applies(fmt, attrs) -> bool:
    """fp16 in round to nearest even, gradual underflow, no saturation."""
    return (fmt == fp16 and attrs.rounding is Rounding.NEAREST_EVEN and attrs.subnormals
            and not attrs.saturate)


def run(ufunc, patterns, attrs, want):
    """``ufunc`` (np.add, np.subtract, np.multiply, np.divide, np.sqrt) of uint16 pattern
    arrays, or None (declined).  Returns ``(bits, masks)``: the uint16 result (the
    broadcast shape) and, with ``want``, a dict of the overflow, underflow and inexact
    masks (the other flags cannot be raised here)."""
    values = []
    for p in patterns:
        x = p.view(np.float16)
        if not np.isfinite(x).all():
            return None
        values.append(x.astype(np.float64))
    if ufunc is np.divide and not values[1].all():
        return None
    if ufunc is np.sqrt and (values[0] < 0).any():
        return None
    r = ufunc(*values)
    with np.errstate(over="ignore"):
        h = r.astype(np.float16)
    bits = h.view(np.uint16)
    if not want:
        return bits, None
    inexact = h.astype(np.float64) != r
    overflow = np.isinf(h)
    bound = _MIN_NORMAL if attrs.tininess is Tininess.BEFORE else _TINY_AFTER
    underflow = (np.abs(r) < bound) & inexact
    return bits, {"overflow": overflow, "underflow": underflow, "inexact": inexact}
