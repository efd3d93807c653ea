"""The strategies for values and bit patterns of a format."""

from __future__ import annotations

from ..formats import as_format
from ._bounds import _Request
from ._classes import _CLASS_ORDER, _check_classes, _class_patterns
from ._draws import _patterns
from ._plan import _plan


def values(fmt, min_value=None, max_value=None, *, allow_nan=None, allow_infinity=None,
           allow_subnormal=None, allow_negative_zero=True, exclude_min=False, exclude_max=False,
           around=None):
    """Python floats that are exactly representable in ``fmt``.

    Draws come from the format's bit-pattern space, weighted toward class boundaries (+-0,
    the smallest and largest subnormal, the smallest normal, the largest finite value,
    powers of two and their neighbours, 1 +- ulp) and, for formats with NaN, NaNs with
    every sign, quiet bit and payload.  Failing examples shrink toward 0, 1, exponents near
    the bias and short fractions.

    Parameters
    ----------
    fmt : Format or str
    min_value, max_value : real number, optional
        Inclusive bounds; each must be a value of ``fmt`` (an error names the two nearest
        values otherwise).  Checked exactly, with work bounded as for
        :func:`softfloat.encode`: ``Decimal("1e1000000000")`` or ``10**100000`` is refused
        at once.  As in ``hypothesis.strategies.floats``, ``min_value=0.0``
        excludes -0.0 and ``max_value=-0.0`` excludes +0.0.
    allow_nan : bool, optional
        Default: True when the format has NaN and no bound is given.
    allow_infinity : bool, optional
        Default: True when the format has infinities and at most one bound is given.
    allow_subnormal : bool, optional
        Default: True when the bounds admit a subnormal.
    allow_negative_zero : bool, default True
    exclude_min, exclude_max : bool, default False
        Make the corresponding bound exclusive.
    around : Format or str, optional
        Also weight the draws (still values of ``fmt``) toward what breaks a conversion
        from ``fmt`` into ``around``: its representable values, the exact midpoints
        between its neighbours (ties) and their neighbours in ``fmt``, its overflow
        threshold and that threshold's neighbours, its subnormal range and half its
        smallest subnormal.

    Preconditions, checked when the strategy is built (not when it is drawn from):

    - bounds are values of ``fmt`` and ``min_value <= max_value``;
    - ``allow_nan=True`` needs a format with NaN and no bounds; ``allow_infinity=True``
      a format with infinities and at most one finite bound; ``allow_subnormal=True``
      bounds that admit a subnormal;
    - some value satisfies all of it.

    Returns
    -------
    SearchStrategy[float]

    Examples
    --------
    >>> from hypothesis import find
    >>> from softfloat import bf16, fp32
    >>> find(values(bf16), lambda x: x > 1.0 and x != 2.0)   # short fractions first
    1.5
    >>> values(bf16, max_value=1e6)
    Traceback (most recent call last):
        ...
    ValueError: max_value=1000000.0 is not representable in bf16; the nearest values are 999424.0 and 1003520.0 (use one of them)

    A ties-away fp32 -> bf16 rounding bug is found, and shrunk to the simplest tie:

    >>> import numpy as np, softfloat as sf
    >>> def to_bf16_away(x):
    ...     return int((np.float32(x).view(np.uint32) + np.uint32(0x8000)) >> np.uint32(16))
    >>> find(values(fp32, around=bf16, allow_nan=False),
    ...      lambda x: to_bf16_away(x) != sf.encode(x, bf16))
    1.00390625
    """
    plan = _plan(as_format(fmt), _Request(min_value, max_value, allow_nan=allow_nan,
                                          allow_infinity=allow_infinity, allow_subnormal=allow_subnormal,
                                          allow_negative_zero=allow_negative_zero, exclude_min=exclude_min,
                                          exclude_max=exclude_max, around=around))
    return _patterns(plan).map(plan.value_of)


def bits(fmt, *, classes=None):
    """Integer bit patterns of ``fmt``, optionally of the given IEEE classes only.

    Each draw picks a class, then a pattern in it: the class's boundaries, or exponent
    and fraction fields that shrink toward 1.0 and short fractions.  NaNs come with every
    sign, quiet bit and payload.

    Parameters
    ----------
    fmt : Format or str
    classes : collection of str, optional
        IEEE 754 class names as in ``softfloat.FLOAT_CLASSES`` ('positiveNormal',
        'negativeZero', 'quietNaN', ...); each must exist in ``fmt``.  Default: all the
        format has.

    Returns
    -------
    SearchStrategy[int]

    Examples
    --------
    >>> from hypothesis import find
    >>> import softfloat
    >>> hex(find(bits("fp16", classes=["positiveSubnormal"]), lambda b: True))
    '0x1'
    >>> hex(find(bits("fp16"), lambda b: softfloat.is_signaling(b, "fp16")))
    '0x7c01'
    """
    fmt = as_format(fmt)
    chosen = _check_classes(fmt, classes)
    return _class_patterns(fmt, tuple(c for c in _CLASS_ORDER if c in chosen))
