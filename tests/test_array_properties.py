"""Every arithmetic numpy function mapped onto Arrays equals the bit-level composition its
docstring defines it as, in bf16, fp16, FP8 E4M3 and E5M2 and in every deterministic
rounding mode (``context(rounding=...)``), flags counted as those steps raise them.

The oracles are the bit-level API (sf.add/sub/mul/div/sqrt/sum/round_to_integral on bit
patterns) and, where the definition is "the exact value rounded once", exact rationals
rounded by ``sf.encode``; numpy float64 libm rounded once for the libm functions (which
are documented as not correctly rounded)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import softfloat as sf

FORMATS = ["bf16", "fp16", "fp8_e4m3", "fp8_e5m2"]
MODES = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd"]
SETTINGS = settings(max_examples=60, deadline=None)


@st.composite
def arrays(draw, shape=None, finite=False, min_size=1):
    """(fmt, mode, bits): bit patterns of one format, any class (finite only if asked)."""
    fmt = getattr(sf, draw(st.sampled_from(FORMATS)))
    mode = draw(st.sampled_from(MODES))
    shape = draw(st.sampled_from([(min_size + 4,), (3, 4), (2, 3)])) if shape is None else shape
    n = int(np.prod(shape))
    bits = np.array(draw(st.lists(st.integers(0, (1 << fmt.bits) - 1), min_size=n, max_size=n)), dtype=np.uint64)
    bits = bits.astype(fmt.storage_dtype).reshape(shape)
    if finite:
        bits = np.where(np.isfinite(sf.decode(bits, fmt)), bits, np.zeros_like(bits))
    return fmt, mode, bits


def _other(data, fmt, shape, finite=False):
    bits = np.array(data.draw(st.lists(st.integers(0, (1 << fmt.bits) - 1), min_size=int(np.prod(shape)),
                                       max_size=int(np.prod(shape)))), dtype=np.uint64).astype(fmt.storage_dtype)
    bits = bits.reshape(shape)
    if finite:
        bits = np.where(np.isfinite(sf.decode(bits, fmt)), bits, np.zeros_like(bits))
    return bits


def A(bits, fmt):
    return sf.Array.from_bits(np.asarray(bits, dtype=fmt.storage_dtype), fmt)


def same(got, want, fmt):
    """An Array bit for bit ``want`` (bit patterns), any NaN for a NaN (an operation's NaN
    is the platform's default NaN)."""
    assert isinstance(got, sf.Array) and got.format == fmt
    got_bits = np.asarray(got.bits)
    want = np.asarray(want, dtype=fmt.storage_dtype)
    assert got_bits.shape == want.shape
    nan = np.asarray(sf.decode(want, fmt))
    nan = np.isnan(nan)
    assert np.array_equal(np.isnan(np.asarray(sf.decode(got_bits, fmt))), nan), (got_bits, want)
    assert np.array_equal(got_bits[~nan], want[~nan]), (got_bits, want)


def counts(flags):
    """The number of elements raising each flag."""
    return {name: int(np.count_nonzero(m)) for name, m in flags}


def exact(value: Fraction, fmt, mode):
    return sf.encode(value, fmt, mode)


def divided(total_bits, n, fmt, mode):
    """total / n: the exact quotient rounded once (a NaN or infinity stays one)."""
    t = float(sf.decode(total_bits, fmt))
    if not math.isfinite(t) or n == 0:
        with np.errstate(all="ignore"):
            return sf.encode(np.float64(t) / np.float64(n), fmt, mode)
    return exact(Fraction(t) / n, fmt, mode)


# ---- reductions and statistics: the accumulator's sum, then one division ----
def mean_of(bits, fmt, accumulator, mode, axis=None):
    """The sum in the accumulator, one division by the count, one rounding into fmt: in
    the accumulator's format where it is wider (fp32 here), else in fmt."""
    wide = sf.as_format(accumulator)
    n = bits.size if axis is None else bits.shape[axis]
    if wide == fmt:
        totals = sf.sum(bits, fmt, axis=axis, accumulator=accumulator, out_format=fmt, rounding=mode)
        return np.array([divided(t, n, fmt, mode) for t in np.asarray(totals).reshape(-1)])
    values = sf.convert(bits, fmt, wide)  # exact
    totals = sf.sum(values, wide, axis=axis, accumulator=accumulator, out_format=wide, rounding=mode)
    quotients = np.array([divided(t, n, wide, mode) for t in np.asarray(totals).reshape(-1)], dtype=wide.storage_dtype)
    return np.asarray(sf.convert(quotients, wide, fmt, rounding=mode))


@SETTINGS
@given(case=arrays(finite=True), acc=st.sampled_from([None, "fp32"]), ddof=st.integers(0, 1))
def test_mean_var_std_are_their_steps(case, acc, ddof):
    fmt, mode, bits = case
    accumulator = fmt if acc is None else acc
    n = bits.size
    with sf.context(rounding=mode, accumulator=accumulator):
        x = A(bits, fmt)
        got_mean, got_var, got_std = np.mean(x), np.var(x, ddof=ddof), np.std(x, ddof=ddof)
    m = mean_of(bits, fmt, accumulator, mode)[0]
    same(got_mean, m, fmt)
    d = sf.sub(bits, np.full(bits.shape, m, dtype=fmt.storage_dtype), fmt, mode)
    squares = sf.mul(d, d, fmt, mode)
    v = divided(sf.sum(squares, fmt, accumulator=accumulator, out_format=fmt, rounding=mode), n - ddof, fmt, mode)
    same(got_var, v, fmt)
    same(got_std, sf.sqrt(np.asarray(v, dtype=fmt.storage_dtype), fmt, mode), fmt)


@SETTINGS
@given(case=arrays(shape=(3, 4)), acc=st.sampled_from([None, "fp32"]))
def test_mean_along_an_axis_is_the_sums_divided(case, acc):
    fmt, mode, bits = case
    accumulator = fmt if acc is None else acc
    with sf.context(rounding=mode, accumulator=accumulator):
        got = np.mean(A(bits, fmt), axis=0)
    same(got, mean_of(bits, fmt, accumulator, mode, axis=0), fmt)


@SETTINGS
@given(case=arrays(shape=(6,)), acc=st.sampled_from([None, "fp32"]))
def test_cumsum_is_the_prefix_sums(case, acc):
    fmt, mode, bits = case
    accumulator = fmt if acc is None else acc
    with sf.context(rounding=mode, accumulator=accumulator):
        got = np.cumsum(A(bits, fmt))
    want = [sf.sum(bits[:k], fmt, accumulator=accumulator, out_format=fmt, rounding=mode)
            for k in range(1, bits.size + 1)]
    same(got, want, fmt)


@SETTINGS
@given(case=arrays(shape=(3, 3)), acc=st.sampled_from([None, "fp32"]))
def test_trace_is_the_diagonals_sum(case, acc):
    fmt, mode, bits = case
    accumulator = fmt if acc is None else acc
    with sf.context(rounding=mode, accumulator=accumulator):
        got = np.trace(A(bits, fmt))
    same(got, sf.sum(np.diagonal(bits), fmt, accumulator=accumulator, out_format=fmt, rounding=mode), fmt)


@SETTINGS
@given(case=arrays(shape=(3, 4)))
def test_prod_and_cumprod_multiply_left_to_right(case):
    fmt, mode, bits = case
    with sf.context(rounding=mode):
        x = A(bits, fmt)
        got_prod, got_axis, got_cum = np.prod(x), np.prod(x, axis=0), np.cumprod(x)
    flat = bits.reshape(-1)
    running = [flat[0]]
    for b in flat[1:]:
        running.append(sf.mul(running[-1], b, fmt, mode))
    same(got_cum, running, fmt)
    same(got_prod, running[-1], fmt)
    p = bits[0]
    for row in bits[1:]:
        p = sf.mul(p, row, fmt, mode)
    same(got_axis, p, fmt)


# ---- elementwise compositions ----
@SETTINGS
@given(case=arrays(shape=(7,)), n=st.integers(1, 3))
def test_diff_is_neighbour_differences(case, n):
    fmt, mode, bits = case
    with sf.context(rounding=mode) as ctx:
        got = np.diff(A(bits, fmt), n=n)
    want, inexact = bits, 0
    for _ in range(n):
        want, flags = sf.sub(want[1:], want[:-1], fmt, mode, return_flags=True)
        inexact += counts(flags)["inexact"]
    same(got, want, fmt)
    assert ctx.flags.inexact == inexact


@SETTINGS
@given(case=arrays(shape=(4,)), data=st.data())
def test_outer_is_every_product(case, data):
    fmt, mode, bits = case
    other = _other(data, fmt, (3,))
    with sf.context(rounding=mode) as ctx:
        got = np.outer(A(bits, fmt), A(other, fmt))
    want, flags = sf.mul(bits[:, None], other[None, :], fmt, mode, return_flags=True)
    same(got, want, fmt)
    assert {k: getattr(ctx.flags, k) for k in counts(flags)} == counts(flags)


@SETTINGS
@given(case=arrays(shape=(6,), finite=True), decimals=st.integers(-1, 2))
def test_round_is_rint_at_a_decimal_scale(case, decimals):
    fmt, mode, bits = case
    with sf.context(rounding=mode):
        got = np.round(A(bits, fmt), decimals)
    rint = lambda b: sf.round_to_integral(b, fmt, "nearest_even")  # noqa: E731
    if decimals == 0:
        want = rint(bits)
    else:
        s = np.full(bits.shape, sf.encode(10.0 ** abs(decimals), fmt, mode), dtype=fmt.storage_dtype)
        want = (sf.div(rint(sf.mul(bits, s, fmt, mode)), s, fmt, mode) if decimals > 0
                else sf.mul(rint(sf.div(bits, s, fmt, mode)), s, fmt, mode))
    same(got, want, fmt)


@SETTINGS
@given(case=arrays(shape=(6,)), lo=st.floats(-4, 0), hi=st.floats(0, 4))
def test_clip_is_maximum_then_minimum(case, lo, hi):
    fmt, mode, bits = case
    with sf.context(rounding=mode):
        got = np.clip(A(bits, fmt), lo, hi)
    full = lambda v: np.full(bits.shape, sf.encode(v, fmt, mode), dtype=fmt.storage_dtype)  # noqa: E731
    same(got, sf.minimum(sf.maximum(bits, full(lo), fmt), full(hi), fmt), fmt)


def _exact_floor(x, y):
    return math.floor(Fraction(x) / Fraction(y))


@SETTINGS
@given(case=arrays(shape=(8,)), data=st.data())
def test_floor_divide_remainder_fmod_divmod_are_exact_then_rounded(case, data):
    fmt, mode, bits = case
    other = _other(data, fmt, (8,))
    with sf.context(rounding=mode) as ctx:
        x, y = A(bits, fmt), A(other, fmt)
        q, r, f = np.floor_divide(x, y), np.remainder(x, y), np.fmod(x, y)
        dq, dr = divmod(x, y)
        slash, percent = x // y, x % y
    same(dq, q.bits, fmt)
    same(dr, r.bits, fmt)
    same(slash, q.bits, fmt)
    same(percent, r.bits, fmt)
    xs, ys = (np.asarray(sf.decode(b, fmt), dtype=np.float64) for b in (bits, other))
    inexact = 0
    for i, (a, b) in enumerate(zip(xs, ys)):
        if not (math.isfinite(a) and math.isfinite(b) and b != 0):
            continue
        fl = _exact_floor(a, b)
        want_q, flags = sf.encode(fl, fmt, mode, return_flags=True) if fl else (
            sf.encode(-0.0 if (a < 0) != (b < 0) or (a == 0 and math.copysign(1, a) != math.copysign(1, b))
                      else 0.0, fmt), None)
        inexact += bool(flags is not None and flags.inexact)
        same(A([q.bits[i]], fmt), [want_q], fmt)
        mod = Fraction(a) - Fraction(b) * math.trunc(Fraction(a) / Fraction(b))  # C's fmod: exact in fmt
        want_f = sf.encode(mod, fmt) if mod else sf.encode(math.copysign(0.0, a), fmt)
        same(A([f.bits[i]], fmt), [want_f], fmt)
        if mod and (mod < 0) != (b < 0):
            want_r = sf.add(sf.encode(mod, fmt), other[i], fmt, mode)
        else:
            want_r = want_f if mod else sf.encode(math.copysign(0.0, b), fmt)
        same(A([r.bits[i]], fmt), [want_r], fmt)
    assert ctx.flags.inexact >= inexact


@SETTINGS
@given(case=arrays(shape=(6,)), n=st.lists(st.integers(-40, 40), min_size=6, max_size=6))
def test_ldexp_is_the_exact_product_rounded_once(case, n):
    fmt, mode, bits = case
    with sf.context(rounding=mode) as ctx:
        got = np.ldexp(A(bits, fmt), np.array(n))
    xs = np.asarray(sf.decode(bits, fmt), dtype=np.float64)
    want, inexact = [], 0
    for v, k in zip(xs, n):
        if math.isfinite(v) and v != 0:
            w, flags = sf.encode(Fraction(v) * Fraction(2) ** k, fmt, mode, return_flags=True)
            inexact += bool(flags.inexact)
        else:
            w = sf.encode(v, fmt, mode)
        want.append(w)
    same(got, want, fmt)
    assert ctx.flags.inexact == inexact


@SETTINGS
@given(case=arrays(shape=(6,)))
def test_modf_and_frexp_are_exact(case):
    fmt, mode, bits = case
    with sf.context(rounding=mode) as ctx:
        x = A(bits, fmt)
        frac, whole = np.modf(x)
        m, e = np.frexp(x)
    xs = np.asarray(sf.decode(bits, fmt), dtype=np.float64)
    with np.errstate(invalid="ignore"):
        wf, ww = np.modf(xs)
        wm, we = np.frexp(xs)
    same(frac, sf.encode(wf, fmt), fmt)
    same(whole, sf.encode(ww, fmt), fmt)
    same(m, sf.encode(wm, fmt), fmt)
    finite = np.isfinite(xs)
    assert np.array_equal(e[finite], we[finite])
    assert ctx.flags.inexact == 0


@SETTINGS
@given(case=arrays(shape=(6,)), data=st.data())
def test_copysign_and_heaviside_select_exactly(case, data):
    fmt, mode, bits = case
    other = _other(data, fmt, (6,))
    with sf.context(rounding=mode):
        x, y = A(bits, fmt), A(other, fmt)
        got_c, got_h = np.copysign(x, y), np.heaviside(x, y)
    same(got_c, sf.copysign(bits, other, fmt), fmt)
    xs = np.asarray(sf.decode(bits, fmt), dtype=np.float64)
    one, zero = sf.encode(1.0, fmt), sf.encode(0.0, fmt)
    want = np.where(np.isnan(xs), bits, np.where(xs == 0, other, np.where(xs < 0, zero, one)))
    same(got_h, want, fmt)


@SETTINGS
@given(case=arrays(shape=(6,)), n=st.integers(-3, 4))
def test_float_power_by_a_small_integer_multiplies(case, n):
    fmt, mode, bits = case
    with sf.context(rounding=mode):
        got = np.float_power(A(bits, fmt), n)
    p = np.full(bits.shape, sf.encode(1.0, fmt), dtype=fmt.storage_dtype)
    if n != 0:
        p = bits
        for _ in range(abs(n) - 1):
            p = sf.mul(p, bits, fmt, mode)
        if n < 0:
            p = sf.div(np.full(bits.shape, sf.encode(1.0, fmt), dtype=fmt.storage_dtype), p, fmt, mode)
    same(got, p, fmt)


@SETTINGS
@given(case=arrays(shape=(6,)), data=st.data())
def test_hypot_is_float64_libm_rounded_once(case, data):
    fmt, mode, bits = case
    other = _other(data, fmt, (6,))
    with sf.context(rounding=mode):
        got = np.hypot(A(bits, fmt), A(other, fmt))
    xs, ys = (np.asarray(sf.decode(b, fmt), dtype=np.float64) for b in (bits, other))
    with np.errstate(invalid="ignore"):  # numpy's own hypot of a signalling NaN warns
        want = np.hypot(xs, ys)
    same(got, sf.encode(want, fmt, mode), fmt)


@pytest.mark.parametrize("mode", MODES)
def test_var_of_a_constant_is_zero_in_every_mode(mode):
    with sf.context(rounding=mode):
        assert np.var(sf.asarray([3.0] * 5, "bf16")).tolist() == 0.0


def test_fp16_means_and_medians_equal_numpys_float16():
    """numpy's float16 mean sums in float32 and divides there, then rounds once into
    float16, as Arrays with the default fp32 accumulator do; for slices of fewer than 8
    elements numpy's sum is sequential, as ours, so the bits agree -- including sums past
    fp16's range (40000 + 40000) and medians of two middle values near the top."""
    rng = np.random.default_rng(8)
    data = [rng.standard_normal((5, 7)) * 3000.0, np.full((2, 6), 40000.0), rng.uniform(-65504, 65504, (7, 3))]
    data.append(np.array([[60000.0, 62000.0, -1.0, 65504.0]]))
    for values in data:
        x = values.astype(np.float16)
        y = sf.asarray(x, "fp16")
        for axis in (0, 1, -1):
            if x.shape[axis] >= 8:
                continue
            want = np.mean(x, axis=axis)
            assert np.array_equal(np.mean(y, axis=axis).bits, want.view(np.uint16)), (values, axis)
            assert np.array_equal(np.median(y, axis=axis).bits, np.median(x, axis=axis).view(np.uint16))
    assert float(np.mean(sf.asarray([40000.0, 40000.0], "fp16"))) == 40000.0
