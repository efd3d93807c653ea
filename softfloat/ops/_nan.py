"""NaN results, chosen by the platform's rules (:mod:`softfloat.platforms`, read from
``attrs.platform``): NaN operands and invalid operations never reach the host FPU's NaN
rules."""

from __future__ import annotations

import numpy as np

from ..formats import Format, Specials
from ..platforms import PLATFORMS, NanPropagation, Platform

__all__ = ["NAN_POLICY", "default_nan", "describe_nan_rules", "is_signaling", "nan_mask", "nan_propagation",
           "propagated", "quieted", "resolve_nans"]

_PAYLOAD_WORDS = {"quiet": "canonical quiet NaN", "all_ones": "quiet NaN with every payload bit set"}
_PROPAGATION_WORDS = {NanPropagation.SIGNALING_FIRST: "signaling first, then first operand",
                      NanPropagation.FIRST_OPERAND: "first NaN operand, whatever its kind",
                      NanPropagation.DEFAULT_NAN: "always the default NaN"}


def describe_nan_rules(platform: Platform) -> dict[str, str]:
    """A platform's NaN rules in words: ``{"default_nan": ..., "propagation": ...}``."""
    sign = "negative" if platform.default_nan_sign else "positive"
    return {"default_nan": f"{sign} {_PAYLOAD_WORDS[platform.default_nan_payload]}",
            "propagation": _PROPAGATION_WORDS[platform.nan_propagation]}


#: How NaN results are chosen by default: a description derived from the data of
#: ``softfloat.PLATFORMS["default"]`` (the rules themselves live there, and
#: ``RoundingAttributes(platform=...)`` picks another preset's):
#: - an invalid operation returns the default NaN: positive, only the quiet bit set
#:   (``Format.nan_bits``), as RISC-V and AArch64 in default-NaN mode do;
#: - a NaN operand propagates: the first signaling NaN operand if there is one, else the
#:   first quiet NaN operand, quieted, keeping its sign and payload (AArch64 with
#:   FPCR.DN = 0).
#: Formats with a single NaN (fn, fnuz) return it on every platform; FP6/FP4 have none and
#: return +0.
NAN_POLICY = describe_nan_rules(PLATFORMS["default"])


def nan_propagation(fmt: Format, attrs, unit: Format | None = None) -> NanPropagation:
    """The propagation rule in force: the platform's in IEEE formats (its rules for the
    unit computing in ``unit``, default ``fmt``: a conversion runs on its source's unit);
    formats without a quiet bit or payload (fn, fnuz, FP6/FP4) keep theirs
    (SIGNALING_FIRST, their one NaN)."""
    if fmt.specials is not Specials.IEEE:
        return NanPropagation.SIGNALING_FIRST
    return _platform(attrs, fmt if unit is None else unit).nan_propagation


def resolve_nans(blocks, xs, hi, invalid, fmt, attrs, out):
    """Apply the platform's NaN rules to the NaN lanes of hi; return the invalid mask.

    A NaN result comes from a NaN operand or an invalid operation (inf - inf, 0 * inf,
    0/0, inf/inf, sqrt(-x)): float64 arithmetic makes NaN exactly there.  ``invalid``
    adds what float64 cannot see (fma(0, inf, qNaN)).  Signaling NaN operands are
    invalid too, whatever the propagation rule.  ``blocks`` are the operands' bit
    patterns, ``xs`` their float64 values, ``attrs`` the call's RoundingAttributes (its
    platform), ``out`` the result's bit patterns (its NaN lanes are overwritten).
    """
    nan_result = np.isnan(hi)
    if not nan_result.any():
        return np.zeros(hi.shape, dtype=bool)
    nan_ops = [np.isnan(x) for x in xs]
    any_nan = np.logical_or.reduce(nan_ops)
    invalid_op = nan_result & ~any_nan
    out[invalid_op] = default_nan(fmt, attrs)
    if invalid is not None:
        invalid_op |= invalid
    if not any_nan.any():  # invalid operations only (inf - inf, 0 * inf, ...)
        return invalid_op
    signaling = [is_signaling(b, fmt) & n for b, n in zip(blocks, nan_ops)]
    any_signaling = np.logical_or.reduce(signaling)
    rule = nan_propagation(fmt, attrs)
    if rule is NanPropagation.DEFAULT_NAN:
        out[any_nan] = default_nan(fmt, attrs)
        return invalid_op | any_signaling
    # the operand whose NaN propagates: the first NaN, or (signaling_first) the first
    # signaling one where there is one
    chosen = np.full(hi.shape, -1, dtype=np.int8)  # at most 3 operands
    for i in reversed(range(len(blocks))):
        chosen = np.where(nan_ops[i], i, chosen)
    if rule is NanPropagation.SIGNALING_FIRST:
        for i in reversed(range(len(blocks))):
            chosen = np.where(any_signaling & signaling[i], i, chosen)
    for i, b in enumerate(blocks):
        take = chosen == i
        if take.any():
            out[take] = quieted(b[take], fmt)
    return invalid_op | any_signaling


def propagated(b, fmt: Format, attrs):
    """The result of a one-operand operation on the NaN patterns ``b``: ``b`` quieted, or
    the default NaN where the platform always returns it."""
    if nan_propagation(fmt, attrs) is NanPropagation.DEFAULT_NAN:
        return np.full(np.shape(b), default_nan(fmt, attrs), dtype=fmt.storage_dtype)
    return quieted(b, fmt)


def default_nan(fmt: Format, attrs=None):
    """The pattern of an invalid operation's result on ``attrs.platform`` (None: the
    default platform); +0 in formats without NaN (FP6/FP4), the one NaN of fn/fnuz formats.

        s 11111 1000000000   "quiet":    only the quiet bit (Format.nan_bits)
        s 11111 1111111111   "all_ones": every trailing significand bit (NVIDIA)
                              (fp16 drawn; s the platform's default_nan_sign)
    """
    dt = fmt.storage_dtype.type
    if fmt.specials is not Specials.IEEE:
        return dt(fmt.nan_bits if fmt.has_nan else 0)
    platform = _platform(attrs, fmt)
    trailing = fmt.mantissa_mask if platform.default_nan_payload == "all_ones" else 1 << (fmt.mantissa_bits - 1)
    sign = fmt.sign_mask if platform.default_nan_sign else 0
    return dt(sign | fmt.exponent_mask | trailing)


def nan_mask(b, fmt: Format):
    """Which of the patterns ``b`` (an array of ``fmt.storage_dtype``, checked already)
    are NaNs: the bit tests alone, for the hot paths (codec.is_nan decomposes and checks
    its input first)."""
    dt = b.dtype.type
    if fmt.specials is Specials.IEEE:
        return (b & dt(fmt.sign_mask - 1)) > dt(fmt.exponent_mask)
    if fmt.specials is Specials.FN:
        return (b & dt(fmt.sign_mask - 1)) == dt(fmt.nan_bits)
    if fmt.specials is Specials.FNUZ:
        return b == dt(fmt.nan_bits)
    return np.zeros(np.shape(b), dtype=bool)


def is_signaling(b, fmt: Format):
    """Quiet bit clear (meaningful on the NaN lanes of IEEE formats only).

        s 11111 1mmmmmmmmm   quiet NaN    s 11111 0mmmmmmmmm   signaling NaN (m != 0)
                ^ the quiet bit: the mantissa's top bit               (fp16 drawn)
    """
    if fmt.specials is not Specials.IEEE:
        return np.zeros(np.shape(b), dtype=bool)
    return (b & b.dtype.type(1 << (fmt.mantissa_bits - 1))) == 0


def quieted(b, fmt: Format):
    """NaN patterns with the quiet bit set (the fn/fnuz NaN is already the result)."""
    if fmt.specials is Specials.IEEE:
        return b | b.dtype.type(1 << (fmt.mantissa_bits - 1))
    return b


def _platform(attrs, fmt: Format) -> Platform:
    """The rules of ``attrs.platform`` (None: the default platform) for ``fmt``'s unit."""
    return (PLATFORMS["default"] if attrs is None else attrs.platform).for_format(fmt)
