"""softfloat.torch.emulate: conv1d/conv2d against their definition (an independent
im2col in numpy, then the bit-level products), forward, dgrad and wgrad."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import import_torch

torch = import_torch()

import torch.nn.functional as F  # noqa: E402

import softfloat as sf  # noqa: E402
import softfloat.torch as sft  # noqa: E402
from tests.torch_checks import tensor  # noqa: E402
from tests.torch_checks import values as _np  # noqa: E402


def _t(shape, seed, spread=4):
    return tensor(shape, seed, spread)


def _prod(a, b, bias=None):
    """bf16 operands, fp32 accumulator (sequential k), bias added to the fp32 result, one
    rounding into bf16."""
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    acc = sf.decode(sf.matmul(sf.encode(a, "bf16"), sf.encode(b, "bf16"), "bf16", accumulator="fp32",
                              out_format="fp32"), "fp32")
    if bias is not None:
        acc = (acc + bias).astype(np.float32)
    return sf.quantize(acc, "bf16").astype(np.float32)


def _windows(shape, kernel, stride, dilation, pads):
    """Per (i, j) kernel position, the input rows and columns each output reads."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    h, w = shape[2] + pads[0] + pads[1], shape[3] + pads[2] + pads[3]
    oh, ow = (h - dh * (kh - 1) - 1) // sh + 1, (w - dw * (kw - 1) - 1) // sw + 1
    return oh, ow, [(i, j, np.arange(oh) * sh + i * dh, np.arange(ow) * sw + j * dw)
                    for i in range(kh) for j in range(kw)]


def _im2col(x, kernel, stride, dilation, pads):
    """(N*OH*OW, C*kh*kw): k ordered channel-major, then kernel row, then column."""
    xp = np.pad(x, ((0, 0), (0, 0), pads[:2], pads[2:]))
    oh, ow, wins = _windows(x.shape, kernel, stride, dilation, pads)
    cols = np.zeros((x.shape[0], oh, ow, x.shape[1], *kernel), np.float32)
    for i, j, rows, columns in wins:
        cols[..., i, j] = xp[:, :, rows][:, :, :, columns].transpose(0, 2, 3, 1)
    return cols.reshape(x.shape[0] * oh * ow, -1), oh, ow


def _col2im(dcols, shape, kernel, stride, dilation, pads):
    """The adjoint of _im2col, summed in float64 (the test's approximate oracle)."""
    n, c = shape[:2]
    oh, ow, wins = _windows(shape, kernel, stride, dilation, pads)
    d = dcols.reshape(n, oh, ow, c, *kernel).astype(np.float64)
    out = np.zeros((n, c, shape[2] + pads[0] + pads[1], shape[3] + pads[2] + pads[3]))
    for i, j, rows, columns in wins:
        np.add.at(out, (slice(None), slice(None), rows[:, None], columns[None, :]), d[..., i, j].transpose(0, 3, 1, 2))
    return out[:, :, pads[0]:out.shape[2] - pads[1], pads[2]:out.shape[3] - pads[3]]


def _reference(x, w, bias, g, groups, stride, dilation, pads):
    """Forward Y, the im2col gradient dA (before col2im), dW, by the definition."""
    out, kernel = w.shape[0], w.shape[2:]
    a, oh, ow = _im2col(x, kernel, stride, dilation, pads)
    k, og = a.shape[1] // groups, out // groups
    wm = w.reshape(out, k)
    gm = g.transpose(0, 2, 3, 1).reshape(-1, out)
    ys, das, dws = [], [], []
    for j in range(groups):
        ak, wk, gk = a[:, j * k:(j + 1) * k], wm[j * og:(j + 1) * og], gm[:, j * og:(j + 1) * og]
        ys.append(_prod(ak, wk.T, None if bias is None else bias[j * og:(j + 1) * og]))
        das.append(_prod(gk, wk))          # dgrad
        dws.append(_prod(ak.T, gk).T)      # wgrad
    y = np.concatenate(ys, 1).reshape(x.shape[0], oh, ow, out).transpose(0, 3, 1, 2)
    return y, np.concatenate(das, 1), np.concatenate(dws, 0).reshape(w.shape)


CASES = [  # (x shape, w shape, kwargs, pads (top, bottom, left, right))
    ((2, 3, 7, 6), (4, 3, 3, 3), {}, (0, 0, 0, 0)),
    ((2, 3, 7, 6), (4, 3, 3, 2), {"stride": 2, "padding": 1}, (1, 1, 1, 1)),
    ((1, 4, 9, 8), (6, 2, 3, 3), {"groups": 2, "dilation": (2, 1), "padding": (1, 2)}, (1, 1, 2, 2)),
    ((2, 2, 6, 6), (3, 2, 2, 3), {"padding": "same"}, (0, 1, 1, 1)),
    ((2, 2, 6, 6), (3, 2, 3, 3), {"stride": 3}, (0, 0, 0, 0)),   # windows do not overlap
]


@pytest.mark.parametrize("xs, ws, kw, pads", CASES)
def test_conv2d_is_the_definition(xs, ws, kw, pads):
    x, w, b = _t(xs, 1), _t(ws, 2), _t((ws[0],), 3)
    with sft.emulate("bf16", accumulator="fp32") as em:
        y = F.conv2d(x, w, b, **kw)
    g = _t(y.shape, 4).detach()
    y.backward(g)
    stride, dilation = kw.get("stride", 1), kw.get("dilation", 1)
    stride = (stride, stride) if isinstance(stride, int) else stride
    dilation = (dilation, dilation) if isinstance(dilation, int) else dilation
    ry, da, dw = _reference(_np(x), _np(w), _np(b), _np(g), kw.get("groups", 1), stride, dilation, pads)
    assert np.array_equal(_np(y), ry)
    assert np.array_equal(_np(w.grad), dw)
    assert torch.allclose(b.grad, g.sum((0, 2, 3)), rtol=1e-6, atol=0)  # torch's sum, in its order
    dx = _col2im(da, xs, ws[2:], stride, dilation, pads)
    overlap = any(s < d * (k - 1) + 1 for s, d, k in zip(stride, dilation, ws[2:]))
    if overlap:  # col2im adds the emulated values in float32 (torch's additions)
        assert np.allclose(_np(x.grad), dx, rtol=1e-6, atol=0)
    else:        # data movement only
        assert np.array_equal(_np(x.grad), dx.astype(np.float32))
    assert {r.kind for r in em.telemetry} == {"fprop", "dgrad", "wgrad"}
    assert len(em.telemetry) == 3 and {r.batch for r in em.telemetry} == {kw.get("groups", 1)}  # one call


def test_conv1d_is_conv2d_of_height_one():
    x, w = _t((2, 3, 10), 5), _t((4, 3, 3), 6)
    with sft.emulate("bf16", accumulator="fp32"):
        y = F.conv1d(x, w, padding="same", dilation=2)
        unbatched = F.conv1d(x[0], w, stride=2)
    y.sum().backward()
    ry, _, dw = _reference(_np(x)[:, :, None], _np(w)[:, :, None], None, np.ones((2, 4, 1, 10), np.float32),
                           1, (1, 1), (1, 2), (0, 0, 2, 2))
    assert np.array_equal(_np(y), ry[:, :, 0]) and np.array_equal(_np(w.grad), dw[:, :, 0])
    ru, _, _ = _reference(_np(x)[:1, :, None], _np(w)[:, :, None], None, np.ones((1, 4, 1, 4), np.float32),
                          1, (1, 2), (1, 1), (0, 0, 0, 0))
    assert np.array_equal(_np(unbatched), ru[0, :, 0])


def test_fp32_recipe_is_close_to_torch_and_modules_work():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
                                torch.nn.Conv2d(8, 4, 3, stride=2, groups=4), torch.nn.Flatten(),
                                torch.nn.LazyLinear(2))
    x = _t((2, 3, 9, 9), 7, 1)
    ref = model(x)
    with sft.emulate("fp32", accumulator="fp32") as em:
        y = model(x)
    assert torch.allclose(y, ref, rtol=1e-4, atol=1e-5)
    conv1d = torch.nn.Conv1d(3, 5, 4, padding="same", padding_mode="circular")
    with sft.emulate("fp32", accumulator="fp32"):
        z = conv1d(x[:, :, 0])
    assert torch.allclose(z, conv1d(x[:, :, 0]), rtol=1e-4, atol=1e-5)
    assert {"0", "2", "4"} <= {r.site for r in em.telemetry}


def test_bad_arguments_name_them():
    x, w = _t((1, 4, 5, 5), 8), _t((2, 3, 3, 3), 9)
    with sft.emulate("bf16"):
        with pytest.raises(ValueError, match="weight of conv2d"):
            F.conv2d(x, w)
        with pytest.raises(ValueError, match="padding='same' of conv2d needs stride 1"):
            F.conv2d(x, _t((2, 4, 3, 3), 10), padding="same", stride=2)
        with pytest.raises(ValueError, match="padding of conv1d"):
            F.conv1d(x[0, :, 0], _t((2, 4, 3), 11), padding="full")
        with pytest.raises(ValueError, match="bias of conv2d"):
            F.conv2d(x, _t((2, 4, 3, 3), 12), _t((3,), 13))


def _scatter(x, w, stride, padding, output_padding, dilation, groups):
    """conv_transpose2d by its definition: every input element scatters itself times the
    kernel into the output (float64; exact for the small integers used here)."""
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    oh = (h - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kh - 1) + output_padding[0] + 1
    ow = (wd - 1) * stride[1] - 2 * padding[1] + dilation[1] * (kw - 1) + output_padding[1] + 1
    y = np.zeros((n, og * groups, oh, ow))
    cg = c // groups
    for ci in range(c):
        g = ci // cg
        for i in range(h):
            for j in range(wd):
                for a in range(kh):
                    for b in range(kw):
                        r = i * stride[0] - padding[0] + a * dilation[0]
                        q = j * stride[1] - padding[1] + b * dilation[1]
                        if 0 <= r < oh and 0 <= q < ow:
                            y[:, g * og:(g + 1) * og, r, q] += x[:, ci, i, j, None] * w[ci, :, a, b]
    return y


@pytest.mark.parametrize("kw", [{}, {"stride": 2, "padding": 1, "output_padding": 1},
                                {"stride": (2, 1), "dilation": 2, "groups": 2}, {"padding": (2, 0)}])
def test_conv_transpose2d_is_the_scatter_definition(kw):
    """Integers in [-3, 3]: every product and sum exact in the fp32 recipe, so the
    emulated values equal the definition's exactly; gradients equal torch's own."""
    g = torch.Generator().manual_seed(5)
    x = torch.randint(-3, 4, (2, 4, 4, 5), generator=g).float().requires_grad_(True)
    w = torch.randint(-3, 4, (4, 3, 3, 2), generator=g).float().requires_grad_(True)
    with sft.emulate("fp32", accumulator="fp32") as em:
        y = F.conv_transpose2d(x, w, **kw)
    pair = (lambda v: (v, v) if isinstance(v, int) else v)
    expected = _scatter(_np(x).astype(np.float64), _np(w).astype(np.float64), pair(kw.get("stride", 1)),
                        pair(kw.get("padding", 0)), pair(kw.get("output_padding", 0)),
                        pair(kw.get("dilation", 1)), kw.get("groups", 1))
    assert np.array_equal(_np(y), expected)
    assert len(em.telemetry) == 1 and em.telemetry[0].batch == kw.get("groups", 1)
    dy = torch.randint(-2, 3, y.shape, generator=g).float()
    with sft.emulate("fp32", accumulator="fp32"):
        gx, gw = torch.autograd.grad(y, (x, w), dy)
    rx, rw = torch.autograd.grad(F.conv_transpose2d(x.double(), w.double(), **kw), (x, w), dy.double())
    assert torch.equal(gx, rx.float()) and torch.equal(gw, rw.float())


def test_conv_transpose_modules_and_1d():
    torch.manual_seed(2)
    up = torch.nn.ConvTranspose2d(3, 2, 4, stride=2, padding=1)
    one = torch.nn.ConvTranspose1d(3, 2, 3, stride=2, bias=False)
    x = _t((1, 3, 5, 5), 3, 1)
    with sft.emulate("fp32", accumulator="fp32") as em:
        y, z = up(x), one(x[:, :, 0])
    assert torch.allclose(y, up(x), atol=1e-5) and torch.allclose(z, one(x[:, :, 0]), atol=1e-5)
    assert len(em.telemetry) == 2
    with sft.emulate("bf16"), pytest.raises(ValueError, match="output_padding of conv_transpose2d"):
        F.conv_transpose2d(x, up.weight, output_padding=-1)


def _general(transposed, stride, padding, dilation, output_padding, groups, private=False):
    """torch.convolution (or torch._convolution) with these arguments, as a function of x, w, b."""
    if private:
        return lambda x, w, b: torch._convolution(x, w, b, stride, padding, dilation, transposed, output_padding,
                                                  groups, False, False, True, True)
    return lambda x, w, b: torch.convolution(x, w, b, stride, padding, dilation, transposed, output_padding, groups)


@pytest.mark.parametrize("func, xs, ws, bias", [
    (_general(False, [1, 2], [1, 0], [1, 1], [0, 0], 1), (2, 4, 6, 7), (6, 4, 3, 2), 6),
    (_general(False, [2], [1], [2], [0], 2), (2, 4, 9), (6, 2, 3), None),
    (_general(True, [2, 1], [1, 0], [1, 1], [1, 0], 2), (2, 4, 5, 5), (4, 3, 3, 2), 6),
    (_general(False, [1, 1, 1], [0, 1, 0], [1, 1, 1], [0, 0, 0], 1, private=True), (1, 2, 3, 4, 4),
     (3, 2, 2, 2, 2), 3),
])
def test_torch_convolution_is_the_emulated_convolution(func, xs, ws, bias):
    """torch.convolution and torch._convolution (the general entry points, either kind by
    their ``transposed`` flag) ran in torch without a word; they are the conv and
    conv_transpose products: on integers, torch's own values and gradients exactly."""
    g = torch.Generator().manual_seed(8)
    x = torch.randint(-3, 4, xs, generator=g).float().requires_grad_(True)
    w = torch.randint(-3, 4, ws, generator=g).float().requires_grad_(True)
    b = None if bias is None else torch.randint(-3, 4, (bias,), generator=g).float()
    want = func(x, w, b)
    want_grads = torch.autograd.grad(want.sum(), (x, w))
    with sft.emulate("fp32", accumulator="fp32") as em:
        got = func(x, w, b)
        grads = torch.autograd.grad(got.sum(), (x, w))
    assert torch.equal(got, want) and all(torch.equal(a, c) for a, c in zip(grads, want_grads))
    assert [r.kind for r in em.telemetry] == ["fprop", "dgrad", "wgrad"]


@pytest.mark.parametrize("func, xs, ws, kw", [
    (F.conv3d, (2, 4, 5, 6, 5), (6, 4, 3, 2, 3), {}),
    (F.conv3d, (1, 4, 6, 6, 6), (4, 2, 3, 3, 3), {"stride": (2, 1, 2), "padding": 1, "dilation": (1, 2, 1),
                                                   "groups": 2}),
    (F.conv3d, (4, 5, 5, 5), (3, 4, 3, 3, 3), {"padding": "same"}),
    (F.conv_transpose3d, (1, 4, 3, 4, 3), (4, 3, 2, 3, 2), {"stride": 2, "padding": 1, "output_padding": 1}),
    (F.conv_transpose1d, (2, 3, 7), (3, 5, 4), {"stride": 3, "padding": 2}),
])
def test_3d_and_transposed_convolutions_equal_torchs_exactly_on_integers(func, xs, ws, kw):
    """Integers in [-3, 3]: every product and sum exact in the fp32 recipe, so the values
    and gradients equal torch's own in float64, exactly."""
    g = torch.Generator().manual_seed(6)
    x = torch.randint(-3, 4, xs, generator=g).float().requires_grad_(True)
    w = torch.randint(-3, 4, ws, generator=g).float().requires_grad_(True)
    with sft.emulate("fp32", accumulator="fp32") as em:
        y = func(x, w, **kw)
    want = func(x.double(), w.double(), **kw)
    assert torch.equal(y, want.float())
    assert len(em.telemetry) == 1 and em.telemetry[0].batch == kw.get("groups", 1)
    dy = torch.randint(-2, 3, y.shape, generator=g).float()
    with sft.emulate("fp32", accumulator="fp32"):
        grads = torch.autograd.grad(y, (x, w), dy)
    for got, ref in zip(grads, torch.autograd.grad(want, (x, w), dy.double())):
        assert torch.equal(got, ref.float())
