"""softfloat.torch.emulate keeps torch's semantics around the products: addmm/baddbmm
with beta=0 give ``input`` a zero gradient, mm/bmm refuse the shapes torch refuses, an
empty sequence is torch's error in the recurrent layers, convolutions keep the
channels-last memory format, and under torch.autocast the products take autocast's
casts and dtype -- each compared with torch itself."""

from __future__ import annotations

import warnings

import pytest

from tests.conftest import import_torch

torch = import_torch()

import torch.nn.functional as F  # noqa: E402

import softfloat.torch as sft  # noqa: E402


def _both(call):
    """(torch's result or exception, the emulation's), for calls that may raise."""
    out = []
    for emulated in (False, True):
        try:
            if emulated:
                with sft.emulate("fp32"):
                    out.append(call())
            else:
                out.append(call())
        except Exception as exc:  # noqa: BLE001 - compared below
            out.append(exc)
    return out


@pytest.mark.parametrize("op, shapes", [(torch.addmm, ((3, 2), (3, 4), (4, 2))),
                                        (torch.baddbmm, ((2, 3, 2), (2, 3, 4), (2, 4, 2)))])
@pytest.mark.parametrize("alpha", [1, 2.0])
def test_beta_zero_gives_input_a_zero_gradient_as_torch_does(op, shapes, alpha):
    c = torch.full(shapes[0], float("nan"), requires_grad=True)  # ignored, NaN and all
    a, b = torch.randn(shapes[1]), torch.randn(shapes[2])
    with sft.emulate("fp32"):
        y = op(c, a, b, beta=0, alpha=alpha)
    y.sum().backward()
    assert not y.isnan().any()
    assert c.grad is not None and torch.equal(c.grad, torch.zeros(shapes[0]))


@pytest.mark.parametrize("call", [lambda: torch.bmm(torch.ones(2, 2), torch.ones(2, 2)),
                                  lambda: torch.mm(torch.ones(2, 2, 2), torch.ones(2, 2)),
                                  lambda: torch.baddbmm(torch.ones(2, 2), torch.ones(2, 2), torch.ones(2, 2)),
                                  lambda: torch.addmm(torch.ones(2, 2), torch.ones(1, 2, 2), torch.ones(2, 2)),
                                  lambda: torch.nn.LSTM(2, 3)(torch.randn(0, 1, 2)),
                                  lambda: torch.nn.GRU(2, 3, batch_first=True)(torch.randn(1, 0, 2))])
def test_shapes_torch_refuses_are_torchs_errors(call):
    want, got = _both(call)
    assert isinstance(want, Exception) and type(got) is type(want) and str(got) == str(want)


CL = {4: torch.channels_last, 5: torch.channels_last_3d}


@pytest.mark.parametrize("func, x, w", [
    (F.conv2d, (2, 3, 5, 5), (4, 3, 3, 3)), (F.conv2d, (1, 3, 5, 5), (4, 3, 3, 3)),
    (F.conv3d, (1, 2, 4, 4, 4), (3, 2, 2, 2, 2)), (F.conv3d, (2, 2, 4, 4, 4), (3, 2, 2, 2, 2)),
    (F.conv_transpose2d, (2, 3, 4, 4), (3, 4, 3, 3))])
@pytest.mark.parametrize("which", ["input", "weight", "neither"])
def test_convolutions_keep_torchs_memory_format(func, x, w, which):
    x, w = torch.randn(x), torch.randn(w)
    fmt = CL[x.dim()]
    if which == "input":
        x = x.to(memory_format=fmt)
    elif which == "weight":
        w = w.to(memory_format=fmt)
    want = func(x, w)
    with sft.emulate("fp32"):
        got = func(x, w)
    assert got.stride() == want.stride() and torch.allclose(got, want, rtol=1e-5, atol=1e-5)


_PRODUCTS = {
    "linear": lambda x, w: F.linear(x, w), "matmul": lambda x, w: x @ w.T, "mm": lambda x, w: torch.mm(x, w.T),
    "bmm": lambda x, w: torch.bmm(x[None], w.T[None]), "addmm": lambda x, w: torch.addmm(x[:, :3], x, w.T),
    "baddbmm": lambda x, w: torch.baddbmm(x[None, :, :3], x[None], w.T[None]),
    "conv1d": lambda x, w: F.conv1d(x[None], w[:, :, None].expand(3, 8, 2)),
    "attention": lambda x, w: F.scaled_dot_product_attention(x[None], x[None], w[None]),
    "einsum": lambda x, w: torch.einsum("ik,jk->ij", x, w), "dot": lambda x, w: torch.dot(x[0], w[0]),
    "chain_matmul": lambda x, w: _quietly(torch.chain_matmul, x, w.T, w),
    "addmv_": lambda x, w: x[:, 0].clone().addmv_(x, w[0]),  # in place: self's dtype
}


def _quietly(func, *args):
    """``func(*args)`` without torch's deprecation warning (chain_matmul's)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "torch.chain_matmul is deprecated", UserWarning)
        return func(*args)


@pytest.mark.parametrize("name", list(_PRODUCTS))
def test_under_autocast_the_products_take_autocasts_casts_and_dtype(name):
    x, w = torch.randn(8, 8), torch.randn(3, 8)
    w = w[:, :] if name != "attention" else torch.randn(8, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        want = _PRODUCTS[name](x, w)
        with sft.emulate("fp32") as em:
            got = _PRODUCTS[name](x, w)
    with sft.emulate("fp32"):  # the oracle: the same emulation of autocast's casts, outside it
        cast = _PRODUCTS[name](x.bfloat16(), w.bfloat16())
    assert got.dtype == want.dtype and len(em.telemetry) > 0
    if want.dtype == torch.bfloat16:
        assert torch.equal(got, cast)


def test_autocast_makes_mixed_dtypes_one_emulated_product():
    x, layer = torch.randn(4, 8), torch.nn.Linear(8, 2).bfloat16()
    with torch.autocast("cpu", dtype=torch.bfloat16), sft.emulate("bf16") as em:
        got = layer(x)
    with sft.emulate("bf16"):
        want = layer(x.bfloat16())
    assert got.dtype == torch.bfloat16 and torch.equal(got, want) and len(em.telemetry) == 1


@pytest.mark.parametrize("cls", [torch.nn.LSTM, torch.nn.GRU, torch.nn.RNN])
@pytest.mark.parametrize("onednn", [True, False])
def test_under_autocast_recurrent_layers_return_torchs_dtypes(cls, onednn):
    """torch's CPU nn.LSTM runs as oneDNN's mkldnn_rnn_layer where oneDNN is on, which
    autocast lowers whole: outputs and states in bfloat16; the written-out LSTM (float32
    before) casts its inputs alike.  GRU and RNN take their dtypes from their products.
    Values: torch's to bfloat16 rounding (oneDNN's gates are its own arithmetic)."""
    torch.manual_seed(6)
    layer, x = cls(4, 6), torch.randn(3, 2, 4)

    def flat(out):
        return [t for o in out for t in (o if isinstance(o, tuple) else (o,))]
    with warnings.catch_warnings():  # flags() also sets TF32 and warns of no Intel GPU
        warnings.filterwarnings("ignore", "TF32 acceleration on top of oneDNN", UserWarning)
        with torch.backends.mkldnn.flags(enabled=onednn), torch.autocast("cpu", dtype=torch.bfloat16):
            want = flat(layer(x))
            with sft.emulate("fp32") as em:
                got = flat(layer(x))
    assert [t.dtype for t in got] == [t.dtype for t in want] and em.telemetry
    for a, b in zip(got, want):
        assert torch.allclose(a.float(), b.float(), rtol=2 ** -6, atol=2 ** -6)
