"""softfloat._scratch: buffers kept per thread and name, and no result lives in one."""

from __future__ import annotations

import threading

import numpy as np

import softfloat as sf
from softfloat import _scratch
from softfloat.training._numerics import bits_of, round_to


def test_a_name_reuses_its_memory_in_one_thread():
    a = _scratch.buffer("test-a", np.float32, 1000)
    b = _scratch.buffer("test-a", np.float32, 500)  # smaller: the same memory
    assert np.shares_memory(a, b) and b.size == 500
    c = _scratch.buffer("test-a", np.float64, 500)  # another dtype: another buffer
    assert not np.shares_memory(a, c)
    d = _scratch.buffer("test-b", np.float32, 500)
    assert not np.shares_memory(a, d)


def test_threads_never_share_a_buffer():
    mine = _scratch.buffer("test-thread", np.uint8, 64)
    theirs = []
    t = threading.Thread(target=lambda: theirs.append(_scratch.buffer("test-thread", np.uint8, 64)))
    t.start()
    t.join()
    assert not np.shares_memory(mine, theirs[0])


def test_large_requests_are_not_kept():
    n = _scratch.MAX_BYTES // 8 + 1
    a = _scratch.buffer("test-big", np.float64, n)
    assert not np.shares_memory(a, _scratch.buffer("test-big", np.float64, n))


def _patterns(fmt, shape, seed):
    rng = np.random.default_rng(seed)
    return sf.encode(rng.standard_normal(shape) * 2.0 ** rng.integers(-20, 10, shape), fmt)


def test_results_do_not_live_in_scratch():
    # a second call reuses the scratch buffers: the first call's results must not change
    a, b = _patterns("fp16", (40, 300), 1), _patterns("fp16", (300, 50), 2)
    c, d = _patterns("fp16", (40, 300), 3), _patterns("fp16", (300, 50), 4)
    x, y = np.asarray(sf.decode(a, "fp16"), np.float32), np.asarray(sf.decode(c, "fp16"), np.float32)
    calls = [
        (lambda p, q: sf.matmul(p, q, "fp16"), (a, b), (c, d)),
        (lambda p, q: sf.matmul(p, q, "fp16", c=sf.encode(np.ones((40, 50)), "fp32")), (a, b), (c, d)),
        (lambda p: sf.sum(p, "fp16", axis=0, accumulator="fp32"), (a,), (c,)),
        (lambda p, q: sf.vecdot(p, q, "fp16", axis=0), (a, a), (c, c)),
        (lambda p: round_to(p, sf.fp16), (x * 3,), (y * 5,)),
        (lambda p: bits_of(p, sf.fp16), (x,), (y,)),
    ]
    for fn, first, second in calls:
        r1 = fn(*first)
        kept = np.array(r1, copy=True)
        fn(*second)
        assert np.array_equal(np.asarray(r1), kept, equal_nan=True)


def test_the_pool_takes_back_only_buffers_nothing_else_uses():
    def give_back(box):  # as a Workspace does: the caller keeps no reference
        _scratch.give_back(box.pop() for _ in range(len(box)))
    free = [_scratch.borrow(np.uint32, 12345)]
    free_id = id(free[0])
    give_back(free)
    assert id(_scratch.borrow(np.uint32, 12345)) == free_id  # taken back, handed out again
    seen = [_scratch.borrow(np.uint32, 12345)]
    view = seen[0][:10]
    give_back(seen)  # still seen through ``view``: kept out of the pool
    assert not np.shares_memory(_scratch.borrow(np.uint32, 12345), view)


def test_codec_and_operation_results_do_not_live_in_pooled_workspaces():
    x = np.random.default_rng(5).standard_normal(1 << 16) * 2.0 ** np.arange(-40, 24).repeat(1 << 10)
    y = x[::-1].copy()
    calls = [
        lambda v: sf.encode(v, "fp16", return_flags=True),
        lambda v: sf.encode(v.astype(np.float32), "bf16", "upward", return_flags=True),
        lambda v: sf.quantize(v, "fp8_e4m3", "odd"),
        lambda v: sf.decode(sf.encode(v, "fp16"), "fp16", np.float32),
        lambda v: sf.add(sf.encode(v, "bf16"), sf.encode(v[::-1], "bf16"), "bf16", return_flags=True),
        lambda v: sf.sub(sf.encode(v, "fp16"), sf.encode(v[::-1], "fp16"), "fp16"),
        lambda v: sf.mul(sf.encode(v, "fp64"), sf.encode(v[::-1], "fp64"), "fp64", "upward"),
        lambda v: sf.div(sf.encode(v, "fp32"), sf.encode(v[::-1], "fp32"), "fp32", return_flags=True),
        lambda v: sf.sqrt(sf.encode(np.abs(v), "bf16"), "bf16"),
        lambda v: sf.fma(*(sf.encode(w, "fp64") for w in (v, v[::-1], v * 3)), "fp64", "downward"),
        # the rounding point's significand path: stochastic (with zero sums), fp64, a
        # nearly exact low part (div), and 64-bit integers
        lambda v: sf.add(sf.encode(v, "bf16"), sf.encode(-v, "bf16"), "bf16", "stochastic", rng=4),
        lambda v: sf.add(sf.encode(v, "fp64"), sf.encode(v[::-1] * 1e-17, "fp64"), "fp64", "stochastic",
                         rng=5, return_flags=True),
        lambda v: sf.div(sf.encode(v, "fp64"), sf.encode(v[::-1], "fp64"), "fp64", "toward_zero", return_flags=True),
        lambda v: sf.encode((v * 2.0**30).astype(np.int64) * 12345, "fp32", "upward", return_flags=True),
    ]

    def same(parts, kept):
        for got, want in zip(parts, kept):
            if isinstance(got, sf.Flags):
                assert all(np.array_equal(np.asarray(m), np.asarray(w)) for (_, m), (_, w) in zip(got, want.item()))
            else:
                assert np.array_equal(got, want, equal_nan=True)

    for fn in calls:
        first = fn(x)
        parts = first if isinstance(first, tuple) else (first,)
        kept = [np.array(part, copy=True) for part in parts]
        fn(y)  # the same sizes: the pool hands the first call's workspaces out again
        same(parts, kept)
        again = fn(x)  # and in buffers another call has written: the same bits
        same(again if isinstance(again, tuple) else (again,), kept)
