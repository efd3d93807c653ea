"""The fused adder's fast path (softfloat.accumulate._fused_fast) against the general path.

Every result, flag and swamped count of the tensor-core models must be the general
path's bit for bit (the general path is itself checked against the exact reference in
tests/test_accumulate_hardware.py and tests/test_accumulate_mixed.py); these tests run
each call twice, with the shortcuts on and off (softfloat._fastpaths.ENABLED), over data
built to hit the fast path's edges: products aligned at and around the F-bit boundary,
cancellation to exact zeros (and -0), carries into a new binade, subnormal inputs and
outputs, c near overflow, inf/NaN (declined by the fast path), K not a multiple of the
block, the via-fp16 FP8 path, two operand formats, sums and dot products.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import softfloat as sf
import softfloat._fastpaths as fastpaths
from softfloat.accumulate import FusedAccumulator

FLAG_FIELDS = ("invalid", "divide_by_zero", "overflow", "underflow", "inexact", "swamped")


def _both(call):
    saved = fastpaths.ENABLED
    try:
        fastpaths.ENABLED = True
        fast = call()
        fastpaths.ENABLED = False
        slow = call()
    finally:
        fastpaths.ENABLED = saved
    (b1, f1), (b2, f2) = fast, slow
    np.testing.assert_array_equal(b1, b2)
    for name in FLAG_FIELDS:
        np.testing.assert_array_equal(getattr(f1, name), getattr(f2, name), err_msg=name)


def _operands(rng, fmt, shape, kind):
    x = rng.standard_normal(shape)
    if kind == "wide":  # exponents spread over the whole format
        x *= np.exp2(rng.integers(-40, 40, shape))
    elif kind == "aligned":  # powers of two a few binades apart: truncation at the edge
        x = np.sign(x) * np.exp2(rng.integers(-14, 2, shape)) * (1 + rng.integers(0, 4, shape) / 4)
    elif kind == "cancel":  # pairs x, -x: exact zero sums, -0 and +0
        half = x[..., : shape[-1] // 2] if len(shape) == 1 else x
        x = np.concatenate([half, -half], axis=-1)[..., : shape[-1]] if len(shape) == 1 else x
    elif kind == "carry":  # all-equal terms: sums that carry into the next binade
        x = np.full(shape, 1.875)
    elif kind == "tiny":  # subnormal inputs
        x *= 2.0 ** -130
    elif kind == "zeros":
        x[rng.random(shape) < 0.5] = 0.0
        x[rng.random(shape) < 0.2] = -0.0
    return sf.encode(x, fmt, saturate=True)


KINDS = ["normal", "wide", "aligned", "carry", "tiny", "zeros"]
CASES = [("fp8_e4m3", None, "h100"), ("fp8_e5m2", None, "h100"), ("fp8_e4m3", "fp8_e5m2", "h100"),
         ("fp8_e4m3", None, "b200"), ("fp8_e5m2", "fp8_e4m3", "h100-mma"), ("fp16", None, "h100"),
         ("bf16", None, "h100"), ("fp16", None, "v100"), ("bf16", None, "a100"), ("fp8_e4m3", None, "ada")]


@pytest.mark.parametrize("fmt, b_fmt, acc", CASES)
@pytest.mark.parametrize("kind", KINDS)
def test_matmul_matches_general_path(fmt, b_fmt, acc, kind):
    rng = np.random.default_rng(zlib.crc32(repr((fmt, b_fmt, acc, kind)).encode()))
    a = _operands(rng, fmt, (7, 77), kind)  # K = 77: not a multiple of any block
    b = _operands(rng, b_fmt or fmt, (77, 9), kind)
    for kw in ({}, {"out_format": "fp16"}, {"block": 40}, {"c": sf.encode(rng.standard_normal((7, 9)), "fp32")}):
        _both(lambda: sf.matmul(a, b, fmt, b_format=b_fmt, accumulator=acc, return_flags=True, **kw))


@pytest.mark.parametrize("acc", ["h100", "b200", "v100"])
def test_specials_negative_zero_and_overflowing_c(acc):
    fmt = "fp16" if acc == "v100" else "fp8_e4m3"
    a = sf.encode([[-0.0, -0.0, 0.0, 1.0], [1.0, 2.0, 3.0, 4.0], [-0.0] * 4], fmt)
    b = sf.encode([[0.0, 1.0, -1.0], [0.0, 1.0, 1.0], [-0.0, 2.0, 0.5], [-0.0, -1.0, 1.0]], fmt)
    neg = sf.encode(np.full((3, 3), -0.0), "fp32")
    big = sf.encode(np.full((3, 3), 3.0e38), "fp32")
    for c in (None, neg, big):
        _both(lambda: sf.matmul(a, b, fmt, accumulator=acc, c=c, return_flags=True))
    nan = np.array(a)
    nan[1, 1] = sf.encode(float("nan"), fmt)
    _both(lambda: sf.matmul(nan, b, fmt, accumulator=acc, return_flags=True))
    if fmt == "fp16":
        inf = np.array(a)
        inf[0, 3] = sf.encode(float("inf"), fmt)
        _both(lambda: sf.matmul(inf, b, fmt, accumulator=acc, return_flags=True))


def test_boundary_of_the_fraction_bits():
    # one product at 2**M and others exactly F, F + 1 and F + 2 binades below it: kept,
    # kept partly, dropped (swamped); every fraction pattern of the small one
    acc = FusedAccumulator(terms=4, fraction_bits=13)
    small = [1.0 + i / 8 for i in range(8)]
    for shift in range(9, 17):
        a = sf.encode([[1.0] + [s * 2.0 ** -shift for s in small[:3]], [1.0, -1.0, 2.0 ** -shift, 1.875]],
                      "fp8_e4m3", saturate=True)
        b = sf.encode(np.ones((4, 2)), "fp8_e4m3")
        _both(lambda: sf.matmul(a, b, "fp8_e4m3", accumulator=acc, return_flags=True))


@pytest.mark.parametrize("acc", ["h100", "h100-mma"])
def test_sums_and_dot_products(acc):
    rng = np.random.default_rng(3)
    x = _operands(rng, "fp8_e4m3", (5, 70), "wide")
    y = _operands(rng, "fp8_e4m3", (5, 70), "normal")
    _both(lambda: sf.vecdot(x, y, "fp8_e4m3", accumulator=acc, return_flags=True))
    h = _operands(rng, "fp16", (6, 50), "wide")
    _both(lambda: sf.sum(h, "fp16", axis=1, accumulator="h100", return_flags=True))


def test_batched_products():
    rng = np.random.default_rng(4)
    a = _operands(rng, "fp8_e4m3", (3, 1, 5, 40), "normal")
    b = _operands(rng, "fp8_e4m3", (2, 40, 6), "wide")
    _both(lambda: sf.matmul(a, b, "fp8_e4m3", accumulator="h100", return_flags=True))
