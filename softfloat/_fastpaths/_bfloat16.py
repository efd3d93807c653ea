"""bf16 arithmetic on small arrays: the exact result (or a rounding of it that decides the
same bits and flags) in float64, for the codec's float64 encoder to round once.

The operations' general path streams blocks through a hundred numpy calls whatever the
size, which on a thousand elements is the whole cost.  For bf16 in every deterministic
mode and option this computes add, sub, mul, div and sqrt in a few float64 calls; the
caller (softfloat.ops._driver) hands the float64 values to the codec's encoder
(:func:`softfloat._encode.encode_block`, its shortcuts included), which rounds any
float64 value correctly into bf16 with flags in every deterministic mode and option.

Why the bits and flags are the general path's
---------------------------------------------
* the operands are finite (anything else is declined: NaN results follow the platform's
  rules; infinities, zero divisors and negative square roots raise invalid or
  divide_by_zero), and their float64 values are exact (every bf16 value is a float32
  value, every float32 value a float64 one);
* products: two 8-bit significands make at most 16 bits, and bf16 products lie in
  [2**-266, 2**257), inside float64's normal range, so ``x * y`` is exact (zeros have
  the exclusive or of the signs in every mode, as float64 gives them);
* sums and differences (``x - y`` as ``x + (-y)``): TwoSum gives s = fl(x + y) and the
  exact error e (``s + e = x + y``; every intermediate is below 2**130 and a multiple of
  bf16's quantum 2**-133, so none overflows or underflows).  Where e != 0, s is rounded
  to odd at float64's 53 bits (s moves one ulp toward e where its last bit is even).
  Rounding to odd at 53 bits followed by rounding to p <= 51 bits is one rounding to p
  bits in every mode, for every target exponent (Boldo and Melquiond, IEEE TC 2008), and
  the flags follow as in softfloat.ops._native (the odd value is a bf16 value, below
  2**-126, beyond the overflow threshold exactly when the exact sum is).  Exact zero sums
  get IEEE 754's signs: float64's sum has the nearest modes' (+0 for a cancellation,
  x + x keeps x's sign); under downward a cancellation is -0, set here;
* quotients and square roots are rounded twice, to float64 and then to bf16.  Every
  number v of at most 10 significant bits (bf16 values, the midpoints between them, the
  overflow threshold, the tininess bound below) that the true result q is not lies at
  least 2**-20 (relatively) from q: ``|a/b - v| = |a - v b| / b`` with ``a - v b`` a
  nonzero multiple of the last bit of ``a`` or of ``v b``, and ``|a - v**2| / (sqrt(a) +
  v)`` likewise, while float64's rounding moves q by at most 2**-53 relatively (quotients
  lie in [2**-262, 2**262], square roots in [2**-67, 2**64]: float64 normals).  So the
  float64 value r lies in the same open interval between those numbers as q, and equals
  one of them exactly when q does: every deterministic rounding of r to bf16, with its
  inexact, overflow and tininess (before or after rounding) flags, is q's (Figueroa,
  "When is double rounding innocuous?", 1995, for round to nearest).

On request the values come back as float32 where float32 holds every one of them
exactly (without flags the codec's float32 -> bf16 kernel is the faster one).

In round to nearest even (the default) the caller may round the float64 values itself by
:func:`nearest_even` (its proof beside it) where every one lies in bf16's normal range.

tests/test_small_bf16.py compares it with the general path (switch off).
"""

from __future__ import annotations

import numpy as np

from ..formats import bf16
from ..rounding import Rounding

__all__ = ["applies", "exact_values", "float64_result", "in_range", "nearest_even", "sum_to_odd"]

_FLOAT32_TOP = np.uint32(16)


def applies(fmt, attrs) -> bool:
    """bf16 in a deterministic mode (stochastic rounding draws from every discarded bit);
    every option is the encoder's.  DAZ is the caller's to exclude."""
    return (fmt is bf16 or fmt == bf16) and attrs.rounding is not Rounding.STOCHASTIC


def exact_values(ufunc, patterns, attrs, narrow=False):
    """``ufunc`` (np.add, np.subtract, np.multiply, np.divide, np.sqrt) of non-empty uint16 bf16
    pattern arrays as a float32 or float64 array of the broadcast shape whose rounding into bf16 is
    the exact result's (see the module docstring), or None (declined: a non-finite
    operand, a zero divisor, a negative square root).  ``narrow``: float32 where it holds
    every value exactly."""
    r = float64_result(ufunc, _values().take, patterns, attrs)
    if r is None or not narrow:
        return r
    with np.errstate(over="ignore"):
        r32 = r.astype(np.float32)
    return r32 if (r32 == r).all() else r  # the same values


def float64_result(ufunc, widen, patterns, attrs):
    """``ufunc`` of the float64 values ``widen(p)`` of bf16 or fp32 operand patterns ``p``
    (numpy's warnings silenced: a signalling NaN's widening is an invalid cast): sums by
    :func:`sum_to_odd`, the rest by float64's own operation (products exact; quotients
    and square roots rounded once, which the callers' proofs allow), or None (declined:
    an empty result, an infinite or NaN operand, a zero divisor, a negative square root).

    The operands are checked by the result, in one pass (no reduction per operand): a
    sum, product, quotient or root of finite operands is finite (below 2**278), and one
    with an infinite or NaN operand, a zero divisor or a negative radicand is not --
    except a finite dividend over an infinite divisor (a zero), which the divisor's own
    check declines."""
    with np.errstate(all="ignore"):
        values = [widen(p) for p in patterns]
        if ufunc is np.add or ufunc is np.subtract:
            x, y = values
            if ufunc is np.subtract:
                y = -y
            s = x + y
            return sum_to_odd(x, y, attrs, s) if _finite(s) else None
        r = np.asarray(ufunc(*values))
        if ufunc is np.divide:
            return r if _finite(r + (values[1] - values[1])) else None
        return r if _finite(r) else None


def _finite(r) -> bool:
    """Whether the non-empty float64 array ``r`` holds no infinity and no NaN: ``r - r``
    is 0 there and NaN elsewhere, and a dot product propagates the NaN."""
    if not r.size:
        return False
    t = r - r
    return np.vdot(t, t) == 0.0


_VALUES: list = []


def _values():
    """Every bf16 pattern's float64 value (index: the pattern; 512 KiB), made once by the
    exact widening: a bf16 pattern is the top half of a float32's, every float32 a float64."""
    if not _VALUES:
        with np.errstate(invalid="ignore"):  # the NaN patterns
            table = (np.arange(1 << 16, dtype=np.uint32) << _FLOAT32_TOP).view(np.float32).astype(np.float64)
        table.flags.writeable = False
        _VALUES.append(table)
    return _VALUES[0]


def sum_to_odd(x, y, attrs, s=None):
    """x + y of float64 arrays of bf16 or fp32 values (at most 24 significant bits,
    multiples of 2**-149, below 2**128): exact, or rounded to odd at 53 bits where it is
    not; exact zero sums signed as IEEE 754 does in ``attrs``' mode (module docstring;
    softfloat._fastpaths._float32 for fp32).  ``s``: ``x + y`` in float64, when the
    caller has it (a fresh array: it is written into)."""
    s = np.asarray(x + y if s is None else s)
    bv = np.asarray(s - x)
    e = np.asarray(s - bv)  # TwoSum's exact error e = (x - (s - bv)) + (y - bv), s + e == x + y, in
    np.subtract(x, e, out=e)  # two buffers (fresh temporaries of 64 KiB and more cost
    e += np.subtract(y, bv, out=bv)  # page faults: an fp32 sum of 8,192 took 185 us)
    odd = e != 0
    if odd.any():
        u = s.view(np.uint64)  # s != 0 where e != 0: one ulp toward e where s's last bit is 0
        odd &= (u & np.uint64(1)) == 0
        grow = np.signbit(e) == np.signbit(s)
        u[odd & grow] += np.uint64(1)
        u[odd & ~grow] -= np.uint64(1)
    if attrs.rounding is Rounding.DOWNWARD:
        zero = s == 0
        if zero.any():
            s[zero & (np.signbit(x) | np.signbit(y))] = -0.0
    return s


def in_range(r, low: float, high: float) -> bool:
    """Whether every value of the non-empty float64 array ``r`` is zero or of magnitude
    in ``[low, high)`` (a NaN is not): the elements below ``high`` are all of them, and
    those below ``low`` are the zeros -- three counts, no reduction ufunc (about 1 us
    less on a few elements)."""
    if r.size == 0:
        return False
    a = np.abs(r)
    n = np.count_nonzero(a < high)
    return n == r.size and np.count_nonzero(a < low) == n - np.count_nonzero(a)


_CUT = np.uint64(45)  # float64's 52 fraction bits less bf16's 7
_LOW = np.uint64((1 << 45) - 1)
_KEPT = np.uint64(((1 << 64) - 1) ^ ((1 << 45) - 1))
_HALF_LESS_ONE = np.uint64((1 << 44) - 1)
_ONE = np.uint64(1)
_BF16_TOP = np.uint32(16)
#: the magnitudes this rounding takes: [smallest normal, overflow threshold)
_MIN_NORMAL, _THRESHOLD = 2.0 ** -126, (2 - 2.0 ** -8) * 2.0 ** 127


def nearest_even(r):
    """``(bits, inexact)``: the float64 array ``r`` rounded to nearest even into bf16 (uint16
    patterns) and the inexact mask, or None (declined: a non-zero |r| outside
    ``[2**-126, (2 - 2**-8) * 2**127)``, i.e. below the smallest normal or rounding to
    overflow; a NaN or infinity is outside too).

    Why it is the codec's rounding of r, bits and flags: for such an r, round to nearest
    even at 8 significant bits in float64's own layout -- add ``2**44 - 1`` plus the kept
    last bit (bit 45) to the pattern and clear the 45 bits below -- is IEEE's rounding of
    the significand, a carry moving into the exponent field as it should; the result is
    a bf16 normal number (at least 2**-126, at most max_finite, since |r| is below the
    overflow threshold, whose tie goes to even, i.e. up), so no result is tiny (before or
    after rounding), none overflows, and inexact is "a cut bit is set".  That float64 is
    exactly a float32 (8 bits, a float32 normal exponent), whose pattern's top 16 bits
    are bf16's.  Zeros of either sign: nothing is added past the cut, so they stay as
    they are, exact.  Tininess, flush-to-zero and saturation do not arise; NaN rules
    neither (none is taken)."""
    if not in_range(r, _MIN_NORMAL, _THRESHOLD):
        return None
    u = r.view(np.uint64)
    rounded = u >> _CUT
    rounded &= _ONE
    rounded += _HALF_LESS_ONE
    rounded += u
    rounded &= _KEPT
    bits = rounded.view(np.float64).astype(np.float32).view(np.uint32)
    bits >>= _BF16_TOP
    return bits.astype(np.uint16), (u & _LOW).astype(bool)
