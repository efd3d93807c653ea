"""Chains on Python floats (softfloat._fastpaths._chain, driven by
softfloat._array_chains): cumprod, prod, multiply.accumulate / multiply.reduce and the
nan- forms, and cumsum, nancumsum and add.accumulate, equal the general path (every
shortcut off: one vectorised operation per step) bit for bit, with the same sticky
counts (swamped additions included), last flags and traps, in every deterministic mode,
on data that overflows, underflows, meets NaN, infinities, zeros of both signs and ties;
numpy's float16 cumprod (float32 products of halves, exact, rounded once to half) and
the exact reference of the sequential sum (tests/accumulate_oracle.py, prefix by
prefix) as oracles outside the code."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import softfloat as sf
from softfloat import _array_chains, _fastpaths

from tests import accumulate_oracle as ora
from tests.fastpath_checks import answers_of, general

FORMATS = ["fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "fp8_e4m3fnuz", "fp6_e3m2", "fp32", "tf32"]
MODES = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd"]
CALLS = {
    "cumprod": lambda x, axis: np.cumprod(x, axis=axis),
    "prod": lambda x, axis: np.prod(x, axis=axis),
    "multiply.accumulate": lambda x, axis: np.multiply.accumulate(x, axis=0 if axis is None else axis),
    "multiply.reduce": lambda x, axis: np.multiply.reduce(x, axis=axis),
    "nancumprod": lambda x, axis: np.nancumprod(x, axis=axis),
    "nanprod keepdims": lambda x, axis: np.nanprod(x, axis=axis, keepdims=True),
}


def terms(rng, shape, fmt):
    """Patterns of ``fmt`` for long chains: magnitudes near 1 (products that wander over
    the range, to overflow or underflow in long chains), small integers and 1 + k ulp
    (exact products and ties), powers of two far from 1 (overflow, subnormals), and a
    share of random bit patterns (NaNs, infinities, zeros, subnormals)."""
    f = sf.as_format(fmt)
    ulp = 2.0 ** -f.mantissa_bits
    kinds = [rng.uniform(0.5, 2.0, shape) * rng.uniform(0.5, 2.0),
             rng.integers(1, 8, shape).astype(float),
             1 + ulp * rng.integers(1, 4, shape),
             2.0 ** rng.integers(f.emin - 3, f.emax + 1, shape)]
    values = np.choose(rng.choice(len(kinds), shape, p=[0.55, 0.15, 0.15, 0.15]), kinds)
    values *= rng.choice([-1.0, 1.0], shape, p=[0.3, 0.7])
    bits = np.asarray(sf.encode(values, f, saturate=True)).reshape(shape)
    share = rng.choice([0.0, 0.01, 0.1])
    raw = rng.integers(0, 1 << f.bits, size=shape).astype(f.storage_dtype)
    return np.where(rng.random(shape) < share, raw, bits).astype(f.storage_dtype)


def _observed(ctx):
    counts = {name: getattr(ctx.flags, name) for name in (*sf.FLAG_NAMES, "swamped", "values", "operations")}
    last = ctx.flags.last
    if last is not None:
        names = (*sf.FLAG_NAMES, "swamped") if isinstance(last, sf.AccumulationFlags) else sf.FLAG_NAMES
        counts.update({f"last {name}": np.asarray(getattr(last, name)).tolist() for name in names})
        counts["last type"] = [type(getattr(last, name)).__name__ for name in names]
    return counts


def _run(call, x, axis, options, table=None):
    """The bits of ``call`` (a name in ``table``: CALLS by default) and what the context saw."""
    with sf.context(**options) as ctx:
        result = (CALLS if table is None else table)[call](x, axis)
    return result.bits, _observed(ctx)


@st.composite
def chains(draw):
    fmt = draw(st.sampled_from(FORMATS))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    K = draw(st.sampled_from([1, 2, 3, 17, 200]))
    shape, axis = draw(st.sampled_from([((K,), None), ((K,), 0), ((K, 3), 0), ((2, K), 1), ((K, 6), 0),
                                        ((K, 1, 2), 0)]))
    options = {"rounding": draw(st.sampled_from(MODES))}
    options.update(draw(st.sampled_from([{}, {}, {"saturate": True}, {"subnormals": False},
                                         {"tininess": "before"}, {"platform": "arm"}, {"track_flags": False}])))
    call = draw(st.sampled_from(list(CALLS)))
    return sf.Array.from_bits(terms(rng, shape, fmt), fmt), axis, call, options


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chains())
def test_running_products_equal_the_general_path(case):
    x, axis, call, options = case
    fast, slow = _run(call, x, axis, options), general(lambda: _run(call, x, axis, options))
    assert fast[0].dtype == slow[0].dtype and fast[0].shape == slow[0].shape
    np.testing.assert_array_equal(fast[0], slow[0])
    assert fast[1] == slow[1]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("mode", MODES)
def test_long_chains_over_the_whole_range_equal_the_general_path(fmt, mode):
    """Chains long enough to overflow, come back through infinity times zero (NaN), and
    underflow through the subnormals to zero, column by column."""
    rng = np.random.default_rng(zlib.crc32(repr((fmt, mode)).encode()))
    for shape in ((400,), (300, 2)):
        x = sf.Array.from_bits(terms(rng, shape, fmt), fmt)
        for call in ("cumprod", "prod"):
            fast, slow = _run(call, x, 0, {"rounding": mode}), general(lambda: _run(call, x, 0, {"rounding": mode}))
            np.testing.assert_array_equal(fast[0], slow[0])
            assert fast[1] == slow[1]


def _trapped_fast_and_general(call, **context):
    """(the trap's message, or "no trap"; what the context saw) of ``call`` in a fresh
    ``context``, by the shortcuts and by the general path."""
    seen = []
    for run in (lambda f: f(), general):
        with sf.context(**context) as ctx:
            try:
                run(call)
                seen.append(("no trap", _observed(ctx)))
            except sf.FloatingPointSignal as error:
                seen.append((str(error), _observed(ctx)))
    return seen


@pytest.mark.parametrize("trap", ["overflow", "underflow", "inexact", "invalid"])
def test_traps_raise_at_the_step_the_general_path_raises(trap):
    # inexact (1.1 * 1.3), underflow (a subnormal product), overflow (60000 * 60000), invalid (inf * 0)
    x = sf.asarray([1.1, 1.3, 2.0 ** -14, 2.0 ** -10, 2.0 ** 10, 2.0 ** 14, 60000.0, 60000.0, 0.0, 2.0], "fp16")
    seen = _trapped_fast_and_general(lambda: np.cumprod(x), traps=[trap])
    assert seen[0] == seen[1]
    assert seen[0][0] != "no trap"


def test_the_shortcut_ran_and_the_switch_turns_it_off(monkeypatch):
    found = answers_of(monkeypatch, _array_chains, "_scalar_products")
    chain = answers_of(monkeypatch, _fastpaths, "running_products")
    x = sf.asarray(np.linspace(0.9, 1.1, 50), "bf16")
    np.cumprod(x), np.prod(x), np.cumprod(x.reshape(10, 5), axis=0)  # (5 columns: more than FEW)
    assert [f is not None for f in found] == [True, True, False]
    assert [c[2] for c in chain] == [49, 49]  # every step on Python floats
    found.clear()
    general(lambda: np.cumprod(x))
    assert found == [None]
    with sf.context(rounding="stochastic", rng=1):  # the context's generator: the general path's draws
        np.cumprod(x)
    assert found == [None, None]


@pytest.mark.parametrize("scale", [1e-3, 1.0, 30.0])
def test_cumprod_equals_numpys_float16(scale):
    rng = np.random.default_rng(4)
    x = rng.uniform(0.95, 1.05, 300) * rng.choice([-1, 1], 300)
    x[0] *= scale
    x = x.astype(np.float16)
    x[[200, 250, 280]] = [2.0 ** -24, -0.0, np.inf]  # a subnormal, a signed zero, then 0 * inf = NaN
    with np.errstate(all="ignore"):
        expected = np.cumprod(x)
    got = np.cumprod(sf.asarray(x, "fp16"))
    np.testing.assert_array_equal(got.to_numpy().view(np.uint16)[:280], expected.view(np.uint16)[:280])
    assert np.isnan(got.to_numpy()[280:]).all() and np.isnan(expected[280:]).all()


# ---- running sums (cumsum) -----------------------------------------------------------------
SUMS = {
    "cumsum": lambda x, axis: np.cumsum(x, axis=axis),
    "nancumsum": lambda x, axis: np.nancumsum(x, axis=axis),
    "add.accumulate": lambda x, axis: np.add.accumulate(x, axis=0 if axis is None else axis),
}


def addends(rng, shape, fmt):
    """Patterns of ``fmt`` for running sums: normals of one scale and of mixed scales
    (swamping, carries), halves (exact steps, ties, cancellation to zeros of both signs),
    values near the largest (overflow), the smallest normal's neighbourhood (subnormal
    sums), and a share of random bit patterns (NaNs, infinities)."""
    f = sf.as_format(fmt)
    kinds = [rng.standard_normal(shape) * rng.choice([1e-3, 1.0, 100.0]),
             rng.standard_normal(shape) * 2.0 ** rng.integers(-12, 12, shape),
             np.round(rng.standard_normal(shape) * 4) / 2,
             rng.choice([-1.0, 1.0], shape) * float(f.max_finite) * rng.uniform(0.3, 1.0, shape),
             rng.standard_normal(shape) * float(f.min_normal) * 4]
    values = np.choose(rng.choice(len(kinds), shape, p=[0.4, 0.2, 0.2, 0.1, 0.1]), kinds)
    bits = np.asarray(sf.encode(values, f, saturate=True)).reshape(shape)
    share = rng.choice([0.0, 0.01, 0.1])
    raw = rng.integers(0, 1 << f.bits, size=shape, dtype=np.uint64).astype(f.storage_dtype)
    return np.where(rng.random(shape) < share, raw, bits).astype(f.storage_dtype)


@st.composite
def running_sums(draw):
    fmt = draw(st.sampled_from(["fp16", "bf16", "fp8_e4m3", "fp8_e5m2fnuz", "fp32", "fp64"]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    K = draw(st.sampled_from([1, 2, 3, 17, 150]))
    shape, axis = draw(st.sampled_from([((K,), None), ((K, 3), 0), ((2, K), 1), ((K, 6), 0), ((K, 1, 2), 0)]))
    options = {"rounding": draw(st.sampled_from(MODES))}
    options.update(draw(st.sampled_from([{}, {}, {"saturate": True}, {"subnormals": False},
                                         {"tininess": "before"}, {"platform": "arm"}, {"track_flags": False}])))
    accumulators = {"fp32": ["fp32", "fp64"], "fp64": ["fp64"]}.get(fmt, ["fp16", "bf16", "fp32", fmt])
    options["accumulator"] = draw(st.sampled_from([None] + accumulators))
    return sf.Array.from_bits(addends(rng, shape, fmt), fmt), axis, draw(st.sampled_from(list(SUMS))), options


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(running_sums())
def test_running_sums_equal_the_general_path(case):
    x, axis, call, options = case
    fast, slow = _run(call, x, axis, options, SUMS), general(lambda: _run(call, x, axis, options, SUMS))
    assert fast[0].dtype == slow[0].dtype and fast[0].shape == slow[0].shape
    np.testing.assert_array_equal(fast[0], slow[0])
    assert fast[1] == slow[1]


@pytest.mark.parametrize("acc", ["fp16", "bf16", "fp8_e4m3"])
@pytest.mark.parametrize("mode", MODES)
def test_running_sums_equal_the_exact_reference(acc, mode):
    """Each running sum of a chain in ``acc`` (Arrays of that format: the terms and the
    results need no conversion) is the exact reference's sequential sum of its prefix
    (a NaN a NaN: its sign in FP8 E4M3 is the operations' rule, an IEEE addition's, not
    the reductions' result rule)."""
    rng = np.random.default_rng(zlib.crc32(repr((acc, mode)).encode()))
    x = addends(rng, (40,), acc)
    with sf.context(rounding=mode, accumulator=acc):
        got = np.cumsum(sf.Array.from_bits(x, acc))
    nan = np.isnan(got.to_numpy())
    for k in range(40):
        want, _ = ora.ref_sum(x[:k + 1], acc, accumulator=acc, rounding=mode)
        if nan[k]:
            assert np.isnan(sf.decode(want, acc)), k
        else:
            assert got.bits[k] == want, (k, got.bits[k], want)


@pytest.mark.parametrize("trap", ["overflow", "underflow", "inexact", "invalid"])
def test_running_sums_trap_as_the_general_path(trap):
    # inexact (1 + 2**-30 in fp32), underflow (a subnormal fp16 sum in fp16), overflow, invalid (inf - inf)
    x = sf.asarray([1.0, 2.0 ** -13, 2.0 ** -24 - 2.0 ** -13, 60000.0, 60000.0, -np.inf, 2.0], "fp16")
    seen = _trapped_fast_and_general(lambda: np.cumsum(x), traps=[trap], rounding="upward", accumulator="fp16")
    assert seen[0] == seen[1]


def test_running_sums_took_the_scalar_chain(monkeypatch):
    from softfloat import _array_chains as chains_module
    found = answers_of(monkeypatch, chains_module, "_scalar_sums")
    x = sf.asarray(np.linspace(-1, 1, 60), "fp16")
    with sf.context(rounding="upward"):
        np.cumsum(x), np.cumsum(x.reshape(15, 4), axis=0), np.cumsum(x.reshape(12, 5), axis=0)
    np.cumsum(x)  # nearest even in fp32: numpy's own add.accumulate, not asked
    assert [f is not None for f in found] == [True, True, False]
    general(lambda: np.cumsum(x))
    with sf.context(rounding="stochastic", rng=2):
        np.cumsum(x)
    assert [f is not None for f in found] == [True, True, False, False, False]
