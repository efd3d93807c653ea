"""The kernels of a :class:`softfloat.recipes.GemmEngine` on torch tensors: every recipe's
product -- quantisation, products, accumulation, scaling and output rounding -- on the
tensors' own device, with the numpy kernels' bits, flags and counts.

Each method is the torch twin of :class:`softfloat.recipes.kernels.Kernels`' numpy call:

=================  ==========================================  ===============================
method             numpy (the reference)                       torch (this module)
=================  ==========================================  ===============================
encode             softfloat.encode                            _kernels_compiled.encode_fast, flags by
                                                               _scaled_flags.rounding_flags
decode             softfloat.decode                            _kernels.decode_tensor
scaled_encode      softfloat.scaled_encode                     _scaled.scaled_encode_tensor
scaled_decode      softfloat.scaled_decode                     decode, then times X in float64
matmul             softfloat.matmul                            _accumulate.matmul_bits
multiply, add      float32 arithmetic                          float32 arithmetic
record             OperandRecord.from_flags                    the same counts, summed on the
                                                               device (one copy to the host)
=================  ==========================================  ===============================

Arithmetic on floats (``multiply``, ``add``, the product of ``scaled_decode``) gives
its NaN lanes the host's bits, as numpy's x86 loops give them: the first operand's NaN
(quieted) where it is one, else the second's, else -- an invalid operation such as
inf - inf -- the host's default NaN (read from numpy at import).  A device's own rule
(CUDA's canonical NaN) would change the bits of NaN results.

The operands are tensors on one device (float16/bfloat16 widened to float32, exact, as
the host route's numpy view widens them); bit patterns are the torch integers of the
formats' widths (uint8, int16, int32), as scaled_encode_tensor gives them.  The records'
small arrays (amax, scales) come to the host; everything of the operands' size stays on
the device, but for the products matmul_bits gives to softfloat.matmul on host copies of
the bit patterns (its docstring: none of the recipes' own products -- "fp32"'s and MX's
rounded fp32 products and the fp16 recipes' overflowed, infinite operands run on the
device --, but e.g. a bf16 product below float32's range in an fp32 accumulator, or a
16-bit accumulator meeting an infinity).  tests/test_torch_engine_kernels.py checks the
engine with these kernels against the engine with numpy's, bit for bit, records included.
"""

from __future__ import annotations

import numpy as np
import torch

from .._options import resolve_attributes
from ..formats import fp32
from ..recipes import OperandRecord
from ..recipes.kernels import Kernels
from . import _accumulate
from ._kernels import decode_tensor
from ._kernels_compiled import encode_fast
from ._scaled import scaled_encode_tensor, storage_bits
from ._scaled_flags import rounding_flags
from ._scaled_units import Units

__all__ = ["TORCH_KERNELS", "TorchKernels"]


def _matmul_bits(a_bits, b_bits, fmt, **options):
    """softfloat.matmul's signature and bits on tensors: _accumulate.matmul_bits (read
    at each call, so a test may watch it)."""
    return _accumulate.matmul_bits(a_bits, b_bits, fmt, **options)


#: per float dtype: (integer view, quiet bit, the host's default NaN pattern: numpy's inf - inf)
with np.errstate(invalid="ignore"):
    _NANS = {torch.float32: (torch.int32, 1 << 22,
                             int((np.full(1, np.inf, np.float32) - np.inf).view(np.int32)[0])),
             torch.float64: (torch.int64, 1 << 51,
                             int((np.full(1, np.inf, np.float64) - np.inf).view(np.int64)[0]))}


def _host_nans(a, b, result):
    """``result`` of an operation on ``a`` and ``b`` (of its dtype, broadcast to it) with
    the host's NaN lanes: a's NaN quieted, else b's, else the default NaN."""
    view, quiet, default = _NANS[result.dtype]
    bits = torch.where(torch.isnan(result), torch.tensor(default, dtype=view, device=result.device),
                       result.view(view))
    bits = torch.where(torch.isnan(b), b.view(view) | quiet, bits)
    return torch.where(torch.isnan(a), a.view(view) | quiet, bits).view(result.dtype)


def _torch_dtype(dtype):
    return dtype if isinstance(dtype, torch.dtype) else getattr(torch, np.dtype(dtype).name)


class TorchKernels(Kernels):
    """:class:`softfloat.recipes.kernels.Kernels` on torch tensors, on their device.

    Parameters
    ----------
    matmul : callable, optional
        What computes the products: :func:`softfloat.torch._accumulate.matmul_bits`
        (None), or a function with its signature (bit-pattern tensors in, out).

    Examples
    --------
    >>> import torch, softfloat as sf
    >>> from softfloat.recipes import GemmEngine
    >>> a = torch.tensor([[1.0, 2.0**-9]]); b = torch.tensor([[1.0], [1.0]])
    >>> y = GemmEngine("bf16", kernels=TORCH_KERNELS).gemm(a, b, "fprop", "l", out="bf16")
    >>> y.tolist(), y.device.type
    ([[1.0]], 'cpu')
    """

    def __init__(self, matmul=None):
        super().__init__(_matmul_bits if matmul is None else matmul)

    # ---- arrays ---------------------------------------------------------------------------------
    def takes(self, x) -> bool:
        """Tensors (numpy arrays run on numpy's kernels)."""
        return isinstance(x, torch.Tensor)

    def operand(self, x):
        """``x`` as a tensor (detached; float16/bfloat16 widened to float32, exact)."""
        t = x.detach() if isinstance(x, torch.Tensor) else torch.as_tensor(np.asarray(x))
        return t.to(torch.float32) if t.dtype in (torch.float16, torch.bfloat16) else t

    def is_float(self, x) -> bool:
        return bool(x.dtype.is_floating_point)

    def host(self, x) -> np.ndarray:
        return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)

    def transpose(self, x):
        return x.transpose(-2, -1).contiguous()

    def repeat(self, x, count: int, axis: int):
        return torch.repeat_interleave(x, count, dim=axis)

    def multiply(self, a, b):
        """fp32(a * b): a float32 multiplication (one IEEE rounding on every device), NaN
        lanes as the host's."""
        a, b = a.to(torch.float32), b.to(torch.float32)
        return _host_nans(a, b, a * b)

    def add(self, a, b):
        a, b = a.to(torch.float32), b.to(torch.float32)
        return _host_nans(a, b, a + b)

    def equal(self, a, b) -> bool:
        return bool((a == b.to(a.dtype)).all())  # a NaN is unequal to itself

    def total(self, counts) -> int:
        return int(counts.sum())

    # ---- the bit-level calls --------------------------------------------------------------------
    def encode(self, x, fmt, *, flags: bool = False):
        """softfloat.encode's bits (and flags, :class:`TensorFlags`) on ``x``'s device, as
        the torch integer of the format's width."""
        x = self.operand(x).contiguous()
        attrs = resolve_attributes(None, host=x.device.type == "cpu")[0]  # softfloat.encode's defaults
        codes = encode_fast(x, fmt, attrs)  # compiled where ENCODE_MODE says (the same bits)
        bits = storage_bits(codes, fmt)
        if not flags:
            return bits
        return bits, rounding_flags(x, codes, fmt, attrs, None, None)

    def quantize(self, x, fmt):
        return self.decode(self.encode(x, fmt), fmt, fmt.value_dtype())

    def decode(self, bits, fmt, dtype: str = "float32"):
        dtype = _torch_dtype(dtype)
        if fmt == fp32 and dtype == torch.float32 and bits.dtype == torch.int32:
            return bits.view(torch.float32)  # the patterns are the values' own
        width = torch.int64 if fmt.bits > 16 else torch.int32
        return decode_tensor(bits.to(width) & ((1 << fmt.bits) - 1), fmt, dtype)

    def scaled_encode(self, x, fmt, *, flags: bool = False, **options):
        return scaled_encode_tensor(self.operand(x), fmt, return_flags=flags, **options)

    def scaled_decode(self, scaled):
        """softfloat.scaled_decode: the elements' values times their units' X or
        scale_inv, in float64 (exact; a NaN factor is numpy's positive quiet NaN)."""
        values = self.decode(scaled.bits, scaled.format, "float64")  # a float32 NaN's bits, widened
        factors = scaled.scale_inv
        factors = torch.where(torch.isnan(factors), torch.tensor(float("nan"), dtype=torch.float64,
                                                                 device=factors.device), factors.to(torch.float64))
        factors = Units(scaled.bits.shape, scaled.scaling, scaled.block).expand(factors)
        return _host_nans(values, factors, values * factors)

    # ---- records --------------------------------------------------------------------------------
    def record(self, fmt, flags, rounded, *, amax=None, scale=None) -> OperandRecord:
        """OperandRecord.from_flags' counts, summed on the device."""
        under = flags.underflow
        zero = under & (rounded == 0)
        counts = torch.stack([zero.sum(), under.sum(), flags.overflow.sum(),
                              (~torch.isfinite(rounded)).sum()]).tolist()
        to_zero, underflow, overflow, nonfinite = (int(n) for n in counts)
        return OperandRecord(fmt, int(rounded.numel()), to_zero, underflow - to_zero, overflow, nonfinite,
                             amax, scale)

    def exact_record(self, fmt, values) -> OperandRecord:
        nonfinite = int((~torch.isfinite(values)).sum())
        return OperandRecord(fmt, int(values.numel()), 0, 0, 0, nonfinite)


#: the torch kernels with softfloat.torch._accumulate.matmul_bits
TORCH_KERNELS = TorchKernels()
