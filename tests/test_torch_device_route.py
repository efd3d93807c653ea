"""emulate's route for tensors off the CPU: the whole product -- the operands'
quantisation, the products (softfloat.torch._accumulate.matmul_bits on the operands'
device), the scaling and the output rounding -- run by the engine with softfloat.torch's
kernels on the tensors.  With no GPU in CI the route is forced on CPU tensors; results,
gradients and telemetry must equal the CPU (numpy) route's bit for bit, and the device
path must answer: the numpy kernels are refused while the route is forced, and so is
matmul_bits' host reference where the device accumulation applies."""

from __future__ import annotations

import importlib

import pytest

from tests.conftest import import_torch

torch = import_torch()
F = torch.nn.functional

import softfloat.torch as sft  # noqa: E402
from softfloat.recipes import RECIPES  # noqa: E402
from softfloat.recipes import kernels as numpy_kernels  # noqa: E402
from softfloat.torch import _accumulate  # noqa: E402
from tests.test_torch_engine_kernels import same_record  # noqa: E402

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
    rows = [(t.site, t.kind, t.op, t.shape) for t in em.telemetry], em.report()  # the report shows every count
    return [y.detach(), x.grad, w.grad, bias.grad], rows, [t.record for t in em.telemetry]


def _force_device_route(monkeypatch):
    """The device route on CPU tensors, with the numpy kernels refused (a silent fall-back
    to them fails); returns the list each matmul_bits call appends to."""
    calls = []
    real = _accumulate.matmul_bits

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(_accumulate, "torch_path", lambda device: True)
    monkeypatch.setattr(_accumulate, "matmul_bits", spy)
    for name in ("encode", "decode", "scaled_encode", "scaled_decode"):
        monkeypatch.setattr(numpy_kernels, name, _refuse)
    monkeypatch.setattr(numpy_kernels.NUMPY_KERNELS, "matmul", _refuse)
    return calls


def _check_same(got, want):
    (values, rows, records), (want_values, want_rows, want_records) = got, want
    for g, w in zip(values, want_values):
        assert g.dtype == w.dtype and torch.equal(g.view(torch.int32), w.view(torch.int32))
    assert rows == want_rows
    assert len(records) == len(want_records)
    assert all(same_record(g, w) for g, w in zip(records, want_records))


@pytest.mark.parametrize("recipe, accumulator", [("bf16", "fp32"), ("fp8", "h100"), ("fp16", None),
                                                 ("mxfp8", "h100"), ("fp8-block", None), ("fp8", "fp32")])
@pytest.mark.parametrize("telemetry", [False, "operands", True])
def test_device_route_gives_the_cpu_bits(monkeypatch, recipe, accumulator, telemetry):
    want = _step(recipe, accumulator, telemetry)
    calls = _force_device_route(monkeypatch)
    monkeypatch.setattr(_accumulate, "_reference", _refuse)  # the device path answers
    _check_same(_step(recipe, accumulator, telemetry), want)
    # telemetry=True's swamped counts are computed on the device too (the same counts:
    # the reports above are equal)
    assert len(calls) == 3


@pytest.mark.parametrize("recipe", sorted(RECIPES))
@pytest.mark.parametrize("telemetry", [False, "operands", True])
def test_every_recipe_runs_on_the_device_route(monkeypatch, recipe, telemetry):
    # the recipe's own accumulator: every family and scaling, quantised by the torch kernels
    want = _step(recipe, None, telemetry)
    calls = _force_device_route(monkeypatch)
    monkeypatch.setattr(_accumulate, "_reference", _refuse)  # "fp32" too: products rounded into fp32
    _check_same(_step(recipe, None, telemetry), want)
    assert len(calls) == 3


def test_forced_route_refuses_the_numpy_kernels(monkeypatch):
    # the guard the tests above rely on: the host route, forced through the numpy kernels,
    # fails while they are refused
    _force_device_route(monkeypatch)
    monkeypatch.setattr(_accumulate, "torch_path", lambda device: False)
    with pytest.raises(AssertionError, match="fell back to the numpy reference"):
        _step("bf16", None, False)


def _model_steps(recipe, sdpa):
    """Two forward+backward steps of a 1-layer GPT (attention decomposed or through
    batched matmuls, a tied head) and a grouped conv1d: the loss, every gradient, the
    report."""
    from tests.torch_models import GPT, batch

    torch.manual_seed(0)
    model = GPT(n_layer=1, n_head=2, n_embd=32, block_size=8, sdpa=sdpa)
    conv = torch.nn.Conv1d(4, 6, 3, groups=2)
    signal = torch.randn(2, 4, 10)
    x, y = batch(torch.Generator().manual_seed(0), 2, 8)
    out = []
    with sft.emulate(recipe, model=model) as em:
        for _ in range(2):  # delayed scaling: the second step scales by the first's amax
            model.zero_grad()
            conv.zero_grad()
            _, loss = model(x, y)
            (loss + conv(signal).square().mean()).backward()
            out += [loss.detach()] + [p.grad.clone() for p in (*model.parameters(), *conv.parameters())]
    return out, em.report()


@pytest.mark.parametrize("recipe, sdpa", [("bf16", True), ("fp8", False), ("fp8-block", True), ("mxfp8", False)])
def test_models_run_on_the_device_route(monkeypatch, recipe, sdpa):
    want, want_report = _model_steps(recipe, sdpa)
    _force_device_route(monkeypatch)
    got, report = _model_steps(recipe, sdpa)
    assert report == want_report
    for g, w in zip(got, want):
        assert torch.equal(g.view(torch.int32), w.view(torch.int32))


_COMPILERS = {"identity": lambda fn: fn,
              "dynamo": lambda fn: torch.compile(fn, fullgraph=True, dynamic=False, backend="eager")}


@pytest.mark.parametrize("recipe, compiler", [("fp8", "identity"), ("fp8", "dynamo"), ("mxfp8", "identity"),
                                              ("bf16", "identity"), ("fp8-block", "identity")])
def test_device_route_with_compiled_quantisation(monkeypatch, recipe, compiler):
    # the engine's encode and scaled_encode_tensor's elements through compiled kernels
    # (softfloat.torch._kernels_compiled.encode_fast, ENCODE_MODE): forced here on CPU
    # tensors, with a stand-in compiler, the same bits, gradients and telemetry
    compiled = importlib.import_module("softfloat.torch._kernels_compiled")
    want = _step(recipe, None, True)
    _force_device_route(monkeypatch)
    monkeypatch.setattr(_accumulate, "_reference", _refuse)
    monkeypatch.setattr(compiled, "ENCODE_MODE", "always")
    compiled.reset()
    made = []
    monkeypatch.setattr(compiled, "_compile", lambda fn: made.append(fn) or _COMPILERS[compiler](fn))
    try:
        _check_same(_step(recipe, None, True), want)
        assert made and compiled.compile_failures() == {}
    finally:
        compiled.reset()


def _scaled_steps(recipe):
    """Two GradScaler steps of a 1-layer GPT under ``elementwise=True``: products,
    elementwise results (layer norm, softmax, GELU, the residual stream: by the recipe's
    rule, _amp's account under an autocast recipe) and the scaled loss; the losses, the
    scale, every gradient and parameter after the steps, the report."""
    import warnings

    from tests.torch_models import GPT, batch

    torch.manual_seed(0)
    model = GPT(n_layer=1, n_head=2, n_embd=32, block_size=8)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (GradScaler on the CPU)
        scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 10)
    x, y = batch(torch.Generator().manual_seed(0), 2, 8)
    out = []
    with sft.emulate(recipe, elementwise=True, model=model) as em:
        for _ in range(2):
            optimizer.zero_grad()
            _, loss = model(x, y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            out += [loss.detach(), torch.tensor(scaler.get_scale())] + [p.grad.clone() for p in model.parameters()]
    return out + [p.detach().clone() for p in model.parameters()], em.report()


@pytest.mark.parametrize("recipe", ["fp16", "bf16-pure"])
def test_elementwise_model_with_a_grad_scaler_on_the_device_route(monkeypatch, recipe):
    """elementwise=True on the device route: the elementwise results rounded by the torch
    kernels (as on CUDA; softfloat.quantize on the CPU is refused), the products by the
    engine's torch kernels -- the same bits as the numpy route, step after step."""
    quantize = importlib.import_module("softfloat.torch._quantize")
    want, want_report = _scaled_steps(recipe)
    _force_device_route(monkeypatch)
    monkeypatch.setattr(quantize, "_CPU_ROUTE", "torch")
    monkeypatch.setattr(quantize, "_quantize_values", _refuse)
    got, report = _scaled_steps(recipe)
    assert report == want_report
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and torch.equal(g.view(torch.int32), w.view(torch.int32))
