"""Reading checkpoints: which kind a file is (from its first bytes, never its name), and
its tensors, each read lazily (a memory map, one zip member, a view of a torch tensor)
when it is quantised -- after everything the file claims has been checked against the
file itself.

A checkpoint reader is the part of the command line a stranger's file reaches first, so
nothing trusts a header: every size, shape and offset is checked against the bytes
actually present before anything is allocated or mapped, and every problem is one
``ValueError`` line that names the file and the tensor (or zip member).  One module per
kind: :mod:`._read_numpy` (.npz, .npy), :mod:`._read_safetensors`, :mod:`._read_torch`;
what they give is :mod:`._checkpoint_source`'s.
"""

from __future__ import annotations

import zipfile

from ._checkpoint_source import SAFETENSORS_BITS, SAFETENSORS_FLOATS, Checkpoint, TensorSource
from ._read_numpy import load_npy, open_npz
from ._read_safetensors import open_safetensors
from ._read_torch import open_pt

__all__ = ["SAFETENSORS_FLOATS", "SAFETENSORS_BITS", "TensorSource", "Checkpoint", "file_kind",
           "open_tensors", "load_npy"]

#: torch.save's legacy (non-zip) format opens with pickle protocol 2 (0x80 0x02), then
#: LONG1 (0x8a) of 10 bytes: torch's magic number 0x1950a86a20f9469cfc6c, little-endian
_TORCH_LEGACY_MAGIC = b"\x80\x02\x8a\x0a" + (0x1950A86A20F9469CFC6C).to_bytes(10, "little")


def file_kind(path: str, label: str = "IN") -> str:
    """'npy', 'npz', 'safetensors' or 'pt' (a ``torch.save`` checkpoint), from the file's
    first bytes (and, for a zip, whether it holds torch's ``data.pkl`` record); a
    ValueError naming them otherwise, an OSError naming ``label`` (the command line's IN,
    a Python parameter's name) where the file cannot be read."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(_TORCH_LEGACY_MAGIC))
    except OSError as exc:
        raise OSError(f"cannot read {label} {path!r}: {exc.strerror or exc}") from None
    if head[:6] == b"\x93NUMPY":
        return "npy"
    if head[:2] == b"PK":
        return "pt" if _is_torch_zip(path) else "npz"
    if head == _TORCH_LEGACY_MAGIC:
        return "pt"
    if len(head) >= 9 and head[8:9] == b"{":
        return "safetensors"
    raise ValueError(f"{path!r} is not a .npy file, an .npz archive, a .safetensors file or a "
                     "torch.save checkpoint (it starts with none of their headers)")


def _is_torch_zip(path: str) -> bool:
    """torch.save's zip format: one folder holding ``data.pkl`` (``archive/data.pkl``)."""
    try:
        with zipfile.ZipFile(path) as zf:
            return any(n == "data.pkl" or n.endswith("/data.pkl") for n in zf.namelist())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return False  # the .npz reader says what is wrong with it


def open_tensors(path: str, label: str = "IN") -> Checkpoint:
    """The tensors of an .npz, .safetensors or torch .pt file, read lazily one by one.

    Everything the file's headers claim is checked against the file before any tensor is
    read; each problem is a one-line ValueError naming the file and the tensor.  Float
    tensors of a softfloat format carry it in ``fmt``; the others (``fmt`` None) are to
    be kept as they are.

    Examples
    --------
    >>> import os, tempfile, numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "w.npz")
    >>> np.savez(path, w=np.float32([1.5, -2.0]), steps=np.arange(3))
    >>> ckpt = open_tensors(path)
    >>> [(t.name, t.shape, t.dtype, t.fmt) for t in ckpt.tensors]
    [('w', (2,), 'float32', softfloat.fp32), ('steps', (3,), 'int64', None)]
    >>> ckpt.tensors[0].load().tolist()  # a read-only memory map of the member's bytes
    [1.5, -2.0]
    >>> ckpt.close(); os.remove(path); os.rmdir(os.path.dirname(path))
    """
    kind = file_kind(path, label)
    if kind == "npz":
        return open_npz(path)
    if kind == "safetensors":
        return open_safetensors(path)
    if kind == "pt":
        return open_pt(path)
    raise ValueError(f"{path!r} is a .npy file: one array, not a checkpoint")
