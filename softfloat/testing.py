"""Assertions for your own tests: bit-exact equality and ulp distance between bit patterns.

Both take bit patterns of a format (ints or integer arrays, as :func:`softfloat.encode`
returns them), so they see what float comparisons hide: -0 against +0, one NaN payload
against another, a result one ulp off.  This module does not need hypothesis.
"""

from __future__ import annotations

import numpy as np

from . import _validate
from .codec import classify, decode, fields, is_nan
from .formats import Format, as_format

__all__ = ["assert_bits_equal", "assert_ulp_close", "ulp_distance"]

#: mismatches listed in full in a failure message
_SHOWN = 10


def assert_bits_equal(actual, expected, fmt, *, nan_equal=True):
    """Assert that two arrays of bit patterns of ``fmt`` are identical.

    +0 and -0 are different patterns and so never equal.  On failure the AssertionError
    says how many elements differ and, for the first ten, shows the index, both patterns
    in hex, their sign/exponent/fraction fields and their values.

    Parameters
    ----------
    actual, expected : int or integer array_like
        Bit patterns of ``fmt``; they must broadcast together.
    fmt : Format or str
    nan_equal : bool, default True
        Count any two NaNs as equal, whatever their signs and payloads.  False compares
        NaNs bit for bit like every other pattern.

    Raises
    ------
    AssertionError
        If a pattern differs (or the shapes do not broadcast).

    Examples
    --------
    >>> import numpy as np, softfloat as sf
    >>> x = np.array([1.0, -0.0, 1 + 2**-11])
    >>> assert_bits_equal(sf.encode(x, "fp16"), [0x3C00, 0x8000, 0x3C00], "fp16")
    >>> assert_bits_equal(sf.encode(x, "fp16", "upward"), [0x3C00, 0x0000, 0x3C00], "fp16")
    Traceback (most recent call last):
        ...
    AssertionError: 2 of 3 fp16 bit patterns differ (+0 and -0 distinct, any NaN equals any NaN):
      [1]  actual   0x8000 = 1 00000 0000000000 = -0.0
           expected 0x0000 = 0 00000 0000000000 = 0.0
      [2]  actual   0x3c01 = 0 01111 0000000001 = 1.0009765625
           expected 0x3c00 = 0 01111 0000000000 = 1.0
    """
    fmt = as_format(fmt)
    nan_equal = _validate.boolean("nan_equal", nan_equal)
    a, e = _pair(actual, expected, fmt)
    differ = a != e
    if nan_equal:
        differ &= ~(_nan_mask(a, fmt) & _nan_mask(e, fmt))
    if differ.any():
        rule = "any NaN equals any NaN" if nan_equal else "NaNs compared bit for bit"
        head = (f"{int(differ.sum())} of {differ.size} {fmt.name} bit patterns differ "
                f"(+0 and -0 distinct, {rule}):")
        raise AssertionError(_report(head, a, e, differ, fmt))


def assert_ulp_close(actual, expected, fmt, max_ulps):
    """Assert that bit patterns of ``fmt`` are at most ``max_ulps`` representable values apart.

    Distances are :func:`ulp_distance`: steps along the value order, so +0 and -0 are
    0 apart and the largest finite value is 1 from infinity.  A NaN matches only a NaN
    (any payload).

    Parameters
    ----------
    actual, expected : int or integer array_like
        Bit patterns of ``fmt``; they must broadcast together.
    fmt : Format or str
    max_ulps : int
        The largest allowed distance, >= 0.

    Raises
    ------
    AssertionError
        Listing the first ten elements that are further apart, with their distances.

    Examples
    --------
    >>> assert_ulp_close([0x3C01, 0x8000], [0x3C00, 0x0000], "fp16", max_ulps=1)
    >>> assert_ulp_close([0x3C03], [0x3C00], "fp16", max_ulps=2)
    Traceback (most recent call last):
        ...
    AssertionError: 1 of 1 fp16 value is more than 2 ulps apart:
      [0]  actual   0x3c03 = 0 01111 0000000011 = 1.0029296875
           expected 0x3c00 = 0 01111 0000000000 = 1.0
           actual is 3 ulps above expected
    """
    fmt = as_format(fmt)
    max_ulps = _validate.int_in_range("max_ulps", max_ulps, 0, 1 << 64)
    a, e = _pair(actual, expected, fmt)
    nan_a, nan_e = _nan_mask(a, fmt), _nan_mask(e, fmt)
    numbers = ~(nan_a | nan_e)
    distance = _distances(e, a, fmt)  # > 0: actual above expected; meaningless in NaN lanes
    far = (nan_a != nan_e) | (numbers & (np.abs(distance) > max_ulps))
    if far.any():
        n = int(far.sum())
        head = (f"{n} of {_validate.counted(far.size, fmt.name + ' value')} {'is' if n == 1 else 'are'} "
                f"more than {_ulps(max_ulps)} apart:")

        def note(index):
            if not numbers[index]:
                return "a NaN against a number"
            d = int(distance[index])
            return f"actual is {_ulps(abs(d))} {'above' if d > 0 else 'below'} expected"

        raise AssertionError(_report(head, a, e, far, fmt, note))


def ulp_distance(a, b, fmt):
    """Signed number of steps between the values of bit patterns ``a`` and ``b`` of ``fmt``.

    Positive when ``b`` lies above ``a``: ``ulp_distance(a, b) == n`` means that ``n``
    applications of nextUp take ``a`` to ``b``.  Patterns are mapped to integer keys that
    follow the IEEE total order (key = magnitude pattern, negated for negative numbers),
    so the count is exact across binades, subnormals and zero.

    - +0 and -0 are one value: their distance is 0, and -min_subnormal is 2 steps from
      +min_subnormal.
    - Infinities are one step beyond the largest finite value.
    - NaNs have no place in the order: a ValueError names the first one.

    Parameters
    ----------
    a, b : int or integer array_like
        Bit patterns of ``fmt``; they must broadcast together.
    fmt : Format or str

    Returns
    -------
    int for scalar inputs, else an int64 array (an object array of Python ints for the
    rare 64-bit distances beyond int64, such as -inf to +inf in fp64).

    Examples
    --------
    >>> ulp_distance(0x3C00, 0x3C01, "fp16"), ulp_distance(0x3C01, 0x3C00, "fp16")
    (1, -1)
    >>> ulp_distance(0x8001, 0x0001, "fp16")       # -min_subnormal -> +min_subnormal
    2
    >>> ulp_distance([0x7BFF, 0x0000], [0x7C00, 0x8000], "fp16").tolist()  # max -> inf, +0 -> -0
    [1, 0]
    """
    fmt = as_format(fmt)
    pa = _validate.bit_patterns("a", a, fmt.bits).astype(np.uint64)
    pb = _validate.bit_patterns("b", b, fmt.bits).astype(np.uint64)
    _validate.broadcast_shape([("a", pa), ("b", pb)])  # a ValueError here: this is no assertion
    pa, pb = np.broadcast_arrays(pa, pb)
    for name, p in (("a", pa), ("b", pb)):
        nan = _nan_mask(p, fmt)
        if nan.any():
            index = _index_text(np.unravel_index(int(np.argmax(nan)), p.shape))
            raise ValueError(
                f"ulp_distance is undefined for NaN: {name}{index} = {_hex(int(p[nan][0]), fmt)} is a "
                f"NaN of {fmt.name}; mask NaNs out (softfloat.is_nan) or compare them with assert_bits_equal"
            )
    result = _distances(pa, pb, fmt)
    return int(result) if np.ndim(result) == 0 else result


# =====================================================================================
# helpers
# =====================================================================================
def _pair(x, y, fmt: Format, names=("actual", "expected")):
    """Validate two pattern arrays and broadcast them, as uint64."""
    px = _validate.bit_patterns(names[0], x, fmt.bits).astype(np.uint64)
    py = _validate.bit_patterns(names[1], y, fmt.bits).astype(np.uint64)
    try:
        return np.broadcast_arrays(px, py)
    except ValueError:
        raise AssertionError(
            f"{names[0]} and {names[1]} have shapes {px.shape} and {py.shape}, which do not broadcast"
        ) from None


def _nan_mask(p: np.ndarray, fmt: Format) -> np.ndarray:
    return np.asarray(is_nan(p, fmt), dtype=bool)


def _keys(p: np.ndarray, fmt: Format) -> np.ndarray:
    """Monotone int64 keys of non-NaN patterns: the magnitude, negated when the sign is set.

        pattern  1|mag (negative)  ->  -mag          0|mag (positive)  ->  +mag

    so -0 and +0 share key 0.  A magnitude has at most 63 bits, so it fits int64.
    """
    mag = (p & np.uint64(fmt.sign_mask - 1)).astype(np.int64)
    return np.where((p >> np.uint64(fmt.bits - 1)) != 0, -mag, mag)


def _distances(pa: np.ndarray, pb: np.ndarray, fmt: Format) -> np.ndarray:
    ka, kb = _keys(pa, fmt), _keys(pb, fmt)
    if fmt.bits < 64:
        return kb - ka  # |keys| < 2**62: no overflow
    # 64-bit formats: a difference of keys of opposite signs can pass 2**63 - 1
    with np.errstate(over="ignore"):
        wide = (np.sign(ka) * np.sign(kb) < 0) & (np.abs(ka).astype(np.uint64) + np.abs(kb).astype(np.uint64)
                                                   > np.uint64(2**63 - 1))
    if not wide.any():
        return kb - ka
    return np.asarray(kb.astype(object) - ka.astype(object), dtype=object)  # Python ints: exact


def _report(head: str, a, e, bad, fmt: Format, note=None) -> str:
    """The failure text: the head line, then two lines per shown element (three with a
    ``note(index)``)."""
    where = np.argwhere(bad) if bad.ndim else np.zeros((1, 0), dtype=int)
    lines = [head]
    for index in where[:_SHOWN]:
        index = tuple(int(i) for i in index)
        lines.append(f"  {_index_text(index)}  actual   {_describe(int(a[index]), fmt)}")
        lines.append(f"  {' ' * len(_index_text(index))}  expected {_describe(int(e[index]), fmt)}")
        if note is not None:
            lines.append(f"  {' ' * len(_index_text(index))}  {note(index)}")
    if len(where) > _SHOWN:
        lines.append(f"  ... and {len(where) - _SHOWN} more")
    return "\n".join(lines)


def _ulps(n: int) -> str:
    return f"{n} ulp" if abs(n) == 1 else f"{n} ulps"


def _index_text(index) -> str:
    return "[" + ", ".join(str(int(i)) for i in index) + "]"


def _hex(pattern: int, fmt: Format) -> str:
    return f"0x{pattern:0{(fmt.bits + 3) // 4}x}"


def _describe(pattern: int, fmt: Format) -> str:
    """'0x3c01 = 0 01111 0000000001 = 1.0009765625': hex, fields, value."""
    sign, exponent, fraction = (int(f) for f in fields(pattern, fmt))
    grouped = f"{sign} {exponent:0{fmt.exponent_bits}b} {fraction:0{fmt.mantissa_bits}b}"
    if is_nan(pattern, fmt):
        value = classify(pattern, fmt)  # 'quietNaN' or 'signalingNaN'; the sign shows in the fields
    else:
        value = repr(float(decode(pattern, fmt)))
    return f"{_hex(pattern, fmt)} = {grouped} = {value}"
