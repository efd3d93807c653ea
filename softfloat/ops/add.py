"""Correctly rounded addition and subtraction."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .. import _fastpaths
from .._flagmasks import FlagMasks
from .._options import resolve_attributes
from ._driver import Operation, apply, zero_pattern
from ._eft import sums_are_exact, two_sum
from ._kernel import Exact, scratch
from ._signs import exact_zero_sign, sign_of, zero_sum_is_negative

__all__ = ["add", "sub"]


def add_kernel(fmt, attrs, x, y, ws=None):
    if sums_are_exact(fmt):  # fp16, FP8, FP6, FP4: float64 holds every sum
        hi = np.add(x, y, out=scratch(ws, "op.add", x))
        exact_zero_sign(hi, None, x, y, attrs)
        return Exact(hi)
    hi, lo = two_sum(x, y, ws)
    exact_zero_sign(hi, lo, x, y, attrs)
    # inf - inf: float64 makes the NaN; a float64 overflow (fp64 only) is a hazard
    overflow = np.isinf(hi) & np.isfinite(x) & np.isfinite(y)
    return Exact(hi, lo, hazard=overflow)


def sub_kernel(fmt, attrs, x, y, ws=None):
    return add_kernel(fmt, attrs, x, np.negative(y, out=scratch(ws, "op.sub", y)), ws)


def add_exact(attrs, a, b):
    total = Fraction(a) + Fraction(b)
    if total == 0:
        return zero_sum_is_negative(sign_of(a), sign_of(b), attrs), total
    return total < 0, abs(total)


def sub_exact(attrs, a, b):
    return add_exact(attrs, a, -b)


def add_scalar(fmt, attrs, a, b):
    """One finite sum, exactly as Python integers (see Operation.scalar)."""
    if a == -b:  # an exact zero: IEEE 754-2019 6.3
        return zero_pattern(fmt, zero_sum_is_negative(sign_of(a), sign_of(b), attrs)), 0
    n1, d1 = a.as_integer_ratio()
    n2, d2 = b.as_integer_ratio()
    num = n1 * d2 + n2 * d1
    return _fastpaths.scalar_ratio(num < 0, abs(num), d1 * d2, fmt, attrs)


def sub_scalar(fmt, attrs, a, b):
    return add_scalar(fmt, attrs, a, -b)


ADD = Operation(add_kernel, add_exact, add_scalar, np.add)
SUB = Operation(sub_kernel, sub_exact, sub_scalar, np.subtract)


def add(a, b, fmt, rounding=None, *, saturate=None, subnormals=None, tininess=None, denormals_are_zero=False,
        attributes=None, rng=None, return_flags=False, workers=None):
    """a + b, correctly rounded into ``fmt``: bit patterns in, bit patterns out.

    Parameters
    ----------
    a, b : int or integer array_like
        Bit patterns of ``fmt`` (broadcast against each other).
    fmt : Format or str
    rounding : Rounding or str, default "nearest_even"
    tininess : {"after", "before"}, default: the platform's ("after")
    subnormals : bool, default True
        False flushes subnormal results to zero (flush-to-zero).
    denormals_are_zero : bool, default False
        True reads subnormal operands as zeros of the same sign (DAZ).
    saturate : bool, default False
        Overflow to +-max_finite instead of infinity (or NaN for fn/fnuz formats).
    attributes : RoundingAttributes, optional
        All of the above but ``denormals_are_zero`` (and the platform, whose NaN rules
        apply) as one value; the keywords are shortcuts for its fields, and a keyword that
        is given wins over ``attributes``, as for :func:`softfloat.encode`.
    rng : numpy.random.Generator or int, optional
        For ``rounding="stochastic"``: a seed or Generator makes the result reproducible;
        ``rng=None`` draws fresh entropy from the operating system, so two calls differ.
        Ignored by the deterministic modes.
    return_flags : bool, default False
    workers : int, optional
        Threads that run the blocks: None takes the process-wide setting
        (:func:`softfloat.set_workers`; every core unless changed), 1 runs them in the
        calling thread.  The bits and flags are the same for any value.

    Returns
    -------
    bits : ndarray of ``fmt.storage_dtype`` (or a scalar), and Flags with ``return_flags``.
        dask array operands give a lazy dask array (and lazy flags); stochastic rounding
        gives each element the random bits of its position in the result, so the bits
        equal the in-memory ones whatever the chunks.

    Notes
    -----
    IEEE 754-2019: inf + (-inf) is invalid; an exact zero sum of opposite-signed operands
    is +0 (-0 under downward); a non-zero result that rounds to zero keeps its sign.  NaN
    results follow the rules of ``attributes.platform`` (:mod:`softfloat.platforms`; by
    default those :data:`softfloat.ops.NAN_POLICY` describes).

    Examples
    --------
    >>> import softfloat as sf
    >>> hex(sf.add(0x6800, 0x3C00, "fp16"))        # 2048 + 1 = 2048: swamping
    '0x6800'
    >>> hex(sf.add(0x6800, 0x3C00, "fp16", "upward"))
    '0x6801'
    """
    attrs, rng = resolve_attributes(attributes, rounding=rounding, tininess=tininess, subnormals=subnormals,
                                    saturate=saturate, rng=rng)
    return apply(ADD, fmt, [("a", a), ("b", b)], attrs, rng, denormals_are_zero=denormals_are_zero,
                 return_flags=return_flags, workers=workers)


def sub(a, b, fmt, rounding=None, *, saturate=None, subnormals=None, tininess=None, denormals_are_zero=False,
        attributes=None, rng=None, return_flags=False, workers=None):
    """a - b, correctly rounded into ``fmt``; see :func:`add` for the parameters.

    ``rng`` is used only by stochastic rounding (``rng=None``: fresh entropy, not
    reproducible); the deterministic modes ignore it.

    Examples
    --------
    >>> import softfloat as sf
    >>> hex(sf.sub(0x3C00, 0x3C00, "fp16")), hex(sf.sub(0x3C00, 0x3C00, "fp16", "downward"))
    ('0x0', '0x8000')
    """
    attrs, rng = resolve_attributes(attributes, rounding=rounding, tininess=tininess, subnormals=subnormals,
                                    saturate=saturate, rng=rng)
    return apply(SUB, fmt, [("a", a), ("b", b)], attrs, rng, denormals_are_zero=denormals_are_zero,
                 return_flags=return_flags, workers=workers)


# ---- the flags of numpy's own addition (the native shortcuts of sums and cumsum) -----------
def addition_flags(a, b, r, symmetric=False):
    """The flags of r = a + b rounded to nearest in a's dtype, from the operands and result.

    * inexact: r - a != b or r - b != a (with round to nearest, the difference of r and the
      larger operand is exact, Fast2Sum; so it equals the other operand iff r is exact), or
      an overflow;
    * overflow: an infinite r from finite operands; invalid: a NaN r from non-NaN ones;
    * underflow never: a sum that lands below the smallest normal is exact (gradual
      underflow), so tininess comes without inexactness;
    * swamped: a non-zero finite b left a finite a unchanged (``symmetric``: or the other
      way round, for pair additions).

    Returns the FlagMasks (None for the flags that cannot be raised) and the swamped mask.
    """
    if np.isfinite(r).all():  # the common case, about half the work: no overflow, no NaN
        inexact = (r - a != b) | (r - b != a)
        swamped = (r == a) & (b != 0)
        if symmetric:
            swamped |= (r == b) & (a != 0)
        return FlagMasks(inexact=inexact), swamped
    finite_a, finite_b = np.isfinite(a), np.isfinite(b)
    finite_r = np.isfinite(r)
    inexact = finite_r & ((r - a != b) | (r - b != a))
    overflow = ~finite_r & ~np.isnan(r) & finite_a & finite_b
    invalid = np.isnan(r) & ~np.isnan(a) & ~np.isnan(b)
    swamped = (r == a) & (b != 0) & finite_b & finite_a
    if symmetric:
        swamped |= (r == b) & (a != 0) & finite_a & finite_b
    return FlagMasks(invalid=invalid, overflow=overflow, inexact=inexact | overflow), swamped
