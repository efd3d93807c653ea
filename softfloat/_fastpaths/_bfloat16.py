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

In round to nearest even (the default) the caller takes numpy's float32 arithmetic first,
rounded by :func:`nearest_even` (its proof beside it) where every result lies in bf16's
normal range.

tests/test_small_bf16.py compares it with the general path (switch off).
"""

from __future__ import annotations

import numpy as np

from ..formats import bf16
from ..rounding import Rounding

__all__ = ["all_finite", "applies", "exact_values", "float64_result", "nearest_even", "sum_inexact",
           "sum_of_squares", "sum_to_odd"]

#: the shift between a bf16 pattern and the float32 pattern whose top half it is
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
            return sum_to_odd(x, y, attrs, s) if all_finite(s) else None
        r = np.asarray(ufunc(*values))
        if ufunc is np.divide:
            return r if all_finite(r + (values[1] - values[1])) else None
        return r if all_finite(r) else None


def all_finite(r) -> bool:
    """Whether the non-empty float array ``r`` holds no infinity and no NaN: ``r - r``
    is 0 there and NaN elsewhere, and a sum of squares propagates the NaN."""
    if not r.size:
        return False
    t = r - r
    return sum_of_squares(t) == 0.0


#: OpenBLAS runs a dot product of more than 10,000 elements on several threads, which spin
#: where the cores are busy (two processes on two cores: ~600 us for 16,384 elements
#: instead of 2); pieces of at most this many elements stay on the calling thread
_ONE_THREAD = 8192


def sum_of_squares(d):
    """sum(d * d) over the float array ``d`` by BLAS dot products of at most 8192
    elements each (no thread pool; about 1 us more on 16,384 elements than one dot
    product): NaN where some element is a NaN or an infinity (inf * 0 never arises:
    squares), infinite where a square or the sum overflows, 0 exactly where every
    element is zero."""
    d = d.reshape(-1)
    if d.size <= _ONE_THREAD:
        return np.vdot(d, d)
    return sum(np.vdot(d[i:i + _ONE_THREAD], d[i:i + _ONE_THREAD]) for i in range(0, d.size, _ONE_THREAD))


_VALUES: list = []


def _values():
    """Every bf16 pattern's float64 value (index: the pattern; 512 KiB), made once by the
    exact widening: a bf16 pattern is the top half of a float32's, every float32 a float64."""
    if not _VALUES:
        with np.errstate(invalid="ignore"):  # the NaN patterns
            table = _values32().astype(np.float64)
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


_MAGNITUDE = np.uint32(0x7FFFFFFF)
#: float32 patterns of magnitude in [2**-126, (2 - 2**-8) * 2**127) (the smallest normal up
#: to bf16's overflow threshold): ``m - _LOWEST < _SPAN`` as uint32 (below wraps around)
_LOWEST, _SPAN = np.uint32(0x00800000), np.uint32(0x7F7F8000 - 0x00800000)
_HALF_LESS_ONE = np.uint32(0x7FFF)
_ONE = np.uint32(1)


def nearest_even(ufunc, patterns, want: bool):
    """``(bits, inexact)``: bf16 ``ufunc`` (np.add, np.subtract, np.multiply, np.divide,
    np.sqrt) of uint16 pattern arrays, rounded to nearest even from numpy's float32
    arithmetic, the inexact mask only with ``want`` (else None); or None (declined: a
    result that is not zero or of magnitude in [2**-126, (2 - 2**-8) * 2**127), a zero
    product or quotient of non-zero operands).

    Why it is the general path's result, bits and flags.  The operands' float32 values
    are exact (a bf16 pattern is the top half of a float32's), and numpy's float32
    result r is IEEE's, rounded to nearest even:

    * products of two 8-bit significands have at most 16 bits: r is exact where it is a
      float32 normal (the range taken) or a zero of a zero operand;
    * sums are exact in float32 where the operands' exponents lie at most 16 apart; where
      not, the exact sum lies within 2**-15 (relatively) of the larger operand, a bf16
      value, and r within 2**-23 of it, both far from the midpoints beside it (2**-9
      away): r rounds into bf16 as the exact sum does.  A sum below 2**-126 is exact
      (multiples of 2**-133) and below the range taken;
    * quotients and roots: r is q rounded once at 24 bits (2**-24 relatively), and q lies
      at least 2**-20 (relatively) from every number of at most 10 significant bits it
      is not (the module docstring): r lies among the bf16 values, their midpoints, 2**-126
      and the overflow threshold where q does, and equals one exactly where q does.

    So rounding r to nearest even at bf16's 8 bits -- add ``0x7FFF`` plus the kept last bit
    to the float32 pattern and shift 16 bits out, a carry moving into the exponent -- is
    the rounding of the exact result, a bf16 normal (r below the overflow threshold, whose
    tie goes up) or a zero: nothing tiny (the exact value is at least 2**-126 too), no
    overflow, no option (tininess, flushing, saturation, platform) changing anything.
    Inexact: the 16 bits shifted out are not all 0 (r exact, or equal to a bf16 value
    exactly where q is), or, for a sum, r is not exact: r - x != y or r - y != x in
    float32 (where r is the exact sum both differences are the other operand; where it is
    not, the difference from the larger operand is exact, Fast2Sum, and differs from the
    other).  tests/test_small_bf16.py compares it with the general path."""
    table = _values32()
    x = table.take(patterns[0])
    y = None if ufunc is np.sqrt else table.take(patterns[1])
    with np.errstate(all="ignore"):
        r = np.asarray(ufunc(x) if y is None else ufunc(x, y))
        u = r.view(np.uint32)
        m = u & _MAGNITUDE
        m -= _LOWEST
        nonzero = np.count_nonzero(u << _ONE)  # (the sign bit shifted out)
        if np.count_nonzero(m < _SPAN) != nonzero:  # a non-zero outside the range (NaNs too)
            return None
        if (ufunc is np.multiply and nonzero != np.count_nonzero(np.logical_and(x, y))) or \
                (ufunc is np.divide and nonzero != np.count_nonzero(x)):
            return None  # a product or quotient below float32's range
        rounded = u >> _FLOAT32_TOP
        rounded &= _ONE
        rounded += _HALF_LESS_ONE
        rounded += u
        rounded >>= _FLOAT32_TOP
        bits = rounded.astype(np.uint16)
        if not want:
            return bits, None
        inexact = u.astype(np.uint16) != 0  # (the low 16 bits)
        if ufunc is np.add or ufunc is np.subtract:
            inexact |= sum_inexact(r, x, -y if ufunc is np.subtract else y)
    return bits, inexact


def sum_inexact(r, x, y):
    """Where the float32 sum ``r`` of float32 ``x + y`` is not exact: r - x != y or
    r - y != x in float32.  Where r is the exact sum both differences are the other
    operand; where it is not, the difference from the larger operand is exact (Fast2Sum)
    and differs from the other one."""
    inexact = np.not_equal(r - x, y)
    inexact |= np.not_equal(r - y, x)
    return inexact


_VALUES32: list = []


def _values32():
    """Every bf16 pattern's float32 value (index: the pattern; 256 KiB), made once by the
    exact widening (the pattern is the top half of the float32's)."""
    if not _VALUES32:
        table = (np.arange(1 << 16, dtype=np.uint32) << _FLOAT32_TOP).view(np.float32)
        table.flags.writeable = False
        _VALUES32.append(table)
    return _VALUES32[0]
