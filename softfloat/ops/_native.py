"""Per-block native shortcuts of add, sub and mul into fp16 and bf16: the exact result
(or its rounding to odd) in float32, then the codec's float32 encoding; and of sqrt into
fp32 and tf32: float64's root, then the codec's encoding (:func:`_sqrt`, its proof there).

The general kernels work in float64 and hand the exact float64 result to the codec,
whose float64 -> 16-bit kernels are slower than its float32 ones (a table lookup for
fp16, an integer add and shift for bf16: softfloat._fastpaths).  So where float32 holds
the exact result, or a rounding of it that decides the same bits and flags, a block
computes that in float32 and encodes it.  The driver (softfloat.ops._driver) asks
:func:`block_kernel` once per call; a block that a kernel declines takes the general
kernel.  Off with ``softfloat._fastpaths.ENABLED``.

Why the bits and flags are the general path's
---------------------------------------------
Condition: fp16 or bf16, a deterministic mode (stochastic rounding draws from every
discarded bit), no DAZ (the driver's condition), every operand finite (checked per
block from the float32 result's bounds: a NaN or infinite operand gives a NaN or
infinite result; those blocks take the general path and its NaN and special rules).
Every fp16 and bf16 value is a float32 value, so the operands' float32 copies are exact.

* Products.  Two significands of at most 11 bits make at most 22, so ``x * y`` is exact
  in float32 wherever it lands in float32's normal range or is an exact zero.  fp16
  products lie in [2**-48, 2**32]: always.  bf16 products (8-bit significands, float32's
  exponent range) can leave it: a block is declined unless every lane's float32 product
  is finite (an exact product at or above 2**128 rounds to infinity in round to nearest)
  and, where below 2**-126, has a zero operand.  A zero product's sign is the exclusive
  or in every mode, as float32 gives it.
* Sums and differences (``x - y`` as ``x + (-y)``).  TwoSum in float32 gives s = fl(x + y)
  and the exact error e (``s + e = x + y``), exact wherever s is finite, underflow
  included (Knuth); blocks with |s| >= 2**126 are declined, keeping every intermediate
  finite (fp16 sums are below 2**17).  Then s is rounded to odd at float32's 24 bits
  (where e != 0 and s's last bit is even, s moves one ulp toward e).  Rounding to odd at
  24 bits followed by rounding to p <= 22 bits is one rounding to p bits in every mode
  (Boldo and Melquiond, IEEE TC 2008), the same lemma softfloat.ops._round_block uses at
  53 bits; it holds for every target exponent, so for overflow and for subnormal results
  too.  The flags follow: the odd value is a p-bit value iff the exact sum is (else its
  last bit, below the p bits, is set); it is below 2**-14 (before rounding) iff the
  exact sum is (rounding to odd is monotone and never lands on an even-ended 2**-14 from
  off it), and its p-bit roundings with an unbounded exponent equal the exact sum's, so
  overflow and tininess after rounding agree.  Exact zero sums get IEEE 754's signs
  (+0, -0 under downward) from :func:`softfloat.ops._signs.exact_zero_sign`.
* The encoding is the codec's (:func:`softfloat._encode.encode_block`, its shortcuts
  included), which rounds any float32 value correctly with flags: the general path's
  bits and flags for the exact result.

fp16 sums take softfloat._fastpaths._native16 in every deterministic mode but ties away,
with gradual underflow and no saturation (their exact float64 sum, numpy's float16 cast, in the
other modes one step to the neighbouring pattern: softfloat._fastpaths._directed16) and
the general kernel otherwise: on data over fp16's whole range most lanes need the
rounding to odd here, which made it slower than the general kernel's exact float64 sum.

tests/test_native_ops.py compares both with the general path (switch off).
"""

from __future__ import annotations

import numpy as np

from .. import _fastpaths
from .._decode import decode_block
from .._encode import encode_block
from ..formats import bf16, fp16
from ..rounding import Rounding
from ._signs import exact_zero_sign

__all__ = ["block_kernel"]

_FORMATS = (fp16, bf16)
#: a call stops trying the float32 kernels after this many declined blocks without one
#: taken: its data leaves float32's safe range everywhere (bf16 over its whole range),
#: and each try costs a tenth of the block's general path.  The results never depend on it.
GIVE_UP = 2
_SUM_LIMIT = np.float32(2.0 ** 126)
_MIN_NORMAL32 = np.float32(2.0 ** -126)


def block_kernel(job):
    """The per-block shortcut of ``job`` (a softfloat.ops._driver.Job), or None:
    ``run(x, y, attrs, want, out, ws)`` on one block's exact float64 operand values,
    returning ``[flags]`` (the block's FlagMasks with ``want``, else None) or None
    (declined: the general kernel takes the block)."""
    ufunc, target = job.operation.native, job.target
    fmt, attrs = target.fmt, target.attrs
    if ufunc is None or job.key is not None or job.daz_inputs or not _fastpaths.ENABLED:
        return None
    if ufunc is np.sqrt:
        return _sqrt(fmt) if _sqrt_applies(fmt, attrs) else None
    if ufunc is np.add or ufunc is np.subtract:
        if _fastpaths.float16_block_applies(ufunc, fmt, attrs):
            return _float16_sum(ufunc, fmt)
        if fmt == fp16:
            return None
        kernel = _sum
    elif ufunc is np.multiply:
        kernel = _product
    else:
        return None
    if fmt not in _FORMATS or attrs.rounding is Rounding.STOCHASTIC:
        return None
    negate = ufunc is np.subtract
    tally = [0, 0]  # blocks declined, blocks taken (a race miscounts: harmless)

    def run(x, y, attrs, want, out, ws):
        if tally[0] >= GIVE_UP and not tally[1]:
            return None  # data far outside float32's safe range (wide bf16): stop trying
        x32 = ws.get("nat.x", np.float32, x.size)
        y32 = ws.get("nat.y", np.float32, y.size)
        np.copyto(x32, x)
        np.copyto(y32, y)
        if negate:
            np.negative(y32, out=y32)
        value = kernel(fmt, attrs, x32, y32, ws)
        if value is None:
            tally[0] += 1
            return None
        tally[1] += 1
        return [encode_block(value, fmt, attrs, None, want, out, ws)]

    return run


def _float16_sum(ufunc, fmt):
    """fp16 sums by softfloat._fastpaths.float16_block (every deterministic mode)."""

    def build(patterns, out):
        decode_block(patterns, fmt, out)

    def run(x, y, attrs, want, out, ws):
        return _fastpaths.float16_block(ufunc, x, y, attrs, want, out, ws, build)

    return run


def _bounds_finite(v):
    lo, hi = v.min(), v.max()  # NaN propagates
    return (-np.inf < lo and hi < np.inf), max(-lo, hi)


def _product(fmt, attrs, x, y, ws):
    """x * y in float32, exact, or None (see the module docstring)."""
    p = np.multiply(x, y, out=ws.get("nat.p", np.float32, x.size))
    if not _bounds_finite(p)[0]:
        return None
    if fmt == bf16:
        a = np.abs(p, out=ws.get("nat.a", np.float32, p.size))
        if a.min() < _MIN_NORMAL32:
            low = a < _MIN_NORMAL32
            if np.any(low & (x != 0) & (y != 0)):
                return None  # an underflowing float32 product
    return p


def _sum(fmt, attrs, x, y, ws):
    """x + y rounded to odd at float32's 24 bits, or None (see the module docstring)."""
    n = x.size
    s = np.add(x, y, out=ws.get("nat.s", np.float32, n))
    finite, largest = _bounds_finite(s)
    if not finite or largest >= _SUM_LIMIT:
        return None
    bv = np.subtract(s, x, out=ws.get("nat.bv", np.float32, n))
    av = np.subtract(s, bv, out=ws.get("nat.av", np.float32, n))
    e = np.subtract(y, bv, out=bv)
    np.subtract(x, av, out=av)
    np.add(av, e, out=e)  # the exact error: s + e == x + y
    inexact = np.not_equal(e, 0, out=ws.get("nat.ne", np.bool_, n))
    if inexact.any():
        u = s.view(np.uint32)
        even = np.bitwise_and(u, np.uint32(1), out=ws.get("nat.lsb", np.uint32, n)) == 0
        np.logical_and(inexact, even, out=inexact)
        # one ulp toward e: the magnitude grows where e has s's sign (s != 0 where e != 0)
        grow = np.signbit(e) == np.signbit(s)
        step = np.where(grow, np.uint32(1), np.uint32(0xFFFFFFFF))
        np.multiply(step, inexact, out=step)
        np.add(u, step, out=u)
    exact_zero_sign(s, None, x, y, attrs)
    return s


# ---- square roots ----------------------------------------------------------------------
def _sqrt_applies(fmt, attrs) -> bool:
    """Formats of more than 16 bits (narrower ones look their roots up in a table made
    once, softfloat._fastpaths) and at most 24 bits of precision whose square roots are
    never tiny (the root of the smallest subnormal, 2**((emin - m) / 2), is normal:
    emin <= -m) -- fp32, tf32 -- in a deterministic mode (see :func:`_sqrt`)."""
    return (16 < fmt.bits and fmt.precision <= 24 and fmt.emin <= -fmt.mantissa_bits and fmt.exponent_bits <= 11
            and attrs.rounding is not Rounding.STOCHASTIC)


def _sqrt(fmt):
    """sqrt into ``fmt`` (:func:`_sqrt_applies`) from float64's correctly rounded root hi:
    the codec's rounding of hi is the root's, bits and flags, in every deterministic mode.

    Why: where sqrt(x) is no float64 value, no p-bit value and no midpoint of two (a
    (p+1)-bit value) lies between sqrt(x) and hi, nor at hi.  Such a v != sqrt(x) has
    v**2 of at most 2(p + 1) <= 50 significant bits and x at most p, so x - v**2 is a
    non-zero multiple of 2**-50 * v**2 or more, and |sqrt(x) - v| >= 2**-52 * v, more
    than hi's distance 2**-53 * |hi| from sqrt(x).  So every rounding of hi, to nearest
    (either tie rule), directed or to odd, picks the value sqrt(x)'s picks, and hi is a
    p-bit value iff sqrt(x) is (the inexact flag).  No root overflows (sqrt(max) < max)
    or is tiny (the condition); sqrt(+0) = +0, sqrt(-0) = -0 and sqrt(+inf) = +inf are
    exact as numpy gives them.  A block holding a NaN or a negative operand (invalid,
    the platform's NaN) takes the general kernel."""
    def run(x, attrs, want, out, ws):
        if not (x >= 0).all():  # (-0 >= 0; a NaN is not)
            return None
        hi = np.sqrt(x, out=ws.get("nat.sqrt", np.float64, x.size))
        return [encode_block(hi, fmt, attrs, None, want, out, ws)]

    return run
