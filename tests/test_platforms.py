"""The platform presets (softfloat.platforms) as the operations read them, against real
oracles: the host's own SSE arithmetic on x86-64 for "x86-sse", and the constants that
processor manuals and Berkeley SoftFloat 3's per-processor specialisations document for
"arm", "arm-default-nan", "riscv" and "cuda".  Then the properties: platforms differ only
in NaN results, tininess and invalid integers; a keyword given wins over ``attributes``.
"""

from __future__ import annotations

import itertools
import platform as host
import warnings
from pathlib import Path

import numpy as np
import pytest

import softfloat as sf

RA = sf.RoundingAttributes
PRESETS = tuple(sf.PLATFORMS)
OTHERS = tuple(p for p in PRESETS if p != "default")
ON_X86 = host.machine().lower() in ("x86_64", "amd64")
needs_x86 = pytest.mark.skipif(not ON_X86, reason=f"the x86-sse oracle is the host's SSE unit; this host is "
                                                    f"{host.machine()}")


def at(name, **changes):
    return RA(platform=name, **changes)


# =====================================================================================
# x86-sse against the host's SSE arithmetic (numpy float32/float64)
# =====================================================================================
def nan_grid(fmt):
    """Patterns of every NaN kind (quiet/signaling, both signs, payloads), infinities,
    zeros and a few numbers; the NaNs drawn for fp32:

        s 11111111 1ppppppppppppppppppppppp   quiet       s 11111111 0ppp...p  signaling
    """
    e, s, q = fmt.exponent_mask, fmt.sign_mask, 1 << (fmt.mantissa_bits - 1)
    nans = [e | q, e | q | 5, s | e | q, s | e | q | 7, e | 1, e | 3, s | e | 9, s | e | (q >> 1),
            e | (q - 1), s | e | q | (q - 1)]
    others = [e, s | e, 0, s, int(sf.encode(1.5, fmt)), int(sf.encode(-2.0, fmt)), 1]
    return nans + others


HOST = {"fp32": (np.float32, np.uint32), "fp64": (np.float64, np.uint64)}
BINARY = {"add": (np.add, sf.add), "sub": (np.subtract, sf.sub), "mul": (np.multiply, sf.mul),
          "div": (np.divide, sf.div)}


@needs_x86
@pytest.mark.parametrize("fmt", HOST)
@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("lanes", ["one at a time", "vector"])
def test_x86_binary_operations_match_the_host(fmt, op, lanes):
    # NaN operands of every kind pairwise, and inf - inf, 0 * inf, 0/0, inf/inf among them
    ftype, utype = HOST[fmt]
    grid = nan_grid(sf.as_format(fmt))
    a = np.array([x for x, _ in itertools.product(grid, grid)], dtype=utype)
    b = np.array([y for _, y in itertools.product(grid, grid)], dtype=utype)
    host_op, ours = BINARY[op]
    with np.errstate(all="ignore"):
        if lanes == "vector":
            want = host_op(a.view(ftype), b.view(ftype)).view(utype)
        else:  # numpy's scalar loop, not its SIMD one
            want = np.array([host_op(a[i:i + 1].view(ftype), b[i:i + 1].view(ftype)).view(utype)[0]
                             for i in range(a.size)], dtype=utype)
    got = ours(a, b, fmt, attributes=at("x86-sse"))
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, [(hex(a[i]), hex(b[i]), hex(got[i]), hex(want[i])) for i in bad[:5]]
    # the oracle tells the presets apart: the default platform differs from SSE here
    assert (ours(a, b, fmt) != want).any()


@needs_x86
@pytest.mark.parametrize("fmt", HOST)
def test_x86_sqrt_matches_the_host(fmt):
    ftype, utype = HOST[fmt]
    grid = nan_grid(sf.as_format(fmt)) + [int(sf.encode(-1.0, fmt))]   # sqrt(-1): the default NaN
    a = np.array(grid, dtype=utype)
    with np.errstate(all="ignore"):
        want = np.sqrt(a.view(ftype)).view(utype)
    np.testing.assert_array_equal(sf.sqrt(a, fmt, attributes=at("x86-sse")), want)


@needs_x86
@pytest.mark.parametrize("fmt", HOST)
@pytest.mark.parametrize("itype", [np.int32, np.int64])
def test_x86_float_to_int_casts_match_the_host(fmt, itype):
    # numpy's casts truncate (CVTTSS2SI / CVTTSD2SI): NaN, infinities and values out of
    # range give the "integer indefinite", the dtype's minimum
    ftype, utype = HOST[fmt]
    values = np.array([np.nan, -np.nan, np.inf, -np.inf, 3e9, -3e9, 2.0**31, -2.0**31, 1e19, -1e19,
                       2.0**63, -2.0**63, 2.0**64, 2.5, -2.5, -0.0, 123456.75], dtype=ftype)
    bits = values.view(utype)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy warns of invalid casts
        want = values.astype(itype)
    np.testing.assert_array_equal(sf.to_int(bits, fmt, "toward_zero", itype, attributes=at("x86-sse")), want)


# =====================================================================================
# documented constants
# =====================================================================================
# Sources: Berkeley SoftFloat 3e, source/<processor>/specialize.h and
# s_propagateNaNF32UI.c: 8086-SSE: defaultNaNF32UI 0xFFC00000, the first NaN operand
# quieted, i32/ui32 results 0x80000000 / 0xFFFFFFFF for NaN and both overflows;
# ARM-VFPv2: defaultNaNF32UI 0x7FC00000, a signaling NaN operand first, i32_fromNaN 0,
# i32 overflow 0x7FFFFFFF / -0x80000000, ui32_fromNaN 0, ui32 overflow 0xFFFFFFFF / 0,
# tininess before rounding; RISCV: defaultNaNF32UI 0x7FC00000 (every NaN result
# canonical, commonNaNToF64UI = defaultNaNF64UI), i32_fromNaN 0x7FFFFFFF, i32 overflow
# 0x7FFFFFFF / -0x80000000, ui32_fromNaN 0xFFFFFFFF, ui32 overflow 0xFFFFFFFF / 0;
# RISC-V unprivileged ISA, F extension ("canonical NaN", FCVT.W.S table).  NVIDIA PTX ISA:
# the canonical NaN 0x7FFFFFFF (f16/bf16 0x7FFF); cvt to an integer saturates, NaN -> 0.
# Arm ARM with FPCR.DN = 1: every NaN result is the default NaN 0x7FC00000.
INF32, NINF32, ONE32 = 0x7F800000, 0xFF800000, 0x3F800000
QNAN_1, SNAN_2 = 0x7FC00001, 0x7F800002   # a quiet NaN with payload 1, a signaling one with 2

DEFAULT_NAN = {  # platform: {format: the result of inf - inf}
    "x86-sse": {"fp32": 0xFFC00000, "fp64": 0xFFF8000000000000, "fp16": 0xFE00},
    "arm": {"fp32": 0x7FC00000, "fp64": 0x7FF8000000000000, "fp16": 0x7E00, "bf16": 0x7FC0},
    "arm-default-nan": {"fp32": 0x7FC00000, "fp64": 0x7FF8000000000000, "fp16": 0x7E00},
    "riscv": {"fp32": 0x7FC00000, "fp64": 0x7FF8000000000000, "fp16": 0x7E00, "bf16": 0x7FC0},
    "cuda": {"fp32": 0x7FFFFFFF, "fp16": 0x7FFF, "bf16": 0x7FFF, "fp64": 0xFFF8000000000000},  # fp64: x86 rules
}


@pytest.mark.parametrize("name, fmt", [(p, f) for p, fs in DEFAULT_NAN.items() for f in fs])
def test_invalid_operations_give_the_documented_default_nan(name, fmt):
    inf = sf.encode(float("inf"), fmt)
    zero = sf.encode(0.0, fmt)
    minus_one = sf.encode(-1.0, fmt)
    attrs = at(name)
    want = DEFAULT_NAN[name][fmt]
    for got, flags in (sf.sub(inf, inf, fmt, attributes=attrs, return_flags=True),
                       sf.mul(zero, inf, fmt, attributes=attrs, return_flags=True),
                       sf.div(zero, zero, fmt, attributes=attrs, return_flags=True),
                       sf.sqrt(minus_one, fmt, attributes=attrs, return_flags=True),
                       sf.fma(zero, inf, minus_one, fmt, attributes=attrs, return_flags=True)):
        assert int(got) == want, (name, fmt, hex(int(got)))
        assert flags.raised() == ("invalid",)


#: add(qNaN payload 1, sNaN payload 2) and add(qNaN payload 1, 1.0) in fp32
PROPAGATION = {
    "x86-sse": (0x7FC00001, 0x7FC00001),          # the first NaN operand, quieted
    "arm": (0x7FC00002, 0x7FC00001),              # the signaling one first
    "arm-default-nan": (0x7FC00000, 0x7FC00000),  # always the default NaN
    "riscv": (0x7FC00000, 0x7FC00000),
    "cuda": (0x7FFFFFFF, 0x7FFFFFFF),
}


@pytest.mark.parametrize("name", PROPAGATION)
def test_nan_operands_propagate_as_documented(name):
    with_snan, with_number = PROPAGATION[name]
    got, flags = sf.add(QNAN_1, SNAN_2, "fp32", attributes=at(name), return_flags=True)
    assert hex(int(got)) == hex(with_snan) and flags.raised() == ("invalid",)
    got, flags = sf.add(QNAN_1, ONE32, "fp32", attributes=at(name), return_flags=True)
    assert hex(int(got)) == hex(with_number) and flags.raised() == ()


@pytest.mark.parametrize("name, src, dst, bits, want", [
    ("riscv", "fp32", "fp64", 0xFFC00123, 0x7FF8000000000000),   # FCVT.D.S: canonical NaN
    ("riscv", "fp64", "fp32", 0x7FF4000000000001, 0x7FC00000),   # sNaN: canonical, invalid
    ("cuda", "fp32", "fp16", 0xFFC00123, 0x7FFF),
    ("cuda", "fp32", "bf16", 0x7F800001, 0x7FFF),
    ("arm-default-nan", "fp16", "fp32", 0xFE01, 0x7FC00000),
    ("arm", "fp32", "fp64", 0xFFC00123, 0xFFF8002460000000),     # payload kept, shifted up
    ("x86-sse", "fp16", "fp32", 0x7C01, 0x7FC02000),
])
def test_convert_nans_as_documented(name, src, dst, bits, want):
    got, flags = sf.convert(bits, src, dst, attributes=at(name), return_flags=True)
    assert hex(int(got)) == hex(want)
    assert bool(flags.invalid) == bool(sf.is_signaling(bits, src))   # invalid for a signaling NaN only


I32_MIN, I32_MAX, U32_MAX = -2**31, 2**31 - 1, 2**32 - 1
I64_MIN, I64_MAX, U64_MAX = -2**63, 2**63 - 1, 2**64 - 1
#: (NaN, +inf, 1e10, -inf, -1e10) converted to int32 / uint32 / int64 / uint64
INVALID_INTEGERS = {
    "x86-sse": {np.int32: [I32_MIN] * 5, np.uint32: [U32_MAX] * 5,
                np.int64: [I64_MIN] * 5, np.uint64: [U64_MAX] * 5},
    "arm": {np.int32: [0, I32_MAX, I32_MAX, I32_MIN, I32_MIN], np.uint32: [0, U32_MAX, U32_MAX, 0, 0],
            np.int64: [0, I64_MAX, I64_MAX, I64_MIN, I64_MIN], np.uint64: [0, U64_MAX, U64_MAX, 0, 0]},
    "riscv": {np.int32: [I32_MAX, I32_MAX, I32_MAX, I32_MIN, I32_MIN],
              np.uint32: [U32_MAX, U32_MAX, U32_MAX, 0, 0],
              np.int64: [I64_MAX, I64_MAX, I64_MAX, I64_MIN, I64_MIN],
              np.uint64: [U64_MAX, U64_MAX, U64_MAX, 0, 0]},
    "cuda": {np.int32: [0, I32_MAX, I32_MAX, I32_MIN, I32_MIN], np.uint32: [0, U32_MAX, U32_MAX, 0, 0]},
}
INVALID_INTEGERS["arm-default-nan"] = INVALID_INTEGERS["arm"]
INVALID_INTEGERS["default"] = INVALID_INTEGERS["x86-sse"]  # softfloat's default: x86's


@pytest.mark.parametrize("name, itype", [(p, t) for p, ts in INVALID_INTEGERS.items() for t in ts])
def test_invalid_integer_conversions_give_the_documented_results(name, itype):
    bits = sf.encode([float("nan"), float("inf"), 1e30, float("-inf"), -1e30], "fp32")
    if itype in (np.int32, np.uint32):
        bits[2], bits[4] = sf.encode(1e10, "fp32"), sf.encode(-1e10, "fp32")
    got, flags = sf.to_int(bits, "fp32", "toward_zero", itype, attributes=at(name), return_flags=True)
    assert got.tolist() == INVALID_INTEGERS[name][itype]
    assert flags.invalid.all()
    # saturate=True clamps whatever the platform (NaN -> 0)
    info = np.iinfo(itype)
    assert sf.to_int(bits, "fp32", "toward_zero", itype, attributes=at(name), saturate=True).tolist() == \
        [0, info.max, info.max, info.min, info.min]


def test_invalid_integer_descriptions_are_the_default_platforms():
    assert sf.ops.INVALID_INTEGER == {"signed": "minimum", "unsigned": "maximum"}
    assert sf.ops.NAN_POLICY == {"default_nan": "positive canonical quiet NaN",
                                 "propagation": "signaling first, then first operand"}


# =====================================================================================
# properties: platforms differ only in NaN results, tininess and invalid integers
# =====================================================================================
FP8 = ("fp8_e5m2", "fp8_e4m3")


def _all_pairs(fmt):
    n = 1 << fmt.bits
    a, b = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    return a.ravel().astype(fmt.storage_dtype), b.ravel().astype(fmt.storage_dtype)


def _agree(default, other, fmt, where):
    """Same bits wherever the default result is not NaN, NaN at the same lanes; every bit
    the same in formats with one NaN or none (fn, fnuz, FP6/FP4)."""
    (d, dfl), (o, ofl) = default, other
    nan = sf.is_nan(d, fmt)
    np.testing.assert_array_equal(sf.is_nan(o, fmt), nan, err_msg=where)
    if fmt.specials is not sf.formats.Specials.IEEE:
        np.testing.assert_array_equal(o, d, err_msg=where)
    np.testing.assert_array_equal(o[~nan], d[~nan], err_msg=where)
    for flag in ("invalid", "divide_by_zero", "overflow", "underflow", "inexact"):
        np.testing.assert_array_equal(getattr(ofl, flag), getattr(dfl, flag), err_msg=f"{where} {flag}")


@pytest.mark.parametrize("fmt_name", FP8)
@pytest.mark.parametrize("name", OTHERS)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_every_platform_agrees_off_nans_on_every_fp8_pair(fmt_name, name, op):
    fmt = sf.as_format(fmt_name)
    a, b = _all_pairs(fmt)
    ours = getattr(sf, op)
    default = ours(a, b, fmt, return_flags=True)
    # tininess given: the flags must then agree too
    other = ours(a, b, fmt, attributes=at(name, tininess="after"), return_flags=True)
    _agree(default, other, fmt, f"{op} {fmt_name} {name}")
    bits = ours(a, b, fmt, attributes=at(name))  # the platform's tininess changes no bits
    nan = sf.is_nan(default[0], fmt)
    np.testing.assert_array_equal(bits[~nan], default[0][~nan])


@pytest.mark.parametrize("name", OTHERS)
def test_every_platform_agrees_off_nans_on_sqrt_fma_and_convert(name):
    fp16 = sf.fp16
    every16 = np.arange(1 << 16).astype(np.uint16)
    attrs = at(name, tininess="after")
    _agree(sf.sqrt(every16, fp16, return_flags=True), sf.sqrt(every16, fp16, attributes=attrs, return_flags=True),
           fp16, f"sqrt {name}")
    rng = np.random.default_rng(20260)
    for fmt in (sf.as_format(f) for f in FP8):
        a, b, c = (rng.integers(0, 256, 1 << 16).astype(np.uint8) for _ in range(3))
        _agree(sf.fma(a, b, c, fmt, return_flags=True), sf.fma(a, b, c, fmt, attributes=attrs, return_flags=True),
               fmt, f"fma {fmt.name} {name}")
    for dst in ("fp8_e4m3", "fp8_e5m2", "fp8_e5m2fnuz", "fp4_e2m1", "bf16", "fp32", "fp64"):
        dst = sf.as_format(dst)
        _agree(sf.convert(every16, fp16, dst, return_flags=True),
               sf.convert(every16, fp16, dst, attributes=attrs, return_flags=True), dst,
               f"convert {dst.name} {name}")


# fp16's smallest normal 2**-14 less 2**-26: tiny before rounding, not after (as in the
# Tininess docstring); made exactly by (1 - 2**-6) * 2**-14 (1 + 2**-6)
JUST_BELOW = 2.0**-14 - 2.0**-26


@pytest.mark.parametrize("name", PRESETS)
def test_tininess_follows_the_platform(name):
    a, b = sf.encode(1 - 2.0**-6, "fp16"), sf.encode(2.0**-14 * (1 + 2.0**-6), "fp16")
    before = sf.PLATFORMS[name].tininess is sf.Tininess.BEFORE
    want = ("underflow", "inexact") if before else ("inexact",)
    attrs = at(name)
    results = [sf.mul(a, b, "fp16", attributes=attrs, return_flags=True),
               sf.fma(a, b, sf.encode(0.0, "fp16"), "fp16", attributes=attrs, return_flags=True),
               sf.convert(sf.encode(JUST_BELOW, "fp32"), "fp32", "fp16", attributes=attrs, return_flags=True)]
    for bits, flags in results:
        assert int(bits) == 0x0400 and flags.raised() == want
    # the keyword wins over the platform's tininess
    _, flags = sf.mul(a, b, "fp16", attributes=attrs, tininess="after", return_flags=True)
    assert flags.raised() == ("inexact",)


def test_arm_is_the_platform_with_tininess_before():
    assert sf.PLATFORMS["arm"].tininess is sf.Tininess.BEFORE
    assert sf.PLATFORMS["default"].tininess is sf.Tininess.AFTER


# =====================================================================================
# a keyword given wins over attributes
# =====================================================================================
THIRD16 = int(sf.encode(1 / 3, "fp16"))
CALLS = {
    "add": lambda **kw: sf.add(THIRD16, 0x3C00, "fp16", **kw),
    "sub": lambda **kw: sf.sub(THIRD16, 0x3C00, "fp16", **kw),
    "mul": lambda **kw: sf.mul(THIRD16, THIRD16, "fp16", **kw),
    "div": lambda **kw: sf.div(0x3C00, 0x4200, "fp16", **kw),
    "fma": lambda **kw: sf.fma(THIRD16, THIRD16, 0x3C00, "fp16", **kw),
    "sqrt": lambda **kw: sf.sqrt(0x4000, "fp16", **kw),
    "convert": lambda **kw: sf.convert(sf.encode(1 / 3, "fp32"), "fp32", "fp16", **kw),
    "round_to_integral": lambda **kw: sf.round_to_integral(sf.encode(2.5, "fp16"), "fp16", **kw),
    "to_int": lambda **kw: sf.to_int(sf.encode(2.5, "fp16"), "fp16", **kw),
    "from_int": lambda **kw: sf.from_int(2049, "fp16", **kw),
}


@pytest.mark.parametrize("op", CALLS)
def test_a_rounding_keyword_wins_over_attributes(op):
    call = CALLS[op]
    down, up = call(rounding="downward"), call(rounding="upward")
    assert down != up
    assert call(attributes=RA(rounding="upward"), rounding="downward") == down
    assert call(attributes=RA(rounding="upward")) == up
    assert call(attributes=RA(rounding="upward", platform="arm"), rounding="downward") == down


@pytest.mark.parametrize("op", ["add", "mul", "convert", "from_int"])
def test_a_saturate_keyword_wins_over_attributes(op):
    big = {"add": lambda **kw: sf.add(0x7BFF, 0x7BFF, "fp16", **kw),
           "mul": lambda **kw: sf.mul(0x7BFF, 0x4000, "fp16", **kw),
           "convert": lambda **kw: sf.convert(sf.encode(1e6, "fp32"), "fp32", "fp16", **kw),
           "from_int": lambda **kw: sf.from_int(10**6, "fp16", **kw)}[op]
    assert int(big()) == 0x7C00 and int(big(saturate=True)) == 0x7BFF
    assert int(big(attributes=RA(saturate=True))) == 0x7BFF
    assert int(big(attributes=RA(saturate=True), saturate=False)) == 0x7C00


def test_to_int_saturate_follows_attributes_unless_given():
    nan = sf.encode(float("nan"), "fp32")
    assert int(sf.to_int(nan, "fp32", dtype=np.int32)) == I32_MIN
    assert int(sf.to_int(nan, "fp32", dtype=np.int32, attributes=RA(saturate=True))) == 0
    assert int(sf.to_int(nan, "fp32", dtype=np.int32, attributes=RA(saturate=True), saturate=False)) == I32_MIN
    assert int(sf.to_int(nan, "fp32", dtype=np.int32, attributes=at("riscv", saturate=True))) == 0


@pytest.mark.parametrize("op", ["add", "mul", "convert"])
def test_a_subnormals_keyword_wins_over_attributes(op):
    tiny = {"add": lambda **kw: sf.add(0x0001, 0x0001, "fp16", **kw),
            "mul": lambda **kw: sf.mul(0x0400, 0x3800, "fp16", **kw),     # 2**-14 * 0.5
            "convert": lambda **kw: sf.convert(sf.encode(2.0**-20, "fp32"), "fp32", "fp16", **kw)}[op]
    kept = int(tiny())
    assert kept != 0
    assert int(tiny(subnormals=False)) in (0, 0x8000)
    assert int(tiny(attributes=RA(subnormals=False), subnormals=True)) == kept


def test_round_to_integral_nan_follows_the_platform():
    snan = 0x7C01  # fp16 signaling NaN, payload 1
    assert int(sf.round_to_integral(snan, "fp16")) == 0x7E01
    got, flags = sf.round_to_integral(snan, "fp16", attributes=at("riscv"), return_flags=True)
    assert int(got) == 0x7E00 and flags.raised() == ("invalid",)
    assert int(sf.round_to_integral(snan, "fp16", attributes=at("cuda"))) == 0x7FFF


# ---- the "cuda" preset against a real GPU ------------------------------------------------
#: Results measured on an NVIDIA H200 (driver 580.159, torch 2.11+cu130) by
#: tools/gpu_crosscheck.py's NaN section and its follow-up: elementwise torch add/sub/mul/
#: div on CUDA tensors over every pair of an 18-value grid (quiet and signaling NaNs of
#: both signs with payloads, infinities, zeros, numbers), sqrt over the grid, and the
#: conversions fp64 -> fp32 and fp32 -> fp16/bf16 of the grid.
CUDA_H200 = Path(__file__).parent / "data" / "cuda_h200_nans.npz"


@pytest.mark.parametrize("fmt", ["fp32", "fp64"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "sqrt"])
def test_cuda_preset_matches_the_h200(fmt, op):
    gpu = np.load(CUDA_H200)
    a, b, want = gpu[f"{fmt}_a"], gpu[f"{fmt}_b"], gpu[f"{fmt}_{op}"]
    cuda = at("cuda")
    if op == "sqrt":
        a = a[::want.size]   # the grid (a repeats each grid value once per partner)
        got = sf.sqrt(a, fmt, attributes=cuda)
    else:
        got = getattr(sf, op)(a, b, fmt, attributes=cuda)
    bad = np.flatnonzero(np.asarray(got) != want)
    assert bad.size == 0, [(hex(int(a[i])), hex(int(b[i])), hex(int(got[i])), hex(int(want[i]))) for i in bad[:5]]


@pytest.mark.parametrize("src, dst, key", [("fp64", "fp32", "cvt64_fp32"), ("fp32", "fp16", "cvt32_fp16"),
                                           ("fp32", "bf16", "cvt32_bf16")])
def test_cuda_conversions_match_the_h200(src, dst, key):
    gpu = np.load(CUDA_H200)
    x = gpu["cvt_in64" if src == "fp64" else "cvt_in32"]
    got = sf.convert(x, src, dst, attributes=at("cuda"))
    assert [hex(int(v)) for v in got] == [hex(int(v)) for v in gpu[key]]
