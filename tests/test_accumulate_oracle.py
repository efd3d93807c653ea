"""``softfloat.sum``, ``vecdot`` and ``matmul`` with IEEE accumulators against the exact
reference ``tests/accumulate_oracle.py``, bit for bit, flag for flag and swamped count for
swamped count.

The reference shares no code with softfloat's kernels: it decodes the bit patterns from
their fields, follows the definitions of ``softfloat.accumulate``'s docstring as plain
loops over Fractions and rounds every intermediate with MPFR (``tests/oracle.py``).  Every
expected value below comes from it -- never from softfloat.

Coverage:

* hand-built edge data (:data:`EDGE_SUMS`, :data:`EDGE_DOTS`), each run in every order,
  every deterministic rounding mode, with and without block promotion, tininess before
  and after, and flush-to-zero: exact cancellation (the sign of zero, also under
  downward), overflow midway and back (fp16 60000 + 60000 - 60000), subnormal partial
  sums, the underflow boundary where tininess before/after differ, huge exponent gaps,
  ties at every step (fp16 2048 + 1 + 1 + ...), inf, quiet and signalling NaNs, FP8 E4M3
  overflow to its NaN, K = 1;
* the grid of options (:func:`test_option_grid`): accumulators fp32, fp16, bf16,
  fp8_e4m3 and the custom e6m9 x product None/fp16/bf16 x c x block None/2/3 x order x
  rounding mode, on one tricky data set per accumulator (a CI slice of it);
* empty sums (K = 0) and shapes: sum with axis None/int/tuple and keepdims, vecdot
  broadcasting, matmul with 1-d operands, batches and broadcast batches, c broadcasting;
* random cases drawn with hypothesis (deterministic in CI): random formats, options,
  shapes and data aimed at cancellation, ties, subnormals and overflow.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import softfloat as sf
from tests import accumulate_oracle as ora
from tests.accumulate_checks import check, pat, pats, random_patterns

E6M9 = sf.Format(6, 9)  # a custom 16-bit IEEE format: precision 10, exponent range [-30, 31]
MODES = ora.MODES
ORDERS = ("sequential", "reverse", "pairwise")
#: examples per random test: the profile's budget (ci: 200)
EXAMPLES = settings.default.max_examples


def case_slice(request, stride, n):
    """The indices of the CI slice: every stride-th case from a per-test offset."""
    offset = zlib.crc32(request.node.nodeid.encode()) % stride
    return range(offset, n, stride)


# =====================================================================================
# the reference itself, on hand-worked examples
# =====================================================================================
def test_reference_hand_worked():
    """The oracle reproduces sums done by hand before it judges softfloat."""
    fp16 = sf.fp16
    one = pat(1, fp16)
    # 4096 ones in fp16: every partial sum from 2048 on is 2048 + 1, a tie to even: stalls
    bits, fl = ora.ref_sum(np.full(4096, one, np.uint16), fp16)
    assert int(bits) == pat(2048, fp16) and int(fl["swamped"]) == 2048 and fl["inexact"]
    # pairwise: every level adds equal powers of two, exactly
    bits, fl = ora.ref_sum(np.full(4096, one, np.uint16), fp16, order="pairwise")
    assert int(bits) == pat(4096, fp16) and not fl["inexact"] and int(fl["swamped"]) == 0
    # 2048 + 1 + 1 + 1 ties away: 2049 -> 2050, 2051 -> 2052, 2053 -> 2054
    bits, _ = ora.ref_sum(pats([2048, 1, 1, 1], fp16), fp16, rounding="nearest_away")
    assert int(bits) == pat(2054, fp16)
    # 60000 + 60000 overflows to inf (nearest) and stays; toward zero: 65504 - 60000
    bits, fl = ora.ref_sum(pats([60000, 60000, -60000], fp16), fp16)
    assert int(bits) == pat("inf", fp16) and fl["overflow"]
    bits, _ = ora.ref_sum(pats([60000, 60000, -60000], fp16), fp16, rounding="toward_zero")
    assert int(bits) == pat(5504, fp16)
    # 1 + (-1) = +0, but -0 rounding downward
    assert int(ora.ref_sum(pats([1, -1], fp16), fp16)[0]) == 0
    assert int(ora.ref_sum(pats([1, -1], fp16), fp16, rounding="downward")[0]) == 0x8000
    # -0 + -0 = -0; +0 + -0 = +0
    assert int(ora.ref_sum(pats(["-0", "-0"], fp16), fp16)[0]) == 0x8000
    assert int(ora.ref_sum(pats([0, "-0"], fp16), fp16)[0]) == 0
    # fp32 accumulator: 2048 + 1 exact
    assert int(ora.ref_sum(pats([2048, 1], fp16), fp16, accumulator="fp32")[0]) == pat(2049, sf.fp32)
    # a product fused into the addition (fma): 1 + (1 + 2**-10)**2 in fp16 is
    # 2 + 2**-9 + 2**-20 -> 2 + 2**-9 (the 2**-20 decides nothing); rounded product first:
    # (1 + 2**-10)**2 -> 1 + 2**-9 (tie broken by 2**-20 upward), sum 2 + 2**-9 as well
    a = pats([1, 1 + 2**-10], fp16)
    bits, _ = ora.ref_vecdot(a, a, fp16, accumulator="fp16")
    assert int(bits) == pat(2 + 2**-9, fp16)


@pytest.mark.parametrize("dtype,fmt", [(np.float16, sf.fp16), (np.float32, sf.fp32),
                                       ("bfloat16", sf.bf16)])
def test_reference_agrees_with_hardware_floats(dtype, fmt):
    """The reference's sequential, reverse and pairwise sums in nearest-even equal chained
    numpy/ml_dtypes additions (each correctly rounded: float16 and bfloat16 add in float32
    and round once, innocuous since 24 >= 2p + 2), zero signs and overflow included."""
    if dtype == "bfloat16":
        import ml_dtypes
        dtype = ml_dtypes.bfloat16
    rng = np.random.default_rng(7)
    for trial in range(40):
        K = int(rng.integers(1, 12))
        x = random_patterns(rng, fmt, (K,), center=int(rng.integers(-3, 3)),
                            spread=int(rng.integers(0, fmt.mantissa_bits + 4)))
        vals = x.view({16: np.uint16, 32: np.uint32}[8 * x.itemsize])
        v = vals.view(np.float16) if fmt == sf.fp16 else (
            vals.view(np.float32) if fmt == sf.fp32 else vals.view(dtype))
        with np.errstate(all="ignore"):
            seq = v[0]
            for t in v[1:]:
                seq = dtype(seq + t)
            rev = v[-1]
            for t in v[-2::-1]:
                rev = dtype(rev + t)
            level = list(v)
            while len(level) > 1:
                level = [dtype(level[i] + level[i + 1]) for i in range(0, len(level) - 1, 2)] + (
                    [level[-1]] if len(level) % 2 else [])
        for order, want in (("sequential", seq), ("reverse", rev), ("pairwise", level[0])):
            bits, _ = ora.ref_sum(x, fmt, order=order)
            expect = np.asarray(want, dtype=dtype).view(x.dtype)
            if np.isnan(np.asarray(want, dtype=np.float32)):
                assert ora.decode(int(bits), fmt).kind == "nan"
            else:
                assert int(bits) == int(expect), (order, x.tolist())


# =====================================================================================
# hand-built edge data: sums
# =====================================================================================
F16, F32, BF16, E4M3 = sf.fp16, sf.fp32, sf.bf16, sf.fp8_e4m3
#: name -> (input format, values, extra keyword arguments)
EDGE_SUMS = {
    # exact cancellation: the sign of zero (+0, -0 under downward), 6.3
    "cancel_pair": (F16, [1, -1], {}),
    "cancel_four": (F16, [3, 1.5, -3, -1.5], {}),
    "cancel_then_neg_zero": (F16, [2**-24, -2**-24, "-0"], {}),
    "negative_zeros": (F16, ["-0", "-0", "-0"], {}),
    "mixed_zeros": (F16, ["-0", 0, "-0"], {}),
    "one_negative_zero": (F16, ["-0"], {}),
    "cancel_fp32": (F32, [2**-149, 1, -1, -2**-149], {}),
    # overflow midway and back
    "overflow_and_back": (F16, [60000, 60000, -60000], {}),
    "overflow_and_back_negative": (F16, [-60000, -60000, 60000], {}),
    "overflow_both_ways": (F16, [60000, 60000, -60000, -60000], {}),
    "max_plus_half_ulp": (F16, [65504, 16, -16], {}),
    "overflow_fp32_from_fp16": (F16, [65504] * 3, {"accumulator": "fp32", "out_format": "fp16"}),
    # subnormal partial sums, the underflow boundary
    "subnormal_partials": (F16, [2**-14, -2**-24, -2**-24, -3 * 2**-24, 2**-24, 2**-15], {}),
    "subnormals_only": (F16, [2**-24] * 5 + [-2**-23], {}),
    "below_min_normal": (F32, [2**-14 - 2**-26], {"accumulator": "fp16"}),  # tiny before only
    "below_min_normal_sum": (F32, [2**-15, 2**-15 - 2**-26], {"accumulator": "fp16"}),
    "half_min_subnormal": (F32, [2**-25, 2**-25, 2**-25], {"accumulator": "fp16"}),
    "subnormal_fp32": (F32, [2**-126, -2**-127, -2**-149, 2**-149 * 3], {}),
    # huge exponent gaps
    "gap_fp32": (F32, [2**100, 1, -2**100], {}),
    "gap_fp32_tiny": (F32, [1, 2**-60, 2**-60, -1], {}),
    "gap_directed": (F32, [2**30, 2**-100, -2**-100, 2**-100], {}),
    "gap_fp16": (F16, [2**15, 2**-24, -2**15, 2**-24], {}),
    # ties at every step
    "ties_2048": (F16, [2048] + [1] * 8, {}),
    "ties_2048_negative": (F16, [-2048] + [-1] * 8, {}),
    "ties_odd_start": (F16, [2050, 1, 1, 1, 1, 1], {}),
    "ties_mixed_sign": (F16, [2048, 1, -3, 1, 1, -1, 1], {}),
    "ties_bf16": (BF16, [256, 1, 1, 1, 1, 1], {}),
    "ties_e6m9": (E6M9, [1024, 1, 1, 1, 1, 1], {}),
    "ties_into_fp16": (F32, [2049, 2051, 1, 2**-20], {"accumulator": "fp16"}),
    # infinities and NaNs
    "inf_plus_finite": (F16, [1, "inf", -3], {}),
    "inf_minus_inf": (F16, ["inf", 1, "-inf"], {}),
    "neg_inf": (F16, [1, "-inf", "-inf"], {}),
    "quiet_nan": (F16, [1, "nan", 2], {}),
    "negative_nan_payload": (F16, [1, ("bits", 0xFE01), 2], {}),
    "signalling_nan": (F16, [1, "snan", 2], {}),
    "signalling_nan_fp32": (F32, ["snan", "inf"], {}),
    "nan_then_inf": (F16, ["nan", "inf", "-inf"], {}),
    "inf_to_fp32": (F16, ["inf", 65504], {"accumulator": "fp32"}),
    # FP8 E4M3 (fn): no inf, overflow gives its NaN (nearest) or saturates (toward zero)
    "e4m3_overflow": (E4M3, [448, 448, -448], {}),
    "e4m3_nan": (E4M3, [1, "nan", -2], {}),
    "e4m3_ties": (E4M3, [16, 1, 1, 1, 1], {}),
    "e4m3_subnormal": (E4M3, [2**-9, 2**-9, 2**-9, -2**-6], {}),
    "e6m9_overflow": (E6M9, [2**31, 2**31, -2**31], {}),
    # K = 1: the single term rounded into the accumulator
    "k1_tie": (F32, [1 + 2**-11], {"accumulator": "fp16"}),
    "k1_overflow": (F32, [70000], {"accumulator": "fp16"}),
    "k1_negative_subnormal": (F32, [-3 * 2**-26], {"accumulator": "fp16"}),
    "k1_exact": (F16, [-2.5], {}),
}

VARIANTS = ({}, {"tininess": "before"}, {"subnormals": False})


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("name", sorted(EDGE_SUMS))
def test_edge_sums(name, order):
    """Every edge sum, in every rounding mode, with block None/2/3, tininess before and
    flush-to-zero."""
    fmt, values, extra = EDGE_SUMS[name]
    x = pats(values, fmt)
    blocks = (None, 2, 3) if len(values) >= 3 else (None,)
    for mode in MODES:
        for variant in VARIANTS:
            for block in blocks:
                check("sum", x, fmt, order=order, rounding=mode, block=block, **variant, **extra,
                      _describe=f"[{name}]")


#: (name, input format, values, c value, extra): c is the initial value in out_format
EDGE_WITH_C = [
    ("neg_zero_c", F16, ["-0", "-0"], "-0", {}),
    ("pos_zero_c", F16, ["-0"], 0, {}),
    ("c_cancels", F16, [1, 2], -3, {}),
    ("c_swamps", F16, [2**-11] * 4, 1, {}),
    ("c_swamps_fp32", F16, [2**-11] * 4, 1, {"accumulator": "fp32", "out_format": "fp32"}),
    ("c_inf", F16, [1, -2], "-inf", {}),
    ("c_inf_minus_inf", F16, ["inf"], "-inf", {}),
    ("c_nan", F16, [1, 2], "-nan", {}),
    ("c_snan", F16, [1], "snan", {}),
    ("c_tie", F16, [1, 1], 2048, {}),
    ("c_fp32_into_fp16", F16, [1, 1], 2**-30, {"accumulator": "fp16", "out_format": "fp32"}),
    ("c_wider_than_acc", F16, [2**-11, 2**-11], 1 + 2**-20, {"accumulator": "fp16", "out_format": "fp32"}),
    ("c_subnormal", F16, [2**-24, -2**-23], 2**-24, {}),
    ("c_e4m3", E4M3, [448, 32], -448, {}),
]


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("name,fmt,values,cval,extra", EDGE_WITH_C, ids=[c[0] for c in EDGE_WITH_C])
def test_edge_sums_with_c(name, fmt, values, cval, extra, order):
    out = sf.as_format(extra.get("out_format", extra.get("accumulator", fmt)))
    x = pats(values, fmt)
    c = np.asarray(pat(cval, out), dtype=out.storage_dtype)
    for mode in MODES:
        for block in (None, 1, 2):
            check("sum", x, fmt, c=c, order=order, rounding=mode, block=block, **extra,
                  _describe=f"[{name}]")


def test_formats_without_nan_or_inf():
    """FP4/FP6 (no NaN, no inf) as out_format or accumulator: a NaN result is +0 flagged
    invalid; overflow saturates to the largest finite value (overflow, inexact)."""
    fp4, fp6 = sf.fp4_e2m1, sf.fp6_e3m2
    for mode in MODES:
        check("sum", pats([1, "nan", 2], F16), F16, accumulator="fp32", out_format=fp4, rounding=mode)
        check("sum", pats(["inf", 1, "-inf"], F16), F16, accumulator="fp32", out_format=fp4, rounding=mode)
        check("sum", pats([1, 2, 3, -0.5], F16), F16, accumulator="fp32", out_format=fp4, rounding=mode)
        check("sum", pats([4, 4, -6], fp4), fp4, rounding=mode)
        check("sum", pats([28, 28, -28, 0.25], fp6), fp6, rounding=mode, block=2)
        check("vecdot", pats([6, 6, 1.5], fp4), pats([6, -6, 0.5], fp4), fp4, accumulator=fp6,
              rounding=mode)



@pytest.mark.parametrize("acc", ["fp8_e4m3", "fp8_e4m3fnuz", "fp6_e3m2", "fp4_e2m1"])
def test_infinite_products_into_an_accumulator_without_infinity(acc):
    """An infinite exact product (fused: no product rounding) added last into an
    accumulator that has no infinity: the last step rounds +-inf into the format, so the
    result and flags are that conversion's (NaN and invalid for E4M3, +-max with overflow
    and inexact for FP6/FP4).  The fused path once let the kernel's invalid mask replace
    the rounding's, so [1, inf] . [1, 1] into E4M3 came out NaN with no flag at all."""
    # the oracle stops at an infinity into such a format; the rule is the conversion's,
    # as encode rounds +-inf into the format (tested against MPFR and the OCP tables in
    # test_codec_*); the terms before it are exact in every one of these formats
    acc = sf.as_format(acc)
    for fmt in (F16, sf.fp64):
        for a, b, exact in (([1, "inf"], [1, 1], np.inf), ([2, "-inf"], [3, 1], -np.inf)):
            for mode in MODES:
                bits, flags = sf.vecdot(pats(a, fmt), pats(b, fmt), fmt, accumulator=acc,
                                        out_format=acc, rounding=mode, return_flags=True)
                want, want_flags = sf.encode(exact, acc, rounding=mode, return_flags=True)
                if acc.has_nan and sf.is_nan(want, acc):  # any NaN: invalid gives the default one
                    assert sf.is_nan(bits, acc), (a, b, mode)
                else:
                    assert int(bits) == int(want), (a, b, mode)
                assert flags.raised() == want_flags.raised(), (a, b, mode, flags.raised())

# =====================================================================================
# hand-built edge data: dot products
# =====================================================================================
#: name -> (format, a values, b values, extra)
EDGE_DOTS = {
    "negative_zero_products": (F16, [0, "-0"], [-1, 1], {}),
    "zero_times_inf": (F16, [0, 1], ["inf", 2], {}),
    "inf_products_cancel": (F16, ["inf", "-inf"], [1, 1], {}),
    "snan_factor": (F16, [1, "snan"], [0, 1], {}),
    "nan_factor_zero": (F16, ["nan", 1], [0, 1], {}),
    "fused_vs_rounded_product": (F16, [1, 1 + 2**-10, 1 + 2**-10], [1, 1 + 2**-10, -(1 + 2**-10)], {}),
    "product_tie_fp16": (F16, [1 + 2**-10, 2048], [1 + 2**-10, 1], {"accumulator": "fp16"}),
    "product_overflow_fp16": (F16, [256, 256, -1], [256, 256, 65504], {}),
    "product_underflow": (F16, [2**-14, 2**-14, 2**-10], [2**-10, 2**-11, 2**-14], {"accumulator": "fp16"}),
    "cancellation_fp32": (F16, [3, 1.5, -1, 7], [0.5, -1, 1.5, 0], {}),
    "cancel_bf16": (BF16, [2**100, 1, -(2**100)], [2**-3, 2**-130, 2**-3], {}),
    "ties_each_step": (F16, [2048, 1, 1, 1, 1], [1, 1, 1, 1, 1], {"accumulator": "fp16"}),
    "e4m3_products": (E4M3, [448, 448, 0.5], [2, -2, 2**-9], {"accumulator": "fp8_e4m3"}),
    "e4m3_into_fp32": (E4M3, [448, 2**-9, -448], [448, 2**-9, 448], {}),
    "e6m9_acc": (F16, [1000, 1, 1, -999], [3, 1, 1, 3], {"accumulator": E6M9}),
}


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("name", sorted(EDGE_DOTS))
def test_edge_dots(name, order):
    """Every edge dot product with exact and rounded products, every mode, block None/2."""
    fmt, av, bv, extra = EDGE_DOTS[name]
    a, b = pats(av, fmt), pats(bv, fmt)
    acc = sf.as_format(extra.get("accumulator", ora.default_product_accumulator(fmt)))
    products = [None, "fp16", "bf16"]
    if not acc.has_infinity:  # an infinite rounded product has no place in E4M3
        products = [None, "bf16"]
    for mode in MODES:
        for product in products:
            for block in (None, 2):
                check("vecdot", a, b, fmt, order=order, rounding=mode, product=product,
                      block=block, **extra, _describe=f"[{name}]")


# =====================================================================================
# the option grid
# =====================================================================================
def _grid_data(acc):
    """(input format, a, b, c-format data) for one accumulator: mixed signs, a near-tie,
    cancellation, a subnormal product, a big exponent gap."""
    if acc is E4M3:
        fmt = E4M3
        av = [[1.5, -0.75, 3, 2**-9, -1, 0.5, 14],
              [7, -7, 0.25, 0.375, 2**-6, 1, -0.125],
              [-2, 5, 0.5, -3, 2**-7, 0.875, 1]]
        bv = [[1, 1.25, -0.5, 2, 1.5, 1, 0.125],
              [1, 1, 3, 0.75, 2**-3, -0.5, 1],
              [1.5, 0.25, 0.5, 0.5, 0.5, 2, -0.875]]
        cv = [0.5, -1, 2**-6]
    else:
        fmt = BF16 if acc is BF16 else F16
        av = [[1.5, -0.75, 3, 2**-12, -1, 0.5, 1000],
              [1 + 2**-7, -(1 + 2**-7), 1 + 2**-6, 2**-3, 2**-14, 1, -0.125],
              [-2, 5, 1 + 2**-7, -3, 2**-10, 0.875, 1]]
        bv = [[1, 1.25, -0.5, 2**-12, 1.5, 1 + 2**-7, 2**-9],
              [1 + 2**-7, 1 + 2**-7, 3, 0.75, 2**-5, -0.5, 1],
              [1.5, 0.25, 1 + 2**-7, 0.5, 2**-14, 2, -0.875]]
        cv = [0.5, -(1 + 2**-7), 2**-14]
    return fmt, pats(av, fmt), pats(bv, fmt), cv


GRID_ACCS = (F32, F16, BF16, E4M3, E6M9)
GRID = [(acc, product, with_c, block, order, mode)
        for acc in GRID_ACCS
        for product in (None, "fp16", "bf16")
        for with_c in (False, True)
        for block in (None, 2, 3)
        for order in ORDERS
        for mode in MODES]


@pytest.mark.parametrize("acc", GRID_ACCS, ids=str)
def test_option_grid(acc, oracle_stride, request):
    """accumulator x product x c x block x order x mode on one data set per accumulator
    (a CI slice of the grid; --runslow runs all of it)."""
    fmt, a, b, cv = _grid_data(acc)
    cases = [g for g in GRID if g[0] is acc]
    for i in case_slice(request, oracle_stride, len(cases)):
        _, product, with_c, block, order, mode = cases[i]
        c = pats(cv, acc) if with_c else None
        check("vecdot", a, b, fmt, accumulator=acc, product=product, c=c, block=block,
              order=order, rounding=mode)
        if product is None:
            check("sum", a, fmt, axis=1, accumulator=acc, c=c, block=block, order=order,
                  rounding=mode)


@pytest.mark.parametrize("tininess", ("before", "after"))
@pytest.mark.parametrize("subnormals", (True, False))
@pytest.mark.parametrize("acc", (F16, BF16, E4M3, E6M9), ids=str)
def test_underflow_options(acc, tininess, subnormals):
    """Sums whose partial sums cross the subnormal range: tininess and flush-to-zero in
    every mode."""
    p = acc.mantissa_bits
    emin = acc.emin
    fmt = F32
    tiny = [2.0**emin - 2.0 ** (emin - p - 2), 2.0 ** (emin - 1), -(2.0 ** (emin - p)) * 3,
            2.0 ** (emin - p - 1), 2.0**emin * (1 - 2.0 ** -(p + 1))]
    x = pats([[t, -s] for t in tiny for s in (0, 2.0 ** (emin - p))], fmt)
    for mode in MODES:
        for order in ORDERS:
            check("sum", x, fmt, axis=1, accumulator=acc, rounding=mode, order=order,
                  tininess=tininess, subnormals=subnormals)
            check("vecdot", x, pats([[0.5, 1]] * len(x), fmt), fmt, accumulator=acc,
                  rounding=mode, order=order, tininess=tininess, subnormals=subnormals)


# =====================================================================================
# shapes: K = 0, axes, keepdims, broadcasting, 1-d operands, batches
# =====================================================================================
def test_empty_sums():
    """K = 0: +0, or c itself (canonical NaN for a NaN c, invalid for a signalling one)."""
    x = np.zeros((3, 0), np.uint16)
    check("sum", x, F16, axis=1)
    check("sum", x, F16, axis=1, c=pats(["-0", 2**-24, "snan"], F16))
    check("sum", x, F16, axis=1, c=pats(["-nan", -3, "inf"], F16), block=2)
    check("sum", x, F16, axis=1, accumulator="fp32", c=pats(["-0", 2**-149, 1], F32))
    check("sum", np.zeros((0,), np.uint16), F16)
    check("vecdot", x, x, F16, c=pats(["-0", 1, "nan"], F32))
    check("vecdot", x, x, F16, order="pairwise", c=pats(["-0", 1, "nan"], F32))
    check("matmul", np.zeros((2, 0), np.uint16), np.zeros((0, 3), np.uint16), F16)
    check("matmul", np.zeros((2, 0), np.uint16), np.zeros((0, 3), np.uint16), F16,
          c=pats(["-0", 1, -2], F32))


def test_single_term_dots():
    """K = 1: round_A(a * b) once (and round_A(c + a * b) with c)."""
    a = pats([1 + 2**-10, 3, -2**-14, 255], F16).reshape(4, 1)
    b = pats([1 + 2**-10, -(1 + 2**-10), 2**-11, 257], F16).reshape(4, 1)
    for mode in MODES:
        check("vecdot", a, b, F16, accumulator="fp16", rounding=mode)
        check("vecdot", a, b, F16, accumulator="bf16", rounding=mode, c=pats([1, -1, 2**-30, 0], BF16))
        check("matmul", a[:1], b[:1].T, F16, accumulator="e4m3", rounding=mode)


AXES = [(None, False), (None, True), (0, False), (1, True), (-1, False), (2, False),
        ((0, 2), False), ((0, 2), True), ((1, 2), False), ((-1, 0), False), ((0, 1, 2), False)]


@pytest.mark.parametrize("axis,keepdims", AXES, ids=[f"axis={a}-keepdims={k}".replace(" ", "")
                                                      for a, k in AXES])
@pytest.mark.parametrize("order", ORDERS)
def test_sum_axes(axis, keepdims, order):
    """sum over axis None/int/tuple with keepdims; k runs over the reduced elements in C
    order (the flat index of the reduced sub-array)."""
    rng = np.random.default_rng(zlib.crc32(repr((axis, keepdims, order)).encode()))
    x = random_patterns(rng, F16, (2, 3, 4), center=0, spread=13)
    for mode in ("nearest_even", "downward"):
        check("sum", x, F16, axis=axis, keepdims=keepdims, order=order, rounding=mode)
        check("sum", x, F16, axis=axis, keepdims=keepdims, order=order, rounding=mode, block=3)


def test_sum_axes_given_out_of_order():
    """axis=(2, 0): the reduced elements are still taken in C order of the array (axis 0
    slower than axis 2), whatever order the tuple lists them in.  Data where the order
    matters in fp16: a tie decided by what was added before."""
    x = np.zeros((2, 1, 3), np.uint16)
    # C order over (axis 0, axis 2): 2048, 1, 2, -1, -1, -1 -> 2048 (tie to even), 2050,
    # 2048 (2049 a tie to even), 2047, 2046.  Taken with axis 2 slower it would be
    # 2048, -1, 1, -1, 2, -1 -> 2047, 2048, 2047, 2048 (2049 a tie), 2047.
    x[0, 0] = pats([2048, 1, 2], F16)
    x[1, 0] = pats([-1, -1, -1], F16)
    assert int(ora.ref_sum(x, F16, axis=(2, 0))[0][0]) == pat(2046, F16)
    check("sum", x, F16, axis=(2, 0))
    check("sum", x, F16, axis=(0, 2))
    check("sum", x, F16, axis=(2, 0), order="reverse")


@pytest.mark.parametrize("shapes", [
    ((5,), (5,)), ((3, 5), (5,)), ((3, 5), (3, 5)), ((2, 1, 4), (3, 4)), ((1, 4), (3, 1, 4)),
    ((4, 3), (4, 3))])
def test_vecdot_broadcasting(shapes):
    sa, sb = shapes
    rng = np.random.default_rng(zlib.crc32(repr(shapes).encode()))
    a = random_patterns(rng, F16, sa, spread=8)
    b = random_patterns(rng, F16, sb, spread=8)
    axis = 0 if shapes == ((4, 3), (4, 3)) else -1
    for order in ORDERS:
        check("vecdot", a, b, F16, axis=axis, order=order)
        check("vecdot", a, b, F16, axis=axis, order=order, accumulator="fp16", product="bf16",
              rounding="upward")


@pytest.mark.parametrize("shapes,cshape", [
    (((3, 5), (5, 4)), (3, 4)), (((3, 5), (5, 4)), (4,)), (((3, 5), (5, 4)), ()),
    (((2, 3, 4), (4, 2)), (2, 3, 2)), (((2, 1, 3, 4), (3, 4, 2)), (3, 1, 2)),
    (((5,), (5, 3)), (3,)), (((3, 5), (5,)), (3,)), (((5,), (5,)), ()),
    (((1, 4), (2, 4, 1)), (1,))])
def test_matmul_shapes(shapes, cshape):
    sa, sb = shapes
    rng = np.random.default_rng(zlib.crc32(repr(shapes).encode()))
    a = random_patterns(rng, F16, sa, spread=10)
    b = random_patterns(rng, F16, sb, spread=10)
    c = random_patterns(rng, F32, cshape, spread=30, center=-5)
    for order in ORDERS:
        check("matmul", a, b, F16, order=order)
        check("matmul", a, b, F16, order=order, c=c, block=2)
        check("matmul", a, b, F16, order=order, accumulator="fp16", c=random_patterns(
            rng, F16, cshape, spread=10), rounding="toward_zero")


def test_scalar_results():
    """A 0-d result is a numpy scalar of out_format's dtype, flags as 0-d values."""
    x = pats([1, 2, 3], F16)
    bits = sf.sum(x, F16)
    assert isinstance(bits, np.generic) and bits.dtype == np.uint16
    bits = sf.vecdot(x, x, F16)
    assert isinstance(bits, np.generic) and bits.dtype == np.uint32
    check("sum", x, F16)
    check("vecdot", x, x, F16)
    check("matmul", x, x, F16)


def test_defaults():
    """Default accumulators: sum in fmt; vecdot/matmul in fp32 for formats inside fp32
    (fp16, bf16, tf32, FP8, e6m9) but not fp32 itself, else fmt (fp64)."""
    expected = {F16: F32, BF16: F32, sf.tf32: F32, E4M3: F32, sf.fp8_e5m2: F32, E6M9: F32,
                F32: F32, sf.fp64: sf.fp64, sf.Format(9, 10): sf.Format(9, 10)}
    for fmt, acc in expected.items():
        assert ora.default_product_accumulator(fmt) == acc, fmt
        one = pats([1, 1], fmt)
        assert np.asarray(sf.vecdot(one, one, fmt)).dtype == acc.storage_dtype
        assert np.asarray(sf.sum(one, fmt)).dtype == fmt.storage_dtype
    # e6m9's precision 10 and range [-30, 31] lie inside fp32: 2**-39 products exact
    x = pats([2**-20, 2**-19, 1], E6M9)
    check("vecdot", x, x, E6M9)


# =====================================================================================
# random cases (hypothesis; deterministic in CI)
# =====================================================================================
#: (input format, accumulator, out_format) combinations whose infinities have somewhere to
#: go (the reference refuses an infinity rounded into E4M3, which the spec leaves open)
SUM_COMBOS = [
    (F16, F16, None), (F16, F32, None), (F16, F32, F16), (F16, E6M9, None), (F16, BF16, None),
    (BF16, BF16, None), (BF16, F32, BF16), (F32, F16, None), (F32, F32, None), (F32, BF16, F32),
    (E4M3, E4M3, None), (E4M3, F16, None), (E4M3, F32, E4M3), (E6M9, E6M9, None), (E6M9, F32, None),
    (E6M9, F16, E6M9),
]
DOT_COMBOS = [
    (F16, None, None), (F16, F16, None), (F16, F32, F16), (F16, E6M9, None), (F16, BF16, F32),
    (BF16, None, None), (BF16, BF16, None), (E4M3, None, None), (E4M3, E4M3, None),
    (E4M3, F16, None), (E6M9, None, None), (E6M9, E6M9, None), (F32, None, None),
]


def _no_inf(fmt) -> bool:
    return fmt is not None and not sf.as_format(fmt).has_infinity


@st.composite
def options(draw, dot):
    combos = DOT_COMBOS if dot else SUM_COMBOS
    fmt, acc, out = draw(st.sampled_from(combos))
    A = sf.as_format(acc) if acc is not None else (ora.default_product_accumulator(fmt) if dot else fmt)
    O = out if out is not None else A
    product = None
    if dot:
        product = draw(st.sampled_from([None, None, "fp16", "bf16"]))
        if _no_inf(A) and product == "fp16":
            product = "bf16"
    specials = draw(st.sampled_from([0.0, 0.0, 0.1]))
    if _no_inf(A) or _no_inf(O) or (product is not None and _no_inf(product)):
        specials = 0.0 if fmt.has_infinity else specials
    kw = dict(
        accumulator=acc, out_format=out, product=product,
        order=draw(st.sampled_from(ORDERS)),
        block=draw(st.sampled_from([None, None, 1, 2, 3])),
        rounding=draw(st.sampled_from(MODES)),
        tininess=draw(st.sampled_from(["after", "before"])),
        subnormals=draw(st.booleans()),
    )
    if not dot:
        del kw["product"]
    for k in ("accumulator", "out_format", "product", "block"):
        if k in kw and kw[k] is None:
            del kw[k]
    data = dict(
        seed=draw(st.integers(0, 2**32 - 1)),
        center=draw(st.one_of(st.just(0), st.integers(-4, 4),
                              st.integers(-ora.bias_of(fmt) + 1, ora.bias_of(fmt)))),
        spread=draw(st.integers(0, fmt.mantissa_bits + 6)),
        specials=specials,
        with_c=draw(st.booleans()),
    )
    return fmt, sf.as_format(O), kw, data


def _c_for(rng, O, shape, data, kw):
    if not data["with_c"]:
        return None
    return random_patterns(rng, O, shape, center=data["center"], spread=data["spread"] + 2,
                            specials=data["specials"] / 2)


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow])
@given(opts=options(dot=False),
       shape_axis=st.sampled_from([((6,), None), ((3, 5), 1), ((3, 5), 0), ((2, 3, 4), (0, 2)),
                                   ((4, 7), -1), ((2, 2, 3), None), ((9,), 0), ((5, 1), 1)]),
       keepdims=st.booleans())
def test_random_sums(opts, shape_axis, keepdims):
    fmt, O, kw, data = opts
    shape, axis = shape_axis
    rng = np.random.default_rng(data["seed"])
    x = random_patterns(rng, fmt, shape, center=data["center"], spread=data["spread"],
                         specials=data["specials"])
    out_shape = np.sum(np.zeros(shape), axis=axis, keepdims=keepdims).shape
    c = _c_for(rng, O, out_shape, data, kw)
    if c is not None:
        kw["c"] = c
    check("sum", x, fmt, axis=axis, keepdims=keepdims, **kw)


def _factor_patterns(rng, fmt, shapes, data):
    """The two factors of a random dot or matrix product (products near 2**center)."""
    return tuple(random_patterns(rng, fmt, shape, center=data["center"] // 2, spread=data["spread"],
                                 specials=data["specials"]) for shape in shapes)


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow])
@given(opts=options(dot=True),
       shapes=st.sampled_from([((4,), (4,)), ((3, 5), (3, 5)), ((2, 1, 6), (3, 6)), ((7,), (2, 7))]))
def test_random_vecdots(opts, shapes):
    fmt, O, kw, data = opts
    rng = np.random.default_rng(data["seed"])
    a, b = _factor_patterns(rng, fmt, shapes, data)
    out_shape = np.broadcast_shapes(shapes[0][:-1], shapes[1][:-1])
    c = _c_for(rng, O, out_shape, data, kw)
    if c is not None:
        kw["c"] = c
    check("vecdot", a, b, fmt, **kw)


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow])
@given(opts=options(dot=True),
       shapes=st.sampled_from([((3, 5), (5, 4)), ((2, 3, 4), (4, 2)), ((5,), (5, 3)), ((2, 6), (6,)),
                               ((6,), (6,)), ((2, 1, 2, 3), (2, 3, 2))]))
def test_random_matmuls(opts, shapes):
    fmt, O, kw, data = opts
    rng = np.random.default_rng(data["seed"])
    a, b = _factor_patterns(rng, fmt, shapes, data)
    out_shape = np.matmul(np.zeros(shapes[0]), np.zeros(shapes[1])).shape
    c = _c_for(rng, O, out_shape, data, kw)
    if c is not None:
        kw["c"] = c
    check("matmul", a, b, fmt, **kw)


# =====================================================================================
# swamped: the count itself, on sums where it is known by hand
# =====================================================================================
def test_swamped_counts_by_hand():
    """fp16 sequential: 2048 + eight 1s, each addition a tie to even 2048: 8 swamped;
    upward: none (each 1 moves the sum); pairwise: only the top level can swamp.
    A zero addend is never swamped; an infinite partial sum is not counted."""
    x = pats([2048] + [1] * 8, F16)
    assert int(sf.sum(x, F16, return_flags=True)[1].swamped) == 8
    assert int(sf.sum(x, F16, rounding="upward", return_flags=True)[1].swamped) == 0
    # pairwise: (2048+1) -> 2048 swamped; (1+1), (1+1), (1+1), (1) -> 2, 2, 2, 1 not;
    # level 2: 2048 + 2 = 2050 (exact), 2 + 2 = 4, 1 carried; level 3: 2050 + 4 = 2054,
    # 1 carried; 2054 + 1 = 2055 -> tie to even 2056, not equal to either operand: 1 in all
    assert int(sf.sum(x, F16, order="pairwise", return_flags=True)[1].swamped) == 1
    assert int(sf.sum(pats([1, 0, "-0", 0], F16), F16, return_flags=True)[1].swamped) == 0
    assert int(sf.sum(pats(["inf", 1, 1], F16), F16, return_flags=True)[1].swamped) == 0
    check("sum", x, F16, order="pairwise")
