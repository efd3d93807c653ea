"""Statistics on :class:`~softfloat.Array`, each defined as a sequence of correctly
rounded steps in the format (sums in the context's accumulator, as ``np.sum``).

* ``mean``: the sum, then one correctly rounded division by the count (which need not be
  a value of the format) -- in the accumulator's format where it is wider (fp32 for
  fp16, bf16 and FP8, as numpy's float16 and torch's half-precision means compute),
  then rounded once into the format.
* ``var``: the mean (kept with ``keepdims``), the deviations ``a - mean`` and their squares
  (each rounded once), their sum in the accumulator, one division by ``n - ddof``;
  ``std``: ``sqrt(var)`` rounded once more.
* ``nansum``/``nanprod``/``nancumsum``/``nancumprod``: NaNs replaced by +0 (or 1), then the
  plain function; ``nanmean``/``nanvar``/``nanstd``: as above over the non-NaN elements;
  ``nanmax``/``nanmin``: IEEE maximumNumber / minimumNumber reductions (exact).
* ``quantile``/``percentile`` (and their nan- forms): the slice sorted (exact); numpy's
  ``method`` decides the virtual index ``v`` (numpy's own code run on the positions
  ``0..n-1``, in float64); with ``lo = floor(v)``, ``hi = min(lo + 1, n - 1)`` and
  ``g = v - lo``: ``g == 0`` gives ``a[lo]`` exactly (so ``lower``, ``higher``,
  ``nearest``, ``inverted_cdf`` and ``closest_observation`` never round); otherwise
  numpy's lerp, step by step: ``d = a[hi] - a[lo]`` rounded, then ``a[lo] + d * g`` for
  ``g < 0.5`` and ``a[hi] - d * (1 - g)`` otherwise, with ``g`` and ``1 - g`` rounded into
  the format once (weak scalars) and each product and sum rounded once.
  ``percentile(a, p)`` is ``quantile(a, p / 100)`` with ``p / 100`` in float64, as numpy.
* ``median``: the middle element exactly, or the mean (as ``mean``) of the two middle
  ones; ``nanmedian`` over the non-NaN elements of each slice.  A slice of these runs along
  ``axis``: one axis, a tuple of axes taken as one (as numpy's), or all of them.
* ``average`` with ``weights``: the products, their sum and the weights' sum (each
  rounded once), one division; ``cov``: the means, the deviations, their matrix
  product in the accumulator, one division by ``n - ddof``; ``corrcoef``: ``cov``
  divided by the square roots of its diagonal, clipped to [-1, 1].

A slice holding a NaN gives that NaN (the plain functions); an empty or all-NaN slice
gives NaN with invalid counted (0 / 0), and numpy's RuntimeWarning ("Mean of empty
slice", "Degrees of freedom <= 0 for slice", "All-NaN slice encountered") as numpy's
own functions give it; ``quantile``/``percentile`` of an empty slice raise IndexError, as
numpy's.  (numpy's floating-point warnings are the context's flags here.)

>>> import numpy as np, softfloat as sf
>>> x = sf.asarray([1.0, 2.0, 4.0, 8.0], "fp16")
>>> np.median(x), np.quantile(x, 0.5, method="lower"), np.nanmean(sf.asarray([1, np.nan, 2], "fp16"))
(Array(3.0, fmt=fp16), Array(2.0, fmt=fp16), Array(1.5, fmt=fp16))
"""

from __future__ import annotations

import math
import os
import sys
import warnings

import numpy as np

from . import _fastpaths, _validate, codec
from ._array_ordering import numpy_key
from ._array_keywords import axes_of, converted, reduce_with, selected_count
from ._array_registry import deliver, implements, plain, unsupported
from ._array_ufuncs import accumulator_of, plain_kernel, sum_of
from ._context import get_context
from ._flagmasks import FlagMasks, flags_of_code
from ._frames import outside
from ._random import bits_at, key_from
from ._workspace import Workspace
from .formats import Format, as_format, fp64
from .ops.convert import convert
from .ops.kernels import Target, default_nan, div_exact, div_kernel, nan_mask, round_block

__all__ = ["divide_by"]


def divide_by(A, x, n, operation: str):
    """x / n correctly rounded into x's format; ``n`` a count (an int, or ints that
    broadcast to x's shape) that need not be a value of the format.

    Not :func:`softfloat.ops.div`, which divides two values of one format and rounds into
    it: n is often no value of x's format (7 in FP4 E2M1, 1000 in FP8 E4M3), and dividing
    in a wider format and converting would round twice.  So the division kernel takes the
    float64 values (fp64: its path valid for any operands) and the result is rounded once
    into x's format (softfloat.ops.kernels); a NaN result is the context platform's
    default NaN.
    """
    ctx = get_context()
    fmt = x.format
    quotient = _one_quotient(A, x, n, operation, ctx)
    if quotient is None:
        quotient = _by_a_value(A, x, n, operation, ctx)
    if quotient is not None:
        return quotient
    values = np.asarray(codec.decode(x.bits, fmt), dtype=np.float64).reshape(-1)
    divisor = np.broadcast_to(np.asarray(n, dtype=np.float64), x.shape).reshape(-1).copy()
    attrs = ctx.attributes
    out = np.empty(values.shape, dtype=fmt.storage_dtype)
    rand = None if ctx.rng is None or ctx.rounding.value != "stochastic" else \
        bits_at(key_from(ctx.rng), np.arange(values.size, dtype=np.uint64))  # as the operations draw
    with np.errstate(all="ignore"):  # float64 overflow inside the kernel is its hazard lanes
        res = div_kernel(fp64, attrs, values, divisor)  # fp64: a kernel path for any operands
        fl = round_block(res, div_exact, [values, divisor], Target(fmt, attrs, ctx.track_flags), rand, out,
                         Workspace(values.size))
    nan = np.isnan(res.hi)
    out[nan] = default_nan(fmt, ctx.attributes)
    if not ctx.track_flags:
        return A.wrap(out.reshape(x.shape), fmt)
    fl.or_(FlagMasks(invalid=nan & ~np.isnan(values),
                     divide_by_zero=(divisor == 0) & np.isfinite(values) & (values != 0)))
    ctx.record(operation, fl.to_flags(x.shape))
    return A.wrap(out.reshape(x.shape), fmt)


def _finite_value(x):
    """The Python float of the one-element Array ``x`` (0-d, or keepdims' (1, ..., 1))
    where it is finite and non-zero (the scalar path's operand), else None; None too with
    softfloat._fastpaths off."""
    if x.size != 1:
        return None
    fmt = x.format
    values = _fastpaths.scalar_values(fmt, lambda patterns: codec.decode(patterns, fmt), finite=True)
    if values is None:
        return None
    v = values[int(x.bits.reshape(-1)[0])]
    return v if v - v == 0.0 and v != 0.0 else None


def _one_rounding(A, num: int, den: int, fmt, operation: str, ctx, shape=()):
    """The Array of ``shape`` (one element) holding ``num / den`` (exact; num != 0, den >
    0) rounded once into ``fmt`` by
    Python integer arithmetic (softfloat._fastpaths.scalar_ratio: the proof that it is the
    kernels' result, bits and flags), its flags counted under ``operation``; None where
    that path declines (overflow, flush-to-zero of a tiny value, stochastic rounding)."""
    attrs = ctx.attributes
    if not attrs.subnormals or ctx.rounding.value == "stochastic":
        return None
    found = _fastpaths.scalar_ratio(num < 0, abs(num), den, fmt, attrs)
    if found is None:
        return None
    pattern, code = found
    ctx.record(operation, flags_of_code(code, shape) if ctx.track_flags else None)
    return A.wrap(np.full(shape, pattern, dtype=fmt.storage_dtype), fmt)


def _one_quotient(A, x, n, operation: str, ctx):
    """:func:`divide_by` of a one-element Array holding a finite non-zero value by one positive
    int: the quotient correctly rounded by :func:`_one_rounding` (no NaN, no division by
    zero can arise), or None (the general path)."""
    if type(n) is not int or n <= 0:
        return None
    v = _finite_value(x)
    if v is None:
        return None
    num, den = v.as_integer_ratio()
    return _one_rounding(A, num, den * n, x.format, operation, ctx, x.shape)


def _by_a_value(A, x, n, operation: str, ctx):
    """The shortcut of :func:`divide_by` where the count ``n`` (one positive int) is a
    value of x's format and x holds no NaN: then x / n is the format's own division
    (softfloat.ops.div's kernel, as ``x / y`` on Arrays), the same correctly rounded
    quotient with the same flags.  None where it does not apply (stochastic rounding
    draws as the general path does; it stays there), or with softfloat._fastpaths off."""
    if not _fastpaths.ENABLED or np.ndim(n) or n <= 0 or ctx.rounding.value == "stochastic":
        return None
    fmt = x.format
    n = int(n)
    significand = n >> ((n & -n).bit_length() - 1)  # n without its trailing zero bits
    if significand.bit_length() > fmt.precision or n > fmt.max_finite or nan_mask(x.bits, fmt).any():
        return None  # n is no value of the format (a positive integer is one iff it fits both)
    pattern = codec.encode(float(n), fmt)
    result, flags = plain_kernel(np.divide)(fmt, ctx, x.bits, np.asarray(pattern, fmt.storage_dtype))
    ctx.record(operation, flags)
    return A.wrap(result, fmt)


#: the folders whose frames a warning skips, to point at the user's call (numpy's
#: dispatch and softfloat's layers between them)
_INSIDE = (os.path.dirname(os.path.abspath(codec.__file__)), os.path.dirname(os.path.abspath(np.__file__)))


def _slice_warning(condition, message: str) -> None:
    """numpy's RuntimeWarning ``message`` where any slice meets ``condition`` (empty, no
    degrees of freedom, all NaN), attributed to the first caller outside softfloat and
    numpy, as numpy's own warning is."""
    if not np.any(condition):
        return
    _, steps = outside(sys._getframe(), _INSIDE)  # (level 1: this frame)
    warnings.warn(message, RuntimeWarning, stacklevel=1 + steps)


def _count(a, axis, keepdims=False, where=True):
    """How many elements each slice along ``axis`` holds (selects, with ``where``)."""
    if where is not True:
        return selected_count(a, axis, where, keepdims)
    return math.prod(a.shape[ax] for ax in axes_of(a.ndim, axis))


@implements(np.mean)
def mean(A, a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """The sum in the context's accumulator, then one division by the count (of the
    selected elements, with ``where=``); ``dtype=`` converts first."""
    a = converted(a, "mean", dtype)
    count = _count(a, axis, keepdims, where)
    if type(count) is not int or count == 0:  # (an int count of a whole array: no call)
        _slice_warning(np.equal(count, 0), "Mean of empty slice")
    return deliver(A, _mean(A, a, axis, keepdims, where, count), out, "mean")


def _mean(A, a, axis, keepdims, where, count, operation="mean"):
    """The sum in the context's accumulator, one division by ``count``, one rounding into
    a's format, flags counted under ``operation`` (no warning: the callers give their own).

    Where the accumulator is a format wider than a's (fp32, the default for fp16, bf16
    and FP8), the sum stays in it and the division is done there, as numpy's float16
    mean (a float32 sum and division) and torch's half-precision means do: the mean of
    fp16 40000 and 40000 is 40000, not an overflow of their sum.  Otherwise the sum is
    rounded into a's format and divided there."""
    wide = _accumulator_format(a.format)
    if wide is None:
        return divide_by(A, _sum(A, a, axis, keepdims, where), count, operation)
    if where is True:  # (reduce_with's result without keywords, without its calls)
        total = sum_of(A, a, axis=axis, keepdims=keepdims, out_format=wide)
    else:
        total = reduce_with(A, lambda x, ax, kd: sum_of(A, x, axis=ax, keepdims=kd, out_format=wide), a, "sum",
                            axis, keepdims, where=where)  # (np.sum's keywords, the sum kept in the accumulator)
    return _converted(A, divide_by(A, total, count, operation), a.format, operation)


def _sum(A, x, axis, keepdims, where):
    """``np.sum(x, axis=axis, keepdims=keepdims, where=where)``; without ``where``, the
    array layer's sum (sum_of) directly, without numpy's dispatch."""
    if where is True:
        return sum_of(A, x, axis=axis, keepdims=keepdims)
    return np.sum(x, axis=axis, keepdims=keepdims, where=where)


def _accumulator_format(fmt):
    """The context's accumulator for sums of ``fmt`` where it is a Format wider than fmt
    (one that holds every fmt value), else None."""
    acc = accumulator_of(get_context(), fmt)
    key = (id(fmt), id(acc))
    found = _WIDE.get(key)
    if found is None or found[0] is not fmt or found[1] is not acc:
        found = _WIDE[key] = (fmt, acc, _wider(fmt, acc))
    return found[2]


#: (id(fmt), id(acc)) -> (fmt, acc, _wider(fmt, acc)): the entry holds both, so their ids
#: stay their own (a Format's hash and == read all its fields)
_WIDE: dict = {}


def _wider(fmt, acc):
    """``acc`` (a Format or a name) as a Format where it is wider than ``fmt``, else None."""
    if isinstance(acc, str):
        try:
            acc = as_format(acc)
        except ValueError:  # a hardware preset's name: its adder is no format
            return None
    return acc if isinstance(acc, Format) and acc != fmt and acc.holds(fmt) else None


def _converted(A, x, fmt, operation: str):
    """The Array ``x`` rounded once into ``fmt`` by the context, its flags counted under
    ``operation``."""
    ctx = get_context()
    v = _finite_value(x)
    if v is not None:  # one finite non-zero value: the scalar path, where it answers
        rounded = _one_rounding(A, *v.as_integer_ratio(), fmt, operation, ctx, x.shape)
        if rounded is not None:
            return rounded
    bits, flags = ctx.split(convert(x.bits, x.format, fmt, return_flags=ctx.track_flags, **ctx.options()))
    ctx.record(operation, flags)
    return A.wrap(np.asarray(bits), fmt)


@implements(np.var)
def var(A, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=np._NoValue,
        correction=np._NoValue):
    """mean, deviations a - mean, their squares, the sum of those in the accumulator,
    then one division by n - ddof: each step rounded once into the format.  ``mean=``
    (numpy's precomputed mean, keepdims-shaped) replaces the first step."""
    a = converted(a, "var", dtype)
    ddof = _validate.whole_number("ddof", correction if correction not in (None, np._NoValue) else ddof)
    count = _count(a, axis, keepdims, where)
    _slice_warning(np.less_equal(count - ddof, 0), "Degrees of freedom <= 0 for slice")
    m = _mean(A, a, axis, True, where, _count(a, axis, True, where)) if mean is np._NoValue or mean is None \
        else mean
    d = a - m
    return deliver(A, divide_by(A, _sum(A, d * d, axis, keepdims, where), count - ddof, "var"), out, "var")


@implements(np.std)
def std(A, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """sqrt(var), rounded once more."""
    return deliver(A, np.sqrt(var(A, a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, **kwargs)), out,
                   "std")


# ---- the nan- functions ---------------------------------------------------------------------
def _nan(a):
    return np.asarray(codec.is_nan(a.bits, a.format))


def _replace_nan(A, a, value):
    return A.wrap(np.where(_nan(a), A.bits_in(value, a.format, "nan-function"), a.bits), a.format)


@implements(np.nansum)
def nansum(A, a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    return np.sum(_replace_nan(A, a, 0.0), axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kwargs)


@implements(np.nanprod)
def nanprod(A, a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    return np.prod(_replace_nan(A, a, 1.0), axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kwargs)


@implements(np.nancumsum)
def nancumsum(A, a, axis=None, dtype=None, out=None):
    return np.cumsum(_replace_nan(A, a, 0.0), axis=axis, dtype=dtype, out=out)


@implements(np.nancumprod)
def nancumprod(A, a, axis=None, dtype=None, out=None):
    return np.cumprod(_replace_nan(A, a, 1.0), axis=axis, dtype=dtype, out=out)


@implements(np.nanmax)
def nanmax(A, a, axis=None, out=None, keepdims=False, initial=np._NoValue, where=True):
    result = np.fmax.reduce(a, axis=axis, keepdims=keepdims, initial=initial, where=where)
    _slice_warning(_nan(result), "All-NaN slice encountered")
    return deliver(A, result, out, "nanmax")


@implements(np.nanmin)
def nanmin(A, a, axis=None, out=None, keepdims=False, initial=np._NoValue, where=True):
    result = np.fmin.reduce(a, axis=axis, keepdims=keepdims, initial=initial, where=where)
    _slice_warning(_nan(result), "All-NaN slice encountered")
    return deliver(A, result, out, "nanmin")


@implements(np.nanmean)
def nanmean(A, a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """np.mean of the non-NaN elements (``where=``: of those selected); np.mean itself without NaNs."""
    nan = _nan(a)
    numbers = where if where is True and not nan.any() else np.logical_and(where, ~nan)
    return np.mean(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=numbers)


@implements(np.nanvar)
def nanvar(A, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None, **kwargs):
    """np.var(a, where=not NaN) (and ``where=``).  The NaNs take no part (numpy's zeroes
    their deviations): each stands in as its slice's mean (0 where that is not finite),
    an exact 0 deviation, so no NaN reaches the arithmetic (its small-array paths)."""
    a = converted(a, "var", dtype)
    nan = _nan(a)
    if nan.any():
        where = np.logical_and(where, ~nan)
        if mean is None or mean is np._NoValue:  # (a caller's mean is taken as it is)
            mean = _mean(A, a, axis, True, where, _count(a, axis, True, where))
            fill = np.where(codec.is_finite(mean.bits, a.format), mean.bits, a.format.storage_dtype.type(0))
            a = A.wrap(np.where(nan, fill, a.bits), a.format)
    return var(A, a, axis=axis, out=out, ddof=ddof, keepdims=keepdims, where=where, mean=mean, **kwargs)


@implements(np.nanstd)
def nanstd(A, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    return deliver(A, np.sqrt(nanvar(A, a, axis, dtype, None, ddof, keepdims, **kwargs)), out, "nanstd")


# ---- order statistics ---------------------------------------------------------------------
def _lanes(a, axis):
    """The slices along ``axis`` (an int, a tuple of axes as numpy takes, or None: all) as
    one last axis, sorted with NaNs last (numpy's order)."""
    if axis is None:
        bits = a.bits.reshape(-1)
    else:
        axes = axes_of(a.ndim, axis)
        kept = a.ndim - len(axes)
        moved = np.moveaxis(a.bits, axes, tuple(range(kept, a.ndim)))
        bits = moved.reshape(moved.shape[:kept] + (math.prod(a.shape[d] for d in axes),))
    order = np.argsort(numpy_key(bits, a.format), axis=-1, kind="stable")
    return np.take_along_axis(bits, order, axis=-1)


def _gather(srt, index):
    """srt[..., index] lane by lane; index has shape q.shape + lanes."""
    full = np.broadcast_to(srt, index.shape + srt.shape[-1:])
    return np.take_along_axis(full, index[..., None], axis=-1)[..., 0]


def _finish(A, a, result, spec):
    """NaN where a slice holds one (plain functions), keepdims, out=."""
    (axis, keepdims, skip_nan, srt, out, name) = spec
    if not skip_nan:
        has_nan = np.asarray(codec.is_nan(srt[..., -1], a.format)) if srt.shape[-1] else False
        result = A.wrap(np.where(has_nan, srt[..., -1] if srt.shape[-1] else 0, result.bits), a.format)
    if keepdims:
        lanes = (1,) * a.ndim if axis is None else np.expand_dims(np.empty(srt.shape[:-1]),
                                                                   axes_of(a.ndim, axis)).shape
        result = result.reshape(result.shape[:result.ndim - len(srt.shape[:-1])] + tuple(lanes))
    return deliver(A, result, out, name)


def _quantile(A, a, q, spec, method):
    (axis, keepdims, skip_nan, _, out, name) = spec
    if not A.is_array(a):  # an Array q brought numpy here: q is a probability, the data numpy's
        return getattr(np, name)(a, np.asarray(q, dtype=np.float64), axis=axis, out=out, method=method,
                                 keepdims=keepdims, **spec[3])
    if spec[3] is not None and not plain(spec[3]):
        raise unsupported(name, "weights= makes a weighted quantile: not defined step by step here")
    srt = _lanes(a, axis)
    nan = np.asarray(codec.is_nan(srt, a.format))
    length = srt.shape[-1]
    if not length and not skip_nan and math.prod(srt.shape[:-1]):
        raise IndexError(f"{name}: the slices along axis={axis} have no elements to take a quantile of "
                         f"(shape {a.shape}); numpy raises IndexError here too")
    count = (~nan).sum(axis=-1) if skip_nan else np.full(srt.shape[:-1], length)
    _empty_or_all_nan(length, count, skip_nan)
    qa = np.asarray(q, dtype=np.float64)
    pos = np.full(qa.shape + count.shape, np.nan)
    for n in np.unique(count):
        if n:
            pos[..., count == n] = np.quantile(np.arange(n, dtype=np.float64), qa, method=method)[..., None]
    empty = np.isnan(pos)
    pos = np.where(empty, 0, pos)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, np.maximum(count - 1, 0))
    g = pos - lo
    if length == 0:
        srt = np.zeros(srt.shape[:-1] + (1,), dtype=srt.dtype)
    a_lo, a_hi = A.wrap(_gather(srt, lo), a.format), A.wrap(_gather(srt, hi), a.format)
    result = a_lo
    if np.any(g != 0):
        d = a_hi - a_lo
        below = a_lo + d * A.wrap(A.bits_in(g, a.format, name), a.format)
        above = a_hi - d * A.wrap(A.bits_in(1.0 - g, a.format, name), a.format)
        result = np.where(g == 0, a_lo, np.where(g < 0.5, below, above))
    if np.any(empty):
        result = np.where(empty, divide_by(A, A.wrap(np.zeros(empty.shape, a.format.storage_dtype), a.format),
                                           0, name), result)
    return _finish(A, a, result, (axis, keepdims, skip_nan, srt if length else srt[..., :0], out, name))


@implements(np.quantile)
def quantile(A, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
             weights=None, interpolation=None):
    return _quantile(A, a, q, (axis, keepdims, False, {"weights": weights}, out, "quantile"), method)


@implements(np.nanquantile)
def nanquantile(A, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                weights=None, interpolation=None):
    return _quantile(A, a, q, (axis, keepdims, True, {"weights": weights}, out, "nanquantile"), method)


@implements(np.percentile)
def percentile(A, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
               weights=None, interpolation=None):
    q = np.asarray(q, dtype=np.float64)
    if A.is_array(a):
        q = np.true_divide(q, 100)
    return _quantile(A, a, q, (axis, keepdims, False, {"weights": weights}, out, "percentile"), method)


@implements(np.nanpercentile)
def nanpercentile(A, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                  weights=None, interpolation=None):
    q = np.asarray(q, dtype=np.float64)
    if A.is_array(a):
        q = np.true_divide(q, 100)
    return _quantile(A, a, q, (axis, keepdims, True, {"weights": weights}, out, "nanpercentile"), method)


def _empty_or_all_nan(length: int, count, skip_nan: bool) -> None:
    """numpy's warnings for order statistics: "Mean of empty slice" for empty slices, "All-NaN
    slice encountered" for the nan- functions' slices of NaNs only."""
    if not length:
        _slice_warning(count.size, "Mean of empty slice")
    elif skip_nan:
        _slice_warning(np.equal(count, 0), "All-NaN slice encountered")


def _median(A, a, spec):
    (axis, keepdims, skip_nan, _, out, name) = spec
    srt = _lanes(a, axis)
    count = (~np.asarray(codec.is_nan(srt, a.format))).sum(axis=-1) if skip_nan \
        else np.full(srt.shape[:-1], srt.shape[-1])
    _empty_or_all_nan(srt.shape[-1], count, skip_nan)
    if srt.shape[-1] == 0:
        srt = np.zeros(srt.shape[:-1] + (1,), dtype=srt.dtype)
    i0, i1 = np.maximum((count - 1) // 2, 0), np.maximum(count // 2, 0)
    pair = A.wrap(np.stack([_gather(srt, i0), _gather(srt, i1)], axis=-1), a.format)
    two = _mean(A, pair, -1, False, True, np.where(count == 0, 0, 2), name)
    result = A.wrap(np.where(i0 == i1, pair.bits[..., 0], two.bits), a.format)
    if np.any(count == 0):
        result = A.wrap(np.where(count == 0, two.bits, result.bits), a.format)
    return _finish(A, a, result, (axis, keepdims, skip_nan, _lanes(a, axis), out, name))


@implements(np.median)
def median(A, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return _median(A, a, (axis, keepdims, False, None, out, "median"))


@implements(np.nanmedian)
def nanmedian(A, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return _median(A, a, (axis, keepdims, True, None, out, "nanmedian"))


@implements(np.average)
def average(A, a, axis=None, weights=None, returned=False, *, keepdims=False):
    """Unweighted: ``mean``.  Weighted, numpy's steps: the products ``a * w`` (each
    rounded once; ``w`` a 1-d array along ``axis`` as numpy allows, weak unless an
    Array), their sum and the weights' sum in the accumulator, then one division."""
    if weights is None:
        result = mean(A, a, axis=axis, keepdims=keepdims)
        return (result, np.full_like(result, _count(a, axis, keepdims))) if returned else result
    fmt, (x, w) = A.common(a, weights)
    x, w = A.wrap(x, fmt), A.wrap(w, fmt)
    if w.shape != x.shape:
        if axis is None:
            raise TypeError("numpy.average: axis must be specified when shapes of a and weights differ")
        if w.ndim != 1 or not isinstance(axis, (int, np.integer)) or w.shape[0] != x.shape[axis]:
            raise ValueError(f"numpy.average: weights of shape {w.shape} do not match a's axis {axis} "
                             f"of length {x.shape[axis] if isinstance(axis, (int, np.integer)) else '?'}")
        w = np.moveaxis(np.broadcast_to(w, x.shape[:axis] + x.shape[axis + 1:] + w.shape), -1, axis)
    scale = np.sum(w, axis=axis, keepdims=keepdims)
    if np.any(scale == 0.0):
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    result = np.sum(x * w, axis=axis, keepdims=keepdims) / scale
    return (result, np.broadcast_to(scale, result.shape).copy()) if returned else result


@implements(np.cov)
def cov(A, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """numpy's steps: each variable's mean (``mean``), the deviations (rounded once), their
    products summed by a matrix product in the accumulator, one division by
    ``n - ddof`` (``ddof`` 1 unless ``bias``).  With ``fweights``/``aweights`` (numpy's
    float64 values, or Arrays), numpy's weighted steps: ``w`` their product, the weighted
    means and ``w_sum`` by ``np.average(..., returned=True)``, ``fact`` numpy's
    normalisation from them, ``d @ (d * w).T / fact``, each step rounded."""
    x = np.atleast_2d(converted(m, "cov", dtype) if A.is_array(m) else m)
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if y is not None:
        y = np.atleast_2d(converted(y, "cov", dtype) if A.is_array(y) else y)
        if not rowvar and y.shape[0] != 1:
            y = y.T
        x = np.concatenate([x, y], axis=0)
    ddof = (0 if bias else 1) if ddof is None else _validate.whole_number("ddof", ddof)
    w = _cov_weights(A, x.shape[1], fweights, aweights)
    if w is not None:
        return _weighted_cov(x, w, aweights, ddof)
    d = x - np.mean(x, axis=1, keepdims=True)
    return divide_by(A, d @ d.T, max(x.shape[1] - ddof, 0), "cov").squeeze()


def _cov_weights(A, n, fweights, aweights):
    """numpy's checks of cov's weights (its errors) and their product ``w`` (None: none)."""
    w = None
    for name, weights in (("fweights", fweights), ("aweights", aweights)):
        if weights is None:
            continue
        weights = weights if A.is_array(weights) else np.asarray(weights, dtype=float)
        if weights.ndim > 1:
            raise RuntimeError(f"cannot handle multidimensional {name}")
        if weights.shape[0] != n:
            raise RuntimeError(f"incompatible numbers of samples and {name}")
        if name == "fweights" and not np.all(weights == np.round(weights)):
            raise TypeError("fweights must be integer")
        if np.any(weights < 0):
            raise ValueError(f"{name} cannot be negative")
        w = weights if w is None else w * weights
    return w


def _weighted_cov(x, w, aweights, ddof):
    """numpy's weighted covariance steps (see :func:`cov`) on the Array ``x``."""
    avg, w_sum = np.average(x, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * np.sum(w * aweights) / w_sum
    if not fact > 0:
        _slice_warning(True, "Degrees of freedom <= 0 for slice")
        fact = 0.0
    d = x - avg[:, None]
    return (d @ (d * w).T / fact).squeeze()


@implements(np.corrcoef)
def corrcoef(A, x, y=None, rowvar=True, bias=np._NoValue, ddof=np._NoValue, *, dtype=None):
    """numpy's steps: ``cov``, the square roots of its diagonal, the division of every
    entry by the two (each rounded once), clipped to [-1, 1] (exact).  ``bias`` and
    ``ddof`` have no effect, as in numpy."""
    c = cov(A, x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    stddev = np.sqrt(np.diagonal(c))
    return np.clip(c / stddev[:, None] / stddev[None, :], -1, 1)
