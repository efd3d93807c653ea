"""Numerical users' numpy programs on Arrays, round 5: what a probe of real programs found
missing, wrong or slow, each checked against numpy float16/float32, ml_dtypes, MPFR or
Python's own arithmetic (never the code under test restated)."""

from __future__ import annotations

import zlib
from fractions import Fraction

import numpy as np
import pytest

import softfloat as sf


def _values(seed: str, shape, scale=3.0):
    return np.random.default_rng(zlib.crc32(seed.encode())).standard_normal(shape) * scale


# ---- x == object(): numpy's all-False comparison with a Python object -------------------
def test_equality_with_a_plain_object_is_numpys_object_comparison():
    """``x == object()`` raised numpy's "operand type(s) all returned NotImplemented" (a
    sentinel check, ``if value == MISSING``, in user code); numpy compares a float array with
    any Python object element by element: all False (``!=``: all True), a Fraction by value."""
    h = np.array([0.5, 1.5, -2.0], np.float16)
    x = sf.asarray(h, "fp16")
    sentinel = object()
    for other in (sentinel, {}, Fraction(3, 2), Fraction(1, 3)):
        np.testing.assert_array_equal(x == other, h == other)
        np.testing.assert_array_equal(x != other, h != other)
        np.testing.assert_array_equal(np.equal(other, x), np.equal(other, h))
    assert (x[0] == sentinel) is np.False_ or (x[0] == sentinel) == np.False_


# ---- reduceat of the two-operand ufuncs: each segment numpy's chain --------------------
@pytest.mark.parametrize("ufunc", [np.subtract, np.divide, np.fmod, np.hypot, np.arctan2, np.logaddexp])
@pytest.mark.parametrize("fmt, dtype", [("fp16", np.float16), ("fp32", np.float32)])
def test_reduceat_of_chain_ufuncs_is_each_segments_chain(ufunc, fmt, dtype):
    """np.subtract.reduceat (a segmented difference, or divide: segmented ratios) was refused;
    it is each segment's reduce (numpy's loop, r = ufunc(r, x[k]), one rounding a step).
    Oracle: numpy float16/float32 (correctly rounded - and /, exact fmod) for the
    arithmetic ones; the libm ones step by step in float64, each step rounded once."""
    h = (np.abs(_values(f"reduceat {ufunc.__name__}", 11)) + 0.25).astype(dtype)
    indices = [0, 3, 3, 7, 2, 9]
    got = ufunc.reduceat(sf.asarray(h, fmt), indices)
    if ufunc in (np.subtract, np.divide, np.fmod):
        expected = ufunc.reduceat(h, indices)
    else:
        ends = indices[1:] + [len(h)]
        expected = []
        for s, e in zip(indices, ends):
            r = h[s]
            for v in (h[s + 1:e] if e > s else []):
                r = dtype(ufunc(np.float64(r), np.float64(v)))
            expected.append(r)
        expected = np.array(expected, dtype)
    np.testing.assert_array_equal(got.bits, expected.view(got.bits.dtype))
    two = np.stack([h, h[::-1]], axis=1)
    np.testing.assert_array_equal(ufunc.reduceat(sf.asarray(two, fmt), indices, axis=0).bits[:, 0], got.bits)


# ---- copy.copy, convolve with a list of taps ------------------------------------------
def test_copy_copy_copies_the_elements():
    """``y = copy.copy(x); y[0] = 0`` changed x too: the default shallow copy shared the
    bits array.  numpy's copy.copy of an ndarray copies the data (the oracle)."""
    import copy
    h = _values("copy", 5).astype(np.float16)
    x = sf.asarray(h, "fp16")
    y, g = copy.copy(x), copy.copy(h)
    y[0], g[0] = 0.0, 0.0
    np.testing.assert_array_equal(x.bits, h.view(np.uint16))
    np.testing.assert_array_equal(y.bits, g.view(np.uint16))
    f = sf.asarray(np.ones((2, 3)), "bf16").copy(order="F")
    assert f.bits.flags.f_contiguous


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_with_a_list_of_taps(mode):
    """``np.convolve(x, [1, 2, 1])`` raised AttributeError ('list' object has no attribute
    'shape'); the list is an operand like any other (its values in the Array's format).
    Oracle: numpy float32 on the exact products and sums of three fp16 values (exact
    in float32; the Array rounds each output once)."""
    h = _values(f"convolve {mode}", 7).astype(np.float16)
    got = np.convolve(sf.asarray(h, "fp16"), [1, 2, 1], mode=mode)
    expected = np.convolve(h.astype(np.float32), np.array([1, 2, 1], np.float32), mode=mode).astype(np.float16)
    np.testing.assert_array_equal(got.bits, expected.view(np.uint16))
    np.testing.assert_array_equal(np.correlate(sf.asarray(h, "fp16"), (1.0, -1.0)).bits,
                                  (h[:-1] - h[1:]).view(np.uint16))


# ---- histogram range= from the data ---------------------------------------------------
def test_histogram_range_of_array_elements():
    """``np.histogram(x, bins=4, range=(x.min(), x.max()))`` raised numpy.result_type's
    TypeError (the bounds are 0-d Arrays); they are their exact values, so the counts and
    edges are numpy float16's for the same data and bounds (the oracle), as are
    histogram_bin_edges' and histogram2d's."""
    h = _values("histogram range", 16).astype(np.float16)
    x = sf.asarray(h, "fp16")
    counts, edges = np.histogram(x, bins=4, range=(x.min(), x.max()))
    expected_counts, expected_edges = np.histogram(h, bins=4, range=(h.min(), h.max()))
    np.testing.assert_array_equal(counts, expected_counts)
    np.testing.assert_array_equal(edges.view(np.uint16), expected_edges.view(np.uint16))
    np.testing.assert_array_equal(np.histogram_bin_edges(x, 3, range=(x.min(), x[0])),
                                  np.histogram_bin_edges(h, 3, range=(h.min(), h[0])))
    bounds = [(x.min(), x.max()), (x[1], x[2] + 8)]
    got = np.histogram2d(x[:8], x[8:], bins=2, range=bounds)
    expected = np.histogram2d(h[:8], h[8:], bins=2, range=[(h.min(), h.max()), (h[1], h[2] + np.float16(8))])
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
