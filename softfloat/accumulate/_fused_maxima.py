"""The fused adder's blocks of a matrix product, each block's largest exponent found by
one BLAS product of powers of two (a fast path of ``softfloat.accumulate._fused``): FP8
operands on the native path in float32, fp16/bf16/tf32 operands in float64.

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
2. **S in float32** where the products of the operands' formats are exact in float32
   (the formats say so, ``_fused_fast.float32_products``) and S is below
   (N + 1) * 2**(F + 2) <= 2**24 (the FP8 formats, F = 13); **else in float64** where
   the products' precisions add up to at most 53 bits (fp16, bf16, tf32; S below 2**53 is
   the FusedAccumulator's own condition).  With the scale 2**(F - M) a normal float
   (below), ``_fused_fast``'s argument holds: every scaled product >= 1 is exact, one
   below 1 truncates to 0 either way, and the sum of the truncated terms is exact.
3. **c in the same float.**  c is an fp32 value; the scale and its inverse are made from
   c's exponent field and M by integer operations (``2**(F - M)`` has the biased exponent
   F - M + bias).  c * 2**(F - M) is exact (c has at most 24 bits), and S * 2**(M - F)
   is exact; rounding toward zero to ``m`` fraction bits clears the low bits below them.

Where it applies (:func:`plan`; else the caller's paths, which give the same bits):
no flags, or the swamped counts alone; finite operands; an output of fp32's range rounded
toward zero; the start values c +0 or of magnitude in [2**-100, 2**100], and the largest
reachable |c| (start plus K terms of at most 2**(E_max + 2)) below 2**100, and the
smallest live E_k - F above -100 (exponents of zeros take no part).  Then every non-zero
c along the chain is an fp32 normal value with e(c) >= min(-100, min E_k - F) > F - 126,
and no result overflows: M >= F - 126 on every lane (M is clamped there for a block with
no live product and c = 0, where it changes nothing), so both scales are normal values
of either float, and every result is an fp32 value (at most 24 bits, normal).
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


class _Float:
    """The float a chain works in: its dtype, the signed integer of its width, fraction
    bits and exponent bias."""

    def __init__(self, dtype, sint, fraction: int, bias: int):
        self.dtype, self.sint, self.uint = np.dtype(dtype), np.dtype(sint), np.dtype(f"u{np.dtype(sint).itemsize}")
        self.fraction, self.bias = fraction, bias
        self.exponent = self.sint.type(((1 << (8 * self.sint.itemsize - 1)) - 1) >> fraction << fraction)


_FLOAT32 = _Float(np.float32, np.int32, 23, 127)
_FLOAT64 = _Float(np.float64, np.int64, 52, 1023)
_C_BOUND = 100  # |c| within [2**-100, 2**100] (or +0) along every chain

#: per matrix-product layout (alive while its call runs), per (emin_a, emin_b): each
#: operand's float32 values and weights, and the weights' float dtype and centres
_LAYOUT = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def _exponents(values, emin: int):
    """e(x) = max(floor(log2 |x|), emin) of float32 values, int32: a float32 subnormal
    (bf16's subnormals) has field 0 and gets emin, as its format's emin is at least
    float32's; zeros give emin too (their weights are 0 anyway)."""
    field = (values.view(np.int32) >> _FLOAT32.fraction) & 0xFF
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


def _live_range(e, values):
    """(min, max) of the exponents ``e`` of the non-zero ``values``, (0, 0) where there
    are none (then no product is live): zeros take no part in M, and their weights are 0."""
    live = e[values != 0]
    return (int(live.min()), int(live.max())) if live.size else (0, 0)


def _weights(layout, emin_a: int, emin_b: int):
    a, b = layout.values(np.float32)
    ea, eb = _exponents(a, emin_a), _exponents(b, emin_b)
    ranges = [_live_range(ea, a), _live_range(eb, b)]
    fit = _weights_dtype(*ranges)
    if fit is None:
        return None
    dtype, z_a, z_b = fit
    weights = []
    for values, e, z in ((a, ea, z_a), (b, eb, z_b)):
        if dtype == np.float32:  # 2**(8 (e - z)) by its bits
            w = ((((e - z) << _BASE_BITS) + _FLOAT32.bias) << _FLOAT32.fraction).view(np.float32)
        else:
            w = np.ldexp(dtype.type(1), (e - z) << _BASE_BITS)
        w[values == 0] = 0
        weights.append(w)
    finite = [np.isfinite(v).all(axis=(1, 2)) for v in (a, b)]
    return a, b, weights[0], weights[1], z_a + z_b, ranges, finite


def _chain_float(acc, formats):
    """float32 where the products are exact in it and the block sums below 2**24 (the FP8
    formats on the native path); float64 where the products' precisions add up to at most
    53 bits (fp16, bf16: F + 2 + log2(N + 1) <= 53 is the FusedAccumulator's own
    condition); else None."""
    F, N = acc.fraction_bits, acc.terms
    if float32_products(formats[0], formats[-1]) is not None and F + 2 + (N + 1).bit_length() <= 24:
        return _FLOAT32
    if formats[0].precision + formats[-1].precision <= 53 and F + 2 + (N + 1).bit_length() <= 53:
        return _FLOAT64
    return None


def plan(acc, tile, emin_a: int, emin_b: int, spec, start):
    """A :class:`NativeChain` for ``tile`` where this path applies (module docstring),
    else None.  ``start``: the tile's initial accumulator values (float64)."""
    layout = tile.layout
    F, N = acc.fraction_bits, acc.terms
    if not getattr(layout, "outer", False) or (spec.want and not spec.swamped_only):
        return None
    if acc.output.exponent_bits != 8 or acc.output_rounding.value != "toward_zero" or N >= 256:
        return None
    fl = _chain_float(acc, layout.formats)
    if fl is None:
        return None
    got = _layout_arrays(layout, emin_a, emin_b)
    if got is None:
        return None
    a, b, wa, wb, z, ranges, finite = got
    t, rows, cols = tile.where
    ia, ib = layout.pairs[t]
    if not (finite[0][ia] and finite[1][ib]):
        return None
    if fl is _FLOAT64:
        a, b = layout.values(np.float64)
    A, B = a[ia][:, rows], b[ib][:, cols]
    mag = np.abs(start)
    e_max = ranges[0][1] + ranges[1][1]
    if np.any((mag == 0) & np.signbit(start)) or np.any((mag != 0) & (mag < 2.0 ** -_C_BOUND)):
        return None
    if float(mag.max(initial=0.0)) + layout.K * 2.0 ** (e_max + 2) >= 2.0 ** _C_BOUND:
        return None
    if ranges[0][0] + ranges[1][0] - F <= -_C_BOUND:
        return None
    chain = NativeChain(acc, (A, B), (wa[ia][:, rows], wb[ib][:, cols]), z, spec.want, fl)
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
    ``want``), less the zero products of the whole of K (:meth:`swamped_counts`).
    ``fl``: the float the steps run in (:func:`_chain_float`)."""

    def __init__(self, acc, factors, weights, z: int, want: bool, fl: _Float = _FLOAT32):
        self.F, self.N, self.fl = acc.fraction_bits, acc.terms, fl
        self.clear = fl.sint.type(-(1 << (fl.fraction - acc.output_mantissa_bits)))  # the kept bits' mask
        (self.A, self.B), (self.WA, self.WB), self.z = factors, weights, z  # (K, rows), (K, cols)
        self.shape = (self.A.shape[1], self.B.shape[1])
        self.n = self.shape[0] * self.shape[1]
        self.want = want
        self.zeros = np.zeros(self.n, dtype=np.int64) if want else None
        self.cube = np.empty((self.N + 1,) + self.shape, fl.dtype)  # the products, then c
        self.mask = np.empty((self.N, self.n), np.bool_) if want else None
        self.work = tuple(np.empty(self.n, t) for t in (fl.sint, fl.sint, fl.sint, fl.dtype))
        self.floor = fl.sint.type((self.F - 126 + fl.bias) << fl.fraction)  # M >= F - 126
        self.zero_products = None

    def maxima(self, k0: int, k1: int):
        """The biased-exponent words (M + bias) << fraction of the blocks of k0 .. k1-1 in
        the chain's float, one row per block (module docstring, step 1)."""
        N, (rows, cols), fl = self.N, self.shape, self.fl
        full = (k1 - k0) // N
        parts = []
        if full:
            wa = self.WA[k0:k0 + full * N].reshape(full, N, rows).transpose(0, 2, 1)
            parts.append(np.matmul(wa, self.WB[k0:k0 + full * N].reshape(full, N, cols)).reshape(full, -1))
        if k0 + full * N < k1:
            tail = slice(k0 + full * N, k1)
            parts.append((self.WA[tail].T @ self.WB[tail]).reshape(1, -1))
        W = parts[0] if len(parts) == 1 else np.concatenate(parts)
        # floor(log2 W) = field - bias_W; M = floor(log2 W) >> 3 + z, so with
        # 8 (z + bias) - bias_W added before the shift, field >> 3 is M + bias
        if W.dtype == np.float32:
            field = (W.view(np.int32) >> 23).astype(fl.sint, copy=False) - 127
        else:
            field = (W.view(np.int64) >> 52).astype(fl.sint, copy=False) - 1023
        field += fl.sint.type((self.z + fl.bias) << _BASE_BITS)
        field >>= _BASE_BITS
        field <<= fl.fraction
        if not W.min() > 0:  # a block without a live product: M from c alone (or the floor)
            np.copyto(field, self.floor, where=W == 0)
        return field

    def chain(self, k0: int, k1: int, c):
        """The blocks of N terms over k0 .. k1-1 from the accumulator values ``c`` (flat
        float64): the accumulator values after them (float64).

        The cube holds a block's products in rows 0 .. N-1 and c in row N, so that one
        scaling, truncation and sum over the rows gives S with c's term."""
        if k1 <= k0:
            return c
        words = self.maxima(k0, k1)
        F, N, n, fl = self.F, self.N, self.n, self.fl
        cube = self.cube
        flat = cube.reshape(N + 1, n)
        cn = flat[N]
        cn[...] = c
        cb = cn.view(fl.sint)
        m, sc, inv, S = self.work
        top = fl.uint.type((F + 2 * fl.bias) << fl.fraction)
        for j, a in enumerate(range(k0, k1, N)):
            b = min(a + N, k1)
            np.bitwise_and(cb, fl.exponent, out=m)  # c's biased exponent (0: zero)
            np.maximum(m, words[j], out=m)
            np.subtract(top, m.view(fl.uint), out=sc.view(fl.uint))  # 2**(F - M)
            np.subtract(m, fl.sint.type(F << fl.fraction), out=inv)    # 2**(M - F)
            np.einsum("ki,kj->kij", self.A[a:b], self.B[a:b], out=cube[:b - a])  # exact products
            if b - a < N:
                cube[b - a:N] = 0
            np.multiply(flat, sc.view(fl.dtype), out=flat)
            np.trunc(flat, out=flat)
            if self.want:
                self.zeros += count_down(np.equal(flat[:b - a], 0, out=self.mask[:b - a]))
            np.add.reduce(flat, axis=0, out=S)
            np.multiply(S, inv.view(fl.dtype), out=cn)
            np.bitwise_and(cb, self.clear, out=cb)  # toward zero to the kept fraction bits
        return cn.astype(np.float64)

    def swamped_counts(self):
        """Per output (int64): the swamped products of every block run, i.e. the zero
        truncated terms less the products with a zero factor (over the whole of K, which
        the chains cover once)."""
        if self.zero_products is not None:
            self.zeros -= self.zero_products.reshape(-1)
        return self.zeros
