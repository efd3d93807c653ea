"""Order, search and truth on :class:`~softfloat.Array`: exact, decided on integer keys
made from the bit patterns, never on rounded values.

* Order is numpy's comparison: -0 equals +0 and every NaN, whatever its sign, is one
  value larger than +inf.  Every sort is stable (``sort``, ``argsort``, ``partition``,
  ``argpartition``, ``lexsort``, whatever ``kind`` says): equal elements -- -0 and +0,
  NaNs -- keep their order, numpy's ``kind="stable"`` result bit for bit (its other kinds
  leave that order to the algorithm and the machine).  ``unique``, ``searchsorted``,
  ``isin``, the set functions and ``digitize`` compare so too; ``argmax``/``argmin``
  return the first NaN where there is one, ``nanargmax``/``nanargmin`` skip NaNs and
  raise on an all-NaN slice, as numpy does.  (IEEE totalOrder, -0 before +0, is
  ``softfloat.total_order``.)
* Truth is numpy's: nonzero, NaN included (``any``, ``all``, ``nonzero``,
  ``flatnonzero``, ``argwhere``, ``count_nonzero``).

Indices, booleans and counts come back as plain ndarrays; values as Arrays of the
operands' (promoted) format.

>>> import numpy as np, softfloat as sf
>>> x = sf.asarray([0.0, np.nan, -0.0, 2.0, 2.0], "fp16")
>>> np.argmax(x), np.nanargmax(x), np.unique(x).tolist(), np.count_nonzero(x)
(np.int64(1), np.int64(3), [0.0, 2.0, nan], np.int64(3))
"""

from __future__ import annotations

import math

import numpy as np

from . import _validate, codec
from ._array_registry import implements
from ._array_structural import check_partition_keywords, truthy
from .ops.compare import total_order_keys

__all__ = ["numpy_key"]


def numpy_key(bits, fmt):
    """Integers that compare as numpy compares floats, with NaNs as one value above +inf:
    totalOrder's key with -0 sent to +0 and every NaN to the largest integer."""
    bits = np.asarray(bits)
    key = total_order_keys(bits, fmt)  # (int64)
    zero = np.asarray(codec.is_zero(bits, fmt))
    key[zero] = int(total_order_keys(np.zeros((), fmt.storage_dtype), fmt))
    key[np.asarray(codec.is_nan(bits, fmt))] = np.iinfo(np.int64).max
    return key


def _key_of(A, fmt, x, operation):
    return numpy_key(A.bits_in(x, fmt, operation), fmt)


# ---- sorting -------------------------------------------------------------------------------
@implements(np.argsort)
def argsort(A, a, axis=-1, kind=None, order=None, *, stable=None):
    """Indices that sort ``a`` in numpy's order, stably (-0 and +0, and NaNs, keep their
    order): numpy's ``kind="stable"`` indices."""
    _check_sort_keywords(kind, order, stable)
    return np.argsort(numpy_key(a.bits, a.format), axis=axis, kind="stable")


def _check_sort_keywords(kind, order, stable):
    """numpy's own checks of ``kind``, ``order`` and ``stable`` (every sort here is the
    stable one, so a misspelt kind, or order= on an array without fields, was taken)."""
    if kind is not None or order is not None or stable is not None:
        np.sort(np.empty(0), kind=kind, order=order, stable=stable)


@implements(np.sort)
def sort(A, a, axis=-1, kind=None, order=None, *, stable=None):
    """``a`` sorted in numpy's order, stably: the bit patterns move."""
    _check_sort_keywords(kind, order, stable)
    if axis is None:
        return sort(A, A.wrap(a.bits.reshape(-1), a.format))
    index = argsort(A, a, axis=axis)
    return A.wrap(np.take_along_axis(a.bits, index, axis=axis), a.format)


@implements(np.argpartition)
def argpartition(A, a, kth, axis=-1, kind="introselect", order=None):
    """argsort's indices (a full stable sort is a valid partition; deterministic)."""
    _validate.partition_index(kth, a.shape, axis)
    check_partition_keywords(kind, order)
    return argsort(A, a, axis=axis)


@implements(np.lexsort)
def lexsort(A, keys, axis=-1):
    return np.lexsort([numpy_key(k.bits, k.format) if A.is_array(k) else k for k in keys], axis=axis)


def _arg(pick, nan_first):
    """argmax/argmin on numpy's keys; the first NaN wins where ``nan_first``."""
    def impl(A, a, axis=None, out=None, *, keepdims=False):
        key = numpy_key(a.bits, a.format)
        nan = np.asarray(codec.is_nan(a.bits, a.format))
        if pick is np.argmin:
            key = np.where(nan, np.iinfo(np.int64).max, -key)  # argmin of key = argmax of -key
        if nan_first:
            index = np.argmax(key, axis=axis, out=out, keepdims=keepdims)  # NaN is the largest key
        else:
            if np.any(np.all(nan, axis=axis)):
                raise ValueError("All-NaN slice encountered")
            index = np.argmax(np.where(nan, np.iinfo(np.int64).min, key), axis=axis, out=out, keepdims=keepdims)
        return index
    return impl


argmax = implements(np.argmax)(_arg(np.argmax, True))
argmin = implements(np.argmin)(_arg(np.argmin, True))
nanargmax = implements(np.nanargmax)(_arg(np.argmax, False))
nanargmin = implements(np.nanargmin)(_arg(np.argmin, False))


@implements(np.searchsorted)
def searchsorted(A, a, v, side="left", sorter=None):
    """Insertion points on numpy's keys (``v`` rounded into ``a``'s format where it is not
    an Array: weak)."""
    fmt = a.format if not A.is_array(v) else A.common(a, v)[0]
    return np.searchsorted(_key_of(A, fmt, a, "searchsorted"), _key_of(A, fmt, v, "searchsorted"),
                           side=side, sorter=sorter)


@implements(np.digitize)
def digitize(A, x, bins, right=False):
    fmt = A.common(x, bins)[0]
    return np.digitize(_key_of(A, fmt, x, "digitize"), _key_of(A, fmt, bins, "digitize"), right=right)


# ---- unique and sets ---------------------------------------------------------------------------
@implements(np.unique)
def unique(A, ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, sorted=True):
    """numpy's unique on numpy's keys (-0 equals +0); each unique value (or slice) is the
    bit patterns of its first occurrence, and the values come sorted (``sorted=False``
    leaves numpy the order: this is one).  NaNs as numpy takes them: of a flattened or 1-d
    array one value with ``equal_nan`` (after +inf), else each its own, in their order;
    with ``axis`` on more dimensions numpy compares slices element by element, so a slice
    holding a NaN equals no other, whatever ``equal_nan`` says."""
    key = numpy_key(ar.bits, ar.format)
    nan = np.asarray(codec.is_nan(ar.bits, ar.format))
    if axis is None or ar.ndim == 1:
        if not equal_nan:  # every NaN its own value, after +inf, in their order
            key[nan] = np.iinfo(np.int64).max - np.arange(int(nan.sum()))[::-1]
        _, index, inverse, counts = np.unique(key, return_index=True, return_inverse=True, return_counts=True,
                                              axis=axis)
    else:
        index, inverse, counts = _unique_slices(key, nan, axis)
    bits = ar.bits.reshape(-1) if axis is None else ar.bits
    values = A.wrap(np.take(bits, index, axis=0 if axis is None else axis), ar.format)
    extra = [r for r, wanted in zip((index, inverse, counts), (return_index, return_inverse, return_counts))
             if wanted]
    return (values, *extra) if extra else values


def _unique_slices(key, nan, axis):
    """numpy's unique along ``axis`` of a multi-dimensional array of keys (its index,
    inverse and counts): slices compared element by element, so one that holds a NaN
    equals no other -- a last key column, 0 for a slice without NaN and its rank among
    those with one, keeps them apart in their order."""
    rows = np.moveaxis(key, axis, 0)
    rows = rows.reshape(rows.shape[0], math.prod(rows.shape[1:]))
    has_nan = np.moveaxis(nan, axis, 0).reshape(rows.shape).any(axis=1)
    tie = np.where(has_nan, np.cumsum(has_nan), 0)
    _, index, inverse, counts = np.unique(np.concatenate([rows, tie[:, None]], axis=1), return_index=True,
                                          return_inverse=True, return_counts=True, axis=0)
    return index, inverse.reshape(-1), counts


@implements(np.unique_values)
def unique_values(A, x):
    """numpy's: unique with ``equal_nan=False`` (each NaN its own value)."""
    return unique(A, x, equal_nan=False)


@implements(np.unique_counts)
def unique_counts(A, x):
    values, counts = unique(A, x, return_counts=True, equal_nan=False)
    return type(np.unique_counts(np.zeros(1)))(values, counts)


@implements(np.unique_inverse)
def unique_inverse(A, x):
    values, inverse = unique(A, x, return_inverse=True, equal_nan=False)
    return type(np.unique_inverse(np.zeros(1)))(values, inverse.reshape(x.shape))


@implements(np.unique_all)
def unique_all(A, x):
    values, index, inverse, counts = unique(A, x, return_index=True, return_inverse=True, return_counts=True,
                                            equal_nan=False)
    return type(np.unique_all(np.zeros(1)))(values, index, inverse.reshape(x.shape), counts)


def _common_keys(A, *operands):
    fmt, bits = A.common(*operands)
    return fmt, [numpy_key(b, fmt) for b in bits], bits


@implements(np.isin)
def isin(A, element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """numpy's isin on numpy's keys, except that NaN is never in anything (NaN != NaN)."""
    fmt, (ke, kt), (be, _) = _common_keys(A, element, test_elements)
    result = np.isin(ke, kt, invert=invert)
    nan = np.asarray(codec.is_nan(be, fmt))
    return np.where(nan, invert, result)


def _set_function(func):
    """intersect1d / union1d / setdiff1d / setxor1d on numpy's keys; values from bits."""
    def impl(A, ar1, ar2, *args, **kwargs):
        fmt, keys, bits = _common_keys(A, ar1, ar2)
        flat_keys, flat_bits = np.concatenate([k.reshape(-1) for k in keys]), \
            np.concatenate([b.reshape(-1) for b in bits])
        chosen = func(*keys, *args, **kwargs)
        result = chosen[0] if isinstance(chosen, tuple) else chosen
        first = {k: b for k, b in zip(flat_keys[::-1].tolist(), flat_bits[::-1].tolist())}
        values = A.wrap(np.array([first[k] for k in result.tolist()], dtype=fmt.storage_dtype), fmt)
        return (values, *chosen[1:]) if isinstance(chosen, tuple) else values
    impl.__name__ = impl.__qualname__ = func.__name__
    return impl


for _func in (np.intersect1d, np.union1d, np.setdiff1d, np.setxor1d):
    implements(_func)(_set_function(_func))


# ---- truth -----------------------------------------------------------------------------------
@implements(np.any)
def any_(A, a, axis=None, out=None, keepdims=False, *, where=True):
    return np.any(truthy(A, a), axis=axis, out=out, keepdims=keepdims, where=truthy(A, where))


@implements(np.all)
def all_(A, a, axis=None, out=None, keepdims=False, *, where=True):
    return np.all(truthy(A, a), axis=axis, out=out, keepdims=keepdims, where=truthy(A, where))


@implements(np.nonzero)
def nonzero(A, a):
    return np.nonzero(truthy(A, a))


@implements(np.flatnonzero)
def flatnonzero(A, a):
    return np.flatnonzero(truthy(A, a))


@implements(np.argwhere)
def argwhere(A, a):
    return np.argwhere(truthy(A, a))


@implements(np.count_nonzero)
def count_nonzero(A, a, axis=None, *, keepdims=False):
    return np.count_nonzero(truthy(A, a), axis=axis, keepdims=keepdims)


@implements(np.array_equiv)
def array_equiv(A, a1, a2):
    """Shape-compatible and equal everywhere by IEEE equality (NaN != NaN, -0 == +0)."""
    fmt, (x, y) = A.common(a1, a2)
    try:
        x, y = np.broadcast_arrays(x, y)
    except ValueError:
        return False
    kx, ky = numpy_key(x, fmt), numpy_key(y, fmt)
    return bool(np.all((kx == ky) & ~np.asarray(codec.is_nan(x, fmt))))


@implements(np.ptp)
def ptp(A, a, axis=None, out=None, keepdims=False):
    """max - min: both exact, the difference rounded once (into ``out``'s format, numpy's out=)."""
    return np.subtract(np.max(a, axis=axis, keepdims=keepdims), np.min(a, axis=axis, keepdims=keepdims),
                       **({} if out is None else {"out": out}))



@implements(np.isposinf)
def isposinf(A, x, out=None):
    return np.logical_and(np.isinf(x), ~np.signbit(x), out=out)


@implements(np.isneginf)
def isneginf(A, x, out=None):
    return np.logical_and(np.isinf(x), np.signbit(x), out=out)


@implements(np.diag_indices_from)
def diag_indices_from(A, arr):
    return np.diag_indices_from(arr.bits)


@implements(np.tril_indices_from)
def tril_indices_from(A, arr, k=0):
    return np.tril_indices_from(arr.bits, k=k)


@implements(np.triu_indices_from)
def triu_indices_from(A, arr, k=0):
    return np.triu_indices_from(arr.bits, k=k)
