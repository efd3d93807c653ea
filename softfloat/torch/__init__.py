"""PyTorch models in emulated precision: torch tensors rounded into any format, and
torch's matrix products run bit-exact through softfloat's recipes and accumulators.

Needs torch (``pip install "softfloat-emu[torch]"``); ``import softfloat`` does not
import this package or torch.

quantize(t, fmt, ...)
    a tensor rounded into a format (softfloat.quantize's rounding, on the tensor's device)
    with a straight-through gradient.
bits_of(t), to_torch(bits, fmt)
    zero-copy exchange of bit patterns with torch CPU tensors (softfloat.interop's).
emulate(recipe, accumulator=None, ...) -> Emulation
    a context manager: inside it F.linear, matmul/@, mm, bmm, addmm and baddbmm on float
    tensors run emulated forward and backward; ``em.telemetry`` and ``em.report()`` say
    per call site what the roundings and the accumulator did.
"""

from __future__ import annotations

from .._validate import missing_dependency

try:
    import torch as _torch  # noqa: F401 - the dependency check
except ImportError:
    raise ImportError(missing_dependency("softfloat.torch", "torch", "torch")) from None

from ..interop import bits_of, to_torch
from ._emulate import Emulation, emulate
from ._quantize import quantize
from .telemetry import GemmTelemetry, Telemetry

__all__ = ["Emulation", "GemmTelemetry", "Telemetry", "bits_of", "emulate", "quantize", "to_torch"]
