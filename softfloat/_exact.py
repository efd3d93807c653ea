"""Exact scalars: parse ints, Fractions, Decimals and decimal/hex strings without rounding.

A scalar becomes an :class:`ExactValue`: a sign and either an exact rational magnitude, an
infinity or a NaN, together with the fixed-point form the rounding point takes (a 62-bit
significand with a sticky bit, and the exponent of its leading bit: :func:`to_significand`),
which loses nothing any rounding of at most 53 bits can see.

The work is bounded by the formats, not by the input.  Every format's range lies inside
float64's, so a magnitude at or above ``2**FAR_ABOVE`` overflows in every format and
rounding mode (float64 overflows from ``2**1024`` on), and one below ``2**FAR_BELOW`` lies
below half of every format's smallest subnormal (float64's half is ``2**-1075``).  Such
values are recognised from their exponent alone -- the digit count and decimal exponent of
a decimal string, the exponent of a hex float, the bit lengths of an int or a Fraction --
and round through a *stand-in*: a value just past the same bound, which every format and
mode rounds exactly as it rounds the input.

Exact integers are built only for small inputs (at most :data:`MAX_DIGITS` digits, and a
decimal exponent of at most MAX_DIGITS or a binary one of at most 4 * MAX_DIGITS), which
become exact Fractions wherever they lie, as before.  Beyond reach, larger inputs are not
expanded at all; within reach, longer digit strings are never converted to a Python int
(that conversion is quadratic, and refused beyond 4300 digits): their significand comes
from exact decimal arithmetic (``decimal`` with unbounded precision, quasi-linear in the
digits) or, for hex, from the leading bits and a sticky bit.

Cost: an input of a few dozen characters takes under 0.1 ms whatever its exponent, and
allocates a few KB; ints and Fractions (already in memory) take time linear in their size
(about 0.3 ms per 100,000 digits) and no more memory than a few of their terms; strings
and Decimals of L digits take time and memory linear in L (about 20 ms and 8 MB per
million digits).
"""

from __future__ import annotations

import decimal
import math
import numbers
import re
import unicodedata
from dataclasses import dataclass, field
from fractions import Fraction

from ._validate import describe, short_repr

__all__ = ["ExactValue", "parse_exact", "to_significand", "SIG_TOP", "FAR_ABOVE", "FAR_BELOW",
           "MAX_DIGITS", "format_fraction", "is_exact_scalar", "scientific", "scientific_text",
           "fits_exact_text", "scaled_ratio", "approximate_gap"]

#: the significand handed to the rounding point lies in [2**SIG_TOP, 2**(SIG_TOP + 1))
SIG_TOP = 61

#: |x| >= 2**FAR_ABOVE overflows in every format and every rounding mode (float64, the
#: widest range, rounds to +-inf or +-max from 2**1024 = max_finite + 1 ulp on)
FAR_ABOVE = 1100
#: |x| < 2**FAR_BELOW lies below half of every format's smallest subnormal (float64's
#: smallest subnormal is 2**-1074)
FAR_BELOW = -1200
#: digit strings (decimal or hex significands, ratio terms) longer than this are never
#: converted to a Python int; see the module docstring
MAX_DIGITS = 4000

#: a Fraction whose numerator bits + 3 x denominator bits exceed this has a decimal
#: expansion longer than Python converts (4300 digits): it is shown approximately
_MAX_TEXT_BITS = 12000

_HEX = re.compile(
    r"^\s*([+-])?0x(?=[0-9a-f]|\.[0-9a-f])([0-9a-f]*)(?:\.([0-9a-f]*))?(?:p([+-]?[0-9]+))?\s*$",
    re.IGNORECASE,
)
_SPECIAL = re.compile(r"^\s*([+-])?(inf|infinity|nan|snan)\s*$", re.IGNORECASE)
#: Fraction's grammar (after underscores are dropped and digits made ASCII): a ratio of
#: integers, or a decimal with an optional point and exponent
_NUMBER = re.compile(r"""
    ([+-]?)                         # sign
    (?=[0-9]|\.[0-9])               # a digit first, perhaps after the point
    ([0-9]*)                        # integer digits; a ratio's numerator
    (?: /([0-9]+)                   # a ratio's denominator
      | (?:\.([0-9]*))?             # or fraction digits
        (?:e([+-]?[0-9]+))?         #    and a decimal exponent
    )
    """, re.VERBOSE | re.IGNORECASE)

#: exact decimal arithmetic: results are exact or an exception says why not (only exact
#: operations are used: +, -, *, comparisons, integer divmod, scaleb)
_EXACT = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN,
                         traps=[decimal.InvalidOperation, decimal.Inexact, decimal.Overflow,
                                decimal.Underflow, decimal.DivisionByZero])
#: display arithmetic: 20 significant digits, any exponent
_ROUGH = decimal.Context(prec=20, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN, traps=[])
_LOG10_2 = decimal.Context(prec=70).log10(decimal.Decimal(2))

#: stand-in significand for values beyond reach: 1.00..01 (binary), the sticky bit set
_STAND_IN_SIG = (1 << SIG_TOP) | 1


@dataclass(frozen=True)
class ExactValue:
    """A real number exactly as given: ``kind`` is 'finite', 'inf' or 'nan'.

    For finite values, ``significand`` is ``(sig, e_top)``: |x| = sig * 2**(e_top - 61) up
    to the sticky bit 0 of sig (:func:`to_significand`), or for values beyond reach a
    stand-in that every format and mode rounds as it rounds |x| (see the module
    docstring); ``(0, 0)`` for zeros.  ``magnitude`` is |x| as a Fraction, or None for a
    string or Decimal that was not expanded: one with more than MAX_DIGITS digits or a
    larger exponent, and either beyond reach or too long to convert; ``text`` then holds
    |x| exactly, as written but normalised, e.g. ``'1e1000000000'``,
    ``'0x1p+10000000000'``, ``'1/3'`` or ``'3333...3e-1000000'``.
    """

    negative: bool
    kind: str = "finite"
    magnitude: Fraction | None = Fraction(0)
    signaling: bool = False
    significand: tuple[int, int] | None = field(default=None, repr=False)
    text: str | None = None

    def __post_init__(self) -> None:
        if self.kind == "finite" and self.significand is None:
            q = self.magnitude
            object.__setattr__(self, "significand", _ratio_significand(q.numerator, q.denominator))

    @property
    def reach(self) -> int:
        """+1 for |x| >= 2**FAR_ABOVE, -1 for 0 < |x| < 2**FAR_BELOW, else 0."""
        if self.kind != "finite":
            return 0
        sig, e_top = self.significand
        return 0 if sig == 0 else 1 if e_top >= FAR_ABOVE else -1 if e_top < FAR_BELOW else 0

    def proxy(self) -> Fraction:
        """|x| itself when expanded, else sig * 2**(e_top - 61): a value every format and
        mode rounds as it rounds |x|, and that lies on the same side as |x| of every
        value of every format."""
        if self.magnitude is not None:
            return self.magnitude
        sig, e_top = self.significand
        return sig * Fraction(2) ** (e_top - SIG_TOP)

    def __str__(self) -> str:
        sign = "-" if self.negative else ""
        if self.kind == "inf":
            return f"{sign}inf"
        if self.kind == "nan":
            return f"{sign}{'s' if self.signaling else ''}nan"
        if self.magnitude is None:
            return sign + self.text
        if not fits_exact_text(self.magnitude):
            return f"{sign}~{scientific_text(*scientific(self))}"
        return sign + format_fraction(self.magnitude)


def fits_exact_text(q: Fraction) -> bool:
    """True when :func:`format_fraction` can write ``q`` out (Python's int-to-str limit)."""
    return q.numerator.bit_length() + 3 * q.denominator.bit_length() <= _MAX_TEXT_BITS


def format_fraction(q: Fraction) -> str:
    """Exact decimal text of a dyadic or decimal rational; n/d when it does not terminate."""
    n, d = q.numerator, q.denominator
    twos = (d & -d).bit_length() - 1
    rest = d >> twos
    fives = 0
    while rest % 5 == 0:
        rest //= 5
        fives += 1
    if rest != 1:
        return f"{n}/{d}"
    digits = max(twos, fives)
    scaled = n * 10**digits // d
    if digits == 0:
        return str(scaled)
    text = str(scaled).rjust(digits + 1, "0")
    return f"{text[:-digits]}.{text[-digits:]}".rstrip("0").rstrip(".")


def is_exact_scalar(x: object) -> bool:
    """True for the scalar types that take the exact (arbitrary precision) path."""
    return isinstance(x, (str, Fraction, decimal.Decimal)) or (
        isinstance(x, numbers.Integral) and not isinstance(x, bool) and type(x).__module__ != "numpy"
    )


# =====================================================================================
# parsing
# =====================================================================================
def parse_exact(x: object, argname: str = "x") -> ExactValue:
    """Read an exact scalar: int, float, Fraction, Decimal, or a decimal/hex/special string.

    Work is linear in the size of ``x`` and independent of its exponent (see the module
    docstring): ``"1e1000000000"`` or ``"0x1p-1000000000000000000"`` take microseconds.

    Preconditions: none; a non-number raises TypeError, an unreadable string ValueError,
    each naming ``argname``.

    Examples
    --------
    >>> str(parse_exact("0x1.8p-3")), str(parse_exact("-0")), parse_exact("-0").negative
    ('0.1875', '-0', True)
    >>> v = parse_exact("-1e1000000000")
    >>> str(v), v.magnitude, v.reach
    ('-1e1000000000', None, 1)
    """
    if isinstance(x, bool):
        raise TypeError(f"{argname} must be a number; got {x!r} (bool)")
    if isinstance(x, numbers.Integral):
        v = int(x)
        return ExactValue(v < 0, magnitude=Fraction(-v if v < 0 else v))
    if isinstance(x, float):
        if math.isnan(x):
            return ExactValue(math.copysign(1.0, x) < 0, "nan")
        if math.isinf(x):
            return ExactValue(x < 0, "inf")
        return ExactValue(math.copysign(1.0, x) < 0, magnitude=abs(Fraction(x)))
    if isinstance(x, Fraction):
        return ExactValue(x < 0, magnitude=-x if x < 0 else x)
    if isinstance(x, decimal.Decimal):
        neg = x.is_signed()
        if x.is_nan():
            return ExactValue(neg, "nan", signaling=x.is_snan())
        if x.is_infinite():
            return ExactValue(neg, "inf")
        return _parse_string(str(x), argname)  # '-1.5E+1000000000': linear, any exponent
    if isinstance(x, str):
        return _parse_string(x, argname)
    raise TypeError(  # (arrays never come here: each caller reads them first, or refuses them)
        f"{argname} must be a number (an int, float, Fraction or Decimal) or a numeric string; got "
        f"{describe(x)}")


def _parse_string(text: str, argname: str) -> ExactValue:
    special = _SPECIAL.match(text)
    if special:
        neg = special.group(1) == "-"
        word = special.group(2).lower()
        if word.startswith("inf"):
            return ExactValue(neg, "inf")
        return ExactValue(neg, "nan", signaling=word == "snan")
    hexm = _HEX.match(text)
    if hexm:
        sign, whole, frac, exp = hexm.groups()
        return _from_hex(sign == "-", (whole or "") + (frac or ""), exp, 4 * len(frac or ""))
    stripped = text.strip().replace("_", "")
    if not stripped.isascii():
        stripped = "".join(_ascii_digit(c) for c in stripped)
    number = _NUMBER.fullmatch(stripped)
    if number:
        sign, whole, den, frac, exp = number.groups()
        if den is None:
            return _from_decimal(sign == "-", whole + (frac or ""), exp, len(frac or ""))
        if den.strip("0"):
            return _from_ratio(sign == "-", whole, den)
    shown = short_repr(text) + (f" ({len(text)} characters)" if len(text) > 60 else "")
    raise ValueError(
        f"{argname}={shown} is not a number softfloat can read exactly; use a decimal "
        "('6.36', '-1e-5'), a hex float ('0x1.8p-3'), a ratio ('1/3') with a non-zero "
        "denominator, 'inf' or 'nan'"
    )


def _ascii_digit(c: str) -> str:
    """Unicode decimal digits (which int() and Fraction() accept) as ASCII digits."""
    value = unicodedata.decimal(c, None)
    return c if value is None else str(value)


def _exponent(text: str | None) -> int:
    """A written exponent as an int; beyond MAX_DIGITS digits it is read as +-10**MAX_DIGITS
    (as far beyond every format as the written one: only explain's text differs)."""
    if text is None:
        return 0
    sign = -1 if text[0] == "-" else 1
    digits = text.lstrip("+-").lstrip("0")
    if len(digits) > MAX_DIGITS:
        return sign * 10**MAX_DIGITS
    return sign * int(digits or "0")


def _decimal_reach(adjusted: int) -> int:
    """Where x with 10**adjusted <= x < 10**(adjusted + 1) lies: +1 certainly at or above
    2**FAR_ABOVE, -1 certainly below 2**FAR_BELOW, 0 within reach (exact integer tests)."""
    if adjusted >= 0:
        return 1 if adjusted > 400 or 10**adjusted >= 1 << FAR_ABOVE else 0
    return -1 if adjusted < -400 or 10 ** (-adjusted - 1) >= 1 << -FAR_BELOW else 0


def _stand_in(negative: bool, reach: int, text: str) -> ExactValue:
    """A value beyond reach: not expanded; it rounds through a stand-in past the bound."""
    e_top = FAR_ABOVE if reach > 0 else FAR_BELOW - 1
    return ExactValue(negative, magnitude=None, significand=(_STAND_IN_SIG, e_top), text=text)


def _from_decimal(negative: bool, digits: str, exp: str | None, frac_len: int) -> ExactValue:
    """digits * 10**(exp - frac_len), decided from the digit count and exponent first."""
    body = digits.lstrip("0")
    if not body:
        return ExactValue(negative)  # zero, whatever the exponent
    significant = body.rstrip("0")
    exp10 = _exponent(exp) - frac_len + (len(body) - len(significant))
    if len(significant) <= MAX_DIGITS and abs(exp10) <= MAX_DIGITS:  # small: expand it
        n = int(significant)
        q = Fraction(n * 10**exp10) if exp10 >= 0 else Fraction(n, 10**-exp10)
        return ExactValue(negative, magnitude=q)
    text = significant + (f"e{exp10}" if exp10 else "")
    reach = _decimal_reach(exp10 + len(significant) - 1)
    if reach:
        return _stand_in(negative, reach, text)
    value = decimal.Decimal(f"{significant}e{exp10}")  # exact: |exp10| <= 400 + len
    return ExactValue(negative, magnitude=None, text=text,
                      significand=_decimal_significand(value, decimal.Decimal(1)))


def _from_ratio(negative: bool, num: str, den: str) -> ExactValue:
    """num/den (den non-zero); long terms are compared by their digit counts first."""
    num, den = num.lstrip("0"), den.lstrip("0")
    if not num:
        return ExactValue(negative)
    if len(num) <= MAX_DIGITS and len(den) <= MAX_DIGITS:
        return ExactValue(negative, magnitude=Fraction(int(num), int(den)))
    text = f"{num}/{den}"
    a = len(num) - len(den)  # 10**(a - 1) < num/den < 10**(a + 1)
    reach = 1 if _decimal_reach(a - 1) > 0 else -1 if _decimal_reach(a) < 0 else 0
    if reach:
        return _stand_in(negative, reach, text)
    return ExactValue(negative, magnitude=None, text=text,
                      significand=_decimal_significand(decimal.Decimal(num), decimal.Decimal(den)))


def _from_hex(negative: bool, digits: str, exp: str | None, frac_bits: int) -> ExactValue:
    """int(digits, 16) * 2**(exp - frac_bits), decided from its binary exponent first."""
    body = digits.lstrip("0").lower()
    if not body:
        return ExactValue(negative)
    significant = body.rstrip("0")
    exp2 = _exponent(exp) - frac_bits + 4 * (len(body) - len(significant))
    # |x| = 0xH.HHH...p(e_top - top bits of H)
    e_top = 4 * (len(significant) - 1) + int(significant[0], 16).bit_length() - 1 + exp2
    if len(significant) <= MAX_DIGITS and abs(exp2) <= 4 * MAX_DIGITS:  # small: expand it
        m = int(significant, 16)
        q = Fraction(m << exp2) if exp2 >= 0 else Fraction(m, 1 << -exp2)
        return ExactValue(negative, magnitude=q)
    lead_exp = exp2 + 4 * (len(significant) - 1)
    text = f"0x{significant[0]}{'.' if len(significant) > 1 else ''}{significant[1:]}p{lead_exp:+d}"
    if e_top >= FAR_ABOVE or e_top < FAR_BELOW:
        return _stand_in(negative, 1 if e_top >= FAR_ABOVE else -1, text)
    m = int(significant, 16)  # linear: hex needs no base conversion
    cut = m.bit_length() - (SIG_TOP + 1)  # the bits below the significand's 62
    sig = (m >> cut) | int(m & ((1 << cut) - 1) != 0) if cut > 0 else m << -cut
    return ExactValue(negative, magnitude=None, text=text, significand=(sig, e_top))


# =====================================================================================
# significands
# =====================================================================================
def to_significand(q: Fraction) -> tuple[int, int]:
    """Return ``(sig, e_top)`` with q = sig * 2**(e_top - SIG_TOP) up to a sticky bit.

    ``sig`` lies in [2**61, 2**62): the leading bit of q at bit 61, then 61 more bits, the
    last ORed with "anything non-zero below" (sticky).  For q == 0 returns (0, 0).  Exact
    for any q; linear in the size of q's terms plus |e_top|.
    """
    return _int_significand(q.numerator, q.denominator)


def _int_significand(n: int, d: int) -> tuple[int, int]:
    if n == 0:
        return 0, 0
    e_top = n.bit_length() - d.bit_length()
    if (n << max(-e_top, 0)) < (d << max(e_top, 0)):
        e_top -= 1  # 2**e_top <= q < 2**(e_top + 1)
    k = SIG_TOP - e_top
    num, den = (n << k, d) if k >= 0 else (n, d << -k)
    sig, rem = divmod(num, den)
    return sig | (rem != 0), e_top


def _ratio_significand(n: int, d: int) -> tuple[int, int]:
    """(sig, e_top) of n/d >= 0: decided from the bit lengths when beyond reach, else exact."""
    if n == 0:
        return 0, 0
    e = n.bit_length() - d.bit_length()  # 2**(e - 1) < n/d < 2**(e + 1)
    if e - 1 >= FAR_ABOVE:
        return _STAND_IN_SIG, FAR_ABOVE
    if e + 1 <= FAR_BELOW:
        return _STAND_IN_SIG, FAR_BELOW - 1
    return _int_significand(n, d)


def _pow2(e: int) -> decimal.Decimal:
    """2**e as an exact Decimal (5**-e * 10**e for negative e)."""
    return decimal.Decimal(1 << e) if e >= 0 else _EXACT.scaleb(decimal.Decimal(5 ** -e), e)


def _decimal_significand(n: decimal.Decimal, d: decimal.Decimal) -> tuple[int, int]:
    """(sig, e_top) of n/d for positive Decimals within reach, in exact decimal arithmetic
    (a few products and one integer division: quasi-linear in their digits)."""
    lead_n = float(_ROUGH.plus(n).scaleb(-n.adjusted()))
    lead_d = float(_ROUGH.plus(d).scaleb(-d.adjusted()))
    e = math.floor(math.log2(lead_n / lead_d) + (n.adjusted() - d.adjusted()) * math.log2(10))
    while n < _EXACT.multiply(d, _pow2(e)):  # the estimate is off by at most one
        e -= 1
    while n >= _EXACT.multiply(d, _pow2(e + 1)):
        e += 1
    k = SIG_TOP - e  # n/d * 2**k in [2**61, 2**62)
    num, den = (_EXACT.multiply(n, _pow2(k)), d) if k >= 0 else (n, _EXACT.multiply(d, _pow2(-k)))
    quotient, remainder = _EXACT.divmod(num, den)
    return int(quotient) | (not remainder.is_zero()), e


# =====================================================================================
# approximations, for display
# =====================================================================================
def scientific(value: ExactValue) -> tuple[decimal.Decimal, int]:
    """|x| of a finite non-zero value to about 20 digits as ``(coefficient, exp10)``: a
    Decimal in [1, 10) and an int, for any exponent; bounded work (leading digits only).

    >>> scientific(parse_exact("0x1p-10000000000"))       # 2.29185980455155474586e-3010299957
    (Decimal('2.2918598045515547459'), -3010299957)
    """
    if value.magnitude is not None:
        q = value.magnitude
        return scaled_ratio(q.numerator, q.denominator, 0)
    text = value.text
    if text.startswith("0x"):
        digits, _, exp = text[2:].replace(".", "").partition("p")
        top = digits[:24]
        return scaled_ratio(int(top, 16), 1, int(exp) - 4 * (len(top) - 1))
    if "/" in text:
        num, den = text.split("/")
        c = _ROUGH.divide(_leading(num), _leading(den))
        return _normalised(c, len(num) - len(den))
    digits, _, exp = text.partition("e")
    return _normalised(_ROUGH.plus(_leading(digits)), int(exp or 0) + len(digits) - 1)


def scaled_ratio(n: int, d: int, e2: int) -> tuple[decimal.Decimal, int]:
    """n/d * 2**e2 (n, d > 0) as ``(coefficient, exp10)``, from the leading 80 bits of n
    and d and a 70-digit log10(2): about 20 correct digits for |e2| up to 10**40."""
    sn, sd = max(n.bit_length() - 80, 0), max(d.bit_length() - 80, 0)
    c = _ROUGH.divide(decimal.Decimal(n >> sn), decimal.Decimal(d >> sd))
    e2 += sn - sd
    precise = decimal.Context(prec=70 + len(str(abs(e2))))
    exp = precise.multiply(decimal.Decimal(e2), _LOG10_2)  # 2**e2 = 10**exp
    whole = int(exp.to_integral_value(rounding=decimal.ROUND_FLOOR))
    c = _ROUGH.multiply(c, _ROUGH.power(decimal.Decimal(10), precise.subtract(exp, whole)))
    return _normalised(c, whole)


def _leading(digits: str) -> decimal.Decimal:
    """The first 25 digits of a digit string, as d.ddd."""
    return decimal.Decimal(f"{digits[0]}.{digits[1:25]}")


def _normalised(c: decimal.Decimal, exp10: int) -> tuple[decimal.Decimal, int]:
    shift = c.adjusted()
    return _ROUGH.scaleb(c, -shift), exp10 + shift


def scientific_text(coefficient: decimal.Decimal, exp10: int, digits: int = 17) -> str:
    """``coefficient * 10**exp10`` to ``digits`` significant digits, as '1.25e-7' or
    '1e+1000000000' (plain decimal for exponents from -5 to 16).

    >>> scientific_text(decimal.Decimal("2.2918598045515547459"), -3010299957)
    '2.2918598045515547e-3010299957'
    >>> scientific_text(decimal.Decimal("1.0000"), 9), scientific_text(decimal.Decimal("9.99999999999999999"), -7)
    ('1000000000', '1e-6')
    """
    c = decimal.Context(prec=digits).plus(coefficient)
    c, exp10 = _normalised(c, exp10)
    if -5 <= exp10 <= 16:
        return format(_ROUGH.normalize(c.scaleb(exp10)), "f")
    mantissa = format(_ROUGH.normalize(c), "f")
    return f"{mantissa}e{exp10:+d}"


def approximate_gap(value: ExactValue, q: Fraction, e2: int = 0) -> tuple[int, decimal.Decimal, int] | None:
    """``(q - |x|) * 2**e2`` to about 20 digits as ``(sign, coefficient, exp10)``, or None
    when it is zero, for a finite ``value`` and a dyadic ``q >= 0`` (a result of rounding
    it).  For values that were not expanded: beyond reach (or for q == 0) one term
    dominates, so the other needs no digits; within reach the difference is taken
    exactly from the given digits (no cancellation is lost), in time linear in them.

    >>> approximate_gap(parse_exact("1." + "0" * 5000 + "1"), Fraction(1))   # -1e-5001
    (-1, Decimal('1'), -5001)
    """
    if value.magnitude is not None:
        gap = q - value.magnitude
        return None if gap == 0 else (1 if gap > 0 else -1, *scaled_ratio(abs(gap.numerator), gap.denominator, e2))
    if value.reach > 0 or q == 0:
        return (-1, *_times(*scientific(value), e2))
    if value.reach < 0:
        return 1, *scaled_ratio(q.numerator, q.denominator, e2)
    text = value.text
    qn, qe = q.numerator, -(q.denominator.bit_length() - 1)  # q = qn * 2**qe
    if text.startswith("0x"):
        digits, _, exp = text[2:].replace(".", "").partition("p")
        m, me = int(digits, 16), int(exp) - 4 * (len(digits) - 1)
        low = min(qe, me)
        diff = (qn << (qe - low)) - (m << (me - low))  # (q - |x|) / 2**low
        return None if diff == 0 else (1 if diff > 0 else -1, *scaled_ratio(abs(diff), 1, low + e2))
    num, den = (text.split("/") if "/" in text else (text, "1"))
    n, d = decimal.Decimal(num), decimal.Decimal(den)
    diff = _EXACT.subtract(_EXACT.multiply(_EXACT.multiply(decimal.Decimal(qn), _pow2(qe)), d), n)
    if diff.is_zero():
        return None
    c = _ROUGH.divide(_EXACT.multiply(abs(diff), _pow2(e2)), d)
    return (1 if diff > 0 else -1, *_normalised(c, 0))


def _times(c: decimal.Decimal, exp10: int, e2: int) -> tuple[decimal.Decimal, int]:
    """c * 10**exp10 * 2**e2, for display."""
    c2, e = scaled_ratio(1, 1, e2)
    return _normalised(_ROUGH.multiply(c, c2), exp10 + e)
