"""Format descriptors: every derived attribute against an independent oracle.

Oracles, none of which share code with softfloat:

* ``numpy.finfo`` for fp16/fp32/fp64 and ``ml_dtypes.finfo`` for bf16 and the FP8/FP6/FP4
  formats (the bias is read from the oracle dtype's own bit pattern of 1.0);
* enumeration of every bit pattern of the ml_dtypes types (``ml_dtypes`` does the
  decoding) for the special-value policy: infinities, NaNs, negative zero, largest finite;
* arithmetic identities with literal constants for tf32 and custom formats, plus brute
  force over all their bit patterns (decoded by ``softfloat.decode``; the set of values
  must have the claimed max, min, spacing at 1.0 and smallest normal).

Also: name lookup and aliases, equality and hashing by layout, immutability, repr/str,
and the constructor's argument validation.
"""

from __future__ import annotations

import dataclasses
import math

import ml_dtypes
import numpy as np
import pytest

import softfloat
from softfloat import Format, Specials

# (format, oracle dtype) pairs: finfo of the dtype is the oracle for the format
ORACLE_DTYPES = [
    (softfloat.fp64, np.float64),
    (softfloat.fp32, np.float32),
    (softfloat.fp16, np.float16),
    (softfloat.bf16, ml_dtypes.bfloat16),
    (softfloat.fp8_e4m3, ml_dtypes.float8_e4m3fn),
    (softfloat.fp8_e5m2, ml_dtypes.float8_e5m2),
    (softfloat.fp8_e4m3fnuz, ml_dtypes.float8_e4m3fnuz),
    (softfloat.fp8_e5m2fnuz, ml_dtypes.float8_e5m2fnuz),
    (softfloat.fp6_e3m2, ml_dtypes.float6_e3m2fn),
    (softfloat.fp6_e2m3, ml_dtypes.float6_e2m3fn),
    (softfloat.fp4_e2m1, ml_dtypes.float4_e2m1fn),
]
ORACLE_IDS = [f.name for f, _ in ORACLE_DTYPES]
ML_DTYPES = [(f, dt) for f, dt in ORACLE_DTYPES if dt not in (np.float16, np.float32, np.float64)]
SMALL_ML = [(f, dt) for f, dt in ML_DTYPES if f.bits <= 8]


def finfo(dtype):
    return np.finfo(dtype) if dtype in (np.float16, np.float32, np.float64) else ml_dtypes.finfo(dtype)


def unsigned_like(dtype) -> np.dtype:
    """The unsigned integer dtype with the same item size as ``dtype``."""
    return np.dtype(f"u{np.dtype(dtype).itemsize}")


def oracle_bias(dtype) -> int:
    """The biased exponent field of 1.0, read from the oracle dtype's own encoding."""
    fi = finfo(dtype)
    one = np.array(1.0, dtype=dtype).view(unsigned_like(dtype))
    return int(one) >> int(fi.nmant)


# attribute name -> how to get the expected value from the oracle dtype
ORACLE_ATTRIBUTES = {
    "bits": lambda dt: int(finfo(dt).bits),
    "exponent_bits": lambda dt: int(finfo(dt).nexp),
    "mantissa_bits": lambda dt: int(finfo(dt).nmant),
    "precision": lambda dt: int(finfo(dt).nmant) + 1,
    "bias": oracle_bias,
    "emin": lambda dt: int(finfo(dt).minexp),
    "emax": lambda dt: int(finfo(dt).maxexp) - 1,
    "max_finite": lambda dt: float(finfo(dt).max),
    "min_normal": lambda dt: float(finfo(dt).smallest_normal),
    "min_subnormal": lambda dt: float(finfo(dt).smallest_subnormal),
    "epsilon": lambda dt: float(finfo(dt).eps),
    "storage_dtype": unsigned_like,
    "itemsize": lambda dt: np.dtype(dt).itemsize,
}


@pytest.mark.parametrize("attribute", list(ORACLE_ATTRIBUTES))
@pytest.mark.parametrize(("fmt", "dtype"), ORACLE_DTYPES, ids=ORACLE_IDS)
def test_attribute_matches_finfo(fmt, dtype, attribute):
    expected = ORACLE_ATTRIBUTES[attribute](dtype)
    got = getattr(fmt, attribute)
    assert got == expected, f"{fmt.name}.{attribute} = {got!r}, finfo says {expected!r}"
    assert type(got) is type(expected)


# ---------------------------------------------------------------------------------------
# special-value policy against ml_dtypes' own decoding of every bit pattern
# ---------------------------------------------------------------------------------------
def ml_values(fmt, dtype) -> np.ndarray:
    """float64 values of every bit pattern of ``dtype``, as decoded by ml_dtypes."""
    patterns = np.arange(1 << fmt.bits, dtype=unsigned_like(dtype))
    return patterns.view(dtype).astype(np.float64)


@pytest.mark.parametrize(("fmt", "dtype"), SMALL_ML, ids=[f.name for f, _ in SMALL_ML])
def test_special_policy_matches_ml_dtypes_enumeration(fmt, dtype):
    values = ml_values(fmt, dtype)
    finite = values[np.isfinite(values)]
    assert fmt.has_infinity == bool(np.isinf(values).any())
    assert fmt.has_nan == bool(np.isnan(values).any())
    assert fmt.has_negative_zero == bool(((values == 0) & np.signbit(values)).any())
    assert fmt.max_finite == finite.max() == -finite.min()
    assert fmt.min_subnormal == finite[finite > 0].min()


@pytest.mark.parametrize(("fmt", "dtype"), SMALL_ML, ids=[f.name for f, _ in SMALL_ML])
def test_special_patterns_match_ml_dtypes(fmt, dtype):
    values = ml_values(fmt, dtype)
    nan_patterns = set(np.flatnonzero(np.isnan(values)).tolist())
    magnitude = (1 << (fmt.bits - 1)) - 1
    if fmt.has_nan:
        assert fmt.nan_bits in nan_patterns
    else:
        assert fmt.nan_bits is None and not nan_patterns
    if fmt.has_infinity:
        assert values[fmt.infinity_bits] == math.inf
    else:
        assert fmt.infinity_bits is None
    assert values[fmt.max_finite_bits] == fmt.max_finite
    assert fmt.max_finite_bits <= magnitude
    assert fmt.sign_mask == 1 << (fmt.bits - 1)
    assert values[fmt.sign_mask | 0x1] == -values[0x1]  # the sign bit is where we say


def test_fp16_fp32_fp64_special_patterns_match_numpy():
    for fmt, dtype, udtype in [(softfloat.fp16, np.float16, np.uint16),
                               (softfloat.fp32, np.float32, np.uint32),
                               (softfloat.fp64, np.float64, np.uint64)]:
        fi = np.finfo(dtype)
        assert int(np.array(np.inf, dtype=dtype).view(udtype)) == fmt.infinity_bits
        assert int(np.array(fi.max, dtype=dtype).view(udtype)) == fmt.max_finite_bits
        assert int(np.array(np.nan, dtype=dtype).view(udtype)) & ~fmt.sign_mask == fmt.nan_bits


# ---------------------------------------------------------------------------------------
# tf32 and custom formats: identities with literal constants, and brute force
# ---------------------------------------------------------------------------------------
def test_tf32_identities():
    tf32 = softfloat.tf32
    assert (tf32.exponent_bits, tf32.mantissa_bits, tf32.specials) == (8, 10, Specials.IEEE)
    assert tf32.bits == 19 and tf32.precision == 11
    assert tf32.storage_dtype == np.dtype(np.uint32)
    assert tf32.epsilon == 2.0**-10
    # tf32 has fp32's exponent field, so fp32's exponent limits are an independent oracle
    f32 = np.finfo(np.float32)
    assert tf32.emin == int(f32.minexp) and tf32.emax == int(f32.maxexp) - 1
    assert tf32.bias == 127
    assert tf32.min_normal == float(f32.smallest_normal)
    assert tf32.max_finite == (2 - 2.0**-10) * 2.0**127
    assert tf32.min_subnormal == tf32.min_normal * tf32.epsilon == 2.0**-136


# custom layouts with hand-computed expectations:
# (format, bits, bias, emin, emax, max_finite, min_normal, min_subnormal, epsilon, storage)
CUSTOM_EXPECTED = [
    (Format(6, 9), 16, 31, -30, 31, (2 - 2.0**-9) * 2.0**31, 2.0**-30, 2.0**-39, 2.0**-9, np.uint16),
    (Format(3, 4), 8, 3, -2, 3, (2 - 2.0**-4) * 8, 0.25, 2.0**-6, 2.0**-4, np.uint8),
    (Format(2, 1), 4, 1, 0, 1, 3.0, 1.0, 0.5, 0.5, np.uint8),
    (Format(8, 12), 21, 127, -126, 127, (2 - 2.0**-12) * 2.0**127, 2.0**-126, 2.0**-138, 2.0**-12, np.uint32),
    (Format(11, 20), 32, 1023, -1022, 1023, (2 - 2.0**-20) * 2.0**1023, 2.0**-1022, 2.0**-1042, 2.0**-20,
     np.uint32),
    (Format(9, 30), 40, 255, -254, 255, (2 - 2.0**-30) * 2.0**255, 2.0**-254, 2.0**-284, 2.0**-30, np.uint64),
    # fn: the all-ones exponent holds numbers, only S.1..1.1..1 is NaN
    (Format(4, 3, "fn"), 8, 7, -6, 8, 448.0, 2.0**-6, 2.0**-9, 0.125, np.uint8),
    (Format(3, 2, "fn"), 6, 3, -2, 4, 24.0, 0.25, 2.0**-4, 0.25, np.uint8),
    # fnuz: bias one larger, every pattern but 1.0..0.0..0 a number
    (Format(4, 3, "fnuz"), 8, 8, -7, 7, 240.0, 2.0**-7, 2.0**-10, 0.125, np.uint8),
    (Format(5, 5, "fnuz"), 11, 16, -15, 15, (2 - 2.0**-5) * 2.0**15, 2.0**-15, 2.0**-20, 2.0**-5, np.uint16),
    # finite: every pattern a number
    (Format(3, 3, "finite"), 7, 3, -2, 4, 15 * 2.0, 0.25, 2.0**-5, 0.125, np.uint8),
]


@pytest.mark.parametrize("case", CUSTOM_EXPECTED, ids=[c[0].name for c in CUSTOM_EXPECTED])
def test_custom_format_attributes(case):
    fmt, bits, bias, emin, emax, max_finite, min_normal, min_subnormal, epsilon, storage = case
    assert fmt.bits == bits
    assert fmt.precision == fmt.mantissa_bits + 1
    assert fmt.bias == bias
    assert (fmt.emin, fmt.emax) == (emin, emax)
    assert fmt.max_finite == max_finite
    assert fmt.min_normal == min_normal
    assert fmt.min_subnormal == min_subnormal
    assert fmt.epsilon == epsilon
    assert fmt.storage_dtype == np.dtype(storage)


ENUMERABLE = [f for f in softfloat.catalogue() if f.bits <= 19] + [
    c[0] for c in CUSTOM_EXPECTED if c[0].bits <= 21
]


@pytest.mark.parametrize("fmt", ENUMERABLE, ids=[f.name for f in ENUMERABLE])
def test_limits_by_enumerating_every_pattern(fmt):
    """max/min/epsilon/min_normal are facts about the set of values; find them by brute force."""
    values = softfloat.decode(np.arange(1 << fmt.bits, dtype=np.uint64), fmt)
    finite = values[np.isfinite(values)]
    positive = np.unique(finite[finite > 0])  # sorted
    assert fmt.max_finite == positive[-1] == -finite.min()
    assert fmt.min_subnormal == positive[0]
    # the spacing of the values first doubles at twice the smallest normal
    spacing = np.diff(positive)
    first_wide = np.flatnonzero(spacing > positive[0])[0]
    assert fmt.min_normal == positive[first_wide] / 2
    # epsilon: the distance from 1.0 to the next larger value
    one = np.searchsorted(positive, 1.0)
    assert positive[one] == 1.0
    assert fmt.epsilon == positive[one + 1] - 1.0
    assert fmt.emin == math.log2(fmt.min_normal)
    assert fmt.emax == math.floor(math.log2(fmt.max_finite))
    # policies, as seen in the value set
    assert fmt.has_infinity == bool(np.isinf(values).any())
    assert fmt.has_nan == bool(np.isnan(values).any())
    assert fmt.has_negative_zero == bool(((values == 0) & np.signbit(values)).any())


# ---------------------------------------------------------------------------------------
# names, aliases, equality, immutability, repr
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", softfloat.catalogue(), ids=lambda f: f.name)
def test_catalogue_names_resolve_to_themselves(fmt):
    assert softfloat.as_format(fmt.name) is fmt
    assert softfloat.as_format(fmt) is fmt
    assert getattr(softfloat, fmt.name) is fmt


ALIASES = [
    ("half", "fp16"), ("float16", "fp16"), ("binary16", "fp16"),
    ("single", "fp32"), ("float32", "fp32"), ("binary32", "fp32"),
    ("double", "fp64"), ("float64", "fp64"), ("binary64", "fp64"),
    ("bfloat16", "bf16"), ("tensorfloat32", "tf32"),
    ("e4m3fn", "fp8_e4m3"), ("e4m3", "fp8_e4m3"), ("e5m2", "fp8_e5m2"),
    ("e4m3fnuz", "fp8_e4m3fnuz"), ("e5m2fnuz", "fp8_e5m2fnuz"),
    ("e3m2", "fp6_e3m2"), ("e2m3", "fp6_e2m3"), ("e2m1", "fp4_e2m1"),
    # case, surrounding blanks and dashes do not matter
    ("HALF", "fp16"), ("BFloat16", "bf16"), ("  bf16 ", "bf16"), ("E4M3FN", "fp8_e4m3"),
    ("fp8-e5m2", "fp8_e5m2"), ("FP8_E4M3FNUZ", "fp8_e4m3fnuz"),
]


@pytest.mark.parametrize(("alias", "name"), ALIASES, ids=[a.strip() for a, _ in ALIASES])
def test_alias(alias, name):
    assert softfloat.as_format(alias) is getattr(softfloat, name)


@pytest.mark.parametrize(("fmt", "dtype"), ML_DTYPES, ids=[f.name for f, _ in ML_DTYPES])
def test_ml_dtypes_names_are_aliases(fmt, dtype):
    """Every ml_dtypes type name (float8_e4m3fn, ...) finds the matching format."""
    assert softfloat.as_format(np.dtype(dtype).name) is fmt


def test_equality_is_by_layout_and_policy():
    assert Format(exponent_bits=6, mantissa_bits=9) == Format(6, 9)
    assert Format(6, 9) == Format(6, 9, name="mine")
    assert hash(Format(6, 9)) == hash(Format(6, 9, name="mine"))
    assert Format(5, 10) == softfloat.fp16 and hash(Format(5, 10)) == hash(softfloat.fp16)
    assert Format(8, 7) == softfloat.bf16
    assert Format(4, 3, "fn") == softfloat.fp8_e4m3
    assert Format(4, 3, Specials.FNUZ) == softfloat.fp8_e4m3fnuz
    assert Format(4, 3) != softfloat.fp8_e4m3  # same layout, different policy
    assert Format(6, 9) != Format(9, 6)
    assert len({Format(6, 9), Format(6, 9, name="x"), Format(6, 9, "fn")}) == 2


def test_kind_and_itemsize_read_as_numpys_and_leave_equality_alone():
    """numpy's own float dtypes say kind "f" (ml_dtypes' say "V": no oracle there);
    kind and itemsize are derived, so equal formats stay equal and hash alike."""
    for fmt in softfloat.catalogue():
        assert fmt.kind == "f" and type(fmt.kind) is str
        if fmt.native_dtype is not None:
            assert fmt.kind == fmt.native_dtype.kind and fmt.itemsize == fmt.native_dtype.itemsize
    assert softfloat.asarray([1.0], "bf16").dtype.itemsize == softfloat.asarray([1.0], "bf16").itemsize == 2
    assert Format(6, 9, name="x") == Format(6, 9) and hash(Format(6, 9, name="x")) == hash(Format(6, 9))
    assert {f.name for f in dataclasses.fields(Format)} == {"exponent_bits", "mantissa_bits", "specials", "name"}
    for attribute in ("kind", "itemsize"):
        with pytest.raises(AttributeError):
            setattr(softfloat.fp16, attribute, 1)


def test_specials_accepts_strings_case_insensitively():
    assert Format(4, 3, "FNUZ").specials is Specials.FNUZ
    assert Format(4, 3, " fn ").specials is Specials.FN


def test_derived_name():
    assert Format(6, 9).name == "e6m9"
    assert Format(4, 3, "fnuz").name == "e4m3fnuz"
    assert Format(3, 3, "finite").name == "e3m3finite"
    assert Format(6, 9, name="mine").name == "mine"


@pytest.mark.parametrize("attribute", ["exponent_bits", "mantissa_bits", "specials", "name"])
def test_fields_are_immutable(attribute):
    fmt = Format(6, 9)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(fmt, attribute, getattr(fmt, attribute))


@pytest.mark.parametrize("attribute", ["bias", "emax", "max_finite", "storage_dtype"])
def test_derived_attributes_are_read_only(attribute):
    with pytest.raises(AttributeError):
        setattr(softfloat.bf16, attribute, 1)
    assert softfloat.bf16.bias == 127


def test_catalogue_formats_are_unchanged_by_attempted_assignment():
    with pytest.raises(dataclasses.FrozenInstanceError):
        softfloat.fp16.mantissa_bits = 7
    assert softfloat.fp16.mantissa_bits == 10


def test_catalogue_contents():
    names = [f.name for f in softfloat.catalogue()]
    assert names == ["fp64", "fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "fp8_e4m3fnuz",
                     "fp8_e5m2fnuz", "fp6_e3m2", "fp6_e2m3", "fp4_e2m1"]
    widths = [f.bits for f in softfloat.catalogue()]
    assert widths == sorted(widths, reverse=True)


def test_str_is_the_name():
    assert str(softfloat.fp16) == "fp16"
    assert str(softfloat.fp8_e4m3fnuz) == "fp8_e4m3fnuz"
    assert str(Format(6, 9)) == "e6m9"
    assert str(Format(6, 9, name="mine")) == "mine"


def test_repr_of_catalogue_formats():
    assert repr(softfloat.fp16) == "softfloat.fp16"
    assert repr(softfloat.bf16) == "softfloat.bf16"
    assert repr(Format(6, 9)) == "Format(exponent_bits=6, mantissa_bits=9)"
    assert repr(Format(4, 2, "fnuz")) == "Format(exponent_bits=4, mantissa_bits=2, specials='fnuz')"


# Format(5, 2), Format(4, 3, "fn") and Format(4, 3, "fnuz") derive names that are also
# catalogue aliases ("e5m2", "e4m3fn", "e4m3fnuz"); so does an explicit name="half"
REPR_CASES = [*softfloat.catalogue(), Format(6, 9), Format(6, 9, name="mine"), Format(5, 10),
              Format(5, 2), Format(4, 3, "fn"), Format(4, 3, "fnuz"), Format(5, 10, name="half"),
              Format(2, 1, "finite")]


@pytest.mark.parametrize("fmt", REPR_CASES, ids=lambda f: f"{f.name}-{f.exponent_bits}-{f.mantissa_bits}")
def test_repr_evaluates_back_to_an_equal_format(fmt):
    """repr() reads as Python that rebuilds an equal format."""
    rebuilt = eval(repr(fmt), {"softfloat": softfloat, "Format": Format})  # noqa: S307
    assert rebuilt == fmt


# ---------------------------------------------------------------------------------------
# constructor validation
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("exponent_bits", [0, 1, 12, 64, -5])
def test_exponent_bits_out_of_range(exponent_bits):
    with pytest.raises(ValueError, match=rf"exponent_bits must be from 2 to 11; got {exponent_bits}"):
        Format(exponent_bits, 3)


@pytest.mark.parametrize("mantissa_bits", [0, -1, 53, 100])
def test_mantissa_bits_out_of_range(mantissa_bits):
    with pytest.raises(ValueError, match=rf"mantissa_bits must be from 1 to 52; got {mantissa_bits}"):
        Format(5, mantissa_bits)


@pytest.mark.parametrize("bad", [5.0, "5", True, None, np.float64(5)], ids=repr)
def test_exponent_bits_not_an_int(bad):
    with pytest.raises(TypeError, match=r"exponent_bits must be an int from 2 to 11; got .*\(") as info:
        Format(bad, 3)
    assert type(bad).__name__ in str(info.value)


@pytest.mark.parametrize("bad", [3.0, "3", False], ids=repr)
def test_mantissa_bits_not_an_int(bad):
    with pytest.raises(TypeError, match=r"mantissa_bits must be an int from 1 to 52"):
        Format(5, bad)


@pytest.mark.parametrize("int_type", [np.int64, np.uint8, np.int16], ids=lambda t: t.__name__)
def test_numpy_integers_give_the_same_format_as_python_ints(int_type):
    """Widths given as numpy integers are stored as ints: every attribute is fp16's."""
    fmt = Format(int_type(5), int_type(10))
    assert fmt == softfloat.fp16
    for attribute in ORACLE_ATTRIBUTES:
        got, expected = getattr(fmt, attribute), getattr(softfloat.fp16, attribute)
        assert got == expected and type(got) is type(expected), attribute


def test_unknown_specials_lists_the_policies():
    with pytest.raises(ValueError, match=r"specials='ieeee' is not valid") as info:
        Format(4, 3, "ieeee")
    for policy in ("ieee", "fn", "fnuz", "finite"):
        assert repr(policy) in str(info.value)


def test_specials_of_wrong_type():
    with pytest.raises(TypeError, match=r"specials must be one of .*got 3 \(int\)"):
        Format(4, 3, 3)


def test_name_of_wrong_type():
    with pytest.raises(TypeError, match=r"name must be a str; got 3 \(int\)"):
        Format(4, 3, name=3)


@pytest.mark.parametrize("specials", ["fn", "fnuz", "finite"])
def test_non_ieee_11_bit_exponent_is_rejected_with_the_range(specials):
    with pytest.raises(ValueError, match=r"wider than float64's \[-1022, 1023\]") as info:
        Format(11, 5, specials)
    assert f"e11m5{specials}" in str(info.value)


def test_widest_ieee_formats_are_accepted():
    assert Format(11, 52) == softfloat.fp64
    assert Format(11, 1).max_finite == 3.0 * 2.0**1022
    assert Format(10, 52, "fnuz").emin == -511


# ---------------------------------------------------------------------------------------
# as_format: layouts ("e6m9"), numpy and ml_dtypes dtypes, torch dtype names
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "e", "m", "specials"), [
    ("e6m9", 6, 9, "ieee"), ("E6M9", 6, 9, "ieee"), (" e3m12 ", 3, 12, "ieee"),
    ("e5m4fn", 5, 4, "fn"), ("e5m4fnuz", 5, 4, "fnuz"), ("e3m3finite", 3, 3, "finite"),
    ("e11m40", 11, 40, "ieee"), ("e2m1fnuz", 2, 1, "fnuz"),
])
def test_layout_names_build_custom_formats(name, e, m, specials):
    fmt = softfloat.as_format(name)
    assert (fmt.exponent_bits, fmt.mantissa_bits, fmt.specials.value) == (e, m, specials)
    assert fmt == Format(e, m, specials)


@pytest.mark.parametrize(("name", "catalogue_name"), [
    ("e5m10", "fp16"), ("e8m23", "fp32"), ("e11m52", "fp64"), ("e8m7", "bf16"), ("e8m10", "tf32"),
    ("e5m2", "fp8_e5m2"), ("e4m3fnuz", "fp8_e4m3fnuz"), ("e5m2fnuz", "fp8_e5m2fnuz"),
    # catalogue names win: OCP's e4m3 is the fn format, e3m2/e2m3/e2m1 the FP6/FP4 ones
    ("e4m3", "fp8_e4m3"), ("e4m3fn", "fp8_e4m3"), ("e3m2", "fp6_e3m2"), ("e3m2fn", "fp6_e3m2"),
    ("e2m3fn", "fp6_e2m3"), ("e2m1fn", "fp4_e2m1"), ("e2m1finite", "fp4_e2m1"),
])
def test_layout_names_of_catalogue_formats_give_the_catalogue_format(name, catalogue_name):
    assert softfloat.as_format(name) is getattr(softfloat, catalogue_name)


def test_derived_names_of_custom_formats_read_back():
    for fmt in [Format(6, 9), Format(5, 4, "fn"), Format(3, 3, "finite"), Format(7, 20, "fnuz")]:
        assert softfloat.as_format(fmt.name) == fmt


@pytest.mark.parametrize(("name", "words"), [
    ("e12m3", "exponent_bits must be from 2 to 11; got 12"),
    ("e5m0", "mantissa_bits must be from 1 to 52; got 0"),
    ("e11m4fn", "wider than float64's"),
])
def test_impossible_layouts_say_why(name, words):
    with pytest.raises(ValueError) as info:
        softfloat.as_format(name)
    assert str(info.value).startswith(f"fmt={name!r} names no format softfloat can emulate: ")
    assert words in str(info.value)


@pytest.mark.parametrize(("dtype", "name"), [
    (np.float16, "fp16"), (np.float32, "fp32"), (np.float64, "fp64"), (np.half, "fp16"),
    (np.dtype("float16"), "fp16"), (np.dtype("float32"), "fp32"), (np.dtype(">f8"), "fp64"),
    (np.dtype("<f4"), "fp32"),
])
def test_numpy_dtypes(dtype, name):
    assert softfloat.as_format(dtype) is getattr(softfloat, name)


@pytest.mark.parametrize(("fmt", "dtype"), ML_DTYPES, ids=[f.name for f, _ in ML_DTYPES])
def test_ml_dtypes_types_and_dtypes(fmt, dtype):
    assert softfloat.as_format(dtype) is fmt
    assert softfloat.as_format(np.dtype(dtype)) is fmt


@pytest.mark.parametrize("dtype", [ml_dtypes.float8_e4m3, ml_dtypes.float8_e3m4], ids=lambda d: d.__name__)
def test_ml_dtypes_ieee_fp8_types_against_finfo(dtype):
    """ml_dtypes' float8_e4m3 and float8_e3m4 have infinities (IEEE-style), unlike e4m3fn."""
    fmt = softfloat.as_format(dtype)
    info = ml_dtypes.finfo(dtype)
    assert fmt.name == np.dtype(dtype).name and fmt.specials is Specials.IEEE
    assert softfloat.as_format(fmt.name) is fmt
    assert fmt.max_finite == float(info.max)
    assert fmt.min_normal == float(info.smallest_normal)
    assert fmt.min_subnormal == float(info.smallest_subnormal)
    assert fmt.epsilon == float(info.eps)
    # every bit pattern decodes as ml_dtypes reads it
    patterns = np.arange(256, dtype=np.uint8)
    want = patterns.view(dtype).astype(np.float64)
    got = softfloat.decode(patterns, fmt)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [ml_dtypes.float8_e4m3b11fnuz, ml_dtypes.float8_e8m0fnu, ml_dtypes.int4],
                         ids=lambda d: d.__name__)
def test_ml_dtypes_types_softfloat_does_not_emulate(dtype):
    with pytest.raises(ValueError) as info:
        softfloat.as_format(dtype)
    message = str(info.value)
    assert f"(dtype {np.dtype(dtype).name})" in message and "bfloat16" in message, message


@pytest.mark.parametrize("dtype", [np.int32, np.dtype(np.complex64), np.bool_], ids=str)
def test_numpy_dtypes_that_are_not_formats(dtype):
    with pytest.raises(ValueError, match=r"is not a float dtype softfloat emulates .*float16, float32, float64"):
        softfloat.as_format(dtype)


@pytest.mark.parametrize(("name", "catalogue_name"), [
    ("torch.float16", "fp16"), ("torch.half", "fp16"), ("torch.bfloat16", "bf16"),
    ("torch.float32", "fp32"), ("torch.float", "fp32"), ("torch.float64", "fp64"),
    ("torch.double", "fp64"), ("torch.float8_e4m3fn", "fp8_e4m3"), ("torch.float8_e5m2", "fp8_e5m2"),
    ("torch.float8_e4m3fnuz", "fp8_e4m3fnuz"), ("torch.float8_e5m2fnuz", "fp8_e5m2fnuz"),
])
def test_torch_dtype_names(name, catalogue_name):
    assert softfloat.as_format(name) is getattr(softfloat, catalogue_name)


def test_torch_dtype_objects_are_read_by_name_without_importing_torch():
    # a stand-in with torch.dtype's module, type name and str()
    dtype_type = type("dtype", (), {"__module__": "torch", "__str__": lambda self: "torch.bfloat16"})
    assert softfloat.as_format(dtype_type()) is softfloat.bf16


@pytest.mark.parametrize("name", ["torch.float8_e8m0fnu", "torch.int8", "torch.float4_e2m1fn_x2"])
def test_torch_names_softfloat_does_not_emulate(name):
    with pytest.raises(ValueError) as info:
        softfloat.as_format(name)
    assert str(info.value).startswith(f"fmt={name!r} is not a torch float dtype softfloat emulates")
    assert "torch.bfloat16" in str(info.value)


def test_unknown_name_shows_the_custom_spelling():
    with pytest.raises(ValueError) as info:
        softfloat.as_format("fp12")
    message = str(info.value)
    assert "'e6m9'" in message and "softfloat.Format(" in message and "fp8_e4m3" in message


def test_as_format_imports_neither_ml_dtypes_nor_torch():
    import subprocess
    import sys

    code = ("import sys, numpy as np, softfloat; "
            "softfloat.as_format(np.float16); softfloat.as_format('torch.bfloat16'); "
            "softfloat.as_format('e6m9'); "
            "print([m for m in ('ml_dtypes', 'torch') if m in sys.modules])")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


# ---------------------------------------------------------------------------------------
# numpy dtypes derived from the declaration: native_dtype, value_dtype, native_format
# ---------------------------------------------------------------------------------------
NUMPY_OWN = (np.float16, np.float32, np.float64)
#: softfloat.formats.native_format as the package itself holds it (pytest's importlib mode
#: may import formats.py a second time for its doctests, with formats of its own)
native_format = softfloat.as_format.__globals__["native_format"]
#: custom layouts of at most 16 bits, each with the narrowest numpy float that holds it,
#: worked by hand: (format, narrowest of float16/32/64)
SMALL_CUSTOM = [
    (Format(4, 10), np.float16),            # p 11, exponents -6..7, least 2**-16
    (Format(5, 10, "fn"), np.float32),      # fp16's layout, but finite up to 2**16 * 1.998
    (Format(5, 10, "fnuz"), np.float32),    # least value 2**-25: below fp16's 2**-24
    (Format(6, 9), np.float32),             # exponents to 31
    (Format(2, 13, "finite"), np.float32),  # p 14 > 11
    (Format(9, 6), np.float64),             # exponents to 255
    (Format(3, 12, "fnuz"), np.float32),
]
VALUE_FORMATS = [(f, None) for f in softfloat.catalogue() if f.bits <= 16] + SMALL_CUSTOM


@pytest.mark.parametrize(("fmt", "dtype"), ORACLE_DTYPES, ids=ORACLE_IDS)
def test_native_dtype_is_numpys_own_type_of_the_format(fmt, dtype):
    own = dtype in NUMPY_OWN
    if own:
        assert fmt.native_dtype == np.dtype(dtype)
    else:
        assert fmt.native_dtype is None  # not ==: numpy reads None as float64
    assert native_format(dtype) == (fmt if own else None)


@pytest.mark.parametrize("fmt", [softfloat.tf32, Format(5, 10, "fn"), Format(8, 23, "fnuz"), Format(11, 51),
                                 Format(7, 10)], ids=lambda f: f.name)
def test_other_formats_have_no_native_dtype(fmt):
    assert fmt.native_dtype is None


def test_native_dtype_ignores_the_name():
    assert Format(5, 10, name="half").native_dtype == np.dtype(np.float16)
    assert Format(11, 52, name="double").native_dtype == np.dtype(np.float64)


@pytest.mark.parametrize("dtype", NUMPY_OWN, ids=lambda d: d.__name__)
def test_native_dtype_views_the_formats_bit_patterns(dtype):
    """The bit patterns encode returns, viewed as native_dtype, are the decoded values."""
    fmt = softfloat.as_format(dtype)
    if fmt.bits == 16:
        bits = np.arange(1 << 16, dtype=np.uint64).astype(fmt.storage_dtype)
    else:
        bits = np.random.default_rng(7).integers(0, 1 << fmt.bits, 100_000, dtype=np.uint64).astype(fmt.storage_dtype)
    want = softfloat.decode(bits, fmt)
    with np.errstate(invalid="ignore"):  # casting a signaling NaN
        got = bits.view(fmt.native_dtype).astype(np.float64)
    np.testing.assert_array_equal(got, want)  # NaN positions must agree too


@pytest.mark.parametrize("dtype", [np.dtype("<f2"), np.dtype(">f2"), np.dtype(">f4"), np.dtype("=f8"),
                                   np.float32, np.half], ids=str)
def test_native_format_reads_any_byte_order(dtype):
    fmt = native_format(dtype)
    assert fmt is softfloat.as_format(dtype)
    assert fmt.native_dtype == np.dtype(dtype).newbyteorder("=")


@pytest.mark.parametrize("obj", [None, np.int32, np.dtype(np.uint16), np.bool_, np.complex64, np.longdouble,
                                 ml_dtypes.bfloat16, np.dtype(ml_dtypes.float8_e4m3fn), "float32", 16,
                                 softfloat.fp16], ids=repr)
def test_native_format_is_none_for_everything_else(obj):
    if obj is np.longdouble and np.dtype(np.longdouble) == np.dtype(np.float64):
        pytest.skip("longdouble is float64 on this platform")
    assert native_format(obj) is None


def _exact_in(values: np.ndarray, dtype) -> bool:
    """Does every finite value survive a round trip through ``dtype``?  (numpy's casts
    are the oracle; overflow to inf shows as a mismatch.)"""
    with np.errstate(over="ignore"):
        return bool(np.array_equal(values.astype(dtype).astype(np.float64), values))


@pytest.mark.parametrize(("fmt", "narrowest"), VALUE_FORMATS, ids=[f.name for f, _ in VALUE_FORMATS])
def test_value_dtype_holds_every_value_and_is_the_narrowest(fmt, narrowest):
    """Exhaustive: every finite value of the format, decoded, round-trips through
    value_dtype(); float32 is passed over only where some value does not; float16 is
    chosen only when preferred, and then exactly where every value round-trips."""
    values = softfloat.decode(np.arange(1 << fmt.bits, dtype=np.uint64), fmt)
    finite = values[np.isfinite(values)]
    dtype = fmt.value_dtype()
    assert dtype in (np.dtype(np.float32), np.dtype(np.float64))
    assert _exact_in(finite, dtype)
    assert (dtype == np.float32) == _exact_in(finite, np.float32)
    half = fmt.value_dtype(np.float16)
    assert (half == np.float16) == _exact_in(finite, np.float16)
    assert half == (np.float16 if _exact_in(finite, np.float16) else dtype)
    if narrowest is not None:  # the hand-worked expectation
        assert half == np.dtype(narrowest)
    # the IEEE dtypes also carry the format's infinities and NaNs
    with np.errstate(invalid="ignore"):  # casting a NaN
        assert np.array_equal(values.astype(dtype).astype(np.float64), values, equal_nan=True)


@pytest.mark.parametrize("fmt", [softfloat.fp32, softfloat.fp64, softfloat.tf32, Format(8, 24), Format(7, 30),
                                 Format(10, 20, "fn")], ids=lambda f: f.name)
def test_value_dtype_of_wide_formats_by_their_extremes(fmt):
    """Too many patterns to enumerate: the extremes and the finest spacing decide."""
    probes = np.array([fmt.max_finite, fmt.min_subnormal, fmt.min_normal, 1.0 + fmt.epsilon,
                       fmt.min_normal * (1.0 + fmt.epsilon)])
    dtype = fmt.value_dtype()
    assert _exact_in(probes, dtype)
    assert (dtype == np.float32) == _exact_in(probes, np.float32)
    assert fmt.value_dtype(np.float64) == np.float64
    assert fmt.value_dtype(np.float32) == dtype


@pytest.mark.parametrize("prefer", [None, np.int8, np.dtype(np.uint64), ml_dtypes.bfloat16, "float16"], ids=repr)
def test_value_dtype_passes_over_what_is_not_a_numpy_float(prefer):
    assert softfloat.fp8_e4m3.value_dtype(prefer) == np.dtype(np.float32)


def test_value_dtype_answers_in_native_byte_order():
    got = softfloat.fp8_e5m2.value_dtype(np.dtype(">f2"))
    assert got == np.dtype(np.float16) and got.isnative


@pytest.mark.parametrize("fmt", softfloat.catalogue(), ids=lambda f: f.name)
@pytest.mark.parametrize("dtype", NUMPY_OWN, ids=lambda d: d.__name__)
def test_value_dtype_is_quantizes_result_dtype(fmt, dtype):
    x = np.array([0.0, 1.5, -2.25], dtype=dtype)
    assert softfloat.quantize(x, fmt).dtype == fmt.value_dtype(dtype)
