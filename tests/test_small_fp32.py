"""fp32 arithmetic on small arrays (softfloat.ops._driver._small_fp32, its proof in
softfloat._fastpaths._float32) equals the general path and MPFR bit for bit, flags
included.

The reference is the same public call with the off switch ``softfloat._fastpaths.ENABLED``
set to False, on operands built to reach every case of the proof: the format's
thresholds of both signs (zeros, subnormal ends, smallest normals, 1 and its neighbours,
the largest finite values), exact cancellations, sums whose exponents lie 20 to 60
binades apart (TwoSum's error non-zero: the round-to-odd step), products that overflow,
underflow to subnormals and to zero; every deterministic mode and option.  MPFR
(tests/test_ops_arith's oracle) checks hypothesis' operands and quotients and roots
built within 2**-45 of the numbers where a rounding decision changes.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import softfloat as sf
from softfloat.ops._driver import SMALL_FP32

from tests.fastpath_checks import assert_same, general, spy_on
from tests.test_ops_arith import FLAGS_CHECKED, reference

DETERMINISTIC = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd"]
OPTIONS = [{}, {"tininess": "before"}, {"subnormals": False}, {"saturate": True},
           {"attributes": sf.RoundingAttributes(platform="arm")}]
OPS = {"add": sf.add, "sub": sf.sub, "mul": sf.mul, "div": sf.div}

_THRESHOLDS = [0x00000000, 0x00000001, 0x00000002, 0x007FFFFF, 0x00800000, 0x00800001, 0x3F7FFFFF, 0x3F800000,
               0x3F800001, 0x3FC00000, 0x7F7FFFFF, 0x7F7FFFFE, 0x7F000000, 0x1F800000, 0x5F800000, 0x33800000]


def _operands(seed: int, n: int = 4096):
    """(a, b) uint32 fp32 patterns: random, thresholds, cancellations, far exponents."""
    rng = np.random.default_rng(seed)
    signs = rng.integers(0, 2, (2, n), dtype=np.uint32) << np.uint32(31)
    exponents = rng.integers(0, 255, (2, n), dtype=np.uint32)  # finite: below 255
    exponents[1, : n // 4] = np.clip(exponents[0, : n // 4].astype(np.int64)
                                     - rng.integers(20, 61, n // 4), 0, 254).astype(np.uint32)  # far apart
    fractions = rng.integers(0, 1 << 23, (2, n), dtype=np.uint32)
    fractions[:, n // 4: n // 2] &= np.uint32(0x7F000F)  # few bits set: exact results, ties
    a, b = signs | (exponents << np.uint32(23)) | fractions
    a[n // 2: n // 2 + 256] = b[n // 2: n // 2 + 256] ^ np.uint32(0x80000000)  # x + (-x)
    table = np.array(_THRESHOLDS + [t | 0x80000000 for t in _THRESHOLDS], dtype=np.uint32)
    a[-2 * table.size:] = np.repeat(table, 2)[: 2 * table.size]
    b[-2 * table.size:] = np.tile(table, 2)[: 2 * table.size]
    return a, b


def _operands_for(name, seed, n=4096):
    """_operands, with the zero divisors (which the shortcut declines) made 1 for div."""
    a, b = _operands(seed, n)
    if name == "div":
        b = np.where((b & np.uint32(0x7FFFFFFF)) == 0, np.uint32(0x3F800000), b)
    return a, b


def _check(call):
    assert_same(call(), general(call))



@pytest.fixture
def spy(monkeypatch):
    """Counts the calls the shortcuts answered."""
    # (in round to nearest even the float32 lane is tried first)
    return spy_on(monkeypatch, "float32_arithmetic", "float32_arithmetic_nearest_even")


@pytest.mark.parametrize("rounding", DETERMINISTIC)
@pytest.mark.parametrize("name", sorted(OPS))
def test_built_operands_equal_the_general_path(name, rounding, spy):
    a, b = _operands_for(name, seed=len(name) * 7 + DETERMINISTIC.index(rounding))
    op = OPS[name]
    _check(lambda: op(a, b, "fp32", rounding, return_flags=True))
    _check(lambda: op(b, a, "fp32", rounding, return_flags=True))
    _check(lambda: op(a, b, "fp32", rounding))
    assert spy


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "default")
@pytest.mark.parametrize("rounding", ["nearest_even", "toward_zero", "downward"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_options(name, rounding, options, spy):
    a, b = _operands_for(name, seed=99, n=2048)
    _check(lambda: OPS[name](a, b, "fp32", rounding, return_flags=True, **options))
    assert spy


@pytest.mark.parametrize("shapes", [((), ()), ((1,), (1,)), ((3, 1), (1, 4)), ((5,), ())])
@pytest.mark.parametrize("want", [False, True])
def test_shapes(shapes, want, spy):
    rng = np.random.default_rng(5)
    a, b = (rng.integers(0, 0x7F800000, s, dtype=np.uint32) for s in shapes)
    _check(lambda: sf.add(a, b, "fp32", return_flags=want))
    _check(lambda: sf.mul(a, b, "fp32", "upward", return_flags=want))
    one_element = max(a.size, b.size) == 1  # softfloat.ops._driver._one_element answers first
    assert bool(spy) is not one_element


@pytest.mark.parametrize("special", [0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001])
def test_infinities_and_nans_decline(special, spy):
    a = np.array([0x3F800000, special], dtype=np.uint32)
    _check(lambda: sf.add(a, a[::-1].copy(), "fp32", return_flags=True))
    assert not spy


def test_declines_zero_divisors_negative_radicands_stochastic_daz_and_large(spy):
    a = np.arange(0x3F800000, 0x3F800000 + 8, dtype=np.uint32)
    sf.div(a, np.zeros(8, np.uint32), "fp32", return_flags=True)
    sf.div(a, np.zeros(8, np.uint32), "fp32", "toward_zero")
    sf.sqrt(a | np.uint32(0x80000000), "fp32")
    sf.add(a, a, "fp32", "stochastic", rng=0)
    sf.add(a, a, "fp32", denormals_are_zero=True)
    big = np.full(SMALL_FP32 + 1, 0x3F800000, dtype=np.uint32)
    sf.add(big, big, "fp32")
    assert not spy
    sf.div(a, a, "fp32")
    sf.sqrt(a, "fp32")
    assert len(spy) == 2
    # without flags in round to nearest even numpy's float32 quotient of a zero divisor is
    # the result (an infinity), taken by the float32 lane
    del spy[:]
    zero = np.zeros(8, np.uint32)
    _check(lambda: sf.div(a, zero, "fp32"))
    _check(lambda: sf.div(a, zero ^ np.uint32(0x80000000), "fp32"))
    assert len(spy) == 2


@pytest.mark.parametrize("rounding", DETERMINISTIC)
def test_square_roots_of_built_operands_equal_the_general_path(rounding, spy):
    a, _ = _operands(seed=3 + DETERMINISTIC.index(rounding))
    a &= np.uint32(0x7FFFFFFF)
    _check(lambda: sf.sqrt(a, "fp32", rounding, return_flags=True))
    _check(lambda: sf.sqrt(a, "fp32", rounding, subnormals=False, return_flags=True))
    assert spy


def _fp32(significands, biased_exponents, signs=0):
    """fp32 patterns of 24-bit significands (leading bit set) and biased exponents."""
    return ((np.asarray(signs, np.uint32) << np.uint32(31)) | (biased_exponents.astype(np.uint32) << np.uint32(23))
            | (significands.astype(np.uint32) & np.uint32(0x7FFFFF)))


def hard_quotients(seed: int, n: int = 512):
    """(a, b) whose quotient lies within about k 2**-48 (relatively, k in +-1..3) of a
    number of at most 25 significant bits -- a decision point of every mode (a midpoint
    where the result is normal) -- with exponents from the subnormal range to overflow:
    B odd, V = k / B modulo 2**s (s = 24 or 25), A = (V B - k) / 2**s a 24-bit
    significand, so a / b = (V / 2**s - k / (B 2**s)) 2**(ea - eb)."""
    rng = np.random.default_rng(seed)
    A, B = [], []
    while len(A) < n:
        b = int(rng.integers(1 << 22, 1 << 23)) * 2 + 1
        k = int(rng.choice([-3, -2, -1, 1, 2, 3]))
        shift = int(rng.integers(24, 26))
        v = k * pow(b, -1, 1 << shift) % (1 << shift)
        a, rest = divmod(v * b - k, 1 << shift)
        if rest == 0 and (1 << 23) <= a < (1 << 24):
            A.append(a)
            B.append(b)
    eb = rng.integers(1, 255, n)
    ea = np.clip(eb + rng.integers(-160, 140, n), 1, 254)
    return (_fp32(np.array(A), ea, rng.integers(0, 2, n)),
            _fp32(np.array(B), eb, rng.integers(0, 2, n)))


def _square_roots_modulo(k: int, shift: int) -> list:
    """The odd x < 2**shift with x * x = k modulo 2**shift (k = 1 modulo 8), by Hensel's
    lifting: a root modulo 2**i, or it plus 2**(i - 1), is one modulo 2**(i + 1)."""
    x = 1
    for i in range(3, shift):
        if (x * x - k) % (1 << (i + 1)):
            x += 1 << (i - 1)
    m = 1 << shift
    return sorted({x % m, -x % m, (x + m // 2) % m, (-x + m // 2) % m})


def hard_roots(seed: int, n: int = 512):
    """a whose square root lies within about k 2**-50 (relatively) of a number V 2**e of
    at most 25 significant bits: V * V = A 2**s + k with A a 24-bit significand (k small,
    1 modulo 8), the exponent's parity making sqrt(a) = V 2**e sqrt(1 - k / V**2)."""
    rng = np.random.default_rng(seed)
    A, shifts = [], []
    while len(A) < n:
        k = int(rng.choice([1, -7, 9, -15, 17]))
        shift = int(rng.integers(24, 27))
        v = int(rng.choice(_square_roots_modulo(k, shift)))
        a, rest = divmod(v * v - k, 1 << shift)
        if rest == 0 and (1 << 23) <= a < (1 << 24):
            A.append(a)
            shifts.append(shift)
    exponent = rng.integers(1, 253, n)
    exponent += (exponent - 150 - np.array(shifts)) & 1  # a = A 2**(exponent - 150): V**2 2**even
    return _fp32(np.array(A), exponent)


def assert_oracle(name, patterns, rounding, **options):
    """One call of the public operation on all the patterns against tests/test_ops_arith's
    oracle (exact Fractions rounded by MPFR; IEEE 754's zero signs and flags), case by case."""
    arrays = [np.asarray(p, dtype=np.uint32) for p in patterns]
    function = sf.sqrt if name == "sqrt" else OPS[name]
    bits, flags = function(*arrays, "fp32", rounding, return_flags=True, **options)
    masks = [np.asarray(getattr(flags, f)) for f in FLAGS_CHECKED]
    for i in range(bits.size):
        expected = reference(name, [int(a[i]) for a in arrays], sf.fp32, rounding, **options)
        assert (int(bits[i]), tuple(bool(m[i]) for m in masks)) == expected, \
            (name, rounding, [hex(int(a[i])) for a in arrays], options)


@pytest.mark.parametrize("options", [{}, {"tininess": "before"}, {"subnormals": False}])
@pytest.mark.parametrize("rounding", DETERMINISTIC)
def test_quotients_and_roots_next_to_decision_points_against_mpfr(rounding, options, spy):
    a, b = hard_quotients(seed=DETERMINISTIC.index(rounding))
    assert_oracle("div", [a, b], rounding, **options)
    assert_oracle("sqrt", [hard_roots(seed=7 + DETERMINISTIC.index(rounding))], rounding, **options)
    assert len(spy) == 2


@pytest.mark.parametrize("rounding", DETERMINISTIC)
def test_hard_cases_equal_the_general_path(rounding, spy):
    a, b = hard_quotients(seed=40, n=4096)
    _check(lambda: sf.div(a, b, "fp32", rounding, return_flags=True))
    _check(lambda: sf.sqrt(hard_roots(seed=41, n=4096), "fp32", rounding, return_flags=True))
    assert spy


_FINITE = st.integers(0, 0xFFFFFFFF).filter(lambda p: (p & 0x7F800000) != 0x7F800000)


@settings(max_examples=500)
@given(a=st.lists(_FINITE, min_size=8, max_size=8), b=st.lists(_FINITE, min_size=8, max_size=8),
       name=st.sampled_from(sorted(OPS) + ["sqrt"]), rounding=st.sampled_from(DETERMINISTIC),
       tininess=st.sampled_from(["after", "before"]))
def test_against_mpfr(a, b, name, rounding, tininess):
    if name == "sqrt":
        assert_oracle(name, [[p & 0x7FFFFFFF for p in a]], rounding, tininess=tininess)
    else:
        assert_oracle(name, [a, b], rounding, tininess=tininess)


@pytest.fixture
def ne_spy(monkeypatch):
    """The sizes of the answers of softfloat._fastpaths.float32_arithmetic_nearest_even."""
    return spy_on(monkeypatch, "float32_arithmetic_nearest_even")


@pytest.mark.parametrize("name", sorted(OPS) + ["sqrt"])
def test_nearest_even_rounding_in_the_normal_range_equals_the_general_path(name, ne_spy):
    """Operands and results inside fp32's normal range (exponents 2**-62 to 2**62), and the
    cases next to its ends: results exactly 2**-126 and max_finite, sums that round up to
    overflow or land just below 2**-126 (which make the whole call decline)."""
    rng = np.random.default_rng(len(name))
    a, b = (_fp32(rng.integers(1 << 23, 1 << 24, 2048), rng.integers(65, 190, 2048), rng.integers(0, 2, 2048))
            for _ in range(2))
    call = (lambda: sf.sqrt(a & np.uint32(0x7FFFFFFF), "fp32", return_flags=True)) if name == "sqrt" else \
        (lambda: OPS[name](a, b, "fp32", return_flags=True))
    _check(call)
    assert ne_spy  # taken
    edges = {"add": [(0x00800000, 0x00000000), (0x7F7FFFFF, 0x00000000), (0x7F7FFFFF, 0x73000000),
                     (0x7F7FFFFF, 0x72FFFFFF), (0x00800001, 0x80000001)],
             "sub": [(0x00800001, 0x00000001), (0x00800000, 0x00800000)],
             "mul": [(0x20000000, 0x1F800000), (0x20000000, 0x1F7FFFFF), (0x5F800000, 0x5F7FFFFF)],
             "div": [(0x00800000, 0x3F800000), (0x00800000, 0x3F800001), (0x7F7FFFFF, 0x3F7FFFFF)],
             "sqrt": [(0x00800000,), (0x00000001,), (0x7F7FFFFF,)]}[name]
    for case in edges:
        patterns = [np.array([p], dtype=np.uint32) for p in case]
        function = sf.sqrt if name == "sqrt" else OPS[name]
        _check(lambda: function(*patterns, "fp32", return_flags=True))
        assert_oracle(name, patterns, "nearest_even")
