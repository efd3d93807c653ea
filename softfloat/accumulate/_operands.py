"""Operands of a reduction: checked, laid out k-major, and cut into tiles of output elements.

Every reduction becomes "for each output element q, the terms t_0 .. t_{K-1}", where each
term is x (a sum) or x * y (a product).  Two layouts serve the three functions:

* paired (sum, vecdot): bit patterns transposed once to ``(K, Q)``, so that the k-th
  terms of a run of outputs are one contiguous row slice; decoded chunk by chunk, since
  each input is used once;
* outer (matmul): values decoded once (each input is used N or M times), A transposed to
  ``(batch, K, M)``; the k-th terms of a tile of rows are the outer product of a column
  slice of A and a row slice of B.

Each operand is decoded with its own format (``formats``: x's and y's, or a's and b's,
which differ for a product of two formats).

A tile is a run of consecutive output elements (whole rows of a matrix product, or part
of one row), so that its flat output indices are ``q0 .. q0 + n - 1``; the engines keep
its running sums in block-sized buffers.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from .. import _scratch, _validate
from .._decode import decode_block
from .._workspace import BLOCK_SIZE, Workspace
from ..formats import Format, Specials

__all__ = ["Layout", "Tile", "addition_swamped", "any_down", "inexact_any", "inexact_columns",
           "initial_values", "invalid_products", "matmul_layout", "matmul_as_paired", "paired_layout",
           "reshaped", "steps_swamped"]


@dataclass
class Tile:
    """A run of output elements and the way to their terms."""

    layout: "Layout"
    q0: int
    shape: tuple[int, ...]  # the tile's own shape: (n,) or (rows, cols)
    where: tuple  # index of the tile in the batched output array

    @property
    def n(self) -> int:
        return math.prod(self.shape)

    def factors(self, k0: int, k1: int, transient: bool = False, dtype=np.float64):
        """Terms k0 .. k1-1 as (X, Y): float64 arrays with a leading k axis that broadcast to
        ``(k1 - k0,) + shape`` (Y is None for a sum).  ``transient``: the caller is done
        with them before it asks for more (they may live in the thread's scratch buffers).
        ``dtype``: a narrower float that holds the format, if the layout can give it."""
        return self.layout.factors(self, k0, k1, transient, dtype)


class Layout:
    """Result shape, K, and the term source; see the module docstring."""

    shape: tuple[int, ...]
    K: int
    is_product: bool
    outer: bool = False
    formats: tuple  # (x's or a's format, y's or b's format; None for a sum)

    def magnitude_ranges(self):
        """((smallest non-zero, largest) |x|, the same for y) over the inputs, or None when
        one of them is an infinity or a NaN (zeros count as the smallest non-zero: 1)."""
        raise NotImplementedError

    def tiles(self, size: int):
        raise NotImplementedError

    def factors(self, tile: Tile, k0: int, k1: int, transient: bool = False, dtype=np.float64):
        raise NotImplementedError


class _Paired(Layout):
    def __init__(self, shape, x_bits, y_bits, formats):
        self.shape = shape
        self.formats = formats
        self.fmt, self.y_fmt = formats
        self.K = x_bits.shape[0]
        self.Q = x_bits.shape[1]
        self.x_bits, self.y_bits = x_bits, y_bits
        self.is_product = y_bits is not None
        self._ws = Workspace(BLOCK_SIZE)

    def magnitude_ranges(self):
        ranges = []
        for bits, fmt in ((b, f) for b, f in zip((self.x_bits, self.y_bits), self.formats) if b is not None):
            mag = bits & bits.dtype.type(fmt.sign_mask - 1)
            if mag.size and mag.max() > fmt.max_finite_bits:
                return None
            if fmt.specials is Specials.FNUZ and np.any(bits == fmt.nan_bits):
                return None
            nonzero = mag[mag != 0]
            if not nonzero.size:
                ranges.append((1.0, 0.0))
                continue
            lo, hi = decode_block(np.array([nonzero.min(), nonzero.max()]), fmt)
            ranges.append((float(lo), float(hi)))
        return ranges

    def tiles(self, size):
        for q0 in range(0, self.Q, size):
            n = min(size, self.Q - q0)
            yield Tile(self, q0, (n,), (slice(q0, q0 + n),))

    def patterns(self, tile, k0, k1):
        """The bit patterns of x's terms k0 .. k1-1 (rows) for the tile's outputs."""
        return self.x_bits[k0:k1, tile.where[0]]

    def factors(self, tile, k0, k1, transient=False, dtype=np.float64):
        sl = tile.where[0]
        x = _decode(self.x_bits[k0:k1, sl], self.fmt, "paired-x" if transient else None, dtype)
        y = None if self.y_bits is None else _decode(self.y_bits[k0:k1, sl], self.y_fmt,
                                                     "paired-y" if transient else None, dtype)
        return x, y


class _Outer(Layout):
    def __init__(self, shape, formats, a_bits_t, b_bits, batch_pairs, M, N):
        self.shape = shape
        self.formats = formats
        self.fmt, self.b_fmt = formats
        self.a_bits_t, self.b_bits = a_bits_t, b_bits  # (Ba, K, M) and (Bb, K, N) patterns
        self._values = {}
        self.pairs = batch_pairs
        self.M, self.N = M, N
        self.K = b_bits.shape[1]
        self.is_product = True
        self.outer = True

    def values(self, dtype=np.float64):
        """(A transposed, B) as exact values in ``dtype`` (float64, or a narrower float
        that holds both formats), decoded once per call: each is used N or M times."""
        dtype = np.dtype(dtype)
        got = self._values.get(dtype)
        if got is None:
            got = self._values[dtype] = (_decode(self.a_bits_t, self.fmt, "matmul-a", dtype),
                                         _decode(self.b_bits, self.b_fmt, "matmul-b", dtype))
        return got

    def magnitude_ranges(self):
        ranges = []
        for values in self.values():
            mag = np.abs(values)
            if mag.size and not np.isfinite(mag).all():
                return None
            nonzero = mag[mag != 0]
            ranges.append((float(nonzero.min()), float(nonzero.max())) if nonzero.size else (1.0, 0.0))
        return ranges

    def tiles(self, size):
        M, N = self.M, self.N
        rows = max(1, size // max(N, 1))
        cols = max(1, min(N, size))  # (N = 0: no tiles)
        for t, _ in enumerate(self.pairs):
            for i0 in range(0, M, rows):
                i1 = min(i0 + rows, M)
                for j0 in range(0, N, cols):
                    j1 = min(j0 + cols, N)
                    yield Tile(self, (t * M + i0) * N + j0, (i1 - i0, j1 - j0),
                               (t, slice(i0, i1), slice(j0, j1)))

    def factors(self, tile, k0, k1, transient=False, dtype=np.float64):
        t, rows, cols = tile.where
        ia, ib = self.pairs[t]
        a_t, b = self.values(dtype)
        return a_t[ia, k0:k1, rows, None], b[ib, k0:k1, None, cols]


def invalid_products(X, Y, t):
    """0 * inf: the NaN products (``t``, flat) of factors that are not NaNs, flat; None
    where there are none."""
    nan = np.isnan(t)
    if not nan.any():
        return None
    x, y = np.broadcast_arrays(X, Y)
    return nan & ~np.isnan(x).reshape(-1) & ~np.isnan(y).reshape(-1)


def addition_swamped(a, b, r, symmetric=False):
    """The swamped mask of the additions r = a + b, as
    :func:`softfloat.ops.kernels.addition_flags` makes it, without the other flags: a
    non-zero finite b left a finite a unchanged (``symmetric``: or the other way round).
    (Where r is finite, so are a and b: the finiteness tests change nothing there.)"""
    finite = np.isfinite(a) & np.isfinite(b)
    swamped = (r == a) & (b != 0)
    if symmetric:
        swamped |= (r == b) & (a != 0)
    return swamped & finite


def steps_swamped(rows, b, factors=None):
    """The swamped counts per output of the steps r = a + b, a = rows[:-1], r = rows[1:],
    every running sum finite (int64, or None for no steps): the count of r == a less the
    zero terms (from ``b``, or from the ``factors`` (X, Y) of a matrix product's terms),
    as ``softfloat.accumulate._fast._steps_flags`` counts them (the proof there)."""
    a, r = rows[:-1], rows[1:]
    steps, n = r.shape
    if not steps:
        return None
    kept = _scratch.buffer("chain-kept", np.bool_, steps * n).reshape(steps, n)
    np.equal(r, a, out=kept)
    swamped = _column_counts(kept)
    zeros = _zero_counts(b, factors)
    if zeros is not None:
        swamped -= zeros
    return swamped


def any_down(mask):
    """Per column, whether any row of the C-contiguous boolean (rows, n) ``mask`` is True:
    8 columns a uint64 word where n is a multiple of 8 (each byte 0 or 1, so the OR of
    the words is, byte by byte, the OR of the columns)."""
    if mask.shape[1] % 8 == 0 and mask.flags.c_contiguous:  # (a new array: not a view of mask)
        return np.bitwise_or.reduce(mask.view(np.uint64), axis=0).view(np.bool_)
    return mask.any(axis=0)


def inexact_columns(a, b, r, todo):
    """Per column, whether any step (row) of r = a + b is inexact, looked at only in the
    columns ``todo`` (the others: False here, already inexact), blocks of rows at a time
    until none is left (softfloat.accumulate._fast._steps_flags, _odd.running_sums).  Over an eighth of the columns left:
    whole rows (a gather costs several times the arithmetic), hits masked by ``todo``;
    fewer: gathered.  Either way the same OR over the steps of the same tests."""
    steps, n = r.shape
    found = np.zeros(n, dtype=bool)
    k0, size = 0, 4
    while k0 < steps:
        idx = np.flatnonzero(todo)
        if not idx.size:
            break
        whole = 8 * idx.size > n
        # the rest at once: many columns left after the first block (steps often exact, as
        # bf16 products into fp32), or few values to gather (cheaper than another block)
        k1 = steps if (whole and k0) or idx.size * (steps - k0) <= 4096 else min(steps, k0 + size)
        if whole:  # many columns: whole rows, no gathering
            ra, aa, bb = r[k0:k1], a[k0:k1], b[k0:k1]
        else:  # (np.take: several times faster than fancy indexing [:, idx])
            ra, aa, bb = (np.take(x[k0:k1], idx, axis=1) for x in (r, a, b))
        hit = inexact_any(ra, aa, bb)
        if whole:
            hit &= todo
            found |= hit
        else:
            hit = idx[hit]
            found[hit] = True
        todo[hit] = False
        k0, size = k1, 4 * size
    return found


def inexact_any(r, a, b):
    """Per column of the (steps, m) rows, whether any step r = a + b is inexact:
    (r - a != b) | (r - b != a) at some step.

    An OR over the steps of an OR of two tests is the OR of each test's OR over the
    steps: the first everywhere (it settles most columns: the running sum is mostly the
    larger operand), the second in the columns it left (gathered, or whole rows if many)."""
    diff = _scratch.buffer("inexact-diff", r.dtype, r.size).reshape(r.shape)
    hit = _scratch.buffer("inexact-hit", np.bool_, r.size).reshape(r.shape)
    np.not_equal(np.subtract(r, a, out=diff), b, out=hit)
    found = any_down(hit)
    rest = np.flatnonzero(~found)
    if 8 * rest.size > found.size:  # many left (steps mostly exact): whole rows again
        np.not_equal(np.subtract(r, b, out=diff), a, out=hit)
        found |= any_down(hit)
    elif rest.size:
        rr, aa, bb = (np.take(x, rest, axis=1) for x in (r, a, b))
        found[rest] = any_down(np.not_equal(rr - bb, aa))
    return found


def _column_counts(mask):
    """The True entries of each column of a C-contiguous boolean (rows, n) mask, int64.

    Fewer than 256 rows and n a multiple of 8: the rows are added as uint64 words, each
    byte a column's count (at most rows < 256: no carry into the next byte), read back
    as bytes -- in the machine's byte order, the same for the words and their bytes."""
    rows, n = mask.shape
    if rows < 256 and n % 8 == 0:
        return np.add.reduce(mask.view(np.uint64), axis=0).view(np.uint8).astype(np.int64)
    if rows < 256:  # a uint8 sum cannot wrap; summed a row after another
        return np.add.reduce(mask.view(np.uint8), axis=0, dtype=np.uint8).astype(np.int64)
    return np.count_nonzero(mask, axis=0).astype(np.int64)


def _zero_counts(b, factors):
    """Per column, the zero terms among rows ``b`` (None where there are none)."""
    if factors is None:
        if b.all():
            return None
        return _column_counts(np.ascontiguousarray(b == 0))
    X, Y = factors
    zx, zy = X == 0, Y == 0
    if not (zx.any() or zy.any()):
        return None
    # |zx_i or zy_j| = |zx_i| + |zy_j| - |zx_i and zy_j|, the last a product of 0/1 masks
    both = zx.T.astype(np.float64) @ zy.astype(np.float64)
    counts = zx.sum(axis=0)[:, None] + zy.sum(axis=0)[None, :] - both.astype(np.int64)
    return counts.reshape(-1)


def _in_memory_order(a):
    """(flat, shaped): ``a``'s elements as a 1-D array in the order they lie in memory (a
    view where ``a`` is a transposed contiguous array: no transposing copy), and the
    function that gives a flat array of that order ``a``'s shape and axis order back."""
    if a.ndim < 2 or a.flags.c_contiguous:
        return a.reshape(-1), lambda flat: flat.reshape(a.shape)
    axes = sorted(range(a.ndim), key=lambda d: -abs(a.strides[d]))  # outermost first
    permuted = a.transpose(axes)
    if not permuted.flags.c_contiguous:  # strided or broadcast: a copy in C order
        return np.ascontiguousarray(a).reshape(-1), lambda flat: flat.reshape(a.shape)
    inverse = np.argsort(axes)
    return permuted.reshape(-1), lambda flat: flat.reshape(permuted.shape).transpose(inverse)


def _decode(bits, fmt, scratch=None, dtype=np.float64):
    """Exact values of bit patterns (any shape, in their memory order) as ``dtype``
    (float64, or a float that holds fmt), BLOCK_SIZE patterns at a time: a whole-array
    decode would make index and scratch temporaries of the array's size (and fresh memory
    for them on every call).  ``scratch`` names a thread's buffer (softfloat._scratch) to
    hold them, for values that live only during the call."""
    flat, shaped = _in_memory_order(bits)
    out = np.empty(flat.size, dtype=dtype) if scratch is None else _scratch.buffer(scratch, dtype, flat.size)
    ws = Workspace(min(flat.size, BLOCK_SIZE))
    for start in range(0, flat.size, BLOCK_SIZE):
        stop = min(start + BLOCK_SIZE, flat.size)
        decode_block(flat[start:stop], fmt, out[start:stop], ws)
    return shaped(out)


def _patterns(name, value, fmt):
    return _validate.bit_patterns(name, value, fmt.bits).astype(fmt.storage_dtype, copy=False)


def _signaling(bits, fmt):
    """Signalling NaN patterns (IEEE formats only: the others have no signalling NaN).

    Block by block into a zeroed mask, which is written only where a block holds a NaN
    (rarely): no temporaries of the array's size."""
    if fmt.specials is not Specials.IEEE or not bits.size:
        return np.zeros(bits.shape, dtype=bool)
    sign = fmt.storage_dtype.type(fmt.sign_mask - 1)
    quiet = fmt.storage_dtype.type(1 << (fmt.mantissa_bits - 1))
    if bits.size <= BLOCK_SIZE:  # one block: the comparison itself is the only temporary
        mag = bits & sign
        nan = mag > fmt.exponent_mask
        return nan & ((mag & quiet) == 0) if nan.any() else np.zeros(bits.shape, dtype=bool)
    flat, shaped = _in_memory_order(bits)
    mask = np.zeros(flat.size, dtype=bool)
    out = shaped(mask)
    for start in range(0, flat.size, BLOCK_SIZE):
        mag = flat[start:start + BLOCK_SIZE] & sign
        nan = mag > fmt.exponent_mask
        if nan.any():
            np.logical_and(nan, (mag & quiet) == 0, out=mask[start:start + BLOCK_SIZE])
    return out


def _axes(axis, ndim):
    """Normalise ``axis`` (None, int or tuple of ints) for an array of ``ndim`` dimensions."""
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for a in items:
        a = _validate.axis_number(axis, a)  # numpy refuses axis=True, and so does softfloat: not axis 1
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} is out of bounds for an array of {_validate.counted(ndim, 'dimension')}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"axis={axis!r} repeats an axis")
    return tuple(sorted(out))  # the terms in C order, however the tuple lists the axes


def paired_layout(fmt: Format, x, y=None, *, axis, keepdims=False, names=("x", "y"), y_fmt=None):
    """Layout of a sum (``y`` None: reduce ``axis``, an int, tuple or None) or of a vecdot
    (contract ``axis``, an int, of x and y after broadcasting the other axes); ``y_fmt``
    is y's format (default ``fmt``).

    Returns the layout, the signalling-NaN mask per output element and the result shape.
    """
    x = _patterns(names[0], x, fmt)
    if y is None:
        axes = _axes(axis, x.ndim)
        keep = [d for d in range(x.ndim) if d not in axes]
        moved = np.transpose(x, axes + tuple(keep))
        out_shape = tuple(x.shape[d] for d in keep)
        K = math.prod([x.shape[d] for d in axes])
        x_bits = np.ascontiguousarray(moved).reshape(K, math.prod(out_shape))
        y_bits = None
        signaling = _signaling(x_bits, fmt).any(axis=0) if K else np.zeros(x_bits.shape[1], bool)
        if keepdims:
            out_shape = tuple(1 if d in axes else x.shape[d] for d in range(x.ndim))
    else:
        y_fmt = fmt if y_fmt is None else y_fmt
        y = _patterns(names[1], y, y_fmt)
        if x.ndim == 0 or y.ndim == 0:
            raise ValueError(f"vecdot needs arrays of at least one dimension; got {names[0]} of shape "
                             f"{x.shape} and {names[1]} of shape {y.shape}")
        ax = _validate.axis_number(axis, axis, "an int")
        for name, arr in ((names[0], x), (names[1], y)):
            if not -arr.ndim <= ax < arr.ndim:
                raise ValueError(f"axis {ax} is out of bounds for {name} of shape {arr.shape}")
        xm, ym = np.moveaxis(x, ax, -1), np.moveaxis(y, ax, -1)
        if xm.shape[-1] != ym.shape[-1]:
            raise ValueError(f"vecdot: the contracted axis has length {xm.shape[-1]} in {names[0]} "
                             f"(shape {x.shape}) but {ym.shape[-1]} in {names[1]} (shape {y.shape})")
        try:
            out_shape = np.broadcast_shapes(xm.shape[:-1], ym.shape[:-1])
        except ValueError:
            raise ValueError(f"vecdot: {names[0]} of shape {x.shape} and {names[1]} of shape {y.shape} "
                             f"do not broadcast outside axis {ax}") from None
        K = xm.shape[-1]
        Q = math.prod(out_shape)
        x_bits, y_bits = (np.ascontiguousarray(np.moveaxis(np.broadcast_to(m, out_shape + (K,)), -1, 0))
                          .reshape(K, Q) for m in (xm, ym))
        signaling = (_signaling(x_bits, fmt) | _signaling(y_bits, y_fmt)).any(axis=0)
    layout = _Paired(tuple(out_shape), x_bits, y_bits, (fmt, y_fmt))
    return layout, signaling.reshape(out_shape)


def matmul_layout(fmt: Format, a, b, b_fmt=None):
    """Layout of numpy's matmul: (..., M, K) @ (..., K, N), 1-d operands promoted and their
    axis removed from the result, batch axes broadcast; ``b_fmt`` is b's format (default
    ``fmt``)."""
    b_fmt = fmt if b_fmt is None else b_fmt
    a = _patterns("a", a, fmt)
    b = _patterns("b", b, b_fmt)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul needs arrays of at least one dimension; got a of shape {a.shape} "
                         f"and b of shape {b.shape} (use softfloat.mul for scalars)")
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    M, K = a2.shape[-2:]
    K2, N = b2.shape[-2:]
    if K != K2:
        raise ValueError(f"matmul: a has {K} columns (shape {a.shape}) but b has {K2} rows "
                         f"(shape {b.shape}); the contracted lengths must match")
    try:
        batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    except ValueError:
        raise ValueError(f"matmul: the batch axes of a {a.shape} and b {b.shape} do not broadcast") from None
    shape = batch + (M, N)
    if a.ndim == 1:
        shape = shape[:-2] + (N,)
    if b.ndim == 1:
        shape = shape[:-1]
    a3 = a2.reshape((math.prod(a2.shape[:-2]), M, K))
    b3 = b2.reshape((math.prod(b2.shape[:-2]), K, N))
    ia = np.broadcast_to(np.arange(a3.shape[0]).reshape(a2.shape[:-2] or ()), batch).reshape(-1)
    ib = np.broadcast_to(np.arange(b3.shape[0]).reshape(b2.shape[:-2] or ()), batch).reshape(-1)
    sa = _signaling(a3, fmt).any(axis=2)  # (Ba, M)
    sb = _signaling(b3, b_fmt).any(axis=1)  # (Bb, N)
    signaling = (sa[ia][:, :, None] | sb[ib][:, None, :]).reshape(shape)
    # A transposed and B, each in C order as patterns (2 bytes a value, not 8; no copy
    # where a is a transposed matrix): the products run along a tile's columns (B's rows)
    # or, in a tile with few columns, along its rows (A's columns)
    a_bits_t = np.ascontiguousarray(np.swapaxes(a3, 1, 2))
    layout = _Outer(shape, (fmt, b_fmt), a_bits_t, np.ascontiguousarray(b3), list(zip(ia.tolist(), ib.tolist())), M, N)
    return layout, signaling


def matmul_as_paired(a, b):
    """A batched matmul of pattern arrays whose dot products, laid out paired, take no more
    room than the operands -- rows or columns of vectors, (..., 1, K) @ (..., K, N) or
    (..., M, K) @ (..., K, 1), as np.vecdot, np.matvec and einsum's "ij,ij->i" make --
    as the operands of a vecdot along the last axis: ``(x, y)``, broadcast views of shape
    ``result shape + (K,)``, where ``x[..., q, :]`` is row i of a's batch element and
    ``y[..., q, :]`` column j of b's, for each output q = (batch, i, j) in C order.  So
    every output has the same terms a_ik * b_kj in the same order (k ascending) and the
    same flat index as in the outer layout, which makes a tile of each batch element
    (tens of microseconds for a few outputs each): the paired layout cuts the whole batch
    into tiles of BLOCK_SIZE outputs.  None for anything else (a single batch element,
    K = 0, an empty result, more room than the operands, and any operand matmul_layout
    would refuse: it says why)."""
    if type(a) is not np.ndarray or type(b) is not np.ndarray or a.dtype.kind not in "ui" \
            or b.dtype.kind not in "ui" or not a.ndim or not b.ndim or max(a.ndim, b.ndim) < 3:
        return None
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    (M, K), (K2, N) = a2.shape[-2:], b2.shape[-2:]
    try:
        batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    except ValueError:
        return None
    Q = math.prod(batch) * M * N
    if K != K2 or not K or not Q or math.prod(batch) < 2 or Q * K > a.size + b.size:
        return None
    shape = batch + ((M,) if a.ndim > 1 else ()) + ((N,) if b.ndim > 1 else ())  # matmul's: 1-d axes removed
    full = batch + (M, N, K)
    x = np.broadcast_to(a2[..., :, None, :], full).reshape(shape + (K,))
    y = np.broadcast_to(np.swapaxes(b2, -1, -2)[..., None, :, :], full).reshape(shape + (K,))
    return x, y


def initial_values(c, out_format: Format, shape):
    """``c`` (bit patterns of out_format, broadcast to the result shape) as flat exact
    float64 values, or None."""
    if c is None:
        return None
    bits = _patterns("c", c, out_format)
    try:
        if np.broadcast_shapes(bits.shape, shape) != tuple(shape):
            raise ValueError
    except ValueError:
        raise ValueError(f"c of shape {bits.shape} does not broadcast to the result shape {tuple(shape)}") from None
    flat = np.ascontiguousarray(np.broadcast_to(bits, shape)).reshape(-1)
    return _decode(flat, out_format, "initial-values"), _signaling(flat, out_format)


def reshaped(result, shape):
    """A result (bits, or bits and its flags or swamped counts) in ``shape`` (a
    one-output reduction's with the shape ``keepdims`` or a matmul's layout gives)."""
    if not isinstance(result, tuple):
        return np.reshape(result, shape)
    bits, flags = result
    if not dataclasses.is_dataclass(flags):  # return_flags="swamped": the count
        return np.reshape(bits, shape), np.reshape(flags, shape)
    masks = {f.name: np.reshape(getattr(flags, f.name), shape) for f in dataclasses.fields(flags)
             if getattr(flags, f.name) is not None}
    return np.reshape(bits, shape), type(flags)(**masks)
