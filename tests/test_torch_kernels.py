"""The torch kernels of softfloat.torch (the device route of softfloat.torch.quantize)
against the numpy reference, softfloat.quantize, bit for bit.

Data: every float32 pattern whose top 16 bits are any value and whose low 16 bits come
from a set holding each target's rounding boundaries (the halfway point and its
neighbours for 7-, 10- and 13-bit cuts and every cut above the low half, so every tie
and near-tie of fp16, tf32, bf16 and the FP8/FP6/FP4 formats, in the normal and the
subnormal range); every fp16 and bf16 pattern as float32 input and as float16/bfloat16
tensors; float64 patterns; hypothesis cases.  Every format x every mode x saturate /
flush-to-zero / tininess; the full sweep of every combination is marked slow.
Stochastic rounding: the same seed gives the same bits (one 64-bit key drawn from the
seed's Generator, SplitMix64 at each flat index).  Flags are not computed by the kernels.
"""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

from tests.conftest import import_torch

torch = import_torch()

import softfloat as sf  # noqa: E402
import softfloat.torch as sft  # noqa: E402
from softfloat._random import bits_at as numpy_bits, key_from  # noqa: E402
from softfloat.attributes import RoundingAttributes  # noqa: E402
from softfloat.torch import _kernels  # noqa: E402
from softfloat.torch._kernels_random import bits_at  # noqa: E402

quantize_module = importlib.import_module("softfloat.torch._quantize")

FORMATS = [sf.fp64, sf.fp32, sf.tf32, sf.fp16, sf.bf16, sf.fp8_e4m3, sf.fp8_e5m2, sf.fp8_e4m3fnuz,
           sf.fp8_e5m2fnuz, sf.fp6_e3m2, sf.fp6_e2m3, sf.fp4_e2m1,
           sf.Format(9, 5), sf.Format(11, 30), sf.Format(10, 52, "fn"), sf.Format(8, 23, "fnuz"),
           sf.Format(3, 12, "fn")]
MODES = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "stochastic", "odd"]
#: (saturate, subnormals, tininess)
OPTIONS = [(False, True, "after"), (True, False, "after"), (False, False, "before")]
SEED = 20250

#: low halves: 0 and 1, and for cuts of 13 (fp16, tf32), 14 and 16 (bf16) bits the
#: halfway bit with the patterns just below and above it; cuts above bit 15 take their
#: boundaries from the top half, which is exhaustive
_LOWS = np.array([0, 1, 0x0FFF, 0x1000, 0x1001, 0x1FFF, 0x2000, 0x2001, 0x7FFF, 0x8000, 0x8001, 0xFFFF],
                 dtype=np.uint32)


def _float32_boundaries(step=1):
    top = np.arange(0, 1 << 16, step, dtype=np.uint32) << np.uint32(16)
    return (top[:, None] | _LOWS[None, :]).reshape(-1).view(np.float32)


def _float64_cases(n=6000, seed=3):
    rng = np.random.default_rng(seed)
    patterns = rng.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True)
    with np.errstate(over="ignore", invalid="ignore"):  # float32 signaling NaNs widened
        scaled = rng.standard_normal(n) * 2.0 ** rng.integers(-1080, 1030, n)
        return np.concatenate([patterns.view(np.float64), scaled, _float32_boundaries(389).astype(np.float64),
                               [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -2.0**-1022, 2.0**1023]])


def _bits(a):
    a = np.asarray(a)
    return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def _check(x, fmt, mode, options=OPTIONS[0]):
    """The kernels on torch.from_numpy(x) equal softfloat.quantize(x) bit for bit."""
    saturate, subnormals, tininess = options
    attrs = RoundingAttributes(mode, saturate=saturate, subnormals=subnormals, tininess=tininess)
    key = key_from(np.random.default_rng(SEED)) if mode == "stochastic" else None
    expected = sf.quantize(x, fmt, attributes=attrs, rng=SEED)
    got = _kernels.quantize_tensor(torch.from_numpy(x), fmt, attrs, key).numpy()
    assert got.dtype == expected.dtype
    wrong = np.nonzero(_bits(got) != _bits(expected))[0]
    assert wrong.size == 0, (f"{fmt.name} {mode} {options}: {wrong.size} differ, e.g. x={x[wrong[:3]]} "
                             f"got {got[wrong[:3]]} expected {expected[wrong[:3]]}")


# ---- (a) float32 patterns: exhaustive over the top half, boundaries in the low half --------
@pytest.mark.parametrize("mode", ["nearest_even", "stochastic"])
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_float32_boundaries_every_format(fmt, mode):
    _check(_float32_boundaries(), fmt, mode)


@pytest.mark.parametrize("options", OPTIONS, ids=str)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_float32_boundaries_sampled(fmt, mode, options):
    _check(_float32_boundaries(step=61), fmt, mode, options)


@pytest.mark.slow
@pytest.mark.parametrize("options", OPTIONS, ids=str)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_float32_boundaries_full_sweep(fmt, mode, options):
    _check(_float32_boundaries(), fmt, mode, options)


# ---- (b) every fp16 and bf16 pattern, as float32 and as their own tensors ------------------
_HALVES = np.arange(1 << 16, dtype=np.uint16)


@pytest.mark.parametrize("options", OPTIONS[:2], ids=str)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt", FORMATS[1:12], ids=lambda f: f.name)
def test_every_16_bit_pattern(fmt, mode, options):
    fp16 = _HALVES.view(np.float16).astype(np.float32)
    bf16 = (_HALVES.astype(np.uint32) << np.uint32(16)).view(np.float32)
    _check(np.concatenate([fp16, bf16]), fmt, mode, options)


@pytest.mark.parametrize("mode", ["nearest_even", "toward_zero", "stochastic"])
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_float16_and_bfloat16_tensors(fmt, mode):
    _check(_HALVES.view(np.float16), fmt, mode, OPTIONS[1])
    attrs = RoundingAttributes(mode)
    t = torch.from_numpy(_HALVES.view(np.int16)).view(torch.bfloat16)
    key = key_from(np.random.default_rng(SEED)) if mode == "stochastic" else None
    got = _kernels.quantize_tensor(t, fmt, attrs, key)
    expected = sf.quantize(t.float().numpy(), fmt, attributes=attrs, rng=SEED)
    assert got.dtype == quantize_module.result_dtype(torch.bfloat16, fmt)
    assert np.array_equal(_bits(got.float().numpy() if got.dtype == torch.bfloat16 else got.numpy()),
                          _bits(expected.astype(np.float32) if got.dtype == torch.bfloat16 else expected))


# ---- float64 input ------------------------------------------------------------------------
@pytest.mark.parametrize("options", OPTIONS, ids=str)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_float64_input(fmt, mode, options):
    _check(_float64_cases(), fmt, mode, options)


# ---- (c) hypothesis -------------------------------------------------------------------------
hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies


@hypothesis.settings(max_examples=60, deadline=None)
@hypothesis.given(x=st.lists(st.floats(width=32, allow_nan=True), min_size=1, max_size=40),
                  fmt=st.sampled_from(FORMATS), mode=st.sampled_from(MODES), options=st.sampled_from(OPTIONS))
def test_hypothesis_float32(x, fmt, mode, options):
    _check(np.array(x, dtype=np.float32), fmt, mode, options)


@hypothesis.settings(max_examples=40, deadline=None)
@hypothesis.given(x=st.lists(st.floats(allow_nan=True), min_size=1, max_size=40),
                  fmt=st.sampled_from(FORMATS), mode=st.sampled_from(MODES), options=st.sampled_from(OPTIONS))
def test_hypothesis_float64(x, fmt, mode, options):
    _check(np.array(x, dtype=np.float64), fmt, mode, options)


# ---- the random bits and the seed -> key rule -------------------------------------------------
@pytest.mark.parametrize("key", [0, 1, 2**63, 2**64 - 1, 0x0123456789ABCDEF])
def test_splitmix_bits_are_numpys(key):
    got = bits_at(key, 5000, "cpu").numpy().view(np.uint64)
    assert np.array_equal(got, numpy_bits(np.uint64(key), np.arange(5000)))


@pytest.fixture
def torch_route(monkeypatch):
    """softfloat.torch.quantize on the CPU through the kernels (the route of CUDA tensors)."""
    monkeypatch.setattr(quantize_module, "_CPU_ROUTE", "torch")


@pytest.mark.parametrize("fmt", ["bf16", "e4m3", "fp16", "e2m1"])
def test_quantize_by_the_kernels_takes_numpy_seeds(torch_route, fmt):
    x = _float32_boundaries(step=257).reshape(-1, 12)
    t = torch.from_numpy(x)
    got = sft.quantize(t, fmt, "stochastic", rng=7)
    assert np.array_equal(_bits(got.numpy()), _bits(sf.quantize(x, fmt, "stochastic", rng=7)))
    g, h = np.random.default_rng(9), np.random.default_rng(9)
    twice = [sft.quantize(t, fmt, "stochastic", rng=g).numpy() for _ in range(2)]
    assert all(np.array_equal(_bits(a), _bits(sf.quantize(x, fmt, "stochastic", rng=h))) for a in twice)
    assert not np.array_equal(_bits(twice[0]), _bits(twice[1]))  # the generator moved on


def test_quantize_by_the_kernels_keeps_the_interface(torch_route):
    t = torch.tensor([[0.1, 1e6], [2.0**-30, -7.3]], requires_grad=True)
    q = sft.quantize(t, "fp8_e4m3", saturate=True)
    assert q.requires_grad and q.dtype == torch.float32
    assert np.array_equal(q.detach().numpy(), sf.quantize(t.detach().numpy(), "fp8_e4m3", saturate=True))
    q.sum().backward()
    assert t.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    half = sft.quantize(torch.tensor([0.1, 70000.0], dtype=torch.float64), "fp16", "toward_zero")
    assert half.dtype == torch.float64 and half.tolist() == [0.0999755859375, 65504.0]
    with pytest.raises(TypeError, match="rng.*torch.Generator"):
        sft.quantize(t, "bf16", "stochastic", rng=torch.Generator())


def test_input_untouched_and_any_shape(torch_route):
    x = torch.linspace(-3, 3, 24, dtype=torch.float32).reshape(2, 3, 4).transpose(0, 2)
    before = x.clone()
    got = sft.quantize(x, "e5m2", "stochastic", rng=3)
    assert torch.equal(x, before) and got.shape == x.shape
    expected = sf.quantize(x.numpy(), "e5m2", "stochastic", rng=3)  # C order of the logical shape
    assert np.array_equal(got.numpy(), expected)
    assert sft.quantize(torch.tensor(0.3), "bf16").shape == ()
    assert sft.quantize(torch.empty(0, 3), "bf16").shape == (0, 3)


# ---- the compiled route (softfloat.torch._kernels_compiled) ---------------------------------
compiled_module = importlib.import_module("softfloat.torch._kernels_compiled")


@pytest.fixture
def compiled_route(monkeypatch, torch_route):
    """softfloat.torch.quantize through the compiled route on the CPU, with a compiler the
    test chooses (it records what it compiled)."""
    monkeypatch.setattr(compiled_module, "MODE", "always")
    monkeypatch.setattr(compiled_module, "ENCODE_MODE", "always")
    compiled_module.reset()
    made = []

    def use(compiler):
        def record(fn):
            made.append(fn)
            return compiler(fn)
        monkeypatch.setattr(compiled_module, "_compile", record)
        return made
    yield use
    compiled_module.reset()


_COMPILED_CASES = [("bf16", "nearest_even", torch.float32), ("e4m3", "stochastic", torch.float32),
                   ("fp16", "upward", torch.float16), ("e5m2", "downward", torch.bfloat16),
                   ("e2m1", "odd", torch.float64)]


@pytest.mark.parametrize("fmt, mode, dtype", _COMPILED_CASES)
def test_compiled_route_one_kernel_per_format_and_attributes(compiled_route, fmt, mode, dtype):
    made = compiled_route(lambda fn: fn)  # a fake compiler: the function itself
    x = _float32_boundaries(step=127)
    x = x[np.isfinite(x) & (np.abs(x) < 60000)]  # exact in float16 where needed
    t = torch.from_numpy(sf.quantize(x, "fp16" if dtype == torch.float16 else "bf16")).to(dtype)
    for _ in range(2):
        got = sft.quantize(t, fmt, mode, rng=11)
        expected = sf.quantize(t.double().numpy(), fmt, mode, rng=11)
        assert np.array_equal(_bits(got.double().numpy()), _bits(expected.astype(np.float64)))
    assert len(made) == 1  # compiled once, reused
    sft.quantize(t, fmt, "toward_zero")
    assert len(made) == 2 and made[0].__code__ is not made[1].__code__  # a code object each


@pytest.mark.parametrize("fmt, mode, dtype", _COMPILED_CASES)
def test_compiled_encode_one_kernel_per_format_and_attributes(compiled_route, fmt, mode, dtype):
    # the engine's and scaled_encode_tensor's bit patterns, compiled: encode_tensor's bits
    # (softfloat.encode's), one kernel per (encode, format, attributes, dtype), apart from
    # quantize's
    made = compiled_route(lambda fn: fn)
    x = _float32_boundaries(step=127)
    x = x[np.isfinite(x) & (np.abs(x) < 60000)]
    t = torch.from_numpy(sf.quantize(x, "fp16" if dtype == torch.float16 else "bf16")).to(dtype)
    f, attrs = sf.as_format(fmt), RoundingAttributes(rounding=mode)
    key = 0x1234_5678_9ABC_DEF0 if mode == "stochastic" else None
    for _ in range(2):
        got = compiled_module.encode_fast(t, f, attrs, key)
        assert torch.equal(got, _kernels.encode_tensor(t, f, attrs, key))
    assert len(made) == 1
    if mode != "stochastic":
        want = sf.encode(t.double().numpy(), f, attributes=attrs)
        assert np.array_equal(got.numpy().astype(np.int64), want.astype(np.int64))
    compiled_module.quantize_fast(t, f, attrs, key)
    assert len(made) == 2 and made[0].__code__ is not made[1].__code__


def test_compiled_encode_traces_whole_under_dynamo(compiled_route):
    compiled_route(lambda fn: torch.compile(fn, fullgraph=True, dynamic=False, backend="eager"))
    x = torch.from_numpy(_float32_boundaries(step=509))
    for fmt, mode in (("e4m3", "nearest_even"), ("e5m2", "stochastic"), ("bf16", "toward_zero")):
        f, attrs = sf.as_format(fmt), RoundingAttributes(rounding=mode, saturate=fmt == "e4m3")
        key = 77 if mode == "stochastic" else None
        assert torch.equal(compiled_module.encode_fast(x, f, attrs, key), _kernels.encode_tensor(x, f, attrs, key))
    assert compiled_module.compile_failures() == {}


def test_compiled_route_falls_back_to_eager_once_warned(compiled_route):
    def broken(fn):
        def fail(*args):
            raise RuntimeError("no backend")
        return fail
    compiled_route(broken)
    x = _float32_boundaries(step=251)
    t = torch.from_numpy(x)
    with pytest.warns(RuntimeWarning, match="torch.compile.*eager"):
        got = sft.quantize(t, "e4m3", "stochastic", rng=4)
    assert np.array_equal(_bits(got.numpy()), _bits(sf.quantize(x, "e4m3", "stochastic", rng=4)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once per process, not per kernel
        got = sft.quantize(t, "bf16", "nearest_away")
    assert np.array_equal(_bits(got.numpy()), _bits(sf.quantize(x, "bf16", "nearest_away")))
    failures = compiled_module.compile_failures()
    assert len(failures) == 2 and all("RuntimeError: no backend" in m for m in failures.values())


def test_compiled_route_not_taken_for_cpu_tensors_by_default(monkeypatch, torch_route):
    made = []
    monkeypatch.setattr(compiled_module, "_compile", lambda fn: made.append(fn) or fn)
    assert compiled_module.MODE == "auto" and compiled_module.ENCODE_MODE == "never"
    sft.quantize(torch.randn(100), "bf16")
    assert made == []


@pytest.mark.parametrize("fmt, mode, dtype", _COMPILED_CASES)
def test_compiled_route_traces_whole_under_dynamo(compiled_route, fmt, mode, dtype):
    """Real dynamo tracing (fullgraph: no graph break) with torch's "eager" backend: the
    stochastic key travels as a tensor, lengths share one artifact, same bits as numpy."""
    compiled_route(lambda fn: torch.compile(fn, fullgraph=True, dynamic=False, backend="eager"))
    x = _float32_boundaries(step=509)
    x = sf.quantize(x[np.isfinite(x)], "fp16" if dtype == torch.float16 else "bf16", saturate=True)
    for n in (x.size, 1000, 3):
        t = torch.from_numpy(x[:n]).to(dtype).reshape(-1, 1) if n != 3 else torch.from_numpy(x[:n]).to(dtype)
        got = sft.quantize(t, fmt, mode, rng=5)
        expected = sf.quantize(t.double().numpy(), fmt, mode, rng=5)
        assert got.shape == t.shape
        assert np.array_equal(_bits(got.double().numpy()), _bits(expected.astype(np.float64)))
    assert compiled_module.compile_failures() == {}
