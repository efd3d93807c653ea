"""Scale: every core (workers=) and dask arrays give the same bits and flags as one thread
in memory, whatever the block size, worker count or chunks -- stochastic rounding too."""

from __future__ import annotations

import threading
import tracemalloc

import numpy as np
import pytest

import importlib

import softfloat as sf
import softfloat._blocks as blocks
import softfloat.codec
import softfloat.ops._driver
from softfloat._random import Positions, bits_at, key_from

da = pytest.importorskip("dask.array")
convert_module = importlib.import_module("softfloat.ops.convert")  # softfloat.ops.convert is the function

MODES = [r.value for r in sf.Rounding]
FORMATS = ["fp16", "bf16", "e4m3"]


def _values(n=20_000, seed=0, dtype=np.float64):
    """Wide-range values with zeros, subnormals of every format, NaNs and infinities."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * np.exp2(rng.integers(-140, 140, n))
    x[::97] = 0.0
    x[1::89] = np.inf
    x[2::83] = -np.inf
    x[3::79] = np.nan
    x[4::71] = -x[4::71]
    return _cast(x, dtype)


def _cast(x, dtype):
    with np.errstate(over="ignore"):  # beyond float32: infinities, on purpose
        return x.astype(dtype)


def _same_flags(f, g):
    return all(np.array_equal(np.asarray(a), np.asarray(b)) for (_, a), (_, b) in zip(f, g))


# ---- the random stream ----------------------------------------------------------------
def test_random_bits_are_splitmix64():
    # SplitMix64's published outputs for seed 0 (Vigna's splitmix64.c reference values)
    assert [hex(b) for b in bits_at(0, np.arange(3, dtype=np.uint64))] == [
        "0xe220a8397b1dcdaf", "0x6e789e6aa1b965f4", "0x6c45d188009454f"]


@pytest.mark.parametrize("full, offsets, shape", [
    ((10,), (3,), (5,)),
    ((6, 7), (2, 0), (3, 7)),  # whole rows: one contiguous run
    ((6, 7), (1, 2), (4, 3)),
    ((3, 4, 5), (1, 1, 2), (2, 3, 2)),
    ((), (), ()),
])
def test_positions_are_the_elements_flat_indices_in_the_whole(full, offsets, shape):
    expected = np.arange(int(np.prod(full)), dtype=np.uint64).reshape(full)[
        tuple(slice(o, o + s) for o, s in zip(offsets, shape))].reshape(-1)
    p = Positions(shape, offsets, full)
    n = expected.size
    for start, stop in [(0, n), (0, n // 2), (n // 3, n)]:
        assert np.array_equal(p.take(start, stop), expected[start:stop])


@pytest.mark.parametrize("positions", [Positions(), Positions((4, 6), (2, 3), (10, 12)),
                                       Positions((3, 12), (5, 0), (10, 12))])
def test_bits_written_into_buffers_are_the_bits_at_the_positions(positions):
    from softfloat._random import bits_at, bits_into
    n = 24 if positions.shape else 5000
    for start, stop in [(0, n), (1, n - 3), (n // 2, n)]:
        out, tmp = np.empty(stop - start, np.uint64), np.empty(stop - start, np.uint64)
        bits_into(np.uint64(0xDEADBEEF), positions, start, stop, out, tmp)
        assert np.array_equal(out, bits_at(np.uint64(0xDEADBEEF), positions.take(start, stop)))


def test_a_scalar_takes_the_bits_of_element_zero():
    for seed in range(20):
        x = 1 + seed * 2.0**-20
        assert sf.encode(x, "bf16", "stochastic", rng=seed) == sf.encode([x], "bf16", "stochastic", rng=seed)[0]


def test_a_generator_advances_by_one_draw_per_call():
    g, h = np.random.default_rng(3), np.random.default_rng(3)
    x = _values(100)
    sf.encode(x, "bf16", "stochastic", rng=g)
    key_from(h)
    assert g.bit_generator.state == h.bit_generator.state


# ---- workers and block sizes ----------------------------------------------------------
@pytest.fixture
def counted_threads(monkeypatch):
    """Record the threads that ran blocks, so a test can see that several did."""
    seen = set()
    real = blocks.stream_blocks

    def spy(n, block_size, key, flags, block, **kw):
        def wrapped(*args):
            seen.add(threading.get_ident())
            return block(*args)
        return real(n, block_size, key, flags, wrapped, **kw)

    for module in (softfloat.codec, softfloat.ops._driver, convert_module):
        monkeypatch.setattr(module, "stream_blocks", spy)
    return seen


def _set_block(monkeypatch, size):
    monkeypatch.setattr(softfloat._fastpaths, "BLOCK_FACTOR", 2)  # fast-path blocks 2x the size
    monkeypatch.setattr(softfloat._fastpaths, "TRUNCATING_BLOCK_FACTOR", 2)
    monkeypatch.setattr(softfloat.codec, "_BLOCK", size)
    monkeypatch.setattr(softfloat.codec, "_THREAD_BLOCK", size)
    monkeypatch.setattr(softfloat.ops._driver, "OPS_BLOCK_SIZE", size)
    monkeypatch.setattr(softfloat.ops._driver, "OPS_THREAD_BLOCK_SIZE", size)
    monkeypatch.setattr(convert_module, "BLOCK_SIZE", size)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_encode_and_quantize_are_independent_of_workers_and_blocks(mode, fmt, monkeypatch, counted_threads):
    x = _values(30_000)
    x32 = _cast(x, np.float32)
    reference = {}
    for block in (1000, 4096, 1 << 14):
        _set_block(monkeypatch, block)
        for workers in (1, 2, 3):
            got = (sf.encode(x, fmt, mode, rng=11, return_flags=True, workers=workers),
                   sf.quantize(x32, fmt, mode, rng=12, return_flags=True, workers=workers))
            if not reference:
                reference["r"] = got
                continue
            for (bits, flags), (ref_bits, ref_flags) in zip(got, reference["r"]):
                assert np.array_equal(bits, ref_bits, equal_nan=bits.dtype.kind == "f"), (block, workers)
                assert _same_flags(flags, ref_flags), (block, workers)
    assert len(counted_threads) >= 3  # the pool really ran blocks on several threads


@pytest.mark.parametrize("mode", MODES)
def test_operations_are_independent_of_workers_and_blocks(mode, monkeypatch):
    a = sf.encode(_values(12_000, 1), "bf16")
    b = sf.encode(_values(12_000, 2), "bf16")
    c = sf.encode(_values(12_000, 3), "bf16")
    calls = [lambda w: sf.add(a, b, "bf16", mode, rng=1, return_flags=True, workers=w),
             lambda w: sf.mul(a, b, "bf16", mode, rng=2, return_flags=True, workers=w),
             lambda w: sf.fma(a, b, c, "bf16", mode, rng=3, return_flags=True, workers=w),
             lambda w: sf.div(a, b, "bf16", mode, rng=4, return_flags=True, workers=w),
             lambda w: sf.sqrt(a, "bf16", mode, rng=5, return_flags=True, workers=w),
             lambda w: sf.convert(a, "bf16", "e4m3", mode, rng=6, return_flags=True, workers=w),
             lambda w: sf.round_to_integral(a, "bf16", mode, rng=7, return_flags=True, workers=w)]
    _set_block(monkeypatch, 1 << 14)
    reference = [call(1) for call in calls]
    for block, workers in [(1000, 2), (999, 3), (4096, 3)]:
        _set_block(monkeypatch, block)
        for call, (ref_bits, ref_flags) in zip(calls, reference):
            bits, flags = call(workers)
            assert np.array_equal(bits, ref_bits) and _same_flags(flags, ref_flags), (block, workers)


def test_decode_is_independent_of_workers(monkeypatch):
    bits = np.arange(1 << 16, dtype=np.uint16)
    _set_block(monkeypatch, 1000)
    one = sf.decode(bits, "fp16", workers=1)
    assert np.array_equal(sf.decode(bits, "fp16", workers=3).view(np.uint64), one.view(np.uint64))
    assert np.array_equal(one[:0x7C00], bits[:0x7C00].view(np.float16).astype(np.float64))  # numpy's oracle


def test_stochastic_stays_unbiased_with_threads():
    # 1 + 2**-10 lies 1/8 of an ulp above bf16's 1 (its next value is 1 + 2**-7)
    x = np.full(200_000, 1 + 2.0**-10)
    up = sf.encode(x, "bf16", "stochastic", rng=5, workers=3) == sf.encode(1 + 2.0**-7, "bf16")
    share = up.mean()
    assert abs(share - 1 / 8) < 5 * np.sqrt(1 / 8 * 7 / 8 / x.size)


def test_small_arrays_stay_on_the_calling_thread(monkeypatch):
    def no_pool(*args, **kwargs):
        raise AssertionError("a thread pool was started for a small array")

    monkeypatch.setattr(blocks, "ThreadPoolExecutor", no_pool)
    assert sf.encode(np.ones(1000), "fp16", workers=8).tolist() == [0x3C00] * 1000


@pytest.mark.parametrize("n, workers, sizes", [
    (1000, 1, {100}),  # one thread: the block size
    (1000, 2, {250}),  # threads: the thread block size
    (400, 2, {100}),  # too few thread blocks for two threads: one thread, small blocks
])
def test_threads_take_the_thread_block_size(n, workers, sizes):
    seen = []

    def block(start, stop, rand, ws):
        seen.append((start, stop))

    blocks.stream_blocks(n, 100, None, None, block, workers=workers, thread_block_size=250)
    assert {stop - start for start, stop in seen} == sizes
    assert sorted(seen)[0][0] == 0 and sorted(seen)[-1][1] == n
    assert sum(stop - start for start, stop in seen) == n


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_workers_must_be_a_positive_int_or_none(bad):
    for call in (lambda: sf.encode([1.0], "fp16", workers=bad), lambda: sf.decode([0], "fp16", workers=bad),
                 lambda: sf.add(0, 0, "fp16", workers=bad), lambda: sf.set_workers(bad)):
        with pytest.raises(ValueError, match="workers must be a positive int or None"):
            call()


def test_set_workers_is_the_default_of_workers_none():
    previous = sf.set_workers(3)
    try:
        assert sf.get_workers() == 3
        assert sf.set_workers(None) == 3
        assert sf.get_workers() == blocks.cpu_count()
    finally:
        sf.set_workers(previous)


def test_an_error_in_a_worker_reaches_the_caller():
    with pytest.raises(ValueError, match="does not fit the format's 8 bits"):
        sf.add(np.full(100_000, 0x100), 0, "e4m3", workers=2)


# ---- dask -----------------------------------------------------------------------------
CHUNKINGS = [(7, 130), (25, 400), (50, 400)]


@pytest.mark.parametrize("chunks", CHUNKINGS)
@pytest.mark.parametrize("mode", ["nearest_even", "stochastic", "toward_zero", "odd"])
def test_dask_codec_equals_in_memory(chunks, mode):
    x = _values(50 * 400, 4).reshape(50, 400)
    lazy_x = da.from_array(x, chunks=chunks)
    bits, flags = sf.encode(lazy_x, "bf16", mode, rng=7, return_flags=True)
    assert isinstance(bits, da.Array) and isinstance(flags.inexact, da.Array)
    ref_bits, ref_flags = sf.encode(x, "bf16", mode, rng=7, return_flags=True)
    assert np.array_equal(bits.compute(), ref_bits)
    assert _same_flags([(n, m.compute()) for n, m in flags], ref_flags)
    assert flags.count() == ref_flags.count() and flags.summary() == ref_flags.summary()
    q = sf.quantize(da.from_array(_cast(x, np.float32), chunks=chunks), "e4m3", mode, rng=8)
    assert q.dtype == np.float32
    assert np.array_equal(q.compute(), sf.quantize(_cast(x, np.float32), "e4m3", mode, rng=8), equal_nan=True)
    values = sf.decode(da.from_array(ref_bits, chunks=chunks), "bf16")
    assert np.array_equal(values.compute(), sf.decode(ref_bits, "bf16"), equal_nan=True)


@pytest.mark.parametrize("chunks", CHUNKINGS)
@pytest.mark.parametrize("mode", ["nearest_even", "stochastic", "upward"])
def test_dask_operations_equal_in_memory(chunks, mode):
    a = sf.encode(_values(50 * 400, 5).reshape(50, 400), "fp16")
    b = sf.encode(_values(400, 6), "fp16")  # numpy, broadcast along the rows
    c = sf.encode(_values(50 * 400, 7).reshape(50, 400), "fp16")
    lazy_a, lazy_c = da.from_array(a, chunks=chunks), da.from_array(c, chunks=(50, 50))
    for op, args, lazy_args in [(sf.add, (a, b), (lazy_a, b)), (sf.mul, (a, b), (lazy_a, b)),
                                (sf.fma, (a, b, c), (lazy_a, b, lazy_c))]:
        got_bits, got_flags = op(*lazy_args, "fp16", mode, rng=9, return_flags=True)
        ref_bits, ref_flags = op(*args, "fp16", mode, rng=9, return_flags=True)
        assert isinstance(got_bits, da.Array)
        assert np.array_equal(got_bits.compute(), ref_bits), op.__name__
        assert got_flags.count() == ref_flags.count(), op.__name__
        assert np.array_equal(got_flags.mask().compute(), ref_flags.mask()), op.__name__


@pytest.mark.parametrize("kw", [
    {}, dict(accumulator="fp16"), dict(accumulator="fp16", out_format="fp32"), dict(out_format="fp16"),
    dict(order="pairwise"), dict(order="reverse"), dict(accumulator="h100"), dict(block=7, accumulator="fp16"),
    dict(rounding="stochastic", rng=5), dict(rounding="stochastic", rng=5, accumulator="bf16", order="pairwise"),
    dict(rounding="upward", c=np.uint32(0x3F800000)), dict(product="bf16", accumulator="bf16"),
])
def test_dask_matmul_equals_in_memory_for_any_chunks(kw):
    rng = np.random.default_rng(1)
    a = sf.encode(rng.standard_normal((30, 50)) * 100, "fp16")
    b = sf.encode(rng.standard_normal((50, 20)), "fp16")
    ref_bits, ref_flags = sf.matmul(a, b, "fp16", return_flags=True, **kw)
    for a_chunks, b_chunks in [((10, 17), (11, 6)), ((4, 50), (13, 20))]:
        bits, flags = sf.matmul(da.from_array(a, chunks=a_chunks), da.from_array(b, chunks=b_chunks), "fp16",
                                return_flags=True, **kw)
        assert isinstance(bits, da.Array)
        assert np.array_equal(bits.compute(), ref_bits), (kw, a_chunks)
        assert flags.count() == ref_flags.count(), (kw, a_chunks)
        assert np.array_equal(flags.swamped.compute(), ref_flags.swamped), (kw, a_chunks)


@pytest.mark.parametrize("kw", [
    {}, dict(axis=1), dict(axis=(0, 2), keepdims=True), dict(accumulator="fp32", out_format="bf16"),
    dict(rounding="stochastic", rng=3, axis=1), dict(axis=1, c=np.uint16(0x3F80)), dict(order="pairwise", axis=2),
])
def test_dask_sum_equals_in_memory_for_any_chunks(kw):
    x = sf.encode(np.random.default_rng(2).standard_normal((6, 40, 5)), "bf16")
    ref_bits, ref_flags = sf.sum(x, "bf16", return_flags=True, **kw)
    for chunks in [(4, 9, 2), (3, 20, 5)]:
        bits, flags = sf.sum(da.from_array(x, chunks=chunks), "bf16", return_flags=True, **kw)
        assert np.array_equal(bits.compute(), ref_bits) and np.shape(bits) == np.shape(ref_bits), (kw, chunks)
        assert flags.summary() == ref_flags.summary(), (kw, chunks)


def test_dask_vecdot_and_batched_matmul_equal_in_memory():
    rng = np.random.default_rng(3)
    x = sf.encode(rng.standard_normal((6, 40, 5)), "e4m3")
    assert np.array_equal(sf.vecdot(da.from_array(x, chunks=(4, 9, 2)), x, "e4m3", axis=1).compute(),
                          sf.vecdot(x, x, "e4m3", axis=1))
    A = sf.encode(rng.standard_normal((3, 4, 10)), "fp16")
    B = sf.encode(rng.standard_normal((10, 5)), "fp16")
    v = sf.encode(rng.standard_normal(10), "fp16")
    for p, q in [(A, B), (v, B), (A, v), (v, v)]:
        got = sf.matmul(da.from_array(p, chunks=3), q, "fp16").compute()
        ref = sf.matmul(p, q, "fp16")
        assert got.shape == np.shape(ref) and np.array_equal(got, ref)


def test_lazy_flags_summary_runs_each_chunk_once(monkeypatch):
    runs = []
    real = softfloat.codec._stream

    def counting(*args, **kwargs):
        runs.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(softfloat.codec, "_stream", counting)
    x = da.from_array(_values(10_000), chunks=1000)
    _, flags = sf.encode(x, "fp16", return_flags=True)
    assert runs == []  # lazy
    text = flags.summary()
    assert len(runs) == 10
    assert text == sf.encode(_values(10_000), "fp16", return_flags=True)[1].summary()


def test_dask_inputs_are_checked_before_anything_runs():
    with pytest.raises(TypeError, match="x has dtype complex128"):
        sf.encode(da.zeros(4, dtype=complex), "fp16")
    with pytest.raises(TypeError, match="bits must have an integer dtype"):
        sf.decode(da.zeros(4), "fp16")
    with pytest.raises(TypeError, match="a must have an integer dtype"):
        sf.add(da.zeros(4), 0, "fp16")
    with pytest.raises(ValueError, match="order='random' is not valid"):
        sf.sum(da.zeros(4, dtype=np.uint16), "fp16", order="random")
    with pytest.raises(ValueError, match="the contracted lengths must match"):
        sf.matmul(da.zeros((2, 3), dtype=np.uint16), da.zeros((4, 2), dtype=np.uint16), "fp16")
    lazy = sf.decode(da.from_array(np.array([0x3C00, 0x1FFFF])), "fp16")  # checked when computed
    with pytest.raises(ValueError, match="does not fit the format's 16 bits"):
        lazy.compute()


def test_stochastic_on_a_distributed_cluster_equals_in_memory():
    distributed = pytest.importorskip("distributed")
    x = _values(40_000, 8, np.float32)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        lazy = sf.encode(da.from_array(x, chunks=7_000), "bf16", "stochastic", rng=7)
        got = client.compute(lazy).result()
        a = sf.encode(x[:1000], "fp16")
        summed = client.compute(sf.sum(da.from_array(a, chunks=300), "fp16", accumulator="fp16")).result()
    assert np.array_equal(got, sf.encode(x, "bf16", "stochastic", rng=7))
    assert summed == sf.sum(a, "fp16", accumulator="fp16")


def test_out_of_core_quantisation_makes_no_full_size_temporary(tmp_path):
    n = 1 << 21  # 8 MB of float32; a float64 copy would be 16 MB, the bf16 output 4 MB
    src, dst = tmp_path / "w.npy", tmp_path / "w_bf16.npy"
    np.save(src, np.random.default_rng(0).standard_normal(n).astype(np.float32))
    da.store(sf.encode(da.ones(10, chunks=5), "bf16"), np.empty(10, np.uint16))  # imports done before
    tracemalloc.start()
    try:
        x = sf.from_npy(src, chunks=1 << 16)
        bits = sf.encode(x, "bf16")
        out = np.lib.format.open_memmap(dst, mode="w+", dtype=bits.dtype, shape=bits.shape)
        da.store(bits, out)
        out.flush()
        del out
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < n * 2, f"peak {peak} bytes"  # a few chunks: less than even the whole output
    stored, values = np.load(dst), np.load(src)
    import ml_dtypes  # the independent oracle for round-to-nearest-even

    assert np.array_equal(stored, values.astype(ml_dtypes.bfloat16).view(np.uint16))


def test_dask_predicates_fields_and_exact_operations_equal_in_memory():
    b = np.arange(1 << 16, dtype=np.uint16)  # every fp16 pattern
    c = b[::-1].copy()
    lazy_b, lazy_c = da.from_array(b, chunks=5000), da.from_array(c, chunks=7000)
    unary = [lambda x: sf.classify(x, "fp16"), lambda x: sf.is_nan(x, "fp16"), lambda x: sf.is_subnormal(x, "fp16"),
             lambda x: sf.neg(x, "fp16"), lambda x: sf.next_up(x, "fp16"), lambda x: sf.next_down(x, "fp16"),
             lambda x: sf.ulp(x, "fp16")]
    binary = [lambda x, y: sf.lt(x, y, "fp16"), lambda x, y: sf.maximum(x, y, "fp16"),
              lambda x, y: sf.total_order(x, y, "fp16"), lambda x, y: sf.copysign(x, y, "fp16"),
              lambda x, y: sf.unordered(x, y, "fp16")]
    for f in unary:
        got = f(lazy_b)
        assert isinstance(got, da.Array) and np.array_equal(got.compute(), f(b))
    for f in binary:
        got = f(lazy_b, lazy_c)
        assert isinstance(got, da.Array) and np.array_equal(got.compute(), f(b, c))
    got, flags = sf.lt(lazy_b, lazy_c, "fp16", signaling=True, return_flags=True)
    ref, ref_flags = sf.lt(b, c, "fp16", signaling=True, return_flags=True)
    assert np.array_equal(got.compute(), ref) and flags.count() == ref_flags.count()
    parts = sf.fields(lazy_b, "fp16")
    assert all(np.array_equal(p.compute(), q) for p, q in zip(parts, sf.fields(b, "fp16")))
    assert np.array_equal(sf.compose(*parts, "fp16").compute(), b)
    with pytest.raises(TypeError, match="signaling must be True or False"):
        sf.lt(lazy_b, lazy_c, "fp16", signaling=3)  # checked before anything is computed


def test_from_npy_refuses_what_is_not_a_npy_file(tmp_path):
    with pytest.raises(TypeError, match="path must be a str or os.PathLike"):
        sf.from_npy(3)
    with pytest.raises(ValueError, match="path must name a readable .npy file"):
        sf.from_npy(tmp_path / "missing.npy")
    np.savez(tmp_path / "a.npz", x=np.ones(3))
    with pytest.raises(ValueError, match="is not one"):
        sf.from_npy(tmp_path / "a.npz")


def test_from_npy_reads_the_file_as_it_is_for_any_chunks(tmp_path):
    x = np.random.default_rng(1).standard_normal((37, 11)).astype(np.float64)
    np.save(tmp_path / "x.npy", x)
    for chunks in ((5, 11), (37, 3), "auto"):
        lazy = sf.from_npy(tmp_path / "x.npy", chunks=chunks)
        assert lazy.dtype == x.dtype and lazy.shape == x.shape
        assert np.array_equal(lazy.compute(), x)
