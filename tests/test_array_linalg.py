"""numpy.linalg's chains and norms on fp16 Arrays: multi_dot, matrix_power, vecdot,
vector_norm, matrix_norm, the gufuncs' axes=/axis=/keepdims=, and einsum of several
operands.

The oracle for the products is numpy float16 itself: its matmul multiplies exactly and
sums in float32, in k order, then rounds once into float16 -- the fp32 accumulator's
definition -- so numpy's own multi_dot and matrix_power, which choose their order of
products themselves, give the bits an emulation in numpy's order must give.  The norms'
oracle is float64 (exact for these values) rounded once by numpy's cast, and numpy
float16's correctly rounded sqrt, as in tests/test_array_norms.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays as np_arrays

import softfloat as sf
from softfloat._array_linalg import chain_order

# |x| in [2**-5, 8] or 0: products and short sums stay far from fp16's overflow
VALUES = st.floats(-8, 8, width=16).filter(lambda v: v == 0 or abs(v) >= 2 ** -5)


def A(x):
    return sf.Array.from_bits(np.asarray(x, np.float16).view(np.uint16), "fp16")


def assert_same_bits(got, expected, zeros_by_value=False):
    """Bit for bit; ``zeros_by_value``: +0 and -0 alike (numpy's sums start from +0, so
    a sum of -0 terms is +0 there and -0 in IEEE's order of additions)."""
    expected = np.asarray(expected, np.float16).view(np.uint16)
    bits = got.bits
    if zeros_by_value:
        bits, expected = (np.where(b == 0x8000, 0, b) for b in (bits, expected))
    both_nan = np.isnan(got.to_numpy()) & np.isnan(expected.view(np.float16))  # inf - inf: NaN's payload is numpy's
    bits, expected = (np.where(both_nan, 0x7E00, b) for b in (bits, expected))
    assert got.shape == expected.shape
    assert np.array_equal(bits, expected), (got.to_numpy(), expected.view(np.float16))


@st.composite
def chains(draw):
    n = draw(st.integers(3, 6))
    dims = draw(st.lists(st.integers(1, 9), min_size=n + 1, max_size=n + 1))
    mats = [draw(np_arrays(np.float16, (dims[i], dims[i + 1]), elements=VALUES)) for i in range(n)]
    if draw(st.booleans()):
        mats[0] = mats[0][0]
    if draw(st.booleans()):
        mats[-1] = mats[-1][:, 0]
    return mats


@settings(max_examples=80, deadline=None)
@given(mats=chains())
def test_multi_dot_is_numpys_order_of_fp32_accumulated_products(mats):
    with sf.context(accumulator="fp32"):
        got = np.linalg.multi_dot([A(m) for m in mats])
    with np.errstate(over="ignore", invalid="ignore"):
        expected = np.linalg.multi_dot(mats)
    assert_same_bits(got, expected, zeros_by_value=True)


def test_multi_dot_order_changes_the_bits_and_numpys_is_taken():
    rng = np.random.default_rng(7)
    a, b, c = (rng.standard_normal(s).astype(np.float16) for s in ((2, 30), (30, 3), (3, 40)))
    assert chain_order([a.shape, b.shape, c.shape])[0, 2] == 1  # (A B) C is cheaper
    with sf.context(accumulator="fp32"):
        got = np.linalg.multi_dot([A(a), A(b), A(c)])
        other = A(a) @ (A(b) @ A(c))
    assert_same_bits(got, np.linalg.multi_dot([a, b, c]))
    assert not np.array_equal(got.bits, other.bits)  # the order is observable


def test_chain_order_ties_and_programme_follow_numpy():
    from numpy.linalg._linalg import _multi_dot_matrix_chain_order  # numpy's own programme
    rng = np.random.default_rng(3)
    for _ in range(200):
        dims = rng.integers(1, 6, size=rng.integers(5, 8))
        shapes = [(int(dims[i]), int(dims[i + 1])) for i in range(len(dims) - 1)]
        theirs = _multi_dot_matrix_chain_order([np.empty(s) for s in shapes])
        ours = chain_order(shapes)
        assert all(ours[i, j] == theirs[i, j] for (i, j) in ours)


@pytest.mark.parametrize("n", range(10))
def test_matrix_power_is_numpys_products_by_the_bits_of_n(n):
    m = (np.random.default_rng(n).standard_normal((3, 4, 4)) * 0.6).astype(np.float16)
    with sf.context(accumulator="fp32"):
        got = np.linalg.matrix_power(A(m), n)
    assert_same_bits(got, np.linalg.matrix_power(m, n), zeros_by_value=True)


def test_matrix_power_errors():
    with pytest.raises(TypeError, match="negative power needs the inverse"):
        np.linalg.matrix_power(A(np.eye(2)), -1)
    with pytest.raises(TypeError, match="exponent must be an integer; got float"):
        np.linalg.matrix_power(A(np.eye(2)), 2.0)
    with pytest.raises(np.linalg.LinAlgError, match="must be square"):
        np.linalg.matrix_power(A(np.ones((2, 3))), 2)
    with pytest.raises(ValueError, match="at least two arrays"):
        np.linalg.multi_dot([A(np.ones(2))])
    with pytest.raises(np.linalg.LinAlgError, match="3-dimensional"):
        np.linalg.multi_dot([A(np.ones((2, 2))), A(np.ones((2, 2, 2))), A(np.ones((2, 2)))])


GUFUNC_CALLS = [
    (np.vecdot, (3, 4, 5), (3, 4, 5), dict(axis=1)),
    (np.vecdot, (3, 4, 5), (3, 4, 5), dict(axis=0, keepdims=True)),
    (np.vecdot, (3, 4, 5), (4, 5), dict(keepdims=True)),
    (np.vecdot, (3, 4, 5), (3, 4, 5), dict(axes=[(0,), (0,), ()])),
    (np.linalg.vecdot, (3, 4, 5), (3, 4, 5), dict(axis=-2)),
    (np.matvec, (5, 3, 4), (4, 5), dict(axes=[(1, 2), (0,), (0,)])),
    (np.vecmat, (4, 5), (5, 4, 3), dict(axes=[(0,), (1, 2), (0,)])),
    (np.matmul, (4, 3, 2), (4, 3, 2), dict(axes=[(0, 1), (1, 0), (0, 1)])),
    (np.matmul, (4, 3, 2), (4, 3, 2), dict(axes=[(0, 1), (1, 0), (1, 0)])),
]


@pytest.mark.parametrize("func, sa, sb, kwargs", GUFUNC_CALLS)
def test_gufunc_core_axes_are_numpys(func, sa, sb, kwargs):
    rng = np.random.default_rng(len(sa) + len(sb))
    a, b = (rng.standard_normal(s).astype(np.float16) for s in (sa, sb))
    with sf.context(accumulator="fp32"):
        got = func(A(a), A(b), **kwargs)
    assert_same_bits(got, func(a, b, **kwargs), zeros_by_value=True)


def test_gufunc_keyword_errors_name_the_rule():
    x = A(np.ones((2, 2)))
    with pytest.raises(TypeError, match="axis= can only be used with a single shared core"):
        np.matmul(x, x, axis=0)
    with pytest.raises(TypeError, match="keepdims= can only be used where the output has no core"):
        np.matmul(x, x, keepdims=True)


def _norm_oracle(x, ord, axes, keepdims):
    wide = np.abs(x.astype(np.float64))
    with np.errstate(over="ignore"):
        if ord in (None, 2):
            return np.sqrt(np.sum(wide * wide, axis=axes, keepdims=keepdims).astype(np.float16))
        if ord == 1:
            return np.sum(wide, axis=axes, keepdims=keepdims).astype(np.float16)
    return (np.max if ord > 0 else np.min)(wide, axis=axes, keepdims=keepdims).astype(np.float16)


@settings(max_examples=60, deadline=None)
@given(x=np_arrays(np.float16, (3, 4, 2), elements=VALUES),
       axis=st.sampled_from([None, 1, -1, (0, 2), (2, 1, 0)]),
       ord=st.sampled_from([2, 1, np.inf, -np.inf]), keepdims=st.booleans())
def test_vector_norm_collapses_its_axes_as_numpy(x, axis, ord, keepdims):
    with sf.context(accumulator="fp64"):
        got = np.linalg.vector_norm(A(x), axis=axis, ord=ord, keepdims=keepdims)
    axes = tuple(range(3)) if axis is None else axis
    assert_same_bits(got, _norm_oracle(x, ord, axes, keepdims))


@settings(max_examples=40, deadline=None)
@given(x=np_arrays(np.float16, (2, 3, 4), elements=VALUES), ord=st.sampled_from(["fro", 1, -1, np.inf]),
       keepdims=st.booleans())
def test_matrix_norm_is_norm_over_the_last_two_axes(x, ord, keepdims):
    with sf.context(accumulator="fp64"):
        got = np.linalg.matrix_norm(A(x), ord=ord, keepdims=keepdims)
    wide = np.abs(x.astype(np.float64))
    if ord == "fro":
        expected = np.sqrt(np.sum(wide * wide, axis=(-2, -1), keepdims=keepdims).astype(np.float16))
    else:  # column sums (1, -1) or row sums (inf), each rounded once, then the largest/smallest
        sums = np.sum(wide, axis=-2 if ord in (1, -1) else -1, keepdims=True).astype(np.float16)
        expected = (np.max if ord > 0 else np.min)(sums, axis=-1 if ord in (1, -1) else -2, keepdims=True)
        expected = expected if keepdims else expected.reshape(expected.shape[:-2])
    assert_same_bits(got, expected)


EINSUMS = [("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]), ("ij,jk,kl,lm->im", [(2, 3), (3, 4), (4, 5), (5, 2)]),
           ("bij,bjk,bkl->bil", [(2, 3, 4), (2, 4, 5), (2, 5, 3)]), ("i,ij,j->", [(6,), (6, 7), (7,)]),
           ("ab,bc,cd,de,ef->af", [(4, 30), (30, 2), (2, 25), (25, 3), (3, 5)]), ("ij,kj,kl", [(3, 4), (5, 4), (5, 6)]),
           ("...ij,...jk,kl->...il", [(2, 3, 4), (1, 4, 5), (5, 6)]), ("iij,jk,k", [(3, 3, 4), (4, 2), (2,)])]


@pytest.mark.parametrize("optimize", [False, True, "greedy", "optimal"])
@pytest.mark.parametrize("equation, shapes", EINSUMS)
def test_einsum_of_several_operands_takes_numpys_pairs(equation, shapes, optimize):
    """Quarters in [-2, 2]: every sum is exact in float32, so numpy float16's einsum (its
    pairs as float16 matmuls, fp32-accumulated) rounds once per pair whatever order it
    sums in -- the rounding of each intermediate into fp16 is what the pairing decides.
    optimize=False (numpy's one float32 pass) is compared with numpy's left-to-right path."""
    rng = np.random.default_rng(len(shapes))
    ops = [(rng.integers(-8, 9, size=s) / 4).astype(np.float16) for s in shapes]
    with sf.context(accumulator="fp32"):
        got = np.einsum(equation, *[A(o) for o in ops], optimize=optimize)
    plan = ["einsum_path"] + [(0, 1)] * (len(ops) - 1) if optimize is False else optimize
    assert_same_bits(got, np.einsum(equation, *ops, optimize=plan), zeros_by_value=True)


def test_einsum_pairs_are_observable():
    rng = np.random.default_rng(1)
    ops = [(rng.integers(-8, 9, size=s) / 4).astype(np.float16) for s in ((4, 30), (30, 2), (2, 25), (25, 3), (3, 5))]
    with sf.context(accumulator="fp32"):
        left_to_right = np.einsum("ab,bc,cd,de,ef->af", *[A(o) for o in ops])
        greedy = np.einsum("ab,bc,cd,de,ef->af", *[A(o) for o in ops], optimize="greedy")
    assert not np.array_equal(left_to_right.bits, greedy.bits)


def test_einsum_path_plans_from_the_shapes():
    ops = [np.ones(s, np.float16) for s in ((4, 30), (30, 2), (2, 25))]
    assert np.einsum_path("ab,bc,cd->ad", *[A(o) for o in ops], optimize="optimal") == \
        np.einsum_path("ab,bc,cd->ad", *ops, optimize="optimal")


ONE_AND_TWO = [("ii->i", [(4, 4)]), ("ii", [(4, 4)]), ("iij->ij", [(3, 3, 4)]), ("iij,j->i", [(3, 3, 4), (4,)]),
               ("ij->", [(3, 4)]), ("ij,jk->i", [(3, 4), (4, 5)]), ("ijk,k->i", [(2, 3, 4), (4,)]),
               ("i,i->i", [(5,), (5,)]), ("i,j->ij", [(3,), (4,)]), ("...ij,jk->...ik", [(2, 3, 4, 5), (5, 6)]),
               ("...ij,...jk->...ik", [(2, 3, 4, 5), (1, 3, 5, 6)]), ("...j,j", [(2, 3, 5), (5,)]),
               ("ij...,jk...->ik...", [(4, 5, 2), (5, 3, 2)]), ("i...,i...->...", [(4, 3), (4, 1)]),
               ("...i->...", [(2, 3, 4)]), ("i...->...", [(2, 3, 4)])]


@pytest.mark.parametrize("equation, shapes", ONE_AND_TWO)
def test_einsum_diagonals_sums_and_ellipses_are_numpys(equation, shapes):
    """Quarters in [-2, 2] (exact float32 sums): numpy float16's einsum is the oracle
    whatever order it sums in."""
    rng = np.random.default_rng(len(equation))
    ops = [(rng.integers(-8, 9, size=s) / 4).astype(np.float16) for s in shapes]
    with sf.context(accumulator="fp32"):
        got = np.einsum(equation, *[A(o) for o in ops])
    assert_same_bits(got, np.einsum(equation, *ops), zeros_by_value=True)


def test_einsum_interleaved_form_is_the_same_equation():
    rng = np.random.default_rng(5)
    a, b = ((rng.integers(-8, 9, size=s) / 4).astype(np.float16) for s in ((3, 4), (4, 5)))
    with sf.context(accumulator="fp32"):
        got = np.einsum(A(a), [0, 1], A(b), [1, 2], [0, 2])
        trace = np.einsum(A(a[:, :3]), [0, 0])
    assert_same_bits(got, np.einsum(a, [0, 1], b, [1, 2], [0, 2]), zeros_by_value=True)
    assert_same_bits(trace, np.einsum(a[:, :3], [0, 0]), zeros_by_value=True)
