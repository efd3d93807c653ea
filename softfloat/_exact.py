"""Exact scalars: parse ints, Fractions, Decimals and decimal/hex strings without rounding.

A scalar becomes an :class:`ExactValue`: a sign and either an exact rational magnitude, an
infinity or a NaN.  :func:`to_significand` then reduces a rational to the fixed-point form
the rounding point takes (62-bit significand with a sticky bit, and the exponent of its
leading bit), which loses nothing any rounding of at most 53 bits can see.
"""

from __future__ import annotations

import decimal
import math
import numbers
import re
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["ExactValue", "parse_exact", "to_significand", "SIG_TOP"]

#: the significand handed to the rounding point lies in [2**SIG_TOP, 2**(SIG_TOP + 1))
SIG_TOP = 61

_HEX = re.compile(
    r"^\s*([+-])?0x(?=[0-9a-f]|\.[0-9a-f])([0-9a-f]*)(?:\.([0-9a-f]*))?(?:p([+-]?[0-9]+))?\s*$",
    re.IGNORECASE,
)
_SPECIAL = re.compile(r"^\s*([+-])?(inf|infinity|nan|snan)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class ExactValue:
    """A real number exactly as given: ``kind`` is 'finite', 'inf' or 'nan'."""

    negative: bool
    kind: str = "finite"
    magnitude: Fraction = Fraction(0)
    signaling: bool = False

    def __str__(self) -> str:
        sign = "-" if self.negative else ""
        if self.kind == "inf":
            return f"{sign}inf"
        if self.kind == "nan":
            return f"{sign}{'s' if self.signaling else ''}nan"
        return sign + format_fraction(self.magnitude)


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


def parse_exact(x: object, argname: str = "x") -> ExactValue:
    """Read an exact scalar: int, float, Fraction, Decimal, or a decimal/hex/special string.

    >>> str(parse_exact("0x1.8p-3")), str(parse_exact("-0")), parse_exact("-0").negative
    ('0.1875', '-0', True)
    """
    if isinstance(x, bool):
        raise TypeError(f"{argname} must be a number; got {x!r} (bool)")
    if isinstance(x, numbers.Integral):
        v = int(x)
        return ExactValue(v < 0, magnitude=Fraction(abs(v)))
    if isinstance(x, float):
        if math.isnan(x):
            return ExactValue(math.copysign(1.0, x) < 0, "nan")
        if math.isinf(x):
            return ExactValue(x < 0, "inf")
        return ExactValue(math.copysign(1.0, x) < 0, magnitude=abs(Fraction(x)))
    if isinstance(x, Fraction):
        return ExactValue(x < 0, magnitude=abs(x))
    if isinstance(x, decimal.Decimal):
        neg = x.is_signed()
        if x.is_nan():
            return ExactValue(neg, "nan", signaling=x.is_snan())
        if x.is_infinite():
            return ExactValue(neg, "inf")
        return ExactValue(neg, magnitude=abs(Fraction(x)))
    if isinstance(x, str):
        return _parse_string(x, argname)
    raise TypeError(
        f"{argname} must be a number, a numeric string or an array; got {type(x).__name__} {x!r:.60}"
    )


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
        frac = frac or ""
        mant = int((whole or "") + frac or "0", 16)
        e = int(exp or 0) - 4 * len(frac)
        mag = Fraction(mant * 2**e) if e >= 0 else Fraction(mant, 2**-e)
        return ExactValue(sign == "-", magnitude=mag)
    stripped = text.strip().replace("_", "")
    try:
        q = Fraction(stripped)
    except (ValueError, ZeroDivisionError):
        raise ValueError(
            f"{argname}={text!r} is not a number softfloat can read exactly; use a decimal "
            "('6.36', '-1e-5'), a hex float ('0x1.8p-3'), a ratio ('1/3'), 'inf' or 'nan'"
        ) from None
    return ExactValue(stripped.startswith("-"), magnitude=abs(q))


def to_significand(q: Fraction) -> tuple[int, int]:
    """Return ``(sig, e_top)`` with q = sig * 2**(e_top - SIG_TOP) up to a sticky bit.

    ``sig`` lies in [2**61, 2**62): the leading bit of q at bit 61, then 61 more bits, the
    last ORed with "anything non-zero below" (sticky).  For q == 0 returns (0, 0).
    """
    if q == 0:
        return 0, 0
    n, d = q.numerator, q.denominator
    e_top = n.bit_length() - d.bit_length()
    if (n << max(-e_top, 0)) < (d << max(e_top, 0)):
        e_top -= 1  # 2**e_top <= q < 2**(e_top + 1)
    k = SIG_TOP - e_top
    num, den = (n << k, d) if k >= 0 else (n, d << -k)
    sig, rem = divmod(num, den)
    return sig | (rem != 0), e_top
