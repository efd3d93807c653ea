"""Emulated-precision arrays: ordinary numpy code, every operation one correct rounding.

An :class:`Array` holds bit patterns and a :class:`~softfloat.Format`.  numpy's protocols
(NEP 13 ``__array_ufunc__``, NEP 18 ``__array_function__``) send ufuncs and functions to
the bit-level operations (``softfloat.ops``, ``softfloat.accumulate``) with the attributes
of the current :func:`~softfloat.context`, whose sticky flags count what happened.  What
is not mapped returns ``NotImplemented``, so numpy raises its TypeError: there is never a
silent float64 fallback.  The mapping itself lives in ``softfloat._array_ufuncs`` and
``softfloat._array_functions``.
"""

from __future__ import annotations

import math

import numpy as np

from . import _validate, codec
from ._array_methods import ArrayMethods
from ._array_functions import FUNCTIONS
from ._array_keywords import format_or_dtype
from ._array_registry import not_defined
from ._array_ufuncs import dispatch, plain_call, plain_kernel, sum_of
from ._array_values import text
from .codec import decode, encode
from ._context import get_context
from ._fpenv import require_subnormals
from .formats import Format, as_format, catalogue, fp64, tf32
from .ops import convert, to_int
from .rounding import Rounding

__all__ = ["Array", "asarray", "promote"]


def _operator(ufunc, name: str, reflected: bool = False):
    """The binary operator ``name`` of an Array: ``ufunc(self, other)`` (``ufunc(other,
    self)`` when ``reflected``), directly for an Array, float or int operand."""
    impl = plain_kernel(ufunc)
    mixin = getattr(np.lib.mixins.NDArrayOperatorsMixin, name)

    def operator(self, other):
        kind = type(other)
        if kind is Array or kind is float or kind is int:
            return plain_call(_ADAPTER, ufunc, impl, (other, self) if reflected else (self, other), True)
        return mixin(self, other)
    operator.__name__ = operator.__qualname__ = name
    operator.__doc__ = mixin.__doc__
    return operator


class Array(ArrayMethods, np.lib.mixins.NDArrayOperatorsMixin):
    """An array of values of one floating-point format, stored as bit patterns.

    Make one with :func:`asarray` (rounding any input once), :meth:`from_bits` (bit
    patterns, checked and copied) or ``Array(bits, fmt)`` (an ndarray of
    ``fmt.storage_dtype`` holding patterns, wrapped as it is).
    Arithmetic, comparisons, reductions and matrix products follow numpy's spelling and
    are correctly rounded in the format (see the module docstring for the mapping).

    Attributes
    ----------
    bits : numpy.ndarray
        The bit patterns, of ``format.storage_dtype``.
    format : Format

    Examples
    --------
    >>> import numpy as np, softfloat as sf
    >>> x = sf.asarray([1.0, 0.1], "fp16")
    >>> x
    Array([1.0, 0.0999755859375], fmt=fp16)
    >>> x + 2**-11                      # 1 + 2**-11 is a tie: back to 1 (swamping)
    Array([1.0, 0.1004638671875], fmt=fp16)
    >>> np.maximum(x - 1, 0).tolist()
    [0.0, 0.0]
    """

    __slots__ = ("_bits", "_format")
    __array_priority__ = 20

    def __init__(self, bits: np.ndarray, fmt: Format | str = None):
        """Wrap ``bits``, an ndarray of ``fmt.storage_dtype`` holding bit patterns of
        ``fmt``, as an Array (a view: nothing is copied or rounded).

        For values, :func:`asarray` rounds them once into the format; for patterns in
        another integer type or in a list, :meth:`from_bits` checks and copies them.
        """
        if fmt is None:
            raise TypeError(_NO_FORMAT.format(_validate.describe(bits)))
        if not isinstance(fmt, Format):
            fmt = as_format(fmt)
        if type(bits) is not np.ndarray or bits.dtype != fmt.storage_dtype:
            got = f"an ndarray of {bits.dtype}" if isinstance(bits, np.ndarray) else type(bits).__name__
            raise TypeError(f"Array(bits, fmt): bits must be an ndarray of {fmt.name}'s bit patterns, dtype "
                            f"{fmt.storage_dtype}; got {got} (for values use softfloat.asarray(x, "
                            f"{fmt.name!r}); for patterns in another type, Array.from_bits(bits, {fmt.name!r}))")
        self._bits = bits
        self._format = fmt

    @classmethod
    def from_bits(cls, bits, fmt) -> "Array":
        """An Array of the given bit patterns (copied), checked against ``fmt``'s width.

        >>> import softfloat as sf
        >>> sf.Array.from_bits([0x3C00, 0x7C00], "fp16")
        Array([1.0, inf], fmt=fp16)
        """
        fmt = as_format(fmt)
        arr = _validate.bit_patterns("bits", bits, fmt.bits)
        return _wrap(np.array(arr, dtype=fmt.storage_dtype, copy=True), fmt)

    # ---- what it is --------------------------------------------------------------------
    @property
    def bits(self) -> np.ndarray:
        return self._bits

    @property
    def format(self) -> Format:
        return self._format

    @property
    def dtype(self) -> Format:
        """The format (an Array's element type)."""
        return self._format

    @property
    def shape(self) -> tuple[int, ...]:
        return self._bits.shape

    @shape.setter
    def shape(self, value) -> None:
        """``arr.shape = ...``: numpy's in-place reshape (no copy; numpy's error where the
        bit patterns' layout does not allow it)."""
        self._bits.shape = value

    @property
    def ndim(self) -> int:
        return self._bits.ndim

    @property
    def size(self) -> int:
        return self._bits.size

    @property
    def T(self) -> "Array":
        return _wrap(self._bits.T, self._format)

    def __len__(self) -> int:
        return len(self._bits)

    def __contains__(self, value) -> bool:
        """``value in x``: numpy's ``(x == value).any()`` (the value rounded into the format
        as any operand; -0 equals +0, a NaN is in nothing)."""
        return bool((self == value).any())

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d Array")
        for i in range(len(self)):
            yield self[i]

    def _new(self, bits) -> "Array":
        """An Array of the same format over ``bits`` (a view where ``bits`` is one)."""
        return _wrap(bits, self._format)

    def to_numpy(self, dtype=None) -> np.ndarray:
        """The values, exactly, as a plain numpy array: the escape from emulation.

        The narrowest numpy float that holds every value of the format exactly: float16
        for fp16 and the FP8/FP6/FP4 formats, float32 for bf16, tf32 and fp32, float64 for
        fp64 (or ``dtype``, if it holds them exactly).

        >>> import softfloat as sf
        >>> sf.asarray([1.0, 0.1], "fp16").to_numpy()
        array([1. , 0.1], dtype=float16)
        >>> sf.asarray([0.1], "bf16").to_numpy().dtype
        dtype('float32')
        """
        dtype = self._format.value_dtype(np.float16) if dtype is None else dtype
        return np.asarray(decode(self._bits, self._format, dtype))

    def __array__(self, dtype=None, copy=None):
        """``np.asarray(arr)``: :meth:`to_numpy`'s exact values (a new array, always), then
        ``dtype`` if asked for.  Code that calls it leaves emulation: numpy functions
        called on an Array never do (they are emulated or refused).  ``dtype=object``
        gives the elements as iteration does, 0-d Arrays (copies), so that code mapping a
        Python function over them (``np.vectorize``, ``np.frompyfunc``) stays in emulation
        where numpy float16's would compute on Python floats."""
        if copy is False:
            raise ValueError("an Array stores bit patterns: its values as a numpy array are always a new "
                             "array; use np.asarray(arr) (copy=None) or arr.to_numpy()")
        if dtype is not None and np.dtype(dtype) == np.dtype(object):
            elements = np.empty(self.shape, dtype=object)
            flat, fmt = elements.reshape(-1), self._format  # (a view: elements is new and contiguous)
            for i, pattern in enumerate(self._bits.reshape(-1)):
                flat[i] = _wrap(np.asarray(pattern), fmt)
            return elements
        values = self.to_numpy()
        return values if dtype is None else values.astype(dtype)

    def __dlpack__(self, **kwargs):
        """DLPack export (``torch.as_tensor(arr)``, ``np.from_dlpack(arr)``): the exact values
        as :meth:`to_numpy` gives them (float16/float32/float64, a new array), as for
        ``np.asarray``.  For a torch tensor of the format's own dtype (torch.bfloat16,
        float8_e4m3fn, ...) sharing the bit patterns, use ``softfloat.interop.to_torch``."""
        return self.to_numpy().__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._bits.__dlpack_device__()

    def __float__(self) -> float:
        _one_element(self, "float")
        return self.item()

    def __hash__(self) -> int:
        """A 0-d Array (an element, ``x[i]``) hashes as its value, as a numpy scalar does, so
        ``set(np.round(x))``, ``Counter(...)`` and dict keys work and meet equal floats; an
        Array with dimensions is unhashable, as an ndarray."""
        if self.ndim:
            raise TypeError(f"unhashable type: 'Array' of shape {self.shape} (as an ndarray); an element "
                            f"(a 0-d Array, x[i]) hashes as its value, and x.tolist() gives floats")
        return hash(self.item())

    def __int__(self) -> int:
        _one_element(self, "int")
        return int(self.item())

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError("the truth value of an Array with more than one element is ambiguous; "
                             "use np.any() or np.all() on a comparison")
        return bool(self.item() != 0.0)

    def item(self, *args) -> float:
        """One element as a Python float (numpy's ``item``: no argument for a 1-element Array,
        else a flat index or one index per axis)."""
        if not args and self.size != 1:
            raise ValueError("can only convert an Array of size 1 to a Python scalar")
        return float(decode(self._bits.item(*args), self._format))

    def tolist(self):
        return decode(self._bits, self._format).tolist()

    def astype(self, fmt, rounding=None, *, copy=True) -> "Array | np.ndarray":
        """Convert into another format with one rounding (the context's by default).

        ``fmt`` is a Format or name, or a numpy float type: ``float`` and ``np.float64``
        give an fp64 Array, ``np.float32`` fp32 and ``np.float16`` fp16, so that emulated
        code keeps running in emulation (:meth:`to_numpy` leaves it); numpy's strings name
        what their types do (``'f4'``, ``'float'``, ``'int64'``, ``'bool'``).  An integer or bool
        dtype gives a plain ndarray as numpy's cast does: integers truncated toward zero
        (NaN and out-of-range values raise invalid, see :func:`softfloat.to_int`), bools
        ``value != 0``.

        >>> import numpy as np, softfloat as sf
        >>> x = sf.asarray([2.5, -0.1], "fp16")
        >>> x.astype(float), x.astype(np.int32), x.astype("bf16", rounding="toward_zero")
        (Array([2.5, -0.0999755859375], fmt=fp64), array([2, 0], dtype=int32), Array([2.5, -0.099609375], fmt=bf16))
        """
        fmt = format_or_dtype(fmt, "fmt")  # numpy's spellings too: 'int32', 'f4', 'float', bool
        if isinstance(fmt, np.dtype):
            if fmt.kind in "iub":
                return self._to_plain(fmt, rounding)
            as_format(fmt)  # (raises: no float format)
        if fmt == self._format and rounding is None:
            return self.copy() if copy else self
        ctx = get_context()
        bits, flags = ctx.split(convert(self._bits, self._format, fmt, rounding, return_flags=ctx.track_flags,
                                        **ctx.options()))
        ctx.record("astype", flags)
        return _wrap(np.asarray(bits), fmt)

    def _to_plain(self, dtype: np.dtype, rounding) -> np.ndarray:
        if dtype.kind == "b":
            return np.asarray(~codec.is_zero(self._bits, self._format), dtype=bool)
        ctx = get_context()
        values, flags = ctx.split(to_int(self._bits, self._format, rounding or "toward_zero", dtype=dtype,
                                         return_flags=ctx.track_flags, attributes=ctx.attributes))
        ctx.record("astype", flags)
        return np.asarray(values)

    def copy(self, order="C") -> "Array":
        return _wrap(self._bits.copy(order=order), self._format)

    def __copy__(self) -> "Array":
        """``copy.copy(arr)`` copies the elements, as for an ndarray (the default shallow copy
        shared the bits: writing one changed the other)."""
        return self.copy()

    def reshape(self, *shape, order="C", copy=None) -> "Array":
        return _wrap(self._bits.reshape(*shape, order=order, copy=copy), self._format)

    def transpose(self, *axes) -> "Array":
        return _wrap(self._bits.transpose(*axes), self._format)

    def __repr__(self) -> str:
        """``Array([...], fmt=...)``: the exact values, with numpy's print options
        (``np.printoptions(precision=3)``: see ``softfloat._array_values.text``)."""
        return f"Array({text(np.asarray(decode(self._bits, self._format)))}, fmt={self._format.name})"

    # ---- indexing ----------------------------------------------------------------------
    def __getitem__(self, index) -> "Array":
        return _wrap(np.asarray(self._bits[_index(index)]), self._format)

    def __setitem__(self, index, value) -> None:
        """Round ``value`` once into the format (the context's attributes) and store it.

        Like :func:`softfloat.encode`: in a format without NaN (FP6, FP4) a NaN is stored
        as +0 and raises invalid; without infinity, an infinity saturates to +-max_finite
        (FP6/FP4) or becomes the NaN (E4M3), raising overflow.

        >>> import numpy as np, softfloat as sf
        >>> x = sf.asarray([1.0, 2.0], "fp4_e2m1")
        >>> with sf.context() as ctx:
        ...     x[0], x[1] = np.nan, np.inf
        >>> x.tolist(), ctx.flags.invalid, ctx.flags.overflow
        ([0.0, 6.0], 1, 1)
        """
        self._bits[_index(index)] = _bits_in(value, self._format, "setitem")

    # ---- numpy protocols ---------------------------------------------------------------
    # a + b, a * 2.0, ... with an Array or a Python float or int go straight to the kernel
    # (what numpy's ufunc override would do for them, without its round trip); anything
    # else takes NDArrayOperatorsMixin's way through the ufunc
    __add__, __radd__ = _operator(np.add, "__add__"), _operator(np.add, "__radd__", reflected=True)
    __sub__, __rsub__ = _operator(np.subtract, "__sub__"), _operator(np.subtract, "__rsub__", reflected=True)
    __mul__, __rmul__ = _operator(np.multiply, "__mul__"), _operator(np.multiply, "__rmul__", reflected=True)
    __truediv__ = _operator(np.true_divide, "__truediv__")
    __rtruediv__ = _operator(np.true_divide, "__rtruediv__", reflected=True)

    def sum(self, axis=None, dtype=None, out=None, keepdims=False, initial=np._NoValue, where=True):
        """``np.sum(self, ...)``: the context's accumulator, rounded once into the format
        (without keywords beyond ``axis`` and ``keepdims``, straight to the sum, without
        numpy's function dispatch)."""
        if dtype is None and out is None and initial is np._NoValue and where is True:
            require_subnormals()  # the kernels' numpy arithmetic (softfloat._fpenv)
            return sum_of(_ADAPTER, self, axis=axis, keepdims=keepdims)
        return ArrayMethods.sum(self, axis, dtype, out, keepdims, initial, where)

    def __format__(self, spec: str) -> str:
        """A 0-d Array formats as its value (``f"{loss:.4f}"``), as a 0-d ndarray does;
        others take only the empty spec (their str)."""
        if self.ndim == 0:
            return format(self.item(), spec)
        if spec:
            raise TypeError(f"unsupported format string {spec!r} for an Array of shape {self.shape}; format "
                            f"its elements (x.item(i), x.tolist()) or a 0-d Array")
        return str(self)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return dispatch(_ADAPTER, ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        impl = FUNCTIONS.get(func)
        if impl is None or not all(issubclass(t, (Array, np.ndarray)) for t in types):
            return NotImplemented
        require_subnormals()
        result = impl(_ADAPTER, *args, **kwargs)
        if result is NotImplemented:
            raise not_defined(func, kwargs)
        return result


def _one_element(arr, name: str) -> None:
    """float(x) and int(x) of more than one element: numpy's TypeError (item()'s is a ValueError)."""
    if arr.size != 1:
        raise TypeError(f"{name}() of an Array of shape {arr.shape}: only an Array of one element converts "
                        f"to a Python scalar; take an element (x[i]) or x.tolist()")


def _index(index):
    """Arrays used as indices (boolean masks from comparisons are ndarrays already)."""
    if isinstance(index, Array):
        raise TypeError("an Array of floating-point values cannot index; use a boolean or integer array")
    return index


def promote(*formats: Format) -> Format:
    """The smallest catalogue format that holds every value of each of ``formats``
    (fp16 + bf16 -> fp32, as torch and JAX promote), else fp64; between formats of equal
    width the more precise.  tf32 is a compute format (stored as fp32), never a result.

    ========  ========  ========  ====  ====  ====
    (+)       fp8_e4m3  fp8_e5m2  fp16  bf16  fp32
    ========  ========  ========  ====  ====  ====
    fp8_e4m3  fp8_e4m3  fp16      fp16  bf16  fp32
    fp8_e5m2  fp16      fp8_e5m2  fp16  bf16  fp32
    fp16      fp16      fp16      fp16  fp32  fp32
    bf16      bf16      bf16      fp32  bf16  fp32
    ========  ========  ========  ====  ====  ====

    fp64 with anything gives fp64; custom formats go to the first catalogue format that
    holds them.

    >>> import softfloat as sf
    >>> promote(sf.fp16, sf.bf16), promote(sf.fp8_e4m3, sf.fp16), promote(sf.fp8_e5m2, sf.bf16)
    (softfloat.fp32, softfloat.fp16, softfloat.bf16)
    """
    distinct = list(dict.fromkeys(formats))
    if len(distinct) == 1:
        return distinct[0]
    storage = [f for f in catalogue() if f != tf32]  # tf32 is a compute format, stored as fp32
    for candidate in sorted(storage, key=lambda f: (f.bits, -f.mantissa_bits)):
        if all(_holds(candidate, f) for f in distinct):
            return candidate
    return fp64


def _holds(container: Format, f: Format) -> bool:
    """Every value of ``f``, infinities and NaNs included, is one of ``container``."""
    return container == f or (container.holds(f) and (container.has_infinity or not f.has_infinity)
                               and (container.has_nan or not f.has_nan))


def _bits_in(value, fmt: Format, operation: str, ctx=None) -> np.ndarray:
    """``value`` as bit patterns of ``fmt``: an Array converted exactly where it can be
    (else rounded), anything else rounded once with the context's attributes (``ctx``, the
    current one unless given)."""
    if ctx is None:
        ctx = get_context()
    if isinstance(value, Array):
        if value.format == fmt:
            return value.bits
        bits, flags = ctx.split(convert(value.bits, value.format, fmt, return_flags=ctx.track_flags,
                                        **ctx.options()))
    elif type(value) is float or type(value) is int:
        bits, flags = _scalar_bits(value, fmt, ctx)
    else:
        if isinstance(value, (complex, np.complexfloating)) or (isinstance(value, np.ndarray)
                                                                and value.dtype.kind == "c"):
            raise TypeError(f"an Array of {fmt} holds real numbers ({_validate.NO_COMPLEX}); got "
                            f"{_validate.describe(value)}")
        if isinstance(value, (str, bytes)) or (isinstance(value, np.ndarray) and value.dtype.kind in "OUS"):
            raise TypeError(f"an Array of {fmt} takes numbers (or Arrays); got {_validate.describe(value)}")
        if isinstance(value, (bool, np.bool_)) or (isinstance(value, np.ndarray) and value.dtype.kind == "b"):
            value = np.asarray(value, dtype=np.uint8)  # numpy's True -> 1.0, False -> 0.0
        bits, flags = ctx.split(encode(value, fmt, return_flags=ctx.track_flags, **ctx.options()))
    ctx.record(operation, flags)
    return np.asarray(bits)


#: at most this many Python scalars' encodings are kept per context (then it starts afresh)
_SCALAR_CACHE_SIZE = 256


def _scalar_bits(value, fmt: Format, ctx):
    """``encode(value, fmt)`` of a Python float or int with the context's attributes and its
    flags, remembered per context: the same scalar in a loop (``x * 0.5``, ``p - 1``) is
    rounded once.  Encoding is a function of the value, the format and the attributes
    (kept with the cache: a context whose attributes change starts afresh), except in
    stochastic rounding, which draws afresh every time and is never remembered.  The key
    tells -0.0 from 0.0 and 1 from 1.0 (their flags may differ: an int is exact or not
    by its own rules); a NaN is never found again (NaN != NaN), so the size is bounded."""
    attributes = ctx.attributes
    if attributes.rounding is Rounding.STOCHASTIC:
        return ctx.split(encode(value, fmt, return_flags=ctx.track_flags, **ctx.options()))
    cache = ctx.cache
    if cache.get(None) is not attributes or len(cache) > _SCALAR_CACHE_SIZE:
        cache.clear()
        cache[None] = attributes
    # id(fmt): a Format hashes all its fields; the entry holds fmt, so the id stays its own
    key = (id(fmt), type(value), value, math.copysign(1.0, value) if type(value) is float else 0,
           ctx.track_flags)
    found = cache.get(key)
    if found is None:
        bits, flags = ctx.split(encode(value, fmt, return_flags=ctx.track_flags, attributes=attributes))
        found = cache[key] = (np.asarray(bits, dtype=fmt.storage_dtype)[()], flags, fmt)  # immutable scalars
    return found[0], found[1]


_NEW = object.__new__

#: Array(value) without a format: what calls it so (Python's statistics.mean, variance,
#: harmonic_mean: type(element)(exact fraction)) and what to write instead
_NO_FORMAT = ("Array(bits, fmt) needs fmt, the format of the bit patterns; got Array({}) without one. "
              "Python's statistics.mean / variance / pvariance / harmonic_mean make their result as "
              "type(element)(exact fraction), and an Array's type carries no format: for an Array use "
              "np.mean(x) / np.var(x, ddof=1) (emulated in the format), statistics.fmean(x) (a float), or "
              "softfloat.asarray(value, x.format) to round a value into the format")


def _wrap(bits: np.ndarray, fmt: Format) -> Array:
    """Array(bits, fmt) without its checks, for patterns the callers here made: an
    ndarray of ``fmt.storage_dtype`` and a Format."""
    array = _NEW(Array)
    array._bits = bits
    array._format = fmt
    return array


class _Adapter:
    """What the mapping modules below need of the Array type (they cannot import it)."""

    @staticmethod
    def is_array(x) -> bool:
        return isinstance(x, Array)

    @staticmethod
    def wrap(bits, fmt: Format) -> Array:
        storage = fmt.storage_dtype
        if type(bits) is storage.type:  # a 0-d result as a numpy scalar
            return _wrap(np.asarray(bits), fmt)
        if type(bits) is np.ndarray and bits.dtype == storage:
            return _wrap(bits, fmt)
        return _wrap(np.asarray(bits).astype(storage, copy=False), fmt)

    @staticmethod
    def common(*values, ctx=None):
        """The promoted format of the Array operands and every operand's bit patterns
        (``ctx``: the current context, when the caller has it already)."""
        first = values[0]
        if type(first) is Array:  # the usual case: Arrays of one format, or with a scalar
            fmt = first._format
            if len(values) == 1:
                return fmt, [first._bits]
            second = values[1]
            if len(values) == 2 and type(second) is Array and second._format is fmt:
                return fmt, [first._bits, second._bits]
            if len(values) == 2 and (type(second) is float or type(second) is int):
                return fmt, [first._bits, _bits_in(second, fmt, "operand", ctx)]
        elif len(values) == 2 and type(values[1]) is Array and (type(first) is float or type(first) is int):
            fmt = values[1]._format
            return fmt, [_bits_in(first, fmt, "operand", ctx), values[1]._bits]
        fmt = promote(*(v.format for v in values if isinstance(v, Array)))
        return fmt, [_bits_in(v, fmt, "operand", ctx) for v in values]

    bits_in = staticmethod(lambda value, fmt, operation: _bits_in(value, fmt, operation))


_ADAPTER = _Adapter()


def asarray(x, fmt=None, rounding=None, *, saturate=None, attributes=None) -> Array:
    """``x`` as an :class:`Array` of ``fmt``, each value rounded once from its exact value.

    Parameters
    ----------
    x : array_like, Array or scalar
        Anything :func:`softfloat.encode` accepts; an Array of another format is
        converted (exactly where it fits).
    fmt : Format or str, optional
        Required unless ``x`` is an Array (which is then returned as is).
    rounding : Rounding or str, optional
        Default: the context's.
    saturate : bool, optional
        Default: the context's.
    attributes : RoundingAttributes, optional
        Default: the context's (``ctx.attributes``); ``rounding`` and ``saturate``, when
        given, win over it.

    Examples
    --------
    >>> import softfloat as sf
    >>> sf.asarray(6.36, "fp16")
    Array(6.359375, fmt=fp16)
    >>> sf.asarray(6.36, "fp16", "toward_zero").bits
    array(18012, dtype=uint16)
    >>> sf.asarray("6.36", "fp16")                 # rounded once from the decimal itself
    Array(6.359375, fmt=fp16)
    """
    if fmt is None:
        if isinstance(x, Array):
            return x
        raise TypeError("asarray needs fmt (a Format or a name such as 'bf16') unless x is an Array")
    fmt = as_format(fmt)
    if isinstance(x, Array) and x.format == fmt:
        return x
    ctx = get_context()
    if rounding is None and saturate is None and attributes is None and not isinstance(x, str):
        # (a decimal string is a value here, though never an operand: _bits_in refuses it)
        return _wrap(np.array(_bits_in(x, fmt, "asarray"), dtype=fmt.storage_dtype, copy=True), fmt)
    opts = dict(ctx.options(), saturate=saturate, return_flags=ctx.track_flags)  # given ones win
    if attributes is not None:
        opts["attributes"] = attributes
    if isinstance(x, Array):
        bits, flags = ctx.split(convert(x.bits, x.format, fmt, rounding, **opts))
    else:
        bits, flags = ctx.split(encode(x, fmt, rounding, **opts))
    ctx.record("asarray", flags)
    return _wrap(np.array(bits, dtype=fmt.storage_dtype, copy=True), fmt)

