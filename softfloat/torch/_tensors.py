"""Torch tensors as numpy arrays and back: the one crossing between the two libraries.

A float32 or float64 CPU tensor is read as a view of its memory (``t.detach().numpy()``,
no copy); float16 and bfloat16 tensors are widened to float32 (exact: every value of both
is a float32 value), since the layers below compute on float32/float64 values.  Tensors
on other devices with memory (CUDA, MPS, XPU) are either copied to the host
(:func:`host_values`) or, where torch kernels compute on their device, kept there with the
same widening (:func:`device_values`).  Tensors without data (the meta device) have
nothing to emulate and are refused.
"""

from __future__ import annotations

import sys

import numpy as np
import torch

__all__ = ["FLOATS", "check_dense", "check_float", "check_device", "device_values", "host_values", "to_tensor"]

#: the tensor dtypes whose products and roundings are emulated
FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def check_float(name: str, t, what: str = "a float tensor") -> None:
    """TypeError unless ``t`` is a tensor of a floating dtype (integer, bool and complex
    tensors are refused with their dtype named)."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be {what}; got {type(t).__name__}")
    if not t.dtype.is_floating_point:
        kind = "a complex" if t.dtype.is_complex else "an integer" if t.dtype != torch.bool else "a bool"
        raise TypeError(f"{name} must be {what} (float16, bfloat16, float32 or float64); got "
                        f"{kind} tensor of dtype {t.dtype}")


def check_dense(name: str, t) -> None:
    """TypeError for a tensor that is not dense (strided): sparse (COO, CSR, ...) and
    other layouts are not emulated."""
    if t.layout != torch.strided:
        raise TypeError(f"{name} must be a dense (strided) tensor under softfloat.torch.emulate; got a tensor of "
                        f"layout {t.layout}: sparse tensors are not emulated. Densify it (t.to_dense()) to emulate "
                        "the product, or leave it to torch (torch.sparse.mm, or outside the emulation)")


def check_device(name: str, t) -> None:
    """ValueError for a tensor whose device holds no data (meta) or that torch cannot
    copy to the host; NotImplementedError for one inside a ``torch.func`` transform or
    being traced (``torch.jit.trace``, ``torch.export``'s fake tensors);
    TypeError for one that is not dense (:func:`check_dense`)."""
    check_dense(name, t)
    functorch = torch._C._functorch
    if functorch.is_functorch_wrapped_tensor(t) or functorch.is_legacy_batchedtensor(t):
        # (the legacy batches: autograd.grad(is_grads_batched=True), jacobian(vectorize=True))
        raise NotImplementedError(
            f"{name} is a tensor inside a torch.func transform (vmap, grad, jacrev, ...; autograd.grad's "
            "is_grads_batched, autograd.functional's vectorize): softfloat's "
            "emulation runs outside torch's arithmetic and is not defined there; call the "
            "model without the transform (loop over the samples for per-sample gradients), or "
            "outside softfloat.torch.emulate")
    if torch.jit.is_tracing() or _is_fake(t):
        tracer = "torch.jit.trace" if torch.jit.is_tracing() else "a fake tensor: torch.export, or a FakeTensorMode"
        raise NotImplementedError(
            f"{name} is a tensor being traced ({tracer}): "
            "softfloat's emulation computes on the values, outside torch's operations, so a "
            "trace cannot record it; trace or export the model outside softfloat.torch.emulate "
            "(torch.compile runs the emulation eagerly, between its graphs)")
    if t.device.type == "meta" or not _has_storage(t):
        raise ValueError(f"{name} is a tensor on device {t.device!s}, which holds no values: "
                         "softfloat emulates tensors with data (on the CPU, or copied to it "
                         "from an accelerator); make it with real values first")


def _is_fake(t) -> bool:
    """Whether ``t`` is a fake tensor (shapes and dtypes, no values: torch.export's, a
    FakeTensorMode's), or a functional wrapper of one."""
    fake = sys.modules.get("torch._subclasses.fake_tensor")  # imported by torch where fakes exist
    return fake is not None and type(t) is not torch.Tensor and bool(fake.is_fake(t))


def _has_storage(t) -> bool:
    try:
        t.untyped_storage()
    except (RuntimeError, NotImplementedError):  # functional/fake tensors without memory
        return False
    return True


def host_values(t, name: str, checked: bool = False) -> np.ndarray:
    """``t``'s values as a float32 or float64 ndarray: a view of a float32/float64 CPU
    tensor (strides kept, nothing copied), else a converted host copy.  ``checked``: the
    caller has checked ``t`` (or the tensor it is a view of) already."""
    t = device_values(t, name, checked)  # checked, detached, widened
    if t.device.type != "cpu":
        t = t.cpu()
    return t.numpy()


def device_values(t, name: str, checked: bool = False) -> torch.Tensor:
    """``t``'s values as a float32 or float64 tensor on its own device (detached; float16,
    bfloat16 and FP8 widened to float32, exact; float32/float64 tensors as they are):
    what :func:`host_values` copies to the host, where kernels compute on the device.

    >>> import torch
    >>> device_values(torch.tensor([1.5], dtype=torch.bfloat16), "x").dtype
    torch.float32
    """
    if not checked:  # (a view of a tensor checked already is no other kind of tensor)
        check_float(name, t)
        check_device(name, t)
    t = t.detach()
    if t.dtype not in (torch.float32, torch.float64):
        t = t.to(torch.float32)  # float16, bfloat16, FP8: exact in float32
    return t


def to_tensor(values, dtype, device) -> torch.Tensor:
    """A tensor of ``values`` (a numpy array, or a tensor computed on the device) of
    ``dtype`` on ``device``: ``torch.from_numpy`` (no copy) when the dtype already
    matches and the device is the CPU."""
    if isinstance(values, torch.Tensor):
        return values.to(device=device, dtype=dtype)
    values = np.asarray(values)
    if not values.flags.writeable:  # from_numpy warns on read-only memory
        values = values.copy()
    out = torch.from_numpy(values)
    if out.dtype != dtype or out.device != device:
        out = out.to(device=device, dtype=dtype)
    return out
