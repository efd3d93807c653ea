"""The fast kernels of softfloat._fastpaths, bit for bit and flag for flag.

Each kernel is checked three ways on inputs chosen around its proof's edges:

* against the general path (the same public call with ``_fastpaths.ENABLED = False``),
  exhaustively where the space allows, for every deterministic mode and option, flags
  included;
* against independent oracles: ml_dtypes' and numpy's casts for nearest_even, MPFR (via
  gmpy2, ``tests/oracle.py``) for every mode on a sample (all of it with ``--runslow``);
* that the kernel really ran (did not decline) on the blocks the checks rely on.
"""

from __future__ import annotations

import copy
import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import softfloat as sf
from tests.fastpath_checks import general as general_path
from softfloat import _encode, _fastpaths
from softfloat._fastpaths import _decoding, _odd32, _plan, _rebias, _table, _table_cache, _upper, _words
from softfloat._options import resolve_attributes
from tests.oracle import pattern_of, round_exact

MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd")
FLAG_NAMES = ("invalid", "divide_by_zero", "overflow", "underflow", "inexact")
E8_FORMATS = (sf.bf16, sf.tf32, sf.Format(exponent_bits=8, mantissa_bits=3))
OPTIONS = (
    {},
    {"saturate": True},
    {"subnormals": False},
    {"subnormals": False, "tininess": "before"},
    {"tininess": "before"},
)


# =====================================================================================
# helpers
# =====================================================================================
def general(x, fmt, mode, **kw):
    """The same encode on the general path."""
    return general_path(lambda: sf.encode(x, fmt, mode, **kw))


def assert_same(x, fmt, mode, **options):
    """Fast and general path agree on bits, and on every flag mask."""
    fast_bits, fast_flags = sf.encode(x, fmt, mode, return_flags=True, **options)
    gen_bits, gen_flags = general(x, fmt, mode, return_flags=True, **options)
    bad = np.flatnonzero(fast_bits != gen_bits)
    assert bad.size == 0, _diff("bits", x, fast_bits, gen_bits, bad, fmt, mode, options)
    for name in FLAG_NAMES:
        f, g = np.asarray(getattr(fast_flags, name)), np.asarray(getattr(gen_flags, name))
        bad = np.flatnonzero(f != g)
        assert bad.size == 0, _diff(name, x, f, g, bad, fmt, mode, options)
    plain = sf.encode(x, fmt, mode, **options)  # the no-flags kernels too
    bad = np.flatnonzero(plain != gen_bits)
    assert bad.size == 0, _diff("bits (no flags)", x, plain, gen_bits, bad, fmt, mode, options)


def _diff(what, x, got, want, bad, fmt, mode, options):
    i = bad[0]
    xi = x.reshape(-1)[i]
    pattern = hex(int(xi.view(np.uint32 if x.dtype == np.float32 else np.uint64)))
    return (f"{what} differ in {bad.size} lanes for {fmt.name} {mode} {options}; first: "
            f"x={pattern} ({float(xi)!r}) fast={got.reshape(-1)[i]!r} general={want.reshape(-1)[i]!r}")


class Spy:
    """Counts blocks the fast kernel took (returned a result) and declined."""

    def __init__(self, monkeypatch):
        self.taken = self.declined = 0
        real = _fastpaths.encode_block

        def spy(*args, **kwargs):
            result = real(*args, **kwargs)
            if result is None:
                self.declined += 1
            else:
                self.taken += 1
            return result

        monkeypatch.setattr(_fastpaths, "encode_block", spy)


def e8_inputs(fmt, stride=1):
    """float32 patterns around every fmt pattern (every stride-th): the pattern itself,
    one above, just below and at the guard bit (ties), just above it, the all-ones cut
    and a random cut -- zeros, subnormals (both formats share emin), normals, the
    overflow edge, infinities and NaNs (quiet and signaling) of both signs."""
    k = 23 - fmt.mantissa_bits
    top = np.arange(0, 1 << fmt.bits, stride, dtype=np.uint64) << np.uint64(k)
    half = 1 << (k - 1)
    rng = np.random.default_rng(fmt.bits)
    lows = [np.full(top.size, d, dtype=np.uint64) for d in (0, 1, half - 1, half, half + 1, (1 << k) - 1)]
    lows.append(rng.integers(0, 1 << k, top.size, dtype=np.uint64))
    u = np.concatenate([top | low for low in lows]).astype(np.uint32)
    return u.view(np.float32)


def oracle_bits(x, fmt, mode, **attrs):
    """MPFR / exact-Fraction results for finite inputs (tests/oracle.py), as (bits, flags)."""
    bits = np.empty(x.size, dtype=np.uint64)
    flags = np.zeros((5, x.size), dtype=bool)
    for i, xi in enumerate(x.tolist()):
        q, negative = abs(Fraction(xi)), math.copysign(1.0, xi) < 0
        exp = round_exact(q, negative, fmt, mode, **attrs)
        bits[i] = pattern_of(exp.value, exp.negative, fmt)
        flags[:, i] = (exp.invalid, False, exp.overflow, exp.underflow, exp.inexact)
    return bits, flags


# =====================================================================================
# float32 -> e8mN (bf16, tf32): add and shift, every mode
# =====================================================================================
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
@pytest.mark.parametrize("mode", MODES)
def test_bf16_every_pattern_neighbourhood_matches_general_path(mode, options, monkeypatch):
    x = e8_inputs(sf.bf16)
    spy = Spy(monkeypatch)
    assert_same(x, sf.bf16, mode, **options)
    assert spy.taken > 0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt", E8_FORMATS[1:], ids=lambda f: f.name)
def test_other_e8_formats_match_general_path(fmt, mode, oracle_stride):
    assert_same(e8_inputs(fmt, stride=8 * oracle_stride), fmt, mode)
    assert_same(e8_inputs(fmt, stride=16 * oracle_stride), fmt, mode, subnormals=False, saturate=True)


def test_bf16_nearest_even_matches_ml_dtypes_on_every_neighbourhood():
    x = e8_inputs(sf.bf16)
    got = sf.encode(x, sf.bf16)
    finite = np.isfinite(x)
    with np.errstate(over="ignore"):  # ml_dtypes warns where it rounds to infinity
        want = x[finite].astype(ml_dtypes.bfloat16).view(np.uint16)
    assert np.array_equal(got[finite], want)
    # NaNs: quiet, sign and top payload bits kept (as the general path and IEEE 6.2.3)
    u = x.view(np.uint32)
    nan = np.isnan(x)
    assert np.array_equal(got[nan], ((u[nan] >> 16) | 0x0040).astype(np.uint16))


@pytest.mark.parametrize("mode", MODES)
def test_bf16_and_tf32_match_mpfr(mode, oracle_stride):
    """A sample of every neighbourhood class: MPFR's bits and flags."""
    rng = np.random.default_rng(13)
    for fmt in (sf.bf16, sf.tf32):
        x = e8_inputs(fmt, stride=1 << (fmt.bits - 9))
        x = x[np.isfinite(x)]
        x = x[rng.permutation(x.size)[: 2000 // oracle_stride]]
        x = np.concatenate([x, np.float32([3.3895314e38, -3.4028235e38, 1e-45, -1.1754942e-38, 0.0, -0.0])])
        got, flags = sf.encode(x, fmt, mode, return_flags=True)
        want, want_flags = oracle_bits(x, fmt, mode)
        assert np.array_equal(got.astype(np.uint64), want), (fmt.name, mode)
        for j, name in enumerate(FLAG_NAMES):
            assert np.array_equal(np.asarray(getattr(flags, name)), want_flags[j]), (fmt.name, mode, name)


def test_bf16_flags_under_both_tininess_rules_match_mpfr():
    """Tiny lanes go to the general path; their flags are MPFR's."""
    x = np.float32([1.1754942e-38, 1.1754940e-38, 5.877472e-39, -1.1754942e-38, 1e-45, 1.17549435e-38])
    x = np.concatenate([x, np.float32(np.linspace(1, 2, 64))])  # and lanes for the kernel
    for tininess in ("after", "before"):
        for mode in MODES:
            got, flags = sf.encode(x, sf.bf16, mode, tininess=tininess, return_flags=True)
            want, want_flags = oracle_bits(x, sf.bf16, mode, tininess=tininess)
            assert np.array_equal(got.astype(np.uint64), want)
            assert np.array_equal(np.asarray(flags.underflow), want_flags[3]), (mode, tininess)


@pytest.mark.parametrize("mode", ["upward", "downward"])
@pytest.mark.parametrize(("fmt", "dtype"), [(sf.bf16, np.float32), (sf.tf32, np.float32),
                                            (sf.fp16, np.float32), (sf.fp16, np.float64)],
                         ids=["bf16-f32", "tf32-f32", "fp16-f32", "fp16-f64"])
@pytest.mark.parametrize("overshift_zero", [True, False], ids=["two-pass", "three-pass"])
def test_sign_spread_both_ways_match_general_path(fmt, dtype, mode, overshift_zero):
    """upward's increment (2**k - 1 for +x) is (2**k - 1) >> s with s the spread sign, a
    shift by 2**W - 1 for -x that numpy defines as 0; the plan probes that and otherwise
    takes three passes.  Each way, the kernel's bits are the general path's."""
    attrs, _ = resolve_attributes(None, rounding=mode, tininess="after", subnormals=True, saturate=False, rng=None)
    plan = _plan.plan(fmt, np.dtype(dtype).char, attrs)
    if isinstance(plan, (_table_cache.TablePlan, _odd32.Odd32Plan)):
        plan = plan.fallback  # the re-bias kernel, which blocks too small for the table take
    assert plan.overshift_zero  # numpy >= 1.24 (this project's floor) defines the shift
    if fmt.exponent_bits == 8:
        x = e8_inputs(fmt, stride=1 << max(0, fmt.bits - 14))
    else:
        x = fp16_midpoint_inputs(dtype)
        x = x[(np.abs(x) >= fmt.min_normal) & (np.abs(x) <= fmt.max_finite)]
    x = np.ascontiguousarray(x[np.isfinite(x)].astype(dtype))
    assert np.signbit(x).any() and (~np.signbit(x)).any()
    plan = copy.copy(plan)
    plan.overshift_zero = overshift_zero
    plan.upper = None  # the re-bias kernel's own passes, not the upper-word kernel it may hand to
    out = np.empty(x.size, dtype=fmt.storage_dtype)
    fl, rest = plan.kernel(plan, x, False, out, _encode.Workspace(x.size))
    kept = np.ones(x.size, dtype=bool) if rest is None else ~rest
    assert kept.mean() > 0.9
    assert np.array_equal(out[kept], general(x, fmt, mode)[kept])


@pytest.mark.parametrize("n", [1, 2, 3, 1000, 4097])
@pytest.mark.parametrize(("wide", "narrow"), [(np.uint32, np.uint16), (np.uint64, np.uint32),
                                              (np.uint64, np.uint16), (np.uint16, np.uint8)])
def test_upper_into_is_a_shift_and_narrow(wide, narrow, n):
    """_upper_into reads each word's upper part from an offset view, no shift: the same
    as shifting by the extra width and narrowing, every lane including the last."""
    rng = np.random.default_rng(n)
    t = rng.integers(0, np.iinfo(wide).max, n, dtype=wide, endpoint=True)
    t[: min(n, 2)] = [np.iinfo(wide).max, 1 << (8 * np.dtype(narrow).itemsize)][: min(n, 2)]
    before = t.copy()
    extra = wide(8 * (np.dtype(wide).itemsize - np.dtype(narrow).itemsize))
    out = np.full(n + 1, 7, dtype=narrow)  # one lane past the end stays untouched
    _words.shift_into(t, extra, out[:n])
    assert np.array_equal(out[:n], (t >> extra).astype(narrow))
    assert out[n] == 7 and np.array_equal(t, before)


@pytest.mark.parametrize("mode", MODES)
def test_bf16_on_a_big_endian_machine_matches_general_path(mode, monkeypatch):
    """Big-endian machines keep a word's upper part first in memory; there _shift_into
    shifts and narrows instead of reading an offset view.  That path, taken here by
    pretending, gives the general path's bits too."""
    monkeypatch.setattr(_words, "LITTLE_ENDIAN", False)
    assert_same(e8_inputs(sf.bf16, stride=8), sf.bf16, mode)


def test_e8_kernel_does_not_modify_input():
    x = e8_inputs(sf.bf16, stride=64)
    before = x.copy()
    for mode in MODES:
        sf.encode(x, sf.bf16, mode, return_flags=True)
    assert np.array_equal(x.view(np.uint32), before.view(np.uint32))


def fp32_inputs():
    """float32 patterns of every class, both signs: zeros, the smallest and largest
    subnormals, the smallest normal, one, the largest finite value, infinities, quiet
    and signaling NaNs with payloads, and a random sample of all 2**32 patterns."""
    edges = np.array([0, 1, 2, 0x007FFFFF, 0x00800000, 0x3F800000, 0x7F7FFFFF, 0x7F800000, 0x7FC00000,
                      0x7FC00123, 0x7F800001, 0x7FA00000, 0x7FBFFFFF], dtype=np.uint32)
    sample = np.random.default_rng(32).integers(0, 1 << 32, 20000, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([edges, edges | np.uint32(0x80000000), sample]).view(np.float32)


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
@pytest.mark.parametrize("mode", MODES)
def test_fp32_as_is_matches_general_path_and_the_input_bits(mode, options, monkeypatch):
    """float32 -> fp32 by the patterns as they are (_truncate.as_is): the general path's
    bits and flags in every mode and option (signaling NaNs quieted with invalid and,
    without subnormals, tiny lanes flushed -- both left to it), and outside NaNs and
    flushed lanes the input's own bits (float32 is fp32's encoding)."""
    x = fp32_inputs()
    spy = Spy(monkeypatch)
    assert_same(x, sf.fp32, mode, **options)
    assert spy.taken > 0
    keep = ~np.isnan(x)
    if options.get("subnormals") is False:
        keep &= (x == 0) | (np.abs(x) >= np.float32(2.0**-126))
    assert np.array_equal(sf.encode(x, sf.fp32, mode, **options)[keep], x.view(np.uint32)[keep])
    small = x[13:13 + 40]  # the codec's one-block lane, in one call
    assert_same(small, sf.fp32, mode, **options)


# =====================================================================================
# float32 / float64 -> fp16 (and other narrow formats), nearest_even
# =====================================================================================
def fp16_midpoint_inputs(dtype):
    """Every fp16 value, every midpoint between neighbours (ties), and one ulp of the
    input type either side of each; both signs.  Includes subnormals, the overflow
    threshold 65520 and values beyond."""
    v = np.arange(0, 0x7C01, dtype=np.uint16).view(np.float16).astype(np.float64)  # 0 .. inf
    mids = (v[:-1] + v[1:]) / 2  # exact in float64 (and float32): 12 significant bits
    pts = np.concatenate([v[:-1], mids]).astype(dtype)
    x = np.concatenate([pts, np.nextafter(pts, dtype(np.inf)), np.nextafter(pts, dtype(0))])
    return np.concatenate([x, -x])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fp16_nearest_even_matches_numpy_and_general_path(dtype, monkeypatch):
    """numpy's astype(float16) rounds once, correctly, from float32 and float64 alike
    (checked here on every tie and its neighbours); the kernel agrees with it."""
    x = fp16_midpoint_inputs(dtype)
    spy = Spy(monkeypatch)
    got = sf.encode(x, sf.fp16)
    assert spy.taken > 0
    with np.errstate(over="ignore"):  # numpy warns where it rounds to infinity
        want = x.astype(np.float16).view(np.uint16)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [float(x[i]).hex() for i in bad[:5]]
    assert_same(x, sf.fp16, "nearest_even")
    for options in OPTIONS[1:]:
        assert_same(x, sf.fp16, "nearest_even", **options)


def test_float64_to_fp16_is_one_rounding_not_two():
    """Values a hair off a tie: rounding through float32 first would make them ties."""
    mids = fp16_midpoint_inputs(np.float64)
    mids = mids[(np.abs(mids) < 65536) & (np.abs(mids) > 2.0**-24)]
    eps = np.abs(mids) * 2.0**-40
    for x in (mids + eps, mids - eps):
        with np.errstate(over="ignore"):
            want = x.astype(np.float16).view(np.uint16)  # numpy: direct rounding (checked below)
        assert np.array_equal(sf.encode(x, sf.fp16), want)
        assert np.array_equal(general(x, sf.fp16, "nearest_even"), want)
    sample = (mids + eps)[:: max(1, mids.size // 300)]
    oracle, _ = oracle_bits(sample, sf.fp16, "nearest_even")
    with np.errstate(over="ignore"):
        numpy_bits = sample.astype(np.float16).view(np.uint16).astype(np.uint64)
    assert np.array_equal(numpy_bits, oracle)


@pytest.fixture
def without_tables(monkeypatch):
    """No table kernels (their formats take the re-bias kernel, as small blocks do);
    the plans made meanwhile are forgotten afterwards."""
    monkeypatch.setattr(_table, "applies", lambda fmt, src: False)
    monkeypatch.setattr(_plan, "_last", (None, None, None, None))
    _plan.plan.cache_clear()
    yield
    _plan.plan.cache_clear()
    _plan._last = (None, None, None, None)


@pytest.mark.parametrize("fmt", [sf.fp32, sf.fp16, sf.bf16, sf.tf32, sf.fp8_e4m3, sf.fp8_e5m2, sf.fp8_e4m3fnuz,
                                 sf.fp6_e2m3, sf.fp4_e2m1, sf.Format(exponent_bits=6, mantissa_bits=9)],
                         ids=lambda f: f.name)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", MODES)
def test_rebias_kernel_matches_general_path_on_normal_range_data(mode, fmt, dtype, monkeypatch, oracle_stride,
                                                                 without_tables):
    """Every deterministic mode; data in the target's normal range with a few zeros, subnormals, overflows and
    specials mixed in (the rest lanes), so the kernel takes every block."""
    rng = np.random.default_rng(fmt.bits)
    n = 3 * (1 << 14) + 17
    lo, hi = math.log2(fmt.min_normal), math.log2(fmt.max_finite)
    x = np.exp2(rng.uniform(lo, hi + 0.01, n)) * rng.choice([-1.0, 1.0], n)
    pick = rng.choice(n, n // 40, replace=False)
    x[pick] = rng.choice([0.0, -0.0, fmt.min_subnormal * 1.5, -fmt.max_finite * 1.01, np.inf, np.nan,
                          fmt.min_normal * (1 - 2.0**-30)], pick.size)
    tiny = rng.choice(n, n // 50, replace=False)  # below min_normal: zeros' neighbours, subnormals
    x[tiny] = rng.uniform(-1, 1, tiny.size) * fmt.min_normal * rng.choice([1.0, 2.0**-3, 2.0**-12], tiny.size)
    # ties between subnormals, (j + 1/2) * min_subnormal, where the nearest modes differ
    j = rng.integers(0, 1 << fmt.mantissa_bits, n // 50)
    ties = rng.choice(n, j.size, replace=False)
    x[ties] = (j + 0.5) * fmt.min_subnormal * rng.choice([-1.0, 1.0], j.size)
    with np.errstate(over="ignore"):  # beyond float32 for the e8 formats: infinity
        x = x.astype(dtype)
    # hard lanes: ties and ties +- one input ulp at random normal-range values
    k = (23 if dtype == np.float32 else 52) - fmt.mantissa_bits
    u = x.view(np.uint32 if dtype == np.float32 else np.uint64)
    udt = u.dtype.type
    if k > 0:
        tie = (u >> udt(k) << udt(k)) | udt(1 << (k - 1))
        sl = slice(0, n, 7)
        u[sl] = tie[sl] + rng.integers(-1, 2, tie[sl].size).astype(u.dtype)
    # the edges of the kernel's range, one input ulp either side, both signs
    with np.errstate(over="ignore"):
        edges = np.array([fmt.max_finite, fmt.min_normal], dtype=dtype)
        edges = np.concatenate([edges, np.nextafter(edges, dtype(np.inf)), np.nextafter(edges, dtype(0))])
    edges = np.concatenate([edges, -edges])
    x[5: 5 + 101 * edges.size: 101] = edges
    spy = Spy(monkeypatch)
    assert_same(x, fmt, mode)
    assert spy.taken > 0 or (fmt == sf.fp32 and dtype == np.float32)  # nothing to round
    for options in OPTIONS[1:]:
        assert_same(x, fmt, mode, **options)
    sample = x[np.isfinite(x)][:: 1 + oracle_stride * n // 1000]
    want, want_flags = oracle_bits(sample, fmt, mode)
    got, flags = sf.encode(sample, fmt, mode, return_flags=True)
    assert np.array_equal(got.astype(np.uint64), want)
    for j, name in enumerate(FLAG_NAMES):
        assert np.array_equal(np.asarray(getattr(flags, name)), want_flags[j]), name


# =====================================================================================
# zeros in the re-bias kernel's main passes (_fastpaths._rebias): +-0 is exact in every
# mode, its result the zero of its sign, no flag
# =====================================================================================
class KernelSpy:
    """Wraps the re-bias kernel (the plans made while it is installed take the wrapper)
    and its below-normal pass: counts blocks taken and declined, the lanes the kernel
    left to the general path, and the lanes handed to the below-normal pass."""

    def __init__(self, monkeypatch):
        self.taken = self.declined = self.rest_lanes = self.below_normal_lanes = self.below_normal_calls = 0
        self.rest_zeros = 0
        real_kernel, real_below = _rebias.rebias, _rebias._below_normal

        def kernel(p, blk, want, out, ws):
            found = real_kernel(p, blk, want, out, ws)
            if found is None:
                self.declined += 1
                return found
            self.taken += 1
            rest = found[1]
            if rest is not None:
                self.rest_lanes += int(np.count_nonzero(rest))
                self.rest_zeros += int(np.count_nonzero(rest & (blk == 0)))
            return found

        def below_normal(p, blk, small, out, ws):
            self.below_normal_calls += 1
            self.below_normal_lanes += int(np.count_nonzero(small))
            assert not np.any(small & (blk == 0)), "a zero lane went to the below-normal pass"
            return real_below(p, blk, small, out, ws)

        monkeypatch.setattr(_rebias, "rebias", kernel)
        monkeypatch.setattr(_rebias, "_below_normal", below_normal)
        monkeypatch.setattr(_plan, "_last", (None, None, None, None))
        _plan.plan.cache_clear()  # new plans take the wrapper (the fixture clears them after)


def _signed_zeros(rng, n):
    return rng.choice(np.array([0.0, -0.0], dtype=np.float32), n)


def zero_share_array(share, n=3 * (1 << 14) + 17, seed=11, dtype=np.float32):
    """n values in fp16's normal range (both signs, ties and their neighbours among them),
    a ``share`` of them +0 or -0 at random places."""
    rng = np.random.default_rng(seed)
    x = (np.exp2(rng.uniform(-14, 15.9, n)) * rng.choice([-1.0, 1.0], n)).astype(np.float32)
    u = x.view(np.uint32)
    u[::5] = (u[::5] & np.uint32(0xFFFFE000)) | np.uint32(0x1000)  # ties of fp16 (13 cut bits)
    u[1::5] = u[::5][: u[1::5].size] + np.uint32(1)
    zeros = rng.choice(n, int(round(share * n)), replace=False)
    x[zeros] = _signed_zeros(rng, zeros.size)
    return x.astype(dtype)


def near_zero_patterns():
    """Every float32 pattern of magnitude below 2**17 (the zeros and the smallest
    subnormals, 0 .. 1.8e-40), both signs."""
    mag = np.arange(1 << 17, dtype=np.uint32)
    return np.concatenate([mag, mag | np.uint32(0x80000000)]).view(np.float32)


def dense_sample(n=1 << 18, seed=12):
    """Random float32 patterns (every class: zeros, subnormals, normals, overflows, inf,
    NaN) with half of the lanes +-0, and the fp16 normal range's lanes dense besides."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    normal = rng.choice(n, n // 4, replace=False)
    x[normal] = np.exp2(rng.uniform(-14, 15.9, normal.size)) * rng.choice([-1.0, 1.0], normal.size)
    zeros = rng.choice(n, n // 2, replace=False)
    x[zeros] = _signed_zeros(rng, zeros.size)
    return x


def assert_numpy_fp16(x, bits):
    """bits are numpy's float32 -> float16 cast (round to nearest even), NaN lanes NaN."""
    with np.errstate(over="ignore"):
        want = x.astype(np.float32).astype(np.float16)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(np.asarray(bits).view(np.float16)), nan)
    bad = np.flatnonzero(bits[~nan] != want[~nan].view(np.uint16))
    assert bad.size == 0, f"{bad.size} lanes differ from numpy's cast, first x={x[~nan][bad[0]]!r}"


@pytest.mark.parametrize("case", ["near_zero", "dense_sample"])
def test_rebias_zeros_near_and_at_zero_match_numpy_and_general_path(case, monkeypatch, without_tables):
    x = near_zero_patterns() if case == "near_zero" else dense_sample()
    spy = KernelSpy(monkeypatch)
    assert_numpy_fp16(x, sf.encode(x, sf.fp16))
    for mode in MODES:
        for options in OPTIONS:
            assert_same(x, sf.fp16, mode, **options)
    assert spy.taken > 0 and spy.rest_zeros == 0


@pytest.mark.parametrize("share", [0.0, 0.5, 1.0], ids=["no-zeros", "half-zeros", "all-zeros"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rebias_zero_shares_match_numpy_and_general_path(share, dtype, monkeypatch, without_tables):
    x = zero_share_array(share, dtype=dtype)
    spy = KernelSpy(monkeypatch)
    bits = sf.encode(x, sf.fp16)
    if dtype == np.float32:
        assert_numpy_fp16(x, bits)
    zero = x == 0
    assert np.array_equal(bits[zero], np.where(np.signbit(x[zero]), 0x8000, 0).astype(np.uint16))
    for mode in MODES:
        for options in OPTIONS:
            assert_same(x, sf.fp16, mode, **options)
    assert spy.declined == 0 and spy.rest_lanes == 0  # every block, flags or not: no lane left
    assert spy.below_normal_calls == 0  # nor any lane sent to the below-normal pass
    # the other formats with a -0 (and fnuz, whose zeros still go to the general path)
    for fmt in (sf.fp8_e4m3, sf.fp8_e5m2, sf.fp8_e4m3fnuz, sf.fp6_e2m3, sf.fp4_e2m1):
        for mode in ("nearest_even", "upward", "downward", "odd"):
            assert_same(x, fmt, mode)
            assert_same(x, fmt, mode, saturate=True)


@pytest.mark.parametrize("share", [0.0, 0.5, 1.0], ids=["no-zeros", "half-zeros", "all-zeros"])
def test_quantize_small_zero_lanes_take_the_main_passes(share, monkeypatch, without_tables):
    """The training lab's rounding (quantize_small, fp16, nearest even): numpy's float16
    values, and no zero lane in the below-normal pass or left to the general path."""
    x = zero_share_array(share, n=_fastpaths.BLOCK_SIZE - 16)
    x[7] = 2.0**-20  # one nonzero lane below min_normal: gathered, zeros not
    spy = KernelSpy(monkeypatch)
    general_calls = []

    def rest(xs):
        general_calls.append(xs.size)
        return sf.quantize(xs, sf.fp16)

    def decode(bits, f, out):
        out[...] = sf.decode(bits, f, out.dtype)

    attrs, _ = resolve_attributes(None)
    got = _fastpaths.quantize_small(x.reshape(16, -1), sf.fp16, attrs, decode, rest)
    assert got is not None and got.dtype == np.float32
    want = x.astype(np.float16).astype(np.float32)
    assert np.array_equal(got.reshape(-1).view(np.uint32), want.view(np.uint32))  # -0 kept
    assert spy.taken == 1 and not general_calls
    assert spy.below_normal_calls == 1 and spy.below_normal_lanes == 1


def test_rebias_gathers_few_below_normal_lanes_and_blends_many(monkeypatch, without_tables):
    """The below-normal pass on few lanes (gathered) and on many (whole block): both the
    general path's bits, zeros beside them untouched."""
    rng = np.random.default_rng(13)
    for count in (1, int(_rebias.GATHER_SHARE * 4096), int(_rebias.GATHER_SHARE * 4096) + 1, 2000):
        x = zero_share_array(0.5, n=4096, seed=count)
        tiny = rng.choice(4096, count, replace=False)
        x[tiny] = rng.uniform(-1, 1, count) * 2.0**-14 * rng.choice([1.0, 2.0**-5, 2.0**-11], count)
        spy = KernelSpy(monkeypatch)
        for mode in MODES:
            assert_same(x, sf.fp16, mode)
        assert spy.below_normal_lanes == len(MODES) * np.count_nonzero((x != 0) & (np.abs(x) < 2.0**-14))


def test_rebias_zero_shortcut_honours_the_off_switch(monkeypatch, without_tables):
    """With _fastpaths.ENABLED False the kernel is not reached (quantize_small declines,
    encode takes the general path), and the lab's round_to gives the same values."""
    from softfloat.training import _numerics

    x = zero_share_array(0.5, n=4000)
    spy = KernelSpy(monkeypatch)
    fast = _numerics.round_to(x, sf.fp16)
    fast_bits = sf.encode(x, sf.fp16)
    assert spy.taken > 0
    taken = spy.taken
    monkeypatch.setattr(_fastpaths, "ENABLED", False)
    attrs, _ = resolve_attributes(None)
    assert _fastpaths.quantize_small(x, sf.fp16, attrs, None, None) is None
    off = _numerics.round_to(x, sf.fp16)
    off_bits = sf.encode(x, sf.fp16)
    assert spy.taken == taken and spy.declined == 0  # not reached at all
    assert np.array_equal(fast.view(np.uint32), off.view(np.uint32))
    assert np.array_equal(fast_bits, off_bits)


# =====================================================================================
# float32 / float64 -> formats of at most 8 bits by one table lookup (_fastpaths._table.by_table)
# =====================================================================================
TABLE_FORMATS = (sf.fp8_e4m3, sf.fp8_e5m2, sf.fp8_e4m3fnuz, sf.fp8_e5m2fnuz, sf.fp6_e2m3, sf.fp6_e3m2,
                 sf.fp4_e2m1, sf.Format(exponent_bits=2, mantissa_bits=5), sf.fp16, sf.bf16,
                 sf.Format(exponent_bits=6, mantissa_bits=9))


def table_classes(fmt, dtype, stride=1, offset=0):
    """Inputs covering every index class of the table kernel (every stride-th): a class
    is a pattern's bits above bit c = ms - m - 2 and the OR of bits c..0 (sticky).  A
    class without its sticky bit has one member; one with it gets four: bit 0 alone,
    bit c alone, all of c..0, and random low bits -- if the result depended on a bit
    the index drops, these would disagree with the general path."""
    src = sf.fp32 if dtype == np.float32 else sf.fp64
    udt = np.uint32 if dtype == np.float32 else np.uint64
    c = src.mantissa_bits - fmt.mantissa_bits - 2
    index = np.arange(offset, 1 << (src.bits - c), stride, dtype=np.uint64)
    top = (index >> np.uint64(1)) << np.uint64(c + 1)
    sticky = top[(index & np.uint64(1)) == 1]
    rng = np.random.default_rng(fmt.bits + c)
    lows = [np.uint64(1), np.uint64(1 << c), np.uint64((1 << (c + 1)) - 1),
            rng.integers(1, 1 << (c + 1), sticky.size, dtype=np.uint64)]
    members = [top[(index & np.uint64(1)) == 0]] + [sticky | low for low in lows]
    return np.concatenate(members).astype(udt).view(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fmt", TABLE_FORMATS, ids=lambda f: f.name)
@pytest.mark.parametrize("mode", MODES)
def test_table_kernel_matches_general_path_on_every_input_class(mode, fmt, dtype, monkeypatch, oracle_stride):
    plan = _plan.plan(fmt, np.dtype(dtype).char, resolve_attributes(None, rounding=mode, tininess="after", subnormals=True, saturate=False, rng=None)[0])
    if not isinstance(plan, _table_cache.TablePlan):
        pytest.skip(f"{fmt.name} from {np.dtype(dtype).name} takes another kernel (or none)")
    # every class of tables up to 2**17 entries (FP8 from float32: 2**14); of larger ones
    # (float64 input, fp16) a slice per mode
    stride = 1 if plan.entries <= 1 << 17 and dtype == np.float32 else oracle_stride
    x = table_classes(fmt, dtype, stride, offset=MODES.index(mode) % stride)
    spy = Spy(monkeypatch)
    for options in OPTIONS:
        assert_same(x, fmt, mode, **options)
    assert spy.taken > 0
    # quantize looks the decoded values up in one pass: the same values (NaN payloads
    # too) and flags as encoding and decoding on the general path
    udt = np.uint32 if dtype == np.float32 else np.uint64
    for options in OPTIONS[:3]:
        values, flags = sf.quantize(x, fmt, mode, return_flags=True, **options)
        want_bits, want_flags = general(x, fmt, mode, return_flags=True, **options)
        want = sf.decode(want_bits, fmt, dtype=dtype)
        assert values.dtype == dtype and np.array_equal(values.view(udt), want.view(udt)), options
        for name in FLAG_NAMES:
            assert np.array_equal(np.asarray(getattr(flags, name)), np.asarray(getattr(want_flags, name))), name
        assert np.array_equal(sf.quantize(x, fmt, mode, **options).view(udt), want.view(udt))


def _fresh_plan(fmt, dtype, mode, monkeypatch):
    """The table plan for (fmt, dtype, mode), made anew (no tables yet)."""
    monkeypatch.setattr(_plan, "_last", (None, None, None, None))
    _plan.plan.cache_clear()
    return _plan.lookup(fmt, np.dtype(dtype).char, resolve_attributes(None, rounding=mode, tininess="after", subnormals=True, saturate=False, rng=None)[0])


def test_small_calls_take_the_fallback_and_large_ones_fill_the_table(monkeypatch):
    plan = _fresh_plan(sf.fp16, np.float32, "upward", monkeypatch)
    assert isinstance(plan, _table_cache.TablePlan) and plan.tables is None
    x = table_classes(sf.fp16, np.float32, stride=97)  # about 50,000 values
    small = x[: plan.entries // _table_cache.TABLE_FILL_RATIO - 1]
    assert np.array_equal(sf.encode(small, "fp16", "upward"), general(small, "fp16", "upward"))
    assert plan.tables is None  # a small call does not pay for 2**21 entries
    big = np.resize(x, plan.entries // _table_cache.TABLE_FILL_RATIO)
    assert np.array_equal(sf.encode(big, "fp16", "upward", workers=1), general(big, "fp16", "upward"))
    assert plan.tables is not None
    _plan.plan.cache_clear()


def test_filled_tables_stay_within_their_memory_budget(monkeypatch):
    # float64 -> e4m3 tables: 2**17 entries, 256 KiB each with flags; room for two
    monkeypatch.setattr(_table_cache, "TABLE_CACHE_BYTES", 2 * (2 << 17))
    monkeypatch.setattr(_table_cache, "_filled", [])
    x = table_classes(sf.fp8_e4m3, np.float64, stride=3)
    for round_ in range(2):
        plans = []
        for mode in MODES:
            plans.append(_fresh_plan(sf.fp8_e4m3, np.float64, mode, monkeypatch))
            assert np.array_equal(sf.encode(x, "fp8_e4m3", mode), general(x, "fp8_e4m3", mode)), mode
        assert [p.tables is not None for p in plans] == [False] * (len(MODES) - 2) + [True, True]
        assert len(_table_cache._filled) == 2
    _plan.plan.cache_clear()


ML_DTYPES_OF = {sf.fp8_e4m3: ml_dtypes.float8_e4m3fn, sf.fp8_e5m2: ml_dtypes.float8_e5m2,
                sf.fp8_e4m3fnuz: ml_dtypes.float8_e4m3fnuz, sf.fp8_e5m2fnuz: ml_dtypes.float8_e5m2fnuz,
                sf.fp6_e2m3: ml_dtypes.float6_e2m3fn, sf.fp6_e3m2: ml_dtypes.float6_e3m2fn,
                sf.fp4_e2m1: ml_dtypes.float4_e2m1fn}


@pytest.mark.parametrize("fmt", list(ML_DTYPES_OF), ids=lambda f: f.name)
def test_table_kernel_nearest_even_matches_ml_dtypes_on_every_input_class(fmt):
    # ml_dtypes' float32 casts round to nearest even; their overflow and NaN rules
    # differ by format, so the comparison takes the finite lanes up to max_finite
    x = table_classes(fmt, np.float32)
    x = x[np.abs(x) <= fmt.max_finite]
    theirs = x.astype(ML_DTYPES_OF[fmt]).view(np.uint8)
    assert np.array_equal(sf.encode(x, fmt), theirs)


# =====================================================================================
# float64 -> 16-bit formats from the upper words (_fastpaths._upper.upper_word)
# =====================================================================================
UPPER_WORD_FORMATS = (sf.fp16, sf.bf16, sf.Format(exponent_bits=11, mantissa_bits=4),
                      sf.Format(exponent_bits=6, mantissa_bits=9), sf.Format(exponent_bits=4, mantissa_bits=11),
                      sf.Format(exponent_bits=2, mantissa_bits=13))


def upper_word_inputs(fmt, n, crafted_every, seed=0):
    """n normal-range float64 values of fmt (log-uniform, both signs), every
    crafted_every-th replaced by a hard lane: the upper word's cut bits at their tie,
    one below or one above it, with lower words 0, 1, 2**31 or all ones, a kept lsb of
    either parity; and the range's edges: min_normal, max_finite, and max_finite with
    lower words 1 and all ones (above max_finite, still inside the kernel's range)."""
    rng = np.random.default_rng(seed + fmt.mantissa_bits)
    lo, hi = math.log2(fmt.min_normal), math.log2(fmt.max_finite)
    x = np.exp2(rng.uniform(lo, hi, n)) * rng.choice([-1.0, 1.0], n)
    x = np.clip(np.abs(x), fmt.min_normal, fmt.max_finite) * np.sign(x)
    u = x.view(np.uint64)
    kh = 20 - fmt.mantissa_bits  # cut bits of the upper word
    sl = slice(0, n, crafted_every)
    hw = (u[sl] >> np.uint64(32 + kh) << np.uint64(kh)) | np.uint64(1 << (kh - 1))
    hw = hw + rng.integers(-1, 2, hw.size).astype(np.uint64)
    lw = rng.choice(np.array([0, 0, 0, 1, 1 << 31, 0xFFFFFFFF], dtype=np.uint64), hw.size)
    u[sl] = (hw << np.uint64(32)) | lw
    top = np.float64(fmt.max_finite).view(np.uint64)
    edges = np.array([fmt.min_normal, fmt.max_finite, (top + np.uint64(1)).view(np.float64),
                      (top + np.uint64(0xFFFFFFFF)).view(np.float64)])
    x[3: 3 + 7 * 2 * edges.size: 7] = np.concatenate([edges, -edges])
    return x


@pytest.mark.parametrize("fmt", UPPER_WORD_FORMATS, ids=lambda f: f.name)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("crafted_every", [1, 2, 211])  # ties fixed in whole-block passes / gathered
def test_upper_word_kernel_matches_general_path(fmt, mode, crafted_every, monkeypatch):
    """Bits (and, by the other kernels, flags) as the general path, on data whose every
    block the upper-word kernel takes, in every deterministic mode."""
    x = upper_word_inputs(fmt, (1 << 15) + 3, crafted_every)
    before = x.copy()
    taken = []
    real = _upper.upper_word
    monkeypatch.setattr(_upper, "upper_word", lambda *a: taken.append(real(*a)) or taken[-1])
    assert_same(x, fmt, mode)
    assert np.array_equal(x.view(np.uint64), before.view(np.uint64))
    assert taken and all(taken)  # every deterministic mode
    for options in ({"saturate": True}, {"subnormals": False}):
        assert_same(x, fmt, mode, **options)


@pytest.mark.parametrize("crafted_every", [1, 5, 997])
def test_upper_word_fp16_matches_numpy(crafted_every):
    """numpy's astype(float16) rounds float64 once, correctly (see
    test_float64_to_fp16_is_one_rounding_not_two)."""
    x = upper_word_inputs(sf.fp16, 1 << 19, crafted_every, seed=1)
    got = sf.encode(x, sf.fp16)
    want = x.astype(np.float16).view(np.uint16)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [float(x[i]).hex() for i in bad[:5]]


@pytest.mark.parametrize("fmt", [sf.fp16, sf.bf16], ids=lambda f: f.name)
@pytest.mark.parametrize("mode", ["nearest_even", "nearest_away", "toward_zero"])
def test_upper_word_kernel_matches_mpfr(fmt, mode, oracle_stride):
    x = upper_word_inputs(fmt, 1 << 12, 3, seed=2)
    sample = x[:: 1 + oracle_stride * x.size // 1500]
    want, _ = oracle_bits(sample, fmt, mode)
    assert np.array_equal(sf.encode(sample, fmt, mode).astype(np.uint64), want)


def test_upper_word_kernel_declines_blocks_with_a_lane_outside_its_range():
    """Lanes whose upper word is just outside [min_normal, max_finite]'s: the block is
    left to the re-bias kernel, which takes them right."""
    attrs, _ = resolve_attributes(None, rounding="nearest_even", tininess="after", subnormals=True, saturate=False, rng=None)
    top = np.float64(sf.fp16.max_finite).view(np.uint64)
    outside = [np.nextafter(sf.fp16.min_normal, 0), (top + np.uint64(1 << 32)).view(np.float64), 0.0,
               np.inf, np.nan, 2.0**-20]
    for lane in outside:
        for sign, at in ((1.0, 1), (-1.0, 1), (1.0, _upper.PROBE_LANES + 1)):  # inside the probe or after it
            x = np.resize(np.array([1.5, -3.0, 1000.25]), _upper.PROBE_LANES + 3)
            x[at] = sign * lane
            ws = _encode.Workspace(x.size)
            out = np.zeros(x.size, dtype=np.uint16)
            q = _plan.plan(sf.fp16, "d", attrs).upper
            assert _upper.upper_word(q, x, out, ws) is False
            assert not out.any()
            with np.errstate(over="ignore", invalid="ignore"):
                want = x.astype(np.float16).view(np.uint16)
            assert np.array_equal(sf.encode(x, sf.fp16), want)


def test_fast_paths_can_be_switched_off(monkeypatch):
    monkeypatch.setattr(_fastpaths, "ENABLED", False)
    spy = Spy(monkeypatch)
    sf.encode(np.float32([1.5, 2.5]), sf.bf16)
    assert spy.taken == 0


def test_kernel_leaves_nan_lanes_to_general_path():
    attrs, _ = resolve_attributes(None, rounding="nearest_even", tininess="after", subnormals=True, saturate=False, rng=None)
    x = np.float32([1.0, np.nan, -np.inf, 2.0])
    x.view(np.uint32)[1] = 0x7F800001  # a signaling NaN that would round to infinity
    ws = _encode.Workspace(x.size)
    out = np.empty(x.size, dtype=np.uint16)
    fl, rest = _fastpaths.encode_block(x, sf.bf16, attrs, False, out, ws, _encode.encode_general)
    assert rest.tolist() == [False, True, False, False]
    bits, flags = sf.encode(x, sf.bf16, return_flags=True)
    assert [hex(b) for b in bits] == ["0x3f80", "0x7fc0", "0xff80", "0x4000"]
    assert flags.invalid.tolist() == [False, True, False, False]


# =====================================================================================
# decoding: shift and table
# =====================================================================================
DECODE_FORMATS = (sf.fp16, sf.bf16, sf.tf32, sf.fp8_e4m3, sf.fp8_e5m2, sf.fp8_e4m3fnuz, sf.fp8_e5m2fnuz,
                  sf.fp6_e2m3, sf.fp6_e3m2, sf.fp4_e2m1, sf.Format(exponent_bits=4, mantissa_bits=9))


def _decode_general(b, fmt, dtype):
    saved = _fastpaths.ENABLED
    _fastpaths.ENABLED = False
    try:
        return sf.decode(b, fmt, dtype)
    finally:
        _fastpaths.ENABLED = saved


def _bits_of(a):
    return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


@pytest.mark.parametrize("fmt", DECODE_FORMATS, ids=lambda f: f.name)
def test_decode_every_pattern_matches_arithmetic_decoder(fmt):
    b = np.arange(1 << fmt.bits, dtype=np.uint64)
    b = np.concatenate([b, b[::-1]]).astype(fmt.storage_dtype)
    for dtype in (np.float16, np.float32, np.float64):
        if not sf.as_format({2: "fp16", 4: "fp32", 8: "fp64"}[np.dtype(dtype).itemsize]).holds(fmt):
            continue
        got, want = sf.decode(b, fmt, dtype), _decode_general(b, fmt, dtype)
        assert np.array_equal(_bits_of(got), _bits_of(want)), (fmt.name, dtype)  # NaN payloads too
    # and against the independent references for the values
    with np.errstate(invalid="ignore"):  # the casts warn on signaling NaNs
        if fmt == sf.fp16:
            ref = b.view(np.float16).astype(np.float64)
        elif fmt == sf.bf16:
            ref = b.view(ml_dtypes.bfloat16).astype(np.float64)
        else:
            return
    v = sf.decode(b, fmt)
    assert np.array_equal(np.isnan(v), np.isnan(ref))
    assert np.array_equal(v[~np.isnan(v)], ref[~np.isnan(ref)])


def test_fp32_decodes_to_float64_by_widening_as_the_general_decoder():
    rng = np.random.default_rng(11)
    b = rng.integers(0, 1 << 32, 200_000, dtype=np.uint64).astype(np.uint32)
    finite = b[(b & 0x7F800000) != 0x7F800000]
    specials = np.array([0, 0x80000000, 1, 0x807FFFFF, 0x7F800000, 0xFF800000], dtype=np.uint32)
    for case in (finite, np.concatenate([finite, specials]), np.concatenate([finite, [0x7F800001, 0xFFC00001]]).astype(np.uint32)):
        got, want = sf.decode(case, sf.fp32), _decode_general(case, sf.fp32, np.float64)
        assert np.array_equal(_bits_of(got), _bits_of(want))  # the signalling NaNs keep their bits
    assert np.array_equal(sf.decode(finite, sf.fp32), finite.view(np.float32).astype(np.float64))  # numpy's


def test_decode_by_shift_keeps_signaling_nans():
    b = np.array([0x7F81, 0xFF81, 0x7FC1, 0x0001, 0x8000], dtype=np.uint16)  # bf16
    got = sf.decode(b, sf.bf16, np.float32).view(np.uint32)
    assert [hex(v) for v in got] == ["0x7f810000", "0xff810000", "0x7fc10000", "0x10000", "0x80000000"]
    h = np.array([0x7C01, 0xFE01], dtype=np.uint16)  # fp16 -> float16 is the identity
    assert np.array_equal(sf.decode(h, sf.fp16, np.float16).view(np.uint16), h)


def test_decode_table_is_read_only_and_built_once():
    sf.decode(np.uint8([1]), sf.fp8_e4m3)
    table = _decoding.TABLES[(sf.fp8_e4m3, np.dtype(np.float64))]
    assert not table.flags.writeable
    sf.decode(np.uint8([2]), sf.fp8_e4m3)
    assert _decoding.TABLES[(sf.fp8_e4m3, np.dtype(np.float64))] is table


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt", [sf.bf16, sf.fp16, sf.fp8_e4m3], ids=lambda f: f.name)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_quantize_matches_general_path(fmt, mode, dtype):
    rng = np.random.default_rng(1)
    with np.errstate(invalid="ignore"):  # float32 signaling NaNs widen with a warning
        x = np.concatenate([e8_inputs(sf.bf16, stride=4).astype(dtype),
                            (rng.standard_normal(20000) * 100).astype(dtype)])
    got, flags = sf.quantize(x, fmt, mode, return_flags=True)
    saved = _fastpaths.ENABLED
    _fastpaths.ENABLED = False
    try:
        want, want_flags = sf.quantize(x, fmt, mode, return_flags=True)
    finally:
        _fastpaths.ENABLED = saved
    assert got.dtype == want.dtype
    assert np.array_equal(_bits_of(got), _bits_of(want))
    for name in FLAG_NAMES:
        assert np.array_equal(np.asarray(getattr(flags, name)), np.asarray(getattr(want_flags, name))), name


# =====================================================================================
# the full sweeps (slow)
# =====================================================================================
@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_tf32_every_pattern_neighbourhood(mode):
    x = e8_inputs(sf.tf32)
    for options in OPTIONS:
        assert_same(x, sf.tf32, mode, **options)


@pytest.mark.slow
def test_fp32_random_patterns_every_mode():
    rng = np.random.default_rng(7)
    x = rng.integers(0, 1 << 32, 1 << 22, dtype=np.uint64).astype(np.uint32).view(np.float32)
    for mode in MODES:
        for fmt in (sf.bf16, sf.tf32, sf.fp16):
            for options in OPTIONS:
                assert_same(x, fmt, mode, **options)


# =====================================================================================
# property: any float array, any format and option, fast == general
# =====================================================================================
from hypothesis import given, strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

_PROPERTY_FORMATS = (sf.bf16, sf.tf32, sf.fp16, sf.fp8_e4m3, sf.fp8_e5m2fnuz, sf.fp4_e2m1,
                     sf.Format(exponent_bits=8, mantissa_bits=2, specials="fn"))


@given(
    x=st.one_of(hnp.arrays(np.float32, st.integers(1, 300), elements=st.floats(width=32)),
                hnp.arrays(np.float64, st.integers(1, 300), elements=st.floats(width=64)),
                hnp.arrays(np.uint32, st.integers(1, 300)).map(lambda a: a.view(np.float32))),
    fmt=st.sampled_from(_PROPERTY_FORMATS),
    mode=st.sampled_from(MODES),
    saturate=st.booleans(), subnormals=st.booleans(), tininess=st.sampled_from(["after", "before"]),
)
def test_fast_paths_agree_with_general_path_on_any_input(x, fmt, mode, saturate, subnormals, tininess):
    assert_same(x, fmt, mode, saturate=saturate, subnormals=subnormals, tininess=tininess)


@pytest.mark.parametrize("mode", MODES)
def test_rebias_kernel_on_a_wide_format_from_float64(mode):
    """e11m40: float64's own exponent range (the below-normal scale would overflow, so
    those lanes take the general path)."""
    fmt = sf.Format(exponent_bits=11, mantissa_bits=40)
    rng = np.random.default_rng(40)
    x = np.exp2(rng.uniform(-1030, 1024, 5000)) * rng.choice([-1.0, 1.0], 5000)
    x[:50] = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.0**-1022, 1.7976931348623157e308] * 5 + [1.0] * 5
    assert_same(x, fmt, mode)
    assert_same(x, fmt, mode, saturate=True, subnormals=False)


def test_block_kernel_raises_no_numpy_warning_outside_the_stream_driver():
    """encode_block is also called directly (accumulate's stores): NaN and huge lanes
    beside zeros must not leak a RuntimeWarning from the bulk below-normal rounding."""
    import warnings

    attrs, _ = resolve_attributes(None, rounding="nearest_even", tininess="after", subnormals=True, saturate=False, rng=None)
    x = np.array([0.0, -0.0, 1e-30, np.nan, np.inf, 1e308] + [1.5] * 60, dtype=np.float64)
    out = np.empty(x.size, dtype=np.uint16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fast = _fastpaths.encode_block(x, sf.fp16, attrs, False, out, _encode.Workspace(x.size), _encode.encode_general)
        _encode.encode_block(x, sf.fp16, attrs, None, False, out, _encode.Workspace(x.size))
    assert fast is not None  # the kernel took the block (NaN and inf left to the general path)
    assert [hex(b) for b in out[:7]] == ["0x0", "0x8000", "0x0", "0x7e00", "0x7c00", "0x7c00", "0x3e00"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_declined_long_blocks_take_the_general_path_in_pieces(dtype, monkeypatch):
    """Calls with a fast kernel stream blocks BLOCK_FACTOR (TRUNCATING_BLOCK_FACTOR for
    float32 -> bf16) times longer; a block the kernel declines (here: a quarter NaN, and
    with flags a quarter tiny) is encoded by the general path piece by piece, flags
    included."""
    rng = np.random.default_rng(3)
    n = 3 * (max(_fastpaths.BLOCK_FACTOR, _fastpaths.TRUNCATING_BLOCK_FACTOR) << 14) + 11
    x = (rng.standard_normal(n) * 100).astype(dtype)
    x[rng.choice(n, n // 4, replace=False)] = np.nan
    x[rng.choice(n, n // 4, replace=False)] = 1e-6 * rng.standard_normal(n // 4)
    spy = Spy(monkeypatch)
    for fmt in (sf.fp16, sf.bf16):
        for mode in ("nearest_even", "upward"):
            assert_same(x, fmt, mode)
    assert spy.declined > 0


# =====================================================================================
# the one off switch reaches the accumulation shortcuts too
# =====================================================================================
def test_the_off_switch_turns_off_the_accumulation_shortcuts(monkeypatch):
    """With ``_fastpaths.ENABLED`` False no native accumulation plan is made and the array
    layer's native cumsum declines; bits, flags and swamped counts equal the fast path's."""
    from softfloat import _array_chains
    from softfloat.accumulate import _fast

    made, running = [], []
    real_native, real_running = _fast.Native, _array_chains._native_running_sums

    def counting_native(*args, **kwargs):
        made.append(1)
        return real_native(*args, **kwargs)

    def counting_running(*args, **kwargs):
        result = real_running(*args, **kwargs)
        running.append(result[0] is not None)
        return result

    monkeypatch.setattr(_fast, "Native", counting_native)
    monkeypatch.setattr(_array_chains, "_native_running_sums", counting_running)
    rng = np.random.default_rng(5)
    a = sf.encode(rng.standard_normal((32, 64)), "fp16")  # more terms than the tiles' shortcut
    b = sf.encode(rng.standard_normal((64, 64)), "fp16")  # takes (softfloat.accumulate._few.TERMS)
    x = sf.encode(rng.standard_normal(300) * 1e3, "fp32")
    arr = sf.asarray(rng.standard_normal(300), "fp32")

    def run():
        m, mf = sf.matmul(a, b, "fp16", accumulator="fp32", return_flags=True)
        s, sf_ = sf.sum(x, "fp32", return_flags=True)
        with sf.context() as ctx:
            c = np.cumsum(arr)
        return [m, s, c.bits] + [getattr(f, n) for f in (mf, sf_) for n in FLAG_NAMES] + \
               [mf.swamped, sf_.swamped, ctx.flags.inexact, ctx.flags.swamped]

    fast = run()
    assert made and any(running)  # the shortcuts are taken when on ...
    made.clear(), running.clear()
    monkeypatch.setattr(_fastpaths, "ENABLED", False)
    general_ = run()
    assert not made and not any(running)  # ... and not when off
    for f, g in zip(fast, general_):
        np.testing.assert_array_equal(f, g)


# =====================================================================================
# quantize_small: the codec's kernels on one small array (the training lab's roundings)
# =====================================================================================
def _small_hostile(dtype, n=3000, seed=5):
    """Normals over fp16/bf16/fp8's ranges, subnormals, ties, overflow, zeros, inf, NaN."""
    rng = np.random.default_rng(seed)
    with np.errstate(over="ignore"):
        x = (rng.choice([-1.0, 1.0], n) * 2.0 ** rng.uniform(-150, 130, n)).astype(dtype)
    special = np.array([0.0, np.inf, np.nan, 65504.0, 65520.0, 2.0**-24, 2.0**-25, 3 * 2.0**-26, 1 + 2.0**-11,
                        1 + 3 * 2.0**-11, 1 + 2.0**-8, 1 + 3 * 2.0**-8, 2.0**-149, 3.4e38, 448.0, 464.0], dtype=dtype)
    return np.concatenate([x, special, -special])


@pytest.mark.parametrize("fmt", [sf.fp32, sf.fp16, sf.bf16, sf.fp8_e4m3, sf.fp8_e5m2, sf.fp6_e3m2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["nearest_even", "toward_zero", "upward"])
def test_quantize_small_is_the_general_path_bit_for_bit(fmt, dtype, mode):
    x = _small_hostile(dtype)
    attrs, _ = resolve_attributes(None, rounding=mode, tininess="after", subnormals=True, saturate=False, rng=None)
    saved = _fastpaths.ENABLED
    _fastpaths.ENABLED = False  # the general path
    try:
        with np.errstate(all="ignore"):
            want = np.asarray(sf.quantize(x, fmt, mode)).astype(fmt.value_dtype())
    finally:
        _fastpaths.ENABLED = saved
    calls = []

    def rest(xs):
        calls.append(xs.size)
        return sf.quantize(xs, fmt, mode)

    def decode(bits, f, out):
        out[...] = sf.decode(bits, f, out.dtype)

    got = _fastpaths.quantize_small(x.reshape(8, -1), fmt, attrs, decode, rest)
    assert got is not None and got.shape == (8, x.size // 8) and got.dtype == fmt.value_dtype()
    assert np.array_equal(got.reshape(-1).view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"))
    if fmt in (sf.bf16, sf.fp32) and dtype == np.float32:
        assert calls  # the truncating kernel, and fp32's copy, leave the NaN lanes to the caller's general path


def test_quantize_small_declines_when_switched_off_or_large(monkeypatch):
    attrs, _ = resolve_attributes(None, rounding="nearest_even", tininess="after", subnormals=True, saturate=False, rng=None)
    x = np.ones(10, np.float32)
    args = (sf.bf16, attrs, None, None)
    assert _fastpaths.quantize_small(x, *args) is not None
    assert _fastpaths.quantize_small(np.ones(_fastpaths.BLOCK_SIZE + 1, np.float32), *args) is None
    stochastic, _ = resolve_attributes(None, rounding="stochastic", tininess="after", subnormals=True, saturate=False, rng=1)
    assert _fastpaths.quantize_small(x, sf.bf16, stochastic, None, None) is None
    monkeypatch.setattr(_fastpaths, "ENABLED", False)
    assert _fastpaths.quantize_small(x, *args) is None


def test_a_loop_of_small_calls_fills_the_table_once_they_pay_for_it(monkeypatch):
    # float64 -> e4m3, saturating (the FP8 recipes' cast): calls of 1,024 elements, each
    # too small to pay for 2**17 entries alone; in all they fill it, and the bits and
    # flags are the general path's before and after
    fresh = _fresh_plan(sf.fp8_e4m3, np.float64, "nearest_even", monkeypatch)
    plan = _plan.lookup(sf.fp8_e4m3, "d", fresh.attrs.replace(saturate=True))
    assert isinstance(plan, _table_cache.TablePlan) and plan.tables is None
    x = table_classes(sf.fp8_e4m3, np.float64, stride=3)
    calls = plan.entries // _table_cache.TABLE_FILL_RATIO // 1024
    filled_at = None
    for i in range(calls + 2):
        assert_same(np.resize(np.roll(x, 1024 * i), 1024), "fp8_e4m3", "nearest_even", saturate=True)
        if filled_at is None and plan.tables is not None:
            filled_at = i
    assert filled_at is not None and 0 < filled_at < calls  # (assert_same encodes each piece twice)
    _plan.plan.cache_clear()
