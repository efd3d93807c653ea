"""fp32_scales of one amax (softfloat.scaled._scales._one_scale: a delayed scale's update,
every step of every call site) on Python floats: the same fp32 bits as the array path
(numpy's casts and where/maximum over a one-element array), and as that path with the
shortcuts off (its roundings by the codec), over amaxes of every class."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

import softfloat as sf
from softfloat import _fastpaths
from softfloat.scaled import _scales

AMAXES = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                   st.floats(min_value=0, max_value=2.0**-120), st.floats(min_value=1e30, max_value=1e300),
                   st.sampled_from([0.0, -0.0, 2.0**-149, 2.0**-150, 3.4e38, 3.5e38, 1e-45, 448.0]))


def _bits(x):
    return np.asarray(x, dtype=np.float32).reshape(-1).view(np.uint32).tolist()


@settings(max_examples=400, deadline=None)
@given(amax=AMAXES, fmt=st.sampled_from(["e4m3", "e5m2", "fp16", "bf16"]), margin=st.integers(0, 3),
       eps=st.sampled_from([0.0, 1e-12, 2.0**-130, 1.0]), p2=st.booleans(),
       previous=st.sampled_from([1.0, 224.0, 2.0**-126, 3.4e38, 0.5, float("nan")]),
       kind=st.sampled_from([float, np.float64, np.float32, np.asarray]))
@example(amax=float("nan"), fmt="e4m3", margin=0, eps=0.0, p2=False, previous=224.0, kind=float)
@example(amax=1e-45, fmt="e5m2", margin=3, eps=0.0, p2=True, previous=1.0, kind=float)  # a scale beyond fp32
def test_one_scale_equals_the_array_path(amax, fmt, margin, eps, p2, previous, kind):
    with np.errstate(over="ignore"):
        value = kind(amax)
    options = dict(margin=margin, amax_epsilon=eps, power_of_two=p2, previous=previous)
    got = _scales.fp32_scales(value, fmt, **options)
    want = _scales.fp32_scales(np.array([float(np.float64(value))]), fmt, **options)
    saved = _fastpaths.ENABLED
    _fastpaths.ENABLED = False
    try:
        general = _scales.fp32_scales(value, fmt, **options)
    finally:
        _fastpaths.ENABLED = saved
    assert type(got) is np.ndarray and got.shape == () and got.dtype == np.float32
    assert _bits(got) == _bits(want) == _bits(general)


def test_a_delayed_update_takes_one_scale(monkeypatch):
    ran = []
    real = _scales._one_scale
    monkeypatch.setattr(_scales, "_one_scale", lambda *a: ran.append(a[0]) or real(*a))
    ds = sf.DelayedScaling("e4m3", amax_history_len=2)
    assert [ds.update(a) for a in (2.0, 8.0, 0.5, 0.0)] == [224.0, 56.0, 56.0, 896.0]
    assert ran == [2.0, 8.0, 8.0, 0.5]
