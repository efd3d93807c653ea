"""Numerical users' numpy programs on Arrays, round 3: what a probe of real programs found
missing or wrong, each checked against numpy float16/float32 or ml_dtypes (never the code
under test restated)."""

from __future__ import annotations

import zlib

import ml_dtypes
import numpy as np
import pytest

import softfloat as sf


def _values(seed: str, shape, scale=3.0):
    return np.random.default_rng(zlib.crc32(seed.encode())).standard_normal(shape) * scale


@pytest.mark.skipif(not hasattr(np, "cumulative_sum"), reason="numpy >= 2.1")
def test_cumulative_sum_and_prod_are_cumsum_and_cumprod_with_the_initial_value():
    """The array API's np.cumulative_sum / np.cumulative_prod (numpy >= 2.1) raised numpy's
    'no implementation found'; they are cumsum / cumprod along the axis."""
    h = _values("cumulative", (3, 5)).astype(np.float16)
    x = sf.asarray(h, "fp16")
    with sf.context(accumulator="fp16"):  # running sums in fp16: numpy float16's own chain
        for axis in (0, 1, -1):
            for initial in (False, True):
                got = np.cumulative_sum(x, axis=axis, include_initial=initial)
                assert isinstance(got, sf.Array) and got.format == sf.fp16
                np.testing.assert_array_equal(got.bits, np.cumulative_sum(h, axis=axis, include_initial=initial)
                                              .view(np.uint16))
    # the default accumulator (fp32): numpy float32's running sums, each rounded to float16
    expected = np.cumulative_sum(h.astype(np.float32), axis=1, include_initial=True).astype(np.float16)
    np.testing.assert_array_equal(np.cumulative_sum(x, axis=1, include_initial=True).bits, expected.view(np.uint16))
    small = h[:, :3] / 2
    got = np.cumulative_prod(sf.asarray(small, "fp16"), axis=1, include_initial=True)
    np.testing.assert_array_equal(got.bits, np.cumulative_prod(small, axis=1, include_initial=True).view(np.uint16))
    b = small[0].astype(ml_dtypes.bfloat16)  # bf16 products are exact in float32: one rounding
    running = [ml_dtypes.bfloat16(1.0)]
    for t in b:
        running.append(ml_dtypes.bfloat16(np.float32(running[-1]) * np.float32(t)))
    got = np.cumulative_prod(sf.asarray(b, "bf16"), include_initial=True)
    np.testing.assert_array_equal(got.bits, np.array(running, dtype=ml_dtypes.bfloat16).view(np.uint16))
    assert np.cumulative_sum(x[0, 0]).shape == (1,)  # a 0-d Array counts as 1-d, as numpy's
    with pytest.raises(ValueError, match="axis= is required"):
        np.cumulative_sum(x)


@pytest.mark.skipif(not hasattr(np, "astype"), reason="numpy >= 2.1")
def test_np_astype_is_the_method():
    h = _values("astype", 6).astype(np.float16)
    x = sf.asarray(h, "fp16")
    got = np.astype(x, "bf16")
    np.testing.assert_array_equal(got.bits, h.astype(np.float32).astype(ml_dtypes.bfloat16).view(np.uint16))
    np.testing.assert_array_equal(np.astype(x, np.int16), h.astype(np.int16))
    assert np.astype(x, "fp16", copy=False) is x and np.astype(x, "fp16") is not x
    with pytest.raises(ValueError, match="device="):
        np.astype(x, "fp16", device="cuda")


def _scalar_oracle(values, dtype, f):
    """f on each element as a numpy/ml_dtypes scalar of ``dtype`` with constants of that
    dtype (numpy float16's scalar + - * / round correctly; bfloat16's go through float32,
    which holds every + - * / of two bfloat16 values to within one rounding, innocuously)."""
    k = dtype.type if hasattr(dtype, "type") else dtype
    return np.array([f(k(v), k) for v in values], dtype=dtype)


@pytest.mark.parametrize("fmt, dtype", [("fp16", np.float16), ("bf16", ml_dtypes.bfloat16)])
def test_vectorize_runs_the_function_on_emulated_elements(fmt, dtype):
    """np.vectorize took np.asarray(x, dtype=object): Python floats, so the function ran in
    float64 and rounded once at the end (0.1 * a + 1/3 in float64, not step by step).  Now
    each element is a 0-d Array, as iteration gives, and every step rounds in the format;
    numpy gathers the results in a plain ndarray of their exact values."""
    h = _values(f"vectorize-{fmt}", 9).astype(dtype)
    x = sf.asarray(h, fmt)

    def f(a, k=float):
        return a * k(0.1) + k(1 / 3) if a > k(0) else -a / k(3)

    got = np.vectorize(f)(x)
    expected = _scalar_oracle(h, np.dtype(dtype), f)
    assert type(got) is np.ndarray
    np.testing.assert_array_equal(sf.asarray(got, fmt).bits, expected.view(np.uint16))
    objects = np.asarray(x, dtype=object)
    assert objects.shape == x.shape and all(isinstance(e, sf.Array) and e.format == x.format for e in objects)
    objects[0][...] = 7.0  # the elements are copies, as x[0] is
    assert x.bits[0] == h.view(np.uint16)[0]
    with sf.context() as ctx:
        np.vectorize(lambda a: a / 3)(sf.asarray([1.0], fmt))
    assert ctx.flags.inexact >= 1  # the division was emulated, and counted
    results = np.frompyfunc(f, 1, 1)(x)  # a ufunc of object loops: f on 0-d Arrays too
    assert results.dtype == object and all(isinstance(r, sf.Array) for r in results)
    np.testing.assert_array_equal([r.bits for r in results], expected.view(np.uint16))


def test_nditer_and_numpy_polynomial_classes_leave_emulation_as_documented():
    """As softfloat._array_coverage.OUTSIDE_DISPATCH says: np.nditer reads a copy (its
    readwrite writes are lost; the index spelling writes), a numpy.polynomial class called
    on an Array gives a plain float64 ndarray, and polyval at the mapped argument keeps the
    Array, equal to Horner's rule in numpy float16 with the coefficients rounded once."""
    h = _values("nditer", (2, 3)).astype(np.float16)
    x = sf.asarray(h, "fp16")
    assert [float(t) for t in np.nditer(x)] == h.ravel().tolist()
    with np.nditer(x, op_flags=["readwrite"]) as it:
        for t in it:
            t[...] = 0.0
    np.testing.assert_array_equal(x.bits, h.view(np.uint16))  # lost, as documented
    for i in np.ndindex(x.shape):
        x[i] = x[i] * 3
    np.testing.assert_array_equal(x.bits, (h * np.float16(3)).view(np.uint16))
    p = np.polynomial.Chebyshev([0.5, -1.25, 0.3], domain=[-4, 4])
    assert type(p(x)) is np.ndarray and p(x).dtype == np.float64
    off, scl = p.mapparms()
    got = np.polynomial.chebyshev.chebval(off + scl * x, p.coef)
    assert isinstance(got, sf.Array) and got.format == sf.fp16
    # numpy's chebval for three coefficients c (float64): c0 = c[0] - c[2] (two numpy
    # scalars: float64), c1 = c[1] + c[2] * (2 * t), then c0 + c1 * t; in float16, every
    # float64 scalar rounded once where it meets the float16 array
    c, f16 = p.coef, np.float16
    t = f16(off) + f16(scl) * (h * f16(3))
    expected = f16(c[0] - c[2]) + (f16(c[1]) + f16(c[2]) * (t + t)) * t
    np.testing.assert_array_equal(got.bits, expected.view(np.uint16))
    fitted = np.polynomial.polynomial.polyfit(np.arange(4.0), sf.asarray([1.0, 2.5, 3.75, 4.0], "bf16"), 1)
    assert type(fitted) is np.ndarray and fitted.dtype == np.float64


def test_like_constructors_with_a_float_dtype_give_arrays_of_that_format():
    """A master-weights program: ``acc = np.zeros_like(w, dtype=np.float32)`` then
    ``acc += g`` for fp16 gradients.  The float dtype gave a plain float32 ndarray, and
    ``acc += g`` then rounded every sum into fp16 (the Array's format; the ndarray a weak
    operand) before storing it in float32; ``dtype='bf16'`` raised numpy's 'data type not
    understood'.  A float dtype now names the format, as ``Array.astype`` reads it."""
    grads = _values("master-weights", (6, 5), scale=1e-3).astype(np.float16)
    w = sf.asarray(np.zeros(5), "fp16")
    acc = np.zeros_like(w, dtype=np.float32)
    expected = np.zeros(5, dtype=np.float32)
    for g in grads:
        acc += sf.asarray(g, "fp16")
        expected += g.astype(np.float32)  # numpy float32 + float16: float32, correctly rounded
    assert isinstance(acc, sf.Array) and acc.format == sf.fp32
    np.testing.assert_array_equal(acc.bits, expected.view(np.uint32))
    for dtype, oracle in (("bf16", ml_dtypes.bfloat16), (ml_dtypes.bfloat16, ml_dtypes.bfloat16),
                          ("f4", np.float32), (float, np.float64), (np.float16, np.float16)):
        got = np.full_like(w, np.pi, dtype=dtype)
        assert isinstance(got, sf.Array)
        np.testing.assert_array_equal(got.to_numpy(np.float64), np.full(5, np.pi).astype(oracle).astype(np.float64))
    assert type(np.ones_like(w, dtype=np.int8)) is np.ndarray and np.ones_like(w, dtype=bool).dtype == bool


def test_ml_dtypes_scalars_are_weak_operands_like_numpy_scalars():
    """``x + ml_dtypes.bfloat16(0.1)`` raised numpy's 'operand type(s) all returned
    NotImplemented' (an ml_dtypes scalar is an np.generic but no np.number), and
    ``sf.asarray(ml_dtypes.bfloat16(0.1), fmt)`` 'expected a float or integer dtype'; an
    ml_dtypes array was taken.  The scalar is now read exactly and rounded into the
    Array's format, as a numpy scalar is."""
    h = _values("ml-dtypes-scalar", 7).astype(np.float16)
    x = sf.asarray(h, "fp16")
    s = ml_dtypes.bfloat16(0.1)
    k = np.float16(np.float32(s))  # 0.10009765625: exact in float16
    np.testing.assert_array_equal((x + s).bits, (h + k).view(np.uint16))
    np.testing.assert_array_equal((s * x).bits, (k * h).view(np.uint16))
    b = h.astype(ml_dtypes.bfloat16)
    e = ml_dtypes.float8_e4m3fn(0.3)
    got = sf.asarray(b, "bf16") / e
    np.testing.assert_array_equal(got.bits, (b / ml_dtypes.bfloat16(np.float32(e))).view(np.uint16))
    assert sf.asarray(e, "fp16").tolist() == float(np.float32(e))


def test_numpy_dtype_strings_convert_as_their_types_do():
    """``np.round(x).astype('int64')`` (labels), ``(np.clip(x, 0, 1) * 255).astype('uint8')``
    (an image) and ``x.astype('f4')`` raised "'int64' is not a known format": only
    softfloat's names and numpy type objects were read.  numpy's strings now name what
    their types name, and a reduction's ``dtype=`` reads them (and ml_dtypes' types) alike."""
    h = _values("dtype-strings", 9).astype(np.float16)
    x = sf.asarray(h, "fp16")
    labels = np.round(x).astype("int64")
    assert type(labels) is np.ndarray and labels.dtype == np.int64
    np.testing.assert_array_equal(labels, np.round(h).astype("int64"))
    image = (np.clip(x, 0, 1) * 255).astype("uint8")
    np.testing.assert_array_equal(image, (np.clip(h, 0, 1) * np.float16(255)).astype("uint8"))
    for spelling, fmt in (("f4", sf.fp32), ("float", sf.fp64), ("d", sf.fp64), ("e", sf.fp16), ("float32", sf.fp32)):
        got = x.astype(spelling)
        assert isinstance(got, sf.Array) and got.format == fmt
        np.testing.assert_array_equal(got.to_numpy(np.float64), h.astype(spelling).astype(np.float64))
    for spelling in ("bool", "?", "i4", "int"):
        np.testing.assert_array_equal(x.astype(spelling), h.astype(spelling))
    assert np.sum(x, dtype=ml_dtypes.bfloat16).format == sf.bf16 and np.mean(x, dtype="f4").format == sf.fp32
    with pytest.raises(ValueError, match="complex64"):
        x.astype("complex64")
    with pytest.raises(ValueError, match="not a known format"):
        x.astype("bf17")


def test_a_list_of_arrays_given_to_numpy_leaves_emulation_as_documented():
    """As softfloat._array_coverage.OUTSIDE_DISPATCH says: numpy looks for Arrays among a
    function's array arguments, not inside a list, so np.array and np.mean of a list of
    bf16 Arrays are numpy's float32 results; np.stack keeps the Array, and its mean is
    the Array's (the float32 sum of the bf16 values divided in float32, rounded once to bf16)."""
    b = _values("list-of-arrays", 5).astype(ml_dtypes.bfloat16)
    losses = [sf.asarray(v, "bf16") for v in b]
    plain = np.array(losses)
    assert type(plain) is np.ndarray and plain.dtype == np.float32
    np.testing.assert_array_equal(plain, b.astype(np.float32))
    assert type(np.mean(losses)) is np.float32
    stacked = np.mean(np.stack(losses))
    assert isinstance(stacked, sf.Array) and stacked.format == sf.bf16
    total = np.float32(0)
    for v in b.astype(np.float32):
        total = np.float32(total + v)
    expected = np.float32(total / np.float32(len(b))).astype(ml_dtypes.bfloat16)
    assert stacked.bits == expected.view(np.uint16)


def test_masked_arrays_and_scipy_functions_leave_emulation_as_documented():
    """As softfloat._array_coverage.OUTSIDE_DISPATCH says: np.ma and scipy's functions read
    plain values (numpy's float32 for bf16), scipy.special's ufuncs are dispatched, and the
    Array's own spelling of a masked mean is the Array's mean of the selected elements."""
    b = np.array([1.5, np.nan, 1 / 3, -2.25, 0.7], dtype=ml_dtypes.bfloat16)
    x = sf.asarray(b, "bf16")
    masked = np.ma.masked_invalid(x)
    assert masked.data.dtype == np.float32 and not isinstance(masked.data, sf.Array)
    kept = np.nanmean(x)
    assert isinstance(kept, sf.Array) and kept.format == sf.bf16
    assert kept.bits == np.mean(x, where=~np.isnan(x)).bits
    special = pytest.importorskip("scipy.special")
    assert type(special.softmax(x)) is np.ndarray
    expit = special.expit(x)  # a ufunc: float64 libm, rounded once into bf16
    assert isinstance(expit, sf.Array) and expit.format == sf.bf16
    expected = special.expit(b.astype(np.float64)).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(expit.bits, expected.view(np.uint16))


def test_elements_hash_as_numpy_scalars_do():
    """``collections.Counter(np.round(x))`` and ``set(...)`` raised "unhashable type: 'Array'":
    an element of an Array is a 0-d Array, where an ndarray's is a hashable numpy scalar.
    An element now hashes as its value (equal to the float it equals); an Array with
    dimensions stays unhashable, as an ndarray."""
    import collections

    h = np.float16([1.4, 2.6, 1.6, -0.0, 0.0, 2.4, 7.5])
    x = sf.asarray(h, "fp16")
    counts = collections.Counter(np.round(x))
    assert {float(k): n for k, n in counts.items()} == {float(k): n for k, n in collections.Counter(np.round(h)).items()}
    assert x[0] in {float(h[0])} and float(h[0]) in {x[0]} and {x[6]: "a"}[7.5] == "a"
    with pytest.raises(TypeError, match="unhashable"):
        hash(x)


def _gradient_oracle(f, dx, edge_order, k):
    """numpy's non-uniform gradient formulas with numpy float16 steps (each correctly
    rounded); ``k`` rounds a coefficient once into float16 (float64 coordinates: numpy's
    float64 coefficient; float16 coordinates: already float16, every step rounded)."""
    dx1, dx2 = dx[:-1], dx[1:]
    a, b, c = k(-dx2 / (dx1 * (dx1 + dx2))), k((dx2 - dx1) / (dx1 * dx2)), k(dx1 / (dx2 * (dx1 + dx2)))
    interior = a * f[:-2] + b * f[1:-1] + c * f[2:]
    if edge_order == 1:
        first, last = (f[1] - f[0]) / k(dx[0]), (f[-1] - f[-2]) / k(dx[-1])
    else:
        d1, d2 = dx[0], dx[1]
        first = (k(-(2. * d1 + d2) / (d1 * (d1 + d2))) * f[0] + k((d1 + d2) / (d1 * d2)) * f[1]
                 + k(-d1 / (d2 * (d1 + d2))) * f[2])
        d1, d2 = dx[-2], dx[-1]
        last = (k(d2 / (d1 * (d1 + d2))) * f[-3] + k(-(d2 + d1) / (d1 * d2)) * f[-2]
                + k((2. * d2 + d1) / (d2 * (d1 + d2))) * f[-1])
    return np.concatenate([[first], interior, [last]]).astype(np.float16)


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_on_a_non_uniform_grid_is_numpys_formula_step_by_step(edge_order):
    """np.gradient(f, t) with coordinates t (a non-uniform grid) was refused; it is numpy's
    non-uniform formula: float64 coordinates give numpy's float64 coefficients, each
    rounded once into fp16 as an operand, then fp16 steps; fp16 Array coordinates round
    every step.  Coordinates of equal differences are numpy's uniform case."""
    rng = np.random.default_rng(zlib.crc32(b"gradient-grid"))
    f = rng.standard_normal(9).astype(np.float16)
    t = np.cumsum(rng.random(9) + 0.1)
    x = sf.asarray(f, "fp16")
    got = np.gradient(x, t, edge_order=edge_order)
    expected = _gradient_oracle(f, np.diff(t), edge_order, np.float16)
    np.testing.assert_array_equal(got.bits, expected.view(np.uint16))
    t16 = t.astype(np.float16)
    got = np.gradient(x, sf.asarray(t16, "fp16"), edge_order=edge_order)
    expected = _gradient_oracle(f, np.diff(t16), edge_order, lambda v: v)
    np.testing.assert_array_equal(got.bits, expected.view(np.uint16))
    from_list = np.gradient(f.tolist(), sf.asarray(t16, "fp16"), edge_order=edge_order)  # (the Array brings numpy)
    np.testing.assert_array_equal(from_list.bits, expected.view(np.uint16))
    assert np.array_equal(np.gradient(x, np.arange(9) * 0.5, edge_order=edge_order).bits,
                          np.gradient(x, 0.5, edge_order=edge_order).bits)
    m = sf.asarray(rng.standard_normal((3, 4)), "bf16")
    rows, cols = np.gradient(m, [0.0, 1.0, 3.0], np.arange(4.0))
    assert rows.format == cols.format == sf.bf16 and rows.shape == cols.shape == (3, 4)
    with pytest.raises(ValueError, match="must match the length"):
        np.gradient(x, t[:-1])


def _running(values):
    """A float32 sum left to right (numpy's add.accumulate: each addition correctly
    rounded) rounded once to float16: the default fp32 accumulator of fp16 sums."""
    return np.add.accumulate(values.astype(np.float32), axis=-1)[..., -1].astype(np.float16)


@pytest.mark.parametrize("ddof", [1, 0])
def test_weighted_covariance_is_numpys_weighted_steps(ddof):
    """np.cov(x, fweights=..., aweights=...) was refused; it is numpy's weighted algorithm
    step by step: w = fweights * aweights (numpy's float64), the weighted means and the
    weights' sum (np.average, returned=True), numpy's normalisation fact, then
    d @ (d * w).T / fact.  The oracle: numpy float16 steps, float32 running sums (the fp32
    accumulator; fp16 products are exact in float32) rounded once."""
    rng = np.random.default_rng(zlib.crc32(b"weighted-cov"))
    x16 = rng.standard_normal((3, 7)).astype(np.float16)
    fw, aw = rng.integers(1, 4, 7), rng.random(7)
    w = fw * aw  # float64, as numpy makes it
    w16 = w.astype(np.float16)  # a weak operand: rounded once where it meets fp16
    wsum = _running(w16)
    avg = _running(x16 * w16) / wsum
    fact = wsum if ddof == 0 else wsum - np.float16(ddof * np.sum(w * aw)) / wsum
    d = x16 - avg[:, None]
    dw = d * w16
    c = _running(d[:, None, :].astype(np.float32) * dw[None, :, :].astype(np.float32)) / fact
    got = np.cov(sf.asarray(x16, "fp16"), fweights=fw, aweights=aw, ddof=ddof)
    assert got.format == sf.fp16 and got.shape == (3, 3)
    np.testing.assert_array_equal(got.bits, c.view(np.uint16))
    only_f = np.cov(sf.asarray(x16, "fp16"), fweights=fw)  # fact = w_sum - ddof (ddof 1)
    np.testing.assert_allclose(only_f.to_numpy(np.float64), np.cov(x16.astype(np.float64), fweights=fw),
                               rtol=2 ** -6, atol=2 ** -9)
    with pytest.raises(TypeError, match="fweights must be integer"):
        np.cov(sf.asarray(x16, "fp16"), fweights=aw)
    with pytest.raises(ValueError, match="aweights cannot be negative"):
        np.cov(sf.asarray(x16, "fp16"), aweights=-aw)


def test_dtype_questions_get_answers_or_clear_refusals():
    """np.common_type(x) raised numpy's 'no implementation found'; it is refused with the
    reason, as np.result_type is.  np.isdtype takes numpy dtypes only (documented in
    OUTSIDE_DISPATCH), and the documented spellings answer."""
    x = sf.asarray([1.5, -2.25], "bf16")
    with pytest.raises(TypeError, match="dtype arithmetic"):
        np.common_type(x)
    if hasattr(np, "isdtype"):
        with pytest.raises(TypeError):
            np.isdtype(x.dtype, "real floating")
        assert np.isdtype(np.dtype(x.dtype), "real floating") and x.dtype.kind == "f"


def test_linspace_between_array_values_is_numpy_float16s_own():
    """``bins = np.linspace(x.min(), x.max(), 10)``: numpy hands the call over for the Array
    endpoints, and it raised 'no implementation found'.  numpy computes a float16 linspace
    in float16 (each step rounded): the oracle, bit for bit, as for logspace."""
    h = _values("linspace", 11).astype(np.float16)
    x = sf.asarray(h, "fp16")
    lo, hi = h.min(), h.max()
    for kwargs in ({"num": 10}, {"num": 7, "endpoint": False}, {"num": 1}, {"num": 0}, {"num": 2}, {"num": 3000}):
        got = np.linspace(x.min(), x.max(), **kwargs)
        assert isinstance(got, sf.Array) and got.format == sf.fp16
        np.testing.assert_array_equal(got.bits, np.linspace(lo, hi, **kwargs).view(np.uint16))
    got, step = np.linspace(x.min(), hi, 6, retstep=True)
    expected, expected_step = np.linspace(lo, hi, 6, retstep=True)
    assert step.bits == np.float16(expected_step).view(np.uint16)
    starts, stops = h[:2], h[2:4]
    got = np.linspace(sf.asarray(starts, "fp16"), sf.asarray(stops, "fp16"), 5, axis=1)
    np.testing.assert_array_equal(got.bits, np.linspace(starts, stops, 5, axis=1).view(np.uint16))
    np.testing.assert_array_equal(np.logspace(x[0], x[1], 4).bits, np.logspace(h[0], h[1], 4).view(np.uint16))
    counts, _ = np.histogram(x, bins=np.linspace(x.min(), x.max(), 5))
    np.testing.assert_array_equal(counts, np.histogram(h, bins=np.linspace(lo, hi, 5))[0])
    with pytest.raises(TypeError, match="geomspace"):
        np.geomspace(x[0] * 0 + 1, x.max(), 4)
    bf = ml_dtypes.bfloat16  # bf16: the same steps with ml_dtypes scalars (float32 inside, one rounding)
    a, b, n = bf(-2.25), bf(1.4), 9
    step = bf(np.float32(bf(np.float32(b) - np.float32(a))) / np.float32(bf(n - 1)))
    expected = [bf(np.float32(bf(np.float32(bf(i)) * np.float32(step))) + np.float32(a)) for i in range(n - 1)] + [b]
    got = np.linspace(sf.asarray(a, "bf16"), sf.asarray(b, "bf16"), n)
    np.testing.assert_array_equal(got.bits, np.array(expected, dtype=bf).view(np.uint16))


def test_copyto_and_full_like_into_plain_ndarrays_write_the_exact_values():
    """``np.full_like(np.zeros(3), x[0])`` raised "numpy.copyto ... not defined with
    casting='unsafe'" (numpy's full_like copies the fill value with copyto, and the Array
    value hands that call over).  Into a plain ndarray copyto writes the exact values with
    numpy's own cast and casting rule, as ``dst[...] = x`` does."""
    b = np.array([1.5, -2.25, 1 / 3], dtype=ml_dtypes.bfloat16)
    x = sf.asarray(b, "bf16")
    exact = b.astype(np.float64)
    np.testing.assert_array_equal(np.full_like(np.zeros(3), x[2]), np.full(3, exact[2]))
    np.testing.assert_array_equal(np.full_like(np.zeros(3, np.float16), x[2]), np.full(3, exact[2]).astype(np.float16))
    dst = np.zeros(3)
    np.copyto(dst, x, where=np.array([True, False, True]))
    np.testing.assert_array_equal(dst, np.where([True, False, True], exact, 0.0))
    with pytest.raises(TypeError, match="same_kind"):
        np.copyto(np.zeros(3, np.int64), x)  # numpy's rule, as for a float32 source


def test_an_array_in_a_secondary_argument_of_a_numpy_call():
    """numpy hands a call over when any argument is an Array: ``np.diff(x, prepend=x[0])``
    failed ('zero-dimensional arrays cannot be concatenated': numpy broadcasts a scalar
    prepend, x[0] too), and with a plain ndarray first (np.put/place/putmask/
    put_along_axis/fill_diagonal into an ndarray, np.quantile/percentile of an ndarray at
    Array probabilities, np.ediff1d of an ndarray with Array ends) the implementations
    read '.bits' of the ndarray (AttributeError).  Into an ndarray the Array's exact values
    are written with numpy's cast; the quantiles of ndarray data are numpy's; an ndarray
    joined to Arrays is weak (rounded into the Array's format), as in ``h - x``."""
    h16 = _values("secondary", 6).astype(np.float16)
    x = sf.asarray(h16, "fp16")
    np.testing.assert_array_equal(np.diff(x, prepend=x[0]).bits, np.diff(h16, prepend=h16[0]).view(np.uint16))
    np.testing.assert_array_equal(np.diff(x, append=x[-1]).bits, np.diff(h16, append=h16[-1]).view(np.uint16))
    h = np.linspace(0.1, 0.6, 6)
    mask = np.array([True, False] * 3)
    exact = h16.astype(np.float64)
    for func, args, numpy_args in ((np.put, ([0, 2], x[:2]), ([0, 2], exact[:2])),
                                   (np.place, (mask, x), (mask, exact)),
                                   (np.putmask, (mask, x), (mask, exact)),
                                   (np.put_along_axis, (np.array([1]), x[3], 0), (np.array([1]), exact[3], 0))):
        got, expected = h.copy(), h.copy()
        func(got, *args)
        func(expected, *numpy_args)
        np.testing.assert_array_equal(got, expected)
    square = np.zeros((2, 2))
    np.fill_diagonal(square, x[1])
    assert square.tolist() == [[exact[1], 0.0], [0.0, exact[1]]]
    q = sf.asarray([0.25, 0.5], "fp16")
    np.testing.assert_array_equal(np.quantile(h, q), np.quantile(h, [0.25, 0.5]))
    np.testing.assert_array_equal(np.percentile(h, q * 100), np.percentile(h, [25.0, 50.0]))
    got = np.ediff1d(h16.astype(np.float64), to_begin=x[0])
    assert got.format == sf.fp16
    np.testing.assert_array_equal(got.bits, np.ediff1d(h16, to_begin=h16[0]).view(np.uint16))
