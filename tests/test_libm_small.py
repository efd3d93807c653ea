"""The libm ufuncs (np.exp, np.log, ...) on small Arrays: the direct routes of
softfloat._array_libm (``_libm_float16``: fp16 arrays of up to 4096 results by
numpy's float16 -> float64 cast, libm and the codec's short float64 -> fp16 cast;
``_libm_float32``: fp32 arrays whose results are normal or zero, by numpy's casts;
``_libm_one``: one element through the codec's scalar rounding) against the general
route (every fast path switched off: codec.decode, libm, codec.encode's general
encoder), bit for bit and flag for flag, on every fp16 pattern and on fp32 patterns
spread over the whole range; and against numpy's own float64 -> float16 cast (IEEE
convertFormat, an independent rounding) for the bits."""

from __future__ import annotations

import numpy as np
import pytest

import softfloat as sf
from softfloat import _array_elementwise as elementwise
from softfloat import _array_libm
from tests.fastpath_checks import assert_same, general

ALL = np.arange(1 << 16, dtype=np.uint16)
CHUNK = 4096  # the direct route's longest array
#: every 97th pattern and the edges: zeros, infinities, NaNs, the smallest subnormal,
#: the largest finite, 1, 16 (exp overflows), the smallest normal
SINGLES = np.unique(np.concatenate([ALL[::97], np.array(
    [0, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01, 1, 0x8001, 0x7BFF, 0xFBFF, 0x3C00, 0x4C00, 0x0400,
     0x8400, 0xC000], dtype=np.uint16)]))
UNARY = [np.exp, np.log, np.tanh, np.sin, np.expm1, np.log1p, np.cosh]
CONTEXTS = [{}, {"tininess": "before"}, {"track_flags": False}, {"platform": "riscv"}, {"rounding": "upward"}]


def _same(fast, slow):
    """assert_same, with the flags None on both sides where the context tracks none."""
    if slow[1] is None:
        assert fast[1] is None
        fast, slow = fast[0], slow[0]
    assert_same(fast, slow)


def _kernel(ufunc, ctx, *bits):
    return elementwise.UFUNCS[ufunc](sf.fp16, ctx, *bits)


@pytest.mark.parametrize("changes", CONTEXTS)
@pytest.mark.parametrize("ufunc", UNARY)
def test_every_fp16_pattern_equals_the_general_route(ufunc, changes):
    with sf.context(**changes) as ctx:
        for start in range(0, ALL.size, CHUNK):
            bits = ALL[start:start + CHUNK]
            _same(_kernel(ufunc, ctx, bits), general(lambda: _kernel(ufunc, ctx, bits)))


@pytest.mark.parametrize("changes", CONTEXTS)
@pytest.mark.parametrize("ufunc", [np.exp, np.log, np.tanh, np.sin])
def test_single_elements_equal_the_general_route(ufunc, changes):
    """Each pattern alone in four forms.  The 0-d ones (an array, a scalar) against the
    general route on the same input: whether the answer is a scalar or a 0-d array
    depends on the pattern.  The 1-element arrays against the general route's answer
    for every pattern at once (elementwise: the same bits and per-element flags), of the
    types and shapes of its own answer for the first pattern in that form."""
    arrays = (lambda p: np.array([p], dtype=np.uint16), lambda p: np.full((1, 1), p, dtype=np.uint16))
    with sf.context(**changes) as ctx:
        rows, row_flags = general(lambda: _kernel(ufunc, ctx, SINGLES))
        ones = [general(lambda: _kernel(ufunc, ctx, form(SINGLES[0]))) for form in arrays]
        for i, p in enumerate(SINGLES):
            for bits in (np.array(p, dtype=np.uint16), np.uint16(p)):
                _same(_kernel(ufunc, ctx, bits), general(lambda: _kernel(ufunc, ctx, bits)))
            for form, (one, one_flags) in zip(arrays, ones):
                bits, flags = _kernel(ufunc, ctx, form(p))
                assert type(bits) is type(one) and bits.shape == one.shape and bits.dtype == one.dtype
                assert bits.reshape(-1)[0] == rows[i], hex(p)
                if one_flags is None:
                    assert flags is None
                    continue
                assert type(flags) is type(one_flags)
                for (name, a), (_, ref), (_, want) in zip(flags, one_flags, row_flags):
                    assert type(a) is type(ref) and np.shape(a) == np.shape(ref), name
                    assert a.reshape(-1)[0] == want[i], (hex(p), name)


@pytest.mark.parametrize("ufunc", [np.arctan2, np.hypot, np.logaddexp])
def test_two_operands_equal_the_general_route(ufunc):
    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 1 << 16, (2, 3000), dtype=np.uint16)
    with sf.context() as ctx:
        for a, b in ((x, y), (x[:50, None], y[None, :60]), (x[:1], y), (x[:1], y[:1]), (x[:7], y[7])):
            _same(_kernel(ufunc, ctx, a, b), general(lambda: _kernel(ufunc, ctx, a, b)))


@pytest.mark.parametrize("ufunc", [np.exp, np.log, np.tanh, np.sin])
def test_the_bits_are_numpys_float16_cast_of_float64_libm(ufunc):
    """numpy's float64 -> float16 cast rounds to nearest even, as the codec does; NaN
    results are the general route's (the platform's NaN), so compared as NaNs only."""
    with np.errstate(all="ignore"):
        want = ufunc(ALL.view(np.float16).astype(np.float64)).astype(np.float16)
    for start in range(0, ALL.size, CHUNK):
        bits = ALL[start:start + CHUNK]
        with sf.context() as ctx:
            got = sf.decode(_kernel(ufunc, ctx, bits)[0], "fp16").astype(np.float16)
        ref = want[start:start + CHUNK]
        nan = np.isnan(ref)
        assert np.array_equal(np.isnan(got), nan)
        assert np.array_equal(got[~nan].view(np.uint16), ref[~nan].view(np.uint16))


def test_arrays_and_the_context_flags_agree_with_the_general_route():
    x = sf.asarray(np.linspace(-12, 12, 1000), "fp16")
    for ufunc in (np.exp, np.log, np.tanh):
        for a in (x, x[:1], x[3]):
            with sf.context() as fast_ctx:
                fast = ufunc(a)
            with sf.context() as slow_ctx:
                slow = general(lambda: ufunc(a))
            assert type(fast) is type(slow) and fast.format == slow.format
            assert np.array_equal(np.asarray(fast.bits).reshape(-1).view(np.uint8), np.asarray(slow.bits).reshape(-1).view(np.uint8))
            for name in ("invalid", "divide_by_zero", "overflow", "underflow", "inexact"):
                assert np.array_equal(getattr(fast_ctx.flags, name), getattr(slow_ctx.flags, name)), name


def test_the_direct_route_ran_and_the_switch_turns_it_off(monkeypatch):
    found = []
    original = _array_libm._libm_float16
    monkeypatch.setattr(_array_libm, "_libm_float16", lambda *a: found.append(original(*a)) or found[-1])
    x = sf.asarray(np.linspace(0.5, 3, 1000), "fp16")
    np.exp(x)
    assert len(found) == 1 and found[0] is not None
    found.clear()
    general(lambda: np.exp(x))
    assert found == [None]


#: fp32 patterns over the whole range (every exponent, both signs) and the edges
FP32 = np.unique(np.concatenate([
    np.random.default_rng(11).integers(0, 1 << 32, 6000, dtype=np.uint64).astype(np.uint32),
    np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 1, 0x007FFFFF, 0x00800000,
              0x3F800000, 0xBF800000, 0x42B00000, 0x42B20000, 0xC2CE0000, 0x7F7FFFFF], dtype=np.uint32)]))


def _kernel32(ufunc, ctx, *bits):
    return elementwise.UFUNCS[ufunc](sf.fp32, ctx, *bits)


@pytest.mark.parametrize("changes", CONTEXTS)
@pytest.mark.parametrize("ufunc", UNARY)
def test_fp32_arrays_equal_the_general_route(ufunc, changes):
    """Blocks that the direct route takes (values of moderate size) and blocks it
    declines (specials, results that overflow or are tiny), compared alike."""
    moderate = FP32[(FP32 & 0x7F800000) >> 23 < 133]  # |x| < 64: results mostly normal
    moderate = moderate[(moderate & 0x7F800000) >> 23 > 100]
    with sf.context(**changes) as ctx:
        for bits in (moderate, FP32, FP32[:40].reshape(5, 8)):
            _same(_kernel32(ufunc, ctx, bits), general(lambda: _kernel32(ufunc, ctx, bits)))


@pytest.mark.parametrize("ufunc", [np.arctan2, np.hypot, np.logaddexp])
def test_fp32_two_operands_equal_the_general_route(ufunc):
    x, y = FP32[:3000], FP32[-3000:]
    with sf.context() as ctx:
        for a, b in ((x, y), (x[:50, None], y[None, :60]), (x[:1], y), (x[:7], y[7])):
            _same(_kernel32(ufunc, ctx, a, b), general(lambda: _kernel32(ufunc, ctx, a, b)))


def test_fp32_bits_are_numpys_float32_cast_and_the_route_ran(monkeypatch):
    found = []
    original = _array_libm._libm_float32
    monkeypatch.setattr(_array_libm, "_libm_float32", lambda *a: found.append(original(*a)) or found[-1])
    x = np.linspace(-3, 3, 1000)
    a = sf.asarray(x, "fp32")
    with sf.context() as ctx:
        got = np.exp(a)
    assert found and found[0] is not None
    want = np.exp(x.astype(np.float32).astype(np.float64)).astype(np.float32)  # an independent rounding
    assert np.array_equal(got.bits, want.view(np.uint32))
    assert ctx.flags.inexact == 1000 and ctx.flags.underflow == 0 and ctx.flags.overflow == 0
    found.clear()
    general(lambda: np.exp(a))
    assert found == [None]
