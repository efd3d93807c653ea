"""Binary floating-point formats: declared by three numbers, everything else derived.

A :class:`Format` is its exponent width, its trailing-significand width and its
special-value policy (:class:`Specials`).  Bias, exponent range, limits, masks, the
storage dtype and the numpy float dtypes that hold the values are computed from those,
never written down per format, and the tests check them against ``numpy.finfo`` and
``ml_dtypes.finfo``.
"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass, field

import numpy as np

from . import _format_names, _validate

__all__ = [
    "Format",
    "Specials",
    "aliases",
    "as_format",
    "catalogue",
    "native_format",
    "fp64",
    "fp32",
    "tf32",
    "fp16",
    "bf16",
    "fp8_e4m3",
    "fp8_e5m2",
    "fp8_e4m3fnuz",
    "fp8_e5m2fnuz",
    "fp6_e3m2",
    "fp6_e2m3",
    "fp4_e2m1",
]


class Specials(str, enum.Enum):
    """Where a format keeps its infinities and NaNs.

    ``ieee``
        IEEE 754: the all-ones exponent holds +-infinity (zero fraction) and NaNs
        (non-zero fraction; the top fraction bit set means quiet).
    ``fn``
        OCP FP8 E4M3 ("finite, NaN"): no infinities; only S.1..1.1..1 is NaN, so the
        all-ones exponent also holds finite values (max 448 for E4M3).
    ``fnuz``
        "finite, NaN, unsigned zero" (Graphcore/AMD FP8): no infinities, no -0; the
        pattern 1.0..0.0..0 is the only NaN and the bias is one larger than IEEE's.
    ``finite``
        OCP MX FP6/FP4: no infinities and no NaN; every pattern is a number.

    Examples
    --------
    >>> fp8_e4m3.specials, fp8_e4m3.has_infinity, fp8_e4m3.has_nan
    (<Specials.FN: 'fn'>, False, True)
    >>> Format(exponent_bits=4, mantissa_bits=3, specials="fnuz").has_negative_zero
    False
    """

    IEEE = "ieee"
    FN = "fn"
    FNUZ = "fnuz"
    FINITE = "finite"


_MAX_EXPONENT_BITS = 11
_MAX_MANTISSA_BITS = 52


@dataclass(frozen=True)
class Format:
    """A binary floating-point format.

    Parameters
    ----------
    exponent_bits : int
        Width of the biased exponent field, 2 to 11.
    mantissa_bits : int
        Width of the trailing significand field (the fraction, without the implicit
        leading bit), 1 to 52.
    specials : Specials or str, default "ieee"
        Special-value policy, see :class:`Specials`.
    name : str, optional
        Display name; derived as ``e{E}m{M}`` (plus the policy suffix) when omitted.
        Two formats with the same layout and policy compare equal whatever their names.
        A name :func:`as_format` reads (a catalogue name, an alias, a layout such as
        "e6m9") must name this layout and policy: ``name="bf16"`` is for e8m7 alone.

    Every value of a format must be exactly representable in float64, so the exponent
    range may not exceed float64's (this rules out 11-bit exponents for the non-IEEE
    policies).

    Examples
    --------
    >>> f = Format(exponent_bits=5, mantissa_bits=10)
    >>> f == fp16, f.bias, f.emax, f.max_finite
    (True, 15, 15, 65504.0)
    >>> fp8_e4m3.max_finite, fp8_e4m3fnuz.bias
    (448.0, 8)
    """

    exponent_bits: int
    mantissa_bits: int
    specials: Specials = Specials.IEEE
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "exponent_bits", _validate.int_in_range(
            "exponent_bits", self.exponent_bits, 2, _MAX_EXPONENT_BITS))
        object.__setattr__(self, "mantissa_bits", _validate.int_in_range(
            "mantissa_bits", self.mantissa_bits, 1, _MAX_MANTISSA_BITS))
        object.__setattr__(self, "specials", _validate.choice("specials", self.specials, Specials))
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a str; got {self.name!r} ({type(self.name).__name__})")
        if not self.name:
            object.__setattr__(self, "name", _default_name(self))
        elif self.name != _default_name(self):
            _check_name(self)
        if self.emax > 1023 or self.emin < -1022:
            raise ValueError(
                f"format {self.name} has exponent range [{self.emin}, {self.emax}], wider than "
                "float64's [-1022, 1023]; softfloat needs every value to be exact in float64. "
                "Use fewer exponent bits or the 'ieee' policy."
            )

    # -- the declared layout, derived ------------------------------------------------
    @property
    def bits(self) -> int:
        """Total width: sign + exponent + trailing significand."""
        return 1 + self.exponent_bits + self.mantissa_bits

    @property
    def precision(self) -> int:
        """Significand precision p in bits, counting the implicit leading bit."""
        return self.mantissa_bits + 1

    @property
    def bias(self) -> int:
        """Exponent bias: 2**(E-1) - 1, one more for the fnuz policy."""
        return (1 << (self.exponent_bits - 1)) - (0 if self.specials is Specials.FNUZ else 1)

    @property
    def emin(self) -> int:
        """Exponent of the smallest normal number (biased exponent field 1)."""
        return 1 - self.bias

    @property
    def emax(self) -> int:
        """Exponent of the largest finite number."""
        top = (1 << self.exponent_bits) - 1  # the all-ones exponent field
        return top - self.bias - (1 if self.specials is Specials.IEEE else 0)

    @property
    def has_infinity(self) -> bool:
        return self.specials is Specials.IEEE

    @property
    def has_nan(self) -> bool:
        return self.specials is not Specials.FINITE

    @property
    def has_negative_zero(self) -> bool:
        return self.specials is not Specials.FNUZ

    @functools.cached_property  # read in every block of every operation
    def storage_dtype(self) -> np.dtype:
        """The narrowest unsigned integer dtype that holds a bit pattern."""
        for dt in (np.uint8, np.uint16, np.uint32, np.uint64):
            if self.bits <= np.dtype(dt).itemsize * 8:
                return np.dtype(dt)
        raise AssertionError("unreachable: bits <= 64 by construction")

    @functools.cached_property  # numpy.finfo asked once per format
    def native_dtype(self) -> np.dtype | None:
        """numpy's own float dtype that stores this format as itself, or None.

        numpy's float16, float32 and float64 are IEEE binary16/32/64 (their layouts are
        read from ``numpy.finfo``): fp16, fp32 and fp64 -- any format of those layouts,
        whatever its name -- have their bit patterns viewable as that dtype, and numpy's
        arithmetic in it rounds into the format.  No other format has one (ml_dtypes'
        types are not numpy's: :func:`softfloat.to_ml_dtypes` reaches them).
        :func:`native_format` is the inverse.  Test for None with ``is``: numpy reads
        ``dtype == None`` as ``dtype == float64``.

        Examples
        --------
        >>> fp16.native_dtype, fp64.native_dtype, bf16.native_dtype
        (dtype('float16'), dtype('float64'), None)
        >>> Format(exponent_bits=5, mantissa_bits=10, name="half").native_dtype
        dtype('float16')
        """
        if self.specials is not Specials.IEEE:
            return None
        for scalar_type in (np.float16, np.float32, np.float64):
            info = np.finfo(scalar_type)
            if (info.nexp, info.nmant) == (self.exponent_bits, self.mantissa_bits):
                return np.dtype(scalar_type)
        return None

    # -- masks and special patterns (magnitudes exclude the sign bit) ------------------
    @property
    def sign_mask(self) -> int:
        return 1 << (self.bits - 1)

    @property
    def exponent_mask(self) -> int:
        return ((1 << self.exponent_bits) - 1) << self.mantissa_bits

    @property
    def mantissa_mask(self) -> int:
        return (1 << self.mantissa_bits) - 1

    @property
    def max_finite_bits(self) -> int:
        """Magnitude pattern of the largest finite value."""
        if self.specials is Specials.IEEE:
            return self.exponent_mask - 1  # 0.11..10.11..1
        if self.specials is Specials.FN:
            return self.exponent_mask | (self.mantissa_mask - 1)  # 0.11..11.11..10
        return self.exponent_mask | self.mantissa_mask  # 0.11..11.11..11

    @property
    def infinity_bits(self) -> int | None:
        """Magnitude pattern of +infinity, or None where the format has none."""
        return self.exponent_mask if self.has_infinity else None

    @property
    def nan_bits(self) -> int | None:
        """The canonical quiet NaN (positive where the sign is free), or None."""
        if self.specials is Specials.IEEE:
            return self.exponent_mask | (1 << (self.mantissa_bits - 1))
        if self.specials is Specials.FN:
            return self.exponent_mask | self.mantissa_mask
        if self.specials is Specials.FNUZ:
            return self.sign_mask  # the "negative zero" pattern
        return None

    # -- limits as Python floats (all exact in float64) ------------------------------
    @functools.cached_property  # read by the lab's counts on every tensor of every step
    def max_finite(self) -> float:
        e, m = divmod(self.max_finite_bits, 1 << self.mantissa_bits)
        return float.fromhex(f"0x{(1 << self.mantissa_bits) | m:x}p{e - self.bias - self.mantissa_bits}")

    @property
    def min_normal(self) -> float:
        return 2.0**self.emin

    @property
    def min_subnormal(self) -> float:
        return 2.0 ** (self.emin - self.mantissa_bits)

    def holds(self, other: "Format") -> bool:
        """Is every finite value of ``other`` a value of this format?  (Infinities and
        NaNs are the caller's to check: has_infinity, has_nan.)

        >>> fp32.holds(fp16), fp32.holds(bf16), fp16.holds(bf16), fp16.holds(fp8_e4m3)
        (True, True, False, True)
        """
        return (other.precision <= self.precision and other.emax <= self.emax
                and other.emin - other.mantissa_bits >= self.emin - self.mantissa_bits)

    def value_dtype(self, prefer=None) -> np.dtype:
        """The numpy float dtype to hold this format's values in, every one exactly.

        ``prefer`` where it holds them, else float32 where it does, else float64 (which
        holds every format).  This is :func:`softfloat.quantize`'s result dtype for a
        float input, which is preferred; float16 is chosen only when preferred.  A dtype holds a format when its own format :meth:`holds` it; being
        IEEE, it also has the format's infinities and NaNs.

        Parameters
        ----------
        prefer : numpy dtype or scalar type, optional
            A dtype to keep where it holds the format: numpy's float16, float32 or
            float64, in any byte order (the result is in native order).  Anything else
            (None, integer dtypes, ml_dtypes' types) is passed over.

        Returns
        -------
        numpy.dtype
            float16, float32 or float64.

        Examples
        --------
        >>> import numpy as np
        >>> bf16.value_dtype(), tf32.value_dtype(), fp64.value_dtype()
        (dtype('float32'), dtype('float32'), dtype('float64'))
        >>> fp8_e4m3.value_dtype(np.float16), bf16.value_dtype(np.float16), fp8_e4m3.value_dtype(np.int8)
        (dtype('float16'), dtype('float32'), dtype('float32'))
        """
        fmt = native_format(prefer)
        if fmt is not None and fmt.holds(self):
            return fmt.native_dtype
        return self._narrowest_value_dtype

    @functools.cached_property
    def dtype(self) -> np.dtype:
        """The narrowest numpy float dtype that holds every value exactly (float16 for fp16
        and the FP8/FP6/FP4 formats, float32 for bf16 and tf32, float64 for fp64).

        It makes a Format usable where numpy expects a dtype -- ``np.dtype(fmt)``,
        ``np.zeros(3, dtype=fmt)``, ``np.tri(n, dtype=x.dtype)`` with ``x`` an
        :class:`~softfloat.Array` -- and those give plain ndarrays of that dtype (numpy
        itself cannot make an Array); mixed with Arrays they are rounded into the Array's
        format like any ndarray.

        >>> import numpy as np
        >>> fp16.dtype, fp8_e4m3.dtype, bf16.dtype
        (dtype('float16'), dtype('float16'), dtype('float32'))
        >>> np.zeros(2, dtype=bf16).dtype
        dtype('float32')
        """
        return self.value_dtype(np.float16)

    @property
    def kind(self) -> str:
        """``"f"``, numpy's kind letter of a float dtype: code that checks an array's
        ``x.dtype.kind == "f"`` takes an :class:`~softfloat.Array` for a float array."""
        return "f"

    @property
    def itemsize(self) -> int:
        """Bytes per stored bit pattern (``storage_dtype``: 1 for FP8/FP6/FP4, 2 for fp16
        and bf16), as ``Array.itemsize``; ml_dtypes' types store these formats in as many.

        >>> fp16.kind, fp16.itemsize, fp8_e4m3.itemsize, tf32.itemsize
        ('f', 2, 1, 4)
        """
        return self.storage_dtype.itemsize

    @functools.cached_property  # asked on every call of the small-array paths
    def _narrowest_value_dtype(self) -> np.dtype:
        """value_dtype() without a preference: float32 where it holds the format, else float64."""
        return fp32.native_dtype if fp32.holds(self) else fp64.native_dtype

    @property
    def epsilon(self) -> float:
        """Distance from 1.0 to the next larger value: 2**-mantissa_bits."""
        return 2.0**-self.mantissa_bits

    def __eq__(self, other) -> bool:
        """Equal layouts and policies (names aside), or a name of it (``x.format == "bf16"``).
        fp16, fp32, fp64 (:attr:`native_dtype`) also compare, and hash, as numpy's float16/
        32/64 do with a dtype, scalar type or dtype string: ``if x.dtype == np.float16:`` takes
        a float16 ndarray's branch (other formats have no numpy dtype: fp8_e4m3 is not
        np.float16; their hash could not follow ml_dtypes' without importing it).

        >>> import numpy as np
        >>> fp16 == np.float16, fp16 == np.dtype("f2"), fp16 == "fp16", bf16 == "bfloat16", fp16 == np.float32
        (True, True, True, True, False)
        >>> fp8_e4m3 == np.float16, bf16 == np.float32, hash(fp16) == hash(np.dtype("float16"))
        (False, False, True)
        """
        if isinstance(other, Format):
            return self is other or (self.exponent_bits == other.exponent_bits
                                     and self.mantissa_bits == other.mantissa_bits
                                     and self.specials is other.specials)
        if isinstance(other, str) and (named := _from_name(other, None)) is not None:  # softfloat's names
            return named == self  # ("bf16", "e4m3"; else numpy's dtype strings, "f2")
        if isinstance(other, (np.dtype, str)) or (isinstance(other, type)  # (numpy's spellings of a dtype)
                                                  and issubclass(other, (np.generic, float, int, complex))):
            try:
                return self.native_dtype is not None and bool(self.native_dtype == other)
            except TypeError:  # (a string numpy reads as no dtype)
                return False
        return NotImplemented

    def __hash__(self) -> int:
        """The numpy dtype's it equals (numpy's rule: scalar types and strings hash otherwise), else the layout's."""
        twin = self.native_dtype
        return hash(twin) if twin is not None else hash((self.exponent_bits, self.mantissa_bits, self.specials))

    def __repr__(self) -> str:
        if self.name in _CATALOGUE_NAMES and _BY_NAME[self.name] == self:
            return f"softfloat.{self.name}"
        args = f"exponent_bits={self.exponent_bits}, mantissa_bits={self.mantissa_bits}"
        if self.specials is not Specials.IEEE:
            args += f", specials={self.specials.value!r}"
        if self.name != _default_name(self):
            args += f", name={self.name!r}"
        return f"Format({args})"

    def __str__(self) -> str:
        return self.name


def _fmt(e: int, m: int, specials: str, name: str) -> Format:
    """A format named here, in this module (before the names it is checked against exist)."""
    fmt = Format(exponent_bits=e, mantissa_bits=m, specials=Specials(specials))
    object.__setattr__(fmt, "name", name)
    return fmt


def _default_name(fmt: Format) -> str:
    return _format_names.default_name(fmt.exponent_bits, fmt.mantissa_bits, fmt.specials.value)


def _check_name(fmt: Format) -> None:
    """A ValueError where ``fmt``'s given name is one :func:`as_format` reads as another
    format: ``Format(5, 2, name="bf16")`` would print as bf16, yet not equal ``"bf16"``."""
    named = _from_name(fmt.name, None)  # (None: a name softfloat reads as no format, the user's)
    if named is not None and named != fmt:
        default = _default_name(fmt)
        free = default not in _BY_NAME or _BY_NAME[default] == fmt
        raise ValueError(_validate.name_of_another_format(
            fmt.name, _layout(named) + (f", {named!r}" if named.name in _CATALOGUE_NAMES else ""),
            _layout(fmt), default if free else None))


def _layout(fmt: Format) -> str:
    return f"e{fmt.exponent_bits}m{fmt.mantissa_bits} ({fmt.specials.value})"


fp64 = _fmt(11, 52, "ieee", "fp64")
fp32 = _fmt(8, 23, "ieee", "fp32")
tf32 = _fmt(8, 10, "ieee", "tf32")
fp16 = _fmt(5, 10, "ieee", "fp16")
bf16 = _fmt(8, 7, "ieee", "bf16")
fp8_e4m3 = _fmt(4, 3, "fn", "fp8_e4m3")
fp8_e5m2 = _fmt(5, 2, "ieee", "fp8_e5m2")
fp8_e4m3fnuz = _fmt(4, 3, "fnuz", "fp8_e4m3fnuz")
fp8_e5m2fnuz = _fmt(5, 2, "fnuz", "fp8_e5m2fnuz")
fp6_e3m2 = _fmt(3, 2, "finite", "fp6_e3m2")
fp6_e2m3 = _fmt(2, 3, "finite", "fp6_e2m3")
fp4_e2m1 = _fmt(2, 1, "finite", "fp4_e2m1")

_CATALOGUE = (fp64, fp32, tf32, fp16, bf16, fp8_e4m3, fp8_e5m2, fp8_e4m3fnuz, fp8_e5m2fnuz,
              fp6_e3m2, fp6_e2m3, fp4_e2m1)
_CATALOGUE_NAMES = frozenset(f.name for f in _CATALOGUE)

_BY_NAME: dict[str, Format] = {f.name: f for f in _CATALOGUE}
_BY_NAME.update({alias: _BY_NAME[name] for alias, name in _format_names.ALIASES.items()})


def catalogue() -> tuple[Format, ...]:
    """The named formats, widest first.

    >>> [f.name for f in catalogue()][:5]
    ['fp64', 'fp32', 'tf32', 'fp16', 'bf16']
    """
    return _CATALOGUE


def aliases() -> dict[str, Format]:
    """Every other name :func:`as_format` accepts, mapped to its catalogue format.

    >>> aliases()["half"] is fp16
    True
    """
    return {name: f for name, f in _BY_NAME.items() if name not in _CATALOGUE_NAMES}


#: ml_dtypes' IEEE-style FP8 types (with infinities), outside the catalogue: "e4m3" alone
#: names the OCP fn format, as in most ML code, so these keep ml_dtypes' names
_ML_DTYPES_IEEE = {
    "float8_e4m3": _fmt(4, 3, "ieee", "float8_e4m3"),
    "float8_e3m4": _fmt(3, 4, "ieee", "float8_e3m4"),
}

ML_DTYPES_FLOATS = _format_names.ML_DTYPES_FLOATS

#: torch's floating dtypes, by the name after "torch."
TORCH_FLOATS = {torch: _BY_NAME[name] for torch, name in _format_names.TORCH_FLOATS.items()}


def as_format(fmt, argname: str = "fmt") -> Format:
    """Return ``fmt`` itself, or the format a name or a dtype refers to.

    Parameters
    ----------
    fmt : Format, str, numpy dtype or scalar type, ml_dtypes type
        - a :class:`Format`, returned as it is;
        - a catalogue name or alias, case-insensitive: ``"bf16"``, ``"half"``,
          ``"bfloat16"``, ``"e4m3fn"``, ``"float8_e5m2"``, ... (:func:`aliases`);
        - a layout ``"eEmM"`` with E exponent and M mantissa bits, optionally followed
          by a special-value policy ``fn``, ``fnuz`` or ``finite`` (:class:`Specials`):
          ``"e6m9"``, ``"e5m4fn"``.  Catalogue names win: ``"e4m3"`` is OCP FP8 E4M3
          (fn), ``"e3m2"``, ``"e2m3"``, ``"e2m1"`` (and with ``fn``) are the OCP
          FP6/FP4 formats, which have neither infinity nor NaN; a layout that equals a
          catalogue format gives that format (``"e5m10"`` is fp16);
        - a torch dtype name (``"torch.bfloat16"``, ``"torch.float8_e4m3fn"``) or a torch
          dtype itself (read by its name; torch is never imported);
        - a numpy float dtype or scalar type (``np.float16``, ``np.dtype("float32")``) or
          an ml_dtypes type (``ml_dtypes.bfloat16``, ``ml_dtypes.float8_e4m3fn``, ...),
          read by its dtype name; ml_dtypes' IEEE-style ``float8_e4m3`` and
          ``float8_e3m4`` give formats of those names.  ml_dtypes is never imported.
    argname : str, default "fmt"
        The name to use in error messages.

    Examples
    --------
    >>> as_format("BFloat16") is bf16, as_format("e5m10") is fp16
    (True, True)
    >>> as_format("e6m9")
    Format(exponent_bits=6, mantissa_bits=9)
    >>> import numpy as np
    >>> as_format(np.float16), as_format(np.dtype("float32")), as_format("torch.float8_e4m3fn")
    (softfloat.fp16, softfloat.fp32, softfloat.fp8_e4m3)
    """
    if isinstance(fmt, Format):
        return fmt
    if isinstance(fmt, str):
        return _from_name(fmt, argname)
    if type(fmt).__module__ == "torch" and type(fmt).__name__ == "dtype":
        return _from_name(str(fmt), argname)  # torch.bfloat16 prints as 'torch.bfloat16'
    dtype = _as_dtype(fmt)
    if dtype is not None:
        return _from_dtype(dtype, fmt, argname)
    raise TypeError(
        f"{argname} must be a softfloat.Format, a format name such as 'bf16' or 'e6m9', or a "
        f"float dtype such as numpy.float16; got {_validate.short_repr(fmt)} ({type(fmt).__name__})"
    )


def _from_name(text: str, argname: str | None) -> Format | None:
    """The format ``text`` names, else a ValueError naming ``argname`` -- or, with ``argname``
    None (a lookup: ``==`` and a given name's check), None and no message made."""
    key = _format_names.key(text)
    found = _BY_NAME.get(key, _ML_DTYPES_IEEE.get(key))
    if found is not None:
        return found
    if key.startswith("torch."):
        if key[len("torch."):] in TORCH_FLOATS or argname is None:
            return TORCH_FLOATS.get(key[len("torch."):])
        raise ValueError(_validate.unknown_torch_float(argname, text, TORCH_FLOATS))
    layout = _format_names.layout(key)
    if layout:
        e, m, policy = layout
        try:
            fmt = Format(exponent_bits=e, mantissa_bits=m, specials=policy)
        except (TypeError, ValueError) as exc:
            if argname is None:
                return None
            raise ValueError(f"{argname}={text!r} names no format softfloat can emulate: {exc}") from None
        return next((f for f in _CATALOGUE if f == fmt), fmt)
    if argname is not None:
        raise ValueError(_validate.unknown_format(
            argname, text, [f.name for f in _CATALOGUE], sorted(set(_BY_NAME) - _CATALOGUE_NAMES)))


def _as_dtype(obj) -> np.dtype | None:
    """A numpy dtype for dtype objects and numpy (or ml_dtypes) scalar types, else None."""
    if isinstance(obj, np.dtype):
        return obj
    if isinstance(obj, type) and issubclass(obj, np.generic):
        return np.dtype(obj)
    return None


def _from_dtype(dtype: np.dtype, given, argname: str) -> Format:
    name = dtype.name
    from_ml_dtypes = dtype.type.__module__.split(".")[0] == "ml_dtypes"
    native = native_format(dtype)
    if native is not None:
        return native
    if from_ml_dtypes and name in _ML_DTYPES_IEEE:
        return _ML_DTYPES_IEEE[name]
    if from_ml_dtypes and name in _BY_NAME:
        return _BY_NAME[name]
    known = "float16, float32, float64" + (", " + ", ".join(ML_DTYPES_FLOATS) if from_ml_dtypes else "")
    raise ValueError(
        f"{argname}={_validate.short_repr(given)} is not a float dtype softfloat emulates (dtype "
        f"{name}); it knows {known}, or use a softfloat.Format"
    )


def native_format(dtype) -> Format | None:
    """The format numpy's float dtype ``dtype`` stores: the inverse of
    :attr:`Format.native_dtype`.

    Parameters
    ----------
    dtype : numpy dtype or scalar type
        float16, float32 or float64 in any byte order give fp16, fp32 or fp64.  Every
        other dtype (integers, longdouble, ml_dtypes' types: :func:`as_format` reads
        those) and every other object, None included, gives None.

    Examples
    --------
    >>> import numpy as np
    >>> native_format(np.float16), native_format(np.dtype(">f4")), native_format(np.int32)
    (softfloat.fp16, softfloat.fp32, None)
    """
    dtype = _as_dtype(dtype)
    if dtype is None or dtype.kind != "f":
        return None
    return _NATIVE_FORMATS.get(dtype.newbyteorder("="))


#: numpy's float dtypes -> their formats, derived from Format.native_dtype
_NATIVE_FORMATS = {f.native_dtype: f for f in _CATALOGUE if f.native_dtype is not None}
