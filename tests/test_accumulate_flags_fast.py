"""The flags and swamped counts of the native plans (softfloat.accumulate._fast: numpy's
own arithmetic, its flags worked out from the running sums) against the general path,
which rounds every step by the operations' kernels: bit for bit, all five flags and every
swamped count, on data made to raise each flag."""

from __future__ import annotations

import numpy as np
import pytest

import softfloat as sf
from tests.fastpath_checks import assert_same, general

F16 = np.float16


def _bits(values, fmt):
    return sf.encode(np.asarray(values, dtype=np.float64), fmt)


def _adversarial(rng, M, K, N):
    """A (M, K) and B (K, N) of values whose products into fp16/fp32 accumulators cancel
    to zero, swamp, overflow, meet inf - inf and NaN, pass through subnormals and -0."""
    a = rng.standard_normal((M, K))
    b = rng.standard_normal((K, N))
    a[a < -0.5] = 0.0  # ReLU-like zero factors (zero terms are never swamped)
    b[:, 0] = 0.0
    b[:, 1] = -0.0
    # swamping: 2048 + 1 + 1 + ... in an fp16 accumulator; cancellation back to zero
    a[0, :] = 1.0
    b[:, 2] = 1.0
    b[0, 2] = 2048.0
    b[:, 3] = 0.0
    b[0, 3], b[1, 3], b[2, 3] = 3.0, -3.0, -0.0
    # overflow to inf in fp16 (and in fp32 with larger values below)
    b[:, 4] = 60000.0
    # inf - inf, NaN terms
    b[0, 5], b[1, 5] = np.inf, -np.inf
    b[3, 6] = np.nan
    b[2, 7] = np.inf
    # subnormal partial sums: tiny terms that cancel into the subnormal range
    b[:, 8] = 2.0 ** -20
    b[::2, 8] = -(2.0 ** -20) * (1 + 2.0 ** -10)
    return a, b


@pytest.mark.parametrize("fmt, acc", [("fp16", "fp32"), ("fp16", "fp16"), ("bf16", "fp32"),
                                      ("fp8_e4m3", "fp32"), ("fp16", "fp64")])
@pytest.mark.parametrize("order", ["sequential", "reverse", "pairwise"])
@pytest.mark.parametrize("N", [9, 80])  # narrow tiles (accumulate) and row-wise running sums
def test_matmul_flags_adversarial(fmt, acc, order, N):
    rng = np.random.default_rng(N)
    a, b = _adversarial(rng, 6, 40, N)
    if fmt == "fp8_e4m3":
        a, b = np.nan_to_num(a, nan=0, posinf=448, neginf=-448), np.nan_to_num(b, nan=0, posinf=448, neginf=-448)
        b = np.clip(b, -448, 448)
    A, B = _bits(a, fmt), _bits(b, fmt)
    for kw in ({}, {"c": _bits(np.full(N, -0.0), acc)}, {"block": 8} if order != "pairwise" else {}):
        def call():
            return sf.matmul(A, B, fmt, accumulator=acc, order=order, return_flags=True, **kw)
        fast, slow = call(), general(call)
        assert_same(fast, slow)


def test_matmul_flags_raise_each_flag():
    """The data above does raise what it is meant to (on the general path): the
    comparisons are not of all-clear flags."""
    rng = np.random.default_rng(0)
    a, b = _adversarial(rng, 6, 40, 80)
    A, B = _bits(a, "fp16"), _bits(b, "fp16")
    _, fl = general(lambda: sf.matmul(A, B, "fp16", accumulator="fp16", return_flags=True))
    assert fl.swamped[0, 2] >= 38  # 2048 + 1 + 1 ... in fp16 stays 2048
    assert fl.overflow.any() and fl.invalid.any() and fl.inexact.any()
    assert not fl.inexact[0, 3]  # 3 - 3 - 0: exact, +0
    _, fl32 = general(lambda: sf.matmul(A, B, "fp16", accumulator="fp32", return_flags=True))
    assert fl32.invalid[0, 5] and not fl32.swamped[0, 2]


@pytest.mark.parametrize("acc", ["fp32", "fp16"])
def test_matmul_flags_large_values_overflow_fp32(acc):
    """Finite products whose running sums overflow (fp32: bf16 values near 2**63 and
    their squares near fp32's max)."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, 300)) * 2.0 ** 63
    b = np.abs(rng.standard_normal((300, 70))) * 2.0 ** 63
    a[1] = np.abs(a[1])
    A, B = _bits(a, "bf16"), _bits(b, "bf16")
    fmt_acc = "fp32" if acc == "fp32" else "fp32"

    def call():
        return sf.matmul(A, B, "bf16", accumulator=fmt_acc, return_flags=True)
    fast, slow = call(), general(call)
    assert_same(fast, slow)
    assert slow[1].overflow.any()


@pytest.mark.parametrize("acc", ["fp16", "fp32"])
@pytest.mark.parametrize("order", ["sequential", "reverse"])
def test_sum_and_vecdot_flags_adversarial(acc, order):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((50, 70)).astype(F16).astype(np.float64)
    x[:, 0] = [2048.0] + [1.0] * 49
    x[:, 1] = 0.0
    x[0, 1] = -0.0
    x[:, 2] = 2.0 ** -24
    x[1::2, 2] = -(2.0 ** -23)
    x[:, 3] = 60000.0
    x[4, 4], x[9, 4] = np.inf, -np.inf
    x[5, 5] = np.nan
    X = _bits(x, "fp16")
    for call in (lambda: sf.sum(X, "fp16", axis=0, accumulator=acc, order=order, return_flags=True),
                 lambda: sf.vecdot(X.T, X.T[::-1], "fp16", accumulator=acc, order=order, return_flags=True)):
        assert_same(call(), general(call))


def test_matmul_flags_random_many_outputs():
    """Several tiles and chunks of k, an output still exact after many steps (integers)."""
    rng = np.random.default_rng(11)
    a = rng.standard_normal((40, 600))
    b = rng.standard_normal((600, 500))
    a[3] = rng.integers(-4, 5, 600)
    b[:, 7] = rng.integers(-4, 5, 600)
    A, B = _bits(a, "bf16"), _bits(b, "bf16")

    def call():
        return sf.matmul(A, B, "bf16", accumulator="fp32", return_flags=True)
    fast, slow = call(), general(call)
    assert_same(fast, slow)
    assert not slow[1].inexact[3, 7]


@pytest.mark.parametrize("flags", [False, True])
@pytest.mark.parametrize("shape", [(6, 9), (4, 200), (200, 4)])
def test_matmul_negative_zero_sums(flags, shape):
    """Sums of -0 products are -0 (products of zeros and negative values, a start of -0),
    with and without flags, on wide, narrow and transposed tiles."""
    M, N = shape
    rng = np.random.default_rng(M)
    a = np.abs(rng.standard_normal((M, 50)))
    b = -np.abs(rng.standard_normal((50, N)))
    a[0] = 0.0  # row 0: every product -0
    b[:, 1] = -0.0  # column 1: every product -0 (0 * -0 = +0 in row 0 beside)
    b[3, 2] = 0.0
    A, B = _bits(a, "bf16"), _bits(b, "bf16")
    for kw in ({}, {"c": _bits(np.full(N, -0.0), "fp32")}, {"c": _bits(np.zeros(N), "fp32")}):
        def call():
            return sf.matmul(A, B, "bf16", accumulator="fp32", return_flags=flags, **kw)
        fast, slow = call(), general(call)
        assert_same(fast, slow)
        values = sf.decode(slow[0] if flags else slow, "fp32")
        assert np.signbit(values[0, 0]) == (kw.get("c") is None or np.signbit(sf.decode(kw["c"], "fp32")[0]))
