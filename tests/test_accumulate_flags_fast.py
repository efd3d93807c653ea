"""The flags and swamped counts of the native plans (softfloat.accumulate._fast: numpy's
own arithmetic, its flags worked out from the running sums) against the general path,
which rounds every step by the operations' kernels: bit for bit, all five flags and every
swamped count, on data made to raise each flag."""

from __future__ import annotations

import numpy as np
import pytest

import softfloat as sf
from tests.accumulate_checks import adversarial_operands
from tests.fastpath_checks import assert_same, general

F16 = np.float16


def _bits(values, fmt):
    return sf.encode(np.asarray(values, dtype=np.float64), fmt)


@pytest.mark.parametrize("fmt, acc", [("fp16", "fp32"), ("fp16", "fp16"), ("bf16", "fp32"),
                                      ("fp8_e4m3", "fp32"), ("fp16", "fp64")])
@pytest.mark.parametrize("order", ["sequential", "reverse", "pairwise"])
@pytest.mark.parametrize("N", [9, 80])  # narrow tiles (accumulate) and row-wise running sums
def test_matmul_flagsadversarial_operands(fmt, acc, order, N):
    rng = np.random.default_rng(N)
    a, b = adversarial_operands(rng, 6, 40, N)
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
    a, b = adversarial_operands(rng, 6, 40, 80)
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
def test_sum_and_vecdot_flagsadversarial_operands(acc, order):
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


def _gap_data(rng, M, K, N):
    """bf16 factors whose products into fp32 stay exact for long runs (small integers),
    with, in chosen columns, steps that only one of the two inexact tests sees, placed
    at chosen steps (before and after chunk boundaries):

    * a tiny running sum (2**-40) met by a term of 1, gap 40 bits > 29: r = 1 = b, and
      r - a rounds to b -- only r - b != a shows it inexact;
    * a term of 2**-30 on a sum near 1 (gap > 29: swamped, r == a);
    * a term of 2**-20 on a sum of 1 (gap 20: exact, 1 + 2**-20 fits 24 bits) and of
      2**-24 (inexact by rounding, not swamped when it ties to odd... or swamped);
    * cancellation to +0 and a -0 product on a zero sum."""
    a = rng.integers(-3, 4, (M, K)).astype(np.float64)
    b = rng.integers(-3, 4, (K, N)).astype(np.float64)
    a[0] = 1.0
    b[:, 0] = 0.0
    b[:5, 0] = [2.0 ** -40, 1.0, 0.0, 0.0, -1.0]  # tiny sum, then a huge term
    late = min(K - 1, 700)
    b[:, 1] = 0.0
    b[late - 1, 1], b[late, 1] = 2.0 ** -40, 1.0  # the same, late in k
    b[:, 2] = 0.0
    b[0, 2] = 1.0
    b[late, 2] = 2.0 ** -30  # swamped
    b[:, 3] = 0.0
    b[0, 3], b[3, 3] = 1.0, 2.0 ** -20  # exact
    b[:, 4] = 0.0
    b[0, 4], b[9, 4], b[10, 4] = 3.0, -3.0, -0.0  # cancellation to +0, then -0
    b[:, 5] = 0.0
    b[0, 5], b[K // 2, 5] = 1.0 + 2.0 ** -7, 2.0 ** -24  # a rounding step mid-way
    b[:, 6] = -0.0  # every product of row 0 -0
    return a, b


@pytest.mark.parametrize("M, K, N", [(3, 40, 9), (2, 900, 8), (20, 900, 1024), (1, 1200, 300), (40, 300, 64)])
@pytest.mark.parametrize("order", ["sequential", "reverse"])
def test_matmul_flags_exponent_gaps(M, K, N, order):
    """Steps seen inexact by only one of (r - a != b) and (r - b != a), among columns
    exact for hundreds of steps: whole-row and gathered checks, one and many chunks,
    tiles with column counts that are and are not multiples of 8."""
    rng = np.random.default_rng(K + N)
    a, b = _gap_data(rng, M, K, N)
    A, B = _bits(a, "bf16"), _bits(b, "bf16")
    for kw in ({}, {"c": _bits(np.full(N, -0.0), "fp32")}):
        def call():
            return sf.matmul(A, B, "bf16", accumulator="fp32", order=order, return_flags=True, **kw)
        fast, slow = call(), general(call)
        assert_same(fast, slow)
    if order == "sequential":  # the data raises what it is meant to (general path)
        _, fl = slow
        assert fl.inexact[0, 0] and fl.inexact[0, 1] and fl.inexact[0, 2] and fl.swamped[0, 2] >= 1
        assert not fl.inexact[0, 3] and not fl.inexact[0, 4]


def test_matmul_flags_mostly_exact_columns():
    """Many outputs exact after every step (so the inexact check runs to the end of each
    chunk over many columns) beside a few that turn inexact in late chunks, by a gap of
    over 29 bits in either direction."""
    rng = np.random.default_rng(5)
    K, N = 1500, 512
    a = rng.integers(-2, 3, (16, K)).astype(np.float64)
    b = rng.integers(-2, 3, (K, N)).astype(np.float64)
    cols = rng.choice(N, 40, replace=False)
    steps = rng.integers(1, K, 40)
    b[steps[:20], cols[:20]] = 2.0 ** -35  # swamped by the running sum (or not: a zero sum)
    a[:, 0] = 2.0 ** -38  # first products tiny: later ones of order 1 swamp the sum
    A, B = _bits(a, "bf16"), _bits(b, "bf16")

    def call():
        return sf.matmul(A, B, "bf16", accumulator="fp32", return_flags=True)
    fast, slow = call(), general(call)
    assert_same(fast, slow)
    assert slow[1].inexact.any() and not slow[1].inexact.all()


@pytest.mark.parametrize("N", [64, 1024])
def test_matmul_flags_one_test_among_inexact(N):
    """Columns that only (r - b != a) shows inexact (a tiny sum met by a term 2**40
    times larger) among columns that (r - a != b) settles at once (terms of wide-ranging
    magnitudes): the few columns left are checked on their own."""
    rng = np.random.default_rng(N)
    K = 40
    a = rng.standard_normal((2, K))
    a[0] = 1.0
    b = rng.standard_normal((K, N)) * 2.0 ** rng.integers(-30, 31, (K, N))
    b[:4] = 0.0  # the first steps exact everywhere: every column is still to be checked
    for j in range(0, N, 32):  # 1 in 32 columns: zeros (or -0), 2**-40, 1, zeros
        b[:, j] = -0.0 if j % 64 else 0.0
        k = j % 7 + 4
        b[k, j], b[k + 1, j] = 2.0 ** -40, -1.0 if j % 3 else 1.0
    A, B = _bits(a, "bf16"), _bits(b, "bf16")
    for order in ("sequential", "reverse"):
        def call():
            return sf.matmul(A, B, "bf16", accumulator="fp32", order=order, return_flags=True)
        fast, slow = call(), general(call)
        assert_same(fast, slow)
        assert slow[1].inexact[0, ::32].all()
