"""Writing checkpoints: streamed .npz and .safetensors writers (header first, then each
tensor's bytes in pieces, so an output never has to be held whole) and one .npy array.

safetensors files are written from their published layout: the ``safetensors``
package's numpy API needs every output tensor in memory at once to write a file.
"""

from __future__ import annotations

import json
import zipfile

import numpy as np

__all__ = ["SafetensorsWriter", "NpzWriter", "save_npy"]


# =====================================================================================
# writing
# =====================================================================================
class SafetensorsWriter:
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


class NpzWriter:
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



def save_npy(path: str, array: np.ndarray) -> None:
    try:
        with open(path, "wb") as fh:  # exactly this path: np.save(str) would append .npy
            np.save(fh, array)
    except OSError as exc:
        raise OSError(f"cannot write OUT.npy {path!r}: {exc.strerror or exc}") from None
