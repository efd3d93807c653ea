"""explain("2048 + 1"): one correctly rounded operation, explained.

Expected values come from MPFR (tests/oracle.py's round_exact for the rational results,
gmpy2's own correctly rounded square root for sqrt), from exact Fraction arithmetic on
operand values read with numpy/ml_dtypes, and from the IEEE 754 rules for the special
cases -- never from softfloat's own results.  Organised as: the seeds' example, the
oracle sweep over operations, formats and modes, special values and zeros, operands that
are not values of the format, parsing, and the command line.
"""

from __future__ import annotations

import decimal
import json
import math
import zlib
from fractions import Fraction

import gmpy2
import numpy as np
import pytest

import softfloat as sf
from softfloat.cli import main
from softfloat.explain import Explanation, OperationExplanation, explain, parse_operation

from tests.oracle import round_exact

DIRECTED = ["nearest_even", "toward_zero", "upward", "downward"]
MODES = DIRECTED + ["nearest_away", "odd"]


# =====================================================================================
# the seeds' swamping example
# =====================================================================================
def test_2048_plus_1_in_fp16():
    e = explain("2048 + 1", "fp16")
    assert isinstance(e, OperationExplanation) and e.operation == "add"
    # 2049 lies halfway between 2048 and 2050 (fp16's spacing at 2**11 is 2): a tie, and
    # 2048 = 1.0000000000 x 2**11 has the even last bit
    assert e.exact == 2049 and e.exact_text == "2048 + 1 = 2049"
    assert e.bits == 0x6800 and e.value == 2048
    assert (e.result.below.value, e.result.above.value) == (2048, 2050)
    assert (e.result.guard, e.result.round, e.result.sticky) == (1, 0, 0)
    assert e.decision == "guard=1, round=0, sticky=0: exact tie, rounds to even (down)"
    assert e.result.error == -1 and e.result.error_ulps == Fraction(-1, 2)
    assert e.flags == ("inexact",)
    assert [op.bits for op in e.operands] == [0x6800, 0x3C00]
    text = str(e)
    assert text.startswith("2048 + 1 -> fp16 (rounding=nearest_even)\n")
    assert "  exactly   2048 + 1 = 2049\n" in text
    assert "  above     2050  0 11010 0000000001\n" in text


def test_2048_plus_1_upward_and_in_fp32():
    up = explain("2048 + 1", "fp16", "upward")
    assert up.bits == 0x6801 and up.value == 2050
    assert "upward rounds toward +inf: up" in up.decision
    wide = explain("2048 + 1", "fp32")
    assert wide.value == 2049 and wide.flags == () and "no rounding" in wide.decision


# =====================================================================================
# the oracle sweep: every operation, several formats, every deterministic mode
# =====================================================================================
FORMATS = ["fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "fp6_e3m2", "fp4_e2m1", "fp32"]
SYMBOL = {"add": "+", "sub": "-", "mul": "*", "div": "/"}


def finite_values(fmt, n, rng):
    """Random finite values of ``fmt`` as Fractions, read from the patterns with the
    format's definition (value = (-1)**s * 1.f * 2**(e - bias), subnormals 0.f * 2**emin)."""
    fmt = sf.as_format(fmt)
    out = []
    while len(out) < n:
        p = int(rng.integers(0, 1 << fmt.bits))
        s, e, f = p >> (fmt.bits - 1), (p >> fmt.mantissa_bits) & ((1 << fmt.exponent_bits) - 1), p & fmt.mantissa_mask
        top = (1 << fmt.exponent_bits) - 1
        if fmt.specials.value == "ieee" and e == top:
            continue
        if fmt.specials.value == "fn" and e == top and f == fmt.mantissa_mask:
            continue
        if fmt.specials.value == "fnuz" and p == 1 << (fmt.bits - 1):
            continue
        if e == 0:
            mag = Fraction(f, 1 << fmt.mantissa_bits) * Fraction(2) ** fmt.emin
        else:
            mag = (1 + Fraction(f, 1 << fmt.mantissa_bits)) * Fraction(2) ** (e - fmt.bias)
        out.append(-mag if s else mag)
    return out


def hex_text(q: Fraction) -> str:
    return float(q).hex()  # every value of these formats is a float64


def mpfr_sqrt(q: Fraction, fmt, mode) -> Fraction:
    fmt = sf.as_format(fmt)
    rnd = {"nearest_even": gmpy2.RoundToNearest, "toward_zero": gmpy2.RoundToZero,
           "upward": gmpy2.RoundUp, "downward": gmpy2.RoundDown}[mode]
    ctx = gmpy2.context(precision=fmt.precision, emin=fmt.emin - fmt.mantissa_bits + 1,
                        emax=fmt.emax + 2, subnormalize=True, round=rnd)
    with ctx:
        r = gmpy2.sqrt(gmpy2.mpfr(gmpy2.mpq(q.numerator, q.denominator)))
        r = gmpy2.check_range(r)
    n, d = r.as_integer_ratio()
    return Fraction(int(n), int(d))


def check_story(e, exact: Fraction, want_value, mode):
    """Neighbours, guard/round/sticky and value against the exact result."""
    r = e.result
    if isinstance(want_value, float):
        assert isinstance(r.value, float) and (math.isnan(want_value) == math.isnan(r.value))
    else:
        assert r.value == want_value, (e.expression, r.value, want_value)
    if abs(exact) > Fraction(r.format.max_finite):
        return  # beyond the range: one neighbour is missing or infinite (test_special_cases)
    lo = round_exact(abs(exact), exact < 0, r.format, "downward").value
    hi = round_exact(abs(exact), exact < 0, r.format, "upward").value
    assert (r.below.value, r.above.value) == (lo, hi), (e.expression, r.below, r.above, lo, hi)
    if r.guard is not None:
        toward = lo if exact >= 0 else hi
        ulp = hi - lo if hi != lo else None
        if ulp:
            q = 4 * abs(exact - toward) / ulp            # 0bGR.sss...
            grs = (int(q) >> 1, int(q) & 1, int(q != int(q)))
            assert (r.guard, r.round, r.sticky) == grs, (e.expression, (r.guard, r.round, r.sticky), grs)
        else:
            assert (r.guard, r.round, r.sticky) == (0, 0, 0)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "fma"])
def test_operations_against_mpfr(fmt, name):
    rng = np.random.default_rng(zlib.crc32(repr((fmt, name)).encode()))
    arity = 3 if name == "fma" else 2
    for _ in range(12):
        values = finite_values(fmt, arity, rng)
        if name == "div" and values[1] == 0:
            continue
        texts = [hex_text(v) for v in values]
        expression = (f"fma({', '.join(texts)})" if name == "fma"
                      else f"{texts[0]} {SYMBOL[name]} {texts[1]}")
        exact = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
                 "div": lambda a, b: a / b, "fma": lambda a, b, c: a * b + c}[name](*values)
        for mode in MODES:
            e = explain(expression, fmt, mode)
            assert e.operation == name and e.exact == exact
            assert all(not op.flags for op in e.operands)          # operands are values of fmt
            if exact == 0:
                assert e.value == 0 and e.flags == ()
                continue
            want = round_exact(abs(exact), exact < 0, sf.as_format(fmt), mode)
            check_story(e, exact, want.value, mode)
            assert set(e.flags) == {f for f, on in (("overflow", want.overflow), ("underflow", want.underflow),
                                                    ("inexact", want.inexact), ("invalid", want.invalid)) if on}


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "fp32"])
def test_sqrt_against_mpfr(fmt):
    rng = np.random.default_rng(7)
    for v in finite_values(fmt, 40, rng):
        v = abs(v)
        if v == 0:
            continue
        e = explain(f"sqrt({hex_text(v)})", fmt)
        rational = math.isqrt(v.numerator) ** 2 == v.numerator and math.isqrt(v.denominator) ** 2 == v.denominator
        assert (e.exact is not None) == rational
        for mode in DIRECTED:
            e = explain(f"sqrt({hex_text(v)})", fmt, mode)
            want = mpfr_sqrt(v, fmt, mode)
            assert e.value == want, (v, mode)
            assert e.flags == (() if rational else ("inexact",))
            if not rational:
                assert "(irrational)" in e.exact_text
                lo, hi = mpfr_sqrt(v, fmt, "downward"), mpfr_sqrt(v, fmt, "upward")
                assert (e.result.below.value, e.result.above.value) == (lo, hi)
                # the error row is the distance to the irrational root, to 17 digits
                err = e.to_dict()["error"]
                assert err.startswith("~")
                with decimal.localcontext() as ctx:
                    ctx.prec = 50
                    root = (decimal.Decimal(v.numerator) / decimal.Decimal(v.denominator)).sqrt()
                    want_err = decimal.Decimal(want.numerator) / decimal.Decimal(want.denominator) - root
                assert math.isclose(float(err[1:]), float(want_err), rel_tol=1e-15)


def test_sqrt_of_2_in_fp16():
    e = explain("sqrt(2)", "fp16")
    # sqrt(2) = 1.0110101000 0010011110... (binary): guard 0, round 0, more bits below
    assert e.exact is None and e.exact_text.startswith("sqrt(2) = 1.41421356237309504")
    assert e.bits == 0x3DA8 and (e.result.guard, e.result.round, e.result.sticky) == (0, 0, 1)
    assert "below the midpoint, rounds down" in e.decision


def test_stochastic_operation_is_reproducible_and_lands_on_a_neighbour():
    runs = [explain("1 + 0x1p-12", "fp16", "stochastic", rng=seed) for seed in range(40)]
    assert {r.value for r in runs} == {1, 1 + Fraction(1, 1024)}
    assert all("probability 0.25" in r.decision for r in runs)
    again = [explain("1 + 0x1p-12", "fp16", "stochastic", rng=seed).bits for seed in range(40)]
    assert again == [r.bits for r in runs]


# =====================================================================================
# special values and zeros (IEEE 754-2019 sections 6.1, 6.3, 7.2, 7.3)
# =====================================================================================
@pytest.mark.parametrize(("expression", "fmt", "mode", "bits", "flags"), [
    ("inf - inf", "fp16", "nearest_even", 0x7E00, ("invalid",)),
    ("0 * inf", "fp16", "nearest_even", 0x7E00, ("invalid",)),
    ("0 / 0", "fp16", "nearest_even", 0x7E00, ("invalid",)),
    ("inf / inf", "fp16", "nearest_even", 0x7E00, ("invalid",)),
    ("sqrt(-1)", "fp16", "nearest_even", 0x7E00, ("invalid",)),
    ("fma(0, inf, 1)", "fp16", "nearest_even", 0x7E00, ("invalid",)),
    ("1 / 0", "fp16", "nearest_even", 0x7C00, ("divide_by_zero",)),
    ("-1 / 0", "fp16", "nearest_even", 0xFC00, ("divide_by_zero",)),
    ("1 / -0", "fp16", "nearest_even", 0xFC00, ("divide_by_zero",)),
    ("1 / 0", "fp8_e4m3", "nearest_even", 0x7F, ("invalid", "divide_by_zero")),  # no infinity: NaN
    ("inf + 1", "fp16", "nearest_even", 0x7C00, ()),
    ("inf * -2", "fp16", "nearest_even", 0xFC00, ()),
    ("sqrt(inf)", "fp16", "nearest_even", 0x7C00, ()),
    ("1 / inf", "fp16", "nearest_even", 0x0000, ()),
    ("-1 / inf", "fp16", "nearest_even", 0x8000, ()),
    ("nan + 1", "fp16", "nearest_even", 0x7E00, ()),
    ("1 - 1", "fp16", "nearest_even", 0x0000, ()),
    ("1 - 1", "fp16", "downward", 0x8000, ()),           # -0 only when rounding downward
    ("-0 + -0", "fp16", "nearest_even", 0x8000, ()),
    ("-0 - 0", "fp16", "upward", 0x8000, ()),
    ("-1 * 0", "fp16", "nearest_even", 0x8000, ()),
    ("sqrt(-0)", "fp16", "nearest_even", 0x8000, ()),
    ("fma(2, 3, -6)", "fp16", "downward", 0x8000, ()),
    ("300 * 300", "fp16", "nearest_even", 0x7C00, ("overflow", "inexact")),
    ("300 * 300", "fp16", "toward_zero", 0x7BFF, ("overflow", "inexact")),
    ("0x1p-13 * 0x1p-13", "fp16", "nearest_even", 0x0000, ("underflow", "inexact")),
])
def test_special_cases(expression, fmt, mode, bits, flags):
    e = explain(expression, fmt, mode)
    assert (e.bits, e.flags) == (bits, flags), (expression, hex(e.bits), e.flags)
    str(e)  # every case prints
    json.dumps(e.to_dict())


def test_special_cases_say_why():
    assert "invalid operation" in explain("inf - inf", "fp16").decision
    assert "has no value: invalid operation" in explain("0 / 0", "fp16").exact_text
    dbz = explain("1 / 0", "fp16")
    assert dbz.exact == math.inf and "divided by zero" in dbz.decision
    assert "has no infinity" in explain("1 / 0", "fp8_e4m3").decision
    assert "IEEE 754-2019 section 6.3" in explain("1 - 1", "fp16", "downward").note
    assert "NAN_POLICY" in explain("nan + 1", "fp16").note
    invalid_fp4 = explain("0 / 0", "fp4_e2m1")
    assert invalid_fp4.bits == 0 and "no NaN" in invalid_fp4.decision


# =====================================================================================
# operands that are not values of the format
# =====================================================================================
def test_operands_are_rounded_first_and_say_so():
    e = explain("0.1 + 0.2", "fp16")
    a, b = (Fraction(float(np.float16(v))) for v in ("0.1", "0.2"))  # numpy's float16 rounding
    assert [op.value for op in e.operands] == [a, b]
    assert e.exact == a + b
    assert all(op.flags == ("inexact",) for op in e.operands)
    assert "0.1 rounded into fp16 (inexact)" in str(e)
    want = round_exact(a + b, False, sf.fp16, "nearest_even")
    assert e.value == want.value


def test_operands_use_the_same_rounding_mode():
    # 0.3 = 1.0011001100|1100... x 2**-2: nearest rounds up, toward_zero truncates
    e = explain("0.3 * 3", "fp16", "toward_zero")
    assert e.operands[0].value == Fraction(1228, 4096)
    assert e.operands[0].value < Fraction(3, 10) < Fraction(float(np.float16(0.3)))


def test_an_operand_beyond_the_range():
    e = explain("1e10 - 1", "fp16")
    assert e.operands[0].value == math.inf and e.operands[0].flags == ("overflow", "inexact")
    assert e.bits == 0x7C00


# =====================================================================================
# parsing
# =====================================================================================
@pytest.mark.parametrize(("text", "parsed"), [
    ("2048 + 1", ("add", ("2048", "1"))),
    ("2048+1", ("add", ("2048", "1"))),
    ("-1 - -2", ("sub", ("-1", "-2"))),
    ("1e-5 * 3", ("mul", ("1e-5", "3"))),
    ("1E+5+2", ("add", ("1E+5", "2"))),
    ("0x1p-3/2", ("div", ("0x1p-3", "2"))),
    ("1/3 / 2", ("div", ("1/3", "2"))),
    ("1 / 2/3", ("div", ("1", "2/3"))),
    ("inf - inf", ("sub", ("inf", "inf"))),
    ("-nan * 1", ("mul", ("-nan", "1"))),
    ("sqrt(2)", ("sqrt", ("2",))),
    (" SQRT ( 0x1.8p1 ) ", ("sqrt", ("0x1.8p1",))),
    ("fma(1.5, 2, -3)", ("fma", ("1.5", "2", "-3"))),
    ("1_000 + 1", ("add", ("1_000", "1"))),
])
def test_parse_operation(text, parsed):
    assert parse_operation(text) == parsed


@pytest.mark.parametrize("text", ["1/3", "-6.36", "six", "1 +", "+ 1", "1 + + 1", "", "1 2",
                                  "+".join(["1"] * 30)])
def test_not_an_operation(text):
    assert parse_operation(text) is None


@pytest.mark.parametrize(("text", "words"), [
    ("1/2/3", "reads as '1' / '2/3' or '1/2' / '3'; put spaces around the operator"),
    ("fma(1, 2)", "fma takes 3 operands (a, b, c); got 2"),
    ("sqrt(1, 2)", "sqrt takes 1 operand (x); got 2"),
    ("sqrt(x)", "the operand 'x' of sqrt is not a number"),
    ("log(2)", "log() is not an operation explain knows"),
])
def test_operation_errors(text, words):
    with pytest.raises(ValueError) as info:
        explain(text, "fp16")
    assert str(info.value).startswith(f"x={text!r}") and words in str(info.value), str(info.value)


def test_not_a_number_nor_an_operation():
    with pytest.raises(ValueError, match=r"^x='six' is not a number .*or an operation such as '2048 \+ 1'"):
        explain("six", "fp16")


def test_a_ratio_is_still_one_number():
    e = explain("1/3", "fp16")
    assert isinstance(e, Explanation) and e.exact == Fraction(1, 3)


# =====================================================================================
# the command line
# =====================================================================================
def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_explain_2048_plus_1(capsys):
    code, out, err = run(capsys, "explain", "2048 + 1", "--format", "fp16")
    assert code == 0 and err == ""
    assert out == str(explain("2048 + 1", "fp16")) + "\n"
    lines = out.splitlines()
    assert lines[0] == "2048 + 1 -> fp16 (rounding=nearest_even)"
    assert "  exactly   2048 + 1 = 2049" in lines
    assert "  below     2048  0 11010 0000000000  (the result)" in lines
    assert "  above     2050  0 11010 0000000001" in lines
    assert "  rounding  guard=1, round=0, sticky=0: exact tie, rounds to even (down)" in lines


@pytest.mark.parametrize(("expression", "fmt", "words"), [
    ("0.1 * 3", "bf16", "exactly"), ("1 / 3", "fp8_e4m3", "rounds"), ("2 - 0x1p-9", "fp16", "exactly"),
    ("sqrt(2)", "fp32", "(irrational)"), ("fma(1.5, 2, -3)", "fp16", "= 0 exactly"),
    ("-1 + 2", "fp16", "(-1) + 2 = 1"),
])
def test_cli_explain_each_operation(capsys, expression, fmt, words):
    code, out, err = run(capsys, "explain", expression, "-f", fmt)
    assert code == 0, err
    assert out.startswith(f"{expression} -> ") and words in out


def test_cli_explain_operation_json(capsys):
    code, out, _ = run(capsys, "explain", "2048 + 1", "-f", "fp16", "--json")
    assert code == 0
    d = json.loads(out)
    assert d["input"] == "2048 + 1" and d["operation"] == "add" and d["bits"] == 0x6800
    assert d["exact"] == "2048 + 1 = 2049" and d["below"] == "2048" and d["above"] == "2050"
    assert [o["hex"] for o in d["operands"]] == ["0x6800", "0x3c00"]


def test_cli_explain_operation_errors(capsys):
    code, _, err = run(capsys, "explain", "sqrt(x)", "-f", "fp16")
    assert code == 2 and err.startswith("softfloat: error: VALUE='sqrt(x)': the operand 'x'")
    code, _, err = run(capsys, "explain", "six")
    assert code == 2 and 'or one operation such as "2048 + 1"' in err


# =====================================================================================
# attributes=: one value for every option, its platform's tininess included
# =====================================================================================
@pytest.mark.parametrize("platform, tininess", [("default", "after"), ("x86-sse", "after"), ("arm", "before")])
def test_explain_takes_attributes_and_the_platforms_tininess(platform, tininess):
    """Just below fp16's smallest normal 2**-14, rounding to 2**-14: tiny before rounding,
    not after (IEEE 754-2019 section 7.5), so only a tininess-before platform flags
    underflow."""
    q = Fraction(1, 2**14) - Fraction(1, 2**27)
    want = round_exact(q, False, sf.fp16, "nearest_even", tininess=tininess)
    e = explain(float(q), "fp16", attributes=sf.RoundingAttributes(platform=platform))
    assert e.value == want.value == Fraction(1, 2**14)
    assert ("underflow" in e.flags) == want.underflow == (tininess == "before")
    assert e.flags == explain(float(q), "fp16", tininess=tininess).flags


def test_explain_attributes_and_keywords_for_values_and_operations():
    up = sf.RoundingAttributes(rounding="upward")
    third = Fraction(1, 3)
    above = round_exact(third, False, sf.fp16, "upward").value
    below = round_exact(third, False, sf.fp16, "toward_zero").value
    assert explain("1/3", "fp16", attributes=up).value == above
    assert explain("1 / 3", "fp16", attributes=up).value == above  # the operation, too
    # a keyword that is given wins over the same field of attributes
    e = explain("1 / 3", "fp16", "toward_zero", attributes=up)
    assert e.value == below and e.result.rounding is sf.Rounding.TOWARD_ZERO
    with pytest.raises(TypeError, match="attributes must be a softfloat.RoundingAttributes"):
        explain(1.0, "fp16", attributes="upward")
