"""numpy's reduction keywords on :class:`~softfloat.Array`: ``dtype=``, ``where=`` and
``initial=``, each turned into an operand that the plain reduction then takes.

* ``dtype=`` (a float dtype, a Format or a format's name) converts the operand first,
  each element rounded once with flags counted (numpy casts to ``dtype`` before it
  reduces too); the reduction then runs in that format, with the context's accumulator.
  An integer, bool or complex ``dtype`` is a TypeError: ``arr.astype(int)`` gives the
  plain integers to reduce with numpy.
* ``where=`` replaces the elements not selected by the reduction's identity: +0 for a
  sum (numpy's starting value; adding it changes no running sum and counts as no
  swamped addition), 1 for a product; maximum and minimum have none, so, as numpy says,
  they need ``initial=``, which then stands in.  ``mean`` divides by the number selected.
* ``initial=`` (rounded once into the format) is the first term of every reduced slice.

>>> import numpy as np, softfloat as sf
>>> x = sf.asarray([[1.0, -2.0], [3.0, 4.0]], "fp16")
>>> np.sum(x, where=x > 0), x.max(axis=1, initial=2.5), np.mean(x, dtype=np.float32)
(Array(8.0, fmt=fp16), Array([2.5, 4.0], fmt=fp16), Array(1.5, fmt=fp32))
"""

from __future__ import annotations

import math

import numpy as np

from . import _validate
from .formats import Format, as_format, fp64

__all__ = ["IDENTITY", "axes_of", "check_dtype", "collapse", "converted", "expand", "format_or_dtype",
           "reduce_with", "reduction_operand", "selected_count"]

_AxisError = np.exceptions.AxisError if hasattr(np, "exceptions") else np.AxisError  # numpy 1.24

#: the value a deselected element becomes (a reduction not named has none)
IDENTITY = {"sum": 0.0, "prod": 1.0}


def format_or_dtype(dtype, argname: str = "dtype"):
    """What a numpy ``dtype`` argument names for an Array (``Array.astype``, the ``*_like``
    constructors, reductions' ``dtype=`` read it alike): a Format for a Format or its name,
    ``float``, a numpy or ml_dtypes float type, or numpy's spelling of one (``'f4'``,
    ``'float'``, ``'d'``); else numpy's own dtype (``'int32'``, ``bool``, ``np.uint8``,
    complex, ...) for the caller to take or refuse.  A spelling neither softfloat nor
    numpy reads raises as_format's error."""
    if dtype is float:
        return fp64
    try:
        return as_format(dtype, argname)
    except (TypeError, ValueError) as error:
        try:
            numpy_dtype = np.dtype(dtype)
        except TypeError:
            raise error from None
    return as_format(numpy_dtype, argname) if numpy_dtype.kind == "f" else numpy_dtype


def check_dtype(name: str, dtype):
    """``dtype`` as a Format (see :func:`format_or_dtype`), or a TypeError for a non-float one."""
    if dtype is None or isinstance(dtype, Format):
        return dtype
    try:
        spec = format_or_dtype(dtype)
    except TypeError:
        raise TypeError(f"numpy.{name} on a softfloat.Array: dtype= must be a float dtype or a softfloat "
                        f"format, got {dtype!r}") from None
    if isinstance(spec, np.dtype):
        raise TypeError(f"numpy.{name} on a softfloat.Array: dtype={spec} is not a floating-point "
                        f"format; convert first (arr.astype({spec}) gives plain integers or bools)")
    return spec


def converted(a, name: str, dtype):
    """``a`` in ``dtype``'s format (each element rounded once, flags counted), or ``a``."""
    dtype = check_dtype(name, dtype)
    return a if dtype is None else a.astype(dtype)


def axes_of(ndim: int, axis) -> tuple:
    """numpy's ``axis`` (None: every axis; an int or a tuple, negatives counted from the
    end) as a tuple of axes of an ``ndim``-d array."""
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(_validate.axis_number(axis, a) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    for a in axes:
        if not -max(ndim, 1) <= a < max(ndim, 1):  # (numpy's reductions take 0 and -1 on a 0-d array)
            raise _AxisError(a, ndim)
    axes = tuple(a % ndim if ndim else a for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axis': {axis!r}")
    return axes


def collapse(A, a, axis):
    """``a`` with the axes ``axis`` (all for None) made one, the first, in C order: the
    order in which a reduction over several axes takes the terms."""
    axes = axes_of(a.ndim, axis)
    rest = [d for d in range(a.ndim) if d not in axes]
    count = math.prod(a.shape[d] for d in axes)  # (not -1: a length may be 0)
    bits = np.transpose(a.bits, list(axes) + rest).reshape((count,) + tuple(a.shape[d] for d in rest))
    return A.wrap(bits, a.format)


def expand(result, ndim: int, axis):
    """A reduction's result over ``axis`` of an ``ndim``-d operand, given back the reduced
    axes, each of length 1 (keepdims)."""
    return result.reshape(np.expand_dims(np.empty(result.shape, dtype=bool), axes_of(ndim, axis)).shape)


def reduction_operand(A, a, name: str, axis, *, dtype=None, where=True, initial=np._NoValue):
    """``a`` as the plain reduction ``name`` over ``axis`` takes it, with its keywords
    applied, and the axis to reduce then: converted to ``dtype``, deselected elements
    replaced (``where``), ``initial`` put first along the reduced axes (which
    :func:`collapse` makes one)."""
    a = converted(a, name, dtype)
    has_initial = initial is not np._NoValue and initial is not None
    if where is not True:
        fill = IDENTITY.get(name, initial if has_initial else None)  # initial stands in for max/min
        if fill is None:
            raise ValueError(f"reduction operation '{name}' on a softfloat.Array has no identity, so to use "
                             f"a where mask one has to specify 'initial'")
        keep = np.broadcast_to(where_mask(where), a.shape)
        a = A.wrap(np.where(keep, a.bits, A.bits_in(fill, a.format, name)), a.format)
    if not has_initial:
        return a, axis
    terms = collapse(A, a, axis).bits
    first = np.broadcast_to(A.bits_in(initial, a.format, name), (1,) + terms.shape[1:])
    return A.wrap(np.concatenate([first, terms]), a.format), 0


def reduce_with(A, reduce, a, name: str, axis, keepdims: bool, **keywords):
    """``reduce(x, axis, keepdims)`` of ``a`` with numpy's reduction ``keywords``
    (dtype, where, initial) applied by :func:`reduction_operand`."""
    x, reduced = reduction_operand(A, a, name, axis, **keywords)
    if reduced is axis:
        return reduce(x, axis, keepdims)
    result = reduce(x, 0, False)
    return expand(result, a.ndim, axis) if keepdims else result


def selected_count(a, axis, where, keepdims: bool):
    """How many elements each slice of ``a`` along ``axis`` selects (``where``)."""
    keep = np.broadcast_to(where_mask(where), a.shape)
    return np.sum(keep, axis=axis, keepdims=keepdims)


def where_mask(where) -> np.ndarray:
    """``where=`` as booleans; other dtypes are refused, as numpy refuses them (a float
    mask would select every non-zero element)."""
    mask = np.asarray(where)
    if mask.dtype != bool:
        raise TypeError(f"where must be True, False or an array of booleans; got {_validate.describe(where)}")
    return mask
