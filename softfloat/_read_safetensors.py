"""safetensors files read from their published layout (8-byte little-endian header length,
a JSON header of ``{name: {dtype, shape, data_offsets}}`` and ``__metadata__``, then the
tensors' bytes back to back), the whole header validated before any byte of data is
mapped: the ``safetensors`` package cannot load FP8 tensors into numpy.  The tests check
that whatever is read here, that package reads too, and the same."""

from __future__ import annotations

import json
import math

import numpy as np

from ._checkpoint_source import SAFETENSORS_BITS, SAFETENSORS_FLOATS, Checkpoint, TensorSource, file_size

__all__ = ["open_safetensors"]

_MAX_HEADER = 100_000_000  # the safetensors package's own limit
_USIZE = 1 << 64  # safetensors' shapes, offsets and byte counts are Rust usize (64-bit)


class _Literal:
    """A JSON number or constant that no safetensors field can hold (a float, a negative
    or oversized integer, NaN, Infinity), kept as its text for the error message."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __repr__(self):
        return self.text


def _usize_or_literal(text: str):
    return int(text) if text[0] != "-" and len(text) <= 20 else _Literal(text)


class _Duplicate(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _unique_pairs(pairs):
    """json's object_pairs_hook: a dict, refusing a key given twice (json would keep the
    last silently, and lose a tensor)."""
    out = {}
    for key, value in pairs:
        if key in out:
            raise _Duplicate(key)
        out[key] = value
    return out


def _show(value) -> str:
    """A header value as JSON spells it (strings in double quotes), cut short."""
    def spell(v, depth):
        if isinstance(v, _Literal):
            return v.text
        if isinstance(v, (list, dict)) and depth > 8:
            return "..."
        if isinstance(v, list):
            more = ", ..." if len(v) > 20 else ""
            return "[" + ", ".join(spell(x, depth + 1) for x in v[:20]) + more + "]"
        if isinstance(v, dict):
            items = list(v.items())[:20]
            return ("{" + ", ".join(f"{json.dumps(k)}: {spell(x, depth + 1)}" for k, x in items)
                    + (", ..." if len(v) > 20 else "") + "}")
        return json.dumps(v)  # str, int, bool, None
    text = spell(value, 0)
    return text if len(text) <= 80 else text[:77] + "..."


def open_safetensors(path: str) -> Checkpoint:
    """The tensors of a .safetensors file, each a read-only memory map, after the whole
    header has been checked the way the ``safetensors`` package checks it (and a little
    more strictly): see :func:`_safetensors_entries`."""
    size = file_size(path, "the .safetensors file")
    bad = f"{path!r} is not a valid .safetensors file"
    with open(path, "rb") as fh:
        n = int.from_bytes(fh.read(8), "little")
        if 8 + n > size:
            raise ValueError(f"{bad}: its header length {n} exceeds the file ({size} bytes)")
        if n > _MAX_HEADER:
            raise ValueError(f"{bad}: its header length {n} exceeds safetensors' limit of "
                             f"{_MAX_HEADER} bytes")
        text = fh.read(n)
    metadata, entries = _safetensors_entries(text, size - 8 - n, bad)
    start = 8 + n
    tensors = []
    for name, code, shape, begin, end in entries:
        offset, nbytes = start + begin, end - begin
        raw = (lambda o=offset, k=nbytes: np.memmap(path, np.uint8, "r", o, (k,)) if k
               else np.empty(0, np.uint8))
        fmt = SAFETENSORS_FLOATS.get(code)
        load = None
        if fmt is not None:
            dt = fmt.storage_dtype.newbyteorder("<")  # safetensors is little-endian
            load = (lambda o=offset, d=dt, s=shape: np.memmap(path, d, "r", o, s)
                    if math.prod(s) else np.empty(s, d))
        tensors.append(TensorSource(name, shape, code, fmt, load=load, raw=raw, bits=True,
                                    nbytes=nbytes))
    return Checkpoint("safetensors", tensors, metadata)


def _safetensors_entries(text: bytes, data_size: int, bad: str):
    """(metadata, [(name, code, shape, begin, end)] in file order) of a safetensors header,
    every field checked before any data is touched.

    What the ``safetensors`` package (0.8) requires, found by experiment and checked by
    the tests: UTF-8 JSON (no NaN, no lone surrogates, no key twice in one object); a
    ``__metadata__`` of strings to strings (or null); for each tensor a known dtype code, a
    shape of integers in [0, 2**64) whose element count (multiplied left to right) and
    bit count stay below 2**64 and fill whole bytes, and ``data_offsets`` [begin, end]
    spanning exactly that many bytes; the tensors, sorted by offsets, back to back from
    byte 0 of the data to the file's end (no hole, no overlap, no trailing bytes).
    Refused here though the package accepts them: a tensor field other than dtype, shape
    and data_offsets, and a ``__metadata__`` key given twice.
    """
    try:
        header = json.loads(text.decode("utf-8"), object_pairs_hook=_unique_pairs,
                            parse_int=_usize_or_literal, parse_float=_Literal,
                            parse_constant=_Literal)
    except _Duplicate as dup:
        raise ValueError(f"{bad}: its header gives the key {dup.key!r} twice in one object "
                         "(JSON readers would keep only the last)") from None
    except RecursionError:
        raise ValueError(f"{bad}: its header nests far deeper than dtype, shape and "
                         "data_offsets ever do") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{bad}: its header is not JSON ({exc})") from None
    if not isinstance(header, dict):
        raise ValueError(f"{bad}: its header is {_show(header)}, not a JSON object")
    metadata = header.pop("__metadata__", None)
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise ValueError(f"{bad}: its __metadata__ is {_show(metadata)}; it must map strings "
                         "to strings")
    for text_ in [*metadata, *metadata.values(), *header]:
        if not _utf8(text_):
            raise ValueError(f"{bad}: its header holds the string {text_!r}, which is not "
                             "valid Unicode (a lone surrogate escape)")
    entries = [_safetensors_entry(name, info, bad) for name, info in header.items()]
    entries.sort(key=lambda e: (e[3], e[4]))
    pos, previous = 0, None
    for name, code, shape, begin, end in entries:
        if end > data_size:
            raise ValueError(f"{bad}: tensor {name!r} lies outside the file (data_offsets "
                             f"{begin}..{end}, the data holds {data_size} bytes)")
        if begin < pos:
            raise ValueError(f"{bad}: tensor {name!r} (data_offsets {begin}..{end}) overlaps "
                             f"tensor {previous!r}, which ends at {pos}")
        if begin > pos:
            raise ValueError(f"{bad}: {begin - pos} bytes before tensor {name!r} (data_offsets "
                             f"{begin}..{end}) belong to no tensor; safetensors stores tensors "
                             "back to back from the start of the data")
        pos, previous = end, name
    if pos != data_size:
        raise ValueError(f"{bad}: its last {data_size - pos} bytes belong to no tensor (the "
                         f"tensors end at byte {pos} of {data_size} bytes of data)")
    return metadata, entries


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _safetensors_entry(name: str, info, bad: str):
    """(name, code, shape, begin, end) of one header entry, every field checked."""
    where = f"{bad}: tensor {name!r}"
    if not isinstance(info, dict):
        raise ValueError(f"{where} is described by {_show(info)}; each tensor needs a JSON "
                         "object of dtype, shape and data_offsets")
    fields = {"dtype", "shape", "data_offsets"}
    if fields - info.keys():
        raise ValueError(f"{where} has no {', '.join(sorted(fields - info.keys()))}; each "
                         "tensor needs dtype, shape and data_offsets")
    if info.keys() - fields:
        raise ValueError(f"{where} has fields {sorted(info.keys() - fields)} besides dtype, "
                         "shape and data_offsets, which safetensors does not define")
    code, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
    if not isinstance(code, str) or code not in SAFETENSORS_BITS:
        raise ValueError(f"{where} has dtype {_show(code)}, which is no safetensors dtype "
                         f"({', '.join(SAFETENSORS_BITS)})")
    if not isinstance(shape, list) or not all(_is_usize(d) for d in shape):
        raise ValueError(f"{where} has shape {_show(shape)}; shapes are lists of non-negative "
                         "integers")
    if not isinstance(offsets, list) or len(offsets) != 2 or not all(_is_usize(o) for o in offsets):
        raise ValueError(f"{where} has data_offsets {_show(offsets)}; data_offsets are two "
                         "non-negative integers [begin, end]")
    begin, end = offsets
    if end < begin:
        raise ValueError(f"{where} has data_offsets {_show(offsets)}, which end before they begin")
    count = 1
    for d in shape:  # as safetensors multiplies: left to right, refusing any overflow
        count *= d
        if count >= _USIZE:
            raise ValueError(f"{where} has shape {_show(shape)}, whose element count "
                             "overflows 64 bits")
    nbits = count * SAFETENSORS_BITS[code]
    if nbits >= _USIZE or nbits % 8:
        raise ValueError(f"{where} of {code} {_show(shape)} holds {nbits} bits, which "
                         + ("overflow 64 bits" if nbits >= _USIZE else "do not fill whole bytes"))
    if end - begin != nbits // 8:
        raise ValueError(f"{where} of {code} {_show(shape)} needs {nbits // 8} bytes, but its "
                         f"data_offsets {begin}..{end} span {end - begin}")
    return name, code, tuple(shape), begin, end


def _is_usize(value) -> bool:
    return type(value) is int and 0 <= value < _USIZE
