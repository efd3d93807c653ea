"""The one rounding point: an exact magnitude in fixed point -> bit patterns and flags.

Every conversion (and, later, every arithmetic operation) hands its exact result here as

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
It is pure: mode, tininess and random bits in; patterns and flag masks out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .formats import Format, Specials
from .rounding import Rounding, Tininess

__all__ = ["Policy", "round_pack"]


@dataclass(frozen=True)
class Policy:
    """The rounding attributes one call applies (already validated)."""

    rounding: Rounding = Rounding.NEAREST_EVEN
    tininess: Tininess = Tininess.AFTER
    subnormals: bool = True
    saturate: bool = False


def _low_mask(s: np.ndarray) -> np.ndarray:
    """(1 << s) - 1, elementwise, for 0 <= s < width."""
    one = s.dtype.type(1)
    return np.left_shift(one, s) - one


def shift_round(v, s, rounding: Rounding, negative, rand):
    """Round ``v / 2**s`` to an integer in ``rounding``; return (t, discarded bits).

    Preconditions: 1 <= s <= W-1 and v < 2**(W-1) for W the width of v's dtype, so no
    sum below wraps; ``negative`` (bool) selects the direction for upward/downward;
    ``rand`` holds uniform W-bit integers for stochastic rounding (else None).
    """
    one = v.dtype.type(1)
    mask = _low_mask(s)
    if rounding is Rounding.TOWARD_ZERO:
        t = v >> s
    elif rounding is Rounding.NEAREST_EVEN:
        # v + (half - 1) + lsb(kept): a tie carries only when the kept part is odd
        t = v + (mask >> one)
        t += (v >> s) & one
        t >>= s
    elif rounding is Rounding.NEAREST_AWAY:
        t = v + (mask >> one) + one
        t >>= s
    elif rounding in (Rounding.UPWARD, Rounding.DOWNWARD):
        # away from zero (add all-ones below the cut) for +x upward / -x downward
        away = negative if rounding is Rounding.DOWNWARD else ~negative
        t = v + np.where(away, mask, v.dtype.type(0))
        t >>= s
    elif rounding is Rounding.ODD:
        t = v >> s
        t |= ((v & mask) != 0).astype(v.dtype)
    elif rounding is Rounding.STOCHASTIC:
        # up with probability (v mod 2**s) / 2**s: add s uniform random bits
        t = v + (rand & mask)
        t >>= s
    else:  # pragma: no cover - Rounding is closed
        raise AssertionError(rounding)
    return t, v & mask


def _overflow_is_infinite(rounding: Rounding, negative):
    """Per IEEE 754-2019 7.4: which overflowing results go to infinity (else max_finite).

    Nearest modes and stochastic -> infinity; toward_zero and odd -> max_finite; upward ->
    +inf / -max; downward -> +max / -inf.
    """
    if rounding in (Rounding.NEAREST_EVEN, Rounding.NEAREST_AWAY, Rounding.STOCHASTIC):
        return True
    if rounding in (Rounding.TOWARD_ZERO, Rounding.ODD):
        return False
    return negative if rounding is Rounding.DOWNWARD else ~negative


def round_pack(fmt: Format, negative, v, s, offset, policy: Policy, rand=None, want_flags=False):
    """Round the exact magnitudes ``v / 2**s + offset`` into ``fmt``; apply the sign.

    Parameters
    ----------
    fmt : Format
    negative : ndarray of bool
        Sign of each exact value (True for negative, also for -0).
    v, s : ndarray of uint32 or uint64 (same dtype, width W)
        See the module docstring.  Bit 0 of ``v`` may be a sticky bit (the OR of
        everything below it) wherever ``s >= 2``.
    offset : ndarray like ``v`` or None
        Added after rounding (the biased exponent, for callers whose ``v`` holds only the
        significand); must be 0 wherever the value is below the smallest normal.
    policy : Policy
    rand : ndarray like ``v`` or None
        Uniform random bits, needed for stochastic rounding only.
    want_flags : bool
        Also compute the overflow, underflow and inexact masks.

    Preconditions: 1 <= s <= W-1; v < 2**(W-1); where ``s`` had to be clamped to W-1,
    v < 2**(W-2) (then every deterministic mode still rounds exactly).

    Returns
    -------
    bits : ndarray of the dtype of ``v`` with the sign applied
    flags : (overflow, underflow, inexact) boolean arrays, or None
    """
    r = policy.rounding
    m = fmt.mantissa_bits
    dt = v.dtype.type
    t, rest = shift_round(v, s, r, negative, rand)
    if offset is not None:
        t += offset
    inexact = rest != 0 if (want_flags or not policy.subnormals) else None

    # ---- underflow: tiny and inexact; flush-to-zero when subnormals are off -------------
    underflow = None
    if want_flags or not policy.subnormals:
        trunc = v >> s
        if offset is not None:
            trunc += offset
        tiny = trunc < dt(1 << m)  # exact value below the smallest normal (pattern 1 << m)
        if policy.tininess is Tininess.AFTER:
            tiny = _tiny_after_rounding(fmt, tiny, t, v, s, inexact, negative, rand, r)
        if not policy.subnormals:
            flush = tiny & (v != 0)
            t[flush] = 0
            inexact = inexact | flush
        underflow = tiny & inexact

    # ---- overflow: the rounded value (unbounded exponent) exceeds max_finite ------------
    maxpat = dt(fmt.max_finite_bits)
    overflow = None
    fnuz_nan = None
    if t.size and t.max() > maxpat:
        overflow = t > maxpat
        t[overflow] = maxpat
        if not (policy.saturate or fmt.specials is Specials.FINITE):
            to_special = overflow & np.asarray(_overflow_is_infinite(r, negative))
            if fmt.specials is Specials.IEEE:
                t[to_special] = dt(fmt.infinity_bits)
            elif fmt.specials is Specials.FN:
                t[to_special] = dt(fmt.nan_bits)  # no infinity: NaN, as OCP's non-saturating mode
            else:
                fnuz_nan = to_special  # the NaN is the "-0" pattern, set with the sign below
        if want_flags:
            inexact = inexact | overflow
    elif want_flags:
        overflow = np.zeros(t.shape, dtype=bool)

    # ---- sign ----------------------------------------------------------------------------
    sign = negative.astype(v.dtype) << dt(fmt.bits - 1)
    if fmt.specials is Specials.FNUZ:
        sign[t == 0] = 0  # no negative zero: -0 results become +0
        if fnuz_nan is not None:
            t[fnuz_nan] = 0
            sign[fnuz_nan] = dt(fmt.sign_mask)
    t |= sign
    if not want_flags:
        return t, None
    return t, (overflow, underflow, inexact)


def _tiny_after_rounding(fmt, tiny_before, t, v, s, inexact, negative, rand, r):
    """Refine tininess to IEEE's "after rounding" definition.

    A value below the smallest normal is still tiny after rounding unless rounding it to
    the format's full precision, with an unbounded exponent, reaches the smallest normal.
    Only values whose subnormal rounding already produced the smallest normal can do that
    (rounding to more bits never goes further than rounding to fewer), so this re-rounds
    just those, one bit finer.  Stochastic rounding judges by the delivered result.
    """
    m = fmt.mantissa_bits
    dt = v.dtype.type
    cand = tiny_before & (t == dt(1 << m)) & inexact
    if not cand.any():
        return tiny_before
    tiny = tiny_before.copy()
    idx = np.nonzero(cand)
    if r is Rounding.STOCHASTIC:
        tiny[idx] = False
        return tiny
    sub_rand = None if rand is None else rand[idx]
    fine, _ = shift_round(v[idx], s[idx] - dt(1), r, negative[idx], sub_rand)
    tiny[idx] = fine < dt(1 << (m + 1))
    return tiny
