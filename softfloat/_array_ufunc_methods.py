"""The methods of numpy's ufuncs on :class:`~softfloat.Array`: ``reduce``,
``accumulate``, ``reduceat`` and ``at``, each defined by the calls it makes on Arrays.

* ``add.reduce`` / ``multiply.reduce`` are ``np.sum`` / ``np.prod`` (the context's
  accumulator; left-to-right correctly rounded products) over ``axis`` (0 by default, as
  for every ufunc), with numpy's ``dtype``, ``where`` and ``initial``
  (``softfloat._array_keywords``); ``maximum``/``minimum``/``fmax``/``fmin.reduce`` are
  exact, halving the axis.
* ``add.accumulate`` / ``multiply.accumulate`` are ``np.cumsum`` / ``np.cumprod``;
  ``maximum``/``minimum``/``fmax``/``fmin.accumulate`` are the exact running pick,
  ``r[k] = ufunc(r[k-1], x[k])``: in log2(K) vectorised doubling steps where a slice
  holds no NaN (the pick is then associative), else in the K sequential steps.
* ``ufunc.reduceat(x, indices, axis)`` is ``ufunc.reduce`` of each segment
  ``x[indices[i]:indices[i + 1]]`` (to the end for the last), or ``x[indices[i]]`` where
  the next index is not larger (numpy's rule); segments of one length are reduced in
  one call (for the two-operand ufuncs below too: each segment their chain).
* ``ufunc.at(a, indices[, b])`` is numpy's unbuffered in-place operation: for every
  index in order, ``a[i] = ufunc(a[i], b)``, an index that repeats seeing the result of
  its earlier occurrences (the embedding gradient's ``np.add.at(dW, ids, dy)``).  It
  runs in rounds, one per repetition, each vectorised over the distinct indices; every
  result is rounded once into a's format.

* The other two-operand ufuncs of Array results (subtract, divide, logaddexp, hypot,
  arctan2, fmod, ...) reduce and accumulate as numpy's loop does: ``r = x[0]`` (or
  ``initial``; the identity with ``where``), then ``r = ufunc(r, x[k])`` in order, each
  call one rounding (logaddexp.reduce is a log-sum-exp step by step); several axes only
  for a ufunc with an identity (numpy's rule), in C order.

Anything else (the comparisons' reductions, ...) raises a TypeError naming it.
"""

from __future__ import annotations

import numpy as np

from . import _fastpaths
from ._array_elementwise import UFUNCS, no_flags
from ._array_keywords import axes_of, collapse, converted, expand, reduce_with
from ._context import get_context
from .flags import Flags
from .ops.compare import total_order_keys
from .ops.kernels import nan_mask

__all__ = ["PICKS", "accumulate", "at", "not_defined", "pick_reduce", "reduce", "reduceat"]

#: the exact picks: their reductions and scans never round
PICKS = (np.maximum, np.minimum, np.fmax, np.fmin)


def not_defined(ufunc, method: str, why: str = "") -> TypeError:
    """The TypeError of a ufunc call (``method`` "__call__") or method an Array does not define."""
    call = f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
    return TypeError(f"{call} on a softfloat.Array is not defined" + (f": {why}" if why else "")
                     + "; convert explicitly with arr.to_numpy() to leave emulation")


def reduce(A, ufunc, x, kwargs):
    """``ufunc.reduce(x, **kwargs)`` without ``out`` (the caller stores the result)."""
    axis = kwargs.pop("axis", 0)
    keepdims = kwargs.pop("keepdims", False)
    keywords = {k: kwargs.pop(k) for k in ("dtype", "where", "initial") if k in kwargs}
    if kwargs:
        raise not_defined(ufunc, "reduce", f"keyword {next(iter(kwargs))}= is not numpy's")
    if ufunc is np.add:
        return np.sum(x, axis=axis, keepdims=keepdims, **keywords)
    if ufunc is np.multiply:
        return np.prod(x, axis=axis, keepdims=keepdims, **keywords)
    if ufunc in PICKS:
        if keywords.pop("dtype", None) is not None:
            raise not_defined(ufunc, "reduce", "dtype= (the result is one of the elements, in their format)")
        return pick_reduce(A, ufunc, x, axis, keepdims, **keywords)
    if _chains(ufunc):
        return _chain_reduce(A, ufunc, converted(x, f"{ufunc.__name__}.reduce", keywords.pop("dtype", None)),
                             axis, keepdims, **keywords)
    raise not_defined(ufunc, "reduce", _ONLY)


#: what reduces and accumulates
_ONLY = "only add, multiply, maximum, minimum, fmax, fmin and the two-operand ufuncs of Array results reduce"


def _chains(ufunc) -> bool:
    """A two-operand ufunc of one Array result (subtract, divide, logaddexp, hypot, ...):
    its reduce and accumulate are the left-to-right chain of its calls."""
    impl = UFUNCS.get(ufunc)
    return impl is not None and ufunc.nin == 2 and ufunc.nout == 1 and not getattr(impl, "predicate", False)


def _chain(A, ufunc, x, first, where=True):
    """r = first; r = ufunc(r, x[k]) for k along axis 0, each one rounding (where ``where``
    is False r stays): every r, stacked, and each step's flags, stacked (None untracked)."""
    ctx, impl, fmt = get_context(), UFUNCS[ufunc], x.format
    where = np.broadcast_to(where, x.shape)
    running, masks = [first.bits], []
    for k in range(x.shape[0]):
        step, f = impl(fmt, ctx, running[-1], x.bits[k])
        running.append(np.where(where[k], step, running[-1]).astype(fmt.storage_dtype))
        if f is not None:
            masks.append([np.broadcast_to(m, first.shape) & where[k] for _, m in f])
    stacked = np.stack(running[1:]) if x.shape[0] else np.empty((0,) + first.shape, fmt.storage_dtype)
    if not ctx.track_flags:
        return stacked, None
    return stacked, Flags(*(np.stack(m) for m in zip(*masks))) if masks else Flags.none((0,) + first.shape)


def _chain_reduce(A, ufunc, x, axis, keepdims, *, where=True, initial=np._NoValue):
    """``ufunc.reduce`` as numpy's loop: r = x[0] (or ``initial``, or the identity where
    ``where`` selects), then r = ufunc(r, x[k]) in order along ``axis``; several axes (only
    for a ufunc with an identity, numpy's rule) in C order."""
    axes = axes_of(x.ndim, axis)
    if len(axes) > 1 and ufunc.identity is None:
        raise ValueError(f"reduction operation '{ufunc.__name__}' is not reorderable, so at most one axis may "
                         f"be specified")
    terms = collapse(A, x, axes)
    start = initial if initial is not np._NoValue else (ufunc.identity if where is not True else None)
    if where is not True:
        if start is None:
            raise ValueError(f"reduction operation '{ufunc.__name__}' does not have an identity, so to use a "
                             f"where mask one has to specify 'initial'")
        where = collapse(A, A.wrap(np.broadcast_to(where, x.shape), x.format), axes).bits
    if start is None:
        if terms.shape[0] == 0:
            raise ValueError(f"zero-size array to reduction operation {ufunc.__name__} which has no identity")
        first, terms = terms[0], terms[1:]  # (where is True: a mask needs a start, checked above)
    else:
        first = A.wrap(np.broadcast_to(A.bits_in(start, x.format, f"{ufunc.__name__}.reduce"), terms.shape[1:]),
                       x.format)
    running, flags = _chain(A, ufunc, terms, first, where)
    result = A.wrap(running[-1], x.format) if running.shape[0] else first.copy()
    kept = (lambda r: expand(r, x.ndim, axes)) if keepdims else (lambda r: r)
    get_context().record(f"{ufunc.__name__}.reduce",  # (an element counts once for a flag any step raised)
                         None if flags is None else Flags(*(kept(m.any(axis=0)) for _, m in flags)))
    return kept(result)


def pick_reduce(A, ufunc, x, axis, keepdims, *, where=True, initial=np._NoValue):
    """maximum/minimum/fmax/fmin over ``axis`` (exact), with ``where`` and ``initial``."""
    name = "max" if ufunc in (np.maximum, np.fmax) else "min"
    return reduce_with(A, lambda t, ax, kd: _halving(A, ufunc, t, ax, kd), x, name, axis, keepdims,
                       where=where, initial=initial)


def _halving(A, ufunc, x, axis, keepdims):
    """The pick over ``axis`` (several axes, or all for None) by halving it (exact: the
    order does not matter); without a NaN (and with softfloat._fastpaths.ENABLED), the
    element of largest (smallest) totalOrder key at once -- the same element, since
    without NaNs every pick is that order's, +0 above -0, and raises no flag."""
    bits = collapse(A, x, axis).bits
    if bits.shape[0] == 0:
        raise ValueError("zero-size array to reduction operation which has no identity")
    ctx = get_context()
    kept = (lambda r: expand(r, x.ndim, axis)) if keepdims else (lambda r: r)
    flags = no_flags(ctx, bits.shape[1:])
    if _fastpaths.ENABLED and bits.shape[0] > 1 and not nan_mask(bits, x.format).any():
        keys = total_order_keys(bits, x.format)
        index = (np.argmax if ufunc in (np.maximum, np.fmax) else np.argmin)(keys, axis=0)
        bits = np.take_along_axis(bits, index[None], axis=0)
    impl = UFUNCS[ufunc]
    while bits.shape[0] > 1:
        half = bits.shape[0] // 2
        picked, f = impl(x.format, ctx, bits[:half], bits[half:2 * half])
        if f is not None:
            flags = flags | Flags(*(np.any(m, axis=0) for _, m in f))
        bits = np.concatenate([np.asarray(picked), bits[2 * half:]])
    result = bits[0]
    ctx.record("reduce", None if flags is None else Flags(*(kept(m) for _, m in flags)))
    return kept(A.wrap(result, x.format))


def accumulate(A, ufunc, x, kwargs):
    """``ufunc.accumulate(x, **kwargs)`` without ``out``."""
    axis = kwargs.pop("axis", 0)
    dtype = kwargs.pop("dtype", None)
    if kwargs:
        raise not_defined(ufunc, "accumulate", f"keyword {next(iter(kwargs))}=")
    if axis is None:
        raise TypeError(f"numpy.{ufunc.__name__}.accumulate: axis=None is not allowed (numpy's rule)")
    if ufunc is np.add:
        return np.cumsum(x, axis=axis, dtype=dtype)
    if ufunc is np.multiply:
        return np.cumprod(x, axis=axis, dtype=dtype)
    if _chains(ufunc) and ufunc not in PICKS:  # r[0] = x[0], r[k] = ufunc(r[k - 1], x[k])
        terms = np.moveaxis(converted(x, f"{ufunc.__name__}.accumulate", dtype), axis, 0)
        if terms.shape[0] == 0:
            return x.copy()
        running, flags = _chain(A, ufunc, terms[1:], terms[0])
        get_context().record(f"{ufunc.__name__}.accumulate", None if flags is None else Flags(
            *(np.moveaxis(np.concatenate([np.zeros((1,) + m.shape[1:], bool), m]), 0, axis) for _, m in flags)))
        return np.moveaxis(A.wrap(np.concatenate([terms[:1].bits, running]), terms.format), 0, axis)
    if ufunc not in PICKS:
        raise not_defined(ufunc, "accumulate", _ONLY.replace("reduce", "accumulate"))
    if dtype is not None:
        raise not_defined(ufunc, "accumulate", "dtype= (each result is one of the elements, in their format)")
    return _running_pick(ufunc, x, axis)


def reduceat(A, ufunc, x, indices, axis=0, dtype=None):
    """``ufunc.reduceat(x, indices, axis, dtype)`` without ``out`` (see the module)."""
    if not _chains(ufunc):  # (add and multiply among them)
        raise not_defined(ufunc, "reduceat", _ONLY.replace("reduce", "reduceat"))
    if dtype is not None:
        if ufunc in PICKS:
            raise not_defined(ufunc, "reduceat", "dtype= (each result is one of the elements, in their format)")
        x = converted(x, f"{ufunc.__name__}.reduceat", dtype)
    starts = np.asarray(indices)
    if starts.dtype.kind not in "iu" or starts.ndim != 1:
        raise TypeError(f"numpy.{ufunc.__name__}.reduceat: indices must be a 1-d array of integers; got "
                        f"{'an Array' if A.is_array(indices) else f'dtype {starts.dtype}'} of {starts.ndim} "
                        "dimension(s)")
    (axis,) = axes_of(x.ndim, axis)
    terms = np.moveaxis(x, axis, 0)
    n = terms.shape[0]
    if starts.size and (starts.min() < 0 or starts.max() >= n):
        bad = starts[(starts < 0) | (starts >= n)][0]
        raise IndexError(f"numpy.{ufunc.__name__}.reduceat: index {bad} is out of bounds for axis {axis} "
                         f"with size {n}")
    ends = np.r_[starts[1:], n]
    lengths = np.where(ends > starts, ends - starts, 1)
    bits = np.empty((starts.size,) + terms.shape[1:], x.format.storage_dtype)
    for m in np.unique(lengths):
        chosen = np.flatnonzero(lengths == m)
        bits[chosen] = ufunc.reduce(terms[starts[chosen, None] + np.arange(m)], axis=1).bits
    return np.moveaxis(A.wrap(bits, x.format), 0, axis)


def _running_pick(ufunc, x, axis):
    """r[k] = ufunc(r[k-1], x[k]) along ``axis``, through the ufunc on Arrays."""
    terms = np.moveaxis(x, axis, 0)
    n = terms.shape[0]
    running = terms.copy()
    if not nan_mask(x.bits, x.format).any():  # associative: r[k] = pick(r[k - step], r[k]), doubling
        step = 1
        while step < n:
            running[step:] = ufunc(running[:-step], running[step:])
            step *= 2
    else:
        for k in range(1, n):
            running[k] = ufunc(running[k - 1], terms[k])
    return np.moveaxis(running, 0, axis)


def at(A, ufunc, a, indices, b=None):
    """numpy's unbuffered ``ufunc.at``: a[i] = ufunc(a[i], b) for every index in order
    (see the module docstring); returns None, as numpy does."""
    if not A.is_array(a):
        raise TypeError(f"numpy.{ufunc.__name__}.at: the array written must be a softfloat.Array here; "
                        f"got {type(a).__name__}")
    if ufunc.nin != (1 if b is None else 2) or ufunc.nout != 1:
        raise TypeError(f"numpy.{ufunc.__name__}.at takes {ufunc.nin} operand(s) besides the indices")
    positions = np.arange(a.size).reshape(a.shape)[indices]
    flat = positions.reshape(-1)
    if b is not None:  # an Array keeps its format; anything else is weak, as in any call
        values = np.broadcast_to(b.bits if A.is_array(b) else np.asarray(b), positions.shape).reshape(-1)
        operand = (lambda chosen: A.wrap(values[chosen], b.format)) if A.is_array(b) else values.__getitem__
    order = np.argsort(flat, kind="stable")
    ranked = flat[order]
    starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])
    rank = np.arange(ranked.size) - np.repeat(starts, np.diff(np.r_[starts, ranked.size]))
    for r in range(int(rank.max()) + 1 if rank.size else 0):
        chosen = order[rank == r]  # one occurrence of each distinct index, in order
        where = np.unravel_index(flat[chosen], a.shape)
        current = A.wrap(a.bits[where], a.format)
        result = ufunc(current) if b is None else ufunc(current, operand(chosen))
        a.bits[where] = A.bits_in(result, a.format, f"{ufunc.__name__}.at")
    return None
