"""Correctly rounded multiplication."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .. import _fastpaths
from .._options import resolve_attributes
from ._driver import Operation, apply, zero_pattern
from ._eft import is_narrow, safe_magnitude, two_product
from ._kernel import Exact, scratch
from ._signs import sign_of

__all__ = ["mul"]


def mul_kernel(fmt, attrs, x, y, ws=None):
    # 0 * inf: float64 makes the NaN
    if is_narrow(fmt):  # two significands of <= 24 bits make <= 48: exact in float64
        return Exact(np.multiply(x, y, out=scratch(ws, "op.mul", x)))
    hi, lo = two_product(x, y, ws)
    finite_nonzero = np.isfinite(x) & np.isfinite(y) & (x != 0) & (y != 0)
    hazard = finite_nonzero & ~(safe_magnitude(x) & safe_magnitude(y) & safe_magnitude(hi))
    return Exact(hi, lo, hazard=hazard)


def mul_exact(attrs, a, b):
    return sign_of(a) != sign_of(b), abs(Fraction(a) * Fraction(b))


def mul_scalar(fmt, attrs, a, b):
    """One finite product, exactly as Python integers (see Operation.scalar)."""
    negative = sign_of(a) != sign_of(b)
    if a == 0 or b == 0:
        return zero_pattern(fmt, negative), 0
    n1, d1 = a.as_integer_ratio()
    n2, d2 = b.as_integer_ratio()
    return _fastpaths.scalar_ratio(negative, abs(n1 * n2), d1 * d2, fmt, attrs)


MUL = Operation(mul_kernel, mul_exact, mul_scalar, np.multiply)


def mul(a, b, fmt, rounding=None, *, saturate=None, subnormals=None, tininess=None, denormals_are_zero=False,
        attributes=None, rng=None, return_flags=False, workers=None):
    """a * b, correctly rounded into ``fmt``; keyword arguments
    (``attributes`` included) as for :func:`~softfloat.add`.
    ``rng`` is used only by stochastic rounding (``rng=None``: fresh entropy, not
    reproducible); the deterministic modes ignore it.

    0 * inf is invalid; the sign of a zero or infinite product is the exclusive or of the
    operands' signs.

    Examples
    --------
    >>> import softfloat as sf
    >>> g16, g32 = sf.encode(2.0**-13, "fp16"), sf.encode(2.0**-13, "fp32")   # small gradients
    >>> int(sf.mul(g16, g16, "fp16")), float(sf.decode(sf.mul(g32, g32, "fp32"), "fp32"))
    (0, 1.4901161193847656e-08)
    """
    attrs, rng = resolve_attributes(attributes, rounding=rounding, tininess=tininess, subnormals=subnormals,
                                    saturate=saturate, rng=rng)
    return apply(MUL, fmt, [("a", a), ("b", b)], attrs, rng, denormals_are_zero=denormals_are_zero,
                 return_flags=return_flags, workers=workers)
