"""Bit patterns -> exact values, and the field/class decomposition behind the predicates."""

from __future__ import annotations

import numpy as np

from . import _fastpaths, _validate
from ._encode import UINT
from .formats import Specials, native_format

__all__ = ["decode_block", "decode_small", "decompose", "signaling_bit_clear"]


def decode_block(b, fmt, out=None, ws=None):
    """Exact values of a 1-D block of bit patterns (any unsigned dtype), as float64 or
    written into ``out`` (a float array that holds ``fmt`` exactly).

    Where ``out``'s pattern extends fmt's (bf16 -> float32, fp16 -> float16) this is a
    left shift (bf16 -> float64: a shift to float32 and a widening cast); formats of at most 16 bits take one lookup in a table that the
    arithmetic below filled once (see softfloat._fastpaths).
    """
    if out is None:
        out = np.empty(b.size, dtype=np.float64)
    if _fastpaths.decode_by_shift(b, fmt, out) or _fastpaths.decode_by_widening(b, fmt, out, ws):
        return out
    table = _fastpaths.decode_table(fmt, out.dtype, lambda pats, tab: _decode_arithmetic(pats, fmt, tab))
    if table is not None:
        np.take(table, b, out=out, mode="clip")  # b < 2**fmt.bits: "clip" only skips the check
        return out
    return _decode_arithmetic(b, fmt, out, ws)


def _decode_arithmetic(b, fmt, out, ws=None):
    """decode_block by arithmetic, for any format.

    The magnitude is moved into float64's field layout, which makes it the float64
    number 1.F * 2**(E - 1023), or 0.F * 2**-1022 when E == 0, and one exact multiply by
    2**(1023 - bias) scales both to the target's value -- subnormals included:

        |s|e e e e e|f f f f f f f f f f|  ->  |s|0..0 e e e e e|f f f f f f f f f f 0..0|

    NaN and infinity lanes then get float64's all-ones exponent ORed in, which keeps
    their sign and fraction (payload).
    """
    n = b.size
    m = fmt.mantissa_bits
    get = (lambda name, dt: ws.get(name, dt, n)) if ws is not None else (lambda name, dt: np.empty(n, dt))
    u = get("dec_u", np.uint64)
    np.copyto(u, b, casting="unsafe")
    mag = get("dec_mag", np.uint64)
    np.bitwise_and(u, np.uint64((1 << (fmt.bits - 1)) - 1), out=mag)
    np.right_shift(u, np.uint64(fmt.bits - 1), out=u)
    u <<= np.uint64(63)
    np.left_shift(mag, np.uint64(52 - m), out=mag)
    mag |= u
    values = mag.view(np.float64)
    if fmt.bias != 1023:
        values *= 2.0 ** (1023 - fmt.bias)
    special = _special_lanes(b, fmt)
    if special is None:
        pass
    elif fmt.specials is Specials.IEEE:
        np.bitwise_or(mag, np.uint64(0x7FF << 52), out=mag, where=special)  # keeps sign, payload
    elif fmt.specials is Specials.FN:  # S.1111.111: a canonical quiet NaN that keeps S
        np.bitwise_and(mag, np.uint64(1 << 63), out=mag, where=special)
        np.bitwise_or(mag, np.uint64(0x7FF8 << 48), out=mag, where=special)
    else:
        np.copyto(mag, np.uint64(0x7FF8 << 48), where=special)  # the fnuz NaN has no sign
    np.copyto(out, values, casting="same_kind")
    if special is not None and fmt.specials is Specials.IEEE and out.dtype != np.float64:
        _copy_specials_exactly(b, special, fmt, out)  # the cast above quiets signaling NaNs
    return out


def _copy_specials_exactly(b, special, fmt, out):
    """Write the NaN/infinity lanes of ``b`` into a float32/float16 ``out`` by their bits,
    keeping sign and payload (a float64 -> float32 cast would set the quiet bit)."""
    dst = native_format(out.dtype)
    b = np.asarray(b[special], dtype=np.uint64)
    sign = (b >> np.uint64(fmt.bits - 1)) << np.uint64(dst.bits - 1)
    frac = (b & np.uint64(fmt.mantissa_mask)) << np.uint64(dst.mantissa_bits - fmt.mantissa_bits)
    out.view(UINT[dst.bits])[special] = sign | np.uint64(dst.exponent_mask) | frac


def _special_lanes(b, fmt):
    """Boolean mask of the NaN/infinity patterns in a block, or None if there are none."""
    dt = b.dtype.type
    if fmt.specials is Specials.FINITE:
        return None
    if fmt.specials is Specials.FNUZ:
        special = b == dt(fmt.nan_bits)
    else:
        mag = b & dt((1 << (fmt.bits - 1)) - 1)
        if mag.max(initial=0) < (fmt.exponent_mask if fmt.specials is Specials.IEEE else fmt.nan_bits):
            return None
        special = mag >= dt(fmt.exponent_mask) if fmt.specials is Specials.IEEE else mag == dt(fmt.nan_bits)
    return special if special.any() else None


def decompose(bits, fmt):
    """(sign, exponent, fraction, is_nan, is_inf) boolean/int arrays for predicates."""
    arr = _validate.bit_patterns("bits", bits, fmt.bits).astype(np.uint64)
    m = fmt.mantissa_bits
    sign = (arr >> np.uint64(fmt.bits - 1)) != 0
    exp = (arr >> np.uint64(m)) & np.uint64((1 << fmt.exponent_bits) - 1)
    frac = arr & np.uint64(fmt.mantissa_mask)
    top = np.uint64((1 << fmt.exponent_bits) - 1)
    if fmt.specials is Specials.IEEE:
        nan = (exp == top) & (frac != 0)
        inf = (exp == top) & (frac == 0)
    elif fmt.specials is Specials.FN:
        nan = (exp == top) & (frac == np.uint64(fmt.mantissa_mask))
        inf = np.zeros(arr.shape, dtype=bool)
    elif fmt.specials is Specials.FNUZ:
        nan = arr == np.uint64(fmt.sign_mask)
        inf = np.zeros(arr.shape, dtype=bool)
    else:
        nan = inf = np.zeros(arr.shape, dtype=bool)
    if fmt.specials is Specials.FNUZ:
        sign = sign & ~nan
    return sign, exp, frac, nan, inf


def signaling_bit_clear(frac, fmt):
    if fmt.specials is not Specials.IEEE:
        return np.zeros(np.shape(frac), dtype=bool)
    return (frac & np.uint64(1 << (fmt.mantissa_bits - 1))) == 0


#: patterns up to which decode reads a format's value table directly (one lookup, without
#: the block streaming, whose per-call cost is the whole cost of a small array)
_DECODE_SMALL = 1 << 14


def decode_small(bits, fmt, dtype):
    """decode() of an int, a numpy unsigned scalar or a small unsigned array of patterns
    of a format of at most 16 bits: a lookup in the table of every value the general
    decoder fills once (softfloat._fastpaths.decode_table), so the same values, NaN
    payloads included; None for anything else (the general path checks and decodes)."""
    if type(bits) is int or isinstance(bits, np.unsignedinteger):
        pattern, array = int(bits), None
    elif type(bits) is np.ndarray and bits.dtype.kind == "u" and bits.size <= _DECODE_SMALL:
        pattern, array = None, bits
    else:
        return None
    table = _fastpaths.decode_table(fmt, dtype, lambda patterns, out: _quietly(decode_block, patterns, fmt, out))
    if table is None:
        return None
    if array is None:
        return table[pattern] if 0 <= pattern < table.size else None
    if array.ndim == 0:
        return table[int(array)] if int(array) < table.size else None
    if array.dtype.itemsize * 8 > fmt.bits and array.size and int(array.max()) >= table.size:
        return None
    return np.take(table, array)


def _quietly(fn, *args):
    """``fn(*args)`` without numpy's floating-point warnings, as the streamed blocks run."""
    with np.errstate(all="ignore"):
        return fn(*args)
