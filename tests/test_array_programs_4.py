"""Numerical users' numpy programs on Arrays, round 4: what a probe of real programs found
missing, wrong or slow, each checked against numpy float16/float32, ml_dtypes or Python's
own float arithmetic (never the code under test restated)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import softfloat as sf


def _values(seed: str, shape, scale=3.0):
    return np.random.default_rng(zlib.crc32(seed.encode())).standard_normal(shape) * scale


# ---- np.nanvar / nanstd / nanmean ---------------------------------------------------------
def _nanvar_by_hand(h, ddof):
    """numpy float16/float32 steps of the Array's var definition on each row's non-NaN
    values: the mean as the float32 sum over n in float32, rounded to float16; deviations
    and squares in float16; their float32 sum rounded to float16, divided by n - ddof in
    float16.  (The float32 sums of these few float16 values are exact: any order.)"""
    rows = []
    for row in h:
        v = row[~np.isnan(row)]
        m = np.float16(v.astype(np.float32).sum() / np.float32(len(v)))
        d = v - m
        rows.append(np.float16((d * d).astype(np.float32).sum()) / np.float16(len(v) - ddof))
    return np.array(rows, dtype=np.float16)


@pytest.mark.parametrize("ddof", [0, 1])
def test_nanvar_skips_nans_without_arithmetic_on_them(ddof):
    """np.nanvar took about 1 ms on a handful of values: the NaNs went through the
    deviations and squares (a - mean, d * d), which sends every operand through the
    general path.  Each NaN now stands in as its slice's mean (an exact 0 deviation):
    the bits are those of the non-NaN values' variance, and a signalling NaN raises no
    invalid flag, as in np.nanmean and np.nansum (the NaNs take no part)."""
    h = _values("nanvar", (3, 6)).astype(np.float16)
    h[0, 1] = h[1, 4] = h[1, 0] = h[2, 5] = np.nan
    x = sf.asarray(h, "fp16")
    expected = _nanvar_by_hand(h, ddof)
    np.testing.assert_array_equal(np.nanvar(x, axis=1, ddof=ddof).bits, expected.view(np.uint16))
    np.testing.assert_array_equal(np.nanstd(x, axis=1, ddof=ddof).bits, np.sqrt(expected).view(np.uint16))
    with sf.context() as masked:
        by_where = np.var(x, axis=1, ddof=ddof, where=~np.isnan(h))
    with sf.context() as skipped:
        got = np.nanvar(x, axis=1, ddof=ddof)
    np.testing.assert_array_equal(got.bits, by_where.bits)
    assert skipped.flags.inexact == masked.flags.inexact and skipped.flags.invalid == 0
    signalling = sf.Array.from_bits([0x3C00, 0x7D00, 0x4000], "fp16")  # 1, sNaN, 2
    for f in (np.nanvar, np.nanstd, np.nanmean):
        with sf.context() as ctx:
            got = f(signalling)
        assert ctx.flags.invalid == 0, f.__name__
    assert np.nanvar(signalling).item() == 0.25


def test_nanvar_all_nan_and_infinite_slices_as_before():
    """An all-NaN slice is NaN with numpy's warning; a slice whose mean overflows to inf
    stands its NaNs in as 0 (inf - inf would be invalid): NaN or inf as np.var of the rest."""
    x = sf.asarray([[np.nan, np.nan], [60000.0, np.nan]], "fp16")
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        got = np.nanvar(x, axis=1)
    assert np.isnan(got[0].item()) and got[1].item() == 0.0
    y = sf.asarray([[np.inf, 1.0, np.nan]], "fp16")
    with sf.context() as ctx:
        v = np.nanvar(y, axis=1)
    with sf.context() as rest:
        w = np.var(sf.asarray([[np.inf, 1.0]], "fp16"), axis=1)
    np.testing.assert_array_equal(v.bits, w.bits)
    assert ctx.flags.invalid == rest.flags.invalid == 1  # (inf - inf in the inf's own deviation only)


# ---- Python's statistics module and number protocols on elements ------------------------
def test_statistics_module_reads_elements_as_numpy_scalars():
    """statistics.stdev / variance / mean raised "can't convert type 'Array' to
    numerator/denominator": an element had no as_integer_ratio (a numpy scalar has).  Now
    the statistics that return floats or elements give what they give on a float16
    ndarray (Python's exact arithmetic or numpy float16's steps); those that build their
    result as type(element)(fraction) say what to write instead."""
    import statistics

    h = _values("statistics", 9).astype(np.float16)
    h[3] = h[5]  # a mode
    x = sf.asarray(h, "fp16")
    for f in (statistics.stdev, statistics.pstdev, statistics.fmean):
        assert f(x) == f(h) and type(f(x)) is float, f.__name__
    for f in (statistics.median, statistics.median_low, statistics.median_high, statistics.mode):
        got, want = f(x), f(h)
        assert isinstance(got, sf.Array) and got.bits == np.float16(want).view(np.uint16), f.__name__
    got = statistics.quantiles(x, n=4)
    assert [q.bits for q in got] == [np.float16(q).view(np.uint16) for q in statistics.quantiles(h, n=4)]
    for f in (statistics.mean, statistics.variance, statistics.pvariance):
        with pytest.raises(TypeError, match=r"statistics\.mean.*np\.mean\(x\)"):
            f(x)
    with pytest.raises(TypeError, match="needs fmt"):
        sf.Array(np.zeros(2, np.uint16))


def test_elements_give_integer_ratios_and_truncate_as_numpy_scalars():
    """x[i].as_integer_ratio() and .is_integer() are a float16 scalar's, math.trunc(x[i])
    a float's (it raised "type Array doesn't define __trunc__", as it does for numpy's
    float16 scalar, though math.floor and math.ceil took either): every 37th finite fp16
    value, with ValueError / OverflowError for NaN and infinities as Python's."""
    import math

    every = np.arange(1 << 16, dtype=np.uint16)
    every = every[np.isfinite(every.view(np.float16))][::37]
    x = sf.Array.from_bits(every, "fp16")
    for element, pattern in zip(x, every):
        scalar = pattern.view(np.float16)
        assert element.as_integer_ratio() == scalar.as_integer_ratio()
        assert element.is_integer() == scalar.is_integer()
        assert math.trunc(element) == math.trunc(float(scalar)) and type(math.trunc(element)) is int
    specials = sf.asarray([np.nan, np.inf], "fp16")
    with pytest.raises(ValueError):
        specials[0].as_integer_ratio()
    with pytest.raises(OverflowError):
        math.trunc(specials[1])
    for method in (lambda a: a.as_integer_ratio(), lambda a: a.is_integer(), math.trunc):
        with pytest.raises(TypeError, match="only an element"):
            method(x[:2])


def test_bytes_of_an_array_are_its_bit_patterns_as_numpys_are():
    """bytes(x) raised "'Array' object cannot be interpreted as an integer"; it is the
    stored patterns, the bytes of numpy's float16 array (ml_dtypes' bfloat16) of the values."""
    import ml_dtypes

    h = _values("bytes", (2, 3)).astype(np.float16)
    assert bytes(sf.asarray(h, "fp16")) == bytes(h) == sf.asarray(h, "fp16").tobytes()
    b = h.astype(ml_dtypes.bfloat16)
    assert bytes(sf.asarray(b, "bf16")) == b.tobytes()
    assert bytes(sf.asarray(h, "fp16").T) == bytes(np.ascontiguousarray(h.T))


# ---- x.dtype == np.float16 ---------------------------------------------------------------
def test_a_format_compares_and_hashes_as_its_numpy_dtype():
    """``compute = np.float32 if X.dtype == np.float16 else X.dtype`` (a pattern found in
    public code, with ``assert x.dtype == np.float16`` and tolerance tables keyed on it)
    was False for an fp16 Array, so the program took the other branch.  fp16, fp32 and
    fp64 now compare as numpy's float16/32/64 dtypes compare, and hash as those dtypes
    hash; other formats equal only formats."""
    h = _values("dtype-branch", (3, 4)).astype(np.float16)
    X = sf.asarray(h, "fp16")
    compute = np.float32 if X.dtype == np.float16 else X.dtype
    assert X.astype(compute).format is sf.fp32  # as h.astype(np.float32) is float32
    for fmt, dtype in ((sf.fp16, np.float16), (sf.fp32, np.float32), (sf.fp64, np.float64)):
        for spelling in (dtype, np.dtype(dtype), np.dtype(dtype).name, np.dtype(dtype).str):
            assert fmt == spelling and spelling == fmt and not fmt != spelling, (fmt, spelling)
            assert (fmt == spelling) == (np.dtype(dtype) == spelling)  # numpy's own answer
        assert hash(fmt) == hash(np.dtype(dtype)) and {np.dtype(dtype): fmt.name}[fmt] == fmt.name
        assert fmt in (np.float64, np.float32, np.float16)
    for fmt, names in ((sf.fp16, ("fp16", "half", "float16")), (sf.bf16, ("bf16", "bfloat16")),
                       (sf.fp8_e4m3, ("fp8_e4m3", "e4m3")), (sf.tf32, ("tf32",))):
        assert all(fmt == n and n == fmt and not fmt != n for n in names)  # the idiom x.format == "bf16"
    assert sf.tf32 != "float32" and sf.fp8_e4m3 != "float16" and sf.fp16 != "no such name"
    half = sf.Format(exponent_bits=5, mantissa_bits=10, name="half")
    assert half == sf.fp16 == np.float16 and hash(half) == hash(sf.fp16)
    for fmt, other in ((sf.fp8_e4m3, np.float16), (sf.bf16, np.float32), (sf.tf32, np.float32), (sf.fp16, np.float32),
                       (sf.fp64, None), (sf.fp32, "fp64"), (sf.fp16, "no such dtype"), (sf.fp32, sf.Array)):
        assert not fmt == other and fmt != other, (fmt, other)  # (np.dtype("f8") == None is True in numpy)
    assert sf.bf16 == sf.as_format("bfloat16") and hash(sf.bf16) == hash(sf.Format(8, 7))


# ---- np.einsum(..., out=) ----------------------------------------------------------------
def test_einsum_writes_into_out_as_numpys():
    """np.einsum(..., out=) was refused ('keywords other than optimize= are not defined');
    out= takes the result as numpy's does: an Array's bits (rounded into its format where
    that differs), a float ndarray's values, numpy's ValueError for a wrong shape."""
    h = np.arange(12.0).reshape(3, 4).astype(np.float16)  # integers: every sum exact, any order
    x = sf.asarray(h, "fp16")
    out = sf.asarray(np.zeros(4), "fp16")
    assert np.einsum("ij->j", x, out=out) is out
    np.testing.assert_array_equal(out.bits, np.einsum("ij->j", h).view(np.uint16))
    plain = np.zeros((3, 3))
    assert np.einsum("ij,kj->ik", x, x, out=plain, optimize=True) is plain
    np.testing.assert_array_equal(plain, np.einsum("ij,kj->ik", h, h).astype(np.float64))
    r = _values("einsum-out", (3, 4)).astype(np.float16)
    y = sf.asarray(r, "fp16")
    wide = sf.asarray(np.zeros(3), "fp32")
    np.einsum("ij,ij->i", y, y, out=wide)
    np.testing.assert_array_equal(wide.bits, np.einsum("ij,ij->i", y, y).to_numpy().astype(np.float32).view(np.uint32))
    with pytest.raises(ValueError, match="out= has shape"):
        np.einsum("ij->j", x, out=np.zeros(3))
    with pytest.raises(TypeError, match="dtype="):
        np.einsum("ij->j", x, dtype=np.float32)


# ---- x == "auto" ---------------------------------------------------------------------------
def test_equality_with_a_string_is_numpys_all_false():
    """``if lr == "auto"`` with an Array lr raised numpy's 'operand type(s) all returned
    NotImplemented'; numpy compares a float array with a str or bytes element by element
    (Python's ==): all False, != all True, a bool ndarray (a numpy bool for an element),
    as it already did for None.  Ordering against a str stays a TypeError, as numpy's."""
    h = _values("string-equality", (2, 3)).astype(np.float16)
    x = sf.asarray(h, "bf16")
    for other in ("auto", b"auto", None):
        for got, want in ((x == other, h == other), (x != other, h != other), (other == x, other == h),
                          (x[1, 2] == other, h[1, 2] == other), (x[0, 0] != other, h[0, 0] != other)):
            assert np.array_equal(got, want) and np.shape(got) == np.shape(want), other
            assert type(got) is np.ndarray if np.ndim(want) else isinstance(got, (bool, np.bool_)), other
    with pytest.raises(TypeError):
        x < "auto"


# ---- documented ways out (softfloat._array_coverage.OUTSIDE_DISPATCH) ----------------------
def test_constructors_buffers_and_number_checks_leave_or_refuse_as_documented():
    """As softfloat._array_coverage.OUTSIDE_DISPATCH says: numpy's constructors are not
    dispatched on their argument (plain ndarrays of the exact values), np.ndenumerate
    yields numpy scalars, an Array exports no buffer, an element is no numbers.Real; the
    spellings given keep the Array or the bits."""
    import numbers

    h = _values("outside", (2, 3)).astype(np.float16)
    x = sf.asarray(h, "fp16")
    for f in (np.ascontiguousarray, np.asfortranarray, np.asanyarray):
        got = f(x)
        assert type(got) is np.ndarray and got.dtype == np.float16 and np.array_equal(got, h)
    assert isinstance(np.copy(x), sf.Array) and isinstance(x.copy(order="F"), sf.Array)
    assert [type(v) for _, v in np.ndenumerate(x)] == [np.float16] * 6
    assert all(isinstance(x[i], sf.Array) and x[i].item() == h[i] for i in np.ndindex(x.shape))
    with pytest.raises(TypeError):
        np.frombuffer(x, dtype=np.float16)
    with pytest.raises(TypeError):
        memoryview(x)
    assert np.array_equal(np.frombuffer(bytes(x), dtype=np.float16).reshape(2, 3), h)
    assert memoryview(x.bits).tobytes() == x.tobytes()
    assert not isinstance(x[0, 0], numbers.Real) and isinstance(float(x[0, 0]), numbers.Real)


def test_np_save_refusal_says_how_to_save_values_or_bits():
    """np.save / np.savez of an Array were refused as storing 'float64/float32 values' (a
    float16 array for fp16, in fact); the reason now says what a numpy file can hold and
    gives both spellings, whose round trips are exact."""
    import io

    import ml_dtypes

    h = _values("save", 5).astype(ml_dtypes.bfloat16)
    x = sf.asarray(h, "bf16")
    for save in (np.save, np.savez, np.savez_compressed):
        with pytest.raises(TypeError, match=r"no softfloat format.*arr\.to_numpy\(\).*arr\.bits.*from_bits"):
            save(io.BytesIO(), x)
    values, patterns = io.BytesIO(), io.BytesIO()
    np.save(values, x.to_numpy())
    np.savez(patterns, w=x.bits)
    values.seek(0)
    patterns.seek(0)
    assert np.array_equal(np.load(values), h.astype(np.float32))
    assert np.array_equal(sf.Array.from_bits(np.load(patterns)["w"], "bf16").bits, h.view(np.uint16))


# ---- np.nextafter's flags ---------------------------------------------------------------
def _c_library_flags(f):
    """The floating-point exceptions numpy reports for ``f()`` (its C library's status),
    one errstate at a time."""
    raised = set()
    for kind, name in (("over", "overflow"), ("under", "underflow"), ("invalid", "invalid")):
        with np.errstate(all="ignore", **{kind: "raise"}):
            try:
                f()
            except FloatingPointError:
                raised.add(name)
    return raised


@pytest.mark.parametrize("fmt, dtype", [("fp32", np.float32), ("fp64", np.float64)])
def test_nextafter_raises_the_c_librarys_flags(fmt, dtype):
    """np.nextafter of Arrays raised no flag at all; C99 (Annex F.9.8.3) raises overflow
    and inexact where a finite x steps to an infinity, underflow and inexact where the
    result is subnormal or zero and x != y.  Oracle: numpy float32/float64's nextafter
    (the C library's nextafterf/nextafter) on every pair of 12 edge values; the bits
    are numpy's too (but nextafter(+0, -0): see docs/numpy_coverage.md)."""
    info = np.finfo(dtype)
    edges = [info.max, -info.max, info.smallest_normal, -info.smallest_normal, info.smallest_subnormal,
             -info.smallest_subnormal, info.smallest_normal / 2, 0.0, -0.0, 1.0, np.inf, -np.inf]
    for a in edges:
        for b in edges:
            x, y = dtype(a), dtype(b)
            with sf.context() as ctx:
                got = np.nextafter(sf.asarray(x, fmt), sf.asarray(y, fmt))
            want = _c_library_flags(lambda: np.nextafter(x, y))
            raised = {n for n in ("overflow", "underflow", "invalid") if getattr(ctx.flags, n)}
            assert raised == want, (a, b)
            assert bool(ctx.flags.inexact) == bool(want & {"overflow", "underflow"}), (a, b)
            with np.errstate(all="ignore"):
                expected = np.nextafter(x, y)
            if not (a == 0 and b == 0):
                assert got.bits == expected.view(got.bits.dtype), (a, b)
    signalling = sf.Array.from_bits([0x7FA00000], "fp32")
    with sf.context() as ctx:
        np.nextafter(signalling, 1.0)
    assert ctx.flags.invalid == 1


@pytest.mark.parametrize("fmt, dtype", [("fp32", np.float32), ("fp64", np.float64)])
def test_spacing_raises_its_nextafter_steps_flags(fmt, dtype):
    """np.spacing(x) is nextafter(x, +-inf) - x (numpy's definition, away from zero): its
    flags are the step's C99 ones -- overflow at the largest finite value, underflow
    where the neighbour is subnormal or zero -- with the subtraction's (invalid for an
    infinity: inf - inf); it raised only the subtraction's.  Oracle: numpy float32/float64
    nextafter's flags from the C library, numpy's spacing for the bits (zeros aside: the
    sign convention of docs/numpy_coverage.md)."""
    info = np.finfo(dtype)
    edges = [info.max, -info.max, info.smallest_normal, -info.smallest_normal, info.smallest_subnormal,
             -info.smallest_subnormal, info.smallest_normal / 2, 0.0, -0.0, 1.0, -3.0, np.inf, -np.inf]
    for a in edges:
        x = dtype(a)
        with sf.context() as ctx:
            got = np.spacing(sf.asarray(x, fmt))
        want = _c_library_flags(lambda: np.nextafter(x, np.copysign(dtype(np.inf), x)))
        if np.isinf(x):
            want.add("invalid")
        raised = {n for n in ("overflow", "underflow", "invalid") if getattr(ctx.flags, n)}
        assert raised == want, a
        with np.errstate(all="ignore"):
            expected = np.spacing(x)
        if a != 0 and not np.isinf(a):
            assert got.bits == expected.view(got.bits.dtype), a


def test_assert_equal_of_an_element_fails_as_documented():
    """As softfloat._array_coverage.OUTSIDE_DISPATCH says: np.testing.assert_equal (no
    dispatch) fails an element against an equal Python scalar (numpy's isscalar differs);
    assert_array_equal and the other value assertions take elements."""
    x = sf.asarray([1.0, 0.5], "fp16")
    with pytest.raises(AssertionError, match="Items are not equal"):
        np.testing.assert_equal(x[0], 1.0)
    np.testing.assert_array_equal(x[0], 1.0)
    np.testing.assert_allclose(x[1], 0.5)
    np.testing.assert_almost_equal(x[1], 0.5004, decimal=3)
    np.testing.assert_equal(float(x[0]), 1.0)


def test_finfo_of_an_arrays_dtype_is_the_holding_dtypes_as_documented():
    """As softfloat._array_coverage.OUTSIDE_DISPATCH says: np.finfo(x.dtype) is numpy's
    finfo of the dtype holding the values (right for fp16/fp32/fp64, float16's or
    float32's limits for FP8 and bf16); the Format's own limits are ml_dtypes.finfo's."""
    import ml_dtypes

    assert np.finfo(sf.asarray([1.0], "fp16").dtype) == np.finfo(np.float16)
    for fmt, holding, mine in (("bf16", np.float32, ml_dtypes.bfloat16), ("fp8_e4m3", np.float16, ml_dtypes.float8_e4m3fn),
                               ("fp8_e5m2", np.float16, ml_dtypes.float8_e5m2)):
        x = sf.asarray([1.0], fmt)
        assert np.finfo(x.dtype) == np.finfo(holding)
        own = ml_dtypes.finfo(mine)
        assert (x.format.epsilon, x.format.max_finite, x.format.min_normal, x.format.min_subnormal) == \
            (float(own.eps), float(own.max), float(own.smallest_normal), float(own.smallest_subnormal))


# ---- logaddexp.reduce, subtract.accumulate, ... -----------------------------------------
def _chain_oracle(rows, step, start=None):
    """numpy float16 scalars: r = row[0] (or start), r = step(r, v) for the rest."""
    out = []
    for row in rows:
        r = row[0] if start is None else np.float16(start)
        for v in (row[1:] if start is None else row):
            r = step(r, v)
        out.append(r)
    return np.array(out, dtype=np.float16)


_F16_STEPS = {
    np.subtract: lambda a, b: np.float16(a) - np.float16(b),  # numpy float16 - and / round correctly
    np.divide: lambda a, b: np.float16(a) / np.float16(b),
    np.logaddexp: lambda a, b: np.float16(np.logaddexp(np.float64(a), np.float64(b))),  # libm rounded once
    np.hypot: lambda a, b: np.float16(np.hypot(np.float64(a), np.float64(b))),
    np.arctan2: lambda a, b: np.float16(np.arctan2(np.float64(a), np.float64(b))),
}


@pytest.mark.parametrize("ufunc", list(_F16_STEPS), ids=lambda u: u.__name__)
def test_other_ufuncs_reduce_and_accumulate_as_numpys_loop(ufunc):
    """np.logaddexp.reduce(logits) (a log-sum-exp), subtract/divide.reduce and their
    accumulate were refused ('only add, multiply, maximum, minimum...'); they are numpy's
    loop, r = x[0] then r = ufunc(r, x[k]), each call one rounding.  Oracle: that loop on
    numpy float16 scalars (numpy's own float16 reduce keeps a float32 accumulator for
    subtract and divide, so it is no oracle of the step-by-step definition)."""
    h = _values(f"chain-{ufunc.__name__}", (3, 6)).astype(np.float16)
    x = sf.asarray(h, "fp16")
    step = _F16_STEPS[ufunc]
    np.testing.assert_array_equal(ufunc.reduce(x, axis=1).bits, _chain_oracle(h, step).view(np.uint16))
    np.testing.assert_array_equal(ufunc.reduce(x, axis=0).bits, _chain_oracle(h.T, step).view(np.uint16))
    running = np.stack([_chain_oracle(h[:, :k + 1], step) for k in range(6)], axis=1)
    np.testing.assert_array_equal(ufunc.accumulate(x, axis=1).bits, running.view(np.uint16))
    mask = np.array([True, False, True, True, False, True])
    kept = [row[mask] for row in h]
    np.testing.assert_array_equal(ufunc.reduce(x, axis=1, where=mask, initial=0.5).bits,
                                  _chain_oracle(kept, step, start=0.5).view(np.uint16))
    assert ufunc.reduce(x, axis=1, keepdims=True).shape == (3, 1)


def test_chain_reductions_keep_numpys_rules_and_count_flags_once():
    x = sf.asarray(_values("chain-rules", (2, 3)), "fp16")
    with pytest.raises(ValueError, match="not reorderable"):
        np.subtract.reduce(x, axis=None)
    with pytest.raises(ValueError, match="specify 'initial'"):
        np.subtract.reduce(x, axis=1, where=[True, False, True])
    with pytest.raises(ValueError, match="no identity"):
        np.divide.reduce(sf.asarray(np.zeros(0), "fp16"))
    flat = np.logaddexp.reduce(x, axis=None)  # (an identity, -inf: numpy takes every axis, here in C order)
    assert flat.bits == np.logaddexp.reduce(x.reshape(-1)).bits
    big = sf.asarray([60000.0, -60000.0, -60000.0], "fp16")
    with sf.context() as ctx:
        assert np.subtract.reduce(big).item() == np.inf
    assert ctx.flags.overflow == 1  # one result, one overflow (the second step's inf - x is exact)
    with sf.context() as ctx:
        running = np.subtract.accumulate(big)
    assert running.tolist() == [60000.0, np.inf, np.inf] and ctx.flags.overflow == 1
    with pytest.raises(TypeError, match="numpy.greater.reduce on a softfloat.Array is not defined"):
        np.greater.reduce(x)
    for rows in (x, x[:1]):  # without flags the same bits (one row: a chain of no steps)
        tracked = (np.subtract.reduce(rows, axis=0), np.subtract.accumulate(rows, axis=0))
        with sf.context(track_flags=False):
            untracked = (np.subtract.reduce(rows, axis=0), np.subtract.accumulate(rows, axis=0))
        for a, b in zip(tracked, untracked):
            np.testing.assert_array_equal(a.bits, b.bits)


# ---- out= on the joining, taking and dot functions ---------------------------------------
def test_out_is_taken_where_numpy_takes_it():
    """np.concatenate / stack / dot / take / compress / argmax / ptp with out= were refused
    ('not defined with out='); out= now takes the result as numpy's does (an Array's bits,
    rounded into its format where that differs; a plain ndarray's values).  Oracle: the
    same calls on numpy float16 (exact moves; integer-valued dot products)."""
    import ml_dtypes

    h = np.arange(6.0).reshape(2, 3).astype(np.float16)
    x = sf.asarray(h, "fp16")
    calls = (
        (lambda a, o: np.concatenate([a, a], axis=1, out=o), (2, 6)),
        (lambda a, o: np.stack([a, a], out=o), (2, 2, 3)),
        (lambda a, o: np.dot(a, a.T, out=o), (2, 2)),
        (lambda a, o: np.take(a, [2, 0], axis=1, out=o), (2, 2)),
        (lambda a, o: np.compress([True, False, True], a, axis=1, out=o), (2, 2)),
        (lambda a, o: np.ptp(a, axis=1, out=o), (2,)),
    )
    for call, shape in calls:
        want = call(h, np.zeros(shape, np.float16))
        out = sf.asarray(np.zeros(shape), "fp16")
        got = call(x, out)
        assert got.shape == shape and np.array_equal(got.bits, want.view(np.uint16))
        plain = np.zeros(shape)
        call(x, plain)
        assert np.array_equal(plain, want.astype(np.float64))
    index = np.zeros(2, np.intp)
    assert np.argmax(x, axis=1, out=index) is index and index.tolist() == [2, 2]
    wide = sf.asarray(np.zeros(4), "bf16")  # an fp32 result rounded into out's bf16, once
    np.concatenate([sf.asarray([0.1, 0.2], "fp32"), sf.asarray([0.3, 0.4], "fp32")], out=wide)
    assert wide.tolist() == np.float32([0.1, 0.2, 0.3, 0.4]).astype(ml_dtypes.bfloat16).astype(float).tolist()
    with pytest.raises(ValueError, match="out= has shape"):
        np.concatenate([x, x], out=sf.asarray(np.zeros(3), "fp16"))
