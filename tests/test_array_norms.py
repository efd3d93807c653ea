"""np.linalg.norm, np.correlate and np.convolve on fp16 Arrays: every norm ord numpy
defines without singular values, any axis or pair of axes, keepdims -- against numpy:
float16's own norm where it is exact (inf, -inf, 0), and float64 (exact at these sizes
and ranges), rounded once by numpy's cast (monotone, so it commutes with the max and min
of the matrix norms), for the sums and dot products; the square root of the rounded sum
of squares by numpy float16's sqrt (correctly rounded: float32 holds 2 * 11 + 2 bits)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays as np_arrays

import softfloat as sf

# |x| in [2**-5, 300] or 0: squares are multiples of 2**-30 below 2**17, so sums of a few
# dozen of them are exact in float64, as are sums of the values themselves
VALUES = st.floats(-300, 300, width=16).filter(lambda v: v == 0 or abs(v) >= 2 ** -5)


def A(x):
    return sf.Array.from_bits(np.asarray(x, np.float16).view(np.uint16), "fp16")


def _rounded(values):
    with np.errstate(over="ignore"):
        return np.asarray(values).astype(np.float16)


def _expected(x, ord, axis, keepdims):
    wide = x.astype(np.float64)
    if ord in (np.inf, -np.inf, 0) and not isinstance(axis, tuple):
        return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims).astype(np.float16)
    if ord in (None, 2, "fro"):
        axes = tuple(range(x.ndim)) if axis is None else axis
        squares = np.sum(wide * wide, axis=axes, keepdims=keepdims)  # exact
        with np.errstate(over="ignore"):
            return np.sqrt(_rounded(squares))
    return _rounded(np.linalg.norm(wide, ord=ord, axis=axis, keepdims=keepdims))


CASES = [(None, None), (None, 1), (None, (0, 1)), (2, 0), (1, -1), (np.inf, 0), (-np.inf, 1), (0, 1),
         ("fro", (1, 0)), (1, (0, 1)), (-1, (1, 0)), (np.inf, (0, 1)), (-np.inf, (1, 0))]


@settings(max_examples=60, deadline=None)
@given(x=np_arrays(np.float16, st.sampled_from([(3, 4), (5, 2)]), elements=VALUES),
       case=st.sampled_from(CASES), keepdims=st.booleans())
def test_norms_equal_numpys_rounded_once(x, case, keepdims):
    ord, axis = case
    with sf.context(accumulator="fp64"):
        got = np.linalg.norm(A(x), ord=ord, axis=axis, keepdims=keepdims)
    expected = _expected(x, ord, axis, keepdims)
    assert got.shape == expected.shape
    assert np.array_equal(got.to_numpy(), expected)


def test_vector_and_matrix_defaults_and_three_axes():
    x = np.arange(24, dtype=np.float16).reshape(2, 3, 4) - 11
    with sf.context(accumulator="fp64"):
        assert np.linalg.norm(A(x)).item() == float(np.sqrt(np.float16(np.sum(x.astype(np.float64) ** 2))))
        over = np.linalg.norm(A(x), axis=(0, 2))
        assert over.shape == (3,)
        assert np.array_equal(over.to_numpy(), _expected(x, None, (0, 2), False))
        assert np.linalg.norm(A(x[0, 0]), ord=1).item() == float(np.sum(np.abs(x[0, 0].astype(np.float64))))
    with pytest.raises(ValueError, match="Improper number of dimensions"):
        np.linalg.norm(A(x), ord=1)


@pytest.mark.parametrize("ord, why", [(2, "singular values"), (-2, "singular values"), ("nuc", "singular values"),
                                      (3, "powers")])
def test_norms_without_a_step_by_step_definition_say_why(ord, why):
    x = A(np.ones((2, 2)))
    with pytest.raises(TypeError, match=why):
        np.linalg.norm(x, ord=ord, axis=None if ord != 3 else 1)


@settings(max_examples=80, deadline=None)
@given(a=np_arrays(np.float16, st.integers(1, 9), elements=VALUES),
       v=np_arrays(np.float16, st.integers(1, 9), elements=VALUES),
       mode=st.sampled_from(["full", "same", "valid"]))
def test_correlate_and_convolve_are_numpys_dot_products_rounded_once(a, v, mode):
    """Products of these fp16 values are exact in float64 and their sums too: numpy's
    float64 result, cast once, is the correctly rounded one (the fp64 accumulator's)."""
    with sf.context(accumulator="fp64"):
        for func in (np.correlate, np.convolve):
            got = func(A(a), A(v), mode)
            expected = _rounded(func(a.astype(np.float64), v.astype(np.float64), mode))
            assert got.shape == expected.shape and np.array_equal(got.to_numpy(), expected), func


def test_correlate_errors_are_numpys():
    with pytest.raises(ValueError, match="mode must be one of"):
        np.correlate(A([1.0]), A([1.0]), "middle")
    with pytest.raises(ValueError, match="cannot be empty"):
        np.convolve(A([1.0]), A(np.zeros(0)))
