"""Every numpy function an Array maps equals the bit-level function it stands for, bit for
bit and flag for flag, over hypothesis-drawn Arrays of every catalogue format (and a custom
one), every deterministic mode, accumulator and order.

The expected side is written from the documented mapping (``sf.matmul`` with the context's
accumulator and order, rounded into the operands' format; ``np.mean`` as that sum divided
by n once more; libm through float64 rounded once), calling only the bit-level API.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import softfloat as sf
from softfloat.strategies import arrays

FORMATS = [*sf.catalogue(), sf.Format(6, 9)]
MODES = ["nearest_even", "toward_zero", "upward", "downward", "nearest_away", "odd"]
ORDERS = ["sequential", "pairwise", "reverse"]


def default_accumulator(fmt):
    """The issue's rule, restated for the oracle: fp32 for formats narrower than fp32 whose
    values fp32 holds, else the format itself (fp32, tf32, fp64, and wide custom formats)."""
    narrower = fmt.precision <= 24 and fmt.emax <= 127 and fmt.emin >= -126 and fmt != sf.fp32
    return sf.fp32 if narrower else fmt


def _counts_equal(sticky, *flag_sets, swamped=0):
    for name in sf.FLAG_NAMES:
        assert getattr(sticky, name) == sum(f.count()[name] for f in flag_sets), name
    assert sticky.swamped == swamped


def _swamped(flags):
    return int(np.sum(flags.swamped)) if getattr(flags, "swamped", None) is not None else 0


@st.composite
def contraction(draw):
    fmt = draw(st.sampled_from(FORMATS))
    m, k, n = (draw(st.integers(1, 4)) for _ in range(3))
    a = draw(arrays(fmt, (m, k), as_bits=True))
    b = draw(arrays(fmt, (k, n), as_bits=True))
    acc = draw(st.sampled_from([None, "fp16", "bf16", "fp32"]))
    return fmt, a, b, acc


@settings(max_examples=60, deadline=None)
@given(case=contraction(), mode=st.sampled_from(MODES), order=st.sampled_from(ORDERS))
def test_matmul_dot_inner_tensordot_equal_sf_matmul(case, mode, order):
    fmt, a, b, acc = case
    accumulator = default_accumulator(fmt) if acc is None else acc
    expected, flags = sf.matmul(a, b, fmt, accumulator=accumulator, out_format=fmt, order=order,
                                rounding=mode, return_flags=True)
    A, B = sf.Array.from_bits(a, fmt), sf.Array.from_bits(b, fmt)
    for spell in (lambda: A @ B, lambda: np.dot(A, B), lambda: np.inner(A, B.T), lambda: np.tensordot(A, B, 1),
                  lambda: np.einsum("ij,jk->ik", A, B)):
        with sf.context(rounding=mode, accumulator=acc, order=order) as ctx:
            got = spell()
        assert got.format == fmt and np.array_equal(got.bits, expected)
        _counts_equal(ctx.flags, flags, swamped=_swamped(flags))


@settings(max_examples=60, deadline=None)
@given(fmt=st.sampled_from(FORMATS), shape=st.sampled_from([(5,), (2, 3), (3, 1, 4)]), data=st.data(),
       mode=st.sampled_from(MODES), order=st.sampled_from(ORDERS), acc=st.sampled_from([None, "fp16", "fp32"]))
def test_sum_and_mean_equal_sf_sum_then_one_division(fmt, shape, data, mode, order, acc):
    x = data.draw(arrays(fmt, shape, as_bits=True))
    axis = data.draw(st.sampled_from([None, 0, len(shape) - 1]))
    accumulator = default_accumulator(fmt) if acc is None else acc
    total, flags = sf.sum(x, fmt, axis=axis, accumulator=accumulator, out_format=fmt, order=order,
                          rounding=mode, return_flags=True)
    X = sf.Array.from_bits(x, fmt)
    with sf.context(rounding=mode, accumulator=acc, order=order) as ctx:
        got = np.sum(X, axis=axis)
    assert np.array_equal(got.bits, total)
    _counts_equal(ctx.flags, flags, swamped=_swamped(flags))

    n = x.size // max(np.size(total), 1)
    with sf.context(rounding=mode, accumulator=acc, order=order) as ctx:
        mean = np.mean(X, axis=axis)
    # the sum, then one correctly rounded division by n (n need not be a value of the
    # format) -- in the accumulator's format where it holds fmt's values, then rounded
    # once into fmt; else in fmt
    wide = sf.as_format(accumulator)
    if wide != fmt and wide.holds(fmt):
        total, flags = sf.sum(sf.convert(x, fmt, wide), wide, axis=axis, accumulator=accumulator, out_format=wide,
                              order=order, rounding=mode, return_flags=True)
    else:
        wide = fmt
    expected, step_flags = [], []
    for t in np.atleast_1d(total).ravel():
        value = sf.decode(t, wide)
        if np.isfinite(value):
            bits, f = sf.encode(Fraction(float(value)) / n, wide, mode, return_flags=True)
        else:  # inf / n and NaN / n: the sum's own pattern
            bits, f = t, sf.Flags.none(())
        step_flags.append(f)
        if wide != fmt:
            bits, f = sf.convert(bits, wide, fmt, rounding=mode, return_flags=True)
            step_flags.append(f)
        expected.append(bits)
    assert np.array_equal(np.atleast_1d(mean.bits).ravel(), np.array(expected, dtype=fmt.storage_dtype))
    for name in ("overflow", "underflow", "inexact"):
        assert getattr(ctx.flags, name) == flags.count()[name] + sum(bool(getattr(f, name)) for f in step_flags)


LIBM = [np.exp, np.log, np.sin, np.tanh, np.expm1, np.log1p, np.arctan, np.cbrt]


@settings(max_examples=60, deadline=None)
@given(fmt=st.sampled_from(FORMATS), data=st.data(), mode=st.sampled_from(MODES), ufunc=st.sampled_from(LIBM))
def test_libm_functions_are_float64_results_rounded_once(fmt, data, mode, ufunc):
    x = data.draw(arrays(fmt, (6,), as_bits=True))
    values = sf.decode(x, fmt)
    with np.errstate(all="ignore"):
        f64 = ufunc(values)
    expected, flags = sf.encode(f64, fmt, mode, return_flags=True)
    with sf.context(rounding=mode) as ctx:
        got = ufunc(sf.Array.from_bits(x, fmt))
    nan = np.isnan(f64)
    assert np.array_equal(got.bits[~nan], expected[~nan])
    assert np.all(sf.is_nan(got.bits[nan], fmt) | (not fmt.has_nan))
    # documented: every finite result counts as inexact (float64 libm is faithful, not exact);
    # an infinite result of a finite operand overflows (inexact), but at a pole
    made = np.isinf(f64) & np.isfinite(values)
    if ufunc in (np.log, np.log2, np.log10, np.log1p, np.arctanh):  # (each one's infinities: poles)
        made[:] = False
    assert ctx.flags.inexact == int(np.count_nonzero(flags.inexact | np.isfinite(f64) | made))
    assert ctx.flags.overflow == int(np.count_nonzero(np.asarray(flags.overflow) | made))


@settings(max_examples=60, deadline=None)
@given(fmt=st.sampled_from(FORMATS), to=st.sampled_from(FORMATS), data=st.data(), mode=st.sampled_from(MODES))
def test_astype_and_asarray_round_once_like_convert_and_encode(fmt, to, data, mode):
    x = data.draw(arrays(fmt, (5,), as_bits=True))
    expected, flags = sf.convert(x, fmt, to, mode, return_flags=True)
    with sf.context() as ctx:
        got = sf.Array.from_bits(x, fmt).astype(to, rounding=mode)
    assert got.format == to and np.array_equal(got.bits, expected)
    _counts_equal(ctx.flags, flags)

    values = data.draw(arrays(sf.fp64, (5,)))
    expected, flags = sf.encode(values, to, mode, return_flags=True)
    with sf.context() as ctx:
        got = sf.asarray(values, to, rounding=mode)
    assert np.array_equal(got.bits, expected)
    _counts_equal(ctx.flags, flags)


@settings(max_examples=60, deadline=None)
@given(fmt=st.sampled_from(FORMATS), data=st.data(), mode=st.sampled_from(MODES))
def test_rounded_unary_ufuncs_report_the_bit_level_flags(fmt, data, mode):
    x = data.draw(arrays(fmt, (6,), as_bits=True))
    X = sf.Array.from_bits(x, fmt)
    one = sf.encode(1.0, fmt)
    cases = [(np.sqrt, lambda: sf.sqrt(x, fmt, mode, return_flags=True)),
             (np.square, lambda: sf.mul(x, x, fmt, mode, return_flags=True)),
             (np.reciprocal, lambda: sf.div(one, x, fmt, mode, return_flags=True))]
    for ufunc, reference in cases:
        expected, flags = reference()
        with sf.context(rounding=mode) as ctx:
            got = ufunc(X)
        assert np.array_equal(got.bits, expected), ufunc.__name__
        _counts_equal(ctx.flags, flags)
    for ufunc, rounding in ((np.floor, "downward"), (np.ceil, "upward"), (np.trunc, "toward_zero"),
                            (np.rint, "nearest_even")):
        expected, flags = sf.round_to_integral(x, fmt, rounding, return_flags=True)
        with sf.context(rounding=mode) as ctx:  # the context's mode does not matter here
            got = ufunc(X)
        assert np.array_equal(got.bits, expected)
        _counts_equal(ctx.flags, flags)


@settings(max_examples=40, deadline=None)
@given(fmt=st.sampled_from(FORMATS), data=st.data(), mode=st.sampled_from(MODES), n=st.integers(-3, 4))
def test_integer_powers_are_repeated_rounded_multiplications(fmt, data, mode, n):
    x = data.draw(arrays(fmt, (4,), as_bits=True))
    one = sf.encode(1.0, fmt)
    p = np.broadcast_to(one, x.shape)
    all_flags = []
    # documented: x**n is x * x * ... (|n| - 1 roundings, left to right), then 1 / that for n < 0
    if abs(n) >= 1:
        p = x
        for _ in range(abs(n) - 1):
            p, f = sf.mul(p, x, fmt, mode, return_flags=True)
            all_flags.append(f)
    if n < 0:
        p, f = sf.div(one, p, fmt, mode, return_flags=True)
        all_flags.append(f)
    with sf.context(rounding=mode) as ctx:
        got = sf.Array.from_bits(x, fmt) ** n
    assert np.array_equal(got.bits, p)
    # one ufunc call is one operation: an element counts once for a flag any step raised
    combined = sf.Flags.none(x.shape)
    for f in all_flags:
        combined = combined | f
    _counts_equal(ctx.flags, combined)


@settings(max_examples=40, deadline=None)
@given(fmt=st.sampled_from(FORMATS), data=st.data())
def test_copysign_nextafter_and_sorting_move_bits_exactly(fmt, data):
    x = data.draw(arrays(fmt, (6,), as_bits=True))
    y = data.draw(arrays(fmt, (6,), as_bits=True))
    X, Y = sf.Array.from_bits(x, fmt), sf.Array.from_bits(y, fmt)
    with sf.context() as ctx:
        assert np.array_equal(np.copysign(X, Y).bits, sf.copysign(x, y, fmt))
        assert np.array_equal(np.negative(X).bits, sf.neg(x, fmt))
    assert ctx.flags.inexact == ctx.flags.overflow == ctx.flags.underflow == 0
    # sort: numpy's order (the bit level's le, NaNs last), stable: equal neighbours (eq, or
    # two NaNs) keep their places' order
    index = np.argsort(X)
    s = x[index]
    assert np.array_equal(np.sort(X).bits, s)
    nan = np.asarray(sf.is_nan(s, fmt))
    for i in range(len(s) - 1):
        assert nan[i + 1] or (not nan[i] and sf.le(s[i], s[i + 1], fmt))
        if (nan[i] and nan[i + 1]) or (not nan[i] and sf.eq(s[i], s[i + 1], fmt)):
            assert index[i] < index[i + 1]


@settings(max_examples=60, deadline=None)
@given(fmt=st.sampled_from(FORMATS), data=st.data(), mode=st.sampled_from(MODES + ["nearest_even"] * 3),
       acc=st.sampled_from([None, "fp16", "bf16", "fp32", "fp64"]))
def test_cumsum_is_the_chain_of_rounded_additions(fmt, data, mode, acc):
    x = data.draw(arrays(fmt, st.sampled_from([(1,), (9,), (5, 3)]), as_bits=True))
    accumulator = sf.as_format(default_accumulator(fmt) if acc is None else acc)
    terms, conv = sf.convert(x, fmt, accumulator, mode, return_flags=True)
    running = [terms[0]]
    additions = []
    for k in range(1, terms.shape[0]):
        s, f = sf.add(running[-1], terms[k], accumulator, mode, return_flags=True)
        running.append(s)
        additions.append(f)
    expected, final = sf.convert(np.array(running), accumulator, fmt, mode, return_flags=True)
    with sf.context(rounding=mode, accumulator=acc) as ctx:
        got = np.cumsum(sf.Array.from_bits(x, fmt), axis=0)
    assert np.array_equal(got.bits, expected)
    _counts_equal(ctx.flags, conv, *additions, final, swamped=ctx.flags.swamped)
    # swamped: a non-zero finite term left a finite running sum unchanged
    values = sf.decode(np.array(running), accumulator)
    term_values = sf.decode(terms, accumulator)
    swamped = sum(int(np.sum((running[k] == running[k - 1]) & np.isfinite(values[k - 1])
                             & np.isfinite(term_values[k]) & (term_values[k] != 0)))
                  for k in range(1, len(running)))
    assert ctx.flags.swamped == swamped


def test_cumsum_of_a_long_vector_is_vectorised():
    x = sf.asarray(np.full(200_000, 1.0), "fp16")
    with sf.context() as ctx:
        got = np.cumsum(x)  # fp32 running sums: exact up to 2**24; fp16 holds 2048 exactly
    assert got[2047].item() == 2048.0 and got[-1].item() == sf.decode(sf.encode(200_000.0, "fp16"), "fp16")
    assert ctx.flags.swamped == 0 and ctx.flags.operations == 3


def _program(x, w, b):
    """A little of everything the Array maps: contraction, ufuncs, reductions, libm."""
    h = np.maximum(x @ w + b, 0)
    z = h - np.max(h, axis=-1, keepdims=True)
    p = np.exp(z) / np.sum(np.exp(z), axis=-1, keepdims=True)
    return [h, p, np.mean(p), np.cumsum(h, axis=0), h ** 3, np.sqrt(np.abs(z)), np.linalg.norm(h),
            np.var(h), np.sort(z, axis=None), np.floor(h), h.astype("bf16"), np.prod(w, axis=0)]


@settings(max_examples=30, deadline=None)
@given(fmt=st.sampled_from(["fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "fp32"]), data=st.data(),
       mode=st.sampled_from(MODES), acc=st.sampled_from([None, "fp16", "h100"]))
def test_untracked_flags_change_no_result(fmt, data, mode, acc):
    fmt = sf.as_format(fmt)
    x, w, b = (sf.Array.from_bits(data.draw(arrays(fmt, shape, as_bits=True)), fmt)
               for shape in [(3, 4), (4, 2), (2,)])
    if acc == "h100" and fmt.bits > 16:
        acc = None  # the tensor-core model takes fp16/bf16/fp8 inputs
    with sf.context(rounding=mode, accumulator=acc) as counted:
        tracked = _program(x, w, b)
    with sf.context(rounding=mode, accumulator=acc, track_flags=False) as ctx:
        untracked = _program(x, w, b)
    for t, u in zip(tracked, untracked):
        assert t.format == u.format and np.array_equal(t.bits, u.bits)
    assert counted.flags.operations > 0
    assert all(getattr(ctx.flags, name) == 0 for name in (*sf.FLAG_NAMES, "swamped", "operations"))


def test_traps_need_tracked_flags():
    with pytest.raises(ValueError, match="track_flags"):
        with sf.context(traps={"overflow"}, track_flags=False):
            pass
    with pytest.raises(TypeError, match="track_flags"):
        with sf.context(track_flags="no"):
            pass
