"""The command line: formats table, explain, quantize, and one-line errors with exit 2.

Runs ``softfloat.cli.main`` in-process (capsys) and, once, ``python -m softfloat`` in a
subprocess to check the console entry.  The array results are compared with the library
call the command stands for.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import softfloat
from softfloat.cli import main
from softfloat.explain import explain

SEED_6_36 = "0 10000001 10010111000010100011111"
SEED_0_875 = "0 01111110 11000000000000000000000"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# =====================================================================================
# formats
# =====================================================================================
def test_formats_table(capsys):
    code, out, err = run(capsys, "formats")
    assert code == 0 and err == ""
    lines = out.splitlines()
    header = lines[0].split()
    assert header[:5] == ["name", "bits", "exp", "man", "bias"]
    rows = {line.split()[0]: line.split() for line in lines[1:] if line and not line.startswith(" ")}
    for f in softfloat.catalogue():
        assert f.name in rows
    fp16 = rows["fp16"]
    assert fp16[1:6] == ["16", "5", "10", "15", "65504"]
    assert rows["bf16"][1:5] == ["16", "8", "7", "127"]
    assert rows["fp8_e4m3"][5] == "448" and rows["fp8_e4m3"][-1] == "fn"
    assert rows["fp4_e2m1"][5] == "6"
    assert "bfloat16" in out and "half" in out  # aliases


# =====================================================================================
# explain
# =====================================================================================
def test_explain_default_fp32(capsys):
    code, out, err = run(capsys, "explain", "6.36")
    assert code == 0 and err == ""
    assert SEED_6_36 in out
    assert "-> fp32" in out and "exactly   6.36\n" in out
    assert "guard=1, round=0, sticky=1: above the midpoint, rounds up" in out


def test_explain_0_875(capsys):
    code, out, _ = run(capsys, "explain", "0.875", "--format", "fp32")
    assert code == 0 and SEED_0_875 in out


def test_explain_matches_library(capsys):
    code, out, _ = run(capsys, "explain", "1.00048828125", "-f", "half", "-r", "nearest_away")
    assert code == 0
    assert out == str(explain("1.00048828125", "fp16", "nearest_away")) + "\n"
    assert "exact tie, rounds away from zero" in out
    assert "0 01111 0000000001" in out


@pytest.mark.parametrize("value", ["-1e-5", "-inf", "-0x1p-3", "-6.36", "-nan"])
def test_explain_negative_values_need_no_separator(capsys, value):
    code, out, err = run(capsys, "explain", value, "--format", "fp16")
    assert code == 0, err
    assert out.startswith(f"{value} -> fp16")


def test_explain_negative_value_after_options(capsys):
    code, out, _ = run(capsys, "explain", "-f", "bf16", "-r", "upward", "-1e-5")
    assert code == 0 and "-> bf16 (rounding=upward)" in out


def test_explain_options(capsys):
    code, out, _ = run(capsys, "explain", "500", "-f", "e4m3", "--saturate")
    assert code == 0 and "0 1111 110" in out
    code, out, _ = run(capsys, "explain", "1e-5", "-f", "fp16", "--flush-subnormals",
                       "--tininess", "before")
    assert code == 0 and "flushed to 0" in out
    code, out, _ = run(capsys, "explain", "0.1", "-f", "bf16", "-r", "stochastic", "--seed", "7")
    assert code == 0 and "stochastic" in out


def test_explain_json(capsys):
    code, out, _ = run(capsys, "explain", "6.36", "--json")
    assert code == 0
    d = json.loads(out)
    assert d["bit_string"] == SEED_6_36 and d["format"] == "fp32"


def test_python_m_softfloat_subprocess():
    proc = subprocess.run([sys.executable, "-m", "softfloat", "explain", "6.36"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert SEED_6_36 in proc.stdout
    assert proc.stderr == ""


# =====================================================================================
# quantize
# =====================================================================================
@pytest.fixture
def npy(tmp_path):
    x = np.array([[1e-8, 70000.0, 0.1], [1.0, -3.3, 3e-7]], dtype=np.float32)
    path = tmp_path / "in.npy"
    np.save(path, x)
    return x, path


def test_quantize_values(capsys, npy, tmp_path):
    x, src = npy
    dst = tmp_path / "out.npy"
    code, out, err = run(capsys, "quantize", str(src), str(dst), "--format", "fp16")
    assert code == 0 and err == ""
    got = np.load(dst)
    want, flags = softfloat.quantize(x, "fp16", return_flags=True)
    assert got.dtype == want.dtype and got.shape == x.shape
    np.testing.assert_array_equal(got, want)
    assert "overflowed: 1 of 6" in out and "underflowed: 2 of 6" in out
    assert "inexact:" in out


def test_quantize_report_sections(capsys, npy, tmp_path):
    """Flags, outcomes and error, with outcomes reasoned out value by value and the
    error computed from numpy's own float16 rounding."""
    x, src = npy
    code, out, _ = run(capsys, "quantize", str(src), str(tmp_path / "o.npy"), "-f", "fp16")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == ("6 values of float32 (2, 3) -> fp16 (rounding=nearest_even): wrote values "
                        f"as float32 to {tmp_path / 'o.npy'}")
    # 1e-8 < 2**-25: zero; 7e4 > 65520: inf; 0.1, -3.3: rounded; 1.0: exact;
    # 3e-7 = 5.03 x 2**-24: a subnormal, inexact
    assert lines[1:13] == [
        "IEEE flags:",
        "  overflowed: 1 of 6 (16.7%)",
        "  underflowed: 2 of 6 (33.3%)",
        "  inexact: 5 of 6 (83.3%)",
        "outcomes:",
        "  exact: 1 of 6 (16.7%)",
        "  rounded: 2 of 6 (33.3%)",
        "  became subnormal: 1 of 6 (16.7%)",
        "  became zero: 1 of 6 (16.7%)",
        "  became +-inf: 1 of 6 (16.7%)",
        "quantisation error:",
        lines[12],
    ]
    with np.errstate(over="ignore"):
        q = x.astype(np.float16).astype(np.float64).ravel()
    xs = x.astype(np.float64).ravel()
    keep = np.isfinite(q)
    err = np.abs(q[keep] - xs[keep])
    rel = err / np.abs(xs[keep])
    sqnr = 10 * np.log10(np.sum(xs[keep] ** 2) / np.sum(err ** 2))
    assert lines[12:] == [
        f"  abs error: max {err.max():.4g}, mean {err.mean():.4g}",
        f"  rel error: max {rel.max():.4g}, mean {rel.mean():.4g}",
        f"  SQNR: {sqnr:.2f} dB over 5 values (1 value left out: NaN or infinite input or result)",
    ]


def test_quantize_one_value_grammar(capsys, tmp_path):
    src = tmp_path / "one.npy"
    np.save(src, np.array([1.5]))
    code, out, _ = run(capsys, "quantize", str(src), str(tmp_path / "o.npy"), "-f", "bf16")
    assert code == 0
    assert out.startswith("1 value of float64 (1,) -> bf16")
    assert "  none raised (1 value)" in out and "  exact: 1 of 1 (100.0%)" in out
    assert "SQNR: inf dB over 1 value\n" in out
    assert "1 values" not in out


def test_quantize_custom_layout_format(capsys, tmp_path):
    # e6m10 keeps fp16's 11-bit precision with a wider exponent range, so inside fp16's
    # normal range it rounds exactly as numpy's float16 cast does
    x = np.array([0.1, -3.3, 1.0, 1000.5, 2.0**-14 * 1.1], dtype=np.float32)
    src, dst = tmp_path / "x.npy", tmp_path / "y.npy"
    np.save(src, x)
    code, out, _ = run(capsys, "quantize", str(src), str(dst), "--format", "e6m10")
    assert code == 0 and "-> e6m10 (rounding=nearest_even)" in out
    np.testing.assert_array_equal(np.load(dst), x.astype(np.float16).astype(np.float32))


def test_quantize_bits_and_options(capsys, npy, tmp_path):
    x, src = npy
    dst = tmp_path / "bits"  # written at exactly this path, no .npy appended
    code, out, _ = run(capsys, "quantize", str(src), str(dst), "-f", "e4m3", "--saturate",
                       "--flush-subnormals", "-r", "toward_zero", "--bits")
    assert code == 0
    got = np.load(dst)
    want = softfloat.encode(x, "e4m3", "toward_zero", saturate=True, subnormals=False)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, want)
    assert "bit patterns" in out


def test_quantize_stochastic_seed_is_reproducible(capsys, npy, tmp_path):
    x, src = npy
    dst = tmp_path / "s.npy"
    code, _, _ = run(capsys, "quantize", str(src), str(dst), "-f", "bf16", "-r", "stochastic",
                     "--seed", "5")
    assert code == 0
    want = softfloat.quantize(x, "bf16", "stochastic", rng=5)
    np.testing.assert_array_equal(np.load(dst), want)


def test_quantize_no_flags(capsys, tmp_path):
    src, dst = tmp_path / "a.npy", tmp_path / "b.npy"
    np.save(src, np.array([1.0, 0.5, -2.0]))
    code, out, _ = run(capsys, "quantize", str(src), str(dst), "-f", "bf16")
    assert code == 0 and "none raised (3 values)" in out and "exact: 3 of 3 (100.0%)" in out


# =====================================================================================
# errors: exit 2, one line on stderr, no traceback
# =====================================================================================
def _bad_inputs(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    obj = tmp_path / "obj.npy"
    np.save(obj, np.array([1, "a"], dtype=object), allow_pickle=True)
    npz = tmp_path / "z.npz"
    np.savez(npz, a=np.ones(2))
    cplx = tmp_path / "c.npy"
    np.save(cplx, np.ones(2, dtype=complex))
    strings = tmp_path / "s.npy"
    np.save(strings, np.array(["1.5", "2"]))
    bools = tmp_path / "b.npy"
    np.save(bools, np.array([True, False]))
    good = tmp_path / "good.npy"
    np.save(good, np.ones(2))
    out = str(tmp_path / "o.npy")
    return {
        "unknown format": (["explain", "1", "--format", "fp7"], "not a known format"),
        "unknown rounding": (["explain", "1", "--rounding", "nearest"], "is not valid"),
        "unknown tininess": (["explain", "1", "--tininess", "during"], "is not valid"),
        "non-numeric value": (["explain", "six"], "VALUE='six' is not a number"),
        "bad seed": (["explain", "1", "--seed", "x"], "invalid int value"),
        "no command": ([], "required"),
        "unknown command": (["bogus"], "invalid choice"),
        "missing format": (["quantize", str(good), out], "-f/--format"),
        "missing file": (["quantize", str(tmp_path / "nope.npy"), out, "-f", "bf16"],
                         "No such file"),
        "directory": (["quantize", str(tmp_path), out, "-f", "bf16"], "cannot read"),
        "not npy": (["quantize", str(text), out, "-f", "bf16"], "not a .npy file"),
        "object array": (["quantize", str(obj), out, "-f", "bf16"], "object"),
        "npz": (["quantize", str(npz), out, "-f", "bf16"], ".npz"),
        "complex data": (["quantize", str(cplx), out, "-f", "bf16"],
                         "holds complex numbers (complex128), which have no single rounding; save "
                         "the real and imaginary parts as two real arrays"),
        "string data": (["quantize", str(strings), out, "-f", "bf16"],
                        "holds strings (<U3), not numbers; quantize reads .npy arrays of float16, "
                        "float32, float64 or integers"),
        "bool data": (["quantize", str(bools), out, "-f", "bf16"], "holds booleans, not numbers"),
        "seed without stochastic": (["explain", "1", "--seed", "3"],
                                    "--seed is used only by --rounding stochastic, and --rounding "
                                    "is nearest_even: drop --seed, or add --rounding stochastic"),
        "quantize seed without stochastic": (["quantize", str(good), out, "-f", "bf16", "-r",
                                              "upward", "--seed", "1"], "--rounding is upward"),
        "impossible layout": (["explain", "1", "-f", "e12m3"],
                              "--format='e12m3' names no format softfloat can emulate"),
        "unwritable": (["quantize", str(good), str(tmp_path / "no" / "o.npy"), "-f", "bf16"],
                       "cannot write"),
        "quantize bad format": (["quantize", str(good), out, "-f", "fp7"], "not a known format"),
    }


BAD_CASES = ["unknown format", "unknown rounding", "unknown tininess", "non-numeric value",
             "bad seed", "no command", "unknown command", "missing format", "missing file",
             "directory", "not npy", "object array", "npz", "complex data", "string data",
             "bool data", "unwritable", "quantize bad format", "seed without stochastic",
             "quantize seed without stochastic", "impossible layout"]


@pytest.mark.parametrize("case", BAD_CASES)
def test_bad_arguments_exit_2_with_one_line(capsys, tmp_path, case):
    argv, words = _bad_inputs(tmp_path)[case]
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("softfloat: error: ")
    assert words in lines[0]
    assert "Traceback" not in err


def test_unknown_format_speaks_cli(capsys):
    code, _, err = run(capsys, "explain", "1", "--format", "fp12")
    assert code == 2
    message = err.strip()
    assert message.startswith("softfloat: error: --format fp12 is not a known format; choose one of ")
    for fmt in softfloat.catalogue():
        assert fmt.name in message
    assert "--format e6m9" in message and "--format eEmM" in message
    assert "softfloat.Format" not in message   # Python spelling has no place on the command line


@pytest.mark.parametrize(("spelling", "bits"), [
    ("e6m9", "0 100000 000000000"), ("E5M10", "0 10000 0000000000"), ("e4m3fn", "0 1000 000"),
    ("e5m4fnuz", "0 10001 0000"),
])
def test_explain_custom_layout(capsys, spelling, bits):
    # 2 = 1.0 x 2**1: exponent field = bias + 1 (bias 31, 15, 7, and 16 for fnuz)
    code, out, err = run(capsys, "explain", "2", "--format", spelling)
    assert code == 0, err
    assert bits in out


def test_bad_argument_subprocess_has_no_traceback():
    proc = subprocess.run([sys.executable, "-m", "softfloat", "explain", "1", "-f", "fp7"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("softfloat: error: ")


def test_help_and_version(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "examples:" in out and "softfloat explain 6.36" in out
    code, out, _ = run(capsys, "explain", "--help")
    assert code == 0 and "VALUE" in out and "nearest_away" in out
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"softfloat {softfloat.__version__}"
