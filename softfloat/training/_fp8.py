"""FP8 matrix products of the lab: scaled quantisation of the operands and the scaled GEMM.

The four recipes of :class:`~softfloat.training.Policy` (``fp8=``):

delayed (Transformer Engine, HYBRID)
    Per tensor, scale s = fp8_max / amax_h / 2**margin with amax_h the maximum of the last
    1024 amaxes *before* this step (the old scale kept while it is 0 or not finite; the
    first scale is 1), margin 0.  q = saturate(round(fp32(x * s))).  The product is
    fp32(acc * fp32(fp32(1/s_a) * fp32(1/s_b))), acc the accumulator's result of q_a @ q_b.
current (torchao "tensorwise")
    The same with s = fp8_max / max(amax, 1e-12) from the tensor itself.
blocks (DeepSeek-V3)
    Operand a (M x K) in 1x128 tiles along K, operand b in 128x128 blocks (weights) or
    128x1 tiles (gradients), each with s = amax / fp8_max (q = saturate(round(x / s))).
    For each run of 128 products: the accumulator model's fp32 partial sum P of the q
    values, promoted as T = fp32(T + fp32(P * fp32(s_a * s_b))).
mx (OCP MX v1.0)
    Blocks of 32 along K, an E8M0 scale X = 2**(floor(log2 amax) - emax_elem) (``"ceil"``:
    Transformer Engine's 2**ceil(log2(amax / fp8_max)), never clamping), elements
    q = saturate(round_nearest_even(x / X)).  The values q * X are exact, and their
    products are accumulated exactly as the other recipes' (fp32, in k order).

Every rounding into FP8 saturates (as Transformer Engine's and torchao's casts do) and is
one correct rounding of :func:`softfloat.quantize`.  The per-tensor and per-block
quantisers here are the lab's own minimal ones: when ``softfloat.scaled_encode`` (the
library's scaled quantisation) is available they are meant to be replaced by it -- see
:func:`quantize_scaled`, the one place that would change.  What would change with it
(from its branch's documentation): "tensor" is the same computation (fp32(x * s), then a
saturating rounding); "blocks" there multiplies by fp32(max / amax) where this file divides
by amax / max in float64 and rounds once (DeepSeek-V3's kernels divide in fp32); its MX
"ceil" scale is fp32(amax * fp32(1 / max)) rounded up to a power of two, where this file
takes ceil(log2(amax / max)) in float64 -- equal except for amaxes within an fp32 rounding
of a power of two times max; and an amax of 0 gives scale 1 there as here.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from ..formats import Format, bf16, fp16, fp32
from ._numerics import Counts, matmul, round_to

__all__ = ["Recipe", "quantize_scaled"]

_AMAX_HISTORY = 1024
_MARGIN = 0
_EPS = 1e-12  # torchao's floor on amax


def _sat(x, fmt: Format) -> np.ndarray:
    """Round to nearest even into ``fmt``, saturating at +-max_finite."""
    return round_to(x, fmt, saturate=True)


def quantize_scaled(x, fmt: Format, scaling: str, *, block=None, scale=None, mx_rounding="floor"):
    """x -> (q, s): FP8 values q and scales s such that x ~ q / s ("tensor": s a float32
    multiplier given as ``scale``; "blocks": s = amax / fp8_max per tile of ``block``
    (rows, cols), q = x / s) or x ~ q * X ("mx": X power-of-two scales per ``block``).

    The adapter's one seam: the library's ``scaled_encode`` returns bit patterns and
    scales for the same three layouts.
    """
    x = np.asarray(x, np.float32)
    if scaling == "tensor":
        s = np.float32(scale)
        with np.errstate(over="ignore", invalid="ignore"):
            exact = (x * s).astype(np.float32)  # fp32(x * s)
        return _sat(exact, fmt), s, exact
    rows, cols = block
    M, K = x.shape
    pm, pk = -(-M // rows) * rows, -(-K // cols) * cols
    padded = np.zeros((pm, pk), np.float32)
    padded[:M, :K] = x
    tiles = padded.reshape(pm // rows, rows, pk // cols, cols)
    amax = np.abs(tiles).max(axis=(1, 3)).astype(np.float64)
    if scaling == "blocks":
        s = (amax / fmt.max_finite).astype(np.float32)
        s_safe = np.where(s > 0, s, np.float32(1))
        full = np.repeat(np.repeat(s_safe, rows, 0), cols, 1)[:M, :K]
        exact = x.astype(np.float64) / full
        return _sat(exact, fmt), s_safe, exact
    if scaling == "mx":
        with np.errstate(divide="ignore"):
            if mx_rounding == "floor":
                e = np.floor(np.log2(amax)) - fmt.emax
            else:
                e = np.ceil(np.log2(amax / fmt.max_finite))
        e = np.where(amax > 0, e, 0.0)
        X = np.exp2(e)
        full = np.repeat(np.repeat(X, rows, 0), cols, 1)[:M, :K]
        exact = x.astype(np.float64) / full
        return _sat(exact, fmt), X, exact
    raise ValueError(f"scaling must be 'tensor', 'blocks' or 'mx'; got {scaling!r}")


class _Delayed:
    """Transformer Engine's per-tensor delayed scaling state (amax history, scale)."""

    def __init__(self):
        self.history = deque(maxlen=_AMAX_HISTORY)
        self.scale = np.float32(1.0)

    def scale_for(self, fmt: Format) -> np.float32:
        amax = max(self.history) if self.history else 0.0
        if amax > 0 and np.isfinite(amax):
            self.scale = np.float32(np.float32(fmt.max_finite) / np.float32(amax) / np.float32(2.0**_MARGIN))
        return self.scale


class Recipe:
    """The FP8 GEMMs of one policy (``policy.fp8``), with their scaling state."""

    def __init__(self, policy):
        self.policy = policy
        self.kind = policy.fp8
        self.fwd, self.bwd = policy.fp8_forward, policy.fp8_backward
        self.states: dict[tuple, _Delayed] = {}
        self.pending: dict[tuple, float] = {}
        self.counts = None  # the engine's per-tensor counts, set per step

    def new_step(self) -> None:
        """Delayed scaling: push the last step's amaxes into the histories."""
        for key, amax in self.pending.items():
            self.states.setdefault(key, _Delayed()).history.append(amax)
        self.pending = {}

    # ---- per-tensor recipes ------------------------------------------------------------------
    def _tensor_scale(self, x, key, fmt) -> np.float32:
        amax = float(np.max(np.abs(x))) if np.size(x) else 0.0
        if self.kind == "current":
            return np.float32(np.float32(fmt.max_finite) / np.float32(max(amax, _EPS)))
        # the step's amax (the largest over its quantisations) joins the history after it
        self.pending[key] = amax if key not in self.pending else max(self.pending[key], amax)
        return self.states.setdefault(key, _Delayed()).scale_for(fmt)

    def _count(self, tensor, exact, q, fmt):
        if self.counts is not None and tensor is not None:
            self.counts[tensor] += Counts.of(exact, q, fmt, saturate=True)

    def gemm(self, a, b, kind: str, key: str, accumulator, block) -> np.ndarray:
        """a @ b in FP8 by the recipe, as fp32 values."""
        fa, fb, ta, tb, role_a, role_b = self._roles(kind)
        if self.kind in ("delayed", "current"):
            sa = self._tensor_scale(a, (key, role_a), fa)
            sb = self._tensor_scale(b, (key, role_b), fb)
            qa, _, ea = quantize_scaled(a, fa, "tensor", scale=sa)
            qb, _, eb = quantize_scaled(b, fb, "tensor", scale=sb)
            self._count(ta, ea, qa, fa)
            self._count(tb, eb, qb, fb)
            acc = matmul(qa, qb, fp16, accumulator, block=block, out_format=fp32)  # FP8 values are fp16 values
            alpha = np.float32(np.float32(1.0 / np.float64(sa)) * np.float32(1.0 / np.float64(sb)))
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
        qa, sa, ea = quantize_scaled(a, fa, "blocks", block=(1, 128))
        b_block = (128, 128) if role_b == "weight" else (128, 1)
        qb, sb, eb = quantize_scaled(b, fb, "blocks", block=b_block)
        self._count(ta, ea, qa, fa)
        self._count(tb, eb, qb, fb)
        sb_cols = np.repeat(sb, b_block[1], axis=1)[:, :b.shape[1]]
        total = None
        for j, k0 in enumerate(range(0, K, 128)):
            part = matmul(qa[:, k0:k0 + 128], qb[k0:k0 + 128], fa if fa == fb else fp16, accumulator,
                          out_format=fp32)
            scale = (sa[:, j:j + 1] * sb_cols[j:j + 1, :]).astype(np.float32)
            with np.errstate(over="ignore", invalid="ignore"):
                term = (part * scale).astype(np.float32)
                total = term if total is None else (total + term).astype(np.float32)
        return total

    def _mx(self, a, b, fa, fb, ta, tb, accumulator):
        rounding = self.policy.mx_scale_rounding
        qa, Xa, ea = quantize_scaled(a, fa, "mx", block=(1, 32), mx_rounding=rounding)
        qbt, Xb, ebt = quantize_scaled(np.ascontiguousarray(b.T), fb, "mx", block=(1, 32), mx_rounding=rounding)
        self._count(ta, ea, qa, fa)
        self._count(tb, ebt, qbt, fb)
        va = qa * np.repeat(Xa, 32, axis=1)[:, :a.shape[1]]
        vb = (qbt * np.repeat(Xb, 32, axis=1)[:, :b.shape[0]]).T
        # q * X has at most 4 significant bits and a power-of-two scale: a bf16 value
        # unless the scale leaves bf16's range, then carried as fp32 (exact either way)
        fmt = bf16 if (np.array_equal(round_to(va.astype(np.float32), bf16), va)
                       and np.array_equal(round_to(vb.astype(np.float32), bf16), vb)) else fp32
        return matmul(va.astype(np.float32), np.ascontiguousarray(vb, np.float32), fmt, accumulator, out_format=fp32,
                      product="fp32" if fmt == fp32 else None)

