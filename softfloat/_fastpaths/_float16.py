"""fp16 arithmetic on small arrays by numpy's float64 arithmetic and its float16 cast.

The operations' general path streams blocks through a hundred numpy calls whatever the
size, which on a thousand elements is the whole cost.  For fp16 in the default
attributes (round to nearest even, gradual underflow, no saturation) this does
add, sub, mul, div and sqrt in a dozen calls, flags included.

Why the bits and flags are the general path's
---------------------------------------------
* the operands are finite (anything else is declined: NaN results follow the platform's
  rules; infinities, zero divisors and negative square roots raise invalid or
  divide_by_zero -- except a finite dividend over an infinite divisor, an exact zero of
  the signs' exclusive or, which float64 gives as it is), and their float64 values are
  exact (the float16 -> float64 cast);
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

The same cast rounds a short float64 block for the codec (:func:`cast`): the float64
value is the exact input, so the bullets above (overflow, tininess, inexact by the
widened result) apply to it as they stand, for any finite float64; infinities and NaNs
are left to the general path.

tests/test_small_paths.py compares both with the general path (switch off).
"""

from __future__ import annotations

import numpy as np

from ..formats import fp16
from ..rounding import Rounding, Tininess
from ._bfloat16 import sum_of_squares

__all__ = ["SHORT_CAST", "applies", "cast", "run"]

_MIN_NORMAL = 2.0 ** -14
_TINY_AFTER = _MIN_NORMAL * (1 - 2.0 ** -12)


def applies(fmt, attrs) -> bool:
    """fp16 in round to nearest even, gradual underflow, no saturation."""
    return ((fmt is fp16 or fmt == fp16) and attrs.rounding is Rounding.NEAREST_EVEN and attrs.subnormals
            and not attrs.saturate)


def run(ufunc, patterns, attrs, want):
    """``ufunc`` (np.add, np.subtract, np.multiply, np.divide, np.sqrt) of non-empty uint16
    pattern arrays, or None (declined).  Returns ``(bits, masks)``: the uint16 result
    (the broadcast shape) and, with ``want``, a dict of the overflow, underflow and
    inexact masks, None for one raised nowhere (the other flags cannot be raised here; a
    sum or difference below ``2**-14`` is a multiple of ``2**-24``, an fp16 subnormal,
    so exact: it never underflows).

    One pass decides everything: with ``d = float64(h) - r``, ``s = sum(d * d)`` is NaN
    where some operand or exact result is not finite (an infinity or NaN operand, a zero
    divisor, a negative radicand: declined -- the one exception, a finite dividend over
    an infinite divisor, is the exact zero of the signs' exclusive or, no flag raised,
    as float64 gives it), infinite where some result overflowed, and 0 exactly where
    every result is exact: each non-zero ``|d|`` is at least ``2**-65`` (a multiple of
    2**-24 for sums, of 2**-48 for products; for quotients and roots the distance above),
    so its square is a normal float64, and the sum of at most 2**14 squares of at most
    ``2**80`` stays finite."""
    with np.errstate(all="ignore"):  # (a zero divisor, 0 * inf, an overflowing cast: declined or flagged below)
        r = ufunc(*[p.view(np.float16).astype(np.float64) for p in patterns])
        h = r.astype(np.float16)
        d = np.subtract(h, r)  # (h widened exactly to float64 inside the ufunc)
    if not d.size:
        return None
    s = sum_of_squares(d)
    if s != s:  # NaN: a non-finite operand or exact result
        return None
    bits = h.view(np.uint16)
    if not want:
        return bits, None
    if s == 0.0:  # every result exact: nothing raised
        return bits, {"overflow": None, "underflow": None, "inexact": None}
    inexact = d != 0.0
    overflow = np.isinf(h) if s == np.inf else None
    underflow = None
    if ufunc is not np.add and ufunc is not np.subtract:
        bound = _MIN_NORMAL if attrs.tininess is Tininess.BEFORE else _TINY_AFTER
        underflow = (np.abs(r) < bound) & inexact
    return bits, {"overflow": overflow, "underflow": underflow, "inexact": inexact}


#: float64 blocks up to which the codec takes :func:`cast` (longer ones keep its tuned
#: kernels, faster than numpy's cast per element; below this the calls' fixed cost rules)
SHORT_CAST = 1 << 12


def cast(blk, attrs, want, out):
    """A float64 block rounded into fp16 (uint16 ``out``) by numpy's cast, where
    :func:`applies` (module docstring).  Returns ``(flags, rest)`` as the codec's kernels
    do: a FlagMasks-like dict of the overflow, underflow and inexact masks (None without
    ``want``), and the mask of infinite and NaN lanes (their bits and flags placeholders,
    for the general path), or None where there are none."""
    with np.errstate(all="ignore"):
        h = blk.astype(np.float16)
        np.copyto(out, h.view(np.uint16))
        wide = h.astype(np.float64)
        d = wide - blk  # NaN exactly where blk is infinite or NaN (an overflow gives inf)
        rest = ~np.isfinite(blk) if np.isnan(d.max()) else None
    if not want:
        return None, rest
    inexact = d != 0.0
    bound = _MIN_NORMAL if attrs.tininess is Tininess.BEFORE else _TINY_AFTER
    underflow = (np.abs(blk) < bound) & inexact
    return {"overflow": np.isinf(wide), "underflow": underflow, "inexact": inexact}, rest
