"""Reading checkpoints: one .npy array, or the tensors of an .npz archive or a .safetensors
file, each tensor read lazily (a memory map, or one zip member) when it is quantised.

safetensors files are read from their published layout (8-byte little-endian header
length, a JSON header of ``{name: {dtype, shape, data_offsets}}`` and ``__metadata__``,
then the tensors' bytes back to back): the ``safetensors`` package cannot load FP8
tensors into numpy.  The tests check against that package (and torch's loader).
"""

from __future__ import annotations

import json
import math
import os
import zipfile
from dataclasses import dataclass, field

import numpy as np

from . import _validate
from .formats import Format, bf16, fp8_e4m3, fp8_e4m3fnuz, fp8_e5m2, fp8_e5m2fnuz, fp16, fp32, fp64

__all__ = ["SAFETENSORS_FLOATS", "NUMPY_FORMAT", "TensorSource", "Checkpoint", "file_kind",
           "open_tensors", "load_npy"]

#: safetensors' float dtypes that are softfloat formats, each stored as its bit patterns
SAFETENSORS_FLOATS = {"F64": fp64, "F32": fp32, "F16": fp16, "BF16": bf16, "F8_E4M3": fp8_e4m3,
                      "F8_E5M2": fp8_e5m2, "F8_E4M3FNUZ": fp8_e4m3fnuz, "F8_E5M2FNUZ": fp8_e5m2fnuz}
_MAX_HEADER = 100_000_000  # the safetensors package's own limit


# =====================================================================================
# reading
# =====================================================================================
@dataclass
class TensorSource:
    """One tensor of a checkpoint, not yet read: its name, shape, dtype label, and how to
    get its data (a memory map or a read of one zip member)."""

    name: str
    shape: tuple
    dtype: str  # numpy's name, or the safetensors dtype code
    fmt: Format | None  # the float format of its elements; None: kept as it is
    load: object = field(repr=False)  # () -> ndarray: values, or bit patterns of fmt
    raw: object = field(repr=False, default=None)  # () -> bytes-like, for kept tensors
    bits: bool = False  # load() gives bit patterns of fmt (safetensors) or values (npz)
    nbytes: int = 0


class Checkpoint:
    """The tensors of one .npz or .safetensors file, in file order, and its metadata."""

    def __init__(self, kind: str, tensors: list[TensorSource], metadata: dict, closer=None):
        self.kind, self.tensors, self.metadata, self._closer = kind, tensors, metadata, closer

    def close(self):
        if self._closer is not None:
            self._closer()


def file_kind(path: str) -> str:
    """'npy', 'npz' or 'safetensors', from the file's first bytes (and a safetensors
    header's shape); a ValueError naming the three otherwise."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(9)
    except OSError as exc:
        raise OSError(f"cannot read IN {path!r}: {exc.strerror or exc}") from None
    if head[:6] == b"\x93NUMPY":
        return "npy"
    if head[:2] == b"PK":
        return "npz"
    if len(head) == 9 and head[8:9] == b"{":
        return "safetensors"
    raise ValueError(f"{path!r} is not a .npy file, an .npz archive or a .safetensors file "
                     "(it starts with none of their headers)")


def open_tensors(path: str) -> Checkpoint:
    """The tensors of an .npz or .safetensors file, read lazily one by one."""
    kind = file_kind(path)
    if kind == "npz":
        return _open_npz(path)
    if kind == "safetensors":
        return _open_safetensors(path)
    raise ValueError(f"{path!r} is a .npy file: one array, not a checkpoint")


def _open_npz(path: str) -> Checkpoint:
    try:
        archive = np.load(path, allow_pickle=False)
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise ValueError(f"cannot read the .npz archive {path!r}: {exc}") from None
    tensors = []
    for name in archive.files:
        header = _npz_member_header(archive, name, path)
        dtype, shape = header
        fmt = NUMPY_FORMAT.get(dtype.newbyteorder("=")) if dtype.kind == "f" else None
        tensors.append(TensorSource(name, shape, dtype.name, fmt, load=lambda n=name: archive[n],
                                    raw=lambda n=name: archive[n],
                                    nbytes=math.prod(shape) * dtype.itemsize))
    return Checkpoint("npz", tensors, {}, archive.close)


NUMPY_FORMAT = {np.dtype(np.float64): fp64, np.dtype(np.float32): fp32, np.dtype(np.float16): fp16}


def _npz_member_header(archive, name: str, path: str):
    """dtype and shape of one .npz member, from its .npy header (the data is not read)."""
    with archive.zip.open(name + ".npy") as fh:
        try:
            version = np.lib.format.read_magic(fh)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, _, dtype = read(fh)
        except ValueError as exc:
            raise ValueError(f"cannot read {name!r} in {path!r}: {exc}") from None
    if dtype.hasobject:
        raise ValueError(f"{path!r} holds {name!r}, an object (pickled) array; save numeric "
                         "arrays only")
    return dtype, tuple(shape)


def _open_safetensors(path: str) -> Checkpoint:
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        n = int.from_bytes(fh.read(8), "little")
        if n > min(_MAX_HEADER, size - 8):
            raise ValueError(f"{path!r} is not a valid .safetensors file: its header length "
                             f"{n} exceeds the file")
        try:
            header = json.loads(fh.read(n).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path!r} is not a valid .safetensors file: its header is not "
                             f"JSON ({exc})") from None
    if not isinstance(header, dict):
        raise ValueError(f"{path!r} is not a valid .safetensors file: its header is not a JSON object")
    metadata = header.pop("__metadata__", None) or {}
    start = 8 + n
    entries = []
    for name, info in header.items():
        try:
            code, shape, (begin, end) = info["dtype"], tuple(int(d) for d in info["shape"]), info["data_offsets"]
            begin, end = int(begin), int(end)
        except (TypeError, KeyError, ValueError):
            raise ValueError(f"{path!r} is not a valid .safetensors file: tensor {name!r} has "
                             f"no dtype, shape and data_offsets ({_validate.short_repr(info)})") from None
        if not 0 <= begin <= end <= size - start or min(shape, default=0) < 0:
            raise ValueError(f"{path!r} is not a valid .safetensors file: tensor {name!r} lies "
                             f"outside the file (data_offsets {begin}..{end})")
        fmt = SAFETENSORS_FLOATS.get(code)
        if fmt is not None and end - begin != math.prod(shape) * fmt.storage_dtype.itemsize:
            raise ValueError(f"{path!r} is not a valid .safetensors file: tensor {name!r} of "
                             f"{code} {list(shape)} has {end - begin} bytes")
        entries.append((begin, name, code, shape, end, fmt))
    tensors = []
    for begin, name, code, shape, end, fmt in sorted(entries, key=lambda e: e[0]):
        offset = start + begin
        raw = (lambda o=offset, k=end - begin: np.memmap(path, np.uint8, "r", o, (k,)) if k
               else np.empty(0, np.uint8))
        load = None
        if fmt is not None:
            dt = fmt.storage_dtype.newbyteorder("<")  # safetensors is little-endian
            load = (lambda o=offset, d=dt, s=shape: np.memmap(path, d, "r", o, s)
                    if math.prod(s) else np.empty(s, d))
        tensors.append(TensorSource(name, shape, code, fmt, load=load, raw=raw, bits=True,
                                    nbytes=end - begin))
    return Checkpoint("safetensors", tensors, metadata)



def load_npy(path: str) -> np.ndarray:
    """Read one numeric array from a .npy file; a clear OSError/ValueError otherwise."""
    try:
        with open(path, "rb") as fh:
            magic = fh.read(6)
    except OSError as exc:
        raise OSError(f"cannot read IN.npy {path!r}: {exc.strerror or exc}") from None
    if magic[:2] == b"PK":
        raise ValueError(f"{path!r} is an .npz archive; quantize takes one array saved "
                         "with numpy.save (.npy)")
    if magic != b"\x93NUMPY":
        raise ValueError(f"{path!r} is not a .npy file (it lacks the header numpy.save writes)")
    try:
        array = np.load(path, allow_pickle=False)
    except ValueError as exc:
        raise ValueError(f"cannot read {path!r}: object (pickled) arrays are not "
                         f"supported, save a numeric array ({exc})") from None
    problem = _validate.npy_dtype_problem(array.dtype)
    if problem:
        raise ValueError(f"IN.npy {path!r} holds {problem}")
    return array
