"""emulate's route for tensors off the CPU: the engine's products computed by
softfloat.torch._accumulate.matmul_on (matmul_bits on the operands' device).  With no GPU
in CI the route is forced on CPU tensors; results, gradients and telemetry must equal the
CPU route's bit for bit, and the device path must answer (its host reference refused)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="softfloat.torch needs torch (softfloat-emu[torch])")
F = torch.nn.functional

import softfloat.torch as sft  # noqa: E402
from softfloat.torch import _accumulate  # noqa: E402


def _refuse(*args, **kwargs):
    raise AssertionError("fell back to the numpy reference")


def _step(recipe, accumulator, telemetry):
    torch.manual_seed(0)
    x = torch.randn(8, 40, requires_grad=True)
    w = (torch.randn(24, 40) * 0.1).requires_grad_()
    bias = torch.randn(24, requires_grad=True)
    with sft.emulate(recipe, accumulator=accumulator, telemetry=telemetry) as em:
        y = F.linear(x, w, bias)
        y.backward(torch.randn(8, 24))
    rows = [(t.site, t.kind) for t in em.telemetry], em.report()  # the report shows every count
    return [y.detach(), x.grad, w.grad, bias.grad], rows


@pytest.mark.parametrize("recipe, accumulator", [("bf16", "fp32"), ("fp8", "h100"), ("fp16", None),
                                                 ("mxfp8", "h100"), ("fp8-block", None), ("fp8", "fp32")])
@pytest.mark.parametrize("telemetry", [False, "operands", True])
def test_device_route_gives_the_cpu_bits(monkeypatch, recipe, accumulator, telemetry):
    want, want_rows = _step(recipe, accumulator, telemetry)
    calls = []
    real = _accumulate.matmul_bits

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(_accumulate, "torch_path", lambda device: True)
    monkeypatch.setattr(_accumulate, "matmul_bits", spy)
    monkeypatch.setattr(_accumulate, "_reference", _refuse)  # the device path answers
    got, rows = _step(recipe, accumulator, telemetry)
    for g, w in zip(got, want):
        assert torch.equal(g.view(torch.int32), w.view(torch.int32))
    assert rows == want_rows
    # telemetry=True's swamped counts are computed on the device too (the same counts:
    # the reports above are equal)
    assert len(calls) == 3


def test_matmul_on_counts_swamped_on_the_device(monkeypatch):
    import numpy as np
    import softfloat as sf
    a = sf.encode(np.array([[1.0, 2.0 ** -30]]), "bf16")
    b = sf.encode(np.array([[1.0], [1.0]]), "bf16")
    monkeypatch.setattr(_accumulate, "_reference", _refuse)  # the device path answers
    run = _accumulate.matmul_on("cpu")
    for acc in ("fp32", "h100"):
        bits, swamped = run(a, b, "bf16", accumulator=acc, out_format="fp32", return_flags="swamped")
        ref, ref_swamped = sf.matmul(a, b, "bf16", accumulator=acc, out_format="fp32", return_flags="swamped")
        assert bits.dtype == ref.dtype and np.array_equal(bits, ref)
        assert swamped.dtype == np.int64 and swamped.tolist() == ref_swamped.tolist() == [[1]]


def test_matmul_on_routes_every_flag_to_the_host(monkeypatch):
    import numpy as np
    import softfloat as sf
    a = sf.encode(np.array([[1.0, 2.0 ** -30]]), "bf16")
    b = sf.encode(np.array([[1.0], [1.0]]), "bf16")
    monkeypatch.setattr(_accumulate, "matmul_bits", _refuse)
    run = _accumulate.matmul_on("cpu")
    bits, flags = run(a, b, "bf16", out_format="fp32", return_flags=True)
    assert np.array_equal(bits, sf.matmul(a, b, "bf16", out_format="fp32")) and flags.swamped.tolist() == [[1]]
