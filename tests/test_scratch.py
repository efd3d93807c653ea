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
