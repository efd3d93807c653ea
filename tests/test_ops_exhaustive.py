"""Exhaustive sweeps of the arithmetic against the reference of ``test_ops_arith.py``.

* add, sub, mul, div: every pair of patterns of every FP8 format (256 x 256), and of FP6,
  FP4 and a 5-bit IEEE format, in every deterministic mode, bits and all five flags;
* sqrt: every pattern of fp16 and bf16 (and of the small formats) in every mode;
* fma: FP8 triples -- every one of the 2**24 per format under ``--runslow``, a random
  slice in CI.

The reference (MPFR through gmpy2, exact Fractions, IEEE rules written out) is Python per
call, so the sweeps call it once per *group* of lanes that provably share a result:

* lanes whose operands are finite and whose exact result is finite and non-zero: the
  correctly rounded result depends on the exact value alone, so lanes are grouped by it.
  For FP8 the exact sums, products and fma results are float64 numbers (significands of
  at most 4 bits, exponents within 2**-34 .. 2**16: a product needs at most 8 bits and a
  sum at most 52), which TwoSum confirms lane by lane; quotients are grouped by their
  reduced integer ratio;
* every other lane (an infinite or NaN operand, an exact zero result, a division by
  zero): the result depends on the operands' magnitudes only through "zero or not", so
  lanes are grouped by the operand patterns with every finite non-zero magnitude replaced
  by 1 (signs, zeros, infinities and NaN payloads kept).

In CI the value groups are sliced (every ``oracle_stride``-th group, from an offset that
depends on the test) while every special group is checked; ``--runslow`` checks all.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import softfloat as sf
from tests.test_ops_arith import (FLAGS_CHECKED, MODES, bias_of, decode_pattern,
                                  describe_case, fmt_id, reference, rounded, run_op,
                                  stride_offset)

FP8 = (sf.fp8_e4m3, sf.fp8_e5m2, sf.fp8_e4m3fnuz, sf.fp8_e5m2fnuz)
SMALL = FP8 + (sf.fp6_e3m2, sf.fp6_e2m3, sf.fp4_e2m1, sf.Format(exponent_bits=2, mantissa_bits=2))
PAIR_OPS = ("add", "sub", "mul", "div")


# =====================================================================================
# grouping lanes that share a result
# =====================================================================================
@functools.lru_cache(maxsize=None)
def decode_table(fmt: sf.Format):
    """Per pattern: kind (0 finite, 1 infinite, 2 NaN), exact value as float64 (FP8 values
    are float64 numbers), and the sign bit; from the reference's decoder."""
    n = 1 << fmt.bits
    kind = np.zeros(n, dtype=np.int8)
    value = np.zeros(n, dtype=np.float64)
    for p in range(n):
        x = decode_pattern(p, fmt)
        kind[p] = {"finite": 0, "inf": 1, "nan": 2}[x.kind]
        if x.kind == "finite":
            value[p] = -float(x.q) if x.negative else float(x.q)
            assert abs(value[p]) == x.q  # exact
    negative = (np.arange(n) >> (fmt.bits - 1)).astype(bool)
    return kind, value, negative


def _two_sum_error(a, b):
    s = a + b
    bv = s - a
    return s, (a - (s - bv)) + (b - bv)


def exact_keys(op, fmt, operands):
    """(regular, key): lanes whose result is a function of the exact value alone, and a
    1-D key (float64 bits, or a (numerator, denominator) record for div) equal for two
    lanes exactly when their exact values are equal."""
    kind, value, _ = decode_table(fmt)
    ks = [kind[o] for o in operands]
    vs = [value[o] for o in operands]
    finite = np.logical_and.reduce([k == 0 for k in ks])
    if op == "div":
        scale = 2.0 ** (fmt.mantissa_bits + bias_of(fmt) - 1)  # value * scale: an integer
        num = (vs[0] * scale).astype(np.int64)
        den = (vs[1] * scale).astype(np.int64)
        assert np.all((num == vs[0] * scale) & (den == vs[1] * scale))
        regular = finite & (num != 0) & (den != 0)
        den = np.where(regular, den, 1)
        g = np.gcd(num, den)
        sign = np.where(den < 0, -1, 1)
        key = np.empty(num.size, dtype=[("n", np.int64), ("d", np.int64)])
        key["n"] = num // g * sign
        key["d"] = np.abs(den) // g
        return regular, key
    with np.errstate(all="ignore"):  # non-finite lanes are not regular
        if op == "mul":
            # at most 4 + 4 significand bits and no under/overflow: exact
            assert fmt.precision <= 4
            exact, err = vs[0] * vs[1], 0.0
        elif op in ("add", "sub"):
            exact, err = _two_sum_error(vs[0], vs[1] if op == "add" else -vs[1])
        elif op == "fma":
            exact, err = _two_sum_error(vs[0] * vs[1], vs[2])
        else:
            raise AssertionError(op)
    regular = finite & (exact != 0)
    assert not np.any(regular & (err != 0)), "an exact result is not a float64: group by Fraction"
    return regular, exact.view(np.int64)


def special_keys(fmt, operands):
    """Canonical operand patterns: finite non-zero magnitudes replaced by 1 (pattern of
    1.0), so that lanes which differ only in those magnitudes share a key."""
    kind, value, _ = decode_table(fmt)
    one = bias_of(fmt) << fmt.mantissa_bits
    sign = np.uint64(1 << (fmt.bits - 1))
    key = np.zeros(operands[0].size, dtype=np.int64)
    for o in operands:
        canon = np.where((kind[o] == 0) & (value[o] != 0), (o & sign) | np.uint64(one), o)
        key = (key << 16) | canon.astype(np.int64)
    return key


def expected_by_groups(op, fmt, operands, mode, stride=1, offset=0, cache=None):
    """Expected bits (uint64) and flags (5 x n), and the mask of lanes they cover: every
    special lane, and the value groups with index % stride == offset."""
    n = operands[0].size
    bits = np.zeros(n, dtype=np.uint64)
    flags = np.zeros((len(FLAGS_CHECKED), n), dtype=bool)
    checked = np.zeros(n, dtype=bool)
    regular, key = exact_keys(op, fmt, operands)
    special = special_keys(fmt, operands)
    for lanes, keys, sliced in ((np.nonzero(regular)[0], key[regular], True),
                                (np.nonzero(~regular)[0], special[~regular], False)):
        if lanes.size == 0:
            continue
        uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        want_bits = np.zeros(uniq.size, dtype=np.uint64)
        want_flags = np.zeros((len(FLAGS_CHECKED), uniq.size), dtype=bool)
        take = (np.arange(uniq.size) % stride == offset % stride) if sliced else np.ones(uniq.size, bool)
        for u in np.nonzero(take)[0]:
            lane = lanes[first[u]]
            patterns = tuple(int(o[lane]) for o in operands)
            ck = (sliced, uniq[u].item() if sliced else patterns)
            if cache is not None and ck in cache:
                result = cache[ck]
            else:
                result = reference(op, patterns, fmt, mode)
                if cache is not None:
                    cache[ck] = result
            want_bits[u], want_flags[:, u] = result
        bits[lanes] = want_bits[inverse]
        flags[:, lanes] = want_flags[:, inverse]
        checked[lanes] = take[inverse]
    return bits, flags, checked


def assert_sweep(op, fmt, operands, mode, stride=1, offset=0, cache=None):
    operands = [np.asarray(o, dtype=np.uint64).ravel() for o in operands]
    want_bits, want_flags, checked = expected_by_groups(op, fmt, operands, mode, stride, offset, cache)
    got_bits, got_flags = run_op(op, operands, fmt, mode)
    bad = np.nonzero(checked & ((got_bits != want_bits) | np.any(got_flags != want_flags, axis=0)))[0]
    if bad.size:
        rows = [describe_case(op, [o[i] for o in operands], fmt, mode, {},
                              (got_bits[i], got_flags[:, i]), (want_bits[i], want_flags[:, i]))
                for i in bad[:12]]
        pytest.fail(f"{op} {fmt.name} {mode}: {bad.size} of {int(checked.sum())} checked lanes "
                    "differ from the reference:\n" + "\n".join(rows))
    return int(checked.sum())


def all_pairs(fmt):
    p = np.arange(1 << fmt.bits, dtype=np.uint64)
    a, b = np.meshgrid(p, p, indexing="ij")
    return [a.ravel(), b.ravel()]


# =====================================================================================
# the grouping itself is sound: it reproduces per-lane reference calls
# =====================================================================================
@pytest.mark.parametrize("op", PAIR_OPS + ("fma",))
def test_grouping_equals_per_lane_reference(op):
    """On random lanes (specials, zeros, ties and all), the grouped expectation equals
    calling the reference lane by lane."""
    rng = np.random.default_rng(9)
    for fmt in (sf.fp8_e5m2, sf.fp8_e4m3fnuz):
        k = 3 if op == "fma" else 2
        operands = [rng.integers(0, 256, 3000, dtype=np.uint64) for _ in range(k)]
        operands[0][:64] = operands[1][:64]  # x - x, x / x
        for mode in ("nearest_even", "downward"):
            bits, flags, checked = expected_by_groups(op, fmt, operands, mode)
            assert checked.all()
            for i in range(0, 3000, 7):
                want = reference(op, [o[i] for o in operands], fmt, mode)
                assert (int(bits[i]), tuple(bool(f) for f in flags[:, i])) == want


# =====================================================================================
# every pair, every mode
# =====================================================================================
@pytest.mark.parametrize("fmt", SMALL, ids=fmt_id)
@pytest.mark.parametrize("op", PAIR_OPS)
def test_all_pairs_every_mode(op, fmt, oracle_stride, request):
    """All 2**(2*bits) pairs in every deterministic mode.  In CI the exact-value groups are
    sliced (every special lane is always checked); --runslow checks every pair."""
    operands = all_pairs(fmt)
    offset = stride_offset(request, oracle_stride)
    for j, mode in enumerate(MODES):
        assert_sweep(op, fmt, operands, mode, oracle_stride, offset + j)


# =====================================================================================
# sqrt: every pattern of fp16 and bf16 (and of the small formats)
# =====================================================================================
@pytest.mark.parametrize("fmt", (sf.fp16, sf.bf16) + SMALL, ids=fmt_id)
def test_sqrt_every_pattern_every_mode(fmt, oracle_stride, request):
    """Every pattern, every mode.  In CI the 16-bit formats check every oracle_stride-th
    pattern (the offset rotates with the mode, so each pattern is checked in at least one
    mode) plus every zero, infinity and NaN in every mode."""
    pats = np.arange(1 << fmt.bits, dtype=np.uint64)
    stride = oracle_stride if fmt.bits > 8 else 1
    offset = stride_offset(request, stride)
    kind, value, _ = decode_table(fmt)
    always = (kind != 0) | (value == 0)
    for j, mode in enumerate(MODES):
        got_bits, got_flags = run_op("sqrt", [pats], fmt, mode)
        pick = always | (pats % np.uint64(stride) == np.uint64((offset + j) % stride))
        bad = []
        for i in np.nonzero(pick)[0]:
            want = reference("sqrt", [pats[i]], fmt, mode)
            got = (int(got_bits[i]), tuple(bool(f) for f in got_flags[:, i]))
            if got != want:
                bad.append(describe_case("sqrt", [pats[i]], fmt, mode, {}, got, want))
        if bad:
            pytest.fail(f"{len(bad)} patterns differ:\n" + "\n".join(bad[:12]))


# =====================================================================================
# fma over FP8 triples
# =====================================================================================
def fma_slice(fmt, n, rng):
    """Random triples: half uniform patterns (every class, NaNs and infinities included),
    half with c near -(a*b) -- the product truncated to the format, negated, or a
    neighbour -- where fma's single rounding differs most from mul-then-add."""
    a = rng.integers(0, 256, n, dtype=np.uint64)
    b = rng.integers(0, 256, n, dtype=np.uint64)
    c = rng.integers(0, 256, n, dtype=np.uint64)
    for i in range(n // 2):
        x, y = decode_pattern(int(a[i]), fmt), decode_pattern(int(b[i]), fmt)
        if x.kind != "finite" or y.kind != "finite":
            continue
        bits, flags = rounded(x.q * y.q, x.negative == y.negative, fmt, "toward_zero", "after",
                              True, False)
        step = int(rng.integers(-1, 2))
        magnitude = bits & 0x7F
        if not flags[2] and 0 < magnitude + step < fmt.max_finite_bits:
            c[i] = bits + step
    return [a, b, c]


@pytest.mark.parametrize("fmt", FP8, ids=fmt_id)
def test_fma_fp8_random_triples(fmt, oracle_stride, request):
    """20 000 triples per format in every mode; each value group is checked in at least
    one mode in CI (offsets rotate with the mode), every group in every mode with
    --runslow."""
    rng = np.random.default_rng(stride_offset(request, 1 << 30))
    operands = fma_slice(fmt, 20_000, rng)
    offset = stride_offset(request, oracle_stride)
    for j, mode in enumerate(MODES):
        assert_sweep("fma", fmt, operands, mode, oracle_stride, offset + j)


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt", FP8, ids=fmt_id)
def test_fma_fp8_all_triples(fmt, mode):
    """Every one of the 2**24 triples (chunked by c; the reference is called once per
    distinct exact value across all chunks)."""
    a, b = all_pairs(fmt)
    cache: dict = {}
    for c0 in range(0, 256, 16):
        c = np.repeat(np.arange(c0, c0 + 16, dtype=np.uint64), a.size)
        assert_sweep("fma", fmt, [np.tile(a, 16), np.tile(b, 16), c], mode, cache=cache)
