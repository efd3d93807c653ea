"""Bad input across the published API gets a TypeError/ValueError that names the argument,
says what was expected and what came (and, for a misspelt name, the name meant) -- never
a silent wrong answer, a numpy error from inside a kernel or a RuntimeWarning.  Each case
here failed before its fix (the probes of the input7 audit)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import softfloat as sf

platforms = importlib.import_module("softfloat.platforms")
recipes = importlib.import_module("softfloat.recipes")
rounding = importlib.import_module("softfloat.rounding")

A = sf.encode(np.arange(6.0).reshape(2, 3), "bf16")


# ---------------------------------------------------------------------------------------
# a misspelt name: the error says which name was meant
# ---------------------------------------------------------------------------------------
NEAR_MISSES = [
    (lambda: sf.as_format("bf-16"), ValueError, "fmt='bf-16' is not a known format (did you mean 'bf16'?)"),
    (lambda: sf.as_format("fp_16"), ValueError, "(did you mean 'fp16'?)"),
    (lambda: sf.as_format("fp8e4m3"), ValueError, "(did you mean 'fp8_e4m3'?)"),
    (lambda: sf.as_format("fp8"), ValueError, "(did you mean 'fp8_e4m3', 'fp8_e5m2', "),
    (lambda: sf.encode(1.0, "bfloat_16"), ValueError, "(did you mean 'bfloat16'?)"),
    (lambda: rounding.as_rounding("towards_zero"), ValueError, "(did you mean 'toward_zero'?)"),
    (lambda: rounding.as_rounding("nearest"), ValueError, "(did you mean 'nearest_even' or 'nearest_away'?)"),
    (lambda: rounding.as_rounding("up"), ValueError, "(did you mean 'upward'?)"),
    (lambda: sf.scaled_encode(np.ones(4), "e4m3", scaling="block"), ValueError,
     "scaling='block' is not valid (did you mean 'blocks'?)"),
    (lambda: sf.sum(A, "bf16", order="Pairwise"), ValueError, "order='Pairwise' is not valid (did you mean 'pairwise'?)"),
    (lambda: sf.context(order="revers").__enter__(), ValueError, "(did you mean 'reverse'?)"),
    (lambda: platforms.as_platform("x86"), ValueError, "got 'x86' (did you mean 'x86-sse'?)"),
    (lambda: recipes.as_recipe("bf16pure"), ValueError, "recipe 'bf16pure' is not a preset (did you mean 'bf16-pure'?)"),
]


@pytest.mark.parametrize("call, exc, text", NEAR_MISSES, ids=[t for _, _, t in NEAR_MISSES])
def test_a_near_miss_names_the_name_meant(call, exc, text):
    with pytest.raises(exc) as info:
        call()
    assert text in str(info.value), str(info.value)


@pytest.mark.parametrize("name", ["fp12", "tree", "zzz"])
def test_a_name_near_nothing_suggests_nothing(name):
    for call in (lambda: sf.as_format(name), lambda: sf.sum(A, "bf16", order=name)):
        with pytest.raises(ValueError) as info:
            call()
        assert "did you mean" not in str(info.value)


# ---------------------------------------------------------------------------------------
# a string option given something else: a TypeError naming it, not numpy's truth-value error
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("order", [np.array(["sequential", "reverse"]), np.array([1, 2], dtype=object),
                                   np.zeros(0), None, 3])
@pytest.mark.parametrize("where", ["sum", "context"])
def test_order_of_another_type_is_a_type_error_naming_it(order, where):
    with pytest.raises(TypeError, match=r"^order must be one of 'sequential', 'pairwise', 'reverse'; got "):
        if where == "sum":
            sf.sum(A, "bf16", order=order)
        else:
            with sf.context(order=order):
                pass


# ---------------------------------------------------------------------------------------
# operands: what does not fit is named, not computed
# ---------------------------------------------------------------------------------------
def test_vecdot_without_b_is_refused_not_summed():
    # vecdot(a, None) returned the sums of a's rows: the layout read a missing b as a sum
    with pytest.raises(TypeError, match=r"^b must be integer bit patterns .*got None \(NoneType\)"):
        sf.vecdot(A, None, "bf16")


@pytest.mark.parametrize("axis", [True, False, np.True_, (0, True)])
@pytest.mark.parametrize("kind", ["sum", "vecdot"])
def test_a_bool_axis_is_refused(kind, axis):
    # numpy refuses axis=True; softfloat took it as axis 1 (vecdot: any bool as 0 or 1)
    if kind == "vecdot" and isinstance(axis, tuple):
        pytest.skip("vecdot takes one axis")
    with pytest.raises(TypeError, match=r"^axis must be "):
        if kind == "sum":
            sf.sum(A, "bf16", axis=axis)
        else:
            sf.vecdot(A, A, "bf16", axis=axis)


@pytest.mark.parametrize("fields, named", [
    ((np.zeros((2, 3), int), [1, 2], 0), "sign(2, 3), exponent(2,), significand()"),
    ((0, np.arange(6)[::-2], [1, 2]), "sign(), exponent(3,), significand(2,)"),
])
def test_compose_names_the_fields_that_do_not_broadcast(fields, named):
    # was numpy's "shape mismatch: objects cannot be broadcast ... arg 0 with shape (2, 3)"
    with pytest.raises(ValueError, match=r"^operands could not be broadcast together: ") as info:
        sf.compose(*fields, "bf16")
    assert named in str(info.value)


@pytest.mark.parametrize("fmt", ["fp8_e4m3", "fp8_e5m2", "fp4_e2m1", "fp6_e3m2"])
def test_ulp_of_a_scalar_raises_no_warning_and_matches_the_array(fmt):
    # a 0-d ulp of a value in the lowest binades wrapped E - m below zero on the side
    # np.where discards, and numpy warned "overflow encountered in scalar subtract"
    f = sf.as_format(fmt)
    every = np.arange(1 << f.bits, dtype=f.storage_dtype)
    whole = sf.ulp(every, f)
    for v in every:  # warnings are errors in this suite
        assert sf.ulp(int(v), f) == whole[v]
        assert sf.ulp(v, f) == whole[v]


def test_ulp_of_fp16_scalars_near_zero_is_numpy_spacing():
    for v in [0x0000, 0x0001, 0x0002, 0x03FF, 0x0400, 0x0401, 0x0800, 0x1000, 0x3C00]:
        want = np.spacing(np.array(v, np.uint16).view(np.float16)).view(np.uint16)
        assert sf.ulp(v, "fp16") == want
