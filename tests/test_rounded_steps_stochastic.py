"""Stochastic rounding of the running sums on the fast path (softfloat.accumulate.
_odd_stochastic, taken by softfloat.accumulate._fast.StochasticRoundedSteps): bits,
flags, swamped counts and draws equal to the general path's (the definition) for the
same rng -- on random, adversarial and hypothesis-made products, and on draws made to
put the random threshold within TwoSum's error of r's remainder, where the decision on r
alone is wrong and the step must go to the general arithmetic."""

from __future__ import annotations

import zlib
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import softfloat as sf
from softfloat.accumulate import _draws, _fast, _ieee, _odd_stochastic
import softfloat.accumulate.reduce as reduce_module
from softfloat.attributes import RoundingAttributes
from softfloat.rounding import Rounding, Tininess

from tests.accumulate_checks import adversarial_operands, random_patterns
from tests.fastpath_checks import answers_of, assert_same, general
from tests.test_rounded_steps import KINDS, _terms

FORMATS = ["fp32", "fp16", "bf16"]


def _steps(acc, want=True, tininess=Tininess.AFTER):
    attrs = RoundingAttributes(rounding=Rounding.STOCHASTIC, tininess=tininess)
    return _odd_stochastic.StochasticSteps.of(sf.as_format(acc), attrs, want)


def _general(steps, P, key, start):
    """The general path's steps on the (K, n) products ``P`` (softfloat.accumulate._ieee.
    Arithmetic.add: the draws of the key, event ADD, step k), from ``start`` or the first
    product: (last, inexact, underflow, swamped), or None where the last sum is not finite."""
    K, n = P.shape
    spec = _ieee.Spec(steps.fmt, steps.fmt, steps.fmt, None, "sequential", None, steps.attrs, key, True)
    arith, flags = _ieee.Arithmetic(spec, True), _ieee.TileFlags(n, True)
    s = None if start is None else start.astype(np.float64)
    with np.errstate(all="ignore"):  # (the general steps meet the overflows the fast ones decline)
        for k in range(K):
            s = arith.add(s, P[k].copy(), None, k, 0, n, flags)
    if not np.isfinite(s).all():
        return None
    return s.astype(steps.dtype), flags.masks.inexact, flags.masks.underflow, flags.swamped


def _same(fast, slow):
    assert (fast is None) == (slow is None)
    if fast is None:
        return
    assert np.array_equal(fast[0].view(np.uint8), slow[0].view(np.uint8))
    for got, want in zip(fast[1:], slow[1:]):
        assert np.array_equal(got, want)


@pytest.mark.parametrize("acc", FORMATS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", [(1, 5), (17, 33), (64, 96)])
def test_the_fast_steps_equal_the_general_steps_for_many_draws(acc, kind, shape):
    """Every column, flag and count as each step taken by the general arithmetic, from the
    first product or from a start, both tininess rules, on products aimed at midpoints,
    ties, subnormal sums, zeros and overflows (softfloat's tests of the deterministic
    steps), for several draws of the 64 random bits."""
    rng = np.random.default_rng([zlib.crc32(acc.encode()), KINDS.index(kind), *shape])
    for tininess in Tininess:
        steps = _steps(acc, True, tininess)
        P = _terms(kind, rng, *shape, steps.fmt)
        with np.errstate(over="ignore"):
            starts = [None, sf.decode(sf.encode(P[0][::-1], acc), acc).astype(steps.dtype)]
        for start in starts:
            for key in rng.integers(0, 2 ** 63, 3, dtype=np.uint64):
                D = _draws.draws(key, _draws.ADD, np.arange(P.shape[0]), 0, P.shape[1])
                _same(steps.running_sums(P, D, start), _general(steps, P, key, start))


def _crafted(seed: int, case: str):
    """fp32: s = 1 then 1 + p (p a product of fp32 values, 1 + p not a float64), with the
    draws of the second step made so that the decision on r = fl64(1 + p) alone is not
    the exact sum's: ``case`` "up" (Z = 0, e towards zero: r goes up, 1 + p down),
    "down" (Z = -1, e away from zero), "grid" (r on fp32's grid: 1 + p just below it
    and the random bits 0 take it down past r).  Returns (P, D, r)."""
    rng = np.random.default_rng(seed)
    while True:
        x, y = np.float32(1 + rng.random()), np.float32(rng.random() * 2.0 ** -5)
        if case == "grid":  # (1 + 2**-23) * (1 - 2**-23) = 1 - 2**-46: 1 + p is 2**-69 below the grid
            x, y = np.float32((1 + 2.0 ** -23) * 2.0 ** (seed - 23)), np.float32(1 - 2.0 ** -23)
        p = float(np.float64(x) * np.float64(y))
        r = 1.0 + p
        e = Fraction(1) + Fraction(p) - Fraction(r)
        d = int(np.float64(r).view(np.uint64)) & ((1 << 29) - 1)
        if e == 0 or not 1 <= r < 2:
            continue
        if case == "up" and e < 0 and d:
            u_c, u9 = (1 << 29) - d, 0
        elif case == "down" and e > 0 and d:
            u_c, u9 = (1 << 29) - 1 - d, 511
        elif case == "grid" and e < 0 and d == 0:
            u_c, u9 = 0, 0
        else:
            continue
        D = np.zeros((2, 1), dtype=np.uint64)
        D[1, 0] = (u_c << 35) | (u9 << 26)
        return np.array([[1.0], [p]]), D, r


def _rule(x: Fraction, R: int) -> float:
    """The general path's stochastic rounding of 1 <= x < 2 into fp32 (the module
    docstring of softfloat.accumulate._odd_stochastic): V = x * 2**61 with the bits below
    ORed into bit 0, cut at s = 38 bits, up iff V mod 2**s + (R >> 26) >= 2**s."""
    scaled = x * 2 ** 61
    V = int(scaled) | (scaled.denominator != 1)
    up = (V % 2 ** 38) + (R >> 26) >= 2 ** 38
    return ((V >> 38) + up) * 2.0 ** -23


@pytest.mark.parametrize("case", ["up", "down", "grid"])
@pytest.mark.parametrize("seed", range(4))
def test_a_threshold_within_twosums_error_goes_to_the_general_arithmetic(case, seed):
    """Draws that put the random threshold within |e| of r's remainder: rounding r alone
    gives the wrong neighbour (checked against the rule written out in exact rational
    arithmetic, which the general path's rounding point follows); the fast steps see the
    step and take the general path's answer."""
    P, D, r = _crafted(seed, case)
    x = 1 + Fraction(float(P[1, 0]))
    want = _rule(x, int(D[1, 0]))
    bits = (int(np.float64(r).view(np.uint64)) + (int(D[1, 0]) >> 35)) & ~((1 << 29) - 1)  # r rounded alone
    alone = float(np.array([bits], dtype=np.uint64).view(np.float64)[0])
    assert alone != want  # the decision on r alone is wrong here
    steps = _steps("fp32")
    assert steps._general_step(np.array([1.0]), P[1], D[1], np.array([False]))[0][0] == want
    found = steps.running_sums(P, D)
    assert float(found[0][0]) == want
    assert found[1][0]  # inexact


@pytest.fixture
def tiles(monkeypatch):
    """The tiles for every size, and a list of the arithmetics their plans gave."""
    monkeypatch.setattr(reduce_module, "_ONE_OUTPUT_TERMS", 0)
    return answers_of(monkeypatch, _fast, "plan")


def _calls(a, b, fmt, acc, seed, **kw):
    """sf.matmul in both orders, every return_flags choice, stochastic with rng ``seed``."""
    for order in ("sequential", "reverse"):
        for flags in (True, "swamped", False):
            yield lambda order=order, flags=flags: sf.matmul(a, b, fmt, accumulator=acc, order=order,
                                                              rounding="stochastic", rng=seed, return_flags=flags, **kw)


@pytest.mark.parametrize("fmt, acc", [("fp32", "fp32"), ("fp16", "fp16"), ("bf16", "bf16"), ("fp8_e4m3", "bf16"),
                                      ("fp8_e5m2", "fp16")])
@pytest.mark.parametrize("seed", range(4))
def test_matrix_products_equal_the_general_path(tiles, fmt, acc, seed):
    """Random patterns, both orders, from c, every flag choice, several rng seeds."""
    rng = np.random.default_rng([seed, zlib.crc32(fmt.encode())])
    f = sf.as_format(fmt)
    a = random_patterns(rng, f, (6, 24), spread=8, zeros=0.1)
    b = random_patterns(rng, f, (24, 5), spread=8, zeros=0.1)
    c = random_patterns(rng, sf.as_format(acc), (6, 5), spread=6)
    for kw in ({}, {"c": c}, {"tininess": "before"}):
        for call in _calls(a, b, fmt, acc, seed, **kw):
            assert_same(call(), general(call))
    assert any(type(plan) is _fast.StochasticRoundedSteps for plan in tiles)


@pytest.mark.parametrize("acc", FORMATS)
@pytest.mark.parametrize("seed", range(3))
def test_adversarial_products_equal_the_general_path(tiles, acc, seed):
    """Zeros of both signs, swamping (tiny products after a large sum), cancellation to
    zero, subnormal sums, sums near and past overflow, inf - inf, NaN: the tiles whose
    sums are not finite go to the general path (Declined)."""
    rng = np.random.default_rng(11 + seed)
    x, y = adversarial_operands(rng, 9, 40, 12, big=60000.0 if acc == "fp16" else 2.0 ** 63,
                                tiny=2.0 ** -20 if acc == "fp16" else 2.0 ** -70)
    with np.errstate(over="ignore"):
        a, b = sf.encode(x, acc), sf.encode(y, acc)
    for sub in (b, b[:, 8:]):
        for call in _calls(a, sub, acc, acc, seed):
            assert_same(call(), general(call))
    assert any(type(plan) is _fast.StochasticRoundedSteps for plan in tiles)


@pytest.mark.parametrize("acc", FORMATS)
def test_sums_near_overflow_and_in_the_subnormal_range(tiles, acc):
    """Running sums that wander about the largest finite value (some overflow, some come
    back) and about the smallest normal (subnormal sums, underflow by either rule)."""
    f = sf.as_format(acc)
    rng = np.random.default_rng(zlib.crc32(acc.encode()))
    top, low = float(f.max_finite), float(f.min_normal)
    for scale in (np.sqrt(top) / 3, np.sqrt(low) * 2):
        x = rng.choice([-1.0, 1.0], (8, 30)) * scale * (1 + rng.random((8, 30)))
        y = scale * (1 + rng.random((30, 16)))
        a, b = sf.encode(x, acc), sf.encode(y, acc)
        for tininess in ("before", "after"):
            for call in _calls(a, b, acc, acc, 5, tininess=tininess):
                assert_same(call(), general(call))
    assert any(type(plan) is _fast.StochasticRoundedSteps for plan in tiles)


def test_products_over_many_tiles_and_threads_equal_the_general_path(monkeypatch):
    """Tiles of 2**14 outputs, chunks of the k axis, the streaming threads, batches."""
    monkeypatch.setattr(reduce_module, "THREADED_WORK", 1)
    rng = np.random.default_rng(3)
    for fmt in FORMATS:
        a = sf.encode(rng.standard_normal((2, 150, 70)), fmt)
        b = sf.encode(rng.standard_normal((70, 130)) * 4, fmt)
        for flags in (True, False):
            call = (lambda: sf.matmul(a, b, fmt, accumulator=fmt, rounding="stochastic", rng=7,
                                      return_flags=flags))
            assert_same(call(), general(call))


@settings(max_examples=40, deadline=None)
@given(acc=st.sampled_from(FORMATS), seed=st.integers(0, 2 ** 32 - 1), k=st.integers(1, 12),
       n=st.integers(2, 6), spread=st.integers(1, 40), reverse=st.booleans())
def test_hypothesis_products_equal_the_general_path(acc, seed, k, n, spread, reverse):
    """Small products of hypothesis-chosen sizes, spreads and rng seeds."""
    rng = np.random.default_rng(seed)
    f = sf.as_format(acc)
    a = random_patterns(rng, f, (3, k), spread=spread, zeros=0.2)
    b = random_patterns(rng, f, (k, n), spread=spread, zeros=0.2)
    call = (lambda: sf.matmul(a, b, acc, accumulator=acc, rounding="stochastic", rng=seed,
                              order="reverse" if reverse else "sequential", return_flags=True))
    with np.errstate(over="ignore"):
        assert_same(call(), general(call))


@pytest.mark.parametrize("fmt", FORMATS)
def test_dask_chunks_take_the_draws_of_their_place_in_the_whole(fmt):
    """A dask product's chunks (their outputs' flat indices in the whole: the draws'
    positions) give the general path's in-memory bits and flags."""
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(zlib.crc32(fmt.encode()))
    a = sf.encode(rng.standard_normal((30, 50)), fmt)
    b = sf.encode(rng.standard_normal((50, 20)), fmt)
    kw = dict(accumulator=fmt, rounding="stochastic", rng=5, return_flags=True)
    ref_bits, ref_flags = general(lambda: sf.matmul(a, b, fmt, **kw))
    bits, flags = sf.matmul(da.from_array(a, chunks=(10, 50)), da.from_array(b, chunks=(50, 6)), fmt, **kw)
    assert np.array_equal(bits.compute(), ref_bits)
    assert flags.count() == ref_flags.count()
    assert np.array_equal(flags.swamped.compute(), ref_flags.swamped)


@pytest.mark.parametrize("fmt, acc", [("fp32", "fp32"), ("fp16", "fp16"), ("bf16", "bf16"), ("fp16", "fp32"),
                                      ("fp32", "fp16"), ("fp32", "bf16")])
@pytest.mark.parametrize("seed", range(2))
def test_sums_and_dot_products_equal_the_general_path(tiles, fmt, acc, seed):
    """sf.sum along every axis (terms 60 binades apart: float64 sums that are not exact,
    terms past the accumulator's range) and sf.vecdot (the paired layout), both orders."""
    rng = np.random.default_rng([seed, zlib.crc32((fmt + acc).encode())])
    f = sf.as_format(fmt)
    x = random_patterns(rng, f, (5, 60, 7), spread=60, zeros=0.1)
    y = random_patterns(rng, f, (5, 60, 7), spread=8, zeros=0.1)
    for order in ("sequential", "reverse"):
        for flags in (True, "swamped", False):
            kw = dict(accumulator=acc, order=order, rounding="stochastic", rng=seed, return_flags=flags)
            calls = [lambda axis=axis: sf.sum(x, fmt, axis=axis, **kw) for axis in (0, 1, 2, None)]
            calls.append(lambda: sf.vecdot(y, y, fmt, axis=1, **kw))
            for call in calls:
                with np.errstate(over="ignore"):
                    assert_same(call(), general(call))
    assert any(type(plan) is _fast.StochasticRoundedSteps for plan in tiles)
