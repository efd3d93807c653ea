"""Bad input across the published API, round 8 (the leftovers of the input7 audit): each
error names the argument, what was expected and what came.  Each case here failed before
its fix."""

from __future__ import annotations

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
