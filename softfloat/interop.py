"""Exchange with ml_dtypes, torch and JAX: their float arrays read as bit patterns, and back.

ml_dtypes, torch and JAX keep bfloat16, FP8, FP6 and FP4 tensors as raw bit patterns in
memory, one element per byte (or two bytes) -- the layout softfloat's bit-pattern arrays
have.  :func:`bits_of` reinterprets such an array or tensor as unsigned integers and
names its :class:`~softfloat.Format`, without converting a value and, on the CPU,
without copying; :func:`to_ml_dtypes` and :func:`to_torch` go the other way.  None of
these libraries is imported until a function here is handed one of their objects (or
asked for one), and torch tensors are recognised by their type's module name.

Which dtype is which format comes from one place, :mod:`softfloat.formats` (the names
:func:`~softfloat.as_format` reads); :func:`dtype_names` lays it out per catalogue format.
"""

from __future__ import annotations

import numpy as np

from . import _validate
from .formats import ML_DTYPES_FLOATS, TORCH_FLOATS, Format, as_format, catalogue

__all__ = ["bits_of", "dtype_names", "to_ml_dtypes", "to_torch"]

#: numpy's own float dtype names, widest first
_NUMPY_FLOATS = tuple(f.native_dtype.name for f in catalogue() if f.native_dtype is not None)


def _first_names(names) -> dict[Format, str]:
    """Format -> the first of ``names`` that as_format maps to it."""
    out: dict[Format, str] = {}
    for name in names:
        out.setdefault(as_format(name), name)
    return out


#: each format's dtype name in numpy/ml_dtypes (JAX uses the same types) and in torch
_ARRAY_NAME = _first_names(_NUMPY_FLOATS + ML_DTYPES_FLOATS)
_TORCH_NAME = _first_names("torch." + n for n in TORCH_FLOATS)
#: ml_dtypes types that jax.numpy names but XLA cannot hold arrays of ("Invalid XLA
#: PrimitiveType", JAX 0.10)
_NOT_IN_JAX = frozenset({"float6_e3m2fn", "float6_e2m3fn"})


def dtype_names(fmt) -> dict[str, str | None]:
    """The dtypes that hold ``fmt``'s bit patterns elsewhere: ``{"ml_dtypes": ...,
    "torch": ..., "jax": ...}``, None where a library has none.

    numpy's own float16/32/64 are named in the ml_dtypes column (ml_dtypes adds the
    narrower types to numpy); JAX's dtypes are ml_dtypes' types (``jax.numpy.bfloat16``
    is ``ml_dtypes.bfloat16``), so its column repeats that name under ``jax.numpy`` --
    except for FP6, which jax.numpy names but XLA cannot hold (JAX 0.10).

    Examples
    --------
    >>> dtype_names("bf16")
    {'ml_dtypes': 'ml_dtypes.bfloat16', 'torch': 'torch.bfloat16', 'jax': 'jax.numpy.bfloat16'}
    >>> dtype_names("tf32")
    {'ml_dtypes': None, 'torch': None, 'jax': None}
    """
    fmt = as_format(fmt)
    name = _ARRAY_NAME.get(fmt)
    array = None if name is None else ("numpy." if name in _NUMPY_FLOATS else "ml_dtypes.") + name
    return {"ml_dtypes": array, "torch": _TORCH_NAME.get(fmt),
            "jax": None if name is None or name in _NOT_IN_JAX else "jax.numpy." + name}


# =====================================================================================
# reading: bits_of
# =====================================================================================
def bits_of(x) -> tuple[np.ndarray, Format]:
    """The bit patterns of a float array or tensor, and its format: a view, not a conversion.

    Parameters
    ----------
    x : ndarray, torch.Tensor or JAX array
        - a numpy float16/float32/float64 array or an ml_dtypes array (``bfloat16``,
          ``float8_e4m3fn``, ``float8_e5m2``, ``float8_e4m3fnuz``, ``float8_e5m2fnuz``,
          ``float8_e4m3``, ``float8_e3m4``, ``float6_e3m2fn``, ``float6_e2m3fn``,
          ``float4_e2m1fn``): the result is a view of its memory (``.view`` of the same
          strides and byte order), so writing into one writes into the other;
        - a torch CPU tensor of float64, float32, float16, bfloat16 or an FP8 dtype
          (``float8_e4m3fn``, ``float8_e5m2``, ``float8_e4m3fnuz``, ``float8_e5m2fnuz``):
          a view too, as ``x.detach().view(<unsigned int>).numpy()`` (a tensor that
          requires grad is read without recording anything; torch has no uint16 view
          before 2.3, so 16-bit patterns go through int16 of the same bytes);
        - anything else with ``__array__`` (a JAX array on the CPU): read through
          ``numpy.asarray``, then as above (JAX arrays come back read-only).

    Returns
    -------
    bits : ndarray of ``fmt.storage_dtype`` (same shape, in ``x``'s byte order)
    fmt : Format
        The catalogue format (``softfloat.bf16``, ``softfloat.fp8_e4m3``, ...; ml_dtypes'
        IEEE-style ``float8_e4m3`` and ``float8_e3m4`` give formats of those names).

    Raises
    ------
    TypeError
        ``x`` is not a float array or tensor (integer arrays already are bit patterns).
    ValueError
        Its dtype has no softfloat format (``float8_e8m0fnu``, ``float8_e4m3b11fnuz``,
        torch's packed ``float4_e2m1fn_x2``); a tensor is not on the CPU (copy it with
        ``x.cpu()`` first); an FP6/FP4 byte has bits set above the format's width.

    Examples
    --------
    >>> import numpy as np, ml_dtypes
    >>> x = np.array([1.0, -2.0, 448.0], dtype=ml_dtypes.float8_e4m3fn)
    >>> bits, fmt = bits_of(x)
    >>> [hex(b) for b in bits], fmt, np.shares_memory(bits, x)
    (['0x38', '0xc0', '0x7e'], softfloat.fp8_e4m3, True)
    >>> bits_of(np.float32([0.1]))[0]
    array([1036831949], dtype=uint32)
    """
    if _is_torch_tensor(x):
        return _torch_bits(x)
    arr = _validate.host_array("x", x)
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"x must be a float array or tensor (numpy, ml_dtypes, torch or JAX); "
                        f"got {_validate.describe(x)}")
    fmt = _dtype_format(arr.dtype, x)
    bits = arr.view(fmt.storage_dtype.newbyteorder(arr.dtype.byteorder))
    _check_width(bits, fmt)
    return bits, fmt


def _dtype_format(dtype: np.dtype, given) -> Format:
    """The format of a numpy/ml_dtypes float dtype, or a ValueError listing those that have one."""
    if dtype.kind == "f" or dtype.type.__module__.split(".")[0] == "ml_dtypes":
        try:
            return as_format(dtype.newbyteorder("=") if dtype.kind == "f" else dtype, "x.dtype")
        except ValueError as exc:
            raise ValueError(f"{exc}; x is {_validate.describe(given)}") from None
    hint = " (integers are bit patterns already: pass them with their format)" if dtype.kind in "iu" else ""
    raise TypeError(f"x must be a float array or tensor (numpy, ml_dtypes, torch or JAX); got "
                    f"{_validate.describe(given)}{hint}")


def _check_width(bits: np.ndarray, fmt: Format) -> None:
    """FP6/FP4 live in the low bits of a byte; a set bit above them is no pattern of fmt."""
    width = bits.dtype.itemsize * 8
    if fmt.bits < width and bits.size:
        _validate.bit_patterns("x (as bit patterns)", bits, fmt.bits)


def _is_torch_tensor(x) -> bool:
    """A torch.Tensor (or subclass such as Parameter), told by its type's module: torch
    is never imported here."""
    return any(c.__module__.split(".")[0] == "torch" and c.__name__ == "Tensor" for c in type(x).__mro__)


#: torch's integer dtype of each width whose tensors .numpy() can read (uint8, int16,
#: int32, int64: present in every torch release; same bytes as the unsigned patterns)
_TORCH_INT = {1: "uint8", 2: "int16", 4: "int32", 8: "int64"}


def _torch_cpu(t, argname: str):
    """``t`` detached, after checking that it lives in host memory."""
    if t.device.type != "cpu":
        raise ValueError(f"{argname} is a torch tensor on {t.device}; softfloat reads host "
                         f"memory only: copy it first with {argname}.cpu()")
    return t.detach()


def _torch_bits(t) -> tuple[np.ndarray, Format]:
    if not t.dtype.is_floating_point:  # integer, bool, complex: no float format
        raise TypeError(f"x must be a float array or tensor; got a torch tensor of dtype {t.dtype}")
    try:
        fmt = as_format(t.dtype, "x.dtype")
    except ValueError as exc:
        raise ValueError(f"{exc}; x is a torch tensor of dtype {t.dtype}") from None
    t = _torch_cpu(t, "x")
    import torch

    ints = t.view(getattr(torch, _TORCH_INT[t.element_size()]))
    return ints.numpy().view(fmt.storage_dtype), fmt


# =====================================================================================
# the codec's input coercion
# =====================================================================================
def numeric_input(x, argname: str):
    """``(array, None)`` for numeric input numpy reads itself (ndarrays, numbers, lists,
    torch CPU tensors of numpy dtypes, objects with ``__array__``/``__dlpack__``), or
    ``(bits, fmt)`` for float data numpy has no type for (ml_dtypes arrays, torch
    bfloat16/FP8 tensors, JAX arrays of those), to be decoded -- exactly -- by the caller.

    Torch tensors are detached (nothing is recorded) and must be on the CPU.
    """
    if _is_torch_tensor(x):
        t = _torch_cpu(x, argname)
        if t.dtype.is_floating_point and str(t.dtype)[len("torch."):] not in _NUMPY_FLOATS:
            return _torch_bits(t)  # bfloat16, FP8: numpy has no such type
        try:
            return t.numpy(), None  # a view
        except (TypeError, RuntimeError) as exc:
            raise TypeError(f"{argname} could not be read as a host array (a torch tensor "
                            f"of dtype {t.dtype}): {exc}") from None
    arr = _validate.host_array(argname, x)
    if isinstance(arr, (np.ndarray, np.generic)) and arr.dtype.type.__module__.split(".")[0] == "ml_dtypes":
        return bits_of(np.asarray(arr))  # (a scalar, ml_dtypes.bfloat16(0.1), as a 0-d array)
    return arr, None


# =====================================================================================
# writing: to_ml_dtypes, to_torch
# =====================================================================================
def _storage(bits, fmt: Format) -> np.ndarray:
    """Checked bit patterns in fmt's storage dtype, native order: ``bits`` itself when it
    already is one (no copy), else a converted copy."""
    arr = _validate.bit_patterns("bits", bits, fmt.bits)
    if arr.dtype != fmt.storage_dtype:
        arr = arr.astype(fmt.storage_dtype)
    return arr


def _no_dtype(fmt: Format, library: str, names: dict[Format, str]) -> ValueError:
    have = ", ".join(f"{f.name} ({n})" for f, n in names.items() if f in catalogue())
    return ValueError(f"fmt={fmt.name} has no {library} dtype; {library} has dtypes for {have}. "
                      f"Decode the bits to values instead: softfloat.decode(bits, {fmt.name!r})")


def to_ml_dtypes(bits, fmt) -> np.ndarray:
    """Bit patterns of ``fmt`` as an array of the matching numpy/ml_dtypes float dtype.

    Parameters
    ----------
    bits : int or integer array_like
        Bit patterns of ``fmt``; an array of ``fmt.storage_dtype`` (what
        :func:`~softfloat.encode` returns) is reinterpreted in place -- the result is a
        view of it -- other integer arrays are converted first (a copy).
    fmt : Format or str
        A format with such a dtype: fp64, fp32, fp16 (numpy's own), bf16, fp8_e4m3,
        fp8_e5m2, fp8_e4m3fnuz, fp8_e5m2fnuz, fp6_e3m2, fp6_e2m3, fp4_e2m1, and
        ml_dtypes' IEEE-style float8_e4m3 / float8_e3m4 layouts.  Others (tf32, custom
        layouts) are a ValueError that lists the ones there are.

    Returns
    -------
    ndarray of ``ml_dtypes.<name>`` (or numpy float16/32/64), of ``bits``' shape.

    Examples
    --------
    >>> import numpy as np, softfloat as sf
    >>> bits = sf.encode([0.1, 1e9], "bf16")
    >>> x = sf.to_ml_dtypes(bits, "bf16")
    >>> x.dtype.name, x.astype(np.float32).tolist(), np.shares_memory(x, bits)
    ('bfloat16', [0.10009765625, 998244352.0], True)
    """
    fmt = as_format(fmt)
    name = _ARRAY_NAME.get(fmt)
    if name is None:
        raise _no_dtype(fmt, "ml_dtypes", _ARRAY_NAME)
    arr = _storage(bits, fmt)
    if fmt.native_dtype is not None:
        return arr.view(fmt.native_dtype)
    try:
        import ml_dtypes
    except ImportError:
        raise ImportError(_validate.missing_dependency("softfloat.to_ml_dtypes", "ml_dtypes")) from None
    return arr.view(np.dtype(getattr(ml_dtypes, name)))


def to_torch(bits, fmt):
    """Bit patterns of ``fmt`` as a torch CPU tensor of the matching dtype.

    Parameters
    ----------
    bits : int or integer array_like
        Bit patterns of ``fmt``.  A writeable, C-contiguous array of
        ``fmt.storage_dtype`` shares its memory with the tensor (``torch.from_numpy``
        and a dtype view); anything else is copied first.
    fmt : Format or str
        fp64, fp32, fp16, bf16, fp8_e4m3 (``torch.float8_e4m3fn``), fp8_e5m2,
        fp8_e4m3fnuz, fp8_e5m2fnuz.  Others are a ValueError that lists these.

    Returns
    -------
    torch.Tensor of ``bits``' shape, on the CPU.

    Examples
    --------
    >>> import softfloat as sf
    >>> t = sf.to_torch(sf.encode([0.1, 448.0, 1000.0], "e4m3"), "e4m3")
    >>> t.dtype, t.float().tolist()
    (torch.float8_e4m3fn, [0.1015625, 448.0, nan])
    """
    fmt = as_format(fmt)
    name = _TORCH_NAME.get(fmt)
    if name is None:
        raise _no_dtype(fmt, "torch", _TORCH_NAME)
    try:
        import torch
    except ImportError:
        raise ImportError(_validate.missing_dependency("softfloat.to_torch", "torch", "torch")) from None
    arr = _storage(bits, fmt)
    if not (arr.flags.c_contiguous and arr.flags.writeable):  # torch.from_numpy needs both
        arr = np.array(arr, order="C")
    ints = arr.view(np.dtype(_TORCH_INT[arr.itemsize]))  # same bytes, a dtype torch reads
    return torch.from_numpy(ints).view(getattr(torch, name[len("torch."):]))
