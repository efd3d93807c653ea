"""``softfloat.add, sub, mul, div, sqrt, fma`` against independent oracles, bit for bit and
flag for flag, and their IEEE 754-2019 semantics.

The reference (:func:`reference`) shares no code with softfloat:

* it decodes each operand's bit pattern with plain integer arithmetic (:func:`decode_pattern`;
  only the declared exponent width, mantissa width and special-value policy are read from
  the Format);
* it applies the rules for special operands as IEEE 754-2019 writes them (sections 6.2,
  6.3, 7.2, 7.3) and as ``softfloat.ops.NAN_POLICY`` documents the NaN choices;
* it computes the exact result as a ``Fraction`` and rounds it with ``tests/oracle.py``'s
  ``round_exact``: MPFR through gmpy2 with the format's precision and exponent range, exact
  Fraction logic for ties-away and round-to-odd, IEEE tininess before or after rounding;
* square roots are irrational in general: :func:`sqrt_proxy` brackets the root between
  consecutive multiples of 2**-K with ``math.isqrt`` (K far finer than a quarter of the
  smallest subnormal) and hands the oracle the centre of the bracket, which every rounding
  mode and every flag decision treats like the true root (argued at the function).  The
  proxy is itself checked against MPFR's correctly rounded ``gmpy2.sqrt``.

The reference is checked against the hardware (numpy float32/float16 arithmetic) before it
judges softfloat.  Cases are organised by number class: an edge grid per format (zeros,
subnormal boundaries, 1 and its neighbours, the overflow threshold, half an ulp of max,
infinities, quiet and signaling NaNs with payloads, both signs) taken pairwise, and
structured random operands whose exponents aim the result at the underflow and overflow
boundaries, at ties, at cancellations and across huge exponent gaps.  The Python oracle is
slow, so in CI each test checks every ``oracle_stride``-th case from an offset that depends
on the test id (the slices together cover every case); ``--runslow`` checks all of them.

Exhaustive sweeps (every FP8 pair, every 16-bit sqrt, FP8 fma triples) are in
``test_ops_exhaustive.py``; they reuse the reference from here.
"""

from __future__ import annotations

import functools
import math
import zlib
from dataclasses import dataclass
from fractions import Fraction

import gmpy2
import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import softfloat as sf
from tests.oracle import round_exact
from tests.oracle import nan_pattern, pattern_of

# =====================================================================================
# the grid
# =====================================================================================
CUSTOM_FORMATS = (
    sf.Format(exponent_bits=6, mantissa_bits=9),                   # 16-bit IEEE, odd split
    sf.Format(exponent_bits=7, mantissa_bits=16),                  # 24-bit IEEE in uint32
    sf.Format(exponent_bits=3, mantissa_bits=4, specials="fnuz"),
    sf.Format(exponent_bits=3, mantissa_bits=2, specials="fn"),
    sf.Format(exponent_bits=2, mantissa_bits=2),                   # 5-bit IEEE: inf and NaNs
    sf.Format(exponent_bits=11, mantissa_bits=40),                 # wide: fp64's range
)
FORMATS = sf.catalogue() + CUSTOM_FORMATS
MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd")
OPS = ("add", "sub", "mul", "div", "sqrt", "fma")
ARITY = {"add": 2, "sub": 2, "mul": 2, "div": 2, "sqrt": 1, "fma": 3}
FUNCS = {"add": sf.add, "sub": sf.sub, "mul": sf.mul, "div": sf.div, "sqrt": sf.sqrt, "fma": sf.fma}
FLAGS_CHECKED = ("invalid", "divide_by_zero", "overflow", "underflow", "inexact")
NO_FLAGS = (False,) * 5
#: the non-default options, each checked in every mode (tininess also crossed with FTZ)
POLICIES = (
    {"tininess": "before"},
    {"subnormals": False},
    {"subnormals": False, "tininess": "before"},
    {"denormals_are_zero": True},
    {"denormals_are_zero": True, "subnormals": False},
    {"saturate": True},
)



def fmt_id(fmt: sf.Format) -> str:
    return fmt.name


def policy_id(policy: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in policy.items())


# =====================================================================================
# the reference: bit patterns -> exact values -> IEEE rules -> MPFR rounding
# =====================================================================================
@dataclass(frozen=True)
class Operand:
    """An operand as the reference sees it: kind "finite", "inf" or "nan"; the sign; the
    exact magnitude (finite only); whether a NaN is signaling."""

    kind: str
    negative: bool
    q: Fraction = Fraction(0)
    signaling: bool = False


def bias_of(fmt: sf.Format) -> int:
    """2**(E-1) - 1, one more for fnuz (restated from the OCP/IEEE definitions)."""
    return (1 << (fmt.exponent_bits - 1)) - (0 if fmt.specials.value == "fnuz" else 1)


@functools.lru_cache(maxsize=1 << 18)
def decode_pattern(bits: int, fmt: sf.Format) -> Operand:
    """The value a bit pattern denotes, by integer arithmetic on its three fields:

        | s | e e ... e | f f ... f |     value = (-1)**s * 1.f * 2**(e - bias)   (e > 0)
                                                  (-1)**s * 0.f * 2**(1 - bias)   (e = 0)

    with the all-ones exponent holding inf/NaN (ieee), only S.1..1.1..1 a NaN (fn), and
    1.0..0.0..0 the only NaN (fnuz).
    """
    m, E = fmt.mantissa_bits, fmt.exponent_bits
    negative = bool((bits >> (m + E)) & 1)
    e = (bits >> m) & ((1 << E) - 1)
    f = bits & ((1 << m) - 1)
    policy = fmt.specials.value
    all_ones = (1 << E) - 1
    if policy == "ieee" and e == all_ones:
        if f == 0:
            return Operand("inf", negative)
        return Operand("nan", negative, signaling=not (f >> (m - 1)) & 1)
    if policy == "fn" and e == all_ones and f == (1 << m) - 1:
        return Operand("nan", negative)
    if policy == "fnuz" and negative and e == 0 and f == 0:
        return Operand("nan", negative)
    sig = (f | (1 << m)) if e else f
    k = max(e, 1) - bias_of(fmt) - m  # value = sig * 2**k
    return Operand("finite", negative, Fraction(sig << k) if k >= 0 else Fraction(sig, 1 << -k))


def quieted(bits: int, fmt: sf.Format) -> int:
    """NAN_POLICY: a propagated NaN keeps sign and payload with the quiet bit set (ieee);
    fn and fnuz have one NaN (per sign for fn), which is already quiet."""
    if fmt.specials.value == "ieee":
        return bits | (1 << (fmt.mantissa_bits - 1))
    return bits


def default_nan(fmt: sf.Format) -> int:
    """NAN_POLICY: an invalid operation returns the positive canonical quiet NaN; FP6/FP4
    have no NaN and return +0."""
    return 0 if fmt.specials.value == "finite" else nan_pattern(fmt, False)


def max_pattern(fmt: sf.Format, negative: bool) -> int:
    return pattern_of(Fraction(fmt.max_finite), negative, fmt)


def deliver_infinity(negative: bool, fmt: sf.Format, saturate: bool):
    """(bits, flags) of an exact infinite result (infinite operands, x/0).

    IEEE formats: the infinity, no flag.  A format without infinity delivers it as
    ``encode`` delivers an infinite input (documented there): fn/fnuz give their NaN and
    raise invalid, or +-max_finite with overflow and inexact when saturating; FP6/FP4
    always give +-max_finite with overflow and inexact.
    """
    policy = fmt.specials.value
    sign = (1 << (fmt.bits - 1)) if negative else 0
    if policy == "ieee":
        return sign | (((1 << fmt.exponent_bits) - 1) << fmt.mantissa_bits), NO_FLAGS
    if saturate or policy == "finite":
        return max_pattern(fmt, negative), (False, False, True, False, True)
    return nan_pattern(fmt, negative), (True, False, False, False, False)


@functools.lru_cache(maxsize=1 << 17)
def rounded(q: Fraction, negative: bool, fmt: sf.Format, mode: str, tininess: str,
            subnormals: bool, saturate: bool):
    """(bits, flags) of the correctly rounded (-1)**negative * q (q >= 0), from MPFR."""
    exp = round_exact(q, negative, fmt, mode, tininess=tininess, subnormals=subnormals,
                      saturate=saturate)
    return pattern_of(exp.value, exp.negative, fmt), (exp.invalid, False, exp.overflow,
                                                      exp.underflow, exp.inexact)


def sqrt_proxy(q: Fraction, fmt: sf.Format) -> Fraction:
    """A rational that every rounding of ``fmt`` treats exactly like sqrt(q), q > 0 a value
    of ``fmt``.

    With K = mantissa_bits - emin + 8, S = q * 4**K is an integer (q is a multiple of the
    smallest subnormal 2**(emin - mantissa_bits)) and s = isqrt(S) gives

        s / 2**K  <=  sqrt(q)  <  (s + 1) / 2**K .

    If s*s == S the root is s / 2**K exactly.  Otherwise the root lies strictly inside the
    bracket, and so does its centre (2s + 1) / 2**(K+1).  Every point at which a rounding
    decision can change -- a value of the format, a midpoint between two (the ties), the
    overflow threshold, and for tininess-after the midpoints of the unbounded-exponent
    grid just below the smallest normal -- is a multiple of 2**(emin - mantissa_bits - 2),
    hence of 2**-K, so none lies strictly inside the bracket: the root and the centre round
    the same way in every mode, are both inexact, and are both tiny or both not.
    """
    K = fmt.mantissa_bits - fmt.emin + 8
    S = q * 4**K
    assert S.denominator == 1, (q, fmt)
    s = math.isqrt(S.numerator)
    if s * s == S.numerator:
        return Fraction(s, 2**K)
    return Fraction(2 * s + 1, 2 ** (K + 1))


def reference(op: str, patterns, fmt: sf.Format, mode: str, *, tininess: str = "after",
              subnormals: bool = True, denormals_are_zero: bool = False, saturate: bool = False):
    """(bits, flags) that IEEE 754-2019 and softfloat's documented policies prescribe for
    ``op`` on the operand bit patterns ``patterns``; flags in FLAGS_CHECKED order."""
    patterns = [int(p) for p in patterns]
    xs = [decode_pattern(p, fmt) for p in patterns]
    if denormals_are_zero:  # DAZ: a subnormal operand reads as a zero of the same sign
        min_normal = Fraction(2) ** (1 - bias_of(fmt))
        xs = [Operand("finite", x.negative) if x.kind == "finite" and 0 < x.q < min_normal else x
              for x in xs]
    if op == "sub":  # a - b = a + (-b); a NaN b still propagates with its own sign
        xs[1] = Operand(xs[1].kind, not xs[1].negative, xs[1].q, xs[1].signaling)
        op = "add"
    round_it = functools.partial(_round_signed, fmt=fmt, mode=mode, tininess=tininess,
                                 subnormals=subnormals, saturate=saturate)
    invalid_nan = (default_nan(fmt), (True, False, False, False, False))

    def is_zero(x):
        return x.kind == "finite" and x.q == 0

    def is_inf(x):
        return x.kind == "inf"

    # --- NaN operands: the first signaling one, else the first NaN, quieted -----------
    zero_times_inf = op == "fma" and ((is_zero(xs[0]) and is_inf(xs[1])) or
                                      (is_inf(xs[0]) and is_zero(xs[1])))
    nans = [i for i, x in enumerate(xs) if x.kind == "nan"]
    if nans:
        signaling = [i for i in nans if xs[i].signaling]
        chosen = (signaling or nans)[0]
        return quieted(patterns[chosen], fmt), (bool(signaling) or zero_times_inf, False, False,
                                                 False, False)

    # --- the remaining special cases, then the exact finite result --------------------
    if op == "add":
        a, b = xs
        if is_inf(a) or is_inf(b):
            if is_inf(a) and is_inf(b) and a.negative != b.negative:
                return invalid_nan
            return deliver_infinity((a if is_inf(a) else b).negative, fmt, saturate)
        exact = _signed(a) + _signed(b)
        return round_it(exact, _zero_sum_sign(a.negative, b.negative, a.q == 0 and b.q == 0, mode))
    if op == "mul":
        a, b = xs
        negative = a.negative != b.negative
        if is_inf(a) or is_inf(b):
            if is_zero(a) or is_zero(b):
                return invalid_nan
            return deliver_infinity(negative, fmt, saturate)
        return round_it(a.q * b.q * (-1 if negative else 1), negative)
    if op == "div":
        a, b = xs
        negative = a.negative != b.negative
        if (is_inf(a) and is_inf(b)) or (is_zero(a) and is_zero(b)):
            return invalid_nan
        if is_inf(a):
            return deliver_infinity(negative, fmt, saturate)
        if is_inf(b):
            return round_it(Fraction(0), negative)
        if is_zero(b):  # finite non-zero / 0: the only divide-by-zero
            bits, flags = deliver_infinity(negative, fmt, saturate)
            return bits, (flags[0], True) + flags[2:]
        return round_it(a.q / b.q * (-1 if negative else 1), negative)
    if op == "sqrt":
        (a,) = xs
        if is_zero(a):
            return round_it(Fraction(0), a.negative)  # sqrt(-0) = -0
        if a.negative:
            return invalid_nan
        if is_inf(a):
            return deliver_infinity(False, fmt, saturate)
        return round_it(sqrt_proxy(a.q, fmt), False)
    if op == "fma":
        a, b, c = xs
        p_negative = a.negative != b.negative
        if zero_times_inf:
            return invalid_nan
        if is_inf(a) or is_inf(b):
            if is_inf(c) and c.negative != p_negative:
                return invalid_nan
            return deliver_infinity(p_negative, fmt, saturate)
        if is_inf(c):
            return deliver_infinity(c.negative, fmt, saturate)
        exact = a.q * b.q * (-1 if p_negative else 1) + _signed(c)
        both_zero = (a.q == 0 or b.q == 0) and c.q == 0
        return round_it(exact, _zero_sum_sign(p_negative, c.negative, both_zero, mode))
    raise AssertionError(op)


def _signed(x: Operand) -> Fraction:
    return -x.q if x.negative else x.q


def _zero_sum_sign(neg_a: bool, neg_b: bool, both_zero: bool, mode: str) -> bool:
    """IEEE 754-2019 6.3: the sign of an exact zero sum.  x + x keeps x's sign (both zero,
    same sign); opposite signs and exact cancellations give +0, -0 under downward."""
    if both_zero and neg_a == neg_b:
        return neg_a
    return mode == "downward"


def _round_signed(exact: Fraction, zero_negative: bool, *, fmt, mode, tininess, subnormals,
                  saturate):
    """Round a signed exact value; ``zero_negative`` is the sign an exact zero takes."""
    negative = exact < 0 or (exact == 0 and zero_negative)
    return rounded(abs(exact), negative, fmt, mode, tininess, subnormals, saturate)


# =====================================================================================
# checking softfloat against the reference
# =====================================================================================
def stride_offset(request, stride: int) -> int:
    """A per-test start for the CI slice, so the tests together cover every case."""
    return zlib.crc32(request.node.nodeid.encode()) % stride


def _flag_names(raised) -> str:
    return "|".join(n for n, on in zip(FLAGS_CHECKED, raised) if on) or "-"


def describe_case(op, patterns, fmt, mode, policy, got, want) -> str:
    args = ", ".join(f"{int(p):#x}" for p in patterns)
    opts = "".join(f", {k}={v!r}" for k, v in policy.items())
    return (f"  sf.{op}({args}, {fmt!r}, {mode!r}{opts}): got {int(got[0]):#x} "
            f"{_flag_names(got[1])}  want {int(want[0]):#x} {_flag_names(want[1])}")


def run_op(op, operands, fmt, mode, **policy):
    """softfloat's bits (as uint64) and flags (5 x n bool) for flat operand arrays."""
    arrays = [np.asarray(o, dtype=np.uint64).astype(fmt.storage_dtype) for o in operands]
    bits, flags = FUNCS[op](*arrays, fmt, mode, return_flags=True, **policy)
    assert bits.dtype == fmt.storage_dtype and bits.shape == arrays[0].shape
    stacked = np.stack([np.asarray(getattr(flags, n)) for n in FLAGS_CHECKED])
    assert stacked.dtype == bool
    return bits.astype(np.uint64), stacked


def assert_matches_reference(op, operands, fmt, mode, stride=1, offset=0, **policy):
    """Run ``op`` on every case; compare every ``stride``-th one (bits and all five flags)
    with the reference."""
    operands = [np.asarray(o, dtype=np.uint64).ravel() for o in operands]
    n = operands[0].size
    assert n > 0, "no cases generated"
    bits, flags = run_op(op, operands, fmt, mode, **policy)
    bad = []
    checked = 0
    for i in range(offset % stride, n, stride):
        patterns = [o[i] for o in operands]
        want = reference(op, patterns, fmt, mode, **policy)
        got = (int(bits[i]), tuple(bool(f) for f in flags[:, i]))
        checked += 1
        if got != want:
            bad.append(describe_case(op, patterns, fmt, mode, policy, got, want))
    if bad:
        pytest.fail(f"{len(bad)} of {checked} checked cases differ from the reference:\n"
                    + "\n".join(bad[:12]))


# =====================================================================================
# case generation (operands only: expected results always come from the reference)
# =====================================================================================
def special_patterns(fmt: sf.Format) -> list[int]:
    """Infinities and NaNs (quiet and signaling, with payloads, both signs)."""
    m, E = fmt.mantissa_bits, fmt.exponent_bits
    sign = 1 << (fmt.bits - 1)
    ones = ((1 << E) - 1) << m
    policy = fmt.specials.value
    if policy == "ieee":
        quiet = 1 << (m - 1)
        pats = {ones, ones | quiet, ones | quiet | 1, ones | ((1 << m) - 1)}  # inf, qNaNs
        if m >= 2:
            pats |= {ones | 1, ones | (quiet >> 1)}                          # sNaNs
        return sorted(pats | {p | sign for p in pats})
    if policy == "fn":
        return [ones | ((1 << m) - 1), sign | ones | ((1 << m) - 1)]
    if policy == "fnuz":
        return [sign]
    return []


def edge_magnitudes(fmt: sf.Format) -> list[int]:
    """Magnitude patterns at the class boundaries: zero, the smallest subnormals, the
    largest subnormal and the smallest normals, 1 and its neighbours, 1.5, 2, 3, half and
    a whole ulp of 1 (ties and sticky bits against 1), half an ulp of max (the
    overflow-threshold addend), and the largest finite values."""
    m = fmt.mantissa_bits
    top = fmt.max_finite_bits
    first_normal = 1 << m
    bias = bias_of(fmt)
    one = bias << m
    top_field = top >> m

    def power_of_two(k):  # magnitude pattern of 2**k, or None when not representable
        if k >= 1 - bias:
            return (k + bias) << m if k + bias <= top_field else None
        return 1 << (k - (1 - bias - m)) if k >= 1 - bias - m else None

    mags = {0, 1, 2, 3, first_normal - 1, first_normal, first_normal + 1,
            one - 1, one, one + 1, one | (1 << (m - 1)), one + first_normal,
            one + first_normal + (1 << (m - 1)), top - 1, top, (top_field // 2) << m,
            power_of_two(-m - 1), power_of_two(-m),                  # ulp(1)/2, ulp(1)
            power_of_two(top_field - bias - m - 1)}                  # ulp(max)/2
    return sorted(x for x in mags if x is not None and 0 <= x <= top)


def edge_patterns(fmt: sf.Format) -> list[int]:
    sign = 1 << (fmt.bits - 1)
    mags = edge_magnitudes(fmt)
    pats = set(mags) | {x | sign for x in mags} | set(special_patterns(fmt))
    return sorted(pats)


def edge_cases(op: str, fmt: sf.Format, rng) -> list[np.ndarray]:
    """Every pair of edge patterns; for sqrt each one; for fma every pair twice, with
    addends taken in turn from a short list (zeros, a quiet NaN, +-min subnormal, +-1,
    -max), plus random triples of edge patterns."""
    pats = np.array(edge_patterns(fmt), dtype=np.uint64)
    if op == "sqrt":
        return [pats]
    a, b = (x.ravel() for x in np.meshgrid(pats, pats, indexing="ij"))
    if op != "fma":
        return [a, b]
    sign = 1 << (fmt.bits - 1)
    one = bias_of(fmt) << fmt.mantissa_bits
    cs = {0, sign, 1, 1 | sign, one, one | sign, fmt.max_finite_bits | sign}
    cs |= set(special_patterns(fmt)[:2])
    if fmt.specials.value == "fnuz":
        cs.discard(sign)  # that pattern is the NaN, already in
    cs = np.array(sorted(cs), dtype=np.uint64)
    turn = np.arange(2 * a.size)
    k = 1500
    rand = [pats[rng.integers(0, pats.size, k)] for _ in range(3)]
    return [np.concatenate([np.tile(a, 2), rand[0]]), np.concatenate([np.tile(b, 2), rand[1]]),
            np.concatenate([cs[turn % cs.size], rand[2]])]


def _compose(sign, field, frac, fmt: sf.Format) -> np.ndarray:
    u = np.uint64
    sign, field, frac = (np.asarray(x, dtype=u) for x in (sign, field, frac))
    return (sign << u(fmt.bits - 1)) | (field << u(fmt.mantissa_bits)) | frac


def structured_cases(op: str, fmt: sf.Format, n: int, rng) -> list[np.ndarray]:
    """Random operands aimed at the interesting places (plus a quarter uniform patterns).

    add/sub: exponent gaps mostly 0..p+3 (cancellations, ties, sticky bits), some huge;
             a tenth are exact ties (b = half an ulp of a) or quarter-ulps.
    mul/div: the result exponent drawn from [emin - p - 3, emax + 2], so products and
             quotients land on the subnormal range, the underflow boundary and the overflow
             threshold; a tenth are products (1 + 2**-i)(1 + 2**-(p-i)) = ties.
    sqrt:    mostly positive patterns.
    fma:     a*b as for mul, c with an exponent near the product's (cancellations), or the
             product's own truncation negated (near-total cancellation), or random.
    """
    m, p = fmt.mantissa_bits, fmt.precision
    top_field = fmt.max_finite_bits >> m
    bias = bias_of(fmt)
    width = fmt.bits
    uniform = n // 4
    k = n - uniform

    def fracs(size):
        return rng.integers(0, 1 << m, size, dtype=np.uint64)

    def signs(size):
        return rng.integers(0, 2, size)

    def fields(size):
        return rng.integers(0, top_field + 1, size)

    def uniform_pats(size):
        return rng.integers(0, 1 << width, size, dtype=np.uint64)

    if op == "sqrt":
        pats = uniform_pats(n)
        pats[: (3 * n) // 4] &= np.uint64((1 << (width - 1)) - 1)  # positive
        return [pats]

    def product_operands(size, target):
        fa = fields(size)
        ea = np.maximum(fa, 1) - bias
        fb = np.clip(target - ea + bias, 0, top_field)
        return fa, fb

    if op in ("add", "sub"):
        fa = fields(k)
        gap = np.where(rng.random(k) < 0.8, rng.integers(0, p + 4, k), rng.integers(0, top_field + 1, k))
        fb = np.clip(fa - gap, 0, top_field)
        fr_b = fracs(k)
        tie = rng.random(k) < 0.1
        fb = np.where(tie, np.clip(fa - m - rng.integers(1, 3, k), 0, top_field), fb)
        fr_b = np.where(tie, 0, fr_b)
        swap = rng.random(k) < 0.5
        a = _compose(signs(k), fa, fracs(k), fmt)
        b = _compose(signs(k), fb, fr_b, fmt)
        a, b = np.where(swap, b, a), np.where(swap, a, b)
    elif op in ("mul", "div", "fma"):
        target = rng.integers(fmt.emin - p - 3, fmt.emax + 3, k)
        if op == "div":
            fa = fields(k)
            fb = np.clip((np.maximum(fa, 1) - bias) - target + bias, 0, top_field)
            fr_a, fr_b = fracs(k), fracs(k)
            exact_div = rng.random(k) < 0.1  # divisor a power of two: exact or a subnormal tie
            fr_b = np.where(exact_div, 0, fr_b)
        else:
            fa, fb = product_operands(k, target)
            fr_a, fr_b = fracs(k), fracs(k)
            tie = rng.random(k) < 0.1
            i = rng.integers(1, m + 1, k).astype(np.uint64)
            fr_a = np.where(tie, np.uint64(1) << (np.uint64(m) - i), fr_a)
            fr_b = np.where(tie, np.uint64(1) << (i - np.uint64(1)), fr_b)
        a = _compose(signs(k), fa, fr_a, fmt)
        b = _compose(signs(k), fb, fr_b, fmt)
    else:
        raise AssertionError(op)

    a = np.concatenate([a, uniform_pats(uniform)])
    b = np.concatenate([b, uniform_pats(uniform)])
    if op != "fma":
        return [a, b]

    c = uniform_pats(n)
    near = rng.random(n) < 0.4
    fc_near = np.clip(np.maximum(fa, 1) + np.maximum(fb, 1) - bias + rng.integers(-p - 2, 3, k), 0, top_field)
    c[:k] = np.where(near[:k], _compose(signs(k), fc_near, fracs(k), fmt), c[:k])
    # near-total cancellation: c = -(a*b truncated to the format), or its neighbour
    for i in np.nonzero(rng.random(n) < 0.25)[0]:
        x, y = decode_pattern(int(a[i]), fmt), decode_pattern(int(b[i]), fmt)
        if x.kind != "finite" or y.kind != "finite":
            continue
        prod_negative = x.negative != y.negative
        bits, flags = rounded(x.q * y.q, not prod_negative, fmt, "toward_zero", "after", True, False)
        magnitude = bits & ((1 << (width - 1)) - 1)
        if not flags[2]:  # no overflow; step one ulp up (or not) within the finite range
            c[i] = bits + int(0 < magnitude < fmt.max_finite_bits and rng.integers(0, 2))
    return [a, b, c]


def case_rng(request, extra: str = "") -> np.random.Generator:
    return np.random.default_rng(zlib.crc32((request.node.nodeid + extra).encode()))


# =====================================================================================
# 0. the reference against the hardware, and the sqrt proxy against MPFR
# =====================================================================================
_NUMPY_OPS = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "sqrt": np.sqrt,
}


@pytest.mark.parametrize("dtype, fmt", [(np.float64, sf.fp64), (np.float32, sf.fp32), (np.float16, sf.fp16)],
                         ids=["float64", "float32", "float16"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "sqrt"])
def test_reference_matches_numpy(op, dtype, fmt, request):
    """In nearest_even the reference reproduces numpy's (IEEE) arithmetic: values and NaN-ness
    on the edge grid and structured random operands -- the reference vouches for itself."""
    rng = case_rng(request)
    ops = edge_cases(op, fmt, rng)
    more = structured_cases(op, fmt, 400, rng)
    ops = [np.concatenate([x, y]) for x, y in zip(ops, more)]
    udt = np.dtype(f"u{np.dtype(dtype).itemsize}")
    views = [o.astype(udt).view(dtype) for o in ops]
    with np.errstate(all="ignore"):
        hw = _NUMPY_OPS[op](*views)
    for i in range(0, ops[0].size, 3):
        bits, _ = reference(op, [o[i] for o in ops], fmt, "nearest_even")
        want = hw[i : i + 1]
        got = np.array([bits], dtype=udt).view(dtype)
        if np.isnan(want[0]):
            assert np.isnan(got[0]), (op, [hex(int(o[i])) for o in ops])
        else:
            assert got.view(udt)[0] == want.view(udt)[0], (op, [hex(int(o[i])) for o in ops])


def test_reference_flags_match_hardware_float32():
    """The reference's overflow, underflow (after rounding, as x86 SSE) and inexact flags
    equal the CPU's own for float32 products and quotients near the boundaries."""
    rng = np.random.default_rng(7)
    cases = structured_cases("mul", sf.fp32, 160, rng) + structured_cases("div", sf.fp32, 160, rng)
    pairs = list(zip(cases[0], cases[1], ["mul"] * 160)) + list(zip(cases[2], cases[3], ["div"] * 160))
    for a, b, op in pairs:
        x, y = np.uint32(a).view(np.float32), np.uint32(b).view(np.float32)
        if not (np.isfinite(x) and np.isfinite(y)) or y == 0:
            continue
        hw = []
        for which in ("over", "under", "invalid"):
            try:
                with np.errstate(all="ignore", **{which: "raise"}):
                    _NUMPY_OPS[op](x, y)
                hw.append(False)
            except FloatingPointError:
                hw.append(True)
        _, flags = reference(op, [a, b], sf.fp32, "nearest_even")
        assert (flags[2], flags[3]) == (hw[0], hw[1]), (op, hex(int(a)), hex(int(b)), flags, hw)


@pytest.mark.parametrize("fmt", [sf.fp32, sf.fp16, sf.bf16, sf.fp8_e5m2, sf.fp4_e2m1,
                                 CUSTOM_FORMATS[2]], ids=fmt_id)
def test_sqrt_proxy_matches_mpfr_sqrt(fmt):
    """sqrt_proxy + round_exact == MPFR's own correctly rounded sqrt (gmpy2.sqrt in a context
    with the format's precision and exponent range), value and inexactness."""
    modes = {"nearest_even": gmpy2.RoundToNearest, "toward_zero": gmpy2.RoundToZero,
             "upward": gmpy2.RoundUp, "downward": gmpy2.RoundDown}
    rng = np.random.default_rng(fmt.bits)
    mags = np.unique(np.concatenate([
        rng.integers(1, fmt.max_finite_bits + 1, 300, dtype=np.uint64),
        np.array(edge_magnitudes(fmt), dtype=np.uint64)]))
    for mode, mpfr_mode in modes.items():
        ctx = gmpy2.context(precision=fmt.precision, emin=fmt.emin - fmt.mantissa_bits + 1,
                            emax=fmt.emax + 2, subnormalize=True, round=mpfr_mode)
        for mag in mags.tolist():
            q = decode_pattern(mag, fmt).q
            if q == 0:
                continue
            with ctx:
                current = gmpy2.get_context()
                x = gmpy2.mpfr(gmpy2.mpq(q.numerator, q.denominator))  # exact: q has p bits
                current.clear_flags()
                r = gmpy2.check_range(gmpy2.sqrt(x))
                mpfr_inexact = current.inexact
            n, d = r.as_integer_ratio()
            exp = round_exact(sqrt_proxy(q, fmt), False, fmt, mode)
            assert exp.value == Fraction(int(n), int(d)), (fmt.name, mode, hex(mag))
            assert exp.inexact == mpfr_inexact, (fmt.name, mode, hex(mag))


def test_decode_pattern_matches_softfloat_decode_tables():
    """The reference's decoder agrees with the pinned codec (itself checked against numpy
    and ml_dtypes) on every pattern of the formats up to 8 bits and on sampled patterns
    (plus the edge grid) of the wider ones."""
    rng = np.random.default_rng(0)
    for fmt in FORMATS:
        if fmt.bits <= 8:
            pats = np.arange(1 << fmt.bits, dtype=np.uint64)
        else:
            pats = np.concatenate([rng.integers(0, 1 << fmt.bits, 3000, dtype=np.uint64),
                                   np.array(edge_patterns(fmt), dtype=np.uint64)])
        vals = sf.decode(pats.astype(fmt.storage_dtype), fmt).astype(np.float64)
        for p, v in zip(pats.tolist(), vals.tolist()):
            x = decode_pattern(p, fmt)
            if x.kind == "nan":
                assert math.isnan(v)
            elif x.kind == "inf":
                assert v == (-math.inf if x.negative else math.inf)
            else:
                assert Fraction(v) == (-x.q if x.negative else x.q), (fmt.name, hex(p))
                assert (math.copysign(1, v) < 0) == x.negative, (fmt.name, hex(p))


# =====================================================================================
# 1. every op x every mode x every format: edge grid and structured random operands
# =====================================================================================
@pytest.mark.parametrize("fmt", FORMATS, ids=fmt_id)
@pytest.mark.parametrize("op", OPS)
def test_edge_grid_matches_reference(op, fmt, oracle_stride, request):
    """Every pair (sqrt: every pattern; fma: pairs x a few addends, and random triples) of
    the edge grid, in every deterministic mode, values and the five flags."""
    ops = edge_cases(op, fmt, case_rng(request))
    for j, mode in enumerate(MODES):
        assert_matches_reference(op, ops, fmt, mode, oracle_stride, stride_offset(request, oracle_stride) + j)


@pytest.mark.parametrize("fmt", FORMATS, ids=fmt_id)
@pytest.mark.parametrize("op", OPS)
def test_structured_random_matches_reference(op, fmt, oracle_stride, request):
    """Random operands aimed at ties, cancellations, exponent gaps and both range
    boundaries (see structured_cases), plus uniform random patterns, in every mode."""
    n = 1500 if fmt.bits > 8 else 600
    ops = structured_cases(op, fmt, n, case_rng(request))
    for j, mode in enumerate(MODES):
        assert_matches_reference(op, ops, fmt, mode, oracle_stride, stride_offset(request, oracle_stride) + j)


@pytest.mark.parametrize("policy", POLICIES, ids=policy_id)
@pytest.mark.parametrize("fmt", FORMATS, ids=fmt_id)
@pytest.mark.parametrize("op", OPS)
def test_policies_match_reference(op, fmt, policy, oracle_stride, request):
    """Tininess before rounding, flush-to-zero (both tininess choices), denormals-are-zero
    (alone and with FTZ) and saturation, in every mode, on the edge grid and on operands
    aimed at the boundaries."""
    rng = case_rng(request)
    edge = edge_cases(op, fmt, rng)
    more = structured_cases(op, fmt, 400, rng)
    ops = [np.concatenate([x, y]) for x, y in zip(edge, more)]
    stride = oracle_stride * 3  # six policies: each checks a thinner slice
    for j, mode in enumerate(MODES):
        assert_matches_reference(op, ops, fmt, mode, stride, stride_offset(request, stride) + j, **policy)


@given(
    op=st.sampled_from(OPS),
    fmt=st.sampled_from(FORMATS),
    mode=st.sampled_from(MODES),
    tininess=st.sampled_from(("after", "before")),
    subnormals=st.booleans(),
    daz=st.booleans(),
    saturate=st.booleans(),
    data=st.data(),
)
@example(op="add", fmt=sf.fp16, mode="nearest_even", tininess="after", subnormals=True, daz=False,
         saturate=False, data=None)
def test_random_cases_match_reference(op, fmt, mode, tininess, subnormals, daz, saturate, data):
    """Hypothesis: any op, format, mode and options on any operand patterns."""
    if data is None:  # the pinned example: 2048 + 1 in fp16
        pats = [0x6800, 0x3C00]
    else:
        pats = [data.draw(st.integers(0, (1 << fmt.bits) - 1)) for _ in range(ARITY[op])]
    policy = {"tininess": tininess, "subnormals": subnormals, "denormals_are_zero": daz,
              "saturate": saturate}
    assert_matches_reference(op, [[p] for p in pats], fmt, mode, **policy)


# =====================================================================================
# 2. nearest_even equals numpy's own float16 / float32 arithmetic on 10**6 operands
# =====================================================================================
N_NUMPY = 10**6


def numpy_operands(bits: int, n: int, arity: int, rng) -> list[np.ndarray]:
    """Half uniform random patterns (every class: subnormals, infinities, NaNs), half with
    exponent fields near both ends (results in the subnormal range, underflowing to zero,
    overflowing) -- all with random fractions and signs."""
    udt = np.dtype(f"u{bits // 8}")
    m = {16: 10, 32: 23, 64: 52}[bits]
    top = (1 << (bits - 1 - m)) - 1
    half = n // 2
    out = []
    for _ in range(arity):
        uni = rng.integers(0, 1 << bits, half, dtype=np.uint64)
        field = rng.choice(np.r_[0:4, top - 4:top + 1], n - half).astype(np.uint64)
        pat = (rng.integers(0, 2, n - half, dtype=np.uint64) << np.uint64(bits - 1)) | \
              (field << np.uint64(m)) | rng.integers(0, 1 << m, n - half, dtype=np.uint64)
        out.append(np.concatenate([uni, pat]).astype(udt))
    return out


def assert_same_as_numpy(got: np.ndarray, want: np.ndarray, dtype, what: str, operands):
    """Bit-identical, except that NaN results are compared by NaN-ness only (x86 and
    softfloat choose different NaNs, see softfloat.ops.NAN_POLICY)."""
    g, w = got.view(dtype), want.view(dtype)
    gnan, wnan = np.isnan(g), np.isnan(w)
    bad = np.nonzero((gnan != wnan) | (~wnan & (got != want)))[0]
    if bad.size:
        rows = [f"  operands {[hex(int(o[i])) for o in operands]}: "
                f"got {int(got[i]):#x} want {int(want[i]):#x}" for i in bad[:12]]
        pytest.fail(f"{what}: {bad.size} of {got.size} differ from numpy:\n" + "\n".join(rows))


@pytest.mark.parametrize("fmt, dtype", [(sf.fp16, np.float16), (sf.fp32, np.float32), (sf.fp64, np.float64)],
                         ids=["fp16", "fp32", "fp64"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "sqrt"])
def test_nearest_even_matches_numpy(op, fmt, dtype, request):
    """numpy's float32 and float64 ufuncs are the CPU's IEEE operations.  numpy's float16
    ufuncs compute in float32 and round the float32 result to float16; that double
    rounding is innocuous for +, -, *, / and sqrt because 24 >= 2*11 + 2 (Figueroa, "When
    is double rounding innocuous?", SIGNUM 1995), so they are correctly rounded too.
    (fp64 takes 2*10**5 operands: half of them sit at the ends of the exponent range,
    where softfloat's fp64 kernels take their exact Python path.)"""
    rng = case_rng(request)
    operands = numpy_operands(fmt.bits, N_NUMPY if fmt.bits < 64 else 200_000, ARITY[op], rng)
    got = FUNCS[op](*operands, fmt)
    with np.errstate(all="ignore"):
        want = _NUMPY_OPS[op](*(o.view(dtype) for o in operands)).view(operands[0].dtype)
    assert_same_as_numpy(got, want, dtype, f"{op} {fmt.name}", operands)


def _target_midpoint(s: np.ndarray, dtype) -> np.ndarray:
    """Where a float64 value is exactly halfway between two neighbours of ``dtype`` (or is
    the overflow threshold max + ulp(max)/2): there a second rounding could break a tie
    the first one created."""
    info = np.finfo(dtype)
    big = float(info.max)
    threshold = big + (big - float(np.nextafter(dtype(info.max), dtype(0)))) / 2
    with np.errstate(all="ignore"):
        t = s.astype(dtype)
        toward = np.where(s > t.astype(np.float64), dtype(np.inf), dtype(-np.inf)).astype(dtype)
        nb = np.nextafter(t, toward)
        mid = (t.astype(np.float64) + nb.astype(np.float64)) / 2 == s
    return (mid & np.isfinite(nb) & (s != t.astype(np.float64))) | (np.abs(s) == threshold)


@pytest.mark.parametrize("fmt, dtype", [(sf.fp16, np.float16), (sf.fp32, np.float32)], ids=["fp16", "fp32"])
def test_fma_nearest_even_matches_numpy_via_float64(fmt, dtype, request):
    """fma against numpy through float64: s = float64(a) * float64(b) + float64(c), then
    one cast to the target.

    Why this is a correct reference: a*b is exact in float64 (two significands of at most
    24 bits make at most 48).  The sum is not always exact -- fp16 2**15 + 2**-24 * 2**-24
    needs 64 bits, fp32 far more -- so each lane is classified with TwoSum (Knuth: e is the
    exact error of s = fl(a*b + c)):
      * e == 0: s is the exact result and the cast is its single rounding (numpy casts
        float64 -> float16 directly, not via float32; pinned below);
      * e != 0: s = RN64(exact) and the cast is a second rounding.  Rounding to nearest is
        monotone and every target value, target midpoint and the overflow threshold is a
        float64, so RN64 cannot move the exact value across any of them: the second
        rounding is right unless s lands exactly on a target midpoint or the threshold
        (then RN64 may have created the tie).  Those few lanes go to the MPFR reference.
    """
    rng = case_rng(request)
    a, b, c = numpy_operands(fmt.bits, N_NUMPY, 3, rng)
    # half the addends near -(a*b): cancellations, the hard case for fma
    with np.errstate(all="ignore"):  # casts of signaling NaNs, overflowing products
        x, y = a.view(dtype).astype(np.float64), b.view(dtype).astype(np.float64)
        near = (-(x * y)).astype(dtype).view(a.dtype)
    c = np.where(rng.random(N_NUMPY) < 0.5, near, c)
    got = sf.fma(a, b, c, fmt)
    with np.errstate(all="ignore"):
        z = c.view(dtype).astype(np.float64)
        p = x * y
        s = p + z
        bv = s - p
        e = (p - (s - bv)) + (z - bv)
        want = s.astype(dtype).view(a.dtype)
    hard = np.nonzero(np.isfinite(s) & (e != 0) & _target_midpoint(s, dtype))[0]
    for i in hard:
        bits, _ = reference("fma", [a[i], b[i], c[i]], fmt, "nearest_even")
        want[i] = bits
    assert_same_as_numpy(got, want, dtype, f"fma {fmt.name}", [a, b, c])


def test_numpy_float64_to_float16_cast_rounds_once():
    """The premise above: numpy's float64 -> float16 cast is one rounding (through float32
    it would turn 1 + 2**-11 + 2**-40 into the tie 1 + 2**-11 and round it to 1)."""
    x = np.array([1 + 2**-11 + 2**-40, 1 + 2**-11, 2**-25 + 2**-60, 65520 - 2**-30])
    assert x.astype(np.float16).view(np.uint16).tolist() == [0x3C01, 0x3C00, 0x0001, 0x7BFF]


# =====================================================================================
# 3. the seeds' phenomena
# =====================================================================================
#   fp16  | s | e e e e e | f f f f f f f f f f |   bias 15
#   0x3C00 = 1.0    0x6800 = 2048 = 2**11 (ulp there: 2)    0x1000 = 2**-11
#   0x0C00 = 2**-12 0x0800 = 2**-13    0x0001 = 2**-24 (smallest subnormal)
FP16_ONE, FP16_2048, FP16_2M11, FP16_2M12, FP16_2M13 = 0x3C00, 0x6800, 0x1000, 0x0C00, 0x0800
#   fp32  0x3F800000 = 1.0   0x45000000 = 2048   0x3A000000 = 2**-11   0x39000000 = 2**-13
FP32_ONE, FP32_2048, FP32_2M11, FP32_2M13 = 0x3F800000, 0x45000000, 0x3A000000, 0x39000000


def flags_raised(flags) -> tuple[str, ...]:
    return tuple(n for n in FLAGS_CHECKED if bool(getattr(flags, n)))


def test_swamping_2048_plus_1_in_fp16():
    """2048 + 1: the exact 2049 lies halfway between 2048 and 2050 (ulp 2) and the tie goes
    to even, 2048: the update is lost.  fp32 keeps it."""
    bits, flags = sf.add(FP16_2048, FP16_ONE, sf.fp16, return_flags=True)
    assert int(bits) == FP16_2048 and flags_raised(flags) == ("inexact",)
    assert int(sf.add(FP16_2048, FP16_ONE, sf.fp16, "upward")) == 0x6801  # 2050
    assert int(sf.add(FP32_2048, FP32_ONE, sf.fp32)) == 0x45001000         # 2049 exactly
    # repeated: a running fp16 sum of ones stalls at 2048
    total = 0
    for _ in range(3000):
        total = sf.add(total, FP16_ONE, sf.fp16)
    assert int(total) == FP16_2048


def test_small_update_to_a_unit_weight_is_lost_in_fp16_not_fp32():
    """A weight of 1.0 plus an update 2048x smaller (2**-11, half an ulp of 1 in fp16):
    the tie rounds back to 1.0 however often it is applied; fp32 accumulates it."""
    w16, w32 = FP16_ONE, FP32_ONE
    for _ in range(100):
        w16, f16 = sf.add(w16, FP16_2M11, sf.fp16, return_flags=True)
        w32 = sf.add(w32, FP32_2M11, sf.fp32)
    assert int(w16) == FP16_ONE and flags_raised(f16) == ("inexact",)
    assert sf.decode(w32, sf.fp32) == 1 + 100 * 2**-11
    # in bf16 (8-bit precision) even a 2**-9 update (half its ulp) is lost
    assert int(sf.add(0x3F80, 0x3B00, sf.bf16)) == 0x3F80


def test_small_gradient_products_underflow_in_fp16_not_fp32():
    """(2**-13)**2 = 2**-26 is below half the smallest fp16 subnormal (2**-25): the product
    underflows to +0 with underflow and inexact, while fp32 holds it exactly.  (2**-12)**2
    = 2**-24 is the smallest subnormal exactly: tiny but exact, so no underflow flag."""
    bits, flags = sf.mul(FP16_2M13, FP16_2M13, sf.fp16, return_flags=True)
    assert int(bits) == 0x0000 and flags_raised(flags) == ("underflow", "inexact")
    bits, flags = sf.mul(FP16_2M13 | 0x8000, FP16_2M13, sf.fp16, return_flags=True)
    assert int(bits) == 0x8000  # the sign survives the underflow
    bits, flags = sf.mul(FP32_2M13, FP32_2M13, sf.fp32, return_flags=True)
    assert sf.decode(bits, sf.fp32) == 2.0**-26 and flags_raised(flags) == ()
    bits, flags = sf.mul(FP16_2M12, FP16_2M12, sf.fp16, return_flags=True)
    assert int(bits) == 0x0001 and flags_raised(flags) == ()
    # a batch of gradients around 1e-4: every fp16 square is 0, no fp32 square is
    g = np.linspace(5e-5, 1.5e-4, 1000)
    g16, g32 = sf.encode(g, sf.fp16), sf.encode(g, sf.fp32)
    sq16, fl16 = sf.mul(g16, g16, sf.fp16, return_flags=True)
    sq32, fl32 = sf.mul(g32, g32, sf.fp32, return_flags=True)
    assert not np.any(sf.decode(sq16, sf.fp16)) and fl16.underflow.all()
    assert np.all(sf.decode(sq32, sf.fp32) > 0) and not fl32.underflow.any()


# =====================================================================================
# 4. semantics, spelled out (fp16 patterns unless noted)
# =====================================================================================
#   0x7C00 +inf   0xFC00 -inf   0x7E00 canonical qNaN   0x7D00 sNaN (quiet bit 0x200 clear)
#   0x7BFF max = 65504   0x0400 min normal   0x0001 min subnormal   0x8000 -0
PINF, NINF, QNAN, SNAN, MAX, ONE, NEG = 0x7C00, 0xFC00, 0x7E00, 0x7D00, 0x7BFF, 0x3C00, 0x8000


def _one(op, *args, fmt=sf.fp16, mode="nearest_even", **kw):
    bits, flags = FUNCS[op](*args, fmt, mode, return_flags=True, **kw)
    return int(bits), flags_raised(flags)


@pytest.mark.parametrize("op, args", [
    ("add", (PINF, NINF)), ("sub", (PINF, PINF)), ("mul", (0, PINF)), ("mul", (NINF, NEG)),
    ("div", (0, NEG)), ("div", (PINF, NINF)), ("sqrt", (ONE | NEG,)), ("sqrt", (0x0001 | NEG,)),
    ("sqrt", (NINF,)), ("fma", (0, PINF, ONE)), ("fma", (PINF, 0, ONE)),
    ("fma", (ONE, PINF, NINF)),
])
def test_invalid_operations_give_the_default_nan(op, args):
    assert _one(op, *args) == (QNAN, ("invalid",))


def test_fma_zero_times_inf_is_invalid_even_with_a_quiet_nan_addend():
    """As x86 and RISC-V: fma(0, inf, qNaN) raises invalid; the result is c's NaN."""
    c = QNAN | 0x0055 | NEG  # a negative quiet NaN with a payload
    assert _one("fma", 0, PINF, c) == (c, ("invalid",))
    assert _one("fma", PINF, NEG, c) == (c, ("invalid",))
    assert _one("fma", ONE, PINF, c) == (c, ())  # no 0*inf: just propagation


@pytest.mark.parametrize("op", OPS)
def test_any_signaling_nan_operand_is_invalid(op):
    for position in range(ARITY[op]):
        args = [ONE] * ARITY[op]
        args[position] = SNAN | 0x0011
        assert _one(op, *args) == (SNAN | 0x0211, ("invalid",)), position


def test_nan_propagation_policy():
    """NAN_POLICY: the first signaling NaN operand, else the first NaN operand, quieted,
    sign and payload kept; an invalid operation without NaN operands gives +qNaN."""
    q1, q2 = QNAN | 0x0001, QNAN | NEG | 0x0002
    s1, s2 = SNAN | 0x0003, SNAN | NEG | 0x0004
    assert _one("add", q1, q2) == (q1, ())
    assert _one("add", q2, q1) == (q2, ())
    assert _one("mul", q1, s2) == (s2 | 0x0200, ("invalid",))   # signaling wins
    assert _one("div", s1, s2) == (s1 | 0x0200, ("invalid",))   # the first of two
    assert _one("fma", q1, ONE, s1) == (s1 | 0x0200, ("invalid",))
    assert _one("fma", ONE, ONE, q2) == (q2, ())
    assert _one("sub", ONE, q2) == (q2, ())  # sub does not flip a NaN's sign
    assert _one("sqrt", q2) == (q2, ())
    assert sf.NAN_POLICY["default_nan"].startswith("positive")
    # formats with a single NaN (fn: one per sign) return it; FP6/FP4 have none: +0
    assert _one("add", 0x7F, 0x38, fmt=sf.fp8_e4m3) == (0x7F, ())
    assert _one("add", 0xFF, 0x38, fmt=sf.fp8_e4m3) == (0xFF, ())
    assert _one("mul", 0x80, 0x38, fmt=sf.fp8_e4m3fnuz) == (0x80, ())
    assert _one("div", 0, 0, fmt=sf.fp8_e4m3) == (0x7F, ("invalid",))
    assert _one("div", 0, 0x8, fmt=sf.fp4_e2m1) == (0x0, ("invalid",))   # 0 / -0
    assert _one("sqrt", 0x2C, fmt=sf.fp6_e3m2) == (0x0, ("invalid",))    # sqrt(-1)


def test_divide_by_zero_only_for_finite_nonzero_over_zero():
    assert _one("div", ONE, 0) == (PINF, ("divide_by_zero",))
    assert _one("div", ONE, NEG) == (NINF, ("divide_by_zero",))
    assert _one("div", 0x0001 | NEG, NEG) == (PINF, ("divide_by_zero",))  # subnormal / -0
    assert _one("div", 0, 0) == (QNAN, ("invalid",))
    assert _one("div", PINF, 0) == (PINF, ())
    assert _one("div", QNAN, 0) == (QNAN, ())
    assert _one("div", ONE, PINF) == (0, ())
    # with DAZ a subnormal divisor is a zero; a subnormal dividend makes 0/0
    assert _one("div", ONE, 0x0001, denormals_are_zero=True) == (PINF, ("divide_by_zero",))
    assert _one("div", 0x0001, 0, denormals_are_zero=True) == (QNAN, ("invalid",))
    # no other op divides by zero: mul/add/sqrt/fma with zeros raise nothing
    for op in ("add", "sub", "mul", "fma", "sqrt"):
        assert _one(op, *([0] * ARITY[op]))[1] == ()


def test_division_by_zero_in_formats_without_infinity():
    """The exact result is infinite; formats without infinity deliver it as encode delivers
    an infinity: e4m3 its NaN (sign kept) with invalid, or max_finite when saturating;
    FP4 always +-max_finite (overflow, inexact).  divide_by_zero is raised in all."""
    assert _one("div", 0x38, 0x00, fmt=sf.fp8_e4m3) == (0x7F, ("invalid", "divide_by_zero"))
    assert _one("div", 0x38, 0x80, fmt=sf.fp8_e4m3) == (0xFF, ("invalid", "divide_by_zero"))
    assert _one("div", 0x38, 0x00, fmt=sf.fp8_e4m3, saturate=True) == (
        0x7E, ("divide_by_zero", "overflow", "inexact"))
    assert _one("div", 0x40, 0x00, fmt=sf.fp8_e5m2fnuz) == (0x80, ("invalid", "divide_by_zero"))
    assert _one("div", 0x2, 0x8, fmt=sf.fp4_e2m1) == (0xF, ("divide_by_zero", "overflow", "inexact"))


def test_exact_zero_signs():
    """IEEE 754-2019 6.3: x + (-x) = +0 except -0 under downward; (-0) + (-0) = -0;
    (+0) + (-0) = +0 (-0 downward); sqrt(-0) = -0; products/quotients take the xor."""
    x = 0x4248  # 3.140625
    for mode in MODES:
        neg_zero = mode == "downward"
        assert _one("add", x, x | NEG, mode=mode) == (NEG if neg_zero else 0, ()), mode
        assert _one("sub", x, x, mode=mode) == (NEG if neg_zero else 0, ()), mode
        assert _one("add", NEG, NEG, mode=mode) == (NEG, ()), mode
        assert _one("sub", NEG, 0, mode=mode) == (NEG, ()), mode
        assert _one("add", 0, NEG, mode=mode) == (NEG if neg_zero else 0, ()), mode
        assert _one("add", 0, 0, mode=mode) == (0, ()), mode
        assert _one("sqrt", NEG, mode=mode) == (NEG, ()), mode
        assert _one("mul", NEG, x, mode=mode) == (NEG, ()), mode
        assert _one("div", 0, x | NEG, mode=mode) == (NEG, ()), mode
        # fma: a*b exactly cancelled by c; and a zero product plus a zero addend
        assert _one("fma", ONE, x, x | NEG, mode=mode) == (NEG if neg_zero else 0, ()), mode
        assert _one("fma", NEG, ONE, NEG, mode=mode) == (NEG, ()), mode
        assert _one("fma", NEG, ONE, 0, mode=mode) == (NEG if neg_zero else 0, ()), mode
    # fnuz has no -0: every zero result is +0
    assert _one("sub", 0x38, 0x38, fmt=sf.fp8_e4m3fnuz, mode="downward") == (0, ())


def test_nonzero_results_that_round_to_zero_keep_their_sign():
    tiny = 0x0001  # 2**-24;  2**-24 * 2**-24 rounds to zero in every mode but the outward one
    for mode, want in [("nearest_even", NEG), ("toward_zero", NEG), ("upward", NEG),
                       ("downward", 0x8001), ("odd", 0x8001), ("nearest_away", NEG)]:
        assert _one("mul", tiny | NEG, tiny, mode=mode) == (want, ("underflow", "inexact")), mode
    assert _one("mul", tiny, tiny, mode="toward_zero") == (0, ("underflow", "inexact"))
    assert _one("div", tiny | NEG, 0x7800, mode="nearest_even") == (NEG, ("underflow", "inexact"))
    # flush-to-zero keeps the sign too
    assert _one("mul", 0x0400 | NEG, 0x3800, subnormals=False) == (NEG, ("underflow", "inexact"))


def test_overflow_by_mode_and_saturation():
    """max + max in each mode (IEEE 754-2019 7.4), and saturate=True."""
    positive = {"nearest_even": PINF, "nearest_away": PINF, "toward_zero": MAX, "upward": PINF,
                "downward": MAX, "odd": MAX}
    negative = {"nearest_even": NINF, "nearest_away": NINF, "toward_zero": MAX | NEG,
                "upward": MAX | NEG, "downward": NINF, "odd": MAX | NEG}
    for mode in MODES:
        assert _one("add", MAX, MAX, mode=mode) == (positive[mode], ("overflow", "inexact")), mode
        assert _one("add", MAX | NEG, MAX | NEG, mode=mode) == (negative[mode], ("overflow", "inexact")), mode
        assert _one("add", MAX, MAX, mode=mode, saturate=True) == (MAX, ("overflow", "inexact"))
    # the nearest-mode threshold: max + ulp/2 (= 65520) overflows, anything below does not
    assert _one("add", MAX, 0x4C00) == (PINF, ("overflow", "inexact"))  # 65504 + 16 (tie)
    assert _one("add", MAX, 0x4BFF) == (MAX, ("inexact",))              # 65504 + 15.99
    # infinities are exact, not overflow, whatever saturate says
    assert _one("add", PINF, ONE, saturate=True) == (PINF, ())


# =====================================================================================
# 5. the API: broadcasting, scalars, errors, inputs untouched, formats, stochastic
# =====================================================================================
def test_broadcasting_matches_elementwise():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 1 << 16, (3, 1), dtype=np.uint16)
    b = rng.integers(0, 1 << 16, (4,), dtype=np.uint16)
    c = rng.integers(0, 1 << 16, (1, 4), dtype=np.uint16)
    for op in ("add", "sub", "mul", "div"):
        out, flags = FUNCS[op](a, b, sf.fp16, "upward", return_flags=True)
        assert out.shape == (3, 4) and out.dtype == np.uint16 and flags.shape == (3, 4)
        for i in range(3):
            for j in range(4):
                assert out[i, j] == FUNCS[op](int(a[i, 0]), int(b[j]), sf.fp16, "upward")
        scalar_left = FUNCS[op](int(a[0, 0]), b, sf.fp16)
        assert scalar_left.shape == (4,)
        assert np.array_equal(scalar_left, FUNCS[op](np.full(4, a[0, 0]), b, sf.fp16))
    out = sf.fma(a, b, c, sf.fp16)
    assert out.shape == (3, 4)
    assert out[2, 1] == sf.fma(int(a[2, 0]), int(b[1]), int(c[0, 1]), sf.fp16)
    assert sf.sqrt(a, sf.fp16).shape == (3, 1)


def test_scalars_in_scalars_out():
    bits, flags = sf.add(0x3C00, 0x3C00, "fp16", return_flags=True)
    assert isinstance(bits, np.uint16) and int(bits) == 0x4000
    assert all(np.ndim(m) == 0 for _, m in flags) and not flags.any()
    assert isinstance(sf.mul(np.uint8(0x38), 0x38, "e4m3"), np.uint8)
    assert isinstance(sf.sqrt(0x3F800000, sf.fp32), np.uint32)
    assert sf.add([0x3C00, 0x4000], 0x3C00, "half").tolist() == [0x4000, 0x4200]


@pytest.mark.parametrize("op", OPS)
def test_errors(op):
    n = ARITY[op]
    f = FUNCS[op]
    ok = [np.uint16(0x3C00)] * n
    last = "abc"[n - 1]
    with pytest.raises(TypeError, match=r"^a must have an integer dtype.*float64"):
        f(*([np.array([1.0, 2.0])] + ok[1:]), sf.fp16)
    with pytest.raises(TypeError, match=rf"^{last} must"):
        f(*(ok[:-1] + [1.5]), sf.fp16)
    with pytest.raises(ValueError, match=rf"^{last} holds a value that does not fit"):
        f(*(ok[:-1] + [np.array([0x1_0000], dtype=np.uint32)]), sf.fp16)
    with pytest.raises(ValueError, match="does not fit"):
        f(*([70000] + ok[1:]), sf.fp16)
    with pytest.raises(ValueError, match="does not fit"):
        f(*([np.array([64], dtype=np.uint8)] + [np.uint8(0)] * (n - 1)), sf.fp6_e3m2)
    with pytest.raises(ValueError, match="rounding"):
        f(*ok, sf.fp16, "nearest")
    with pytest.raises(ValueError, match="tininess"):
        f(*ok, sf.fp16, tininess="sometimes")
    with pytest.raises(TypeError, match="subnormals"):
        f(*ok, sf.fp16, subnormals="no")
    with pytest.raises(TypeError, match="denormals_are_zero"):
        f(*ok, sf.fp16, denormals_are_zero=1)
    with pytest.raises(TypeError, match="fmt"):
        f(*ok, 16)
    with pytest.raises(ValueError, match="not a known format"):
        f(*ok, "fp12")
    if n >= 2:
        shapes = [(3,), (4,)] + [(1,)] * (n - 2)
        arrays = [np.zeros(s, dtype=np.uint16) for s in shapes]
        with pytest.raises(ValueError, match=r"could not be broadcast") as info:
            f(*arrays, sf.fp16)
        assert "a(3,)" in str(info.value) and "b(4,)" in str(info.value)
        if n == 3:
            with pytest.raises(ValueError, match=r"c\(5,\)"):
                f(np.zeros(3, np.uint16), np.zeros(1, np.uint16), np.zeros(5, np.uint16), sf.fp16)


@pytest.mark.parametrize("op", OPS)
def test_inputs_are_not_modified(op):
    rng = np.random.default_rng(11)
    base = rng.integers(0, 1 << 16, (3, 2, 50), dtype=np.uint16)
    # a contiguous array, a reversed (negative-stride) view and a non-native byte order
    arrays = [base[0].copy(), base[1][:, ::-1], base[2].astype(">u2")][: ARITY[op]]
    before = [a.copy() for a in arrays]
    for kw in ({}, {"denormals_are_zero": True}, {"subnormals": False}):
        FUNCS[op](*arrays, sf.fp16, "upward", return_flags=True, **kw)
        FUNCS[op](*arrays, sf.fp16, "stochastic", rng=1, **kw)
    for a, b in zip(arrays, before):
        assert np.array_equal(a, b) and a.dtype == b.dtype


@pytest.mark.parametrize("fmt", [sf.fp16, sf.bf16, sf.fp8_e4m3, sf.fp8_e5m2fnuz, sf.fp4_e2m1], ids=fmt_id)
@pytest.mark.parametrize("op", OPS)
def test_stochastic_gives_a_directed_neighbour(op, fmt):
    """Stochastic results are always one of the two directed roundings (equal to both when
    the result is exact), and a seed makes them reproducible."""
    rng = np.random.default_rng(5)
    operands = [rng.integers(0, 1 << fmt.bits, 20000, dtype=np.uint64).astype(fmt.storage_dtype)
                for _ in range(ARITY[op])]
    f = FUNCS[op]
    down = f(*operands, fmt, "downward")
    up = f(*operands, fmt, "upward")
    got = f(*operands, fmt, "stochastic", rng=123)
    assert np.array_equal(got, f(*operands, fmt, "stochastic", rng=123))
    assert np.array_equal(got, f(*operands, fmt, "stochastic", rng=np.random.default_rng(123)))
    ok = (got == down) | (got == up)  # NaN results are the same pattern in every mode
    assert ok.all(), [hex(int(o[np.argmin(ok)])) for o in operands]
    # both neighbours do occur where they differ
    differ = down != up
    if differ.sum() > 200:
        assert 0.05 < np.mean(got[differ] == up[differ]) < 0.95


@pytest.mark.parametrize("op", OPS)
def test_stochastic_with_an_infinite_result_beside_an_inexact_one(op):
    """One block holding an exactly infinite result (inf operand or x/0) and an inexact one:
    stochastic rounding must round the one and pass the other through."""
    inf, one, three, tiny = 0x7C00, 0x3C00, 0x4200, 0x0001
    lanes = {"add": [(one, one), (inf, one)], "sub": [(one, one), (inf, one)],
             "mul": [(0x3C01, 0x3C01), (inf, one)], "div": [(one, three), (one, 0)],
             "sqrt": [(0x4000,), (inf,)], "fma": [(0x3C01, 0x3C01, tiny), (inf, one, one)]}[op]
    if op in ("add", "sub"):
        lanes[0] = (one, tiny)
    operands = [np.array(col, dtype=np.uint16) for col in zip(*lanes)]
    got = FUNCS[op](*operands, sf.fp16, "stochastic", rng=1)
    down = FUNCS[op](*operands, sf.fp16, "downward")
    up = FUNCS[op](*operands, sf.fp16, "upward")
    assert got[1] == up[1] and got[0] in (down[0], up[0])


def test_stochastic_frequency():
    """fp16 1 + 2**-12: a quarter of an ulp above 1, so up with probability 1/4 (fixed seed;
    the bound is 6 standard deviations)."""
    n = 200_000
    ones = np.full(n, FP16_ONE, dtype=np.uint16)
    got = sf.add(ones, FP16_2M12, sf.fp16, "stochastic", rng=2024)
    assert set(np.unique(got).tolist()) == {0x3C00, 0x3C01}
    share = np.mean(got == 0x3C01)
    assert abs(share - 0.25) < 6 * math.sqrt(0.25 * 0.75 / n), share
    # bf16 1/3: up with probability (1/3 - 0.33203125) / 2**-9 = 2/3
    third = sf.div(np.full(n, 0x3F80, dtype=np.uint16), 0x4040, sf.bf16, "stochastic", rng=7)
    share = np.mean(third == 0x3EAB)
    assert set(np.unique(third).tolist()) == {0x3EAA, 0x3EAB}
    assert abs(share - 2 / 3) < 6 * math.sqrt(2 / 9 / n), share
