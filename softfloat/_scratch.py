"""Scratch buffers that outlive a call: one per (thread, name, dtype), grown as needed.

Why: on Linux, glibc hands memory of a freed large array back to the system once the
free space at the top of the heap passes its trim threshold (a few MiB, adapted at run
time), and the next array of that size takes a page fault for every 4 KiB it touches.
On a virtual machine a fault costs microseconds: the lab's wide training step spent a
quarter of its time in them.  Hot loops whose temporaries are the same size call after
call (a matrix product's chunk of products, say) keep them here instead.  Each thread has
its own buffers, so concurrent calls never share one; a buffer is handed out to one
caller at a time, and the caller must not let it escape.

The codec's and the operations' per-call workspaces (softfloat._workspace.Workspace) take
their block-sized buffers from a process-wide pool instead (:func:`borrow`,
:func:`give_back`): their calls run on threads that a call's pool creates and ends, so
per-thread buffers would not outlive them.  A buffer goes back only when nothing else
refers to it (no view of it, no result made of it), so reuse never reaches a live array.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

__all__ = ["MAX_BYTES", "POOL_BYTES", "borrow", "buffer", "give_back"]

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


#: the most memory the pool keeps for later calls (a 2-thread encode in 2**19-element
#: blocks uses about 20 MiB of work buffers)
POOL_BYTES = 64 << 20

_pool: dict[tuple[np.dtype, int], list[np.ndarray]] = {}
_pool_lock = threading.Lock()
_pooled = [0]  # bytes held by the pool


def borrow(dtype, size: int) -> np.ndarray:
    """A 1-D array of ``size`` elements of ``dtype`` (contents undefined): one given back
    earlier, or a new one."""
    dtype = np.dtype(dtype)
    with _pool_lock:
        free = _pool.get((dtype, size))
        if free:
            buf = free.pop()
            _pooled[0] -= buf.nbytes
            return buf
    return np.empty(size, dtype=dtype)


#: references to a buffer that :func:`give_back` itself holds (its loop variable and
#: getrefcount's argument): one more means a view or a result still uses it
_OWN_REFERENCES = 2


def give_back(buffers) -> None:
    """Return borrowed buffers to the pool (``buffers`` yields each once and keeps no
    reference to it), those that nothing else refers to, while the pool has room."""
    for buf in buffers:
        if sys.getrefcount(buf) > _OWN_REFERENCES or buf.base is not None:
            continue
        with _pool_lock:
            if _pooled[0] + buf.nbytes <= POOL_BYTES:
                _pool.setdefault((buf.dtype, buf.size), []).append(buf)
                _pooled[0] += buf.nbytes
