"""fp32 add, sub and mul on small arrays (softfloat.ops._driver._small_fp32, its proof in
softfloat._fastpaths._float32) equal the general path bit for bit, flags included, and
MPFR.

The reference is the same public call with the off switch ``softfloat._fastpaths.ENABLED``
set to False, on operands built to reach every case of the proof: the format's
thresholds of both signs (zeros, subnormal ends, smallest normals, 1 and its neighbours,
the largest finite values), exact cancellations, sums whose exponents lie 20 to 60
binades apart (TwoSum's error non-zero: the round-to-odd step), products that overflow,
underflow to subnormals and to zero; every deterministic mode and option.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import softfloat as sf
from softfloat import _fastpaths
from softfloat.ops._driver import SMALL_FP32

from tests.fastpath_checks import assert_same, general, spy_on
from tests.oracle import pattern_of, round_exact, value_of_float

DETERMINISTIC = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd"]
OPTIONS = [{}, {"tininess": "before"}, {"subnormals": False}, {"saturate": True},
           {"attributes": sf.RoundingAttributes(platform="arm")}]
OPS = {"add": sf.add, "sub": sf.sub, "mul": sf.mul}

_THRESHOLDS = [0x00000000, 0x00000001, 0x00000002, 0x007FFFFF, 0x00800000, 0x00800001, 0x3F7FFFFF, 0x3F800000,
               0x3F800001, 0x3FC00000, 0x7F7FFFFF, 0x7F7FFFFE, 0x7F000000, 0x1F800000, 0x5F800000, 0x33800000]


def _operands(seed: int, n: int = 4096):
    """(a, b) uint32 fp32 patterns: random, thresholds, cancellations, far exponents."""
    rng = np.random.default_rng(seed)
    signs = rng.integers(0, 2, (2, n), dtype=np.uint32) << np.uint32(31)
    exponents = rng.integers(0, 255, (2, n), dtype=np.uint32)  # finite: below 255
    exponents[1, : n // 4] = np.clip(exponents[0, : n // 4].astype(np.int64)
                                     - rng.integers(20, 61, n // 4), 0, 254).astype(np.uint32)  # far apart
    fractions = rng.integers(0, 1 << 23, (2, n), dtype=np.uint32)
    fractions[:, n // 4: n // 2] &= np.uint32(0x7F000F)  # few bits set: exact results, ties
    a, b = signs | (exponents << np.uint32(23)) | fractions
    a[n // 2: n // 2 + 256] = b[n // 2: n // 2 + 256] ^ np.uint32(0x80000000)  # x + (-x)
    table = np.array(_THRESHOLDS + [t | 0x80000000 for t in _THRESHOLDS], dtype=np.uint32)
    a[-2 * table.size:] = np.repeat(table, 2)[: 2 * table.size]
    b[-2 * table.size:] = np.tile(table, 2)[: 2 * table.size]
    return a, b


def _check(call):
    assert_same(call(), general(call))


@pytest.fixture
def spy(monkeypatch):
    """Counts the calls the shortcut answered."""
    return spy_on(monkeypatch, "float32_arithmetic")


@pytest.mark.parametrize("rounding", DETERMINISTIC)
@pytest.mark.parametrize("name", sorted(OPS))
def test_built_operands_equal_the_general_path(name, rounding, spy):
    a, b = _operands(seed=len(name) * 7 + DETERMINISTIC.index(rounding))
    op = OPS[name]
    _check(lambda: op(a, b, "fp32", rounding, return_flags=True))
    _check(lambda: op(b, a, "fp32", rounding, return_flags=True))
    _check(lambda: op(a, b, "fp32", rounding))
    assert spy


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "default")
@pytest.mark.parametrize("rounding", ["nearest_even", "toward_zero", "downward"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_options(name, rounding, options, spy):
    a, b = _operands(seed=99, n=2048)
    _check(lambda: OPS[name](a, b, "fp32", rounding, return_flags=True, **options))
    assert spy


@pytest.mark.parametrize("shapes", [((), ()), ((1,), (1,)), ((3, 1), (1, 4)), ((5,), ())])
@pytest.mark.parametrize("want", [False, True])
def test_shapes(shapes, want, spy):
    rng = np.random.default_rng(5)
    a, b = (rng.integers(0, 0x7F800000, s, dtype=np.uint32) for s in shapes)
    _check(lambda: sf.add(a, b, "fp32", return_flags=want))
    _check(lambda: sf.mul(a, b, "fp32", "upward", return_flags=want))
    assert spy


@pytest.mark.parametrize("special", [0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001])
def test_infinities_and_nans_decline(special, spy):
    a = np.array([0x3F800000, special], dtype=np.uint32)
    _check(lambda: sf.add(a, a[::-1].copy(), "fp32", return_flags=True))
    assert not spy


def test_declines_division_sqrt_stochastic_daz_and_large(spy):
    a = np.arange(0x3F800000, 0x3F800000 + 8, dtype=np.uint32)
    sf.div(a, a, "fp32")
    sf.sqrt(a, "fp32")
    sf.add(a, a, "fp32", "stochastic", rng=0)
    sf.add(a, a, "fp32", denormals_are_zero=True)
    big = np.full(SMALL_FP32 + 1, 0x3F800000, dtype=np.uint32)
    sf.add(big, big, "fp32")
    assert not spy
    sf.add(a, a, "fp32")
    assert spy


_FINITE = st.integers(0, 0xFFFFFFFF).filter(lambda p: (p & 0x7F800000) != 0x7F800000)


@settings(max_examples=1000)
@given(a=_FINITE, b=_FINITE, name=st.sampled_from(sorted(OPS)), rounding=st.sampled_from(DETERMINISTIC),
       tininess=st.sampled_from(["after", "before"]))
def test_against_mpfr(a, b, name, rounding, tininess):
    """The exact result (Fractions) rounded by tests/oracle.py (MPFR), bits and flags;
    exact zeros (their signs: the general path's tests) left out."""
    x, y = (value_of_float(v) for v in np.array([a, b], dtype=np.uint32).view(np.float32))
    fx, fy = (-m if neg else m for m, neg in (x, y))
    q = fx + fy if name == "add" else fx - fy if name == "sub" else fx * fy
    assume(q != 0)
    expected = round_exact(abs(q), q < 0, sf.fp32, rounding, tininess=tininess)
    bits, flags = OPS[name](np.array([a], np.uint32), np.array([b], np.uint32), "fp32", rounding,
                            tininess=tininess, return_flags=True)
    assert int(bits[0]) == pattern_of(expected.value, expected.negative, sf.fp32)
    assert (bool(flags.overflow[0]), bool(flags.underflow[0]), bool(flags.inexact[0])) == \
        (expected.overflow, expected.underflow, expected.inexact)
