"""Every bit pattern of every format of 16 bits or fewer, against numpy and ml_dtypes.

* ``decode`` of each pattern equals numpy's float16 and ml_dtypes' bfloat16 / FP8 / FP6 /
  FP4 interpretation of the same pattern (NaN payloads too where the reference keeps them).
* ``encode(decode(b)) == b`` for every non-NaN pattern in every rounding mode, exactly and
  with no flags; NaN patterns stay NaNs of the same class.
* ``encode`` in nearest_even equals numpy's ``astype(float16)`` and ml_dtypes' casts of
  float32 inputs: every representable value, every midpoint, the float32 neighbours of
  each, the overflow threshold, and large random samples.  Where the documented semantics
  differ (NaN payloads, FP6/FP4 NaN), the difference itself is asserted.
* ``fields``/``compose``, ``classify`` and the ``is_*`` predicates on every pattern, checked
  against the reference dtype's values and numpy predicates.
* ``quantize`` of float32 arrays.

Everything here is vectorised; no expected value is computed by softfloat.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import softfloat as sf
from tests.references import CUSTOM_FORMATS, REFERENCE, reference_bits, reference_values

# =====================================================================================
# formats and their references
# =====================================================================================
SMALL_FORMATS = tuple(REFERENCE) + CUSTOM_FORMATS
MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd", "stochastic")

assert {f for f in sf.catalogue() if f.bits <= 16} == set(REFERENCE)


def fmt_id(fmt):
    return fmt.name


def all_patterns(fmt) -> np.ndarray:
    return np.arange(1 << fmt.bits, dtype=np.uint64).astype(fmt.storage_dtype)


def quiet_bit(fmt) -> int:
    return 1 << (fmt.mantissa_bits - 1)


def is_nan_pattern(fmt, b) -> np.ndarray:
    """NaN patterns of each policy, from the bit layout (used for the custom formats)."""
    b = np.asarray(b, dtype=np.uint64)
    m, e_bits = fmt.mantissa_bits, fmt.exponent_bits
    mag = b & np.uint64((1 << (fmt.bits - 1)) - 1)
    ones = np.uint64(((1 << e_bits) - 1) << m)
    policy = fmt.specials.value
    if policy == "ieee":
        return mag > ones
    if policy == "fn":
        return mag == ones | np.uint64((1 << m) - 1)
    if policy == "fnuz":
        return b == np.uint64(1 << (fmt.bits - 1))
    return np.zeros(b.shape, dtype=bool)


def nan_mask(fmt, b) -> np.ndarray:
    """NaN patterns: from the reference dtype where there is one, else from the layout."""
    if fmt in REFERENCE:
        return np.isnan(reference_values(fmt, b))
    return is_nan_pattern(fmt, b)


# =====================================================================================
# decode
# =====================================================================================
@pytest.mark.parametrize("fmt", tuple(REFERENCE), ids=fmt_id)
def test_decode_every_pattern_matches_reference(fmt):
    b = all_patterns(fmt)
    got = sf.decode(b, fmt)
    want = reference_values(fmt, b)
    assert got.dtype == np.float64 and got.shape == b.shape
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    # non-NaN: bit for bit, so the sign of zero counts
    np.testing.assert_array_equal(got[~nan].view(np.uint64), want[~nan].view(np.uint64))
    if fmt.specials.value != "fnuz":  # the lone fnuz NaN has no sign to compare
        np.testing.assert_array_equal(np.signbit(got[nan]), np.signbit(want[nan]))


def test_decode_fp16_matches_numpy_view_including_nan_payloads():
    b = np.arange(1 << 16, dtype=np.uint16)
    want = b.view(np.float16).astype(np.float64)  # numpy keeps sign and payload (sNaNs too)
    np.testing.assert_array_equal(sf.decode(b, sf.fp16).view(np.uint64), want.view(np.uint64))


@pytest.mark.parametrize("fmt", [sf.bf16, sf.fp16], ids=fmt_id)
def test_decode_to_float32_keeps_nan_payloads(fmt):
    """decode(..., dtype=float32) is exact for every pattern, NaN payloads included
    (ml_dtypes' bfloat16 -> float32 and numpy's float16 -> float32 are bit shifts)."""
    b = all_patterns(fmt)
    want = reference_values(fmt, b, np.float32)
    got = sf.decode(b, fmt, dtype=np.float32)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("fmt", SMALL_FORMATS, ids=fmt_id)
def test_decode_to_narrower_dtypes_agrees(fmt):
    """float32 / float16 results, where they hold the format, equal the float64 values."""
    b = all_patterns(fmt)
    b = b[~nan_mask(fmt, b)]
    wide = sf.decode(b, fmt)
    for dtype, info in ((np.float32, np.finfo(np.float32)), (np.float16, np.finfo(np.float16))):
        holds = (fmt.precision <= info.nmant + 1 and fmt.emax <= info.maxexp - 1
                 and fmt.emin - fmt.mantissa_bits >= info.minexp - info.nmant)
        if not holds:
            with pytest.raises(ValueError):
                sf.decode(b, fmt, dtype=dtype)
            continue
        got = sf.decode(b, fmt, dtype=dtype)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.astype(np.float64).view(np.uint64), wide.view(np.uint64))


# =====================================================================================
# encode(decode(b)) == b
# =====================================================================================
@pytest.mark.parametrize("fmt", SMALL_FORMATS, ids=fmt_id)
def test_roundtrip_every_pattern(fmt):
    """Every non-NaN pattern survives decode -> encode exactly in every mode, with no flags,
    from float64 and from every narrower float dtype that holds the format."""
    b = all_patterns(fmt)
    nan = nan_mask(fmt, b)
    values = {np.float64: sf.decode(b, fmt)}
    for dtype in (np.float32, np.float16):
        try:
            values[dtype] = sf.decode(b, fmt, dtype=dtype)
        except ValueError:
            pass  # this dtype cannot hold the format (checked in the decode tests)
    for dtype, x in values.items():
        for mode in MODES:
            for saturate in (False, True):
                got, flags = sf.encode(x[~nan], fmt, mode, saturate=saturate, return_flags=True, rng=0)
                assert got.dtype == fmt.storage_dtype
                np.testing.assert_array_equal(got, b[~nan], err_msg=f"{np.dtype(dtype)} {mode}")
                assert not flags.any(), f"{np.dtype(dtype)} {mode}: {flags.raised()}"


@pytest.mark.parametrize("fmt", [f for f in SMALL_FORMATS if f.has_nan], ids=fmt_id)
def test_roundtrip_nan_patterns(fmt):
    """NaNs come back as NaNs: IEEE keeps sign and payload and sets the quiet bit (invalid
    for signaling ones), fn keeps its two NaNs, fnuz has the one."""
    b = all_patterns(fmt)
    nan = nan_mask(fmt, b)
    b = b[nan]
    assert b.size
    for dtype in (np.float64, np.float32):
        try:
            x = sf.decode(b, fmt, dtype=dtype)
        except ValueError:
            continue
        for mode in MODES:
            got, flags = sf.encode(x, fmt, mode, return_flags=True, rng=0)
            where = f"decoded to {np.dtype(dtype)}, encoded in {mode}"
            if fmt.specials.value == "ieee":
                signaling = (b & fmt.storage_dtype.type(quiet_bit(fmt))) == 0
                np.testing.assert_array_equal(got, b | fmt.storage_dtype.type(quiet_bit(fmt)), err_msg=where)
                np.testing.assert_array_equal(flags.invalid, signaling, err_msg=where)
            else:
                np.testing.assert_array_equal(got, b, err_msg=where)  # fn: S.1111.111, fnuz: 0x80
                assert not flags.invalid.any(), where
            for name in ("divide_by_zero", "overflow", "underflow", "inexact"):
                assert not getattr(flags, name).any(), f"{name}, {where}"


# =====================================================================================
# encode in nearest_even against numpy / ml_dtypes casts from float32
# =====================================================================================
def reference_float32_inputs(fmt, rng) -> np.ndarray:
    """Float32 inputs around every value of ``fmt``: the values, every midpoint, the
    overflow threshold, the float32 neighbours of all of those, random values spanning the
    subnormal..overflow range, random float32 patterns of any kind, and the specials."""
    values = np.unique(reference_values(fmt, all_patterns(fmt), np.float32))
    finite = values[np.isfinite(values)].astype(np.float64)
    top, below = finite[-1], finite[-2]
    past = 2 * top - below                        # next value of the top binade's spacing
    grid = np.concatenate([finite, [past, 2 * past]])
    mids = (grid[:-1] + grid[1:]) / 2
    wide = np.concatenate([grid, mids])
    with np.errstate(over="ignore"):
        anchors = wide.astype(np.float32)
    exact = anchors.astype(np.float64) == wide
    assert (exact | (wide > np.finfo(np.float32).max)).all()  # all but bf16's 2**128 and beyond
    anchors = anchors[exact]
    near = np.concatenate([anchors, np.nextafter(anchors, np.float32(0)),
                           np.nextafter(anchors, np.float32(np.inf))])
    info = ml_dtypes.finfo(REFERENCE[fmt])
    lo, hi = max(info.minexp - info.nmant - 4 + 127, 0), min(int(np.log2(top)) + 4 + 127, 254)
    n = 100_000
    in_range = ((rng.integers(lo, hi + 1, n, dtype=np.uint32) << np.uint32(23))
                | rng.integers(0, 1 << 23, n, dtype=np.uint32)
                | (rng.integers(0, 2, n, dtype=np.uint32) << np.uint32(31)))
    anything = rng.integers(0, 1 << 32, 20_000, dtype=np.uint64).astype(np.uint32)
    specials = np.array([0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFA00000,
                         0x7FFFFFFF, 0x7FBFFFFF, 0x00000000, 0x80000000], dtype=np.uint32)
    x = np.concatenate([near, -near, in_range.view(np.float32), anything.view(np.float32),
                        specials.view(np.float32)])
    return x


@pytest.mark.parametrize("fmt", tuple(REFERENCE), ids=fmt_id)
def test_encode_matches_reference_casts(fmt):
    rng = np.random.default_rng(fmt.bits * 1000 + fmt.exponent_bits)
    x = reference_float32_inputs(fmt, rng)
    got = sf.encode(x, fmt).astype(np.uint64)
    with np.errstate(over="ignore", invalid="ignore"):
        want = reference_bits(fmt, x.astype(REFERENCE[fmt]))
    nan = np.isnan(x)
    # every number, infinities included, to the same pattern
    mismatch = np.nonzero((got != want) & ~nan)[0]
    assert mismatch.size == 0, [(float(x[i]).hex(), hex(int(got[i])), hex(int(want[i])))
                                for i in mismatch[:10]]
    # NaN inputs: where the documented semantics differ, assert the documented result
    policy = fmt.specials.value
    got_nan, want_nan = got[nan], want[nan]
    sign = np.uint64(1 << (fmt.bits - 1))
    in_sign = np.signbit(x[nan])
    if policy == "finite":
        # no NaN in FP6/FP4: softfloat gives +0 (and raises invalid); ml_dtypes gives a zero
        assert (got_nan == 0).all()
        assert ((want_nan & ~sign) == 0).all()
    elif policy in ("fn", "fnuz"):
        np.testing.assert_array_equal(got_nan, want_nan)
    else:
        # IEEE: both give a NaN of the input's sign; softfloat keeps the payload's top bits
        # and quiets (numpy's float16 cast may leave an sNaN signaling; ml_dtypes drops payloads)
        assert sf.is_nan(got_nan.astype(fmt.storage_dtype), fmt).all()
        assert np.isnan(reference_values(fmt, want_nan)).all()
        np.testing.assert_array_equal((got_nan & sign) != 0, in_sign)
        np.testing.assert_array_equal((want_nan & sign) != 0, in_sign)
        assert ((got_nan & np.uint64(quiet_bit(fmt))) != 0).all()
        src_frac = x[nan].view(np.uint32).astype(np.uint64) & np.uint64((1 << 23) - 1)
        payload = (src_frac >> np.uint64(23 - fmt.mantissa_bits))
        np.testing.assert_array_equal(got_nan & np.uint64(fmt.mantissa_mask),
                                      payload | np.uint64(quiet_bit(fmt)))


def test_encode_fp16_matches_numpy_from_float64():
    """float64 inputs straight to fp16 (numpy converts float64 -> float16 directly, once)."""
    rng = np.random.default_rng(16)
    values = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float64)
    finite = np.unique(values[np.isfinite(values)])
    grid = np.concatenate([finite, [65536.0]])
    mids = (grid[:-1] + grid[1:]) / 2
    anchors = np.concatenate([grid, mids])
    x = np.concatenate([anchors, np.nextafter(anchors, 0), np.nextafter(anchors, np.inf),
                        np.ldexp(rng.uniform(1, 2, 200_000), rng.integers(-30, 20, 200_000))
                        * rng.choice([-1.0, 1.0], 200_000)])
    with np.errstate(over="ignore"):
        want = x.astype(np.float16).view(np.uint16)
    np.testing.assert_array_equal(sf.encode(x, sf.fp16), want)


# =====================================================================================
# fields / compose
# =====================================================================================
@pytest.mark.parametrize("fmt", SMALL_FORMATS, ids=fmt_id)
def test_fields_compose_roundtrip(fmt):
    b = all_patterns(fmt)
    s, e, f = sf.fields(b, fmt)
    assert s.max() == 1 and e.max() == (1 << fmt.exponent_bits) - 1 and f.max() == fmt.mantissa_mask
    np.testing.assert_array_equal(sf.compose(s, e, f, fmt), b)
    # every (sign, exponent, fraction) triple appears exactly once
    triples = (s.astype(np.int64) << 20) | (e.astype(np.int64) << 10) | f.astype(np.int64)
    assert np.unique(triples).size == b.size


@pytest.mark.parametrize("fmt", tuple(REFERENCE), ids=fmt_id)
def test_fields_match_reference_values(fmt):
    """Sign, biased exponent and fraction agree with the reference dtype's value of each
    pattern: |v| = 2**(e - bias) * (1 + f / 2**m), or f * 2**(emin - m) for e == 0."""
    b = all_patterns(fmt)
    v = reference_values(fmt, b)
    info = ml_dtypes.finfo(REFERENCE[fmt])
    m, emin = info.nmant, info.minexp
    s, e, f = (a.astype(np.int64) for a in sf.fields(b, fmt))
    finite = np.isfinite(v)
    mant, ex = np.frexp(np.abs(v[finite]))
    normal = np.abs(v[finite]) >= info.smallest_normal
    want_e = np.where(normal, ex - 1 - emin + 1, 0)
    want_f = np.where(normal, (2 * mant - 1) * 2.0**m, np.abs(v[finite]) / 2.0 ** (emin - m))
    np.testing.assert_array_equal(e[finite], want_e)
    np.testing.assert_array_equal(f[finite], want_f)
    not_fnuz_nan = ~(np.isnan(v) & (fmt.specials.value == "fnuz"))
    np.testing.assert_array_equal(s[not_fnuz_nan], np.signbit(v[not_fnuz_nan]))


def test_fields_compose_scalars_and_broadcast():
    assert [int(v) for v in sf.fields(0xFC00, sf.fp16)] == [1, 31, 0]
    assert sf.compose(1, 31, 0, sf.fp16) == 0xFC00
    out = sf.compose([0, 1], 15, [0, 1], sf.fp16)
    assert out.dtype == np.uint16 and out.tolist() == [0x3C00, 0xBC01]


# =====================================================================================
# classify and the predicates
# =====================================================================================
def reference_classes(fmt) -> np.ndarray:
    """IEEE 754 class names of every pattern from the reference values and numpy predicates.

    Signaling vs quiet follows IEEE 754-2019 6.2.1 (a clear leading fraction bit is
    signaling); formats whose NaN has no quiet bit report quietNaN.
    """
    b = all_patterns(fmt)
    v = reference_values(fmt, b)
    tiny = ml_dtypes.finfo(REFERENCE[fmt]).smallest_normal
    neg = np.signbit(v)
    names = np.where(neg, "negativeNormal", "positiveNormal").astype(object)
    names[(v != 0) & (np.abs(v) < tiny)] = np.where(neg, "negativeSubnormal", "positiveSubnormal")[
        (v != 0) & (np.abs(v) < tiny)]
    names[v == 0] = np.where(neg, "negativeZero", "positiveZero")[v == 0]
    names[np.isinf(v)] = np.where(neg, "negativeInfinity", "positiveInfinity")[np.isinf(v)]
    nan = np.isnan(v)
    names[nan] = "quietNaN"
    if fmt.specials.value == "ieee":
        signaling = nan & ((b.astype(np.uint64) & np.uint64(quiet_bit(fmt))) == 0)
        names[signaling] = "signalingNaN"
    return names.astype(str)


@pytest.mark.parametrize("fmt", tuple(REFERENCE), ids=fmt_id)
def test_classify_every_pattern(fmt):
    got = sf.classify(all_patterns(fmt), fmt)
    np.testing.assert_array_equal(got, reference_classes(fmt))
    assert set(np.unique(got)) <= set(sf.FLOAT_CLASSES)


def test_classify_fp16_class_counts():
    """Hard numbers for binary16: 2 * (1023 subnormals, 30 * 1024 normals, 1 zero, 1 inf,
    511 signaling and 512 quiet NaNs)."""
    names, counts = np.unique(sf.classify(np.arange(1 << 16, dtype=np.uint16), sf.fp16),
                              return_counts=True)
    assert dict(zip(names.tolist(), counts.tolist())) == {
        "signalingNaN": 1022, "quietNaN": 1024, "negativeInfinity": 1, "positiveInfinity": 1,
        "negativeNormal": 30720, "positiveNormal": 30720, "negativeSubnormal": 1023,
        "positiveSubnormal": 1023, "negativeZero": 1, "positiveZero": 1}


PREDICATES = {
    "is_nan": lambda c, neg: np.isin(c, ["signalingNaN", "quietNaN"]),
    "is_signaling": lambda c, neg: c == "signalingNaN",
    "is_infinite": lambda c, neg: np.char.endswith(c, "Infinity"),
    "is_inf": lambda c, neg: np.char.endswith(c, "Infinity"),
    "is_finite": lambda c, neg: ~np.isin(c, ["signalingNaN", "quietNaN"]) & ~np.char.endswith(c, "Infinity"),
    "is_zero": lambda c, neg: np.char.endswith(c, "Zero"),
    "is_subnormal": lambda c, neg: np.char.endswith(c, "Subnormal"),
    "is_normal": lambda c, neg: np.char.endswith(c, "Normal"),
    "is_sign_minus": lambda c, neg: neg,
}


@pytest.mark.parametrize("name", PREDICATES)
@pytest.mark.parametrize("fmt", tuple(REFERENCE), ids=fmt_id)
def test_predicates_every_pattern(fmt, name):
    b = all_patterns(fmt)
    v = reference_values(fmt, b)
    # the sign bit as the pattern holds it; fnuz's lone NaN sits where -0 would be and has none
    neg = (b.astype(np.uint64) >> np.uint64(fmt.bits - 1)).astype(bool)
    if fmt.specials.value == "fnuz":
        neg &= ~np.isnan(v)
    else:
        np.testing.assert_array_equal(neg, np.signbit(v))
    got = getattr(sf, name)(b, fmt)
    assert got.dtype == bool and got.shape == b.shape
    np.testing.assert_array_equal(got, PREDICATES[name](reference_classes(fmt), neg))


def test_predicates_against_numpy_float16():
    """The fp16 predicates against numpy's own: isnan, isinf, isfinite, signbit, and
    subnormal as 0 < |x| < finfo.smallest_normal."""
    b = np.arange(1 << 16, dtype=np.uint16)
    v = b.view(np.float16)
    a = np.abs(v.astype(np.float64))
    np.testing.assert_array_equal(sf.is_nan(b, sf.fp16), np.isnan(v))
    np.testing.assert_array_equal(sf.is_infinite(b, sf.fp16), np.isinf(v))
    np.testing.assert_array_equal(sf.is_finite(b, sf.fp16), np.isfinite(v))
    np.testing.assert_array_equal(sf.is_sign_minus(b, sf.fp16), np.signbit(v))
    np.testing.assert_array_equal(sf.is_zero(b, sf.fp16), v == 0)
    tiny = float(np.finfo(np.float16).smallest_normal)
    np.testing.assert_array_equal(sf.is_subnormal(b, sf.fp16), (a > 0) & (a < tiny))
    np.testing.assert_array_equal(sf.is_normal(b, sf.fp16), np.isfinite(v) & (a >= tiny))


def test_predicates_on_scalars():
    assert sf.is_nan(0x7E00, sf.fp16) is True
    assert sf.is_signaling(0x7D00, sf.fp16) is True
    assert sf.is_signaling(0x7E00, sf.fp16) is False
    assert sf.is_nan(0x7F, sf.fp8_e4m3) is True and sf.is_nan(0x7E, sf.fp8_e4m3) is False
    assert sf.is_nan(0x80, sf.fp8_e4m3fnuz) is True and sf.is_zero(0x80, sf.fp8_e4m3fnuz) is False
    assert sf.is_finite(0x3F, sf.fp6_e3m2) is True


def test_classify_scalar():
    assert sf.classify(0x0001, sf.fp16) == "positiveSubnormal"
    assert sf.classify(0xFC00, sf.fp16) == "negativeInfinity"
    assert sf.classify([0x7D00], sf.fp16).tolist() == ["signalingNaN"]


# =====================================================================================
# quantize
# =====================================================================================
@pytest.mark.parametrize("fmt", [f for f in SMALL_FORMATS if f.exponent_bits <= 8], ids=fmt_id)
def test_quantize_float32_is_decode_of_encode(fmt):
    rng = np.random.default_rng(fmt.bits)
    b = all_patterns(fmt)
    x = np.concatenate([
        sf.decode(b[~nan_mask(fmt, b)], fmt).astype(np.float32),
        np.ldexp(rng.uniform(-2, 2, 50_000), rng.integers(-30, 20, 50_000)).astype(np.float32),
        np.float32([np.inf, -np.inf, np.nan, 0.0, -0.0, 3.0e38, -1e-45]),
    ])
    for mode in ("nearest_even", "toward_zero", "odd"):
        q = sf.quantize(x, fmt, mode)
        assert q.dtype == np.float32 and q.shape == x.shape
        want = sf.decode(sf.encode(x, fmt, mode), fmt).astype(np.float32)
        np.testing.assert_array_equal(q.view(np.uint32), want.view(np.uint32))


def test_quantize_e4m3_matches_ml_dtypes():
    rng = np.random.default_rng(4)
    x = np.concatenate([
        reference_float32_inputs(sf.fp8_e4m3, rng),
        np.ldexp(rng.uniform(-2, 2, 100_000), rng.integers(-12, 10, 100_000)).astype(np.float32),
    ])
    q = sf.quantize(x, sf.fp8_e4m3)
    assert q.dtype == np.float32
    with np.errstate(over="ignore", invalid="ignore"):
        want = x.astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(q), nan)
    np.testing.assert_array_equal(q[~nan].view(np.uint32), want[~nan].view(np.uint32))


@pytest.mark.parametrize("dtype, fmt, out", [
    (np.float32, sf.bf16, np.float32), (np.float32, sf.fp16, np.float32),
    (np.float16, sf.fp8_e5m2, np.float16), (np.float16, sf.bf16, np.float32),
    (np.float64, sf.fp8_e4m3, np.float64), (np.float32, sf.fp32, np.float32),
    (np.float32, sf.fp64, np.float64), (np.int64, sf.fp16, np.float64), (np.int32, sf.bf16, np.float64),
], ids=lambda v: getattr(v, "name", None) or np.dtype(v).name)
def test_quantize_result_dtype(dtype, fmt, out):
    x = np.arange(-40, 40, dtype=dtype) * dtype(3)
    q = sf.quantize(x, fmt)
    assert q.dtype == out
    np.testing.assert_array_equal(q.astype(np.float64), sf.decode(sf.encode(x, fmt), fmt))
