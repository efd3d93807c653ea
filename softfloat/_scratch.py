"""Scratch buffers that outlive a call: one per (thread, name, dtype), grown as needed.

Why: on Linux, glibc hands memory of a freed large array back to the system once the
free space at the top of the heap passes its trim threshold (a few MiB, adapted at run
time), and the next array of that size takes a page fault for every 4 KiB it touches.
On a virtual machine a fault costs microseconds: the lab's wide training step spent a
quarter of its time in them.  Hot loops whose temporaries are the same size call after
call (a matrix product's chunk of products, say) keep them here instead.  Each thread has
its own buffers, so concurrent calls never share one; a buffer is handed out to one
caller at a time, and the caller must not let it escape.
"""

from __future__ import annotations

import threading

import numpy as np

__all__ = ["MAX_BYTES", "buffer"]

#: larger requests get a fresh array: the memory kept per thread and name stays bounded
MAX_BYTES = 4 << 20

_local = threading.local()


def buffer(name: str, dtype, size: int) -> np.ndarray:
    """A 1-D array of ``size`` elements of ``dtype`` (contents undefined), kept for this
    thread and ``name`` when at most MAX_BYTES."""
    dtype = np.dtype(dtype)
    if size * dtype.itemsize > MAX_BYTES:
        return np.empty(size, dtype=dtype)
    buffers = getattr(_local, "buffers", None)
    if buffers is None:
        buffers = _local.buffers = {}
    key = (name, dtype)
    buf = buffers.get(key)
    if buf is None or buf.size < size:
        buf = buffers[key] = np.empty(size, dtype=dtype)
    return buf[:size]
