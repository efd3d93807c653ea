"""Small matrix products without the tiles (softfloat.accumulate._few.matrix_product) and
dot products of bf16 and tf32 vectors whose products the data shows exact in fp32
(softfloat.accumulate._few.one_output): the same bits, flags and swamped counts as the
general path with every shortcut off; and numpy's own float16 matmul (an fp32 running
sum, rounded once to float16) as an oracle outside the code."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import softfloat as sf
from softfloat.accumulate import _few

from tests.accumulate_checks import REFS, check, random_patterns
from tests.fastpath_checks import answers_of, assert_same, general

FORMATS = ["fp16", "bf16", "tf32", "fp8_e4m3", "fp8_e5m2", "fp4_e2m1", "fp32"]
SPECIALS = [np.inf, -np.inf, np.nan, 0.0, -0.0]


def _spy(monkeypatch, name):
    """The answers softfloat.accumulate._few.<name> gives from now on (None: declined)."""
    return answers_of(monkeypatch, _few, name)


@st.composite
def small_products(draw):
    fmt = draw(st.sampled_from(FORMATS))
    M, K, N = (draw(st.integers(1, 9)) for _ in range(3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = draw(st.sampled_from([1e-30, 1e-6, 1.0, 1e3, 3e4, 1e20]))
    values = [rng.standard_normal(shape) * scale for shape in ((M, K), (K, N))]
    if draw(st.booleans()):  # small integers: exact steps, swamping, cancellation, zeros
        values = [np.round(v / scale * 4) for v in values]
    if draw(st.integers(0, 3)) == 0:  # an infinity or NaN (declined: the general path's rules)
        values[0].flat[rng.integers(0, M * K)] = draw(st.sampled_from(SPECIALS))
    if draw(st.booleans()):  # all-zero products of both signs: the sign of a zero sum
        values[1][:, 0] = draw(st.sampled_from([0.0, -0.0]))
    a, b = (np.asarray(sf.encode(v, fmt)) for v in values)
    a = a[0] if draw(st.booleans()) else a  # a row vector (K,) @ (K, N)
    b = b[:, 0] if draw(st.booleans()) else b  # (M, K) @ a column vector (K,)
    kw = dict(accumulator=draw(st.sampled_from([None, "fp32", "fp16", "fp64"])),
              order=draw(st.sampled_from(["sequential", "sequential", "reverse", "pairwise"])),
              return_flags=draw(st.sampled_from([False, True, "swamped"])))
    kw.update(draw(st.sampled_from([{}, {}, {}, {"tininess": "before"}, {"saturate": True}, {"subnormals": False},
                                    {"rounding": "toward_zero"}])))
    if fmt in ("fp32", "tf32") and kw["accumulator"] == "fp16":
        kw["accumulator"] = "fp32"
    if draw(st.booleans()):  # a narrower result: each last running sum rounded once into it
        kw["out_format"] = draw(st.sampled_from(["fp16", "bf16", "fp8_e4m3", "fp8_e4m3fnuz"]))
    return a, b, fmt, kw


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_products())
def test_small_matrix_products_equal_the_general_path(case):
    a, b, fmt, kw = case
    call = (lambda: sf.matmul(a, b, fmt, **kw))
    assert_same(call(), general(call))


@pytest.mark.parametrize("fmt", ["fp16", "fp8_e4m3", "bf16"])
def test_the_short_path_ran_and_the_switch_turns_it_off(monkeypatch, fmt):
    found = _spy(monkeypatch, "matrix_product")
    rng = np.random.default_rng(3)
    a, b = (np.asarray(sf.encode(rng.standard_normal(s), fmt)) for s in ((5, 7), (7, 3)))
    for flags in (False, True, "swamped"):
        sf.matmul(a, b, fmt, return_flags=flags)
    assert len(found) == 3 and all(f is not None for f in found)
    found.clear()
    general(lambda: sf.matmul(a, b, fmt))
    assert found == [None]


def test_bf16_products_outside_fp32_round_in_each_step(monkeypatch):
    """A product below fp32's smallest subnormal (2**-130 * 2**-30) is no value of the
    accumulator: the steps round (softfloat.accumulate._odd), with the general path's
    bits and flags and the exact reference's."""
    found = _spy(monkeypatch, "matrix_product")
    a = np.asarray(sf.encode([[2.0**-130, 1.0], [3.0, 2.0**-100]], "bf16"))
    b = np.asarray(sf.encode([[2.0**-30, 1.5], [0.25, 2.0**-40]], "bf16"))
    call = (lambda: sf.matmul(a, b, "bf16", return_flags=True))
    bits, flags = call()
    assert found[0] is not None
    assert_same((bits, flags), general(call))
    check("matmul", a, b, "bf16")
    assert flags.inexact[0, 0]  # 2**-160 lost beside 0.25


PAIRS = [("fp8_e4m3", "fp8_e5m2"), ("fp8_e5m2", "fp8_e4m3"), ("fp8_e4m3", "fp16"), ("fp16", "bf16"),
         ("bf16", "fp8_e5m2"), ("fp4_e2m1", "fp8_e4m3")]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PAIRS), st.integers(1, 9), st.integers(1, 9), st.integers(1, 9), st.integers(0, 2**32 - 1),
       st.sampled_from([1e-30, 1e-6, 1.0, 1e3, 3e4]), st.sampled_from([None, "fp32", "fp64"]),
       st.sampled_from(["sequential", "reverse", "pairwise"]), st.sampled_from([False, True, "swamped"]),
       st.sampled_from([{}, {}, {"out_format": "bf16"}, {"out_format": "fp8_e4m3"}, {"saturate": True},
                        {"tininess": "before"}]), st.integers(0, 3))
def test_small_products_of_two_formats_equal_the_general_path(pair, M, K, N, seed, scale, acc, order, flags,
                                                               extra, special):
    fa, fb = pair
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal((M, K)) * scale, rng.standard_normal((K, N)) * scale
    if special == 0:  # an infinity or NaN (declined: the general path's rules)
        x.flat[rng.integers(0, M * K)] = SPECIALS[seed % len(SPECIALS)]
    a, b = np.asarray(sf.encode(x, fa)), np.asarray(sf.encode(y, fb))
    call = (lambda: sf.matmul(a, b, fa, b_format=fb, accumulator=acc, order=order, return_flags=flags, **extra))
    assert_same(call(), general(call))


@pytest.mark.parametrize("pair, taken", [(("fp8_e4m3", "fp8_e5m2"), True), (("fp8_e5m2", "fp8_e4m3"), True),
                                         (("fp16", "bf16"), False)])
def test_products_of_two_formats_take_the_short_path_where_they_fit(monkeypatch, pair, taken):
    """e4m3 x e5m2 products (4 + 3 bits, last bit at 2**-25 or above) are fp32 values;
    fp16 x bf16 ones may lie below fp32's last subnormal: the general path."""
    found = _spy(monkeypatch, "matrix_product")
    rng = np.random.default_rng(8)
    a, b = (np.asarray(sf.encode(rng.standard_normal(s), f)) for s, f in zip(((5, 7), (7, 3)), pair))
    call = (lambda: sf.matmul(a, b, pair[0], b_format=pair[1], accumulator="fp32", return_flags=True))
    assert_same(call(), general(call))
    assert (found[0] is not None) == taken


@pytest.mark.parametrize("edge", ["normal", "smallest", "tiny", "largest", "huge", "zeros", "nan", "inf"])
def test_bf16_products_shown_normal_by_the_operands_magnitudes(monkeypatch, edge):
    """bf16 products (16 bits) are fp32 values wherever they lie in fp32's normal range:
    min|a| * min|b| over the non-zeros at least 2**-126 and max|a| * max|b| at most fp32's
    max make every product exact in float32 (softfloat.accumulate._few._normal_products);
    at the bounds and beyond them, and with NaNs and infinities, the data's products
    decide as before.  Bits, flags and swamped counts are the general path's."""
    normal = answers_of(monkeypatch, _few, "_normal_products")
    rng = np.random.default_rng(zlib.crc32(edge.encode()))
    x = rng.standard_normal((6, 9)) * 2.0 ** rng.integers(-20, 20, (6, 9))
    y = rng.standard_normal((9, 5)) * 2.0 ** rng.integers(-20, 20, (9, 5))
    x[0, :3] = [0.0, -0.0, 0.0]
    lo, hi = np.abs(x[x != 0]).min(), np.abs(x).max()
    ylo, yhi = 2.0**-126 / float(sf.quantize(lo, "bf16")), float(np.finfo(np.float32).max) / float(sf.quantize(hi, "bf16"))
    y[1, 1] = {"normal": 1.0, "smallest": ylo * 1.01, "tiny": ylo * 2.0**-12, "largest": yhi / 1.01,
               "huge": yhi * 2, "zeros": 0.0, "nan": np.nan, "inf": np.inf}[edge]
    if edge == "zeros":
        x[:] = 0.0
    if edge == "tiny":  # a column of such products: bits below fp32's last subnormal
        y[:, 1] = y[1, 1] * (1 + np.arange(9) / 64)
    a, b = (np.asarray(sf.encode(v, "bf16")) for v in (x, y))
    for flags in (False, True, "swamped"):
        call = (lambda: sf.matmul(a, b, "bf16", accumulator="fp32", return_flags=flags))
        assert_same(call(), general(call))
    assert normal == [edge in ("normal", "smallest", "largest", "zeros")] * 3


@pytest.mark.parametrize("shape", [(1, 1, 1), (3, 5, 2), (4, 4, 4), (8, 16, 8), (2, 64, 3), (16, 16, 16)])
def test_fp16_products_equal_numpys_float16_matmul(shape):
    """numpy's float16 matmul sums each output's products in float32 in order and rounds
    once to float16 (the products are exact in float32): the definition with an fp32
    accumulator and an fp16 result, where no output is a sum of zeros only (numpy starts
    from +0)."""
    M, K, N = shape
    rng = np.random.default_rng(M * 100 + K)
    x = rng.standard_normal((M, K)).astype(np.float16)
    y = (rng.standard_normal((K, N)) * 2.0 ** rng.integers(-12, 12, (K, N))).astype(np.float16)
    got = sf.matmul(x.view(np.uint16), y.view(np.uint16), "fp16", accumulator="fp32", out_format="fp16")
    np.testing.assert_array_equal(got, (x @ y).view(np.uint16))


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["bf16", "tf32"]), st.integers(1, 3000), st.sampled_from([1e-20, 1.0, 1e15, 1e30]),
       st.integers(0, 2**32 - 1), st.sampled_from([False, True]))
def test_bf16_and_tf32_dot_products_equal_the_general_path(fmt, n, scale, seed, flags):
    rng = np.random.default_rng(seed)
    x, y = (np.asarray(sf.encode(rng.standard_normal(n) * scale, fmt)) for _ in range(2))
    call = (lambda: sf.vecdot(x, y, fmt, return_flags=flags))
    assert_same(call(), general(call))


def test_bf16_dot_products_in_fp32_range_take_the_short_path(monkeypatch):
    found = _spy(monkeypatch, "one_output")
    x = np.asarray(sf.encode(np.linspace(-3, 5, 1000), "bf16"))
    sf.vecdot(x, x[::-1].copy(), "bf16", return_flags=True)
    tiny = np.asarray(sf.encode(np.full(10, 2.0**-100), "bf16"))
    sf.vecdot(tiny, tiny, "bf16")  # 2**-200: no fp32 value
    assert found[0] is not None and found[1] is None


@st.composite
def small_sums(draw):
    fmt = draw(st.sampled_from(["fp16", "bf16", "fp32", "fp8_e5m2", "fp4_e2m1"]))
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=1, max_size=3)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    values = rng.standard_normal(shape) * draw(st.sampled_from([1e-30, 1e-6, 1.0, 3e4, 1e30]))
    if draw(st.booleans()):  # halves and integers: exact steps, swamping, cancellation
        values = np.round(values * 2) / 2
    if draw(st.integers(0, 3)) == 0:
        values.flat[rng.integers(0, values.size)] = draw(st.sampled_from(SPECIALS))
    if draw(st.booleans()):
        values[..., 0] = draw(st.sampled_from([0.0, -0.0]))  # zero sums of both signs
    axes = draw(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1, max_size=len(shape), unique_by=lambda
                         a: a % len(shape)))
    axis = axes[0] if len(axes) == 1 and draw(st.booleans()) else tuple(axes)
    kw = dict(axis=axis, keepdims=draw(st.booleans()),
              accumulator=draw(st.sampled_from([None, "fp32", "fp16", "fp64", fmt])),
              order=draw(st.sampled_from(["sequential", "sequential", "reverse", "pairwise"])),
              return_flags=draw(st.sampled_from([False, True, "swamped"])))
    kw.update(draw(st.sampled_from([{}, {}, {}, {"tininess": "before"}, {"saturate": True}, {"rounding": "upward"}])))
    if fmt == "fp32" and kw["accumulator"] == "fp16":
        kw["accumulator"] = "fp32"
    if draw(st.booleans()):
        kw["out_format"] = draw(st.sampled_from(["fp16", "bf16", "fp8_e4m3", "fp8_e4m3fnuz"]))
    return np.asarray(sf.encode(values, fmt)), fmt, kw


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_sums())
def test_sums_over_axes_equal_the_general_path(case):
    x, fmt, kw = case
    call = (lambda: sf.sum(x, fmt, **kw))
    assert_same(call(), general(call))


def test_axis_sums_take_the_short_path_and_leave_the_input_alone(monkeypatch):
    found = _spy(monkeypatch, "axis_sum")
    x = np.asarray(sf.encode(np.arange(24.0).reshape(2, 3, 4) - 7.5, "fp32"))
    before = x.copy()
    for kw in ({"axis": 0}, {"axis": (0, 2), "keepdims": True}, {"axis": -1, "order": "reverse"}):
        sf.sum(x, "fp32", return_flags=False, **kw)  # fp32 into fp32: the patterns read in place
    assert len(found) == 3 and all(f is not None for f in found)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_array_equal(sf.decode(found[1], "fp32"), (np.arange(24.0).reshape(2, 3, 4) - 7.5).sum(
        axis=(0, 2), keepdims=True))  # exact sums of halves


@st.composite
def paired_products(draw):
    fmt = draw(st.sampled_from(["fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "fp32"]))
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=1, max_size=3)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = draw(st.sampled_from([1e-30, 1e-4, 1.0, 1e3, 1e20]))
    values = [rng.standard_normal(shape) * scale for _ in range(2)]
    if draw(st.booleans()):
        values = [np.round(v / scale * 4) for v in values]
    if draw(st.integers(0, 3)) == 0:
        values[1].flat[rng.integers(0, values[1].size)] = draw(st.sampled_from(SPECIALS))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    kw = dict(axis=axis, accumulator=draw(st.sampled_from([None, "fp32", "fp16", "fp64"])),
              order=draw(st.sampled_from(["sequential", "sequential", "reverse", "pairwise"])),
              return_flags=draw(st.sampled_from([False, True, "swamped"])))
    kw.update(draw(st.sampled_from([{}, {}, {}, {"tininess": "before"}, {"subnormals": False}])))
    if fmt == "fp32" and kw["accumulator"] == "fp16":
        kw["accumulator"] = "fp32"
    if draw(st.booleans()):
        kw["out_format"] = draw(st.sampled_from(["fp16", "bf16", "fp8_e4m3", "fp8_e4m3fnuz"]))
    a, b = (np.asarray(sf.encode(v, fmt)) for v in values)
    return a, b, fmt, kw


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(paired_products())
def test_dot_products_along_an_axis_equal_the_general_path(case):
    a, b, fmt, kw = case
    call = (lambda: sf.vecdot(a, b, fmt, **kw))
    assert_same(call(), general(call))


def test_dot_products_along_an_axis_take_the_short_path(monkeypatch):
    found = _spy(monkeypatch, "paired_product")
    rng = np.random.default_rng(11)
    a, b = (np.asarray(sf.encode(rng.standard_normal((3, 5, 4)), "fp16")) for _ in range(2))
    for axis in (0, 1, -1):
        assert_same(sf.vecdot(a, b, "fp16", axis=axis, return_flags=True),
                    general(lambda: sf.vecdot(a, b, "fp16", axis=axis, return_flags=True)))
    assert [f is not None for f in found] == [True, False] * 3  # (the general path's call declines)
    with pytest.raises(ValueError, match="out of bounds"):
        sf.vecdot(a, b, "fp16", axis=3)  # the general path explains a bad axis


# ---- products that round (softfloat.accumulate._odd): the exact reference too -------------
def _spy_odd(monkeypatch):
    """(few terms run as chains on Python floats: held off, so these reach _odd's rows)"""
    from softfloat.accumulate import _odd
    monkeypatch.setattr(_few, "CHAIN_TERMS", 0)
    return answers_of(monkeypatch, _odd, "running_sums")


@pytest.mark.parametrize("fmt, acc", [("fp32", "fp32"), ("fp16", "fp16"), ("bf16", "fp32"), ("tf32", "fp32")])
@pytest.mark.parametrize("seed", range(4))
def test_rounded_products_equal_the_exact_reference(monkeypatch, fmt, acc, seed):
    """Terms aimed at the double rounding round-to-odd prevents (significands with few
    trailing zeros, exponents within a few bits of each other, ties, cancellations,
    zeros of both signs), checked element by element against tests/accumulate_oracle.py
    (MPFR for every rounding), flags and swamped counts included."""
    found = _spy_odd(monkeypatch)
    rng = np.random.default_rng(seed)
    f = sf.as_format(fmt)
    spread = 6 if fmt == acc else 100  # bf16, tf32: some products below fp32's range ...
    a = random_patterns(rng, f, (5, 12), spread=spread, zeros=0.05)
    b = random_patterns(rng, f, (12, 7), spread=spread, zeros=0.05)
    a[:, 0] = random_patterns(rng, f, 5, spread=6, zeros=0)  # ... beside running sums of normal size
    b[0] = random_patterns(rng, f, 7, spread=6, zeros=0)
    for kw in ({}, {"order": "reverse"}, {"out_format": "fp8_e5m2" if acc == "fp16" else "bf16"}):
        check("matmul", a, b, fmt, accumulator=acc, **kw)
    assert any(r is not None for r in found)


def test_a_tie_that_float64_makes_is_not_a_tie(monkeypatch):
    """(1 + 2**-23) + (1 + 2**-18) * -(2**-24 * (1 - 2**-18)) in fp32: the exact sum is
    1 + 2**-24 + 2**-60, above the midpoint of 1 and 1 + 2**-23, so nearest is 1 + 2**-23;
    float64 rounds it to the midpoint 1 + 2**-24 (2**-60 is below half its ulp), and a
    second rounding to nearest even would give 1 -- the trap rounding to odd avoids."""
    found = _spy_odd(monkeypatch)
    x = np.array([[1 + 2.0**-23, 1 + 2.0**-18]], dtype=np.float32)
    y = np.array([[1.0, 1.0], [-(2.0**-24) * (1 - 2.0**-18), 0.5]], dtype=np.float32)  # (two outputs)
    p = np.float64(x[0, 1]) * np.float64(y[1, 0])  # exact: -2**-24 * (1 - 2**-36)
    assert np.float32(np.float64(x[0, 0]) + p) == 1.0  # twice rounded: the wrong answer
    got = sf.matmul(x.view(np.uint32), y.view(np.uint32), "fp32")
    assert found and found[0] is not None  # (the running sums softfloat.accumulate._odd makes)
    assert sf.decode(got, "fp32")[0, 0] == np.float32(1 + 2.0**-23)


@pytest.mark.parametrize("tininess", ["after", "before"])
def test_rounded_products_with_tiny_sums_raise_underflow_as_the_reference(monkeypatch, tininess):
    """Each output m + 2**-75 * y with m = 2**-126, the smallest normal fp32 value: with
    y = -1.5 * 2**-74 the sum m - 1.5 * 2**-149 is tiny by either rule and inexact on the
    subnormal grid; with y = -2**-77 it is m * (1 - 2**-26), above the midpoint
    m * (1 - 2**-25) under m, so tiny before rounding but not after (rounded with an
    unbounded exponent it is m), and inexact; 1 + 2**-135 is inexact, not tiny."""
    found = _spy_odd(monkeypatch)
    m = 2.0**-126
    x = np.array([[1.0, 2.0**-75]], dtype=np.float32)
    y = np.array([[m, m, 1.0], [-1.5 * 2.0**-74, -(2.0**-77), 2.0**-60]], dtype=np.float32)
    call = (lambda: sf.matmul(x.view(np.uint32), y.view(np.uint32), "fp32", tininess=tininess, return_flags=True))
    bits, flags = call()
    assert found and found[0] is not None
    assert flags.underflow[0].tolist() == [True, tininess == "before", False]
    assert flags.inexact[0].tolist() == [True, True, True]
    assert_same((bits, flags), general(call))
    check("matmul", x.view(np.uint32), y.view(np.uint32), "fp32", tininess=tininess)
    rng = np.random.default_rng(5)  # an fp16 accumulator: sums on both sides of 2**-14
    a, b = (np.asarray(sf.encode(rng.uniform(-1, 1, shape) * 2.0**-5, "fp16")) for shape in ((6, 16), (16, 5)))
    check("matmul", a, b, "fp16", accumulator="fp16", tininess=tininess)
    assert found[-1] is not None
    underflow = sf.matmul(a, b, "fp16", accumulator="fp16", tininess=tininess, return_flags=True)[1].underflow
    assert underflow.any() and not underflow.all()


# ---- products rounded into fp32 (product="fp32", the "fp32" recipe) and a start c ---------
@st.composite
def rounded_products_and_starts(draw):
    """fp32 (or a narrow format held by float32) operands with product="fp32" or exact
    products, an fp32 accumulator, and c of a shape that broadcasts (or none)."""
    fmt = draw(st.sampled_from(["fp32", "fp32", "bf16", "fp16"]))
    M, K, N = (draw(st.integers(1, 9)) for _ in range(3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = draw(st.sampled_from([2.0**-75, 1e-30, 1.0, 1e3, 1e19, 1e30]))  # products below fp32's normals, overflows
    values = [rng.standard_normal(shape) * scale for shape in ((M, K), (K, N))]
    if draw(st.booleans()):  # small integers: exact steps, swamping, cancellation, zeros
        values = [np.round(v / scale * 4) * draw(st.sampled_from([1.0, 2.0**-70])) for v in values]
    if draw(st.integers(0, 4)) == 0:  # an infinity or NaN (declined: the general path's rules)
        values[0].flat[rng.integers(0, M * K)] = draw(st.sampled_from(SPECIALS))
    if draw(st.booleans()):  # zero products of both signs: the sign of a zero sum
        values[1][:, 0] = draw(st.sampled_from([0.0, -0.0]))
    a, b = (np.asarray(sf.encode(v, fmt)) for v in values)
    kw = dict(accumulator="fp32", product=draw(st.sampled_from(["fp32", "fp32", None])),
              order=draw(st.sampled_from(["sequential", "reverse"])),
              return_flags=draw(st.sampled_from([False, True, "swamped"])))
    shape = draw(st.sampled_from([None, (M, N), (N,), (1, N), (M, 1), ()]))
    if shape is not None:
        c = rng.standard_normal(shape) * draw(st.sampled_from([1e-40, 1.0, 1e30]))
        if draw(st.integers(0, 5)) == 0:
            c = np.full(shape, draw(st.sampled_from([0.0, -0.0, np.inf, np.nan])))
        kw["c"] = np.asarray(sf.encode(c, "fp32"))
    if draw(st.integers(0, 3)) == 0:
        kw["out_format"] = "bf16" if "c" not in kw else "fp32"
    return a, b, fmt, kw


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rounded_products_and_starts())
def test_rounded_fp32_products_and_starts_equal_the_general_path_and_the_reference(case):
    """The short path's products rounded into fp32 by numpy's float32 multiply (IEEE) and
    its start c (the first row of the running sums): the general path's bits, flags and
    swamped counts, and the bits of tests/accumulate_oracle.py's exact reference."""
    a, b, fmt, kw = case
    call = (lambda: sf.matmul(a, b, fmt, **kw))
    got = call()
    assert_same(got, general(call))
    want, _ = REFS["matmul"](a, b, fmt, **{k: v for k, v in kw.items() if k != "return_flags"})
    bits = got[0] if isinstance(got, tuple) else got
    assert np.array_equal(np.asarray(bits), want)


def test_rounded_fp32_products_and_starts_take_the_short_path(monkeypatch):
    """product="fp32" without flags or with the swamped counts alone, and c given, take
    the short path; with every flag (the products' own inexact and underflow) they do not."""
    found = _spy(monkeypatch, "matrix_product")
    rng = np.random.default_rng(9)
    a, b = (np.asarray(sf.encode(rng.standard_normal(s), "fp32")) for s in ((5, 7), (7, 3)))
    c = np.asarray(sf.encode(rng.standard_normal(3), "fp32"))
    for flags in (False, "swamped"):
        sf.matmul(a, b, "fp32", product="fp32", return_flags=flags)
        sf.matmul(a, b, "fp32", product="fp32", c=c, return_flags=flags)
        sf.matmul(a >> 16 << 16, b >> 16 << 16, "fp32", c=c, return_flags=flags)  # bf16 values: exact products
    assert len(found) == 6 and all(f is not None for f in found)
    found.clear()
    sf.matmul(a, b, "fp32", product="fp32", return_flags=True)
    assert found == [None]


@pytest.mark.parametrize("scale", [1.0, 2.0**-70, 1e19])  # normal, products below fp32's normals, overflows
@pytest.mark.parametrize("flags", [False, "swamped"])
def test_rounded_fp32_dot_products_into_one_output_equal_the_general_path(monkeypatch, scale, flags):
    found = _spy(monkeypatch, "one_output")
    for seed in range(12):
        rng = np.random.default_rng(zlib.crc32(f"{scale}{seed}".encode()))
        K = int(rng.integers(1, 40))
        a, b = (np.asarray(sf.encode(rng.standard_normal(K) * scale, "fp32")) for _ in range(2))
        for call in (lambda: sf.vecdot(a, b, "fp32", product="fp32", return_flags=flags),
                     lambda: sf.matmul(a[None], b[:, None], "fp32", product="fp32", return_flags=flags)):
            assert_same(call(), general(call))
    assert any(f is not None for f in found)


EMPTY_OPTIONS = [{}, {"rounding": "downward"}, {"rounding": "upward"}, {"rounding": "toward_zero"},
                 {"rounding": "nearest_away"}, {"rounding": "odd"}, {"rounding": "stochastic", "rng": 5},
                 {"tininess": "before"}, {"saturate": True}, {"subnormals": False}, {"order": "reverse"},
                 {"order": "pairwise"}, {"block": 4}, {"accumulator": "fp64"}, {"accumulator": "fp16"},
                 {"accumulator": "h100"}, {"out_format": "fp8_e4m3fnuz"}, {"out_format": "bf16"}]


def _empty_calls(fmt, kw):
    """Every one-output reduction of no terms: sums, dot products and matrix products."""
    e = np.zeros(0, dtype=sf.as_format(fmt).storage_dtype)
    return [lambda: sf.sum(e, fmt, **kw), lambda: sf.sum(e.reshape(0, 3), fmt, **kw),
            lambda: sf.sum(e, fmt, axis=0, keepdims=True, **kw), lambda: sf.vecdot(e, e, fmt, **kw),
            lambda: sf.matmul(e, e, fmt, **kw), lambda: sf.matmul(e.reshape(1, 0), e.reshape(0, 1), fmt, **kw)]


@pytest.mark.parametrize("fmt", [f.name for f in sf.formats.catalogue()])
@pytest.mark.parametrize("kw", EMPTY_OPTIONS)
@pytest.mark.parametrize("flags", [False, True, "swamped"])
def test_reductions_of_no_terms_equal_the_general_path(monkeypatch, fmt, kw, flags):
    """+0 (not -0, in every mode), no flag, nothing swamped; the short answer ran (catalogue
    formats, every mode and option: the whole space of an empty reduction)."""
    found = _spy(monkeypatch, "empty")
    kw = dict(kw, return_flags=flags)
    if (kw.get("accumulator") == "h100" and fmt not in ("fp16", "bf16", "tf32", "fp8_e4m3", "fp8_e5m2")) \
            or (kw.get("accumulator") == "fp16" and fmt in ("fp32", "fp64", "tf32")):
        kw["accumulator"] = "fp64"  # (no model for these inputs)
    for call in _empty_calls(fmt, kw):
        assert_same(call(), general(call))
    assert [f is not None for f in found] == [True, False] * 6  # (the switch turns it off)


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("rounding", ["nearest_even", "downward", "stochastic"])
def test_empty_array_reductions_count_as_the_general_path(fmt, rounding):
    """Gauss-Seidel's empty slices on the Array: bits, flag counts and the generator's draws."""
    from tests.fastpath_checks import assert_call_like_general
    v = sf.asarray(np.arange(1.0, 6.0), fmt)
    for call in (lambda: v[:0] @ v[:0], lambda: v[:0].sum(), lambda: np.vecdot(v[:0], v[:0]),
                 lambda: (v[:0] @ v[:0], v[:2] @ v[:2])[1]):  # (the draws after: the generator advanced alike)
        assert_call_like_general(call, rounding=rounding, rng=7)


@pytest.mark.parametrize("tininess", ["after", "before"])
@pytest.mark.parametrize("rounding", ["nearest_even", "toward_zero", "upward", "downward"])
def test_few_rounded_terms_run_as_chains_as_the_reference(monkeypatch, tininess, rounding):
    """At most _few.CHAIN_TERMS rounded terms (a 2x2 fp32 matrix-vector product) run as
    column chains on Python floats, not _odd's rows: the tie float64 makes, sums tiny by
    one rule or both, 1 + 2**-135, cancellation to zeros, overflow, checked against MPFR
    (tests/accumulate_oracle.py) and the general path, flags and swamped counts included."""
    chains = answers_of(monkeypatch, _few, "_column_chains")
    m, big = 2.0**-126, 3e38
    x = np.array([[1 + 2.0**-23, 1 + 2.0**-18], [1.0, 2.0**-75], [big, big], [0.5, -0.5]], dtype=np.float32)
    y = np.array([[1.0, m, -1.0], [-(2.0**-24) * (1 - 2.0**-18), -1.5 * 2.0**-74, 1.0]], dtype=np.float32)
    for a in x[:, None]:  # (1, 2) @ (2, 3): six terms
        for b in (y, y[:, :2], y[:, 1:]):
            a_bits, b_bits = a.view(np.uint32), np.ascontiguousarray(b).view(np.uint32)
            kw = dict(tininess=tininess, rounding=rounding)
            call = (lambda: sf.matmul(a_bits, b_bits, "fp32", return_flags=True, **kw))
            assert_same(call(), general(call))
            check("matmul", a_bits, b_bits, "fp32", **kw)
    if rounding == "nearest_even":  # (the directed modes: the general path, whose chains these are too)
        assert sum(c is not None for c in chains) >= 8  # (exact or overflowing rows: not chains)
    got = sf.matmul(x[:1].view(np.uint32), y.view(np.uint32), "fp32")
    assert sf.decode(got, "fp32")[0, 0] == np.float32(1 + 2.0**-23)  # not the twice-rounded 1


@pytest.mark.parametrize("fmt, out", [("fp16", "fp16"), ("bf16", "bf16"), ("fp16", "fp8_e4m3"), ("bf16", "fp8_e5m2")])
@pytest.mark.parametrize("tininess", ["after", "before"])
def test_few_outputs_round_into_a_narrower_format_one_by_one(monkeypatch, fmt, out, tininess):
    """2x2 and 4x4 matrix-vector products with an fp32 accumulator rounded into a narrower
    out_format by the scalar rounding (_few._narrowed, up to _few.FEW_ROUNDINGS outputs):
    ties, subnormal results (underflow by each rule), zeros of both signs from
    cancellation, an overflow (encode_block then), NaN and inf (the general path), the
    same bits and flags as the general path, and MPFR (tests/accumulate_oracle.py)."""
    narrowed = answers_of(monkeypatch, _few, "_narrowed")
    o = sf.as_format(out)
    tiny, top = o.min_subnormal, o.max_finite
    rng = np.random.default_rng(zlib.crc32(f"{fmt} {out}".encode()))
    rows = [[1.0, tiny * 0.75], [tiny * 1.5, -tiny], [-1.0, 1.0], [top, top], [np.inf, 1.0], [np.nan, 0.0],
            [1.0, 2.0**-9], [-0.0, 0.0], [1.0, 2.0**-12 * 3]]
    for k in (2, 4):
        for _ in range(6):
            A = rng.standard_normal((k, k)) * rng.choice([1.0, 2.0**-14, tiny * 4])
            for i in range(2):  # two rows from the edge cases, the rest zeros
                A[i] = rows[rng.integers(len(rows))] + [0.0] * (k - 2)
            v = rng.choice([1.0, -1.0, 0.5, 2.0**-3], size=k)
            a, b = (np.asarray(sf.encode(w, fmt)) for w in (A, v))
            for flags in (False, True):
                kw = dict(accumulator="fp32", out_format=out, tininess=tininess, return_flags=flags)
                call = (lambda: sf.matmul(a, b, fmt, **kw))
                assert_same(call(), general(call))
            check("matmul", a, b, fmt, accumulator="fp32", out_format=out, tininess=tininess)
    assert any(r is not None for r in narrowed)
