"""numpy.linalg on :class:`~softfloat.Array`: the functions that are chains of products
or norms, in numpy's own order, and numpy.linalg's spellings of functions mapped elsewhere.

* ``multi_dot``: numpy's cheapest order of the chain (its cost rule for three matrices,
  its dynamic programme for more, ties to the first split), each product an Array matmul
  (the context's accumulator, rounded once into the format);
* ``matrix_power``: numpy's products by the bits of n (n = 2, 3 as a @ a and
  (a @ a) @ a, then repeated squares multiplied into the result from the lowest bit);
  a negative power needs an inverse and is refused;
* ``vecdot``, ``vector_norm``, ``matrix_norm``: ``np.vecdot`` and ``np.linalg.norm``
  on the axes numpy's definitions give them.

The factorisations (solve, inv, eig, svd, ...) are refused in ``softfloat._array_coverage``.
Every implementation calls numpy's own functions on Arrays, so each step goes through
the Array's mapping; none reaches float64.
"""

from __future__ import annotations

import operator

import numpy as np

from . import codec
from ._array_keywords import axes_of
from ._array_registry import deliver, implements, unsupported

__all__ = ["chain_order"]


@implements(np.linalg.multi_dot)
def multi_dot(A, arrays, *, out=None):
    """numpy's multi_dot: the chain in numpy's order of products (see the module)."""
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("numpy.linalg.multi_dot: expecting at least two arrays")
    if len(arrays) == 2:
        result = np.dot(arrays[0], arrays[1])
    else:
        fmt, bits = A.common(*arrays)
        mats = [A.wrap(b, fmt) for b in bits]
        first, last = mats[0].ndim, mats[-1].ndim
        if first == 1:
            mats[0] = mats[0].reshape(1, mats[0].size)
        if last == 1:
            mats[-1] = mats[-1].reshape(mats[-1].size, 1)
        for m in mats:
            if m.ndim != 2:
                raise np.linalg.LinAlgError(f"{m.ndim}-dimensional array given. Array must be two-dimensional")
        split = chain_order([m.shape for m in mats])
        result = _chain(mats, split, 0, len(mats) - 1)
        if first == 1 and last == 1:
            result = result[0, 0]
        elif first == 1 or last == 1:
            result = result.reshape(-1)
    return deliver(A, result, out, "linalg.multi_dot")


def chain_order(shapes) -> dict:
    """numpy's split of a matrix chain: ``{(i, j): k}`` -- the product of matrices i..j is
    (i..k) @ (k+1..j).  Three matrices: numpy's cost comparison (A B) C against A (B C),
    ties to A (B C); more: its dynamic programme over scalar multiplications, ties to the
    first k.

    >>> chain_order([(10, 100), (100, 5), (5, 50)])[(0, 2)]   # (A B) C
    1
    """
    n = len(shapes)
    if n == 3:
        (a0, a1), _, (c0, c1) = shapes
        return {(0, 2): 1 if a0 * c0 * (a1 + c1) < a1 * c1 * (a0 + c0) else 0, (1, 2): 1, (0, 1): 0}
    p = [s[0] for s in shapes] + [shapes[-1][1]]
    cost = {(i, i): 0 for i in range(n)}
    split = {}
    for span in range(1, n):
        for i in range(n - span):
            j = i + span
            cost[i, j] = None
            for k in range(i, j):
                q = cost[i, k] + cost[k + 1, j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i, j] is None or q < cost[i, j]:
                    cost[i, j], split[i, j] = q, k
    return split


def _chain(mats, split, i, j):
    if i == j:
        return mats[i]
    k = split[i, j]
    return np.dot(_chain(mats, split, i, k), _chain(mats, split, k + 1, j))


@implements(np.linalg.matrix_power)
def matrix_power(A, a, n):
    """numpy's matrix_power: products by the bits of ``n`` (see the module); n = 0 the
    identity in the format, n = 1 ``a`` itself (numpy's own result for both)."""
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"numpy.linalg.matrix_power: exponent must be an integer; got "
                        f"{type(n).__name__}") from None
    if n < 0:
        raise unsupported("linalg.matrix_power", "a negative power needs the inverse, a LAPACK factorisation in "
                          "float64: no correctly rounded emulation")
    if n == 0:
        one = np.asarray(codec.encode(1.0, a.format), a.format.storage_dtype)
        eye = np.where(np.eye(a.shape[-1], dtype=bool), one, a.format.storage_dtype.type(0))
        return A.wrap(np.broadcast_to(eye, a.shape).copy(), a.format)
    if n <= 3:
        result = a
        for _ in range(n - 1):
            result = np.matmul(result, a)
        return result
    square = result = None
    while n > 0:
        square = a if square is None else np.matmul(square, square)
        n, bit = divmod(n, 2)
        if bit:
            result = square if result is None else np.matmul(result, square)
    return result


@implements(np.linalg.vecdot)
def vecdot(A, x1, x2, /, *, axis=-1):
    """``np.vecdot(x1, x2, axis=axis)`` (numpy.linalg's is that ufunc)."""
    return np.vecdot(x1, x2, axis=axis)


@implements(np.linalg.vector_norm)
def vector_norm(A, x, /, *, axis=None, keepdims=False, ord=2):
    """numpy's vector_norm: the axes collapsed into one (all of them for None), then
    ``np.linalg.norm``'s vector norm of ``ord`` along it."""
    axes = axes_of(x.ndim, axis)
    rest = [d for d in range(x.ndim) if d not in axes]
    count = int(np.prod([x.shape[d] for d in axes], dtype=np.int64))
    flat = np.transpose(x, list(axes) + rest).reshape((count, *[x.shape[d] for d in rest]))
    result = np.linalg.norm(flat, ord=ord, axis=0)
    if keepdims:
        result = result.reshape([1 if d in axes else x.shape[d] for d in range(x.ndim)])
    return result


@implements(np.linalg.matrix_norm)
def matrix_norm(A, x, /, *, keepdims=False, ord="fro"):
    """``np.linalg.norm(x, ord, axis=(-2, -1))`` (numpy's definition)."""
    return np.linalg.norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


# ---- numpy.linalg's spellings of functions mapped elsewhere --------------------------------
@implements(np.linalg.matmul)
def linalg_matmul(A, x1, x2):
    return np.matmul(x1, x2)


@implements(np.linalg.tensordot)
def linalg_tensordot(A, x1, x2, axes=2):
    return np.tensordot(x1, x2, axes=axes)


@implements(np.linalg.outer)
def linalg_outer(A, x1, x2):
    return np.outer(x1, x2)


@implements(np.linalg.cross)
def linalg_cross(A, x1, x2, axis=-1):
    return np.cross(x1, x2, axis=axis)


@implements(np.linalg.trace)
def linalg_trace(A, x, offset=0, dtype=None):
    return np.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


@implements(np.linalg.diagonal)
def linalg_diagonal(A, x, offset=0):
    return np.diagonal(x, offset=offset, axis1=-2, axis2=-1)


@implements(np.linalg.matrix_transpose)
def linalg_matrix_transpose(A, x):
    return np.swapaxes(x, -1, -2)
