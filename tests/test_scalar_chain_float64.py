"""The float64 step of one-output chains on Python floats
(softfloat._fastpaths._chain._Float64Step: float64 sum, rounding to odd, then the
pattern's rounding at the accumulator's last bit in the mode) against the exact path (the
switch off) and the exact reference (Fractions and MPFR), flags and swamped counts
included, in every deterministic mode."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import softfloat as sf
from softfloat._fastpaths import _chain

from tests.accumulate_checks import check, random_patterns
from tests.fastpath_checks import answers_of, assert_same, general

ACCUMULATORS = ["fp32", "fp16", "bf16", "tf32", "fp8_e4m3", "fp8_e5m2", "fp8_e4m3fnuz", "fp64", "e5m7"]
MODES = ["nearest_even", "nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd"]


@pytest.fixture
def steps(monkeypatch):
    """The nearest steps taken (values) and declined (None)."""
    return answers_of(monkeypatch, _chain._Float64Step, "step")


@st.composite
def chains(draw):
    fmt = draw(st.sampled_from(["fp16", "bf16", "fp32", "fp8_e4m3", "fp8_e5m2"]))
    acc = draw(st.sampled_from(ACCUMULATORS))
    n = draw(st.integers(1, 300))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = draw(st.sampled_from([1e-30, 1e-6, 0.05, 1.0, 100.0, 3e4, 1e30]))
    values = [rng.standard_normal(n) * scale for _ in range(2)]
    if draw(st.booleans()):  # halves: exact steps, ties, swamping, cancellation to zero
        values = [np.round(v / scale * 2) / 2 for v in values]
    if draw(st.integers(0, 4)) == 0:
        values[0][rng.integers(0, n)] = draw(st.sampled_from([np.inf, -np.inf, np.nan, 0.0, -0.0]))
    x, y = (np.asarray(sf.encode(v, fmt, saturate=True)) for v in values)
    kw = dict(accumulator=acc, order=draw(st.sampled_from(["sequential", "reverse"])),
              return_flags=draw(st.sampled_from([False, True, "swamped"])))
    kw.update(draw(st.sampled_from([{}, {}, {"tininess": "before"}, {"out_format": "fp8_e5m2"},
                                    {"subnormals": False}, {"saturate": True}])))
    kw["rounding"] = draw(st.sampled_from(MODES))
    return draw(st.sampled_from(["sum", "vecdot"])), x, y, fmt, kw


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chains())
def test_chains_equal_the_exact_path(case):
    kind, x, y, fmt, kw = case
    if kind == "sum":
        call = (lambda: sf.sum(x, fmt, **kw))
    else:
        call = (lambda: sf.vecdot(x, y, fmt, **kw))
    try:
        slow = general(call)
    except ValueError:  # (an accumulator no model takes for the format: both raise)
        with pytest.raises(ValueError):
            call()
        return
    assert_same(call(), slow)


@pytest.mark.parametrize("acc", [a for a in ACCUMULATORS if a != "fp64"])  # (fp64: numpy's own sums)
@pytest.mark.parametrize("seed, mode", list(enumerate(sorted(set(MODES)))))
def test_chains_equal_the_exact_reference(acc, seed, mode, steps, monkeypatch):
    """Terms aimed at ties and carries (few significant bits, exponents within a few
    bits), against tests/accumulate_oracle.py element by element; fp32 operands into an
    fp32 accumulator (fp16 products would be its values: numpy's own running sums).  In
    nearest even an fp32 or fp16 accumulator's long stretches are the cast runs'
    (tests/test_small_chain_run.py), the float64 step taking the rest."""
    runs = answers_of(monkeypatch, _chain._CastRun, "steps")
    rng = np.random.default_rng(seed)
    fmt = "fp32" if acc == "fp32" else "fp16"
    f = sf.as_format(fmt)
    x = random_patterns(rng, f, 150, spread=8, zeros=0.05)
    y = random_patterns(rng, f, 150, spread=8, zeros=0.05)
    check("vecdot", x, y, fmt, accumulator=acc, rounding=mode)
    check("vecdot", x, y, fmt, accumulator=acc, rounding=mode, tininess="before", order="reverse")
    check("sum", x, fmt, accumulator=acc, rounding=mode)
    assert any(s is not None for s in steps) or any(done for *_, done in runs)


def test_a_tie_float64_makes_is_not_a_tie(steps):
    """(1 + 2**-23) + (1 + 2**-18) * -(2**-24 * (1 - 2**-18)) into fp32: the exact sum
    1 + 2**-24 + 2**-60 lies above the midpoint of 1 and 1 + 2**-23; float64 rounds it to
    the midpoint, and nearest even from there would give 1."""
    x = np.array([1 + 2.0**-23, 1 + 2.0**-18], dtype=np.float32)
    y = np.array([1.0, -(2.0**-24) * (1 - 2.0**-18)], dtype=np.float32)
    got, flags = sf.vecdot(x.view(np.uint32), y.view(np.uint32), "fp32", return_flags=True)
    assert steps and steps[-1] is not None
    assert np.uint32(got).view(np.float32) == np.float32(1 + 2.0**-23) and flags.inexact


def test_tiny_and_overflowing_steps_take_the_exact_path(steps):
    tiny = sf.encode([2.0**-14, -(2.0**-14) + 2.0**-24, 0.1], "fp16")  # (0.1 * 3: no fp16 value)
    sf.vecdot(tiny, sf.encode([1.0, 1.0, 3.0], "fp16"), "fp16", accumulator="fp16")
    assert steps[0] is None and steps[1] is not None  # 2**-24: below fp16's smallest normal
    steps.clear()
    big = sf.encode([60000.0, 60000.0, -60000.0], "fp16")
    value, flags = sf.sum(big, "fp16", accumulator="fp16", return_flags=True)
    assert steps[0] is None and flags.overflow  # 120000 overflows fp16: the exact path's step
