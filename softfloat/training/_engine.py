"""One policy's numerics for a training step: the roundings into each tensor's format, the
matrix products (with FP8 scaling where the policy says), and the per-tensor counts of
what those roundings did."""

from __future__ import annotations

import numpy as np

from ..formats import Format, as_format, fp32
from ..recipes import GemmEngine
from . import _fp8
from ._numerics import Counts, reduce_sum, round_to
from .policy import Policy

__all__ = ["Engine", "TENSORS"]

#: the tensors whose roundings telemetry counts
TENSORS = ("weights", "activations", "activation_grads", "weight_grads", "updates")


class Engine:
    """Roundings, products and counts of one :class:`Policy` (one per training run)."""

    def __init__(self, policy: Policy, *, rng: np.random.Generator, telemetry: bool = True):
        self.policy = policy
        self.rng = rng
        self.telemetry = telemetry
        self.counts = {name: Counts() for name in TENSORS}
        self.fp8 = _fp8.Recipe(policy) if policy.fp8 else None
        self.gemms = self.fp8.engine if self.fp8 is not None else GemmEngine(policy)
        self.scale = 1.0
        self.gradient_values = {"activation_grads": [], "weight_grads": []}

    def new_step(self, scale: float) -> None:
        """Start counting a new step whose loss is multiplied by ``scale``."""
        self.counts = {name: Counts() for name in TENSORS}
        self.gradient_values = {"activation_grads": [], "weight_grads": []}
        self.scale = scale
        if self.fp8 is not None:
            self.fp8.new_step()
            self.fp8.counts = self.counts if self.telemetry else None

    # ---- roundings ----------------------------------------------------------------------
    def round(self, exact, fmt: Format, tensor: str | None = None, *, via: Format | None = None) -> np.ndarray:
        """``exact`` rounded to nearest even into ``fmt`` (first into ``via`` if given);
        counted under ``tensor``.  The exact values of gradients (divided by the loss
        scale) are kept for the exponent histogram."""
        out = round_to(exact if via is None else round_to(exact, via), fmt)
        if tensor is not None and self.telemetry:
            self.counts[tensor] += Counts.of(exact, out, fmt)
            if tensor in self.gradient_values:
                self.gradient_values[tensor].append(exact)
        return out

    # ---- products -----------------------------------------------------------------------
    def gemm(self, a, b, kind: str, key: str, out: Format, tensor: str, bias=None,
             formats: tuple[Format, Format] | None = None) -> np.ndarray:
        """``a @ b`` (+ ``bias``) by :class:`softfloat.recipes.GemmEngine`, rounded into
        ``out`` and counted under ``tensor``.

        ``kind`` is "fprop" (activations x weights), "dgrad" (gradients x weights^T) or
        "wgrad" (activations^T x gradients); ``key`` names the layer (FP8 scaling state);
        ``formats`` are the formats ``a`` and ``b`` already hold.  Unscaled policies: the
        bias joins as the accumulator's initial value, cast like the operands (autocast
        casts an fp32 bias to fp16 with the weights); the forward weights' cast into the
        matmul input format is counted as "weights".  Scaled ones: the bias is added in
        fp32 after the scaling; the FP8 roundings are counted (see ``_fp8``).
        """
        p = self.policy
        if self.fp8 is not None:
            acc = self.fp8.gemm(a, b, kind, key, p.accumulator, p.accumulate_block, bias=bias)
        else:
            fmt = p.matmul_inputs
            fa, fb = formats if formats is not None else (None, None)
            if kind == "fprop" and fb != fmt:
                b, fb = self.round(b, fmt, "weights"), fmt
            acc = self.gemms.gemm(a, b, kind, key, bias=bias, formats=(fa, fb))
        return self.round(acc, out, tensor)

    def column_sum(self, x, fmt: Format) -> np.ndarray:
        """The sum over the batch (axis 0) with the policy's accumulator, in fp32."""
        acc = self.policy.accumulator
        if not isinstance(acc, Format):
            try:
                acc = as_format(acc)
            except (TypeError, ValueError):  # a hardware model: reductions run outside the matrix unit
                acc = fp32
        return reduce_sum(x, fmt, acc, axis=0, out_format=fp32)

