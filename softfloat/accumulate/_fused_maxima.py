"""The fused adder's blocks of a matrix product with FP8-like operands, each block's
largest exponent found by one BLAS product of powers of two (a fast path of
``softfloat.accumulate._fused``).

One fused step (``hardware``'s docstring) adds, for the outputs (i, j) of a tile,

    S = sum_k trunc(p_k * 2**(F - M)) + trunc(c * 2**(F - M)),   M = max(E_k, e(c)),
    c' = round_out(S * 2**(M - F))       (toward zero, fp32's range, ``m`` fraction bits)

with E_k = e(a_ik) + e(b_kj).  ``_fused_fast`` finds M by an exponent cube per step; here:

1. **M by a matrix product.**  With weights w(x) = 2**(8 (e(x) - z)) for a non-zero
   factor and 0 for a zero one (z a centring constant per operand), the (i, j) entry of
   one block's product W = w(A_block) @ w(B_block) is sum_k 2**(8 (E_k - z_a - z_b)) over
   the live products: between 2**(8 m) and N * 2**(8 m) < 2**(8 m + 8) for
   m = max_k E_k - z_a - z_b and N < 256 terms.  Every weight and product of weights is a
   power of two inside the float's normal range (checked), so every rounded partial sum
   of positive terms, in whatever order BLAS adds them, stays in [2**(8 m), 2**(8 m + 8)):
   floor(log2 W) >> 3 is m exactly.  W = 0: no live product.  One batched product per
   tile gives every block's M.
2. **S in float32.**  The products of the operands' formats are exact in float32 (the
   formats say so, ``_fused_fast._float32_products``); the terms are below 2**(F + 2) and
   S below (N + 1) * 2**(F + 2) <= 2**24 (checked), so with the scale 2**(F - M) a normal
   float32 (below), ``_fused_fast``'s argument holds: every scaled product >= 1 is exact,
   one below 1 truncates to 0 either way, and the sum of the truncated terms is exact.
3. **c in float32.**  c is an fp32 value; the scale and its inverse are made from c's
   exponent field and M by integer operations (``2**(F - M)`` has the biased exponent
   F - M + 127).  c * 2**(F - M) is exact (c has at most 24 bits), and S * 2**(M - F) is
   exact; rounding toward zero to ``m`` fraction bits clears the low 23 - m bits.

Where it applies (:func:`plan`; else the caller's paths, which give the same bits):
no flags, or the swamped counts alone; finite operands; an output of fp32's range rounded
toward zero; the start values c +0 or of magnitude in [2**-100, 2**100], and the largest
reachable |c| (start plus K terms of at most 2**(E_max + 2)) below 2**100.  Then every
non-zero c along the chain has e(c) >= min(-100, min E_k - F) > F - 126 and no result
overflows: M >= F - 126 on every lane (M is clamped there for a block with no live
product and c = 0, where it changes nothing), so both scales are normal float32 values.
No -0 arises (a -0 start is declined; a block's S is 0 only by cancellation, or with
c = +0 and no live product: +0 either way, as the general path gives).

Swamped counts: a product is swamped iff it is non-zero and its truncated term is 0 --
the zeros of the truncated terms, counted per output over the blocks, less the products
with a zero factor (one matrix product of the zero masks over all of K per tile).
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from ._fused_fast import count_down, float32_products

__all__ = ["NativeChain", "plan"]

_BASE_BITS = 3  # weights are powers of 2**8 = 2**(1 << _BASE_BITS): N < 256 terms
_C_BOUND = 100  # |c| within [2**-100, 2**100] (or +0) along every chain
_F32_FRACTION = 23

#: per matrix-product layout (alive while its call runs), per (emin_a, emin_b): each
#: operand's float32 values and weights, and the weights' float dtype and centres
_LAYOUT = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def _exponents(values, emin: int):
    """e(x) = max(floor(log2 |x|), emin) of float32 values (FP8-like: never subnormal
    in float32), int32; zeros give emin (their weights are 0 anyway)."""
    field = (values.view(np.int32) >> _F32_FRACTION) & 0xFF
    return np.maximum(field - 127, np.int32(emin))


def _weights_dtype(range_a, range_b):
    """(dtype, z_a, z_b): the float whose normal range holds every weight 2**(8 (e - z))
    of both operands and every product of two of them times 2**8 (the block sums' bound),
    with centring constants z; None where float64's does not."""
    lo_a, hi_a = range_a
    lo_b, hi_b = range_b
    z_a, z_b = (lo_a + hi_a) // 2, (lo_b + hi_b) // 2
    scale = 1 << _BASE_BITS
    lowest = scale * min(lo_a - z_a, lo_b - z_b, lo_a - z_a + lo_b - z_b)
    highest = scale * max(hi_a - z_a, hi_b - z_b, hi_a - z_a + hi_b - z_b + 1)
    for dtype, (emin, emax) in ((np.float32, (-126, 127)), (np.float64, (-1022, 1023))):
        if lowest >= emin and highest <= emax:
            return np.dtype(dtype), z_a, z_b
    return None


def _layout_arrays(layout, emin_a: int, emin_b: int):
    """(A32, B32, WA, WB, z, ranges, finite) of a product's layout, made once per call
    (under a lock: the tiles run on several threads): the values (batch, K, M) and
    (batch, K, N) as float32, their weights, z = z_a + z_b, the exponent ranges and per
    operand and batch index whether every value is finite; None where the weights fit
    no float."""
    per = _LAYOUT.setdefault(layout, {})
    key = (emin_a, emin_b)
    with _LOCK:
        if key not in per:
            per[key] = _weights(layout, emin_a, emin_b)
    return per[key]


def _weights(layout, emin_a: int, emin_b: int):
    a, b = layout.values(np.float32)
    ea, eb = _exponents(a, emin_a), _exponents(b, emin_b)
    ranges = [(int(e.min()), int(e.max())) if e.size else (emin, emin) for e, emin in ((ea, emin_a), (eb, emin_b))]
    fit = _weights_dtype(*ranges)
    if fit is None:
        return None
    dtype, z_a, z_b = fit
    weights = []
    for values, e, z in ((a, ea, z_a), (b, eb, z_b)):
        if dtype == np.float32:  # 2**(8 (e - z)) by its bits
            w = ((((e - z) << _BASE_BITS) + 127) << _F32_FRACTION).view(np.float32)
        else:
            w = np.ldexp(dtype.type(1), (e - z) << _BASE_BITS)
        w[values == 0] = 0
        weights.append(w)
    finite = [np.isfinite(v).all(axis=(1, 2)) for v in (a, b)]
    return a, b, weights[0], weights[1], z_a + z_b, ranges, finite


def plan(acc, tile, emin_a: int, emin_b: int, spec, start):
    """A :class:`NativeChain` for ``tile`` where this path applies (module docstring),
    else None.  ``start``: the tile's initial accumulator values (float64)."""
    layout = tile.layout
    F, N = acc.fraction_bits, acc.terms
    if not getattr(layout, "outer", False) or (spec.want and not spec.swamped_only):
        return None
    if acc.output.exponent_bits != 8 or acc.output_rounding.value != "toward_zero" or N >= 256:
        return None
    last = float32_products(layout.formats[0], layout.formats[-1])
    if last is None or F + 2 + (N + 1).bit_length() > 24:
        return None
    got = _layout_arrays(layout, emin_a, emin_b)
    if got is None:
        return None
    a, b, wa, wb, z, ranges, finite = got
    t, rows, cols = tile.where
    ia, ib = layout.pairs[t]
    if not (finite[0][ia] and finite[1][ib]):
        return None
    A, B = a[ia][:, rows], b[ib][:, cols]
    mag = np.abs(start)
    e_max = ranges[0][1] + ranges[1][1]
    if np.any((mag == 0) & np.signbit(start)) or np.any((mag != 0) & (mag < 2.0 ** -_C_BOUND)):
        return None
    if float(mag.max(initial=0.0)) + layout.K * 2.0 ** (e_max + 2) >= 2.0 ** _C_BOUND:
        return None
    if ranges[0][0] + ranges[1][0] - F <= -_C_BOUND:
        return None
    chain = NativeChain(acc, A, B, wa[ia][:, rows], wb[ib][:, cols], z, spec.want)
    if spec.want:
        zero_products = _zero_products(layout, a[ia], b[ib], (ia, ib))
        chain.zero_products = None if zero_products is None else zero_products[rows, cols]
    return chain


def _zero_products(layout, a, b, pair):
    """Per output of the batch ``pair``: the products with a zero factor over all of K
    (int64 (M, N)), made once per call; None where there are none."""
    per = _LAYOUT.setdefault(layout, {})
    key = ("zeros",) + pair
    with _LOCK:
        if key not in per:
            per[key] = _zero_counts(a, b)
    return per[key]


def _zero_counts(a, b):
    za, zb = a == 0, b == 0  # (K, M), (K, N)
    if not (za.any() or zb.any()):
        return None
    counts = za.sum(axis=0, dtype=np.int64)[:, None] + zb.sum(axis=0, dtype=np.int64)[None, :]
    if za.any() and zb.any():  # both factors zero: counted twice (exact counts: below 2**24, or float64)
        exact = np.float32 if a.shape[0] < 1 << 24 else np.float64
        counts -= (za.astype(exact).T @ zb.astype(exact)).astype(np.int64)
    return counts


class NativeChain:
    """The fused steps of one tile of a matrix product (module docstring): :meth:`chain`
    runs the blocks of k0 .. k1-1; ``swamped`` adds up their swamped counts (with
    ``want``), less the zero products of the whole of K (:meth:`swamped_counts`)."""

    def __init__(self, acc, A, B, WA, WB, z: int, want: bool):
        self.F, self.N = acc.fraction_bits, acc.terms
        self.clear = np.int32(-(1 << (_F32_FRACTION - acc.output_mantissa_bits)))  # the kept bits' mask
        self.A, self.B, self.WA, self.WB, self.z = A, B, WA, WB, z  # (K, rows), (K, cols)
        self.shape = (A.shape[1], B.shape[1])
        self.n = self.shape[0] * self.shape[1]
        self.want = want
        self.zeros = np.zeros(self.n, dtype=np.int64) if want else None
        self.cube = np.empty((self.N + 1,) + self.shape, np.float32)  # the products, then c
        self.mask = np.empty((self.N, self.n), np.bool_) if want else None
        self.work = (np.empty(self.n, np.int32), np.empty(self.n, np.int32), np.empty(self.n, np.int32),
                     np.empty(self.n, np.float32))
        self.floor = np.int32((self.F - 126 + 127) << _F32_FRACTION)  # M >= F - 126
        self.zero_products = None

    def maxima(self, k0: int, k1: int):
        """The biased-exponent words (M + 127) << 23 of the blocks of k0 .. k1-1, one row
        per block (int32; module docstring, step 1)."""
        N, (rows, cols) = self.N, self.shape
        full = (k1 - k0) // N
        parts = []
        if full:
            wa = self.WA[k0:k0 + full * N].reshape(full, N, rows).transpose(0, 2, 1)
            parts.append(np.matmul(wa, self.WB[k0:k0 + full * N].reshape(full, N, cols)).reshape(full, -1))
        if k0 + full * N < k1:
            tail = slice(k0 + full * N, k1)
            parts.append((self.WA[tail].T @ self.WB[tail]).reshape(1, -1))
        W = parts[0] if len(parts) == 1 else np.concatenate(parts)
        # floor(log2 W) = field - bias; M = floor(log2 W) >> 3 + z, so with
        # 8 (z + 127) - bias added before the shift, field >> 3 is M + 127
        if W.dtype == np.float32:
            words = W.view(np.int32) >> _F32_FRACTION
            words += np.int32(((self.z + 127) << _BASE_BITS) - 127)
        else:
            words = (W.view(np.int64) >> 52).astype(np.int32)
            words += np.int32(((self.z + 127) << _BASE_BITS) - 1023)
        words >>= _BASE_BITS
        words <<= _F32_FRACTION
        if not W.min() > 0:  # a block without a live product: M from c alone (or the floor)
            np.copyto(words, self.floor, where=W == 0)
        return words

    def chain(self, k0: int, k1: int, c):
        """The blocks of N terms over k0 .. k1-1 from the accumulator values ``c`` (flat
        float64): the accumulator values after them (float64).

        The cube holds a block's products in rows 0 .. N-1 and c in row N, so that one
        scaling, truncation and sum over the rows gives S with c's term."""
        if k1 <= k0:
            return c
        words = self.maxima(k0, k1)
        F, N, n = self.F, self.N, self.n
        cube = self.cube
        flat = cube.reshape(N + 1, n)
        c32 = flat[N]
        c32[...] = c
        cb = c32.view(np.int32)
        m, sc, inv, S = self.work
        top = np.uint32((F + 254) << _F32_FRACTION)
        for j, a in enumerate(range(k0, k1, N)):
            b = min(a + N, k1)
            np.bitwise_and(cb, np.int32(0x7F800000), out=m)  # c's biased exponent (0: zero)
            np.maximum(m, words[j], out=m)
            np.subtract(top, m.view(np.uint32), out=sc.view(np.uint32))  # 2**(F - M)
            np.subtract(m, np.int32(F << _F32_FRACTION), out=inv)          # 2**(M - F)
            np.einsum("ki,kj->kij", self.A[a:b], self.B[a:b], out=cube[:b - a])  # exact products
            if b - a < N:
                cube[b - a:N] = 0
            np.multiply(flat, sc.view(np.float32), out=flat)
            np.trunc(flat, out=flat)
            if self.want:
                self.zeros += count_down(np.equal(flat[:b - a], 0, out=self.mask[:b - a]))
            np.add.reduce(flat, axis=0, out=S)
            np.multiply(S, inv.view(np.float32), out=c32)
            np.bitwise_and(cb, self.clear, out=cb)  # toward zero to the kept fraction bits
        return c32.astype(np.float64)

    def swamped_counts(self):
        """Per output (int64): the swamped products of every block run, i.e. the zero
        truncated terms less the products with a zero factor (over the whole of K, which
        the chains cover once)."""
        if self.zero_products is not None:
            self.zeros -= self.zero_products.reshape(-1)
        return self.zeros
