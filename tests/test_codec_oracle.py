"""``softfloat.encode`` against independent oracles, bit for bit and flag for flag.

The reference for every finite input is ``tests/oracle.py``: MPFR (through gmpy2) with the
target's precision and exponent range, plus exact ``Fraction`` logic for ties-away and
round-to-odd.  The oracle returns an exact value; :func:`pattern_of` below turns it into a
bit pattern with plain integer/Fraction arithmetic, so no softfloat code is involved in
any expected result.  The oracle itself is first checked against hardware casts (numpy's
float64 -> float32, with the CPU's overflow/underflow flags) and against numpy float16 and
ml_dtypes, so the two references vouch for each other.

Special inputs (infinities, NaNs) have no MPFR counterpart; their expected results are
spelled out from the documented semantics (IEEE 754-2019 6.2.3 for payloads, the policies
in the ``encode`` docstring for formats without infinities or NaNs), and the payload rule
is itself pinned to the hardware float64 <-> float32 casts.

Cases are organised by number class: specials, zeros, subnormals, normals, binade
boundaries, the underflow boundary, the overflow boundary and ties (midpoints), each with
the float64/float32 neighbours of every anchor, both signs.  The oracle is slow (Python per
element), so in CI each test checks every ``oracle_stride``-th case, starting at an offset
that depends on the test id; ``--runslow`` checks them all.
"""

from __future__ import annotations

import decimal
import math
import zlib
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import softfloat as sf
from tests.oracle import nan_pattern, pattern_of, round_exact


# =====================================================================================
# the grid
# =====================================================================================
CUSTOM_FORMATS = (
    sf.Format(exponent_bits=6, mantissa_bits=9),
    sf.Format(exponent_bits=3, mantissa_bits=4, specials="fnuz"),
    sf.Format(exponent_bits=3, mantissa_bits=2, specials="fn"),
)
FORMATS = sf.catalogue() + CUSTOM_FORMATS
MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd")
TININESS = ("after", "before")
NUMBER_CLASSES = ("zeros", "subnormals", "normals", "binade_boundaries",
                  "underflow_boundary", "overflow_boundary", "ties")
FLAGS_CHECKED = ("invalid", "divide_by_zero", "overflow", "underflow", "inexact")

#: representable magnitudes sampled per range for formats too big to enumerate
SAMPLE = 400
INPUT_PRECISION = {np.dtype(np.float64): 53, np.dtype(np.float32): 24, np.dtype(np.float16): 11}


def fmt_id(fmt: sf.Format) -> str:
    return fmt.name


# =====================================================================================
# the oracle side: exact value -> bit pattern, without softfloat
# =====================================================================================
def oracle(q: Fraction, negative: bool, fmt: sf.Format, mode: str, **policy):
    """(bits, flags) of the correctly rounded (-1)**negative * q; flags in FLAGS_CHECKED order."""
    exp = round_exact(abs(q), negative, fmt, mode, **policy)
    bits = pattern_of(exp.value, exp.negative, fmt)
    return bits, (exp.invalid, False, exp.overflow, exp.underflow, exp.inexact)


def oracle_array(x: np.ndarray, fmt: sf.Format, mode: str, **policy):
    """The oracle applied to each element of a float or integer array."""
    bits = np.empty(x.size, dtype=np.uint64)
    flags = np.zeros((len(FLAGS_CHECKED), x.size), dtype=bool)
    for i, xi in enumerate(x.ravel().tolist()):
        if isinstance(xi, float):
            q, negative = abs(Fraction(xi)), math.copysign(1.0, xi) < 0
        else:
            q, negative = Fraction(abs(xi)), xi < 0
        bits[i], flags[:, i] = oracle(q, negative, fmt, mode, **policy)
    return bits, flags


# =====================================================================================
# checking
# =====================================================================================
def stride_offset(request, stride: int) -> int:
    """A per-test start for the CI slice, so the tests together cover every case."""
    return zlib.crc32(request.node.nodeid.encode()) % stride


def _flag_names(raised) -> str:
    return "|".join(n for n, on in zip(FLAGS_CHECKED, raised) if on) or "-"


def _show(x) -> str:
    if isinstance(x, (float, np.floating)):
        return float(x).hex()
    return repr(x)


def assert_encode_matches_oracle(x, fmt, mode, stride=1, offset=0, **policy):
    """Encode all of ``x``; compare every ``stride``-th result (bits and flags) with the oracle."""
    x = np.asarray(x)
    assert x.size > 0, "no cases generated"
    got, flags = sf.encode(x, fmt, mode, return_flags=True, **policy)
    assert got.dtype == fmt.storage_dtype and got.shape == x.shape
    pick = np.arange(offset % stride, x.size, stride)
    xs = x.ravel()[pick]
    want_bits, want_flags = oracle_array(xs, fmt, mode, **policy)
    got_bits = got.ravel()[pick].astype(np.uint64)
    got_flags = np.stack([getattr(flags, name).ravel()[pick] for name in FLAGS_CHECKED])
    bad = np.nonzero((got_bits != want_bits) | np.any(got_flags != want_flags, axis=0))[0]
    if bad.size:
        rows = [f"  x={_show(xs[i])} ({xs.dtype}): got {int(got_bits[i]):#x} {_flag_names(got_flags[:, i])}"
                f"  want {int(want_bits[i]):#x} {_flag_names(want_flags[:, i])}" for i in bad[:12]]
        pytest.fail(f"{bad.size} of {xs.size} checked cases differ from the oracle "
                    f"({fmt.name}, {mode}, {policy}):\n" + "\n".join(rows))


def assert_scalar_matches_oracle(x, q: Fraction, negative: bool, fmt, mode, **policy):
    got, flags = sf.encode(x, fmt, mode, return_flags=True, **policy)
    want_bits, want_flags = oracle(q, negative, fmt, mode, **policy)
    got_flags = tuple(bool(getattr(flags, n)) for n in FLAGS_CHECKED)
    assert (int(got), got_flags) == (want_bits, want_flags), (
        f"encode({x!r}, {fmt.name}, {mode}, {policy}): got {int(got):#x} {got_flags}, "
        f"want {want_bits:#x} {want_flags}")


# =====================================================================================
# case generation (inputs only: expected results always come from the oracle)
# =====================================================================================
def pattern_values(fmt: sf.Format, mags) -> np.ndarray:
    """float64 values of magnitude patterns, with an unbounded exponent (so the pattern
    just above max_finite gives the next value of the same binade spacing)."""
    mags = np.asarray(mags, dtype=np.uint64)
    m = fmt.mantissa_bits
    e = (mags >> np.uint64(m)).astype(np.int64)
    f = (mags & np.uint64((1 << m) - 1)).astype(np.float64)
    sig = np.where(e > 0, f + 2.0**m, f)
    with np.errstate(over="ignore"):
        return np.ldexp(sig, (np.maximum(e, 1) + (fmt.emin - 1 - m)).astype(np.int32))


def sample_range(lo: int, hi: int, rng, size: int = SAMPLE) -> np.ndarray:
    """All integers in [lo, hi) when few, else both ends plus a random sample."""
    if hi - lo <= size:
        return np.arange(lo, hi, dtype=np.uint64)
    inner = rng.integers(lo, hi, size=size, dtype=np.uint64, endpoint=False)
    ends = np.array([lo, lo + 1, hi - 2, hi - 1], dtype=np.uint64)
    return np.unique(np.concatenate([ends, inner]))


def midpoints(fmt: sf.Format, lower_mags) -> np.ndarray:
    """Exact midpoints between magnitude patterns k and k + 1 (needs precision <= 52)."""
    assert fmt.precision <= 52
    lower_mags = np.asarray(lower_mags, dtype=np.uint64)
    a = pattern_values(fmt, lower_mags)
    b = pattern_values(fmt, lower_mags + np.uint64(1))
    return (a + b) * 0.5


def anchors(fmt: sf.Format, number_class: str, rng) -> np.ndarray:
    """Positive float64 anchor values of one number class (neighbours are added later)."""
    m = fmt.mantissa_bits
    top = fmt.max_finite_bits           # magnitude pattern of max_finite
    first_normal = 1 << m
    has_mid = fmt.precision <= 52
    u = np.uint64
    if number_class == "zeros":
        return np.array([0.0])
    if number_class == "subnormals":
        return pattern_values(fmt, sample_range(1, first_normal, rng))
    if number_class == "normals":
        return pattern_values(fmt, sample_range(first_normal, top + 1, rng))
    if number_class == "ties":
        return midpoints(fmt, sample_range(0, top + 1, rng)) if has_mid else np.array([])
    if number_class == "binade_boundaries":
        powers = np.arange(1, (top >> m) + 2, dtype=u) << u(m)  # every 2**e, and the one past max
        parts = [pattern_values(fmt, powers)]
        if has_mid:
            parts += [midpoints(fmt, powers - u(1)), midpoints(fmt, powers)]
        return np.concatenate(parts)
    if number_class == "underflow_boundary":
        reps = pattern_values(fmt, [1, 2, first_normal - 1, first_normal, first_normal + 1])
        mids = midpoints(fmt, [0, 1, first_normal - 1, first_normal]) if has_mid else []
        tiny = fmt.min_subnormal * np.array([0.25, 0.375, 0.5, 0.625, 0.75])
        far = [np.finfo(np.float64).smallest_subnormal, 2.0**-1022, 1e-300, 2.0**-149, 2.0**-140]
        return np.concatenate([reps, mids, tiny, far])
    if number_class == "overflow_boundary":
        reps = pattern_values(fmt, np.arange(top - 1, top + 3, dtype=u))
        mids = midpoints(fmt, np.arange(top - 1, top + 2, dtype=u)) if has_mid else []
        huge = [fmt.max_finite * 1.5, fmt.max_finite * 2, fmt.max_finite * 1024, 1e300,
                float(np.finfo(np.float64).max), float(np.finfo(np.float32).max), 65504.0, 65520.0]
        return np.concatenate([reps, mids, huge])
    raise AssertionError(number_class)


def with_neighbours(values, dtype) -> np.ndarray:
    """The values exactly representable (and finite) in ``dtype``, their neighbours in
    ``dtype`` on both sides, and all of it with both signs."""
    v = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore"):
        d = v.astype(dtype)
    keep = np.isfinite(d) & (d.astype(np.float64) == v)
    d = d[keep]
    with np.errstate(over="ignore"):
        out = np.concatenate([d, np.nextafter(d, dtype(0)), np.nextafter(d, dtype(np.inf))])
    out = out[np.isfinite(out)]
    return np.unique(np.concatenate([out, -out]))


def class_cases(fmt, number_class, dtype, seed_text: str) -> np.ndarray:
    rng = np.random.default_rng(zlib.crc32(seed_text.encode()))
    return with_neighbours(anchors(fmt, number_class, rng), dtype)


def random_floats(fmt, dtype, n, rng) -> np.ndarray:
    """Random float patterns: full random fractions, exponents spanning a little below the
    format's smallest subnormal to a little above its overflow threshold, random signs."""
    info = np.finfo(dtype)
    src_m, src_bias = info.nmant, info.maxexp - 1
    lo = max(fmt.emin - fmt.mantissa_bits - 4 + src_bias, 0)
    hi = min(fmt.emax + 4 + src_bias, 2 * src_bias)
    uint = {8: np.uint64, 4: np.uint32, 2: np.uint16}[np.dtype(dtype).itemsize]
    exps = rng.integers(lo, hi + 1, size=n).astype(uint)
    fracs = rng.integers(0, 1 << src_m, size=n, dtype=np.uint64).astype(uint)
    signs = rng.integers(0, 2, size=n).astype(uint)
    width = np.dtype(dtype).itemsize * 8
    pats = (signs << uint(width - 1)) | (exps << uint(src_m)) | fracs
    return pats.view(dtype)


def _class_params(dtype):
    """(fmt, class, mode) combinations whose cases exist for inputs of ``dtype``."""
    params = []
    for fmt in FORMATS:
        if dtype is np.float32 and fmt.precision >= 24:
            continue  # float32 -> fp32/fp64 is exact; covered by the random tests
        for cls in NUMBER_CLASSES:
            if cls == "ties" and fmt.precision + 1 > INPUT_PRECISION[np.dtype(dtype)]:
                continue  # midpoints of fp64 are not float64 values: see the exact-scalar tests
            for mode in MODES:
                params.append(pytest.param(fmt, cls, mode, id=f"{fmt.name}-{cls}-{mode}"))
    return params


# =====================================================================================
# 0. the oracle against hardware and numpy / ml_dtypes (the references vouch for each other)
# =====================================================================================
def _hardware_flags(x: np.ndarray, dtype):
    """Per element (overflow, underflow) as the CPU reports them for a numpy cast."""
    out = np.zeros((2, x.size), dtype=bool)
    for i, xi in enumerate(x):
        for j, which in enumerate(("over", "under")):
            try:
                with np.errstate(all="ignore", **{which: "raise"}):
                    np.asarray(xi).astype(dtype)
            except FloatingPointError:
                out[j, i] = True
    return out


def test_oracle_matches_hardware_float64_to_float32():
    """MPFR nearest-even with after-rounding tininess == the x86/ARM float64->float32 cast
    (bits, and the CPU's overflow and underflow flags)."""
    rng = np.random.default_rng(1)
    x = np.concatenate([
        random_floats(sf.fp32, np.float64, 300, rng),
        class_cases(sf.fp32, "underflow_boundary", np.float64, "hw"),
        class_cases(sf.fp32, "overflow_boundary", np.float64, "hw"),
    ])
    with np.errstate(over="ignore", under="ignore"):
        hw_bits = x.astype(np.float32).view(np.uint32)
    hw_flags = _hardware_flags(x, np.float32)
    bits, flags = oracle_array(x, sf.fp32, "nearest_even")
    np.testing.assert_array_equal(bits, hw_bits)
    np.testing.assert_array_equal(flags[2], hw_flags[0])
    np.testing.assert_array_equal(flags[3], hw_flags[1])


@pytest.mark.parametrize("target, reference", [
    (sf.fp16, np.float16), (sf.bf16, ml_dtypes.bfloat16),
    (sf.fp8_e4m3, ml_dtypes.float8_e4m3fn), (sf.fp8_e5m2, ml_dtypes.float8_e5m2),
    (sf.fp8_e4m3fnuz, ml_dtypes.float8_e4m3fnuz), (sf.fp8_e5m2fnuz, ml_dtypes.float8_e5m2fnuz),
], ids=lambda v: getattr(v, "name", None) or "")
def test_oracle_matches_numpy_and_ml_dtypes(target, reference):
    """MPFR nearest-even == numpy float16 / ml_dtypes casts of float32 values (finite results)."""
    rng = np.random.default_rng(2)
    x = np.concatenate([random_floats(target, np.float32, 400, rng)] + [
        class_cases(target, cls, np.float32, "ref") for cls in ("ties", "underflow_boundary")])
    with np.errstate(over="ignore"):
        ref = x.astype(reference)
    ref_values = ref.astype(np.float64)
    finite = np.isfinite(ref_values)
    ref_bits = ref.view(np.uint8 if np.dtype(reference).itemsize == 1 else np.uint16)
    bits, _ = oracle_array(x[finite], target, "nearest_even")
    np.testing.assert_array_equal(bits, ref_bits[finite].astype(np.uint64))
    assert finite.sum() > 0.5 * x.size


# =====================================================================================
# 1. float64 and float32 inputs, by number class, every mode and both tininess choices
# =====================================================================================
@pytest.mark.parametrize("fmt, number_class, mode", _class_params(np.float64))
def test_encode_float64_by_class(fmt, number_class, mode, oracle_stride, request):
    x = class_cases(fmt, number_class, np.float64, request.node.name)
    offset = stride_offset(request, oracle_stride)
    for tininess in TININESS:
        assert_encode_matches_oracle(x, fmt, mode, oracle_stride, offset, tininess=tininess)


@pytest.mark.parametrize("fmt, number_class, mode", _class_params(np.float32))
def test_encode_float32_by_class(fmt, number_class, mode, oracle_stride, request):
    x = class_cases(fmt, number_class, np.float32, request.node.name)
    offset = stride_offset(request, oracle_stride)
    for tininess in TININESS:
        assert_encode_matches_oracle(x, fmt, mode, oracle_stride, offset, tininess=tininess)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt", FORMATS, ids=fmt_id)
def test_encode_random_floats(fmt, mode, dtype, oracle_stride, request):
    """Random inputs with full-width fractions, spanning the subnormal..overflow range."""
    rng = np.random.default_rng(zlib.crc32(request.node.name.encode()))
    n = 1500 if dtype is not np.float16 else 600
    x = random_floats(fmt, dtype, n, rng)
    x = x[np.isfinite(x)]
    offset = stride_offset(request, oracle_stride)
    for tininess in TININESS:
        assert_encode_matches_oracle(x, fmt, mode, oracle_stride, offset + 1, tininess=tininess)


FP8_AND_SMALLER = [f for f in FORMATS if f.bits <= 8]


def every_finite_float16() -> np.ndarray:
    x = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    return x[np.isfinite(x)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt", FP8_AND_SMALLER, ids=fmt_id)
def test_encode_every_float16_sliced(fmt, mode, oracle_stride, request):
    """Every finite float16 value into the FP8/FP6/FP4 formats; the oracle checks a slice
    (every 16 * oracle_stride-th value, per-test offset); the full sweep is below."""
    stride = 16 * oracle_stride
    offset = stride_offset(request, stride)
    for tininess in TININESS:
        assert_encode_matches_oracle(every_finite_float16(), fmt, mode, stride, offset,
                                     tininess=tininess)


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt", FP8_AND_SMALLER, ids=fmt_id)
def test_encode_every_float16_full_sweep(fmt, mode):
    """Every finite float16 value into every FP8/FP6/FP4 format (63488 oracle calls each)."""
    for tininess in TININESS:
        assert_encode_matches_oracle(every_finite_float16(), fmt, mode, tininess=tininess)


# =====================================================================================
# 2. saturation and flush-to-zero
# =====================================================================================
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt", FORMATS, ids=fmt_id)
def test_encode_saturate(fmt, mode, oracle_stride, request):
    """saturate=True: every overflow gives +-max_finite, still raising overflow and inexact."""
    rng = np.random.default_rng(zlib.crc32(request.node.name.encode()))
    x = np.concatenate([class_cases(fmt, "overflow_boundary", np.float64, request.node.name),
                        class_cases(fmt, "binade_boundaries", np.float64, request.node.name),
                        random_floats(fmt, np.float64, 300, rng)])
    assert_encode_matches_oracle(x, fmt, mode, oracle_stride, stride_offset(request, oracle_stride),
                                 saturate=True)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt", FORMATS, ids=fmt_id)
def test_encode_flush_to_zero(fmt, mode, oracle_stride, request):
    """subnormals=False: tiny results (by the chosen tininess) become signed zeros and
    raise underflow and inexact; the rest is unchanged."""
    x = np.concatenate([class_cases(fmt, cls, np.float64, request.node.name)
                        for cls in ("zeros", "subnormals", "underflow_boundary", "ties")])
    x = x[np.abs(x) <= 4 * fmt.min_normal]
    offset = stride_offset(request, oracle_stride)
    for tininess in TININESS:
        assert_encode_matches_oracle(x, fmt, mode, oracle_stride, offset, tininess=tininess,
                                     subnormals=False)


@pytest.mark.parametrize("fmt", FORMATS, ids=fmt_id)
def test_encode_saturate_and_flush_together(fmt, oracle_stride, request):
    x = np.concatenate([class_cases(fmt, cls, np.float64, request.node.name)
                        for cls in ("underflow_boundary", "overflow_boundary")])
    offset = stride_offset(request, oracle_stride)
    for mode in MODES:
        assert_encode_matches_oracle(x, fmt, mode, oracle_stride, offset, saturate=True,
                                     subnormals=False, tininess="before")


# =====================================================================================
# 3. specials: infinities and NaNs (documented semantics; payload rule pinned to hardware)
# =====================================================================================
def nan_inputs(dtype):
    """(array, fraction fields) of +-inf, quiet NaNs and signaling NaNs of ``dtype``."""
    info = np.finfo(dtype)
    m, width = info.nmant, np.dtype(dtype).itemsize * 8
    quiet = 1 << (m - 1)
    fracs = [0, quiet, quiet | 1, (1 << m) - 1, quiet | (1 << (m - 2)),   # inf, qNaNs
             1, 1 << (m - 2), quiet - 1, 1 << (m - 4), 0b101 << (m - 4)]  # sNaNs
    exp_ones = ((1 << (width - 1 - m)) - 1) << m
    pats = [sign | exp_ones | f for sign in (0, 1 << (width - 1)) for f in fracs]
    uint = {8: np.uint64, 4: np.uint32, 2: np.uint16}[np.dtype(dtype).itemsize]
    return np.array(pats, dtype=uint).view(dtype), np.array(fracs * 2, dtype=np.uint64), m


def expected_special(fmt, negative: bool, frac: int, src_m: int, saturate: bool):
    """Documented result of encoding +-inf (frac == 0) or a NaN with fraction ``frac``."""
    m, e_bits = fmt.mantissa_bits, fmt.exponent_bits
    sign = (1 << (fmt.bits - 1)) if negative else 0
    policy = fmt.specials.value
    if frac == 0:  # infinity
        if policy == "ieee":
            return sign | (((1 << e_bits) - 1) << m), ()
        if saturate or policy == "finite":
            return sign | fmt.max_finite_bits, ("overflow", "inexact")
        return nan_pattern(fmt, negative), ("invalid",)
    signaling = not (frac >> (src_m - 1)) & 1
    if policy == "finite":
        return 0, ("invalid",)
    flags = ("invalid",) if signaling else ()
    if policy == "ieee":
        # IEEE 754-2019 6.2.3: keep the sign and the leading payload bits, set the quiet bit
        payload = frac >> (src_m - m) if src_m >= m else frac << (m - src_m)
        return sign | (((1 << e_bits) - 1) << m) | (1 << (m - 1)) | (payload & ((1 << m) - 1)), flags
    return nan_pattern(fmt, negative), flags


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("fmt", FORMATS, ids=fmt_id)
def test_encode_infinities_and_nans(fmt, dtype):
    x, fracs, src_m = nan_inputs(dtype)
    negative = np.signbit(x)
    for saturate in (False, True):
        want = [expected_special(fmt, bool(n), int(f), src_m, saturate) for n, f in zip(negative, fracs)]
        want_bits = np.array([w[0] for w in want], dtype=np.uint64)
        for mode in MODES:
            for subnormals in (True, False):
                got, flags = sf.encode(x, fmt, mode, saturate=saturate, subnormals=subnormals,
                                       return_flags=True)
                np.testing.assert_array_equal(got.astype(np.uint64), want_bits,
                                              err_msg=f"{mode} saturate={saturate}")
                for name in FLAGS_CHECKED:
                    want_flag = np.array([name in w[1] for w in want])
                    np.testing.assert_array_equal(getattr(flags, name), want_flag,
                                                  err_msg=f"flag {name}, {mode}, saturate={saturate}")


def test_nan_payload_rule_matches_hardware():
    """The payload rule used above is what the CPU does for float64 <-> float32, and
    softfloat agrees with the CPU bit for bit on those NaNs."""
    for src, dst, fmt in ((np.float64, np.float32, sf.fp32), (np.float32, np.float64, sf.fp64)):
        x, fracs, src_m = nan_inputs(src)
        nans = fracs != 0
        with np.errstate(invalid="ignore"):
            hw = x[nans].astype(dst).view(np.uint32 if dst is np.float32 else np.uint64)
        rule = [expected_special(fmt, bool(n), int(f), src_m, False)[0]
                for n, f in zip(np.signbit(x[nans]), fracs[nans])]
        np.testing.assert_array_equal(hw.astype(np.uint64), np.array(rule, dtype=np.uint64))
        np.testing.assert_array_equal(sf.encode(x[nans], fmt), hw)


@pytest.mark.parametrize("fmt", FORMATS, ids=fmt_id)
def test_encode_special_scalars(fmt):
    """Special exact scalars: 'inf', 'nan', 'snan', Decimal NaN/sNaN/Infinity, Python floats."""
    def check(x, negative, kind):
        bits, flags = sf.encode(x, fmt, return_flags=True)
        frac = {"inf": 0, "nan": 1 << 51, "snan": 1}[kind]
        want_bits, want_flags = expected_special(fmt, negative, frac, 52, False)
        raised = tuple(n for n in FLAGS_CHECKED if getattr(flags, n))
        assert raised == want_flags, (x, raised)
        if kind == "snan" and fmt.specials.value == "ieee":
            # the quieted sNaN's payload is not specified for a payload-less input
            m = fmt.mantissa_bits
            quiet_nan_class = ((1 << fmt.exponent_bits) - 1) << m | (1 << (m - 1))
            assert int(bits) & quiet_nan_class == quiet_nan_class, hex(int(bits))
            assert bool(int(bits) >> (fmt.bits - 1)) == negative
        else:
            assert int(bits) == want_bits, (x, hex(int(bits)), hex(want_bits))

    for text, negative, kind in [("inf", False, "inf"), ("-Infinity", True, "inf"), ("+inf", False, "inf"),
                                 ("nan", False, "nan"), ("-NaN", True, "nan"), ("snan", False, "snan"),
                                 ("-sNaN", True, "snan")]:
        check(text, negative, kind)
        check(decimal.Decimal(text), negative, kind)
    check(math.inf, False, "inf")
    check(-math.inf, True, "inf")
    check(math.nan, False, "nan")
    check(-math.nan, True, "nan")


# =====================================================================================
# 4. exact scalars: Fraction, Decimal, decimal/hex/ratio strings, huge ints
# =====================================================================================
EXACT_SCALARS = [
    # (input, exact value it denotes, spelled without the parser under test)
    ("6.36", Fraction(636, 100)),
    ("-6.36", Fraction(-636, 100)),
    ("1.00048828125000000000000000001", Fraction(decimal.Decimal("1.00048828125000000000000000001"))),
    ("1.00048828125", Fraction(2049, 2048)),
    ("0.1", Fraction(1, 10)),
    ("-0", Fraction(0)),
    ("1e-400", Fraction(1, 10**400)),
    ("-2.5e+400", Fraction(-25 * 10**399)),
    ("65519.99999999999999999", Fraction(6551999999999999999999, 10**17)),
    ("65520", Fraction(65520)),
    ("448", Fraction(448)), ("464", Fraction(464)), ("464.0000000000000000001", Fraction(4640000000000000000001, 10**19)),
    ("0x1.8p-3", Fraction(3, 16)),
    ("-0x1.fffffffffffff8p1023", -Fraction(0x1FFFFFFFFFFFFF8, 2**56) * 2**1023),
    ("0x1p-1075", Fraction(1, 2**1075)),
    ("0x1.0000000000001p-1075", Fraction(2**52 + 1, 2**(52 + 1075))),
    ("0x.8p1", Fraction(1)),
    ("0X1P+1024", Fraction(2**1024)),
    ("0x1.00000100000000000000001p0", Fraction(0x100000100000000000000001, 16**23)),
    ("1/3", Fraction(1, 3)),
    ("-22/7", Fraction(-22, 7)),
    (Fraction(1, 3), Fraction(1, 3)),
    (Fraction(-2, 3 * 2**140), Fraction(-2, 3 * 2**140)),
    (Fraction(1, 2**1075) + Fraction(1, 2**3000), Fraction(1, 2**1075) + Fraction(1, 2**3000)),
    (Fraction(1, 3**800), Fraction(1, 3**800)),
    (Fraction(3**700), Fraction(3**700)),
    (Fraction(2**24 + 1, 2**150), Fraction(2**24 + 1, 2**150)),
    (decimal.Decimal("6.36"), Fraction(636, 100)),
    (decimal.Decimal("-1E-45"), Fraction(-1, 10**45)),
    (decimal.Decimal("3.4028235677973366e38"), Fraction(34028235677973366 * 10**22)),
    (decimal.Decimal("-0"), Fraction(0)),
    (2**64 + 1, Fraction(2**64 + 1)),
    (-(2**64 + 1), Fraction(-(2**64 + 1))),
    (2**53 + 1, Fraction(2**53 + 1)),
    (2**1024 - 2**970, Fraction(2**1024 - 2**970)),
    (2**1024 - 2**970 - 1, Fraction(2**1024 - 2**970 - 1)),
    (10**400, Fraction(10**400)),
    (-(3**500), Fraction(-(3**500))),
    (0, Fraction(0)),
    (7, Fraction(7)),
]


def _scalar_id(case):
    x = case[0]
    text = str(x) if not isinstance(x, int) or abs(x) < 10**12 else f"int{x.bit_length()}bits"
    return f"{type(x).__name__}:{text[:32]}"


@pytest.mark.parametrize("x, value", EXACT_SCALARS, ids=[_scalar_id(c) for c in EXACT_SCALARS])
def test_encode_exact_scalars(x, value):
    negative = value < 0 or (value == 0 and str(x).lstrip().startswith("-"))
    for fmt in FORMATS:
        for mode in MODES:
            for tininess in TININESS:
                assert_scalar_matches_oracle(x, abs(value), negative, fmt, mode, tininess=tininess)
        assert_scalar_matches_oracle(x, abs(value), negative, fmt, "upward", saturate=True,
                                     subnormals=False)


def test_encode_documented_examples():
    """Hard-coded results known independently of the oracle (IEEE tables)."""
    assert sf.encode("1.00048828125000000000000000001", sf.fp16) == 0x3C01
    assert sf.encode("1.00048828125", sf.fp16) == 0x3C00          # tie -> even
    assert sf.encode("1.00048828125", sf.fp16, "nearest_away") == 0x3C01
    assert sf.encode(2**64 + 1, sf.fp32, "upward") == 0x5F800001
    assert sf.encode(2**64 + 1, sf.fp32) == 0x5F800000
    assert sf.encode("0x1.8p-3", sf.fp32) == 0x3E400000
    assert sf.encode("6.36", sf.fp16, "toward_zero") == 0x465C     # 6.359375
    assert sf.encode("6.36", sf.fp16, "upward") == 0x465D          # 6.36328125
    assert sf.encode("0x1p-1075", sf.fp64) == 0                    # half the smallest subnormal: tie -> 0
    assert sf.encode("0x1p-1075", sf.fp64, "nearest_away") == 1
    assert sf.encode(Fraction(1, 2**1075) + Fraction(1, 2**3000), sf.fp64) == 1


@given(
    numerator=st.integers(1, 2**130),
    denominator=st.integers(1, 2**130),
    shift=st.integers(-1150, 1100),
    negative=st.booleans(),
    fmt=st.sampled_from(FORMATS),
    mode=st.sampled_from(MODES),
    tininess=st.sampled_from(TININESS),
    saturate=st.booleans(),
    subnormals=st.booleans(),
)
def test_encode_random_fractions(numerator, denominator, shift, negative, fmt, mode, tininess,
                                 saturate, subnormals):
    """Arbitrary rationals far beyond float64's range and precision."""
    q = Fraction(numerator, denominator) * Fraction(2) ** shift
    x = -q if negative else q
    assert_scalar_matches_oracle(x, q, negative, fmt, mode, tininess=tininess, saturate=saturate,
                                 subnormals=subnormals)


@given(
    fmt=st.sampled_from(FORMATS),
    mode=st.sampled_from(MODES),
    k=st.integers(0, 2**63),
    nudge=st.sampled_from([-1, 0, 1]),
    negative=st.booleans(),
)
def test_encode_exact_midpoints(fmt, mode, k, nudge, negative):
    """Exact midpoints between neighbours (and a hair either side) as Fractions, so fp64's
    ties are covered too: 2**-3000 is far below any format's half ulp."""
    m = fmt.mantissa_bits
    k %= fmt.max_finite_bits + 1
    def value(mag):
        e, f = divmod(mag, 1 << m)
        return Fraction((f + (1 << m)) if e else f) * Fraction(2) ** (max(e, 1) + fmt.emin - 1 - m)
    q = (value(k) + value(k + 1)) / 2 + nudge * Fraction(1, 2**3000)
    x = -q if negative else q
    for tininess in TININESS:
        assert_scalar_matches_oracle(x, q, negative, fmt, mode, tininess=tininess)


@pytest.mark.parametrize("mode", MODES)
def test_encode_fp64_ties_exact(mode, oracle_stride, request):
    """fp64 midpoints and their neighbours: sampled patterns of every binade, as Fractions."""
    rng = np.random.default_rng(zlib.crc32(request.node.name.encode()))
    fmt = sf.fp64
    mags = np.concatenate([np.arange(0, 2047, dtype=np.uint64) << np.uint64(52),
                           sample_range(0, fmt.max_finite_bits + 1, rng, 200)])
    offset = stride_offset(request, oracle_stride)
    for i, mag in enumerate(sorted(set(int(v) for v in mags))):
        if i % oracle_stride != offset:
            continue
        lo = Fraction(pattern_values(fmt, [mag])[0])
        hi = lo + Fraction(2) ** (max(mag >> 52, 1) - 1075)  # one ulp up (inf-free)
        mid = (lo + hi) / 2
        negative = bool(i // oracle_stride % 2)
        for q in (mid, mid - Fraction(1, 2**1200), mid + Fraction(1, 2**1200)):
            assert_scalar_matches_oracle(-q if negative else q, q, negative, fmt, mode)


# =====================================================================================
# 5. integer arrays
# =====================================================================================
INT_DTYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)


def integer_cases(dtype) -> np.ndarray:
    """Powers of two and their neighbours, midpoints for a range of precisions, extremes."""
    info = np.iinfo(dtype)
    cands = {0, 1, 2, 3, 5, 7, 100, 255, 448, 464, 465, 480, 65504, 65519, 65520, 65535}
    for k in range(1, 64):
        cands |= {2**k - 1, 2**k, 2**k + 1}
        for p in (2, 3, 4, 8, 11, 24, 53):  # ties at the catalogue's precisions, and just above
            if k > p:
                cands |= {2**k + 2**(k - p), 2**k + 2**(k - p) + 1}
    cands |= {info.max, info.max - 1, 2**53 + 1, 2**63 + 2**39 + 1, 2**64 - 2**40}
    rng = np.random.default_rng(info.bits + (info.min < 0))
    cands |= {int(v) for v in rng.integers(info.min, info.max, size=200, dtype=dtype, endpoint=True)}
    cands |= {-c for c in cands}
    cands |= {info.min, info.min + 1}
    vals = sorted(c for c in cands if info.min <= c <= info.max)
    return np.array(vals, dtype=dtype)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_encode_integer_arrays(dtype, mode, oracle_stride, request):
    """Integer arrays are rounded from their exact value (values above 2**53 included)."""
    x = integer_cases(dtype)
    small = np.array([v for v in x.tolist() if abs(v) <= 2**53], dtype=dtype)
    offset = stride_offset(request, oracle_stride)
    for fmt in FORMATS:
        assert_encode_matches_oracle(x, fmt, mode, oracle_stride, offset)
    if small.size != x.size:  # the same values without the big ones take the float64 path
        for fmt in (sf.fp64, sf.fp32, sf.bf16, sf.fp8_e4m3):
            assert_encode_matches_oracle(small, fmt, mode, oracle_stride, offset + 1)


@pytest.mark.parametrize("dtype, values", [
    (np.int64, [2**53 + 1]), (np.int64, [-(2**53 + 1)]), (np.int64, [2**53 + 1, -3]),
    (np.int64, [2**53 + 3, -(2**53 + 1)]), (np.uint64, [2**53 + 1]), (np.uint64, [2**53 + 1, 3]),
], ids=["int64:2^53+1", "int64:-(2^53+1)", "int64:2^53+1,-3", "int64:2^53+3,-(2^53+1)",
        "uint64:2^53+1", "uint64:2^53+1,3"])
def test_encode_integers_just_above_2_53(dtype, values):
    """Arrays whose largest magnitude only just exceeds 2**53: 2**53 + 1 is not a float64."""
    x = np.array(values, dtype=dtype)
    for fmt in (sf.fp64, sf.Format(exponent_bits=11, mantissa_bits=51)):
        for mode in MODES:
            assert_encode_matches_oracle(x, fmt, mode)


def test_encode_int64_extremes():
    """int64 min, uint64 max and the first integers float64 cannot hold, against hard values."""
    i64 = np.array([np.iinfo(np.int64).min, -(2**53 + 1), 2**53 + 1], dtype=np.int64)
    assert sf.encode(i64, sf.fp64).tolist() == [0xC3E0000000000000, 0xC340000000000000, 0x4340000000000000]
    assert sf.encode(i64, sf.fp64, "upward").tolist() == [0xC3E0000000000000, 0xC340000000000000,
                                                           0x4340000000000001]
    u64 = np.array([2**64 - 1, 2**63 + 2**39 + 1, 2**63 + 2**39], dtype=np.uint64)
    assert sf.encode(u64, sf.fp32).tolist() == [0x5F800000, 0x5F000001, 0x5F000000]
    assert sf.encode(u64, sf.fp32, "toward_zero").tolist() == [0x5F7FFFFF, 0x5F000000, 0x5F000000]
