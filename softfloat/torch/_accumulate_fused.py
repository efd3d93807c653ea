"""The tensor-core fused adder (softfloat.accumulate.hardware's model) in torch
operations on the operands' device, vectorised over the outputs and one block of k.

One fused step over the products k of a block and the accumulator c, as
``softfloat.accumulate._fused`` computes it (general path), here in float64 tensors:

    W_k = 2**e(a_k) * 2**e(b_k)    e(x) = max(floor(log2 |x|), emin), 0 for a zero factor
    2**M = max(max_k W_k, 2**e(c))  (e(c) clamped at the output format's emin)
    S   = sum_k trunc(p_k * 2**(F - M)) + trunc(c * 2**(F - M))
    r   = round_toward_zero(S * 2**(M - F)) to the output's kept fraction bits, clamped at
          its largest finite value (truncation never overflows to infinity)

Every operation is exact in float64 (the reference's argument): the products of two
formats whose precisions add up to at most 24 bits and whose exponents have at most 8
bits are float64 values; multiplying by the power of two 2**(F - M) (built from its bit
fields) keeps them exact and below 2**(F + 2); their truncations are integers and their
sum is below (N + 1) * 2**(F + 2) <= 2**53 (the FusedAccumulator's own condition), so
torch's reduction order does not matter.  An exact zero S is +0 unless c is -0 and every
product of the step is -0.

The rounding into the output reads the exponent e of the exact value from its bits:
q = max(e, emin_out) - mantissa_bits, r = trunc(v * 2**-q) * 2**q (exact: v * 2**-q is
below 2**(mantissa_bits + 1)), keeping the sign of a value truncated to zero as the
reference's rounding toward zero does.

Blocks chain in k order (each rounded result the next block's c); "via fp16" FP8
(h100-mma, b200, the fp16-output mode) runs each 32-term block as two half-steps (k mod 4
in {0, 1}, then {2, 3} from the first's result) and adds c by an IEEE binary32 addition
rounded to nearest even (a float32 add).  Only an fp32 adder output comes here.

Infinities and NaNs (operands or c) follow the reference's arithmetic: their 2**e is 0
(they take no part in M), their products and scaled terms are infinities or NaNs
(trunc(inf) = inf), so S and the step's result are the IEEE sum of the infinities (a NaN
for opposite ones or a NaN term), kept by the rounding (no clamp); the IEEE binary32
additions (c + block, promotions) are float32 ones.  The caller makes NaNs canonical.

Swamped counts (``count=True``, ``sf.matmul``'s ``return_flags="swamped"``), as
``softfloat.accumulate._fused`` counts them: per output, in each fused step (half-step),
every product that is non-zero and whose truncated term trunc(p_k * 2**(F - M)) is 0
(a per-term count, not one per block; c's truncation is not counted); and each IEEE
binary32 addition -- "via fp16"'s c + block, and the promotions T + R_j with ``block``
(not the first run, which is no addition) -- where the addend is non-zero and finite,
the running value finite, and the sum equal to it.

Memory: the output (float64) and one block's (N, ..., M, N_out) float64 products (and,
counting, the (..., M, N_out) int64 counts).
"""

from __future__ import annotations

import torch

from . import _accumulate_compiled
from ._accumulate_tables import exponent, pow2
from ._accumulate_ieee import count_down, swamped_additions

__all__ = ["fused_matmul"]


class _Step:
    """One fused step's constants: F, the output's emin, kept fraction bits and largest
    finite value; one object per set of them (:meth:`of`), so that a compiled step
    (softfloat.torch._accumulate_compiled.fused_step) holding it compiles once."""

    _MADE: dict = {}

    def __init__(self, key):
        self.key = key
        self.F, self.c_emin, self.emin, self.mb, self.max_finite = key

    @classmethod
    def of(cls, acc) -> "_Step":
        fmt = acc.rounding_format
        key = (acc.fraction_bits, acc.output.emin, fmt.emin, fmt.mantissa_bits, float(fmt.max_finite))
        return cls._MADE.setdefault(key, cls(key))

    def __call__(self, a, b, pa, pb, c, swamped=None):
        """The rounded result of one step: ``a``/``pa`` (T, ..., M, 1) and ``b``/``pb``
        (T, ..., 1, N) float64 factors and their 2**e, ``c`` (..., M, N) float64; the
        step's swamped products added into ``swamped`` (int64 (..., M, N)) if given.
        By a compiled kernel where softfloat.torch._accumulate_compiled's FUSED_MODE says."""
        count = swamped is not None
        got = _accumulate_compiled.fused_step(self, (a, b, pa, pb, c), count) if a.shape[0] else None
        result, dropped = self.block(a, b, pa, pb, c, count, eager=True) if got is None else got
        if dropped is not None:
            swamped += dropped
        return result

    def block(self, a, b, pa, pb, c, count: bool, eager: bool = False):
        """The step's arithmetic: (the rounded result, with ``count`` the int16 count of
        each output's non-zero products truncated to nothing, else None).  ``eager``
        skips the signed-zero pass where no sum is zero: a data-dependent branch, which
        a compiled kernel does not take (it always makes the pass)."""
        if a.shape[0]:
            P = a * b
            W = (pa * pb).amax(dim=0)
        else:
            P, W = None, torch.zeros_like(c)
        # an infinite or NaN c takes no part in M (its term stays one: trunc(inf) = inf)
        pc = torch.where((c != 0) & torch.isfinite(c), pow2(torch.clamp(exponent(c), min=self.c_emin)), 0.0)
        Mp = torch.maximum(W, pc)
        e_m = torch.where(Mp > 0, exponent(Mp), self.F)
        scale, unscale = pow2(self.F - e_m), pow2(e_m - self.F)
        S = torch.trunc(c * scale)
        dropped = None
        if P is not None:
            kept = torch.trunc(P * scale)
            S = S + kept.sum(dim=0)
            if count:  # non-zero products truncated to nothing
                dropped = count_down((kept == 0).logical_and_(P != 0))
        exact = S * unscale
        zero = S == 0
        if not eager or bool(zero.any()):
            neg = zero & (c == 0) & torch.signbit(c)
            if P is not None:
                neg &= ((P == 0) & torch.signbit(P)).all(dim=0)
            exact = torch.where(zero, torch.where(neg, -0.0, 0.0).to(exact.dtype), exact)
        return self.round(exact), dropped

    def round(self, v):
        """``v`` rounded toward zero to the output's fraction bits, clamped at its largest
        finite value."""
        q = torch.clamp(exponent(v), min=self.emin) - self.mb
        r = torch.trunc(v * pow2(-q)) * pow2(q)
        big = (r.abs() > self.max_finite) & torch.isfinite(v)  # an infinity or NaN stays one
        return torch.where(big, torch.copysign(torch.full_like(r, self.max_finite), r), r)


def _factors(a, pa, b, pb, ks):
    """The factors of the products ``ks`` (an index tensor or slice) laid out (T, ..., M, 1)
    and (T, ..., 1, N)."""
    def col(x):
        return x[..., :, ks].movedim(-1, 0).unsqueeze(-1)

    def row(x):
        return x[..., ks, :].movedim(-2, 0).unsqueeze(-2)
    return col(a), row(b), col(pa), row(pb)


def _chain(step, acc, ops, k0, k1, c, via: bool, swamped=None):
    """Blocks of the adder's terms over k0 .. k1-1 from accumulator values ``c``, their
    swamped products and additions added into ``swamped`` if given."""
    a, pa, b, pb = ops
    N = acc.terms
    for s0 in range(k0, k1, N):
        s1 = min(s0 + N, k1)
        if not via:
            c = step(*_factors(a, pa, b, pb, slice(s0, s1)), c, swamped)
            continue
        ks = torch.arange(s0, s1, device=a.device)
        first = (ks % 4) < 2
        half = step(*_factors(a, pa, b, pb, ks[first]), torch.zeros_like(c), swamped)
        half = step(*_factors(a, pa, b, pb, ks[~first]), half, swamped)
        # c + the block: one IEEE binary32 addition to nearest even (both fp32 values)
        new = (half.to(torch.float32) + c.to(torch.float32)).to(torch.float64)
        if swamped is not None:
            swamped += swamped_additions(c, half, new)
        c = new
    return c


def fused_matmul(acc, a_ops, b_ops, c=None, block=None, via: bool = False, count: bool = False):
    """The adder's fp32 results (..., M, N) float64 from ``a_ops`` = (a, pa) and
    ``b_ops`` = (b, pb): float64 values ``a`` (..., M, K), ``b`` (..., K, N) and
    their powers 2**e(x) ``pa``/``pb`` (0 for zeros, infinities and NaNs); ``c`` None or fp32 values broadcast to the
    output, ``block`` None or the promotion interval (run sums added into fp32 by float32
    additions); with ``count``, (results, swamped): the swamped products and additions
    per output, int64 (see the module docstring)."""
    (a, pa), (b, pb) = a_ops, b_ops
    step = _Step.of(acc)
    K = a.shape[-1]
    shape = torch.broadcast_shapes(a.shape[:-1] + (1,), b.shape[:-2] + (1, b.shape[-1]))
    ops = (a, pa, b, pb)
    zeros = torch.zeros(shape, dtype=torch.float64, device=a.device)
    swamped = torch.zeros(shape, dtype=torch.int64, device=a.device) if count else None
    if block is None:
        start = zeros if c is None else torch.broadcast_to(c, shape).to(torch.float64)
        result = _chain(step, acc, ops, 0, K, start, via, swamped)
        return (result, swamped) if count else result
    total = None if c is None else torch.broadcast_to(c, shape).to(torch.float32)
    for k0 in range(0, K, block):
        run = _chain(step, acc, ops, k0, min(k0 + block, K), zeros, via, swamped).to(torch.float32)
        if total is None:
            total = run
            continue
        new = total + run
        if swamped is not None:
            swamped += swamped_additions(total, run, new)
        total = new
    result = zeros if total is None else total.to(torch.float64)
    return (result, swamped) if count else result
