"""np.cov, np.corrcoef, the weighted np.average and np.bincount on fp16 Arrays against
oracles that share none of their code: Python floats for the fp64 accumulator (products of fp16
values are exact in float64, each addition one rounding), numpy float16 for the steps in
the format (its subtraction, multiplication, division and square root are correctly
rounded: float32 holds 2 * 11 + 2 bits), MPFR (tests.oracle) for the division by a count,
and numpy float64 for the shapes and the argument handling."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays as np_arrays

import softfloat as sf
from tests.oracle import round_exact

VALUES = st.floats(-300, 300, width=16, allow_subnormal=False)


def A(x):
    return sf.Array.from_bits(np.asarray(x, np.float16).view(np.uint16), "fp16")


def _f16(value: float) -> np.float16:
    with np.errstate(over="ignore"):
        return np.float16(value)  # float64 -> float16: one rounding to nearest even


def _divided(value, count: int) -> np.float16:
    """value / count correctly rounded into fp16 (MPFR)."""
    if not np.isfinite(value):
        return np.float16(value)  # an infinity over a positive count, or NaN
    q = Fraction(float(value)) / count
    return np.float16(float(round_exact(abs(q), q < 0, sf.fp16, "nearest_even").value))


def _sequential(terms) -> float:
    total = 0.0
    first = True
    for t in terms:  # the fp64 accumulator: the first term exact, then one rounding per addition
        total = float(t) if first else total + float(t)
        first = False
    return total


def _cov_oracle(x, ddof):
    rows, n = x.shape
    means = [_f16(_sequential(r) / n) for r in x]  # the mean: sum and division in fp64, then into fp16
    d = np.array([[r[j] - means[i] for j in range(n)] for i, r in enumerate(x)], dtype=np.float16)
    c = np.empty((rows, rows), np.float16)
    for i in range(rows):
        for j in range(rows):
            total = _f16(_sequential(float(d[i, k]) * float(d[j, k]) for k in range(n)))
            c[i, j] = _divided(total, n - ddof)
    return c


@settings(max_examples=60, deadline=None)
@given(x=np_arrays(np.float16, st.tuples(st.integers(1, 4), st.integers(2, 7)), elements=VALUES),
       bias=st.booleans())
def test_cov_and_corrcoef_are_their_steps_in_the_format(x, bias):
    with sf.context(accumulator="fp64"):
        got = np.cov(A(x), bias=bias)
        corr = np.corrcoef(A(x))
    expected = _cov_oracle(x, 0 if bias else 1).squeeze()
    assert got.shape == np.cov(x.astype(np.float64), bias=bias).shape
    assert np.array_equal(got.to_numpy(), expected, equal_nan=True)
    c = _cov_oracle(x, 1)
    with np.errstate(all="ignore"):
        if x.shape[0] == 1:
            want = (c / c).squeeze()
        else:
            s = np.sqrt(np.diagonal(c))
            want = np.clip(c / s[:, None] / s[None, :], np.float16(-1), np.float16(1))
    assert np.array_equal(corr.to_numpy(), want, equal_nan=True)


def test_cov_takes_numpys_arguments():
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    for kwargs in ({}, {"rowvar": False}, {"ddof": 0}, {"bias": True}, {"y": y}, {"y": y, "rowvar": False},
                   {"aweights": np.array([0.5, 2.0, 1.0])}, {"fweights": [1, 3, 2, 1], "rowvar": False},
                   {"fweights": [1, 3, 2], "aweights": np.arange(1.0, 4.0), "ddof": 1}):
        expected = np.cov(x, **kwargs)
        got = np.cov(sf.asarray(x, "fp32"), **{k: sf.asarray(v, "fp32") if k == "y" else v
                                               for k, v in kwargs.items()})
        assert got.shape == expected.shape
        assert np.allclose(got.to_numpy(), expected, rtol=1e-5, atol=1e-6)
    assert np.cov(sf.asarray(x, "bf16"), dtype=np.float32).format is sf.fp32
    assert np.corrcoef(sf.asarray(x, "fp32"), rowvar=False).shape == (3, 3)
    with pytest.raises(RuntimeError, match="incompatible numbers of samples and aweights"):
        np.cov(sf.asarray(x, "fp32"), aweights=np.ones(4))  # numpy's error: x has 3 observations


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_weighted_average_is_products_sums_then_one_division(data):
    shape = data.draw(st.sampled_from([(5,), (3, 4)]))
    x = data.draw(np_arrays(np.float16, shape, elements=VALUES))
    axis = data.draw(st.sampled_from([None, 0] if len(shape) == 1 else [None, 0, 1]))
    along = shape[axis] if axis is not None and data.draw(st.booleans()) else None
    w = data.draw(np_arrays(np.float16, (along,) if along else shape, elements=st.floats(0.25, 8, width=16)))
    with sf.context(accumulator="fp64"):
        got, scale = np.average(A(x), axis=axis, weights=A(w), returned=True)
    wide = np.broadcast_to(np.moveaxis(np.broadcast_to(w, shape[:axis] + shape[axis + 1:] + w.shape), -1, axis)
                           if along else w, shape)
    with np.errstate(over="ignore"):
        products = (x * wide).astype(np.float16)  # numpy float16: one rounding each
    lanes = (lambda a: a.reshape(1, -1)) if axis is None else (lambda a: np.moveaxis(a, axis, -1).reshape(
        -1, shape[axis]))
    sums = np.array([_f16(_sequential(r)) for r in lanes(products)], np.float16)
    scales = np.array([_f16(_sequential(r)) for r in lanes(np.asarray(wide))], np.float16)
    with np.errstate(all="ignore"):
        want = (sums / scales).astype(np.float16)
    assert np.array_equal(got.to_numpy().reshape(-1), want, equal_nan=True)
    assert np.array_equal(scale.to_numpy().reshape(-1), scales)


def test_weighted_average_errors_are_numpys():
    x = sf.asarray(np.ones((2, 3)), "fp16")
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        np.average(x, weights=np.zeros((2, 3)))
    with pytest.raises(TypeError, match="axis must be specified"):
        np.average(x, weights=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="do not match"):
        np.average(x, axis=1, weights=[1.0, 2.0])


@settings(max_examples=60, deadline=None)
@given(ids=np_arrays(np.intp, st.integers(0, 40), elements=st.integers(0, 6)),
       data=st.data(), minlength=st.integers(0, 9))
def test_bincount_sums_each_bins_weights_rounded_once(ids, data, minlength):
    """fp64 accumulator: each bin's sum of fp16 weights is exact, so numpy's float64
    bincount cast once is the expected result."""
    w = data.draw(np_arrays(np.float16, ids.shape, elements=VALUES))
    with sf.context(accumulator="fp64"):
        got = np.bincount(ids, weights=A(w), minlength=minlength)
    expected = np.bincount(ids, weights=w.astype(np.float64), minlength=minlength)
    with np.errstate(over="ignore"):
        assert np.array_equal(got.to_numpy(), expected.astype(np.float16))


def test_bincount_in_an_fp16_accumulator_stalls_as_numpys_running_float16_sum():
    ids = np.array([0, 1] * 3000)
    ones = A(np.ones(6000))
    with sf.context(accumulator="fp16") as ctx:
        got = np.bincount(ids, weights=ones)
    running = np.add.accumulate(np.ones(3000, np.float16))[-1]  # numpy float16, one rounding per step
    assert got.tolist() == [float(running)] * 2 == [2048.0] * 2
    assert ctx.flags.swamped == 2 * (3000 - 2048)
    assert np.bincount([2, 0], weights=A([1.0, 2.0])).tolist() == [2.0, 0.0, 1.0]   # an empty bin is +0
    with pytest.raises(TypeError, match="non-negative integers"):
        np.bincount(A([1.0]))
    with pytest.raises(ValueError, match="differ"):
        np.bincount([0, 1], weights=A([1.0]))
