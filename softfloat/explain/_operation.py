"""One operation: the operands rounded into the format, the operation run, and its exact result explained."""

from __future__ import annotations

import decimal
import html
from dataclasses import dataclass
from fractions import Fraction

from .. import _exact
from .._options import generator_for
from ..attributes import RoundingAttributes
from ..formats import Format
from ..ops import add, div, fma, mul, sqrt, sub
from ._arithmetic import exact_result
from ._parse import OPERATION_SYMBOLS
from ._story import Case, decoded
from ._text import hex_text, show, title_text, value_text
from ._value import FLAG_MEANINGS, Explanation, describe, exact_input, explain_value


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
        return f"{title_text(self.expression)} -> {r.format.name} (rounding={r.rounding.value})"

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
                meanings = [_OPERATION_FLAG_MEANINGS.get(f, FLAG_MEANINGS[f]) for f in self.flags]
                text = ", ".join(meanings) if meanings else "none"
            rows.append((name, text))
        if self.note:
            rows.append(("note", self.note))
        return rows

    def __str__(self) -> str:
        return "\n".join([self._title()] + [f"  {name:<9} {text}" for name, text in self._rows()])

    def __repr__(self) -> str:
        return (f"<OperationExplanation {self.expression!r} -> {self.result.format.name} "
                f"{hex_text(self.bits, self.result.format)} ({self.result.rounding.value})>")

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
        d["operands"] = [{"input": e.to_dict()["input"], "bits": e.bits, "hex": hex_text(e.bits, e.format),
                          "value": value_text(e.value), "flags": list(e.flags)} for e in self.operands]
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


def explain_operation(expression: str, operation: tuple[str, tuple[str, ...]], fmt: Format,
                      attrs: RoundingAttributes, rng) -> OperationExplanation:
    """Round the operands into ``fmt``, run the operation, and explain its result.

    ``operation`` is ``(name, operand texts)`` as :func:`parse_operation` reads it; one
    generator made from ``rng`` draws for the operands, then for the operation."""
    name, texts = operation
    generator = generator_for(attrs, rng)
    operands = tuple(explain_value(t, exact_input(t), fmt, attrs, generator) for t in texts)
    function = {"add": add, "sub": sub, "mul": mul, "div": div, "sqrt": sqrt, "fma": fma}[name]
    bits, flags = function(*(e.bits for e in operands), fmt, attributes=attrs, rng=generator, return_flags=True)
    bits, raised = int(bits), flags.raised()
    exact, x, text, special, note = exact_result(name, operands, bits, fmt)
    shown = _expression_text(name, operands)
    given = _exact.parse_exact(x) if x is not None else _exact.ExactValue(False, "nan")
    case = Case(given, decoded(bits, fmt), fmt, attrs.rounding, raised, attrs.saturate, attrs.subnormals)
    result = describe(x, case, bits, special=None if special is None else special(case))
    return OperationExplanation(expression=expression, operation=name, operands=operands, exact=exact,
                                exact_text=f"{shown} {text}", result=result, note=note)


def _expression_text(name: str, operands) -> str:
    """The operation on the operands' values: '2048 + 1', 'sqrt(2)', '1.5 * 2 + (-3)'."""
    shown = [_operand_value(e) for e in operands]
    if name == "sqrt":
        return f"sqrt({shown[0].strip('()')})"
    if name == "fma":
        return f"{shown[0]} * {shown[1]} + {shown[2]}"
    return f"{shown[0]} {OPERATION_SYMBOLS[name]} {shown[1]}"


def _operand_value(e: Explanation) -> str:
    text = show(e.value, bool(e.sign))
    return f"({text})" if text.startswith("-") else text


def _operand_text(e: Explanation, fmt: Format) -> str:
    """'2048 = 0 11010 0000000000 (0x6800), exact in fp16', or how the operand was rounded."""
    value = show(e.value, bool(e.sign))
    head = f"{value} = {e.bit_string} ({hex_text(e.bits, fmt)})"
    given = title_text(e.input)
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
