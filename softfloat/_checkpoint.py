"""Checkpoints tensor by tensor: round every float tensor into a format in bounded pieces
(optionally under a per-tensor scale), write the result and say, per tensor, what
rounding did.

:func:`softfloat.quantize_checkpoint` and the command line's ``softfloat quantize`` run
on :func:`quantize_file`.  Memory stays bounded by one piece of ``PIECE`` elements per
tensor (plus, for .npz input, the tensor being read: a zip member cannot be
memory-mapped; and for .pt output the output itself, which ``torch.save`` takes whole):
safetensors input is memory-mapped (:mod:`softfloat._checkpoint_read`), and the .npz and
.safetensors writers stream (:mod:`softfloat._checkpoint_write`).  Every output is
written atomically: complete, or not at all.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass

import numpy as np

from . import _validate
from ._checkpoint_read import SAFETENSORS_FLOATS, Checkpoint, TensorSource, file_kind, load_npy, open_tensors
from ._checkpoint_write import NpzWriter, PtWriter, SafetensorsWriter, atomic_output, save_npy
from ._random import key_from
from .attributes import DEFAULT_ATTRIBUTES, RoundingAttributes
from .codec import decode, encode, encode_piece, quantize
from .flags import Outcomes
from .formats import Format, fp32
from .interop import dtype_names, to_torch
from .report import ErrorAccumulator, error_stats, outcomes
from .rounding import Rounding
from .scaled import exact_products, fp32_scales

__all__ = ["PIECE", "OUT_KINDS", "METADATA_ENTRY", "Words", "PYTHON_WORDS", "QuantizeSpec", "same_file", "check_directory", "check_paths",
           "quantize_file", "quantize_npy", "quantize_tensors"]

#: elements per piece: a multiple of the codec's block, so per-piece error sums add up
#: exactly as one call over the whole tensor would
PIECE = 1 << 20

#: OUT's extension -> the kind of file written
OUT_KINDS = {".npy": "npy", ".npz": "npz", ".safetensors": "safetensors", ".pt": "pt", ".pth": "pt"}
#: the entry of an .npz (written with bits) or .pt output that holds softfloat's metadata
#: (the safetensors metadata keys softfloat.format, softfloat.bit_patterns, ...)
METADATA_ENTRY = "__softfloat__"
#: output names a file kind reserves
_RESERVED = {"safetensors": "__metadata__", "pt": METADATA_ENTRY, "npz": METADATA_ENTRY}

_SAFETENSORS_CODE = {fmt: code for code, fmt in SAFETENSORS_FLOATS.items()}
_UINT_CODE = {1: "U8", 2: "U16", 4: "U32", 8: "U64"}
#: torch has no uint16/32/64 tensors every operation takes: bit patterns of 2, 4 and 8
#: bytes travel as the signed type of that width (the same bits)
_TORCH_INT = {1: np.uint8, 2: np.int16, 4: np.int32, 8: np.int64}


@dataclass(frozen=True)
class Words:
    """What error messages call the input, the output, a .npy input and the per-tensor
    scaling: the command line's IN, OUT and option (the default), or, from
    :func:`softfloat.quantize_checkpoint`, its parameters (:data:`PYTHON_WORDS`)."""

    src: str = "IN"
    dst: str = "OUT"
    npy: str = "IN.npy"
    scaling: str = "--scaling tensor"


PYTHON_WORDS = Words(src="src", dst="dst", npy="src", scaling="scaling='tensor'")


# =====================================================================================
# IN and OUT, checked before anything is read
# =====================================================================================
def same_file(a, b) -> bool:
    """Are ``a`` and ``b`` one file (symlinks followed, hard links included)?"""
    try:
        sa, sb = os.stat(a), os.stat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def check_directory(path, label: str) -> None:
    """An OSError naming ``label`` unless ``path``'s directory is one (checked before any
    work, so a typo in a directory fails at once, not after minutes of quantising)."""
    directory = os.path.dirname(os.fspath(path)) or "."
    if not os.path.isdir(directory):
        why = "it does not exist" if not os.path.exists(directory) else "it is not a directory"
        raise OSError(f"cannot write {label} {os.fspath(path)!r}: {directory!r} is no directory "
                      f"({why})")


def check_paths(src, dst, *, scaling: str = "none", fmt: Format | None = None,
                words: Words = Words()) -> tuple[str, str]:
    """(IN's kind, OUT's kind), or a ValueError saying why this pair cannot be written:
    OUT is IN (the same file by identity), OUT's extension names no kind, or the kinds do
    not fit (one array in, a checkpoint out, or the reverse).  IN's kind comes from its
    first bytes, OUT's from its extension (an OUT without one is a .npy for a .npy IN)."""
    src, dst = os.fspath(src), os.fspath(dst)
    if same_file(src, dst):
        raise ValueError(f"{words.dst} {dst!r} is {words.src} itself ({src!r}: the same file, by name or "
                         "through a link): the input would be overwritten while it is read; "
                         "write to another file")
    check_directory(dst, words.dst)
    in_kind = file_kind(src, words.src)
    ext = os.path.splitext(dst)[1].lower()
    if in_kind == "npy":
        if ext not in ("", ".npy"):
            what = ("a checkpoint of several arrays" if ext in OUT_KINDS
                    else f"an unknown kind ({ext!r})")
            raise ValueError(f"{words.dst} {dst!r} names {what}, but {words.src} {src!r} is a .npy file of "
                             f"one array: {words.dst} must end in .npy (to make a checkpoint, save the "
                             "array in an .npz with numpy.savez and quantize that)")
        out_kind = "npy"
    else:
        out_kind = OUT_KINDS.get(ext)
        if out_kind in (None, "npy"):
            what = {"npz": "an .npz archive", "safetensors": "a .safetensors file"}.get(in_kind, f"a .{in_kind} file")
            raise ValueError(f"{words.dst} {dst!r} must end in .npz or .safetensors (or .pt/.pth for "
                             f"a torch file): {words.src} is {what} of several arrays")
    if scaling == "tensor" and out_kind == "npy":
        raise ValueError(f"{words.scaling} needs room for the scale beside the array; a .npy "
                         "file holds one array: save it in an .npz or .safetensors file")
    if scaling == "tensor" and fmt is not None and fmt.bits > 8:
        raise ValueError(f"{words.scaling} is for formats of 8 bits or fewer (FP8, FP6, FP4), "
                         f"whose range is too narrow for raw weights; {fmt.name} has "
                         f"{fmt.bits} bits and the range of its {fmt.exponent_bits}-bit "
                         "exponent, and its casts take no scale (Transformer Engine scales only "
                         f"FP8): drop {words.scaling}")
    return in_kind, out_kind


@dataclass(frozen=True)
class QuantizeSpec:
    """What a quantisation does to every float tensor, checked by the caller.

    fmt : Format
        The target format.
    attrs : RoundingAttributes
        How each element is rounded.
    rng : numpy.random.Generator, int or None
        Stochastic rounding's source, one stream for the whole file (ignored otherwise).
    scaling : {"none", "tensor"}
        "tensor": a per-tensor fp32 scale (see :func:`quantize_tensors`).
    bits : bool
        Store bit patterns even where the output has a dtype for ``fmt``.
    """

    fmt: Format
    attrs: RoundingAttributes = DEFAULT_ATTRIBUTES
    rng: object = None
    scaling: str = "none"
    bits: bool = False


def spec_metadata(spec: QuantizeSpec) -> dict:
    """The softfloat.* metadata a quantised checkpoint carries."""
    meta = {"softfloat.format": spec.fmt.name, "softfloat.rounding": spec.attrs.rounding.value}
    if spec.scaling == "tensor":
        meta["softfloat.scaling"] = ("tensor: NAME_scale (float32) beside each quantised tensor; "
                                     "stored = round(x * scale), x ~ stored / scale")
    return meta


def quantize_file(src, dst, spec: QuantizeSpec, *, progress=None, words: Words = Words()):
    """Quantise the file ``src`` into ``dst`` as ``spec`` says: (rows, detail), detail for
    a .npy IN the (flags, outcomes, error stats, result dtype) the command line prints,
    else None.

    Every check (see :func:`check_paths`) comes before anything is read; the output is
    written atomically (:func:`softfloat._checkpoint_write.atomic_output`).  Messages call
    the files and the scaling as ``words`` says (the command line's, by default).
    """
    src, dst = os.fspath(src), os.fspath(dst)
    in_kind, out_kind = check_paths(src, dst, scaling=spec.scaling, fmt=spec.fmt, words=words)
    if in_kind == "npy":
        row, detail = quantize_npy(src, dst, spec, words)
        if progress is not None:
            progress(row["name"], os.path.getsize(src), os.path.getsize(src))
        return [row], detail
    if out_kind == "pt":
        _require_torch()
    checkpoint = open_tensors(src, words.src)
    try:
        rows = quantize_tensors(checkpoint, dst, out_kind, spec, metadata=spec_metadata(spec),
                                progress=progress, words=words)
    finally:
        checkpoint.close()
    return rows, None


def _require_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        raise ImportError("writing a .pt/.pth file needs torch, which is not installed: "
                          f"{_validate.install_hint('torch')}") from None


def quantize_npy(src: str, dst: str, spec: QuantizeSpec, words: Words = Words()):
    """One .npy array rounded whole (it is read whole), saved atomically: (row, detail)
    (``spec.scaling`` must be "none": check_paths refuses a scale for a .npy)."""
    x = load_npy(src, words.npy)
    fmt = spec.fmt
    if spec.bits:
        result, flags = encode(x, fmt, attributes=spec.attrs, rng=spec.rng, return_flags=True)
        patterns = result
    else:
        result, flags = quantize(x, fmt, attributes=spec.attrs, rng=spec.rng, return_flags=True)
        patterns = encode(result, fmt)  # the values are in fmt: their bits, exactly
    result = np.asarray(result)
    save_npy(dst, result, words.dst)
    found = outcomes(patterns, fmt, flags)
    stats = error_stats(x, patterns, fmt)
    n = int(np.size(x))
    row = {"name": os.path.basename(src), "shape": list(np.shape(x)), "dtype": x.dtype.name,
           "action": "quantized", "count": n,
           "became_zero": _share(found.counts["zero"], n),
           "became_subnormal": _share(found.counts["subnormal"], n),
           "overflowed": _share(int(np.count_nonzero(flags.overflow)), n),
           "max_rel_error": stats.max_rel, "mean_rel_error": stats.mean_rel,
           "sqnr_db": stats.sqnr_db, "excluded": stats.excluded}
    return row, (flags, found, stats, result.dtype)


# =====================================================================================
# quantising a checkpoint
# =====================================================================================
def quantize_tensors(checkpoint: Checkpoint, out_path: str, out_kind: str, spec: QuantizeSpec, *,
                     metadata: dict | None = None, progress=None, words: Words = Words()) -> list[dict]:
    """Round every float tensor of ``checkpoint`` into ``spec.fmt`` and write ``out_path``
    (``out_kind`` 'npz', 'safetensors' or 'pt'); return one report row per tensor.

    Integer, bool and other non-float tensors are copied unchanged (row action 'kept').
    ``scaling='tensor'`` is :func:`softfloat.scaled_encode`'s per-tensor recipe with
    ``multiply="exact"``: ``scale = fp32_scales(amax, fmt)`` (Transformer Engine's
    fp32(max / amax), 1 for an all-zero tensor), amax the largest finite ``|x|`` (an
    infinity does not set the scale), and each element ``x * scale`` rounded once into
    ``fmt`` with the given options (the product is exact, or rounded to odd for float64
    input: softfloat.scaled.exact_products); the scale is stored beside the tensor as
    ``NAME_scale`` (float32, shape ()).  The scale is rounded to nearest, so ``amax *
    scale`` can exceed max by one fp32 rounding: rounding upward, downward or stochastically
    can then overflow the largest element unless ``saturate`` is set.  A stochastic ``spec.rng``
    is one generator for the whole file: each tensor takes one key from it in file order,
    as ``encode(tensor, rng=generator)`` would, and its pieces the random bits of their
    elements' positions in the tensor (softfloat.codec.encode_piece).

    ``progress(name, nbytes, total_bytes)``, if given, is called after each tensor is
    written (``nbytes`` its size in the input, ``total_bytes`` the input's tensors' sum).
    The output is written atomically: a failure leaves no file (and an existing
    ``out_path`` as it was).
    """
    fmt, scaling = spec.fmt, spec.scaling
    names = {t.name for t in checkpoint.tensors}
    plan = []
    for t in checkpoint.tensors:
        if t.fmt is None:
            plan.append((t, None))
            continue
        if scaling == "tensor" and t.name + "_scale" in names:
            raise ValueError(f"tensor {t.name!r} would get its scale as {t.name + '_scale'!r}, "
                             f"which the input already holds; rename it or drop {words.scaling}")
        plan.append((t, _output_dtype(t, fmt, out_kind, spec.bits)))
    _check_names(plan, out_kind, scaling, words.src)
    # one stream for the whole file, a key per tensor (None for the deterministic modes)
    rng = np.random.default_rng(spec.rng) if spec.attrs.rounding is Rounding.STOCHASTIC else None
    bit_pattern_names = [t.name for t, out in plan if out is not None and out[1] == "bits"]
    # the input's own metadata (a safetensors __metadata__, a .pt file's non-tensor values
    # such as the epoch), less the softfloat.* keys of an earlier run: nothing is dropped
    carried = {k: v for k, v in checkpoint.metadata.items() if not str(k).startswith("softfloat.")}
    meta = dict(carried, **(metadata or {}))
    if bit_pattern_names:
        meta["softfloat.bit_patterns"] = json.dumps(bit_pattern_names)
    for t, out in plan:
        if out is None:
            _kept_dtype(t, out_kind)  # a kept tensor the output cannot hold: refused before writing
    total = sum(t.nbytes for t in checkpoint.tensors)
    rows = []
    with atomic_output(out_path, words.dst) as fh:
        writer = _open_writer(fh, out_kind, plan, scaling, meta, fmt, bit_pattern_names, bool(carried))
        try:
            for t, out in plan:
                if out is None:
                    rows.append(_copy(t, writer, out_kind))
                else:
                    key = None if rng is None else key_from(rng)
                    rows.append(_quantize_one(t, spec, key, out[0], writer, out_kind))
                if getattr(t, "note", None):
                    rows[-1]["note"] = t.note
                if progress is not None:
                    progress(t.name, t.nbytes, total)
            writer.close()
        except BaseException:
            writer.abort()
            raise
    return rows


def _check_names(plan, out_kind: str, scaling: str, src_word: str) -> None:
    """Refuse an output name the file kind reserves, before anything is written."""
    reserved = _RESERVED.get(out_kind)
    for t, out in plan:
        written = [t.name] + ([t.name + "_scale"] if out is not None and scaling == "tensor" else [])
        if reserved in written:
            what = {"safetensors": "a .safetensors header keeps its metadata under that key",
                    "pt": "softfloat keeps the format of a .pt output's bit patterns under that key",
                    "npz": "softfloat keeps the format of an .npz output's bit patterns under that name"}
            raise ValueError(f"tensor {t.name!r} of {src_word} would be written as {reserved!r}, which "
                             f"{what[out_kind]}; rename the tensor or write another kind of file")


def _output_dtype(t: TensorSource, fmt: Format, out_kind: str, bits: bool):
    """(numpy dtype written, label) of a quantised tensor: the label is the safetensors
    code for a .safetensors output, 'bits' where bit patterns stand in for a dtype the
    output kind lacks (listed in softfloat.bit_patterns), 'torch' for a torch float
    dtype, None for values in an .npz."""
    dt = fmt.storage_dtype
    if out_kind == "safetensors":
        code = None if bits else _SAFETENSORS_CODE.get(fmt)
        return (dt, code) if code else (dt, "bits")
    if out_kind == "pt":
        return (dt, "torch") if not bits and dtype_names(fmt)["torch"] else (dt, "bits")
    if bits:
        return dt, "bits"
    src = None if t.bits else np.dtype(t.dtype)
    return fmt.value_dtype(src), None  # quantize's rule, the input's dtype preferred


def _open_writer(fh, out_kind, plan, scaling, meta, fmt, bit_pattern_names, carried):
    if out_kind == "npz":  # metadata only where it says something numpy's file cannot
        return _NpzWithMetadata(fh, meta if bit_pattern_names or carried else None)
    if out_kind == "pt":
        torch_floats = {t.name for t, out in plan if out is not None and out[1] == "torch"}
        bit_names = set(bit_pattern_names)
        import torch  # checked by quantize_file: torch is installed

        def to_tensor(arr, name):
            if name in torch_floats:
                return to_torch(arr, fmt)  # zero-copy: the bits viewed as the dtype
            if name in bit_names:
                return torch.from_numpy(arr.view(_TORCH_INT[arr.itemsize]))
            try:
                return torch.from_numpy(np.ascontiguousarray(arr))
            except TypeError:
                raise ValueError(f"tensor {name!r} has dtype {arr.dtype}, which torch has no "
                                 "tensor for; write an .npz instead") from None

        return PtWriter(fh, to_tensor, {METADATA_ENTRY: {str(k): str(v) for k, v in meta.items()}})
    entries = []
    for t, out in plan:
        if out is None:
            entries.append((t.name, _kept_code(t), t.shape, t.nbytes))
            continue
        dt, code = out
        entries.append((t.name, _UINT_CODE[dt.itemsize] if code == "bits" else code, t.shape,
                        math.prod(t.shape) * dt.itemsize))
        if scaling == "tensor":
            entries.append((t.name + "_scale", "F32", (), 4))
    return SafetensorsWriter(fh, entries, meta)


class _NpzWithMetadata(NpzWriter):
    """An .npz writer that adds the metadata (a 0-d str array holding JSON) as the member
    __softfloat__ when bit patterns need their format named or the input had metadata."""

    def __init__(self, fh, meta):
        super().__init__(fh)
        self.meta = meta

    def close(self):
        if self.meta:
            text = np.array(json.dumps(self.meta, sort_keys=True))
            self.begin(METADATA_ENTRY, text.dtype, ())
            self.write(text)
            self.end()
        super().close()


#: numpy dtype -> safetensors code, for tensors an .npz gives and a .safetensors keeps
_NUMPY_CODE = {"bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "uint16": "U16",
               "int32": "I32", "uint32": "U32", "int64": "I64", "uint64": "U64", "complex64": "C64"}
_CODE_NUMPY = {code: name for name, code in _NUMPY_CODE.items()}


def _kept_code(t: TensorSource) -> str:
    if t.bits and t.dtype.isupper():  # from a safetensors file: its own code
        return t.dtype
    if t.dtype not in _NUMPY_CODE:
        raise ValueError(f"tensor {t.name!r} has dtype {t.dtype}, which a .safetensors file "
                         "cannot hold; write an .npz instead")
    return _NUMPY_CODE[t.dtype]


def _kept_dtype(t: TensorSource, out_kind: str):
    """The numpy dtype a kept tensor is written as (checked before writing)."""
    if out_kind == "safetensors":
        return _kept_code(t)
    if t.bits and t.dtype in _CODE_NUMPY:  # a safetensors integer code: its little-endian type
        return np.dtype(_CODE_NUMPY[t.dtype]).newbyteorder("<")
    if out_kind == "npz" and not t.bits:  # an .npz member: any numpy array goes back in
        return None
    try:
        dt = np.dtype(t.dtype)
    except TypeError:
        if out_kind == "pt":
            raise ValueError(f"tensor {t.name!r} has dtype {t.dtype}, which torch has no tensor "
                             "for; write an .npz instead") from None
        raise ValueError(f"tensor {t.name!r} is {t.dtype} in the input, which numpy has no type "
                         "for; write a .safetensors file instead") from None
    if out_kind == "pt" and dt.kind not in "biuf" and dt.name not in ("complex64", "complex128"):
        raise ValueError(f"tensor {t.name!r} has dtype {dt}, which torch has no tensor for; "
                         "write an .npz instead")
    return dt


def _copy(t: TensorSource, writer, out_kind: str) -> dict:
    if out_kind in ("npz", "pt"):
        arr = t.raw()
        if t.bits:
            arr = np.asarray(arr).view(_kept_dtype(t, out_kind)).reshape(t.shape)
        arr = np.asarray(arr)
        writer.begin(t.name, arr.dtype.newbyteorder("=") if out_kind == "pt" else arr.dtype, arr.shape)
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
    for start in range(0, flat.size, PIECE):
        piece = flat[start:start + PIECE]
        yield np.asarray(decode(piece, t.fmt, t.fmt.value_dtype())) if t.bits else np.asarray(piece)


def _quantize_one(t, spec: QuantizeSpec, key, out_dtype, writer, out_kind) -> dict:
    """Quantise one tensor into ``writer``; ``key`` is its stochastic rounding's 64-bit
    key (softfloat._random.key_from), None for the deterministic modes."""
    fmt = spec.fmt
    n = math.prod(t.shape)
    scale = None
    if spec.scaling == "tensor":
        amax = 0.0
        for v in _pieces(t):
            with np.errstate(invalid="ignore"):
                a = np.abs(v[np.isfinite(v)])
            if a.size:
                amax = max(amax, float(a.max()))
        scale = float(fp32_scales(amax, fmt))
    streamed = out_kind != "safetensors"  # npz and pt: one member (buffer) per tensor
    if streamed:
        writer.begin(t.name, out_dtype, t.shape)
    totals = dict.fromkeys(Outcomes().counts, 0)
    overflow = 0
    acc = ErrorAccumulator()
    wide = not fp32.holds(t.fmt)  # values of more than 24 bits: the product rounded to odd
    start = 0
    for v in _pieces(t):
        x = v if scale is None else exact_products(v.astype(np.float64), scale, wide)
        b, flags = encode_piece(x, fmt, key, start, n, spec.attrs, return_flags=True)
        start += x.size
        b = np.asarray(b)
        for k, c in outcomes(b, fmt, flags).counts.items():
            totals[k] += c
        overflow += int(np.count_nonzero(flags.overflow))
        acc.add(x, b, fmt)
        writer.write(b.astype(out_dtype) if out_dtype.kind == "u" else decode(b, fmt, out_dtype))
    if streamed:
        writer.end()
    if scale is not None:
        if streamed:
            writer.begin(t.name + "_scale", np.float32, ())
        writer.write(np.array(scale, dtype="<f4"))
        if streamed:
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
