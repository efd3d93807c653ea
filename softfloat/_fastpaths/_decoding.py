"""Decoding shortcuts: a left shift where the format's pattern is the top of the output
float's, a widening cast by way of float32, and one lookup in a table of every value."""

from __future__ import annotations

import numpy as np

from ..formats import Format, Specials, fp32
from ._words import is_top_of_fp32

__all__ = ["TABLE_MAX_BITS", "by_shift", "by_widening", "table"]


def by_shift(b, fmt: Format, out) -> bool:
    """Write the values of patterns ``b`` into ``out`` by a left shift, if that is exact.

    Condition: ``out``'s float format has fmt's exponent width and bias and IEEE
    specials, and at least fmt's fraction bits.  Then fmt's pattern is the top of the
    output's pattern, value for value (NaN sign and payload bits included):

        fmt  | s | e..e | f..f |            ->  out  | s | e..e | f..f 0..0 |

    Returns False (nothing written) when the condition does not hold.
    """
    if fmt.specials is not Specials.IEEE or out.dtype.kind != "f":
        return False
    bits_out = out.dtype.itemsize * 8
    e_out = {16: 5, 32: 8, 64: 11}[bits_out]
    m_out = bits_out - 1 - e_out
    if fmt.exponent_bits != e_out or fmt.bias != (1 << (e_out - 1)) - 1 or fmt.mantissa_bits > m_out:
        return False
    udt = np.dtype(f"u{bits_out // 8}")
    words = out.view(udt)
    np.copyto(words, b, casting="unsafe")  # widen first: a casting shift is much slower
    np.left_shift(words, udt.type(m_out - fmt.mantissa_bits), out=words)
    return True


def by_widening(b, fmt: Format, out, ws=None) -> bool:
    """Write the values of e8mN patterns (bf16, tf32, fp32 itself) into a float64 ``out``
    by way of float32, if that is exact; return False (``out`` partly written) otherwise.

    Condition: fmt's pattern is the top of float32's (:func:`._words.is_top_of_fp32`) or is
    float32's, so :func:`by_shift` (or a view) gives the float32 values exactly,
    and no lane is a NaN: widening float32 -> float64 is exact for every other value,
    but quiets a signaling NaN (the general decoder keeps its bits).
    """
    if out.dtype != np.float64:
        return False
    if fmt == fp32 and b.dtype == np.uint32:
        f = b.view(np.float32)
    elif is_top_of_fp32(fmt):
        f = np.empty(b.size, dtype=np.float32) if ws is None else ws.get("dec_f32", np.float32, b.size)
        by_shift(b, fmt, f)
    else:
        return False
    top = f.max(initial=0.0)
    if top != top:  # max propagates NaN
        return False
    np.copyto(out, f)
    return True


#: (format, output dtype) -> read-only table of the 2**bits values, built once
TABLES: dict = {}

#: formats of at most this many bits decode by table lookup (2**16 float64 = 512 KiB)
TABLE_MAX_BITS = 16


def table(fmt: Format, dtype, build):
    """The 2**fmt.bits values of fmt as a read-only ``dtype`` array, or None for wider
    formats.  ``build(patterns, out)`` is the general decoder; it runs once per
    (format, dtype), so the table holds exactly its results (NaN payloads included)."""
    if fmt.bits > TABLE_MAX_BITS:
        return None
    key = (fmt, np.dtype(dtype))
    values = TABLES.get(key)
    if values is None:
        values = np.empty(1 << fmt.bits, dtype=dtype)
        build(np.arange(1 << fmt.bits, dtype=fmt.storage_dtype), values)
        values.flags.writeable = False
        TABLES[key] = values  # a race builds the same table twice: harmless
    return values
