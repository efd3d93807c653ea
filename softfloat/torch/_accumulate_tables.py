"""Bit patterns of narrow formats as torch values on their own device, by table.

A format of at most 16 storage bits whose every value is a float32 value (fp16, bf16,
the FP8, FP6 and FP4 formats) is decoded by gathering from a table of its 2**bits
patterns, made once per (format, device) by :func:`softfloat.decode` itself, so the
values are the reference's by construction.  Beside the values the tables hold what the
accumulation models read per operand:

* ``pow2``: 2**e(x) in float64, e(x) = max(floor(log2 |x|), emin) (``emin`` the format's
  own, or a lower-precision path's such as fp16's for FP8 widened to fp16), 0 for zeros
  and non-finite values -- the fused adder's exponents as exact powers of two;
* ``last``: the exponent of x's last significand bit, max(e(x), format emin) minus the
  mantissa bits (int32), a large sentinel for zeros and non-finite values -- whether a
  product of two such values is exact in float32.

Also :func:`pow2` builds 2**n in float64 from its bit fields (exact on every device, no
``pow`` or ``ldexp`` kernel involved) and :func:`exponent` reads floor(log2 |x|) of
normal float64 values from theirs.
"""

from __future__ import annotations

import numpy as np
import torch

from ..codec import decode
from ..formats import fp32

__all__ = ["NO_LAST", "Tables", "exponent", "patterns", "pow2", "tables", "tabled"]

#: ``last`` of a zero or non-finite value: far above any live exponent, so a minimum over
#: a row that holds a live value is that value's
NO_LAST = 1 << 20

_CACHE: dict = {}


class Tables:
    """The decode tables of one format on one device (see the module docstring)."""

    def __init__(self, fmt, emin: int, device):
        bits = np.arange(1 << fmt.bits, dtype=np.int64).astype(fmt.storage_dtype)
        values = decode(bits, fmt, np.float64)  # exact: every value is a float32 value
        finite = np.isfinite(values) & (values != 0)
        _, e = np.frexp(np.where(finite, values, 1.0).astype(np.float64))
        e = np.maximum(e.astype(np.int64) - 1, emin)
        pow2_host = np.where(finite, np.ldexp(1.0, e), 0.0)
        last = np.where(finite, np.maximum(e, fmt.emin) - fmt.mantissa_bits, NO_LAST).astype(np.int32)
        with np.errstate(invalid="ignore"):  # NaN patterns: numpy warns on their cast
            self.values = torch.from_numpy(values.astype(np.float32)).to(device)
        self.values64 = torch.from_numpy(values).to(device)
        self.pow2 = torch.from_numpy(pow2_host).to(device)
        self.last = torch.from_numpy(last).to(device)


def tabled(fmt) -> bool:
    """Is ``fmt`` decoded here (at most 16 storage bits, every value a float32 value)?"""
    return fmt.bits <= 16 and fp32.holds(fmt)


def tables(fmt, device, emin: int | None = None) -> Tables:
    """The (cached) tables of ``fmt`` on ``device``, exponents clamped at ``emin``
    (default: the format's)."""
    emin = fmt.emin if emin is None else emin
    key = (fmt, emin, str(device))
    got = _CACHE.get(key)
    if got is None:
        got = _CACHE[key] = Tables(fmt, emin, device)
    return got


def patterns(t, fmt):
    """``t``'s bit patterns as int64 indices, or None where one does not fit ``fmt``
    (then the reference says what is wrong).  A signed tensor of the format's width
    (torch's int16 for 16-bit patterns, as ``bits_of`` gives them) is read as the same
    bits."""
    width = fmt.bits if fmt.bits in (8, 16, 32) else None
    signed_width = {torch.int8: 8, torch.int16: 16, torch.int32: 32}.get(t.dtype)
    idx = t.to(torch.int64)
    if signed_width is not None and signed_width == width:
        return idx & ((1 << width) - 1)
    if t.numel() and bool(((idx < 0) | (idx >= (1 << fmt.bits))).any()):
        return None
    return idx


def pow2(n):
    """2.0**n in float64 for int64 ``n`` within [-1022, 1023], from the bit fields."""
    return ((n.to(torch.int64) + 1023) << 52).view(torch.float64)


def exponent(x):
    """floor(log2 |x|) of normal float64 values (the biased exponent field less 1023;
    -1023 for zeros)."""
    return ((x.view(torch.int64) >> 52) & 0x7FF) - 1023
