"""The native fast paths of softfloat.accumulate equal the general path bit for bit, and
the platform facts they stand on hold here."""

from __future__ import annotations

import numpy as np
import pytest

import softfloat as sf
from softfloat.accumulate import _fast
import softfloat.accumulate.reduce as reduce_module

FORMATS = ["fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "tf32"]


@pytest.fixture
def general(monkeypatch):
    """Call a reduction with the fast paths switched off."""
    def call(fn, *args, **kwargs):
        with monkeypatch.context() as m:
            m.setattr(_fast, "plan", lambda spec, layout: None)
            return fn(*args, **kwargs)
    return call


def _wide_data(fmt, shape, seed):
    """Values across the format's range, with zeros, signed zeros and subnormals."""
    rng = np.random.default_rng(seed)
    fmt = sf.as_format(fmt)
    mags = 2.0 ** rng.uniform(fmt.emin - fmt.mantissa_bits, min(fmt.emax, 20) / 2, shape)
    x = np.where(rng.random(shape) < 0.5, -mags, mags)
    x[rng.random(shape) < 0.05] = 0.0
    x[rng.random(shape) < 0.05] = -0.0
    return sf.encode(x, fmt)


def _assert_taken(fn, *args, kind=None, **kwargs):
    """The call really runs the fast path (so the comparison is not vacuous), an arithmetic
    of exactly the class ``kind`` where given; the one-output path for short reductions
    (reduce._ONE_OUTPUT_TERMS) is held off."""
    seen = []
    original = _fast.plan

    def spy(spec, layout):
        plan = original(spec, layout)
        seen.append(plan is not None and (kind is None or type(plan) is kind))
        return plan
    _fast.plan = spy
    saved, reduce_module._ONE_OUTPUT_TERMS = reduce_module._ONE_OUTPUT_TERMS, 0
    try:
        fn(*args, **kwargs)
    finally:
        _fast.plan = original
        reduce_module._ONE_OUTPUT_TERMS = saved
    return bool(seen) and all(seen)  # one plan per thread that ran tiles


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("order", ["sequential", "reverse", "pairwise"])
@pytest.mark.parametrize("block", [None, 5])
def test_matmul_fast_path_equals_general(fmt, order, block, general):
    a = _wide_data(fmt, (13, 37), 1)
    b = _wide_data(fmt, (37, 9), 2)
    c = sf.encode(np.linspace(-2, 2, 9), "fp32")
    c16 = sf.encode(np.linspace(-2, 2, 9), "fp16")
    for kwargs in ({}, {"c": c}, {"product": "fp32"}, {"out_format": "fp16", "c": c16}):
        if block is not None and "out_format" in kwargs:
            continue
        fast = sf.matmul(a, b, fmt, order=order, block=block, return_flags=True, **kwargs)
        slow = general(sf.matmul, a, b, fmt, order=order, block=block, return_flags=True, **kwargs)
        _same(fast, slow, kwargs)
        assert np.array_equal(sf.matmul(a, b, fmt, order=order, block=block, **kwargs), fast[0])


@pytest.mark.parametrize("m, k, n", [(1, 300, 1), (3, 300, 2), (2, 700, 5), (40, 300, 50), (130, 40, 140)])
def test_matmul_chains_of_every_width_equal_general(m, k, n, general):
    # tiles of one output up to whole blocks, and chunks of the k axis that split the chain
    a = _wide_data("fp16", (m, k), 7)
    b = _wide_data("fp16", (k, n), 8)
    c = sf.encode(np.linspace(-1, 1, m * n).reshape(m, n), "fp32")
    for order in ("sequential", "reverse"):
        for kwargs in ({}, {"c": c}):
            assert _assert_taken(sf.matmul, a, b, "fp16", order=order, **kwargs)
            fast = sf.matmul(a, b, "fp16", order=order, **kwargs)
            assert np.array_equal(fast, general(sf.matmul, a, b, "fp16", order=order, **kwargs)), (order, kwargs)


def test_operands_in_any_memory_order_give_the_same_product(general):
    # transposed, permuted, strided and broadcast operands are decoded in memory order
    a = _wide_data("fp16", (3, 40, 30), 9)
    b = _wide_data("fp16", (3, 30, 20), 10)
    want = sf.matmul(a, b, "fp16")
    views = [(np.ascontiguousarray(a.transpose(0, 2, 1)).transpose(0, 2, 1), b),  # a in F order per batch
             (a, np.asfortranarray(b.transpose(2, 1, 0)).transpose(2, 1, 0)),     # b fully permuted
             (np.repeat(a, 2, axis=2)[:, :, ::2], b[:, :, :])]                    # strided
    for x, y in views:
        assert np.array_equal(sf.matmul(x, y, "fp16"), want)
        assert np.array_equal(general(sf.matmul, x, y, "fp16"), want)
    row = a[0, :1]  # (1, 30) broadcast against the batch of b
    assert np.array_equal(sf.matmul(np.broadcast_to(row, (3, 1, 30)), b, "fp16"), sf.matmul(row, b, "fp16"))


def _same(fast, slow, what):
    """Bits, the five flags and the swamped counts agree."""
    assert np.array_equal(fast[0], slow[0]), what
    for (name, m1), (_, m2) in zip(fast[1], slow[1]):
        assert np.array_equal(m1, m2), (what, name)
    assert np.array_equal(fast[1].swamped, slow[1].swamped), what


@pytest.mark.parametrize("fmt, acc", [("fp16", "fp16"), ("fp16", "fp32"), ("bf16", "fp32"), ("fp32", "fp64"),
                                      ("fp8_e4m3", "fp16"), ("fp32", "fp32"), ("fp64", "fp64")])
@pytest.mark.parametrize("order", ["sequential", "reverse", "pairwise"])
def test_sum_fast_path_equals_general(fmt, acc, order, general):
    x = _wide_data(fmt, (300, 7), 3)
    assert _assert_taken(sf.sum, x, fmt, axis=0, accumulator=acc, order=order)
    for block in (None, 16):
        fast = sf.sum(x, fmt, axis=0, accumulator=acc, order=order, block=block, return_flags=True)
        _same(fast, general(sf.sum, x, fmt, axis=0, accumulator=acc, order=order, block=block, return_flags=True),
              block)
        assert np.array_equal(sf.sum(x, fmt, axis=0, accumulator=acc, order=order, block=block), fast[0])


def test_fast_path_takes_the_steps_that_make_overflow_and_nan(general):
    big = sf.encode(np.array([60000.0, 60000.0, -60000.0, 1.0]), "fp16")  # overflow midway
    for acc in ("fp16", "fp32"):
        assert _assert_taken(sf.sum, big, "fp16", accumulator=acc)
        for order in ("sequential", "pairwise"):
            _same(sf.sum(big, "fp16", accumulator=acc, order=order, return_flags=True),
                  general(sf.sum, big, "fp16", accumulator=acc, order=order, return_flags=True), (acc, order))
    assert int(sf.sum(big, "fp16")) == 0x7C00  # +inf stays
    assert int(sf.sum(big, "fp16", accumulator="fp32", out_format="fp16")) == 0x7B53  # 60001 -> 60000
    inf = np.array([0x7C00, 0xFC00], dtype=np.uint16)
    assert int(sf.sum(inf, "fp16")) == 0x7E00  # canonical, positive (x86 would give -NaN)


def test_bf16_products_outside_fp32_round_in_each_step(general):
    # 2**-70 * 2**-70 = 2**-140 is not an fp32 value with 16 significant bits: each step
    # rounds (softfloat.accumulate._fast.RoundedSteps), not numpy's float32 additions
    tiny = sf.encode(np.array([[2.0**-70 * (1 + 2**-7)] * 4, [2.0**-71] * 4]), "bf16")  # (two outputs: one
    assert _assert_taken(sf.vecdot, tiny, tiny, "bf16", kind=_fast.RoundedSteps)  # steps on Python floats)
    _same(sf.vecdot(tiny, tiny, "bf16", return_flags=True), general(sf.vecdot, tiny, tiny, "bf16", return_flags=True),
          "tiny")
    ordinary = sf.encode(np.array([1.5, -2.25, 3.0, 0.0]), "bf16")
    assert _assert_taken(sf.vecdot, ordinary, ordinary, "bf16", kind=_fast.Native)


def test_other_modes_take_the_general_path():
    x = _wide_data("fp16", (50,), 4)
    assert _assert_taken(sf.sum, x, "fp16", return_flags=True)  # flags come from the additions
    assert not _assert_taken(sf.sum, x, "fp16", rounding="toward_zero")
    assert not _assert_taken(sf.sum, x, "fp16", subnormals=False)
    assert not _assert_taken(sf.sum, x, "fp16", accumulator="bf16")


# ---- the platform facts ---------------------------------------------------------------
def test_numpy_float16_addition_is_one_correct_rounding():
    # Figueroa: float32 has 24 >= 2 * 11 + 2 bits, so float16(float32(a) + float32(b)) is
    # correctly rounded; checked against the library's own add on patterns of every class
    rng = np.random.default_rng(5)
    a = rng.integers(0, 1 << 16, 400_000).astype(np.uint16)
    b = rng.integers(0, 1 << 16, 400_000).astype(np.uint16)
    finite = ((a & 0x7C00) != 0x7C00) & ((b & 0x7C00) != 0x7C00)
    a, b = a[finite], b[finite]
    with np.errstate(over="ignore"):
        native = (a.view(np.float16) + b.view(np.float16)).view(np.uint16)
    assert np.array_equal(native, sf.add(a, b, "fp16"))


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 64, 1000, 1 << 14])
def test_numpy_reduction_down_axis_0_is_row_after_row(n):
    # _fast.sum_rows relies on it: rows of alternately huge and tiny terms, where any
    # other order (pairwise, or blocks of 8 partial sums) keeps tiny terms it should lose
    rng = np.random.default_rng(n)
    K = 300
    rows = (rng.standard_normal((K, n)) * 2.0 ** rng.integers(-30, 30, (K, n))).astype(np.float32)
    rows[rng.random((K, n)) < 0.05] = -0.0
    expected = rows[0].copy()
    for row in rows[1:]:
        expected = (expected.astype(np.float64) + row.astype(np.float64)).astype(np.float32)  # one rounding
    got = _fast.sum_rows(rows)
    assert np.array_equal(got.view(np.uint32), expected.view(np.uint32))
    assert np.array_equal(_fast.sum_rows(np.full((3, n), -0.0, np.float32)).view(np.uint32),
                          np.full(n, 0x80000000, np.uint32))  # -0 + -0 + -0 stays -0


def test_numpy_float64_to_float32_cast_is_one_correct_rounding():
    rng = np.random.default_rng(6)
    x = rng.integers(0, 1 << 64, 400_000, dtype=np.uint64).view(np.float64)
    x = x[np.isfinite(x)]
    ties = (np.float32(rng.standard_normal(1000)).astype(np.float64)
            * (1 + 2.0**-24))  # exactly halfway between neighbours
    x = np.concatenate([x, ties, ties * 2.0**-130])
    with np.errstate(over="ignore"):
        native = x.astype(np.float32).view(np.uint32)
    assert np.array_equal(native, sf.encode(x, "fp32"))


# ---- long chains over few outputs, a window of steps at a time ------------------------
def _chain_cases(fmt, seed):
    """Terms that walk across binades, through zero, into subnormals, onto ties and past
    the overflow threshold."""
    fmt = sf.as_format(fmt)
    rng = np.random.default_rng(seed)
    walk = rng.standard_normal(300) * rng.choice([1.0, 2.0**-4, 2.0**3], 300)
    tiny = rng.integers(-3, 4, 200) * fmt.min_subnormal * rng.choice([1, 2, 3], 200)
    ties = np.tile([1.0, 3.0, -1.0, 2.0], 60) * 2.0 ** (fmt.mantissa_bits - 1)  # halves of the spacing
    big = np.abs(rng.standard_normal(150)) * fmt.max_finite / 40  # overflows midway
    return [sf.encode(v, fmt, "toward_zero") for v in (walk, tiny, ties, big)]


def _step_by_step(m):
    """No windows: every chain one vectorised step at a time."""
    from softfloat.accumulate import _ieee
    m.setattr(_ieee, "WINDOW_LANES", 0)
    m.setattr(_ieee, "WINDOW_LANES_LONG", 0)


@pytest.mark.parametrize("fmt", ["bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "fp6_e2m3", sf.Format(6, 9)])
@pytest.mark.parametrize("rounding", ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd"])
def test_windowed_chains_equal_step_by_step(fmt, rounding, general, monkeypatch):
    from softfloat.accumulate import _ieee
    for i, x in enumerate(_chain_cases(fmt, seed=len(str(fmt)) + len(rounding))):
        for kwargs in ({}, {"subnormals": False}, {"order": "reverse"}):
            got = sf.sum(x, fmt, rounding=rounding, **kwargs)
            with monkeypatch.context() as m:
                _step_by_step(m)
                want = general(sf.sum, x, fmt, rounding=rounding, **kwargs)
            assert int(got) == int(want), (i, kwargs, hex(int(got)), hex(int(want)))
        # products into a few outputs, c included
        y = np.stack([x, x[::-1]])
        got = sf.vecdot(y, y[::-1], fmt, accumulator=fmt, rounding=rounding, c=np.array([0, 1]))
        with monkeypatch.context() as m:
            _step_by_step(m)
            want = general(sf.vecdot, y, y[::-1], fmt, accumulator=fmt, rounding=rounding, c=np.array([0, 1]))
        assert np.array_equal(got, want), (i, got, want)
        # many outputs, each crossing binades at its own steps (lanes move on separately)
        rng = np.random.default_rng(i)
        z = np.stack([np.roll(x, int(k)) for k in rng.integers(0, x.size, 24)])
        z[::3] = z[::3] ^ np.array(1 << (sf.as_format(fmt).bits - 1), dtype=z.dtype)  # negated rows
        with monkeypatch.context() as m:
            m.setattr(_ieee, "LONG_CHAIN", 2)
            got = sf.vecdot(z, x, fmt, accumulator=fmt, rounding=rounding)
        with monkeypatch.context() as m:
            _step_by_step(m)
            want = general(sf.vecdot, z, x, fmt, accumulator=fmt, rounding=rounding)
        assert np.array_equal(got, want), (i, got, want)


def test_sums_of_rows_in_any_memory_layout_are_sequential(general):
    """numpy reduces axis 0 of an F-ordered array pairwise (its inner axis): sum_rows
    copies such rows first.  vecdot along the last axis makes its terms F-ordered; with
    1 + 2**-24 + 2**-24 + ... in fp32 the sequential sum stays 1 (each step a tie to
    even), a pairwise one would not."""
    from softfloat.accumulate._fast import sum_rows
    rows = np.full((12, 23), 2.0 ** -24, dtype=np.float32)
    rows[0] = 1.0
    assert np.array_equal(sum_rows(np.asfortranarray(rows)), np.ones(23, dtype=np.float32))
    assert not np.array_equal(np.add.reduce(np.asfortranarray(rows), axis=0), np.ones(23, dtype=np.float32))
    x = np.full((23, 12), 2.0 ** -12)
    x[:, 0] = 1.0
    bits = sf.encode(x, "fp16")
    got = sf.vecdot(bits, bits, "fp16", out_format="fp32")
    assert np.array_equal(got, general(sf.vecdot, bits, bits, "fp16", out_format="fp32"))
    assert np.array_equal(sf.decode(got, "fp32"), np.ones(23))
