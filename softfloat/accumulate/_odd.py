"""Running sums of products that are not values of the accumulator -- fp32 x fp32 into
fp32, fp16 x fp16 into fp16, narrow products into bf16, bf16 products below fp32's range
-- by float64 arithmetic rounded to odd, then once to the accumulator.

Each step of the definition is s_k = RN(s_{k-1} + p_k), one rounding to nearest even of
the exact sum, where p_k is the exact product (a float64 value: the inputs' format is
narrow, softfloat.ops.kernels.is_narrow).  In float64, r = s + p is rounded and
e = (s + p) - r is exact (Knuth's TwoSum).  Where e != 0 and r's last significand bit is
even, r is moved one float64 step towards e: that is s + p rounded to odd (the
neighbour of s + p with an odd last bit), which carries the sticky information.
Rounding to odd in a format of at least p + 2 bits and then to nearest even in p bits is
the single rounding to nearest even (Boldo and Melquiond, "Emulation of FMA and
correctly-rounded sums: proved algorithms using rounding to odd", IEEE TC 2008): float64
has 53 >= 24 + 2 bits, and subnormal results round onto a grid coarser still.  numpy's
float64 -> float32/float16 casts round to nearest even, once (bf16: the codec's rounding).

Flags, as the general path (softfloat.accumulate._ieee) raises them for each fused
step: inexact where the rounded s_k is not s + p (e != 0, or the cast moved r); swamped
where s_k == s_{k-1} and p_k != 0 (a product of non-zero factors, exact in float64, is
non-zero); underflow where a step is inexact and its exact sum x = r + e is tiny,
|x| < t (:func:`tiny_below` gives t, a float64 value, by the tininess rule): as rounding
to float64 is monotone, |x| < t iff |r| < t, or |r| == t and e points towards zero.  A
non-finite sum is left to the general path (its overflow and invalid rules).  Zeros: s + p in float64 is an IEEE addition of the exact
values, so an exact zero sum has IEEE's sign; the first term is the product rounded
once (a -0 product stays -0), as the general path's first step.

The steps run first without TwoSum: r = s + p rounded to float64, then cast.  That is
the single rounding unless r is a midpoint of the accumulator's grid: rounding to
nearest is constant between consecutive midpoints, all of them float64 numbers, so if
one lay strictly between s + p and r it would be a float64 number nearer s + p than r;
one equal to s + p makes r exact, a true tie that rounding to nearest even takes right.
A midpoint of a normal result (the overflow threshold included) is a float64 whose bits
below the accumulator's last place read 100...0; a result below the smallest normal has
coarser midpoints and may underflow.  Columns where some step's r is such a midpoint and
not the exact sum, or lies in (0, smallest normal], are run again step by step with
TwoSum and rounding to odd (columns are independent); the others are right, and their
flags follow from the rows of sums: a step is exact where the second rounding kept r and
r - s == p and r - p == s (the exactness test of one float64 addition), none is tiny.
fp16 and bf16 sums are held in the wide dtype (float32 for fp16 products, float64) and
rounded by their bits (:class:`_Rounder`): numpy's float16 casts cost ten times a float32
addition, and numpy has no bf16.

The directed modes and ties away (:class:`Grid`) take the same steps: rounding to odd at
53 bits and then in any mode at p bits is the single rounding in that mode (Boldo and
Melquiond), and the fast steps' second rounding, now by bits in the mode, is right unless
r is a value of the format (directed: the exact sum may lie on either side of it) or a
midpoint (away) and not the exact sum, or r is tiny or past the largest finite value --
those columns run step by step.  An exact zero sum is -0 rounding downward (IEEE 754
6.3), where numpy's addition gives +0: those columns too.  Tininess after rounding
depends on the direction and the sign there (:func:`tiny_below`).
"""

from __future__ import annotations

import numpy as np

from .. import _fastpaths, _scratch
from .._decode import decode_block
from .._encode import encode_block
from .._workspace import Workspace
from ..attributes import RoundingAttributes
from ..formats import Format, bf16, fp16, fp32
from ..ops.kernels import round_to_odd, two_sum
from ..rounding import Rounding, Tininess
from ._operands import any_down, inexact_columns, steps_swamped

__all__ = ["Grid", "running_sums", "tiny_below"]


class Grid:
    """What the steps need of an accumulator format -- fp32, fp16 or bf16 -- and a
    deterministic rounding mode (:meth:`of`): the numpy dtype of its values (float32 for
    bf16, whose values are float32 values), its significand bits, smallest and largest
    normal, and its rounding of float64 values."""

    FORMATS = (fp32, fp16, bf16)
    MODES = (Rounding.NEAREST_EVEN, Rounding.NEAREST_AWAY, Rounding.TOWARD_ZERO, Rounding.UPWARD,
             Rounding.DOWNWARD)

    def __init__(self, fmt: Format, rounding: Rounding = Rounding.NEAREST_EVEN):
        self.fmt, self.rounding = fmt, rounding
        self.dtype = np.dtype(fmt.native_dtype or np.float32)
        self.mantissa_bits = fmt.mantissa_bits
        self.min_normal, self.max_finite = float(fmt.min_normal), float(fmt.max_finite)
        self.nearest = rounding in (Rounding.NEAREST_EVEN, Rounding.NEAREST_AWAY)
        # to nearest, a sum at or past the largest finite value plus half an ulp overflows;
        # in a directed mode one past the largest finite value overflows or (towards zero)
        # gives that value: its column runs step by step
        self.overflow = 2.0 ** (fmt.emax + 1) * (1 - 2.0 ** -(fmt.precision + 1)) if self.nearest \
            else self.max_finite
        # numpy's float64 -> float32 cast: fast, one rounding to nearest even
        self.cast = fmt == fp32 and rounding is Rounding.NEAREST_EVEN

    @classmethod
    def of(cls, fmt: Format, rounding: Rounding = Rounding.NEAREST_EVEN):
        """The grid of ``fmt`` in ``rounding``, or None for a format or mode the steps do
        not take."""
        return cls(fmt, rounding) if fmt in cls.FORMATS and rounding in cls.MODES else None

    def round(self, values):
        """Float64 ``values`` rounded once, as the dtype (numpy's cast to nearest even for
        fp32 and fp16; else the codec)."""
        if self.fmt.native_dtype is not None and self.rounding is Rounding.NEAREST_EVEN:
            return values.astype(self.dtype)
        values = np.ascontiguousarray(values, dtype=np.float64)
        n = values.size
        bits = np.empty(n, dtype=self.fmt.storage_dtype)
        encode_block(values.reshape(-1), self.fmt, RoundingAttributes(rounding=self.rounding), None, False, bits,
                     Workspace(n))
        return decode_block(bits, self.fmt, np.empty(n, dtype=self.dtype)).reshape(values.shape)


def running_sums(P, grid: Grid, flags: bool, tiny_below: tuple, start=None):
    """The last running sums of the (K, n) products ``P`` (each column an output's terms
    in order, K >= 1; exact float64 values, or float32 ones for an fp16 accumulator: see
    softfloat.accumulate._fast.rounded_products_dtype) in the accumulator ``grid``
    (values of its dtype), from ``start`` (values of the accumulator, one per column; None:
    the first term rounded), with,
    where ``flags``, the per-output inexact and underflow masks and swamped counts:
    ``(last, inexact, underflow, swamped)`` (None for the flags when not asked), or None
    where an output is not finite (the general path's rules).
    ``tiny_below``: the magnitudes below which a positive and a negative exact sum are tiny
    (:func:`tiny_below`)."""
    n = P.shape[1]
    wide = P.dtype
    if start is None and _past_largest(P[0], grid):
        return None
    terms = P if start is not None else P[1:]
    steps = terms.shape[0]
    # the running sums: in the dtype where numpy's cast is fast (float64 -> float32), else
    # held in the wide dtype and rounded by integer operations (numpy's float16 casts and
    # mixed additions cost ten times a float32 addition)
    cast = grid.cast
    S = _scratch.buffer("odd-rows", grid.dtype if cast else wide, (steps + 1) * n).reshape(steps + 1, n)
    R = _scratch.buffer("odd-sums", wide, steps * n).reshape(steps, n)
    with np.errstate(over="ignore", invalid="ignore"):  # (overflows and NaNs: declined below)
        # the first product rounded once (by numpy's cast), or the start
        S[0] = start if start is not None else P[0] if cast else grid.round(P[0])
        rounder = None if cast else _Rounder(wide, grid, n)
        for k in range(steps):
            np.add(S[k], terms[k], out=R[k])  # s + p rounded to the wide dtype
            if cast:
                S[k + 1] = R[k]  # and to the accumulator
            else:
                rounder(R[k], S[k + 1])
    if not np.isfinite(S[-1]).all():  # (non-finite values are absorbing: only the last row)
        return None
    redo = _suspect(R, grid, S[:-1], terms)
    if redo is None:  # an overflow (held in the wide dtype: not absorbing there)
        return None
    with np.errstate(over="ignore"):  # (a column past the format's range: run again below)
        last = S[-1].astype(grid.dtype)
    inexact = underflow = swamped = None
    if flags:
        inexact, underflow = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        if start is None:
            inexact |= S[0] != P[0]
            underflow |= inexact & _below(P[0], tiny_below)
        swamped = steps_swamped(S, terms) if steps else np.zeros(n, dtype=np.int64)
        if steps:
            inexact |= any_down(S[1:] != R)  # the second rounding moved r
            inexact |= inexact_columns(S[:-1], terms, R, ~inexact)
    redo = np.flatnonzero(redo)
    if redo.size:  # these columns step by step, exactly
        with np.errstate(over="ignore", invalid="ignore"):  # (as above)
            found = _stepwise(P[:, redo].astype(np.float64), grid, flags, tiny_below,
                              None if start is None else start[redo])
        if found is None:
            return None
        last[redo] = found[0]
        if flags:
            inexact[redo], underflow[redo], swamped[redo] = found[1:]
    return last, inexact, underflow, swamped


class _Rounder:
    """Rounds values of a wide float dtype at the last place of a narrower format by their
    bits, in the grid's mode: to nearest even, add half an ulp less one plus the last kept
    bit; to nearest away, half an ulp; towards +-inf, an ulp less one where the sign
    points that way; then clear the bits below (a carry moves into the exponent).  Right
    for results in the format's normal range; the others (below it, or past its largest
    finite value, which come out as finite values of the wide dtype) are told apart
    afterwards (:func:`_suspect`)."""

    def __init__(self, wide, grid: Grid, n: int):
        self.uint = np.dtype(f"u{np.dtype(wide).itemsize}")
        below = np.finfo(wide).nmant - grid.mantissa_bits
        u = self.uint.type
        self.mode = grid.rounding
        self.k_, self.one, self.sign = u(below), u(1), u(8 * self.uint.itemsize - 1)  # (k_, one, rne_add:
        self.half, self.low = u(1 << (below - 1)), u((1 << below) - 1)  # nearest_even_sum's plan)
        self.rne_add = self.half - self.one
        self.keep = ~self.low
        self.t = np.empty(n, dtype=self.uint)

    def __call__(self, r, out):
        u, o, t, mode = r.view(self.uint), out.view(self.uint), self.t, self.mode
        if mode is Rounding.NEAREST_EVEN:  # (the encoders' pass: plus the last kept bit, so ties go even)
            _fastpaths.nearest_even_sum(self, u, o)
        elif mode is Rounding.NEAREST_AWAY:
            np.add(u, self.half, out=o)
        elif mode is Rounding.TOWARD_ZERO:
            np.copyto(o, u)
        else:  # up for positive values towards +inf, for negative ones towards -inf
            np.right_shift(u, self.sign, out=t)  # 1 for negative values
            if mode is Rounding.UPWARD:
                np.bitwise_xor(t, self.one, out=t)
            np.multiply(t, self.low, out=t)
            np.add(u, t, out=o)
        np.bitwise_and(o, self.keep, out=o)


def _suspect(R, grid: Grid, A, T):
    """Per column of the sums ``R`` (float64 or float32) of the steps r = a + t (rows of
    ``A`` and ``T``), whether some step's r may round otherwise than its exact sum or be
    tiny: an inexact sum that is a midpoint of a normal result (to nearest; an exact one
    is a tie the rounding takes right) or a value of the format (directed modes: the sum
    may lie on either side of it), or 0 < |r| <= the smallest normal (see the module
    docstring), or (directed modes) |r| is past the largest finite value; None where some
    |r| overflows to nearest (held in a wider dtype: not an infinity there)."""
    wide = R.dtype
    uint = np.dtype(f"u{wide.itemsize}").type
    if not R.size:
        return np.zeros(R.shape[1], dtype=bool)
    below = np.finfo(wide).nmant - grid.mantissa_bits  # bits below the accumulator's last place
    U = R.view(uint)
    W = _scratch.buffer("odd-bits", uint, R.size).reshape(R.shape)
    hit = _scratch.buffer("odd-hit", np.bool_, R.size).reshape(R.shape)
    np.bitwise_and(U, uint((1 << below) - 1), out=W)
    np.equal(W, uint(1 << (below - 1)) if grid.nearest else uint(0), out=hit)
    found = np.zeros(R.shape[1], dtype=bool)
    at = np.flatnonzero(hit)  # (to nearest, few: an exact tie, or float64 rounded onto a midpoint)
    if 8 * at.size > R.size:  # many (directed modes: exact sums on the grid): whole rows
        found = any_down(hit & (((R - A) != T) | ((R - T) != A)))  # inexact (the test of one addition)
    elif at.size:  # (a gather costs several times the arithmetic)
        k, j = np.divmod(at, R.shape[1])
        r, a, t = R[k, j], A[k, j], T[k, j]
        found[j[((r - a) != t) | ((r - t) != a)]] = True
    if grid.rounding is Rounding.DOWNWARD:  # an exact zero sum is -0 there (but +0 + +0): numpy's is +0
        found |= any_down(R == 0)
    np.left_shift(U, uint(1), out=W)  # 2|r|: the sign shifted out
    limit = uint(2) * wide.type(grid.overflow).view(uint)
    if grid.nearest and not grid.cast and W.max() >= limit:
        return None  # (fp32 from float64 to nearest even: an overflow is an infinity, seen already)
    if not grid.nearest:  # past the largest finite value: an overflow, or (towards zero) that value
        found |= any_down(np.greater(W, limit, out=hit))
    # 0 < |r| <= m: 0 < 2|r| <= 2m, i.e. 2|r| - 1 < 2m (unsigned: 0 - 1 wraps to the largest)
    np.subtract(W, uint(1), out=W)
    np.less(W, uint(2) * wide.type(grid.min_normal).view(uint), out=hit)
    return found | any_down(hit)


def _past_largest(x, grid: Grid) -> bool:
    """In a directed mode, is some exact value ``x`` past the largest finite value? Its
    rounding may be that value, an overflow without an infinity: the general path
    raises it (to nearest, an overflow is an infinity, which the callers see)."""
    return not grid.nearest and bool((np.abs(x) > grid.max_finite).any())


def _stepwise(P, grid: Grid, flags: bool, tiny_below: tuple, start):
    """:func:`running_sums` one step at a time, each by TwoSum and rounding to odd."""
    n = P.shape[1]
    if start is None and _past_largest(P[0], grid):
        return None
    if start is None:
        s = grid.round(P[0])
        terms = P[1:]
    else:
        s = np.array(start, dtype=grid.dtype)
        terms = P
    a = s.astype(np.float64)  # the running sum, exactly (float64 holds the accumulator)
    inexact = underflow = swamped = None
    if flags:
        inexact = a != P[0] if start is None else np.zeros(n, dtype=bool)
        underflow = inexact & _below(P[0], tiny_below)
        swamped = np.zeros(n, dtype=np.int64)
    ws = Workspace(n)  # (the steps' buffers, reused: each step's r, e and odd sum are used up in it)
    for p in terms:
        r, e = two_sum(a, p, ws)  # r + e == a + p exactly
        step = round_to_odd(r, e, ws) if e.any() else r  # (exact sums: often, into fp16)
        if _past_largest(step, grid):  # (|r + e| > max iff |step| > max: max has a short significand)
            return None
        s = grid.round(step)
        if grid.rounding is Rounding.DOWNWARD:  # (IEEE 754 6.3: x - x is -0 there, so is +0 + -0)
            s[(step == 0) & ~((a == 0) & ~np.signbit(a) & (p == 0) & ~np.signbit(p))] = -0.0  # (exact zeros)
        new = s.astype(np.float64)  # (comparisons in float64: numpy's float16 arithmetic is slow)
        if flags:
            lost = (e != 0) | (new != step)
            inexact |= lost
            magnitude = np.abs(r)
            limit = _limit(r, tiny_below)
            if (magnitude <= limit).any():  # |r + e| < limit, r a float64 rounding of it
                below = (magnitude < limit) | ((magnitude == limit) & (e != 0) & (np.signbit(e) != np.signbit(r)))
                underflow |= lost & below
            swamped += (new == a) & (p != 0)
        a = new
    if not np.isfinite(a).all():
        return None
    return s, inexact, underflow, swamped


def _limit(x, limits):
    """Per lane, the limit of x's sign (``limits``: for positive, for negative values)."""
    return np.where(np.signbit(x), limits[1], limits[0])


def _below(x, limits):
    """|x| below the limit of its sign (:func:`_limit`)."""
    return np.abs(x) < _limit(x, limits)


def tiny_below(fmt, tininess, rounding=Rounding.NEAREST_EVEN) -> tuple:
    """The magnitudes below which a positive and a negative non-zero exact result are
    tiny in ``fmt`` (precision p, smallest normal m).  Before rounding: m.  After rounding
    (IEEE: the result rounded as though the exponent range were unbounded lies below m):
    to nearest, below the midpoint m * (1 - 2**-(p + 1)) of m and the p-bit number under
    it (the midpoint itself rounds up to m: an even significand, or away); towards zero, m;
    away from zero (upward for positive results, downward for negative ones), the p-bit
    number m * (1 - 2**-p) under m, anything above it rounding up to m."""
    m = float(fmt.min_normal)
    if tininess is Tininess.BEFORE or rounding is Rounding.TOWARD_ZERO:
        return m, m
    if rounding in (Rounding.NEAREST_EVEN, Rounding.NEAREST_AWAY):
        return (m * (1.0 - 2.0 ** -(fmt.precision + 1)),) * 2
    under = m * (1.0 - 2.0 ** -fmt.precision)
    return (under, m) if rounding is Rounding.UPWARD else (m, under)
