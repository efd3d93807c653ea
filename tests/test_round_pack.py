"""``softfloat._round.round_pack``, the one rounding point, called directly on hand-built
inputs and checked bit for bit and flag for flag against independent oracles.

round_pack rounds ``magnitude pattern = v / 2**s + offset``: the target's bit pattern
without its sign, read as a number with an unbounded exponent field, so that a carry out
of the fraction moves into the exponent by itself.  Here each input is built by hand from
an exact pattern ``P`` (a Fraction), and the exact value it stands for is worked out below
in plain Fraction arithmetic (:func:`value_of_pattern`); the expected bits and flags come
from ``tests/oracle.py`` (MPFR through gmpy2 for the IEEE modes, exact Fractions for
ties-away and round-to-odd).  Stochastic rounding is checked against the two neighbours
that the oracle gives for the directed modes, with fixed random bits.

    v = [ exponent | kept fraction ][ G R ... S ]      (s bits below the cut)
                                      ^ guard (half an ulp) ... sticky

Cases are organised by number class: exact values, ties, just above/below ties, carries
into the next binade, overflow, the underflow boundary (tininess before/after rounding),
subnormals and flush-to-zero; then hypothesis over random patterns, and an exhaustive
sweep of the 4-, 6- and 8-bit formats.  No expected value is computed by softfloat.
"""

from __future__ import annotations

import math
import zlib
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import softfloat as sf
from softfloat._round import Unrounded, round_pack
from softfloat.attributes import RoundingAttributes
from softfloat.rounding import Rounding, Tininess
from tests.oracle import pattern_of, round_exact

# =====================================================================================
# formats, modes, and the exact value of a pattern
# =====================================================================================
FP16, BF16 = sf.as_format("fp16"), sf.as_format("bf16")
E4M3, E5M2 = sf.as_format("fp8_e4m3"), sf.as_format("fp8_e5m2")
E4M3FNUZ = sf.as_format("fp8_e4m3fnuz")
E3M2, E2M3 = sf.as_format("fp6_e3m2"), sf.as_format("fp6_e2m3")
E2M1 = sf.as_format("fp4_e2m1")
E6M9 = sf.Format(exponent_bits=6, mantissa_bits=9)
FORMATS = (FP16, BF16, E4M3, E5M2, E4M3FNUZ, E3M2, E2M3, E2M1, E6M9)
SMALL_FORMATS = (E4M3, E5M2, E4M3FNUZ, E3M2, E2M3, E2M1)
DETERMINISTIC = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd")
#: for each mode, the one that rounds a negative value the same way (sign symmetry)
MIRROR = {"upward": "downward", "downward": "upward"}
FLAG_NAMES = ("overflow", "underflow", "inexact")


def fmt_id(fmt):
    return fmt.name


def value_of_pattern(fmt, P: Fraction) -> Fraction:
    """The exact magnitude an unbounded-exponent magnitude pattern ``P`` stands for.

    With m fraction bits, P = E * 2**m + F (E the exponent field, 0 <= F < 2**m, F may have
    a fractional part):  E = 0 is 0.F * 2**emin (subnormal quantum 2**(emin - m)),
    E >= 1 is 1.F * 2**(emin + E - 1), with no upper limit on E.
    """
    m = fmt.mantissa_bits
    if P < 2**m:
        return P * Fraction(2) ** (fmt.emin - m)
    E = math.floor(P) >> m
    return (P - (E - 1) * 2**m) * Fraction(2) ** (fmt.emin + E - 1 - m)


def attrs(mode="nearest_even", tininess="after", subnormals=True, saturate=False):
    return RoundingAttributes(Rounding(mode), Tininess(tininess), subnormals, saturate)


def call(fmt, cases, pol, *, W=64, offsets=None, rand=None, out=False, scratch=False,
         want_flags=True):
    """round_pack on ``cases`` = [(negative, v, s)], one array of width W; returns the bit
    patterns as ints and the (overflow, underflow, inexact) masks as lists of bools."""
    dt = np.uint64 if W == 64 else np.uint32
    negative = np.array([int(c[0]) for c in cases], dtype=dt)
    v = np.array([c[1] for c in cases], dtype=dt)
    s = np.array([c[2] for c in cases], dtype=dt)
    off = None if offsets is None else np.array(offsets, dtype=dt)
    rnd = None if rand is None else np.array(rand, dtype=dt)
    out_arr = np.full(len(cases), 0xA5, dtype=fmt.storage_dtype) if out else None
    scr = [np.full_like(v, 0xDEAD), np.full_like(v, 0xBEEF)] if scratch else None
    bits, flags = round_pack(fmt, Unrounded(negative, v, s, off), pol, rnd, want_flags, out_arr, scr)
    if out:
        assert bits is out_arr
    assert bits.dtype == fmt.storage_dtype
    if not want_flags:
        assert flags is None
        return [int(b) for b in bits], None
    return [int(b) for b in bits], [tuple(bool(f[i]) for f in flags) for i in range(len(cases))]


def expected(fmt, negative, P, mode, tininess="after", subnormals=True, saturate=False):
    """The oracle's bits and (overflow, underflow, inexact) for the exact pattern P."""
    e = round_exact(value_of_pattern(fmt, Fraction(P)), bool(negative), fmt, mode,
                    tininess=tininess, subnormals=subnormals, saturate=saturate)
    return pattern_of(e.value, e.negative, fmt), (e.overflow, e.underflow, e.inexact)


def outside_the_precondition(fmt, s, P, mode, tininess):
    """Cases round_pack's contract excludes: under tininess after and a nearest mode, a
    value just below 2**emin with s = 2 and a sticky bit 0 (2**m - 1/2 < P < 2**m - 1/4).
    Its two bits | 1 1 stand for .1011.. (tiny after rounding) as well as .111 (not), so
    no rounding routine can tell; callers give a sticky bit only where s >= 3 there."""
    top = 2**fmt.mantissa_bits
    return (tininess == "after" and mode in ("nearest_even", "nearest_away") and s == 2
            and top - Fraction(1, 2) < P < top - Fraction(1, 4))


def check(fmt, cases, mode, tininess="after", subnormals=True, saturate=False, **kw):
    """round_pack agrees with the oracle on every case = (negative, v, s, exact P)."""
    got_bits, got_flags = call(fmt, [c[:3] for c in cases],
                               attrs(mode, tininess, subnormals, saturate), **kw)
    for (neg, v, s, P), b, f in zip(cases, got_bits, got_flags):
        if outside_the_precondition(fmt, s, P, mode, tininess):
            continue
        want_b, want_f = expected(fmt, neg, P, mode, tininess, subnormals, saturate)
        assert (hex(b), f) == (hex(want_b), want_f), (
            f"{fmt.name} {mode} tininess={tininess} subnormals={subnormals} saturate={saturate}: "
            f"{'-' if neg else '+'}v={v:#x} s={s} (P = {P}) gave {b:#x} {f}, "
            f"expected {want_b:#x} {dict(zip(FLAG_NAMES, want_f))}")


def exact_case(neg, hi, low, s):
    """(negative, v, s, P) for v = hi << s | low: an exact pattern, no sticky bit."""
    return (neg, (hi << s) | low, s, hi + Fraction(low, 2**s))


# =====================================================================================
# exact values: every representable pattern comes back unchanged, with no flags
# =====================================================================================
@pytest.mark.parametrize("fmt", FORMATS, ids=fmt_id)
@pytest.mark.parametrize("mode", DETERMINISTIC + ("stochastic",))
def test_exact_values_are_kept(fmt, mode):
    """Patterns 0 .. max_finite, s zero bits below the cut: bits = sign | pattern, no flag
    (the subnormals too: exact tiny values do not underflow).  Stochastic with all-ones
    random bits, which would round up anything inexact."""
    top = fmt.max_finite_bits
    pats = sorted({*range(0, min(top, 300) + 1), *range(max(top - 300, 0), top + 1)})
    for s in (1, 5):
        for neg in (0, 1):
            cases = [(neg, p << s, s) for p in pats]
            bits, flags = call(fmt, cases, attrs(mode, "before"),
                               rand=[2**64 - 1] * len(cases) if mode == "stochastic" else None)
            sign = fmt.sign_mask if neg else 0
            for p, b, f in zip(pats, bits, flags):
                want = 0 if (p == 0 and not fmt.has_negative_zero) else sign | p
                assert (b, f) == (want, (False, False, False)), (fmt.name, mode, s, neg, hex(p))


# =====================================================================================
# ties and their neighbours, with the bits drawn
# =====================================================================================
# fp16 1.0 = 0.01111.0000000000 = 0x3c00; one ulp = 2**-10; below the cut: G R S
#   0x3c00 | 1 0 0   exactly 1 + ulp/2:        a tie, kept lsb 0 (even)
#   0x3c01 | 1 0 0   exactly 1 + 3 ulp/2:      a tie, kept lsb 1 (odd)
#   0x3c00 | 0 1 1   1 + ulp/2 - ulp/8:        just below the tie
#   0x3c00 | 1 0 1   1 + ulp/2 + ulp/8:        just above the tie
#   0x3c00 | 0 0 1   1 + ulp/8:                a little above the kept value
TIE_TABLE = [
    # (hi, GRS, {mode: result for +x})
    (0x3C00, 0b100, dict(nearest_even=0x3C00, nearest_away=0x3C01, toward_zero=0x3C00,
                         upward=0x3C01, downward=0x3C00, odd=0x3C01)),
    (0x3C01, 0b100, dict(nearest_even=0x3C02, nearest_away=0x3C02, toward_zero=0x3C01,
                         upward=0x3C02, downward=0x3C01, odd=0x3C01)),
    (0x3C00, 0b011, dict(nearest_even=0x3C00, nearest_away=0x3C00, toward_zero=0x3C00,
                         upward=0x3C01, downward=0x3C00, odd=0x3C01)),
    (0x3C00, 0b101, dict(nearest_even=0x3C01, nearest_away=0x3C01, toward_zero=0x3C00,
                         upward=0x3C01, downward=0x3C00, odd=0x3C01)),
    (0x3C01, 0b011, dict(nearest_even=0x3C01, nearest_away=0x3C01, toward_zero=0x3C01,
                         upward=0x3C02, downward=0x3C01, odd=0x3C01)),
    (0x3C00, 0b001, dict(nearest_even=0x3C00, nearest_away=0x3C00, toward_zero=0x3C00,
                         upward=0x3C01, downward=0x3C00, odd=0x3C01)),
]


@pytest.mark.parametrize("hi,grs,table", TIE_TABLE, ids=lambda x: hex(x) if isinstance(x, int) else "")
@pytest.mark.parametrize("mode", DETERMINISTIC)
@pytest.mark.parametrize("neg", (0, 1))
@pytest.mark.parametrize("W", (32, 64))
def test_ties_fp16(hi, grs, table, mode, neg, W):
    """Ties go to even (nearest_even) or away (nearest_away); just below/above a tie go to
    the nearer neighbour; a negative value rounds as its magnitude in the mirrored mode."""
    bits, flags = call(FP16, [(neg, (hi << 3) | grs, 3)], attrs(mode), W=W)
    want = (0x8000 if neg else 0) | table[MIRROR.get(mode, mode) if neg else mode]
    assert (hex(bits[0]), flags[0]) == (hex(want), (False, False, True))
    check(FP16, [exact_case(neg, hi, grs, 3)], mode, W=W)  # the oracle agrees with the table


@pytest.mark.parametrize("fmt", FORMATS, ids=fmt_id)
@pytest.mark.parametrize("mode", DETERMINISTIC)
def test_ties_and_neighbours_every_binade(fmt, mode, oracle_stride):
    """In every binade (and the subnormals): the exact tie above an even and an odd kept
    value, and the patterns one unit (of 2**-12) below and above each tie, both signs.
    (Formats of more than 64 binades: every oracle_stride-th one without --runslow.)"""
    m, s = fmt.mantissa_bits, 12
    half = 1 << (s - 1)
    top = fmt.max_finite_bits >> m
    step = oracle_stride if top > 64 else 1
    cases = []
    for E in sorted({*range(0, top + 1, step), 1, top - 1, top}):
        for hi in {E << m, (E << m) | 1, (E << m) | ((1 << m) - 2), (E << m) | ((1 << m) - 1)}:
            for low in (half - 1, half, half + 1):
                for neg in (0, 1):
                    cases.append(exact_case(neg, hi, low, s))
    check(fmt, cases, mode)


# =====================================================================================
# a carry out of the fraction moves into the exponent
# =====================================================================================
# fp16  0.01110.1111111111 | 1 1  (1 - 2**-13: above the tie)  -> 0.01111.0000000000 = 1.0
# fp16  0.00000.1111111111 | 1 1  (above the tie) -> 0.00001.0000000000: subnormal -> normal
#       (1 - 2**-12) 2**emin rounds to 2**emin at p = 11 bits too: not tiny after rounding
# e4m3  0.0110.111 | 1 0          (a tie, odd)  -> 0.0111.000 = 1.0
# e2m1  0.10.1 | 1 0              (3.5: a tie)  -> 0.11.0 = 4.0
CARRIES = [
    (FP16, 0x3BFF, 0b11, 0x3C00),
    (FP16, 0x03FF, 0b11, 0x0400),
    (E4M3, 0x37, 0b10, 0x38),
    (E2M1, 0x5, 0b10, 0x6),
    (BF16, 0x3F7F, 0b10, 0x3F80),   # 0.01111110.1111111 | 1 0 -> 0.01111111.0000000 = 1.0
    (E6M9, 0x3DFF, 0b10, 0x3E00),   # 0.011110.111111111 | 1 0 -> 0.011111.000000000 = 1.0
]


@pytest.mark.parametrize("fmt,hi,low,want", CARRIES, ids=lambda x: getattr(x, "name", None))
@pytest.mark.parametrize("offset_form", (False, True))
def test_carry_into_next_binade(fmt, hi, low, want, offset_form):
    """Rounding up the all-ones fraction gives the next binade's first pattern, whether
    the exponent is in v or added back after rounding (``offset``, which is 0 below the
    smallest normal)."""
    m = fmt.mantissa_bits
    offset = ((hi >> m) - 1) << m if hi >> m and offset_form else 0
    bits, flags = call(fmt, [(0, ((hi - offset) << 2) | low, 2)], attrs(),
                       offsets=[offset] if offset_form else None)
    assert (hex(bits[0]), flags[0]) == (hex(want), (False, False, True))
    check(fmt, [exact_case(0, hi, low, 2)], "nearest_even")


# =====================================================================================
# overflow: to infinity or to max by mode, saturation, formats without infinity
# =====================================================================================
INF, NAN = "inf", "nan"
# result for +x and -x beyond max_finite (before a sign: "max" = max_finite)
OVERFLOW_BY_MODE = dict(nearest_even=(INF, INF), nearest_away=(INF, INF),
                        toward_zero=("max", "max"), odd=("max", "max"),
                        upward=(INF, "max"), downward=("max", INF), stochastic=(INF, INF))


@pytest.mark.parametrize("fmt", FORMATS, ids=fmt_id)
@pytest.mark.parametrize("mode", tuple(OVERFLOW_BY_MODE))
@pytest.mark.parametrize("saturate", (False, True))
def test_overflow(fmt, mode, saturate):
    """Patterns just above max_finite (max | 1 1: rounds up in every mode but toward_zero/
    downward), one binade above it, and far above it: IEEE 754 7.4 picks infinity or max
    per mode and sign; saturate, finite formats (fp6, fp4) give max; fn formats (e4m3)
    give their NaN S.1111.111 where IEEE gives infinity, fnuz formats their one NaN 0x80."""
    mx, m = fmt.max_finite_bits, fmt.mantissa_bits
    # mx | 1 1: 3/4 ulp above max (inexact); the first pattern of the binade above max
    # (2**(emax + 1) exactly); a value 64 binades above max
    far = (mx + (64 << m)) << 2
    pats = [((mx << 2) | 0b11, mx + Fraction(3, 4)), (((mx >> m) + 1) << (m + 2), ((mx >> m) + 1) << m),
            (far, Fraction(far, 4))]
    for neg in (0, 1):
        cases = [(neg, v, 2) for v, _ in pats]
        bits, flags = call(fmt, cases, attrs(mode, saturate=saturate),
                           rand=[2**64 - 1] * 3 if mode == "stochastic" else None)
        kind = OVERFLOW_BY_MODE[mode][neg]
        sign = fmt.sign_mask if neg else 0
        if kind == "max" or saturate or fmt.specials.value == "finite":
            want = sign | mx
        elif fmt.specials.value == "ieee":
            want = sign | (((1 << fmt.exponent_bits) - 1) << m)   # S.11111.0000000000
        elif fmt.specials.value == "fn":
            want = sign | ((1 << (fmt.bits - 1)) - 1)             # S.1111.111
        else:
            want = fmt.sign_mask                                  # fnuz: 1.0000.000 only
        # mx | 1 1 does not overflow where the mode rounds its magnitude down, nor in odd
        # where max is odd (all but e4m3, whose max 0.1111.110 is even)
        down = (kind == "max" and mode != "odd") or (mode == "odd" and mx & 1)
        want_flags = [(not down, False, True), (True, False, True), (True, False, True)]
        assert [hex(b) for b in bits] == [hex(want)] * 3, (fmt.name, mode, neg)
        assert flags == want_flags, (fmt.name, mode, neg)
        if mode != "stochastic":
            check(fmt, [(neg, v, 2, P) for v, P in pats], mode, saturate=saturate)


def test_overflow_pinned():
    """The same rules, drawn: fp16 max 0.11110.1111111111 = 0x7bff (65504)."""
    x = (0x7BFF << 2) | 0b10  # 0.11110.1111111111 | 1 0: 65520, the tie between max and 2**16
    assert call(FP16, [(0, x, 2)], attrs("nearest_even"))[0] == [0x7C00]  # tie to even: inf
    assert call(FP16, [(1, x, 2)], attrs("nearest_even", saturate=True))[0] == [0xFBFF]
    x = (0x7BFF << 2) | 0b01  # 65504 + 8: below the tie, max without overflow
    assert call(FP16, [(0, x, 2)], attrs("nearest_even")) == ([0x7BFF], [(False, False, True)])
    x = (0x7E << 2) | 0b10    # e4m3 0.1111.110 | 1 0: 464, the tie between 448 (even) and 480
    assert call(E4M3, [(0, x, 2)], attrs("nearest_even")) == ([0x7E], [(False, False, True)])
    assert call(E4M3, [(0, x, 2)], attrs("nearest_away")) == ([0x7F], [(True, False, True)])  # NaN
    assert call(E4M3, [(1, x, 2)], attrs("nearest_even", saturate=True))[0] == [0xFE]
    x = (0x7 << 2) | 0b10     # e2m1 0.11.1 | 1 0: 7, the tie between 6 and 8
    assert call(E2M1, [(1, x, 2)], attrs("nearest_even")) == ([0xF], [(True, False, True)])


# =====================================================================================
# the underflow boundary: tininess before and after rounding
# =====================================================================================
# fp16: 2**emin = 0.00001.0000000000 = 0x0400; the largest subnormal 0x03ff; p = 11.
# In units of the smallest subnormal, P = q / 2**-24:
#   0x03ff | 0 1  = 1023.25                  rounds (nearest) to 0x03ff: tiny either way
#   0x03ff | 1 0  = 1023.5 = (1 - 2**-11) 2**emin: p bits hold it, so tiny after rounding,
#                   though nearest_even delivers 0x0400 (a tie; 0x03ff is odd)
#   0x03ff | 1 1  = 1023.75 = (1 - 2**-12) 2**emin: at p bits it rounds to 2**emin, so
#                   tiny before rounding only -- the band where the two choices differ
UNDERFLOW_FP16 = [
    # (GR, mode, delivered, underflow with tininess after, with tininess before)
    (0b01, "nearest_even", 0x03FF, True, True),
    (0b10, "nearest_even", 0x0400, True, True),
    (0b11, "nearest_even", 0x0400, False, True),
    (0b10, "nearest_away", 0x0400, True, True),    # p bits hold 1023.5: no tie there
    (0b01, "upward", 0x0400, True, True),          # at p bits: 1023.5, still tiny
    (0b11, "upward", 0x0400, False, True),
    (0b11, "toward_zero", 0x03FF, True, True),
    (0b11, "odd", 0x03FF, True, True),
]


@pytest.mark.parametrize("grs,mode,want,uf_after,uf_before", UNDERFLOW_FP16)
def test_tininess_fp16(grs, mode, want, uf_after, uf_before):
    for tininess, uf in (("after", uf_after), ("before", uf_before)):
        bits, flags = call(FP16, [(0, (0x03FF << 2) | grs, 2)], attrs(mode, tininess))
        assert (hex(bits[0]), flags[0]) == (hex(want), (False, uf, True)), tininess
        check(FP16, [exact_case(0, 0x03FF, grs, 2)], mode, tininess)
        # flush-to-zero flushes exactly what is tiny (-x in the mirrored mode: same magnitude)
        bits, flags = call(FP16, [(1, (0x03FF << 2) | grs, 2)],
                           attrs(MIRROR.get(mode, mode), tininess, False))
        assert (hex(bits[0]), flags[0]) == (hex(0x8000 if uf else 0x8000 | want), (False, uf, True))


@pytest.mark.parametrize("fmt", FORMATS, ids=fmt_id)
@pytest.mark.parametrize("mode", DETERMINISTIC)
@pytest.mark.parametrize("tininess", ("after", "before"))
@pytest.mark.parametrize("subnormals", (True, False))
def test_underflow_boundary(fmt, mode, tininess, subnormals):
    """Every pattern from the largest subnormal to just past 2**emin, in steps of 1/64 of
    the subnormal quantum: the band (1 - 2**-p) 2**emin .. 2**emin where tininess after
    and before rounding differ, in 16 steps per 2**-(p+1) 2**emin."""
    m, s = fmt.mantissa_bits, 6
    lo = ((1 << m) - 1) << s
    cases = [(neg, v, s, Fraction(v, 2**s)) for v in range(lo, lo + (2 << s) + 1) for neg in (0, 1)]
    check(fmt, cases, mode, tininess, subnormals)


E8M22 = sf.Format(exponent_bits=8, mantissa_bits=22)


@pytest.mark.parametrize("fmt", [E2M1, FP16, E8M22], ids=fmt_id)
@pytest.mark.parametrize("mode", ("nearest_even", "nearest_away"))
def test_tininess_after_with_one_cut_bit(fmt, mode):
    """s = 1 (as the float32 fast path gives e8m22, and the float64 one e11m51):
    P = 0.00..0.11..1 | 1 = 2**m - 1/2, i.e. (1 - 2**-p) 2**emin, holds p significant bits,
    so it is tiny after rounding, though the nearest modes deliver 2**emin: underflow, and
    flushed to zero without subnormals.  (round_pack once re-rounded it with no bit to
    cut and missed both.)"""
    m = fmt.mantissa_bits
    x = (((1 << m) - 1) << 1) | 1
    P = 2**m - Fraction(1, 2)
    assert expected(fmt, 0, P, mode) == (1 << m, (False, True, True))  # the oracle agrees
    assert expected(fmt, 0, P, mode, subnormals=False) == (0, (False, True, True))
    assert call(fmt, [(0, x, 1)], attrs(mode)) == ([1 << m], [(False, True, True)])
    assert call(fmt, [(0, x, 1)], attrs(mode, subnormals=False)) == ([0], [(False, True, True)])


@pytest.mark.parametrize("src, fmt", [(np.float32, sf.Format(8, 22)), (np.float64, sf.Format(11, 51))])
def test_tininess_after_with_one_cut_bit_through_encode(src, fmt):
    """The same through the public encode: 2**emin - 2**(emin - p) of float32 (float64)
    into e8m22 (e11m51) is tiny after rounding, as the exact Fraction input says too."""
    emin = 1 - fmt.bias
    x = Fraction(2)**emin - Fraction(2)**(emin - fmt.mantissa_bits - 1)
    for subnormals in (True, False):
        want, want_flags = sf.encode(x, fmt, subnormals=subnormals, return_flags=True)
        got, got_flags = sf.encode(src(x), fmt, subnormals=subnormals, return_flags=True)
        assert src(x) == x and (int(got), got_flags.raised()) == (int(want), want_flags.raised())
        assert "underflow" in got_flags.raised()


# =====================================================================================
# subnormals, tiny values and flush-to-zero
# =====================================================================================
@pytest.mark.parametrize("fmt", FORMATS, ids=fmt_id)
@pytest.mark.parametrize("mode", DETERMINISTIC)
@pytest.mark.parametrize("W", (32, 64))
def test_subnormals_and_tiny(fmt, mode, W):
    """The smallest subnormal and its half (a tie with 0), values far below it (every
    bit cut away, s = W - 1), exact subnormals flushed to zero, zeros of both signs."""
    m = fmt.mantissa_bits
    cases = [exact_case(neg, hi, low, s) for neg in (0, 1) for hi, low, s in [
        (0, 0, 1),                    # 0.00..0 | 0:   zero, exact
        (0, 1, 1),                    # 0.00..0 | 1:   half the smallest subnormal: a tie
        (0, 3, 2),                    # 0.00..0 | 1 1: 3/4 of it
        (1, 0, 1),                    # 0.00..1 | 0:   the smallest subnormal, exact
        (1, 1, 1),                    # 0.00..1 | 1:   1.5 of it: a tie, odd
        ((1 << m) >> 1, 1, 3),        # 0.10..0 | 0 0 1: mid-range subnormal, just above
        (0, 1, W - 1),                # 2**-(W-1) of the smallest subnormal: all sticky
        (0, (1 << (W - 2)) - 1, W - 1),   # just below half of it
    ]]
    for tininess in ("after", "before"):
        for subnormals in (True, False):
            check(fmt, cases, mode, tininess, subnormals, W=W)


def test_flush_to_zero_pinned():
    """fp16 without subnormals: 0x0001 exact (2**-24) -> 0 with underflow and inexact;
    0x0400 (2**-14) is normal and stays; -0x03ff -> -0."""
    cases = [(0, 1 << 2, 2), (0, 0x0400 << 2, 2), (1, 0x03FF << 2, 2), (1, 0, 2)]
    bits, flags = call(FP16, cases, attrs(subnormals=False))
    assert [hex(b) for b in bits] == ["0x0", "0x400", "0x8000", "0x8000"]
    assert flags == [(False, True, True), (False, False, False), (False, True, True),
                     (False, False, False)]


def test_fnuz_has_no_negative_zero():
    """e4m3fnuz: -0 and negative values that round to zero come out as +0 (0x80 is NaN)."""
    cases = [(1, 0, 1), (1, 1, 3), (1, 0x07 << 1, 1)]  # -0; -1/8 of the smallest subnormal; -0x07 exact
    bits, flags = call(E4M3FNUZ, cases, attrs("toward_zero"))
    assert [hex(b) for b in bits] == ["0x0", "0x0", "0x87"]
    bits, _ = call(E4M3FNUZ, cases, attrs("nearest_even", subnormals=False))
    assert [hex(b) for b in bits] == ["0x0", "0x0", "0x0"]


# =====================================================================================
# stochastic rounding: the two neighbours, with the top s random bits deciding
# =====================================================================================
def neighbours(fmt, neg, P, tininess, subnormals, saturate):
    """The delivered result if stochastic rounding goes toward zero, and if it goes away:
    the directed modes' bits from the oracle; an overflow goes to infinity as in the
    nearest modes (IEEE's directed rounding away from zero does the same)."""
    away = "downward" if neg else "upward"
    out = []
    for mode in ("toward_zero", away):
        e = round_exact(value_of_pattern(fmt, Fraction(P)), bool(neg), fmt, mode,
                        tininess="before", saturate=saturate)
        if e.overflow:
            e = round_exact(value_of_pattern(fmt, Fraction(P)), bool(neg), fmt, away,
                            tininess="before", saturate=saturate)
        # tininess: before = the exact value is tiny; after = the delivered result is
        tiny = (value_of_pattern(fmt, Fraction(P)) < Fraction(2) ** fmt.emin if tininess == "before"
                else not isinstance(e.value, float) and abs(e.value) < Fraction(2) ** fmt.emin)
        bits, inexact = pattern_of(e.value, e.negative, fmt), e.inexact
        if tiny and not subnormals and P != 0:
            bits, inexact = (fmt.sign_mask if neg and fmt.has_negative_zero else 0), True
        out.append((bits, (e.overflow, tiny and inexact, inexact)))
    return out


@pytest.mark.parametrize("fmt", (FP16, E4M3, E2M1, E6M9), ids=fmt_id)
@pytest.mark.parametrize("W", (32, 64))
@pytest.mark.parametrize("tininess", ("after", "before"))
def test_stochastic_every_draw(fmt, W, tininess):
    """With s = 4 cut bits, all 16 values of the top 4 random bits (the lower random bits
    arbitrary): a pattern k + j/16 rounds away for exactly j of them -- the top j values,
    those with j/16 + u >= 1 -- and toward zero for the rest, each result one of the two
    neighbours the oracle gives (overflow, tiny values and flush-to-zero included)."""
    m, s = fmt.mantissa_bits, 4
    junk = 0x5A5A5A5A5A5A5A5A >> (64 - W + s)   # arbitrary bits below the top s
    hs = [0, 1, (1 << m) - 1, 1 << m, fmt.max_finite_bits, fmt.max_finite_bits - 1]
    for neg in (0, 1):
        for subnormals in (True, False):
            for hi in hs:
                for j in range(16):
                    cases = [(neg, (hi << s) | j, s)] * 16
                    rand = [(u << (W - s)) | junk for u in range(16)]
                    bits, flags = call(fmt, cases, attrs("stochastic", tininess, subnormals), W=W,
                                       rand=rand)
                    down, up = neighbours(fmt, neg, hi + Fraction(j, 16), tininess, subnormals, False)
                    got = list(zip(bits, flags))
                    want = [down] * (16 - j) + [up] * j if j else [down] * 16
                    assert got == want, (fmt.name, W, neg, subnormals, hex(hi), j)


def test_stochastic_pinned():
    """fp16 1 + 3/8 ulp = 0x3c00 | 0 1 1: up exactly when the top 3 random bits are >= 5.
    The bits below the top s do not vote: rand = 0x7fff... (top bits 011) rounds down."""
    x = (0x3C00 << 3) | 0b011
    top = [u << 61 for u in range(8)]
    assert call(FP16, [(0, x, 3)] * 8, attrs("stochastic"), rand=top)[0] == [0x3C00] * 5 + [0x3C01] * 3
    assert call(FP16, [(0, x, 3)], attrs("stochastic"), rand=[2**63 - 1])[0] == [0x3C00]
    assert call(FP16, [(1, x, 3)], attrs("stochastic"), rand=[2**64 - 1])[0] == [0xBC01]


# =====================================================================================
# random patterns (hypothesis), with @example pins at the edges
# =====================================================================================
@st.composite
def rounding_cases(draw, stochastic=False):
    """A format, a attrs, a word width, and a list of (negative, v, s, exact P[, rand])
    for one call.  P = k + (low + tail) / 2**s with k below two binades past max_finite;
    with a tail (s >= 2) v carries it as a sticky bit 0 (the OR of the bits below)."""
    fmt = draw(st.sampled_from(FORMATS))
    W = draw(st.sampled_from((32, 64)))
    m = fmt.mantissa_bits
    kmax = ((fmt.max_finite_bits >> m) + 2) << m
    offset_form = draw(st.booleans())
    smax = W - 1 - kmax.bit_length()
    cases = []
    for _ in range(draw(st.integers(1, 6))):
        neg = draw(st.integers(0, 1))
        k = draw(st.one_of(st.integers(0, kmax - 1),
                           st.sampled_from([0, 1, (1 << m) - 1, 1 << m, fmt.max_finite_bits,
                                            fmt.max_finite_bits + 1])))
        s = draw(st.integers(1, smax))
        low = draw(st.integers(0, 2**s - 1))
        P = k + Fraction(low, 2**s)
        v = (k << s) | low
        if not stochastic and s >= 2 and draw(st.booleans()):
            x = draw(st.integers(1, 40))
            tail = draw(st.integers(1, 2**x - 1))
            P += Fraction(tail, 2 ** (s + x))
            v |= 1  # sticky
        rand = draw(st.integers(0, 2**W - 1)) if stochastic else None
        cases.append((neg, v, s, P, rand))
    if offset_form:
        offsets = [((math.floor(c[3]) >> m) - 1) << m if c[3] >= (1 << m) else 0 for c in cases]
        cases = [(n, v - (o << s), s, P, r) for (n, v, s, P, r), o in zip(cases, offsets)]
    else:
        offsets = None
    pol = (draw(st.sampled_from(("after", "before"))), draw(st.booleans()), draw(st.booleans()))
    return fmt, W, pol, cases, offsets


@given(rounding_cases(), st.sampled_from(DETERMINISTIC), st.booleans())
@example((FP16, 64, ("after", True, False), [(0, (0x3C00 << 2) | 0b10, 2, 0x3C00 + Fraction(1, 2), None)],
          None), "nearest_even", False)                       # a tie at even: stays
@example((FP16, 64, ("after", True, False), [(0, (0x3C01 << 2) | 0b10, 2, 0x3C01 + Fraction(1, 2), None)],
          None), "nearest_even", False)                       # a tie at odd: up
@example((FP16, 32, ("after", True, False), [(0, (0x3C00 << 3) | 0b101, 3, 0x3C00 + Fraction(9, 16), None)],
          None), "nearest_even", False)                       # G=1, S jammed: above the tie
@example((FP16, 64, ("after", True, False), [(0, (0x03FF << 2) | 0b11, 2, 0x03FF + Fraction(3, 4), None)],
          None), "nearest_even", True)                        # tiny before, not after
@example((FP16, 64, ("before", True, False), [(0, (0x03FF << 2) | 0b11, 2, 0x03FF + Fraction(3, 4), None)],
          None), "nearest_even", True)
@example((E4M3, 32, ("after", True, True), [(1, (0x7E << 2) | 0b10, 2, 0x7E + Fraction(1, 2), None)],
          None), "nearest_away", False)                       # overflow, saturated
@example((E2M1, 64, ("after", False, False), [(0, 0b01, 1, Fraction(1, 2), None)], None), "upward", True)
@example((E6M9, 64, ("before", True, False), [(1, ((1 << 9) << 4) | 0b1000, 4, (0x3F << 9) + Fraction(1, 2), None)],
          [0x3E << 9]), "downward", False)                    # offset form, beyond the format: -inf
def test_random_patterns(case, mode, out_scratch):
    """Random patterns in every format, word width, attrs and mode, with and without a
    sticky bit, with the exponent in v or in ``offset``, against the oracle."""
    fmt, W, (tininess, subnormals, saturate), cases, offsets = case
    check(fmt, [c[:4] for c in cases], mode, tininess, subnormals, saturate, W=W,
          offsets=offsets, out=out_scratch, scratch=out_scratch)


@given(rounding_cases(stochastic=True))
@example((FP16, 64, ("after", True, False), [(0, (0x3C00 << 3) | 0b011, 3, 0x3C00 + Fraction(3, 8), 5 << 61)],
          None))                                              # 3/8 + 5/8 = 1: up
@example((FP16, 64, ("after", True, False), [(0, (0x3C00 << 3) | 0b011, 3, 0x3C00 + Fraction(3, 8), (5 << 61) - 1)],
          None))                                              # just short of 1: down
@example((FP16, 32, ("after", True, False), [(0, (0x03FF << 2) | 0b11, 2, 0x03FF + Fraction(3, 4), 1 << 30)],
          None))                                              # up to 2**emin: not tiny after
def test_random_stochastic(case):
    """Stochastic rounding of random patterns with random bits: up exactly when the cut
    fraction plus the top s random bits (as a fraction) reaches 1, and then the result and
    flags are those of the neighbour the oracle gives in that direction."""
    fmt, W, (tininess, subnormals, saturate), cases, offsets = case
    bits, flags = call(fmt, [c[:3] for c in cases], attrs("stochastic", tininess, subnormals, saturate),
                       W=W, offsets=offsets, rand=[c[4] for c in cases])
    for (neg, v, s, P, rand), b, f in zip(cases, bits, flags):
        frac = P - math.floor(P)                     # the cut part, as a fraction of 1
        u = Fraction(rand >> (W - s), 2**s)          # the top s random bits, as a fraction
        up = frac != 0 and frac + u >= 1
        assert (b, f) == neighbours(fmt, neg, P, tininess, subnormals, saturate)[up], (
            fmt.name, W, neg, hex(v), s, hex(rand))


# =====================================================================================
# every pattern of the small formats with three bits below the cut
# =====================================================================================
#: the policies swept: every pair of (tininess, subnormals, saturate) values occurs
POLICIES = (("after", True, False), ("before", True, True), ("after", False, True),
            ("before", False, False))


@pytest.mark.parametrize("fmt", SMALL_FORMATS, ids=fmt_id)
@pytest.mark.parametrize("mode", DETERMINISTIC)
def test_small_formats_exhaustive(fmt, mode, oracle_stride, request):
    """Every pattern k + j/8 (j = 0..7) from 0 to two binades past max_finite, both signs,
    under each attrs: all ties, neighbours of ties, carries, the underflow band and
    overflow of the 4-, 6- and 8-bit formats.  (Without --runslow, every oracle_stride-th
    pattern k, from an offset that depends on the test, plus the first and last binade.)"""
    m = fmt.mantissa_bits
    kmax = ((fmt.max_finite_bits >> m) + 2) << m
    start = zlib.crc32(request.node.nodeid.encode()) % oracle_stride
    ks = sorted({*range(start, kmax, oracle_stride), *range(2 << m), *range(kmax - (2 << m), kmax)})
    cases = [exact_case(neg, k, j, 3) for k in ks for j in range(8) for neg in (0, 1)]
    for tininess, subnormals, saturate in POLICIES:
        check(fmt, cases, mode, tininess, subnormals, saturate)


# =====================================================================================
# the calling conventions
# =====================================================================================
def test_without_flags_same_bits():
    """want_flags=False returns None for the flags and the same bits as with flags."""
    cases = [(0, (0x3C00 << 2) | 0b10, 2), (1, (0x7BFF << 2) | 0b11, 2), (0, 0b11, 2)]
    for mode in DETERMINISTIC:
        with_flags, _ = call(FP16, cases, attrs(mode))
        without, none = call(FP16, cases, attrs(mode), want_flags=False)
        assert without == with_flags and none is None


@pytest.mark.parametrize("mode", ("nearest_even", "nearest_away", "toward_zero"))
def test_shift_by_word_width(mode):
    """Without flags or flushing, the nearest modes and toward_zero accept s >= W: every
    bit of v lies below the guard bit, so the result is an exact 0 (with the sign)."""
    v = (1 << 62) + 12345
    for s in (64, 70):
        bits, _ = call(FP16, [(0, v, s), (1, v, s)], attrs(mode), want_flags=False)
        assert bits == [0x0000, 0x8000]
