"""Long chains into one fp32 or fp16 accumulator in round to nearest even by the cast run
(softfloat._fastpaths._chain._CastRun: one float64 addition and struct's float32/float16
packing a step, the midpoint, tiny, non-finite and overflow checks afterwards in numpy)
against the general path with every shortcut off (bits, flags, swamped counts) and the
exact reference (MPFR, tests/accumulate_oracle.py), both tininess rules."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import softfloat as sf
from softfloat._fastpaths import _chain

from tests.accumulate_checks import check, random_patterns
from tests.fastpath_checks import answers_of, assert_call_like_general, assert_same, general

FP32, FP16 = sf.as_format("fp32"), sf.as_format("fp16")


@pytest.fixture
def runs(monkeypatch):
    """Every run's answer: (s, flag code, swamped, index of the step it stopped before)."""
    return answers_of(monkeypatch, _chain._CastRun, "steps")


def _taken(runs):
    return [answer[3] for answer in runs]


def _operands(seed: int, n: int, fmt, specials: float):
    """Two pattern vectors whose products interact (ties, cancellation, zeros); every
    third seed tiny enough that running sums are subnormal, every fifth large enough to
    overflow, with infinities and NaNs at rate ``specials``."""
    rng = np.random.default_rng(seed)
    center = {0: -70 if fmt is FP32 else -9, 1: 0, 2: 0, 3: 0, 4: 62 if fmt is FP32 else 7}[seed % 5]
    return (random_patterns(rng, fmt, (n,), center=center, specials=specials),
            random_patterns(rng, fmt, (n,), center=center, specials=specials))


@pytest.mark.parametrize("tininess", ["after", "before"])
@pytest.mark.parametrize("fmt, acc", [("fp32", "fp32"), ("fp16", "fp16"), ("fp32", "fp16")])
def test_long_chains_equal_the_general_path_and_mpfr(runs, fmt, acc, tininess):
    f = sf.as_format(fmt)
    opts = {"accumulator": acc, "tininess": tininess}
    for seed in range(15):
        n = (33, 64, 200, 700, 1500)[seed % 5]
        a, b = _operands(zlib.crc32(f"{fmt}{acc}{tininess}{seed}".encode()), n, f, 0.01 if seed % 7 == 6 else 0.0)
        order = "reverse" if seed % 2 else "sequential"
        for call in (lambda: sf.vecdot(a, b, fmt, order=order, return_flags=True, **opts),
                     lambda: sf.sum(a, fmt, order=order, return_flags=True, **opts),
                     lambda: sf.vecdot(a, b, fmt, return_flags="swamped", **opts)):
            assert_same(call(), general(call))
        if seed % 7 != 6:  # (finite terms: the reference's chain)
            check("vecdot", a, b, fmt, order=order, **opts)
            check("sum", a, fmt, **opts)
    assert max(_taken(runs)) > 100  # the runs took long stretches


def test_a_tie_that_float64_makes_cuts_the_run(runs):
    """Step 40 adds -(2**-24 * (1 - 2**-18)) * (1 + 2**-18) to 1 + 2**-23 (every earlier
    term 0): the exact sum 1 + 2**-24 + 2**-60 lies above the midpoint of 1 and
    1 + 2**-23; float64 rounds it to the midpoint, and nearest even from there would give
    1.  The run stops there and the exact step gives 1 + 2**-23 (swamped, as the 19
    steps of 2**-30 after it)."""
    x = np.zeros(60, dtype=np.float32)
    y = np.zeros(60, dtype=np.float32)
    x[0], y[0] = 1 + 2.0**-23, 1.0
    x[40], y[40] = 1 + 2.0**-18, -(2.0**-24) * (1 - 2.0**-18)
    x[41:], y[41:] = 2.0**-30, 1.0
    got, flags = sf.vecdot(x.view(np.uint32), y.view(np.uint32), "fp32", return_flags=True)
    want = np.float32(1 + 2.0**-23)
    for _ in range(19):
        want = np.float32(float(want) + 2.0**-30)  # (exact float64 sums, one rounding each)
    assert np.uint32(got).view(np.float32) == want and flags.inexact and int(flags.swamped) == 20
    assert 40 in _taken(runs)  # the first run stopped at the tie
    assert_same(sf.vecdot(x.view(np.uint32), y.view(np.uint32), "fp32", return_flags=True),
                general(lambda: sf.vecdot(x.view(np.uint32), y.view(np.uint32), "fp32", return_flags=True)))


def test_a_step_float64_rounds_onto_a_value_of_the_accumulator_is_inexact(runs):
    """Exact steps to s = 39 * 2**-80 (the first two products, -(1 + 2**-22) * 2**-34 and
    (1 + 2**-23)**2 * 2**-34, are no fp32 values: every step rounds), then s + 1: float64's
    sum is 1, a value of fp32 the cast keeps, but the step is inexact -- the only
    inexact step, and not swamped."""
    x = np.zeros(50, dtype=np.float32)
    y = np.zeros(50, dtype=np.float32)
    x[0], y[0] = -(1 + 2.0**-22), 2.0**-34
    x[1] = y[1] = (1 + 2.0**-23) * 2.0**-17
    x[2:40] = y[2:40] = 2.0**-40
    x[40] = y[40] = 1.0
    call = (lambda: sf.vecdot(x.view(np.uint32), y.view(np.uint32), "fp32", return_flags=True))
    got, flags = call()
    assert np.uint32(got).view(np.float32) == 1.0
    assert flags.inexact and int(flags.swamped) == 0
    assert_same(call(), general(call))
    assert max(_taken(runs)) == 50


@pytest.mark.parametrize("tininess", ["after", "before"])
def test_tiny_overflowing_and_special_steps_are_the_callers(runs, tininess):
    """fp32 terms into an fp16 accumulator: a cancellation to 2**-20 (below fp16's
    smallest normal) at step 35, an overflow at step 50 (60000 + 60000), then (in two
    more chains) an infinity or a NaN: each step is the caller's, the run goes on after
    the tiny one."""
    values = np.full(80, 0.3)
    values[49], values[50] = 60000.0, 60000.0
    prefix = sf.sum(sf.encode(values[:35], "fp32"), "fp32", accumulator="fp16")
    values[35] = -float(sf.decode(prefix, "fp16")) + 2.0**-20
    for extra in (None, np.inf, np.nan):
        v = values.copy()
        if extra is not None:
            v[20] = extra
        bits = sf.encode(v, "fp32")
        for call in (lambda: sf.sum(bits, "fp32", accumulator="fp16", tininess=tininess, return_flags=True),
                     lambda: sf.sum(bits[:50], "fp32", accumulator="fp16", tininess=tininess, return_flags=True)):
            assert_same(call(), general(call))
        if extra is None:  # (the first 50 steps, finite: the reference's chain)
            check("sum", bits[:50], "fp32", accumulator="fp16", tininess=tininess)
            got, flags = sf.sum(bits, "fp32", accumulator="fp16", tininess=tininess, return_flags=True)
            assert flags.overflow and flags.inexact
    taken = _taken(runs)
    assert 35 in taken and 50 in taken  # cut at the tiny sum and at the overflow


def test_the_trace_lists_each_step_as_the_exact_steps_do(monkeypatch):
    """cumsum's chains keep each step's value and flag code: the run's trace equals the
    steps' own (the run held off)."""
    rng = np.random.default_rng(zlib.crc32(b"trace"))
    attrs = sf.RoundingAttributes()
    for acc in (FP32, FP16):
        terms = (rng.standard_normal(300) * rng.choice([1.0, 2.0**-12, 2.0**10], 300)).tolist()
        terms = [float(np.float16(t)) for t in terms]
        values = {}
        fast_trace, slow_trace = [], []
        fast = _chain.sums(1.0, terms, None, acc, attrs, values, fast_trace)
        monkeypatch.setattr(_chain._CastRun, "LEAST", 10**9)
        slow = _chain.sums(1.0, terms, None, acc, attrs, values, slow_trace)
        monkeypatch.undo()
        assert fast[:4] == slow[:4] and fast_trace == slow_trace
        assert [c for _, c in fast_trace].count(0) not in (0, len(terms))  # exact and inexact steps


def test_array_dot_products_and_sums_count_as_the_general_path():
    """x @ y, np.dot and np.cumsum of long fp32 Arrays: bits and the context's counts."""
    for seed in range(4):
        a, b = _operands(zlib.crc32(f"array{seed}".encode()), 500, FP32, 0.0)
        x, y = sf.Array.from_bits(a, "fp32"), sf.Array.from_bits(b, "fp32")
        for fn in (lambda: x @ y, lambda: np.dot(x, y)):
            assert_call_like_general(fn)


@pytest.mark.parametrize("tininess", ["after", "before"])
@pytest.mark.parametrize("fmt, acc", [("fp32", "fp32"), ("fp16", "fp16")])
def test_few_long_outputs_run_column_by_column_as_the_general_path_and_mpfr(monkeypatch, fmt, acc, tininess):
    """A @ v and A @ B with 2-3 outputs of 200-700 rounded steps each (every product no
    value of the accumulator): each column's chain (softfloat.accumulate._few.
    _column_chains) against the general path and the exact reference, tiny and
    overflowing sums, ties, swamping and specials included (a declined step sends the
    whole product to the general path)."""
    from softfloat.accumulate import _few
    taken = answers_of(monkeypatch, _few, "_column_chains")
    f = sf.as_format(fmt)
    for seed in range(10):
        K = (200, 700)[seed % 2]
        rng = np.random.default_rng(zlib.crc32(f"columns{fmt}{acc}{tininess}{seed}".encode()))
        center = {0: -70 if f is FP32 else -9, 4: 62 if f is FP32 else 7}.get(seed % 5, 0)
        specials = 0.002 if seed % 7 == 6 else 0.0
        a = random_patterns(rng, f, (2, K), center=center, specials=specials)
        b = random_patterns(rng, f, (K, 3), center=center, specials=specials)
        opts = {"accumulator": acc, "tininess": tininess}
        for call in (lambda: sf.matmul(a, b[:, 0], fmt, return_flags=True, **opts),
                     lambda: sf.matmul(a, b, fmt, return_flags=True, **opts),
                     lambda: sf.matmul(a, b, fmt, order="reverse", return_flags="swamped", **opts),
                     lambda: sf.vecdot(a, b.T[:2], fmt, return_flags=True, **opts)):  # (paired)
            assert_same(call(), general(call))
        if not specials:
            check("matmul", a, b, fmt, **opts)
    assert any(found is not None for found in taken) and any(found is None for found in taken)


def test_a_chain_of_tiny_sums_tries_runs_rarely(monkeypatch):
    """4,000 fp32 terms into an fp16 accumulator whose sums all stay below fp16's smallest
    normal: every run is cut at once, so the tries back off (later each time) and cast at
    most SPAN terms each -- fewer casts in all than two per term (trying every LEAST steps,
    or casting the whole rest each try, casts many times more); bits and flags as the
    general path's."""
    rng = np.random.default_rng(zlib.crc32(b"tiny chain"))
    values = rng.choice([1.0, -1.0], 4000) * 2.0**-20 * (1 + rng.integers(0, 8, 4000) / 8)
    values[1::2] = -values[0::2] * (1 + 2.0**-18)  # (pairs nearly cancel: the sums stay tiny)
    bits = sf.encode(values, "fp32")
    casts = []
    real = _chain._CAST_SUMS[np.dtype(np.float16)]
    monkeypatch.setitem(_chain._CAST_SUMS, np.dtype(np.float16),
                        lambda s, terms: casts.append(len(terms)) or real(s, terms))
    _chain._RUNS.clear()
    call = (lambda: sf.sum(bits, "fp32", accumulator="fp16", return_flags=True))
    fast = call()
    _chain._RUNS.clear()
    assert casts and sum(casts) < 2 * values.size
    monkeypatch.undo()
    assert_same(fast, general(call))
