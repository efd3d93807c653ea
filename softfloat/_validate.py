"""Argument checks for the public boundary; every TypeError/ValueError text comes from here.

Messages name the argument, say what was expected and what came, and where it helps, the
fix.  Kernels below the boundary assume their preconditions and never raise.
"""

from __future__ import annotations

import enum
import numbers
from fractions import Fraction
from typing import TypeVar

import numpy as np

E = TypeVar("E", bound=enum.Enum)


def describe(value: object) -> str:
    """A short 'what came' phrase: the value (or array dtype/shape) and its type."""
    if isinstance(value, np.ndarray):
        return f"an array of dtype {value.dtype} and shape {value.shape}"
    return f"{short_repr(value)} ({type(value).__name__})"


#: ints beyond this many bits are described by their size: Python refuses to write ints
#: of more than 4300 digits (about 14,000 bits), and takes quadratic time below that
_REPR_BITS = 10000


def short_repr(value: object, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters; ints (and Fraction terms) of more than
    10,000 bits are shown by their size, without writing out their digits.

    >>> short_repr(10**100000), short_repr("x" * 100)
    ('<int of 332193 bits>', "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...")
    """
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > _REPR_BITS:
        text = f"<{'-' if value < 0 else ''}int of {value.bit_length()} bits>"
    elif isinstance(value, Fraction) and max(value.numerator.bit_length(),
                                             value.denominator.bit_length()) > _REPR_BITS:
        text = (f"Fraction(<{value.numerator.bit_length()}-bit int>, "
                f"<{value.denominator.bit_length()}-bit int>)")
    else:
        text = repr(value[:limit + 1] if isinstance(value, str) else value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def int_in_range(name: str, value: object, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int from {lo} to {hi}; got {describe(value)}")
    if not lo <= int(value) <= hi:
        raise ValueError(f"{name} must be from {lo} to {hi}; got {value}")
    return int(value)


def choice(name: str, value: object, enum_cls: type[E]) -> E:
    """Coerce a member or its string value to ``enum_cls``; list the choices otherwise."""
    if isinstance(value, enum_cls):
        return value
    valid = ", ".join(repr(m.value) for m in enum_cls)
    if isinstance(value, str):
        key = value.strip().lower().replace("-", "_").replace(" ", "_")
        for member in enum_cls:
            if member.value == key:
                return member
        raise ValueError(f"{name}={value!r} is not valid; choose one of {valid}")
    raise TypeError(f"{name} must be one of {valid} (or a {enum_cls.__name__}); got {describe(value)}")


def boolean(name: str, value: object) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{name} must be True or False; got {describe(value)}")


def bit_patterns(name: str, bits: object, width: int) -> np.ndarray:
    """Check that ``bits`` holds integer bit patterns of ``width`` bits; return it as an array.

    Accepts Python ints and integer arrays of any integer dtype.  Float, bool, complex,
    object and string inputs are a TypeError; values outside [0, 2**width) a ValueError
    that names the first offending index and value.
    """
    if isinstance(bits, bool):
        raise TypeError(f"{name} must hold integer bit patterns; got {describe(bits)}")
    if isinstance(bits, numbers.Integral):
        value = int(bits)
        if not 0 <= value < (1 << width):
            raise ValueError(
                f"{name}={value:#x} does not fit the format's {width} bits "
                f"(valid patterns are 0 to {(1 << width) - 1:#x})"
            )
        return np.asarray(np.uint64(value))
    arr = bits if isinstance(bits, np.ndarray) else None
    if arr is None:
        if isinstance(bits, (list, tuple)):
            try:
                arr = np.asarray(bits)
            except (ValueError, OverflowError) as exc:
                raise TypeError(f"{name} must be integer bit patterns; could not convert: {exc}") from None
            if arr.size == 0:
                arr = arr.astype(np.uint64)  # numpy reads [] as float64
            elif arr.dtype == object or (arr.dtype.kind == "f" and _all_ints(bits)):
                # Python ints beyond int64 (numpy makes objects, or float64 when mixed)
                arr = _python_int_patterns(name, np.array(bits, dtype=object), width)
        elif isinstance(bits, np.generic):
            arr = np.asarray(bits)
        else:
            raise TypeError(
                f"{name} must be integer bit patterns (an int or an integer array); got {describe(bits)}"
            )
    if arr.dtype.kind not in "ui":
        hint = " (view float data as bits with .view(fmt.storage_dtype), or use encode())" if arr.dtype.kind == "f" else ""
        raise TypeError(
            f"{name} must have an integer dtype holding bit patterns; got an array of dtype {arr.dtype}{hint}"
        )
    if arr.size:
        if arr.dtype.kind == "i":
            bad = arr < 0
            if width < arr.dtype.itemsize * 8:
                bad |= arr >= (1 << width)
        elif width < arr.dtype.itemsize * 8:
            bad = arr >= (1 << width)
        else:
            bad = None
        if bad is not None and bad.any():
            index = np.unravel_index(int(np.argmax(bad)), arr.shape)
            index = tuple(int(i) for i in index)
            raise ValueError(
                f"{name} holds a value that does not fit the format's {width} bits: "
                f"{name}[{', '.join(map(str, index))}] = {int(arr[index])} "
                f"(valid patterns are 0 to {(1 << width) - 1:#x}); {int(bad.sum())} such value(s) in all"
            )
    return arr


def _all_ints(values) -> bool:
    flat = np.array(values, dtype=object).ravel()
    return all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in flat)


def _python_int_patterns(name: str, arr: np.ndarray, width: int) -> np.ndarray:
    """An object array of Python ints (some beyond int64) as uint64, range-checked."""
    flat = arr.ravel()
    for i, v in enumerate(flat):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"{name} must hold integer bit patterns; {name}[{i}] is {describe(v)}")
        if not 0 <= int(v) < (1 << width):
            index = ", ".join(map(str, np.unravel_index(i, arr.shape)))
            raise ValueError(
                f"{name} holds a value that does not fit the format's {width} bits: "
                f"{name}[{index}] = {int(v)} (valid patterns are 0 to {(1 << width) - 1:#x})"
            )
    return np.array([int(v) for v in flat], dtype=np.uint64).reshape(arr.shape)
