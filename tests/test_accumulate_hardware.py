"""The tensor-core accumulators of ``softfloat.accumulate`` (presets and
:class:`~softfloat.accumulate.FusedAccumulator`): against the exact reference, and against
the published measurements.

* :func:`test_presets_match_reference` and friends: random fp16/bf16/tf32/FP8 data through
  the presets v100, a100, ada, h100 and b200, fp32 and fp16 outputs, K spanning several
  blocks, with c, and with promotion every ``block`` terms, compared bit for bit (flags
  and swamped counts too) with ``tests/accumulate_oracle.py``'s model of steps 1-6.
* the probes: each reproduces a published test of Fasi, Higham, Mikaitis and Pranesh,
  "Numerical behavior of NVIDIA tensor cores" (PeerJ CS 2021; test-suite
  github.com/north-numerical-computing/tensor-cores-numerical-behavior, files
  tc_test_numerics-V100.cu and tc_test_numerics-T4-A100-binary16.cu), or a probe of the
  same kind for the later chips (Khattak and Mikaitis 2025: H100/B200 keep F = 25 bits,
  blocks of 16; Xie et al. 2025, MMA-Sim: the FP8 paths).  Expected values are literals
  with their derivation in a comment; the reference is checked to agree with each of them
  too.
* unsupported combinations raise ValueError naming what is supported.
"""

from __future__ import annotations

from fractions import Fraction
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import softfloat as sf
from softfloat.accumulate import FusedAccumulator, hardware_model
from tests import accumulate_oracle as ora
from tests.accumulate_checks import check, pat, pats, random_patterns

F16, BF16, TF32, F32 = sf.fp16, sf.bf16, sf.tf32, sf.fp32
E4M3, E5M2 = sf.fp8_e4m3, sf.fp8_e5m2
two = Fraction(2)

#: (chip, input format): every supported family of the five presets under test
SUPPORTED = [("v100", F16),
             ("a100", F16), ("a100", BF16), ("a100", TF32),
             ("ada", F16), ("ada", BF16), ("ada", TF32), ("ada", E4M3), ("ada", E5M2),
             ("h100", F16), ("h100", BF16), ("h100", TF32), ("h100", E4M3), ("h100", E5M2),
             ("b200", F16), ("b200", BF16), ("b200", TF32), ("b200", E4M3), ("b200", E5M2)]


def _rng(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _data(rng, fmt, shape, spread=None):
    """Products spread over many alignment positions: exponents within about F bits."""
    spread = {F16: 18, BF16: 30, TF32: 30, E4M3: 9, E5M2: 14}[fmt] if spread is None else spread
    return random_patterns(rng, fmt, shape, center=int(rng.integers(-2, 3)), spread=spread,
                           zeros=0.05, mirror=0.15)


# =====================================================================================
# (a) the presets against the reference on random data
# =====================================================================================
@pytest.mark.parametrize("out", ("fp32", "fp16"))
@pytest.mark.parametrize("chip,fmt", SUPPORTED, ids=[f"{c}-{f}" for c, f in SUPPORTED])
def test_presets_match_reference(chip, fmt, out):
    """matmul through the preset, K = 2N + 3 (three blocks, the last one short), with and
    without c; out_format fp16 selects the chip's fp16-output mode."""
    N = ora.preset(chip, fmt, sf.as_format(out)).terms
    K = 2 * N + 3
    rng = _rng(chip, str(fmt), out)
    a = _data(rng, fmt, (3, K))
    b = _data(rng, fmt, (K, 2))
    O = sf.as_format(out)
    c = random_patterns(rng, O, (3, 2), center=int(rng.integers(-3, 4)), spread=12)
    check("matmul", a, b, fmt, accumulator=chip, out_format=out)
    check("matmul", a, b, fmt, accumulator=chip, out_format=out, c=c)


@pytest.mark.parametrize("chip,fmt", SUPPORTED, ids=[f"{c}-{f}" for c, f in SUPPORTED])
def test_presets_promotion(chip, fmt):
    """block=8 (DeepSeek-style promotion every 128 terms, scaled down): runs of 8 terms
    through the fused adder from +0, the run results added in IEEE fp32; K = 20."""
    rng = _rng("promotion", chip, str(fmt))
    a = _data(rng, fmt, (2, 20))
    b = _data(rng, fmt, (2, 20))
    check("vecdot", a, b, fmt, accumulator=chip, block=8)
    check("vecdot", a, b, fmt, accumulator=chip, block=8, c=pats([1, -2**-10], F32))
    check("vecdot", a, b, fmt, accumulator=chip, block=8, rounding="upward")
    check("vecdot", a, b, fmt, accumulator=chip, block=8, out_format="fp16",
          c=pats([0.5, -3], F16))


@settings(max_examples=settings.default.max_examples // 2)
@given(case=st.sampled_from(SUPPORTED), out=st.sampled_from(["fp32", "fp16"]),
       K=st.integers(1, 70), block=st.sampled_from([None, None, 4, 8, 16]),
       with_c=st.booleans(), seed=st.integers(0, 2**32 - 1),
       spread=st.integers(0, 30))
def test_random_hardware(case, out, K, block, with_c, seed, spread):
    """Random chip, input format, output mode, K (1 to 70: up to three 32-term blocks),
    promotion and c."""
    chip, fmt = case
    rng = np.random.default_rng(seed)
    spread = min(spread, {F16: 22, BF16: 40, TF32: 40, E4M3: 10, E5M2: 16}[fmt])
    a = random_patterns(rng, fmt, (2, K), center=int(rng.integers(-2, 3)), spread=spread)
    b = random_patterns(rng, fmt, (K,), center=int(rng.integers(-2, 3)), spread=spread)
    kw = {"accumulator": chip, "out_format": out}
    if block is not None:
        kw["block"] = block
    if with_c:
        kw["c"] = random_patterns(rng, sf.as_format(out), (2,), spread=spread + 4)
    check("vecdot", a, b, fmt, **kw)


@pytest.mark.parametrize("chip", ("v100", "a2", "l40s", "h200", "b200"))
def test_presets_sum_and_other_outputs(chip):
    """sum through a preset (terms x * 1), the aliases, and an out_format reached by one
    final rounding (bf16) in several modes."""
    rng = _rng("sum", chip)
    x = _data(rng, F16, (3, 21))
    check("sum", x, F16, axis=1, accumulator=chip)
    check("sum", x, F16, axis=1, accumulator=chip, c=pats([1, 2**-30, -7], F32))
    for mode in ("nearest_even", "toward_zero", "upward"):
        check("vecdot", x, x[::-1], F16, accumulator=chip, out_format="bf16", rounding=mode)


@pytest.mark.parametrize("acc", [
    FusedAccumulator(terms=3, fraction_bits=6, output="fp16", output_rounding="nearest_even"),
    FusedAccumulator(terms=5, fraction_bits=30, output="fp32", output_rounding="upward"),
    FusedAccumulator(terms=2, fraction_bits=12, output="bf16", output_rounding="toward_zero",
                     output_mantissa_bits=5),
    FusedAccumulator(terms=4, fraction_bits=9, output="fp32", output_rounding="downward",
                     output_mantissa_bits=10),
    FusedAccumulator(terms=7, fraction_bits=4, output="fp16", output_rounding="odd"),
    FusedAccumulator(terms=8, fraction_bits=25, output="fp32", fp8="via_fp16"),
], ids=repr)
def test_custom_fused_accumulators(acc):
    """Made-up adders with narrow alignment (truncation everywhere), odd output modes and
    kept fraction bits: the model's steps, not just the published parameters."""
    rng = _rng(repr(acc))
    fmt = E4M3 if acc.fp8 == "via_fp16" else F16
    a = _data(rng, fmt, (4, 17), spread=12)
    b = _data(rng, fmt, (4, 17), spread=12)
    c = random_patterns(rng, acc.output, (4,), spread=8)
    check("vecdot", a, b, fmt, accumulator=acc)
    check("vecdot", a, b, fmt, accumulator=acc, c=c)
    check("vecdot", a, b, fmt, accumulator=acc, block=8)
    check("matmul", a[:2, :9], b[:3, :9].T, fmt, accumulator=acc)


def test_specials_through_presets():
    """inf, NaN, signalling NaN, 0 * inf and inf - inf go through the fused adder as
    IEEE sums do: canonical NaN, invalid where the spec says."""
    a = pats([[1, "inf", 2, 0], [1, "inf", 0, 1], ["nan", 1, 1, 1], [1, "snan", 1, 1],
              [1, "inf", "-inf", 1], [65504, 65504, 65504, 65504]], F16)
    b = pats([[1, 1, 1, 1], [1, 0, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1],
              [1, 1, 1, 1], [65504, 65504, 65504, 65504]], F16)
    for chip in ("v100", "a100", "h100"):
        for out in ("fp32", "fp16"):
            check("vecdot", a, b, F16, accumulator=chip, out_format=out)
            check("vecdot", a, b, F16, accumulator=chip, out_format=out,
                  c=pats(["-inf", 0, 1, 1, 1, -65504], sf.as_format(out)))


# =====================================================================================
# (b) the published probes
# =====================================================================================
def _value(bits, fmt) -> Fraction:
    x = ora.decode(int(bits), fmt)
    assert x.kind == "num", x
    return x.value


def run_hw(chip, a, b, c=None, *, fmt=F16, out="fp32", **kw):
    """The exact value softfloat's preset gives for the dot product of the values a, b
    (and c, a value of out), after checking that the reference gives the same."""
    O = sf.as_format(out)
    A, B = pats(a, fmt), pats(b, fmt)
    cb = None if c is None else np.asarray(pat(c, O), dtype=O.storage_dtype)
    got = sf.vecdot(A, B, fmt, accumulator=chip, c=cb, out_format=out, **kw)
    want, _ = ora.ref_vecdot(A, B, fmt, accumulator=chip, c=cb, out_format=out, **kw)
    value = _value(got, O)
    assert value == _value(want, O), f"the reference disagrees: {float(_value(want, O))!r}"
    return value


def test_products_are_exact():
    """Fasi et al. B, "Products are computed exactly": b1 = 1 - 2**-11 (fp16), b1 * b1 =
    1 - 2**-10 + 2**-22 is no fp16 value but exact in fp32; four of them give
    4 - 2**-8 + 2**-20 (fp32 ulp at 2 is 2**-22: exact).  fp16 mode:
    b1 * b1 + b1 * 2**-11 = 1 - 2**-10 + 2**-22 + 2**-11 - 2**-22 = 1 - 2**-11, an fp16
    value, only if both products were exact."""
    b1 = 1 - 2**-11
    for chip in ("v100", "t4", "a100", "ada", "h100", "b200"):
        assert run_hw(chip, [b1], [b1]) == 1 - two**-10 + two**-22
        assert run_hw(chip, [b1] * 4, [b1] * 4) == 4 * (1 - two**-10 + two**-22)
        assert run_hw(chip, [b1, b1], [b1, 2**-11], out="fp16") == 1 - two**-11


def test_subnormal_inputs_and_outputs():
    """Fasi et al. A: fp16 subnormal inputs are kept (2**-24 * 4 = 2**-22, both output
    modes); an fp32 subnormal c passes through (2**-149: c's exponent clamps at -126, and
    2**-149 is a multiple of 2**(-126 - F) for F >= 23); subnormal results are produced
    (2**-14 * 0.5 = 2**-15; 2**-14 * 1 - 2**-15 = 2**-15)."""
    for chip in ("v100", "t4", "a100", "h100", "b200"):
        for out in ("fp32", "fp16"):
            assert run_hw(chip, [2**-24], [4], out=out) == two**-22
            assert run_hw(chip, [2**-14], [0.5], out=out) == two**-15
            assert run_hw(chip, [2**-14], [1], -(2**-15), out=out) == two**-15
        assert run_hw(chip, [0], [0], 2**-149) == two**-149


def test_accumulation_keeps_f_bits_below_the_largest():
    """Fasi et al. B "Products are accumulated in binary32" (T4/A100 version): 1 + four
    products 0.5 * 2**-24 = 2**-25.  M = 0 (c = 1); each product is truncated to a
    multiple of 2**-F: F = 23 (V100) and F = 24 (T4, A100) drop all four -> 1; F = 25
    (H100, B200; Khattak and Mikaitis 2025) keeps them: 1 + 4 * 2**-25 = 1 + 2**-23.
    The V100 version (products 1 * 2**-24) gives 1 on V100."""
    for chip, want in (("v100", 1), ("t4", 1), ("a100", 1), ("ada", 1),
                       ("h100", 1 + two**-23), ("h200", 1 + two**-23), ("b200", 1 + two**-23)):
        assert run_hw(chip, [0.5] * 4, [2**-24] * 4, 1) == want, chip
    assert run_hw("v100", [1] * 4, [2**-24] * 4, 1) == 1


def test_sum_starts_from_the_largest_element():
    """Fasi et al. B "Sum starts from largest element": c = 2**-24 and four products of
    which one (at each position j) is 1 and the others tiny (V100: 1 * 2**-24; T4/A100:
    0.5 * 2**-24).  Aligned to the largest (M = 0), the tiny ones and c vanish below
    2**-F or survive only under the truncated output: the result is 1 wherever the 1 is."""
    for j in range(4):
        b = [2**-24] * 4
        b[j] = 1
        assert run_hw("v100", [1] * 4, b, 2**-24) == 1
        a = [0.5] * 4
        a[j] = 1
        b[j] = 1
        # F = 24: c = 2**-24 is kept, 1 + 2**-24 truncates to 1 in fp32
        assert run_hw("a100", a, b, 2**-24) == 1
        assert run_hw("t4", a, b, 2**-24) == 1


def test_truncated_output():
    """Fasi et al. C "Round-down for positive values" / "Round-up for negative values":
    2 + (2**-23 + 2**-24) gives 2 and its negative -2 (M = 1: F = 23 truncates the small
    product away; F = 24 keeps 2**-23, F = 25 all of 3 * 2**-24, and the fp32 output,
    ulp 2**-22 at 2, truncates toward zero).  A sharper probe of the output truncation:
    1 + 3 * 2**-24 (M = 0, kept whole for F >= 24) is 1.5 ulps of fp32 above 1: toward
    zero gives 1 + 2**-23 (nearest even would give 1 + 2**-22); negated, -(1 + 2**-23)."""
    for chip in ("v100", "t4", "a100", "h100", "b200"):
        assert run_hw(chip, [1] * 4, [2, 2**-23 + 2**-24, 0, 0]) == 2
        assert run_hw(chip, [1] * 4, [-2, -(2**-23 + 2**-24), 0, 0]) == -2
    for chip in ("a100", "h100", "b200"):
        assert run_hw(chip, [1, 1], [1, 3 * 2**-24]) == 1 + two**-23
        assert run_hw(chip, [1, 1], [-1, -3 * 2**-24]) == -(1 + two**-23)
    # V100 (F = 23): 3 * 2**-24 truncated to 2**-23 in the alignment already
    assert run_hw("v100", [1, 1], [1, 3 * 2**-24]) == 1 + two**-23


def test_no_normalisation_between_additions():
    """Fasi et al. D2 "Normalization in addition" and D5 "Monotonicity": c = 1 - 2**-24
    plus four products 1 * 2**-24.  M = -1 (c), all terms are multiples of 2**(-1 - F),
    the exact sum 1 + 3 * 2**-24 is normalised once and truncated: 1 + 2**-23.  Chained
    IEEE fp32 additions (nearest even) would stay at 1 (1 - 2**-24 + 2**-24 = 1, then each
    1 + 2**-24 is a tie to even).  With c = 1 instead (M = 0) the products vanish for
    F = 23: a larger c gives a smaller result (1 < 1 + 2**-23)."""
    for chip in ("v100", "t4", "a100", "h100", "b200"):
        assert run_hw(chip, [1] * 4, [2**-24] * 4, 1 - 2**-24) == 1 + two**-23
    assert run_hw("v100", [1] * 4, [2**-24] * 4, 1) == 1
    # the IEEE fp32 chain, from the reference (and softfloat) -- not a hardware fact
    A, B = pats([1] * 4, F16), pats([2**-24] * 4, F16)
    got = sf.vecdot(A, B, F16, accumulator="fp32", c=np.uint32(pat(1 - 2**-24, F32)))
    assert _value(got, F32) == 1
    # T4/A100 version of D5: products 0.5 * 2**-24 (three) and 0.5 * (2**-23 + 2**-24):
    # c = 1 - 2**-24: M = -1, all kept (F = 24: multiples of 2**-25): 1 + 2**-23;
    # c = 1: M = 0, 2**-25 -> 0 and 3 * 2**-25 -> 2**-24: 1 + 2**-24 -> truncated 1
    a, b = [0.5] * 4, [2**-24] * 3 + [2**-23 + 2**-24]
    assert run_hw("a100", a, b, 1 - 2**-24) == 1 + two**-23
    assert run_hw("a100", a, b, 1) == 1


def test_carry_out_bits():
    """Fasi et al. D4 "Extra bits for carry out" (V100): three products 1 * 1 and one
    1 * 2**-23 (at each position) with c = 1 + 2**-22 + 2**-23: exactly 4 + 2**-21; the
    third carry bit: 1 + 1.5 + 1.75 + 1.875 + c = 1.875 is exactly 8; four products 1 with
    c = 1 + 2**-22 + 2**-23: 5 + 3 * 2**-23, truncated (ulp 2**-21 at 4) to 5, and
    negated -5."""
    for chip in ("v100", "a100", "h100"):
        for i in range(4):
            b = [1] * 4
            b[i] = 2**-23
            assert run_hw(chip, [1] * 4, b, 1 + 2**-22 + 2**-23) == 4 + two**-21
        assert run_hw(chip, [1] * 4, [1, 1.5, 1.75, 1.875], 1.875) == 8
        assert run_hw(chip, [1] * 4, [1] * 4, 1 + 2**-22 + 2**-23) == 5
        assert run_hw(chip, [1] * 4, [-1] * 4, -1 - 2**-22 - 2**-23) == -5


def test_alignment_bits_tell_the_chips_apart():
    """Fasi et al. D1 "Extra bits in the significand alignment": 1 * 1 + c, c = -(1 -
    2**-24) (M = 0): F = 23 truncates c to -(1 - 2**-23): 2**-23 (V100); F >= 24 keeps it:
    2**-24 (T4, A100, H100).  D3 "Normalization in subtraction": 1 * 1 + 1 * -2**-24 + c,
    c = -1 + 2**-24: V100 drops both small parts toward zero (the product to -0, c to
    -(1 - 2**-23)): 2**-23; with F >= 24 everything cancels: 0.  A probe one bit lower
    separates F = 24 from F = 25: c = -(0.5 - 2**-25): F = 23 keeps -(0.5 - 2**-23):
    0.5 + 2**-23; F = 24 keeps -(0.5 - 2**-24): 0.5 + 2**-24; F = 25 keeps c whole:
    0.5 + 2**-25, which the fp32 output (ulp 2**-24 at 0.5) truncates to 0.5."""
    want = {"v100": (two**-23, two**-23, Fraction(1, 2) + two**-23),
            "t4": (two**-24, 0, Fraction(1, 2) + two**-24),
            "a100": (two**-24, 0, Fraction(1, 2) + two**-24),
            "h100": (two**-24, 0, Fraction(1, 2)),
            "b200": (two**-24, 0, Fraction(1, 2))}
    for chip, (d1, d3, low) in want.items():
        assert run_hw(chip, [1], [1], -(1 - 2**-24)) == d1, chip
        assert run_hw(chip, [1, 1], [1, -2**-24], -1 + 2**-24) == d3, chip
        assert run_hw(chip, [1], [1], -(0.5 - 2**-25)) == low, chip


@pytest.mark.parametrize("chip,fmt,N,F", [
    ("v100", F16, 4, 23), ("t4", F16, 8, 24), ("a100", F16, 8, 24), ("ada", F16, 8, 24),
    ("h100", F16, 16, 25), ("b200", BF16, 16, 25), ("a100", TF32, 4, 24), ("h100", TF32, 8, 25)])
def test_block_size_probe(chip, fmt, N, F):
    """The block size N: K = 32 products, 31 small ones s = 1 * 2**-24 and a large one
    L = 2**(F - 23) at the end.  In L's block M = F - 23, so terms are truncated to
    multiples of 2**-23 and the N - 1 small products there vanish; the 32 - N in earlier
    blocks were added exactly (their block sums are tiny) and reach L's block as c =
    (32 - N) * 2**-24, a multiple of 2**-23 (N even): the result is exactly
    L + (32 - N) * 2**-24 (fp32 ulp at L is 2**(F - 46), which divides it) -- 28, 24 or
    16 small products survive for N = 4, 8, 16."""
    L = 2 ** (F - 23)
    a = [1] * 32
    b = [2**-24] * 31 + [L]
    assert run_hw(chip, a, b, fmt=fmt) == L + (32 - N) * two**-24
    # (N, F) as the preset states them
    model = hardware_model(chip, fmt)
    assert (model.terms, model.fraction_bits) == (N, F)


def test_fp16_output_rounds_to_nearest_even():
    """Fasi et al. C "Accum. is rounded to nearest (binary16 mode)": 2**-24 * 0.5 +
    2**-24 * 0.25 = 0.75 * 2**-24 rounds to 2**-24 (truncation would give 0).  Ties to
    even: 1 + 2**-11 -> 1; 1 + 2**-10 + 2**-11 -> 1 + 2**-9; negative -1 - 2**-11 -> -1;
    0.75 ulp above: 1 + 3 * 2**-12 -> 1 + 2**-10."""
    for chip in ("v100", "t4", "a100", "h100", "b200"):
        assert run_hw(chip, [2**-24, 2**-24], [0.5, 0.25], out="fp16") == two**-24
        assert run_hw(chip, [1, 1], [1, 2**-11], out="fp16") == 1
        assert run_hw(chip, [1, 1, 1], [1, 2**-10, 2**-11], out="fp16") == 1 + two**-9
        assert run_hw(chip, [1, 1], [-1, -2**-11], out="fp16") == -1
        assert run_hw(chip, [1], [1], 3 * 2**-12, out="fp16") == 1 + two**-10


def test_fp8_paths():
    """FP8 (E4M3) on the three paths (Xie et al. 2025):

    * native, F = 13, fp32 output truncated to 13 fraction bits (Ada; H100 with an fp32
      output): 1 * 1 + 2**-7 * 2**-7 -- the small product is 2**-14, below 2**-13: 1.
      Via fp16 (B200: fp16's F = 25, full fp32 output): 1 + 2**-14.
    * the 13-bit output: 1.875 * 1.875 + 2**-6 * 2**-7 = 3.515625 + 2**-13, kept by the
      F = 13 alignment (M = 0) but cut by the 13-bit output (ulp 2**-12 at 2): 3.515625;
      via fp16: 3.515625 + 2**-13 exactly.
    * c added last by an IEEE addition rounded to nearest even on the via path:
      1 * 1 with c = 3 * 2**-25: native truncates c to 0 (M = 0, F = 13): 1; via fp16:
      1 + 3 * 2**-25 rounds to 1 + 2**-23 (0.75 ulp).  c = -2**-20: native 1 (c truncated
      toward zero), via 1 - 2**-20 (exact).
    * fp16 outputs: products 1, 1.5 * 2**-12 (k = 1, first half-step) and 1.5 * 2**-12
      (k = 2, second half-step).  Native (Ada, F = 13): one block, 1 + 3 * 2**-12 rounds
      to nearest fp16: 1 + 2**-10.  Via fp16 (H100 and B200 with fp16 outputs): each
      half-step rounds 1 + 1.5 * 2**-12 (3/8 ulp) back to 1: 1.
    """
    f8 = dict(fmt=E4M3)
    assert run_hw("h100", [1, 2**-7], [1, 2**-7], **f8) == 1
    assert run_hw("ada", [1, 2**-7], [1, 2**-7], **f8) == 1
    assert run_hw("b200", [1, 2**-7], [1, 2**-7], **f8) == 1 + two**-14
    assert run_hw("h100", [1.875, 2**-6], [1.875, 2**-7], **f8) == Fraction(225, 64)
    assert run_hw("b200", [1.875, 2**-6], [1.875, 2**-7], **f8) == Fraction(225, 64) + two**-13
    assert run_hw("h100", [1], [1], 3 * 2**-25, **f8) == 1
    assert run_hw("b200", [1], [1], 3 * 2**-25, **f8) == 1 + two**-23
    assert run_hw("h100", [1], [1], -2**-20, **f8) == 1
    assert run_hw("b200", [1], [1], -2**-20, **f8) == 1 - two**-20
    a, b = [1, 2**-6, 1.5 * 2**-6], [1, 1.5 * 2**-6, 2**-6]
    assert run_hw("ada", a, b, out="fp16", **f8) == 1 + two**-10
    assert run_hw("h100", a, b, out="fp16", **f8) == 1
    assert run_hw("b200", a, b, out="fp16", **f8) == 1
    # fp32 outputs: no rounding bites, both paths give 1 + 3 * 2**-12
    for chip in ("ada", "h100", "b200"):
        assert run_hw(chip, a, b, **f8) == 1 + 3 * two**-12


def test_via_fp16_c_addition_counts_as_swamped():
    """The "via fp16" path adds c "by an ordinary IEEE addition": when that addition
    leaves c unchanged although the block's sum is non-zero, it is an addition in which a
    non-zero finite addend left a finite partial sum unchanged -- swamped (the package
    docstring's definition; the fused-adder clause covers the fused steps only).
    K = 33 (E5M2), a = b = [1, 0 x 31, 2**-6]: block 1 gives 1; block 2's fused steps give
    2**-12 exactly; 1 + 2**-12 rounds to nearest even in fp16 to 1: one swamped addition,
    inexact."""
    a = pats([1] + [0] * 31 + [2**-6], E5M2)
    for chip in ("h100", "b200"):
        bits, flags = sf.vecdot(a, a, E5M2, accumulator=chip, out_format="fp16", return_flags=True)
        assert int(bits) == pat(1, F16)
        assert bool(flags.inexact)
        assert int(flags.swamped) == 1, chip
        check("vecdot", a, a, E5M2, accumulator=chip, out_format="fp16")


def test_presets_as_published():
    """hardware_model restates the published (N, F), output mode and FP8 path of every
    chip and alias."""
    for chip in ("v100", "t4", "a100", "a2", "ada", "l40s", "h100", "h200", "b200"):
        base = ora.CHIP_ALIASES.get(chip, chip)
        for fmt in (F16, BF16, TF32, E4M3, E5M2):
            family = {F16: "fp16", BF16: "bf16", TF32: "tf32", E4M3: "fp8", E5M2: "fp8"}[fmt]
            if family not in ora.CHIPS[base]:
                continue
            for out in (None, F32, F16, BF16):
                want = ora.preset(chip, fmt, out)
                got = hardware_model(chip, fmt, out)
                assert ora.Fused.of(got) == want, (chip, fmt, out, got)


# =====================================================================================
# unsupported combinations
# =====================================================================================
@pytest.mark.parametrize("chip,fmt,names", [
    ("v100", TF32, ("fp16",)),
    ("v100", BF16, ("fp16",)),
    ("t4", BF16, ("fp16",)),
    ("a100", E4M3, ("fp16", "bf16", "tf32")),
    ("a2", E5M2, ("fp16", "bf16", "tf32")),
])
def test_unsupported_inputs(chip, fmt, names):
    a = np.zeros((2, 4), fmt.storage_dtype)
    for call in (lambda: sf.matmul(a, a.T, fmt, accumulator=chip),
                 lambda: sf.vecdot(a, a, fmt, accumulator=chip),
                 lambda: hardware_model(chip, fmt)):
        with pytest.raises(ValueError) as info:
            call()
        message = str(info.value)
        for name in names:
            assert name in message, message
        assert chip in message, message


@pytest.mark.parametrize("chip", ("v100", "h100"))
def test_pairwise_with_hardware_raises(chip):
    a = pats([1, 2, 3, 4], F16)
    with pytest.raises(ValueError, match="pairwise"):
        sf.vecdot(a, a, F16, accumulator=chip, order="pairwise")
    with pytest.raises(ValueError, match="pairwise"):
        sf.sum(a, F16, accumulator=chip, order="pairwise")
    with pytest.raises(ValueError, match="pairwise"):
        sf.vecdot(a, a, F16, accumulator=FusedAccumulator(4, 23), order="pairwise")
