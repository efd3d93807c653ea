"""The small-array paths of the array layer (0-d operands straight to the kernels, the
float64 libm functions on scalars, Python scalars rounded once per context and
remembered, one element's flags counted without arrays) equal the vectorised path bit
for bit, flags and traps included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import softfloat as sf
from tests.fastpath_checks import assert_call_like_general, flag_counts

FORMATS = ("fp16", "bf16", "fp8_e4m3", "fp32")
MODES = ("nearest_even", "toward_zero", "upward", "nearest_away")
BINARY = (np.add, np.subtract, np.multiply, np.divide, np.maximum, np.arctan2, np.hypot, np.copysign)
UNARY = (np.exp, np.log, np.tanh, np.sqrt, np.sin, np.expm1, np.negative, np.floor, np.square)
SCALARS = (1.0, 0.1, -0.0, 0.0, 3, -7, 1e-30, 1e30, float("inf"), float("nan"), 2 ** 70)


def _bits(fmt, data):
    width = sf.as_format(fmt).bits
    return data.draw(st.integers(0, 2 ** width - 1))



def _one_by_one_and_vectorised(fmt, mode, call, columns, shape=()):
    """call on each element (an Array of ``shape``: 0-d or one element), and on the whole
    arrays: results and per-element flags."""
    singles, counts = [], []
    for k in range(len(columns[0])):
        with sf.context(rounding=mode) as ctx:
            r = call(*(sf.Array.from_bits(np.reshape(c[k], shape), fmt) for c in columns))
        assert r.shape == shape
        singles.append(int(r.bits.item()))
        counts.append(flag_counts(ctx))
    with sf.context(rounding=mode) as ctx:
        whole = call(*(sf.Array.from_bits(np.asarray(c), fmt) for c in columns))
        last = ctx.flags.last
    return singles, counts, whole, last


@settings(max_examples=60, deadline=None)
@given(data=st.data(), fmt=st.sampled_from(FORMATS), mode=st.sampled_from(MODES),
       ufunc=st.sampled_from(BINARY + UNARY), shape=st.sampled_from([(), (1,)]))
def test_small_operations_equal_the_vectorised_ones(data, fmt, mode, ufunc, shape):
    n = 3
    columns = [[_bits(fmt, data) for _ in range(n)] for _ in range(ufunc.nin)]
    singles, counts, whole, last = _one_by_one_and_vectorised(fmt, mode, ufunc, columns, shape)
    assert singles == whole.bits.tolist()
    for k, c in enumerate(counts):
        for name in sf.FLAG_NAMES:
            assert c[name] == int(np.asarray(getattr(last, name))[k]), (name, k)
        assert c["values"] == 1 and c["operations"] == 1


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e5m2"])
@pytest.mark.parametrize("mode", MODES)
def test_python_scalars_remembered_count_as_rounded_each_time(fmt, mode):
    """a + s, s * a, ... with a Python scalar: each call rounds s (its flags counted every
    time, as a fresh encode does) and gives the vectorised path's bits."""
    a = sf.asarray([0.5, -3.0, 1000.0], fmt)
    for s in SCALARS:
        for op in (lambda x: x + s, lambda x: s * x, lambda x: s - x, lambda x: x / s):
            with sf.context(rounding=mode) as ctx:
                got = [op(a[k]) for k in range(3)] + [op(a[k]) for k in range(3)]
            counts = flag_counts(ctx)
            with sf.context(rounding=mode) as ref:
                want = op(sf.asarray(a.to_numpy(), fmt))
                _, f = sf.encode(s, fmt, rounding=mode, return_flags=True)
            assert [int(g.bits) for g in got] == want.bits.tolist() * 2
            assert counts["operations"] == 12 and counts["values"] == 12
            for name in sf.FLAG_NAMES:
                per_op = int(np.count_nonzero(getattr(ref.flags.last, name)))
                assert counts[name] == 2 * per_op + 6 * int(bool(getattr(f, name))), (s, name)


def test_a_remembered_scalar_follows_the_context():
    """The memo is per context and its attributes: a new rounding rounds afresh."""
    a = sf.asarray(1.0, "fp16")
    with sf.context(rounding="downward"):
        down = a + 0.1
    with sf.context(rounding="upward"):
        up = a + 0.1
    assert down.item() < up.item()
    with sf.context(traps={"inexact"}):
        with pytest.raises(sf.Inexact, match="operand"):
            a + 0.1
        a + 0.5  # exact: no trap


def test_stochastic_rounding_of_scalars_draws_every_time():
    a = sf.asarray(np.zeros(()), "fp8_e4m3")
    with sf.context(rounding="stochastic", rng=1):
        got = {float(a + 0.3) for _ in range(64)}
    assert len(got) == 2  # both neighbours of 0.3: not one draw remembered


def test_track_flags_false_gives_the_same_bits():
    a, b = sf.asarray(0.1, "bf16"), sf.asarray(3.0, "bf16")
    with sf.context() as counted:
        want = [(a + b).bits, np.exp(a).bits, (a * 0.3).bits]
    with sf.context(track_flags=False) as ctx:
        got = [(a + b).bits, np.exp(a).bits, (a * 0.3).bits]
    assert [int(x) for x in got] == [int(x) for x in want]
    assert counted.flags.inexact > 0 and ctx.flags.operations == 0


def test_operators_with_other_operands_take_numpys_way():
    a = sf.asarray([1.0, 2.0], "fp16")
    assert (a + np.float32(0.5)).tolist() == [1.5, 2.5]
    assert (a + [1, 2]).tolist() == [2.0, 4.0]
    assert (True + a).tolist() == [2.0, 3.0]
    assert (a - sf.asarray([1.0, 1.0], "bf16")).format == sf.fp32
    with pytest.raises(TypeError):
        a + "1"


# ---- a.sum() of one element (softfloat._array_ufuncs._one_term) -------------------------
def _sum_with_context(arr, options, call=lambda a: a.sum()):
    """``call(arr)`` in a fresh context with ``options``: the result's bits, the counts and
    the last flags (their masks and swamped count)."""
    with sf.context(**options) as ctx:
        try:
            result = call(arr)
        except ValueError as error:  # an accumulator without a model for the format: both raise
            return str(error)
    last = ctx.flags.last
    masks = None if last is None else [np.asarray(m).tolist() for _, m in last]
    swamped = None if last is None else np.asarray(last.swamped).tolist()
    return np.asarray(result.bits).reshape(-1).tolist(), result.shape, flag_counts(ctx), masks, swamped


@settings(max_examples=150, deadline=None)
@given(data=st.data(), fmt=st.sampled_from(FORMATS + ("fp8_e4m3fnuz", "fp4_e2m1", "fp64")),
       shape=st.sampled_from([(), (1,), (1, 1)]),
       axis=st.sampled_from([None, None, 0, -1]),
       options=st.sampled_from([{}, {"rounding": "toward_zero"}, {"rounding": "downward"}, {"rounding": "upward"},
                                {"subnormals": False}, {"accumulator": "fp16"}, {"accumulator": sf.fp8_e5m2},
                                {"accumulator": sf.fp16}, {"accumulator": "h100"}, {"track_flags": False},
                                {"order": "pairwise"}, {"order": "reverse"}, {"tininess": "before"}]))
def test_a_one_element_sum_equals_the_general_path(data, fmt, shape, axis, options):
    from tests.fastpath_checks import general

    if axis is not None and len(shape) != 1:
        axis = None
    pattern = _bits(fmt, data)
    arr = sf.Array.from_bits(np.reshape(pattern, shape), fmt)
    call = (lambda a: a.sum()) if axis is None else (lambda a: a.sum(axis=axis))
    fast = _sum_with_context(arr, options, call)
    slow = general(lambda: _sum_with_context(arr, options, call))
    assert fast == slow
    # np.sum, keepdims and the method agree (the method takes the sum without numpy's dispatch)
    assert _sum_with_context(arr, options, lambda a: np.sum(a)) == fast
    kept = _sum_with_context(arr, options, lambda a: a.sum(keepdims=True))
    assert kept == general(lambda: _sum_with_context(arr, options, lambda a: a.sum(keepdims=True)))


def test_a_one_element_sum_takes_the_shortcut(monkeypatch):
    from softfloat import _array_ufuncs

    calls = []
    original = _array_ufuncs._one_term
    monkeypatch.setattr(_array_ufuncs, "_one_term", lambda *a: calls.append(original(*a)) or calls[-1])
    a = sf.asarray([-0.0], "fp16")
    with sf.context() as ctx:
        assert a.sum().bits == 0x8000 and a.sum(axis=0).shape == ()
    assert len(calls) == 2 and all(c is not None for c in calls)
    assert ctx.flags.operations == 2 and ctx.flags.values == 2 and not ctx.flags.raised()
    for fmt in ("fp32", "fp64"):  # (their values through numpy's view: no table of 2**32 patterns)
        assert sf.asarray([-2.5], fmt).sum().item() == -2.5 and calls[-1] is not None
    assert sf.asarray([np.inf], "fp32").sum().item() == np.inf and calls[-1] is None
    with sf.context(rounding="stochastic", rng=0):
        a.sum()
    assert calls[-1] is None  # the general path draws its key from the context's generator


def test_sum_method_keywords_take_numpys_way():
    a = sf.asarray([1.0, 2.0, 3.0], "fp16")
    out = sf.asarray(0.0, "fp16")
    assert a.sum(out=out) is out and out.item() == 6.0
    assert a.sum(keepdims=True).shape == (1,)
    wide = a.sum(dtype=np.float32)
    assert wide.format is sf.fp32 and wide.item() == 6.0
    with pytest.raises(TypeError, match="dtype=int32 is not a floating-point format"):
        a.sum(dtype=np.int32)


@settings(max_examples=120, deadline=None)
@given(data=st.data(), fmt=st.sampled_from(("fp16", "bf16", "fp8_e4m3", "fp4_e2m1")),
       mode=st.sampled_from(MODES), shape=st.sampled_from([(1,), (5,), (3, 4), (2, 3, 2)]),
       track=st.booleans())
def test_mean_by_a_count_of_the_format_equals_the_general_division(data, fmt, mode, shape, track):
    """np.mean divides by the count with the format's own division where the count is a
    value of the format and no NaN is there (softfloat._array_statistics._by_a_value):
    the same quotient and flags as the general division of the float64 values."""
    from tests.fastpath_checks import general
    width = sf.as_format(fmt).bits
    bits = np.array(data.draw(st.lists(st.integers(0, 2 ** width - 1), min_size=int(np.prod(shape)),
                                       max_size=int(np.prod(shape)))), dtype=sf.as_format(fmt).storage_dtype)
    x = sf.Array.from_bits(bits.reshape(shape), fmt)
    axis = data.draw(st.sampled_from([None, 0, -1]))
    results = []
    for call in (lambda f: f(), general):
        with sf.context(rounding=mode, track_flags=track) as ctx:
            got = call(lambda: (np.mean(x, axis=axis), np.var(x, axis=axis), np.mean(x, axis=axis, keepdims=True)))
        results.append(([r.bits for r in got], flag_counts(ctx)))
    (fast, fast_flags), (slow, slow_flags) = results
    assert all(np.array_equal(a, b, equal_nan=False) for a, b in zip(fast, slow))
    assert fast_flags == slow_flags


@settings(max_examples=80, deadline=None)
@given(data=st.data(), fmt=st.sampled_from(FORMATS), shape=st.sampled_from([(1,), (6,), (2, 3), (2, 2, 2)]),
       axis=st.sampled_from([None, 0, -1]))
def test_a_sum_with_keepdims_into_one_output_is_the_general_sum(data, fmt, shape, axis):
    from tests.fastpath_checks import assert_same, general
    width = sf.as_format(fmt).bits
    bits = np.array(data.draw(st.lists(st.integers(0, 2 ** width - 1), min_size=int(np.prod(shape)),
                                       max_size=int(np.prod(shape)))), dtype=sf.as_format(fmt).storage_dtype)
    x = bits.reshape(shape)
    call = lambda: sf.sum(x, fmt, axis=axis, keepdims=True, return_flags=True)  # noqa: E731
    assert_same(call(), general(call))



@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e4m3", "fp8_e5m2fnuz", "fp6_e2m3", "fp6_e3m2", "fp4_e2m1"])
@pytest.mark.parametrize("ufunc", [np.floor, np.ceil, np.trunc, np.rint, np.fix])
def test_integral_values_by_numpy_equal_round_to_integral_on_every_pattern(fmt, ufunc):
    """floor/ceil/trunc/rint without a NaN are numpy's own on the values
    (softfloat._array_elementwise._integral's shortcut; FP6 E2M3, whose ceil(7.5)
    overflows, keeps the general path): every pattern of the format, NaN-free and with
    the NaNs (which take round_to_integral), equals the general path, flags too."""
    f = sf.as_format(fmt)
    everything = sf.Array.from_bits(np.arange(1 << f.bits).astype(f.storage_dtype), fmt)
    for x in (everything[~np.isnan(everything.to_numpy(np.float64))], everything):
        assert_call_like_general(lambda: ufunc(x))


@settings(max_examples=100, deadline=None)
@given(data=st.data(), fmt=st.sampled_from(["fp32", "fp64", "fp16"]), shape=st.sampled_from([(), (1,), (7,)]),
       ufunc=st.sampled_from([np.floor, np.ceil, np.trunc, np.rint]), track=st.booleans())
def test_integral_values_in_wide_formats_equal_the_general_path(data, fmt, shape, ufunc, track):
    width = sf.as_format(fmt).bits
    size = int(np.prod(shape))
    bits = np.array(data.draw(st.lists(st.integers(0, 2 ** width - 1), min_size=size, max_size=size)),
                    dtype=sf.as_format(fmt).storage_dtype).reshape(shape)
    x = sf.Array.from_bits(bits, fmt)
    assert_call_like_general(lambda: ufunc(x), track_flags=track)


@pytest.mark.parametrize("fmt", ["fp8_e4m3", "fp8_e5m2", "fp8_e4m3fnuz", "fp4_e2m1"])
@pytest.mark.parametrize("ufunc", [np.maximum, np.minimum, np.fmax, np.fmin])
def test_picks_without_nans_equal_the_general_path_on_every_pair(fmt, ufunc):
    """maximum/minimum/fmax/fmin pick by totalOrder keys where no NaN is there
    (softfloat._array_elementwise._pick's shortcut): every pair of the format, all of them
    (NaNs take the general path) and the NaN-free ones, broadcast and 0-d, equal the
    general path, flags too."""
    f = sf.as_format(fmt)
    n = 1 << f.bits
    a = sf.Array.from_bits(np.repeat(np.arange(n), n).astype(f.storage_dtype), fmt)
    b = sf.Array.from_bits(np.tile(np.arange(n), n).astype(f.storage_dtype), fmt)
    numbers = ~(np.isnan(a.to_numpy(np.float64)) | np.isnan(b.to_numpy(np.float64)))
    for x, y in ((a, b), (a[numbers], b[numbers]), (a[numbers][:1], b[numbers][:9]), (a[numbers][3], b[numbers][5])):
        assert_call_like_general(lambda: ufunc(x, y))


def _tiny_or_plain(fmt, data, n):
    """n finite patterns of ``fmt``: mostly subnormal or near the smallest normal (the
    divisions' underflow and tininess cases), some of any size."""
    fmt = sf.as_format(fmt)
    top = fmt.max_finite_bits
    low = st.integers(0, 4 << fmt.mantissa_bits)  # subnormals and the first binades
    magnitude = data.draw(st.lists(st.one_of(low, st.integers(0, top)), min_size=n, max_size=n))
    signs = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    sign = 1 << (fmt.bits - 1)
    return np.array([m | (sign if s else 0) for m, s in zip(magnitude, signs)], dtype=fmt.storage_dtype)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), case=st.sampled_from([("fp16", None), ("bf16", None), ("fp8_e4m3", None),
                                             ("fp32", "fp64"), ("fp16", "fp16"), ("fp32", None)]),
       mode=st.sampled_from((*MODES, "downward")), tininess=st.sampled_from(("after", "before")),
       n=st.sampled_from((1, 3, 7, 10, 100)), track=st.booleans())
def test_a_whole_array_mean_by_the_scalar_path_is_the_general_one_and_mpfrs(data, case, mode, tininess, n, track):
    """np.mean / np.var / np.std of a whole Array divide one value by an int and round it
    into the format by Python integer arithmetic (softfloat._array_statistics._one_rounding):
    the same bits and counted flags as with every shortcut off, and the bits of MPFR's two
    roundings (the quotient into the accumulator, then into the format) of the sum."""
    import math
    from fractions import Fraction
    from tests.fastpath_checks import general
    from tests.oracle import pattern_of, round_exact
    fmt, acc = case
    x = sf.Array.from_bits(_tiny_or_plain(fmt, data, n), fmt)
    runs = []
    for call in (lambda f: f(), general):
        with sf.context(rounding=mode, tininess=tininess, accumulator=acc, track_flags=track) as ctx:
            got = call(lambda: (np.mean(x), np.var(x), np.std(x), x.astype("fp32").mean(),
                                np.mean(x.reshape(1, -1), keepdims=True), np.var(x, ddof=1 if n > 1 else 0)))
        runs.append(([r.bits.tolist() for r in got], flag_counts(ctx)))
    assert runs[0] == runs[1]
    wide = sf.as_format(acc or "fp32") if sf.as_format(acc or "fp32").holds(x.format) and acc != fmt else x.format
    with sf.context(rounding=mode, tininess=tininess, accumulator=acc):
        total = float(np.sum(x, dtype=wide).item()) if wide is not x.format else np.sum(x).item()
    if not np.isfinite(total):
        return
    magnitude, negative = abs(Fraction(total)) / n, math.copysign(1.0, total) < 0
    for target in (wide, x.format):
        r = round_exact(magnitude, negative, target, mode, tininess=tininess)
        if isinstance(r.value, float):
            return  # an infinity or NaN: the general path's own tests
        magnitude, negative = abs(r.value), r.negative
        pattern = pattern_of(magnitude, negative, target)
    assert runs[0][0][0] == pattern


def test_a_whole_array_mean_takes_the_scalar_path(monkeypatch):
    from softfloat import _array_statistics
    from tests.fastpath_checks import answers_of, general
    taken = answers_of(monkeypatch, _array_statistics, "_one_rounding")
    x = sf.asarray([0.1, 0.2, 0.3], "fp16")
    with sf.context() as ctx:
        m = x.mean()
    assert len(taken) == 2 and all(t is not None for t in taken)  # the division, the conversion
    assert m.bits == sf.asarray(np.mean(np.float16([0.1, 0.2, 0.3])), "fp16").bits  # numpy's float32 mean
    assert ctx.flags.operations == 3  # the sum, the division, the conversion, as before
    taken.clear()
    with sf.context() as ctx:
        s = x.std()  # the mean kept with keepdims: one element of shape (1,)
    assert len(taken) == 3 and all(t is not None for t in taken)  # the mean's two, var's division
    with sf.context() as slow:
        assert s.bits == general(lambda: x.std()).bits
    assert flag_counts(ctx) == flag_counts(slow)
