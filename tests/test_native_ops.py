"""fp16 and bf16 add, sub and mul on large arrays by the native shortcuts (softfloat.ops._native,
softfloat._fastpaths._native16) against the general path (softfloat._fastpaths.ENABLED off),
bit for bit and flag for flag, with a spy showing which shortcut ran."""

from __future__ import annotations

import numpy as np
import pytest

import softfloat as sf
import softfloat._fastpaths as fastpaths
from softfloat.ops import _driver as driver
from softfloat.ops import _native

MODES = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd"]
OPS = ["add", "sub", "mul"]
FLAGS = ["invalid", "divide_by_zero", "overflow", "underflow", "inexact"]

_ALL = np.arange(1 << 16, dtype=np.uint16)
FINITE = _ALL[(_ALL & 0x7C00) != 0x7C00]


def _partners(k_random: int, seed: int = 0) -> np.ndarray:
    """Partners near every threshold of the proof, both signs, and random finite ones."""
    edges = [0.0, 2.0 ** -24, 2.0 ** -14, 2.0 ** -14 - 2.0 ** -24, 2.0 ** -7, 2.0 ** -8, 2.0 ** -10, 0.5, 1.0,
             1.0 + 2.0 ** -10, 3.0, 255.875, 256.0, 255.0, 2048.0, 32768.0, 65504.0, 65472.0, 16.0]
    pats = sf.encode(np.array(edges + [-e for e in edges]), "fp16")
    rng = np.random.default_rng(seed)
    return np.concatenate([pats, rng.choice(FINITE, k_random)]).astype(np.uint16)


def _shortcut(fmt, op, mode, **options) -> bool:
    """Whether a shortcut takes these blocks: fp16 sums in every deterministic mode but
    ties away (gradual underflow, no saturation); fp16 products and bf16 in every
    deterministic mode."""
    if fmt == "fp16" and op in ("add", "sub"):
        return mode != "nearest_away" and not options.get("saturate") and options.get("subnormals", True)
    return True


def _both(op, a, b, mode, **kw):
    f = getattr(sf, op)
    fast = f(a, b, "fp16", mode, return_flags=True, **kw)
    bits_only = f(a, b, "fp16", mode, **kw)
    fastpaths.ENABLED = False
    try:
        slow = f(a, b, "fp16", mode, return_flags=True, **kw)
    finally:
        fastpaths.ENABLED = True
    return fast, bits_only, slow


def _assert_same(fast, bits_only, slow):
    (r1, f1), (r2, f2) = fast, slow
    np.testing.assert_array_equal(r1, r2)
    np.testing.assert_array_equal(bits_only, r2)
    for name in FLAGS:
        np.testing.assert_array_equal(np.asarray(getattr(f1, name)), np.asarray(getattr(f2, name)), err_msg=name)


@pytest.fixture
def spy(monkeypatch):
    """Counts the blocks a native shortcut rounded (declined ones not counted)."""
    calls = {"blocks": 0}
    real = driver.block_kernel

    def counting_kernel(job):
        run = real(job)
        if run is None:
            return None

        def counting(*args):
            found = run(*args)
            calls["blocks"] += found is not None
            return found

        return counting

    monkeypatch.setattr(driver, "block_kernel", counting_kernel)
    return calls


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("mode", MODES)
def test_every_finite_value_against_partners(op, mode, spy):
    """Every finite fp16 value against 38 threshold partners and 26 random ones."""
    p = _partners(26)
    a = np.repeat(FINITE, p.size)
    b = np.tile(p, FINITE.size)
    _assert_same(*_both(op, a, b, mode))
    assert (spy["blocks"] > 0) == _shortcut("fp16", op, mode)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("mode", ["nearest_even", "upward", "downward"])
def test_tininess_before_rounding(op, mode, spy):
    p = _partners(8, seed=1)
    a = np.repeat(FINITE, p.size)
    b = np.tile(p, FINITE.size)
    _assert_same(*_both(op, a, b, mode, tininess="before"))
    assert (spy["blocks"] > 0) == _shortcut("fp16", op, mode)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("mode", MODES)
def test_random_pairs_with_specials_and_odd_sizes(op, mode, spy):
    """All 65536 patterns, NaNs and infinities among them (their blocks take the general
    path), on sizes that are no multiple of the block, on one and on two threads."""
    rng = np.random.default_rng(7)
    n = 3 * (1 << 16) + 1234
    a = rng.choice(FINITE, n)
    b = rng.integers(0, 1 << 16, n, dtype=np.uint16)
    b[: (1 << 16)] = rng.choice(FINITE, 1 << 16)  # the first block finite: shortcut
    for workers in (1, 2):
        _assert_same(*_both(op, a, b, mode, workers=workers))
    assert (spy["blocks"] > 0) == _shortcut("fp16", op, mode)


@pytest.mark.parametrize("mode", MODES)
def test_exact_zero_sums_keep_ieee_signs(mode, spy):
    """x + (-x), x - x, +0 + -0, -0 + -0 over a whole block: +0, or -0 under downward."""
    x = np.tile(FINITE, 2)
    neg = x ^ np.uint16(0x8000)
    _assert_same(*_both("add", x, neg, mode))
    _assert_same(*_both("sub", x, x, mode))
    zeros = np.tile(np.array([0, 0x8000], dtype=np.uint16), 1 << 16)
    _assert_same(*_both("add", zeros, zeros[::-1].copy(), mode))
    _assert_same(*_both("sub", zeros, zeros, mode))
    assert (spy["blocks"] > 0) == _shortcut("fp16", "add", mode)


def test_broadcast_operands(spy):
    a = np.repeat(FINITE[::7], 3).reshape(-1, 1)[:20000]
    b = _partners(4).reshape(1, -1)
    for mode in MODES:
        _assert_same(*_both("mul", a, b, mode))
    assert spy["blocks"] > 0


def test_off_switch_and_declines(spy):
    """The switch off, DAZ, stochastic rounding, other formats and operations never
    reach the shortcuts."""
    a = np.repeat(FINITE, 2)
    b = a[::-1].copy()
    fastpaths.ENABLED = False
    try:
        sf.add(a, b, "fp16")
    finally:
        fastpaths.ENABLED = True
    sf.add(a, b, "fp16", denormals_are_zero=True)
    sf.add(a, b, "fp16", "stochastic", rng=1)
    sf.add(sf.encode(np.ones(a.size), "fp32"), sf.encode(np.ones(a.size), "fp32"), "fp32")
    sf.div(a, b, "fp16")
    assert spy["blocks"] == 0


def test_nearest_even_matches_numpy_float16():
    """Round to nearest even is numpy's float16 arithmetic (the oracle for fp16)."""
    rng = np.random.default_rng(3)
    a = rng.choice(FINITE, 1 << 17)
    b = rng.choice(FINITE, 1 << 17)
    with np.errstate(all="ignore"):
        for op, ufunc in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply)):
            want = ufunc(a.view(np.float16).astype(np.float64), b.view(np.float16).astype(np.float64))
            np.testing.assert_array_equal(getattr(sf, op)(a, b, "fp16"), want.astype(np.float16).view(np.uint16))


# ---- bf16 (softfloat.ops._native: float32 products and rounded-to-odd sums) ------------
def _bf16(rng, n, lo, hi):
    x = np.exp2(rng.uniform(lo, hi, n)) * rng.choice([-1.0, 1.0], n)
    return sf.encode(x, "bf16")


BF16_RANGES = [(-20, 20), (-133, -100), (100, 127.99), (-126.5, -125.5), (-60, 60)]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("mode", MODES)
def test_bf16_pairs_with_extreme_exponents(op, mode, spy):
    """Random bf16 pairs with exponents near both ends of the range (float32 products
    overflow or underflow there: those blocks take the general path), huge exponent
    gaps (sums needing the rounding to odd), both tininess rules."""
    rng = np.random.default_rng(11)
    n = (1 << 16) + 777
    for (lo_a, hi_a) in BF16_RANGES:
        for (lo_b, hi_b) in BF16_RANGES:
            a, b = _bf16(rng, n, lo_a, hi_a), _bf16(rng, n, lo_b, hi_b)
            for tininess in ("after", "before"):
                f = getattr(sf, op)
                fast = f(a, b, "bf16", mode, tininess=tininess, return_flags=True)
                bits_only = f(a, b, "bf16", mode, tininess=tininess)
                fastpaths.ENABLED = False
                try:
                    slow = f(a, b, "bf16", mode, tininess=tininess, return_flags=True)
                finally:
                    fastpaths.ENABLED = True
                _assert_same(fast, bits_only, slow)
    assert spy["blocks"] > 0


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("mode", MODES)
def test_bf16_every_pattern_against_partners(op, mode, spy):
    """Every bf16 pattern (NaNs and infinities included) against 12 partners."""
    rng = np.random.default_rng(5)
    partners = np.concatenate([sf.encode(np.array([0.0, -0.0, 1.0, -1.5, 2.0 ** -126, 2.0 ** 120, 3.0 * 2.0 ** -120]),
                                          "bf16"), rng.integers(0, 1 << 16, 5, dtype=np.uint16)])
    a = np.repeat(_ALL, partners.size)
    b = np.tile(partners, _ALL.size)
    _assert_same(*_both_fmt(op, a, b, mode, "bf16"))
    if op != "mul":  # every block of products has some over- or underflowing float32 lane
        assert spy["blocks"] > 0


def _both_fmt(op, a, b, mode, fmt):
    f = getattr(sf, op)
    fast = f(a, b, fmt, mode, return_flags=True)
    bits_only = f(a, b, fmt, mode)
    fastpaths.ENABLED = False
    try:
        slow = f(a, b, fmt, mode, return_flags=True)
    finally:
        fastpaths.ENABLED = True
    return fast, bits_only, slow


def test_give_up_after_declined_blocks(spy):
    """Data outside float32's safe range everywhere: the first blocks decline, then the
    call stops trying; the results are the general path's."""
    rng = np.random.default_rng(2)
    n = 8 * (1 << 16)
    a, b = _bf16(rng, n, 100, 127.9), _bf16(rng, n, 100, 127.9)
    _assert_same(*_both_fmt("mul", a, b, "nearest_even", "bf16"))
    assert spy["blocks"] == 0
    assert _native.GIVE_UP >= 1


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("options", [{"saturate": True}, {"subnormals": False},
                                     {"saturate": True, "subnormals": False, "tininess": "before"}])
def test_saturation_and_flush_to_zero(fmt, op, options, spy):
    """The float32 kernels hand the codec a value that rounds like the exact result, so
    saturation and flush-to-zero (the codec's) hold too."""
    rng = np.random.default_rng(9)
    n = (1 << 16) + 5
    if fmt == "fp16":
        a, b = rng.choice(FINITE, n), rng.choice(FINITE, n)
    else:
        a, b = _bf16(rng, n, -130, -100), _bf16(rng, n, -20, 20)
    for mode in MODES:
        f = getattr(sf, op)
        fast = f(a, b, fmt, mode, return_flags=True, **options)
        bits_only = f(a, b, fmt, mode, **options)
        fastpaths.ENABLED = False
        try:
            slow = f(a, b, fmt, mode, return_flags=True, **options)
        finally:
            fastpaths.ENABLED = True
        _assert_same(fast, bits_only, slow)
    if (fmt, op) != ("bf16", "mul"):  # bf16 products this small underflow float32: declined
        assert (spy["blocks"] > 0) == _shortcut(fmt, op, "nearest_even", **options)


@pytest.mark.parametrize("fmt, op", [("fp16", "add"), ("fp16", "mul"), ("bf16", "sub"), ("bf16", "mul")])
def test_threaded_blocks(fmt, op, spy):
    """Enough elements for several threads (their larger blocks), a ragged last block."""
    rng = np.random.default_rng(4)
    n = (1 << 20) + 17
    if fmt == "fp16":
        a, b = rng.choice(FINITE, n), rng.choice(FINITE, n)
    else:
        a, b = _bf16(rng, n, -30, 30), _bf16(rng, n, -30, 30)
    f = getattr(sf, op)
    for mode in ("nearest_even", "downward"):
        fast = f(a, b, fmt, mode, return_flags=True, workers=2)
        bits_only = f(a, b, fmt, mode, workers=2)
        fastpaths.ENABLED = False
        try:
            slow = f(a, b, fmt, mode, return_flags=True, workers=1)
        finally:
            fastpaths.ENABLED = True
        _assert_same(fast, bits_only, slow)
    assert spy["blocks"] > 0
