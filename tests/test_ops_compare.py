"""Comparisons, totalOrder, minimum/maximum, next_up/next_down and ulp on bit patterns.

Oracles, none of them softfloat code:

* numpy's own float16/float32/float64 comparisons, ``minimum``/``fmin``, ``nextafter``
  and ``spacing`` on views of the same patterns: every fp16 pattern against a set of
  anchors (all specials, both zeros, subnormal and overflow edges, random patterns);
* for formats of 8 bits or fewer, every pair, against comparisons of the reference float64
  values (ml_dtypes, or the IEEE field formula for the custom formats) -- exact, since
  every value is a float64;
* totalOrder against a sort key written from IEEE 754-2019 5.10 with Fractions;
* next_up / next_down of the formats without infinity against the sorted list of their
  values.

Flags: the quiet predicates raise invalid only for signaling NaNs, the signaling ones for
every NaN; min/max/next/ulp only for signaling NaNs.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import softfloat as sf
from softfloat.ops.compare import (
    eq, ge, gt, le, lt, maximum, maximum_magnitude, maximum_magnitude_number, maximum_number,
    minimum, minimum_magnitude, minimum_magnitude_number, minimum_number, ne, next_down,
    next_up, total_order, total_order_mag, ulp, unordered,
)
from tests.oracle import _floor_log2
from tests.references import CUSTOM_FORMATS, REFERENCE, reference_values

SMALL = tuple(f for f in REFERENCE if f.bits <= 8) + tuple(f for f in CUSTOM_FORMATS if f.bits <= 8)
PREDICATES = {"eq": (eq, np.equal), "ne": (ne, np.not_equal), "lt": (lt, np.less),
              "le": (le, np.less_equal), "gt": (gt, np.greater), "ge": (ge, np.greater_equal)}
NUMPY_VIEW = {sf.fp16: (np.uint16, np.float16), sf.fp32: (np.uint32, np.float32),
              sf.fp64: (np.uint64, np.float64)}


def fmt_id(fmt):
    return fmt.name


# =====================================================================================
# reference values and classes, from the bit layout or ml_dtypes
# =====================================================================================
def all_patterns(fmt):
    return np.arange(1 << fmt.bits, dtype=np.uint64).astype(fmt.storage_dtype)


def field_values(fmt, b):
    """IEEE 754 3.4 by formula: (-1)**S * 2**(max(E, 1) - bias) * (E > 0).F, NaN/inf by
    each policy's layout (used where no reference dtype exists)."""
    b = np.asarray(b, dtype=np.uint64)
    m = fmt.mantissa_bits
    e = ((b >> np.uint64(m)) & np.uint64((1 << fmt.exponent_bits) - 1)).astype(np.int64)
    f = (b & np.uint64((1 << m) - 1)).astype(np.float64)
    sig = np.where(e > 0, f + 2.0**m, f)
    with np.errstate(over="ignore"):  # the all-ones exponent of IEEE formats, replaced below
        v = np.ldexp(sig, (np.maximum(e, 1) - fmt.bias - m).astype(np.int32))
    v = np.where((b >> np.uint64(fmt.bits - 1)) != 0, -v, v)
    top = (1 << fmt.exponent_bits) - 1
    policy = fmt.specials.value
    if policy == "ieee":
        v = np.where(e == top, np.where(f == 0, np.copysign(np.inf, v), np.nan), v)
    elif policy == "fn":
        v = np.where((e == top) & (f == 2.0**m - 1), np.nan, v)
    elif policy == "fnuz":
        v = np.where(b == np.uint64(1 << (fmt.bits - 1)), np.nan, v)
    return v


def ref_values(fmt, b):
    """float64 values of patterns: numpy / ml_dtypes views, else the field formula."""
    if fmt in REFERENCE:
        return reference_values(fmt, b)
    if fmt in NUMPY_VIEW:
        uint, flt = NUMPY_VIEW[fmt]
        with np.errstate(invalid="ignore"):
            return np.asarray(b).astype(uint).view(flt).astype(np.float64)
    return field_values(fmt, b)


def signaling(fmt, b):
    """NaN patterns with the quiet bit clear (IEEE formats only have them)."""
    b = np.asarray(b, dtype=np.uint64)
    if fmt.specials.value != "ieee":
        return np.zeros(b.shape, dtype=bool)
    return np.isnan(ref_values(fmt, b)) & ((b & np.uint64(1 << (fmt.mantissa_bits - 1))) == 0)


def anchors(fmt, rng, n_random=120):
    """Patterns of every class of an IEEE format: zeros, subnormal and normal edges, max,
    infinities, quiet and signaling NaNs with payloads, and random patterns; both signs."""
    m = fmt.mantissa_bits
    inf = fmt.exponent_mask
    mags = [0, 1, 2, (1 << m) - 1, 1 << m, (1 << m) + 1, fmt.max_finite_bits - 1, fmt.max_finite_bits,
            inf, inf + 1, inf + 2, inf | (1 << (m - 1)), inf | (1 << (m - 1)) | 1, inf | ((1 << m) - 1),
            (fmt.bias << m), (fmt.bias << m) + 1, (fmt.bias << m) - 1]
    mags += [int(v) for v in rng.integers(0, 1 << (fmt.bits - 1), n_random, dtype=np.uint64)]
    mags = np.array(mags, dtype=np.uint64)
    both = np.concatenate([mags, mags | np.uint64(fmt.sign_mask)])
    return np.unique(both).astype(fmt.storage_dtype)


def random_patterns(fmt, rng, n):
    """Random patterns, a third of them with the exponent field at an extreme."""
    b = rng.integers(0, 1 << fmt.bits, n, dtype=np.uint64)
    e_field = np.uint64(((1 << fmt.exponent_bits) - 1) << fmt.mantissa_bits)
    third = n // 3
    b[:third] |= e_field                # infinities and NaNs (IEEE)
    b[third:2 * third] &= ~e_field      # zeros and subnormals
    return b.astype(fmt.storage_dtype)


# =====================================================================================
# comparisons
# =====================================================================================
def check_predicates(fmt, a, b, va, vb):
    """Every predicate, quiet and signaling, against numpy on the values va, vb."""
    nan = np.isnan(va) | np.isnan(vb)
    snan = signaling(fmt, a) | signaling(fmt, b)
    for name, (ours, reference) in PREDICATES.items():
        with np.errstate(invalid="ignore"):
            want = reference(va, vb)
        for is_signaling in (False, True):
            got, flags = ours(a, b, fmt, signaling=is_signaling, return_flags=True)
            where = f"{fmt.name} {name} signaling={is_signaling}"
            np.testing.assert_array_equal(got, want, err_msg=where)
            np.testing.assert_array_equal(flags.invalid, np.broadcast_to(nan if is_signaling else snan, want.shape),
                                          err_msg=where)
            assert not (flags.overflow.any() or flags.underflow.any() or flags.inexact.any()
                        or flags.divide_by_zero.any())
    got, flags = unordered(a, b, fmt, return_flags=True)
    np.testing.assert_array_equal(got, np.broadcast_to(nan, got.shape))
    np.testing.assert_array_equal(flags.invalid, np.broadcast_to(snan, got.shape))


def test_comparisons_every_fp16_pattern_against_numpy():
    a = all_patterns(sf.fp16)[:, None]
    b = anchors(sf.fp16, np.random.default_rng(16))[None, :]
    check_predicates(sf.fp16, a, b, a.view(np.float16), b.view(np.float16))


@pytest.mark.parametrize("fmt", [sf.fp32, sf.fp64, sf.bf16, sf.tf32], ids=fmt_id)
def test_comparisons_wide_formats_against_numpy(fmt):
    rng = np.random.default_rng(fmt.bits)
    anchor = anchors(fmt, rng)
    a = np.concatenate([random_patterns(fmt, rng, 3000), anchor])
    b = a.copy()
    rng.shuffle(b)
    check_predicates(fmt, a[:, None], anchor[None, :], ref_or_numpy(fmt, a[:, None]),
                     ref_or_numpy(fmt, anchor[None, :]))
    check_predicates(fmt, a, b, ref_or_numpy(fmt, a), ref_or_numpy(fmt, b))


def ref_or_numpy(fmt, b):
    if fmt in NUMPY_VIEW:
        return np.asarray(b).view(NUMPY_VIEW[fmt][1])
    return field_values(fmt, b)


@pytest.mark.parametrize("fmt", SMALL, ids=fmt_id)
def test_comparisons_every_pair_of_small_formats(fmt):
    p = all_patterns(fmt)
    v = ref_values(fmt, p)
    check_predicates(fmt, p[:, None], p[None, :], v[:, None], v[None, :])


def test_comparison_examples_by_class():
    h = sf.fp16
    assert eq(0x0000, 0x8000, h) and not ne(0x0000, 0x8000, h)        # -0 == +0
    assert not eq(0x7E00, 0x7E00, h) and ne(0x7E00, 0x7E00, h)        # NaN != NaN
    assert lt(0xFC00, 0xFBFF, h) and lt(0x7BFF, 0x7C00, h)            # -inf < -max, max < inf
    assert lt(0x8001, 0x0000, h) and gt(0x0001, 0x8000, h)            # subnormals around zero
    assert eq(0x80, 0x80, "e4m3fnuz") is False                         # the fnuz NaN
    assert lt(0x7E, 0x7F, "e4m3") is False and gt(0xFE, 0x7E, "e4m3") is False
    # quiet vs signaling: invalid for sNaN only, or for any NaN
    assert lt(0x3C00, 0x7E00, h, return_flags=True)[1].invalid == np.False_
    assert lt(0x3C00, 0x7C01, h, return_flags=True)[1].invalid == np.True_
    assert eq(0x3C00, 0x7E00, h, signaling=True, return_flags=True)[1].invalid == np.True_


# =====================================================================================
# totalOrder
# =====================================================================================
def total_order_rank(fmt, patterns):
    """Rank of each pattern under IEEE 754-2019 5.10 totalOrder, from a sort key built on
    exact Fractions: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN; NaNs of one sign by
    (quiet bit, payload), reversed for negative NaNs; the fnuz NaN as a positive NaN."""
    vals = ref_values(fmt, patterns)
    m = fmt.mantissa_bits
    keys = []
    for b, v in zip(patterns.tolist(), vals.tolist()):
        negative = bool(b >> (fmt.bits - 1))
        if math.isnan(v):
            if fmt.specials.value == "fnuz":
                negative = False
            quiet = (b >> (m - 1)) & 1 if fmt.specials.value == "ieee" else 1
            payload = b & ((1 << (m - 1)) - 1)
            key = (-2, -quiet, -payload) if negative else (2, quiet, payload)
        elif math.isinf(v):
            key = (-1, 0, 0) if v < 0 else (1, 0, 0)
        else:
            key = (0, Fraction(v), 0 if negative else 1)  # -0 before +0
        keys.append(key)
    order = sorted(range(len(keys)), key=keys.__getitem__)
    rank = np.empty(len(keys), dtype=np.int64)
    rank[order] = np.arange(len(keys))
    return rank


@pytest.mark.parametrize("fmt", SMALL, ids=fmt_id)
def test_total_order_every_pair_of_small_formats(fmt):
    p = all_patterns(fmt)
    rank = total_order_rank(fmt, p)
    got = total_order(p[:, None], p[None, :], fmt)
    np.testing.assert_array_equal(got, rank[:, None] <= rank[None, :])


def test_total_order_fp16_sorts_every_pattern():
    p = all_patterns(sf.fp16)
    rank = total_order_rank(sf.fp16, p)
    ordered = p[np.argsort(rank)]
    # consecutive patterns: strictly ordered (distinct patterns are never equivalent)
    assert total_order(ordered[:-1], ordered[1:], sf.fp16).all()
    assert not total_order(ordered[1:], ordered[:-1], sf.fp16).any()
    rng = np.random.default_rng(5)
    a, b = rng.choice(p, 200_000), rng.choice(p, 200_000)
    np.testing.assert_array_equal(total_order(a, b, sf.fp16), rank[a] <= rank[b])


@pytest.mark.parametrize("fmt", [sf.fp32, sf.fp64], ids=fmt_id)
def test_total_order_wide_formats(fmt):
    rng = np.random.default_rng(7)
    p = np.unique(np.concatenate([random_patterns(fmt, rng, 2000), anchors(fmt, rng)]))
    rank = total_order_rank(fmt, p)
    i, j = rng.integers(0, p.size, 50_000), rng.integers(0, p.size, 50_000)
    np.testing.assert_array_equal(total_order(p[i], p[j], fmt), rank[i] <= rank[j])


def test_total_order_examples():
    h = sf.fp16
    assert total_order(0x8000, 0x0000, h) and not total_order(0x0000, 0x8000, h)
    assert total_order(0xFE00, 0xFC00, h) and total_order(0x7C00, 0x7C01, h)   # -NaN < -inf; inf < sNaN
    assert total_order(0x7C01, 0x7E00, h) and total_order(0xFE00, 0xFC01, h)   # sNaN vs qNaN by sign
    assert total_order(0x7F, 0x80, "e4m3fnuz") and not total_order(0x80, 0x7F, "e4m3fnuz")
    assert total_order(0xFF, 0xFE, "e4m3")                                       # -NaN first
    assert total_order_mag(0x8000, 0x0000, h) and total_order_mag(0x0000, 0x8000, h)
    assert total_order_mag(0xFE00, 0x7E01, h) and not total_order_mag(0xFE01, 0x7E00, h)


# =====================================================================================
# minimum and maximum
# =====================================================================================
def quieted(fmt, b):
    b = np.asarray(b, dtype=np.uint64)
    return b | np.uint64(1 << (fmt.mantissa_bits - 1)) if fmt.specials.value == "ieee" else b


def expected_minmax(fmt, a, b, va, vb, s_a, s_b, name):
    """The 9.6 result as a pattern, from the reference values va, vb of a, b: -0 < +0;
    NaNs per NAN_POLICY (first signaling NaN, else first NaN, quieted); *_number prefer
    a number."""
    neg_a, neg_b = np.signbit(va), np.signbit(vb)
    by_mag = "magnitude" in name
    want_min = name.startswith("minimum")
    with np.errstate(invalid="ignore"):
        ka, kb = (np.abs(va), np.abs(vb)) if by_mag else (va, vb)
        a_first = np.where(ka == kb, np.where(va == vb, neg_a >= neg_b, va < vb) if want_min
                           else np.where(va == vb, neg_a <= neg_b, va > vb),
                           ka < kb if want_min else ka > kb)
    want = np.where(a_first, a, b)
    nan_a, nan_b = np.isnan(va), np.isnan(vb)
    nan_pick = quieted(fmt, np.where(s_a | (nan_a & ~s_b), a, b))
    if name.endswith("number"):
        want = np.where(nan_a & ~nan_b, b, np.where(nan_b & ~nan_a, a, want))
        want = np.where(nan_a & nan_b, nan_pick, want)
    else:
        want = np.where(nan_a | nan_b, nan_pick, want)
    return want, s_a | s_b


MINMAX = {"minimum": minimum, "maximum": maximum, "minimum_number": minimum_number,
          "maximum_number": maximum_number, "minimum_magnitude": minimum_magnitude,
          "maximum_magnitude": maximum_magnitude, "minimum_magnitude_number": minimum_magnitude_number,
          "maximum_magnitude_number": maximum_magnitude_number}


def check_minmax(fmt, a, b):
    """Every 9.6 operation on a and b (broadcast), against expected_minmax."""
    wide = np.broadcast_arrays(np.asarray(a, dtype=np.uint64), np.asarray(b, dtype=np.uint64))
    va, vb = ref_values(fmt, wide[0]), ref_values(fmt, wide[1])
    s_a, s_b = signaling(fmt, wide[0]), signaling(fmt, wide[1])
    for name, op in MINMAX.items():
        got, flags = op(a, b, fmt, return_flags=True)
        want, invalid = expected_minmax(fmt, *wide, va, vb, s_a, s_b, name)
        assert got.dtype == fmt.storage_dtype
        np.testing.assert_array_equal(got.astype(np.uint64), want, err_msg=f"{fmt.name} {name}")
        np.testing.assert_array_equal(flags.invalid, invalid, err_msg=f"{fmt.name} {name}")


@pytest.mark.parametrize("fmt", SMALL, ids=fmt_id)
def test_minmax_every_pair_of_small_formats(fmt):
    p = all_patterns(fmt)
    check_minmax(fmt, p[:, None], p[None, :])


def test_minmax_every_fp16_pattern():
    a = all_patterns(sf.fp16)[:, None]
    b = anchors(sf.fp16, np.random.default_rng(3), n_random=16)[None, :]
    check_minmax(sf.fp16, a, b)


@pytest.mark.parametrize("fmt", [sf.fp32, sf.fp64], ids=fmt_id)
def test_minmax_against_numpy(fmt):
    """numpy's minimum/maximum (NaN-propagating) and fmin/fmax (NaN-ignoring) agree
    wherever the operands are not two zeros (numpy does not order -0 and +0) and no
    NaN's bits are compared."""
    uint, flt = NUMPY_VIEW[fmt]
    rng = np.random.default_rng(11)
    a, b = random_patterns(fmt, rng, 20_000), random_patterns(fmt, rng, 20_000)
    rng.shuffle(b)
    va, vb = a.view(flt), b.view(flt)
    zeros = (va == 0) & (vb == 0)
    for ours, theirs in ((minimum, np.minimum), (maximum, np.maximum), (minimum_number, np.fmin),
                         (maximum_number, np.fmax)):
        with np.errstate(invalid="ignore"):
            want = theirs(va, vb)
        got = ours(a, b, fmt).view(flt)
        nan = np.isnan(want)
        np.testing.assert_array_equal(np.isnan(got), nan)
        np.testing.assert_array_equal(got[~nan & ~zeros].view(uint), want[~nan & ~zeros].view(uint))
    check_minmax(fmt, a, b)


def test_minmax_examples():
    h = sf.fp16
    assert int(minimum(0x0000, 0x8000, h)) == 0x8000 and int(maximum(0x8000, 0x0000, h)) == 0x0000
    assert int(minimum(0x3C00, 0x7C01, h)) == 0x7E01                   # sNaN quieted
    r, flags = minimum_number(0x7C01, 0x3C00, h, return_flags=True)
    assert int(r) == 0x3C00 and flags.invalid                          # the number, and invalid
    assert int(maximum_number(0x7E00, 0xFE00, h)) == 0x7E00             # two NaNs: the first
    assert int(minimum(0x7E00, 0x7C01, h)) == 0x7E01                    # signaling NaN first
    assert int(minimum(0x80, 0x01, "e4m3fnuz")) == 0x80
    assert int(maximum_number(0x80, 0x81, "e4m3fnuz")) == 0x81


# =====================================================================================
# next_up, next_down
# =====================================================================================
def check_next_against_numpy(fmt, p):
    uint, flt = NUMPY_VIEW[fmt]
    x = p.view(flt)
    nan = np.isnan(x)
    for ours, toward in ((next_up, np.inf), (next_down, -np.inf)):
        got, flags = ours(p, fmt, return_flags=True)
        with np.errstate(over="ignore", invalid="ignore"):  # max -> inf; sNaN operands
            want = np.nextafter(x, flt(toward)).view(uint)
        np.testing.assert_array_equal(got[~nan], want[~nan], err_msg=ours.__name__)
        np.testing.assert_array_equal(got[nan], quieted(fmt, p[nan]).astype(uint))  # payload kept
        np.testing.assert_array_equal(flags.invalid, signaling(fmt, p))
        assert not (flags.overflow.any() or flags.underflow.any() or flags.inexact.any())


def test_next_every_fp16_pattern_against_numpy():
    check_next_against_numpy(sf.fp16, all_patterns(sf.fp16))


@pytest.mark.parametrize("fmt", [sf.fp32, sf.fp64], ids=fmt_id)
def test_next_wide_formats_against_numpy(fmt):
    rng = np.random.default_rng(13)
    check_next_against_numpy(fmt, np.concatenate([random_patterns(fmt, rng, 50_000), anchors(fmt, rng)]))


@pytest.mark.parametrize("fmt", SMALL + (sf.bf16,), ids=fmt_id)
def test_next_against_sorted_values(fmt):
    """next_up is the next larger value of the sorted list of the format's values (with
    both zeros at 0); at the top it stays (inf, or max_finite without infinity)."""
    p = all_patterns(fmt)
    v = ref_values(fmt, p)
    num = ~np.isnan(v)
    ladder = np.unique(v[num])  # sorted distinct values, -0 and +0 merged
    for ours, step in ((next_up, 1), (next_down, -1)):
        got = ref_values(fmt, ours(p[num], fmt))
        pos = np.searchsorted(ladder, v[num])
        want = ladder[np.clip(pos + step, 0, ladder.size - 1)]
        np.testing.assert_array_equal(got, want, err_msg=ours.__name__)
        assert not np.isnan(got).any()
    # a zero result keeps the operand's sign: next_up(-min_sub) = -0, next_down(+min_sub) = +0
    zero_up = next_up(fmt.sign_mask | 1, fmt)
    assert int(zero_up) == (fmt.sign_mask if fmt.has_negative_zero else 0)
    assert int(next_down(1, fmt)) == 0


def test_next_examples():
    assert int(next_up(0x7E, "e4m3")) == 0x7E and int(next_down(0xFE, "e4m3")) == 0xFE
    assert int(next_up(0x7F, "e5m2fnuz")) == 0x7F and int(next_up(0x81, "e5m2fnuz")) == 0x00
    assert int(next_up(0x80, "e5m2fnuz")) == 0x80                  # the NaN
    assert int(next_up(0x7, "e2m1")) == 0x7 and int(next_up(0xF, "e2m1")) == 0xE
    assert int(next_up(0xFFF0_0000_0000_0000, "fp64")) == 0xFFEF_FFFF_FFFF_FFFF
    r, flags = next_up(0x7FF0_0000_0000_0001, "fp64", return_flags=True)
    assert int(r) == 0x7FF8_0000_0000_0001 and flags.invalid


# =====================================================================================
# ulp
# =====================================================================================
def ulp_by_definition(fmt, v):
    """math.ulp's definition: 2**(max(floor(log2|v|), emin) - mantissa_bits) (exact)."""
    if math.isnan(v):
        return math.nan
    if math.isinf(v):
        return math.inf
    a = Fraction(abs(v))
    e = fmt.emin if a == 0 else max(_floor_log2(a), fmt.emin)
    return math.ldexp(1.0, e - fmt.mantissa_bits)


@pytest.mark.parametrize("fmt", SMALL + (sf.fp16, sf.bf16), ids=fmt_id)
def test_ulp_every_pattern_by_definition(fmt):
    p = all_patterns(fmt)
    got, flags = ulp(p, fmt, return_flags=True)
    v = ref_values(fmt, p)
    want = np.array([ulp_by_definition(fmt, x) for x in v.tolist()])
    np.testing.assert_array_equal(ref_values(fmt, got), want)
    np.testing.assert_array_equal(flags.invalid, signaling(fmt, p))


def test_ulp_fp16_against_numpy_spacing():
    p = all_patterns(sf.fp16)
    x = np.abs(p.view(np.float16))
    finite = np.isfinite(x) & (x < np.float16(65504))   # spacing(max) is inf (the step to inf)
    got = ulp(p, sf.fp16).view(np.float16)
    np.testing.assert_array_equal(got[finite], np.spacing(x[finite]))


@pytest.mark.parametrize("fmt", [sf.fp32, sf.fp64], ids=fmt_id)
def test_ulp_wide_formats_against_math_ulp(fmt):
    uint, flt = NUMPY_VIEW[fmt]
    rng = np.random.default_rng(17)
    p = np.concatenate([random_patterns(fmt, rng, 5000), anchors(fmt, rng)])
    x = p.view(flt)
    got = ulp(p, fmt).view(flt).astype(np.float64)
    if fmt is sf.fp64:
        want = np.array([math.ulp(abs(float(v))) for v in x])
    else:
        want = np.array([ulp_by_definition(fmt, float(v)) for v in x])
    nan = np.isnan(x)
    np.testing.assert_array_equal(got[~nan], want[~nan])
    assert np.isnan(got[nan]).all()


# =====================================================================================
# the public boundary
# =====================================================================================
def test_scalars_broadcasting_and_dtypes():
    assert lt(0x3C00, 0x4000, "fp16") is True
    assert isinstance(minimum(0x3C00, 0x4000, "fp16"), np.uint16)
    r, flags = eq(0x7C01, 0x7C01, "fp16", return_flags=True)
    assert r is False and flags.invalid == np.True_ and flags.shape == ()
    assert le([[0x3C00], [0x4000]], [0x3C00, 0x4000, 0x4200], "fp16").shape == (2, 3)
    assert next_up(np.array([0x3F800000], dtype=np.int64), "fp32").dtype == np.uint32
    assert ulp(np.uint64(0x3FF0_0000_0000_0000), "fp64") == 0x3CB0_0000_0000_0000


def test_errors_name_the_argument():
    with pytest.raises(TypeError, match="^signaling must be True or False"):
        lt(0, 0, "fp16", signaling="yes")
    with pytest.raises(TypeError, match="^return_flags"):
        minimum(0, 0, "fp16", return_flags=1)
    with pytest.raises(ValueError, match="^b holds"):
        eq(0, [0, 1 << 16], "fp16")
    with pytest.raises(TypeError, match="^a must"):
        next_up(1.0, "fp16")
    with pytest.raises(ValueError, match="broadcast"):
        total_order([1, 2], [1, 2, 3], "fp16")
