"""Bad input across the published API, round 8 (the leftovers of the input7 audit): each
error names the argument, what was expected and what came.  Each case here failed before
its fix."""

from __future__ import annotations

import importlib
import re

import numpy as np
import pytest

import softfloat as sf


# ---------------------------------------------------------------------------------------
# DelayedScaling.update takes one amax: the error says so, not "the scales have shape ()"
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("amax, shape", [(np.array([3.0]), "(1,)"), ([1.0, 2.0], "(2,)"),
                                         (np.ones((2, 2)), "(2, 2)")])
def test_delayed_scaling_update_names_the_one_amax_it_takes(amax, shape):
    ds = sf.DelayedScaling()
    with pytest.raises(ValueError) as err:
        ds.update(amax)
    assert str(err.value) == f"amax must be one number, this step's amax (shape ()); got shape {shape}"
    assert ds.amax_history.shape == (0,)  # nothing recorded
    assert ds.update(np.array(3.0)) == ds.scale  # a 0-d array is one number


def test_scaled_encode_amax_and_scale_shapes_say_what_was_expected():
    with pytest.raises(ValueError, match=re.escape(
            "amax must be one number or one amax per scale (the scales have shape (2, 1)); got shape (3,)")):
        sf.scaled_encode(np.ones((2, 4)), "e4m3", scaling="rows", amax=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=re.escape(
            "scale must be one number or one scale per unit (the scales have shape (2, 1)); got shape (3,)")):
        sf.scaled_encode(np.ones((2, 4)), "e4m3", scaling="rows", scale=[1.0, 2.0, 3.0])


# ---------------------------------------------------------------------------------------
# Format(name=): a name softfloat reads as another format is refused
# ---------------------------------------------------------------------------------------
def test_a_format_named_after_another_format_is_refused():
    with pytest.raises(ValueError) as err:
        sf.Format(exponent_bits=5, mantissa_bits=2, name="bf16")
    assert str(err.value) == (
        "name='bf16' names another format: as_format('bf16') is e8m7 (ieee), softfloat.bf16; this "
        "format is e5m2 (ieee), which would print as 'bf16' yet not equal it; leave name out (it is "
        "then 'e5m2') or choose a name that softfloat does not read as a format")
    with pytest.raises(ValueError, match=re.escape("as_format('HALF') is e5m10 (ieee), softfloat.fp16")):
        sf.Format(exponent_bits=6, mantissa_bits=9, name="HALF")
    with pytest.raises(ValueError, match=re.escape("as_format('e6m9') is e6m9 (ieee); this format is e5m2")):
        sf.Format(exponent_bits=5, mantissa_bits=2, name="e6m9")
    # where the layout's own name is taken too (an IEEE e4m3: "e4m3" is OCP's fn), none is offered
    with pytest.raises(ValueError, match=r"this format is e4m3 \(ieee\), .*; choose a name"):
        sf.Format(exponent_bits=4, mantissa_bits=3, name="float8_e3m4")


def _names_as_format_reads():
    names = [f.name for f in sf.catalogue()] + list(sf.aliases())
    names += ["float8_e4m3", "float8_e3m4", "e6m9", "e5m4fn", "e4m3fnuz", "e3m4"]
    names += ["torch." + n for n in importlib.import_module("softfloat.formats").TORCH_FLOATS]
    return names


def test_a_format_that_prints_as_a_name_equals_it():
    """Every layout of the catalogue (and two custom ones) under every name as_format reads:
    the Format is made exactly where that name reads as its layout, and then it equals the
    name, hashes as the format it names and prints as it."""
    layouts = [*sf.catalogue(), sf.Format(6, 9), sf.Format(5, 4, "fn"), sf.Format(4, 3), sf.Format(3, 4)]
    for name in _names_as_format_reads():
        named = sf.as_format(name)
        for lay in layouts:
            make = lambda: sf.Format(lay.exponent_bits, lay.mantissa_bits, lay.specials, name=name)  # noqa: E731
            if name == lay.name:  # a layout's own default name: not checked (see the last test)
                continue
            if named == lay:
                fmt = make()
                assert fmt == name and fmt == named and hash(fmt) == hash(named) and str(fmt) == name
            else:
                with pytest.raises(ValueError, match=re.escape(f"name={name!r} names another format")):
                    make()


def test_names_softfloat_does_not_read_stay_free():
    for name in ("mine", "fp64-top-word", "e20m3", "torch.int8", "bf16x", ""):
        fmt = sf.Format(5, 2, name=name)
        assert fmt == sf.fp8_e5m2 and fmt.name == (name or "e5m2")
    # a format's own default name, and every catalogue format rebuilt with its name, are kept
    for f in sf.catalogue():
        assert sf.Format(f.exponent_bits, f.mantissa_bits, f.specials, name=f.name).name == f.name
    # the IEEE e4m3 layout's default name is "e4m3", which as_format reads as OCP's fn
    # format (as before: the default names are left as they were); given, it is kept too
    assert sf.Format(4, 3, name="e4m3").name == sf.Format(4, 3).name == "e4m3"
