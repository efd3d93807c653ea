"""Native fast paths: numpy's own float32, float16 and float64 arithmetic where it is
provably the same as the correctly rounded definition.

Conditions (all of them; ``plan`` checks each and returns None otherwise):

* round to nearest even, gradual underflow, no saturation (numpy overflows to infinity)
  and no stochastic draws (flags are derived
  from each addition's operands and result:
  :func:`softfloat.ops.kernels.addition_flags`);
* the accumulator is fp32, fp16 or fp64, so a numpy addition of two accumulator values
  is one IEEE addition in it (fp16: numpy adds in float32 and rounds once to float16,
  which is a single correct rounding by Figueroa's theorem, since 24 >= 2 * 11 + 2;
  ``tests/test_accumulate_paths.py`` checks this on the platform);
* every term is exactly a value of the accumulator's dtype, so adding it is the fused
  "s + t_k rounded once":
  - sums: the input format fits in the accumulator;
  - exact products (``product=None``): products of the input format are exact in float64
    (precision <= 24, exponents <= 8 bits) and, for fp32/fp16 accumulators, exact in that
    dtype -- by the format (fp16, FP8, FP6, FP4 products into fp32) or, for bf16 and tf32,
    by the data: every non-zero product lies in [2**(-150 + 2p), max], checked from the
    smallest and largest input magnitudes before any work;
  - ``product`` equal to the accumulator (fp32 or fp64): the product rounded by numpy's
    own multiply (float64) or its float64 -> float32 cast, both correctly rounded -- with
    no flags or the swamped counts alone (the products' own flags are the general path's);
* ``c``, ``block`` runs and the final result stay in the accumulator (out_format equal
  to it; or narrower without blocks, the final rounding to nearest even then done by the
  rounding point).

Products that are not values of an fp32, fp16 or bf16 accumulator (fp32 x fp32 into fp32,
fp16 into fp16, bf16 into bf16, bf16/tf32 below fp32's range) take :class:`RoundedSteps`
in the sequential and reverse orders without blocks: exact products in float64 (float32
for fp16), each step rounded once by softfloat.accumulate._odd -- in every deterministic
mode but round-to-odd, the native plans being for nearest even only; under stochastic
rounding (fp32, fp16, bf16 accumulators; sums of a narrow format too),
:class:`StochasticRoundedSteps`: each step's
float64 sum rounded by bits with the general path's draws, softfloat.accumulate.
_odd_stochastic (the steps it cannot decide from the float64 sum go to the general
arithmetic).

Where only the swamped counts are asked for (``return_flags="swamped"``), the plans count
them alone -- per step, r == a less the zero terms (:func:`_steps_flags`) -- without the
inexact tests or any other mask.

Every fast result is checked bit for bit against the general path in the tests.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _fastpaths, _scratch
from .._encode import encode_block
from .._flagmasks import FlagMasks
from .._workspace import Workspace
from ..formats import Format, fp32, fp64
from ..ops.kernels import addition_flags, is_narrow
from ..rounding import Rounding
from . import _draws, _odd, _odd_stochastic
from ._operands import addition_swamped, inexact_columns, invalid_products, steps_swamped

__all__ = ["Declined", "Native", "RoundedSteps", "StochasticRoundedSteps", "plan", "products_fit_by_format",
           "rounded_products_dtype", "running_sums", "sum_rows"]


def products_fit_by_format(fmt: Format, acc: Format, b_format: Format | None = None) -> bool:
    """Is every product of two ``fmt`` values -- or of an ``fmt`` and a ``b_format`` value
    (FP8 e4m3 x e5m2) -- exactly a value of ``acc`` (by the formats)?  Its significand has
    at most the two precisions' bits, its last bit lies at 2**(emin - mantissa_bits) of
    each, summed, or above, and it is at most the two largest values' product."""
    fb = fmt if b_format is None else b_format
    if acc == fp64 and b_format is None:
        return is_narrow(fmt)
    if fmt.precision + fb.precision > acc.precision:
        return False
    lowest = (fmt.emin - fmt.mantissa_bits) + (fb.emin - fb.mantissa_bits)  # the smallest product's last bit
    return lowest >= acc.emin - acc.mantissa_bits and fmt.max_finite * fb.max_finite <= acc.max_finite


def rounded_products_dtype(fmt: Format, dtype):
    """The dtype in which softfloat.accumulate._odd takes the exact products of ``fmt``
    values into an accumulator of numpy ``dtype``: float32 for float16 where every product
    is a float32 value (fp16, FP8: its float16 sums cost ten times float32's), else float64
    (``fmt`` narrow: softfloat.ops.kernels.is_narrow)."""
    return np.float32 if dtype == np.float16 and products_fit_by_format(fmt, fp32) else np.float64


def _products_fit(fmt: Format, acc: Format, layout) -> bool:
    """Are all products of the inputs exactly values of ``acc`` (by the formats, or by the
    smallest and largest magnitudes of the data)?"""
    if products_fit_by_format(fmt, acc):
        return True
    if acc == fp64 or 2 * fmt.precision > acc.precision:
        return False
    ranges = layout.magnitude_ranges()  # per operand: smallest non-zero, largest |value|
    if ranges is None:  # an infinity or NaN among the inputs
        return False
    (lo_a, hi_a), (lo_b, hi_b) = ranges
    floor = 2.0 ** (acc.emin - acc.mantissa_bits - 1 + 2 * fmt.precision)
    return lo_a * lo_b >= floor and hi_a * hi_b <= acc.max_finite


def plan(spec, layout):
    """A :class:`Native` arithmetic for this call, or None where the general path must run
    (also whenever softfloat._fastpaths.ENABLED, the one off switch of the shortcuts, is
    False)."""
    acc = spec.acc
    p = spec.attrs
    if (not _fastpaths.ENABLED or not p.subnormals or p.saturate
            or (spec.key is not None and p.rounding is not Rounding.STOCHASTIC)):
        return None
    # the final result may be rounded (to nearest even) into a narrower out_format, by the
    # one rounding point; c (a value of out_format) then is exactly a value of acc
    if spec.out != acc and (spec.block is not None or not acc.holds(spec.out)):
        return None
    if acc.native_dtype is None or p.rounding is not Rounding.NEAREST_EVEN:
        return _rounded_steps(spec, layout)
    if not layout.is_product:
        ok = acc.holds(spec.fmt)
    elif spec.product is None:
        ok = _products_fit(spec.fmt, acc, layout)
    else:  # (rounded products raise flags of their own: the general path counts them)
        ok = spec.product == acc and acc in (fp32, fp64) and is_narrow(spec.fmt) and (not spec.want or spec.swamped_only)
    # a sum of the accumulator's own format reads its bit patterns as the native dtype
    raw = not layout.is_product and spec.fmt == acc
    return Native(spec, acc.native_dtype, spec.product is not None, raw) if ok else _rounded_steps(spec, layout)


def _rounded_steps(spec, layout):
    """:class:`RoundedSteps` where it applies (products of a narrow format, exact, into an
    fp32, fp16 or bf16 accumulator, in the sequential or reverse order without blocks, in
    a deterministic mode -- or :class:`StochasticRoundedSteps`, under stochastic rounding,
    for those products and for sums of a narrow format; other than to nearest even with
    out_format the accumulator;
    more than one output: one output steps on Python floats, softfloat.accumulate.
    _scalar_chain, a little faster), else None."""
    rounding = spec.attrs.rounding
    stochastic = rounding is Rounding.STOCHASTIC
    grid = (_odd_stochastic.StochasticSteps.of(spec.acc, spec.attrs, spec.want) if stochastic
            else _odd.Grid.of(spec.acc, rounding))
    if (grid is None or not (layout.is_product or stochastic) or math.prod(layout.shape) == 1
            or spec.product is not None
            or not is_narrow(spec.fmt) or spec.block is not None or spec.order == "pairwise"
            or (rounding is not Rounding.NEAREST_EVEN and spec.out != spec.acc)):  # (the store: to nearest even)
        return None
    if stochastic:
        return StochasticRoundedSteps(spec, grid)
    return RoundedSteps(spec, grid, _odd.tiny_below(spec.acc, spec.attrs.tininess, rounding))


class Native:
    """numpy's arithmetic in one dtype (see the module docstring for when it is exact),
    with the flags of every addition where they are asked for (:func:`addition_flags`)."""

    #: terms a chain takes at once (a chunk of k times a tile's outputs): the products
    #: and their one reduction cost 10 % less at 2**19 than at 2**18 (the lab's matrix
    #: products, fp16 into fp32), and no less at 2**20
    chain_lanes = 1 << 19

    def __init__(self, spec, dtype, round_products: bool, raw: bool = False):
        self.spec = spec
        self.dtype = np.dtype(dtype)
        self.round_products = round_products
        self.raw = raw
        self.want = spec.want
        self.only = spec.want and spec.swamped_only  # the swamped counts alone

    def _terms(self, tile, a, b, flags, transient=False):
        """Terms a .. b-1 as rows of the dtype (``transient``: possibly in the thread's
        scratch, to be copied before the next call)."""
        if self.raw:
            return tile.layout.patterns(tile, a, b).view(self.dtype)
        # values arrive in the dtype (exactly: it holds the format, as every term is exact
        # in it) but for rounded products, which are float64 products rounded once
        X, Y = tile.factors(a, b, transient=transient, dtype=np.float64 if self.round_products else self.dtype)
        if Y is None:
            t = X
        elif self.round_products:
            t = np.multiply(X, Y).astype(self.dtype)  # float64 product, one rounding
        else:
            t = np.multiply(X, Y)  # exact
            if self.want and not self.only:
                flags.add(FlagMasks(invalid=invalid_products(X, Y, t.reshape(-1))))  # 0 * inf
        return np.broadcast_to(t, (b - a,) + tile.shape).reshape(b - a, tile.n)

    def start(self, c_values):
        return None if c_values is None else c_values.astype(self.dtype)

    def chain(self, s, tile, c0, c1, reverse, flags):
        outer = tile.layout.outer and not self.round_products
        if outer and not self.want:
            return self._outer_chain(s, tile, c0, c1, reverse)
        if outer and self.only:
            return self._outer_swamped(s, tile, c0, c1, reverse, flags)
        if outer:  # the products by einsum; their invalid flags only if a sum is not finite
            X, Y = tile.factors(c0, c1, dtype=self.dtype)  # (k, rows, 1) and (k, 1, cols), exact
            X, Y = X[:, :, 0], Y[:, 0, :]
            if reverse:
                X, Y = X[::-1], Y[::-1]
            t = _scratch.buffer("chain-terms", self.dtype, (c1 - c0) * tile.n).reshape(c1 - c0, tile.n)
            np.einsum("ki,kj->kij", X, Y, out=t.reshape((c1 - c0, X.shape[1], Y.shape[1])))
        else:
            X = Y = None
            t = self._terms(tile, c0, c1, flags, transient=True)
            if reverse:
                t = t[::-1]
        first = s is not None
        shape = (t.shape[0] + first, tile.n)
        rows = self._scratch(shape)
        if first:
            rows[0] = s
        if not self.want:  # only the last running sum is wanted: one reduction down k
            rows[first:] = t
            return sum_rows(rows)
        running_sums(rows, t, first)  # row after row: s = s + t_k
        finite = np.isfinite(rows[-1]).all()  # every term and running sum finite (see _steps_flags)
        if self.only:  # the swamped counts alone (see softfloat.accumulate._operands.steps_swamped)
            b = t[1 - first:]
            swamped = (steps_swamped(rows, b, (X[1 - first:], Y[1 - first:]) if outer else None) if finite
                       else addition_swamped(rows[:-1], b, rows[1:]))
            if swamped is not None:
                flags.add(FlagMasks(), swamped)
        elif finite:
            _steps_flags(rows, t[1 - first:], flags, (X[1 - first:], Y[1 - first:]) if outer else None)
        else:  # the steps' flags as addition_flags makes them, at once
            if outer and flags.masks is not None:
                flags.add(FlagMasks(invalid=invalid_products(X[:, :, None], Y[:, None, :], t.reshape(-1))))
            fl, swamped = addition_flags(rows[:-1], t[1 - first:], rows[1:])
            flags.add(fl, swamped)
        last = rows[-1].copy()
        return _negative_zeros(last, s, X, Y) if outer else last

    def _outer_chain(self, s, tile, c0, c1, reverse):
        """Matrix products: s + a_k * b_k for each k in turn, the products of the chunk at
        once and their running sum by one reduction down its k axis (:func:`sum_rows`).

        A tile narrower than it is tall (a product with few columns) is worked on
        transposed, so that numpy's inner loops run along its rows, not its few columns."""
        X, Y = tile.factors(c0, c1, dtype=self.dtype)  # (k, rows, 1) and (k, 1, cols), exact
        X, Y = X[:, :, 0], Y[:, 0, :]
        if reverse:
            X, Y = X[::-1], Y[::-1]
        start, factors = s, (X, Y)
        rows_, cols = tile.shape
        transposed = cols < rows_
        if transposed:
            X, Y = Y, X
            if s is not None:
                s = s.reshape(rows_, cols).T.reshape(-1)
        first = s is not None
        terms = self._scratch((c1 - c0 + first, tile.n))
        if first:
            terms[0] = s
        # the products, each one exact multiplication (einsum with no summed index; its
        # loops beat a broadcast multiply's by a third)
        np.einsum("ki,kj->kij", X, Y, out=terms[first:].reshape((c1 - c0, X.shape[1], Y.shape[1])))
        total = sum_rows(terms)
        total = total.reshape(cols, rows_).T.reshape(-1) if transposed else total
        return _negative_zeros(total, start, *factors)

    def _outer_swamped(self, s, tile, c0, c1, reverse, flags):
        """Matrix products with the swamped counts alone: the products made in place of
        the running sums (no buffer of terms), the running sums row after row, each step
        counted as :func:`steps_swamped` counts it (the zero terms from the factors);
        where a sum is not finite, the terms are made again for :func:`addition_swamped`."""
        X, Y = tile.factors(c0, c1, dtype=self.dtype)  # (k, rows, 1) and (k, 1, cols), exact
        X, Y = X[:, :, 0], Y[:, 0, :]
        if reverse:
            X, Y = X[::-1], Y[::-1]
        first = s is not None
        rows = self._scratch((c1 - c0 + first, tile.n))
        if first:
            rows[0] = s
        shape = (c1 - c0, X.shape[1], Y.shape[1])
        np.einsum("ki,kj->kij", X, Y, out=rows[first:].reshape(shape))  # exact products
        running_sums(rows)  # row after row: s = s + t_k
        if np.isfinite(rows[-1]).all():  # every term and running sum finite (see _steps_flags)
            swamped = steps_swamped(rows, None, (X[1 - first:], Y[1 - first:]))
        else:
            t = _scratch.buffer("chain-terms", self.dtype, (c1 - c0) * tile.n).reshape(c1 - c0, tile.n)
            np.einsum("ki,kj->kij", X, Y, out=t.reshape(shape))
            swamped = addition_swamped(rows[:-1], t[1 - first:], rows[1:])
        if swamped is not None:
            flags.add(FlagMasks(), swamped)
        return _negative_zeros(rows[-1].copy(), s, X, Y)

    def _scratch(self, shape):
        """A C-contiguous buffer of ``shape`` that outlives the call (see softfloat._scratch)."""
        return _scratch.buffer("chain-rows", self.dtype, shape[0] * shape[1]).reshape(shape)

    def leaves(self, tile, a, b, flags):
        return self._terms(tile, a, b, flags)

    def _add(self, a, b, flags, symmetric=False):
        r = a + b
        if self.only:
            flags.add(FlagMasks(), addition_swamped(a, b, r, symmetric))
        elif self.want:
            fl, swamped = addition_flags(a, b, r, symmetric)
            flags.add(fl, swamped)
        return r

    def pairs(self, left, right, tile, steps, level, flags):
        return self._add(left, right, flags, symmetric=True)

    def add_c(self, start, total, tile, K, flags):
        return self._add(start, total, flags)

    def promote(self, total, run, j, tile, flags):
        return run.copy() if total is None else self._add(total, run, flags)

    def finish(self, s, tile, flags):
        """s, whose rounding into a narrower out_format the caller's store does (to
        nearest even: the only mode here); its flags are computed here."""
        if self.want and not self.only and self.spec.out != self.spec.acc:
            out = np.empty(s.shape, dtype=self.spec.out.storage_dtype)
            fl = encode_block(np.ascontiguousarray(s), self.spec.out, self.spec.attrs, None, True, out,
                              Workspace(s.size))
            flags.add(fl)
        return s

    def zeros(self, n):
        return np.zeros(n, dtype=self.dtype)


#: outputs from which a running sum goes row by row (numpy's accumulate along axis 0 of a
#: wide array walks it column-wise, an order of magnitude slower)
_ROW_WISE = 64


def running_sums(buf, t=None, first=0):
    """buf[k] = buf[k-1] + buf[k] for k = 1, 2, ..., in place: each row one rounding.

    With ``t`` (the terms, as rows, left as they are): buf[first:] is first t, that is
    buf[first] = t[0] where ``first`` is 0, and buf[k] = buf[k-1] + t[k - first]."""
    if t is not None and buf.shape[1] >= _ROW_WISE:
        if not first:
            buf[0] = t[0]
        for k in range(1, buf.shape[0]):
            np.add(buf[k - 1], t[k - first], out=buf[k])
        return
    if t is not None:
        buf[first:] = t
    if buf.shape[1] < _ROW_WISE:
        np.add.accumulate(buf, axis=0, out=buf)
        return
    for k in range(1, buf.shape[0]):
        np.add(buf[k - 1], buf[k], out=buf[k])


class Declined(Exception):
    """A tile :class:`RoundedSteps` leaves to the general path (a sum that is not finite:
    its overflow and invalid rules, and its NaNs)."""


class RoundedSteps(Native):
    """Sequential chains of products that are not values of the accumulator -- fp32 x fp32
    into fp32, fp16 x fp16 into fp16, any narrow products into bf16, bf16 and tf32
    products below fp32's range: each product exact in float64 (float32 for fp16
    accumulators: :func:`rounded_products_dtype`), each step s + p rounded once by
    softfloat.accumulate._odd (its proof there), flags and swamped counts included.
    Only the sequential and reverse orders without blocks take it (see :func:`plan`);
    a tile with a sum that is not finite raises :class:`Declined`."""

    def __init__(self, spec, grid, tiny_below: tuple):
        super().__init__(spec, grid.dtype, False)
        self.grid, self.tiny_below = grid, tiny_below
        self.wide = rounded_products_dtype(spec.fmt, grid.dtype)

    def chain(self, s, tile, c0, c1, reverse, flags):
        X, Y = tile.factors(c0, c1, transient=True, dtype=self.wide)
        k = c1 - c0
        P = _scratch.buffer("rounded-products", self.wide, k * tile.n).reshape(k, tile.n)
        np.multiply(X, Y, out=P.reshape((k,) + tile.shape))  # exact, -0 kept
        return self._recorded(_odd.running_sums(P[::-1] if reverse else P, self.grid, self.want,
                                                self.tiny_below, s), flags)

    def _recorded(self, found, flags):
        """The last sums of a chain's ``found`` ``(last, inexact, underflow, swamped)``,
        its flags added to ``flags`` where asked for; :class:`Declined` where None."""
        if found is None:
            raise Declined
        last, inexact, underflow, swamped = found
        if self.want:
            flags.add(FlagMasks() if self.only else FlagMasks(inexact=inexact, underflow=underflow), swamped)
        return last


class StochasticRoundedSteps(RoundedSteps):
    """:class:`RoundedSteps` under stochastic rounding: each product exact in float64,
    each step's draws those of the general path (softfloat.accumulate._draws, ADD, the
    term's index k), the steps by softfloat.accumulate._odd_stochastic (its proof there)."""

    def __init__(self, spec, steps):
        Native.__init__(self, spec, steps.dtype, False)
        self.steps = steps

    def chain(self, s, tile, c0, c1, reverse, flags):
        X, Y = tile.factors(c0, c1, transient=True, dtype=np.float64)
        k = c1 - c0
        P = _scratch.buffer("stochastic-products", np.float64, k * tile.n).reshape(k, tile.n)
        if Y is None:  # a sum: its terms
            np.copyto(P.reshape((k,) + tile.shape), X)
        else:
            np.multiply(X, Y, out=P.reshape((k,) + tile.shape))  # exact, -0 kept
        ks = np.arange(c0, c1)
        if reverse:
            P, ks = P[::-1], ks[::-1]
        D = _scratch.buffer("stochastic-draws", np.uint64, k * tile.n).reshape(k, tile.n)
        tmp = _scratch.buffer("stochastic-mix", np.uint64, k * tile.n).reshape(k, tile.n)
        _draws.draws(self.spec.key, _draws.ADD, ks, tile.q0, tile.n, 0, self.spec.positions, (D, tmp))
        return self._recorded(self.steps.running_sums(P, D, s), flags)


def _negative_zeros(total, s, X, Y):
    """``total`` (flat, the tile's outputs (i, j) in C order), the sums of ``s`` (or none)
    and the products X[k, i] * Y[k, j] as einsum makes them, with -0 where the exact
    definition has it.

    einsum computes each product as 0 + x * y, a -0 product as +0; a non-zero or +0
    product is right.  That changes a running sum only where it is -0 and the product
    -0 (-0 + -0 = -0, -0 + +0 = +0): only the sign of a zero.  Under rounding to nearest,
    a sum is -0 only if both operands are -0 (x + (-x) is +0 for x != 0, x + 0 is x), so a
    chain ends in -0 iff its start (where there is one) and every product are -0.  Those
    outputs are among the zeros of ``total``: each is checked from its factors and set
    to -0.
    """
    zero = np.flatnonzero(total == 0)
    if not zero.size:
        return total
    if s is not None:
        zero = zero[np.signbit(s[zero])]
    i, j = np.divmod(zero, Y.shape[1])
    p = X[:, i] * Y[:, j]  # exact
    negative = ((p == 0) & np.signbit(p)).all(axis=0)
    total[zero[negative]] = -0.0
    return total


def _steps_flags(rows, b, flags, factors=None):
    """The flags and swamped counts of the steps r = a + b, a = rows[:-1], r = rows[1:],
    where every running sum is finite; the same as :func:`addition_flags` makes them.

    rows[-1] finite means every running sum and every term is finite: non-finite values
    are absorbing in IEEE addition (inf + finite = inf, inf - inf = NaN, NaN + x = NaN),
    so a non-finite term or sum would leave every later sum non-finite.  Then
    :func:`addition_flags` takes its first branch for every step: no overflow (no infinite
    r), no invalid (no NaN r; nor 0 * inf products, which would be NaN terms), no
    underflow (never raised there); these masks are clear already.  What is left:

    * inexact, per output: the OR over the steps of (r - a != b) | (r - b != a), the same
      expression on the same values.  An OR is settled by its first True: the steps are
      taken in blocks of growing size, each only over the outputs not inexact yet (in this
      tile: earlier chunks count), and the work stops once every output is inexact -- in
      real data within the first few steps, so this costs a few rows, not k;
    * swamped, per output: the count of steps with (r == a) & (b != 0), that is the
      count of r == a less the count of b == 0: a finite a plus a zero b is a again
      (a + 0 = a for non-zero a; a zero sum of zeros compares equal to any zero a).  The
      zero terms of a matrix product are those with a zero factor (products here are
      exact, so a product of non-zero values is non-zero): per output (i, j), the zeros
      of column i of X plus those of row j of Y less the k where both are zero -- a small
      product of the two zero masks, exact counts in float64.

    ``factors``: (X, Y) of shapes (steps, rows) and (steps, cols), terms b[k] = the outer
    product of X[k] and Y[k] (a matrix product's tile), or None (zeros counted from b).
    """
    a, r = rows[:-1], rows[1:]
    if not r.shape[0] or flags.masks is None:
        return
    swamped = steps_swamped(rows, b, factors)
    done = flags.masks.inexact  # (every output inexact already: the counts only)
    flags.add(FlagMasks(inexact=None if done.all() else inexact_columns(a, b, r, ~done)), swamped)


#: columns from which numpy's reduction down axis 0 is row after row (see sum_rows)
_REDUCE_COLUMNS = 8


def sum_rows(rows):
    """((rows[0] + rows[1]) + rows[2]) + ..., each addition rounded: the last running sum.

    numpy reduces axis 0 of a C-contiguous (K, n) array, n > 1, as K - 1 whole-row
    additions in order (the iterator puts the contiguous axis inside; pairwise summation
    happens only when the reduced axis is the inner one, as when n == 1, so narrow arrays
    take the row loop).  The reduction starts from -0.0, the exact identity of addition
    (x + -0.0 is x, signed zeros included), not from numpy's +0.0.
    ``tests/test_accumulate_paths.py`` checks the order on this platform.  ``rows`` may
    be overwritten; rows in another layout are copied first (numpy would reduce an
    F-ordered array's axis 0 pairwise, as its inner axis).
    """
    if not rows.flags.c_contiguous:
        rows = np.ascontiguousarray(rows)
    if rows.shape[1] < _REDUCE_COLUMNS:
        running_sums(rows)
        return rows[-1].copy()
    return np.add.reduce(rows, axis=0, initial=-0.0)
