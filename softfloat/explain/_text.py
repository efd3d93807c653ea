"""Text of numbers and bit patterns for the explanations: exact decimals, ~17-digit approximations, fields."""

from __future__ import annotations

import decimal
from fractions import Fraction

from .. import _exact, _validate
from ..formats import Format, as_format

#: exact decimals longer than this are shown abbreviated in ``str()`` (never in to_dict)
_MAX_DIGITS_SHOWN = 160


def bit_string(bits: int, fmt: Format | str) -> str:
    """A bit pattern of ``fmt`` grouped ``sign exponent fraction``.

    >>> bit_string(0x3C01, "fp16")
    '0 01111 0000000001'
    """
    fmt = as_format(fmt)
    arr = _validate.bit_patterns("bits", bits, fmt.bits)
    if arr.ndim:
        raise TypeError(f"bits must be one bit pattern (an int); got {_validate.describe(arr)}: bit_string "
                        "writes one pattern, so write an array's one at a time")
    bits = int(arr)
    m, e = fmt.mantissa_bits, fmt.exponent_bits
    return " ".join((str(bits >> (fmt.bits - 1)), field_text(bits >> m, e), field_text(bits, m)))


def field_text(value: int, width: int) -> str:
    return format(value & ((1 << width) - 1), f"0{width}b")


def hex_text(bits: int, fmt: Format) -> str:
    return f"0x{bits:0{(fmt.bits + 3) // 4}x}"


def ulp_text(ulp: Fraction) -> str:
    exponent = ulp.numerator.bit_length() - ulp.denominator.bit_length()  # ulp = 2**exponent
    return f"2^{exponent} = {show(ulp)}"


def ulps_text(x) -> str:
    if isinstance(x, float):
        return f"{x} ulp"
    text = value_text(x)
    return f"{text} ulp" if len(text) <= 24 and "/" not in text else f"~{approx(x)} ulp"


def value_text(x, negative_zero: bool = False) -> str | None:
    """Exact decimal text of a Fraction ('1/3' when it does not terminate); floats as
    'inf', '-inf', 'nan'; None stays None."""
    if x is None:
        return None
    if isinstance(x, float):
        return repr(x)
    sign = "-" if x < 0 or (x == 0 and negative_zero) else ""
    if not _exact.fits_exact_text(x):
        return f"~{approx(x)}"  # beyond Python's int-to-str limit: approximate
    return sign + _exact.format_fraction(abs(x))


def title_text(x) -> str:
    """The input as the user wrote it, cut to 60 characters (huge ints by their size)."""
    text = x if isinstance(x, str) else _validate.short_repr(x) if isinstance(x, (int, Fraction)) else str(x)
    return text if len(text) <= 60 else text[:57] + "..."


def exact_text(exact: Fraction | None, negative: bool) -> str | None:
    return None if exact is None else value_text(exact, negative)


def show(x, negative_zero: bool = False) -> str:
    """Display text: exact when short, else ~17 digits (the exact text is in to_dict)."""
    text = value_text(x, negative_zero)
    if isinstance(x, float):
        return text
    if text.startswith("~"):
        return text
    if "/" in text:
        return f"{text} (~{approx(x)})"
    if len(text) > _MAX_DIGITS_SHOWN:
        return f"~{approx(x)} (exact decimal: {sum(c.isdigit() for c in text)} digits)"
    return text


def approx(q: Fraction) -> str:
    """About 17 significant digits of ``q``, for display only (any magnitude; bounded work:
    terms beyond 20,000 bits are read from their leading bits)."""
    if not q:
        return "0"
    if max(q.numerator.bit_length(), q.denominator.bit_length()) > 20000:
        sign = "-" if q < 0 else ""
        return sign + _exact.scientific_text(*_exact.scaled_ratio(abs(q.numerator), q.denominator, 0))
    with decimal.localcontext() as ctx:
        ctx.prec = 17
        d = decimal.Decimal(q.numerator) / decimal.Decimal(q.denominator)
        return format(d.normalize(), "g")


#: to_dict writes an unexpanded input's exact text up to this length (else ~17 digits)
MAX_TEXT_CHARS = 4000


def given_text(given: _exact.ExactValue, limit: int = _MAX_DIGITS_SHOWN) -> str:
    """An unexpanded input in its own exact form ('1e1000000000', '0x1p+10000000000'),
    or, beyond ``limit`` characters, ~17 digits and its size."""
    sign = "-" if given.negative else ""
    text = given.text
    approx = _exact.scientific_text(*_exact.scientific(given))
    if len(text) > limit:
        if text.startswith("0x"):
            size = f"exact hex float: {len(text) - 4 - len(text.partition('p')[2])} hex digits"
        elif "/" in text:
            num, den = text.split("/")
            size = f"exact ratio of {len(num)}- and {len(den)}-digit integers"
        else:
            size = f"exact decimal: {len(text.partition('e')[0])} significant digits"
        return f"{sign}~{approx} ({size}, not expanded)"
    if text.startswith("0x") and limit == _MAX_DIGITS_SHOWN:
        return f"{sign}{text} (~{sign}{approx})"
    return sign + text


def approx_error(given: _exact.ExactValue, value, ulp: Fraction) -> tuple[str | None, str | None]:
    """``value - x`` and the same in ulps, to 17 digits, for an input that was not
    expanded (exact arithmetic on its digits where they matter: see approximate_gap)."""
    if not isinstance(value, Fraction):  # infinite or NaN results: error is exact or None
        return value_text(value if value == value else None), value_text(value if value == value else None)
    k = ulp.numerator.bit_length() - ulp.denominator.bit_length()  # ulp = 2**k
    texts = []
    for e2 in (0, -k):
        gap = _exact.approximate_gap(given, abs(value), e2)  # |value| - |x|, scaled
        if gap is None:
            texts.append("0")
            continue
        sign, c, e = gap
        negative = (sign < 0) != given.negative  # value - x = sign(x) * (|value| - |x|)
        texts.append(f"~{'-' if negative else ''}{_exact.scientific_text(c, e)}")
    return texts[0], texts[1]
