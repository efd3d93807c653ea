"""Properties of rounding that must hold for every format, input and mode (hypothesis).

Formats are drawn from the catalogue, a fixed list of custom layouts and random layouts;
inputs are float64 or float32 arrays built from hypothesis' own float strategies (plain,
log-uniform over the format's range, exact midpoints between neighbours, and edge values).
Every expectation is computed with exact ``fractions.Fraction`` arithmetic from the
format's declared layout (``emin``, ``mantissa_bits``, checked against numpy/ml_dtypes in
test_formats.py), never with softfloat's own rounding.

* deterministic modes: monotonic, idempotent, downward(x) <= x <= upward(x) with nothing
  representable strictly between, toward_zero never grows, nearest within half an ulp
  with ties to even / away, sign symmetry, and round-to-odd at >= p+2 bits followed by
  any rounding equal to that rounding directly (Boldo and Melquiond);
* stochastic rounding: only ever the two neighbours, up with probability equal to the
  distance in ulps (binomial, 5 sigma, fixed seeds), reproducible from a seed, blocking
  makes no difference, exact values are never perturbed.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import softfloat
from softfloat import Format, Specials

DETERMINISTIC = [m.value for m in softfloat.Rounding if m.is_deterministic]
assert "stochastic" not in DETERMINISTIC and len(DETERMINISTIC) == 6

CUSTOM = [Format(3, 4), Format(6, 9), Format(8, 12), Format(2, 1), Format(4, 3, "fnuz"),
          Format(3, 2, "fn"), Format(2, 3, "fn"), Format(11, 30), Format(9, 40), Format(5, 5, "finite"),
          Format(7, 1, "fnuz"), Format(10, 50)]
NAMED = list(softfloat.catalogue()) + CUSTOM
SOURCES = [np.float64, np.float32]


# ---------------------------------------------------------------------------------------
# strategies
# ---------------------------------------------------------------------------------------
@st.composite
def formats(draw):
    """A catalogue or fixed custom format, or a random valid layout."""
    if draw(st.booleans()):
        return draw(st.sampled_from(NAMED))
    e = draw(st.integers(2, 11))
    m = draw(st.integers(1, 52))
    specials = draw(st.sampled_from(list(Specials)))
    if e == 11:
        specials = Specials.IEEE  # the only policy that fits float64 with 11 exponent bits
    return Format(e, m, specials)


def _exact_in(dtype, q: Fraction) -> bool:
    try:
        v = float(q)
    except OverflowError:
        return False
    with np.errstate(over="ignore", under="ignore"):
        return math.isfinite(v) and Fraction(v) == q and float(dtype(v)) == v


def values(fmt: Format, dtype, *, allow_infinity=False, allow_nan=False):
    """Python floats exactly representable in ``dtype``, spread over ``fmt``'s range."""
    fi = np.finfo(dtype)
    width = fi.bits
    src_min_exp = int(fi.minexp) - int(fi.nmant)
    lo_e = max(fmt.emin - fmt.mantissa_bits - 3, src_min_exp)
    hi_e = min(fmt.emax + 1, int(fi.maxexp) - 1)

    def scaled(f, e, negative):
        with np.errstate(under="ignore"):
            v = float(dtype(math.ldexp(f, e)))
        return -v if negative else v

    log_uniform = st.builds(scaled, st.floats(1, 2, exclude_max=True, width=width),
                            st.integers(lo_e, hi_e), st.booleans())
    plain = st.floats(allow_nan=allow_nan, allow_infinity=allow_infinity, width=width)
    edges = [Fraction(v) for v in (fmt.max_finite, fmt.min_normal, fmt.min_subnormal)]
    edges += [e * k for e in list(edges) for k in (Fraction(1, 2), Fraction(3, 2), Fraction(3, 4))]
    edges += [Fraction(fmt.max_finite) + Fraction(fmt.max_finite) * Fraction(fmt.epsilon) / 4, Fraction(0)]
    edge_values = sorted({float(q) for q in edges if _exact_in(dtype, q)})
    edge = st.builds(lambda v, neg: -v if neg else v, st.sampled_from(edge_values), st.booleans())
    strategies = [log_uniform, plain, edge]
    tie = ties(fmt, dtype)
    if tie is not None:
        strategies.append(tie)
    if allow_infinity:
        strategies.append(st.sampled_from([math.inf, -math.inf]))
    return st.one_of(strategies)


def ties(fmt: Format, dtype):
    """Values of ``fmt``, midpoints between neighbours, and both nudged by a little (None if
    ``dtype`` cannot hold the midpoints).  Rounding decisions are made right here."""
    fi = np.finfo(dtype)
    m = fmt.mantissa_bits
    spare = int(fi.nmant) + 1 - (m + 2)  # source bits below a target midpoint
    if spare < 0:
        return None
    e_lo, e_hi = max(fmt.emin, int(fi.minexp)), min(fmt.emax, int(fi.maxexp) - 1)
    if e_lo > e_hi:
        return None

    @st.composite
    def tie(draw):
        e = draw(st.integers(e_lo, e_hi))
        j = draw(st.integers(0 if e == fmt.emin else 1 << m, (1 << (m + 1)) - 1))
        half = draw(st.integers(0, 1))  # 0: a value of fmt, 1: a midpoint
        q = Fraction(2 * j + half) * Fraction(2) ** (e - m - 1)
        if spare and draw(st.booleans()):
            nudge = draw(st.sampled_from([-1, 1])) * Fraction(2) ** (e - m - 1 - draw(st.integers(1, spare)))
            q = abs(q + nudge)
        if not _exact_in(dtype, q):  # only below the source's subnormal range
            q = Fraction(2 * j + half) * Fraction(2) ** (e - m - 1)
        v = float(q)
        assert _exact_in(dtype, q)
        return -v if draw(st.booleans()) else v

    return tie()


@st.composite
def cases(draw, *, allow_infinity=False, allow_nan=False, max_size=16):
    """(format, array): independent values, or a cluster a few quarter-ulps apart."""
    fmt = draw(formats())
    dtype = draw(st.sampled_from(SOURCES))
    element = values(fmt, dtype, allow_infinity=allow_infinity, allow_nan=allow_nan)
    if draw(st.booleans()):
        xs = draw(st.lists(element, min_size=1, max_size=max_size))
        return fmt, np.array(xs, dtype=dtype)
    center = draw(values(fmt, dtype))
    step = ulp_of(Fraction(center), fmt) / 4 if center else Fraction(fmt.min_subnormal) / 4
    offsets = draw(st.lists(st.integers(-16, 16), min_size=1, max_size=max_size))
    with np.errstate(over="ignore", under="ignore"):
        xs = [dtype(_to_float(Fraction(center) + k * step)) for k in offsets]
    return fmt, np.array(xs, dtype=dtype)


def _to_float(q: Fraction) -> float:
    try:
        return float(q)
    except OverflowError:
        return math.inf if q > 0 else -math.inf


# ---------------------------------------------------------------------------------------
# exact helpers (Fraction arithmetic on the declared layout)
# ---------------------------------------------------------------------------------------
def floor_log2(q: Fraction) -> int:
    """floor(log2(q)) for q > 0, exactly."""
    e = q.numerator.bit_length() - q.denominator.bit_length()
    return e - 1 if Fraction(2) ** e > q else e


def ulp_above(a: Fraction, fmt: Format) -> Fraction:
    """Distance from the magnitude a >= 0 (representable) to the next larger magnitude."""
    e = fmt.emin if a == 0 else max(floor_log2(a), fmt.emin)
    return Fraction(2) ** (e - fmt.mantissa_bits)


def ulp_of(x: Fraction, fmt: Format) -> Fraction:
    """The spacing of ``fmt``'s values in the binade of x (x != 0)."""
    return Fraction(2) ** (max(floor_log2(abs(x)), fmt.emin) - fmt.mantissa_bits)


def as64(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float64)


def same_values(a, b, fmt: Format) -> bool:
    """Equal as values of ``fmt``: NaN matches NaN; the zero sign counts where fmt has -0."""
    a, b = as64(a), as64(b)
    both_nan = np.isnan(a) & np.isnan(b)
    equal = (a == b) & ((np.signbit(a) == np.signbit(b)) | (not fmt.has_negative_zero))
    return bool(np.all(both_nan | equal))


def in_range(x: np.ndarray, fmt: Format) -> np.ndarray:
    return np.isfinite(x) & (np.abs(as64(x)) <= fmt.max_finite)


# ---------------------------------------------------------------------------------------
# deterministic modes
# ---------------------------------------------------------------------------------------
@given(case=cases(allow_infinity=True), mode=st.sampled_from(DETERMINISTIC), saturate=st.booleans(),
       subnormals=st.booleans(), tininess=st.sampled_from(["after", "before"]))
def test_monotonic(case, mode, saturate, subnormals, tininess):
    fmt, x = case
    x = np.sort(x)
    q = as64(softfloat.quantize(x, fmt, mode, saturate=saturate, subnormals=subnormals, tininess=tininess))
    # NaN only where a format without infinity overflows without saturation: no order
    q = q[~np.isnan(q)]
    assert np.all(q[:-1] <= q[1:]), (x, q)


@given(case=cases(allow_infinity=True, allow_nan=True), mode=st.sampled_from(DETERMINISTIC + ["stochastic"]),
       again=st.sampled_from(DETERMINISTIC + ["stochastic"]), saturate=st.booleans(), subnormals=st.booleans())
def test_idempotent(case, mode, again, saturate, subnormals):
    """A rounded value rounds to itself, bit for bit (signed zeros and NaN payloads included)."""
    fmt, x = case
    kw = dict(saturate=saturate, subnormals=subnormals, rng=0)
    q = softfloat.quantize(x, fmt, mode, **kw)
    qq = softfloat.quantize(q, fmt, again, **kw)
    assert qq.dtype == q.dtype
    assert qq.tobytes() == q.tobytes(), (x, q, qq)
    assert np.array_equal(softfloat.encode(q, fmt, again, **kw), softfloat.encode(x, fmt, mode, **kw))
    _, flags = softfloat.encode(q, fmt, again, return_flags=True, **kw)
    assert not flags.inexact.any() and not flags.underflow.any()


@given(case=cases())
@example(case=(softfloat.fp8_e4m3fnuz, np.array([-2.0**-12, -0.0, 2.0**-12])))
@example(case=(softfloat.bf16, np.array([-1.0 + 2.0**-30, 1.0 - 2.0**-30, 2.0**-133 * 1.5])))
def test_directed_neighbours_bracket_x(case):
    """downward(x) <= x <= upward(x), equal iff x is representable, else exactly one step apart."""
    fmt, x = case
    lo = as64(softfloat.quantize(x, fmt, "downward"))
    hi = as64(softfloat.quantize(x, fmt, "upward"))
    for xi, l, h in zip(as64(x), lo, hi):
        if not (math.isfinite(xi) and abs(xi) <= fmt.max_finite):
            continue
        qx, ql, qh = Fraction(xi), Fraction(l), Fraction(h)
        assert ql <= qx <= qh, (xi, l, h)
        if ql == qh:
            assert ql == qx
        else:
            assert ql < qx < qh
            # no value of fmt strictly between: the gap is the spacing next to the smaller magnitude
            assert qh - ql == ulp_above(min(abs(ql), abs(qh)), fmt), (xi, l, h)
            assert not (ql < 0 < qh)


@given(case=cases(allow_infinity=True), saturate=st.booleans(), subnormals=st.booleans())
def test_toward_zero_never_grows(case, saturate, subnormals):
    fmt, x = case
    q = as64(softfloat.quantize(x, fmt, "toward_zero", saturate=saturate, subnormals=subnormals))
    x64 = as64(x)
    finite = np.isfinite(x64)
    assert np.all(np.abs(q[finite]) <= np.abs(x64[finite]))
    nonzero = finite & (q != 0)
    assert np.all(np.signbit(q[nonzero]) == np.signbit(x64[nonzero]))
    # and it is the larger of the two candidates toward zero: the neighbour on the zero side
    lo = as64(softfloat.quantize(x, fmt, "downward"))
    hi = as64(softfloat.quantize(x, fmt, "upward"))
    sel = finite & (np.abs(x64) <= fmt.max_finite) & bool(subnormals)
    expected = np.where(x64 < 0, hi, lo)
    assert np.all(np.abs(q[sel]) == np.abs(expected[sel]))


@given(case=cases(), mode=st.sampled_from(["nearest_even", "nearest_away"]))
@example(case=(softfloat.bf16, np.array([1 + 2.0**-8, 1 + 3 * 2.0**-8, -(1 + 2.0**-8)])), mode="nearest_even")
@example(case=(softfloat.fp4_e2m1, np.array([0.25, 0.75, 2.5, 5.0, -5.0])), mode="nearest_away")
def test_nearest_is_within_half_an_ulp_and_breaks_ties_correctly(case, mode):
    fmt, x = case
    bits = softfloat.encode(x, fmt, mode)
    q = as64(softfloat.decode(bits, fmt))
    lo = as64(softfloat.quantize(x, fmt, "downward"))
    hi = as64(softfloat.quantize(x, fmt, "upward"))
    for xi, qi, b, l, h in zip(as64(x), q, bits.tolist(), lo, hi):
        if not (math.isfinite(xi) and abs(xi) <= fmt.max_finite) or xi == 0:
            continue
        qx, qq = Fraction(xi), Fraction(qi)
        half = ulp_of(qx, fmt) / 2
        error = abs(qq - qx)
        assert error <= half, (xi, qi)
        assert qi in (l, h)
        assert error <= abs(Fraction(l if qi == h else h) - qx)  # the nearer neighbour
        if error == half:  # a tie
            if mode == "nearest_even":
                assert b & 1 == 0, (xi, qi, hex(b))  # last significand bit is the pattern's last bit
            else:
                assert abs(qq) > abs(qx), (xi, qi)


SYMMETRIC = ["nearest_even", "nearest_away", "toward_zero", "odd"]


@given(case=cases(allow_infinity=True), mode=st.sampled_from(SYMMETRIC), saturate=st.booleans(),
       subnormals=st.booleans(), tininess=st.sampled_from(["after", "before"]))
def test_sign_symmetry(case, mode, saturate, subnormals, tininess):
    fmt, x = case
    kw = dict(saturate=saturate, subnormals=subnormals, tininess=tininess)
    assert same_values(softfloat.quantize(-x, fmt, mode, **kw), -softfloat.quantize(x, fmt, mode, **kw), fmt)
    assert same_values(softfloat.quantize(-x, fmt, "upward", **kw),
                       -softfloat.quantize(x, fmt, "downward", **kw), fmt)
    assert same_values(softfloat.quantize(-x, fmt, "downward", **kw),
                       -softfloat.quantize(x, fmt, "upward", **kw), fmt)


@st.composite
def odd_cases(draw):
    """A target format, an intermediate with >= 2 more significand bits and a wider exponent."""
    fmt, x = draw(cases(allow_infinity=True).filter(lambda c: c[0].exponent_bits <= 10
                                                    and c[0].mantissa_bits <= 50))
    k = draw(st.integers(2, min(4, 52 - fmt.mantissa_bits)) | st.integers(2, 52 - fmt.mantissa_bits))
    return fmt, Format(fmt.exponent_bits + 1, fmt.mantissa_bits + k), x


@given(case=odd_cases(), mode=st.sampled_from(DETERMINISTIC))
def test_round_to_odd_then_round_equals_direct_rounding(case, mode):
    fmt, wide, x = case
    direct = softfloat.quantize(x, fmt, mode)
    two_step = softfloat.quantize(softfloat.quantize(x, wide, "odd"), fmt, mode)
    assert same_values(two_step, direct, fmt), (x, direct, two_step)


@given(x=st.lists(st.floats(allow_nan=False), min_size=1, max_size=16)
       | st.lists(values(softfloat.bf16, np.float64, allow_infinity=True), min_size=1, max_size=16),
       mode=st.sampled_from(DETERMINISTIC))
def test_float64_via_e8m12_odd_then_bf16_equals_direct(x, mode):
    """The textbook use: e8m12 keeps bf16's exponent range and has 5 more bits."""
    x = np.array(x)
    direct = softfloat.encode(x, softfloat.bf16, mode)
    two_step = softfloat.encode(softfloat.quantize(x, Format(8, 12), "odd"), softfloat.bf16, mode)
    assert np.array_equal(two_step, direct)


def test_one_extra_bit_is_not_enough():
    """Control for the two tests above: with only p+1 bits, double rounding shows up."""
    x = np.array([1 + 2.0**-8 + 2.0**-30])  # just above the midpoint of 1 and 1 + 2**-7
    direct = softfloat.quantize(x, softfloat.bf16)
    two_step = softfloat.quantize(softfloat.quantize(x, Format(8, 8), "odd"), softfloat.bf16)
    assert direct[0] == 1 + 2.0**-7
    assert two_step[0] == 1.0  # the intermediate 1 + 2**-8 is a tie, broken to even


# ---------------------------------------------------------------------------------------
# stochastic rounding
# ---------------------------------------------------------------------------------------
@given(case=cases(max_size=64), seed=st.integers(0, 2**32))
def test_stochastic_gives_only_the_two_neighbours(case, seed):
    fmt, x = case
    bits = softfloat.encode(x, fmt, "stochastic", rng=seed)
    down = softfloat.encode(x, fmt, "downward")
    up = softfloat.encode(x, fmt, "upward")
    ok = in_range(x, fmt)
    assert np.all(((bits == down) | (bits == up))[ok]), (x, bits, down, up)


# (format, x, dtype): p = P(round up) is computed exactly from the neighbours
FREQUENCY_CASES = [
    (softfloat.bf16, 1 + 2.0**-9, np.float64),  # p = 1/4
    (softfloat.bf16, 1 + 3 * 2.0**-9, np.float32),  # p = 3/4
    (softfloat.bf16, -1.1, np.float64),  # negative
    (softfloat.bf16, 1 + 2.0**-23, np.float32),  # p = 2**-16: about 3 of 200k
    (softfloat.fp8_e4m3, 0.3, np.float64),
    (softfloat.fp8_e4m3, 0.3, np.float32),
    (softfloat.fp8_e5m2, 1e-7, np.float64),  # below the smallest subnormal
    (softfloat.fp16, 2.5 * 2.0**-24, np.float64),  # between subnormals, p = 1/2
    (softfloat.fp4_e2m1, 5.3, np.float64),
    (softfloat.fp6_e3m2, -0.2, np.float32),
    (softfloat.tf32, 1 + 2.0**-12 + 2.0**-20, np.float32),
    (softfloat.fp32, 1 / 3, np.float64),
    (softfloat.fp8_e4m3fnuz, -1e-4, np.float64),  # rounds to -min_subnormal or +0 (no -0)
    (softfloat.fp8_e4m3, 5e-324, np.float64),  # p ~ 1e-321: never up
    (Format(6, 9), 1000.3, np.float64),
]


@pytest.mark.parametrize(("fmt", "x", "dtype"), FREQUENCY_CASES,
                         ids=[f"{f.name}-{x!r}-{np.dtype(d).name}" for f, x, d in FREQUENCY_CASES])
def test_stochastic_frequency_matches_distance(fmt, x, dtype):
    n = 200_000
    xs = np.full(n, x, dtype=dtype)
    xq = Fraction(float(xs[0]))
    lo = Fraction(float(softfloat.quantize(xs[:1], fmt, "downward")[0]))
    hi = Fraction(float(softfloat.quantize(xs[:1], fmt, "upward")[0]))
    assert lo < xq < hi and hi - lo == ulp_above(min(abs(lo), abs(hi)), fmt)
    p = float((xq - lo) / (hi - lo))
    bits = softfloat.encode(xs, fmt, "stochastic", rng=20240601)
    up_bits = softfloat.encode(xs[:1], fmt, "upward")[0]
    down_bits = softfloat.encode(xs[:1], fmt, "downward")[0]
    ups = int(np.count_nonzero(bits == up_bits))
    assert ups + int(np.count_nonzero(bits == down_bits)) == n
    sigma = math.sqrt(n * p * (1 - p))
    assert abs(ups - n * p) <= 5 * sigma + 1, (ups, n * p, sigma)


def test_stochastic_is_unbiased_on_average():
    """The mean of many stochastic roundings of x converges to x (here to ~5 sigma)."""
    rng = np.random.default_rng(3)
    x = rng.uniform(1, 2, 64)
    reps = 4000
    q = softfloat.quantize(np.repeat(x, reps), softfloat.fp8_e5m2, "stochastic", rng=9).reshape(64, reps)
    ulp = 0.25  # e5m2 spacing in [1, 2)
    sigma = ulp / 2 / math.sqrt(reps)  # at most ulp/2 per draw
    assert np.all(np.abs(q.mean(axis=1) - x) <= 5 * sigma)


def test_stochastic_is_reproducible_from_a_seed():
    x = np.random.default_rng(0).standard_normal(10_000)
    a = softfloat.encode(x, "bf16", "stochastic", rng=123)
    assert np.array_equal(a, softfloat.encode(x, "bf16", "stochastic", rng=123))
    g1, g2 = np.random.default_rng(77), np.random.default_rng(77)
    b = softfloat.encode(x, "bf16", "stochastic", rng=g1)
    assert np.array_equal(b, softfloat.encode(x, "bf16", "stochastic", rng=g2))
    # a Generator moves on: the next call draws new bits
    assert not np.array_equal(softfloat.encode(x, "bf16", "stochastic", rng=g1), b)
    # different seeds differ (200 elements at p ~ 1/2 each: a clash has probability ~2**-200)
    assert not np.array_equal(a, softfloat.encode(x, "bf16", "stochastic", rng=124))
    # quantize and encode draw the same bits
    assert np.array_equal(softfloat.decode(a, "bf16"), softfloat.quantize(x, "bf16", "stochastic", rng=123))


def test_stochastic_without_rng_is_random():
    x = np.full(2000, 1 + 2.0**-8)  # p = 1/2
    assert not np.array_equal(softfloat.encode(x, "bf16", "stochastic"),
                              softfloat.encode(x, "bf16", "stochastic"))


@pytest.mark.parametrize("mode", ["stochastic", "nearest_even", "odd"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64], ids=lambda d: np.dtype(d).name)
def test_blocking_does_not_change_results(monkeypatch, mode, dtype):
    rng = np.random.default_rng(5)
    if dtype is np.int64:
        x = rng.integers(-(2**63), 2**63 - 1, 20_000, dtype=np.int64) >> rng.integers(0, 63, 20_000)
    else:
        with np.errstate(over="ignore"):
            x = (rng.standard_normal(20_000) * 2.0 ** rng.integers(-140, 140, 20_000)).astype(dtype)
    # block size -> how many leading elements to run (tiny blocks are slow: a prefix will do,
    # since each element takes its random draw in C order)
    sizes = {1 << 14: x.size, 1000: x.size, 7: 3001}
    views = {"contiguous": x, "strided": x[::-2]}

    def run(v, fmt):
        bits, flags = softfloat.encode(v, fmt, mode, rng=42, return_flags=True)
        values = softfloat.quantize(v, fmt, mode, rng=42)
        return bits, [m for _, m in flags], values

    reference = {(name, fmt): run(v, fmt) for name, v in views.items()
                 for fmt in (softfloat.bf16, softfloat.fp8_e4m3, Format(9, 40))}
    assert x.size > softfloat.codec._BLOCK  # the reference itself spans two default blocks
    for block, n in sizes.items():
        monkeypatch.setattr(softfloat.codec, "_BLOCK", block)
        for (name, fmt), (bits, flags, values) in reference.items():
            got_bits, got_flags, got_values = run(views[name][:n], fmt)
            assert np.array_equal(got_bits, bits[:n]), (block, name, fmt)
            assert all(np.array_equal(a, b[:n]) for a, b in zip(got_flags, flags)), (block, name, fmt)
            assert got_values.tobytes() == values[:n].tobytes(), (block, name, fmt)


@pytest.mark.parametrize(("dtype", "value", "other"), [
    (np.int64, 2**40 + 2**31, 2**60),  # other needs more than 53 bits
    (np.uint64, 2**40 + 2**31, 2**64 - 1),
    (np.float64, 2.0**40 + 2.0**31, np.inf),
    (np.float64, 2.0**40 + 2.0**31, 5e-324),
], ids=["int64", "uint64", "float64-inf", "float64-subnormal"])
def test_stochastic_element_does_not_depend_on_its_neighbours(dtype, value, other):
    """Element i uses draw i: what else is in the array (or its block) changes nothing."""
    alone = np.full(64, value, dtype=dtype)  # p = 1/4 in bf16
    with_other = np.append(alone, np.array([other], dtype=dtype))
    a = softfloat.encode(alone, "bf16", "stochastic", rng=5)
    b = softfloat.encode(with_other, "bf16", "stochastic", rng=5)[:64]
    assert len(set(a.tolist())) == 2  # both neighbours occur, so a remapping would show
    assert np.array_equal(a, b)


@pytest.mark.parametrize("fmt", [softfloat.bf16, softfloat.fp16, softfloat.fp8_e4m3, softfloat.fp8_e5m2fnuz,
                                 softfloat.fp6_e2m3, softfloat.fp4_e2m1, Format(3, 4)], ids=lambda f: f.name)
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=lambda d: np.dtype(d).name)
def test_stochastic_leaves_exact_values_alone(fmt, dtype):
    """Every finite value of the format, rounded stochastically with many seeds, stays put."""
    patterns = np.arange(1 << fmt.bits, dtype=np.uint64)
    values = softfloat.decode(patterns, fmt)
    keep = np.isfinite(values)
    patterns, values = patterns[keep].astype(fmt.storage_dtype), values[keep].astype(dtype)
    for seed in range(5):
        bits, flags = softfloat.encode(values, fmt, "stochastic", rng=seed, return_flags=True)
        assert np.array_equal(bits, patterns)
        assert not flags.any()


@given(case=cases(), seed=st.integers(0, 2**16))
def test_stochastic_of_representable_values_is_exact(case, seed):
    fmt, x = case
    q = softfloat.quantize(x, fmt)
    q = q[np.isfinite(q)]  # representable now (formats without infinity give NaN on overflow)
    again, flags = softfloat.quantize(q, fmt, "stochastic", rng=seed, return_flags=True)
    assert again.tobytes() == q.tobytes()
    assert not flags.inexact.any()


@pytest.mark.parametrize("fmt", [softfloat.fp64, softfloat.fp32, softfloat.fp16, softfloat.fp8_e4m3],
                         ids=lambda f: f.name)
def test_stochastic_far_below_the_subnormals_is_inexact(fmt):
    """A value so far below the smallest subnormal that more than 63 bits are cut (the
    rounding probability is then below 2**-63) still rounds to 0 *inexactly*: underflow
    and inexact are raised, as in every deterministic mode, not dropped with the bits."""
    if fmt is not softfloat.fp64:  # (float64 input is exact in fp64)
        x = np.array([5e-324, -5e-324, 2.0**-1000])  # 2**-1074 and friends
        bits, flags = softfloat.encode(x, fmt, "stochastic", rng=1, return_flags=True)
        assert (bits & ((1 << (fmt.bits - 1)) - 1) == 0).all()
        assert flags.underflow.all() and flags.inexact.all()
    for q in (Fraction(1, 2**1150), Fraction(-1, 2**3000)):
        b, f = softfloat.encode(q, fmt, "stochastic", rng=1, return_flags=True)
        assert int(b) & ((1 << (fmt.bits - 1)) - 1) == 0 and f.underflow and f.inexact
