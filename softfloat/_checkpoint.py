"""Checkpoints tensor by tensor: read .npz and .safetensors files, round every float tensor
into a format in bounded pieces (optionally under a per-tensor scale), write the result
and say, per tensor, what rounding did.

The command line's ``softfloat quantize`` runs on this.  Memory stays bounded by one
piece of ``PIECE`` elements per tensor (plus, for .npz input, the tensor being read: a
zip member cannot be memory-mapped): safetensors input is memory-mapped, and both
writers stream, so the output never has to be held whole.

safetensors files are read and written here from their published layout (8-byte
little-endian header length, a JSON header of ``{name: {dtype, shape, data_offsets}}`` and
``__metadata__``, then the tensors' bytes back to back): the ``safetensors`` package's
numpy API needs every output tensor in memory at once to write a file, and cannot load
FP8 tensors into numpy.  The tests check the files against that package (and torch's
loader).
"""

from __future__ import annotations

import json
import math
import os
import zipfile
from dataclasses import dataclass, field

import numpy as np

from . import _validate
from ._random import key_from
from .codec import decode, encode_piece
from .flags import Outcomes
from .formats import Format, bf16, fp8_e4m3, fp8_e4m3fnuz, fp8_e5m2, fp8_e5m2fnuz, fp16, fp32, fp64
from .report import ErrorAccumulator, outcomes
from .scaled import exact_products, fp32_scales

__all__ = ["PIECE", "TensorSource", "open_tensors", "quantize_tensors"]

#: elements per piece: a multiple of the codec's block, so per-piece error sums add up
#: exactly as one call over the whole tensor would
PIECE = 1 << 20

#: safetensors' float dtypes that are softfloat formats, each stored as its bit patterns
SAFETENSORS_FLOATS = {"F64": fp64, "F32": fp32, "F16": fp16, "BF16": bf16, "F8_E4M3": fp8_e4m3,
                      "F8_E5M2": fp8_e5m2, "F8_E4M3FNUZ": fp8_e4m3fnuz, "F8_E5M2FNUZ": fp8_e5m2fnuz}
_SAFETENSORS_CODE = {fmt: code for code, fmt in SAFETENSORS_FLOATS.items()}
_UINT_CODE = {1: "U8", 2: "U16", 4: "U32", 8: "U64"}
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
        fmt = _NUMPY_FORMAT.get(dtype.newbyteorder("=")) if dtype.kind == "f" else None
        tensors.append(TensorSource(name, shape, dtype.name, fmt, load=lambda n=name: archive[n],
                                    raw=lambda n=name: archive[n],
                                    nbytes=math.prod(shape) * dtype.itemsize))
    return Checkpoint("npz", tensors, {}, archive.close)


_NUMPY_FORMAT = {np.dtype(np.float64): fp64, np.dtype(np.float32): fp32, np.dtype(np.float16): fp16}


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


# =====================================================================================
# writing
# =====================================================================================
class _SafetensorsWriter:
    """Streams a .safetensors file: the header (every tensor's dtype, shape and offsets,
    known up front), then each tensor's bytes in that order."""

    def __init__(self, path: str, entries: list[tuple[str, str, tuple, int]], metadata: dict):
        header, offset = {}, 0
        if metadata:
            header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
        for name, code, shape, nbytes in entries:
            header[name] = {"dtype": code, "shape": list(shape), "data_offsets": [offset, offset + nbytes]}
            offset += nbytes
        text = json.dumps(header, separators=(",", ":")).encode("utf-8")
        text += b" " * (-(8 + len(text)) % 8)  # the data starts 8-byte aligned
        self.total, self.written = offset, 0
        self.fh = open(path, "wb")
        self.fh.write(len(text).to_bytes(8, "little") + text)

    def write(self, data) -> None:
        data = np.ascontiguousarray(data)
        if data.dtype.byteorder == ">":
            data = data.astype(data.dtype.newbyteorder("<"))
        self.fh.write(memoryview(data).cast("B"))
        self.written += data.nbytes

    def close(self, complete: bool = True) -> None:
        self.fh.close()
        if complete and self.written != self.total:
            raise AssertionError("unreachable: the header's offsets cover every byte written")


class _NpzWriter:
    """Streams an .npz archive: one .npy member at a time, header first, then its pieces."""

    def __init__(self, path: str):
        self.zf = zipfile.ZipFile(path, "w", allowZip64=True)
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

    def close(self, complete: bool = True) -> None:
        if self.fh is not None:  # a member left open by a failure
            self.end()
        self.zf.close()


# =====================================================================================
# quantising one tensor
# =====================================================================================
def _values_dtype(src: np.dtype | None, fmt: Format) -> np.dtype:
    """quantize's rule: the input's float dtype where it holds fmt, else float32, else float64."""
    for d in ((src,) if src is not None and src.kind == "f" else ()) + (np.dtype(np.float32), np.dtype(np.float64)):
        if _NUMPY_FORMAT[d.newbyteorder("=")].holds(fmt):
            return d.newbyteorder("=")
    raise AssertionError("unreachable: float64 holds every format")


def quantize_tensors(checkpoint: Checkpoint, out_path: str, out_kind: str, fmt: Format, policy: dict,
                     *, scaling: str = "none", bits: bool = False,
                     metadata: dict | None = None) -> list[dict]:
    """Round every float tensor of ``checkpoint`` into ``fmt`` and write ``out_path``
    (``out_kind`` 'npz' or 'safetensors'); return one report row per tensor.

    Integer, bool and other non-float tensors are copied unchanged (row action 'kept').
    ``scaling='tensor'`` is :func:`softfloat.scaled_encode`'s per-tensor recipe with
    ``multiply="exact"``: ``scale = fp32_scales(amax, fmt)`` (Transformer Engine's
    fp32(max / amax), 1 for an all-zero tensor), amax the largest finite ``|x|`` (an
    infinity does not set the scale), and each element ``x * scale`` rounded once into
    ``fmt`` with the given options (the product is exact, or rounded to odd for float64
    input: softfloat.scaled.exact_products); the scale is stored beside the tensor as
    ``NAME_scale`` (float32, shape ()).  The scale is rounded to nearest, so ``amax *
    scale`` can exceed max by one fp32 rounding: rounding upward, downward or stochastically
    can then overflow the largest element unless ``saturate`` is set.  A stochastic ``policy['rng']``
    is one generator for the whole file: each tensor takes one key from it in file order,
    as ``encode(tensor, rng=generator)`` would, and its pieces the random bits of their
    elements' positions in the tensor (softfloat.codec.encode_piece).
    """
    names = {t.name for t in checkpoint.tensors}
    plan = []
    for t in checkpoint.tensors:
        if t.fmt is None:
            plan.append((t, None))
            continue
        if scaling == "tensor" and t.name + "_scale" in names:
            raise ValueError(f"tensor {t.name!r} would get its scale as {t.name + '_scale'!r}, "
                             "which the input already holds; rename it or drop --scaling")
        plan.append((t, _output_dtype(t, fmt, out_kind, bits)))
    rng = policy["rng"]
    if policy["rounding"].value == "stochastic":
        rng = np.random.default_rng(rng)  # one stream for the whole file
    policy = dict(policy, rng=rng)
    bit_pattern_names = [t.name for t, out in plan if out is not None and (out[1] or "").startswith("U")]
    meta = dict(checkpoint.metadata if out_kind == "safetensors" and checkpoint.kind == "safetensors" else {})
    meta.update(metadata or {})
    if bit_pattern_names:
        meta["softfloat.bit_patterns"] = json.dumps(bit_pattern_names)
    writer = _open_writer(out_path, out_kind, plan, scaling, meta)
    rows = []
    try:
        for t, out in plan:
            if out is None:
                rows.append(_copy(t, writer, out_kind))
            else:
                rows.append(_quantize_one(t, fmt, policy, scaling, out[0], writer, out_kind))
    except BaseException:
        writer.close(complete=False)
        os.remove(out_path)  # no half-written checkpoint left behind
        raise
    writer.close()
    return rows


def _output_dtype(t: TensorSource, fmt: Format, out_kind: str, bits: bool):
    """(numpy dtype written, safetensors code or None) of a quantised tensor."""
    if bits:
        dt = fmt.storage_dtype
        return dt, _UINT_CODE[dt.itemsize] if out_kind == "safetensors" else None
    if out_kind == "safetensors":
        code = _SAFETENSORS_CODE.get(fmt)
        return (fmt.storage_dtype, code or _UINT_CODE[fmt.storage_dtype.itemsize])
    src = None if t.bits else np.dtype(t.dtype)
    return _values_dtype(src, fmt), None


def _open_writer(path, out_kind, plan, scaling, meta):
    try:
        if out_kind == "npz":
            return _NpzWriter(path)
        entries = []
        for t, out in plan:
            if out is None:
                entries.append((t.name, _kept_code(t), t.shape, t.nbytes))
                continue
            dt, code = out
            entries.append((t.name, code, t.shape, math.prod(t.shape) * dt.itemsize))
            if scaling == "tensor":
                entries.append((t.name + "_scale", "F32", (), 4))
        return _SafetensorsWriter(path, entries, meta)
    except OSError as exc:
        raise OSError(f"cannot write OUT {path!r}: {exc.strerror or exc}") from None


#: numpy dtype -> safetensors code, for tensors an .npz gives and a .safetensors keeps
_NUMPY_CODE = {"bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "uint16": "U16",
               "int32": "I32", "uint32": "U32", "int64": "I64", "uint64": "U64", "complex64": "C64"}


def _kept_code(t: TensorSource) -> str:
    if t.bits:  # from a safetensors file: its own code
        return t.dtype
    if t.dtype not in _NUMPY_CODE:
        raise ValueError(f"tensor {t.name!r} has dtype {t.dtype}, which a .safetensors file "
                         "cannot hold; write an .npz instead")
    return _NUMPY_CODE[t.dtype]


def _copy(t: TensorSource, writer, out_kind: str) -> dict:
    if out_kind == "npz":
        arr = t.raw()
        if t.bits:  # a safetensors integer code: its little-endian numpy type
            numpy_name = {code: name for name, code in _NUMPY_CODE.items()}.get(t.dtype)
            if numpy_name is None:
                raise ValueError(f"tensor {t.name!r} is {t.dtype} in the .safetensors input, which "
                                 "numpy has no type for; write a .safetensors file instead")
            arr = np.asarray(arr).view(np.dtype(numpy_name).newbyteorder("<")).reshape(t.shape)
        writer.begin(t.name, arr.dtype, arr.shape)
        writer.write(arr)
        writer.end()
    else:
        data = t.raw()
        flat = data.reshape(-1) if isinstance(data, np.ndarray) else data
        for start in range(0, flat.size, PIECE * 8):
            writer.write(flat[start:start + PIECE * 8])
    return {"name": t.name, "shape": list(t.shape), "dtype": t.dtype, "action": "kept"}


def _pieces(t: TensorSource):
    """(flat float values, their dtype for quantize's output rule) piece by piece."""
    data = t.load()
    flat = data.reshape(-1)
    wide = np.float32 if fp32.holds(t.fmt) else np.float64
    for start in range(0, flat.size, PIECE):
        piece = flat[start:start + PIECE]
        yield np.asarray(decode(piece, t.fmt, wide)) if t.bits else np.asarray(piece)


def _quantize_one(t, fmt, policy, scaling, out_dtype, writer, out_kind) -> dict:
    n = math.prod(t.shape)
    scale = None
    if scaling == "tensor":
        amax = 0.0
        for v in _pieces(t):
            with np.errstate(invalid="ignore"):
                a = np.abs(v[np.isfinite(v)])
            if a.size:
                amax = max(amax, float(a.max()))
        scale = float(fp32_scales(amax, fmt))
    if out_kind == "npz":
        writer.begin(t.name, out_dtype, t.shape)
    totals = dict.fromkeys(Outcomes().counts, 0)
    overflow = 0
    acc = ErrorAccumulator()
    options = {k: v for k, v in policy.items() if k != "rng"}
    key = key_from(policy["rng"]) if policy["rounding"].value == "stochastic" else None  # one per tensor
    wide = not fp32.holds(t.fmt)  # values of more than 24 bits: the product rounded to odd
    start = 0
    for v in _pieces(t):
        x = v if scale is None else exact_products(v.astype(np.float64), scale, wide)
        b, flags = encode_piece(x, fmt, key, start, n, **options, return_flags=True)
        start += x.size
        b = np.asarray(b)
        for k, c in outcomes(b, fmt, flags).counts.items():
            totals[k] += c
        overflow += int(np.count_nonzero(flags.overflow))
        acc.add(x, b, fmt)
        writer.write(b.astype(out_dtype) if out_dtype.kind == "u" else decode(b, fmt, out_dtype))
    if out_kind == "npz":
        writer.end()
    if scale is not None:
        if out_kind == "npz":
            writer.begin(t.name + "_scale", np.float32, ())
        writer.write(np.array(scale, dtype="<f4"))
        if out_kind == "npz":
            writer.end()
    stats = acc.stats()
    row = {"name": t.name, "shape": list(t.shape), "dtype": t.dtype, "action": "quantized",
           "count": n, "became_zero": _share(totals["zero"], n),
           "became_subnormal": _share(totals["subnormal"], n),
           "overflowed": _share(overflow, n), "max_rel_error": stats.max_rel,
           "mean_rel_error": stats.mean_rel, "sqnr_db": stats.sqnr_db, "excluded": stats.excluded}
    if scale is not None:
        row["scale"] = scale
    return row


def _share(count: int, n: int) -> float:
    return count / n if n else math.nan
