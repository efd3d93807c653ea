"""``.npy`` files larger than memory: read as lazy dask arrays, written chunk by chunk.

``dask.array.from_array(np.load(path, mmap_mode="r"))`` looks right but copies the whole
memory map into memory when a chunk is taken (dask issue #11850), so a file larger than
memory cannot go through it.  :func:`from_npy` hands dask a small source object instead:
each chunk maps only the span of the file that holds it and copies its values out.

``dask.array.store(x, np.lib.format.open_memmap(path, "w+", ...))`` looks right too, but
under a ``dask.distributed`` client each worker process writes into its own copy of the
pickled memory map and the file stays all zeros.  :func:`to_npy` writes the header and
sizes a temporary file first; each chunk task then opens that file itself and writes its
bytes at their offsets, and the finished file replaces ``path`` once every chunk is in.
"""

from __future__ import annotations

import errno
import io
import os

import numpy as np

from . import _dask, _validate
from ._checkpoint_write import create_beside, fsync_directory
from ._read_numpy import npy_header

__all__ = ["from_npy", "to_npy"]

#: the first bytes of a zip archive (.npz)
_ZIP_MAGIC = b"PK\x03\x04"


# =====================================================================================
# reading
# =====================================================================================
def _identity(st: os.stat_result) -> tuple[int, int, int]:
    """What tells one version of a file from another: inode, size, modification time (ns).
    (Not the device number: a network file system's differs from machine to machine.)"""
    return st.st_ino, st.st_size, st.st_mtime_ns


def _read_header(path: str):
    """``(dtype, shape, fortran_order, data_offset, stat)`` of a .npy file, read from its
    header alone (nothing is mapped) by the checkpoint reader's hostile-file-safe parser
    (:func:`softfloat._read_numpy.npy_header`); ValueError for what is not a complete .npy
    file."""
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if f.read(len(_ZIP_MAGIC)) == _ZIP_MAGIC:
                raise ValueError(f"path must name a .npy file; {path!r} is not one (an .npz archive? "
                                 "open it with numpy.load and save the array you want with numpy.save)")
            f.seek(0)
            shape, fortran, dtype, offset, e5m2 = npy_header(f)
    except OSError as exc:
        raise ValueError(f"path must name a readable .npy file; {path!r} gives: {exc}") from None
    except ValueError as exc:
        if str(exc).startswith("path must"):
            raise
        raise ValueError(f"path must name a readable .npy file; {path!r} gives: {exc}") from None
    if e5m2:
        raise ValueError(f"path must name a readable .npy file; {path!r} holds float8_e5m2 values "
                         "saved as '<f1', which numpy cannot map; save their bit patterns "
                         "(array.view(numpy.uint8)) or the values as float16")
    if dtype.hasobject:
        raise ValueError(f"path {path!r} holds Python objects (dtype {dtype}), which cannot be read "
                         "through a memory map; load it with numpy.load(path, allow_pickle=True)")
    need = int(np.prod(shape, dtype=object)) * dtype.itemsize
    have = st.st_size - offset
    if have < need:
        raise ValueError(f"path {path!r} is a truncated .npy file: its header describes {dtype} values "
                         f"of shape {tuple(shape)}, {need} bytes after the {offset}-byte header, but "
                         f"the file holds only {max(have, 0)} bytes of data (an interrupted write or "
                         "copy?); write the file again")
    return dtype, tuple(shape), bool(fortran), offset, st


def _box(key, shape):
    """The box of the file that ``key`` reads: ``(lows, highs, inner)``, per axis the
    lowest and highest index taken and the key shifted to the box's origin (``inner``:
    the box indexed by it is the array indexed by ``key``); ``"empty"`` when the key
    takes nothing; None for keys other than ints, slices, integer arrays and 1-D boolean
    masks, one per axis (dask's chunks and its fused slicing are slices and ints)."""
    key = key if isinstance(key, tuple) else (key,)
    if len(key) > len(shape):
        return None
    key = key + (slice(None),) * (len(shape) - len(key))
    lows, highs, inner = [], [], []
    for axis, (k, n) in enumerate(zip(key, shape)):
        if isinstance(k, slice):
            r = range(*k.indices(n))
            if not r:
                return "empty"
            lo, hi = min(r[0], r[-1]), max(r[0], r[-1])
            inner.append(slice(r.start - lo, None if r.stop - lo < 0 else r.stop - lo, r.step))
        elif isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)):
            lo = hi = int(k) + n if int(k) < 0 else int(k)
            if not 0 <= lo < n:
                raise IndexError(f"index {int(k)} is out of bounds for axis {axis} with size {n}")
            inner.append(0)
        elif isinstance(k, (list, np.ndarray)):
            idx = np.asarray(k)
            if idx.dtype == bool and idx.shape == (n,):
                idx = np.flatnonzero(idx)
            elif idx.dtype.kind not in "iu" and idx.size:
                return None
            if idx.size == 0:
                return "empty"
            idx = np.where(idx < 0, idx + n, idx)
            lo, hi = int(idx.min()), int(idx.max())
            if lo < 0 or hi >= n:
                raise IndexError(f"an index of {k!r} is out of bounds for axis {axis} with size {n}")
            inner.append(idx - lo)
        else:  # None, Ellipsis, a mask over several axes
            return None
        lows.append(lo)
        highs.append(hi)
    return lows, highs, tuple(inner)


class _NpyChunks:
    """A .npy file as dask sees an array: shape, dtype, ndim and slicing (no ``copy``).

    Each ``[key]`` maps only the bytes from the key's first element to its last (in the
    file's order) and copies them out, after checking that the file is still the one
    whose header was read (a rewritten file would be read with a stale layout).
    """

    def __init__(self, path: str, shape: tuple, dtype: np.dtype, fortran: bool, offset: int, identity: tuple):
        path = os.path.abspath(path)  # the same file from a worker with another working directory
        self.path, self.shape, self.dtype, self.ndim = path, shape, dtype, len(shape)
        self.fortran, self.offset, self.identity = fortran, offset, identity

    def _strides(self) -> tuple[int, ...]:
        """The file's element strides (in elements, not bytes)."""
        strides, step = [0] * self.ndim, 1
        axes = range(self.ndim) if self.fortran else reversed(range(self.ndim))
        for axis in axes:
            strides[axis] = step
            step *= self.shape[axis]
        return tuple(strides)

    def __getitem__(self, key):
        box = _box(key, self.shape)
        if box is None:  # indexing dask never asks of a source: read the whole array
            return self[(slice(None),) * self.ndim][key]
        if box == "empty":  # the shape numpy gives, from a stand-in of no memory
            return np.broadcast_to(np.empty((), self.dtype), self.shape)[key].copy()
        lows, highs, inner = box
        strides = self._strides()
        first = sum(lo * s for lo, s in zip(lows, strides))
        count = sum(hi * s for hi, s in zip(highs, strides)) - first + 1  # elements mapped
        span = self._map(first, count)
        # the box lows..highs of the file, as a view of the span (which starts at `first`)
        view = np.lib.stride_tricks.as_strided(
            span, shape=tuple(hi - lo + 1 for lo, hi in zip(lows, highs)),
            strides=tuple(s * self.dtype.itemsize for s in strides), writeable=False)
        return np.array(view[inner])  # copied out: the map closes with `span`

    def _map(self, first: int, count: int) -> np.memmap:
        """Elements ``first`` .. ``first + count - 1`` of the file's data, memory-mapped."""
        start = self.offset + first * self.dtype.itemsize
        try:
            with open(self.path, "rb") as f:
                if _identity(os.fstat(f.fileno())) != self.identity:
                    raise OSError(f"{self.path!r} changed after from_npy read its header (it was "
                                  "rewritten or replaced); call softfloat.from_npy again to read it")
                return np.memmap(f, dtype=self.dtype, mode="r", offset=start, shape=(count,))
        except MemoryError as exc:
            raise MemoryError(f"mapping bytes {start} to {start + count * self.dtype.itemsize} of "
                              f"{self.path!r} (one chunk) failed: out of address space or memory "
                              f"({str(exc) or 'no detail'}); use smaller chunks, or raise the limit "
                              "(ulimit -v)") from None
        except OSError as exc:
            if exc.errno is None:
                raise
            raise OSError(exc.errno, f"mapping bytes {start} to {start + count * self.dtype.itemsize} "
                          f"of {self.path!r} (one chunk) failed: {exc.strerror}"
                          + ("; out of address space or memory: use smaller chunks, or raise the "
                             "limit (ulimit -v)" if exc.errno == errno.ENOMEM else ""), self.path) from None


def from_npy(path, chunks="auto"):
    """A ``.npy`` file as a lazy dask array whose chunks are read through memory maps.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.npy`` file (not ``.npz``); its header is read here (the data is not).  A
        header that promises more bytes than the file holds (a truncated file) is a
        ValueError now, not at compute time.
    chunks : int, tuple or "auto", default "auto"
        dask's ``chunks`` (e.g. ``(2**12, None)`` for blocks of whole rows).

    Returns
    -------
    dask.array.Array
        Nothing is read until it is computed.  Each chunk maps only the span of the file
        from its first to its last element (for C order, its rows), so neither memory nor
        address space grows with the file: peak memory is a few chunks.  The task names
        are a token of the file (path, size, modification time), its layout and the
        chunks, so two readings of one file with different chunks can be combined.  A
        chunk read after the file was rewritten is an OSError (call from_npy again).
        Needs dask: ``pip install "softfloat-emu[dask]"``.

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
    path = _validate.file_path("path", path, "a .npy file")
    dtype, shape, fortran, offset, st = _read_header(path)
    from dask.base import tokenize

    try:
        chunks = da.core.normalize_chunks(chunks, shape, dtype=dtype)
    except (TypeError, ValueError) as exc:  # dask's own text names no argument
        raise ValueError(f"chunks={_validate.short_repr(chunks)} is no chunking of the file's shape "
                         f"{shape} for dask: {exc}") from None
    identity = _identity(st)
    # everything that decides what a chunk holds: two readings differ in their names
    # unless they are the same file, layout and chunks
    token = tokenize(os.path.abspath(path), identity, np.lib.format.dtype_to_descr(dtype), shape,
                     fortran, offset, chunks)
    source = _NpyChunks(path, shape, dtype, fortran, offset, identity)
    return da.from_array(source, chunks=chunks, name=f"from_npy-{token}",
                         meta=np.empty((0,) * len(shape), dtype=dtype))


# =====================================================================================
# writing
# =====================================================================================
def _header(dtype: np.dtype, shape: tuple) -> bytes:
    """The .npy header (C order) of an array of ``dtype`` and ``shape``: the oldest
    version that can hold it, as numpy.save writes it."""
    fmt = np.lib.format
    d = {"descr": fmt.dtype_to_descr(dtype), "fortran_order": False, "shape": tuple(shape)}
    buf = io.BytesIO()
    try:
        fmt.write_array_header_1_0(buf, d)
    except ValueError:  # a header over 64 KiB (a dtype of very many fields)
        buf = io.BytesIO()
        fmt.write_array_header_2_0(buf, d)
    return buf.getvalue()


def _write_runs(fd: int, offset: int, shape: tuple, index: tuple, block: np.ndarray) -> int:
    """Write ``block``, the part ``index`` (slices of step 1, as dask.array.store gives)
    of a C-order array of ``shape`` whose data starts at byte ``offset`` of the file
    ``fd``; return the bytes written.

    In C order a block is a set of contiguous runs: with the axes after j whole, each
    index over the axes before j gives one run of ``block.shape[j] * prod(shape[j+1:])``
    elements (j = 0 when every axis after the first is whole: one run)::

        shape (4, 6), block rows 1-2, columns 2-4: j = 1, two runs
        . . . . . .
        . . # # # .    run (1,): elements 8..10
        . . # # # .    run (2,): elements 14..16
        . . . . . .
    """
    ndim = len(shape)
    starts = [s.indices(n)[0] for s, n in zip(index, shape)]
    j = ndim - 1 if ndim else 0
    while j > 0 and block.shape[j] == shape[j]:
        j -= 1
    strides = [int(np.prod(shape[a + 1:], dtype=np.int64)) for a in range(ndim)]  # in elements
    itemsize, written = block.dtype.itemsize, 0
    for lead in np.ndindex(*block.shape[:j]):
        run = np.ascontiguousarray(block[lead])
        first = sum((starts[a] + i) * strides[a] for a, i in enumerate(lead))
        if ndim:
            first += starts[j] * strides[j]
        view = memoryview(run.reshape(-1).view(np.uint8))
        at = offset + first * itemsize
        while len(view):  # a write may take fewer bytes than given (Linux: at most 2 GiB)
            n = _pwrite(fd, view, at)
            view, at, written = view[n:], at + n, written + n
    return written


def _pwrite(fd: int, data, at: int) -> int:
    """``os.pwrite`` where there is one (POSIX), else a seek and a write (Windows)."""
    if hasattr(os, "pwrite"):
        return os.pwrite(fd, data, at)
    os.lseek(fd, at, os.SEEK_SET)  # pragma: no cover - Windows
    return os.write(fd, data)  # pragma: no cover


class _NpyWriter:
    """The target of ``dask.array.store``: ``[index] = block`` opens the file by its path
    in whatever process runs the task and writes the block's bytes there."""

    def __init__(self, path: str, shape: tuple, dtype: np.dtype, offset: int):
        self.path, self.shape, self.dtype, self.offset = path, shape, dtype, offset
        self.ndim = len(shape)

    def __setitem__(self, index, block):
        index = index if isinstance(index, tuple) else (index,)
        if isinstance(block, np.ndarray) and type(block) is not np.ndarray:
            _validate.ndarray_subclass("bits (a chunk)", block)  # a masked chunk: no silent unmasking
        block = np.asarray(block, dtype=self.dtype)
        # no O_CREAT: a worker that cannot see the file fails instead of writing elsewhere
        fd = os.open(self.path, os.O_WRONLY | getattr(os, "O_BINARY", 0))
        try:
            _write_runs(fd, self.offset, self.shape, index, block)
        finally:
            os.close(fd)


def to_npy(bits, path, *, overwrite=True):
    """Write an array -- a dask array chunk by chunk -- to a ``.npy`` file, on any scheduler.

    The file is built as ``path``'s temporary sibling: its header is written and its
    size set first, then each chunk's task opens it and writes the chunk's bytes at
    their offsets, in whatever thread, process or cluster worker runs the task (a
    pickled ``np.memmap`` would be written in each worker's own copy).  Once every chunk
    is written the file is flushed to disk and renamed onto ``path``; if anything fails,
    the temporary file is removed and ``path`` is left as it was.

    Parameters
    ----------
    bits : dask.array.Array or array_like
        What to write (any dtype numpy can store without pickling, e.g. the bit
        patterns of :func:`softfloat.encode`).  A dask array is computed with the active
        scheduler (a ``dask.distributed`` client when one is active): peak memory is a
        few chunks.
    path : str or os.PathLike
        The file to write, as given (no ``.npy`` is appended).  With several machines,
        a directory that every worker sees at this path.  It may be the file ``bits`` is
        read from (:func:`from_npy`): every chunk is read before the new file replaces
        it (the old lazy array then refuses to read the new file).
    overwrite : bool, default True
        False: a FileExistsError if ``path`` exists (checked first, and again, atomically,
        when the file is put in place).

    Returns
    -------
    None

    Notes
    -----
    Preconditions:

    * every process that runs a chunk sees ``path``'s directory at the same path (on a
      cluster of several machines, a shared file system); a worker that cannot open the
      temporary file fails the call rather than write elsewhere;
    * that directory has room for the whole file beside the old ``path`` (which stays
      until the rename);
    * ``bits`` has known chunk sizes (after boolean indexing: ``bits.compute_chunk_sizes()``).

    A chunk is written as runs of contiguous bytes (C order): one run for a chunk of
    whole rows, one run per row (or per leading index) otherwise.

    Examples
    --------
    >>> import os, tempfile
    >>> import dask.array as da
    >>> import softfloat as sf
    >>> path = os.path.join(tempfile.mkdtemp(), "w_bf16.npy")
    >>> x = da.from_array(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4), chunks=(2, 3))
    >>> sf.to_npy(sf.encode(x, "bf16"), path)
    >>> np.load(path).tolist()[0]
    [49024, 48977, 48931, 48873]
    >>> bool((np.load(path) == sf.encode(x.compute(), "bf16")).all())
    True
    """
    overwrite = _validate.boolean("overwrite", overwrite)
    path = _validate.file_path("path", path, "the .npy file to write")
    lazy = _dask.is_dask(bits)
    if not lazy:
        bits = _validate.host_array("bits", bits)
        if not isinstance(bits, np.ndarray):
            bits = np.asarray(bits)
    dtype = np.dtype(bits.dtype)
    if dtype.hasobject:
        raise TypeError(f"bits has dtype {dtype}, which holds Python objects: a .npy file of raw "
                        "values cannot store them; convert to a numeric dtype first")
    if os.path.isdir(path):
        raise IsADirectoryError(f"path {path!r} is a directory; name the .npy file to write in it")
    if not overwrite and os.path.lexists(path):
        raise FileExistsError(f"path {path!r} exists and overwrite=False; remove it, choose "
                              "another path, or pass overwrite=True")
    if any(np.isnan(n) for n in bits.shape):
        raise ValueError(f"bits has unknown chunk sizes (shape {bits.shape}), so where each chunk "
                         "goes in the file is unknown; call bits.compute_chunk_sizes() first")
    shape = tuple(int(n) for n in bits.shape)
    header = _header(dtype, shape)
    directory, name = os.path.split(os.path.abspath(path))
    tmp, fd = create_beside(directory, name)  # a fresh file of this process's own
    try:
        try:
            os.write(fd, header)
            os.ftruncate(fd, len(header) + int(np.prod(shape, dtype=object)) * dtype.itemsize)
        finally:
            os.close(fd)
        writer = _NpyWriter(tmp, shape, dtype, len(header))
        if lazy:
            da = _dask.require()
            da.store(bits, writer, lock=False)  # dask.compute on the active scheduler
        elif bits.size:
            writer[(slice(None),) * bits.ndim] = bits
        fd = os.open(tmp, os.O_RDWR | getattr(os, "O_BINARY", 0))  # Windows syncs writable files only
        try:
            os.fsync(fd)  # every process's writes to this file, on this machine
        finally:
            os.close(fd)
        if overwrite:
            os.replace(tmp, path)
        else:
            _place_new(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise
    fsync_directory(directory)


def _place_new(tmp: str, path: str) -> None:
    """Rename ``tmp`` to ``path`` unless ``path`` exists: atomically by a hard link where
    the file system has them, else by a check and a rename."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise FileExistsError(f"path {path!r} appeared while it was written and overwrite=False; "
                              "remove it, choose another path, or pass overwrite=True") from None
    except OSError:  # no hard links here (FAT, some network or FUSE file systems)
        if os.path.lexists(path):
            raise FileExistsError(f"path {path!r} appeared while it was written and overwrite=False; "
                                  "remove it, choose another path, or pass overwrite=True") from None
        os.replace(tmp, path)
    else:
        os.unlink(tmp)
