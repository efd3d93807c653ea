"""The codec's block step, shared by its streaming and its one-block lane for small arrays.

A small array (one block, no generator or ``workers=``: a training step's tensors) is
encoded or quantized by :func:`run_block` in the calling thread's scratch, without the
streaming's set-up (block plan, positions, closures), which cost as much as the kernels.
"""

from __future__ import annotations

import numpy as np

from . import _fastpaths
from ._decode import decode_block
from ._encode import encode_block, encode_general

__all__ = ["one_block", "run_block"]


def run_block(blk, fmt, attrs, want, bits, values, ws, rand=None):
    """One contiguous native block encoded into ``bits`` (encode) or rounded into ``values``
    (quantize: ``bits`` None); its FlagMasks (None without ``want``), possibly in ``ws``."""
    if bits is None and rand is None:  # quantize: encoding and decoding in one lookup?
        fast = _fastpaths.quantize_block(blk, fmt, attrs, want, values, ws, encode_general, decode_block)
        if fast is not None:
            return fast[0]
    if bits is None:
        bits = ws.get("bits", fmt.storage_dtype, blk.size)
    fl = encode_block(blk, fmt, attrs, rand, want, bits, ws)
    if values is not None:
        decode_block(bits, fmt, values, ws)
    return fl


def one_block(x, fmt, attrs, dtype, want):
    """encode (``dtype``: bits) or quantize (values) of a small array (``softfloat.codec._small``):
    the codec's one block run in this thread's small-array scratch, without the streaming
    (``softfloat.codec._stream``): the same bits and flags."""
    out = np.empty(x.shape, dtype=dtype)
    flat, to_bits = np.ascontiguousarray(x).reshape(-1), dtype == fmt.storage_dtype  # (a transposed weight: copied)
    with np.errstate(all="ignore"):  # (as stream_blocks runs a block: specials decided from patterns)
        fl = run_block(flat, fmt, attrs, want, out.reshape(-1) if to_bits else None,
                       None if to_bits else out.reshape(-1), _fastpaths.SCRATCH)
    result = out[()] if out.ndim == 0 else out
    if not want:  # (the masks copied out of the scratch, as stream_blocks' set_at copies them)
        return result
    return result, fl.map(np.array).to_flags(x.shape).squeezed()
