"""bf16 operations on small arrays (softfloat.ops._driver._small_bf16, its proof in
softfloat._fastpaths._bfloat16) equal the general path bit for bit, flags included.

The reference is the same public call with the off switch ``softfloat._fastpaths.ENABLED``
set to False.  Every finite bf16 pattern meets a few dozen partners (format thresholds of
both signs, random patterns) in add, sub, mul, div and sqrt, in every deterministic mode
and option; shapes 0-d, (1,), broadcast and 1,000; a spy checks the shortcut ran.
"""

from __future__ import annotations

import numpy as np
import pytest

import softfloat as sf
from softfloat import _fastpaths

from tests.fastpath_checks import assert_same, general, spy_on

DETERMINISTIC = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd"]
OPTIONS = [{}, {"tininess": "before"}, {"subnormals": False}, {"saturate": True},
           {"attributes": sf.RoundingAttributes(platform="arm")}]
OPS = {"add": sf.add, "sub": sf.sub, "mul": sf.mul, "div": sf.div}

#: zero, the subnormal ends, the smallest normals, 1 and its neighbours, 1.5, the largest
#: finite values: both signs, and random patterns
_THRESHOLDS = [0x0000, 0x0001, 0x007F, 0x0080, 0x0081, 0x0100, 0x3F7F, 0x3F80, 0x3F81, 0x3FC0, 0x4000, 0x7F00,
               0x7F7F, 0x1F80, 0x5F80, 0x2000]
PARTNERS = sorted(set(_THRESHOLDS + [p | 0x8000 for p in _THRESHOLDS]
                      + np.random.default_rng(23).integers(0, 0x7F80, 8).tolist()))
_ALL = np.arange(1 << 16, dtype=np.uint16)
FINITE = _ALL[(_ALL & 0x7F80) != 0x7F80]  # every finite pattern
CHUNK = 1 << 14  # the shortcut's size limit


def _chunks():
    return [FINITE[i:i + CHUNK] for i in range(0, FINITE.size, CHUNK)]



@pytest.fixture
def spy(monkeypatch):
    """Counts the calls the shortcuts answered."""
    # (in round to nearest even the float32 lane is tried first)
    return spy_on(monkeypatch, "bfloat16_arithmetic", "bfloat16_arithmetic_nearest_even")


def _check(call):
    assert_same(call(), general(call))


@pytest.mark.parametrize("rounding", DETERMINISTIC)
@pytest.mark.parametrize("name", sorted(OPS))
def test_every_pattern_against_partners(name, rounding, spy):
    op = OPS[name]
    for partner in PARTNERS:
        b = np.array(partner, dtype=np.uint16)
        for a in _chunks():
            _check(lambda: op(a, b, "bf16", rounding, return_flags=True))
            _check(lambda: op(b, a, "bf16", rounding, return_flags=True))
    assert spy


@pytest.mark.parametrize("rounding", DETERMINISTIC)
def test_sqrt_every_pattern(rounding, spy):
    for a in _chunks():
        nonneg = a[a < 0x8000]
        _check(lambda: sf.sqrt(nonneg, "bf16", rounding, return_flags=True))
        _check(lambda: sf.sqrt(nonneg, "bf16", rounding))
    assert spy


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("rounding", ["nearest_even", "toward_zero", "downward"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_options(name, rounding, options, spy):
    op = OPS[name]
    if "attributes" in options:
        options = {"attributes": options["attributes"].replace(rounding=rounding)} \
            if hasattr(options["attributes"], "replace") else options
        rounding = None
    for partner in PARTNERS[::3]:
        b = np.array(partner, dtype=np.uint16)
        for a in _chunks():
            _check(lambda: op(a, b, "bf16", rounding, return_flags=True, **options))
    for a in _chunks():
        nonneg = a[a < 0x8000]
        _check(lambda: sf.sqrt(nonneg, "bf16", rounding, return_flags=True, **options))
    assert spy


SHAPES = [((), ()), ((1,), (1,)), ((3, 1), (1, 4)), ((1000,), (1000,)), ((1000,), ()), ((0,), (0,)),
          ((2, 0), (1,))]


@pytest.mark.parametrize("want", [False, True])
@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("name", sorted(OPS))
def test_shapes(name, shapes, want):
    rng = np.random.default_rng(len(name))
    a, b = (FINITE[rng.integers(0, FINITE.size, s)] for s in shapes)
    _check(lambda: OPS[name](a, b, "bf16", return_flags=want))
    _check(lambda: sf.sqrt(a & 0x7FFF, "bf16", return_flags=want))


def test_takes_a_thousand_elements(spy):
    rng = np.random.default_rng(1)
    nonzero = FINITE[(FINITE & 0x7FFF) != 0]  # divisors
    a, b = (nonzero[rng.integers(0, nonzero.size, 1000)] for _ in range(2))
    for op in OPS.values():
        op(a, b, "bf16", return_flags=True)
    sf.sqrt(a & 0x7FFF, "bf16")
    assert spy == [1000] * 5


@pytest.mark.parametrize("special", [0x7F80, 0xFF80, 0x7FC0, 0x7F81])
def test_specials_and_zero_divisors_decline(special, spy):
    a = np.array([0x3F80, special], dtype=np.uint16)
    b = np.array([0x3F80, 0x4000], dtype=np.uint16)
    for op in OPS.values():
        _check(lambda: op(a, b, "bf16", return_flags=True))
        _check(lambda: op(b, a, "bf16", return_flags=True))
    zero = np.array([0x3F80, 0x8000], dtype=np.uint16)
    _check(lambda: sf.div(b, zero, "bf16", return_flags=True))
    _check(lambda: sf.sqrt(np.array([0x3F80, 0xBF80], dtype=np.uint16), "bf16", return_flags=True))
    assert not spy


def test_declines_stochastic_daz_and_large(spy):
    a = FINITE[:CHUNK + 1]
    sf.add(a, a, "bf16")
    b = FINITE[:10]
    sf.add(b, b, "bf16", "stochastic", rng=np.random.default_rng(0))
    sf.add(b, b, "bf16", denormals_are_zero=True)
    assert not spy


def test_off_switch(spy, monkeypatch):
    monkeypatch.setattr(_fastpaths, "ENABLED", False)
    assert _fastpaths._bfloat16.applies(sf.formats.bf16, sf.RoundingAttributes())
    b = FINITE[:10]
    sf.add(b, b, "bf16")
    assert not spy


# ---- round to nearest even by numpy's float32 arithmetic and one rounding (_bfloat16.nearest_even) ----
@pytest.fixture
def ne_spy(monkeypatch):
    """The answers of softfloat._fastpaths.bfloat16_arithmetic_nearest_even (None: declined)."""
    answers = []
    real = _fastpaths.bfloat16_arithmetic_nearest_even

    def wrapper(*args):
        found = real(*args)
        answers.append(found is not None)
        return found
    monkeypatch.setattr(_fastpaths, "bfloat16_arithmetic_nearest_even", wrapper)
    return answers


@pytest.mark.parametrize("tininess", ["after", "before"])
@pytest.mark.parametrize("op", sorted(OPS))
def test_nearest_even_rounding_in_the_normal_range_equals_the_general_path(ne_spy, op, tininess):
    """Every finite pattern against each partner, keeping the lanes whose correctly rounded
    result is a normal bf16 strictly inside (smallest normal, max_finite) or zero: the
    shortcut's rounding takes them all (no lane below 2**-126 or at the overflow
    threshold), bits and flags the general path's."""
    fn = OPS[op]
    for partner in PARTNERS:
        b = np.full(FINITE.size, partner, dtype=np.uint16)
        want = general(lambda: fn(FINITE, b, "bf16", return_flags=True, tininess=tininess))
        mag = want[0] & 0x7FFF
        keep = ((mag > 0x0080) & (mag < 0x7F7F)) | (mag == 0)
        keep &= ~(want[1].underflow | want[1].overflow | want[1].invalid | want[1].divide_by_zero)
        for i in range(0, int(keep.sum()), CHUNK):
            x, y = FINITE[keep][i:i + CHUNK], b[keep][i:i + CHUNK]
            call = (lambda: fn(x, y, "bf16", return_flags=True, tininess=tininess))
            del ne_spy[:]
            _check(call)
            assert ne_spy[:1] == [True], (op, hex(partner))


@pytest.mark.parametrize("rounding", ["nearest_even"])
def test_nearest_even_edges_equal_the_general_path(ne_spy, rounding):
    """Results at the smallest normal, max_finite, the overflow threshold's tie, just below
    2**-126 and zeros of both signs (declined ones take the codec's rounding)."""
    def e(values):  # two elements at least: one element takes the one-element path
        return np.tile(np.asarray(sf.encode(values, "bf16")), 2)
    cases = [(e([2.0 ** -126, -2.0 ** -126, 0.0, -0.0]), e([0.0, -0.0, -0.0, -0.0]), sf.add),
             (e([3.3895313892515355e38, 1.0, -1.0]), e([1.0, -1.0, 1.0]), sf.mul),
             (e([3.3895313892515355e38]), e([1.0078125]), sf.mul),  # beyond the threshold: declined
             (e([2.0 ** -63 * 1.9921875]), e([2.0 ** -64 * 0.99609375]), sf.mul),  # just below 2**-126
             (e([1.0, 2.0 ** -126]), e([2.0 ** -126, 2.0 ** -133]), sf.add)]
    for x, y, fn in cases:
        for want_flags in (True, False):
            _check(lambda: fn(x, y, "bf16", return_flags=want_flags))
            _check(lambda: fn(x[:1].reshape(()), y[:1].reshape(()), "bf16", return_flags=want_flags))
    assert True in ne_spy and False in ne_spy


@pytest.mark.parametrize("op", sorted(OPS) + ["sqrt"])
def test_nearest_even_lane_against_mpfr(ne_spy, op):
    """The float32 lane (numpy's float32 arithmetic rounded once more) against MPFR at
    bf16's 8 bits: operands over the exponents where results stay normal, many with few
    significant bits (exact results, ties, quotients next to midpoints); bits and inexact."""
    import gmpy2
    rng = np.random.default_rng(7 + len(op))
    n = 4096
    mantissa = rng.integers(0, 128, (2, n)) & ~((1 << rng.integers(0, 8, (2, n))) - 1)
    exponent = rng.integers(127 - 50, 127 + 50, (2, n))
    if op in ("add", "sub"):  # partners close in exponent, and some 16 to 30 binades apart
        exponent[1] = exponent[0] - rng.choice([0, 1, 2, 7, 8, 9, 16, 17, 24, 30], n)
    sign = rng.integers(0, 2, (2, n)) << 15
    a, b = ((exponent << 7) | mantissa | sign).astype(np.uint16)
    swap = rng.random(n) < 0.5  # (the larger operand on either side)
    a, b = np.where(swap, b, a), np.where(swap, a, b)
    if op == "sqrt":
        a &= 0x7FFF
    call = sf.sqrt if op == "sqrt" else OPS[op]
    args = (a,) if op == "sqrt" else (a, b)
    bits, flags = call(*args, "bf16", return_flags=True)
    assert ne_spy == [True]
    ctx = gmpy2.context(precision=8, emin=-132, emax=128, subnormalize=True, round=gmpy2.RoundToNearest)
    mpfr_op = getattr(ctx, op)  # (the context's own add, sub, mul, div, sqrt: rounded in it)
    values = [sf.decode(p, "bf16").tolist() for p in args]
    got = sf.decode(bits, "bf16").tolist()
    for i in range(n):
        ctx.clear_flags()
        r = mpfr_op(*(gmpy2.mpfr(v[i], 53) for v in values))
        assert (got[i], bool(flags.inexact[i])) == (float(r), ctx.inexact), (op, [hex(int(p[i])) for p in args])
