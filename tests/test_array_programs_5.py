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


# ---- divmod: one fmod and one rounding of both results --------------------------------
def _fp16_pairs(seed, n):
    """fp16 patterns: random ones, the specials and small integers, every pair of them."""
    rng = np.random.default_rng(zlib.crc32(seed.encode()))
    bits = rng.integers(0, 1 << 16, n, dtype=np.uint64).astype(np.uint16)
    special = np.array([0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 3.0, -3.0, 0.5, 65504.0, 2.0 ** -24, -7.0],
                       np.float16).view(np.uint16)
    every = np.concatenate([bits, special])
    a, b = np.meshgrid(every, every)
    return a.ravel(), b.ravel()


def test_divmod_fp16_is_numpy_float16s_divmod():
    """divmod(x, y) took about 350 us for 8 elements: floor_divide and remainder each
    decoded, took fmod and rounded on its own, and remainder added the divisor in the
    format to every lane.  Now one fmod and one rounding of both results, mod + y in
    float64 where Fast2Sum shows it exact.  Oracle: numpy float16's divmod, floor_divide,
    remainder and fmod on every pair of a sample (its NaNs' patterns aside)."""
    a, b = _fp16_pairs("divmod fp16", 150)
    x, y = sf.Array.from_bits(a, "fp16"), sf.Array.from_bits(b, "fp16")
    h, g = a.view(np.float16), b.view(np.float16)
    with np.errstate(all="ignore"):
        expected = np.divmod(h, g) + (np.floor_divide(h, g), np.remainder(h, g), np.fmod(h, g))
    got = divmod(x, y) + (x // y, x % y, np.fmod(x, y))
    for r, e in zip(got, expected):
        nan = np.isnan(e)
        assert np.array_equal(np.isnan(r.to_numpy()), nan)
        np.testing.assert_array_equal(r.bits[~nan], e.view(np.uint16)[~nan])


def _exact_divmod(p: int, q: int, fmt, mode):
    """floor(a / b) and a - floor(a / b) * b of two bf16 patterns, exactly (Fractions),
    rounded by MPFR (tests.oracle.round_exact) in ``mode``: their patterns."""
    from tests.oracle import pattern_of, round_exact
    a, b = (Fraction(float(v)) for v in sf.decode(np.array([p, q], np.uint16), fmt))
    n = (a / b).__floor__()
    out = []
    for value, negative in ((Fraction(n), (a < 0) != (b < 0)), (a - n * b, b < 0)):
        e = round_exact(abs(value), negative, fmt, mode)
        out.append(pattern_of(e.value, e.negative, fmt))
    return out


@pytest.mark.parametrize("mode", ["nearest_even", "toward_zero", "upward", "downward"])
def test_divmod_bf16_is_the_exact_floor_and_remainder_rounded_once(mode):
    """bf16 pairs far apart in scale (-1e-30 % 1000: mod + y is no float64 sum, the lanes
    Fast2Sum sends to the format's addition) and near (exact in float64): each result is
    the exact floor quotient and remainder rounded once, per MPFR (flags: the test below,
    against the general path)."""
    rng = np.random.default_rng(zlib.crc32(mode.encode()))
    v = rng.standard_normal(400) * np.exp2(rng.integers(-60, 60, 400))
    w = rng.standard_normal(400) * np.exp2(rng.integers(-60, 60, 400))
    x, y = sf.asarray(v, "bf16"), sf.asarray(w, "bf16")
    with sf.context(rounding=mode):
        q, r = np.divmod(x, y)
    for i in range(x.size):
        eq, er = _exact_divmod(int(x.bits[i]), int(y.bits[i]), sf.bf16, mode)
        assert (int(q.bits[i]), int(r.bits[i])) == (eq, er), (i, float(x[i]), float(y[i]))


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp32", "fp64", "fp8_e4m3"])
@pytest.mark.parametrize("mode", ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd",
                                  "stochastic"])
def test_divmod_shortcut_is_the_general_path(fmt, mode):
    """The fused divmod and remainder's Fast2Sum lanes against the definitions with every
    shortcut off (softfloat._fastpaths.ENABLED): the same bits and per-element flags, in
    every mode (stochastic: the same draws, in the same order)."""
    from tests.fastpath_checks import general
    from softfloat import _array_elementwise as ew
    from softfloat._context import get_context
    f = getattr(sf, fmt)
    rng = np.random.default_rng(zlib.crc32((fmt + mode).encode()))
    v = rng.standard_normal(300) * np.exp2(rng.integers(-40, 40, 300))
    w = rng.standard_normal(300) * np.exp2(rng.integers(-40, 40, 300))
    a = np.asarray(sf.encode(np.r_[v, 0.0, -0.0, np.inf, np.nan, 1.0], f, saturate=True), f.storage_dtype)
    b = np.asarray(sf.encode(np.r_[w, 1.0, -3.0, 2.0, 1.0, 0.0], f, saturate=True), f.storage_dtype)

    def run(kernel):
        with sf.context(rounding=mode, rng=5):
            return kernel(f, get_context(), a, b)
    for kernel in (ew.UFUNCS[np.divmod], ew.UFUNCS[np.remainder]):
        fast, slow = run(kernel), general(lambda: run(kernel))
        for got, want in zip(fast[0] if isinstance(fast[0], tuple) else [fast[0]],
                             slow[0] if isinstance(slow[0], tuple) else [slow[0]]):
            np.testing.assert_array_equal(got, want)
        for (name, m1), (_, m0) in zip(fast[1], slow[1]):
            assert np.array_equal(np.asarray(m1), np.asarray(m0)), name
    with sf.context(rounding=mode, rng=5):  # (one context: stochastic rounding's draws in order)
        separate = ew.UFUNCS[np.floor_divide](f, get_context(), a, b), ew.UFUNCS[np.remainder](f, get_context(), a, b)
    fused = run(ew.UFUNCS[np.divmod])
    np.testing.assert_array_equal(fused[0][0], separate[0][0])
    np.testing.assert_array_equal(fused[0][1], separate[1][0])
    for (name, m1), (_, m0) in zip(fused[1], separate[0][1] | separate[1][1]):
        assert np.array_equal(np.asarray(m1), np.asarray(m0)), name


def test_fp16_values_by_cast_are_the_codecs_for_every_pattern():
    """The division family reads fp16 operands by numpy's float16 -> float64 cast: the same
    float64 bits as codec.decode for all 65,536 patterns (NaN payloads, signalling NaNs)."""
    from softfloat import _array_elementwise as ew
    bits = np.arange(1 << 16, dtype=np.uint16)
    (cast,) = ew._values(sf.fp16, bits)
    decoded = np.asarray(sf.decode(bits, "fp16"), dtype=np.float64)
    np.testing.assert_array_equal(cast.view(np.uint64), decoded.view(np.uint64))


@pytest.mark.parametrize("tininess", ["before", "after"])
def test_rounded_once_short_fp16_is_the_codecs_rounding(tininess):
    """rounded_once's short fp16 lane (the codec's own block cast, its layers skipped)
    against the general route (shortcuts off): the same bits and per-element flags, for
    values at the overflow and underflow thresholds, ties, and with a NaN or infinity
    among them (the lane declines those)."""
    from tests.fastpath_checks import general
    from softfloat._array_libm import rounded_once
    from softfloat._context import get_context
    rng = np.random.default_rng(zlib.crc32(tininess.encode()))
    values = rng.standard_normal(500) * np.exp2(rng.integers(-30, 18, 500))
    edges = [65504.0, 65520.0, 65519.99, 2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26, 2.0 ** -14 * (1 - 2.0 ** -12),
             1 + 2.0 ** -11, 0.0, -0.0]
    for vals in (np.r_[values, edges], np.r_[values, np.inf], np.r_[values, np.nan]):
        for shape in ((vals.size,), (2, vals.size // 2) if vals.size % 2 == 0 else (vals.size,)):
            v = vals.reshape(shape)

            def run():
                with sf.context(tininess=tininess):
                    return rounded_once(sf.fp16, get_context(), v, [v])
            fast, slow = run(), general(run)
            np.testing.assert_array_equal(fast[0], slow[0])
            for (name, m1), (_, m0) in zip(fast[1], slow[1]):
                assert type(m1) is type(m0) and np.array_equal(m1, m0), name


# ---- bad arguments numpy refuses, which the Array took silently -------------------------
def _numpy_error(call, h):
    with pytest.raises((TypeError, ValueError)) as numpy_says:
        call(h)
    return numpy_says.type


@pytest.mark.parametrize("name, call", [
    ("round decimals=1.5", lambda a: np.round(a, 1.5)),                          # rounded at 10**1.5
    ("partition kth out of range", lambda a: np.partition(a, 6)),              # a full sort
    ("partition kth below -n", lambda a: np.partition(a, -7)),
    ("argpartition kth out of range", lambda a: np.argpartition(a, [1, 9])),
    ("partition float kth", lambda a: np.partition(a, 1.0)),
    ("ndarray.partition kth", lambda a: a.partition(10)),
    ("where with x only", lambda a: np.where(a > 1, a)),                       # x must be ... got None
    ("piecewise with too many functions", lambda a: np.piecewise(a, [a > 1], [1.0, 2.0, 3.0])),  # extra ignored
    ("norm with a string ord", lambda a: np.linalg.norm(a, "bad")),            # "takes powers through libm"
])
def test_bad_arguments_raise_numpys_error_class(name, call):
    """Each call raised nothing (or a misleading error) on an Array where numpy float16
    raises: np.round(x, 1.5) rounded at a scale of 10**1.5, np.partition with an
    out-of-range kth sorted, np.piecewise ignored a third function, np.where(c, x)
    complained that y=None is no number.  Now the same exception class as numpy's (the
    oracle), its message naming the function."""
    h = np.arange(6.0, dtype=np.float16)[::-1].copy()
    expected = _numpy_error(call, h)
    # (round's decimals and partition's kth are checked by softfloat._validate, whose
    # messages name the argument)
    with pytest.raises(expected, match=r"numpy\.(round|partition|argpartition|where|piecewise|linalg\.norm)"
                                       r"|^(kth|decimals)[ =]"):
        call(sf.asarray(h, "fp16"))
    x = sf.asarray(h, "fp16")  # the valid neighbours still work, as numpy's
    assert np.round(x, np.int64(1)).tolist() == np.round(h, 1).tolist()
    assert np.partition(x, -6).tolist() == np.sort(h).tolist()
    assert np.piecewise(x, [x > 1], [1.0, 2.0]).tolist() == np.piecewise(h, [h > 1], [1.0, 2.0]).tolist()


@pytest.mark.parametrize("call", [lambda a: np.sort(a, kind="bogus"), lambda a: np.argsort(a, kind="x"),
                                  lambda a: a.sort(order="f"), lambda a: np.sort(a, kind="stable", stable=True),
                                  lambda a: float(a), lambda a: int(a)])
def test_sort_keywords_and_scalar_conversion_raise_as_numpy(call):
    """np.sort/np.argsort took any kind= (every sort here is the stable one) and order= on
    an array without fields; float(x) of several elements raised item()'s ValueError where
    numpy raises TypeError.  Oracle: the exception class numpy float16 raises."""
    h = np.array([2.0, -0.0, 1.0], np.float16)
    with pytest.raises(_numpy_error(call, h.copy())):
        call(sf.asarray(h, "fp16"))
    x = sf.asarray(h, "fp16")
    assert np.sort(x, kind="q").tolist() == np.sort(h, kind="stable").tolist() and float(x[0]) == 2.0


def test_trapezoid_x_of_another_length_names_trapezoid():
    """np.trapezoid(y, x=x) with len(x) != len(y) raised a broadcasting error from inside
    the operations ("operands could not be broadcast together: a(2,), b(15,)"); numpy float16
    raises ValueError too (the oracle), now naming the function and the two lengths."""
    h = np.arange(16.0, dtype=np.float16)
    with pytest.raises(_numpy_error(lambda a: np.trapezoid(a, x=np.arange(3.0)), h)):
        np.trapezoid(h, x=np.arange(3.0))
    with pytest.raises(ValueError, match=r"numpy\.trapezoid: x has 3 points and y 16 along axis -1"):
        np.trapezoid(sf.asarray(h, "fp16"), x=np.arange(3.0))
    x = np.arange(16.0)  # (the right length: the sum of the exact integer steps, as numpy's)
    assert np.trapezoid(sf.asarray(h, "fp16"), x=x).item() == float(np.trapezoid(h, x=x)) == 112.5
