"""float32 / float64 -> any narrower format, every deterministic mode, for lanes inside
the target's normal range: a re-bias, an add and a shift; without flags, overflowing lanes
are clamped to IEEE's overflow result and lanes below the smallest normal are rounded by
numpy's rint/trunc/ceil/floor on the exactly scaled input."""

from __future__ import annotations

import numpy as np

from .._flagmasks import FlagMasks
from ..formats import Format
from ..rounding import Rounding
from . import _upper
from ._words import MAX_REST_SHARE, nearest_even_sum, odd_sticky, shift_into, spread_sign

__all__ = ["applies", "rebias", "round_half_away"]


def applies(fmt: Format, src: Format) -> bool:
    """The condition of :func:`rebias` (checked once per plan): the target's exponent
    range lies inside the input's and k = ms - m >= 2 bits are cut."""
    return src.mantissa_bits - fmt.mantissa_bits >= 2 and fmt.emin >= src.emin and fmt.emax <= src.emax


def rebias(p, blk, want: bool, out, ws):
    """Round by re-biasing the exponent, for lanes in the target's normal range; the
    other lanes go to the general path.

    Condition (:func:`applies`): the target's exponent range lies inside the
    input's and k >= 2 bits are cut.  With the block's patterns as W-bit words (ms
    fraction bits, bias B), R = (B - bias) << ms and a = |u| (the pattern without its
    sign), the lanes left here satisfy

        a in [min_normal, max_finite]      (as input patterns: [lo, hi])

    There every mode's result is a normal number from min_normal to max_finite (both
    are values of the format), so no subnormal, tininess, flush, overflow or saturation
    question arises, and the target's magnitude pattern is

        (a - R + increment) >> k           (odd: ((a | sticky into bit k) - R) >> k)

    with the increments of :func:`._truncate.truncating` (the re-bias subtracts a multiple of
    2**ms, so bit k of a is the kept lsb either way).  The sign goes to bit
    bits - 1 + k of the sum, above the magnitude (the sum is below 2**(bits - 1 + k) in
    range), so the final shift puts it in place.  Flags of these lanes: inexact = a cut
    bit is set, nothing else.

    The other lanes: without flags (and where the plan allows: subnormals kept, a
    format with -0, a mode with a float rounding function), finite lanes above
    max_finite take the same sum clamped by :func:`_clamp_overflow` (the sum of a
    finite input cannot wrap: |u| < 2**(W-1) and R > 0), and lanes below min_normal are
    rounded by :func:`_below_normal`; infinities and NaNs (and every out-of-range lane
    otherwise) go to the general path.
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
    rest = small = None
    clamp = False
    if t.max() > p.span:
        if p.in_bulk and not want:
            # zeros and subnormal results rounded in bulk below, overflows clamped: only
            # infinities and NaNs are left
            rest = mag >= p.src_inf
            small = mag < p.lo
            clamp = True
        else:
            rest = t > p.span
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
        _clamp_overflow(p, u, t, mag)
    # sign: bit W-1 of u -> bit (bits - 1 + k); mag is free again
    np.right_shift(u, p.sign_down, out=mag)
    np.bitwise_and(mag, p.sign_bit, out=mag)
    np.bitwise_or(t, mag, out=t)
    shift_into(t, p.k_, out)
    if small is not None and small.any():
        with np.errstate(all="ignore"):  # the other lanes may overflow the scaling or be NaN
            _below_normal(p, blk, small, out, ws)
    return fl, rest


def _clamp_overflow(p, u, t, c):
    """Clamp rounded sums above max_finite (finite input beyond the format's range) to
    IEEE 754's overflow result (section 7.4): the pattern just above max_finite -- the
    infinity of IEEE formats, the NaN S.1111.111 of fn formats (OCP's non-saturating
    overflow) -- where the mode overflows to infinity, else max_finite.  A sum at or
    below max_finite's (shifted) pattern is a value that rounded to at most max_finite
    and is left alone.  Upward and downward decide per sign; ``c`` is scratch."""
    if p.cap is not None:
        np.minimum(t, p.cap, out=t)
        return
    np.right_shift(u, p.sign_shift, out=c)  # 1 for -x
    np.left_shift(c, p.k_, out=c)
    if p.rounding is Rounding.UPWARD:  # +x -> infinity, -x -> -max_finite
        np.subtract(p.cap_special, c, out=c)
    else:  # downward: -x -> -infinity, +x -> max_finite
        np.add(c, p.cap_finite, out=c)
    np.minimum(t, c, out=t)


def _below_normal(p, blk, small, out, ws):
    """Overwrite the lanes below the target's smallest normal (zeros included) with
    their rounded patterns, computed in the input's own float type.

    Condition: |x| < min_normal, no flags wanted, subnormals kept, a format with -0
    (fnuz turns -0 into +0) and a mode with a float rounding function.  Then
    y = x * 2**(m - emin) is exact (a power-of-two scaling up, |y| < 2**m) and counts
    subnormal quanta; numpy's rint / trunc / ceil / floor round it to an integer N in
    nearest_even / toward_zero / upward / downward exactly, ties away is trunc and one
    up where the cut fraction is at least a half (:func:`round_half_away`), and
    round-to-odd is trunc with the lowest bit set where trunc changed y.  |N| is the target's magnitude
    pattern (2**m, where rounding reached min_normal, is min_normal's pattern), and
    the sign is x's (IEEE: a tiny negative value rounded to zero is -0).  The other
    lanes compute garbage here and keep what the caller wrote.
    """
    n = blk.size
    y = ws.get("fast_y", blk.dtype, n)
    np.multiply(blk, p.scale, out=y)
    odd = p.rounding is Rounding.ODD
    if odd:
        y2 = ws.get("fast_y2", blk.dtype, n)
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
    res = ws.get("fast_res", out.dtype, n)
    w = ws.get("fast_w", out.dtype, n)
    np.copyto(res, y, casting="unsafe")  # |N| <= 2**m: exact
    if odd:  # lowest bit |= "trunc cut something"
        np.copyto(w, cut.view(np.uint8), casting="unsafe")
        np.bitwise_or(res, w, out=res)
    negative = np.signbit(blk, out=ws.get("fast_neg", np.bool_, n))
    np.copyto(w, negative.view(np.uint8), casting="unsafe")
    np.left_shift(w, p.sign_to_top, out=w)
    np.bitwise_or(res, w, out=res)
    # out <- res where small: out ^ ((out ^ res) & -small), no masked loop (those are slow)
    np.copyto(w, small.view(np.uint8), casting="unsafe")
    np.negative(w, out=w)
    np.bitwise_xor(res, out, out=res)
    np.bitwise_and(res, w, out=res)
    np.bitwise_xor(out, res, out=out)


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
