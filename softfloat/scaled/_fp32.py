"""fp32 for scales and amaxes: its range as scales use it, and rounding to it by softfloat's
own encode."""

from __future__ import annotations

import numpy as np

from .. import _fastpaths
from .._encode import Workspace, encode_block
from .._fpenv import flushes_subnormals
from ..attributes import RoundingAttributes
from ..formats import fp32

_FP32_MAX = fp32.max_finite
#: computed fp32 scales are kept at or above fp32's smallest normal, so that a scale and
#: its fp32 reciprocal are finite and non-zero (only huge margins or amax near fp32's
#: max with a custom format of max below 2 reach it)
_MIN_SCALE = 2.0**-126
#: what _round_fp32 rounds with: the default attrs, nearest-even
_NEAREST_EVEN = RoundingAttributes()


def _round_fp32(v):
    """Values rounded to nearest-even fp32, as float64: softfloat's encode without the
    per-call checks, for the small arrays of scales and amaxes -- or, where no value is a
    NaN and this thread keeps subnormals, numpy's float64 -> float32 cast, which is then
    IEEE's convertFormat in nearest even (the machine's conversion in its default mode:
    subnormal results kept, overflow to infinity; the condition of
    softfloat._fastpaths.quantize_small's own cast).  The NaNs' quieting and payload are
    encode's."""
    a = np.array(v, dtype=np.float64)  # a native, contiguous copy
    if a.size and _fastpaths.ENABLED and not flushes_subnormals():
        top = a.max()  # (max propagates a NaN: one reduction finds whether there is one)
        if top == top:
            with np.errstate(over="ignore"):  # overflow to infinity is the IEEE result
                return a.astype(np.float32).astype(np.float64)
    flat = a.reshape(-1)
    bits = np.empty(flat.size, dtype=np.uint32)
    with np.errstate(all="ignore"):
        encode_block(flat, fp32, _NEAREST_EVEN, None, False, bits, Workspace(flat.size))
    return bits.view(np.float32).astype(np.float64).reshape(a.shape)
