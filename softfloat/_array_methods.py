"""The ndarray methods and attributes of :class:`~softfloat.Array`, as thin calls.

Each method is numpy's, with numpy's signature: arithmetic ones call the numpy function
(``x.sum(axis=0)`` is ``np.sum(x, axis=0)``), which NEP 18 sends to the Array
implementation, so a method rounds exactly as its function does (see
``softfloat._array_functions`` and the modules it registers); structural ones move bit
patterns with numpy's own method and never round.  A few choices, where a real floating
ndarray has nothing to copy:

* ``.real`` is the Array itself and ``.imag`` a read-only Array of zeros of the format;
  ``.conj()`` / ``.conjugate()`` return the Array itself, as numpy's do for real arrays;
* ``.flat[i]`` is a 0-d Array (numpy gives a scalar; an Array keeps the format), a slice
  or index array of ``.flat`` a 1-d Array, and ``.flat[i] = v`` rounds ``v`` once;
* ``.itemsize``, ``.nbytes``, ``.strides``, ``.flags``, ``.setflags()`` and
  ``.tobytes()`` are those of the stored bit patterns (``format.storage_dtype``: one
  byte per FP8/FP6/FP4 value, two per fp16/bf16);
* ``.view()`` is refused: reinterpreting bits is ``arr.bits.view(...)``, converting
  values ``arr.astype(fmt)``;
* ``.ptp()`` is absent, as in numpy 2 (``np.ptp(x)`` is the function).

This mixin holds no state: the Array type above it gives ``bits``, ``format``,
``_new(bits)`` (an Array of the same format) and item assignment.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["ArrayMethods"]

_NO = np._NoValue


def _given(**kwargs) -> dict:
    """The keywords a caller gave: numpy's "not given" defaults dropped, so that every
    implementation sees what numpy's own method would pass on."""
    return {k: v for k, v in kwargs.items() if v is not _NO and not (k == "where" and v is True)
            and not (k in ("out", "dtype") and v is None)}


class ArrayMethods:
    """ndarray's methods and attributes for an emulated-precision array (mixin)."""

    __slots__ = ()

    # ---- reductions and scans: the numpy functions ----------------------------------------
    def sum(self, axis=None, dtype=None, out=None, keepdims=False, initial=_NO, where=True):
        """``np.sum(self, ...)``: the context's accumulator, rounded once into the format."""
        return np.sum(self, axis=axis, keepdims=keepdims, **_given(dtype=dtype, out=out, initial=initial,
                                                                   where=where))

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, initial=_NO, where=True):
        """``np.prod(self, ...)``."""
        return np.prod(self, axis=axis, keepdims=keepdims, **_given(dtype=dtype, out=out, initial=initial,
                                                                    where=where))

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
        """``np.mean(self, ...)``: the sum, then one correctly rounded division by n."""
        return np.mean(self, axis=axis, keepdims=keepdims, **_given(dtype=dtype, out=out, where=where))

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=_NO,
            correction=_NO):
        """``np.var(self, ...)``."""
        return np.var(self, axis=axis, ddof=ddof, keepdims=keepdims,
                      **_given(dtype=dtype, out=out, where=where, mean=mean, correction=correction))

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=_NO,
            correction=_NO):
        """``np.std(self, ...)``."""
        return np.std(self, axis=axis, ddof=ddof, keepdims=keepdims,
                      **_given(dtype=dtype, out=out, where=where, mean=mean, correction=correction))

    def max(self, axis=None, out=None, keepdims=False, initial=_NO, where=True):
        """``np.max(self, ...)`` (exact)."""
        return np.max(self, axis=axis, keepdims=keepdims, **_given(out=out, initial=initial, where=where))

    def min(self, axis=None, out=None, keepdims=False, initial=_NO, where=True):
        """``np.min(self, ...)`` (exact)."""
        return np.min(self, axis=axis, keepdims=keepdims, **_given(out=out, initial=initial, where=where))

    def argmax(self, axis=None, out=None, *, keepdims=False):
        """``np.argmax(self, ...)``: a plain integer ndarray (or int)."""
        return np.argmax(self, axis=axis, **_given(out=out), **({"keepdims": True} if keepdims else {}))

    def argmin(self, axis=None, out=None, *, keepdims=False):
        """``np.argmin(self, ...)``: a plain integer ndarray (or int)."""
        return np.argmin(self, axis=axis, **_given(out=out), **({"keepdims": True} if keepdims else {}))

    def all(self, axis=None, out=None, keepdims=False, *, where=True):
        """``np.all(self, ...)``: a plain bool (a NaN is true, as in numpy)."""
        return np.all(self, axis=axis, keepdims=keepdims, **_given(out=out, where=where))

    def any(self, axis=None, out=None, keepdims=False, *, where=True):
        """``np.any(self, ...)``: a plain bool."""
        return np.any(self, axis=axis, keepdims=keepdims, **_given(out=out, where=where))

    def cumsum(self, axis=None, dtype=None, out=None):
        """``np.cumsum(self, ...)``."""
        return np.cumsum(self, axis=axis, **_given(dtype=dtype, out=out))

    def cumprod(self, axis=None, dtype=None, out=None):
        """``np.cumprod(self, ...)``."""
        return np.cumprod(self, axis=axis, **_given(dtype=dtype, out=out))

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        """``np.trace(self, ...)``: the sum of the diagonal."""
        return np.trace(self, offset=offset, axis1=axis1, axis2=axis2, **_given(dtype=dtype, out=out))

    # ---- elementwise through numpy functions ---------------------------------------------
    def clip(self, min=None, max=None, out=None, **kwargs):
        """``np.clip(self, min, max, ...)`` (exact: IEEE maximum then minimum)."""
        return np.clip(self, min, max, **_given(out=out), **kwargs)

    def round(self, decimals=0, out=None):
        """``np.round(self, decimals, ...)``."""
        return np.round(self, decimals=decimals, **_given(out=out))

    def dot(self, b, out=None):
        """``np.dot(self, b)``: the context's accumulator, rounded once into the format."""
        return np.dot(self, b, **_given(out=out))

    def nonzero(self):
        """``np.nonzero(self)``: a tuple of plain integer index arrays."""
        return np.nonzero(self)

    def argsort(self, axis=-1, kind=None, order=None, *, stable=None):
        """``np.argsort(self, ...)``: numpy's order, stable; a plain integer ndarray."""
        return np.argsort(self, axis=axis, **_given(kind=kind, order=order, stable=stable))

    def sort(self, axis=-1, kind=None, order=None, *, stable=None):
        """Sort in place (numpy's order, stable), as ``ndarray.sort``: the bits move, the object stays."""
        self.bits[...] = np.sort(self, axis=axis, **_given(kind=kind, order=order, stable=stable)).bits

    def partition(self, kth, axis=-1, kind="introselect", order=None):
        """Partition in place, as ``ndarray.partition`` (``np.partition``'s result: exact)."""
        self.bits[...] = np.partition(self, kth, axis=axis, kind=kind, order=order).bits

    def argpartition(self, kth, axis=-1, kind="introselect", order=None):
        """``np.argpartition(self, ...)``: a plain integer ndarray."""
        return np.argpartition(self, kth, axis=axis, kind=kind, order=order)

    def __round__(self, ndigits=None):
        """``round(x, n)``: ``np.round(x, n)`` (as for an ndarray), an Array of the format;
        ``round(x)`` of a 0-d Array is a Python int, as for a float or a numpy scalar (so
        ``range(round(t / dt))`` works): the value rounded to nearest even, exactly
        (ValueError for a NaN, OverflowError for an infinity, as Python's)."""
        if ndigits is None and self.ndim == 0:
            return round(self.item())
        return np.round(self, 0 if ndigits is None else ndigits)

    def as_integer_ratio(self):
        """The value of a 0-d Array (an element) as a ratio of two ints, exactly, as a
        float's or a numpy scalar's (ValueError for a NaN, OverflowError for an
        infinity).  Python's ``statistics`` module reads elements through it: ``statistics.stdev(x)`` and ``median(x)`` work on an Array as
        on a float16 ndarray (``statistics.mean(x)`` builds its result as
        ``Array(fraction)``, which has no format: ``np.mean(x)`` or ``statistics.fmean(x)``)."""
        if self.ndim:
            raise TypeError(f"as_integer_ratio of an Array of shape {self.shape}: only an element (a 0-d "
                            f"Array, x[i]) is one number")
        return self.item().as_integer_ratio()

    def is_integer(self) -> bool:
        """Whether a 0-d Array's value is an integer (a float's and a numpy scalar's method)."""
        if self.ndim:
            raise TypeError(f"is_integer of an Array of shape {self.shape}: only an element (a 0-d Array, "
                            f"x[i]) is one number; np.all(np.round(x) == x) asks it of every element")
        return self.item().is_integer()

    def __trunc__(self) -> int:
        """``math.trunc(x)`` of a 0-d Array: the value rounded toward zero as a Python int,
        as for a float (math.floor and math.ceil read ``float(x)``, math.trunc does not);
        TypeError with dimensions, as for an ndarray: ``np.trunc(x)`` keeps the Array."""
        if self.ndim:
            raise TypeError(f"math.trunc of an Array of shape {self.shape}: only an element (a 0-d Array, "
                            f"x[i]) is one number; np.trunc(x) rounds every element toward zero")
        return math.trunc(self.item())

    def searchsorted(self, v, side="left", sorter=None):
        """``np.searchsorted(self, v, ...)``."""
        return np.searchsorted(self, v, side=side, sorter=sorter)

    def conj(self):
        """The Array itself (its values are real), as numpy's ``conj`` of a real array."""
        return self

    conjugate = conj

    # ---- structure: bit patterns move, nothing rounds --------------------------------------
    def ravel(self, order="C"):
        """A 1-d Array (a view of the bits where numpy's ravel gives one)."""
        return self._new(self.bits.ravel(order))

    def flatten(self, order="C"):
        """A 1-d copy."""
        return self._new(self.bits.flatten(order))

    def squeeze(self, axis=None):
        return self._new(self.bits.squeeze(axis))

    def swapaxes(self, axis1, axis2):
        return self._new(self.bits.swapaxes(axis1, axis2))

    def repeat(self, repeats, axis=None):
        return self._new(self.bits.repeat(repeats, axis))

    def take(self, indices, axis=None, out=None, mode="raise"):
        """Elements at ``indices`` (numpy's ``take``); ``out`` an Array of the same format."""
        taken = self._new(np.asarray(self.bits.take(indices, axis=axis, mode=mode)))
        if out is None:
            return taken
        out[...] = taken
        return out

    def compress(self, condition, axis=None):
        return self._new(self.bits.compress(condition, axis))

    def diagonal(self, offset=0, axis1=0, axis2=1):
        """The diagonal (a read-only view of the bits, as numpy's)."""
        return self._new(self.bits.diagonal(offset, axis1, axis2))

    def put(self, indices, values, mode="raise"):
        """``ndarray.put``: ``values`` rounded once into the format, flags counted."""
        self.flat[np.arange(self.size).take(indices, mode=mode)] = values

    def fill(self, value):
        """Every element set to ``value``, rounded once into the format (flags counted)."""
        self[...] = value

    def tobytes(self, order="C") -> bytes:
        """The bit patterns' bytes (``format.storage_dtype``, native byte order): what
        ``Array.from_bits(np.frombuffer(data, fmt.storage_dtype), fmt)`` reads back."""
        return self.bits.tobytes(order)

    def __bytes__(self) -> bytes:
        """``bytes(x)``: :meth:`tobytes`, as ``bytes(ndarray)`` gives the array's memory (for
        fp16, fp32 and fp64 the bytes of numpy's float16/32/64 array of the same values).
        ``memoryview(x.bits)`` is the buffer itself (an Array exports none)."""
        return self.bits.tobytes()

    def setflags(self, write=None, align=None, uic=None):
        """``ndarray.setflags`` on the bit patterns (``write=False``: assignments raise)."""
        self.bits.setflags(write=write, align=align, uic=uic)

    @property
    def flags(self):
        """The bit patterns' ``ndarray.flags`` (contiguity, writeability)."""
        return self.bits.flags

    def view(self, *args, **kwargs):
        raise TypeError("Array.view is not supported: an Array's values are its format's; use "
                        "arr.bits.view(dtype) to reinterpret the bit patterns, or arr.astype(fmt) to "
                        "convert the values")

    # ---- attributes -----------------------------------------------------------------------
    @property
    def itemsize(self) -> int:
        """Bytes per stored bit pattern (``format.storage_dtype``)."""
        return self.bits.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of the stored bit patterns."""
        return self.bits.nbytes

    @property
    def strides(self) -> tuple[int, ...]:
        """The strides of the stored bit patterns, in bytes."""
        return self.bits.strides

    @property
    def mT(self):
        """The last two axes swapped (numpy's matrix transpose)."""
        if self.ndim < 2:
            raise ValueError(f"matrix transpose with ndim < 2 is undefined; the Array has ndim {self.ndim}")
        return self._new(self.bits.swapaxes(-1, -2))

    @property
    def real(self):
        """The Array itself: its values are real."""
        return self

    @property
    def imag(self):
        """A read-only Array of zeros of the format (numpy's ``imag`` of a real array)."""
        zeros = np.zeros(self.shape, dtype=self.bits.dtype)  # +0 is the all-zero pattern in every format
        zeros.flags.writeable = False
        return self._new(zeros)

    @property
    def flat(self) -> "FlatIter":
        """A flat view: ``.flat[i]`` a 0-d Array, ``.flat[a:b]`` a 1-d Array, assignable."""
        return FlatIter(self)


class FlatIter:
    """``Array.flat``: index, iterate and assign in C order (numpy's flatiter)."""

    __slots__ = ("_base",)

    def __init__(self, base):
        self._base = base

    @property
    def base(self):
        return self._base

    def __len__(self) -> int:
        return self._base.size

    def __iter__(self):
        flat = self._base.bits.reshape(-1)
        for i in range(flat.size):
            yield self._base._new(flat[i:i + 1].reshape(()))

    def __getitem__(self, index):
        return self._base._new(np.asarray(self._base.bits.flat[index]))

    def __setitem__(self, index, value):
        positions = np.arange(self._base.size).reshape(-1)[index]
        self._base[np.unravel_index(positions, self._base.shape)] = value
