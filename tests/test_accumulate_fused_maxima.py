"""The native FP8 path's blocks by BLAS maxima (softfloat.accumulate._fused_maxima)
against the general path.

Each call runs twice, with the shortcuts on and off (softfloat._fastpaths.ENABLED); the
general path is itself checked against the exact reference in
tests/test_accumulate_hardware.py and against an H200 (tools/gpu_crosscheck.py).  The
data hit the new path's edges: products aligned at the F-bit boundary, exact cancellation,
carries, zeros and -0 (the swamped counts less the zero products), blocks with no live
product (M from c alone), c tiny, huge and -0 (declined where the path's bounds say so),
K not a multiple of the block, promotion blocks, batches, two operand formats.  A spy
checks that the path answered where it should: a silent decline would make these tests
compare the general path with itself.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import softfloat as sf
from softfloat.accumulate import _fused_maxima
from tests.fastpath_checks import general


@pytest.fixture
def used(monkeypatch):
    """A list that gets True / False per tile: the path planned a chain, or declined."""
    calls = []
    plan = _fused_maxima.plan

    def spy(*args, **kwargs):
        got = plan(*args, **kwargs)
        calls.append(got is not None)
        return got
    monkeypatch.setattr(_fused_maxima, "plan", spy)
    return calls


def _both(call):
    fast, slow = call(), general(call)
    if isinstance(fast, tuple):
        np.testing.assert_array_equal(fast[0], slow[0])
        np.testing.assert_array_equal(fast[1], slow[1], err_msg="swamped counts")
    else:
        np.testing.assert_array_equal(fast, slow)


def _operands(rng, fmt, shape, kind):
    x = rng.standard_normal(shape)
    if kind == "wide":  # exponents over the whole format
        x *= np.exp2(rng.integers(-20, 20, shape))
    elif kind == "aligned":  # a few binades apart: truncation at the F-bit edge
        x = np.sign(x) * np.exp2(rng.integers(-10, 3, shape)) * (1 + rng.integers(0, 4, shape) / 4)
    elif kind == "cancel":  # x and -x along k: sums that cancel exactly
        x[..., 1::2] = -x[..., 0::2][..., : x[..., 1::2].shape[-1]]
    elif kind == "carry":
        x = np.full(shape, 1.875)
    elif kind == "zeros":  # ReLU-like zeros, -0, and runs of zeros longer than a block
        x[rng.random(shape) < 0.5] = 0.0
        x[rng.random(shape) < 0.2] = -0.0
        x[..., :40] = 0.0
    elif kind == "saturated":  # scaled as the FP8 recipes scale: amax at the format's largest
        x *= sf.as_format(fmt).max_finite / np.abs(x).max()
    return sf.encode(x, fmt, saturate=True)


def _kinds_ab(rng, fmt, b_fmt, kind, M=6, K=77, N=10):
    a = _operands(rng, fmt, (M, K), kind)
    b = _operands(rng, b_fmt, (K, N), "normal" if kind == "cancel" else kind)
    if kind == "cancel":  # a's pairs cancel against equal rows of b
        b[1::2] = b[0::2][: b[1::2].shape[0]]
    return a, b


KINDS = ["normal", "wide", "aligned", "cancel", "carry", "zeros", "saturated"]
#: FP8 on the native path (the chain in float32), and the 16-bit and tf32 models (float64)
CASES = [("fp8_e4m3", "fp8_e4m3", "h100"), ("fp8_e5m2", "fp8_e5m2", "h100"), ("fp8_e4m3", "fp8_e5m2", "h100"),
         ("fp8_e5m2", "fp8_e4m3", "h100"), ("fp8_e4m3", "fp8_e4m3", "ada"), ("fp8_e5m2", "fp8_e4m3", "ada"),
         ("fp16", "fp16", "h100"), ("bf16", "bf16", "h100"), ("fp16", "fp16", "v100"), ("bf16", "bf16", "a100"),
         ("tf32", "tf32", "a100")]
#: bf16 and tf32 scaled to their largest values reach |c| >= 2**100: declined (tested below)
APPLICABLE = [case + (kind,) for case in CASES for kind in KINDS
              if not (kind == "saturated" and case[0] in ("bf16", "tf32"))]


@pytest.mark.parametrize("fmt, b_fmt, acc, kind", APPLICABLE)
@pytest.mark.parametrize("return_flags", [False, "swamped"])
def test_matmul_matches_general_path(fmt, b_fmt, acc, kind, return_flags, used):
    rng = np.random.default_rng(zlib.crc32(repr((fmt, b_fmt, acc, kind)).encode()))
    a, b = _kinds_ab(rng, fmt, b_fmt, kind)
    c = sf.encode(rng.standard_normal((6, 10)), "fp32")
    for kw in ({}, {"out_format": "bf16"}, {"block": 40}, {"block": 64}, {"c": c}):
        _both(lambda: sf.matmul(a, b, fmt, b_format=b_fmt, accumulator=acc, return_flags=return_flags, **kw))
    assert used and all(used)


@pytest.mark.parametrize("K", [1, 31, 32, 33, 64, 96, 200])
def test_every_length_of_k(K, used):
    rng = np.random.default_rng(K)
    a = _operands(rng, "fp8_e4m3", (5, K), "wide")
    b = _operands(rng, "fp8_e4m3", (K, 7), "wide")
    for flags in (False, "swamped"):
        _both(lambda: sf.matmul(a, b, "fp8_e4m3", accumulator="h100", return_flags=flags))
    assert all(used)


def test_batches_and_tiles_larger_than_one_block_of_outputs(used):
    """A batched product whose outputs span several tiles (threads and tile slicing)."""
    rng = np.random.default_rng(7)
    a = _operands(rng, "fp8_e4m3", (3, 40, 96), "zeros")
    b = _operands(rng, "fp8_e4m3", (3, 96, 600), "normal")
    for flags in (False, "swamped"):
        _both(lambda: sf.matmul(a, b, "fp8_e4m3", accumulator="h100", return_flags=flags))
    assert len(used) > 3 and all(used)


def test_blocks_without_a_live_product_keep_c(used):
    """Whole blocks of zero products: M is c's exponent (or the floor where c is 0)."""
    a = sf.encode(np.array([[0.0] * 64 + [1.5] * 8, [-0.0] * 72]), "fp8_e4m3")
    b = sf.encode(np.full((72, 3), 0.75), "fp8_e4m3")
    for c in ([[3.0000002, 0.0, -7.25], [1e-20, -1e20, 0.0]], [[0.0] * 3] * 2):
        cbits = sf.encode(np.array(c), "fp32")
        for flags in (False, "swamped"):
            _both(lambda: sf.matmul(a, b, "fp8_e4m3", accumulator="h100", c=cbits, return_flags=flags))
    assert all(used)


@pytest.mark.parametrize("c_value", [-0.0, 2.0 ** -110, -(2.0 ** 101), float("inf")])
def test_declines_outside_its_bounds(c_value, used):
    """-0, tiny, huge and non-finite start values: declined, and the bits still right."""
    rng = np.random.default_rng(3)
    a = _operands(rng, "fp8_e4m3", (4, 40), "normal")
    b = _operands(rng, "fp8_e4m3", (40, 5), "normal")
    c = sf.encode(np.full((4, 5), c_value), "fp32")
    _both(lambda: sf.matmul(a, b, "fp8_e4m3", accumulator="h100", c=c))
    assert used and not any(used)


def test_declines_full_flags_and_answers_with_the_other_paths(used):
    rng = np.random.default_rng(4)
    a = _operands(rng, "fp8_e4m3", (4, 40), "normal")
    b = _operands(rng, "fp8_e4m3", (40, 5), "normal")
    bits, flags = sf.matmul(a, b, "fp8_e4m3", accumulator="h100", return_flags=True)
    assert used and not any(used)
    used.clear()
    fast, swamped = sf.matmul(a, b, "fp8_e4m3", accumulator="h100", return_flags="swamped")
    assert all(used)
    np.testing.assert_array_equal(fast, bits)
    np.testing.assert_array_equal(swamped, flags.swamped)


def test_sums_that_could_reach_2_to_the_100_decline(used):
    """bf16 operands near their largest values: the chain's bound on |c| fails, the
    other paths answer, with the same bits."""
    rng = np.random.default_rng(11)
    a = _operands(rng, "bf16", (4, 40), "saturated")
    b = _operands(rng, "bf16", (40, 5), "saturated")
    _both(lambda: sf.matmul(a, b, "bf16", accumulator="h100"))
    assert used and not any(used)
