"""Running sums of exact products rounded stochastically into fp32, fp16 or bf16 at every
step, by float64 arithmetic and a rounding by bits, with the general path's bits, flags
and draws.

The definition (softfloat.accumulate._ieee.Arithmetic.add, the rounding point's
STOCHASTIC branch): step k rounds the exact sum x = s + p_k, handed over as the TwoSum
pair (hi, lo) = (r, e), r = fl64(x).  softfloat.ops._significands.pair_significands
writes |x| as a 62-bit significand V, leading bit at bit 61 (one bit finer where x lies
below the power of two r), the bits below bit 0 ORed into bit 0 (sticky); the
accumulator's last place cuts off its low s = 61 - m bits (m: the format's fraction
bits; more below the smallest normal); with R the step's 64 random bits and
U_s = R >> (64 - s) (their top s bits), the result is V >> s, plus one iff
(V mod 2**s) + U_s >= 2**s.  The first term (no running sum yet) is the product rounded
alone: lo = 0.

The fast decision, on r alone: with B the float64 bits of r and c = 52 - m the bits of
r below the accumulator's last place (normal results), add U_c = R >> (64 - c) to B and
clear its low c bits: a carry moves into the exponent by itself.  That is the
definition's decision where x = r: r's bits below the cut are those of V shifted by
9 (= s - c), and an integer D + U_c * 2**9 + u (u < 2**9 the next random bits) reaches
2**s iff D + U_c reaches 2**c.  Where x != r, with Z = (B mod 2**c) + U_c - 2**c (r
rounds up iff Z >= 0) and E = V_x - V_r (|e| <= half an ulp of r: |E| <= 2**8 + 1,
the sticky bit included), x rounds up iff 2**9 * Z + u + E >= 0: the same for Z >= 1
and Z <= -2 -- unless r is itself on the accumulator's grid (B mod 2**c = 0) and x
lies just below it, in the interval under r (rounding is monotone and the grid points
are float64 values, so x and r share an interval otherwise).  There x goes back up to
r unless U_s < |E|, that is U_c = 0.  So a column is run again step by step by the
general arithmetic where some step has e != 0 and

    (B + U_c + 1) mod 2**c <= 1        (Z = 0, Z = -1, or B mod 2**c = U_c = 0),

or where some rounded sum lies at or below the smallest normal (a zero included: the
cut is finer there, tininess and underflow are the general path's; |rounded| <= m
whenever |r| <= m), and the whole tile is left to the general path (None) where a
rounded sum exceeds the largest finite value (an overflow: an infinity).  Such a step
has probability about 2**-(c - 1) per step on random bits (c = 29, 42, 45).

Flags of the other columns: no sum is tiny, none overflows; inexact where a step's
rounded sum is not r or r is not the exact sum (the exactness test of one addition);
swamped where s_k == s_{k-1} and p_k != 0, as softfloat.accumulate._odd counts them.
"""

from __future__ import annotations

import numpy as np

from .. import _scratch
from ..formats import bf16, fp16, fp32, fp64
from ..ops.kernels import Exact, add_exact, add_kernel
from ..rounding import Rounding
from ._ieee import Rounder
from ._operands import any_down, inexact_columns, steps_swamped

__all__ = ["StochasticSteps"]


class StochasticSteps:
    """What the steps need of an accumulator format -- fp32, fp16 or bf16 -- under
    stochastic rounding (:meth:`of`): the cut in float64 bits, the smallest normal and
    largest finite value, the general arithmetic's rounder for the columns run again."""

    FORMATS = (fp32, fp16, bf16)

    def __init__(self, fmt, attrs, want: bool):
        self.fmt, self.attrs, self.want = fmt, attrs, want
        self.dtype = np.dtype(fmt.native_dtype or np.float32)
        cut = 52 - fmt.mantissa_bits  # float64 bits below the accumulator's last place
        self.shift = np.uint64(64 - cut)
        self.low = np.uint64((1 << cut) - 1)
        self.keep = ~self.low
        # 2|x| as bits (the sign shifted out): at or below the smallest normal, past the largest finite value
        self.tiny = np.uint64(2) * np.float64(fmt.min_normal).view(np.uint64)
        self.huge = np.uint64(2) * np.float64(fmt.max_finite).view(np.uint64)
        self.rounder = Rounder(fmt, attrs, want)

    @classmethod
    def of(cls, fmt, attrs, want: bool):
        """The steps for ``fmt`` under ``attrs`` (stochastic, gradual underflow, no
        saturation), or None where they do not apply."""
        ok = (fmt in cls.FORMATS and attrs.rounding is Rounding.STOCHASTIC and attrs.subnormals
              and not attrs.saturate)
        return cls(fmt, attrs, want) if ok else None

    def running_sums(self, P, D, start=None):
        """The last running sums of the (K, n) exact float64 products ``P`` (columns: an
        output's terms in order, K >= 1) from ``start`` (values of the accumulator; None:
        the first product rounded alone), row k of the uint64 draws ``D`` rounding the
        step that takes P[k]: ``(last, inexact, underflow, swamped)`` (flags None unless
        asked for), or None where some sum is not finite (the general path's rules)."""
        K, n = P.shape
        u64 = np.uint64
        S = _scratch.buffer("sr-rows", np.float64, (K + 1) * n).reshape(K + 1, n)
        R = _scratch.buffer("sr-sums", np.float64, K * n).reshape(K, n)
        O = _scratch.buffer("sr-up", u64, K * n).reshape(K, n)
        SB, RB = S.view(u64), R.view(u64)
        np.right_shift(D, self.shift, out=O)  # U_c per step
        first = start is None
        with np.errstate(over="ignore", invalid="ignore"):  # (non-finite sums: declined below)
            if first:
                S[0] = 0.0  # (r - 0 == p and r - p == 0: the first term reads as exact below)
                R[0] = P[0]
            else:
                S[0] = start
            for k in range(K):
                if k or not first:
                    np.add(S[k], P[k], out=R[k])  # r = fl64(s + p)
                np.add(O[k], RB[k], out=O[k])  # B + U_c: up iff it carries past the cut
                np.bitwise_and(O[k], self.keep, out=SB[k + 1])
        # 2|s| of every rounded sum: an overflow (or a NaN) declines, a tiny one (or a zero) is run again
        W = _scratch.buffer("sr-bits", u64, K * n).reshape(K, n)
        np.left_shift(SB[1:], u64(1), out=W)
        if W.max() > self.huge:
            return None
        hit = _scratch.buffer("sr-hit", np.bool_, K * n).reshape(K, n)
        redo = any_down(np.less_equal(W, self.tiny, out=hit))
        np.add(O, u64(1), out=O)
        np.bitwise_and(O, self.low, out=O)
        np.less_equal(O, u64(1), out=hit)
        redo |= _inexact_hits(hit, R, S[:-1], P)
        inexact = underflow = swamped = None
        if self.want:
            inexact = any_down(S[1:] != R)  # the rounding moved r
            inexact |= inexact_columns(S[:-1], P, R, ~inexact)  # r is not the exact sum
            underflow = np.zeros(n, dtype=bool)
            swamped = (steps_swamped(S[1:], P[1:]) if first else steps_swamped(S, P))
            if swamped is None:
                swamped = np.zeros(n, dtype=np.int64)
        last = S[-1].astype(self.dtype)
        redo = np.flatnonzero(redo)
        if redo.size:  # these columns step by step, as the general path takes them
            found = self._general(P[:, redo], D[:, redo], None if first else start[redo])
            if found is None:
                return None
            last[redo] = found[0]
            if self.want:
                inexact[redo], underflow[redo], swamped[redo] = found[1:]
        return last, inexact, underflow, swamped

    def _general(self, P, D, start):
        """:meth:`running_sums` of a few columns, each step as the general arithmetic
        takes it (softfloat.accumulate._ieee.Arithmetic.add: TwoSum, the rounding point)."""
        K, n = P.shape
        s = None if start is None else np.asarray(start, dtype=np.float64)
        inexact, underflow = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        swamped = np.zeros(n, dtype=np.int64)
        for k in range(K):
            t = np.ascontiguousarray(P[k])
            if s is None:
                res, exact, xs = Exact(t.copy()), None, [t]
            else:
                res, exact, xs = add_kernel(fp64, self.attrs, s, t), add_exact, [s, t]
            values, fl = self.rounder(res, exact, xs, np.ascontiguousarray(D[k]))
            if fl is not None:
                inexact |= fl.inexact if fl.inexact is not None else False
                underflow |= fl.underflow if fl.underflow is not None else False
                if s is not None:
                    swamped += (t != 0) & (values == s)
            s = values
        if not np.isfinite(s).all():
            return None
        return s.astype(self.dtype), inexact, underflow, swamped


def _inexact_hits(hit, R, A, T):
    """Per column, whether some step r = a + t marked in ``hit`` is inexact (the
    exactness test of one float64 addition); gathered where few are marked."""
    at = np.flatnonzero(hit)
    if not at.size:
        return np.zeros(R.shape[1], dtype=bool)
    if 8 * at.size > R.size:  # many: whole rows
        return any_down(hit & (((R - A) != T) | ((R - T) != A)))
    found = np.zeros(R.shape[1], dtype=bool)
    k, j = np.divmod(at, R.shape[1])
    r, a, t = R[k, j], A[k, j], T[k, j]
    found[j[((r - a) != t) | ((r - t) != a)]] = True
    return found
