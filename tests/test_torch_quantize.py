"""softfloat.torch.quantize against softfloat.quantize and ml_dtypes; the dtype rule, the
straight-through gradient, the errors; bits exchange re-exported."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import import_torch

torch = import_torch()
ml_dtypes = pytest.importorskip("ml_dtypes")

import softfloat as sf  # noqa: E402
import softfloat.torch as sft  # noqa: E402

SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-40, 3.4e38, 65504.0, 65520.0, 448.0, 464.0,
            57344.0, 61440.0, 2.0**-133, 2.0**-126, 2.0**-10, 2.0**-9 * 1.5]


def _data(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n).astype(np.float32) * np.float32(2.0) ** rng.integers(-30, 30, n).astype(np.float32)
    return np.concatenate([x, np.float32(SPECIALS)]).astype(np.float32)


def _same(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a.shape == b.shape and np.array_equal(np.isnan(a), np.isnan(b)) and \
        np.array_equal(np.where(np.isnan(a), 0, a), np.where(np.isnan(b), 0, b)) and \
        np.array_equal(np.signbit(a), np.signbit(b))


@pytest.mark.parametrize("fmt, dtype", [("bf16", ml_dtypes.bfloat16), ("fp8_e4m3", ml_dtypes.float8_e4m3fn),
                                        ("fp8_e5m2", ml_dtypes.float8_e5m2), ("fp16", np.float16)])
def test_nearest_even_matches_ml_dtypes(fmt, dtype):
    x = _data()
    q = sft.quantize(torch.from_numpy(x), fmt)
    assert q.dtype == torch.float32
    with np.errstate(over="ignore"):  # numpy's float16 cast warns where it overflows
        expected = x.astype(dtype).astype(np.float32)
    assert _same(q.numpy(), expected)


@pytest.mark.parametrize("rounding", ["nearest_even", "toward_zero", "upward", "nearest_away", "odd"])
@pytest.mark.parametrize("fmt", ["bf16", "fp8_e4m3", "fp8_e5m2", "fp6_e2m3", "fp4_e2m1", "fp16"])
def test_every_mode_is_softfloat_quantize(fmt, rounding):
    x = _data(1000, seed=1)
    got = sft.quantize(torch.from_numpy(x), fmt, rounding, saturate=True)
    assert _same(got.numpy(), sf.quantize(x, fmt, rounding, saturate=True))


def test_stochastic_rounding_takes_numpy_seeds():
    x = _data(1000, seed=2)
    got = sft.quantize(torch.from_numpy(x), "bf16", "stochastic", rng=7)
    assert _same(got.numpy(), sf.quantize(x, "bf16", "stochastic", rng=7))
    again = sft.quantize(torch.from_numpy(x), "bf16", "stochastic", rng=np.random.default_rng(7))
    assert _same(again.numpy(), sf.quantize(x, "bf16", "stochastic", rng=np.random.default_rng(7)))
    with pytest.raises(TypeError, match="rng.*torch.Generator"):
        sft.quantize(torch.from_numpy(x), "bf16", "stochastic", rng=torch.Generator())


@pytest.mark.parametrize("dtype, fmt, expected", [
    (torch.float32, "bf16", torch.float32), (torch.float64, "fp32", torch.float64),
    (torch.float16, "bf16", torch.float32), (torch.bfloat16, "fp8_e4m3", torch.bfloat16),
    (torch.float16, "fp8_e4m3", torch.float16), (torch.bfloat16, "fp32", torch.float32),
    (torch.float32, "fp64", torch.float64)])
def test_result_dtype_follows_softfloat_quantize(dtype, fmt, expected):
    t = torch.tensor([0.1, -3.0, 1e-3], dtype=dtype)
    q = sft.quantize(t, fmt)
    assert q.dtype == expected and q.device == t.device
    exact = t.double().numpy()  # every float16/bfloat16/float32 value is a float64 value
    assert _same(q.double().numpy(), sf.quantize(exact, fmt))


def test_straight_through_gradient_and_input_untouched():
    t = torch.tensor([[0.1, 1e6], [2.0**-30, -7.3]], requires_grad=True)
    before = t.detach().clone()
    q = sft.quantize(t, "fp8_e4m3", saturate=True)
    assert q.requires_grad
    (q * torch.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert t.grad.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert torch.equal(t.detach(), before)


def test_strided_input():
    x = torch.from_numpy(_data(400)[:400].reshape(20, 20)).t()[::2]
    assert _same(sft.quantize(x, "bf16").numpy(), sf.quantize(x.numpy(), "bf16"))


@pytest.mark.parametrize("t, kind", [(torch.arange(4), "an integer"), (torch.ones(3, dtype=torch.bool), "a bool"),
                                     (torch.ones(2, dtype=torch.complex64), "a complex")])
def test_non_float_tensors_are_refused(t, kind):
    with pytest.raises(TypeError, match=rf"^t must be .*; got {kind} tensor of dtype " + str(t.dtype).replace(".", r"\.")):
        sft.quantize(t, "bf16")


def test_meta_tensors_are_refused():
    with pytest.raises(ValueError, match="t is a tensor on device meta"):
        sft.quantize(torch.empty(3, device="meta"), "bf16")


def test_not_a_tensor():
    with pytest.raises(TypeError, match="t must be"):
        sft.quantize(np.ones(3), "bf16")


def test_bits_exchange_is_reexported_and_zero_copy():
    assert sft.bits_of is sf.bits_of and sft.to_torch is sf.to_torch
    t = torch.tensor([1.0, -2.0], dtype=torch.bfloat16)
    bits, fmt = sft.bits_of(t)
    assert fmt == sf.bf16 and bits.tolist() == [0x3F80, 0xC000]
    back = sft.to_torch(bits, fmt)
    assert back.dtype == torch.bfloat16 and np.shares_memory(bits, back.view(torch.int16).numpy())
