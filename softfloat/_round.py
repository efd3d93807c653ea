"""The one rounding point: an exact magnitude in fixed point -> bit patterns and flags.

Every conversion, arithmetic operation and accumulation hands its exact result here,
through the block paths of :mod:`softfloat._encode` (the fast paths of
:mod:`softfloat._fastpaths` skip it only where they provably give the same bits and
flags), as

    magnitude pattern = v / 2**s + offset          (unbounded exponent)

where ``v`` is an unsigned integer, ``s`` the number of low bits of ``v`` to round away and
``offset`` an optional integer added after rounding.  "Magnitude pattern" means the
target's bit pattern without the sign, read as an integer: because exponent and fraction
sit side by side, a carry out of the fraction moves into the exponent by itself, so
rounding *is* integer rounding of ``v >> s``:

    v = [ exponent-and-leading-bits | kept fraction ][ G R ... S ]   (s bits below)
                                                      ^ guard (half) ... sticky

This module alone decides increments, overflow, underflow (with either tininess
choice), flush-to-zero and the sign; it knows nothing about where ``v`` came from.
It is pure: mode, tininess and random bits in; patterns and flag masks out.  For speed it
works in place on caller-owned block buffers (``v`` is consumed).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .formats import Format, Specials
from .attributes import RoundingAttributes
from .rounding import Rounding, Tininess

__all__ = ["Unrounded", "round_pack"]


class Unrounded(NamedTuple):
    """The exact values :func:`round_pack` rounds: ``(-1)**negative * (v / 2**s + offset)``
    as magnitude patterns (see the module docstring).

    negative : ndarray like ``v``
        1 where the exact value is negative (also for -0), else 0.
    v, s : 1-D ndarrays of uint32 or uint64 (same dtype, width W)
        Bit 0 of ``v`` may be a sticky bit (the OR of everything below it) wherever
        ``s >= 2`` -- ``s >= 3`` under tininess after, where the value can lie just below
        the smallest normal (see _tiny_after_rounding).  round_pack overwrites ``v``.
    offset : ndarray like ``v`` or None
        Added after rounding (the biased exponent, for callers whose ``v`` holds only the
        significand); must be 0 wherever the value is below the smallest normal.
    """

    negative: np.ndarray
    v: np.ndarray
    s: np.ndarray
    offset: np.ndarray | None = None


def _round_in_place(v, s, r, rounding: Rounding, negative, rand, tmp):
    """v <- v / 2**s rounded to an integer in ``rounding``.

    ``r`` = W - s (W = width of v's dtype), so that masks need no ``1 << s`` that could
    hit the undefined shift by W:  2**s - 1 = ALL >> r,  2**(s-1) - 1 = (ALL >> 1) >> r.
    ``negative`` holds 0/1 per element (for upward/downward), ``rand`` uniform W-bit
    integers (stochastic only; a W = 32 path takes the top half of the 64 random bits),
    ``tmp`` a scratch array like ``v``.
    Preconditions: 1 <= s <= W-1 and v < 2**(W-1), so no sum below wraps.
    """
    dt = v.dtype.type
    ones = dt(np.iinfo(v.dtype).max)
    if rounding is Rounding.TOWARD_ZERO:
        pass
    elif rounding is Rounding.NEAREST_EVEN:
        # v + lsb(kept) + (half - 1): a tie carries only when the kept part is odd
        np.right_shift(v, s, out=tmp)
        tmp &= dt(1)
        v += tmp
        np.right_shift(ones >> dt(1), r, out=tmp)
        v += tmp
    elif rounding is Rounding.NEAREST_AWAY:
        np.right_shift(ones >> dt(1), r, out=tmp)  # half - 1
        v += tmp
        v += dt(1)
    elif rounding in (Rounding.UPWARD, Rounding.DOWNWARD):
        # add all-ones below the cut (round away from zero) for +x upward / -x downward
        np.right_shift(ones, r, out=tmp)
        away = negative - dt(1) if rounding is Rounding.UPWARD else dt(0) - negative
        tmp &= away
        v += tmp
    elif rounding is Rounding.ODD:
        np.right_shift(ones, r, out=tmp)
        tmp &= v
        np.minimum(tmp, dt(1), out=tmp)  # 1 where any discarded bit is set
        v >>= s
        v |= tmp
        return
    elif rounding is Rounding.STOCHASTIC:
        # up with probability (v mod 2**s) / 2**s: add the TOP s of the W random bits, a
        # uniform fraction u aligned at the cut (up iff (v mod 2**s) / 2**s + u >= 1).
        # Aligned at the top, the decision does not depend on the path's word width or
        # cut position: a wider word (W = 64 for W = 32, a 62-bit significand for a
        # float64 pattern) only appends zero bits to both terms.
        np.right_shift(rand, r, out=tmp)
        v += tmp
    else:  # pragma: no cover - Rounding is closed
        raise AssertionError(rounding)
    v >>= s


def _overflow_is_infinite(rounding: Rounding, negative):
    """Per IEEE 754-2019 7.4: which overflowing results go to infinity (else max_finite).

    Nearest modes and stochastic -> infinity; toward_zero and odd -> max_finite; upward ->
    +inf / -max; downward -> +max / -inf.  Returns True/False for the whole array, or
    per element 1/0 in ``negative``'s dtype (``negative`` holds 0/1).
    """
    if rounding in (Rounding.NEAREST_EVEN, Rounding.NEAREST_AWAY, Rounding.STOCHASTIC):
        return True
    if rounding in (Rounding.TOWARD_ZERO, Rounding.ODD):
        return False
    return negative if rounding is Rounding.DOWNWARD else negative ^ negative.dtype.type(1)


def round_pack(fmt: Format, exact: Unrounded, attrs: RoundingAttributes, rand=None, want_flags=False,
               out=None, scratch=None):
    """Round the exact magnitudes ``v / 2**s + offset`` into ``fmt``; apply the sign.

    Parameters
    ----------
    fmt : Format
    exact : Unrounded
        ``(negative, v, s, offset)``: the values, as :class:`Unrounded` describes them.
        ``exact.v`` is overwritten.
    attrs : RoundingAttributes
    rand : ndarray like ``v`` or None
        Uniform random bits, needed for stochastic rounding only.
    want_flags : bool
        Also compute the overflow, underflow and inexact masks.
    out : ndarray of fmt.storage_dtype, optional
        Where to write the bit patterns.
    scratch : list of two ndarrays like ``v``, optional
        Work space, reused across blocks so that no block allocates (fresh pages cost
        more than the arithmetic).  Overwritten.

    Preconditions: s >= 1 and v < 2**(W-1), so no sum below wraps.  s <= W-1, except
    that nearest_even, nearest_away and toward_zero without flags and flushing accept any
    s: numpy defines unsigned shifts by W or more as 0, which rounds such a v (then far
    below the guard bit) to 0 exactly.  Callers may clamp s to W-1 instead wherever
    v < 2**(W-2): then every deterministic mode still rounds exactly, since all of v lies
    below the guard bit.

    Returns
    -------
    bits : ``out`` (or a new array of fmt.storage_dtype) with the sign applied
    flags : (overflow, underflow, inexact) boolean arrays, or None
    """
    negative, v, s, offset = exact
    rounding = attrs.rounding
    m = fmt.mantissa_bits
    dt = v.dtype.type
    W = v.dtype.itemsize * 8
    r, tmp = scratch if scratch is not None else (np.empty_like(v), np.empty_like(v))
    np.subtract(dt(W), s, out=r)
    if out is None:
        out = np.empty(v.shape, dtype=fmt.storage_dtype)

    # ---- the exact value's own facts, before v is rounded in place ----------------------
    inexact = tiny = None
    if want_flags or not attrs.subnormals:
        rest = np.right_shift(dt(np.iinfo(v.dtype).max), r)
        rest &= v
        inexact = rest != 0
        trunc = v >> s
        if offset is not None:
            trunc += offset
        tiny = trunc < dt(1 << m)  # exact value below the smallest normal (pattern 1 << m)
        if not tiny.any():
            tiny = None  # the common case: nothing can underflow, or be flushed
        v_orig = v.copy() if tiny is not None and attrs.tininess is Tininess.AFTER else None

    _round_in_place(v, s, r, rounding, negative, rand, tmp)
    t = v
    if offset is not None:
        t += offset

    # ---- underflow: tiny and inexact; flush-to-zero when subnormals are off -------------
    underflow = None
    if tiny is not None:
        if attrs.tininess is Tininess.AFTER:
            tiny = _tiny_after_rounding(fmt, exact._replace(v=v_orig), tiny, t, inexact, rand, rounding)
        if not attrs.subnormals:
            flush = tiny & ((trunc != 0) | inexact)  # a non-zero value that is tiny
            t[flush] = 0
            inexact = inexact | flush
        underflow = tiny & inexact
    elif want_flags:
        underflow = np.zeros(v.shape, dtype=bool)

    # ---- overflow: the rounded value (unbounded exponent) exceeds max_finite ------------
    maxpat = dt(fmt.max_finite_bits)
    overflow = None
    fnuz_nan = None
    if t.size and t.max() > maxpat:
        if want_flags or fmt.specials is Specials.FNUZ:
            overflow = t > maxpat
        # clamp to max_finite or to the pattern just above it, which is +inf for IEEE
        # formats and the NaN S.1111.111 for fn formats (OCP's non-saturating overflow)
        special = not (attrs.saturate or fmt.specials in (Specials.FINITE, Specials.FNUZ))
        to_special = _overflow_is_infinite(rounding, negative) if special else False
        if to_special is True or to_special is False:
            np.minimum(t, maxpat + dt(to_special), out=t)
        else:
            np.minimum(t, to_special + maxpat, out=t)
        if fmt.specials is Specials.FNUZ and not attrs.saturate:
            fnuz_nan = overflow & (_overflow_is_infinite(rounding, negative) == 1)
        if want_flags:
            inexact = inexact | overflow
    elif want_flags:
        overflow = np.zeros(t.shape, dtype=bool)

    # ---- sign, applied in the (narrow) storage dtype --------------------------------------
    np.copyto(out, t, casting="unsafe")
    sign = np.left_shift(negative, dt(fmt.bits - 1), out=np.empty_like(out) if scratch is None
                         else scratch[1].view(out.dtype)[: out.size], casting="unsafe")
    if fmt.specials is Specials.FNUZ:
        sign[out == 0] = 0  # no negative zero: -0 results become +0
        if fnuz_nan is not None:
            out[fnuz_nan] = 0
            sign[fnuz_nan] = fmt.sign_mask
    out |= sign
    if not want_flags:
        return out, None
    return out, (overflow, underflow, inexact)


def _tiny_after_rounding(fmt, exact: Unrounded, tiny_before, t, inexact, rand, rounding):
    """Refine tininess to IEEE's "after rounding" definition: ``exact`` the values before
    rounding (``v`` unrounded), ``t`` the rounded patterns (offset added).

    A value below the smallest normal is still tiny after rounding unless rounding it to
    the format's full precision, with an unbounded exponent, reaches the smallest normal.
    Only values whose subnormal rounding already produced the smallest normal can do that
    (rounding to more bits never goes further than rounding to fewer), so this re-rounds
    just those, one bit finer.  Stochastic rounding judges by the delivered result.

    Where s = 1 there is no bit to cut one bit finer: the exact value then has p
    significant bits, so it is its own rounding, below 2**emin: tiny (0.11..1 | 1, as the
    float32 -> e8m22 and float64 -> e11m51 paths give).  Where s = 2, bit 0 is read as the
    finer guard bit, so it must be a true bit there, not a sticky one (the module's
    precondition: a sticky bit 0 only where s >= 3 wherever tininess after can matter;
    with two bits, | 1 1 could be .1011.. (tiny) or .111 (not), undecidable).
    """
    negative, v, s, _ = exact
    m = fmt.mantissa_bits
    dt = v.dtype.type
    cand = tiny_before & (t == dt(1 << m)) & inexact
    if not cand.any():
        return tiny_before
    tiny = tiny_before.copy()
    idx = np.nonzero(cand)
    if rounding is Rounding.STOCHASTIC:
        tiny[idx] = False
        return tiny
    idx = tuple(i[s[idx] > 1] for i in idx)  # s = 1: exact at p bits, stays tiny
    fine = v[idx]
    s_fine = s[idx] - dt(1)
    W = v.dtype.itemsize * 8
    sub_rand = None if rand is None else rand[idx]
    _round_in_place(fine, s_fine, dt(W) - s_fine, rounding, negative[idx], sub_rand, np.empty_like(fine))
    tiny[idx] = fine < dt(1 << (m + 1))
    return tiny
