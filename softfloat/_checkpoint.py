"""Checkpoints tensor by tensor: round every float tensor into a format in bounded pieces
(optionally under a per-tensor scale), write the result and say, per tensor, what
rounding did.

The command line's ``softfloat quantize`` runs on this.  Memory stays bounded by one
piece of ``PIECE`` elements per tensor (plus, for .npz input, the tensor being read: a
zip member cannot be memory-mapped): safetensors input is memory-mapped
(:mod:`softfloat._checkpoint_read`), and both writers stream
(:mod:`softfloat._checkpoint_write`), so the output never has to be held whole.
"""

from __future__ import annotations

import json
import math
import os

import numpy as np

from ._checkpoint_read import NUMPY_FORMAT, SAFETENSORS_FLOATS, Checkpoint, TensorSource
from ._checkpoint_write import NpzWriter, SafetensorsWriter
from ._random import key_from
from .codec import decode, encode_piece
from .flags import Outcomes
from .formats import Format, fp32
from .report import ErrorAccumulator, outcomes
from .scaled import exact_products, fp32_scales

__all__ = ["PIECE", "quantize_tensors"]

#: elements per piece: a multiple of the codec's block, so per-piece error sums add up
#: exactly as one call over the whole tensor would
PIECE = 1 << 20

_SAFETENSORS_CODE = {fmt: code for code, fmt in SAFETENSORS_FLOATS.items()}
_UINT_CODE = {1: "U8", 2: "U16", 4: "U32", 8: "U64"}


# =====================================================================================
# quantising one tensor
# =====================================================================================
def _values_dtype(src: np.dtype | None, fmt: Format) -> np.dtype:
    """quantize's rule: the input's float dtype where it holds fmt, else float32, else float64."""
    for d in ((src,) if src is not None and src.kind == "f" else ()) + (np.dtype(np.float32), np.dtype(np.float64)):
        if NUMPY_FORMAT[d.newbyteorder("=")].holds(fmt):
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
            return NpzWriter(path)
        entries = []
        for t, out in plan:
            if out is None:
                entries.append((t.name, _kept_code(t), t.shape, t.nbytes))
                continue
            dt, code = out
            entries.append((t.name, code, t.shape, math.prod(t.shape) * dt.itemsize))
            if scaling == "tensor":
                entries.append((t.name + "_scale", "F32", (), 4))
        return SafetensorsWriter(path, entries, meta)
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
