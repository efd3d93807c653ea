"""float64 -> fp16 with flags on blocks of normal-range data: the float32-rounded-to-odd
kernel (softfloat._fastpaths._odd32) hands them to the float64 re-bias kernel and rounds
the lanes that kernel leaves (subnormal range, overflow, infinities, NaNs) gathered; bit
for bit and flag for flag against the general path (every fast path off), every
deterministic mode and option, with a spy showing the re-bias route ran."""

from __future__ import annotations

import numpy as np
import pytest

import softfloat as sf
from softfloat._fastpaths import _odd32, _rebias
from tests.fastpath_checks import assert_same, general

MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd")
OPTIONS = ({}, {"tininess": "before"}, {"saturate": True}, {"subnormals": False})
N = 1 << 18  # one fast-kernel block: the call fills the float32 tables


def _normal_block(seed, odd_lanes):
    """N values log-uniform over fp16's normal range with ``odd_lanes`` lanes (after the
    sample the route reads) replaced by zeros, values below 2**-14 and near the
    overflow thresholds, infinities and NaNs."""
    rng = np.random.default_rng(seed)
    x = np.exp2(rng.uniform(-14, np.log2(65504), N)) * rng.choice([-1.0, 1.0], N)
    x[:64] = [0.0, -0.0] * 32  # zeros take the re-bias kernel's main passes
    if odd_lanes:
        specials = np.array([2.0 ** -15, 2.0 ** -24, 3 * 2.0 ** -26, 2.0 ** -30, 1e-300, 65504.0 + 8, 65519.99,
                             65520.0, 65535.0, 65536.0, 1e6, 1e300, np.inf, np.nan, 2.0 ** -14 - 2.0 ** -40,
                             5e-324])
        picks = rng.choice(np.concatenate([specials, -specials]), odd_lanes)
        where = rng.choice(np.arange(_odd32.SAMPLE, N), odd_lanes, replace=False)
        x[where] = picks
    return x


@pytest.fixture
def spy(monkeypatch):
    calls = {"rebias": 0, "gathered": 0}
    real, real_gathered = _rebias.rebias, _odd32._gathered

    def gathered(*args):
        calls["gathered"] += 1
        return real_gathered(*args)

    def counting(p, blk, want, out, ws):
        calls["rebias"] += want
        return real(p, blk, want, out, ws)

    monkeypatch.setattr(_rebias, "rebias", counting)
    monkeypatch.setattr(_odd32, "_gathered", gathered)
    return calls


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("odd_lanes", [0, 300, 20000])
def test_normal_blocks_with_flags_match_general_path(mode, options, odd_lanes, spy):
    x = _normal_block(len(mode) + odd_lanes, odd_lanes)
    fast = sf.encode(x, "fp16", mode, return_flags=True, **options)
    slow = general(lambda: sf.encode(x, "fp16", mode, return_flags=True, **options))
    assert_same(fast, slow)
    assert spy["rebias"] > 0
    assert (spy["gathered"] > 0) == (odd_lanes > 0)  # the filled tables' route, not the fallback
    assert_same(sf.quantize(x, "fp16", mode, return_flags=True, **options),
                general(lambda: sf.quantize(x, "fp16", mode, return_flags=True, **options)))


def test_wide_blocks_keep_the_odd_route(spy):
    """Data over the whole range fails the sample: no re-bias pass is spent on it."""
    rng = np.random.default_rng(5)
    x = np.exp2(rng.uniform(-30, 18, N)) * rng.choice([-1.0, 1.0], N)
    x[:_odd32.SAMPLE:7] = 2.0 ** -20
    fast = sf.encode(x, "fp16", "upward", return_flags=True)
    assert_same(fast, general(lambda: sf.encode(x, "fp16", "upward", return_flags=True)))
    assert spy["rebias"] == 0


def test_input_is_not_modified():
    x = _normal_block(9, 500)
    before = x.copy()
    sf.encode(x, "fp16", "toward_zero", return_flags=True)
    np.testing.assert_array_equal(x.view(np.uint64), before.view(np.uint64))
