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
from ..formats import Format, as_format, fp32, fp64
from ..ops.kernels import is_narrow
from .hardware import _ALIASES as PRESET_ALIASES
from .hardware import PRESETS, FusedAccumulator, hardware_model, is_preset

__all__ = ["KINDS", "ORDERS", "ReductionSpec", "default_accumulator", "spec_for", "want_flags"]

#: the three reductions
KINDS = ("sum", "vecdot", "matmul")
#: the summation orders of the package docstring
ORDERS = ("sequential", "pairwise", "reverse")


def default_accumulator(fmt: Format, b_format: Format | None = None) -> Format:
    """The default accumulator of products (and of the array layer's sums): fp32 for
    formats whose every value is an fp32 value (but fp32 itself), else fmt.

    Products of two different formats (``b_format`` not None nor ``fmt``): fp32 when it
    holds every value of both (fp8_e4m3 x fp8_e5m2, fp16 x bf16, fp32 x bf16, ...), else
    the one of the two that holds the other (fp64 x fp16: fp64), else fp64 when it holds
    both; a ValueError otherwise (name an accumulator).  With one format this is the rule
    above, so ``default_accumulator(f, f) == default_accumulator(f)``.
    """
    if b_format is None or b_format == fmt:
        return fp32 if fp32.holds(fmt) and fmt != fp32 else fmt
    for candidate in (fp32, fmt, b_format, fp64):
        if candidate.holds(fmt) and candidate.holds(b_format):
            return candidate
    raise ValueError(f"no default accumulator holds the values of both {fmt} and {b_format} "
                     "(b_format); give accumulator= explicitly")


@dataclass(frozen=True)
class ReductionSpec:
    """Everything one reduction call fixes but its operands, ``c`` and ``rng``: checked and
    resolved on construction (a ValueError or TypeError naming the argument otherwise).

    Parameters
    ----------
    kind : {"sum", "vecdot", "matmul"}
    fmt : Format or str
        The operands' format (``a``'s, for products).
    b_format : Format, str or None
        ``b``'s format, for products of two formats; held resolved (None: ``fmt``).  A
        sum takes none.
    accumulator : Format, str, FusedAccumulator or None
        As the public functions take it; held resolved: a Format or a FusedAccumulator
        (None: ``fmt`` for a sum, :func:`default_accumulator` for products).
    out_format : Format, str or None
        Held resolved: None becomes the accumulator's (a fused adder's output format).
    product : Format, str or None
    order : {"sequential", "pairwise", "reverse"}
    block : int or None
    attributes : RoundingAttributes or None
    want : bool or "swamped"
        ``return_flags``; held as a bool: "swamped" becomes True with ``swamped_only``.
    key : numpy.uint64 or None
        Stochastic rounding's key (see :meth:`keyed`); None for the deterministic modes.
    swamped_only : bool
        Only the swamped counts are wanted (``return_flags="swamped"``): the paths that
        can count them alone skip the other flags (see :func:`want_flags`).
    """

    kind: str
    fmt: Format
    b_format: Format | None = None
    accumulator: Format | FusedAccumulator | None = None
    out_format: Format | None = None
    product: Format | None = None
    order: str = "sequential"
    block: int | None = None
    attributes: RoundingAttributes | None = None
    want: bool = False
    key: np.uint64 | None = None
    swamped_only: bool = False

    def __post_init__(self):
        set_ = object.__setattr__
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(map(repr, KINDS))}; got {self.kind!r}")
        fmt = as_format(self.fmt)
        set_(self, "fmt", fmt)
        b_fmt = fmt if self.b_format is None else as_format(self.b_format, "b_format")
        if b_fmt is not fmt and b_fmt != fmt and self.kind == "sum":  # (a Format's == reads every field)
            raise TypeError(f"b_format={self.b_format!r}: a sum has one operand (b_format applies to "
                            "vecdot and matmul)")
        set_(self, "b_format", b_fmt)
        set_(self, "attributes", as_attributes(self.attributes))
        want, only = want_flags(self.want)
        set_(self, "want", want)
        set_(self, "swamped_only", want and (only or _validate.boolean("swamped_only", self.swamped_only)))
        out = None if self.out_format is None else as_format(self.out_format, "out_format")
        default = None if self.accumulator is not None else fmt if self.kind == "sum" else \
            default_accumulator(fmt, b_fmt)  # (worked out only where it is taken)
        acc = _resolve_accumulator(self.accumulator, (fmt, b_fmt), default, out)
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
        _validate.one_of("order", self.order, ORDERS)
        if hardware and self.order != "sequential":
            raise ValueError(f"order={self.order!r} is not available with a hardware accumulator: its fused "
                             "adder works through the terms in k order (order='sequential')")
        block = self.block
        if block is not None:
            if isinstance(block, bool) or not isinstance(block, numbers.Integral) or block < 1:
                raise ValueError(f"block must be a positive int or None; got {_validate.describe(block)}")
            set_(self, "block", int(block))
        if hardware:
            _check_fused_inputs(fmt, b_fmt)

    @property
    def hardware(self) -> bool:
        """Is the accumulator a fused adder (a :class:`FusedAccumulator`)?"""
        return isinstance(self.accumulator, FusedAccumulator)

    @property
    def mixed(self) -> bool:
        """Are the products' operands of two different formats (``b_format`` not ``fmt``)?"""
        return self.b_format is not self.fmt and self.b_format != self.fmt

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


def want_flags(return_flags) -> tuple[bool, bool]:
    """``return_flags`` checked: (flags wanted, swamped counts only).

    True: the :class:`~softfloat.AccumulationFlags`; "swamped": only their ``swamped``
    counts (the result is ``(bits, swamped)``); False: neither.

    >>> want_flags(False), want_flags(True), want_flags("swamped")
    ((False, False), (True, False), (True, True))
    """
    if isinstance(return_flags, str) and return_flags == "swamped":
        return True, True
    if isinstance(return_flags, (bool, np.bool_)):
        return bool(return_flags), False
    # (a TypeError for any other string too, as for every switch that takes True or False)
    raise TypeError(f"return_flags must be True, False or 'swamped'; got {_validate.describe(return_flags)}")


def _resolve_accumulator(accumulator, formats, default: Format | None, out_format: Format | None):
    """The accumulator argument as a Format or a FusedAccumulator (``formats``: the
    operands' (fmt, b_format); ``default`` the one taken where ``accumulator`` is None)."""
    if accumulator is None:
        return default
    if isinstance(accumulator, FusedAccumulator):
        return accumulator
    if is_preset(accumulator):
        return hardware_model(accumulator, formats[0], out_format, b_format=formats[1])
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


def _check_fused_inputs(fmt: Format, b_format: Format) -> None:
    """The fused adder model needs products that are exact in float64 and at most 24 bits
    wide: inputs of at most 8 exponent bits whose significands add up to at most 24 bits
    (two inputs of at most 12 bits each, as fp16, bf16, tf32 and FP8 are)."""
    if fmt == b_format:
        if not is_narrow(fmt) or fmt.precision > 12:
            raise ValueError(f"the fused accumulator model takes inputs of at most 11 fraction bits and "
                             f"8 exponent bits (fp16, bf16, tf32, FP8, ...); got {fmt}")
    elif not (is_narrow(fmt) and is_narrow(b_format)) or fmt.precision + b_format.precision > 24:
        raise ValueError(f"the fused accumulator model takes products of at most 24 significant bits and "
                         f"inputs of at most 8 exponent bits; got {fmt} x {b_format} (b_format), "
                         f"{fmt.precision} + {b_format.precision} bits")


_SPECS: dict = {}  # (kind, option names, ids) -> (the spec, the options): the array layer's repeated calls


def spec_for(kind, fmt, rng=None, *, product=None, block=None, **options) -> ReductionSpec:
    """The ReductionSpec of a sum, vecdot or matmul for ``options`` (ReductionSpec's
    keywords), keyed by a draw from ``rng`` for stochastic rounding.  A deterministic spec
    without ``product`` and ``block`` is made once per options: a spec is immutable, and
    checking costs microseconds.  Keyed by the options' names and ids, the entry holding
    the options themselves (so the ids stay theirs); the entries' checks raised nothing,
    so a bad option is checked every time."""
    if rng is not None or product is not None or block is not None:
        return ReductionSpec(kind, fmt, product=product, block=block, **options).keyed(rng)
    values = (fmt, *options.values())
    key = (kind, tuple(options), *map(id, values))
    found = _SPECS.get(key)
    if found is not None and all(a is b for a, b in zip(found[1], values)):
        return found[0]
    spec = ReductionSpec(kind, fmt, **options)
    if len(_SPECS) > 64:
        _SPECS.clear()
    _SPECS[key] = (spec, values)
    return spec
