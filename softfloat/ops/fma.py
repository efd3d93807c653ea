"""Fused multiply-add: a * b + c with a single rounding."""

from __future__ import annotations

import numpy as np

from ._common import apply, exact_zero_sign, two_sum

__all__ = ["fma"]


def _fma_kernel(fmt, policy, x, y, z):
    product = x * y  # exact, as in mul
    hi, lo = two_sum(product, z)
    exact_zero_sign(hi, lo, product, z, policy)
    # float64 makes NaNs for 0 * inf and inf - inf; 0 * inf is invalid even when z is a
    # quiet NaN, which float64 cannot show
    zero_times_inf = (np.isinf(x) & (y == 0)) | ((x == 0) & np.isinf(y))
    return hi, lo, zero_times_inf, None


def fma(a, b, c, fmt, rounding="nearest_even", *, tininess="after", subnormals=True,
        denormals_are_zero=False, saturate=False, rng=None, return_flags=False):
    """a * b + c with one rounding into ``fmt``; keyword arguments as for
    :func:`~softfloat.add`.

    fma(0, inf, c) and fma(inf, 0, c) are invalid even when c is a quiet NaN (as on x86
    and RISC-V); the result is then c's NaN.  Exact zeros follow the rule for sums.

    Examples
    --------
    >>> import softfloat as sf
    >>> a = sf.encode(1 + 2**-10, "fp16"); c = sf.encode(-(1 + 2**-9), "fp16")
    >>> float(sf.decode(sf.fma(a, a, c, "fp16"), "fp16"))     # 2**-20, lost by mul then add
    9.5367431640625e-07
    """
    return apply("fma", _fma_kernel, fmt, [("a", a), ("b", b), ("c", c)], rounding,
                 tininess=tininess, subnormals=subnormals, denormals_are_zero=denormals_are_zero,
                 saturate=saturate, rng=rng, return_flags=return_flags)
