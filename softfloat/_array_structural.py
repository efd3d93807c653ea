"""Structural numpy functions on :class:`~softfloat.Array`: bit patterns move, nothing
rounds, and the format is kept.

Each is numpy's own function applied to the bit patterns (so shapes, axes, errors and
edge cases are numpy's), the result wrapped in the operands' format.  Operands of several
arrays (concatenate, stack, where, choose, select, block, append, insert) are first
brought to their common format: Arrays promote by :func:`softfloat.promote`, Python and
numpy scalars and ndarrays are weak and rounded once into it.  Fill values (``pad``'s
``constant_values``, ``full_like``, ``put``, ``copyto``, ``fill_diagonal``) are rounded
once into the format with the context's attributes, flags counted.  Zeros that numpy
creates (``tril``, ``triu``, ``diag``, ``pad``'s default) are the all-zero pattern, +0 in
every format.

``np.may_share_memory`` and ``np.shares_memory`` answer for an Array's memory, its bit
patterns.

``np.tri(n, dtype=fmt)`` and ``np.zeros(shape, dtype=fmt)`` take no Array, so numpy never
asks this module: they give plain ndarrays (see ``softfloat._array_coverage``).

>>> import numpy as np, softfloat as sf
>>> x = sf.asarray([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "bf16")
>>> a, b = np.split(x, [1], axis=1)
>>> a.format, b.shape, np.hstack([b, a]).tolist()
(softfloat.bf16, (2, 2), [[2.0, 3.0, 1.0], [5.0, 6.0, 4.0]])
"""

from __future__ import annotations

import numpy as np

from . import _validate, codec
from ._array_keywords import axes_of, format_or_dtype
from ._array_registry import FUNCTIONS, deliver, implements, unsupported

__all__ = ["truthy", "check_partition_keywords"]


def truthy(A, x):
    """numpy's truth of each element: nonzero, NaN included (a bool ndarray; -0 is False)."""
    if not A.is_array(x):
        return np.asarray(x, dtype=bool)
    return ~np.asarray(codec.is_zero(x.bits, x.format))


def _bits(A, x):
    return x.bits if A.is_array(x) else x


def _wrap_all(A, result, fmt):
    if isinstance(result, (list, tuple)):
        return type(result)(_wrap_all(A, r, fmt) for r in result)
    return A.wrap(result, fmt)


def _on_bits(func):
    """numpy's ``func`` on the bit patterns of its first (Array) argument; format kept."""
    def impl(A, a, *args, **kwargs):
        out = kwargs.pop("out", None)  # (np.take's: the result written, as numpy's)
        return deliver(A, _wrap_all(A, func(a.bits, *args, **kwargs), a.format), out, func.__name__)
    impl.__name__ = impl.__qualname__ = func.__name__
    impl.__doc__ = f"numpy.{func.__name__} on the bit patterns: exact, the format kept."
    return impl


_MOVES = (np.reshape, np.transpose, np.take, np.broadcast_to, np.ravel, np.squeeze, np.expand_dims,
          np.swapaxes, np.moveaxis, np.rollaxis, np.flip, np.fliplr, np.flipud, np.roll, np.rot90, np.tile,
          np.repeat, np.diagonal, np.diag, np.diagflat, np.tril, np.triu, np.resize, np.delete,
          np.take_along_axis, np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit,
          np.matrix_transpose, np.permute_dims, np.unstack, np.asfortranarray, np.ascontiguousarray,
          np.require, np.lib.stride_tricks.sliding_window_view)
for _func in _MOVES:
    FUNCTIONS[_func] = _on_bits(_func)


@implements(np.extract)
def extract(A, condition, arr):
    return A.wrap(np.extract(truthy(A, condition), arr.bits), arr.format)


@implements(np.compress)
def compress(A, condition, a, axis=None, out=None):
    return deliver(A, A.wrap(np.compress(truthy(A, condition), a.bits, axis=axis), a.format), out, "compress")


@implements(np.trim_zeros)
def trim_zeros(A, filt, trim="fb", axis=None):
    """Leading/trailing zeros (+0 and -0) trimmed along each axis (or ``axis``), as numpy
    does on the values: the bounding box of the nonzero elements."""
    keep = truthy(A, filt)
    axes = axes_of(filt.ndim, None if axis is None else tuple(int(a) for a in np.atleast_1d(axis)))
    index = [slice(None)] * filt.ndim
    for ax in axes:
        hits = np.flatnonzero(np.any(keep, axis=tuple(d for d in range(filt.ndim) if d != ax)))
        if hits.size == 0:
            index[ax] = slice(0, 0)
            continue
        lo = hits[0] if "f" in trim.lower() else 0
        hi = hits[-1] + 1 if "b" in trim.lower() else filt.shape[ax]
        index[ax] = slice(lo, hi)
    return A.wrap(filt.bits[tuple(index)], filt.format)


def _memory(func):
    """numpy's ``may_share_memory`` / ``shares_memory`` on an Array's memory, its bit
    patterns (an ndarray operand as it is): numpy's own code asks it (``rng.permutation``)."""
    def impl(A, a, b, max_work=None):
        return func(_bits(A, a), _bits(A, b), **({} if max_work is None else {"max_work": max_work}))
    impl.__name__ = impl.__qualname__ = func.__name__
    impl.__doc__ = f"numpy.{func.__name__} on the bit patterns (an Array's memory)."
    return impl


for _func in (np.may_share_memory, np.shares_memory):
    FUNCTIONS[_func] = _memory(_func)


@implements(np.partition)
def partition(A, a, kth, axis=-1, kind="introselect", order=None):
    """A full sort by the ordering module's key (a valid partition: exact, deterministic)."""
    _validate.partition_index(kth, a.shape, axis)  # checked as numpy checks it, though a sort needs none
    check_partition_keywords(kind, order)
    return np.sort(a, axis=axis)


def check_partition_keywords(kind, order) -> None:
    """numpy's own checks of ``kind`` and ``order`` (a sort stands in for the selection, so
    a misspelt kind, or order= on an array without fields, was taken): numpy's errors."""
    if kind != "introselect" or order is not None:
        np.partition(np.empty(1), 0, kind=kind, order=order)


def _joining(func):
    """concatenate / stack / hstack / ...: the operands in their common format, then numpy's own."""
    def impl(A, arrays, *args, **kwargs):
        if kwargs.get("dtype") is not None:
            return NotImplemented
        out = kwargs.pop("out", None)
        kwargs = {k: v for k, v in kwargs.items() if k not in ("dtype", "casting")}
        fmt, bits = A.common(*arrays)
        return deliver(A, A.wrap(func(bits, *args, **kwargs), fmt), out, func.__name__)
    impl.__name__ = impl.__qualname__ = func.__name__
    impl.__doc__ = (f"numpy.{func.__name__} of the operands' bits in their common format: exact (out=: written "
                    f"as numpy's, rounded into an Array's format where it differs).")
    return impl


for _func in (np.concatenate, np.stack, np.hstack, np.vstack, np.dstack, np.column_stack):
    FUNCTIONS[_func] = _joining(_func)


def _atleast_nd(func):
    def impl(A, *arys):
        out = [A.wrap(func(a.bits), a.format) if A.is_array(a) else func(a) for a in arys]
        return out[0] if len(out) == 1 else tuple(out)
    impl.__name__ = impl.__qualname__ = func.__name__
    return impl


for _func in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
    FUNCTIONS[_func] = _atleast_nd(_func)


@implements(np.broadcast_arrays)
def broadcast_arrays(A, *args, subok=False):
    return [A.wrap(b, a.format) if A.is_array(a) else b
            for a, b in zip(args, np.broadcast_arrays(*(_bits(A, a) for a in args)))]


@implements(np.meshgrid)
def meshgrid(A, *xi, copy=True, sparse=False, indexing="xy"):
    fmt, bits = A.common(*xi)
    return [A.wrap(g, fmt) for g in np.meshgrid(*bits, copy=copy, sparse=sparse, indexing=indexing)]


def _leaves(nested):
    if isinstance(nested, list):
        for item in nested:
            yield from _leaves(item)
    else:
        yield nested


def _rebuild(nested, bits_iter):
    if isinstance(nested, list):
        return [_rebuild(item, bits_iter) for item in nested]
    return next(bits_iter)


@implements(np.block)
def block(A, arrays):
    leaves = list(_leaves(arrays))
    fmt, bits = A.common(*leaves)
    return A.wrap(np.block(_rebuild(arrays, iter(bits))), fmt)


@implements(np.append)
def append(A, arr, values, axis=None):
    fmt, (x, v) = A.common(arr, values)
    return A.wrap(np.append(x, v, axis=axis), fmt)


@implements(np.insert)
def insert(A, arr, obj, values, axis=None):
    fmt, (x, v) = A.common(arr, values)
    return A.wrap(np.insert(x, obj, v, axis=axis), fmt)


#: an argument not given (None is a value where takes: an operand it refuses by name)
_UNSET = object()


@implements(np.where)
def where(A, condition, x=_UNSET, y=_UNSET):
    """Three arguments: the chosen bits in the common format; one: nonzero's indices."""
    if x is _UNSET and y is _UNSET:
        return np.nonzero(truthy(A, condition))
    if x is _UNSET or y is _UNSET:
        raise ValueError("numpy.where: either both or neither of x and y should be given")
    fmt, (bx, by) = A.common(x, y)
    return A.wrap(np.where(truthy(A, condition), bx, by), fmt)


@implements(np.choose)
def choose(A, a, choices, out=None, mode="raise"):
    if out is not None:
        return NotImplemented
    fmt, bits = A.common(*choices)
    return A.wrap(np.choose(np.asarray(a), bits, mode=mode), fmt)


@implements(np.select)
def select(A, condlist, choicelist, default=0):
    fmt, bits = A.common(*choicelist, default)
    return A.wrap(np.select([truthy(A, c) for c in condlist], bits[:-1], bits[-1]), fmt)


@implements(np.piecewise)
def piecewise(A, x, condlist, funclist, *args, **kw):
    """Evaluated piece by piece on the Array (each function's own roundings), joined by
    bits: x's pieces where a condition holds, +0 elsewhere (numpy's zeros)."""
    conds = [truthy(A, c) for c in ([condlist] if np.ndim(condlist[0]) == 0 and x.ndim else condlist)]
    if len(funclist) not in (len(conds), len(conds) + 1):
        raise ValueError(f"numpy.piecewise: with {len(conds)} condition(s), either {len(conds)} or "
                         f"{len(conds) + 1} functions are expected; got {len(funclist)}")
    if len(funclist) == len(conds) + 1:
        conds.append(~np.any(conds, axis=0))
    out = np.zeros(x.shape, dtype=x.format.storage_dtype)
    for cond, f in zip(conds, funclist):
        if not np.any(cond):
            continue
        piece = f(x[cond], *args, **kw) if callable(f) else f
        out[cond] = A.bits_in(piece, x.format, "piecewise")
    return A.wrap(out, x.format)


# ---- writing into an Array (its own bits, in place) -------------------------------------
def _writer(func):
    """numpy's writer ``func(target, where, values, ...)`` on an Array target's bits (the
    values rounded once into its format, flags counted, a mask's truth numpy's); into a
    plain ndarray target (an Array among the values or the mask brought numpy here) the
    Array values' exact values, with numpy's own cast, as ``dst[...] = x`` writes them."""
    name = func.__name__

    def impl(A, target, where, values, *args, **kwargs):
        if name in ("place", "putmask"):
            where = truthy(A, where)
        if not A.is_array(target):
            return func(target, where, values.to_numpy() if A.is_array(values) else values, *args, **kwargs)
        return func(target.bits, where, A.bits_in(values, target.format, name), *args, **kwargs)
    impl.__name__ = name
    return impl


for _func in (np.put, np.put_along_axis, np.place, np.putmask):
    implements(_func)(_writer(_func))


@implements(np.copyto)
def copyto(A, dst, src, casting="same_kind", where=True):
    """``src`` rounded once into ``dst``'s format (flags counted) and written where ``where``.
    Into a plain ndarray (``np.full_like(ndarray, x[0])`` comes here), the Array's exact
    values with numpy's own cast and ``casting`` rule, as ``dst[...] = src`` writes them."""
    if not A.is_array(dst):
        if not isinstance(dst, np.ndarray):
            return NotImplemented
        values = src.to_numpy() if A.is_array(src) else src
        np.copyto(dst, values, casting=casting, where=truthy(A, where) if A.is_array(where) else where)
        return None
    np.copyto(dst.bits, A.bits_in(src, dst.format, "copyto"), where=truthy(A, where))


@implements(np.fill_diagonal)
def fill_diagonal(A, a, val, wrap=False):
    if not A.is_array(a):  # (an Array value into a plain ndarray: its exact values, numpy's cast)
        return np.fill_diagonal(a, val.to_numpy() if A.is_array(val) else val, wrap=wrap)
    np.fill_diagonal(a.bits, A.bits_in(val, a.format, "fill_diagonal"), wrap=wrap)


@implements(np.nan_to_num)
def nan_to_num(A, x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaNs become ``nan``, +-infinity ``posinf``/``neginf`` (by default, as numpy does for
    its floats, the format's largest finite value of that sign), the replacements rounded
    once into the format (flags counted); every other pattern is kept.  ``copy=False``
    writes into ``x`` and returns it."""
    if not A.is_array(x):
        return NotImplemented
    fmt, bits = x.format, x.bits
    result = np.where(codec.is_nan(bits, fmt), A.bits_in(nan, fmt, "nan_to_num"), bits)
    if fmt.has_infinity:
        infinite, minus = codec.is_infinite(bits, fmt), codec.is_sign_minus(bits, fmt)
        big = fmt.max_finite_bits
        up = big if posinf is None else A.bits_in(posinf, fmt, "nan_to_num")
        down = big | fmt.sign_mask if neginf is None else A.bits_in(neginf, fmt, "nan_to_num")
        result = np.where(infinite, np.where(minus, down, up), result)
    result = result.astype(fmt.storage_dtype, copy=False)
    if copy:
        return A.wrap(result, fmt)
    np.copyto(bits, result)
    return x


# ---- new arrays like an Array -------------------------------------------------------------
def _like(A, a, value, dtype, shape):
    """An Array of ``a``'s format, or of the format ``dtype`` names as ``Array.astype`` reads
    it (a Format or its name, ``float``, a numpy or ml_dtypes float type: so that
    ``np.zeros_like(w, dtype=np.float32)`` is an fp32 Array, the program stays emulated),
    filled with ``value`` rounded once; an integer, bool or other numpy dtype gives numpy's
    own plain ndarray (no Array value is read)."""
    fmt = _like_format(a, dtype)
    shape = a.shape if shape is None else shape
    if fmt is None:
        return np.full(shape, value, dtype=dtype)
    return A.wrap(np.full(shape, A.bits_in(value, fmt, "full_like"), dtype=fmt.storage_dtype), fmt)


def _like_format(a, dtype):
    """The Format of a ``*_like`` result (see :func:`_like`), or None for numpy's own."""
    if dtype is None:
        return a.format
    spec = format_or_dtype(dtype)
    return None if isinstance(spec, np.dtype) else spec


@implements(np.zeros_like)
def zeros_like(A, a, dtype=None, order="K", subok=True, shape=None, **kwargs):
    return _like(A, a, 0.0, dtype, shape)


@implements(np.empty_like)
def empty_like(A, prototype, dtype=None, order="K", subok=True, shape=None, **kwargs):
    """Zeros (+0): an emulated array never exposes uninitialised memory."""
    return _like(A, prototype, 0.0, dtype, shape)


@implements(np.ones_like)
def ones_like(A, a, dtype=None, order="K", subok=True, shape=None, **kwargs):
    return _like(A, a, 1.0, dtype, shape)


@implements(np.full_like)
def full_like(A, a, fill_value, dtype=None, order="K", subok=True, shape=None, **kwargs):
    return _like(A, a, fill_value, dtype, shape)


@implements(np.pad)
def pad(A, array, pad_width, mode="constant", **kwargs):
    """numpy's pad on the bits.  ``constant``: the values rounded once into the format;
    ``edge``, ``wrap``, ``reflect``/``symmetric`` (default ``reflect_type``), ``empty``
    (zeros) move bits; the statistic and ``linear_ramp`` modes compute and are refused."""
    if mode == "constant":
        values = kwargs.pop("constant_values", 0)
        fill = A.bits_in(np.asarray(values, dtype=np.float64) if not A.is_array(values) else values,
                         array.format, "pad")
        return _pad_constant(A, array, pad_width, fill)
    if mode in ("edge", "wrap", "reflect", "symmetric", "empty") and kwargs.get("reflect_type", "even") == "even":
        return A.wrap(np.pad(array.bits, pad_width, mode="constant" if mode == "empty" else mode), array.format)
    raise unsupported("pad", f"mode={mode!r} computes values numpy-side (float64); "
                      "use mode='constant', 'edge', 'wrap', 'reflect' or 'symmetric'")


def _pad_constant(A, array, pad_width, fill):
    """Constant padding with the fill values' bit patterns (numpy broadcasts them per axis)."""
    fill = np.asarray(fill)
    return A.wrap(np.pad(array.bits, pad_width, constant_values=fill.reshape(()) if fill.size == 1 else fill),
                  array.format)


# ---- real values: what numpy says of a real float array -------------------------------------
@implements(np.real, np.real_if_close)
def real(A, val, *args, **kwargs):
    """The Array itself (its values are real)."""
    return val


@implements(np.imag)
def imag(A, val):
    """A read-only Array of +0 (numpy's imaginary part of a real array)."""
    return val.imag


@implements(np.isreal)
def isreal(A, x):
    return np.ones(np.shape(x), dtype=bool)


@implements(np.iscomplex)
def iscomplex(A, x):
    return np.zeros(np.shape(x), dtype=bool)


@implements(np.isrealobj)
def isrealobj(A, x):
    return True


@implements(np.iscomplexobj)
def iscomplexobj(A, x):
    return False


@implements(np.fft.fftshift)
def fftshift(A, x, axes=None):
    """``np.roll`` by half of each axis (numpy's definition): exact."""
    return np.roll(x, *_half_shifts(x, axes, 1))


@implements(np.fft.ifftshift)
def ifftshift(A, x, axes=None):
    return np.roll(x, *_half_shifts(x, axes, -1))


def _half_shifts(x, axes, sign: int):
    if axes is None:
        axes = tuple(range(x.ndim))
    if isinstance(axes, (int, np.integer)):
        return sign * (x.shape[axes] // 2), axes
    return [sign * (x.shape[ax] // 2) for ax in axes], axes


@implements(np.apply_along_axis)
def apply_along_axis(A, func1d, axis, arr, *args, **kwargs):
    """numpy's loop: ``func1d`` called on each 1-d slice along ``axis`` (an Array), its
    results stacked where the axis was -- Arrays stay Arrays (their common format);
    other results (indices, counts) form a plain ndarray.  A Python loop over the
    slices, as numpy's own."""
    (axis,) = axes_of(arr.ndim, axis)
    moved = np.moveaxis(arr, axis, -1)
    outer = moved.shape[:-1]
    if 0 in outer:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    results = [func1d(moved[index], *args, **kwargs) for index in np.ndindex(outer)]
    if not all(A.is_array(r) for r in results):
        results = [r.to_numpy() if A.is_array(r) else np.asarray(r) for r in results]
    stacked = np.stack(results)
    kept = stacked.ndim - 1
    stacked = stacked.reshape(outer + stacked.shape[1:])
    return np.moveaxis(stacked, range(len(outer), len(outer) + kept), range(axis, axis + kept))


@implements(np.apply_over_axes)
def apply_over_axes(A, func, a, axes):
    """numpy's loop: ``func(a, axis)`` for each axis in turn, a dimension put back where
    ``func`` removed it."""
    value = a
    for axis in np.atleast_1d(axes):
        axis = int(axis) + a.ndim if axis < 0 else int(axis)
        result = func(value, axis)
        if np.ndim(result) != np.ndim(value):
            result = np.expand_dims(result, axis)
            if np.ndim(result) != np.ndim(value):
                raise ValueError("numpy.apply_over_axes: function is not returning an array of the correct shape")
        value = result
    return value

