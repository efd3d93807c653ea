"""float64 -> a 16-bit format (fp16, bf16) in nearest_even / nearest_away / toward_zero
without flags, for blocks in the target's normal range: the re-bias on the upper 32-bit
word of each float64; the lower word is read only at the upper word's ties."""

from __future__ import annotations

import numpy as np

from ..formats import Format
from ..rounding import Rounding
from . import _words
from ._words import upper_into

__all__ = ["PROBE_LANES", "UpperWordPlan", "applies", "upper_word"]


def applies(fmt: Format, attrs, W: int) -> bool:
    """The condition of :func:`upper_word` (checked once per plan): float64 input, a
    16-bit target with 4 <= m <= 19 fraction bits, nearest_even / nearest_away /
    toward_zero, a little-endian machine (the narrowing views), no flags (checked per call)."""
    return (W == 64 and _words.LITTLE_ENDIAN and fmt.bits == 16 and fmt.storage_dtype == np.uint16
            and 4 <= fmt.mantissa_bits <= 19 and attrs.rounding in (
                Rounding.NEAREST_EVEN, Rounding.NEAREST_AWAY, Rounding.TOWARD_ZERO))


class UpperWordPlan:
    """Constants of :func:`upper_word` as uint32 scalars (see there)."""

    def __init__(self, p, fmt: Format, attrs):  # p: the re-bias kernel's Plan
        m = fmt.mantissa_bits
        s = m - 4  # hw's kept fraction bits (top m of 20) move to bits 16 .. 15 + m
        rebias_h = p.rebias >> 32  # (1023 - bias) << 20
        half = 1 << 15 if attrs.rounding is not Rounding.TOWARD_ZERO else 0
        self.nearest_even = attrs.rounding is Rounding.NEAREST_EVEN
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
    """float64 -> a 16-bit format in nearest_even / nearest_away / toward_zero, no flags,
    when every lane is in the target's normal range; False (nothing written) otherwise.

    Each float64 is two 32-bit words; the upper one, hw, holds the sign, the 11-bit
    exponent and the top 20 fraction bits, the lower one (lw) the other 32:

        hw  | s | e (11) | f51 .. f32 |        lw  | f31 .. f0 |

    Condition (besides :func:`applies`): every lane has
    |hw| in [min_normal's upper word, max_finite's upper word] (both lower words are 0).
    So |x| lies in [min_normal, max_finite + 2**-52 ulp_f64 * 2**32), whose values round,
    in the three modes, to a normal number from min_normal to max_finite; no overflow,
    subnormal, flush or saturation question arises and the sign goes along.

    With m the target's fraction bits, s = m - 4 and R the re-bias (1023 - bias) << 20,
    the 16-bit result is the upper half of one 32-bit word (a narrowing copy, no shift):

        t = hw + (2**s - 1) * |hw| + A  =  sign << 31  +  (|hw| - R) << s  +  H   (mod 2**32)

    (|hw| - R) << s puts the target's magnitude pattern at bits 16 .. 30 with the
    20 - m cut bits of hw below, from bit s up (its top bits, dropped by the shift, are
    those of |hw| - R, which is below 2**(35 - m) in range); it stays below 2**31, so
    the sign bit survives.  H = 2**15 (the guard bit) gives nearest_away; H = 0
    toward_zero -- both exact without lw, since lw only decides between the neighbours
    at hw's own tie.  nearest_even differs from nearest_away only on exact ties with an
    even kept lsb: those lanes have hw's cut bits at exactly their tie (the lower 16
    bits of t are then 0) and lw = 0, and nearest_away gave the odd neighbour above, so
    they lose 1.  Lanes whose t has lower half 0 are few in data off ties (1 in
    2**(20 - m)): they are gathered; many (ties in the data) are fixed in whole-block passes.
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
    upper_into(t, out)
    if not q.nearest_even:
        return True
    low = ws.get("up_low", np.uint16, n)
    np.copyto(low, t, casting="unsafe")  # the lower 16 bits of t
    tie = np.equal(low, np.uint16(0), out=ws.get("up_tie", np.bool_, n))
    idx = np.flatnonzero(tie)
    if idx.size == 0:
        return True
    if idx.size <= _TIE_SHARE * n:
        exact = (u[idx] & np.uint64(0xFFFFFFFF)) == 0
        o = out[idx]
        o -= (exact & (o & np.uint16(1)).astype(bool)).astype(np.uint16)
        out[idx] = o
        return True
    lw = hw  # free again
    np.copyto(lw, u, casting="unsafe")  # the lower words
    np.logical_and(tie, lw == 0, out=tie)
    np.copyto(low, tie.view(np.uint8), casting="unsafe")
    np.bitwise_and(low, out, out=low)  # 1 where an exact tie went to the odd neighbour
    np.subtract(out, low, out=out)
    return True
