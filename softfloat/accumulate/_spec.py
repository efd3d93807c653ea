"""A reduction call's options, checked into one value before any operand is read.

``sum``, ``vecdot`` and ``matmul`` build a :class:`ReductionSpec` first: a bad ``order``,
``block``, ``product``, ``accumulator``, ``out_format`` or ``return_flags`` raises before
an operand is converted (or a dask graph is built), and everything after that takes the
one checked value instead of a dozen loose arguments.
"""

from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass

import numpy as np

from .. import _random, _validate
from ..attributes import RoundingAttributes, as_attributes
from ..formats import Format, as_format, fp32
from ..ops.kernels import is_narrow
from .hardware import _ALIASES as PRESET_ALIASES
from .hardware import PRESETS, FusedAccumulator, hardware_model, is_preset

__all__ = ["KINDS", "ORDERS", "ReductionSpec", "default_accumulator"]

#: the three reductions
KINDS = ("sum", "vecdot", "matmul")
#: the summation orders of the package docstring
ORDERS = ("sequential", "pairwise", "reverse")


def default_accumulator(fmt: Format) -> Format:
    """The default accumulator of products (and of the array layer's sums): fp32 for
    formats whose every value is an fp32 value (but fp32 itself), else fmt."""
    return fp32 if fp32.holds(fmt) and fmt != fp32 else fmt


@dataclass(frozen=True)
class ReductionSpec:
    """Everything one reduction call fixes but its operands, ``c`` and ``rng``: checked and
    resolved on construction (a ValueError or TypeError naming the argument otherwise).

    Parameters
    ----------
    kind : {"sum", "vecdot", "matmul"}
    fmt : Format or str
        The operands' format.
    accumulator : Format, str, FusedAccumulator or None
        As the public functions take it; held resolved: a Format or a FusedAccumulator
        (None: ``fmt`` for a sum, :func:`default_accumulator` for products).
    out_format : Format, str or None
        Held resolved: None becomes the accumulator's (a fused adder's output format).
    product : Format, str or None
    order : {"sequential", "pairwise", "reverse"}
    block : int or None
    attributes : RoundingAttributes or None
    want : bool
        ``return_flags``.
    key : numpy.uint64 or None
        Stochastic rounding's key (see :meth:`keyed`); None for the deterministic modes.
    """

    kind: str
    fmt: Format
    accumulator: Format | FusedAccumulator | None = None
    out_format: Format | None = None
    product: Format | None = None
    order: str = "sequential"
    block: int | None = None
    attributes: RoundingAttributes | None = None
    want: bool = False
    key: np.uint64 | None = None

    def __post_init__(self):
        set_ = object.__setattr__
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(map(repr, KINDS))}; got {self.kind!r}")
        fmt = as_format(self.fmt)
        set_(self, "fmt", fmt)
        set_(self, "attributes", as_attributes(self.attributes))
        set_(self, "want", _validate.boolean("return_flags", self.want))
        out = None if self.out_format is None else as_format(self.out_format, "out_format")
        default = fmt if self.kind == "sum" else default_accumulator(fmt)
        acc = _resolve_accumulator(self.accumulator, fmt, default, out)
        set_(self, "accumulator", acc)
        hardware = isinstance(acc, FusedAccumulator)
        set_(self, "out_format", out if out is not None else (acc.output if hardware else acc))
        if self.product is not None:
            if self.kind == "sum":
                raise TypeError(f"product={self.product!r}: a sum has no products to round (product= "
                                "applies to vecdot and matmul)")
            if hardware:
                raise ValueError(f"product={self.product!r} cannot be used with the hardware accumulator "
                                 f"{acc!r}: its products are exact by construction")
            set_(self, "product", as_format(self.product, "product"))
        if self.order not in ORDERS:
            raise ValueError(f"order must be one of {', '.join(map(repr, ORDERS))}; got {self.order!r}")
        if hardware and self.order != "sequential":
            raise ValueError(f"order={self.order!r} is not available with a hardware accumulator: its fused "
                             "adder works through the terms in k order (order='sequential')")
        block = self.block
        if block is not None:
            if isinstance(block, bool) or not isinstance(block, numbers.Integral) or block < 1:
                raise ValueError(f"block must be a positive int or None; got {_validate.describe(block)}")
            set_(self, "block", int(block))
        if hardware:
            _check_fused_inputs(fmt)

    @property
    def hardware(self) -> bool:
        """Is the accumulator a fused adder (a :class:`FusedAccumulator`)?"""
        return isinstance(self.accumulator, FusedAccumulator)

    @property
    def ieee_accumulator(self) -> Format:
        """The format the IEEE arithmetic accumulates in: the accumulator, or a fused
        adder's output format (its promotions and final rounding are IEEE ones)."""
        return self.accumulator.output if self.hardware else self.accumulator

    def keyed(self, rng) -> ReductionSpec:
        """This spec with stochastic rounding's key drawn from ``rng`` (a Generator, or
        None for the deterministic modes: no draw)."""
        return self if rng is None else dataclasses.replace(self, key=_random.key_from(rng))

    def replace(self, **changes) -> ReductionSpec:
        """A copy with ``changes`` (checked again)."""
        return dataclasses.replace(self, **changes)


def _resolve_accumulator(accumulator, fmt: Format, default: Format, out_format: Format | None):
    """The accumulator argument as a Format or a FusedAccumulator."""
    if accumulator is None:
        return default
    if isinstance(accumulator, FusedAccumulator):
        return accumulator
    if is_preset(accumulator):
        return hardware_model(accumulator, fmt, out_format)
    if isinstance(accumulator, (Format, str)):
        try:
            return as_format(accumulator, "accumulator")
        except ValueError as exc:
            if not isinstance(accumulator, str):
                raise
            raise ValueError(_validate.unknown_accumulator(accumulator, list(PRESETS), dict(PRESET_ALIASES),
                                                           str(exc))) from None
    raise TypeError("accumulator must be a format (name or softfloat.Format), a hardware preset name "
                    "such as 'h100', or a softfloat.accumulate.FusedAccumulator; got "
                    f"{_validate.describe(accumulator)}")


def _check_fused_inputs(fmt: Format) -> None:
    """The fused adder model needs products that are exact in float64 (inputs of at most
    12 bits of precision and 8 exponent bits)."""
    if not is_narrow(fmt) or fmt.precision > 12:
        raise ValueError(f"the fused accumulator model takes inputs of at most 11 fraction bits and "
                         f"8 exponent bits (fp16, bf16, tf32, FP8, ...); got {fmt}")
