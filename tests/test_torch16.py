"""softfloat.ops._torch16: add, sub, mul, div and sqrt into fp16/bf16 by torch's CPU
kernels (nearest even, no flags, torch imported) give the general path's bits, the
NaN lanes it hands back included; the route declines where torch flushes subnormals."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import import_torch

import softfloat as sf
from softfloat import _fastpaths
from softfloat.ops import _driver

torch = import_torch()

BINARY = {"add": sf.add, "sub": sf.sub, "mul": sf.mul, "div": sf.div}
N = _driver.SMALL_FP16 + 1  # the route starts above the small-array shortcuts


@pytest.fixture
def taken(monkeypatch):
    """Counts of the torch route's calls that answered and that handed lanes back."""
    counts = {"answered": 0, "lanes": 0}
    real = _driver.torch_arithmetic

    def spy(*args):
        redo = real(*args)
        if redo is not None:
            counts["answered"] += 1
            counts["lanes"] += redo.size
        return redo

    monkeypatch.setattr(_driver, "torch_arithmetic", spy)
    return counts


def general(fn, *args, **kw):
    """``fn`` with every shortcut off: the general path."""
    _fastpaths.ENABLED = False
    try:
        return fn(*args, **kw)
    finally:
        _fastpaths.ENABLED = True


def specials(fmt):
    f = sf.as_format(fmt)
    v = [0.0, -0.0, f.min_subnormal, -f.min_subnormal, f.min_normal, f.max_finite, -f.max_finite, 1.0, -1.5,
         np.inf, -np.inf, 3.0, 1 / 3, 2.0 ** -7, 1e-3]
    bits = sf.encode(np.array(v), f)
    return np.concatenate([bits, np.array([f.exponent_mask | 1, f.sign_mask | f.exponent_mask | 5],
                                          dtype=np.uint16)])


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
@pytest.mark.parametrize("op", sorted(BINARY))
def test_every_pattern_against_specials_and_random(fmt, op, taken):
    """Every 16-bit pattern (NaNs, infinities, subnormals, both zeros) against specials
    and random partners, in chunks where at most an eighth of the lanes are NaN."""
    rng = np.random.default_rng(23)
    every = np.arange(1 << 16, dtype=np.uint16)
    partners = np.concatenate([specials(fmt), rng.integers(0, 1 << 16, 8, dtype=np.uint16)])
    for b in partners:
        for a, bb in ((every, np.full_like(every, b)), (np.full_like(every, b), every)):
            got = BINARY[op](a, bb, fmt)
            assert np.array_equal(got, general(BINARY[op], a, bb, fmt)), (fmt, op, hex(int(b)))
    assert taken["answered"] > 0


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_sqrt_every_pattern(fmt, taken):
    every = np.arange(1 << 16, dtype=np.uint16)
    assert np.array_equal(sf.sqrt(every, fmt), general(sf.sqrt, every, fmt))
    assert np.array_equal(sf.sqrt(every & 0x7FFF, fmt), general(sf.sqrt, every & 0x7FFF, fmt))
    assert taken["answered"] == 2 and taken["lanes"] > 0


@pytest.mark.parametrize("op", ["mul", "div"])
def test_bf16_results_where_float32_is_subnormal(op, taken):
    """Products and quotients around bf16's subnormals, where float32 rounds to multiples
    of 2**-149 first (the module docstring's second case of innocuous double rounding)."""
    rng = np.random.default_rng(5)
    n = 1 << 18
    a = sf.encode(2.0 ** rng.uniform(-70, -58, n) * rng.choice([-1, 1], n), "bf16")
    b = sf.encode(2.0 ** rng.uniform(-70, -58, n) if op == "mul" else 2.0 ** rng.uniform(58, 72, n), "bf16")
    got = BINARY[op](a, b, "bf16")
    assert np.array_equal(got, general(BINARY[op], a, b, "bf16"))
    assert taken["answered"] == 1 and taken["lanes"] == 0
    assert np.count_nonzero(got & 0x7F80 == 0) > n // 4  # mostly subnormal and zero results


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_broadcast_strided_and_scalar_operands(fmt, taken):
    rng = np.random.default_rng(1)
    a = sf.encode(rng.standard_normal((2 * N, 3)), fmt)[::2]  # strided rows
    row = sf.encode(rng.standard_normal(3), fmt)
    col = sf.encode(rng.standard_normal((N, 1)), fmt)
    for x, y in ((a, row), (a, col), (a, np.uint16(sf.encode(1.5, fmt))), (col, row.reshape(1, 3))):
        for name, fn in BINARY.items():
            assert np.array_equal(fn(x, y, fmt), general(fn, x, y, fmt)), name
    reversed_ = a[::-1]  # negative strides: torch cannot view them, the general path runs
    assert np.array_equal(sf.add(reversed_, a, fmt), general(sf.add, reversed_, a, fmt))
    assert taken["answered"] >= 16


def test_only_nearest_even_without_flags(taken):
    rng = np.random.default_rng(2)
    a, b = (sf.encode(rng.standard_normal(N), "fp16") for _ in range(2))
    sf.add(a, b, "fp16", rounding="upward")
    sf.add(a, b, "fp16", return_flags=True)
    sf.add(a, b, "fp16", saturate=True)
    sf.add(a, b, "fp16", denormals_are_zero=True)
    assert taken["answered"] == 0
    sf.add(a, b, "fp16")
    assert taken["answered"] == 1


def test_refused_when_torch_flushes_subnormals(taken):
    # a thread that flushes subnormals gets softfloat's clear error (softfloat._fpenv),
    # before any kernel -- torch's included -- runs
    a = np.full(N, 1, dtype=np.uint16)  # the smallest subnormal
    if not torch.set_flush_denormal(True):
        pytest.skip("this CPU cannot flush subnormals")
    try:
        with pytest.raises(FloatingPointError, match="flushes subnormal"):
            sf.add(a, a, "bf16")
    finally:
        torch.set_flush_denormal(False)
    assert taken["answered"] == 0


def test_operands_unchanged():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 1 << 16, N, dtype=np.uint16)
    keep = a.copy()
    a.setflags(write=False)
    sf.mul(a, a, "bf16")
    assert np.array_equal(a, keep)
