"""numpy's reduction keywords (dtype=, where=, initial=) and the ufunc methods (reduce,
accumulate, at) on Arrays, against oracles that do not share their code: numpy float64
sums of fp16 values (exact at these sizes, then one correct cast), numpy float16's
running products (``multiply.accumulate``), picks and unbuffered ``ufunc.at`` (each
float16 step a correct rounding: float32 holds 2 * 11 + 2 bits), and MPFR for the
divisions of ``mean``."""

from __future__ import annotations

from contextlib import nullcontext

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays as np_arrays

import softfloat as sf
from tests.fastpath_checks import general

SHAPES = st.sampled_from([(7,), (3, 4), (2, 3, 4)])
FINITE16 = st.floats(-60000, 60000, width=16, allow_subnormal=True)
ANY16 = st.floats(width=16, allow_nan=True, allow_infinity=True)


def A(x):
    return sf.Array.from_bits(np.asarray(x, np.float16).view(np.uint16), "fp16")


def same_values(got, expected):
    """Equal values (+0 == -0), NaN where numpy has NaN, and equal bits elsewhere than at
    zeros: a NaN made by an operation is the platform's default NaN, a zero's sign is
    softfloat's IEEE one (numpy's float sums start from +0)."""
    expected = np.asarray(expected, np.float16)
    values = got.to_numpy().astype(np.float16)
    assert values.shape == expected.shape, (got, expected)
    assert np.array_equal(np.isnan(values), np.isnan(expected)), (got, expected)
    keep = ~np.isnan(expected) & (expected != 0)
    assert np.array_equal(got.bits[keep], expected.view(np.uint16)[keep]), (got, expected)
    assert np.all(values[expected == 0] == 0), (got, expected)


@st.composite
def reductions(draw, elements=FINITE16):
    x = draw(np_arrays(np.float16, SHAPES, elements=elements))
    axis = draw(st.sampled_from([None, 0, -1] + ([(0, 1), (0, 2), 1] if x.ndim == 3 else [])))
    where = draw(st.one_of(st.just(True), np_arrays(bool, x.shape), np_arrays(bool, x.shape[-1:])))
    initial = draw(st.one_of(st.none(), elements))
    return x, axis, where, initial, draw(st.booleans())


@settings(max_examples=150, deadline=None)
@given(case=reductions())
def test_sum_with_where_and_initial_is_the_exact_sum_rounded_once(case):
    x, axis, where, initial, keepdims = case
    keywords = dict(axis=axis, where=where, keepdims=keepdims)
    if initial is not None:
        keywords["initial"] = float(initial)
    with sf.context(accumulator="fp64"):  # 84 terms of fp16 at most: every sum exact in fp64
        got = np.sum(A(x), **keywords)
    with np.errstate(over="ignore"):
        same_values(got, np.sum(x.astype(np.float64), **keywords).astype(np.float16))


@settings(max_examples=120, deadline=None)
@given(case=reductions(elements=ANY16))
def test_max_min_with_where_and_initial_equal_numpy_float16(case):
    x, axis, where, initial, keepdims = case
    keywords = dict(axis=axis, keepdims=keepdims)
    if initial is not None:
        keywords["initial"] = float(initial)
    if initial is not None or where is True:
        keywords["where"] = where
    with np.errstate(invalid="ignore"):
        for func in (np.max, np.min, np.nanmax, np.nanmin):
            if func in (np.nanmax, np.nanmin):
                if initial is None:
                    continue
                expected = (np.fmax if func is np.nanmax else np.fmin).reduce(x, **keywords)
            else:
                expected = func(x, **keywords)
            same_values(func(A(x), **keywords), expected)


def _sequential_products(x, axis, where, initial, keepdims):
    """numpy float16's multiply.accumulate (one rounding per step) over each slice's
    selected elements, ``initial`` first: the last running product.  (numpy's own float16
    prod keeps its running product in float32.)"""
    keep = np.broadcast_to(where, x.shape)
    lanes, kept = (x.reshape(1, -1), keep.reshape(1, -1)) if axis is None else \
        (np.moveaxis(x, axis, -1), np.moveaxis(keep, axis, -1))
    out = np.empty(lanes.shape[:-1], np.float16)
    for i in np.ndindex(out.shape):
        terms = np.concatenate([[np.float16(1 if initial is None else initial)], lanes[i][kept[i]]])
        out[i] = np.multiply.accumulate(terms.astype(np.float16))[-1]
    if axis is None:
        out = out.reshape(())
    return np.expand_dims(out, tuple(range(x.ndim)) if axis is None else axis) if keepdims else out


@settings(max_examples=100, deadline=None)
@given(case=reductions(elements=st.floats(-4, 4, width=16, allow_subnormal=True)))
def test_prod_with_where_and_initial_is_the_sequential_float16_product(case):
    x, axis, where, initial, keepdims = case
    if isinstance(axis, tuple):  # several axes are taken in C order: covered by axis=None
        axis = None
    keywords = dict(axis=axis, where=where, keepdims=keepdims)
    if initial is not None:
        keywords["initial"] = float(initial)
    with np.errstate(over="ignore", under="ignore"):
        expected = _sequential_products(x, axis, where, initial, keepdims)
        same_values(np.prod(A(x), **keywords), expected)
        along = {**keywords, "axis": 0 if axis is None else axis}
        if axis is not None:
            same_values(np.multiply.reduce(A(x), **along), expected)


@settings(max_examples=100, deadline=None)
@given(case=reductions(), wide=st.booleans())
def test_mean_with_where_and_dtype_is_the_rounded_sum_over_the_count(case, wide):
    x, axis, where, _, keepdims = case
    fmt, dtype = (sf.fp32, np.float32) if wide else (sf.fp16, None)
    counts = np.sum(np.broadcast_to(where, x.shape), axis=axis, keepdims=keepdims)
    empty = pytest.warns(RuntimeWarning, match="Mean of empty slice") if np.any(counts == 0) else nullcontext()
    with sf.context(accumulator="fp64"), empty:  # numpy's warning where a slice selects nothing
        got = np.mean(A(x), axis=axis, where=where, keepdims=keepdims, dtype=dtype)
    assert got.format is fmt
    # the sum in the fp64 accumulator (exact: fp16 values), one division there (numpy's
    # float64 division), one rounding into the format (numpy's cast: nearest even)
    totals = np.sum(x.astype(np.float64), axis=axis, where=where, keepdims=keepdims)
    with np.errstate(all="ignore"):
        means = (totals / counts).astype(np.float32 if wide else np.float16)
    for value, want, count in zip(np.ravel(got.to_numpy()), np.ravel(means), np.ravel(counts)):
        if count == 0:
            assert np.isnan(value)
        else:
            assert value == want, (value, want, count)


def test_dtype_converts_first_and_refuses_what_is_not_a_float():
    x = sf.asarray([60000.0, 60000.0, -60000.0], "fp16")
    assert np.sum(x, dtype="fp16").item() == 60000.0  # the fp32 accumulator holds 120000
    assert np.sum(x, dtype=np.float32).format is sf.fp32
    assert x.cumsum(dtype="fp32").tolist() == [60000.0, 120000.0, 60000.0]
    assert np.cumprod(x, dtype=np.float64).tolist() == [60000.0, 3.6e9, -2.16e14]
    assert np.trace(sf.asarray(np.eye(2), "bf16"), dtype=np.float32).format is sf.fp32
    with pytest.raises(TypeError, match=r"numpy.sum on a softfloat.Array: dtype=int64 is not a floating-point"):
        np.sum(x, dtype=np.int64)
    with pytest.raises(ValueError, match=r"dtype='nope' is not a known format"):
        np.mean(x, dtype="nope")
    with pytest.raises(TypeError, match=r"dtype= must be a float dtype or a softfloat format, got \[1\]"):
        np.mean(x, dtype=[1])
    with pytest.raises(ValueError, match="has no identity, so to use a where mask one has to specify 'initial'"):
        np.max(x, where=[True, False, True])


def test_nan_statistics_take_where():
    x = A([1.0, np.nan, 3.0, 5.0])
    mask = [True, True, True, False]
    assert np.nanmean(x, where=mask).item() == 2.0
    assert np.nanvar(x, where=mask).item() == 1.0
    assert np.nanmax(x, where=mask, initial=-np.inf).item() == 3.0


@settings(max_examples=100, deadline=None)
@given(x=np_arrays(np.float16, st.sampled_from([(9,), (4, 5)]), elements=ANY16),
       data=st.data())
def test_accumulate_equals_numpy_float16s_running_results(x, data):
    axis = data.draw(st.sampled_from(range(-x.ndim, x.ndim)))
    with np.errstate(all="ignore"):
        for ufunc in (np.maximum, np.minimum, np.fmax, np.fmin, np.multiply):
            same_values(ufunc.accumulate(A(x), axis=axis), ufunc.accumulate(x, axis=axis))
    no_nan = np.where(np.isnan(x), np.float16(1), x)  # the doubling path
    for ufunc in (np.maximum, np.fmin):
        same_values(ufunc.accumulate(A(no_nan), axis=axis), ufunc.accumulate(no_nan, axis=axis))
    assert np.array_equal(np.add.accumulate(A(x), axis=axis).bits, np.cumsum(A(x), axis=axis).bits)


@st.composite
def segments(draw):
    x = draw(np_arrays(np.float16, st.sampled_from([(9,), (7, 3), (2, 8)]), elements=ANY16))
    axis = draw(st.sampled_from(range(-x.ndim, x.ndim)))
    n = x.shape[axis]
    return x, axis, draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=6))


@settings(max_examples=100, deadline=None)
@given(case=segments())
def test_reduceat_reduces_numpys_segments(case):
    """Each segment's sum in an fp64 accumulator is the exact float64 sum of its fp16
    terms rounded once; its product the left-to-right float16 products (each correctly
    rounded: 24 >= 2 * 11 + 2; numpy's own float16 multiply.reduce keeps a float32
    running product instead); the picks numpy float16's own reduceat (exact)."""
    x, axis, indices = case
    terms = np.moveaxis(x, axis, 0)
    ends = indices[1:] + [terms.shape[0]]
    segments = [terms[i:e] if e > i else terms[i:i + 1] for i, e in zip(indices, ends)]
    with np.errstate(all="ignore"):
        with sf.context(accumulator="fp64"):
            total = np.add.reduceat(A(x), indices, axis=axis)
        sums = [np.sum(seg.astype(np.float64), axis=0).astype(np.float16) for seg in segments]
        same_values(total, np.moveaxis(np.stack(sums), 0, axis))
        products = [functools.reduce(np.multiply, seg) for seg in segments]
        same_values(np.multiply.reduceat(A(x), indices, axis=axis), np.moveaxis(np.stack(products), 0, axis))
        for ufunc in (np.maximum, np.minimum, np.fmax, np.fmin):
            same_values(ufunc.reduceat(A(x), indices, axis=axis), ufunc.reduceat(x, indices, axis=axis))


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_ufunc_at_is_numpys_unbuffered_operation_on_float16(data):
    shape = data.draw(st.sampled_from([(6,), (3, 4)]))
    a = data.draw(np_arrays(np.float16, shape, elements=st.floats(-100, 100, width=16)))
    n = data.draw(st.integers(0, 12))
    rows = data.draw(np_arrays(np.intp, n, elements=st.integers(-shape[0], shape[0] - 1)))
    index = rows if len(shape) == 1 else (rows, data.draw(np_arrays(np.intp, n, elements=st.integers(0, 3))))
    b = data.draw(np_arrays(np.float16, n, elements=st.floats(-100, 100, width=16)))
    for ufunc in (np.add, np.subtract, np.multiply, np.maximum, np.divide):
        got, expected = A(a), a.copy()
        with np.errstate(all="ignore"):
            assert ufunc.at(got, index, A(b)) is None
            ufunc.at(expected, index, b)
        same_values(got, expected)
    got, expected = A(a), a.copy()
    np.negative.at(got, index)
    np.negative.at(expected, index)
    same_values(got, expected)


def test_ufunc_at_rounds_each_step_and_counts_its_flags():
    grad = sf.asarray(np.zeros(3), "fp16")
    with sf.context() as ctx:
        np.add.at(grad, [0, 0, 0, 2], 2.0 ** -24)   # 3 subnormal steps on element 0: exact
        np.add.at(grad, [1, 1], 0.1)                 # 0.1 rounds into fp16 (a weak operand)
    assert grad.tolist() == [3 * 2.0 ** -24, float(np.float16(0.1) * 2), 2.0 ** -24]
    assert ctx.flags.inexact >= 1
    with pytest.raises(TypeError, match="must be a softfloat.Array"):
        np.add.at(np.zeros(3), [0], sf.asarray(1.0, "fp16"))


def test_ufunc_methods_not_defined_say_so():
    x = sf.asarray([1.0, 2.0], "fp16")
    with pytest.raises(TypeError, match=r"numpy.less.reduceat on a softfloat.Array is not defined"):
        np.less.reduceat(x, [0])
    with pytest.raises(IndexError, match=r"numpy.add.reduceat: index 2 is out of bounds for axis 0 with size 2"):
        np.add.reduceat(x, [0, 2])
    with pytest.raises(TypeError, match=r"reduceat: indices must be a 1-d array of integers; got dtype float64"):
        np.add.reduceat(x, [0.0])
    with pytest.raises(TypeError, match=r"numpy.greater.reduce on a softfloat.Array is not defined"):
        np.greater.reduce(x)
    with pytest.raises(TypeError, match=r"numpy.concatenate on a softfloat.Array is not defined with dtype="):
        np.concatenate([x, x], dtype=np.float32)


def test_one_operand_einsum_is_a_transpose_then_a_sum():
    x = sf.asarray([[1.0, -2.0, 5.0], [3.0, 4.0, 6.0]], "bf16")
    assert np.array_equal(np.einsum("ij->j", x).bits, np.sum(x, axis=0).bits)
    assert np.array_equal(np.einsum("ij->ji", x).bits, x.T.bits)
    assert np.einsum("ji", x).shape == (3, 2) and np.einsum("ij->", x).item() == 17.0


def test_a_0d_array_formats_as_its_value():
    loss = sf.asarray(0.1, "bf16")
    assert f"{loss:.4f}" == "0.1001" and f"{loss:e}" == format(0.10009765625, "e")
    x = sf.asarray([1.0, 2.0], "fp16")
    assert f"{x}" == str(x)
    with pytest.raises(TypeError, match=r"unsupported format string '.2f' for an Array of shape \(2,\)"):
        f"{x:.2f}"


@pytest.mark.parametrize("call", [lambda x: np.sum(x, axis=2), lambda x: np.max(x, axis=2),
                                  lambda x: np.prod(x, axis=(0, 4)), lambda x: np.linalg.norm(x, axis=3),
                                  lambda x: np.mean(x, axis=-3), lambda x: np.apply_along_axis(np.sum, 2, x),
                                  lambda x: np.diff(x, axis=2), lambda x: np.tensordot(x, x, axes=([2], [0])),
                                  lambda x: np.trim_zeros(x, axis=3)])
def test_an_axis_out_of_range_is_numpys_error_not_another_axis(call):
    x = sf.asarray(np.ones((2, 3)), "fp16")
    with pytest.raises((np.exceptions.AxisError, ValueError), match="out of bounds"):
        call(x)
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        np.max(x, axis=(1, -1))


@pytest.mark.parametrize("axes", [None, 0, 1, (0, 2), (-1,)])
def test_fftshift_and_ifftshift_are_numpys_rolls(axes):
    x = np.arange(60, dtype=np.float16).reshape(3, 4, 5) - 30
    for shift in (np.fft.fftshift, np.fft.ifftshift):
        got = shift(A(x), axes=axes)
        assert isinstance(got, sf.Array) and np.array_equal(got.bits, shift(x, axes=axes).view(np.uint16))


def test_apply_along_and_over_axes_call_the_function_on_arrays():
    x = np.random.default_rng(2).standard_normal((3, 4, 5)).astype(np.float16)
    seen = []

    def spread(v):
        seen.append(type(v))
        return np.max(v) - np.min(v)  # an Array step: one rounding in fp16

    got = np.apply_along_axis(spread, 1, A(x))
    assert set(seen) == {sf.Array} and got.shape == (3, 5)
    assert np.array_equal(got.bits, (x.max(axis=1) - x.min(axis=1)).view(np.uint16))  # fp16 difference
    assert np.array_equal(np.apply_along_axis(np.argmax, 2, A(x)), np.apply_along_axis(np.argmax, 2, x))
    outer = np.apply_along_axis(lambda v: np.outer(v, v), 0, A(x[:, :, 0]))
    assert np.array_equal(outer.to_numpy(), np.apply_along_axis(lambda v: np.outer(v, v), 0, x[:, :, 0]))
    over = np.apply_over_axes(np.max, A(x), [0, 2])
    assert np.array_equal(over.bits, np.apply_over_axes(np.max, x, [0, 2]).view(np.uint16))


@settings(max_examples=150, deadline=None)
@given(x=np_arrays(np.float16, st.sampled_from([(1,), (9,), (4, 5), (2, 3, 4)]),
                   elements=st.sampled_from([0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, 65504.0, 2.0 ** -24, np.nan])),
       data=st.data())
def test_max_min_reductions_take_the_same_element_with_and_without_the_shortcut(x, data):
    """Without NaNs the pick is the largest (smallest) totalOrder key at once (+0 above
    -0); the general path halves the axis with IEEE maximum/minimum: same bits, same
    flags (none), with NaNs too (the shortcut stands aside)."""
    axis = data.draw(st.sampled_from([None] + list(range(-x.ndim, x.ndim))))
    for reduce in (np.max, np.min, np.fmax.reduce, np.fmin.reduce, np.maximum.reduce, np.minimum.reduce):
        kwargs = {"axis": axis} if reduce in (np.max, np.min) or axis is not None else {"axis": None}
        with sf.context() as fast_ctx:
            fast = reduce(A(x), **kwargs)
        with sf.context() as slow_ctx:
            slow = general(lambda: reduce(A(x), **kwargs))
        assert np.array_equal(fast.bits, slow.bits)
        assert (fast_ctx.flags.summary(), fast_ctx.flags.operations) == (slow_ctx.flags.summary(),
                                                                          slow_ctx.flags.operations)
    no_nan = np.where(np.isnan(x), np.float16(0), x)
    biggest, smallest = A(no_nan).max(), A(no_nan).min()
    assert biggest.to_numpy() == no_nan.max() and smallest.to_numpy() == no_nan.min()
    if biggest.to_numpy() == 0:  # IEEE maximum: +0 above -0 (numpy's max keeps whichever came first)
        assert biggest.bits == (0 if (no_nan.view(np.uint16) == 0).any() else 0x8000)


EMPTY_CALLS = [lambda x: np.sum(x, axis=0), lambda x: np.sum(x, axis=1), lambda x: np.max(x, axis=0),
               lambda x: np.prod(x, axis=0), lambda x: np.cumsum(x, axis=1), lambda x: np.dot(x[0, :0], x[0, :0]),
               lambda x: np.inner(x[:, :0], x[:, :0]), lambda x: np.vdot(x[:0], x[:0]),
               lambda x: np.tensordot(x, x.T, axes=1), lambda x: np.tensordot(x.T, x, axes=1),
               lambda x: np.linalg.vector_norm(x, axis=0), lambda x: np.sort(x, axis=0), lambda x: np.diff(x, axis=0)]


@pytest.mark.parametrize("shape", [(3, 0), (0, 3)])
@pytest.mark.parametrize("call", EMPTY_CALLS)
def test_an_empty_axis_gives_numpys_shape_and_values(shape, call):
    """Reshapes with -1 beside a zero length are ambiguous in numpy; every one of these
    gives numpy float16's result (or its error type)."""
    x = np.zeros(shape, np.float16)
    try:
        with np.errstate(all="ignore"):
            expected = call(x)
    except (ValueError, IndexError) as error:
        with pytest.raises(type(error)):
            call(A(x))
        return
    got = call(A(x))
    assert got.shape == np.shape(expected)
    assert np.array_equal(got.to_numpy(), expected)
