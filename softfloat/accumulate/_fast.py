"""Native fast paths: numpy's own float32, float16 and float64 arithmetic where it is
provably the same as the correctly rounded definition.

Conditions (all of them; ``plan`` checks each and returns None otherwise):

* round to nearest even, gradual underflow, no flags and no stochastic draws;
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
    own multiply (float64) or its float64 -> float32 cast, both correctly rounded;
* ``c``, ``block`` runs and the final result stay in the accumulator (out_format equal
  to it, or wider for the final rounding only, which then goes the general way).

Every fast result is checked bit for bit against the general path in the tests.
"""

from __future__ import annotations

import numpy as np

from ..formats import Format, fp16, fp32, fp64
from ..ops._common import is_narrow
from ..rounding import Rounding

__all__ = ["Native", "plan"]

_DTYPES = {fp32: np.float32, fp16: np.float16, fp64: np.float64}


def _fits(fmt: Format, acc: Format) -> bool:
    """Is every value of ``fmt`` a value of ``acc``?"""
    return (fmt.precision <= acc.precision and fmt.emax <= acc.emax
            and fmt.emin - fmt.mantissa_bits >= acc.emin - acc.mantissa_bits)


def _products_fit(fmt: Format, acc: Format, layout) -> bool:
    """Are all products of the inputs exactly values of ``acc``?"""
    if acc == fp64:
        return is_narrow(fmt)
    if 2 * fmt.precision > acc.precision:
        return False
    lowest = 2 * (fmt.emin - fmt.mantissa_bits)  # exponent of the smallest product's last bit
    largest = fmt.max_finite ** 2
    if lowest >= acc.emin - acc.mantissa_bits and largest <= acc.max_finite:
        return True
    ranges = layout.magnitude_ranges()  # per operand: smallest non-zero, largest |value|
    if ranges is None:  # an infinity or NaN among the inputs
        return False
    (lo_a, hi_a), (lo_b, hi_b) = ranges
    floor = 2.0 ** (acc.emin - acc.mantissa_bits - 1 + 2 * fmt.precision)
    return lo_a * lo_b >= floor and hi_a * hi_b <= acc.max_finite


def plan(spec, layout):
    """A :class:`Native` arithmetic for this call, or None where the general path must run."""
    acc = spec.acc
    p = spec.policy
    if (acc not in _DTYPES or p.rounding is not Rounding.NEAREST_EVEN or not p.subnormals
            or spec.want or spec.key is not None):
        return None
    if spec.out != acc:
        return None
    if not layout.is_product:
        ok = _fits(spec.fmt, acc)
    elif spec.product is None:
        ok = _products_fit(spec.fmt, acc, layout)
    else:
        ok = spec.product == acc and acc in (fp32, fp64) and is_narrow(spec.fmt)
    # a sum of the accumulator's own format reads its bit patterns as the native dtype
    raw = not layout.is_product and spec.fmt == acc
    return Native(_DTYPES[acc], spec.product is not None, raw) if ok else None


class Native:
    """numpy's arithmetic in one dtype (see the module docstring for when it is exact)."""

    def __init__(self, dtype, round_products: bool, raw: bool = False):
        self.dtype = np.dtype(dtype)
        self.round_products = round_products
        self.raw = raw

    def _terms(self, tile, a, b):
        if self.raw:
            return tile.layout.patterns(tile, a, b).view(self.dtype)
        X, Y = tile.factors(a, b)
        if Y is None:
            t = X.astype(self.dtype)
        elif self.round_products:
            t = np.multiply(X, Y).astype(self.dtype)  # float64 product, one rounding
        else:
            t = np.multiply(X.astype(self.dtype), Y.astype(self.dtype))  # exact
        return np.broadcast_to(t, (b - a,) + tile.shape).reshape(b - a, tile.n)

    def start(self, c_values):
        return None if c_values is None else c_values.astype(self.dtype)

    def chain(self, s, tile, c0, c1, reverse, flags):
        if tile.layout.outer and not self.round_products:
            return self._outer_chain(s, tile, c0, c1, reverse)
        t = self._terms(tile, c0, c1)
        if reverse:
            t = t[::-1]
        buf = np.empty((t.shape[0] + (s is not None), tile.n), dtype=self.dtype)
        if s is not None:
            buf[0] = s
        buf[s is not None:] = t
        np.add.accumulate(buf, axis=0, out=buf)  # row after row: s = s + t_k
        return buf[-1].copy()

    def _outer_chain(self, s, tile, c0, c1, reverse):
        """Matrix products: s += a_k * b_k a row at a time, in the tile's own buffers."""
        X, Y = tile.factors(c0, c1)
        X, Y = X.astype(self.dtype), Y.astype(self.dtype)
        rows = range(c1 - c0 - 1, -1, -1) if reverse else range(c1 - c0)
        t = np.empty(tile.shape, dtype=self.dtype)
        for i in rows:
            if s is None:
                s = np.multiply(X[i], Y[i]).reshape(-1)
                continue
            np.multiply(X[i], Y[i], out=t)
            s += t.reshape(-1)
        return s

    def leaves(self, tile, a, b, flags):
        return self._terms(tile, a, b)

    def pairs(self, left, right, tile, steps, level, flags):
        return left + right

    def add_c(self, start, total, tile, K, flags):
        return start + total

    def promote(self, total, run, j, tile, flags):
        return run.copy() if total is None else total + run

    def finish(self, s, tile, flags):
        return s

    def zeros(self, n):
        return np.zeros(n, dtype=self.dtype)
