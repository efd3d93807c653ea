"""Steps rounded into a binary64 accumulator to nearest even straight from the kernels'
pair (softfloat.accumulate._ieee.Rounder._binary64: hi is the rounded result, inexact
iff lo != 0): fp64 matrix products, dot products and sums equal the general path (the
significand rounding, every shortcut off) bit for bit, flags and swamped counts
included, and the exact reference (tests/accumulate_oracle.py) element by element, on
data aimed at ties, cancellation, the subnormal and overflow boundaries, and specials."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import softfloat as sf
from softfloat.accumulate import _ieee

from tests.accumulate_checks import check, random_patterns
from tests.fastpath_checks import answers_of, assert_same, general

FP64 = sf.as_format("fp64")


def operands(rng, shape, kind):
    """fp64 patterns: ``normal`` full-precision normals of mixed scales; ``ties`` few
    significant bits around 1 and 2**-53 (products and sums landing on midpoints);
    ``edges`` values whose products and sums reach below the smallest normal (2**-1022)
    or past the largest; ``boundary`` values near the smallest normal, whose sums
    cancel to subnormals; ``grid`` the reference's tie-and-carry patterns; with a share
    of infinities, NaNs and zeros of both signs."""
    if kind == "grid":
        return random_patterns(rng, FP64, shape, spread=60, zeros=0.05).astype(np.uint64).reshape(shape)
    if kind == "normal":
        values = rng.standard_normal(shape) * 2.0 ** rng.integers(-30, 30, shape)
    elif kind == "boundary":  # sums cancelling to subnormals (exact, flushed without subnormals)
        values = 2.0 ** -1022 * (1 + rng.integers(0, 4, shape) * 2.0 ** -52) * rng.choice([1.0, 2.0, 0.5], shape)
    elif kind == "ties":
        values = (1 + rng.integers(0, 8, shape) * 2.0 ** -52) * rng.choice([1.0, 2.0 ** -53, 3.0, 0.5], shape)
    else:
        values = rng.standard_normal(shape) * rng.choice([2.0 ** -520, 2.0 ** -511, 2.0 ** 511, 1e300], shape)
    values *= rng.choice([-1.0, 1.0], shape)
    bits = np.asarray(sf.encode(values, FP64)).reshape(shape)
    special = np.asarray(sf.encode(rng.choice([np.inf, -np.inf, np.nan, 0.0, -0.0], shape), FP64)).reshape(shape)
    return np.where(rng.random(shape) < rng.choice([0.0, 0.0, 0.05]), special, bits).astype(np.uint64)


@st.composite
def reductions(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    kind = draw(st.sampled_from(["normal", "ties", "edges", "boundary", "grid"]))
    M, K, N = (draw(st.integers(1, 12)) for _ in range(3))
    a, b = operands(rng, (M, K), kind), operands(rng, (K, N), kind)
    kw = dict(order=draw(st.sampled_from(["sequential", "reverse", "pairwise"])),
              return_flags=draw(st.sampled_from([False, True, "swamped"])))
    kw.update(draw(st.sampled_from([{}, {}, {"tininess": "before"}, {"subnormals": False}, {"saturate": True},
                                    {"block": 3}, {"product": "fp64"}, {"out_format": "fp32"},
                                    {"rounding": "upward"}, {"rounding": "toward_zero"}])))
    return draw(st.sampled_from(["matmul", "vecdot", "sum"])), a, b, kw


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reductions())
def test_binary64_reductions_equal_the_general_path(case):
    kind, a, b, kw = case
    if kind == "matmul":
        call = (lambda: sf.matmul(a, b, "fp64", **kw))
    elif kind == "vecdot":
        call = (lambda: sf.vecdot(a, a[::-1], "fp64", axis=1, **kw))
    else:
        kw.pop("product", None)
        call = (lambda: sf.sum(b, "fp64", axis=0, **kw))
    assert_same(call(), general(call))


@pytest.mark.parametrize("kind", ["normal", "ties", "edges", "boundary", "grid"])
@pytest.mark.parametrize("seed", range(3))
def test_binary64_products_equal_the_exact_reference(kind, seed):
    rng = np.random.default_rng(seed)
    a, b = operands(rng, (6, 9), kind), operands(rng, (9, 5), kind)
    check("matmul", a, b, "fp64")
    check("matmul", a, b, "fp64", tininess="before", order="reverse")
    check("sum", b, "fp64", axis=0)


def test_the_shortcut_ran_and_the_switch_turns_it_off(monkeypatch):
    found = answers_of(monkeypatch, _ieee.Rounder, "_binary64")
    a = np.asarray(sf.encode(np.random.default_rng(1).standard_normal((20, 20)), FP64))
    assert_same(sf.matmul(a, a, "fp64", return_flags=True), general(lambda: sf.matmul(a, a, "fp64", return_flags=True)))
    taken = len(found)
    assert taken and all(f is not None for f in found)  # (the general path: not asked)
    tie = np.asarray(sf.encode([[1.0, 2.0 ** -53]], FP64)), np.asarray(sf.encode([[1.0], [1.0]], FP64))
    bits, flags = sf.matmul(*tie, "fp64", return_flags=True)  # 1 + 2**-53: a tie, to the even 1
    assert sf.decode(bits, FP64)[0, 0] == 1.0 and flags.inexact[0, 0]
    assert found[taken:] and found[-1] is not None
    tiny = np.asarray(sf.encode([[2.0 ** -1000, 2.0 ** -30]], FP64)), np.asarray(sf.encode([[1.0], [2.0 ** -1000]], FP64))
    sf.matmul(*tiny, "fp64")  # a subnormal sum: the significand path
    assert found[-1] is None
