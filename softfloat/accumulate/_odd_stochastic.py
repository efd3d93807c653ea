"""Running sums of exact products (or terms) rounded stochastically into fp32, fp16 or
bf16 at every step, by float64 arithmetic and a rounding by bits, with the general path's bits, flags
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
9 (= s - c), so (V mod 2**s) + U_s = 2**9 * ((B mod 2**c) + U_c) + u, u < 2**9 the
next random bits, which reaches 2**s iff (B mod 2**c) + U_c reaches 2**c.  Where x != r, with Z = (B mod 2**c) + U_c - 2**c (r
rounds up iff Z >= 0) and E = V_x - V_r (|e| <= half an ulp of r: |E| <= 2**8 + 1,
the sticky bit included), x rounds up iff 2**9 * Z + u + E >= 0: the same for Z >= 1
and Z <= -2 -- unless r is itself on the accumulator's grid (B mod 2**c = 0) and x
lies just below it, in the interval under r (rounding is monotone and the grid points
are float64 values, so x and r share an interval otherwise).  There x goes back up to
r unless U_s < |E|, that is U_c = 0.  So a step is suspect where e != 0 and

    (B + U_c + 1) mod 2**c <= 1        (Z = 0, Z = -1, or B mod 2**c = U_c = 0),

(probability about 2**-(c - 1) on random bits: c = 29, 42, 45), or where its rounded
sum lies at or below the smallest normal and is not zero (the cut is finer there,
tininess and underflow are the general path's; 0 < |rounded| <= m whenever
0 < |r| <= m).  All steps run fast first; then, column by column, each suspect step in
turn is taken by the general arithmetic from the (right) sum before it, and where its
result is not the fast one, the column's later steps run fast again from it and are
looked at again (:meth:`StochasticSteps._settle`): every step is then either a fast
step proven right or the general path's own.  The whole tile is left to the general
path (None) where a rounded sum exceeds the largest finite value (an overflow: an
infinity).

Steps that are not suspect raise no underflow (their sums are not tiny) and no
overflow.  A zero r is the exact sum (a float64 sum that vanishes is exact), with the sign of the general path's float64 addition (+0
but for -0 + -0); its bits, all zero below the cut, are kept.  For every step,
whoever rounded it: inexact where the rounded sum is not r or r is not the exact sum
(the exactness test of one addition); swamped where s_k == s_{k-1} and p_k != 0, as
softfloat.accumulate._odd counts them; underflow from the general path's suspect steps.
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
    largest finite value, the general arithmetic's rounder for the steps it takes."""

    FORMATS = (fp32, fp16, bf16)

    def __init__(self, fmt, attrs, want: bool):
        self.fmt, self.attrs, self.want = fmt, attrs, want
        self.dtype = np.dtype(fmt.native_dtype or np.float32)
        cut = 52 - fmt.mantissa_bits  # float64 bits below the accumulator's last place
        self.shift = np.uint64(64 - cut)
        self.low = np.uint64((1 << cut) - 1)
        self.keep = ~self.low
        # 2|x| as bits (the sign shifted out) of the smallest normal and the largest finite value
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
        S = _scratch.buffer("sr-rows", np.float64, (K + 1) * n).reshape(K + 1, n)
        R = _scratch.buffer("sr-sums", np.float64, K * n).reshape(K, n)
        O = _scratch.buffer("sr-up", np.uint64, K * n).reshape(K, n)
        first = start is None
        S[0] = 0.0 if first else start  # (first: r - 0 == p and r - p == 0, the first term reads as exact)
        if first:
            R[0] = P[0]
        self._steps(S, R, O, P, D, first)
        W = _scratch.buffer("sr-bits", np.uint64, K * n).reshape(K, n)
        masks = [_scratch.buffer(name, np.bool_, K * n).reshape(K, n) for name in ("sr-tiny", "sr-hit")]
        suspect = self._suspects(S, R, O, P, W, masks)
        if suspect is None:
            return None
        underflow = np.zeros(n, dtype=bool) if self.want else None
        cols = np.flatnonzero(any_down(suspect))
        if cols.size:  # each column's suspect steps as the general path takes them
            found = self._settle(P[:, cols], D[:, cols], S[:, cols], R[:, cols], suspect[:, cols], first)
            if found is None:
                return None
            S[:, cols], R[:, cols], settled_underflow = found
            if self.want:
                underflow[cols] = settled_underflow
        inexact = swamped = None
        if self.want:
            inexact = any_down(S[1:] != R)  # the rounding moved r
            inexact |= inexact_columns(S[:-1], P, R, ~inexact)  # r is not the exact sum
            swamped = (steps_swamped(S[1:], P[1:]) if first else steps_swamped(S, P))
            if swamped is None:
                swamped = np.zeros(n, dtype=np.int64)
        return S[-1].astype(self.dtype), inexact, underflow, swamped

    def _steps(self, S, R, O, P, D, first, rows=None):
        """The fast steps in place: R[k] = fl64(S[k] + P[k]), O[k] = its bits plus U_c,
        S[k + 1] = O[k] with the bits below the cut cleared (``rows``: per column, the
        step after which it is taken; None: all of them)."""
        u64 = np.uint64
        RB, SB = R.view(u64), S.view(u64)
        with np.errstate(over="ignore", invalid="ignore"):  # (non-finite sums: declined afterwards)
            if rows is None:  # (every column: in place, no temporaries)
                np.right_shift(D, self.shift, out=O)  # U_c per step
                for k in range(R.shape[0]):
                    if k or not first:
                        np.add(S[k], P[k], out=R[k])
                    np.add(O[k], RB[k], out=O[k])
                    np.bitwise_and(O[k], self.keep, out=SB[k + 1])
                return
            for k in range(int(rows.min()) + 1, R.shape[0]):
                live = np.flatnonzero(rows < k)
                if k or not first:
                    R[k, live] = S[k, live] + P[k, live]  # r = fl64(s + p)
                O[k, live] = np.right_shift(D[k, live], self.shift) + RB[k, live]  # B + U_c: up iff it carries
                SB[k + 1, live] = O[k, live] & self.keep

    def _suspects(self, S, R, O, P, W, masks):
        """(K, n) mask of the steps the decision on r alone may take wrongly (the module
        docstring): a rounded sum with 0 < |s| <= the smallest normal, or r inexact with
        (B + U_c + 1) mod 2**c <= 1; None where a rounded sum overflows (or is a NaN).
        ``W`` (uint64) and ``masks`` (two boolean arrays), like R: work space."""
        u64 = np.uint64
        tiny, hit = masks
        np.left_shift(S[1:].view(u64), u64(1), out=W)  # 2|s|: the sign shifted out
        if W.max() > self.huge:
            return None
        # 0 < |s| <= m: 0 < 2|s| <= 2m, i.e. 2|s| - 1 < 2m (unsigned: 0 - 1 wraps to the largest)
        np.subtract(W, u64(1), out=W)
        tiny = np.less(W, self.tiny, out=tiny)
        np.add(O, u64(1), out=W)
        np.bitwise_and(W, self.low, out=W)
        np.less_equal(W, u64(1), out=hit)
        at = np.flatnonzero(hit)  # (few: about 2**-(c - 1) of the steps, or r on the grid)
        k, j = np.divmod(at, R.shape[1])
        r, a, t = R[k, j], S[k, j], P[k, j]
        inexact = ((r - a) != t) | ((r - t) != a)
        tiny[k[inexact], j[inexact]] = True
        return tiny

    def _settle(self, P, D, S, R, suspect, first):
        """The columns ``suspect`` marks (copies of theirs: P, D, S, R), each suspect step
        in turn as the general arithmetic takes it (softfloat.accumulate._ieee.Arithmetic.
        add: TwoSum, the rounding point); where its result is not the fast one, the fast
        steps after it again, and their suspects.  ``(S, R, underflow)``, or None where a
        sum overflows."""
        K, m = P.shape
        O = np.empty(R.shape, dtype=np.uint64)
        np.add(np.right_shift(D, self.shift), R.view(np.uint64), out=O)
        underflow = np.zeros(m, dtype=bool)
        done = np.full(m, -1)  # per column, the last step settled
        steps = np.arange(K)[:, None]
        while True:
            suspect &= steps > done
            js = np.flatnonzero(suspect.any(axis=0))
            if not js.size:
                return S, R, underflow
            ks = suspect[:, js].argmax(axis=0)  # each column's first suspect step left
            values, under = self._general_step(S[ks, js], P[ks, js], D[ks, js], first & (ks == 0))
            underflow[js] |= under
            changed = values.view(np.uint64) != S[ks + 1, js].view(np.uint64)
            S[ks + 1, js] = values
            done[js] = ks
            if changed.any():  # those columns' later steps again, from the general path's value
                rows = np.full(m, K)
                rows[js[changed]] = ks[changed]
                self._steps(S, R, O, P, D, first, rows)
                again = np.flatnonzero(rows < K)
                shape = (K, again.size)
                found = self._suspects(S[:, again], R[:, again], O[:, again], P[:, again], np.empty(shape, np.uint64),
                                       (np.empty(shape, bool), np.empty(shape, bool)))
                if found is None:
                    return None
                suspect[:, again] = found

    def _general_step(self, a, t, d, alone):
        """One step of each lane as the general arithmetic takes it: a + t (t alone where
        ``alone``: the first term) rounded by the rounding point with the draws ``d``:
        (values, underflow)."""
        values = np.empty(a.size)
        underflow = np.zeros(a.size, dtype=bool)
        for lanes, first in ((np.flatnonzero(alone), True), (np.flatnonzero(~alone), False)):
            if not lanes.size:
                continue
            x, y = a[lanes], t[lanes]
            if first:
                res, exact, xs = Exact(y.copy()), None, [y]
            else:
                res, exact, xs = add_kernel(fp64, self.attrs, x, y), add_exact, [x, y]
            values[lanes], fl = self.rounder(res, exact, xs, d[lanes])
            if fl is not None and fl.underflow is not None:
                underflow[lanes] = fl.underflow
        return values, underflow
