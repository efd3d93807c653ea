"""sum, vecdot and matmul: the seeds' phenomena, stochastic accumulation, shapes and errors.

The bit-for-bit conformance with an exact oracle lives in test_accumulate_oracle.py and
test_accumulate_hardware.py; the fast paths are checked against the general one in
test_accumulate_paths.py.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import softfloat as sf
from softfloat.accumulate import _orders, reduce
from tests.fastpath_checks import general

ONE16 = 0x3C00  # fp16 1.0: 0 01111 0000000000


def values(bits, fmt):
    return np.asarray(sf.decode(bits, fmt), dtype=np.float64)


# ---- the seeds' phenomena -------------------------------------------------------------
def test_fp16_running_sum_of_ones_stalls_at_2048():
    # above 2048 the fp16 spacing is 2: 2048 + 1 is a tie that goes to the even 2048
    ones = np.full(4096, ONE16, dtype=np.uint16)
    bits, flags = sf.sum(ones, "fp16", return_flags=True)
    assert int(bits) == 0x6800  # 2048 = 2**11: 0 11010 0000000000
    assert int(flags.swamped) == 4096 - 2048
    assert bool(flags.inexact) and not bool(flags.overflow)


def test_fp32_accumulator_reaches_4096():
    ones = np.full(4096, ONE16, dtype=np.uint16)
    bits, flags = sf.sum(ones, "fp16", accumulator="fp32", return_flags=True)
    assert int(bits) == 0x45800000  # 4096.0 in fp32
    assert int(flags.swamped) == 0 and not bool(flags.inexact)
    # ... and rounded back to fp16 at the end, 4096 is exact there too
    assert int(sf.sum(ones, "fp16", accumulator="fp32", out_format="fp16")) == 0x6C00


def test_update_2048_times_smaller_is_swamped_in_fp16_not_in_fp32():
    # the seeds' ratio: 1 + 2**-11 is a tie between 1 and 1 + 2**-10 in fp16
    w16, u16 = sf.encode(1.0, "fp16"), sf.encode(2.0**-11, "fp16")
    bits, flags = sf.sum(np.array([w16, u16]), "fp16", return_flags=True)
    assert int(bits) == ONE16 and int(flags.swamped) == 1
    assert float(values(sf.sum(np.array([w16, u16]), "fp16", accumulator="fp32"), "fp32")) == 1 + 2.0**-11


def test_fp16_accumulation_of_a_long_dot_product_loses_what_fp32_keeps():
    rng = np.random.default_rng(7)
    a = sf.encode(rng.uniform(0, 1, 8192), "fp16")
    b = sf.encode(rng.uniform(0, 1, 8192), "fp16")
    exact = math.fsum(Fraction(x) * Fraction(y) for x, y in zip(values(a, "fp16"), values(b, "fp16")))
    err16 = abs(float(values(sf.vecdot(a, b, "fp16", accumulator="fp16"), "fp16")) - exact) / exact
    err32 = abs(float(values(sf.vecdot(a, b, "fp16"), "fp32")) - exact) / exact
    assert err16 > 1e-2  # the fp16 running sum stalls once its spacing outgrows the products
    assert err32 < 1e-5
    # pairwise order keeps partial sums of similar size: much better even in fp16
    errp = abs(float(values(sf.vecdot(a, b, "fp16", accumulator="fp16", order="pairwise"), "fp16")) - exact) / exact
    assert errp < 2e-3


def test_stochastic_rounding_recovers_the_stalled_sum_on_average():
    # each 1 added above 2048 rounds up with probability 1/2 (distance 1 of a spacing 2)
    ones = np.full((4096, 64), ONE16, dtype=np.uint16)  # 64 sums, each with its own draws
    totals = values(sf.sum(ones, "fp16", axis=0, rounding="stochastic", rng=0), "fp16")
    # each of the 2048 steps above 2048 adds 0 or 2 with equal chances: sd 2 * sqrt(2048) / 2
    sd = math.sqrt(2048)
    assert abs(totals.mean() - 4096) < 4 * sd / math.sqrt(len(totals))
    assert totals.std() > 0.5 * sd  # genuinely random


# ---- stochastic accumulation: reproducible, independent of the internal blocking -----
@pytest.mark.parametrize("order", ["sequential", "reverse", "pairwise"])
def test_stochastic_is_reproducible_and_independent_of_tiles_and_chunks(order, monkeypatch):
    rng = np.random.default_rng(3)
    a = sf.encode(rng.standard_normal((9, 40)), "bf16")
    b = sf.encode(rng.standard_normal((40, 11)), "bf16")
    kwargs = dict(accumulator="bf16", rounding="stochastic", order=order, block=None, rng=1234)
    first = sf.matmul(a, b, "bf16", **kwargs)
    assert np.array_equal(first, sf.matmul(a, b, "bf16", **kwargs))
    assert not np.array_equal(first, sf.matmul(a, b, "bf16", **{**kwargs, "rng": 4321}))
    monkeypatch.setattr(reduce, "BLOCK_SIZE", 5)  # tiles of part of a row
    monkeypatch.setattr(_orders, "CHAIN_LANES", 3)
    monkeypatch.setattr(_orders, "PAIRWISE_LANES", 4)
    assert np.array_equal(first, sf.matmul(a, b, "bf16", **kwargs))
    # the same sums as dot products: a different layout, the same draws per output element
    rows = np.repeat(a[:, None, :], 11, axis=1)
    cols = np.repeat(b.T[None, :, :], 9, axis=0)
    assert np.array_equal(first, sf.vecdot(rows, cols, "bf16", **kwargs))


def test_stochastic_sum_is_unbiased_against_the_exact_sum():
    rng = np.random.default_rng(11)
    x = sf.encode(rng.uniform(0.5, 1.5, 300), "bf16")
    exact = math.fsum(values(x, "bf16"))
    copies = np.repeat(x[:, None], 100, axis=1)  # 100 sums of the same terms, own draws each
    totals = values(sf.sum(copies, "bf16", axis=0, rounding="stochastic", rng=2), "bf16")
    # each step's rounding error has mean 0 and |error| < one spacing (<= 2 near 300)
    bound = 4 * 2 * math.sqrt(300) / math.sqrt(len(totals))
    assert abs(totals.mean() - exact) < bound
    nearest = float(values(sf.sum(x, "bf16"), "bf16"))
    assert abs(nearest - exact) > abs(totals.mean() - exact)  # nearest's bias shows


def test_rng_generator_is_advanced_reproducibly():
    x = sf.encode(np.linspace(1, 2, 50), "fp8_e4m3")
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    r1 = [sf.sum(x, "fp8_e4m3", rounding="stochastic", rng=g1) for _ in range(3)]
    r2 = [sf.sum(x, "fp8_e4m3", rounding="stochastic", rng=g2) for _ in range(3)]
    assert r1 == r2


# ---- shapes follow numpy --------------------------------------------------------------
@pytest.mark.parametrize("sa, sb", [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
                                    ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (5, 4, 2)), ((3, 0), (0, 2)),
                                    ((3, 4), (4, 0)), ((0, 4), (4, 2)), ((2, 3, 4), (4, 0))])
@pytest.mark.parametrize("accumulator", ["fp32", "fp16", "h100"])
def test_matmul_shapes_and_values_follow_numpy(sa, sb, accumulator):
    rng = np.random.default_rng(0)
    a = rng.integers(-4, 5, sa).astype(np.float64)
    b = rng.integers(-4, 5, sb).astype(np.float64)
    got = sf.matmul(sf.encode(a, "fp16"), sf.encode(b, "fp16"), "fp16", accumulator=accumulator, out_format="fp32")
    expected = np.matmul(a, b)  # small integers: every order and format is exact
    assert np.shape(got) == expected.shape
    assert np.array_equal(values(got, "fp32"), expected)


def test_vecdot_broadcasts_and_contracts_the_axis():
    rng = np.random.default_rng(1)
    a = rng.integers(-3, 4, (2, 1, 5)).astype(np.float64)
    b = rng.integers(-3, 4, (3, 5)).astype(np.float64)
    got = sf.vecdot(sf.encode(a, "bf16"), sf.encode(b, "bf16"), "bf16")
    assert np.array_equal(values(got, "fp32"), np.sum(a * b, axis=-1))
    at, bt = a.T, b.T[:, :, None]  # (5, 1, 2) and (5, 3, 1): contract axis 0
    got0 = sf.vecdot(sf.encode(at, "bf16"), sf.encode(bt, "bf16"), "bf16", axis=0)
    assert np.array_equal(values(got0, "fp32"), np.sum(at * bt, axis=0))  # shape (3, 2)


@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, False), (1, True), ((0, 2), False),
                                            ((0, 2), True), (-1, False)])
def test_sum_axes_follow_numpy(axis, keepdims):
    x = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    got = sf.sum(sf.encode(x, "fp32"), "fp32", axis=axis, keepdims=keepdims)
    expected = np.sum(x, axis=axis, keepdims=keepdims)
    assert np.shape(got) == np.shape(expected)
    assert np.array_equal(values(got, "fp32"), expected)


def test_empty_sums_give_c_or_plus_zero():
    empty = np.zeros(0, dtype=np.uint16)
    assert int(sf.sum(empty, "fp16")) == 0
    assert int(sf.sum(empty, "fp16", c=0xBC00)) == 0xBC00  # -1.0 kept exactly
    assert sf.matmul(np.zeros((2, 0), np.uint16), np.zeros((0, 3), np.uint16), "fp16").tolist() == [[0] * 3] * 2


def test_nan_results_are_the_canonical_nan_of_out_format():
    inf, minus_inf = 0x7C00, 0xFC00
    bits, flags = sf.sum(np.array([inf, minus_inf, ONE16]), "fp16", return_flags=True)
    assert int(bits) == 0x7E00 and bool(flags.invalid)
    bits = sf.vecdot(np.array([0x0000]), np.array([inf]), "fp16")  # 0 * inf into fp32
    assert int(bits) == 0x7FC00000
    snan = 0x7D00  # fp16 signalling NaN with payload: quiet bit clear
    bits, flags = sf.sum(np.array([snan, ONE16]), "fp16", accumulator="fp32", return_flags=True)
    assert int(bits) == 0x7FC00000 and bool(flags.invalid)


def test_inputs_are_not_modified():
    a = sf.encode(np.linspace(-3, 3, 12).reshape(3, 4), "fp16")
    b = sf.encode(np.linspace(-1, 1, 8).reshape(4, 2), "fp16")
    a0, b0 = a.copy(), b.copy()
    for acc in ("fp32", "fp16", "h100"):
        sf.matmul(a, b, "fp16", accumulator=acc, return_flags=True)
        sf.sum(a, "fp16", accumulator=acc if acc != "h100" else "fp32", order="pairwise")
    assert np.array_equal(a, a0) and np.array_equal(b, b0)


def test_flags_summary_names_swamping():
    # c = 2048 and eight products 1 * 1: each 2048 + 1 is a tie that stays at 2048
    ones = np.full(8, ONE16, dtype=np.uint16)
    bits, flags = sf.vecdot(ones, ones, "fp16", accumulator="fp16", c=0x6800, return_flags=True)
    assert int(bits) == 0x6800
    assert isinstance(flags, sf.AccumulationFlags) and int(flags.swamped) == 8
    assert "swamped additions: 8, in 1 of 1 (100.0%)" in flags.summary()


# ---- errors name the argument ----------------------------------------------------------
@pytest.mark.parametrize("call, exc, words", [
    (lambda: sf.matmul(np.zeros((2, 3), np.uint16), np.zeros((4, 2), np.uint16), "fp16"),
     ValueError, ["3 columns", "4 rows"]),
    (lambda: sf.vecdot(np.zeros(3, np.uint16), np.zeros(4, np.uint16), "fp16"), ValueError, ["length 3", "4"]),
    (lambda: sf.sum(np.array([0x10000]), "fp16"), ValueError, ["x", "16 bits"]),
    (lambda: sf.matmul(np.zeros((2, 2)), np.zeros((2, 2), np.uint16), "fp16"), TypeError, ["a", "dtype float64"]),
    (lambda: sf.sum(np.zeros(3, np.uint16), "fp16", accumulator="fp12"), ValueError, ["accumulator", "h100"]),
    (lambda: sf.sum(np.zeros(3, np.uint16), "fp16", accumulator=3), TypeError, ["accumulator"]),
    (lambda: sf.matmul(np.zeros((2, 3), np.uint16), np.zeros((3, 2), np.uint16), "fp16", c=np.zeros(3, np.uint32)),
     ValueError, ["c of shape (3,)", "(2, 2)"]),
    (lambda: sf.sum(np.zeros(3, np.uint16), "fp16", order="random"), ValueError, ["order", "pairwise"]),
    (lambda: sf.sum(np.zeros(3, np.uint16), "fp16", block=0), ValueError, ["block"]),
    (lambda: sf.sum(np.zeros(3, np.uint16), "fp16", axis=2), ValueError, ["axis 2"]),
    (lambda: sf.matmul(np.zeros((2, 2), np.uint32), np.zeros((2, 2), np.uint32), "tf32", accumulator="v100"),
     ValueError, ["v100", "fp16"]),
    (lambda: sf.matmul(np.zeros((2, 2), np.uint16), np.zeros((2, 2), np.uint16), "fp16", accumulator="h100",
                       order="pairwise"), ValueError, ["pairwise", "hardware"]),
    (lambda: sf.matmul(np.zeros((2, 2), np.uint16), np.zeros((2, 2), np.uint16), "fp16", accumulator="h100",
                       product="fp16"), ValueError, ["product", "exact"]),
    (lambda: sf.sum(np.zeros(3, np.uint16), "fp16", rounding="nearest"), ValueError, ["rounding"]),
    (lambda: sf.sum(np.zeros(3, np.uint16), "fp16", product="fp16"), TypeError, ["product", "vecdot"]),
])
def test_bad_input_gets_a_clear_error(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    for word in words:
        assert word in str(info.value)



@pytest.mark.parametrize("fmt, acc, mode", [("fp32", "fp32", "stochastic"), ("fp16", "fp64", "nearest_even"),
                                            ("fp64", "fp64", "upward"), ("bf16", "bf16", "stochastic")])
@pytest.mark.parametrize("kind", ["sum", "vecdot"])
def test_a_nan_lane_stays_nan_beside_a_lane_rounded_from_significands(fmt, acc, mode, kind):
    """A step whose exact sum is a pair hi + lo (lo != 0: huge + tiny) goes to the rounding
    point as significands in fp64 and in stochastic rounding, which leaves NaN lanes to
    the caller: the NaN column must still sum to NaN (no invalid: a NaN passed on), and
    the other column be what it is alone, with the shortcuts on and off."""
    huge, tiny = {"fp16": (60000.0, 2.0 ** -24), "fp64": (1e300, 1e-300)}.get(fmt, (2.0 ** 100, 2.0 ** -100))
    x = np.asarray(sf.encode(np.array([[huge, huge], [np.nan, tiny], [1.0, 1.0]]), fmt))
    kw = dict(accumulator=acc, rounding=mode, rng=1, return_flags=True)
    func = sf.sum if kind == "sum" else (lambda x, fmt, **kw: sf.vecdot(x, x, fmt, **kw))
    alone = general(lambda: func(x[:, 1], fmt, **kw))[0]
    for run in (lambda f: f(), general):
        bits, flags = run(lambda: func(x, fmt, axis=0, **kw))
        assert np.isnan(values(bits[:1], acc)[0])
        assert bits[1] == alone and not flags.invalid[0]
