"""``.npy`` files larger than memory as lazy dask arrays, read chunk by chunk.

``dask.array.from_array(np.load(path, mmap_mode="r"))`` looks right but copies the whole
memory map into memory when a chunk is taken (dask issue #11850), so a file larger than
memory cannot go through it.  :func:`from_npy` hands dask a small source object instead:
each chunk opens its own memory map and copies out only its slice.
"""

from __future__ import annotations

import os

import numpy as np

from . import _dask, _validate

__all__ = ["from_npy"]


class _NpyChunks:
    """A .npy file as dask sees an array: shape, dtype, ndim and slicing (no ``copy``)."""

    def __init__(self, path: str, shape: tuple, dtype: np.dtype):
        self.path, self.shape, self.dtype, self.ndim = path, shape, dtype, len(shape)

    def __getitem__(self, key):
        return np.array(np.load(self.path, mmap_mode="r")[key])


def from_npy(path, chunks="auto"):
    """A ``.npy`` file as a lazy dask array whose chunks are read through a memory map.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.npy`` file (not ``.npz``); it is opened once here to read its header.
    chunks : int, tuple or "auto", default "auto"
        dask's ``chunks`` (e.g. ``(2**12, None)`` for blocks of whole rows).

    Returns
    -------
    dask.array.Array
        Nothing is read until it is computed; each chunk is one slice of the file, so peak
        memory stays a few chunks whatever the file's size.  Needs dask:
        ``pip install "softfloat-emu[dask]"``.

    Examples
    --------
    >>> import os, tempfile
    >>> import softfloat as sf
    >>> path = os.path.join(tempfile.mkdtemp(), "w.npy")
    >>> np.save(path, np.arange(6, dtype=np.float32).reshape(3, 2) / 3)
    >>> x = sf.from_npy(path, chunks=(2, 2))
    >>> x.chunks
    ((2, 1), (2,))
    >>> sf.encode(x, "bf16").compute().tolist()
    [[0, 16043], [16171, 16256], [16299, 16341]]
    """
    da = _dask.require()
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike naming a .npy file; got {_validate.describe(path)}")
    path = os.fspath(path)
    try:
        head = np.load(path, mmap_mode="r")
    except (OSError, ValueError) as exc:
        raise ValueError(f"path must name a readable .npy file; {path!r} gives: {exc}") from None
    if not isinstance(head, np.memmap):
        raise ValueError(f"path must name a .npy file; {path!r} is not one (an .npz archive?)")
    source = _NpyChunks(path, head.shape, head.dtype)
    return da.from_array(source, chunks=chunks, name=f"from_npy-{os.path.abspath(path)}-{os.path.getmtime(path)}",
                         meta=np.empty((0,) * head.ndim, dtype=head.dtype))
