"""Torch tensors rounded into a format, with a straight-through gradient."""

from __future__ import annotations

import numpy as np
import torch

from .._options import resolve_attributes
from .._random import key_from
from ..codec import quantize as _quantize_values
from ..formats import as_format
from ._kernels_compiled import quantize_fast
from ._tensors import check_device, check_float, host_values, to_tensor

__all__ = ["quantize"]


def quantize(t, fmt, rounding=None, *, saturate=None, subnormals=None, tininess=None, attributes=None,
             rng=None):
    """``t``'s values rounded into ``fmt``, as a tensor on ``t``'s device whose gradient
    passes through unchanged (the straight-through estimator).

    The rounding is :func:`softfloat.quantize`'s, bit for bit, with the same options.
    The result's dtype follows its rule: ``t``'s own dtype when that dtype holds every
    value of ``fmt`` (float32 stays float32 for bf16, fp16 and FP8; a bfloat16 tensor
    stays bfloat16 for FP8 and bf16), else the narrowest of float32 and float64 that
    does (float16 into bf16 gives float32).

    Preconditions
    -------------
    - ``t`` is a float tensor (float16, bfloat16, float32 or float64, any shape);
    - it has values: a tensor on an accelerator (CUDA, MPS, XPU) is rounded there, by
      torch integer operations equal to softfloat.quantize bit for bit (no host copy;
      stochastic rounding draws the same counter-based random bits); a CPU tensor is
      rounded by softfloat.quantize through a numpy view of its memory (no copy for
      float32/float64), which on the CPU is the faster of the two (see
      benchmarks/bench_torch_quantize.py); a meta tensor is refused.

    Parameters
    ----------
    t : torch.Tensor
    fmt : Format or str
    rounding, saturate, subnormals, tininess, attributes
        As for :func:`softfloat.quantize`.
    rng : int or numpy.random.Generator, optional
        Random bits of stochastic rounding, as for :func:`softfloat.quantize` (a seed
        makes it reproducible); a ``torch.Generator`` is not one.

    Returns
    -------
    torch.Tensor
        Same shape and device as ``t``; ``requires_grad`` as ``t``'s, and its gradient
        is the incoming gradient unchanged.

    Raises
    ------
    TypeError
        ``t`` is not a tensor, or holds integers, booleans or complex numbers; ``rng`` is
        a ``torch.Generator``.
    ValueError
        ``t`` is on the meta device; an unknown format or option (as softfloat.quantize).

    Examples
    --------
    >>> import torch, softfloat.torch as sft
    >>> t = torch.tensor([0.1, 1000.0, 3.0e-3], requires_grad=True)
    >>> q = sft.quantize(t, "e4m3", saturate=True)
    >>> q.tolist(), q.dtype
    ([0.1015625, 448.0, 0.00390625], torch.float32)
    >>> q.sum().backward(); t.grad.tolist()
    [1.0, 1.0, 1.0]
    """
    check_float("t", t)
    check_device("t", t)
    if isinstance(rng, torch.Generator):
        raise TypeError("rng must be an int seed or a numpy.random.Generator (softfloat draws "
                        "its random bits with numpy); got a torch.Generator")
    fmt = as_format(fmt)
    options = dict(rounding=rounding, saturate=saturate, subnormals=subnormals, tininess=tininess,
                   attributes=attributes, rng=rng)
    return _StraightThrough.apply(t, fmt, options)


def result_dtype(dtype, fmt) -> torch.dtype:
    """quantize's dtype rule for a torch dtype: its own when it holds ``fmt``, else
    float32 or float64 (``Format.value_dtype``)."""
    if as_format(dtype).holds(fmt):
        return dtype
    return getattr(torch, fmt.value_dtype(np.float32 if dtype != torch.float64 else np.float64).name)


#: the route CPU tensors take: softfloat.quantize through numpy ("numpy") or the torch
#: kernels ("torch").  Measured with benchmarks/bench_torch_quantize.py (2**22 float32,
#: fp16/bf16/e4m3, nearest_even and stochastic, 2-core machine): numpy 1.5-13 ns per
#: element, the torch kernels 380-520 (40-300x slower), so the CPU keeps numpy.
_CPU_ROUTE = "numpy"


def values_in(t, fmt, options: dict) -> torch.Tensor:
    """``t`` (detached) rounded into ``fmt`` as softfloat.quantize rounds it, on ``t``'s
    device: by the torch kernels off the CPU (and on it where _CPU_ROUTE says) -- on CUDA
    compiled into one fused kernel per format and attributes where torch.compile works
    there (softfloat.torch._kernels_compiled), else eager -- else by softfloat.quantize
    on a numpy view."""
    if t.device.type == "cpu" and _CPU_ROUTE == "numpy":
        values = _quantize_values(host_values(t, "t"), fmt, **options)
        return to_tensor(values, result_dtype(t.dtype, fmt), t.device)
    attrs, gen = resolve_attributes(options.get("attributes"), rounding=options.get("rounding"),
                                    tininess=options.get("tininess"), subnormals=options.get("subnormals"),
                                    saturate=options.get("saturate"), rng=options.get("rng"),
                                    host=t.device.type == "cpu")  # torch's CPU kernels flush as numpy's do
    key = None if gen is None else key_from(gen)
    return quantize_fast(t.detach(), fmt, attrs, key)


class _StraightThrough(torch.autograd.Function):
    """Forward: the rounding.  Backward: the gradient unchanged (in ``t``'s dtype)."""

    @staticmethod
    def forward(ctx, t, fmt, options):  # noqa: D102 - torch's protocol
        ctx.dtype = t.dtype
        return values_in(t, fmt, options)

    @staticmethod
    def backward(ctx, grad):  # noqa: D102
        return grad.to(ctx.dtype), None, None
