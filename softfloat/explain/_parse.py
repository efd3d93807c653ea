"""The expression parser: one operation ('2048 + 1', 'sqrt(2)', 'fma(a, b, c)') read from its text."""

from __future__ import annotations

import re

from .. import _exact, _validate

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
    if not isinstance(text, str):
        raise TypeError(f"{argname} must be a str: an operation such as '2048 + 1' or a number; "
                        f"got {_validate.describe(text)}")
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
            readings = " or ".join(f"{a!r} {OPERATION_SYMBOLS[op]} {b!r}" for _, op, (a, b) in splits)
            raise ValueError(f"{argname}={_validate.short_repr(text)} reads as {readings}; put "
                             "spaces around the operator you mean (a ratio such as 1/3 has none)")
        splits = spaced
    return (splits[0][1], splits[0][2]) if splits else None


OPERATION_SYMBOLS = {v: k for k, v in _SYMBOL_OPERATIONS.items()}


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
