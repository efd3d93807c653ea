"""Reductions of small Arrays into one output by the lean lanes: fp32 dot products
(fp32 x fp32 into fp32: every product rounds in the accumulator, so numpy's float32
arithmetic is not the definition) step by step on Python floats
(softfloat.accumulate._few.short_chain, its terms by numpy's widening of fp32's own
dtype) -- the same bits, flags and swamped counts as the general path with every
shortcut off, and the exact reference (MPFR, tests/accumulate_oracle.py)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import softfloat as sf
from softfloat.accumulate import _few

from tests.accumulate_checks import check, random_patterns
from tests.fastpath_checks import answers_of, assert_call_like_general, assert_same, general

MODES = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd"]
FP32 = sf.as_format("fp32")


def _operands(seed: int, n: int, specials: float):
    """Two fp32 pattern vectors of n elements whose products interact (a shared exponent
    range, ties, cancellations, zeros), with infinities and NaNs at rate ``specials``;
    every few seeds one tiny enough that the running sums are subnormal."""
    rng = np.random.default_rng(seed)
    center = -70 if seed % 3 == 0 else 0
    a = random_patterns(rng, FP32, (n,), center=center, specials=specials)
    b = random_patterns(rng, FP32, (n,), center=center, specials=specials)
    return a, b


@pytest.mark.parametrize("tininess", ["after", "before"])
@pytest.mark.parametrize("rounding", MODES)
def test_fp32_dot_products_into_one_output_equal_the_general_path_and_mpfr(monkeypatch, rounding, tininess):
    taken = answers_of(monkeypatch, _few, "short_chain")
    opts = {"rounding": rounding, "tininess": tininess}
    for seed in range(24):
        n = (1, 2, 3, 8, 17, 64)[seed % 6]
        a, b = _operands(zlib.crc32(f"{rounding}{tininess}{seed}".encode()), n, 0.05 if seed % 4 == 3 else 0.0)
        for call in (lambda: sf.vecdot(a, b, "fp32", return_flags=True, **opts),
                     lambda: sf.matmul(a, b, "fp32", return_flags=True, **opts),
                     lambda: sf.matmul(a[None, :], b[:, None], "fp32", return_flags=True, **opts)):
            assert_same(call(), general(call))
        if seed % 4 != 3:  # (finite terms: the reference's chain)
            check("vecdot", a, b, "fp32", **opts)
    assert any(found is not None for found in taken)  # the lean lane ran


def test_fp32_dot_products_with_swamped_counts_only_and_out_format_equal_the_general_path():
    for seed in range(12):
        a, b = _operands(zlib.crc32(f"swamped{seed}".encode()), 8, 0.0)
        for call in (lambda: sf.vecdot(a, b, "fp32", return_flags="swamped"),
                     lambda: sf.vecdot(a, b, "fp32", out_format="bf16", return_flags=True),
                     lambda: sf.vecdot(a, b, "fp32", order="reverse", return_flags=True),
                     lambda: sf.vecdot(a, b, "fp32")):
            assert_same(call(), general(call))


def test_fp32_array_dot_products_count_and_trap_as_the_general_path():
    """x @ y and np.dot of fp32 Arrays: bits, the context's counts, and each trap's
    signal (operation and count) on both paths."""
    for seed in range(8):
        a, b = _operands(zlib.crc32(f"array{seed}".encode()), 8, 0.1 if seed % 2 else 0.0)
        x, y = sf.Array.from_bits(a, "fp32"), sf.Array.from_bits(b, "fp32")
        for fn in (lambda: x @ y, lambda: np.dot(x, y)):
            assert_call_like_general(fn)
            for flag in sf.FLAG_NAMES:
                outcomes = []
                for run in (fn, lambda: general(fn)):
                    with sf.context(traps={flag}):
                        try:
                            run()
                            outcomes.append(None)
                        except sf.FloatingPointSignal as signal:
                            outcomes.append((type(signal), signal.operation, signal.count))
                assert outcomes[0] == outcomes[1], flag
