"""Sequential chains on Python floats, one step at a time: sums ``s = round(s + t)``
(:func:`sums`: sum, vecdot and cumsum into few outputs) and products ``p = round(p * t)``
(:func:`products`: cumprod, prod).  A vectorised step is a dozen numpy calls, tens of
microseconds however few its lanes; a chain into one output has nothing to vectorise
over.

Sums
----
Each step is the exact sum ``s + t`` as a ratio of Python integers, rounded once into
the accumulator by softfloat._fastpaths._scalar's rounding (its proof there), with the
same flags and the same stochastic draws as the vectorised step
(softfloat.accumulate._ieee.Arithmetic.add, the operations' add):

* the running value ``s`` is the decoded accumulator value and ``t`` the exact term
  (a term of the input, or the exact product of two narrow inputs), as there; their
  sum is exact as a ratio of integers, and an exact zero sum takes IEEE 754-2019 6.3's
  sign (the operands' common sign, else +0, -0 under downward), as the operations'
  ``add_kernel`` gives it; the first step rounds the term alone;
* the flags are the rounding's (inexact, underflow); a swamped step is one whose
  non-zero term left ``s`` unchanged (values compared as floats, as there);
* in a deterministic mode (gradual underflow, no saturation), a step whose result is
  normal and finite in the accumulator is taken on float64 alone (:class:`_Float64Step`:
  the sum rounded to odd, then its pattern rounded at the accumulator's last bit -- two
  to three times faster than the ratio of integers); the others go the exact way above;
* in round to nearest even into fp32 or fp16 (gradual underflow, no saturation), long
  stretches of steps are taken as one run (:class:`_CastRun`: per step one float64
  addition and C's cast into the accumulator -- an ``array("f")``'s store, struct's "e"
  packing -- five to ten times faster than the float64 step; the steps it cannot prove
  -- a float64 sum on a midpoint, tiny, not finite, an overflow -- found afterwards by
  numpy on the whole run and left to the steps above);
* every step the scalar rounding declines -- an infinite or NaN operand, an overflow,
  flush-to-zero of a tiny value, a stochastic rounding of a sum that float64 does not
  hold (where the vectorised step sees a truncated significand with a sticky bit) --
  is handed back: the caller runs that one step vectorised and goes on.

Products
--------
Each step is the exact product of two values of a narrow format
(softfloat.ops.kernels.is_narrow: precision <= 26 bits, so the product of two
significands has at most 52 bits and is a float64, exactly, with an exponent float64
holds), rounded once into the format:

* a finite product of magnitude at least the format's smallest normal value, where the
  format is numpy's float16 or float32 and the mode is nearest even: numpy's scalar cast
  from float64 (one correct rounding to nearest even: ``npy_double_to_half`` and the
  C cast to float).  No tininess by either rule (the product is at least the smallest
  normal), inexact iff the rounded value differs from the product, and a result that is
  not finite (an overflow) is handed back;
* any other finite non-zero product: softfloat._fastpaths._scalar's rounding (any
  deterministic mode, its proof there), which hands back overflow and flush-to-zero of a
  tiny value;
* an exact zero product: the zero of the signs' XOR (IEEE 754-2019 6.3), +0 in a format
  without -0 (the caller encodes the values); no flag;
* an infinity times a finite non-zero value: the infinity of the signs' XOR, exactly,
  no flag (IEEE 754-2019 7.2 and 7.4: neither invalid nor overflow);
* everything else (a NaN, 0 * inf, an overflow, a declined rounding) is handed back:
  the caller runs that step on the general path and goes on.

tests/test_running_products.py, tests/test_scalar_chain_float64.py and
tests/test_small_paths.py compare every case with the general path.
"""

from __future__ import annotations

import math
import struct
from array import array

import numpy as np

from ..rounding import Rounding
from . import _scalar

__all__ = ["products", "sums"]

_CASTS = {np.dtype(np.float16): np.float16, np.dtype(np.float32): np.float32}


def products(p: float, terms, fmt, attrs, values):
    """Steps ``p = round(p * t)`` for ``t`` in ``terms`` (Python floats: values of ``fmt``,
    ``p`` one too) until one is handed back.

    ``values``: the format's values by pattern (softfloat._fastpaths.scalar_values, finite
    patterns at least).  Returns ``(out, codes, done)``: the running values after each of
    the first ``done`` steps and their flag codes (softfloat._flagmasks.FLAG_BITS:
    _scalar.INEXACT, _scalar.UNDERFLOW); ``done < len(terms)`` means step ``done`` was
    handed back.
    """
    cast = _CASTS.get(np.dtype(fmt.native_dtype)) if fmt.native_dtype is not None else None
    if attrs.rounding is not Rounding.NEAREST_EVEN:
        cast = None
    out, codes = [], []
    with np.errstate(over="ignore"):  # (an overflowing cast is handed back)
        _steps(p, terms, fmt, attrs, values, cast, out, codes)
    return out, codes, len(out)


def _steps(p, terms, fmt, attrs, values, cast, out, codes):
    """:func:`products`' loop: appends each step's value and code until one is handed back."""
    smallest = float(fmt.min_normal)
    for t in terms:
        x = p * t  # exact: the format is narrow
        if x - x == 0.0:  # finite
            if cast is not None and not -smallest < x < smallest:
                r = float(cast(x))
                if r - r != 0.0:
                    break  # an overflow: the general path's flags and saturation
                code = _scalar.INEXACT if r != x else 0
            elif x == 0.0:
                r, code = x, 0  # (its pattern: +0 where the format has no -0)
            else:
                found = _scalar.from_float(x, fmt, attrs)
                if found is None:
                    break
                r, code = values[found[0]], found[1]
        elif (p - p != 0.0 and t - t == 0.0 and t != 0.0) or (t - t != 0.0 and p - p == 0.0 and p != 0.0):
            if math.isnan(x):
                break  # (a NaN operand: the general path's NaN rules)
            r, code = x, 0  # an infinity times a finite non-zero value: exact
        else:
            break  # NaNs, 0 * inf
        out.append(r)
        codes.append(code)
        p = r


def _exact_in_float64(num: int) -> bool:
    """Does the odd part of ``num`` have at most 53 bits?"""
    n = abs(num)
    return (n >> ((n & -n).bit_length() - 1)).bit_length() <= 53


def sums(s, terms, rands, acc, attrs, values, trace=None):
    """Run the chain ``s + terms[0] + terms[1] + ...`` (``s`` a float or None: the first
    term alone) until a step is declined.

    ``rands``: each step's 64 random bits (stochastic rounding), or None; ``values``: the
    accumulator's values by pattern (softfloat._fastpaths.scalar_values, finite patterns at least).
    Returns ``(s, flag code, swamped, done, pattern)``: the running value after ``done``
    steps, the OR of their flag codes, the number of swamped steps and the last step's
    pattern (None before the first); ``done < len(terms)`` means step ``done`` was
    declined (run it vectorised, then call again from the next).  ``trace``: a list that
    gets each step's (value, flag code): the running sums themselves.
    """
    rounding = attrs.rounding
    stochastic = rounding is Rounding.STOCHASTIC
    downward = rounding is Rounding.DOWNWARD
    negative_zero = (1 << (acc.bits - 1)) if acc.has_negative_zero else 0
    code = swamped = 0
    rand = pattern = None
    fast = _Float64Step.of(acc, attrs)
    run = _CastRun.of(acc, attrs) if fast is not None and len(terms) >= _CastRun.LEAST else None
    i, n, again, span, wait = 0, len(terms), 0, _CastRun.SPAN, _CastRun.LEAST
    while i < n:
        if run is not None and s is not None and i >= again and n - i >= _CastRun.LEAST:
            stop = min(n, i + span)
            s, run_code, run_swamped, done = run.steps(s, terms, i, stop, trace)
            if done > i:
                code, swamped, pattern = code | run_code, swamped + run_swamped, _LATER
            if done - i < _CastRun.LEAST:  # few taken: the next try after the exact steps,
                again, wait = done + wait, 2 * wait  # later each time (a chain of tiny sums)
            else:
                wait = _CastRun.LEAST
            span = 2 * span if done == stop else _CastRun.SPAN  # (a cut run: a short one next)
            i = done
            if i == n:
                break
        t = terms[i]
        found = None
        if fast is not None and s is not None and t - t == 0.0 and s - s == 0.0:
            found = fast.step(s, t)  # (None: the exact step below, which knows every case)
        if found is not None:
            (value, step_code), pattern = found, _LATER
        else:
            if t - t != 0.0:  # an infinite or NaN term: the vectorised step's rules
                return s, code, swamped, i, pattern
            if rands is not None:
                rand = rands[i]
            if s is None:
                if t == 0.0:
                    found = (negative_zero if math.copysign(1.0, t) < 0 else 0), 0
                else:
                    num, den = t.as_integer_ratio()
                    found = _scalar.from_ratio(num < 0, abs(num), den, acc, attrs, rand)
            elif s == -t:  # an exact zero sum
                s_negative, t_negative = math.copysign(1.0, s) < 0, math.copysign(1.0, t) < 0
                negative = s_negative if s_negative == t_negative else downward
                found = (negative_zero if negative else 0), 0
            else:
                if s - s != 0.0:
                    return s, code, swamped, i, pattern
                n1, d1 = s.as_integer_ratio()
                n2, d2 = t.as_integer_ratio()
                num = n1 * d2 + n2 * d1
                if stochastic and not _exact_in_float64(num):
                    return s, code, swamped, i, pattern
                found = _scalar.from_ratio(num < 0, abs(num), d1 * d2, acc, attrs, rand)
            if found is None:
                return s, code, swamped, i, pattern
            pattern, step_code = found
            value = values[pattern]
        if s is not None and t != 0.0 and value == s:
            swamped += 1
        s = value
        code |= step_code
        if trace is not None:
            trace.append((value, step_code))
        i += 1
    if pattern is _LATER:  # the last step was a float64 one: its pattern from its value (exact)
        pattern = fast.pattern(s)
    return s, code, swamped, n, pattern


_LATER = object()  # a step's pattern, worked out only if it is the last step's


class _Float64Step:
    """One step s + t rounded into an accumulator of p <= 51 bits in a deterministic
    mode, on float64: r = s + t and its exact error e (TwoSum), r rounded to odd (where
    e != 0 and r's last bit is even, one float64 step towards e), then r's 64-bit
    pattern rounded at the accumulator's last bit in the mode.  Rounding to odd at
    53 >= p + 2 bits, then in any mode at p bits, is the single rounding of the exact sum
    (Boldo and Melquiond, IEEE TC 2008).  Taken where the result is normal and finite in
    the accumulator: |r| above its smallest normal value m (then the exact sum is too,
    rounding to float64 being monotone, so no tininess by either rule) and the rounded
    value at most its largest (no overflow: the rounding with an unbounded exponent);
    every other step -- tiny, overflowing, exact zero sums and special operands -- takes
    the exact path.  Inexact: e != 0 or bits were dropped.  Every p-bit value is a
    float64 value and a carry out of the pattern's fraction goes into its exponent, as
    the format's does."""

    __slots__ = ("shift", "smallest", "largest", "acc", "attrs", "mode")
    _CACHE: dict = {}

    def __init__(self, acc, attrs):
        self.shift = 53 - acc.precision  # float64's bits below the accumulator's last one
        self.smallest, self.largest = float(acc.min_normal), float(acc.max_finite)
        self.acc, self.attrs, self.mode = acc, attrs, attrs.rounding

    @classmethod
    def of(cls, acc, attrs):
        """The step for ``acc`` under ``attrs``, or None (stochastic rounding, flush-to-
        zero, saturation, an accumulator wider than 51 bits or than float64's exponents; the
        caller checks softfloat._fastpaths.ENABLED)."""
        if (attrs.rounding is Rounding.STOCHASTIC or not attrs.subnormals or attrs.saturate
                or acc.precision > 51 or acc.exponent_bits > 11):
            return None
        key = (id(acc), id(attrs))
        found = cls._CACHE.get(key)
        if found is None or found.acc is not acc or found.attrs is not attrs:
            if len(cls._CACHE) > 64:
                cls._CACHE.clear()
            found = cls._CACHE[key] = cls(acc, attrs)
        return found

    def step(self, s: float, t: float):
        """``(value, flag code)`` of the rounded s + t (the scalar rounding's code:
        inexact or nothing), or None (the exact path's step)."""
        r = s + t
        if not abs(r) > self.smallest:
            return None
        b = r - s
        e = (s - (r - b)) + (t - b)
        bits = _BITS.unpack(_FLOAT.pack(r))[0]
        if e != 0.0 and not bits & 1:
            bits += 1 if (e > 0.0) == (r > 0.0) else -1  # to odd: the neighbour towards e
        shift = self.shift
        low = bits & ((1 << shift) - 1) if shift else 0
        if low:
            bits -= low  # towards zero; then one step away from zero where the mode says
            if self.mode is Rounding.NEAREST_EVEN:  # (the common mode, inline)
                half = 1 << (shift - 1)
                if low > half or (low == half and bits >> shift & 1):
                    bits += 1 << shift
            else:
                bits += self._away(bits, low, r > 0.0)
        value = _FLOAT.unpack(_BITS.pack(bits))[0]
        if abs(value) > self.largest:
            return None
        return value, _scalar.INEXACT if e != 0.0 or low != 0 else 0

    def _away(self, bits: int, low: int, positive: bool) -> int:
        """What a mode other than nearest even adds to the pattern truncated at the
        accumulator's last bit (its last bit's weight, or 0), ``low`` != 0 the dropped bits."""
        one, mode = 1 << self.shift, self.mode
        if mode is Rounding.NEAREST_AWAY:
            return one if low >= one >> 1 else 0
        if mode is Rounding.TOWARD_ZERO:
            return 0
        if mode is Rounding.UPWARD:
            return one if positive else 0
        if mode is Rounding.DOWNWARD:
            return 0 if positive else one
        return 0 if bits & one else one  # round to odd: the odd neighbour

    def pattern(self, value: float) -> int:
        """The accumulator's pattern of one of its (finite, normal) values."""
        return _scalar.from_float(value, self.acc, self.attrs)[0]


_FLOAT, _BITS = struct.Struct("<d"), struct.Struct("<Q")


class _CastRun:
    """Many steps s + t rounded to nearest even into fp32 or fp16 (gradual underflow, no
    saturation), each as one float64 addition r = s + t and C's cast of r into the
    accumulator (fp32: storing r in an ``array("f")``; fp16: struct's "e" packing, whose
    OverflowError is taken as an infinity: both one rounding to nearest even, with an
    unbounded exponent but for the overflow to infinity), the checks afterwards on the
    whole run at once in numpy.  The cast of r is the single rounding of the exact sum
    unless r is a midpoint of the accumulator's grid and not the exact sum
    (softfloat.accumulate._odd's argument: rounding to nearest is constant between
    consecutive midpoints, all float64 numbers).  A run is cut at its first step whose r
    is such a midpoint (its float64 bits below the accumulator's last place read 100...0
    and r - s != t or r - t != s), is at most the smallest normal in magnitude (as
    :class:`_Float64Step`: then no step taken is tiny by either rule), or whose r or
    rounded value is not finite (a special term, an overflow); that step is the caller's.
    Flags of the steps taken: inexact where the cast moved r or r is not the exact sum;
    swamped where a non-zero term left s unchanged; no underflow, overflow or invalid.
    Chains of fewer than :data:`LEAST` steps do not pay for the numpy checks."""

    __slots__ = ("sums", "mask", "half", "smallest")
    #: steps below which a run is not tried (its checks cost about 20 plain steps)
    LEAST = 32
    #: steps of a first run (each run after a whole one twice as many): a run cut at once
    #: has cost at most this many casts
    SPAN = 1024

    def __init__(self, sums, acc):
        self.sums = sums
        below = 53 - acc.precision  # float64's bits below the accumulator's last place
        self.mask, self.half = (1 << below) - 1, 1 << (below - 1)
        self.smallest = float(acc.min_normal)

    @classmethod
    def of(cls, acc, attrs):
        """The run for ``acc`` under ``attrs``, or None (another format or mode; the caller
        checks softfloat._fastpaths.ENABLED)."""
        native = acc.native_dtype
        sums = _CAST_SUMS.get(native) if native is not None else None
        if sums is None or attrs.rounding is not Rounding.NEAREST_EVEN or not attrs.subnormals or attrs.saturate:
            return None
        found = _RUNS.get(native)
        if found is None:
            found = _RUNS[native] = cls(sums, acc)
        return found

    def steps(self, s: float, terms, i: int, stop: int, trace):
        """``(s, flag code, swamped, done)`` after the steps ``terms[i:stop]`` that the
        run takes (``done`` - ``i`` of them, perhaps none); each step's (value, code)
        appended to ``trace`` (if not None)."""
        S = self.sums(s, terms[i:stop])  # s and the rounded sums, as float64
        taken = S.size - 1
        prev, S, T = S[:-1], S[1:], np.array(terms[i:i + taken])
        with np.errstate(invalid="ignore", over="ignore"):
            R = prev + T
            exact = (R - prev == T) & (R - T == prev)
            bits = R.view(np.uint64)
            cut = (~(np.abs(R) > self.smallest) | ~np.isfinite(R) | ~np.isfinite(S)
                   | (((bits & self.mask) == self.half) & ~exact))
        if cut.any():
            taken = int(cut.argmax())
            if not taken:
                return s, 0, 0, i
            S, prev, T, R, exact = S[:taken], prev[:taken], T[:taken], R[:taken], exact[:taken]
        inexact = (S != R) | ~exact
        swamped = int(np.count_nonzero((S == prev) & (T != 0.0)))
        if trace is not None:
            trace.extend(zip(S.tolist(), np.where(inexact, _scalar.INEXACT, 0).tolist()))
        return float(S[-1]), _scalar.INEXACT if inexact.any() else 0, swamped, i + taken


def _float32_sums(s: float, terms):
    """``s`` and the running sums rounded to float32 by C's cast (an ``array("f")``'s
    store; an overflow gives an infinity), as a float64 array."""
    sums = array("f", (s,))
    append = sums.append
    for t in terms:
        append(sums[-1] + t)
    return np.frombuffer(sums, dtype=np.float32).astype(np.float64)


_HALF = struct.Struct("<e")


def _float16_sums(s: float, terms):
    """:func:`_float32_sums` into float16, by struct's "e" packing (its rounding to
    nearest even); the sums stop at the first overflow, an infinity."""
    pack, unpack = _HALF.pack, _HALF.unpack
    sums = [s]
    append = sums.append
    try:
        for t in terms:
            s = unpack(pack(s + t))[0]
            append(s)
    except OverflowError:
        append(math.inf)  # (that step is cut)
    return np.array(sums)


_CAST_SUMS = {np.dtype(np.float32): _float32_sums, np.dtype(np.float16): _float16_sums}
_RUNS: dict = {}
