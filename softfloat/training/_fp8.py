"""FP8 matrix products of the lab: the operands quantised by :func:`softfloat.scaled_encode`
(the library's scaled quantisation), then the scaled GEMM.

The four recipes of :class:`~softfloat.training.Policy` (``fp8=``), each one call of
:mod:`softfloat.scaled` (whose documentation cites each rule's source):

delayed (Transformer Engine, HYBRID)
    Per tensor, with :class:`softfloat.DelayedScaling` per layer and operand role (amax
    history 1024, "max" over the window, margin 0): the scale s is computed from the
    amaxes recorded *before* this step (the previous scale kept while that amax is 0,
    infinite or NaN; the first scale is 1); this step's amax (the largest over its
    quantisations of the operand) is recorded when the next step starts.  q =
    ``scaled_encode(x, fmt, scale=s)``: saturate(round(fp32(x * s))).  The product is
    fp32(acc * fp32(fp32(1/s_a) * fp32(1/s_b))), acc the accumulator's result of q_a @ q_b.
current (torchao "tensorwise")
    The same with the scale from the tensor itself: ``scaled_encode(x, fmt,
    amax_epsilon=1e-12)``, s = fp32(fp8_max / fp32(max(amax, 1e-12))).
blocks (DeepSeek-V3)
    ``scaling="blocks"``: operand a (M x K) in 1x128 tiles along K, operand b in 128x128
    blocks (weights) or 128x1 tiles (gradients), each with the scale s = fp32(fp8_max /
    amax) (1 for an all-zero tile), q = saturate(round(fp32(x * s))).  For each run of 128
    products: the accumulator model's fp32 partial sum P of the q values, promoted as
    T = fp32(T + fp32(P * fp32(d_a * d_b))), d = fp32(1/s) each operand's
    ``scale_inv``.  DeepSeek-V3's kernels store d' = fp32(amax / 448) and divide
    q = round(fp32(x / d')); the library's rule is used here (see below).
mx (OCP MX v1.0)
    ``scaling="mx"``: blocks of 32 along K with an E8M0 scale X = 2**(floor(log2 amax) -
    emax_elem) (``mx_scale_rounding="ceil"``: Transformer Engine's MXFP8 rule, X =
    fp32(amax * fp32(1 / fp8_max)) rounded up to a power of two), elements
    q = saturate(round_nearest_even(fp32(x) / X)).  The values q * X
    (:func:`softfloat.scaled_decode`) are exact, and their products are accumulated as
    the other recipes' (fp32, in k order).

Every rounding into FP8 saturates (as Transformer Engine's and torchao's casts do) and is
one correct rounding of :func:`softfloat.encode`.  The telemetry counts underflow and
overflow from the IEEE flags of those roundings (``return_flags=True``).

Divide or multiply (DeepSeek-V3): the two rules give the same FP8 elements except where
fp32(x / d') and fp32(x * s) fall on different sides of an FP8 rounding boundary (they
differ by at most an fp32 rounding); the dequantisation factors d' and fp32(1/s) differ by
an fp32 ulp or so.  On 4096 tiles of 128 normal values spread over 2**+-10 (seed 0), no
element differed and 32% of the dequantised values differed, by a relative 7e-8 (median),
so the lab does not carry a second rule.
"""

from __future__ import annotations

import numpy as np

from ..codec import decode
from ..formats import Format, bf16, fp16, fp32
from ..scaled import DelayedScaling, scaled_decode, scaled_encode
from ._numerics import Counts, matmul, round_to

__all__ = ["Recipe"]

_EPS = 1e-12  # torchao's floor on amax


class Recipe:
    """The FP8 GEMMs of one policy (``policy.fp8``), with their scaling state."""

    def __init__(self, policy):
        self.policy = policy
        self.kind = policy.fp8
        self.fwd, self.bwd = policy.fp8_forward, policy.fp8_backward
        self.states: dict[tuple, DelayedScaling] = {}
        self.pending: dict[tuple, float] = {}
        self.counts = None  # the engine's per-tensor counts, set per step

    def new_step(self) -> None:
        """Delayed scaling: record the last step's amaxes (each gives the next scale)."""
        for key, amax in self.pending.items():
            self.states[key].update(amax)
        self.pending = {}

    # ---- quantisation ------------------------------------------------------------------------
    def _encode(self, x, fmt: Format, tensor, **options):
        """scaled_encode with the recipe's options; counted under ``tensor``."""
        counted = self.counts is not None and tensor is not None
        result = scaled_encode(x, fmt, return_flags=counted, **options)
        st, flags = result if counted else (result, None)
        if counted:
            self.counts[tensor] += Counts.from_flags(flags, decode(st.bits, fmt))
        return st

    def _per_tensor(self, x, fmt: Format, key, tensor):
        if self.kind == "current":
            return self._encode(x, fmt, tensor, amax_epsilon=_EPS)
        state = self.states.setdefault(key, DelayedScaling(fmt))
        st = self._encode(x, fmt, tensor, scale=state.scale)
        # the step's amax (the largest over its quantisations) joins the history after it
        amax = float(st.amax)
        self.pending[key] = amax if key not in self.pending else max(self.pending[key], amax)
        return st

    # ---- products ------------------------------------------------------------------------------
    def gemm(self, a, b, kind: str, key: str, accumulator, block) -> np.ndarray:
        """a @ b in FP8 by the recipe, as fp32 values."""
        fa, fb, ta, tb, role_a, role_b = self._roles(kind)
        if self.kind in ("delayed", "current"):
            sta = self._per_tensor(a, fa, (key, role_a), ta)
            stb = self._per_tensor(b, fb, (key, role_b), tb)
            qa = decode(sta.bits, fa, np.float32)
            qb = decode(stb.bits, fb, np.float32)
            acc = matmul(qa, qb, fp16, accumulator, block=block, out_format=fp32)  # FP8 values are fp16 values
            alpha = np.float32(np.float32(sta.scale_inv) * np.float32(stb.scale_inv))
            with np.errstate(over="ignore", invalid="ignore"):
                return (acc * alpha).astype(np.float32)
        if self.kind == "blocks":
            return self._blocks(a, b, fa, fb, ta, tb, role_b, accumulator)
        return self._mx(a, b, fa, fb, ta, tb, accumulator)

    def _roles(self, kind):
        """(format a, format b, telemetry tensor a, b, scaling role a, b) per product."""
        if kind == "fprop":
            return self.fwd, self.fwd, "activations", "weights", "input", "weight"
        if kind == "dgrad":
            return self.bwd, self.fwd, "activation_grads", None, "grad", "weight"
        return self.fwd, self.bwd, None, None, "input", "grad"  # wgrad

    def _blocks(self, a, b, fa, fb, ta, tb, role_b, accumulator):
        K = a.shape[1]
        b_block = (128, 128) if role_b == "weight" else (128, 1)
        sta = self._encode(a, fa, ta, scaling="blocks", block=(1, 128))
        stb = self._encode(b, fb, tb, scaling="blocks", block=b_block)
        qa, qb = decode(sta.bits, fa, np.float32), decode(stb.bits, fb, np.float32)
        da = sta.scale_inv  # (M, K/128), fp32 values
        db_cols = np.repeat(stb.scale_inv, b_block[1], axis=1)[:, :b.shape[1]]  # (K/128, N)
        total = None
        for j, k0 in enumerate(range(0, K, 128)):
            part = matmul(qa[:, k0:k0 + 128], qb[k0:k0 + 128], fa if fa == fb else fp16, accumulator,
                          out_format=fp32)
            scale = (da[:, j:j + 1] * db_cols[j:j + 1, :]).astype(np.float32)  # exact in float64, one rounding
            with np.errstate(over="ignore", invalid="ignore"):
                term = (part * scale).astype(np.float32)
                total = term if total is None else (total + term).astype(np.float32)
        return total

    def _mx(self, a, b, fa, fb, ta, tb, accumulator):
        rounding = self.policy.mx_scale_rounding
        sta = self._encode(a, fa, ta, scaling="mx", block=32, scale_rounding=rounding)
        stb = self._encode(np.ascontiguousarray(b.T), fb, tb, scaling="mx", block=32, scale_rounding=rounding)
        va = scaled_decode(sta)      # q * X, exact
        vb = scaled_decode(stb).T
        # q * X has at most 4 significant bits and a power-of-two scale: a bf16 value
        # unless the scale leaves bf16's range, then carried as fp32 (exact either way)
        fmt = bf16 if (np.array_equal(round_to(va.astype(np.float32), bf16), va)
                       and np.array_equal(round_to(vb.astype(np.float32), bf16), vb)) else fp32
        return matmul(va.astype(np.float32), np.ascontiguousarray(vb, np.float32), fmt, accumulator, out_format=fp32,
                      product="fp32" if fmt == fp32 else None)
