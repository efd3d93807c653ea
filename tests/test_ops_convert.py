"""convert, round_to_integral, to_int and from_int against independent oracles.

* ``convert``: every fp16 and bf16 pattern into every FP8/FP6/FP4 format in every
  deterministic mode against MPFR (``tests/oracle.round_exact``), results and flags (a
  deterministic slice in CI, everything with ``--runslow``); the same in nearest_even
  against ml_dtypes' casts, all of it in CI; fp64/fp32 sources against MPFR on edge grids
  (every threshold of the target, midpoints, neighbours) and random patterns, and against
  numpy's hardware casts; widening is exact (FP8 -> fp16 -> fp32 -> fp64 and back, numpy
  and ml_dtypes widening casts bit for bit, NaN payloads included).
* ``round_to_integral``: every fp16 and bf16 pattern against numpy's rint/trunc/ceil/floor
  (float16/float32), ties-away and odd against exact Fraction arithmetic; fp32/fp64 random
  patterns against numpy.
* ``to_int``: every fp16 pattern, every mode, signed and unsigned dtypes against Python's
  exact ``round``/``math.floor``/``math.ceil``/``math.trunc`` on Fractions; the int64/uint64
  range edges in fp64.
* ``from_int``: MPFR on random and edge integers (beyond 64 bits too), numpy's int -> float
  casts in nearest_even.

Special inputs (NaN, infinity) have no MPFR counterpart; their expected patterns are
spelled out from the documented policy (IEEE 754-2019 6.2.3 payloads, the encode table for
formats without infinities or NaNs).
"""

from __future__ import annotations

import math
import zlib
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import softfloat as sf
from softfloat.ops.convert import INVALID_INTEGER, convert, from_int, round_to_integral, to_int
from tests.oracle import round_exact
from tests.oracle import pattern_of

NARROW = (sf.fp8_e4m3, sf.fp8_e5m2, sf.fp8_e4m3fnuz, sf.fp8_e5m2fnuz, sf.fp6_e3m2, sf.fp6_e2m3,
          sf.fp4_e2m1)
ML_DTYPES = {sf.fp16: np.float16, sf.bf16: ml_dtypes.bfloat16, sf.fp8_e4m3: ml_dtypes.float8_e4m3fn,
             sf.fp8_e5m2: ml_dtypes.float8_e5m2, sf.fp8_e4m3fnuz: ml_dtypes.float8_e4m3fnuz,
             sf.fp8_e5m2fnuz: ml_dtypes.float8_e5m2fnuz, sf.fp6_e3m2: ml_dtypes.float6_e3m2fn,
             sf.fp6_e2m3: ml_dtypes.float6_e2m3fn, sf.fp4_e2m1: ml_dtypes.float4_e2m1fn,
             sf.fp32: np.float32, sf.fp64: np.float64}
MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd")
FLAGS = ("invalid", "divide_by_zero", "overflow", "underflow", "inexact")
UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}

#: the CI slice of the MPFR sweeps is this many times sparser than oracle_stride's
SWEEP_THINNING = 8


def fmt_id(fmt):
    return fmt.name


def all_patterns(fmt):
    return np.arange(1 << fmt.bits, dtype=np.uint64).astype(fmt.storage_dtype)


def ref_values(fmt, b):
    """float64 values of patterns through numpy / ml_dtypes (sNaNs may come back quiet)."""
    dt = np.dtype(ML_DTYPES[fmt])
    with np.errstate(invalid="ignore"):
        return np.asarray(b).astype(UINT[dt.itemsize * 8]).view(dt).astype(np.float64)


def sign_bit(fmt, b):
    return (np.asarray(b, dtype=np.uint64) >> np.uint64(fmt.bits - 1)) != 0


def is_signaling(fmt, b, values):
    if fmt.specials.value != "ieee":
        return np.zeros(np.shape(b), dtype=bool)
    return np.isnan(values) & ((np.asarray(b, dtype=np.uint64) & np.uint64(1 << (fmt.mantissa_bits - 1))) == 0)


def stride_and_offset(request, oracle_stride):
    stride = 1 if oracle_stride == 1 else oracle_stride * SWEEP_THINNING
    return stride, zlib.crc32(request.node.nodeid.encode()) % stride


# =====================================================================================
# the expected conversion of one pattern, without softfloat
# =====================================================================================
def expected_special(src, dst, b, *, saturate=False):
    """(bits, flags) for a NaN or infinity pattern ``b`` of ``src`` (documented policy)."""
    m_s, m_d = src.mantissa_bits, dst.mantissa_bits
    negative = bool(b >> (src.bits - 1))
    frac = b & ((1 << m_s) - 1)
    inf = src.specials.value == "ieee" and frac == 0
    signaling_nan = src.specials.value == "ieee" and not inf and not frac >> (m_s - 1)
    sign = (1 << (dst.bits - 1)) if negative else 0
    ones = ((1 << dst.exponent_bits) - 1) << m_d
    policy = dst.specials.value
    no = False
    if inf:
        if policy == "ieee":
            return sign | ones, (no, no, no, no, no)
        if policy == "finite" or saturate:
            return sign | pattern_of(Fraction(dst.max_finite), False, dst), (no, no, True, no, True)
        nan = (1 << (dst.bits - 1)) if policy == "fnuz" else sign | ones | ((1 << m_d) - 1)
        return nan, (True, no, no, no, no)
    if src.specials.value != "ieee":
        frac = 0  # fn / fnuz NaNs carry no payload
        negative = negative and src.specials.value == "fn"
        sign = (1 << (dst.bits - 1)) if negative else 0
    if policy == "ieee":
        payload = frac >> (m_s - m_d) if m_s >= m_d else frac << (m_d - m_s)
        bits = sign | ones | payload | (1 << (m_d - 1))
    elif policy == "fn":
        bits = sign | ones | ((1 << m_d) - 1)
    elif policy == "fnuz":
        bits = 1 << (dst.bits - 1)
    else:
        return 0, (True, no, no, no, no)
    return bits, (signaling_nan, no, no, no, no)


def expected_convert(src, dst, patterns, values, mode, **policy):
    """Expected (bits, flags[5, n]) of converting ``patterns`` (with reference ``values``)."""
    bits = np.empty(len(patterns), dtype=np.uint64)
    flags = np.zeros((5, len(patterns)), dtype=bool)
    for i, (b, v) in enumerate(zip(patterns.tolist(), values.tolist())):
        if math.isfinite(v):
            e = round_exact(abs(Fraction(v)), bool(b >> (src.bits - 1)), dst, mode, **policy)
            bits[i] = pattern_of(e.value, e.negative, dst)
            flags[:, i] = (e.invalid, False, e.overflow, e.underflow, e.inexact)
        else:
            bits[i], flags[:, i] = expected_special(src, dst, b, saturate=policy.get("saturate", False))
    return bits, flags


def assert_convert_matches(src, dst, patterns, values, mode, **policy):
    got, fl = convert(patterns, src, dst, mode, return_flags=True, **policy)
    assert got.dtype == dst.storage_dtype and got.shape == patterns.shape
    want_bits, want_flags = expected_convert(src, dst, patterns, values, mode, **policy)
    got_flags = np.stack([getattr(fl, n) for n in FLAGS])
    bad = np.nonzero((got.astype(np.uint64) != want_bits) | (got_flags != want_flags).any(axis=0))[0]
    if bad.size:
        rows = [f"  {int(patterns[i]):#x} ({values[i]!r}): got {int(got[i]):#x} "
                f"{[n for n, f in zip(FLAGS, got_flags[:, i]) if f]}, want {int(want_bits[i]):#x} "
                f"{[n for n, f in zip(FLAGS, want_flags[:, i]) if f]}" for i in bad[:10]]
        pytest.fail(f"{bad.size} of {patterns.size} differ ({src.name} -> {dst.name}, {mode}, {policy}):\n"
                    + "\n".join(rows))


# =====================================================================================
# convert: 16-bit formats into FP8/FP6/FP4, every pattern
# =====================================================================================
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dst", NARROW, ids=fmt_id)
@pytest.mark.parametrize("src", [sf.fp16, sf.bf16], ids=fmt_id)
def test_convert_16_bit_to_narrow_every_pattern_mpfr(src, dst, mode, request, oracle_stride):
    """Every pattern (every SWEEP_THINNING * oracle_stride-th in CI), results and flags."""
    stride, offset = stride_and_offset(request, oracle_stride)
    p = all_patterns(src)[offset::stride]
    assert_convert_matches(src, dst, p, ref_values(src, p), mode)


POLICIES = ({"tininess": "before"}, {"subnormals": False}, {"saturate": True},
            {"subnormals": False, "tininess": "before"})


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
@pytest.mark.parametrize("dst", [sf.fp8_e4m3, sf.fp8_e5m2, sf.fp8_e4m3fnuz], ids=fmt_id)
def test_convert_fp16_to_fp8_policies_mpfr(dst, policy, request, oracle_stride):
    """Tininess before rounding, flush-to-zero and saturation, in every mode, on the
    patterns near the target's underflow and overflow thresholds (all the subnormal and
    small-normal range of the target plus the top binades), sliced in CI."""
    stride, offset = stride_and_offset(request, oracle_stride)
    p = all_patterns(sf.fp16)
    v = np.abs(ref_values(sf.fp16, p))
    near = ((v < 4 * dst.min_normal) & (v > dst.min_subnormal / 4)) | (v > dst.max_finite / 2)
    p = p[near][offset // 2::max(stride // 2, 1)]
    for mode in MODES:
        assert_convert_matches(sf.fp16, dst, p, ref_values(sf.fp16, p), mode, **policy)


@pytest.mark.parametrize("dst", NARROW, ids=fmt_id)
@pytest.mark.parametrize("src", [sf.fp16, sf.bf16], ids=fmt_id)
def test_convert_16_bit_to_narrow_every_pattern_ml_dtypes(src, dst):
    """nearest_even, every pattern, against ml_dtypes' casts (values and zero signs)."""
    p = all_patterns(src)
    x = p.view(np.dtype(ML_DTYPES[src]))
    with np.errstate(invalid="ignore", over="ignore"):
        want = ref_values(dst, x.astype(ML_DTYPES[dst]).view(UINT[np.dtype(ML_DTYPES[dst]).itemsize * 8]))
    got = ref_values(dst, convert(p, src, dst))
    finite = np.isfinite(ref_values(src, p))
    np.testing.assert_array_equal(np.isnan(got[finite]), np.isnan(want[finite]))
    ok = finite & ~np.isnan(want)
    np.testing.assert_array_equal(got[ok], want[ok])
    np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(want[ok]))


# =====================================================================================
# convert: from fp32 and fp64, edge grids and random patterns
# =====================================================================================
WIDE_PAIRS = ((sf.fp64, sf.fp32), (sf.fp64, sf.fp16), (sf.fp64, sf.bf16), (sf.fp64, sf.tf32),
              (sf.fp64, sf.fp8_e5m2), (sf.fp64, sf.fp4_e2m1), (sf.fp32, sf.fp16), (sf.fp32, sf.bf16),
              (sf.fp32, sf.fp8_e4m3), (sf.fp32, sf.fp8_e5m2fnuz),
              (sf.fp64, sf.Format(exponent_bits=6, mantissa_bits=9)),
              (sf.fp32, sf.Format(exponent_bits=3, mantissa_bits=4, specials="fnuz")))


def target_value(dst, mag):
    """The value of magnitude pattern ``mag`` of ``dst`` with an unbounded exponent."""
    m = dst.mantissa_bits
    e, f = mag >> m, mag & ((1 << m) - 1)
    return Fraction(f + ((1 << m) if e else 0)) * Fraction(2) ** (max(e, 1) - dst.bias - m)


def edge_inputs(src, dst, rng, n_random):
    """Source patterns around every decision point of ``dst``: its smallest subnormals,
    the normal boundary, 1.0, max_finite and the next value above, the midpoints after
    each, their source neighbours, both signs; plus random source patterns in and around
    dst's range and anywhere."""
    flt = ML_DTYPES[src]
    m = dst.mantissa_bits
    mags = [0, 1, 2, 3, (1 << m) - 1, 1 << m, (1 << m) + 1, dst.bias << m, dst.max_finite_bits - 1,
            dst.max_finite_bits, dst.max_finite_bits + 1]
    mags += [int(v) for v in rng.integers(0, dst.max_finite_bits, 20)]
    anchors = []
    for mag in mags:
        lo, hi = target_value(dst, mag), target_value(dst, mag + 1)
        anchors += [lo, (lo + hi) / 2, (3 * lo + hi) / 4]
    with np.errstate(over="ignore"):  # anchors beyond the source's range become inf: dropped
        x = np.array([float(a) for a in anchors]).astype(flt)
        x = np.concatenate([x, np.nextafter(x, flt(np.inf)), np.nextafter(x, flt(-np.inf))])
    x = x[np.isfinite(x)]
    width = np.dtype(flt).itemsize * 8
    uint = UINT[width]
    exp_lo, exp_hi = dst.emin - dst.mantissa_bits - 3, dst.emax + 3
    with np.errstate(over="ignore"):
        rnd = np.ldexp(rng.uniform(1, 2, n_random), rng.integers(exp_lo, exp_hi, n_random)).astype(flt)
    rnd = rnd[np.isfinite(rnd)]
    anywhere = rng.integers(0, 1 << width, n_random // 4, dtype=np.uint64).astype(uint).view(flt)
    specials = np.array([np.inf, 0.0], dtype=flt)
    allx = np.concatenate([x, rnd, specials])
    return np.concatenate([allx, -allx]).view(uint), np.concatenate([allx.view(uint), anywhere.view(uint)])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("src, dst", WIDE_PAIRS, ids=lambda f: f.name)
def test_convert_wide_sources_mpfr(src, dst, mode, oracle_stride):
    rng = np.random.default_rng(zlib.crc32(f"{src.name}{dst.name}{mode}".encode()))
    edges, more = edge_inputs(src, dst, rng, 400 if oracle_stride > 1 else 4000)
    p = np.concatenate([edges, more[:: 1 if oracle_stride == 1 else 4]])
    assert_convert_matches(src, dst, p, ref_values(src, p), mode)


def test_convert_nearest_even_matches_hardware_casts():
    """numpy's float64 -> float32 (the CPU), float64/float32 -> float16 and ml_dtypes'
    float32 -> bfloat16 / float8, on a million random values across the ranges."""
    rng = np.random.default_rng(42)
    x = np.ldexp(rng.uniform(-2, 2, 1 << 20), rng.integers(-160, 140, 1 << 20))
    x = np.concatenate([x, rng.integers(0, 1 << 64, 1 << 16, dtype=np.uint64).view(np.float64)])
    with np.errstate(over="ignore", invalid="ignore"):
        x32 = x.astype(np.float32)
        cases = [(sf.fp64, sf.fp32, x, x.astype(np.float32)), (sf.fp64, sf.fp16, x, x.astype(np.float16)),
                 (sf.fp32, sf.fp16, x32, x32.astype(np.float16)),
                 (sf.fp32, sf.bf16, x32, x32.astype(ml_dtypes.bfloat16)),
                 (sf.fp32, sf.fp8_e5m2, x32, x32.astype(ml_dtypes.float8_e5m2)),
                 (sf.fp32, sf.fp8_e4m3, x32, x32.astype(ml_dtypes.float8_e4m3fn))]
    for src, dst, xs, want in cases:
        got = convert(xs.view(UINT[src.bits]), src, dst)
        want_bits = want.view(UINT[dst.bits])
        nan = np.isnan(xs)
        np.testing.assert_array_equal(got[~nan], want_bits[~nan], err_msg=f"{src.name} -> {dst.name}")
        assert np.isnan(ref_values(dst, got[nan])).all()


# =====================================================================================
# convert: widening is exact
# =====================================================================================
@pytest.mark.parametrize("fmt", NARROW + (sf.fp16, sf.bf16), ids=fmt_id)
def test_widening_chain_is_exact_and_round_trips(fmt):
    """fmt -> fp16/bf16 where it fits -> fp32 -> fp64: same values, no flags; back down
    again: the same patterns (NaNs: the format's quiet NaN)."""
    p = all_patterns(fmt)
    v = ref_values(fmt, p)
    nan = np.isnan(v)
    chain = [fmt] + [w for w in (sf.fp16, sf.fp32, sf.fp64) if w.bits > fmt.bits and holds(w, fmt)]
    bits = p
    for narrow, wide in zip(chain, chain[1:]):
        for mode in MODES:
            got, fl = convert(bits, narrow, wide, mode, return_flags=True)
            np.testing.assert_array_equal(ref_values(wide, got)[~nan], v[~nan])
            np.testing.assert_array_equal(sign_bit(wide, got)[~nan], sign_bit(fmt, p)[~nan])
            assert np.isnan(ref_values(wide, got)[nan]).all()
            assert not (fl.overflow.any() or fl.underflow.any() or fl.inexact.any())
            np.testing.assert_array_equal(fl.invalid, is_signaling(narrow, bits, ref_values(narrow, bits)))
        bits = convert(bits, narrow, wide)
    for mode in MODES:
        back = convert(bits, chain[-1], fmt, mode)
        np.testing.assert_array_equal(back[~nan], p[~nan], err_msg=mode)


def holds(wide, narrow):
    """Is every value of ``narrow`` a value of ``wide``?"""
    return (wide.precision >= narrow.precision and wide.emax >= narrow.emax
            and wide.emin - wide.mantissa_bits <= narrow.emin - narrow.mantissa_bits)


def test_widening_fp16_and_bf16_to_fp32_bit_for_bit():
    """numpy's float16 -> float32 and bf16's pattern << 16 are exact, NaN payloads kept;
    IEEE conversions quiet a signaling NaN (numpy's float16 cast does not), and raise
    invalid for it."""
    p = all_patterns(sf.fp16)
    got, fl = convert(p, sf.fp16, sf.fp32, return_flags=True)
    want = p.view(np.float16).astype(np.float32).view(np.uint32)
    nan = np.isnan(p.view(np.float16))
    want = np.where(nan, want | np.uint32(0x0040_0000), want)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(fl.invalid, nan & ((p & np.uint16(0x200)) == 0))
    p = all_patterns(sf.bf16)
    got = convert(p, sf.bf16, sf.fp32)
    want = p.astype(np.uint32) << np.uint32(16)
    nan = np.isnan(ref_values(sf.bf16, p))
    np.testing.assert_array_equal(got, np.where(nan, want | np.uint32(0x0040_0000), want))


def test_widening_fp32_to_fp64_matches_the_cpu():
    """The CPU's float32 -> float64 conversion quiets sNaNs and keeps payloads: bit for bit."""
    rng = np.random.default_rng(3)
    p = rng.integers(0, 1 << 32, 200_000, dtype=np.uint64).astype(np.uint32)
    p[:1000] |= np.uint32(0x7F80_0000)  # many NaNs and infinities
    with np.errstate(invalid="ignore"):
        want = p.view(np.float32).astype(np.float64).view(np.uint64)
    np.testing.assert_array_equal(convert(p, sf.fp32, sf.fp64), want)


def test_convert_special_values_and_examples():
    # sNaN raises invalid also when widening; payload kept (moved to the top); sign kept
    b, fl = convert(0xFD01, "fp16", "fp64", return_flags=True)      # 1.11111.0100000001
    assert int(b) == 0xFFFC_0400_0000_0000 and fl.invalid            # quiet bit set
    assert int(convert(0x7FF0_0000_0000_0001, "fp64", "fp16")) == 0x7E00          # payload below fp16's bits
    assert int(convert(0xFF, "e4m3", "e5m2")) == 0xFE and int(convert(0x80, "e5m2fnuz", "fp16")) == 0x7E00
    b, fl = convert(0x7C00, "fp16", "e4m3", return_flags=True)                       # inf -> NaN
    assert int(b) == 0x7F and fl.invalid
    b, fl = convert(0xFC00, "fp16", "e4m3", saturate=True, return_flags=True)        # inf -> -max
    assert int(b) == 0xFE and fl.overflow and fl.inexact and not fl.invalid
    b, fl = convert(0x7E00, "fp16", "e2m1", return_flags=True)                       # NaN -> +0
    assert int(b) == 0 and fl.invalid
    assert int(convert(0x8001, "fp16", "e4m3fnuz")) == 0x00                          # no -0
    assert int(convert(0x8001, "fp16", "e4m3fnuz", "downward")) == 0x81


def test_convert_denormals_are_zero():
    p = np.array([0x0001, 0x83FF, 0x0400, 0x8400], dtype=np.uint16)  # subnormals, then normals
    got, fl = convert(p, "fp16", "fp32", denormals_are_zero=True, return_flags=True)
    assert got.tolist() == [0x0000_0000, 0x8000_0000, 0x3880_0000, 0xB880_0000]
    assert not fl.any()
    got, fl = convert(p, "fp16", "e5m2", "upward", denormals_are_zero=True, return_flags=True)
    assert got.tolist() == [0x00, 0x80, 0x04, 0x84] and not fl.any()


def test_convert_stochastic_is_reproducible_and_unbiased():
    x = np.full(1 << 18, 0x3C01, dtype=np.uint16)       # 1 + 2**-10: 1/128 of an e4m3 ulp above 1
    a = convert(x, "fp16", "e4m3", "stochastic", rng=7)
    assert np.array_equal(a, convert(x, "fp16", "e4m3", "stochastic", rng=7))
    assert set(np.unique(a).tolist()) <= {0x38, 0x39}
    ups = int(np.count_nonzero(a == 0x39))
    mean, sd = x.size / 128, math.sqrt(x.size / 128)
    assert abs(ups - mean) < 5 * sd
    # fp64 -> fp32 takes all 64 random bits: 2**-30 of an ulp is still seen
    y = np.full(1 << 16, 0x3FF0_0000_0000_0001, dtype=np.uint64)  # 1 + 2**-52
    b = convert(y, "fp64", "fp32", "stochastic", rng=np.random.default_rng(1))
    assert set(np.unique(b).tolist()) <= {0x3F80_0000, 0x3F80_0001}


# =====================================================================================
# round_to_integral
# =====================================================================================
NUMPY_INTEGRAL = {"nearest_even": np.rint, "toward_zero": np.trunc, "upward": np.ceil, "downward": np.floor}


def exact_integral(q: Fraction, mode: str) -> int:
    """The integer a mode rounds the exact rational q to (Python's exact arithmetic)."""
    t = math.trunc(q)
    if mode == "nearest_even":
        return round(q)
    if mode == "nearest_away":
        return t + (1 if q > 0 else -1) * (abs(q - t) >= Fraction(1, 2))
    if mode == "toward_zero":
        return t
    if mode == "upward":
        return math.ceil(q)
    if mode == "downward":
        return math.floor(q)
    if mode == "odd":
        return t if q == t or t % 2 else t + (1 if q > 0 else -1)
    raise AssertionError(mode)


@pytest.mark.parametrize("fmt, flt", [(sf.fp16, np.float16), (sf.bf16, np.float32)], ids=["fp16", "bf16"])
def test_round_to_integral_every_pattern_against_numpy(fmt, flt):
    """fp16 against numpy's float16 ufuncs, bf16 against float32 ufuncs on its exact
    widening; bits (zero signs included), NaNs quieted, flags."""
    p = all_patterns(fmt)
    v = ref_values(fmt, p)
    nan = np.isnan(v)
    for mode, ufunc in NUMPY_INTEGRAL.items():
        for exact in (False, True):
            got, fl = round_to_integral(p, fmt, mode, exact=exact, return_flags=True)
            with np.errstate(invalid="ignore"):
                want = ufunc(v.astype(flt)).astype(np.float64)
            gv = ref_values(fmt, got)
            np.testing.assert_array_equal(gv[~nan], want[~nan], err_msg=mode)
            np.testing.assert_array_equal(np.signbit(gv[~nan]), np.signbit(want[~nan]), err_msg=mode)
            np.testing.assert_array_equal(got[nan], p[nan] | fmt.storage_dtype.type(1 << (fmt.mantissa_bits - 1)))
            np.testing.assert_array_equal(fl.invalid, is_signaling(fmt, p, v))
            np.testing.assert_array_equal(fl.inexact, (want != v) & ~nan & exact, err_msg=mode)
            assert not (fl.overflow.any() or fl.underflow.any() or fl.divide_by_zero.any())


@pytest.mark.parametrize("mode", ["nearest_away", "odd", "nearest_even", "upward"])
@pytest.mark.parametrize("fmt", [sf.fp16] + list(NARROW), ids=fmt_id)
def test_round_to_integral_every_pattern_against_fractions(fmt, mode):
    p = all_patterns(fmt)
    v = ref_values(fmt, p)
    finite = np.isfinite(v)
    got = ref_values(fmt, round_to_integral(p[finite], fmt, mode))
    want = np.array([float(exact_integral(Fraction(x), mode)) for x in v[finite].tolist()])
    want = np.copysign(np.minimum(np.abs(want), fmt.max_finite), v[finite])   # see the e2m3 test
    if not fmt.has_negative_zero:
        want = np.where(want == 0, 0.0, want)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("fmt", [sf.fp32, sf.fp64], ids=fmt_id)
def test_round_to_integral_wide_formats_against_numpy(fmt):
    flt = ML_DTYPES[fmt]
    rng = np.random.default_rng(9)
    x = np.ldexp(rng.uniform(-2, 2, 100_000), rng.integers(-30, 60, 100_000)).astype(flt)
    x = np.concatenate([x, np.arange(-8, 8, 0.25, dtype=flt),
                        rng.integers(0, 1 << fmt.bits, 5000, dtype=np.uint64).astype(UINT[fmt.bits]).view(flt)])
    p = x.view(UINT[fmt.bits])
    nan = np.isnan(x)
    for mode, ufunc in NUMPY_INTEGRAL.items():
        got = round_to_integral(p, fmt, mode)
        with np.errstate(invalid="ignore"):
            want = ufunc(x).view(UINT[fmt.bits])
        np.testing.assert_array_equal(got[~nan], want[~nan], err_msg=mode)
    for mode in ("nearest_away", "odd"):
        got = round_to_integral(p[~nan], fmt, mode).view(flt).astype(np.float64)
        finite = np.isfinite(x[~nan])
        want = np.array([float(exact_integral(Fraction(float(q)), mode)) for q in x[~nan][finite]])
        np.testing.assert_array_equal(got[finite], want)


def test_round_to_integral_edges():
    h = sf.fp16
    assert int(round_to_integral(0xB800, h)) == 0x8000                 # -0.5 -> -0
    assert int(round_to_integral(0xB800, h, "nearest_away")) == 0xBC00  # -0.5 -> -1
    assert int(round_to_integral(0x7C00, h)) == 0x7C00 and int(round_to_integral(0xFC00, h)) == 0xFC00
    b, fl = round_to_integral(0x7D00, h, return_flags=True)
    assert int(b) == 0x7F00 and fl.invalid
    # FP6 E2M3: max 7.5 < 2**3, so 7.5 -> 8 overflows (saturating: no infinity)
    b, fl = round_to_integral(0x1F, "e2m3", return_flags=True)
    assert int(b) == 0x1F and fl.overflow and fl.inexact
    assert int(round_to_integral(0x1F, "e2m3", "toward_zero")) == 0x1E   # 7.0 = 0.11.110
    # a 5-bit IEEE format (max 3.5): 3.5 -> 4 is +inf
    tiny = sf.Format(exponent_bits=2, mantissa_bits=2)
    assert int(round_to_integral(0b01011, tiny)) == 0b01100


def test_round_to_integral_stochastic():
    x = sf.encode(np.full(1 << 16, 2.25), "fp16")
    r = round_to_integral(x, "fp16", "stochastic", rng=3)
    assert np.array_equal(r, round_to_integral(x, "fp16", "stochastic", rng=3))
    vals = sf.decode(r, "fp16")
    assert set(np.unique(vals).tolist()) == {2.0, 3.0}
    ups = np.count_nonzero(vals == 3.0)
    assert abs(ups - x.size / 4) < 5 * math.sqrt(x.size * 3 / 16)
    neg = round_to_integral(sf.encode(np.full(64, -0.25), "fp16"), "fp16", "stochastic", rng=0)
    assert set(neg.tolist()) <= {0x8000, 0xBC00}                       # zero keeps the sign


# =====================================================================================
# to_int
# =====================================================================================
INT_DTYPES = (np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64)


def invalid_integer(dtype):
    info = np.iinfo(dtype)
    return info.min if INVALID_INTEGER["signed"] == "minimum" and info.min < 0 else info.max


def expected_to_int(values, mode, dtype, saturate):
    info = np.iinfo(dtype)
    result, invalid, inexact = [], [], []
    for v in values.tolist():
        if math.isnan(v):
            result.append(0 if saturate else invalid_integer(dtype))
            invalid.append(True)
            inexact.append(False)
            continue
        n = exact_integral(Fraction(v), mode) if math.isfinite(v) else (info.max + 1 if v > 0 else info.min - 1)
        ok = info.min <= n <= info.max
        result.append(n if ok else (max(info.min, min(n, info.max)) if saturate else invalid_integer(dtype)))
        invalid.append(not ok)
        inexact.append(ok and n != v)
    return np.array(result, dtype=dtype), np.array(invalid), np.array(inexact)


_FP16_INTEGRALS: dict[str, np.ndarray] = {}


def fp16_integrals(mode):
    """exact_integral of every fp16 pattern's value, as float64 (exact: |n| <= 65504), with
    NaN and +-inf kept; computed once per mode."""
    if mode not in _FP16_INTEGRALS:
        v = ref_values(sf.fp16, all_patterns(sf.fp16))
        _FP16_INTEGRALS[mode] = np.array([float(exact_integral(Fraction(x), mode)) if math.isfinite(x) else x
                                          for x in v.tolist()])
    return _FP16_INTEGRALS[mode]


def expected_fp16_to_int(v, n, dtype, saturate):
    """expected_to_int for fp16 values v with integrals n, vectorised (all exact in float64)."""
    info = np.iinfo(dtype)
    ok = (n >= info.min) & (n <= info.max)   # |n| <= 65504: no rounding in the comparisons
    want = np.zeros(n.shape, dtype=dtype)
    want[ok] = n[ok].astype(np.int64).astype(dtype)
    if saturate:
        want[~ok & (n < 0)] = info.min
        want[~ok & (n > 0)] = info.max   # NaN: 0
    else:
        want[~ok] = invalid_integer(dtype)
    return want, ~ok, ok & (n != v)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("mode", MODES)
def test_to_int_every_fp16_pattern(mode, dtype):
    p = all_patterns(sf.fp16)
    v = ref_values(sf.fp16, p)
    n = fp16_integrals(mode)
    for saturate in (False, True):
        got, fl = to_int(p, sf.fp16, mode, dtype, exact=True, saturate=saturate, return_flags=True)
        want, invalid, inexact = expected_fp16_to_int(v, n, dtype, saturate)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(fl.invalid, invalid)
        np.testing.assert_array_equal(fl.inexact, inexact)
    assert not to_int(p, sf.fp16, mode, dtype, return_flags=True)[1].inexact.any()  # not exact=True


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int32], ids=lambda d: np.dtype(d).name)
def test_to_int_fp64_range_edges(dtype):
    info = np.iinfo(dtype)
    edges = [float(info.min), float(info.max) + 1.0, -0.0, 0.5, -0.5, -1.0, 2.0**52 + 0.5]
    x = np.array(edges, dtype=np.float64)
    x = np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf), [np.inf, -np.inf, np.nan]])
    rng = np.random.default_rng(2)
    x = np.concatenate([x, np.ldexp(rng.uniform(-2, 2, 3000), rng.integers(-3, 66, 3000))])
    for mode in MODES:
        got, fl = to_int(x.view(np.uint64), sf.fp64, mode, dtype, return_flags=True)
        want, invalid, _ = expected_to_int(x, mode, dtype, False)
        np.testing.assert_array_equal(got, want, err_msg=mode)
        np.testing.assert_array_equal(fl.invalid, invalid, err_msg=mode)


def test_to_int_stochastic_and_scalars():
    r = to_int(sf.encode(np.full(4096, 0.5), "fp16"), "fp16", "stochastic", rng=1)
    assert set(r.tolist()) == {0, 1}
    assert isinstance(to_int(0x3C00, "fp16"), np.int64) and to_int(0x3C00, "fp16") == 1
    assert to_int(0xC000, "fp16", dtype="int8") == -2


# =====================================================================================
# from_int
# =====================================================================================
def expected_from_int(ints, fmt, mode, saturate=False):
    bits, flags = [], []
    for n in ints:
        e = round_exact(Fraction(abs(n)), n < 0, fmt, mode, saturate=saturate)
        bits.append(pattern_of(e.value, e.negative, fmt))
        flags.append((e.invalid, False, e.overflow, e.underflow, e.inexact))
    return np.array(bits, dtype=np.uint64), np.array(flags).T


@pytest.mark.parametrize("fmt", [sf.fp64, sf.fp32, sf.bf16, sf.fp16, sf.fp8_e4m3, sf.fp8_e5m2fnuz, sf.fp4_e2m1],
                         ids=fmt_id)
def test_from_int_mpfr(fmt):
    rng = np.random.default_rng(fmt.bits * 7 + fmt.mantissa_bits)
    ints = [0, 1, -1, 2**53 + 1, -(2**53 + 1), 2**63 - 1, -2**63, 2**64 - 1, 2049, 65519, 65520, 448, 464]
    ints += [int(v) >> int(s) for v, s in zip(rng.integers(-2**63, 2**63 - 1, 300, dtype=np.int64),
                                                   rng.integers(0, 63, 300))]
    big = [2**200 + 1, -(2**1100), 3**700]
    for mode in MODES:
        for saturate in (False, True):
            signed = np.array([n for n in ints if -2**63 <= n < 2**63], dtype=np.int64)
            got, fl = from_int(signed, fmt, mode, saturate=saturate, return_flags=True)
            want, want_flags = expected_from_int(signed.tolist(), fmt, mode, saturate)
            np.testing.assert_array_equal(got.astype(np.uint64), want, err_msg=f"{mode} {saturate}")
            np.testing.assert_array_equal(np.stack([getattr(fl, n) for n in FLAGS]), want_flags)
            for n in big + [2**64 - 1]:
                b, f = from_int(n, fmt, mode, saturate=saturate, return_flags=True)
                wb, wf = expected_from_int([n], fmt, mode, saturate)
                assert (int(b), tuple(bool(getattr(f, k)) for k in FLAGS)) == (int(wb[0]), tuple(wf[:, 0]))
    u = np.array([2**64 - 1, 2**63 + 2**40], dtype=np.uint64)
    np.testing.assert_array_equal(from_int(u, fmt).astype(np.uint64),
                                  expected_from_int(u.tolist(), fmt, "nearest_even")[0])


def test_from_int_matches_numpy_casts():
    rng = np.random.default_rng(8)
    n64 = rng.integers(-2**63, 2**63 - 1, 1 << 18, dtype=np.int64) >> rng.integers(0, 63, 1 << 18)
    np.testing.assert_array_equal(from_int(n64, sf.fp32), n64.astype(np.float32).view(np.uint32))
    np.testing.assert_array_equal(from_int(n64, sf.fp64), n64.astype(np.float64).view(np.uint64))
    n32 = n64.astype(np.int32)
    np.testing.assert_array_equal(from_int(n32, sf.fp32), n32.astype(np.float32).view(np.uint32))
    n16 = n64.astype(np.int16)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(from_int(n16, sf.fp16), n16.astype(np.float16).view(np.uint16))


def test_from_int_inputs():
    assert isinstance(from_int(3, "fp16"), np.uint16) and from_int(np.int8(-3), "fp16") == 0xC200
    assert from_int([], "fp16").shape == (0,)
    assert from_int([[1, 2]], "bf16").shape == (1, 2)
    with pytest.raises(TypeError, match="^ints must"):
        from_int(1.5, "fp16")
    with pytest.raises(TypeError, match="^ints must"):
        from_int(np.array([1.0]), "fp16")
    with pytest.raises(TypeError, match="^ints must"):
        from_int([2**70, 1], "fp16")
    with pytest.raises(TypeError, match="^ints must"):
        from_int(True, "fp16")


# =====================================================================================
# the public boundary
# =====================================================================================
def test_scalars_shapes_and_flags():
    b = convert(0x3C00, "fp16", "fp32")
    assert isinstance(b, np.uint32) and b == 0x3F80_0000
    r, fl = convert(0x3C01, "fp16", "e4m3", return_flags=True)
    assert fl.shape == () and fl.inexact == np.True_
    x = np.arange(12, dtype=np.uint16).reshape(3, 4)[:, ::2]          # non-contiguous
    assert convert(x, "fp16", "fp32").shape == (3, 2)
    assert convert(np.zeros((0, 3), dtype=np.uint16), "fp16", "e4m3").shape == (0, 3)
    big = np.arange(40_000, dtype=np.uint32) + np.uint32(0x3F80_0000)  # several blocks
    want = big.view(np.float32).astype(np.float16).view(np.uint16)
    np.testing.assert_array_equal(convert(big, "fp32", "fp16"), want)


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="^src_fmt="):
        convert(0, "fp7", "fp16")
    with pytest.raises(TypeError, match="^dst_fmt must"):
        convert(0, "fp16", 16)
    with pytest.raises(ValueError, match="^bits holds"):
        convert([0x1_0000], "fp16", "fp32")
    with pytest.raises(TypeError, match="^bits must"):
        round_to_integral(1.0, "fp16")
    with pytest.raises(ValueError, match="^rounding="):
        to_int(0, "fp16", "nearest")
    with pytest.raises(TypeError, match="^dtype must be a numpy integer dtype"):
        to_int(0, "fp16", dtype=np.float32)
    with pytest.raises(TypeError, match="^exact must"):
        round_to_integral(0, "fp16", exact="no")
    with pytest.raises(TypeError, match="^denormals_are_zero must"):
        convert(0, "fp16", "fp32", denormals_are_zero=None)
