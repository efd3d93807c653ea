"""softfloat.torch._accumulate.matmul_bits on the device with infinities and NaNs among the
operands and c, with products rounded into fp32 (``product="fp32"``, the "fp32" and MX
recipes' products, 32-bit operands included), and with exact products that are not
float32 values (fp32 x fp32, bf16 extremes: float64 steps): the torch paths answer (the
numpy reference is switched off) with softfloat.matmul's bits and swamped counts."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import import_torch

torch = import_torch()

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import softfloat as sf  # noqa: E402
from softfloat.torch import _accumulate  # noqa: E402
from softfloat.torch._accumulate import matmul_bits  # noqa: E402
from tests.torch_checks import check_matmul_bits  # noqa: E402

#: the hardware models each input format has (sf.accumulate.hardware_model's table)
_FUSED = {"fp16": ["h100", "h100-mma", "a100", "v100", "ada", "b200"], "bf16": ["h100", "h100-mma", "a100", "ada", "b200"],
          "fp8_e4m3": ["h100", "h100-mma", "ada", "b200"], "fp8_e5m2": ["h100", "h100-mma", "ada", "b200"]}
_IEEE_ORDERS = ["sequential", "reverse", "pairwise"]


def _refuse(*args, **kwargs):
    raise AssertionError("fell back to the numpy reference")


@pytest.fixture
def device_only(monkeypatch):
    monkeypatch.setattr(_accumulate, "_reference", _refuse)


def _specials(fmt):
    """The format's infinities and NaN patterns (a quiet and, with room, a signalling one)."""
    f = sf.as_format(fmt)
    out = [int(sf.encode(np.array(np.nan), f))]
    if f.has_infinity:
        out += [int(sf.encode(np.array(x), f)) for x in (np.inf, -np.inf)]
        out.append(int(f.exponent_mask | 1))  # a signalling NaN (payload 1)
    return out


def _patterns(rng, fmt, shape, density, spread=6):
    """Finite values 2**[-spread, spread] apart, zeros of both signs, and the format's
    infinities and NaNs at ``density``."""
    f = sf.as_format(fmt)
    v = rng.standard_normal(shape) * 2.0 ** rng.integers(-spread, spread + 1, shape)
    v[rng.random(shape) < 0.05] = 0.0
    bits = sf.encode(v, f, saturate=True).astype(np.int64)
    bits = np.where(rng.random(shape) < 0.05, bits | f.sign_mask, bits)
    return np.where(rng.random(shape) < density, rng.choice(_specials(f), shape), bits)


_check = check_matmul_bits


#: (fmt, accumulator, order, product, out_format): the IEEE accumulators in every order (FP8
#: ones into fp32: their own output format is the reference's), the hardware models,
#: products rounded into fp32
_CASES = ([(f, acc, order, None, "fp32" if acc.startswith("fp8") else None) for f in _FUSED
           for acc in ("fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2") for order in _IEEE_ORDERS]
          + [(f, acc, "sequential", None, None) for f in _FUSED for acc in _FUSED[f]]
          + [(f, acc, order, "fp32", None) for f in ("fp32", "fp16", "bf16") for acc in ("fp32", "bf16")
             for order in _IEEE_ORDERS])


@pytest.mark.parametrize("fmt, accumulator, order, product, out_format", _CASES)
@pytest.mark.parametrize("density", [0.01, 0.2])
@pytest.mark.parametrize("block", [None, 8])
def test_infinities_and_nans_on_the_device(device_only, fmt, accumulator, order, product, out_format, density,
                                           block):
    rng = np.random.default_rng(int(density * 100) + (block or 0) + len(fmt) + len(accumulator))
    # specials in a's first three rows and b's first two columns: the other outputs finite
    a, b = _patterns(rng, fmt, (6, 37), 0.0), _patterns(rng, fmt, (37, 5), 0.0)
    a[:3], b[:, :2] = _patterns(rng, fmt, (3, 37), density), _patterns(rng, fmt, (37, 2), density)
    out = out_format or (accumulator if accumulator in ("fp16", "bf16") else "fp32")  # the default: the accumulator's
    c = _patterns(rng, out, (6, 5), density)
    kw = dict(accumulator=accumulator, order=order, product=product, block=block, out_format=out_format)
    values = sf.decode(_check(a, b, fmt, **kw), out)
    assert np.isnan(values).any() or density < 0.1  # (an FP8 accumulator overflows to NaN without them too)
    assert np.isfinite(values[3:, 2:]).all() or accumulator.startswith("fp8")
    _check(a, b, fmt, c=c, **kw)
    _check(a, b, fmt, c=c[:1], **kw)


@pytest.mark.parametrize("accumulator", ["fp32", "h100", "h100-mma", "a100"])
def test_one_infinity_and_opposite_ones(device_only, accumulator):
    # one infinite product makes the output that infinity; opposite ones, 0 * inf or a NaN
    # operand a NaN; an infinite c likewise; every NaN is the canonical positive one
    inf, ninf, nan = 0x7F80, 0xFF80, 0xFFC1  # bf16; a negative NaN with a payload
    one, zero = 0x3F80, 0x0000
    a = np.array([[one, inf, one, one], [inf, ninf, one, one], [one, one, nan, one], [one, one, one, one]],
                 dtype=np.int64)
    b = np.array([[one, one], [one, zero], [one, one], [one, one]], dtype=np.int64)
    c = np.array([[0], [0], [0], [0xFF800000]], dtype=np.int64)
    for kw in (dict(), dict(c=c), dict(block=2), dict(block=1, c=c)):
        got = _check(a, b, "bf16", accumulator=accumulator, **kw)
        nans = [got[0, 1], got[1, 0], got[1, 1], got[2, 0], got[2, 1]]  # 0 * inf, inf - inf, NaN operand
        assert got[0, 0] == 0x7F800000 and nans == [0x7FC00000] * 5
        assert got[3, 0] == (0xFF800000 if "c" in kw else 0x40800000)


@pytest.mark.parametrize("order", ["sequential", "reverse"])
def test_bf16_accumulator_checked_steps_take_infinities(device_only, order):
    # terms near 2**120: the bf16 accumulator checks every step for a float32 overflow of
    # TwoSum (a finite one declines); an infinite term's sum is exact and does not (the
    # pairwise order has no checked steps: it declines such terms)
    rng = np.random.default_rng(8)
    sign = rng.integers(0, 2, (2, 4, 40)) << 15
    big, b = sign[0] | (188 << 7), (sign[1] | (186 << 7)).T.copy()  # +-2**61 and +-2**59: terms +-2**120
    b[3, :2] = 0x7F80, 0xFFC0  # +inf, a NaN
    got = sf.decode(_check(big, b, "bf16", accumulator="bf16", order=order), "bf16")
    assert np.isnan(got[:, 1]).all() and np.isfinite(got[:, 2:]).any()


@pytest.mark.parametrize("accumulator", ["fp32", "h100", "a100"])
@pytest.mark.parametrize("block", [None, 1, 2])
def test_overflow_meets_an_infinity(device_only, accumulator, block):
    # a sum that overflows (fp32: to inf in nearest even; the fused adder: clamped) then
    # meets an infinite product of the other sign
    big, inf, ninf, one = 0x7F7F, 0x7F80, 0xFF80, 0x3F80  # bf16: the largest, +inf, -inf, 1
    a = np.array([[big, big, big, ninf], [ninf, big, big, big], [big, big, inf, one]], dtype=np.int64)
    b = np.array([[one], [one], [one], [one]], dtype=np.int64)
    _check(a, b, "bf16", accumulator=accumulator, block=block)


@pytest.mark.parametrize("order", _IEEE_ORDERS)
@pytest.mark.parametrize("block", [None, 3])
def test_products_rounded_into_fp32(device_only, order, block):
    # fp32 x fp32 (the "fp32" recipe), products rounded into fp32 then added: underflow to
    # subnormals and to zero, overflow to infinity, cancellation, NaNs and -0 products
    x = np.array([[1e-30, 3.0, 1e30, -2.5, 1e-20, 7.0, -0.0],
                  [1.1754942e-38, 1.0, -1e20, 1e20, 2.0**-75, 0.1, 5.0],
                  [np.inf, 1.0, 2.0, np.nan, 3.0, 4.0, 5.0]], dtype=np.float32)
    y = np.array([[1e-30, 0.5], [1.0 / 3, -2.0], [1e30, 1.0], [1e30, 1.0], [1e-20, 2.0**-80], [0.1, 10.0],
                  [3.0, -1.0]], dtype=np.float32)
    a, b = x.view(np.uint32).astype(np.int64), y.view(np.uint32).astype(np.int64)
    ref = _check(a, b, "fp32", product="fp32", order=order, block=block)
    with np.errstate(all="ignore"):  # numpy float32 arithmetic, sequential order: the same definition
        s = x[:, :1] * y[:1]
        for k in range(1, 7):
            s = s + x[:, k:k + 1] * y[k:k + 1]
    if order == "sequential" and block is None:
        nan = np.isnan(s)
        assert np.array_equal(np.where(nan, 0x7FC00000, s.view(np.uint32)), ref)
    _check(a, b, "fp32", product="fp32", order=order, out_format="bf16")  # (with block: fp32 outputs only)
    _check(a, b, "fp32", product="fp32", order=order, block=block, c=a[:, :2].copy())


def _with_subnormals(rng, fmt, shape, spread, density):
    """_patterns with a tenth of the values the format's subnormals."""
    f = sf.as_format(fmt)
    bits = _patterns(rng, fmt, shape, density, spread)
    sub = rng.integers(1, 1 << f.mantissa_bits, shape) | (rng.integers(0, 2, shape) << (f.bits - 1))
    return np.where(rng.random(shape) < 0.1, sub, bits)


@pytest.mark.parametrize("fmt, spread", [("fp32", 3), ("fp32", 60), ("fp32", 125), ("bf16", 120)])
@pytest.mark.parametrize("order", _IEEE_ORDERS)
@pytest.mark.parametrize("block", [None, 5])
@pytest.mark.parametrize("density", [0.0, 0.03])
def test_exact_products_beyond_float32(device_only, fmt, spread, order, block, density):
    # exact products that are not float32 values (fp32 x fp32: 48 bits; bf16 products
    # below 2**-149 or beyond 2**128) into the fp32 accumulator: float64 products and one
    # rounding per step, subnormal and overflowing sums included
    rng = np.random.default_rng(spread + len(order) + (block or 0))
    a, b = _with_subnormals(rng, fmt, (4, 33), spread, density), _with_subnormals(rng, fmt, (33, 6), spread, density)
    c = _with_subnormals(rng, "fp32", (4, 6), min(spread, 120), density)
    _check(a, b, fmt, accumulator="fp32", order=order, block=block)
    _check(a, b, fmt, accumulator="fp32", order=order, block=block, c=c)
    if block is None:
        _check(a, b, fmt, accumulator="fp32", order=order, out_format="bf16")


def test_exact_products_one_rounding_per_step(device_only):
    # 1 + (1 + 2**-12) * 2**-24 (1 - 2**-12 + 2**-24) = 1 + 2**-24 + 2**-60, just above a
    # tie: one rounding of the exact sum gives 1 + 2**-23; a float32 product (2**-24) and
    # then a float32 sum (a tie, to even) would give 1
    # Row 2: 1 + (1 - 2**-20) * 2**-24 (1 + 2**-20) = 1 + 2**-24 - 2**-64, just below the
    # tie, which float64's sum rounds to: the rounding to odd keeps it below (1).  Row 3:
    # row 2 negated.
    x = np.array([[1.0, 1.0 + 2.0**-12], [1.0, 1.0 - 2.0**-20], [-1.0, -(1.0 - 2.0**-20)]], dtype=np.float32)
    y = np.array([[1.0, 1.0], [2.0**-24 * (1 - 2.0**-12 + 2.0**-24), 2.0**-24 * (1 + 2.0**-20)]], dtype=np.float32)
    assert x[0, 0] * y[0, 0] + x[0, 1] * y[1, 0] == 1.0  # numpy float32: two roundings
    got = _check(x.view(np.uint32).astype(np.int64), y.view(np.uint32).astype(np.int64), "fp32")
    assert got[0, 0] == np.float32(1.0 + 2.0**-23).view(np.uint32)
    assert got[1, 1] == np.float32(1.0).view(np.uint32) and got[2, 1] == np.float32(-1.0).view(np.uint32)


@pytest.mark.parametrize("fmt", ["fp32", "fp16", "bf16", "fp8_e5m2"])
@pytest.mark.parametrize("spread", [2, 60])
def test_products_rounded_random(device_only, fmt, spread):
    rng = np.random.default_rng(spread)
    spread = min(spread, sf.as_format(fmt).emax)
    a, b = _patterns(rng, fmt, (4, 2, 50), 0.02, spread), _patterns(rng, fmt, (50, 7), 0.02, spread)
    _check(a, b, fmt, product="fp32")
    _check(a, b, fmt, product="fp32", block=16, accumulator="fp32")


def test_what_still_falls_back(monkeypatch):
    # another rounding mode, products rounded into another format, and a 16-bit
    # accumulator whose finite terms could overflow float32's TwoSum: the reference's,
    # with its bits
    calls = []
    real = _accumulate._reference
    monkeypatch.setattr(_accumulate, "_reference", lambda *a, **k: calls.append(1) or real(*a, **k))
    rng = np.random.default_rng(3)
    x32, y32 = _patterns(rng, "fp32", (3, 9), 0.0), _patterns(rng, "fp32", (9, 2), 0.2)
    _check(x32, y32, "fp32", rounding="toward_zero")
    x16, y16 = _patterns(rng, "fp16", (3, 9), 0.2), _patterns(rng, "fp16", (9, 2), 0.2)
    _check(x16, y16, "fp16", product="bf16")
    huge, y = x32.copy(), y32.copy()
    huge[0, 0], y[0, 0] = (125 + 127) << 23, 0x40800000  # 2**125 * 4: beyond the bound
    _check(huge, y, "fp32", product="fp32", accumulator="fp16")
    assert len(calls) == 3 * 2
    with pytest.raises(ValueError, match="exact by construction"):  # the reference's error, through
        matmul_bits(torch.from_numpy(x16), torch.from_numpy(y16), "fp16", product="fp32", accumulator="h100")


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([("fp16", "fp32"), ("fp8_e4m3", "fp32"), ("fp8_e5m2", "fp32"), ("fp16", "fp16"),
                        ("fp8_e4m3", "bf16"), ("fp8_e5m2", "fp16"), ("fp16", "h100"),
                        ("bf16", "h100"), ("fp8_e4m3", "h100"), ("fp8_e5m2", "h100-mma"), ("bf16", "a100")]),
       st.integers(1, 40), st.sampled_from([None, 4]), st.data())
def test_hypothesis_any_patterns_on_the_device(pair, K, block, data):
    # every bit pattern, NaNs and infinities included: the device path answers
    fmt, accumulator = pair
    bits = sf.as_format(fmt).bits
    a = np.array(data.draw(st.lists(st.integers(0, (1 << bits) - 1), min_size=2 * K, max_size=2 * K))).reshape(2, K)
    b = np.array(data.draw(st.lists(st.integers(0, (1 << bits) - 1), min_size=K * 3, max_size=K * 3))).reshape(K, 3)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_accumulate, "_reference", _refuse)
        _check(a, b, fmt, accumulator=accumulator, block=block)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 20), st.sampled_from(_IEEE_ORDERS), st.data())
def test_hypothesis_fp32_patterns_rounded_products(K, order, data):
    a = np.array(data.draw(st.lists(st.integers(0, (1 << 32) - 1), min_size=2 * K, max_size=2 * K))).reshape(2, K)
    b = np.array(data.draw(st.lists(st.integers(0, (1 << 32) - 1), min_size=K * 2, max_size=K * 2))).reshape(K, 2)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_accumulate, "_reference", _refuse)
        _check(a, b, "fp32", product="fp32", order=order)


_PATTERN_CASES = [("fp16", "bf16"), ("fp16", "fp16"), ("bf16", "bf16"), ("fp16", "fp32"), ("bf16", "h100"),
                  ("fp8_e5m2", "bf16")]


@pytest.mark.parametrize("fmt, accumulator, out_format",
                         [(f, acc, out) for f, acc in _PATTERN_CASES for out in (None, "fp16", "fp64")
                          if out is None or (acc != "h100" and (out == "fp16" or acc == "fp32"))])
@pytest.mark.parametrize("K", [1, 2])
def test_every_infinity_and_nan_pattern(device_only, fmt, accumulator, K, out_format):
    # every infinity and NaN pattern of the operand format, payloads of every size (an
    # fp16 NaN's payload widened to float32, 0x7FFFE000, once carried into bf16's sign),
    # into the output formats (h100's fp16 output is its own mode, the reference's; fp64 is
    # the fp32 accumulator's): the canonical NaN, whatever payload reached the output
    f = sf.as_format(fmt)
    mags = np.arange(f.infinity_bits, 1 << (f.bits - 1), dtype=np.int64)
    a = np.concatenate([mags, mags | f.sign_mask])[:, None].repeat(K, axis=1)
    one = int(sf.encode(np.array(1.0), f))
    got = _check(a, np.full((K, 1), one, np.int64), fmt, accumulator=accumulator, out_format=out_format)
    values = sf.decode(got, out_format or (accumulator if accumulator in ("fp16", "bf16") else "fp32")).reshape(-1)
    infinite = np.concatenate([mags, mags]) == f.infinity_bits
    assert np.isinf(values[infinite]).all() and np.isnan(values[~infinite]).all()


_FP8_ACCUMULATORS = ["fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "h100", "h100-mma", "ada", "b200"]


@pytest.mark.parametrize("fmt, b_format", [("fp8_e4m3", None), ("fp8_e5m2", None), ("fp8_e4m3", "fp8_e5m2")])
@pytest.mark.parametrize("accumulator", _FP8_ACCUMULATORS)
def test_every_fp8_pair(device_only, fmt, b_format, accumulator):
    # every pair of FP8 patterns (NaNs, infinities, subnormals, zeros of both signs) as
    # the first product of an output, the pair (255 - i, 255 - j)'s as its second: every
    # product and 65,536 additions, bits and swamped counts
    p = np.arange(256, dtype=np.int64)
    a = np.stack([p, p[::-1]], axis=1)  # (256, 2)
    b = np.stack([p, p[::-1]], axis=0)  # (2, 256)
    out = "fp32" if accumulator.startswith("fp8") else None
    _check(a, b, fmt, b_format=b_format, accumulator=accumulator, out_format=out)
    _check(a[:, :1], b[:1], fmt, b_format=b_format, accumulator=accumulator, out_format=out)  # one term


@pytest.mark.parametrize("accumulator", ["fp32", "fp16", "bf16", "h100", "v100"])
def test_every_fp16_pattern(device_only, accumulator):
    # every fp16 pattern times 1, 2**-14 (products into fp16's subnormals) and -65504,
    # plus a second term: each rounding into the accumulator from every pattern
    a = np.stack([np.arange(1 << 16, dtype=np.int64), np.full(1 << 16, 0x3555)], axis=1)  # second term 1/3
    b = np.array([[0x3C00, 0x0400, 0xFBFF], [0x3C00, 0x8001, 0x7BFF]], dtype=np.int64)
    _check(a, b, "fp16", accumulator=accumulator)
