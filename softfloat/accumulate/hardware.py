"""Tensor-core accumulators as data: the fused multi-term adder and the published presets.

NVIDIA's matrix units do not chain IEEE additions.  Published measurements (Fasi, Higham,
Mikaitis and Pranesh 2021; Khattak and Mikaitis 2025; Xie et al. 2025, "MMA-Sim"; Valpey
et al. 2025) agree on one model that reproduces V100, T4, A2, A100, Ada/L40S, H100, H200
and B200 bit for bit.  For each block of ``terms`` products and the accumulator ``c``:

1. the products are exact (significand in [1, 4), exponent ea + eb, where a subnormal
   input keeps its exponent clamped at the input format's emin); zero products drop out;
2. M = the largest exponent among the products and c (c's exponent clamped at the output
   format's emin likewise);
3. every term, c included, is truncated toward zero to ``fraction_bits`` bits below 2**M
   (sign-magnitude: trunc(t / 2**(M - F)) * 2**(M - F));
4. the truncated terms are added exactly (the adder has enough carry bits) and normalised
   once;
5. the block result is rounded into the output: ``output_rounding`` to
   ``output_mantissa_bits`` fraction bits, stored in ``output`` (fp32 outputs truncate,
   to 13 fraction bits for native FP8; fp16 outputs round to nearest even); overflow
   follows that mode's IEEE rule (truncation gives +-max_finite), an infinite product or
   c gives that infinity, and infinities of both signs, 0 * inf or a NaN give a NaN;
6. longer sums chain the blocks in k order, each block's rounded output being the next
   block's c.

FP8 "via fp16" (``fp8="via_fp16"``) is how Hopper and Blackwell run warp-level FP8 MMA
(``mma.sync``): per 32-term block the inputs are widened exactly to fp16; a first fused
step adds the products with k mod 4 in {0, 1} from a zero accumulator, a second adds those
with k mod 4 in {2, 3} to its rounded result, and c is then added by an ordinary IEEE
addition rounded to nearest even in the output format.

Measured on an NVIDIA H200 (tools/gpu_crosscheck.py, 2026-11): "h100" (= "h200") gives
every output bit for bit of cuBLAS's fp16 and bf16 products with an fp32 output
(``torch.mm(a, b, out_dtype=torch.float32)``) and of ``torch._scaled_mm`` on FP8 with
``use_fast_accum=True`` (e4m3 x e4m3 and e5m2 x e4m3); ``use_fast_accum=False`` is
``block=128`` (the partial sums promoted into fp32 every 128 products).  torch's fp16 and
bf16 ``@`` (fp16/bf16 output) is the fp32-output model rounded once to nearest even, not
the chip's fp16-output mode (``out_format="fp16"`` here selects that mode, cuBLAS's
``CUBLAS_COMPUTE_16F``).  Warp-level ``mma.sync`` gives the same fp16/bf16 results, but
runs FP8 "via fp16" also with an fp32 output: preset "h100-mma" (= "h200-mma").  Where
cuBLAS splits k (small M and N, large K: a ``splitKreduce`` kernel), the partial
products are reduced outside the model and differ.

Hardware behaviour lives here as data (:data:`PRESETS`); the kernels in
``softfloat.accumulate._fused`` only read a :class:`FusedAccumulator`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import _validate
from ..formats import Format, as_format, bf16, fp8_e4m3, fp8_e5m2, fp16, fp32, tf32
from ..rounding import Rounding, as_rounding

__all__ = ["FusedAccumulator", "PRESETS", "hardware_model", "is_preset"]

_FP8_MODES = ("native", "via_fp16")


@dataclass(frozen=True)
class FusedAccumulator:
    """A multi-term fused adder, the accumulator of a matrix unit (see the module docstring).

    Parameters
    ----------
    terms : int
        N, the number of products one fused step adds (with the accumulator c); with
        ``fp8="via_fp16"`` the block length, whose two halves (k mod 4 in {0, 1}, then
        {2, 3}) each make one fused step.
    fraction_bits : int
        F, the bits kept below the largest exponent when the terms are aligned.
    output : Format or str, default "fp32"
        The accumulator format the block results are stored in.
    output_rounding : Rounding or str, default "toward_zero"
        How a block result is rounded into ``output``.
    output_mantissa_bits : int, optional
        Fraction bits kept in the output (default: all of ``output``'s); the result is
        rounded to this many bits and stored exactly in ``output`` (13 for the native FP8
        path of Ada and Hopper, whose fp32 results keep 13 fraction bits).
    fp8 : {"native", "via_fp16"}, default "native"
        How FP8 inputs run: natively with this model, or widened to fp16 and added in two
        fused half-steps with c added last by an IEEE addition (see the module docstring).
    name : str, optional
        A label for reprs and error messages.

    Examples
    --------
    >>> from softfloat.accumulate import FusedAccumulator
    >>> FusedAccumulator(terms=16, fraction_bits=25)
    FusedAccumulator(terms=16, fraction_bits=25, output=fp32, output_rounding='toward_zero')
    """

    terms: int
    fraction_bits: int
    output: Format | str = "fp32"
    output_rounding: Rounding | str = Rounding.TOWARD_ZERO
    output_mantissa_bits: int | None = None
    fp8: str = "native"
    name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "terms", _validate.int_in_range("terms", self.terms, 1, 1 << 16))
        object.__setattr__(self, "fraction_bits",
                           _validate.int_in_range("fraction_bits", self.fraction_bits, 1, 48))
        output = as_format(self.output, "output")
        object.__setattr__(self, "output", output)
        rounding = as_rounding(self.output_rounding, "output_rounding")
        if rounding is Rounding.STOCHASTIC:
            raise ValueError("output_rounding='stochastic' is not supported by the fused "
                             "accumulator model; choose a deterministic mode")
        object.__setattr__(self, "output_rounding", rounding)
        if self.output_mantissa_bits is None:
            object.__setattr__(self, "output_mantissa_bits", output.mantissa_bits)
        object.__setattr__(self, "output_mantissa_bits", _validate.int_in_range(
            "output_mantissa_bits", self.output_mantissa_bits, 1, output.mantissa_bits))
        _validate.one_of("fp8", self.fp8, _FP8_MODES)
        # a block sum has at most F + 2 bits per term plus the carries of N + 1 terms, and
        # is computed exactly in float64
        if self.fraction_bits + 2 + (self.terms + 1).bit_length() > 53:
            raise ValueError(f"fraction_bits={self.fraction_bits} with terms={self.terms} is too wide "
                             "for the fused accumulator model (block sums must fit 53 bits)")

    @property
    def rounding_format(self) -> Format:
        """The format block results are rounded into (output's range, kept fraction bits)."""
        if self.output_mantissa_bits == self.output.mantissa_bits:
            return self.output
        return Format(self.output.exponent_bits, self.output_mantissa_bits, self.output.specials,
                      name=f"{self.output.name}[{self.output_mantissa_bits} fraction bits]")

    def __repr__(self) -> str:
        args = (f"terms={self.terms}, fraction_bits={self.fraction_bits}, output={self.output}, "
                f"output_rounding={self.output_rounding.value!r}")
        if self.output_mantissa_bits != self.output.mantissa_bits:
            args += f", output_mantissa_bits={self.output_mantissa_bits}"
        if self.fp8 != "native":
            args += f", fp8={self.fp8!r}"
        if self.name:
            args += f", name={self.name!r}"
        return f"FusedAccumulator({args})"


#: The published models, by chip: for each input family, (terms N, fraction bits F, fp8 mode
#: for an fp32 output, fp8 mode for an fp16 output).  A missing family is unsupported.  The
#: "via_fp16" FP8 path runs the chip's fp16 model (its N and F) over 32-term blocks.
#: Sources: Fasi et al. 2021 (V100, T4, A100); Khattak and Mikaitis 2025 (A2, Ada, L40S,
#: H100, H200, B200); Xie et al. 2025 (MMA-Sim: the FP8 paths, "via fp16" on Hopper's and
#: Blackwell's mma.sync); "h100-mma": Hopper's warp-level mma.sync, measured on an H200
#: (its FP8 products with an fp32 output follow "via_fp16" bit for bit, cuBLAS's wgmma
#: kernels the native path).
_HALF = ("fp16", "bf16")
PRESETS: dict[str, dict[str, tuple[int, int, str | None, str | None]]] = {
    "v100": {"fp16": (4, 23, None, None)},
    "t4": {"fp16": (8, 24, None, None)},
    "a100": {"fp16": (8, 24, None, None), "bf16": (8, 24, None, None), "tf32": (4, 24, None, None)},
    "ada": {"fp16": (8, 24, None, None), "bf16": (8, 24, None, None), "tf32": (4, 24, None, None),
            "fp8": (16, 13, "native", "native")},
    "h100": {"fp16": (16, 25, None, None), "bf16": (16, 25, None, None), "tf32": (8, 25, None, None),
             "fp8": (32, 13, "native", "via_fp16")},
    "h100-mma": {"fp16": (16, 25, None, None), "bf16": (16, 25, None, None), "tf32": (8, 25, None, None),
                 "fp8": (32, 13, "via_fp16", "via_fp16")},
    "b200": {"fp16": (16, 25, None, None), "bf16": (16, 25, None, None), "tf32": (8, 25, None, None),
             "fp8": (32, 13, "via_fp16", "via_fp16")},
}
_ALIASES = {"a2": "a100", "l40s": "ada", "h200": "h100", "h200-mma": "h100-mma"}

_FAMILY = {fp16: "fp16", bf16: "bf16", tf32: "tf32", fp8_e4m3: "fp8", fp8_e5m2: "fp8"}
#: fraction bits an fp32 output keeps on the native FP8 path
_FP8_NATIVE_FP32_MANTISSA = 13
#: the block length of the "via fp16" FP8 path (two fused half-steps of 16 products)
_VIA_FP16_BLOCK = 32


def is_preset(name: object) -> bool:
    """Is ``name`` a preset's name (case-insensitive)?"""
    return isinstance(name, str) and name.strip().lower() in PRESETS.keys() | _ALIASES.keys()


def hardware_model(name: str, fmt: Format, out_format: Format | None = None, *,
                   b_format: Format | None = None) -> FusedAccumulator:
    """The :class:`FusedAccumulator` of preset ``name`` for inputs in ``fmt``.

    ``out_format`` fp16 selects the chip's fp16-output mode; anything else (or None) its
    fp32 output.  ``b_format`` (default ``fmt``) is the second operand's format: the
    matrix units take two operands of one family (fp16, bf16 or tf32), or FP8 with either
    FP8 format per operand (fp8_e4m3 x fp8_e5m2 runs the chip's FP8 path, as Ada's and
    Hopper's FP8 instructions take E4M3 and E5M2 operands in any pairing).  Unsupported
    combinations raise a ValueError naming the formats and what is supported.

    Examples
    --------
    >>> import softfloat as sf
    >>> from softfloat.accumulate import hardware_model
    >>> hardware_model("h100", sf.fp16)
    FusedAccumulator(terms=16, fraction_bits=25, output=fp32, output_rounding='toward_zero', name='h100')
    >>> hardware_model("h100", sf.fp8_e4m3, sf.fp16).fp8
    'via_fp16'
    >>> hardware_model("h100", sf.fp8_e4m3, b_format=sf.fp8_e5m2) == hardware_model("h100", sf.fp8_e4m3)
    True
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a hardware preset's name such as 'h100'; got {_validate.describe(name)}")
    key = name.strip().lower()
    chip = _ALIASES.get(key, key)
    if chip not in PRESETS:
        named = [*PRESETS, *_ALIASES]
        raise ValueError(f"name={name!r} is not a hardware preset{_validate.did_you_mean(name, named)}; choose "
                         f"one of {', '.join(PRESETS)} (aliases: {', '.join(f'{a} = {c}' for a, c in _ALIASES.items())})")
    table = PRESETS[chip]
    fmt = as_format(fmt)  # a name too: _FAMILY is keyed by Format ('bf16' read as no family)
    b_format = fmt if b_format is None else as_format(b_format, "b_format")
    out_format = None if out_format is None else as_format(out_format, "out_format")
    family = _FAMILY.get(fmt)
    if family not in table or _FAMILY.get(b_format) != family:
        supported = ", ".join(f for f in ("fp16", "bf16", "tf32") if f in table)
        if "fp8" in table:
            supported += ", fp8_e4m3, fp8_e5m2"
        if b_format == fmt:
            raise ValueError(f"accumulator={name!r} has no model for {fmt} inputs; it supports {supported} "
                             "(or describe the hardware with softfloat.accumulate.FusedAccumulator)")
        pairs = ", ".join(f"{f} x {f}" for f in ("fp16", "bf16", "tf32") if f in table)
        if "fp8" in table:
            pairs += ", or fp8_e4m3/fp8_e5m2 x fp8_e4m3/fp8_e5m2 (either FP8 format per operand)"
        raise ValueError(f"accumulator={name!r} has no model for {fmt} x {b_format} (b_format) products; "
                         f"it supports {pairs} (or describe the hardware with "
                         "softfloat.accumulate.FusedAccumulator)")
    terms, fraction_bits, fp8_fp32, fp8_fp16 = table[family]
    half_output = out_format == fp16
    if half_output:
        output, rounding, mantissa = fp16, Rounding.NEAREST_EVEN, fp16.mantissa_bits
    else:
        output, rounding, mantissa = fp32, Rounding.TOWARD_ZERO, fp32.mantissa_bits
    fp8 = "native"
    if family == "fp8":
        fp8 = fp8_fp16 if half_output else fp8_fp32
        if fp8 == "via_fp16":
            terms, fraction_bits = _VIA_FP16_BLOCK, table["fp16"][1]
        elif not half_output:
            mantissa = _FP8_NATIVE_FP32_MANTISSA
    return FusedAccumulator(terms, fraction_bits, output, rounding, mantissa, fp8, name=key)
