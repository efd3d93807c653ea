"""Outcomes and error statistics: what became of the values, and how large the error was.

Expected outcomes come from reasoning about each value (fp16's smallest subnormal is
2**-24, its smallest normal 2**-14, its largest finite value 65504 and its overflow
threshold 65520) and, for random data, from numpy's own float16 and ml_dtypes' bfloat16
casts (round to nearest even, done by the hardware or by ml_dtypes), classified here with
numpy.  Expected error statistics are computed with exact Fractions.  None of it reads
softfloat's own results back as the expectation.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import softfloat as sf
from softfloat import Outcomes

NAN, INF = float("nan"), float("inf")


def outcome_of(x, fmt, **options) -> str:
    """The one outcome of a single value encoded with ``options``."""
    bits, flags = sf.encode(np.array([x]), fmt, return_flags=True, **options)
    counts = sf.outcomes(bits, fmt, flags).counts
    assert sum(counts.values()) == 1
    return next(name for name, n in counts.items() if n)


# =====================================================================================
# outcomes of single values, by number class
# =====================================================================================
@pytest.mark.parametrize(("x", "fmt", "options", "expected"), [
    # exact: representable values, zeros, infinities, subnormals
    (1.0, "fp16", {}, "exact"),
    (-0.0, "fp16", {}, "exact"),
    (INF, "fp16", {}, "exact"),
    (-INF, "fp16", {"rounding": "toward_zero"}, "exact"),    # an infinity is not an overflow
    (2.0**-24, "fp16", {}, "exact"),                          # the smallest subnormal
    (3 * 2.0**-24, "fp16", {}, "exact"),
    (65504.0, "fp16", {}, "exact"),
    (-0.0, "fp8_e4m3fnuz", {}, "exact"),                      # -0 -> +0: the same value
    # rounded: normal results that differ from the input
    (0.1, "fp16", {}, "rounded"),
    (65519.0, "fp16", {}, "rounded"),                         # below 65520: rounds to 65504
    (1 + 2.0**-11, "fp16", {}, "rounded"),                    # a tie, to 1.0
    (2.0**-14 - 2.0**-26, "fp16", {}, "rounded"),             # rounds up to the smallest normal
    # subnormal: rounded to a non-zero subnormal
    (1e-6, "fp16", {}, "subnormal"),                          # 16.77 x 2**-24
    (-1.5 * 2.0**-24, "fp16", {}, "subnormal"),               # a tie, to -2 x 2**-24
    (2.0**-25 + 2.0**-40, "fp16", {}, "subnormal"),           # just above half: up to 2**-24
    # zero: non-zero values that became +-0
    (1e-9, "fp16", {}, "zero"),
    (-2.0**-25, "fp16", {}, "zero"),                          # a tie at half the smallest subnormal
    (1e-6, "fp16", {"subnormals": False}, "zero"),            # flush-to-zero
    (1e-6, "fp16", {"rounding": "toward_zero", "subnormals": False}, "zero"),
    (NAN, "fp4_e2m1", {}, "zero"),                            # FP4 has no NaN: +0, invalid
    # saturated: clamped to +-max_finite
    (70000.0, "fp16", {"rounding": "toward_zero"}, "saturated"),
    (-70000.0, "fp16", {"rounding": "upward"}, "saturated"),
    (70000.0, "fp16", {"saturate": True}, "saturated"),
    (1000.0, "fp8_e4m3", {"saturate": True}, "saturated"),
    (INF, "fp8_e4m3", {"saturate": True}, "saturated"),
    (100.0, "fp4_e2m1", {}, "saturated"),                     # FP4 always saturates
    # infinite: finite values that became +-inf
    (70000.0, "fp16", {}, "infinite"),
    (-65520.0, "fp16", {}, "infinite"),                       # exactly the threshold
    (1e39, "fp32", {"rounding": "upward"}, "infinite"),
    # nan: NaN results
    (NAN, "fp16", {}, "nan"),
    (1000.0, "fp8_e4m3", {}, "nan"),                          # overflow without infinity
    (INF, "fp8_e4m3", {}, "nan"),                             # invalid
    (-INF, "fp8_e5m2fnuz", {}, "nan"),
])
def test_outcome_of_one_value(x, fmt, options, expected):
    assert outcome_of(x, fmt, **options) == expected


def test_counts_shares_and_total():
    x = np.array([1.0, 0.1, 0.2, 1e-6, 1e-9, 70000.0, NAN, 2.0])
    bits, flags = sf.encode(x, "fp16", return_flags=True)
    o = sf.outcomes(bits, "fp16", flags)
    assert o.counts == {"exact": 2, "rounded": 2, "subnormal": 1, "zero": 1, "saturated": 0,
                        "infinite": 1, "nan": 1}
    assert o.total == 8
    assert o.shares["rounded"] == 0.25 and o.shares["saturated"] == 0.0
    assert math.isclose(sum(o.shares.values()), 1.0)
    assert list(o.counts) == list(sf.OUTCOME_NAMES)


def test_outcomes_of_a_scalar_and_an_empty_result():
    bits, flags = sf.encode(1e-9, "fp16", return_flags=True)
    assert sf.outcomes(bits, "fp16", flags).counts["zero"] == 1
    bits, flags = sf.encode(np.array([]), "fp16", return_flags=True)
    empty = sf.outcomes(bits, "fp16", flags)
    assert empty.total == 0 and all(v == 0.0 for v in empty.shares.values())
    assert str(empty) == "no values"


def test_outcomes_are_independent_of_the_block_size():
    # more than one block of 2**14 elements, with every outcome in every block
    rng = np.random.default_rng(1)
    x = rng.choice(np.array([1.0, 0.1, 1e-6, 1e-9, 7e4, NAN]), size=40_000)
    bits, flags = sf.encode(x, "fp16", return_flags=True)
    counts = sf.outcomes(bits, "fp16", flags).counts
    for value, name in [(1.0, "exact"), (0.1, "rounded"), (1e-6, "subnormal"), (1e-9, "zero"),
                        (7e4, "infinite")]:
        assert counts[name] == np.count_nonzero(x == value)
    assert counts["nan"] == np.count_nonzero(np.isnan(x))


# =====================================================================================
# outcomes against numpy / ml_dtypes casts, classified independently
# =====================================================================================
def expected_outcomes(x: np.ndarray, q: np.ndarray, min_normal: float) -> dict[str, int]:
    """Classify round-to-nearest results ``q`` of ``x`` (both as float64) with numpy."""
    nan = np.isnan(q)
    inf = np.isinf(q) & np.isfinite(x)
    changed = (q != x) & ~nan & ~inf
    zero = changed & (q == 0)
    sub = changed & (q != 0) & (np.abs(q) < min_normal)
    rounded = changed & ~zero & ~sub
    exact = ~(nan | inf | changed)
    return {"exact": int(exact.sum()), "rounded": int(rounded.sum()), "subnormal": int(sub.sum()),
            "zero": int(zero.sum()), "saturated": 0, "infinite": int(inf.sum()), "nan": int(nan.sum())}


def spread_float32(n: int, seed: int) -> np.ndarray:
    """float32 values across fp16's and bf16's ranges: tiny, subnormal, normal, huge, specials."""
    rng = np.random.default_rng(seed)
    mags = np.exp2(rng.uniform(-30, 20, n)) * rng.choice([-1, 1], n)
    exactish = rng.integers(-2048, 2048, n) * np.exp2(rng.integers(-26, 6, n).astype(float))
    x = np.where(rng.random(n) < 0.3, exactish, mags).astype(np.float32)
    x[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 65520.0]
    return x


def test_outcomes_against_numpy_float16():
    x = spread_float32(20_000, 2)
    with np.errstate(over="ignore"):
        q = x.astype(np.float16).astype(np.float64)  # the hardware's round to nearest even
    bits, flags = sf.encode(x, "fp16", return_flags=True)
    assert sf.outcomes(bits, "fp16", flags).counts == expected_outcomes(x.astype(np.float64), q, 2.0**-14)


def test_outcomes_against_ml_dtypes_bfloat16():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = spread_float32(20_000, 3) * np.float32(2.0**-110)   # into bf16's subnormals (< 2**-126)
    q = x.astype(ml_dtypes.bfloat16).astype(np.float64)
    bits, flags = sf.encode(x, "bf16", return_flags=True)
    got = sf.outcomes(bits, "bf16", flags).counts
    want = expected_outcomes(x.astype(np.float64), q, 2.0**-126)
    assert got == want
    assert want["subnormal"] > 100 and want["zero"] > 100 and want["rounded"] > 100


# =====================================================================================
# outcomes of operations and reductions
# =====================================================================================
def fp16(*values):
    return sf.encode(np.array(values, dtype=np.float64), "fp16")


@pytest.mark.parametrize(("op", "operands", "expected"), [
    (sf.add, (fp16(2048.0), fp16(1.0)), "rounded"),              # swamping: 2049 -> 2048
    (sf.sub, (fp16(1.0), fp16(1.0)), "exact"),                   # an exact zero stays exact
    (sf.mul, (fp16(2.0**-13), fp16(2.0**-13)), "zero"),          # 2**-26 < 2**-25
    (sf.mul, (fp16(2.0**-12), fp16(1.5 * 2.0**-12)), "subnormal"),  # 1.5 x 2**-24: a tie, to 2**-23
    (sf.div, (fp16(1.0), fp16(0.0)), "infinite"),                # divide_by_zero
    (sf.add, (fp16(INF), fp16(1.0)), "exact"),                   # inf + 1 = inf exactly
    (sf.sub, (fp16(INF), fp16(INF)), "nan"),                     # invalid
    (sf.mul, (fp16(300.0), fp16(300.0)), "infinite"),
])
def test_outcomes_of_operations(op, operands, expected):
    bits, flags = op(*operands, "fp16", return_flags=True)
    counts = sf.outcomes(bits, "fp16", flags).counts
    assert counts[expected] == 1, counts


def test_outcomes_of_a_reduction_and_its_summary():
    ones = np.full((3, 4096), sf.encode(1.0, "fp16"))
    bits, flags = sf.sum(ones, "fp16", axis=1, return_flags=True)   # 4096 -> 2048, three times
    o = sf.outcomes(bits, "fp16", flags)
    assert o.counts["rounded"] == 3
    text = flags.summary(o)
    assert text.splitlines() == [
        "IEEE flags:",
        "  inexact: 3 of 3 (100.0%)",
        "  swamped additions: 6144, in 3 of 3 (100.0%)",
        "outcomes:",
        "  rounded: 3 of 3 (100.0%)",
    ]


# =====================================================================================
# Flags.summary with outcomes; grammar
# =====================================================================================
def test_summary_with_outcomes_has_two_sections():
    x = np.array([1.0, 1e-9, 70000.0])
    bits, flags = sf.encode(x, "fp16", return_flags=True)
    assert flags.summary(sf.outcomes(bits, "fp16", flags)) == "\n".join([
        "IEEE flags:",
        "  overflowed: 1 of 3 (33.3%)",
        "  underflowed: 1 of 3 (33.3%)",
        "  inexact: 2 of 3 (66.7%)",
        "outcomes:",
        "  exact: 1 of 3 (33.3%)",
        "  became zero: 1 of 3 (33.3%)",
        "  became +-inf: 1 of 3 (33.3%)",
    ])
    # without outcomes, the summary is as before
    assert flags.summary() == "overflowed: 1 of 3 (33.3%)\nunderflowed: 1 of 3 (33.3%)\ninexact: 2 of 3 (66.7%)"


@pytest.mark.parametrize(("n", "text"), [(0, "0 values"), (1, "1 value"), (2, "2 values")])
def test_no_flags_raised_grammar(n, text):
    bits, flags = sf.encode(np.ones(n), "fp16", return_flags=True)
    assert flags.summary() == f"no flags raised ({text})"
    assert flags.summary(sf.outcomes(bits, "fp16", flags)).splitlines()[1] == f"  none raised ({text})"


def test_summary_refuses_outcomes_of_another_result():
    bits, flags = sf.encode(np.ones(3), "fp16", return_flags=True)
    with pytest.raises(ValueError, match=r"^outcomes counts 2 values but the flags hold 3 values"):
        flags.summary(Outcomes(exact=2))
    with pytest.raises(TypeError, match=r"^outcomes must be a softfloat.Outcomes .*got \{.exact.: 3\} \(dict\)$"):
        flags.summary({"exact": 3})


def test_outcomes_arguments_are_checked():
    bits, flags = sf.encode(np.ones(3), "fp16", return_flags=True)
    with pytest.raises(ValueError, match=r"^flags has shape \(3,\) but bits has shape \(2,\)"):
        sf.outcomes(bits[:2], "fp16", flags)
    with pytest.raises(TypeError, match=r"^flags must be the softfloat.Flags returned with the bits"):
        sf.outcomes(bits, "fp16", None)
    with pytest.raises(TypeError, match=r"^zero must be a count"):
        Outcomes(zero=-1)


def test_outcomes_add():
    assert Outcomes(exact=1, nan=2) + Outcomes(exact=3) == Outcomes(exact=4, nan=2)


# =====================================================================================
# error statistics against exact Fractions
# =====================================================================================
def exact_stats(x: np.ndarray, q: np.ndarray) -> dict[str, float]:
    """The statistics from their definitions, in exact rational arithmetic."""
    pairs = [(Fraction(float(a)), Fraction(float(b))) for a, b in zip(x, q)
             if math.isfinite(a) and math.isfinite(b)]
    errs = [abs(b - a) for a, b in pairs]
    rels = [abs(b - a) / abs(a) for a, b in pairs if a != 0]
    noise = sum(e * e for e in errs)
    signal = sum(a * a for a, _ in pairs)
    return {
        "count": len(pairs),
        "max_abs": float(max(errs)), "mean_abs": float(sum(errs) / len(errs)),
        "max_rel": float(max(rels)), "mean_rel": float(sum(rels) / len(rels)),
        "sqnr_db": math.inf if noise == 0 else 10 * (math.log10(signal.numerator) - math.log10(signal.denominator)
                                                     - math.log10(noise.numerator) + math.log10(noise.denominator)),
    }


def assert_stats(got, want, rel=1e-12):
    assert got.count == want["count"]
    for name in ("max_abs", "mean_abs", "max_rel", "mean_rel", "sqnr_db"):
        assert math.isclose(getattr(got, name), want[name], rel_tol=rel), (name, getattr(got, name), want[name])


def test_error_stats_against_fractions_fp16():
    x = spread_float32(30_000, 4)    # spans two blocks; includes inf, nan and overflow
    with np.errstate(over="ignore"):
        q = x.astype(np.float16)     # numpy's round to nearest even, independently
    got = sf.error_stats(x, sf.encode(x, "fp16"), "fp16")
    assert_stats(got, exact_stats(x, q))
    excluded = ~(np.isfinite(x) & np.isfinite(q))
    assert got.excluded == int(excluded.sum()) and got.count + got.excluded == x.size


def test_error_stats_directed_rounding_by_hand():
    x = np.array([1.0, 1.0 + 2.0**-12, 3.0 - 2.0**-12, 0.0, -0.0])
    s = sf.error_stats(x, sf.encode(x, "fp16", "toward_zero"), "fp16")
    # 1 + 2**-12 -> 1 (error 2**-12); 3 - 2**-12 -> 3 - 2**-9 (error 7 * 2**-12)
    assert s.count == 5 and s.excluded == 0
    assert s.max_abs == 7 * 2.0**-12 and s.mean_abs == 8 * 2.0**-12 / 5
    assert s.max_rel == (7 * 2.0**-12) / (3 - 2.0**-12)
    assert math.isclose(s.mean_rel, (2.0**-12 / (1 + 2.0**-12) + 7 * 2.0**-12 / (3 - 2.0**-12)) / 3)
    signal = 1 + (1 + 2.0**-12) ** 2 + (3 - 2.0**-12) ** 2
    assert math.isclose(s.sqnr_db, 10 * math.log10(signal / (50 * 2.0**-24)), rel_tol=1e-12)


def test_error_stats_of_huge_and_tiny_values_do_not_overflow():
    # in a format with float64's exponent range, squares of 1e200 overflow float64 and
    # squares of 1e-200 underflow: the SQNR must come out right all the same
    wide = sf.Format(exponent_bits=11, mantissa_bits=10)
    x = np.array([1e200, -3e200, 1e-200, 7e-201, 5e307])
    bits = sf.encode(x, wide)
    got = sf.error_stats(x, bits, wide)
    assert_stats(got, exact_stats(x, sf.decode(bits, wide)), rel=1e-10)
    assert got.excluded == 0 and math.isfinite(got.sqnr_db)


def test_error_stats_exact_and_degenerate_inputs():
    x = np.array([1.0, 0.5, 0.0])
    s = sf.error_stats(x, sf.encode(x, "fp16"), "fp16")
    assert (s.max_abs, s.mean_abs, s.max_rel, s.mean_rel, s.sqnr_db) == (0.0, 0.0, 0.0, 0.0, math.inf)
    zeros = sf.error_stats(np.zeros(3), np.zeros(3, np.uint16), "fp16")
    assert zeros.count == 3 and math.isnan(zeros.max_rel) and zeros.sqnr_db == math.inf
    none = sf.error_stats(np.array([np.nan, np.inf]), sf.encode(np.array([np.nan, np.inf]), "fp16"), "fp16")
    assert none.count == 0 and none.excluded == 2 and math.isnan(none.sqnr_db)
    assert sf.error_stats(0.1, sf.encode(0.1, "fp16"), "fp16").count == 1    # a Python float


def test_error_stats_of_integers():
    x = np.array([2049, 3, -70000], dtype=np.int64)
    s = sf.error_stats(x, sf.encode(x, "fp16"), "fp16")
    assert s.count == 2 and s.excluded == 1 and s.max_abs == 1.0       # 2049 -> 2048


def test_error_stats_text_and_dict():
    x = np.array([1.0, 1e-9, 70000.0])
    s = sf.error_stats(x, sf.encode(x, "fp16"), "fp16")
    # signal 1 + 1e-18 (1e-9 squared), noise 1e-18 (1e-9 became zero): 180 dB
    assert str(s).splitlines()[-1] == ("SQNR: 180.00 dB over 2 values (1 value left out: NaN or "
                                       "infinite input or result)")
    assert s.to_dict()["count"] == 2 and set(s.to_dict()) == {
        "count", "excluded", "max_abs", "mean_abs", "max_rel", "mean_rel", "sqnr_db"}
    one = sf.error_stats([1.0], sf.encode([1.0], "fp16"), "fp16")
    assert str(one).splitlines()[-1] == "SQNR: inf dB over 1 value"


def test_error_stats_arguments_are_checked():
    with pytest.raises(ValueError, match=r"^bits has shape \(2,\) but x has shape \(3,\)"):
        sf.error_stats(np.ones(3), np.zeros(2, np.uint16), "fp16")
    with pytest.raises(TypeError, match=r"^x mixes numbers and strings"):
        sf.error_stats([1.0, "2"], [0, 0], "fp16")
    with pytest.raises(TypeError, match=r"^bits must have an integer dtype .*softfloat.encode"):
        sf.error_stats(np.ones(2), np.ones(2), "fp16")
