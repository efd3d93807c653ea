"""numpy's polynomial and histogram functions on fp16 Arrays.

Polynomials against numpy float16 running the same steps: numpy's float16 +, -, *, /
compute in float32 and round once into float16, which is correctly rounded (float32's 24
bits are at least 2 * 11 + 2, so the double rounding is innocuous), and its convolve sums
exact float16 products in float32 as the fp32 accumulator does.  Where numpy itself
leaves float16 (polyder's and polyint's integer factors promote to float64; vander
computes in float64), the oracle is the float16 step written with numpy's float16 ufuncs,
or the exact float64 value rounded once.  Histograms against numpy's own histogram of the
same float16 values; weights' sums against exact float64 sums rounded once."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays as np_arrays

import softfloat as sf
from tests.test_array_linalg import A, assert_same_bits

VALUES = st.floats(-4, 4, width=16)
COEFFS = np_arrays(np.float16, st.integers(1, 6), elements=VALUES)


@settings(max_examples=80, deadline=None)
@given(p=COEFFS, x=np_arrays(np.float16, st.integers(0, 5), elements=st.floats(-30, 30, width=16)))
def test_polyval_is_horners_rule_in_the_format(p, x):
    with np.errstate(all="ignore"):
        expected = np.polyval(p, x)
    assert_same_bits(np.polyval(A(p), A(x)), expected)
    assert_same_bits(np.polyval([float(c) for c in p], A(x)), expected)  # float coefficients: weak


@settings(max_examples=60, deadline=None)
@given(a=COEFFS, b=COEFFS)
def test_polyadd_polysub_polymul_polydiv_are_numpys_float16_steps(a, b):
    with sf.context(accumulator="fp32"), np.errstate(all="ignore"):
        assert_same_bits(np.polyadd(A(a), A(b)), np.polyadd(a, b))
        assert_same_bits(np.polysub(A(a), b), np.polysub(a, b))
        assert_same_bits(np.polymul(A(a), A(b)), np.polymul(a, b), zeros_by_value=True)
        if b[0] != 0:
            (q, r), (eq, er) = np.polydiv(A(a), A(b)), np.polydiv(a, b)
            assert_same_bits(q, eq)
            assert_same_bits(r, er)


@settings(max_examples=60, deadline=None)
@given(p=COEFFS, m=st.integers(0, 3), k=st.lists(VALUES, min_size=3, max_size=3))
def test_polyder_and_polyint_round_each_factor_step(p, m, k):
    expected_der = p
    for _ in range(m):  # each coefficient times its power: exact in float64, rounded once
        expected_der = (expected_der[:-1].astype(np.float64) * np.arange(len(expected_der) - 1, 0, -1)).astype(np.float16)
    assert_same_bits(np.polyder(A(p), m), expected_der)
    expected_int = p
    for i in range(m):  # a float64 quotient rounded into float16: correctly rounded (53 >= 2 * 11 + 2)
        quotient = (expected_int.astype(np.float64) / np.arange(len(expected_int), 0, -1)).astype(np.float16)
        expected_int = np.concatenate((quotient, np.float16([k[i]])))
    assert_same_bits(np.polyint(A(p), m, k=k[:max(m, 1)]), expected_int)


@settings(max_examples=40, deadline=None)
@given(x=np_arrays(np.float16, st.integers(1, 5), elements=st.floats(-6, 6, width=16)), n=st.integers(0, 6),
       increasing=st.booleans())
def test_vander_is_running_products_in_the_format(x, n, increasing):
    columns = np.ones((len(x), n), np.float16)
    if n > 1:
        with np.errstate(over="ignore"):
            columns[:, 1:] = np.multiply.accumulate(np.repeat(x[:, None], n - 1, axis=1), axis=1)
    assert_same_bits(np.vander(A(x), n, increasing=increasing), columns if increasing else columns[:, ::-1])


def test_polynomial_errors_name_the_argument():
    p = A([1.0, 2.0])
    with pytest.raises(ValueError, match="order m must be non-negative"):
        np.polyder(p, -1)
    with pytest.raises(ValueError, match="k must be a scalar or a 1-d array"):
        np.polyint(p, 3, k=[1.0, 2.0])
    with pytest.raises(TypeError, match="poly1d holds float64"):
        np.polyadd(p, np.poly1d([1.0]))
    with pytest.raises(ValueError, match="one-dimensional"):
        np.vander(A(np.ones((2, 2))))


# ---- histograms: numpy's own on the exact values; Array weights summed in the format -------
@settings(max_examples=60, deadline=None)
@given(x=np_arrays(np.float16, st.integers(1, 40), elements=st.floats(-100, 100, width=16)),
       bins=st.sampled_from([1, 5, 12, "auto", [-50.0, -1.0, 0.0, 3.5, 90.0]]), density=st.booleans())
def test_histogram_is_numpys_of_the_exact_values(x, bins, density):
    counts, edges = np.histogram(A(x), bins=bins, density=density)
    expected_counts, expected_edges = np.histogram(x, bins=bins, density=density)
    assert np.array_equal(counts, expected_counts) and counts.dtype == expected_counts.dtype
    assert np.array_equal(edges, expected_edges) and edges.dtype == expected_edges.dtype
    assert np.array_equal(np.histogram_bin_edges(A(x), bins=bins), expected_edges)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), bins=st.sampled_from([1, 4, 9, [-50.0, -1.0, 0.0, 3.5, 90.0]]))
def test_histogram_weights_are_summed_per_bin_in_the_format(data, bins):
    """In an fp64 accumulator each bin's sum of fp16 weights is exact, then rounded once:
    numpy's float64 weighted histogram of the same values, cast to float16."""
    n = data.draw(st.integers(1, 40))
    x = data.draw(np_arrays(np.float16, n, elements=st.floats(-100, 100, width=16)))
    w = data.draw(np_arrays(np.float16, n, elements=st.floats(-1000, 1000, width=16)))
    with sf.context(accumulator="fp64"):
        sums, edges = np.histogram(A(x), bins=bins, weights=A(w))
    expected, expected_edges = np.histogram(x, bins=bins, weights=w.astype(np.float64))
    assert isinstance(sums, sf.Array) and sums.format == sf.fp16
    assert np.array_equal(edges, expected_edges)
    assert np.array_equal(sums.to_numpy(), expected.astype(np.float16))  # +0 == -0


def test_histograms_of_several_coordinates_and_refusals():
    rng = np.random.default_rng(4)
    x, y = (rng.standard_normal(30).astype(np.float16) for _ in range(2))
    for got, expected in ((np.histogram2d(A(x), A(y), bins=3), np.histogram2d(x, y, bins=3)),
                          (np.histogramdd([A(x), A(y)], bins=2), np.histogramdd([x, y], bins=2))):
        assert all(np.array_equal(g, e) for g, e in zip(got[:1] + tuple(got[1]), expected[:1] + tuple(expected[1])))
    with pytest.raises(TypeError, match="density=True with Array weights"):
        np.histogram(A(x), weights=A(y), density=True)
    with pytest.raises(TypeError, match="Array weights: np.histogram takes them"):
        np.histogram2d(A(x), A(y), weights=A(y))
    with pytest.raises(ValueError, match="weights of shape"):
        np.histogram(A(x), weights=A(y[:3]))


def test_text_functions_format_the_exact_values():
    import io
    x = np.float16([0.1, -2.5, 2.0 ** -24, 65504.0])
    wide = x.astype(np.float64)  # every fp16 value, exactly
    assert np.array2string(A(x), precision=3) == np.array2string(wide, precision=3)
    assert np.array_str(A(x)) == np.array_str(wide)
    assert np.array_repr(A(x)) == repr(A(x))
    ours, theirs = io.StringIO(), io.StringIO()
    np.savetxt(ours, A(x))
    np.savetxt(theirs, wide)
    assert ours.getvalue() == theirs.getvalue()
    assert np.array_equal(np.loadtxt(io.StringIO(ours.getvalue())), wide)  # '%.18e' holds them exactly
