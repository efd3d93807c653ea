"""Exchange with ml_dtypes, torch and JAX: bits_of, to_ml_dtypes, to_torch, the codec's
input coercion and the README's dtype table.

The oracles are the other libraries themselves: every bit pattern of every format of 16
bits or fewer goes out through ``to_ml_dtypes``/``to_torch`` and must come back equal
through ``bits_of``, hold the same bytes as the patterns (read by the library's own
integer view), and convert to float32 -- by ml_dtypes', torch's or XLA's own conversion --
to exactly the value softfloat's ``decode`` gives (NaN where NaN, the sign of zero kept).
Dtype names below are written out by hand, not taken from softfloat's tables.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import softfloat as sf

# torch is optional (the torch extra): the tests that use it take the ``torch`` fixture of
# conftest.py, which skips them, naming the install command, where it is missing.

README = Path(__file__).resolve().parent.parent / "README.md"

#: (format, ml_dtypes/numpy type, torch dtype name or None), written out independently
EXCHANGED = [
    (sf.fp16, np.float16, "float16"),
    (sf.bf16, ml_dtypes.bfloat16, "bfloat16"),
    (sf.fp8_e4m3, ml_dtypes.float8_e4m3fn, "float8_e4m3fn"),
    (sf.fp8_e5m2, ml_dtypes.float8_e5m2, "float8_e5m2"),
    (sf.fp8_e4m3fnuz, ml_dtypes.float8_e4m3fnuz, "float8_e4m3fnuz"),
    (sf.fp8_e5m2fnuz, ml_dtypes.float8_e5m2fnuz, "float8_e5m2fnuz"),
    (sf.Format(exponent_bits=4, mantissa_bits=3), ml_dtypes.float8_e4m3, None),
    (sf.Format(exponent_bits=3, mantissa_bits=4), ml_dtypes.float8_e3m4, None),
    (sf.fp6_e3m2, ml_dtypes.float6_e3m2fn, None),
    (sf.fp6_e2m3, ml_dtypes.float6_e2m3fn, None),
    (sf.fp4_e2m1, ml_dtypes.float4_e2m1fn, None),
]
IDS = [f.name for f, _, _ in EXCHANGED]
TORCH_EXCHANGED = [(f, t) for f, _, t in EXCHANGED if t is not None]


def every_pattern(fmt):
    return np.arange(1 << fmt.bits, dtype=np.uint64).astype(fmt.storage_dtype)


def assert_same_values(expected, got):
    """Equal float32 values, NaN where NaN, and the same sign of zero."""
    with np.errstate(invalid="ignore"):  # signaling NaNs quieted by the cast
        expected, got = np.asarray(expected, np.float32), np.asarray(got, np.float32)
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got.view(np.uint32)[~nan], expected.view(np.uint32)[~nan])


# =====================================================================================
# ml_dtypes
# =====================================================================================
@pytest.mark.parametrize("fmt, mltype, _", EXCHANGED, ids=IDS)
def test_ml_dtypes_round_trip_every_pattern(fmt, mltype, _):
    p = every_pattern(fmt)
    x = sf.to_ml_dtypes(p, fmt)
    assert x.dtype == np.dtype(mltype)
    assert np.shares_memory(x, p)  # a view: storage dtype given, no copy
    # the same bytes as the patterns, read by numpy's own view
    assert x.tobytes() == p.tobytes()
    bits, got = sf.bits_of(x)
    assert got == fmt and np.shares_memory(bits, x)
    np.testing.assert_array_equal(bits, p)
    assert bits.dtype == fmt.storage_dtype
    # values: ml_dtypes' own conversion against softfloat's exact decode
    assert_same_values(x.astype(np.float32), sf.decode(p, fmt))


@pytest.mark.parametrize("fmt, mltype, _", EXCHANGED, ids=IDS)
def test_bits_of_an_array_ml_dtypes_made(fmt, mltype, _):
    # values converted by ml_dtypes (round to nearest even) give softfloat's encode bits
    rng = np.random.default_rng(0)
    v = (rng.standard_normal(2000) * 2.0 ** rng.integers(-12, 12, 2000)).astype(np.float32)
    v = v[np.abs(v) <= fmt.max_finite]  # ml_dtypes and softfloat agree on in-range values
    bits, got = sf.bits_of(v.astype(mltype))
    assert got == fmt
    np.testing.assert_array_equal(bits, sf.encode(v, fmt))


def test_bits_of_is_a_writable_view_of_strided_and_swapped_arrays():
    x = np.arange(12, dtype=np.float32).astype(ml_dtypes.bfloat16).reshape(3, 4)[:, ::2]
    bits, fmt = sf.bits_of(x)
    assert fmt is sf.bf16 and bits.shape == (3, 2) and np.shares_memory(bits, x)
    bits[0, 0] = 0x3F80  # 1.0 in bf16, written through the view
    assert float(x[0, 0]) == 1.0
    big = np.array([1.0, -0.5], dtype=">f4")
    b, f = sf.bits_of(big)
    assert f is sf.fp32 and np.shares_memory(b, big)
    assert [int(v) for v in b] == [0x3F800000, 0xBF000000]


def test_to_ml_dtypes_converts_other_integer_arrays():
    x = sf.to_ml_dtypes([0x3F80, 0xC000], "bf16")  # a list: converted (a copy), checked
    assert x.dtype == np.dtype(ml_dtypes.bfloat16) and x.astype(np.float32).tolist() == [1.0, -2.0]
    wide = np.array([0x38, 0x7E], dtype=np.int64)
    y = sf.to_ml_dtypes(wide, "e4m3")
    assert not np.shares_memory(y, wide) and y.astype(np.float32).tolist() == [1.0, 448.0]


# =====================================================================================
# torch
# =====================================================================================
@pytest.mark.parametrize("fmt, name", TORCH_EXCHANGED, ids=[f.name for f, _ in TORCH_EXCHANGED])
def test_torch_round_trip_every_pattern(fmt, name, torch):
    p = every_pattern(fmt)
    t = sf.to_torch(p, fmt)
    assert t.dtype == getattr(torch, name) and t.device.type == "cpu"
    ints = {1: torch.uint8, 2: torch.int16}[t.element_size()]
    assert t.view(ints).numpy().tobytes() == p.tobytes()  # torch's own view of the bytes
    assert np.shares_memory(t.view(ints).numpy(), p)  # from_numpy: the same memory
    bits, got = sf.bits_of(t)
    assert got == fmt and np.shares_memory(bits, p)
    np.testing.assert_array_equal(bits, p)
    # values: torch's own conversion against softfloat's exact decode
    assert_same_values(t.float().numpy(), sf.decode(p, fmt))


@pytest.mark.parametrize("fmt", [sf.fp32, sf.fp64], ids=["fp32", "fp64"])
def test_torch_wide_floats_sampled(fmt, torch):
    rng = np.random.default_rng(1)
    p = rng.integers(0, 1 << fmt.bits, 4096, dtype=np.uint64, endpoint=False).astype(fmt.storage_dtype)
    t = sf.to_torch(p, fmt)
    assert t.dtype == {32: torch.float32, 64: torch.float64}[fmt.bits]
    bits, got = sf.bits_of(t)
    assert got is fmt
    np.testing.assert_array_equal(bits, p)


def test_bits_of_torch_reads_parameters_and_grad_tensors_without_recording(torch):
    w = torch.nn.Parameter(torch.tensor([0.1, -3.0], dtype=torch.bfloat16))
    bits, fmt = sf.bits_of(w)
    assert fmt is sf.bf16
    np.testing.assert_array_equal(bits, sf.encode(np.float32([0.1, -3.0]), "bf16"))
    with torch.no_grad():
        w.mul_(2)  # the view follows the tensor: same memory
    np.testing.assert_array_equal(bits, sf.encode(np.float32([0.2001953125, -6.0]), "bf16"))
    assert w.grad is None


def test_to_torch_copies_what_torch_cannot_share(torch):
    p = sf.encode(np.linspace(-4, 4, 10), "bf16")
    strided = sf.to_torch(p[::2], "bf16")
    readonly = p.copy()
    readonly.flags.writeable = False
    ro = sf.to_torch(readonly, "bf16")  # no warning about non-writable arrays (warnings are errors)
    swapped = sf.to_torch(p.astype(">u2"), "bf16")
    for t, want in ((strided, p[::2]), (ro, p), (swapped, p)):
        np.testing.assert_array_equal(sf.bits_of(t)[0], want)
    assert not np.shares_memory(sf.bits_of(ro)[0], readonly)


# =====================================================================================
# errors
# =====================================================================================
def test_bits_of_refuses_what_is_not_a_float_array():
    with pytest.raises(TypeError, match="integers are bit patterns already"):
        sf.bits_of(np.arange(3))
    with pytest.raises(TypeError, match="float array or tensor"):
        sf.bits_of([1.0, 2.0])


def test_bits_of_refuses_an_integer_tensor(torch):
    with pytest.raises(TypeError, match="torch tensor of dtype torch.int32"):
        sf.bits_of(torch.arange(3, dtype=torch.int32))


@pytest.mark.parametrize("name", ["float8_e8m0fnu", "float8_e4m3b11fnuz"])
def test_bits_of_names_dtypes_without_a_format(name):
    x = np.zeros(2, dtype=getattr(ml_dtypes, name))
    with pytest.raises(ValueError, match=f"{name}.*bfloat16, float8_e4m3fn"):
        sf.bits_of(x)


def test_bits_of_torch_dtypes_without_a_format_and_other_devices(torch):
    with pytest.raises(ValueError, match="float4_e2m1fn_x2"):
        sf.bits_of(torch.zeros(2, dtype=torch.uint8).view(torch.float4_e2m1fn_x2))
    with pytest.raises(ValueError, match=r"on meta.*x\.cpu\(\)"):
        sf.bits_of(torch.zeros(2, dtype=torch.bfloat16, device="meta"))
    with pytest.raises(ValueError, match=r"on meta.*x\.cpu\(\)"):
        sf.encode(torch.zeros(2, device="meta"), "bf16")


def test_bits_of_sub_byte_formats_with_stray_high_bits():
    x = np.array([0x12, 0x02], dtype=np.uint8).view(ml_dtypes.float4_e2m1fn)  # 0x12: bit 4 set
    with pytest.raises(ValueError, match=r"4 bits.*\[0\] = 18"):
        sf.bits_of(x)


@pytest.mark.parametrize("fmt", ["tf32", "e6m9"])
def test_formats_without_a_dtype(fmt):
    with pytest.raises(ValueError, match=rf"fmt={fmt} has no ml_dtypes dtype.*bf16 \(bfloat16\)"):
        sf.to_ml_dtypes([0], fmt)
    with pytest.raises(ValueError, match=rf"fmt={fmt} has no torch dtype.*fp8_e4m3 \(torch.float8_e4m3fn\)"):
        sf.to_torch([0], fmt)


def test_to_torch_without_torch_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    with pytest.raises(ImportError, match=r"softfloat.to_torch needs torch, which is not installed; "
                       r'pip install "softfloat-emu\[torch\]"'):
        sf.to_torch(np.uint16([0x3F80]), "bf16")


def test_torch_has_no_fp6_fp4_dtype():
    with pytest.raises(ValueError, match="fmt=fp4_e2m1 has no torch dtype"):
        sf.to_torch([1], "fp4_e2m1")


def test_to_functions_check_the_patterns():
    with pytest.raises(ValueError, match="does not fit the format's 8 bits"):
        sf.to_ml_dtypes([0x100], "e4m3")


def test_to_torch_checks_the_patterns(torch):
    with pytest.raises(TypeError, match="integer dtype holding bit patterns"):
        sf.to_torch(np.float32([1.0]), "fp32")


# =====================================================================================
# encode and quantize read tensors and foreign arrays
# =====================================================================================
def test_encode_reads_torch_tensors_by_value(torch):
    rng = np.random.default_rng(2)
    v = rng.standard_normal(1000).astype(np.float32) * 100
    t32 = torch.from_numpy(v.copy()).requires_grad_(True)
    np.testing.assert_array_equal(sf.encode(t32, "e4m3", saturate=True), sf.encode(v, "e4m3", saturate=True))
    assert t32.grad is None and t32.grad_fn is None
    tb = torch.from_numpy(v).to(torch.bfloat16)
    expected = sf.encode(tb.float().numpy(), "fp8_e5m2")  # torch's own exact widening
    np.testing.assert_array_equal(sf.encode(tb, "fp8_e5m2"), expected)
    q = sf.quantize(tb, "fp8_e5m2")
    assert q.dtype == np.float32
    np.testing.assert_array_equal(q, sf.decode(expected, "fp8_e5m2", np.float32))


def test_encode_reads_ml_dtypes_arrays_by_value():
    p = every_pattern(sf.fp8_e5m2)
    x = sf.to_ml_dtypes(p, "fp8_e5m2")
    # every fp8_e5m2 value is an fp16 value: encoding into fp16 is exact, NaNs stay NaN
    assert_same_values(sf.decode(sf.encode(x, "fp16"), "fp16"), x.astype(np.float32))


class ArrayOnly:
    def __init__(self, a):
        self._a = a

    def __array__(self, dtype=None, copy=None):
        return self._a


class DLPackOnly:
    def __init__(self, a):
        self._a = a

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


@pytest.mark.parametrize("wrap", [ArrayOnly, DLPackOnly])
def test_encode_reads_array_and_dlpack_producers(wrap):
    v = np.array([0.1, 1e-6, 7e4, -2.5])
    np.testing.assert_array_equal(sf.encode(wrap(v), "fp16"), sf.encode(v, "fp16"))
    np.testing.assert_array_equal(sf.quantize(wrap(v), "bf16"), sf.quantize(v, "bf16"))


def test_encode_names_unreadable_producers():
    class Broken:
        def __array__(self, dtype=None, copy=None):
            raise RuntimeError("no host copy")

    with pytest.raises(TypeError, match="x could not be read as a host array.*no host copy"):
        sf.encode(Broken(), "fp16")


# =====================================================================================
# JAX (only where installed)
# =====================================================================================
def _jax():
    return pytest.importorskip("jax.numpy", reason="JAX is not in the test extra (a ~600 MB "
                               "install); pip install jax to run the JAX round trips")


JAX_EXCHANGED = [(f, t) for f, t, _ in EXCHANGED if sf.dtype_names(f)["jax"]]


@pytest.mark.parametrize("fmt, mltype", JAX_EXCHANGED, ids=[f.name for f, _ in JAX_EXCHANGED])
def test_jax_round_trip_every_pattern(fmt, mltype):
    jnp = _jax()
    p = every_pattern(fmt)
    x = jnp.asarray(sf.to_ml_dtypes(p, fmt))
    assert x.dtype == np.dtype(mltype)
    bits, got = sf.bits_of(x)
    assert got == fmt
    np.testing.assert_array_equal(bits, p)
    # XLA's own conversion against softfloat's exact decode
    assert_same_values(np.asarray(x.astype(jnp.float32)), sf.decode(p, fmt))
    np.testing.assert_array_equal(sf.encode(x, "fp32"), sf.encode(sf.decode(p, fmt), "fp32"))


def test_jax_names_in_the_table_exist():
    jnp = _jax()
    for fmt in sf.catalogue():
        name = sf.dtype_names(fmt)["jax"]
        if name:
            assert np.dtype(getattr(jnp, name.rsplit(".", 1)[1])) == np.dtype(sf.to_ml_dtypes([0], fmt).dtype)
        elif sf.dtype_names(fmt)["ml_dtypes"]:  # named by jax.numpy, but XLA holds no array of it
            with pytest.raises(Exception, match="PrimitiveType"):
                jnp.asarray(sf.to_ml_dtypes([0], fmt))


# =====================================================================================
# the README's table
# =====================================================================================
def dtype_table() -> str:
    """The README's table, from softfloat's own mapping (dtype_names)."""
    def cell(name):
        return f"`{name}`" if name else "--"

    rows = ["| format | ml_dtypes / numpy | torch | JAX |", "|---|---|---|---|"]
    for fmt in sf.catalogue():
        names = sf.dtype_names(fmt)
        rows.append(f"| `{fmt.name}` | {cell(names['ml_dtypes'])} | {cell(names['torch'])} | "
                    f"{cell(names['jax'])} |")
    return "\n".join(rows)


def test_readme_dtype_table_is_in_sync():
    text = README.read_text()
    found = re.search(r"<!-- dtype table: .*? -->\n(.*?)\n<!-- end of dtype table -->", text, re.S)
    assert found, "README.md lacks the dtype table between its markers"
    assert found[1] == dtype_table(), "README's dtype table is stale; replace it with:\n" + dtype_table()


def test_table_names_exist_in_their_libraries():
    for fmt in sf.catalogue():
        names = sf.dtype_names(fmt)
        if names["ml_dtypes"]:
            module, attr = names["ml_dtypes"].split(".")
            assert sf.as_format(getattr({"numpy": np, "ml_dtypes": ml_dtypes}[module], attr)) == fmt


def test_table_names_exist_in_torch(torch):
    for fmt in sf.catalogue():
        names = sf.dtype_names(fmt)
        if names["torch"]:
            assert sf.as_format(getattr(torch, names["torch"].split(".")[1])) == fmt


def test_expected_table_rows():
    # spot checks written out by hand
    assert sf.dtype_names("fp8_e4m3") == {"ml_dtypes": "ml_dtypes.float8_e4m3fn",
                                          "torch": "torch.float8_e4m3fn",
                                          "jax": "jax.numpy.float8_e4m3fn"}
    assert sf.dtype_names("fp6_e2m3")["torch"] is None
    assert sf.dtype_names("fp4_e2m1")["ml_dtypes"] == "ml_dtypes.float4_e2m1fn"


def test_bit_pattern_and_value_arguments_take_tensors_too(torch):
    # ops, decode and error_stats read torch (and other __array__) inputs as ndarrays
    one = torch.tensor([0x3C00, 0x7C00], dtype=torch.int32)
    assert sf.decode(one, "fp16").tolist() == [1.0, np.inf]
    assert sf.add(one[:1], np.array([0x3C00]), "fp16").tolist() == [0x4000]
    x = torch.tensor([0.1, 3.3])
    assert sf.error_stats(x, sf.encode(x, "bf16"), "bf16") == sf.error_stats(x.numpy(), sf.encode(x.numpy(), "bf16"), "bf16")
    with pytest.raises(TypeError, match="bits could not be read as a host array"):
        sf.decode(_Refuses(), "fp16")


class _Refuses:
    def __array__(self, dtype=None, copy=None):
        raise ValueError("refused")
