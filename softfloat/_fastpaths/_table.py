"""float32 / float64 -> narrow formats (fp16 from float32; FP8, FP6, FP4 from either) by one
table lookup: the result depends only on the input's top bits and the OR of the rest."""

from __future__ import annotations

import numpy as np

from .._flagmasks import FlagMasks
from ..formats import Format
from . import _upper

__all__ = ["TABLE_INDEX_MAX_BITS", "applies", "by_table", "lookup_values", "table_cut"]

#: the most index bits a table may have: float32 -> fp16 (m = 10) has 21, 4 MiB of bits
#: and 2 MiB of flags; FP8 from float32 has 14, from float64 17
TABLE_INDEX_MAX_BITS = 21


def applies(fmt: Format, src: Format) -> bool:
    """The condition of :func:`by_table` (checked once per plan): fmt's emin is at least
    the input's and the index (W - c bits, with c = ms - m - 2 >= 1) has at most
    TABLE_INDEX_MAX_BITS."""
    c = table_cut(fmt, src)
    return fmt.emin >= src.emin and c >= 1 and src.bits - c <= TABLE_INDEX_MAX_BITS


def table_cut(fmt: Format, src: Format) -> int:
    """c = ms - m - 2: the input bits below c + 1 enter the index only as their OR."""
    return src.mantissa_bits - fmt.mantissa_bits - 2


def by_table(p, tables, blk, want: bool, out, ws):
    """Round float patterns by one table lookup (formats whose index, below, fits
    TABLE_INDEX_MAX_BITS: fp16 from float32, FP8/FP6/FP4 from either).

    Why it is exact (condition: :func:`applies`): a deterministic rounding
    -- bits and flags, in every mode and option -- sees the input only through its sign,
    exponent, the fraction bits down to the guard bit and the OR of those below (the
    sticky bit).  For a target of m fraction bits the guard bit of a normal-range
    result is fraction bit ms - m - 1 of the input (ms fraction bits); below the
    target's normal range it moves up one bit per binade, never down, because the
    target's emin is at least the input's (input subnormals then lie in the target's
    subnormal range or below it).  NaN results keep the quiet bit and the top m payload
    bits.  So with c = ms - m - 2 the result is a function of

        | s | e ... e | f(ms-1) ... f(c+1) | f(c) or any lower bit |   (W - c bits)

    which is ``(u | ((u & (2**c - 1)) + 2**c - 1)) >> c``: the add carries into bit c
    exactly when a bit below it is set.  The tables hold the general path's results
    for one input per index, so the kernel returns exactly what the general path would.
    """
    if p.upper is not None and not want and _upper.upper_word(p.upper, blk, out, ws):
        return None, None  # float64 -> bf16 in normal range: a tenth faster (see upper_word)
    idx = _table_index(p, blk, ws)
    np.take(tables[0], idx, out=out, mode="clip")  # every index is in range: no bounds check
    return _table_flags(tables, idx, want, ws), None


def lookup_values(p, tables, values_table, blk, want: bool, values, ws):
    """Quantize by one lookup: ``values`` <- the decoded result of each input, from
    ``values_table`` (the bits table decoded once: :meth:`._table_cache.TablePlan.values`), with the
    same index as :func:`by_table` -- so the encoding and the decoding in one pass, exact
    for the same reason.  Returns the FlagMasks (None when not ``want``)."""
    idx = _table_index(p, blk, ws)
    np.take(values_table, idx, out=values, mode="clip")
    return _table_flags(tables, idx, want, ws)


def _table_index(p, blk, ws):
    """The table index of each input (see by_table), in the block workspace."""
    u = blk.view(p.dt)
    idx = ws.get("fast_index", p.dt, u.size)
    np.bitwise_and(u, p.below, out=idx)
    np.add(idx, p.below, out=idx)  # bit c set iff a bit below c is
    np.bitwise_or(idx, u, out=idx)
    np.right_shift(idx, p.c, out=idx)
    return idx.view(p.index_type)


def _table_flags(tables, idx, want, ws):
    """The FlagMasks of the indexed inputs (None for the flags no entry raises), or None."""
    if not want:
        return None
    _, flag_table, raises, _ = tables
    packed = np.take(flag_table, idx, out=ws.get("fast_flags", np.uint8, idx.size), mode="clip")
    return FlagMasks.unpacked(packed, raises)
