"""quantize's value-grid shortcut (softfloat._fastpaths._value_grid): float64 and float32
input rounded on the target's grid in its own type, every deterministic mode, bit for
bit equal to the general path (``softfloat._fastpaths.ENABLED = False``: encode then
decode on the general path) and to MPFR (gmpy2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import softfloat as sf
from softfloat import _fastpaths
from softfloat._fastpaths import _value_grid

from tests.oracle import round_exact, value_of_float

MODES = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd"]
FORMATS = [sf.fp16, sf.bf16]
DTYPES = [np.float64, np.float32]


def general(x, fmt, mode, **kw):
    """The same quantize with every shortcut off."""
    saved = _fastpaths.ENABLED
    _fastpaths.ENABLED = False
    try:
        return sf.quantize(x, fmt, mode, **kw)
    finally:
        _fastpaths.ENABLED = saved


def takes_grid(fmt, dtype, mode) -> bool:
    return _value_grid.plan(fmt, np.dtype(dtype), sf.RoundingAttributes(rounding=mode)) is not None


def assert_same(x, fmt, mode, **kw):
    before = x.copy()
    got = sf.quantize(x, fmt, mode, **kw)
    want = general(x, fmt, mode, **kw)
    assert got.dtype == want.dtype and got.shape == want.shape
    u = f"u{got.dtype.itemsize}"
    bad = np.flatnonzero(got.reshape(-1).view(u) != want.reshape(-1).view(u))
    assert bad.size == 0, (f"{bad.size} lanes differ, {x.dtype} -> {fmt.name} {mode}: "
                           f"x={float(x.reshape(-1)[bad[0]]).hex()} fast={float(got.reshape(-1)[bad[0]]).hex()} "
                           f"general={float(want.reshape(-1)[bad[0]]).hex()}")
    u_in = f"u{x.dtype.itemsize}"
    assert np.array_equal(x.view(u_in) if x.flags.c_contiguous else np.ascontiguousarray(x).view(u_in),
                          before.view(u_in))  # the input is left as it was


def format_values(fmt):
    """Every finite non-negative value of fmt (fp16: all of them; bf16: all of them too),
    as float64, in increasing order."""
    patterns = np.arange(1 << (fmt.bits - 1), dtype=fmt.storage_dtype)
    values = sf.decode(patterns, fmt)
    return values[np.isfinite(values)]


def boundaries(fmt, dtype):
    """Every value of fmt, every midpoint between neighbours (and the midpoint above
    max_finite: the overflow threshold, and the one below min_subnormal), each with its
    two neighbours in ``dtype``; both signs; plus the edges of the subnormal, overflow and
    special ranges."""
    v = format_values(fmt)
    ulp_top = v[-1] - v[-2]
    edges = np.concatenate([v, [v[-1] + ulp_top, v[-1] + 2 * ulp_top]])
    mids = (edges[:-1] + edges[1:]) / 2  # exact in float64
    info = np.finfo(dtype)
    with np.errstate(all="ignore"):  # bf16's edges past max_finite overflow float32: infinity
        pts = np.concatenate([edges, mids, [v[1] / 2, v[1] / 4, v[1] * 0.75]]).astype(dtype)
        extra = np.array([0.0, info.tiny, info.smallest_subnormal, info.smallest_subnormal * 3, info.max, np.inf,
                          float(fmt.min_normal), float(fmt.min_subnormal), float(fmt.max_finite) * 1e3]
                         ).astype(dtype)
    up, down = np.nextafter(pts, dtype(np.inf)), np.nextafter(pts, dtype(0))
    x = np.concatenate([pts, up, down, extra])
    return np.concatenate([x, -x])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_rounding_boundary_matches_general_path(dtype, fmt, mode):
    x = boundaries(fmt, dtype)
    assert_same(x, fmt, mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_grid_kernel_is_taken_for_float64(fmt, mode):
    assert takes_grid(fmt, np.float64, mode)


@pytest.mark.parametrize("mode", MODES)
def test_grid_kernel_is_taken_for_float32_into_fp16(mode):
    assert takes_grid(sf.fp16, np.float32, mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_float32_near_every_fp16_midpoint(dtype, mode):
    """Each fp16 pattern's value and midpoint with 4 float32 neighbours either side."""
    v = format_values(sf.fp16)
    edges = np.concatenate([v, [65536.0, 65536.0 + 32]])
    pts = np.concatenate([edges, (edges[:-1] + edges[1:]) / 2]).astype(np.float32)
    near = [pts]
    lo = hi = pts
    for _ in range(4):
        lo, hi = np.nextafter(lo, np.float32(0)), np.nextafter(hi, np.float32(np.inf))
        near += [lo, hi]
    x = np.concatenate(near)
    x = np.concatenate([x, -x]).astype(dtype)
    assert_same(x, sf.fp16, mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_specials_and_signed_zero(fmt, mode):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 1e-300, -1e-300, 5e-324, -5e-324,
                  1e300, -1e300, np.finfo(np.float64).max, -np.finfo(np.float64).max])
    nan_payload = (np.array([0x7FF0000000000001, 0xFFF4000000000000, 0x7FFFFFFFFFFFFFFF], dtype=np.uint64)
                   .view(np.float64))
    x = np.concatenate([x, nan_payload])
    assert_same(x, fmt, mode)
    got = sf.quantize(x[:2], fmt, mode)
    assert np.signbit(got).tolist() == [False, True]
    with np.errstate(all="ignore"):
        x32 = x.astype(np.float32)
    assert_same(x32, fmt, mode)


def _random_patterns(n, seed, dtype, fmt):
    """Random patterns concentrated on fmt's range (and some anywhere)."""
    rng = np.random.default_rng(seed)
    if dtype == np.float64:
        bits = rng.integers(0, 1 << 63, n, dtype=np.uint64) | (rng.integers(0, 2, n, dtype=np.uint64) << 63)
        e = rng.integers(1023 + fmt.emin - fmt.precision - 3, 1023 + fmt.emax + 3, n).astype(np.uint64)
        near = (bits & np.uint64(0x800FFFFFFFFFFFFF)) | (e << np.uint64(52))
        low = rng.integers(0, 4, n)  # some with short significands: ties and exact values
        near[low == 0] &= np.uint64(0xFFFFFFFFFF000000)
        out = np.where(rng.random(n) < 0.9, near, bits)
        return out.view(np.float64)
    bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    e = rng.integers(max(1, 127 + fmt.emin - fmt.precision - 3), min(255, 127 + fmt.emax + 3), n).astype(np.uint32)
    near = (bits & np.uint32(0x807FFFFF)) | (e << np.uint32(23))
    return np.where(rng.random(n) < 0.9, near, bits).view(np.float32)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_random_patterns_match_general_path(dtype, fmt, mode):
    x = _random_patterns(1 << 17, 11, dtype, fmt)  # several blocks
    assert_same(x, fmt, mode)
    assert_same(x.reshape(64, -1)[:, ::3], fmt, mode)  # non-contiguous input, copied block by block
    assert_same(x, fmt, mode, workers=2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_mpfr_oracle_on_random_values(dtype, fmt, mode):
    """gmpy2 (MPFR) with the format's precision and exponent range, subnormalize=True, in
    each mode (ties away and odd from MPFR's directed neighbours): tests/oracle.py."""
    x = _random_patterns(300, 5, dtype, fmt)
    x = x[np.isfinite(x)]
    got = sf.quantize(x, fmt, mode)
    for xi, gi in zip(x.tolist(), got.tolist()):
        q, negative = value_of_float(xi)
        want = round_exact(q, negative, fmt, mode)  # a signed Fraction, or a signed infinity
        want_value = float(want.value)
        assert gi == want_value and math.copysign(1.0, gi) == (-1.0 if want.negative else 1.0), (xi, gi, want)


_FINITE_OR_NOT = st.integers(0, (1 << 64) - 1)
_NEAR_RANGE = st.builds(lambda s, e, f: (s << 63) | (e << 52) | f, st.integers(0, 1),
                        st.integers(1023 - 140, 1023 + 130), st.integers(0, (1 << 52) - 1))


@settings(max_examples=200, deadline=None)
@given(patterns=st.lists(_NEAR_RANGE | _FINITE_OR_NOT, min_size=1, max_size=40), mode=st.sampled_from(MODES),
       fmt=st.sampled_from(FORMATS), as_float32=st.booleans(), repeat=st.sampled_from([1, 2500]))
def test_hypothesis_matches_general_path(patterns, mode, fmt, as_float32, repeat):
    x = np.tile(np.array(patterns, dtype=np.uint64).view(np.float64), repeat)
    if as_float32:
        with np.errstate(all="ignore"):
            x = x.astype(np.float32)
    assert_same(x, fmt, mode)


@pytest.mark.parametrize("kw", [dict(saturate=True), dict(subnormals=False), dict(return_flags=True)])
def test_declined_options_take_the_general_path(kw, monkeypatch):
    """Saturation, flush to zero and flags are not the kernel's: quantize gives the
    general path's values (and flags)."""
    calls = []
    real = _value_grid.round_block
    monkeypatch.setattr(_value_grid, "round_block", lambda *a: calls.append(1) or real(*a))
    x = _random_patterns(1 << 12, 3, np.float64, sf.fp16)
    for mode in MODES:
        got, want = sf.quantize(x, sf.fp16, mode, **kw), general(x, sf.fp16, mode, **kw)
        if kw.get("return_flags"):
            got, want = got[0], want[0]
        assert np.array_equal(got.view(np.uint64), want.view(np.uint64))
    assert not calls


def test_switched_off_takes_the_general_path(monkeypatch):
    calls = []
    real = _value_grid.round_block
    monkeypatch.setattr(_value_grid, "round_block", lambda *a: calls.append(1) or real(*a))
    x = _random_patterns(1 << 12, 4, np.float64, sf.fp16)
    sf.quantize(x, sf.fp16)
    assert calls
    calls.clear()
    general(x, sf.fp16, "nearest_even")
    assert not calls


def test_shapes_and_scalars_kept():
    x = _random_patterns(60, 8, np.float64, sf.fp16).reshape(3, 4, 5)
    assert_same(x, sf.fp16, "upward")
    assert_same(np.asfortranarray(x), sf.fp16, "downward")
    assert_same(x[..., 0].T, sf.bf16, "odd")
    assert sf.quantize(np.float64(1.0009), sf.fp16).dtype == np.float64
    assert sf.quantize(np.array(1.0009), sf.fp16).shape == ()


def _normal_only(x, fmt):
    """The lanes of x in [min_normal, max_finite] in magnitude (the normal-range kernel's
    blocks)."""
    a = np.abs(x)
    return x[(a >= fmt.min_normal) & (a <= fmt.max_finite)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_normal_range_blocks_take_the_integer_kernel(dtype, fmt, mode, monkeypatch):
    """Blocks whose every lane is in the normal range: every value, midpoint and their
    neighbours there, and random patterns (some with short significands: ties, exact
    values), both signs; the integer kernel takes them and agrees with the general path."""
    taken = []
    real = _value_grid.round_normal_block
    monkeypatch.setattr(_value_grid, "round_normal_block", lambda *a: taken.append(real(*a)) or taken[-1])
    x = np.concatenate([_normal_only(boundaries(fmt, dtype), fmt),
                        _normal_only(_random_patterns(1 << 17, 21, dtype, fmt), fmt)])
    rng = np.random.default_rng(2)
    x = x[rng.permutation(x.size)]
    assert_same(x, fmt, mode)
    if takes_grid(fmt, dtype, mode):  # (float32 -> bf16 keeps its truncating kernel)
        assert any(taken)
    # one lane out of range anywhere sends its block to the grid kernel, same values
    for bad in (0.0, -0.0, float(fmt.min_normal) / 2, float(fmt.max_finite) * 2, np.inf, np.nan):
        y = x.copy()
        with np.errstate(all="ignore"):  # bf16's 2 * max_finite is float32's infinity
            y[y.size // 3] = bad
        assert_same(y, fmt, mode)


def test_empty_and_byte_swapped_input():
    assert sf.quantize(np.empty(0), sf.fp16).shape == (0,)
    assert sf.quantize(np.empty((0, 3)), sf.bf16, "upward").shape == (0, 3)
    x = _random_patterns(1 << 12, 6, np.float64, sf.fp16)
    assert_same(x.astype(">f8"), sf.fp16, "nearest_away")  # not the kernel's (non-native): the general path


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt, dtype", [(f, d) for f in FORMATS for d in DTYPES
                                        if not (f == sf.bf16 and np.dtype(d) == np.float32)],
                         ids=lambda v: getattr(v, "name", None) or np.dtype(v).name)
def test_grid_kernel_alone_matches_general_path(dtype, fmt, mode):
    """round_block itself on whole-range blocks, where quantize prefers another kernel
    too (float32 -> fp16: the table lookup; bf16 outside the normal range: the
    encoders): every lane it does not leave as NaN equals the general path's."""
    from softfloat._workspace import Workspace

    pl = _value_grid.plan(fmt, np.dtype(dtype), sf.RoundingAttributes(rounding=mode))  # float32 -> bf16: none
    x = np.concatenate([boundaries(fmt, dtype), _random_patterns(1 << 15, 31, dtype, fmt)])
    out = np.empty_like(x)
    with np.errstate(all="ignore"):
        _value_grid.round_block(pl, x, out, Workspace(x.size))
    want = general(x, fmt, mode)
    keep = ~np.isnan(out)
    assert keep.sum() > 0.95 * x.size
    u = f"u{x.itemsize}"
    bad = np.flatnonzero(out[keep].view(u) != want[keep].view(u))
    assert bad.size == 0, float(x[keep][bad[0]]).hex()
    assert (np.isnan(x) | np.isinf(x))[~keep].all()  # left lanes: NaN and infinite inputs only
