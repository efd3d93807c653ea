"""The lean small-array paths of x + y, x - y, x * y, x / y, np.sqrt and np.maximum/minimum
(fp16 by numpy's float16 cast, bf16/fp32 by float64 values checked in one pass, picks by
numpy's own maximum/minimum, flags that hold only the raised masks) equal the general
path (softfloat._fastpaths.ENABLED False) bit for bit and flag for flag, on every fp16
pattern against edge partners (zeros, subnormals, the normal bounds, max_finite,
infinities, quiet and signalling NaNs), and at the Array level in the context's counts
and traps."""

from __future__ import annotations

import math

import numpy as np
import pytest

import softfloat as sf
from softfloat import _fastpaths
from softfloat.ops import _driver
from tests.fastpath_checks import assert_call_like_general, assert_same, flag_counts, general

#: fp16 edge partners: +-0, smallest and largest subnormal, smallest normal, 1, 1 + ulp,
#: max_finite, inf, a quiet and a signalling NaN (each with both signs)
_EDGES16 = [0x0000, 0x0001, 0x03FF, 0x0400, 0x3C00, 0x3C01, 0x7BFF, 0x7C00, 0x7E00, 0x7C01, 0x1400, 0x5BFF]
EDGES16 = np.array(_EDGES16 + [p | 0x8000 for p in _EDGES16], dtype=np.uint16)
ALL16 = np.arange(1 << 16, dtype=np.uint16)
OPS = {"add": sf.add, "sub": sf.sub, "mul": sf.mul, "div": sf.div}


def _chunks(a, b):
    step = _driver.SMALL_FP16
    for s in range(0, a.size, step):
        yield a[s:s + step], b[s:s + step]


@pytest.mark.parametrize("platform", ["default", "arm"])  # tininess after / before rounding
@pytest.mark.parametrize("op", sorted(OPS))
def test_fp16_every_pattern_against_edges_equals_the_general_path(op, platform):
    """Every fp16 pattern (NaNs, infinities, zeros, subnormals included) against each edge
    partner, both ways round, in chunks the small path takes: bits and per-element flags
    as the general path's (the shortcut declines chunks with non-finite lanes, save a
    finite dividend over an infinite divisor, which it answers)."""
    attrs = sf.RoundingAttributes(platform=platform)
    fn = OPS[op]
    for partner in EDGES16:
        b = np.full(ALL16.size, partner, dtype=np.uint16)
        for x, y in _chunks(ALL16, b):
            for u, v in ((x, y), (y, x)):
                call = (lambda: fn(u, v, "fp16", attributes=attrs, return_flags=True))  # noqa: E731
                assert_same(call(), general(call))


def test_fp16_square_roots_of_every_pattern_equal_the_general_path():
    for platform in ("default", "arm"):
        attrs = sf.RoundingAttributes(platform=platform)
        for x, _ in _chunks(ALL16, ALL16):
            call = (lambda: sf.sqrt(x, "fp16", attributes=attrs, return_flags=True))  # noqa: E731
            assert_same(call(), general(call))


def test_fp16_finite_over_infinite_divisors_takes_the_shortcut(monkeypatch):
    """x / +-inf for every finite x: the exact zero of the signs' exclusive or, no flag,
    by the shortcut (it declined any infinite operand before)."""
    taken = []
    real = _fastpaths.float16_arithmetic
    monkeypatch.setattr(_fastpaths, "float16_arithmetic", lambda *a: taken.append(real(*a)) or taken[-1])
    finite = ALL16[np.isfinite(ALL16.view(np.float16))]
    calls = 0
    for inf in (0x7C00, 0xFC00):
        b = np.full(finite.size, inf, dtype=np.uint16)
        for x, y in _chunks(finite, b):
            call = (lambda: sf.div(x, y, "fp16", return_flags=True))  # noqa: E731
            assert_same(call(), general(call))  # (switched off, the shortcut answers None)
            calls += 1
    assert sum(t is not None for t in taken) == calls


@pytest.mark.parametrize("fmt", ["bf16", "fp32"])
@pytest.mark.parametrize("op", sorted(OPS) + ["sqrt"])
def test_bf16_fp32_specials_equal_the_general_path(fmt, op):
    """Infinities, NaNs (quiet and signalling: their widening is an invalid cast, no
    warning leaks), zero divisors and negative radicands among finite lanes: the one-pass
    check declines them, results and flags the general path's; finite / inf too."""
    f = sf.as_format(fmt)
    if fmt == "fp32":
        specials = np.array([0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0x0, 0x80000000, 0x1, 0x3F800000],
                            dtype=np.uint32)
        base = (np.arange(0, 1 << 16, 97, dtype=np.uint32) << np.uint32(16)) | np.uint32(0x1235)
        base = base[(base & np.uint32(0x7F800000)) != np.uint32(0x7F800000)]  # finite
    else:
        specials = np.array([0x7F80, 0xFF80, 0x7FC0, 0x7F81, 0x0, 0x8000, 0x1, 0x3F80], dtype=np.uint16)
        base = np.arange(0, 1 << 16, 97, dtype=np.uint16)
    base = base.astype(f.storage_dtype)
    for s in specials:
        a = base.copy()
        a[::7] = s
        b = base[::-1].copy()
        for mode in ("nearest_even", "toward_zero", "upward"):
            if op == "sqrt":
                call = (lambda: sf.sqrt(a, fmt, mode, return_flags=True))  # noqa: E731
                assert_same(call(), general(call))
                continue
            for u, v in ((a, b), (b, a), (a, np.full_like(b, s))):
                call = (lambda: OPS[op](u, v, fmt, mode, return_flags=True))  # noqa: E731
                assert_same(call(), general(call))



ARRAY_CALLS = {
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
    "div": lambda x, y: x / y, "sqrt": lambda x, y: np.sqrt(x), "maximum": np.maximum, "minimum": np.minimum,
    "fmax": np.fmax, "fmin": np.fmin,
}


def _patterns(fmt, n, seed):
    """n patterns of ``fmt``: random finite ones with the edges (zeros of both signs,
    subnormals, max_finite, infinities, NaNs) mixed in."""
    f = sf.as_format(fmt)
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(n) * np.exp2(rng.integers(-30, 30, n))
    out = np.asarray(sf.encode(values, fmt), dtype=f.storage_dtype)
    edges = [0, f.sign_mask, 1, f.sign_mask | 1, f.max_finite_bits, f.sign_mask | f.max_finite_bits,
             f.exponent_mask, f.sign_mask | f.exponent_mask, f.exponent_mask | 1, f.exponent_mask | (f.mantissa_mask >> 1) + 1]
    out[rng.integers(0, n, len(edges))] = np.array(edges, dtype=f.storage_dtype)
    return out


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("name", sorted(ARRAY_CALLS))
def test_array_calls_count_and_trap_as_the_general_path(fmt, name):
    """Arrays of 8 elements and 0-d ones, clean (finite, positive where it matters) and
    with edges: results, the context's counts and last flags equal; each trap raises
    the same signal (operation, first index, count) on both paths."""
    fn = ARRAY_CALLS[name]
    for seed in range(6):
        a, b = _patterns(fmt, 8, seed), _patterns(fmt, 8, seed + 100)
        if seed % 2 == 0:  # clean lanes: the lean paths take them
            a, b = np.abs(sf.Array.from_bits(a, fmt)).bits, np.abs(sf.Array.from_bits(b, fmt)).bits
            keep = np.isfinite(sf.decode(a, fmt)) & np.isfinite(sf.decode(b, fmt)) & (sf.decode(b, fmt) != 0)
            a, b = a[keep], b[keep]
        for shape in ((a.size,), ()):
            x = sf.Array.from_bits(a.reshape(shape) if shape else a[:1].reshape(()), fmt)
            y = sf.Array.from_bits(b.reshape(shape) if shape else b[:1].reshape(()), fmt)
            with sf.context() as fast_ctx:
                fast = fn(x, y)
                fast_last = fast_ctx.flags.last
            with sf.context() as slow_ctx:
                slow = general(lambda: fn(x, y))
                slow_last = slow_ctx.flags.last
            assert np.array_equal(fast.bits, slow.bits) and fast.shape == slow.shape
            assert flag_counts(fast_ctx) == flag_counts(slow_ctx)
            for flag in sf.FLAG_NAMES:
                assert np.array_equal(getattr(fast_last, flag), getattr(slow_last, flag)), flag
            for flag in sf.FLAG_NAMES:
                outcomes = []
                for run in (lambda: fn(x, y), lambda: general(lambda: fn(x, y))):
                    with sf.context(traps={flag}):
                        try:
                            run()
                            outcomes.append(None)
                        except sf.FloatingPointSignal as signal:
                            outcomes.append((type(signal), signal.operation, signal.index, signal.count))
                assert outcomes[0] == outcomes[1], flag


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
@pytest.mark.parametrize("ufunc", [np.maximum, np.minimum, np.fmax, np.fmin])
def test_picks_of_every_pattern_against_edges_equal_the_general_path(fmt, ufunc):
    """maximum/minimum/fmax/fmin by numpy's own pick: every pattern against each edge
    partner (+-0 against +-0 included: IEEE's zero, not numpy's first operand), both
    ways round, NaN-free chunks and chunks with NaNs, flags too."""
    f = sf.as_format(fmt)
    edges = EDGES16 if fmt == "fp16" else np.array([0x0000, 0x8000, 0x0001, 0x8001, 0x7F7F, 0xFF7F, 0x7F80,
                                                     0xFF80, 0x7FC0, 0x7F81, 0x3F80, 0xBF80], dtype=np.uint16)
    values = sf.decode(ALL16, f)
    numbers = ALL16[~np.isnan(values)]
    for patterns in (ALL16, numbers):
        x = sf.Array.from_bits(patterns, fmt)
        for partner in edges:
            y = sf.Array.from_bits(np.full(patterns.size, partner, dtype=np.uint16), fmt)
            for u, v in ((x, y), (y, x), (x[5], y[7])):
                assert_call_like_general(lambda: ufunc(u, v))


def test_picks_of_signed_zeros_are_ieees():
    """numpy's maximum(+0, -0) is its first operand; IEEE maximum is +0, minimum -0."""
    z = sf.asarray([0.0, -0.0, 0.0, -0.0], "fp16")
    w = sf.asarray([-0.0, 0.0, 0.0, -0.0], "fp16")
    assert np.maximum(z, w).bits.tolist() == [0x0000, 0x0000, 0x0000, 0x8000]
    assert np.minimum(z, w).bits.tolist() == [0x8000, 0x8000, 0x0000, 0x8000]
    for fmt, neg in (("fp32", 0x80000000), ("bf16", 0x8000)):
        z, w = sf.asarray([0.0, -0.0], fmt), sf.asarray([-0.0, 0.0], fmt)
        assert np.maximum(z, w).bits.tolist() == [0, 0]
        assert np.minimum(z, w).bits.tolist() == [neg, neg]


def test_flags_holding_only_the_raised_masks_read_and_count_as_full_ones():
    """softfloat._flagmasks.flags_of_masks: the masks not given read as clear arrays of the
    shape, and StickyFlags counts the same as for the full Flags."""
    from softfloat._flagmasks import flags_of_masks
    inexact = np.array([[True, False, True]])
    lean = flags_of_masks((1, 3), {"inexact": inexact, "overflow": None})
    full = sf.Flags(*(np.zeros((1, 3), bool) for _ in range(4)), inexact)
    for name in sf.FLAG_NAMES:
        assert np.array_equal(getattr(lean, name), getattr(full, name)) and getattr(lean, name).shape == (1, 3)
    from softfloat._context import StickyFlags
    a, b = StickyFlags(), StickyFlags()
    a.record(flags_of_masks((1, 3), {"inexact": inexact}))
    b.record(full)
    assert (a.inexact, a.values, a.operations, a.overflow) == (b.inexact, b.values, b.operations, b.overflow) == (
        2, 3, 1, 0)
    assert lean.raised() == ("inexact",) and lean.count()["inexact"] == 2


@pytest.mark.parametrize("n", [1, 8192, 8193, 16384])
def test_sum_of_squares_in_one_thread_pieces(n):
    """The small lanes' one-pass check (a sum of squares, in BLAS dot products of at most
    8192 elements so OpenBLAS keeps to the calling thread): 0 exactly for zeros, NaN
    for a NaN or an infinity in any piece, the sum of the squares otherwise."""
    from softfloat._fastpaths._bfloat16 import sum_of_squares
    assert sum_of_squares(np.zeros(n)) == 0.0
    for pos in {0, n // 2, n - 1}:
        for bad in (np.nan, np.inf, -np.inf):
            d = np.zeros(n)
            d[pos] = bad
            with np.errstate(invalid="ignore"):
                t = d - d
            assert np.isnan(sum_of_squares(t)), (pos, bad)
            assert not sum_of_squares(d) < np.inf, (pos, bad)
    d = np.random.default_rng(n).standard_normal(n)
    assert sum_of_squares(d) == pytest.approx(math.fsum(d * d), rel=1e-12)


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp32"])
def test_a_non_finite_lane_in_the_last_piece_sends_the_block_to_the_general_path(fmt):
    """16,384 lanes (two pieces of the sum of squares): an infinity, a NaN or an overflow in
    the last lane only gives the general path's bits and flags."""
    f = sf.as_format(fmt)
    x = sf.encode(np.linspace(1.0, 2.0, 16384), f)
    for last in (np.inf, np.nan, float(f.max_finite)):
        y = x.copy()
        y[-1] = sf.encode(last, f)
        for ufunc in (sf.add, sf.mul):
            assert_same(ufunc(x, y, f, return_flags=True), general(lambda: ufunc(x, y, f, return_flags=True)))
