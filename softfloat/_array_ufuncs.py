"""numpy ufuncs on :class:`~softfloat.Array`: each one mapped to a bit-level operation.

* correctly rounded, with the context's attributes: add, subtract, multiply, divide /
  true_divide, sqrt, square (x * x), reciprocal (1 / x), floor / ceil / trunc / rint
  (round_to_integral downward / upward / toward zero / to nearest even), power with a
  small integer exponent (repeated multiplication left to right, then one division for
  a negative exponent: as hardware kernels do it, not a correctly rounded x**n);
* exact (no rounding): negative, positive, absolute / fabs, copysign, maximum / minimum
  (IEEE 754-2019 maximum/minimum: a NaN wins, -0 < +0), fmax / fmin (maximumNumber /
  minimumNumber: a NaN loses), nextafter, spacing, comparisons (bool ndarrays, IEEE
  quiet predicates), isnan / isinf / isfinite / signbit;
* through float64 libm: exp, log, sin, tanh, ... (and scipy.special's erf, erfc, expit,
  gammaln, ... when scipy calls them) and power with other exponents are
  computed in float64 from the exact inputs and rounded once into the format.  float64
  libm is faithful, not correctly rounded, so such results are not correctly rounded in
  general; they raise inexact on every finite result;
* reductions: ``np.add.reduce`` is :func:`softfloat.sum` with the context's accumulator;
  ``np.maximum.reduce`` and friends are exact.

Anything else returns NotImplemented, and numpy raises its TypeError.

This module works on bit patterns; what it needs of the Array type (making one, reading
operands into a common format) comes in as an adapter from ``softfloat.array``, which
sits above it.
"""

from __future__ import annotations

import operator

import numpy as np

from . import codec, ops
from .accumulate import matmul as accumulate_matmul
from .accumulate import sum as accumulate_sum
from .accumulate.reduce import default_accumulator
from ._context import get_context
from .flags import Flags
from .platforms import NanPropagation
from .ops.kernels import default_nan
from .rounding import Rounding

__all__ = ["UFUNCS", "accumulator_of", "dispatch", "matmul", "sum_of"]


def _rounded(op):
    """A correctly rounded operation with the context's attributes."""
    def call(fmt, ctx, *bits):
        return ctx.split(op(*bits, fmt, return_flags=ctx.track_flags, **ctx.options()))
    return call


def _exact(op, flags=True):
    """An operation that never rounds (flags: invalid for signalling NaNs, where it has them)."""
    def call(fmt, ctx, *bits):
        if flags:
            return ctx.split(op(*bits, fmt, return_flags=ctx.track_flags))
        result = op(*bits, fmt)
        return result, _no_flags(ctx, np.shape(result))
    return call


def _no_flags(ctx, shape):
    """The flags of an exact operation: all clear (None when flags are not tracked)."""
    return Flags.none(shape) if ctx.track_flags else None


def _integral(rounding):
    """round_to_integral in a fixed direction (which wins over the context's rounding; the
    context's platform still chooses NaN results)."""
    def call(fmt, ctx, bits):
        return ctx.split(ops.round_to_integral(bits, fmt, rounding, attributes=ctx.attributes,
                                               return_flags=ctx.track_flags))
    return call


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
    x, y = np.broadcast_arrays(x, y)
    up = np.asarray(ops.lt(x, y, fmt))
    down = np.asarray(ops.gt(x, y, fmt))
    result = np.where(up, ops.next_up(x, fmt), np.where(down, ops.next_down(x, fmt), y))
    nan = np.asarray(ops.unordered(x, y, fmt))
    result = np.where(nan, fmt.nan_bits if fmt.has_nan else 0, result).astype(fmt.storage_dtype)
    return result, _no_flags(ctx, result.shape)


def _spacing(fmt, ctx, x):
    """The distance to the next value away from zero, with x's sign (numpy's spacing)."""
    away = np.where(np.asarray(codec.is_sign_minus(x, fmt)), ops.next_down(x, fmt), ops.next_up(x, fmt))
    return ctx.split(ops.sub(np.asarray(away, dtype=fmt.storage_dtype), x, fmt, return_flags=ctx.track_flags))


def _libm(ufunc):
    """float64 libm on the exact values, rounded once; inexact on every finite result,
    invalid (and the platform's default NaN) where a NaN comes from operands that are not
    NaNs (log(-1), (-1) ** 0.5); NaN operands give the default NaN too on platforms that
    always return it."""
    def call(fmt, ctx, *bits):
        operands = [np.asarray(codec.decode(b, fmt)) for b in bits]
        with np.errstate(all="ignore"):
            values = ufunc(*operands)
        result, flags = ctx.split(codec.encode(values, fmt, return_flags=ctx.track_flags, **ctx.options()))
        invalid = np.isnan(values)
        for x in operands:
            invalid &= ~np.isnan(x)
        result = np.asarray(result)
        always_default = ctx.platform.nan_propagation is NanPropagation.DEFAULT_NAN  # RISC-V, NVIDIA
        result[np.isnan(values) if always_default else invalid] = default_nan(fmt, ctx.attributes)
        if flags is None:
            return result, None
        return result, flags._replace(inexact=np.asarray(flags.inexact | np.isfinite(values)),
                                      invalid=np.asarray(flags.invalid | invalid))
    return call


def _power(fmt, ctx, x, y, exponent):
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


_MAX_REPEATED_POWER = 64

UFUNCS = {
    np.add: _rounded(ops.add), np.subtract: _rounded(ops.sub), np.multiply: _rounded(ops.mul),
    np.divide: _rounded(ops.div), np.true_divide: _rounded(ops.div), np.sqrt: _rounded(ops.sqrt),
    np.square: _square, np.reciprocal: _reciprocal,
    np.floor: _integral(Rounding.DOWNWARD), np.ceil: _integral(Rounding.UPWARD),
    np.trunc: _integral(Rounding.TOWARD_ZERO), np.rint: _integral(Rounding.NEAREST_EVEN),
    np.negative: _exact(ops.neg, flags=False), np.positive: _positive,
    np.absolute: _exact(ops.abs, flags=False), np.fabs: _exact(ops.abs, flags=False),
    np.copysign: _exact(ops.copysign, flags=False),
    np.maximum: _exact(ops.maximum), np.minimum: _exact(ops.minimum),
    np.fmax: _exact(ops.maximum_number), np.fmin: _exact(ops.minimum_number),
}
_COMPARISONS = {np.equal: ops.eq, np.not_equal: ops.ne, np.less: ops.lt, np.less_equal: ops.le,
                np.greater: ops.gt, np.greater_equal: ops.ge}
for _ufunc, _op in _COMPARISONS.items():
    UFUNCS[_ufunc] = _predicate(_op)
UFUNCS.update({np.isnan: _predicate(codec.is_nan), np.isinf: _predicate(codec.is_infinite),
               np.isfinite: _predicate(codec.is_finite), np.signbit: _predicate(codec.is_sign_minus),
               np.nextafter: _nextafter, np.spacing: _spacing})
LIBM = (np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p, np.sin, np.cos, np.tan,
        np.arcsin, np.arccos, np.arctan, np.sinh, np.cosh, np.tanh, np.arcsinh, np.arccosh,
        np.arctanh, np.cbrt, np.arctan2, np.hypot, np.logaddexp, np.logaddexp2)
UFUNCS.update({u: _libm(u) for u in LIBM})


#: scipy.special's functions of reals taken like the libm ones (scipy is never imported:
#: the ufunc arrives with the call)
_SCIPY_SPECIAL = frozenset({"erf", "erfc", "erfinv", "erfcinv", "expit", "logit", "gamma", "gammaln",
                            "digamma", "log_ndtr", "ndtr", "ndtri", "i0", "sinc"})


def _is_scipy_special(ufunc) -> bool:
    """A one-argument ufunc by one of those names (numpy has none of them; scipy's carry no
    module of their own to check)."""
    return ufunc.__name__ in _SCIPY_SPECIAL and ufunc.nin == 1 and ufunc.nout == 1


def _integer_exponent(y):
    """A Python/numpy integer (or integral float) scalar exponent, else None."""
    if hasattr(y, "format") or np.ndim(y) != 0 or isinstance(y, (bool, np.bool_)):
        return None
    try:
        n = operator.index(y)
    except TypeError:
        if isinstance(y, (float, np.floating)) and float(y).is_integer():
            n = int(y)
        else:
            return None
    return n if abs(n) <= _MAX_REPEATED_POWER else None


def dispatch(A, ufunc, method, inputs, kwargs):
    """NEP 13's __array_ufunc__ for Arrays (``A``: the Array type's adapter)."""
    out = kwargs.pop("out", None)
    if method == "reduce":
        return _reduce(A, ufunc, inputs, kwargs, out)
    if method != "__call__" or kwargs or not all(A.is_array(a) or isinstance(a, (np.ndarray, int, float, np.number))
                                                 for a in inputs):
        return NotImplemented
    ctx = get_context()
    if ufunc is np.power and _integer_exponent(inputs[1]) is not None and A.is_array(inputs[0]):
        fmt, (base,) = A.common(inputs[0])  # the exponent is a count, not a value to round
        result, flags = _power(fmt, ctx, base, None, _integer_exponent(inputs[1]))
    elif ufunc is np.matmul:
        return _store(A, matmul(A, *inputs), out)
    else:
        impl = UFUNCS.get(ufunc) if ufunc is not np.power else _libm(np.power)
        if impl is None and _is_scipy_special(ufunc):
            impl = _libm(ufunc)
        if impl is None:
            return NotImplemented
        fmt, bits = A.common(*inputs)
        if getattr(impl, "predicate", False):  # a plain boolean array
            result = impl(fmt, ctx, *bits)
            return result[()] if result.ndim == 0 else result
        result, flags = impl(fmt, ctx, *bits)
    ctx.record(ufunc.__name__, flags)
    return _store(A, A.wrap(result, fmt), out)


def _store(A, result, out):
    if out is None:
        return result
    target = out[0] if isinstance(out, tuple) else out
    if not A.is_array(target):
        return NotImplemented
    target[...] = result
    return target


def _reduce(A, ufunc, inputs, kwargs, out):
    (x,) = inputs
    axis = kwargs.pop("axis", 0)
    keepdims = kwargs.pop("keepdims", False)
    if kwargs.pop("dtype", None) is not None or kwargs.get("initial", np._NoValue) is not np._NoValue \
            or kwargs.get("where", True) is not True or not A.is_array(x):
        return NotImplemented
    if ufunc is np.add:
        return _store(A, sum_of(A, x, axis=axis, keepdims=keepdims), out)
    if ufunc in (np.maximum, np.minimum, np.fmax, np.fmin):
        return _store(A, _pick(A, UFUNCS[ufunc], x, axis, keepdims), out)
    return NotImplemented


def _pick(A, impl, x, axis, keepdims):
    """maximum/minimum over ``axis`` by halving it (exact: the order does not matter)."""
    bits = x.bits.reshape(-1) if axis is None else np.moveaxis(x.bits, axis, 0)
    if bits.shape[0] == 0:
        raise ValueError("zero-size array to reduction operation which has no identity")
    ctx = get_context()
    flags = _no_flags(ctx, bits.shape[1:])
    while bits.shape[0] > 1:
        half = bits.shape[0] // 2
        picked, f = impl(x.format, ctx, bits[:half], bits[half:2 * half])
        if f is not None:
            flags = flags | Flags(*(np.any(m, axis=0) for _, m in f))
        bits = np.concatenate([np.asarray(picked), bits[2 * half:]])
    result = bits[0]
    if keepdims:
        axes = tuple(range(x.ndim)) if axis is None else axis
        result = np.expand_dims(result, axes)
        if flags is not None:
            flags = Flags(*(np.expand_dims(m, axes) for _, m in flags))
    ctx.record("reduce", flags)
    return A.wrap(result, x.format)


def accumulator_of(ctx, fmt):
    """The context's accumulator, or the default one for ``fmt`` (fp32 for narrower)."""
    return ctx.accumulator if ctx.accumulator is not None else default_accumulator(fmt)


def matmul(A, a, b):
    """:func:`softfloat.matmul` with the context's accumulator and order, rounded into the
    operands' (promoted) format."""
    fmt, (x, y) = A.common(a, b)
    ctx = get_context()
    acc = accumulator_of(ctx, fmt)
    bits, flags = ctx.split(accumulate_matmul(x, y, fmt, accumulator=acc, out_format=fmt, order=ctx.order,
                                              return_flags=ctx.track_flags, **ctx.options()))
    ctx.record("matmul", flags)
    return A.wrap(bits, fmt)


def sum_of(A, x, axis=None, keepdims=False):
    """:func:`softfloat.sum` with the context's accumulator and order, rounded into x's format."""
    ctx = get_context()
    acc = accumulator_of(ctx, x.format)
    bits, flags = ctx.split(accumulate_sum(x.bits, x.format, axis=axis, keepdims=keepdims, accumulator=acc,
                                           out_format=x.format, order=ctx.order, return_flags=ctx.track_flags,
                                           **ctx.options()))
    ctx.record("sum", flags)
    return A.wrap(bits, x.format)
