"""float32 / float64 -> any narrower format, every deterministic mode, for lanes inside
the target's normal range and zeros: a re-bias, an add and a shift; without flags,
overflowing lanes are clamped to IEEE's overflow result and nonzero lanes below the
smallest normal are rounded by numpy's rint/trunc/ceil/floor on the exactly scaled input."""

from __future__ import annotations

import numpy as np

from .._flagmasks import FlagMasks
from ..formats import Format
from ..rounding import Rounding
from . import _upper
from ._words import MAX_REST_SHARE, nearest_even_sum, odd_sticky, shift_into, spread_sign

__all__ = ["GATHER_SHARE", "SHORT_BLOCK", "applies", "rebias", "round_half_away"]

#: a block whose nonzero lanes below min_normal are at most this share rounds them
#: gathered (a gather, the passes on those lanes, a scatter) rather than in whole-block
#: passes that keep them by a mask (about twenty passes over every lane)
GATHER_SHARE = 1 / 32

#: blocks shorter than this (quantize_small's, mostly) cost per numpy call rather than per
#: lane: they take the fewest calls (no gather of the lanes below min_normal; a clip by
#: two ufuncs, not np.clip, whose Python-level argument handling costs microseconds)
SHORT_BLOCK = 1 << 12


def applies(fmt: Format, src: Format) -> bool:
    """The condition of :func:`rebias` (checked once per plan): the target's exponent
    range lies inside the input's and k = ms - m >= 2 bits are cut."""
    return src.mantissa_bits - fmt.mantissa_bits >= 2 and fmt.emin >= src.emin and fmt.emax <= src.emax


def rebias(p, blk, want: bool, out, ws):
    """Round by re-biasing the exponent, for lanes in the target's normal range and
    zeros; the other lanes go to the general path.

    Condition (:func:`applies`): the target's exponent range lies inside the
    input's and k >= 2 bits are cut.  With the block's patterns as W-bit words (ms
    fraction bits, bias B), R = (B - bias) << ms and a = |u| (the pattern without its
    sign), the lanes left here satisfy

        a in [min_normal, max_finite]      (as input patterns: [lo, hi])
        or a = 0                           (+0 and -0; formats with a -0)

    In range every mode's result is a normal number from min_normal to max_finite (both
    are values of the format), so no subnormal, tininess, flush, overflow or saturation
    question arises, and the target's magnitude pattern is

        (a - R + increment) >> k           (odd: ((a | sticky into bit k) - R) >> k)

    with the increments of :func:`._truncate.truncating` (the re-bias subtracts a multiple of
    2**ms, so bit k of a is the kept lsb either way).  The sum is a - R + (at most
    2**k - 1) with a >= lo = R + 2**ms, so it lies in [2**ms, 2**(W-1)): read as a signed
    word it is positive.  The sign goes to bit bits - 1 + k of the sum, above the
    magnitude (the sum is below 2**(bits - 1 + k) in range), so the final shift puts it
    in place.  Flags of these lanes: inexact = a cut bit is set, nothing else.

    Zeros: a = 0 is exact in every mode (no increment, no flag: its cut bits are 0),
    and its result is the zero of its sign.  Its sum is 0 - R + (at most 2**k - 1),
    wrapped to 2**W - R + ...: negative as a signed word when R > 0 (R is a multiple
    of 2**ms > 2**k), and below 2**k when R = 0.  So the sums taken as signed words
    and raised to at least 0 -- which changes no in-range or overflowing sum (both
    positive, above) -- give 0 >> k = 0 for the zeros, and the sign pass adds their
    sign: +0 -> +0, -0 -> -0, bits for bits the general path's.  The range check finds
    them for free: a - lo wrapped is 2**W - lo exactly for a = 0 (``p.zero_t``), above
    every finite out-of-range lane's (those are below 2**(W-1) - lo) and below every
    nonzero lane under min_normal's (2**W - lo + a).  Only blocks with some lane out of
    [lo, hi] pay the one extra pass (the raise to 0, fused with the overflow clamp
    where there is one) and the comparisons that tell the zeros apart.

    The other lanes: without flags (and where the plan allows: subnormals kept, a
    format with -0, a mode with a float rounding function), finite lanes above
    max_finite take the same sum clamped by :func:`_clamp_overflow` (the sum of a
    finite input cannot wrap: |u| < 2**(W-1) and R > 0), and nonzero lanes below
    min_normal are rounded by :func:`_below_normal`; infinities and NaNs (and every
    out-of-range lane otherwise) go to the general path.
    """
    if p.upper is not None and not want and _upper.upper_word(p.upper, blk, out, ws):
        return None, None
    dt = p.dt
    u = blk.view(dt)
    n = u.size
    mag = ws.get("fast_mag", dt, n)
    t = ws.get("fast_t", dt, n)
    np.bitwise_and(u, p.abs_mask, out=mag)
    # outside [lo, hi] <=> a - lo (wrapping below lo) > hi - lo: one pass, one reduction
    np.subtract(mag, p.lo, out=t)
    rest = tiny = None
    clamp = floor = False
    top = t.max()
    if top > p.span:
        # zeros (t == zero_t) stay in the main passes: their sums are raised to 0 below
        floor = p.zeros_inline
        if p.in_bulk and not want:
            # nonzero lanes below min_normal (t above zero_t, so some iff top is) rounded
            # in bulk below, overflows clamped: only infinities and NaNs are left (some
            # iff the largest magnitude is one)
            if top > p.zero_t:
                tiny = np.greater(t, p.zero_t)
            if mag.max() >= p.src_inf:
                rest = mag >= p.src_inf
            clamp = True
        else:
            rest = t > p.span
            if floor:  # zeros are out of [lo, hi]: take them back
                np.logical_xor(rest, np.equal(t, p.zero_t), out=rest)
        if rest is not None:
            left = np.count_nonzero(rest)
            if left > MAX_REST_SHARE * n:
                return None
            if left == 0:
                rest = None
    fl = None
    if want:
        np.bitwise_and(mag, p.low, out=t)
        fl = FlagMasks(inexact=t != 0)
    rounding = p.rounding
    if rounding is Rounding.NEAREST_EVEN:
        nearest_even_sum(p, mag, t)
    elif rounding is Rounding.NEAREST_AWAY:
        np.add(mag, p.rna_add, out=t)
    elif rounding is Rounding.TOWARD_ZERO:
        np.add(mag, p.minus_r, out=t)
    elif rounding is Rounding.ODD:
        odd_sticky(p, mag, t)
        np.add(t, p.minus_r, out=t)
    else:  # upward, downward
        spread_sign(p, u, t, positive=rounding is Rounding.UPWARD)
        np.add(t, mag, out=t)
        np.add(t, p.minus_r, out=t)
    if clamp:
        _clamp_overflow(p, u, t, mag)  # and zeros' sums raised to 0
    elif floor:  # zeros' sums (negative as signed words) -> 0; no other lane changes
        ts = t.view(p.signed)
        np.maximum(ts, p.floor, out=ts)
    # sign: bit W-1 of u -> bit (bits - 1 + k); mag is free again
    np.right_shift(u, p.sign_down, out=mag)
    np.bitwise_and(mag, p.sign_bit, out=mag)
    np.bitwise_or(t, mag, out=t)
    shift_into(t, p.k_, out)
    if tiny is not None:
        with np.errstate(all="ignore"):  # the other lanes may overflow the scaling or be NaN
            _below_normal(p, blk, tiny, out, ws)
    return fl, rest


def _clamp_overflow(p, u, t, c):
    """Clamp rounded sums above max_finite (finite input beyond the format's range) to
    IEEE 754's overflow result (section 7.4): the pattern just above max_finite -- the
    infinity of IEEE formats, the NaN S.1111.111 of fn formats (OCP's non-saturating
    overflow) -- where the mode overflows to infinity, else max_finite.  A sum at or
    below max_finite's (shifted) pattern is a value that rounded to at most max_finite
    and is left alone.  Upward and downward decide per sign; ``c`` is scratch.

    In the same pass (a clip of the sums read as signed words, the caps being below
    2**(W-1)) the sums of zeros, negative there, are raised to 0 (see :func:`rebias`)."""
    ts = t.view(p.signed)
    if p.cap is not None:
        _clip(ts, p.floor, p.cap_signed)
        return
    np.right_shift(u, p.sign_shift, out=c)  # 1 for -x
    np.left_shift(c, p.k_, out=c)
    if p.rounding is Rounding.UPWARD:  # +x -> infinity, -x -> -max_finite
        np.subtract(p.cap_special, c, out=c)
    else:  # downward: -x -> -infinity, +x -> max_finite
        np.add(c, p.cap_finite, out=c)
    _clip(ts, p.floor, c.view(p.signed))




def _clip(ts, floor, cap):
    """ts <- min(max(ts, floor), cap), in place.  np.clip only with a scalar cap: with a
    per-lane cap (upward, downward) its loop took 1.2 ns/element against 0.5 for the two
    ufuncs (int64, numpy 2.4)."""
    if ts.size < SHORT_BLOCK or isinstance(cap, np.ndarray):  # np.clip's Python-level steps cost microseconds
        np.maximum(ts, floor, out=ts)
        np.minimum(ts, cap, out=ts)
    else:
        np.clip(ts, floor, cap, out=ts)


def _below_normal(p, blk, small, out, ws):
    """Overwrite the lanes ``small`` (nonzero, below the target's smallest normal: the
    kernel's zeros take its main passes) with their rounded patterns
    (:func:`_below_normal_patterns`): gathered where they are few, else in whole-block
    passes whose other lanes keep what the caller wrote."""
    count = np.count_nonzero(small)
    if count == 0:
        return
    if count <= GATHER_SHARE * blk.size and blk.size >= SHORT_BLOCK:
        idx = small.nonzero()[0]  # (1-D: the method skips flatnonzero's Python-level steps)
        out[idx] = _below_normal_patterns(p, blk[idx], out.dtype, ws)
        return
    res = _below_normal_patterns(p, blk, out.dtype, ws)
    # out <- res where small: out ^ ((out ^ res) & -small), no masked loop (those are slow)
    w = ws.get("fast_w", out.dtype, blk.size)
    np.copyto(w, small.view(np.uint8), casting="unsafe")
    np.negative(w, out=w)
    np.bitwise_xor(res, out, out=res)
    np.bitwise_and(res, w, out=res)
    np.bitwise_xor(out, res, out=out)


def _below_normal_patterns(p, x, dtype, ws):
    """The rounded patterns (``dtype`` words, in a scratch buffer) of the lanes of ``x``
    below the target's smallest normal, computed in the input's own float type.

    Condition: |x| < min_normal, no flags wanted, subnormals kept, a format with -0
    (fnuz turns -0 into +0) and a mode with a float rounding function.  Then
    y = x * 2**(m - emin) is exact (a power-of-two scaling up, |y| < 2**m) and counts
    subnormal quanta; numpy's rint / trunc / ceil / floor round it to an integer N in
    nearest_even / toward_zero / upward / downward exactly, ties away is trunc and one
    up where the cut fraction is at least a half (:func:`round_half_away`), and
    round-to-odd is trunc with the lowest bit set where trunc changed y.  |N| is the target's magnitude
    pattern (2**m, where rounding reached min_normal, is min_normal's pattern), and
    the sign is x's (IEEE: a tiny negative value rounded to zero is -0).  Other lanes
    (when ``x`` is a whole block) give garbage; the caller silences numpy's warnings.
    """
    n = x.size
    y = ws.get("fast_y", x.dtype, n)
    np.multiply(x, p.scale, out=y)
    odd = p.rounding is Rounding.ODD
    if odd:
        y2 = ws.get("fast_y2", x.dtype, n)
        np.trunc(y, out=y2)
        cut = y2 != y
        y = y2
    elif p.rounding is not Rounding.NEAREST_AWAY:
        p.small_rounding(y, out=y)
    np.abs(y, out=y)
    # other lanes may hold huge values or inf (NaN only for NaN input), whose casts take
    # a slow path: cap them first
    np.minimum(y, p.pattern_cap, out=y)
    if p.rounding is Rounding.NEAREST_AWAY:  # on |y|, capped: no inf - inf inside
        round_half_away(y, ws)
    res = ws.get("fast_res", dtype, n)
    w = ws.get("fast_w", dtype, n)
    np.copyto(res, y, casting="unsafe")  # |N| <= 2**m: exact
    if odd:  # lowest bit |= "trunc cut something"
        np.copyto(w, cut.view(np.uint8), casting="unsafe")
        np.bitwise_or(res, w, out=res)
    negative = np.signbit(x, out=ws.get("fast_neg", np.bool_, n))
    np.copyto(w, negative.view(np.uint8), casting="unsafe")
    np.left_shift(w, p.sign_to_top, out=w)
    np.bitwise_or(res, w, out=res)
    return res


def round_half_away(y, ws):
    """y <- y rounded to an integer, ties away from zero, in place, for finite y >= 0
    (numpy's rint breaks ties to even and has no such sibling).

    t = trunc(y) and the fraction y - t are exact (the fraction is y's own low bits), so
    "one up where the fraction is at least a half" rounds exactly: no y + 0.5, which
    rounds up the float just below a half.
    """
    t = ws.get("fast_y2", y.dtype, y.size)
    np.trunc(y, out=t)
    np.subtract(y, t, out=y)
    up = np.greater_equal(y, 0.5, out=ws.get("fast_up", np.bool_, y.size))
    np.add(t, up, out=y)
