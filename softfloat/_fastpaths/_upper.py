"""float64 -> a 16-bit format (fp16, bf16) in every deterministic mode without flags, for
blocks in the target's normal range: the re-bias on the upper 32-bit word of each
float64; the lower word (its sticky bit) is read only where the upper word's cut bits
are all 0 (its ties, and its exact lanes in the directed modes and odd)."""

from __future__ import annotations

import numpy as np

from ..formats import Format
from ..rounding import Rounding
from . import _words
from ._words import upper_into

__all__ = ["PROBE_LANES", "UpperWordPlan", "applies", "upper_word"]


#: the modes whose increment depends on the sign (see upper_word)
_DIRECTED = (Rounding.UPWARD, Rounding.DOWNWARD)


def applies(fmt: Format, attrs, W: int) -> bool:
    """The condition of :func:`upper_word` (checked once per plan): float64 input, a
    16-bit target with 4 <= m <= 19 fraction bits, a little-endian machine (the narrowing
    views), no flags (checked per call), and a deterministic mode: nearest_even,
    nearest_away, toward_zero; odd where max_finite's pattern is odd (so that a value just
    above it, which odd rounds to max_finite, gets it by the lsb rule); upward and
    downward without saturation where the pattern just above max_finite is the infinity
    (so that a value just above max_finite, which these modes round away to infinity,
    gets it by the carry)."""
    if not (W == 64 and _words.LITTLE_ENDIAN and fmt.bits == 16 and fmt.storage_dtype == np.uint16
            and 4 <= fmt.mantissa_bits <= 19):
        return False
    r = attrs.rounding
    if r in (Rounding.NEAREST_EVEN, Rounding.NEAREST_AWAY, Rounding.TOWARD_ZERO):
        return True
    if r is Rounding.ODD:
        return bool(fmt.max_finite_bits & 1)
    return r in _DIRECTED and not attrs.saturate and fmt.infinity_bits == fmt.max_finite_bits + 1


class UpperWordPlan:
    """Constants of :func:`upper_word` as uint32 scalars (see there)."""

    def __init__(self, p, fmt: Format, attrs):  # p: the re-bias kernel's Plan
        m = fmt.mantissa_bits
        s = m - 4  # hw's kept fraction bits (top m of 20) move to bits 16 .. 15 + m
        rebias_h = p.rebias >> 32  # (1023 - bias) << 20
        r = attrs.rounding
        half = 1 << 15 if r in (Rounding.NEAREST_EVEN, Rounding.NEAREST_AWAY) else 0
        self.nearest_even = r is Rounding.NEAREST_EVEN
        self.rounding = r
        # upward: + 0xFFFF for +x (below), i.e. 0xFFFF in the constant and - 0xFFFF per
        # negative lane; downward: + 0xFFFF per negative lane
        if r is Rounding.UPWARD:
            half = 0xFFFF
        self.sign_step = np.uint32((-0xFFFF) % (1 << 32) if r is Rounding.UPWARD else 0xFFFF)
        self.low16 = np.uint32(0xFFFF)
        self.sign_shift = np.uint32(31)
        self.one16 = np.uint16(1)
        self.sign_shift16 = np.uint16(15)
        self.lower_mask = np.uint64(0xFFFFFFFF)
        # the lower 16 bits of t after A where c = 0 (upward's A holds 0xFFFF)
        self.tie_low = np.uint16(0xFFFF if r is Rounding.UPWARD else 0)
        self.lo = np.uint32(int(p.lo) >> 32)  # min_normal's upper word (its lower word is 0)
        self.hi = np.uint32(int(p.hi) >> 32)  # max_finite's upper word (lower word 0: m <= 19)
        self.mul = np.uint32((1 << s) - 1)
        self.add = np.uint32((half - (rebias_h << s)) % (1 << 32))
        self.abs_mask = np.uint32(0x7FFFFFFF)
        self.probe_abs = p.abs_mask
        self.probe_lo, self.probe_hi = p.lo, np.uint64((int(self.hi) << 32) | 0xFFFFFFFF)


#: a block with more than this share of lanes at a tie of the upper word (ties in the
#: data) fixes them in whole-block passes rather than by gathering
_TIE_SHARE = 1 / 64


#: this many lanes are looked at before the whole block (see upper_word)
PROBE_LANES = 2048


def upper_word(q: UpperWordPlan, blk, out, ws) -> bool:
    """float64 -> a 16-bit format in a deterministic mode (see :func:`applies`), no flags,
    when every lane is in the target's normal range; False (nothing written) otherwise.

    Each float64 is two 32-bit words; the upper one, hw, holds the sign, the 11-bit
    exponent and the top 20 fraction bits, the lower one (lw) the other 32:

        hw  | s | e (11) | f51 .. f32 |        lw  | f31 .. f0 |

    Condition (besides :func:`applies`): every lane has
    |hw| in [min_normal's upper word, max_finite's upper word] (both lower words are 0).
    So |x| lies in [min_normal, max_finite + 2**-52 ulp_f64 * 2**32), whose values round,
    in the nearest modes, toward zero and odd, to a normal number from min_normal to
    max_finite, and in upward / downward to one of those or (a value just above
    max_finite rounded away from zero) to the infinity, the pattern just above
    max_finite (:func:`applies`); no subnormal, flush or tininess question arises (and
    no saturation one: upward and downward are taken only without it), and the sign
    goes along.

    With m the target's fraction bits, s = m - 4 and R the re-bias (1023 - bias) << 20,
    the 16-bit result is the upper half of one 32-bit word (a narrowing copy, no shift):

        t = hw + (2**s - 1) * |hw| + A  =  sign << 31  +  (|hw| - R) << s  +  H   (mod 2**32)

    (|hw| - R) << s puts the target's magnitude pattern at bits 16 .. 30 with the
    20 - m cut bits of hw below, from bit s up (its top bits, dropped by the shift, are
    those of |hw| - R, which is below 2**(35 - m) in range); bits 0 .. s - 1 are 0.  The
    magnitude plus any H below 2**16 stays below 2**31 (at most max_finite's pattern + 1
    above bit 16, and max_finite's is below 0x7FFF where that + 1 is used), so the sign
    bit survives.  Per mode, with c = the lower 16 bits of t before H (hw's cut bits)
    and lw the lower word:

        nearest_away  H = 2**15 (the guard bit)      exact without lw: lw only decides
        toward_zero   H = 0                          between neighbours at c's tie
        nearest_even  as nearest_away, then the exact ties (c = 2**15 and lw = 0) with
                      an even kept lsb, which went to the odd neighbour above, lose 1
        upward        H = 0xFFFF for +x, 0 for -x   (carries iff c != 0: the magnitude
        downward      H = 0xFFFF for -x, 0 for +x    goes away from zero iff inexact)
        odd           H = 0, then the kept lsb |= (c != 0)   (:func:`._words.odd_sticky`)

    In upward, downward and odd the sticky bit is c != 0 or lw != 0, and lw matters only
    where c = 0 (the lower 16 bits of the truncated t are 0); those lanes with lw != 0
    then take the step the mode takes on an inexact lane: + 1 for +x (upward) or -x
    (downward) -- the carry from the all-ones fraction is the next binade, or the
    infinity above max_finite -- and lsb |= 1 (odd).  In nearest_even the lanes to look
    at are those with the lower 16 bits of t (after H) equal to 0.  Those lanes are few
    in data off ties (1 in 2**(20 - m)): they are gathered (upward's A holds 0xFFFF, so
there its c = 0 shows as 0xFFFF); many (ties or exact values in
    the data) are fixed in whole-block passes.
    """
    u = blk.view(np.uint64)
    n = u.size
    # the first lanes first: data with many lanes outside the range (zeros, subnormals,
    # overflows) is declined for a small share of the passes below (a strided sample
    # cost a tenth of the kernel: one cache line fetched per lane)
    probe = np.bitwise_and(u[:PROBE_LANES], q.probe_abs)
    if probe.max() > q.probe_hi or probe.min() < q.probe_lo:
        return False
    hw = ws.get("up_hw", np.uint32, n)
    upper_into(u, hw)
    mag = ws.get("up_mag", np.uint32, n)
    np.bitwise_and(hw, q.abs_mask, out=mag)
    if mag.max() > q.hi or mag.min() < q.lo:
        return False
    t = mag
    np.multiply(mag, q.mul, out=t)
    np.add(t, hw, out=t)
    np.add(t, q.add, out=t)
    r = q.rounding
    if r is Rounding.NEAREST_AWAY or r is Rounding.TOWARD_ZERO:
        upper_into(t, out)
        return True
    low = ws.get("up_low", np.uint16, n)
    np.copyto(low, t, casting="unsafe")  # the lower 16 bits of t (c + A's, before the sign step)
    if r in _DIRECTED:
        # H per lane: upward has 0xFFFF in A and takes it back from -x; downward adds it to -x
        step = ws.get("up_step", np.uint32, n)
        np.right_shift(hw, q.sign_shift, out=step)  # 1 for -x
        np.multiply(step, q.sign_step, out=step)
        np.add(t, step, out=t)
    elif r is Rounding.ODD:
        w = ws.get("up_step", np.uint32, n)
        np.bitwise_and(t, q.low16, out=w)
        np.add(w, q.low16, out=w)  # bit 16 set iff c != 0
        np.bitwise_or(t, w, out=t)
    upper_into(t, out)
    tie = np.equal(low, q.tie_low, out=ws.get("up_tie", np.bool_, n))
    idx = np.flatnonzero(tie)
    if idx.size == 0:
        return True
    if idx.size <= _TIE_SHARE * n:
        zero = (u[idx] & q.lower_mask) == 0
        o = out[idx]
        o += _lane_step(q, o, zero if q.nearest_even else ~zero)
        out[idx] = o
        return True
    lw = hw  # free again
    np.copyto(lw, u, casting="unsafe")  # the lower words
    if q.nearest_even:
        np.logical_and(tie, lw == 0, out=tie)  # exact ties
    else:
        np.logical_and(tie, lw != 0, out=tie)  # inexact by lw alone
    np.copyto(low, tie.view(np.uint8), casting="unsafe")
    _block_step(q, out, low)
    return True


def _lane_step(q, o, flagged):
    """The change to the gathered patterns ``o`` at lanes ``flagged`` (see upper_word):
    nearest_even -1 where the kept lsb is odd (an exact tie), upward +1 for +x, downward
    +1 for -x, odd +1 where the lsb is even (lsb |= 1), as uint16 addends."""
    f = flagged.astype(np.uint16)
    r = q.rounding
    if r is Rounding.NEAREST_EVEN:
        return -(f & (o & q.one16))  # uint16 wrap: subtracts 1
    if r is Rounding.UPWARD:
        return f & ((o >> q.sign_shift16) ^ q.one16)
    if r is Rounding.DOWNWARD:
        return f & (o >> q.sign_shift16)
    return f & ((o & q.one16) ^ q.one16)  # odd


def _block_step(q, out, f):
    """:func:`_lane_step` over the whole block: ``f`` (uint16 0/1, scratch) the flagged
    lanes."""
    r = q.rounding
    if r is Rounding.NEAREST_EVEN:
        np.bitwise_and(f, out, out=f)  # 1 where an exact tie went to the odd neighbour
        np.subtract(out, f, out=out)
        return
    if r is Rounding.ODD:
        np.bitwise_or(out, f, out=out)
        return
    sign = np.right_shift(out, q.sign_shift16)
    if r is Rounding.UPWARD:
        np.bitwise_xor(sign, q.one16, out=sign)
    np.bitwise_and(f, sign, out=f)
    np.add(out, f, out=out)
