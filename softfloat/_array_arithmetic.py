"""Arithmetic numpy functions on :class:`~softfloat.Array` defined as compositions of the
Array's correctly rounded operations (one rounding per elementary operation, sums in the
context's accumulator):

* ``trace``: the diagonal (exact), summed as ``np.sum`` sums;
* ``outer``, ``kron``: every product rounded once; ``cross``: ``a1 * b2 - a2 * b1`` per
  component, each product and difference rounded once;
* ``diff``: differences of neighbours, each rounded once, the n-th order by iterating;
  ``ediff1d`` likewise on the flattened array;
* ``cumprod``: running products left to right, each rounded once into the format (so its
  last element equals ``np.prod``);
* ``correlate``: ``c[k] = sum_n a[n + k] * v[n]`` over the overlapping terms only (n
  ascending), each a dot product in the accumulator (exact products, one rounding into
  the format), as ``np.vecdot``; ``convolve(a, v)`` is ``correlate(a, v[::-1])`` (the
  longer operand first, as numpy); the modes ``full``, ``same`` and ``valid`` are numpy's
  (every c[k] of ``full`` is computed, and its flags counted as one operation);
* ``gradient``: numpy's steps for a uniform spacing (scalars): interior ``(f[2:] -
  f[:-2]) / (2. * h)``, edges ``(f[1] - f[0]) / h`` (``edge_order=2``: ``a * f0 + b * f1
  + c * f2`` with numpy's coefficients), the scalars computed as numpy computes them and
  rounded into the format as operands, each step rounded once; coordinates (1-d, as
  numpy takes them) give their differences ``dx``, one scalar where all are equal, else
  numpy's non-uniform coefficients ``a = -dx2 / (dx1 * (dx1 + dx2))``, ... and ``a *
  f[:-2] + b * f[1:-1] + c * f[2:]``: from Array coordinates every step rounded, from
  numpy's (float64) numpy's values rounded once as operands; ``trapezoid``: ``(d * (y[1:]
  + y[:-1]) / 2.0)`` step by step, summed as ``np.sum``;
* ``interp``: numpy's algorithm (``compiled_base.c``) with each step rounded once in the
  operands' common format: ``left``/``right`` outside, ``fp[j]`` where ``x == xp[j]``,
  else ``slope * (x - xp[j]) + fp[j]`` with ``slope = (fp[j+1] - fp[j]) / (xp[j+1] -
  xp[j])``, and numpy's fallbacks where that is NaN; a NaN x gives itself;
* ``round``/``around``: numpy's own composition with correct roundings -- ``decimals=0``
  is round_to_integral to nearest even (exact); ``decimals=d > 0`` is ``rint(x * s) / s``
  and ``d < 0`` is ``rint(x / s) * s``, where ``s = 10**|d|`` is rounded once into the
  format (a weak scalar, as numpy's float16 round does) and each step rounds once.  For
  fp16 that is numpy float16's own result bit for bit.

>>> import numpy as np, softfloat as sf
>>> x = sf.asarray([1.0, 1.5, 4.0], "fp16")
>>> np.diff(x).tolist(), np.round(sf.asarray(2.675, "fp32"), 2).tolist()
([0.5, 2.5], 2.680000066757202)
"""

from __future__ import annotations

import math
import operator

import numpy as np

from . import _fastpaths, _validate
from ._array_keywords import axes_of, converted
from ._array_chains import running_products
from ._array_registry import deliver, implements, unsupported
from ._array_ufuncs import accumulator_of
from ._context import get_context
from .accumulate import vecdot as accumulate_vecdot
from .accumulate.hardware import FusedAccumulator, is_preset
from .flags import FLAG_NAMES, AccumulationFlags
from .rounding import Rounding

__all__: list[str] = []


@implements(np.trace)
def trace(A, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    a = converted(a, "trace", dtype)
    d = A.wrap(np.diagonal(a.bits, offset=offset, axis1=axis1, axis2=axis2), a.format)
    return deliver(A, np.sum(d, axis=-1), out, "trace")


@implements(np.outer)
def outer(A, a, b, out=None):
    return deliver(A, np.multiply(np.reshape(a, (-1, 1)), np.reshape(b, (1, -1))), out, "outer")


@implements(np.kron)
def kron(A, a, b):
    """Every product a[i] * b[j] rounded once, laid out as numpy's kron."""
    fmt, (x, y) = A.common(a, b)
    nd = max(np.ndim(x), np.ndim(y))
    x, y = np.reshape(x, (1,) * (nd - np.ndim(x)) + np.shape(x)), np.reshape(y, (1,) * (nd - np.ndim(y)) + np.shape(y))
    xs = x.reshape(sum(((n, 1) for n in x.shape), ()))
    ys = y.reshape(sum(((1, n) for n in y.shape), ()))
    prod = np.multiply(A.wrap(xs, fmt), A.wrap(ys, fmt))
    return prod.reshape(tuple(p * q for p, q in zip(x.shape, y.shape)))


@implements(np.cross)
def cross(A, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """3-vectors: (a1 b2 - a2 b1, a2 b0 - a0 b2, a0 b1 - a1 b0), each step rounded once."""
    if axis is not None:
        axisa = axisb = axisc = axis
    fmt, (x, y) = A.common(a, b)
    x, y = A.wrap(np.moveaxis(x, axisa, -1), fmt), A.wrap(np.moveaxis(y, axisb, -1), fmt)
    if x.shape[-1] != 3 or y.shape[-1] != 3:
        return NotImplemented
    parts = [x[..., i] * y[..., j] - x[..., j] * y[..., i] for i, j in ((1, 2), (2, 0), (0, 1))]
    return np.moveaxis(np.stack(parts, axis=-1), -1, axisc)


def _shifted(x, axis, lo, hi):
    index = [slice(None)] * x.ndim
    index[axis] = slice(lo, hi)
    return x[tuple(index)]


@implements(np.diff)
def diff(A, a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    """a[1:] - a[:-1] along ``axis`` (each rounded once), ``n`` times; ``prepend`` and
    ``append`` rounded into the format (weak) and joined first."""
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    x = a
    (axis,) = axes_of(np.ndim(a.bits if A.is_array(a) else a), axis)
    parts = []
    for extra in (prepend, append):
        if extra is np._NoValue:
            parts.append(None)
            continue
        if np.ndim(extra) == 0:  # (numpy broadcasts a scalar, x[0] as well, along the axis)
            shape = list(np.shape(x))
            shape[axis] = 1
            extra = np.broadcast_to(extra, tuple(shape)) if A.is_array(extra) else np.full(shape, extra, np.float64)
        parts.append(extra)
    pieces = [p for p in (parts[0], x, parts[1]) if p is not None]
    if len(pieces) > 1:
        x = np.concatenate(pieces, axis=axis)
    for _ in range(n):
        x = _shifted(x, axis, 1, None) - _shifted(x, axis, None, -1)
    return x


@implements(np.ediff1d)
def ediff1d(A, ary, to_end=None, to_begin=None):
    fmt, _ = A.common(*(v for v in (ary, to_end, to_begin) if v is not None))
    ary = A.wrap(A.bits_in(ary, fmt, "ediff1d"), fmt)  # (an ndarray with Array ends: weak, as in h - x)
    parts = [np.diff(np.ravel(ary))]
    if to_begin is not None:
        parts.insert(0, A.wrap(np.ravel(A.bits_in(to_begin, fmt, "ediff1d")), fmt))
    if to_end is not None:
        parts.append(A.wrap(np.ravel(A.bits_in(to_end, fmt, "ediff1d")), fmt))
    return np.concatenate(parts)


@implements(np.cumprod)
def cumprod(A, a, axis=None, dtype=None, out=None):
    """Running products left to right, each rounded once (softfloat._array_chains)."""
    a = converted(a, "cumprod", dtype)
    bits = a.bits.reshape(-1) if axis is None else np.moveaxis(a.bits, axis, 0)
    running = running_products(A, bits, a.format) if bits.shape[0] else np.empty_like(bits)
    result = A.wrap(running if axis is None else np.moveaxis(running, 0, axis), a.format)
    return deliver(A, result, out, "cumprod")


def _cumulative(A, x, name: str, keywords: dict, identity: float):
    """numpy's array-API ``cumulative_sum``/``cumulative_prod``: ``cumsum``/``cumprod``
    along one axis (required beyond one dimension; a 0-d Array counts as 1-d), and with
    ``include_initial`` the identity first (exact: +0 or 1)."""
    axis, dtype, out = keywords["axis"], keywords["dtype"], keywords["out"]
    if x.ndim > 1 and axis is None:
        raise ValueError(f"numpy.{name}: axis= is required for an Array of more than one dimension; "
                         f"got shape {x.shape}")
    x = converted(x, name, dtype).reshape(-1) if x.ndim == 0 else converted(x, name, dtype)
    axis = axes_of(x.ndim, 0 if axis is None else axis)[0]
    result = (np.cumsum if identity == 0.0 else np.cumprod)(x, axis=axis)
    if keywords["include_initial"]:
        shape = list(result.shape)
        shape[axis] = 1
        first = np.full(shape, A.bits_in(identity, x.format, name), dtype=x.format.storage_dtype)
        result = np.concatenate([A.wrap(first, x.format), result], axis=axis)
    return deliver(A, result, out, name)


if hasattr(np, "cumulative_sum"):  # numpy >= 2.1
    @implements(np.cumulative_sum)
    def cumulative_sum(A, x, axis=None, dtype=None, out=None, include_initial=False):
        """``np.cumsum`` along ``axis``, with ``include_initial`` a +0 first."""
        keywords = dict(axis=axis, dtype=dtype, out=out, include_initial=include_initial)
        return _cumulative(A, x, "cumulative_sum", keywords, 0.0)

    @implements(np.cumulative_prod)
    def cumulative_prod(A, x, axis=None, dtype=None, out=None, include_initial=False):
        """``np.cumprod`` along ``axis``, with ``include_initial`` a 1 first."""
        keywords = dict(axis=axis, dtype=dtype, out=out, include_initial=include_initial)
        return _cumulative(A, x, "cumulative_prod", keywords, 1.0)


@implements(np.round, np.around)
def round_(A, a, decimals=0, out=None):
    """rint at a decimal scale (see the module docstring)."""
    # an int, as numpy takes it (1.5 scaled by 10**1.5; beyond 10**308 float64 overflows)
    decimals = _validate.int_in_range("decimals", decimals, -308, 308)
    if decimals == 0:
        result = np.rint(a)
    else:
        scale = A.wrap(A.bits_in(10.0 ** abs(decimals), a.format, "round"), a.format)
        result = np.rint(a * scale) / scale if decimals > 0 else np.rint(a / scale) * scale
    return deliver(A, result, out, "round")


@implements(np.fix)
def fix(A, x, out=None):
    """round_to_integral toward zero (exact)."""
    return deliver(A, np.trunc(x), out, "fix")


def _full_correlation(A, a, v, name: str):
    """Every c[k] of ``correlate(a, v, "full")`` (k = -(N - 1) .. M - 1): dot products of
    the overlapping terms, as np.vecdot makes them (:func:`softfloat.vecdot`, the
    context's accumulator, order and options, rounded once into the format), counted in
    the context as one operation ``name``.  The outputs of equal overlap are computed
    together; where padding is exact (:func:`_padding`), every output in one call."""
    m, n = a.shape[0], v.shape[0]
    ks = np.arange(-(n - 1), m)
    lo, hi = np.maximum(0, -ks), np.minimum(n, m - ks)  # n runs over [lo, hi)
    fmt, (abits, vbits) = A.common(a, v)
    ctx = get_context()
    acc = accumulator_of(ctx, fmt)

    def dot(x, y):
        return ctx.split(accumulate_vecdot(x, y, fmt, accumulator=acc, out_format=fmt, order=ctx.order,
                                           return_flags=ctx.track_flags, **ctx.options()))
    pad = _padding(ctx, acc, fmt)
    if pad is not None:  # each output's terms, then (last in the chain) the products pad * +0
        j = np.arange(n) if ctx.order == "sequential" else np.arange(n) - n + (hi - lo)[:, None]
        inside = (j >= 0) & (j < (hi - lo)[:, None])
        terms = np.where(inside, lo[:, None] + j, 0)
        x = np.where(inside, abits[np.where(inside, terms + ks[:, None], 0)], fmt.storage_dtype.type(pad))
        y = np.where(inside, vbits[terms], fmt.storage_dtype.type(0))
        out, flags = dot(x, y)
    else:
        out = np.empty(ks.size, dtype=fmt.storage_dtype)
        masks = {f: np.zeros(ks.size, bool) for f in FLAG_NAMES} if ctx.track_flags else None
        swamped = np.zeros(ks.size, np.int64)
        for length in np.unique(hi - lo):
            rows = np.flatnonzero(hi - lo == length)
            terms = lo[rows, None] + np.arange(length)
            out[rows], found = dot(abits[terms + ks[rows, None]], vbits[terms])
            if found is not None:
                for f in FLAG_NAMES:
                    masks[f][rows] = getattr(found, f)
                swamped[rows] = found.swamped
        flags = None if masks is None else AccumulationFlags(**masks, swamped=swamped)
    ctx.record(name, flags)
    return A.wrap(out, fmt)


def _padding(ctx, acc, fmt):
    """The pattern of a zero that adds nothing to a running sum, or None where padding
    each dot product with such zeros after its terms is not exactly the dot product
    without them (also where softfloat._fastpaths.ENABLED, the shortcuts' switch, is off).

    Why the padded chain is the same: in a sequential chain of IEEE additions in a
    deterministic mode (reverse order: the pads come first in memory, last in the
    chain), s + z for the zero z = -0 (+0 under downward, and in formats without -0) is
    exactly s, for every running sum s -- a non-zero or non-finite s is unchanged, and
    the zero sums follow IEEE 754-2019 6.3: -0 + -0 = -0 and +0 + -0 = +0, but under
    downward +0 + +0 = +0 and -0 + +0 = -0.  s is a value of the accumulator already, so
    its rounding is exact in every mode (flushing subnormals or not) and raises no flag;
    a zero addend is never swamped; the product z * (+0) is z, exact, and no signalling
    NaN; the final rounding into the format sees the same s.  Not taken for pairwise
    order (the tree changes), a hardware accumulator (its groups of terms change) or
    stochastic rounding (each call draws a key from the context's generator, and the
    draws are numbered by k)."""
    if (not _fastpaths.ENABLED or ctx.order not in ("sequential", "reverse") or isinstance(acc, FusedAccumulator)
            or is_preset(acc) or ctx.rounding is Rounding.STOCHASTIC):
        return None
    if ctx.rounding is Rounding.DOWNWARD or not fmt.has_negative_zero:
        return 0
    return fmt.sign_mask


def _correlation(A, a, v, mode: str, name: str):
    a, v = (x if A.is_array(x) else np.asarray(x) for x in (a, v))  # (a list of taps: np.convolve(x, [1, 2, 1]))
    if np.ndim(a) != 1 or np.ndim(v) != 1:
        raise ValueError(f"numpy.{name}: object too deep for desired array (both operands must be 1-d)")
    if np.shape(a)[0] == 0 or np.shape(v)[0] == 0:
        raise ValueError(f"numpy.{name}: {'a' if np.shape(a)[0] == 0 else 'v'} cannot be empty")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"numpy.{name}: mode must be one of 'full', 'same' or 'valid'; got {mode!r}")
    m, n = np.shape(a)[0], np.shape(v)[0]
    full = _full_correlation(A, a, v, name)
    if mode == "full":
        return full
    if mode == "valid":
        return full[min(m, n) - 1: max(m, n)]
    start = (n - 1) // 2 if m >= n else m // 2  # numpy's centring
    return full[start: start + max(m, n)]


@implements(np.correlate)
def correlate(A, a, v, mode="valid"):
    return _correlation(A, a, v, mode, "correlate")


@implements(np.convolve)
def convolve(A, a, v, mode="full"):
    if np.ndim(v) == 1 and np.ndim(a) == 1 and np.shape(v)[0] > np.shape(a)[0]:
        a, v = v, a
    return _correlation(A, a, v[::-1] if np.ndim(v) == 1 else v, mode, "convolve")


@implements(np.gradient)
def gradient(A, f, *varargs, axis=None, edge_order=1):
    """numpy's gradient, step by step (module docstring): a uniform spacing (a scalar, or
    coordinates whose differences are all equal) or numpy's non-uniform coefficients."""
    f = f if A.is_array(f) else np.asanyarray(f)  # (an Array among the spacings brought numpy here)
    axes = axes_of(f.ndim, axis)
    if not varargs:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacing = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacing = [_spacing(A, f, ax, h) for ax, h in zip(axes, varargs)]
    else:
        raise TypeError("numpy.gradient: invalid number of arguments")
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported")
    outs = []
    for ax, h in zip(axes, spacing):
        if f.shape[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at least "
                             "(edge_order + 1) elements are required.")

        def part(start, stop):
            return f[tuple(slice(start, stop) if d == ax else slice(None) for d in range(f.ndim))]
        if np.ndim(h) != 0:
            outs.append(_nonuniform(part, h, [-1 if d == ax else 1 for d in range(f.ndim)], ax, edge_order))
            continue
        interior = (part(2, None) - part(None, -2)) / (2. * h)
        if edge_order == 1:
            first = (part(1, 2) - part(0, 1)) / h
            last = (part(-1, None) - part(-2, -1)) / h
        else:
            first = (-1.5 / h) * part(0, 1) + (2. / h) * part(1, 2) + (-0.5 / h) * part(2, 3)
            last = (0.5 / h) * part(-3, -2) + (-2. / h) * part(-2, -1) + (1.5 / h) * part(-1, None)
        outs.append(np.concatenate([first, interior, last], axis=ax))
    return tuple(outs) if len(outs) > 1 else outs[0]


def _spacing(A, f, ax, h):
    """numpy's reading of one axis's spacing: a scalar as it is; 1-d coordinates (an Array,
    or an array-like read by numpy, integers as float64) become their differences, one
    scalar where they are all equal."""
    if np.ndim(h) == 0:
        return h
    if not A.is_array(h):
        h = np.asanyarray(h)
        h = h.astype(np.float64) if np.issubdtype(h.dtype, np.integer) else h
    if h.ndim != 1:
        raise ValueError("numpy.gradient: distances must be either scalars or 1d")
    if h.shape[0] != f.shape[ax]:
        raise ValueError("numpy.gradient: when 1d, distances must match the length of the corresponding dimension")
    d = np.diff(h)
    return d[0] if bool(np.all(d == d[0])) else d


def _nonuniform(part, dx, shape, ax, edge_order):
    """numpy's non-uniform gradient along ``ax`` from the differences ``dx`` (an Array: each
    step rounded; numpy's values: computed by numpy, then weak operands), in numpy's order."""
    dx1, dx2 = dx[:-1], dx[1:]
    a = np.reshape(-(dx2) / (dx1 * (dx1 + dx2)), shape)
    b = np.reshape((dx2 - dx1) / (dx1 * dx2), shape)
    c = np.reshape(dx1 / (dx2 * (dx1 + dx2)), shape)
    interior = a * part(None, -2) + b * part(1, -1) + c * part(2, None)
    if edge_order == 1:
        first = (part(1, 2) - part(0, 1)) / dx[0]
        last = (part(-1, None) - part(-2, -1)) / dx[-1]
    else:
        dx1, dx2 = dx[0], dx[1]
        first = (-(2. * dx1 + dx2) / (dx1 * (dx1 + dx2)) * part(0, 1) + (dx1 + dx2) / (dx1 * dx2) * part(1, 2)
                 + -dx1 / (dx2 * (dx1 + dx2)) * part(2, 3))
        dx1, dx2 = dx[-2], dx[-1]
        last = (dx2 / (dx1 * (dx1 + dx2)) * part(-3, -2) + -(dx2 + dx1) / (dx1 * dx2) * part(-2, -1)
                + (2. * dx2 + dx1) / (dx2 * (dx1 + dx2)) * part(-1, None))
    return np.concatenate([first, interior, last], axis=ax)


@implements(np.linspace)
def linspace(A, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """numpy's linspace with an Array endpoint (``np.linspace(x.min(), x.max(), n)``), numpy's
    steps in the endpoints' format, as numpy float16's are in float16: ``delta = stop -
    start``, ``step = delta / div``, ``y = arange(num) * step`` (``y / div * delta`` where
    the step is zero), ``y + start``, the last element ``stop`` with ``endpoint``; each step
    rounded once (``arange(num)`` and ``div`` rounded into the format as operands)."""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = (num - 1) if endpoint else num
    fmt, bits = A.common(start, stop)
    start, stop = (A.wrap(np.asarray(b), fmt) for b in bits)
    delta = stop - start
    y = np.reshape(A.wrap(A.bits_in(np.arange(num, dtype=np.float64), fmt, "linspace"), fmt),
                   (-1,) + (1,) * delta.ndim)
    step = delta / div if div > 0 else A.wrap(A.bits_in(math.nan, fmt, "linspace"), fmt)
    if div > 0:
        y = y / div * delta if np.any(step == 0) else y * step
    else:
        y = y * delta
    y = y + start
    if endpoint and num > 1:
        y[-1, ...] = stop
    if axis != 0:
        y = np.moveaxis(y, 0, axis)
    if dtype is not None:
        y = np.floor(y).astype(dtype) if np.issubdtype(np.dtype(dtype), np.integer) else y.astype(dtype)
    return (y, step) if retstep else y


@implements(np.logspace)
def logspace(A, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """numpy's ``base ** linspace(start, stop, ...)``: the linspace above, then the power
    (a libm result rounded once, as ``np.power`` on Arrays)."""
    y = np.power(base, linspace(A, start, stop, num=num, endpoint=endpoint, axis=axis))
    return y if dtype is None else y.astype(dtype)


@implements(np.trapezoid)
def trapezoid(A, y, x=None, dx=1.0, axis=-1):
    """numpy's composite trapezoidal rule, step by step (module docstring)."""
    n = np.ndim(y)
    if x is None:
        d = dx
    elif np.ndim(x) == 1:  # the spacing along axis
        if n and np.shape(x)[0] != np.shape(y)[axis % n]:
            raise ValueError(f"numpy.trapezoid: x has {np.shape(x)[0]} points and y {np.shape(y)[axis % n]} along "
                             f"axis {axis}; give one x per sample")
        d = np.reshape(np.diff(x), [-1 if k == axis % n else 1 for k in range(n)])
    else:
        d = np.diff(x, axis=axis)
    upper = tuple(slice(1, None) if k == axis % n else slice(None) for k in range(n))
    lower = tuple(slice(None, -1) if k == axis % n else slice(None) for k in range(n))
    return np.sum(d * (y[upper] + y[lower]) / 2.0, axis=axis)


@implements(np.interp)
def interp(A, x, xp, fp, left=None, right=None, period=None):
    """numpy's linear interpolation, step by step (module docstring)."""
    if period is not None:
        raise unsupported("interp", "period= (numpy's modular reduction of x and xp) is not defined step by step "
                          "here; reduce x with Array operations first")
    fmt, bits = A.common(x, xp, fp)
    X, XP, FP = (A.wrap(np.asarray(b), fmt) for b in bits)
    if XP.ndim != 1 or FP.ndim != 1:
        raise ValueError("numpy.interp: xp and fp must be 1-d")
    if XP.size != FP.size:
        raise ValueError("fp and xp are not of the same length.")
    if XP.size == 0:
        raise ValueError("array of sample points is empty")
    n = XP.size
    low = FP[0] if left is None else A.wrap(A.bits_in(left, fmt, "interp"), fmt)
    high = FP[-1] if right is None else A.wrap(A.bits_in(right, fmt, "interp"), fmt)
    out = np.array(X.bits, copy=True)
    nan = np.isnan(X)
    below, above = ~nan & (X < XP[0]), ~nan & (X > XP[-1])
    out[below], out[above] = low.bits, high.bits
    j = np.searchsorted(XP, X, side="right") - 1
    inside = ~(nan | below | above)
    exact = inside & np.asarray(X == XP[np.clip(j, 0, n - 1)])  # x == xp[j]: fp[j], no arithmetic
    out[exact] = FP.bits[j[exact]]
    mid = inside & ~exact
    if mid.any():
        k, x_mid = j[mid], X[mid]
        slope = (FP[k + 1] - FP[k]) / (XP[k + 1] - XP[k])
        value = slope * (x_mid - XP[k]) + FP[k]
        again = np.isnan(value)
        if again.any():  # numpy's fallbacks: from the right end, then a flat segment
            k2 = k[again]
            other = slope[again] * (x_mid[again] - XP[k2 + 1]) + FP[k2 + 1]
            flat = np.isnan(other) & (FP[k2] == FP[k2 + 1])
            value.bits[again] = np.where(flat, FP[k2], other).bits
        out[mid] = value.bits
    return A.wrap(out, fmt)
