"""numpy functions on :class:`~softfloat.Array` (NEP 18 ``__array_function__``): the
table (``FUNCTIONS``, filled with ``implements``) and the contractions and reductions.

* Contractions go through :mod:`softfloat.accumulate` with the context's accumulator and
  order, and are rounded once into the operands' format at the end (as torch does for
  an fp16 matmul with fp32 accumulation): matmul, dot, vdot, inner, tensordot, sum,
  linalg.norm (then a sqrt); cumsum keeps the accumulator's running sums, each rounded
  into the format; prod is left-to-right correctly rounded multiplication; max/min are
  exact (IEEE maximum/minimum); clip is IEEE maximum then minimum (exact).
* The rest of the table lives beside this module, one job each: structural functions
  (``softfloat._array_structural``: bits move, the format kept), order, search and truth
  (``softfloat._array_ordering``), statistics (``softfloat._array_statistics``: mean,
  var, std, the nan- functions, median and quantiles, step by step), compositions
  (``softfloat._array_arithmetic``: trace, outer, diff, cumprod, round), einsum
  (``softfloat._array_einsum``), numpy.linalg's chains and norms
  (``softfloat._array_linalg``), polynomials (``softfloat._array_polynomial``),
  histograms and text of the exact values (``softfloat._array_values``) and the
  refusals with their reasons (``softfloat._array_coverage``, also the data of
  docs/numpy_coverage.md).

Anything not in the table returns NotImplemented: numpy raises its TypeError naming the
function; a refused function raises a TypeError giving the reason.  Every
implementation takes the Array type's adapter ``A`` first (see ``softfloat._array_registry``).
"""

from __future__ import annotations

import math

import numpy as np

from . import codec, ops
from . import _array_arithmetic, _array_coverage, _array_linalg, _array_ordering, _array_statistics  # noqa: F401 (they register)
from . import _array_einsum, _array_polynomial, _array_structural, _array_values  # noqa: F401 (they register)
from ._array_keywords import axes_of, collapse, converted, expand, reduce_with
from ._array_chains import running_products, running_sums
from ._array_ufunc_methods import pick_reduce
from ._array_registry import FUNCTIONS, deliver, implements, plain, unsupported
from ._array_ufuncs import accumulator_of
from ._array_ufuncs import matmul as array_matmul
from ._array_ufuncs import sum_of
from ._context import get_context
from .accumulate import vecdot as accumulate_vecdot
from .accumulate.hardware import FusedAccumulator, is_preset
from .accumulate.reduce import default_accumulator
from .formats import as_format

__all__ = ["FUNCTIONS", "implements"]


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
    ax_a, ax_b = list(axes_of(x.ndim, tuple(ax_a))), list(axes_of(y.ndim, tuple(ax_b)))
    free_a = [d for d in range(x.ndim) if d not in ax_a]
    free_b = [d for d in range(y.ndim) if d not in ax_b]
    k = int(np.prod([x.shape[d] for d in ax_a], dtype=np.int64))
    if k != int(np.prod([y.shape[d] for d in ax_b], dtype=np.int64)):
        raise ValueError(f"tensordot: shape mismatch for the summed axes: {x.shape} {ax_a} and {y.shape} {ax_b}")
    rows = math.prod(x.shape[d] for d in free_a)  # (not -1: a length may be 0)
    cols = math.prod(y.shape[d] for d in free_b)
    x2 = np.transpose(x, free_a + ax_a).reshape(rows, k)
    y2 = np.transpose(y, ax_b + free_b).reshape(k, cols)
    out = matmul(A, A.wrap(x2, fmt), A.wrap(y2, fmt))
    return out.reshape([x.shape[d] for d in free_a] + [y.shape[d] for d in free_b])


@implements(np.dot)
def dot(A, a, b, out=None):
    """numpy's dot as matmul / tensordot (the context's accumulator, one rounding); ``out=``
    written as numpy's (rounded into an Array's format where it differs)."""
    return deliver(A, _dot(A, a, b), out, "dot")


def _dot(A, a, b):
    na, nb = np.ndim(_bits(A, a)), np.ndim(_bits(A, b))
    if na == 0 or nb == 0:
        return np.multiply(a, b)
    if na <= 2 and nb <= 2:  # numpy's dot is its matmul here (1-d operands as matmul takes them)
        return array_matmul(A, a, b)
    if nb == 1 or na == 1 and nb == 2:
        return tensordot(A, a, b, axes=([-1], [0 if nb <= 2 else -2]))
    return tensordot(A, a, b, axes=([-1], [-2]))


@implements(np.inner)
def inner(A, a, b):
    return tensordot(A, a, b, axes=([-1], [-1]))


@implements(np.vdot)
def vdot(A, a, b):
    fmt, (x, y) = A.common(a, b)
    return matmul(A, A.wrap(x.reshape(1, x.size), fmt), A.wrap(y.reshape(y.size, 1), fmt)).reshape(())


# ---- reductions ------------------------------------------------------------------------
@implements(np.sum)
def sum_(A, a, axis=None, dtype=None, out=None, keepdims=False, initial=np._NoValue, where=True):
    """:func:`sum_of` (the context's accumulator), numpy's keywords as
    ``softfloat._array_keywords`` applies them."""
    result = reduce_with(A, lambda x, ax, kd: sum_of(A, x, axis=ax, keepdims=kd), a, "sum", axis, keepdims,
                         dtype=dtype, where=where, initial=initial)
    return deliver(A, result, out, "sum")


@implements(np.linalg.norm)
def norm(A, x, ord=None, axis=None, keepdims=False):
    """numpy's vector and matrix norms, step by step.  2-norm and Frobenius (the default):
    the sum of x * x with exact, fused products in the accumulator, rounded into the
    format, then a correctly rounded sqrt.  Vectors: ord 1 the sum of |x| (np.sum), inf /
    -inf the largest / smallest |x| (exact), 0 the count of non-zeros (rounded into the
    format).  Matrices: ord 1 / -1 the largest / smallest column sum of |x|, inf / -inf
    the row sums'.  Norms of singular values (2, -2, 'nuc' for matrices) and other
    powers are refused."""
    if axis is None:
        if ord is None:
            return _frobenius(A, x, tuple(range(x.ndim)), keepdims)
        if x.ndim not in (1, 2):
            raise ValueError("Improper number of dimensions to norm.")
        axis = tuple(range(x.ndim))
    axes = axes_of(x.ndim, axis)
    if len(axes) == 1:
        result = _vector_norm(A, x, ord, axes[0])
    elif len(axes) == 2 and axes[0] != axes[1]:
        result = _matrix_norm(A, x, ord, axes)
    else:
        raise ValueError("Improper number of dimensions to norm.")
    return expand(result, x.ndim, axes) if keepdims else result


def _frobenius(A, x, axes, keepdims):
    """sqrt of the sum of x * x over ``axes`` (exact products in the accumulator)."""
    fmt = x.format
    ctx = get_context()
    acc = accumulator_of(ctx, fmt)
    bits = collapse(A, x, axes).bits
    bits = np.moveaxis(bits, 0, -1)
    total, flags = ctx.split(accumulate_vecdot(bits, bits, fmt, accumulator=acc, out_format=fmt, order=ctx.order,
                                               return_flags=ctx.track_flags, **ctx.options()))
    ctx.record("norm", flags)
    result = np.sqrt(A.wrap(total, fmt))
    return expand(result, x.ndim, axes) if keepdims else result


def _vector_norm(A, x, ord, axis):
    if ord is None or ord == 2:
        return _frobenius(A, x, (axis,), False)
    if ord == 1:
        return np.sum(np.abs(x), axis=axis)
    if ord in (np.inf, -np.inf):
        return (np.max if ord > 0 else np.min)(np.abs(x), axis=axis)
    if ord == 0:
        count = np.count_nonzero(x, axis=axis)
        return A.wrap(A.bits_in(np.asarray(count, dtype=np.float64), x.format, "norm"), x.format)
    if isinstance(ord, (str, bytes)) or not np.isscalar(ord):
        raise ValueError(f"numpy.linalg.norm: invalid norm order {ord!r} for vectors; use None, a number, "
                         f"np.inf or -np.inf")
    raise unsupported("linalg.norm", f"ord={ord!r} takes powers |x|**p through libm; write "
                      "np.sum(np.abs(x) ** p) ** (1 / p), each step rounded, or use ord 0, 1, 2 or +-inf")


def _matrix_norm(A, x, ord, axes):
    rows, cols = axes
    if ord is None or ord == "fro":
        return _frobenius(A, x, axes, False)
    if ord in (1, -1):
        sums, over = np.sum(np.abs(x), axis=rows), cols - (cols > rows)
    elif ord in (np.inf, -np.inf):
        sums, over = np.sum(np.abs(x), axis=cols), rows - (rows > cols)
    else:
        raise unsupported("linalg.norm", f"ord={ord!r} of a matrix needs its singular values (an SVD in "
                          "float64): no correctly rounded emulation; ord 'fro', 1, -1, inf and -inf are defined")
    return (np.max if ord > 0 else np.min)(sums, axis=over)


@implements(np.prod)
def prod(A, a, axis=None, dtype=None, out=None, keepdims=False, initial=np._NoValue, where=True):
    """Left-to-right correctly rounded multiplications along ``axis`` (K - 1 of them);
    numpy's keywords as ``softfloat._array_keywords`` applies them."""
    result = reduce_with(A, lambda x, ax, kd: _product(A, x, ax, kd), a, "prod", axis, keepdims,
                         dtype=dtype, where=where, initial=initial)
    return deliver(A, result, out, "prod")


def _product(A, a, axis, keepdims):
    """The left-to-right product over ``axis`` (several axes: in C order)."""
    terms = collapse(A, a, axis)
    if terms.shape[0] == 0:
        result = A.wrap(np.full(terms.shape[1:], codec.encode(1.0, a.format)), a.format)
    else:
        result = A.wrap(running_products(A, terms.bits, a.format)[-1], a.format)
    return expand(result, a.ndim, axis) if keepdims else result


@implements(np.cumsum)
def cumsum(A, a, axis=None, dtype=None, out=None):
    """Running sums in the context's accumulator (sequential), each rounded into the format.

    The context's accumulator, when it is a format (a tensor-core model describes matrix
    units, so with one the running sums use the default accumulator, fp32 for narrower
    formats).  Three operations reach the context: the terms' conversion into the accumulator, the
    K - 1 additions (flags per addition, swamped ones counted), and the rounding of the
    running sums into the format.  The chain: softfloat._array_chains.running_sums.
    """
    if out is not None:
        return deliver(A, cumsum(A, a, axis=axis, dtype=dtype), out, "cumsum")
    a = converted(a, "cumsum", dtype)
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
    running, steps = running_sums(terms, acc, ctx)
    ctx.record("cumsum", steps)
    result, flags = ctx.split(ops.convert(running, acc, fmt, return_flags=ctx.track_flags, **ctx.options()))
    ctx.record("cumsum", flags)
    result = np.asarray(result)
    return A.wrap(result if axis is None else np.moveaxis(result, 0, axis), fmt)


@implements(np.bincount)
def bincount(A, x, weights=None, minlength=0):
    """Weighted counts: each bin's weights summed as ``np.sum`` sums them (the context's
    accumulator and order, rounded once into the weights' format), in the order they
    come; an empty bin is +0.  Bins with equally many weights are summed in one call."""
    index = np.asarray(x)
    if index.dtype.kind not in "iub" or index.ndim != 1:
        raise TypeError(f"numpy.bincount: x must be a 1-d array of non-negative integers; got "
                        f"{'an Array' if A.is_array(x) else f'dtype {index.dtype}'} of {index.ndim} dimension(s)")
    if index.size and index.min() < 0:
        raise ValueError("numpy.bincount: x must have no negative elements")
    if not A.is_array(weights):
        return np.bincount(index, weights=weights, minlength=minlength)
    if weights.shape != index.shape:
        raise ValueError(f"numpy.bincount: weights of shape {weights.shape} and x of shape {index.shape} differ")
    order = np.argsort(index, kind="stable")
    bins, starts, counts = np.unique(index[order], return_index=True, return_counts=True)
    out = np.zeros(max(int(bins[-1]) + 1 if bins.size else 0, minlength), weights.format.storage_dtype)
    for m in np.unique(counts):
        chosen = np.flatnonzero(counts == m)
        terms = A.wrap(weights.bits[order[starts[chosen, None] + np.arange(m)]], weights.format)
        out[bins[chosen]] = np.sum(terms, axis=1).bits
    return A.wrap(out, weights.format)


@implements(np.max, np.amax)
def max_(A, a, axis=None, out=None, keepdims=False, initial=np._NoValue, where=True):
    """IEEE maximum over ``axis`` (exact); ``initial=`` takes part, ``where=`` needs it."""
    return deliver(A, pick_reduce(A, np.maximum, a, axis, keepdims, where=where, initial=initial), out, "max")


@implements(np.min, np.amin)
def min_(A, a, axis=None, out=None, keepdims=False, initial=np._NoValue, where=True):
    """IEEE minimum over ``axis`` (exact); ``initial=`` takes part, ``where=`` needs it."""
    return deliver(A, pick_reduce(A, np.minimum, a, axis, keepdims, where=where, initial=initial), out, "min")


# ---- structure: bits move, nothing rounds -----------------------------------------------
def _bits(A, x):
    return x.bits if A.is_array(x) else x


@implements(np.copy)
def copy(A, a, **kwargs):
    return a.copy()


if hasattr(np, "astype"):  # numpy >= 2.1
    @implements(np.astype)
    def astype(A, x, dtype, copy=True, device=None):
        """``x.astype(dtype, copy=copy)``, the array API's spelling (the method's rules:
        a float dtype or Format gives an Array, an integer or bool dtype a plain ndarray)."""
        if device not in (None, "cpu"):
            raise ValueError(f"numpy.astype on a softfloat.Array: device= must be None or 'cpu'; got {device!r}")
        return x.astype(dtype, copy=copy)


@implements(np.shape)
def shape(A, a):
    return a.shape


@implements(np.ndim)
def ndim(A, a):
    return a.ndim


@implements(np.size)
def size(A, a, axis=None):
    return a.size if axis is None else a.shape[axis]


@implements(np.clip)
def clip(A, a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue, max=np._NoValue, **kwargs):
    """IEEE maximum with ``a_min``, then minimum with ``a_max`` (exact; the bounds rounded
    into the format, weak); ``out=`` an Array (``np.clip(g, -5, 5, out=g)``)."""
    if not plain(kwargs):
        return NotImplemented
    a_min = min if a_min is np._NoValue else a_min
    a_max = max if a_max is np._NoValue else a_max
    a_min = None if a_min is np._NoValue else a_min
    a_max = None if a_max is np._NoValue else a_max
    result = a
    if a_min is not None:
        result = np.maximum(result, a_min)
    if a_max is not None:
        result = np.minimum(result, a_max)
    return deliver(A, result if result is not a else a.copy(), out, "clip")


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
