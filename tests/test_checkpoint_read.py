"""Reading hostile and awkward checkpoints: every claim a file makes is checked against the
file before anything is allocated, and every refusal is one line naming the file and the
tensor.

Files are written here byte by byte (safetensors headers by hand, zip members through
``zipfile`` and patched sizes), never by softfloat.  Oracles: the ``safetensors``
package (whatever softfloat reads, it must read too, and the same bytes), numpy's own
loaders, ml_dtypes' bfloat16, and torch's own views of the tensors it saved.  Memory is
bounded with ``tracemalloc`` (bytes, never seconds).
"""

from __future__ import annotations

import json
import os
import random
import struct
import sys
import tracemalloc
import zipfile

import ml_dtypes
import numpy as np
import pytest

from tests.conftest import import_torch

import softfloat as sf
from softfloat import _checkpoint_read as cr
from softfloat.cli import main

safetensors_numpy = pytest.importorskip("safetensors.numpy", reason="safetensors is in the test extra")
from safetensors import safe_open  # noqa: E402

#: every dtype code the safetensors package (0.8) reads, and its bits per element (from its
#: documentation; written out here, not taken from softfloat)
BITS = {"BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "F8_E4M3FNUZ": 8,
        "F8_E5M2FNUZ": 8, "I16": 16, "U16": 16, "F16": 16, "BF16": 16, "I32": 32, "U32": 32,
        "F32": 32, "I64": 64, "U64": 64, "F64": 64, "C64": 64, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6}

#: peak bytes a refusal may allocate: the headers and messages, nothing the file claims
SMALL_PEAK = 4 << 20
TERABYTE = 10**12


# =====================================================================================
# helpers
# =====================================================================================
def st_bytes(header, data: bytes = b"") -> bytes:
    """A .safetensors file: 8-byte little-endian header length | header | data."""
    if isinstance(header, dict):
        header = json.dumps(header)
    if isinstance(header, str):
        header = header.encode("utf-8")
    return len(header).to_bytes(8, "little") + header + data


def T(code="F32", shape=(1,), offsets=(0, 4)):  # noqa: N802 -- a header entry, as JSON spells it
    return {"dtype": code, "shape": list(shape), "data_offsets": list(offsets)}


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def snapshot(path):
    st = os.stat(path)
    return path.read_bytes(), st.st_mtime_ns


def refuses_on_the_command_line(capsys, src, tmp_path, *words, out_name="o.safetensors"):
    """quantize exits 2 with one 'softfloat: error:' line holding words; IN is untouched
    and no OUT is left."""
    before = snapshot(src)
    dst = tmp_path / out_name
    code, out, err = run(capsys, "quantize", src, dst, "-f", "e4m3")
    assert code == 2 and out == "", err
    assert err.startswith("softfloat: error: ") and err.count("\n") == 1, err
    for w in words:
        assert w in err, (w, err)
    assert snapshot(src) == before
    assert not dst.exists()
    return err


def peak_of(fn):
    """(result or exception, peak bytes traced while fn ran)."""
    tracemalloc.start()
    try:
        try:
            result = fn()
        except Exception as exc:  # noqa: BLE001 -- returned for the caller to check
            result = exc
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


# =====================================================================================
# .safetensors: malformed headers, each refused with the file and tensor named
# =====================================================================================
GOOD_ENTRY = '"dtype":"F32","shape":[1],"data_offsets":[0,4]'

HEADER_CASES = {
    # parsing: the text is no JSON safetensors reads
    "deep nesting": ('{"w":' + "[" * 100_000 + "]" * 100_000 + "}", b"", "nests far deeper"),
    "Infinity in shape": ('{"w":{"dtype":"F32","shape":[Infinity],"data_offsets":[0,4]}}',
                          bytes(4), "tensor 'w' has shape [Infinity]"),
    "NaN in offsets": ('{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,NaN]}}', bytes(4),
                       "tensor 'w' has data_offsets [0, NaN]"),
    "1e400 in shape": ('{"w":{"dtype":"F32","shape":[1e400],"data_offsets":[0,4]}}', bytes(4),
                       "tensor 'w' has shape [1e400]"),
    "float in shape": ('{"w":{"dtype":"F32","shape":[1.0],"data_offsets":[0,4]}}', bytes(4),
                       "has shape [1.0]; shapes are lists of non-negative integers"),
    "string in shape": ('{"w":{"dtype":"F32","shape":[2,"a"],"data_offsets":[0,8]}}', bytes(8),
                        "tensor 'w' has shape [2, \"a\"]; shapes are lists of non-negative integers"),
    "bool in shape": ('{"w":{"dtype":"F32","shape":[true],"data_offsets":[0,4]}}', bytes(4),
                      "has shape [true]"),
    "negative shape": ('{"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}', bytes(4),
                       "has shape [-1]"),
    "negative zero shape": ('{"w":{"dtype":"F32","shape":[-0],"data_offsets":[0,0]}}', b"",
                            "has shape [-0]"),
    "2**64 in shape": ('{"w":{"dtype":"F32","shape":[18446744073709551616],"data_offsets":[0,4]}}',
                       bytes(4), "has shape [18446744073709551616]"),
    "float offsets": ('{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4.0]}}', bytes(4),
                      "tensor 'w' has data_offsets [0, 4.0]"),
    "negative offset": ('{"w":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}}', bytes(4),
                        "has data_offsets [-4, 0]"),
    "three offsets": ('{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4,4]}}', bytes(4),
                      "data_offsets are two non-negative integers"),
    "string offset": ('{"w":{"dtype":"F32","shape":[1],"data_offsets":["0",4]}}', bytes(4),
                      "has data_offsets [\"0\", 4]"),
    "duplicate tensor": ('{"w":{' + GOOD_ENTRY + '},"w":{"dtype":"F32","shape":[1],'
                         '"data_offsets":[4,8]}}', bytes(8), "gives the key 'w' twice"),
    "duplicate field": ('{"w":{"dtype":"F32",' + GOOD_ENTRY + '}}', bytes(4),
                        "gives the key 'dtype' twice"),
    "duplicate metadata": ('{"__metadata__":{"a":"1"},"__metadata__":{},"w":{' + GOOD_ENTRY + '}}',
                           bytes(4), "gives the key '__metadata__' twice"),
    "lone surrogate name": ('{"w\\ud800":{' + GOOD_ENTRY + '}}', bytes(4), "not valid Unicode"),
    "not utf-8": (b'{"w\xff":{' + GOOD_ENTRY.encode() + b'}}', bytes(4), "not JSON"),
    "trailing garbage": ('{"w":{' + GOOD_ENTRY + '}}xx', bytes(4), "not JSON"),
    # layout: the byte ranges do not tile the data
    "overlap": ({"a": T(), "b": T(offsets=(0, 4))}, bytes(4), "overlaps tensor"),
    "out of range": ({"w": T(shape=(4,), offsets=(0, 16))}, bytes(8),
                     "tensor 'w' lies outside the file (data_offsets 0..16, the data holds 8 bytes)"),
    "hole at the start": ({"w": T(offsets=(4, 8))}, bytes(8),
                          "4 bytes before tensor 'w' (data_offsets 4..8) belong to no tensor"),
    "hole between": ({"a": T(), "b": T(offsets=(8, 12))}, bytes(12),
                     "4 bytes before tensor 'b'"),
    "trailing bytes": ({"w": T()}, bytes(8), "its last 4 bytes belong to no tensor"),
    "end before begin": ({"w": T(shape=(0,), offsets=(4, 0))}, bytes(4), "end before they begin"),
    # each tensor's own description
    "unknown dtype": ({"w": T(code="F7")}, bytes(4), "tensor 'w' has dtype \"F7\", which is no "
                      "safetensors dtype"),
    "lower-case dtype": ({"w": T(code="f32")}, bytes(4), "has dtype \"f32\""),
    "dtype not a string": ({"w": T(code=4)}, bytes(4), "has dtype 4"),
    "byte count": ({"w": T(shape=(2,))}, bytes(4),
                   "tensor 'w' of F32 [2] needs 8 bytes, but its data_offsets 0..4 span 4"),
    "element count overflows": ({"w": T(shape=(2**40, 2**40, 0), offsets=(0, 0))}, b"",
                                "whose element count overflows 64 bits"),
    "bit count overflows": ({"w": T(code="F64", shape=(2**62,), offsets=(0, 0))}, b"",
                            "overflow 64 bits"),
    "sub-byte": ({"w": T(code="F4", shape=(3,), offsets=(0, 2))}, bytes(2),
                 "holds 12 bits, which do not fill whole bytes"),
    "missing field": ({"w": {"dtype": "F32", "shape": [1]}}, bytes(4), "tensor 'w' has no data_offsets"),
    "extra field": ({"w": dict(T(), extra=[[1]])}, bytes(4), "tensor 'w' has fields ['extra']"),
    "entry not an object": ({"w": 3}, b"", "tensor 'w' is described by 3"),
    # metadata
    "metadata a list": ({"__metadata__": [1], "w": T()}, bytes(4), "its __metadata__ is [1]"),
    "metadata int value": ({"__metadata__": {"k": 1}, "w": T()}, bytes(4),
                           "its __metadata__ is {\"k\": 1}; it must map strings to strings"),
    "metadata nested": ({"__metadata__": {"k": {"x": "y"}}, "w": T()}, bytes(4), "must map strings"),
    "metadata a string": ({"__metadata__": "k", "w": T()}, bytes(4), "its __metadata__ is \"k\""),
}


@pytest.mark.parametrize("case", sorted(HEADER_CASES))
def test_malformed_safetensors_headers_are_refused_in_one_line(case, tmp_path):
    header, data, words = HEADER_CASES[case]
    path = tmp_path / "model.safetensors"
    path.write_bytes(st_bytes(header, data))
    with pytest.raises(ValueError) as info:
        cr.open_tensors(str(path))
    message = str(info.value)
    assert message.startswith(f"{str(path)!r} is not a valid .safetensors file: "), message
    assert words in message and "\n" not in message, message
    if case not in ("extra field", "duplicate metadata"):  # stricter than the package here
        with pytest.raises(Exception):  # the safetensors package refuses each of them too
            safe_open(str(path), framework="numpy")


def test_header_length_beyond_the_file(tmp_path):
    path = tmp_path / "cut.safetensors"
    path.write_bytes((TERABYTE).to_bytes(8, "little") + b'{"w":{' + GOOD_ENTRY.encode() + b"}}")
    result, peak = peak_of(lambda: cr.open_tensors(str(path)))
    assert isinstance(result, ValueError) and "its header length 1000000000000 exceeds the file" in str(result)
    assert peak < SMALL_PEAK


def test_a_header_claiming_terabytes_allocates_nothing(tmp_path):
    path = tmp_path / "huge.safetensors"
    path.write_bytes(st_bytes({"w": T(shape=(TERABYTE,), offsets=(0, 4 * TERABYTE))}, bytes(4)))
    result, peak = peak_of(lambda: cr.open_tensors(str(path)))
    assert isinstance(result, ValueError) and "lies outside the file" in str(result)
    assert peak < SMALL_PEAK


def test_malformed_safetensors_on_the_command_line(capsys, tmp_path):
    for i, case in enumerate(["deep nesting", "duplicate tensor", "hole between", "string in shape",
                              "Infinity in shape", "metadata int value"]):
        header, data, words = HEADER_CASES[case]
        src = tmp_path / f"m{i}.safetensors"
        src.write_bytes(st_bytes(header, data))
        refuses_on_the_command_line(capsys, src, tmp_path, str(src), words)


@pytest.mark.parametrize("code", sorted(BITS))
def test_every_dtype_code_byte_count(code, tmp_path):
    """For each code: the right span reads in both readers (same bytes); one byte more or
    less is refused by both."""
    bits = BITS[code]
    n = 8  # elements: whole bytes for every code (F4: 4 bytes, F6: 6 bytes)
    span = n * bits // 8
    data = bytes(range(1, span + 1))
    good = tmp_path / "good.safetensors"
    good.write_bytes(st_bytes({"w": T(code, (2, 4), (0, span))}, data))
    ckpt = cr.open_tensors(str(good))
    (t,) = ckpt.tensors
    assert (t.name, t.dtype, t.shape, t.nbytes) == ("w", code, (2, 4), span)
    assert np.asarray(t.raw()).tobytes() == data
    with safe_open(str(good), framework="numpy") as f:
        assert f.get_slice("w").get_dtype() == code and f.get_slice("w").get_shape() == [2, 4]
    for wrong in (span - 1, span + 1):
        bad = tmp_path / f"bad{wrong}.safetensors"
        bad.write_bytes(st_bytes({"w": T(code, (2, 4), (0, wrong))}, bytes(wrong)))
        with pytest.raises(ValueError, match=f"tensor 'w' of {code} \\[2, 4\\] needs {span} bytes"):
            cr.open_tensors(str(bad))
        with pytest.raises(Exception):
            safe_open(str(bad), framework="numpy")


def test_valid_edge_layouts_read_as_the_package_reads_them(tmp_path):
    """Zero-size tensors anywhere, scalars, offsets listed out of order, an empty name,
    null metadata, no tensors at all: all valid, read the same by both."""
    cases = [
        ({"a": T(shape=(0,), offsets=(0, 0)), "b": T()}, bytes(4)),
        ({"b": T(), "a": T(shape=(0, 3), offsets=(4, 4))}, bytes(4)),
        ({"b": T(offsets=(4, 8)), "a": T(shape=())}, bytes(8)),
        ({"": T(), "__metadata__": None}, bytes(4)),
        ({"w": T(shape=(0, 2**40, 2**40), offsets=(0, 0))}, b""),
        ({}, b""),
        ({"__metadata__": {"format": "pt"}}, b""),
    ]
    for i, (header, data) in enumerate(cases):
        path = tmp_path / f"e{i}.safetensors"
        path.write_bytes(st_bytes(header, data))
        assert_same_as_the_package(path)


# =====================================================================================
# .safetensors: the cross-check on generated headers
# =====================================================================================
def read_with_the_package(path):
    """{name: (code, shape, bytes)} and metadata by the safetensors package: the bytes through
    its torch loader (its numpy loader has no FP8), None without torch."""
    try:
        import torch
    except ImportError:
        torch = None
    out = {}
    with safe_open(str(path), framework="pt" if torch else "numpy") as f:
        meta = f.metadata() or {}
        for k in f.keys():
            s = f.get_slice(k)
            code, shape = s.get_dtype(), s.get_shape()
            data = None
            if torch and BITS[code] % 8 == 0:  # F4/F6: torch packs them its own way
                t = f.get_tensor(k).reshape(-1)
                data = t.view(torch.uint8).numpy().tobytes() if t.numel() else b""
            out[k] = (code, shape, data)
    return out, meta


def read_with_softfloat(path):
    ckpt = cr.open_tensors(str(path))
    return {t.name: (t.dtype, list(t.shape), np.asarray(t.raw()).tobytes()) for t in ckpt.tensors}, ckpt.metadata


def assert_same_as_the_package(path):
    ours, our_meta = read_with_softfloat(path)
    theirs, their_meta = read_with_the_package(path)
    assert our_meta == their_meta
    assert ours.keys() == theirs.keys()
    for k, (code, shape, data) in theirs.items():
        assert ours[k][:2] == (code, shape)
        if data is not None:
            assert ours[k][2] == data


CODES = sorted(BITS)
ODD_NUMBERS = ["-1", "-0", "1.5", "1e400", "Infinity", "NaN", '"2"', "true", "null",
               "18446744073709551616", "18446744073709551615", "4294967296"]


def generated_file(rng: random.Random) -> tuple[bytes, str]:
    """A safetensors file from a valid layout with up to three random mutations, as raw
    bytes, and what was done (for the failure message)."""
    tensors = []
    for i in range(rng.randint(0, 4)):
        code = rng.choice(CODES)
        shape = [rng.choice([0, 1, 2, 3, 4]) for _ in range(rng.randint(0, 3))]
        tensors.append([f"t{i}", code, shape])
    entries, offset = [], 0
    for name, code, shape in tensors:
        nbits = int(np.prod(shape, dtype=np.int64)) * BITS[code]
        nbytes = -(-nbits // 8)
        entries.append([name, {"dtype": code, "shape": shape, "data_offsets": [offset, offset + nbytes]}])
        offset += nbytes
    rng.shuffle(entries)
    data_len = offset
    done = []
    meta = None
    for _ in range(rng.randint(0, 3)):
        kind = rng.choice(["shape", "offset", "dtype", "data", "dup", "meta", "extra", "code-bits"])
        if kind == "data":
            data_len = max(0, data_len + rng.choice([-2, -1, 1, 3]))
        elif kind == "meta":
            meta = rng.choice(['{"a":"b"}', "null", '{"a":1}', "[]", '{"a":{"b":"c"}}', '"x"', "{}"])
        elif not entries:
            continue
        else:
            e = rng.choice(entries)[1]
            if kind == "shape":
                if isinstance(e["shape"], list) and e["shape"]:
                    e["shape"] = list(e["shape"])
                    e["shape"][rng.randrange(len(e["shape"]))] = rng.choice(ODD_NUMBERS + [5, 7])
                else:
                    e["shape"] = rng.choice([[1], [0], 3, '"a"', "{}"])
            elif kind == "offset":
                j = rng.randrange(2)
                e["data_offsets"] = list(e["data_offsets"])
                e["data_offsets"][j] = rng.choice(ODD_NUMBERS + [e["data_offsets"][j] + rng.choice([-1, 1, 8])])
            elif kind == "dtype":
                e["dtype"] = rng.choice(CODES + ["F7", "f32", "3", "BF8"])
            elif kind == "dup":
                entries.append([rng.choice(entries)[0], dict(e)])
            elif kind == "extra":
                e["extra"] = 1
            elif kind == "code-bits":
                e["dtype"] = rng.choice(["F4", "F6_E2M3", "BOOL", "F64"])
        done.append(kind)
    parts = [] if meta is None else [f'"__metadata__":{meta}']
    for name, e in entries:
        fields = []
        for key, value in e.items():
            if key == "dtype" and value != "3":
                fields.append(f'"dtype":"{value}"')
            elif isinstance(value, list):
                fields.append(f'"{key}":[' + ",".join(str(v) for v in value) + "]")
            else:
                fields.append(f'"{key}":{value}')
        parts.append(f'"{name}":{{' + ",".join(fields) + "}")
    header = "{" + ",".join(parts) + "}" + " " * rng.randint(0, 7)
    data = bytes(rng.randrange(256) for _ in range(data_len))
    return st_bytes(header, data), f"{done}: {header}"


def test_generated_headers_we_read_the_package_reads_the_same(tmp_path):
    """Either softfloat refuses (a ValueError), or both it and the safetensors package
    read the same names, dtypes, shapes, bytes and metadata; and whatever the package
    refuses, softfloat refuses."""
    rng = random.Random(20261126)
    path = tmp_path / "g.safetensors"
    read = refused = 0
    for _ in range(600):
        raw, what = generated_file(rng)
        path.write_bytes(raw)
        try:
            ours = read_with_softfloat(path)
        except ValueError as exc:
            assert str(path) in str(exc) and "\n" not in str(exc), (what, exc)
            refused += 1
            continue
        try:
            theirs = read_with_the_package(path)
        except Exception as exc:  # noqa: BLE001
            pytest.fail(f"softfloat read what safetensors refuses ({exc}): {what}")
        assert ours[1] == theirs[1], what
        assert ours[0].keys() == theirs[0].keys(), what
        for k, (code, shape, data) in theirs[0].items():
            assert ours[0][k][:2] == (code, shape), what
            assert data is None or ours[0][k][2] == data, what
        read += 1
    assert read > 100 and refused > 100  # both sides of the check were exercised


# =====================================================================================
# .npz: members that are not arrays, size claims, streaming
# =====================================================================================
def npy_member(array: np.ndarray) -> bytes:
    import io

    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def npy_header_claiming(shape, descr="<f8") -> bytes:
    """A .npy header (version 1.0) that claims ``shape`` of ``descr``, with no data."""
    text = repr({"descr": descr, "fortran_order": False, "shape": tuple(shape)}).encode("latin1")
    text += b" " * (-(10 + len(text) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text


def test_npz_with_a_non_array_member_is_refused(capsys, tmp_path):
    src = tmp_path / "w.npz"
    with zipfile.ZipFile(src, "w") as zf:
        zf.writestr("w.npy", npy_member(np.ones(3, np.float32)))
        zf.writestr("readme.txt", "hello")
    with pytest.raises(ValueError, match=r"holds 'readme.txt', which is not a .npy array: an .npz "
                                         r"checkpoint holds .npy members only"):
        cr.open_tensors(str(src))
    refuses_on_the_command_line(capsys, src, tmp_path, "'readme.txt'", str(src), out_name="o.npz")


def test_npz_with_two_members_of_one_name_is_refused(tmp_path):
    src = tmp_path / "w.npz"
    with pytest.warns(UserWarning):  # zipfile warns of the duplicate name it writes
        with zipfile.ZipFile(src, "w") as zf:
            zf.writestr("w.npy", npy_member(np.ones(3, np.float32)))
            zf.writestr("w.npy", npy_member(np.zeros(3, np.float32)))
    with pytest.raises(ValueError, match="two members named 'w.npy'"):
        cr.open_tensors(str(src))


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_npz_member_header_claiming_terabytes_allocates_nothing(capsys, tmp_path, compression):
    src = tmp_path / "w.npz"
    with zipfile.ZipFile(src, "w", compression) as zf:
        zf.writestr("w.npy", npy_header_claiming((TERABYTE,)) + bytes(8))
    assert src.stat().st_size < 400
    result, peak = peak_of(lambda: cr.open_tensors(str(src)))
    assert isinstance(result, ValueError), result
    assert "member 'w.npy': its .npy header says 8000000000000 bytes of data" in str(result)
    assert "the archive declares 8" in str(result)
    assert peak < SMALL_PEAK
    refuses_on_the_command_line(capsys, src, tmp_path, "member 'w.npy'", out_name="o.npz")


def patch_declared_size(path, name: str, size: int) -> None:
    """Rewrite a member's uncompressed size in its local header and the central directory.

    local header: PK\\3\\4 ... | uncompressed size at byte 22 (4 bytes)
    central entry: PK\\1\\2 ... | uncompressed size at byte 24 (4 bytes)
    """
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo(name)
    struct.pack_into("<I", raw, info.header_offset + 22, size)
    central = raw.rindex(b"PK\x01\x02")
    struct.pack_into("<I", raw, central + 24, size)
    path.write_bytes(bytes(raw))


def test_npz_deflated_member_claiming_more_than_deflate_can_give(capsys, tmp_path):
    src = tmp_path / "w.npz"
    with zipfile.ZipFile(src, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("w.npy", npy_header_claiming((500_000_000,)) + bytes(64))
    patch_declared_size(src, "w.npy", 4_000_000_128)
    result, peak = peak_of(lambda: cr.open_tensors(str(src)))
    assert isinstance(result, ValueError), result
    assert "member 'w.npy' declares 4000000128 bytes inflated from" in str(result)
    assert "more than deflate can expand" in str(result)
    assert peak < SMALL_PEAK
    refuses_on_the_command_line(capsys, src, tmp_path, "more than deflate can expand", out_name="o.npz")


def test_npz_members_sharing_bytes_are_refused(capsys, tmp_path):
    """Two directory entries pointing at one member's bytes (a zip bomb's trick)."""
    src = tmp_path / "w.npz"
    with zipfile.ZipFile(src, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a.npy", npy_member(np.zeros(1000, np.float32)))
    raw = src.read_bytes()
    # central entry: PK\1\2 ... ; end record: PK\5\6 | disk 2 | disk 2 | n here 2 | n 2 |
    # directory size 4 | directory offset 4 | comment length 2
    central, end = raw.index(b"PK\x01\x02"), raw.index(b"PK\x05\x06")
    entry = raw[central:end]
    twin = entry.replace(b"a.npy", b"b.npy")
    eocd = bytearray(raw[end:])
    struct.pack_into("<HHI", eocd, 8, 2, 2, 2 * len(entry))
    src.write_bytes(raw[:end] + twin + bytes(eocd))
    with zipfile.ZipFile(src) as zf:
        assert zf.namelist() == ["a.npy", "b.npy"]
    with pytest.raises(ValueError, match="member 'b.npy' overlaps member 'a.npy'"):
        cr.open_tensors(str(src))
    refuses_on_the_command_line(capsys, src, tmp_path, "overlaps", out_name="o.npz")


def test_npz_stored_member_is_memory_mapped_not_loaded(tmp_path):
    x = np.arange(1 << 20, dtype=np.float64)  # 8 MiB
    src = tmp_path / "w.npz"
    np.savez(src, x=x, f=np.asfortranarray(x[:12].reshape(3, 4)))
    ckpt = cr.open_tensors(str(src))
    t, f = ckpt.tensors
    assert (t.name, t.shape, t.dtype, t.fmt, t.bits, t.nbytes) == ("x", x.shape, "float64", sf.fp64, False, x.nbytes)

    def read():
        a = t.load()
        return isinstance(a, np.memmap) or isinstance(a.base, np.memmap), a.flags.writeable, float(a[-1])

    (mapped, writeable, last), peak = peak_of(read)
    assert mapped and not writeable and last == x[-1]
    assert peak < SMALL_PEAK  # 8 MiB in the file: none of it copied
    np.testing.assert_array_equal(t.load(), x)
    np.testing.assert_array_equal(f.load(), x[:12].reshape(3, 4))
    ckpt.close()


def test_npz_deflated_member_is_inflated_once_into_its_declared_size(tmp_path):
    x = np.arange(1 << 20, dtype=np.float64)  # 8 MiB
    src = tmp_path / "w.npz"
    np.savez_compressed(src, x=x)
    (t,) = cr.open_tensors(str(src)).tensors
    a, peak = peak_of(lambda: t.load())
    np.testing.assert_array_equal(a, x)
    assert x.nbytes <= peak < x.nbytes + (3 << 20)  # the array itself, and pieces of 1 MiB


def test_npz_corrupt_stored_member_fails_its_checksum(capsys, tmp_path):
    src = tmp_path / "w.npz"
    np.savez(src, w=np.ones(64, np.float32))
    raw = bytearray(src.read_bytes())
    raw[raw.index(b"\x00\x00\x80\x3f") + 2] ^= 0x01  # one bit of the first 1.0f
    src.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="'w.npy'.* CRC-32"):  # at open (zipfile read it all) or load
        [t.load() for t in cr.open_tensors(str(src)).tensors]
    refuses_on_the_command_line(capsys, src, tmp_path, "CRC-32", out_name="o.npz")


def test_npz_negative_shape_is_refused(tmp_path):
    src = tmp_path / "w.npz"
    with zipfile.ZipFile(src, "w") as zf:
        zf.writestr("w.npy", npy_header_claiming((-2, -4), "<f4") + bytes(32))
    with pytest.raises(ValueError, match="cannot read member 'w.npy' of .*negative length"):
        cr.open_tensors(str(src))


# =====================================================================================
# .npz: ml_dtypes' bfloat16 (saved as |V2) and the FP8 types (|V1)
# =====================================================================================
def test_npz_bfloat16_members_are_read_as_bf16_bit_patterns(capsys, tmp_path):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(300) * 2.0 ** rng.integers(-20, 20, 300)).astype(ml_dtypes.bfloat16)
    src = tmp_path / "w.npz"
    np.savez(src, w=x)
    assert np.load(src)["w"].dtype == np.dtype("V2")  # what numpy makes of it
    (t,) = cr.open_tensors(str(src)).tensors
    assert (t.fmt, t.bits, t.dtype) == (sf.bf16, True, "bfloat16")
    np.testing.assert_array_equal(t.load(), x.view(np.uint16))
    code, _, err = run(capsys, "quantize", src, tmp_path / "o.npz", "-f", "e4m3", "--bits")
    assert code == 0, err
    np.testing.assert_array_equal(np.load(tmp_path / "o.npz")["w"], x.astype(ml_dtypes.float8_e4m3fn).view(np.uint8))


def test_npz_one_byte_void_members_are_kept_with_a_note(capsys, tmp_path):
    x = np.array([1.0, -2.0, 448.0], ml_dtypes.float8_e4m3fn)
    src = tmp_path / "w.npz"
    np.savez(src, f8=x, w=np.ones(2, np.float32))
    f8, w = cr.open_tensors(str(src)).tensors
    assert f8.fmt is None and "FP8" in f8.note and w.note == ""
    assert f8.raw().tobytes() == x.tobytes()
    assert run(capsys, "quantize", src, tmp_path / "o.npz", "-f", "bf16")[0] == 0
    assert np.load(tmp_path / "o.npz")["f8"].tobytes() == x.tobytes()  # kept unchanged


# =====================================================================================
# one .npy (the command line's single-array path)
# =====================================================================================
def test_npy_claiming_terabytes_is_truncated_not_allocated(capsys, tmp_path):
    src = tmp_path / "big.npy"
    src.write_bytes(npy_header_claiming((TERABYTE,)) + bytes(24))
    assert src.stat().st_size < 200
    result, peak = peak_of(lambda: cr.load_npy(str(src)))
    assert isinstance(result, ValueError)
    assert f"{str(src)!r} is truncated: header says 8000000000000 bytes of data (<f8 of shape " \
           f"(1000000000000,)), the file holds 24" == str(result)
    assert peak < SMALL_PEAK
    err = refuses_on_the_command_line(capsys, src, tmp_path, "truncated", out_name="o.npy")
    assert "pickled" not in err


def test_truncated_npy_says_truncated(tmp_path):
    src = tmp_path / "cut.npy"
    src.write_bytes(npy_member(np.ones(10))[:-8])
    with pytest.raises(ValueError, match="is truncated: header says 80 bytes of data .* the file holds 72"):
        cr.load_npy(str(src))


def test_npy_object_arrays_still_refused(tmp_path):
    src = tmp_path / "obj.npy"
    np.save(src, np.array([1, "a"], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="object \\(pickled\\) array, and softfloat never unpickles"):
        cr.load_npy(str(src))


def test_npy_bfloat16_is_read_as_exact_float32_values(tmp_path):
    x = np.array([1.5, -0.0, np.inf, 3.0e38, 1e-40, -2.0**-133], ml_dtypes.bfloat16)
    src = tmp_path / "b.npy"
    np.save(src, x)
    got = cr.load_npy(str(src))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, x.astype(np.float32))  # ml_dtypes' exact widening
    np.testing.assert_array_equal(np.signbit(got), np.signbit(x.astype(np.float32)))


def test_npy_float8_e5m2_is_read_as_exact_float16_values(tmp_path):
    x = np.array([1.5, -0.0, np.inf, 57344.0, 2.0**-16, -2.0**-14], ml_dtypes.float8_e5m2)
    src = tmp_path / "e5m2.npy"
    np.save(src, x)
    with pytest.raises(ValueError):  # numpy cannot read its own '<f1'
        np.load(src)
    got = cr.load_npy(str(src))
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, x.astype(np.float16))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(x.astype(np.float16)))


def test_npz_float8_e5m2_members_are_read_as_e5m2_bit_patterns(tmp_path):
    x = np.array([1.5, -0.0, np.inf, 57344.0, 2.0**-16], ml_dtypes.float8_e5m2)
    src = tmp_path / "w.npz"
    np.savez(src, w=x)
    (t,) = cr.open_tensors(str(src)).tensors
    assert (t.fmt, t.bits, t.dtype) == (sf.fp8_e5m2, True, "float8_e5m2")
    np.testing.assert_array_equal(t.load(), x.view(np.uint8))


def test_npy_one_byte_void_is_refused_clearly(tmp_path):
    src = tmp_path / "f8.npy"
    np.save(src, np.ones(3, ml_dtypes.float8_e4m3fn))
    with pytest.raises(ValueError, match="1-byte void .* save it as float32"):
        cr.load_npy(str(src))


def test_npy_negative_shape_is_refused(tmp_path):
    src = tmp_path / "neg.npy"
    src.write_bytes(npy_header_claiming((-2, -4)) + bytes(64))
    with pytest.raises(ValueError, match="not a valid .npy file: .*negative length"):
        cr.load_npy(str(src))


# =====================================================================================
# torch.save checkpoints
# =====================================================================================
@pytest.fixture
def torch():
    return import_torch()


def state_dict(torch):
    g = torch.Generator().manual_seed(0)

    def randn(*shape):
        return torch.randn(*shape, generator=g) * 3

    return {
        "model": {
            "layer.weight": randn(4, 5).to(torch.bfloat16),
            "layer.bias": randn(5).to(torch.float16),
            "head": {"w": randn(3, 2).t(), "w8": randn(6).to(torch.float8_e4m3fn),
                     "w5": randn(6).to(torch.float8_e5m2), "wz": randn(6).to(torch.float8_e4m3fnuz),
                     "d": randn(2).to(torch.float64)},
            "steps": torch.arange(7),
            "mask": torch.tensor([True, False]),
        },
        "optimizer": {"state": {0: {"step": torch.tensor(3.0)}}, "param_groups": [{"lr": 0.1, "params": [0]}]},
        "epoch": 3,
        "note": "hello",
    }


def test_torch_state_dict_bits_match_torch_views(torch, tmp_path):
    sd = state_dict(torch)
    src = tmp_path / "model.pt"
    torch.save(sd, src)
    assert cr.file_kind(str(src)) == "pt"
    ckpt = cr.open_tensors(str(src))
    assert ckpt.kind == "pt"
    by_name = {t.name: t for t in ckpt.tensors}
    assert list(by_name) == ["model.layer.weight", "model.layer.bias", "model.head.w", "model.head.w8",
                             "model.head.w5", "model.head.wz", "model.head.d", "model.steps",
                             "model.mask", "optimizer.state.0.step"]
    assert ckpt.metadata == {"optimizer.param_groups": '[{"lr": 0.1, "params": [0]}]', "epoch": "3",
                             "note": '"hello"'}
    ints = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
    fmts = {torch.bfloat16: sf.bf16, torch.float16: sf.fp16, torch.float32: sf.fp32,
            torch.float64: sf.fp64, torch.float8_e4m3fn: sf.fp8_e4m3, torch.float8_e5m2: sf.fp8_e5m2,
            torch.float8_e4m3fnuz: sf.fp8_e4m3fnuz}
    flat = {"model.layer.weight": sd["model"]["layer.weight"], "model.layer.bias": sd["model"]["layer.bias"],
            **{f"model.head.{k}": v for k, v in sd["model"]["head"].items()},
            "optimizer.state.0.step": sd["optimizer"]["state"][0]["step"]}
    for name, want in flat.items():
        t = by_name[name]
        assert (t.fmt, t.bits, t.shape) == (fmts[want.dtype], True, tuple(want.shape)), name
        expected = want.view(ints[want.element_size()]).numpy().view(t.fmt.storage_dtype)
        np.testing.assert_array_equal(t.load(), expected)
        assert t.nbytes == want.numel() * want.element_size()
    for name in ("model.steps", "model.mask"):
        t = by_name[name]
        assert t.fmt is None and not t.bits
        np.testing.assert_array_equal(t.raw(), sd["model"][name.split(".")[1]].numpy())
    assert by_name["model.steps"].dtype == "int64" and by_name["model.mask"].dtype == "bool"


def test_torch_checkpoint_quantizes_on_the_command_line(torch, capsys, tmp_path):
    sd = state_dict(torch)
    src = tmp_path / "model.pt"
    torch.save(sd, src)
    code, out, err = run(capsys, "quantize", src, tmp_path / "o.safetensors", "-f", "bf16")
    assert code == 0, err
    out_t = safetensors_numpy.load_file(str(tmp_path / "o.safetensors"))
    w = sd["model"]["layer.bias"]  # fp16 -> bf16, against torch's own rounding
    assert sf.bits_of(out_t["model.layer.bias"])[0].tolist() == w.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16).tolist()
    np.testing.assert_array_equal(out_t["model.steps"], np.arange(7))


def test_torch_legacy_format_is_read(torch, tmp_path):
    sd = {"w": torch.ones(3, dtype=torch.bfloat16), "n": torch.arange(2)}
    src = tmp_path / "old.pth"
    torch.save(sd, src, _use_new_zipfile_serialization=False)
    assert src.read_bytes()[:4] == b"\x80\x02\x8a\x0a" and cr.file_kind(str(src)) == "pt"
    w, n = cr.open_tensors(str(src)).tensors
    assert (w.name, w.fmt) == ("w", sf.bf16) and w.load().tolist() == [0x3F80] * 3
    assert n.raw().tolist() == [0, 1]


class _RunsCode:
    """An object whose unpickling would create a directory: it must never be unpickled."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return os.mkdir, (self.marker,)


def test_torch_arbitrary_pickle_is_refused_unrun(torch, capsys, tmp_path):
    marker = tmp_path / "ran"
    src = tmp_path / "evil.pt"
    torch.save({"w": torch.ones(2), "x": _RunsCode(marker)}, src)
    with pytest.raises(ValueError) as info:
        cr.open_tensors(str(src))
    message = str(info.value)
    assert "\n" not in message and str(src) in message
    assert "torch's safe loader (torch.load with weights_only=True) refused it" in message
    assert "softfloat never unpickles arbitrary objects" in message
    assert not marker.exists()
    refuses_on_the_command_line(capsys, src, tmp_path, "safe loader")
    assert not marker.exists()


def test_torch_names_that_collide_once_dotted_are_refused(torch, tmp_path):
    src = tmp_path / "c.pt"
    torch.save({"a.b": torch.ones(1), "a": {"b": torch.zeros(1)}}, src)
    with pytest.raises(ValueError, match="names 'a.b' twice"):
        cr.open_tensors(str(src))


def test_torch_loops_and_shared_containers_are_refused_in_bounded_memory(torch, tmp_path):
    loop = [torch.ones(1)]
    loop.append(loop)
    shared = {"w": torch.ones(2)}
    doubling = []
    for _ in range(40):  # 2**40 leaves once spelled out: never expanded
        doubling = [doubling, doubling]
    cases = {"loop": ({"a": loop}, "holds one container twice (at 'a.1'"),
             "shared": ({"x": shared, "y": shared}, "holds one container twice (at 'y'"),
             "doubling": ({"w": torch.ones(1), "m": doubling}, "holds at 'm' a value of more than")}
    for case, (obj, words) in cases.items():
        src = tmp_path / f"{case}.pt"
        torch.save(obj, src)
        result, peak = peak_of(lambda: cr.open_tensors(str(src)))
        assert isinstance(result, ValueError) and words in str(result), (case, result)
        assert peak < 64 << 20, case  # the item count stops at its cap


def test_torch_bare_tensor_is_refused(torch, tmp_path):
    src = tmp_path / "t.pt"
    torch.save(torch.ones(2), src)
    with pytest.raises(ValueError, match="one bare tensor, not a state dict"):
        cr.open_tensors(str(src))


def test_torch_missing_says_which_extra(capsys, tmp_path, monkeypatch):
    src = tmp_path / "model.pt"  # torch.save's layout: a folder holding data.pkl (no torch needed)
    with zipfile.ZipFile(src, "w") as zf:
        zf.writestr("archive/data.pkl", b"\x80\x02}q\x00.")  # pickle protocol 2 of {}
        zf.writestr("archive/version", "3\n")
    assert cr.file_kind(str(src)) == "pt"
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ValueError, match=r'needs torch, which is not installed: pip install "softfloat-emu\[torch\]"'):
        cr.open_tensors(str(src))
    refuses_on_the_command_line(capsys, src, tmp_path, "softfloat-emu[torch]")


def test_a_zip_without_torch_record_is_npz(tmp_path):
    src = tmp_path / "w.npz"
    np.savez(src, w=np.ones(2))
    assert cr.file_kind(str(src)) == "npz"
