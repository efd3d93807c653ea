"""The elementwise kernels behind numpy's ufuncs on :class:`~softfloat.Array`: bit
patterns in, bit patterns and flags out, with the context's attributes.

Each kernel is a composition of correctly rounded bit-level operations or is exact, as
listed in ``softfloat._array_ufuncs`` (the table's module docstring), except the float64
libm ones (``softfloat._array_libm``), rounded once from float64 libm and not correctly
rounded.
"""

from __future__ import annotations

import functools

import numpy as np

from . import _fastpaths, codec, ops
from ._array_libm import libm, rounded_once as _rounded_once
from ._context import get_context
from ._array_exact_lanes import floor_significand, ldexp_significand, merged, patched
from ._flagmasks import flags_of_code
from .formats import bf16, fp16
from .flags import Flags
from .ops.compare import total_order_keys
from .ops.kernels import nan_mask, small_arithmetic
from .rounding import Rounding

__all__ = ["LIBM", "MAX_REPEATED_POWER", "UFUNCS", "ldexp", "libm", "no_flags", "repeated_power"]

def _rounded(op):
    """A correctly rounded operation with the context's attributes: for + - * / and sqrt,
    first the operations' own shortcuts without the public call's checks (the operands
    are the Array's patterns, the attributes the context's: checked already)."""
    native = {ops.add: np.add, ops.sub: np.subtract, ops.mul: np.multiply, ops.div: np.divide,
              ops.sqrt: np.sqrt}.get(op)

    def call(fmt, ctx, *bits):
        if native is not None:
            found = small_arithmetic(native, fmt, bits, ctx.attributes, ctx.track_flags)
            if found is not None:
                return ctx.split(found)
        return ctx.split(op(*bits, fmt, return_flags=ctx.track_flags, attributes=ctx.attributes, rng=ctx.rng))
    return call


def _exact(op, flags=True):
    """An operation that never rounds (flags: invalid for signalling NaNs, where it has them)."""
    def call(fmt, ctx, *bits):
        if flags:
            return ctx.split(op(*bits, fmt, return_flags=ctx.track_flags))
        result = op(*bits, fmt)
        return result, _no_flags(ctx, np.shape(result))
    return call


def _pick(op, prefer):
    """IEEE maximum/minimum (and their Number forms): ``op``; the shortcut
    (softfloat._fastpaths.ENABLED) where neither operand holds a NaN: the operand of
    larger (``prefer`` greater_equal) or smaller totalOrder key, which is what all four
    pick without NaNs (+0 above -0), raising no flag -- for fp16, fp32, fp64 and bf16 by
    numpy's own maximum or minimum of the values (:func:`_pick_values`)."""
    exact = _exact(op)
    by_values = (np.maximum, np.bitwise_and) if prefer is np.greater_equal else (np.minimum, np.bitwise_or)

    def call(fmt, ctx, a, b):
        if _fastpaths.ENABLED:
            x, y = np.asarray(a), np.asarray(b)
            if x.dtype == y.dtype == fmt.storage_dtype:
                result = _pick_values(fmt, x, y, *by_values)
                if result is None and not (nan_mask(x, fmt).any() or nan_mask(y, fmt).any()):
                    result = np.where(prefer(total_order_keys(x, fmt), total_order_keys(y, fmt)), x, y)
                if result is not None and result is not _HAS_NAN:
                    return (result[()] if result.ndim == 0 else result), _no_flags(ctx, result.shape)
        return exact(fmt, ctx, a, b)
    return call


_HAS_NAN = object()


def _pick_values(fmt, x, y, pick, join):
    """:func:`_pick`'s result patterns for fp16, fp32, fp64 (their values viewed as
    numpy's float16/32/64) and bf16 (widened to float32 by a shift: exact), or
    _HAS_NAN where an operand holds a NaN, or None for another format.

    numpy's maximum and minimum propagate NaNs (one NaN result: declined) and otherwise
    return the larger or smaller operand itself, bits and all -- but of +0 and -0, which
    compare equal, its first: where both operands are zeros, the patterns' AND (maximum:
    -0 only from two -0s) or OR (minimum: -0 from any -0) is IEEE's zero."""
    native = fmt.native_dtype
    if native is not None:
        r = np.asarray(pick(x.view(native), y.view(native)))
        bits = r.view(fmt.storage_dtype)
    elif fmt is bf16 or (fmt.bits == 16 and fmt == bf16):  # a bf16 pattern is the top half of a float32's
        r = np.asarray(pick((x.astype(np.uint32) << _HALF).view(np.float32),
                            (y.astype(np.uint32) << _HALF).view(np.float32)))
        bits = (r.view(np.uint32) >> _HALF).astype(np.uint16)
    else:
        return None
    if np.count_nonzero(r != r):
        return _HAS_NAN
    return np.where((np.bitwise_or(x, y) << 1) == 0, join(x, y), bits)  # (both zeros: no bit but the signs)


_HALF = np.uint32(16)


def _no_flags(ctx, shape):
    """The flags of an exact operation: all clear (None when flags are not tracked; for a
    result of several elements, masks made only when read)."""
    if not ctx.track_flags:
        return None
    return Flags.none(shape) if shape == () else flags_of_code(0, shape)


def _integral(rounding):
    """round_to_integral in a fixed direction (which wins over the context's rounding; the
    context's platform still chooses NaN results).

    The shortcut (softfloat._fastpaths.ENABLED), where no NaN is there: numpy's own
    floor/ceil/trunc/rint of the values, exact, as round_to_integral is -- in a format
    numpy stores as itself (fp16, fp32, fp64) on the values in place, in any other whose
    integers up to 2**precision are values of it (bf16, FP8, FP4; not FP6 E2M3, whose
    ceil(7.5) overflows) on the exact float64 values, encoded back exactly.  An integral
    result is a value of the format (|x| >= 2**(p - 1) is integral already, and a
    non-integral x rounds to an integer of at most 2**(p - 1)), zeros keep their sign (+0
    in fnuz formats, which have no -0), infinities stay, and only a signalling NaN would
    raise a flag."""
    native_op = _NATIVE_INTEGRAL[rounding]

    def call(fmt, ctx, bits):
        if _fastpaths.ENABLED:
            result = _integral_values(fmt, np.asarray(bits), native_op)
            if result is not None:
                return (result[()] if result.ndim == 0 else result), _no_flags(ctx, result.shape)
        return ctx.split(ops.round_to_integral(bits, fmt, rounding, attributes=ctx.attributes,
                                               return_flags=ctx.track_flags))
    return call


def _integral_values(fmt, x, native_op):
    """:func:`_integral`'s shortcut: the result patterns, or None (a NaN, another format)."""
    native = fmt.native_dtype
    if native is not None and x.dtype == fmt.storage_dtype:
        values = x.view(native)
        return None if np.isnan(values).any() else native_op(values).view(fmt.storage_dtype)
    if 2 ** fmt.precision > fmt.max_finite or x.dtype != fmt.storage_dtype or nan_mask(x, fmt).any():
        return None
    return np.asarray(codec.encode(native_op(np.asarray(codec.decode(x, fmt), dtype=np.float64)), fmt),
                      dtype=fmt.storage_dtype)


#: numpy's rounding to integral values in each direction (exact in its own dtypes)
_NATIVE_INTEGRAL = {Rounding.DOWNWARD: np.floor, Rounding.UPWARD: np.ceil, Rounding.TOWARD_ZERO: np.trunc,
                    Rounding.NEAREST_EVEN: np.rint}


def _square(fmt, ctx, bits):
    return _rounded(ops.mul)(fmt, ctx, bits, bits)


def _reciprocal(fmt, ctx, bits):
    one = codec.encode(1.0, fmt)
    return _rounded(ops.div)(fmt, ctx, np.asarray(one, dtype=fmt.storage_dtype), bits)


def _positive(fmt, ctx, bits):
    return bits.copy(), _no_flags(ctx, bits.shape)


def _predicate(pred):
    def call(fmt, ctx, *bits):
        return np.asarray(pred(*bits, fmt))
    call.predicate = True  # a plain boolean result: no flags, not an Array
    return call


def _nextafter(fmt, ctx, x, y):
    """C99's nextafter (numpy's): the neighbour of x toward y, y where they are equal, a
    NaN where either is one.  No rounding, but C99 (Annex F.9.8.3), as IEEE 754-1985's
    appendix, raises overflow and inexact where a finite x steps to an infinity, and
    underflow and inexact where x steps to a subnormal or a zero (numpy's float32 and
    float64 raise them, through the C library); a signalling NaN operand is invalid."""
    x, y = np.broadcast_arrays(x, y)
    up = np.asarray(ops.lt(x, y, fmt))
    down = np.asarray(ops.gt(x, y, fmt))
    result = np.where(up, ops.next_up(x, fmt), np.where(down, ops.next_down(x, fmt), y))
    nan = np.asarray(ops.unordered(x, y, fmt))
    result = np.where(nan, fmt.nan_bits if fmt.has_nan else 0, result).astype(fmt.storage_dtype)
    if not ctx.track_flags:
        return result, None
    overflow, underflow = _step_flags(fmt, x, result, up | down)
    invalid = np.asarray(codec.is_signaling(x, fmt)) | np.asarray(codec.is_signaling(y, fmt))
    return result, Flags(invalid, np.zeros(result.shape, dtype=bool), overflow, underflow, overflow | underflow)


def _step_flags(fmt, x, result, stepped):
    """C99's overflow and underflow of nextafter's step from x to its neighbour
    ``result`` where ``stepped``: an infinity from a finite x, a subnormal or a zero."""
    overflow = stepped & np.asarray(codec.is_infinite(result, fmt)) & np.asarray(codec.is_finite(x, fmt))
    underflow = stepped & (np.asarray(codec.is_subnormal(result, fmt)) | np.asarray(codec.is_zero(result, fmt)))
    return overflow, underflow


def _spacing(fmt, ctx, x):
    """The distance to the next value away from zero, with x's sign (numpy's spacing:
    nextafter(x, +-inf) - x, so the step's C99 flags (:func:`_nextafter`) with the
    subtraction's)."""
    away = np.asarray(np.where(np.asarray(codec.is_sign_minus(x, fmt)), ops.next_down(x, fmt), ops.next_up(x, fmt)),
                      dtype=fmt.storage_dtype)
    result, flags = ctx.split(ops.sub(away, x, fmt, return_flags=ctx.track_flags))
    if flags is None:
        return result, None
    overflow, underflow = _step_flags(fmt, x, away, (away != x) & ~np.asarray(codec.is_nan(x, fmt)))
    clear = np.zeros(np.shape(x), dtype=bool)
    return result, flags | Flags(clear, clear, overflow, underflow, overflow | underflow)


def _repeated_power(fmt, ctx, x, exponent):
    """x ** n for a small integer n: left-to-right multiplication, then 1 / p for n < 0."""
    n = abs(exponent)
    if n == 0:
        result = np.full(np.shape(x), codec.encode(1.0, fmt), dtype=fmt.storage_dtype)
        return result, _no_flags(ctx, result.shape)
    p, flags = x, _no_flags(ctx, np.shape(x))
    steps = [lambda p: _rounded(ops.mul)(fmt, ctx, p, x)] * (n - 1)
    if exponent < 0:
        steps.append(lambda p: _reciprocal(fmt, ctx, np.asarray(p)))
    for step in steps:
        p, f = step(p)
        if f is not None:
            flags = flags | f
    return np.asarray(p), flags


# ---- floor_divide, remainder and their family: numpy's definitions, computed exactly ----
def _values(fmt, *bits):
    """The exact values as float64 (which holds every format's values); fp16's by numpy's
    float16 -> float64 cast, the same float64 bits as ``codec.decode``'s for every pattern,
    NaN payloads included (tests/test_array_programs_5.py checks all 65,536)."""
    if fmt is fp16:
        return [np.asarray(b).view(np.float16).astype(np.float64) for b in np.broadcast_arrays(*bits)]
    return [np.asarray(codec.decode(b, fmt), dtype=np.float64) for b in np.broadcast_arrays(*bits)]


def _fmod(fmt, ctx, a, b):
    """C's fmod, a - trunc(a / b) * b with a's sign: exact (float64's fmod is exact, and the
    result is a value of the format: a multiple of the smaller ulp, below |b|)."""
    x, y = _values(fmt, a, b)
    with np.errstate(all="ignore"):
        return _rounded_once(fmt, ctx, np.fmod(x, y), [x, y])


def _remainder(fmt, ctx, a, b):
    """numpy's (and Python's) remainder, with the sign of the divisor: r = fmod(a, b)
    (exact), then r + b correctly rounded where r is nonzero and its sign is not b's (the
    one rounding: -1e-3 % 1000 is 999.999, rounded); a zero r takes b's sign."""
    x, y = _values(fmt, a, b)
    with np.errstate(all="ignore"):
        mod, adjust = _mod_parts(x, y)
        values, slow = _remainder_values(ctx, y, mod, adjust)
    return _added(fmt, ctx, _rounded_once(fmt, ctx, values, [x, y]), (mod, b), slow)


def _mod_parts(x, y):
    """fmod(x, y) (exact) and where numpy's remainder adds y to it: a nonzero fmod whose
    sign is not y's."""
    mod = np.fmod(x, y)
    return mod, (mod != 0) & ~np.isnan(mod) & ((y < 0) != (mod < 0))


def _remainder_values(ctx, y, mod, adjust):
    """The remainder as float64 values for one rounding, and the lanes (``slow``) where
    mod + y must take the format's addition instead.  Fast2Sum: where adjust, |y| > |mod|
    and both are finite, so s = fl(mod + y) is the exact sum exactly where s - y == mod (an
    exact subtraction, Dekker 1971); always for fp16 and FP8 (their sums fit 53 bits),
    else where the sum spans at most 53 bits.  Off (every adjusted lane slow) without
    softfloat._fastpaths.ENABLED and under stochastic rounding, whose draws follow the
    one addition over every lane, as before the shortcut."""
    base = np.where(mod == 0, np.copysign(0.0, y), mod)
    if not _fastpaths.ENABLED or ctx.rounding is Rounding.STOCHASTIC:
        return base, adjust
    total = mod + y
    exact = adjust & (total - y == mod)
    return np.where(exact, total, base), adjust & ~exact


def _added(fmt, ctx, rounded, operands, slow):
    """``rounded`` (bits, flags) with the lanes ``slow`` replaced by mod + b, the format's
    correctly rounded addition with its flags (``operands``: mod as float64 values, exact
    in the format, and b's patterns).  Under stochastic rounding one addition of every
    lane, as before the shortcut (its key drawn once per call, its lanes numbered)."""
    stochastic = ctx.rounding is Rounding.STOCHASTIC
    if not stochastic and not slow.any():
        return rounded
    (result, flags), (mod, b) = rounded, operands
    lanes = np.arange(slow.size) if stochastic else np.flatnonzero(slow)
    base = np.array(result, dtype=fmt.storage_dtype).reshape(-1) if stochastic else \
        codec.encode(mod.reshape(-1)[lanes], fmt, **ctx.options())
    summed, sum_flags = _rounded(ops.add)(fmt, ctx, base, np.broadcast_to(b, slow.shape).reshape(-1)[lanes])
    chosen = slow.reshape(-1)[lanes]  # (all True but under stochastic rounding)
    part = None if flags is None else sum_flags._replace(
        **{n: np.broadcast_to(m, lanes.shape)[chosen] for n, m in sum_flags})
    return merged(rounded, lanes[chosen], np.asarray(summed, dtype=fmt.storage_dtype)[chosen], part)


def _floor_divide(fmt, ctx, a, b):
    """numpy's floor_divide: floor(a / b) of the exact quotient, rounded once into the
    format (numpy's npy_divmod: (a - fmod(a, b)) / b, one less where the remainder's sign
    is not b's; a zero takes the sign of a / b; b = 0 gives a / b).

    In float64 every step is exact while |a / b| < 2**(53 - p) (p the format's precision:
    then trunc(a / b) * b has at most 53 bits), which covers every pair of fp16 and FP8
    values.  Beyond that (bf16, fp32 and fp64 quotients that large: every fp64 quotient
    of at least 1/2) the lanes are computed exactly with integers (``_floor_significand``
    says how) and rounded once by the same rounding point a Python int goes through.
    """
    x, y = _values(fmt, a, b)
    with np.errstate(all="ignore"):
        quotient, wide = _floor_quotient(fmt, x, y, *_mod_parts(x, y))
    return _floor_exact(fmt, ctx, _rounded_once(fmt, ctx, quotient, [x, y]), (x, y), wide)


def _floor_quotient(fmt, x, y, mod, adjust):
    """floor(x / y) as float64 (see :func:`_floor_divide`), and the lanes too wide for it."""
    div = (x - mod) / y - adjust
    floor = np.floor(div)
    floor += (div - floor) > 0.5
    quotient = np.where(div == 0, np.copysign(0.0, x / y), floor)
    quotient = np.where(y == 0, x / y, quotient)
    return quotient, np.isfinite(x) & np.isfinite(y) & (y != 0) & ~(np.abs(x / y) < 2.0 ** (52 - fmt.precision))


def _floor_exact(fmt, ctx, rounded, operands, wide):
    """The rounded quotient with its ``wide`` lanes computed exactly, and divideByZero."""
    (result, flags), (x, y) = rounded, operands
    idx = np.flatnonzero(wide)
    if idx.size:
        result, flags = patched(fmt, ctx, (result, flags), idx, floor_significand(x.ravel()[idx], y.ravel()[idx]))
    if flags is None:
        return result, None
    return result, flags._replace(divide_by_zero=np.asarray(flags.divide_by_zero | ((y == 0) & np.isfinite(x) & (x != 0))))


def _divmod(fmt, ctx, a, b):
    """(floor_divide, remainder), each as defined above, from one fmod and one rounding of
    both (stochastic rounding: the two calls, whose draws each numbers by lane)."""
    if ctx.rounding is Rounding.STOCHASTIC:
        q, fq = _floor_divide(fmt, ctx, a, b)
        r, fr = _remainder(fmt, ctx, a, b)
        return (q, r), None if fq is None else fq | fr
    x, y = _values(fmt, a, b)
    with np.errstate(all="ignore"):
        mod, adjust = _mod_parts(x, y)
        quotient, wide = _floor_quotient(fmt, x, y, mod, adjust)
        values, slow = _remainder_values(ctx, y, mod, adjust)
    both, flags = _rounded_once(fmt, ctx, np.stack([quotient, values]), [x, y])
    q, fq = _floor_exact(fmt, ctx, (both[0], None if flags is None else Flags(*(m[0] for _, m in flags))),
                         (x, y), wide)
    r, fr = _added(fmt, ctx, (both[1], None if flags is None else Flags(*(m[1] for _, m in flags))), (mod, b), slow)
    return (q, r), None if fq is None else fq | fr


def _modf(fmt, ctx, a):
    """(x - trunc(x), trunc(x)), both exact, the fraction with x's sign (numpy's modf)."""
    (x,) = _values(fmt, a)
    with np.errstate(invalid="ignore"):  # modf(nan)
        fraction, whole = np.modf(x)
    (fb, ff), (wb, wf) = _rounded_once(fmt, ctx, fraction, [x]), _rounded_once(fmt, ctx, whole, [x])
    return (fb, wb), None if ff is None else ff | wf


def _frexp(fmt, ctx, a):
    """(m, e) with x = m * 2**e, 0.5 <= |m| < 1 (numpy's frexp): e a plain int32 array; m
    exact wherever the format holds [0.5, 1) at full precision (not FP4 E2M1, which lacks
    0.75: there m is rounded once)."""
    (x,) = _values(fmt, a)
    with np.errstate(invalid="ignore"):  # frexp(nan), frexp(inf)
        m, e = np.frexp(x)
    mb, mf = _rounded_once(fmt, ctx, m, [x])
    return (mb, e.astype(np.int32)), mf


def _ldexp(A, x, n):
    """x * 2**n rounded once (n an integer array, not a value to round)."""
    n = np.asarray(n)
    if not A.is_array(x) or A.is_array(n) or n.dtype.kind not in "iub":
        raise TypeError(f"numpy.ldexp on a softfloat.Array: x1 must be the Array and x2 integers (int or an "
                        f"integer ndarray); got {type(x).__name__} and {type(n).__name__} of {n.dtype}")
    fmt, ctx = x.format, get_context()
    (v,) = _values(fmt, x.bits)
    v, n = np.broadcast_arrays(v, n)
    low = fmt.emin - fmt.mantissa_bits  # the smallest subnormal's exponent
    # beyond these bounds the result is below 2**-64 of the smallest subnormal, or above
    # 2**64 times the largest finite: clamping n keeps its rounding (and its flags)
    k = np.clip(n, low - fmt.emax - 64, fmt.emax - low + 64).astype(np.int32)
    with np.errstate(all="ignore"):
        r = np.ldexp(v, k)  # exact where the result is a normal float64
        wide = np.isfinite(v) & (v != 0) & ~(np.isfinite(r) & (np.abs(r) >= 2.0 ** -1022))
    rounded = _rounded_once(fmt, ctx, r, [v])
    idx = np.flatnonzero(wide)
    result, flags = rounded
    if idx.size:
        result, flags = patched(fmt, ctx, rounded, idx, ldexp_significand(v.ravel()[idx], k.ravel()[idx]))
    ctx.record("ldexp", flags)
    return A.wrap(result, fmt)


def _truth(fmt, bits):
    """numpy's truth of a float: nonzero (a NaN is true)."""
    return ~np.asarray(codec.is_zero(bits, fmt))


def _sign_like(fmt, x, values):
    """``values`` (negative, zero, positive: exact constants as floats, or bit patterns as
    arrays) chosen by x's class; a NaN stays itself.  By the bits: the sign bit, and a
    zero magnitude that is no NaN (fnuz's NaN is "-0")."""
    neg, zero, pos = (_pattern(v, fmt) if isinstance(v, float) else v for v in values)
    x = np.asarray(x)
    nan = nan_mask(x, fmt)
    dt = x.dtype.type
    minus = (x & dt(fmt.sign_mask)) != 0
    is_zero = ((x & dt(fmt.sign_mask - 1)) == 0) & ~nan
    result = np.where(is_zero, zero, np.where(minus, neg, pos))
    return np.where(nan, x, result).astype(fmt.storage_dtype)


@functools.lru_cache(maxsize=256)
def _pattern(value: float, fmt):
    """The pattern of an exact constant (-1, 0, +1) in ``fmt``, made once per format."""
    return np.asarray(codec.encode(value, fmt), dtype=fmt.storage_dtype)


def _sign(fmt, ctx, x):
    """-1, 0 or +1 (exact; +0 for either zero, a NaN stays, as numpy's sign)."""
    result = _sign_like(fmt, x, (-1.0, 0.0, 1.0))
    return result, _no_flags(ctx, result.shape)


def _heaviside(fmt, ctx, x, h0):
    """0 below zero, h0 at either zero, 1 above (exact; a NaN stays)."""
    x, h0 = np.broadcast_arrays(x, h0)
    result = _sign_like(fmt, x, (0.0, h0, 1.0))
    return result, _no_flags(ctx, result.shape)


def _logical(op):
    def call(fmt, ctx, *bits):
        return np.asarray(op(*(_truth(fmt, b) for b in bits)))
    call.predicate = True
    return call


MAX_REPEATED_POWER = 64

UFUNCS = {
    np.add: _rounded(ops.add), np.subtract: _rounded(ops.sub), np.multiply: _rounded(ops.mul),
    np.divide: _rounded(ops.div), np.true_divide: _rounded(ops.div), np.sqrt: _rounded(ops.sqrt),
    np.square: _square, np.reciprocal: _reciprocal,
    np.floor: _integral(Rounding.DOWNWARD), np.ceil: _integral(Rounding.UPWARD),
    np.trunc: _integral(Rounding.TOWARD_ZERO), np.rint: _integral(Rounding.NEAREST_EVEN),
    np.negative: _exact(ops.neg, flags=False), np.positive: _positive,
    np.absolute: _exact(ops.abs, flags=False), np.fabs: _exact(ops.abs, flags=False),
    np.copysign: _exact(ops.copysign, flags=False),
    np.maximum: _pick(ops.maximum, np.greater_equal), np.minimum: _pick(ops.minimum, np.less_equal),
    np.fmax: _pick(ops.maximum_number, np.greater_equal), np.fmin: _pick(ops.minimum_number, np.less_equal),
}
_COMPARISONS = {np.equal: ops.eq, np.not_equal: ops.ne, np.less: ops.lt, np.less_equal: ops.le,
                np.greater: ops.gt, np.greater_equal: ops.ge}
for _ufunc, _op in _COMPARISONS.items():
    UFUNCS[_ufunc] = _predicate(_op)
UFUNCS.update({np.isnan: _predicate(codec.is_nan), np.isinf: _predicate(codec.is_infinite),
               np.isfinite: _predicate(codec.is_finite), np.signbit: _predicate(codec.is_sign_minus),
               np.nextafter: _nextafter, np.spacing: _spacing})
#: computed in float64 libm and rounded once: NOT correctly rounded
LIBM = (np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p, np.sin, np.cos, np.tan,
        np.arcsin, np.arccos, np.arctan, np.sinh, np.cosh, np.tanh, np.arcsinh, np.arccosh,
        np.arctanh, np.cbrt, np.arctan2, np.hypot, np.logaddexp, np.logaddexp2,
        np.deg2rad, np.rad2deg, np.degrees, np.radians)
UFUNCS.update({u: libm(u) for u in LIBM})
UFUNCS.update({np.conjugate: _positive, np.sign: _sign, np.heaviside: _heaviside,
               np.floor_divide: _floor_divide, np.remainder: _remainder, np.fmod: _fmod, np.divmod: _divmod,
               np.modf: _modf, np.frexp: _frexp,
               np.logical_and: _logical(np.logical_and), np.logical_or: _logical(np.logical_or),
               np.logical_xor: _logical(np.logical_xor), np.logical_not: _logical(np.logical_not)})



ldexp, no_flags, repeated_power = _ldexp, _no_flags, _repeated_power
