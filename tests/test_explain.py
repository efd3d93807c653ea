"""explain(): the worked examples, every number class, and its numbers against an oracle.

The oracle is exact Fraction arithmetic written here from the format's definition
(value = 1.f x 2**e, spacing 2**(e - m), subnormals on emin's grid); it shares no code
with softfloat.  Cases are organised by number class: seeds, ties, subnormals and
underflow, overflow, specials and zeros, then property tests and the views.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import softfloat
from softfloat.explain import Explanation, bit_string, explain

DETERMINISTIC = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd"]


# -- the oracle: brackets and spacing from the format's definition ----------------------
def oracle_ulp(a: Fraction, fmt) -> Fraction:
    """Spacing at magnitude a: 2**(e - m) for a in [2**e, 2**(e+1)), e clamped to the range."""
    e = fmt.emin
    if a > 0:
        e = a.numerator.bit_length() - a.denominator.bit_length()
        while Fraction(2) ** e > a:
            e -= 1
        while Fraction(2) ** (e + 1) <= a:
            e += 1
    e = min(max(e, fmt.emin), fmt.emax)
    return Fraction(2) ** (e - fmt.mantissa_bits)


def oracle_bracket(x: Fraction, fmt) -> tuple[Fraction, Fraction]:
    """The multiples of the spacing just below and above |x| (may exceed max_finite)."""
    a = abs(x)
    ulp = oracle_ulp(a, fmt)
    lo = (a // ulp) * ulp
    hi = lo if lo == a else lo + ulp
    return (lo, hi) if x >= 0 else (-hi, -lo)


# =====================================================================================
# the seeds' worked examples
# =====================================================================================
def test_seed_0_875_fp32():
    e = explain(0.875, "fp32")
    assert e.bit_string == "0 01111110 11000000000000000000000"
    assert (e.sign, e.biased_exponent, e.exponent) == (0, 126, -1)
    assert e.value == Fraction(7, 8) and e.error == 0 and e.flags == ()
    text = str(e)
    assert "0 01111110 11000000000000000000000" in text
    assert "126 - 127 = -1" in text
    assert "(-1)^0 x 1.11000000000000000000000 (binary) x 2^-1 = 0.875" in text


@pytest.mark.parametrize("x", ["6.36", 6.36, np.float64(6.36)], ids=["decimal-string", "float", "np.float64"])
def test_seed_6_36_fp32(x):
    e = explain(x, "fp32")
    assert e.bit_string == "0 10000001 10010111000010100011111"
    assert e.bits == 0x40CB851F
    assert "0 10000001 10010111000010100011111" in str(e)
    assert e.ieee_class == "positiveNormal" and e.exponent == 2
    assert e.flags == ("inexact",)
    # 6.36 lies above the midpoint of its neighbours: guard=1 and something below it
    assert (e.guard, e.round, e.sticky) == (1, 0, 1)
    assert e.decision.startswith("guard=1, round=0, sticky=1: above the midpoint, rounds up")


def test_exact_input_decimal_vs_float():
    """The string is the exact decimal 6.36; the float is its binary value, shown exactly."""
    s, f = explain("6.36", "fp32"), explain(6.36, "fp32")
    assert s.exact == Fraction(636, 100)
    assert f.exact == Fraction(6.36) != s.exact
    assert "exactly   6.36\n" in str(s)
    assert "6.36000000000000031974423109204508364200592041015625" in str(f)
    # the error is exact: value minus the exact input, with no float rounding
    assert s.error == Fraction(0x40CB851F & 0x7FFFFF | 0x800000, 2**21) - Fraction(636, 100)
    assert s.error_ulps == s.error / Fraction(1, 2**21) == Fraction(7, 25)
    assert "= 0.28 ulp" in str(s)


def test_fraction_input_exact():
    e = explain(Fraction(1, 3), "bf16")
    assert e.exact == Fraction(1, 3)
    assert "1/3" in str(e)
    assert e.error == e.value - Fraction(1, 3)


# =====================================================================================
# ties
# =====================================================================================
def test_tie_to_even_goes_down_fp16():
    # 1 + 2**-11 = 1.0000000000|1 in fp16: exactly halfway between 1 and 1 + 2**-10
    e = explain(1 + 2**-11, "fp16")
    assert e.bits == 0x3C00
    assert (e.guard, e.round, e.sticky) == (1, 0, 0)
    assert "exact tie, rounds to even" in e.decision
    assert e.below.value == 1 and e.above.value == 1 + Fraction(1, 1024)
    assert e.error_ulps == Fraction(-1, 2)


def test_tie_nearest_away_goes_up_fp16():
    e = explain(1 + 2**-11, "fp16", "nearest_away")
    assert e.bits == 0x3C01
    assert "exact tie, rounds away from zero" in e.decision
    assert e.error_ulps == Fraction(1, 2)


def test_tie_to_even_goes_up_when_lower_is_odd():
    # 1.0000000001|1 -> 1.0000000010 (even)
    e = explain(1 + 3 * 2**-11, "fp16")
    assert e.bits == 0x3C02
    assert e.decision.endswith("exact tie, rounds to even (up)")


def test_negative_tie_words_use_sign():
    e = explain(-(1 + 3 * 2**-11), "fp16")
    assert e.bits == 0xBC02
    assert "rounds to even (down, away from zero)" in e.decision


@pytest.mark.parametrize("mode, bits, words", [
    ("toward_zero", 0x3C00, "toward_zero truncates: down"),
    ("upward", 0x3C01, "upward rounds toward +inf: up"),
    ("downward", 0x3C00, "downward rounds toward -inf: down"),
    ("odd", 0x3C01, "round to odd picks the neighbour whose last bit is 1: up"),
])
def test_directed_modes_words(mode, bits, words):
    e = explain("1.0001", "fp16", mode)
    assert e.bits == bits
    assert words in e.decision


# =====================================================================================
# subnormals and underflow
# =====================================================================================
def test_subnormal_result_fp16():
    e = explain("1e-7", "fp16")
    assert e.ieee_class == "positiveSubnormal"
    assert e.bit_string == "0 00000 0000000010"
    assert e.exponent == -14 and e.biased_exponent == 0
    assert "0.0000000010 (binary) x 2^-14" in str(e)
    assert "subnormal or zero" in str(e)
    assert e.ulp == Fraction(1, 2**24)
    assert e.flags == ("underflow", "inexact")


def test_below_half_min_subnormal_rounds_to_zero():
    e = explain("1e-400", "fp32")
    assert e.bits == 0 and e.ieee_class == "positiveZero"
    assert e.below.value == 0 and e.above.value == Fraction(2) ** -149
    assert (e.guard, e.round, e.sticky) == (0, 0, 1)
    assert "below the midpoint, rounds down" in e.decision
    assert e.flags == ("underflow", "inexact")
    assert "~1e-400 (exact decimal: 401 digits)" in str(e)


def test_negative_tiny_in_fnuz_gives_plus_zero():
    e = explain(-1e-30, "e4m3fnuz")
    assert e.bits == 0 and e.ieee_class == "positiveZero"
    assert "rounds up, toward zero" in e.decision


@pytest.mark.parametrize("tininess", ["after", "before"])
def test_flush_to_zero_is_described(tininess):
    e = explain("1e-5", "fp16", subnormals=False, tininess=tininess)
    assert e.bits == 0
    assert "flushed to 0" in e.decision
    assert "underflow" in e.flags


def test_flush_exact_subnormal():
    e = explain(2.0**-24, "fp16", subnormals=False)
    assert e.bits == 0
    assert e.decision.startswith("guard=0, round=0, sticky=0: exact")
    assert "flushed to 0" in e.decision


def test_tininess_after_keeps_value_rounding_to_min_normal():
    # just below 2**-14, within half an ulp of the 11-bit grid: rounds to the smallest normal
    x = Fraction(2) ** -14 - Fraction(2) ** -27
    after = explain(x, "fp16", subnormals=False, tininess="after")
    before = explain(x, "fp16", subnormals=False, tininess="before")
    assert after.value == Fraction(2) ** -14 and "flushed" not in after.decision
    assert before.value == 0 and "flushed" in before.decision


# =====================================================================================
# overflow
# =====================================================================================
def test_overflow_to_infinity_fp16():
    e = explain(65520, "fp16")
    assert e.bits == 0x7C00 and e.ieee_class == "positiveInfinity"
    assert e.below.value == 65504 and e.above.value == math.inf
    assert "exact tie, rounds to even (up)" in e.decision
    assert "65536 exceeds the largest finite value 65504" in e.decision
    assert e.error == math.inf
    assert e.flags == ("overflow", "inexact")
    assert "all ones, reserved for infinity and NaN" in str(e)


def test_just_below_overflow_threshold_stays_finite():
    e = explain(65519, "fp16")
    assert e.value == 65504 and e.flags == ("inexact",)
    assert e.error_ulps == Fraction(-15, 32)


def test_far_overflow_every_mode():
    e = explain("1e5000", "fp32")
    assert e.value == math.inf and e.guard is None
    assert "every rounding mode overflows" in e.decision
    tz = explain("-1e5000", "fp16", "toward_zero")
    assert tz.value == -65504 and "largest finite value -65504" in tz.decision
    assert tz.flags == ("overflow", "inexact")


def test_overflow_fn_format_gives_nan_or_saturates():
    nan = explain(500, "e4m3")
    assert nan.ieee_class == "quietNaN" and nan.above is None
    assert "no infinity" in nan.decision and nan.error is None
    sat = explain(500, "e4m3", saturate=True)
    assert sat.value == 448 and sat.error == -52 and sat.error_ulps == Fraction(-52, 32)


def test_overflow_finite_format_saturates():
    e = explain(7, "fp4_e2m1")
    assert e.value == 6 and e.above is None
    assert "neither infinity nor NaN" in e.decision
    assert "none (fp4_e2m1 has no value beyond 6)" in str(e)


def test_fn_between_max_and_half_ulp_rounds_to_max():
    e = explain(460, "e4m3")
    assert e.value == 448 and e.flags == ("inexact",)


# =====================================================================================
# specials and zeros
# =====================================================================================
def test_nan_fp32():
    e = explain("nan", "fp32")
    assert e.ieee_class == "quietNaN" and e.bits == 0x7FC00000
    assert e.below is None and e.above is None and e.error is None and e.ulp is None
    assert e.exact is None and e.exponent is None
    assert "NaN stays NaN" in e.decision
    assert e.to_dict()["exact"] is None


def test_signaling_nan_raises_invalid():
    e = explain("snan", "fp16")
    assert e.ieee_class == "quietNaN" and e.flags == ("invalid",)
    assert "signaling NaN" in e.decision
    f32 = np.array([0x7F800001], dtype=np.uint32).view(np.float32)[0]
    assert "signaling NaN" in explain(f32, "bf16").decision


def test_nan_into_format_without_nan():
    e = explain(float("nan"), "fp4_e2m1")
    assert e.bits == 0 and e.flags == ("invalid",)
    assert "has no NaN" in e.decision


def test_infinities():
    assert explain("-inf", "fp32").decision == "infinity is representable: exact"
    fn = explain("inf", "e4m3")
    assert fn.ieee_class == "quietNaN" and fn.flags == ("invalid",)
    assert "single NaN pattern" in str(fn)
    fp4 = explain(math.inf, "fp4_e2m1")
    assert fp4.value == 6 and fp4.flags == ("overflow", "inexact")


@pytest.mark.parametrize("x, bits", [(0.0, 0x0000), (-0.0, 0x8000), ("-0", 0x8000), (0, 0x0000)])
def test_zeros(x, bits):
    e = explain(x, "fp16")
    assert e.bits == bits and e.error == 0 and e.flags == ()
    assert "exact" in e.decision


def test_negative_zero_in_fnuz():
    e = explain("-0", "e4m3fnuz")
    assert e.bits == 0 and e.negative
    assert "exactly   -0\n" in str(e)


# =====================================================================================
# properties against the oracle
# =====================================================================================
FORMATS = list(softfloat.catalogue())


def _check_against_oracle(x, fmt, mode):
    e = explain(x, fmt, mode)
    q = e.exact
    lo, hi = oracle_bracket(q, fmt)
    ulp = oracle_ulp(abs(q), fmt)
    assert e.ulp == ulp
    max_finite = Fraction(fmt.max_finite)
    # the neighbours bracket x and are the oracle's (where the format has them)
    if abs(lo) <= max_finite:
        assert e.below is not None and e.below.value == lo
    if abs(hi) <= max_finite:
        assert e.above is not None and e.above.value == hi
    if e.below is not None:
        assert e.below.value <= q
    if e.above is not None:
        assert q <= e.above.value
    # guard/round/sticky: r = (|x| - t) / ulp = 0.G R S...
    if e.guard is not None:
        r = (abs(q) - min(abs(lo), abs(hi))) / ulp
        assert e.guard == int(r >= Fraction(1, 2))
        assert e.round == int(math.floor(4 * r)) % 2
        assert e.sticky == int(4 * r != math.floor(4 * r))
        assert ("exact tie" in e.decision) == (r == Fraction(1, 2))
    # the error, exactly
    if isinstance(e.value, Fraction):
        assert e.error == e.value - q
        assert e.error_ulps == (e.value - q) / ulp
        if "overflow" not in e.flags:
            assert e.value in (lo, hi)
            bound = Fraction(1, 2) if mode.startswith("nearest") else Fraction(1)
            assert abs(e.error_ulps) <= bound
    # the bits are encode's
    assert e.bits == int(softfloat.encode(x, fmt, mode))
    return e


@given(x=st.floats(allow_nan=False, allow_infinity=False), fmt=st.sampled_from(FORMATS),
       mode=st.sampled_from(DETERMINISTIC))
@example(x=1 + 2**-11, fmt=softfloat.fp16, mode="nearest_even")
@example(x=65520.0, fmt=softfloat.fp16, mode="nearest_even")
@example(x=2.0**-25, fmt=softfloat.fp16, mode="nearest_even")
@example(x=5e-324, fmt=softfloat.fp64, mode="upward")
def test_floats_against_oracle(x, fmt, mode):
    _check_against_oracle(x, fmt, mode)


@st.composite
def scaled_fractions(draw):
    """Fractions with small numerators and denominators, scaled into any binade."""
    q = draw(st.fractions(min_value=-1000, max_value=1000, max_denominator=10**6))
    return q * Fraction(2) ** draw(st.integers(-160, 140))


@given(q=scaled_fractions(), fmt=st.sampled_from(FORMATS[1:]), mode=st.sampled_from(DETERMINISTIC))
def test_fractions_against_oracle(q, fmt, mode):
    _check_against_oracle(q, fmt, mode)


@given(x=st.floats(-1e6, 1e6), seed=st.integers(0, 2**32))
def test_stochastic_picks_a_neighbour(x, seed):
    e = explain(x, "bf16", "stochastic", rng=seed)
    assert e.bits == int(softfloat.encode(x, "bf16", "stochastic", rng=seed))
    assert e.value in (e.below.value, e.above.value)
    if e.below.bits != e.above.bits:
        assert "stochastic rounds away from zero with probability" in e.decision


def test_every_fp8_pattern_is_exact():
    """Every finite value of a small format explains as exact, with its own bits."""
    for fmt in (softfloat.fp8_e4m3, softfloat.fp8_e5m2fnuz, softfloat.fp4_e2m1):
        for b in range(1 << fmt.bits):
            if softfloat.is_nan(b, fmt) or softfloat.is_infinite(b, fmt):
                continue
            v = float(softfloat.decode(b, fmt))
            e = explain(v, fmt)
            assert e.error == 0 and e.flags == ()
            assert e.below.bits == e.above.bits == e.bits
            assert e.value == Fraction(v)


# =====================================================================================
# the views and the boundary
# =====================================================================================
DICT_KEYS = {
    "input", "exact", "format", "rounding", "bits", "hex", "bit_string", "sign",
    "biased_exponent", "exponent", "fraction", "value", "class", "below", "above", "ulp",
    "guard", "round", "sticky", "decision", "error", "error_ulps", "flags",
}


@pytest.mark.parametrize("x, fmt", [("6.36", "fp32"), ("nan", "fp16"), (500, "e4m3"), ("1e5000", "bf16")])
def test_to_dict_keys_and_json(x, fmt):
    d = explain(x, fmt).to_dict()
    assert set(d) == DICT_KEYS
    json.dumps(d)  # plain data only


def test_to_dict_values_are_exact_text():
    d = explain("6.36", "fp32").to_dict()
    assert d["bit_string"] == "0 10000001 10010111000010100011111"
    assert d["hex"] == "0x40cb851f" and d["bits"] == 0x40CB851F
    assert d["value"] == "6.360000133514404296875"
    assert d["below"] == "6.35999965667724609375"
    assert d["exact"] == "6.36" and d["error_ulps"] == "0.28"
    assert d["flags"] == ["inexact"] and d["class"] == "positiveNormal"


def test_repr_html_contains_bits():
    e = explain("6.36", "fp32")
    page = e._repr_html_()
    assert "0 10000001 10010111000010100011111" in page
    assert page.startswith("<div>") and "<table>" in page
    assert "&#x27;6.36&#x27;" in page  # escaped, not raw


def test_repr_is_short():
    assert repr(explain(0.875, "fp32")) == "<Explanation 0.875 -> fp32 0x3f600000 (nearest_even)>"


def test_numpy_scalars():
    e = explain(np.float32(0.1), "bf16")
    assert e.exact == Fraction(float(np.float32(0.1)))
    assert explain(np.int64(3), "fp4_e2m1").value == 3
    assert explain(np.array(0.875), "fp32").bits == 0x3F600000


def test_bit_string_function():
    assert bit_string(0x3F600000, softfloat.fp32) == "0 01111110 11000000000000000000000"
    assert bit_string(0x7, "e2m1") == "0 11 1"


@pytest.mark.parametrize("x, exc, words", [
    ([1.0, 2.0], TypeError, "one scalar"),
    (np.zeros(3), TypeError, "one scalar"),
    ("six", ValueError, "not a number"),
    (True, TypeError, "bool"),
    (1 + 2j, TypeError, "number"),
])
def test_bad_input(x, exc, words):
    with pytest.raises(exc, match=words):
        explain(x, "fp32")


def test_bad_format_and_rounding():
    with pytest.raises(ValueError, match="not a known format"):
        explain(1.0, "fp7")
    with pytest.raises(ValueError, match="rounding"):
        explain(1.0, "fp32", "nearest")
    with pytest.raises(TypeError, match="saturate"):
        explain(1.0, "fp32", saturate="yes")


def test_explanation_is_frozen():
    e = explain(1.0, "fp32")
    assert isinstance(e, Explanation)
    with pytest.raises(AttributeError):
        e.bits = 0


@given(q=scaled_fractions(), fmt=st.sampled_from(FORMATS[1:]),
       mode=st.sampled_from(DETERMINISTIC + ["stochastic"]), saturate=st.booleans(),
       subnormals=st.booleans(), tininess=st.sampled_from(["after", "before"]))
def test_story_agrees_with_encode_under_every_option(q, fmt, mode, saturate, subnormals, tininess):
    """explain's own consistency checks (AssertionError on disagreement) never fire."""
    kw = dict(saturate=saturate, subnormals=subnormals, tininess=tininess)
    e = explain(q, fmt, mode, rng=0, **kw)
    bits, flags = softfloat.encode(q, fmt, mode, rng=0, return_flags=True, **kw)
    assert e.bits == int(bits) and e.flags == flags.raised()
    assert e.decision


def test_saturate_is_named_as_the_reason():
    e = explain(70000, "fp16", saturate=True)
    assert e.value == 65504 and "saturate=True clamps it" in e.decision
