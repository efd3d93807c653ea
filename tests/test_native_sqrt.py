"""The square-root shortcut of softfloat.ops._native (float64's root, then the codec's
rounding): every tf32 pattern in every deterministic mode, and fp32
operands aimed at the proof's edges (exact squares, squares of midpoints, their
neighbours, subnormals), against the general path with the switch off and, for fp32,
against MPFR; declined blocks (a NaN or a negative operand) keep the general path's
invalid flag and NaN."""

from __future__ import annotations

from fractions import Fraction

import gmpy2
import numpy as np
import pytest

import softfloat as sf
import softfloat._fastpaths as fastpaths
from softfloat.ops import _driver as driver

from tests.fastpath_checks import general

MODES = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd"]
FLAGS = ["invalid", "divide_by_zero", "overflow", "underflow", "inexact"]
_MPFR = {"nearest_even": gmpy2.RoundToNearest, "toward_zero": gmpy2.RoundToZero, "upward": gmpy2.RoundUp,
         "downward": gmpy2.RoundDown}


@pytest.fixture
def taken(monkeypatch):
    """The blocks the shortcut rounded (declined ones not counted)."""
    calls = []
    real = driver.block_kernel

    def counting_kernel(job):
        run = real(job)
        if run is None or job.operation.native is not np.sqrt:
            return run
        return lambda *args: calls.append(run(*args)) or calls[-1]

    monkeypatch.setattr(driver, "block_kernel", counting_kernel)
    return calls


def _same(x, fmt, mode, **kw):
    fast = sf.sqrt(x, fmt, mode, return_flags=True, **kw)
    slow = general(lambda: sf.sqrt(x, fmt, mode, return_flags=True, **kw))
    np.testing.assert_array_equal(fast[0], slow[0])
    np.testing.assert_array_equal(sf.sqrt(x, fmt, mode, **kw), slow[0])
    for name in FLAGS:
        np.testing.assert_array_equal(getattr(fast[1], name), getattr(slow[1], name), err_msg=name)
    return fast


@pytest.mark.parametrize("mode", MODES)
def test_every_tf32_pattern_in_every_mode(mode, taken):
    """tf32 (19 bits: no table of roots, as the 16-bit formats have) exhaustively."""
    patterns = np.arange(1 << 19, dtype=np.uint32)
    values = sf.decode(patterns, "tf32")
    _same(patterns[values >= 0], "tf32", mode)  # (NaNs and negatives: see below)
    assert any(t is not None for t in taken)
    _same(patterns, "tf32", mode)  # with NaNs and negatives: their blocks take the general kernel


def _fp32_edges(rng, n):
    """Squares of random 24-bit values (exact roots), of 25-bit midpoints (roots exactly
    between two fp32 values: never an fp32 value themselves), their fp32 neighbours,
    subnormals, powers of 4 and 2, random values."""
    v = (rng.integers(1 << 23, 1 << 24, n) * 2.0 ** rng.integers(-80, 40, n)).astype(np.float64)
    squares = (v * v).astype(np.float32)
    mid = (rng.integers(1 << 23, 1 << 24, n) + 0.5) * 2.0 ** rng.integers(-80, 40, n)
    mids = (mid * mid).astype(np.float32)
    near = np.concatenate([np.nextafter(squares, np.inf), np.nextafter(squares, 0), np.nextafter(mids, np.inf),
                           np.nextafter(mids, 0)])
    tiny = rng.integers(1, 1 << 23, n).astype(np.uint32).view(np.float32)
    powers = np.float32(2.0) ** np.arange(-149, 128, dtype=np.float32)
    randoms = np.abs(rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)).astype(np.float32)
    values = np.concatenate([squares, mids, near, tiny, powers, randoms, [0.0, -0.0, np.inf]]).astype(np.float32)
    return values.view(np.uint32)


@pytest.mark.parametrize("mode", MODES)
def test_fp32_edges_against_the_general_path(mode, taken):
    x = _fp32_edges(np.random.default_rng(len(mode)), 4000)
    _same(x, "fp32", mode)
    _same(x, "fp32", mode, tininess="before", subnormals=False)
    assert any(t is not None for t in taken)


@pytest.mark.parametrize("mode", sorted(_MPFR))
def test_fp32_roots_are_mpfrs(mode):
    """MPFR's square root at 24 bits (fp32's range: no fp32 root is subnormal); inexact
    where the root's square is not the operand (exact rationals)."""
    x = _fp32_edges(np.random.default_rng(9), 300)
    got, flags = sf.sqrt(x, "fp32", mode, return_flags=True)
    ctx = gmpy2.context(precision=24, emin=-148, emax=128, subnormalize=True, round=_MPFR[mode])
    for i, bits in enumerate(x.tolist()):
        value = float(np.uint32(bits).view(np.float32))
        with ctx:
            root = gmpy2.sqrt(gmpy2.mpfr(value, 24))
        want = np.float32(float(root))
        assert np.uint32(got[i]) == want.view(np.uint32), (value, mode)
        exact = value == np.inf or Fraction(float(root)) ** 2 == Fraction(value)
        assert bool(flags.inexact[i]) == (not exact), (value, mode)


def test_negative_and_nan_operands_keep_the_general_paths_rules(taken):
    x = sf.encode([4.0, -1.0, np.nan, -0.0, np.inf, 2.0], "fp32")
    bits, flags = _same(x, "fp32", "nearest_even")
    assert flags.invalid.tolist() == [False, True, False, False, False, False]
    assert taken and all(t is None for t in taken)  # one block, with a negative: declined
    # without the negative the kernel takes the block (past the small arrays' lane, which
    # answers a few elements by numpy's float32 arithmetic before any block kernel)
    block = np.tile(x[[0, 3, 4, 5]], driver.SMALL_FP32 // 4 + 1)
    assert sf.decode(sf.sqrt(block, "fp32"), "fp32").tolist()[:4] == [2.0, -0.0, np.inf, np.sqrt(np.float32(2))]
    assert taken[-1] is not None


def test_formats_with_tiny_roots_and_the_off_switch_take_the_general_kernel(taken):
    sf.sqrt(sf.encode(np.linspace(0, 4, 70000), "fp16"), "fp16")  # (16 bits: the roots' table)
    sf.sqrt(sf.encode([2.0], "fp32"), "fp32", "stochastic", rng=0)
    general(lambda: sf.sqrt(sf.encode([2.0], "fp32"), "fp32"))
    assert taken == []
    assert fastpaths.ENABLED
