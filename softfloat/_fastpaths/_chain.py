"""Running products on Python floats: ``p = round(p * t)`` for each term, one step at a time.

A vectorised multiplication costs tens of microseconds however few its lanes; a chain of
them into one output (cumprod, prod) has nothing to vectorise over.  Here each step is
the exact product of two values of a narrow format (softfloat.ops.kernels.is_narrow:
precision <= 26 bits, so the product of two significands has at most 52 bits and is a
float64, exactly, with an exponent float64 holds), rounded once into the format:

* a finite product of magnitude at least the format's smallest normal value, where the
  format is numpy's float16 or float32 and the mode is nearest even: numpy's scalar cast
  from float64 (one correct rounding to nearest even: ``npy_double_to_half`` and the
  C cast to float).  No tininess by either rule (the product is at least the smallest
  normal), inexact iff the rounded value differs from the product, and a result that is
  not finite (an overflow) is handed back;
* any other finite non-zero product: softfloat._fastpaths._scalar's rounding (any
  deterministic mode, its proof there), which hands back overflow and flush-to-zero of a
  tiny value;
* an exact zero product: the zero of the signs' XOR (IEEE 754-2019 6.3), +0 in a format
  without -0 (the caller encodes the values); no flag;
* an infinity times a finite non-zero value: the infinity of the signs' XOR, exactly,
  no flag (IEEE 754-2019 7.2 and 7.4: neither invalid nor overflow);
* everything else (a NaN, 0 * inf, an overflow, a declined rounding) is handed back:
  the caller runs that step on the general path and goes on.

tests/test_running_products.py compares every case with the general path.
"""

from __future__ import annotations

import math

import numpy as np

from ..rounding import Rounding
from . import _scalar

__all__ = ["products"]

_CASTS = {np.dtype(np.float16): np.float16, np.dtype(np.float32): np.float32}


def products(p: float, terms, fmt, attrs, values):
    """Steps ``p = round(p * t)`` for ``t`` in ``terms`` (Python floats: values of ``fmt``,
    ``p`` one too) until one is handed back.

    ``values``: the format's values by pattern (softfloat._fastpaths.scalar_values, finite
    patterns at least).  Returns ``(out, codes, done)``: the running values after each of
    the first ``done`` steps and their flag codes (softfloat._flagmasks.FLAG_BITS:
    _scalar.INEXACT, _scalar.UNDERFLOW); ``done < len(terms)`` means step ``done`` was
    handed back.
    """
    cast = _CASTS.get(np.dtype(fmt.native_dtype)) if fmt.native_dtype is not None else None
    if attrs.rounding is not Rounding.NEAREST_EVEN:
        cast = None
    out, codes = [], []
    with np.errstate(over="ignore"):  # (an overflowing cast is handed back)
        _steps(p, terms, fmt, attrs, values, cast, out, codes)
    return out, codes, len(out)


def _steps(p, terms, fmt, attrs, values, cast, out, codes):
    """:func:`products`' loop: appends each step's value and code until one is handed back."""
    smallest = float(fmt.min_normal)
    for t in terms:
        x = p * t  # exact: the format is narrow
        if x - x == 0.0:  # finite
            if cast is not None and not -smallest < x < smallest:
                r = float(cast(x))
                if r - r != 0.0:
                    break  # an overflow: the general path's flags and saturation
                code = _scalar.INEXACT if r != x else 0
            elif x == 0.0:
                r, code = x, 0  # (its pattern: +0 where the format has no -0)
            else:
                found = _scalar.from_float(x, fmt, attrs)
                if found is None:
                    break
                r, code = values[found[0]], found[1]
        elif (p - p != 0.0 and t - t == 0.0 and t != 0.0) or (t - t != 0.0 and p - p == 0.0 and p != 0.0):
            if math.isnan(x):
                break  # (a NaN operand: the general path's NaN rules)
            r, code = x, 0  # an infinity times a finite non-zero value: exact
        else:
            break  # NaNs, 0 * inf
        out.append(r)
        codes.append(code)
        p = r
