""".npy files in and out of dask: softfloat.from_npy (each chunk maps only its own span of
the file) and softfloat.to_npy (each chunk task writes its own bytes; correct on every
scheduler, a distributed cluster included).  Work is bounded by bytes and counts."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import softfloat as sf
import softfloat.npy as npy

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")


def _values(shape, dtype=np.float32, seed=1):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.fixture
def mapped(monkeypatch):
    """The (offset, bytes) of every memory map from_npy's chunks open."""
    spans, real = [], np.memmap

    def counting(f, dtype, mode, offset, shape):
        spans.append((offset, int(np.prod(shape)) * np.dtype(dtype).itemsize))
        return real(f, dtype=dtype, mode=mode, offset=offset, shape=shape)

    monkeypatch.setattr(npy.np, "memmap", counting)
    return spans


# ---------------------------------------------------------------------------------------
# from_npy: task names
# ---------------------------------------------------------------------------------------
def test_two_chunkings_of_one_file_concatenate(tmp_path):
    x = _values((37, 11))
    np.save(tmp_path / "x.npy", x)
    a = sf.from_npy(tmp_path / "x.npy", chunks=(5, 4))
    b = sf.from_npy(tmp_path / "x.npy", chunks=(7, 11))
    assert a.name != b.name
    both = da.concatenate([a, b])
    assert both.shape == (74, 11)
    assert np.array_equal(both.compute(), np.concatenate([x, x]))
    assert np.array_equal((a - b).compute(), np.zeros_like(x))  # aligned elementwise too


def test_same_file_and_chunks_give_the_same_name_and_a_new_file_a_new_one(tmp_path):
    path = tmp_path / "x.npy"
    np.save(path, _values(10))
    first = sf.from_npy(path, chunks=4)
    assert sf.from_npy(str(path), chunks=(4, 4, 2)).name == first.name  # chunks compared normalised
    np.save(path, _values(12))
    second = sf.from_npy(path, chunks=4)
    assert second.name != first.name and second.shape == (12,)


def test_a_chunk_of_a_rewritten_file_is_refused(tmp_path):
    path = tmp_path / "x.npy"
    np.save(path, _values(10))
    stale = sf.from_npy(path, chunks=5)
    np.save(path, _values(20, np.float64))  # another size, another layout
    with pytest.raises(OSError, match="changed after from_npy read its header"):
        stale.compute()


# ---------------------------------------------------------------------------------------
# from_npy: each chunk maps its own bytes
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("chunks", [(5, 11), (37, 3), (4, 5), (1, 1), "auto"])
def test_any_chunks_of_either_order_read_the_file_as_it_is(tmp_path, order, chunks):
    x = _values((37, 11), np.float64)
    np.save(tmp_path / "x.npy", np.asarray(x, order=order))
    lazy = sf.from_npy(tmp_path / "x.npy", chunks=chunks)
    assert np.array_equal(lazy.compute(), x)
    assert np.array_equal(lazy[3:30:4, ::-3].compute(), x[3:30:4, ::-3])


def test_other_dtypes_and_ranks(tmp_path):
    cases = [np.arange(24, dtype=">i4").reshape(2, 3, 4), np.float16(2.5) * np.ones(()),
             np.zeros((0, 3), np.uint16), np.arange(7, dtype=np.uint8)]
    for i, x in enumerate(cases):
        np.save(tmp_path / f"{i}.npy", x)
        lazy = sf.from_npy(tmp_path / f"{i}.npy", chunks=2 if x.ndim else ())
        got = lazy.compute()
        assert got.dtype == x.dtype and np.array_equal(got, x)


@pytest.mark.parametrize("order", ["C", "F"])
def test_the_chunk_source_takes_numpy_keys(tmp_path, order):
    """dask fuses slicing into the chunk reads; whatever key comes, the source answers as
    numpy would (ints, slices with steps, integer arrays and 1-D masks map their box)."""
    x = _values((9, 7, 5), np.float64)
    np.save(tmp_path / "x.npy", np.asarray(x, order=order))
    lazy = sf.from_npy(tmp_path / "x.npy", chunks=(4, 7, 5))
    source = next(v for v in dict(lazy.__dask_graph__()).values() if isinstance(v, npy._NpyChunks))
    keys = [(), 3, -1, (slice(None), 2), (slice(1, 8, 3), slice(None, None, -2), 4), ([1, 5, 2],),
            ([1, -2], slice(2, 5), [0, 4]), (np.array([True, False] * 4 + [True]),), (slice(None), [], 2),
            (slice(5, 2),), (Ellipsis, 1), (None, 2), (2, [3, 1], slice(None)), (np.array([[1, 2], [3, 4]]), 0)]
    for key in keys:
        got, want = source[key], x[key]
        assert got.shape == want.shape and np.array_equal(got, want), key
    with pytest.raises(IndexError):
        source[9]
    assert np.array_equal(lazy[[8, 0, 3], 1:3].compute(), x[[8, 0, 3], 1:3])


def test_each_chunk_maps_only_its_rows(tmp_path, mapped):
    x = _values((64, 32))  # rows of 128 bytes
    np.save(tmp_path / "x.npy", x)
    lazy = sf.from_npy(tmp_path / "x.npy", chunks=(8, 32))
    assert np.array_equal(lazy.compute(scheduler="synchronous"), x)
    assert len(mapped) == 8
    assert all(size == 8 * 128 for _, size in mapped)  # one chunk's rows, not the file's 8 KiB
    assert sorted(offset for offset, _ in mapped) == [128 + 1024 * i for i in range(8)]  # header: 128


def test_a_chunk_of_part_of_a_row_maps_from_its_first_to_its_last_element(tmp_path, mapped):
    x = _values((4, 1000))
    np.save(tmp_path / "x.npy", x)
    lazy = sf.from_npy(tmp_path / "x.npy", chunks=(1, 10))
    assert np.array_equal(lazy[2, 500:510].compute(scheduler="synchronous"), x[2, 500:510])
    assert mapped == [(128 + (2 * 1000 + 500) * 4, 10 * 4)]
    mapped.clear()
    assert np.array_equal(sf.from_npy(tmp_path / "x.npy", chunks=(2, 10))[:2, :10].compute(), x[:2, :10])
    assert mapped == [(128, (1000 + 10) * 4)]  # rows 0 and 1: the span between them too


def test_a_file_larger_than_the_address_space_limit_reads_chunk_by_chunk(tmp_path):
    pytest.importorskip("resource")  # POSIX: the subprocess sets RLIMIT_AS
    if not os.path.exists("/proc/self/status"):
        pytest.skip("needs /proc/self/status (Linux) to read the process's address space")
    path = tmp_path / "big.npy"
    rows, cols = 1 << 13, 1 << 14  # 512 MiB of float32, sparse: only a header and one row written
    header = npy._header(np.dtype(np.float32), (rows, cols))
    with open(path, "wb") as f:
        f.write(header)
        f.truncate(len(header) + rows * cols * 4)
        f.seek(len(header) + (rows - 1) * cols * 4)
        f.write(np.arange(cols, dtype=np.float32).tobytes())
    if os.stat(path).st_blocks * 512 > 1 << 24:
        pytest.skip("this file system does not make sparse files")
    script = textwrap.dedent(f"""
        import resource
        import numpy as np, dask, dask.array, softfloat as sf
        x = sf.from_npy({str(path)!r}, chunks=(64, {cols}))  # 4 MiB chunks
        vm = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status")
                  if line.startswith("VmSize:"))
        limit = vm + (160 << 20)  # far less than the 512 MiB file
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
        try:
            np.load({str(path)!r}, mmap_mode="r")  # the whole file: beyond the limit
        except (OSError, MemoryError, ValueError):
            pass
        else:
            raise SystemExit("the limit did not bind: mapping the whole file worked")
        total = float(x.sum(dtype=np.float64).compute(scheduler="synchronous"))
        last = x[-1, :5].compute(scheduler="synchronous").tolist()
        print(total, last)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.split() == [str(float(sum(range(cols)))), "[0.0,", "1.0,", "2.0,", "3.0,", "4.0]"]


@pytest.mark.parametrize(("error", "kind", "words"), [
    (OSError(errno.ENOMEM, "Cannot allocate memory"), OSError, "out of address space or memory"),
    (MemoryError(), MemoryError, "out of address space or memory"),
    (OSError(errno.EACCES, "Permission denied"), PermissionError, "Permission denied"),
])
def test_a_failed_map_is_reported_as_what_it_is(tmp_path, monkeypatch, error, kind, words):
    np.save(tmp_path / "x.npy", _values(100))
    lazy = sf.from_npy(tmp_path / "x.npy", chunks=50)

    def refuse(*args, **kwargs):
        raise error

    monkeypatch.setattr(npy.np, "memmap", refuse)
    with pytest.raises(kind) as info:
        lazy.compute(scheduler="synchronous")
    message = str(info.value)
    assert words in message and "x.npy" in message and "one chunk" in message, message
    assert "not a readable .npy" not in message


# ---------------------------------------------------------------------------------------
# from_npy: what is not a whole .npy file
# ---------------------------------------------------------------------------------------
def test_a_truncated_file_is_refused_before_anything_is_mapped(tmp_path, mapped):
    path = tmp_path / "x.npy"
    np.save(path, _values((10, 10)))  # 400 bytes of data after a 128-byte header
    with open(path, "r+b") as f:
        f.truncate(128 + 250)
    with pytest.raises(ValueError) as info:
        sf.from_npy(path)
    message = str(info.value)
    assert "truncated" in message and "400 bytes" in message and "only 250 bytes" in message, message
    assert mapped == []


def test_what_is_not_a_npy_file(tmp_path):
    with pytest.raises(TypeError, match=r"path must be a str or os.PathLike naming a .npy file; got 3 \(int\)"):
        sf.from_npy(3)
    with pytest.raises(ValueError, match="path must name a readable .npy file; .* No such file"):
        sf.from_npy(tmp_path / "missing.npy")
    (tmp_path / "t.npy").write_text("hello")
    with pytest.raises(ValueError, match="path must name a readable .npy file; .*magic string"):
        sf.from_npy(tmp_path / "t.npy")
    np.savez(tmp_path / "a.npz", x=np.ones(3))
    with pytest.raises(ValueError, match="is not one .*npz"):
        sf.from_npy(tmp_path / "a.npz")
    np.save(tmp_path / "o.npy", np.array([1, "a"], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="Python objects .*allow_pickle=True"):
        sf.from_npy(tmp_path / "o.npy")


def _npy_with_header(path, header: str) -> None:
    """A version 1.0 .npy file whose header dict is ``header`` (padded as numpy pads it)."""
    text = header.encode("latin1")
    text += b" " * (-(10 + len(text) + 1) % 64) + b"\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text + bytes(64))


def test_from_npy_reads_headers_with_the_checkpoint_readers_strict_parser(tmp_path):
    """One .npy header parser (softfloat._read_numpy's): every field checked, no code run."""
    _npy_with_header(tmp_path / "neg.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (-4,), }")
    with pytest.raises(ValueError, match="path must name a readable .npy file; .*non-negative"):
        sf.from_npy(tmp_path / "neg.npy")
    _npy_with_header(tmp_path / "call.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (len('ab'),), }")
    with pytest.raises(ValueError, match="path must name a readable .npy file; .*not a Python dict literal"):
        sf.from_npy(tmp_path / "call.npy")
    _npy_with_header(tmp_path / "order.npy", "{'descr': '<f4', 'fortran_order': 1, 'shape': (4,), }")
    with pytest.raises(ValueError, match="fortran_order 1 is not a bool"):
        sf.from_npy(tmp_path / "order.npy")
    _npy_with_header(tmp_path / "ok.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }")
    assert sf.from_npy(tmp_path / "ok.npy").compute().tolist() == [0.0] * 4
    ml_dtypes = pytest.importorskip("ml_dtypes")
    np.save(tmp_path / "e5m2.npy", np.zeros(3, dtype=ml_dtypes.float8_e5m2))  # saved as '<f1'
    with pytest.raises(ValueError, match="float8_e5m2"):
        sf.from_npy(tmp_path / "e5m2.npy")


# ---------------------------------------------------------------------------------------
# to_npy
# ---------------------------------------------------------------------------------------
def _stochastic_case(tmp_path, chunks=(16, 24)):
    src = tmp_path / "w.npy"
    np.save(src, _values((50, 70)))
    bits = sf.encode(sf.from_npy(src, chunks=chunks), "bf16", "stochastic", rng=7)
    return src, bits, sf.encode(np.load(src), "bf16", "stochastic", rng=7)


@pytest.mark.parametrize("scheduler", ["threads", "synchronous", "processes"])
def test_to_npy_on_local_schedulers_equals_in_memory(tmp_path, scheduler):
    src, bits, expected = _stochastic_case(tmp_path)
    with dask.config.set(scheduler=scheduler):
        sf.to_npy(bits, tmp_path / "w_bf16.npy")
    got = np.load(tmp_path / "w_bf16.npy")
    assert got.dtype == np.uint16 and np.array_equal(got, expected)
    assert sorted(os.listdir(tmp_path)) == ["w.npy", "w_bf16.npy"]  # no temporary file left


def test_to_npy_on_a_distributed_cluster_equals_in_memory(tmp_path):
    distributed = pytest.importorskip("distributed")
    src, bits, expected = _stochastic_case(tmp_path)
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        sf.to_npy(bits, tmp_path / "w_bf16.npy")
        # the recipe to_npy replaces: each worker writes its own copy of the memory map
        memmap = np.lib.format.open_memmap(tmp_path / "memmap.npy", mode="w+", dtype=bits.dtype,
                                           shape=bits.shape)
        da.store(bits, memmap, lock=False)
    assert np.array_equal(np.load(tmp_path / "w_bf16.npy"), expected)
    assert not np.load(tmp_path / "memmap.npy").any()  # why: the file stayed all zeros


@pytest.mark.parametrize("chunks", [(50, 70), (1, 70), (50, 1), (7, 9), (3, 70)])
def test_to_npy_writes_every_block_shape(tmp_path, chunks):
    x = _values((50, 70), np.float64)
    sf.to_npy(da.from_array(x, chunks=chunks), tmp_path / "x.npy")
    assert np.array_equal(np.load(tmp_path / "x.npy"), x)


def test_to_npy_takes_arrays_of_any_rank_and_dtype(tmp_path):
    path = tmp_path / "x.npy"
    cases = [np.arange(60, dtype=">i4").reshape(3, 4, 5), np.float16(1.5), np.zeros((0, 4)),
             np.asfortranarray(_values((5, 6))), [[1, 2], [3, 4]]]
    for x in cases:
        for given in (x, da.from_array(np.asarray(x), chunks=2)):
            sf.to_npy(given, path)
            got, want = np.load(path), np.asarray(x)
            assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)


def test_to_npy_onto_the_file_it_reads(tmp_path):
    path = tmp_path / "w.npy"
    x = _values((30, 8))
    np.save(path, x)
    lazy = sf.from_npy(path, chunks=(7, 8))
    sf.to_npy(sf.encode(lazy, "bf16"), path)  # every chunk is read before the file is replaced
    assert np.array_equal(np.load(path), sf.encode(x, "bf16"))
    with pytest.raises(OSError, match="changed after from_npy"):
        lazy.compute()


def test_a_failed_to_npy_leaves_the_target_as_it_was(tmp_path):
    path = tmp_path / "w.npy"
    np.save(path, np.ones(3))

    def fail(block, block_info=None):
        if block_info[None]["chunk-location"] == (2,):
            raise RuntimeError("chunk 2 failed")
        return block

    bad = da.from_array(np.arange(10.0), chunks=3).map_blocks(fail, dtype=np.float64)
    with pytest.raises(RuntimeError, match="chunk 2 failed"):
        sf.to_npy(bad, path)
    assert np.array_equal(np.load(path), np.ones(3))
    assert os.listdir(tmp_path) == ["w.npy"]


def test_to_npy_refuses_chunks_it_cannot_place_or_would_unmask(tmp_path):
    x = da.from_array(np.arange(10.0), chunks=4)
    with pytest.raises(ValueError, match=r"unknown chunk sizes .*compute_chunk_sizes\(\)"):
        sf.to_npy(x[x > 3], tmp_path / "x.npy")
    masked = x.map_blocks(lambda b: np.ma.masked_greater(b, 5), dtype=np.float64)
    with pytest.raises(TypeError, match=r"bits \(a chunk\) is a numpy.ma.MaskedArray"):
        sf.to_npy(masked, tmp_path / "x.npy", overwrite=False)
    assert os.listdir(tmp_path) == []


def test_to_npy_refuses(tmp_path):
    path = tmp_path / "w.npy"
    np.save(path, np.ones(3))
    with pytest.raises(FileExistsError, match="overwrite=False"):
        sf.to_npy(np.zeros(3), path, overwrite=False)
    assert np.array_equal(np.load(path), np.ones(3))
    sf.to_npy(np.zeros(3), tmp_path / "new.npy", overwrite=False)
    assert np.array_equal(np.load(tmp_path / "new.npy"), np.zeros(3))
    with pytest.raises(TypeError, match="overwrite must be True or False"):
        sf.to_npy(np.zeros(3), path, overwrite="yes")
    with pytest.raises(TypeError, match="path must be a str or os.PathLike naming the .npy file to write"):
        sf.to_npy(np.zeros(3), 3)
    with pytest.raises(TypeError, match="bits has dtype object"):
        sf.to_npy(np.array([1, None], dtype=object), path)
    with pytest.raises(TypeError, match=r"bits is a numpy.ma.MaskedArray.*bits.filled"):
        sf.to_npy(np.ma.masked_array([1, 2], mask=[0, 1]), path)
    with pytest.raises(FileNotFoundError):
        sf.to_npy(np.zeros(3), tmp_path / "no" / "such" / "dir.npy")
    with pytest.raises(IsADirectoryError, match="is a directory"):
        sf.to_npy(np.zeros(3), tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["new.npy", "w.npy"]
