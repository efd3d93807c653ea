"""softfloat.torch._accumulate.matmul_bits with ``order="reverse"`` and
``order="pairwise"``, and the fp16/bf16 accumulators' promotion blocks (``block=``),
against softfloat.matmul, the numpy reference: the same bits and swamped counts, with
the reference switched off so that the torch paths must answer."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import import_torch

torch = import_torch()

import softfloat as sf  # noqa: E402
from softfloat.torch import _accumulate  # noqa: E402
from tests.test_torch_accumulate import (_adversarial, _check, _check_swamped, _finite_patterns,  # noqa: E402
                                   _refuse, _swamping)

ORDER_CASES = [("fp16", None, "fp32"), ("bf16", None, "fp32"), ("fp8_e4m3", "fp8_e5m2", "fp32"),
               ("fp16", None, "fp16"), ("bf16", None, "bf16"), ("fp8_e4m3", None, "fp16"), ("fp16", "bf16", "bf16")]


@pytest.fixture
def device_only(monkeypatch):
    monkeypatch.setattr(_accumulate, "_reference", _refuse)


@pytest.mark.parametrize("fmt, b_format, accumulator", ORDER_CASES)
@pytest.mark.parametrize("block", [None, 1, 7, 16])
@pytest.mark.parametrize("order", ["reverse", "pairwise"])
def test_orders(device_only, fmt, b_format, accumulator, block, order):
    rng = np.random.default_rng(block or 0)
    bf = "bf16" in (fmt, b_format)
    a = _finite_patterns(rng, fmt, (4, 45), spread=6, subnormals=not bf)
    b = _finite_patterns(rng, b_format or fmt, (45, 5), spread=6, subnormals=not bf)
    _check(a, b, fmt, b_format=b_format, accumulator=accumulator, order=order, block=block)
    _check_swamped(a, b, fmt, b_format=b_format, accumulator=accumulator, order=order, block=block)


@pytest.mark.parametrize("accumulator", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("K", [1, 2, 3, 5, 8, 13, 64, 100])
def test_pairwise_trees_of_every_shape(device_only, monkeypatch, accumulator, K):
    """Odd nodes carried up at every level, and chunks of leaves smaller than K (the
    binary counter's merges): a small chunk budget forces them."""
    from softfloat.torch import _accumulate_pairwise
    monkeypatch.setattr(_accumulate_pairwise, "_BUDGET", 4 * 6)  # 4 leaves of the 6 outputs a chunk
    rng = np.random.default_rng(K)
    big = 2.0 ** 10
    a = _swamping(rng, "fp16", (3, K), big)
    b = np.abs(_finite_patterns(rng, "fp16", (K, 2), spread=1, subnormals=False)) & 0x7FFF
    c = sf.encode(np.array([[0.5, -3.0], [1e-3, 2048.0], [-0.0, 7.0]]), accumulator).astype(np.int64)
    for kw in ({}, {"c": c}, {"block": 3}, {"block": 3, "c": c}):
        _check(a, b, "fp16", accumulator=accumulator, order="pairwise", **kw)
        _check_swamped(a, b, "fp16", accumulator=accumulator, order="pairwise", **kw)


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e4m3"])
@pytest.mark.parametrize("accumulator", ["fp16", "bf16"])
@pytest.mark.parametrize("out_format", [None, "fp32", "fp16", "bf16"])
@pytest.mark.parametrize("block", [1, 5, 16, 100])
def test_narrow_promotion_blocks(device_only, fmt, accumulator, out_format, block):
    rng = np.random.default_rng(block * 7 + len(fmt))
    big = 2.0 ** 6 if fmt.startswith("fp8") else 2.0 ** 10
    a = _swamping(rng, fmt, (6, 70), big)  # a large term, then tiny ones: promotions absorb run sums
    b = np.abs(_finite_patterns(rng, fmt, (70, 5), spread=1, subnormals=False)) & ((1 << (sf.as_format(fmt).bits - 1)) - 1)
    for order in ("sequential", "reverse", "pairwise"):
        _check(a, b, fmt, accumulator=accumulator, out_format=out_format, block=block, order=order)
        _check_swamped(a, b, fmt, accumulator=accumulator, out_format=out_format, block=block, order=order)


@pytest.mark.parametrize("accumulator", ["fp16", "bf16"])
@pytest.mark.parametrize("K", [1, 15, 33])
def test_narrow_blocks_adversarial_and_with_c(device_only, accumulator, K):
    a, b = _adversarial("fp16", K, K + 2)  # cancellation, carries, alignment, subnormals, zeros
    out = accumulator
    c = sf.encode(np.linspace(-3, 3, a.shape[0] * b.shape[1]).reshape(a.shape[0], b.shape[1]), out).astype(np.int64)
    c[0, 0] = 1 << (sf.as_format(out).bits - 1)  # -0
    for block in (1, 4, 16):
        _check_swamped(a, b, "fp16", accumulator=accumulator, block=block)
        _check_swamped(a, b, "fp16", accumulator=accumulator, block=block, c=c)
        _check_swamped(a, b, "fp16", accumulator=accumulator, block=block, c=c[:1], order="reverse")
        _check_swamped(a, b, "fp16", accumulator=accumulator, block=block, c=c, order="pairwise")
    _check_swamped(a, b, "fp16", accumulator=accumulator, c=c, order="pairwise")


def test_narrow_blocks_overflow_and_stall(device_only):
    """fp16 runs that overflow to infinity (infinite totals absorb, uncounted), and a run
    sum of 2048 that the promotions' 1s cannot move."""
    big = sf.encode(np.array([[60000.0, 60000.0, 1.0, -60000.0, 2048.0, 1.0, 1.0, 1.0]]), "fp16").astype(np.int64)
    ones = sf.encode(np.ones((8, 2)), "fp16").astype(np.int64)
    for block in (1, 2, 3):
        for out in (None, "fp32"):
            _check_swamped(big, ones, "fp16", accumulator="fp16", block=block, out_format=out)


def test_the_rest_still_falls_back(monkeypatch):
    """fp64 promotions and rounding modes go to the reference (and give its bits); a
    hardware model's reverse order gets the reference's error."""
    calls = []
    real = _accumulate._reference
    monkeypatch.setattr(_accumulate, "_reference", lambda *a, **k: calls.append(1) or real(*a, **k))
    rng = np.random.default_rng(2)
    a, b = _finite_patterns(rng, "fp16", (3, 20), 4), _finite_patterns(rng, "fp16", (20, 4), 4)
    _check(a, b, "fp16", accumulator="fp16", order="pairwise", rounding="toward_zero")
    _check(a, b, "fp16", accumulator="fp16", block=4, out_format="fp64")
    with pytest.raises(ValueError, match="order='reverse' is not available with a hardware accumulator"):
        _accumulate.matmul_bits(torch.from_numpy(a), torch.from_numpy(b), "fp16", accumulator="h100", order="reverse")
    assert len(calls) == 3


@pytest.mark.parametrize("accumulator, order", [(acc, order) for acc in ("fp32", "bf16", "fp16", "h100")
                                                for order in ("sequential", "reverse", "pairwise")
                                                if not (acc == "h100" and order != "sequential")])  # no such order
def test_runs_overflowing_to_opposite_infinities_give_the_canonical_nan(monkeypatch, accumulator, order):
    """inf + -inf in a promotion is a NaN whose sign is the platform's (x86: negative);
    the reference returns the canonical positive NaN, and so must the device.  (bf16
    totals near float32's range are declined by the device: the reference answers.)"""
    if accumulator != "bf16":
        monkeypatch.setattr(_accumulate, "_reference", _refuse)
    fmt, big = ("fp16", 60000.0) if accumulator == "fp16" else ("bf16", 2.0 ** 127)
    a = sf.encode(np.array([[big, big, -big, -big, 1.0, 1.0], [big, big, 1.0, -big, -big, 3.0]]), fmt).astype(np.int64)
    b = sf.encode(np.ones((6, 2)), fmt).astype(np.int64)
    for block in (2, 3):
        _check(a, b, fmt, accumulator=accumulator, order=order, block=block)
        _check_swamped(a, b, fmt, accumulator=accumulator, order=order, block=block)


@pytest.mark.parametrize("fmt", ["fp16", "fp8_e4m3", "fp8_e5m2"])
@pytest.mark.parametrize("accumulator", ["fp8_e4m3", "fp8_e5m2"])
@pytest.mark.parametrize("out_format", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("order", ["sequential", "reverse", "pairwise"])
def test_fp8_accumulators(device_only, fmt, accumulator, out_format, order):
    """FP8 accumulators (an FP8 output is the reference's): swamping, exact cancellation,
    subnormals, and overflow -- e5m2 to infinity, e4m3 to a NaN whose sign lasts one
    step in the reference and comes out as the canonical NaN in every output format."""
    rng = np.random.default_rng(len(fmt) + len(order))
    big = 2.0 ** 6 if fmt.startswith("fp8") else 2.0 ** 10
    a = _swamping(rng, fmt, (6, 40), big)
    b = np.abs(_finite_patterns(rng, fmt, (40, 5), spread=2)) & ((1 << (sf.as_format(fmt).bits - 1)) - 1)
    huge = float(sf.as_format(fmt).max_finite) / 2
    over = sf.encode(np.array([[huge, -huge, -huge] + [1.0] * 37, [1.0] * 38 + [-huge, -huge]]), fmt).astype(np.int64)
    for block in (None, 3, 16):
        for x in (a, over):
            _check(x, b, fmt, accumulator=accumulator, out_format=out_format, order=order, block=block)
            _check_swamped(x, b, fmt, accumulator=accumulator, out_format=out_format, order=order, block=block)
