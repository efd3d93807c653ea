"""What a checkpoint reader gives: one :class:`TensorSource` per tensor (name, shape,
dtype, format and how to read it, checked against the file before anything is read), a
:class:`Checkpoint` holding them, and the dtype tables the readers and writers share."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from .formats import Format, bf16, fp8_e4m3, fp8_e4m3fnuz, fp8_e5m2, fp8_e5m2fnuz, fp16, fp32, fp64

__all__ = ["SAFETENSORS_FLOATS", "SAFETENSORS_BITS", "TensorSource", "Checkpoint",
           "file_size"]

#: safetensors' float dtypes that are softfloat formats, each stored as its bit patterns
SAFETENSORS_FLOATS = {"F64": fp64, "F32": fp32, "F16": fp16, "BF16": bf16, "F8_E4M3": fp8_e4m3,
                      "F8_E5M2": fp8_e5m2, "F8_E4M3FNUZ": fp8_e4m3fnuz, "F8_E5M2FNUZ": fp8_e5m2fnuz}

#: every dtype code the safetensors package (0.8) reads, with its bits per element: F4 and
#: F6 pack elements across bytes, so a tensor's element count times these bits must fill
#: whole bytes
SAFETENSORS_BITS = {"BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8,
                    "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8,
                    "I16": 16, "U16": 16, "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32,
                    "C64": 64, "F64": 64, "I64": 64, "U64": 64}

# =====================================================================================
# what a reader gives
# =====================================================================================
@dataclass
class TensorSource:
    """One tensor of a checkpoint, not yet read: its name, shape, dtype label, and how to
    get its data (a memory map, an inflated zip member, or a view of a torch tensor).

    ``load()`` and ``raw()`` return an ndarray of ``shape`` (read-only where it is a memory
    map) and never allocate more than ``nbytes``; the sizes behind them were checked
    against the file when the checkpoint was opened.
    """

    name: str
    shape: tuple
    dtype: str  # numpy's name, the safetensors dtype code, or torch's name (float tensors)
    fmt: Format | None  # the float format of its elements; None: kept as it is
    load: object = field(repr=False)  # () -> ndarray: values, or bit patterns of fmt
    raw: object = field(repr=False, default=None)  # () -> ndarray, for kept tensors
    bits: bool = False  # load() gives bit patterns of fmt (safetensors, .pt, bf16 in .npz)
    nbytes: int = 0
    note: str = ""  # what a reader should be told about this tensor ("" when nothing)


class Checkpoint:
    """The tensors of one .npz, .safetensors or torch .pt file, in file order, and its
    metadata (str -> str: a .safetensors ``__metadata__``; a .pt file's non-tensor leaves,
    by dotted name, as JSON text)."""

    def __init__(self, kind: str, tensors: list[TensorSource], metadata: dict, closer=None):
        self.kind, self.tensors, self.metadata, self._closer = kind, tensors, metadata, closer

    def close(self):
        if self._closer is not None:
            self._closer()


def file_size(path: str, what: str) -> int:
    """The size of ``path`` in bytes; an OSError naming it as ``what`` (e.g. IN)."""
    try:
        return os.path.getsize(path)
    except OSError as exc:
        raise OSError(f"cannot read {what} {path!r}: {exc.strerror or exc}") from None
