"""Scalar-FPU behaviour that IEEE 754 leaves open, as data the kernels read.

IEEE 754 fixes every rounded value but leaves four things to the implementation, and
real hardware disagrees on each (Berkeley SoftFloat 3 keeps one "specialisation" folder
per processor for the same reason):

* the **default NaN**: the pattern an invalid operation (inf - inf, 0 * inf, 0/0,
  sqrt(-1)) returns -- positive with only the quiet bit set on ARM and RISC-V, negative on
  x86 SSE, positive with every payload bit set on NVIDIA GPUs;
* **NaN propagation**: which NaN operand an operation returns (quieted), or whether it
  always returns the default NaN;
* **tininess**: whether underflow is detected before or after rounding (section 7.5);
* **invalid integer results**: what a conversion to an integer returns for a NaN or an
  out-of-range value (x86's "integer indefinite", ARM's saturation, RISC-V's).

A :class:`Platform` states all four; :data:`PLATFORMS` holds the presets.  Pass one as
``RoundingAttributes(platform="arm")`` or ``softfloat.context(platform="x86-sse")``.
The preset ``"default"`` is what softfloat does unless told otherwise.

>>> import softfloat as sf
>>> nan = sf.encode(float("nan"), "fp32")
>>> inf = sf.encode(float("inf"), "fp32")
>>> [hex(int(sf.sub(inf, inf, "fp32", attributes=sf.RoundingAttributes(platform=p))))
...  for p in ("default", "x86-sse", "cuda")]
['0x7fc00000', '0xffc00000', '0x7fffffff']
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from . import _validate
from .rounding import Tininess

__all__ = ["NanPropagation", "PLATFORMS", "Platform", "as_platform"]


class NanPropagation(str, enum.Enum):
    """Which NaN an arithmetic operation with NaN operands returns.

    ``signaling_first``  the first signaling NaN operand, else the first quiet NaN
                         operand, quieted, sign and payload kept (ARM with FPCR.DN = 0).
    ``first_operand``    the first NaN operand whatever its kind, quieted (x86 SSE).
    ``default_nan``      always the default NaN (RISC-V, ARM with FPCR.DN = 1, NVIDIA).

    >>> import softfloat as sf
    >>> [p.nan_propagation.value for p in (sf.PLATFORMS["x86-sse"], sf.PLATFORMS["riscv"])]
    ['first_operand', 'default_nan']
    """

    SIGNALING_FIRST = "signaling_first"
    FIRST_OPERAND = "first_operand"
    DEFAULT_NAN = "default_nan"

    def __str__(self) -> str:
        return self.value


#: The three results an invalid conversion to an integer dtype can give.
_INTEGER_RESULTS = ("minimum", "maximum", "zero")


@dataclass(frozen=True)
class Platform:
    """What one processor does where IEEE 754 leaves the choice open.

    Attributes
    ----------
    name : str
    default_nan_sign : int
        0 or 1: the sign of the default NaN.
    default_nan_payload : {"quiet", "all_ones"}
        Its trailing significand: only the quiet bit (0x7FC00000 in fp32) or every bit
        (0x7FFFFFFF, NVIDIA's canonical NaN).
    nan_propagation : NanPropagation
    tininess : Tininess
        The default of ``tininess`` wherever the platform is in force.
    signed_invalid, unsigned_invalid : tuple of three of {"minimum", "maximum", "zero"}
        What a conversion to a signed / unsigned integer dtype returns for a NaN, a
        positive value out of range (or +inf) and a negative one (or -inf).
    source : str
        Where the behaviour is documented.
    binary64 : Platform, optional
        The rules of the double-precision unit where they differ from these (NVIDIA GPUs:
        fp64 arithmetic follows x86's NaN rules, fp32/fp16/bf16 return the canonical NaN);
        :meth:`for_format` picks them for binary64 operations and for conversions from
        binary64.

    Examples
    --------
    >>> import softfloat as sf
    >>> riscv = sf.PLATFORMS["riscv"]
    >>> riscv.tininess.value, riscv.invalid_integer(signed=True)
    ('after', {'nan': 'maximum', 'positive': 'maximum', 'negative': 'minimum'})
    >>> big = sf.encode([float("nan"), 1e10], "fp32")
    >>> sf.to_int(big, "fp32", dtype="int32", attributes=sf.RoundingAttributes(platform=riscv)).tolist()
    [2147483647, 2147483647]
    """

    name: str
    default_nan_sign: int
    default_nan_payload: str
    nan_propagation: NanPropagation
    tininess: Tininess
    signed_invalid: tuple[str, str, str]
    unsigned_invalid: tuple[str, str, str]
    source: str = ""
    binary64: "Platform | None" = None

    def __post_init__(self):
        if self.default_nan_sign not in (0, 1):
            raise ValueError(f"default_nan_sign must be 0 or 1; got {self.default_nan_sign!r}")
        if self.default_nan_payload not in ("quiet", "all_ones"):
            raise ValueError(f"default_nan_payload must be 'quiet' or 'all_ones'; got {self.default_nan_payload!r}")
        object.__setattr__(self, "nan_propagation", _validate.choice("nan_propagation", self.nan_propagation,
                                                                     NanPropagation))
        object.__setattr__(self, "tininess", _validate.choice("tininess", self.tininess, Tininess))
        for argname in ("signed_invalid", "unsigned_invalid"):
            results = tuple(getattr(self, argname))
            if len(results) != 3 or any(r not in _INTEGER_RESULTS for r in results):
                raise ValueError(f"{argname} must be three of {_INTEGER_RESULTS} (for NaN, positive and negative "
                                 f"out of range); got {results!r}")
            object.__setattr__(self, argname, results)
        if self.binary64 is not None and not isinstance(self.binary64, Platform):
            raise TypeError(f"binary64 must be a Platform or None; got {_validate.describe(self.binary64)}")

    def for_format(self, fmt) -> "Platform":
        """The rules of the unit that computes in ``fmt``: :attr:`binary64`'s for IEEE
        binary64 (11 exponent and 52 fraction bits) where it is given, else these."""
        if self.binary64 is not None and (fmt.exponent_bits, fmt.mantissa_bits) == (11, 52):
            return self.binary64
        return self

    def invalid_integer(self, signed: bool) -> dict[str, str]:
        """``{"nan": ..., "positive": ..., "negative": ...}`` for a signed or unsigned dtype."""
        return dict(zip(("nan", "positive", "negative"), self.signed_invalid if signed else self.unsigned_invalid))

    def __str__(self) -> str:
        return self.name


_X86 = (("minimum",) * 3, ("maximum",) * 3)          # "integer indefinite"
_SATURATING = (("zero", "maximum", "minimum"), ("zero", "maximum", "zero"))

#: The presets by name.  ``"default"`` is softfloat's own choice: ARM's NaN rules (the
#: ones IEEE 754-2019 section 6.2 recommends: a signaling NaN operand first) and default
#: NaN, tininess after rounding as x86 and RISC-V, and x86's invalid integers.
PLATFORMS: dict[str, Platform] = {p.name: p for p in (
    Platform("default", 0, "quiet", NanPropagation.SIGNALING_FIRST, Tininess.AFTER, *_X86,
             source="softfloat's choice (see the module docstring)"),
    Platform("x86-sse", 1, "quiet", NanPropagation.FIRST_OPERAND, Tininess.AFTER, *_X86,
             source="Intel SDM vol. 1 section 4.8.3.5 and table 4-7; CVTTSS2SI/VCVTTSS2USI"),
    Platform("arm", 0, "quiet", NanPropagation.SIGNALING_FIRST, Tininess.BEFORE, *_SATURATING,
             source="Arm ARM, FPProcessNaNs and FPToFixed (FPCR.DN = 0)"),
    Platform("arm-default-nan", 0, "quiet", NanPropagation.DEFAULT_NAN, Tininess.BEFORE, *_SATURATING,
             source="Arm ARM with FPCR.DN = 1"),
    Platform("riscv", 0, "quiet", NanPropagation.DEFAULT_NAN, Tininess.AFTER,
             ("maximum", "maximum", "minimum"), ("maximum", "maximum", "zero"),
             source="RISC-V unprivileged ISA, F extension sections 11.3 and 11.7 (canonical NaN, FCVT table)"),
    Platform("cuda", 0, "all_ones", NanPropagation.DEFAULT_NAN, Tininess.AFTER, *_SATURATING,
             source="PTX ISA: canonical NaN 0x7FFFFFFF; cvt to integer saturates, NaN -> 0 "
                    "(no flags are visible on a GPU, so tininess only names a convention); fp64 "
                    "measured on an H200 (tools/gpu_crosscheck.py): x86's NaN rules",
             binary64=Platform("cuda-fp64", 1, "quiet", NanPropagation.FIRST_OPERAND, Tininess.AFTER,
                               *_SATURATING,
                               source="measured on an NVIDIA H200 with torch 2.11 (tools/gpu_crosscheck.py): "
                                      "invalid fp64 operations give 0xFFF8000000000000, a NaN operand "
                                      "propagates quieted (the first one, signaling or not), fp64 -> fp32 "
                                      "keeps the sign and the top payload bits")),
)}


def as_platform(value, argname: str = "platform") -> Platform:
    """A :class:`Platform`, or the name of a preset (an unknown name lists them)."""
    if isinstance(value, Platform):
        return value
    if isinstance(value, str) and value in PLATFORMS:
        return PLATFORMS[value]
    if isinstance(value, str):
        raise ValueError(f"{argname} must be a Platform or one of {', '.join(map(repr, PLATFORMS))}; got "
                         f"{value!r}{_validate.did_you_mean(value, PLATFORMS)}")
    raise TypeError(f"{argname} must be a Platform or a preset name; got {_validate.describe(value)}")
