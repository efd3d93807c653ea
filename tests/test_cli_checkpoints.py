"""``softfloat quantize`` on checkpoints: .npz archives and .safetensors files, tensor by
tensor, with per-tensor scaling and a per-tensor report.

Oracles: ml_dtypes' own round-to-nearest-even casts for the stored bits (and softfloat's
``encode`` of each whole tensor, which the command must reproduce piece by piece); the
report's shares, relative errors and SQNR recomputed here with plain numpy from those
casts; the output files read back by the ``safetensors`` package (numpy and torch
loaders) and by numpy.
"""

from __future__ import annotations

import json
import math
import tracemalloc
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import softfloat as sf
from softfloat import _checkpoint
from softfloat.cli import main
from tests.conftest import TORCH_MISSING
from tests.oracle import pattern_of, round_exact, value_of_float

safetensors_numpy = pytest.importorskip("safetensors.numpy", reason="safetensors is in the test extra")
from safetensors import safe_open  # noqa: E402


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def sample(n, seed, scale=0.05, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) * scale * 2.0 ** rng.integers(-8, 4, n)).astype(dtype)


@pytest.fixture
def checkpoint(tmp_path):
    """A small safetensors checkpoint with the dtypes real ones have."""
    w = sample(600, 0).reshape(20, 30)
    b = np.concatenate([np.float32([0.0, -0.0, 1e-9, 1e-30, 1e5, np.inf, np.nan]), sample(25, 1)])
    tensors = {
        "layer.weight": w,
        "layer.bias": b,
        "emb": sample(256, 2, scale=1.0).astype(ml_dtypes.bfloat16).reshape(16, 16),
        "half": sample(40, 3, scale=3.0).astype(np.float16),
        "fp8": sample(64, 4).astype(ml_dtypes.float8_e5m2),
        "position_ids": np.arange(7, dtype=np.int64),
        "mask": np.array([True, False, True]),
    }
    path = tmp_path / "model.safetensors"
    safetensors_numpy.save_file(tensors, str(path), metadata={"format": "pt"})
    return path, tensors


FLOATS = ["layer.weight", "layer.bias", "emb", "half", "fp8"]


def read_raw(path):
    """name -> (dtype code, shape, bytes) straight from the file, and the metadata."""
    raw = path.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    data = raw[8 + n:]
    return {k: (v["dtype"], v["shape"], data[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in header.items()}, meta, n


# =====================================================================================
# safetensors: bits, dtypes, values
# =====================================================================================
def test_safetensors_fp8_bits_match_encode_and_ml_dtypes(capsys, checkpoint, tmp_path):
    src, tensors = checkpoint
    dst = tmp_path / "model_fp8.safetensors"
    code, out, err = run(capsys, "quantize", src, dst, "--format", "fp8_e4m3")
    assert code == 0 and err == ""
    with safe_open(str(dst), framework="np") as f:
        assert f.metadata()["format"] == "pt"  # the input's metadata is kept
        assert f.metadata()["softfloat.format"] == "fp8_e4m3"
        assert list(f.keys()) == sorted(tensors)
    entries, _, header_len = read_raw(dst)
    assert (8 + header_len) % 8 == 0  # data 8-byte aligned
    for name in FLOATS:
        code_, shape, data = entries[name]
        assert code_ == "F8_E4M3" and shape == list(tensors[name].shape)
        got = np.frombuffer(data, np.uint8).reshape(shape)
        np.testing.assert_array_equal(got, sf.encode(tensors[name], "fp8_e4m3"))
        # ml_dtypes' own cast (round to nearest even, overflow to NaN as OCP non-saturating)
        want = np.asarray(tensors[name]).astype(np.float32).astype(ml_dtypes.float8_e4m3fn)
        with np.errstate(invalid="ignore"):
            np.testing.assert_array_equal(got.view(ml_dtypes.float8_e4m3fn).astype(np.float32),
                                          want.astype(np.float32))
    for name in ("position_ids", "mask"):  # kept byte for byte
        assert entries[name][2] == np.ascontiguousarray(tensors[name]).tobytes()
    assert "position_ids" in out and "kept" in out


def test_safetensors_output_loads_in_torch_with_the_right_dtypes(capsys, checkpoint, tmp_path):
    torch_st = pytest.importorskip("safetensors.torch", reason=TORCH_MISSING)
    import torch

    src, tensors = checkpoint
    for fmt, dtype in (("fp8_e4m3", torch.float8_e4m3fn), ("fp8_e5m2", torch.float8_e5m2),
                       ("bf16", torch.bfloat16), ("fp16", torch.float16),
                       ("fp8_e4m3fnuz", torch.float8_e4m3fnuz)):
        dst = tmp_path / f"{fmt}.safetensors"
        assert run(capsys, "quantize", src, dst, "-f", fmt)[0] == 0
        loaded = torch_st.load_file(str(dst))
        assert loaded["position_ids"].dtype == torch.int64
        assert torch.equal(loaded["position_ids"], torch.arange(7))
        for name in FLOATS:
            t = loaded[name]
            assert t.dtype == dtype and tuple(t.shape) == tensors[name].shape
            # torch's own conversion of the stored bits to float32 equals softfloat's quantize
            want = sf.quantize(tensors[name], fmt)
            np.testing.assert_array_equal(t.float().numpy(), np.asarray(want, np.float32))


def test_safetensors_formats_without_a_dtype_are_storage_integers(capsys, checkpoint, tmp_path):
    src, tensors = checkpoint
    dst = tmp_path / "fp6.safetensors"
    assert run(capsys, "quantize", src, dst, "-f", "fp6_e2m3", "-r", "toward_zero")[0] == 0
    loaded = safetensors_numpy.load_file(str(dst))
    with safe_open(str(dst), framework="np") as f:
        meta = f.metadata()
    assert meta["softfloat.format"] == "fp6_e2m3" and meta["softfloat.rounding"] == "toward_zero"
    assert sorted(json.loads(meta["softfloat.bit_patterns"])) == sorted(FLOATS)
    for name in FLOATS:
        assert loaded[name].dtype == np.uint8
        np.testing.assert_array_equal(loaded[name], sf.encode(tensors[name], "fp6_e2m3", "toward_zero"))
    dst2 = tmp_path / "e6m9.safetensors"
    assert run(capsys, "quantize", src, dst2, "-f", "e6m9")[0] == 0
    loaded = safetensors_numpy.load_file(str(dst2))
    assert loaded["emb"].dtype == np.uint16
    np.testing.assert_array_equal(loaded["emb"], sf.encode(tensors["emb"], "e6m9"))


def test_bits_flag_stores_integers_even_where_a_float_dtype_exists(capsys, checkpoint, tmp_path):
    src, tensors = checkpoint
    dst = tmp_path / "bits.safetensors"
    assert run(capsys, "quantize", src, dst, "-f", "bf16", "--bits")[0] == 0
    loaded = safetensors_numpy.load_file(str(dst))
    assert loaded["layer.weight"].dtype == np.uint16
    np.testing.assert_array_equal(loaded["layer.weight"], sf.encode(tensors["layer.weight"], "bf16"))


# =====================================================================================
# the report, against an independent computation
# =====================================================================================
def independent_row(x, fmt_type, tiny):
    """Shares, max relative error and SQNR from ml_dtypes' cast, in plain numpy."""
    x = np.asarray(x).astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        q = x.astype(np.float32).astype(fmt_type).astype(np.float64)
    n = x.size
    finite = np.isfinite(x) & np.isfinite(q)
    zero = np.count_nonzero((q == 0) & (x != 0) & ~np.isnan(x))
    sub = np.count_nonzero((np.abs(q) < tiny) & (q != 0) & (q != x))
    over = np.count_nonzero(np.isfinite(x) & ~np.isfinite(q))
    xf, qf = x[finite], q[finite]
    rel = np.abs(qf - xf)[xf != 0] / np.abs(xf[xf != 0])
    sqnr = 10 * math.log10(float(np.sum(xf * xf)) / float(np.sum((qf - xf) ** 2)))
    return {"became_zero": zero / n, "became_subnormal": sub / n, "overflowed": over / n,
            "max_rel_error": float(rel.max()), "sqnr_db": sqnr}


def test_report_rows_match_an_independent_computation(capsys, checkpoint, tmp_path):
    src, tensors = checkpoint
    report = tmp_path / "r.json"
    code, out, _ = run(capsys, "quantize", src, tmp_path / "o.safetensors", "-f", "fp8_e4m3",
                       "--report", report)
    assert code == 0
    data = json.loads(report.read_text())
    assert data["format"] == "fp8_e4m3" and data["scaling"] == "none"
    rows = {r["name"]: r for r in data["tensors"]}
    assert rows["position_ids"]["action"] == "kept" and rows["mask"]["action"] == "kept"
    for name in FLOATS:
        want = independent_row(tensors[name], ml_dtypes.float8_e4m3fn, 2.0**-6)
        row = rows[name]
        assert row["shape"] == list(tensors[name].shape) and row["action"] == "quantized"
        for key in ("became_zero", "became_subnormal", "overflowed", "max_rel_error"):
            assert row[key] == want[key], (name, key)
        assert row["sqnr_db"] == pytest.approx(want["sqnr_db"], rel=1e-12), name
        # the printed table carries the same numbers
        line = next(ln for ln in out.splitlines() if ln.startswith(name + " "))
        assert f"{100 * want['became_zero']:.2f}%" in line and f"{want['sqnr_db']:.2f}" in line
    # layer.bias: 1e5 overflows (to NaN), 1e-9 and 1e-30 become zero; inf and NaN inputs excluded
    assert rows["layer.bias"]["overflowed"] == 1 / 32
    assert rows["layer.bias"]["excluded"] == 3


def test_report_json_has_no_bare_infinities(capsys, tmp_path):
    src = tmp_path / "exact.npz"
    np.savez(src, a=np.float32([1.0, 2.0, 0.5]))
    report = tmp_path / "r.json"
    assert run(capsys, "quantize", src, tmp_path / "o.npz", "-f", "bf16", "--report", report)[0] == 0
    text = report.read_text()
    row = json.loads(text)["tensors"][0]
    assert row["sqnr_db"] == "inf" and row["max_rel_error"] == 0.0 and "Infinity" not in text


# =====================================================================================
# per-tensor scaling
# =====================================================================================
def test_tensor_scaling(capsys, checkpoint, tmp_path):
    src, tensors = checkpoint
    dst = tmp_path / "scaled.safetensors"
    report = tmp_path / "r.json"
    code, out, _ = run(capsys, "quantize", src, dst, "--format", "fp8_e4m3", "--scaling", "tensor",
                       "--report", report)
    assert code == 0
    entries, meta, _ = read_raw(dst)  # read raw: the package's numpy loader cannot load F8
    assert "softfloat.scaling" in meta
    rows = {r["name"]: r for r in json.loads(report.read_text())["tensors"]}
    for name in FLOATS:
        x = np.asarray(tensors[name]).astype(np.float64)
        code_, shape, data = entries[name + "_scale"]
        assert code_ == "F32" and shape == []
        s = float(np.frombuffer(data, "<f4")[0])
        assert rows[name]["scale"] == s
        amax = np.float32(np.max(np.abs(x[np.isfinite(x)])))  # an fp32 value: these are <= 24 bits
        # Transformer Engine's scale: 448 / amax in IEEE binary32 (numpy's float32 division)
        assert s == np.float32(448) / amax
        got = np.frombuffer(entries[name][2], np.uint8).reshape(entries[name][1])
        np.testing.assert_array_equal(got, sf.encode(x * s, "fp8_e4m3"))  # x * s exact in float64
        assert rows[name]["overflowed"] == 0  # amax * s is within half an e4m3 ulp of 448
        # scale-free error: decoded / s against x, recomputed here
        q = sf.decode(got, "fp8_e4m3") / s
        keep = np.isfinite(x) & np.isfinite(q) & (x != 0)
        assert rows[name]["max_rel_error"] == pytest.approx(
            float(np.max(np.abs(q[keep] - x[keep]) / np.abs(x[keep]))), rel=1e-12)


def test_scaled_float64_values_are_rounded_once(capsys, tmp_path):
    # float64 x * scale is not exact in float64: the stored element must be the exact
    # product's rounding (MPFR through tests.oracle), not a rounding of a rounding
    # amax 9 (s = fp32(448 / 9)); then x whose exact x * s lies within half a float64 ulp
    # of an e4m3 value or midpoint (1 - 4e-17, 1.0625 + 5e-17, 20 - 1e-16, 22 + 1.6e-16:
    # found by search with exact rationals), where a float64 product would decide wrongly
    x = np.array([9.0, 0.020089285372167223, 0.021344865707927676, 0.40178570744334446,
                  0.4419642781876789, -0.021344865707927676, 0.1, 1 / 3], np.float64)
    x = np.concatenate([x, sample(200, 12, scale=0.01, dtype=np.float64)])
    src = tmp_path / "d.npz"
    np.savez(src, x=x)
    for mode in ("nearest_even", "toward_zero", "upward"):
        out = tmp_path / f"{mode}.npz"
        assert run(capsys, "quantize", src, out, "-f", "e4m3", "--scaling", "tensor", "--bits",
                   "-r", mode, "--saturate")[0] == 0
        got = np.load(out)
        s = got["x_scale"]
        assert s == np.float32(448) / np.float32(np.max(np.abs(x)))
        for v, b in zip(x, got["x"]):
            q, neg = value_of_float(v)
            want = round_exact(q * Fraction(float(s)), neg, sf.fp8_e4m3, mode, saturate=True)
            assert int(b) == pattern_of(want.value, want.negative, sf.fp8_e4m3), (mode, v)


def test_scale_rounded_up_can_overflow_upward_rounding_without_saturate(capsys, tmp_path):
    # amax = 9: fp32(448 / 9) = 49.7777786... rounds up, so 9 * scale > 448 (exact
    # rationals) and rounding upward overflows the largest element (e4m3: NaN) unless
    # --saturate keeps it at 448, as the help text says
    s = np.float32(448) / np.float32(9)
    assert Fraction(float(s)) * 9 > 448
    src = tmp_path / "t.npz"
    np.savez(src, x=np.array([9.0, 1.0, -0.5], np.float32))
    assert run(capsys, "quantize", src, tmp_path / "a.npz", "-f", "e4m3", "--scaling", "tensor",
               "-r", "upward", "--report", tmp_path / "a.json")[0] == 0
    a = np.load(tmp_path / "a.npz")
    assert a["x_scale"] == s and np.isnan(a["x"][0])
    assert json.loads((tmp_path / "a.json").read_text())["tensors"][0]["overflowed"] == pytest.approx(1 / 3)
    assert run(capsys, "quantize", src, tmp_path / "b.npz", "-f", "e4m3", "--scaling", "tensor",
               "-r", "upward", "--saturate")[0] == 0
    assert np.load(tmp_path / "b.npz")["x"][0] == 448.0


def test_scaling_of_an_all_zero_tensor_is_one(capsys, tmp_path):
    src = tmp_path / "z.npz"
    np.savez(src, z=np.zeros(4, np.float32))
    assert run(capsys, "quantize", src, tmp_path / "o.npz", "-f", "e4m3", "--scaling", "tensor")[0] == 0
    out = np.load(tmp_path / "o.npz")
    assert float(out["z_scale"]) == 1.0 and out["z_scale"].dtype == np.float32


# =====================================================================================
# .npz
# =====================================================================================
def test_npz_values_bits_and_kept_arrays(capsys, tmp_path):
    x = sample(500, 5).reshape(20, 25)
    f = np.asfortranarray(sample(12, 6, dtype=np.float64).reshape(3, 4))
    src = tmp_path / "w.npz"
    np.savez(src, x=x, f=f, steps=np.arange(4), name=np.array(["a", "bc"]))
    assert run(capsys, "quantize", src, tmp_path / "v.npz", "-f", "fp8_e5m2", "-r", "upward")[0] == 0
    v = np.load(tmp_path / "v.npz")
    assert v["x"].dtype == np.float32 and v["f"].dtype == np.float64  # quantize's dtype rule
    np.testing.assert_array_equal(v["x"], sf.quantize(x, "fp8_e5m2", "upward"))
    np.testing.assert_array_equal(v["f"], sf.quantize(f, "fp8_e5m2", "upward"))
    np.testing.assert_array_equal(v["steps"], np.arange(4))
    assert v["name"].tolist() == ["a", "bc"]
    assert run(capsys, "quantize", src, tmp_path / "b.npz", "-f", "bf16", "--bits")[0] == 0
    b = np.load(tmp_path / "b.npz")
    assert b["x"].dtype == np.uint16
    np.testing.assert_array_equal(b["x"], sf.encode(x, "bf16"))


def test_npz_to_safetensors_and_back(capsys, tmp_path):
    x = sample(100, 7)
    src = tmp_path / "w.npz"
    np.savez(src, x=x, n=np.arange(3, dtype=np.int32))
    assert run(capsys, "quantize", src, tmp_path / "w.safetensors", "-f", "bf16")[0] == 0
    loaded = safetensors_numpy.load_file(str(tmp_path / "w.safetensors"))
    assert loaded["x"].dtype == np.dtype(ml_dtypes.bfloat16) and loaded["n"].dtype == np.int32
    np.testing.assert_array_equal(sf.bits_of(loaded["x"])[0], sf.encode(x, "bf16"))
    # a bf16 checkpoint read back and rounded on: bf16 -> fp8, through exact decoding
    assert run(capsys, "quantize", tmp_path / "w.safetensors", tmp_path / "w8.npz", "-f", "e4m3",
               "--bits")[0] == 0
    w8 = np.load(tmp_path / "w8.npz")
    np.testing.assert_array_equal(w8["x"], sf.encode(loaded["x"], "e4m3"))
    np.testing.assert_array_equal(w8["n"], np.arange(3))


# =====================================================================================
# pieces, streams and memory
# =====================================================================================
def test_pieces_give_the_whole_tensor_result(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(_checkpoint, "PIECE", 1 << 14)  # many pieces per tensor
    a, b = sample(70_000, 8), sample(40_000, 9)
    src = tmp_path / "w.safetensors"
    safetensors_numpy.save_file({"a": a, "b": b}, str(src))
    report = tmp_path / "r.json"
    code, _, _ = run(capsys, "quantize", src, tmp_path / "o.safetensors", "-f", "bf16",
                     "-r", "stochastic", "--seed", "3", "--report", report)
    assert code == 0
    loaded = safetensors_numpy.load_file(str(tmp_path / "o.safetensors"))
    rng = np.random.default_rng(3)  # one stream, elements in file order
    for name, x in (("a", a), ("b", b)):
        want = sf.encode(x, "bf16", "stochastic", rng=rng)
        np.testing.assert_array_equal(sf.bits_of(loaded[name])[0], want)
        row = next(r for r in json.loads(report.read_text())["tensors"] if r["name"] == name)
        stats = sf.error_stats(x, want, "bf16")
        assert row["max_rel_error"] == stats.max_rel and row["sqnr_db"] == stats.sqnr_db


def test_memory_stays_bounded_by_pieces(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(_checkpoint, "PIECE", 1 << 13)
    n = 1 << 20  # 4 MiB of float32
    src = tmp_path / "big.safetensors"
    safetensors_numpy.save_file({"w": np.ones(n, np.float32)}, str(src))
    # the format's lookup tables are built once per process (a transient ~4 MiB whatever the
    # tensor's size): build them on a small tensor first, as any earlier test in the worker
    # would have, so that the bound below measures the pieces alone
    small = tmp_path / "small.safetensors"
    safetensors_numpy.save_file({"w": np.ones(1 << 16, np.float32)}, str(small))
    assert run(capsys, "quantize", small, tmp_path / "s.safetensors", "-f", "fp8_e4m3",
               "--scaling", "tensor")[0] == 0
    tracemalloc.start()
    try:
        code, _, _ = run(capsys, "quantize", src, tmp_path / "o.safetensors", "-f", "fp8_e4m3",
                         "--scaling", "tensor")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert code == 0
    assert peak < 2 << 20  # a few pieces: no full-size float32 (4 MiB) or float64 (8 MiB) copy


# =====================================================================================
# errors
# =====================================================================================
def test_checkpoint_errors(capsys, checkpoint, tmp_path):
    src, _ = checkpoint
    npy = tmp_path / "a.npy"
    np.save(npy, np.ones(3))
    cases = [
        (["quantize", npy, tmp_path / "o.npy", "-f", "bf16", "--scaling", "tensor"],
         "a .npy file holds one array"),
        (["quantize", src, tmp_path / "o.bin", "-f", "bf16"], "must end in .npz or .safetensors"),
        (["quantize", src, tmp_path / "no" / "o.safetensors", "-f", "bf16"], "cannot write OUT"),
    ]
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes((20).to_bytes(8, "little") + b'{"w": 3' + b" " * 13)
    cases.append((["quantize", bad, tmp_path / "o.safetensors", "-f", "bf16"], "header is not JSON"))
    header = b'{"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}'
    short = tmp_path / "short.safetensors"
    short.write_bytes(len(header).to_bytes(8, "little") + header + bytes(8))  # 8 of 16 bytes
    cases.append((["quantize", short, tmp_path / "o.safetensors", "-f", "bf16"], "lies outside the file"))
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes((10**6).to_bytes(8, "little") + header)
    cases.append((["quantize", cut, tmp_path / "o.safetensors", "-f", "bf16"], "exceeds the file"))
    clash = tmp_path / "clash.npz"
    np.savez(clash, w=np.ones(2, np.float32), w_scale=np.ones(1, np.float32))
    cases.append((["quantize", clash, tmp_path / "o.npz", "-f", "e4m3", "--scaling", "tensor"],
                  "already holds"))
    cases.append((["quantize", src, src, "-f", "bf16"], "is IN itself"))
    strings = tmp_path / "s.npz"
    np.savez(strings, w=np.ones(2, np.float32), s=np.array(["a"]))
    cases.append((["quantize", strings, tmp_path / "s.safetensors", "-f", "bf16"],
                  "which a .safetensors file cannot hold"))
    for argv, words in cases:
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == "", argv
        assert err.startswith("softfloat: error: ") and err.count("\n") == 1, err
        assert words in err, (words, err)
    assert not (tmp_path / "s.safetensors").exists()
    assert src.stat().st_size > 0


def test_a_failure_midway_leaves_no_output(capsys, tmp_path, monkeypatch):
    src = tmp_path / "w.npz"
    np.savez(src, a=np.ones(3, np.float32), b=np.ones(3, np.float32))

    def fail(*args, **kwargs):
        raise ValueError("disk on fire")

    monkeypatch.setattr(_checkpoint, "ErrorAccumulator", fail)
    for out in ("o.npz", "o.safetensors"):
        code, _, err = run(capsys, "quantize", src, tmp_path / out, "-f", "bf16")
        assert code == 2 and "disk on fire" in err
        assert not (tmp_path / out).exists()
