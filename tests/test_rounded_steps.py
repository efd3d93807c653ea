"""Running sums of products that are not values of the accumulator (fp32 x fp32 into fp32,
fp16 into an fp16 accumulator, bf16 into bf16, bf16/tf32 below fp32's range):
softfloat.accumulate._odd's
steps without TwoSum -- float64 (or float32) sums rounded again -- and the columns it runs
again exactly, against the step-by-step TwoSum version, the general path and the exact
reference (MPFR, tests/accumulate_oracle.py); and the large products that take them
(softfloat.accumulate._fast.RoundedSteps)."""

from __future__ import annotations

import numpy as np
import pytest

import softfloat as sf
from softfloat.accumulate import _fast, _odd
import softfloat.accumulate.reduce as reduce_module
from softfloat.rounding import Rounding, Tininess

from tests.accumulate_checks import adversarial_operands, check, random_patterns
from tests.fastpath_checks import answers_of, assert_same, general

KINDS = ["normal", "integers", "tiny", "powers", "sparse", "ties", "overflow-and-back"]
MODES = [Rounding.NEAREST_EVEN, Rounding.NEAREST_AWAY, Rounding.TOWARD_ZERO, Rounding.UPWARD, Rounding.DOWNWARD]


def _terms(kind: str, rng, K: int, n: int, fmt):
    """(K, n) exact float64 products of two values of the accumulator's format, aimed at
    what the fast steps must tell apart: sums that float64 rounds onto a midpoint, exact
    ties, sums on the subnormal grid, zeros, an overflow that later terms bring back."""
    fp32 = fmt.emax > 15
    x, y = rng.standard_normal((K, n)), rng.standard_normal((K, n))
    if kind == "integers":
        x, y = rng.integers(-40, 40, (K, n)) * 1.0, rng.integers(-9000, 9000, (K, n)) * 1.0
    elif kind == "tiny":
        x, y = x * 2.0 ** (-75 if fp32 else -12), y * 2.0 ** (-75 if fp32 else -12)
    elif kind == "powers":
        x, y = 2.0 ** rng.integers(-20, 20, (K, n)) * rng.choice([-1, 1], (K, n)), 2.0 ** rng.integers(-20, 20, (K, n))
    elif kind == "sparse":
        x = x * (rng.random((K, n)) < 0.2)
    elif kind == "ties":
        x, y = np.ones((K, n)), np.ones((K, n))
        halves = [2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -12, 2.0 ** -30] if fp32 else [2.0 ** -11, 2.0 ** -12, 2.0 ** -20]
        x[1:] = rng.choice(halves, (K - 1, n)) * rng.choice([1, -1, 1 + 2.0 ** -8], (K - 1, n))
    elif kind == "overflow-and-back":  # 255 * 255, then +-510 (past fp16's threshold), then back
        x, y = np.full((K, n), 255.0), np.full((K, n), 255.0)
        y[1::3], y[2::3] = rng.choice([2.0, -2.0, 0.5], y[1::3].shape), -255.0
        if fp32:
            x, y = x * 2.0 ** 60, y * 2.0 ** 60
    return sf.quantize(x, fmt, saturate=True) * sf.quantize(y, fmt, saturate=True)


def _same_sums(fast, slow):
    assert (fast is None) == (slow is None)
    if fast is None:
        return
    assert np.array_equal(fast[0].view(np.uint8), slow[0].view(np.uint8))
    for got, want in zip(fast[1:], slow[1:]):
        assert (got is None) == (want is None)
        if want is not None:
            assert np.array_equal(got, want)


@pytest.mark.parametrize("acc, wide", [("fp32", np.float64), ("fp16", np.float64), ("fp16", np.float32),
                                       ("bf16", np.float64)])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", [(1, 5), (3, 4), (17, 33), (64, 96)])
@pytest.mark.parametrize("rounding", MODES)
def test_the_fast_steps_equal_twosum_and_rounding_to_odd(acc, wide, kind, shape, rounding):
    """Every column, flag and count as the step-by-step version (TwoSum, rounding to odd:
    the proof in softfloat.accumulate._odd), from the first product or from a start."""
    rng = np.random.default_rng([KINDS.index(kind), *shape])
    grid = _odd.Grid.of(sf.as_format(acc), rounding)
    P = _terms(kind, rng, *shape, grid.fmt)
    for tininess in Tininess:
        tiny = _odd.tiny_below(grid.fmt, tininess, rounding)
        with np.errstate(over="ignore"):
            starts = [None, grid.round(P[0])[::-1].copy()]
        for start in starts:
            for flags in (False, True):
                with np.errstate(all="ignore"):
                    fast = _odd.running_sums(P.astype(wide), grid, flags, tiny, start)
                    slow = _odd._stepwise(P.copy(), grid, flags, tiny, start)
                _same_sums(fast, slow)


def test_a_sum_that_float64_rounds_onto_a_midpoint_is_run_again():
    """1 + (1 + 2896 * 2**-23) * 2**-24 * (1 - 2895 * 2**-23) = 1 + 2**-24 + 4688 * 2**-70:
    float64 rounds it to 1 + 2**-24, the midpoint of 1 and 1 + 2**-23, which numpy's cast
    takes to 1 (even); the sum is above the midpoint, so fp32 nearest is 1 + 2**-23."""
    x, y = np.float32(1 + 2896 * 2.0 ** -23), np.float32(2.0 ** -24 * (1 - 2895 * 2.0 ** -23))
    p = np.float64(x) * np.float64(y)
    assert np.float32(1.0 + p) == 1.0  # twice rounded: the wrong answer
    P = np.array([[1.0, 1.0], [p, 2.0 ** -30]])
    last = _odd.running_sums(P, _odd.Grid.of(sf.fp32), False, (2.0 ** -126,) * 2)[0]
    assert last.tolist() == [np.float32(1 + 2.0 ** -23), 1.0]


def test_a_midpoint_that_swallowed_a_smaller_running_sum_is_inexact():
    """2**-60 + (1 + 2**-12)**2: float64 gives the product, 1 + 2**-11 + 2**-24, a midpoint
    of fp32 (r - s == p holds: s is below half r's ulp); the sum is above it, so nearest
    is 1 + 2**-11 + 2**-23, where the tie would go to the even 1 + 2**-11.  Both halves
    of the exactness test are needed to see that r is not the sum."""
    x = np.float32(1 + 2.0 ** -12)
    P = np.array([[2.0 ** -60], [np.float64(x) * np.float64(x)]])
    assert np.float32(P[0, 0] + P[1, 0]) == np.float32(1 + 2.0 ** -11)  # twice rounded: the tie's even side
    assert _odd.running_sums(P, _odd.Grid.of(sf.fp32), False, (2.0 ** -126,) * 2)[0][0] == np.float32(1 + 2.0 ** -11 + 2.0 ** -23)
    got = sf.vecdot(sf.encode([2.0 ** -30, float(x)], "fp32"), sf.encode([2.0 ** -30, float(x)], "fp32"), "fp32")
    assert float(sf.decode(got, "fp32")) == 1 + 2.0 ** -11 + 2.0 ** -23


def test_an_fp16_sum_past_the_threshold_is_an_overflow_even_if_later_terms_come_back():
    """65025 + 510 = 65535 >= 65520 overflows fp16 (then inf - 65025 = inf); held in
    float32 the sum would round to the finite 65536 and come back to 511."""
    P = np.array([[65025.0], [510.0], [-65025.0]], dtype=np.float32)
    assert _odd.running_sums(P, _odd.Grid.of(sf.fp16), True, (2.0 ** -14,) * 2) is None  # the general path's rules
    bits = sf.vecdot(sf.encode([255.0, 255.0, 255.0], "fp16"), sf.encode([255.0, 2.0, -255.0], "fp16"), "fp16",
                     accumulator="fp16")
    assert int(bits) == 0x7C00


# ---- large products: softfloat.accumulate._fast.RoundedSteps on the tiles -------------------
@pytest.fixture
def tiles(monkeypatch):
    """The tiles for every size (the shortcuts for few outputs held off), and a list of
    the arithmetics their plans gave."""
    monkeypatch.setattr(reduce_module, "_ONE_OUTPUT_TERMS", 0)
    return answers_of(monkeypatch, _fast, "plan")


@pytest.mark.parametrize("fmt, acc", [("fp32", "fp32"), ("fp16", "fp16"), ("tf32", "fp32"), ("bf16", "fp32"),
                                      ("fp8_e5m2", "fp16"), ("bf16", "bf16"), ("fp8_e4m3", "bf16")])
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("rounding", MODES)
def test_tiles_of_rounded_products_equal_the_exact_reference(tiles, fmt, acc, seed, rounding):
    """MPFR for every step, the flags and swamped counts included, in both orders, from c,
    into a narrower out_format (to nearest even: other modes leave that to the general
    path), both tininess rules."""
    rng = np.random.default_rng(seed)
    f = sf.as_format(fmt)
    spread = 8 if fmt in ("fp32", "fp16") else 20 if fmt == "fp8_e5m2" else 100
    a = random_patterns(rng, f, (6, 20), spread=spread, zeros=0.1)
    b = random_patterns(rng, f, (20, 5), spread=spread, zeros=0.1)
    a[:, 0], b[0] = random_patterns(rng, f, 6, spread=6, zeros=0), random_patterns(rng, f, 5, spread=6, zeros=0)
    c = random_patterns(rng, sf.as_format(acc), (6, 5), spread=6)
    narrower = {"fp16": "fp8_e5m2", "fp32": "bf16", "bf16": "fp8_e5m2"}[acc]
    for kw in ({}, {"order": "reverse"}, {"c": c}, {"out_format": narrower}, {"tininess": "before"}):
        check("matmul", a, b, fmt, accumulator=acc, rounding=rounding.value, **kw)
    assert any(type(plan) is _fast.RoundedSteps for plan in tiles)


@pytest.mark.parametrize("fmt, acc", [("fp32", "fp32"), ("fp16", "fp16"), ("bf16", "bf16")])
@pytest.mark.parametrize("rounding", MODES)
def test_adversarial_products_equal_the_general_path(tiles, fmt, acc, rounding):
    """Zeros of both signs, swamping, cancellation, overflow, inf - inf, NaN, subnormal
    sums: the tiles whose sums are not finite go to the general path (Declined)."""
    rng = np.random.default_rng(11)
    x, y = adversarial_operands(rng, 9, 40, 12, big=60000.0 if acc == "fp16" else 2.0 ** 70,
                                tiny=2.0 ** -20 if acc == "fp16" else 2.0 ** -70)
    with np.errstate(over="ignore"):
        a, b = sf.encode(x, fmt), sf.encode(y, fmt)
    for order in ("sequential", "reverse"):
        call = (lambda: sf.matmul(a, b, fmt, accumulator=acc, order=order, rounding=rounding, return_flags=True))
        assert_same(call(), general(call))
        finite = (lambda: sf.matmul(a[:, :], b[:, 8:], fmt, accumulator=acc, order=order, rounding=rounding,
                                    return_flags=True))
        assert_same(finite(), general(finite))
    assert any(type(plan) is _fast.RoundedSteps for plan in tiles)


@pytest.mark.parametrize("fmt, acc", [("fp32", "fp32"), ("fp16", "fp16"), ("bf16", "bf16")])
def test_products_over_many_tiles_and_threads_equal_the_general_path(monkeypatch, fmt, acc):
    """Tiles of 2**14 outputs, chunks of the k axis, the streaming threads; the swamped
    counts alone; batched operands."""
    monkeypatch.setattr(reduce_module, "THREADED_WORK", 1)
    rng = np.random.default_rng(3)
    a = sf.encode(rng.standard_normal((2, 150, 70)), fmt)
    b = sf.encode(rng.standard_normal((70, 130)) * 4, fmt)
    for flags in (True, "swamped", False):
        call = (lambda: sf.matmul(a, b, fmt, accumulator=acc, return_flags=flags))
        assert_same(call(), general(call))


@pytest.mark.parametrize("rounding, underflow", [("upward", [False, True]), ("downward", [True, False]),
                                                 ("toward_zero", [True, True]), ("nearest_even", [False, False])])
def test_tininess_after_rounding_depends_on_the_direction_and_the_sign(tiles, rounding, underflow):
    """m - 2**-151 and its negation, m = 2**-126 the smallest normal fp32: each lies
    between m and the 24-bit number m * (1 - 2**-24) under it, and is inexact on the
    subnormal grid.  Rounded with an unbounded exponent it is m (not tiny) where the
    rounding goes away from zero -- upward for the positive sum, downward for the negative
    one -- and that number under m (tiny, so underflow) towards zero; to nearest, m."""
    m = 2.0 ** -126
    a = np.array([[1.0, 2.0 ** -75]], dtype=np.float32)
    b = np.array([[m, -m], [-(2.0 ** -76), 2.0 ** -76]], dtype=np.float32)
    A, B = a.view(np.uint32), b.view(np.uint32)
    bits, flags = sf.matmul(A, B, "fp32", rounding=rounding, tininess="after", return_flags=True)
    assert flags.underflow[0].tolist() == underflow and flags.inexact.all()
    assert any(type(plan) is _fast.RoundedSteps for plan in tiles)
    check("matmul", A, B, "fp32", rounding=rounding, tininess="after")


@pytest.mark.parametrize("rounding", MODES)
@pytest.mark.parametrize("acc", ["fp16", "bf16", "fp32"])
def test_sums_and_products_past_the_largest_value_overflow_in_every_mode(tiles, rounding, acc):
    """Toward zero an overflow gives the largest finite value, not an infinity: still an
    overflow (and inexact), which the general path raises -- for a first product past
    the range, a running sum that passes it, and one that passes it and comes back."""
    fmt = sf.as_format(acc)
    big = float(fmt.max_finite) ** 0.5 * 1.5  # its square is past the range
    x = np.array([[big, 1.0, 0.5], [1.0, 1.0, 1.0], [big, big, -big]])
    y = np.array([[big, 2.0, 1.0], [1.0, 1.0, 1.0], [0.5, 0.75, 1.0]]).T
    with np.errstate(over="ignore"):
        a, b = sf.encode(x, fmt), sf.encode(y.copy(), fmt)
    check("matmul", a, b, acc, accumulator=acc, rounding=rounding.value)
    call = (lambda: sf.matmul(a, b, acc, accumulator=acc, rounding=rounding, return_flags=True))
    assert_same(call(), general(call))
    assert call()[1].overflow.any()
