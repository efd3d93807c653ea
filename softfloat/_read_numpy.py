"""numpy's files as checkpoints: the .npy members of an .npz archive (each checked against
the zip's own records, stored members memory-mapped, deflated ones inflated into one
buffer of the declared size) and one .npy array (its header's claim checked against the
file first).

numpy.save writes ml_dtypes' types without their names: bfloat16 as a 2-byte void
(``<V2``, the only 2-byte one, so read as bf16), float8_e5m2 as ``<f1`` (the only
1-byte float), the other 1-byte types as ``|V1`` (ambiguous: kept, with a note).
"""

from __future__ import annotations

import ast
import math
import struct
import zipfile
import zlib

import numpy as np

from . import _validate
from ._checkpoint_source import Checkpoint, TensorSource, file_size
from .formats import bf16, fp8_e5m2, native_format

__all__ = ["open_npz", "load_npy", "npy_header"]

#: deflate cannot expand more than about 1032:1 (258-byte matches coded in 2 bits), so a
#: member that claims more than this many bytes per compressed byte is corrupt or hostile
_DEFLATE_MAX_RATIO = 1100
_CHUNK = 1 << 20  # bytes checksummed at a time
_INFLATE_CHUNK = 1 << 16  # bytes inflated at a time (zipfile holds a few times this)
_MAX_NPY_HEADER = 10_000  # numpy.load's own limit (max_header_size) without allow_pickle
_V1_NOTE = ("1-byte void (|V1): numpy.save writes ml_dtypes' FP8 types (but float8_e5m2), "
            "FP6, FP4 and int4 types so, without saying which; kept unchanged (save them as "
            "float32, or as uint8 bit patterns with the format's name, to quantise them)")


def open_npz(path: str) -> Checkpoint:
    """The .npy members of an .npz archive, checked member by member before any is read.

    - Every member must be a ``.npy`` array (what ``numpy.savez`` writes): another file
      in the zip (``readme.txt``) is refused, not skipped, since the output would lose it.
    - A member's .npy header must agree with the size the zip declares for it, and a
      deflated member may not claim more than ``_DEFLATE_MAX_RATIO`` times its compressed
      size (deflate cannot expand more), so nothing larger than the file can hold is
      ever allocated.
    - Stored members (``numpy.savez``) are memory-mapped read-only where they lie in the
      file, after their CRC is checked; deflated ones (``numpy.savez_compressed``) are
      inflated into one array of the declared size, and never beyond it.
    - ml_dtypes' ``bfloat16`` is saved by numpy as ``|V2`` (a 2-byte void: the only
      ml_dtypes type of that size), so ``V2`` members are read as bfloat16 bit patterns
      (``fmt=bf16``, ``bits=True``, little-endian as ml_dtypes writes them on every
      platform numpy supports today).  ``f1`` members are ml_dtypes' ``float8_e5m2`` (the
      only 1-byte float; numpy cannot read them itself): read as fp8_e5m2 bit patterns.
      ``V1`` members (the other FP8, FP6, FP4 and int4 types, which numpy.save does not
      tell apart) are kept unchanged, with a ``note`` saying so.
    """
    size = file_size(path, "the .npz archive")
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ValueError(f"cannot read the .npz archive {path!r}: {exc}") from None
    try:
        seen = set()
        for info in zf.infolist():
            if not info.filename.endswith(".npy"):
                raise ValueError(f"{path!r} holds {info.filename!r}, which is not a .npy array: "
                                 "an .npz checkpoint holds .npy members only (move the other "
                                 "file out of the archive)")
            if info.filename in seen:
                raise ValueError(f"{path!r} is not a valid .npz archive: it holds two members "
                                 f"named {info.filename!r} (a checkpoint must not lose one)")
            seen.add(info.filename)
        starts = {info.filename: _member_data_start(info, path, size) for info in zf.infolist()}
        _no_overlap(zf.infolist(), starts, path)
        tensors = [_npz_member(zf, info, path, size, starts[info.filename]) for info in zf.infolist()]
    except BaseException:
        zf.close()
        raise
    return Checkpoint("npz", tensors, {}, zf.close)


def _no_overlap(infos: list, starts: dict, path: str) -> None:
    """Refuse members whose bytes overlap (the trick of zip bombs that reuse one
    compressed stream for many members): each byte of the file belongs to one member."""
    spans = sorted((starts[i.filename], starts[i.filename] + i.compress_size, i.header_offset,
                    i.filename) for i in infos)
    for (_, end, _, first), (start, _, header, second) in zip(spans, spans[1:]):
        if min(start, header) < end:
            raise ValueError(f"{path!r} is not a valid .npz archive: member {second!r} overlaps "
                             f"member {first!r} (the two share bytes of the file)")


def _npz_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: str, size: int,
                start: int) -> TensorSource:
    name = info.filename[:-len(".npy")]
    bad = f"{path!r} is not a valid .npz archive: member {info.filename!r}"
    if info.flag_bits & 0x1:
        raise ValueError(f"{bad} is encrypted; save the arrays unencrypted (numpy.savez)")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise ValueError(f"{bad} is compressed with zip method {info.compress_type}; softfloat "
                         "reads stored and deflated members (numpy.savez, numpy.savez_compressed)")
    if info.compress_size > size:
        raise ValueError(f"{bad} claims {info.compress_size} compressed bytes, more than the "
                         f"whole file's {size}")
    if info.compress_type == zipfile.ZIP_STORED and info.compress_size != info.file_size:
        raise ValueError(f"{bad} is stored uncompressed but declares {info.file_size} bytes "
                         f"in {info.compress_size}")
    if info.file_size > _DEFLATE_MAX_RATIO * max(info.compress_size, 1):
        raise ValueError(f"{bad} declares {info.file_size} bytes inflated from "
                         f"{info.compress_size}, more than deflate can expand (about 1032:1); "
                         "the archive is corrupt")
    try:
        with zf.open(info) as fh:
            shape, fortran, dtype, header_len, e5m2 = npy_header(fh)
    except (ValueError, zipfile.BadZipFile, EOFError, zlib.error, OSError) as exc:
        raise ValueError(f"cannot read member {info.filename!r} of {path!r}: "
                         f"{' '.join(str(exc).split())}") from None
    if dtype.hasobject:
        raise ValueError(f"{path!r} holds {name!r}, an object (pickled) array; save numeric "
                         "arrays only")
    data = math.prod(shape) * dtype.itemsize
    if header_len + data != info.file_size:
        raise ValueError(f"{bad}: its .npy header says {data} bytes of data ({dtype.str} of "
                         f"shape {shape}), the archive declares {info.file_size - header_len}")
    order = "F" if fortran else "C"
    if info.compress_type == zipfile.ZIP_STORED:
        checked = []  # the CRC is compared on the first read only

        def reader():
            member = _mapped_member(path, info, start, header_len, bad, check=not checked)
            checked.append(True)
            return member
    else:
        reader = (lambda: _inflated_member(zf, info, header_len, data, bad))
    fmt, bits, note, view, label = None, False, "", dtype, dtype.name
    if e5m2:  # ml_dtypes.float8_e5m2, as numpy.save writes it ('<f1')
        fmt, bits, label = fp8_e5m2, True, "float8_e5m2"
    elif dtype.kind == "f":
        fmt = native_format(dtype)
    elif _is_plain_void(dtype, 2):  # ml_dtypes.bfloat16, as numpy.save writes it
        fmt, bits, view, label = bf16, True, np.dtype("<u2"), "bfloat16"
    elif _is_plain_void(dtype, 1):
        note = _V1_NOTE

    def load(v=view):
        return _shaped(reader(), v, shape, order)

    def raw():
        return _shaped(reader(), dtype, shape, order)

    return TensorSource(name, shape, label, fmt, load=load, raw=raw, bits=bits, nbytes=data,
                        note=note)


def _is_plain_void(dtype: np.dtype, itemsize: int) -> bool:
    return (dtype.kind == "V" and dtype.itemsize == itemsize and dtype.names is None
            and dtype.subdtype is None)


def _shaped(flat: np.ndarray, dtype: np.dtype, shape: tuple, order: str) -> np.ndarray:
    """A flat uint8 buffer as an array of dtype and shape (a view, no copy)."""
    if flat.size == 0 or dtype.itemsize == 0:
        return np.empty(shape, dtype)
    return flat.view(dtype).reshape(shape, order=order)


def _member_data_start(info: zipfile.ZipInfo, path: str, size: int) -> int:
    """Where a member's (stored or compressed) bytes begin: after its local file header.

    local header: signature PK\\3\\4 (4) | 22 bytes of versions, flags, method, times, crc,
    sizes | name length (2) | extra length (2) | name | extra | the member's bytes
    """
    bad = f"{path!r} is not a valid .npz archive: member {info.filename!r}"
    with open(path, "rb") as fh:
        fh.seek(info.header_offset)
        local = fh.read(30)
    if len(local) != 30 or local[:4] != b"PK\x03\x04":
        raise ValueError(f"{bad} has no local header at offset {info.header_offset}")
    n_name, n_extra = struct.unpack("<HH", local[26:30])
    start = info.header_offset + 30 + n_name + n_extra
    if start + info.compress_size > size:
        raise ValueError(f"{bad} claims {info.compress_size} bytes from offset {start}, beyond "
                         f"the file's end ({size} bytes)")
    return start


def _mapped_member(path: str, info: zipfile.ZipInfo, start: int, header_len: int, bad: str,
                   *, check: bool = True):
    """A stored member's data, memory-mapped read-only, once its CRC matches."""
    member = np.memmap(path, np.uint8, "r", start, (info.compress_size,))
    crc = info.CRC
    if check:
        crc = 0
        for i in range(0, member.size, _CHUNK):
            crc = zlib.crc32(member[i:i + _CHUNK], crc)
    if crc != info.CRC:
        raise ValueError(f"{bad} does not match its CRC-32 checksum: the archive is corrupt")
    return member[header_len:]


def _inflated_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, header_len: int, nbytes: int, bad: str):
    """A deflated member's data in one preallocated buffer of the declared size: zipfile
    inflates it piece by piece and stops at that size (and checks the CRC at the end)."""
    flat = np.empty(nbytes, np.uint8)
    view = memoryview(flat)
    try:
        with zf.open(info) as fh:
            fh.read(header_len)
            pos = 0
            while pos < nbytes:
                piece = fh.read(min(nbytes - pos, _INFLATE_CHUNK))
                if not piece:
                    raise ValueError(f"{bad} ends after {pos} of {nbytes} bytes of data")
                view[pos:pos + len(piece)] = piece
                pos += len(piece)
            fh.read(1)  # at the end: zipfile compares the CRC
    except (zipfile.BadZipFile, EOFError, zlib.error, OSError) as exc:
        raise ValueError(f"{bad} cannot be inflated: {' '.join(str(exc).split())}") from None
    return flat


def load_npy(path: str, label: str = "IN.npy") -> np.ndarray:
    """Read one numeric array from a .npy file; a clear OSError/ValueError otherwise,
    naming the file as ``label`` (the command line's IN.npy, a Python parameter's name).

    The header's claim (shape times item size) is checked against the bytes the file
    holds before anything is allocated.  Two ml_dtypes types numpy cannot read back are
    recognised by how numpy.save spells them and widened exactly: ``|V2`` is bfloat16 (the
    only 2-byte type saved as void), returned as float32 (bf16 is the top half of a
    float32); ``<f1`` is float8_e5m2 (the only 1-byte float), returned as float16 (e5m2 is
    the top byte of an fp16).  ``|V1`` (the other FP8, FP6 and FP4 types, which numpy.save
    does not tell apart) and object (pickled) arrays are refused: softfloat never
    unpickles.
    """
    try:
        with open(path, "rb") as fh:
            magic = fh.read(6)
    except OSError as exc:
        raise OSError(f"cannot read {label} {path!r}: {exc.strerror or exc}") from None
    if magic[:2] == b"PK":
        raise ValueError(f"{path!r} is an .npz archive; quantize takes one array saved "
                         "with numpy.save (.npy)")
    if magic != b"\x93NUMPY":
        raise ValueError(f"{path!r} is not a .npy file (it lacks the header numpy.save writes)")
    size = file_size(path, label)
    with open(path, "rb") as fh:
        try:
            shape, fortran, dtype, start, e5m2 = npy_header(fh)
        except ValueError as exc:
            raise ValueError(f"{path!r} is not a valid .npy file: its header cannot be read "
                             f"({' '.join(str(exc).split())})") from None
    if dtype.hasobject:
        raise ValueError(f"cannot read {path!r}: it holds an object (pickled) array, and "
                         "softfloat never unpickles; save a numeric array")
    need = math.prod(shape) * dtype.itemsize
    if need > size - start:
        raise ValueError(f"{path!r} is truncated: header says {need} bytes of data ({dtype.str} "
                         f"of shape {tuple(shape)}), the file holds {size - start}")
    if _is_plain_void(dtype, 1):
        raise ValueError(f"{label} {path!r} holds {_V1_NOTE.split(';')[0]}; save it as float32 "
                         "(array.astype(numpy.float32)) to quantise it")
    problem = None if e5m2 or _is_plain_void(dtype, 2) else _validate.npy_dtype_problem(dtype)
    if problem:
        raise ValueError(f"{label} {path!r} holds {problem}")
    array = np.fromfile(path, dtype, math.prod(shape), offset=start).reshape(
        shape, order="F" if fortran else "C")
    if e5m2:
        # e5m2 bits b -> float16 bits b << 8:  s eeeee mm | 00000000  (e5m2 is fp16's top byte)
        return (array.astype(np.uint16) << np.uint16(8)).view(np.float16)
    if _is_plain_void(dtype, 2):
        # bf16 bits b -> float32 bits b << 16:  s eeeeeeee mmmmmmm | 0000000000000000
        return (array.view("<u2").astype(np.uint32) << np.uint32(16)).view(np.float32)
    return array


def npy_header(fh):
    """(shape, fortran_order, dtype, bytes before the data, is_e5m2) of a .npy stream's header.

    The one .npy header parser (:func:`softfloat.from_npy` reads through it too): every
    field is checked (a literal, never evaluated code; the length bounded as numpy.load
    bounds it), so a hostile file gives a ValueError.

    .npy: \\x93NUMPY | major minor | header length (2 bytes in 1.0, 4 in 2.0 and 3.0) |
    a Python dict literal {'descr', 'fortran_order', 'shape'} padded with spaces | the data

    Read here rather than by numpy for one reason: ml_dtypes' ``float8_e5m2`` calls itself
    a float, so numpy.save writes its descr as ``'<f1'``, which numpy cannot read back; it
    is the only 1-byte float, so ``f1`` is read as ``uint8`` bit patterns, with is_e5m2 set.
    """
    version = np.lib.format.read_magic(fh)
    if version not in ((1, 0), (2, 0), (3, 0)):
        raise ValueError(f".npy format version {version[0]}.{version[1]} is none of 1.0, 2.0, 3.0")
    size_field = fh.read(2 if version == (1, 0) else 4)
    n = int.from_bytes(size_field, "little")
    if len(size_field) not in (2, 4) or n > _MAX_NPY_HEADER:
        raise ValueError(f"its header length {n} is more than numpy reads ({_MAX_NPY_HEADER})")
    raw = fh.read(n)
    if len(raw) != n:
        raise ValueError(f"the file ends inside its header ({len(raw)} of {n} bytes)")
    try:
        d = ast.literal_eval(raw.decode("utf-8" if version == (3, 0) else "latin1"))
    except (SyntaxError, ValueError, UnicodeDecodeError, MemoryError, RecursionError) as exc:
        raise ValueError(f"its header is not a Python dict literal ({type(exc).__name__})") from None
    if not isinstance(d, dict) or set(d) != {"descr", "fortran_order", "shape"}:
        raise ValueError(f"its header {_validate.short_repr(d)} is not a dict of descr, "
                         "fortran_order and shape")
    shape, fortran, descr = d["shape"], d["fortran_order"], d["descr"]
    if not isinstance(shape, tuple) or not all(type(x) is int and x >= 0 for x in shape):
        raise ValueError(f"its shape {_validate.short_repr(shape)} is not a tuple of "
                         "non-negative integers (no negative length)")
    if not isinstance(fortran, bool):
        raise ValueError(f"its fortran_order {_validate.short_repr(fortran)} is not a bool")
    if isinstance(descr, str) and descr[1:] == "f1" and descr[:1] in "<>|=":
        return shape, fortran, np.dtype(np.uint8), fh.tell(), True  # ml_dtypes.float8_e5m2
    else:
        try:
            dtype = np.lib.format.descr_to_dtype(descr)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"its descr {_validate.short_repr(descr)} is no numpy dtype "
                             f"({' '.join(str(exc).split())})") from None
    return shape, fortran, dtype, fh.tell(), False
