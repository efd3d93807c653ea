"""softfloat.strategies: draws are values of the format, obey every option, reach every class,
shrink to simple values, and find planted conversion bugs within hypothesis' default budget.

The planted bugs are small hand-written converters (numpy bit tricks, not softfloat), each
checked against ``softfloat.encode``:

* fp32 -> bf16 rounding ties away from zero: ``(u + 0x8000) >> 16``;
* fp32 -> fp16 that sends everything above 65504 to infinity (65504 < |x| < 65520 should
  round to 65504);
* fp32 -> fp16 that flushes subnormal results to zero;
* an fp16 ulp function that forgets that the spacing stops shrinking below 2**-14.

Each is found in 100 examples from several seeds (generation only, no database) and under
the CI profile; the correct converter passes the same property, so the test is meaningful.
"""

from __future__ import annotations

import math
import random
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

import softfloat as sf
from softfloat import Format, Rounding, Specials
from softfloat.strategies import arrays, bits, formats, rounding_modes, values
from softfloat.testing import ulp_distance

CUSTOM = [Format(3, 4), Format(2, 1), Format(4, 3, "fnuz"), Format(3, 2, "fn"), Format(5, 5, "finite"),
          Format(7, 1, "fnuz"), Format(11, 30), Format(2, 1, "fn")]
ALL_FORMATS = list(sf.catalogue()) + CUSTOM
FORMAT_IDS = [f.name for f in ALL_FORMATS]
SEEDS = range(5)
README = Path(__file__).resolve().parent.parent / "README.md"


def search(strategy, condition, *, seed=None, max_examples=100, shrink=True):
    """hypothesis.find with no example database (so nothing is replayed from earlier runs)."""
    phases = [Phase.generate, Phase.shrink] if shrink else [Phase.generate]
    extra = {} if seed is None else {"derandomize": False}
    return find(strategy, condition, random=None if seed is None else random.Random(seed),
                settings=settings(max_examples=max_examples, database=None, phases=phases, **extra))


def finds(strategy, condition, seed, max_examples=100):
    """True if ``condition`` holds for some draw among the first ``max_examples``."""
    try:
        search(strategy, condition, seed=seed, max_examples=max_examples, shrink=False)
    except NoSuchExample:
        return False
    return True


def is_negative(x: float) -> bool:
    return math.copysign(1.0, x) < 0


def order_key(x: float):
    """The IEEE total order on non-NaN floats, -0.0 below +0.0 (independent of softfloat)."""
    return (x, math.copysign(1.0, x))


def class_of(x: float, fmt: Format) -> str:
    """The IEEE class of a drawn value as a value of ``fmt``.

    NaNs are classed from their float64 bits (encode would quiet a signaling NaN); the
    quiet bit keeps its meaning because decode only shifts the fraction up."""
    if math.isnan(x):
        quiet = (np.float64(x).view(np.uint64) >> np.uint64(51)) & np.uint64(1)
        return "quietNaN" if quiet else "signalingNaN"
    return sf.classify(sf.encode(x, fmt), fmt)


def classes_of(fmt: Format) -> set[str]:
    """Every class ``fmt`` has: the classes of patterns built from characteristic fields
    (sign x exponent 0, 1, all ones x fraction 0, 1, quiet bit, all ones)."""
    top, m = (1 << fmt.exponent_bits) - 1, fmt.mantissa_bits
    fractions = {0, 1, 1 << (m - 1), (1 << m) - 1}
    patterns = [int(sf.compose(s, e, f, fmt)) for s in (0, 1) for e in (0, 1, top) for f in fractions]
    return set(sf.classify(np.array(patterns, dtype=np.uint64), fmt).tolist())


def assert_value_of(x: float, fmt: Format) -> None:
    """``x`` is exactly representable in ``fmt``: encode/decode gives it back, sign included."""
    assert isinstance(x, float)
    if math.isnan(x):
        assert fmt.has_nan
        return
    back = float(sf.decode(sf.encode(x, fmt), fmt))
    assert back == x and is_negative(back) == is_negative(x), (x, fmt)


# =====================================================================================
# import behaviour
# =====================================================================================
def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_missing_hypothesis_names_the_extra():
    result = run_python("import sys; sys.modules['hypothesis'] = None; import softfloat.strategies")
    assert result.returncode != 0
    assert "ImportError" in result.stderr
    assert "softfloat.strategies needs hypothesis, which is not installed" in result.stderr
    assert 'pip install -e ".[test]"' in result.stderr       # in a checkout
    assert 'pip install "softfloat-emu[test]"' in result.stderr  # an installed package


def test_softfloat_and_softfloat_testing_do_not_import_hypothesis():
    result = run_python("import sys, softfloat, softfloat.testing; print('hypothesis' in sys.modules)")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


# =====================================================================================
# argument validation: before any draw, naming the argument, the problem and the fix
# =====================================================================================
BAD_ARGUMENTS = [
    (lambda: values(sf.bf16, max_value=1e6), ValueError,
     r"max_value=1000000\.0 is not representable in bf16; the nearest values are 999424\.0 and 1003520\.0"),
    (lambda: values(sf.fp16, min_value=0.1), ValueError,
     r"min_value=0\.1 is not representable in fp16; the nearest values are 0\.0999755859375 and 0\.10003662109375"),
    (lambda: values(sf.fp16, max_value=70000), ValueError,
     r"max_value=70000 is not representable in fp16: it lies beyond the largest finite value 65504\.0; "
     r"use max_value=65504\.0"),
    (lambda: values(sf.fp8_e4m3, min_value=-math.inf), ValueError,
     r"min_value=-inf is not representable in fp8_e4m3, which has no infinity; use min_value=-448\.0 or None"),
    (lambda: values(sf.fp16, min_value=math.nan), ValueError, r"min_value=nan is NaN"),
    (lambda: values(sf.fp16, min_value="1"), TypeError, r"min_value must be a real number or None; got '1' \(str\)"),
    (lambda: values(sf.fp16, min_value=2.0, max_value=1.0), ValueError,
     r"min_value=2\.0 is greater than max_value=1\.0; swap them"),
    (lambda: values(sf.fp16, min_value=0.0, max_value=-0.0), ValueError, r"-0\.0 sorts below 0\.0"),
    (lambda: values(sf.fp6_e3m2, allow_nan=True), ValueError, r"allow_nan=True, but fp6_e3m2 has no NaN"),
    (lambda: values(sf.fp16, max_value=1.0, allow_nan=True), ValueError,
     r"allow_nan=True cannot be combined with min_value or max_value"),
    (lambda: values(sf.fp8_e4m3, allow_infinity=True), ValueError,
     r"allow_infinity=True, but fp8_e4m3 has no infinity"),
    (lambda: values(sf.fp16, min_value=0.0, max_value=1.0, allow_infinity=True), ValueError,
     r"allow_infinity=True, but min_value=0\.0 and max_value=1\.0 leave out both infinities"),
    (lambda: values(sf.fp16, max_value=math.inf, allow_infinity=False), ValueError,
     r"allow_infinity=False contradicts an infinite bound"),
    (lambda: values(sf.fp16, min_value=1.0, allow_subnormal=True), ValueError,
     r"allow_subnormal=True, but no subnormal of fp16 lies between min_value=1\.0 and max_value=None"),
    (lambda: values(sf.fp16, exclude_min=True), ValueError, r"exclude_min=True needs a min_value to exclude"),
    (lambda: values(sf.fp16, min_value=1.0, max_value=1.0, exclude_max=True), ValueError,
     r"values\(fp16, \.\.\.\) can draw nothing: no value of fp16 satisfies min_value=1\.0, max_value=1\.0, "
     r"exclude_min=False, exclude_max=True"),
    (lambda: values(sf.fp16, min_value=-0.0, max_value=-0.0, allow_negative_zero=False), ValueError,
     r"can draw nothing"),
    (lambda: values(sf.fp16, allow_nan=1), TypeError, r"allow_nan must be True, False or None"),
    (lambda: values(sf.fp16, exclude_min="yes"), TypeError, r"exclude_min must be True or False"),
    (lambda: values("fp17"), ValueError, r"fmt='fp17' is not a known format"),
    (lambda: values(sf.fp16, around="fp17"), ValueError, r"around='fp17' is not a known format"),
    (lambda: bits(sf.fp8_e4m3, classes=["positiveInfinity"]), ValueError,
     r"classes holds 'positiveInfinity', but fp8_e4m3 has no such patterns; its classes are"),
    (lambda: bits(sf.fp16, classes=["positiveNormals"]), ValueError,
     r"classes holds 'positiveNormals', which is not an IEEE class name"),
    (lambda: bits(sf.fp16, classes="positiveNormal"), TypeError, r"wrap a single name in a list"),
    (lambda: bits(sf.fp16, classes=[]), ValueError, r"classes is empty"),
    (lambda: arrays(sf.fp16, 3, elements={"min": 0.0}), TypeError, r"elements has unknown key 'min'"),
    (lambda: arrays(sf.fp16, 3, elements=[1.0]), TypeError, r"elements must be a hypothesis strategy or a mapping"),
    (lambda: arrays(sf.fp16, 3, elements={"max_value": 1e6}), ValueError, r"max_value=1000000\.0 is not representable"),
    (lambda: arrays(sf.fp16, 3, as_bits=1), TypeError, r"as_bits must be True or False"),
    (lambda: formats(include_custom=None), TypeError, r"include_custom must be True or False"),
    (lambda: rounding_modes(deterministic="no"), TypeError, r"deterministic must be True or False"),
]


@pytest.mark.parametrize(("call", "error", "message"), BAD_ARGUMENTS, ids=range(len(BAD_ARGUMENTS)))
def test_bad_arguments_fail_before_drawing(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize(("kwargs", "allowed"), [
    ({"min_value": 65504.0}, [65504.0, math.inf]),              # one bound: infinity inferred allowed
    ({"max_value": -65504.0}, [-65504.0, -math.inf]),
    ({"min_value": 65504.0, "max_value": math.inf}, [65504.0, math.inf]),
    ({"min_value": -0.0, "max_value": 0.0}, [-0.0, 0.0]),
    ({"min_value": -0.0, "max_value": 0.0, "exclude_min": True}, [0.0]),
    ({"min_value": -0.0, "max_value": 0.0, "allow_negative_zero": False}, [0.0]),
    ({"min_value": 65504.0, "exclude_min": True}, [math.inf]),
])
def test_small_ranges_yield_exactly_the_allowed_values(kwargs, allowed):
    seen = set()

    @settings(max_examples=60, database=None)
    @given(values(sf.fp16, **kwargs))
    def collect(x):
        seen.add((x, is_negative(x)))

    collect()
    assert seen == {(x, is_negative(x)) for x in allowed}


# =====================================================================================
# draws are values of the format and obey the options
# =====================================================================================
@given(st.data())
def test_values_are_exactly_representable(data):
    fmt = data.draw(formats(), label="fmt")
    target = data.draw(st.none() | formats(), label="around")
    for _ in range(5):
        assert_value_of(data.draw(values(fmt, around=target)), fmt)


BOUND_OPTIONS = st.fixed_dictionaries({}, optional={
    "allow_subnormal": st.none() | st.booleans(),
    "allow_negative_zero": st.booleans(),
    "allow_infinity": st.none() | st.booleans(),
    "exclude_min": st.booleans(),
    "exclude_max": st.booleans(),
})


def admissible(x, fmt, lo, hi, opts) -> bool:
    """What the options promise, restated without softfloat.strategies' own code."""
    if math.isnan(x):
        return fmt.has_nan and lo is None and hi is None  # inferred: only without bounds
    if lo is not None and (order_key(x) < order_key(lo) or (opts.get("exclude_min") and x == lo
                                                            and is_negative(x) == is_negative(lo))):
        return False
    if hi is not None and (order_key(x) > order_key(hi) or (opts.get("exclude_max") and x == hi
                                                            and is_negative(x) == is_negative(hi))):
        return False
    if math.isinf(x) and opts.get("allow_infinity") is False:
        return False
    if math.isinf(x) and lo is not None and hi is not None and not (math.isinf(lo) or math.isinf(hi)):
        return False
    if 0 < abs(x) < fmt.min_normal and opts.get("allow_subnormal") is False:
        return False
    if x == 0 and is_negative(x) and not opts.get("allow_negative_zero", True):
        return False
    return True


def all_values(fmt):
    """Every non-NaN value of a small format, as floats."""
    v = sf.decode(np.arange(1 << fmt.bits, dtype=np.uint64), fmt)
    return [float(x) for x in v if not math.isnan(x)]


@settings(max_examples=150)
@given(st.data())
def test_bounds_and_options_are_respected(data):
    fmt = data.draw(formats(), label="fmt")
    a, b = sorted((data.draw(values(fmt, allow_nan=False)) for _ in range(2)), key=order_key)
    lo = data.draw(st.sampled_from([a, None]), label="min_value")
    hi = data.draw(st.sampled_from([b, None]), label="max_value")
    opts = data.draw(BOUND_OPTIONS, label="options")
    if lo is None:
        opts.pop("exclude_min", None)
    if hi is None:
        opts.pop("exclude_max", None)
    try:
        strategy = values(fmt, lo, hi, **opts)
    except ValueError as error:
        message = str(error)
        expected = ("can draw nothing", "allow_subnormal=True, but", "allow_infinity=True, but",
                    "allow_infinity=False contradicts")
        assert message.startswith(expected) or "can draw nothing" in message, message
        if fmt.bits <= 16 and "can draw nothing" in message:
            assert not any(admissible(x, fmt, lo, hi, opts) for x in all_values(fmt)), message
        if fmt.bits <= 16 and "allow_subnormal=True" in message:
            assert not any(admissible(x, fmt, lo, hi, opts) and 0 < abs(x) < fmt.min_normal
                           for x in all_values(fmt)), message
        return
    for _ in range(5):
        x = data.draw(strategy)
        assert_value_of(x, fmt)
        assert admissible(x, fmt, lo, hi, opts), (x, lo, hi, opts)


@pytest.mark.parametrize("fmt", [sf.fp16, sf.fp8_e4m3, sf.fp8_e4m3fnuz, sf.fp4_e2m1, Format(3, 2)],
                         ids=lambda f: f.name)
def test_bounded_draws_cover_a_narrow_range(fmt):
    """Every value of a small range shows up (the range is drawn from, not only its ends)."""
    lo, hi = 1.0, float(sf.decode(sf.encode(1.0, fmt) + 3, fmt))
    seen = set()

    @settings(max_examples=100, database=None)
    @given(values(fmt, lo, hi))
    def collect(x):
        seen.add(x)

    collect()
    assert seen == {x for x in all_values(fmt) if lo <= x <= hi}


@pytest.mark.parametrize("fmt", ALL_FORMATS, ids=FORMAT_IDS)
def test_default_nan_and_infinity_follow_the_format(fmt):
    """No bounds: NaN and infinity are drawn exactly when the format has them (find)."""
    for has, condition in ((fmt.has_nan, math.isnan), (fmt.has_infinity, math.isinf)):
        if has:
            assert condition(search(values(fmt), condition, max_examples=1000))
        else:
            with pytest.raises(NoSuchExample):
                search(values(fmt), condition, max_examples=100)


@pytest.mark.parametrize("fmt", ALL_FORMATS, ids=FORMAT_IDS)
def test_every_class_of_the_format_appears(fmt):
    """Each IEEE class the format has is reached by values(fmt) and by bits(fmt)."""
    for cls in sorted(classes_of(fmt)):
        x = search(values(fmt), lambda v, cls=cls: class_of(v, fmt) == cls, max_examples=2000)
        assert class_of(x, fmt) == cls
        b = search(bits(fmt), lambda p, cls=cls: sf.classify(p, fmt) == cls, max_examples=2000)
        assert sf.classify(b, fmt) == cls


@given(st.data())
def test_bits_stay_in_the_requested_classes(data):
    fmt = data.draw(formats(), label="fmt")
    chosen = data.draw(st.lists(st.sampled_from(sorted(classes_of(fmt))), min_size=1, unique=True), label="classes")
    for _ in range(5):
        pattern = data.draw(bits(fmt, classes=chosen))
        assert isinstance(pattern, int) and 0 <= pattern < 1 << fmt.bits
        assert sf.classify(pattern, fmt) in chosen


def test_classes_of_agrees_with_enumeration():
    """The test's own class list for a format, checked by classifying every pattern."""
    for fmt in ALL_FORMATS:
        if fmt.bits <= 16:
            every = set(sf.classify(np.arange(1 << fmt.bits, dtype=np.uint64), fmt).tolist())
            assert classes_of(fmt) == every, fmt


def test_nan_payloads_are_all_reachable():
    """Every one of fp8_e5m2's six NaN patterns, and an fp16 payload with low bits set."""
    nans = {p for p in range(256) if sf.is_nan(p, sf.fp8_e5m2)}
    seen = set()

    @settings(max_examples=300, database=None)
    @given(bits(sf.fp8_e5m2, classes=["quietNaN", "signalingNaN"]))
    def collect(p):
        seen.add(p)

    collect()
    assert seen == nans
    x = search(values(sf.fp16), lambda v: math.isnan(v) and
               int(np.float64(v).view(np.uint64)) & (0x1F << 42) != 0, max_examples=2000)
    assert math.isnan(x)


@given(st.data())
def test_arrays_hold_values_or_bit_patterns(data):
    fmt = data.draw(formats(include_custom=False), label="fmt")
    as_bits = data.draw(st.booleans(), label="as_bits")
    elements = data.draw(st.sampled_from([None, {"allow_nan": False}, {"min_value": 0.0}]), label="elements")
    a = data.draw(arrays(fmt, (2, 3), elements=elements, as_bits=as_bits))
    assert a.shape == (2, 3)
    if as_bits:
        assert a.dtype == fmt.storage_dtype
        values_ = sf.decode(a, fmt)
    else:
        assert a.dtype == np.float64
        values_ = a
        for x in a.ravel().tolist():
            assert_value_of(x, fmt)
    if elements and "allow_nan" in elements:
        assert not np.isnan(values_).any()
    if elements and "min_value" in elements:
        assert (values_ >= 0).all() and not np.signbit(values_).any()


def test_arrays_as_bits_keep_signaling_nans():
    a = search(arrays(sf.fp16, 4, as_bits=True), lambda a: sf.is_signaling(a, sf.fp16).any(), max_examples=1000)
    assert a.dtype == np.uint16


def test_arrays_take_a_strategy_for_elements():
    a = search(arrays(sf.bf16, 5, elements=bits(sf.bf16, classes=["negativeZero"]), as_bits=True), lambda a: True)
    assert a.tolist() == [0x8000] * 5


@given(formats())
def test_formats_are_valid(fmt):
    assert isinstance(fmt, Format)
    assert fmt.max_finite > 0


def test_formats_reach_every_policy_and_custom_layouts():
    for policy in Specials:
        assert search(formats(), lambda f, p=policy: f.specials is p and f not in sf.catalogue()).specials is policy
    with pytest.raises(NoSuchExample):
        search(formats(include_custom=False), lambda f: f not in sf.catalogue(), max_examples=50)


def test_rounding_modes():
    assert search(rounding_modes(), lambda r: not r.is_deterministic) is Rounding.STOCHASTIC
    with pytest.raises(NoSuchExample):
        search(rounding_modes(deterministic=True), lambda r: not r.is_deterministic, max_examples=50)
    assert search(rounding_modes(), lambda r: True) is Rounding.NEAREST_EVEN


# =====================================================================================
# around=target reaches what breaks a conversion
# =====================================================================================
def bf16_midpoint(x: float) -> bool:
    """Exactly halfway between two bfloat16 neighbours."""
    down = float(sf.decode(sf.encode(x, sf.bf16, "downward"), sf.bf16))
    up = float(sf.decode(sf.encode(x, sf.bf16, "upward"), sf.bf16))
    if math.isinf(down) or math.isinf(up):
        return False
    return down != up and Fraction(x) * 2 == Fraction(down) + Fraction(up)


@pytest.mark.parametrize(("source", "target", "wanted"), [
    (sf.fp32, sf.bf16, "tie"),
    (sf.fp32, sf.bf16, sf.bf16.max_finite + 2.0**119),   # overflow threshold
    (sf.fp32, sf.bf16, 2.0**-134),                        # half the smallest subnormal
    (sf.fp32, sf.fp16, 65520.0),
    (sf.fp32, sf.fp16, float(np.nextafter(np.float32(65520), np.float32(0)))),
    (sf.fp32, sf.fp16, 2.0**-25),
    (sf.fp16, sf.fp8_e4m3, 464.0),
    (sf.fp16, sf.fp8_e4m3, 2.0**-10),
    (sf.fp64, sf.fp32, 2.0**-150),
])
def test_around_reaches_the_targets_edges(source, target, wanted):
    condition = bf16_midpoint if wanted == "tie" else (lambda x: x == wanted)
    x = search(values(source, around=target, allow_nan=False), condition, max_examples=1000)
    assert condition(x)


def test_around_a_wider_target_still_draws_values_of_the_format():
    x = search(values(sf.fp8_e4m3, around=sf.fp32), lambda v: abs(v) == 448.0, max_examples=500)
    assert abs(x) == 448.0


# =====================================================================================
# shrinking goes toward simple values
# =====================================================================================
@pytest.mark.parametrize(("strategy", "condition", "simplest"), [
    (values(sf.fp32), lambda x: x > 1.0 and x != 2.0, {1.5}),           # short fractions first
    (values(sf.fp32), lambda x: x != round(x), {1.5}),
    (values(sf.fp64), lambda x: x != 0, {1.0}),
    (values(sf.fp16), lambda x: x < 0, {-1.0}),
    (values(sf.fp16), lambda x: 0 < x < 1, {0.5, 2.0**-15}),
    (values(sf.bf16), lambda x: abs(x) > 1e30, {2.0**100, sf.bf16.max_finite}),  # small exponents
    (values(sf.fp32), lambda x: x > 100, {128.0, sf.fp32.max_finite}),
    (values(sf.fp16), lambda x: 0 < abs(x) < 2**-14, {2.0**-15, sf.fp16.min_subnormal}),
    (values(sf.fp32, min_value=3.0, max_value=7.0), lambda x: True, {3.0}),
    (values(sf.fp32, around=sf.bf16, allow_nan=False), bf16_midpoint, {1.00390625}),
], ids=range(10))
def test_shrinks_to_simple_values(strategy, condition, simplest):
    assert search(strategy, condition) in simplest


# =====================================================================================
# planted bugs
# =====================================================================================
def bf16_ties_away(x: float) -> int:
    """fp32 -> bf16 by adding half of the dropped 16 bits: ties go away from zero (bug)."""
    u = np.array([x], dtype=np.float32).view(np.uint32)
    return int(((u + np.uint32(0x8000)) >> np.uint32(16))[0])


def bf16_ties_even(x: float) -> int:
    """fp32 -> bf16 round to nearest even: add 0x7FFF plus the lowest kept bit."""
    u = np.array([x], dtype=np.float32).view(np.uint32)
    return int(((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16))[0])


def fp16_numpy(x: float) -> int:
    """fp32 -> fp16 by numpy's cast (round to nearest even, gradual underflow)."""
    with np.errstate(over="ignore"):
        return int(np.array([x], dtype=np.float32).astype(np.float16).view(np.uint16)[0])


def fp16_overflows_early(x: float) -> int:
    """fp32 -> fp16 that sends every |x| > 65504 to infinity (bug: up to 65520 -> 65504)."""
    bits_ = fp16_numpy(x)
    return (bits_ & 0x8000) | 0x7C00 if abs(x) > 65504 else bits_


def fp16_flushes_subnormals(x: float) -> int:
    """fp32 -> fp16 that flushes subnormal results to zero (bug)."""
    bits_ = fp16_numpy(x)
    return bits_ & 0x8000 if bits_ & 0x7C00 == 0 else bits_


def ulp_fp16_forgets_subnormals(x: float) -> float:
    """Spacing of fp16 values at x > 0 (bug: below 2**-14 the spacing stays 2**-24)."""
    return 2.0 ** (math.floor(math.log2(x)) - 10)


def ulp_fp16(x: float) -> float:
    return 2.0 ** (max(math.floor(math.log2(x)), -14) - 10)


def encoded(fmt):
    return lambda x: int(sf.encode(x, fmt))


def one_ulp_up(ulp):
    """x + ulp(x) is the next fp16 value: one step in the total order."""
    return lambda x: ulp_distance(sf.encode(x, sf.fp16), sf.encode(x + ulp(x), sf.fp16), sf.fp16) == 1


PLANTED = {
    "bf16-ties-away": (values(sf.fp32, around=sf.bf16, allow_nan=False), bf16_ties_away, bf16_ties_even,
                       encoded(sf.bf16)),
    "fp16-early-overflow": (values(sf.fp32, around=sf.fp16, allow_nan=False), fp16_overflows_early, fp16_numpy,
                            encoded(sf.fp16)),
    "fp16-flush-to-zero": (values(sf.fp32, around=sf.fp16, allow_nan=False), fp16_flushes_subnormals, fp16_numpy,
                           encoded(sf.fp16)),
}


def agrees(convert, reference):
    return lambda x: convert(x) == reference(x)


@pytest.mark.parametrize("name", PLANTED)
@pytest.mark.parametrize("seed", SEEDS)
def test_planted_conversion_bug_is_found_in_100_examples(name, seed):
    strategy, buggy, correct, reference = PLANTED[name]
    assert finds(strategy, lambda x: not agrees(buggy, reference)(x), seed)
    assert not finds(strategy, lambda x: not agrees(correct, reference)(x), seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_planted_ulp_bug_is_found_in_100_examples(seed):
    strategy = values(sf.fp16, min_value=sf.fp16.min_subnormal, max_value=sf.fp16.max_finite)
    assert finds(strategy, lambda x: not one_ulp_up(ulp_fp16_forgets_subnormals)(x), seed)
    assert not finds(strategy, lambda x: not one_ulp_up(ulp_fp16)(x), seed)


@pytest.mark.parametrize("name", PLANTED)
def test_planted_conversion_bug_fails_a_given_test_under_the_active_profile(name):
    """As a user would write it: @given with the profile's settings (CI: derandomized, 200)."""
    strategy, buggy, correct, reference = PLANTED[name]

    def property_test(convert):
        @given(strategy)
        def test(x):
            assert convert(x) == reference(x)
        return test

    with pytest.raises(AssertionError):
        property_test(buggy)()
    property_test(correct)()


def test_planted_ulp_bug_fails_a_given_test_under_the_active_profile():
    def property_test(ulp):
        @given(values(sf.fp16, min_value=0.0, exclude_min=True, allow_infinity=False))
        def test(x):
            assert one_ulp_up(ulp)(x)
        return test

    with pytest.raises(AssertionError):
        property_test(ulp_fp16_forgets_subnormals)()
    property_test(ulp_fp16)()


# =====================================================================================
# the README example, run as written
# =====================================================================================
def readme_example() -> str:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Property-testing your own code"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def run_readme_example(to_bf16=None):
    """Execute the README block; run its test under the active profile (no example database,
    so that nothing saved by an earlier run is replayed)."""
    namespace: dict = {}
    exec(compile(readme_example(), str(README), "exec"), namespace)
    if to_bf16 is not None:
        namespace["to_bf16"] = to_bf16
    settings(database=None)(namespace["test_to_bf16"])()


def test_readme_example_finds_the_ties_away_bug():
    with pytest.raises(AssertionError) as failure:
        run_readme_example()
    notes = "\n".join(getattr(failure.value, "__notes__", []))
    # hypothesis words it "Falsifying example:" (older) or "Failing test case:" (newer)
    assert "test_to_bf16(" in notes and "x=1.00390625," in notes, notes


def test_readme_example_passes_once_the_bug_is_fixed():
    run_readme_example(to_bf16=bf16_ties_even)
