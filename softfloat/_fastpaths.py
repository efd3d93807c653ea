"""Proven shortcuts for the commonest conversions, each exact under the condition beside it.

The general path (:mod:`softfloat._encode` feeding :func:`softfloat._round.round_pack`)
handles every format, mode and option.  The kernels here do the same work in a few
integer passes for the cases people run most, and only where the result is provably
the same bits (and flags):

* float32 -> a format with float32's 8-bit exponent (bf16, tf32, e8mN with IEEE
  specials), every deterministic mode: the target pattern is the top 1 + 8 + m bits of
  the float32 pattern, so rounding is an integer add and a shift (:func:`_truncating`);
* float32 / float64 -> any narrower format, every deterministic mode, for lanes inside
  the target's normal range: a re-bias, an add and a shift (:func:`_rebias`);
* decoding a format of at most 16 bits: one lookup in a table built once by the general
  decoder (:func:`decode_table`), or a left shift where the target's pattern is the top
  of the output float's pattern (:func:`decode_by_shift`).

An encoding kernel may leave some lanes to the general path (NaNs, lanes outside the
range its proof covers, rare options): it returns them as a mask and the caller
recomputes just those.  It may also decline a whole block (returns None).  Setting
:data:`ENABLED` to False sends every block down the general path (for tests).
"""

from __future__ import annotations

import sys

import numpy as np

from .formats import Format, Specials, fp32
from .rounding import Rounding

__all__ = ["ENABLED", "encode_block", "decode_by_shift", "decode_table"]

#: False sends every block down the general path (tests compare the two)
ENABLED = True

_LITTLE_ENDIAN = sys.byteorder == "little"

#: a block with more lanes than this share outside a kernel's proven range goes to the
#: general path whole (gathering many lanes costs more than it saves)
_MAX_REST_SHARE = 1 / 8

#: float64's upper 32-bit word with the OR of the lower word in bit 0, read as a layout
#: of 11 exponent bits and 20 fraction bits (as in softfloat._encode._fp64_top_words)
_TOP_EXPONENT_BITS, _TOP_MANTISSA_BITS, _TOP_BIAS = 11, 20, 1023


def encode_block(blk, fmt: Format, policy, want: bool, out, ws):
    """Encode a contiguous float block by a fast kernel, or return None (declined).

    Returns ``(flags, rest)``: the five flag masks as in ``_encode.encode_block`` (or
    None when not ``want``), and a boolean mask of lanes the caller must recompute on
    the general path (their bits and flags here are placeholders), or None.
    """
    if not ENABLED or policy.rounding is Rounding.STOCHASTIC or blk.size == 0:
        return None
    if blk.dtype == np.float32 and _is_top_of_fp32(fmt):
        return _truncating(blk.view(np.uint32), fmt, policy, want, out, ws)
    if blk.dtype in (np.float32, np.float64):
        return _rebias(blk, fmt, policy.rounding, want, out, ws)
    return None


# =====================================================================================
# float32 -> e8mN: the target pattern is the top of the float32 pattern
# =====================================================================================
def _is_top_of_fp32(fmt: Format) -> bool:
    """True when fmt's pattern is the top ``fmt.bits`` bits of float32's, value for value.

    Same exponent width and bias and the same IEEE special values (so the same
    subnormals, infinities and NaN encodings), fewer fraction bits:

        float32  | s | e e e e e e e e | f22 ... f(23-m) | f(22-m) ... f0 |
        fmt      | s | e e e e e e e e | f22 ... f(23-m) |                  (k = 23 - m cut)
    """
    return (fmt.exponent_bits == fp32.exponent_bits and fmt.bias == fp32.bias
            and fmt.specials is Specials.IEEE and fmt.mantissa_bits < fp32.mantissa_bits)


def _truncating(u, fmt: Format, policy, want: bool, out, ws):
    """float32 patterns -> e8mN patterns: add an increment below the cut, shift by k.

    Condition (checked by :func:`_is_top_of_fp32`): the target's pattern is the top of
    float32's.  Then for every finite input the target's magnitude pattern rounded in
    any mode is ``(|u| + increment) >> k``, a carry out of the fraction moving into the
    exponent (up to the infinity pattern, which is exactly IEEE's overflow result in the
    modes that overflow to infinity), with subnormals handled alike because both
    formats share emin.  Per mode, with H = 2**(k-1) (the guard bit):

        nearest_even  increment = H - 1 + (bit k of u)     a tie carries only when odd
        nearest_away  increment = H
        toward_zero   increment = 0
        upward        increment = 2**k - 1 for +x, 0 for -x
        downward      increment = 2**k - 1 for -x, 0 for +x
        odd           (u | ((u & (2**k - 1)) + 2**k - 1)) >> k   bit k |= any cut bit

    The sign bit rides along in bit 31: finite |u| <= 0x7F7FFFFF plus an increment
    below 2**k never carries into it.  Infinity patterns have no cut bits and come out
    as infinity in every mode.  Left to the general path: NaN lanes (a NaN can round to
    the infinity pattern or wrap), and where needed tiny lanes (0 < |x| < 2**-126: the
    underflow flag and flush-to-zero depend on tininess) and lanes above max_finite
    with ``saturate``.  Flags of the other lanes: inexact = some cut bit is set;
    overflow = a finite lane came out as the infinity pattern; no underflow (no lane
    left here is tiny: float32 values of 2**-126 and up round to 2**-126 or more).
    """
    n, k = u.size, fp32.mantissa_bits - fmt.mantissa_bits
    dt = np.uint32
    low = dt((1 << k) - 1)
    t = ws.get("fast_t", dt, n)
    rest = None
    fl = None
    max_finite_top = fmt.max_finite_bits << k  # largest float32 pattern that is a max_finite
    careful = want or policy.saturate or not policy.subnormals
    if careful:
        mag = ws.get("fast_mag", dt, n)
        np.bitwise_and(u, dt(0x7FFFFFFF), out=mag)
        hi = mag.max()
        checks = []
        if hi >= fp32.infinity_bits:
            checks.append(mag >= dt(fp32.infinity_bits))  # NaN and infinity: general path
        if policy.saturate and hi > max_finite_top:
            checks.append(mag > dt(max_finite_top))
        if want or not policy.subnormals:
            # 0 < |x| < 2**-126: mag - 1 wraps for zero, so one compare finds them
            np.subtract(mag, dt(1), out=t)
            tiny = t < dt(fp32.mantissa_mask)
            if tiny.any():
                checks.append(tiny)
        for c in checks:
            rest = c if rest is None else rest | c
        if rest is not None and np.count_nonzero(rest) > _MAX_REST_SHARE * n:
            return None
    else:
        x = u.view(np.float32)
        hi = None
        if np.isnan(x.max()):  # max propagates NaN: one pass finds whether any lane is NaN
            rest = np.isnan(x)
    if want:
        np.bitwise_and(u, low, out=t)
        inexact = t != 0
    _add_and_shift(u, k, policy.rounding, t, ws, out)
    if want:
        overflow = None
        if hi > max_finite_top:  # some lane may have rounded up to infinity
            mag_out = np.bitwise_and(out, out.dtype.type(fmt.sign_mask - 1), out=ws.get("fast_o", out.dtype, n))
            overflow = mag_out == out.dtype.type(fmt.infinity_bits)
            if rest is not None:
                overflow &= ~rest
        fl = [None, None, overflow, None, inexact]
    return fl, rest


def _add_and_shift(u, k, rounding, t, ws, out):
    """out <- (u + increment) >> k per :func:`_truncating`'s table, in uint32."""
    dt = np.uint32
    low = dt((1 << k) - 1)
    if rounding is Rounding.TOWARD_ZERO:
        np.right_shift(u, dt(k), out=out, casting="unsafe")
        return
    if rounding is Rounding.NEAREST_EVEN:
        np.right_shift(u, dt(k), out=t)
        np.bitwise_and(t, dt(1), out=t)
        np.add(t, u, out=t)
        np.add(t, dt((1 << (k - 1)) - 1), out=t)
    elif rounding is Rounding.NEAREST_AWAY:
        np.add(u, dt(1 << (k - 1)), out=t)
    elif rounding is Rounding.UPWARD:
        # (u >> 31) - 1 is all ones for +x and 0 for -x; >> (32 - k) leaves 2**k - 1 or 0
        np.right_shift(u, dt(31), out=t)
        np.subtract(t, dt(1), out=t)
        np.right_shift(t, dt(32 - k), out=t)
        np.add(t, u, out=t)
    elif rounding is Rounding.DOWNWARD:
        # an arithmetic shift spreads the sign: all ones for -x, 0 for +x
        np.right_shift(u.view(np.int32), np.int32(31), out=t.view(np.int32))
        np.right_shift(t, dt(32 - k), out=t)
        np.add(t, u, out=t)
    elif rounding is Rounding.ODD:
        # (u & low) + low carries into bit k exactly when a cut bit is set; it stays
        # below 2**(k+1), so ORing it into u sets bit k then and changes nothing above
        np.bitwise_and(u, low, out=t)
        np.add(t, low, out=t)
        np.bitwise_or(t, u, out=t)
    else:  # pragma: no cover - stochastic is declined before
        raise AssertionError(rounding)
    np.right_shift(t, dt(k), out=out, casting="unsafe")


# =====================================================================================
# float32 / float64 -> narrower formats, lanes in the target's normal range
# =====================================================================================
def _layout_of(dtype, fmt: Format):
    """(exponent_bits, mantissa_bits, bias) of the 32-bit words a float block is read as,
    or None where the re-bias kernel does not apply.

    The target's exponent range must lie inside the layout's, and at least two bits must
    be cut (k = layout fraction bits - m >= 2), so that for float64's top word the sticky
    bit 0 lies below the guard bit k - 1, where it keeps ties apart from non-ties and
    changes no other decision.  For float64 input m <= 17 keeps k >= 3 (as the general
    path's top-word reading).
    """
    if dtype == np.float32:
        e, ms, bias = fp32.exponent_bits, fp32.mantissa_bits, fp32.bias
    else:
        e, ms, bias = _TOP_EXPONENT_BITS, _TOP_MANTISSA_BITS, _TOP_BIAS
    if ms - fmt.mantissa_bits < 2 or fmt.mantissa_bits > 17 and dtype == np.float64:
        return None
    if fmt.emin < 1 - bias or fmt.emax > bias:
        return None
    return e, ms, bias


def _words(blk, ws):
    """float32 patterns as they are; float64 as its upper 32-bit word with bit 0 ORed with
    "the lower word is non-zero" (exact for rounding to <= 17 fraction bits)."""
    if blk.dtype == np.float32:
        return blk.view(np.uint32)
    halves = blk.view(np.uint32).reshape(-1, 2)
    lo, hi = (halves[:, 0], halves[:, 1]) if _LITTLE_ENDIAN else (halves[:, 1], halves[:, 0])
    words = ws.get("fast_words", np.uint32, blk.size)
    np.minimum(lo, np.uint32(1), out=words)
    words |= hi
    return words


def _rebias(blk, fmt: Format, rounding: Rounding, want: bool, out, ws):
    """Round by re-biasing the exponent, for lanes in the target's normal range; the
    other lanes go to the general path.

    With the block read as 32-bit words of a layout with ms fraction bits and bias B
    (float32, or float64's top word), k = ms - m bits cut, R = (B - bias) << ms and
    a = |u| (the layout pattern without its sign), the condition is

        a in [min_normal, max_finite]      (as layout patterns: [lo, hi])

    There every mode's result is a normal number from min_normal to max_finite (both
    are values of the format), so no subnormal, tininess, flush, overflow or saturation
    question arises, and the target's magnitude pattern is

        (a - R + increment) >> k           (odd: ((a | ((a & low) + low)) - R) >> k)

    with the increments of :func:`_truncating` (the re-bias subtracts a multiple of
    2**ms, so bit k of a is the kept lsb either way; low = 2**k - 1).  Zeros, subnormal
    results, overflows, infinities and NaNs are the rest, recomputed by the general
    path.  The sign goes to bit bits - 1 + k of the sum, above the magnitude, so the
    final shift puts it in place.  Flags of in-range lanes: inexact = a cut bit is set
    (float64's sticky bit 0 included), nothing else.
    """
    layout = _layout_of(blk.dtype, fmt)
    if layout is None:
        return None
    _, ms, bias = layout
    n, m = blk.size, fmt.mantissa_bits
    k = ms - m
    dt = np.uint32
    low = dt((1 << k) - 1)
    u = _words(blk, ws)
    rebias = (bias - fmt.bias) << ms
    lo = (fmt.emin + bias) << ms
    hi = (fmt.max_finite_bits << k) + rebias
    mag = ws.get("fast_mag", dt, n)
    np.bitwise_and(u, dt(0x7FFFFFFF), out=mag)
    t = ws.get("fast_t", dt, n)
    s = ws.get("fast_s", dt, n)
    rest = None
    if mag.min() < lo or mag.max() > hi:
        # outside [lo, hi] <=> a - lo (wrapping below lo) > hi - lo
        np.subtract(mag, dt(lo), out=t)
        rest = t > dt(hi - lo)
        if np.count_nonzero(rest) > _MAX_REST_SHARE * n:
            return None
    fl = None
    if want:
        np.bitwise_and(mag, low, out=t)
        fl = [None, None, None, None, t != 0]
    minus_r = dt((-rebias) % (1 << 32))  # adding it subtracts R (wraps only off range)
    if rounding is Rounding.NEAREST_EVEN:
        np.right_shift(mag, dt(k), out=t)
        np.bitwise_and(t, dt(1), out=t)
        np.add(t, mag, out=t)
        np.add(t, dt(((1 << (k - 1)) - 1 - rebias) % (1 << 32)), out=t)
    elif rounding is Rounding.NEAREST_AWAY:
        np.add(mag, dt(((1 << (k - 1)) - rebias) % (1 << 32)), out=t)
    elif rounding is Rounding.TOWARD_ZERO:
        np.add(mag, minus_r, out=t)
    elif rounding is Rounding.UPWARD:  # + (2**k - 1) for +x (see _add_and_shift)
        np.right_shift(u, dt(31), out=t)
        np.subtract(t, dt(1), out=t)
        np.right_shift(t, dt(32 - k), out=t)
        np.add(t, mag, out=t)
        np.add(t, minus_r, out=t)
    elif rounding is Rounding.DOWNWARD:  # + (2**k - 1) for -x
        np.right_shift(u.view(np.int32), np.int32(31), out=t.view(np.int32))
        np.right_shift(t, dt(32 - k), out=t)
        np.add(t, mag, out=t)
        np.add(t, minus_r, out=t)
    elif rounding is Rounding.ODD:
        np.bitwise_and(mag, low, out=t)
        np.add(t, low, out=t)
        np.bitwise_or(t, mag, out=t)
        np.add(t, minus_r, out=t)
    else:  # pragma: no cover - stochastic is declined before
        raise AssertionError(rounding)
    # sign: bit 31 of u -> bit (bits - 1 + k), free since t < 2**(bits - 1 + k) in range
    sign_at = fmt.bits - 1 + k
    np.right_shift(u, dt(31 - sign_at), out=s)
    np.bitwise_and(s, dt(1 << sign_at), out=s)
    np.bitwise_or(t, s, out=t)
    np.right_shift(t, dt(k), out=out, casting="unsafe")
    return fl, rest


# =====================================================================================
# decoding
# =====================================================================================
def decode_by_shift(b, fmt: Format, out) -> bool:
    """Write the values of patterns ``b`` into ``out`` by a left shift, if that is exact.

    Condition: ``out``'s float format has fmt's exponent width and bias and IEEE
    specials, and at least fmt's fraction bits.  Then fmt's pattern is the top of the
    output's pattern, value for value (NaN sign and payload bits included):

        fmt  | s | e..e | f..f |            ->  out  | s | e..e | f..f 0..0 |

    Returns False (nothing written) when the condition does not hold.
    """
    if not ENABLED or fmt.specials is not Specials.IEEE or out.dtype.kind != "f":
        return False
    bits_out = out.dtype.itemsize * 8
    e_out = {16: 5, 32: 8, 64: 11}[bits_out]
    m_out = bits_out - 1 - e_out
    if fmt.exponent_bits != e_out or fmt.bias != (1 << (e_out - 1)) - 1 or fmt.mantissa_bits > m_out:
        return False
    udt = np.dtype(f"u{bits_out // 8}")
    np.left_shift(b, udt.type(m_out - fmt.mantissa_bits), out=out.view(udt), dtype=udt, casting="unsafe")
    return True


#: (format, output dtype) -> read-only table of the 2**bits values, built once
_TABLES: dict = {}

#: formats of at most this many bits decode by table lookup (2**16 float64 = 512 KiB)
TABLE_MAX_BITS = 16


def decode_table(fmt: Format, dtype, build):
    """The 2**fmt.bits values of fmt as a read-only ``dtype`` array, or None for wider
    formats.  ``build(patterns, out)`` is the general decoder; it runs once per
    (format, dtype), so the table holds exactly its results (NaN payloads included)."""
    if not ENABLED or fmt.bits > TABLE_MAX_BITS:
        return None
    key = (fmt, np.dtype(dtype))
    table = _TABLES.get(key)
    if table is None:
        table = np.empty(1 << fmt.bits, dtype=dtype)
        build(np.arange(1 << fmt.bits, dtype=fmt.storage_dtype), table)
        table.flags.writeable = False
        _TABLES[key] = table  # a race builds the same table twice: harmless
    return table
