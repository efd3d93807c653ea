"""The argument checks and message texts that the public boundary shares.

Checks that raise (:func:`instance`, :func:`count`, :func:`int_in_range`, :func:`choice`,
:func:`one_of`, :func:`boolean`, :func:`file_path`, :func:`bit_patterns`, :func:`numeric_array`, ...),
texts for callers that raise themselves (:func:`unknown_format`,
:func:`missing_dependency`, :func:`install_hint`, ...), and the pieces every message is
made of (:func:`describe`, :func:`short_repr`, :func:`counted`).  Checks specific to one
module stay in that module and use these pieces.  Messages name the argument, say what
was expected and what came, and where it helps, the fix.  Kernels below the boundary
assume their preconditions and never raise.
"""

from __future__ import annotations

import enum
import numbers
import operator
import os
import sys
from fractions import Fraction
from typing import TypeVar

import numpy as np

E = TypeVar("E", bound=enum.Enum)

#: the float dtypes softfloat reads
_FLOATS = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64))


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


def counted(n: int, noun: str = "value") -> str:
    """``n`` and the noun in the right number: '1 value', '0 values', '3 values'.

    >>> counted(1), counted(0), counted(3, "addition")
    ('1 value', '0 values', '3 additions')
    """
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _squeezed(name: str) -> str:
    return "".join(c for c in name.lower() if c not in "-_ .")


def did_you_mean(value: object, names) -> str:
    """For a name that names nothing, the names it most likely misspells, as
    " (did you mean 'x'?)" -- or "" when none is close.  Close means: the same name but for
    case, '-', '_', ' ' and '.' ('bf-16', 'fp8e4m3'); or the start of names ('fp8' ->
    fp8_e4m3, fp8_e5m2, ...; 'up' -> 'upward'); or one or two letters off ('towards_zero').

    >>> did_you_mean("BF-16", ["fp16", "bf16"]), did_you_mean("fp12", ["fp16", "bf16"])
    (" (did you mean 'bf16'?)", '')
    >>> did_you_mean("fp8", ["fp16", "fp8_e4m3", "fp8_e5m2"])
    " (did you mean 'fp8_e4m3' or 'fp8_e5m2'?)"
    """
    import difflib

    if not isinstance(value, str) or not _squeezed(value):
        return ""
    names = list(dict.fromkeys(str(n) for n in names))
    key = _squeezed(value)
    near = [n for n in names if _squeezed(n) == key]
    if not near and len(key) >= 2:
        near = [n for n in names if _squeezed(n).startswith(key)]
    if not near:
        squeezed = {_squeezed(n): n for n in names}
        near = [squeezed[m] for m in difflib.get_close_matches(key, list(squeezed), n=2, cutoff=0.8)]
    if not near:
        return ""
    shown = [repr(n) for n in near[:4]]
    listed = (shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}" if len(near) <= 4
              else f"{', '.join(shown)}, ...")
    return f" (did you mean {listed}?)"


def unknown_format(argname: str, value: str, names: list[str], aliases: list[str]) -> str:
    """The message for a format name that names nothing: the nearest names when some are
    close, the names, then how to spell a custom format -- on the command line
    (``argname`` an option such as '--format') as that option, in Python also as a
    Format."""
    listed = f"choose one of {', '.join(names)} (aliases: {', '.join(aliases)})"
    guess = did_you_mean(value, names + aliases)
    if argname.startswith("-"):
        value = value if value and value.strip() == value else repr(value)  # '' or ' ' seen as such
        return (f"{argname} {value} is not a known format{guess}; {listed}; or give a custom format "
                f"by its layout, {argname} eEmM with E exponent and M mantissa bits, e.g. "
                f"{argname} e6m9 (append fn, fnuz or finite for those special-value policies: "
                f"{argname} e5m4fn)")
    return (f"{argname}={value!r} is not a known format{guess}; {listed}; or name a custom format by "
            "its layout 'eEmM' with E exponent and M mantissa bits, such as 'e6m9' (append fn, "
            "fnuz or finite for those special-value policies: 'e5m4fn'), or build one with "
            "softfloat.Format(exponent_bits=6, mantissa_bits=9)")


def unknown_torch_float(argname: str, value: str, names) -> str:
    """The message for a "torch.X" format name where X is none of torch's float ``names``."""
    return (f"{argname}={value!r} is not a torch float dtype softfloat emulates; it knows "
            f"{', '.join('torch.' + n for n in names)}")


def name_of_another_format(name: str, named: str, layout: str, default: str | None) -> str:
    """The message for a Format given a ``name`` that softfloat reads as another format
    (``named``), which would print as that one yet not equal it nor look up as it;
    ``default`` is the name to offer instead (None where that one is taken too)."""
    fix = f"leave name out (it is then {default!r}) or choose" if default else "choose"
    return (f"name={name!r} names another format: as_format({name!r}) is {named}; this format is "
            f"{layout}, which would print as {name!r} yet not equal it; {fix} a name that softfloat "
            "does not read as a format")


def unknown_accumulator(value: str, presets: list[str], aliases: dict[str, str], as_format: str) -> str:
    """The message for an accumulator name that is neither a hardware preset nor a format:
    the presets (and their aliases, and the nearest name when one is close), then what
    the format lookup said (``as_format``: its list of formats)."""
    import difflib

    key = value.strip().lower()
    near = difflib.get_close_matches(key, presets + list(aliases), n=1, cutoff=0.6)
    named = ", ".join(f"{a} (= {c})" for a, c in aliases.items())
    guess = f" (did you mean {near[0]!r}?)" if near else ""
    return (f"accumulator={value!r} is neither a hardware preset nor a format{guess}. Hardware "
            f"presets: {', '.join(presets)}, and the aliases {named}. Formats: {as_format}")


#: the name softfloat is published under on PyPI (the import name stays ``softfloat``:
#: the distribution name ``softfloat`` belongs to an unrelated package)
DISTRIBUTION = "softfloat-emu"


#: why an Array takes no complex value, in every message that refuses one
NO_COMPLEX = "complex results: softfloat has no complex formats"


def install_hint(extra: str) -> str:
    """How to install an optional extra: ``pip install "softfloat-emu[dask]"`` (in a checkout
    of the repository: ``pip install -e ".[dask]"``)."""
    return f'pip install "{DISTRIBUTION}[{extra}]" (in a checkout of the repository: pip install -e ".[{extra}]")'


def missing_dependency(module: str, package: str, extra: str = "test") -> str:
    """The ImportError text for an optional dependency: the extra that brings it, for an
    installed package and in a checkout of the repository."""
    return f"{module} needs {package}, which is not installed; {install_hint(extra)}"


def instance(name: str, value: object, cls: type, what: str) -> None:
    """TypeError unless ``value`` is a ``cls``; ``what`` says which one is expected."""
    if not isinstance(value, cls):
        raise TypeError(f"{name} must be {what}; got {describe(value)}")


def same_shape(name: str, shape: tuple, other: str, other_shape: tuple, fix: str) -> None:
    """ValueError unless two arrays that describe the same values have one shape."""
    if tuple(shape) != tuple(other_shape):
        raise ValueError(f"{name} has shape {tuple(shape)} but {other} has shape "
                         f"{tuple(other_shape)}; {fix}")


def broadcast_to(name: str, value: np.ndarray, shape: tuple, expected: str) -> np.ndarray:
    """``value`` broadcast to ``shape`` (a read-only view); a ValueError naming ``name``,
    what was ``expected`` and the shape that came where it does not broadcast."""
    try:
        return np.broadcast_to(value, shape)
    except ValueError:
        raise ValueError(wrong_shape(name, expected, np.shape(value))) from None


def wrong_shape(name: str, expected: str, shape: tuple) -> str:
    """The message for an argument of a shape that does not fit (:func:`broadcast_to`'s,
    also for tensors, which torch broadcasts)."""
    return f"{name} must be {expected}; got shape {tuple(shape)}"


def broadcast_shape(named: list) -> tuple:
    """The shape ``(name, array)`` operands broadcast to; a ValueError naming each one's
    shape where they do not (numpy's own error numbers them instead of naming them)."""
    try:
        return np.broadcast_shapes(*(np.shape(a) for _, a in named))
    except ValueError:
        shapes = ", ".join(f"{name}{np.shape(a)}" for name, a in named)
        raise ValueError(f"operands could not be broadcast together: {shapes}") from None


def axis_number(axis: object, item: object, what: str = "None, an int or a tuple of ints") -> int:
    """One axis of ``axis`` (``item``: ``axis`` itself or one of its tuple) as an int; a
    TypeError saying ``axis`` must be ``what`` for a bool or a float, which numpy refuses
    too (int() would take True as axis 1 and 1.5 as axis 1)."""
    if not isinstance(item, (bool, np.bool_)):
        try:
            return operator.index(item)
        except TypeError:
            pass
    raise TypeError(f"axis must be {what}; got {describe(axis)}")


def partition_index(kth: object, shape: tuple, axis: object) -> None:
    """``kth`` of a partition along ``axis`` of an array of ``shape``: an int or a sequence
    of ints inside the axis, as numpy requires (a full sort, softfloat's partition, would
    take any)."""
    items = kth if isinstance(kth, (list, tuple, np.ndarray)) else [kth]
    length = shape[axis_number(axis, axis, "an int or None")] if axis is not None else int(np.prod(shape))
    for k in np.asarray(items, dtype=object).ravel():
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
            raise TypeError(f"kth must be an int or a sequence of ints; got {describe(kth)}")
        if not -length <= k < length:
            raise ValueError(f"kth={int(k)} is out of bounds for an axis of length {length}")


def whole_number(name: str, value: object) -> int:
    """An int, or a float of integral value (numpy's ddof=1.0); a TypeError for a bool or
    a non-number, a ValueError for a fraction that would be rounded away."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be an int; got {describe(value)}")
    if value != value or value in (float("inf"), float("-inf")) or int(value) != value:
        raise ValueError(f"{name} must be a whole number (softfloat divides by the integer count n - "
                         f"{name}); got {value}")
    return int(value)


def count(name: str, value: object) -> int:
    """A count: an int >= 0 (numpy integers too)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < 0:
        raise TypeError(f"{name} must be a count (an int >= 0); got {describe(value)}")
    return int(value)


def seed_without_stochastic(seed_option: str, rounding_option: str, rounding: str) -> str:
    """The command line's refusal of a seed that nothing would use."""
    return (f"{seed_option} is used only by {rounding_option} stochastic, and {rounding_option} "
            f"is {rounding}: drop {seed_option}, or add {rounding_option} stochastic")


_NPY_FIX = ("quantize reads .npy arrays of float16, float32, float64 or integers; save one of "
            "those, e.g. with numpy.save(path, array.astype(numpy.float64))")


def npy_dtype_problem(dtype: np.dtype) -> str | None:
    """What is wrong with a loaded array's dtype for the command line, or None."""
    if dtype.kind in "iu" or (dtype.kind == "f" and dtype.newbyteorder("=") in _FLOATS):
        return None
    what = {
        "c": f"complex numbers ({dtype}), which have no single rounding; save the real and "
             "imaginary parts as two real arrays (array.real, array.imag) and quantize each",
        "U": f"strings ({dtype}), not numbers",
        "S": f"byte strings ({dtype}), not numbers",
        "b": "booleans, not numbers",
        "f": f"{dtype} values, a float type softfloat does not read",
    }.get(dtype.kind, f"values of dtype {dtype}, not numbers")
    return f"{what}; {_NPY_FIX}" if dtype.kind != "c" else what


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
    if isinstance(value, str):
        member = enum_cls._value2member_map_.get(value)  # the exact spelling: the common case
        if member is not None:
            return member
    valid = ", ".join(repr(m.value) for m in enum_cls)
    if isinstance(value, str):
        key = value.strip().lower().replace("-", "_").replace(" ", "_")
        for member in enum_cls:
            if member.value == key:
                return member
        guess = did_you_mean(value, [m.value for m in enum_cls])
        raise ValueError(f"{name}={value!r} is not valid{guess}; choose one of {valid}")
    raise TypeError(f"{name} must be one of {valid} (or a {enum_cls.__name__}); got {describe(value)}")


def one_of(name: str, value: object, choices) -> str:
    """A string option: ``value`` if it is one of ``choices``; a ValueError that lists them
    (and the likely misspelling) for another string, a TypeError for anything else."""
    if isinstance(value, str) and value in choices:
        return value
    listed = ", ".join(repr(c) for c in choices)
    if isinstance(value, str):
        raise ValueError(f"{name}={value!r} is not valid{did_you_mean(value, choices)}; choose one of {listed}")
    raise TypeError(f"{name} must be one of {listed}; got {describe(value)}")


def rng_argument(rng: object) -> None:
    """``rng`` must be what stochastic rounding draws from: a Generator, an int seed or None."""
    if rng is None or isinstance(rng, np.random.Generator):
        return
    if isinstance(rng, bool) or not isinstance(rng, numbers.Integral):
        raise TypeError(f"rng must be a numpy.random.Generator, an int seed or None; got {describe(rng)}")
    if rng < 0:  # numpy's own refusal says only "expected non-negative integer"
        raise ValueError(f"rng must be a numpy.random.Generator, an int seed >= 0 or None; got {rng}")


def boolean(name: str, value: object) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{name} must be True or False; got {describe(value)}")


def host_array(name: str, x: object):
    """``x`` as an ndarray when it offers ``__array__`` or ``__dlpack__`` (a torch CPU
    tensor, a JAX array: numpy's own conversion, a view where the producer allows one);
    anything else unchanged.  A producer that refuses is a TypeError naming ``name``, and
    so are ``numpy.matrix`` and masked arrays (see :func:`ndarray_subclass`)."""
    if isinstance(x, np.ndarray) and type(x) is not np.ndarray:
        ndarray_subclass(name, x)
    if isinstance(x, (np.ndarray, np.generic)) or not (hasattr(x, "__array__") or hasattr(x, "__dlpack__")):
        return x
    try:
        return np.asarray(x) if hasattr(x, "__array__") else np.from_dlpack(x)
    except (TypeError, ValueError, RuntimeError, BufferError) as exc:
        raise TypeError(f"{name} could not be read as a host array ({type(x).__module__}."
                        f"{type(x).__name__}): {exc}") from None


def ndarray_subclass(name: str, x: np.ndarray) -> None:
    """TypeError for the ndarray subclasses whose meaning an array of values or bits would
    lose: ``numpy.matrix`` (always 2-D: its rows and products differ from an array's) and
    masked arrays (softfloat carries no mask and drops none silently).  Others (memmap,
    subclasses that only add attributes) pass.

    >>> ndarray_subclass("x", np.ma.masked_array([1.0, 2.0], mask=[False, True]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: x is a numpy.ma.MaskedArray (1 masked value of 2); ... pass x.filled(v) to put ...
    """
    masked = sys.modules.get("numpy.ma")  # no masked array exists unless numpy.ma was imported
    if masked is not None and isinstance(x, masked.MaskedArray):
        hidden = counted(int(np.count_nonzero(masked.getmaskarray(x))), "masked value")
        raise TypeError(
            f"{name} is a numpy.ma.MaskedArray ({hidden} of {x.size}); softfloat carries no mask "
            f"and will not drop one silently: pass {name}.filled(v) to put a value v of your "
            f"choice in the masked places, or {name}.data to take the values under the mask as "
            f"they are (the mask is then lost), and keep numpy.ma.getmaskarray({name}) to mask "
            "the result again")
    if isinstance(x, np.matrix):
        raise TypeError(f"{name} is a numpy.matrix, which softfloat does not take (it stays 2-D whatever "
                        f"is done to it); pass np.asarray({name}), a plain ndarray of the same values")


def file_path(name: str, value: object, what: str) -> str:
    """A path argument (str or os.PathLike) as a str; ``what`` says which file it names."""
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a str or os.PathLike naming {what}; got {describe(value)}")
    return os.fsdecode(os.fspath(value))


def wider_bits(dtype: np.dtype, width: int, fits: list[str]) -> str:
    """What to add when bit patterns of a wider dtype than the format's do not fit its
    ``width`` bits: which formats that dtype stores (``fits``), and where such bits come
    from."""
    such = f"formats such as {', '.join(fits)}" if fits else "wider formats"
    return (f"; the bits are {dtype}, the storage of {dtype.itemsize * 8}-bit {such}, not of this "
            f"{width}-bit format: decode them with the format they were made in (sum, vecdot and "
            "matmul return bits in the accumulator's format, or out_format's when given)")


def bit_patterns(name: str, bits: object, width: int) -> np.ndarray:
    """Check that ``bits`` holds integer bit patterns of ``width`` bits; return it as an array.

    Accepts Python ints and integer arrays of any integer dtype.  Float, bool, complex,
    object and string inputs are a TypeError; values outside [0, 2**width) a ValueError
    that names the first offending index and value.
    """
    if isinstance(bits, bool):
        raise TypeError(f"{name} must hold integer bit patterns; got {describe(bits)}")
    bits = host_array(name, bits)
    if isinstance(bits, (list, tuple)):
        mixed_sequence(name, bits)
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
                + _float_hint(bits))
    if arr.dtype.kind not in "ui":
        hint = (" (to round values into the format use softfloat.encode(x, fmt), which returns "
                "their bits; to reinterpret float data as bits use .view(fmt.storage_dtype))"
                if arr.dtype.kind == "f" else "")
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
                f"(valid patterns are 0 to {(1 << width) - 1:#x}); {counted(int(bad.sum()), 'such value')} in all"
            )
    return arr


def numeric_array(name: str, x: object, exact_scalars: bool = False) -> np.ndarray:
    """Check a numeric array input (float16/32/64 or integer; lists, tuples and Python
    or numpy numbers are converted); return it as an ndarray, no copy when it is one.

    Lists that mix numbers with strings are a TypeError that says so.  ``exact_scalars``:
    the caller also reads Fractions, Decimals and numeric strings (before this check), so
    the message lists them.
    """
    x = host_array(name, x)
    arr = x if isinstance(x, np.ndarray) else None
    if isinstance(x, int) and not isinstance(x, bool) and not -(1 << 63) <= x < (1 << 64):
        raise TypeError(f"{name}={short_repr(x)} is an int beyond int64 and uint64, which this "
                        f"function reads as an array; pass float({name}) (rounded to float64) or "
                        "encode it exactly with softfloat.encode")
    if arr is None:
        if isinstance(x, (np.generic, float, list, tuple)) or (isinstance(x, int) and not isinstance(x, bool)):
            try:
                arr = np.asarray(x)
            except (ValueError, OverflowError, TypeError) as exc:
                raise TypeError(f"{name} could not be read as a numeric array: {exc}") from None
        else:
            what = (", a Python number, a Fraction, a Decimal or a numeric string" if exact_scalars
                    else ", an int or a float")
            raise TypeError(f"{name} must be a float or integer array{what}; got {describe(x)}")
    kind = arr.dtype.kind
    if kind == "f" and arr.dtype.newbyteorder("=") in _FLOATS:
        return arr
    if kind in "iu":
        return arr
    if isinstance(x, (list, tuple)):
        mixed_sequence(name, x)
    what = {
        "c": "complex values have no single rounding; encode the real and imaginary parts separately",
        "O": "object arrays are not supported; pass exact scalars one at a time or convert to a float/int dtype",
        "U": "string arrays are not supported; pass one numeric string at a time",
        "S": "byte-string arrays are not supported",
        "b": "booleans are not numbers here; convert with .astype(np.uint8) if you mean 0/1",
        "f": "only float16, float32 and float64 are supported",
    }.get(kind, "expected a float or integer dtype")
    raise TypeError(f"{name} has dtype {arr.dtype}: {what}")


def mixed_sequence(name: str, values: list | tuple) -> None:
    """Raise a TypeError if the (nested) list ``values`` mixes numbers and strings."""
    flat, stack = [], [values]
    while stack and len(flat) < 1_000_000:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        else:
            flat.append(item)
    strings = [v for v in flat if isinstance(v, (str, bytes, np.str_, np.bytes_))]
    numbers_ = [v for v in flat if isinstance(v, (numbers.Number, np.generic))
                and not isinstance(v, (str, bytes, np.str_, np.bytes_))]
    if strings and numbers_:
        raise TypeError(
            f"{name} mixes numbers and strings (such as {short_repr(numbers_[0], 20)} and "
            f"{short_repr(strings[0], 20)}), which numpy would read as an array of strings; "
            f"pass numbers only, converting the strings first (float({short_repr(strings[0], 20)}), "
            "or softfloat.encode of the string alone to keep its exact decimal value)"
        )


def _float_hint(value: object) -> str:
    """For a float given where bits belong: the likely fix."""
    if isinstance(value, float):
        return (f" (a float is a value, not a bit pattern: "
                f"softfloat.encode({short_repr(value, 30)}, fmt) gives its bits)")
    return ""


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
