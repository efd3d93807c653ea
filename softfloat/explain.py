"""The teaching view: how one number -- or one operation's exact result -- becomes bits of
a format, and why those bits.

:func:`explain` rounds a single value with :func:`softfloat.encode` (the library's one
rounding point) and then *describes* the result: the exact input, the bit fields, the two
representable neighbours that bracket the input, the guard/round/sticky bits and the rule
that picked the neighbour, the error in absolute terms and in ulps, and the flags.  The
description is exact rational arithmetic on values that ``encode`` and ``decode``
produced; it never chooses bits itself, and it checks that its story matches the bits.

Given one operation (``"2048 + 1"``, ``"sqrt(2)"``, ``"fma(a, b, c)"``) it does the same
for the operation's exact result, with the bits and flags that :mod:`softfloat.ops`
returned: the operands are rounded into the format first, and each is explained too.
"""

from __future__ import annotations

import decimal
import html
import math
import re
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from . import _exact, _validate
from ._options import policy_from_options
from .codec import classify, decode, encode
from .formats import Format, as_format, fp16, fp32
from .ops import add, div, fma, mul, sqrt, sub
from .rounding import Rounding, as_rounding

__all__ = ["Explanation", "Neighbour", "OperationExplanation", "bit_string", "explain", "parse_operation"]

#: exact decimals longer than this are shown abbreviated in ``str()`` (never in to_dict)
_MAX_DIGITS_SHOWN = 160

_FLAG_MEANINGS = {
    "invalid": "invalid (no meaningful result in this format)",
    "divide_by_zero": "divide_by_zero",
    "overflow": "overflow (rounded beyond the largest finite value)",
    "underflow": "underflow (tiny and inexact)",
    "inexact": "inexact (the result differs from the input)",
}


@dataclass(frozen=True)
class Neighbour:
    """A representable value next to the input: its bit pattern and exact value.

    ``value`` is a :class:`~fractions.Fraction` for finite values, ``float('inf')`` or
    ``-inf`` for infinities.
    """

    bits: int
    value: Fraction | float


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
        error, error_ulps = (_value_text(self.error), _value_text(self.error_ulps))
        if unexpanded is not None and self.error is None:
            error, error_ulps = _approx_error(unexpanded, self.value, self.ulp)
        return {
            "input": _validate.short_repr(self.input, 1 << 62),
            "exact": (_given_text(unexpanded, limit=_MAX_TEXT_CHARS) if unexpanded is not None
                      else _exact_text(self.exact, self.negative)),
            "format": self.format.name,
            "rounding": self.rounding.value,
            "bits": self.bits,
            "hex": _hex(self.bits, self.format),
            "bit_string": self.bit_string,
            "sign": self.sign,
            "biased_exponent": self.biased_exponent,
            "exponent": self.exponent,
            "fraction": self.fraction,
            "value": _value_text(self.value),
            "class": self.ieee_class,
            "below": None if self.below is None else _value_text(self.below.value),
            "above": None if self.above is None else _value_text(self.above.value),
            "ulp": _value_text(self.ulp),
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
        return _exact_input(self.input)

    def _rows(self) -> list[tuple[str, str]]:
        fmt = self.format
        unexpanded = self._unexpanded()
        rows = [
            ("input", _validate.describe(self.input)),
            ("exactly", _exact_row(self) if unexpanded is None else _given_text(unexpanded)),
            ("bits", f"{self.bit_string}  ({_hex(self.bits, fmt)})"),
            ("sign", f"{self.sign} ({'-' if self.sign else '+'})"),
            ("exponent", _exponent_text(self)),
            ("fraction", f"{_field(self.fraction, fmt.mantissa_bits)} = {self.fraction}"),
            ("value", _formula(self)),
            ("class", self.ieee_class),
        ]
        for name, nb in (("below", self.below), ("above", self.above)):
            rows.append((name, _neighbour_text(nb, self)))
        if self.ulp is not None:
            rows.append(("ulp", _ulp_text(self.ulp)))
        rows.append(("rounding", self.decision))
        if self.error is not None:
            rows.append(("error", f"{_show(self.error)} = {_ulps_text(self.error_ulps)}"))
        elif unexpanded is not None and self.value == self.value:
            error, error_ulps = _approx_error(unexpanded, self.value, self.ulp)
            rows.append(("error", f"{error} = {error_ulps} ulp"))
        meanings = [_FLAG_MEANINGS[f] for f in self.flags]
        rows.append(("flags", ", ".join(meanings) if meanings else "none"))
        return rows

    def _title(self) -> str:
        return f"{_title_text(self.input)} -> {self.format.name} (rounding={self.rounding.value})"

    def __str__(self) -> str:
        lines = [self._title()]
        lines += [f"  {name:<9} {text}" for name, text in self._rows()]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"<Explanation {self.input!r} -> {self.format.name} "
                f"{_hex(self.bits, self.format)} ({self.rounding.value})>")

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
                f"<div><code>{self.bit_string}</code> ({_hex(self.bits, self.format)})</div>"
                f"<table>{body}</table></div>")


# =====================================================================================
# the public function
# =====================================================================================
def explain(x, fmt, rounding="nearest_even", *, saturate=False, subnormals=True,
            tininess="after", rng=None) -> Explanation:
    """Round one value into ``fmt`` and explain the result bit by bit.

    The bits come from :func:`softfloat.encode` with the same arguments; ``explain``
    adds the description: exact input, fields, the bracketing neighbours (from
    ``encode`` with ``"downward"`` and ``"upward"``), guard/round/sticky bits and the
    rule that chose between the neighbours, exact error in ulps, and the flags.

    Parameters
    ----------
    x : scalar
        A Python int or float, a numpy scalar, a ``Fraction`` or ``Decimal``, or a
        string (``"6.36"`` is the exact decimal 6.36; ``"0x1.8p-3"``, ``"1/3"``,
        ``"inf"``, ``"nan"`` also work).  A float is explained from its exact binary
        value.

        A string that is no number but one operation -- ``"2048 + 1"``, ``"0.1 * 3"``,
        ``"1 / 3"``, ``"sqrt(2)"``, ``"fma(1.5, 2, -3)"`` -- explains that operation:
        each operand is rounded into ``fmt`` with the same options (a stochastic
        ``rng`` draws for the operands first, then for the operation), the operation
        runs (:func:`softfloat.add`, ``sub``, ``mul``, ``div``, ``sqrt``, ``fma``), and
        its exact result's rounding is explained with the operation's bits and flags.
        ``"1/3"`` without spaces is a ratio, one number.
    fmt : Format or str
    rounding, saturate, subnormals, tininess, rng
        As for :func:`softfloat.encode` (``rng`` is used only by stochastic rounding: a
        seed or Generator makes the draw reproducible, ``rng=None`` draws fresh entropy;
        the deterministic modes ignore it).

    Returns
    -------
    Explanation, or OperationExplanation for an operation
        Print it, show it in a notebook, or call ``.to_dict()``.

    Raises
    ------
    TypeError
        ``x`` is not a scalar number (explain arrays element by element).

    Notes
    -----
    The work is bounded as for :func:`softfloat.encode`: an input far beyond every
    format's range (``"1e1000000000"``, ``Fraction(1, 10**100000)``) is explained from its
    exponent, without expanding it -- its neighbours, ulp and rounding story are exact,
    its error is shown to 17 digits -- in a few milliseconds; long digit strings take
    time linear in their length.

    Examples
    --------
    >>> print(explain(0.875, "fp32"))
    0.875 -> fp32 (rounding=nearest_even)
      input     0.875 (float)
      exactly   0.875
      bits      0 01111110 11000000000000000000000  (0x3f600000)
      sign      0 (+)
      exponent  01111110 = 126 biased, 126 - 127 = -1 unbiased
      fraction  11000000000000000000000 = 6291456
      value     (-1)^0 x 1.11000000000000000000000 (binary) x 2^-1 = 0.875
      class     positiveNormal
      below     0.875  (the result)
      above     0.875  (the result)
      ulp       2^-24 = 0.000000059604644775390625
      rounding  guard=0, round=0, sticky=0: exact, representable in fp32: no rounding
      error     0 = 0 ulp
      flags     none

    A tie in FP4 (E2M1): 3.5 lies halfway between 3 and 4 and goes to the even one.

    >>> e = explain(3.5, "fp4_e2m1")
    >>> e.bit_string, float(e.value), e.decision
    ('0 11 0', 4.0, 'guard=1, round=0, sticky=0: exact tie, rounds to even (up)')
    >>> e.below.value, e.above.value, e.error_ulps, e.flags
    (Fraction(3, 1), Fraction(4, 1), Fraction(1, 2), ('inexact',))
    >>> explain("6.36", "fp32").bit_string
    '0 10000001 10010111000010100011111'

    One operation: 2048 + 1 = 2049 lies halfway between fp16's 2048 and 2050.

    >>> e = explain("2048 + 1", "fp16")
    >>> e.exact_text, float(e.value), e.decision
    ('2048 + 1 = 2049', 2048.0, 'guard=1, round=0, sticky=0: exact tie, rounds to even (down)')
    """
    fmt = as_format(fmt)
    mode = as_rounding(rounding)
    x = _scalar(x)
    try:
        given = _exact_input(x)
    except ValueError as exc:
        operation = parse_operation(x) if isinstance(x, str) else None
        if operation is None:
            raise ValueError(f"{exc}; or an operation such as '2048 + 1', 'sqrt(2)' or "
                             "'fma(1.5, 2, -3)'") from None
        return _explain_operation(x, *operation, fmt, mode, saturate=saturate,
                                  subnormals=subnormals, tininess=tininess, rng=rng)
    bits, flags = encode(x, fmt, mode, saturate=saturate, subnormals=subnormals,
                         tininess=tininess, rng=rng, return_flags=True)
    return _describe(x, given, int(bits), flags.raised(), fmt, mode, saturate, subnormals)


def _describe(x, given: _exact.ExactValue, bits: int, raised: tuple[str, ...], fmt: Format,
              mode: Rounding, saturate, subnormals, special: str | None = None) -> Explanation:
    """The Explanation of ``bits`` (with the flags ``raised``) as the rounding of ``x``,
    whose exact value is ``given``.  ``special`` replaces the decision for an infinite or
    NaN ``given``."""
    case = _Case(given, _decoded(bits, fmt), fmt, mode, raised, bool(saturate), bool(subnormals))
    common = dict(input=x, negative=given.negative, format=fmt, rounding=mode, bits=bits,
                  value=case.value, flags=case.raised)
    if given.kind != "finite":
        return Explanation(exact=None, below=None, above=None, ulp=None, guard=None,
                           round=None, sticky=None, error=None, error_ulps=None,
                           decision=special or _special_decision(case), **common)
    # |x| itself, or for an input that was not expanded a stand-in that rounds as |x|
    # does and lies on the same side of every value of every format
    q = given.proxy()
    signed = -q if given.negative else q
    exact = None if given.magnitude is None else signed
    below, above = _neighbour(x, fmt, "downward", signed), _neighbour(x, fmt, "upward", signed)
    story = _Story.tell(case, below, above)
    error = _error(case.value, exact)
    grs = story.grs or (None, None, None)
    return Explanation(exact=exact, below=below, above=above, ulp=story.ulp, guard=grs[0],
                       round=grs[1], sticky=grs[2], decision=story.text, error=error,
                       error_ulps=None if error is None else error / story.ulp, **common)


def bit_string(bits: int, fmt: Format | str) -> str:
    """A bit pattern of ``fmt`` grouped ``sign exponent fraction``.

    >>> bit_string(0x3C01, "fp16")
    '0 01111 0000000001'
    """
    fmt = as_format(fmt)
    bits = int(_validate.bit_patterns("bits", bits, fmt.bits))
    m, e = fmt.mantissa_bits, fmt.exponent_bits
    return " ".join((str(bits >> (fmt.bits - 1)), _field(bits >> m, e), _field(bits, m)))


# =====================================================================================
# one operation: "2048 + 1", "sqrt(2)", "fma(a, b, c)"
# =====================================================================================
@dataclass(frozen=True)
class OperationExplanation:
    """How one correctly rounded operation came out: the operands as values of the
    format, the exact result, and its rounding -- an :class:`Explanation` -- with the
    operation's own bits and flags.

    ``explain("2048 + 1", "fp16")`` returns one; print it, or read its attributes.

    Attributes
    ----------
    expression : str
        The operation as given.
    operation : str
        ``"add"``, ``"sub"``, ``"mul"``, ``"div"``, ``"sqrt"`` or ``"fma"``: the
        softfloat function that computed the result.
    operands : tuple of Explanation
        Each operand's conversion into the format (with the same options); an operand
        that is not a value of the format is rounded first, and says so.
    exact : Fraction or float or None
        The exact result of the operation on the operands' values: a Fraction, +-inf
        (an infinite operand, or division by zero), or None where it has no value
        (invalid operations, NaN operands) or is irrational (a square root).
    exact_text : str
        The exact result in words, e.g. ``'2048 + 1 = 2049'`` or
        ``'sqrt(2) = 1.4142135623730950488... (irrational)'``.
    result : Explanation
        The rounding of the exact result into the format: bits, neighbours,
        guard/round/sticky, decision, error and flags, with the bits and flags that the
        operation (``softfloat.add``, ...) returned.  For an irrational square root its
        ``exact`` is a stand-in with the root's leading p + 64 bits and a sticky bit,
        which rounds exactly as the root does.
    note : str or None
        A rule the result follows beyond rounding (the sign of an exact zero, NaN
        propagation), if any.

    Examples
    --------
    >>> e = explain("2048 + 1", "fp16")
    >>> e.exact_text, hex(e.bits), e.result.decision
    ('2048 + 1 = 2049', '0x6800', 'guard=1, round=0, sticky=0: exact tie, rounds to even (down)')
    >>> print(e)                                                   # doctest: +ELLIPSIS
    2048 + 1 -> fp16 (rounding=nearest_even)
      a         2048 = 0 11010 0000000000 (0x6800), exact in fp16
      b         1 = 0 01111 0000000000 (0x3c00), exact in fp16
      exactly   2048 + 1 = 2049
      bits      0 11010 0000000000  (0x6800)
    ...
      below     2048  0 11010 0000000000  (the result)
      above     2050  0 11010 0000000001
      ulp       2^1 = 2
      rounding  guard=1, round=0, sticky=0: exact tie, rounds to even (down)
      error     -1 = -0.5 ulp
      flags     inexact (the result differs from the exact result)
    """

    expression: str
    operation: str
    operands: tuple[Explanation, ...]
    exact: Fraction | float | None
    exact_text: str
    result: Explanation
    note: str | None = None

    @property
    def bits(self) -> int:
        """The result's bit pattern, as the operation returned it."""
        return self.result.bits

    @property
    def value(self) -> Fraction | float:
        return self.result.value

    @property
    def flags(self) -> tuple[str, ...]:
        return self.result.flags

    @property
    def decision(self) -> str:
        return self.result.decision

    def _title(self) -> str:
        r = self.result
        return f"{_title_text(self.expression)} -> {r.format.name} (rounding={r.rounding.value})"

    def _rows(self) -> list[tuple[str, str]]:
        fmt = self.result.format
        rows = [(name, _operand_text(e, fmt)) for name, e in zip("abc", self.operands)]
        rows.append(("exactly", self.exact_text))
        for name, text in self.result._rows():
            if name in ("input", "exactly"):
                continue
            text = text.replace("(the input is not a finite number)",
                                "(the exact result is not a finite number)")
            if name == "error" and self.exact is None and self.result.exact is not None:
                text = _irrational_error(self)
            if name == "flags":
                meanings = [_OPERATION_FLAG_MEANINGS.get(f, _FLAG_MEANINGS[f]) for f in self.flags]
                text = ", ".join(meanings) if meanings else "none"
            rows.append((name, text))
        if self.note:
            rows.append(("note", self.note))
        return rows

    def __str__(self) -> str:
        return "\n".join([self._title()] + [f"  {name:<9} {text}" for name, text in self._rows()])

    def __repr__(self) -> str:
        return (f"<OperationExplanation {self.expression!r} -> {self.result.format.name} "
                f"{_hex(self.bits, self.result.format)} ({self.result.rounding.value})>")

    def _repr_html_(self) -> str:
        body = "".join(f"<tr><th style='text-align:left'>{html.escape(name)}</th>"
                       f"<td style='text-align:left'><code>{html.escape(text)}</code></td></tr>"
                       for name, text in self._rows())
        return f"<div><b>{html.escape(self._title())}</b><table>{body}</table></div>"

    def to_dict(self) -> dict:
        """The result's :meth:`Explanation.to_dict`, with the expression as input, the
        exact result in words, the operands and the note."""
        d = self.result.to_dict()
        d["input"] = self.expression
        d["operation"] = self.operation
        d["operands"] = [{"input": e.to_dict()["input"], "bits": e.bits, "hex": _hex(e.bits, e.format),
                          "value": _value_text(e.value), "flags": list(e.flags)} for e in self.operands]
        d["exact"] = self.exact_text
        if self.exact is None and self.result.exact is not None:
            d["error"], d["error_ulps"] = _irrational_error_parts(self)
        d["note"] = self.note
        return d


_OPERATION_FLAG_MEANINGS = {
    "inexact": "inexact (the result differs from the exact result)",
    "invalid": "invalid (the operation has no meaningful result)",
    "divide_by_zero": "divide_by_zero (an exact infinite result from finite operands)",
}

_SYMBOL_OPERATIONS = {"+": "add", "-": "sub", "*": "mul", "/": "div"}
_CALL = re.compile(r"^\s*([A-Za-z_]\w*)\s*\((.*)\)\s*$", re.DOTALL)
_CALL_ARITY = {"sqrt": 1, "fma": 3}
#: an expression with more operator characters than this is not one operation (and is
#: not split further: each split parses both sides, so this bounds the work)
_MAX_OPERATORS = 16


def parse_operation(text: str, argname: str = "x") -> tuple[str, tuple[str, ...]] | None:
    """``('add', ('2048', '1'))`` for ``'2048 + 1'``, ``('sqrt', ('2',))``, ``('fma',
    (a, b, c))``; None when ``text`` is no operation at all.  A call of sqrt or fma with
    the wrong operands, and an expression that reads two ways, are a ValueError.

    A binary operator is a ``+``, ``-``, ``*`` or ``/`` with a number on each side, not an
    exponent's sign (``1e-5``) nor a sign after another operator (``1 - -2``); ``1/3``
    alone is the exact ratio, a number, and is never split.

    Errors name the text as ``argname``.

    >>> parse_operation("2048 + 1"), parse_operation("1e-5 - -2"), parse_operation("1/3 / 2")
    (('add', ('2048', '1')), ('sub', ('1e-5', '-2')), ('div', ('1/3', '2')))
    >>> parse_operation("fma(1.5, 2, -3)"), parse_operation("six") is None
    (('fma', ('1.5', '2', '-3')), True)
    """
    if _reads_as_number(text):
        return None
    call = _CALL.match(text)
    if call:
        name, args = call[1].lower(), [a.strip() for a in call[2].split(",")]
        if name not in _CALL_ARITY:
            raise ValueError(f"{argname}={_validate.short_repr(text)}: {call[1]}() is not an "
                             "operation explain knows; use +, -, *, /, sqrt(x) or fma(a, b, c)")
        arity = _CALL_ARITY[name]
        if len(args) != arity or not all(args):
            raise ValueError(f"{argname}={_validate.short_repr(text)}: {name} takes {arity} operand"
                             f"{'s' if arity > 1 else ''} ({'x' if arity == 1 else 'a, b, c'}); "
                             f"got {len([a for a in args if a])}")
        for a in args:
            if not _reads_as_number(a):
                raise ValueError(
                    f"{argname}={_validate.short_repr(text)}: the operand {_validate.short_repr(a, 30)} "
                    f"of {name} is not a number; use a decimal ('6.36'), a hex float ('0x1.8p-3'), "
                    "a ratio ('1/3'), 'inf' or 'nan'")
        return name, tuple(args)
    candidates = _operator_positions(text)
    if not candidates:
        return None
    splits = []
    for i in candidates:
        left, right = text[:i].strip(), text[i + 1:].strip()
        if _reads_as_number(left) and _reads_as_number(right):
            spaced = text[i - 1:i].isspace() and text[i + 1:i + 2].isspace()
            splits.append((spaced, _SYMBOL_OPERATIONS[text[i]], (left, right)))
    if len(splits) > 1:
        spaced = [sp for sp in splits if sp[0]]
        if len(spaced) != 1:
            readings = " or ".join(f"{a!r} {_OPERATION_SYMBOLS[op]} {b!r}" for _, op, (a, b) in splits)
            raise ValueError(f"{argname}={_validate.short_repr(text)} reads as {readings}; put "
                             "spaces around the operator you mean (a ratio such as 1/3 has none)")
        splits = spaced
    return (splits[0][1], splits[0][2]) if splits else None


_OPERATION_SYMBOLS = {v: k for k, v in _SYMBOL_OPERATIONS.items()}


def _operator_positions(text: str) -> list[int]:
    """Where a binary operator could be: a + - * / that is not first, not after another
    operator, and not the sign of an exponent (``1e-5``, ``0x1p-3``).  One pass; an empty
    list when there are more than _MAX_OPERATORS of them (no single operation)."""
    positions, last = [], ""  # last: the previous non-blank character
    for i, c in enumerate(text):
        if c in _SYMBOL_OPERATIONS and last and last not in "+-*/(,":
            exponent_sign = c in "+-" and text[i - 1] in "eEpP" and i >= 2 and (
                text[i - 2].isalnum() or text[i - 2] == ".")
            if not exponent_sign:
                positions.append(i)
                if len(positions) > _MAX_OPERATORS:
                    return []
        if not c.isspace():
            last = c
    return positions


def _reads_as_number(text: str) -> bool:
    try:
        _exact.parse_exact(text)
    except (TypeError, ValueError):
        return False
    return True


def _explain_operation(expression: str, name: str, texts: tuple[str, ...], fmt: Format, mode: Rounding,
                       *, saturate, subnormals, tininess, rng) -> OperationExplanation:
    """Round the operands into ``fmt``, run the operation, and explain its result."""
    _, generator = policy_from_options(mode, tininess, subnormals, saturate, rng)  # checks them
    options = dict(saturate=saturate, subnormals=subnormals, tininess=tininess, rng=generator)
    operands = tuple(explain(t, fmt, mode, **options) for t in texts)
    function = {"add": add, "sub": sub, "mul": mul, "div": div, "sqrt": sqrt, "fma": fma}[name]
    bits, flags = function(*(e.bits for e in operands), fmt, mode, return_flags=True, **options)
    bits, raised = int(bits), flags.raised()
    exact, x, text, special, note = _exact_result(name, operands, bits, fmt)
    shown = _expression_text(name, operands)
    given = _exact.parse_exact(x) if x is not None else _exact.ExactValue(False, "nan")
    result = _describe(x, given, bits, raised, fmt, mode, saturate, subnormals,
                       special=None if special is None else special(_Case(
                           given, _decoded(bits, fmt), fmt, mode, raised, bool(saturate), bool(subnormals))))
    return OperationExplanation(expression=expression, operation=name, operands=operands, exact=exact,
                                exact_text=f"{shown} {text}", result=result, note=note)


def _exact_result(name, operands, bits, fmt):
    """The exact result of the operation on the operands' values.

    Returns ``(exact, x, text, special, note)``: ``exact`` as documented on
    OperationExplanation; ``x`` the value whose rounding the result is (a Fraction, a
    stand-in for an irrational root, +-0.0 or +-inf as floats, None for no value);
    ``text`` the words after the expression; ``special`` a function of the case giving
    the decision for a non-finite ``x``, or None; ``note`` a rule beyond rounding.
    """
    values = [e.value for e in operands]
    result_negative = bool(bits >> (fmt.bits - 1)) and fmt.has_negative_zero
    if any(isinstance(v, float) and v != v for v in values):
        return None, None, "= NaN (a NaN operand)", _nan_operand, (
            "a NaN operand propagates: the first signaling NaN operand, else the first NaN "
            "operand, quieted (softfloat.NAN_POLICY)")
    if any(isinstance(v, float) for v in values):  # an infinite operand
        return _infinite_operands(name, values)
    exact = _rational_result(name, values)
    if exact is _INVALID:
        return None, None, "has no value: invalid operation", _invalid, None
    if isinstance(exact, float):  # x / 0
        return exact, exact, f"= {_show(exact)} exactly (division by zero)", _division_by_zero, None
    if name == "sqrt" and not isinstance(exact, Fraction):
        stand_in, approx = exact
        return None, stand_in, f"= {approx}... (irrational)", None, None
    if exact == 0:
        zero = -0.0 if result_negative else 0.0
        return exact, zero, "= 0 exactly", None, _ZERO_SIGN_RULES[name]
    return exact, exact, f"= {_show(exact)}", None, None


_INVALID = object()

_ZERO_SIGN_RULES = {
    "add": "an exact zero sum is -0 only when both operands are -0, or when rounding downward "
           "(IEEE 754-2019 section 6.3); otherwise +0",
    "sub": "an exact zero difference a - b = a + (-b) is -0 only when a is -0 and b is +0, or "
           "when rounding downward (IEEE 754-2019 section 6.3); otherwise +0",
    "fma": "an exact zero a * b + c is -0 only when a * b and c are both -0, or when rounding "
           "downward (IEEE 754-2019 section 6.3); otherwise +0",
    "mul": "the sign of a zero product is the exclusive or of the operands' signs",
    "div": "the sign of a zero quotient is the exclusive or of the operands' signs",
    "sqrt": "sqrt(-0) is -0 and sqrt(+0) is +0 (IEEE 754-2019 section 6.3)",
}


def _rational_result(name, values):
    """The exact result for finite operands: a Fraction, +-inf (x / 0), _INVALID, or for
    an irrational root ``(stand-in, leading digits)``."""
    if name == "add":
        return values[0] + values[1]
    if name == "sub":
        return values[0] - values[1]
    if name == "mul":
        return values[0] * values[1]
    if name == "fma":
        return values[0] * values[1] + values[2]
    if name == "div":
        a, b = values
        if b == 0:
            if a == 0:
                return _INVALID
            negative = (a < 0) != _is_negative_zero_operand(b)
            return -math.inf if negative else math.inf
        return a / b
    (a,) = values
    if a < 0:
        return _INVALID
    return _square_root(a)


def _is_negative_zero_operand(b) -> bool:
    """Is the zero divisor -0?  Its Fraction has no sign: read it from its float."""
    return math.copysign(1.0, float(b)) < 0


def _square_root(a: Fraction):
    """sqrt(a): a Fraction when rational, else ``(stand-in, leading digits)``.

    The stand-in is (floor(sqrt(a) * 2**k) + 1/2) / 2**k with k giving at least 117 bits
    (64 more than any format's precision): it lies strictly between the same two
    multiples of 2**-k as the irrational root, and so rounds as the root does in every
    format and mode -- the same device as the stand-ins of exact scalars far out of
    range (see softfloat._exact).
    """
    n, d = a.numerator, a.denominator
    rn, rd = math.isqrt(n), math.isqrt(d)
    if rn * rn == n and rd * rd == d:
        return Fraction(rn, rd)
    k = 117 - (n.bit_length() - d.bit_length()) // 2
    scaled = (n << (2 * k)) // d if k >= 0 else n // (d << (-2 * k))
    stand_in = Fraction(2 * math.isqrt(scaled) + 1, 1 << (k + 1)) if k >= 0 else \
        Fraction((2 * math.isqrt(scaled) + 1) << (-k - 1))
    with decimal.localcontext() as ctx:
        ctx.prec = 20
        digits = (decimal.Decimal(n) / decimal.Decimal(d)).sqrt()
    return stand_in, format(digits, "f") if abs(digits.adjusted()) < 12 else format(digits, "e")


def _infinite_operands(name, values):
    """An infinite operand: the exact result in the extended reals, by float64 arithmetic
    (exact here: every operand is a float64, and the result is +-inf, +-0 or NaN)."""
    a = [float(v) for v in values]
    with np.errstate(all="ignore"):
        if name == "fma":
            product = np.float64(a[0]) * np.float64(a[1])
            r = a[2] if np.isinf(a[2]) and np.isfinite(a[0]) and np.isfinite(a[1]) else float(product + a[2])
        elif name == "sqrt":
            r = float(np.sqrt(np.float64(a[0])))
        else:
            r = float({"add": np.add, "sub": np.subtract, "mul": np.multiply,
                       "div": np.divide}[name](np.float64(a[0]), np.float64(a[1])))
    if r != r:
        return None, None, "has no value: invalid operation", _invalid, None
    if math.isinf(r):
        return r, r, f"= {r} exactly", None, None
    return 0.0, r, "= 0 exactly", None, _ZERO_SIGN_RULES[name] if name in ("mul", "div") else None


def _nan_operand(case: _Case) -> str:
    if case.fmt.has_nan:
        return "a NaN operand gives a NaN result" + (", raising invalid (a signaling NaN)"
                                                     if "invalid" in case.raised else "")
    return f"{case.fmt.name} has no NaN"  # unreachable: such formats read NaN operands as 0


def _invalid(case: _Case) -> str:
    fmt = case.fmt
    if not fmt.has_nan:
        return (f"invalid operation: {fmt.name} has no NaN, so the result is +0 and invalid is "
                "raised")
    return "invalid operation (IEEE 754-2019 section 7.2): the result is the default NaN"


def _division_by_zero(case: _Case) -> str:
    return ("a finite non-zero number divided by zero is an exactly infinite result and raises "
            "divide_by_zero; " + _special_decision(case).replace("an infinite input", "an infinite result"))


def _expression_text(name: str, operands) -> str:
    """The operation on the operands' values: '2048 + 1', 'sqrt(2)', '1.5 * 2 + (-3)'."""
    shown = [_operand_value(e) for e in operands]
    if name == "sqrt":
        return f"sqrt({shown[0].strip('()')})"
    if name == "fma":
        return f"{shown[0]} * {shown[1]} + {shown[2]}"
    return f"{shown[0]} {_OPERATION_SYMBOLS[name]} {shown[1]}"


def _operand_value(e: Explanation) -> str:
    text = _show(e.value, bool(e.sign))
    return f"({text})" if text.startswith("-") else text


def _operand_text(e: Explanation, fmt: Format) -> str:
    """'2048 = 0 11010 0000000000 (0x6800), exact in fp16', or how the operand was rounded."""
    value = _show(e.value, bool(e.sign))
    head = f"{value} = {e.bit_string} ({_hex(e.bits, fmt)})"
    given = _title_text(e.input)
    if not e.flags:
        return f"{head}, exact in {fmt.name}" if given == value else f"{head}: {given}, exact in {fmt.name}"
    return f"{head}: {given} rounded into {fmt.name} ({', '.join(e.flags)})"


def _irrational_error_parts(e: OperationExplanation) -> tuple[str, str]:
    """value - sqrt(a) and the same in ulps, to 17 digits (the root is irrational)."""
    r = e.result
    (a,) = (op.value for op in e.operands)
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        root = (decimal.Decimal(a.numerator) / decimal.Decimal(a.denominator)).sqrt()
        value = decimal.Decimal(r.value.numerator) / decimal.Decimal(r.value.denominator)
        error = value - root
        ulps = error / (decimal.Decimal(r.ulp.numerator) / decimal.Decimal(r.ulp.denominator))
    return f"~{error:.17g}", f"~{ulps:.17g}"


def _irrational_error(e: OperationExplanation) -> str:
    error, ulps = _irrational_error_parts(e)
    return f"{error} = {ulps} ulp"


# =====================================================================================
# input and neighbours
# =====================================================================================
def _scalar(x):
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


def _exact_input(x) -> _exact.ExactValue:
    """The exact value of ``x``; float16/float32 scalars are exact as Python floats."""
    source = {np.dtype(np.float16): fp16, np.dtype(np.float32): fp32}.get(getattr(x, "dtype", None))
    if not isinstance(x, np.generic) or source is None:
        return _exact.parse_exact(x, "x")
    value = _exact.parse_exact(float(x), "x")
    if value.kind == "nan":  # float() may quiet a signaling NaN: read its quiet bit
        quiet = int(x.view(source.storage_dtype)) >> (source.mantissa_bits - 1) & 1
        value = _exact.ExactValue(value.negative, "nan", signaling=not quiet)
    return value


def _decoded(bits: int, fmt: Format) -> Fraction | float:
    """Exact value of one pattern: a Fraction when finite, else the float inf/nan."""
    v = float(decode(bits, fmt))
    return Fraction(v) if np.isfinite(v) else v


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
    value = _decoded(bits, fmt)
    if value != value:  # NaN
        return None
    brackets = value <= exact if direction == "downward" else value >= exact
    return Neighbour(bits, value) if brackets else None


# =====================================================================================
# the rounding story
# =====================================================================================
@dataclass(frozen=True)
class _Case:
    """One call of explain: the exact input, what encode delivered, and the options."""

    given: _exact.ExactValue
    value: Fraction | float  # the exact value of encode's bits
    fmt: Format
    mode: Rounding
    raised: tuple[str, ...]
    saturate: bool
    subnormals: bool


@dataclass(frozen=True)
class _Story:
    """The description of one finite rounding: ulp, (guard, round, sticky) and words."""

    ulp: Fraction
    grs: tuple[int, int, int] | None
    text: str

    @classmethod
    def tell(cls, case: _Case, below: Neighbour | None, above: Neighbour | None) -> "_Story":
        """Describe how the input became ``case.value`` (which ``encode`` chose).

        Works on magnitudes: ``t`` is the neighbour toward zero (it always exists) and
        the candidate away from zero is ``t + ulp`` (which may lie beyond the largest
        finite value, where it stands for "overflow").  With r = (|x| - t) / ulp:

            |x| = t + r * ulp,   r = 0.G R S...   (guard, round, sticky = OR of the rest)
        """
        negative, fmt = case.given.negative, case.fmt
        toward, away = (above, below) if negative else (below, above)
        t = abs(toward.value)
        ulp = _ulp(case.given, fmt)
        if away is not None and isinstance(away.value, Fraction) and away.value != toward.value:
            _check(abs(away.value) - t == ulp, "neighbour spacing", case)
        r = (case.given.proxy() - t) / ulp
        if r >= 1:
            _check("overflow" in case.raised, "overflow", case)
            return cls(ulp, None, _far_overflow(case))
        grs = _guard_round_sticky(r)
        head = f"guard={grs[0]}, round={grs[1]}, sticky={grs[2]}: "
        if r == 0:
            side, text = "toward", head + f"exact, representable in {fmt.name}: no rounding"
        else:
            side = _direction(r, case.mode, negative, toward.bits)
            if side is None:  # stochastic: the draw decided; read it off the result
                kept = isinstance(case.value, Fraction) and abs(case.value) == t
                side = "toward" if kept else "away"
            text = head + _rule_text(r, case.mode, side, negative)
        rounded = t if side == "toward" else t + ulp  # with an unbounded exponent
        return cls(ulp, grs, text + _aftermath(case, rounded))


def _guard_round_sticky(r: Fraction) -> tuple[int, int, int]:
    """The bits of r = 0.G R S... in [0, 1): guard, round, and sticky = "anything below"."""
    q = 4 * r
    top = q.numerator // q.denominator  # 0bGR
    return top >> 1, top & 1, int(q.denominator != 1)


def _ulp(a: Fraction | _exact.ExactValue, fmt: Format) -> Fraction:
    """Spacing of ``fmt`` at magnitude ``a``: 2**(e - m) for the binade e of ``a``,
    clamped to [emin, emax] (subnormals share emin's spacing).  For an ExactValue the
    binade comes from its significand (a stand-in's beyond reach: clamped the same)."""
    sig, e = a.significand if isinstance(a, _exact.ExactValue) else _exact.to_significand(a)
    e = min(max(e, fmt.emin), fmt.emax) if sig else fmt.emin
    return Fraction(2) ** (e - fmt.mantissa_bits)


def _direction(r: Fraction, mode: Rounding, negative: bool, toward_bits: int) -> str | None:
    """Which way ``mode`` goes from r ulps above the toward-zero neighbour: 'toward'
    (zero) or 'away'; None for stochastic (decided by a random draw)."""
    half = Fraction(1, 2)
    toward_is_even = toward_bits & 1 == 0
    if mode is Rounding.NEAREST_EVEN:
        return "toward" if r < half or (r == half and toward_is_even) else "away"
    if mode is Rounding.NEAREST_AWAY:
        return "toward" if r < half else "away"
    if mode is Rounding.TOWARD_ZERO:
        return "toward"
    if mode is Rounding.UPWARD:
        return "toward" if negative else "away"
    if mode is Rounding.DOWNWARD:
        return "away" if negative else "toward"
    if mode is Rounding.ODD:
        return "away" if toward_is_even else "toward"
    return None


def _rule_text(r: Fraction, mode: Rounding, side: str, negative: bool) -> str:
    """E.g. 'above the midpoint, rounds up' or 'exact tie, rounds to even (up)'."""
    half = Fraction(1, 2)
    where = "below the midpoint" if r < half else "exact tie" if r == half else "above the midpoint"
    if negative and r != half:
        where = "|x| " + where
    went = _went(side, negative)
    if mode is Rounding.NEAREST_EVEN:
        return f"{where}, rounds to even ({went})" if r == half else f"{where}, rounds {went}"
    if mode is Rounding.NEAREST_AWAY:
        return f"{where}, rounds away from zero ({went})" if r == half else f"{where}, rounds {went}"
    if mode is Rounding.STOCHASTIC:
        return (f"{where}; stochastic rounds away from zero with probability {_approx(r)}; "
                f"this draw went {went}")
    rule = {
        Rounding.TOWARD_ZERO: "toward_zero truncates",
        Rounding.UPWARD: "upward rounds toward +inf",
        Rounding.DOWNWARD: "downward rounds toward -inf",
        Rounding.ODD: "round to odd picks the neighbour whose last bit is 1",
    }[mode]
    return f"{where}; {rule}: {went}"


def _went(side: str, negative: bool) -> str:
    """'up' / 'down' in value terms, saying 'toward/away from zero' for negatives."""
    if not negative:
        return "up" if side == "away" else "down"
    return "down, away from zero" if side == "away" else "up, toward zero"


def _aftermath(case: _Case, rounded: Fraction) -> str:
    """What became of the chosen neighbour ``rounded``: kept, overflowed, or flushed.

    Checks the story against ``encode``: the rounded magnitude (unbounded exponent)
    exceeds the largest finite value exactly when ``encode`` raised overflow, and
    otherwise the result is that neighbour (or zero, when subnormals are flushed).
    """
    fmt, value = case.fmt, case.value
    max_finite = Fraction(fmt.max_finite)
    _check((rounded > max_finite) == ("overflow" in case.raised), "overflow", case)
    if rounded > max_finite:
        return (f"; {_show(rounded)} exceeds the largest finite value "
                f"{_show(max_finite)}: {_overflow_result(case)}")
    if not isinstance(value, Fraction) or abs(value) != rounded:
        flushed = not case.subnormals and value == 0 and "underflow" in case.raised
        _check(flushed, "result", case)
        zero = _show(value, case.given.negative and fmt.has_negative_zero)
        return (f"; subnormals are off and the result is tiny (below 2^{fmt.emin}), "
                f"so it is flushed to {zero}")
    return ""


def _far_overflow(case: _Case) -> str:
    """Words for |x| at least one ulp beyond the largest finite value."""
    max_finite = Fraction(case.fmt.max_finite)
    limit = max_finite + _ulp(max_finite, case.fmt)
    return (f"|x| >= {_show(limit)} = max_finite + 1 ulp, so every rounding mode "
            f"overflows: {_overflow_result(case)}")


def _overflow_result(case: _Case) -> str:
    """Describe the overflowed result encode delivered (infinity, max or NaN), and why."""
    fmt, value = case.fmt, case.value
    if isinstance(value, float) and value != value:
        return (f"{fmt.name} has no infinity, so non-saturating overflow gives NaN "
                "(saturate=True gives +-max_finite)")
    if isinstance(value, float):
        return f"{case.mode.value} sends it to {_show(value)}"
    if not fmt.has_infinity and not fmt.has_nan:
        return f"{fmt.name} has neither infinity nor NaN, so it saturates to {_show(value)}"
    if case.saturate:
        return f"saturate=True clamps it to the largest finite value {_show(value)}"
    return f"{case.mode.value} gives the largest finite value {_show(value)}"


def _special_decision(case: _Case) -> str:
    """Words for an infinite or NaN input."""
    fmt, value = case.fmt, case.value
    if case.given.kind == "nan":
        if not fmt.has_nan:
            return f"{fmt.name} has no NaN: a NaN gives +0 and raises invalid"
        if "invalid" in case.raised:
            return "signaling NaN: becomes a quiet NaN and raises invalid"
        if fmt.has_infinity:
            return "NaN stays NaN (quiet, with the sign and top payload bits kept)"
        return f"NaN becomes {fmt.name}'s single NaN pattern"
    if isinstance(value, float) and value == value:
        return "infinity is representable: exact"
    if isinstance(value, float):
        return f"{fmt.name} has no infinity: an infinite input gives NaN and raises invalid"
    return (f"{fmt.name} has no infinity: an infinite input saturates to "
            f"{_show(value)} and raises overflow")


def _check(ok: bool, what: str, case: _Case) -> None:
    """Guard the description against the bits: a mismatch is a library bug."""
    if not ok:
        raise AssertionError(
            f"softfloat.explain: the {what} described for {case.given} in {case.fmt.name} "
            f"({case.mode.value}) disagrees with softfloat.encode; please report this as a bug"
        )


# =====================================================================================
# text helpers
# =====================================================================================
def _field(value: int, width: int) -> str:
    return format(value & ((1 << width) - 1), f"0{width}b")


def _hex(bits: int, fmt: Format) -> str:
    return f"0x{bits:0{(fmt.bits + 3) // 4}x}"


def _exponent_text(e: Explanation) -> str:
    fmt = e.format
    field = _field(e.biased_exponent, fmt.exponent_bits)
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
        return _value_text(e.value).replace("nan", "NaN").replace("inf", "infinity")
    lead = "1" if e.biased_exponent else "0"
    frac = _field(e.fraction, e.format.mantissa_bits)
    value = _show(e.value, bool(e.sign))
    return f"(-1)^{e.sign} x {lead}.{frac} (binary) x 2^{e.exponent} = {value}"


def _neighbour_text(nb: Neighbour | None, e: Explanation) -> str:
    if nb is None:
        if e.exact is None:
            return "none (the input is not a finite number)"
        return f"none ({e.format.name} has no value beyond {_show(Fraction(e.format.max_finite))})"
    tag = "  (the result)" if nb.bits == e.bits else ""
    if e.below is not None and e.above is not None and e.below.bits == e.above.bits:
        return f"{_show(nb.value)}{tag}"
    return f"{_show(nb.value)}  {bit_string(nb.bits, e.format)}{tag}"


def _ulp_text(ulp: Fraction) -> str:
    exponent = ulp.numerator.bit_length() - ulp.denominator.bit_length()  # ulp = 2**exponent
    return f"2^{exponent} = {_show(ulp)}"


def _ulps_text(x) -> str:
    if isinstance(x, float):
        return f"{x} ulp"
    text = _value_text(x)
    return f"{text} ulp" if len(text) <= 24 and "/" not in text else f"~{_approx(x)} ulp"


def _value_text(x, negative_zero: bool = False) -> str | None:
    """Exact decimal text of a Fraction ('1/3' when it does not terminate); floats as
    'inf', '-inf', 'nan'; None stays None."""
    if x is None:
        return None
    if isinstance(x, float):
        return repr(x)
    sign = "-" if x < 0 or (x == 0 and negative_zero) else ""
    if not _exact.fits_exact_text(x):
        return f"~{_approx(x)}"  # beyond Python's int-to-str limit: approximate
    return sign + _exact.format_fraction(abs(x))


def _title_text(x) -> str:
    """The input as the user wrote it, cut to 60 characters (huge ints by their size)."""
    text = x if isinstance(x, str) else _validate.short_repr(x) if isinstance(x, (int, Fraction)) else str(x)
    return text if len(text) <= 60 else text[:57] + "..."


def _exact_row(e: Explanation) -> str:
    return "(not a finite number)" if e.exact is None else _show(e.exact, e.negative)


def _exact_text(exact: Fraction | None, negative: bool) -> str | None:
    return None if exact is None else _value_text(exact, negative)


def _show(x, negative_zero: bool = False) -> str:
    """Display text: exact when short, else ~17 digits (the exact text is in to_dict)."""
    text = _value_text(x, negative_zero)
    if isinstance(x, float):
        return text
    if text.startswith("~"):
        return text
    if "/" in text:
        return f"{text} (~{_approx(x)})"
    if len(text) > _MAX_DIGITS_SHOWN:
        return f"~{_approx(x)} (exact decimal: {sum(c.isdigit() for c in text)} digits)"
    return text


def _approx(q: Fraction) -> str:
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
_MAX_TEXT_CHARS = 4000


def _given_text(given: _exact.ExactValue, limit: int = _MAX_DIGITS_SHOWN) -> str:
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


def _approx_error(given: _exact.ExactValue, value, ulp: Fraction) -> tuple[str | None, str | None]:
    """``value - x`` and the same in ulps, to 17 digits, for an input that was not
    expanded (exact arithmetic on its digits where they matter: see approximate_gap)."""
    if not isinstance(value, Fraction):  # infinite or NaN results: error is exact or None
        return _value_text(value if value == value else None), _value_text(value if value == value else None)
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
