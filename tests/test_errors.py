"""Bad input fails early, with the right exception type and a message a person can act on.

Each test checks the exception type and that the message names the argument and what
came (the dtype, the value, the first offending index).  The last section checks that no
numpy RuntimeWarning leaks out of encode/decode/quantize on infinities, NaNs, overflow
and subnormals in any format and mode.
"""

from __future__ import annotations

import re
import warnings
from fractions import Fraction

import numpy as np
import pytest

import softfloat

#: float128 on x86-64 Linux; on platforms where long double is double it is simply float64
HAS_LONGDOUBLE = np.dtype(np.longdouble) != np.dtype(np.float64)
needs_longdouble = pytest.mark.skipif(not HAS_LONGDOUBLE, reason="long double is float64 here")

CONVERTERS = [softfloat.encode, softfloat.quantize]
CONVERTER_IDS = ["encode", "quantize"]
BIT_READERS = [softfloat.decode, softfloat.fields, softfloat.classify, softfloat.is_nan,
               softfloat.is_finite]
BIT_READER_IDS = ["decode", "fields", "classify", "is_nan", "is_finite"]


# ---------------------------------------------------------------------------------------
# x: values to encode / quantize
# ---------------------------------------------------------------------------------------
BAD_ARRAYS = [
    pytest.param(np.array([1 + 2j, 3j]), "complex128", id="complex128"),
    pytest.param(np.array([1 + 2j], dtype=np.complex64), "complex64", id="complex64"),
    pytest.param(np.array([1.0, None], dtype=object), "object", id="object-with-None"),
    pytest.param(np.array([1, 2], dtype=object), "object", id="object-ints"),
    pytest.param(np.array(["1.5", "2"]), "<U3", id="unicode"),
    pytest.param(np.array([b"1.5"]), "|S3", id="bytes"),
    pytest.param(np.array([True, False]), "bool", id="bool"),
    pytest.param(np.array([1.0], dtype=np.longdouble), np.dtype(np.longdouble).name, marks=needs_longdouble,
                 id="longdouble"),
    pytest.param(np.array(["2020-01-01"], dtype="datetime64[D]"), "datetime64[D]", id="datetime64"),
]


@pytest.mark.parametrize("convert", CONVERTERS, ids=CONVERTER_IDS)
@pytest.mark.parametrize(("x", "dtype_text"), BAD_ARRAYS)
def test_unsupported_array_dtype(convert, x, dtype_text):
    with pytest.raises(TypeError) as info:
        convert(x, "bf16")
    message = str(info.value)
    assert message.startswith("x "), message
    assert dtype_text in message, message


def test_complex_message_explains():
    with pytest.raises(TypeError, match=r"x has dtype complex128: complex values"):
        softfloat.encode(np.array([1j]), "fp16")


def test_bool_message_suggests_the_fix():
    with pytest.raises(TypeError, match=r"x has dtype bool: .*astype\(np\.uint8\)"):
        softfloat.encode(np.array([True]), "fp16")


@needs_longdouble
@pytest.mark.parametrize("convert", CONVERTERS, ids=CONVERTER_IDS)
def test_longdouble_scalar(convert):
    with pytest.raises(TypeError, match=rf"x has dtype {np.dtype(np.longdouble).name}: only float16, "
                                        r"float32 and float64"):
        convert(np.longdouble(1.5), "fp16")


@pytest.mark.parametrize("convert", CONVERTERS, ids=CONVERTER_IDS)
@pytest.mark.parametrize(("x", "type_name"), [
    (True, "bool"), (1 + 2j, "complex"), (None, "NoneType"), (object(), "object"),
    ({1.0}, "set"), (b"1.5", "bytes"),
], ids=["bool", "complex", "None", "object", "set", "bytes"])
def test_unsupported_scalar_type(convert, x, type_name):
    with pytest.raises(TypeError) as info:
        convert(x, "fp16")
    message = str(info.value)
    assert message.startswith("x must be"), message
    assert f"({type_name})" in message, message


@pytest.mark.parametrize("convert", CONVERTERS, ids=CONVERTER_IDS)
@pytest.mark.parametrize("text", ["abc", "1.2.3", "1/0", "", "0x", "1e", "nan(1)", "0x1.8q3"])
def test_unparseable_string(convert, text):
    with pytest.raises(ValueError) as info:
        convert(text, "fp16")
    message = str(info.value)
    assert message.startswith(f"x={text!r} is not a number"), message
    assert "hex float" in message  # says what would be accepted


def test_ragged_list():
    with pytest.raises(TypeError, match=r"^x could not be read as a numeric array"):
        softfloat.encode([[1.0, 2.0], [3.0]], "fp16")


@pytest.mark.parametrize("convert", CONVERTERS, ids=CONVERTER_IDS)
@pytest.mark.parametrize("x", [[1.0, "2"], ["2", 1], [[1, 2], [3, "4.5"]], (np.float32(1), "2")],
                         ids=["float-str", "str-int", "nested", "tuple-numpy"])
def test_list_mixing_numbers_and_strings_says_so(convert, x):
    with pytest.raises(TypeError) as info:
        convert(x, "fp16")
    message = str(info.value)
    assert message.startswith("x mixes numbers and strings"), message
    assert "pass numbers only" in message and "float(" in message, message


def test_list_of_strings_only_is_a_string_array():
    with pytest.raises(TypeError, match=r"^x has dtype <U3: string arrays are not supported"):
        softfloat.encode(["1.5", "2"], "fp16")


OPS = [(softfloat.add, 2), (softfloat.mul, 2), (softfloat.sqrt, 1), (softfloat.fma, 3),
       (softfloat.convert, 1)]


def _call(op, arity, first):
    args = [first] + [0x3C00] * (arity - 1)
    return op(*args, "fp16", "fp32") if op is softfloat.convert else op(*args, "fp16")


@pytest.mark.parametrize(("op", "arity"), OPS, ids=lambda v: getattr(v, "__name__", str(v)))
@pytest.mark.parametrize("value", [1.5, np.float64(1.5), np.array([1.0, 2.5]), [1.0, 2.5],
                                   np.float32([0.5])], ids=["float", "np.float64", "array", "list", "float32"])
def test_ops_given_floats_point_to_encode(op, arity, value):
    with pytest.raises(TypeError) as info:
        _call(op, arity, value)
    message = str(info.value)
    name = "bits" if op is softfloat.convert else "a"
    assert message.startswith(f"{name} must "), message
    assert "softfloat.encode(" in message, message


@pytest.mark.parametrize(("op", "arity"), OPS[:2], ids=["add", "mul"])
def test_ops_given_a_mixed_list(op, arity):
    with pytest.raises(TypeError, match=r"^a mixes numbers and strings"):
        _call(op, arity, [0x3C00, "2"])


# ---------------------------------------------------------------------------------------
# bits: patterns to decode / classify
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("reader", BIT_READERS, ids=BIT_READER_IDS)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64], ids=lambda d: d.__name__)
def test_float_bit_array(reader, dtype):
    bits = np.array([1.0, 2.0], dtype=dtype)
    with pytest.raises(TypeError) as info:
        reader(bits, "fp16")
    message = str(info.value)
    assert message.startswith("bits must have an integer dtype"), message
    assert f"dtype {np.dtype(dtype).name}" in message, message
    assert ".view(fmt.storage_dtype)" in message  # the likely fix


@pytest.mark.parametrize("reader", BIT_READERS, ids=BIT_READER_IDS)
@pytest.mark.parametrize(("bits", "what"), [
    (np.array([True]), "dtype bool"),
    (np.array([1j]), "dtype complex128"),
    (np.array(["1"]), "dtype <U1"),
    (1.0, "1.0 (float)"),
    ("3", "'3' (str)"),
    (True, "True (bool)"),
    (None, "None (NoneType)"),
], ids=["bool-array", "complex-array", "str-array", "float", "str", "bool", "None"])
def test_non_integer_bits(reader, bits, what):
    with pytest.raises(TypeError) as info:
        reader(bits, "fp8_e4m3")
    message = str(info.value)
    assert message.startswith("bits "), message
    assert what in message, message


@pytest.mark.parametrize("reader", BIT_READERS, ids=BIT_READER_IDS)
@pytest.mark.parametrize(("bits", "index", "value"), [
    (np.array([0, 1, 256, 300]), "bits[2]", "256"),
    (np.array([0, -1, 7]), "bits[1]", "-1"),
    (np.array([[0, 1], [2, 1000]], dtype=np.int16), "bits[1, 1]", "1000"),
    (np.array([5, 0x1FF], dtype=np.uint16), "bits[1]", "511"),
    (np.array([2**63], dtype=np.uint64), "bits[0]", str(2**63)),
    (np.array([-(2**63)], dtype=np.int64), "bits[0]", str(-(2**63))),
    ([3, 4, 256], "bits[2]", "256"),
], ids=["256", "negative", "2d-int16", "uint16", "uint64-top", "int64-min", "list"])
def test_bits_outside_the_format_width(reader, bits, index, value):
    with pytest.raises(ValueError) as info:
        reader(bits, "fp8_e4m3")
    message = str(info.value)
    assert f"{index} = {value}" in message, message
    assert "8 bits" in message and "0xff" in message, message


@pytest.mark.parametrize("reader", BIT_READERS, ids=BIT_READER_IDS)
@pytest.mark.parametrize(("bits", "shown"), [(256, "0x100"), (-1, "-0x1"), (np.int64(300), "0x12c")],
                         ids=["256", "-1", "np.int64-300"])
def test_scalar_bits_outside_the_format_width(reader, bits, shown):
    with pytest.raises(ValueError) as info:
        reader(bits, "fp8_e4m3")
    message = str(info.value)
    assert f"bits={shown}" in message, message
    assert "8 bits" in message


@pytest.mark.parametrize(("bits", "tail"), [([0, 300], "1 such value in all"),
                                            ([300, 301], "2 such values in all")])
def test_bits_outside_the_width_are_counted_in_words(bits, tail):
    with pytest.raises(ValueError) as info:
        softfloat.decode(np.array(bits), "fp8_e4m3")
    assert str(info.value).endswith(tail), str(info.value)


def test_bits_outside_width_of_a_4_bit_format():
    with pytest.raises(ValueError, match=r"4 bits: bits\[0\] = 16 \(valid patterns are 0 to 0xf\)"):
        softfloat.decode(np.array([16], dtype=np.uint8), "fp4_e2m1")


def test_huge_python_int_in_a_list_of_bits():
    """A pattern too big for any integer dtype is still 'outside the width', not an OverflowError."""
    with pytest.raises(ValueError) as info:
        softfloat.decode([1, 2**70], "fp8_e4m3")
    assert "bits" in str(info.value)


def test_compose_field_out_of_range_names_the_field():
    with pytest.raises(ValueError, match=r"^sign=0x2 does not fit the format's 1 bits"):
        softfloat.compose(2, 0, 0, "bf16")
    with pytest.raises(ValueError, match=r"^exponent holds a value .*exponent\[1\] = 256"):
        softfloat.compose(0, np.array([1, 256]), 0, "bf16")
    with pytest.raises(ValueError, match=r"^significand=0x80 does not fit the format's 7 bits"):
        softfloat.compose(0, 1, 128, "bf16")


# ---------------------------------------------------------------------------------------
# fmt, rounding, tininess and the boolean switches
# ---------------------------------------------------------------------------------------
ALL_FUNCTIONS = [
    (softfloat.encode, 1.0), (softfloat.quantize, 1.0), (softfloat.decode, 1),
    (softfloat.fields, 1), (softfloat.classify, 1), (softfloat.is_zero, 1),
]
ALL_IDS = ["encode", "quantize", "decode", "fields", "classify", "is_zero"]


@pytest.mark.parametrize(("function", "arg"), ALL_FUNCTIONS, ids=ALL_IDS)
def test_unknown_format_name_lists_the_choices(function, arg):
    with pytest.raises(ValueError) as info:
        function(arg, "fp7")
    message = str(info.value)
    assert message.startswith("fmt='fp7' is not a known format"), message
    for fmt in softfloat.catalogue():
        assert fmt.name in message
    assert "half" in message and "bfloat16" in message  # aliases too
    assert "softfloat.Format(" in message  # and how to build a custom one


@pytest.mark.parametrize(("function", "arg"), ALL_FUNCTIONS, ids=ALL_IDS)
@pytest.mark.parametrize(("fmt", "shown"), [(16, "16 (int)"), (None, "None (NoneType)"),
                                            (float, "(type)"), (b"bf16", "b'bf16' (bytes)")],
                         ids=["int", "None", "python-type", "bytes"])
def test_format_of_wrong_type(function, arg, fmt, shown):
    with pytest.raises(TypeError) as info:
        function(arg, fmt)
    message = str(info.value)
    assert message.startswith("fmt must be a softfloat.Format, a format name such as 'bf16' or "
                              "'e6m9', or a float dtype"), message
    assert shown in message, message


@pytest.mark.parametrize("convert", CONVERTERS, ids=CONVERTER_IDS)
@pytest.mark.parametrize("rounding", ["nearest", "round_half_even", "up", "truncate", ""])
def test_unknown_rounding_lists_the_modes(convert, rounding):
    with pytest.raises(ValueError) as info:
        convert(1.0, "bf16", rounding=rounding)
    message = str(info.value)
    assert message.startswith(f"rounding={rounding!r} is not valid"), message
    for mode in softfloat.Rounding:
        assert repr(mode.value) in message


@pytest.mark.parametrize("convert", CONVERTERS, ids=CONVERTER_IDS)
@pytest.mark.parametrize(("rounding", "shown"), [(0, "0 (int)"), (np.float64(1), "(float64)")],
                         ids=["int", "float"])
def test_rounding_of_wrong_type(convert, rounding, shown):
    with pytest.raises(TypeError) as info:
        convert(1.0, "bf16", rounding=rounding)
    message = str(info.value)
    assert message.startswith("rounding must be one of 'nearest_even'"), message
    assert shown in message, message


@pytest.mark.parametrize("convert", CONVERTERS, ids=CONVERTER_IDS)
def test_unknown_tininess(convert):
    with pytest.raises(ValueError, match=r"^tininess='during' is not valid; choose one of 'after', 'before'$"):
        convert(1.0, "bf16", tininess="during")


@pytest.mark.parametrize("convert", CONVERTERS, ids=CONVERTER_IDS)
def test_tininess_of_wrong_type(convert):
    with pytest.raises(TypeError, match=r"^tininess must be one of 'after', 'before' .*got True \(bool\)"):
        convert(1.0, "bf16", tininess=True)


@pytest.mark.parametrize("convert", CONVERTERS, ids=CONVERTER_IDS)
@pytest.mark.parametrize("switch", ["saturate", "subnormals", "return_flags"])
@pytest.mark.parametrize(("value", "shown"), [(1, "1 (int)"), ("yes", "'yes' (str)"),
                                              (np.array([True]), "an array of dtype bool")],
                         ids=["int", "str", "array"])
def test_switch_must_be_a_bool(convert, switch, value, shown):
    with pytest.raises(TypeError) as info:
        convert(1.0, "bf16", **{switch: value})
    message = str(info.value)
    assert message.startswith(f"{switch} must be True or False; got"), message
    assert shown in message, message


@pytest.mark.parametrize("convert", CONVERTERS, ids=CONVERTER_IDS)
def test_return_flags_must_be_a_bool_not_none(convert):
    with pytest.raises(TypeError, match=r"^return_flags must be True or False; got None \(NoneType\)"):
        convert(1.0, "bf16", return_flags=None)


@pytest.mark.parametrize("convert", CONVERTERS, ids=CONVERTER_IDS)
def test_none_shortcuts_mean_the_defaults(convert):
    # None is "not given": the attributes' field (here the defaults) is used
    x = [1e-40, 1e39, 0.1]
    given = convert(x, "bf16", rounding=None, saturate=None, subnormals=None, tininess=None, return_flags=True)
    plain = convert(x, "bf16", rounding="nearest_even", saturate=False, subnormals=True, tininess="after",
                    return_flags=True)
    assert np.array_equal(given[0], plain[0]) and given[1].raised() == plain[1].raised()


@pytest.mark.parametrize("switch", ["saturate", "subnormals", "return_flags"])
def test_numpy_bools_are_accepted_as_switches(switch):
    softfloat.encode(1.0, "bf16", **{switch: np.True_})


@pytest.mark.parametrize("convert", CONVERTERS, ids=CONVERTER_IDS)
@pytest.mark.parametrize("rounding", ["stochastic", "nearest_even"])
@pytest.mark.parametrize(("rng", "shown"), [
    ("abc", "'abc' (str)"), (1.5, "1.5 (float)"), (np.random.RandomState(0), "(RandomState)"),
    (np.random.PCG64(0), "(PCG64)"),
], ids=["str", "float", "RandomState", "BitGenerator"])
def test_bad_rng(convert, rounding, rng, shown):
    with pytest.raises(TypeError) as info:
        convert(np.array([1.1]), "bf16", rounding=rounding, rng=rng)
    message = str(info.value)
    assert message.startswith("rng must be a numpy.random.Generator, an int seed or None"), message
    assert shown in message, message


# ---------------------------------------------------------------------------------------
# decode's dtype
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(("fmt", "dtype"), [
    ("bf16", np.float16), ("fp32", np.float16), ("fp64", np.float32), ("tf32", np.float16),
], ids=["bf16-f16", "fp32-f16", "fp64-f32", "tf32-f16"])
def test_decode_dtype_too_narrow(fmt, dtype):
    with pytest.raises(ValueError) as info:
        softfloat.decode(1, fmt, dtype=dtype)
    message = str(info.value)
    assert message.startswith(f"dtype={np.dtype(dtype).name} cannot hold every {fmt} value exactly"), message
    assert "float64" in message


@pytest.mark.parametrize(("dtype", "shown"), [
    (np.int32, "int32"),
    pytest.param(np.longdouble, np.dtype(np.longdouble).name, marks=needs_longdouble, id="longdouble"),
    ("foo", "'foo' (str)"),
    (np.complex128, "complex128"),
], ids=["int32", "longdouble", "str", "complex"])
def test_decode_dtype_not_a_supported_float(dtype, shown):
    with pytest.raises(TypeError) as info:
        softfloat.decode(1, "bf16", dtype=dtype)
    message = str(info.value)
    assert message.startswith("dtype must be float16, float32 or float64; got"), message
    assert shown in message, message


# ---------------------------------------------------------------------------------------
# numpy.matrix and masked arrays: refused up front, with the fix
# ---------------------------------------------------------------------------------------
MATRIX_TAKERS = [
    pytest.param(lambda v: softfloat.encode(v, "bf16"), "x", id="encode"),
    pytest.param(lambda v: softfloat.quantize(v, "bf16"), "x", id="quantize"),
    pytest.param(lambda v: softfloat.asarray(v, "bf16"), "x", id="asarray"),
    pytest.param(lambda v: softfloat.decode(v.astype(np.uint16), "fp16"), "bits", id="decode"),
    pytest.param(lambda v: softfloat.add(v.astype(np.uint16), np.uint16(0x3C00), "fp16"), "a", id="add"),
]


@pytest.mark.parametrize(("take", "name"), MATRIX_TAKERS)
def test_matrix_is_refused_with_the_fix(take, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)  # numpy's advice against matrix
        m = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(TypeError) as info:
        take(m)
    message = str(info.value)
    assert message.startswith(f"{name} is a numpy.matrix"), message
    assert f"np.asarray({name})" in message, message


@pytest.mark.parametrize(("take", "name"), MATRIX_TAKERS)
def test_masked_array_is_refused_not_unmasked(take, name):
    x = np.ma.masked_array([1.0, 2.0, 3.0], mask=[False, True, False])
    with pytest.raises(TypeError) as info:
        take(x)
    message = str(info.value)
    assert message.startswith(f"{name} is a numpy.ma.MaskedArray (1 masked value of 3)"), message
    assert f"{name}.filled(" in message and f"{name}.data" in message, message


def test_plain_ndarray_subclasses_still_pass(tmp_path):
    np.save(tmp_path / "x.npy", np.float32([1.5, 2.5]))
    mm = np.load(tmp_path / "x.npy", mmap_mode="r")  # a numpy.memmap
    assert softfloat.encode(mm, "bf16").tolist() == [0x3FC0, 0x4020]


# ---------------------------------------------------------------------------------------
# accumulator names and bits decoded in the wrong format
# ---------------------------------------------------------------------------------------
ONES = softfloat.encode(np.ones(3), "fp16")
REDUCERS = [
    pytest.param(lambda acc: softfloat.sum(ONES, "fp16", accumulator=acc), id="sum"),
    pytest.param(lambda acc: softfloat.vecdot(ONES, ONES, "fp16", accumulator=acc), id="vecdot"),
    pytest.param(lambda acc: softfloat.matmul(ONES[None], ONES[:, None], "fp16", accumulator=acc), id="matmul"),
]


@pytest.mark.parametrize("reduce", REDUCERS)
def test_unknown_accumulator_lists_presets_and_formats(reduce):
    with pytest.raises(ValueError) as info:
        reduce("h101")
    message = str(info.value)
    assert message.startswith("accumulator='h101' is neither a hardware preset nor a format "
                              "(did you mean 'h100'?)"), message
    presets = list(softfloat.accumulate.PRESETS)
    assert f"Hardware presets: {', '.join(presets)}" in message, message
    assert presets[0] == "v100" and presets[-1] == "b200"
    assert "h200 (= h100)" in message and "fp32" in message and "bf16" in message, message


def test_an_accumulator_name_far_from_every_preset_gets_no_guess():
    with pytest.raises(ValueError) as info:
        softfloat.sum(ONES, "fp16", accumulator="zzz")
    assert "did you mean" not in str(info.value) and "v100" in str(info.value)


@pytest.mark.parametrize("keepdims", [False, True], ids=["scalar", "array"])
def test_decoding_a_sum_in_the_wrong_format_names_the_bits_format(keepdims):
    total = softfloat.sum(ONES, "fp16", accumulator="fp32", keepdims=keepdims)
    with pytest.raises(ValueError) as info:
        softfloat.decode(total, "fp16")
    message = str(info.value)
    assert "does not fit the format's 16 bits" in message, message
    assert "the bits are uint32, the storage of 32-bit formats such as fp32" in message, message
    assert "accumulator's format, or out_format's" in message, message
    assert float(softfloat.decode(total, "fp32").squeeze()) == 3.0  # the fix


def test_the_storage_hint_names_the_unsigned_dtype_and_nothing_else():
    with pytest.raises(ValueError) as info:
        softfloat.decode(np.array([0x1FF], dtype=np.uint16), "fp8_e4m3")
    assert "uint16, the storage of 16-bit formats such as fp16, bf16" in str(info.value)
    with pytest.raises(ValueError) as info:
        softfloat.decode(np.array([0x1FFFF], dtype=np.uint64), "fp16")
    assert "uint64, the storage of 64-bit formats such as fp64" in str(info.value)
    for bits in (0x1FFFF, [0x1FFFF], np.array([0x1FFFF], dtype=np.int64)):  # no storage dtype to name
        with pytest.raises(ValueError) as info:
            softfloat.decode(bits, "fp16")
        assert "storage" not in str(info.value)


# ---------------------------------------------------------------------------------------
# no RuntimeWarning leaks
# ---------------------------------------------------------------------------------------
NASTY64 = np.array([
    0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 5e-324, -5e-324, 2.2250738585072014e-308,
    1.7976931348623157e308, -1.7976931348623157e308, 1e300, -1e-300, 1e-40, 65520.0, 3.5e38,
    1.0, -1.5, 0.1, 448.0, 464.0, 500.0, 6.0, 7.0, 1e-10,
    np.frombuffer(np.uint64(0x7FF0000000000001).tobytes(), np.float64)[0],  # signaling NaN
    np.frombuffer(np.uint64(0xFFF4000000000000).tobytes(), np.float64)[0],  # -sNaN with payload
])
NASTY32 = np.array([
    0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.1754944e-38, 3.4028235e38, -3.4028235e38,
    65520.0, 1e-10, 448.0, 500.0, 0.1,
], dtype=np.float32)
NASTY16 = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 6e-8, 65504.0, -65504.0, 1e-5, 448.0],
                   dtype=np.float16)
NASTY_INTS = [np.array([0, 1, -1, 2**63 - 1, -(2**63)], dtype=np.int64),
              np.array([0, 2**64 - 1, 2**53 + 1], dtype=np.uint64)]
FORMATS = list(softfloat.catalogue()) + [softfloat.Format(2, 1), softfloat.Format(3, 1, "fn"),
                                         softfloat.Format(11, 4), softfloat.Format(9, 40)]


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_no_runtime_warnings(fmt):
    inputs = [NASTY64, NASTY32, NASTY16, *NASTY_INTS, 10**400, Fraction(-1, 10**400), "-snan", "inf"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for x in inputs:
            for rounding in softfloat.Rounding:
                for saturate in (False, True):
                    for subnormals, tininess in ((True, "after"), (False, "before")):
                        kwargs = dict(rounding=rounding, saturate=saturate, subnormals=subnormals,
                                      tininess=tininess, rng=0, return_flags=True)
                        bits, _ = softfloat.encode(x, fmt, **kwargs)
                        softfloat.quantize(x, fmt, **kwargs)
                        softfloat.decode(bits, fmt)
                        softfloat.classify(np.atleast_1d(bits), fmt)
        everything = np.arange(min(1 << fmt.bits, 1 << 16), dtype=np.uint64)
        softfloat.decode(everything, fmt)
        softfloat.classify(everything, fmt)
        softfloat.fields(everything, fmt)


def test_message_helper_truncates_long_values():
    """A huge value in an error message is cut short, not dumped whole."""
    with pytest.raises(TypeError) as info:
        softfloat.encode(1.0, "bf16", saturate="x" * 500)
    assert len(str(info.value)) < 200
    assert re.search(r"\.\.\. \(str\)$", str(info.value))
