"""Scaled quantisation (softfloat.scaled) against references written from the recipes'
definitions: numpy float32 arithmetic and ml_dtypes casts (round to nearest even), MPFR
through tests/oracle.py for every other mode, exact Fractions for the products, and
ml_dtypes' float8_e8m0fnu for the MX scales.  None of them calls softfloat's rounding."""

from __future__ import annotations

import json
import math
import zlib
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

import softfloat as sf
from tests.oracle import pattern_of, round_exact

#: element formats with an ml_dtypes twin (the same encoding)
ML = {
    sf.fp8_e4m3: ml_dtypes.float8_e4m3fn,
    sf.fp8_e5m2: ml_dtypes.float8_e5m2,
    sf.fp6_e3m2: ml_dtypes.float6_e3m2fn,
    sf.fp6_e2m3: ml_dtypes.float6_e2m3fn,
    sf.fp4_e2m1: ml_dtypes.float4_e2m1fn,
}
ELEMENTS = tuple(ML)
MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd")
E8M0 = np.dtype(ml_dtypes.float8_e8m0fnu)


# =====================================================================================
# references
# =====================================================================================
def ml_bits(values32, fmt):
    """float32 values cast by ml_dtypes (round to nearest even) -> bit patterns."""
    return np.asarray(values32, dtype=np.float32).astype(ML[fmt]).view(np.uint8).astype(np.uint64)


def te_scale(amax32, fmt, margin=0):
    """Transformer Engine's fp32 scale, in numpy float32 arithmetic (IEEE, one rounding each)."""
    amax32 = np.float32(amax32)
    if not (np.isfinite(amax32) and amax32 > 0):
        return np.float32(1.0)
    scaled_max = np.float32(fmt.max_finite) * np.float32(2.0**-margin)
    with np.errstate(over="ignore"):
        s = scaled_max / amax32
    return np.float32(np.finfo(np.float32).max) if np.isinf(s) else s


def torchao_like(x32, fmt, scale):
    """Elements as torchao casts: fp32 product, clamp to +-max, cast (ml_dtypes)."""
    y = np.asarray(x32, dtype=np.float32) * np.float32(scale)
    m = np.float32(fmt.max_finite)
    return ml_bits(np.clip(y, -m, m), fmt)


def floor_log2(a: Fraction) -> int:
    e = a.numerator.bit_length() - a.denominator.bit_length()
    return e if Fraction(2) ** e <= a else e - 1


def ocp_exponent(block, fmt):
    """OCP MX v1.0: shared exponent of a block, from exact arithmetic; None for NaN."""
    if not all(math.isfinite(v) for v in block):
        return None
    amax = max((abs(Fraction(float(v))) for v in block), default=Fraction(0))
    if amax == 0:
        return -127
    e = max(floor_log2(amax) - fmt.emax, -127)
    return None if e > 127 else e


def oracle_bits(exact_values, fmt, mode, saturate=True):
    """MPFR's rounding of exact (value, negative) pairs, as bit patterns."""
    out = []
    for q, negative in exact_values:
        r = round_exact(abs(q), negative, fmt, mode, saturate=saturate)
        out.append(pattern_of(r.value, r.negative, fmt))
    return np.array(out, dtype=np.uint64)


def exact_pairs(values):
    return [(abs(Fraction(float(v))), math.copysign(1.0, float(v)) < 0) for v in values]


def grid_ulp(v: Fraction, fmt) -> Fraction:
    """The spacing of fmt's values at magnitude v (subnormal spacing below the normals)."""
    e = fmt.emin if v == 0 else max(floor_log2(abs(v)), fmt.emin)
    return Fraction(2) ** (e - fmt.mantissa_bits)


def data(seed, shape, spread=6, dtype=np.float32):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 2.0 ** rng.integers(-spread, spread + 1, shape)
    return x.astype(dtype)


# =====================================================================================
# per-tensor scaling: Transformer Engine / torchao
# =====================================================================================
@pytest.mark.parametrize("fmt", ELEMENTS, ids=str)
@pytest.mark.parametrize("seed", range(3))
def test_tensor_scaling_matches_the_fp32_recipe(fmt, seed):
    x = data(seed, (7, 33))
    t = sf.scaled_encode(x, fmt)
    scale = te_scale(np.max(np.abs(x)), fmt)
    assert t.scales.dtype == np.float32 and t.scales.shape == ()
    assert t.scales == scale
    np.testing.assert_array_equal(t.bits, torchao_like(x, fmt, scale))
    assert float(t.amax) == float(np.max(np.abs(x)))


@pytest.mark.parametrize("fmt", ELEMENTS, ids=str)
def test_float64_input_is_rounded_to_fp32_first(fmt):
    x = data(4, 200, dtype=np.float64) * (1 + 2.0**-30)  # bits beyond fp32's
    t = sf.scaled_encode(x, fmt)
    x32 = x.astype(np.float32)                              # numpy: round to nearest even
    scale = te_scale(np.max(np.abs(x32)), fmt)
    assert t.scales == scale
    np.testing.assert_array_equal(t.bits, torchao_like(x32, fmt, scale))


def test_torchao_tensorwise_is_amax_epsilon_1e_12():
    x = np.zeros(5, np.float32)
    t = sf.scaled_encode(x, "e4m3", amax_epsilon=1e-12)
    assert t.scales == np.float32(448) / np.float32(1e-12)   # torchao: max / max(amax, EPS)
    assert sf.scaled_encode(x, "e4m3").scales == 1.0          # TE: amax 0 -> scale 1


@pytest.mark.parametrize("margin", [0, 1, 3])
def test_margin_divides_the_target_by_a_power_of_two(margin):
    x = data(5, 100)
    t = sf.scaled_encode(x, "e5m2", margin=margin)
    assert t.scales == te_scale(np.max(np.abs(x)), sf.fp8_e5m2, margin)


@pytest.mark.parametrize("amax, expected", [
    (0.0, 1.0), (np.inf, 1.0), (np.nan, 1.0),
    (1e-40, np.finfo(np.float32).max),           # 448 / 1e-40 overflows fp32: TE clamps
    (3.0, np.float32(448) / np.float32(3)),
])
def test_scale_special_cases_follow_transformer_engine(amax, expected):
    t = sf.scaled_encode(np.ones(3, np.float32), "e4m3", amax=amax)
    assert t.scales == np.float32(expected)


@pytest.mark.parametrize("fmt", ELEMENTS + (sf.bf16, sf.fp16), ids=str)
@pytest.mark.parametrize("multiply", ["fp32", "exact"])
@settings(max_examples=40)
@given(st.lists(st.floats(2.0**-60, 2.0**60, width=32), min_size=1, max_size=20), st.booleans())
def test_the_amax_element_becomes_the_format_max(fmt, multiply, mags, negative):
    x = np.array(mags, np.float32) * np.float32(-1 if negative else 1)
    assume(fmt.max_finite / float(np.max(np.abs(x))) < 2.0**127)   # else the scale is clamped
    t = sf.scaled_encode(x, fmt, multiply=multiply)
    top = sf.decode(t.bits, fmt)[np.argmax(np.abs(x))]
    assert top == (-fmt.max_finite if negative else fmt.max_finite)


@pytest.mark.parametrize("fmt", ELEMENTS, ids=str)
@settings(max_examples=40)
@given(st.lists(st.floats(2.0**-60, 2.0**60, width=32), min_size=1, max_size=20))
def test_power_of_two_scales_keep_the_amax_in_the_top_binade(fmt, mags):
    x = np.array(mags, np.float32)
    t = sf.scaled_encode(x, fmt, scale_rounding="floor")
    s = float(t.scales)
    assert math.frexp(s)[0] == 0.5                                 # a power of two
    assert s <= float(te_scale(np.max(x), fmt))                    # rounded down
    top = float(sf.decode(t.bits, fmt)[np.argmax(x)])
    assert fmt.max_finite / 2 <= top <= fmt.max_finite           # amax * scale > max / 2, rounded
    # with a power-of-two scale, decoding is exactly element / scale
    np.testing.assert_array_equal(sf.scaled_decode(t), sf.decode(t.bits, fmt) / s)


# =====================================================================================
# every rounding mode, against MPFR
# =====================================================================================
@pytest.mark.parametrize("fmt", ELEMENTS, ids=str)
@pytest.mark.parametrize("mode", MODES)
def test_exact_products_round_once_in_every_mode(fmt, mode):
    x = data(11, 60, spread=12, dtype=np.float64) * (1 + 2.0**-40)   # 53-bit inputs
    x[:3] = [0.0, -0.0, 1e-300]
    t = sf.scaled_encode(x, fmt, mode, scaling="rows", multiply="exact")
    scale = Fraction(float(t.scales[0]))
    expected_scale = te_scale(np.float32(np.max(np.abs(x))), fmt)    # amax rounded to fp32
    assert t.scales[0] == expected_scale
    pairs = [(q * scale, neg) for q, neg in exact_pairs(x)]
    np.testing.assert_array_equal(t.bits, oracle_bits(pairs, fmt, mode))


@pytest.mark.parametrize("fmt", ELEMENTS, ids=str)
@pytest.mark.parametrize("mode", MODES)
def test_fp32_products_round_to_fp32_then_into_the_format(fmt, mode):
    x = data(12, 60, spread=12)
    t = sf.scaled_encode(x, fmt, mode)
    y = x * np.float32(t.scales)                                     # numpy float32: IEEE RNE
    np.testing.assert_array_equal(t.bits, oracle_bits(exact_pairs(y), fmt, mode))


def _double_rounding_case(fmt):
    """(x, scale): an fp32 x whose product with the fp32 scale lies just above the
    midpoint between 1 and the next value of ``fmt``, within half an fp32 ulp of it, so
    that the product rounded to fp32 is the midpoint (then even: 1) while the exact
    product rounds up -- the case where skipping the fp32 rounding shows."""
    mid = 1 + Fraction(1, 2 ** (fmt.mantissa_bits + 1))
    for scale in (3, 5, 7, 11, 13):
        x = np.float32(float(mid / scale))
        for _ in range(8):
            exact = Fraction(float(x)) * scale
            if mid < exact <= mid + Fraction(1, 2**24) and Fraction(float(np.float32(x) * np.float32(scale))) == mid:
                return x, float(scale)
            x = np.nextafter(x, np.float32(2))
    raise AssertionError("no case found")


@pytest.mark.parametrize("fmt", ELEMENTS, ids=str)
@pytest.mark.parametrize("scale", [None, 2.0**-100 * 5, 2.0**100 * 7])
def test_fp32_products_of_any_scale_match_numpy_with_and_without_flags(fmt, scale):
    # a scale that is not a power of two (a delayed one: max / amax) makes every product
    # round into fp32: subnormal, overflowing and NaN products included, with or without
    # flags (the cast shortcut without them, the codec with them)
    rng = np.random.default_rng(zlib.crc32(f"{fmt}{scale}".encode()))
    x = (rng.standard_normal(300) * 2.0 ** rng.integers(-149, 128, 300)).astype(np.float32)
    x[:4] = [np.float32(2.0**-126 / 3), np.finfo(np.float32).max, -np.inf, 0.0]
    if scale is None:  # the fp32 rounding decides a tie of the element rounding
        x[4], scale = _double_rounding_case(fmt)
        assert sf.scaled_encode(x[4:5], fmt, scale=scale, multiply="exact").bits[0] == sf.encode(
            1 + 2.0 ** -fmt.mantissa_bits, fmt)  # (the exact product rounds up)
    for nan in (False, True):
        if nan:
            x[7] = np.nan
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            y = x * np.float32(scale)                                 # numpy float32: IEEE RNE
        finite = np.where(np.isinf(y), np.copysign(np.float32(3e38), y), np.nan_to_num(y, nan=0.0))
        expected = oracle_bits(exact_pairs(finite), fmt, "nearest_even")     # satfinite
        if nan:
            expected[7] = sf.encode(np.nan, fmt, saturate=True)             # the NaN lane: encode's
        t = sf.scaled_encode(x, fmt, scale=scale)
        t2, _ = sf.scaled_encode(x, fmt, scale=scale, return_flags=True)
        np.testing.assert_array_equal(t.bits, expected)
        np.testing.assert_array_equal(t2.bits, expected)


def test_integer_input():
    x = np.array([[3, -7, 100], [0, 1, 2]], dtype=np.int64)
    for multiply in ("fp32", "exact"):
        t = sf.scaled_encode(x, "e4m3", scaling="rows", multiply=multiply)
        assert t.scales.ravel().tolist() == [float(np.float32(448) / np.float32(100)), 224.0]
        ref = np.concatenate([torchao_like(x[0].astype(np.float32), sf.fp8_e4m3, t.scales[0, 0]),
                              torchao_like(x[1].astype(np.float32), sf.fp8_e4m3, t.scales[1, 0])])
        np.testing.assert_array_equal(t.bits.ravel(), ref)


@pytest.mark.parametrize("mode", ["nearest_even", "toward_zero", "nearest_away", "odd"])
@settings(max_examples=40)
@given(st.lists(st.floats(-1e6, 1e6, width=32), min_size=1, max_size=40))
def test_sign_symmetry(mode, values):
    x = np.array(values, np.float32)
    a = sf.scaled_encode(x, "e4m3", mode, scaling="mx", block=8)
    b = sf.scaled_encode(-x, "e4m3", mode, scaling="mx", block=8)
    np.testing.assert_array_equal(a.scales, b.scales)
    np.testing.assert_array_equal(a.bits ^ np.uint8(0x80), b.bits)


@settings(max_examples=40)
@given(st.lists(st.floats(-1e6, 1e6, width=32), min_size=1, max_size=40))
def test_upward_of_minus_x_is_minus_downward_of_x(values):
    x = np.array(values, np.float32)
    up = sf.scaled_encode(-x, "e5m2", "upward")
    down = sf.scaled_encode(x, "e5m2", "downward")
    np.testing.assert_array_equal(up.bits, down.bits ^ np.uint8(0x80))


@pytest.mark.parametrize("fmt", ELEMENTS, ids=str)
@settings(max_examples=40)
@given(st.lists(st.floats(-2.0**100, 2.0**100, width=32), min_size=1, max_size=40))
@example([1.0, 3.0, -448.0, 2.0**-20])
def test_decoding_is_within_half_an_ulp_of_the_scaled_grid(fmt, values):
    x = np.array(values, np.float32)
    t = sf.scaled_encode(x, fmt, multiply="exact")
    scale = Fraction(float(t.scales))
    elements = sf.decode(t.bits, fmt)
    for xi, ei in zip(x.tolist(), elements.tolist()):
        target = Fraction(xi) * scale
        if abs(target) <= Fraction(fmt.max_finite):
            assert abs(target - Fraction(ei)) <= grid_ulp(Fraction(ei), fmt) / 2
    # and scaled_decode is element * fp32(1 / scale), exactly
    inv = np.float32(1) / np.float32(t.scales)                     # IEEE division
    expected = [float(Fraction(e) * Fraction(float(inv))) for e in elements.tolist()]
    assert sf.scaled_decode(t).tolist() == expected


# =====================================================================================
# rows and blocks, ragged edges
# =====================================================================================
def tiles_reference(x, fmt, br, bc):
    """Scales and elements tile by tile, with plain Python loops over the tiles."""
    r, c = x.shape
    nr, nc = -(-r // br), -(-c // bc)
    scales = np.zeros((nr, nc), np.float32)
    bits = np.zeros(x.shape, np.uint64)
    for i in range(nr):
        for j in range(nc):
            tile = x[i * br:(i + 1) * br, j * bc:(j + 1) * bc]
            s = te_scale(np.max(np.abs(tile)), fmt)
            scales[i, j] = s
            bits[i * br:(i + 1) * br, j * bc:(j + 1) * bc] = torchao_like(tile, fmt, s)
    return scales, bits


@pytest.mark.parametrize("shape, block", [
    ((5, 300), (1, 128)), ((130, 260), (128, 128)), ((7, 9), (2, 4)), ((3, 3), (8, 8)), ((4, 256), (1, 128)),
])
def test_blocks_match_a_tile_by_tile_reference(shape, block):
    x = data(21, shape, spread=10)
    t = sf.scaled_encode(x, "e4m3", scaling="blocks", block=block)
    scales, bits = tiles_reference(x, sf.fp8_e4m3, *block)
    np.testing.assert_array_equal(t.scales, scales)
    np.testing.assert_array_equal(t.bits, bits)
    assert t.block == block
    np.testing.assert_array_equal(sf.scaled_decode(t), sf.scaled_decode(t.bits, t.scales, "e4m3",
                                                                         scaling="blocks", block=block))


def test_one_dimensional_blocks_and_rows():
    x = data(22, (2, 3, 70), spread=10)
    t = sf.scaled_encode(x, "e5m2", scaling="blocks", block=32)
    assert t.scales.shape == (2, 3, 3) and t.block == (32,)
    r = sf.scaled_encode(x, "e5m2", scaling="rows")
    assert r.scales.shape == (2, 3, 1)
    for i in range(2):
        for j in range(3):
            scales, bits = tiles_reference(x[i, j][None, :], sf.fp8_e5m2, 1, 32)
            np.testing.assert_array_equal(t.scales[i, j], scales[0])
            np.testing.assert_array_equal(t.bits[i, j], bits[0])
            s = te_scale(np.max(np.abs(x[i, j])), sf.fp8_e5m2)
            assert r.scales[i, j, 0] == s
            np.testing.assert_array_equal(r.bits[i, j], torchao_like(x[i, j], sf.fp8_e5m2, s))


def test_power_of_two_block_scales():
    x = data(23, (4, 256), spread=10)
    t = sf.scaled_encode(x, "e4m3", scaling="blocks", block=(1, 128), scale_rounding="floor")
    for (i, j), s in np.ndenumerate(t.scales):
        full = te_scale(np.max(np.abs(x[i, j * 128:(j + 1) * 128])), sf.fp8_e4m3)
        assert s == np.float32(2.0 ** math.floor(math.log2(full)))    # mantissa bits cleared


# =====================================================================================
# OCP MX
# =====================================================================================
@pytest.mark.parametrize("fmt", ELEMENTS, ids=str)
@pytest.mark.parametrize("seed", range(2))
def test_mx_scales_and_elements_follow_the_spec(fmt, seed):
    x = data(seed, (3, 100), spread=20)        # 100 = 3 blocks of 32 and a ragged 4
    x[0, :32] = 0.0                            # a zero block
    x[1, 5] = -0.0
    t = sf.scaled_encode(x, fmt, scaling="mx")
    assert t.scales.shape == (3, 4) and t.scales.dtype == np.uint8 and t.block == (32,)
    for i in range(3):
        for j in range(4):
            block = x[i, 32 * j:32 * (j + 1)]
            e = ocp_exponent(block.tolist(), fmt)
            assert t.scales[i, j] == e + 127
            X = np.float32(2.0**e)
            # the E8M0 pattern is ml_dtypes' float8_e8m0fnu encoding of X, and back
            assert np.array(X).astype(E8M0).view(np.uint8) == t.scales[i, j]
            assert np.array(t.scales[i, j], np.uint8).view(E8M0).astype(np.float64) == 2.0**e
            # elements: x / X (exact in float32 here: X is a power of two) cast by ml_dtypes
            y = block.astype(np.float64) / 2.0**e
            assert np.array_equal(y.astype(np.float32).astype(np.float64), y)
            m = fmt.max_finite
            np.testing.assert_array_equal(t.bits[i, 32 * j:32 * (j + 1)], ml_bits(np.clip(y, -m, m), fmt))
    assert np.all(t.bits[0, :32] == 0)                       # the zero block: +0s, scale 2**-127
    assert t.scales[0, 0] == 0


def test_every_e8m0_pattern_decodes_as_ml_dtypes_float8_e8m0fnu():
    patterns = np.arange(256, dtype=np.uint8)
    one = np.full(256, sf.encode(1.0, "e4m3"), dtype=np.uint8)
    got = sf.scaled_decode(one, patterns, "e4m3", scaling="mx", block=1)
    expected = patterns.view(E8M0).astype(np.float64)
    np.testing.assert_array_equal(got, expected)             # NaN for 0xFF on both sides
    assert np.isnan(got[255]) and got[0] == 2.0**-127 and got[254] == 2.0**127


@pytest.mark.parametrize("mode", MODES)
def test_mx_every_rounding_mode(mode):
    x = data(31, 96, spread=8, dtype=np.float64) * (1 + 2.0**-35)
    t = sf.scaled_encode(x, "e2m3", mode, scaling="mx", multiply="exact")
    pairs = []
    for j in range(3):
        e = ocp_exponent(x[32 * j:32 * (j + 1)].tolist(), sf.fp6_e2m3)
        pairs += [(q / Fraction(2) ** e, n) for q, n in exact_pairs(x[32 * j:32 * (j + 1)])]
    np.testing.assert_array_equal(t.bits, oracle_bits(pairs, sf.fp6_e2m3, mode))


@pytest.mark.parametrize("scale_rounding", ["floor", "ceil"])
@pytest.mark.parametrize("mode", MODES)
def test_mx_fp32_products_that_leave_fp32s_normal_range(mode, scale_rounding):
    # blocks of 8: a large maximum next to values whose scaled products are fp32
    # subnormals (rounded to fp32 first, as the kernels do) or exact
    rng = np.random.default_rng(61)
    x = (rng.standard_normal(64) * 2.0 ** rng.integers(-140, -120, 64)).astype(np.float32)
    x[::8] = np.float32(3e5)
    t = sf.scaled_encode(x, "e4m3", mode, scaling="mx", block=8, scale_rounding=scale_rounding)
    q = np.repeat(np.exp2(127.0 - t.scales.astype(np.float64)), 8).astype(np.float32)
    y = x * q                                                        # numpy float32: IEEE RNE
    assert np.any((y != 0) & (np.abs(y) < np.finfo(np.float32).tiny))   # the hard case occurs
    np.testing.assert_array_equal(t.bits, oracle_bits(exact_pairs(y), sf.fp8_e4m3, mode))


def test_mx_floor_clips_the_block_max_and_ceil_does_not():
    x = np.array([480.0, 1.0, -3.0], np.float32)              # 480 = 1.875 * 2**8 > 448
    floor, f_flags = sf.scaled_encode(x, "e4m3", scaling="mx", return_flags=True)
    ceil, c_flags = sf.scaled_encode(x, "e4m3", scaling="mx", scale_rounding="ceil", return_flags=True)
    assert floor.scales.tolist() == [127] and ceil.scales.tolist() == [128]
    assert sf.scaled_decode(floor).tolist() == [448.0, 1.0, -3.0]   # clipped
    assert sf.scaled_decode(ceil).tolist() == [480.0, 1.0, -3.0]    # one binade coarser, exact here
    assert f_flags.overflow.tolist() == [True, False, False]
    assert not c_flags.overflow.any()


def te_e8m0(amax32, fmt):
    """TE's float_to_e8m0(amax * max_norm_rcp), in numpy float32 (transformer_engine ptx.cuh)."""
    v = np.float32(amax32) * np.float32(1.0 / fmt.max_finite)
    if np.isnan(v):
        return 0xFF
    if np.isinf(v):
        return 0xFE
    u = int(np.array(v, np.float32).view(np.uint32))
    exponent, mantissa = u >> 23, u & 0x7FFFFF
    if mantissa > 0 and exponent != 0xFE and not (exponent == 0 and mantissa <= 0x400000):
        exponent += 1
    return exponent


@pytest.mark.parametrize("fmt", ELEMENTS, ids=str)
@settings(max_examples=40)
@given(st.lists(st.floats(0, 2.0**127, width=32, allow_subnormal=True), min_size=1, max_size=64))
@example([448.0 * 2.0**-120])
@example([448.0])
@example([0.0])
@example([1e-45])
def test_mx_ceil_is_transformer_engines_float_to_e8m0(fmt, mags):
    x = np.array(mags, np.float32)
    t = sf.scaled_encode(x, fmt, scaling="mx", block=64, scale_rounding="ceil")
    assert int(t.scales[0]) == te_e8m0(np.max(x), fmt)
    X = 2.0 ** (int(t.scales[0]) - 127)
    amax = float(np.max(x))
    if 2.0**-126 < amax / fmt.max_finite < 2.0**126:
        assert X * fmt.max_finite >= amax * (1 - 2.0**-22)    # no overflow (to fp32 rounding)
        assert X * fmt.max_finite < 2 * amax * (1 + 2.0**-22)


def test_mx_special_blocks():
    x = np.ones((3, 4), np.float32)
    x[0, 1] = np.inf
    x[1, 2] = np.nan
    floor = sf.scaled_encode(x, "e4m3", scaling="mx", block=4)
    assert floor.scales.ravel().tolist() == [255, 255, 119]   # NaN, NaN, 2**(0 - 8)
    values = sf.scaled_decode(floor)
    assert np.isnan(values[:2]).all() and values[2].tolist() == [1.0] * 4
    ceil = sf.scaled_encode(x, "e4m3", scaling="mx", block=4, scale_rounding="ceil")
    assert ceil.scales[0] == 0xFE                               # TE: inf amax -> 2**127
    assert ceil.scales[1] == te_e8m0(np.float32(1.0), sf.fp8_e4m3)   # NaN ignored, as fmaxf
    v = sf.scaled_decode(ceil)
    assert v[0, 1] == 448.0 * 2.0**127 and np.isnan(v[1, 2])     # inf saturates (satfinite)


def test_mx_exponents_beyond_e8m0_are_nan_or_raised_to_minus_127():
    x = np.array([1e300, 1.0, 1e-300, 1e-310], np.float64)
    t = sf.scaled_encode(x, "e4m3", scaling="mx", block=1, multiply="exact")
    assert t.scales.tolist() == [255, 127 - 8, 0, 0]
    assert sf.decode(t.bits[2:], "e4m3").tolist() == [0.0, 0.0]


# =====================================================================================
# stochastic rounding, flags, inputs
# =====================================================================================
def test_stochastic_rounding_is_reproducible_and_picks_a_neighbour():
    x = data(41, 500, spread=8)
    a = sf.scaled_encode(x, "e4m3", "stochastic", rng=7)
    b = sf.scaled_encode(x, "e4m3", "stochastic", rng=np.random.default_rng(7))
    c = sf.scaled_encode(x, "e4m3", "stochastic", rng=8)
    np.testing.assert_array_equal(a.bits, b.bits)
    assert not np.array_equal(a.bits, c.bits)
    y = x * np.float32(a.scales)
    down = oracle_bits(exact_pairs(y), sf.fp8_e4m3, "toward_zero")
    away = np.array([pattern_of(round_exact(q, n, sf.fp8_e4m3, "upward" if not n else "downward",
                                            saturate=True).value, n, sf.fp8_e4m3)
                     for q, n in exact_pairs(y)], dtype=np.uint64)
    assert np.all((a.bits == down) | (a.bits == away))
    assert np.any((a.bits == away) & (a.bits != down)) and np.any((a.bits == down) & (a.bits != away))


def test_flags_have_the_input_shape():
    x = np.array([[1e-9, 1.0], [np.inf, 3.0]], np.float32)
    t, flags = sf.scaled_encode(x, "e5m2", return_flags=True)
    assert flags.shape == (2, 2)
    assert float(t.scales) == 1.0                              # amax is inf: TE keeps scale 1
    assert flags.overflow.tolist() == [[False, False], [True, False]]
    assert flags.underflow[0, 0] and flags.inexact[0, 0]
    assert sf.decode(t.bits[1, 0], "e5m2") == 57344.0          # satfinite


def test_without_saturation_overflow_follows_encode():
    t = sf.scaled_encode(np.array([1.0, 100.0]), "e5m2", scale=1000.0, saturate=False)
    assert np.isinf(sf.decode(t.bits[1], "e5m2"))
    t = sf.scaled_encode(np.array([1.0, 100.0]), "e4m3", scale=1000.0, saturate=False)
    assert np.isnan(sf.decode(t.bits[1], "e4m3"))


def test_nan_elements_and_zero_tensors():
    x = np.array([np.nan, 2.0, -0.0], np.float32)
    t = sf.scaled_encode(x, "e4m3")
    assert t.scales == 224.0                                  # NaN ignored by amax
    v = sf.scaled_decode(t)
    assert np.isnan(v[0]) and sf.decode(t.bits[1], "e4m3") == 448.0 and v[2] == 0 and np.signbit(v[2])
    z = sf.scaled_encode(np.zeros((2, 3)), "e4m3", scaling="rows")
    assert z.scales.tolist() == [[1.0], [1.0]] and not z.bits.any()


def test_inputs_are_not_modified_and_any_byte_order_works():
    x = data(51, (4, 40)).astype(">f4")
    before = x.copy()
    t = sf.scaled_encode(x, "e4m3", scaling="blocks", block=(2, 16))
    np.testing.assert_array_equal(x, before)
    np.testing.assert_array_equal(t.bits, sf.scaled_encode(x.astype("<f4"), "e4m3", scaling="blocks",
                                                           block=(2, 16)).bits)


def test_given_scales_and_amax():
    x = data(52, (2, 50))
    t = sf.scaled_encode(x, "e4m3", scaling="rows", scale=[[2.0], [0.5]])
    np.testing.assert_array_equal(t.bits[0], torchao_like(x[0], sf.fp8_e4m3, 2.0))
    np.testing.assert_array_equal(t.bits[1], torchao_like(x[1], sf.fp8_e4m3, 0.5))
    d = sf.scaled_encode(x, "e4m3", amax=10.0)
    assert d.scales == np.float32(44.8) and d.amax == np.max(np.abs(x))   # amax: the measured one
    m = sf.scaled_encode(x, "e4m3", scaling="mx", amax=[[1.0, 1.0], [2.0, 2.0]])
    assert m.scales.tolist() == [[119, 119], [120, 120]]


def test_empty_and_scalar_inputs():
    t = sf.scaled_encode(np.zeros((0, 5)), "e4m3", scaling="mx")
    assert t.bits.shape == (0, 5) and t.scales.shape == (0, 1)
    s = sf.scaled_encode(3.0, "e4m3")
    assert sf.decode(s.bits, "e4m3") == 448.0
    inv = np.float32(1) / np.float32(s.scales)
    assert float(sf.scaled_decode(s)) == float(448 * Fraction(float(inv)))


BAD = [
    (dict(scaling="channel"), ValueError, "scaling='channel' is not valid"),
    (dict(scaling=3), TypeError, "scaling must be one of"),
    (dict(scaling="tensor", block=(1, 128)), ValueError, "block applies to"),
    (dict(scaling="blocks", block=(1, 2, 3)), ValueError, "block for scaling='blocks' must be"),
    (dict(scaling="blocks", block=(0, 128)), ValueError, "positive ints"),
    (dict(scaling="blocks", block=1.5), ValueError, "must be"),
    (dict(scaling="mx", block=(1, 32)), ValueError, "block for scaling='mx' must be a positive int"),
    (dict(scaling="tensor", scale_rounding="ceil"), ValueError, "scale_rounding='ceil' is MX's"),
    (dict(scale_rounding="round"), ValueError, "scale_rounding='round' is not valid"),
    (dict(multiply="fp16"), ValueError, "multiply='fp16' is not valid"),
    (dict(saturate=1), TypeError, "saturate must be True or False"),
    (dict(amax=1.0, scale=2.0), ValueError, "not both"),
    (dict(scale=0.0), ValueError, r"scale must lie in \[2\*\*-126"),
    (dict(scale=np.inf), ValueError, "scale must lie in"),
    (dict(scaling="mx", scale=2.0), ValueError, "scale applies to fp32 scales"),
    (dict(scaling="mx", margin=1), ValueError, "margin and amax_epsilon"),
    (dict(amax=-1.0), ValueError, "amax holds a negative value"),
    (dict(amax="big"), TypeError, "amax must be a number"),
    (dict(scaling="rows", amax=[1.0, 2.0, 3.0]), ValueError, "amax must be one number or one amax per scale"),
    (dict(margin=-1), ValueError, "margin must be from 0 to 64"),
    (dict(amax_epsilon=-1e-12), ValueError, "amax_epsilon must be a finite number"),
    (dict(rounding="nearest"), ValueError, "rounding='nearest' is not valid"),
    (dict(rng="seed"), TypeError, "rng must be"),
]


@pytest.mark.parametrize("kwargs, error, match", BAD, ids=[str(b[0]) for b in BAD])
def test_bad_options_get_clear_errors(kwargs, error, match):
    kwargs = dict(kwargs)
    rounding = kwargs.pop("rounding", "nearest_even")
    with pytest.raises(error, match=match):
        sf.scaled_encode(np.ones((2, 4)), "e4m3", rounding, **kwargs)


def test_bad_inputs_get_clear_errors():
    with pytest.raises(ValueError, match="fmt=fp64 is too wide for scaled quantisation"):
        sf.scaled_encode([1.0], "fp64")
    with pytest.raises(ValueError, match=r"block=\(2, 2\) needs x with at least 2 axes"):
        sf.scaled_encode(np.ones(4), "e4m3", scaling="blocks", block=(2, 2))
    with pytest.raises(ValueError, match="scaling='mx' needs x with at least 1 axis"):
        sf.scaled_encode(1.0, "e4m3", scaling="mx")
    with pytest.raises(TypeError, match="x has dtype complex128"):
        sf.scaled_encode(np.ones(2, complex), "e4m3")
    t = sf.scaled_encode(np.ones((2, 64)), "e4m3", scaling="mx")
    with pytest.raises(ValueError, match=r"scales has shape \(2, 1\) but the layout of bits has shape \(2, 2\)"):
        sf.scaled_decode(t.bits, t.scales[:, :1], "e4m3", scaling="mx")
    with pytest.raises(TypeError, match="takes a ScaledTensor alone"):
        sf.scaled_decode(t, t.scales)
    with pytest.raises(TypeError, match="needs bits, scales and fmt"):
        sf.scaled_decode(t.bits)
    with pytest.raises(ValueError, match="scales must lie in"):
        sf.scaled_decode(t.bits[:, :1], -1.0, "e4m3")
    with pytest.raises(ValueError, match="scales holds a value that does not fit"):
        sf.scaled_decode(t.bits, t.scales.astype(np.int64) + 300, "e4m3", scaling="mx")


# =====================================================================================
# DelayedScaling
# =====================================================================================
def test_delayed_scaling_reproduces_te_on_a_scripted_sequence():
    # expected by hand from TE's algorithm: window = the last 3 amaxes, scale = 448 / max,
    # kept when the window's amax is 0 or not finite (NaN ignored by fmaxf)
    ds = sf.DelayedScaling("e4m3", amax_history_len=3)
    assert ds.scale == 1.0
    steps = [(2, 224.0), (8, 56.0), (1, 56.0), (1, 56.0), (1, 448.0), (0, 448.0), (0, 448.0),
             (0, 448.0), (math.inf, 448.0), (math.nan, 448.0), (3, 448.0),
             (3, float(np.float32(448) / np.float32(3)))]
    for amax, scale in steps:
        assert ds.update(amax) == scale, (amax, ds)
    assert ds.scale_inv == float(np.float32(1) / np.float32(ds.scale))
    assert np.isnan(ds.amax_history[0]) and ds.amax_history[1:].tolist() == [3.0, 3.0]


def test_delayed_scaling_most_recent_margin_and_tiny_amax():
    ds = sf.DelayedScaling("e5m2", amax_history_len=1024, amax_compute_algo="most_recent", margin=1)
    assert ds.update(7.0) == float(np.float32(28672) / np.float32(7))
    assert ds.update(1.0) == 28672.0
    assert ds.update(0.0) == 28672.0
    assert ds.update(1e-40) == float(np.finfo(np.float32).max)
    state = ds.state_dict()
    assert json.loads(json.dumps(state))["amax_history"] == [7.0, 1.0, 0.0, float(np.float32(1e-40))]
    assert state["format"] == "fp8_e5m2" and state["margin"] == 1


def test_delayed_scaling_defaults_and_errors():
    ds = sf.DelayedScaling()
    assert (ds.format, ds.amax_history_len, ds.amax_compute_algo, ds.margin) == (sf.fp8_e4m3, 1024, "max", 0)
    for _ in range(1100):
        ds.update(1.0)
    assert ds.amax_history.shape == (1024,)
    with pytest.raises(ValueError, match="amax_compute_algo='mean' is not valid"):
        sf.DelayedScaling(amax_compute_algo="mean")
    with pytest.raises(ValueError, match="amax_history_len must be from 1"):
        sf.DelayedScaling(amax_history_len=0)
    with pytest.raises(ValueError, match=r"amax must be one number, this step's amax \(shape \(\)\); got shape \(2,\)"):
        ds.update([1.0, 2.0])
    assert "DelayedScaling('fp8_e4m3'" in repr(ds)


# =====================================================================================
# attributes=: the element rounding's options as one value
# =====================================================================================
@pytest.mark.parametrize("platform, tininess", [("default", "after"), ("arm", "before")])
@pytest.mark.parametrize("multiply", ["fp32", "exact"])
def test_scaled_encode_takes_attributes_and_the_platforms_tininess(platform, tininess, multiply):
    """Just below e4m3's smallest normal 2**-6, rounding to it: underflow only where
    tininess is judged before rounding (IEEE 754-2019 section 7.5)."""
    q = Fraction(1, 2**6) - Fraction(1, 2**12)
    t, flags = sf.scaled_encode([float(q)], "e4m3", scale=1.0, multiply=multiply, return_flags=True,
                                attributes=sf.RoundingAttributes(platform=platform))
    want = round_exact(q, False, sf.fp8_e4m3, "nearest_even", tininess=tininess, saturate=True)
    assert int(t.bits[0]) == pattern_of(want.value, want.negative, sf.fp8_e4m3)
    assert bool(np.any(flags.underflow)) == want.underflow == (tininess == "before")


def test_scaled_encode_saturates_unless_attributes_say_otherwise():
    """satfinite by default; given attributes decide by their own saturate field (OCP
    E4M3: 1.0 = 0x38, max 448 = 0x7E, NaN 0x7F); a keyword that is given wins."""
    def bits(**kw):
        return sf.scaled_encode([1.0, 1000.0], "e4m3", scale=1.0, **kw).bits.tolist()

    assert bits() == [0x38, 0x7E]
    assert bits(attributes=sf.RoundingAttributes()) == [0x38, 0x7F]
    assert bits(attributes=sf.RoundingAttributes(), saturate=True) == [0x38, 0x7E]
    assert bits(attributes=sf.RoundingAttributes(saturate=True)) == [0x38, 0x7E]
    assert bits(attributes=sf.RoundingAttributes(rounding="toward_zero")) == [0x38, 0x7E]  # IEEE 7.4
    assert bits(attributes=sf.RoundingAttributes(rounding="upward"), rounding="toward_zero",
                saturate=False) == [0x38, 0x7E]
    with pytest.raises(TypeError, match="attributes must be a softfloat.RoundingAttributes"):
        sf.scaled_encode([1.0], "e4m3", attributes={"rounding": "upward"})


@pytest.mark.parametrize("dtype, pattern", [(np.float32, 0x7F800001), (np.float16, 0x7C01), (np.float64, 0x7FF0000000000001)])
def test_signalling_nan_input_is_a_nan_without_a_warning(dtype, pattern):
    """A signalling NaN among the inputs is quieted when widened, with no RuntimeWarning
    from the cast (the suite turns warnings into errors); it encodes as a NaN."""
    x = np.array([1.0, 2.0, 0.5], dtype)
    x.view(f"u{x.itemsize}")[1] = pattern
    st = sf.scaled_encode(x, "fp8_e4m3", scaling="tensor")
    assert np.isnan(sf.decode(st.bits, "fp8_e4m3")[1])
    quiet = x.copy()
    quiet[1] = np.nan
    assert np.array_equal(np.delete(st.bits, 1), np.delete(sf.scaled_encode(quiet, "fp8_e4m3", scaling="tensor").bits, 1))


def test_a_float_scale_takes_the_same_fp32_rounding_as_any_scale():
    # the cached lane for a Python float scale (a DelayedScaling's) against the checks and
    # rounding every other scale takes (a 0-d array), bit for bit; out of range: the same error
    import softfloat.scaled._arguments as arguments
    edges = [2.0**-126, 2.0**-126 * (1 + 2**-30), 0.1, 1 / 3, 448 / 3.7, 1.0, 3.4028234663852886e38,
             3.4028234e38, float(np.nextafter(np.float64(2.0**-126), 1))]
    for s in edges:
        got = arguments._scale_argument(s, ())
        want = arguments._scale_argument(np.array(s), ())
        assert got.dtype == want.dtype == np.float32 and got.shape == want.shape == ()
        assert got.view(np.uint32) == want.view(np.uint32), s
        assert got.flags.writeable and got is not arguments._scale_argument(s, ())  # a fresh array each call
    for bad in (2.0**-127, 3.5e38, float("nan"), float("inf"), 0.0, -1.0):
        with pytest.raises(ValueError, match="scale must lie in"):
            arguments._scale_argument(bad, ())
