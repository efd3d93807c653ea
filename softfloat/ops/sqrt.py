"""Correctly rounded square root."""

from __future__ import annotations

import numpy as np

import math
from fractions import Fraction

from .. import _fastpaths
from .._options import resolve_attributes
from ._driver import Operation, apply, zero_pattern
from ._eft import is_narrow, safe_magnitude, two_product
from ._kernel import Exact, scratch
from ._signs import sign_of

__all__ = ["sqrt"]


def sqrt_kernel(fmt, attrs, x, ws=None):
    hi = np.sqrt(x, out=scratch(ws, "op.sqrt", x))
    # x - hi**2 is exact (Dekker's product), so lo = r / (2 hi) has the exact sign of
    # the root's rounding error and nearly its exact size
    p, e = two_product(hi, hi, ws)
    r = np.subtract(np.subtract(x, p, out=p), e, out=p)  # (x - p) - e
    finite = np.isfinite(hi) & (hi > 0)
    lo = np.divide(r, np.multiply(hi, 2.0, out=e), out=e)
    np.copyto(lo, 0.0, where=~finite)
    hazard = None if is_narrow(fmt) else (x > 0) & np.isfinite(x) & ~safe_magnitude(x)
    # sqrt(-x): float64 makes the NaN; sqrt(-0) = -0
    return Exact(hi, lo, lo_exact=False, hazard=hazard)


def sqrt_exact(attrs, x: float):
    """(negative, (sig, e_top)): the root's leading 62 bits and a sticky bit, by isqrt.

    With 2**e <= a < 2**(e+2) (e even), sqrt(a) = sqrt(a * 2**(122 - e)) * 2**(e/2 - 61),
    and isqrt of the integer part gives a 61- or 62-bit root; the rest is sticky.
    """
    if x == 0:
        return sign_of(x), Fraction(0)  # sqrt(-0) = -0
    a = Fraction(x)
    e = a.numerator.bit_length() - a.denominator.bit_length() - 2
    e -= e % 2
    scaled = a * Fraction(2) ** (122 - e)
    n = scaled.numerator // scaled.denominator
    root = math.isqrt(n)
    sticky = root * root != n or scaled.numerator % scaled.denominator != 0
    e_top = e // 2 + root.bit_length() - 62
    shift = root.bit_length() - 62
    sig = root >> shift if shift >= 0 else root << -shift
    lost = shift > 0 and root & ((1 << shift) - 1) != 0
    return False, (sig | int(sticky or lost), e_top)


def sqrt_scalar(fmt, attrs, x):
    """One finite square root by math.isqrt (see Operation.scalar); a negative operand
    (invalid) is the general path's."""
    if x == 0:
        return zero_pattern(fmt, sign_of(x)), 0  # sqrt(-0) = -0
    if x < 0:
        return None
    num, den = x.as_integer_ratio()
    return _fastpaths.scalar_sqrt(num, den.bit_length() - 1, fmt, attrs)


SQRT = Operation(sqrt_kernel, sqrt_exact, sqrt_scalar, np.sqrt)


def sqrt(a, fmt, rounding=None, *, saturate=None, subnormals=None, tininess=None, denormals_are_zero=False,
         attributes=None, rng=None, return_flags=False, workers=None):
    """The square root of a, correctly rounded into ``fmt``; keyword arguments
    (``attributes`` included) as for :func:`~softfloat.add`.  ``rng`` is used only by
    stochastic rounding (``rng=None``: fresh entropy, not reproducible); the
    deterministic modes ignore it.

    The square root of a negative non-zero number is invalid; sqrt(-0) is -0.

    Examples
    --------
    >>> import softfloat as sf
    >>> hex(sf.sqrt(sf.encode(2.0, "fp16"), "fp16"))
    '0x3da8'
    """
    attrs, rng = resolve_attributes(attributes, rounding=rounding, tininess=tininess, subnormals=subnormals,
                                    saturate=saturate, rng=rng)
    return apply(SQRT, fmt, [("a", a)], attrs, rng, denormals_are_zero=denormals_are_zero,
                 return_flags=return_flags, workers=workers)
