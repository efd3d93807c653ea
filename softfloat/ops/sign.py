"""Sign-bit operations (IEEE 754-2019 section 5.5.1): negate, abs and copySign.

They are quiet and exact: they touch only the sign bit, work on NaNs (signaling ones
included, which stay signaling) and raise no flag, so they take no rounding options.

fnuz formats have no -0 and keep their single NaN in the -0 pattern ``1.000..0``, so
flipping the sign bit of a zero would make a NaN and flipping it on the NaN would make a
zero.  There the sign operations leave +0 and the NaN unchanged: -(+0) = +0, |NaN| = NaN.
"""

from __future__ import annotations

import numpy as np

from .. import _dask
from ..formats import Format, Specials, as_format
from ._operands import operand_patterns, scalar_or_array

__all__ = ["neg", "abs", "copysign"]


def neg(a, fmt):
    """-a: the sign bit flipped (IEEE ``negate``), for every pattern, NaNs included.

    Parameters
    ----------
    a : int or integer array_like
        Bit patterns of ``fmt``.
    fmt : Format or str

    Returns
    -------
    ndarray of ``fmt.storage_dtype`` (a scalar for scalar input)

    Notes
    -----
    fnuz formats: +0 and the NaN are returned unchanged (see the module docstring).

    Examples
    --------
    >>> hex(neg(0x3C00, "fp16")), hex(neg(0x8000, "fp16")), hex(neg(0x7C01, "fp16"))
    ('0xbc00', '0x0', '0xfc01')
    >>> hex(neg(0x00, "e4m3fnuz")), hex(neg(0x80, "e4m3fnuz"))
    ('0x0', '0x80')
    """
    fmt = as_format(fmt)
    if _dask.is_dask(a):
        return _dask.lift(neg, (a,), (fmt,), {}, fmt.storage_dtype)
    (x,), _ = operand_patterns(fmt, [("a", a)])
    result = x ^ _sign(fmt)
    return scalar_or_array(_keep_unsigned(result, x, fmt))


def abs(a, fmt):  # noqa: A001 - the IEEE name; exported as softfloat.ops.sign.abs
    """|a|: the sign bit cleared (IEEE ``abs``), for every pattern, NaNs included.

    Parameters
    ----------
    a : int or integer array_like
        Bit patterns of ``fmt``.
    fmt : Format or str

    Returns
    -------
    ndarray of ``fmt.storage_dtype`` (a scalar for scalar input)

    Notes
    -----
    fnuz formats: the NaN stays NaN (see the module docstring).

    Examples
    --------
    >>> hex(abs(0xBC00, "fp16")), hex(abs(0xFE00, "fp16"))
    ('0x3c00', '0x7e00')
    >>> hex(abs(0x80, "e5m2fnuz"))
    '0x80'
    """
    fmt = as_format(fmt)
    if _dask.is_dask(a):
        return _dask.lift(abs, (a,), (fmt,), {}, fmt.storage_dtype)
    (x,), _ = operand_patterns(fmt, [("a", a)])
    result = x & ~_sign(fmt)
    return scalar_or_array(_keep_unsigned(result, x, fmt))


def copysign(a, b, fmt):
    """a's magnitude with b's sign bit (IEEE ``copySign``); a and b broadcast.

    Parameters
    ----------
    a, b : int or integer array_like
        Bit patterns of ``fmt``: ``a`` gives the magnitude, ``b`` the sign.
    fmt : Format or str

    Returns
    -------
    ndarray of ``fmt.storage_dtype`` (a scalar for scalar input)

    Notes
    -----
    The sign is taken from any ``b``, NaNs included.  fnuz formats: a zero or NaN ``a`` is
    returned unchanged, and the NaN as ``b`` counts as positive (it has no sign, as
    :func:`softfloat.is_sign_minus` says).

    Examples
    --------
    >>> hex(copysign(0x3C00, 0xFE00, "fp16")), hex(copysign(0xBC00, 0x0000, "fp16"))
    ('0xbc00', '0x3c00')
    >>> hex(copysign(0x38, 0x80, "e4m3fnuz")), hex(copysign(0x00, 0xB8, "e4m3fnuz"))
    ('0x38', '0x0')
    """
    fmt = as_format(fmt)
    if _dask.any_dask(a, b):
        return _dask.lift(copysign, (a, b), (fmt,), {}, fmt.storage_dtype)
    (x, y), _ = operand_patterns(fmt, [("a", a), ("b", b)])
    sign = _sign(fmt)
    y_sign = y & sign
    if fmt.specials is Specials.FNUZ:
        y_sign = np.where(y == sign, np.zeros_like(y_sign), y_sign)  # the NaN has no sign
    result = (x & ~sign) | y_sign
    return scalar_or_array(_keep_unsigned(result, x, fmt))


# ---- helpers ------------------------------------------------------------------------------
def _sign(fmt: Format):
    return fmt.storage_dtype.type(fmt.sign_mask)


def _keep_unsigned(result, x, fmt: Format):
    """fnuz: where ``x`` is +0 (0.000..0) or the NaN (1.000..0) -- magnitude field 0 --
    the sign bit carries no sign, so ``x`` itself is the result."""
    if fmt.specials is not Specials.FNUZ:
        return result
    return np.where((x & ~_sign(fmt)) == 0, x, result)


