"""An exact pair hi + lo as the rounding point's significand: 62 bits and a sticky bit."""

from __future__ import annotations

import numpy as np

from .._encode import float64_significands
from .._workspace import Workspace
from ._kernel import scratch

__all__ = ["pair_significands"]


def pair_significands(hi, lo, ws=None):
    """hi + lo (|lo| <= ulp(hi)/2, hi finite) as (negative, 62-bit significand + sticky,
    e_top, near), ``near`` marking lanes whose low part lies within 2**-40 of the grid.

    With |hi| = sig * 2**(e_top - 61) (sig's leading bit at bit 61) the low part in the
    same units is L = lo * 2**(61 - e_top), |L| <= 2**8; then the magnitude is
    sig + floor(L) plus a sticky fraction:

        bit     63 62 61 60 ............. 9  8 ........ 0
        sig      0  0  1  f  f .......... f  0 ........ 0   hi's 53 bits, leading at bit 61
        + floor(L)                           l ........ l   signed, |L| <= 2**8
        | sticky                                        s   L's fraction != 0, into bit 0

    A carry moves the leading bit to 62: those lanes shift right by one, their dropped bit
    ORed into the sticky bit.  A negative L below a power of two drops the
    leading bit to 60: those lanes are redone one bit finer.  The results live in
    buffers of the block workspace ``ws`` (see scratch), to be used up within the block.
    """
    n = hi.size
    ws = Workspace(n) if ws is None else ws
    negative, sig, e_top = float64_significands(hi, ws)
    # lo measured along |hi|: lo with its sign flipped where hi is negative
    towards = np.left_shift(negative, np.uint64(63), out=ws.get("rp.towards", np.uint64, n))
    towards ^= lo.view(np.uint64)
    towards = towards.view(np.float64)
    k = np.subtract(61, e_top, out=ws.get("rp.k", np.int32, n), casting="unsafe")
    L = np.ldexp(towards, k, out=scratch(ws, "rp.L", hi))  # no overflowing 2**k factor
    # below even float64's range: only its sign is left
    lost = np.not_equal(towards, 0, out=ws.get("rp.lost", np.bool_, n))
    lost &= np.equal(L, 0, out=ws.get("rp.mask", np.bool_, n))
    F = np.rint(L, out=scratch(ws, "rp.F", hi))
    np.subtract(L, F, out=F)
    near = np.less(np.abs(F, out=F), 2.0**-40, out=ws.get("rp.near", np.bool_, n))
    np.floor(L, out=F)
    any_lost = lost.any()
    if any_lost:
        np.copyto(F, -1.0, where=lost & (towards < 0))
    total = ws.get("rp.total", np.int64, n)
    np.copyto(total, F, casting="unsafe")
    total = total.view(np.uint64)
    total += sig
    sticky = np.not_equal(L, F, out=ws.get("rp.sticky", np.bool_, n))
    sticky |= lost
    low = np.less(total, np.uint64(1 << 61), out=ws.get("rp.mask", np.bool_, n))
    if low.any():  # the lanes below a power of two, one bit finer
        idx = np.nonzero(low)
        L2 = L[idx] * 2
        F2 = np.floor(L2)
        if any_lost:
            F2[lost[idx] & (towards[idx] < 0)] = -1.0
        total[idx] = (sig[idx] << np.uint64(1)) + F2.astype(np.int64).view(np.uint64)
        sticky[idx] = (L2 != F2) | lost[idx]
        e_top[idx] -= 1
    high = np.greater_equal(total, np.uint64(1 << 62), out=ws.get("rp.mask", np.bool_, n))
    if high.any():
        idx = np.nonzero(high)
        sticky[idx] |= (total[idx] & np.uint64(1)) != 0
        total[idx] >>= np.uint64(1)
        e_top[idx] += 1
    total |= sticky
    return negative, total, e_top, near
