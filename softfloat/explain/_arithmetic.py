"""Exact arithmetic of one operation on the operands' values: the result that the rounding explains."""

from __future__ import annotations

import decimal
import math
from fractions import Fraction

import numpy as np

from ._story import Case, special_decision
from ._text import show


def exact_result(name, operands, bits, fmt):
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
        return exact, exact, f"= {show(exact)} exactly (division by zero)", _division_by_zero, None
    if name == "sqrt" and not isinstance(exact, Fraction):
        stand_in, approx = exact
        return None, stand_in, f"= {approx}... (irrational)", None, None
    if exact == 0:
        zero = -0.0 if result_negative else 0.0
        return exact, zero, "= 0 exactly", None, _ZERO_SIGN_RULES[name]
    return exact, exact, f"= {show(exact)}", None, None


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


def _nan_operand(case: Case) -> str:
    if case.fmt.has_nan:
        return "a NaN operand gives a NaN result" + (", raising invalid (a signaling NaN)"
                                                     if "invalid" in case.raised else "")
    return f"{case.fmt.name} has no NaN"  # unreachable: such formats read NaN operands as 0


def _invalid(case: Case) -> str:
    fmt = case.fmt
    if not fmt.has_nan:
        return (f"invalid operation: {fmt.name} has no NaN, so the result is +0 and invalid is "
                "raised")
    return "invalid operation (IEEE 754-2019 section 7.2): the result is the default NaN"


def _division_by_zero(case: Case) -> str:
    return ("a finite non-zero number divided by zero is an exactly infinite result and raises "
            "divide_by_zero; " + special_decision(case).replace("an infinite input", "an infinite result"))
