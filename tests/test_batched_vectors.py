"""Dot products of many vectors at once: a batched matmul of rows or columns
(softfloat.accumulate._operands.matmul_as_paired: the paired layout's tiles of the whole
batch instead of a tile per batch element), vecdot with broadcast operands
(softfloat.accumulate._few.paired_product) and the Array calls made of them (np.vecdot,
np.linalg.vecdot, np.matvec, einsum "ij,ij->i", convolve, correlate).  The same bits,
flags and swamped counts as the general path with every shortcut off, in every mode and
accumulator, on data with overflow, NaN, infinities, signed zeros, subnormals and ties;
numpy's float16 as an oracle outside the code where it computes the same definition."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import softfloat as sf
import softfloat.accumulate.reduce as reduce_module
from softfloat.accumulate import _few, _operands

from tests.fastpath_checks import answers_of, assert_same, general

FORMATS = ["fp16", "bf16", "fp8_e4m3", "fp32"]


def adversarial(rng, shape, fmt):
    """Patterns of ``fmt``: normals of a random scale, with a share of random bit patterns
    (NaNs, infinities, subnormals, zeros of both signs), of the largest finite value
    (overflowing products and sums) and of small integers and halves (exact steps, ties,
    cancellation to signed zeros)."""
    f = sf.as_format(fmt)
    scale = rng.choice([2.0 ** -20, 1e-3, 1.0, 30.0, 200.0])
    values = rng.standard_normal(shape) * scale
    bits = np.asarray(sf.encode(values, f)).reshape(shape)
    pick = rng.random(shape)
    raw = rng.integers(0, 1 << f.bits, size=shape).astype(f.storage_dtype)
    halves = np.asarray(sf.encode(np.round(rng.standard_normal(shape) * 4) / 2, f)).reshape(shape)
    biggest = np.where(rng.random(shape) < 0.5, f.max_finite_bits, f.max_finite_bits | f.sign_mask)
    share = rng.choice([0.0, 0.05, 0.3])
    bits = np.where(pick < share, raw, bits)
    bits = np.where((pick >= share) & (pick < 2 * share), biggest.astype(f.storage_dtype), bits)
    return np.where(rng.random(shape) < 0.3, halves, bits).astype(f.storage_dtype)


#: (a's shape, b's shape) with the batch letters B (and C) and K, M, N filled in
SHAPES = [("BMK", "K1"), ("B1K", "BKN"), ("BMK", "BK1"), ("B1K", "K1"), ("K", "BKN"), ("BMK", "K"),
          ("C1MK", "BK1"), ("B1K", "C1KN")]


@st.composite
def batched_vectors(draw):
    fmt = draw(st.sampled_from(FORMATS))
    sizes = {"B": draw(st.integers(2, 7)), "C": draw(st.integers(1, 3)), "K": draw(st.integers(1, 9)),
             "M": draw(st.integers(1, 4)), "N": draw(st.integers(1, 4)), "1": 1}
    sa, sb = draw(st.sampled_from(SHAPES))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    a, b = (adversarial(rng, tuple(sizes[c] for c in s), fmt) for s in (sa, sb))
    kw = dict(accumulator=draw(st.sampled_from([None, "fp32", "fp16", "bf16", "fp64", "h100", "a100"])),
              order=draw(st.sampled_from(["sequential", "reverse", "pairwise"])),
              return_flags=draw(st.sampled_from([False, True, "swamped"])))
    kw.update(draw(st.sampled_from([{}, {}, {"rounding": "upward"}, {"rounding": "toward_zero"},
                                    {"rounding": "stochastic", "rng": 5}, {"tininess": "before"},
                                    {"saturate": True}, {"subnormals": False}, {"block": 2},
                                    {"product": "fp16"}])))
    if kw["accumulator"] in ("h100", "a100") and fmt not in ("fp16", "bf16"):
        kw["accumulator"] = "fp32"
    if kw["accumulator"] in ("h100", "a100"):
        kw["order"] = "sequential"
        kw.pop("block", None), kw.pop("product", None)
    if fmt == "fp32" and kw["accumulator"] in ("fp16", "bf16", "h100", "a100"):
        kw["accumulator"] = "fp32"
    if draw(st.booleans()):
        kw["out_format"] = draw(st.sampled_from(["fp16", "bf16", "fp8_e4m3", "fp8_e4m3fnuz"]))
    if draw(st.integers(0, 3)) == 0 and kw["accumulator"] not in ("h100", "a100"):  # an initial value,
        c_format = kw.get("out_format") or kw["accumulator"] or "fp32"  # broadcast to the result
        kw["c"] = np.asarray(sf.encode(rng.standard_normal() * 8, c_format))
    return a, b, fmt, kw


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batched_vectors())
def test_batched_matmul_of_vectors_equals_the_outer_layout(case):
    a, b, fmt, kw = case
    call = (lambda: sf.matmul(a, b, fmt, **kw))
    assert_same(call(), general(call))


def test_the_paired_layout_ran_and_the_switch_turns_it_off(monkeypatch):
    found = answers_of(monkeypatch, reduce_module, "matmul_as_paired")
    rng = np.random.default_rng(1)
    a, b = adversarial(rng, (40, 1, 5), "fp16"), adversarial(rng, (5, 1), "fp16")
    for kw in ({}, {"rounding": "upward", "return_flags": True}):  # (upward: the tiles, no short path)
        assert_same(sf.matmul(a, b, "fp16", **kw), general(lambda: sf.matmul(a, b, "fp16", **kw)))
    assert [f is not None for f in found] == [True, True]  # (switched off: not asked)
    # a matrix broadcast over a batch of rows would need far more room paired: the outer layout
    assert _operands.matmul_as_paired(a, np.zeros((5, 64), np.uint16)) is None
    assert _operands.matmul_as_paired(a[0], b) is None  # one batch element: no batch to cut
    assert _operands.matmul_as_paired(a, b[:4]) is None  # K differs: matmul_layout says so
    with pytest.raises(ValueError, match="contracted lengths"):
        sf.matmul(a, b[:4], "fp16")


@st.composite
def broadcast_pairs(draw):
    fmt = draw(st.sampled_from(FORMATS))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    K, P, R = draw(st.integers(1, 8)), draw(st.integers(1, 30)), draw(st.integers(1, 3))
    sa, sb = draw(st.sampled_from([((P, K), (K,)), ((K,), (P, K)), ((P, 1, K), (R, K)), ((1, K), (P, K))]))
    a, b = adversarial(rng, sa, fmt), adversarial(rng, sb, fmt)
    axis = -1
    if draw(st.booleans()) and len(sa) == len(sb) == 2:  # the contracted axis first
        a, b, axis = a.T, b.T, 0
    kw = dict(axis=axis, accumulator=draw(st.sampled_from([None, "fp32", "fp16", "fp64"])),
              order=draw(st.sampled_from(["sequential", "reverse", "pairwise"])),
              return_flags=draw(st.sampled_from([False, True, "swamped"])))
    if fmt == "fp32" and kw["accumulator"] == "fp16":
        kw["accumulator"] = "fp32"
    if draw(st.booleans()):
        kw["out_format"] = draw(st.sampled_from(["fp16", "bf16", "fp8_e4m3"]))
    return a, b, fmt, kw


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(broadcast_pairs())
def test_broadcast_dot_products_equal_the_general_path(case):
    a, b, fmt, kw = case
    call = (lambda: sf.vecdot(a, b, fmt, **kw))
    assert_same(call(), general(call))


def test_broadcast_dot_products_take_the_short_path(monkeypatch):
    found = answers_of(monkeypatch, _few, "paired_product")
    rng = np.random.default_rng(2)
    X, v = (np.asarray(sf.encode(rng.standard_normal(s), "fp16")) for s in ((50, 5), (5,)))
    for a, b, axis in ((X, v, -1), (v, X, -1), (X.T, v[:, None], 0)):
        assert_same(sf.vecdot(a, b, "fp16", axis=axis, return_flags=True),
                    general(lambda: sf.vecdot(a, b, "fp16", axis=axis, return_flags=True)))
    assert [f is not None for f in found] == [True, False] * 3  # (the general path's call declines)
    found.clear()
    with pytest.raises(ValueError, match="contracted axis has length"):
        sf.vecdot(X[:, :4], v, "fp16")  # lengths differ: declined, the general path says why
    assert found == [None]


# ---- the Array calls ----------------------------------------------------------------------
def _counts(ctx):
    """The context's sticky counts and the last operation's flags, element by element."""
    counts = {name: getattr(ctx.flags, name) for name in (*sf.FLAG_NAMES, "swamped", "values", "operations")}
    last = ctx.flags.last
    if last is not None:
        counts.update({f"last {name}": np.asarray(getattr(last, name)).tolist() for name in (*sf.FLAG_NAMES, "swamped")})
    return counts


ARRAY_CALLS = {
    "vecdot": lambda X, Y, v: np.vecdot(X, v),
    "linalg.vecdot": lambda X, Y, v: np.linalg.vecdot(X, Y),
    "einsum ij,ij->i": lambda X, Y, v: np.einsum("ij,ij->i", X, Y),
    "matvec": lambda X, Y, v: np.matvec(X[None], v) if hasattr(np, "matvec") else X @ v,
    "X @ v batched": lambda X, Y, v: (X[:, None, :] @ Y[:, :, None])[:, 0, 0],
    "convolve": lambda X, Y, v: np.convolve(X[:, 0], v),
    "correlate same": lambda X, Y, v: np.correlate(Y[:, 1], v, "same"),
}


@pytest.mark.parametrize("call", list(ARRAY_CALLS))
@pytest.mark.parametrize("options", [{}, {"rounding": "upward"}, {"accumulator": "fp16"},
                                     {"order": "pairwise"}, {"accumulator": "h100"},
                                     {"rounding": "stochastic", "rng": 3}, {"subnormals": False}])
@pytest.mark.parametrize("seed", range(3))
def test_array_calls_equal_the_general_path(call, options, seed):
    rng = np.random.default_rng(seed)
    fmt = ["fp16", "bf16", "fp8_e4m3"][seed]
    X, Y = (sf.Array.from_bits(adversarial(rng, (60, 5), fmt), fmt) for _ in range(2))
    v = sf.Array.from_bits(adversarial(rng, (5,), fmt), fmt)

    def run():
        with sf.context(**options) as ctx:
            result = ARRAY_CALLS[call](X, Y, v)
        return result.bits, _counts(ctx)
    (fast, fast_counts), (slow, slow_counts) = run(), general(run)
    assert fast.dtype == slow.dtype and fast.shape == slow.shape
    np.testing.assert_array_equal(fast, slow)
    assert fast_counts == slow_counts


@pytest.mark.parametrize("call", list(ARRAY_CALLS))
@pytest.mark.parametrize("scale", [1e-3, 1.0, 300.0])
def test_array_calls_equal_numpys_float16(call, scale):
    """numpy's float16 vecdot, einsum and convolutions sum float32 products in float32 and
    round once: the default context's definition (fp32 accumulator, sequential)."""
    rng = np.random.default_rng(7)
    X, Y = ((rng.standard_normal((60, 5)) * scale).astype(np.float16) for _ in range(2))
    v = rng.standard_normal(5).astype(np.float16)
    X[3, 2], Y[4, 1], X[5, 0] = -0.0, 2.0 ** -24, 65504.0  # a signed zero, a subnormal, an overflow
    with np.errstate(all="ignore"):
        expected = ARRAY_CALLS[call](X, Y, v)
    got = ARRAY_CALLS[call](*(sf.asarray(z, "fp16") for z in (X, Y, v)))
    np.testing.assert_array_equal(got.to_numpy().view(np.uint16), np.asarray(expected).view(np.uint16))


MODES = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd"]


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e4m3fnuz", "fp32"])
@pytest.mark.parametrize("order", ["sequential", "reverse"])
@pytest.mark.parametrize("mode", MODES)
def test_padded_correlations_equal_the_grouped_ones(fmt, order, mode):
    """convolve and correlate in one padded call (softfloat._array_arithmetic._padding)
    against the outputs of equal overlap computed call by call: every mode and order it
    takes, on data with zeros of both signs, NaN, infinities and overflow."""
    rng = np.random.default_rng(zlib.crc32(repr((fmt, order, mode)).encode()))  # (the same in every process)
    for m, n in ((40, 7), (3, 9), (12, 12), (1, 1)):
        a = sf.Array.from_bits(adversarial(rng, (m,), fmt), fmt)
        v = sf.Array.from_bits(adversarial(rng, (n,), fmt), fmt)
        for call in (lambda: np.convolve(a, v), lambda: np.correlate(a, v, "full"), lambda: np.correlate(v, a, "same")):
            for options in ({}, {"accumulator": fmt if fmt != "fp8_e4m3fnuz" else "bf16"}, {"subnormals": False},
                            {"track_flags": False}):
                def run():
                    with sf.context(rounding=mode, order=order, **options) as ctx:
                        result = call()
                    return result.bits, _counts(ctx)
                (fast, fast_counts), (slow, slow_counts) = run(), general(run)
                np.testing.assert_array_equal(fast, slow)
                assert fast_counts == slow_counts


def test_padded_correlations_ran_and_trap_as_the_grouped_ones(monkeypatch):
    from softfloat import _array_arithmetic
    found = answers_of(monkeypatch, _array_arithmetic, "_padding")
    a = sf.asarray([1.0, 60000.0, -0.0, 2.0], "fp16")
    v = sf.asarray([-0.0, 4.0, 1.0], "fp16")
    messages = []
    for run in (lambda f: f(), general):
        with pytest.raises(sf.Overflow) as raised, sf.context(traps=["overflow"]):
            run(lambda: np.convolve(a, v))
        messages.append(str(raised.value))
    assert messages[0] == messages[1] and "convolve" in messages[0]
    assert [p is not None for p in found] == [True, False]  # padded, then (switched off) grouped
