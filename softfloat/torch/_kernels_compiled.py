"""The torch quantisation kernels compiled: one fused kernel per (values or bit patterns,
format, attributes, input dtype, device type), with the eager kernels as the fallback
(:func:`quantize_fast` for softfloat.torch.quantize, :func:`encode_fast` for the
engine's operands and softfloat.torch._scaled's elements).

``torch.compile`` of :func:`softfloat.torch._kernels.quantize_tensor` as one function
guards on the format and attributes objects it is passed (``attrs.rounding is
Rounding.STOCHASTIC``, their ids), so every (format, mode) recompiles the same code object
until dynamo's recompile limit sends the rest to eager; and a numpy scalar key breaks its
guards.  Here each (format, attributes, input dtype, device type) gets a function of its
own -- a fresh code object, so dynamo keeps a separate cache and recompile count for it --
in which the format and the attributes are closure constants, and whose only arguments
are the flattened data and, for stochastic rounding, the key as a 0-d int64 tensor on the
data's device.  Shapes are static: the flat data is padded to a power-of-two bucket (at least 2**16
elements), one artifact per bucket (lengths 0 and 1 go to the eager kernels), ``fullgraph=True`` makes a graph break an error (hence the
fallback) rather than a silent slow path.  Each artifact holds at most a couple of cache
entries (grad mode), so dynamo's recompile limit is left as it is.

Bit-exactness under fusion: the kernels are integer operations on bit patterns, plus
conversions that are exact (an int below 2**24 to float, a float to a float that holds
its value) and bit casts; no floating-point arithmetic is done, so contraction (FMA) and
reassociation in the fused kernel cannot change a bit.  tools/gpu_torch_check.py checks
the compiled bits against numpy on the device.

Index arithmetic: inductor folds operations on the element index (``torch.arange``) and
constants into one index expression, which Triton evaluates in int32; a 64-bit constant
in it fails to compile ("Scalar ... out of range for type int32": the stochastic kernel
on an H200, torch 2.11, when its counter was ``(i + 1) * GOLDEN``).  The only index in the
kernels, the stochastic-rounding counter of softfloat.torch._kernels_random, is therefore
added to a value of the key tensor before any constant multiplies it.
tests/test_torch_compiled_random.py compiles it on the CPU and checks the generated code.

Any exception from compiling or running a compiled kernel sends that (format, attributes,
dtype, device type) to the eager kernels for good, with one RuntimeWarning per process
(softfloat.torch._compiled, shared with the accumulation tiles).
"""

from __future__ import annotations

import torch

from ..rounding import Rounding
from . import _compiled
from ._kernels import encode_tensor, plan, quantize_planned, quantize_tensor
from ._kernels_random import as_signed

__all__ = ["compile_failures", "encode_fast", "quantize_fast", "reset"]

#: when the compiled kernels are used: "auto" (CUDA tensors, where Triton is present),
#: "always" (every device: benchmarks, tests with a fake compiler), "never"
MODE = "auto"
#: the same for :func:`encode_fast` (emulate's operands and scaled elements), "never" by
#: default: there the eager kernels cost little beside the products' emulation, while
#: each (format, attributes, dtype, length bucket) compiles on first use; to be switched
#: on where tools/gpu_device_check.py measures it worth its compile time on a GPU.  On an
#: H200 (torch 2.11) it was not: an FP8 "h100" F.linear step of 256 x 1024 @ 1024 x 1024
#: took 83 and 102 ms against the eager encode's 110 and 99 ms in two runs, after a first
#: call of 6 s
ENCODE_MODE = "never"

#: flat lengths are padded up to a power of two of at least this many elements, so each
#: kernel compiles once per bucket with static shapes (dynamic shapes turned the kernels'
#: integer constants into symbols that failed to trace on the H200 with torch 2.11:
#: "lshift(1, s44 - 1)"); buckets above the recompile limit run eager
_MIN_BUCKET = 1 << 16


def _compile(fn):
    """The compiler (tests replace it): one artifact per function and length bucket."""
    return torch.compile(fn, fullgraph=True, dynamic=False)


def _bucket(n: int) -> int:
    """The padded length of ``n`` elements: the next power of two, at least _MIN_BUCKET."""
    return max(_MIN_BUCKET, 1 << (n - 1).bit_length())


def reset() -> None:
    """Forget the compiled kernels and the failures (tests; after changing MODE)."""
    _compiled.reset()


def compile_failures() -> dict:
    """{"format attributes dtype device": "Error: message"} of the kernels that fell back
    to eager (and of softfloat.torch's other compiled kernels, under their own labels)."""
    return _compiled.failures()


def _kernel(what: str, fmt, attrs, stochastic: bool, dtype):
    """A function of the flat data (and the key tensor) with ``fmt``, ``attrs`` and the
    decisions of :func:`plan` for input ``dtype`` fixed, on a code object of its own (a
    Format built inside the traced function would turn its fields into symbolic ints:
    "lshift(1, s44)" in Format.emax on the H200); ``what`` is "quantize" (the values)
    or "encode" (the bit patterns)."""
    planned = plan(dtype, fmt, attrs)

    def rounded(x, key):
        return encode_tensor(x, fmt, attrs, key) if what == "encode" else quantize_planned(x, fmt, attrs, key,
                                                                                            planned)
    if stochastic:
        def run(x, key):
            return rounded(x, key)
    else:
        def run(x):
            return rounded(x, None)
    return _compiled.fresh(run)


def quantize_fast(t: torch.Tensor, fmt, attrs, key=None) -> torch.Tensor:
    """:func:`quantize_tensor` (same arguments, same bits), by a compiled kernel where
    ``MODE`` says and it compiles, else by the eager kernels.

    >>> import torch, softfloat as sf
    >>> from softfloat.attributes import RoundingAttributes
    >>> quantize_fast(torch.tensor([0.1, 3.4e38]), sf.bf16, RoundingAttributes()).tolist()
    [0.10009765625, inf]
    """
    return _run("quantize", t, fmt, attrs, key)


def encode_fast(t: torch.Tensor, fmt, attrs, key=None) -> torch.Tensor:
    """:func:`~softfloat.torch._kernels.encode_tensor` (same arguments, same bits), by a
    compiled kernel where ``ENCODE_MODE`` says and it compiles, else by the eager kernels.

    >>> import torch, softfloat as sf
    >>> from softfloat.attributes import RoundingAttributes
    >>> encode_fast(torch.tensor([1.0, 1000.0, -3e-3]), sf.fp8_e4m3, RoundingAttributes()).tolist()
    [56, 127, 130]
    """
    return _run("encode", t, fmt, attrs, key)


def _eager(what: str, t, fmt, attrs, key):
    return encode_tensor(t, fmt, attrs, key) if what == "encode" else quantize_tensor(t, fmt, attrs, key)


def _run(what: str, t: torch.Tensor, fmt, attrs, key):
    """``what`` ("quantize" or "encode") of ``t`` by its compiled kernel, or eagerly."""
    if not _compiled.wanted(t, ENCODE_MODE if what == "encode" else MODE):
        return _eager(what, t, fmt, attrs, key)
    stochastic = attrs.rounding is Rounding.STOCHASTIC
    flat = t.detach().reshape(-1)
    n = flat.numel()
    if _bucket(n) != n:  # padded lanes are rounded too and dropped; the first n keep their
        flat = torch.cat([flat, flat.new_zeros(_bucket(n) - n)])  # flat indices (random bits)
    args = (flat,)
    if stochastic:
        args += (torch.tensor(as_signed(key), dtype=torch.int64, device=t.device),)
    out = _compiled.run((what, fmt, attrs, t.dtype, t.device.type),
                        lambda: f"{fmt.name} {attrs!r} {t.dtype} {t.device.type}" + (" encode" if what == "encode"
                                                                                      else ""),
                        lambda: _compile(_kernel(what, fmt, attrs, stochastic, t.dtype)), *args)
    return _eager(what, t, fmt, attrs, key) if out is None else out[:n].view(t.shape)
