"""One value: the Explanation of how it rounds into a format, its views, and how it is built."""

from __future__ import annotations

import html
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .. import _exact, _validate
from ..attributes import RoundingAttributes
from ..codec import classify, encode
from ..formats import Format, fp64, native_format
from ..rounding import Rounding
from ._story import Case, Neighbour, Story, decoded, special_decision
from ._text import (
    MAX_TEXT_CHARS,
    approx_error,
    bit_string,
    exact_text,
    field_text,
    given_text,
    hex_text,
    show,
    title_text,
    ulp_text,
    ulps_text,
    value_text,
)

FLAG_MEANINGS = {
    "invalid": "invalid (no meaningful result in this format)",
    "divide_by_zero": "divide_by_zero",
    "overflow": "overflow (rounded beyond the largest finite value)",
    "underflow": "underflow (tiny and inexact)",
    "inexact": "inexact (the result differs from the input)",
}


@dataclass(frozen=True)
class Explanation:
    """How one value was rounded into a format; print it, or read its attributes.

    ``str()`` gives the teaching text, ``_repr_html_()`` the notebook view and
    :meth:`to_dict` a JSON-ready dictionary.  All numbers here are exact: values are
    :class:`~fractions.Fraction` objects (``float`` only for infinities and NaN).

    Attributes
    ----------
    input : object
        The value as given.
    exact : Fraction or None
        Its exact value (signed); None for infinities and NaNs, and for inputs given in
        a form too large to expand: a decimal or hex exponent beyond every format's range
        (beyond 2**1100 or below 2**-1200, where the exponent alone decides the
        rounding) or more than 4000 digits.  The text views then show the input's own
        exact form (such as ``1e1000000000``) and the error to 17 digits.
    negative : bool
        Its sign (True for -0 too).
    format : Format
    rounding : Rounding
    bits : int
        The bit pattern :func:`softfloat.encode` returned.
    value : Fraction or float
        The exact value of ``bits`` (``float`` for infinities and NaN).
    below, above : Neighbour or None
        The representable values just below and just above the input (equal to each
        other when the input is representable); None where the format has none (NaN
        input, or beyond the largest finite value of a format without infinity).
    ulp : Fraction or None
        The spacing of the format at the input (for inputs beyond the largest finite
        value: the spacing at the largest finite value).
    guard, round, sticky : int or None
        The first and second bits of the input below the last kept fraction bit, and
        the OR of all bits further below; None where no rounding position applies.
    decision : str
        Why the result is what it is, in words.
    error : Fraction or float or None
        ``value - exact``, exact; ``+-inf`` after an overflow to infinity; None when
        the input or the result is NaN, or when ``exact`` is None.
    error_ulps : Fraction or float or None
        ``error / ulp``.
    flags : tuple of str
        The IEEE exceptions raised, in IEEE order.

    Examples
    --------
    >>> e = explain("0.1", "bf16")
    >>> e.bit_string, float(e.value), e.below.value, e.above.value
    ('0 01111011 1001101', 0.10009765625, Fraction(51, 512), Fraction(205, 2048))
    >>> (e.guard, e.round, e.sticky), e.flags
    ((1, 1, 1), ('inexact',))
    >>> e.to_dict()["decision"]
    'guard=1, round=1, sticky=1: above the midpoint, rounds up'
    """

    input: object
    exact: Fraction | None
    negative: bool
    format: Format
    rounding: Rounding
    bits: int
    value: Fraction | float
    below: Neighbour | None
    above: Neighbour | None
    ulp: Fraction | None
    guard: int | None
    round: int | None
    sticky: int | None
    decision: str
    error: Fraction | float | None
    error_ulps: Fraction | float | None
    flags: tuple[str, ...]

    # -- fields of the result ---------------------------------------------------------
    @property
    def sign(self) -> int:
        return self.bits >> (self.format.bits - 1)

    @property
    def biased_exponent(self) -> int:
        return (self.bits & self.format.exponent_mask) >> self.format.mantissa_bits

    @property
    def fraction(self) -> int:
        """The trailing significand field, as an integer."""
        return self.bits & self.format.mantissa_mask

    @property
    def ieee_class(self) -> str:
        """IEEE 754 class of the result, e.g. 'positiveNormal' (see :func:`classify`)."""
        # one-element list: classify() of a bare scalar pattern is not relied on here
        return str(classify([self.bits], self.format)[0])

    @property
    def exponent(self) -> int | None:
        """Unbiased exponent E of the result (emin for subnormals and zeros); None for
        infinities and NaNs."""
        if self.ieee_class.endswith(("NaN", "Infinity")):
            return None
        return max(self.biased_exponent, 1) - self.format.bias

    @property
    def bit_string(self) -> str:
        """The result's bits grouped ``sign exponent fraction``."""
        return bit_string(self.bits, self.format)

    # -- views ------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The explanation as plain JSON-ready data; exact values as decimal strings
        (``~`` and 17 digits for values whose exact text would be too long, and for the
        errors of inputs that were not expanded)."""
        unexpanded = self._unexpanded()
        error, error_ulps = (value_text(self.error), value_text(self.error_ulps))
        if unexpanded is not None and self.error is None:
            error, error_ulps = approx_error(unexpanded, self.value, self.ulp)
        return {
            "input": _validate.short_repr(self.input, 1 << 62),
            "exact": (given_text(unexpanded, limit=MAX_TEXT_CHARS) if unexpanded is not None
                      else exact_text(self.exact, self.negative)),
            "format": self.format.name,
            "rounding": self.rounding.value,
            "bits": self.bits,
            "hex": hex_text(self.bits, self.format),
            "bit_string": self.bit_string,
            "sign": self.sign,
            "biased_exponent": self.biased_exponent,
            "exponent": self.exponent,
            "fraction": self.fraction,
            "value": value_text(self.value),
            "class": self.ieee_class,
            "below": None if self.below is None else value_text(self.below.value),
            "above": None if self.above is None else value_text(self.above.value),
            "ulp": value_text(self.ulp),
            "guard": self.guard,
            "round": self.round,
            "sticky": self.sticky,
            "decision": self.decision,
            "error": error,
            "error_ulps": error_ulps,
            "flags": list(self.flags),
        }

    def _unexpanded(self) -> _exact.ExactValue | None:
        """The parsed input when it is finite but was not expanded (``exact`` is None)."""
        if self.exact is not None or self.ulp is None:
            return None
        return exact_input(self.input)

    def _rows(self) -> list[tuple[str, str]]:
        fmt = self.format
        unexpanded = self._unexpanded()
        rows = [
            ("input", _validate.describe(self.input)),
            ("exactly", _exact_row(self) if unexpanded is None else given_text(unexpanded)),
            ("bits", f"{self.bit_string}  ({hex_text(self.bits, fmt)})"),
            ("sign", f"{self.sign} ({'-' if self.sign else '+'})"),
            ("exponent", _exponent_text(self)),
            ("fraction", f"{field_text(self.fraction, fmt.mantissa_bits)} = {self.fraction}"),
            ("value", _formula(self)),
            ("class", self.ieee_class),
        ]
        for name, nb in (("below", self.below), ("above", self.above)):
            rows.append((name, _neighbour_text(nb, self)))
        if self.ulp is not None:
            rows.append(("ulp", ulp_text(self.ulp)))
        rows.append(("rounding", self.decision))
        if self.error is not None:
            rows.append(("error", f"{show(self.error)} = {ulps_text(self.error_ulps)}"))
        elif unexpanded is not None and self.value == self.value:
            error, error_ulps = approx_error(unexpanded, self.value, self.ulp)
            rows.append(("error", f"{error} = {error_ulps} ulp"))
        meanings = [FLAG_MEANINGS[f] for f in self.flags]
        rows.append(("flags", ", ".join(meanings) if meanings else "none"))
        return rows

    def _title(self) -> str:
        return f"{title_text(self.input)} -> {self.format.name} (rounding={self.rounding.value})"

    def __str__(self) -> str:
        lines = [self._title()]
        lines += [f"  {name:<9} {text}" for name, text in self._rows()]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"<Explanation {self.input!r} -> {self.format.name} "
                f"{hex_text(self.bits, self.format)} ({self.rounding.value})>")

    def _repr_html_(self) -> str:
        """Notebook view: a table, with the sign, exponent and fraction bits coloured."""
        s, e, f = self.bit_string.split(" ")
        colored = (f'<span style="color:#c0392b">{s}</span> '
                   f'<span style="color:#2471a3">{e}</span> '
                   f'<span style="color:#1e8449">{f}</span>')
        cells = [(name, colored if name == "bits" else html.escape(text))
                 for name, text in self._rows()]
        body = "".join(f"<tr><th style='text-align:left'>{html.escape(name)}</th>"
                       f"<td style='text-align:left'><code>{cell}</code></td></tr>"
                       for name, cell in cells)
        return (f"<div><b>{html.escape(self._title())}</b>"
                f"<div><code>{self.bit_string}</code> ({hex_text(self.bits, self.format)})</div>"
                f"<table>{body}</table></div>")


def _exponent_text(e: Explanation) -> str:
    fmt = e.format
    field = field_text(e.biased_exponent, fmt.exponent_bits)
    if e.exponent is None and fmt.has_infinity:
        return f"{field}: all ones, reserved for infinity and NaN"
    if e.exponent is None:
        return f"{field}: part of {fmt.name}'s single NaN pattern ({bit_string(e.bits, fmt)})"
    if e.biased_exponent == 0:
        return f"{field} = 0: subnormal or zero, scale 2^emin = 2^{fmt.emin}"
    return (f"{field} = {e.biased_exponent} biased, "
            f"{e.biased_exponent} - {fmt.bias} = {e.exponent} unbiased")


def _formula(e: Explanation) -> str:
    """(-1)^s x 1.M x 2^E for normals, (-1)^s x 0.M x 2^emin below; words for specials."""
    if e.exponent is None:
        return value_text(e.value).replace("nan", "NaN").replace("inf", "infinity")
    lead = "1" if e.biased_exponent else "0"
    frac = field_text(e.fraction, e.format.mantissa_bits)
    value = show(e.value, bool(e.sign))
    return f"(-1)^{e.sign} x {lead}.{frac} (binary) x 2^{e.exponent} = {value}"


def _neighbour_text(nb: Neighbour | None, e: Explanation) -> str:
    if nb is None:
        if e.exact is None:
            return "none (the input is not a finite number)"
        return f"none ({e.format.name} has no value beyond {show(Fraction(e.format.max_finite))})"
    tag = "  (the result)" if nb.bits == e.bits else ""
    if e.below is not None and e.above is not None and e.below.bits == e.above.bits:
        return f"{show(nb.value)}{tag}"
    return f"{show(nb.value)}  {bit_string(nb.bits, e.format)}{tag}"


def _exact_row(e: Explanation) -> str:
    return "(not a finite number)" if e.exact is None else show(e.exact, e.negative)


# =====================================================================================
# explaining one value
# =====================================================================================
def explain_value(x, given: _exact.ExactValue, fmt: Format, attrs: RoundingAttributes, rng) -> Explanation:
    """Round ``x``, whose exact value is ``given``, with :func:`softfloat.encode` and
    explain the bits and flags it returned."""
    bits, flags = encode(x, fmt, attributes=attrs, rng=rng, return_flags=True)
    bits = int(bits)
    case = Case(given, decoded(bits, fmt), fmt, attrs.rounding, flags.raised(), attrs.saturate, attrs.subnormals)
    return describe(x, case, bits)


def describe(x, case: Case, bits: int, special: str | None = None) -> Explanation:
    """The Explanation of ``bits`` (their value and flags are in ``case``) as the rounding
    of ``x``, whose exact value is ``case.given``.  ``special`` replaces the decision for
    an infinite or NaN ``case.given``."""
    given, fmt = case.given, case.fmt
    common = dict(input=x, negative=given.negative, format=fmt, rounding=case.mode, bits=bits,
                  value=case.value, flags=case.raised)
    if given.kind != "finite":
        return Explanation(exact=None, below=None, above=None, ulp=None, guard=None,
                           round=None, sticky=None, error=None, error_ulps=None,
                           decision=special or special_decision(case), **common)
    # |x| itself, or for an input that was not expanded a stand-in that rounds as |x|
    # does and lies on the same side of every value of every format
    q = given.proxy()
    signed = -q if given.negative else q
    exact = None if given.magnitude is None else signed
    below, above = _neighbour(x, fmt, "downward", signed), _neighbour(x, fmt, "upward", signed)
    story = Story.tell(case, below, above)
    error = _error(case.value, exact)
    grs = story.grs or (None, None, None)
    return Explanation(exact=exact, below=below, above=above, ulp=story.ulp, guard=grs[0],
                       round=grs[1], sticky=grs[2], decision=story.text, error=error,
                       error_ulps=None if error is None else error / story.ulp, **common)


def scalar(x):
    """Unwrap 0-d arrays; refuse arrays and sequences with a pointer to the array API."""
    if isinstance(x, np.ndarray) and x.ndim == 0:
        return x[()]
    if isinstance(x, (np.ndarray, list, tuple)):
        raise TypeError(
            f"x must be one scalar number; got {_validate.describe(x)}. explain() describes "
            "one value at a time: use softfloat.encode or quantize for arrays, or explain "
            "each element"
        )
    return x


def exact_input(x) -> _exact.ExactValue:
    """The exact value of ``x``; float16/float32 scalars are exact as Python floats."""
    source = native_format(getattr(x, "dtype", None))
    if not isinstance(x, np.generic) or source is None or source == fp64:  # np.float64 is a float
        return _exact.parse_exact(x, "x")
    value = _exact.parse_exact(float(x), "x")
    if value.kind == "nan":  # float() may quiet a signaling NaN: read its quiet bit
        quiet = int(x.view(source.storage_dtype)) >> (source.mantissa_bits - 1) & 1
        value = _exact.ExactValue(value.negative, "nan", signaling=not quiet)
    return value


def _error(value, exact: Fraction | None):
    """value - exact, exactly; +-inf for an infinite result, None for a NaN result (and
    for a finite result when the input was not expanded)."""
    if isinstance(value, Fraction):
        return None if exact is None else value - exact
    return None if value != value else value


def _neighbour(x, fmt: Format, direction: str, exact: Fraction) -> Neighbour | None:
    """The representable value next to ``x`` in ``direction``, if it brackets ``x``.

    It does not where the format has no value on that side: beyond the largest finite
    value, formats without infinity give NaN (fn, fnuz) or saturate (FP6/FP4).
    """
    bits = int(encode(x, fmt, direction))
    value = decoded(bits, fmt)
    if value != value:  # NaN
        return None
    brackets = value <= exact if direction == "downward" else value >= exact
    return Neighbour(bits, value) if brackets else None
