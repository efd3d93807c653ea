"""The fused multi-term adder of matrix units, vectorised over a tile of outputs.

One block of N products and the accumulator c (steps of ``hardware``'s docstring):

    E_k = e(a_k) + e(b_k)          e(x) = max(floor(log2 |x|), emin of x's format)
                                   (a's and b's own formats, for products of two formats)
    M   = max(E_k, e(c))           over the non-zero terms
    S   = sum_k trunc(p_k * 2**(F - M)) + trunc(c * 2**(F - M))      (exact integers)
    r   = round_out(S * 2**(M - F))

Every p_k is exact in float64 (products of at most 24 significant bits: inputs of at most
12 bits, or two formats whose precisions add up to at most 24), the scaled terms are
integers below 2**(F + 2), and S has at most F + 2 + log2(N + 1) <= 53 bits, so float64
carries the whole block exactly; only ``round_out`` rounds.

A tile whose factors are all finite takes each step with a finite c through
``softfloat.accumulate._fused_fast`` (the same S by whole-array passes in float32 or
float64, the proof in its docstring); the rounding into the output and the flags are
this module's either way.  softfloat._fastpaths.ENABLED = False holds it off.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .. import _fastpaths
from .._flagmasks import FlagMasks
from ..attributes import RoundingAttributes
from ..formats import fp16
from ..ops.kernels import Exact, add_exact, add_kernel
from ..rounding import Rounding
from . import _draws, _fused_fast, _fused_maxima
from ._ieee import Rounder, TileFlags, join
from .hardware import FusedAccumulator

__all__ = ["accumulate_tile"]

_NO_EXPONENT = -(1 << 20)  # zeros, infinities and NaNs take no part in M


def _exponents(x, emin: int):
    """e(x) = max(floor(log2 |x|), emin) for finite non-zero x, else _NO_EXPONENT."""
    _, e = np.frexp(x)
    e = np.maximum(e.astype(np.int64) - 1, emin)
    return np.where((x != 0) & np.isfinite(x), e, _NO_EXPONENT)


class _Block:
    """One fused step over the products of a block, vectorised over the tile."""

    def __init__(self, acc: FusedAccumulator, spec, want: bool):
        self.F = acc.fraction_bits
        self.out = acc.output
        self.c_emin = acc.output.emin
        attrs = RoundingAttributes(rounding=acc.output_rounding)
        # the swamped counts alone (return_flags="swamped"): no flags of the rounding
        self.only = want and spec.swamped_only
        self.to_out = Rounder(acc.rounding_format, attrs, want and not self.only)
        self.want = want

    def __call__(self, P, E, nan_inputs, c, flags: TileFlags):
        """P (rows, n) exact products, E (rows, n) their exponents, nan_inputs (n,) "a NaN
        among the factors", c (n,) the accumulator's values."""
        ec = _exponents(c, self.c_emin)
        M = np.maximum(E.max(axis=0, initial=_NO_EXPONENT), ec)
        live = M > _NO_EXPONENT
        shift = np.where(live, self.F - M, 0)
        scaled = np.ldexp(P, shift[None, :])
        kept = np.trunc(scaled)
        c_scaled = np.ldexp(c, shift)
        c_kept = np.trunc(c_scaled)
        S = kept.sum(axis=0) + c_kept
        exact = np.ldexp(S, -shift)
        finite = np.isfinite(exact)
        zero = (S == 0) & finite
        # -0 only when every term is a -0 (c included); cancellation gives +0
        negzero = zero & np.signbit(c) & (c == 0) & np.all((P == 0) & np.signbit(P), axis=0)
        exact[zero] = 0.0
        exact[negzero] = -0.0
        dropped = swamped = None
        if self.want and not self.only:
            dropped = ((kept != scaled) & np.isfinite(scaled)).any(axis=0) | ((c_kept != c_scaled) & np.isfinite(c))
        if self.want:
            swamped = ((P != 0) & np.isfinite(P) & (kept == 0)).sum(axis=0)
        return self.round(exact, dropped, swamped, c, nan_inputs, flags)

    def round(self, exact, dropped, swamped, c, nan_inputs, flags: TileFlags):
        """The block's exact value rounded into the output, its flags recorded."""
        values, fl = self.to_out(Exact(exact), None, [exact], None)
        if self.only:
            flags.add(FlagMasks(), swamped)
        elif self.want:
            fl.or_(FlagMasks(inexact=dropped))
            nan = np.isnan(values)
            if nan.any():  # inf - inf or 0 * inf, not a NaN passed on
                fl.invalid = nan & ~np.isnan(c) & ~nan_inputs
            flags.add(fl, swamped)
        return values


def accumulate_tile(acc: FusedAccumulator, spec, ieee, tile, c_values, flags: TileFlags):
    """The tile's results (flat exact float64 values of out_format).  ``ieee`` is the
    call's IEEE arithmetic (spec.acc being the adder's output format): its ``promote``
    and ``finish`` are the block promotions and the final rounding, as for any
    accumulator."""
    K, n = tile.layout.K, tile.n
    block = _Block(acc, spec, spec.want)
    # the "via fp16" path when every operand is an FP8 one (a sum's factor 1 is exact in
    # any format); its inputs, widened to fp16, are clamped at fp16's emin, the others
    # each at its own format's
    formats = [f for f in tile.layout.formats if f is not None]
    via = acc.fp8 == "via_fp16" and all(f.exponent_bits <= 5 and f.mantissa_bits <= 3 for f in formats)
    emin_x, emin_y = (fp16.emin, fp16.emin) if via else (formats[0].emin, formats[-1].emin)
    # the "via fp16" path's addition of c is the chip's: to nearest even, never saturating
    only = spec.want and spec.swamped_only
    ieee_out = Rounder(acc.output, replace(spec.attrs, rounding=Rounding.NEAREST_EVEN, saturate=False),
                       spec.want and not only)
    to_hw = Rounder(acc.output, spec.attrs, spec.want)

    def products(k0, k1):
        X, Y = tile.factors(k0, k1)
        if Y is None:  # a sum: terms are products x * 1
            Y = np.ones((1,) * X.ndim)
        E = _exponents(X, emin_x) + _exponents(Y, emin_y)
        E = np.where(E < _NO_EXPONENT // 2, _NO_EXPONENT, E)  # a zero factor: no product
        P = np.multiply(X, Y)
        rows = k1 - k0
        nan_in = np.broadcast_to(np.isnan(X) | np.isnan(Y), P.shape).reshape(rows, -1)
        return P.reshape(rows, -1), np.broadcast_to(E, P.shape).reshape(rows, -1), nan_in

    if c_values is None:
        start = np.zeros(n)
    elif spec.out == acc.output:
        start = c_values
    else:
        start, fl = to_hw(Exact(c_values.copy()), None, [c_values], _rand(spec, _draws.FINAL, 1, tile))
        if fl is not None:
            flags.add(fl)
    # the native path's blocks by BLAS maxima where they apply (softfloat.accumulate._fused_maxima)
    maxima = None if via or not _fastpaths.ENABLED else _fused_maxima.plan(acc, tile, emin_x, emin_y, spec, start)
    fast = None
    if maxima is None and _fastpaths.ENABLED and (tile.layout.outer or K * n <= _fused_fast.PAIRED_LANES):
        fast = _fused_fast.FastSteps(acc, tile, emin_x, emin_y, spec.want, only)
    fast = fast if fast is not None and fast.ok else None
    no_nan = np.zeros(n, dtype=bool)

    def step(ks, c):
        """One fused step over the products ``ks`` (an index array) from c, by the fast
        path where it applies (softfloat.accumulate._fused_fast), else the general one."""
        if not ks.size:  # the second half-step of a short last block: c alone
            return block(np.zeros((0, n)), np.zeros((0, n), dtype=np.int64), no_nan, c, flags)
        got = None if fast is None else fast.step(ks, c)
        if got is not None:
            return block.round(*got, c, no_nan, flags)
        P, E, nan_in = products(int(ks[0]), int(ks[-1]) + 1)
        rel = ks - ks[0]
        return block(P[rel], E[rel], nan_in[rel].any(axis=0), c, flags)

    def chain(k0, k1, c):
        """Blocks of N terms over k0 .. k1-1 from accumulator c (values of the output)."""
        if via:
            for a in range(k0, k1, acc.terms):
                b = min(a + acc.terms, k1)
                ks = np.arange(a, b)
                first = (ks % 4) < 2
                s = step(ks[first], np.zeros(n))
                s = step(ks[~first], s)
                res = add_kernel(join(acc.output, acc.output), ieee_out.attrs, s, c)
                before = c
                c, fl = ieee_out(res, add_exact, [s, c], None)
                if spec.want:  # c + the block: an IEEE addition, swamped as such
                    flags.add(FlagMasks() if fl is None else fl,
                              (s != 0) & np.isfinite(s) & np.isfinite(before) & (c == before))
            return c
        if maxima is not None:
            return maxima.chain(k0, k1, c)
        for a in range(k0, k1, acc.terms):
            c = step(np.arange(a, min(a + acc.terms, k1)), c)
        return c

    if spec.block is None:
        result = ieee.finish(chain(0, K, start), tile, flags)
    else:
        total = c_values
        for j, k0 in enumerate(range(0, K, spec.block)):
            total = ieee.promote(total, chain(k0, min(k0 + spec.block, K), np.zeros(n)), j, tile, flags)
        result = np.zeros(n) if total is None else total
    if maxima is not None and spec.want:
        flags.add(FlagMasks(), maxima.swamped_counts())
    return result


def _rand(spec, kind, step, tile):
    return None if spec.key is None else _draws.draws(spec.key, kind, step, tile.q0, tile.n, 0, spec.positions)
