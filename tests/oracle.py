"""Independent oracles: MPFR (gmpy2) and exact Fractions; they share no code with softfloat.

Only ``softfloat.Format`` attributes that the format tests pin against numpy/ml_dtypes
(precision, emin, emax, max_finite, specials policy) are read from the library.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
import math

import gmpy2

_MPFR_MODE = {
    "nearest_even": gmpy2.RoundToNearest,
    "toward_zero": gmpy2.RoundToZero,
    "upward": gmpy2.RoundUp,
    "downward": gmpy2.RoundDown,
}


@dataclass(frozen=True)
class Expected:
    value: Fraction | float  # rounded value (Fraction when finite, else inf/nan float)
    negative: bool
    invalid: bool = False
    overflow: bool = False
    underflow: bool = False
    inexact: bool = False


def _mpfr_round(q: Fraction, prec: int, emin: int, emax: int, mode: str) -> Fraction:
    """Round q (finite, non-zero allowed) with MPFR; emin/emax in MPFR's 0.1xxx convention."""
    ctx = gmpy2.context(precision=prec, emin=emin, emax=emax, subnormalize=True,
                        round=_MPFR_MODE[mode])
    with ctx:
        r = gmpy2.mpfr(gmpy2.mpq(q.numerator, q.denominator))
        r = gmpy2.check_range(r)
    if gmpy2.is_infinite(r):
        return math.inf if r > 0 else -math.inf
    n, d = r.as_integer_ratio()
    return Fraction(int(n), int(d))


def _ties_away(q: Fraction, prec: int, emin: int, emax: int) -> Fraction:
    """Round-to-nearest-ties-away from the two directed neighbours (exact Fractions)."""
    lo = _mpfr_round(q, prec, emin, emax, "downward")
    hi = _mpfr_round(q, prec, emin, emax, "upward")
    if lo == hi:
        return lo
    if isinstance(lo, float) or isinstance(hi, float):
        # one neighbour is infinite: MPFR's own nearest decides overflow
        return _mpfr_round(q, prec, emin, emax, "nearest_even")
    dlo, dhi = q - lo, hi - q
    if dlo == dhi:
        return hi if q > 0 else lo
    return lo if dlo < dhi else hi


def _round_odd(q: Fraction, prec: int, emin: int, emax: int) -> Fraction:
    t = _mpfr_round(q, prec, emin, emax, "toward_zero")
    if t == q:
        return t
    away = _mpfr_round(q, prec, emin, emax, "upward" if q > 0 else "downward")
    # of the two neighbours, the one whose last significand bit is 1
    for cand in (t, away):
        if not isinstance(cand, float) and _last_bit_odd(cand, prec, emin):
            return cand
    return t


def _floor_log2(a: Fraction) -> int:
    """Exact floor(log2(a)) for a > 0."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    return e if Fraction(2) ** e <= a else e - 1


def _last_bit_odd(v: Fraction, prec: int, emin_mpfr: int) -> bool:
    if v == 0:
        return False
    a = abs(v)
    quantum_exp = max(_floor_log2(a) + 1, emin_mpfr + prec - 1) - prec  # ulp exponent
    k = a / Fraction(2) ** quantum_exp
    assert k.denominator == 1
    return k.numerator % 2 == 1


def round_exact(q: Fraction, negative: bool, fmt, mode: str, *, tininess="after",
                subnormals=True, saturate=False) -> Expected:
    """The correctly rounded result of the exact value (-1)**negative * |q| in ``fmt``.

    Follows IEEE 754-2019 for overflow and underflow (tininess before or after rounding),
    with the documented policies for formats without infinities or NaNs.
    """
    p = fmt.precision
    emin_m = fmt.emin - fmt.mantissa_bits + 1   # MPFR exponent of the smallest subnormal
    emax_m = fmt.emax + 2                      # room so rounding past max stays finite here
    x = -q if negative else q
    if x == 0:
        return Expected(Fraction(0), negative and fmt.has_negative_zero)
    if mode == "nearest_away":
        r = _ties_away(x, p, emin_m, emax_m)
    elif mode == "odd":
        r = _round_odd(x, p, emin_m, emax_m)
    else:
        r = _mpfr_round(x, p, emin_m, emax_m, mode)
    inexact = r != x
    # IEEE tininess: "after" rounds to p bits with an unbounded exponent
    min_normal = Fraction(2) ** fmt.emin
    if tininess == "before":
        tiny = abs(x) < min_normal
    else:
        wide = (_ties_away(x, p, -100000, 100000) if mode == "nearest_away" else
                _round_odd(x, p, -100000, 100000) if mode == "odd" else
                _mpfr_round(x, p, -100000, 100000, mode))
        tiny = abs(wide) < min_normal
    underflow = tiny and inexact
    if not subnormals and tiny:
        r, inexact, underflow = Fraction(0), True, True
    max_finite = Fraction(fmt.max_finite)
    overflow = isinstance(r, float) or abs(r) > max_finite
    if overflow:
        inexact = True
        to_inf = (mode in ("nearest_even", "nearest_away") or
                  (mode == "upward" and not negative) or (mode == "downward" and negative))
        if not to_inf or saturate or fmt.specials.value == "finite":
            r = -max_finite if negative else max_finite
        elif fmt.has_infinity:
            r = -math.inf if negative else math.inf
        else:
            r = math.nan
    neg_out = negative if fmt.has_negative_zero or r != 0 else False
    return Expected(r, neg_out, False, overflow, underflow, inexact)


def value_of_float(x: float) -> tuple[Fraction, bool]:
    """Exact magnitude and sign of a finite Python/numpy float."""
    return abs(Fraction(float(x))), math.copysign(1.0, float(x)) < 0


def nan_pattern(fmt, negative: bool) -> int:
    """The canonical quiet NaN each special-value policy defines."""
    m, e_bits = fmt.mantissa_bits, fmt.exponent_bits
    sign = (1 << (fmt.bits - 1)) if negative else 0
    ones = ((1 << e_bits) - 1) << m
    policy = fmt.specials.value
    if policy == "ieee":
        return sign | ones | (1 << (m - 1))
    if policy == "fn":
        return sign | ones | ((1 << m) - 1)
    if policy == "fnuz":
        return 1 << (fmt.bits - 1)
    raise AssertionError(f"{fmt} has no NaN")


def pattern_of(value, negative: bool, fmt) -> int:
    """Bit pattern of an exact value of ``fmt`` (Fraction), or of +-inf / NaN (float)."""
    m, e_bits = fmt.mantissa_bits, fmt.exponent_bits
    sign = (1 << (fmt.bits - 1)) if negative else 0
    if isinstance(value, float):
        if math.isnan(value):
            return nan_pattern(fmt, negative)
        assert fmt.has_infinity, f"oracle gave infinity for {fmt}"
        return sign | (((1 << e_bits) - 1) << m)
    a = abs(value)
    if a == 0:
        return sign
    e = _floor_log2(a)
    biased = max(e, fmt.emin) - fmt.emin + (e >= fmt.emin)
    quantum = max(e, fmt.emin) - m
    k = a / Fraction(2) ** quantum
    assert k.denominator == 1, f"{value} is not a value of {fmt}"
    frac = k.numerator - ((1 << m) if biased else 0)
    assert 0 <= frac < (1 << m)
    return sign | (biased << m) | frac
