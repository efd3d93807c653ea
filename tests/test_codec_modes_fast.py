"""The codec's fast kernels in every deterministic mode, float64 and float32 -> fp16/bf16,
bit for bit and flag for flag against the general path (``_fastpaths.ENABLED = False``).

The inputs sit on the rounding decisions of the kernels' proofs (softfloat._fastpaths:
the upper-word kernel in every deterministic mode, the re-bias and table kernels):

* every fp16 pattern's value, the midpoints and quarter points between neighbours, and
  the float64 values one ulp either side of each midpoint (the lower word's sticky bit
  alone decides those), as float64 and as float32 input -- zeros, subnormals, normals,
  the overflow thresholds of every mode (max_finite, its midpoint with 2**16, beyond),
  infinities and NaNs of both signs;
* every option: both tininess rules, saturate, subnormals=False;
* random float64 bit patterns (whole space, and fp16's exponent range with lower words
  0, 1 or random), and hypothesis on top;
* blocks wholly in the normal range, which the upper-word kernel must take (a spy), and
  blocks over the whole range, which the float32-rounded-to-odd kernel must take (a spy);
  its rounding to odd checked against the general path's fp32 ``odd``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import softfloat as sf
from tests.fastpath_checks import general as general_path
from softfloat import _fastpaths
from softfloat._fastpaths import _odd32, _upper, _value_grid

MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd")
FLAG_NAMES = ("invalid", "divide_by_zero", "overflow", "underflow", "inexact")
OPTIONS = ({}, {"tininess": "before"}, {"saturate": True}, {"subnormals": False},
           {"subnormals": False, "tininess": "before"})


def _general(x, fmt, mode, **kw):
    """The same encode on the general path."""
    return general_path(lambda: sf.encode(x, fmt, mode, **kw))


def assert_same(x, fmt, mode, **options):
    """Fast path (flags wanted and not) == general path, bits and every flag mask; the
    input is left as it was."""
    before = x.copy()
    fast_bits, fast_flags = sf.encode(x, fmt, mode, return_flags=True, **options)
    gen_bits, gen_flags = _general(x, fmt, mode, return_flags=True, **options)
    plain = sf.encode(x, fmt, mode, **options)
    for what, got in (("bits", fast_bits), ("bits without flags", plain)):
        bad = np.flatnonzero(got != gen_bits)
        assert bad.size == 0, _first(what, x, got, gen_bits, bad, fmt, mode, options)
    for name in FLAG_NAMES:
        f, g = np.asarray(getattr(fast_flags, name)), np.asarray(getattr(gen_flags, name))
        bad = np.flatnonzero(f != g)
        assert bad.size == 0, _first(name, x, f, g, bad, fmt, mode, options)
    assert np.array_equal(x.view(np.uint8), before.view(np.uint8))


def _first(what, x, got, want, bad, fmt, mode, options):
    i = bad[0]
    return (f"{what} differ in {bad.size} lanes, {x.dtype} -> {fmt.name} {mode} {options}: "
            f"x={float(x[i]).hex()} fast={got[i]!r} general={want[i]!r}")


def fp16_neighbourhood(dtype):
    """Every fp16 value, the midpoints and quarter points between consecutive patterns
    (both signs; the last finite one with 2**16, the overflow thresholds), and for float64
    each midpoint one ulp either side.  Infinities and NaNs included."""
    pos = np.arange(0x7C00, dtype=np.uint16).view(np.float16).astype(np.float64)
    nxt = np.append(pos[1:], 65536.0)
    mid = (pos + nxt) / 2  # exact in float64 (and in float32: 12 bits)
    quarters = [pos + (nxt - pos) / 4, pos + 3 * (nxt - pos) / 4, mid]
    parts = [pos] + quarters
    if dtype == np.float64:
        parts += [np.nextafter(mid, 0), np.nextafter(mid, np.inf)]
    parts.append(np.array([65504.0, 65519.0, 65520.0, 65521.0, 65536.0, 1e6, 1e300, 2.0**-25, 2.0**-26,
                           3 * 2.0**-26, 2.0**-30, 5e-324, np.inf, np.nan]))
    x = np.concatenate(parts)
    specials = np.arange(0x7C00, 0x8000, 37, dtype=np.uint16).view(np.float16).astype(dtype)  # inf, NaNs
    with np.errstate(over="ignore"):
        x = np.concatenate([x, -x]).astype(dtype)
    return np.concatenate([x, specials, -specials])


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("fmt", [sf.fp16, sf.bf16], ids=lambda f: f.name)
@pytest.mark.parametrize("mode", MODES)
def test_fp16_neighbourhood_every_option(dtype, fmt, mode):
    x = fp16_neighbourhood(dtype)
    for options in OPTIONS:
        assert_same(x, fmt, mode, **options)


def random_patterns(n, seed, fp16_range):
    """Random float64 bit patterns: the whole space, or fp16's exponents (2**-27 to
    2**17) with lower words 0, 1, 2**31 or random."""
    rng = np.random.default_rng(seed)
    u = rng.integers(0, 1 << 64, n, dtype=np.uint64, endpoint=False)
    if fp16_range:
        e = rng.integers(1023 - 27, 1023 + 17, n).astype(np.uint64)
        u = (u & np.uint64(0x800FFFFFFFFFFFFF)) | (e << np.uint64(52))
        lw = rng.choice(np.array([0, 1, 1 << 31, 0xFFFFFFFF], dtype=np.uint64), n)
        pick = rng.random(n) < 0.5
        u[pick] = (u[pick] & np.uint64(0xFFFFFFFF00000000)) | lw[pick]
    return u.view(np.float64)


@pytest.mark.parametrize("fp16_range", [False, True], ids=["whole", "fp16-range"])
@pytest.mark.parametrize("mode", MODES)
def test_random_float64_patterns(mode, fp16_range):
    x = random_patterns(1 << 16, 7, fp16_range)
    for fmt in (sf.fp16, sf.bf16):
        for options in OPTIONS:
            assert_same(x, fmt, mode, **options)


def normal_range(fmt, n, seed, exact_share=0.0):
    """float64 values in fmt's normal range, both signs, some (exact_share) exact values of
    fmt and their float64 neighbours, and the range's edges (min_normal, max_finite and
    max_finite with lower words 1 and all ones, above max_finite but inside the kernel's
    range: upward and downward overflow there)."""
    rng = np.random.default_rng(seed)
    lo, hi = np.log2(fmt.min_normal), np.log2(fmt.max_finite)
    x = np.exp2(rng.uniform(lo, hi, n)) * rng.choice([-1.0, 1.0], n)
    x = np.clip(np.abs(x), fmt.min_normal, fmt.max_finite) * np.sign(x)
    k = int(exact_share * n)
    if k:
        exact = sf.decode(sf.encode(x[:k], fmt, "toward_zero"), fmt)
        x[:k] = exact
        x[k: 2 * k] = np.nextafter(exact, 0)  # exact_share <= 1/3
        x[2 * k: 3 * k] = np.nextafter(exact, np.inf)
    x = np.clip(np.abs(x), fmt.min_normal, np.float64(fmt.max_finite)) * np.sign(x)
    top = np.float64(fmt.max_finite).view(np.uint64)
    edges = np.array([fmt.min_normal, fmt.max_finite, (top + np.uint64(1)).view(np.float64),
                      (top + np.uint64(0xFFFFFFFF)).view(np.float64)])
    x[5: 5 + 11 * 2 * edges.size: 11] = np.concatenate([edges, -edges])
    return x


@pytest.mark.parametrize("exact_share", [0.0, 0.001, 0.3], ids=["random", "few-exact", "many-exact"])
@pytest.mark.parametrize("fmt", [sf.fp16, sf.bf16], ids=lambda f: f.name)
@pytest.mark.parametrize("mode", MODES)
def test_upper_word_kernel_takes_normal_range_blocks_in_every_mode(mode, fmt, exact_share, monkeypatch):
    """A spy: every block of normal-range float64 goes through the upper-word kernel (no
    flags wanted), and its bits are the general path's -- the gathered fix-ups (few lanes
    with the upper word's cut bits 0) and the whole-block ones (many)."""
    x = normal_range(fmt, (1 << 15) + 3, 11, exact_share)
    taken = []
    real = _upper.upper_word
    monkeypatch.setattr(_upper, "upper_word", lambda *a: taken.append(real(*a)) or taken[-1])
    got = sf.encode(x, fmt, mode)
    assert taken and all(taken)
    assert np.array_equal(got, _general(x, fmt, mode))
    assert_same(x, fmt, mode)
    for options in OPTIONS[1:]:
        assert_same(x, fmt, mode, **options)


def test_upper_word_kernel_is_not_taken_when_switched_off(monkeypatch):
    taken = []
    real = _upper.upper_word
    monkeypatch.setattr(_upper, "upper_word", lambda *a: taken.append(real(*a)) or taken[-1])
    monkeypatch.setattr(_fastpaths, "ENABLED", False)
    sf.encode(normal_range(sf.fp16, 4096, 3), sf.fp16, "upward")
    assert not taken


@pytest.mark.parametrize("mode", ["upward", "downward"])
def test_directed_modes_with_saturation_leave_the_upper_word_kernel(mode):
    """Just above max_finite upward/downward overflow; saturated they give max_finite, which
    the kernel's carry would not: applies() leaves those to the re-bias kernel."""
    attrs = sf.RoundingAttributes(rounding=mode, saturate=True)
    assert not _upper.applies(sf.fp16, attrs, 64)
    assert _upper.applies(sf.fp16, sf.RoundingAttributes(rounding=mode), 64)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_nearest_even_equals_numpy_astype_float16(dtype):
    """numpy's cast is IEEE convertFormat to nearest even (NaN payloads aside)."""
    x = fp16_neighbourhood(dtype)
    x = np.concatenate([x[~np.isnan(x)], normal_range(sf.fp16, 1 << 15, 5, 0.3).astype(dtype)])
    if dtype == np.float64:
        x = np.concatenate([x, random_patterns(1 << 15, 9, True)])
    with np.errstate(over="ignore", under="ignore"):
        want = x.astype(np.float16).view(np.uint16)
    got = sf.encode(x, sf.fp16)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [float(v).hex() for v in x[bad[:5]]]


_BITS = st.integers(0, (1 << 64) - 1)
_FP16_RANGE = st.builds(lambda s, e, f, lw: (s << 63) | (e << 52) | (f << 32) | lw, st.integers(0, 1),
                        st.integers(1023 - 27, 1023 + 17), st.integers(0, (1 << 20) - 1),
                        st.sampled_from([0, 1, 1 << 31, 0xFFFFFFFF]) | st.integers(0, (1 << 32) - 1))


@settings(max_examples=150, deadline=None)
@given(patterns=st.lists(_FP16_RANGE | _BITS, min_size=1, max_size=64), mode=st.sampled_from(MODES),
       options=st.sampled_from(OPTIONS), fmt=st.sampled_from([sf.fp16, sf.bf16]),
       as_float32=st.booleans(), repeat=st.sampled_from([1, 3000]))
def test_hypothesis_matches_general_path(patterns, mode, options, fmt, as_float32, repeat):
    """Short arrays (the small path) and the same lanes tiled past a kernel's short-block
    limit."""
    x = np.tile(np.array(patterns, dtype=np.uint64).view(np.float64), repeat)
    if as_float32:
        with np.errstate(over="ignore"):
            x = x.astype(np.float32)
    assert_same(x, fmt, mode, **options)


def test_float32_odd_step_is_the_general_paths_fp32_odd():
    x = np.concatenate([fp16_neighbourhood(np.float64), random_patterns(1 << 16, 3, False),
                        random_patterns(1 << 16, 4, True), np.array([3.4028235677973366e38, 3.5e38, 1e-46, 7e-46,
                                                                     2.0**-149, 2.0**-150, 2.0**-151, 0.0, -0.0])])
    x = x[np.isfinite(x)]
    x = np.concatenate([x, -x])
    before = x.copy()
    y = np.empty(x.size, dtype=np.float32)

    class Scratch:
        @staticmethod
        def get(name, dtype, n):
            return np.empty(n, dtype=dtype)

    assert _odd32.to_float32_odd(x, y, Scratch()) is None
    assert np.array_equal(y.view(np.uint32), _general(x, sf.fp32, "odd"))
    assert np.array_equal(x.view(np.uint64), before.view(np.uint64))


def wide_range(n, seed):
    """fp16's whole range and beyond (a quarter of its smallest subnormal to four times its
    largest finite value), both signs, some exact zeros, infinities and a NaN."""
    rng = np.random.default_rng(seed)
    x = np.exp2(rng.uniform(-26, 18, n)) * rng.choice([-1.0, 1.0], n)
    x[::97] = 0.0
    x[1::389] = -0.0
    x[5:200:50] = [np.inf, -np.inf, np.nan, 65520.0]
    return x


@pytest.mark.parametrize("mode", MODES)
def test_float32_odd_kernel_takes_whole_range_blocks(mode, monkeypatch):
    """A spy: float64 -> fp16 blocks over the whole range (zeros, subnormals, overflow,
    infinities and NaNs left to the general path) go by float32 rounded to odd and its
    table with flags, and without flags by it or (nearest even and the directed modes)
    by the value grid's encode kernel, in every option; bits and flags are the general
    path's."""
    x = wide_range(1 << 19, 21)
    runs, grid_runs = [], []
    real, real_grid = _odd32.to_float32_odd, _value_grid.encode_block
    monkeypatch.setattr(_odd32, "to_float32_odd", lambda *a: runs.append(1) or real(*a))
    monkeypatch.setattr(_value_grid, "encode_block", lambda *a: grid_runs.append(1) or real_grid(*a))
    blocks = x.size // (1 << 18)
    for options in OPTIONS:
        runs.clear()
        grid_runs.clear()
        assert_same(x, sf.fp16, mode, **options)
        assert len(runs) >= blocks and len(runs) + len(grid_runs) >= 2 * blocks  # with flags and without
