"""numpy functions on :class:`~softfloat.Array` (NEP 18 ``__array_function__``).

* Contractions go through :mod:`softfloat.accumulate` with the context's accumulator and
  order, and are rounded once into the operands' format at the end (as torch does for
  an fp16 matmul with fp32 accumulation): matmul, dot, vdot, inner, tensordot, einsum
  (two-operand contractions), sum, linalg.norm (then a sqrt); mean divides that sum by n
  with one more correctly rounded division; var and std are built from those steps;
  cumsum keeps the accumulator's running sums, each rounded into the format; prod is
  left-to-right correctly rounded multiplication.
* Structural functions move bit patterns and never round: reshape, transpose,
  concatenate, stack, where, take, broadcast_to, copy, zeros_like, ones_like, full_like
  (the fill value rounded once), clip (IEEE maximum then minimum), sort and argsort (by
  IEEE totalOrder), array_equal (IEEE equality), allclose / isclose (on exact values),
  shape, ndim, size.

Anything else returns NotImplemented: numpy raises its TypeError naming the function.
Every implementation takes the Array type's adapter ``A`` first (see _array_ufuncs).
"""

from __future__ import annotations

import numpy as np

from . import _fastpaths, codec, ops
from ._random import bits_at, key_from
from ._array_ufuncs import accumulator_of
from ._array_ufuncs import matmul as array_matmul
from ._array_ufuncs import sum_of
from ._context import get_context
from ._flagmasks import FlagMasks
from ._workspace import Workspace
from .accumulate import vecdot as accumulate_vecdot
from .accumulate.hardware import FusedAccumulator, is_preset
from .accumulate.reduce import default_accumulator
from .flags import FLAG_NAMES, AccumulationFlags
from .formats import Format, Specials, as_format, fp64
from .ops.kernels import Target, addition_flags, default_nan, div_exact, div_kernel, round_block
from .rounding import Rounding

__all__ = ["FUNCTIONS"]

FUNCTIONS: dict = {}


def implements(*funcs):
    def register(impl):
        for f in funcs:
            FUNCTIONS[f] = impl
        return impl
    return register


# ---- contractions ----------------------------------------------------------------------
@implements(np.matmul)
def matmul(A, a, b, **kwargs):
    return NotImplemented if kwargs else array_matmul(A, a, b)


@implements(np.tensordot)
def tensordot(A, a, b, axes=2):
    fmt, (x, y) = A.common(a, b)
    if isinstance(axes, int):
        ax_a, ax_b = list(range(x.ndim - axes, x.ndim)), list(range(axes))
    else:
        ax_a, ax_b = ([axes[0]] if np.ndim(axes[0]) == 0 else list(axes[0]),
                      [axes[1]] if np.ndim(axes[1]) == 0 else list(axes[1]))
    ax_a = [d % x.ndim for d in ax_a]
    ax_b = [d % y.ndim for d in ax_b]
    free_a = [d for d in range(x.ndim) if d not in ax_a]
    free_b = [d for d in range(y.ndim) if d not in ax_b]
    k = int(np.prod([x.shape[d] for d in ax_a], dtype=np.int64))
    if k != int(np.prod([y.shape[d] for d in ax_b], dtype=np.int64)):
        raise ValueError(f"tensordot: shape mismatch for the summed axes: {x.shape} {ax_a} and {y.shape} {ax_b}")
    x2 = np.transpose(x, free_a + ax_a).reshape(-1, k)
    y2 = np.transpose(y, ax_b + free_b).reshape(k, -1)
    out = matmul(A, A.wrap(x2, fmt), A.wrap(y2, fmt))
    return out.reshape([x.shape[d] for d in free_a] + [y.shape[d] for d in free_b])


@implements(np.dot)
def dot(A, a, b, out=None):
    if out is not None:
        return NotImplemented
    na, nb = np.ndim(_bits(A, a)), np.ndim(_bits(A, b))
    if na == 0 or nb == 0:
        return np.multiply(a, b)
    if nb == 1 or na == 1 and nb == 2:
        return tensordot(A, a, b, axes=([-1], [0 if nb <= 2 else -2]))
    return tensordot(A, a, b, axes=([-1], [-2]))


@implements(np.inner)
def inner(A, a, b):
    return tensordot(A, a, b, axes=([-1], [-1]))


@implements(np.vdot)
def vdot(A, a, b):
    fmt, (x, y) = A.common(a, b)
    return matmul(A, A.wrap(x.reshape(1, -1), fmt), A.wrap(y.reshape(-1, 1), fmt)).reshape(())


# ---- reductions ------------------------------------------------------------------------
def _plain(kwargs, *allowed):
    return all(k in allowed or v is None or v is np._NoValue or (k == "where" and v is True)
               for k, v in kwargs.items())


@implements(np.sum)
def sum_(A, a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    if dtype is not None or out is not None or not _plain(kwargs):
        return NotImplemented
    return sum_of(A, a, axis=axis, keepdims=keepdims)


@implements(np.mean)
def mean(A, a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    if dtype is not None or out is not None or not _plain(kwargs):
        return NotImplemented
    total = sum_of(A, a, axis=axis, keepdims=keepdims)
    n = a.size // max(total.size, 1) if a.size else 0
    return _divide_by(A, total, n, "mean")


@implements(np.var)
def var(A, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """mean, deviations a - mean, their squares, the sum of those in the accumulator,
    then one division by n - ddof: each step rounded once into the format."""
    if dtype is not None or out is not None or not _plain(kwargs):
        return NotImplemented
    m = mean(A, a, axis=axis, keepdims=True)
    d = a - m
    total = sum_of(A, d * d, axis=axis, keepdims=keepdims)
    n = a.size // max(total.size, 1) if a.size else 0
    return _divide_by(A, total, n - ddof, "var")


@implements(np.std)
def std(A, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    """sqrt(var), rounded once more."""
    v = var(A, a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, **kwargs)
    return v if v is NotImplemented else np.sqrt(v)


@implements(np.linalg.norm)
def norm(A, x, ord=None, axis=None, keepdims=False):
    """The 2-norm (Frobenius for matrices): the sum of x * x with exact, fused products in
    the accumulator, rounded into the format, then a correctly rounded sqrt."""
    if ord not in (None, 2, "fro") or (ord == 2 and x.ndim != 1 and axis is None):
        return NotImplemented
    fmt = x.format
    ctx = get_context()
    acc = accumulator_of(ctx, fmt)
    bits = x.bits.reshape(-1) if axis is None else np.moveaxis(x.bits, axis, -1)
    total, flags = ctx.split(accumulate_vecdot(bits, bits, fmt, accumulator=acc, out_format=fmt, order=ctx.order,
                                               return_flags=ctx.track_flags, **ctx.options()))
    ctx.record("norm", flags)
    result = np.sqrt(A.wrap(total, fmt))
    if keepdims:
        result = result.reshape((1,) * x.ndim if axis is None else np.expand_dims(total, axis).shape)
    return result


@implements(np.prod)
def prod(A, a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    """Left-to-right correctly rounded multiplications along ``axis`` (K - 1 of them)."""
    if dtype is not None or out is not None or not _plain(kwargs):
        return NotImplemented
    bits = a.bits.reshape(-1) if axis is None else np.moveaxis(a.bits, axis, 0)
    if bits.shape[0] == 0:
        result = A.wrap(np.full(bits.shape[1:], codec.encode(1.0, a.format)), a.format)
    else:
        result = A.wrap(bits[0], a.format)
        for k in range(1, bits.shape[0]):
            result = result * A.wrap(bits[k], a.format)
    if keepdims:
        result = result.reshape(np.expand_dims(np.empty(result.shape), 0 if axis is None else axis).shape
                                if axis is not None else (1,) * a.ndim)
    return result


@implements(np.cumsum)
def cumsum(A, a, axis=None, dtype=None, out=None):
    """Running sums in the context's accumulator (sequential), each rounded into the format.

    The context's accumulator, when it is a format (a tensor-core model describes matrix
    units, so with one the running sums use the default accumulator, fp32 for narrower
    formats).  Three operations reach the context: the terms' conversion into the accumulator, the
    K - 1 additions (flags per addition, swamped ones counted), and the rounding of the
    running sums into the format.  To nearest even in an fp16/fp32/fp64 accumulator the
    chain is numpy's own (strictly sequential) add.accumulate; other modes and
    accumulators take the K steps one at a time, each vectorised over the other axes.
    """
    if dtype is not None or out is not None:
        return NotImplemented
    fmt = a.format
    ctx = get_context()
    acc = accumulator_of(ctx, fmt)
    if isinstance(acc, FusedAccumulator) or is_preset(acc):
        acc = default_accumulator(fmt)  # a tensor-core model is of matrix units, not running sums
    acc = as_format(acc, "accumulator")
    bits = a.bits.reshape(-1) if axis is None else np.moveaxis(a.bits, axis, 0)
    terms, flags = ctx.split(ops.convert(bits, fmt, acc, return_flags=ctx.track_flags, **ctx.options()))
    ctx.record("cumsum", flags)
    terms = np.asarray(terms)
    running, steps = _native_running_sums(terms, acc, ctx) if terms.shape[0] > 1 else (terms.copy(), None)
    if running is None:
        running, steps = _running_sums(terms, acc, ctx)
    ctx.record("cumsum", steps)
    result, flags = ctx.split(ops.convert(running, acc, fmt, return_flags=ctx.track_flags, **ctx.options()))
    ctx.record("cumsum", flags)
    result = np.asarray(result)
    return A.wrap(result if axis is None else np.moveaxis(result, 0, axis), fmt)


def _native_running_sums(terms, acc: Format, ctx):
    """numpy's add.accumulate (strictly sequential) where it is the correctly rounded chain:
    nearest_even, no saturation or flushing (a sum that lands below the smallest normal is
    exact anyway), and no NaN anywhere (NaN results follow the platform's rules, not the FPU).
    Returns (None, None) where that does not hold, or where softfloat._fastpaths.ENABLED
    (the one off switch of the shortcuts) is False."""
    native = acc.native_dtype  # numpy's addition in it is correctly rounded to nearest even
    if native is None or not _fastpaths.ENABLED:
        return None, None
    if ctx.rounding is not Rounding.NEAREST_EVEN or ctx.saturate or not ctx.subnormals:
        return None, None
    t = terms.view(native)
    with np.errstate(all="ignore"):
        running = np.add.accumulate(t, axis=0)
        if np.isnan(running).any():
            return None, None
        if not ctx.track_flags:
            return running.view(terms.dtype), None
        fl, swamped = addition_flags(running[:-1], t[1:], running[1:])
    steps = fl.to_flags(running[1:].shape, swamped=swamped.astype(np.int64))
    return running.view(terms.dtype), steps


def _running_sums(terms, acc: Format, ctx):
    """The chain one correctly rounded addition at a time along axis 0 (vectorised over
    the other axes): the path for directed and stochastic modes, other accumulators, NaNs."""
    running = np.empty_like(terms)
    running[0] = terms[0]
    masks = []
    for k in range(1, terms.shape[0]):
        running[k], f = ctx.split(ops.add(running[k - 1], terms[k], acc, return_flags=ctx.track_flags,
                                          **ctx.options()))
        masks.append(f)
    if not ctx.track_flags or not masks:
        return running, None
    values = np.asarray(codec.decode(running, acc, dtype=np.float64))
    term_values = np.asarray(codec.decode(terms[1:], acc, dtype=np.float64))
    swamped = (running[1:] == running[:-1]) & np.isfinite(term_values) & (term_values != 0) \
        & np.isfinite(values[:-1])
    steps = AccumulationFlags(**{name: np.stack([np.asarray(getattr(f, name)) for f in masks]) for name in FLAG_NAMES},
                              swamped=swamped.astype(np.int64))
    return running, steps


@implements(np.einsum)
def einsum(A, subscripts, *operands, **kwargs):
    """Two-operand contractions ("ij,jk->ik", "bij,bjk->bik", "i,i->", ...) as matmul:
    indices in both inputs and the output are batch axes, in both inputs only are summed."""
    if kwargs or len(operands) != 2 or not isinstance(subscripts, str) or "." in subscripts:
        return NotImplemented
    spec = subscripts.replace(" ", "")
    inputs, _, output = spec.partition("->")
    parts = inputs.split(",")
    if len(parts) != 2 or any(len(set(p)) != len(p) for p in parts):
        return NotImplemented
    sa, sb = parts
    if not _:
        output = "".join(sorted(c for c in set(sa) ^ set(sb)))
    fmt, (x, y) = A.common(*operands)
    summed = [c for c in sa if c in sb and c not in output]
    batch = [c for c in output if c in sa and c in sb]
    free_a = [c for c in sa if c not in sb or (c in output and c not in batch)]
    free_b = [c for c in sb if c not in sa]
    if set(output) - set(sa) - set(sb) or any(c not in output and c not in sb for c in sa) \
            or any(c not in output and c not in sa for c in sb):
        return NotImplemented  # sums over one operand alone, or new indices: not a contraction
    size = {**dict(zip(sa, x.shape)), **dict(zip(sb, y.shape))}
    xa = np.transpose(x, [sa.index(c) for c in batch + free_a + summed])
    yb = np.transpose(y, [sb.index(c) for c in batch + summed + free_b])
    nb = [size[c] for c in batch]
    k = int(np.prod([size[c] for c in summed], dtype=np.int64))
    m = int(np.prod([size[c] for c in free_a], dtype=np.int64))
    n = int(np.prod([size[c] for c in free_b], dtype=np.int64))
    product = array_matmul(A, A.wrap(xa.reshape(nb + [m, k]), fmt), A.wrap(yb.reshape(nb + [k, n]), fmt))
    result = product.reshape(nb + [size[c] for c in free_a + free_b])
    order = batch + free_a + free_b
    return np.transpose(result, [order.index(c) for c in output])


@implements(np.max, np.amax)
def max_(A, a, axis=None, out=None, keepdims=False, **kwargs):
    if out is not None or not _plain(kwargs):
        return NotImplemented
    return np.maximum.reduce(a, axis=axis, keepdims=keepdims)


@implements(np.min, np.amin)
def min_(A, a, axis=None, out=None, keepdims=False, **kwargs):
    if out is not None or not _plain(kwargs):
        return NotImplemented
    return np.minimum.reduce(a, axis=axis, keepdims=keepdims)


def _divide_by(A, x, n: int, operation: str):
    """x / n correctly rounded into x's format (n need not be a value of it).

    Not :func:`softfloat.ops.div`, which divides two values of one format and rounds into
    it: n is often no value of x's format (7 in FP4 E2M1, 1000 in FP8 E4M3), and dividing
    in a wider format and converting would round twice.  So the division kernel takes the
    float64 values (fp64: its path valid for any operands) and the result is rounded once
    into x's format (softfloat.ops.kernels); a NaN result is the context platform's
    default NaN.
    """
    ctx = get_context()
    fmt = x.format
    values = np.asarray(codec.decode(x.bits, fmt), dtype=np.float64).reshape(-1)
    divisor = np.full(values.shape, float(n))
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


# ---- structure: bits move, nothing rounds -----------------------------------------------
def _bits(A, x):
    return x.bits if A.is_array(x) else x


def _bits_only(func):
    """A structural function: numpy's own, applied to the bit patterns; the format kept."""
    def impl(A, a, *args, **kwargs):
        if kwargs.get("out") is not None:
            return NotImplemented
        return A.wrap(func(a.bits, *args, **kwargs), a.format)
    return impl


def _joining(func):
    """concatenate / stack: the operands in their common format, then numpy's own."""
    def impl(A, arrays, axis=0, **kwargs):
        if kwargs:
            return NotImplemented
        fmt, bits = A.common(*arrays)
        return A.wrap(func(bits, axis=axis), fmt)
    return impl


for _func in (np.reshape, np.transpose, np.take, np.broadcast_to):
    FUNCTIONS[_func] = _bits_only(_func)
FUNCTIONS[np.concatenate] = _joining(np.concatenate)
FUNCTIONS[np.stack] = _joining(np.stack)


@implements(np.where)
def where(A, condition, x=None, y=None):
    if x is None or y is None:
        return np.where(_bits(A, condition))
    fmt, (bx, by) = A.common(x, y)
    return A.wrap(np.where(np.asarray(_bits(A, condition), dtype=bool), bx, by), fmt)


@implements(np.copy)
def copy(A, a, **kwargs):
    return a.copy()


@implements(np.shape)
def shape(A, a):
    return a.shape


@implements(np.ndim)
def ndim(A, a):
    return a.ndim


@implements(np.size)
def size(A, a, axis=None):
    return a.size if axis is None else a.shape[axis]


def _full(A, a, value, shape=None):
    shape = a.shape if shape is None else shape
    fill = A.bits_in(value, a.format, "full_like")
    return A.wrap(np.full(shape, fill, dtype=a.format.storage_dtype), a.format)


@implements(np.zeros_like)
def zeros_like(A, a, dtype=None, shape=None, **kwargs):
    return NotImplemented if dtype is not None else _full(A, a, 0.0, shape)


@implements(np.ones_like)
def ones_like(A, a, dtype=None, shape=None, **kwargs):
    return NotImplemented if dtype is not None else _full(A, a, 1.0, shape)


@implements(np.full_like)
def full_like(A, a, fill_value, dtype=None, shape=None, **kwargs):
    return NotImplemented if dtype is not None else _full(A, a, fill_value, shape)


@implements(np.clip)
def clip(A, a, a_min=None, a_max=None, **kwargs):
    if kwargs:
        return NotImplemented
    result = a
    if a_min is not None:
        result = np.maximum(result, a_min)
    if a_max is not None:
        result = np.minimum(result, a_max)
    return result


def _total_order_key(bits, fmt):
    """Integers that sort like IEEE totalOrder: -NaN < -inf < ... < -0 < +0 < ... < +NaN."""
    u = bits.astype(fmt.storage_dtype, copy=False)
    t = u.dtype.type
    # negatives: all bits flipped (bigger magnitudes come first); positives: the sign bit set
    key = np.where(u & t(fmt.sign_mask), u ^ t((1 << fmt.bits) - 1), u | t(fmt.sign_mask))
    if fmt.specials is Specials.FNUZ:  # the one NaN (the "-0" pattern) sorts last
        key[u == t(fmt.sign_mask)] = np.iinfo(u.dtype).max
    return key


@implements(np.argsort)
def argsort(A, a, axis=-1, kind=None, order=None, **kwargs):
    return np.argsort(_total_order_key(a.bits, a.format), axis=axis, kind="stable")


@implements(np.sort)
def sort(A, a, axis=-1, kind=None, order=None, **kwargs):
    index = argsort(A, a, axis=axis)
    return A.wrap(np.take_along_axis(a.bits, index, axis=axis), a.format)


@implements(np.array_equal)
def array_equal(A, a1, a2, equal_nan=False):
    if np.shape(_bits(A, a1)) != np.shape(_bits(A, a2)):
        return False
    fmt, (x, y) = A.common(a1, a2)
    same = np.asarray(ops.eq(x, y, fmt))
    if equal_nan:
        same |= np.asarray(codec.is_nan(x, fmt)) & np.asarray(codec.is_nan(y, fmt))
    return bool(np.all(same))


def _values(A, v):
    return v.to_numpy(np.float64) if A.is_array(v) else np.asarray(v, dtype=np.float64)


@implements(np.allclose)
def allclose(A, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(np.allclose(_values(A, a), _values(A, b), rtol=rtol, atol=atol, equal_nan=equal_nan))


@implements(np.isclose)
def isclose(A, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return np.isclose(_values(A, a), _values(A, b), rtol=rtol, atol=atol, equal_nan=equal_nan)

