"""floor_divide and ldexp on Arrays: the exact lanes (quotients too large for float64's
npy_divmod, ldexp results outside float64's normal range) are computed with integer
arrays and rounded once; checked against exact rational arithmetic (Fractions) and, bit
for bit with flags, against the definition they replaced (one Fraction per lane, rounded
by ``codec.encode``), in every format and rounding mode."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

import softfloat as sf
from softfloat import _array_elementwise as ew, _array_exact_lanes as lanes
from softfloat import _exact
from softfloat._context import get_context

MODES = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd", "stochastic"]
FORMATS = ["fp64", "fp32", "tf32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "fp8_e4m3fnuz", "fp6_e3m2", "fp4_e2m1"]
FLOATS = st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=True).filter(lambda v: v != 0)


# ---- the oracles: exact rationals ----
def _triple(value: Fraction):
    """(negative, sig, e_top) of an exact value, as softfloat._exact hands it to the rounding point."""
    exact = _exact.parse_exact(value, "x")
    return exact.negative, *exact.significand


@given(FLOATS, FLOATS)
@example(3.0, 1.5)  # an exact integer quotient
@example(-3.0, 1.5)
@example(2.0 ** 62 - 2.0 ** 10, 1.0)  # k + 1 = 2**62: the carry renormalises
@example(-(2.0 ** 62 - 2.0 ** 10), 1.0 - 2.0 ** -53)
@example(-(2.0 - 2.0 ** -52) * 2.0 ** 1023, 5e-324)  # beyond every format: the stand-in
@example(5e-324, 1.7976931348623157e308)
@example(-5e-324, 1.7976931348623157e308)  # -ceil of a tiny quotient: -1
@example(1.0, 3.0)
@example(-1.0, 3.0)
@example(9007199254740993.0, 1.0)
@example(-2.0 ** 60 - 2.0 ** 8, 3.0)
@settings(max_examples=3000, deadline=None)
def test_floor_significand_is_the_exact_floor(x, y):
    negative, sig, e_top = lanes.floor_significand(np.array([x]), np.array([y]))
    want = _triple(Fraction(math.floor(Fraction(x) / Fraction(y))))
    assert (bool(negative[0]), int(sig[0]), int(e_top[0])) == want


def test_floor_significand_near_integer_quotients():
    # quotients within a few ulps of an integer, at every scale, both signs
    rng = np.random.default_rng(0)
    y = rng.standard_normal(4000) * 2.0 ** rng.integers(-900, 900, 4000)
    q = np.round(rng.standard_normal(4000) * 2.0 ** rng.integers(0, 100, 4000))
    x = q * y + rng.choice([0.0, 1.0, -1.0], 4000) * np.abs(y) * 2.0 ** -rng.integers(0, 70, 4000).astype(float)
    keep = np.isfinite(x) & (x != 0) & (y != 0)
    x, y = x[keep], y[keep]
    negative, sig, e_top = lanes.floor_significand(x, y)
    for i in range(x.size):
        want = _triple(Fraction(math.floor(Fraction(float(x[i])) / Fraction(float(y[i])))))
        assert (bool(negative[i]), int(sig[i]), int(e_top[i])) == want, (x[i], y[i])


@given(FLOATS, st.integers(-2300, 2300))
@example(1.0, 1100)
@example(1.0, 1101)
@example(-1.5, -1201)
@example(1.0, -1200)
@example(5e-324, -1000)
@settings(max_examples=2000, deadline=None)
def test_ldexp_significand_is_exact(v, k):
    negative, sig, e_top = lanes.ldexp_significand(np.array([v]), np.array([k], dtype=np.int32))
    assert (bool(negative[0]), int(sig[0]), int(e_top[0])) == _triple(Fraction(v) * Fraction(2) ** k)


# ---- the definitions replaced: one Fraction per exact lane through codec.encode ----
def _fraction_patched(fmt, ctx, rounded, exact: dict):
    result, flags = rounded
    if not exact:
        return result, flags
    result = result.copy()
    masks = None if flags is None else {n: np.array(m, dtype=bool) for n, m in flags}
    for i, value in exact.items():
        bits, f = ctx.split(sf.encode(value, fmt, return_flags=ctx.track_flags, **ctx.options()))
        result.flat[i] = bits
        for n, m in ([] if masks is None else f):
            masks[n].flat[i] = bool(m)
    return result, None if flags is None else flags._replace(**masks)


def _fraction_floor_divide(fmt, ctx, a, b):
    x, y = ew._values(fmt, a, b)
    with np.errstate(all="ignore"):
        mod = np.fmod(x, y)
        div = (x - mod) / y - ((mod != 0) & ~np.isnan(mod) & ((y < 0) != (mod < 0)))
        floor = np.floor(div)
        floor += (div - floor) > 0.5
        quotient = np.where(div == 0, np.copysign(0.0, x / y), floor)
        quotient = np.where(y == 0, x / y, quotient)
        wide = np.isfinite(x) & np.isfinite(y) & (y != 0) & ~(np.abs(x / y) < 2.0 ** (52 - fmt.precision))
    result, flags = ew._rounded_once(fmt, ctx, quotient, [x, y])
    exact = {i: math.floor(Fraction(float(x.flat[i])) / Fraction(float(y.flat[i]))) for i in np.flatnonzero(wide)}
    result, flags = _fraction_patched(fmt, ctx, (result, flags), exact)
    if flags is None:
        return result, None
    return result, flags._replace(divide_by_zero=np.asarray(flags.divide_by_zero | ((y == 0) & np.isfinite(x) & (x != 0))))


def _fraction_ldexp(fmt, ctx, bits, n):
    (v,) = ew._values(fmt, bits)
    v, n = np.broadcast_arrays(v, n)
    low = fmt.emin - fmt.mantissa_bits
    k = np.clip(n, low - fmt.emax - 64, fmt.emax - low + 64).astype(np.int32)
    with np.errstate(all="ignore"):
        r = np.ldexp(v, k)
        wide = np.isfinite(v) & (v != 0) & ~(np.isfinite(r) & (np.abs(r) >= 2.0 ** -1022))
    rounded = ew._rounded_once(fmt, ctx, r, [v])
    exact = {i: Fraction(float(v.flat[i])) * Fraction(2) ** int(k.flat[i]) for i in np.flatnonzero(wide)}
    return _fraction_patched(fmt, ctx, rounded, exact)


class _Wrap:
    """The Array adapter _ldexp takes, handing back the bits."""
    is_array = staticmethod(lambda o: isinstance(o, sf.Array))
    wrap = staticmethod(lambda bits, fmt: bits)


class _Recording:
    """The context, with the flags ``record`` gets kept (the per-lane masks)."""

    def __init__(self, ctx):
        self.ctx, self.flags = ctx, None

    def __getattr__(self, name):
        return getattr(self.ctx, name)

    def record(self, operation, flags):
        self.flags = flags


def _same(got, want):
    (r1, f1), (r0, f0) = got, want
    assert r1.dtype == r0.dtype and np.array_equal(r1, r0)
    if f0 is None:
        assert f1 is None
        return
    for (name, m1), (_, m0) in zip(f1, f0):
        assert np.array_equal(np.asarray(m1), np.asarray(m0)), name


def _patterns(fmt, n, seed):
    """Random patterns, every special value, the extremes and small integers' neighbours."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 1 << fmt.bits, n, dtype=np.uint64).astype(fmt.storage_dtype)
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 3.0, -3.0, 0.5, 1e-300, -1e300]
    extra = sf.encode(np.array(specials), fmt, saturate=True)
    return np.concatenate([bits, np.asarray(extra, dtype=fmt.storage_dtype)])


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("rounding", MODES)
def test_floor_divide_equals_the_fraction_definition(fmt, rounding):
    fmt = getattr(sf, fmt)
    a = _patterns(fmt, 1500, 1)
    b = _patterns(fmt, 1500, 2)
    a, b = np.meshgrid(a[:60], b[:60]) if fmt.bits > 8 else (a, b)
    a, b = np.concatenate([a.ravel(), _patterns(fmt, 1500, 1)]), np.concatenate([b.ravel(), _patterns(fmt, 1500, 2)])
    for track in (True, False):
        got, want = [], []
        for fn, out in ((ew.UFUNCS[np.floor_divide], got), (_fraction_floor_divide, want)):
            with sf.context(rounding=rounding, rng=11, track_flags=track):
                out.extend(fn(fmt, get_context(), a, b))
        _same(got, want)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("rounding", MODES)
def test_ldexp_equals_the_fraction_definition(fmt, rounding, monkeypatch):
    fmt = getattr(sf, fmt)
    bits = _patterns(fmt, 2000, 3)
    rng = np.random.default_rng(4)
    n = rng.integers(-2300, 2300, bits.size)
    n[::3] = rng.integers(-80, 80, n[::3].size)
    n[::7] = rng.choice([fmt.emax + 1, fmt.emin - fmt.mantissa_bits - 1, 1100, -1200, 2**40, -2**40], n[::7].size)
    x = sf.asarray(sf.decode(bits, fmt), fmt)
    for track in (True, False):
        with sf.context(rounding=rounding, rng=11, track_flags=track):
            ctx = _Recording(get_context())
            monkeypatch.setattr(ew, "get_context", lambda: ctx)
            got = (ew.ldexp(_Wrap, x, n), ctx.flags)
            monkeypatch.undo()
        with sf.context(rounding=rounding, rng=11, track_flags=track):
            want = _fraction_ldexp(fmt, get_context(), x.bits, n)
        _same(got, want)


# ---- the fast float64 path, against exact rationals: every fp8 pair, a large fp16 sample ----
def _finite_pairs(fmt, a, b):
    x, y = sf.decode(a, fmt), sf.decode(b, fmt)
    keep = np.isfinite(x) & np.isfinite(y) & (y != 0)
    return a[keep], b[keep]


def _check_against_rationals(fmt, a, b, rounding):
    x, y = (np.asarray(sf.decode(v, fmt), dtype=np.float64) for v in (a, b))
    negative = np.signbit(x) ^ np.signbit(y)
    floors = [math.floor(Fraction(float(p)) / Fraction(float(q))) for p, q in zip(x, y)]
    values = np.array(floors, dtype=np.float64)  # |floor| < 2**53 in fp16 and FP8: exact
    values = np.where(values == 0, np.where(negative, -0.0, 0.0), values)
    want_bits, want_flags = sf.encode(values, fmt, rounding, return_flags=True)
    with sf.context(rounding=rounding):
        bits, flags = ew.UFUNCS[np.floor_divide](fmt, get_context(), a, b)
    assert np.array_equal(bits, want_bits)
    for (name, m1), (_, m0) in zip(flags, want_flags):
        assert np.array_equal(m1, m0), name


@pytest.mark.parametrize("fmt", ["fp8_e4m3", "fp8_e5m2"])
@pytest.mark.parametrize("rounding", MODES[:-1])
def test_floor_divide_every_fp8_pair(fmt, rounding):
    fmt = getattr(sf, fmt)
    every = np.arange(256, dtype=fmt.storage_dtype)
    a, b = (v.ravel() for v in np.meshgrid(every, every))
    _check_against_rationals(fmt, *_finite_pairs(fmt, a, b), rounding)


@pytest.mark.parametrize("rounding", MODES[:-1])
def test_floor_divide_fp16_sample(rounding):
    fmt = sf.fp16
    rng = np.random.default_rng(5)
    a = rng.integers(0, 1 << 16, 60000, dtype=np.uint64).astype(np.uint16)
    b = rng.integers(0, 1 << 16, 60000, dtype=np.uint64).astype(np.uint16)
    b[:20000] = a[:20000] ^ rng.integers(0, 16, 20000, dtype=np.uint16)  # quotients near 1
    _check_against_rationals(fmt, *_finite_pairs(fmt, a, b), rounding)


def test_the_public_operators_use_the_kernel():
    x = sf.asarray([7.0, -7.0, 1e300, -0.0, 3.0], "fp64")
    y = sf.asarray([2.0, 2.0, 3e-300, 5.0, 0.0], "fp64")
    with sf.context() as ctx:
        q = x // y
    assert ctx.flags.overflow == 1 and ctx.flags.divide_by_zero == 1 and ctx.flags.invalid == 0
    assert (np.floor_divide(x, y).bits == q.bits).all()
    assert (divmod(x, y)[0].bits == q.bits).all()
    assert q.to_numpy()[:2].tolist() == [3.0, -4.0] and np.isinf(q.to_numpy()[2])
    assert np.signbit(q.to_numpy()[3]) and np.isinf(q.to_numpy()[4])
    assert np.ldexp(x, 2000).to_numpy()[0] == np.inf and np.ldexp(x, -1080).to_numpy()[0] == 0.0
