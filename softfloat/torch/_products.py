"""One emulated matrix product as a torch autograd Function: the forward product and,
in the backward pass, the dgrad and wgrad products, each run by the emulation's engine.

Shapes: ``a`` (M, K), ``b`` (K, N), ``bias`` None or broadcastable to (M, N):

    fprop   y  = a @ b (+ bias in the accumulator)   engine.gemm(a,   b,   "fprop")
    dgrad   da = dy @ b^T                             engine.gemm(dy,  b^T, "dgrad")
    wgrad   db = a^T @ dy                             engine.gemm(a^T, dy,  "wgrad")
    bias    dbias = dy summed over the broadcast axes (torch, in dy's dtype: a reduction,
            not a product)

What is saved for the backward pass: the operands as the caller gave them (torch keeps
them for its own product anyway, so this costs no memory beyond torch's), and the
backward products quantise them again through the engine under the same call site.
For unscaled recipes that is the forward's quantised operand, bit for bit; for scaled
(FP8) recipes the engine keeps each site's scaling state, so the backward cast uses the
scale the recipe assigns to it.  Transformer Engine keeps the FP8 copies instead, to
save memory; the values multiplied are the same where the scale is.
"""

from __future__ import annotations

import torch

from ._tensors import host_values, to_tensor

__all__ = ["gemm"]


def gemm(run, a, b, bias=None):
    """``a @ b (+ bias)`` of 2-d tensors, emulated forward and backward.

    ``run(A, B, kind, bias=C, device=D)`` computes one product of host arrays (the
    emulation's engine call, bound to a call site; off the CPU it computes on the
    operands' device D) and returns float32/float64 values.
    """
    if bias is None:
        return _Gemm.apply(a, b, run)
    return _GemmBias.apply(a, b, bias, run)


def _forward(ctx, a, b, bias, run):
    ctx.run = run
    ctx.save_for_backward(a, b)
    values = run(host_values(a, "input"), host_values(b, "other"), "fprop",
                 bias=None if bias is None else host_values(bias, "bias"), device=a.device)
    return to_tensor(values, a.dtype, a.device)


def _backward(ctx, grad):
    a, b = ctx.saved_tensors
    g = host_values(grad, "grad_output")
    grad_a = grad_b = None
    with torch._C.DisableTorchFunction():  # backward() may run inside an active emulation
        if ctx.needs_input_grad[0]:
            grad_a = to_tensor(ctx.run(g, host_values(b, "other").T, "dgrad", device=a.device), a.dtype, a.device)
        if ctx.needs_input_grad[1]:
            grad_b = to_tensor(ctx.run(host_values(a, "input").T, g, "wgrad", device=b.device), b.dtype, b.device)
    return grad_a, grad_b


class _Gemm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, run):  # noqa: D102 - torch's protocol
        return _forward(ctx, a, b, None, run)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):  # noqa: D102
        return (*_backward(ctx, grad), None)


class _GemmBias(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, bias, run):  # noqa: D102
        ctx.bias_shape, ctx.bias_dtype = bias.shape, bias.dtype
        return _forward(ctx, a, b, bias, run)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):  # noqa: D102
        grad_a, grad_b = _backward(ctx, grad)
        grad_bias = None
        if ctx.needs_input_grad[2]:
            with torch._C.DisableTorchFunction():
                grad_bias = _sum_to(grad, ctx.bias_shape).to(ctx.bias_dtype)
        return grad_a, grad_b, grad_bias, None


def _sum_to(grad, shape):
    """``grad`` summed over the axes that broadcasting ``shape`` to it added or stretched."""
    lead = grad.dim() - len(shape)
    if lead:
        grad = grad.sum(dim=tuple(range(lead)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if stretched:
        grad = grad.sum(dim=stretched, keepdim=True)
    return grad.reshape(shape)
