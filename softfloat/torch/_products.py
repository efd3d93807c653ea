"""One emulated matrix product as a torch autograd Function: the forward product and,
in the backward pass, the dgrad and wgrad products, each run by the emulation's engine.

Shapes: ``a`` (M, K), ``b`` (K, N), ``bias`` None or broadcastable to (M, N) -- or a
batched call's stacks (B, M, K), (B, K, N) and a bias broadcastable to (B, M, N), one
engine call each way for the whole stack (``^T`` below then exchanges each matrix's
axes), so that a per-tensor scale covers the call's whole operand:

    fprop   y  = a @ b (+ bias in the accumulator)   engine.gemm(a,   b,   "fprop")
    dgrad   da = dy @ b^T                             engine.gemm(dy,  b^T, "dgrad")
    wgrad   db = a^T @ dy                             engine.gemm(a^T, dy,  "wgrad")
    bias    dbias = dy summed over the broadcast axes (torch, in dy's dtype: a reduction,
            not a product)

Where the engine computes: on a device that takes the torch path
(``softfloat.torch._accumulate.torch_path``: every device but the CPU) the engine gets
the tensors themselves and runs every bit-level call of the recipe there, with
softfloat.torch's kernels (``softfloat.torch._engine_kernels``); on the CPU it gets numpy
views of them and runs softfloat's numpy kernels, the faster of the two there.  The bits
are the same either way.

What is saved for the backward pass: the operands as the caller gave them (torch keeps
them for its own product anyway, so this costs no memory beyond torch's), and, where a
gradient will be taken, the engine's quantised copies of those the backward products
multiply (``GemmEngine.gemm_kept``: 1 or 2 bytes an element, as Transformer
Engine keeps its FP8 copies), so that the backward products take the forward's
quantisation instead of making it again, and wgrad takes dgrad's quantised gradient.
The engine takes a copy only where quantising again would give the same bits and
record (unscaled and per-tensor recipes, a delayed scale unchanged since the forward);
elsewhere (blocks, MX: their blocks run along the other axis once transposed) the
backward products quantise the saved operands again under the same call site, with
the scale the site's scaling state assigns.
"""

from __future__ import annotations

import functools
import math

import torch

from . import _accumulate
from ._tensors import device_values, host_values, to_tensor

__all__ = ["batched", "gemm", "rows"]


def gemm(run, a, b, bias=None, *, rounded=True, checked=False):
    """``a @ b (+ bias)`` of 2-d tensors (or of stacks of as many: 3-d tensors, one
    call's products), emulated forward and backward.

    ``run(A, B, kind, bias=C, rounded=...)`` computes one product (the emulation's
    engine call, bound to a call site) of the operands as :func:`_values` gives them --
    numpy arrays, or tensors on a device that takes the torch path -- and returns values
    of the same kind.  ``rounded=False`` leaves the forward result in the accumulator's
    fp32 (a float32 tensor, float64 for float64 operands) for the caller to finish, as
    ATen's addbmm loop does; the backward products are rounded as always.
    ``checked``: the caller checked the tensors that ``a``, ``b`` and ``bias`` are views
    of (softfloat.torch._ops, its operands): they are not checked again.  The backward
    never checks its saved operands again (the forward did), only the gradient.
    """
    if bias is None:
        return _Gemm.apply(a, b, run, (rounded, checked))
    return _GemmBias.apply(a, b, bias, run, (rounded, checked))


def batched(run, a, b, c=None):
    """``a @ b (+ c)`` of (..., M, K) and (..., K, N) tensors (``c`` None or broadcastable
    to (..., M, N)): the 2-d product of each entry of the broadcast batch axes, all of
    them one emulated call (a stack of B = the batch's size products, see
    :class:`softfloat.recipes.GemmEngine`: one per-tensor scale per operand over the
    call, one telemetry record)."""
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    m, n = a.shape[-2], b.shape[-1]
    if math.prod(batch) == 0:  # an empty batch: torch's own empty product, which autograd follows
        return torch.matmul(a, b) if c is None else torch.matmul(a, b) + c
    a3 = rows(a.expand(*batch, *a.shape[-2:]), 2)
    b3 = rows(b.expand(*batch, *b.shape[-2:]), 2)
    c3 = None if c is None else rows(c.expand(*batch, m, n), 2)
    return gemm(run, a3, b3, c3).reshape(*batch, m, n)


def rows(t, trailing: int = 1):
    """``t`` with its leading axes (all but the last ``trailing``) merged into one: what
    ``reshape(-1, ...)`` means, also where a trailing axis has length 0."""
    lead = t.shape[:t.dim() - trailing]
    return t.reshape(math.prod(lead), *t.shape[t.dim() - trailing:])


def _values(t, name: str, checked: bool = False):
    """``t`` as the engine reads it: the tensor on its device where that device takes
    the torch path (:func:`~softfloat.torch._tensors.device_values`), else a numpy view
    (:func:`~softfloat.torch._tensors.host_values`); ``checked``: checked already."""
    if _accumulate.torch_path(t.device):
        return device_values(t, name, checked)
    return host_values(t, name, checked)


def _forward(ctx, a, b, bias, run, how):
    rounded, checked = how
    ctx.run = run
    ctx.save_for_backward(a, b)
    # the quantised operands the backward products take again (none without a gradient)
    ctx.operands = {} if ctx.needs_input_grad[0] or ctx.needs_input_grad[1] else None
    values = run(_values(a, "input", checked), _values(b, "other", checked), "fprop",
                 bias=None if bias is None else _values(bias, "bias", checked), rounded=rounded, operands=ctx.operands)
    if ctx.operands is not None:
        if not ctx.needs_input_grad[1]:  # no wgrad: the input is not multiplied again
            ctx.operands.pop("input", None)
        if not ctx.needs_input_grad[0]:  # no dgrad: nor the weight
            ctx.operands.pop("weight", None)
    dtype = a.dtype if rounded or a.dtype == torch.float64 else torch.float32  # fp32 sums: kept whole
    return to_tensor(values, dtype, a.device)


def _backward(ctx, saved, grad):
    a, b = saved
    g = _values(grad, "grad_output")
    grad_a = grad_b = None
    operands = ctx.operands
    if operands is not None:
        operands.pop("grad", None)  # each backward pass its own gradient (retain_graph=True: several)
    with torch._C.DisableTorchFunction():  # backward() may run inside an active emulation
        if ctx.needs_input_grad[0]:
            grad_a = to_tensor(ctx.run(g, _values(b, "other", True).swapaxes(-1, -2), "dgrad", operands=operands),
                               a.dtype, a.device)
        if ctx.needs_input_grad[1]:
            grad_b = to_tensor(ctx.run(_values(a, "input", True).swapaxes(-1, -2), g, "wgrad", operands=operands),
                               b.dtype, b.device)
    return grad_a, grad_b


#: what differentiating an emulated product's gradient raises
SECOND_DERIVATIVE = ("softfloat.torch.emulate: an emulated product has no second derivative (its backward "
                     "products run in softfloat's kernels, outside autograd), so a double backward -- "
                     "gradients taken with create_graph=True, then differentiated again -- is not supported; "
                     "take higher derivatives outside the emulation")


def _first_order(backward):
    """torch's ``once_differentiable`` with this emulation's message: the backward runs
    without a graph, given the saved tensors (unpacked once); where a graph is being built (create_graph=True) and a gradient
    or an operand requires grad, its results hang from a node (:class:`_NoSecond`) whose
    inputs are those tensors, and which raises :data:`SECOND_DERIVATIVE` when
    differentiated -- never a silently missing term.  (once_differentiable hangs them
    from detached copies: ``autograd.grad`` towards an input then finds no path through
    the node and leaves the term out -- ``torch.autograd.functional.hessian`` came out
    zero.)"""
    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        saved = ctx.saved_tensors  # once: a non-reentrant checkpoint unpacks each tensor once
        # (its recompute under the mode); then attribute reads and the gradient's crossing to
        # numpy, none of the mode's cases, without a detour through it each
        with torch._C.DisableTorchFunction():
            tracked = [t for t in (*grads, *saved) if isinstance(t, torch.Tensor) and t.requires_grad]
            tracked = tracked if torch.is_grad_enabled() else []
            with torch.no_grad():
                outputs = backward(ctx, saved, *grads)
        if not tracked:
            return outputs
        return tuple(_NoSecond.apply(o, *tracked) if isinstance(o, torch.Tensor) else o for o in outputs)
    return wrapper


class _NoSecond(torch.autograd.Function):
    """``result`` unchanged, in the graph after ``tracked`` (the tensors it was computed
    from that require grad); differentiating it raises :data:`SECOND_DERIVATIVE`."""

    @staticmethod
    def forward(ctx, result, *tracked):  # noqa: D102 - torch's protocol
        return result.view_as(result)

    @staticmethod
    def backward(ctx, grad):  # noqa: D102
        raise RuntimeError(SECOND_DERIVATIVE)


class _Gemm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, run, how):  # noqa: D102 - torch's protocol
        return _forward(ctx, a, b, None, run, how)

    @staticmethod
    @_first_order
    def backward(ctx, saved, grad):  # noqa: D102
        return (*_backward(ctx, saved, grad), None, None)


class _GemmBias(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, bias, run, how):  # noqa: D102
        ctx.bias_shape, ctx.bias_dtype = bias.shape, bias.dtype
        return _forward(ctx, a, b, bias, run, how)

    @staticmethod
    @_first_order
    def backward(ctx, saved, grad):  # noqa: D102
        grad_a, grad_b = _backward(ctx, saved, grad)
        grad_bias = None
        if ctx.needs_input_grad[2]:
            with torch._C.DisableTorchFunction():
                grad_bias = _sum_to(grad, ctx.bias_shape).to(ctx.bias_dtype)
        return grad_a, grad_b, grad_bias, None, None


def _sum_to(grad, shape):
    """``grad`` summed over the axes that broadcasting ``shape`` to it added or stretched."""
    lead = grad.dim() - len(shape)
    if lead:
        grad = grad.sum(dim=tuple(range(lead)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if stretched:
        grad = grad.sum(dim=stretched, keepdim=True)
    return grad.reshape(shape)
