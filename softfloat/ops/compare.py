"""Comparisons, total order, minimum/maximum and neighbours, all on bit patterns.

IEEE 754-2019 sections 5.11 (comparisons), 5.10 (totalOrder), 9.6 (minimum, maximum,
minimumNumber, maximumNumber) and 5.3.1 (nextUp, nextDown); plus ``ulp``.  Everything works
for every format, fp64 included, and nothing is decoded: the values of a binary format are
ordered like its bit patterns read as sign-magnitude integers,

    key(x) = +mag  (sign bit clear)        key(x) = -mag  (sign bit set)

with ``mag`` the pattern without its sign bit (so -0 and +0 share key 0, as they compare
equal).  totalOrder separates them with ``-mag - 1`` for negative patterns, which also
orders NaNs by sign and payload (IEEE formats put NaNs above infinity, with the quiet bit
on top of the payload).

Formats without IEEE NaNs:

* fn (E4M3): the NaN S.1111.111 sits above the largest finite magnitude, so the same keys
  order it like an IEEE NaN of its sign;
* fnuz: the single NaN 1.0000.000 has no sign; totalOrder puts it above every number, as
  a positive NaN, and ``minimum`` and friends treat it as a quiet NaN;
* finite (FP6/FP4): no NaN, every pattern is a number.

NaN results follow the default platform's rules (``softfloat.PLATFORMS["default"]``, see
:mod:`softfloat.platforms`; :data:`softfloat.ops.NAN_POLICY` describes them): a NaN
operand propagates quieted (the first signaling NaN operand if any, else the first NaN
operand), keeping its sign and payload.  These operations round nothing, so they take no
``attributes``.
"""

from __future__ import annotations

import numpy as np

from .. import _dask, _fastpaths, _validate
from ..flags import Flags
from ..formats import Format, Specials, as_format
from ._nan import is_signaling, nan_mask, quieted
from ._operands import operand_patterns

__all__ = [
    "eq", "ne", "lt", "le", "gt", "ge", "unordered", "total_order", "total_order_mag",
    "minimum", "maximum", "minimum_number", "maximum_number",
    "minimum_magnitude", "maximum_magnitude", "minimum_magnitude_number", "maximum_magnitude_number",
    "next_up", "next_down", "ulp", "total_order_keys",
]


# =====================================================================================
# comparisons (5.11)
# =====================================================================================
_COMPARISON_DOC = """a {symbol} b (IEEE compareQuiet{ieee} / compareSignaling{ieee}).

    Parameters
    ----------
    a, b : int or integer array_like
        Bit patterns of ``fmt`` (broadcast against each other).
    fmt : Format or str
    signaling : bool, default False
        False: compareQuiet{ieee}, which raises invalid only for signaling NaN operands.
        True: compareSignaling{ieee}, which raises invalid for any NaN operand (as C's
        ``<``, ``<=``, ``>`` and ``>=`` do).
    return_flags : bool, default False
        Also return the :class:`~softfloat.Flags` (only invalid can be raised).

    Returns
    -------
    ndarray of bool (a bool for scalar input), and Flags with ``return_flags``

    Notes
    -----
    -0 == +0.  A NaN is unordered with everything, itself included, which makes the
    result {unordered_result}.  IEEE's negated predicates (compareQuietNotLess, ...) are
    ``~`` of these results: True for unordered operands.

    Examples
    --------
{examples}
"""


def _native_relation(relation, x, y, fmt: Format):
    """``relation`` on the patterns of a format numpy stores as itself (fp16, fp32, fp64)
    read as numpy floats, where neither operand holds a NaN; else None (the order keys).
    Without NaNs numpy's float comparison is IEEE's (-0 == +0, infinities at the ends) and
    no comparison raises anything, quiet or signaling.  Off with softfloat._fastpaths.ENABLED."""
    native = fmt.native_dtype
    if native is None or not _fastpaths.ENABLED:
        return None
    u, v = x.view(native), y.view(native)
    if np.isnan(u).any() or np.isnan(v).any():
        return None
    return relation(u, v)


def _comparison(name, relation, *, symbol, ieee, unordered_result, examples):
    """A comparison predicate: ``relation`` on the order keys, ``unordered_result`` where
    either operand is a NaN."""
    def compare(a, b, fmt, *, signaling=False, return_flags=False):
        fmt = as_format(fmt)
        if _dask.any_dask(a, b):
            return _dask.lift(compare, (a, b), (fmt,), dict(signaling=signaling, return_flags=return_flags),
                              np.dtype(bool), return_flags is True)
        signaling = _validate.boolean("signaling", signaling)
        return_flags = _validate.boolean("return_flags", return_flags)
        (x, y), _ = operand_patterns(fmt, [("a", a), ("b", b)])
        native = _native_relation(relation, x, y, fmt)
        if native is not None:
            return _predicate_result(native, False, return_flags)
        nan_x, nan_y = nan_mask(x, fmt), nan_mask(y, fmt)
        either_nan = nan_x | nan_y
        result = relation(_order_key(x, fmt), _order_key(y, fmt))
        result = (result | either_nan) if unordered_result else (result & ~either_nan)
        if signaling:
            invalid = either_nan
        else:
            invalid = (nan_x & is_signaling(x, fmt)) | (nan_y & is_signaling(y, fmt))
        return _predicate_result(result, invalid, return_flags)

    compare.__name__ = compare.__qualname__ = name
    compare.__doc__ = _COMPARISON_DOC.format(symbol=symbol, ieee=ieee, unordered_result=unordered_result,
                                             examples=examples)
    return compare


eq = _comparison("eq", np.equal, symbol="==", ieee="Equal", unordered_result=False, examples="""\
    >>> eq([0x0000, 0x3C00, 0x7E00], [0x8000, 0x3C00, 0x7E00], "fp16").tolist()
    [True, True, False]""")
ne = _comparison("ne", np.not_equal, symbol="!=", ieee="NotEqual", unordered_result=True, examples="""\
    >>> ne([0x0000, 0x3C00, 0x7E00], [0x8000, 0x3C00, 0x7E00], "fp16").tolist()
    [False, False, True]""")
lt = _comparison("lt", np.less, symbol="<", ieee="Less", unordered_result=False, examples="""\
    >>> lt([0xBC00, 0x8000, 0x7C00], [0x3C00, 0x0000, 0x7E00], "fp16").tolist()
    [True, False, False]
    >>> r, flags = lt(0x3C00, 0x7E00, "fp16", signaling=True, return_flags=True)
    >>> r, flags.raised()
    (False, ('invalid',))""")
le = _comparison("le", np.less_equal, symbol="<=", ieee="LessEqual", unordered_result=False, examples="""\
    >>> le([0x8000, 0x3C00], [0x0000, 0x7D00], "fp16").tolist()
    [True, False]""")
gt = _comparison("gt", np.greater, symbol=">", ieee="Greater", unordered_result=False, examples="""\
    >>> gt(0x7C00, 0x7BFF, "fp16"), gt(0x7E, 0x7F, "e4m3")
    (True, False)""")
ge = _comparison("ge", np.greater_equal, symbol=">=", ieee="GreaterEqual", unordered_result=False,
                 examples="""\
    >>> ge([0x0000, 0xFC00], [0x8000, 0xFC00], "fp16").tolist()
    [True, True]""")


def unordered(a, b, fmt, *, return_flags=False):
    """True where a or b is a NaN (IEEE compareQuietUnordered).

    Quiet: raises invalid only for signaling NaN operands.  ``~unordered`` is
    compareQuietOrdered.

    Examples
    --------
    >>> unordered([0x3C00, 0x7E00, 0x7C01], 0x3C00, "fp16").tolist()
    [False, True, True]
    >>> unordered(0x80, 0x00, "e4m3fnuz")
    True
    """
    fmt = as_format(fmt)
    if _dask.any_dask(a, b):
        return _dask.lift(unordered, (a, b), (fmt,), dict(return_flags=return_flags), np.dtype(bool),
                          return_flags is True)
    return_flags = _validate.boolean("return_flags", return_flags)
    (x, y), _ = operand_patterns(fmt, [("a", a), ("b", b)])
    nan_x, nan_y = nan_mask(x, fmt), nan_mask(y, fmt)
    invalid = (nan_x & is_signaling(x, fmt)) | (nan_y & is_signaling(y, fmt))
    return _predicate_result(nan_x | nan_y, invalid, return_flags)


# =====================================================================================
# total order (5.10)
# =====================================================================================
def total_order(a, b, fmt):
    """IEEE totalOrder(a, b): True where a precedes or equals b in the total order.

    The order is -NaN < -inf < negative numbers < -0 < +0 < positive numbers < +inf <
    +NaN, with NaNs of one sign ordered by their payload, and signaling below quiet for
    positive NaNs (above for negative ones).  totalOrder is quiet: it raises no flag,
    not even for signaling NaNs, so it has no ``return_flags``.

    fn formats: -NaN and +NaN sit at the two ends.  fnuz formats: the one NaN has no
    sign and sits above every number.

    Parameters
    ----------
    a, b : int or integer array_like
        Bit patterns of ``fmt`` (broadcast against each other).
    fmt : Format or str

    Returns
    -------
    ndarray of bool (a bool for scalar input)

    Examples
    --------
    >>> total_order([0x8000, 0x0000, 0x7E00, 0xFE00], [0x0000, 0x8000, 0x7C00, 0xFC00], "fp16").tolist()
    [True, False, False, True]
    >>> total_order(0x7C01, 0x7E00, "fp16")            # sNaN before qNaN
    True
    """
    fmt = as_format(fmt)
    if _dask.any_dask(a, b):
        return _dask.lift(total_order, (a, b), (fmt,), {}, np.dtype(bool))
    (x, y), _ = operand_patterns(fmt, [("a", a), ("b", b)])
    return _bool_result(_total_key(x, fmt) <= _total_key(y, fmt))


def total_order_mag(a, b, fmt):
    """IEEE totalOrderMag(a, b): totalOrder(|a|, |b|); see :func:`total_order`.

    Examples
    --------
    >>> total_order_mag(0xBC00, 0x4000, "fp16"), total_order_mag(0xC000, 0x3C00, "fp16")
    (True, False)
    """
    fmt = as_format(fmt)
    if _dask.any_dask(a, b):
        return _dask.lift(total_order_mag, (a, b), (fmt,), {}, np.dtype(bool))
    (x, y), _ = operand_patterns(fmt, [("a", a), ("b", b)])
    return _bool_result(_total_key(_magnitude(x, fmt), fmt) <= _total_key(_magnitude(y, fmt), fmt))


# =====================================================================================
# minimum and maximum (9.6)
# =====================================================================================
_MINMAX_DOC = """{summary} (IEEE {ieee}).

    Parameters
    ----------
    a, b : int or integer array_like
        Bit patterns of ``fmt`` (broadcast against each other).
    fmt : Format or str
    return_flags : bool, default False
        Also return the :class:`~softfloat.Flags` (only invalid can be raised).

    Returns
    -------
    ndarray of ``fmt.storage_dtype`` (a scalar for scalar input), and Flags with
    ``return_flags``

    Notes
    -----
    IEEE 754-2019 section 9.6.  -0 counts as less than +0{numpy_note}.
    {rules}
    A signaling NaN operand raises invalid.  The result is always one of the operands (a
    NaN quieted), so nothing is rounded.

    Examples
    --------
{examples}
"""

_NAN_PROPAGATES = "A NaN operand gives a quiet NaN."
_NUMBER_WINS = ("A number against a NaN (quiet or signaling) gives the number; two NaNs\n"
                "    give a quiet NaN.")


def _minmax(name, prefer, *, by_magnitude, number_wins, summary, ieee, examples, numpy_name=None):
    """A 9.6 operation: the operand ``prefer`` (less_equal for the minima, greater_equal
    for the maxima) picks by totalOrder keys -- of |a|, |b| first when ``by_magnitude``
    -- with NaNs handled by ``number_wins``."""
    def minmax(a, b, fmt, *, return_flags=False):
        fmt = as_format(fmt)
        if _dask.any_dask(a, b):
            return _dask.lift(minmax, (a, b), (fmt,), dict(return_flags=return_flags), fmt.storage_dtype,
                              return_flags is True)
        return_flags = _validate.boolean("return_flags", return_flags)
        (x, y), _ = operand_patterns(fmt, [("a", a), ("b", b)])
        nan_x, nan_y = nan_mask(x, fmt), nan_mask(y, fmt)
        kx, ky = _total_key(x, fmt), _total_key(y, fmt)
        take_x = prefer(kx, ky)
        if by_magnitude:  # |a| vs |b|; equal magnitudes fall back to the signed order
            mx, my = _total_key(_magnitude(x, fmt), fmt), _total_key(_magnitude(y, fmt), fmt)
            take_x = np.where(mx == my, take_x, prefer(mx, my))
        result = np.where(take_x, x, y)
        nan_result = _propagate_nan(x, y, nan_x, nan_y, fmt)
        if number_wins:
            result = np.where(nan_x & ~nan_y, y, np.where(nan_y & ~nan_x, x, result))
            result = np.where(nan_x & nan_y, nan_result, result)
        else:
            result = np.where(nan_x | nan_y, nan_result, result)
        invalid = (nan_x & is_signaling(x, fmt)) | (nan_y & is_signaling(y, fmt))
        return _bits_result(result, fmt, invalid, return_flags)

    rules = _NUMBER_WINS if number_wins else _NAN_PROPAGATES
    if by_magnitude:
        lesser = "lesser" if prefer is np.less_equal else "greater"
        rules += f"\n    Equal magnitudes give the {lesser} value."
    minmax.__name__ = minmax.__qualname__ = name
    numpy_note = f" (unlike ``numpy.{numpy_name}``)" if numpy_name else ""
    minmax.__doc__ = _MINMAX_DOC.format(summary=summary, ieee=ieee, numpy_note=numpy_note, rules=rules,
                                        examples=examples)
    return minmax


minimum = _minmax(
    "minimum", np.less_equal, by_magnitude=False, number_wins=False, ieee="minimum",
    summary="The lesser of a and b, NaN if either is NaN", numpy_name="minimum", examples="""\
    >>> [hex(v) for v in minimum([0x0000, 0x3C00, 0x3C00], [0x8000, 0x4000, 0x7E01], "fp16")]
    ['0x8000', '0x3c00', '0x7e01']""")
maximum = _minmax(
    "maximum", np.greater_equal, by_magnitude=False, number_wins=False, ieee="maximum",
    summary="The greater of a and b, NaN if either is NaN", numpy_name="maximum", examples="""\
    >>> [hex(v) for v in maximum([0x0000, 0x3C00, 0x3C00], [0x8000, 0x4000, 0x7C01], "fp16")]
    ['0x0', '0x4000', '0x7e01']""")
minimum_number = _minmax(
    "minimum_number", np.less_equal, by_magnitude=False, number_wins=True, ieee="minimumNumber",
    summary="The lesser of a and b, ignoring a NaN", numpy_name="fmin", examples="""\
    >>> [hex(v) for v in minimum_number([0x8000, 0x7E00, 0x7C01], [0x0000, 0x3C00, 0x3C00], "fp16")]
    ['0x8000', '0x3c00', '0x3c00']""")
maximum_number = _minmax(
    "maximum_number", np.greater_equal, by_magnitude=False, number_wins=True, ieee="maximumNumber",
    summary="The greater of a and b, ignoring a NaN", numpy_name="fmax", examples="""\
    >>> [hex(v) for v in maximum_number([0x8000, 0x7E00], [0x0000, 0xBC00], "fp16")]
    ['0x0', '0xbc00']""")
minimum_magnitude = _minmax(
    "minimum_magnitude", np.less_equal, by_magnitude=True, number_wins=False, ieee="minimumMagnitude",
    summary="The operand of lesser magnitude, NaN if either is NaN", examples="""\
    >>> [hex(v) for v in minimum_magnitude([0xC000, 0xBC00], [0x3C00, 0x3C00], "fp16")]
    ['0x3c00', '0xbc00']""")
maximum_magnitude = _minmax(
    "maximum_magnitude", np.greater_equal, by_magnitude=True, number_wins=False, ieee="maximumMagnitude",
    summary="The operand of greater magnitude, NaN if either is NaN", examples="""\
    >>> [hex(v) for v in maximum_magnitude([0xC000, 0xBC00], [0x3C00, 0x3C00], "fp16")]
    ['0xc000', '0x3c00']""")
minimum_magnitude_number = _minmax(
    "minimum_magnitude_number", np.less_equal, by_magnitude=True, number_wins=True,
    ieee="minimumMagnitudeNumber", summary="The operand of lesser magnitude, ignoring a NaN",
    examples="""\
    >>> [hex(v) for v in minimum_magnitude_number([0xC000, 0x7E00], [0x3C00, 0xBC00], "fp16")]
    ['0x3c00', '0xbc00']""")
maximum_magnitude_number = _minmax(
    "maximum_magnitude_number", np.greater_equal, by_magnitude=True, number_wins=True,
    ieee="maximumMagnitudeNumber", summary="The operand of greater magnitude, ignoring a NaN",
    examples="""\
    >>> [hex(v) for v in maximum_magnitude_number([0xC000, 0x7E00], [0x3C00, 0xBC00], "fp16")]
    ['0xc000', '0xbc00']""")


# =====================================================================================
# neighbours (5.3.1) and ulp
# =====================================================================================
def next_up(a, fmt, *, return_flags=False):
    """The least value of ``fmt`` greater than a (IEEE nextUp); exact, no rounding.

    Parameters
    ----------
    a : int or integer array_like
        Bit patterns of ``fmt``.
    fmt : Format or str
    return_flags : bool, default False
        Also return the :class:`~softfloat.Flags` (only invalid can be raised).

    Returns
    -------
    ndarray of ``fmt.storage_dtype`` (a scalar for scalar input), and Flags with
    ``return_flags``

    Notes
    -----
    IEEE 754-2019 5.3.1: next_up(+-0) is the smallest positive subnormal, next_up of the
    negative subnormal closest to zero is -0, next_up(+inf) = +inf, next_up(-inf) = -max.
    A NaN gives a quiet NaN; a signaling NaN raises invalid.  No other flag is raised.

    Formats without infinity (fn, fnuz, finite): max_finite has no successor and is
    returned unchanged, as IEEE returns +inf for +inf (it does not become NaN).  fnuz
    formats have no -0: next_up of the negative value closest to zero is +0.

    Examples
    --------
    >>> [hex(v) for v in next_up([0x8000, 0x0000, 0x3C00, 0x8001, 0x7BFF, 0xFC00], "fp16")]
    ['0x1', '0x1', '0x3c01', '0x8000', '0x7c00', '0xfbff']
    >>> hex(next_up(0x7E, "e4m3"))                       # 448 stays 448
    '0x7e'
    """
    return _step(a, fmt, +1, return_flags)


def next_down(a, fmt, *, return_flags=False):
    """The greatest value of ``fmt`` less than a (IEEE nextDown): -next_up(-a).

    See :func:`next_up` for the parameters and the formats without infinity (there
    next_down(-max_finite) = -max_finite, and next_down of the smallest positive
    subnormal is +0).

    Examples
    --------
    >>> [hex(v) for v in next_down([0x0000, 0x0001, 0x3C00, 0x7C00, 0xFBFF], "fp16")]
    ['0x8001', '0x0', '0x3bff', '0x7bff', '0xfc00']
    """
    return _step(a, fmt, -1, return_flags)


def ulp(a, fmt, *, return_flags=False):
    """The unit in the last place of a, as a bit pattern of ``fmt``.

    ulp(a) is the value of the last significand bit of a: 2**(max(e, emin) - mantissa_bits)
    for a in [2**e, 2**(e+1)), which is always a (positive) value of ``fmt`` -- between
    the smallest subnormal and the ulp of max_finite -- so it is returned as ``fmt``'s
    pattern, ready for the other ops.  This is Python's :func:`math.ulp` (not
    :func:`numpy.spacing`, which is negative for negative a and infinite at max_finite).

    Parameters
    ----------
    a : int or integer array_like
        Bit patterns of ``fmt``.
    fmt : Format or str
    return_flags : bool, default False
        Also return the :class:`~softfloat.Flags` (only invalid can be raised).

    Returns
    -------
    ndarray of ``fmt.storage_dtype`` (a scalar for scalar input), and Flags with
    ``return_flags``

    Notes
    -----
    ulp(+-0) is the smallest subnormal; ulp(+-inf) = +inf; a NaN gives a quiet NaN (a
    signaling NaN raises invalid).

    Examples
    --------
    >>> [hex(v) for v in ulp([0x3C00, 0xBC00, 0x0000, 0x7BFF, 0x0400, 0xFC00], "fp16")]
    ['0x1400', '0x1400', '0x1', '0x5000', '0x1', '0x7c00']
    """
    fmt = as_format(fmt)
    if _dask.is_dask(a):
        return _dask.lift(ulp, (a,), (fmt,), dict(return_flags=return_flags), fmt.storage_dtype,
                          return_flags is True)
    return_flags = _validate.boolean("return_flags", return_flags)
    (x,), _ = operand_patterns(fmt, [("a", a)])
    u = x.astype(np.uint64)
    m = np.uint64(fmt.mantissa_bits)
    biased = (u & np.uint64(fmt.sign_mask - 1)) >> m   # 0 for zeros and subnormals
    # the ulp of binade E is 2**(max(E, 1) - bias - m): a subnormal 0.0..010..0 (the 1 at
    # bit max(E, 1) - 1) while that stays below the implicit bit, else the normal
    # (E - m).000..0; both give 1 << m at E = m + 1
    e = np.maximum(biased, np.uint64(1))
    # np.where computes both sides: the normal side's E - m is taken from max(E, m) so that
    # it never wraps below zero (which numpy reports as an overflow on 0-d operands)
    result = np.where(e <= m + np.uint64(1), np.uint64(1) << (e - np.uint64(1)), (np.maximum(e, m) - m) << m)
    nan = nan_mask(x, fmt)
    if fmt.has_infinity:
        result = np.where(_magnitude(x, fmt) == fmt.infinity_bits, np.uint64(fmt.infinity_bits), result)
    result = np.where(nan, quieted(x, fmt).astype(np.uint64), result)
    return _bits_result(result.astype(fmt.storage_dtype), fmt, nan & is_signaling(x, fmt), return_flags)


def _step(a, fmt, direction, return_flags):
    """next_up (direction +1) or next_down (-1) as a step of the order key.

    Non-NaN values have consecutive keys -top .. top (top: the magnitude pattern of +inf,
    or of max_finite), with both zeros at 0; the step is clamped there.  A zero result
    keeps the operand's sign (next_up(-min_subnormal) = -0).
    """
    fmt = as_format(fmt)
    if _dask.is_dask(a):
        return _dask.lift(_step, (a,), (fmt, direction, return_flags), {}, fmt.storage_dtype,
                          return_flags is True)
    return_flags = _validate.boolean("return_flags", return_flags)
    (x,), _ = operand_patterns(fmt, [("a", a)])
    top = fmt.infinity_bits if fmt.has_infinity else fmt.max_finite_bits
    key = np.clip(_order_key(x, fmt) + direction, -top, top)
    mag = np.abs(key).astype(np.uint64)
    sign_bit = x.astype(np.uint64) & np.uint64(fmt.sign_mask)
    if not fmt.has_negative_zero:
        sign_bit = np.where(key == 0, np.uint64(0), sign_bit)
    negative = np.where(key == 0, sign_bit, np.where(key < 0, np.uint64(fmt.sign_mask), np.uint64(0)))
    result = (mag | negative).astype(fmt.storage_dtype)
    nan = nan_mask(x, fmt)
    result = np.where(nan, quieted(x, fmt), result)
    return _bits_result(result, fmt, nan & is_signaling(x, fmt), return_flags)


# =====================================================================================
# bit-level helpers
# =====================================================================================
def _magnitude(x, fmt: Format):
    """|x| as a pattern, except that the fnuz NaN (1.000..0) stays itself."""
    mag = x & x.dtype.type(fmt.sign_mask - 1)
    if fmt.specials is Specials.FNUZ:
        mag = np.where(x == x.dtype.type(fmt.sign_mask), x, mag)
    return mag


def _order_key(x, fmt: Format):
    """+mag or -mag as int64 (|mag| < 2**63 for every format): the numeric order of
    non-NaN patterns, -0 and +0 equal."""
    u = x.astype(np.int64) if x.dtype.itemsize < 8 else x.view(np.int64)
    mag = u & np.int64(fmt.sign_mask - 1)
    return np.where(mag != u, -mag, mag)


def total_order_keys(bits, fmt):
    """int64 keys of ``bits`` (patterns of ``fmt``) that sort as IEEE totalOrder: -NaN <
    -inf < ... < -0 < +0 < ... < +inf < +NaN (fnuz's NaN last): the Array layers' one
    totalOrder key (sorting, and the reductions' pick without NaNs).

    >>> total_order_keys([0xFC00, 0x8000, 0x0000, 0x7E00], "fp16").argsort().tolist()
    [0, 1, 2, 3]
    """
    fmt = as_format(fmt)
    return _total_key(np.asarray(bits).astype(fmt.storage_dtype, copy=False), fmt)


def _total_key(x, fmt: Format):
    """The totalOrder rank as int64: +mag, or -mag - 1 for a set sign bit (so -0 < +0);
    fnuz's unsigned NaN goes above everything."""
    u = x.astype(np.int64) if x.dtype.itemsize < 8 else x.view(np.int64)
    mag = u & np.int64(fmt.sign_mask - 1)
    key = np.where(mag != u, -mag - 1, mag)
    if fmt.specials is Specials.FNUZ:
        key = np.where(u == fmt.sign_mask, np.int64(fmt.sign_mask), key)
    return key


def _propagate_nan(x, y, nan_x, nan_y, fmt: Format):
    """The default platform's NaN rule for two operands: the first signaling NaN, else the
    first NaN, quieted (meaningful where either is a NaN)."""
    snan_x = nan_x & is_signaling(x, fmt)
    snan_y = nan_y & is_signaling(y, fmt)
    take_x = snan_x | (nan_x & ~snan_y)
    return quieted(np.where(take_x, x, y), fmt)


def _flags(invalid, shape):
    return Flags.none(shape)._replace(invalid=np.broadcast_to(invalid, shape).copy()).squeezed()


def _predicate_result(result, invalid, return_flags):
    out = _bool_result(result)
    return (out, _flags(invalid, np.shape(result))) if return_flags else out


def _bool_result(result):
    result = np.asarray(result)
    return bool(result) if result.ndim == 0 else result


def _bits_result(result, fmt: Format, invalid, return_flags):
    result = np.asarray(result, dtype=fmt.storage_dtype)
    out = result[()] if result.ndim == 0 else result
    return (out, _flags(invalid, result.shape)) if return_flags else out
