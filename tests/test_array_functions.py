"""numpy's structural, ordering and statistical functions on Arrays: structural ones equal
numpy float16 bit for bit and keep the format; arithmetic ones equal the composition of
bit-level operations they are defined as (numpy float16 where that is the same thing)."""

from __future__ import annotations

import functools
import itertools
import operator
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays as np_arrays

import softfloat as sf

F16 = np_arrays(np.float16, st.sampled_from([(6,), (3, 4), (2, 3, 2)]),
                elements=st.floats(-100, 100, width=16, allow_subnormal=True))
F16_NAN = np_arrays(np.float16, st.sampled_from([(7,), (3, 4)]),
                    elements=st.floats(width=16, allow_nan=True, allow_infinity=True))


def A(x):
    return sf.Array.from_bits(np.asarray(x, np.float16).view(np.uint16), "fp16")


def same(got, expected):
    """An fp16 Array bit for bit numpy's float16 result."""
    assert isinstance(got, sf.Array) and got.format == sf.fp16
    expected = np.asarray(expected, np.float16)
    nan = np.isnan(expected)  # a NaN made by an operation is the platform's default NaN
    assert np.array_equal(np.isnan(got.to_numpy()), nan), (got, expected)
    assert np.array_equal(got.bits[~nan], expected.view(np.uint16)[~nan]), (got, expected)


@settings(max_examples=40, deadline=None)
@given(x=F16)
def test_structural_functions_are_numpys_on_the_bits(x):
    a = A(x)
    cases = [
        (np.ravel, ()), (np.flip, ()), (np.fliplr if x.ndim >= 2 else np.flip, ()), (np.roll, (2,)),
        (np.tile, ((2, 1),)), (np.repeat, (2,)), (np.expand_dims, (0,)), (np.squeeze, ()), (np.atleast_3d, ()),
        (np.swapaxes, (0, -1)), (np.moveaxis, (0, -1)), (np.resize, ((5,),)), (np.delete, (1, 0)),
        (np.trim_zeros, ()),
    ]
    if x.ndim >= 2:
        cases += [(np.tril, ()), (np.triu, (1,)), (np.rot90, ()), (np.diagonal, ()), (np.flipud, ())]
    for func, args in cases:
        same(func(a, *args), func(x, *args))
    for part, expected in zip(np.array_split(a, 3, axis=-1), np.array_split(x, 3, axis=-1)):
        same(part, expected)
    same(np.concatenate([a, a], axis=0), np.concatenate([x, x]))
    same(np.stack([a, a], axis=-1), np.stack([x, x], axis=-1))
    same(np.hstack([a, a]), np.hstack([x, x]))
    same(np.vstack([a, a]), np.vstack([x, x]))
    same(np.where(a > 1, a, a * 0), np.where(x > 1, x, x * 0))
    same(np.pad(a, 1), np.pad(x, 1))
    same(np.pad(a, 1, mode="edge"), np.pad(x, 1, mode="edge"))
    same(np.take_along_axis(a, np.argsort(x, axis=0, kind="stable"), axis=0),
         np.take_along_axis(x, np.argsort(x, axis=0, kind="stable"), axis=0))


@settings(max_examples=60, deadline=None)
@given(x=F16_NAN)
def test_argmax_argmin_unique_and_truth_follow_numpy(x):
    a = A(x)
    for f in (np.argmax, np.argmin):
        assert f(a) == f(x)
        assert np.array_equal(f(a, axis=0), f(x, axis=0))
    if not np.all(np.isnan(x), axis=0).any():
        assert np.array_equal(np.nanargmax(a, axis=0), np.nanargmax(x, axis=0))
        assert np.array_equal(np.nanargmin(a, axis=0), np.nanargmin(x, axis=0))
    values, index, inverse, counts = np.unique(a, return_index=True, return_inverse=True, return_counts=True)
    ev, ei, einv, ec = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    assert np.array_equal(values.to_numpy(), ev, equal_nan=True)
    assert np.array_equal(index, ei) and np.array_equal(inverse, einv) and np.array_equal(counts, ec)
    for f in (np.any, np.all, np.count_nonzero, np.flatnonzero, np.argwhere):
        assert np.array_equal(f(a), f(x))
    assert np.array_equal(np.any(a, axis=0), np.any(x, axis=0))
    s = np.sort(x.reshape(-1))
    assert np.array_equal(np.searchsorted(A(s), a.reshape(-1)), np.searchsorted(s, x.reshape(-1)))


def _bits16(values):
    return np.asarray(values, np.float16).view(np.uint16)


#: zeros of both signs, repeats, and NaNs of both signs and several payloads
WITH_NANS = np.array([0x4200, 0x7E00, 0x3C00, 0x8000, 0x0000, 0x7E01, 0x4000, 0x3C00, 0xFE00, 0x7E00],
                     np.uint16).view(np.float16)


@settings(max_examples=60, deadline=None)
@given(x=st.one_of(F16_NAN, st.just(WITH_NANS), st.just(WITH_NANS.reshape(2, 5))))
def test_array_api_unique_functions_are_numpy_float16s_each_nan_its_own(x):
    """numpy's unique_values/counts/inverse/all are unique with equal_nan=False: every NaN
    its own value.  Indices, inverse indices and counts bit for bit; values by value where
    numpy sorts unstably (its NaNs come back as one pattern), bit for bit where it keeps
    the first occurrence (return_index: a stable sort)."""
    a = A(x)
    got, expected = np.unique_values(a), np.unique_values(x)
    assert np.array_equal(got.to_numpy(), expected, equal_nan=True)
    got, expected = np.unique_counts(a), np.unique_counts(x)
    assert np.array_equal(got.values.to_numpy(), expected.values, equal_nan=True)
    assert np.array_equal(got.counts, expected.counts)
    got, expected = np.unique_inverse(a), np.unique_inverse(x)
    assert np.array_equal(got.values.to_numpy(), expected.values, equal_nan=True)
    assert np.array_equal(got.inverse_indices, expected.inverse_indices)
    got, expected = np.unique_all(a), np.unique_all(x)
    assert np.array_equal(got.values.bits, _bits16(expected.values))
    for field in ("indices", "inverse_indices", "counts"):
        assert np.array_equal(getattr(got, field), getattr(expected, field)), field
    for equal_nan in (True, False):
        got = np.unique(a, return_index=True, return_inverse=True, return_counts=True, equal_nan=equal_nan)
        expected = np.unique(x, return_index=True, return_inverse=True, return_counts=True, equal_nan=equal_nan)
        assert np.array_equal(got[0].bits, _bits16(expected[0]))
        assert all(np.array_equal(g, e) for g, e in zip(got[1:], expected[1:]))
        assert np.array_equal(np.unique(a, equal_nan=equal_nan).to_numpy(), np.unique(x, equal_nan=equal_nan),
                              equal_nan=True)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("equal_nan", [True, False])
def test_unique_slices_holding_a_nan_equal_no_other_as_in_numpy(axis, equal_nan):
    """numpy compares slices element by element (NaN != NaN, -0 == +0) whatever
    equal_nan says.  The oracle is numpy float32 on the same values: numpy float16 orders
    the slices holding a NaN first (its generic float16 comparison), float32 and float64
    last, as numpy sorts; the Array keeps numpy's sort order."""
    rows = np.array([[1, np.nan], [np.nan, 1], [1, np.nan], [1, 2], [1, 2], [0, -0.0], [-np.inf, 0],
                     [np.inf, 0], [-0.0, 0]], np.float32)
    x = rows if axis == 0 else rows.T
    got = np.unique(sf.asarray(x, "fp16"), axis=axis, equal_nan=equal_nan, return_index=True,
                    return_inverse=True, return_counts=True)
    expected = np.unique(x, axis=axis, equal_nan=equal_nan, return_index=True, return_inverse=True,
                         return_counts=True)
    assert np.array_equal(got[0].to_numpy(np.float32).view(np.uint32), expected[0].view(np.uint32))
    assert all(np.array_equal(g, e) for g, e in zip(got[1:], expected[1:]))
    one_d = A([np.nan, 1.0, np.nan])  # one dimension: numpy's equal_nan applies along axis=0 too
    assert np.unique(one_d, axis=0, equal_nan=equal_nan).size == np.unique(one_d.to_numpy(), axis=0,
                                                                            equal_nan=equal_nan).size


#: the values whose order numpy leaves to stability: -0 == +0, and NaNs of either sign
SIGNED = np.array([0.0, -0.0, 1.0, -1.0, np.nan, -np.nan])


@pytest.mark.parametrize("n", range(1, 7))
@pytest.mark.parametrize("fmt, dtype", [("fp16", np.float16), ("bf16", np.float32)])
def test_sorting_every_small_array_of_signed_zeros_ones_and_nans_is_numpys_stable_sort(n, fmt, dtype):
    """Every array of n values from SIGNED, one per row: numpy's stable sort (float16, and
    float32 holding the bf16 values exactly, NaN signs kept) is the oracle, indices and
    bit patterns; the other kinds give numpy's values (numpy leaves the order of equal
    elements to its algorithm) and are the same stable sort; lexsort and the sorted
    values' searchsorted are numpy's."""
    rows = np.array(list(itertools.product(range(SIGNED.size), repeat=n)))
    x = SIGNED.astype(dtype)[rows]
    a = sf.asarray(x, fmt)
    assert np.array_equal(a.to_numpy(dtype).view(f"u{x.itemsize}"), x.view(f"u{x.itemsize}"))  # the NaNs' signs
    order = np.argsort(x, axis=-1, kind="stable")
    expected = sf.asarray(np.take_along_axis(x, order, axis=-1), fmt).bits
    for keywords in ({"kind": "stable"}, {"kind": "mergesort"}, {"stable": True}, {}, {"kind": "quicksort"}):
        assert np.array_equal(np.argsort(a, axis=-1, **keywords), order), keywords
        assert np.array_equal(np.sort(a, axis=-1, **keywords).bits, expected), keywords
        assert np.array_equal(np.sort(a, **keywords).to_numpy(dtype), np.sort(x, **keywords), equal_nan=True)
    in_place = a.copy()
    in_place.sort(kind="stable")
    assert np.array_equal(in_place.bits, expected)
    assert np.array_equal(np.argsort(a.T, axis=0, kind="stable"), np.argsort(x.T, axis=0, kind="stable"))
    keys = (x[:, ::-1], x)  # primary: the values, then the values reversed
    assert np.array_equal(np.lexsort(tuple(sf.asarray(k, fmt) for k in keys), axis=-1), np.lexsort(keys, axis=-1))
    for row in np.unique(np.take_along_axis(x, order, axis=-1), axis=0)[:60]:
        for side in ("left", "right"):
            got = np.searchsorted(sf.asarray(row, fmt), sf.asarray(SIGNED, fmt), side=side)
            assert np.array_equal(got, np.searchsorted(row, SIGNED.astype(dtype), side=side)), (row, side)


def test_minus_zero_is_false_and_equal_to_zero():
    a = sf.asarray([-0.0, 0.0, np.nan], "fp16")
    assert np.count_nonzero(a) == 1 and not np.all(a) and np.any(a)
    assert np.unique(a).size == 2
    assert np.where(a, 1.0, 2.0).tolist()[:2] == [2.0, 2.0]


@settings(max_examples=40, deadline=None)
@given(x=F16, decimals=st.integers(-2, 3))
def test_round_is_numpy_float16s_composition(x, decimals):
    with np.errstate(all="ignore"):  # numpy's own x * 10**decimals may overflow float16
        expected = np.round(x, decimals)
    same(np.round(A(x), decimals), expected)


@settings(max_examples=40, deadline=None)
@given(x=F16, n=st.integers(1, 3))
@np.errstate(all="ignore")  # numpy float16's own products may overflow (scoped: no global seterr)
def test_diff_outer_trace_cumprod_are_their_compositions(x, n):
    a = A(x)
    # fp16 nearest even: numpy float16's subtract/multiply are correctly rounded
    same(np.diff(a, n=n, axis=0), np.diff(x, n=n, axis=0))
    same(np.outer(a, a), np.outer(x, x))
    with sf.context(accumulator="fp16"):  # a sequential fp16 sum is numpy float16's add chain
        flat = a.reshape(-1)
        same(np.cumprod(flat), np.multiply.accumulate(x.reshape(-1)))
        if x.ndim == 2:
            d = np.diagonal(x)
            expected = d[0]  # the first term, then each addition (as np.add.reduce: -0 stays -0)
            for v in d[1:]:
                expected = np.float16(expected + v)
            with sf.context(accumulator="fp16", order="sequential"):
                same(np.trace(a), expected)


@settings(max_examples=40, deadline=None)
@given(x=F16, q=st.floats(0, 1), method=st.sampled_from(["linear", "lower", "higher", "nearest", "midpoint"]))
def test_quantile_is_the_documented_steps(x, q, method):
    flat = np.sort(x.reshape(-1).astype(np.float64), kind="stable")  # as the Array: -0 == +0
    got = np.quantile(A(x), q, method=method)
    v = np.quantile(np.arange(flat.size, dtype=np.float64), q, method=method)
    lo = int(np.floor(v))
    hi = min(lo + 1, flat.size - 1)
    g = v - lo
    f16 = np.float16
    if g == 0:
        expected = f16(flat[lo])
    elif g < 0.5:
        expected = f16(f16(flat[lo]) + f16(f16(f16(flat[hi]) - f16(flat[lo])) * f16(g)))
    else:
        expected = f16(f16(flat[hi]) - f16(f16(f16(flat[hi]) - f16(flat[lo])) * f16(1 - g)))
    same(got, expected)


def test_median_mean_of_the_middle_two_and_nan_functions():
    x = sf.asarray([[1.0, np.nan, 3.0, 2.0], [4.0, 5.0, 6.0, 8.0]], "fp16")
    assert np.median(x, axis=1).to_numpy().tolist()[1] == 5.5
    assert np.isnan(np.median(x, axis=1).to_numpy()[0])
    assert np.nanmedian(x, axis=1).tolist() == [2.0, 5.5]
    assert np.nanmean(x, axis=1).tolist() == [2.0, 5.75]
    assert np.nansum(x).tolist() == 29.0 and np.nanmax(x).tolist() == 8.0 and np.nanmin(x).tolist() == 1.0
    assert np.nanvar(x[0]).tolist() == pytest.approx(np.nanvar([1.0, np.nan, 3.0, 2.0]), rel=2 ** -10)


AXES = [(0, 2), (2, 0), (1,), (-1, 0), [0, 1], (0, 1, 2), ()]


def _slice_warnings(call):
    """call()'s result and the messages of the RuntimeWarnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [str(w.message) for w in caught]


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_median_over_several_axes_is_numpy_float16s(axis, keepdims):
    """numpy takes a tuple of axes (one slice of them all); numpy float16's median is the
    middle element or the mean of the two middle ones, as the Array's (exact here:
    float32 holds the sum of two fp16 values of this range)."""
    x = np.random.default_rng(5).standard_normal((3, 4, 5)).astype(np.float16)
    x[0, 1, 2] = np.nan
    for func in (np.median, np.nanmedian):
        expected, numpy_warned = _slice_warnings(lambda: func(x, axis=axis, keepdims=keepdims))
        got, warned = _slice_warnings(lambda: func(A(x), axis=axis, keepdims=keepdims))
        assert got.shape == expected.shape and warned == numpy_warned
        assert np.array_equal(got.to_numpy(), expected, equal_nan=True), (func, axis)


def _documented_quantile(lane, q):
    """The documented steps of ``quantile`` (method "linear") on one float16 lane: the
    sorted values, numpy's virtual index, then numpy's lerp in float16 steps."""
    if np.isnan(lane).any():
        return np.float16(np.nan)
    flat = np.sort(lane.astype(np.float64), kind="stable")
    v = np.quantile(np.arange(flat.size, dtype=np.float64), q)
    lo = int(np.floor(v))
    hi, g, f16 = min(lo + 1, flat.size - 1), v - lo, np.float16
    if g == 0:
        return f16(flat[lo])
    d = f16(f16(flat[hi]) - f16(flat[lo]))
    return f16(f16(flat[lo]) + f16(d * f16(g))) if g < 0.5 else f16(f16(flat[hi]) - f16(d * f16(1 - g)))


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_quantiles_over_several_axes_take_numpys_slices_and_shapes(axis, keepdims):
    """numpy's shapes for a tuple of axes, q's axes first (keepdims: the reduced axes kept
    as length 1); each slice (numpy's moveaxis and reshape of the float16 data) is the
    documented steps' quantile."""
    x = np.random.default_rng(6).standard_normal((3, 4, 5)).astype(np.float16)
    x[2, 3, 4] = np.nan
    q = [0.1, 0.5, 0.75]
    for func, qs in ((np.quantile, q), (np.percentile, [100 * v for v in q]), (np.nanquantile, q)):
        expected, numpy_warned = _slice_warnings(lambda: func(x, qs, axis=axis, keepdims=keepdims))
        got, warned = _slice_warnings(lambda: func(A(x), qs, axis=axis, keepdims=keepdims))
        assert got.shape == expected.shape and warned == numpy_warned, func
    axes = tuple(d % x.ndim for d in axis)
    kept = x.ndim - len(axes)
    lanes = np.moveaxis(x, axes, tuple(range(kept, x.ndim)))
    lanes = lanes.reshape(lanes.shape[:kept] + (-1,))
    got = np.quantile(A(x), q, axis=axis)
    for k, v in enumerate(q):
        expected = np.vectorize(lambda *i: _documented_quantile(lanes[i], v), otypes=[np.float16])(
            *np.indices(lanes.shape[:-1])) if kept else _documented_quantile(lanes, v)
        same(got[k], expected)


def test_order_statistics_refuse_a_repeated_or_missing_axis_as_numpy():
    x = A(np.ones((2, 3)))
    with pytest.raises(ValueError, match="duplicate"):
        np.median(x, axis=(0, 0))
    with pytest.raises(np.exceptions.AxisError):
        np.quantile(x, 0.5, axis=(0, 2))


def test_like_constructors_keep_the_format_and_fill_values_round_once():
    x = sf.asarray([1.0, 2.0], "bf16")
    for f in (np.zeros_like, np.ones_like, np.empty_like):
        assert f(x).format == sf.bf16
    with sf.context() as ctx:
        y = np.full_like(x, 0.1)
    assert y.format == sf.bf16 and ctx.flags.inexact == 1  # one value rounded once
    assert np.zeros_like(x, dtype=np.int64).dtype == np.int64
    with sf.context() as ctx:
        p = np.pad(x, 1, constant_values=1e10)
    assert p.tolist()[0] == float(sf.asarray(1e10, "bf16")) and ctx.flags.inexact == 1


def test_mixed_operands_are_weak_and_arrays_promote():
    x, y = sf.asarray([1.0], "fp16"), sf.asarray([2.0], "bf16")
    assert np.concatenate([x, y]).format == sf.fp32
    assert np.concatenate([x, np.array([0.1])]).format == sf.fp16
    assert np.where([True], x, 1e9).tolist() == [1.0]
    assert np.where([False], x, 1e9).tolist() == [np.inf]


def test_clip_and_functions_with_out_write_the_arrays_bits():
    g = sf.asarray([-10.0, 0.5, 10.0], "fp16")
    bits = g.bits
    assert np.clip(g, -5, 5, out=g) is g and g.tolist() == [-5.0, 0.5, 5.0] and g.bits is bits
    with pytest.raises(TypeError, match="out="):
        np.clip(g, -1, 1, out=np.empty(3, int))
    values = np.empty(3)
    assert np.clip(g, -1, 1, out=values) is values and values.tolist() == [-1.0, 0.5, 1.0]
    with pytest.raises(ValueError, match="shape"):
        np.sum(g, out=sf.asarray([0.0, 0.0], "fp16"))


def test_refused_functions_say_why():
    with pytest.raises(TypeError, match="LAPACK"):
        np.linalg.solve(sf.asarray(np.eye(2), "fp16"), sf.asarray([1.0, 2.0], "fp16"))
    with pytest.raises(TypeError, match="complex results"):
        np.fft.fft(sf.asarray([1.0, 2.0], "fp16"))


ALL_FP16 = np.arange(1 << 16, dtype=np.uint16)


@pytest.mark.parametrize("replacements", [{}, {"nan": -1.0, "posinf": 1e9, "neginf": -7.3}, {"nan": 0.1}])
def test_nan_to_num_equals_numpys_on_every_fp16_pattern(replacements):
    """numpy's own nan_to_num on float16 is the oracle (the replacements rounded into
    float16 by numpy: -7.3 and 0.1 inexactly, 1e9 to infinity)."""
    got = np.nan_to_num(sf.Array(ALL_FP16.copy(), "fp16"), **replacements)
    with np.errstate(over="ignore"):  # numpy's cast of 1e9 into float16 overflows, as ours does
        expected = np.nan_to_num(ALL_FP16.view(np.float16), **replacements)
    assert got.format == sf.fp16
    assert np.array_equal(got.bits, expected.view(np.uint16))


@pytest.mark.parametrize("dtype", ["bfloat16", "float8_e5m2", "float8_e4m3fn"])
def test_nan_to_num_of_every_narrow_pattern_replaces_by_the_largest_finite_value(dtype):
    """ml_dtypes' formats, which numpy's nan_to_num leaves alone: its result on the float32
    values with ml_dtypes.finfo's largest value as posinf/neginf, cast back by ml_dtypes."""
    import ml_dtypes

    fmt = sf.as_format(dtype)
    bits = np.arange(1 << fmt.bits, dtype=fmt.storage_dtype)
    big = float(ml_dtypes.finfo(getattr(ml_dtypes, dtype)).max)
    values = bits.view(getattr(ml_dtypes, dtype)).astype(np.float32)
    expected = np.nan_to_num(values, posinf=big, neginf=-big).astype(getattr(ml_dtypes, dtype))
    assert np.array_equal(np.nan_to_num(sf.Array(bits, fmt)).bits, expected.view(fmt.storage_dtype))


def test_nan_to_num_in_place_and_its_replacements_round_once_with_flags():
    x = sf.asarray([np.nan, np.inf, -np.inf, 2.0], "bf16")
    before = x.bits.copy()
    y = np.nan_to_num(x)
    assert y is not x and np.array_equal(x.bits, before)  # the input is not modified
    with sf.context() as ctx:
        z = np.nan_to_num(x, copy=False, nan=0.1)
    assert z is x and x.tolist() == [float(sf.asarray(0.1, "bf16")), sf.bf16.max_finite, -sf.bf16.max_finite, 2.0]
    assert ctx.flags.inexact == 1  # 0.1, rounded once


def test_membership_and_realness_are_numpys():
    x = A([0.5, -0.0, np.nan])
    assert 0.5 in x and 0.0 in x and 0.1 not in x and np.nan not in x  # (x == v).any(); -0 == +0
    assert np.isrealobj(x) and not np.iscomplexobj(x)
    assert np.isreal(x).tolist() == [True] * 3 and np.iscomplex(x).tolist() == [False] * 3
    assert np.real(x) is x and np.real_if_close(x) is x
    assert np.imag(x).format is sf.fp16 and np.imag(x).bits.tolist() == [0, 0, 0]


@settings(max_examples=60, deadline=None)
@given(x=np_arrays(np.float16, st.sampled_from([(5,), (3, 4), (4, 3, 3)]),
                   elements=st.floats(-1000, 1000, width=16, allow_subnormal=True)),
       data=st.data())
def test_gradient_is_numpy_float16s_own_composition(x, data):
    """numpy's float16 gradient rounds each step in float16 (weak scalars): the oracle,
    bit for bit, for every uniform spacing, axis and edge order."""
    axis = data.draw(st.sampled_from([None, 0, -1]))
    edge_order = data.draw(st.sampled_from([1, 2]))
    n_axes = x.ndim if axis is None else 1
    spacing = data.draw(st.sampled_from([(), (0.3,), (3,), tuple(0.5 + k for k in range(n_axes))]))
    with np.errstate(all="ignore"):
        expected = np.gradient(x, *spacing, axis=axis, edge_order=edge_order)
    got = np.gradient(A(x), *spacing, axis=axis, edge_order=edge_order)
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected):
            same(g, e)
    else:
        same(got, expected)


@settings(max_examples=60, deadline=None)
@given(y=np_arrays(np.float16, st.sampled_from([(6,), (3, 4)]), elements=st.floats(-100, 100, width=16)),
       dx=st.sampled_from([1.0, 0.1, 3]))
def test_trapezoid_is_its_steps_then_np_sum(y, dx):
    """The elementwise steps are numpy float16's; the sum, in an fp64 accumulator, is
    exact here and rounded once.  It is IEEE's sum of the terms from the first one
    (Python floats, in order: -0 + -0 is -0), not numpy's, which starts from +0."""
    with np.errstate(all="ignore"):
        terms = dx * (y[..., 1:] + y[..., :-1]) / 2.0  # float16, each step rounded once
        rows = terms.astype(np.float64).reshape(-1, terms.shape[-1]).tolist()
        expected = np.array([functools.reduce(operator.add, r) for r in rows]).reshape(terms.shape[:-1])
        expected = expected.astype(np.float16)
    with sf.context(accumulator="fp64"):
        same(np.trapezoid(A(y), dx=dx), expected)
    x = A(np.arange(y.shape[-1]) * 0.5)
    with sf.context(accumulator="fp64"):
        assert np.trapezoid(A(y), x=x).shape == y.shape[:-1]


def test_gradient_with_float16_coordinates_is_numpy_float16s_own():
    """With float16 coordinates numpy float16's gradient computes every coefficient and
    step in float16 (each correctly rounded): the oracle for the non-uniform formula."""
    rng = np.random.default_rng(7)
    for shape, axis in (((7,), None), ((4, 6), 1), ((5, 3), 0)):
        x = rng.standard_normal(shape).astype(np.float16)
        t = np.cumsum(rng.random(shape[axis or 0]) + 0.05).astype(np.float16)
        for edge_order in (1, 2):
            with np.errstate(all="ignore"):
                expected = np.gradient(x, t, axis=axis, edge_order=edge_order)
            same(np.gradient(A(x), t, axis=axis, edge_order=edge_order), expected)
    with pytest.raises(ValueError, match="too small"):
        np.gradient(A([1.0, 2.0]), edge_order=2)


def _interp_reference(x, xp, fp, left, right):
    """numpy's interp algorithm (numpy/_core/src/multiarray/compiled_base.c), one x at a
    time, every step in numpy float16 scalars (each one correctly rounded)."""
    h = np.float16
    n = len(xp)
    lval = fp[0] if left is None else h(left)
    rval = fp[-1] if right is None else h(right)
    if np.isnan(x):
        return x
    if n == 1:
        return lval if x < xp[0] else rval if x > xp[0] else fp[0]
    if x < xp[0]:
        return lval
    if x > xp[-1]:
        return rval
    j = int(np.searchsorted(xp, x, side="right")) - 1
    if j == n - 1 or x == xp[j]:
        return fp[j]
    slope = h(h(fp[j + 1] - fp[j]) / h(xp[j + 1] - xp[j]))
    value = h(h(slope * h(x - xp[j])) + fp[j])
    if np.isnan(value):
        value = h(h(slope * h(x - xp[j + 1])) + fp[j + 1])
        if np.isnan(value) and fp[j] == fp[j + 1]:
            value = fp[j]
    return value


@settings(max_examples=80, deadline=None)
@given(xp=np_arrays(np.float16, st.integers(1, 8), elements=st.floats(-50, 50, width=16)),
       data=st.data())
def test_interp_is_numpys_algorithm_step_by_step(xp, data):
    xp = np.sort(xp)  # increasing, repeats allowed (zero-width segments take the fallbacks)
    fp = data.draw(np_arrays(np.float16, xp.shape, elements=st.floats(width=16, allow_nan=False)))
    x = data.draw(np_arrays(np.float16, st.integers(0, 10), elements=st.floats(-60, 60, width=16)
                            | st.sampled_from([float(v) for v in xp]) | st.just(float("nan"))))
    left, right = data.draw(st.sampled_from([None, -7.5])), data.draw(st.sampled_from([None, 1000.0]))
    with np.errstate(all="ignore"):
        expected = np.array([_interp_reference(v, xp, fp, left, right) for v in x], dtype=np.float16)
    same(np.interp(A(x), A(xp), A(fp), left=left, right=right), expected)


def test_interp_arguments():
    xp, fp = A([1.0, 2.0, 3.0]), A([3.0, 2.0, 0.0])
    assert np.interp(A(2.5), xp, fp).shape == () and np.interp(2.5, xp, fp).item() == 1.0
    with pytest.raises(ValueError, match="same length"):
        np.interp(A([1.0]), xp, A([1.0]))
    with pytest.raises(TypeError, match="period="):
        np.interp(A([1.0]), xp, fp, period=2.0)


@pytest.mark.parametrize("shapes", [((7,), (7,)), ((3, 7), (7,)), ((7,), (7, 4)), ((3, 7), (7, 4)), ((1, 1), (1, 1)),
                                    ((2, 3, 7), (7,)), ((7,), (2, 7, 4))])
def test_dot_is_numpy_float16s_dot(shapes):
    """numpy's float16 dot sums each output's products in float32, in order, and rounds
    once: the fp32 accumulator's definition (data without all-zero sums, whose sign
    numpy's +0 start decides)."""
    rng = np.random.default_rng(len(shapes[0]) * 10 + shapes[1][-1])
    x, y = ((rng.standard_normal(s) * 2.0 ** rng.integers(-8, 8, s)).astype(np.float16) for s in shapes)
    got = np.dot(sf.asarray(x, "fp16"), sf.asarray(y, "fp16"))
    want = np.dot(x, y)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got.bits).view(np.uint16), want.view(np.uint16))


def test_may_share_memory_and_shares_memory_are_numpys_on_the_bits():
    """An Array's memory is its bit patterns: here a float16 ndarray's own memory, so
    numpy's answers for that ndarray and its views are the oracle."""
    b = np.arange(6, dtype=np.float16).reshape(3, 2)
    x = sf.Array(b.view(np.uint16), "fp16")
    pairs = [((x, x[1]), (b, b[1])), ((x[0], x[1]), (b[0], b[1])), ((x[:, 0], x[:, 1]), (b[:, 0], b[:, 1])),
             ((x, x.copy()), (b, b.copy())), ((x, b), (b, b)), ((np.zeros(2), x), (np.zeros(2), b))]
    for func in (np.may_share_memory, np.shares_memory):
        for (p, q), (e, f) in pairs:
            assert func(p, q) == func(e, f), (func, e, f)
    assert np.may_share_memory(x[:, 0], x[:, 1]) and not np.shares_memory(x[:, 0], x[:, 1])
    with pytest.raises(np.exceptions.TooHardError):  # numpy's, for max_work=0 on interleaved views
        np.shares_memory(x[:, 0], x[:, 1], max_work=0)


def test_random_generators_read_an_arrays_values_and_the_documented_spellings_keep_it():
    """numpy's Generator never hands an Array to the dispatch (softfloat._array_coverage.
    OUTSIDE_DISPATCH): permutation, choice and permuted give plain ndarrays of the exact
    values, numpy's for the float16 data with the same seed; shuffle of a 1-d Array is
    numpy's in place (with numpy's warning); the indexing spellings keep the Array."""
    x16 = np.arange(1.0, 7.0, dtype=np.float16) / 3
    a = A(x16)
    rng, same_rng = np.random.default_rng(3), np.random.default_rng(3)
    for draw in (lambda r, v: r.permutation(v), lambda r, v: r.choice(v, 4), lambda r, v: r.permuted(v)):
        got, expected = draw(rng, a), draw(same_rng, x16)
        assert type(got) is np.ndarray and got.dtype == np.float16 and np.array_equal(got, expected)
    bits = a.bits
    with pytest.warns(UserWarning, match="not a subclass of 'Sequence'"):
        rng.shuffle(a)
    same_rng.shuffle(x16)
    assert a.bits is bits and np.array_equal(a.bits, x16.view(np.uint16))
    m16 = np.arange(12.0, dtype=np.float16).reshape(6, 2)
    m = A(m16)
    with pytest.warns(UserWarning, match="may contain duplicates"):  # numpy says so: never silent
        np.random.default_rng(4).shuffle(A(m16))
    rows = m[np.random.default_rng(5).permutation(len(m))]
    assert isinstance(rows, sf.Array) and rows.format == sf.fp16
    same(rows, np.random.default_rng(5).permutation(m16))
    m[...] = m[np.random.default_rng(5).permutation(len(m))]
    same(m, np.random.default_rng(5).permutation(m16))
    picked = m[np.random.default_rng(6).choice(len(m), 3)]
    same(picked, m.to_numpy()[np.random.default_rng(6).choice(len(m), 3)])


def test_np_testing_assert_equal_of_two_arrays_and_its_documented_alternatives():
    """numpy's assert_equal takes ``not (desired == actual)`` for anything that is no
    ndarray: two Arrays of several elements give its ValueError (as documented in
    softfloat._array_coverage.OUTSIDE_DISPATCH); one-element Arrays and an Array against
    an ndarray work, and the alternatives pass and fail as they should."""
    from softfloat.testing import assert_bits_equal

    x, y = A([1.0, np.nan, -0.0]), A([1.0, np.nan, 0.0])
    with pytest.raises(ValueError, match="ambiguous"):
        np.testing.assert_equal(x, x.copy())
    np.testing.assert_equal(A(2.0), A(2.0))
    np.testing.assert_equal(x, x.to_numpy())
    with pytest.raises(AssertionError):
        np.testing.assert_equal(A(0.0), A(-0.0))
    np.testing.assert_array_equal(x, y)  # exact values: NaN equals NaN, -0 equals +0
    with pytest.raises(AssertionError):
        np.testing.assert_array_equal(x, A([1.0, np.nan, 1.0]))
    assert_bits_equal(x.bits, x.copy().bits, x.format)
    with pytest.raises(AssertionError):
        assert_bits_equal(x.bits, y.bits, x.format)


def test_numpys_error_state_does_not_reach_arrays_the_contexts_traps_do():
    """As documented (softfloat._array_coverage.OUTSIDE_DISPATCH): np.errstate neither
    warns nor raises for Array arithmetic; the context counts the flags, and its traps
    raise (softfloat.FloatingPointSignal, an ArithmeticError) where numpy float16 raises
    FloatingPointError under errstate(all='raise')."""
    x = A([1.0, 60000.0])
    with np.errstate(all="raise"), sf.context() as ctx:
        assert np.isinf((x / 0.0).to_numpy()).all()
        np.exp(x)
    assert ctx.flags.divide_by_zero == 2 and ctx.flags.overflow >= 1
    with np.errstate(all="raise"), pytest.raises(FloatingPointError):
        np.float16([1.0]) / np.float16(0.0)  # numpy's own, for comparison
    for traps, error in (({"divide_by_zero"}, sf.DivisionByZero), ({"overflow"}, sf.Overflow)):
        with pytest.raises(error), sf.context(traps=traps):
            np.exp(x) if "overflow" in traps else x / 0.0
        assert issubclass(error, sf.FloatingPointSignal) and issubclass(error, ArithmeticError)


@pytest.mark.parametrize("ufunc", [np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p, np.sinh,
                                   np.cosh, np.arctanh, np.tan])
def test_infinite_libm_results_of_finite_operands_overflow_or_divide_by_zero_as_numpys_float64(ufunc):
    """An infinite float64 libm result from a finite operand is an overflow (exp(60000)),
    or a division by zero at a pole (log(0), log1p(-1), arctanh(1)): the flag numpy's own
    float64 call raises under errstate(all='raise') is the one counted."""
    values = [0.0, -0.0, 1.0, -1.0, 60000.0, -60000.0, 2.0 ** -24, 0.5, 11.5]
    for v in values:
        with np.errstate(all="raise"):
            try:
                out = ufunc(np.float64(v))
                raised = ""
            except FloatingPointError as error:
                raised = str(error)
        with np.errstate(all="ignore"):
            out = ufunc(np.float64(v))
        if not np.isinf(out):
            continue
        for x in (A(v), A([v, 1.0])):  # one element (numpy scalars' route) and arrays
            with sf.context() as ctx:
                ufunc(x)
            assert bool(ctx.flags.overflow) == ("overflow" in raised), (ufunc, v, raised)
            assert bool(ctx.flags.divide_by_zero) == ("divide by zero" in raised), (ufunc, v, raised)
