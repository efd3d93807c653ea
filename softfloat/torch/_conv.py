"""``F.conv1d``, ``F.conv2d`` and ``F.conv3d`` as emulated matrix products over torch's
unfold (see :func:`convolution` for the definition), and ``F.conv_transpose1d``/``2d``/
``3d`` as such a convolution of the zero-stuffed input (:func:`transposed`)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ._products import gemm

__all__ = ["convolution", "transposed"]


def convolution(run, bound: dict, dims: int):
    """The emulated ``conv{dims}d(input, weight, bias=None, stride=1, padding=0,
    dilation=1, groups=1)`` (dims 1, 2 or 3 -- :func:`_convolution3d`; ``padding`` an
    int, a tuple, "same" or "valid"; unbatched inputs as torch takes them).

    Pencil-and-paper definition: a conv1d is the conv2d of height 1.  With X (N, C, H, W)
    zero-padded as ``padding`` says ("same": total ``dilation * (k - 1)`` per axis, the
    odd one on the bottom/right, as torch pads it), kernel (kh, kw), G = ``groups``,
    Cg = C / G input channels and Og = O / G output channels per group::

        cols = F.unfold(X, (kh, kw), dilation=dilation, stride=stride)   # (N, C*kh*kw, L)
        A    = cols.transpose(1, 2).reshape(N * L, C*kh*kw)             # exact data movement
        for each group g (its K = Cg*kh*kw columns of A, its Og filters):
            Y_g = product(A[:, g*K:(g+1)*K], W[g*Og:(g+1)*Og].reshape(Og, K)^T,
                          bias = bias[g*Og:(g+1)*Og])       # the engine's fprop, bias in the
                                                            # accumulator epilogue, one rounding
        Y    = concat_g(Y_g).reshape(N, OH, OW, O).permute(0, 3, 1, 2)

    The k order of each product (the engine's sequential order) is unfold's layout:
    channel-major, then kernel row, then kernel column (conv1d: channel, then kernel
    position).  The groups' products are one engine call under the call site (a stack of
    G products: one per-tensor scale per operand over the groups, one record).

    Backward: each group's dgrad (dA_g = dY_g W_g) and wgrad (dW_g^T = A_g^T dY_g) run
    through the engine; the bias gradient is torch's sum of dY.  The input gradient is
    then autograd's ``F.fold`` (col2im) of dA: where windows overlap (stride < dilated
    kernel), col2im adds the emulated values of dA in the caller's dtype (float32 torch
    additions in torch's order) -- those additions are *not* emulated; where windows do
    not overlap, the input gradient is dA's values moved, exactly.
    """
    if dims == 3:
        return _convolution3d(run, bound)
    x, w, bias = bound["input"], bound["weight"], bound.get("bias")
    groups = bound.get("groups", 1)
    _check(x, w, bias, groups, dims)
    unbatched = x.dim() == dims + 1
    if unbatched:
        x = x.unsqueeze(0)
    stride, dilation = _pair(bound.get("stride", 1), "stride", dims), _pair(bound.get("dilation", 1), "dilation", dims)
    if dims == 1:
        x, w = x.unsqueeze(2), w.unsqueeze(2)
    kh, kw = w.shape[-2:]
    pads = _padding(bound.get("padding", 0), (kh, kw), dilation, stride, dims)
    if any(pads):
        x = F.pad(x, (pads[2], pads[3], pads[0], pads[1]))
    n, out = x.shape[0], w.shape[0]
    oh = (x.shape[2] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (x.shape[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    if oh <= 0 or ow <= 0:
        raise ValueError(f"input of conv{dims}d is smaller than the (dilated) kernel after padding: input "
                         f"{tuple(bound['input'].shape)}, kernel {tuple(bound['weight'].shape)}")
    cols = F.unfold(x, (kh, kw), dilation=dilation, stride=stride)  # (N, C*kh*kw, L)
    k = cols.shape[1] // groups
    a = cols.transpose(1, 2).reshape(n * oh * ow, cols.shape[1])
    y = _grouped(run, a, w.reshape(out, k), bias, groups)
    y = y.reshape(n, oh, ow, out).permute(0, 3, 1, 2)
    if dims == 1:
        y = y.squeeze(2)
    if unbatched:
        y = y.squeeze(0)
    return _layout(y, bound["input"], bound["weight"])


def _convolution3d(run, bound: dict):
    """conv3d as :func:`convolution` defines conv2d, with one more kernel axis: the
    windows taken by ``Tensor.unfold`` on each spatial axis (every ``dilation``-th
    element of a window of ``dilation * (k - 1) + 1``), the k order channel, then depth,
    row, column.  Backward: autograd's gradient of those unfolds (the overlapping
    windows' emulated values added in the caller's dtype, as col2im does for conv2d)."""
    x, w, bias = bound["input"], bound["weight"], bound.get("bias")
    groups = bound.get("groups", 1)
    _check(x, w, bias, groups, 3)
    unbatched = x.dim() == 4
    if unbatched:
        x = x.unsqueeze(0)
    stride, dilation = (_values(bound.get(key, 1), key, 3, "conv3d") for key in ("stride", "dilation"))
    kernel = tuple(w.shape[2:])
    padding = bound.get("padding", 0)
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ValueError(f"padding of conv3d must be 'same', 'valid', an int or a tuple; got {padding!r}")
        if padding == "same" and stride != (1, 1, 1):
            raise ValueError(f"padding='same' of conv3d needs stride 1 (as torch); got stride {stride}")
        totals = [d * (k - 1) if padding == "same" else 0 for k, d in zip(kernel, dilation)]
        pads = [(t // 2, t - t // 2) for t in totals]
    else:
        pads = [(p, p) for p in _values(padding, "padding", 3, "conv3d")]
    x = F.pad(x, [v for pair in reversed(pads) for v in pair])
    for axis, (k, s, d) in enumerate(zip(kernel, stride, dilation)):
        x = x.unfold(2 + axis, d * (k - 1) + 1, s)[..., ::d]  # (N, C, oD, ..., k) windows
    n, c, od, oh, ow = x.shape[:5]
    if min(od, oh, ow) <= 0:
        raise ValueError(f"input of conv3d is smaller than the (dilated) kernel after padding: input "
                         f"{tuple(bound['input'].shape)}, kernel {tuple(w.shape)}")
    a = x.permute(0, 2, 3, 4, 1, 5, 6, 7).reshape(n * od * oh * ow, -1)
    out, k = w.shape[0], a.shape[1] // groups
    y = _grouped(run, a, w.reshape(out, k), bias, groups).reshape(n, od, oh, ow, out).permute(0, 4, 1, 2, 3)
    return _layout(y.squeeze(0) if unbatched else y, bound["input"], w)


def _grouped(run, a, wmat, bias, groups: int):
    """The products of every group, one call: A (R, G*K) by each group's filters
    ``wmat`` (G*Og, K) transposed, as a stack of G products (R, K) x (K, Og) -- one
    per-tensor scale per operand over all groups, as for one product -- then (R, G*Og)."""
    if groups == 1:
        return gemm(run, a, wmat.t(), bias)
    r, k = a.shape[0], wmat.shape[1]
    og = wmat.shape[0] // groups
    a3 = a.reshape(r, groups, k).transpose(0, 1)  # (G, R, K)
    w3 = wmat.reshape(groups, og, k).transpose(1, 2)  # (G, K, Og)
    y = gemm(run, a3, w3, None if bias is None else bias.reshape(groups, 1, og))
    return y.transpose(0, 1).reshape(r, groups * og)


def _check(x, w, bias, groups, dims) -> None:
    name = f"conv{dims}d"
    if x.dim() not in (dims + 1, dims + 2):
        raise ValueError(f"input of {name} must have {dims + 1} or {dims + 2} axes ((N,) C, ...); "
                         f"got shape {tuple(x.shape)}")
    if w.dim() != dims + 2:
        raise ValueError(f"weight of {name} must have {dims + 2} axes (O, C/groups, ...); got shape "
                         f"{tuple(w.shape)}")
    if not isinstance(groups, int) or groups < 1:
        raise ValueError(f"groups of {name} must be a positive int; got {groups!r}")
    channels = x.shape[-dims - 1]
    if channels != w.shape[1] * groups or w.shape[0] % groups:
        raise ValueError(f"weight of {name} must be (O, C/groups, ...) with O a multiple of groups: input has "
                         f"C={channels} channels and groups={groups}; got weight shape {tuple(w.shape)}")
    if bias is not None and tuple(bias.shape) != (w.shape[0],):
        raise ValueError(f"bias of {name} must have shape ({w.shape[0]},); got {tuple(bias.shape)}")


def _pair(value, name: str, dims: int) -> tuple:
    """A (height, width) pair; conv1d's single value is the width (height 1)."""
    values = (value,) * dims if isinstance(value, int) else tuple(value)
    if len(values) != dims or not all(isinstance(v, int) and v >= 1 for v in values):
        raise ValueError(f"{name} of conv{dims}d must be a positive int or {dims} of them; got {value!r}")
    return (1, *values) if dims == 1 else values


def _padding(padding, kernel, dilation, stride, dims) -> tuple:
    """(top, bottom, left, right) zero padding."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0, 0, 0, 0)
        if padding != "same":
            raise ValueError(f"padding of conv{dims}d must be 'same', 'valid', an int or a tuple; got {padding!r}")
        if stride != (1, 1):
            raise ValueError(f"padding='same' of conv{dims}d needs stride 1 (as torch); got stride "
                             f"{stride[1:] if dims == 1 else stride}")
        pads = []
        for k, d in zip(kernel, dilation):
            total = d * (k - 1)
            pads += [total // 2, total - total // 2]
        return tuple(pads)
    values = (padding,) * dims if isinstance(padding, int) else tuple(padding)
    if len(values) != dims or not all(isinstance(v, int) and v >= 0 for v in values):
        raise ValueError(f"padding of conv{dims}d must be 'same', 'valid', a non-negative int or {dims} of "
                         f"them; got {padding!r}")
    h, wd = (0, *values) if dims == 1 else values
    return (h, h, wd, wd)


def transposed(run, bound: dict, dims: int):
    """The emulated ``conv_transpose{dims}d(input, weight, bias=None, stride=1, padding=0,
    output_padding=0, groups=1, dilation=1)`` (dims 1, 2 or 3).

    Pencil-and-paper definition: the convolution (:func:`convolution`, stride 1, the
    same dilation and groups) of the input with ``stride - 1`` zeros put between its
    elements and ``dilation * (k - 1) - padding`` zeros around it (``output_padding``
    more at the end; a negative count crops), by the kernel flipped in space with its
    input and output channels exchanged per group -- the transposed convolution's values
    exactly, as implicit-GEMM kernels compute it (the products of the stuffed zeros are
    zero terms of the sums; an infinite or NaN weight meets them as 0 * inf = NaN, where
    torch's scatter of the input's products would not).
    """
    x, w, bias = bound["input"], bound["weight"], bound.get("bias")
    groups = bound.get("groups", 1)
    name = f"conv_transpose{dims}d"
    if x.dim() not in (dims + 1, dims + 2) or w.dim() != dims + 2:
        raise ValueError(f"{name} takes an input of {dims + 1} or {dims + 2} axes and a weight of {dims + 2} "
                         f"(C, O/groups, ...); got {tuple(x.shape)} and {tuple(w.shape)}")
    if not isinstance(groups, int) or groups < 1 or w.shape[0] % groups or x.shape[-dims - 1] != w.shape[0]:
        raise ValueError(f"weight of {name} must be (C, O/groups, ...) with C the input's channels, a multiple "
                         f"of groups={groups!r}; got input {tuple(x.shape)}, weight {tuple(w.shape)}")
    stride, padding, extra, dilation = (_values(bound.get(key, default), key, dims, name) for key, default in
                                        (("stride", 1), ("padding", 0), ("output_padding", 0), ("dilation", 1)))
    kernel = w.shape[2:]
    sizes = [(n - 1) * s + 1 for n, s in zip(x.shape[-dims:], stride)]
    stuffed = x.new_zeros(*x.shape[:-dims], *sizes)
    stuffed[(...,) + tuple(slice(None, None, s) for s in stride)] = x
    pads = []
    for k, p, e, d in reversed(list(zip(kernel, padding, extra, dilation))):  # F.pad: the last axis first
        pads += [d * (k - 1) - p, d * (k - 1) - p + e]
    c_in, og = w.shape[0], w.shape[1]
    w = w.reshape(groups, c_in // groups, og, *kernel).transpose(1, 2).reshape(groups * og, c_in // groups, *kernel)
    conv = {"input": F.pad(stuffed, pads), "weight": w.flip(list(range(2, 2 + dims))), "bias": bias,
            "stride": 1, "padding": 0, "dilation": tuple(dilation) if dims > 1 else dilation[0], "groups": groups}
    return _layout(convolution(run, conv, dims), x, bound["weight"])


def _layout(y, x, w):
    """``y`` in the memory format torch's convolution gives it: channels-last where the
    input or the weight is channels-last (4-d; channels_last_3d for 5-d), else contiguous
    -- but for a 3-d convolution of one sample on the CPU, whose kernel there (torch
    2.x) returns it contiguous."""
    fmt = {4: torch.channels_last, 5: torch.channels_last_3d}.get(y.dim())
    if fmt is None or (y.dim() == 5 and y.shape[0] == 1 and y.device.type == "cpu"):
        return y.contiguous()
    if any(t.dim() == y.dim() and t.is_contiguous(memory_format=fmt) and not t.is_contiguous() for t in (x, w)):
        return y.contiguous(memory_format=fmt)
    return y.contiguous()


def _values(value, name: str, dims: int, op: str) -> tuple:
    values = (value,) * dims if isinstance(value, int) else tuple(value)
    low = 1 if name in ("stride", "dilation") else 0
    if len(values) != dims or not all(isinstance(v, int) and v >= low for v in values):
        raise ValueError(f"{name} of {op} must be an int >= {low} or {dims} of them; got {value!r}")
    return values
