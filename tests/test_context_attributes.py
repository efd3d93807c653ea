"""softfloat.context holds one RoundingAttributes, and the Array layer passes it down whole.

Oracles: the bit-level functions called with the same ``attributes=`` (each tested
against MPFR in the oracle tests), and the documented default NaNs of the hardware
(Intel SDM vol. 1 table 4-7: x86 SSE's "QNaN floating-point indefinite" 0xFFC00000;
PTX ISA: NVIDIA's canonical NaN 0x7FFFFFFF; ARM/RISC-V: 0x7FC00000).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import softfloat as sf
from softfloat.strategies import arrays

X86_UP = sf.RoundingAttributes(rounding="upward", platform="x86-sse")
FORMATS = [sf.fp32, sf.fp16, sf.bf16, sf.fp8_e4m3, sf.fp8_e5m2, sf.Format(6, 9)]
BINARY = {np.add: sf.add, np.subtract: sf.sub, np.multiply: sf.mul, np.divide: sf.div}
#: documented default NaN of fp32 invalid operations
DEFAULT_NAN_FP32 = {"default": 0x7FC00000, "arm": 0x7FC00000, "riscv": 0x7FC00000,
                    "x86-sse": 0xFFC00000, "cuda": 0x7FFFFFFF}


def _same_flags(counts, flags):
    for name, n in flags.count().items():
        assert getattr(counts, name) == n, name


@st.composite
def operands(draw, n_operands=2, shapes=((), (1,), (7,), (2, 3))):
    fmt = draw(st.sampled_from(FORMATS))
    shape = draw(st.sampled_from(shapes))
    return fmt, [draw(arrays(fmt, shape, as_bits=True)) for _ in range(n_operands)]


def _inf_minus_inf_fp32():
    inf = sf.asarray(np.inf, "fp32")
    return int((inf - inf).bits)


# ---- the context's attributes reach every rounding -----------------------------------------
@settings(max_examples=60)
@given(ops=operands(), ufunc=st.sampled_from(list(BINARY)))
def test_arithmetic_under_attributes_equals_the_bit_level_call_with_them(ops, ufunc):
    fmt, (a, b) = ops
    expected, flags = BINARY[ufunc](a, b, fmt, attributes=X86_UP, return_flags=True)
    with sf.context(attributes=X86_UP) as ctx:
        got = ufunc(sf.Array.from_bits(a, fmt), sf.Array.from_bits(b, fmt))
    assert np.array_equal(got.bits, expected)
    _same_flags(ctx.flags, flags)


@settings(max_examples=40)
@given(ops=operands(n_operands=1))
def test_sqrt_under_attributes_equals_the_bit_level_call_with_them(ops):
    fmt, (a,) = ops
    expected, flags = sf.sqrt(a, fmt, attributes=X86_UP, return_flags=True)
    with sf.context(attributes=X86_UP) as ctx:
        got = np.sqrt(sf.Array.from_bits(a, fmt))
    assert np.array_equal(got.bits, expected)
    _same_flags(ctx.flags, flags)


@settings(max_examples=30)
@given(ops=operands(n_operands=1, shapes=((5,), (3, 4))),
       accumulator=st.sampled_from(["fp32", "fp16", "bf16"]),
       order=st.sampled_from(["sequential", "pairwise", "reverse"]))
def test_sum_under_attributes_equals_the_bit_level_sum_with_them(ops, accumulator, order):
    fmt, (a,) = ops
    with sf.context(attributes=X86_UP, accumulator=accumulator, order=order) as ctx:
        got = np.sum(sf.Array.from_bits(a, fmt))
    expected, flags = sf.sum(a, fmt, accumulator=accumulator, out_format=fmt, order=order, attributes=X86_UP,
                             return_flags=True)
    assert np.array_equal(got.bits, expected)
    _same_flags(ctx.flags, flags)


@settings(max_examples=30)
@given(ops=operands(n_operands=2, shapes=((3, 3),)), accumulator=st.sampled_from(["fp32", "bf16", "h100"]))
def test_matmul_under_attributes_equals_the_bit_level_matmul_with_them(ops, accumulator):
    fmt, (a, b) = ops
    assume(accumulator != "h100" or fmt in (sf.fp16, sf.bf16, sf.fp8_e4m3, sf.fp8_e5m2))  # its input formats
    with sf.context(attributes=X86_UP, accumulator=accumulator) as ctx:
        got = sf.Array.from_bits(a, fmt) @ sf.Array.from_bits(b, fmt)
    expected, flags = sf.matmul(a, b, fmt, accumulator=accumulator, out_format=fmt, attributes=X86_UP,
                                return_flags=True)
    assert np.array_equal(got.bits, expected)
    _same_flags(ctx.flags, flags)


@settings(max_examples=40)
@given(fmt=st.sampled_from(FORMATS),
       values=st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=1, max_size=8))
def test_asarray_and_astype_under_attributes_equal_encode_and_convert_with_them(fmt, values):
    x = np.array(values)
    attrs = X86_UP.replace(saturate=True)
    with sf.context(attributes=attrs) as ctx:
        got = sf.asarray(x, fmt)
    expected, flags = sf.encode(x, fmt, attributes=attrs, return_flags=True)
    assert np.array_equal(got.bits, expected)
    _same_flags(ctx.flags, flags)
    wide = sf.asarray(x, "fp64")
    with sf.context(attributes=attrs) as ctx:
        narrow = wide.astype(fmt)
    expected, flags = sf.convert(wide.bits, "fp64", fmt, attributes=attrs, return_flags=True)
    assert np.array_equal(narrow.bits, expected)
    _same_flags(ctx.flags, flags)


def test_asarray_rounding_and_saturate_arguments_win_over_the_context():
    x = np.array([0.1, 1e6, -1e6])
    with sf.context(attributes=X86_UP):
        got = sf.asarray(x, "fp16", "toward_zero", saturate=True)
    expected = sf.encode(x, "fp16", attributes=X86_UP.replace(rounding="toward_zero", saturate=True))
    assert np.array_equal(got.bits, expected)
    assert got.tolist()[1:] == [65504.0, -65504.0]  # saturated to +-max_finite (fp16: 65504)


# ---- the platform reaches the arrays -------------------------------------------------------
@pytest.mark.parametrize("platform", sorted(DEFAULT_NAN_FP32))
def test_inf_minus_inf_gives_the_platforms_default_nan(platform):
    with sf.context(platform=platform) as ctx:
        assert _inf_minus_inf_fp32() == DEFAULT_NAN_FP32[platform]
    assert ctx.flags.invalid == 1


@pytest.mark.parametrize("platform", ["x86-sse", "cuda"])
def test_attributes_carry_the_platform_to_the_arrays(platform):
    with sf.context(attributes=sf.RoundingAttributes(rounding="upward", platform=platform)):
        assert _inf_minus_inf_fp32() == DEFAULT_NAN_FP32[platform]
        zero_times_inf = sf.asarray([0.0], "fp32") * sf.asarray([np.inf], "fp32")
        assert int(zero_times_inf.bits[0]) == DEFAULT_NAN_FP32[platform]


@pytest.mark.parametrize("platform", sorted(DEFAULT_NAN_FP32))
def test_libm_and_division_by_a_count_give_the_platforms_default_nan(platform):
    with sf.context(platform=platform) as ctx:
        log = np.log(sf.asarray([-1.0], "fp32"))                # invalid: log of a negative
        with pytest.warns(RuntimeWarning, match="Degrees of freedom"):  # (numpy's warning too)
            var = np.var(sf.asarray([3.0, 3.0], "fp32"), ddof=2)    # 0 / 0
    assert int(log.bits[0]) == DEFAULT_NAN_FP32[platform]
    assert int(var.bits) == DEFAULT_NAN_FP32[platform]
    assert ctx.flags.invalid == 2


def test_the_default_context_keeps_todays_nan():
    assert sf.get_context().platform.name == "default"
    assert _inf_minus_inf_fp32() == 0x7FC00000


# ---- options: shortcuts, inheritance, validation ----------------------------------------
def test_a_shortcut_wins_over_the_same_field_of_attributes():
    x = np.array([0.1, 1 / 3, -2.7])
    with sf.context(attributes=X86_UP, rounding="toward_zero") as ctx:
        got = sf.asarray(x, "bf16")
        assert ctx.rounding is sf.Rounding.TOWARD_ZERO and ctx.platform.name == "x86-sse"
        assert _inf_minus_inf_fp32() == 0xFFC00000
    assert ctx.attributes == X86_UP.replace(rounding="toward_zero")
    assert np.array_equal(got.bits, sf.encode(x, "bf16", "toward_zero"))
    assert not np.array_equal(got.bits, sf.encode(x, "bf16", "upward"))
    with sf.context(attributes=X86_UP, platform="cuda") as ctx:
        assert ctx.rounding is sf.Rounding.UPWARD and _inf_minus_inf_fp32() == 0x7FFFFFFF


def test_nested_contexts_inherit_the_fields_they_do_not_change():
    with sf.context(platform="cuda", saturate=True) as outer:
        with sf.context(rounding="upward") as inner:
            assert inner.platform is outer.platform and inner.saturate
            assert inner.attributes == outer.attributes.replace(rounding="upward")
            assert _inf_minus_inf_fp32() == 0x7FFFFFFF
            assert sf.asarray(1e6, "fp16").item() == 65504.0
            with sf.context(attributes=sf.RoundingAttributes()) as reset:
                assert reset.attributes == sf.RoundingAttributes()
                assert _inf_minus_inf_fp32() == 0x7FC00000
        assert sf.get_context() is outer and outer.rounding is sf.Rounding.NEAREST_EVEN
    assert sf.get_context().platform.name == "default"


def test_the_platform_brings_its_tininess_unless_tininess_is_given():
    with sf.context(platform="arm") as ctx:
        assert ctx.tininess is sf.Tininess.BEFORE and ctx.tininess is ctx.attributes.tininess
        with sf.context(platform="x86-sse") as inner:
            assert inner.tininess is sf.Tininess.AFTER
    with sf.context(platform="arm", tininess="after") as ctx:
        assert ctx.tininess is sf.Tininess.AFTER


def test_the_platforms_tininess_reaches_the_arrays():
    # (2**-14 - 2**-24) * (1 + 2**-10) = 2**-14 - 2**-34: below fp16's smallest normal
    # before rounding, 2**-14 after rounding to 11 bits: underflow with tininess "before"
    # only (IEEE 754-2019 section 7.5)
    a = sf.encode(np.array([2.0**-14 - 2.0**-24]), "fp16")
    b = sf.encode(np.array([1 + 2.0**-10]), "fp16")
    for platform, underflows in (("arm", 1), ("x86-sse", 0)):
        expected, flags = sf.mul(a, b, "fp16", attributes=sf.RoundingAttributes(platform=platform),
                                 return_flags=True)
        with sf.context(platform=platform) as ctx:
            got = sf.Array.from_bits(a, "fp16") * sf.Array.from_bits(b, "fp16")
        assert np.array_equal(got.bits, expected) and got.item() == 2.0**-14
        _same_flags(ctx.flags, flags)
        assert ctx.flags.underflow == underflows


def test_context_properties_are_read_only_views_of_the_attributes():
    with sf.context(attributes=X86_UP) as ctx:
        assert (ctx.rounding, ctx.tininess, ctx.subnormals, ctx.saturate, ctx.platform) == \
            (X86_UP.rounding, X86_UP.tininess, X86_UP.subnormals, X86_UP.saturate, X86_UP.platform)
        with pytest.raises(AttributeError):
            ctx.rounding = sf.Rounding.DOWNWARD
        assert ctx.options() == {"attributes": X86_UP, "rng": None}


def test_bad_attributes_and_platform_options_are_named():
    with pytest.raises(TypeError, match="attributes"):
        with sf.context(attributes="upward"):
            pass
    with pytest.raises(ValueError, match="platform"):
        with sf.context(platform="sparc"):
            pass
    with pytest.raises(TypeError, match="unknown option.*attributes.*platform"):
        with sf.context(rouding="upward"):
            pass


def test_stochastic_rounding_from_attributes_draws_from_the_contexts_rng():
    a = np.full(64, sf.encode(1.0, "fp16"))
    b = np.full(64, sf.encode(2.0**-12, "fp16"))
    attrs = sf.RoundingAttributes(rounding="stochastic", platform="riscv")
    with sf.context(attributes=attrs, rng=5):
        got = sf.Array.from_bits(a, "fp16") + sf.Array.from_bits(b, "fp16")
    assert np.array_equal(got.bits, sf.add(a, b, "fp16", attributes=attrs, rng=np.random.default_rng(5)))


def test_threads_see_their_own_platform():
    seen, ready = {}, threading.Barrier(3)

    def worker(platform):
        with sf.context(platform=platform):
            ready.wait()  # all three contexts are open at once
            seen[platform] = _inf_minus_inf_fp32()
    threads = [threading.Thread(target=worker, args=(p,)) for p in ("default", "x86-sse", "cuda")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {p: DEFAULT_NAN_FP32[p] for p in ("default", "x86-sse", "cuda")}


@pytest.mark.parametrize("value, error, shown", [("fp33", ValueError, "accumulator='fp33' is neither a format"),
                                                 (3, TypeError, "accumulator must be a format"),
                                                 (np.float32(1), TypeError, "accumulator must be a format")])
def test_a_bad_accumulator_is_named_when_the_context_is_made(value, error, shown):
    """Not at the first reduction inside it: context() checks the accumulator on entry."""
    with pytest.raises(error, match=shown):
        with sf.context(accumulator=value):
            pass  # (nothing reduced)


@pytest.mark.parametrize("value", ["fp32", "bf16", "h100", sf.fp16, None])
def test_accumulators_a_context_takes(value):
    with sf.context(accumulator=value) as ctx:
        assert ctx.accumulator is value or ctx.accumulator == value
