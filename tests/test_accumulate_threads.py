"""A reduction's tiles on several threads (softfloat.accumulate.reduce.THREADED_WORK and
the streaming workers) give the bits, flags and swamped counts of one thread, in every
kind of arithmetic: the native fast plans, the general IEEE path, the fused tensor-core
model, stochastic rounding (draws by position), and with an initial value c."""

from __future__ import annotations

import numpy as np
import pytest

import softfloat as sf
from softfloat.accumulate import reduce


@pytest.fixture
def threaded(monkeypatch):
    """Every reduction threaded, however small (tiles of 64 outputs: many per call)."""
    monkeypatch.setattr(reduce, "THREADED_WORK", 0)
    monkeypatch.setattr(reduce, "BLOCK_SIZE", 64)
    previous = sf.set_workers(1)
    yield
    sf.set_workers(previous)


def _both(call):
    sf.set_workers(1)
    one = call()
    sf.set_workers(3)
    many = call()
    sf.set_workers(1)
    return one, many


def _same(one, many):
    if isinstance(one, tuple):
        assert np.array_equal(one[0], many[0])
        for name in sf.FLAG_NAMES + ("swamped",):
            x, y = getattr(one[1], name, None), getattr(many[1], name, None)
            if x is None and isinstance(one[1], np.ndarray):  # return_flags="swamped": an array
                x, y = one[1], many[1]
            assert np.array_equal(np.asarray(x), np.asarray(y)), name
    else:
        assert np.array_equal(one, many)


@pytest.mark.parametrize("fmt, options", [
    ("bf16", dict(accumulator="fp32")),
    ("fp16", dict(accumulator="fp16")),
    ("bf16", dict(accumulator="bf16", rounding="toward_zero")),
    ("fp16", dict(accumulator="fp32", rounding="stochastic", rng=5)),
    ("fp8_e4m3", dict(accumulator="h100")),
    ("fp8_e4m3", dict(accumulator="h100", block=16)),
    ("fp16", dict(accumulator="v100")),
    ("bf16", dict(accumulator="fp32", order="pairwise")),
    ("fp8_e5m2", dict(accumulator="fp16", product="fp16")),
])
@pytest.mark.parametrize("flags", [False, True, "swamped"])
def test_matmul_threads_equal_one_thread(threaded, fmt, options, flags):
    rng = np.random.default_rng(7)
    a = sf.encode(rng.standard_normal((2, 24, 40)) * 2.0 ** rng.integers(-6, 7, (2, 24, 40)), fmt, saturate=True)
    b = sf.encode(rng.standard_normal((40, 30)), fmt, saturate=True)
    a[0, 3, :] = sf.encode(np.nan, fmt) if sf.as_format(fmt).has_nan else a[0, 3, :]
    c = sf.encode(rng.standard_normal((24, 30)), "fp32")
    for extra in ({}, {"c": c}):
        if extra and options.get("accumulator") not in ("fp32", "h100", "v100"):
            continue
        call = lambda: sf.matmul(a, b, fmt, out_format="fp32", return_flags=flags, **options, **extra)  # noqa: E731
        _same(*_both(call))


@pytest.mark.parametrize("flags", [False, True])
def test_sum_and_vecdot_threads_equal_one_thread(threaded, flags):
    rng = np.random.default_rng(8)
    x = sf.encode(rng.standard_normal((300, 50)), "fp16")
    y = sf.encode(rng.standard_normal((300, 50)), "fp16")
    _same(*_both(lambda: sf.sum(x, "fp16", axis=0, return_flags=flags)))
    _same(*_both(lambda: sf.sum(x, "fp16", axis=0, accumulator="bf16", rounding="stochastic", rng=3,
                               return_flags=flags)))
    _same(*_both(lambda: sf.vecdot(x.T, y.T, "fp16", accumulator="fp32", return_flags=flags)))
