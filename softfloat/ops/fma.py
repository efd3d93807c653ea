"""Fused multiply-add: a * b + c with a single rounding."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .._options import resolve_attributes
from ._driver import Operation, apply
from ._eft import is_narrow, round_to_odd, safe_magnitude, two_product, two_sum
from ._kernel import Exact, scratch
from ._signs import exact_zero_sign, sign_of, zero_sum_is_negative

__all__ = ["fma"]


def fma_kernel(fmt, attrs, x, y, z, ws=None):
    # float64 makes NaNs for 0 * inf and inf - inf; 0 * inf is invalid even when z is a
    # quiet NaN, which float64 cannot show
    zero_times_inf = (np.isinf(x) & (y == 0)) | ((x == 0) & np.isinf(y))
    if is_narrow(fmt):
        product = np.multiply(x, y, out=scratch(ws, "op.fma.product", x))  # exact, as in mul
        hi, lo = two_sum(product, z, ws)
        exact_zero_sign(hi, lo, product, z, attrs)
        return Exact(hi, lo, invalid=zero_times_inf)
    # fp64: a*b = ph + pl exactly; ph + z = sh + sl exactly; the tail sl + pl rounded to
    # odd keeps every bit the final rounding can see (Boldo and Melquiond's emulated FMA)
    ph, pl = two_product(x, y, ws)
    sh, sl = two_sum(ph, z, ws, "op.fma.sum")
    t, t_err = two_sum(sl, pl, ws, "op.fma.tail")
    tail = round_to_odd(t, t_err, ws, "op.fma.tail_odd")
    hi, lo = two_sum(sh, tail, ws)
    no_tail = tail == 0  # then the result is sh exactly, with sh's zero sign
    hi[no_tail], lo[no_tail] = sh[no_tail], 0.0
    finite_product = np.isfinite(x) & np.isfinite(y)
    # a finite product (even one beyond float64) plus an infinity is that infinity
    inf_z = finite_product & np.isinf(z)
    hi[inf_z], lo[inf_z] = z[inf_z], 0.0
    exact_zero_sign(hi, lo, ph, z, attrs)
    product_nonzero = (x != 0) & (y != 0)
    hazard = finite_product & np.isfinite(z) & (
        (product_nonzero & ~(safe_magnitude(x) & safe_magnitude(y) & safe_magnitude(ph)))
        | ~np.isfinite(hi) | (np.abs(z) > 2.0**995))
    return Exact(hi, lo, lo_exact=False, invalid=zero_times_inf, hazard=hazard)


def fma_exact(attrs, a, b, c):
    product = Fraction(a) * Fraction(b)
    total = product + Fraction(c)
    if total == 0:
        return zero_sum_is_negative(sign_of(a) != sign_of(b), sign_of(c), attrs), total
    return total < 0, abs(total)


FMA = Operation(fma_kernel, fma_exact)


def fma(a, b, c, fmt, rounding=None, *, saturate=None, subnormals=None, tininess=None,
        denormals_are_zero=False, attributes=None, rng=None, return_flags=False, workers=None):
    """a * b + c with one rounding into ``fmt``; keyword arguments
    (``attributes`` included) as for :func:`~softfloat.add`.  ``rng`` is used only by
    stochastic rounding (``rng=None``: fresh entropy, not reproducible); the
    deterministic modes ignore it.

    fma(0, inf, c) and fma(inf, 0, c) are invalid even when c is a quiet NaN (as on x86
    and RISC-V); the result is then the NaN the platform's propagation rule picks among
    the operands (by default c's, quieted).  Exact zeros follow the rule for sums.

    Examples
    --------
    >>> import softfloat as sf
    >>> a = sf.encode(1 + 2**-10, "fp16"); c = sf.encode(-(1 + 2**-9), "fp16")
    >>> float(sf.decode(sf.fma(a, a, c, "fp16"), "fp16"))     # 2**-20, lost by mul then add
    9.5367431640625e-07
    """
    attrs, rng = resolve_attributes(attributes, rounding=rounding, tininess=tininess, subnormals=subnormals,
                                    saturate=saturate, rng=rng)
    return apply(FMA, fmt, [("a", a), ("b", b), ("c", c)], attrs, rng, denormals_are_zero=denormals_are_zero,
                 return_flags=return_flags, workers=workers)
