"""neg, abs and copysign on every pattern of the small formats, against numpy float16 and
ml_dtypes values; NaNs checked by their bits (sign flipped or copied, payload kept)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import softfloat as sf
from softfloat.ops.sign import abs as sf_abs
from softfloat.ops.sign import copysign, neg

#: formats with a numpy / ml_dtypes dtype of the same encoding
REFERENCE = {
    sf.fp16: np.float16,
    sf.bf16: ml_dtypes.bfloat16,
    sf.fp8_e4m3: ml_dtypes.float8_e4m3fn,
    sf.fp8_e5m2: ml_dtypes.float8_e5m2,
    sf.fp8_e4m3fnuz: ml_dtypes.float8_e4m3fnuz,
    sf.fp8_e5m2fnuz: ml_dtypes.float8_e5m2fnuz,
    sf.fp6_e3m2: ml_dtypes.float6_e3m2fn,
    sf.fp6_e2m3: ml_dtypes.float6_e2m3fn,
    sf.fp4_e2m1: ml_dtypes.float4_e2m1fn,
}


def fmt_id(fmt):
    return fmt.name


def all_patterns(fmt):
    return np.arange(1 << fmt.bits, dtype=np.uint64).astype(fmt.storage_dtype)


def values(fmt, bits):
    """Reference float64 values of patterns (ml_dtypes / numpy, not softfloat)."""
    raw = np.asarray(bits).astype({8: np.uint8, 16: np.uint16}[np.dtype(REFERENCE[fmt]).itemsize * 8])
    with np.errstate(invalid="ignore"):
        return raw.view(REFERENCE[fmt]).astype(np.float64)


def assert_same_values(fmt, got, want_values):
    """Equal values, equal zero signs (except fnuz), NaN exactly where expected."""
    v = values(fmt, got)
    assert np.array_equal(np.isnan(v), np.isnan(want_values))
    num = ~np.isnan(v)
    assert np.array_equal(v[num], want_values[num])
    if fmt.has_negative_zero:
        assert np.array_equal(np.signbit(v[num]), np.signbit(want_values[num]))


@pytest.mark.parametrize("fmt", tuple(REFERENCE), ids=fmt_id)
def test_neg_and_abs_every_pattern(fmt):
    b = all_patterns(fmt)
    x = values(fmt, b)
    n, a = neg(b, fmt), sf_abs(b, fmt)
    assert n.dtype == a.dtype == fmt.storage_dtype
    want_neg = -x
    if not fmt.has_negative_zero:
        want_neg = np.where(x == 0, 0.0, want_neg)
    assert_same_values(fmt, n, want_neg)
    assert_same_values(fmt, a, np.abs(x))
    # involution, and |neg x| == |x| bit for bit
    assert np.array_equal(neg(n, fmt), b)
    assert np.array_equal(sf_abs(n, fmt), a)


@pytest.mark.parametrize("fmt", [f for f in REFERENCE if f.specials.value in ("ieee", "fn")], ids=fmt_id)
def test_sign_ops_keep_nan_payloads(fmt):
    b = all_patterns(fmt)
    nan = np.isnan(values(fmt, b))
    sign = fmt.storage_dtype.type(fmt.sign_mask)
    assert np.array_equal(neg(b, fmt)[nan], b[nan] ^ sign)       # signaling ones too
    assert np.array_equal(sf_abs(b, fmt)[nan], b[nan] & ~sign)


def test_fnuz_zero_and_nan_stay():
    for fmt in (sf.fp8_e4m3fnuz, sf.fp8_e5m2fnuz):
        assert int(neg(0x00, fmt)) == 0x00 and int(neg(0x80, fmt)) == 0x80
        assert int(sf_abs(0x80, fmt)) == 0x80
        assert int(copysign(0x00, 0x81, fmt)) == 0x00 and int(copysign(0x80, 0x01, fmt)) == 0x80
        assert int(copysign(0x01, 0x80, fmt)) == 0x01  # the NaN counts as positive


def test_copysign_fp16_against_numpy():
    b = all_patterns(sf.fp16)
    signs = np.array([0x0000, 0x8000, 0x3C00, 0xBC00, 0x7E00, 0xFE00, 0x7C01, 0xFC01], dtype=np.uint16)
    got = copysign(b[:, None], signs[None, :], sf.fp16)
    assert got.shape == (b.size, signs.size)
    want = np.copysign(b.view(np.float16)[:, None], signs.view(np.float16)[None, :])
    assert np.array_equal(got, want.view(np.uint16))  # numpy's copysign is bitwise too


@pytest.mark.parametrize("fmt", [f for f in REFERENCE if f.bits <= 8], ids=fmt_id)
def test_copysign_every_pair_of_small_formats(fmt):
    b = all_patterns(fmt)
    got = copysign(b[:, None], b[None, :], fmt)
    x, y = values(fmt, b)[:, None], values(fmt, b)[None, :]
    y_negative = np.signbit(y) & ~np.isnan(y) if fmt.specials.value == "fnuz" else (
        (b[None, :] & fmt.storage_dtype.type(fmt.sign_mask)) != 0)
    want = np.where(y_negative, -np.abs(x), np.abs(x))
    if not fmt.has_negative_zero:
        want = np.where(x == 0, 0.0, want)
    assert_same_values(fmt, got.ravel(), np.broadcast_to(want, got.shape).ravel())


def test_scalars_and_shapes():
    assert isinstance(neg(0x3C00, "fp16"), np.uint16)
    assert neg(np.uint32(0x3F800000), "fp32") == 0xBF800000
    assert int(neg(1 << 63, "fp64")) == 0 and int(sf_abs((1 << 64) - 1, "fp64")) == (1 << 63) - 1
    assert copysign([0x3C00, 0x4000], [[0x8000], [0x0000]], "fp16").shape == (2, 2)


def test_errors_name_the_argument():
    with pytest.raises(TypeError, match="^a must"):
        neg(1.5, "fp16")
    with pytest.raises(ValueError, match="^b holds"):
        copysign(0, [1 << 16], "fp16")
    with pytest.raises(ValueError, match="broadcast"):
        copysign([1, 2], [1, 2, 3], "fp16")
    with pytest.raises(ValueError, match="fmt="):
        sf_abs(0, "fp7")
