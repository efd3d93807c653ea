"""bf16 operations on small arrays (softfloat.ops._driver._small_bf16, its proof in
softfloat._fastpaths._bfloat16) equal the general path bit for bit, flags included.

The reference is the same public call with the off switch ``softfloat._fastpaths.ENABLED``
set to False.  Every finite bf16 pattern meets a few dozen partners (format thresholds of
both signs, random patterns) in add, sub, mul, div and sqrt, in every deterministic mode
and option; shapes 0-d, (1,), broadcast and 1,000; a spy checks the shortcut ran.
"""

from __future__ import annotations

import numpy as np
import pytest

import softfloat as sf
from softfloat import _fastpaths

from tests.fastpath_checks import assert_same, general

DETERMINISTIC = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd"]
OPTIONS = [{}, {"tininess": "before"}, {"subnormals": False}, {"saturate": True},
           {"attributes": sf.RoundingAttributes(platform="arm")}]
OPS = {"add": sf.add, "sub": sf.sub, "mul": sf.mul, "div": sf.div}

#: zero, the subnormal ends, the smallest normals, 1 and its neighbours, 1.5, the largest
#: finite values: both signs, and random patterns
_THRESHOLDS = [0x0000, 0x0001, 0x007F, 0x0080, 0x0081, 0x0100, 0x3F7F, 0x3F80, 0x3F81, 0x3FC0, 0x4000, 0x7F00,
               0x7F7F, 0x1F80, 0x5F80, 0x2000]
PARTNERS = sorted(set(_THRESHOLDS + [p | 0x8000 for p in _THRESHOLDS]
                      + np.random.default_rng(23).integers(0, 0x7F80, 8).tolist()))
_ALL = np.arange(1 << 16, dtype=np.uint16)
FINITE = _ALL[(_ALL & 0x7F80) != 0x7F80]  # every finite pattern
CHUNK = 1 << 14  # the shortcut's size limit


def _chunks():
    return [FINITE[i:i + CHUNK] for i in range(0, FINITE.size, CHUNK)]


@pytest.fixture
def spy(monkeypatch):
    """Counts the calls the shortcut took (returned values for)."""
    taken = []
    real = _fastpaths.bfloat16_arithmetic

    def wrapper(*args):
        found = real(*args)
        if found is not None:
            taken.append(found.size)
        return found

    monkeypatch.setattr(_fastpaths, "bfloat16_arithmetic", wrapper)
    return taken


def _check(call):
    assert_same(call(), general(call))


@pytest.mark.parametrize("rounding", DETERMINISTIC)
@pytest.mark.parametrize("name", sorted(OPS))
def test_every_pattern_against_partners(name, rounding, spy):
    op = OPS[name]
    for partner in PARTNERS:
        b = np.array(partner, dtype=np.uint16)
        for a in _chunks():
            _check(lambda: op(a, b, "bf16", rounding, return_flags=True))
            _check(lambda: op(b, a, "bf16", rounding, return_flags=True))
    assert spy


@pytest.mark.parametrize("rounding", DETERMINISTIC)
def test_sqrt_every_pattern(rounding, spy):
    for a in _chunks():
        nonneg = a[a < 0x8000]
        _check(lambda: sf.sqrt(nonneg, "bf16", rounding, return_flags=True))
        _check(lambda: sf.sqrt(nonneg, "bf16", rounding))
    assert spy


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("rounding", ["nearest_even", "toward_zero", "downward"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_options(name, rounding, options, spy):
    op = OPS[name]
    if "attributes" in options:
        options = {"attributes": options["attributes"].replace(rounding=rounding)} \
            if hasattr(options["attributes"], "replace") else options
        rounding = None
    for partner in PARTNERS[::3]:
        b = np.array(partner, dtype=np.uint16)
        for a in _chunks():
            _check(lambda: op(a, b, "bf16", rounding, return_flags=True, **options))
    for a in _chunks():
        nonneg = a[a < 0x8000]
        _check(lambda: sf.sqrt(nonneg, "bf16", rounding, return_flags=True, **options))
    assert spy


SHAPES = [((), ()), ((1,), (1,)), ((3, 1), (1, 4)), ((1000,), (1000,)), ((1000,), ()), ((0,), (0,)),
          ((2, 0), (1,))]


@pytest.mark.parametrize("want", [False, True])
@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("name", sorted(OPS))
def test_shapes(name, shapes, want):
    rng = np.random.default_rng(len(name))
    a, b = (FINITE[rng.integers(0, FINITE.size, s)] for s in shapes)
    _check(lambda: OPS[name](a, b, "bf16", return_flags=want))
    _check(lambda: sf.sqrt(a & 0x7FFF, "bf16", return_flags=want))


def test_takes_a_thousand_elements(spy):
    rng = np.random.default_rng(1)
    nonzero = FINITE[(FINITE & 0x7FFF) != 0]  # divisors
    a, b = (nonzero[rng.integers(0, nonzero.size, 1000)] for _ in range(2))
    for op in OPS.values():
        op(a, b, "bf16", return_flags=True)
    sf.sqrt(a & 0x7FFF, "bf16")
    assert spy == [1000] * 5


@pytest.mark.parametrize("special", [0x7F80, 0xFF80, 0x7FC0, 0x7F81])
def test_specials_and_zero_divisors_decline(special, spy):
    a = np.array([0x3F80, special], dtype=np.uint16)
    b = np.array([0x3F80, 0x4000], dtype=np.uint16)
    for op in OPS.values():
        _check(lambda: op(a, b, "bf16", return_flags=True))
        _check(lambda: op(b, a, "bf16", return_flags=True))
    zero = np.array([0x3F80, 0x8000], dtype=np.uint16)
    _check(lambda: sf.div(b, zero, "bf16", return_flags=True))
    _check(lambda: sf.sqrt(np.array([0x3F80, 0xBF80], dtype=np.uint16), "bf16", return_flags=True))
    assert not spy


def test_declines_stochastic_daz_and_large(spy):
    a = FINITE[:CHUNK + 1]
    sf.add(a, a, "bf16")
    b = FINITE[:10]
    sf.add(b, b, "bf16", "stochastic", rng=np.random.default_rng(0))
    sf.add(b, b, "bf16", denormals_are_zero=True)
    assert not spy


def test_off_switch(spy, monkeypatch):
    monkeypatch.setattr(_fastpaths, "ENABLED", False)
    assert _fastpaths._bfloat16.applies(sf.formats.bf16, sf.RoundingAttributes())
    b = FINITE[:10]
    sf.add(b, b, "bf16")
    assert not spy
