"""The fused adder's truncated block sums by a few whole-array passes (the fast path of
``softfloat.accumulate._fused``).

One fused step (``hardware``'s docstring, ``_fused``'s notation) adds

    S = sum_k trunc(p_k * 2**(F - M)) + trunc(c * 2**(F - M)),   M = max(E_k, e(c)).

The general path computes it in float64 with the exponents of every product.  Here, for
a tile whose factors are all finite (checked once per tile) and an accumulator c that is
finite (checked per step; otherwise the general path takes the step):

1. M over the products is the running maximum of e(x_k) + e(y_k) (int32 exponents of
   the factors, decoded once per tile; a zero factor carries _NO_EXPONENT, far below any
   sum, so a lane with no product keeps M = max(..., e(c)) as the general path does);
2. the products p_k = x_k * y_k are formed in the work dtype and multiplied by
   2**(F - M) (one broadcast multiply), truncated toward zero (``np.trunc``) and summed
   down k (numpy's reduction);
3. c joins in float64, exactly as in the general path.

Why every value is the general path's (exact, so any order of summation gives it):

* float64 work: the products have at most 24 significant bits (the FusedAccumulator's
  own condition on its formats) and exponents within +-300 (inputs of at most 8 exponent
  bits), so p_k and p_k * 2**(F - M) are exact; the truncated terms are integers below
  2**(F + 2) and their sum below (N + 1) * 2**(F + 2) <= 2**53 (the accumulator's
  validation), so every partial sum is exact, whatever order numpy adds in.
* float32 work, taken only when (a) every product of the two formats is exact in
  float32 by the formats (the product's last bit is at least 2**-149 and its magnitude
  below 2**128), (b) F + 2 + bit_length(N + 1) <= 24, so every partial sum of the
  integers is exact in float32, and (c) per step, the scale 2**(F - M) is a normal
  float32 on every lane and no non-zero product scaled by it falls below 2**-149 (the
  product's last bit, by the formats, plus F - M): then a scaled product of magnitude >= 1 is exact (a power-of-two
  scaling of an exact 24-bit product that stays in the normal range), and one below 1
  may round but stays below 1 (2**-126 is far from 1), so its truncation is 0 (or -0)
  either way -- the same integer.
* The sign of an exact zero: -0 only where c is -0 and every product of the step is -0
  (as the general path), checked on the factors for the few lanes where S is 0 and c is -0.
* Flags: a term was dropped iff trunc changed it (compared in the work dtype, where the
  scaled values of step 2 are exact or below 1, and a value below 1 that is not zero is
  changed by trunc in both); a product was swamped iff it is non-zero (both factors
  non-zero: exact products of finite factors) and its truncation is 0: counted as the
  zeros of the truncated terms less the zero products (the zero factors' masks made
  once per call).  With the swamped counts alone (``return_flags="swamped"``) the dropped
  test is skipped and the terms are truncated in place.

Memory: one (terms, tile) buffer in the work dtype (two with all the flags, and a boolean one),
kept per thread between steps (softfloat._scratch: no page faults per step), the
exponents' (terms, tile) sums in int8 where every factor's e(x) is within +-20 (the FP8
formats, fp16), else int16, and the tile's outputs.  The zeros per output are counted by
adding the boolean rows as uint64 words (8 outputs a word, a count per byte: fewer than
256 terms, no carry between them).
"""

from __future__ import annotations

import weakref

import numpy as np

from .. import _scratch

__all__ = ["NO_EXPONENT", "PAIRED_LANES", "FastSteps", "count_down", "exponents", "float32_products"]

#: terms times outputs up to which a sum's or vecdot's tile is decoded at once for the
#: fast path (a matrix product's factors are decoded once per call by its layout)
PAIRED_LANES = 1 << 20

NO_EXPONENT = -(1 << 20)  # zeros, infinities and NaNs take no part in M

_F32_EXACT = (-149, 128)  # float32: the smallest last bit and the exponent bound of exact products


def exponents(x, emin: int):
    """e(x) = max(floor(log2 |x|), emin) for finite non-zero x, else NO_EXPONENT (int32)."""
    _, e = np.frexp(x)
    e = np.maximum(e.astype(np.int32) - 1, np.int32(emin))
    return np.where((x != 0) & np.isfinite(x), e, np.int32(NO_EXPONENT))


#: e(x) of a zero (or non-finite) factor in int16: the sum of two exponents of live
#: factors (each within +-2**9, inputs of at most 8 exponent bits) is above _NO_16, a sum
#: with a dead one below _NO_16 // 2, and the sum of two dead ones still fits int16
_NO_16 = -16000


def _exponents16(x, emin: int):
    """e(x) as int16, _NO_16 for zeros and non-finite values."""
    e = exponents(x, emin)
    return np.where(e == NO_EXPONENT, _NO_16, e).astype(np.int16)


#: int8 exponents, taken where every live e(x) of both operands lies within +-_SMALL_8
#: (fp16 and the FP8 formats: e within [-14, 15]): a sum of two live ones lies within
#: +-2 * _SMALL_8, one with a dead one (_NO_8) at or below _NO_8 + _SMALL_8, the sum of
#: two dead ones is -128, still an int8; half the bytes of the int16 passes
_NO_8, _SMALL_8 = -64, 20

#: per exponent dtype: the dead code and the bound below which a sum of two codes has a
#: dead one (between the lowest live sum and the highest sum with a dead one)
_DEAD = {np.dtype(np.int16): (_NO_16, _NO_16 // 2), np.dtype(np.int8): (_NO_8, (_NO_8 + _SMALL_8 - 2 * _SMALL_8) // 2)}


def _narrowed(e16s):
    """The int16 exponents ``e16s`` (a list) as int8 where every live one is within
    +-_SMALL_8, else as given."""
    for e in e16s:
        live = e[e != _NO_16]
        if live.size and (int(live.min()) < -_SMALL_8 or int(live.max()) > _SMALL_8):
            return e16s
    return [np.where(e == _NO_16, _NO_8, e).astype(np.int8) for e in e16s]


def _float64_exponents(c, emin: int):
    """e(c) for float64 values: floor(log2 |c|) is the biased exponent field less 1023
    for every non-zero finite c that is normal in float64 (any value of an output format
    of at most 8 exponent bits is), clamped at emin; NO_EXPONENT for zeros (c is finite
    here)."""
    e = ((c.view(np.int64) >> 52) & 0x7FF).astype(np.int32) - 1023
    return np.where(c != 0, np.maximum(e, np.int32(emin)), np.int32(NO_EXPONENT))


#: per matrix-product layout (alive while its call runs), per (emin_x, emin_y, f32): each
#: operand's values, finiteness per batch, int16 exponents and float32 copy, made once
_OUTER = weakref.WeakKeyDictionary()


def _outer_arrays(layout, emin_x, emin_y, f32):
    per_layout = _OUTER.setdefault(layout, {})
    key = (emin_x, emin_y, f32)
    got = per_layout.get(key)
    if got is None:
        pairs = list(zip(layout.values(), (emin_x, emin_y)))  # (batch, K, M) and (batch, K, N)
        es = _narrowed([_exponents16(values, emin) for values, emin in pairs])
        got = [(values, np.isfinite(values).all(axis=(1, 2)), e, values.astype(np.float32) if f32 else None)
               for (values, _), e in zip(pairs, es)]
        per_layout[key] = got
    return got


def _outer_slices(tile, emin_x, emin_y, f32):
    """(ok, X, Y, ex, ey, X32, Y32) of a matrix product's tile: the slices that
    ``tile.factors`` gives of the layout's values ((K, rows, 1) and (K, 1, cols)), and of
    their exponents and float32 copies."""
    layout = tile.layout
    t, rows, cols = tile.where
    ia, ib = layout.pairs[t]
    (a, fa, ea, a32), (b, fb, eb, b32) = _outer_arrays(layout, emin_x, emin_y, f32)
    if not (fa[ia] and fb[ib]):
        return (False,) + (None,) * 6

    def xs(v):
        return None if v is None else v[ia, :, rows, None]

    def ys(v):
        return None if v is None else v[ib, :, None, cols]
    return True, xs(a), ys(b), xs(ea), ys(eb), xs(a32), ys(b32)


def float32_products(fx, fy):
    """The exponent of the last bit of the smallest non-zero product of a value of ``fx``
    and one of ``fy`` (None: a sum, products x * 1) where every such product is exact in
    float32, else None."""
    if fy is None:
        last, precision, largest = fx.emin - fx.mantissa_bits, fx.precision, fx.max_finite
    else:
        last = (fx.emin - fx.mantissa_bits) + (fy.emin - fy.mantissa_bits)
        precision, largest = fx.precision + fy.precision, fx.max_finite * fy.max_finite
    return last if precision <= 24 and last >= _F32_EXACT[0] and largest < 2.0 ** _F32_EXACT[1] else None


class FastSteps:
    """The fused steps of one tile, from its factors decoded once (see the module
    docstring); :meth:`step` returns None where the general path must take a step."""

    def __init__(self, acc, tile, emin_x: int, emin_y: int, want: bool, only: bool = False):
        self.F = acc.fraction_bits
        self.c_emin = acc.output.emin
        self.want = want
        self.only = want and only  # the swamped counts alone: no dropped terms
        self.tile = tile
        self.shape = tile.shape
        layout = tile.layout
        self.outer = layout.outer
        self._live = None
        self.last = float32_products(layout.formats[0], layout.formats[-1])
        self.f32 = self.last is not None and self.F + 2 + (acc.terms + 1).bit_length() <= 24
        if self.outer:  # slices of the whole operands' arrays, made once per call
            self.ok, self.X, self.Y, self.ex, self.ey, self.X32, self.Y32 = _outer_slices(
                tile, emin_x, emin_y, self.f32)
            return
        X, Y = tile.factors(0, layout.K)
        if Y is None:
            Y = np.ones((1,) * X.ndim)
        self.ok = bool(np.isfinite(X).all() and np.isfinite(Y).all())
        if not self.ok:
            return
        self.X, self.Y = X, Y
        self.ex, self.ey = _exponents16(X, emin_x), _exponents16(Y, emin_y)
        self.X32 = X.astype(np.float32) if self.f32 else None
        self.Y32 = Y.astype(np.float32) if self.f32 else None

    def _rows(self, A, ks):
        return A[ks] if A.shape[0] > 1 else A

    def step(self, ks, c):
        """One fused step over the products ``ks`` (a slice or index array of k) from the
        accumulator values ``c`` (flat float64): (exact block value, dropped, swamped) --
        the last two None without flags -- or None (the general path)."""
        if not np.isfinite(c).all():
            return None
        ks = _as_slice(ks)
        n = c.size
        ex, ey = self._rows(self.ex, ks), self._rows(self.ey, ks)
        rows = max(ex.shape[0], ey.shape[0])
        E = _scratch.buffer("fused-exponents", ex.dtype, rows * n).reshape((rows,) + self.shape)
        np.add(ex, ey, out=E)  # exact: |e| < 2**9 for a live factor, the dead code otherwise
        M = np.maximum.reduce(E, axis=0).reshape(n).astype(np.int32)
        M = np.where(M < _DEAD[ex.dtype][1], NO_EXPONENT, M)  # no product with both factors live
        M = np.maximum(M, _float64_exponents(c, self.c_emin))
        live = M > NO_EXPONENT
        shift = np.where(live, self.F - M, 0)
        # (c): the scale a normal float32, and no non-zero scaled product below 2**-149
        f32 = self.f32 and max(-126, -149 - self.last) <= shift.min() and shift.max() <= 127
        dt = np.float32 if f32 else np.float64
        X = self._rows(self.X32 if f32 else self.X, ks)
        Y = self._rows(self.Y32 if f32 else self.Y, ks)
        buf = _scratch.buffer("fused-terms", dt, rows * n).reshape((rows,) + self.shape)
        if self.outer and X.shape[0] == Y.shape[0] == rows:
            np.einsum("ki,kj->kij", X[:, :, 0], Y[:, 0, :], out=buf)  # exact products
        else:
            np.multiply(X, Y, out=buf)
        flat = buf.reshape(rows, n)
        np.multiply(flat, np.ldexp(np.ones(n, dtype=dt), shift.astype(np.int32)), out=flat)  # exact (docstring)
        if self.only:  # the swamped counts alone (the scaled values are not needed after)
            kept = np.trunc(flat, out=flat)
            mask = _scratch.buffer("fused-mask", np.bool_, rows * n).reshape(rows, n)
            swamped = self._swamped(count_down(np.equal(kept, dt(0), out=mask)), ks, rows, n)
            dropped = None
        elif self.want:
            kept = np.trunc(flat, out=_scratch.buffer("fused-kept", dt, rows * n).reshape(rows, n))
            mask = _scratch.buffer("fused-mask", np.bool_, rows * n).reshape(rows, n)
            dropped = np.logical_or.reduce(np.not_equal(kept, flat, out=mask), axis=0)
            swamped = self._swamped(count_down(np.equal(kept, dt(0), out=mask)), ks, rows, n)
        else:
            kept = np.trunc(flat, out=flat)
            dropped = swamped = None
        S = np.add.reduce(kept, axis=0).astype(np.float64)
        c_scaled = np.ldexp(c, shift)
        c_kept = np.trunc(c_scaled)
        S += c_kept
        exact = np.ldexp(S, -shift)
        zero = S == 0
        exact[zero] = 0.0
        maybe_neg = zero & (c == 0) & np.signbit(c)
        if maybe_neg.any():
            exact[maybe_neg & self._all_negative_zero(ks, rows, n)] = -0.0
        if self.want and not self.only:
            dropped |= c_kept != c_scaled
        return exact, dropped, swamped

    def _factor_masks(self, ks, rows, n, test):
        """test(X) and test(Y) broadcast to (rows, n) as booleans."""
        X, Y = self._rows(self.X, ks), self._rows(self.Y, ks)
        full = (rows,) + self.shape
        return (np.broadcast_to(test(X), full).reshape(rows, n), np.broadcast_to(test(Y), full).reshape(rows, n))

    def _swamped(self, zeros, ks, rows, n):
        """The swamped products of the step: ``zeros`` (int64 (n,): per output, the
        truncated terms that are zero; overwritten) less the products with a zero factor.

        A matrix product's output (i, j) has the zeros of column i of X plus those of row
        j of Y less the k where both are zero: the last a product of the two zero masks
        over the k with zeros on both sides (exact counts in float32: below 2**24); the
        masks are made once per call (:func:`_zero_masks`)."""
        X, Y = self._rows(self.X, ks), self._rows(self.Y, ks)
        if self.outer and X.shape[0] == Y.shape[0] == rows:
            if self._live is None:
                layout = self.tile.layout
                t, tile_rows, tile_cols = self.tile.where
                (ia, ib), (a, b) = layout.pairs[t], layout.values()
                self._live = _zero_masks(layout, (0, ia), a[ia, :, tile_rows]) + \
                    _zero_masks(layout, (1, ib), b[ib, :, tile_cols], tile_cols)
            zx, kx, zy, ky = self._live
            kx, ky = kx[ks], ky[ks]
            grid = zeros.reshape(self.shape)
            if kx.any():
                grid -= zx[ks].sum(axis=0).astype(np.int64)[:, None]
            if ky.any():
                grid -= zy[ks].sum(axis=0).astype(np.int64)[None, :]
            both = np.flatnonzero(kx & ky)
            if both.size:
                grid += (zx[ks][both].T @ zy[ks][both]).astype(np.int64)
            return zeros
        zx, zy = self._factor_masks(ks, rows, n, lambda v: v == 0)
        return zeros - np.add.reduce(zx | zy, axis=0, dtype=np.int64)

    def _all_negative_zero(self, ks, rows, n):
        """Per output: is every product of the step a -0 (a zero factor, signs differing)?"""
        zx, zy = self._factor_masks(ks, rows, n, lambda v: v == 0)
        sx, sy = self._factor_masks(ks, rows, n, np.signbit)
        return np.logical_and.reduce((zx | zy) & (sx ^ sy), axis=0)


#: per matrix-product layout (alive while its call runs), per operand and span of its
#: columns: the zero mask of its factors (float32) and the k with a zero among them
_ZEROS = weakref.WeakKeyDictionary()


def _zero_masks(layout, operand, values, span=None):
    """(mask, any) of the (K, width) factors ``values`` of ``operand`` (side, batch index)
    over ``span`` (a slice of the columns, None: the tile's own rows, not shared), made
    once per call for a span that tiles share (B's columns: every row of tiles)."""
    key = None if span is None else operand + (span.start, span.stop)
    per_layout = _ZEROS.setdefault(layout, {})
    got = None if key is None else per_layout.get(key)
    if got is None:
        zero = values == 0
        got = (zero.astype(np.float32), zero.any(axis=1))
        if key is not None:
            per_layout[key] = got
    return got


def _as_slice(ks):
    """``ks`` as a slice where it is an increasing run of consecutive indices (basic
    indexing: views, no gathered copies), else ``ks`` itself."""
    if isinstance(ks, np.ndarray) and ks.ndim == 1 and ks.size and int(ks[-1]) - int(ks[0]) == ks.size - 1 \
            and (ks.size < 3 or bool(np.all(np.diff(ks) == 1))):
        return slice(int(ks[0]), int(ks[-1]) + 1)
    return ks


def count_down(mask):
    """Per column, how many rows of the boolean (rows, n) ``mask`` are True (int64).

    Fewer than 256 rows, n a multiple of 8: the rows are added as uint64 words, 8 lanes a
    word; each lane's byte holds its count (at most rows < 256: no carry into the next
    lane), read back as bytes."""
    rows, n = mask.shape
    if rows < 256 and n % 8 == 0 and mask.flags.c_contiguous:
        words = np.add.reduce(mask.view(np.uint64), axis=0)
        return words.view(np.uint8).astype(np.int64)
    return np.add.reduce(mask, axis=0, dtype=np.int64)
