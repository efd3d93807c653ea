"""NaN results, chosen by a written policy: NaN operands and invalid operations never
reach the host FPU's NaN rules."""

from __future__ import annotations

import numpy as np

from ..formats import Format, Specials

__all__ = ["NAN_POLICY", "default_nan", "is_signaling", "quieted", "resolve_nans"]

#: How NaN results are chosen, written down as data (hardware differs here):
#: - an invalid operation returns the format's canonical quiet NaN, positive
#:   (``Format.nan_bits``), as RISC-V and AArch64 in default-NaN mode do;
#: - a NaN operand propagates: the first signaling NaN operand if there is one, else the
#:   first quiet NaN operand, quieted, keeping its sign and payload (AArch64 with
#:   FPCR.DN = 0).  x86 SSE differs: it takes the first NaN operand whatever its kind,
#:   and its default NaN is negative.
#: Formats with a single NaN (fn, fnuz) return it; FP6/FP4 have none and return +0.
NAN_POLICY = {"default_nan": "positive canonical quiet NaN", "propagation": "signaling first, then first operand"}


def resolve_nans(blocks, xs, hi, invalid, fmt, out):
    """Apply NAN_POLICY to the NaN lanes of hi; return the invalid mask.

    A NaN result comes from a NaN operand or an invalid operation (inf - inf, 0 * inf,
    0/0, inf/inf, sqrt(-x)): float64 arithmetic makes NaN exactly there.  ``invalid``
    adds what float64 cannot see (fma(0, inf, qNaN)).  Signaling NaN operands are
    invalid too.  ``blocks`` are the operands' bit patterns, ``xs`` their float64 values,
    ``out`` the result's bit patterns (its NaN lanes are overwritten).
    """
    nan_result = np.isnan(hi)
    if not nan_result.any():
        return np.zeros(hi.shape, dtype=bool)
    nan_ops = [np.isnan(x) for x in xs]
    any_nan = np.logical_or.reduce(nan_ops)
    invalid_op = nan_result & ~any_nan
    out[invalid_op] = default_nan(fmt)
    if invalid is not None:
        invalid_op |= invalid
    if not any_nan.any():  # invalid operations only (inf - inf, 0 * inf, ...)
        return invalid_op
    signaling = [is_signaling(b, fmt) & n for b, n in zip(blocks, nan_ops)]
    any_signaling = np.logical_or.reduce(signaling)
    # the operand whose NaN propagates: the first signaling one, else the first NaN
    chosen = np.full(hi.shape, -1, dtype=np.int8)  # at most 3 operands
    for i in reversed(range(len(blocks))):
        chosen = np.where(nan_ops[i], i, chosen)
    for i in reversed(range(len(blocks))):
        chosen = np.where(any_signaling & signaling[i], i, chosen)
    for i, b in enumerate(blocks):
        take = chosen == i
        if take.any():
            out[take] = quieted(b[take], fmt)
    return invalid_op | any_signaling


def default_nan(fmt: Format):
    """The pattern of an invalid operation's result: the canonical quiet NaN, or +0 in
    formats without NaN (FP6/FP4)."""
    return fmt.storage_dtype.type(fmt.nan_bits if fmt.has_nan else 0)


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
