"""A sum or dot product of one term into one output: softfloat.accumulate.reduce's
``_one_output`` hands it to ``softfloat.accumulate._few.one_output`` (numpy's arithmetic
in the accumulator's dtype), which must give the general path's bits, flags and swamped
count (every fast path switched off) -- for every fp16 and fp8 pattern, in accumulators
that hold the format and into narrower output formats (the one rounding)."""

from __future__ import annotations

import numpy as np
import pytest

import softfloat as sf
from tests.fastpath_checks import answers_of, assert_same, general


def _spy(monkeypatch):
    from softfloat.accumulate import _few
    return answers_of(monkeypatch, _few, "one_output")


def _assert_row(fast, rows, i, one):
    """``fast`` (a one-term call's answer) is row ``i`` of ``rows`` (the general path's
    answers of every term at once, one output per row): equal bits, flags and swamped
    count, of the types and shapes of ``one`` (the general path's own one-term answer)."""
    if isinstance(one, tuple):
        (fast, fast_flags), (rows, row_flags), (one, one_flags) = fast, rows, one
        assert type(fast_flags) is type(one_flags)
        for (name, a), (_, want), (_, ref) in zip(fast_flags, row_flags, one_flags):
            assert type(a) is type(ref) and np.shape(a) == np.shape(ref), name
            assert a == want[i], (name, i)
        assert fast_flags.swamped == row_flags.swamped[i], i
    assert type(fast) is type(one) and np.shape(fast) == np.shape(one)
    assert fast == rows[i], i


@pytest.mark.parametrize("fmt, kw", [
    ("fp16", {"accumulator": "fp32"}), ("fp16", {"accumulator": "fp16"}), ("bf16", {"accumulator": "fp32"}),
    ("fp16", {"accumulator": "fp32", "out_format": "fp8_e5m2"}),
    ("fp16", {"accumulator": "fp32", "out_format": "bf16", "tininess": "before"}),
    ("fp8_e5m2", {"accumulator": "fp32", "order": "reverse"}), ("fp8_e4m3fn", {})])
def test_one_term_sums_equal_the_general_path(monkeypatch, fmt, kw):
    """Each pattern alone, with and without flags, against the general path's sums of
    every pattern at once (a column: one term per output; the general path on the first
    pattern alone pins the types and shapes)."""
    fmt = sf.as_format(fmt)
    patterns = np.arange(1 << fmt.bits, dtype=fmt.storage_dtype)[:: 1 if fmt.bits <= 8 else 31]
    column = patterns[:, None]
    rows = {flags: general(lambda: sf.sum(column, fmt, axis=-1, return_flags=flags, **kw))
            for flags in (True, False)}
    one = {flags: general(lambda: sf.sum(patterns[:1], fmt, return_flags=flags, **kw)) for flags in (True, False)}
    for i, p in enumerate(patterns):
        x = np.array([p], dtype=fmt.storage_dtype)
        for flags in (True, False):
            _assert_row(sf.sum(x, fmt, return_flags=flags, **kw), rows[flags], i, one[flags])


@pytest.mark.parametrize("fmt, kw", [("fp16", {}), ("bf16", {"out_format": "bf16"}), ("fp8_e4m3fn", {}),
                                     ("fp16", {"accumulator": "fp16"})])
def test_one_term_dot_products_equal_the_general_path(monkeypatch, fmt, kw):
    """Each pair alone against the general path's dot products of every pair at once (a
    column each: one product per output)."""
    fmt = sf.as_format(fmt)
    rng = np.random.default_rng(5)
    pairs = rng.integers(0, 1 << fmt.bits, (2, 600)).astype(fmt.storage_dtype)
    rows = general(lambda: sf.vecdot(pairs[0][:, None], pairs[1][:, None], fmt, return_flags=True, **kw))
    one = general(lambda: sf.vecdot(pairs[0][:1], pairs[1][:1], fmt, return_flags=True, **kw))
    for i, (a, b) in enumerate(pairs.T):
        x, y = np.array([a]), np.array([b])
        _assert_row(sf.vecdot(x, y, fmt, return_flags=True, **kw), rows, i, one)


def test_one_term_takes_the_one_output_route_and_the_switch_turns_it_off(monkeypatch):
    found = _spy(monkeypatch)
    x, y = sf.encode([1.5], "fp16"), sf.encode([-0.1], "fp16")
    sf.sum(x, "fp16", accumulator="fp32", return_flags=True)
    sf.vecdot(x, y, "fp16", return_flags=True)
    sf.sum(x, "fp16", accumulator="fp32", out_format="bf16", return_flags=True)
    assert len(found) == 3 and all(f is not None for f in found)
    found.clear()
    general(lambda: sf.sum(x, "fp16", accumulator="fp32", return_flags=True))
    assert found == [None]


@pytest.mark.parametrize("shape", [(), (1, 1), (4, 8), (2, 3, 5)])
@pytest.mark.parametrize("fmt, kw", [("fp32", {}), ("fp16", {"accumulator": "fp32"}),
                                     ("fp16", {"accumulator": "fp16"}), ("fp16", {"accumulator": "fp32", "out_format": "fp8_e5m2"})])
def test_all_axes_of_a_c_contiguous_array_take_the_one_output_route(monkeypatch, shape, fmt, kw):
    """axis=None: the terms in C order, as the general path takes them (its 0-d result)."""
    found = _spy(monkeypatch)
    fmt = sf.as_format(fmt)
    rng = np.random.default_rng(len(shape))
    for scale in (1.0, 1e-3, 3e4):
        x = sf.encode(rng.standard_normal(shape) * scale, fmt)
        x = np.asarray(x, dtype=fmt.storage_dtype)
        call = (lambda: sf.sum(x, fmt, return_flags=True, **kw))
        assert_same(call(), general(call))
    assert found[0] is not None  # the first call (scale 1: finite) took it; general() declined
    found.clear()
    sf.sum(np.asarray(sf.encode(np.ones((4, 6)), fmt))[:, ::2], fmt, **kw)  # not C-contiguous: general
    assert found == [None]  # asked, and declined (2-D)
