"""One exact value rounded into a format by Python integer arithmetic: the scalar path.

A call of the streaming machinery (option checks, blocks, workspaces, flag masks) costs
tens of microseconds however small its input; one value rounded here costs about one.
The operations, the codec and the sequential accumulation take this path for a single
element (see :mod:`softfloat.ops._small`, :func:`softfloat.codec.encode`,
:mod:`softfloat.accumulate._scalar_sum`), and it declines whatever it does not cover,
which then takes the general path.

Why the result is the general path's, bit for bit and flag for flag
-------------------------------------------------------------------
The exact value arrives as ``(negative, sig, q, sticky)``: its magnitude is
``(sig + d) * 2**q`` with ``0 <= d < 1`` and ``d > 0`` exactly when ``sticky`` (a
truncated quotient or square root); ``sig`` has at least ``precision + 2`` bits, so the
rounding point lies at least two bits below its top (:func:`from_ratio`,
:func:`from_sqrt` build it so).  Then, as IEEE 754-2019 defines it (section 4.3, 7.4,
7.5) and as :func:`softfloat._round.round_pack` computes it:

* the value's exponent is ``e = q + bitlength(sig) - 1`` (``d < 1`` cannot carry it);
* the quantum is ``2**(max(e, emin) - p + 1)``: the rounding keeps ``sig >> shift`` and
  looks at the bits below (``rest``, compared with half the quantum) and ``sticky``;
  a tie is ``rest == half`` without sticky; inexact is ``rest != 0 or sticky``;
* a carry to ``2**p`` moves the exponent up one; a subnormal that rounds up to
  ``2**(p-1)`` becomes the smallest normal, whose pattern is the same integer;
* overflow: the rounded magnitude (unbounded exponent) beyond max_finite -- declined
  (the general path knows saturation, fn/fnuz NaNs and infinities);
* tininess before rounding: ``e < emin``; after rounding: the value rounded to ``p``
  bits with an unbounded exponent is below ``2**emin``, i.e. ``e < emin`` unless
  ``e == emin - 1`` and that rounding carries to ``2**emin``; underflow is tiny and
  inexact (gradual underflow);
* a result of zero magnitude keeps the value's sign, except in formats without -0
  (fnuz), where it is +0.

Stochastic rounding (given the rounding's 64 random bits ``u``, and a value with no sticky
bit) rounds up iff ``rest / 2**shift + u / 2**64 >= 1``: softfloat._round adds the top
``shift`` bits of ``u`` to ``rest``, which with every bit of the value in its word is the
same test.  Tininess is then judged by the delivered result, as there.

Declined (None): stochastic rounding without random bits or with a sticky bit,
flush-to-zero of a tiny value (``subnormals`` False), overflow.  tests/test_small_paths.py
checks every case against the general path with the fast paths switched off.
"""

from __future__ import annotations

import math

from ..rounding import Rounding, Tininess

__all__ = ["INEXACT", "UNDERFLOW", "FiniteValues", "from_ratio", "from_sqrt", "pack"]

#: the flag bits of softfloat._flagmasks.FLAG_BITS this path can raise
UNDERFLOW, INEXACT = 8, 16

_NEAREST_EVEN, _NEAREST_AWAY = Rounding.NEAREST_EVEN, Rounding.NEAREST_AWAY
_TOWARD_ZERO, _UPWARD, _DOWNWARD, _ODD = Rounding.TOWARD_ZERO, Rounding.UPWARD, Rounding.DOWNWARD, Rounding.ODD
_STOCHASTIC = Rounding.STOCHASTIC


def _round(sig, shift, sticky, negative, rounding, rand=None):
    """``(kept, inexact)``: ``sig * 2**-shift`` (plus sticky below) rounded to an integer;
    ``(None, True)`` where it cannot say (stochastic rounding without ``rand``, or of a
    value with a sticky bit)."""
    kept = sig >> shift
    rest = sig & ((1 << shift) - 1)
    inexact = rest != 0 or sticky
    if not inexact:
        return kept, False
    if rounding is _NEAREST_EVEN:
        half = 1 << (shift - 1)
        if rest > half or (rest == half and (sticky or kept & 1)):
            kept += 1
    elif rounding is _NEAREST_AWAY:
        if rest >= 1 << (shift - 1):
            kept += 1
    elif rounding is _UPWARD:
        if not negative:
            kept += 1
    elif rounding is _DOWNWARD:
        if negative:
            kept += 1
    elif rounding is _ODD:
        kept |= 1
    elif rounding is not _TOWARD_ZERO:  # stochastic
        # up iff rest / 2**shift + u >= 1, u = rand / 2**64 (softfloat._round: the top bits
        # of the 64 random bits aligned at the cut; with every bit of the value in the
        # word, as here, the decision does not depend on the word's width)
        if rand is None or sticky:
            return None, True
        if (rest << 64) + (rand << shift) >= 1 << (64 + shift):
            kept += 1
    return kept, True


_LAYOUTS: dict = {}


def _layout(fmt):
    """(p, emin, m, bias, max_finite_bits, sign bit, -0 pattern, fmt) of ``fmt``, once (fmt
    kept, so that its id stays its own)."""
    found = _LAYOUTS.get(id(fmt))  # (a Format's hash reads all its fields: keyed by id)
    if found is None or found[-1] is not fmt:
        sign = 1 << (fmt.bits - 1)
        found = _LAYOUTS[id(fmt)] = (fmt.mantissa_bits + 1, fmt.emin, fmt.mantissa_bits, fmt.bias,
                                     fmt.max_finite_bits, sign, sign if fmt.has_negative_zero else 0, fmt)
    return found


def pack(negative, sig, q, sticky, fmt, attrs, rand=None):
    """The pattern and flag bits (INEXACT, UNDERFLOW) of ``(-1)**negative * (sig + d) *
    2**q`` rounded into ``fmt`` (see the module docstring), or None (declined).
    ``sig`` > 0 with at least ``fmt.precision + 2`` bits; ``rand`` the rounding's 64
    random bits (stochastic rounding; without them it declines)."""
    p, emin, m, bias, max_finite_bits, sign, negative_zero, _ = _layout(fmt)
    rounding = attrs.rounding
    e = q + sig.bit_length() - 1
    if e < emin and not attrs.subnormals:
        return None
    shift = max(e, emin) - p + 1 - q
    kept, inexact = _round(sig, shift, sticky, negative, rounding, rand)
    if kept is None:
        return None
    flags = 0
    if inexact:
        flags = INEXACT
        if e < emin:
            tiny = True
            if rounding is _STOCHASTIC:  # judged by the delivered result (softfloat._round)
                tiny = attrs.tininess is Tininess.BEFORE or kept != 1 << m
            elif e == emin - 1 and attrs.tininess is Tininess.AFTER:
                unbounded, _ = _round(sig, e - p + 1 - q, sticky, negative, rounding)
                tiny = unbounded >> p == 0
            if tiny:
                flags |= UNDERFLOW
    if kept >> p:  # a carry to 2**p
        kept >>= 1
        shift += 1
    if kept >> m:  # normal: the biased exponent above the fraction
        magnitude = ((q + shift + m + bias) << m) | (kept - (1 << m))
    else:
        magnitude = kept
    if magnitude > max_finite_bits:
        return None
    if negative:
        magnitude |= sign if magnitude else negative_zero
    return magnitude, flags


def from_ratio(negative, num, den, fmt, attrs, rand=None):
    """:func:`pack` of ``num / den`` (positive ints)."""
    e = num.bit_length() - den.bit_length()  # floor(log2(num/den)) is e or e - 1
    q = e - _layout(fmt)[2] - 4
    if rand is not None and den & (den - 1) == 0:  # every bit kept, for stochastic rounding
        q = min(q, 1 - den.bit_length())
    if q >= 0:
        sig, rem = divmod(num, den << q)
    else:
        sig, rem = divmod(num << -q, den)
    return pack(negative, sig, q, rem != 0, fmt, attrs, rand)


def from_float(value, fmt, attrs):
    """:func:`pack` of a finite non-zero Python float."""
    num, den = value.as_integer_ratio()
    return from_ratio(num < 0, abs(num), den, fmt, attrs)


def from_sqrt(num, k, fmt, attrs):
    """:func:`pack` of ``sqrt(num * 2**-k)`` (``num`` > 0)."""
    # the root's exponent is about (bitlength(num) - k) / 2; keep p + 4 bits below it,
    # with q small enough that num * 2**(-k - 2q) is an integer
    q = min((num.bit_length() - k) // 2 - fmt.mantissa_bits - 5, -((k + 1) // 2))
    radicand = num << (-k - 2 * q)
    sig = math.isqrt(radicand)
    return pack(False, sig, q, sig * sig != radicand, fmt, attrs)


class FiniteValues:
    """``values[pattern]``: the Python float of a finite pattern of ``fmt`` (the patterns
    :func:`pack` gives), for formats too wide for a list of every value; NaN for a
    pattern of an infinity or a NaN, which the callers decline (``x - x != 0``)."""

    def __init__(self, fmt):
        self.m, self.bias = fmt.mantissa_bits, fmt.bias
        self.exponent_mask, self.sign = (1 << fmt.exponent_bits) - 1, 1 << (fmt.bits - 1)
        self.max_finite_bits = fmt.max_finite_bits
        self.nan_zero = self.sign if not fmt.has_negative_zero else -1  # fnuz: "-0" is the NaN

    def __getitem__(self, pattern: int) -> float:
        if (pattern & ~self.sign) > self.max_finite_bits or pattern == self.nan_zero:
            return math.nan
        m = self.m
        e = (pattern >> m) & self.exponent_mask
        f = pattern & ((1 << m) - 1)
        magnitude = math.ldexp(f | (1 << m) if e else f, max(e, 1) - self.bias - m)
        return -magnitude if pattern & self.sign else magnitude
