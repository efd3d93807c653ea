"""Correctly rounded division."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .. import _fastpaths
from .._options import resolve_attributes
from ._driver import Operation, apply, zero_pattern
from ._eft import is_narrow, safe_magnitude, two_product
from ._kernel import Exact, scratch
from ._signs import sign_of

__all__ = ["div"]


def div_kernel(fmt, attrs, x, y, ws=None):
    hi = np.divide(x, y, out=scratch(ws, "op.div", x))
    # the remainder x - hi*y is exact (Dekker's product and Sterbenz), so lo = r / y has
    # the exact sign of the quotient's rounding error and nearly its exact size
    p, e = two_product(hi, y, ws)
    r = np.subtract(np.subtract(x, p, out=p), e, out=p)  # (x - p) - e
    finite = np.isfinite(hi) & (hi != 0)  # so y is finite and non-zero there
    lo = np.divide(r, y, out=e)
    np.copyto(lo, 0.0, where=~finite)
    dbz = (y == 0) & np.isfinite(x) & (x != 0)
    hazard = None
    if not is_narrow(fmt):  # fp64: Dekker's product needs room on both sides
        finite_nonzero = np.isfinite(x) & np.isfinite(y) & (x != 0) & (y != 0)
        hazard = finite_nonzero & ~(safe_magnitude(x) & safe_magnitude(y) & safe_magnitude(hi))
    # 0/0 and inf/inf: float64 makes the NaN
    return Exact(hi, lo, lo_exact=False, divide_by_zero=dbz, hazard=hazard)


def div_exact(attrs, a, b):  # hazards have b != 0
    return sign_of(a) != sign_of(b), abs(Fraction(a) / Fraction(b))


def div_scalar(fmt, attrs, a, b):
    """One finite quotient, exactly as Python integers (see Operation.scalar); a zero
    divisor (divide_by_zero or invalid) is the general path's."""
    if b == 0:
        return None
    negative = sign_of(a) != sign_of(b)
    if a == 0:
        return zero_pattern(fmt, negative), 0
    n1, d1 = a.as_integer_ratio()
    n2, d2 = b.as_integer_ratio()
    return _fastpaths.scalar_ratio(negative, abs(n1) * d2, d1 * abs(n2), fmt, attrs)


DIV = Operation(div_kernel, div_exact, div_scalar, np.divide)


def div(a, b, fmt, rounding=None, *, saturate=None, subnormals=None, tininess=None, denormals_are_zero=False,
        attributes=None, rng=None, return_flags=False, workers=None):
    """a / b, correctly rounded into ``fmt``; keyword arguments
    (``attributes`` included) as for :func:`~softfloat.add`.
    ``rng`` is used only by stochastic rounding (``rng=None``: fresh entropy, not
    reproducible); the deterministic modes ignore it.

    0/0 and inf/inf are invalid; a finite non-zero number divided by zero raises
    divide_by_zero and gives a correctly signed infinity.  Formats without infinity then
    map that infinity as :func:`~softfloat.encode` does: NaN with invalid as well (fn,
    fnuz), or +-max_finite with overflow and inexact as well (``saturate=True``; FP6/FP4
    always).

    Examples
    --------
    >>> import softfloat as sf
    >>> one, three = sf.encode(1.0, "bf16"), sf.encode(3.0, "bf16")
    >>> [float(sf.decode(sf.div(one, three, "bf16", r), "bf16")) for r in ("downward", "upward")]
    [0.33203125, 0.333984375]
    """
    attrs, rng = resolve_attributes(attributes, rounding=rounding, tininess=tininess, subnormals=subnormals,
                                    saturate=saturate, rng=rng)
    return apply(DIV, fmt, [("a", a), ("b", b)], attrs, rng, denormals_are_zero=denormals_are_zero,
                 return_flags=return_flags, workers=workers)
