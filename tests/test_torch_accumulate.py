"""softfloat.torch._accumulate.matmul_bits (the accumulation models in torch operations)
against softfloat.matmul, the numpy reference: the same bits, on the torch paths (checked
to be taken: the reference is switched off) and on the fall-backs."""

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

PAIRS = [("fp16", None), ("bf16", None), ("fp8_e4m3", None), ("fp8_e5m2", None), ("fp8_e4m3", "fp8_e5m2"),
         ("fp8_e5m2", "fp8_e4m3")]
HARDWARE = ["h100", "h100-mma", "a100", "v100", "ada", "b200"]
SHAPES = [((1, 1), (1, 1)), ((3, 17), (17, 5)), ((4, 70), (70, 6)), ((2, 3, 33), (33, 4)), ((2, 1, 5, 40), (3, 40, 2))]


def _refuse(*args, **kwargs):
    raise AssertionError("fell back to the numpy reference")


@pytest.fixture
def device_only(monkeypatch):
    """The torch path must answer: the reference is switched off."""
    monkeypatch.setattr(_accumulate, "_reference", _refuse)


@pytest.fixture
def reference_calls(monkeypatch):
    """The numpy reference counted: a list that grows by one per fall-back."""
    calls = []
    real = _accumulate._reference
    monkeypatch.setattr(_accumulate, "_reference", lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


def _fmt(name):
    return sf.formats.as_format(name)


def _finite_patterns(rng, fmt, shape, spread=0, subnormals=True):
    """Random finite values of ``fmt`` (normal draws times 2**[-spread, spread]), with
    zeros of both signs and (unless told not to) subnormals mixed in."""
    f = _fmt(fmt)
    v = rng.standard_normal(shape) * 2.0 ** rng.integers(-spread, spread + 1, shape)
    bits = sf.encode(v, f, saturate=True).astype(np.int64)
    pick = rng.random(shape)
    sub = rng.integers(1, 1 << f.mantissa_bits, shape) | (rng.integers(0, 2, shape) << (f.bits - 1))
    bits = np.where((pick < 0.05) & subnormals, sub, bits)
    bits = np.where((pick >= 0.05) & (pick < 0.1), rng.integers(0, 2, shape) << (f.bits - 1), bits)
    return bits


def _call(a, b, fmt, **kwargs):
    """(torch path's bits as numpy, reference bits)."""
    ref = sf.matmul(a, b, fmt, **kwargs)
    c = kwargs.pop("c", None)
    got = matmul_bits(torch.from_numpy(np.asarray(a, np.int64)), torch.from_numpy(np.asarray(b, np.int64)), fmt,
                      c=None if c is None else torch.from_numpy(np.asarray(c, np.int64)), **kwargs)
    return got.numpy().view(ref.dtype), ref


def _check(a, b, fmt, **kwargs):
    got, ref = _call(a, b, fmt, **kwargs)
    assert got.shape == ref.shape
    bad = np.flatnonzero(got.reshape(-1) != ref.reshape(-1))
    assert not bad.size, f"{bad.size} outputs differ, first at {bad[0]}: {got.reshape(-1)[bad[0]]:#x} " \
                         f"!= {ref.reshape(-1)[bad[0]]:#x}"


@pytest.mark.parametrize("fmt, b_format", PAIRS)
@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("block", [None, 16])
def test_fp32_accumulator_random(device_only, fmt, b_format, shapes, block):
    rng = np.random.default_rng(len(shapes[0]) * 7 + shapes[0][-1])
    # bf16 subnormals' products fall below float32's last bit: the fall-back's case
    a = _finite_patterns(rng, fmt, shapes[0], spread=6, subnormals=fmt != "bf16")
    b = _finite_patterns(rng, b_format or fmt, shapes[1], spread=6, subnormals=fmt != "bf16")
    _check(a, b, fmt, b_format=b_format, accumulator="fp32", block=block)


def _modelled(fmt, accumulator):
    """Whether the preset has a model for products of ``fmt`` (a100 has no FP8, ...)."""
    return ("fp8" if fmt.startswith("fp8") else fmt) in sf.accumulate.PRESETS[accumulator]


@pytest.mark.parametrize("fmt, b_format, accumulator",
                         [(f, g, acc) for f, g in PAIRS for acc in HARDWARE if _modelled(f, acc)])
@pytest.mark.parametrize("shapes", SHAPES[1:])
def test_hardware_presets_random(device_only, fmt, b_format, accumulator, shapes):
    rng = np.random.default_rng(shapes[0][-1])
    a = _finite_patterns(rng, fmt, shapes[0], spread=20)
    b = _finite_patterns(rng, b_format or fmt, shapes[1], spread=20)
    _check(a, b, fmt, b_format=b_format, accumulator=accumulator)
    _check(a, b, fmt, b_format=b_format, accumulator=accumulator, block=32)


def _adversarial(fmt, K, seed):
    """Rows of a (8, K) and columns of b (K, 8) that cancel, align over +-20 binades, carry
    through all-ones significands, and hold subnormals and zeros of both signs."""
    f = _fmt(fmt)
    rng = np.random.default_rng(seed)
    ones = (((1 << f.exponent_bits) - 2) << f.mantissa_bits) >> 1 | ((1 << f.mantissa_bits) - 1)  # 2 - ulp-ish
    big = sf.decode(np.array(ones, f.storage_dtype), f, np.float64)
    x = rng.standard_normal(K)
    rows = [
        np.where(np.arange(K) % 2, -1.0, 1.0) * np.repeat(rng.standard_normal((K + 1) // 2), 2)[:K],  # x, -x
        np.full(K, float(big)),                                                           # carries
        rng.standard_normal(K) * 2.0 ** rng.integers(-20, 21, K),                         # alignment
        np.where(np.arange(K) == 0, 2.0 ** 12, 2.0 ** -12) * np.sign(x),                  # large then small
        np.full(K, float(f.min_subnormal)) * np.where(np.arange(K) % 3, 1, -1),           # subnormals
        np.where(np.arange(K) % 2, -0.0, 0.0),                                            # zeros
        -np.abs(x) * 0.0,                                                                 # -0 only
        x * 2.0 ** rng.integers(-3, 4, K),
    ]
    a = sf.encode(np.array(rows), f, saturate=True).astype(np.int64)
    cols = [np.ones(K), np.full(K, float(big)), -np.ones(K), np.abs(x) * 2.0 ** rng.integers(-20, 21, K),
            np.full(K, 0.0), np.where(np.arange(K) % 4, 1.0, -1.0) * 2.0 ** -6, x, np.full(K, float(f.min_subnormal))]
    b = sf.encode(np.array(cols).T, f, saturate=True).astype(np.int64)
    return a, b


@pytest.mark.parametrize("fmt, accumulator",
                         [(f, acc) for f in ("fp16", "bf16", "fp8_e4m3", "fp8_e5m2")
                          for acc in ("fp32", "h100", "h100-mma", "ada", "a100") if acc == "fp32" or _modelled(f, acc)])
@pytest.mark.parametrize("K", [1, 15, 33, 100])
def test_adversarial(monkeypatch, fmt, K, accumulator):
    if not (fmt == "bf16" and accumulator == "fp32"):  # bf16 subnormal products: the fall-back's
        monkeypatch.setattr(_accumulate, "_reference", _refuse)
    a, b = _adversarial(fmt, K, K)
    _check(a, b, fmt, accumulator=accumulator)
    _check(a, b, fmt, accumulator=accumulator, block=7)


@pytest.mark.parametrize("accumulator", ["fp32", "h100"])
def test_c_and_out_formats(device_only, accumulator):
    rng = np.random.default_rng(3)
    a = _finite_patterns(rng, "bf16", (5, 40), 8, subnormals=False)
    b = _finite_patterns(rng, "bf16", (40, 6), 8, subnormals=False)
    c = sf.encode(rng.standard_normal((5, 6)) * 4, "fp32").astype(np.int64)
    c[0, 0], c[1, 1] = 0x80000000, 0  # -0 and +0 starts
    _check(a, b, "bf16", accumulator=accumulator, c=c)
    _check(a, b, "bf16", accumulator=accumulator, c=c[:1], block=16)
    _check(a, b, "bf16", accumulator=accumulator, out_format="bf16")
    _check(a, b, "bf16", accumulator=accumulator, out_format="fp64")
    if accumulator == "fp32":
        _check(a, b, "bf16", accumulator=accumulator, out_format="fp16")


def test_negative_zero_products_keep_their_sign(device_only):
    a = sf.encode(np.array([[-0.0, 0.0, -0.0]]), "fp16").astype(np.int64)
    b = sf.encode(np.array([[1.0], [-1.0], [2.0]]), "fp16").astype(np.int64)
    for acc in ("fp32", "h100", "v100"):
        got, ref = _call(a, b, "fp16", accumulator=acc)
        # IEEE: s = -0 + -0 + -0; the fused adder starts from c = +0 (the reference's rule)
        assert got[0, 0] == ref[0, 0] == (0x80000000 if acc == "fp32" else 0)
        got, ref = _call(a, b, "fp16", accumulator=acc, c=np.array([[0x80000000]]))
        assert got[0, 0] == ref[0, 0] == 0x80000000


def test_bf16_extremes_fused_path(device_only):
    # products far below 2**-126 and beyond the float32 range: the fused model in float64
    a = sf.encode(np.array([[2.0**-100, 2.0**-110, 3.0e38, -1.0]]), "bf16").astype(np.int64)
    b = sf.encode(np.array([[2.0**-40], [2.0**-30], [1.5e38], [1.0]]), "bf16").astype(np.int64)
    for acc in ("h100", "a100"):
        _check(a, b, "bf16", accumulator=acc)
        _check(a[:, :2], b[:2], "bf16", accumulator=acc)


def test_fall_backs_equal_the_reference(reference_calls):
    calls = reference_calls
    rng = np.random.default_rng(5)
    fp16_a, fp16_b = _finite_patterns(rng, "fp16", (3, 20), 4), _finite_patterns(rng, "fp16", (20, 4), 4)
    _check(fp16_a, fp16_b, "fp16", rounding="upward")
    special = fp16_a.copy()
    special[0, 0], special[1, 3], special[2, 5] = 0x7C00, 0xFC00, 0x7E00  # inf, -inf, NaN
    for acc in ("fp16", "h100"):  # infinities and NaNs in another rounding mode
        _check(special, fp16_b, "fp16", accumulator=acc, rounding="upward" if acc == "fp16" else "toward_zero")
    _check(fp16_a, fp16_b, "fp16", accumulator="fp8_e5m2")  # an FP8 output (the accumulator's): the reference's
    _check(fp16_a, fp16_b, "fp16", accumulator="fp16", order="pairwise", rounding="toward_zero")
    _check(fp16_a, fp16_b, "fp16", rounding="toward_zero")
    _check(fp16_a, fp16_b, "fp16", accumulator="h100", out_format="fp16")  # the chip's fp16-output mode
    _check(fp16_a, fp16_b, "fp16", product="fp16")
    _check(fp16_a[0], fp16_b, "fp16")  # a 1-d operand
    assert len(calls) == 9
    got, flags = matmul_bits(torch.from_numpy(fp16_a), torch.from_numpy(fp16_b), "fp16", return_flags=True)
    ref, ref_flags = sf.matmul(fp16_a, fp16_b, "fp16", return_flags=True)
    assert np.array_equal(got.numpy().view(np.uint32), ref)
    assert np.array_equal(flags.swamped, ref_flags.swamped)


def test_signed_torch_views_and_errors():
    x = torch.tensor([[1.0, -2.0], [0.5, 65504.0]], dtype=torch.float16)
    bits = matmul_bits(x.view(torch.int16), x.view(torch.int16), "fp16")
    assert bits.dtype == torch.int32
    assert torch.equal(bits.view(torch.float32), x.float() @ x.float())
    out = matmul_bits(x.view(torch.int16), x.view(torch.int16), "fp16", out_format="bf16")
    assert out.dtype == torch.int16
    with pytest.raises(ValueError, match="does not fit"):
        matmul_bits(torch.tensor([[0x1FF]]), torch.tensor([[1]]), "fp8_e4m3")
    with pytest.raises(ValueError):
        matmul_bits(torch.ones(2, 3, dtype=torch.int64), torch.ones(2, 3, dtype=torch.int64), "fp16")


def _drawn_patterns(data, fmt, b_format, M, K, N):
    """(M, K) and (K, N) arrays of any bit patterns of fmt and b_format (or fmt)."""
    fa, fb = _fmt(fmt), _fmt(b_format or fmt)
    a = np.array(data.draw(st.lists(st.integers(0, (1 << fa.bits) - 1), min_size=M * K, max_size=M * K))).reshape(M, K)
    b = np.array(data.draw(st.lists(st.integers(0, (1 << fb.bits) - 1), min_size=K * N, max_size=K * N))).reshape(K, N)
    return a, b


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(PAIRS), st.sampled_from([None, "h100", "ada", "h100-mma"]), st.integers(1, 40),
       st.integers(1, 3), st.integers(1, 3), st.data())
def test_hypothesis_bit_patterns(pair, accumulator, K, M, N, data):
    fmt, b_format = pair
    a, b = _drawn_patterns(data, fmt, b_format, M, K, N)
    _check(a, b, fmt, b_format=b_format, accumulator=accumulator)


# ---- return_flags="swamped": the counts on the device ---------------------------------------------------------------

def _check_swamped(a, b, fmt, **kwargs):
    """matmul_bits(..., return_flags="swamped") equals sf.matmul's bits and counts."""
    ref, ref_swamped = sf.matmul(a, b, fmt, return_flags="swamped", **kwargs)
    c = kwargs.pop("c", None)
    got, swamped = matmul_bits(torch.from_numpy(np.asarray(a, np.int64)), torch.from_numpy(np.asarray(b, np.int64)),
                               fmt, c=None if c is None else torch.from_numpy(np.asarray(c, np.int64)),
                               return_flags="swamped", **kwargs)
    assert np.array_equal(got.numpy().view(ref.dtype), ref)
    assert swamped.dtype == torch.int64 and tuple(swamped.shape) == ref_swamped.shape
    bad = np.flatnonzero(swamped.numpy().reshape(-1) != ref_swamped.reshape(-1))
    assert not bad.size, f"{bad.size} counts differ, first at {bad[0]}: {swamped.numpy().reshape(-1)[bad[0]]} " \
                         f"!= {ref_swamped.reshape(-1)[bad[0]]}"
    return swamped.numpy()


def _swamping(rng, fmt, shape, big):
    """Rows that start with a large term and go on with tiny ones of both signs (most of
    them swamped in fp32), with zeros and cancelling pairs among them."""
    f = _fmt(fmt)
    M, K = shape
    v = rng.standard_normal((M, K)) * 2.0 ** rng.integers(-14, -6, (M, K))
    v[:, 0] = big * np.sign(rng.standard_normal(M))
    v[:, 1::7] = 0.0
    if K > 4:
        v[:, 3], v[:, 4] = v[:, 0], -v[:, 0]  # the large term twice, then cancelled
    return sf.encode(v, f, saturate=True).astype(np.int64)


@pytest.mark.parametrize("fmt, b_format", PAIRS)
@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("block", [None, 16, 7])
def test_swamped_fp32_accumulator_random(device_only, fmt, b_format, shapes, block):
    rng = np.random.default_rng(len(shapes[0]) * 11 + shapes[0][-1])
    a = _finite_patterns(rng, fmt, shapes[0], spread=6, subnormals=fmt != "bf16")
    b = _finite_patterns(rng, b_format or fmt, shapes[1], spread=6, subnormals=fmt != "bf16")
    _check_swamped(a, b, fmt, b_format=b_format, accumulator="fp32", block=block)


@pytest.mark.parametrize("fmt, accumulator", [(f, acc) for f in ("fp16", "bf16", "fp8_e4m3", "fp8_e5m2")
                                                for acc in ["fp32"] + HARDWARE if acc == "fp32" or _modelled(f, acc)])
@pytest.mark.parametrize("K, block", [(1, None), (40, None), (100, None), (100, 32), (77, 7), (45, 16)])
def test_swamped_large_then_tiny(device_only, fmt, accumulator, K, block):
    rng = np.random.default_rng(K)
    big = 2.0 ** 6 if fmt.startswith("fp8") else 2.0 ** 10
    a = _swamping(rng, fmt, (6, K), big)
    b = np.abs(_finite_patterns(rng, fmt, (K, 5), spread=1, subnormals=False)) & ((1 << (_fmt(fmt).bits - 1)) - 1)
    swamped = _check_swamped(a, b, fmt, accumulator=accumulator, block=block)
    if K >= 40 and fmt in ("fp16", "bf16") and block is None:
        assert swamped.sum() > 0  # the data does what it is for


@pytest.mark.parametrize("fmt, b_format, accumulator",
                         [(f, g, acc) for f, g in PAIRS for acc in HARDWARE if _modelled(f, acc)])
@pytest.mark.parametrize("shapes", SHAPES[1:])
def test_swamped_hardware_presets_random(device_only, fmt, b_format, accumulator, shapes):
    rng = np.random.default_rng(shapes[0][-1] + 1)
    a = _finite_patterns(rng, fmt, shapes[0], spread=20)
    b = _finite_patterns(rng, b_format or fmt, shapes[1], spread=20)
    _check_swamped(a, b, fmt, b_format=b_format, accumulator=accumulator)
    _check_swamped(a, b, fmt, b_format=b_format, accumulator=accumulator, block=32)
    _check_swamped(a, b, fmt, b_format=b_format, accumulator=accumulator, block=5)


@pytest.mark.parametrize("fmt, accumulator",
                         [(f, acc) for f in ("fp16", "bf16", "fp8_e4m3", "fp8_e5m2")
                          for acc in ["fp32"] + HARDWARE if acc == "fp32" or _modelled(f, acc)])
@pytest.mark.parametrize("K", [1, 15, 33, 100])
def test_swamped_adversarial(monkeypatch, fmt, K, accumulator):
    # cancellation, carries, alignment, large then small, subnormals, zeros of both signs
    if not (fmt == "bf16" and accumulator == "fp32"):  # bf16 subnormal products: the fall-back's
        monkeypatch.setattr(_accumulate, "_reference", _refuse)
    a, b = _adversarial(fmt, K, K + 1)
    _check_swamped(a, b, fmt, accumulator=accumulator)
    _check_swamped(a, b, fmt, accumulator=accumulator, block=7)


def test_swamped_zeros_and_subnormals(device_only):
    zeros = sf.encode(np.where(np.arange(24).reshape(3, 8) % 2, -0.0, 0.0), "fp16").astype(np.int64)
    ones = sf.encode(np.ones((8, 2)), "fp16").astype(np.int64)
    sub = np.arange(1, 17, dtype=np.int64).reshape(2, 8) | np.array([[0], [0x8000]])  # fp16 subnormals
    for acc in ["fp32"] + HARDWARE:
        assert _check_swamped(zeros, ones, "fp16", accumulator=acc).sum() == 0  # a zero addend is never swamped
        _check_swamped(sub, ones, "fp16", accumulator=acc)
        _check_swamped(sub, ones, "fp16", accumulator=acc, block=3)
    e4m3 = np.arange(1, 33, dtype=np.int64).reshape(4, 8)  # subnormals and small normals
    for acc in ["fp32", "h100", "h100-mma", "ada", "b200"]:
        _check_swamped(e4m3, e4m3.T.copy(), "fp8_e4m3", accumulator=acc)


@pytest.mark.parametrize("accumulator", ["fp32", "h100", "h100-mma"])
def test_swamped_with_c_and_out_formats(device_only, accumulator):
    rng = np.random.default_rng(9)
    fmt = "fp8_e4m3" if accumulator == "h100-mma" else "bf16"
    a = _finite_patterns(rng, fmt, (5, 40), 8, subnormals=False)
    b = _finite_patterns(rng, fmt, (40, 6), 8, subnormals=False)
    c = sf.encode(rng.standard_normal((5, 6)) * 2.0 ** rng.integers(-2, 30, (5, 6)), "fp32").astype(np.int64)
    c[0, 0], c[1, 1] = 0x80000000, 0
    assert _check_swamped(a, b, fmt, accumulator=accumulator, c=c).sum() > 0
    _check_swamped(a, b, fmt, accumulator=accumulator, c=c[:1], block=16)
    _check_swamped(a, b, fmt, accumulator=accumulator, c=c, block=9)
    _check_swamped(a, b, fmt, accumulator=accumulator, out_format="bf16")
    _check_swamped(a, b, fmt, accumulator=accumulator, out_format="fp64")


def test_swamped_after_an_overflow(device_only):
    # a running sum that overflowed to infinity absorbs what follows, but is not finite:
    # those additions are not swamped (the definition asks for a finite partial sum)
    a = sf.encode(np.array([[2.0**127, 1.5 * 2.0**127, 1.0, -1.0, 2.0, 0.0],
                            [1.0, 2.0**-20, 2.0**127, 1.5 * 2.0**127, -2.0**127, 3.0]]), "bf16").astype(np.int64)
    b = sf.encode(np.ones((6, 2)), "bf16").astype(np.int64)
    for acc in ("fp32", "h100", "a100"):
        for block in (None, 1, 2, 4):
            _check_swamped(a, b, "bf16", accumulator=acc, block=block)


@pytest.mark.parametrize("block", [None, 4])
def test_swamped_fp32_against_numpy_float32(device_only, block):
    # an oracle outside the library: numpy's float32 additions, one at a time, swamped by
    # the definition (a non-zero addend leaving a finite running sum unchanged)
    rng = np.random.default_rng(21)
    a = _swamping(rng, "fp16", (4, 11), 2.0 ** 11)
    b = _finite_patterns(rng, "fp16", (11, 3), spread=2)
    x, y = sf.decode(a, "fp16", np.float32), sf.decode(b, "fp16", np.float32)
    want = np.zeros((4, 3), np.int64)
    for i in range(4):
        for j in range(3):
            total = None
            for k0 in range(0, 11, block or 11):
                s = None
                for k in range(k0, min(k0 + (block or 11), 11)):
                    t = np.float32(x[i, k] * y[k, j])  # exact: fp16 products fit float32
                    if s is not None:
                        r = np.float32(s + t)
                        want[i, j] += bool(t != 0 and r == s)
                        s = r
                    else:
                        s = t
                if total is not None:
                    r = np.float32(total + s)
                    want[i, j] += bool(s != 0 and r == total)
                    s = r
                total = s
    got, swamped = matmul_bits(torch.from_numpy(a), torch.from_numpy(b), "fp16", block=block, return_flags="swamped")
    assert np.array_equal(swamped.numpy(), want) and want.sum() > 0


def test_swamped_fall_back_and_every_flag(reference_calls):
    calls = reference_calls
    rng = np.random.default_rng(6)
    a, b = _finite_patterns(rng, "fp16", (3, 20), 4), _finite_patterns(rng, "fp16", (20, 4), 4)
    special = a.copy()
    special[0, 0] = 0x7C00  # inf, toward zero: the reference's case; its counts come back as a tensor
    for acc in ("fp32", "fp16"):
        _check_swamped(special, b, "fp16", accumulator=acc, rounding="toward_zero")
    _check_swamped(a, b, "fp16", accumulator="fp8_e5m2")
    assert len(calls) == 3
    got, flags = matmul_bits(torch.from_numpy(a), torch.from_numpy(b), "fp16", return_flags=True)  # every flag
    assert len(calls) == 4 and isinstance(flags, sf.AccumulationFlags)
    assert np.array_equal(flags.swamped, sf.matmul(a, b, "fp16", return_flags="swamped")[1])


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(PAIRS), st.sampled_from([None, "h100", "ada", "h100-mma", "v100"]), st.integers(1, 40),
       st.sampled_from([None, 1, 3, 8]), st.integers(1, 3), st.data())
def test_swamped_hypothesis_bit_patterns(pair, accumulator, K, block, M, data):
    fmt, b_format = pair
    if accumulator == "v100" and not _modelled(fmt, accumulator):
        accumulator = "h100"
    fa, fb = _fmt(fmt), _fmt(b_format or fmt)
    a = np.array(data.draw(st.lists(st.integers(0, (1 << fa.bits) - 1), min_size=M * K, max_size=M * K))).reshape(M, K)
    b = np.array(data.draw(st.lists(st.integers(0, (1 << fb.bits) - 1), min_size=K * 2, max_size=K * 2))).reshape(K, 2)
    _check_swamped(a, b, fmt, b_format=b_format, accumulator=accumulator, block=block)


# ---- IEEE fp16 and bf16 accumulators (softfloat.torch._accumulate_narrow) ---------------------------------------------

NARROW_PAIRS = [("fp16", None), ("bf16", None), ("fp8_e4m3", None), ("fp8_e5m2", None), ("fp8_e4m3", "fp8_e5m2"),
                ("fp16", "bf16")]
NARROW_SHAPES = SHAPES + [((2, 16), (16, 3)), ((3, 32), (32, 2)), ((2, 129), (129, 3))]


@pytest.mark.parametrize("fmt, b_format", NARROW_PAIRS)
@pytest.mark.parametrize("accumulator", ["fp16", "bf16"])
@pytest.mark.parametrize("shapes", NARROW_SHAPES)
def test_narrow_accumulator_random(device_only, fmt, b_format, accumulator, shapes):
    rng = np.random.default_rng(len(shapes[0]) * 13 + shapes[0][-1])
    # bf16 subnormals' products fall below float32's last bit: the fall-back's case
    bf = "bf16" in (fmt, b_format)
    a = _finite_patterns(rng, fmt, shapes[0], spread=6, subnormals=not bf)
    b = _finite_patterns(rng, b_format or fmt, shapes[1], spread=6, subnormals=not bf)
    _check_swamped(a, b, fmt, b_format=b_format, accumulator=accumulator)
    _check(a, b, fmt, b_format=b_format, accumulator=accumulator)


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e4m3"])
@pytest.mark.parametrize("accumulator", ["fp16", "bf16"])
@pytest.mark.parametrize("K", [1, 40, 100])
def test_narrow_large_then_tiny(device_only, fmt, accumulator, K):
    rng = np.random.default_rng(K + 3)
    big = 2.0 ** 6 if fmt.startswith("fp8") else 2.0 ** 10
    a = _swamping(rng, fmt, (6, K), big)
    b = np.abs(_finite_patterns(rng, fmt, (K, 5), spread=1, subnormals=False)) & ((1 << (_fmt(fmt).bits - 1)) - 1)
    swamped = _check_swamped(a, b, fmt, accumulator=accumulator)
    if K >= 40:
        assert swamped.sum() > 0  # the data does what it is for


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_narrow_stall(device_only, fmt):
    # fp16: 2048 + 1 is 2048 (11 bits), so the ones after it all vanish; bf16: 256 + 1 likewise
    big = 2048.0 if fmt == "fp16" else 256.0
    a = sf.encode(np.array([[big] + [1.0] * 20, [1.0] * 20 + [big], [big, 1.0, 1.0, -big] + [1.0] * 17]), fmt)
    b = sf.encode(np.ones((21, 1)), fmt)
    got, ref = _call(a, b, fmt, accumulator=fmt)
    values = sf.decode(ref, fmt).ravel()
    assert values[0] == big and values[1] == big + 20 and values[2] == 17.0  # the oracle's story
    assert np.array_equal(got, ref)
    assert _check_swamped(a, b, fmt, accumulator=fmt).ravel().tolist() == [20, 0, 2]  # big + 1 + 1 - big


@pytest.mark.parametrize("accumulator", ["fp16", "bf16"])
def test_narrow_zeros_cancellation_and_subnormals(device_only, accumulator):
    z = sf.encode(np.array([[-0.0, -0.0, -0.0], [0.0, -0.0, 0.0], [3.0, -3.0, 0.0], [-0.0, 1.0, -1.0]]), "fp16")
    ones = sf.encode(np.ones((3, 1)), "fp16")
    got, ref = _call(z, ones, "fp16", accumulator=accumulator)
    assert np.array_equal(got, ref)
    assert sf.decode(ref, accumulator).ravel().tolist() == [0.0] * 4
    assert (ref.ravel() >> 15).tolist() == [1, 0, 0, 0]  # only -0 + -0 + -0 is -0
    # a -0 start (c in out_format) and -0 products stay -0; a +0 product makes +0
    neg = sf.encode(np.array([[-0.0]]), accumulator)
    _check(z, ones, "fp16", accumulator=accumulator, c=np.broadcast_to(neg, (4, 1)).copy())
    # subnormal results: fp16 subnormal products and sums; bf16 products below 2**-126, exact in float32
    sub = np.arange(1, 41, dtype=np.int64).reshape(2, 20) | np.array([[0], [0x8000]])
    half = sf.encode(np.full((20, 3), 0.5) * np.array([1.0, -1.0, 0.25]), "fp16")
    _check_swamped(sub, half, "fp16", accumulator=accumulator)
    tiny_a = sf.encode(np.array([[2.0 ** -70, -2.0 ** -71, 2.0 ** -65, 1.5 * 2.0 ** -70]]), "bf16")
    tiny_b = sf.encode(np.array([[2.0 ** -60], [2.0 ** -60], [2.0 ** -62], [-2.0 ** -61]]), "bf16")
    _check_swamped(tiny_a, tiny_b, "bf16", accumulator=accumulator)
    _check_swamped(tiny_a, tiny_b, "bf16", accumulator=accumulator, out_format="fp32")


def test_narrow_fp16_overflow_on_the_device(device_only):
    # 60000 + 60000 overflows fp16 to inf, which stays inf (no NaN: terms are finite)
    a = sf.encode(np.array([[60000.0, 60000.0, -1.0, -60000.0], [-256.0, -256.0, 1.0, 2.0]]), "fp16")
    b = sf.encode(np.array([[1.0, 2.0], [1.0, 256.0], [1.0, 1.0], [1.0, 4.0]]), "fp16")
    got, ref = _call(a, b, "fp16", accumulator="fp16")
    assert np.array_equal(got, ref)
    assert np.isinf(sf.decode(ref, "fp16")).sum() >= 2
    _check_swamped(a, b, "fp16", accumulator="fp16")
    _check(a, b, "fp16", accumulator="fp16", out_format="fp32")
    _check(a, b, "fp16", accumulator="bf16")  # bf16 holds these sums


def test_narrow_declines_near_float32_overflow(reference_calls):
    calls = reference_calls
    # bf16 products near 2**127: the bf16 accumulator overflows; TwoSum could overflow float32
    a = sf.encode(np.array([[2.0 ** 120, 2.0 ** 120, -2.0 ** 120, 2.0 ** 120, 2.0 ** 120]]), "bf16")
    b = sf.encode(np.full((5, 1), 2.0 ** 6), "bf16")
    for acc in ("bf16", "fp16"):
        _check(a, b, "bf16", accumulator=acc)
        _check_swamped(a, b, "bf16", accumulator=acc)
    assert len(calls) == 4
    # bf16 with large terms that stay below 2**126: the guarded device path
    calls.clear()
    a = sf.encode(np.array([[2.0 ** 90, 2.0 ** 90, -2.0 ** 90, 1.0]]), "bf16")
    b = sf.encode(np.full((4, 1), 2.0 ** 20), "bf16")
    _check_swamped(a, b, "bf16", accumulator="bf16")
    assert not calls


@pytest.mark.parametrize("accumulator", ["fp16", "bf16"])
def test_narrow_c_and_out_formats(device_only, accumulator):
    rng = np.random.default_rng(7)
    a = _finite_patterns(rng, "fp8_e4m3", (5, 40), 2)
    b = _finite_patterns(rng, "fp8_e4m3", (40, 6), 2)
    c32 = sf.encode(rng.standard_normal((5, 6)) * 4, "fp32").astype(np.int64)
    c32[0, 0], c32[1, 1] = 0x80000000, 0  # -0 and +0 starts
    c16 = sf.encode(rng.standard_normal((1, 6)) * 4, accumulator).astype(np.int64)
    for out in (None, "fp32", "fp64", "fp16", "bf16"):
        _check_swamped(a, b, "fp8_e4m3", accumulator=accumulator, out_format=out)
    _check_swamped(a, b, "fp8_e4m3", accumulator=accumulator, out_format="fp32", c=c32)
    _check_swamped(a, b, "fp8_e4m3", accumulator=accumulator, c=c16)
    _check(a, b, "fp8_e4m3", accumulator=accumulator, c=c16, out_format=accumulator)
    # a (T, M, K) batch against a shared (K, N)
    _check(np.stack([a, a[::-1]]), b, "fp8_e4m3", accumulator=accumulator)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(NARROW_PAIRS), st.sampled_from(["fp16", "bf16"]), st.integers(1, 40),
       st.integers(1, 3), st.integers(1, 3), st.data())
def test_narrow_hypothesis_bit_patterns(pair, accumulator, K, M, N, data):
    # any patterns: the finite calls take the device path, the others the reference
    fmt, b_format = pair
    a, b = _drawn_patterns(data, fmt, b_format, M, K, N)
    _check_swamped(a, b, fmt, b_format=b_format, accumulator=accumulator)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(NARROW_PAIRS), st.sampled_from(["fp16", "bf16"]), st.integers(1, 40), st.data())
def test_narrow_hypothesis_finite_on_the_device(pair, accumulator, K, data):
    fmt, b_format = pair
    fa, fb = _fmt(fmt), _fmt(b_format or fmt)

    def finite(f, n):
        # finite patterns; bf16 within [2**-63, 2**63) (the products of the whole range
        # need not be float32 values: the fall-back's, tested above; products from 2**126
        # on, where TwoSum's float32 sum may overflow, are declined by design)
        lo, hi = (0x2000, 0x5EFF) if f == sf.formats.bf16 else (0, int(sf.encode(np.array(f.max_finite), f)))
        v = data.draw(st.lists(st.integers(lo, hi) | st.just(0), min_size=n, max_size=n))
        s = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
        return np.array(v, np.int64) | (np.array(s, np.int64) << (f.bits - 1))

    a, b = finite(fa, 2 * K).reshape(2, K), finite(fb, K * 2).reshape(K, 2)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_accumulate, "_reference", _refuse)
        _check_swamped(a, b, fmt, b_format=b_format, accumulator=accumulator)
