"""Checkpoints in a format: round every float tensor of a .npy, .npz, .safetensors (or
torch) file into a format and write it atomically, saying per tensor what rounding did;
and load such a file back as values, whatever format its bits are in.

What ``softfloat quantize`` does on the command line, from Python.  Formats with no dtype
in the output's library (FP6, FP4, TF32, custom layouts such as e6m9; all formats with
``bits=True``) are stored as unsigned-integer bit patterns, and the file says which
tensors those are and in which format, so :func:`load_checkpoint` can decode them.
"""

from __future__ import annotations

import json
import os

import numpy as np

from . import _checkpoint, _validate
from ._checkpoint_read import file_kind, open_tensors
from ._read_torch import open_pt
from ._options import resolve_attributes
from .codec import decode
from .formats import as_format

__all__ = ["quantize_checkpoint", "load_checkpoint"]


def quantize_checkpoint(src, dst, fmt, *, rounding=None, saturate=None, subnormals=None, tininess=None,
                        attributes=None, rng=None, scaling="none", bits=False, progress=None) -> list[dict]:
    """Round every float tensor of the file ``src`` into ``fmt`` and write ``dst``; return
    one row per tensor saying what rounding did (the rows ``softfloat quantize`` prints).

    Why a file function: a model checkpoint is larger than one array, and a failure
    halfway (a full disk, Ctrl-C) must not leave a truncated file that looks like a
    checkpoint.  Tensors are processed one by one in pieces of 2**20 elements, and
    ``dst`` is written to a temporary file beside it and renamed over it only when
    complete and on disk.

    Preconditions, all checked before anything is read:

    - ``dst`` is not ``src`` (nor a symlink or hard link to it);
    - ``src`` is a .npy array, an .npz archive or a .safetensors file (by its first
      bytes); ``dst``'s extension names the kind written: .npy for a .npy ``src`` (an
      ``dst`` without extension is a .npy too), .npz, .safetensors, .pt or .pth for a
      checkpoint;
    - ``scaling="tensor"`` only into a checkpoint, and only into formats of 8 bits or
      fewer (a per-tensor scale is how FP8/FP6/FP4 are stored; bf16/fp16 casts take none);
    - writing .pt needs torch (``pip install "softfloat-emu[torch]"``).

    Parameters
    ----------
    src, dst : str or os.PathLike
        The input file and the output file.  Error messages call them src and dst (the
        command line's IN and OUT) and name their paths.
    fmt : Format or str
        The target format, e.g. "bf16", "e4m3", "e6m9".
    rounding, saturate, subnormals, tininess, attributes, rng
        As for :func:`softfloat.encode` (defaults "nearest_even", False, True, the
        platform's tininess; ``attributes`` holds them all as one
        :class:`~softfloat.RoundingAttributes`, and a keyword that is given wins over it).
        With ``rounding="stochastic"``, ``rng`` (an int seed >= 0 or a Generator) is one
        stream for the whole file, tensors in file order; ``rng=None`` draws fresh
        entropy; the deterministic modes ignore ``rng``.
    scaling : {"none", "tensor"}
        "tensor": each tensor times ``scale = fp32(max / amax)`` (Transformer Engine's
        recipe), rounded once, with the scale stored beside it as ``NAME_scale``.
    bits : bool
        Store bit patterns (unsigned ints) even where the output has a dtype for ``fmt``.
    progress : callable, optional
        Called as ``progress(name, nbytes, total_bytes)`` after each tensor is written.

    Returns
    -------
    list of dict
        One per tensor, in file order: ``name``, ``shape``, ``dtype`` and ``action``
        ("quantized" or "kept": integer and bool tensors are copied unchanged), and for a
        quantised tensor ``count``, the shares ``became_zero``, ``became_subnormal`` and
        ``overflowed``, ``max_rel_error``, ``mean_rel_error``, ``sqnr_db`` (over the
        finite elements only) and ``excluded`` (elements left out of those: infinite or
        NaN input or result), ``scale`` with scaling; ``note`` where the reader had one.

    Notes
    -----
    .safetensors: F16, BF16, F8_E4M3, F8_E5M2, F8_E4M3FNUZ, F8_E5M2FNUZ, F32, F64 bit
    patterns, other formats (or ``bits=True``) as U8/U16/U32/U64 listed in the metadata key
    ``softfloat.bit_patterns`` with the format in ``softfloat.format``.  .npz: values in
    float32/float64 (quantize's dtype rule), or with ``bits=True`` unsigned ints plus a
    member ``__softfloat__`` (a str array holding that metadata as JSON).  .pt/.pth: a
    flat ``{name: tensor}`` dict for ``torch.load``: the torch dtype where one exists
    (bf16, fp16, fp32, fp64, fp8_e4m3 as float8_e4m3fn, fp8_e5m2, the fnuz pair), bit
    patterns otherwise as torch.uint8/int16/int32/int64 (same bits), plus the entry
    ``"__softfloat__"``: a dict of that metadata.

    Examples
    --------
    >>> import os, tempfile, numpy as np, softfloat as sf
    >>> d = tempfile.mkdtemp()
    >>> src, dst = os.path.join(d, "w.npz"), os.path.join(d, "w_e4m3.safetensors")
    >>> np.savez(src, w=np.array([0.1, 1000.0, -3.3], np.float32), step=np.array([7]))
    >>> rows = sf.quantize_checkpoint(src, dst, "e4m3", saturate=True)
    >>> [(r["name"], r["action"]) for r in rows], rows[0]["overflowed"]
    ([('w', 'quantized'), ('step', 'kept')], 0.3333333333333333)
    >>> sf.load_checkpoint(dst)["w"].tolist()
    [0.1015625, 448.0, -3.25]
    """
    fmt = as_format(fmt, "fmt")
    _validate.rng_argument(rng)
    attrs, _ = resolve_attributes(attributes, rounding=rounding, tininess=tininess, subnormals=subnormals,
                                  saturate=saturate, rng=rng)
    scaling = _validate.one_of("scaling", scaling, ("none", "tensor"))
    src = _validate.file_path("src", src, "the checkpoint to read")
    dst = _validate.file_path("dst", dst, "the file to write")
    bits = _validate.boolean("bits", bits)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a callable or None; got {_validate.describe(progress)}")
    spec = _checkpoint.QuantizeSpec(fmt, attrs, rng, scaling, bits)
    rows, _ = _checkpoint.quantize_file(src, dst, spec, progress=progress, words=_checkpoint.PYTHON_WORDS)
    return rows


def load_checkpoint(path) -> dict[str, np.ndarray]:
    """Load a file written by :func:`quantize_checkpoint` (or ``softfloat quantize``) back
    as values: ``{name: ndarray}``, in file order.

    Why: a checkpoint in FP6, FP4, TF32 or a custom layout has no dtype in safetensors,
    numpy or torch, so its tensors are stored as bit patterns; this decodes them (exactly)
    from the format the file names, so the caller never handles bits.

    - float tensors of fp16, fp32, fp64 come back in that numpy dtype; every other format
      (bf16, FP8, ...; bit patterns named in ``softfloat.bit_patterns``) as float32
      where float32 holds it exactly, else float64;
    - integer and bool tensors, and ``NAME_scale`` tensors, come back as they are
      (values written with ``scaling="tensor"`` are ``stored / scale``: divide by the
      scale to compare with the original);
    - a .npy file is one array, named by the file's stem; the format of bit patterns in
      a .npy (``--bits``) is not recorded, so they come back as the integers they are.

    Parameters
    ----------
    path : str or os.PathLike
        A .npy, .npz, .safetensors, or (with torch installed) .pt/.pth file.

    Returns
    -------
    dict of str to ndarray

    Examples
    --------
    >>> import os, tempfile, numpy as np, softfloat as sf
    >>> d = tempfile.mkdtemp()
    >>> src, dst = os.path.join(d, "w.npz"), os.path.join(d, "w_fp6.safetensors")
    >>> np.savez(src, w=np.array([0.3, -1.7, 100.0], np.float32))
    >>> _ = sf.quantize_checkpoint(src, dst, "fp6_e2m3", saturate=True)
    >>> w = sf.load_checkpoint(dst)["w"]
    >>> w.dtype, w.tolist()
    (dtype('float32'), [0.25, -1.75, 7.5])
    """
    path = _validate.file_path("path", path, "the checkpoint to load")
    if os.path.splitext(path)[1].lower() in (".pt", ".pth"):
        return _load_pt(path)
    kind = file_kind(path, "path")
    if kind == "npy":
        return {os.path.splitext(os.path.basename(path))[0]: np.load(path, allow_pickle=False)}
    if kind == "npz":
        return _load_npz(path)
    if kind == "pt":
        return _load_pt(path)
    return _load_safetensors(path)


def _bit_patterns(meta: dict, path: str):
    """(format, names) of the tensors a file stores as bit patterns."""
    names = meta.get("softfloat.bit_patterns")
    if not names:
        return None, frozenset()
    if "softfloat.format" not in meta:
        raise ValueError(f"{path!r} lists bit patterns (softfloat.bit_patterns) but names no "
                         "format (softfloat.format); it was not written by softfloat")
    return as_format(meta["softfloat.format"], "softfloat.format"), frozenset(json.loads(names))


def _decoded(bits: np.ndarray, fmt) -> np.ndarray:
    return np.asarray(decode(bits, fmt, fmt.value_dtype(fmt.native_dtype)))


def _load_npz(path: str) -> dict:
    out = {}
    with np.load(path, allow_pickle=False) as archive:
        meta = {}
        if _checkpoint.METADATA_ENTRY in archive.files:
            meta = json.loads(str(archive[_checkpoint.METADATA_ENTRY][()]))
        fmt, names = _bit_patterns(meta, path)
        for name in archive.files:
            if name == _checkpoint.METADATA_ENTRY:
                continue
            arr = archive[name]
            out[name] = _decoded(arr, fmt) if name in names else arr
    return out


def _load_safetensors(path: str) -> dict:
    checkpoint = open_tensors(path)
    try:
        fmt, names = _bit_patterns(checkpoint.metadata, path)
        out = {}
        for t in checkpoint.tensors:
            if t.fmt is not None:  # a float code: its bit patterns
                out[t.name] = _decoded(np.asarray(t.load()), t.fmt)
                continue
            code = _checkpoint._CODE_NUMPY.get(t.dtype)
            if code is None:
                raise ValueError(f"tensor {t.name!r} of {path!r} is {t.dtype}, which numpy has "
                                 "no type for")
            arr = np.array(np.asarray(t.raw()).view(np.dtype(code).newbyteorder("<")).reshape(t.shape))
            out[t.name] = _decoded(arr, fmt) if t.name in names else arr.astype(arr.dtype.newbyteorder("="))
        return out
    finally:
        checkpoint.close()


def _load_pt(path: str) -> dict:
    """A torch file through the checkpoint reader (softfloat._read_torch: torch's safe
    loader, nested names dotted); non-tensor values other than softfloat's metadata entry
    are not returned."""
    try:
        import torch  # noqa: F401
    except ImportError:
        raise ImportError(f"reading a .pt/.pth file needs torch, which is not installed: "
                          f"{_validate.install_hint('torch')}") from None
    checkpoint = open_pt(path)
    try:
        fmt, names = _bit_patterns(_pt_metadata(checkpoint.metadata), path)
        out = {}
        for t in checkpoint.tensors:
            # copies: the reader's arrays are views of torch's memory map of the file
            arr = np.array(t.load(), order="C")
            if t.name in names:
                out[t.name] = _decoded(arr.view(np.dtype(f"u{arr.itemsize}")), fmt)
            elif t.fmt is not None:  # a float dtype: its bit patterns
                out[t.name] = _decoded(arr, t.fmt)
            else:
                out[t.name] = arr
        return out
    finally:
        checkpoint.close()


def _pt_metadata(metadata: dict) -> dict:
    """softfloat's metadata entry of a .pt file (the reader gives it as JSON text), or {}."""
    text = metadata.get(_checkpoint.METADATA_ENTRY)
    try:
        meta = json.loads(text) if text is not None else {}
    except ValueError:
        return {}
    return meta if isinstance(meta, dict) else {}
