"""Error-free transformations in float64 (TwoSum, Dekker's product, rounding to odd) and
the conditions on a format under which they are exact."""

from __future__ import annotations

import numpy as np

from ..formats import Format
from ._kernel import scratch

__all__ = ["is_narrow", "round_to_odd", "safe_magnitude", "sums_are_exact", "two_product", "two_sum"]


# ---- when float64 arithmetic is exact --------------------------------------------------
def is_narrow(fmt: Format) -> bool:
    """fp32 and narrower: every product of two values is exact in float64 (precision <=
    24 makes at most 48 bits) and every intermediate stays inside float64's range
    (exponent <= 8 bits), so no lane is ever a hazard."""
    return fmt.precision <= 24 and fmt.exponent_bits <= 8


def sums_are_exact(fmt: Format) -> bool:
    """Is every sum of two values of ``fmt`` exact in float64?  Its bits span from the
    smallest subnormal's up to one above the largest binade: at most 53 of them."""
    return (fmt.emax + 1) - (fmt.emin - fmt.mantissa_bits) + 1 <= 53


_SAFE_LO, _SAFE_HI = 2.0**-968, 2.0**995


def safe_magnitude(x):
    """Where Dekker's product of x (and of values near x) is exact: no overflow in its
    Veltkamp split, no underflow of its error term."""
    a = np.abs(x)
    return (a >= _SAFE_LO) & (a <= _SAFE_HI)


# ---- the transformations (exact in float64 barring overflow) ----------------------------
def two_sum(a, b, ws=None, name="op.two_sum"):
    """s, e with s = fl(a + b) and s + e == a + b exactly (Knuth's TwoSum); e = 0 where
    s is not finite.  ``ws``, ``name``: where the results live (see scratch).

        a + b  =  s  +  e       s = 1.ff...f (53 bits, rounded)   e = the bits below s's
                                                                      last place, exactly

    Preconditions: none on the operands' order (no |a| >= |b| test, as Fast2Sum needs);
    exact wherever s is finite (underflow included: float64 sums are exact there).
    """
    s = np.add(a, b, out=scratch(ws, name + ".s", a))
    bv = np.subtract(s, a, out=scratch(ws, name + ".e", a))
    av = np.subtract(s, bv, out=scratch(ws, name + ".t", a))
    e = np.subtract(b, bv, out=bv)  # b - bv, in bv's place
    np.add(np.subtract(a, av, out=av), e, out=e)  # (a - av) + (b - bv)
    return s, _zero_unless_finite(e)


def _zero_unless_finite(e):
    np.copyto(e, 0.0, where=~np.isfinite(e))
    return e


_SPLITTER = 2.0**27 + 1  # Veltkamp: splits a float64 into two 26-bit halves


def two_product(a, b, ws=None, name="op.two_product"):
    """p, e with p = fl(a * b) and p + e == a * b exactly (Dekker), valid while no
    intermediate overflows or underflows -- true for operands of formats of at most 8
    exponent bits (see is_narrow), and where :func:`safe_magnitude` holds for a, b and p.
    ``ws``, ``name``: as for two_sum.

        a = ah + al,  b = bh + bl       each half <= 26 significant bits (see _split)
        a * b = ah*bh + ah*bl + al*bh + al*bl     each partial product <= 52 bits: exact
        e = ((ah*bh - p) + ah*bl + al*bh) + al*bl  every step exact (Dekker 1971)
    """
    p = np.multiply(a, b, out=scratch(ws, name + ".p", a))
    ah, al = _split(a, ws, name + ".a")
    bh, bl = _split(b, ws, name + ".b")
    # e = ((ah*bh - p) + ah*bl + al*bh) + al*bl, term by term
    e = np.multiply(ah, bh, out=scratch(ws, name + ".e", a))
    np.subtract(e, p, out=e)
    t = np.multiply(ah, bl, out=scratch(ws, name + ".t", a))
    np.add(e, t, out=e)
    np.add(e, np.multiply(al, bh, out=t), out=e)
    np.add(e, np.multiply(al, bl, out=t), out=e)
    return p, _zero_unless_finite(e)


def _split(a, ws, name):
    """Veltkamp's split a = hi + lo exactly:

        a  = 1.xxxxxxxxxxxxxxxxxxxxxxxxx|yyyyyyyyyyyyyyyyyyyyyyyyyyy   (53 bits)
        hi = 1.xxxxxxxxxxxxxxxxxxxxxxxxx  (a rounded to 26 bits)
        lo = a - hi                       (<= 26 bits: its sign takes the 27th)

    Precondition: _SPLITTER * a does not overflow (|a| <= 2**995, see safe_magnitude).
    """
    hi = np.multiply(a, _SPLITTER, out=scratch(ws, name + ".hi", a))  # c = SPLITTER * a
    lo = np.subtract(hi, a, out=scratch(ws, name + ".lo", a))  # c - a
    np.subtract(hi, lo, out=hi)  # hi = c - (c - a)
    return hi, np.subtract(a, hi, out=lo)


def round_to_odd(hi, lo, ws=None, name="op.round_to_odd"):
    """The float64 rounding to odd of hi + lo, given |lo| <= ulp(hi)/2 and finite hi.

    Where lo != 0 and hi's last significand bit is 0, step hi's magnitude one ulp toward
    lo (up if lo has hi's sign), which lands on the odd neighbour on lo's side:

        ... b52 b53 = ..0   ->   ..1  (lo same sign)   or   ..(0-1) = ..1 (lo opposite)

    With a block workspace ``ws`` the result lives in its buffer ``name`` (see scratch).
    """
    u = hi.view(np.uint64)
    out = scratch(ws, name, hi)
    r = np.bitwise_and(u, np.uint64(1), out=None if out is None else out.view(np.uint64))
    step = np.equal(r, 0) & (lo != 0)
    up = step & (np.signbit(lo) == np.signbit(hi))  # the other steps go down
    np.add(u, up, out=r)
    np.subtract(r, np.logical_xor(step, up, out=step), out=r)
    return r.view(np.float64)
