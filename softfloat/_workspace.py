"""The block workspace: block-sized scratch arrays that one call's blocks reuse, and the
block size they are sized for."""

from __future__ import annotations

import numpy as np

from . import _scratch

__all__ = ["BLOCK_SIZE", "Workspace"]

#: elements per block: a handful of block-sized work buffers stay in L2 while a block
#: is processed (2**16 spills, 2**12 pays numpy's per-call overhead)
BLOCK_SIZE = 1 << 14


class Workspace:
    """Block-sized scratch arrays for one call, reused by every block.  Their memory is
    borrowed from softfloat._scratch's pool and given back when the workspace goes, so a
    later call touches no fresh pages (each costs microseconds on a virtual machine)."""

    def __init__(self, size: int):
        self.size = size
        self._buffers: dict[tuple[str, np.dtype], np.ndarray] = {}

    def get(self, name: str, dtype, n: int) -> np.ndarray:
        key = (name, dtype)  # a scalar type or a dtype: either hashes fast
        buf = self._buffers.get(key)
        if buf is None:
            buf = self._buffers[key] = _scratch.borrow(dtype, self.size)
        return buf if n == self.size else buf[:n]  # called a few times per block

    def __del__(self):
        buffers = getattr(self, "_buffers", None)  # None: made without __init__ (a tracer's copy)
        if _scratch is None or not buffers:  # interpreter shutdown: module globals are gone
            return
        _scratch.give_back(buffers.popitem()[1] for _ in range(len(buffers)))
