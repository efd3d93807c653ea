"""Correctly rounded square root."""

from __future__ import annotations

import numpy as np

from ._common import apply, two_product

__all__ = ["sqrt"]


def _sqrt_kernel(fmt, policy, x):
    hi = np.sqrt(x)
    # x - hi**2 is exact (Dekker's product), so lo = r / (2 hi) has the exact sign of
    # the root's rounding error and nearly its exact size
    p, e = two_product(hi, hi)
    r = (x - p) - e
    finite = np.isfinite(hi) & (hi > 0)
    lo = np.where(finite, r / np.where(finite, 2.0 * hi, 1.0), 0.0)
    return hi, lo, None, None  # sqrt(-x): float64 makes the NaN; sqrt(-0) = -0


def sqrt(a, fmt, rounding="nearest_even", *, tininess="after", subnormals=True,
         denormals_are_zero=False, saturate=False, rng=None, return_flags=False):
    """The square root of a, correctly rounded into ``fmt``; keyword arguments as for
    :func:`~softfloat.add`.

    The square root of a negative non-zero number is invalid; sqrt(-0) is -0.

    Examples
    --------
    >>> import softfloat as sf
    >>> hex(sf.sqrt(sf.encode(2.0, "fp16"), "fp16"))
    '0x3da8'
    """
    return apply("sqrt", _sqrt_kernel, fmt, [("a", a)], rounding, tininess=tininess,
                 subnormals=subnormals, denormals_are_zero=denormals_are_zero, saturate=saturate,
                 rng=rng, return_flags=return_flags)
