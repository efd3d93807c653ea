"""float32 -> e8mN (bf16, tf32, e8mN with IEEE specials), every deterministic mode: the
target's pattern is the top of float32's, so rounding is an integer add and a shift; and
float32 -> fp32 itself (nothing cut: the patterns as they are, :func:`as_is`)."""

from __future__ import annotations

import numpy as np

from .._flagmasks import FlagMasks
from ..formats import Format, fp32
from ..rounding import Rounding
from ._words import MAX_REST_SHARE, is_top_of_fp32, nearest_even_sum, odd_sticky, shift_into, spread_sign

__all__ = ["AsIsPlan", "applies", "applies_as_is", "as_is", "truncating"]


def applies(fmt: Format, src: Format) -> bool:
    """The condition of :func:`truncating` (checked once per plan): float32 input and a
    target whose pattern is the top of float32's (:func:`._words.is_top_of_fp32`)."""
    return src == fp32 and is_top_of_fp32(fmt)


def applies_as_is(fmt: Format, src: Format) -> bool:
    """The condition of :func:`as_is`: float32 input and fp32 (the same format) out."""
    return src == fp32 and fmt == fp32


class AsIsPlan:
    """The plan of :func:`as_is`: no constants but the attributes."""

    __slots__ = ("kernel", "attrs")

    def __init__(self, attrs):
        self.kernel, self.attrs = as_is, attrs


def as_is(p, blk, want: bool, out, ws):
    """float32 patterns -> fp32 patterns, every deterministic mode: the same patterns.

    Condition (:func:`applies_as_is`): every float32 value is an fp32 value, so no mode
    changes it and no flag is raised (an infinity stays infinite, with ``saturate`` too:
    it is no overflow; a subnormal is exact, so it is no underflow).  Left to the general
    path: NaN lanes (a signaling NaN is quieted with invalid) and, without
    ``subnormals``, the nonzero lanes below 2**-126 (flushed to zero with underflow and
    inexact):

        | s | e e e e e e e e | f22 ... f0 |   ->   the same 32 bits
    """
    u = blk.view(np.uint32)
    np.copyto(out, u)
    rest = None
    top = blk.max()  # max propagates NaN: one pass finds whether any lane is NaN
    if top != top:
        rest = np.isnan(blk)
    if not p.attrs.subnormals:
        mag = np.bitwise_and(u, np.uint32(0x7FFFFFFF), out=ws.get("fast_mag", np.uint32, u.size))
        mag -= np.uint32(1)  # 0 < |x| < 2**-126: mag - 1 wraps for zero, so one compare finds them
        tiny = mag < np.uint32(fp32.mantissa_mask)
        rest = tiny if rest is None else rest | tiny
    if rest is not None and not rest.any():
        rest = None
    return (FlagMasks() if want else None), rest


def truncating(p, blk, want: bool, out, ws):
    """float32 patterns -> e8mN patterns: add an increment below the cut, shift by k.

    Condition (:func:`applies`): the target's pattern is the top of
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
    u = blk.view(np.uint32)
    n = u.size
    t = ws.get("fast_t", np.uint32, n)
    rest = hi = None
    if want or p.careful:
        mag = ws.get("fast_mag", np.uint32, n)
        np.bitwise_and(u, p.abs_mask, out=mag)
        hi = mag.max()
        checks = []
        if hi >= fp32.infinity_bits:
            checks.append(mag >= np.uint32(fp32.infinity_bits))  # NaN and infinity: general path
        if p.attrs.saturate and hi > p.hi:
            checks.append(mag > p.hi)
        if want or not p.attrs.subnormals:
            # 0 < |x| < 2**-126: mag - 1 wraps for zero, so one compare finds them
            np.subtract(mag, p.one, out=t)
            tiny = t < np.uint32(fp32.mantissa_mask)
            if tiny.any():
                checks.append(tiny)
        for c in checks:
            rest = c if rest is None else rest | c
        if rest is not None and np.count_nonzero(rest) > MAX_REST_SHARE * n:
            return None
    else:
        top = blk.max()  # max propagates NaN: one pass finds whether any lane is NaN
        if top != top:
            rest = np.isnan(blk)
    if want:
        np.bitwise_and(u, p.low, out=t)
        inexact = t != 0
    _add_and_shift(p, u, t, out)
    if not want:
        return None, rest
    overflow = None
    if hi > p.hi:  # some lane may have rounded up to infinity
        mag_out = np.bitwise_and(out, p.mag_out, out=ws.get("fast_o", out.dtype, n))
        overflow = mag_out == p.inf_out
        if rest is not None:
            overflow &= ~rest
    return FlagMasks(overflow=overflow, inexact=inexact), rest


def _add_and_shift(p, u, t, out):
    """out <- (u + increment) >> k per :func:`truncating`'s table (u with its sign).

    Passes over the block for float32 -> bf16 without flags, after the one reduction
    that looks for NaNs (each pass is a numpy call over the block; the last one writes
    ``out`` by :func:`upper_into`, the shift included):

        toward_zero    1   the narrowing copy, straight from the input
        nearest_away   2   + H
        upward         4   sign spread, (2**k - 1) >> s, + u     (:func:`spread_sign`)
        downward       4   sign spread, s >> (W - k), + u
        odd            4   & (2**k - 1), + (2**k - 1), | u      (:func:`odd_sticky`)
        nearest_even   5   >> k, & 1, + u, + (H - 1)            (:func:`nearest_even_sum`)

    tf32 (a 32-bit output) takes the same passes, its last one a shift into ``out``.
    """
    rounding = p.rounding
    if rounding is Rounding.TOWARD_ZERO:
        shift_into(u, p.k_, out, t)
        return
    if rounding is Rounding.NEAREST_EVEN:
        nearest_even_sum(p, u, t)
    elif rounding is Rounding.NEAREST_AWAY:
        np.add(u, p.half, out=t)
    elif rounding is Rounding.UPWARD:
        spread_sign(p, u, t, positive=True)
        np.add(t, u, out=t)
    elif rounding is Rounding.DOWNWARD:
        spread_sign(p, u, t, positive=False)
        np.add(t, u, out=t)
    elif rounding is Rounding.ODD:
        odd_sticky(p, u, t)
    else:  # pragma: no cover - stochastic has no plan
        raise AssertionError(rounding)
    shift_into(t, p.k_, out)
