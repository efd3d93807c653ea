"""Bit-pattern operands: checked and broadcast, read as exact float64 values (denormals
as zeros on request); a 0-d result given back as a scalar."""

from __future__ import annotations

import numpy as np

from .. import _validate
from .._decode import decode_block
from ..formats import Format, fp16, fp32, fp64

__all__ = ["daz", "operand_patterns", "operand_values", "scalar_or_array"]


def operand_patterns(fmt: Format, operands):
    """Check ``(argname, value)`` bit-pattern operands, cast them to ``fmt.storage_dtype``
    and return them with their broadcast shape."""
    arrays = [_validate.bit_patterns(name, value, fmt.bits).astype(fmt.storage_dtype, copy=False)
              for name, value in operands]
    shape = _validate.broadcast_shape([(name, a) for (name, _), a in zip(operands, arrays)])
    return arrays, shape


def operand_values(b, fmt, out, ws):
    """Exact float64 values of operand patterns.  NaN payloads need not survive (NaN
    results are rebuilt from the patterns), so fp32 may use the hardware's widening cast
    (numpy's float16 cast too, except that it is slower than decode_block on subnormals)."""
    if fmt == fp64 or fmt == fp32 or (fmt == fp16 and not _has_subnormals(b, fmt)):
        np.copyto(out, b.view(np.dtype(f"f{fmt.bits // 8}")))
        return out
    return decode_block(b, fmt, out, ws)


def _has_subnormals(b, fmt: Format) -> bool:
    # s 00000 mmmmmmmmmm with m != 0: the magnitude's bits (sign cleared) in 1..mantissa_mask
    mag = b & fmt.storage_dtype.type(fmt.sign_mask - 1)
    return bool(np.any((mag != 0) & (mag <= fmt.mantissa_mask)))


def daz(x: np.ndarray, fmt: Format) -> None:
    """Denormals-are-zero, in place: subnormal operands become zeros of the same sign."""
    tiny = (np.abs(x) < fmt.min_normal) & (x != 0)
    if tiny.any():
        np.copyto(x, np.copysign(0.0, x), where=tiny)


def scalar_or_array(out):
    """A 0-d result as a numpy scalar, like a ufunc's."""
    out = np.asarray(out)
    return out[()] if out.ndim == 0 else out
