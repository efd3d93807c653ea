"""Writing checkpoints: every output goes through :func:`atomic_output` (a temporary file
beside OUT, renamed over it only once complete and on disk), filled by a streamed .npz or
.safetensors writer (header first, then each tensor's bytes in pieces, so an output never
has to be held whole), a torch .pt writer, or one .npy array.

Why atomic: a disk that fills up, a quota, a permission or a Ctrl-C halfway through a
multi-gigabyte checkpoint must not leave a truncated file that looks like a checkpoint,
nor destroy the OUT that was there before.  safetensors files are written from their
published layout: the ``safetensors`` package's numpy API needs every output tensor in
memory at once to write a file.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import zipfile

import numpy as np

__all__ = ["atomic_output", "create_beside", "fsync_directory", "SafetensorsWriter", "NpzWriter", "PtWriter", "save_npy"]


# =====================================================================================
# the one way a file is written
# =====================================================================================
@contextlib.contextmanager
def atomic_output(path, label: str = "OUT", mode: str = "wb"):
    """Open a temporary file in ``path``'s directory for writing; on a clean exit flush it,
    fsync it and ``os.replace`` it over ``path``; on any failure (an exception,
    KeyboardInterrupt) remove it and leave ``path`` as it was.

    An OSError (disk full, quota, permission, a missing directory) comes out as an
    OSError naming ``label`` and ``path``: ``cannot write OUT 'w.npz': No space left on
    device``.  Other exceptions pass through unchanged.  The temporary file is created
    with mode 0o666 less the umask, as ``open(path, 'w')`` would create ``path``.

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> with atomic_output(os.path.join(d, "a.txt"), mode="w") as fh:
    ...     _ = fh.write("hello")
    >>> with open(os.path.join(d, "a.txt")) as fh:
    ...     os.listdir(d), fh.read()
    (['a.txt'], 'hello')
    >>> try:
    ...     with atomic_output(os.path.join(d, "b.txt"), mode="w") as fh:
    ...         _ = fh.write("half")
    ...         raise ValueError("stopped")
    ... except ValueError:
    ...     pass
    >>> os.listdir(d)
    ['a.txt']
    """
    path = os.fspath(path)
    directory = os.path.dirname(path) or "."
    try:
        tmp, fd = create_beside(directory, os.path.basename(path))
    except OSError as exc:
        raise _cannot_write(label, path, exc) from None
    try:
        with os.fdopen(fd, mode) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
            if "b" in mode and os.fstat(fh.fileno()).st_size < fh.tell():
                # a writer in C that lost an error (numpy's tofile ignores a failed fflush)
                raise OSError(errno.EIO, "fewer bytes reached the disk than were written")
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        if isinstance(exc, OSError):
            raise _cannot_write(label, path, exc) from None
        raise
    fsync_directory(directory)


def create_beside(directory: str, name: str):
    """(path, fd) of a new, empty file ``.NAME.XXXXXXXX.tmp`` in ``directory``, opened for
    writing, with mode 0o666 less the umask (as ``open(path, 'w')`` or numpy.save)."""
    while True:
        tmp = os.path.join(directory, f".{name}.{secrets.token_hex(4)}.tmp")
        try:
            return tmp, os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        except FileExistsError:
            continue


def fsync_directory(directory: str) -> None:
    """Make a rename in ``directory`` durable, where the platform and file system allow
    (best effort: Windows cannot open a directory, some file systems refuse)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - Windows
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some file systems refuse
        pass
    finally:
        os.close(fd)


def _cannot_write(label: str, path: str, exc: OSError) -> OSError:
    if str(exc).startswith("cannot write "):  # already named (a nested writer)
        return exc
    named = OSError(f"cannot write {label} {path!r}: {exc.strerror or exc}")
    named.errno = exc.errno
    return named


# =====================================================================================
# the writers: each fills an open binary file
# =====================================================================================
class SafetensorsWriter:
    """Streams a .safetensors file: the header (every tensor's dtype, shape and offsets,
    known up front), then each tensor's bytes in that order."""

    def __init__(self, fh, entries: list[tuple[str, str, tuple, int]], metadata: dict):
        header, offset = {}, 0
        if metadata:
            header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
        for name, code, shape, nbytes in entries:
            header[name] = {"dtype": code, "shape": list(shape), "data_offsets": [offset, offset + nbytes]}
            offset += nbytes
        text = json.dumps(header, separators=(",", ":")).encode("utf-8")
        text += b" " * (-(8 + len(text)) % 8)  # the data starts 8-byte aligned
        self.total, self.written = offset, 0
        self.fh = fh
        self.fh.write(len(text).to_bytes(8, "little") + text)

    def write(self, data) -> None:
        data = np.ascontiguousarray(data)
        if data.dtype.byteorder == ">":
            data = data.astype(data.dtype.newbyteorder("<"))
        self.fh.write(memoryview(data).cast("B"))
        self.written += data.nbytes

    def close(self) -> None:
        if self.written != self.total:
            raise AssertionError("unreachable: the header's offsets cover every byte written")

    def abort(self) -> None:
        pass


class NpzWriter:
    """Streams an .npz archive: one .npy member at a time, header first, then its pieces."""

    def __init__(self, fh):
        self.zf = zipfile.ZipFile(fh, "w", allowZip64=True)
        self.fh = None

    def begin(self, name: str, dtype: np.dtype, shape: tuple) -> None:
        self.fh = self.zf.open(name + ".npy", "w", force_zip64=True)
        np.lib.format.write_array_header_2_0(
            self.fh, {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
                      "fortran_order": False, "shape": tuple(shape)})

    def write(self, data) -> None:
        self.fh.write(memoryview(np.ascontiguousarray(data)).cast("B"))

    def end(self) -> None:
        self.fh.close()
        self.fh = None

    def close(self) -> None:
        self.zf.close()

    def abort(self) -> None:
        """Drop a failed archive without raising again (its file is removed anyway)."""
        with contextlib.suppress(Exception):
            if self.fh is not None:
                self.fh.close()
        with contextlib.suppress(Exception):
            self.zf.close()
        self.zf.fp = None  # nothing left for ZipFile.__del__ to write


class PtWriter:
    """Collects tensors (one output-sized numpy buffer each, filled piece by piece) and
    writes them with ``torch.save`` as one flat ``{name: tensor}`` dict on close.

    ``to_tensor(array, name)`` turns each finished buffer into a torch tensor (the caller
    knows which dtype view it needs); torch's format needs every tensor at once, so a .pt
    output is held in memory at its own size.
    """

    def __init__(self, fh, to_tensor, extra: dict | None = None):
        self.out, self.fh, self.to_tensor = {}, fh, to_tensor
        self.extra = extra or {}
        self.name = self.buf = None
        self.filled = 0

    def begin(self, name: str, dtype: np.dtype, shape: tuple) -> None:
        self.name, self.buf, self.filled = name, np.empty(tuple(shape), np.dtype(dtype)), 0

    def write(self, data) -> None:
        flat = np.asarray(data).reshape(-1)
        self.buf.reshape(-1)[self.filled:self.filled + flat.size] = flat
        self.filled += flat.size

    def end(self) -> None:
        self.out[self.name] = self.to_tensor(self.buf, self.name)
        self.name = self.buf = None

    def close(self) -> None:
        import torch  # the caller has checked that torch is installed

        torch.save({**self.out, **self.extra}, self.fh)

    def abort(self) -> None:
        self.out.clear()


def save_npy(path, array: np.ndarray, label: str = "OUT") -> None:
    """Write one array to exactly ``path`` (``np.save`` of a str path would append .npy),
    atomically: a failure leaves no partial file and an existing ``path`` untouched."""
    with atomic_output(path, label) as fh:
        np.save(_PythonWrites(fh), array)


class _PythonWrites:
    """A file seen only through ``write``: numpy then writes in Python-level chunks, whose
    errors (EFBIG, ENOSPC) raise, instead of through C stdio (``ndarray.tofile``), whose
    failed flush numpy ignores -- leaving a truncated file and no error."""

    def __init__(self, fh):
        self.write = fh.write
