"""Input handling: shapes, layouts, dtypes, scalars, output dtypes and the Flags object.

* the input is never modified, in any mode, with or without flags;
* 0-d arrays and scalars give numpy scalars and 0-d flags; empty and 3-D arrays keep
  their shape; strided, transposed, reversed and big-endian inputs give exactly the bits
  of their contiguous native copy (including stochastic rounding with the same seed);
* integer arrays of every integer dtype give the same bits as the exact Python ints, and
  the right values according to MPFR (tests/oracle.py);
* quantize's output dtype follows its documented rule;
* the Flags object: any/count/raised/mask/summary/|, shapes like the result.
"""

from __future__ import annotations

import decimal
from fractions import Fraction

import numpy as np
import pytest

import softfloat
from softfloat import Flags
from tests.oracle import round_exact

MODES = [m.value for m in softfloat.Rounding]
DETERMINISTIC = [m for m in MODES if m != "stochastic"]
FORMATS = [softfloat.fp64, softfloat.fp32, softfloat.tf32, softfloat.fp16, softfloat.bf16,
           softfloat.fp8_e4m3, softfloat.fp8_e5m2fnuz, softfloat.fp4_e2m1, softfloat.Format(9, 40)]


def mixed_values(n: int, seed: int = 1) -> np.ndarray:
    """float64 values over a wide range of magnitudes, with signed zeros, infinities and NaN."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 2.0 ** rng.integers(-140, 140, n)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 65504.0, 448.0, 3e38, 1e-310])
    x[: min(n, specials.size)] = specials[: min(n, specials.size)]
    return x


def cast(x: np.ndarray, dtype) -> np.ndarray:
    """``x.astype(dtype)`` where overflow to infinity is intended (test data, not under test)."""
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# ---------------------------------------------------------------------------------------
# the input is never modified
# ---------------------------------------------------------------------------------------
def input_arrays():
    base = mixed_values(300)
    ints = np.random.default_rng(2).integers(-(2**62), 2**62, 200)
    return {
        "float64": base,
        "float32": cast(base, np.float32),
        "float16": cast(base, np.float16),
        "int64": ints,
        "uint8": np.arange(256, dtype=np.uint8),
        "strided": base[::3],
        "2d-transposed": base[:300].reshape(20, 15).T,
    }


INPUTS = input_arrays()


@pytest.mark.parametrize("convert", [softfloat.encode, softfloat.quantize], ids=["encode", "quantize"])
@pytest.mark.parametrize("return_flags", [False, True], ids=["bits", "flags"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(INPUTS))
def test_input_is_not_modified(convert, return_flags, mode, name):
    x = INPUTS[name]
    before = x.copy()
    convert(x, softfloat.bf16, rounding=mode, rng=0, return_flags=return_flags,
            subnormals=mode != "upward", saturate=mode == "odd")
    assert same_bits(x, before)
    assert x.flags.writeable


@pytest.mark.parametrize("dtype", [">f8", ">f4", ">i8"])
def test_big_endian_input_is_not_modified(dtype):
    x = cast(mixed_values(300), dtype) if dtype[1] == "f" else np.arange(-150, 150).astype(dtype)
    before = x.copy()
    for mode in MODES:
        softfloat.encode(x, softfloat.bf16, rounding=mode, rng=0, return_flags=True)
        assert same_bits(x, before), mode
    for mode in MODES:
        softfloat.quantize(x, softfloat.bf16, rounding=mode, rng=0, return_flags=True)
        assert same_bits(x, before), mode


def test_list_input_is_not_modified():
    x = [1.1, -2.5e-40, float("nan"), 3]
    before = list(x)
    softfloat.encode(x, "bf16", rounding="stochastic", rng=1, return_flags=True)
    softfloat.quantize(x, "fp8_e4m3", return_flags=True)
    assert x[:2] == before[:2] and x[3] == 3 and x[2] != x[2]


def test_read_only_input_is_accepted():
    x = mixed_values(50)
    x.flags.writeable = False
    bits = softfloat.encode(x, "fp16", rounding="stochastic", rng=0)
    x_copy = x.copy()
    assert same_bits(bits, softfloat.encode(x_copy, "fp16", rounding="stochastic", rng=0))


@pytest.mark.parametrize("reader", [softfloat.decode, softfloat.fields, softfloat.classify, softfloat.is_nan],
                         ids=["decode", "fields", "classify", "is_nan"])
def test_bit_input_is_not_modified(reader):
    bits = np.arange(1 << 16, dtype=np.uint16)
    before = bits.copy()
    reader(bits, "bf16")
    reader(bits.astype(">u2")[::-1], "fp16")
    assert same_bits(bits, before)


# ---------------------------------------------------------------------------------------
# scalars and 0-d arrays
# ---------------------------------------------------------------------------------------
SCALARS = [
    (1.5, "python-float"), (3, "python-int"), (-(2**80) - 1, "big-int"), (np.float32(1.5), "np.float32"),
    (np.float16(-0.0), "np.float16"), (np.float64(0.1), "np.float64"), (np.int8(-7), "np.int8"),
    (np.uint64(2**64 - 1), "np.uint64"), (np.array(2.5), "0-d-array"), (np.array(7, dtype=">i4"), "0-d-be"),
    (Fraction(1, 3), "Fraction"), (decimal.Decimal("0.1"), "Decimal"), ("0x1.8p-3", "hex-string"),
    ("-inf", "inf-string"),
]


@pytest.mark.parametrize("fmt", [softfloat.fp32, softfloat.bf16, softfloat.fp8_e4m3, softfloat.fp4_e2m1,
                                 softfloat.fp64], ids=lambda f: f.name)
@pytest.mark.parametrize(("x", "kind"), SCALARS, ids=[k for _, k in SCALARS])
def test_scalar_input_gives_numpy_scalar_and_0d_flags(x, kind, fmt):
    bits, flags = softfloat.encode(x, fmt, return_flags=True)
    assert isinstance(bits, np.generic) and not isinstance(bits, np.ndarray)
    assert type(bits) is fmt.storage_dtype.type
    assert flags.shape == ()
    for name, mask in flags:
        assert np.shape(mask) == () and np.asarray(mask).dtype == bool, name
    assert type(softfloat.encode(x, fmt)) is fmt.storage_dtype.type

    value, qflags = softfloat.quantize(x, fmt, return_flags=True)
    assert isinstance(value, np.floating) and np.ndim(value) == 0
    assert qflags.shape == ()
    assert qflags.count() == flags.count()
    decoded = softfloat.decode(bits, fmt)
    assert isinstance(decoded, np.float64)
    assert same_bits(np.float64(value), decoded)


NUMPY_LIKE_SCALARS = [(x, k) for x, k in SCALARS
                      if not isinstance(x, (str, Fraction, decimal.Decimal)) and k != "big-int"]


@pytest.mark.parametrize(("x", "kind"), NUMPY_LIKE_SCALARS, ids=[k for _, k in NUMPY_LIKE_SCALARS])
def test_scalar_gives_the_bits_of_a_one_element_array(x, kind):
    """A scalar and the same value in a 1-element array of its own dtype round alike."""
    for mode in DETERMINISTIC:
        scalar = softfloat.encode(x, "bf16", rounding=mode)
        array = softfloat.encode(np.array([x]), "bf16", rounding=mode)
        assert array.shape == (1,) and scalar == array[0]


def test_numpy_float32_scalar():
    bits = softfloat.encode(np.float32(1.5), softfloat.bf16)
    assert type(bits) is np.uint16 and bits == 0x3FC0  # 1.5 = 0x3FC0 in bfloat16
    value = softfloat.quantize(np.float32(1.1), softfloat.bf16)
    assert type(value) is np.float32 and value == np.float32(1.1015625)  # 141/128: 1.1 * 128 = 140.8


def test_decode_scalars():
    assert type(softfloat.decode(0x3C00, "fp16")) is np.float64
    assert softfloat.decode(np.uint8(0x7E), "fp8_e4m3") == 448.0
    assert type(softfloat.decode(np.uint8(0x38), "fp8_e4m3", dtype=np.float32)) is np.float32
    assert softfloat.decode(np.array(0x3C00), "fp16").shape == ()


def test_fields_of_a_scalar_are_scalars():
    sign, exponent, significand = softfloat.fields(0xBFC0, "bf16")
    assert (int(sign), int(exponent), int(significand)) == (1, 127, 0x40)
    assert all(np.ndim(f) == 0 for f in (sign, exponent, significand))


@pytest.mark.parametrize("bits", [0x7C00, np.uint16(0x7C00), np.array(0x7C00)],
                         ids=["int", "np.uint16", "0-d-array"])
def test_classify_and_predicates_of_a_scalar(bits):
    assert softfloat.classify(bits, "fp16") == "positiveInfinity"
    assert softfloat.is_infinite(bits, "fp16") is True
    assert softfloat.is_nan(bits, "fp16") is False


# ---------------------------------------------------------------------------------------
# shapes and layouts
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(0,), (3, 0, 2), (0, 0)], ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32, np.uint64],
                         ids=lambda d: np.dtype(d).name)
def test_empty_arrays(shape, dtype):
    x = np.zeros(shape, dtype=dtype)
    for fmt in (softfloat.bf16, softfloat.fp8_e5m2, softfloat.fp64):
        bits, flags = softfloat.encode(x, fmt, rounding="stochastic", rng=0, return_flags=True)
        assert bits.shape == shape and bits.dtype == fmt.storage_dtype
        assert flags.shape == shape and not flags.any()
        assert flags.summary() == "no flags raised (0 values)"
        values = softfloat.quantize(x, fmt)
        assert values.shape == shape
        assert softfloat.decode(bits, fmt).shape == shape


def test_encode_empty_list():
    assert softfloat.encode([], "fp16").shape == (0,)
    assert softfloat.quantize([], "fp16").shape == (0,)


def test_decode_empty_list():
    """[] has no integer dtype in numpy (it becomes float64), but it holds no bad pattern."""
    assert softfloat.decode([], "fp16").shape == (0,)


@pytest.mark.parametrize("mode", MODES)
def test_3d_array_equals_the_flat_result_reshaped(mode):
    x = mixed_values(4 * 5 * 6).reshape(4, 5, 6)
    bits, flags = softfloat.encode(x, "fp8_e5m2", rounding=mode, rng=3, return_flags=True)
    flat_bits, flat_flags = softfloat.encode(x.reshape(-1), "fp8_e5m2", rounding=mode, rng=3,
                                             return_flags=True)
    assert bits.shape == (4, 5, 6)
    assert same_bits(bits, flat_bits.reshape(4, 5, 6))
    assert flags.shape == (4, 5, 6)
    for (name, mask), (_, flat_mask) in zip(flags, flat_flags):
        assert mask.shape == (4, 5, 6) and same_bits(mask, flat_mask.reshape(4, 5, 6)), name
    values = softfloat.quantize(x, "fp8_e5m2", rounding=mode, rng=3)
    assert values.shape == (4, 5, 6)


BASE_2D = mixed_values(60 * 50, seed=5).reshape(60, 50)
VIEWS = {
    "every-third": lambda a: a.reshape(-1)[::3],
    "transposed": lambda a: a.T,
    "reversed": lambda a: a.reshape(-1)[::-1],
    "negative-column-stride": lambda a: a[:, ::-2],
    "both-strided-transposed": lambda a: a[::2, 1::3].T,
    "fortran-order": lambda a: np.asfortranarray(a),
    "big-endian": lambda a: a.astype(a.dtype.newbyteorder(">")),
    "big-endian-reversed": lambda a: a.astype(a.dtype.newbyteorder(">"))[::-1, ::-1],
    "one-column": lambda a: a[:, 7],
}
DTYPES = [np.float64, np.float32, np.float16]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("fmt", [softfloat.fp32, softfloat.bf16, softfloat.fp8_e4m3, softfloat.fp64],
                         ids=lambda f: f.name)
def test_layout_does_not_change_the_bits(fmt, view, dtype):
    x = VIEWS[view](cast(BASE_2D, dtype))
    contiguous = np.ascontiguousarray(x).astype(np.dtype(dtype))
    assert not (x.flags.c_contiguous and x.dtype.isnative)
    assert contiguous.flags.c_contiguous and contiguous.dtype.isnative
    for mode in MODES:
        kwargs = dict(rounding=mode, rng=11, return_flags=True)
        bits, flags = softfloat.encode(x, fmt, **kwargs)
        expected, expected_flags = softfloat.encode(contiguous, fmt, **kwargs)
        assert same_bits(bits, expected), mode
        assert flags.count() == expected_flags.count()
        for (_, a), (_, b) in zip(flags, expected_flags):
            assert same_bits(a, b)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("view", list(VIEWS))
def test_layout_does_not_change_quantized_values(view, dtype):
    x = VIEWS[view](cast(BASE_2D, dtype))
    contiguous = np.ascontiguousarray(x).astype(np.dtype(dtype))
    for fmt in (softfloat.bf16, softfloat.fp8_e4m3, softfloat.fp64):
        for mode in MODES:
            values, flags = softfloat.quantize(x, fmt, rounding=mode, rng=11, return_flags=True)
            expected, expected_flags = softfloat.quantize(contiguous, fmt, rounding=mode, rng=11,
                                                          return_flags=True)
            assert same_bits(values, expected), (fmt, mode)
            assert flags.count() == expected_flags.count()


@pytest.mark.parametrize("mode", ["nearest_even", "stochastic"])
def test_strided_input_longer_than_one_block(mode):
    """A strided view that spans several streaming blocks (> 2**14 elements)."""
    big = mixed_values(3 * 40_000, seed=9)
    x = big[::-3]
    assert x.size > 2 * softfloat.codec._BLOCK
    bits = softfloat.encode(x, "bf16", rounding=mode, rng=5)
    assert same_bits(bits, softfloat.encode(np.ascontiguousarray(x), "bf16", rounding=mode, rng=5))


@pytest.mark.parametrize(("native", "swapped"), [
    (np.float64, ">f8"), (np.float32, ">f4"), (np.float16, ">f2"), (np.int64, ">i8"), (np.int32, ">i4"),
    (np.uint16, ">u2"), (np.uint64, ">u8"),
], ids=lambda v: v if isinstance(v, str) else np.dtype(v).name)
def test_big_endian_arrays(native, swapped):
    if np.dtype(native).kind == "f":
        x = cast(mixed_values(500, seed=4), native)
    else:
        info = np.iinfo(native)
        x = np.random.default_rng(4).integers(info.min, info.max, 500, dtype=native, endpoint=True)
        x[:2] = info.min, info.max
    be = x.astype(swapped)
    assert not be.dtype.isnative
    for fmt in (softfloat.fp32, softfloat.bf16, softfloat.fp8_e5m2, softfloat.fp64):
        for mode in MODES:
            assert same_bits(softfloat.encode(be, fmt, rounding=mode, rng=2),
                             softfloat.encode(x, fmt, rounding=mode, rng=2)), (fmt, mode)


@pytest.mark.parametrize("container", [list, tuple])
def test_sequences_equal_arrays(container):
    x = mixed_values(40, seed=6)
    for fmt in (softfloat.fp16, softfloat.fp8_e4m3):
        assert same_bits(softfloat.encode(container(x.tolist()), fmt), softfloat.encode(x, fmt))
    nested = container([container([1.5, -2.25]), container([3e38, 1e-30])])
    assert softfloat.encode(nested, "bf16").shape == (2, 2)


# ---------------------------------------------------------------------------------------
# integer inputs
# ---------------------------------------------------------------------------------------
INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def integer_samples(dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    rng = np.random.default_rng(np.dtype(dtype).itemsize)
    edges = [info.min, info.max, 0, 1, info.max - 1, info.min + 1]
    if info.bits >= 64:
        edges += [2**53 + 1, 2**53 - 1, 2**62 + 1, 2**63 - 2**39 + 1, 2**24 + 1, 2**63 - 1024,
                  3 * 2**60 + 2**36]
        if info.min < 0:
            edges += [-(2**53) - 1, -(2**62) - 3, -(2**63) + 1]
        else:
            edges += [2**64 - 2**39, 2**64 - 2**40 - 1, 2**63 + 1]
    random = rng.integers(info.min, info.max, 40, dtype=dtype, endpoint=True)
    return np.concatenate([np.array(edges, dtype=dtype), random])


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_integer_arrays_equal_exact_python_ints(dtype, fmt):
    x = integer_samples(dtype)
    for mode in DETERMINISTIC:
        bits, flags = softfloat.encode(x, fmt, rounding=mode, return_flags=True)
        for i, v in enumerate(x.tolist()):
            expected, expected_flags = softfloat.encode(v, fmt, rounding=mode, return_flags=True)
            assert bits[i] == expected, (v, mode)
            assert {n: bool(m[i]) for n, m in flags} == {n: bool(m) for n, m in expected_flags}, (v, mode)


ORACLE_MODES = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd"]


@pytest.mark.parametrize("fmt", [softfloat.fp64, softfloat.fp32, softfloat.bf16, softfloat.fp16,
                                 softfloat.Format(9, 40)], ids=lambda f: f.name)
@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int32], ids=lambda d: np.dtype(d).name)
def test_integer_arrays_against_mpfr(dtype, fmt):
    x = integer_samples(dtype)
    for mode in ORACLE_MODES:
        values = softfloat.decode(softfloat.encode(x, fmt, rounding=mode), fmt)
        for v, got in zip(x.tolist(), values.tolist()):
            want = round_exact(Fraction(abs(v)), v < 0, fmt, mode)
            if isinstance(want.value, float):  # overflow to infinity
                assert got == want.value, (v, mode)
            else:
                assert Fraction(got) == want.value, (v, mode)


def test_integer_literals():
    """Hand-computed: 2**62 + 1 lies just above 2**62; int64 -2**63 is exact in every IEEE float."""
    assert softfloat.encode(np.array([2**62 + 1], dtype=np.int64), "fp32", rounding="upward")[0] == 0x5E800001
    assert softfloat.encode(np.array([2**62 + 1], dtype=np.int64), "fp32")[0] == 0x5E800000
    assert softfloat.encode(np.array([-(2**63)], dtype=np.int64), "fp64")[0] == 0xC3E0000000000000
    assert softfloat.encode(np.array([2**64 - 1], dtype=np.uint64), "fp64", rounding="downward")[0] \
        == 0x43EFFFFFFFFFFFFF
    assert softfloat.encode(np.array([2**64 - 1], dtype=np.uint64), "fp64")[0] == 0x43F0000000000000
    assert softfloat.encode(np.array([300], dtype=np.int16), "fp8_e4m3")[0] == 0x79  # 288 < 300 < 320: 288
    assert softfloat.encode(np.array([-7], dtype=np.int8), "fp4_e2m1")[0] == 0xF  # -7 -> -6 (saturates)


# ---------------------------------------------------------------------------------------
# quantize's output dtype
# ---------------------------------------------------------------------------------------
f16, f32, f64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
OUTPUT_DTYPES = [
    # float32 input: stays float32 where float32 holds every value of the format
    (f32, softfloat.fp32, f32), (f32, softfloat.tf32, f32), (f32, softfloat.fp16, f32),
    (f32, softfloat.bf16, f32), (f32, softfloat.fp8_e4m3, f32), (f32, softfloat.fp8_e5m2, f32),
    (f32, softfloat.fp8_e4m3fnuz, f32), (f32, softfloat.fp8_e5m2fnuz, f32), (f32, softfloat.fp6_e3m2, f32),
    (f32, softfloat.fp6_e2m3, f32), (f32, softfloat.fp4_e2m1, f32),
    (f32, softfloat.fp64, f64), (f32, softfloat.Format(9, 10), f64), (f32, softfloat.Format(8, 24), f64),
    # float16 input
    (f16, softfloat.fp16, f16), (f16, softfloat.fp8_e4m3, f16), (f16, softfloat.fp8_e5m2, f16),
    (f16, softfloat.fp8_e5m2fnuz, f16), (f16, softfloat.fp4_e2m1, f16),
    (f16, softfloat.bf16, f32), (f16, softfloat.tf32, f32), (f16, softfloat.fp32, f32),
    (f16, softfloat.fp64, f64),
    (f16, softfloat.Format(5, 10, "fnuz"), f32),  # its smallest subnormal 2**-25 is below float16's
    (f16, softfloat.Format(5, 11), f32),
    # float64 input: always float64
    (f64, softfloat.fp4_e2m1, f64), (f64, softfloat.bf16, f64), (f64, softfloat.fp64, f64),
]


@pytest.mark.parametrize(("in_dtype", "fmt", "out_dtype"), OUTPUT_DTYPES,
                         ids=[f"{i.name}-{f.name}" for i, f, _ in OUTPUT_DTYPES])
def test_quantize_output_dtype(in_dtype, fmt, out_dtype):
    x = np.array([1.0, 0.1, -3.0], dtype=in_dtype)
    assert softfloat.quantize(x, fmt).dtype == out_dtype
    # the value is exact in the output dtype: the same as decoding to float64
    values = softfloat.quantize(x, fmt)
    assert np.array_equal(values.astype(np.float64), softfloat.decode(softfloat.encode(x, fmt), fmt))


@pytest.mark.parametrize(("in_dtype", "fmt", "out_dtype"), [
    (f32, softfloat.bf16, f32), (f16, softfloat.fp8_e4m3, f16), (f16, softfloat.bf16, f32),
    (f64, softfloat.fp16, f64), (f32, softfloat.fp64, f64),
], ids=["f32-bf16", "f16-e4m3", "f16-bf16", "f64-fp16", "f32-fp64"])
def test_quantize_output_dtype_for_big_endian_input(in_dtype, fmt, out_dtype):
    """A big-endian input follows the same rule as its native twin (the output is native)."""
    x = np.array([1.0, 0.1, -3.0], dtype=in_dtype.newbyteorder(">"))
    values = softfloat.quantize(x, fmt)
    assert values.dtype == out_dtype
    assert same_bits(values, softfloat.quantize(x.astype(in_dtype), fmt))


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_quantize_integer_arrays_give_float64(dtype):
    """Documented: "integer and scalar inputs give float64"."""
    for fmt in (softfloat.bf16, softfloat.fp8_e4m3, softfloat.fp32, softfloat.fp64):
        assert softfloat.quantize(np.array([1, 2, 3], dtype=dtype), fmt).dtype == f64, fmt.name


PY_SCALARS = [(1.5, "float"), (3, "int"), (Fraction(1, 3), "Fraction"), ("0.1", "str"),
              (decimal.Decimal("2.5"), "Decimal")]


@pytest.mark.parametrize(("x", "kind"), PY_SCALARS, ids=[k for _, k in PY_SCALARS])
@pytest.mark.parametrize("fmt", [softfloat.fp8_e4m3, softfloat.bf16, softfloat.fp64], ids=lambda f: f.name)
def test_quantize_python_scalars_give_float64(x, kind, fmt):
    assert type(softfloat.quantize(x, fmt)) is np.float64


def test_quantize_list_of_floats_gives_float64():
    assert softfloat.quantize([0.1, 0.2], "fp8_e4m3").dtype == f64


# ---------------------------------------------------------------------------------------
# Flags
# ---------------------------------------------------------------------------------------
def sample_flags():
    # 1e-40: a bf16 subnormal, inexact (underflow); 1e39: above bf16's max (overflow);
    # 1.0: exact; 3.1: inexact; signaling NaN: invalid
    snan = np.frombuffer(np.uint64(0x7FF0000000000001).tobytes(), np.float64)[0]
    x = np.array([1e-40, 1e39, 1.0, 3.1, snan])
    return softfloat.encode(x, "bf16", return_flags=True)


def test_flags_values_by_hand():
    _, flags = sample_flags()
    assert flags.shape == (5,)
    assert flags.invalid.tolist() == [False, False, False, False, True]
    assert flags.divide_by_zero.tolist() == [False] * 5
    assert flags.overflow.tolist() == [False, True, False, False, False]
    assert flags.underflow.tolist() == [True, False, False, False, False]
    assert flags.inexact.tolist() == [True, True, False, True, False]


def test_flags_any_count_raised_mask():
    _, flags = sample_flags()
    assert flags.any() is True
    assert flags.count() == {"invalid": 1, "divide_by_zero": 0, "overflow": 1, "underflow": 1, "inexact": 3}
    assert flags.to_dict() == flags.count()
    assert flags.raised() == ("invalid", "overflow", "underflow", "inexact")
    assert flags.mask().tolist() == [True, True, False, True, True]
    assert [name for name, _ in flags] == list(softfloat.FLAG_NAMES)
    assert softfloat.FLAG_NAMES == ("invalid", "divide_by_zero", "overflow", "underflow", "inexact")


def test_flags_none():
    flags = Flags.none((2, 3))
    assert flags.shape == (2, 3) and not flags.any() and flags.raised() == ()
    assert flags.count() == dict.fromkeys(softfloat.FLAG_NAMES, 0)
    assert flags.summary() == "no flags raised (6 values)"


def test_flags_summary_text():
    _, flags = sample_flags()
    assert flags.summary() == ("invalid: 1 of 5 (20.0%)\n"
                               "overflowed: 1 of 5 (20.0%)\n"
                               "underflowed: 1 of 5 (20.0%)\n"
                               "inexact: 3 of 5 (60.0%)")
    assert str(flags) == flags.summary()
    assert repr(flags) == "Flags(shape=(5,), invalid=1, divide_by_zero=0, overflow=1, underflow=1, inexact=3)"


def test_flags_summary_small_and_large_shares():
    x = np.ones(3000)
    x[0] = 1.1  # 1 inexact of 3000: 0.033...%
    x[1:3] = 1e-40  # 2 underflows: 0.0666...%
    _, flags = softfloat.encode(x, "bf16", return_flags=True)
    assert flags.summary() == "underflowed: 2 of 3000 (0.067%)\ninexact: 3 of 3000 (0.1%)"
    _, flags = softfloat.encode([1.1, 1.1, 1.0], "bf16", return_flags=True)
    assert flags.summary() == "inexact: 2 of 3 (66.7%)"


def test_flags_merge_with_or():
    a = softfloat.encode([1.0, 1e39, 1.1], "bf16", return_flags=True)[1]
    b = softfloat.encode([1e-40, 1.0, 1.0], "bf16", return_flags=True)[1]
    merged = a | b
    assert isinstance(merged, Flags) and merged.shape == (3,)
    assert merged.overflow.tolist() == [False, True, False]
    assert merged.underflow.tolist() == [True, False, False]
    assert merged.inexact.tolist() == [True, True, True]
    assert (a | Flags.none((3,))).count() == a.count()
    with pytest.raises(TypeError):
        a | 1  # noqa: B018


def test_flags_are_immutable():
    _, flags = sample_flags()
    with pytest.raises(AttributeError):
        flags.inexact = np.zeros(5, bool)


@pytest.mark.parametrize("shape", [(), (0,), (7,), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("convert", [softfloat.encode, softfloat.quantize], ids=["encode", "quantize"])
def test_flag_shapes_match_the_result(shape, convert):
    x = mixed_values(max(1, int(np.prod(shape))), seed=8)[: int(np.prod(shape))].reshape(shape)
    result, flags = convert(x, "fp8_e4m3", return_flags=True)
    assert flags.shape == np.shape(result) == shape
    for name, mask in flags:
        assert np.shape(mask) == shape and np.asarray(mask).dtype == bool, name


def test_flags_for_stochastic_rounding():
    x = np.array([1.0, 1.1, 1e-40, 1e39])
    _, flags = softfloat.encode(x, "bf16", rounding="stochastic", rng=0, return_flags=True)
    assert flags.inexact.tolist() == [False, True, True, True]
    assert flags.overflow.tolist() == [False, False, False, True]
